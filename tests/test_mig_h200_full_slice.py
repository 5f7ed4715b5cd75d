"""The H200's 7g.141gb MIG slice is the `nvidia-smi mig -lgip` figure of NVIDIA/mig-parted#120 (139.75 GiB), the
capture the corpus reads for the H200's other slices but whose excerpt stopped before this row. Read as GB, the
profile name gave 134,468 MiB, 8.4 GiB below what the slice holds. The figure is read from the supplement here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvlint.accelerators import registry as cat

SUPPLEMENT = Path(cat.__file__).with_name("supplement.yaml")


def _measured_gib() -> float:
    data = yaml.safe_load(SUPPLEMENT.read_text(encoding="utf-8"))
    (row,) = [m for m in data["mig_measurements"] if m["table"] == "H200 141GB"]
    return float(row["profiles"]["7g.141gb"])


@pytest.mark.parametrize("gid", ["nvidia-h200-141gb", "nvidia-h200-nvl-141gb"])
def test_the_full_slice_is_measured(gid: str) -> None:
    slices = cat._cat().mig[gid]
    assert not [(p, mp.status) for p, mp in slices.items() if mp.status.startswith("approximate")]
    full = slices["7g.141gb"]
    assert full.memory_bytes == round(_measured_gib() * 1024) * cat.MIB
    assert "mig -lgip" in full.status and full.source == "https://github.com/NVIDIA/mig-parted/issues/120"
    # the largest slice holds more than the 4g.71gb one and no more than the board's NVML total
    assert slices["4g.71gb"].memory_bytes < full.memory_bytes
    assert full.memory_bytes < cat.nvml_total_mib(cat._cat().accelerators[gid]) * cat.MIB
