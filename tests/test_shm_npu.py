"""KV404 on Ascend NPU pods (``huawei.com/Ascend910``). SGLang's Ascend build with ``--tp-size 2`` and no
``/dev/shm`` volume was told "2 GPU workers ... NCCL fails or hangs": NPUs have no NCCL (sglang@0.5.5
``model_runner.py::init_torch_distributed`` takes HCCL for ``npu``); what SGLang keeps in ``/dev/shm`` there is its
tensor-parallel group's shared-memory message queue (``parallel_state.py``: 6 chunks of 4 MiB), and SGLang's
Ascend guide runs the container with ``--shm-size=16g``. A CUDA build on an Ascend node never starts (KV304), so
KV404's NCCL text did not apply to it either."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: sgl}}
spec:
  selector: {{matchLabels: {{app: s}}}}
  template:
    metadata: {{labels: {{app: s}}}}
    spec:
      containers:
      - name: engine
        image: {image}
        command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct", "--tp-size", "2"{extra}]
        resources: {{limits: {{{resource}: 2}}}}
"""


def _diags(image: str, resource: str = "huawei.com/Ascend910", extra: str = ""):  # type: ignore[no-untyped-def]
    text = POD.format(image=image, resource=resource, extra=extra)
    return run_documents(load_text(text, "d.yaml"), Options(allow_hub=False)).diagnostics


@pytest.mark.parametrize(
    ("image", "extra"),
    [
        ("lmsysorg/sglang:v0.5.5-cann8.3.rc1-910b", ""),
        ("registry.example/team/sglang-npu-build:1", ', "--device", "npu"'),
    ],
)
def test_sglang_on_ascend_names_hccl_and_its_message_queue(image: str, extra: str) -> None:
    (kv404,) = [d for d in _diags(image, extra=extra) if d.rule == "KV404"]
    assert kv404.severity == "warning"
    assert kv404.message.startswith("2 SGLang worker processes (--tp-size 2)"), kv404.message
    assert "GPU" not in kv404.message and "NCCL fails" not in kv404.message
    assert "HCCL, not NCCL" in kv404.message and "message queue" in kv404.message
    assert "--shm-size=16g" in kv404.message


def test_cuda_build_on_ascend_is_left_to_kv304() -> None:
    rules = [d.rule for d in _diags("lmsysorg/sglang:v0.5.5")]
    assert "KV304" in rules and "KV404" not in rules


def test_sglang_on_gpus_keeps_the_nccl_error() -> None:
    (kv404,) = [d for d in _diags("lmsysorg/sglang:v0.5.5", resource="nvidia.com/gpu") if d.rule == "KV404"]
    assert kv404.severity == "error" and "2 GPU workers" in kv404.message and "NCCL" in kv404.message
