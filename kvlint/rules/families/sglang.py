"""SGLang family (KV701-KV703): the static memory fraction and the KV pool (docs/engine-memory-model.md §3.3).

Messages quote SGLang's texts by version: 0.5.23's ``kv_cache_configurator.py`` ("Loaded weights leave no GPU
memory for the KV cache under --mem-fraction-static=F. ..."; "KV pool holds N tokens, fewer than
--context-length L. ...") and the older ``model_runner.py::init_memory_pool`` ("Not enough memory. Please try to
increase --mem-fraction-static."). Remedies are re-planned with :func:`kvlint.rules.remedies.replanned`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from kvlint.memory.sglang import (
    REQUEST_TABLE_EXTRA_COLUMNS,
    REQUEST_TABLE_PADDING_ROW_FROM,
    SglangPlanDetail,
    pool_starts,
    post_capture_kv_sizing,
    warns_pool_below_context,
)
from kvlint.memory.sglang_mamba import NO_STATE_POOL, STATE_POOL_TOO_SMALL
from kvlint.memory.stage import PlanDetail
from kvlint.rules.context import RuleContext, gib
from kvlint.rules.families.parallelism import shm_note
from kvlint.rules.registry import check
from kvlint.rules.remedies import MIN_USEFUL_MAX_MODEL_LEN, first_fitting, replanned, smallest_fitting
from kvlint.types import Diagnostic, MemoryPlan


def _pool_tokens(d: object) -> int:
    return d.max_total_num_tokens if isinstance(d, SglangPlanDetail) else 0


def _low_tokens(d: SglangPlanDetail) -> int:
    """The KV pool in tokens at the low end of kvlint's band."""
    return d.plan.num_blocks_low * d.plan.block_size


def _holds_one_request(d: object) -> bool:
    """The pool holds one ``context_length`` request also at the low end of kvlint's band (no KV702, no KV105):
    what a remedy must reach."""
    return (
        isinstance(d, SglangPlanDetail)
        and d.rest_bytes > 0
        and not d.context_error
        and _low_tokens(d) >= d.context_length > 0
    )


def fitting_context_length(
    ctx: RuleContext, at_most: int | None = None
) -> tuple[int, SglangPlanDetail] | None:
    """The longest ``--context-length`` (tokens), at most ``at_most``, whose request SGLang's KV pool holds also at
    the low end of kvlint's band, with the re-planned detail at it; the remedy KV702 and KV202 share.

    The pool (``max_total_num_tokens``) does not depend on ``context_length`` (docs/engine-memory-model.md §3.3), so
    the candidate is ``at_most`` when the low-end pool holds it, else the low-end pool rounded down to 1,024 tokens
    (kept as is below 2,048); it is re-planned with :func:`kvlint.rules.remedies.replanned` and must pass
    :func:`_holds_one_request`. None without an SGLang plan with a pool, or when the candidate is shorter than
    :data:`~kvlint.rules.remedies.MIN_USEFUL_MAX_MODEL_LEN` (a context too short to serve is no remedy)."""
    d = ctx.detail
    if not isinstance(d, SglangPlanDetail) or d.rest_bytes <= 0 or d.max_total_num_tokens <= 0:
        return None
    low = _low_tokens(d)
    if at_most is not None and low >= at_most:
        target = at_most
    else:
        target = low // 1024 * 1024 if low >= 2048 else low
    if target < MIN_USEFUL_MAX_MODEL_LEN:
        return None
    nd = replanned(ctx.cr, context_length=target)
    if not _holds_one_request(nd):
        return None
    assert isinstance(nd, SglangPlanDetail)
    return target, nd


