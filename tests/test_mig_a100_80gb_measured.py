"""The A100 80GB's MIG slices: measured where an `nvidia-smi mig -lgip` capture was found, and the 3g slice read
under both names drivers give it.

The corpus's A100 80GB table (mig-parted's "A100 80GB (SXM4/PCIe; also A800-80GB)") holds go-nvml mock values:
1g.10gb 9,856 MiB. An A100 PCIe 80GB's ``nvidia-smi mig -lgip`` lists 9.50 GiB (9,728 MiB) for 1g.10gb and
1g.10gb+me, and its 1g.10gb MIG device shows 9,728 MiB (kata-containers docs, cited in the supplement): the mock
sized each 1g slice 128 MiB above what the engine sees. Drivers 535.x/545.x name the 3-slice instance 3g.39gb
(NVIDIA/mig-parted#31): a pod asking ``nvidia.com/mig-3g.39gb`` asks for the 3g.40gb slice. Figures are read from
the supplement here, not restated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import registry as cat
from kvlint.accelerators import resolve_placement

SUPPLEMENT = Path(cat.__file__).with_name("supplement.yaml")
A100_80GB = [
    "nvidia-a100-sxm4-80gb",
    "nvidia-a100-pcie-80gb",
    "nvidia-a800-sxm4-80gb",
    "nvidia-a800-pcie-80gb",
]


def _measured() -> dict[str, Any]:
    data = yaml.safe_load(SUPPLEMENT.read_text(encoding="utf-8"))
    (row,) = [m for m in data["mig_measurements"] if m["table"] == "A100 80GB"]
    assert row["source"].startswith("github:") and "@" in row["source"]
    return dict(row)


@pytest.mark.parametrize("gid", A100_80GB)
def test_measured_slices_are_the_lgip_figures_not_the_mock(gid: str) -> None:
    slices = cat._cat().mig[gid]
    measured = _measured()
    for profile, gib in measured["profiles"].items():
        mp = slices[profile]
        assert mp.memory_bytes == round(gib * 1024) * cat.MIB, (gid, profile, mp.memory_bytes // cat.MIB)
        assert "mig -lgip" in mp.status and mp.source == measured["source"], (profile, mp.status)


def test_the_1g_slice_is_below_the_go_nvml_mock() -> None:
    """The mock value the corpus carries (9,856 MiB) is above the capture: the catalogue must not keep it."""
    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "accelerators.yaml"
    if not corpus.exists():
        pytest.skip("the shared research corpus is not beside the checkout")
    tables = yaml.safe_load(corpus.read_text(encoding="utf-8"))["mig_profiles"]["per_gpu"]
    (table,) = [t for t in tables if str(t["gpu"]).startswith("A100 80GB")]
    (row,) = [p for p in table["profiles"] if p["profile"] == "1g.10gb"]
    assert row["memory_mib"]["status"] == "mock"
    assert (
        cat._cat().mig["nvidia-a100-sxm4-80gb"]["1g.10gb"].memory_bytes < row["memory_mib"]["value"] * cat.MIB
    )


@pytest.mark.parametrize("gid", A100_80GB)
def test_3g39gb_is_the_3g40gb_slice(gid: str) -> None:
    slices = cat._cat().mig[gid]
    assert slices["3g.39gb"].memory_bytes == slices["3g.40gb"].memory_bytes
    assert "mig-parted/issues/31" in slices["3g.39gb"].source
    assert "3g.40gb" in slices["3g.39gb"].status
    # a name of this table only: no other GPU offers it
    assert cat.mig_gpus("3g.39gb") == sorted(A100_80GB)


@pytest.mark.parametrize("profile", ["3g.39gb", "3g.40gb"])
def test_a_pod_asking_either_name_on_an_a100_80gb_node_is_planned_on_the_slice(profile: str) -> None:
    pod = {
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
        "containers": [{"name": "c", "resources": {"limits": {f"nvidia.com/mig-{profile}": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a100-sxm4-80gb", p.how
    assert p.memory_bytes_override == cat._cat().mig["nvidia-a100-sxm4-80gb"]["3g.40gb"].memory_bytes, p.how


def test_the_single_strategy_product_with_the_older_name_is_the_slice() -> None:
    """mig.strategy=single: GFD writes the profile into the product (``...-MIG-3g.39gb`` on drivers 535/545)."""
    pod = {
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-3g.39gb"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a100-sxm4-80gb", p.how
    assert p.memory_bytes_override == cat._cat().mig["nvidia-a100-sxm4-80gb"]["3g.40gb"].memory_bytes, p.how
