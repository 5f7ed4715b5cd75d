"""Resolve an engine command line into what the capacity tools need: vLLM settings, model, accelerator, plan.

Goes through :func:`kvlint.capacity.plan_command.plan_command`, so the numbers are exactly the linter's and ``kvlint plan``'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvlint.types import ENGINE_NAMES, Accelerator, Diagnostic, MemoryPlan, ModelSpec, ServingConfig

if TYPE_CHECKING:
    from kvlint.memory.compat import Refusal
    from kvlint.memory.vllm import VllmPlanDetail, VllmSettings
    from kvlint.options import Options


class CapacityError(ValueError):
    """The command line cannot be capacity-planned (not vLLM, model unavailable, no accelerator, no plan)."""


@dataclass(frozen=True)
class EngineContext:
    """One vLLM command line resolved: ``settings`` (:class:`~kvlint.memory.vllm.VllmSettings`), ``model``,
    ``accelerator`` (None when no ``--accelerator``), ``plan`` on that accelerator (None without one),
    ``total_bytes`` per GPU (``--gpu-memory`` override or the catalogue's CUDA total), ``argv``; ``serving`` the
    parsed command (flags, env, version: what the start-up tests of :mod:`kvlint.memory.compat` read);
    ``findings`` what ``kvlint plan`` reports on the same command and GPU (errors: vLLM does not start)."""

    argv: tuple[str, ...]
    settings: VllmSettings
    model: ModelSpec
    accelerator: Accelerator | None
    total_bytes: int | None
    plan: MemoryPlan | None
    serving: ServingConfig | None = None
    findings: tuple[Diagnostic, ...] = ()

    @property
    def engine_label(self) -> str:
        """``vLLM 0.11.0``, or ``vLLM 0.34.0 (assumed)`` when the command names no version: the engine release
        the numbers are for."""
        return f"vLLM {self.settings.version}" + (" (assumed)" if self.settings.version_assumed else "")

    @property
    def version_note(self) -> str:
        """A sentence saying the engine version was assumed (empty when the command or --engine-version gave it)."""
        if not self.settings.version_assumed:
            return ""
        return (
            f"No engine version given: the newest release kvlint models (vLLM {self.settings.version}) is assumed; "
            "pass --engine-version for the release you run."
        )


def vllm_only_message(engine: str, argv: list[str] | tuple[str, ...], what: str) -> str:
    """Why ``what`` (``kvlint simulate``) refuses a command of ``engine``, and what to run instead: ``kvlint plan``,
    whose ``--compare`` and ``--sweep`` plan TGI and SGLang commands too (:mod:`kvlint.capacity.engines`, on their
    own memory models :mod:`kvlint.memory.tgi`, :mod:`kvlint.memory.sglang`). The simulation replays vLLM V1's
    scheduler (admission by free paged blocks, chunked prefill, preemption by recompute), which TGI's router (a
    token budget, no preemption) and SGLang's scheduler (radix cache, admission by a new-token ratio, retraction)
    do not share, so its figures would not be the engine's."""
    name = ENGINE_NAMES.get(engine, engine)
    typed = " ".join(argv[:3]) if argv else engine
    return (
        f"{what} models vLLM only, and this is {'an' if name == 'SGLang' else 'a'} {name} command ({typed} ...): "
        f"it replays vLLM V1's scheduler, which {name} does not share ("
        + (
            "TGI's router admits by a token budget and does not preempt"
            if engine == "tgi"
            else "SGLang schedules over a radix cache and retracts requests instead"
        )
        + f"). Run `kvlint plan --accelerator ID -- <the same command>` for {name}'s per-GPU memory plan, KV "
        "capacity and findings, with --compare (GPU types x TP x KV dtype) or --sweep NAME=VALUES (one of its "
        "settings) to compare them"
    )


