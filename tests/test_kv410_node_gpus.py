"""KV410: a pod asking more GPUs than any node its required scheduling allows has never schedules.

A node offers as many ``nvidia.com/gpu`` as it has GPUs (without time-slicing/MPS replicas), and the scheduler's
NodeResourcesFit filter fits a pod by the sum of its containers' requests: a pod pinned to ``p4d.24xlarge`` (8 A100s)
asking 16 stays Pending ("Insufficient nvidia.com/gpu"). The node's count is read from the catalogue's instance-type
row (not restated here), GFD's ``nvidia.com/gpu.count`` or Karpenter's ``instance-gpu-count``."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import node_gpu_capacity
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import Diagnostic

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
{scheduling}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --tensor-parallel-size, "{tp}"]
    resources: {{limits: {{{resource}: {gpus}}}}}
{more}"""

_SECOND = """\
  - name: b
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --port, "8001", --tensor-parallel-size, "{tp}"]
    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def _kv410(scheduling: str, gpus: int, resource: str = "nvidia.com/gpu", second: int = 0) -> list[Diagnostic]:
    more = _SECOND.format(tp=second, gpus=second) if second else ""
    text = _POD.format(scheduling=scheduling, tp=gpus, gpus=gpus, resource=resource, more=more)
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule == "KV410"]


P4D = "  nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}"


def test_more_gpus_than_the_pinned_instance_type_has_is_an_error() -> None:
    it = cat.instance_type("p4d.24xlarge")
    assert it is not None and it.gpus is not None
    (d,) = _kv410(P4D, 2 * it.gpus)
    assert d.severity == "error"
    assert f"nvidia.com/gpu: {2 * it.gpus}" in d.message and f"a node has {it.gpus} GPUs" in d.message
    assert "p4d.24xlarge" in d.message and "Insufficient nvidia.com/gpu" in d.message
    assert it.source in d.message
    assert f"ask at most {it.gpus} nvidia.com/gpu" in (d.fix or "")


def test_as_many_as_the_node_has_is_not_reported() -> None:
    it = cat.instance_type("p4d.24xlarge")
    assert it is not None and it.gpus is not None
    assert _kv410(P4D, it.gpus) == []


def test_the_fix_names_an_instance_type_of_the_same_gpu_with_enough() -> None:
    small, big = cat.instance_type("a2-highgpu-8g"), cat.instance_type("a2-megagpu-16g")
    assert small is not None and big is not None and big.gpus is not None and small.gpus is not None
    assert small.accelerator == big.accelerator and big.gpus > small.gpus
    (d,) = _kv410("  nodeSelector: {node.kubernetes.io/instance-type: a2-highgpu-8g}", big.gpus)
    assert "a2-megagpu-16g" in (d.fix or "")
    assert _kv410("  nodeSelector: {node.kubernetes.io/instance-type: a2-megagpu-16g}", big.gpus) == []


def test_the_containers_of_a_pod_add_up_and_are_reported_once() -> None:
    """4 + 2 on a node of 4 GPUs: each fits alone, the pod does not; said once, of the pod, at its first serving
    container."""
    (d,) = _kv410("  nodeSelector: {nvidia.com/gpu.count: '4'}", 4, second=2)
    assert "6 nvidia.com/gpu together (a: 4, b: 2)" in d.message and d.container == "a"
    assert _kv410("  nodeSelector: {nvidia.com/gpu.count: '6'}", 4, second=2) == []


_G5_12X = "  nodeSelector: {node.kubernetes.io/instance-type: g5.12xlarge}"
_VLLM = """\
  - name: {name}
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --tensor-parallel-size, "{gpus}"]
{extra}    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""
# a container kvlint does not size (no vLLM/TGI/SGLang command) asking GPUs too
_OTHER = """\
  - name: {name}
    image: ghcr.io/huggingface/text-embeddings-inference:1.5
{extra}    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""


def _pod_kv410(containers: str, init: str = "") -> list[Diagnostic]:
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{_G5_12X}\n  containers:\n{containers}"
    if init:
        text += f"  initContainers:\n{init}"
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule == "KV410"]


def test_the_pods_sum_is_reported_whichever_container_is_written_last() -> None:
    """g5.12xlarge (4 GPUs): a vLLM container asking 4 and another container asking 1 make 5, in either order (the
    running sum crossed the node's count at the container kvlint does not size, so vLLM-first said nothing)."""
    it = cat.instance_type("g5.12xlarge")
    assert it is not None and it.gpus == 4
    vllm, other = _VLLM.format(name="a", gpus=4, extra=""), _OTHER.format(name="b", gpus=1, extra="")
    for containers in (vllm + other, other + vllm):
        (d,) = _pod_kv410(containers)
        assert "ask 5 nvidia.com/gpu together" in d.message and d.container == "a"


def test_a_sidecar_init_containers_gpus_add_to_the_pods() -> None:
    """A sidecar (restartPolicy: Always) keeps running beside the app containers: its request adds (Kubernetes
    AggregateContainerRequests); an engine run as one is sized by kvlint, and the pod's sum is said once."""
    sidecar = _VLLM.format(name="s", gpus=4, extra="    restartPolicy: Always\n")
    (d,) = _pod_kv410(_VLLM.format(name="a", gpus=1, extra=""), init=sidecar)
    assert "ask 5 nvidia.com/gpu together (a: 1, sidecar s: 4)" in d.message


def test_an_init_container_counts_by_itself_while_it_runs() -> None:
    """A regular init container runs before the app containers: the pod needs the larger of the two, not the sum."""
    assert (
        _pod_kv410(_VLLM.format(name="a", gpus=4, extra=""), init=_OTHER.format(name="i", gpus=4, extra=""))
        == []
    )
    (d,) = _pod_kv410(
        _VLLM.format(name="a", gpus=2, extra=""), init=_OTHER.format(name="i", gpus=8, extra="")
    )
    assert "the pod asks 8 nvidia.com/gpu while its init container i runs" in d.message
    # a sidecar started before it keeps its GPUs while the init container runs: 2 + 3 on a node of 4
    sidecar = _OTHER.format(name="s", gpus=2, extra="    restartPolicy: Always\n")
    (d,) = _pod_kv410(
        _VLLM.format(name="a", gpus=1, extra=""), init=sidecar + _OTHER.format(name="i", gpus=3, extra="")
    )
    assert (
        "the pod asks 5 nvidia.com/gpu while its init container i runs (i: 3, plus 2 of the sidecars"
        in d.message
    )


def test_an_init_containers_peak_is_pointed_at_on_the_init_container() -> None:
    """When a regular init container's request is the pod's peak, the finding is written where that init container
    asks its GPUs, not at the first app container's limit (which fits the node by itself)."""
    text = (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{_G5_12X}\n  containers:\n"
        + _VLLM.format(name="a", gpus=2, extra="")
        + "  initContainers:\n"
        + _OTHER.format(name="i", gpus=8, extra="")
    )
    init_line = next(n for n, line in enumerate(text.splitlines(), 1) if "nvidia.com/gpu: 8" in line)
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV410"]
    assert "while its init container i runs" in d.message
    assert d.loc is not None and d.loc.line == init_line
    # with a sidecar started before it, the peak is still the init container's: pointed at it
    sidecar = _OTHER.format(name="s", gpus=2, extra="    restartPolicy: Always\n")
    text2 = text.replace("  initContainers:\n", "  initContainers:\n" + sidecar)
    init_line2 = next(n for n, line in enumerate(text2.splitlines(), 1) if "nvidia.com/gpu: 8" in line)
    result = run_documents(load_text(text2, "p.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV410"]
    assert d.loc is not None and d.loc.line == init_line2


def test_a_container_over_the_count_by_itself_is_reported_on_it_only() -> None:
    """8 + 1 on a node of 4: the container asking 8 is the error; the pod's sum is not said again."""
    (d,) = _pod_kv410(_VLLM.format(name="a", gpus=1, extra="") + _VLLM.format(name="b", gpus=8, extra=""))
    assert d.container == "b" and "GPU limit nvidia.com/gpu: 8" in d.message


def test_a_shared_gpu_resource_is_not_counted_as_the_nodes_gpus() -> None:
    """Time-slicing with renamed resources: replicas, not GPUs, are what the node offers."""
    assert _kv410(P4D, 16, resource="nvidia.com/gpu.shared") == []


@pytest.mark.parametrize(
    ("affinity", "bound"),
    [
        # every term pins an instance type: the largest of them
        ("[{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g5.12xlarge]}]", 4),
        # Karpenter's count below a bound
        ("[{key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ['5']}]", 4),
        # a count the term does not bound: none
        ("[{key: karpenter.k8s.aws/instance-gpu-count, operator: Gt, values: ['1']}]", None),
        # an instance type not in the catalogue: none
        ("[{key: node.kubernetes.io/instance-type, operator: In, values: [x9.huge]}]", None),
    ],
)
def test_required_affinity_bounds_the_count(affinity: str, bound: int | None) -> None:
    import yaml

    spec = yaml.safe_load(
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        f"{{nodeSelectorTerms: [{{matchExpressions: {affinity}}}]}}}}}}"
    )
    got = node_gpu_capacity(spec)
    assert (got.gpus if got else None) == bound
    if bound == 4 and "instance-type" in affinity:
        g5 = cat.instance_type("g5.12xlarge")
        assert g5 is not None and g5.gpus == bound


def test_an_unbounded_term_leaves_the_count_open() -> None:
    """Terms OR: a second term without a count lets the pod land on any node."""
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "node.kubernetes.io/instance-type",
                                    "operator": "In",
                                    "values": ["p4d.24xlarge"],
                                }
                            ]
                        },
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}
                            ]
                        },
                    ]
                }
            }
        }
    }
    assert node_gpu_capacity(spec) is None


