"""Reading container commands the way Kubernetes and a POSIX shell would, keeping positions.

Two expansions happen before an engine sees its argv:

1. Kubernetes expands ``$(VAR)`` in ``command``/``args`` (and in later ``env`` values) from the container's
   ``env``: ``$$`` is an escaped ``$``, a name that is not defined (or only defined through ``valueFrom``/
   ``envFrom``, unknown statically) stays literally ``$(VAR)``. SOURCE: Kubernetes
   ``third_party/forked/golang/expansion/expand.go::Expand`` and the PodSpec docs for ``args``.
2. When the command is a shell (``sh -c SCRIPT``), the shell tokenises SCRIPT, expands ``$VAR``/``${VAR}``
   from its environment and runs one command after another (``;``, ``&&``, ``||``, ``|``, newlines).

:func:`lex` is a small, tolerant shell lexer (quotes, backslash escapes, line continuations, comments,
``$(...)``/backticks, ``${...}``) that remembers each word's offset in the script so diagnostics can point
at the exact line; :func:`commands` splits the words into simple commands and expands them.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar, overload

from kvlint.source import Loc
from kvlint.spans import delimited_spans
from kvlint.values import digits

__all__ = [
    "ARG_MAX",
    "MAX_ARG_STRLEN",
    "REVIEW_COMMAND_CHARS",
    "REVIEW_EXPANSION_CHARS",
    "ReviewTooLarge",
    "charge_command_text",
    "review_budget",
    "k8s_expand",
    "ShellArg",
    "lex",
    "commands",
    "Part",
    "Word",
    "UNRESOLVED_RE",
    "json_braces",
    "unresolved",
]

#: The longest single argument or environment string Linux's ``execve(2)`` accepts, in bytes
#: (``MAX_ARG_STRLEN``, 32 pages of 4 KiB; include/uapi/linux/binfmts.h): no expansion longer than this can
#: reach an engine's argv, so kvlint never builds one (the reference is kept, unresolved).
MAX_ARG_STRLEN = 131_072
#: What ``execve(2)`` accepts for argv and envp together with the default 8 MiB stack limit, in bytes
#: (a quarter of the stack limit; fs/exec.c, ``getconf ARG_MAX`` = 2097152): the budget of text all the
#: substitutions of one container's env, one argv, or one shell script may add.
ARG_MAX = 2 * 2**20

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A token still holding an expansion kvlint could not resolve (``$(X)``, ``${X}``, ``$X``, backticks).
UNRESOLVED_RE = re.compile(r"\$\(|\$\{|\$[A-Za-z_@*0-9]|`|\{\{|\}\}")
#: :data:`UNRESOLVED_RE` without the closing ``}}``, which nested JSON objects end with as well.
_UNRESOLVED_OPENING_RE = re.compile(r"\$\(|\$\{|\$[A-Za-z_@*0-9]|`|\{\{")
#: The start of a JSON object with a key (``{"``, blanks allowed between): a Go/Helm action starts ``{{``.
_JSON_OBJECT_START_RE = re.compile(r"\{\s*\"")


def json_braces(text: str) -> bool:
    """Whether the ``}}`` of ``text`` close nested JSON objects, not a Go/Helm template action: a JSON-valued
    flag in nested-object form (vLLM's ``--hf-overrides '{"rope_scaling": {"rope_type": "yarn", "factor": 4}}'``,
    ``--compilation-config '{"pass_config": {...}}'``) ends in ``}}`` as ``{{ .Values.x }}`` does. JSON here is
    text with no ``{{`` (a template action opens with one; a value holding both is left a template) that starts
    as a JSON object (``{"``), or starts with ``{``/``[`` and parses as JSON. A malformed object (``{"a" {"b":
    1}}``) counts as JSON, so the engine's own parsing and its finding apply; one nested past Python's
    ``json`` depth (``RecursionError``) too when it starts ``{"``, else it is not read as JSON here."""
    if "{{" in text:
        return False
    t = text.strip()
    if _JSON_OBJECT_START_RE.match(t):
        return True
    if t[:1] not in ("{", "["):
        return False
    try:
        json.loads(t)
    except (ValueError, RecursionError):
        return False
    return True


def unresolved(text: str) -> bool:
    """Whether ``text`` still holds an expansion kvlint could not resolve (:data:`UNRESOLVED_RE`), the ``}}``
    that closes nested JSON objects (:func:`json_braces`) not counted as the end of a template action."""
    if _UNRESOLVED_OPENING_RE.search(text):
        return True
    return "}}" in text and not json_braces(text)


_is_unresolved = unresolved  # (a name _expand's own flag does not hide)


def k8s_expand(
    text: str,
    env: Mapping[str, str],
    limit: int = MAX_ARG_STRLEN,
    pieces: list[tuple[int, int, bool]] | None = None,
) -> tuple[str, bool]:
    """Expand Kubernetes ``$(VAR)`` references in ``text`` from ``env``.

    Returns ``(expanded, changed)`` where ``changed`` says a variable was substituted. ``$$`` becomes ``$``;
    ``$(NAME)`` with NAME not in ``env`` stays ``$(NAME)``; a ``$`` followed by anything else is kept.
    Mirrors Kubernetes ``expansion.Expand`` (third_party/forked/golang/expansion/expand.go). Never raises.

    A substitution that would make the result longer than ``limit`` characters (default
    :data:`MAX_ARG_STRLEN`, more than ``execve(2)`` passes) is not made: ``$(NAME)`` stays, unresolved, so
    references that double a value at each step cannot grow it without bound.

    ``pieces``, when given, receives where each piece of the result came from: ``(start in the result, start
    in text, literal)``, a literal piece copied character for character, a substituted one (a value, or the
    ``$`` of a ``$$``) standing for the reference that starts there (positions of a script's words in the
    text as written, :func:`kvlint.engines.command._raw_offsets`).
    """
    if "$" not in text:
        return text, False
    out: list[str] = []
    size = 0  # characters in ``out``
    changed = False
    i, n = 0, len(text)
    while i < n:
        dollar = text.find("$", i)
        if dollar < 0 or dollar + 1 >= n:  # no (expandable) ``$`` left: the rest is literal
            if pieces is not None:
                pieces.append((size, i, True))
            out.append(text[i:])
            break
        if dollar > i:
            if pieces is not None:
                pieces.append((size, i, True))
            out.append(text[i:dollar])
            size += dollar - i
            i = dollar
        nxt = text[i + 1]
        if nxt == "$":
            if pieces is not None:
                pieces.append((size, i, False))
            out.append("$")
            size += 1
            i += 2
            continue
        if nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                if pieces is not None:
                    pieces.append((size, i, True))
                out.append(text[i:])
                break
            value = env.get(text[i + 2 : close])
            if value is not None and size + len(value) <= limit:
                if pieces is not None:
                    pieces.append((size, i, False))
                out.append(value)
                size += len(value)
                changed = True
            else:  # not defined (or only through valueFrom/envFrom), or too long to pass to execve
                if pieces is not None:
                    pieces.append((size, i, True))
                out.append(text[i : close + 1])
                size += close + 1 - i
            i = close + 1
            continue
        if pieces is not None:
            pieces.append((size, i, True))
        out.append("$" + nxt)
        size += 2
        i += 2
    return "".join(out), changed


@dataclass(slots=True)
class Part:
    """A piece of a shell word: ``lit`` text, ``var`` (``$NAME``/``${NAME[:-default]}``), ``at``
    (``$@``/``$*``), ``pos`` (``$1``), ``sub`` (command/arithmetic substitution, never resolved)."""

    kind: str
    text: str
    quoted: bool = False
    default: str | None = None
    #: the default is one quoted string (``${X:-"a b"}``, ``${X:-'a b'}``, ``${X:-$'a\tb'}``): not split into words
    default_quoted: bool = False
    #: ``${X:-d}`` (True) takes the default when X is unset or empty; ``${X-d}`` (False) only when X is unset
    #: (bash(1), Parameter Expansion: "Omitting the colon results in a test only for a parameter that is unset")
    colon: bool = True
    #: ``${@:OFFSET[:LENGTH]}`` / ``${*:...}`` (an ``at`` part): the offset (negative: from the end) and the length
    #: (None: to the end), bash(1) "Parameter Expansion", substring expansion of ``@``
    cut: tuple[int, int | None] | None = None
    #: ``${NAME[@]}``, ``${NAME[*]}``, ``${NAME[N]}`` (an ``arr`` part): the subscript (bash(1) "Arrays")
    index: str | None = None
    #: ``${2:=x}``/``${@=x}`` (a ``pos`` or ``at`` part with a ``default``): assigns the default when taken, which
    #: bash refuses for a positional or special parameter ("$2: cannot assign in this way", the shell exits 1): the
    #: parameter's value when set, else not known here
    assigns: bool = False
    #: the default holds an expansion kvlint does not read in it (``${X:-${D:-1}}``, ``${X:-$(cmd)}``, ``${X:-$Y}``:
    #: bash expands the word after ``:-``, bash(1) "Parameter Expansion"): not known when taken (it was taken as
    #: its text, ``${D:-1}``, or split at its blanks, ``$(echo`` and ``1)``)
    default_unread: bool = False


@dataclass(slots=True)
class Word:
    """An unexpanded shell word with the offset of its first character in the script."""

    parts: list[Part]
    start: int
    raw: str
    #: the offset of a quote this word opens and the script never closes (the word then runs to the end of the
    #: script, as :func:`lex` reads it; a shell refuses the script), else -1 (not compared: where the lexer
    #: found the script broken, not what the word is)
    unclosed: int = field(default=-1, compare=False)


@dataclass(slots=True)
class ShellArg:
    """An expanded word: its text, where it came from, and whether expansion touched it.

    ``offset`` is the position in the script (None for words taken from the positional parameters, which
    carry their own ``loc``); ``from_env`` says a variable was substituted; ``unresolved`` that some
    expansion could not be resolved statically (the text then keeps the ``$...`` reference);
    ``substituted`` that it holds a command or arithmetic substitution (``$(...)``, backticks), whose output
    is unknown; ``unclosed`` the offset in the script of a quote the word opens and the script never closes
    (:attr:`Word.unclosed`), else -1.
    """

    text: str
    offset: int | None = None
    loc: Loc | None = None
    from_env: bool = False
    unresolved: bool = False
    quoted: bool = False
    substituted: bool = False
    unclosed: int = field(default=-1, compare=False)


# The tokens of :func:`lex`, one compiled expression per state, its alternatives named; the characters of a
# token are consumed by the expression, not walked one by one. Operators, longest first: ``&&``, ``||``,
# ``;;``, then ``;``, ``|``, ``&``, newline, ``(``, ``)``. A redirection operator (``>``, ``>>``, ``<<``,
# ``<>``, ``>&``, ``2>&1``'s ``>&1``, ``<&-``, the here-string's ``<<<``, and ``>|``, POSIX's CLOBBER operator,
# which dash and bash both read as ``>``: POSIX 2.10.2, not ``>`` then a pipe) starts a word (dropped later by
# :func:`commands`), ending the word before it unless that is an io-number (:data:`_IO_NUMBER`).
_OP = r"&&|\|\||;;|[&|;\n()]"
_REDIR = r"<<<|>\||[<>](?:&[0-9-]*|[<>])?"
#: Between words: blanks, line continuations and comments (``#`` starts one only here) skipped, then the
#: next token, if it is one of these: a word of ordinary characters ending at a blank, a newline, an operator
#: character other than ``(`` (after a word, ``((`` is two operators) or the end, read whole; ``((``, an
#: arithmetic command (one opaque word: its ``<``/``>`` are not redirections); an operator; a redirection.
#: Anything else (a quote, ``$``, a backslash, a word that goes on with one of them) starts a word read in
#: :data:`_IN_WORD`. The runs are possessive: a run not followed by a word's end is not a plain word, and no
#: shorter run of it is (the characters that end one are not in the run), so the expression does not try them.
#: Blanks are read as a run before the (rarer) continuations and comments, and a word's end is "no character
#: but one that ends it" (the end of the script included): fewer steps of the expression engine.
_BETWEEN = re.compile(
    r"[ \t\r]*+(?:(?:\\\n|#[^\n]*+)[ \t\r]*+)*+"
    r"(?:(?P<word>[^ \t\r\n<>&|;()\\'\"$`#][^ \t\r\n<>&|;()\\'\"$`]*+(?![^ \t\r\n&|;)]))"
    r"|(?P<arith>\(\()"
    r"|(?P<op>" + _OP + ")"
    r"|(?P<redir>" + _REDIR + "))?"
)
#: ``$NAME`` and ``${NAME}``, the commonest expansions, read without :func:`_dollar`'s steps.
_VAR = r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)"
#: Inside a word: every character starts one of these (a plain run takes ``#`` as ordinary).
_IN_WORD = re.compile(
    r"(?P<run>[^ \t\r\n<>&|;()\\'\"$`]+)"
    r"|(?P<blank>[ \t\r]+)"
    r"|(?P<var>" + _VAR + ")"
    r"|(?P<dollar>\$)"
    r"|(?P<dq>\")"
    r"|(?P<sq>'[^']*'?)"
    r"|(?P<cont>\\\n)"
    r"|(?P<esc>\\.)"
    r"|(?P<bs>\\)"
    r"|(?P<op>" + _OP + ")"
    r"|(?P<redir>" + _REDIR + ")"
    r"|(?P<bt>`[^`]*`?)"
)
#: bash's ``&>FILE`` and ``&>>FILE`` (bash(1) "REDIRECTION", "Redirecting Standard Output and Standard Error":
#: both to FILE, the same as ``>FILE 2>&1``): a redirection operator, where dash (POSIX, which has no such operator)
#: reads ``&`` (the command before it run in the background) then ``>FILE`` (an empty command that truncates FILE),
#: as :data:`_BETWEEN` and :data:`_IN_WORD` do. These two read a script bash runs (:func:`_tokens`' ``bash``).
_OP_BASH = r"(?!&>)(?:" + _OP + ")"
_REDIR_BASH = r"&>>?|" + _REDIR
_BETWEEN_BASH = re.compile(
    _BETWEEN.pattern.replace("(?P<op>" + _OP + ")", "(?P<op>" + _OP_BASH + ")").replace(
        "(?P<redir>" + _REDIR + ")", "(?P<redir>" + _REDIR_BASH + ")"
    )
)
_IN_WORD_BASH = re.compile(
    _IN_WORD.pattern.replace("(?P<op>" + _OP + ")", "(?P<op>" + _OP_BASH + ")").replace(
        "(?P<redir>" + _REDIR + ")", "(?P<redir>" + _REDIR_BASH + ")"
    )
)
#: Inside double quotes: only ``"``, ``\``, ``$`` and backticks are special (a backslash ending the script is
#: literal).
_IN_DQ = re.compile(
    r"(?P<run>[^\"\\$`]+)"
    r"|(?P<end>\")"
    r"|(?P<var>" + _VAR + ")"
    r"|(?P<dollar>\$)"
    r"|(?P<cont>\\\n)"
    r"|(?P<esc>\\.)"
    r"|(?P<bt>`[^`]*`?)"
    r"|(?P<bs>\\)",
    re.S,
)


def _scan_balanced(s: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket matching ``s[i]`` (tolerant: end of string if unbalanced).

    Quotes are skipped whole (a backslash escapes inside double quotes, not inside single ones, and inside
    bash's ``$'...'``, where ``\\'`` does not close it: :data:`ANSI_C_RE`; ``$$`` is a parameter, so a quote
    after it is a plain one) and a backslash outside quotes escapes the next character. The text between the characters that matter is
    skipped by a regular-expression search, not walked one character at a time (see
    :func:`_scan_balanced_walk`, the character walk it equals, kept for the tests)."""
    special = _BALANCED.get(open_c + close_c)
    if special is None:
        return _scan_balanced_walk(s, i, open_c, close_c)
    depth = 0
    n = len(s)
    while True:
        m = special.search(s, i)
        if m is None:
            return n
        i = m.start()
        c = s[i]
        if c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                return n
            i = end + 1
        elif c == '"':
            j = i + 1
            while True:
                q = _DQ_STOP.search(s, j)
                if q is None:
                    return n
                j = q.start()
                if s[j] == '"':
                    break
                j += 2  # a backslash escapes the next character inside double quotes
            i = j + 1
        elif c == "\\":
            i += 2
        elif c == "$":
            nxt = s[i + 1 : i + 2]
            if nxt == "'":
                i = ANSI_C_RE.match(s, i).end()  # type: ignore[union-attr]  # (n when never closed)
            else:
                i += 2 if nxt == "$" else 1
        elif c == open_c:
            depth += 1
            i += 1
        else:  # close_c
            depth -= 1
            if depth == 0:
                return i + 1
            i += 1


#: The characters :func:`_scan_balanced` acts on, per bracket pair.
_BALANCED = {
    "()": re.compile(r"""['"\\()$]"""),
    "{}": re.compile(r"""['"\\{}$]"""),
}
_DQ_STOP = re.compile(r'["\\]')


def _scan_balanced_walk(s: str, i: int, open_c: str, close_c: str) -> int:
    """:func:`_scan_balanced` one character at a time (the reference the tests compare it with, and the
    way for a bracket pair without a prepared expression)."""
    depth = 0
    n = len(s)
    quote: str | None = None
    while i < n:
        c = s[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 2
            continue
        elif c == "$" and s[i + 1 : i + 2] == "'":
            i = ANSI_C_RE.match(s, i).end()  # type: ignore[union-attr]
            continue
        elif c == "$" and s[i + 1 : i + 2] == "$":
            i += 2
            continue
        elif c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


#: bash's ANSI-C quoting ``$'...'`` (bash manual "ANSI-C Quoting"; ksh, zsh and dash 0.5.13 have it too): inside
#: it a backslash escapes the next character, a ``'`` included, so ``$'it\'s'`` is one closed word; group 1 is the
#: body, group 2 the closing quote (empty when the script never closes it). Linear: the alternatives never overlap.
ANSI_C_RE = re.compile(r"\$'((?:[^'\\]|\\[\s\S]?)*)('?)")
#: The one-character escapes of ``$'...'`` (bash ``lib/sh/strtrans.c`` ``ansicstr``); the numeric and control ones
#: are :data:`_ANSI_C_NUMERIC` and ``\cX``; any other escaped character keeps its backslash, as bash keeps it.
_ANSI_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


#: bash's numeric escapes in ``$'...'`` (``ansicstr``): the digits each reads at most, and their base. ``\nnn``
#: (octal, the first digit included, the byte its value modulo 256), ``\xHH``, ``\uHHHH``, ``\UHHHHHHHH`` (a
#: Unicode character); ``\x``, ``\u`` or ``\U`` with no hex digit after it is kept as written.
_ANSI_C_NUMERIC = {"x": (2, 16), "u": (4, 16), "U": (8, 16)}
_OCTAL, _HEX = frozenset("01234567"), frozenset("0123456789abcdefABCDEF")


def ansi_c_text(body: str) -> str:
    r"""The text of the body of a ``$'...'`` quote (:data:`ANSI_C_RE`'s group 1): its escapes decoded as bash
    decodes them (bash ``lib/sh/strtrans.c::ansicstr``): :data:`_ANSI_C_ESCAPES`, the numeric escapes of
    :data:`_ANSI_C_NUMERIC` and octal ``\nnn``, ``\cX`` (the control character ``X & 0x1f``, DEL for ``?``). The
    bytes of 0x80 or more that ``\xHH`` and ``\nnn`` give are read as UTF-8 (``$'\xc3\xa9'`` is ``é``), U+FFFD
    where they are not; a NUL ends the text, as the C string bash builds ends there (``$'a\0b'`` is ``a``)."""
    if "\\" not in body:
        return body
    out: list[str] = []
    raw = False
    k, n = 0, len(body)
    while k < n:
        c = body[k]
        if c != "\\" or k + 1 >= n:
            out.append(c)
            k += 1
            continue
        nxt = body[k + 1]
        code: int | None = None
        if nxt in _OCTAL:
            end = k + 1
            while end < min(n, k + 4) and body[end] in _OCTAL:
                end += 1
            code, k = int(body[k + 1 : end], 8) & 0xFF, end
        elif nxt in _ANSI_C_NUMERIC:
            most, base = _ANSI_C_NUMERIC[nxt]
            end = k + 2
            while end < min(n, k + 2 + most) and body[end] in _HEX:
                end += 1
            if end == k + 2:
                out.append("\\" + nxt)
                k = end
                continue
            code, k = int(body[k + 2 : end], base), end
            if nxt != "x" and code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
                if code == 0:
                    break
                out.append(chr(code))
                continue
            code = code if nxt == "x" else 0xFFFD
        elif nxt == "c" and k + 2 < n:
            # TOCTRL: ``?`` is DEL; a backslash after ``\c`` takes the one after it along (``\c\\`` is 0x1c)
            ch = body[k + 2]
            code, k = (0x7F if ch == "?" else ord(ch.upper()) & 0x1F), k + 3
            if ch == "\\" and k < n and body[k] == "\\":
                k += 1
        else:
            out.append(_ANSI_C_ESCAPES.get(nxt, "\\" + nxt))
            k += 2
            continue
        if code == 0:
            break
        if code >= 0x80 and code != 0xFFFD:
            code, raw = 0xDC00 + code, True  # a raw byte, read as UTF-8 below
        out.append(chr(code))
    text = "".join(out)
    if raw:
        try:
            text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:  # a lone surrogate the manifest itself wrote
            text = "".join("\ufffd" if 0xDC80 <= ord(ch) <= 0xDCFF else ch for ch in text)
    return text


def _default_unread(default: str) -> bool:
    """Whether the word after ``:-`` (as written) holds an expansion: a ``$`` or a backtick outside one single-quoted
    string (``'$5'`` is the text $5; an ANSI-C ``$'...'`` is decoded by :func:`_default_text`)."""
    if "$" not in default and "`" not in default:
        return False
    d = default
    if len(d) >= 2 and d[0] == d[-1] == "'" and "'" not in d[1:-1]:
        return False
    a = ANSI_C_RE.fullmatch(d) if d.startswith("$'") else None
    return not (a is not None and a.group(2) and "$" not in d[1:] and "`" not in d)


def _default_text(default: str) -> tuple[str, bool]:
    """The text of the default word of ``${X:-default}`` and whether it is one quoted string, which bash does not
    split into words: ``"a b"`` and ``'a b'`` (the quote not inside), ``$'a\\tb'`` (its escapes decoded); other
    text has its surrounding quotes stripped, as before."""
    d = default
    if (
        len(d) >= 2
        and d[0] == d[-1]
        and d[0] in "'\""
        and d[0] not in d[1:-1]
        and (d[0] == "'" or "\\" not in d)
    ):
        return d[1:-1], True
    if d.startswith("$'"):
        a = ANSI_C_RE.fullmatch(d)
        if a is not None and a.group(2):
            return ansi_c_text(a.group(1)), True
    return d.strip("\"'"), False


#: ``${NAME[@]}``, ``${NAME[*]}``, ``${NAME[N]}``, ``${#NAME[@]}`` (bash(1) "Arrays"; a subscript of a literal number)
_ARRAY_REF_RE = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*)\[(@|\*|[0-9]{1,6})\]\Z")
#: ``${N:-default}``/``${N-default}`` of a positional parameter N (bash(1) "Parameter Expansion")
_POSITIONAL_DEFAULT_RE = re.compile(r"([0-9]+|[@*])(:?)([-=])(.*)\Z", re.S)
#: ``${@:OFFSET}``/``${@:OFFSET:LENGTH}`` (and ``*``) with literal numbers: the positional parameters from OFFSET (0 is
#: ``$0``; negative, written after a blank, from the end), LENGTH of them (bash(1) "Parameter Expansion")
#: (``${@:-1}`` is ``$@`` with the default 1: a negative offset needs the blank)
_AT_CUT_RE = re.compile(r"([@*]):(?:[ \t]+(-?[0-9]{1,9})|([0-9]{1,9}))[ \t]*(?::[ \t]*([0-9]{1,9})[ \t]*)?\Z")
#: ``${NAME:OFFSET}``/``${NAME:OFFSET:LENGTH}`` and ``${NAME[@]:OFFSET[:LENGTH]}`` (``*`` too) with literal numbers: the
#: substring of a variable's value, the elements of an array from OFFSET (0 is the first); a negative offset, written
#: after a blank, counts from the end (bash(1) "Parameter Expansion", "Substring Expansion"; ``${X:-1}`` is X with the
#: default 1). A negative LENGTH (a scalar's: up to that many characters from the end) is not read here.
_NAME_CUT_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([@*])\])?:(?:[ \t]+(-?[0-9]{1,9})|([0-9]{1,9}))[ \t]*(?::[ \t]*([0-9]{1,9})[ \t]*)?\Z"
)


def cut_text(name: str, cut: tuple[int, int | None]) -> str:
    """``${NAME:OFFSET[:LENGTH]}`` as a script writes it (a blank before a negative offset, which ``:-`` would read
    as a default): the text an unresolved substring expansion keeps."""
    first, length = cut
    text = "${" + name + (": " if first < 0 else ":") + str(first)
    return text + ("}" if length is None else f":{length}}}")


def _dollar(s: str, i: int, quoted: bool) -> tuple[Part, int]:
    """Parse a ``$`` expansion starting at ``s[i] == '$'``; returns the part and the next index."""
    n = len(s)
    if i + 1 >= n:
        return Part("lit", "$", quoted), i + 1
    c = s[i + 1]
    if c == "(":
        end = _scan_balanced(s, i + 1, "(", ")")
        return Part("sub", s[i:end], quoted), end
    if c == "{":
        end = _scan_balanced(s, i + 1, "{", "}")
        inner = s[i + 2 : end - 1]
        m = _NAME_RE.match(inner)
        if m and m.end() == len(inner):
            return Part("var", inner, quoted), end
        if m and inner[m.end() :].startswith((":-", "-")):
            rest = inner[m.end() :]
            default = rest[2:] if rest.startswith(":-") else rest[1:]
            text, whole = _default_text(default)
            colon = rest.startswith(":-")
            return Part(
                "var",
                m.group(),
                quoted,
                default=text,
                default_quoted=whole,
                colon=colon,
                default_unread=_default_unread(default),
            ), end
        if inner in ("@", "*"):
            return Part("at", inner, quoted), end
        if inner.isascii() and inner.isdigit():
            return Part("pos", inner, quoted), end
        if inner in ("#", "#@", "#*"):  # ``${#@}``: the number of positional parameters, as ``$#``
            return Part("count", "#", quoted), end
        arr = _ARRAY_REF_RE.match(inner)
        if arr is not None:
            if arr.group(1):  # ${#NAME[@]}: the number of elements
                return (
                    (Part("count", arr.group(2), quoted), end)
                    if arr.group(3) in "@*"
                    else (
                        Part("sub", s[i:end], quoted),
                        end,
                    )
                )
            return Part("arr", arr.group(2), quoted, index=arr.group(3)), end
        d = _POSITIONAL_DEFAULT_RE.match(inner)
        if d is not None:
            # ``${1:-x}``, ``${2-x}``, ``${@:-x}``: a positional parameter (or all of them) with a default, as
            # ``${NAME:-x}``; ``${2:=x}`` would assign it
            text, whole = _default_text(d.group(4))
            return Part(
                "at" if d.group(1) in "@*" else "pos",
                d.group(1),
                quoted,
                default=text,
                default_quoted=whole,
                colon=bool(d.group(2)),
                assigns=d.group(3) == "=",
                default_unread=_default_unread(d.group(4)),
            ), end
        cut = _AT_CUT_RE.match(inner)
        if cut is not None:
            length = None if cut.group(4) is None else int(cut.group(4))
            return Part("at", cut.group(1), quoted, cut=(int(cut.group(2) or cut.group(3)), length)), end
        cut = _NAME_CUT_RE.match(inner)
        if cut is not None:
            length = None if cut.group(5) is None else int(cut.group(5))
            offset = (int(cut.group(3) or cut.group(4)), length)
            if cut.group(2) is not None:  # ${A[@]:1:2}: elements of an array
                return Part("arr", cut.group(1), quoted, index=cut.group(2), cut=offset), end
            return Part("var", cut.group(1), quoted, cut=offset), end
        return Part("sub", s[i:end], quoted), end
    if c == '"' and not quoted:
        # bash's locale-translated string $"...": a double-quoted string (as written in the C locale)
        return Part("lit", "", quoted), i + 1
    if c in "@*":
        return Part("at", c, quoted), i + 2
    if c in "0123456789":
        return Part("pos", c, quoted), i + 2
    m = _NAME_RE.match(s, i + 1)
    if m:
        return Part("var", m.group(), quoted), m.end()
    if c == "#":
        return Part("count", "#", quoted), i + 2
    if c in "?$!-":
        return Part("sub", s[i : i + 2], quoted), i + 2
    return Part("lit", "$", quoted), i + 1