def resolve(
    argv: list[str], options: Options, *, what: str = "capacity planning", local_config: bool = False
) -> EngineContext:
    """Parse and plan ``argv`` (``["vllm", "serve", MODEL, ...]``) with ``options`` (``--accelerator``,
    ``--gpu-memory``, ``--model-dir``, ``--offline``, ``--engine-version``); ``what`` names the command or option
    asking, for the message refusing another engine (:func:`vllm_only_message`). ``local_config``: read the
    command's ``--config FILE`` from this machine, as ``kvlint plan`` does (``kvlint plan --compare/--sweep``).

    Raises :class:`CapacityError` for non-vLLM commands, unknown accelerators or models without a config.json
    (message from model resolution, saying how to provide one), or a plan error on the given accelerator.
    """
    from kvlint.capacity.plan_command import PlanRequestError, plan_command

    try:
        out = plan_command(list(argv), options, local_config=local_config)
    except PlanRequestError as exc:
        raise CapacityError(str(exc)) from exc
    cr = out.result
    if cr.serving.engine != "vllm":
        raise CapacityError(vllm_only_message(cr.serving.engine, argv, what))
    if cr.model is None:
        raise CapacityError(str(cr.model_error or "model unavailable"))
    if cr.settings is None:
        raise CapacityError(cr.plan_error or "cannot read the vLLM settings")
    acc = cr.placement.accelerator if cr.placement else None
    total = cr.placement.memory_bytes if cr.placement else None
    if acc is not None and cr.plan is None:
        raise CapacityError(f"no memory plan on {acc.name}: {cr.plan_error or 'unknown reason'}")
    return EngineContext(
        tuple(argv), cr.settings, cr.model, acc, total, cr.plan, cr.serving, tuple(out.diagnostics)
    )


def plan_detail(
    ctx: EngineContext, acc: Accelerator, total_bytes: int | None = None, **changes: Any
) -> VllmPlanDetail:
    """:func:`kvlint.memory.vllm.plan_vllm_detailed` for ``ctx`` on ``acc`` with settings ``changes``
    (``tensor_parallel_size=2``, ``kv_cache_dtype="fp8"``...). Raises PlanError/TypeError as plan_vllm_detailed."""
    from kvlint.memory.vllm import plan_vllm_detailed

    settings = dataclasses.replace(ctx.settings, **changes) if changes else ctx.settings
    return plan_vllm_detailed(
        settings,
        ctx.model,
        total_bytes or acc.memory_bytes,
        gpu_name=acc.name,
        compute_capability=acc.compute_capability,
    )


def startup_refusal(
    ctx: EngineContext, acc: Accelerator, detail: VllmPlanDetail, **changes: Any
) -> Refusal | None:
    """Whether vLLM refuses to start ``ctx`` on ``acc`` with settings ``changes`` (a ``kv_cache_dtype`` row or
    sweep point), by the tests of rules KV301/KV302/KV305 (:func:`kvlint.memory.compat.startup_refusal`); ``detail`` is
    the plan there (its resolved model dtype). KV304 (the image's platform) does not apply: a command line
    has no image."""
    from kvlint.memory.compat import startup_refusal as refusal

    if ctx.serving is None:
        return None
    kvd = changes.get("kv_cache_dtype")
    return refusal(
        ctx.serving,
        ctx.model,
        acc,
        kv_cache_dtype=str(kvd) if kvd is not None else None,
        dtype=detail.plan.dtype,
        has_pod=False,
    )


