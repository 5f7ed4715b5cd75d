"""Scaleway Kapsule GPU nodes: ``node.kubernetes.io/instance-type`` is the Instance's commercial type (the Scaleway
cloud controller manager returns ``CommercialType`` as the node's instance type), and Scaleway's table of GPU
Instance types says which GPU each holds (``H100-1-80G``: one H100 PCIe; ``H100-SXM-8-80G``: eight H100 SXM;
``L40S-4-48G``: four L40S). Before, such a nodeSelector named no GPU (KV501)."""

from __future__ import annotations

import pytest

from kvlint.accelerators import resolve_placement
from kvlint.accelerators.registry import instance_type


def _place(value: str):  # type: ignore[no-untyped-def]
    pod = {
        "nodeSelector": {"node.kubernetes.io/instance-type": value},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    return resolve_placement(pod, pod["containers"][0], {})


@pytest.mark.parametrize(
    ("value", "gid", "gpus"),
    [
        ("H100-1-80G", "nvidia-h100-pcie-80gb", 1),
        ("H100-2-80G", "nvidia-h100-pcie-80gb", 2),
        ("H100-SXM-8-80G", "nvidia-h100-sxm5-80gb", 8),
        ("L4-1-24G", "nvidia-l4", 1),
        ("L40S-4-48G", "nvidia-l40s", 4),
    ],
)
def test_a_kapsule_gpu_type_names_its_gpu(value: str, gid: str, gpus: int) -> None:
    it = instance_type(value)
    assert it is not None and it.provider == "scaleway" and it.gpus == gpus
    assert it.accelerator is not None and it.accelerator.id == gid
    p = _place(value)
    assert p.accelerator is not None and p.accelerator.id == gid, p.how
    assert "node.kubernetes.io/instance-type" in p.how


def test_the_commercial_type_is_matched_without_regard_to_case() -> None:
    it = instance_type("h100-sxm-2-80g")
    assert it is not None and it.accelerator is not None and it.accelerator.id == "nvidia-h100-sxm5-80gb"


def test_a_type_whose_gpu_is_not_catalogued_names_none() -> None:
    """RENDER-S holds a Tesla P100, which the catalogue lacks: no GPU, and KV501 names the value."""
    assert instance_type("RENDER-S") is None
    p = _place("RENDER-S")
    assert p.accelerator is None
    assert any("RENDER-S" in n for n in p.undecided) or "RENDER-S" in p.how
