"""AMD's ROCm builds of vLLM name the Instinct family they are built for in their tags
(``rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4``, the ROCm device plugin's own vLLM example): a pod of such an
image that names no GPU is planned on that family's GPUs (vLLM's ROCm requirements: MI300/MI325 gfx942, MI350/MI355
gfx950), not on the whole default ROCm fleet. Before (branch gpus54) it was planned on MI210 and MI250X (gfx90a) and
MI355X (gfx950) too; the tag never refuses another GPU (KV304 reads SGLang's single-target builds only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators.registry import llvm_target
from kvlint.accelerators.site import DEFAULT_ROCM_FLEET
from kvlint.engines.images import rocm_build_target, rocm_family_target
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "collected" / "ROCm__k8s-device-plugin__example__vllm-serve__deployment.yaml"


@pytest.mark.parametrize(
    ("image", "target"),
    [
        ("rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4", ("gfx942", "mi300")),
        ("docker.io/rocm/vllm:rocm6.3.1_mi300_ubuntu22.04_py3.12_vllm_0.6.6", ("gfx942", "mi300")),
        ("rocm/vllm-dev:nightly_mi355_20250801", ("gfx950", "mi355")),
        ("rocm/vllm-dev:mi325x", ("gfx942", "mi325x")),
        ("rocm/vllm:latest", None),
        ("rocm/vllm:instinct_main", None),
        ("rocm/vllm:rocm7.0.0_vllm_0.11.1_20251103", None),
        ("example.com/team/vllm:rocm6.2_mi300_vllm", None),  # another repository's tag says nothing sure
        ("rocm/vllm:rocm6.2_mi3000_vllm", None),  # not a family word
    ],
)
def test_rocm_family_target(image: str, target: tuple[str, str] | None) -> None:
    assert rocm_family_target(image) == target
    assert rocm_build_target(image) is None  # what it is built for, never a single-target refusal


def _fleet(result, image: str) -> set[str]:
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult) and c.serving.image == image]
    return {e.accelerator.id for e in c.fleet}


def test_the_rocm_device_plugins_vllm_example_is_planned_on_mi300_class_gpus() -> None:
    image = "rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4"
    assert image in EXAMPLE.read_text()
    result = run_check([str(EXAMPLE)], Options(allow_hub=False))
    fleet = _fleet(result, image)
    gfx942 = {i for i in DEFAULT_ROCM_FLEET if llvm_target(i) == "gfx942"}
    assert fleet == gfx942 and gfx942 < set(DEFAULT_ROCM_FLEET)
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert "its gfx942 GPUs only" in kv501.message and "MI300 GPUs, as its tag says" in kv501.message


def test_a_tag_naming_no_family_keeps_the_whole_rocm_fleet(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace(
        "rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4", "rocm/vllm:rocm7.0.0_vllm_0.11.1_20251103"
    )
    f = tmp_path / "d.yaml"
    f.write_text(text)
    result = run_check([str(f)], Options(allow_hub=False))
    assert _fleet(result, "rocm/vllm:rocm7.0.0_vllm_0.11.1_20251103") == set(DEFAULT_ROCM_FLEET)