def lex(script: str) -> list[Word | str]:
    """Tokenise a shell script into words and operator strings (``&&``, ``;``, ``\\n``, ``|`` ...).

    Handles single/double quotes, backslash escapes, ``\\``-newline continuations, ``#`` comments,
    ``$VAR``/``${VAR}``/``$(...)``/``$((...))``/backticks. Tolerant: unbalanced quotes run to the end of
    the script. Never raises. Each step matches one token with a compiled expression (:data:`_BETWEEN`,
    :data:`_IN_WORD`, :data:`_IN_DQ`); a word's literal text is collected in pieces and joined once, so the
    work is linear in the script (tests/test_shell_oracle.py compares the tokens with the character-class
    lexer this replaced).
    """
    out: list[Word | str] = []
    for run in _tokens(script, True):
        if run.__class__ is str:
            out.append(run)  # type: ignore[arg-type]
            continue
        for tok in run:
            if tok.__class__ is tuple:
                offset, text = tok  # type: ignore[misc]
                out.append(Word([Part("lit", text, False)], offset, text))
            else:
                out.append(tok)  # type: ignore[arg-type]
    return out


#: The characters that end a word after one of its pieces: a blank, a newline, an operator other than ``(``
#: (which, after a word, :data:`_IN_WORD` reads as an operator of its own, and between words starts ``((``).
_ENDS_WORD = frozenset(" \t\r\n;&|)")
#: An io-number: the unquoted digits a redirection operator extends (``2>&1``); any other word a ``<`` or
#: ``>`` follows ends there (POSIX 2.3 rule 6, 2.10.1: ``cat<<EOF`` is ``cat`` and ``<<EOF``).
_IO_NUMBER = re.compile(r"[0-9]+")


def _tokens(
    script: str,
    ops: bool = False,
    span: tuple[int, int] | None = None,
    heredocs: list[tuple[int, int]] | None = None,
    bash: bool = False,
) -> Iterator[list[Word | tuple[int, str]] | str]:
    """:func:`lex`'s tokens a command at a time: the words up to each operator, as a list (when there are
    any), then, with ``ops``, the operator itself. :func:`commands` lexes only as far as its caller reads (an
    engine command is found before the rest of its script is lexed), and takes a command's words at once (not
    a generator step per token). A word of ordinary characters only (most words) comes as ``(offset, text)``,
    the word ``Word([Part("lit", text, False)], offset, text)`` without building it (:func:`commands` makes its
    ShellArg directly). ``bash``: the script is bash's, which reads ``&>`` and ``&>>`` as redirections
    (:data:`_BETWEEN_BASH`); else dash's ``&`` then ``>``."""
    cmd: list[Word | tuple[int, str]] = []
    add = cmd.append
    # ``span``: the part of the script read (a function's body), offsets kept
    i, n = (0, len(script)) if span is None else span
    parts: list[Part] = []
    start = -1
    # ``parts[-1]`` is a literal piece still growing: its text is ``"".join(acc)`` (None: it is not)
    acc: list[str] | None = None
    acc_quoted = False
    between = (_BETWEEN_BASH if bash else _BETWEEN).match
    in_word = (_IN_WORD_BASH if bash else _IN_WORD).match
    in_dq = _IN_DQ.match
    # here-documents: (delimiter, strip leading tabs) of the ``<<`` operators read since the last newline, whose
    # bodies start after the next one; ``delim_next`` (strip flag) when a bare ``<<``/``<<-`` waits for its word
    pending: list[tuple[str, bool]] = []
    delim_next: bool | None = None
    # the offset of a single or double quote the script never closes (it runs to the end), else -1
    open_quote = -1
    while i < n:
        if start < 0:
            m = between(script, i)  # never None: everything in it is optional
            kind = m.lastgroup  # type: ignore[union-attr]
            end = m.end()  # type: ignore[union-attr]
            if kind is not None:
                text = m.group(kind)  # type: ignore[union-attr]
                if kind == "word":
                    if delim_next is not None:
                        pending.append((text, delim_next))
                        delim_next = None
                    add((end - len(text), text))
                elif kind == "op":
                    delim_next = None  # a bare << before an operator has no word (a syntax error in sh)
                    if cmd:
                        yield cmd
                        cmd = []
                        add = cmd.append
                    if ops:
                        yield text
                    if text == "\n" and pending:
                        end = _skip_heredocs(script, end, pending, heredocs)
                        pending = []
                elif kind == "arith":
                    close = script.find("))", end)
                    i, end = end - 2, n if close < 0 else close + 2
                    text = script[i:end]
                    add(Word([Part("sub", text)], i, text))
                else:  # redir
                    start = end - len(text)
                    acc, acc_quoted = [text], False
                    parts = [Part("lit", text, False)]
                i = end
                continue
            # only blanks, line continuations and comments: the end, or a word that needs the steps below
            if end >= n:
                break
            i = start = end
        m = in_word(script, i)  # every character starts one alternative: never None
        kind = m.lastgroup  # type: ignore[union-attr]
        end = m.end()  # type: ignore[union-attr]
        if kind == "run" or kind == "redir":
            text = m.group()  # type: ignore[union-attr]
            if kind == "redir" and (text[0] == "&" or not _IO_NUMBER.fullmatch(script, start, i)):
                # the operator delimits the word before it and starts its own (``cat<<EOF``, ``m>log``)
                word, delim_next = _end_word(parts, acc, start, script[start:i], pending, delim_next)
                add(word)
                parts, start, acc = [], i, None
            acc, acc_quoted = _add_text(parts, acc, acc_quoted, text, False), False
        elif kind == "blank" or kind == "op":
            raw = script[start:i]
            word, delim_next = _end_word(parts, acc, start, raw, pending, delim_next)
            add(word)
            parts, start, acc = [], -1, None
            if kind == "op":
                op = m.group()  # type: ignore[union-attr]
                if raw.startswith("<<") and not raw.startswith("<<<"):
                    delim_next = None  # no word after it before the operator: no here-document
                yield cmd
                cmd = []
                add = cmd.append
                if ops:
                    yield op
                if op == "\n" and pending:
                    end = _skip_heredocs(script, end, pending, heredocs)
                    pending = []
        elif kind == "var":
            if acc is not None:
                parts[-1].text = "".join(acc)
                acc = None
            parts.append(
                Part("var", script[i + 2 : end - 1] if script[i + 1] == "{" else script[i + 1 : end])
            )
        elif kind == "dollar" and script.startswith("$'", i):
            # ANSI-C quoting: a quoted piece like '...' whose backslashes escape (a \' does not close it)
            a = ANSI_C_RE.match(script, i)
            end = a.end()  # type: ignore[union-attr]
            if not a.group(2):  # type: ignore[union-attr]
                open_quote = i + 1  # never closed: the match ran to the end of the script
            text = ansi_c_text(a.group(1))  # type: ignore[union-attr]
            acc, acc_quoted = _close_quote(parts, _add_text(parts, acc, acc_quoted, text, True)), True
        elif kind == "dollar":
            if acc is not None:
                parts[-1].text = "".join(acc)
                acc = None
            part, end = _dollar(script, i, False)
            parts.append(part)
            if part.kind == "lit":
                acc, acc_quoted = [part.text], False
        elif kind == "sq" or kind == "esc":
            text = (
                script[i + 1 : end - 1]
                if kind == "sq" and end - i > 1 and script[end - 1] == "'"
                else script[i + 1 : end]
            )
            acc, acc_quoted = _add_text(parts, acc, acc_quoted, text, True), True
            if kind == "sq":
                if end - i < 2 or script[end - 1] != "'":
                    open_quote = i  # ``'`` with no closing one: the match ran to the end of the script
                acc = _close_quote(parts, acc)
        elif kind == "dq":
            end = i + 1
            while end < n:
                d = in_dq(script, end)
                dkind = d.lastgroup  # type: ignore[union-attr]
                if dkind == "end":
                    break
                dend = d.end()  # type: ignore[union-attr]
                if dkind == "cont":
                    end = dend
                    continue
                if dkind == "run" or dkind == "esc" or dkind == "bs":
                    if dkind == "esc":
                        nxt = script[end + 1]
                        text = nxt if nxt in '$`"\\' else "\\" + nxt
                    else:
                        text = d.group()  # type: ignore[union-attr]
                    acc, acc_quoted = _add_text(parts, acc, acc_quoted, text, True), True
                    end = dend
                    continue
                if acc is not None:
                    parts[-1].text = "".join(acc)
                    acc = None
                if dkind == "var":
                    text = script[end + 2 : dend - 1] if script[end + 1] == "{" else script[end + 1 : dend]
                    parts.append(Part("var", text, True))
                    end = dend
                elif dkind == "dollar":
                    part, end = _dollar(script, end, True)
                    parts.append(part)
                    if part.kind == "lit":
                        acc, acc_quoted = [part.text], True
                else:  # bt
                    parts.append(Part("sub", d.group(), True))  # type: ignore[union-attr]
                    end = dend
            if end >= n:
                open_quote = i  # no closing ``"``: the quoted text ran to the end of the script
            acc, acc_quoted = _close_quote(parts, acc), True  # the closing quote (or the end of the script)
            end += 1
        elif kind == "bt":
            if acc is not None:
                parts[-1].text = "".join(acc)
                acc = None
            parts.append(Part("sub", m.group(), False))  # type: ignore[union-attr]
        # cont: a line continuation inside the word; bs: a backslash ending the script (nothing to escape)
        i = end
        if start >= 0 and (i >= n or script[i] in _ENDS_WORD):
            # the word ends here (what follows is read between words): as the ``blank`` step, without the
            # expression's step to find it
            word, delim_next = _end_word(parts, acc, start, script[start:i], pending, delim_next)
            add(word)
            parts, start, acc = [], -1, None
    if start >= 0:
        if acc is not None:
            parts[-1].text = "".join(acc)
        add(Word(parts, start, script[start:n]))
    if open_quote >= 0 and cmd and cmd[-1].__class__ is Word:
        cmd[-1].unclosed = open_quote  # type: ignore[union-attr]  # the word the open quote ran to the end
    if cmd:
        yield cmd


def _add_text(
    parts: list[Part], acc: list[str] | None, acc_quoted: bool, text: str, quoted: bool
) -> list[str]:
    """Append literal ``text`` (quoted or not, ``quoted``) to the word of ``parts`` that :func:`_tokens` is
    reading: to the literal piece still growing (``acc``, its pieces, quoted as ``acc_quoted``; None: none
    grows) when it is quoted alike, else as a new piece, the growing one joined. Returns the pieces of the
    literal now growing (quoted as ``quoted``)."""
    if acc is not None and acc_quoted == quoted:
        acc.append(text)
        return acc
    if acc is not None:
        parts[-1].text = "".join(acc)
    parts.append(Part("lit", "", quoted))
    return [text]


def _close_quote(parts: list[Part], acc: list[str] | None) -> list[str]:
    """Close a quote (``'...'``, ``$'...'``, ``"..."``) in the word of ``parts`` that :func:`_tokens` is reading:
    the growing literal (``acc``) joined, then an empty quoted piece marking the closing quote (the word is
    quoted even when empty). Returns the pieces of that piece, growing now (quoted)."""
    if acc is not None:
        parts[-1].text = "".join(acc)
    parts.append(Part("lit", "", True))
    return [""]


def _end_word(
    parts: list[Part],
    acc: list[str] | None,
    start: int,
    raw: str,
    pending: list[tuple[str, bool]],
    delim_next: bool | None,
) -> tuple[Word, bool | None]:
    """The word of ``parts`` (at offset ``start``, written ``raw``) that a blank, newline or operator ends in
    :func:`_tokens`, with the lexer's here-document state brought up to date: ``acc`` (the pieces of a literal
    part still growing, or None) joined into the last part; the word taken as the delimiter of a bare
    ``<<``/``<<-`` waiting for one (``delim_next``: its strip flag), or, being itself ``<<DELIM``/``<<-DELIM``,
    its delimiter added to ``pending`` (or, a bare ``<<``, the strip flag the next word's delimiter waits
    with). Returns the word and the new ``delim_next``."""
    if acc is not None:
        parts[-1].text = "".join(acc)
    if delim_next is not None:
        pending.append((_unquoted(parts), delim_next))
        delim_next = None
    elif raw.startswith("<<") and not raw.startswith("<<<"):
        here = _unquoted(parts)[2:]
        strip = here.startswith("-")
        if strip:
            here = here[1:]
        if here:
            pending.append((here, strip))
        else:
            delim_next = strip
    return Word(parts, start, raw), delim_next


def _unquoted(parts: list[Part]) -> str:
    """A word's text after quote removal, without expansion (a here-document delimiter's reading: ``'EOF'``,
    ``"EOF"`` and ``\\EOF`` are ``EOF``; ``$X`` stays ``$X``)."""
    return "".join(
        p.text if p.kind == "lit" else ("$" + p.text if p.kind in ("var", "count") else p.text) for p in parts
    )


def _skip_heredocs(
    script: str, i: int, pending: list[tuple[str, bool]], bodies: list[tuple[int, int]] | None = None
) -> int:
    """Index just past the bodies of the here-documents ``pending`` (delimiter, ``<<-``: leading tabs
    stripped), which start at ``i``, the line after their operators' (POSIX, 2.7.4 "Here-Document"): each body
    runs to the first line that is its delimiter, or to the end of the script. A body is the command's input,
    not commands: it is not lexed (a chat template or config file written with ``cat <<EOF`` holds quotes
    and words that are not shell). Linear: each line is looked at once. ``bodies`` gets the span of each body
    (its delimiter's line not included), in the order of ``pending``."""
    n = len(script)
    for delim, strip in pending:
        start = end = i
        while i < n:
            nl = script.find("\n", i)
            stop = n if nl < 0 else nl
            line = script[i:stop]
            if strip:
                line = line.lstrip("\t")
            end, i = i, stop + 1 if nl >= 0 else n
            if line == delim or line.rstrip("\r") == delim:
                break
            end = i
        if bodies is not None:
            bodies.append((start, end))
    return i


#: A redirection word: its io-number, operator (``>|``, ``<>`` and ``>&`` whole, so that the next word is read as
#: their target: bash's ``>& log`` is ``&> log``, bash(1) "REDIRECTION") and the target when it is attached
#: (``>log``, ``2>&1``).
_REDIRECT_RE = re.compile(r"^\d*(>\||<>|>&|<&|&>>?|>>?|<<?)(.*)$")


#: Characters the expansions of all the scripts of one webhook review may add together (256 KiB), where
#: :func:`review_budget` sets it: each script may add :data:`ARG_MAX` (2 MiB, what ``execve(2)`` could pass on),
#: so a 60 KB script repeating a long ``$A`` made 2 MiB of text to scan per container, and a Deployment of 16
#: such containers (0.96 MB, under the API server's object limit) took 8 s of webhook worker CPU, past the 2 s
#: review budget (admitted unchecked, failure mode open). Past it, references stay unexpanded (unresolved).
REVIEW_EXPANSION_CHARS = 256 << 10
#: The characters the current review's scripts may still add (a one-item list), or None outside a review.
_REVIEW_LEFT: ContextVar[list[int] | None] = ContextVar("kvlint_review_expansion_left", default=None)


#: Characters of command-line text (after Kubernetes ``$(VAR)`` expansion, each word counted up to
#: :data:`MAX_ARG_STRLEN`) the containers of one webhook review may hold (512 KiB), where :func:`review_budget`
#: sets it. Reading a script costs 0.5 - 0.8 us of CPU a character: 23 containers of 128 KiB scripts took 1.5 -
#: 2.4 s of webhook worker CPU, and 40 containers running ``sh -c "$(X) $(X)"`` with a 60 KB ``X`` in their env
#: (2.4 MB) 1.2 s, past the 2 s review budget on a loaded node (admitted unchecked, failure mode open).
REVIEW_COMMAND_CHARS = 512 << 10
#: The command-line characters the current review may still read and its budget (a two-item list), or None
#: outside a review.
_REVIEW_COMMANDS_LEFT: ContextVar[list[int] | None] = ContextVar("kvlint_review_commands_left", default=None)


class ReviewTooLarge(Exception):
    """The containers of the object under review hold more command-line text than :data:`REVIEW_COMMAND_CHARS`
    (raised by :func:`charge_command_text` within :func:`review_budget`): the review answers 'too large to
    review' instead of reading more. ``chars``: the characters counted so far; ``limit``: the review's budget."""

    def __init__(self, chars: int, limit: int = REVIEW_COMMAND_CHARS) -> None:
        super().__init__(chars)
        self.chars = chars
        self.limit = limit


def charge_command_text(chars: int) -> None:
    """Count ``chars`` characters of a container's command line against the review's
    :data:`REVIEW_COMMAND_CHARS` (nothing outside :func:`review_budget`). Raises :class:`ReviewTooLarge` past it."""
    left = _REVIEW_COMMANDS_LEFT.get()
    if left is None:
        return
    left[0] -= chars
    if left[0] < 0:
        raise ReviewTooLarge(left[1] - left[0], left[1])


@contextmanager
def review_budget(
    chars: int = REVIEW_EXPANSION_CHARS, command_chars: int = REVIEW_COMMAND_CHARS
) -> Iterator[None]:
    """Within the block, the expansions of all scripts together add at most ``chars`` characters (each script
    still at most :data:`ARG_MAX`), and the containers' command lines hold at most ``command_chars``
    (:func:`charge_command_text`)."""
    token = _REVIEW_LEFT.set([chars])
    commands_token = _REVIEW_COMMANDS_LEFT.set([command_chars, command_chars])
    try:
        yield
    finally:
        _REVIEW_COMMANDS_LEFT.reset(commands_token)
        _REVIEW_LEFT.reset(token)


#: The function calls and scripts sourced from a command's input one reading follows (:func:`_read_commands`): each
#: reads the function's body again (a script calling a function thousands of times, or one calling itself, would
#: read it thousands of times), or reads on to the end of the line for the here-document (thousands of `. /dev/stdin
#: <<E;` on one line would read the rest of it each). A call past it is read as a command of its own.
_FUNCTION_CALLS = 64

#: What an argument costs ``execve(2)`` beyond its text: its NUL and its ``argv`` pointer (Linux fs/exec.c
#: ``bprm_stack_limits`` takes ``(argc + envc) * sizeof(void *)`` from the limit, and each string is counted with its
#: NUL): each field an expansion makes is charged this to the script's budget, so an expansion into many empty or
#: one-letter fields (``$@`` of 40,000 empty parameters, ``IFS=,`` and 100,000 commas) cannot make millions of them
_ARG_OVERHEAD = 1 + 8


class _Budget:
    """Characters the expansions of one script may still add (:data:`ARG_MAX`, and what is left of the review's
    :data:`REVIEW_EXPANSION_CHARS` within :func:`review_budget`): a script that doubles a variable at each
    assignment, or repeats ``"$@"`` or a long ``$VAR`` many times, keeps the references it cannot afford
    unexpanded (unresolved) instead of building gigabytes of text."""

    def __init__(self, left: int = ARG_MAX) -> None:
        self.left = left
        self.review = _REVIEW_LEFT.get()
        #: the function calls the reading may still follow (:data:`_FUNCTION_CALLS`)
        self.calls = _FUNCTION_CALLS
        #: the array elements the reading may still assign (:data:`_ARRAY_ELEMENTS`)
        self.elements = _ARRAY_ELEMENTS
        #: what ``$@`` costs for each list of positional parameters the reading expanded it from, by the
        #: list's id (the list kept, so the id is not reused): :meth:`params_cost`
        self._params: dict[int, tuple[Sequence[ShellArg], list[int], int]] = {}
        #: the fields each unquoted value expanded splits into, by the value's id and IFS: :meth:`field_count`
        self._fields: dict[tuple[int, re.Pattern[str] | None], tuple[str, int]] = {}
        #: whether each value a substring expansion read holds no unresolved reference, by its id: :meth:`resolved`
        self._resolved: dict[tuple[int, None], tuple[str, bool]] = {}

    def field_count(self, value: str, splitter: re.Pattern[str] | None) -> int:
        """The pieces an unquoted expansion of ``value`` splits into at ``splitter``'s delimiters (IFS's:
        :func:`_ifs_splitter`; None: no splitting), counted by a search and once per value and IFS: a reference
        the budget cannot afford is refused without splitting its value again (200 references of a value of
        100,000 commas under ``IFS=,``)."""
        key = (id(value), splitter)
        known = self._fields.get(key)
        if known is not None and known[0] is value:
            return known[1]
        count = 1 if splitter is None else 1 + len(splitter.findall(value))
        self._fields[key] = (value, count)
        return count

    def resolved(self, value: str) -> bool:
        """Whether a variable's ``value`` holds no reference kvlint left unresolved (:func:`unresolved`), searched once
        per value: 10,000 substrings of a 100,000-character value searched it at each (2 ms each)."""
        key = (id(value), None)
        known = self._resolved.get(key)
        if known is not None and known[0] is value:
            return known[1]
        answer = not _is_unresolved(value)
        self._resolved[key] = (value, answer)
        return answer

    def params_cost(self, positional: Sequence[ShellArg]) -> tuple[int, int]:
        """What ``$@`` from ``positional`` costs: each parameter after ``$0`` its text and :data:`_ARG_OVERHEAD`,
        as ``execve(2)`` counts an argument against :data:`ARG_MAX` (so a list of empty parameters is not free).
        Summed once per list, not at each reference: 10,000 ``$@`` of 40,000 parameters summed them 10,000 times
        once the budget was spent (22 s for a 140 KB script)."""
        return self.slice_cost(positional, 1, len(positional))

    def _param_sums(self, base: Sequence[ShellArg]) -> tuple[Sequence[ShellArg], list[int], int]:
        """``(base, characters of base[:k] for each k, the first k whose word may have been another number of words
        (``len(base)`` when none; 0 for no list))``, once per list of parameters (a list
        after ``shift`` is read through its base, :class:`_Shifted`: 500 ``shift; vllm "$@"`` lines over 40,000 parameters
        summed the shifted list each time, 14 s)."""
        known = self._params.get(id(base))
        if known is not None and known[0] is base and len(known[1]) == len(base) + 1:
            return known  # (an array's list grows in place: its sums are made again then)
        sums = [0]
        exact = len(base)
        for k, arg in enumerate(base):
            # an unquoted word kvlint could not expand may have been any number of words, and so may a quoted one
            # it could not expand that holds an ``@`` (``"${ARGS[@]}"``, ``"$@"``: one word each element)
            if k and exact == len(base) and arg.unresolved and (not arg.quoted or "@" in arg.text):
                exact = k
            sums.append(sums[-1] + len(arg.text))
        entry = (base, sums, exact)
        self._params[id(base)] = entry
        return entry

    def params_known(self, positional: Sequence[ShellArg]) -> bool:
        """Whether ``positional`` are all the positional parameters bash has (``$#`` is ``len - 1``, ``$5`` beyond
        them is unset): not when there are none at all (not known), or one of them is an unquoted word kvlint
        could not expand (``f $ARGS``: it may have been no word or several)."""
        base = positional.base if isinstance(positional, _Shifted) else positional
        return bool(base) and self._param_sums(base)[2] == len(base)

    def known_through(self, positional: Sequence[ShellArg], index: int) -> bool:
        """Whether ``positional[index]`` is the parameter bash has at ``index`` (or is unresolved): no word before it may have
        been another number of words (``f $ARGS b``: ``$2`` is ``b`` only when ``$ARGS`` was one word; a word before a
        ``shift`` counts, the words it dropped not being known)."""
        if index <= 0:
            return True
        base, drop = (
            (positional.base, positional.drop) if isinstance(positional, _Shifted) else (positional, 0)
        )
        exact = self._param_sums(base)[2]
        return exact == len(base) or exact >= index + drop  # (that word itself: unresolved, as written)

    def slice_cost(self, positional: Sequence[ShellArg], start: int, stop: int) -> tuple[int, int]:
        """What ``positional[start:stop]`` (``${@:OFFSET:LENGTH}``, ``$@`` from 1) costs, as :meth:`params_cost`
        counts it: from the sums of the list's base (``$0``, then ``$1`` ... after a ``shift`` dropped ``drop``)."""
        if stop <= start:
            return 0, 0
        base, drop = (
            (positional.base, positional.drop) if isinstance(positional, _Shifted) else (positional, 0)
        )
        sums = self._param_sums(base)[1]
        chars = len(base[0].text) if start == 0 else 0
        first = max(start, 1)
        if stop > first:
            chars += sums[stop + drop] - sums[first + drop]
        return chars + _ARG_OVERHEAD * (stop - start), chars

    def take(self, n: int, text: int | None = None) -> bool:
        """Spend ``n`` characters when affordable and the text they stand for (``text`` characters, else ``n``) is
        at most :data:`MAX_ARG_STRLEN`; whether it could."""
        if (n if text is None else text) > MAX_ARG_STRLEN or n > self.left:
            return False
        review = self.review
        if review is not None:
            if n > review[0]:
                return False
            review[0] -= n
        self.left -= n
        return True


