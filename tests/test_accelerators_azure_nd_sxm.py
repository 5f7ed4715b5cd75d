"""Azure's ND A100 v4, NDm A100 v4 and ND H100 v5 sizes carry the SXM boards of an HGX baseboard, not PCIe cards.

Their specs tables say "Nvidia PCIe A100/H100 GPU", but the same series' summaries say every one of the eight GPUs has
NVLink to the others in the VM (eight PCIe cards do not: their NVLink bridge joins two), and AKS runs NVIDIA Fabric
Manager, the NVSwitch daemon, on exactly these sizes (kvlint/accelerators/supplement.yaml gives the sources). The
board decides FlashInfer's all-reduce fusion workspace and NCCL's NVLink SHARP buffers in the vLLM plan
(:func:`kvlint.memory.calibration.nvls_capable`): on the PCIe H100 there are none; on the SXM5 H100 the workspace at
any TP > 1 and the NVLS buffer from TP 3 (NCCL's ``ncclNvlsInit`` sets none up on two GPUs), growing with TP."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.load import load_text
from kvlint.memory import calibration as cal
from kvlint.pipeline import Options, run_documents

ND_SIZES = ("Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5")


@pytest.mark.parametrize("size", ND_SIZES)
def test_nd_sizes_are_sxm_boards_with_nvlink(size: str) -> None:
    it = cat.instance_type(size)
    assert it is not None and it.accelerator is not None and it.gpus == 8
    assert "-sxm" in it.accelerator.id and "PCIe" not in it.accelerator.name, it.accelerator.id
    assert "NVLINK" in it.note and "Fabric Manager" in it.note


def test_nd_h100_v5_runs_nvls_and_the_pcie_ncads_series_does_not() -> None:
    """The ND H100 v5 board can run NVLS (Hopper SXM behind NVSwitch); the NCads H100 v5 (H100 NVL, PCIe) cannot."""
    nd = cat.instance_type("Standard_ND96isr_H100_v5")
    nc = cat.instance_type("Standard_NC40ads_H100_v5")
    assert nd is not None and nd.accelerator is not None and nc is not None and nc.accelerator is not None
    assert cal.nvls_capable(nd.accelerator.name, nd.accelerator.compute_capability) is True
    assert cal.nvls_capable(nc.accelerator.name, nc.accelerator.compute_capability) is False


_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.19.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --tensor-parallel-size, "2"]
    resources: {{limits: {{nvidia.com/gpu: 2}}}}
"""


def _placed(selector: str) -> tuple[str, int]:
    res = run_documents(load_text(_POD.format(selector=selector), "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.placement is not None and cr.placement.accelerator is not None and cr.plan_detail is not None
    return cr.placement.accelerator.id, cr.plan_detail.plan.non_torch_bytes


def test_a_pod_pinned_to_nd_h100_v5_is_planned_as_on_the_sxm5_board() -> None:
    """vLLM 0.19 at TP 2: the pod pinned to ND96isr_H100_v5 gets the plan of the H100 SXM5 that GFD names
    (NVIDIA-H100-80GB-HBM3), whose non-torch term holds the fusion workspace (no NVLS buffer at TP 2); the PCIe
    H100's is smaller (no workspace is built on it)."""
    nd_id, nd_non_torch = _placed("node.kubernetes.io/instance-type: Standard_ND96isr_H100_v5")
    sxm_id, sxm_non_torch = _placed("nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3")
    pcie_id, pcie_non_torch = _placed("nvidia.com/gpu.product: NVIDIA-H100-PCIe")
    assert nd_id == sxm_id == "nvidia-h100-sxm5-80gb" and pcie_id == "nvidia-h100-pcie-80gb"
    assert nd_non_torch == sxm_non_torch > pcie_non_torch
    assert cal.nvls_buffer_bytes(2, True) == 0 < cal.nvls_buffer_bytes(4, True)
