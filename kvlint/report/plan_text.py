"""Readable per-GPU text rendering of a :class:`~kvlint.types.MemoryPlan` (``kvlint plan`` output)."""

from __future__ import annotations

from kvlint.types import MemoryPlan

GiB = 1 << 30
_COLORS = {
    "weights": "\x1b[34m",
    "activation": "\x1b[33m",
    "non-torch": "\x1b[35m",
    "CUDA graphs": "\x1b[36m",
    "KV cache": "\x1b[32m",
    "unused": "\x1b[90m",
}
_CHARS = {
    "weights": "W",
    "activation": "A",
    "non-torch": "N",
    "CUDA graphs": "G",
    "KV cache": "K",
    "unused": ".",
}
_RESET = "\x1b[0m"


def _gib(b: int) -> str:
    return f"{b / GiB:.2f}"


def render_plan_text(plan: MemoryPlan, *, width: int = 60, color: bool = False) -> str:
    """Text breakdown of one GPU's memory: table (GiB with 2 decimals and % of total), a proportional bar of
    ``width`` characters (W weights, A activation, N non-torch, G CUDA graphs, K KV cache, . unused), then the KV
    block arithmetic, vLLM's two capacity lines, the uncertainty band and the assumptions. ``color`` adds ANSI colours.
    Never raises for a well-formed plan."""
    total = max(1, plan.total_bytes)
    kv = max(0, plan.kv_cache_bytes)
    parts = [
        ("weights", plan.weights_bytes),
        ("activation", plan.activation_bytes),
        ("non-torch", plan.non_torch_bytes),
        ("CUDA graphs", plan.cudagraph_bytes),
        ("KV cache", kv),
    ]
    used = sum(max(0, b) for _, b in parts)
    parts_bar = parts + [("unused", max(0, total - used))]
    lines = [
        f"vLLM {plan.engine_version} ({plan.era.upper()}), TP={plan.tensor_parallel_size} PP={plan.pipeline_parallel_size}"
        f" DP={plan.data_parallel_size}, dtype {plan.dtype}, KV dtype {plan.kv_cache_dtype} -- per GPU",
        f"{'':14}{'GiB':>9}{'% total':>9}",
        f"{'total':14}{_gib(plan.total_bytes):>9}{100.0:>8.1f}%",
        f"{'budget':14}{_gib(plan.budget_bytes):>9}{plan.budget_bytes / total * 100:>8.1f}%"
        f"  (gpu_memory_utilization {plan.gpu_memory_utilization:.2f})",
    ]
    for name, b in parts:
        lines.append(f"{name:14}{_gib(b):>9}{b / total * 100:>8.1f}%")
    if plan.kv_cache_bytes < 0:
        lines.append(f"{'(KV shortfall)':14}{_gib(plan.kv_cache_bytes):>9}")
    bar = ""
    acc = 0.0
    drawn = 0
    for name, b in parts_bar:
        acc += max(0, b) / total * width
        n = int(round(acc)) - drawn
        if n > 0:
            seg = _CHARS[name] * n
            bar += f"{_COLORS[name]}{seg}{_RESET}" if color else seg
            drawn += n
    lines.append(f"[{bar}]")
    lines.append("W weights  A activation  N non-torch  G CUDA graphs  K KV cache  . unused")
    lines.append("")
    lines.append(
        f"KV bytes/token {plan.kv_bytes_per_token:,}, block size {plan.block_size}, bytes/block {plan.bytes_per_block:,},"
        f" blocks {plan.num_blocks:,}"
    )
    lines.append(f"GPU KV cache size: {plan.capacity_tokens:,} tokens")
    lines.append(
        f"Maximum concurrency for {plan.max_model_len:,} tokens per request: {plan.max_concurrency:.2f}x"
    )
    lines.append(
        f"band: KV {_gib(plan.kv_cache_bytes_low)}-{_gib(plan.kv_cache_bytes_high)} GiB, blocks "
        f"{plan.num_blocks_low:,}-{plan.num_blocks_high:,}, concurrency {plan.max_concurrency_low:.2f}-"
        f"{plan.max_concurrency_high:.2f}x"
    )
    lines.append(
        f"max_model_len {plan.max_model_len:,} ({plan.max_model_len_source}; derived {plan.derived_max_model_len}),"
        f" max_num_seqs {plan.max_num_seqs}, max_num_batched_tokens {plan.max_num_batched_tokens:,}"
    )
    lines.append(f"weights: {plan.weights_source}")
    if plan.assumptions:
        lines.append("assumptions:")
        lines.extend(f"  - {a}" for a in plan.assumptions)
    return "\n".join(lines)