def _expand(
    word: Word,
    env: Mapping[str, str],
    positional: Sequence[ShellArg],
    *,
    assign: bool = False,
    budget: _Budget | None = None,
    fast: bool = True,
    _whole: bool = False,
    arrays: Mapping[str, list[ShellArg]] | None = None,
) -> list[ShellArg]:
    """Expand one word: variables from ``env``, ``$@`` from ``positional``, with field splitting of
    unquoted variable values. Unknown variables are kept literally and flagged ``unresolved``, and so are
    those whose text ``budget`` cannot afford (:class:`_Budget`).

    ``assign``: the word is a ``NAME=value`` assignment, which the shell expands without field splitting
    (``"$@"`` joins the parameters with spaces): the result is one field.

    ``fast`` (the default) reads a word of literal pieces only without the general walk; the tests compare
    the two (``fast=False``). ``_whole``: no field splitting (an assignment's value)."""
    if budget is None:
        budget = _Budget()
    if not fast:
        pass
    elif len(word.parts) == 1 and word.parts[0].kind == "lit":
        # one piece of literal text (most words): no expansion, no field splitting, as below
        only = word.parts[0]
        return [ShellArg(only.text, word.start, None, quoted=only.quoted)] if only.text or only.quoted else []
    else:
        for p in word.parts:
            if p.kind != "lit":
                break
        else:
            # literal pieces only (a quoted word: its text, then the empty piece marking the closing quote): one
            # field, the pieces joined, as the walk below builds it (an assignment too: no field to join)
            text = "".join([p.text for p in word.parts])
            quoted = False
            for p in word.parts:
                if p.quoted:
                    quoted = True
                    break
            if not text and not quoted:
                return []
            return [ShellArg(text, word.start, None, False, False, quoted)]
    if assign:
        # no field splitting (bash(1) "Parameters": "Word splitting ... [is] not performed" on an assignment's value:
        # `B=$A` keeps A's blanks); "$@" and $@ are one field each parameter, joined below with spaces
        parts = _expand(word, env, positional, budget=budget, fast=fast, _whole=True, arrays=arrays)
        if len(parts) <= 1:
            return parts
        from_env = unresolved = substituted = False
        for field in parts:
            from_env = from_env or field.from_env
            unresolved = unresolved or field.unresolved
            substituted = substituted or field.substituted
        text = " ".join([field.text for field in parts])
        return [ShellArg(text, word.start, None, from_env, unresolved, True, substituted)]
    fields: list[ShellArg] = []
    cur: list[str] = []
    from_env = unresolved = substituted = False
    quoted_any = has_at = False
    for p in word.parts:
        if p.quoted:
            quoted_any = True
            if (p.kind == "at" and p.text == "@") or (p.kind == "arr" and p.index == "@"):
                has_at = True
    have_cur = False
    # the positional parameter the field so far is made of alone (its word, its position kept), and whether
    # anything else went into the field (script text, a variable, another parameter)
    cur_arg: ShellArg | None = None
    cur_other = False

    def push() -> None:
        nonlocal cur, from_env, unresolved, have_cur, substituted, cur_arg, cur_other
        if have_cur:
            text = "".join(cur)
            a = cur_arg
            if a is not None and not cur_other:
                fields.append(
                    a
                    if text == a.text
                    else ShellArg(text, a.offset, a.loc, a.from_env, a.unresolved, a.quoted, a.substituted)
                )
            else:
                fields.append(ShellArg(text, word.start, None, from_env, unresolved, quoted_any, substituted))
        cur, from_env, unresolved, have_cur, substituted = [], False, False, False, False
        cur_arg, cur_other = None, False

    def add_param(text: str, arg: ShellArg) -> None:
        """Text of the parameter ``arg`` joining the field."""
        nonlocal from_env, unresolved, have_cur, substituted, cur_arg, cur_other
        if cur_arg is not None:
            cur_other = True  # (text, a variable or a substitution already set it)
        else:
            cur_arg = arg
        cur.append(text)
        have_cur = True
        from_env = from_env or arg.from_env
        unresolved = unresolved or arg.unresolved
        substituted = substituted or arg.substituted

    braced_runs: list[str] | None = None  # _braced_runs(word.raw), made when a variable stays unresolved
    ifs = env.get("IFS")  # the shell's (see _Shell; None: bash's default)
    if ifs == _DEFAULT_IFS:
        ifs = None
    # an IFS set from a variable kvlint does not know: where bash splits is not known either
    ifs_unknown = ifs is not None and _is_unresolved(ifs)
    splitter = _IFS_BLANKS if ifs is None else _ifs_splitter(ifs)

    def split(
        text: str, arg: ShellArg | None, starts: list[int] | None = None, owners: Sequence[ShellArg] = ()
    ) -> None:
        """Field splitting of an unquoted expansion's ``text`` at IFS (bash(1) "Word Splitting"): a run of IFS
        blanks, or an IFS character that is not a blank with the blanks around it, ends the field; the second
        ends it even when empty (``IFS=,`` and ``,b`` are the fields "" and b). ``arg``: the parameter the text is
        (None: a variable's value); ``starts``: where each of ``owners`` starts in ``text`` (parameters joined)."""
        nonlocal have_cur, from_env, cur_other, unresolved
        if ifs_unknown:
            unresolved = True
        pieces = [text] if splitter is None or ifs_unknown else splitter.split(text)
        at = 0
        for k in range(0, len(pieces), 2):
            if k > 0:
                at += len(pieces[k - 1]) + len(pieces[k - 2])
            if starts is not None and pieces[k]:
                arg = owners[bisect.bisect_right(starts, at) - 1]
            if k > 0:
                if pieces[k - 1] is not None and pieces[k - 1].strip(" \t\n"):
                    have_cur = True  # a delimiter that is not blanks only: the field ends, empty or not
                push()
                if arg is None:
                    from_env = cur_other = True
            piece = pieces[k]
            if piece:
                if arg is None:
                    cur.append(piece)
                    have_cur = True
                else:
                    add_param(piece, arg)

    def add_params(params: Sequence[ShellArg], quoted: bool, star: bool) -> None:
        """A list of parameters joining the fields, as bash(1) "Special Parameters" expands ``$*``/``$@`` and
        "Arrays" ``${A[*]}``/``${A[@]}`` alike (also ``$1``, ``${A[1]}``: a list of one, or none when unset).
        ``quoted`` (or no field splitting): with ``star`` (``"$*"``, ``"${A[*]}"``, ``"$1"``) one string, the
        parameters joined with IFS's first character (unset: a space; empty: nothing); without (``"$@"``) one
        field per parameter, the first joined to the text before it and the last to the text after it
        (``--x="$@"``). Unquoted, each parameter is split into fields at IFS, one parameter ending a field (empty
        ones make none)."""
        nonlocal from_env, unresolved, have_cur, substituted, cur_other
        if quoted and star:
            if len(params) == 1:
                add_param(params[0].text, params[0])
            else:
                text = (" " if ifs is None else ifs[:1]).join([arg.text for arg in params])
                unresolved = unresolved or ifs_unknown
                cur_other = have_cur = True
                cur.append(text)
                for arg in params:
                    from_env = from_env or arg.from_env
                    unresolved = unresolved or arg.unresolved
                    substituted = substituted or arg.substituted
        elif quoted:
            for k, arg in enumerate(params):
                if k > 0:
                    push()
                add_param(arg.text, arg)
        elif ifs and len(params) > 1:
            # an IFS the script set: bash joins the parameters with its first character, then splits (IFS=, and
            # the parameters `b,` `c` are b, "", c), each field pointing at its parameter. (Not as bash 5.2: a
            # parameter starting with IFS blanks then another IFS character, under an IFS of both, gives bash no
            # empty first field, here one.)
            starts, at = [], 0
            for arg in params:
                starts.append(at)
                at += len(arg.text) + len(ifs[:1])
            split(ifs[:1].join([arg.text for arg in params]), params[0], starts, params)
        else:
            for k, arg in enumerate(params):
                if k > 0:
                    push()
                split(arg.text, arg)

    def add_value(val: str, whole: bool) -> bool:
        """A variable's value (or a default) joining the word: ``whole`` (quoted, or no field splitting) as it
        is, else split into fields at IFS (unset: runs of space, tab, newline only: bash keeps a non-breaking
        space or a carriage return in the word), a blank at either end ending the field there (``x${A}y`` with
        A=" b " is x, b, y). Its characters are taken from the budget first, and, unquoted, what execve charges
        each further field it splits into; False (nothing added) when the budget cannot afford them."""
        nonlocal from_env, have_cur
        cost = len(val)
        if not whole and not ifs_unknown and cost <= MAX_ARG_STRLEN:
            cost += _ARG_OVERHEAD * (budget.field_count(val, splitter) - 1)
        if not budget.take(cost, len(val)):
            return False
        from_env = True
        if whole:
            cur.append(val)
            have_cur = True
        else:
            split(val, None)
        return True

    for p in word.parts:
        if p.kind == "lit":
            if has_at and not p.text:
                continue
            if p.text:
                cur_other = True
            cur.append(p.text)
            have_cur = have_cur or bool(p.text) or p.quoted
        elif p.kind == "var" and p.cut is not None:
            # ``${X:1:2}``, ``${X: -1}``: the characters of X's value from the offset (negative: from the end; out of
            # the value: none), LENGTH of them (bash(1) "Substring Expansion"), when the value is known
            cur_other = True
            own = env.get(p.text)
            if own is None or not budget.resolved(own):
                cur.append(cut_text(p.text, p.cut))
                unresolved = have_cur = True
                continue
            first, length = p.cut
            first = first if first >= 0 else len(own) + first
            stop = len(own) if length is None else min(len(own), first + length)
            # the characters spent before the value is sliced (a reference the budget cannot afford copies none),
            # then the fields an unquoted one splits into
            if first < 0 or stop <= first:
                first = stop = 0
            if not budget.take(stop - first):
                cur.append(cut_text(p.text, p.cut))
                unresolved = have_cur = True
                continue
            piece = own[first:stop]
            if not (p.quoted or _whole) and (
                ifs_unknown or not budget.take(_ARG_OVERHEAD * (budget.field_count(piece, splitter) - 1), 0)
            ):
                cur.append(cut_text(p.text, p.cut))
                unresolved = have_cur = True
                continue
            from_env = True
            if p.quoted or _whole:
                cur.append(piece)
                have_cur = True
            else:
                split(piece, None)
        elif p.kind == "var":
            cur_other = True
            own = env.get(p.text)
            # the variable's own value when set (and, for ``${X:-d}``, not empty), else the default when given
            by_default = p.default is not None and (own is None or (p.colon and not own))
            if by_default and (p.default_unread or (own is None and _maybe_set(env, p.text))):
                # set to a value kvlint does not know (A=$(cmd), read A, a valueFrom it did not read): bash takes
                # the value, not the default; or a default kvlint does not expand (${X:-${D:-1}})
                cur.append(_default_ref(p))
                unresolved = have_cur = True
                continue
            val = p.default if by_default else own
            whole = p.quoted or _whole or (p.default_quoted and by_default)
            if val is None or not add_value(val, whole):
                # braced when quoted, in a word of several pieces, or written so (the word starts with ``${`` or
                # holds ``${`` + the name, found by bisection in its sorted runs: see _braced_runs)
                braced = p.quoted or len(word.parts) > 1 or word.raw.startswith("${")
                if not braced:
                    if braced_runs is None:
                        braced_runs = _braced_runs(word.raw)
                    braced = _has_prefixed(braced_runs, p.text)
                if braced:
                    cur.append("${" + p.text + "}")
                else:
                    cur.append("$" + p.text)
                unresolved = have_cur = True
        elif p.kind == "arr":
            # an array the script assigned (``ARGS=(--tensor-parallel-size 4)``): its list holds a placeholder, then
            # the elements, as positional parameters hold $0 then $1 ...; read only while NAME still holds its first
            # element (a scalar assignment or unset since: not known here)
            elements = arrays.get(p.text) if arrays is not None else None
            if elements is not None and env.get(p.text) != (elements[1].text if len(elements) > 1 else None):
                elements = None
            index = p.index or "@"
            if (
                elements is not None
                and index not in "@*"
                and not budget.known_through(elements, int(index) + 1)
            ):
                elements = None  # `A=($(cmd) b)`: ${A[1]} is `b` only when `$(cmd)` gave one word
            params: Sequence[ShellArg] | None = None
            if p.cut is not None:
                # ``${A[@]:1:2}``, ``${A[@]: -1}``: the elements from the offset (0: the first; negative: from the end;
                # out of the array: none), LENGTH of them, when every element is known
                if elements is not None and budget.params_known(elements):
                    first, length = p.cut
                    count = len(elements) - 1
                    first = first if first >= 0 else count + first
                    start = 1 + min(max(first, 0), count)
                    stop = (
                        start
                        if first < 0
                        else len(elements)
                        if length is None
                        else min(len(elements), start + length)
                    )
                    cost, chars = budget.slice_cost(elements, start, stop)
                    if budget.take(cost, chars):
                        params = elements[start:stop]
                elements = None
            if elements is not None and index in "@*":
                cost, chars = budget.params_cost(elements)
                params = elements[1:] if budget.take(cost, chars) else None
            elif elements is not None:
                k = int(index) + 1
                params = elements[k : k + 1]
                cost, chars = budget.slice_cost(elements, k, k + len(params))
                if not budget.take(cost, chars):
                    params = None
            if params is None:
                cur_other = True
                cur.append(
                    "${" + p.text + "[" + index + "]}"
                    if p.cut is None
                    else cut_text(f"{p.text}[{index}]", p.cut)
                )
                unresolved = have_cur = True
                continue
            add_params(params, p.quoted or _whole, index != "@")
        elif p.kind == "at" or p.kind == "pos":
            # ``$@``, ``$*``, ``$1`` as bash expands them (bash(1) "Special Parameters", IFS unset: space, tab,
            # newline): quoted ``"$@"`` is one field per parameter, the first joined to the text before it and the
            # last to the text after it (``--x="$@"``); quoted ``"$*"`` and ``"$1"`` are one string (the
            # parameters joined with a space); unquoted, each parameter is split into fields at blanks, one
            # parameter ending a field (empty ones make none)
            if p.default is not None:
                taken = _default_taken(p, positional, budget, ifs)
                if taken is None or (taken and (p.assigns or p.default_unread)):
                    # not known; or ``${2:=x}`` with $2 unset: bash refuses to assign it, the shell exits
                    cur_other = True
                    cur.append(_default_ref(p))
                    unresolved = have_cur = True
                    continue
                if taken:
                    # ``${1:-x}``, ``${@:-x}``: the default, as ``${NAME:-x}`` takes it
                    cur_other = True
                    if not add_value(p.default, p.quoted or _whole or p.default_quoted):
                        cur.append(_default_ref(p))
                        unresolved = have_cur = True
                    continue
            if p.kind == "pos":
                idx = digits(p.text)
                params = (
                    positional[idx : idx + 1]
                    if idx is not None and idx < len(positional) and budget.known_through(positional, idx)
                    else None
                )
                if params is None and idx is not None and budget.params_known(positional):
                    params = []  # beyond $#: unset (bash: "$5" is one empty word, $5 none)
                chars = len(params[0].text) if params else 0
                cost = chars + _ARG_OVERHEAD if params else 0
            elif p.cut is not None:
                # ``${@:2}``, ``${@:1:3}``, ``${@: -1}``: the parameters from the offset ($0 at 0), when all are known
                params = None
                if budget.params_known(positional):
                    first, length = p.cut
                    first = first if first >= 0 else len(positional) + first
                    if 0 <= first:
                        first = min(first, len(positional))
                        stop = len(positional) if length is None else min(len(positional), first + length)
                        cost, chars = budget.slice_cost(positional, first, stop)
                        if budget.take(cost, chars):
                            params = positional[first:stop]
            else:
                cost, chars = budget.params_cost(positional)
                params = positional[1:] if budget.take(cost, chars) else None
            if params is None or (p.kind == "pos" and not budget.take(cost, chars)):
                cur_other = True
                if p.default is not None:
                    cur.append(_default_ref(p))
                elif p.cut is not None:
                    cur.append(cut_text(p.text, p.cut))
                else:
                    cur.append("$" + p.text)
                unresolved = have_cur = True
                continue
            add_params(params, p.quoted or _whole, p.kind == "pos" or p.text == "*")
        elif p.kind == "count" and p.text != "#":
            # ``${#NAME[@]}``: the elements of an array the script assigned (see ``arr`` above)
            cur_other = have_cur = True
            elements = arrays.get(p.text) if arrays is not None else None
            if (
                elements is not None
                and env.get(p.text) == (elements[1].text if len(elements) > 1 else None)
                and budget.params_known(elements)
            ):
                cur.append(str(len(elements) - 1))
                from_env = True
            else:
                cur.append("${#" + p.text + "[@]}")
                unresolved = True
        elif p.kind == "count":
            # ``$#``: the number of positional parameters, when all of them are known
            cur_other = have_cur = True
            if budget.params_known(positional):
                cur.append(str(len(positional) - 1))
                from_env = True
            else:
                cur.append("$#")
                unresolved = True
        else:  # sub
            cur_other = True
            value = arithmetic(p.text, env)
            if value is not None:
                cur.append(value)
                from_env = have_cur = True
                continue
            cur.append(p.text)
            unresolved = have_cur = substituted = True
    push()
    return fields


#: The first character of the key that marks a variable set to a value kvlint does not know (``?A``; ``?*``: any
#: name): no shell variable's name starts with it, so no lookup of a variable finds the mark.
_UNKNOWN_MARK = "?"


def _maybe_set(env: Mapping[str, str], name: str) -> bool:
    """Whether ``name``, absent from ``env``, may be set all the same, to a value kvlint does not know (marked
    ``?NAME`` by :meth:`_Shell.assign`, or ``?*``: :func:`commands`' ``unknown``)."""
    return _UNKNOWN_MARK + name in env or "?*" in env


#: A variable a word of a command references as a shell expands it: ``$A``, ``${A}``, ``${A:-d}``, ``"${A[@]}"``.
_REFERENCED_RE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def _maybe_set_in(
    words: Sequence[ShellArg], env: Mapping[str, str], arrays: Collection[str] = ()
) -> frozenset[str]:
    """:attr:`ShellCommand.maybe_set` for a command of ``words`` run by a shell whose variables are ``env`` (with
    the unknown marks of :func:`_maybe_set`): the names its unresolved words reference that may be set (``*`` for
    any name), and those of ``arrays`` (:attr:`_Shell.array_names`: the script assigned an array to the name, so an
    unresolved ``"${ARGS[@]}"`` is the elements kvlint did not keep, as after ``while read -r w; do ARGS+=("$w");
    done``, not nothing). Linear in the unresolved words' length; a command with none costs nothing."""
    names: set[str] = set()
    for w in words:
        if w.unresolved or "$" in w.text:
            # (a word a variable's value gave holds the references that value was assigned with as written, not
            # marked unresolved: `B=$A; vllm serve m $B` after `A=$(cat f)` gives the word `${A}`)
            names.update(m.group(1) for m in _REFERENCED_RE.finditer(w.text))
    if not names:
        return frozenset()
    found = {name for name in names if _UNKNOWN_MARK + name in env or name in arrays}
    if _UNKNOWN_MARK + "*" in env:
        found.add("*")
    return frozenset(found)


def _default_ref(p: Part) -> str:
    """``${1:-x}``, ``${@-x}``, ``${2:=x}`` as the script wrote it (the default's text as read): the text of such a
    reference kvlint leaves unresolved."""
    return "${" + p.text + (":" if p.colon else "") + ("=" if p.assigns else "-") + (p.default or "") + "}"


def _default_taken(p: Part, positional: Sequence[ShellArg], budget: _Budget, ifs: str | None) -> bool | None:
    """Whether ``${N:-x}``/``${N-x}`` (a ``pos`` part) or ``${@:-x}``/``${*-x}`` (an ``at`` part) takes its default
    (bash(1) "Parameter Expansion"): the parameter unset (``-``) or unset or empty (``:-``); for ``@`` and ``*``
    (bash 5.2) unset is no parameters at all, empty is none or one empty one (two empty ones join to a blank, not
    null). None when not known: the parameters are not all known, or IFS is empty (``"$*"`` then joins empty
    parameters to nothing, where bash's test on ``@`` and ``*`` differ)."""
    if p.kind == "pos":
        idx = digits(p.text)
        if idx is not None and idx < len(positional) and budget.known_through(positional, idx):
            own = positional[idx].text
            return not own and p.colon
        return True if idx is not None and budget.params_known(positional) else None
    if not budget.params_known(positional):
        return None
    count = len(positional) - 1
    if count == 0:
        return True
    if not p.colon:
        return False
    if count == 1:
        return None if positional[1].unresolved else not positional[1].text
    return None if ifs == "" else False


_DEFAULT_IFS = " \t\n"
#: The blanks of bash's default ``IFS`` (space, tab, newline), runs of which split an unquoted expansion into fields
#: (captured, as :func:`_ifs_splitter`'s delimiters are).
_IFS_BLANKS = re.compile(r"([ \t\n]+)")


@functools.lru_cache(maxsize=64)
def _ifs_splitter(ifs: str) -> re.Pattern[str] | None:
    """The delimiters of an ``IFS`` the script set (None: empty, no splitting): a run of its blanks (space, tab,
    newline), or one of its other characters with its blanks either side (bash(1) "Word Splitting")."""
    if not ifs:
        return None
    blanks = "".join(sorted({c for c in ifs if c in " \t\n"}))
    others = "".join(sorted({c for c in ifs if c not in " \t\n"}))
    b = f"[{re.escape(blanks)}]" if blanks else ""
    if not others:
        return re.compile(f"({b}+)")
    o = f"[{re.escape(others)}]"
    return re.compile(f"({b}*{o}{b}*|{b}+)" if blanks else f"({o})")


_BRACED_RUN = re.compile(r"\$\{([A-Za-z0-9_]*)")


def _braced_runs(raw: str) -> list[str]:
    """The name characters after each ``${`` of ``raw``, sorted: ``"${" + name in raw`` is true exactly when one
    of them starts with ``name`` (a name is made of name characters), which :func:`_has_prefixed` answers by
    bisection. Searching ``raw`` for each unresolved variable was quadratic in a word of thousands of
    ``$A``."""
    return sorted(_BRACED_RUN.findall(raw))


def _has_prefixed(runs: list[str], name: str) -> bool:
    """Whether one of the sorted ``runs`` starts with ``name``."""
    k = bisect.bisect_left(runs, name)
    return k < len(runs) and runs[k].startswith(name)


_ARITH_RE = re.compile(r"^\$\(\((.*)\)\)$", re.S)
_ARITH_TOKEN = re.compile(r"\s*(?:(\d+)|\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?|([-+*/%()]))")


#: Shell arithmetic is done in ``intmax_t`` (POSIX, "Arithmetic Expansion"): 64-bit signed integers.
_ARITH_MIN, _ARITH_MAX = -(2**63), 2**63 - 1
#: Parentheses and unary minus nested deeper than this are not evaluated (no real script nests so).
_ARITH_DEPTH = 64


class _ArithError(Exception):
    """An arithmetic expression kvlint does not evaluate (syntax, division by zero, overflow, depth)."""


def arithmetic(text: str, env: Mapping[str, str]) -> str | None:
    """The value of a shell arithmetic expansion ``$(( ... ))`` of integers and variables with ``+ - * / %``
    and parentheses (``$((LWS_GROUP_SIZE * DP_SIZE_LOCAL))``), when every variable is a known integer; else
    None. Division truncates toward zero, as in the shell. None too when a number or a result leaves the
    shell's 64-bit signed range (the shell would wrap it) or the expression nests deeper than
    :data:`_ARITH_DEPTH`; the work is linear in the expression's length."""
    m = _ARITH_RE.match(text.strip())
    if not m:
        return None
    expr, pos = m.group(1), 0
    tokens: list[int | str] = []
    while pos < len(expr):
        if not expr[pos:].strip():
            break
        t = _ARITH_TOKEN.match(expr, pos)
        if t is None:
            return None
        number, name, op = t.groups()
        if name is not None:
            number = env.get(name, "").strip()
            if not re.fullmatch(r"-?\d+", number):
                return None
        if number is not None:
            if len(number.lstrip("-")) > 19:
                return None
            tokens.append(_arith_check(int(number)))
        else:
            tokens.append(op)
        pos = t.end()
    try:
        result, at = _arith_sum(tokens, 0, 0)
    except (_ArithError, IndexError):
        return None
    return None if at != len(tokens) else str(result)


def _arith_check(value: int) -> int:
    if not _ARITH_MIN <= value <= _ARITH_MAX:
        raise _ArithError("outside the shell's 64-bit range")
    return value


def _arith_sum(ts: list[int | str], i: int, depth: int) -> tuple[int, int]:
    value, i = _arith_product(ts, i, depth)
    while i < len(ts) and ts[i] in ("+", "-"):
        op = ts[i]
        rhs, i = _arith_product(ts, i + 1, depth)
        value = _arith_check(value + rhs if op == "+" else value - rhs)
    return value, i


def _arith_product(ts: list[int | str], i: int, depth: int) -> tuple[int, int]:
    value, i = _arith_atom(ts, i, depth)
    while i < len(ts) and ts[i] in ("*", "/", "%"):
        op = ts[i]
        rhs, i = _arith_atom(ts, i + 1, depth)
        if op == "*":
            value = _arith_check(value * rhs)
        elif rhs == 0:
            raise _ArithError("division by zero")
        else:
            q = abs(value) // abs(rhs) * (1 if (value >= 0) == (rhs >= 0) else -1)
            value = _arith_check(q if op == "/" else value - q * rhs)
    return value, i


def _arith_atom(ts: list[int | str], i: int, depth: int) -> tuple[int, int]:
    if depth > _ARITH_DEPTH:
        raise _ArithError("nested too deeply")
    head = ts[i]
    if head == "(":
        value, i = _arith_sum(ts, i + 1, depth + 1)
        if i >= len(ts) or ts[i] != ")":
            raise _ArithError("unbalanced")
        return value, i + 1
    if head == "-":
        value, i = _arith_atom(ts, i + 1, depth + 1)
        return _arith_check(-value), i
    if isinstance(head, int):
        return head, i + 1
    raise _ArithError(f"unexpected {head}")