def test_kv501_says_a_count_label_counts_but_does_not_name_the_gpu() -> None:
    """The count labels are read (for KV410), so KV501 does not call them labels kvlint does not read."""
    text = _POD.format(
        scheduling="  nodeSelector: {nvidia.com/gpu.count: '4'}",
        tp=1,
        gpus=1,
        resource="nvidia.com/gpu",
        more="",
    )
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert "nvidia.com/gpu.count=4 counts the node's GPUs but does not name them" in d.message
    assert "not one kvlint reads" not in d.message


def test_gfd_counts_nvidia_gpus_not_an_amd_limit() -> None:
    """GFD labels NVIDIA nodes: its count bounds nvidia.com/gpu, not amd.com/gpu (in affinity as in nodeSelector)."""
    affinity = (
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: nvidia.com/gpu.count, operator: In, values: ['2']}]}]}}}"
    )
    assert _kv410(affinity, 4, resource="amd.com/gpu") == []
    (d,) = _kv410(affinity, 4)
    assert "a node has at most 2 GPUs" in d.message


@pytest.mark.parametrize(
    "selector",
    [
        "karpenter.k8s.aws/instance-gpu-count: '0'",  # Karpenter's count on g6f (a fractional L4)
        "nvidia.com/gpu.count: 'x'",
    ],
)
def test_a_count_that_is_not_a_positive_number_bounds_nothing(selector: str) -> None:
    assert _kv410(f"  nodeSelector: {{{selector}}}", 1) == []


