"""KV406: container memory limit against the host memory vLLM pins (cpu offload, V0 swap, KV offloading).

Sources of each term are in kvlint.rules.checks._check_host_memory; these tests pin the arithmetic."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import Diagnostic

GiB = 2**30

TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: {gpu}}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:{tag}
          args: [{args}]
          resources:
            limits: {{nvidia.com/gpu: {gpus}{memory}}}
          volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
      volumes: [{{name: shm, emptyDir: {{medium: Memory}}}}]
"""


def _kv406(
    args: str,
    memory: str | None,
    *,
    tag: str = "v0.11.0",
    gpu: str = "nvidia-l4",
    gpus: int = 1,
    options: Options | None = None,
) -> list[Diagnostic]:
    text = TEMPLATE.format(
        args=args, tag=tag, gpu=gpu, gpus=gpus, memory=f", memory: {memory}" if memory else ""
    )
    res = run_documents(load_text(text, "d.yaml"), options or Options(allow_hub=False))
    return [d for d in res.diagnostics if d.rule == "KV406"]


QWEN32 = '"--model", "Qwen/Qwen2.5-32B-Instruct", "--max-model-len", "4096", "--tensor-parallel-size", "2"'


def test_cpu_offload_is_per_gpu_and_pinned() -> None:
    (d,) = _kv406(QWEN32 + ', "--cpu-offload-gb", "10"', "16Gi", gpus=2)
    assert "--cpu-offload-gb 10 GiB x 2 GPUs = 20.00 GiB" in d.message
    assert "limit 16.00 GiB is below the 20.00 GiB" in d.message
    assert d.loc is not None and d.loc.line == 13  # the memory limit
    assert "at least 20Gi" in d.fix and "--cpu-offload-gb" in d.fix
    assert _kv406(QWEN32 + ', "--cpu-offload-gb", "10"', "24Gi", gpus=2) == []
    assert _kv406(QWEN32 + ', "--cpu-offload-gb", "10"', None, gpus=2) == []  # no limit: nothing to compare


def test_offload_stops_when_the_weights_run_out() -> None:
    # Qwen2.5-1.5B has ~3 GiB of weights: asking to offload 100 GiB pins only what exists
    small = '"--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096", "--cpu-offload-gb", "100"'
    (d,) = _kv406(small, "2Gi")
    pinned = float(d.message.split(" = ")[1].split(" GiB")[0])
    assert 2.5 < pinned < 3.5 and "(the weights per GPU)" in d.message
    assert _kv406(small, "4Gi") == []


def test_swap_space_counts_only_under_the_v0_engine() -> None:
    qwen = '"--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096", "--dtype", "half", '
    qwen += '"--tensor-parallel-size", "2"'
    # vLLM 0.9.2 on a T4 (compute capability 7.5) falls back to V0: 4 GiB default swap x 2 GPUs
    (d,) = _kv406(qwen, "6Gi", tag="v0.9.2", gpu="nvidia-tesla-t4", gpus=2)
    assert "--swap-space 4 x 2 GPUs (V0 engine) = 8.00 GiB" in d.message
    # an explicit --swap-space 0 pins nothing
    assert _kv406(qwen + ', "--swap-space", "0"', "6Gi", tag="v0.9.2", gpu="nvidia-tesla-t4", gpus=2) == []
    # the same on an L4 runs V1, which allocates no swap blocks
    assert _kv406(qwen, "6Gi", tag="v0.9.2", gpu="nvidia-l4", gpus=2) == []


def test_kv_offloading_native_backend_only() -> None:
    base = '"--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096", "--kv-offloading-size", "40"'
    (d,) = _kv406(base, "32Gi", tag="v0.33.0")
    assert "--kv-offloading-size 40 = 40.00 GiB" in d.message
    assert _kv406(base + ', "--kv-offloading-backend", "lmcache"', "32Gi", tag="v0.33.0") == []


def test_weights_fraction_parameter_is_off_by_default() -> None:
    args = '"--model", "Qwen/Qwen2.5-1.5B-Instruct", "--max-model-len", "4096"'
    assert _kv406(args, "1Gi") == []  # nothing pinned: the page cache is reclaimable
    strict = Options(allow_hub=False, rule_params={"KV406": {"min_weights_fraction": 1.0}})
    (d,) = _kv406(args, "1Gi", options=strict)
    assert "min_weights_fraction 1 x the weights it loads" in d.message
