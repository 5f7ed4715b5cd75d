"""Where the board is kvlint's guess, the findings say "assumed" (branch gpus55). Before, only Volcengine VKE's
board-less ``gpu-name`` was marked (:attr:`kvlint.types.Placement.assumed`); a label value that stands for one board
kvlint cannot tell among several (GFD's ``NVIDIA-GeForce-RTX-3080``, the NVML name of a 10GB and a 12GB board, with no
``nvidia.com/gpu.memory``; a memory label alone matching several boards) took the smallest as a fact, and a capacity
error there that the other board would not have stood as an error. A label a scheduler may satisfy with several
boards by design (Karpenter's ``instance-gpu-name: a100``) is no guess: the pod may land on the smallest."""

from __future__ import annotations

import pytest

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
    command: [vllm, serve, {command}]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
_SMALL = 'Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"'


def _run(selector: str, command: str = _SMALL):
    res = run_documents(
        load_text(_POD.format(selector=selector, command=command), "p.yaml"), Options(allow_hub=False)
    )
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult) and cr.placement is not None
    return cr.placement, res.diagnostics


@pytest.mark.parametrize(
    "selector",
    [
        "nvidia.com/gpu.product: NVIDIA-GeForce-RTX-3080",
        "nvidia.com/gpu.memory: '40960'",  # the A100 40GB PCIe and SXM4
        "aliyun.accelerator/nvidia_name: NVIDIA-GeForce-RTX-3080",
    ],
)
def test_a_label_that_names_several_boards_marks_the_board_assumed(selector: str) -> None:
    p, _ = _run(selector)
    assert p.accelerator is not None and len(p.candidates) > 1
    assert p.assumed is not None and f"{p.accelerator.id} assumed" in p.assumed


@pytest.mark.parametrize(
    "selector",
    [
        # the memory label tells the two RTX 3080 boards apart
        "nvidia.com/gpu.product: NVIDIA-GeForce-RTX-3080, nvidia.com/gpu.memory: '12288'",
        # Karpenter may launch either A100 board for this requirement: a fact of the pod, not a guess
        "karpenter.k8s.aws/instance-gpu-name: a100",
        "nvidia.com/gpu.product: NVIDIA-L4",
    ],
)
def test_a_label_that_decides_or_allows_several_boards_is_no_assumption(selector: str) -> None:
    p, _ = _run(selector)
    assert p.accelerator is not None and p.assumed is None


def test_a_capacity_error_on_the_assumed_board_that_the_other_board_clears_is_a_warning_saying_so() -> None:
    """Qwen2.5-3B's weights (5.76 GiB) exceed 0.58 of the 10GB RTX 3080 (9.77 GiB) but not of the 12GB board: KV101 on
    the 10GB board, which the product label alone does not select."""
    command = 'Qwen/Qwen2.5-3B-Instruct, --max-model-len, "2048", --gpu-memory-utilization, "0.58", --max-num-seqs, "4"'
    _p, diags = _run("nvidia.com/gpu.product: NVIDIA-GeForce-RTX-3080", command)
    (kv101,) = [d for d in diags if d.rule == "KV101"]
    assert kv101.severity == "warning"
    assert "the GPU is assumed (" in kv101.message and "nvidia-geforce-rtx-3080-10gb assumed" in kv101.message
    # the two boards share a name: the verdicts tell them apart
    assert "(nvidia-geforce-rtx-3080-10gb) fails (KV101)" in kv101.message
    assert "(nvidia-geforce-rtx-3080-12gb) fits" in kv101.message


@pytest.mark.parametrize(
    ("selector", "assumed"),
    [
        # DigitalOcean's page names the H100, not its board: the catalogue takes the SXM5 ([assumed] in its note)
        ("doks.digitalocean.com/gpu-model: h100", True),
        ("node.kubernetes.io/instance-type: gpu-h100x1-80gb", True),
        ("doks.digitalocean.com/gpu-model: mi300x", False),
        ("node.kubernetes.io/instance-type: p4d.24xlarge", False),
    ],
)
def test_a_catalogue_board_the_catalogue_itself_assumes_is_said_to_be_assumed(
    selector: str, assumed: bool
) -> None:
    p, _ = _run(selector)
    assert p.accelerator is not None
    if assumed:
        assert p.assumed is not None and f"read as {p.accelerator.id}: assumed" in p.assumed
        assert p.assumed in p.how  # the findings quote the placement's how
    else:
        assert p.assumed is None and ": assumed" not in p.how
