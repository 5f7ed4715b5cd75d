"""Review of the llmaz Playground reader (kvlint/workloads/llmaz.py, review 48C): where its findings point."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
RUNAI = "InftyAI__llmaz__docs__examples__runai-streamer__playground-streaming-from-s3.yaml"

_MODEL = """apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata:
  name: mystery
spec:
  familyName: acme
  source:
    modelHub:
      modelID: acme/not-a-real-model-7b
  inferenceConfig:
    flavors:
      - name: a
        limits:
          nvidia.com/gpu: 1
"""
_PLAYGROUND = """apiVersion: inference.llmaz.io/v1alpha1
kind: Playground
metadata:
  name: mystery
spec:
  modelClaim:
    modelName: mystery
"""


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_finding_on_the_model_points_at_the_openmodel_source_line(tmp_path: Path) -> None:
    """``{{ .ModelPath }}`` is made of the OpenModel's ``modelID`` (or ``uri``): a finding on the model the engine
    loads points there, not at the Playground's ``modelClaim`` (which names the OpenModel, not the model). The Run:ai
    streamer example's KV505 ("sized this model from its path s3://<YOUR_S3_BUCKET>/...") pointed at line 33
    (``modelName:``), the path being written at line 17 (``uri:``)."""
    path = COLLECTED / RUNAI
    diags = run_check([str(path)], Options(allow_hub=False)).diagnostics
    (kv505,) = [d for d in diags if d.rule == "KV505"]
    assert kv505.loc is not None and kv505.loc.line == _line_of(path.read_text(), "uri: s3://"), kv505.loc
    (tmp_path / "model.yaml").write_text(_MODEL)
    (tmp_path / "playground.yaml").write_text(_PLAYGROUND)
    diags = run_check([str(tmp_path)], Options(allow_hub=False)).diagnostics
    (kv502,) = [d for d in diags if d.rule == "KV502"]
    assert kv502.loc is not None, kv502
    assert Path(kv502.loc.file).name == "model.yaml", kv502.loc
    assert kv502.loc.line == _line_of(_MODEL, "modelID:"), kv502.loc


def test_index_rows_of_llmaz_files_name_the_openmodel_model_and_the_backend() -> None:
    """fixtures/collected/INDEX.csv is the provenance and description of each file: a row holding an OpenModel and
    a Playground names the OpenModel's model (its ``modelID``, else the last part of its ``uri``) and the Playground's
    backend (``backendName``, vllm when unset). The HPA example's row said "vLLM (llmaz)" and
    "Qwen/Qwen2-0.5B-Instruct" for a llama.cpp Playground of Qwen/Qwen2-0.5B-Instruct-GGUF."""
    import csv

    import yaml

    with (COLLECTED / "INDEX.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if "OpenModel" in r["kind(s)"] and "Playground" in r["kind(s)"]]
    assert len(rows) >= 6, rows
    squash = lambda s: "".join(c for c in s.lower() if c.isalnum())  # noqa: E731
    for row in rows:
        docs = [d for d in yaml.safe_load_all((COLLECTED / row["file"]).read_text()) if isinstance(d, dict)]
        models = {d["metadata"]["name"]: d for d in docs if d.get("kind") == "OpenModel"}
        for pg in (d for d in docs if d.get("kind") == "Playground"):
            spec = pg["spec"]
            claimed = (
                spec["modelClaim"]["modelName"]
                if "modelClaim" in spec
                else spec["modelClaims"]["models"][0]["name"]
            )
            source = models[claimed]["spec"]["source"]
            wanted = (
                source["modelHub"]["modelID"]
                if "modelHub" in source
                else source["uri"].rstrip("/").split("/")[-1]
            )
            assert wanted in row["model"], (row["file"], row["model"], wanted)
            backend = (spec.get("backendRuntimeConfig") or {}).get("backendName", "vllm")
            assert squash(backend) in squash(row["engine"]), (row["file"], row["engine"], backend)


def test_a_number_among_the_playground_args_is_refused_as_in_a_pod(tmp_path: Path) -> None:
    """``backendRuntimeConfig.args`` is ``[]string`` in llmaz's Playground CRD: ``args: [--max-model-len, 4096]``
    makes the API server refuse the Playground, as it refuses such a pod (KV005, error). The reader turned every
    item into its text, so kvlint planned ``--max-model-len 4096`` without a word."""
    f = tmp_path / "pg.yaml"
    f.write_text(
        _MODEL.replace("acme/not-a-real-model-7b", "facebook/opt-125m")
        + "---\n"
        + _PLAYGROUND
        + "  backendRuntimeConfig:\n    args:\n      - --max-model-len\n      - 1024\n"
    )
    diags = run_check([str(f)], Options(allow_hub=False)).diagnostics
    (kv005,) = [d for d in diags if d.rule == "KV005"]
    assert kv005.severity == "error", kv005
    assert kv005.message.startswith("spec.backendRuntimeConfig.args[1] is an integer, not a string"), (
        kv005.message
    )
    assert "refuses the Playground" in kv005.message, kv005.message
    assert kv005.loc is not None and kv005.loc.line == f.read_text().splitlines().index("      - 1024") + 1
    # ``version: 0.10`` is the number 0.1 to YAML, and a quoted one is what llmaz runs
    g = tmp_path / "v.yaml"
    g.write_text(
        f.read_text().replace("    args:\n      - --max-model-len\n      - 1024\n", "    version: 0.10\n")
    )
    diags = run_check([str(g)], Options(allow_hub=False)).diagnostics
    (kv005,) = [d for d in diags if d.rule == "KV005"]
    assert kv005.message.startswith("spec.backendRuntimeConfig.version is a number, not a string"), (
        kv005.message
    )
    # and the number's text is no release: the image keeps the chart's tag (it was vllm-openai:0.1, and KV208
    # said "vLLM 0.1")
    res = run_check([str(g)], Options(allow_hub=False))
    assert not any("0.1" in d.message for d in res.diagnostics if d.rule == "KV208"), res.diagnostics
    assert not res.containers[0].container["image"].endswith(":0.1"), res.containers[0].container["image"]
    g.write_text(g.read_text().replace("version: 0.10", 'version: "v0.10.0"'))
    res = run_check([str(g)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV005"], res.diagnostics
    assert res.containers[0].container["image"] == "vllm/vllm-openai:v0.10.0"


def test_a_playground_left_unread_says_why_at_the_field_that_decided_it(tmp_path: Path) -> None:
    """With its OpenModel among the inputs, a Playground kvlint does not build says which of its settings kvlint
    does not restate, at that setting: the HPA example's ``backendName: llamacpp``, the speculative-decoding
    example's ``modelClaims`` (its value, as kvlint places a mapping). Both got the kind's generic note at
    ``spec`` ("the engine command comes from the llmaz BackendRuntime ... when the OpenModel its modelClaim names
    is among the inputs"), which it was."""
    prefix = "InftyAI__llmaz__docs__examples__"
    for name, needle, said in (
        ("hpa__playground.yaml", "backendName: llamacpp", "backendName 'llamacpp' is a BackendRuntime"),
        ("speculative-decoding__vllm__playground.yaml", "    models:", "it claims several models"),
    ):
        path = COLLECTED / (prefix + name)
        res = run_check([str(path)], Options(allow_hub=False))
        (kv503,) = [d for d in res.diagnostics if d.rule == "KV503"]
        assert said in kv503.message, kv503.message
        assert kv503.loc is not None and kv503.loc.line == _line_of(path.read_text(), needle), (
            name,
            kv503.loc,
        )
        assert res.containers == []
        assert "llmaz.io/model-name=MODEL" not in kv503.fix, kv503.fix  # the claimed (first) model's label
    # an OpenModel of another name among the inputs: the claimed one is named as missing, at the claim
    (tmp_path / "model.yaml").write_text(_MODEL)
    (tmp_path / "pg.yaml").write_text(_PLAYGROUND.replace("modelName: mystery", "modelName: other-model"))
    (kv503,) = [
        d for d in run_check([str(tmp_path)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert "the OpenModel 'other-model' its modelClaim names is not among the inputs" in kv503.message
    assert kv503.loc is not None and kv503.loc.line == _line_of(_PLAYGROUND, "modelName:"), kv503.loc


def test_a_claim_that_is_no_mapping_is_said_to_name_no_openmodel(tmp_path: Path) -> None:
    """``modelClaim: mystery`` (a string where llmaz takes a mapping) was "the OpenModel 'None' its modelClaim
    names is not among the inputs"."""
    (tmp_path / "model.yaml").write_text(_MODEL)
    (tmp_path / "pg.yaml").write_text(
        _PLAYGROUND.replace("  modelClaim:\n    modelName: mystery", "  modelClaim: mystery")
    )
    (kv503,) = [
        d for d in run_check([str(tmp_path)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert "its modelClaim names no OpenModel" in kv503.message and "'None'" not in kv503.message, (
        kv503.message
    )


def test_kv405_on_a_playground_says_where_llmaz_takes_the_gpus_from(tmp_path: Path) -> None:
    """An OpenModel without a flavor and a Playground without resources: the model-runner requests no GPU (KV405).
    The fix said "set resources.limits['nvidia.com/gpu']", a field of the pod llmaz writes, not of the objects the
    user wrote; it names the OpenModel's flavor limits and the Playground's backendRuntimeConfig.resources."""
    model = _MODEL.split("  inferenceConfig:")[0].replace("acme/not-a-real-model-7b", "facebook/opt-125m")
    (tmp_path / "model.yaml").write_text(model)
    (tmp_path / "pg.yaml").write_text(_PLAYGROUND)
    (kv405,) = [
        d for d in run_check([str(tmp_path)], Options(allow_hub=False)).diagnostics if d.rule == "KV405"
    ]
    assert "spec.inferenceConfig.flavors[].limits" in kv405.fix, kv405.fix
    assert "spec.backendRuntimeConfig.resources.limits" in kv405.fix, kv405.fix


def test_a_playground_alone_names_the_openmodel_it_claims(tmp_path: Path) -> None:
    """With no OpenModel among the inputs, a Playground got the kind's generic note at ``spec`` ("... when the
    OpenModel its modelClaim names is among the inputs"): the reader was called only when some OpenModel was in the
    run. It now says which OpenModel, at ``modelName``, in words that hold in the admission webhook too, where a
    Playground arrives alone (OpenModel is cluster-scoped: InftyAI/llmaz config/crd/bases/llmaz.io_openmodels.yaml
    at the commit the reader restates, ``scope: Cluster``)."""
    f = tmp_path / "pg.yaml"
    f.write_text(_PLAYGROUND)
    (note,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"]
    assert "the OpenModel 'mystery' its modelClaim names is not among the inputs" in note.message, (
        note.message
    )
    assert "an admission review of the Playground does not carry" in note.message, note.message
    assert "kubectl get openmodel mystery -o yaml" in note.message, note.message
    assert note.loc is not None and note.loc.line == _line_of(_PLAYGROUND, "modelName:"), note.loc
    # the same object as the webhook reviews it
    import yaml

    from kvlint.webhook.review import webhook_options
    from kvlint.webhook.worker import lint_object

    res = lint_object(yaml.safe_load(_PLAYGROUND), "review", webhook_options())
    (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert "the OpenModel 'mystery' its modelClaim names is not among the inputs" in note.message, (
        note.message
    )