_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "{", "}", "!", "time", "fi", "done"}
_DECLARING = frozenset({"export", "declare", "local", "readonly", "typeset"})
_WRAPPERS = {"nohup", "command", "builtin"}
#: Wrappers that run the rest of the command after options of their own, each as its ``getopt`` reads them:
#: ``(short options that take a value, short options whose value can only be attached, long options that take a
#: value, operands before the command)``. A short option's value is the rest of its word (``-oL``, ``-Eu`` then
#: the next word) or else the next word; a long option's is after ``=`` or else the next word; options end at
#: ``--`` or at the first word that is not an option (all of them stop there: ``+`` in their option strings).
#: ``numactl --interleave=all vllm serve`` and ``taskset -c 0-7 vllm serve`` were KV503 "not a recognised engine
#: command" (the wrapper word was dropped, its options read as the command). From the option strings of GNU
#: coreutils 9.1 (``stdbuf`` ``"+i:o:e:"``, ``nice`` ``"+n:"`` with the old ``-5``/``--5`` form read as a flag,
#: ``timeout`` ``"+k:s:v"``), util-linux 2.38 (``taskset`` ``"+apchV"``, ``setsid`` ``"+Vhcfw"``, ``ionice``
#: ``"+c:n:p:P:u:tVh"``), numactl 2.0 (``numactl(8)``), tini 0.19 (``"+p:hvwgle:s"``), dumb-init 1.2
#: (``"+hvVcr:"``), sudo 1.9 (``"+Aa:BbC:c:D:Eeg:Hh::iKklNnp:PR:r:ST:t:U:u:Vv"``: ``-h`` takes only an attached
#: host, alone it is ``--help``) and bash's ``exec`` (``"cla:"``).
_ENV_LONG = frozenset({"--chdir", "--split-string", "--unset"})
_OPTION_WRAPPERS: dict[str, tuple[str, str, frozenset[str], int]] = {
    "exec": ("a", "", frozenset(), 0),  # bash's exec [-cl] [-a NAME] COMMAND
    "sudo": (
        "aCcDgpRrTtUu",
        "h",
        frozenset(
            {
                "--auth-type",
                "--close-from",
                "--login-class",
                "--chdir",
                "--group",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            }
        ),
        0,
    ),
    "stdbuf": ("ioe", "", frozenset({"--input", "--output", "--error"}), 0),
    "numactl": (
        "ipmNCPwSfILoM",
        "",
        frozenset(
            {
                "--interleave",
                "--preferred",
                "--membind",
                "--cpunodebind",
                "--physcpubind",
                "--preferred-many",
                "--weighted-interleave",
                "--shm",
                "--file",
                "--shmid",
                "--length",
                "--offset",
                "--shmmode",
            }
        ),
        0,
    ),
    "taskset": ("", "", frozenset(), 1),  # taskset [-a] [-c] MASK|LIST COMMAND
    "nice": ("n", "", frozenset({"--adjustment"}), 0),
    "timeout": ("ks", "", frozenset({"--signal", "--kill-after"}), 1),  # timeout [opts] DURATION COMMAND
    "setsid": ("", "", frozenset(), 0),
    "ionice": ("cnpPu", "", frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"}), 0),
    "tini": ("pe", "", frozenset(), 0),
    "dumb-init": ("r", "", frozenset({"--rewrite"}), 0),
    # GNU coreutils 9.1 ``env`` ``"+C:iS:u:v0"``: then ``NAME=value`` assignments (read by :func:`commands`)
    "env": ("CSu", "", _ENV_LONG, 0),
    # wrap48: gosu 1.17 and su-exec 0.2 (``gosu USER[:GROUP] COMMAND [ARGS]``, no options), util-linux 2.38's
    # runuser (``runuser [options] -u USER [[--] COMMAND]``, ``"c:fg:G:lmpPs:u:hVw:"``, read by :func:`_runuser`:
    # its getopt permutes, and without -u it runs ``-c COMMAND`` with the user's shell) and chrt (``chrt [options]
    # PRIORITY COMMAND``, ``"+abdDefiphmoRrT:P:vV"`` with -T/-P/-D taking a value), GNU screen 4.9's ``screen -dmS
    # NAME COMMAND`` (screen.c reads its options getopt-like; ``-Logfile FILE`` ends with ``e``, which takes a value,
    # so its file is read as one)
    "gosu": ("", "", frozenset(), 1),
    "su-exec": ("", "", frozenset(), 1),
    "runuser": (
        "cugGsw",
        "",
        frozenset(
            {
                "--command",
                "--session-command",
                "--user",
                "--group",
                "--supp-group",
                "--shell",
                "--whitelist-environment",
            }
        ),
        0,
    ),
    "chrt": ("TPD", "", frozenset({"--sched-runtime", "--sched-period", "--sched-deadline"}), 1),
    "screen": ("cehpsStT", "", frozenset(), 0),
    # shell51: GNU coreutils 9.1 chroot (``chroot [OPTION] NEWROOT [COMMAND [ARG]...]``, getopt_long ``"+"``: long
    # options only, --groups and --userspec with a value; without COMMAND it runs ``$SHELL -i``), util-linux 2.38
    # flock (``flock [options] FILE|DIR COMMAND [ARG...]``, ``"+sexnoFuw:E:hV?"``; ``flock [options] FILE -c COMMAND``
    # runs COMMAND with ``$SHELL -c``: :func:`wrapper_step`), OpenBSD doas 6.8 / OpenDoas (``doas [-Lns] [-a style]
    # [-C config] [-u user] command [args]``, ``"+a:C:Lnsu:"``; -C checks the config, -L clears persisted
    # authentication, -s runs a shell: no command runs, :func:`wrapper_step`)
    "chroot": ("", "", frozenset({"--groups", "--userspec"}), 1),
    "flock": ("wE", "", frozenset({"--timeout", "--wait", "--conflict-exit-code"}), 1),
    "doas": ("aCu", "", frozenset(), 0),
    # shell55: expect's unbuffer (``unbuffer [-p] program [args]``: ``-p`` alone, for a pipeline's command), which runs
    # the command on a pseudo-terminal so that its output is not buffered; util-linux 2.38 script (``script [options]
    # [file]``, getopt_long ``"+aB:c:eE:fI:O:o:qm:T:t::Vh"`` by its --help: -t's file only attached; ``-c COMMAND``
    # runs COMMAND with ``$SHELL -c``, /bin/sh when SHELL is unset, and without -c an interactive shell:
    # :func:`_script_command`)
    "unbuffer": ("", "", frozenset(), 0),
    # util-linux 2.38 setpriv (``setpriv [options] <program> [<argument>...]``, its --help: long options, those below
    # with a value; a privilege drop in container entrypoints, ``exec setpriv --reuid=app --regid=app --init-groups
    # python ...``). Its ``--reset-env`` (HOME, SHELL, USER, LOGNAME and PATH only) is not modelled
    "setpriv": (
        "",
        "",
        frozenset(
            {
                "--ambient-caps",
                "--inh-caps",
                "--bounding-set",
                "--ruid",
                "--euid",
                "--rgid",
                "--egid",
                "--reuid",
                "--regid",
                "--groups",
                "--securebits",
                "--pdeathsig",
                "--selinux-label",
                "--apparmor-profile",
            }
        ),
        0,
    ),
    "script": (
        "BcEIOomT",
        "t",
        frozenset(
            {
                "--log-in",
                "--log-out",
                "--log-io",
                "--log-timing",
                "--logging-format",
                "--command",
                "--echo",
                "--output-limit",
            }
        ),
        0,
    ),
}
# util-linux 2.38's su is runuser's su-common.c with ``su->runuser`` false: the same getopt string, ``-u`` refused
# (``errtryhelp``); read by :func:`_runuser` (``su app -c 'vllm serve m'``, ``su - app -c ...``)
_OPTION_WRAPPERS["su"] = _OPTION_WRAPPERS["runuser"]
# GNU findutils 4.9 ``xargs`` (``"+0a:E:e::I:i::L:l::n:prs:txP:d:"``, xargs.c; ``-e``, ``-i``, ``-l`` take only an
# attached value): runs the command with words it reads from its input appended (or, with ``-I``/``-i``, put in
# place of the replace string): the command's arguments are not all in the script (:data:`APPENDING_WRAPPERS`)
_OPTION_WRAPPERS["xargs"] = (
    "aEILnsPd",
    "eil",
    frozenset(
        {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}
    ),
    0,
)
#: The wrappers that give the command they run words kvlint cannot see: what it runs is marked
#: (:attr:`ShellCommand.appends`), so that no rule takes a setting those words may give at the engine's default.
APPENDING_WRAPPERS = {"xargs": "xargs adds words it reads from its input to the command"}


def _after_options(
    words: Sequence[ShellArg],
    h: int,
    end: int,
    name: str | None = None,
    unset: list[str] | None = None,
) -> tuple[int, ShellArg | None]:
    """The index of the first word after the options, ``--`` and operands of the wrapper of
    :data:`_OPTION_WRAPPERS` at ``words[h]`` (``taskset``'s mask, ``timeout``'s duration); or, at an ``env
    -S``/``--split-string``, the index after its value and that value (``env`` reads the string's words next).
    ``name`` is the wrapper's name when ``words[h]`` is a path to it (an exec-form list's ``/usr/bin/tini``).
    ``unset``, for ``env``: gets the names its ``-u NAME``/``--unset=NAME`` remove from the environment, and ``""``
    for ``-i``/``--ignore-environment``/``-`` (all of it); for bash's ``exec``, ``""`` for ``-c``."""
    key = name if name is not None else words[h].text
    short, attached, long, operands = _OPTION_WRAPPERS[key]
    is_env = long is _ENV_LONG
    is_exec = key == "exec"
    h += 1
    while h < end:
        word = words[h]
        text = word.text
        h += 1
        if text == "--":
            break
        if text == "-" and is_env:
            if unset is not None:
                unset.append("")
            continue  # env's lone -: -i
        if text.startswith("--"):
            opt, eq, value = text.partition("=")
            if opt in long and not eq:
                if opt == "--split-string" and h < end:
                    return h + 1, words[h]
                if opt == "--unset" and unset is not None and h < end:
                    unset.append(words[h].text)
                h += 1
            elif opt == "--split-string":
                return h, ShellArg(value, word.offset, word.loc, word.from_env, word.unresolved)
            elif is_env and unset is not None:
                if opt == "--unset":
                    unset.append(value)
                elif opt == "--ignore-environment":
                    unset.append("")
        elif text.startswith("-") and len(text) > 1:
            for i in range(1, len(text)):
                letter = text[i]
                if letter in attached:
                    break  # its value, if any, is the rest of the word
                if letter == "i" and is_env and unset is not None:
                    unset.append("")
                if letter == "c" and is_exec and unset is not None:
                    unset.append("")  # bash's exec -c: the command runs with an empty environment
                if letter in short:
                    if i + 1 < len(text):  # the value attached: -oL
                        if letter == "S" and is_env:
                            return h, ShellArg(
                                text[i + 1 :], word.offset, word.loc, word.from_env, word.unresolved
                            )
                        if letter == "u" and is_env and unset is not None:
                            unset.append(text[i + 1 :])
                    elif h < end:  # the value is the next word: -o L, -Eu app
                        if letter == "S" and is_env:
                            return h + 1, words[h]
                        if letter == "u" and is_env and unset is not None:
                            unset.append(words[h].text)
                        h += 1
                    break
        else:
            h -= 1
            break
    return min(h + operands, end), None


#: The short options of util-linux 2.38's runuser whose value is a command for the user's shell
#: (``su-common.c::su_main``: ``-c``, ``--command``, ``--session-command``)
_RUNUSER_COMMAND = frozenset({"--command", "--session-command"})


def _runuser(
    words: Sequence[ShellArg], h: int, end: int, su: bool = False
) -> tuple[int, ShellArg | None, int, int, tuple[str, ...] | None]:
    """util-linux 2.38 ``runuser`` at ``words[h]`` as ``su-common.c::su_main`` reads it: ``getopt_long`` with
    ``"c:fg:G:lmpPs:u:hVw:"`` *permuting* (options may follow the user: ``runuser app -c CMD``) until ``--``; with
    ``-u USER`` the words left are the command it executes (``execvp``, :func:`_after_options` order: ``runuser
    -u app -- vllm serve m``); without it an optional ``-`` then USER, and ``-c COMMAND`` runs COMMAND with the
    user's shell, the words after USER its ``$0 $1 ...`` (``run_shell``: ``SHELL -c COMMAND ARGS...``).

    ``-l``/``--login`` or the lone ``-`` (``modify_environment``, ``simulate_login``) clears the environment but
    ``TERM`` and the names of ``-w``/``--whitelist-environment LIST``, then sets ``HOME``, ``SHELL``, ``USER``,
    ``LOGNAME`` and ``PATH`` of the user (``runuser -l root -c 'vllm serve $MODEL'`` does not see the container's
    ``MODEL``). ``-u`` with ``-c``, ``-s``, ``-f``, ``-l`` or ``--session-command`` is refused ("options
    --{shell,fast,command,session-command,login} and --user are mutually exclusive"): no command runs.

    ``(index of the command, None, end, -1, None)`` for ``-u``; ``(end, the -c script, index of its $0, index of
    the script's word or -1 when attached, the names a login keeps or None)`` for ``-c``; ``(end, None, end, -1,
    None)`` for neither (an interactive shell: no command). ``su``: the words are su's, which refuses ``-u``
    ("su: invalid option"): no command runs."""
    short, _attached, long, _operands = _OPTION_WRAPPERS["runuser"]
    # the first three operands (su's lone -, the user, the script's $0: all that is read of them) and the index of
    # the last word read as an option, its value or ``--``: the operands from ``operands[k]`` are the rest of the
    # words when no such word follows it. Nothing after ``--`` is read (rr49: copying the words after it and
    # comparing them with a range for each runuser of ``runuser -u a -- runuser -u a -- ...`` was quadratic)
    operands: list[int] = []
    last_option = h
    script: ShellArg | None = None
    script_at = -1
    user_option = False
    login = False
    shell_option = False  # -s, -f, -c, -l or --session-command: refused with -u
    kept: list[str] = ["TERM"]
    j = h + 1
    while j < end:
        word = words[j]
        text = word.text
        j += 1
        if text == "--":
            last_option = j - 1
            operands.extend(range(j, min(end, j + 3 - len(operands))))
            break
        if text.startswith("--"):
            opt, eq, value = text.partition("=")
            at = -1
            if opt in long and not eq and j < end:
                value, word, at = words[j].text, words[j], j
                j += 1
            if opt in _RUNUSER_COMMAND:
                script = ShellArg(value, word.offset, word.loc, word.from_env, word.unresolved, word.quoted)
                script_at = at
            elif opt == "--whitelist-environment":
                kept.extend(value.split(","))
            user_option = user_option or opt == "--user"
            login = login or opt == "--login"
            shell_option = shell_option or opt in ("--login", "--shell", "--fast", *_RUNUSER_COMMAND)
        elif text.startswith("-") and len(text) > 1:
            for i in range(1, len(text)):
                letter = text[i]
                login = login or letter == "l"
                shell_option = shell_option or letter in "csfl"
                if letter in short:
                    at = -1
                    if i + 1 < len(text):
                        value = text[i + 1 :]
                    elif j < end:
                        value, word, at = words[j].text, words[j], j
                        j += 1
                    else:
                        break
                    if letter == "c":
                        script = ShellArg(
                            value, word.offset, word.loc, word.from_env, word.unresolved, word.quoted
                        )
                        script_at = at
                    elif letter == "w":
                        kept.extend(value.split(","))
                    user_option = user_option or letter == "u"
                    break
        else:
            if len(operands) < 3:
                operands.append(j - 1)
            continue
        last_option = j - 1
    if user_option and su:
        return end, None, end, -1, None
    if user_option:
        # the command: the operands, which must be the rest of the words (an option after them was runuser's)
        if not shell_option and operands and last_option < operands[0]:
            return operands[0], None, end, -1, None
        return end, None, end, -1, None
    k = 0
    if k < len(operands) and words[operands[k]].text == "-":
        k += 1  # su's lone -: --login
        login = True
    k += 1  # the user
    if script is None or (k < len(operands) and last_option > operands[k]):
        return end, None, end, -1, None
    return end, script, operands[k] if k < len(operands) else end, script_at, tuple(kept) if login else None


#: The last :func:`_tmux_command_end` scan: (the words, or an exec-form list's texts, from, to, the ``;`` found or
#: ``to``). Nested tmux (``tmux new tmux new ... vllm serve m``) asks again from a later word of the same words:
#: without it each tmux scanned to the end (a list of 4,000 such words took 11 s, quadratic).
#: Forgotten when a reading ends (:func:`commands`, :func:`one_reading`): it holds the words, up to a whole review's
#: command, and a webhook worker lives for many reviews.
_TMUX_SCAN: ContextVar[tuple[object, int, int, int] | None] = ContextVar("kvlint_tmux_scan", default=None)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def one_reading(read: Callable[_P, _R]) -> Callable[_P, _R]:
    """``read`` (the reading of a container's or a typed command's words, :mod:`kvlint.engines.command`) with the
    scan :data:`_TMUX_SCAN` caches across its wrapper steps (``["tmux", "new", "tmux", "new", ...]``, one
    :func:`program_after_wrapper` call each) forgotten when it returns: what was cached before it is restored."""

    @functools.wraps(read)
    def reading(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        token = _TMUX_SCAN.set(None)
        try:
            return read(*args, **kwargs)
        finally:
            _TMUX_SCAN.reset(token)

    return reading


def _tmux_command_end(words: Sequence[ShellArg], start: int, end: int) -> int:
    """The index of the first ``;`` word (the end of a tmux command) of ``words[start:end]``, else ``end``; a
    later ``start`` in the same words before the ``;`` last found, with no larger ``end``, reuses that scan."""
    key = words._texts if isinstance(words, _ListWords) else words
    last = _TMUX_SCAN.get()
    if last is not None and last[0] is key and last[1] <= start <= last[3] and end <= last[2]:
        return min(last[3], end)
    stop = next((k for k in range(start, end) if words[k].text == ";"), end)
    _TMUX_SCAN.set((key, start, end, stop))
    return stop


def _tmux(
    words: Sequence[ShellArg], h: int, end: int, sets: list[tuple[str, int]] | None = None
) -> tuple[int, ShellArg | None, int, int] | None:
    """tmux 3.3a at ``words[h]`` starting a session that runs a command (``tmux new -d 'vllm serve m'``, ``tmux
    new-session -d -s x vllm serve m``), as ``tmux.c::main`` and ``cmd-new-session.c`` read it: the options of
    ``"2c:CDdf:lL:NqS:T:uUvV"``, where ``-c SHELL-COMMAND`` is itself run by the shell, then ``new-session`` (alias
    ``new``) with ``"Ac:dDe:EF:f:n:Ps:t:x:Xy:"`` (tmux's own getopt: no permutation, options end at the first other
    word or ``--``); its arguments end at a ``;`` word (the next tmux command). One argument is run by the
    default shell (``spawn.c::spawn_pane``: ``SHELL -c CMD``), several are executed as they are (``execvp``).

    ``(index of the command, None, end of it, -1)`` for several words; ``(end of it, the script, end of it, index
    of the script's word or -1)`` for one (or ``tmux -c``); None when tmux runs no new session's command here.
    ``sets`` gets new-session's ``-e VARIABLE=value`` (tmux 3.2+: set in the session's environment, which its
    command runs with) and the index of the word holding each."""
    j = h + 1
    while j < end and words[j].text.startswith("-") and len(words[j].text) > 1:
        text = words[j].text
        j += 1
        if text == "--":
            break
        for i in range(1, len(text)):
            if text[i] in "cfLST":
                value = text[i + 1 :] if i + 1 < len(text) else None
                at = -1
                if value is None and j < end:
                    value, word, at = words[j].text, words[j], j
                    j += 1
                else:
                    word = words[j - 1]
                if text[i] == "c" and value is not None:
                    script = ShellArg(
                        value, word.offset, word.loc, word.from_env, word.unresolved, word.quoted
                    )
                    return end, script, end, at
                break
    if j >= end or words[j].text not in ("new", "new-session"):
        return None
    stop = _tmux_command_end(words, j + 1, end)
    j += 1
    while j < stop and words[j].text.startswith("-") and len(words[j].text) > 1:
        text = words[j].text
        j += 1
        if text == "--":
            break
        for i in range(1, len(text)):
            if text[i] in "cefFnstxy":
                at = j - 1
                if i + 1 == len(text):
                    at = j
                    j += 1
                if text[i] == "e" and sets is not None and at < stop:
                    value = text[i + 1 :] if i + 1 < len(text) else words[at].text
                    if _ASSIGN_RE.match(value):
                        sets.append((value, at))
                break
    if j >= stop:
        return None
    if j + 1 == stop:
        return stop, words[j], stop, j
    return j, None, stop, -1


#: bash's builtins that run the rest of the command (only as words of a script)
_BUILTIN_WRAPPERS = frozenset({"exec", "command", "builtin"})
#: Wrapper programs that look the command up in a PATH of their own, not the one of their environment: ``sudo``
#: searches its ``secure_path`` (sudoers(5); the default sudoers of Ubuntu and Debian, the engines' images' base,
#: set it with /usr/local/bin), so ``env -i sudo vllm`` finds /usr/local/bin/vllm.
#: doas too: it runs the command with its ``safepath`` ``/bin:/sbin:/usr/bin:/usr/sbin:/usr/local/bin:/usr/local/sbin``
#: (OpenBSD doas.c, OpenDoas doas.c ``safepath``) unless doas.conf keeps the user's environment.
OWN_PATH_WRAPPERS = frozenset({"sudo", "doas"})
#: Wrapper programs whose lookup of the command, in an environment without ``PATH``, still searches /usr/local/bin:
#: dumb-init's release binaries and Debian package are linked statically against musl since v1.0.0
#: (Yelp/dumb-init#46), and musl's ``execvp`` (src/process/execvp.c) searches ``/usr/local/bin:/bin:/usr/bin``
#: when ``PATH`` is unset, where glibc's searches ``/bin:/usr/bin`` only. ``env -i dumb-init -- vllm serve`` finds
#: /usr/local/bin/vllm.
MUSL_LOOKUP_WRAPPERS = frozenset({"dumb-init"})
#: The wrappers of :data:`_OPTION_WRAPPERS` and :data:`_WRAPPERS` that are programs of their own, so that a
#: container's exec-form ``command:`` list can start them (``["/usr/bin/tini", "--", "vllm", "serve", ...]``) and a
#: script can name them by path (``/usr/bin/env A=1 vllm serve m``); bash's builtins ``exec``, ``command`` and
#: ``builtin`` are not (the kubelet runs the list without a shell). ``tmux`` runs a new session's command
#: (:func:`_tmux`).
PROGRAM_WRAPPERS = frozenset(set(_OPTION_WRAPPERS) - _BUILTIN_WRAPPERS) | {"nohup", "tmux"}


def wrapper_name(text: str) -> str | None:
    """The wrapper a command's first word names: bash's builtins (:data:`_BUILTIN_WRAPPERS`) by their word, the
    programs (:data:`PROGRAM_WRAPPERS`) by the last component of their path (``/usr/bin/env``); else None."""
    if text in _BUILTIN_WRAPPERS:
        return text
    name = text[text.rfind("/") + 1 :]
    return name if name in PROGRAM_WRAPPERS else None


@dataclass
class WrapperStep:
    """What the wrapper at a command's word runs (:func:`wrapper_step`)."""

    #: the index of the next word to read: the command the wrapper runs (or more wrappers)
    after: int
    #: ``env -S STRING``'s string, whose words env reads next
    split: ShellArg | None = None
    #: a script the wrapper gives a shell (``runuser app -c SCRIPT``, ``tmux new -d SCRIPT``), run instead of the
    #: words; its ``$0 $1 ...`` are the words from :attr:`positional` to :attr:`end`
    script: ShellArg | None = None
    positional: int = 0
    #: where the wrapped command's words end (a ``;`` word ending a tmux command)
    end: int = 0
    #: the index of :attr:`script`'s word, or -1 when the script is part of a word (``-cSCRIPT``)
    script_at: int = -1
    #: the names of the environment :attr:`script` keeps when the wrapper clears the rest (``runuser -l``), None
    #: when it keeps the environment
    keeps_env: tuple[str, ...] | None = None
    #: ``NAME=value`` the wrapper sets in the environment of what it runs (``tmux new -e NAME=value``), each with
    #: the index of its word
    sets_env: tuple[tuple[str, int], ...] = ()


def wrapper_step(
    words: Sequence[ShellArg], h: int, end: int, name: str, unset: list[str] | None = None
) -> WrapperStep | None:
    """The step over the wrapper ``name`` (:func:`wrapper_name`) at ``words[h]``, by the one table of wrappers
    (:data:`_WRAPPERS`, :data:`_OPTION_WRAPPERS`, :func:`_runuser`, :func:`_tmux`) for the words of a script and an
    exec-form list alike; None when the words run no command behind it (``tmux ls``). ``env``'s ``NAME=value``
    words are left for the caller; ``unset`` as :func:`_after_options` fills it."""
    if name in _WRAPPERS:
        # nohup, command and builtin take `--` before the command (coreutils 9 nohup's getopt_long, bash's
        # `command [-pVv] [--]`): it was left as the command's first word
        return WrapperStep(h + 2 if h + 1 < end and words[h + 1].text == "--" else h + 1, end=end)
    if name == "runuser" or name == "su":
        after, script, positional, at, keeps = _runuser(words, h, end, name == "su")
        return WrapperStep(after, None, script, positional, end, at, keeps)
    if name == "doas" and _doas_runs_nothing(words, h, end):
        return None
    if name == "flock":
        # ``flock FILE -c COMMAND``: COMMAND run by ``$SHELL -c`` (util-linux 2.38 flock.c main: exactly one word after
        # -c/--command, else "requires exactly one command argument", exit 64: nothing runs)
        after, _split = _after_options(words, h, end, name)
        if after < end and words[after].text in ("-c", "--command"):
            if after + 2 != end:
                return None
            return WrapperStep(end, None, words[after + 1], end, end, after + 1)
        return WrapperStep(after, end=end)
    if name == "script":
        # ``script -q -c 'vllm serve ...' /dev/null``: the command given a shell; none without -c (an interactive
        # shell on the pseudo-terminal, which runs nothing of the manifest's)
        given = _script_command(words, h, end)
        if given is None:
            return None
        return WrapperStep(end, None, given[0], end, end, given[1])
    if name == "tmux":
        sets: list[tuple[str, int]] = []
        got = _tmux(words, h, end, sets)
        if got is None:
            return None
        after, script, stop, at = got
        return WrapperStep(after, None, script, stop, stop, at, sets_env=tuple(sets))
    after, split = _after_options(words, h, end, name, unset)
    return WrapperStep(after, split, end=end)


def _script_command(words: Sequence[ShellArg], h: int, end: int) -> tuple[ShellArg, int] | None:
    """The command util-linux's ``script`` at ``words[h]`` gives ``$SHELL -c`` (its ``-c``/``--command`` value, the last
    one given, as getopt_long reads the options anywhere among the words: ``script /dev/null -qc CMD``), with the index
    of its word (-1 when attached: ``-cCMD``, ``--command=CMD``); None without one (util-linux 2.38
    ``term-utils/script.c``: the options as its --help lists them, :data:`_OPTION_WRAPPERS`)."""
    short, attached, long, _operands = _OPTION_WRAPPERS["script"]
    command: tuple[ShellArg, int] | None = None
    j = h + 1
    while j < end:
        word = words[j]
        text = word.text
        j += 1
        if text == "--":
            break
        if text.startswith("--"):
            opt, eq, value = text.partition("=")
            if opt == "--command":
                if eq:
                    command = ShellArg(value, word.offset, word.loc, word.from_env, word.unresolved), -1
                elif j < end:
                    command = words[j], j
            if opt in long and not eq:
                j += 1
        elif text.startswith("-") and len(text) > 1:
            for i in range(1, len(text)):
                letter = text[i]
                if letter in attached:
                    break
                if letter in short:
                    if i + 1 < len(text):
                        if letter == "c":
                            value = text[i + 1 :]
                            command = (
                                ShellArg(value, word.offset, word.loc, word.from_env, word.unresolved),
                                -1,
                            )
                    elif j < end:
                        if letter == "c":
                            command = words[j], j
                        j += 1
                    break
    return command


def _doas_runs_nothing(words: Sequence[ShellArg], h: int, end: int) -> bool:
    """Whether the options of the ``doas`` at ``words[h]`` make it run no command (doas.c main: ``-C config`` only
    checks whether the command would be permitted, ``-L`` clears persisted authentication and exits, ``-s`` runs a
    shell and refuses a command with it)."""
    j = h + 1
    while j < end:
        text = words[j].text
        j += 1
        if text == "--" or len(text) < 2 or text[0] != "-":
            break
        for i in range(1, len(text)):
            letter = text[i]
            if letter in "CLs":
                return True
            if letter in "au":
                if i + 1 == len(text):
                    j += 1  # the value is the next word
                break
    return False


def program_after_wrapper(
    texts: Sequence[str], h: int, env_changes: list[tuple[str, int | None]] | None = None
) -> int | None:
    """When ``texts[h]`` (its last path component) is a wrapper program of :data:`PROGRAM_WRAPPERS`, the index of
    the command it runs (past its options, ``--``, operands and, for ``env``, its ``NAME=value`` words), as
    :func:`wrapper_step` reads them in a script, else None (also for a wrapper that gives a shell a script, which
    :func:`list_wrapper_script` finds). ``env_changes`` gets what an ``env`` does to the environment of the
    command: ``(NAME, None)`` for ``-u NAME``, ``("", None)`` for ``-i``, ``(NAME=value, index)`` for an
    assignment."""
    name = wrapper_name(texts[h])
    if name is None or name in _BUILTIN_WRAPPERS or name in APPENDING_WRAPPERS:
        return None  # (a command list whose wrapper appends words: not read as the engine's whole command)
    # the rest of the list as words (by index: a list of thousands of wrappers stays linear overall, each wrapper
    # reading only its own options)
    unset: list[str] | None = [] if env_changes is not None and name == "env" else None
    step = wrapper_step(_ListWords(texts), h, len(texts), name, unset)
    if step is None or step.split is not None or step.script is not None or step.end != len(texts):
        return None
    after = step.after
    if env_changes is not None:
        env_changes.extend(step.sets_env)  # tmux new -e NAME=value
    if name == "env":
        if env_changes is not None and unset:
            env_changes.extend((n, None) for n in unset)
        while after < len(texts) and _ASSIGN_RE.match(texts[after]):
            if env_changes is not None:
                env_changes.append((texts[after], after))
            after += 1
    return after


def list_env_split(
    texts: Sequence[str], env: Mapping[str, str] | None = None, refusal: list[str] | None = None
) -> list[tuple[str, int]] | None:
    """The words an exec-form list runs when one of its wrapper programs is ``env -S STRING`` (``["env", "-S",
    "vllm serve m", "--max-model-len", "4096"]``): GNU env splits STRING into words and reads them as if they were
    its own (options, ``NAME=value``, the command), then the list's words after it (coreutils 9.1 ``env.c``
    ``parse_split_string``), as :func:`commands` reads it in a script; ``${NAME}`` in STRING is NAME's value in
    ``env`` (the container's environment; :func:`_split_string`). Each word with the index of the list item it
    comes from (STRING's for its words); None when the list splits no string. At most :data:`_MAX_SPLITS` strings
    are split (each copies the list). ``refusal`` gets env's message when it refuses a string (it then exits 125,
    running nothing; the string is split at blanks)."""
    words, source = list(texts), list(range(len(texts)))
    splits = h = 0
    while h < len(words):
        name = wrapper_name(words[h])
        if name is None or name in _BUILTIN_WRAPPERS:
            break
        step = wrapper_step(_ListWords(words), h, len(words), name)
        if step is None or step.script is not None:
            break
        if step.split is not None:
            if splits >= _MAX_SPLITS:
                break
            splits += 1
            parts = [arg.text for arg in _split_string(step.split, env, refusal)]
            at = source[step.after - 1]  # the item holding the string (``-S STRING``, ``-SSTRING``)
            words = [*words[: h + 1], *parts, *words[step.after :]]
            source = [*source[: h + 1], *[at] * len(parts), *source[step.after :]]
            continue  # env reads the string's words from its first
        if step.end != len(words):
            break
        h = step.after
        if name == "env":
            while h < len(words) and _ASSIGN_RE.match(words[h]):
                h += 1
    return list(zip(words, source, strict=True)) if splits else None


def list_wrapper_script(texts: Sequence[str]) -> tuple[int, int, int] | None:
    """For an exec-form list that starts a wrapper giving a shell a script as a word of its own (``["runuser",
    "app", "-c", SCRIPT]``, ``["tmux", "new", "-d", SCRIPT]``, behind other wrappers): ``(index of that wrapper,
    index of SCRIPT, index of the script's $0)``; else None."""
    h = 0
    words = _ListWords(texts)
    while h < len(texts):
        name = wrapper_name(texts[h])
        if name is None or name in _BUILTIN_WRAPPERS:
            return None
        step = wrapper_step(words, h, len(texts), name)
        if step is None or step.split is not None:
            return None
        if step.script is not None:
            return None if step.script_at < 0 else (h, step.script_at, step.positional)
        if step.end != len(texts):
            return None
        after = step.after
        if name == "env":
            while after < len(texts) and _ASSIGN_RE.match(texts[after]):
                after += 1
        h = after
    return None


def list_wrapper_env(
    texts: Sequence[str], h: int
) -> tuple[tuple[str, ...] | None, tuple[tuple[str, int], ...]]:
    """What the wrapper at ``texts[h]`` of an exec-form list that gives a shell a script does to the script's
    environment: the names it keeps when it clears the rest (``["runuser", "-l", "app", "-c", SCRIPT]``:
    :func:`_runuser`), else None; and the ``NAME=value`` it sets with their indexes (``["tmux", "new", "-e",
    "A=1", SCRIPT]``: :func:`_tmux`)."""
    name = wrapper_name(texts[h]) if h < len(texts) else None
    if name not in ("runuser", "su", "tmux"):
        return None, ()
    step = wrapper_step(_ListWords(texts), h, len(texts), name)
    return (None, ()) if step is None else (step.keeps_env, step.sets_env)


class _ListWords(Sequence[ShellArg]):
    """The words of an exec-form list as :class:`ShellArg` values made when read (no position: the caller keeps the
    list's indexes)."""

    __slots__ = ("_texts",)

    def __init__(self, texts: Sequence[str]) -> None:
        self._texts = texts

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, i: int) -> ShellArg:  # type: ignore[override]  # indexes only, never slices
        return ShellArg(self._texts[i], None, None, False, False, False)


#: The ``env -S`` strings of one command split into words (``env -S -S -S ...`` in a script of thousands of words
#: would copy the rest of the command each time)
_MAX_SPLITS = 4


def _split_string(
    arg: ShellArg, env: Mapping[str, str] | None = None, refusal: list[str] | None = None
) -> list[ShellArg]:
    """The words ``env -S STRING`` makes of STRING (:func:`env_split_words`), each pointing at STRING's word; as
    blank-separated words when env refuses STRING (an unclosed quote, an unknown ``\\`` sequence, ``$NAME``
    without braces: env exits 125 without running anything; ``refusal`` then gets env's message, and the caller says
    the command never runs). A ``${NAME}`` of a variable not in ``env`` (the image may set it) stays, unresolved."""
    read = env_split_words(arg.text, env, refusal)
    if read is None:
        found = [
            (p, arg.unresolved or ("${" in p and UNRESOLVED_RE.search(p) is not None))
            for p in arg.text.split()
        ]
        expanded = False
    else:
        found, expanded = read
    return [
        ShellArg(
            p, arg.offset, arg.loc, arg.from_env or expanded, arg.unresolved or kept, True, arg.substituted
        )
        for p, kept in found
    ]


#: The blanks ``env -S`` splits at (C ``isspace``: space, tab, newline, vertical tab, form feed, carriage return)
_ENV_S_BLANKS = frozenset(" \t\n\v\f\r")
#: The runs of characters ``env -S`` copies as they are: outside quotes, in single quotes, in double quotes
_ENV_S_PLAIN = {
    "": re.compile(r"[^ \t\n\v\f\r'\"\\$#]+"),
    "'": re.compile(r"[^'\\]+"),
    '"': re.compile(r'[^"\\$]+'),
}
#: ``\\X`` outside single quotes (env.c ``build_argv``): the character it stands for
_ENV_S_ESCAPES = {
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    '"': '"',
    "#": "#",
    "$": "$",
    "'": "'",
    "\\": "\\",
}
_ENV_S_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def env_split_words(
    text: str, env: Mapping[str, str] | None = None, refusal: list[str] | None = None
) -> tuple[list[tuple[str, bool]], bool] | None:
    """The words GNU env makes of an ``env -S`` STRING (coreutils 9.1 ``env.c`` ``build_argv``; checked against
    env 9.1), each with whether it keeps a ``${NAME}`` kvlint could not resolve, and whether a variable was
    substituted; None when env refuses STRING (it exits 125).

    Words split at blanks outside quotes; ``'...'`` keeps everything but ``\\\\`` and ``\\'``; ``"..."`` keeps
    blanks and reads ``\\`` sequences and ``${NAME}``; outside single quotes ``\\_`` separates words (a space in
    double quotes), ``\\c`` ends the string (refused in double quotes), ``\\f \\n \\r \\t \\v`` are control
    characters, ``\\" \\# \\$ \\' \\\\`` the character, any other sequence, a trailing ``\\`` or an unclosed quote are
    refused; ``#`` starting a word outside quotes ends the string (a comment); ``${NAME}`` is NAME's value in
    ``env`` (not split; None: not known), any other ``$`` refused. A name ``env`` does not hold stays as written
    (env would give the empty string, but the image may set it). One pass over STRING: the runs between special
    characters are taken by a search (``shlex`` grew each word one character at a time: 15 s for a 1 MB string).
    ``refusal``, when env refuses STRING, gets env 9.1's message (``no terminating quote in -S string``)."""

    def refuse(message: str) -> None:
        if refusal is not None:
            refusal.append(message)

    words: list[tuple[str, bool]] = []
    cur: list[str] = []
    started = kept = expanded = False
    quote = ""
    i, n = 0, len(text)
    while i < n:
        m = _ENV_S_PLAIN[quote].match(text, i)
        if m is not None:
            cur.append(m.group())
            started, i = True, m.end()
            continue
        c = text[i]
        if not quote and c in _ENV_S_BLANKS:
            if started:
                words.append(("".join(cur), kept))
                cur, started, kept = [], False, False
            i += 1
        elif not quote and c == "#":
            if not started:
                break  # a comment
            cur.append(c)
            i += 1
        elif c == "'" and not quote:
            quote, started, i = "'", True, i + 1
        elif c == '"' and not quote:
            quote, started, i = '"', True, i + 1
        elif c == quote:
            quote, i = "", i + 1
        elif c == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if quote == "'":
                cur.append(nxt if nxt in ("\\", "'") else "\\")
                i += 2 if nxt in ("\\", "'") else 1
                continue
            if nxt == "_":
                if quote:
                    cur.append(" ")
                elif started:
                    words.append(("".join(cur), kept))
                    cur, started, kept = [], False, False
                i += 2
                continue
            if nxt == "c":
                if quote:
                    refuse("'\\c' must not appear in double-quoted -S string")
                    return None
                break
            value = _ENV_S_ESCAPES.get(nxt)
            if value is None:
                refuse(
                    f"invalid sequence '\\{nxt}' in -S" if nxt else "invalid backslash at end of string in -S"
                )
                return None
            cur.append(value)
            started, i = True, i + 2
        else:  # $ outside single quotes
            v = _ENV_S_VARIABLE.match(text, i)
            if v is None:
                refuse(f"only ${{VARNAME}} expansion is supported, error at: {text[i : i + 32]}")
                return None
            value = env.get(v.group(1)) if env is not None else None
            if value is None:
                cur.append(v.group())
                started = kept = True
            else:
                cur.append(value)
                expanded = True
                started = started or bool(value)
            i = v.end()
    if quote:
        refuse("no terminating quote in -S string")
        return None
    if started:
        words.append(("".join(cur), kept))
    return words, expanded


#: A change of a script's environment log (:class:`Environ`): ``(NAME, value, word)`` sets NAME (the word that set
#: it, or None), ``(NAME, None, None)`` removes it, ``("", None, None)`` clears it all (``env -i``, ``exec -c``),
#: ``("", None, names)`` keeps only the names of the frozenset ``names`` (``runuser -l``).
EnvChange = tuple[str, "str | None", Any]


class Environ:
    """The environment the shell gives a command of a script (:attr:`ShellCommand.environ`), made when asked
    (:meth:`get`): ``base`` (the environment the script started with, a mapping or the :class:`Environ` of the
    command that started it) then the changes ``log[:n]`` (:data:`EnvChange`). A reading's log is only appended
    to, so each command keeps the view it ran with at no cost per command (bash: variables it exports, or that
    came from its own environment, reach a child; ``NAME=value`` before a command reaches that command only)."""

    __slots__ = ("base", "log", "n")

    def __init__(self, base: Mapping[str, str] | Environ, log: list[EnvChange], n: int) -> None:
        self.base, self.log, self.n = base, log, n

    def size(self) -> int:
        """The changes :meth:`get` applies (the work it does beyond copying the first base)."""
        base = self.base
        return self.n + (base.size() if isinstance(base, Environ) else 0)

    def get(self) -> tuple[dict[str, str], dict[str, ShellArg | None]]:
        """The environment (``NAME -> value``) and the word of the script that set each variable it changed."""
        base = self.base
        if isinstance(base, Environ):
            env, set_by = base.get()
        else:
            env, set_by = dict(base), {}
        log = self.log
        for i in range(self.n):
            name, value, word = log[i]
            if not name:
                if word is None:
                    env.clear()
                    set_by.clear()
                else:
                    env = {k: v for k, v in env.items() if k in word}
                    set_by = {k: w for k, w in set_by.items() if k in word}
            elif value is None:
                env.pop(name, None)
                set_by.pop(name, None)
            else:
                env[name] = value
                set_by[name] = word
        return env, set_by


class ShellCommand(list[ShellArg]):
    """A simple command of a script as :func:`commands` yields it: its words, and :attr:`environ`, the environment
    bash runs it with (None when not known)."""

    environ: Environ | None = None
    #: the command's program is looked up by a wrapper program (``env``, ``nohup`` ...) in an environment without
    #: ``PATH`` (``env -i``, ``env -u PATH``, ``exec -c nohup``): ``execvp`` then searches glibc's default path
    #: ``/bin:/usr/bin`` (posix/execvpe.c, ``CS_PATH``), not the image's
    no_path: bool = False
    #: why the command's arguments are not all its words (a wrapper before it adds words kvlint cannot see:
    #: :data:`APPENDING_WRAPPERS`), else None
    appends: str | None = None
    #: env 9.1's message when an ``env -S STRING`` of the command refuses its string (an unclosed quote, an unknown
    #: ``\\`` sequence, ``$NAME`` without braces): env exits 125 and runs nothing; the words are then STRING's split at
    #: blanks, to say which command did not start
    env_refused: str | None = None
    #: the variables referenced by the command's unresolved words that the shell running it holds as set to a value
    #: kvlint does not know (the script's ``A=$(cmd)``, ``read A``, ``for A in ...``; a prefix ``A=$(cmd)`` of the
    #: ``eval`` or function call that runs the command; an array the script built, ``"${A[@]}"``; a ``valueFrom`` or
    #: ``envFrom`` of the container kvlint did not read, :func:`commands`' ``unknown``), ``*`` when any name may be so
    #: set (an ``envFrom`` not read); a referenced name not here is unset as far as kvlint reads (bash expands ``$A``
    #: to nothing). Filled by :func:`_maybe_set_in`.
    maybe_set: frozenset[str] = frozenset()
    #: the first ``<...>`` placeholder to fill in by hand among the command's words (``vllm serve <model-id>``), which
    #: the shell reads as two redirections (:data:`_FILL_IN_RE`); the words hold it as written; "" when none
    fill_in: str = ""


def commands(
    script: str,
    env: Mapping[str, str],
    positional: Sequence[ShellArg] = (),
    *,
    _depth: int = 0,
    _eval_offset: int | None = None,
    _budget: _Budget | None = None,
    _environ: Mapping[str, str] | Environ | None = None,
    allexport: bool = False,
    sh: bool = False,
    unknown: Collection[str] = (),
    read_file: Callable[[str], str | None] | None = None,
) -> Iterator[ShellCommand]:
    """Yield each simple command of ``script`` as expanded words, wrappers stripped, with the environment bash
    runs it with (:attr:`ShellCommand.environ`: ``env`` (or ``_environ``) as the script's assignments, ``export``,
    ``declare -x``, ``unset``, ``NAME=value`` before the command and ``env``'s ``-i``/``-u``/``NAME=value`` leave it).

    Leading ``NAME=value`` assignments, ``export``/``declare`` assignments and wrappers (``nohup``,
    ``command``, the wrappers of :data:`_OPTION_WRAPPERS` with their options and operands, ``env [-i] [-S STRING]
    [A=b]``, ``then``/``do`` keywords) are removed; assignments are remembered for
    later ``$NAME`` expansion in the same script. ``eval STRING`` is re-read as a script (its words then
    point at the ``eval`` word). Redirections (``2>&1``, ``> log``) are dropped. ``positional`` are ``$0``,
    ``$1``... (``sh -c SCRIPT $0 $1 ...``). The expansions of the whole script add at most :data:`ARG_MAX`
    characters, none a value over :data:`MAX_ARG_STRLEN` (the rest stay unresolved). Never raises.

    ``unknown``: the names of ``env`` that are set with a value kvlint does not know (a ``valueFrom`` it could not
    read), ``*`` for any name (an ``envFrom`` it did not read: a Secret, a ConfigMap not among the inputs). Such a
    variable, and one the script sets to a value kvlint does not read (``A=$(cmd)``, ``read A``), is not unset:
    ``${A:-4096}`` and ``${A-4096}`` stay unresolved (bash passes A's value when it is set), where a name neither
    the container's env nor the script sets takes the default (kvlint assumes the image's ``ENV`` does not set it,
    as it does for a ``$(VAR)`` the kubelet expands).

    ``read_file``: the text of a file the container holds that kvlint reads (a ConfigMap mounted in it), else None:
    a script ``. FILE``/``source FILE`` reads is read in this shell when it gives the text (its words then point at
    the ``.`` command), and when it does not, what the file may set is unknown (:meth:`_Shell.forget_all`).
    """
    try:
        yield from _read_commands(
            script,
            env,
            positional,
            _depth=_depth,
            _eval_offset=_eval_offset,
            _budget=_budget,
            _sh=sh,
            _environ=_environ,
            _allexport=allexport,
            _unknown=unknown,
            _read_file=read_file,
        )
    finally:
        if _depth == 0:
            # the reading is over: the words of its last tmux scan are not kept for the next one (a webhook worker
            # lives for many reviews)
            _TMUX_SCAN.set(None)


class _Scope(MutableMapping[str, str]):
    """A shell's variables as its own changes over the map it started from (``parent``, None: nothing), read
    through without copying it: a nested script starts from its command's environment (:class:`_Exported`), and
    copying that map for each of 20,000 ``sh -c`` behind 20,000 assignments was quadratic (2.9 s). A lookup walks
    at most the nesting depth (three scripts, :func:`_read_commands`) and a command's own changes
    (:func:`_with_changes`)."""

    __slots__ = ("own", "parent")

    def __init__(self, parent: Mapping[str, str] | None) -> None:
        #: the changes: a value, or None for a variable removed
        self.own: dict[str, str | None] = {}
        self.parent = parent

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        own = self.own
        if name in own:
            value = own[name]
        elif self.parent is None:
            return default
        else:
            value = self.parent.get(name)
        return default if value is None else value

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __setitem__(self, name: str, value: str) -> None:
        self.own[name] = value

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self.own[name] = None

    def pop(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        value = self.get(name)
        self.own[name] = None
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:  # (not used when reading: each name is looked up)
        names = dict.fromkeys(self.parent or ())
        names.update(dict.fromkeys(self.own))
        return iter([name for name in names if name in self])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Exported(Mapping[str, str]):
    """The variables of a shell that are in the environment of the commands it runs (``exported``: bash gives a
    child the variables it inherited or exported, not its other variables), looked up in the shell's map
    ``names`` when asked. The shell reads on only once the child's reading is over (:func:`_read_commands` yields
    from it), so the view stays the map the child started with while the child reads."""

    __slots__ = ("names", "exported")

    def __init__(self, names: Mapping[str, str], exported: Callable[[str], bool]) -> None:
        self.names, self.exported = names, exported

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        value = self.names.get(name)
        return default if value is None or not self.exported(name) else value

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in self.names if self.exported(name)])

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Kept(Mapping[str, str]):
    """``base`` with only the names of ``kept`` (``runuser -l``: the login environment keeps ``TERM`` and ``-w``'s
    names)."""

    __slots__ = ("base", "kept")

    def __init__(self, base: Mapping[str, str], kept: frozenset[str]) -> None:
        self.base, self.kept = base, kept

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return self.base.get(name, default) if name in self.kept else default

    def __getitem__(self, name: str) -> str:
        if name not in self.kept:
            raise KeyError(name)
        return self.base[name]

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in self.kept if name in self.base])

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _with_unknown_marks(
    own: list[EnvChange], prefix: Sequence[tuple[str, str, ShellArg]], env_set: Sequence[tuple[int, str]] = ()
) -> list[EnvChange]:
    """A command's environment changes ``own`` (its ``NAME=value`` prefix first, then a wrapper's) for the script it
    runs (``A=$(cmd) bash -c '... ${A:-4096}'``), with the unknown mark (:data:`_UNKNOWN_MARK`) of each prefix
    variable set to a command's output right after the prefix: A is set in that script, its value not known (it
    read as unset: the default taken). The same for ``env``'s ``NAME=$(cmd)`` (``env_set``: the index in ``own``,
    the prefix not counted, of each such change of env's and its name; ``env TP=$(nproc) sh -c '... ${TP:-1}'``),
    the mark right after that change. An ``env -i`` after it clears the mark with the rest. Not in the environment
    of the commands (:attr:`ShellCommand.environ`): a mark is no variable."""
    after: dict[int, list[EnvChange]] = {}
    for name, _v, arg in prefix:
        if arg.substituted:
            after.setdefault(len(prefix) - 1, []).append((_UNKNOWN_MARK + name, "", None))
    for at, name in env_set:
        after.setdefault(len(prefix) + at, []).append((_UNKNOWN_MARK + name, "", None))
    if not after:
        return own
    out: list[EnvChange] = []
    for k, change in enumerate(own):
        out.append(change)
        out.extend(after.get(k, ()))
    return out


