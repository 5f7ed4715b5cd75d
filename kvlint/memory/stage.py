"""The plan stage: each serving container's engine memory model, computed once per container.

:func:`plan_container` runs after the models and accelerators stages: given the parsed engine settings, the
model's config and the GPU the pod lands on, it builds the engine's per-GPU memory plan
(:func:`kvlint.memory.vllm.plan_vllm_detailed`, :func:`kvlint.memory.tgi.plan_tgi_detailed`,
:func:`kvlint.memory.sglang.plan_sglang_detailed`) and returns it as a :class:`PlanOutcome`. The rules only
read that outcome; when a rule's remedy needs "the same container with one setting changed", it calls
:func:`replan`, the one way to re-plan (used by :mod:`kvlint.rules.remedies`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kvlint.memory.sglang import SglangPlanDetail, plan_sglang_detailed
from kvlint.memory.tgi import TgiPlanDetail, plan_tgi_detailed
from kvlint.memory.vllm import (
    PlanError,
    VllmPlanDetail,
    VllmSettings,
    plan_vllm_detailed,
    settings_from_config,
)
from kvlint.options import Options
from kvlint.types import Accelerator, ContainerResult, MemoryPlan, ModelSpec, Placement, ServingConfig

__all__ = [
    "FleetEntry",
    "PlanDetail",
    "PlanOutcome",
    "fit_verdict",
    "plan_container",
    "plan_fleet",
    "plannable_gpu",
    "replan",
]

#: The engine-specific result of a memory model; each carries the engine-neutral ``plan`` (a MemoryPlan).
PlanDetail = VllmPlanDetail | TgiPlanDetail | SglangPlanDetail

#: Exceptions a memory model raises on a configuration it cannot size (never a traceback for the user).
# OverflowError: absurd but finite inputs (gpu-memory-utilization 1e308) overflow the float arithmetic
_PLAN_ERRORS = (PlanError, ValueError, ZeroDivisionError, KeyError, TypeError, OverflowError)


@dataclass(frozen=True)
class PlanOutcome:
    """What the plan stage found for one container.

    Attributes:
        settings: the engine's resolved settings (:class:`~kvlint.memory.vllm.VllmSettings` for vLLM; None for
            TGI and SGLang, whose models read the parsed :class:`~kvlint.types.ServingConfig` directly).
        detail: the engine's full plan (``plan`` plus the engine's own figures: fit check, warmup, pool), or
            None when the model or GPU is unknown or the memory model cannot size this configuration.
        error: why there is no plan although model and GPU are known (shown by KV501/KV502/KV503).
        model_note: a note about the model to show beside it (a speculative draft that could not be
            resolved and was planned without).
    """

    settings: Any = None
    detail: PlanDetail | None = None
    error: str | None = None
    model_note: str | None = None

    @property
    def plan(self) -> MemoryPlan | None:
        """The engine-neutral per-GPU memory plan, or None."""
        return self.detail.plan if self.detail is not None else None


def plannable_gpu(placement: Placement | None, engine: str) -> tuple[Accelerator, int] | None | str:
    """``(accelerator, device total in bytes)`` when the GPU memory models apply to ``placement``;
    None when the GPU is unknown; a reason (str) when it is known but not a CUDA/ROCm GPU."""
    if placement is None or placement.accelerator is None or not placement.memory_bytes:
        return None
    acc = placement.accelerator
    if acc.vendor not in ("nvidia", "amd"):
        return f"{acc.name} is not a CUDA/ROCm GPU; the {engine} GPU memory model does not apply"
    return acc, int(placement.memory_bytes)


def _vllm_settings(serving: ServingConfig, options: Options) -> tuple[VllmSettings, str | None]:
    """vLLM settings with a ``--speculative-config`` draft model resolved (models stage, offline rules of
    ``options``); returns the settings and a note when the draft could not be resolved."""
    from kvlint.models import resolve_model

    settings = settings_from_config(serving)
    draft_id = settings.speculative_model_id
    if not draft_id or settings.speculative_model is not None:
        return settings, None
    try:
        draft = resolve_model(
            str(draft_id),
            model_dirs=options.model_dirs,
            model_paths=options.model_paths,
            allow_hub=options.allow_hub,
            allow_local_paths=options.allow_local_paths,
            catalogues=options.model_catalogues,
        )
    except Exception as exc:  # the draft is second-order: plan without it and say so
        return settings, f"speculative draft model '{draft_id}' not resolved ({exc}); planned without it"
    return replace(settings, speculative_model=draft), None


def _detail(
    serving: ServingConfig,
    settings: Any,
    model: ModelSpec,
    placement: Placement,
    gpu: tuple[Accelerator, int],
    changes: dict[str, Any] | None = None,
) -> PlanDetail:
    """One run of the engine's memory model. Raises what the model raises (see ``_PLAN_ERRORS``)."""
    acc, total = gpu
    kw: dict[str, Any] = {"gpu_name": acc.name, "compute_capability": acc.compute_capability}
    if serving.engine == "vllm":
        return plan_vllm_detailed(replace(settings, **changes) if changes else settings, model, total, **kw)
    if serving.engine == "tgi":
        return plan_tgi_detailed(serving, model, total, gpus=placement.gpus, overrides=changes, **kw)
    if serving.engine == "sglang":
        return plan_sglang_detailed(serving, model, total, gpus=placement.gpus, overrides=changes, **kw)
    raise PlanError(f"no memory model for engine {serving.engine!r}")


