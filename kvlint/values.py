"""Lenient coercion of values read from manifests, flags and config.json.

Engine settings arrive as ints, floats, strings or booleans depending on how a manifest spells them;
these helpers turn them into numbers without raising, so a bad value is reported by a rule (KV206)
instead of crashing a stage.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

import yaml


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


#: A string pydantic's lax ``int`` reads as a whole number: blanks around, an optional sign, ASCII digits with single
#: underscores between them, an optional ``.`` and zeros (``" +6.000 "`` is 6; ``"6."``, ``"6e0"``, ``"1__0"`` are
#: refused), as pydantic 2.14's ``TypeAdapter(int).validate_python`` does.
_LAX_INT_RE = re.compile(r"([+-]?)([0-9]+(?:_[0-9]+)*)(?:\.0+)?")


def lax_int(value: Any) -> int | None:
    """An ``int`` field of a pydantic model in lax mode (vLLM's config dataclasses, ``pydantic.dataclasses``): an
    integer; a boolean (``True`` is 1, ``False`` 0); a float with no fraction; a string of :data:`_LAX_INT_RE`. Else
    None: a fraction, a word, an infinite float, or more than :data:`MAX_DIGITS` digits (never converted)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and value.isascii():
        m = _LAX_INT_RE.fullmatch(value.strip())
        if m is None or len(m.group(2)) > MAX_DIGITS + m.group(2).count("_"):
            return None
        n = int(m.group(2).replace("_", ""))
        return -n if m.group(1) == "-" else n
    return None


def as_float(x: Any) -> float | None:
    """``float(x)``, or None for None, booleans and anything ``float()`` rejects."""
    if x is None or isinstance(x, bool):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def finite_number(x: Any) -> float | None:
    """A config value read as a number: an ``int`` or ``float`` (not a boolean) whose value is finite, else None
    (a string, a list, NaN, an infinity, an integer too large for a float). For numbers a model's config.json or
    ``--hf-overrides`` may give as anything JSON can spell (``NaN`` and ``Infinity`` included), where ``int()``
    or ``float()`` of the value would raise."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        f = float(x)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _plain(v: Any) -> Any:
    """``v`` with its mappings, lists and scalars as the plain Python types PyYAML's safe dumper writes (the
    loader's position-carrying ``LDict``/``LList`` are subclasses it refuses); anything else as its text."""
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    return str(v)


def yaml_text(v: Any, limit: int = 60) -> str:
    """``v`` (a value read from a manifest) spelt in YAML for a message, in flow style: ``true``, ``null``,
    ``2.5``, ``{a: 1}``, ``[1, two]``, not Python's ``True``, ``None``, ``{'a': 1}``. A string on its own is
    single-quoted (``'two'``, YAML's quoted form, so the message shows it is text); inside a mapping or list a
    string is quoted only where YAML needs it. Longer than ``limit`` characters: cut, with ``...``."""
    plain = _plain(v)
    if isinstance(plain, str):
        style = "'" if plain.isprintable() else '"'
        text = yaml.safe_dump(plain, default_style=style, allow_unicode=True, width=2**30)
    else:
        text = yaml.safe_dump(
            plain, default_flow_style=True, allow_unicode=True, sort_keys=False, width=2**30
        )
    text = text.removesuffix("\n").removesuffix("\n...").replace("\n", " ").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def schema_kind(value: Any) -> str:
    """The type name a structural schema's validation error gives a value that is not a string (apiextensions-
    apiserver: ``must be of type string: "integer"``): ``boolean``, ``integer``, ``number``, ``array`` or
    ``object``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "array" if isinstance(value, list) else "object"


#: How Go's encoding/json names a JSON value that is not a string ("json: cannot unmarshal number into Go struct
#: field ... of type string"), by the Python type the loader gives it.
_GO_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "bool"),
    (int, "number"),
    (float, "number"),
    (list, "array"),
)


def go_kind(value: Any) -> str | None:
    """The JSON kind Go's decoder names for ``value`` when it is not a string (``null`` decodes into a string as
    ``""``, so None is no error), else None: what the API server says of a built-in kind's field (``core/v1``
    ``Container``)."""
    if value is None or isinstance(value, str):
        return None
    for t, kind in _GO_KINDS:
        if isinstance(value, t):
            return kind
    return "object" if isinstance(value, dict) else "number"


def structural_kind(value: Any) -> str | None:
    """:func:`schema_kind` of ``value`` when it is not a string, else None (null too, which the API server
    prunes): what a CRD's structural schema says of a field it types ``string``."""
    return None if value is None or isinstance(value, str) else schema_kind(value)


def non_string_items(items: Any, kind: Callable[[Any], str | None]) -> list[tuple[int, str]]:
    """``(index, kind)`` of each item of a list typed ``[]string`` (a container's ``command``/``args``, a CRD's
    ``args``) written as something else, by ``kind`` (:func:`go_kind` for a built-in kind, :func:`structural_kind`
    for a custom resource); empty when ``items`` is not a list. KV005's one reading of a string list, for a pod
    and for an operator object that builds one (llmaz's Playground)."""
    if not isinstance(items, list):
        return []
    return [(i, k) for i, v in enumerate(items) if (k := kind(v))]


def non_string_env(env: Any, kind: Callable[[Any], str | None]) -> list[tuple[int, str, str]]:
    """``(index, "name" or "value", kind)`` for each ``core/v1`` ``EnvVar`` entry of the list ``env`` whose name or
    value, both typed ``string``, is written as something else (``value: 1``, ``value: true``), by ``kind`` as in
    :func:`non_string_items`; entries that are not mappings are skipped."""
    if not isinstance(env, list):
        return []
    return [
        (i, part, k)
        for i, e in enumerate(env)
        if isinstance(e, dict)
        for part in ("name", "value")
        if (k := kind(e.get(part)))
    ]
