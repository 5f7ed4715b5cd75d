"""The JSON report names the part of a GPU a plan is sized on: ``device``, ``device_share``, ``amd_partition``,
``shared``, ``max_sharers`` and ``gpu_slice`` (docs/formats.md). Before (branch gpus54) only ``mig_profile`` was
there: a plan sized on an eighth of an MI300X (a CPX partition), on HAMi's slice of a card or on a time-sliced GPU
read in JSON as one sized on the whole board, and a consumer comparing ``plan.memory.total_bytes`` with the board's
memory could not tell why."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import AMD_PARTITIONS
from kvlint.cli import main

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: {image}
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{{limits}}}}}
"""


def _workloads(tmp_path, *pods: dict[str, str]) -> dict[str, dict]:
    files = []
    for i, pod in enumerate(pods):
        f = tmp_path / f"{i}.yaml"
        f.write_text(_POD.format(**pod))
        files.append(str(f))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", "--fail-on", "never", *files]
    )
    assert r.exit_code == 0, r.stderr
    return {w["name"]: w for w in json.loads(r.stdout)["workloads"]}


def test_the_json_report_names_the_part_of_the_gpu_each_plan_is_sized_on(tmp_path) -> None:
    rocm = "rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521"
    cuda = "vllm/vllm-openai:v0.11.0"
    out = _workloads(
        tmp_path,
        # the AMD device plugin's mixed naming: one CPX partition (of 8, amdsmi num_partitions) of an MI300X
        {
            "name": "cpx",
            "selector": "amd.com/gpu.product-name: AMD_Instinct_MI300X",
            "image": rocm,
            "limits": "amd.com/cpx_nps4: 1",
        },
        # GFD's -SHARED product and the device plugin's replicas label: 4 time-sliced replicas of one L4
        {
            "name": "sliced",
            "selector": "nvidia.com/gpu.product: NVIDIA-L4-SHARED, nvidia.com/gpu.replicas: '4'",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
        # HAMi: 8000 MiB of an L4 per vGPU
        {
            "name": "hami",
            "selector": "nvidia.com/gpu.product: NVIDIA-L4",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1, nvidia.com/gpumem: 8000",
        },
        # a whole GPU: none of it
        {
            "name": "whole",
            "selector": "nvidia.com/gpu.product: NVIDIA-L4",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
    )
    mi300x, l4 = cat.require("amd-instinct-mi300x"), cat.require("nvidia-l4")

    cpx = out["cpx"]
    assert cpx["accelerator"] == mi300x.id and cpx["amd_partition"] == "cpx_nps4"
    assert cpx["device_share"] == "CPX partition" and cpx["device"] == f"{mi300x.name} CPX partition"
    n = AMD_PARTITIONS["cpx"]
    assert 0 <= mi300x.memory_bytes / n - cpx["plan"]["memory"]["total_bytes"] < 4096

    sliced = out["sliced"]
    assert sliced["shared"] is True and sliced["max_sharers"] == 4 and sliced["device"] == l4.name
    assert sliced["device_share"] is None and sliced["gpu_slice"] is None

    hami = out["hami"]
    assert hami["gpu_slice"] == {"resource": "nvidia.com/gpumem", "mib": 8000, "percent": None}
    assert hami["plan"]["memory"]["total_bytes"] == 8000 * 2**20 and hami["shared"] is False

    whole = out["whole"]
    assert whole["device"] == l4.name and whole["plan"]["memory"]["total_bytes"] == l4.memory_bytes
    assert (
        whole["device_share"],
        whole["amd_partition"],
        whole["shared"],
        whole["max_sharers"],
        whole["gpu_slice"],
    ) == (
        None,
        None,
        False,
        None,
        None,
    )


def test_the_json_report_names_the_sharing_strategy_a_node_label_gives(tmp_path) -> None:
    """GFD's ``nvidia.com/gpu.sharing-strategy`` (``none``, ``time-slicing``, ``mps``: k8s-device-plugin README,
    "Catalog of Labels") and GKE's ``cloud.google.com/gke-gpu-sharing-strategy`` (``time-sharing``, ``mps``) say how
    the GPU is shared: under MPS each of the N replicas gets 1/N of its memory, under time-slicing nothing is
    isolated. Before (branch gpus54) the strategy was only a note in ``accelerator_how``."""
    cuda = "vllm/vllm-openai:v0.11.0"
    l4 = "nvidia.com/gpu.product: NVIDIA-L4"
    out = _workloads(
        tmp_path,
        {
            "name": "mps",
            "selector": f"{l4}, nvidia.com/gpu.sharing-strategy: mps, nvidia.com/gpu.replicas: '2'",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
        {
            "name": "gke",
            "selector": "cloud.google.com/gke-accelerator: nvidia-l4, cloud.google.com/gke-gpu-sharing-strategy: "
            "time-sharing, cloud.google.com/gke-max-shared-clients-per-gpu: '3'",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
        {
            "name": "unsaid",
            "selector": "nvidia.com/gpu.product: NVIDIA-L4-SHARED",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
        {
            "name": "none",
            "selector": f"{l4}, nvidia.com/gpu.sharing-strategy: none",
            "image": cuda,
            "limits": "nvidia.com/gpu: 1",
        },
    )
    got = {n: (w["shared"], w["sharing_strategy"], w["max_sharers"]) for n, w in out.items()}
    assert got == {
        "mps": (True, "mps", 2),
        "gke": (True, "time-slicing", 3),
        "unsaid": (True, None, None),
        "none": (False, None, None),
    }
