"""What a catalogue note marks [assumed] is quoted to the user beside the board (branch gpus55's
``registry.assumption``): it must be true of the catalogue it comes from. DigitalOcean's ``h100`` (and the Droplet
size ``gpu-h100x1-80gb``) were said to be the SXM5 board because "the PCIe board's catalogue figure is larger", while
the catalogue holds the H100 PCIe 80GB with less memory than the SXM5 (review55C)."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import resolve_placement
from kvlint.load import load_text


@pytest.mark.parametrize(
    "selector", ["doks.digitalocean.com/gpu-model: h100", "node.kubernetes.io/instance-type: gpu-h100x1-80gb"]
)
def test_the_assumed_board_note_agrees_with_the_catalogue(selector: str) -> None:
    spec = (
        load_text(
            f"kind: Pod\nspec:\n  nodeSelector: {{{selector}}}\n  containers:\n  - name: a\n"
            "    resources: {limits: {nvidia.com/gpu: 1}}\n",
            "p.yaml",
        )
        .documents[0]
        .data["spec"]
    )
    p = resolve_placement(spec, spec["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h100-sxm5-80gb" and p.assumed
    pcie, sxm5 = cat.require("nvidia-h100-pcie-80gb"), cat.require("nvidia-h100-sxm5-80gb")
    said = p.assumed.lower()
    if "pcie board's catalogue figure is larger" in said or "conservative" in said:
        assert pcie.memory_bytes > sxm5.memory_bytes, p.assumed
