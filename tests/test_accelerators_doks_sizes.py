"""DigitalOcean Kubernetes (DOKS) GPU nodes: ``node.kubernetes.io/instance-type`` is the Droplet size slug (the
cloud controller manager's ``InstanceType`` returns ``droplet.SizeSlug``), and DOKS's GPU worker-node page lists the
slugs of its GPU node pools (cited in the supplement): ``gpu-h100x8-640gb`` is 8 H100s. Before, such a nodeSelector
named no GPU (KV501 "not a GPU instance type in the catalogue") and KV410 had no count to compare the limit with."""

from __future__ import annotations

import re

import pytest

from kvlint.accelerators import registry as cat
from kvlint.accelerators import resolve_placement
from kvlint.accelerators.placement import node_gpu_capacity

SLUGS = [
    "gpu-h100x1-80gb",
    "gpu-h100x8-640gb",
    "gpu-l40sx1-48gb",
    "gpu-4000adax1-20gb",
    "gpu-6000adax1-48gb",
    "gpu-mi300x1-192gb",
    "gpu-mi300x8-1536gb",
]


@pytest.mark.parametrize("slug", SLUGS)
def test_each_slug_names_its_gpu_and_the_count_the_slug_spells(slug: str) -> None:
    it = cat.instance_type(slug)
    assert it is not None and it.provider == "digitalocean" and it.accelerator is not None
    assert "docs.digitalocean.com/products/kubernetes/details/supported-gpus" in it.source
    # the slug spells the count and the node's GB: <gpu>x<count>-<total GB>gb
    m = re.fullmatch(r"gpu-[a-z0-9]+?x(\d+)-(\d+)gb", slug)
    assert m is not None
    count, total_gb = int(m.group(1)), int(m.group(2))
    assert it.gpus == count
    # the catalogue GPU's memory is within 7% of the slug's size per GPU, read as GB or as GiB (the slugs mix them:
    # H100 80gb is 80 GB, MI300X 192gb is 192 GiB)
    per_gpu = total_gb / count
    have = it.accelerator.memory_bytes
    off = min(abs(have / 1e9 - per_gpu), abs(have / cat.GIB - per_gpu)) / per_gpu
    assert off < 0.07, (slug, it.accelerator.id, have / cat.GIB)


def test_a_pod_on_an_eight_gpu_droplet_asking_sixteen_never_schedules() -> None:
    pod = {
        "nodeSelector": {"node.kubernetes.io/instance-type": "gpu-h100x8-640gb"},
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 16}}}],
    }
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.accelerator.vendor == "nvidia", p.how
    cap = node_gpu_capacity(pod)
    assert cap is not None and cap.gpus == 8
