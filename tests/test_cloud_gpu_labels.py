"""NVIDIA L20 in the catalogue, and the node labels Volcengine VKE (``machine.cluster.vke.volcengine.com/gpu-name``)
and Alibaba ACK (``aliyun.accelerator/nvidia_name``) name GPUs with, in GFD's spelling of the NVML name.

AIBrix's heterogeneous sample (the shared corpus's ``deepseek-coder-7b-l20-deployment.yaml``, vllm-project/aibrix
``samples/heterogeneous``@e3e10f9e4aeb) selects ``machine.cluster.vke.volcengine.com/gpu-name In [NVIDIA-L20]``:
kvlint read neither the label nor the GPU and planned it on its default fleet."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
{placement}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "16384"]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
AFFINITY = """\
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: {key}
                operator: In
                values: [{value}]"""


def _placement(placement: str):  # type: ignore[no-untyped-def]
    result = run_documents(
        load_text(MANIFEST.format(placement=placement), "d.yaml"), Options(allow_hub=False)
    )
    (cr,) = result.containers
    return cr.placement, result


def test_l20_is_catalogued_from_its_nvml_total() -> None:
    acc = cat.lookup("nvidia-l20")
    assert acc is not None and acc.name == "NVIDIA L20" and acc.compute_capability == "8.9"
    # the NVML total less the catalogue's typical driver reserve (derived), as for other NVML-only entries
    assert acc.memory_bytes == (46068 - cat.driver_reserve_mib()) * cat.MIB
    assert cat.gfd_product("NVIDIA-L20")[0] is acc


@pytest.mark.parametrize(
    "key", ["machine.cluster.vke.volcengine.com/gpu-name", "aliyun.accelerator/nvidia_name"]
)
def test_cloud_gpu_name_labels_decide_the_gpu(key: str) -> None:
    p, _ = _placement(AFFINITY.format(key=key, value="NVIDIA-L20"))
    assert p.accelerator is not None and p.accelerator.id == "nvidia-l20", p.how
    p, _ = _placement(f"      nodeSelector: {{{key}: NVIDIA-A10}}")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a10", p.how
    # a value that names no catalogue GPU decides nothing, and KV501 says why (``Tesla-V100`` did before branch
    # sizing54: it names the V100 boards, tests/test_gpu_name_family54.py; the vendor's word alone names none)
    p, result = _placement(f"      nodeSelector: {{{key}: Tesla}}")
    assert p.accelerator is None
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert f"{key}=Tesla names no GPU in the catalogue" in kv501.message


def test_gfd_product_wins_over_a_cloud_label() -> None:
    p, _ = _placement(
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4, aliyun.accelerator/nvidia_name: NVIDIA-L20}"
    )
    assert p.accelerator is not None and p.accelerator.id == "nvidia-l4"


def test_the_vke_spelling_is_said_to_be_assumed_where_it_decides_the_gpu() -> None:
    """VKE's value list was not found (placement.VKE_GPU_NAME): the GPU it decides carries that assumption in the
    placement the user reads (KV findings' "placed on ... (how)", the JSON's accelerator_how); ACK's documented
    label does not."""
    vke = "machine.cluster.vke.volcengine.com/gpu-name"
    p, _ = _placement(AFFINITY.format(key=vke, value="NVIDIA-L20"))
    assert p.accelerator is not None and p.accelerator.id == "nvidia-l20"
    assert "assumed" in p.how and vke in p.how, p.how
    p, _ = _placement(AFFINITY.format(key="aliyun.accelerator/nvidia_name", value="NVIDIA-L20"))
    assert p.accelerator is not None and "assumed" not in p.how, p.how
