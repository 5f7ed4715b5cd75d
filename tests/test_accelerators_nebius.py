"""Nebius Managed Kubernetes GPU nodes: ``node.kubernetes.io/instance-type`` is the Nebius Compute platform
(``gpu-h100-sxm``), as Nebius's own vLLM chart selects its GPU nodes by it, each paired with GFD's product label of
the same GPU (nebius/nebius-k8s-applications ``vllm/chart/values.yaml``, cited in the supplement). Before, such a
nodeSelector named no GPU ("not a GPU instance type in the catalogue", KV501). The platform does not say how many
GPUs a node has (the preset does): no count, so KV410 does not read one."""

from __future__ import annotations

import pytest

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import node_gpu_capacity

#: The chart's pairs: platform -> the GFD product value the same affinity offers as its alternative (L40S: none).
CHART_PAIRS = {
    "gpu-h100-sxm": "NVIDIA-H100-80GB-HBM3",
    "gpu-h200-sxm": "NVIDIA-H200",
    "gpu-b200-sxm": "NVIDIA-B200",
    "gpu-l40s-a": None,
    "gpu-l40s-d": None,
}


@pytest.mark.parametrize("platform", sorted(CHART_PAIRS))
def test_each_platform_names_the_gpu_the_chart_pairs_it_with(platform: str) -> None:
    it = cat.instance_type(platform)
    assert it is not None and it.provider == "nebius" and it.accelerator is not None
    assert it.gpus is None and "nebius/nebius-k8s-applications" in it.source
    gfd = CHART_PAIRS[platform]
    expected = cat.gfd_product(gfd)[0] if gfd else lookup("l40s")
    assert expected is not None and it.accelerator.id == expected.id


def test_a_nodeselector_on_a_platform_places_the_pod() -> None:
    pod = {
        "nodeSelector": {"node.kubernetes.io/instance-type": "gpu-h200-sxm"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 8}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h200-141gb", p.how
    assert node_gpu_capacity(pod) is None  # the preset, not the platform, gives the count
