"""KubeRay RayServices running a published Ray Serve sample program (engine46).

GKE's samples (GoogleCloudPlatform/kubernetes-engine-samples ``ai-ml/gke-ray/rayserve/llm/{serve,
serve_chat_completion}.py`` @91b8ed04) start vLLM with ``model=os.environ['MODEL_ID']`` and
``tensor_parallel_size=int(os.environ['TENSOR_PARALLELISM'])``, every other setting vLLM's default, and their
RayServices pin the vLLM release with ``runtime_env.pip: ["vllm==0.4.3"]`` over a Ray image without vLLM. kvlint
said it "does not read" them (KV503) and sized nothing; the manifests are fixtures/collected (INDEX.csv).
"""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.workloads.rayserve import _pinned_vllm

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
MISTRAL = (
    COLLECTED
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__mistral-7b__ray-service.yaml"
)


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _copy(tmp_path: Path, old: str, new: str) -> Path:
    text = MISTRAL.read_text()
    assert old in text
    out = tmp_path / "ray-service.yaml"
    out.write_text(text.replace(old, new))
    return out


def test_gke_sample_program_is_read_from_its_env_vars() -> None:
    res = _run(MISTRAL)
    (cr,) = res.containers
    s = cr.serving
    assert s is not None and s.engine == "vllm"
    assert s.model is not None and s.model.value == "mistralai/Mistral-7B-Instruct-v0.3"
    assert s.model.loc is not None and s.model.loc.line == 36  # MODEL_ID's value
    assert s.get("tensor_parallel_size") == 2 and s.loc("tensor_parallel_size").line == 37
    assert s.version == "0.4.3"  # runtime_env.pip, not the rayproject/ray-ml image
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l4" and cr.placement.gpus == 2
    assert cr.plan is not None and cr.plan.era == "v0"  # vLLM 0.4.3 has no V1 engine
    assert not [d for d in res.diagnostics if d.rule == "KV503"]
    (note,) = [d for d in res.diagnostics if d.rule == "KV504" and "published code" in d.message]
    assert note.loc is not None and note.loc.line == 25  # the import_path
    (pin,) = [
        d for d in res.diagnostics if d.rule == "KV504" and "runtime_env.pip" in d.message and d is not note
    ]
    assert pin.loc is not None and pin.loc.line == 34


def test_other_working_dir_is_not_taken_for_the_sample(tmp_path: Path) -> None:
    path = _copy(
        tmp_path,
        "https://github.com/GoogleCloudPlatform/kubernetes-engine-samples/archive/main.zip",
        "https://example.com/my-fork.zip",
    )
    res = _run(path)
    assert all(cr.serving is None or cr.serving.model is None for cr in res.containers)
    assert [d for d in res.diagnostics if d.rule == "KV503" and "Python code" in d.message]


def test_variable_the_program_indexes_is_missing(tmp_path: Path) -> None:
    path = _copy(tmp_path, '          TENSOR_PARALLELISM: "2"\n', "")
    res = _run(path)
    (d,) = [d for d in res.diagnostics if d.rule == "KV503" and "TENSOR_PARALLELISM" in d.message]
    assert "KeyError" in d.message and d.loc is not None and d.loc.line == 25


def test_unpinned_vllm_leaves_the_release_unknown(tmp_path: Path) -> None:
    res = _run(_copy(tmp_path, 'pip: ["vllm==0.4.3"]', 'pip: ["vllm", "ray==2.40.0"]'))
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.version is None
    assert [d for d in res.diagnostics if d.rule == "KV208"]


def test_pip_pin() -> None:
    assert _pinned_vllm({"pip": ["transformers==4.40.2", " vllm == 0.6.3.post1 "]})[0] == "0.6.3.post1"
    assert _pinned_vllm({"pip": ["vllm>=0.4.3"]})[0] is None
    assert _pinned_vllm({"pip": "vllm==0.4.3"})[0] is None  # a list is what Ray reads (here a string)
    assert _pinned_vllm(None)[0] is None
