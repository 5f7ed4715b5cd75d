"""``kvlint simulate``: a capacity plan from request shapes, stating every assumption.

Sections: reserved memory per GPU (the linter's vLLM memory model, with its assumptions), request-shape
assumptions, an analytic estimate (blocks per request at p50/p95 shapes vs. the cache), the paged scheduler
simulation next to a contiguous max-length reservation, occupancy over time, sensitivity to the p95 output length,
and the simulator's simplifications.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass, field, replace

from kvlint.capacity import render as R
from kvlint.capacity.context import EngineContext, usable_blocks
from kvlint.capacity.simulate import SimConfig, SimResult, simulate_columns
from kvlint.capacity.workload import WorkloadSpec, generate_columns, output_variant_columns
from kvlint.numbers import fraction
from kvlint.types import MemoryPlan
from kvlint.wording import count

#: multipliers of the output-length p95 tried by the sensitivity table.
P95_FACTORS = (0.5, 1.0, 2.0, 4.0)

SIMPLIFICATIONS = (
    "one scheduler step = one forward pass of fixed wall time (step_ms); compute speed is not modelled",
    "decode tokens are taken from max_num_batched_tokens before prefill chunks, whatever the running order",
    "prefix-cache hits modelled only for shared-prefix groups; recompute after preemption re-prefills in full",
    "no speculative decoding, LoRA, encoder cache or async scheduling; hybrid KV-cache groups (sliding window, "
    "Mamba) are taken as full attention: every group holds a block per block_size tokens of a request",
    "one engine: with data parallelism (--data-parallel-size) each engine has its own KV cache and scheduler, "
    "and gets its share of the traffic",
)


@dataclass
class SensitivityRow:
    """One row of the p95-output sensitivity: the p95 tried (tokens) and the paged simulation's result."""

    p95_output: int
    factor: float
    result: SimResult


@dataclass
class CapacityReport:
    """Everything ``kvlint simulate`` prints. ``paged``/``contiguous`` are the two simulations of the same
    requests; ``sensitivity`` the p95-output runs (same seed); ``plan`` the memory plan per GPU."""

    ctx: EngineContext
    plan: MemoryPlan
    workload: WorkloadSpec
    config: SimConfig
    paged: SimResult
    contiguous: SimResult
    sensitivity: list[SensitivityRow] = field(default_factory=list)
    groups: KVGroupsView | None = None

    def render(self, fmt: str = "text") -> str:
        """The report as ``text`` or ``markdown``."""
        return render_report(self, fmt)


@dataclass(frozen=True)
class KVGroupsView:
    """The KV-cache groups of a hybrid vLLM V1 plan (sliding-window or Mamba layers next to full attention) as the
    simulator sees them. vLLM's hybrid allocator (``vllm@0.10.0:vllm/v1/core/kv_cache_coordinator.py``, one
    ``SingleTypeKVCacheManager`` per group on one ``BlockPool``) gives each request blocks in every group from
    the shared pool of ``plan.num_blocks``; a group's block holds ``block_size`` tokens of its layers only. The
    simulator has one group, so it runs on ``count`` groups' share of the usable blocks: a request holds a block
    per ``block_size`` tokens in every group -- exact while it is within the sliding window, pessimistic beyond
    it (vLLM frees the blocks that left the window, ``SlidingWindowManager.remove_skipped_blocks``) and for a Mamba
    group (one state block per request). ``text`` describes the groups (``1 full attention, 6 sliding window of
    1,024 tokens``)."""

    count: int
    text: str


def kv_groups_view(ctx: EngineContext, plan: MemoryPlan) -> KVGroupsView | None:
    """:class:`KVGroupsView` of ``plan`` (its groups from :func:`kvlint.capacity.context.plan_detail` on the same
    accelerator and settings), or None: one group, V0 (no hybrid allocator: sliding layers are allocated as full
    attention) or groups packed on one block-id axis (DeepSeek V4: one block already spans them)."""
    from kvlint.capacity.context import plan_detail
    from kvlint.memory.vllm import PlanError

    if plan.era == "v0" or ctx.accelerator is None:
        return None
    try:
        groups = plan_detail(ctx, ctx.accelerator, ctx.total_bytes).groups
    except (PlanError, ValueError):
        return None
    if len(groups) <= 1 or any(g.stride_bytes for g in groups):
        return None
    kinds: dict[str, int] = {}
    for g in groups:
        name = {"full": "full attention", "mamba": "Mamba state"}.get(g.kind, g.kind)
        if g.kind in ("sliding", "chunked") and g.window:
            name = f"{'sliding window' if g.kind == 'sliding' else 'chunked local attention'} of {g.window:,} tokens"
        kinds[name] = kinds.get(name, 0) + 1
    return KVGroupsView(len(groups), ", ".join(f"{n} {name}" for name, n in kinds.items()))


