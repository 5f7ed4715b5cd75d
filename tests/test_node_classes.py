"""A pod that selects its nodes by a GKE ComputeClass (``nodeSelector: cloud.google.com/compute-class: NAME``) or
a Karpenter NodePool (``karpenter.sh/nodepool: NAME``) names no GPU itself; when the ComputeClass or NodePool is
among the inputs, kvlint takes the GPU from it, as the nodes it makes carry it: a ComputeClass's
``priorities[].gpu.type`` (GKE's ComputeClass CRD reference), a NodePool's ``requirements`` (``In``) and template
labels (Karpenter's "NodePools" docs). The pod's own node labels still come first. Made-up objects in the shapes
of the GKE and Karpenter documentation examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.cli import main
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult

_CLASS = """\
apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata: {name: llm-gpus}
spec:
  priorities:
  - machineFamily: a3
    gpu: {type: nvidia-h100-80gb, count: 1}
  - machineFamily: g2
    gpu: {type: nvidia-l4, count: 1}
  - machineFamily: g2
    spot: true
  nodePoolAutoCreation: {enabled: true}
"""
_NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [l40s]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
"""


def _pod(selector: str) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: llm}}
spec:
  selector: {{matchLabels: {{app: llm}}}}
  template:
    metadata: {{labels: {{app: llm}}}}
    spec:
      nodeSelector: {{{selector}}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _placement(tmp_path: Path, pod: str, *others: str) -> ContainerResult:
    files = []
    for i, text in enumerate((pod, *others)):
        f = tmp_path / f"{i}.yaml"
        f.write_text(text)
        files.append(str(f))
    (cr,) = [
        c for c in run_check(files, Options(allow_hub=False)).containers if isinstance(c, ContainerResult)
    ]
    return cr


def test_a_compute_class_among_the_inputs_names_the_gpu(tmp_path: Path) -> None:
    cr = _placement(tmp_path, _pod("cloud.google.com/compute-class: llm-gpus"), _CLASS)
    assert cr.placement is not None and cr.placement.accelerator is not None
    # its priorities fall back from H100 to L4: the smaller is the conservative choice, and it is said
    assert cr.placement.accelerator.id == "nvidia-l4"
    how = cr.placement.how
    assert (
        "nodeSelector cloud.google.com/compute-class=llm-gpus: the ComputeClass llm-gpus among the inputs"
        in how
    )
    assert "the smallest memory (conservative)" in how


def test_a_karpenter_nodepool_among_the_inputs_names_the_gpu(tmp_path: Path) -> None:
    cr = _placement(tmp_path, _pod("karpenter.sh/nodepool: gpu"), _NODEPOOL)
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l40s"
    assert "karpenter.k8s.aws/instance-gpu-name=l40s" in cr.placement.how


def test_the_pods_own_gpu_label_comes_first(tmp_path: Path) -> None:
    pod = _pod("karpenter.sh/nodepool: gpu, karpenter.k8s.aws/instance-gpu-name: a10g")
    cr = _placement(tmp_path, pod, _NODEPOOL)
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a10g"


@pytest.mark.parametrize("others", [(), (_CLASS.replace("llm-gpus", "other"),)])
def test_a_class_not_among_the_inputs_names_nothing(tmp_path: Path, others: tuple[str, ...]) -> None:
    cr = _placement(tmp_path, _pod("cloud.google.com/compute-class: llm-gpus"), *others)
    assert cr.placement is not None and cr.placement.accelerator is None


def test_a_streaming_run_with_two_jobs_joins_them_too(tmp_path: Path) -> None:
    from click.testing import CliRunner

    a, b = tmp_path / "pod.yaml", tmp_path / "class.yaml"
    a.write_text(_pod("cloud.google.com/compute-class: llm-gpus"))
    b.write_text(_CLASS)
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--jobs", "2", str(a), str(b)])
    assert "KV501" not in r.stdout and "1 on the GPU it names" in r.stdout


# A pod that selects a ComputeClass or NodePool by name, alone (fresh52: mramirm/ai-summit26's vllm-deployment.yaml,
# ``nodeSelector: cloud.google.com/compute-class: l4``, its ComputeClass in custom-compute-class.yaml beside it):
# KV501 said only "kvlint cannot tell which GPU this pod lands on", as if the manifest named nothing, and its fix
# listed labels and the annotation but not the object that names the GPU.
@pytest.mark.parametrize(
    ("selector", "kind"),
    [
        ("cloud.google.com/compute-class: llm-gpus", "ComputeClass"),
        ("karpenter.sh/nodepool: gpu", "Karpenter NodePool"),
    ],
)
def test_kv501_says_the_class_the_pod_selects_names_the_gpu_when_it_is_an_input(
    tmp_path: Path, selector: str, kind: str
) -> None:
    cr = _placement(tmp_path, _pod(selector))
    assert cr.placement is not None and cr.placement.accelerator is None
    (why,) = [u for u in cr.placement.undecided if selector.split(":")[0] in u]
    name = selector.split(": ")[1]
    assert f"selects its nodes by the {kind} {name}" in why and "among the inputs" in why


@pytest.mark.parametrize("name", ["Accelerator", "autopilot-spot", "autopilot-arm"])
def test_a_builtin_gke_compute_class_gets_no_such_note(tmp_path: Path, name: str) -> None:
    # GKE Autopilot's built-in classes (Accelerator, Performance, Balanced, Scale-Out, autopilot, autopilot-spot,
    # autopilot-arm) are no object a user could pass: the GPU comes from cloud.google.com/gke-accelerator
    cr = _placement(tmp_path, _pod(f"cloud.google.com/compute-class: {name}"))
    assert cr.placement is not None
    assert not [u for u in cr.placement.undecided if "compute-class" in u]


def test_a_nodes_own_nodepool_label_gets_no_such_note() -> None:
    # a node's labels (kvlint cluster) name the NodePool that launched it: that node selects nothing
    from kvlint.accelerators.placement import node_facts

    assert not [w for w in node_facts({"karpenter.sh/nodepool": "gpu"}).why if "selects" in w]


# The same note when the ComputeClass or NodePool IS among the inputs but names no GPU kvlint reads (a NodePool
# that requires only `karpenter.k8s.aws/instance-category In [g]`, a ComputeClass of `nodepools` only): it told the
# user to "name its file with the workload's to kvlint check", which they had done. It now says the object was read
# and names no GPU kvlint reads, and asks for the annotation only.
@pytest.mark.parametrize(
    ("selector", "other", "kind"),
    [
        (
            "karpenter.sh/nodepool: gpu",
            _NODEPOOL.replace(
                "instance-gpu-name, operator: In, values: [l40s]",
                "instance-category, operator: In, values: [g]",
            ),
            "Karpenter NodePool",
        ),
        (
            "cloud.google.com/compute-class: llm-gpus",
            "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {name: llm-gpus}\n"
            "spec:\n  priorities:\n  - nodepools: [gpu-pool]\n",
            "ComputeClass",
        ),
    ],
)
def test_a_class_among_the_inputs_that_names_no_gpu_is_said_so(
    tmp_path: Path, selector: str, other: str, kind: str
) -> None:
    cr = _placement(tmp_path, _pod(selector), other)
    assert cr.placement is not None and cr.placement.accelerator is None
    name = selector.split(": ")[1]
    (why,) = [u for u in cr.placement.undecided if selector.split(":")[0] in u]
    assert "name its file" not in why
    assert f"the {kind} {name} among the inputs" in why and "names no GPU kvlint reads" in why


# A ComputeClass's priorities are alternatives GKE falls back through (its CRD reference: "GKE tries them in order"),
# so its pods may land on the nodes of any rule; a NodePool's requirements all hold at once. The labels of all the
# rules were merged into one set, where the most specific key decided alone: [gpu nvidia-h100-80gb, then machineType
# g2-standard-8] planned on the H100 although the fallback gives an L4 of 24 GB. Each rule is now decided on its own,
# and the smallest GPU memory among them is taken (said), as for several values of one label.
def test_each_priority_of_a_compute_class_is_a_gpu_its_pods_may_land_on(tmp_path: Path) -> None:
    cc = (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {name: llm-gpus}\nspec:\n  priorities:\n"
        "  - gpu: {type: nvidia-h100-80gb, count: 1}\n  - machineType: g2-standard-8\n"
    )
    cr = _placement(tmp_path, _pod("cloud.google.com/compute-class: llm-gpus"), cc)
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l4"
    assert "g2-standard-8" in cr.placement.how and "the smallest memory (conservative)" in cr.placement.how


def test_a_nodepools_requirements_narrow_together(tmp_path: Path) -> None:
    # instance-gpu-name In [l40s] AND instance-type In [g6e.xlarge]: one GPU, no fallback to a smaller one
    pool = _NODEPOOL + "      - {key: node.kubernetes.io/instance-type, operator: In, values: [g6e.xlarge]}\n"
    cr = _placement(tmp_path, _pod("karpenter.sh/nodepool: gpu"), pool)
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l40s"


# A ComputeClass rule may name only a machine series (`machineFamily: g2`, its CRD reference), which GKE nodes carry
# as the label `cloud.google.com/machine-family` (`kubectl describe node`: `cloud.google.com/machine-family=e2`).
# Neither was read: a class of `machineFamily: g2` rules named no GPU. Read as the EC2 instance family is
# (registry.instance_family): a series names its GPU when every machine type of it in the catalogue's GCE table has
# that one GPU (g2: L4; n2: no GPU); a series of several GPUs (a2: A100 40GB in a2-highgpu/megagpu, 80GB in
# a2-ultragpu) is planned on the smallest, the others kept as candidates (branch gpus53; it was planned on the default
# fleet, T4 to H200). a3 was undecided while the catalogue's a3-edgegpu-8g had no GPU; Compute Engine's docs give A3
# Edge H100 80GB GPUs (branch gpus54), so a3 is the H100 of a3-highgpu/megagpu/edgegpu with a3-ultragpu's H200 kept.
@pytest.mark.parametrize(
    ("family", "gpu"),
    [
        ("g2", "nvidia-l4"),
        ("a4", "nvidia-b200"),
        ("a2", "nvidia-a100-sxm4-40gb"),
        ("a3", "nvidia-h100-sxm5-80gb"),
        ("n2", None),
    ],
)
def test_a_machine_family_rule_names_the_gpu_of_its_series(
    tmp_path: Path, family: str, gpu: str | None
) -> None:
    cc = (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {name: llm-gpus}\nspec:\n  priorities:\n"
        f"  - machineFamily: {family}\n    spot: true\n"
    )
    cr = _placement(tmp_path, _pod("cloud.google.com/compute-class: llm-gpus"), cc)
    assert cr.placement is not None
    assert (cr.placement.accelerator.id if cr.placement.accelerator else None) == gpu
    if gpu:
        assert f"cloud.google.com/machine-family={family}" in cr.placement.how


def test_a_pods_own_machine_family_label_names_the_gpu(tmp_path: Path) -> None:
    cr = _placement(tmp_path, _pod("cloud.google.com/machine-family: g2"))
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l4"


def test_a_series_of_several_gpus_keeps_the_others_as_candidates(tmp_path: Path) -> None:
    from kvlint.accelerators import registry as cat

    boards, types = cat.instance_family_gpus("a2", "gcp")
    assert [a.id for a in boards] == ["nvidia-a100-sxm4-40gb", "nvidia-a100-sxm4-80gb"] and types >= 2
    cr = _placement(tmp_path, _pod("cloud.google.com/machine-family: a2"))
    p = cr.placement
    assert p is not None and p.accelerator is not None and p.accelerator.id == "nvidia-a100-sxm4-40gb"
    assert {a.id for a in p.candidates} == {"nvidia-a100-sxm4-40gb", "nvidia-a100-sxm4-80gb"}
    assert "chose the smallest, nvidia-a100-sxm4-40gb" in p.how


# A ComputeClass's machine-family rule of a series of several GPUs named the smallest only: the node class reached
# the placement as one id (DerivedAccelerator), so `machineFamily: a2` lost a2-ultragpu's A100 80GB that the pod's
# own `cloud.google.com/machine-family: a2` label keeps as a candidate (branch gpus54). Both now keep it, and a3 keeps
# a3-ultragpu's H200 beside the H100 (Compute Engine "GPU machine types": A3 High, Mega and Edge H100 80GB, A3 Ultra
# H200 141GB).
@pytest.mark.parametrize(
    ("family", "boards"),
    [
        ("a2", ["nvidia-a100-sxm4-40gb", "nvidia-a100-sxm4-80gb"]),
        ("a3", ["nvidia-h100-sxm5-80gb", "nvidia-h200-141gb"]),
    ],
)
def test_a_compute_class_machine_family_keeps_every_gpu_of_its_series(
    tmp_path: Path, family: str, boards: list[str]
) -> None:
    cc = (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata: {name: llm-gpus}\nspec:\n  priorities:\n"
        f"  - machineFamily: {family}\n    gpu: {{count: 1}}\n"
    )
    via_class = _placement(tmp_path, _pod("cloud.google.com/compute-class: llm-gpus"), cc).placement
    own_label = _placement(tmp_path, _pod(f"cloud.google.com/machine-family: {family}")).placement
    for p in (via_class, own_label):
        assert p is not None and p.accelerator is not None and p.accelerator.id == boards[0]
        assert [a.id for a in p.candidates] == boards
