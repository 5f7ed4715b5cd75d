"""KV404 for TGI's Gaudi and Intel builds names the collective library their shards run over (Habana's HCCL,
oneCCL), not NCCL, which only TGI's CUDA and ROCm builds use (kvlint.rules.families.parallelism._TGI_COLLECTIVES)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: tgi}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers:
      - name: tgi
        image: {image}
        args: ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--sharded", "true", "--num-shard", "2"]
        resources: {{limits: {{{resource}: 2}}}}
"""


def _kv404(image: str, resource: str) -> str:
    res = run_documents(
        load_text(POD.format(image=image, resource=resource), "d.yaml"), Options(allow_hub=False)
    )
    (d,) = [d for d in res.diagnostics if d.rule == "KV404"]
    assert d.severity == "error"
    return d.message


@pytest.mark.parametrize(
    ("image", "resource", "library"),
    [
        ("ghcr.io/huggingface/tgi-gaudi:2.0.5", "habana.ai/gaudi", "Habana's HCCL, not NCCL"),
        (
            "ghcr.io/huggingface/text-generation-inference:3.3.5-gaudi",
            "habana.ai/gaudi",
            "Habana's HCCL, not NCCL",
        ),
        ("ghcr.io/huggingface/text-generation-inference:3.3.5-intel-xpu", "gpu.intel.com/i915", "oneCCL"),
        ("ghcr.io/huggingface/text-generation-inference:2.2.0-intel", "gpu.intel.com/i915", "oneCCL"),
    ],
)
def test_tgi_gaudi_and_intel_builds_name_their_collectives(image: str, resource: str, library: str) -> None:
    msg = _kv404(image, resource)
    assert library in msg, msg
    assert "NCCL fails" not in msg and "GPU worker" not in msg, msg
    assert "2 TGI shards" in msg


def test_tgi_cuda_build_still_names_nccl() -> None:
    msg = _kv404("ghcr.io/huggingface/text-generation-inference:3.3.5", "nvidia.com/gpu")
    assert "NCCL fails or hangs" in msg and "HCCL" not in msg and "oneCCL" not in msg, msg


@pytest.mark.parametrize(
    "image",
    [
        "ghcr.io/huggingface/text-generation-inference:3.0.1-rocm",
        "ghcr.io/huggingface/text-generation-inference:2.4.1-rocm",
    ],
)
def test_tgi_rocm_build_names_rccl(image: str) -> None:
    # TGI's ROCm shards take torch.distributed's "nccl" backend, which is RCCL under ROCm PyTorch
    # (server/text_generation_server/utils/dist.py); the message names the library that runs there
    msg = _kv404(image, "amd.com/gpu")
    assert "RCCL (ROCm's NCCL) fails or hangs" in msg, msg
    assert " and NCCL fails" not in msg, msg


def test_vllm_rocm_build_names_rccl() -> None:
    doc = POD.format(image="rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", resource="amd.com/gpu").replace(
        '["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--sharded", "true", "--num-shard", "2"]',
        '["--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "2"]',
    )
    res = run_documents(load_text(doc, "d.yaml"), Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV404"]
    assert "RCCL (ROCm's NCCL) fails or hangs" in d.message, d.message
