"""GPU feature discovery's ``mig.strategy=mixed`` labels (branch gpus55). Under the mixed strategy GFD labels each MIG
profile a node offers with the resource's name as prefix, ``nvidia.com/mig-1g.10gb.product:
NVIDIA-A100-SXM4-40GB-MIG-1g.10gb`` (and ``.memory``, ``.count`` ...: NVIDIA k8s-device-plugin
``internal/lm/resource.go``), and pods select them beside a ``nvidia.com/mig-1g.10gb`` resource. Before, kvlint read
none of them: a pod whose only GPU fact was such a label was not sized on its board (KV501, the fleet plan)."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{{resource}: 1}}}}
"""


def _placed(selector: str, resource: str) -> ContainerResult:
    res = run_documents(
        load_text(_POD.format(selector=selector, resource=resource), "p.yaml"), Options(allow_hub=False)
    )
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult) and cr.placement is not None
    return cr


@pytest.mark.parametrize(
    ("label_profile", "product", "resource_profile", "board"),
    [
        # the label's profile is the resource's (the GPU Operator's mixed-strategy example)
        ("1g.10gb", "NVIDIA-A100-SXM4-40GB-MIG-1g.10gb", "1g.10gb", "nvidia-a100-sxm4-40gb"),
        ("1g.10gb", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb", "1g.10gb", "nvidia-h100-sxm5-80gb"),
        # a node of several profiles: the label selects the node, the resource is the slice the container gets
        ("3g.40gb", "NVIDIA-A100-SXM4-80GB-MIG-3g.40gb", "1g.10gb", "nvidia-a100-sxm4-80gb"),
    ],
)
def test_a_mixed_strategy_product_label_names_the_board_and_the_resource_the_slice(
    label_profile: str, product: str, resource_profile: str, board: str
) -> None:
    cr = _placed(f"nvidia.com/mig-{label_profile}.product: {product}", f"nvidia.com/mig-{resource_profile}")
    p = cr.placement
    assert p is not None and p.accelerator is not None and p.accelerator.id == board
    prof, _ = cat.mig_profile(board, resource_profile)
    assert prof is not None
    assert p.mig_profile == resource_profile and p.memory_bytes == prof.memory_bytes
    assert cr.plan is not None and cr.plan.total_bytes == prof.memory_bytes
    assert f"nodeSelector nvidia.com/mig-{label_profile}.product={product}" in p.how
