"""GB10 (DGX Spark) takes vLLM's small batch tier before 0.28 too: NVML cannot report its unified memory.

vLLM reads the device total through NVML (``vllm@0.28.0:vllm/platforms/cuda.py::NvmlCudaPlatform.
get_device_total_memory``), which raises "Not Supported" on GB10, and ``EngineArgs.get_batch_defaults``
(``_set_default_args`` in ``vllm@0.11.0:vllm/engine/arg_utils.py``) takes any exception there as a device of 0
bytes. The NGC 0.13.0 start-up of bench gt-317 prints ``max_num_batched_tokens=2048`` on a GB10. kvlint used to give
GB10 the >= 70 GiB tier from 0.9 to 0.27 (docs/engine-memory-model.md §1.9).
"""

from __future__ import annotations

import pytest

from kvlint.accelerators import lookup
from kvlint.memory.defaults import batch_defaults
from kvlint.memory.versions import resolve_version
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model


def _defaults(acc_id: str, version: str) -> tuple[int, int]:
    acc = lookup(acc_id)
    assert acc is not None
    mbt, seqs, _ = batch_defaults(
        resolve_version(version)[0], "v1", acc.memory_bytes, acc.name, acc.compute_capability
    )
    return mbt, seqs


@pytest.mark.parametrize("version", ["0.8.5", "0.11.0", "0.13.0", "0.25.1", "0.27.0", "0.28.0"])
def test_gb10_gets_the_small_gpu_defaults(version: str) -> None:
    gb10 = lookup("gb10")
    assert gb10 is not None and gb10.memory_bytes >= 70 * (1 << 30)  # the memory a working NVML would report
    assert _defaults("gb10", version) == _defaults("l4", version)
    assert _defaults("gb10", version) != _defaults("h100", version)


def test_gb10_plan_uses_the_small_default_and_says_why() -> None:
    model = resolve_model("openai/gpt-oss-20b", allow_hub=False)
    plans = {}
    for acc_id in ("gb10", "l4"):
        acc = lookup(acc_id)
        assert acc is not None
        plans[acc_id] = plan_vllm_detailed(
            VllmSettings(version="0.13.0", max_model_len=8192, gpu_memory_utilization=0.25),
            model,
            acc.memory_bytes,
            gpu_name=acc.name,
            compute_capability=acc.compute_capability,
        ).plan
    assert plans["gb10"].max_num_batched_tokens == plans["l4"].max_num_batched_tokens
    assert any("NVML" in a for a in plans["gb10"].assumptions)
