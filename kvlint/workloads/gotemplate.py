"""A small, partial evaluator of Go ``text/template`` actions, for the values operators fill in themselves.

KServe renders every string of a merged ``LLMInferenceServiceConfig`` as a Go template whose data is the
``LLMInferenceService`` (``{{ .Spec.Model.Name }}``, ``{{ or .Spec.Parallelism.Data 1 }}``, ``{{- if and
.Spec.Parallelism .Spec.Parallelism.Tensor }} --tensor-parallel-size {{ .Spec.Parallelism.Tensor }}{{- end
}}``; kserve/kserve ``pkg/controller/v1alpha2/llmisvc/config_merge.go`` ``ReplaceVariables``), and its
ServingRuntime containers with the InferenceService's metadata (``{{.Name}}``, ``utils.go``
``ReplacePlaceholders``). kvlint evaluates what it can and keeps the rest as written:

* text, ``{{/* comments */}}`` and the ``{{-``/``-}}`` whitespace trimming;
* field chains ``.A.B.C`` looked up in the object as loaded (Go field names map to JSON names by lowering
  the first letter; ``ObjectMeta`` is ``metadata``); a missing field is Go's nil/zero value;
* literals (numbers, quoted strings, ``true``/``false``/``nil``) and the built-ins ``or``, ``and``, ``not``,
  ``eq``, ``ne`` with Go's truth rules (false, 0, nil and empty values are false);
* ``if``/``else if``/``else``/``end``.

Anything else (other functions such as KServe's ``kvTransferConfig``, ``with``, ``range``, variables,
fields under ``GlobalConfig`` that the controller's own configuration decides) is *unknown*: the action, or
the whole ``if`` block whose condition is unknown, is kept verbatim, so later stages see ``{{ ... }}`` and
say the value cannot be read. Never raises.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kvlint.spans import delimited_spans

__all__ = ["UNKNOWN", "render", "unresolved_actions"]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


#: The value of an expression kvlint cannot evaluate.
UNKNOWN: Any = _Unknown()

_TOKEN_RE = re.compile(r'\s*("(?:[^"\\]|\\.)*"|`[^`]*`|\(|\)|[^\s()]+)')


def _actions(tmpl: str) -> Iterator[tuple[int, int, str, str, str]]:
    r"""``(start, end, left, body, right)`` of each action ``{{ ... }}`` of ``tmpl``: its span (up to the first
    ``}}`` after the ``{{``, line breaks included; :func:`kvlint.spans.delimited_spans`), the ``-`` trim marks
    (``"-"`` or ``""``) after ``{{`` and before ``}}``, and the text between them. The same as the lazy regex
    ``\{\{(-?)(.*?)(-?)\}\}`` (re.S), in linear time (that regex re-scanned the rest of the text from every
    unclosed ``{{``)."""
    for start, end in delimited_spans(tmpl):
        left = "-" if tmpl[start + 2] == "-" else ""
        lo, hi = start + 2 + len(left), end - 2
        right = "-" if hi > lo and tmpl[hi - 1] == "-" else ""
        yield start, end, left, tmpl[lo : hi - len(right)], right


@dataclass
class _Node:
    kind: str  # text | action | if
    text: str = ""  # text, or the action's expression
    source: str = ""  # the node as written (kept when unknown)
    branches: list[tuple[str | None, list[_Node]]] = field(default_factory=list)  # (condition, body)


def _lex(tmpl: str, trim: str) -> list[tuple[str, str, str]]:
    """``(kind, content, source)`` pieces: ``text`` or ``action``, with trimming (of the characters in
    ``trim``) applied to the text."""
    out: list[tuple[str, str, str]] = []
    pos = 0
    for start, end, left, body, _ in _actions(tmpl):
        text = tmpl[pos:start]
        if left:
            text = text.rstrip(trim)
        if out and out[-1][0] == "action" and out[-1][2].rstrip("}").endswith("-"):
            text = text.lstrip(trim)
        out.append(("text", text, text))
        out.append(("action", body.strip(), tmpl[start:end]))
        pos = end
    text = tmpl[pos:]
    if out and out[-1][0] == "action" and out[-1][2].rstrip("}").endswith("-"):
        text = text.lstrip(trim)
    out.append(("text", text, text))
    return out


def _parse(pieces: list[tuple[str, str, str]]) -> list[_Node]:
    """The node tree; an unbalanced ``end``/``else`` or unsupported block makes the rest text."""
    root: list[_Node] = []
    stack: list[_Node] = []

    def body() -> list[_Node]:
        return stack[-1].branches[-1][1] if stack else root

    for kind, content, source in pieces:
        if kind == "text":
            if content:
                body().append(_Node("text", content, source))
            continue
        word = content.split(None, 1)[0] if content else ""
        rest = content[len(word) :].strip()
        if content.startswith("/*"):
            continue
        if word == "if":
            node = _Node("if", source=source, branches=[(rest, [])])
            body().append(node)
            stack.append(node)
        elif word == "else" and stack:
            cond = rest[3:].strip() if rest.startswith("if ") else None
            stack[-1].branches.append((cond, []))
        elif word == "end" and stack:
            stack.pop()
        elif word in ("with", "range", "block", "define", "template", "else", "end"):
            body().append(_Node("action", "", source))  # unsupported: kept verbatim
        else:
            body().append(_Node("action", content, source))
    return root


#: The longest template text (characters) whose parsed tree :func:`_parsed` keeps; KServe's shipped presets'
#: longest is about 9,200. With :data:`_CACHED_TEMPLATES` this bounds what a long-lived process (a webhook
#: worker) holds for the templates a manifest chose, whatever their size.
_CACHED_CHARS = 16384
_CACHED_TEMPLATES = 64


@functools.lru_cache(maxsize=_CACHED_TEMPLATES)
def _parsed(tmpl: str, trim: str) -> list[_Node]:
    """:func:`_parse` of :func:`_lex`, kept for the templates met again: every LLMInferenceService that
    builds on a preset renders that preset's strings, and every InferenceService its runtime's (the trees
    are only read, never modified). Only for texts up to :data:`_CACHED_CHARS` (see :func:`_nodes`)."""
    return _parse(_lex(tmpl, trim))


def _nodes(tmpl: str, trim: str) -> list[_Node]:
    """The parsed tree of ``tmpl``: kept (:func:`_parsed`) when the text is at most :data:`_CACHED_CHARS`
    characters, else parsed for this rendering alone."""
    if len(tmpl) <= _CACHED_CHARS:
        return _parsed(tmpl, trim)
    return _parse(_lex(tmpl, trim))


def _go_name(name: str) -> str:
    if name == "ObjectMeta":
        return "metadata"
    return name[:1].lower() + name[1:]


def _field(data: Any, path: str) -> Any:
    if path == ".":
        return data
    node = data
    for part in path.lstrip(".").split("."):
        if part == "GlobalConfig":
            return UNKNOWN
        if node is None:
            return None
        if not isinstance(node, Mapping):
            return UNKNOWN
        if _MISSING_UNKNOWN[0] and _go_name(part) not in node and part not in node:
            return UNKNOWN
        node = node.get(_go_name(part), node.get(part))
    return node


# set for the duration of one render() call with missing_unknown=True
_MISSING_UNKNOWN = [False]


def _truthy(v: Any) -> bool:
    return v not in (None, False, 0, "", 0.0) and not (isinstance(v, (list, dict)) and not v)


def _tokens(expr: str) -> list[str]:
    return [m.group(1) for m in _TOKEN_RE.finditer(expr)]


Funcs = Mapping[str, Callable[..., Any]]


def _eval(tokens: list[str], data: Any, funcs: Funcs) -> Any:
    """Evaluate a command (function call or single operand)."""
    if not tokens:
        return UNKNOWN
    if "|" in tokens:
        return UNKNOWN
    head = tokens[0]
    args = _operands(tokens[1:], data, funcs)
    if head in funcs:
        if args is None or any(a is UNKNOWN for a in args):
            return UNKNOWN
        try:
            return funcs[head](*args)
        except Exception:  # a caller's function that does not accept these arguments
            return UNKNOWN
    if head in ("or", "and"):
        if args is None:
            return UNKNOWN
        last: Any = None
        for a in args:
            if a is UNKNOWN:
                return UNKNOWN
            last = a
            if (head == "or") == _truthy(a):
                return a
        return last
    if head == "not":
        return UNKNOWN if args is None or len(args) != 1 or args[0] is UNKNOWN else not _truthy(args[0])
    if head in ("eq", "ne"):
        if args is None or len(args) < 2 or any(a is UNKNOWN for a in args):
            return UNKNOWN
        equal = any(str(args[0]) == str(b) for b in args[1:])
        return equal if head == "eq" else not equal
    if len(tokens) == 1:
        ops = _operands(tokens, data, funcs)
        return UNKNOWN if ops is None else ops[0]
    return UNKNOWN  # another function: not evaluated


def _operands(tokens: list[str], data: Any, funcs: Funcs) -> list[Any] | None:
    out: list[Any] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "(":
            depth, j = 1, i + 1
            while j < len(tokens) and depth:
                depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                j += 1
            out.append(_eval(tokens[i + 1 : j - 1], data, funcs))
            i = j
            continue
        if t.startswith("."):
            out.append(_field(data, t))
        elif t[:1] in '"`':
            out.append(t[1:-1])
        elif t in ("true", "false"):
            out.append(t == "true")
        elif t == "nil":
            out.append(None)
        elif re.fullmatch(r"-?\d+", t):
            out.append(int(t))
        elif re.fullmatch(r"-?\d+\.\d*", t):
            out.append(float(t))
        else:
            return None
        i += 1
    return out


def _show(v: Any) -> str:
    if v is None:
        return "<no value>"
    if v is True or v is False:
        return "true" if v else "false"
    return str(v)


def _run(nodes: list[_Node], data: Any, funcs: Funcs, out: list[str], unknown: list[str]) -> None:
    for n in nodes:
        if n.kind == "text":
            out.append(n.text)
        elif n.kind == "action":
            v = _eval(_tokens(n.text), data, funcs) if n.text else UNKNOWN
            if v is UNKNOWN:
                out.append(n.source)
                unknown.append(n.source)
            else:
                out.append(_show(v))
        else:  # if
            for cond, body in n.branches:
                if cond is None:
                    _run(body, data, funcs, out, unknown)
                    break
                v = _eval(_tokens(cond), data, funcs)
                if v is UNKNOWN:
                    out.append(_source_of(n))
                    unknown.append(n.branches[0][0] or "")
                    break
                if _truthy(v):
                    _run(body, data, funcs, out, unknown)
                    break


def _source_of(n: _Node) -> str:
    parts = [n.source]
    for i, (cond, body) in enumerate(n.branches):
        if i:
            parts.append("{{ else" + (f" if {cond}" if cond else "") + " }}")
        for b in body:
            parts.append(b.source if b.kind != "if" else _source_of(b))
    parts.append("{{ end }}")
    return "".join(parts)


def render(
    tmpl: str,
    data: Any,
    *,
    json_string: bool = True,
    funcs: Funcs | None = None,
    missing_unknown: bool = False,
) -> tuple[str, list[str]]:
    """Render ``tmpl`` against ``data`` (a loaded object: the LLMInferenceService, the InferenceService's
    metadata). Returns ``(text, unknown)``: the text with every evaluable action replaced, and the actions
    kept verbatim because they cannot be evaluated here. A string without ``{{`` is returned unchanged.

    ``json_string``: the template is a string inside a JSON document, as KServe renders it (it marshals the
    object to JSON and executes that as the template): a line break is then the two characters ``\n``, not
    whitespace, so ``{{-``/``-}}`` trim only spaces and tabs and line breaks survive (a shell line
    continuation before ``{{- if ...}}`` stays one). With False, the Go rule for plain text (all whitespace).
    ``funcs``: the caller's template functions (name -> Python function of the evaluated arguments).
    ``missing_unknown``: a field the data does not have is unknown (kept verbatim) rather than Go's nil, for
    templates linted without the object that will fill them.
    """
    if "{{" not in tmpl:
        return tmpl, []
    try:
        nodes = _nodes(tmpl, " \t" if json_string else " \t\r\n")
        out: list[str] = []
        unknown: list[str] = []
        _MISSING_UNKNOWN[0] = missing_unknown
        try:
            _run(nodes, data, funcs or {}, out, unknown)
        finally:
            _MISSING_UNKNOWN[0] = False
        return "".join(out), unknown
    except (RecursionError, ValueError, IndexError):
        return tmpl, [tmpl]


def unresolved_actions(text: str) -> list[str]:
    """The ``{{ ... }}`` actions left in ``text`` (for messages)."""
    return [text[start:end] for start, end in delimited_spans(text)]
