"""JSON text laid out as ``json.dumps(obj, indent=2)`` lays it out, written without the standard library's
pure-Python encoder.

``json.dumps`` uses its C encoder only without ``indent``; with it, every value is produced by a chain of
generators, each piece passed up through one generator per level of nesting (a SARIF result sits five levels
down), about 40 µs per finding of the SARIF and JSON reports. :func:`dumps_indented` appends the same
pieces to one list in a plain recursion, escaping strings with the C function ``json.dumps`` itself uses
(``ensure_ascii``). The text is the same byte for byte (tests/test_report_jsontext.py compares the two on the
reports of the corpus and fixtures and on generated values); anything other than the JSON types (``dict``,
``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool``, ``None``) is left to ``json.dumps``, which
also raises what it raises for it.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any

__all__ = ["dumps_indented"]

_INFINITY = float("inf")


class _NotJson(Exception):
    """A value :func:`_emit` leaves to ``json.dumps``."""


def dumps_indented(obj: Any) -> str:
    """``json.dumps(obj, indent=2)`` (see the module docstring)."""
    out: list[str] = []
    try:
        _emit(obj, "\n", out)
    except (_NotJson, RecursionError):
        return json.dumps(obj, indent=2)
    return "".join(out)


def _float(f: float) -> str:
    if f != f:
        return "NaN"
    if f == _INFINITY:
        return "Infinity"
    if f == -_INFINITY:
        return "-Infinity"
    return float.__repr__(f)


def _key(k: Any) -> str:
    """A mapping key as ``json.dumps`` writes it (before quoting)."""
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    raise _NotJson


def _emit(o: Any, nl: str, out: list[str]) -> None:
    """Append the text of ``o`` to ``out``; ``nl`` is a line break and the indentation of ``o``'s line."""
    if isinstance(o, str):
        out.append(encode_basestring_ascii(o))
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + "  "
        sep = "{" + inner
        for k, v in o.items():
            out.append(sep + encode_basestring_ascii(k if isinstance(k, str) else _key(k)) + ": ")
            sep = "," + inner
            t = type(v)
            if t is str:
                out.append(encode_basestring_ascii(v))
            elif t is int:
                out.append(int.__repr__(v))
            else:
                _emit(v, inner, out)
        out.append(nl + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + "  "
        sep = "[" + inner
        for v in o:
            out.append(sep)
            sep = "," + inner
            t = type(v)
            if t is str:
                out.append(encode_basestring_ascii(v))
            elif t is int:
                out.append(int.__repr__(v))
            else:
                _emit(v, inner, out)
        out.append(nl + "]")
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    else:
        raise _NotJson
