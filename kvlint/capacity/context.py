"""Resolve an engine command line into what the capacity tools need: vLLM settings, model, accelerator, plan.

Goes through :func:`kvlint.capacity.plan_command.plan_command`, so the numbers are exactly the linter's and ``kvlint plan``'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvlint.types import Accelerator, MemoryPlan, ModelSpec

if TYPE_CHECKING:
    from kvlint.memory.vllm import VllmPlanDetail, VllmSettings
    from kvlint.options import Options


class CapacityError(ValueError):
    """The command line cannot be capacity-planned (not vLLM, model unavailable, no accelerator, no plan)."""


@dataclass(frozen=True)
class EngineContext:
    """One vLLM command line resolved: ``settings`` (:class:`~kvlint.memory.vllm.VllmSettings`), ``model``,
    ``accelerator`` (None when no ``--accelerator``), ``plan`` on that accelerator (None without one),
    ``total_bytes`` per GPU (``--gpu-memory`` override or the catalogue's CUDA total), ``argv``."""

    argv: tuple[str, ...]
    settings: VllmSettings
    model: ModelSpec
    accelerator: Accelerator | None
    total_bytes: int | None
    plan: MemoryPlan | None


def resolve(argv: list[str], options: Options) -> EngineContext:
    """Parse and plan ``argv`` (``["vllm", "serve", MODEL, ...]``) with ``options`` (``--accelerator``,
    ``--gpu-memory``, ``--model-dir``, ``--offline``, ``--engine-version``).

    Raises :class:`CapacityError` for non-vLLM commands, unknown accelerators or models without a config.json
    (message from model resolution, saying how to provide one), or a plan error on the given accelerator.
    """
    from kvlint.capacity.plan_command import PlanRequestError, plan_command

    try:
        out = plan_command(list(argv), options)
    except PlanRequestError as exc:
        raise CapacityError(str(exc)) from exc
    cr = out.result
    if cr.serving.engine != "vllm":
        raise CapacityError(f"capacity planning models vLLM only (got {cr.serving.engine})")
    if cr.model is None:
        raise CapacityError(str(cr.model_error or "model unavailable"))
    if cr.settings is None:
        raise CapacityError(cr.plan_error or "cannot read the vLLM settings")
    acc = cr.placement.accelerator if cr.placement else None
    total = cr.placement.memory_bytes if cr.placement else None
    if acc is not None and cr.plan is None:
        raise CapacityError(f"no memory plan on {acc.name}: {cr.plan_error or 'unknown reason'}")
    return EngineContext(tuple(argv), cr.settings, cr.model, acc, total, cr.plan)


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