def _with_changes(base: Mapping[str, str], changes: Sequence[EnvChange]) -> _Scope:
    """``base`` with the environment changes ``changes`` (:data:`EnvChange`: a command's ``NAME=value`` prefix,
    ``env -i``/``-u``/``NAME=value``, ``runuser -l``'s kept names, ``tmux new -e``) read through, not copied."""
    scope = _Scope(base)
    for name, value, word in changes:
        if not name:
            scope = _Scope(None if word is None else _Kept(scope, word))
        else:
            scope.own[name] = value
    return scope


#: The times one shell walks all its variables to forget them (:meth:`_Shell.forget_all`; far above a real script's
#: few ``. FILE``).
_FORGETS = 64


class _Shell:
    """The state of one shell reading a script (:func:`_read_commands`), which ``eval`` shares with the script
    that runs it (bash runs its string in the current shell: its assignments, exports and ``set -a`` stay after
    it)."""

    __slots__ = (
        "vars",
        "start",
        "environ_base",
        "log",
        "marks",
        "allexport",
        "functions",
        "frames",
        "subshells",
        "leaked",
        "arrays",
        "assoc",
        "sh",
        "start_unknown",
        "array_names",
        "dependents",
        "forgets",
        "read_file",
    )

    def __init__(
        self,
        env: Mapping[str, str],
        environ: Mapping[str, str] | Environ | None,
        nested: bool,
        unknown: Collection[str] = (),
    ) -> None:
        #: the shell's variables (a copy of the container's environment for the script a container runs; a nested
        #: script's read through, :class:`_Scope`); a variable set to a value kvlint does not know is absent, and
        #: marked ``?NAME`` (:data:`_UNKNOWN_MARK`; ``?*``: any name may be set)
        self.vars: MutableMapping[str, str] = _Scope(env) if nested else dict(env)
        #: the names of the environment the shell started with whose values are not known (``commands``' unknown)
        self.start_unknown = frozenset(unknown)
        for name in self.start_unknown:
            self.vars[_UNKNOWN_MARK + name] = ""
        # bash does not take IFS from its environment (variables.c: "Don't allow IFS to be imported from the
        # environment"): it starts at space, tab, newline (`OLDIFS=$IFS; IFS=,; ...; IFS=$OLDIFS` puts that back)
        self.vars["IFS"] = _DEFAULT_IFS
        #: the environment the shell started with (its variables that are exported unless unexported since)
        self.start = env
        #: the environment a command runs with: ``environ`` (else ``env``) as the log changes it
        self.environ_base: Mapping[str, str] | Environ = env if environ is None else environ
        self.log: list[EnvChange] = []
        #: the names the script exported (True) or unexported/unset (False)
        self.marks: dict[str, bool] = {}
        #: ``set -a``/``set -o allexport``: every variable assigned from then on is exported
        self.allexport = False
        #: the functions the script defined: name -> (the script, the span of its body in it, the offset its
        #: words point at when the script is an eval's or a nested one, else None, whether the body is a subshell)
        self.functions: dict[str, tuple[str, tuple[int, int], int | None, bool]] = {}
        #: one per function call being read: the variables it made local (``local``, ``declare`` without ``-g``)
        #: -> their value and export mark before, put back when the call returns
        self.frames: list[dict[str, tuple[str | None, bool | None]]] = []
        #: the subshells ``( ... )`` still to isolate (:class:`_Saved`)
        self.subshells = _SUBSHELLS
        #: a subshell was met past the _SUBSHELLS kept apart: what it assigns would stay after it, so every variable or
        #: array assigned from then on is unknown (bash: a subshell's assignments are gone after it; known-wrong
        #: values otherwise: `{ A=4096; } | cat` after 32 `: | cat;` passed 4096 where bash leaves A empty)
        self.leaked = False
        #: the arrays the script assigned (``ARGS=(--tensor-parallel-size 4)``): name -> a placeholder, then the
        #: elements (the shape of positional parameters, $0 then $1 ...); ``NAME+=(...)`` appends to the list in place
        self.arrays: dict[str, list[ShellArg]] = {}
        #: the names declared associative arrays (``declare -A M``): never read as a list (kept for the whole
        #: reading, a subshell's too: what it leaves unresolved is only less known)
        self.assoc: set[str] = set()
        #: the script is ``sh``'s (``sh -c``, :data:`MAYBE_DASH`), which is dash in Debian and Ubuntu images (the
        #: engines' own): no brace expansion, no tilde after the ``=`` of an argument; bash elsewhere (UBI, Fedora):
        #: the words these would change are unresolved
        self.sh = False
        #: the names the script assigned an array to (``NAME=(...)``, ``NAME+=(...)``), kept or forgotten since: an
        #: unresolved ``${NAME[@]}`` of one is the script's list, not nothing (:func:`_maybe_set_in`)
        self.array_names: set[str] = set()
        #: a variable set to a value kvlint does not know -> the variables whose value the script assigned as a
        #: reference to it (``B=$A`` after ``A=$(cat f)`` keeps B's value as the text ``${A}``): when A is assigned
        #: again or unset, such a B holds A's old value, which kvlint does not know (:meth:`_stale`)
        self.dependents: dict[str, set[str]] = {}
        #: the times :meth:`forget_all` may still walk every variable (then every assignment is unknown: ``leaked``)
        self.forgets = _FORGETS
        #: the text of a file the container holds that kvlint reads (:func:`commands`' ``read_file``), else None
        self.read_file: Callable[[str], str | None] | None = None

    def _stale(self, name: str) -> None:
        """``name`` is assigned or unset: each variable whose value is the text of a reference to its old value,
        unknown (:attr:`dependents`), is now unknown itself (bash expanded ``B=$A`` when it ran: B keeps A's value
        then, whatever A is set to after; bash(1) "PARAMETERS")."""
        deps = self.dependents.pop(name, None)
        if not deps:
            return
        variables = self.vars
        for dep in deps:
            value = variables.get(dep)
            if value is not None and any(m.group(1) == name for m in _REFERENCED_RE.finditer(value)):
                variables.pop(dep, None)
                variables[_UNKNOWN_MARK + dep] = ""
                if self.exported(dep):
                    self.log.append((dep, None, None))

    def _depends(self, name: str, value: str) -> None:
        """Record ``name``'s ``value`` as holding references to variables set to values kvlint does not know
        (:attr:`dependents`)."""
        variables = self.vars
        anyone = _UNKNOWN_MARK + "*" in variables
        for m in _REFERENCED_RE.finditer(value):
            ref = m.group(1)
            if ref != name and (_UNKNOWN_MARK + ref in variables or (anyone and ref not in variables)):
                self.dependents.setdefault(ref, set()).add(name)

    def forget_all(self, only: tuple[tuple[str, ...], tuple[str, ...]] | None = None) -> None:
        """A script kvlint does not read ran in this shell (``. FILE``, ``source FILE``, ``eval "$(cat f)"``; bash(1)
        "SHELL BUILTIN COMMANDS": ``.`` reads and executes the file's commands "in the current shell environment"):
        it may have set any variable, so each one the shell knew is now set to a value kvlint does not know
        (:data:`_UNKNOWN_MARK`), exported ones in the environment of later commands too, and any other name may be
        set (``?*``: ``${TP:-1}`` stays unresolved); the arrays kept are forgotten. ``IFS`` is kept. At most
        :data:`_FORGETS` walks of the variables; past them every later assignment is unknown (``leaked``), so the
        walk has nothing new to forget. ``only``: the script sets only names with these prefixes and these names
        (a tool's shell hook, :data:`_SHELL_HOOK_NAMES`): only those are made unknown."""
        variables = self.vars
        if only is None:
            variables[_UNKNOWN_MARK + "*"] = ""
            self.dependents.clear()
            self.array_names.update(self.arrays)
            self.arrays.clear()
        if self.forgets <= 0:
            self.leaked = True
            return
        self.forgets -= 1
        for name in list(variables):
            if name[:1] == _UNKNOWN_MARK or name == "IFS":
                continue
            if only is not None and not (name.startswith(only[0]) or name in only[1]):
                continue
            variables.pop(name, None)
            variables[_UNKNOWN_MARK + name] = ""
            if self.exported(name):
                self.log.append((name, None, None))

    def exported(self, name: str) -> bool:
        """Whether a variable of the shell is in the environment of the commands it runs (bash: it came from the
        shell's environment or was exported, and was not unset or ``export -n``-ed since). A name's unknown mark
        ``?NAME`` goes where NAME does."""
        if name[:1] == _UNKNOWN_MARK:
            name = name[1:]
        mark = self.marks.get(name)
        if mark is not None:
            return mark
        return name in self.start or name in self.start_unknown

    def assign(self, name: str, arg: ShellArg, value: str, export: bool | None) -> None:
        """``NAME=value`` in the shell (``export`` True: exported; None: as the variable was, or exported under
        ``set -a``)."""
        if export is None and self.allexport:
            export = True
        variables = self.vars
        if self.dependents:
            self._stale(name)
        if arg.substituted or self.leaked:
            # the output of a command, or set past the subshells kept apart: unknown (set, its value not known)
            variables.pop(name, None)
            variables[_UNKNOWN_MARK + name] = ""
        else:
            variables[name] = value  # unresolved variables inside stay as written
            if arg.unresolved:
                self._depends(name, value)
            if _UNKNOWN_MARK + name in variables and not (
                arg.unresolved and any(m.group(1) == name for m in _REFERENCED_RE.finditer(value))
            ):
                # (kept for a value that holds the reference to the unknown one it had, `ARGS="$ARGS --x"` after
                # `ARGS=$(cat f)`: the `${ARGS}` that $ARGS then gives is that value's words, :func:`_maybe_set_in`)
                variables.pop(_UNKNOWN_MARK + name, None)
        if export:
            self.marks[name] = True
        if export or (export is None and self.exported(name)):
            self.log.append((name, None, None) if arg.substituted or self.leaked else (name, value, arg))


