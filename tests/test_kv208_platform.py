"""KV208 (engine release not pinned) on accelerators other than CUDA GPUs: the fix never proposes a CUDA image
for a TPU or ROCm workload, and the message says what kvlint did with the assumed release there (on a TPU
the GPU memory rules are skipped, KV501, so it must not claim to have applied them)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import CheckResult

_CUDA_IMAGES = ("vllm/vllm-openai", "lmsysorg/sglang", "ghcr.io/huggingface/text-generation-inference")


def _pod(tmp_path: Path, image: str, selector: str, resource: str, annotations: str = "") -> CheckResult:
    p = tmp_path / f"{image.replace('/', '_').replace(':', '_')}.yaml"
    p.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n{annotations}spec:\n{selector}  containers:\n"
        f"  - name: vllm\n    image: {image}\n"
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
        f"    resources: {{limits: {{{resource}: 1}}}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _one(r: CheckResult, rule: str):  # noqa: ANN202 - Diagnostic
    (d,) = [d for d in r.diagnostics if d.rule == rule]
    return d


def test_tpu_workload_is_not_told_to_pin_a_cuda_image(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "vllm/vllm-tpu:latest",
        "  nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice}\n",
        "google.com/tpu",
    )
    (cr,) = r.containers
    assert cr.plan is None and _one(r, "KV501")  # the memory rules were skipped on the TPU
    d = _one(r, "KV208")
    assert not any(img in d.fix for img in _CUDA_IMAGES), d.fix
    assert "vllm/vllm-tpu" in d.fix  # pin the image the workload runs
    assert "and its memory rules" not in d.message and "skipped" in d.message, d.message


def test_rocm_workload_is_told_to_pin_its_own_image(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "rocm/vllm:latest",
        "",
        "amd.com/gpu",
        annotations="  annotations: {kvlint.io/accelerator: amd-instinct-mi300x}\n",
    )
    (cr,) = r.containers
    assert cr.plan is not None  # kvlint sizes ROCm GPUs: its memory rules did apply
    d = _one(r, "KV208")
    assert not any(img in d.fix for img in _CUDA_IMAGES), d.fix
    assert "rocm/vllm" in d.fix
    assert "memory rules" in d.message


def test_cuda_workload_keeps_the_release_tag_example(tmp_path: Path) -> None:
    r = _pod(
        tmp_path,
        "vllm/vllm-openai:latest",
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n",
        "nvidia.com/gpu",
    )
    d = _one(r, "KV208")
    assert "vllm/vllm-openai:v" in d.fix and "memory rules" in d.message
