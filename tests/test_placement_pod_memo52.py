"""A pod's scheduling read once for its containers (perf52's ``_PodScheduling``) gives each container the placement it
would get alone in its own pod: the memo holds only what the pod spec says (nodeSelector, required node affinity,
the label sets' MIG partition and sharing, the GPU they decide per site table), never a container's own GPU
resource (``nvidia.com/gpu`` / ``nvidia.com/mig-3g.40gb`` / ``nvidia.com/gpu.shared`` / ``amd.com/cpx_nps4``),
HAMi slice, image (a ROCm build narrows the fleet it is planned on) or engine.

Each case runs one pod of several differing containers, and each container again alone in a pod of the same
scheduling, and compares what the placement stage and the plan give it (positions left out: the lines differ).
The pod specs are loaded from YAML (:class:`~kvlint.source.LDict`, which the memo keeps; a plain dict is not)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from kvlint.accelerators import placement as pl
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_HEAD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
{scheduling}
  containers:
"""

_CUDA = "vllm/vllm-openai:v0.11.0"
_ROCM = "rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521"
_SGLANG = "lmsysorg/sglang:v0.5.5"


def _container(name: str, image: str, resources: str, port: int) -> str:
    if image.startswith("lmsysorg/sglang"):
        command = (
            "[python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-0.5B-Instruct, --port, "
            f"'{port}', --context-length, '4096']"
        )
    else:
        command = f"[vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --port, '{port}', --max-model-len, '4096']"
    return f"  - name: {name}\n    image: {image}\n    command: {command}\n    resources: {resources}\n"


def _affinity(*terms: str) -> str:
    return (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:" + "".join(f"\n        - matchExpressions: [{t}]" for t in terms)
    )


def _seen(cr: ContainerResult) -> tuple[Any, ...]:
    """What the placement and plan stages give a container, without positions."""
    p = cr.placement
    assert p is not None
    return (
        p.accelerator.id if p.accelerator else None,
        p.how,
        p.resource,
        p.gpus,
        p.shared,
        p.max_sharers,
        p.memory_bytes_override,
        p.memory_bytes,
        p.mig_profile,
        tuple(a.id for a in p.candidates),
        p.gpu_slice is not None,
        p.gpus_elsewhere,
        p.undecided,
        cr.plan.total_bytes if cr.plan is not None else None,
        tuple((f.accelerator.id, f.gpus, f.verdict, f.mig_profile) for f in cr.fleet),
    )


def _by_name(text: str) -> dict[str, ContainerResult]:
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV503"], result.diagnostics
    return {cr.container_name: cr for cr in result.containers if isinstance(cr, ContainerResult)}


_NVIDIA = [
    ("whole", _CUDA, "{limits: {nvidia.com/gpu: 1}}"),
    ("mig", _CUDA, "{limits: {nvidia.com/mig-3g.40gb: 1}}"),
    ("shared", _CUDA, "{limits: {nvidia.com/gpu.shared: 1}}"),
    ("hami", _CUDA, "{limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 20000}}"),
    ("sglang", _SGLANG, "{limits: {nvidia.com/gpu: 1}}"),
]
_AMD = [
    ("whole", _ROCM, "{limits: {amd.com/gpu: 1}}"),
    ("cpx", _ROCM, "{limits: {amd.com/cpx_nps4: 1}}"),
    ("cuda", _CUDA, "{limits: {nvidia.com/gpu: 1}}"),
]
_UNDECIDED = [
    ("cuda", _CUDA, "{limits: {nvidia.com/gpu: 1}}"),
    ("rocm", _ROCM, "{limits: {amd.com/gpu: 1}}"),
    ("rocmcpx", _ROCM, "{limits: {amd.com/cpx_nps4: 1}}"),
    ("mig", _CUDA, "{limits: {nvidia.com/mig-3g.40gb: 1}}"),
    ("sglang", _SGLANG, "{limits: {nvidia.com/gpu: 1}}"),
]