def test_each_count_label_cites_its_own_source() -> None:
    from kvlint.accelerators.placement import EKS_LABELS_SOURCE, KARPENTER_LABELS_SOURCE

    karpenter = node_gpu_capacity({"nodeSelector": {"karpenter.k8s.aws/instance-gpu-count": "4"}})
    eks = node_gpu_capacity({"nodeSelector": {"eks.amazonaws.com/instance-gpu-count": "4"}})
    assert karpenter is not None and karpenter.source == KARPENTER_LABELS_SOURCE
    assert eks is not None and eks.source == EKS_LABELS_SOURCE


@pytest.mark.parametrize(
    "selector",
    [
        # mig.strategy=single: GFD's product names the slice and nvidia.com/gpu counts MIG devices (7 per A100)
        "node.kubernetes.io/instance-type: p4d.24xlarge, nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
        # GKE: a partitioned node offers one nvidia.com/gpu per partition
        "node.kubernetes.io/instance-type: a2-highgpu-8g, cloud.google.com/gke-gpu-partition-size: 1g.5gb",
        # GFD's own label of the single strategy, without the product
        "node.kubernetes.io/instance-type: p4d.24xlarge, nvidia.com/mig.strategy: single",
    ],
)
def test_mig_devices_are_not_counted_as_the_nodes_gpus(selector: str) -> None:
    it = cat.instance_type("p4d.24xlarge")
    assert it is not None and it.gpus is not None
    assert _kv410(f"  nodeSelector: {{{selector}}}", it.gpus + 4) == []


