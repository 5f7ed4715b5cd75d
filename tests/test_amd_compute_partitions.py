"""An ``amd.com/gpu`` on a node whose GPUs are split into compute partitions (the AMD node labeller's
``amd.com/compute-memory-partition``: ``cpx_nps4``, ``dpx_nps2``...) is one partition, not the whole GPU: the device
plugin's default ``single`` naming offers every partition as ``amd.com/gpu`` (64 on a node of 8 CPX MI300X), and
amdgpu gives each compute partition its memory partition's size over the partitions sharing it
(``amdgpu_amdkfd_xcp_memory_size``), i.e. the GPU's memory over the number of compute partitions, in any NPS mode.
The plan is sized on that (kvlint.accelerators.placement._amd_partition_bytes)."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import AMD_PARTITIONS
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  annotations: {{kvlint.io/accelerator: {acc}}}
spec:
  nodeSelector:
    amd.com/compute-memory-partition: {partition}
  containers:
  - name: a
    image: rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{amd.com/gpu: 1}}}}
"""


def _run(acc: str, partition: str) -> ContainerResult:
    res = run_documents(
        load_text(_POD.format(acc=acc, partition=partition), "p.yaml"), Options(allow_hub=False)
    )
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    return cr


@pytest.mark.parametrize("partition", ["cpx_nps4", "cpx_nps1", "dpx_nps2", "qpx_nps1"])
def test_a_partition_of_an_mi300x_is_planned_on_its_share(partition: str) -> None:
    mi300x = cat.require("amd-instinct-mi300x")
    n = AMD_PARTITIONS[partition.split("_")[0]]
    cr = _run("amd-instinct-mi300x", partition)
    p = cr.placement
    assert p is not None and p.accelerator is mi300x
    assert p.memory_bytes is not None and 0 <= mi300x.memory_bytes / n - p.memory_bytes < 4096
    assert f"one of {n} {partition.split('_')[0].upper()} partitions" in p.how
    assert cr.plan is not None and cr.plan.total_bytes == p.memory_bytes


def test_cpx_is_eight_partitions_whatever_the_nps_mode() -> None:
    """CPX + NPS4 (a 48 GB memory quadrant shared by two XCDs) and CPX + NPS1 (192 GB shared by eight) give each
    partition the same eighth."""
    a, b = (
        _run("amd-instinct-mi300x", "cpx_nps4").placement,
        _run("amd-instinct-mi300x", "cpx_nps1").placement,
    )
    assert a is not None and b is not None and a.memory_bytes == b.memory_bytes


def test_spx_is_the_whole_gpu() -> None:
    mi300x = cat.require("amd-instinct-mi300x")
    p = _run("amd-instinct-mi300x", "spx_nps1").placement
    assert p is not None and p.memory_bytes == mi300x.memory_bytes and "partition" not in p.how


def test_a_board_whose_partition_count_is_not_known_says_so() -> None:
    """MI300A (six XCDs) is not among the boards whose partition counts kvlint has: it says the whole GPU's memory
    overstates the partition's."""
    p = _run("amd-instinct-mi300a", "cpx_nps1").placement
    assert p is not None and "kvlint does not know on this board" in p.how