def sim_config(
    plan: MemoryPlan, *, cancel_lag_steps: int = 0, mode: str = "paged", groups: int = 1
) -> SimConfig:
    """The simulator settings implied by a memory plan: usable blocks (null block excluded) -- the share of one
    of ``groups`` KV-cache groups for a hybrid model (:class:`KVGroupsView`) --, block size, max_num_seqs,
    max_num_batched_tokens and max_model_len exactly as planned."""
    return SimConfig(
        num_blocks=usable_blocks(plan) // max(1, groups),
        block_size=plan.block_size,
        max_num_seqs=plan.max_num_seqs,
        max_num_batched_tokens=plan.max_num_batched_tokens,
        max_model_len=max(1, plan.max_model_len),
        mode=mode,
        cancel_lag_steps=cancel_lag_steps,
    )


def prefix_caching_enabled(ctx: EngineContext, plan: MemoryPlan) -> bool:
    """Whether the engine of ``ctx`` caches prompt prefixes: ``--enable-prefix-caching`` or
    ``--no-enable-prefix-caching`` as the command gives it, else the engine's default: on in the V1 engine
    (vllm@0.11.0:vllm/engine/arg_utils.py::EngineArgs._set_default_args turns it on for generative models; V1
    0.8-0.10 ``_set_default_args_v1`` likewise), off in V0 (vllm@0.6.3:vllm/engine/arg_utils.py::EngineArgs
    ``enable_prefix_caching: bool = False``)."""
    flag = ctx.serving.get("enable_prefix_caching") if ctx.serving is not None else None
    if isinstance(flag, bool):
        return flag
    return plan.era != "v0"


def build_report(
    ctx: EngineContext,
    workload: WorkloadSpec,
    *,
    sensitivity: bool = True,
    prefix_caching: bool | None = None,
) -> CapacityReport:
    """Plan + simulate ``workload`` on ``ctx`` (which must have an accelerator and a plan). ``prefix_caching``
    None: as the command and the engine release have it (:func:`prefix_caching_enabled`).

    Raises ValueError when ``ctx.plan`` is None (no accelerator given) or the plan has no KV blocks, and
    :class:`~kvlint.capacity.workload.WorkloadError` for bad workload settings.
    """
    plan = ctx.plan
    if plan is None:
        raise ValueError(
            "simulation needs an accelerator: pass --accelerator ID (kvlint accelerators lists them)"
        )
    if usable_blocks(plan) <= 0:
        raise ValueError(
            f"the plan leaves no KV-cache blocks on {ctx.accelerator.name if ctx.accelerator else 'this GPU'}"
        )
    # The run allocates many small containers and no reference cycles: the cyclic garbage collector would only
    # rescan the growing heap (some 5% of the run time at 100,000 requests, measured with bench/simulate.py's
    # workload), so it is paused meanwhile and restored after.
    paused = gc.isenabled()
    gc.disable()
    try:
        if prefix_caching is None:
            prefix_caching = prefix_caching_enabled(ctx, plan)
        return _simulate_all(ctx, plan, workload, sensitivity=sensitivity, prefix_caching=prefix_caching)
    finally:
        if paused:
            gc.enable()


