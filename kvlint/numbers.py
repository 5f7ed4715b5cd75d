"""How kvlint writes two kinds of dimensionless figures, the same way in every report.

* :func:`fraction` -- a memory fraction (vLLM ``gpu_memory_utilization``, SGLang ``mem_fraction_static``, TGI
  ``cuda_memory_fraction``): two decimals, more when the value has them, never rounded to another value
  (``0.9`` is ``0.90``, ``0.925`` stays ``0.925``, SGLang's ``0.9975`` is not ``1.00``).
* :func:`times` (:func:`times_value` for JSON) -- a concurrency (requests of the full context length the KV cache holds at once): two
  decimals, but never rounded up to a whole number it is below (``0.9975`` is ``0.99``, not ``1.00``: one
  full-length request does *not* fit; ``1.997`` is ``1.99`` next to a minimum of 2).

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


def times(x: float) -> str:
    """Concurrency ``x`` with two decimals and thousands separators, rounded down instead of up where rounding
    would reach the next whole number (``0.9975`` -> ``0.99``, ``2.996`` -> ``2.99``): a whole number of
    requests that does not fit is never shown as fitting. Elsewhere as ``f"{x:,.2f}"``."""
    text = f"{x:,.2f}"
    if math.isfinite(x) and x >= 0 and math.floor(float(text.replace(",", ""))) > math.floor(x):
        return f"{math.floor(x * 100) / 100:,.2f}"
    return text


def times_value(x: float) -> float:
    """:func:`times` as a number, for JSON reports: ``round(x, 2)``, except rounded down where rounding would
    reach the next whole number (``0.9975`` -> ``0.99``)."""
    if math.isfinite(x) and x >= 0 and math.floor(round(x, 2)) > math.floor(x):
        return math.floor(x * 100) / 100
    return round(x, 2)
