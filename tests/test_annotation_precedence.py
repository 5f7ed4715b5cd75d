"""``kvlint.io/accelerator`` and ``kvlint.io/model`` against the pod's own facts (fixtures/config/annotations/).

With exemptions allowed the annotations are the user's declarations and decide; one naming a GPU the pod's
nodeSelector excludes is reported (KV005) instead of silently preferred. With exemptions disabled
(``--no-exemptions``, the webhook's admin switch) the pod's scheduling constraints and engine command decide and
an annotation that would have changed what is sized is reported as not applied: ``kvlint.io/accelerator: h200``
on a pod pinned to L4 silenced the L4's KV103 even there, an ignore the admin could not turn off. The expected
verdicts are those of kvlint's own model on each GPU (compared between the runs), not figures written here.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ANN = Path(__file__).resolve().parents[1] / "fixtures" / "config" / "annotations"
ALLOWED = Options(allow_hub=False)
CLOSED = Options(allow_hub=False, exemptions_allowed=False)


def _findings(name: str, options: Options) -> dict[str, list[str]]:
    res = run_check([str(ANN / name)], options)
    out: dict[str, list[str]] = {}
    for d in res.diagnostics:
        out.setdefault(d.rule, []).append(f"{d.severity} {d.message}")
    return out


def test_an_accelerator_annotation_the_node_selector_excludes_is_reported_and_applied() -> None:
    found = _findings("accelerator-vs-nodeselector.yaml", ALLOWED)
    (kv005,) = found["KV005"]
    assert kv005.startswith("warning kvlint.io/accelerator: h200 (NVIDIA H200) contradicts the pod's own")
    assert "nodeSelector cloud.google.com/gke-accelerator=nvidia-l4" in kv005 and "NVIDIA L4" in kv005
    assert "KV103" not in found  # sized on the annotation's H200, as the user declared


def test_under_no_exemptions_the_node_selector_decides_and_the_annotation_is_reported() -> None:
    found = _findings("accelerator-vs-nodeselector.yaml", CLOSED)
    (kv005,) = found["KV005"]
    assert kv005.startswith("warning kvlint.io/accelerator: h200 (NVIDIA H200) is not applied")
    # the same pod without the annotation: the verdict the L4 gets, which the annotation no longer hides
    assert found["KV103"] and all("NVIDIA L4" in m for m in found["KV103"])
    res = run_check([str(ANN / "accelerator-vs-nodeselector.yaml")], CLOSED)
    assert {
        cr.placement.accelerator.id for cr in res.containers if cr.placement and cr.placement.accelerator
    } == {"nvidia-l4"}


def test_an_accelerator_annotation_among_the_allowed_gpus_narrows_only_with_exemptions() -> None:
    allowed = _findings("accelerator-within-affinity.yaml", ALLOWED)
    assert "KV005" not in allowed and "KV103" not in allowed  # the user's choice among L4 and H100
    closed = _findings("accelerator-within-affinity.yaml", CLOSED)
    (kv005,) = closed["KV005"]
    assert "is not applied" in kv005 and "allows several GPUs" in kv005
    assert closed["KV103"]  # the smallest GPU the affinity allows decides, as without the annotation


def test_a_model_annotation_replacing_a_readable_model_is_said_with_exemptions() -> None:
    """With exemptions allowed the annotation decides, but no longer silently: the pod's command names a model
    kvlint reads (Llama 3.1 8B), which the annotation replaced by another; an info at the annotation says so, as
    KV005 says of an accelerator annotation the pod's scheduling contradicts."""
    allowed = _findings("model-vs-command.yaml", ALLOWED)
    (kv005,) = allowed["KV005"]
    assert kv005.startswith(
        "info kvlint.io/model: Qwen/Qwen2.5-0.5B-Instruct replaces the model the pod serves, "
        "meta-llama/Llama-3.1-8B-Instruct, which kvlint can read"
    )
    res = run_check([str(ANN / "model-vs-command.yaml")], ALLOWED)
    assert {cr.model.id for cr in res.containers if cr.model} == {"Qwen/Qwen2.5-0.5B-Instruct"}