def _simulate_all(
    ctx: EngineContext, plan: MemoryPlan, workload: WorkloadSpec, *, sensitivity: bool, prefix_caching: bool
) -> CapacityReport:
    view = kv_groups_view(ctx, plan)
    cfg = sim_config(plan, cancel_lag_steps=workload.cancel_lag_steps, groups=view.count if view else 1)
    if not prefix_caching:
        cfg = SimConfig(**{**cfg.__dict__, "enable_prefix_caching": False})
    # The sensitivity workloads differ from ``workload`` only in the output p95 (and drop a trace's rows):
    # output_variant_columns draws what they share once when it can (same requests as generating each).
    p95s: dict[float, int] = {}
    if sensitivity:
        base = workload.output.quantile(0.95)
        p95s = {f: max(1, int(round(base * f))) for f in P95_FACTORS}
    outputs = [workload.output.with_p95(p95s[f]) for f in P95_FACTORS if f != 1.0 and f in p95s]
    if outputs and not workload.trace:
        lists = output_variant_columns(workload, [workload.output, *outputs])
        reqs = next(lists)
    else:
        reqs = generate_columns(workload)
        lists = output_variant_columns(replace(workload, trace=()), outputs)
    paged = simulate_columns(reqs, cfg)
    contiguous = simulate_columns(reqs, SimConfig(**{**cfg.__dict__, "mode": "contiguous"}))
    del reqs
    rep = CapacityReport(ctx, plan, workload, cfg, paged, contiguous, groups=view)
    for f, p95 in p95s.items():
        result = paged if f == 1.0 else simulate_columns(next(lists), cfg)
        rep.sensitivity.append(SensitivityRow(p95, f, result))
    return rep


def memory_rows(plan: MemoryPlan) -> list[tuple[str, str, str]]:
    """(item, GiB, % of total) rows of the per-GPU reservation; they add up to the budget, then to the total
    (the extensible KV cache's margin has its own row, :func:`kvlint.report.plan_text.kept_free_bytes`)."""
    from kvlint.report.plan_text import KEPT_FREE_LABEL, kept_free_bytes

    t = plan.total_bytes or 1

    def row(name: str, b: int) -> tuple[str, str, str]:
        return (name, R.gib(b), f"{100 * b / t:.1f}%")

    return [
        row("total (CUDA)", plan.total_bytes),
        row(f"budget (gpu_memory_utilization {fraction(plan.gpu_memory_utilization)})", plan.budget_bytes),
        row("weights", plan.weights_bytes),
        row("activation peak", plan.activation_bytes),
        row("non-torch (CUDA context, NCCL)", plan.non_torch_bytes),
        row("CUDA graphs", plan.cudagraph_bytes),
        row("KV cache", plan.kv_cache_bytes),
        *([row(KEPT_FREE_LABEL, kept)] if (kept := kept_free_bytes(plan)) else []),
        row("left outside the budget", plan.total_bytes - plan.budget_bytes),
    ]