def plan_container(
    serving: ServingConfig, model: ModelSpec | None, placement: Placement | None, options: Options
) -> PlanOutcome:
    """Plan one serving container on the GPU it lands on.

    Returns a :class:`PlanOutcome`: settings always for vLLM when they can be read; ``detail`` when model and
    GPU are known and the memory model sizes the configuration; ``error`` otherwise (None when simply the model
    or GPU is unknown, which the resolution rules report). Never raises on user input.
    """
    settings: Any = None
    note: str | None = None
    if serving.engine == "vllm" and model is not None:
        try:
            settings, note = _vllm_settings(serving, options)
        except Exception as exc:
            return PlanOutcome(error=f"settings: {exc}")
    if model is None:
        return PlanOutcome(settings=settings, model_note=note)
    gpu = plannable_gpu(placement, serving.engine)
    if gpu is None or isinstance(gpu, str):
        return PlanOutcome(settings=settings, error=gpu, model_note=note)
    assert placement is not None
    try:
        detail = _detail(serving, settings, model, placement, gpu)
    except PlanError as exc:
        return PlanOutcome(settings=settings, error=str(exc), model_note=note)
    except _PLAN_ERRORS as exc:
        return PlanOutcome(settings=settings, error=f"{type(exc).__name__}: {exc}", model_note=note)
    return PlanOutcome(settings=settings, detail=detail, model_note=note)


def replan(cr: ContainerResult, placement: Placement | None = None, **changes: Any) -> PlanDetail | None:
    """The container's plan again with ``changes`` applied, or on another ``placement`` (a candidate GPU).

    ``changes`` name engine settings: :class:`~kvlint.memory.vllm.VllmSettings` fields for vLLM
    (``max_model_len=16384``, ``tensor_parallel_size=2``), launcher field names for TGI (``num_shard``,
    ``max_total_tokens``...) and SGLang (``tp_size``, ``mem_fraction_static``...). Returns None when the
    container has no model or GPU, or the changed configuration cannot be sized (so a remedy that does not
    plan is never offered). Pure: ``cr`` is not modified.
    """
    placement = placement or cr.placement
    if cr.model is None or placement is None:
        return None
    if cr.serving.engine == "vllm" and cr.settings is None:
        return None
    gpu = plannable_gpu(placement, cr.serving.engine)
    if gpu is None or isinstance(gpu, str):
        return None
    try:
        return _detail(cr.serving, cr.settings, cr.model, placement, gpu, changes or None)
    except _PLAN_ERRORS:
        return None


# --------------------------------------------------------------------------------------------------
# the fleet verdict: where a workload that names no GPU fits


