"""SGLang on Huawei Ascend NPUs: KV403 counts its schedulers (TP x PP, x DP without DP attention) against the pod's
NPUs, one NPU a scheduler, as on CUDA: each sets its device to its own ``gpu_id`` (sglang@0.5.5
``srt/model_executor/model_runner.py::ModelRunner.init_torch_distributed``, ``torch.get_device_module(self.device)
.set_device(self.gpu_id)``, the ``hccl`` backend on ``npu``). KV403 counted only vLLM's workers on NPUs."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_POD = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: sglang-npu}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: s}}}}
  template:
    metadata: {{labels: {{app: s}}}}
    spec:
      containers:
      - name: sglang
        image: lmsysorg/sglang:v0.5.5-cann8.2.rc1-910b
        command: [python3, -m, sglang.launch_server]
        args: [--model-path, Qwen/Qwen2.5-7B-Instruct, --tp, "{tp}", --device, npu, --context-length, "8192"]
        resources: {{limits: {{huawei.com/Ascend910: "{npus}"}}}}
        volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
      volumes: [{{name: shm, emptyDir: {{medium: Memory}}}}]
"""


def _kv403(tp: int, npus: int) -> list[tuple[str, str]]:
    res = run_documents(load_text(_POD.format(tp=tp, npus=npus), "p.yaml"), Options(allow_hub=False))
    return [(d.severity, d.message) for d in res.diagnostics if d.rule == "KV403"]


def test_more_schedulers_than_npus_is_an_error() -> None:
    ((sev, msg),) = _kv403(4, 2)
    assert sev == "error" and "needs 4 NPUs but the pod requests 2" in msg and "scheduler for NPU #2" in msg


@pytest.mark.parametrize(("tp", "npus", "found"), [(4, 4, 0), (2, 4, 1)])
def test_as_many_npus_pass_and_idle_ones_are_a_warning(tp: int, npus: int, found: int) -> None:
    got = _kv403(tp, npus)
    assert len(got) == found and all(sev == "warning" and "sit idle" in msg for sev, msg in got), got