_MIXED = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{{resource}: {count}}}}}
"""


def _mixed(resource: str, selector: str = "amd.com/gpu.product-name: AMD_Instinct_MI300X", count: int = 1):
    res = run_documents(
        load_text(_MIXED.format(resource=resource, selector=selector, count=count), "p.yaml"),
        Options(allow_hub=False),
    )
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    return res, cr


@pytest.mark.parametrize("resource", ["amd.com/cpx_nps4", "amd.com/cpx_nps1", "amd.com/dpx_nps2"])
def test_a_mixed_naming_partition_resource_is_a_gpu_planned_on_its_partition(resource: str) -> None:
    """The device plugin's ``mixed`` naming offers each partition as ``amd.com/<mode>_nps<n>`` (a node of 8 CPX-NPS4
    MI300X: ``amd.com/cpx_nps4: 64``): the container requests a GPU (no KV405) and is planned on one partition."""
    mi300x = cat.require("amd-instinct-mi300x")
    mode = resource.split("/")[1].split("_")[0]
    n = AMD_PARTITIONS[mode]
    res, cr = _mixed(resource)
    assert not [d for d in res.diagnostics if d.rule in ("KV405", "KV409")]
    p = cr.placement
    assert p is not None and p.accelerator is mi300x and p.resource == resource and p.gpus == 1
    assert p.memory_bytes is not None and 0 <= mi300x.memory_bytes / n - p.memory_bytes < 4096
    assert f"resource {resource}: each {resource} is one of {n} {mode.upper()} partitions" in p.how
    assert cr.plan is not None and cr.plan.total_bytes == p.memory_bytes


def test_a_mixed_naming_whole_gpu_is_the_whole_gpu() -> None:
    mi300x = cat.require("amd-instinct-mi300x")
    res, cr = _mixed("amd.com/spx_nps1")
    assert not [d for d in res.diagnostics if d.rule == "KV405"]
    assert cr.placement is not None and cr.placement.memory_bytes == mi300x.memory_bytes
    assert "partition" not in cr.placement.how


def test_a_mixed_naming_partition_without_a_named_gpu_is_planned_on_partitions_of_the_fleet() -> None:
    """No label names the GPU: the fleet narrows to the boards whose partition counts kvlint knows, each planned on
    one partition (KV501 says so), not on whole GPUs."""
    res, cr = _mixed("amd.com/cpx_nps4", selector="kubernetes.io/os: linux")
    assert cr.fleet and {e.accelerator.id for e in cr.fleet} <= {
        "amd-instinct-mi300x",
        "amd-instinct-mi325x",
        "amd-instinct-mi355x",
    }
    for e in cr.fleet:
        assert e.detail is not None
        assert 0 <= e.accelerator.memory_bytes / 8 - e.detail.plan.total_bytes < 4096
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "resource amd.com/cpx_nps4: one CPX partition of each GPU" in kv501.message


def test_a_node_of_eight_partitioned_gpus_offers_more_than_eight_partitions() -> None:
    """Azure's ND MI300X v5 has 8 MI300X; split CPX under the mixed naming it offers 64 ``amd.com/cpx_nps4``: a
    request of 16 is not over the node's GPU count (no KV410)."""
    it = cat.instance_type("Standard_ND96isr_MI300X_v5")
    assert it is not None and it.gpus == 8
    res, _cr = _mixed(
        "amd.com/cpx_nps4", selector="node.kubernetes.io/instance-type: Standard_ND96isr_MI300X_v5", count=16
    )
    assert not [d for d in res.diagnostics if d.rule in ("KV405", "KV410")]


