"""vLLM's "GPU KV cache size: N tokens" line, by release: ``num_blocks // len(kv_cache_groups) * min_block_size`` up to
0.20.0 and ``int(max_concurrency * max_model_len)`` from 0.20.1 (``vllm/v1/core/kv_cache_utils.py::
_report_kv_cache_config`` in the 0.20.0 and 0.20.1 wheels). kvlint switched at 0.21.0, so a 0.20.1 plan of a hybrid
model printed the block formula's figure where the engine prints concurrency x length.

Ground truth: gt-310 (noonghunna/club-3090#91, a v0.20.1 start-up of a Qwen3.6-27B hybrid at TP 2) prints 619,479
tokens and 2.36x for 262,144-token requests; its tokens are not a multiple of any block size, so only the newer
formula can have printed them. The expected figures come from kvlint's own plan (its concurrency and length), never
typed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kvlint.memory.versions import capacity_is_concurrency_times_len, parse_version
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
CASES: dict[str, dict[str, Any]] = {
    c["id"]: c
    for c in yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text(encoding="utf-8"))
}


def _plan(version: str):
    # gt-310's settings on the catalogue's Qwen3.6-27B config (the NVFP4 checkpoint's; the KV layout is the model's)
    c = CASES["gt-310"]
    m = resolve_model("nvidia/Qwen3.6-27B-NVFP4", allow_hub=False)
    s = VllmSettings(
        version=version,
        tensor_parallel_size=c["parallelism"]["tensor_parallel"],
        max_model_len=c["max_model_len"],
        max_num_seqs=c["max_num_seqs"],
        max_num_batched_tokens=c["max_num_batched_tokens"],
        kv_cache_dtype=c["kv_cache_dtype"],
        kv_cache_memory_bytes=10 * GiB,
    )
    return plan_vllm_detailed(
        s, m, int(23.59 * GiB), gpu_name="NVIDIA GeForce RTX 3090", compute_capability="8.6"
    )


def test_gt_310_prints_concurrency_times_length() -> None:
    f = CASES["gt-310"]["figures"]
    assert CASES["gt-310"]["engine_version"].startswith("0.20.1")
    assert round(f["kv_tokens"] / f["concurrency_for_len"], 2) == f["max_concurrency"]
    assert f["kv_tokens"] % 2 == 1  # no block size divides it: not num_blocks // groups x block size


def test_the_line_switches_at_0_20_1() -> None:
    assert not capacity_is_concurrency_times_len(parse_version("0.20.0"))
    assert capacity_is_concurrency_times_len(parse_version("0.20.1"))
    new = _plan("0.20.1")
    p = new.plan
    assert len(new.groups) > 1  # a hybrid model: the two formulas differ
    assert p.capacity_tokens == int(p.num_blocks / new.per_request_blocks * p.max_model_len)
    old = _plan("0.20.0").plan
    assert old.num_blocks == p.num_blocks
    assert old.capacity_tokens == (old.num_blocks // len(new.groups)) * min(g.block_size for g in new.groups)
    assert old.capacity_tokens != p.capacity_tokens