def cell_verdict(
    ctx: EngineContext, acc: Accelerator, detail: VllmPlanDetail, **changes: Any
) -> tuple[str, str, str]:
    """``(verdict, reason, refused_by)`` of one ``--compare`` cell or ``--sweep`` point: ``fits`` | ``risky`` |
    ``fails`` from the plan (:func:`kvlint.memory.stage.fit_assessment`), ``refused`` when the max-model-len is
    above the length vLLM derives from config.json (KV201, unless ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``), an explicit
    ``max_num_seqs`` is above the cell's ``max_num_batched_tokens`` (KV204, :func:`batch_below_seqs`), the
    KV301/KV302/KV305 tests say vLLM refuses these settings on ``acc`` (:func:`startup_refusal`) or the plan's
    ``max_num_seqs`` exceeds its Mamba cache blocks (KV108, :attr:`VllmPlanDetail.mamba_refusal`), ``risky`` when
    they say it most
    likely does; ``refused_by`` the rule id then, else empty. A cell where vLLM 0.8 - 0.10 falls back to its V0
    engine (``--kv-cache-dtype fp8`` before Hopper, compute capability below 8.0: ``_era`` in
    :mod:`kvlint.memory.vllm`, ``EngineArgs._is_v1_supported_oracle``) says so in ``reason``: its figures follow
    V0's defaults and KV layout (no chunked prefill by default, no hybrid KV-cache manager), so they can move
    against the V1 cells in the other direction than the setting suggests (less KV with fp8)."""
    from kvlint.memory.stage import fit_assessment

    verdict = {"ok": "fits", "risky": "risky", "fail": "fails"}[detail.verdict]
    reason = fit_assessment(detail)[1] or ""
    why = detail.length_refused
    if why:
        # rule KV201's test, as the plan took it (kvlint.memory.vllm._max_model_len): a max-model-len above the
        # length vLLM derives from config.json stops the engine before any memory is profiled
        return (
            "refused",
            f"{why}: vLLM refuses to start ('User-specified max_model_len ... is greater than the derived "
            "max_model_len'); VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lifts the check",
            "KV201",
        )
    refused = batch_below_seqs(ctx, detail, **changes)
    if refused:
        return "refused", refused, "KV204"
    refusal = startup_refusal(ctx, acc, detail, **changes)
    if refusal is not None and refusal.certain:
        return "refused", refusal.reason, refusal.rule
    if refusal is not None and verdict != "fails":
        return "risky", f"most likely refused at start-up: {refusal.reason}", refusal.rule
    if detail.mamba_refusal is not None and verdict != "fails":
        # the runner's Mamba-block check, after the KV fit check (kvlint.memory.vllm.mamba_block_count)
        return "refused", detail.mamba_refusal.split(". Each", 1)[0], "KV108"
    if detail.v0_fallback and detail.plan.era == "v0":
        # (the source of the fallback stays in the plan's assumptions)
        note = f"vLLM runs its V0 engine here ({detail.v0_fallback}): V0's defaults and KV layout apply"
        reason = f"{reason}; {note}" if reason else note
    return verdict, reason, ""


def batch_below_seqs(ctx: EngineContext, detail: VllmPlanDetail, **changes: Any) -> str:
    """Rule KV204's test on one cell: an explicit ``max_num_seqs`` (set on the command line or swept) above the
    cell's ``max_num_batched_tokens`` (set, swept, or the release's default the plan took) stops vLLM in
    ``SchedulerConfig`` validation before any memory is profiled ("max_num_batched_tokens (N) must be greater than or
    equal to max_num_seqs (M)"; ``vllm@0.6.6.post1:vllm/config.py::SchedulerConfig._verify_args`` to
    ``vllm@0.34.0:vllm/config/scheduler.py::SchedulerConfig.verify_max_model_len``, every release read). The reason
    text, or "" when the cell passes. A default ``max_num_seqs`` is not judged, as KV204 does not: releases lower it
    to the batched tokens (``EngineArgs``, 0.10.2 - 0.33.0)."""
    settings = dataclasses.replace(ctx.settings, **changes) if changes else ctx.settings
    mns = settings.max_num_seqs
    if not isinstance(mns, int) or isinstance(mns, bool):
        return ""
    mbt = settings.max_num_batched_tokens
    default = not isinstance(mbt, int) or isinstance(mbt, bool)
    if default:
        mbt = detail.plan.max_num_batched_tokens
    if not isinstance(mbt, int) or mbt >= mns:
        return ""
    return (
        f"max_num_batched_tokens ({mbt}{', the vLLM default here' if default else ''}) must be greater than or "
        f"equal to max_num_seqs ({mns}); vLLM refuses to start (SchedulerConfig validation)"
    )


def largest_len(ctx: EngineContext, acc: Accelerator, total_bytes: int | None = None, **changes: Any) -> int:
    """Largest max_model_len that fits for ``ctx`` on ``acc`` with ``changes`` (up to the length vLLM
    derives from config.json): :func:`kvlint.memory.vllm.largest_fitting_max_model_len`."""
    from kvlint.memory.vllm import largest_fitting_max_model_len

    settings = dataclasses.replace(ctx.settings, **changes) if changes else ctx.settings
    return largest_fitting_max_model_len(
        settings,
        ctx.model,
        total_bytes or acc.memory_bytes,
        gpu_name=acc.name,
        compute_capability=acc.compute_capability,
    )


def usable_blocks(plan: MemoryPlan) -> int:
    """KV blocks the scheduler can hand out: ``num_blocks`` minus vLLM V1's reserved null block
    (``vllm@0.33.0:vllm/v1/core/block_pool.py::BlockPool.__init__`` takes block 0 as ``null_block``)."""
    return max(0, plan.num_blocks - (1 if plan.era == "v1" else 0))