def _read_commands(
    script: str,
    env: Mapping[str, str],
    positional: Sequence[ShellArg] = (),
    *,
    _depth: int = 0,
    _eval_offset: int | None = None,
    _budget: _Budget | None = None,
    _environ: Mapping[str, str] | Environ | None = None,
    _shell: _Shell | None = None,
    _span: tuple[int, int] | None = None,
    _allexport: bool = False,
    _sh: bool = False,
    _unknown: Collection[str] = (),
    _read_file: Callable[[str], str | None] | None = None,
) -> Iterator[ShellCommand]:
    """:func:`commands`, which forgets the words it read when done. ``_shell``: the shell to read the script in
    (``eval``'s and a function's), else a new one starting from ``env`` and ``_environ``; ``_span``: the part of
    ``script`` to read (a function's body)."""
    if _shell is None:
        shell = _Shell(env, _environ, _depth > 0, _unknown)
        shell.allexport = _allexport  # `bash -a -c SCRIPT`
        shell.sh = _sh
        shell.read_file = _read_file
    else:
        shell = _shell
    local_env = shell.vars
    budget = _budget if _budget is not None else _Budget()
    log = shell.log
    exported = shell.exported

    # Go/Helm template actions become one opaque word of the same length (offsets and lines preserved)
    original = script
    templates = _template_shapes(script)
    if templates:
        script = _with_placeholders(script)
    heredocs: list[tuple[int, int]] = []  # the spans of the here-documents' bodies read so far, in order
    registered = 0  # the here-documents the commands read so far redirect from
    tokens = _Lookahead(_tokens(script, True, _span, heredocs, not shell.sh))
    # `( ... )`: a subshell, a child of this shell (bash(1) "Compound Commands"), so what it assigns, exports, `set
    # -a`s, `set --`s or defines does not stay after its `)`: each `(` the state saved when it opens a subshell (at
    # most _SUBSHELLS per shell; None: another `(`, an array's, a pattern's); `(` and `)` in a `case` not looked at
    parens: list[_Saved | None] = []
    case_depth = 0
    starts = True  # the next token starts a command (where a `(` opens a subshell)
    # a simple command that is part of a pipeline (`export A=1 | cat`) or runs in the background (`A=1 &`) runs in a
    # subshell (bash(1) "Pipelines": "Each command in a multi-command pipeline ... is executed in a subshell"; "If a
    # command is terminated by the control operator &, the shell executes the command ... in a subshell"): the state
    # saved before it, put back at the operator after it (from the same bounded count as `( ... )`)
    piped: _Saved | None = None
    # an AND-OR list (`A=1 && B=2 &`) run with `&` runs whole in a subshell (bash(1) "Lists": "If a command is
    # terminated by the control operator &, the shell executes the command asynchronously in a subshell", the
    # command being the list of pipelines joined by && and ||): the state saved at its first command when `&&` or
    # `||` follows it, put back at a `&` that ends the list (not `|&`, a pipe), dropped at another operator
    andor: _Saved | None = None
    # a compound command (`{ ...; }`, `if ... fi`, a loop, `case`) that is part of a pipeline or runs in the background
    # runs in a subshell as a simple command does: the state saved when it opens (at nesting 0: read ahead to the
    # operator after its end, _after_compound), put back when it closes
    compound = 0  # the compound commands open
    compound_saved: _Saved | None = None
    andor_nest = 0  # the nesting (compound commands and `(`) at which the AND-OR list `andor` runs
    after_op = ""  # the token just before: an operator, or "" after a command (`|` then `&` is `|&`)
    last_op = ""
    loops = 0  # the `for`/`while`/`until` loops the command is in (an array assigned there: how often is not known)
    for cmd in tokens:  # the words of each command, then the operator after it
        if cmd.__class__ is str:
            if piped is not None:
                positional = piped.restore(shell)
                piped = None
            if (
                andor is not None
                and cmd not in ("&&", "||", "|", "(")
                and compound + len(parens) == andor_nest
            ):
                if cmd == "&" and after_op != "|":
                    positional = andor.restore(shell)
                andor = None
            if cmd == "&" and after_op != "|" and shell.subshells == 0:
                shell.leaked = True  # (an AND-OR list run in the background, not kept apart)
            last_op = after_op = cmd  # type: ignore[assignment]
            if case_depth == 0 and cmd == "(":
                if (
                    starts
                    and andor is None
                    and compound + len(parens) == 0
                    and shell.subshells > 0
                    and last_op not in ("&&", "||", "|")
                    and _after_compound(tokens, 0, 1) in ("&&", "||")
                ):
                    # `(A=1) && B=2 &`: an AND-OR list that starts with a subshell
                    shell.subshells -= 1
                    andor, andor_nest = _Saved(shell, positional), 0
                isolate = starts and shell.subshells > 0 and len(parens) < _SUBSHELLS
                if isolate:
                    shell.subshells -= 1
                elif starts:
                    shell.leaked = True
                parens.append(_Saved(shell, positional) if isolate else None)
            elif case_depth == 0 and cmd == ")" and parens:
                opened = parens.pop()
                if opened is not None:
                    positional = opened.restore(shell)
            starts = cmd in _STARTS_COMMAND
            continue
        first = _raw_of(cmd[0]) if cmd else ""  # type: ignore[index]
        after_op = ""
        # compound commands: opened at nesting 0, the operator after its end read ahead; closed back to 0, the state
        # saved when it opened put back
        nesting = _compound_step(cmd) if cmd else 0  # type: ignore[arg-type]
        handled = False  # this command opens or closes a compound command whose state is kept apart
        if nesting > 0 and compound == 0 and not parens and case_depth == 0 and shell.subshells == 0:
            if not shell.leaked and (last_op == "|" or _after_compound(tokens, nesting, 0) in ("|", "&")):
                shell.leaked = True
        elif nesting > 0 and compound == 0 and not parens and case_depth == 0 and shell.subshells > 0:
            ends = _after_compound(tokens, nesting, 0)
            if last_op == "|" or ends == "|" or ends == "&":
                shell.subshells -= 1
                compound_saved, handled = _Saved(shell, positional), True
            elif andor is None and last_op not in ("&&", "||", "|") and ends in ("&&", "||"):
                shell.subshells -= 1
                andor, andor_nest, handled = _Saved(shell, positional), 0, True
        compound = max(0, compound + nesting)
        if nesting < 0 and compound == 0 and compound_saved is not None:
            positional = compound_saved.restore(shell)
            compound_saved, handled = None, True
        if (
            not handled
            and andor is None
            and case_depth == 0
            and shell.subshells > 0
            and last_op not in ("&&", "||", "|")
        ):
            following = next(tokens, None)
            if following is not None:
                tokens.push(following)
            if following == "&&" or following == "||":
                shell.subshells -= 1
                andor, andor_nest = _Saved(shell, positional), compound + len(parens)
        if first in _LOOPS:
            loops += 1
        elif first == "done" and loops:
            loops -= 1
        if first == "case":
            case_depth += 1
        elif first == "esac" and case_depth:
            case_depth -= 1
        starts = len(cmd) == 1 and first in _PREFIX_KEYWORDS  # type: ignore[arg-type]
        defined = _function_definition(cmd, tokens)  # type: ignore[arg-type]
        if defined is not None:
            # `f() { vllm serve "$@"; }`: its body is read when it is called, not here
            if defined[0]:
                shell.functions[defined[0]] = (original, defined[1], _eval_offset, defined[2])
            continue
        if cmd and _ARRAY_ASSIGN_RE.match(_raw_of(cmd[-1])) and _assigns_only(cmd):  # type: ignore[arg-type]
            after = next(tokens, None)
            if after == "(":
                # `ARGS=(--tensor-parallel-size 4)`: the elements up to the `)`, read as words (bash(1) "Arrays")
                arr_name = _ARRAY_ASSIGN_RE.match(_raw_of(cmd[-1])).group(1)  # type: ignore[union-attr,arg-type]
                arr_old, arr_value = shell.arrays.get(arr_name), shell.vars.get(arr_name)
                arr_len = len(arr_old) if arr_old is not None else 0
                _assign_array(cmd, tokens, shell, positional, budget, _eval_offset, templates, loops > 0)  # type: ignore[arg-type]
                after = next(tokens, None)
                if after is not None:
                    tokens.push(after)
                # `A=(a b) true`: an assignment before a command's name sets nothing in the shell (bash 5.2 passes
                # the command `A=(a b)` as a string in its environment); `A=(a b) B=1` is assignments only
                arr_prefix = after is not None and after.__class__ is not str and _names_command(after)  # type: ignore[arg-type]
                if arr_prefix or (case_depth == 0 and (last_op == "|" or after == "|" or after == "&")):
                    # `A+=(x) | cat`: in a subshell, the array as it was
                    if arr_old is None:
                        shell.arrays.pop(arr_name, None)
                    else:
                        del arr_old[arr_len:]
                        shell.arrays[arr_name] = arr_old
                    if arr_value is None:
                        shell.vars.pop(arr_name, None)
                    else:
                        shell.vars[arr_name] = arr_value
                if shell.sh or shell.leaked:
                    # `sh -c`: dash has no arrays ('Syntax error: "(" unexpected', the line does not run); or assigned
                    # past the subshells kept apart: NAME is not known (bash: the array)
                    shell.arrays.pop(arr_name, None)
                    shell.assign(arr_name, ShellArg("", substituted=True), "", None)
                cmd = cmd[:-1]
                if not cmd:
                    continue
            elif after is not None:
                tokens.push(after)
        if case_depth == 0 and not handled and (shell.subshells > 0 or not shell.leaked):
            after = next(tokens, None)
            if after is not None:
                tokens.push(after)
            if (last_op == "|" or after == "|" or after == "&") and shell.subshells == 0:
                shell.leaked = True
            elif last_op == "|" or after == "|" or after == "&":
                shell.subshells -= 1
                piped = _Saved(shell, positional)
        # the words expanded, redirections dropped as they come (every redirection operator holds a ``<`` or
        # ``>``, which a word of ordinary characters cannot: those words are not looked at), in one pass
        words: list[ShellArg] = []
        leading, declaring, skip = True, False, False
        # the values of the command's leading assignments so far, which a later one sees (bash expands them left
        # to right after the command's other words: ``A=1 B=$A`` sets B to 1, ``A=1 vllm serve $A`` does not pass
        # 1; ``export A=1 B=$A``'s are arguments, all expanded first), made at the first assignment
        pre: _Scope | None = None
        # the command's here-documents (their order among the script's) and here-string (``<<<WORD``)
        mine: list[int] = []
        bare = capture = False
        herestring: ShellArg | None = None
        fill_in = ""  # the command's first <placeholder> (ShellCommand.fill_in)
        fill_close = False  # the `>` word closing it is next, and redirects nothing
        for word in cmd:
            if bare:  # the word after a bare `<<` is its delimiter
                mine.append(registered)
                registered += 1
                bare = False
            if word.__class__ is tuple:
                # a word of ordinary characters (see _tokens): its text as it is
                offset, raw = word  # type: ignore[misc]
                if leading and ("=" not in raw or not _ASSIGN_RE.match(raw)):
                    leading = False
                    declaring = raw in _DECLARING
                elif leading and "=" in raw and _ASSIGN_RE.match(raw):
                    if pre is None:
                        pre = _Scope(local_env)
                    name, _, value = raw.partition("=")
                    pre.own[name] = value
                if skip:
                    skip = False
                elif "{" in raw or "~" in raw:
                    words.extend(_brace_tilde(raw, offset, local_env, budget, leading, shell.sh))
                    if (
                        leading
                        and pre is not None
                        and words
                        and words[-1].text.startswith(raw.partition("=")[0])
                    ):
                        name, _, value = words[-1].text.partition("=")
                        pre.own[name] = None if words[-1].substituted else value
                else:
                    words.append(ShellArg(raw, offset, None, False, False, False))
                continue
            raw = word.raw  # type: ignore[union-attr]
            if raw.startswith("<<") and not raw.startswith("<<<"):
                if raw[2:].lstrip("-"):
                    mine.append(registered)
                    registered += 1
                else:
                    bare = True
            is_assign = (leading or declaring) and "=" in raw and bool(_ASSIGN_RE.match(raw))
            parts = word.parts  # type: ignore[union-attr]
            if len(parts) == 1 and parts[0].kind == "lit":
                # one literal piece (most words): _expand's first step, without the call
                only = parts[0]
                if only.text or only.quoted:
                    fields = [ShellArg(only.text, word.start, None, False, False, only.quoted)]  # type: ignore[union-attr]
                else:
                    fields = []
            else:
                # brace and tilde expansion of a word with quotes or expansions, which bash does before the rest
                # (bash(1) "EXPANSION"): a leading ``~/`` from HOME, the rest not read (the word unresolved)
                unread, word = _braces_or_tilde_unread(word, local_env, is_assign and leading)  # type: ignore[arg-type]
                dash = _dash_word(word) if shell.sh and not unread else word  # type: ignore[arg-type]
                if dash is None:
                    # one word as written, not known (an assignment's value: unknown)
                    own_value = is_assign and leading
                    fields = [ShellArg(raw, word.start, None, False, not own_value, True, own_value)]  # type: ignore[union-attr]
                else:
                    word = dash
                    fields = _expand(
                        word,  # type: ignore[arg-type]
                        local_env if pre is None or not (is_assign and leading) else pre,
                        positional,
                        assign=is_assign and (leading or declaring),
                        budget=budget,
                        arrays=shell.arrays or None,
                    )
                if unread:
                    for arg in fields:
                        if is_assign and leading:
                            arg.substituted = True  # the value is not known
                        else:
                            arg.unresolved = True
            if is_assign and leading and fields:
                if pre is None:
                    pre = _Scope(local_env)
                name, _, value = fields[0].text.partition("=")
                pre.own[name] = None if fields[0].substituted else value
            if leading and not is_assign:
                leading = False
                declaring = raw in _DECLARING
            if word.unclosed >= 0:  # type: ignore[union-attr]
                for arg in fields:
                    arg.unclosed = word.unclosed  # type: ignore[union-attr]
            for arg in fields:
                if skip:
                    skip = False
                    if capture:
                        herestring, capture = arg, False
                    continue
                text = arg.text
                if raw.startswith("<<<") and text.startswith("<<<"):
                    # a here-string: the command's input, not an argument (bash(1) "Here Strings")
                    if len(text) > 3:
                        herestring = ShellArg(
                            text[3:], arg.offset, arg.loc, arg.from_env, arg.unresolved, True
                        )
                    else:
                        skip = capture = True
                    continue
                if not arg.quoted and ("<" in text or ">" in text):
                    m = _REDIRECT_RE.match(text)
                    if m and fill_close and raw == ">":
                        fill_close = False  # (the `>` of `<model-id>`)
                        continue
                    if m and words and raw == text and _FILL_IN_RE.fullmatch(raw):
                        after = word.start + len(raw)  # type: ignore[union-attr]
                        if script[after : after + 1] == ">" and _FILL_IN_AFTER.match(script, after + 1):
                            # `vllm serve <model-id> ...`: a placeholder to fill in by hand, written as if it were a
                            # word; bash reads `<model-id` and `>` as redirections (the input from a file model-id,
                            # the output to the next word) and fails before the command runs. Kept as the word meant
                            fill_in = fill_in or raw + ">"
                            fill_close = True
                            words.append(ShellArg(raw + ">", arg.offset, arg.loc))
                            continue
                    if m:
                        if not m.group(2):
                            skip = True  # the operator's target is the next word
                        continue
                words.append(arg)
        let = bool(words) and words[0].text == "let"
        if let or any("((" in _raw_of(w) for w in cmd):  # type: ignore[arg-type]
            # `(( A++ ))`, `let A=5`, `$(( A += 2 ))`: arithmetic that assigns, which kvlint does not evaluate: the
            # variables it assigns are no longer known (were read with their old value)
            for w in cmd[1:] if let else cmd:
                raw = _raw_of(w)  # type: ignore[arg-type]
                spans = [raw] if let else []
                at = raw.find("((")
                while at >= 0 and len(spans) < 16:  # each `(( ... ))` of the word (a few)
                    close = raw.find("))", at + 2)
                    if close < 0:
                        break
                    spans.append(raw[at + 2 : close])
                    at = raw.find("((", close + 2)
                for expression in spans:
                    for m in _ARITH_ASSIGN_RE.finditer(expression):
                        name = m.group(1) or m.group(2) or m.group(3)
                        shell.assign(name, ShellArg("", substituted=True), "", None)
        if words:
            _builtin_writes(words, shell)
        if words and (shell.arrays or words[0].text in _DECLARING):
            _array_writes(words, shell)
        if templates:
            # a template action put back cannot make a word a redirection or stop it being one (the text before
            # its ``{{`` is unchanged): restoring after the drop gives the words restoring before it kept
            _restore_templates(words, templates)
        if _eval_offset is not None:
            for arg in words:
                if arg.offset is not None:
                    arg.offset = _eval_offset
        # the prefix (keywords, wrappers, assignments) is skipped by index and the rest sliced once: a slice per
        # word skipped copied the rest of the command each time (quadratic in a command of thousands of
        # ``A=x`` or ``exec`` words)
        h, end, splits = 0, len(words), 0
        wrapped: WrapperStep | None = None  # a wrapper that gives a shell a script (runuser -c, tmux new)
        # what the command's own environment adds to the shell's: its NAME=value prefix, then env's changes
        own: list[EnvChange] = []
        # env's NAME=value changes set to a command's output: (index in own before the prefix is put first, NAME)
        env_set: list[tuple[int, str]] = []
        prefix: list[tuple[str, str, ShellArg]] = []  # the NAME=value words before the command (or alone)
        wrapped_once = False  # a wrapper was read: a NAME=value after it is no prefix assignment
        # the environment the wrappers give lost PATH (env -i, -u PATH, exec -c), and a wrapper program looks the
        # next word up (not bash, which searches its own PATH)
        path_gone = by_program = False
        refusal: list[str] = []  # env's message when it refuses an -S string: the command does not run
        appends: str | None = None  # a wrapper adds words kvlint cannot see (APPENDING_WRAPPERS)
        while h < end:
            head = words[h].text
            wrapper = wrapper_name(head) if head not in _PREFIX_KEYWORDS else None
            if head in _PREFIX_KEYWORDS:
                h += 1
                if head == "time" and h < end and words[h].text == "-p":
                    h += 1  # bash's `time -p COMMAND`: the POSIX output format (bash(1) "Pipelines")
            elif head == "coproc" and not shell.sh and h + 1 < end and not wrapped_once:
                # bash's `coproc [NAME] COMMAND` (bash(1) "Coprocesses"): the command runs, asynchronously, its output
                # to a pipe; NAME only before a compound command (`coproc VL { vllm serve ...; }`). dash has no such
                # reserved word ("coproc: not found": nothing runs)
                h += 1
                if h + 1 < end and _NAME_RE.fullmatch(words[h].text) and words[h + 1].text in _OPENS:
                    h += 1
            elif wrapper is not None:
                unset: list[str] | None = [] if wrapper in ("env", "exec") else None
                step = wrapper_step(words, h, end, wrapper, unset)
                if step is None:
                    break  # `tmux ls`: the command is tmux's own
                at = h
                h, end = step.after, step.end
                wrapped_once = True
                appends = appends or APPENDING_WRAPPERS.get(wrapper)
                # a builtin's command is looked up by bash; dumb-init's by musl, whose default path has /usr/local/bin
                by_program = wrapper not in _BUILTIN_WRAPPERS and wrapper not in MUSL_LOOKUP_WRAPPERS
                if wrapper in OWN_PATH_WRAPPERS:
                    path_gone = False  # sudo looks the command up in its secure_path
                before = len(own)  # env's -S reads ${NAME} before its -u/-i take effect
                own.extend(("", None, None) if not n else (n, None, None) for n in unset or ())
                if unset and env_set:  # `env -u NAME`: unset in the script, not set to an unknown value
                    env_set = [e for e in env_set if e[1] not in unset]
                path_gone = path_gone or any(not n or n == "PATH" for n in unset or ())
                if step.script is not None:
                    wrapped = step
                    break
                if step.split is not None and splits < _MAX_SPLITS:
                    # env -S 'vllm serve --tp 8' [ARG...]: env goes on reading the string's words, then the rest
                    # (a few times a command: each copies the rest of it)
                    splits += 1
                    seen = [(n, None if a.substituted else v, a) for n, v, a in prefix]
                    env_s = _with_changes(_Exported(local_env, exported), [*seen, *own[:before]])
                    words = [*words[: at + 1], *_split_string(step.split, env_s, refusal), *words[h:end]]
                    h, end = at, len(words)
                elif wrapper == "env" and step.split is None:
                    # env's NAME=value: in the environment of the command it runs only (its words were expanded
                    # before: `env A=1 vllm serve $A` does not pass 1)
                    while h < end and _ASSIGN_RE.match(words[h].text):
                        name, _, val = words[h].text.partition("=")
                        path_gone = path_gone and name != "PATH"
                        # (a later change of the same name, in this env or another, is the one its script sees)
                        env_set = [e for e in env_set if e[1] != name]
                        if words[h].substituted:
                            env_set.append((len(own), name))
                        own.append((name, None, None) if words[h].substituted else (name, val, words[h]))
                        h += 1
            elif "=" in head and _ASSIGN_RE.match(head):
                # after a wrapper (`nohup A=1 vllm ...`) the word is the command the wrapper runs, no assignment:
                # skipped as before, now without setting the shell's variable
                if not wrapped_once:
                    name, _, val = head.partition("=")
                    prefix.append((name, val, words[h]))
                h += 1
            elif head in _DECLARING:
                _declare(words, h, end, shell)
                h = end
            else:
                break
        if prefix:
            if h >= end and wrapped is None:
                for name, val, arg in prefix:  # `A=1` alone: a variable of the shell (exported if it was)
                    shell.assign(name, arg, val, None)
            else:
                # `A=1 vllm serve m`: in that command's environment only, not the shell's (bash: `A=1 true; echo
                # $A` prints nothing)
                own[:0] = [(n, None, None) if a.substituted else (n, v, a) for n, v, a in prefix]
        environ: Environ = Environ(shell.environ_base, log, len(log))
        if own:
            environ = Environ(environ, own, len(own))
        if wrapped is not None and wrapped.script is not None:
            if _depth < 3:
                # `runuser app -c 'vllm serve ...'`, `tmux new -d 'vllm serve ...'`: the script read as `sh -c`'s,
                # starting from the environment the wrapper gives it (the shell's exported variables, the
                # command's own changes, runuser -l's kept names, tmux new -e's)
                changes: list[EnvChange] = list(own)
                if wrapped.keeps_env is not None:
                    changes.append(("", None, frozenset(wrapped.keeps_env)))
                if wrapped.sets_env:  # tmux new -e NAME=value 'vllm serve $NAME'
                    changes.extend((*t.partition("=")[::2], words[at]) for t, at in wrapped.sets_env)
                child_changes = changes[len(own) :]
                yield from _read_commands(
                    wrapped.script.text,
                    _with_changes(_Exported(local_env, exported), changes),
                    words[wrapped.positional : wrapped.end],
                    _depth=_depth + 1,
                    _eval_offset=wrapped.script.offset if _eval_offset is None else _eval_offset,
                    _budget=budget,
                    _environ=Environ(environ, child_changes, len(child_changes))
                    if child_changes
                    else environ,
                    _sh=shell.sh,
                    # (as for a nested `sh -c` below: a reference left for a value not known stays not known)
                    _unknown=_maybe_set_in([wrapped.script], local_env, shell.array_names)
                    if wrapped.script.unresolved
                    else (),
                )
            continue
        if h >= end:
            continue
        if h or end < len(words):
            words = words[h:end]
        if refusal:
            # env exits 125 before running anything (no eval, function, nested script or builtin of it happens)
            command = ShellCommand(words)
            command.environ = environ
            command.env_refused = refusal[0]
            yield command
            continue
        # what this shell reads as a script of its own: eval's string, a function's body (its words the call's $1 $2
        # ...), the script `.`/`source` reads from the command's input; (text, span of it or None, offset its words
        # point at or None, the positional parameters)
        reread: tuple[str, tuple[int, int] | None, int | None, Sequence[ShellArg]] | None = None
        call = False  # reread is a function's body
        # the shell's state before a call of a function whose body is a subshell
        isolated: _Saved | None = None
        head = words[0].text
        if head in shell.functions and budget.calls > 0 and not wrapped_once:
            # (at any depth: a function calling another, four deep, is read; the calls of a reading are bounded).
            # Not behind a wrapper: `command NAME` suppresses the function lookup (POSIX XCU "command"; `vllm() {
            # command vllm "$@" --x; }` runs the program vLLM), `builtin` runs builtins only, and `exec`, `nohup`,
            # `env` ... run a program found in PATH, never a function of this shell
            budget.calls -= 1
            call = True
            body, body_span, off, subshell = shell.functions[head]
            if subshell and shell.subshells > 0:
                shell.subshells -= 1
                isolated = _Saved(shell, positional)
            reread = (body, body_span, off, [positional[0] if positional else ShellArg(""), *words[1:]])
        elif _depth >= 3:
            pass
        elif head == "eval":
            reread = (" ".join(w.text for w in words[1:]), None, words[0].offset, positional)
        elif head in _SOURCE and len(words) >= 2 and words[1].text in _STDIN_FILES and budget.calls > 0:
            budget.calls -= 1  # (a here-document's body is read by reading on to the end of its line)
            # `. /dev/stdin <<EOF` / `source /dev/stdin <<< "$S"`: the script it reads is the command's input, read in
            # this shell (a file is not read here); ARGS after the file are $1 $2 ... while it runs
            params = (
                [positional[0] if positional else ShellArg(""), *words[2:]] if len(words) > 2 else positional
            )
            if herestring is not None:
                off = herestring.offset if _eval_offset is None else _eval_offset
                reread = (herestring.text, None, off, params)
            elif mine:
                pulled = []
                while len(heredocs) <= mine[-1]:  # read on until the body is skipped (after the line's end)
                    token = next(tokens, None)
                    if token is None:
                        break
                    pulled.append(token)
                for token in reversed(pulled):
                    tokens.push(token)
                if len(heredocs) > mine[-1]:
                    reread = (original, heredocs[mine[-1]], _eval_offset, params)
        elif (
            head in _SOURCE
            and len(words) >= 2
            and shell.read_file is not None
            and budget.calls > 0
            and not words[1].unresolved
        ):
            # `. /config/env.sh`: a file kvlint reads (a ConfigMap mounted in the container), read in this shell as
            # bash and dash read it (bash(1) "SHELL BUILTIN COMMANDS", "."); its words point at the `.` command
            sourced = shell.read_file(words[1].text)
            if sourced is not None:
                budget.calls -= 1
                params = (
                    [positional[0] if positional else ShellArg(""), *words[2:]]
                    if len(words) > 2
                    else positional
                )
                reread = (sourced, None, words[0].offset if _eval_offset is None else _eval_offset, params)
        # a script kvlint does not read runs in this shell: a file `.`/`source` reads (not the command's input, read
        # above), or an eval string holding a command's output or a variable's whole value (`eval "$(cat f)"`,
        # `eval "$SETUP"`): what it assigns is not known (_Shell.forget_all), once it has run
        forget = (head in _SOURCE and len(words) >= 2 and reread is None and not call) or (
            head == "eval" and any(_unread_script(w, local_env) for w in words[1:])
        )
        if head == "eval" and not forget and _hook_only(words[1:]):
            shell.forget_all(_SHELL_HOOK_NAMES)  # `eval "$(conda shell.bash hook)"`: the tool's own names
        elif forget and head in _SOURCE and (sets := _tool_environment(words[1].text)) is not None:
            # `. /opt/venv/bin/activate`, `. /etc/profile`, `. "$HOME/.cargo/env"`: a tool's (or the system's) own
            # environment script, its own names only
            forget = False
            shell.forget_all(sets)
        if reread is not None:
            # read in this shell: what it assigns and exports stays (`eval "export A=1"`); a prefix assignment holds
            # while it runs (`A=1 eval 'vllm serve m --x $A'`), and is the shell's before and after
            inner, span, off, params = reread
            if call:
                shell.frames.append({})
            saved = [(name, local_env.get(name)) for name, _v, _a in prefix]
            # a prefix set to a command's output (`A=$(cmd) eval 'vllm serve m $A'`) is set while it runs, to a value
            # kvlint does not know: marked so (:data:`_UNKNOWN_MARK`), each mark put back as it was after. Not where a
            # word of the command still holds a reference to it: bash expanded that word before the assignment (`A=$(cmd)
            # eval "vllm serve m $A"` evals `vllm serve m `), and the reference left unresolved is no value of the prefix.
            marks = [(_UNKNOWN_MARK + name, local_env.get(_UNKNOWN_MARK + name)) for name, _v, _a in prefix]
            # the names the command's unresolved words refer to, found once (a look-up per prefix name, not a scan of
            # the words: 5,000 prefixes before an eval of 5,000 words was quadratic)
            referred = (
                {m.group(1) for w in words if w.unresolved for m in _REFERENCED_RE.finditer(w.text)}
                if any(arg.substituted for _n, _v, arg in prefix)
                else set()
            )
            for name, val, arg in prefix:
                if arg.substituted:
                    local_env.pop(name, None)
                    if name not in referred:
                        local_env[_UNKNOWN_MARK + name] = ""
                else:
                    local_env[name] = val
                    local_env.pop(_UNKNOWN_MARK + name, None)
            # the commands eval runs have the prefix in their environment too (bash's temporary environment)
            log.extend(own)
            try:
                yield from _read_commands(
                    inner,
                    env,
                    params,
                    _depth=_depth if call else _depth + 1,
                    _eval_offset=off,
                    _budget=budget,
                    _shell=shell,
                    _span=span,
                )
            finally:
                if call:
                    _return(shell)
                if isolated is not None:
                    isolated.restore(shell)
                for mark, was in marks:
                    if was is None:
                        local_env.pop(mark, None)
                    else:
                        local_env[mark] = was
                for name, old in saved:
                    if old is None:
                        local_env.pop(name, None)
                    else:
                        local_env[name] = old
                    if own:
                        log.append(
                            (name, old, None) if old is not None and exported(name) else (name, None, None)
                        )
                if forget:
                    shell.forget_all()
            continue
        if forget:
            shell.forget_all()
        nested = _nested_script(words)
        if nested is not None and _depth < 3:
            # `bash -c 'vllm serve ...'` inside a script (behind `su-exec app`, `screen -dm`, `runuser -u app --`):
            # its script read as one, ``$0 $1 ...`` the words after it, its commands' words pointing at the script
            # word; nested three deep at most with eval (a hostile 10^4 nested `bash -c` is three re-reads)
            j = nested
            given: Sequence[ShellArg] = words[j + 1 :]
            if appends is not None:
                # `xargs sh -c 'vllm serve m "$@"' _`: the words xargs appends are the script's $1 ... ($0 first when
                # none is written): not known, and a command passing them on does not have all its arguments read
                given = [*(given or [ShellArg("$0", unresolved=True)]), ShellArg("$@", unresolved=True)]
            for nested_cmd in _read_commands(
                words[j].text,
                _with_changes(_Exported(local_env, exported), _with_unknown_marks(own, prefix, env_set)),
                given,
                _depth=_depth + 1,
                _eval_offset=words[j].offset if _eval_offset is None else _eval_offset,
                _budget=budget,
                _environ=environ,
                _allexport=shell_allexport(words, 1, j),
                _sh=words[0].text[words[0].text.rfind("/") + 1 :] in MAYBE_DASH,
                # a reference this shell left in the script because its value is not known (`ARGS=$(cat f); sh -c
                # "vllm serve m $ARGS"`: bash puts ARGS's words there): set to a value kvlint does not know in the
                # nested script too, not unset there (a script this shell passed as written holds none)
                _unknown=_maybe_set_in([words[j]], local_env, shell.array_names)
                if words[j].unresolved
                else (),
            ):
                if appends is not None and nested_cmd.appends is None:
                    for w in nested_cmd:  # (the parameters xargs gives, in `"$@"`, `$*`, `$1`)
                        if w.unresolved and "$@" in w.text:
                            nested_cmd.appends = appends
                            break
                yield nested_cmd
            continue
        if words[0].text == "unset":
            _unset(words, shell)
        elif words[0].text == "set":
            reset = _set(words, shell)
            if reset is not None:  # `set -- "$@" --port 8000`: the script's $1 $2 ... from here on
                positional = [positional[0] if positional else ShellArg(""), *reset]
        elif words[0].text == "shift":
            positional = _shift(words, positional)
        command = ShellCommand(words)
        command.environ = environ
        command.no_path = path_gone and by_program
        command.appends = appends
        command.maybe_set = _maybe_set_in(words, local_env, shell.array_names)
        command.fill_in = fill_in
        yield command


