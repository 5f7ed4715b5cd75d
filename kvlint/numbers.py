"""How kvlint writes two kinds of dimensionless figures, the same way in every report.

* :func:`fraction` -- a memory fraction (vLLM ``gpu_memory_utilization``, SGLang ``mem_fraction_static``, TGI
  ``cuda_memory_fraction``): two decimals, more when the value has them, never rounded to another value
  (``0.9`` is ``0.90``, ``0.925`` stays ``0.925``, SGLang's ``0.9975`` is not ``1.00``).
* :func:`times` (:func:`times_value` for JSON) -- a concurrency (requests of the full context length the KV
  cache holds at once): two decimals, but never rounded up to the limit it is below (``0.9975`` is ``0.99``,
  not ``1.00``: one full-length request does *not* fit; ``1.997`` is ``1.99`` next to KV104's minimum of 2).

The engines' own start-up lines keep their format (vLLM's ``Maximum concurrency ...: X.XXx`` rounds,
:func:`kvlint.report.plan_text.capacity_log_lines`): those quote the engine.
"""

from __future__ import annotations

import math

__all__ = ["fraction", "times", "times_value"]


def fraction(x: float) -> str:
    """``x`` (a share of GPU memory, 0 - 1) with two decimals, or three or four when fewer would round it:
    ``0.90``, ``0.925``, ``0.9975``; beyond four decimals, rounded to four."""
    for digits in (2, 3):
        text = f"{x:.{digits}f}"
        if abs(float(text) - x) < 1e-9:
            return text
    return f"{x:.4f}"


def times(x: float, limit: float = 1.0) -> str:
    """Concurrency ``x`` with two decimals, rounded down instead of up where rounding would reach ``limit`` from
    below (``0.9975`` -> ``0.99``; with ``limit=2``, KV104's minimum, ``1.997`` -> ``1.99``): a number of requests
    that does not fit, or does not reach the minimum, is never shown as reaching it. Elsewhere ``f"{x:.2f}"``."""
    return f"{times_value(x, limit):.2f}"


def times_value(x: float, limit: float = 1.0) -> float:
    """:func:`times` as a number, for JSON reports: ``round(x, 2)``, except rounded down where rounding would
    reach ``limit`` from below (``0.9975`` -> ``0.99``)."""
    if math.isfinite(x) and x < limit <= round(x, 2):
        return math.floor(x * 100) / 100
    return round(x, 2)
