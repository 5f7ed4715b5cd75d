"""NVIDIA's China-market data-centre boards in the catalogue (gpus49): H20 (96 GB), H20-3e (141 GB), A800 SXM4
80GB and A800 80GB PCIe.

Each is catalogued from an nvidia-smi total printed in a public issue and its NVML name from NVIDIA's supported-GPU
table (``kvlint/accelerators/supplement.yaml`` cites both); GPU feature discovery labels a node with that name
sanitised (``nvidia.com/gpu.product: NVIDIA-H20``). Before, a pod selecting such a node was planned on the default
fleet, and ``NVIDIA-H20-3e`` could not be told from the 96 GB H20. The tests read the figures from the catalogue,
never restate a derived one."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators import registry as cat
from kvlint.accelerators.registry import nvml_total_mib


def place(labels: dict[str, Any]) -> Any:
    pod = {
        "nodeSelector": dict(labels),
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    return resolve_placement(pod, pod["containers"][0], {})


BOARDS = [
    # (GFD nvidia.com/gpu.product, catalogue id, NVML name, compute capability)
    ("NVIDIA-H20", "nvidia-h20", "NVIDIA H20", "9.0"),
    ("NVIDIA-H20-3e", "nvidia-h20-3e", "NVIDIA H20-3e", "9.0"),
    ("NVIDIA-A800-SXM4-80GB", "nvidia-a800-sxm4-80gb", "NVIDIA A800-SXM4-80GB", "8.0"),
    ("NVIDIA-A800-80GB-PCIe", "nvidia-a800-pcie-80gb", "NVIDIA A800 80GB PCIe", "8.0"),
]


@pytest.mark.parametrize(("product", "gid", "nvml", "cc"), BOARDS)
def test_the_gfd_product_label_places_the_pod_on_the_board(
    product: str, gid: str, nvml: str, cc: str
) -> None:
    p = place({"nvidia.com/gpu.product": product})
    assert p.accelerator is not None and p.accelerator.id == gid, p.how
    acc = p.accelerator
    assert acc.name == nvml and acc.compute_capability == cc
    # the NVML total less the catalogue's typical driver reserve, unless the entry names a board with the same
    # memory (test_a_board_with_a_memory_twin_is_not_sized_above_it)
    twin = _twin(gid)
    if twin is None:
        assert acc.memory_bytes == (nvml_total_mib(acc) - cat.driver_reserve_mib()) * cat.MIB
    assert p.memory_bytes == acc.memory_bytes
    # vLLM's rules: bf16 from 8.0, fp8 from 8.9 (Hopper yes, the Ampere A800 no)
    assert acc.bf16 and acc.fp8 == (cc == "9.0")


def _entry(gid: str) -> dict[str, Any]:
    entry: dict[str, Any] = cat._cat().entries[gid]
    return entry


def _twin(gid: str) -> str | None:
    fact = _entry(gid).get("memory_twin")
    return str(fact["value"]) if fact else None


def _observed_reserve(gid: str) -> int:
    """The NVML-minus-CUDA difference measured on one host for ``gid`` (the catalogue's reserve observations)."""
    (obs,) = [o for o in cat._cat().raw["meta"]["driver_reserve"]["observations"] if o["id"] == gid]
    return int(obs["smi_minus_cuda_mib"])


@pytest.mark.parametrize(
    ("gid", "twin"),
    [
        # the H20-3e has the H200's 141 GB HBM3e; the A800 is the A100's GA100 with the same 80 GB HBM2e: the same
        # NVML total, measured on hosts of the twin with a larger reserve than the 494 MiB median
        ("nvidia-h20-3e", "nvidia-h200-141gb"),
        ("nvidia-a800-sxm4-80gb", "nvidia-a100-sxm4-80gb"),
        ("nvidia-a800-pcie-80gb", "nvidia-a100-sxm4-80gb"),
    ],
)
def test_a_board_with_a_memory_twin_is_not_sized_above_it(gid: str, twin: str) -> None:
    """vLLM multiplies torch's device total (cudaMemGetInfo), not nvidia-smi's, by gpu_memory_utilization. A
    board whose memory is its twin's (same NVML total) is derived with the reserve observed on the twin: the
    median reserve put the H20-3e 205 MiB and the A800s 268 MiB above the H200 / A100 80GB CUDA totals
    measured on hosts, where torch prints 139.72-139.81 GiB (H200) and 79.33 GiB (an A800-80G)."""
    acc, other = lookup(gid), lookup(twin)
    assert acc is not None and other is not None
    assert nvml_total_mib(acc) == nvml_total_mib(other)
    assert acc.memory_bytes <= other.memory_bytes, (acc.memory_source, other.memory_source)
    assert _observed_reserve(twin) > cat.driver_reserve_mib()  # why the median is not taken
    assert _twin(gid) == twin
    # the same NVML total less the twin's own NVML-minus-CUDA difference (bytes): the twin's CUDA total
    assert acc.memory_bytes == other.memory_bytes
    assert f"reserve observed on {twin}" in acc.memory_source


def test_the_96gb_h20_keeps_the_typical_reserve() -> None:
    """The H20's NVML total (97,871 MiB) is the GH200 96 GB's, but the GH200's observed reserve (1,103 MiB) is a
    Grace Hopper superchip's: the H20 names no twin and keeps the median, 95.10 GiB, which agrees with the
    "~95.1 GiB" CUDA-visible memory measured on an H20 (RightNow-AI/AutoMegaKernel#3)."""
    h20 = lookup("h20")
    assert h20 is not None and _twin(h20.id) is None
    assert h20.memory_bytes == (nvml_total_mib(h20) - cat.driver_reserve_mib()) * cat.MIB
    assert round(h20.memory_bytes / 2**30, 1) == 95.1


def test_the_141gb_h20_is_not_sized_as_the_96gb_one() -> None:
    h20, h20_3e = lookup("h20"), lookup("h20-3e")
    assert h20 is not None and h20_3e is not None and h20 is not h20_3e
    assert nvml_total_mib(h20_3e) > 1.4 * nvml_total_mib(h20)
    assert lookup("h20-141gb") is h20_3e and lookup("NVIDIA-H20-3e") is h20_3e


def test_a800_names_resolve_and_share_the_a100_80gb_nvml_total() -> None:
    sxm, pcie, a100 = lookup("a800-80gb"), lookup("a800-pcie-80gb"), lookup("a100-80gb")
    assert sxm is not None and sxm.id == "nvidia-a800-sxm4-80gb"
    assert pcie is not None and pcie.id == "nvidia-a800-pcie-80gb"
    assert a100 is not None and nvml_total_mib(sxm) == nvml_total_mib(pcie) == nvml_total_mib(a100)
    # the liquid-cooled PCIe board's NVML name is a variant of the same entry
    assert lookup("NVIDIA-A800-80GB-PCIe-LC") is pcie


@pytest.mark.parametrize("name", ["h800", "NVIDIA-H800", "b300", "NVIDIA-B300-SXM6-AC", "gb300"])
def test_boards_without_a_citable_total_stay_out(name: str) -> None:
    """docs/accelerators.md "Not covered": no nvidia-smi/CUDA total of these was found, so no memory is invented."""
    assert lookup(name) is None


def _place_mig(labels: dict[str, Any], resource: str) -> Any:
    pod = {
        "nodeSelector": dict(labels),
        "containers": [{"name": "c", "resources": {"limits": {resource: 1}}}],
    }
    return resolve_placement(pod, pod["containers"][0], {})


@pytest.mark.parametrize(
    ("product", "twin", "profile"),
    [
        # mig-parted's "A100 80GB (SXM4/PCIe; also A800-80GB)" table lists 0x20F3 and 0x20F5, its "H100 96GB / ... /
        # H20" table 0x2329: the same profiles, slice for slice, as the other boards of each table
        ("NVIDIA-A800-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", "3g.40gb"),
        ("NVIDIA-A800-80GB-PCIe", "NVIDIA-A100-SXM4-80GB", "1g.10gb"),
        ("NVIDIA-H20", "NVIDIA-GH200-480GB", "1g.12gb"),
    ],
)
def test_a_mig_slice_of_the_board_is_its_table_s_slice(product: str, twin: str, profile: str) -> None:
    p = _place_mig({"nvidia.com/gpu.product": product}, f"nvidia.com/mig-{profile}")
    q = _place_mig({"nvidia.com/gpu.product": twin}, f"nvidia.com/mig-{profile}")
    assert p.accelerator is not None and p.accelerator.name.replace(" ", "-") == product
    assert q.memory_bytes_override is not None
    assert p.memory_bytes_override == q.memory_bytes_override
    assert p.memory_bytes_override < p.accelerator.memory_bytes