def _unread_script(word: ShellArg, env: Mapping[str, str]) -> bool:
    """Whether a word of ``eval``'s string is script text kvlint does not see: a command's output (``$(cat f)``,
    substituted) or a reference left whole to a variable that may be set (``$SETUP``, ``"${INIT}"``: :func:`_maybe_set`
    in ``env``; one neither the container's env nor the script sets is empty), not a known word nor one holding a
    reference among other text (``eval "vllm serve $MODEL"``: a value in a command kvlint reads)."""
    if word.substituted:
        return not _shell_hook(word.text)
    m = _WHOLE_REFERENCE_RE.fullmatch(word.text) if word.unresolved else None
    return m is not None and _maybe_set(env, m.group(1) or m.group(2))


#: The output of a tool's shell hook, which ``eval`` runs to set the tool up (``eval "$(conda shell.bash hook)"``, the
#: conda documentation's way to use ``conda activate`` in a script; ``micromamba shell hook -s bash``, ``mamba shell
#: hook``, ``pyenv init -``): it defines the tool's functions and sets the tool's own variables and PATH
#: (:data:`_SHELL_HOOK_NAMES`), not every name, so only those are made unknown (:meth:`_Shell.forget_all`).
_SHELL_HOOK_RE = re.compile(
    r"\$\((?:[^()\s]*/)?(?:(?:conda|mamba|micromamba) shell(?:\.[a-z]+)?(?: [a-z-]+)*? hook(?: -s [a-z]+)?"
    r"|(?:conda|mamba|micromamba) shell hook(?: -s [a-z]+| --shell[ =][a-z]+)?|pyenv (?:virtualenv-)?init -)\)"
)
#: A hook's error output dropped at the end of its command substitution (``conda init``'s ``$('/opt/conda/bin/conda'
#: 'shell.bash' 'hook' 2> /dev/null)``): the output, which ``eval`` runs, is the same.
_HOOK_STDERR_RE = re.compile(r" 2> ?/dev/null\)\Z")


def _shell_hook(text: str) -> bool:
    """Whether the command substitution ``text`` is a tool's shell hook (:data:`_SHELL_HOOK_RE`), its words quoted
    or not (``'conda' 'shell.bash' 'hook'``, as ``conda init`` writes it) and its error output dropped or not."""
    if len(text) > 256:
        return False
    plain = _HOOK_STDERR_RE.sub(")", " ".join(text.replace("'", "").replace('"', "").split()))
    return _SHELL_HOOK_RE.fullmatch(plain) is not None


#: What a shell hook of :data:`_SHELL_HOOK_RE` sets: names with these prefixes, and these names.
_SHELL_HOOK_NAMES = (
    ("CONDA_", "_CE_", "_CONDA", "MAMBA_", "_MAMBA", "PYENV", "_PYENV", "VIRTUAL_ENV", "_OLD_VIRTUAL_"),
    ("PATH", "PS1", "PYTHONHOME"),
)


#: A Python environment's activation script: ``VENV/bin/activate`` (CPython ``Lib/venv/scripts/common/activate``,
#: virtualenv's ``activate.sh``: VIRTUAL_ENV, VIRTUAL_ENV_PROMPT, PATH, PS1, the _OLD_VIRTUAL_* copies, PYTHONHOME
#: unset, a ``deactivate`` function) or conda's ``bin/activate`` (conda's hook and ``conda activate``: CONDA_*, PATH,
#: PS1; **[assumed]** an environment's own ``activate.d`` scripts set no setting of the engine's command), read as a
#: shell hook (:data:`_SHELL_HOOK_NAMES`); also conda's legacy ``source activate ENV`` / ``source deactivate``, the
#: script ``.`` finds on PATH (bash(1) ".": a name without a slash is looked up in PATH; dash the same).
_ACTIVATE_RE = re.compile(r"(?:\A|/)bin/activate\Z|\A(?:de)?activate\Z")

#: Other environment scripts of a tool or of the system that a script sources to set the tool up, and the names each
#: sets (:meth:`_Shell.forget_all`'s ``only``), where any other file may set any name:
#:
#: - conda's and mamba's profile scripts ``PREFIX/etc/profile.d/conda.sh`` / ``mamba.sh`` (conda
#:   ``conda/shell/etc/profile.d/conda.sh``: the ``conda`` function, CONDA_EXE, _CE_M, _CE_CONDA, CONDA_PYTHON_EXE
#:   written at install, CONDA_SHLVL, PS1 when unset): :data:`_SHELL_HOOK_NAMES`;
#: - rustup's ``$HOME/.cargo/env`` (rust-lang/rustup ``src/cli/self_update/env.sh``: PATH only);
#: - the system profile ``/etc/profile`` (Debian/Ubuntu base-files: PATH; PS1 only in an interactive shell; its
#:   loop variable ``i``, unset after; Alpine's and RHEL's likewise set PATH and the login names USER, LOGNAME, MAIL,
#:   HOSTNAME, HISTSIZE, HISTCONTROL, PAGER, CHARSET), which then sources ``/etc/profile.d/*.sh``: **[assumed]** the
#:   image's packages' scripts there set their tools' environment, not a name the manifest's script sets or reads
#:   for the engine's command (a file named in ``/etc/profile.d`` itself, ``. /etc/profile.d/env.sh``, stays unknown).
#:
#: Not here: a user's ``~/.bashrc``/``~/.profile`` (images append their own exports to them), nvm's ``nvm.sh``.
_TOOL_ENVIRONMENTS: tuple[tuple[re.Pattern[str], tuple[tuple[str, ...], tuple[str, ...]]], ...] = (
    (_ACTIVATE_RE, _SHELL_HOOK_NAMES),
    (re.compile(r"(?:\A|/)etc/profile\.d/(?:conda|mamba)\.sh\Z"), _SHELL_HOOK_NAMES),
    (re.compile(r"(?:\A|/)\.cargo/env\Z"), ((), ("PATH",))),
    (
        re.compile(r"\A/etc/profile\Z"),
        (
            (),
            (
                "PATH",
                "PS1",
                "i",
                "USER",
                "LOGNAME",
                "MAIL",
                "HOSTNAME",
                "HISTSIZE",
                "HISTCONTROL",
                "PAGER",
                "CHARSET",
            ),
        ),
    ),
)