def test_a_cuda_image_requesting_a_partition_is_on_an_amd_node() -> None:
    """``amd.com/cpx_nps4`` is advertised on AMD nodes only: vLLM's CUDA image requesting it does not start (KV304)."""
    text = _MIXED.format(resource="amd.com/cpx_nps4", selector="kubernetes.io/os: linux", count=1).replace(
        "rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "vllm/vllm-openai:v0.8.5"
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert "amd.com/cpx_nps4 (an AMD GPU)" in kv304.message


def test_a_partition_label_without_a_named_gpu_is_planned_on_partitions_of_the_fleet() -> None:
    """``amd.com/gpu`` (the default single naming) on nodes the partition label selects, no GPU named: each board
    of the fleet is planned on one partition, as for the mixed naming's resource, not on whole GPUs."""
    res, cr = _mixed("amd.com/gpu", selector="amd.com/compute-memory-partition: cpx_nps4")
    assert cr.fleet and {e.accelerator.id for e in cr.fleet} <= {
        "amd-instinct-mi300x",
        "amd-instinct-mi325x",
        "amd-instinct-mi355x",
    }
    for e in cr.fleet:
        assert e.detail is not None
        assert 0 <= e.accelerator.memory_bytes / 8 - e.detail.plan.total_bytes < 4096
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "amd.com/compute-memory-partition=cpx_nps4: one CPX partition of each GPU" in kv501.message


def test_the_device_plugin_labellers_spelling_of_the_partition_label_is_read() -> None:
    """ROCm/k8s-device-plugin's node labeller writes ``amd.com/gpu.compute-memory-partition`` (its ``amd.com/gpu.``
    prefix); the GPU Operator's writes ``amd.com/compute-memory-partition``. Either is one partition of the GPU, and
    what kvlint says names the label as written."""
    mi300x = cat.require("amd-instinct-mi300x")
    label = "amd.com/gpu.compute-memory-partition"
    _res, cr = _mixed(
        "amd.com/gpu", selector=f"amd.com/gpu.product-name: AMD_Instinct_MI300X, {label}: cpx_nps4"
    )
    p = cr.placement
    assert p is not None and p.accelerator is mi300x
    assert p.memory_bytes is not None and 0 <= mi300x.memory_bytes / 8 - p.memory_bytes < 4096
    assert f"{label}=cpx_nps4: each amd.com/gpu is one of 8 CPX partitions" in p.how
    res, cr = _mixed("amd.com/gpu", selector=f"{label}: cpx_nps4")
    assert cr.fleet and all(
        e.accelerator.id in ("amd-instinct-mi300x", "amd-instinct-mi325x", "amd-instinct-mi355x")
        for e in cr.fleet
    )
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert f"{label}=cpx_nps4: one CPX partition of each GPU" in kv501.message


def test_a_container_asking_a_whole_gpu_and_a_partition_is_planned_on_the_partition() -> None:
    """It gets both devices, and its engine may run on the partition: the smaller device sizes the plan."""
    mi300x = cat.require("amd-instinct-mi300x")
    text = _MIXED.format(
        resource="amd.com/gpu", selector="amd.com/gpu.product-name: AMD_Instinct_MI300X", count=1
    ).replace("{amd.com/gpu: 1}", "{amd.com/gpu: 1, amd.com/cpx_nps4: 1}")
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    p = cr.placement
    assert p is not None and p.resource == "amd.com/cpx_nps4" and p.accelerator is mi300x
    assert p.memory_bytes is not None and 0 <= mi300x.memory_bytes / 8 - p.memory_bytes < 4096
    assert p.device_name == f"{mi300x.name} CPX partition"


@pytest.mark.parametrize("resource", ["amd.com/cpx_nps4", "amd.com/gpu"])
def test_the_plan_names_the_partition_not_the_whole_gpu(resource: str) -> None:
    """Plan headings (the Markdown report's) name the device the plan is sized on: a CPX partition, not the board."""
    from kvlint.report.markdown import render_markdown

    selector = "amd.com/gpu.product-name: AMD_Instinct_MI300X, amd.com/compute-memory-partition: cpx_nps4"
    res, cr = _mixed(resource, selector=selector)
    assert cr.placement is not None and cr.placement.device_name == "AMD Instinct MI300X CPX partition"
    assert "1 × AMD Instinct MI300X CPX partition" in render_markdown(res)


def test_an_absurd_partition_label_is_not_read_as_a_mode() -> None:
    p = _run("amd-instinct-mi300x", "cpx_nps" + "9" * 400).placement
    assert p is not None and p.amd_partition is None and p.device_share is None


@pytest.mark.parametrize(
    ("image", "resource"),
    [
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "amd.com/gpu"),
        ("vllm/vllm-openai:v0.8.5", "nvidia.com/gpu"),
    ],
)
def test_kv405_asks_for_the_gpu_of_the_images_build(image: str, resource: str) -> None:
    """A ROCm build asking no GPU is told to ask AMD's device plugin's resource, not NVIDIA's."""
    text = _MIXED.format(resource="cpu", selector="kubernetes.io/os: linux", count=1).replace(
        "rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", image
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (kv405,) = [d for d in res.diagnostics if d.rule == "KV405"]
    assert f"set resources.limits['{resource}']" in (kv405.fix or "")
