"""A serving-runtime template that names its own model (an OME runtime's ``--served-model-name`` with the GPUs it
declares, or the user's ``kvlint.io/model`` on a KServe runtime) is sized on that model; when kvlint has no
config.json for it, "not sized" says so (KV502 "no config.json for model X", with the `kvlint models pull X` fix,
and "model unknown" in the sizing line) instead of "the model is supplied by the InferenceService that uses it",
which is not what stopped kvlint and gave the user nothing to do.

Found on OME's SGLang runtimes for BAAI/bge-reranker-v2-m3 and Qwen/Qwen3-Embedding-4B (sgl-project/ome
config/runtimes/srt/..., fixtures/collected, sources in its INDEX.csv): KV505 said kvlint sized the runtime on the
model it names while the summary said "not sized: runtime template". The KServe case takes a real ServingRuntime
of the set (rh-aiservices-bu/llm-on-openshift) and adds the one annotation named in the test.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.load import load_text
from kvlint.models.catalogue import lookup
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.sizing import sizing_of

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
RERANKER = COLLECTED / "sgl-project__ome__config__runtimes__srt__BAAI__bge-reranker-v2-m3-rt.yaml"
KIMI = COLLECTED / "sgl-project__ome__config__runtimes__srt__moonshotai__kimi-k2-instruct-rt.yaml"
KSERVE = COLLECTED / "rh-aiservices-bu__llm-on-openshift__serving-runtimes__vllm_runtime__vllm-runtime.yaml"
OPTS = Options(allow_hub=False)
#: a hub id no catalogue holds (made up for this test)
ABSENT = "example-org/not-catalogued-8B"


def _one(result):  # noqa: ANN202 - ContainerResult
    (cr,) = result.containers
    return cr


def _kv502(result) -> list:
    return [d for d in result.diagnostics if d.rule == "KV502"]


def test_ome_runtime_naming_an_uncatalogued_model_says_its_config_is_missing() -> None:
    assert lookup("BAAI/bge-reranker-v2-m3") is None  # the premise: not catalogued
    r = run_check([str(RERANKER)], OPTS)
    cr = _one(r)
    assert cr.model is None and sizing_of(cr) == "model unknown"
    (d,) = _kv502(r)
    assert "no config.json for model 'BAAI/bge-reranker-v2-m3'" in d.message, d.message
    assert "kvlint models pull BAAI/bge-reranker-v2-m3" in d.fix, d.fix
    assert "supplied by" not in d.message and d.severity == "warning"
    (note,) = [d for d in r.diagnostics if d.rule == "KV505"]
    assert note.message.startswith("kvlint sizes this ClusterServingRuntime on the model it names"), (
        note.message
    )


def test_ome_runtime_naming_a_catalogued_model_is_still_sized() -> None:
    cr = _one(run_check([str(KIMI)], OPTS))
    assert cr.model is not None and cr.model.id == "moonshotai/Kimi-K2-Instruct"
    assert sizing_of(cr) in ("plan", "fleet")


#: the runtime's container given one GPU, as the test that needs it says (the real runtime requests none: the
#: InferenceService that uses it sets the resources)
_PORTS = "      ports:\n"
_ONE_GPU = "      resources:\n        limits:\n          nvidia.com/gpu: 1\n" + _PORTS


def _with_gpu(text: str) -> str:
    assert text.count(_PORTS) == 1
    return text.replace(_PORTS, _ONE_GPU)


def test_kserve_runtime_annotated_with_an_uncatalogued_model() -> None:
    text = _with_gpu(KSERVE.read_text())
    anchor = "    openshift.io/display-name: vLLM\n"
    assert text.count(anchor) == 1
    plain = _one(run_documents(load_text(text, "runtime.yaml"), OPTS))
    assert sizing_of(plain) == "runtime template"  # no model of its own: the InferenceService's
    annotated = text.replace(anchor, anchor + f"    kvlint.io/model: {ABSENT}\n")
    r = run_documents(load_text(annotated, "runtime.yaml"), OPTS)
    assert sizing_of(_one(r)) == "model unknown"
    (d,) = [d for d in _kv502(r) if d.severity == "warning"]
    assert f"no config.json for model '{ABSENT}'" in d.message, d.message
    assert f"kvlint models pull {ABSENT}" in d.fix, d.fix
    # the annotation already names the model: the fix does not ask for it again
    assert (
        "annotate the workload" not in d.fix and "correct the workload's kvlint.io/model annotation" in d.fix
    )
    assert not any("supplied by" in d.message for d in _kv502(r))
    # the runtime's note names the model it sizes it on, not the service's
    (note,) = [d for d in _kv502(r) if d.severity == "info"]
    assert f"names its own model, '{ABSENT}' (its kvlint.io/model annotation)" in note.message, note.message
    assert "the model comes from" not in note.message


def test_kserve_runtime_naming_an_uncatalogued_hub_id_in_its_command() -> None:
    """A runtime whose engine command names a hub id literally (``--model org/name``, the one change to the real
    runtime's ``--model /mnt/models/``) runs that model: KServe replaces the runtime's ``args`` only when the
    predictor sets its own. kvlint sizes such a runtime on a catalogued id; on one it has no config for, the
    reason is that config ("model unknown", the pull fix), not "runtime template" with no word of the model."""
    text = _with_gpu(KSERVE.read_text())
    anchor = "        - /mnt/models/\n"
    assert text.count(anchor) == 1 and lookup(ABSENT) is None
    r = run_documents(load_text(text.replace(anchor, f"        - {ABSENT}\n"), "runtime.yaml"), OPTS)
    assert sizing_of(_one(r)) == "model unknown"
    (d,) = [d for d in _kv502(r) if d.severity == "warning"]
    assert f"no config.json for model '{ABSENT}'" in d.message, d.message
    assert f"kvlint models pull {ABSENT}" in d.fix, d.fix
    assert "annotate the workload with kvlint.io/model" in d.fix  # nothing annotated: still a remedy
    (note,) = [d for d in _kv502(r) if d.severity == "info"]
    assert f"names its own model, '{ABSENT}' (its engine command)" in note.message, note.message


CATALOGUED = "meta-llama/Llama-3.1-8B-Instruct"


def _runtime_reasons(text: str) -> tuple[str, list]:
    r = run_documents(load_text(text, "runtime.yaml"), OPTS)
    return sizing_of(_one(r)), r.diagnostics


def test_runtime_naming_its_model_without_gpus_has_one_reason_whatever_the_catalogue() -> None:
    """The real runtime requests no GPU (the InferenceService sets the resources). Naming its model, by the
    annotation or literally in the command, it is not sized for want of a GPU, whether kvlint has that model's
    config or not: the reason is "no GPU requested" (KV501 info, no KV502 "no config.json" warning), as for any
    container that requests none, not "model unknown" for one model and "no GPU requested" for another."""
    assert lookup(CATALOGUED) is not None and lookup(ABSENT) is None  # the premise
    text = KSERVE.read_text()
    ann_anchor = "    openshift.io/display-name: vLLM\n"
    cmd_anchor = "        - /mnt/models/\n"
    for model in (CATALOGUED, ABSENT):
        annotated = text.replace(ann_anchor, ann_anchor + f"    kvlint.io/model: {model}\n")
        literal = text.replace(cmd_anchor, f"        - {model}\n")
        for variant, source in (
            (annotated, "its kvlint.io/model annotation"),
            (literal, "its engine command"),
        ):
            reason, diags = _runtime_reasons(variant)
            assert reason == "no GPU requested", (model, source, reason)
            assert not [d for d in diags if d.rule == "KV502" and d.severity == "warning"], (model, source)
            (kv501,) = [d for d in diags if d.rule == "KV501"]
            assert "requests no GPU" in kv501.message and "KV405" not in kv501.fix, kv501
            (note,) = [d for d in diags if d.rule == "KV502"]
            assert f"names its own model, '{model}' ({source})" in note.message, note.message
            assert "GPU count is not known here" in note.message, note.message


def test_ome_runtime_declaring_an_amd_partition_or_mig_slice_is_sized_like_one_declaring_whole_gpus() -> None:
    """The GPUs an OME runtime declares may be any resource kvlint counts as accelerators: AMD's ``mixed``-strategy
    partition (``amd.com/cpx_nps4``) or a MIG slice, not only :data:`kvlint.gpu_resources.GPU_RESOURCES`; before,
    such a runtime naming its model stayed "runtime template" (KV502) while ``amd.com/gpu`` was sized."""
    text = KIMI.read_text()
    assert "nvidia.com/gpu: 8" in text
    for resource in ("amd.com/gpu", "amd.com/cpx_nps4", "nvidia.com/mig-3g.40gb"):
        changed = text.replace("nvidia.com/gpu: 8", f"{resource}: 8")
        r = run_documents(load_text(changed, str(KIMI)), OPTS)
        cr = _one(r)
        assert cr.model is not None and cr.model.id == "moonshotai/Kimi-K2-Instruct", (
            resource,
            sizing_of(cr),
        )
        assert sizing_of(cr) != "runtime template" and not _kv502(r), resource
