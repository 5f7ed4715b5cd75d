"""DeepSeek V4's KV caches in vLLM (kvlint.memory.deepseek_v4, docs/engine-memory-model.md §1.5).

gt-018 (vllm-project/vllm#44376, vLLM 0.22, DeepSeek-V4-Flash, TP 2 + EP on GH200, block 256, max_model_len 30,000,
the offline ``LLM`` class) printed the engine's own fit check: 6.66 GiB needed for one 30,000-token request, 5.44 GiB
available, estimated maximum model length 13,528. Given the printed available memory, kvlint's V4 layout must
reproduce the other two figures; before it, kvlint sized V4 as 43 sliding-window layers of one 512-wide fp8 K and V
head (1 KiB a token, block 16) and needed 0.34 GiB.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kvlint.accelerators import lookup
from kvlint.memory.deepseek_v4 import approximate_gcd, v4_layer, v4_pool
from kvlint.memory.kv import layer_counts
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
CASE = next(
    c
    for c in yaml.safe_load((ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml").read_text())
    if c["id"] == "gt-018"
)


def _plan(kv_gib: float | None = None, block_size: int | None = 256):
    model = resolve_model("deepseek-ai/DeepSeek-V4-Flash", allow_hub=False)
    gh200 = lookup("gh200")
    assert gh200 is not None
    s = VllmSettings(
        version="0.22.0",
        tensor_parallel_size=CASE["parallelism"]["tensor_parallel"],
        enable_expert_parallel=True,
        max_model_len=CASE["max_model_len"],
        gpu_memory_utilization=CASE["gpu_memory_utilization"],
        kv_cache_dtype=CASE["kv_cache_dtype"],
        block_size=block_size,
        # the LLM class's default on a >= 70 GiB GPU (vllm@0.11.0:vllm/engine/arg_utils.py::get_batch_defaults,
        # UsageContext.LLM_CLASS: 16384); the case ran LLM(...), not vllm serve
        max_num_batched_tokens=16384,
        kv_cache_memory_bytes=None if kv_gib is None else int(kv_gib * GiB),
    )
    return plan_vllm_detailed(s, model, gh200.memory_bytes, gpu_name=gh200.name, compute_capability="9.0")


def test_gt018_fit_check_at_the_printed_available_memory():
    """With the 5.44 GiB vLLM printed (any value that rounds to it), one 30,000-token request needs what vLLM
    printed (6.66 GiB) and the estimated maximum length brackets its 13,528."""
    fail = CASE["failure"]
    lo = _plan(fail["kv_available_gib"] - 0.005)
    hi = _plan(fail["kv_available_gib"] + 0.0049)
    for d in (lo, hi):
        assert round(d.needed_bytes / GiB, 2) == fail["kv_needed_gib"]
        assert not d.fits and d.verdict == "fail"
    assert lo.estimated_max_model_len <= fail["estimated_max_model_len"] <= hi.estimated_max_model_len
    assert hi.estimated_max_model_len - lo.estimated_max_model_len < 100  # the rounding of 5.44, not a range


def test_v4_block_size_defaults_to_the_backend_preference():
    """Without --block-size vLLM takes DeepseekSparseSWABackend's 256 for V4 (kvlint took 16 before)."""
    d = _plan(None, block_size=None)
    assert d.plan.block_size == 256
    assert any(g.block_size == 64 for g in d.groups)  # the sliding-window cache's own 64-token blocks


def test_approximate_gcd_least_padding():
    """vLLM's _approximate_gcd on the bucket sizes of its own docstring example (11 C4 and 10 C128 layers, 21 SWA
    layers): d = 11 pads 2 tuples (21 -> 22, 10 -> 11), d = 12 pads 7, d = 21 pads 31."""
    assert approximate_gcd([11, 21, 11, 10], lower_bound=11) == 11
    # ties go to the larger chunk: [4, 6] pads 2 at d = 4 (6 -> 8) and 0 at d = 6
    assert approximate_gcd([4, 6], lower_bound=4) == 6


def test_v4_pool_pages_and_groups():
    """V4-Flash's 43 layers (2 window-only, 21 ratio 4, 20 ratio 128) at block 256: pages from the source formulas
    (kept tokens x 584 B or 132 B for the indexer, rounded up to 576 B), one group of latent and indexer caches, two
    window groups (43 layers dealt over 22-tuple chunks) and one group per compressor-state window."""
    layers = [v4_layer(128, 1)] * 2 + [v4_layer(128, 4), v4_layer(128, 128)] * 20 + [v4_layer(128, 4)]
    groups, stride, tok = v4_pool(layer_counts(tuple(layers)), 256)

    def aligned(n: int) -> int:
        return -(-n // 576) * 576

    c4, c128, idx, swa = aligned(64 * 584), aligned(2 * 584), aligned(64 * 132), aligned(64 * 584)
    assert (c4, c128, idx, swa) == (37440, 1728, 8640, 37440)
    assert stride == 22 * (c4 + idx + c128)  # chunk 22: buckets of 21, 43, 21 and 20 tuples pad 5 in all
    assert tok * 256 == 21 * c4 + 21 * idx + 20 * c128
    kinds = sorted((k, n, bs, w) for k, n, bs, _, w in groups)
    assert kinds == [
        ("full", 62, 256, None),
        ("sliding", 20, 8, 128),
        ("sliding", 21, 64, 128),
        ("sliding", 22, 64, 128),
        ("sliding", 42, 4, 8),
    ]


def test_prelude_says_whether_the_pool_holds_compressed_layers():
    """plan_prelude answers once per settings and model whether a layer of the pool is a V4 compressed layer (the
    question resolve_startup asked of every layer in every plan, for V4's default block size): the same answer
    as a scan of the pool's layers, for V4 checkpoints and others, with and without MTP layers in the pool."""
    from kvlint.memory.vllm import plan_prelude

    seen = set()
    for model_id in (
        "deepseek-ai/DeepSeek-V4-Flash",
        "deepseek-ai/DeepSeek-V4-Pro",
        "meta-llama/Llama-3.1-8B-Instruct",
    ):
        model = resolve_model(model_id, allow_hub=False)
        for mtp in (0, 1):
            s = VllmSettings(
                version="0.22.0", speculative_method="mtp" if mtp else None, num_speculative_tokens=mtp
            )
            pre = plan_prelude(s, model)
            expected = any(lay.compress_ratio for lay in pre.layers)
            assert pre.compressed_layers == expected
            seen.add(expected)
    assert seen == {True, False}