def fit_verdict(detail: PlanDetail) -> str:
    """``fits`` | ``risky`` | ``fails``: whether the engine starts and serves one request of its full context
    limit on this GPU, across kvlint's prediction band.

    vLLM: :attr:`kvlint.memory.vllm.VllmPlanDetail.verdict` (the start-up fit check E1/E2 at both ends of the
    band). TGI: the shard loads (weights under ``cuda_memory_fraction``), the warmup prefill fits, and the
    user's ``max_total_tokens`` fits ``max_batch_total_tokens`` (risky when only the band's upper part holds
    it). SGLang: the weights load, the pool is positive and holds one ``context_length`` request (risky when
    only the band's upper part does).
    """
    if isinstance(detail, VllmPlanDetail):
        return {"ok": "fits", "risky": "risky", "fail": "fails"}[detail.verdict]
    p = detail.plan
    if isinstance(detail, TgiPlanDetail):
        if p.weights_bytes + p.non_torch_bytes > int(detail.cuda_memory_fraction * p.total_bytes):
            return "fails"
        if (
            detail.warmup_oom
            or detail.max_batch_total_tokens <= 0
            or detail.max_input_tokens >= detail.max_total_tokens
        ):
            return "fails"
        if detail.max_total_tokens > detail.max_batch_total_tokens:
            return "fails"
        if (
            detail.user_max_total_tokens is not None
            and p.num_blocks_low * p.block_size < detail.max_total_tokens
        ):
            return "risky"
        return "fits"
    if p.weights_bytes > detail.pre_free_bytes or detail.rest_bytes <= 0 or detail.max_total_num_tokens <= 0:
        return "fails"
    if detail.max_total_num_tokens < detail.context_length:
        return "fails"
    return "risky" if p.max_concurrency_low < 1.0 else "fits"


@dataclass(frozen=True)
class FleetEntry:
    """The container planned on one accelerator of a fleet.

    ``gpus`` is the count per pod it was planned with (the container's GPU limit, else the engine's workers);
    ``detail`` the engine's plan there (None with ``error`` when it cannot be sized); ``verdict`` from
    :func:`fit_verdict`, or ``unknown``.
    """

    accelerator: Accelerator
    gpus: int
    detail: PlanDetail | None
    verdict: str
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of one entry of a workload's ``fleet`` list (``kvlint check --format json``)."""
        p = self.detail.plan if self.detail is not None else None
        return {
            "accelerator": self.accelerator.id,
            "name": self.accelerator.name,
            "gpus": self.gpus,
            "verdict": self.verdict,
            "kv_cache_bytes": p.kv_cache_bytes if p else None,
            "kv_tokens": p.capacity_tokens if p else None,
            "max_model_len": p.max_model_len if p else None,
            "max_concurrency": round(p.max_concurrency, 2) if p else None,
            "error": self.error,
        }


def plan_fleet(
    serving: ServingConfig,
    settings: Any,
    model: ModelSpec,
    placement: Placement,
    fleet: tuple[Accelerator, ...],
    gpus: int,
) -> tuple[FleetEntry, ...]:
    """Plan the container on every accelerator of ``fleet`` (used when nothing says which GPU it lands on),
    ``gpus`` per pod. Never raises on user input: an accelerator the model cannot be sized on gets verdict
    ``unknown`` and the error."""
    out = []
    for acc in fleet:
        there = replace(
            placement, accelerator=acc, how=f"fleet: {acc.name}", gpus=gpus, memory_bytes_override=None
        )
        gpu = plannable_gpu(there, serving.engine)
        if gpu is None or isinstance(gpu, str):
            out.append(FleetEntry(acc, gpus, None, "unknown", gpu or "no memory total"))
            continue
        try:
            detail = _detail(serving, settings, model, there, gpu)
        except _PLAN_ERRORS as exc:
            out.append(FleetEntry(acc, gpus, None, "unknown", str(exc)))
            continue
        out.append(FleetEntry(acc, gpus, detail, fit_verdict(detail)))
    return tuple(out)
