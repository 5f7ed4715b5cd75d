"""An InferenceService whose model KServe's storage initializer downloads to ``/mnt/models`` from a place kvlint
cannot read (an ``s3://``/``gs://``/``pvc://`` storage URI, or an OpenShift AI data connection's ``storage``
``key`` + ``path``) is sized from that location's name when it is the repository name of a catalogued model,
with a KV505 note saying so, as a container path named after its model is; a location that names no catalogued
model, the user's ``kvlint.io/model`` and a ``model_paths`` mapping of ``/mnt/models`` keep their behaviour.
The first manifest is real (fixtures/collected, source in its INDEX.csv)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
DOC_BOT = COLLECTED / "alpha-hack-program__doc-bot__vllm_runtime__vllm-mistral-7b-instance.yaml"

# Made up for this test: a ServingRuntime reading /mnt/models, and InferenceServices using it with object-store
# storage URIs (one named after a catalogued model, one not), a user annotation, and the Hugging Face runtime.
_RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm}
spec:
  supportedModelFormats: [{name: vLLM, autoSelect: true}]
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.11.0
    args: [--model=/mnt/models, --max-model-len=8192]
"""


def _isvc(name: str, storage: str, annotations: str = "", fmt: str = "vLLM") -> str:
    return f"""\
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: {name}
  annotations: {{{annotations}}}
spec:
  predictor:
    nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
    model:
      modelFormat: {{name: {fmt}}}
      {storage}
      resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _models(*paths: str, **options: object) -> dict[str, tuple[str | None, str | None]]:
    result = run_check(list(paths), Options(allow_hub=False, **options))  # type: ignore[arg-type]
    return {
        cr.workload.name: (cr.model.id if cr.model is not None else None, cr.model_error)
        for cr in result.containers
    }


def _rules(path: str, rule: str) -> list[str]:
    return [d.message for d in run_check([path], Options(allow_hub=False)).diagnostics if d.rule == rule]


def test_data_connection_storage_path_names_the_model() -> None:
    assert _models(str(DOC_BOT)) == {"mistral-7b": ("mistralai/Mistral-7B-Instruct-v0.2", None)}
    (note,) = _rules(str(DOC_BOT), "KV505")
    assert "from the storage path mistralai/Mistral-7B-Instruct-v0.2, which kvlint cannot read" in note
    assert "downloads the model to /mnt/models/" in note
    assert not _rules(str(DOC_BOT), "KV502")


def test_object_store_uris_and_what_keeps_its_behaviour(tmp_path: Path) -> None:
    f = tmp_path / "isvc.yaml"
    f.write_text(
        _RUNTIME
        + _isvc("named", "storageUri: s3://models/llm/Qwen2.5-7B-Instruct/")
        + _isvc("pvc", "storageUri: pvc://model-pvc/Meta-Llama-3.1-8B-Instruct")
        + _isvc("unnamed", "storageUri: gs://bucket/granite")
        + _isvc(
            "annotated", "storageUri: s3://models/Qwen2.5-7B-Instruct", "kvlint.io/model: Qwen/Qwen2.5-0.5B"
        )
    )
    got = _models(str(f))
    assert got["named"] == ("Qwen/Qwen2.5-7B-Instruct", None)
    assert got["pvc"][0] == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert got["unnamed"][0] is None and "/mnt/models" in str(
        got["unnamed"][1]
    )  # as before: config not found
    assert got["annotated"][0] == "Qwen/Qwen2.5-0.5B"
    # a model_paths mapping of the container path is the user's answer and comes first
    mapped = _models(str(f), model_paths={"/mnt/models": "Qwen/Qwen2.5-0.5B"})
    assert {m for m, _ in mapped.values()} == {"Qwen/Qwen2.5-0.5B"}


def test_hugging_face_runtime_reading_an_object_store_uri(tmp_path: Path) -> None:
    f = tmp_path / "hf.yaml"
    f.write_text(_isvc("hf", "storageUri: gs://bucket/models/Qwen2.5-7B-Instruct", fmt="huggingface"))
    assert _models(str(f))["hf"][0] == "Qwen/Qwen2.5-7B-Instruct"
