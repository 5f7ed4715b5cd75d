"""TGI family (KV601-KV604): the launcher's token limits and the warmup (docs/engine-memory-model.md §2.3-§2.4).

Messages quote TGI's own texts by version: the launcher (``launcher/src/main.rs::main``), the v3 backend
(``backends/v3/src/lib.rs::connect_backend``), the 2.x router, and the warmup
(``server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup``). Remedies are re-planned
with :func:`kvlint.rules.remedies.replanned` and printed only when TGI then starts.
"""

from __future__ import annotations

from collections.abc import Iterator

from kvlint.engines.tgi import tgi_option
from kvlint.memory.tgi import INFERRED_LIMITS_FROM, TgiPlanDetail, tgi_starts, tgi_version
from kvlint.rules.context import RuleContext, gib
from kvlint.rules.families.parallelism import shm_note
from kvlint.rules.registry import check
from kvlint.rules.remedies import first_fitting, largest_fitting, replanned
from kvlint.types import Diagnostic


def tgi_starts_in_band(d: object) -> bool:
    """:func:`tgi_starts`, and ``max_total_tokens`` also fits the low end of kvlint's band of
    ``max_batch_total_tokens`` (so the result does not trade an error for KV105). Remedies are held to this."""
    if not tgi_starts(d):
        return False
    assert isinstance(d, TgiPlanDetail)
    return d.plan.num_blocks_low * d.plan.block_size >= d.max_total_tokens


def _input_text(v: tuple[int, int, int], mi: int, mt: int) -> str:
    """Launcher text for max_input >= max_total: ``launcher/src/main.rs::main`` at v2.0.4-v2.4.0 (no values)
    and v2.4.1+/HEAD (values in parentheses)."""
    if v < INFERRED_LIMITS_FROM:
        return "`max_input_tokens must be < `max_total_tokens`"
    return f"`max_input_tokens`({mi}) must be < `max_total_tokens`({mt})"


def more_shards(ctx: RuleContext, d: TgiPlanDetail, fits: object) -> tuple[int, TgiPlanDetail] | None:
    """The first shard count (2, 4, 8 above the current one) valid for the model whose plan passes ``fits``."""
    m = ctx.model
    if m is None:
        return None
    sizes = [
        n
        for n in (2, 4, 8)
        if n > d.num_shard
        and not m.num_attention_heads % n
        and not (m.num_kv_heads > 1 and m.num_kv_heads % n)
    ]
    found = first_fitting(sizes, lambda n: replanned(ctx.cr, num_shard=n), fits)  # type: ignore[arg-type]
    if found is None or not isinstance(found[1], TgiPlanDetail):
        return None
    return found[0], found[1]


