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


def test_the_mixed_memory_label_of_the_resources_profile_sizes_the_slice() -> None:
    """``nvidia.com/mig-<profile>.memory`` is the MIG device's memorySizeMB (``internal/lm/resource.go``), checked as
    the single strategy's ``nvidia.com/gpu.memory`` is: within 2% of the board's row it is taken; another profile's
    label says nothing of the container's slice."""
    board = "nvidia-a100-sxm4-80gb"
    prof, _ = cat.mig_profile(board, "3g.40gb")
    assert prof is not None
    label = prof.memory_bytes // 2**20 - 100  # within 2% of the row: NVML's own figure on this node
    selector = f"nvidia.com/mig-3g.40gb.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb, nvidia.com/mig-3g.40gb.memory: '{label}'"
    p = _placed(selector, "nvidia.com/mig-3g.40gb").placement
    assert p is not None and p.memory_bytes == label * 2**20 and p.mig_profile == "3g.40gb"
    assert f"{label} MiB from nvidia.com/mig-3g.40gb.memory" in p.how
    other, _ = cat.mig_profile(board, "1g.10gb")
    assert other is not None
    q = _placed(selector, "nvidia.com/mig-1g.10gb").placement
    assert q is not None and q.memory_bytes == other.memory_bytes and q.mig_profile == "1g.10gb"


def _hostile_selector(n: int) -> dict[str, str]:
    selector: dict[str, str] = {}
    for i in range(n):
        selector[f"nvidia.com/mig-{i}g.{i}gb.product"] = "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"
        selector[f"nvidia.com/mig-{i}g.{i}gb.memory"] = "4864"
    selector["nvidia.com/mig-1g.5gb.product"] = "NVIDIA-A100-SXM4-40GB-" + "X" * 100_000
    return selector


def _calls_made(selector: dict[str, str], container: dict[str, object]) -> int:
    """Python and C function calls made by one ``resolve_placement``: a count, not a time, so a loaded machine
    does not move it."""
    import sys

    from kvlint.accelerators.placement import resolve_placement

    resolve_placement({"nodeSelector": selector}, container, {})  # warm: lazy imports and the catalogue
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        resolve_placement({"nodeSelector": selector}, container, {})
    finally:
        sys.setprofile(None)
    return calls


def test_many_mixed_labels_are_read_in_linear_time() -> None:
    """A hostile pod of thousands of ``nvidia.com/mig-<profile>.product`` and as many ``.memory`` labels: each
    product label reads the memory labels once for all (not once each: quadratic), and an overlong product value
    is not read. Doubling the labels at most about doubles the calls made (quadratic work would quadruple them)."""
    from kvlint.accelerators.placement import resolve_placement

    container = {"resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}
    small, large = (
        _calls_made(_hostile_selector(1_000), container),
        _calls_made(_hostile_selector(2_000), container),
    )
    assert large < 2.5 * small, (small, large)
    p = resolve_placement({"nodeSelector": _hostile_selector(10_000)}, container, {})
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a100-sxm4-40gb"