def test_a_pods_node_affinity_is_read_once_not_once_per_container(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each container of a pod read the pod's required node affinity again, three times (its placement, and KV410's
    node GPU count twice): a pod of 40 containers with 2,000 ``nodeSelectorTerms`` (190 KB, well within a webhook
    review) took 6.5 s of CPU, growing as containers x terms. The terms are now read once per pod spec (memoised
    while the spec lives); counted here by the terms KV410 bounds, not by time."""
    import gc

    from kvlint.accelerators import placement as pl

    counted: list[int] = []
    term_capacity = pl._term_capacity

    def counting(exprs: list[pl._Expr]) -> pl.NodeGpus | None:
        counted.append(1)
        return term_capacity(exprs)

    monkeypatch.setattr(pl, "_term_capacity", counting)
    terms = "".join(
        f"\n        - matchExpressions: [{{key: nvidia.com/gpu.count, operator: In, values: ['{i % 8 + 1}']}}]"
        for i in range(7)
    )
    scheduling = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:" + terms
    )
    containers = "".join(
        f"  - name: c{i}\n    image: vllm/vllm-openai:v0.11.0\n"
        f"    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --port, '{8001 + i}']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
        for i in range(5)
    )
    text = _POD.format(scheduling=scheduling, tp=1, gpus=1, resource="nvidia.com/gpu", more=containers)
    loaded = load_text(text, "p.yaml")
    result = run_documents(loaded, Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV410"]  # 6 GPUs asked, a node has up to 8
    assert len(counted) == 7  # each term once, for the pod's six containers together
    # the memo holds nothing of a pod once its spec is gone (a webhook worker keeps nothing of a review)
    spec = load_text(text, "p.yaml").documents[0].data["spec"]
    memo = [
        c.cell_contents for c in pl.node_gpu_capacity.__closure__ or () if isinstance(c.cell_contents, dict)
    ]
    assert len(memo) == 1
    gc.collect()  # specs of earlier tests that only a collection frees leave the memo first
    before = len(memo[0])
    assert pl.node_gpu_capacity(spec) is pl.node_gpu_capacity(spec) is not None
    assert len(memo[0]) == before + 1
    del spec
    gc.collect()
    assert len(memo[0]) == before


def test_a_pods_affinity_terms_are_evaluated_once_for_its_containers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read once per pod spec (above), the terms were still evaluated for each container's placement (the GPU each
    term allows, the label sets' sharing and MIG partition): a pod of 40 containers with 2,000 terms evaluated
    80,000 (1.4 s of CPU). Now once per pod spec; counted by the terms evaluated, not by time, and every
    container's placement is what evaluating the terms for it alone gives."""
    from kvlint.accelerators import placement as pl

    counted: list[int] = []
    eval_term = pl._eval_term

    def counting(*args: object, **kwargs: object) -> object:
        counted.append(1)
        return eval_term(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pl, "_eval_term", counting)
    products = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "NVIDIA-L4"]
    terms = "".join(
        f"\n        - matchExpressions: [{{key: nvidia.com/gpu.product, operator: In, values: ['{products[i % 3]}']}}]"
        for i in range(7)
    )
    scheduling = (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:" + terms
    )
    containers = "".join(
        f"  - name: c{i}\n    image: vllm/vllm-openai:v0.11.0\n"
        f"    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --port, '{8001 + i}']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
        for i in range(5)
    )
    text = _POD.format(scheduling=scheduling, tp=1, gpus=1, resource="nvidia.com/gpu", more=containers)
    doc = load_text(text, "p.yaml").documents[0]
    spec = doc.data["spec"]
    placements = [pl.resolve_placement(spec, c, {}) for c in spec["containers"]]
    assert len(counted) == 7  # each term once, for the pod's six containers together
    first = placements[0].accelerator
    assert first is not None and first.id == "nvidia-l4"  # the smallest of the three the terms name
    # a plain dict is not memoised: each container evaluates the terms, and gets the same placement
    fresh = [pl.resolve_placement(dict(spec), c, {}) for c in spec["containers"]]
    assert len(counted) == 7 + 6 * 7
    assert placements == fresh
    result = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV503"]


def test_the_mixed_mig_strategy_leaves_nvidia_gpu_whole_gpus() -> None:
    """Under GFD's mixed strategy MIG devices are ``nvidia.com/mig-<profile>``: ``nvidia.com/gpu`` stays whole GPUs,
    so the instance type still bounds it."""
    it = cat.instance_type("p4d.24xlarge")
    assert it is not None and it.gpus is not None
    selector = "node.kubernetes.io/instance-type: p4d.24xlarge, nvidia.com/mig.strategy: mixed"
    (d,) = _kv410(f"  nodeSelector: {{{selector}}}", it.gpus + 4)
    assert f"a node has {it.gpus} GPUs" in d.message


