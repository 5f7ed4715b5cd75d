"""MIG slices of mig-parted's "H100 96GB / GH200 / H20" table are sized from an `nvidia-smi mig -lgip` capture.

The table had no measured memory, so each slice was sized from its profile name, X GB read as X * 10^9 bytes
(``_profile_memory``): 1g.12gb 11,444 MiB, 2g.24gb 22,888 MiB, 7g.96gb 91,552 MiB. A GH200 480GB (96 GB HBM3, the
NVML total the H20 shares) lists 11.00, 23.00 and 93.00 GiB (kf-cuanschutz/NVIDIA_Grace_Hopper_benchmarking_logs_):
the name overstated the 1g.12gb slice by 180 MiB and understated the others. The figures are read from the
supplement here, not restated."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import registry as cat

SUPPLEMENT = Path(cat.__file__).with_name("supplement.yaml")


def _measured() -> dict[str, Any]:
    data = yaml.safe_load(SUPPLEMENT.read_text(encoding="utf-8"))
    (row,) = [m for m in data["mig_measurements"] if m["table"].startswith("H100 96GB")]
    assert row["source"].startswith("github:") and "@" in row["source"]
    return dict(row)


@pytest.mark.parametrize("gid", ["nvidia-gh200-96gb", "nvidia-h20"])
def test_each_slice_is_the_measured_lgip_figure(gid: str) -> None:
    slices = cat._cat().mig[gid]
    # every profile of the table is measured, none sized from its name
    assert not [(p, mp.status) for p, mp in slices.items() if mp.status.startswith("approximate")]
    measured = _measured()
    for profile, gib in measured["profiles"].items():
        mp = slices[profile]
        assert mp.memory_bytes == round(float(gib) * 1024) * cat.MIB, (gid, profile)
        assert "mig -lgip" in mp.status and mp.source == measured["source"]


def test_the_name_overstated_the_smallest_slice() -> None:
    gib = float(_measured()["profiles"]["1g.12gb"])
    gb = int(re.match(r"\d+g\.(\d+)gb", "1g.12gb").group(1))  # type: ignore[union-attr]
    assert gib * 2**30 < gb * 10**9
    assert cat._cat().mig["nvidia-h20"]["1g.12gb"].memory_bytes < gb * 10**9
