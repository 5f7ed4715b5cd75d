"""An OpenShift ``Template``'s parameters, substituted into its objects as ``oc process`` substitutes them.

``oc process`` (openshift/library-go ``pkg/template/templateprocessing/template.go``, ``Processor.Process``)
first gives each parameter whose ``value`` is empty a generated value (``generate: expression``), then fails
("parameter NAME is required and must be specified") for a ``required`` one still empty, and then replaces, in
every string of every object (``SubstituteParameters``, ``EvaluateParameterSubstitution``):

* a string that is wholly ``${{NAME}}`` (``nonStringParameterExp``, ``^\\$\\{\\{([a-zA-Z0-9\\_]+)\\}\\}$``) by the
  parameter's value decoded as JSON (``2``, ``true``), or the value as a string when it is not JSON
  (:func:`_non_string`);
* else each ``${NAME}`` (``stringParameterExp``, ``\\$\\{([a-zA-Z0-9\\_]+?)\\}``) by the parameter's value, text
  around it kept (``0.${UTIL}``), once: a value holding ``${B}`` is not substituted into again, but each
  reference is replaced in turn where ``strings.Replace`` first finds its text (:func:`_in_turn`).

A reference to a name the Template does not declare is left as written (the engine then receives it literally).

kvlint reads a Template's objects as ``oc process`` with no ``-p`` writes them: a parameter with a ``value`` is
that value (the default ``-p NAME=VALUE`` overrides). A parameter with no value (required, generated, or one
``oc process`` would make empty) is not substituted: its words stay ``${NAME}``, whose value is unknown
(:func:`unresolved_parameters`; a whole word of them is a KV503 info, not an unknown option:
:func:`kvlint.engines.options.template_words`). Done when the document is loaded (:func:`kvlint.load._flatten`),
so every stage reads the processed objects; positions are those of the strings as written, and a position
inside a substituted string is moved back to the string as written (:class:`TemplateText`).

Bounded: a substitution that would make a string longer than :data:`MAX_SUBSTITUTED_CHARS`, or add more than
:data:`MAX_ADDED_CHARS` characters to one file's Templates in all (a ``${{NAME}}`` counted as a ``${NAME}``), is not
made (the string stays as written), nor one :func:`_in_turn` would copy more than :data:`MAX_IN_TURN_WORK`
characters for (one file's Templates in all too: :func:`new_budget`), and at most :data:`MAX_PARAMETERS` parameters are read.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from kvlint.source import LDict

__all__ = [
    "MAX_ADDED_CHARS",
    "MAX_IN_TURN_WORK",
    "MAX_PARAMETERS",
    "MAX_SUBSTITUTED_CHARS",
    "TemplateText",
    "new_budget",
    "offsets_through",
    "process_template",
    "unresolved_parameters",
    "written_offsets",
]

#: ``oc process``'s references (openshift/library-go ``template.go``): a whole-string non-string one, and a
#: string one (group 1: the name).
_NON_STRING = re.compile(r"^\$\{\{([a-zA-Z0-9_]+)\}\}$")
_STRING = re.compile(r"\$\{([a-zA-Z0-9_]+?)\}")
#: The longest string a substitution may make (a longer result is left as written).
MAX_SUBSTITUTED_CHARS = 64 * 1024
#: The characters substitutions may add to the Templates of one loaded file in all.
MAX_ADDED_CHARS = 4 * 1024 * 1024
#: The characters :func:`_in_turn` may copy for the Templates of one loaded file in all.
MAX_IN_TURN_WORK = 16 * 1024 * 1024
#: The parameters of one Template read (far above any real Template's few dozen).
MAX_PARAMETERS = 4096


def _parameters(data: Any) -> tuple[dict[str, str], set[str]]:
    """``(name -> value, names without a value)`` of a Template's ``parameters`` (the first
    :data:`MAX_PARAMETERS`): a value is a non-empty string ``value`` (a number or boolean written unquoted read as
    its text); a parameter with none is left unresolved."""
    values: dict[str, str] = {}
    unset: set[str] = set()
    params = data.get("parameters") if isinstance(data, dict) else None
    for p in params[:MAX_PARAMETERS] if isinstance(params, list) else []:
        name = p.get("name") if isinstance(p, dict) else None
        if not isinstance(name, str) or not re.fullmatch(r"[a-zA-Z0-9_]+", name):
            continue
        value = p.get("value")
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (int, float)):
            value = str(value)
        if isinstance(value, str) and value:
            values[name] = value
            unset.discard(name)
        else:
            values.pop(name, None)
            unset.add(name)
    return values, unset


def unresolved_parameters(data: Any) -> frozenset[str]:
    """The names of the parameters of the Template ``data`` that have no value (:func:`_parameters`), whose
    references :func:`process_template` leaves as written; empty for any other document."""
    if not isinstance(data, dict) or data.get("kind") != "Template":
        return frozenset()
    return frozenset(_parameters(data)[1])


def new_budget() -> list[int]:
    """A fresh ``[characters substitutions may still add, characters _in_turn may still copy]`` for
    :func:`process_template`: one per loaded file, shared by its Templates (:func:`kvlint.load._flatten`)."""
    return [MAX_ADDED_CHARS, MAX_IN_TURN_WORK]


def process_template(data: Any, budget: list[int] | None = None) -> None:
    """Substitute, in place, the parameters with a value of the OpenShift Template ``data`` into the strings of
    its ``objects`` (module docstring); nothing for any other document or a Template without such parameters.

    ``budget``: :func:`new_budget`'s list, drawn down in place, so that the Templates of one file share it
    (:func:`kvlint.load._flatten`): each with its own :data:`MAX_ADDED_CHARS`, a file of many small Templates grew
    without bound (160 Templates of 9 KB, each adding 4 MiB: 690 MB held for a 1.4 MB file). None: a fresh one."""
    if not isinstance(data, dict) or data.get("kind") != "Template":
        return
    objects = data.get("objects")
    values = _parameters(data)[0]
    if not values or not isinstance(objects, list):
        return
    if budget is None:
        budget = new_budget()
    decoded: dict[str, Any] = {}  # parameter -> its value as ${{NAME}} gives it (_non_string)
    seen: set[int] = set()
    stack: list[Any] = [objects]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue  # (a YAML alias: one node, processed once)
        seen.add(id(node))
        keys: Any = node.keys() if isinstance(node, dict) else range(len(node))
        for key in list(keys):
            value = node[key]
            if isinstance(value, (dict, list)):
                stack.append(value)
            elif isinstance(value, str) and "${" in value:
                new = _substitute(value, values, budget, decoded)
                if new is not value:
                    node[key] = new  # (an LDict's or LList's positions are keyed by key or index)
        if isinstance(node, dict) and any(isinstance(k, str) and "${" in k for k in node):
            _substitute_keys(node, values, budget, decoded)


def _substitute_keys(node: dict, values: dict[str, str], budget: list[int], decoded: dict[str, Any]) -> None:
    """Substitute into the keys of the mapping ``node`` as into its values: ``oc process`` visits a map's keys
    too (openshift/library-go ``templateprocessing/object.go``, ``visitValue``: ``newKey`` of each of
    ``v.MapKeys()``), so ``limits: {${GPU_RESOURCE}: 1}`` is the resource the parameter names. A key a
    ``${{NAME}}`` would make a number or a boolean is left as written (Go's ``SetMapIndex`` cannot set it in a
    map of string keys). The keys keep their order and positions (an :class:`~kvlint.source.LDict`'s ``locs``
    and ``key_locs`` move to the new key); a key made equal to another replaces it, the later one winning."""
    renamed: dict[Any, str] = {}
    for key in node:
        if isinstance(key, str) and "${" in key:
            new = _substitute(key, values, budget, decoded)
            if new is not key and isinstance(new, str):
                renamed[key] = str(new)
    if not renamed:
        return
    items = list(node.items())
    node.clear()
    for key, value in items:
        new = renamed.get(key, key)
        node.pop(new, None)  # (a later key of the same name wins, and stands where it is written)
        node[new] = value
    if isinstance(node, LDict):
        for table in (node.locs, node.key_locs):
            moved = {renamed.get(key, key): loc for key, loc in table.items()}
            table.clear()
            table.update(moved)


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)  # NaN, Infinity, -Infinity: not JSON (Go's encoding/json refuses them)


#: :func:`_non_string`'s answer for a JSON object or array.
_STRUCTURE = object()


def _non_string(value: str) -> Any:
    """The value ``oc process`` puts for a string that is wholly ``${{NAME}}`` whose parameter has the value
    ``value``. openshift/library-go ``templateprocessing/object.go``,
    ``visitUnsettableValues``: the value decoded as JSON by Go's ``encoding/json`` into an ``interface{}``, and
    when that fails ("the result of substitution may have been an unquoted string value") the value itself, as
    a string. Go refuses what Python's :mod:`json` accepts beyond JSON: ``NaN``, ``Infinity`` and a number past
    float64's range (``1e999``, which Python reads as ``inf``, or an integer of 309 digits): those stay the value's
    text. A JSON object or array (a structure in place of a string) is :data:`_STRUCTURE`: the string is left as
    written, kvlint holding no positions for the structure's items."""
    try:
        parsed = json.loads(value, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return value
    if isinstance(parsed, float) and not math.isfinite(parsed):
        return value
    if isinstance(parsed, int) and not isinstance(parsed, bool) and abs(parsed) >= _FLOAT64_LIMIT:
        return value  # (Go decodes a number into an interface{} as a float64)
    if isinstance(parsed, (dict, list)):
        return _STRUCTURE
    return parsed


#: The first integer past float64's range (its largest finite value is (2 - 2**-52) * 2**1023).
_FLOAT64_LIMIT = 2**1024


def _substitute(text: str, values: dict[str, str], budget: list[int], decoded: dict[str, Any]) -> Any:
    """``text`` with ``oc process``'s substitution of ``values`` (module docstring), or ``text`` itself when no
    reference names a parameter with a value or the result would pass the bounds."""
    m = _NON_STRING.match(text)
    if m is not None and m.group(1) in values:
        name = m.group(1)
        value = values[name]
        added = len(value) - len(text)
        if len(value) > MAX_SUBSTITUTED_CHARS or added > budget[0]:
            return text
        budget[0] -= max(added, 0)
        if name not in decoded:  # (decoded once per parameter: one object for all its uses)
            decoded[name] = _non_string(value)
        out = decoded[name]
        return text if out is _STRUCTURE else out
    parts: list[str] = []
    size = 0
    last = 0
    for ref in _STRING.finditer(text):
        name = ref.group(1)
        if name not in values:
            continue
        parts.append(text[last : ref.start()])
        parts.append(values[name])
        size += ref.start() - last + len(values[name])
        last = ref.end()
        if size > MAX_SUBSTITUTED_CHARS:
            return text
    if not parts:
        return text
    parts.append(text[last:])
    out = "".join(parts)
    added = len(out) - len(text)
    if len(out) > MAX_SUBSTITUTED_CHARS or added > budget[0]:
        return text
    if text.count("${") > sum(1 for _ in _STRING.finditer(text)) or any(
        c in values[m.group(1)] for m in _STRING.finditer(text) if m.group(1) in values for c in "${}"
    ):
        # a reference oc process's turn-by-turn replacement may find elsewhere than where it is written
        in_turn = _in_turn(text, values, budget)
        if in_turn is None:
            return text
        if in_turn != out:
            added = len(in_turn) - len(text)
            if added > budget[0]:
                return text
            budget[0] -= max(added, 0)
            return TemplateText(in_turn, text, None)
    budget[0] -= max(added, 0)
    return TemplateText(out, text, values)


def _in_turn(text: str, values: dict[str, str], budget: list[int]) -> str | None:
    """``text`` as ``oc process`` substitutes it: for each reference of ``text`` in turn (``FindAllStringSubmatch``
    on the text as written), ``strings.Replace(out, "${NAME}", value, 1)``, which replaces the *first*
    ``${NAME}`` in the text so far, one an earlier value put there (``${A} ${B}`` with A ``${B}`` and B ``x`` is
    ``x ${B}``) or made with the text around it (``${${A}}`` with A ``B`` is ``${B}``) before the one written.
    None past :data:`MAX_SUBSTITUTED_CHARS` or the file's work bound (``budget[1]``, each replacement
    counting the text's length)."""
    out = text
    for ref in _STRING.finditer(text):
        value = values.get(ref.group(1))
        if value is None:
            continue
        i = out.find(ref.group(0))
        if i < 0:
            continue
        out = out[:i] + value + out[i + len(ref.group(0)) :]
        budget[1] -= len(out)
        if len(out) > MAX_SUBSTITUTED_CHARS or budget[1] < 0:
            return None
    return out


def _pieces(written: str, values: dict[str, str]) -> list[tuple[int, int, bool]]:
    """Where each piece of :func:`_substitute`'s result for ``written`` came from: ``(start in the result,
    start in written, literal)``, a piece not literal being a parameter's value (at its reference's ``$``)."""
    pieces: list[tuple[int, int, bool]] = []
    size = 0
    last = 0
    for ref in _STRING.finditer(written):
        value = values.get(ref.group(1))
        if value is None:
            continue
        if ref.start() > last:
            pieces.append((size, last, True))
        size += ref.start() - last
        pieces.append((size, ref.start(), False))
        size += len(value)
        last = ref.end()
    if last < len(written):
        pieces.append((size, last, True))
    return pieces


class TemplateText(str):
    """A string of a Template's objects that :func:`process_template` substituted parameters into, which
    remembers the string as the manifest writes it (``written``) and the Template's parameter values
    (``values``, one dict for all its strings; None when :func:`_in_turn` made it), so that a position in it is found in the manifest
    (:func:`written_offsets`): a value longer or shorter than its ``${NAME}`` moves the characters after it."""

    written: str
    values: dict[str, str] | None

    def __new__(cls, text: str, written: str, values: dict[str, str] | None) -> TemplateText:
        self = super().__new__(cls, text)
        self.written = written
        self.values = values
        return self

    def __reduce__(self) -> Any:  # (a str subclass with attributes: pickled with them)
        return (TemplateText, (str(self), self.written, self.values))


def written_offsets(text: TemplateText, offsets: Sequence[int]) -> list[int]:
    """``offsets`` of characters of ``text`` moved to ``text.written``: a character of a parameter's value to
    its reference's ``$``, every other one by the length the substitutions before it added (the pieces are
    found again, only for a string a position is asked in). ``values`` None (a substitution :func:`_in_turn`
    made, whose pieces are not followed): every offset is the string's start."""
    if text.values is None:
        return [0] * len(offsets)
    return offsets_through(_pieces(text.written, text.values), offsets)


def offsets_through(pieces: Sequence[tuple[int, int, bool]], offsets: Iterable[int]) -> list[int]:
    """``offsets`` of characters of an expanded string moved to the text it was expanded from, given its ``pieces``
    (start in the expanded string, start in the written text, whether the piece is literal text), in order: a
    character of a literal piece keeps its place in it, one of a substituted value goes to its reference's start,
    one before the first piece stays. Shared by OpenShift Template parameters (:func:`written_offsets`) and the
    kubelet's ``$(VAR)`` expansion (:func:`kvlint.engines.command`)."""
    starts = [p[0] for p in pieces]
    out = []
    for offset in offsets:
        k = bisect.bisect_right(starts, offset) - 1
        if k < 0:
            out.append(offset)
            continue
        start, written_start, literal = pieces[k]
        out.append(written_start + (offset - start) if literal else written_start)
    return out
