"""The H200 NVL's memory is the H200's: nvidia-smi on H200 NVL boards prints the H200 SXM's NVML total (143,771 MiB,
cited in the supplement), so its CUDA total is derived with the H200's observed reserve. The corpus had no NVML or
CUDA figure and sized the board from its marketing 141 GB read as 141 GiB less the typical reserve (140.52 GiB), above
the SXM board's deviceQuery total; and GFD's ``NVIDIA-H200-NVL`` named no GPU. Figures are read from the catalogue's
sources here, not restated."""

from __future__ import annotations

from pathlib import Path

import yaml

from kvlint.accelerators import registry as cat
from kvlint.accelerators import resolve_placement

SUPPLEMENT = Path(cat.__file__).with_name("supplement.yaml")


def _supplement_entry() -> dict:
    data = yaml.safe_load(SUPPLEMENT.read_text(encoding="utf-8"))
    (row,) = [g for g in data["gpus"] if g["id"] == "nvidia-h200-nvl-141gb"]
    return dict(row)


def test_the_nvl_board_is_no_larger_than_the_sxm_board_it_shares_its_memory_with() -> None:
    nvl, sxm = cat.lookup("nvidia-h200-nvl-141gb"), cat.lookup("nvidia-h200-141gb")
    assert nvl is not None and sxm is not None
    assert sxm.memory_source.startswith("measured")
    assert nvl.memory_bytes <= sxm.memory_bytes, (nvl.memory_bytes / cat.GIB, sxm.memory_bytes / cat.GIB)
    assert not nvl.memory_source.startswith("approximate"), nvl.memory_source


def test_the_total_is_the_captured_nvml_total_less_the_twins_reserve() -> None:
    row = _supplement_entry()
    nvml = int(row["nvidia_smi_total_mib"]["value"])
    assert (
        row["nvidia_smi_total_mib"]["source"].startswith("github:")
        and "@" in row["nvidia_smi_total_mib"]["source"]
    )
    sxm = cat.lookup("nvidia-h200-141gb")
    assert sxm is not None and cat.nvml_total_mib(sxm) == nvml  # the same NVML total: a memory twin
    nvl = cat.lookup("nvidia-h200-nvl-141gb")
    assert nvl is not None
    reserve_mib = nvml - sxm.memory_bytes / cat.MIB
    assert nvl.memory_bytes == (nvml - reserve_mib) * cat.MIB


def test_gfd_names_the_board() -> None:
    pod = {
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200-NVL"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h200-nvl-141gb", p.how
