"""The H100 PCIe 80GB is sized from its NVML total, not from "80 GB" read as 80 GiB.

The corpus had no nvidia-smi total for the board, so its CUDA total (what vLLM multiplies by
``gpu_memory_utilization``) was the marketing 80 GB taken as 80 GiB less the typical driver reserve: 79.52 GiB,
0.31 GiB above the deviceQuery total of the H100 SXM5 (79.20 GiB), whose NVML total (81,559 MiB) nvidia-smi also
prints on an H100 PCIe (Scaleway's MIG how-to, cited in kvlint/accelerators/supplement.yaml). Scaleway's
``H100-1-80G``/``H100-2-80G`` Kapsule nodes plan on this board."""

from __future__ import annotations

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators.registry import nvml_total_mib


def test_the_h100_pcie_has_the_sxm5_nvml_total_and_is_not_sized_above_the_sxm5() -> None:
    pcie, sxm5 = lookup("nvidia-h100-pcie-80gb"), lookup("nvidia-h100-sxm5-80gb")
    assert pcie is not None and sxm5 is not None
    assert nvml_total_mib(pcie) is not None and nvml_total_mib(pcie) == nvml_total_mib(sxm5)
    assert sxm5.memory_source.startswith("measured")
    assert not pcie.memory_source.startswith("approximate"), pcie.memory_source
    # the same NVML total: the board without a CUDA measurement must not be promised more than the measured one
    assert pcie.memory_bytes <= sxm5.memory_bytes, (pcie.memory_bytes, sxm5.memory_bytes)


def test_a_scaleway_h100_pcie_node_plans_on_the_nvml_derived_total() -> None:
    pod = {
        "nodeSelector": {"node.kubernetes.io/instance-type": "H100-1-80G"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    sxm5 = lookup("nvidia-h100-sxm5-80gb")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h100-pcie-80gb", p.how
    assert sxm5 is not None and p.accelerator.memory_bytes <= sxm5.memory_bytes
