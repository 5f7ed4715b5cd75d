"""Leftovers of the engine-release and option-reading reviews (polish46)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def _manifest(tmp_path: Path, image: str, extra: str, gpus: int = 1) -> Path:
    m = tmp_path / "m.yaml"
    m.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n"
        f"      containers:\n      - name: api\n        image: {image}\n"
        f"        args: [--model, HuggingFaceTB/SmolLM2-135M-Instruct{extra}]\n"
        f"        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )
    return m


@pytest.mark.parametrize(
    ("image", "build"),
    [("vllm/vllm-openai:v0.8.5", "CUDA"), ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "ROCm")],
)
def test_kv501_on_a_gpu_build_started_with_device_cpu_says_the_build_decides(
    tmp_path: Path, image: str, build: str
) -> None:
    """vLLM picks its platform from the build (vllm/platforms/__init__.py, ``cpu_platform_plugin``: "cpu" in
    version("vllm")), not ``--device cpu``: KV501 said "vllm is started with --device cpu" as if that made a CPU
    run, on vLLM's own CUDA image. It now says the flag does not make the GPU build run on the CPU."""
    (d,) = [d for d in _run(_manifest(tmp_path, image, ", --device, cpu")).diagnostics if d.rule == "KV501"]
    assert f"is vLLM's {build} build" in d.message
    assert "picks its platform from the build" in d.message
    assert "--device cpu" in d.fix


def test_kv501_on_a_cpu_image_started_with_device_cpu_keeps_the_plain_wording(tmp_path: Path) -> None:
    (d,) = [
        d
        for d in _run(
            _manifest(tmp_path, "ghcr.io/stackhpc/vllm-cpu:v0.8.5", ", --device, cpu", 0)
        ).diagnostics
        if d.rule == "KV501"
    ]
    assert "is started with --device cpu" in d.message
    assert "picks its platform" not in d.message
