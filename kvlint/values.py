"""Lenient coercion of values read from manifests, flags and config.json.

Engine settings arrive as ints, floats, strings or booleans depending on how a manifest spells them;
these helpers turn them into numbers without raising, so a bad value is reported by a rule (KV206)
instead of crashing a stage.
"""

from __future__ import annotations

import functools
from typing import Any


def as_list(x: Any) -> list[Any]:
    """``x`` when it is a list, else ``[]``: a manifest field that should hold a list (``containers``, ``env``)
    but holds a scalar or mapping is read as empty, never iterated."""
    return x if isinstance(x, list) else []


def as_int(x: Any) -> int | None:
    """``int(x)``, or None for None, booleans and anything ``int()`` rejects (an infinite float, YAML's
    ``.inf``, raises OverflowError there, not ValueError)."""
    if x is None or isinstance(x, bool):
        return None
    try:
        return int(x)
    except (TypeError, ValueError, OverflowError):
        return None


#: Digit strings longer than this are not read as integers: 19 digits cover every signed 64-bit value, and
#: Python refuses to convert strings of more than 4,300 digits (``sys.get_int_max_str_digits``).
MAX_DIGITS = 19


def digits(text: Any) -> int | None:
    """The integer a string of 1 to :data:`MAX_DIGITS` ASCII digits ``0-9`` spells (surrounding blanks
    ignored), else None. Unlike ``s.isdigit()`` before ``int(s)``, never raises: ``str.isdigit`` is also
    true of superscripts such as ``"²"``, which ``int()`` rejects, and of 5,000-digit strings, which it
    refuses to convert."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not t or len(t) > MAX_DIGITS or not t.isascii() or not t.isdigit():
        return None
    return int(t)


def as_float(x: Any) -> float | None:
    """``float(x)``, or None for None, booleans and anything ``float()`` rejects."""
    if x is None or isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def parse_cc(cc: str | None) -> tuple[int, int] | None:
    """CUDA compute capability ``"8.9"`` -> ``(8, 9)``; None when absent or unreadable. Memoised by text (every
    memory plan reads its GPU's capability a few times; a catalogue has a few dozen)."""
    if not cc:
        return None
    return _parse_cc_text(cc) if type(cc) is str else _parse_cc_text.__wrapped__(str(cc))


@functools.lru_cache(maxsize=1024)
def _parse_cc_text(cc: str) -> tuple[int, int] | None:
    major, _, minor = cc.partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        return None


def truthy(s: str | None) -> bool | None:
    """An environment switch as the engines read it: ``1``/``true``/``yes``/``on`` (any case) -> True,
    anything else -> False, unset (None) -> None."""
    if s is None:
        return None
    return s.strip().lower() in {"1", "true", "yes", "on"}
