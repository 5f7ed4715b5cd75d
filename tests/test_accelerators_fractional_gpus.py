"""A fractional-GPU instance type gives its node a share of one GPU (a vGPU), whose frame buffer is all the engine
sees: Azure's NVadsA10 v5 sizes ("starting at 1/6th of a GPU with 4-GiB frame buffer to a full A10 GPU with 24-GiB
frame buffer", MicrosoftDocs/azure-docs ``nvadsa10v5-series.md``), EC2's g6f (the GPU memory of the instance in the
Karpenter instance-type reference), GCP's g4-standard shares. The plan is sized on that share as a GPU whose NVML
total it is, less a GPU's NVML-to-CUDA reserve (kvlint.accelerators.placement._fractional_gpu_mib,
vgpu_guest_reserve_mib), not on the whole board, and not less NVIDIA's vGPU frame buffer reservation, which the vGPU
manager takes on the physical GPU: a guest's engine sees its profile nearly whole
(fixtures/accelerators/vgpu-guest-totals.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import vgpu_guest_reserve_mib
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{node.kubernetes.io/instance-type: {size}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "2048"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _run(size: str) -> ContainerResult:
    return _run_text(_POD.format(size=size))


def _run_text(text: str) -> ContainerResult:
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    return cr


def test_azure_shares_add_up_to_the_boards_frame_buffer() -> None:
    """The size table's frame buffers are the board's 24 GiB split as the fractions say (1/6: 4 GiB, 1/3: 8 GiB,
    1/2: 12 GiB): the catalogue reads the table, not a guess."""
    whole = cat.instance_type("Standard_NV36ads_A10_v5")
    assert whole is not None and whole.fraction is None and whole.slice_memory_mib == 24 * 1024
    for size in ("Standard_NV6ads_A10_v5", "Standard_NV12ads_A10_v5", "Standard_NV18ads_A10_v5"):
        it = cat.instance_type(size)
        assert it is not None and it.fraction is not None and it.slice_memory_mib is not None
        assert it.slice_memory_mib * int(it.fraction.split("/")[1]) == 24 * 1024


def _max_reserved_fb_mib(profile_mib: int, per_gpu: int, ecc: bool) -> int:
    """NVIDIA's vGPU frame buffer reservation written out (max-reserved-fb = profile / 16 + 16 + ecc-adjustments
    (profile / 16 with ECC on a GDDR board) + page-retirement-allocation (128 / max-vgpus-per-gpu)): the documentation's
    arithmetic, not kvlint's function; what the plan before this change took out of the guest's frame buffer."""
    return profile_mib // 16 + 16 + (profile_mib // 16 if ecc else 0) + 128 // per_gpu


_GUESTS = yaml.safe_load(
    (Path(__file__).parent.parent / "fixtures" / "accelerators" / "vgpu-guest-totals.yaml").read_text()
)


@pytest.mark.parametrize("guest", _GUESTS, ids=[g["profile"] for g in _GUESTS])
def test_a_vgpu_guest_is_planned_on_what_its_engine_printed(guest: dict) -> None:
    """vLLM in an NVIDIA A40-48Q guest printed total_gpu_memory=47.74GiB (torch's cudaMemGetInfo total) of a 49,152
    MiB profile: kvlint's guest total is at most that (conservative) and within 1% of it, where the profile less
    NVIDIA's max-reserved-fb (the host's reservation on the physical GPU) is 41.86 GiB, 12% under what the engine
    saw."""
    reported_mib = guest["total_gib_reported"] * 1024
    reserve, words = vgpu_guest_reserve_mib()
    planned_mib = guest["profile_mib"] - reserve
    assert planned_mib <= reported_mib + 0.005 * 1024  # the log rounds to 2 decimals of a GiB
    assert planned_mib >= 0.99 * reported_mib
    assert "11230" in words
    old = guest["profile_mib"] - _max_reserved_fb_mib(guest["profile_mib"], guest["vgpus_per_gpu"], ecc=False)
    assert (
        old < 0.95 * reported_mib
    )  # the reservation is not the guest's: without even ECC's share it is far under


@pytest.mark.parametrize(
    ("size", "profile_mib"),
    [
        ("Standard_NV6ads_A10_v5", 4096),  # A10-4Q
        ("Standard_NV18ads_A10_v5", 12288),  # A10-12Q
        ("g6f.xlarge", 3072),  # 1/8 of an L4: EC2's "3 GB" (2,861 MiB), the L4-3Q profile's 3,072 MiB
        ("g6f.4xlarge", 12288),
    ],
)
def test_a_fractional_instance_type_is_planned_on_its_vgpu_frame_buffer(size: str, profile_mib: int) -> None:
    """The share is a vGPU of ``profile_mib``, which the guest's engine sees less a GPU's NVML-to-CUDA reserve: not
    the whole board, and not the profile less NVIDIA's max-reserved-fb (A10-12Q: 12,288 - 1,616 = 10,672 MiB before
    this change, 1.1 GiB under the 11,794 MiB planned now)."""
    it = cat.instance_type(size)
    assert it is not None and it.accelerator is not None and it.slice_memory_mib is not None
    cr = _run(size)
    p = cr.placement
    assert p is not None and p.accelerator is it.accelerator
    expected = (profile_mib - cat.driver_reserve_mib()) * cat.MIB
    assert p.memory_bytes == expected < it.accelerator.memory_bytes
    assert "a fractional GPU" in p.how and f"a {profile_mib} MiB vGPU frame buffer" in p.how
    assert f"less {cat.driver_reserve_mib()} MiB" in p.how
    assert "0x" not in p.how  # g6f's Karpenter count of 0 is a share of one GPU, not none
    assert cr.plan is not None and cr.plan.total_bytes == expected


_POD_TP = _POD.replace("--max-model-len,", "--tensor-parallel-size, '{tp}', --max-model-len,").replace(
    "nvidia.com/gpu: 1", "nvidia.com/gpu: {tp}"
)


@pytest.mark.parametrize(
    ("size", "gpus"),
    [("Standard_NV36ads_A10_v5", 1), ("Standard_NV36adms_A10_v5", 1), ("Standard_NV72ads_A10_v5", 2)],
)
def test_a_whole_gpu_nvadsa10_v5_size_is_an_a10_24q_vgpu(size: str, gpus: int) -> None:
    """NVadsA10 v5's whole-GPU sizes run the series' vGPU (GRID) driver too ("to a full A10 GPU with 24-GiB frame
    buffer"): each GPU is an A10-24Q, 24,576 MiB of frame buffer, planned by the fractional sizes' rule (the
    profile less a GPU's NVML-to-CUDA reserve), not as a bare-metal A10 with ECC on (21.98 GiB before this change);
    the GPU count stays the size table's (2 on NV72ads: TP and KV410 read it)."""
    it = cat.instance_type(size)
    assert it is not None and it.accelerator is not None and it.fraction is None
    assert it.gpus == gpus and it.vgpu_profile == "A10-24Q"
    profile_mib = 24 * 1024  # A10-24Q: the size table's "24" GiB per GPU
    cr = _run_text(_POD_TP.format(size=size, tp=gpus))
    p = cr.placement
    assert p is not None and p.accelerator is it.accelerator
    expected = (profile_mib - cat.driver_reserve_mib()) * cat.MIB
    assert p.memory_bytes == expected > it.accelerator.memory_bytes
    assert "a whole GPU as a vGPU" in p.how and f"a {profile_mib} MiB vGPU frame buffer" in p.how
    assert p.device_name == "NVIDIA A10 A10-24Q vGPU"
    assert cr.plan is not None and cr.plan.total_bytes == expected
    assert cr.plan.tensor_parallel_size == gpus


def test_a_share_the_size_table_gives_no_memory_for_is_the_boards_share() -> None:
    """g4-standard-6 is 1/8 of an RTX PRO 6000 (cluster-toolkit's machine table), with no memory figure of its own:
    an eighth of the board's 96 GiB, less a GPU's NVML-to-CUDA reserve."""
    it = cat.instance_type("g4-standard-6")
    assert (
        it is not None and it.accelerator is not None and it.fraction == "1/8" and it.slice_memory_mib is None
    )
    p = _run("g4-standard-6").placement
    assert p is not None
    assert p.memory_bytes == (96 * 1024 // 8 - cat.driver_reserve_mib()) * cat.MIB


@pytest.mark.parametrize(
    "size", ["Standard_NC8ads_A10_v4", "Standard_NC16ads_A10_v4", "Standard_NC32ads_A10_v4"]
)
def test_nc_a10_v4_is_a_share_of_unknown_size_not_a_whole_a10(size: str) -> None:
    """NC A10 v4: AKS gives it the GRID (vGPU) driver of the partial-GPU NVadsA10 v5 sizes, and no Microsoft size table
    kvlint read gives its share: the pod is not planned on a whole A10 (KV501 says why and how to give the memory),
    and KV410 claims no GPU count for its node."""
    it = cat.instance_type(size)
    assert it is not None and it.share_unknown and it.gpus is None
    assert it.accelerator is not None and it.accelerator.id == "nvidia-a10"
    text = _POD.format(size=size).replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult) and cr.placement is not None
    assert cr.placement.accelerator is None and cr.plan is None
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert f"{size} is a share of one nvidia-a10 of unknown size" in kv501.message
    assert "--gpu-memory" in kv501.message
    assert not [d for d in res.diagnostics if d.rule == "KV410"]
    # the memory given, it is sized on it
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False, gpu_memory_bytes=8 * cat.GIB))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None and cr.plan.total_bytes == 8 * cat.GIB