@check("KV601")
def max_input_not_below_total(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV601: ``max_input_tokens >= max_total_tokens``, as the user set them (the launcher refuses, all
    versions) or as TGI's defaults resolve them (inferred at warmup, v2.4+)."""
    s = ctx.serving
    mi, mt = s.get("max_input_tokens"), s.get("max_total_tokens")
    v, _ = tgi_version(s.version)
    if isinstance(mi, int) and isinstance(mt, int) and mi >= mt:
        yield ctx.finding(
            f"TGI requires max_input_tokens < max_total_tokens (the total is prompt + generated tokens), but "
            f"{mi} >= {mt}; the launcher exits with '{_input_text(v, mi, mt)}' "
            f"(text of TGI {'v2.0-v2.3' if v < (2, 4, 0) else 'v2.4.1 and later'})",
            s.loc("max_input_tokens"),
            fix=f"set {tgi_option(s, 'max_input_tokens')} to at most {mt - 1} and keep {tgi_option(s, 'max_total_tokens')} "
            f"{mt}, or raise {tgi_option(s, 'max_total_tokens')} above {mi}",
        )
        return
    d = ctx.detail
    if not isinstance(d, TgiPlanDetail) or d.warmup_oom or d.max_input_tokens < d.max_total_tokens:
        return
    yield ctx.finding(
        f"with the defaults applied TGI {'.'.join(map(str, d.version))} ends up with max_input_tokens "
        f"{d.max_input_tokens} >= max_total_tokens {d.max_total_tokens}; it exits with "
        f"'{_input_text(d.version, d.max_input_tokens, d.max_total_tokens)}'",
        s.loc("max_input_tokens") if "max_input_tokens" in s.flags else s.loc("max_total_tokens"),
        fix=f"set {tgi_option(s, 'max_input_tokens')} to at most {d.max_total_tokens - 1}",
    )


@check("KV602")
def prefill_below_max_input(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV602: without prompt chunking (TGI < 3.0) ``max_batch_prefill_tokens`` must hold one
    ``max_input_tokens`` prompt (launcher v2.0-v2.3; router for models without chunking)."""
    d, s = ctx.detail, ctx.serving
    if not isinstance(d, TgiPlanDetail) or d.warmup_oom or d.has_chunking:
        return
    if d.max_batch_prefill_tokens >= d.max_input_tokens:
        return
    yield ctx.finding(
        f"TGI {'.'.join(map(str, d.version))} cannot chunk prompts, so max_batch_prefill_tokens "
        f"{d.max_batch_prefill_tokens} must hold one max_input_tokens {d.max_input_tokens} prompt; it exits with "
        f"'`max_batch_prefill_tokens` must be >= `max_input_tokens`. Given: {d.max_batch_prefill_tokens} and "
        f"{d.max_input_tokens}' (launcher v2.0-v2.3; router for models without chunking)",
        s.loc("max_batch_prefill_tokens")
        if "max_batch_prefill_tokens" in s.flags
        else s.loc("max_input_tokens"),
        fix=f"set {tgi_option(s, 'max_batch_prefill_tokens')} to at least {d.max_input_tokens} or lower "
        f"{tgi_option(s, 'max_input_tokens')} to {d.max_batch_prefill_tokens}",
    )


def _total_remedy(ctx: RuleContext, d: TgiPlanDetail) -> str:
    s = ctx.serving
    fixes: list[str] = []
    low = d.plan.num_blocks_low * d.plan.block_size  # the pool at the low end of kvlint's band
    if low > 1:
        new_total = low
        nd = replanned(ctx.cr, max_total_tokens=new_total, max_input_tokens=new_total - 1)
        if isinstance(nd, TgiPlanDetail):  # the default prefill budget follows max_input_tokens
            nd_low = nd.plan.num_blocks_low * nd.plan.block_size
            if 1 < nd_low < new_total:
                new_total = nd_low
                nd = replanned(ctx.cr, max_total_tokens=new_total, max_input_tokens=new_total - 1)
        if tgi_starts_in_band(nd):
            fixes.append(
                f"set {tgi_option(s, 'max_total_tokens')} to {new_total} and {tgi_option(s, 'max_input_tokens')} to "
                f"{new_total - 1} (re-planned: fits, also at the low end of kvlint's band)"
            )
    if d.cuda_memory_fraction < 1.0 and tgi_starts_in_band(replanned(ctx.cr, cuda_memory_fraction=1.0)):
        fixes.append(f"raise {tgi_option(s, 'cuda_memory_fraction')} to 1.0 (re-planned: fits)")
    more = more_shards(ctx, d, tgi_starts_in_band)
    if more is not None:
        n, nd2 = more
        fixes.append(
            f"use {tgi_option(s, 'num_shard', n)} with {n} GPUs{shm_note(ctx)} (re-planned: max_batch_total_tokens "
            f"{nd2.max_batch_total_tokens:,})"
        )
    return (
        "; or ".join(fixes)
        or "no single change found that fits; use a larger GPU or a smaller/quantized model"
    )


@check("KV603")
def max_total_exceeds_kv(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV603: ``max_total_tokens`` above the warmup's ``max_batch_total_tokens``: "Not enough memory to handle
    `max_total_tokens=N`" (``backends/v3/src/lib.rs::connect_backend``, v3.x); v2.x router: "`max_total_tokens`
    must be <= `max_batch_total_tokens`"."""
    d, s = ctx.detail, ctx.serving
    if not isinstance(d, TgiPlanDetail) or d.warmup_oom:
        return
    bt, p = d.max_batch_total_tokens, d.plan
    if bt > 0 and d.max_total_tokens <= bt:
        return
    if d.version >= (3, 0, 0):
        text = f"Not enough memory to handle `max_total_tokens={d.max_total_tokens}`"
        cite = "backends/v3/src/lib.rs::connect_backend, TGI 3.x"
    else:
        text = f"`max_total_tokens` must be <= `max_batch_total_tokens`. Given: {d.max_total_tokens} and {bt}"
        cite = "router validation, TGI 2.x"
    high = p.num_blocks_high * p.block_size
    exits = (
        f"TGI exits with '{text}'"
        if d.max_total_tokens > high
        else f"TGI most likely exits with '{text}' (only a node at the upper end of kvlint's band would hold it)"
    )
    used = f"weights {gib(p.weights_bytes)} − activation {gib(p.activation_bytes)} − non-torch {gib(p.non_torch_bytes)}"
    if d.version >= (3, 0, 0):  # 3.x: the wiggle room scales the fraction of the total (§2.3)
        arithmetic = f"cuda_memory_fraction {d.cuda_memory_fraction:g} × wiggle room {d.wiggle:g} × total {gib(p.total_bytes)} − {used}"
    elif d.wiggle != 1.0:  # 2.3 - 2.4: the wiggle room multiplies the free memory left after the warmup
        arithmetic = f"(cuda_memory_fraction {d.cuda_memory_fraction:g} × total {gib(p.total_bytes)} − {used}) × wiggle room {d.wiggle:g}"
    else:
        arithmetic = f"cuda_memory_fraction {d.cuda_memory_fraction:g} × total {gib(p.total_bytes)} − {used}"
    yield ctx.finding(
        f"TGI's warmup leaves {gib(max(0, p.kv_cache_bytes))} per GPU for the KV cache ({arithmetic}) = "
        f"{p.num_blocks:,} blocks of {p.block_size} token{'s' if p.block_size != 1 else ''} × {p.kv_bytes_per_token:,} "
        f"B/token = "
        f"max_batch_total_tokens {bt:,} (band {p.num_blocks_low * p.block_size:,} to {high:,}), below "
        f"max_total_tokens {d.max_total_tokens:,}; {exits} ({cite})",
        s.loc("max_total_tokens"),
        fix=_total_remedy(ctx, d),
    )


def _prefill_remedy(ctx: RuleContext, d: TgiPlanDetail) -> str:
    s = ctx.serving
    fixes = []
    found = largest_fitting(
        1,
        d.max_batch_prefill_tokens - 1,
        lambda n: replanned(ctx.cr, max_batch_prefill_tokens=n),
        tgi_starts_in_band,  # a smaller prefill batch leaves more memory to the KV cache: monotone
    )
    best = found[0] if found else 0
    if best >= 256:
        best = best // 256 * 256
        if tgi_starts_in_band(replanned(ctx.cr, max_batch_prefill_tokens=best)):
            fixes.append(
                f"set {tgi_option(s, 'max_batch_prefill_tokens')} to {best} (re-planned: the warmup fits and the KV cache holds "
                f"max_total_tokens {d.max_total_tokens}, also at the low end of kvlint's band)"
            )
    if not fixes and not d.has_chunking and d.max_input_tokens > 1:
        # without chunked prefill the prefill budget must hold one whole prompt (max_batch_prefill_tokens >=
        # max_input_tokens, launcher), so no smaller budget starts: a shorter prompt limit does (the 2.0 - 2.4.0
        # default budget follows it, max_input_tokens + 50; a budget the user set is lowered to it as well)
        def with_input(n: int) -> object:
            if d.user_max_batch_prefill_tokens is not None:
                return replanned(ctx.cr, max_input_tokens=n, max_batch_prefill_tokens=n)
            return replanned(ctx.cr, max_input_tokens=n)

        got = largest_fitting(1, d.max_input_tokens - 1, with_input, tgi_starts_in_band)  # type: ignore[arg-type]
        n, nd = got if got is not None else (0, None)
        if isinstance(nd, TgiPlanDetail):
            also = (
                f" and {tgi_option(s, 'max_batch_prefill_tokens')} to {n}"
                if d.user_max_batch_prefill_tokens is not None
                else f" (the warmup prefill is then {nd.max_batch_prefill_tokens} tokens)"
            )
            fixes.append(
                f"lower {tgi_option(s, 'max_input_tokens')} to {n}{also} (re-planned: the warmup fits and the KV "
                f"cache holds max_total_tokens {nd.max_total_tokens}, also at the low end of kvlint's band)"
            )
    more = more_shards(ctx, d, tgi_starts_in_band)
    if more is not None:
        fixes.append(
            f"use {tgi_option(s, 'num_shard', more[0])} with {more[0]} GPUs{shm_note(ctx)} (re-planned: warmup fits)"
        )
    # more_shards tried every shard count the model splits into above this one: none is named when none starts
    return "; or ".join(fixes) or (
        f"no smaller {tgi_option(s, 'max_batch_prefill_tokens')} leaves room for max_total_tokens, nor more shards "
        "(re-planned): use a larger GPU or a quantized model"
    )


@check("KV604")
def prefill_warmup_oom(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV604: the warmup prefill batch does not fit: "Not enough memory to handle N prefill tokens. You need to
    decrease `--max-batch-prefill-tokens`" (``flash_causal_lm.py::FlashCausalLM.warmup``). Weights that do not
    even load are KV101."""
    d, s = ctx.detail, ctx.serving
    if not isinstance(d, TgiPlanDetail) or not d.warmup_oom:
        return
    p = d.plan
    if p.weights_bytes + p.non_torch_bytes > int(d.cuda_memory_fraction * p.total_bytes):
        return  # KV101: loading fails before the warmup
    yield ctx.finding(
        f"TGI's warmup prefill of {d.max_batch_prefill_tokens} tokens needs ≈{gib(d.warmup_need_bytes)} per GPU "
        f"(weights {gib(p.weights_bytes)} + activation {gib(p.activation_bytes)} [heuristic] + non-torch "
        f"{gib(p.non_torch_bytes)} + the warmup batch's KV blocks) but cuda_memory_fraction {d.cuda_memory_fraction} "
        f"× {gib(p.total_bytes)} = {gib(d.cuda_memory_fraction * p.total_bytes)}; the shard exits with 'Not "
        f"enough memory to handle {d.max_batch_prefill_tokens} prefill tokens. You need to decrease "
        "`--max-batch-prefill-tokens`' (flash_causal_lm.py::FlashCausalLM.warmup)",
        s.loc("max_batch_prefill_tokens"),
        fix=_prefill_remedy(ctx, d),
    )
