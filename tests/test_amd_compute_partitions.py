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