CASES = {
    # a GPU named by the nodeSelector and narrowed by a term
    "a100-selector-and-term": (
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
        + _affinity("{key: kubernetes.io/arch, operator: In, values: [amd64]}"),
        _NVIDIA,
    ),
    # GKE: the accelerator, a MIG partition and time-sharing in the pod's labels
    "gke-partition-sharing": (
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-a100-80gb, "
        "cloud.google.com/gke-gpu-partition-size: 3g.40gb}\n"
        + _affinity(
            "{key: cloud.google.com/gke-gpu-sharing-strategy, operator: In, values: [time-sharing]}, "
            "{key: cloud.google.com/gke-max-shared-clients-per-gpu, operator: In, values: ['2']}"
        ),
        _NVIDIA,
    ),
    # terms OR'ed naming several GPUs (the smallest decides, the others are candidates)
    "terms-several-gpus": (
        _affinity(
            "{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}",
            "{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L4]}",
        ),
        _NVIDIA,
    ),
    # an AMD board and its compute partition label; an amd.com/cpx_nps4 resource names its own partition
    "amd-mi300x-partition": (
        "  nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X}\n"
        + _affinity("{key: amd.com/compute-memory-partition, operator: In, values: [dpx_nps1]}"),
        _AMD,
    ),
    # scheduling that names no GPU: each container is planned on the fleet its image and resource allow
    "undecided-fleet": (
        "  nodeSelector: {kubernetes.io/os: linux}\n"
        + _affinity("{key: kubernetes.io/arch, operator: In, values: [amd64]}"),
        _UNDECIDED,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_container_of_a_pod_is_placed_as_it_would_be_alone(case: str) -> None:
    scheduling, containers = CASES[case]
    head = _HEAD.format(scheduling=scheduling)
    together = _by_name(
        head + "".join(_container(n, image, res, 8000 + i) for i, (n, image, res) in enumerate(containers))
    )
    assert sorted(together) == sorted(n for n, _, _ in containers)
    for i, (name, image, res) in enumerate(containers):
        (alone,) = _by_name(head + _container(name, image, res, 8000 + i)).values()
        assert _seen(together[name]) == _seen(alone), name
    # the containers do differ (the comparison above would not see a shared answer otherwise)
    assert len({_seen(cr) for cr in together.values()}) > 1


def test_the_pod_memo_holds_nothing_once_the_pod_spec_is_gone() -> None:
    """The memo goes with the pod spec (a weak reference): while the run's documents live it holds the pod's
    entry, and once they are gone nothing of them (a webhook worker checks review after review). KV005's own
    one-entry cache (``parse._POD_WIDE_LAST``) keeps the last pod spec walked until the next one; emptied here
    (not with monkeypatch, which would keep the spec to put it back)."""
    import weakref

    from kvlint.rules.families import parse

    memo = _memo_of(pl._pod_scheduling)
    scheduling, containers = CASES["gke-partition-sharing"]
    text = _HEAD.format(scheduling=scheduling) + "".join(
        _container(n, image, res, 8000 + i) for i, (n, image, res) in enumerate(containers)
    )
    parse._POD_WIDE_LAST = None  # (a cache: None is its empty state)
    gc.collect()
    before = len(memo)
    loaded = load_text(text, "p.yaml")
    spec = weakref.ref(loaded.documents[0].data["spec"])
    result = run_documents(loaded, Options(allow_hub=False))
    assert len(result.containers) == len(containers)
    assert len(memo) == before + 1 and id(spec()) in memo
    del loaded, result
    parse._POD_WIDE_LAST = None  # (a cache: None is its empty state)
    gc.collect()
    assert spec() is None
    assert len(memo) == before


def _memo_of(function: Any) -> dict[Any, Any]:
    (memo,) = (
        c.cell_contents
        for c in function.__closure__ or ()
        if isinstance(c.cell_contents, dict)  # (the dict of ``_per_pod_spec``)
    )
    return memo