@pytest.mark.parametrize(
    "label",
    [
        "amd.com/compute-memory-partition",  # the GPU Operator's node labeller, the device plugin's docs
        "amd.com/gpu.compute-memory-partition",  # ROCm/k8s-device-plugin's own node labeller (amd.com/gpu.<name>)
    ],
)
def test_amd_partitions_are_not_counted_as_the_nodes_gpus(label: str) -> None:
    """The AMD device plugin's default single naming offers each CPX partition as amd.com/gpu (8 per MI300X): a pod
    selecting a partitioned node is not bounded by the instance type's GPU count; an SPX (whole-GPU) node is. The
    node labellers spell the label two ways; either selects partitioned nodes."""
    it = cat.instance_type("BM.GPU.MI300X.8")
    assert it is not None and it.gpus is not None
    node = "node.kubernetes.io/instance-type: BM.GPU.MI300X.8"
    cpx = f"  nodeSelector: {{{node}, {label}: cpx_nps4}}"
    assert _kv410(cpx, 2 * it.gpus, resource="amd.com/gpu") == []
    (d,) = _kv410(cpx, it.gpus * 8 + 8, resource="amd.com/gpu")
    assert f"a node has {it.gpus * 8} partitions" in d.message
    spx = f"  nodeSelector: {{{node}, {label}: spx_nps1}}"
    (d,) = _kv410(spx, 2 * it.gpus, resource="amd.com/gpu")
    assert f"a node has {it.gpus} GPUs" in d.message


@pytest.mark.parametrize(
    ("resource", "selector"),
    [
        # the device plugin's mixed naming: the resource names the partition mode itself
        ("amd.com/cpx_nps4", ""),
        # its default single naming: amd.com/gpu on a node the partition label selects
        ("amd.com/gpu", ", amd.com/compute-memory-partition: cpx_nps4"),
    ],
)
def test_more_amd_partitions_than_the_nodes_gpus_hold_is_an_error(resource: str, selector: str) -> None:
    """An 8-GPU MI300X node split CPX offers 8 partitions a GPU (ROCm k8s-device-plugin: "A node which has 8 GPUs
    where all GPUs are partitioned using CPX-NPS4 style will report amd.com/gpu: 64"): a pod asking more than that
    never schedules; as many is not reported."""
    from kvlint.accelerators.placement import AMD_PARTITIONS

    it = cat.instance_type("BM.GPU.MI300X.8")
    assert it is not None and it.gpus is not None
    per_node = it.gpus * AMD_PARTITIONS["cpx"]
    scheduling = f"  nodeSelector: {{node.kubernetes.io/instance-type: BM.GPU.MI300X.8{selector}}}"
    (d,) = _kv410(scheduling, per_node + 16, resource=resource)
    # the single naming's label is written on nodes whose GPUs are all in one mode: the node has that many; a mixed
    # naming resource may be offered by some of a node's GPUs only (the others in another mode): at most that many
    has = (
        f"a node has {per_node} partitions" if resource == "amd.com/gpu" else f"a node has at most {per_node}"
    )
    assert f"{resource}: {per_node + 16}" in d.message and has in d.message
    assert f"Insufficient {resource}" in d.message and "8 CPX partitions" in d.message
    assert f"ask at most {per_node} {resource}" in (d.fix or "")
    assert _kv410(scheduling, per_node, resource=resource) == []


def test_amd_partitions_in_one_affinity_term_only_leave_the_count_open() -> None:
    """The single naming's partition label in one term of several: the other term's nodes may have whole GPUs, and
    the node's partitions are not bounded from the nodeSelector alone."""
    scheduling = """\
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: node.kubernetes.io/instance-type, operator: In, values: [BM.GPU.MI300X.8]}
          - {key: amd.com/compute-memory-partition, operator: In, values: [cpx_nps4]}"""
    assert _kv410(scheduling, 80, resource="amd.com/gpu") == []


def test_gkes_accelerator_count_bounds_the_pods_gpus() -> None:
    """GKE's ``cloud.google.com/gke-accelerator-count`` is "the total number of GPUs available to attach to the node"
    (GKE's "Deploy GPU workloads in Autopilot"): a pod asking more than it stays Pending."""
    from kvlint.accelerators.placement import GKE_COUNT_SOURCE

    sel = '  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4, cloud.google.com/gke-accelerator-count: "4"}'
    (d,) = _kv410(sel, 8)
    assert (
        "cloud.google.com/gke-accelerator-count=4" in d.message and "a node has at most 4 GPUs" in d.message
    )
    assert GKE_COUNT_SOURCE in d.message
    assert _kv410(sel, 4) == []
    assert _kv410(sel, 8, resource="amd.com/gpu") == []  # GKE's GPUs are NVIDIA's