def _tool_environment(path: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The names a sourced file at ``path`` (as the shell expanded it; ``$HOME/.cargo/env`` as written) sets when it
    is a tool's or the system's environment script (:data:`_TOOL_ENVIRONMENTS`), else None (it may set any)."""
    for pattern, names in _TOOL_ENVIRONMENTS:
        if pattern.search(path) is not None:
            return names
    return None


def _hook_only(words: Sequence[ShellArg]) -> bool:
    """Whether an ``eval``'s words are only tool shell hooks (:data:`_SHELL_HOOK_RE`) and known words."""
    return any(w.substituted for w in words) and all(not w.substituted or _shell_hook(w.text) for w in words)


#: A word that is one variable reference and nothing else: ``$A``, ``${A}``.
_WHOLE_REFERENCE_RE = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


#: A ``<`` redirection word that opens a ``<...>`` placeholder to fill in by hand (``<model-id``, ``<your-org/model``),
#: when a ``>`` ends it and what follows the ``>`` is no file name (:data:`_FILL_IN_AFTER`: blanks and line
#: continuations, then an option, the end of the line or of the script, an operator, or a redirection, which
#: after a ``>`` both shells refuse as a syntax error (``vllm serve <model-id> 2>&1 | tee log``); or at once the end
#: of the line or script, ``;`` or ``)``): ``vllm serve <model-id> --port 8000``, not ``cmd <in.txt> out.log``
#: (input from in.txt, output to out.log), ``cmd <in>out``, ``cmd <in>>out`` nor ``cmd <in>&1``.
_FILL_IN_RE = re.compile(r"<[A-Za-z][A-Za-z0-9_.:/-]*")
_FILL_IN_AFTER = re.compile(r"(?:[ \t]|\\\n)+(?:-|\n|$|[;&|)<>]|[0-9]+[<>])|[\n;)]|$")


#: The array names one reading remembers (:attr:`_Shell.array_names`; far above a real script's few).
_ARRAY_NAMES = 1024


#: A word naming an element of an array: ``A[5]=x``, ``A[1]+=y``, ``declare A[2]=z``, ``unset 'A[1]'`` (bash(1) "Arrays")
_ELEMENT_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[")
#: The builtins that make a name a new variable in a function (``local A=a``; ``declare``/``typeset`` without ``-g``)
_REDECLARING = frozenset({"local", "declare", "typeset"})
#: The builtins that fill an array named by one of their words (``read -a A``, ``mapfile A``, ``readarray -t A``)
_ARRAY_FILLERS = frozenset({"read", "mapfile", "readarray"})


#: The builtins and reserved words that assign a variable a value kvlint does not read: ``read [-r] A B`` (a line of
#: the input; REPLY without a name), ``for A in ...``/``select A in ...`` (each word in turn; the last one after the
#: loop), ``getopts OPTSTRING A`` (the option found, with OPTARG and OPTIND), ``printf -v A FORMAT`` (the text it
#: formats), ``mapfile``/``readarray`` (element 0 of the array, MAPFILE without a name): bash(1) "SHELL BUILTIN
#: COMMANDS" and "Compound Commands".
_VARIABLE_WRITERS = frozenset({"read", "for", "select", "getopts", "printf", "mapfile", "readarray"})
_WRITER_DEFAULTS = {
    "read": ("REPLY",),
    "getopts": ("OPTARG", "OPTIND"),
    "mapfile": ("MAPFILE",),
    "readarray": ("MAPFILE",),
}


def _builtin_writes(words: Sequence[ShellArg], shell: _Shell) -> None:
    """Make the variables a command of :data:`_VARIABLE_WRITERS` assigns unknown: their value before it was read
    (``A=1; read A; vllm serve m --x=$A`` passed ``--x=1`` where bash passes the line read; ``for A in 2`` the same).
    A word that only looks like a name (an option's argument: ``read -p Prompt A``) is made unknown too: only less
    known. ``printf`` assigns only with ``-v``."""
    h = 0
    while h < len(words) - 1 and words[h].text in _PREFIX_KEYWORDS:
        h += 1  # (`while read A`, `if read A`, `do read A`)
    head = words[h].text
    if head not in _VARIABLE_WRITERS:
        return
    words = words[h:]
    names: list[str] = list(_WRITER_DEFAULTS.get(head, ()))
    if head in ("for", "select"):
        if len(words) > 1:
            names.append(words[1].text)
    elif head == "printf":
        for k, arg in enumerate(words[1:3], 1):
            if arg.text == "-v" and k + 1 < len(words):
                names.append(words[k + 1].text)
            elif arg.text.startswith("-v") and len(arg.text) > 2:
                names.append(arg.text[2:])
    else:
        names.extend(arg.text for arg in words[1:])
    for name in names:
        if _NAME_RE.fullmatch(name) and name != "IFS":
            shell.assign(name, ShellArg("", substituted=True), "", None)


def _array_writes(words: Sequence[ShellArg], shell: _Shell) -> None:
    """Forget the arrays a command changes other than by ``NAME=(...)``/``NAME+=(...)``: an element assigned or unset
    (``A[5]=x``, ``A[0]=z``, ``unset 'A[1]'``: bash(1) "Arrays", "Any element of an array may be referenced using
    ${name[subscript]}" and "unset name[subscript] destroys the array element at index subscript") or the array filled
    by ``read -a``/``mapfile``/``readarray``. Its ``"${A[@]}"``, ``${#A[@]}`` and ``$A`` (element 0) are then left
    unresolved: ``A=(a b c); A[5]=x`` gives bash ``a b c x`` and 4 elements, not the three kvlint kept."""
    arrays = shell.arrays
    head = words[0].text
    if head in _DECLARING and any(w.text.startswith("-") and "A" in w.text for w in words[1:]):
        # ``declare -A M``: M an associative array from here on (``M=(k v)`` sets M[k]=v, not a list)
        for arg in words[1:]:
            declared = arg.text.partition("=")[0]
            if _NAME_RE.fullmatch(declared):
                shell.assoc.add(declared)
                arrays.pop(declared, None)
    if head in _REDECLARING or (
        head == "unset" and not any(w.text.startswith("-") and "f" in w.text for w in words)
    ):
        # `unset A`, a function's `local A=a` (a new variable), `declare A`: what NAME is now is not the array's
        # list, though `$A` may equal its element 0 (the test that a scalar assignment since left it)
        for arg in words[1:]:
            arrays.pop(arg.text.partition("=")[0], None)
    filler = head in _ARRAY_FILLERS
    for arg in words:
        text = arg.text
        m = _ELEMENT_RE.match(text)
        name = m.group(1) if m is not None else (text if filler else None)
        if name is not None and name in arrays:
            del arrays[name]
            shell.vars.pop(name, None)


def _names_command(words: list[Word | tuple[int, str]]) -> bool:
    """Whether ``words`` (what follows an array assignment's ``)`` in the same command) name a command: a word that is
    neither an assignment (``A=(a b) B=1``) nor a redirection or its target (``A=(c) >/dev/null``, ``A+=(c) 2>&1``)."""
    target = False
    for word in words:
        raw = _raw_of(word)
        if target:
            target = False
            continue
        m = _REDIRECT_RE.match(raw)
        if m is not None:
            target = not m.group(2)
            continue
        if not _ASSIGN_RE.match(raw):
            return True
    return False


#: The reserved words that start a loop (its body ends at ``done``)
_LOOPS = frozenset({"for", "while", "until"})
#: The last word of a command that opens an array assignment with the ``(`` after it: ``NAME=`` or ``NAME+=``
_ARRAY_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=\Z")
#: The elements the array assignments of one reading may assign together (:attr:`_Budget.elements`): past it an array
#: assigned is not kept (references to it stay unresolved)
_ARRAY_ELEMENTS = 100_000


def _assigns_only(cmd: list[Word | tuple[int, str]]) -> bool:
    """Whether the words of ``cmd`` before its last are assignments, or a declaring builtin (``declare``, ``local``
    ...) with options and assignments: where a ``NAME=(`` is an array assignment (elsewhere bash refuses the ``(``)."""
    heads = _array_heads(cmd)
    if heads and heads[0] in _DECLARING:
        return all(h.startswith("-") or _ASSIGN_RE.match(h) for h in heads[1:])
    return all(_ASSIGN_RE.match(h) for h in heads)


def _array_heads(cmd: list[Word | tuple[int, str]]) -> list[str]:
    """The words before an array assignment's ``NAME=``, reserved words before them (``do``, ``then``) left out."""
    heads = [_raw_of(w) for w in cmd[:-1]]
    k = 0
    while k < len(heads) and heads[k] in _PREFIX_KEYWORDS:
        k += 1
    return heads[k:]


def _assign_array(
    cmd: list[Word | tuple[int, str]],
    tokens: _Lookahead,
    shell: _Shell,
    positional: Sequence[ShellArg],
    budget: _Budget,
    eval_offset: int | None,
    templates: Mapping[str, tuple[list[int], list[str]]],
    in_loop: bool = False,
) -> None:
    """``NAME=(WORD...)`` / ``NAME+=(WORD...)`` whose ``NAME=`` ends ``cmd`` and whose ``(`` was just read: the words to
    the ``)`` (newlines between them allowed) read from ``tokens``, expanded as a command's words are (split, ``"$@"``
    one element each), and the array set (``+=``: appended) when the command is assignments only or ``declare``/
    ``typeset`` (with options) outside a function; else (``local``, another command: the array is local or not set)
    it is forgotten, as in a loop (``for x in ...; do A+=("$x"); done``: how many times it runs is not known). NAME,
    the shell's variable, holds the first element (``$NAME`` is ``${NAME[0]}``); bash does not
    export an array."""
    m = _ARRAY_ASSIGN_RE.match(_raw_of(cmd[-1]))
    assert m is not None
    name, append = m.group(1), bool(m.group(2))
    if len(shell.array_names) < _ARRAY_NAMES:
        shell.array_names.add(name)
    elements: list[ShellArg] = []
    closed = False
    # an element ``[N]=value`` / ``[KEY]=value`` (an unquoted ``[`` first): assigned at its subscript, not next
    subscripted = False
    for token in tokens:
        if token.__class__ is str:
            if token == ")":
                closed = True
                break
            if token == "\n":
                continue
            break  # (a syntax error in bash)
        for word in token:
            subscripted = subscripted or _raw_of(word).startswith("[")  # type: ignore[arg-type]
            if word.__class__ is tuple:
                offset, raw = word  # type: ignore[misc]
                elements.append(ShellArg(raw, offset, None, False, False, False))
            else:
                elements.extend(
                    _expand(word, shell.vars, positional, budget=budget, arrays=shell.arrays or None)
                )  # type: ignore[arg-type]
    if templates:
        _restore_templates(elements, templates)
    if eval_offset is not None:
        for arg in elements:
            if arg.offset is not None:
                arg.offset = eval_offset
    heads = _array_heads(cmd)
    plain = all(_ASSIGN_RE.match(h) for h in heads) or (
        heads[:1] in (["declare"], ["typeset"])
        and not shell.frames
        and all(h.startswith("-") and "A" not in h for h in heads[1:])
    )
    budget.elements -= len(elements)
    if not closed or not plain or in_loop or budget.elements < 0 or subscripted or name in shell.assoc:
        # not followed: NAME's elements and ``$NAME`` (its element 0, which bash sets here or in the loop, the
        # function, the associative array) are not known
        shell.arrays.pop(name, None)
        shell.vars.pop(name, None)
        return
    old = shell.arrays.get(name)
    if append and old is not None and shell.vars.get(name) == (old[1].text if len(old) > 1 else None):
        old.extend(elements)
        if len(old) > 1:
            shell.vars[name] = old[1].text  # (an empty array's first element)
        return
    first = shell.vars.get(name)
    if append and first is not None:
        # `A=x; A+=(y)`: the scalar is element 0 (bash(1) "Arrays")
        elements.insert(0, ShellArg(first, None, None, True, _is_unresolved(first), True))
    shell.arrays[name] = [ShellArg(""), *elements]
    if elements:
        shell.vars[name] = elements[0].text
    else:
        shell.vars.pop(name, None)
    if shell.exported(name):
        shell.log.append((name, None, None))  # an array is not passed to the commands the shell runs


#: The operators after which a `(` opens a subshell (:func:`_read_commands`), and the subshells a shell's reading
#: isolates at most (each saves the shell's variables: a bounded number of copies).
_STARTS_COMMAND = frozenset({";", "&&", "||", "|", "&", "\n", "("})
_SUBSHELLS = 64


class _Saved:
    """A shell's state when a subshell ``( ... )`` opens, put back when it closes: its variables, export marks,
    ``allexport``, functions, positional parameters, and the environment of its commands (the changes logged since
    are undone by logging the values before them)."""

    __slots__ = ("own", "plain", "marks", "allexport", "functions", "logged", "positional", "arrays")

    def __init__(self, shell: _Shell, positional: Sequence[ShellArg]) -> None:
        variables = shell.vars
        #: a nested shell's own changes (:class:`_Scope`), or the variables of the container's shell (a dict)
        self.own: dict[str, str | None] = dict(variables.own) if isinstance(variables, _Scope) else {}
        self.plain: dict[str, str] = {} if isinstance(variables, _Scope) else dict(variables)
        self.marks = dict(shell.marks)
        self.allexport = shell.allexport
        self.functions = dict(shell.functions)
        self.logged = len(shell.log)
        self.positional = positional
        #: each array's list and its length then (``+=`` appends in place: the elements added since are cut off)
        self.arrays = {name: (elements, len(elements)) for name, elements in shell.arrays.items()}

    def restore(self, shell: _Shell) -> Sequence[ShellArg]:
        variables = shell.vars
        if isinstance(variables, _Scope):
            variables.own = self.own
        else:
            variables.clear()
            variables.update(self.plain)
        shell.marks = self.marks
        shell.allexport = self.allexport
        shell.functions = self.functions
        shell.arrays = {
            name: elements[:n] if len(elements) != n else elements
            for name, (elements, n) in self.arrays.items()
        }
        log = shell.log
        touched = dict.fromkeys(name for name, _v, _w in log[self.logged :])
        if touched and "" not in touched:
            before, set_by = Environ(shell.environ_base, log, self.logged).get()
            for name in touched:
                value = before.get(name)
                log.append((name, value, set_by.get(name)) if value is not None else (name, None, None))
        return self.positional


#: A variable an arithmetic expression assigns: ``A = 1``, ``A += 2`` (and the other compound operators), ``A++``,
#: ``--A`` (bash(1) "ARITHMETIC EVALUATION"; ``==`` is a comparison).
_ARITH_ASSIGN_RE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
    r"|([A-Za-z_][A-Za-z0-9_]*)\s*(?:\+\+|--)"
    r"|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)"
)


#: bash's builtins that read a script into the current shell, and the files that are a command's input.
_SOURCE = frozenset({".", "source"})
_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


#: The reserved words that open a compound command (bash(1) "Compound Commands") and those that close one.
_OPENS = frozenset({"{", "if", "for", "select", "while", "until", "case"})
_CLOSES = frozenset({"}", "fi", "done", "esac"})
#: The reserved words after which another reserved word may start a command (``then if``, ``{ while``, ``! {``).
_BEFORE_RESERVED = frozenset({"{", "then", "do", "else", "elif", "if", "while", "until", "!", "time"})


def _compound_step(cmd: list[Word | tuple[int, str]]) -> int:
    """How a command's words change the nesting of compound commands: +1 for each reserved word that opens one at the
    start of the command (``{``, ``if``, ``for`` ... ; ``then if`` two words), -1 for one that closes one (``}``,
    ``fi``, ``done``, ``esac``, the command's first word)."""
    first = _raw_of(cmd[0])
    if first in _CLOSES:
        return -1
    step = 0
    if first == "coproc" and len(cmd) > 1:
        # bash's `coproc { ...; }`, `coproc NAME { ...; }`: the compound command after it opens
        name = _raw_of(cmd[1])
        cmd = cmd[2:] if len(cmd) > 2 and _NAME_RE.fullmatch(name) and _raw_of(cmd[2]) in _OPENS else cmd[1:]
    for word in cmd:
        raw = _raw_of(word)
        if raw in _OPENS:
            step += 1
            if raw not in _BEFORE_RESERVED:  # for NAME in ..., case WORD in, select: no reserved word follows
                break
        elif raw not in _BEFORE_RESERVED:
            break
    return step


def _after_compound(tokens: _Lookahead, depth: int, parens: int) -> str | None:
    """The operator after the compound command a command opened (``depth`` reserved words, or ``parens`` a ``(``
    subshell) ends: ``|``, ``&``, ``&&``, ``;`` ...; None at the end of the script. The tokens read are put back
    (read once more by the caller: a script's tokens are read ahead once, at the compound command that holds them, so
    the work stays linear). A ``case``'s patterns' ``)`` are not counted."""
    pulled: list[Any] = []
    cases = 0
    after: str | None = None
    for token in tokens:
        pulled.append(token)
        if token.__class__ is str:
            if depth <= 0 and parens <= 0:
                after = token
                break
            if cases == 0 and token == "(":
                parens += 1
            elif cases == 0 and token == ")":
                parens -= 1
            continue
        if not token:
            continue
        first = _raw_of(token[0])
        if first == "case":
            cases += 1
        elif first == "esac" and cases:
            cases -= 1
        depth += _compound_step(token)
    for token in reversed(pulled):
        tokens.push(token)
    return after


#: ``{a,b}`` and ``{1..3}``: one brace expansion of a word of ordinary characters (bash(1) "Brace Expansion"), its
#: text before, the items, the text after (a word with more than one, or nested, is not read)
_BRACE_RE = re.compile(r"([^{}]*)\{([^{}]*)\}([^{}]*)\Z")
#: ``{x..y[..incr]}``: a sequence expression of two integers or two letters, an integer step (bash 5.2 braces.c,
#: ``expand_seqterm``)
_BRACE_SEQUENCE_RE = re.compile(
    r"(-?[0-9]{1,6}|[A-Za-z])\.\.(-?[0-9]{1,6}|[A-Za-z])(?:\.\.(-?[0-9]{1,6}))?\Z"
)
#: The words one brace expansion makes at most (``{1..100000}`` is left as a word kvlint cannot resolve)
_BRACE_WORDS = 1024


_BRACE_OR_CLOSE_RE = re.compile(r"[{}]")


def _holds_brace_expansion(text: str) -> bool:
    """Whether ``text`` (a word's unquoted text, each quoted or expanded piece standing as NUL) holds a brace
    expansion (``{a,b}``, ``{1..3}``; ``{a,{b,c}}`` holds one): a ``{`` whose next brace is a ``}``, a ``,`` or
    ``..`` between (bash 5.2 braces.c expands it whatever the pieces between hold). Each stretch between two braces
    is read once (a regular expression retried a ``{`` followed by 100,000 commas and no ``}`` at each comma)."""
    i = text.find("{")
    while i >= 0:
        m = _BRACE_OR_CLOSE_RE.search(text, i + 1)
        if m is None:
            return False
        j = m.start()
        if text[j] == "{":
            i = j
            continue
        between = text[i + 1 : j]
        if "," in between or ".." in between:
            return True
        i = text.find("{", j + 1)
    return False


def _braces_or_tilde_unread(word: Word, env: Mapping[str, str], assignment: bool) -> tuple[bool, Word]:
    """For a word with quoted or expanded pieces (a plain word is :func:`_brace_tilde`'s): whether bash would
    brace-expand it (``{a,"b c"}``, ``{$X,b}``, ``${X}{a,b}``, ``a{b,c}\\d``: bash(1) "Brace Expansion" comes first,
    the quotes and ``$`` in the braces kept for the later expansions) or tilde-expand it other than a leading ``~/``
    with HOME known (``~user$X``, ``~"/x"``, ``A=x:~/$X``), which kvlint does not read; and the word with a leading
    ``~/`` made HOME's value. ``assignment``: a command's leading ``NAME=value``, which bash does not brace-expand."""
    parts = word.parts
    skeleton = "".join(p.text if p.kind == "lit" and not p.quoted else "\0" for p in parts)
    if "{" not in skeleton and "~" not in skeleton:
        return False, word
    if not assignment and _holds_brace_expansion(skeleton):
        return True, word
    if _ASSIGN_RE.match(skeleton) and ("=~" in skeleton or ":~" in skeleton):
        return True, word
    if skeleton.startswith("~"):
        home = env.get("HOME")
        first = parts[0]
        if not first.text.startswith("~/") or home is None or _is_unresolved(home):
            return True, word
        parts = [Part(first.kind, home + first.text[1:], first.quoted), *parts[1:]]
        return False, Word(parts, word.start, word.raw, word.unclosed)
    return False, word


def _dash_word(word: Word) -> Word | None:
    """``word`` as a ``sh -c`` script's (bash or dash 0.5.12, ``sh`` in Debian and Ubuntu images, the engines' own)
    is read where the two shells agree: a substring (``${X:1}``, ``${X: -4}``, ``${@:2}``) or an array reference
    (``${A[@]}``, ``${#A[@]}``), which dash refuses ("Bad substitution": the shell exits there), made a reference
    kvlint does not resolve (its text kept); None for a word holding an ANSI-C quote ``$'...'``, which dash reads
    as a ``$`` then a single-quoted string (``$'a\tb'`` is ``$a\tb``): the word as written is not known. (A ``$'``
    inside double quotes, the same in both shells, is left unresolved too.)"""
    if "$'" in word.raw:
        return None
    parts = word.parts
    for p in parts:
        if p.cut is not None or p.kind == "arr" or (p.kind == "count" and p.text != "#"):
            break
    else:
        return word
    kept: list[Part] = []
    for p in parts:
        if p.cut is not None:
            name = p.text if p.kind != "arr" else f"{p.text}[{p.index or '@'}]"
            kept.append(Part("sub", cut_text(name, p.cut), p.quoted))
        elif p.kind == "arr":
            kept.append(Part("sub", "${" + p.text + "[" + (p.index or "@") + "]}", p.quoted))
        elif p.kind == "count" and p.text != "#":
            kept.append(Part("sub", "${#" + p.text + "[@]}", p.quoted))
        else:
            kept.append(p)
    return Word(kept, word.start, word.raw, word.unclosed)


def _brace_sequence(lhs: str, rhs: str, incr: str | None, most: int = _BRACE_WORDS) -> list[str] | None:
    """The words of ``{lhs..rhs[..incr]}`` as bash 5.2 makes them (braces.c, ``expand_seqterm`` and ``mkseq``): from
    lhs to rhs (down when rhs is less) by the step's absolute value (0 taken as 1); two integers, zero-padded to the
    longer term's width when either is written with a leading ``0`` (``{01..10}``, ``{-01..3}``: ``%0*d``), or two
    letters of one case (``{a..e}``); None for what is not read here (a letter and an integer: bash keeps the word
    as written; letters across cases, whose sequence holds punctuation; more than ``most`` words)."""
    step = max(1, abs(int(incr))) if incr is not None else 1
    if lhs.isalpha() != rhs.isalpha() or (lhs.isalpha() and lhs.isupper() != rhs.isupper()):
        return None
    if lhs.isalpha():
        a, b = ord(lhs), ord(rhs)
    else:
        a, b = int(lhs), int(rhs)
    if abs(a - b) // step + 1 > most:
        return None
    numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    if lhs.isalpha():
        return [chr(n) for n in numbers]
    width = 0
    for term in (lhs, rhs):
        digits = term.lstrip("-")
        if len(digits) > 1 and digits[0] == "0":
            width = max(len(lhs), len(rhs))
    return [f"{n:0{width}d}" for n in numbers]


def _brace_tilde(
    raw: str, offset: int, env: Mapping[str, str], budget: _Budget, leading: bool, sh: bool = False
) -> list[ShellArg]:
    """A word of ordinary characters (no quote, ``$`` or backslash) holding ``{`` or ``~``, as bash expands it (bash
    5.2, bash(1) "Brace Expansion", "Tilde Expansion"): ``{a,b}c`` is the words ac and bc (an empty one dropped),
    ``{1..3}`` 1 2 3; then a leading ``~`` (or one after the ``=`` of ``NAME=~/x``) is ``$HOME`` when the shell's
    HOME is known. What kvlint does not expand here (two brace expansions, nested ones, ``~user``, ``~`` without a
    known HOME) is the word as written, unresolved (an assignment's value: unknown). ``leading``: the word is a
    command's leading ``NAME=value``, whose value bash does not brace-expand. ``sh``: the shell may be dash, which
    has no brace expansion (dash(1)) and expands a ``~`` after ``=`` only in an assignment: a word those change is
    unresolved."""
    texts = [raw]
    unknown = False
    assign = _ASSIGN_RE.match(raw) is not None
    if sh and "{" in raw and not (leading and assign):
        # bash and dash differ: the word as written when bash would keep it, else not known
        unknown = _holds_brace_expansion(raw)
    elif "{" in raw and not (leading and assign):
        m = _BRACE_RE.match(raw)
        items: list[str] | None = None
        if m is None:
            unknown = "," in raw or ".." in raw  # several expansions, or nested: not read
        else:
            body = m.group(2)
            seq = _BRACE_SEQUENCE_RE.match(body)
            if "," in body:
                items = body.split(",")
            elif seq is not None:
                # at most the words the budget affords (each at least a character and an argument's overhead):
                # none made once it is spent
                most = min(_BRACE_WORDS, budget.left // (_ARG_OVERHEAD + 1))
                items = _brace_sequence(seq.group(1), seq.group(2), seq.group(3), most)
                unknown = items is None
            elif ".." in body:
                unknown = True  # a sequence expression not read here (``{+1..3}``, ``{1..9999999}``): bash may expand it
            if items is not None:
                if len(items) > _BRACE_WORDS:
                    unknown = True
                else:
                    # the words' characters counted, and afforded, before they are made
                    around = len(m.group(1)) + len(m.group(3))
                    chars = around * len(items) + sum(map(len, items))  # (a sequence's are not its body's)
                    if budget.take(chars + _ARG_OVERHEAD * len(items), chars):
                        texts = [t for t in (m.group(1) + item + m.group(3) for item in items) if t]
                    else:
                        unknown = True
    out: list[ShellArg] = []
    home = env.get("HOME")
    for text in texts:
        at = 0
        if assign and not text.startswith("~"):
            at = text.find("=") + 1
        if text.startswith("~", at):
            end = text.find("/", at)
            prefix = text[at:] if end < 0 else text[at:end]
            if sh and at > 0 and not leading:
                unknown = True  # `x=~/y` as an argument: bash expands the ~, dash does not
            elif prefix == "~" and home is not None and not _is_unresolved(home):
                text = text[:at] + home + text[at + 1 :]
            elif at == 0 or assign:
                unknown = True
        if assign and ":~" in text:
            # `PATH=~/a:~/b`: bash (and dash) expand a ~ after each `:` of an assignment's value
            unknown = True
        out.append(ShellArg(text, offset, None, False, unknown and not leading, False, unknown and leading))
    return out


class _Lookahead(Iterator[Any]):
    """An iterator whose items can be put back (:func:`_function_definition` reads a few tokens ahead)."""

    __slots__ = ("it", "back")

    def __init__(self, it: Iterator[Any]) -> None:
        self.it = it
        self.back: list[Any] = []

    def __next__(self) -> Any:
        return self.back.pop() if self.back else next(self.it)

    def push(self, item: Any) -> None:
        self.back.append(item)


def _raw_of(word: Word | tuple[int, str]) -> str:
    return word[1] if word.__class__ is tuple else word.raw  # type: ignore[union-attr,index,return-value]


def _start_of(word: Word | tuple[int, str]) -> int:
    return word[0] if word.__class__ is tuple else word.start  # type: ignore[union-attr,index,return-value]


def _function_definition(
    cmd: list[Word | tuple[int, str]], tokens: _Lookahead
) -> tuple[str, tuple[int, int], bool] | None:
    """When the command ``cmd`` starts a function definition (bash(1) "Shell Function Definitions": ``NAME () { ...;
    }``, ``function NAME [()] { ...; }``), the tokens of its body read from ``tokens`` (which then goes on after the
    closing ``}``) and ``(NAME, span of the body in the script)``; NAME empty when the body never closes (bash
    refuses the script: nothing of it runs), and whether the body is a subshell (``f() ( ... )``: bash(1) "the
    compound command" of a definition may be ``( list )``, whose commands run in a subshell at each call: read at
    the call, in a subshell). None (``tokens`` as it was) when ``cmd`` is no such definition."""
    first = _raw_of(cmd[0])
    if first == "function" and len(cmd) >= 2:
        name = _raw_of(cmd[1])
        if not _NAME_RE.fullmatch(name):
            return None
        if len(cmd) >= 3:
            if _raw_of(cmd[2]) != "{":
                return None
            return (*_function_body(name, cmd, 2, tokens), False)
        after = next(tokens, None)
        if after == "(":
            close = next(tokens, None)
            if close != ")":
                if close is not None:
                    tokens.push(close)
                tokens.push(after)
                return None
        elif after is not None:
            tokens.push(after)
    elif len(cmd) == 1 and _NAME_RE.fullmatch(first) and first not in _PREFIX_KEYWORDS:
        name = first
        after = next(tokens, None)
        if after != "(":
            if after is not None:
                tokens.push(after)
            return None
        close = next(tokens, None)
        if close != ")":
            if close is not None:
                tokens.push(close)
            tokens.push(after)
            return None
    else:
        return None
    # the body: the next command, past newlines, must open with `{` (or be a subshell's `(`)
    body = next(tokens, None)
    while body == "\n":
        body = next(tokens, None)
    if body == "(":
        return (*_subshell_body(name, tokens), True)
    if body is None or body.__class__ is str or _raw_of(body[0]) != "{":  # type: ignore[index]
        if body is not None:
            tokens.push(body)
        return None
    return (*_function_body(name, body, 0, tokens), False)  # type: ignore[arg-type]


def _subshell_body(name: str, tokens: _Lookahead) -> tuple[str, tuple[int, int]]:
    """The span of the ``( ... )`` body whose ``(`` was just read, from its first word to the end of its last: its
    tokens are read from ``tokens`` to the ``)`` that closes it (a ``(`` or ``)`` of a ``case`` in it not counted, as
    :func:`_read_commands` does not count them). NAME empty when it never closes (bash refuses the script)."""
    depth = 1
    cases = 0
    first = last = -1
    for token in tokens:
        if token.__class__ is str:
            if cases == 0 and token == "(":
                depth += 1
            elif cases == 0 and token == ")":
                depth -= 1
                if depth == 0:
                    return name, (first, last) if first >= 0 else (0, 0)
            continue
        head = _raw_of(token[0])
        if head == "case":
            cases += 1
        elif head == "esac" and cases:
            cases -= 1
        if first < 0:
            first = _start_of(token[0])
        last = _start_of(token[-1]) + len(_raw_of(token[-1]))
    return "", (0, 0)


def _function_body(
    name: str, cmd: list[Word | tuple[int, str]], brace: int, tokens: _Lookahead
) -> tuple[str, tuple[int, int]]:
    """The span of the ``{ ...; }`` body whose ``{`` is ``cmd[brace]``: its commands are read from ``tokens`` to the
    ``}`` that closes it (``{`` and ``}`` are reserved words: they count at the start of a command, after other
    reserved words such as ``then``)."""
    start = _start_of(cmd[brace]) + 1
    depth = 0
    words: list[Word | tuple[int, str]] | None = cmd
    k = brace
    while words is not None:
        while k < len(words):
            raw = _raw_of(words[k])
            if raw not in _PREFIX_KEYWORDS:
                break
            if raw == "{":
                depth += 1
            elif raw == "}":
                depth -= 1
                if depth == 0:
                    return name, (start, _start_of(words[k]))
            k += 1
        words, k = None, 0
        for token in tokens:
            if token.__class__ is not str:
                words = token
                break
    return "", (start, start)


def _declare(words: Sequence[ShellArg], h: int, end: int, shell: _Shell) -> None:
    """``export``/``declare``/``typeset``/``local``/``readonly`` at ``words[h]``, as bash's builtins read their
    words (options first, to ``--`` or the first other word): ``NAME=value`` sets the variable, which ``export``
    and ``-x`` export and ``export -n`` and ``+x`` take out of the environment; a bare NAME is only exported or
    unexported (bash 5.2 ``builtins/setattr.def``, ``declare.def``). ``-f``/``-F`` name functions: nothing."""
    head = words[h].text
    export: bool | None = True if head == "export" else None
    # in a function, `local` and `declare`/`typeset` without -g make the names local to the call (bash(1)
    # "declare": "When used in a function, declare makes each name local, as with the local command, unless the -g
    # option is supplied"); `local` outside one is an error that sets nothing
    frame = shell.frames[-1] if shell.frames and head in ("local", "declare", "typeset") else None
    if head == "local" and frame is None:
        return
    j = h + 1
    while j < end:
        text = words[j].text
        if text == "--":
            j += 1
            break
        if len(text) < 2 or text[0] not in "-+" or "=" in text:
            break
        letters = text[1:]
        if "f" in letters or "F" in letters or "p" in letters and j + 1 == end:
            return
        if "g" in letters and head != "local":
            frame = None
        if head == "export" and text[0] == "-" and "n" in letters:
            export = False
        elif head != "export" and "x" in letters:
            export = text[0] == "-"
        j += 1
    marks, log, local_env = shell.marks, shell.log, shell.vars
    for arg in words[j:end]:
        text = arg.text
        if "=" in text and _ASSIGN_RE.match(text):
            name, _, value = text.partition("=")
            if frame is not None and name not in frame:
                frame[name] = (local_env.get(name), marks.get(name))
            shell.assign(name, arg, value, None if export is None else export or None)
        elif _NAME_RE.fullmatch(text):
            name = text
            if frame is not None and name not in frame:
                # `local A`: a variable of the call's, with no value yet (bash 5 does not give it the outer one's)
                frame[name] = (local_env.get(name), marks.get(name))
                if local_env.pop(name, None) is not None:
                    log.append((name, None, None))
            if export and not marks.get(name, False):
                marks[name] = True
                if name in local_env:
                    log.append((name, local_env[name], arg))
                continue
        else:
            continue
        if export is False:
            marks[name] = False
            log.append((name, None, None))


def _return(shell: _Shell) -> None:
    """A function call's end: the variables it made local get back the value and export mark they had."""
    frame = shell.frames.pop()
    for name, (old, mark) in frame.items():
        if old is None:
            shell.vars.pop(name, None)
        else:
            shell.vars[name] = old
        if mark is None:
            shell.marks.pop(name, None)
        else:
            shell.marks[name] = mark
        shell.log.append(
            (name, old, None) if old is not None and shell.exported(name) else (name, None, None)
        )


def _unset(words: Sequence[ShellArg], shell: _Shell) -> None:
    """bash's ``unset [-v] NAME...``: the variables leave the shell and the environment of later commands
    (``unset -f``: functions, nothing)."""
    j = 1
    while j < len(words) and words[j].text.startswith("-") and len(words[j].text) > 1:
        if words[j].text == "--":
            j += 1
            break
        if "f" in words[j].text:
            return
        j += 1
    for arg in words[j:]:
        name = arg.text
        if _NAME_RE.fullmatch(name):
            if shell.dependents:
                shell._stale(name)
            shell.vars.pop(name, None)
            if _UNKNOWN_MARK + name in shell.vars:
                shell.vars.pop(_UNKNOWN_MARK + name, None)
            shell.marks[name] = False
            shell.log.append((name, None, None))


def _set(words: Sequence[ShellArg], shell: _Shell) -> list[ShellArg] | None:
    """bash's ``set`` turning ``allexport`` on (``-a``, ``-o allexport``) or off (``+a``, ``+o allexport``): with it
    on, every variable assigned is exported (bash(1) ``set -a``: "Each variable or function that is created or
    modified is given the export attribute"). Options are read to ``--``, ``-`` or the first other word; the words
    after them are the new positional parameters, returned (``set -- vllm serve m``; ``set --`` alone clears them;
    ``set -`` alone or options alone leave them: None)."""
    j = 1
    while j < len(words):
        text = words[j].text
        if text == "--" or (text == "-" and j + 1 < len(words)):
            return list(words[j + 1 :])
        if text == "-":
            return None
        if len(text) < 2 or text[0] not in "-+":
            return list(words[j:])
        j += 1
        on = text[0] == "-"
        for k in range(1, len(text)):
            letter = text[k]
            if letter == "a":
                shell.allexport = on
            elif letter == "o":
                # ``-o NAME``: the option's name is the next word (alone, -o lists the options)
                if j < len(words) and words[j].text == "allexport":
                    shell.allexport = on
                j += 1
    return None


def _shift(words: Sequence[ShellArg], positional: Sequence[ShellArg]) -> Sequence[ShellArg]:
    """bash's ``shift [N]`` (``builtins/shift.def``): ``$N+1 ...`` become ``$1 ...`` (N 1 when not given); N greater
    than ``$#`` or not a number is an error that leaves them as they are. ``$0`` stays."""
    count = 1
    if len(words) > 1:
        n = digits(words[1].text)
        if n is None or words[1].unresolved:
            return positional
        count = n
    if not positional or count > len(positional) - 1:
        return positional  # more than there are ($# is len - 1; none at all: not known)
    if isinstance(positional, _Shifted):
        return _Shifted(positional.base, positional.drop + count)
    return _Shifted(positional, count)


class _Shifted(Sequence[ShellArg]):
    """``base`` (``$0 $1 ...``) after ``shift`` dropped ``drop`` of its ``$1 $2 ...``, read through: a copy per
    ``shift`` made 20,000 ``shift`` lines after a ``set --`` of 20,000 words quadratic (1.5 s)."""

    __slots__ = ("base", "drop")

    def __init__(self, base: Sequence[ShellArg], drop: int) -> None:
        self.base, self.drop = base, drop

    def __len__(self) -> int:
        return len(self.base) - self.drop

    @overload
    def __getitem__(self, i: int) -> ShellArg: ...
    @overload
    def __getitem__(self, i: slice) -> list[ShellArg]: ...
    def __getitem__(self, i: int | slice) -> ShellArg | list[ShellArg]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1 or start >= stop:
                return [self[k] for k in range(start, stop, step)]
            head = [self.base[0]] if start == 0 else []
            return head + list(self.base[max(start, 1) + self.drop : stop + self.drop])
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.base[0] if i == 0 else self.base[i + self.drop]


#: The shells that may be dash where bash is not (``/bin/sh`` is dash in Debian and Ubuntu, bash in UBI and Fedora;
#: ``ash`` is busybox's): their scripts' words that bash and dash expand apart are unresolved (:attr:`_Shell.sh`).
MAYBE_DASH = frozenset({"sh", "ash", "dash"})
#: The shells whose ``-c SCRIPT`` a script's command can start (:func:`_nested_script`).
_NESTED_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh"})


def _nested_script(words: Sequence[ShellArg]) -> int | None:
    """The index of SCRIPT when ``words`` are ``sh [-opts] -c [--] SCRIPT [$0 $1 ...]`` (``bash -lc``, ``bash -e
    -c``, ``bash -o pipefail -c``: see :func:`script_after_shell_options`), else None."""
    if len(words) < 3 or words[0].text[words[0].text.rfind("/") + 1 :] not in _NESTED_SHELLS:
        return None
    return script_after_shell_options(words, 1)


def shell_allexport(words: Sequence[Any], start: int, end: int) -> bool:
    """Whether the invocation options ``words[start:end]`` of a shell (each word has ``.text``; up to its script)
    turn ``allexport`` on: ``-a`` in a cluster (``bash -ac``), ``-o allexport``; ``+a``/``+o allexport`` turn it off
    (bash(1): the options of ``set`` are options of the invocation)."""
    on = False
    j = start
    while j < end:
        text = words[j].text
        j += 1
        if text == "--" or len(text) < 2 or text[0] not in "-+" or text.startswith("--"):
            if text in _SHELL_LONG_VALUED:
                j += 1
            continue
        for letter in text[1:]:
            if letter == "a":
                on = text[0] == "-"
            elif letter in "oO":
                if letter == "o" and j < end and words[j].text == "allexport":
                    on = text[0] == "-"
                j += 1
    return on


#: bash's long invocation options that take the next word (bash(1) "--init-file file", "--rcfile file")
_SHELL_LONG_VALUED = frozenset({"--rcfile", "--init-file"})


def script_after_shell_options(words: Sequence[Any], j: int) -> int | None:
    """The index of SCRIPT in a shell's invocation whose options start at ``words[j]`` (each word has ``.text``):
    ``[-opts] -c [--] SCRIPT``, the options as bash(1) reads its invocation: clusters of single letters after ``-``
    or ``+`` (``-lc``, ``-ec``, ``+x``), ``-o``/``+o`` and ``-O``/``+O`` taking the next word as the name of the
    option they set (``bash -o pipefail -c``, ``-eo pipefail``), ``--rcfile``/``--init-file`` the next word, other
    long options alone; the script is the word after the cluster holding ``c`` (after ``--`` when one follows).
    None when no ``-c`` comes before the first word that is not an option, or nothing follows it."""
    end = len(words)
    while j < end:
        text = words[j].text
        if text == "--" or len(text) < 2 or text[0] not in "-+":
            return None
        j += 1
        if text.startswith("--"):
            if text in _SHELL_LONG_VALUED:
                j += 1
            continue
        if text[0] == "-" and "c" in text[1:]:
            if j < end and words[j].text == "--":
                j += 1
            return j if j < end else None
        if text[-1] in "oO":
            j += 1  # the option's name: -o pipefail, +O extglob
    return None


_PLACEHOLDER_RE = re.compile(r"\{\{[_\n]*\}\}")


_NOT_NEWLINE = re.compile(r"[^\n]")


def _placeholder(action: str) -> str:
    """The stand-in :func:`commands` lexes instead of the template action ``action`` (same length and
    line breaks)."""
    return "{{" + _NOT_NEWLINE.sub("_", action[2:-2]) + "}}"


def _template_shapes(script: str) -> dict[str, tuple[list[int], list[str]]]:
    """The Go/Helm template actions of ``script`` by placeholder shape: their offsets and texts, in script
    order (built once per script; empty when it holds none)."""
    by_shape: dict[str, tuple[list[int], list[str]]] = {}
    if "{{" not in script:
        return by_shape
    for start, end in delimited_spans(script):
        original = script[start:end]
        starts, originals = by_shape.setdefault(_placeholder(original), ([], []))
        starts.append(start)
        originals.append(original)
    return by_shape


def _with_placeholders(script: str) -> str:
    """``script`` with each Go/Helm template action ``{{ ... }}`` (the first ``}}`` after its ``{{``, line
    breaks included: :func:`kvlint.spans.delimited_spans`, linear where a lazy regex was quadratic on
    unclosed ``{{``) replaced by its :func:`_placeholder`."""
    parts: list[str] = []
    pos = 0
    for start, end in delimited_spans(script):
        parts.append(script[pos:start])
        parts.append(_placeholder(script[start:end]))
        pos = end
    parts.append(script[pos:])
    return "".join(parts)


def _restore_templates(words: list[ShellArg], by_shape: Mapping[str, tuple[list[int], list[str]]]) -> None:
    """Put the Go/Helm template actions back into words that hold their placeholders (``{{___}}``, which
    keep offsets while the script is lexed), so messages quote what the manifest says: the k-th placeholder
    of a shape in a word is the k-th action of that shape at or after the word's offset (``by_shape``:
    :func:`_template_shapes`). Linear in the words' text (a script of many actions and words is not searched
    word by action)."""
    for arg in words:
        if "{{" in arg.text and arg.offset is not None:
            arg.text = _restore_word(arg.text, arg.offset, by_shape)


def _restore_word(text: str, offset: int, by_shape: Mapping[str, tuple[list[int], list[str]]]) -> str:
    used: dict[str, int] = {}

    def restore(m: re.Match[str]) -> str:
        shape = m.group()
        starts, originals = by_shape.get(shape, ([], []))
        k = used.get(shape)
        if k is None:
            k = bisect.bisect_left(starts, offset)
        if k >= len(starts):
            return shape
        used[shape] = k + 1
        return originals[k]

    return _PLACEHOLDER_RE.sub(restore, text)
