"""Real public manifests kvlint had not seen (new-user pass 13, fixtures/collected): what a first run on them
showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise
from kvlint.source import LDict, Loc
from kvlint.types import Document
from kvlint.workloads.operators import unread_kind_note

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
BOOSTERS = (
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Qwen2.5-Coder-32B-Instruct.yaml",
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__nixl-pd-disaggregation.yaml",
)


def _check(name: str, **opts):
    return run_check([str(COLLECTED / name)], Options(allow_hub=False, **opts))


def test_kthena_model_booster_is_not_read_and_says_so() -> None:
    """Kthena's ModelBooster (workload.serving.volcano.sh) names its vLLM backend, model URI and GPU workers, and
    kthena's controller turns it into a ModelServing. kvlint reads ModelServing but had nothing for ModelBooster:
    '0 errors, 0 warnings, 0 workloads', a clean pass on a file that deploys an LLM. It now gets the KV503 note
    of the operator objects kvlint does not read, at its spec, and counts as not read in the sizing line."""
    for name in BOOSTERS:
        res = _check(name)
        (note,) = [d for d in res.diagnostics if d.rule == "KV503"]
        assert note.severity == "info"
        assert note.message.startswith("kvlint does not read this ModelBooster's engine settings")
        assert "kubectl get modelserving" in note.message
        text = (COLLECTED / name).read_text().splitlines()
        assert note.loc is not None and text[note.loc.line - 2].strip() == "spec:"  # at the spec's first key
        assert summarise(res).not_read == 1


def test_model_booster_of_another_group_gets_no_note() -> None:
    """The note is for Kthena's kind: an object of another API group that happens to be called ModelBooster is
    not described by it."""
    data = LDict({"apiVersion": "example.com/v1", "kind": "ModelBooster", "spec": LDict({"backend": "vllm"})})
    doc = Document("x.yaml", 0, data, Loc("x.yaml", 1, 1))
    assert unread_kind_note(doc) is None
    kthena = LDict({**data, "apiVersion": "workload.serving.volcano.sh/v1alpha1"})
    assert unread_kind_note(Document("x.yaml", 0, kthena, Loc("x.yaml", 1, 1))) is not None


GPU_RECIPES_VALUES = {
    "AI-Hypercomputer__gpu-recipes__inference__a3mega__deepseek-r1-671b__sglang-serving-gke__values.yaml": (
        "job.image.repository"
    ),
    "AI-Hypercomputer__gpu-recipes__inference__a3mega__llama-4__vllm-serving-gke__values.yaml": "job.image.repository",
    "AI-Hypercomputer__gpu-recipes__inference__a4x__multi-host-serving__sglang__values_kimi_k3.yaml": (
        "workload.framework: sglang and workload.image"
    ),
    "AI-Hypercomputer__gpu-recipes__inference__a4x__single-host-serving__gemma-4-31b__vllm__v0_23_x__4gpus-bf16-"
    "isl1024-osl500__recipe__values.yaml": "workload.framework: vllm and workload.image",
}


def test_gpu_recipes_values_are_values_files_not_a_clean_pass() -> None:
    """AI-Hypercomputer/gpu-recipes' serving recipes are Helm values for its inference charts: the image left
    empty for --set (``job.image: {repository:, tag:}``) or the engine picked by ``workload.framework: sglang``
    beside ``workload.image``. None of the values shapes kvlint knew matched, so each came back '0 workloads,
    0 warnings': a clean pass on a file that deploys DeepSeek-R1 on 16 GPUs. Each is now a values file (KV002,
    with what made it one) counted as not read."""
    for name, why in GPU_RECIPES_VALUES.items():
        res = _check(name)
        (kv002,) = [d for d in res.diagnostics if d.rule == "KV002"]
        assert "is a Helm values file" in kv002.message and why in kv002.message, name
        assert summarise(res).not_read == 1


@pytest.mark.parametrize(
    "text",
    [
        # written for this test: an image mapping whose repository is empty but that has no tag key
        "job:\n  image:\n    repository:\n  gpus: 8\n",
        # written for this test: an engine chooser without an image (an engine's or a benchmark's own config)
        "workload:\n  framework: vllm\n  model: meta-llama/Llama-3.1-8B\n",
        # written for this test: a chooser naming no engine kvlint models
        "workload:\n  framework: pytorch\n  image: nvcr.io/nvidia/pytorch:24.01\n",
    ],
)
def test_values_near_misses_stay_quiet(tmp_path: Path, text: str) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV002"]
