"""Build the loader's positioned documents straight from an object already decoded from JSON.

A review worker lints the object under review as if it were a file holding that object as indented JSON
(``json.dumps(obj, indent=1, ensure_ascii=False)``), so every value carries a line and column
(:func:`kvlint.webhook.worker.lint_object`). Writing that text and parsing it back with the YAML loader
(:func:`kvlint.load.load_text`) cost about a fifth of a review's CPU in the worker. The layout of that text is
fixed by the ``json`` module (one entry per line, one space of indentation per level, ``"key": value``,
``{}``/``[]`` for empty containers), so :func:`load_object` computes each position from the object itself and
builds the same :class:`~kvlint.source.LDict`/:class:`~kvlint.source.LList` tree the loader would:
scalars that JSON writes unquoted (numbers, ``true``, ``false``, ``null``) are typed by the loader's own YAML
1.1 resolution of their JSON text; strings stay strings.

It answers only where that equivalence is plain, and returns None otherwise, so that the caller reads the text
with :func:`kvlint.load.load_text` as before:

* a string (key or value) with a character the YAML reader treats differently from JSON: line breaks other than
  LF (``U+0085``, ``U+2028``, ``U+2029``, which YAML folds inside a quoted scalar), characters YAML does not
  accept raw (``U+007F``-``U+009F``, surrogates, ``U+FEFF``, ``U+FFFE``, ``U+FFFF``), and, to keep the
  check simple, any character above ``U+FFFF``;
* a string holding ``{{`` (a possible template action, KV002), ``kvlint:`` (or another spelling of a suppression
  comment's start, :data:`kvlint.load.SUPPRESSION_VARIANTS`) or ``# Source: `` (the loader then keeps the text for
  comment suppressions or Helm source mapping);
* a key longer than 1,000 characters as JSON (YAML limits implicit keys to 1,024), a key that is not a
  string, a value of another type than dict, list, str, int, float, bool or None, a float that is not
  finite;
* nesting of :data:`kvlint.load.MAX_DEPTH` levels or more, more than :data:`kvlint.load.MAX_NODES` values.

The walk itself is kept cheap (it runs on every review): positions are stored packed, one int each, as the
loader stores a file's (:class:`kvlint.source.Packing`; a :class:`~kvlint.source.Loc` is made only for a position
that is read, a few per review, instead of one per key and value), containers are built without their ``__init__``, a key's JSON width is remembered for the next object (bounded
table of short keys), and strings are checked with substring searches where they are ASCII.

The lines of that text, which a review reads only to place a finding inside a script
(:class:`LazyJsonLines`), are written by :func:`dump_lines` from the same object with the ``json`` module's
string encoder, several times faster than its indenting encoder; a review that places a finding reads the
number of lines and the script's own line, which are counted and written alone (:func:`_line_sizes`,
:func:`_line_at`) without writing the rest.

``tests/test_webhook_jsonload.py`` checks the result against :func:`kvlint.load.load_text` of the JSON text,
positions included, on every document of the corpus and the fixtures and on edge cases.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from typing import Any

from kvlint.load import (
    _YAML_RAW,
    MAX_DEPTH,
    MAX_NODES,
    SUPPRESSION_MARKER,
    SUPPRESSION_VARIANTS,
    _escape_yaml_raw,
    _flatten,
    _no_api_version,
    _resolve_scalar_uncached,
    holds_suppression_marker,
)
from kvlint.source import LDict, LList, Loc, Packing
from kvlint.types import Document, LoadResult

__all__ = ["LazyJsonLines", "dump_lines", "dump_text", "load_object"]

#: What makes the loader keep a file's text for Helm template mapping (``kvlint.load.load_text``).
_SOURCE_MARKER = "# Source: "
#: Characters for which the fast path gives way to the loader (see the module docstring). Control characters
#: below U+0020 are safe: JSON writes them as escapes, which YAML's double-quoted style reads back the same.
_UNSAFE = re.compile(
    "[^\x00-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]|\\{\\{|"
    + re.escape(SUPPRESSION_MARKER)
    + "|"
    + "|".join(map(re.escape, SUPPRESSION_VARIANTS))
    + "|"
    + re.escape(_SOURCE_MARKER)
)
_MAX_KEY_CHARS = 1000
_encode = json.encoder.encode_basestring  # type: ignore[attr-defined]
_PLAIN: dict[str, Any] = {}
_PLAIN_MAX = 4096


class _GiveWay(Exception):
    """The object holds something the fast path does not reproduce: use the loader."""


def dump_text(obj: Any) -> str:
    """The text the object is linted as: ``json.dumps(obj, indent=1, ensure_ascii=False)``, with the characters
    YAML does not read raw (:data:`kvlint.load._YAML_RAW`: the line breaks YAML folds inside a quoted scalar, a
    syntax error in a key, and the characters PyYAML refuses raw) written as ``\\uXXXX`` escapes, which YAML's
    double-quoted style reads back as the character (lone surrogates are left to the loader, which reads each as
    U+FFFD, as the API server's decoder stores it). Written raw, a Deployment whose env value held a DEL
    (``U+007F``) or whose CRD map key held a ``U+2028`` was not read at all: KV001 "YAML syntax error:
    unacceptable character" (or "while parsing a flow mapping"), and the review denied an object the API server
    had accepted; a ``U+2028`` in a value was read as a space."""
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:
        return text
    return _YAML_RAW.sub(_escape_yaml_raw, text)


def _plain(text: str) -> Any:
    """The loader's value for the unquoted JSON scalar ``text`` (YAML 1.1 implicit resolution), memoised."""
    hit = _PLAIN.get(text, _PLAIN)
    if hit is _PLAIN:
        if len(_PLAIN) >= _PLAIN_MAX:
            _PLAIN.clear()
        hit = _PLAIN[text] = _resolve_scalar_uncached(text, None, True)
    return hit


def _safe(text: str) -> bool:
    """Whether ``text`` holds nothing :data:`_UNSAFE` matches. An ASCII string (``str.isascii`` reads a flag)
    can only hold ``U+007F`` of the unsafe characters, so four substring searches decide for it, several times
    faster than the pattern, which tries its alternatives at every character."""
    if text.isascii():
        return (
            "{{" not in text
            and not holds_suppression_marker(text)
            and _SOURCE_MARKER not in text
            and "\x7f" not in text
        )
    return _UNSAFE.search(text) is None


#: key -> columns its JSON form and ``": "`` take (``len(_encode(key)) + 2``), for keys :func:`_safe` passes
#: and at most :data:`_KEY_MEMO_CHARS` long; cleared when it reaches :data:`_PLAIN_MAX` entries.
_KEY_WIDTH: dict[str, int] = {}
_KEY_MEMO_CHARS = 64
#: How a position (0-based line and column of the JSON text) is packed into one int, as the loader packs a
#: file's (:class:`kvlint.source.Packing`, line base 1): the column in the low :data:`_SHIFT` bits. A column of
#: that text is at most the nesting depth plus a key's JSON width and ``": "`` (a value starts there; keys wider
#: than :data:`_MAX_KEY_CHARS` give way), under ``2**_SHIFT``.
_SHIFT = (MAX_DEPTH + _MAX_KEY_CHARS + 4).bit_length()
_LINE = 1 << _SHIFT
_new_dict = dict.__new__
_new_list = list.__new__


class _Builder:
    """One walk over the object in the order ``json.dumps`` writes it, tracking the current 0-based line."""

    __slots__ = ("path", "packing", "line", "nodes", "true", "false", "null")

    def __init__(self, path: str) -> None:
        self.path = path
        self.packing = Packing(path, 1, _SHIFT)
        self.line = 0
        self.nodes = 0
        self.true = _plain("true")
        self.false = _plain("false")
        self.null = _plain("null")

    def scalar(self, value: Any) -> Any:
        t = type(value)
        if t is str:
            if not _safe(value):
                raise _GiveWay
            return value
        if t is bool:
            return self.true if value else self.false
        if value is None:
            return self.null
        if t is int:
            return _plain(int.__repr__(value))
        if t is float:
            if not math.isfinite(value):
                raise _GiveWay
            return _plain(float.__repr__(value))
        raise _GiveWay

    def node(self, value: Any, column: int, depth: int) -> Any:
        """The loaded value of ``value`` written at ``column`` of the current line, at nesting ``depth``
        (containers open so far)."""
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _GiveWay
        t = type(value)
        if t is dict:
            if depth >= MAX_DEPTH - 1:
                raise _GiveWay
            out = _new_dict(LDict)  # LDict(loc=...) without its __init__'s argument passing
            # positions packed as the loader packs them (kvlint.source.Packing), made Locs when first read
            out._loc = self.line * _LINE + column
            out._packing = self.packing
            out._locs = out._key_locs = None
            locs = out._plocs = {}
            key_locs = out._pkey_locs = {}
            if not value:
                return out
            indent = depth + 1
            widths = _KEY_WIDTH
            line = self.line
            nodes = self.nodes
            for k, v in value.items():
                width = widths.get(k) if type(k) is str else None
                if width is None:
                    if type(k) is not str:
                        raise _GiveWay
                    width = len(_encode(k)) + 2
                    if width > _MAX_KEY_CHARS + 2 or not _safe(k):
                        raise _GiveWay
                    if len(k) <= _KEY_MEMO_CHARS:
                        if len(widths) >= _PLAIN_MAX:
                            widths.clear()
                        widths[k] = width
                line += 1
                col = indent + width
                key_locs[k] = line * _LINE + indent
                tv = type(v)
                if tv is dict or tv is list:
                    self.line = line
                    self.nodes = nodes + 1  # the key: the loader counts it as a value too
                    item = self.node(v, col, depth + 1)
                    line = self.line
                    nodes = self.nodes
                    locs[k] = item._loc
                else:
                    nodes += 2  # the key and the value
                    if tv is str:  # _safe(v), inlined for the common case
                        if not (
                            v.isascii()
                            and "{{" not in v
                            # every spelling of a suppression comment holds one of these (else _safe decides)
                            and "lint" not in v
                            and "LINT" not in v
                            and "Lint" not in v
                            and _SOURCE_MARKER not in v
                            and "\x7f" not in v
                        ) and not _safe(v):
                            raise _GiveWay
                        item = v
                    else:
                        item = self.scalar(v)
                    locs[k] = line * _LINE + col
                out[k] = item
            self.line = line + 1  # the closing brace
            self.nodes = nodes
            return out
        if t is list:
            if depth >= MAX_DEPTH - 1:
                raise _GiveWay
            seq = _new_list(LList)  # LList(loc=...) without its __init__
            seq._loc = self.line * _LINE + column
            seq._packing = self.packing
            seq._locs = None
            seq_locs = seq._plocs = []
            if not value:
                return seq
            indent = depth + 1
            line = self.line
            nodes = self.nodes
            for v in value:
                line += 1
                tv = type(v)
                if tv is dict or tv is list:
                    self.line = line
                    self.nodes = nodes
                    item = self.node(v, indent, depth + 1)
                    line = self.line
                    nodes = self.nodes
                    seq_locs.append(item._loc)
                else:
                    nodes += 1
                    item = self.scalar(v)
                    seq_locs.append(line * _LINE + indent)
                seq.append(item)
            self.line = line + 1  # the closing bracket
            self.nodes = nodes
            return seq
        raise _GiveWay


def load_object(obj: dict[str, Any], path: str) -> LoadResult | None:
    """What ``kvlint.load.load_text(dump_text(obj), path)`` returns, built without writing or parsing the
    text; None when ``obj`` holds something outside the cases reproduced exactly (see the module
    docstring), for the caller to load the text instead. ``obj`` is not modified."""
    if type(obj) is not dict:
        return None
    builder = _Builder(path)
    try:
        root = builder.node(obj, 0, 0)
    except (_GiveWay, RecursionError):
        return None
    if builder.nodes > MAX_NODES:  # keys and scalars are counted without a check each: the loader says why
        return None
    result = LoadResult(files=1)
    result.read_paths.add(path)
    result.documents.extend(_flatten(Document(path, 0, root, Loc(path, 1, 1))))
    # an object with no apiVersion (an item of a List; the API server gives every object under review one)
    result.findings.extend(f for f in map(_no_api_version, result.documents) if f is not None)
    return result


_SCALAR_TEXT: dict[Any, str] = {True: "true", False: "false", None: "null"}


def dump_lines(obj: Any) -> list[str]:
    """``dump_text(obj).split("\\n")`` for an object :func:`load_object` builds (str keys; dict, list, str,
    int, float, bool and None values; finite floats), written line by line with the ``json`` module's own
    string encoder and number reprs instead of its pure-Python indenting encoder (several times slower).
    Raises _GiveWay for anything else."""
    out: list[str] = []
    append = out.append
    enc = _encode
    scalar = _scalar_text

    def walk(v: Any, head: str, depth: int, tail: str) -> None:
        t = type(v)
        if t is dict:
            if not v:
                append(head + "{}" + tail)
                return
            append(head + "{")
            pad = " " * (depth + 1)
            last = len(v)
            for i, (k, x) in enumerate(v.items(), 1):
                if type(k) is not str:
                    raise _GiveWay
                sep = "," if i < last else ""
                tx = type(x)
                if tx is dict or tx is list:
                    walk(x, pad + enc(k) + ": ", depth + 1, sep)
                else:
                    append(pad + enc(k) + ": " + scalar(x) + sep)
            append(" " * depth + "}" + tail)
        elif t is list:
            if not v:
                append(head + "[]" + tail)
                return
            append(head + "[")
            pad = " " * (depth + 1)
            last = len(v)
            for i, x in enumerate(v, 1):
                sep = "," if i < last else ""
                tx = type(x)
                if tx is dict or tx is list:
                    walk(x, pad, depth + 1, sep)
                else:
                    append(pad + scalar(x) + sep)
            append(" " * depth + "]" + tail)
        else:
            append(head + scalar(v) + tail)

    walk(obj, "", 0, "")
    return out


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _line_sizes(obj: Any) -> tuple[int, dict[int, int]]:
    """The number of lines of ``dump_text(obj)`` and, for each non-empty container in it, the lines it
    takes (keyed by ``id``; an empty container and a scalar take one), counted without writing them: the
    layout :func:`dump_lines` writes (a non-empty container: its opening line, its entries', its closing
    line). Raises _GiveWay for what :func:`dump_lines` does not write (a key that is not a string, a value
    of another type)."""
    sizes: dict[int, int] = {}
    scalars = _SCALAR_TYPES

    def count(v: Any) -> int:
        n = 2
        if type(v) is dict:
            for k, x in v.items():
                if type(k) is not str:
                    raise _GiveWay
                tx = type(x)
                if (tx is dict or tx is list) and x:
                    n += count(x)
                elif tx in scalars or tx is dict or tx is list:
                    n += 1
                else:
                    raise _GiveWay
        else:
            for x in v:
                tx = type(x)
                if (tx is dict or tx is list) and x:
                    n += count(x)
                elif tx in scalars or tx is dict or tx is list:
                    n += 1
                else:
                    raise _GiveWay
        sizes[id(v)] = n
        return n

    t = type(obj)
    if (t is dict or t is list) and obj:
        return count(obj), sizes
    if t in _SCALAR_TYPES or t is dict or t is list:
        return 1, sizes
    raise _GiveWay


def _line_at(obj: Any, sizes: dict[int, int], index: int) -> str:
    """Line ``index`` (0-based, within the text) of :func:`dump_lines` of ``obj``, written alone: the walk
    goes down the one container holding it, stepping over the others by their sizes (:func:`_line_sizes`)."""
    v, head, depth, tail, line = obj, "", 0, "", 0
    while True:
        t = type(v)
        if not ((t is dict or t is list) and v):
            if t is dict:
                return head + "{}" + tail
            if t is list:
                return head + "[]" + tail
            return head + _scalar_text(v) + tail
        if index == line:
            return head + ("{" if t is dict else "[")
        if index == line + sizes[id(v)] - 1:
            return " " * depth + ("}" if t is dict else "]") + tail
        pad = " " * (depth + 1)
        last = len(v)
        at = line + 1
        entries: Any = v.items() if t is dict else enumerate(v)
        for i, (k, x) in enumerate(entries, 1):
            tx = type(x)
            n = sizes[id(x)] if (tx is dict or tx is list) and x else 1
            if index < at + n:
                key = pad + _encode(k) + ": " if t is dict else pad
                v, head, depth, tail, line = x, key, depth + 1, "," if i < last else "", at
                break
            at += n
        else:  # pragma: no cover - the sizes cover every line
            raise IndexError(index)


def _scalar_text(v: Any) -> str:
    """A scalar as :func:`dump_lines` writes it."""
    t = type(v)
    if t is str:
        return _encode(v)  # type: ignore[no-any-return]
    if t is bool or v is None:
        return _SCALAR_TEXT[v]
    if t is int:
        return int.__repr__(v)
    if t is float and math.isfinite(v):
        return float.__repr__(v)
    raise _GiveWay


class LazyJsonLines(Sequence[str]):
    """The lines of :func:`dump_text` of an object, written only when read (positions inside a script's
    text are looked up in them, :data:`kvlint.engines.command.HELD_LINES`; most reviews never do).

    Their number is counted without writing them (:func:`_line_sizes`), and the first few lines read are
    written one at a time (:func:`_line_at`): placing a finding inside a script reads the number of lines
    and the script's own line, not the other lines of the object. Past :data:`_SINGLE_LINES` lines read,
    or for a slice, a negative index or iteration, all the lines are written (:func:`dump_lines`).
    """

    def __init__(self, obj: Any) -> None:
        self._obj = obj
        self._lines: list[str] | None = None
        self._count: int | None = None
        self._sizes: dict[int, int] | None = None
        self._single: dict[int, str] = {}

    def _get(self) -> list[str]:
        if self._lines is None:
            try:
                self._lines = dump_lines(self._obj)
            except (_GiveWay, RecursionError):
                self._lines = dump_text(self._obj).split("\n")
            self._single.clear()
        return self._lines

    def _counted(self) -> bool:
        """Whether the number of lines and the containers' sizes are known (counted on first use; False
        when the object holds what :func:`dump_lines` does not write, for which all lines are written)."""
        if self._count is None:
            try:
                self._count, self._sizes = _line_sizes(self._obj)
            except (_GiveWay, RecursionError):
                self._count = len(self._get())
        return self._sizes is not None

    def __getitem__(self, index: Any) -> Any:
        lines = self._lines
        if lines is not None:
            return lines[index]
        if type(index) is int:  # (a slice is not hashable before Python 3.12)
            line = self._single.get(index)  # a script's line is read once per character placed
            if line is not None:
                return line
            if index >= 0 and len(self._single) < _SINGLE_LINES and self._counted():
                if index >= len(self):
                    raise IndexError("line index out of range")
                assert self._sizes is not None
                try:
                    line = self._single[index] = _line_at(self._obj, self._sizes, index)
                    return line
                except (_GiveWay, RecursionError):
                    pass
        return self._get()[index]

    def __len__(self) -> int:
        if self._lines is not None:
            return len(self._lines)
        self._counted()
        assert self._count is not None
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())


#: Lines of a :class:`LazyJsonLines` written one at a time before all are written at once.
_SINGLE_LINES = 4