def _fraction_and_context(
    ctx: RuleContext, d: SglangPlanDetail, lowest: int
) -> tuple[int, int, SglangPlanDetail] | None:
    """KV701's remedy when no ``--mem-fraction-static`` up to 0.95 makes the pool hold one ``context_length``
    request: a shorter ``--context-length`` with the smallest fraction that holds it, as one remedy, where a
    fraction alone would start SGLang with every request capped below its context (KV702). The lengths tried are
    the halvings of the current one that the pool at 0.95 holds at the low end of kvlint's band, longest first,
    down to :data:`~kvlint.rules.remedies.MIN_USEFUL_MAX_MODEL_LEN`; for each, the fractions from ``lowest``
    (hundredths: the engine's own "Raise --mem-fraction-static above" figure rounded up) to 0.95 are searched
    with both changes applied and re-planned (:func:`_holds_one_request`). Returns ``(fraction in hundredths,
    length, re-planned detail)``; None when none fits."""
    top = replanned(ctx.cr, mem_fraction_static=0.95)
    if not isinstance(top, SglangPlanDetail) or top.rest_bytes <= 0:
        return None
    most = _low_tokens(top)
    length = d.context_length // 2
    while length >= MIN_USEFUL_MAX_MODEL_LEN:
        if length <= most:

            def plan_at(h: int, n: int = length) -> PlanDetail | None:
                return replanned(ctx.cr, mem_fraction_static=h / 100, context_length=n)

            found = smallest_fitting(lowest - 1, 95, plan_at, _holds_one_request)
            if found is not None and isinstance(found[1], SglangPlanDetail):
                return found[0], length, found[1]
        length //= 2
    return None


