"""Remedies that are re-checked to fit: the one search every capacity rule uses.

A remedy is printed only after the container was planned again with it applied
(:func:`kvlint.memory.stage.replan`, the only way rules re-plan) and the new plan passed the rule's own test.
The searches here are generic over what is changed (a flag value) and what "fits" means (a predicate on
the engine's plan result), so vLLM's ``--max-model-len``, TGI's ``MAX_BATCH_PREFILL_TOKENS`` and SGLang's
``--mem-fraction-static`` remedies share one implementation:

* :func:`first_fitting` -- the first candidate value that fits (tensor-parallel sizes 2, 4, 8).
* :func:`smallest_fitting` -- the smallest integer that fits when fitting is monotone increasing in it
  (``--gpu-memory-utilization`` in hundredths); bisection, bracketed first around a guess when there is one.
* :func:`largest_fitting` -- the largest integer that fits when fitting is monotone decreasing in it
  (``--max-batch-prefill-tokens``); bisection.
* :func:`descending_fitting` -- walk down from a starting value in steps until it fits (``--max-model-len``,
  where the engine's own estimate is the usual first guess).

Each returns ``(value, plan result)`` or None; the caller words the remedy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kvlint.memory.stage import PlanDetail, replan
from kvlint.types import ContainerResult, Placement

__all__ = [
    "MIN_USEFUL_MAX_MODEL_LEN",
    "descending_fitting",
    "first_fitting",
    "largest_fitting",
    "replanned",
    "smallest_fitting",
]

T = TypeVar("T")
Fits = Callable[[PlanDetail], bool]


#: the shortest context (max-model-len, context_length, max_total_tokens; tokens) a remedy may propose: a
#: context below it serves no chat or RAG request worth deploying, so a GPU that fits only that is a GPU too
#: small for the model, and the remedy is more or larger GPUs instead
MIN_USEFUL_MAX_MODEL_LEN = 1024


def replanned(cr: ContainerResult, placement: Placement | None = None, **changes: Any) -> PlanDetail | None:
    """The container's plan with ``changes`` applied (see :func:`kvlint.memory.stage.replan`); None when it
    cannot be planned."""
    return replan(cr, placement, **changes)


def _try(plan_for: Callable[[T], PlanDetail | None], fits: Fits, value: T) -> PlanDetail | None:
    d = plan_for(value)
    return d if d is not None and fits(d) else None


def first_fitting(
    candidates: Iterable[T], plan_for: Callable[[T], PlanDetail | None], fits: Fits
) -> tuple[T, PlanDetail] | None:
    """The first of ``candidates`` whose plan fits, with that plan."""
    for value in candidates:
        d = _try(plan_for, fits, value)
        if d is not None:
            return value, d
    return None


def smallest_fitting(
    lo: int,
    hi: int,
    plan_for: Callable[[int], PlanDetail | None],
    fits: Fits,
    guess: int | None = None,
) -> tuple[int, PlanDetail] | None:
    """The smallest integer in ``(lo, hi]`` that fits, assuming ``lo`` does not and fitting is monotone
    increasing; None when ``hi`` does not fit. ``O(log(hi - lo))`` plans; with a ``guess`` of the answer, that
    value and its neighbour are planned first (they bracket the answer when the guess is right: three plans with
    ``hi``), then bisection on what is left. The answer does not depend on the guess."""
    best = _try(plan_for, fits, hi)
    if best is None or lo >= hi:
        return None
    if guess is not None and lo < guess < hi:
        d = _try(plan_for, fits, guess)
        if d is not None:
            hi, best = guess, d
            if guess - 1 > lo:
                below = _try(plan_for, fits, guess - 1)
                if below is None:
                    lo = guess - 1
                else:
                    hi, best = guess - 1, below
        else:
            lo = guess
            if guess + 1 < hi:
                above = _try(plan_for, fits, guess + 1)
                if above is not None:
                    hi, best = guess + 1, above
    while hi - lo > 1:
        mid = (lo + hi) // 2
        d = _try(plan_for, fits, mid)
        if d is not None:
            hi, best = mid, d
        else:
            lo = mid
    return hi, best


def largest_fitting(
    lo: int, hi: int, plan_for: Callable[[int], PlanDetail | None], fits: Fits
) -> tuple[int, PlanDetail] | None:
    """The largest integer in ``[lo, hi]`` that fits, assuming fitting is monotone decreasing; None when
    ``lo`` does not fit. ``O(log(hi - lo))`` plans."""
    best: tuple[int, PlanDetail] | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        d = _try(plan_for, fits, mid)
        if d is not None:
            best, lo = (mid, d), mid + 1
        else:
            hi = mid - 1
    return best


def descending_fitting(
    start: int,
    next_value: Callable[[int], int],
    plan_for: Callable[[int], PlanDetail | None],
    fits: Fits,
    *,
    max_steps: int = 24,
) -> tuple[int, PlanDetail] | None:
    """Try ``start``, then ``next_value(start)``... (strictly decreasing, stopping at 0) for at most
    ``max_steps`` plans; the first value that fits."""
    value = start
    for _ in range(max_steps):
        if value <= 0:
            return None
        d = _try(plan_for, fits, value)
        if d is not None:
            return value, d
        following = next_value(value)
        if following >= value:
            return None
        value = following
    return None
