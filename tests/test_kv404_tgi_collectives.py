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