@check("KV701")
def mem_fraction_too_low(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV701: ``mem_fraction_static`` x the free memory before loading leaves no KV pool after the weights
    (``rest = mfs x pre_free - weights - other``, sglang ``_profile_available_bytes`` 0.5.23,
    ``ModelRunner.init_memory_pool`` before). Weights larger than the whole GPU are KV101. A hybrid Mamba /
    linear-attention model sizes its state pool first and, from 0.5.13, stops there when no state slot fits ("Not
    enough GPU memory for hybrid (mamba/linear-attention) state cache", ``_handle_max_mamba_cache``)."""
    d, s, m = ctx.detail, ctx.serving, ctx.model
    if not isinstance(d, SglangPlanDetail) or m is None:
        return
    p = d.plan
    if (
        d.mamba_family
        and d.version >= (0, 5, 13)
        and d.max_mamba_cache_size > 0
        and d.rest_bytes > 0
        and d.max_total_num_tokens > 0
        and d.max_running_requests <= 0
    ):
        yield _state_pool_serves_no_request(ctx, d)
        return
    tiny = d.rest_bytes > 0 and d.max_total_num_tokens > 0
    if tiny and pool_starts(d.version, d.max_total_num_tokens, d.context_length):
        return
    if p.weights_bytes > d.pre_free_bytes:
        return  # KV101: loading fails before the pool is sized
    need = math.ceil((d.minimum_mfs + 0.01) * 100) / 100
    if tiny:  # a pool of a few tokens: the TP worker's assertion, not the memory check
        text = "Memory pool size is too small"
    elif d.mamba_family and d.max_mamba_cache_size <= 0 and d.version >= (0, 5, 13):
        # the state pool is sized first (_handle_max_mamba_cache) and refuses a non-positive slot count
        text = f"{NO_STATE_POOL}. Computed max_mamba_cache_size={d.max_mamba_cache_size}"
    elif d.version >= (0, 5, 23):
        text = (
            f"Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static={d.mem_fraction_static}. "
            f"Raise --mem-fraction-static above {d.minimum_mfs:.3f} (minimum viable = 1 - available/pre = "
            f"{d.minimum_mfs:.3f}). If using speculative decoding, draft weights are now counted."
        )
    else:
        text = "Not enough memory. Please try to increase --mem-fraction-static."
    if (
        not tiny
        and d.mamba_family
        and "max_mamba_cache_size" in s.flags
        and d.mamba_state_bytes > 0
        and d.rest_bytes + d.mamba_state_bytes > 0
    ):
        yield _state_pool_takes_the_rest(ctx, d, text)
        return
    fixes = []
    if need < 0.96:
        lowest = round(need * 100)
        holds = smallest_fitting(
            lowest - 1, 95, lambda h: replanned(ctx.cr, mem_fraction_static=h / 100), _holds_one_request
        )
        if holds is not None:
            fixes.append(
                f"set --mem-fraction-static {holds[0] / 100:.2f} (re-planned: {_pool_tokens(holds[1])} tokens, one "
                f"context_length {d.context_length} request fits, also at the low end of kvlint's band)"
            )
        else:
            both = _fraction_and_context(ctx, d, lowest)
            if both is not None:
                h, length, nd2 = both
                fixes.append(
                    f"set --mem-fraction-static {h / 100:.2f} and --context-length {length} (re-planned: "
                    f"{_pool_tokens(nd2)} tokens, one {length}-token request fits, also at the low end of kvlint's "
                    f"band; no --mem-fraction-static up to 0.95 holds a context_length {d.context_length} request)"
                )
    sizes = [n for n in (2, 4, 8) if n > d.tp and not m.num_attention_heads % n]
    found = first_fitting(sizes, lambda n: replanned(ctx.cr, tp_size=n), _holds_one_request)
    if found is not None:
        fixes.append(
            f"use --tp-size {found[0]} with {found[0]} GPUs{shm_note(ctx)} (re-planned: {_pool_tokens(found[1])} "
            "tokens)"
        )
    yield ctx.finding(
        f"mem_fraction_static {d.mem_fraction_static} × {gib(d.pre_free_bytes)} free before loading = "
        f"{gib(p.budget_bytes)} for weights + KV pool, but the weights take {gib(p.weights_bytes)} per GPU "
        f"(+ {gib(p.non_torch_bytes)} other [heuristic])"
        + (f", leaving a KV pool of only {d.max_total_num_tokens} tokens" if tiny else "")
        + f"; SGLang {p.engine_version} exits with '{text}'",
        s.loc("mem_fraction_static"),
        fix="; or ".join(fixes) or "the weights do not fit: use more GPUs (--tp-size) or a quantized model",
    )


def _state_pool_takes_the_rest(ctx: RuleContext, d: SglangPlanDetail, text: str) -> Diagnostic:
    """KV701 for a hybrid model whose ``--max-mamba-cache-size`` state pool takes more than the memory the weights
    leave: SGLang takes the flag's slot count as is (``_handle_max_mamba_cache``: only divided by the DP-attention
    size, checked to be positive), subtracts ``slots x mamba_cache_per_req`` from the rest, and the KV pool sized
    from what is left is empty, so it exits with ``text`` (the release's KV-pool message). At the flag, with the
    slot count that leaves half the rest for the KV pool (the state : KV = 1 : 1 split) when that re-plans to hold
    one ``context_length`` request."""
    s = ctx.serving
    rest = d.rest_bytes + d.mamba_state_bytes
    slots = max(1, d.max_mamba_cache_size)  # per rank: the flag divided by the DP-attention size
    flag = s.get("max_mamba_cache_size")
    flag = flag if isinstance(flag, int) and flag >= slots else slots
    per_slot = d.mamba_state_bytes // slots
    fix = "lower --max-mamba-cache-size, or drop it to let SGLang size the pool from memory"
    half = rest // 2 // max(1, per_slot)
    if half >= max(1, d.mamba_ratio):
        value = half * (flag // slots)
        nd = replanned(ctx.cr, max_mamba_cache_size=value)
        if _holds_one_request(nd):
            fix = (
                f"set --max-mamba-cache-size {value} (re-planned: {_pool_tokens(nd)} tokens, one context_length "
                f"{d.context_length} request fits), or drop it to let SGLang size the pool from memory"
            )
    return ctx.finding(
        f"--max-mamba-cache-size {flag:,} state slots ({d.mamba_family} state) take "
        f"{gib(d.mamba_state_bytes)} per GPU, more than the {gib(rest)} that mem_fraction_static "
        f"{d.mem_fraction_static} leaves after the weights: no KV pool remains; SGLang {d.plan.engine_version} "
        f"exits with '{text}'",
        s.loc("max_mamba_cache_size"),
        fix=fix,
    )


def _state_pool_serves_no_request(ctx: RuleContext, d: SglangPlanDetail) -> Diagnostic:
    """KV701 for a hybrid model whose state pool has slots but fewer than one running request takes: SGLang
    0.5.13+ caps ``max_running_requests`` at ``max_mamba_cache_size // ratio`` and stops when that leaves none
    (``resolve_max_num_reqs``: :data:`kvlint.memory.sglang_mamba.STATE_POOL_TOO_SMALL`;
    ``kv_cache_configurator.py`` 0.5.16-0.5.23, ``model_runner_kv_cache_mixin.py`` 0.5.13-0.5.15), though the KV
    pool itself is sized. At ``--max-mamba-cache-size`` when that flag sets the slots, else at
    ``--mem-fraction-static``."""
    s = ctx.serving
    explicit = "max_mamba_cache_size" in s.flags
    text = (
        f"{STATE_POOL_TOO_SMALL}. max_mamba_cache_size={d.max_mamba_cache_size}, mamba_ratio={d.mamba_ratio}"
    )
    if explicit:
        fix = (
            f"set --max-mamba-cache-size {d.mamba_ratio} or more ({d.mamba_ratio} state slots for each running "
            "request), or drop it to let SGLang size the pool from memory"
        )
    else:
        fix = (
            "raise --mem-fraction-static or --mamba-full-memory-ratio so that the state pool holds more slots"
        )
    return ctx.finding(
        f"SGLang's hybrid state pool has {d.max_mamba_cache_size} slots ({d.mamba_family} state, "
        f"{gib(d.mamba_state_bytes)} per GPU) but one running request takes {d.mamba_ratio}, so no request can "
        f"run; SGLang {d.plan.engine_version} exits with '{text}'",
        s.loc("max_mamba_cache_size") if explicit else s.loc("mem_fraction_static"),
        fix=fix,
    )


@check("KV702")
def context_exceeds_pool(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV702: the KV pool holds fewer tokens than ``context_length``: one full-length request cannot fit
    SGLang starts either way and caps ``max_req_len = min(context_len, max_total_num_tokens) - 1``
    (``TpModelWorker``), rejecting or truncating longer prompts; 0.5.23 also warns
    (``kv_cache_configurator``), older releases say nothing."""
    d, s = ctx.detail, ctx.serving
    if not isinstance(d, SglangPlanDetail) or d.rest_bytes <= 0 or d.max_total_num_tokens <= 0:
        return
    if d.max_total_num_tokens >= d.context_length or not pool_starts(
        d.version, d.max_total_num_tokens, d.context_length
    ):
        return  # fits, or the pool is too small to start at all (KV701)
    p = d.plan
    fixes = []
    found = fitting_context_length(ctx)
    if found is not None:
        fixes.append(
            f"set --context-length {found[0]} (re-planned: one request fits, also at the low end of kvlint's band)"
        )
    if d.mem_fraction_static < 0.95:
        nd = replanned(ctx.cr, mem_fraction_static=0.95)
        if _holds_one_request(nd):
            fixes.append(
                "raise --mem-fraction-static to 0.95 (re-planned: fits once; less room for activations)"
            )
    cap = (
        f"caps the longest request at {d.max_total_num_tokens - 1:,} tokens (max_req_len = min(context_len, "
        "max_total_num_tokens) - 1, TpModelWorker): longer prompts are rejected or, depending on the release and "
        "--allow-auto-truncate, truncated ('Request length is longer than the KV cache pool size or the max "
        "context length')"
    )
    if warns_pool_below_context(d.version):
        says = (
            f"starts, warns 'KV pool holds {d.max_total_num_tokens} tokens, fewer than --context-length "
            f"{d.context_length}. One full-length request cannot fit, …' (kv_cache_configurator) and {cap}"
        )
    else:
        says = f"starts without a warning and silently {cap}"
    yield ctx.finding(
        f"SGLang's KV pool holds max_total_num_tokens {d.max_total_num_tokens:,} (rest {gib(d.rest_bytes)}"
        + (
            f" after the {gib(d.mamba_state_bytes)} hybrid state pool of {d.max_mamba_cache_size} slots"
            if d.mamba_state_bytes
            else ""
        )
        + " ÷ "
        f"{p.kv_bytes_per_token:,} B/token, page {d.page_size}) but context_length is {d.context_length:,}: one "
        f"full-length request cannot fit. SGLang {p.engine_version} {says}",
        s.loc("context_length") if "context_length" in s.flags else s.command_loc,
        fix="; or ".join(fixes) or "use more GPUs (--tp-size) or --kv-cache-dtype fp8_e4m3",
    )


#: The first SGLang release that caps a user's ``--max-running-requests`` before sizing the request-to-token table
#: at its own estimate (``sglang@0.5.10:sglang/srt/model_executor/model_runner_kv_cache_mixin.py::
#: _resolve_max_num_reqs``: ``min(max_running_requests // dp_size, estimated)``, ``estimated`` at most 4,096; the same
#: in 0.5.11 - 0.5.13). 0.5.9's ``model_runner_kv_cache_mixin.py::init_memory_pool`` and 0.5.5's
#: ``model_runner.py::init_memory_pool`` take the value as the table's row count (less only for Mamba-style models,
#: by their state slots).
REQUEST_TABLE_CAPPED_FROM = (0, 5, 10)
#: From this release the cap is the KV pool's tokens instead of the estimate: ``min(max_running_requests //
#: dp_size, token_capacity // 2)`` (``sglang@0.5.14`` and ``0.5.15:model_runner_kv_cache_mixin.py::
#: _resolve_max_num_reqs``; ``mem_cache/kv_cache_configurator.py::resolve_max_num_reqs`` in 0.5.16 - 0.5.23, 0.5.23
#: with ``max(1, ...)``), so a large value is again the table's row count up to half the pool's tokens, a table
#: ``(context_len + 4) x 2`` int32 bytes per pool token that no release counts in the KV budget. The rows of every
#: release, the default's included: :func:`kvlint.memory.sglang.request_table_rows`.
REQUEST_TABLE_POOL_CAP_FROM = (0, 5, 14)


def request_table_pool_bytes(plan: MemoryPlan) -> int:
    """The KV pool KV703 places beside the table: the tokens SGLang allocates (``max_total_num_tokens``, after
    ``--max-total-tokens`` caps the profiled count: ``min(profiled, max_total_tokens)`` in ``sglang@0.5.5``/``0.5.9``
    ``init_memory_pool``) at the plan's bytes per token, and never more than the low end of the profiled pool, so the
    sum stays a lower bound."""
    return max(0, min(plan.kv_cache_bytes_low, plan.capacity_tokens * plan.kv_bytes_per_token))


@check("KV703")
def request_table_exceeds_gpu(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV703 (SGLang): the request-to-token table does not fit beside the weights and the KV pool.
    ``ModelRunner.init_memory_pool`` builds ``ReqToTokenPool(size=rows, max_context_len=context_len + 4)``, whose
    ``req_to_token`` is a ``(rows, max_context_len)`` int32 tensor on the GPU (``sglang@0.5.5:python/sglang/srt/
    mem_cache/memory_pool.py::ReqToTokenPool.__init__``, the same in 0.5.9; one padding row more from 0.5.12), then
    the KV pool sized before it from the memory left (``profile_max_num_token``); no release counts the table in
    ``mem_fraction_static``'s reserve. When the table, the KV pool and the weights together exceed the GPU, one of
    the two allocations raises ``torch.OutOfMemoryError``. The rows are the plan's
    (:func:`kvlint.memory.sglang.request_table_rows`): an explicit ``--max-running-requests`` as given up to 0.5.9,
    capped at SGLang's estimate (at most 4,096 rows) in :data:`REQUEST_TABLE_CAPPED_FROM` - 0.5.13 and at half the
    pool's tokens from :data:`REQUEST_TABLE_POOL_CAP_FROM`; without the flag SGLang's own default, 2,048 - 4,096 rows
    (at most half the pool's tokens from 0.5.14), which a context of millions of tokens makes larger than the GPU.
    Reported at the flag, or at ``--context-length`` (the command) for the default. Allocated in
    ``KVCacheConfigurator._init_pools`` (0.5.16 - 0.5.23) before the KV pool. Mamba-style models (rows capped by
    their state slots) are not judged, nor a plan that stops before the table is allocated: weights larger than the
    free memory (KV101) or no KV pool (KV701's "Not enough memory", raised before ``ReqToTokenPool`` in every
    release)."""
    d, plan = ctx.detail, ctx.plan
    mrr = ctx.serving.get("max_running_requests")
    if not isinstance(d, SglangPlanDetail) or plan is None:
        return
    if d.mamba_family or d.context_length <= 0 or d.request_table_rows <= 0:
        return
    explicit = isinstance(mrr, int) and not isinstance(mrr, bool) and mrr > 0
    rows = d.request_table_rows
    columns = d.context_length + REQUEST_TABLE_EXTRA_COLUMNS
    table = rows * columns * 4
    weights, kv = plan.weights_bytes, request_table_pool_bytes(plan)
    # with post-capture KV sizing the pool is fitted to the memory left after the table: only the table can fail
    after = ctx.model is not None and post_capture_kv_sizing(d.version, ctx.serving.env, ctx.model)
    if after:
        kv = 0
    if table + weights + kv <= plan.total_bytes:
        return
    if (
        weights + kv >= plan.total_bytes
        or weights > d.pre_free_bytes
        or d.rest_bytes <= 0
        or d.max_total_num_tokens <= 0
    ):
        # SGLang stops before it allocates the table: weights larger than the free memory fail to load (KV101), and
        # a pool of no tokens raises "Not enough memory" before ReqToTokenPool is built (KV701; sglang@0.5.5
        # model_runner.py::ModelRunner.init_memory_pool, the pool configurator's MemoryPoolConfig in later
        # releases). The table is not the cause there, and no row count would fit ("--max-running-requests well
        # below 0")
        return
    gpu = ctx.placement.accelerator.name if ctx.placement and ctx.placement.accelerator else "GPU"
    room = plan.total_bytes - weights - kv
    fits = max(0, room) // (columns * 4)
    pool_capped = d.version >= REQUEST_TABLE_POOL_CAP_FROM
    est_capped = REQUEST_TABLE_CAPPED_FROM <= d.version < REQUEST_TABLE_POOL_CAP_FROM
    if explicit and pool_capped:
        sized = (
            f"--max-running-requests {mrr:,} sizes SGLang {plan.engine_version}'s request-to-token table at {rows:,} "
            f"rows (SGLang caps the value at half the KV pool's {plan.capacity_tokens:,} tokens"
            f"{' per DP worker' if d.dp > 1 else ''}, resolve_max_num_reqs, plus a padding row)"
        )
    elif explicit and est_capped:
        sized = (
            f"--max-running-requests {mrr:,} sizes SGLang {plan.engine_version}'s request-to-token table at {rows:,} "
            "rows (SGLang caps the value at its estimate, _resolve_max_num_reqs"
            + (", plus a padding row)" if d.version >= REQUEST_TABLE_PADDING_ROW_FROM else ")")
        )
    elif explicit:
        sized = f"--max-running-requests {mrr:,} sizes SGLang {plan.engine_version}'s request-to-token table: {rows:,} rows"
    else:
        sized = (
            f"SGLang {plan.engine_version}'s default request-to-token table has {rows:,} rows (clamp(tokens / "
            "context_length x 512, 2048, 4096)"
            + (", at most half the pool's tokens" if d.version >= REQUEST_TABLE_CAPPED_FROM else "")
            + (", plus a padding row" if d.version >= REQUEST_TABLE_PADDING_ROW_FROM else "")
            + f"; context_length {d.context_length:,} + 4 columns)"
        )
    where = "ModelRunner.init_memory_pool" if d.version < (0, 5, 16) else "KVCacheConfigurator.configure"
    default = "2,048 - 4,096 rows, at most half the pool's tokens" if pool_capped else "2,048 - 4,096 rows"
    if explicit:
        fix = (
            f"remove --max-running-requests (SGLang {plan.engine_version} then sizes the table at {default}) "
            f"or keep it well below {fits:,}, the rows that fit beside the weights and the KV pool"
            + (
                "; SGLang 0.5.10 - 0.5.13 cap the value at 4,096 rows"
                if d.version < REQUEST_TABLE_CAPPED_FROM
                else ""
            )
        )
    else:
        fix = (
            "set --context-length to the longest request you serve (each of the table's rows holds context_length + 4 "
            f"int32), or set --max-running-requests well below {fits:,}, the rows that fit beside the weights and the "
            "KV pool"
        )
    yield ctx.finding(
        f"{sized} x {columns:,} int32 = {gib(table)} per GPU, which with the weights, {gib(weights)}, "
        + (
            "is more than the {total} of the {gpu} even before the KV pool (sized after CUDA-graph capture under "
            "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING); "
            if after
            else "and the KV pool, {kv}, is more than the {total} of the {gpu}; "
        ).format(total=gib(plan.total_bytes), gpu=gpu, kv=gib(kv))
        + "the scheduler stops with "
        f"torch.OutOfMemoryError ('CUDA out of memory') in {where}",
        ctx.serving.loc("max_running_requests")
        if explicit
        else (
            ctx.serving.loc("context_length")
            if "context_length" in ctx.serving.flags
            else ctx.serving.command_loc
        ),
        fix=fix,
    )
