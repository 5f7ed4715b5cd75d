"""Boards that share their memory (die, memory, NVML total) with a measured board are sized from that board.

The A10G (AWS g5) and the A100 PCIe 40GB had only an nvidia-smi total, so their CUDA total (what vLLM multiplies
by ``gpu_memory_utilization``) was the NVML total less the 494 MiB median reserve: 31 MiB above the A10 and
127 MiB above the A100 SXM4 40GB, whose CUDA totals are measured (deviceQuery) with the same NVML totals. They now
name those boards as ``memory_twin`` (kvlint/accelerators/supplement.yaml, with the sources). The figures the
tests compare against are torch's "total capacity" lines printed on A10G hosts (cited in the supplement), never
kvlint's own output."""

from __future__ import annotations

import pytest

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators import registry as cat
from kvlint.accelerators.registry import nvml_total_mib

GIB = 1 << 30

#: torch "GPU 0 has a total capacity of X GiB" / "(GPU 0; X GiB total capacity ...)" printed on hosts of the board:
#: A10G: vllm-project/vllm#372 (ml.g5.12xlarge, 2023) and fips-agents/examples@d72ec806 (g5.2xlarge, vLLM 0.20.1).
OBSERVED_TORCH_TOTAL_GIB = {"nvidia-a10g": (22.19, 22.06)}

#: torch.cuda.get_device_properties(0).total_memory in MiB on an "NVIDIA A100-PCIE-40GB" (PrunaAI's results.json
#: for mattshumer-Llama-3-8B-16K-HQQ-4bit-smashed, huggingface.co, revision 521a1ba9).
OBSERVED_A100_PCIE_40GB_TOTAL_MIB = 40339.3125


@pytest.mark.parametrize(
    ("gid", "twin"),
    [("nvidia-a10g", "nvidia-a10"), ("nvidia-a100-pcie-40gb", "nvidia-a100-sxm4-40gb")],
)
def test_a_board_is_not_sized_above_its_measured_twin(gid: str, twin: str) -> None:
    acc, other = lookup(gid), lookup(twin)
    assert acc is not None and other is not None
    assert nvml_total_mib(acc) == nvml_total_mib(other)
    assert other.memory_source.startswith("measured")
    assert acc.memory_bytes <= other.memory_bytes, (acc.memory_source, other.memory_source)
    # the same NVML total less the twin's own NVML-minus-CUDA difference: the twin's CUDA total, and so the reserve
    # the twin shows on a host, not the median
    assert acc.memory_bytes == other.memory_bytes
    assert f"reserve observed on {twin}" in acc.memory_source
    reserve_mib = nvml_total_mib(acc) - acc.memory_bytes / cat.MIB
    assert reserve_mib > cat.driver_reserve_mib()


def test_the_a10g_total_is_no_larger_than_any_torch_total_printed_on_a10g_hosts() -> None:
    a10g = lookup("a10g")
    assert a10g is not None and a10g.id == "nvidia-a10g"
    for printed in OBSERVED_TORCH_TOTAL_GIB["nvidia-a10g"]:
        # torch prints 2 decimals: the board's total is at most the printed figure plus half a hundredth
        assert a10g.memory_bytes / GIB <= printed + 0.005


@pytest.mark.parametrize(
    "selector",
    [
        {"node.kubernetes.io/instance-type": "g5.2xlarge"},
        {"karpenter.k8s.aws/instance-gpu-name": "a10g"},
        {"nvidia.com/gpu.product": "NVIDIA-A10G"},
    ],
)
def test_a_g5_node_plans_on_the_a10g_with_the_twin_total(selector: dict[str, str]) -> None:
    pod = {
        "nodeSelector": selector,
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    a10 = lookup("a10")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a10g", p.how
    assert a10 is not None and p.accelerator.memory_bytes == a10.memory_bytes


def test_the_a100_pcie_40gb_total_is_the_one_torch_reports_on_that_board() -> None:
    """The twin derivation gives the SXM4 board's deviceQuery total; torch on a PCIe board reports the same bytes."""
    pcie = lookup("nvidia-a100-pcie-40gb")
    assert pcie is not None
    assert pcie.memory_bytes == round(OBSERVED_A100_PCIE_40GB_TOTAL_MIB * cat.MIB)
