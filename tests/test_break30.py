"""Hostile inputs found by the break30 adversarial pass: Dynamic Resource Allocation claims of the wrong type in a
container's ``resources.claims``. Expected figures come from kvlint's own functions, never from engine numbers;
work is counted, never timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import is_internal_error

_CLAIMED = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus}
spec:
  spec:
    devices:
      requests:
      - name: g
        exactly: {deviceClassName: gpu.nvidia.com, count: 1}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: gpus
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "meta-llama/Llama-3.1-70B-Instruct"]
        resources:
          claims: CLAIMS
"""


def _check(tmp_path: Path, text: str):
    path = tmp_path / "m.yaml"
    path.write_text(text)
    return run_check([str(path)], Options(allow_hub=False))


@pytest.mark.parametrize(
    "claims", ["-1", "1.5e308", "true", "{name: gpu}", "[{name: [gpu]}]", "[{name: {a: 1}}]"]
)
def test_container_claims_of_the_wrong_type_are_no_internal_error(tmp_path: Path, claims: str) -> None:
    """A 70B model on one L4 is a KV101 error whatever the container's claims hold; a number there was iterated
    and a list or mapping as a claim's name looked up in a dict, a TypeError that the pipeline turned into a
    KV503 warning in place of the error (fail-open admits it)."""
    result = _check(tmp_path, _CLAIMED.replace("CLAIMS", claims))
    assert not [d for d in result.diagnostics if is_internal_error(d.rule, d.message)], result.diagnostics
    assert [d for d in result.diagnostics if d.rule == "KV101" and d.severity == "error"], result.diagnostics