def _blocks(tokens: int, bs: int) -> int:
    return -(-tokens // bs)


def applied_assumptions(plan: MemoryPlan) -> list[str]:
    """``plan.assumptions`` without those that did not apply: when the user set ``--max-model-len``
    (``max_model_len_source == "user"``) the "derived max_model_len ..." note describes a default that was
    not used, so it is left out."""
    out = list(plan.assumptions)
    if plan.max_model_len_source == "user":
        out = [a for a in out if not a.startswith("derived max_model_len")]
    return out


def render_report(rep: CapacityReport, fmt: str = "text") -> str:
    """Render a :class:`CapacityReport` (see the module docstring for the sections)."""
    p, w, cfg = rep.plan, rep.workload, rep.config
    acc = rep.ctx.accelerator
    out: list[str] = []
    title = f"Capacity plan: {rep.ctx.model.id} on {acc.name if acc else '?'}"
    out.append(R.heading(title, fmt, 1))
    gpus = p.tensor_parallel_size * p.pipeline_parallel_size
    dp = max(1, int(p.data_parallel_size or 1))
    out.append(
        f"vLLM {p.engine_version} ({p.era.upper()}), TP={p.tensor_parallel_size} PP={p.pipeline_parallel_size}, "
        f"dtype {p.dtype}, KV cache dtype {p.kv_cache_dtype}; per GPU unless stated; "
        + (
            f"one replica = {count(gpus, 'GPU')}."
            if dp == 1
            else f"DP={dp}: the replica runs {dp} data-parallel engines of {count(gpus, 'GPU')} ({dp * gpus} GPUs), each "
            "with its own KV cache, scheduler and max_num_seqs (kvlint plan's 'data parallel' line); this report "
            f"simulates one engine, so the arrivals below are the traffic one engine gets (about 1/{dp} of the "
            "replica's when the requests are balanced)."
        )
    )
    findings = [d for d in rep.ctx.findings if d.severity in ("error", "warning")]
    if findings:
        out.append(R.heading("Findings on this command (as kvlint plan reports them)", fmt))
        if any(d.severity == "error" for d in findings):
            out.append(
                "vLLM does not start with this command on this GPU (the errors below): the simulation runs on the "
                "KV cache kvlint predicts, to show the traffic, not a deployment that would serve it."
            )
        out.append(R.bullets([f"{d.severity} {d.rule}: {d.statement}" for d in findings], fmt))
    out.append(R.heading("Reserved memory per GPU", fmt))
    out.append(R.table(("item", "GiB", "% total"), memory_rows(p), fmt))
    out.append(
        f"KV: {p.kv_bytes_per_token:,} bytes/token, block_size {p.block_size}, {p.bytes_per_block:,} bytes/block, "
        f"{p.num_blocks:,} blocks ({usable_blocks(p):,} usable after the null block) = {p.capacity_tokens:,} tokens; "
        f"max_model_len {p.max_model_len:,} ({p.max_model_len_source}), max_num_seqs {p.max_num_seqs}, "
        f"max_num_batched_tokens {p.max_num_batched_tokens:,}; uncertainty band {p.num_blocks_low:,}-"
        f"{p.num_blocks_high:,} blocks."
    )
    if rep.groups is not None:
        g = rep.groups
        out.append(
            f"KV-cache groups: {g.count} ({g.text}) share the {usable_blocks(p):,} usable blocks, and a request holds "
            f"blocks in every group. The simulation and the estimate below have one group, so they run on a pool "
            f"of {cfg.num_blocks:,} blocks ({cfg.num_blocks * p.block_size:,} tokens): a request holds a block per "
            f"{p.block_size} tokens in every group, exact while it is within the sliding window and pessimistic "
            "beyond it, where vLLM frees the blocks that left the window (its 'Maximum concurrency' for "
            f"max_model_len counts that: {p.max_concurrency:.2f}x)."
        )
    out.append("Memory-model assumptions:")
    out.append(R.bullets([*applied_assumptions(p), f"weights: {p.weights_source}"], fmt))
    out.append(R.heading("Request-shape assumptions", fmt))
    out.append(R.bullets(w.assumptions(), fmt))

    out.append(R.heading("Analytic estimate (no queueing)", fmt))
    rows = []
    for q, name in ((0.5, "p50"), (0.95, "p95")):
        pt, ot = w.prompt.quantile(q), w.output.quantile(q)
        blocks = _blocks(pt + ot - 1, p.block_size)
        rows.append(
            (
                f"{name} request",
                f"{pt:,}",
                f"{ot:,}",
                f"{blocks:,}",
                f"{cfg.num_blocks // max(1, blocks):,}",
            )
        )
    mml_blocks = _blocks(p.max_model_len, p.block_size)
    rows.append(
        (
            "max_model_len request",
            f"{p.max_model_len:,}",
            "-",
            f"{mml_blocks:,}",
            f"{cfg.num_blocks // mml_blocks:,}",
        )
    )
    out.append(R.table(("shape", "prompt tok", "output tok", "blocks at end", "fit at once"), rows, fmt))
    if rep.groups is None and p.era != "v0":
        out.append(
            f"vLLM's start-up line 'Maximum concurrency for {p.max_model_len:,} tokens per request: "
            f"{p.max_concurrency:.2f}x' (kvlint plan) divides all {p.num_blocks:,} blocks by the blocks one such "
            f"request needs (get_max_concurrency_for_kv_cache_config); its scheduler hands out {cfg.num_blocks:,} "
            f"(the null block excluded), so {cfg.num_blocks // max(1, mml_blocks):,} such requests fit at once."
        )

    out.append(R.heading("Scheduler simulation: paged blocks vs. contiguous max-length reservation", fmt))
    a, b = rep.paged, rep.contiguous
    step_s = w.step_ms / 1000

    def m(r: SimResult) -> list[str]:
        return [
            f"{r.peak_blocks:,} ({100 * r.utilisation:.0f}%)",
            f"{r.p95_blocks:,}",
            f"{r.mean_blocks:,.0f}",
            f"{r.peak_running:,}",
            f"{r.preemptions:,} ({r.preempted_requests:,} requests)",
            f"{r.delay_percentile(0.5):,} / {r.delay_percentile(0.95):,} / {max(r.queue_delay, default=0):,}",
            f"{r.delay_percentile(0.95) * step_s:,.2f}",
            f"{r.completed:,}",
            f"{r.cancelled:,}",
            f"{r.rejected_too_long:,}",
            f"{r.rejected_no_fit:,}",
            f"{r.steps:,}",
            f"{(r.completed + r.cancelled) / max(1e-9, r.steps * step_s):,.2f}",
            f"{100 * r.tokens_at_peak / max(1, r.peak_blocks * cfg.block_size):.1f}%",
        ]

    names = [
        "peak blocks in use",
        "p95 blocks in use",
        "mean blocks in use",
        "peak running requests",
        "preemptions (recompute)",
        "queue delay p50/p95/max (steps)",
        "queue delay p95 (s)",
        "completed",
        "cancelled",
        "rejected: prompt+output > max_model_len",
        "rejected: never fits the cache",
        "steps simulated",
        "finished requests/s",
        "KV tokens held / block slots at peak",
    ]
    ma, mb = m(a), m(b)
    out.append(
        R.table(
            ("metric", "paged (vLLM)", "contiguous"),
            [(n, x, y) for n, x, y in zip(names, ma, mb, strict=True)],
            fmt,
        )
    )
    seats = cfg.num_blocks // max(1, _blocks(cfg.max_model_len, cfg.block_size))
    out.append(
        f"Contiguous reservation holds {_blocks(cfg.max_model_len, cfg.block_size):,} blocks per request "
        f"({seats:,} seats); paging ran up to {a.peak_running:,} requests at once. "
        + (
            f"Prefix-cache hits: {a.prefix_hit_tokens:,} prompt tokens not recomputed"
            if cfg.enable_prefix_caching
            else "Prefix caching off (as the command and engine release set it): shared prefixes are recomputed"
        )
        + f"; tokens recomputed after preemption: "
        f"{a.recomputed_tokens:,}; tokens generated after a client disconnect (release lag): {a.cancel_lag_tokens:,}."
    )
    out.append(
        "(KV tokens held per allocated slot: below 100% is fragmentation -- the unused tail of the last block, or a "
        "whole max-length reservation; above 100% means shared prefix blocks serve several requests.)"
    )
    out.append(R.heading("Occupancy over time (paged, blocks in use)", fmt))
    out.append(R.pre(R.timeline(a.occ_steps, a.occupancy, capacity=cfg.num_blocks), fmt))

    if rep.sensitivity:
        out.append(R.heading("Sensitivity to p95 output length", fmt))
        srows = []
        for s in rep.sensitivity:
            r = s.result
            srows.append(
                (
                    f"{s.p95_output:,} (x{s.factor:g})",
                    f"{r.peak_blocks:,}",
                    f"{r.p95_blocks:,}",
                    f"{r.preemptions:,}",
                    f"{r.delay_percentile(0.95):,}",
                    f"{r.rejected_too_long:,}",
                    f"{r.peak_running:,}",
                )
            )
        out.append(
            R.table(
                (
                    "p95 output tok",
                    "peak blocks",
                    "p95 blocks",
                    "preemptions",
                    "queue p95 (steps)",
                    "rejected too long",
                    "peak running",
                ),
                srows,
                fmt,
            )
        )
        if w.trace:
            # the other rows are drawn (see _simulate_all): the trace's arrival times and prefix groups are not
            # in them, so they are not the trace with longer outputs
            arrivals = (
                "in the stated bursts" if w.arrivals == "burst" else f"Poisson at {w.rate:g} requests/s"
            )
            out.append(
                f"(x1 replays the trace; the other rows draw {w.requests:,} requests from its prompt lengths with "
                f"lognormal outputs, p50 kept at {w.output.quantile(0.5):,} tokens, arriving {arrivals}, without "
                f"the trace's arrival times or prefix groups; cache {cfg.num_blocks:,} blocks)"
            )
        else:
            out.append(
                f"(output p50 kept at {w.output.quantile(0.5):,} tokens, lognormal; same seed and arrivals; "
                f"cache {cfg.num_blocks:,} blocks)"
            )
    out.append(R.heading("Simulator simplifications", fmt))
    out.append(R.bullets(SIMPLIFICATIONS, fmt))
    return "\n\n".join(out) + "\n"
