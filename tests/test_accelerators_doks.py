"""DigitalOcean Kubernetes' GPU node label, ``doks.digitalocean.com/gpu-model`` (docs.digitalocean.com/products/
kubernetes/details/managed/, "Automatic Application of Labels and Taints to Nodes": ``h100`` on NVIDIA H100 nodes,
``mi300x`` on AMD MI300X nodes, beside ``doks.digitalocean.com/gpu-brand``). A pod pinned to a DOKS GPU pool with
it named no GPU kvlint knew (KV501)."""

from __future__ import annotations

import pytest

from kvlint.accelerators import resolve_placement
from kvlint.accelerators.registry import doks_gpu_model


@pytest.mark.parametrize(
    ("value", "vendor", "name_has"),
    [("h100", "nvidia", "H100"), ("mi300x", "amd", "MI300X"), ("H100", "nvidia", "H100")],
)
def test_the_documented_values_name_their_gpu(value: str, vendor: str, name_has: str) -> None:
    p = resolve_placement(
        {
            "nodeSelector": {
                "doks.digitalocean.com/gpu-brand": vendor,
                "doks.digitalocean.com/gpu-model": value,
            }
        },
        {"resources": {"limits": {f"{vendor}.com/gpu" if vendor == "amd" else "nvidia.com/gpu": 1}}},
        {},
    )
    assert p.accelerator is not None and p.accelerator.vendor == vendor and name_has in p.accelerator.name
    assert "doks.digitalocean.com/gpu-model" in p.how


def test_a_value_the_page_does_not_list_is_not_read() -> None:
    assert doks_gpu_model("rtx-9999") == (None, "", False)
    p = resolve_placement({"nodeSelector": {"doks.digitalocean.com/gpu-model": "rtx-9999"}}, {}, {})
    assert p.accelerator is None


def test_gfd_product_is_more_specific_than_the_doks_model() -> None:
    """GPU Feature Discovery's product label, when a node has both, names the board exactly (it comes first)."""
    p = resolve_placement(
        {
            "nodeSelector": {
                "doks.digitalocean.com/gpu-model": "h100",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            }
        },
        {},
        {},
    )
    assert p.accelerator is not None and "nvidia.com/gpu.product" in p.how