def test_a_model_annotation_kvlint_cannot_read_replacing_a_readable_model_is_a_warning(
    tmp_path: Path,
) -> None:
    """The same pod annotated with a model kvlint cannot read (a typo, or ``nobody/nothing``): nothing is sized, so
    the annotation took the KV103 of the model the engine loads away with no word of its own (KV005 was said only
    when the annotated model was read; the KV502 named the command's model). It is now a KV005 warning naming both;
    with exemptions disabled the command's model decides and the KV103 stays."""
    text = (
        (ANN / "model-vs-command.yaml")
        .read_text()
        .replace("Qwen/Qwen2.5-0.5B-Instruct", "nobody/no-such-model")
    )
    path = tmp_path / "model-typo.yaml"
    path.write_text(text)
    allowed = {d.rule: d for d in run_check([str(path)], ALLOWED).diagnostics}
    closed = {d.rule for d in run_check([str(path)], CLOSED).diagnostics}
    assert "KV103" in closed and "KV103" not in allowed  # the annotation decides, with exemptions allowed
    kv005 = allowed["KV005"]
    assert kv005.severity == "warning", kv005
    assert kv005.message.startswith(
        "kvlint.io/model: nobody/no-such-model replaces the model the pod serves, meta-llama/Llama-3.1-8B-Instruct, "
        "which kvlint can read, but kvlint cannot read nobody/no-such-model"
    )
    assert "KV502" in allowed
    # an annotation for a path kvlint cannot read on either side still applies silently (what it is for)
    res = run_check([str(ANN / "model-on-a-volume.yaml")], ALLOWED)
    assert "KV005" not in {d.rule for d in res.diagnostics}


def test_under_no_exemptions_the_engine_command_names_the_model() -> None:
    closed = _findings("model-vs-command.yaml", CLOSED)
    (kv005,) = closed["KV005"]
    assert kv005.startswith("warning kvlint.io/model: Qwen/Qwen2.5-0.5B-Instruct is not applied")
    assert "meta-llama/Llama-3.1-8B-Instruct" in kv005
    res = run_check([str(ANN / "model-vs-command.yaml")], CLOSED)
    assert {cr.model.id for cr in res.containers if cr.model} == {"meta-llama/Llama-3.1-8B-Instruct"}
    assert closed["KV103"]


def test_a_model_annotation_for_a_path_kvlint_cannot_read_applies_either_way() -> None:
    for options in (ALLOWED, CLOSED):
        res = run_check([str(ANN / "model-on-a-volume.yaml")], options)
        assert {cr.model.id for cr in res.containers if cr.model} == {"meta-llama/Llama-3.1-8B-Instruct"}
        assert "KV005" not in {d.rule for d in res.diagnostics}


def test_a_model_annotation_naming_the_served_model_in_another_spelling_is_not_a_replacement(
    tmp_path: Path,
) -> None:
    """``kvlint.io/model`` naming the model the engine's command serves, spelt as KServe and the Hub spell it
    (``hf://org/name``, the model page's URL, a trailing slash), is the same model: kvlint reads both to the same
    config. KV005 said the annotation "replaces the model the pod serves" (info, exemptions allowed) and, under
    ``--no-exemptions``, warned that it "is not applied": it compared the two references as text. Each is now
    judged by the model kvlint reads from it; the verdict (the command's model on the L4) stands either way, and an
    annotation naming another model is still reported (the tests above)."""
    for spelling in (
        "hf://meta-llama/Llama-3.1-8B-Instruct",
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.1-8B-Instruct/",
    ):
        text = (
            (ANN / "model-vs-command.yaml").read_text().replace("Qwen/Qwen2.5-0.5B-Instruct", f'"{spelling}"')
        )
        path = tmp_path / "same-model.yaml"
        path.write_text(text)
        for options in (ALLOWED, CLOSED):
            res = run_check([str(path)], options)
            rules = {d.rule for d in res.diagnostics}
            assert "KV005" not in rules, (spelling, options.exemptions_allowed, res.diagnostics)
            assert "KV103" in rules, (spelling, options.exemptions_allowed)
            assert {cr.model.id for cr in res.containers if cr.model} == {"meta-llama/Llama-3.1-8B-Instruct"}