def test_an_ec2_fractional_node_has_one_gpu_share_for_kv410() -> None:
    """g6f.xlarge (Karpenter's GPU count 0) gives its node one vGPU, one ``nvidia.com/gpu``: a pod asking 2 stays
    Pending (KV410 says the node has 1), a pod asking 1 fits."""
    one = _POD.format(size="g6f.xlarge")
    two = one.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2").replace(
        '"2048"]', '"2048", --tensor-parallel-size, "2"]'
    )
    res = run_documents(load_text(two, "p.yaml"), Options(allow_hub=False))
    (kv410,) = [d for d in res.diagnostics if d.rule == "KV410"]
    assert "a share of 1 NVIDIA L4" in kv410.message and "a node has 1" in kv410.message
    res = run_documents(load_text(one, "p.yaml"), Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV410"]


@pytest.mark.parametrize("size", ["Standard_NV18ads_A10_v5", "g6f.xlarge"])
def test_the_plan_names_the_vgpu_share_not_the_whole_board(size: str) -> None:
    """A plan sized on a vGPU share is headed by the share (``NVIDIA A10 1/2 vGPU``), not the whole board's name;
    the whole-GPU size of the series is headed by its vGPU profile (``NVIDIA A10 A10-24Q vGPU``)."""
    it = cat.instance_type(size)
    assert it is not None and it.accelerator is not None
    p = _run(size).placement
    assert p is not None and p.device_name is not None
    share = f"{it.fraction} vGPU" if it.fraction else "vGPU share"
    assert p.device_name == f"{it.accelerator.name} {share}"
    whole = _run("Standard_NV36ads_A10_v5").placement
    assert whole is not None and whole.device_name == f"{cat.require('nvidia-a10').name} A10-24Q vGPU"
