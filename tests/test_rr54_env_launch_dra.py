"""A custom vLLM image started from its env, in a container whose GPU is a Dynamic Resource Allocation claim (rr54).

Branch review54S read an engine from the container env only for a container that requests a GPU
(``command._requests_gpu``), which looked at ``limits``/``requests`` only; branch webhook54 made the chart send a pod
whose GPU is a DRA claim (``resources.claims``) to the webhook, and the placement counts such a claim as the
container's devices (``Placement.requests_no_gpu`` is False). The same container with ``nvidia.com/gpu: 1`` was read
from its env and sized; with a DRA claim it was "engine command cannot be read". The env reading is now the same for
both (the claim's device count is not known, so the layout the env does not give stays unknown).
"""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

OPTIONS = Options(allow_hub=False)

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: custom
spec:
  selector:
    matchLabels: {{app: custom}}
  template:
    metadata:
      labels: {{app: custom}}
    spec:
{pod}      containers:
      - name: vllm
        image: registry.example.com/team/vllm-server:1.2
        env:
          - name: MODEL_ID
            value: Qwen/Qwen2.5-1.5B-Instruct
          - name: MAX_MODEL_LEN
            value: "2048"
        resources:
{resources}"""

DRA_POD = """\
      resourceClaims:
        - name: gpu
          resourceClaimTemplateName: single-gpu
"""
DRA = "          claims:\n            - name: gpu\n"
LIMITS = "          limits:\n            nvidia.com/gpu: 1\n"


def _kv503(tmp_path: Path, name: str, pod: str, resources: str) -> list[str]:
    path = tmp_path / name
    path.write_text(POD.format(pod=pod, resources=resources))
    res = run_check([str(path)], OPTIONS)
    return [d.message for d in res.diagnostics if d.rule == "KV503"]


def test_a_dra_claim_container_is_read_from_its_env_as_a_gpu_limit_one_is(tmp_path: Path) -> None:
    (with_limits,) = _kv503(tmp_path, "limits.yaml", "", LIMITS)
    assert with_limits.startswith("engine command not in the manifest"), with_limits
    (with_claim,) = _kv503(tmp_path, "dra.yaml", DRA_POD, DRA)
    assert with_claim.startswith("engine command not in the manifest"), with_claim
    assert "--model Qwen/Qwen2.5-1.5B-Instruct --max-model-len 2048" in with_claim, with_claim


def test_a_container_with_no_gpu_and_no_claim_is_still_not_read_from_its_env(tmp_path: Path) -> None:
    (kv503,) = _kv503(tmp_path, "none.yaml", "", "          requests:\n            cpu: 1\n")
    assert kv503.startswith("engine command cannot be read"), kv503
