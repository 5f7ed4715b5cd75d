"""Memos of the memory models' pure functions of one model and a few small values.

A resolved :class:`~kvlint.types.ModelSpec` is shared by every plan of its container (the plan stage, the
fleet's GPUs, the remedies' re-plans) and, through the models stage's own memo, by the containers naming the same
model. Figures that depend on the model and small values only (its weight bytes at a dtype width, its derived
``max_model_len`` under a release) are then the same in every one of those plans; :func:`per_model` keeps them.

The memo is keyed on the model's identity and the other arguments by value and type (so ``2`` and ``2.0`` stay
apart; a :class:`~kvlint.memory.versions.ReleaseVersion`, of either of its classes, by its text, since ``0.11.0+cu130`` equals ``0.11.0`` but
is printed as it is); it holds the model, so an id cannot be reused while its entry lives, and is cleared when full. ModelSpec is
frozen and nothing edits its config, so an answer stays the function's answer. Results are shared: a memoised
function returns immutable values (ints, floats, strings, tuples). Nothing of a whole container or document is
kept. The undecorated function stays reachable as ``__wrapped__`` (the tests compare the two).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from kvlint.memory.versions import PEP440Version, ReleaseVersion

__all__ = ["per_model", "per_object", "by_value", "MEMO_MAX"]

R = TypeVar("R")

#: entries one memoised function keeps before it starts again (a run plans a few hundred distinct models)
MEMO_MAX = 1024


def per_model(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn(model, *args)`` memoised by ``id(model)`` and ``args`` (hashable; compared with their types, versions
    by their text); see the module docstring. Keyword arguments are not accepted."""
    return per_object(fn)


def per_object(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn(obj, *args)`` memoised by the identity of ``obj`` and ``args`` by value and type (versions also by
    their text): :func:`per_model`'s memo for any object of which a run hands out one per value (a resolved
    release, a model's layer counts). The memo holds ``obj``, so its id cannot be reused while its entry lives.
    Keyword arguments are not accepted."""
    memo: dict[tuple[Any, ...], tuple[Any, R]] = {}

    @functools.wraps(fn)
    def memoised(obj: Any, *args: Any) -> R:
        key: Any = id(obj)
        if args:
            types = tuple(map(type, args))
            key = (
                (key, args, types, tuple(map(str, args)))
                if ReleaseVersion in types or PEP440Version in types
                else (key, args, types)
            )
        hit = memo.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        out = fn(obj, *args)
        if len(memo) >= MEMO_MAX:
            memo.clear()
        memo[key] = (obj, out)
        return out

    memoised.cache_clear = memo.clear  # type: ignore[attr-defined]
    return memoised


def by_value(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn(*args)`` memoised by ``args`` alone, by value and type: for a pure function of small hashable values
    (layer specs and their counts, a tensor-parallel size, a dtype width) that returns values its callers do not
    edit. Keyword arguments are not accepted."""
    memo: dict[tuple[Any, ...], R] = {}

    @functools.wraps(fn)
    def memoised(*args: Any) -> R:
        types = tuple(map(type, args))
        key = (
            (args, types, tuple(map(str, args)))
            if ReleaseVersion in types or PEP440Version in types
            else (args, types)
        )
        try:
            return memo[key]
        except KeyError:
            pass
        out = fn(*args)
        if len(memo) >= MEMO_MAX:
            memo.clear()
        memo[key] = out
        return out

    memoised.cache_clear = memo.clear  # type: ignore[attr-defined]
    return memoised
