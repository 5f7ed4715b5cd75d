"""MIG slices of mig-parted's "H100 80GB (SXM5/PCIe)" table are sized from `nvidia-smi mig -lgip` captures.

The table had no measured memory, so each slice was sized from its profile name, X GB read as X * 10^9 bytes
(``_profile_memory``): 1g.10gb 9,536 MiB, 3g.40gb 38,146 MiB, 7g.80gb 76,293 MiB. Four H100 SXM5 80GB boards list
9.75, 39.50 and 79.25 GiB (stackhpc/ansible-slurm-appliance docs/mig.md); an H100 PCIe on driver 525.125.06
lists 9.62, 39.25 and 79.00 GiB (scaleway/docs-content's MIG how-to): a slice's memory depends on the driver, and
the smallest capture is taken. The figures are read from the supplement here, not restated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators import registry as cat

SUPPLEMENT = Path(cat.__file__).with_name("supplement.yaml")


def _measured() -> dict[str, Any]:
    data = yaml.safe_load(SUPPLEMENT.read_text(encoding="utf-8"))
    (row,) = [m for m in data["mig_measurements"] if m["table"] == "H100 80GB"]
    assert row["source"].startswith("github:") and "@" in row["source"]
    return dict(row)


@pytest.mark.parametrize("gid", ["nvidia-h100-sxm5-80gb", "nvidia-h100-pcie-80gb"])
def test_each_slice_is_the_measured_lgip_figure(gid: str) -> None:
    slices = cat._cat().mig[gid]
    assert not [(p, mp.status) for p, mp in slices.items() if mp.status.startswith("approximate")]
    measured = _measured()
    assert set(measured["profiles"]) == set(slices)
    for profile, gib in measured["profiles"].items():
        mp = slices[profile]
        assert mp.memory_bytes == round(min(gib) * 1024) * cat.MIB, (gid, profile)
        assert "mig -lgip" in mp.status and mp.source == measured["source"]


#: ``nvidia-smi mig -lgip`` GiB of the 1g.10gb, 3g.40gb and 7g.80gb rows in the two captures the supplement cites:
#: stackhpc/ansible-slurm-appliance docs/mig.md@c0f587ab (H100 SXM5) and scaleway/docs-content
#: pages/gpu/how-to/use-nvidia-mig-technology.mdx@d204c095 (H100 PCIe, driver 525.125.06).
CAPTURED_LGIP_GIB = {
    "1g.10gb": (9.75, 9.62),
    "3g.40gb": (39.50, 39.25),
    "7g.80gb": (79.25, 79.00),
}


@pytest.mark.parametrize("gid", ["nvidia-h100-sxm5-80gb", "nvidia-h100-pcie-80gb"])
@pytest.mark.parametrize("profile", sorted(CAPTURED_LGIP_GIB))
def test_no_slice_is_sized_above_a_captured_lgip_figure(gid: str, profile: str) -> None:
    """A driver that gives the slice less memory exists (525.125.06): the engine's total there is the smaller
    figure, so the catalogue must not promise the larger one (the SXM5 capture alone gave 1g.10gb 9,984 MiB)."""
    mp = cat._cat().mig[gid][profile]
    for gib in CAPTURED_LGIP_GIB[profile]:
        # nvidia-smi prints 2 decimals: the slice is at most the printed figure plus half a hundredth
        assert mp.memory_bytes <= (gib + 0.005) * cat.GIB, (gid, profile, mp.memory_bytes / cat.GIB, gib)


def test_the_full_slice_stays_within_the_boards_nvml_total() -> None:
    h100 = lookup("h100")
    assert h100 is not None
    full = cat._cat().mig[h100.id]["7g.80gb"].memory_bytes
    assert full < cat.nvml_total_mib(h100) * cat.MIB


def test_a_pod_on_a_1g10gb_slice_is_planned_on_the_measured_slice() -> None:
    pod = {
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.10gb": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h100-sxm5-80gb", p.how
    gib = min(_measured()["profiles"]["1g.10gb"])
    # the engine sees the slice, not the board: the placement's memory override
    assert p.memory_bytes_override == round(gib * 1024) * cat.MIB, p.how
