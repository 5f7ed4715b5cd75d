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

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from kvlint.source import Loc

__all__ = ["k8s_expand", "ShellArg", "lex", "commands", "Part", "Word", "UNRESOLVED_RE"]

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: A token still holding an expansion kvlint could not resolve (``$(X)``, ``${X}``, ``$X``, backticks).
UNRESOLVED_RE = re.compile(r"\$\(|\$\{|\$[A-Za-z_@*0-9]|`|\{\{|\}\}")


def k8s_expand(text: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """Expand Kubernetes ``$(VAR)`` references in ``text`` from ``env``.

    Returns ``(expanded, changed)`` where ``changed`` says a variable was substituted. ``$$`` becomes ``$``;
    ``$(NAME)`` with NAME not in ``env`` stays ``$(NAME)``; a ``$`` followed by anything else is kept.
    Mirrors Kubernetes ``expansion.Expand`` (third_party/forked/golang/expansion/expand.go). Never raises.
    """
    if "$" not in text:
        return text, False
    out: list[str] = []
    changed = False
    i, n = 0, len(text)
    while i < n:
        dollar = text.find("$", i)
        if dollar < 0 or dollar + 1 >= n:  # no (expandable) ``$`` left: the rest is literal
            out.append(text[i:])
            break
        if dollar > i:
            out.append(text[i:dollar])
            i = dollar
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt == "(":
            close = text.find(")", i + 2)
            if close < 0:
                out.append(text[i:])
                break
            name = text[i + 2 : close]
            if name in env:
                out.append(env[name])
                changed = True
            else:
                out.append(text[i : close + 1])
            i = close + 1
            continue
        out.append("$" + nxt)
        i += 2
    return "".join(out), changed


@dataclass
class Part:
    """A piece of a shell word: ``lit`` text, ``var`` (``$NAME``/``${NAME[:-default]}``), ``at``
    (``$@``/``$*``), ``pos`` (``$1``), ``sub`` (command/arithmetic substitution, never resolved)."""

    kind: str
    text: str
    quoted: bool = False
    default: str | None = None


@dataclass
class Word:
    """An unexpanded shell word with the offset of its first character in the script."""

    parts: list[Part]
    start: int
    raw: str


@dataclass
class ShellArg:
    """An expanded word: its text, where it came from, and whether expansion touched it.

    ``offset`` is the position in the script (None for words taken from the positional parameters, which
    carry their own ``loc``); ``from_env`` says a variable was substituted; ``unresolved`` that some
    expansion could not be resolved statically (the text then keeps the ``$...`` reference);
    ``substituted`` that it holds a command or arithmetic substitution (``$(...)``, backticks), whose output
    is unknown.
    """

    text: str
    offset: int | None = None
    loc: Loc | None = None
    from_env: bool = False
    unresolved: bool = False
    quoted: bool = False
    substituted: bool = False


_OPS = ("&&", "||", ";;", ";", "|", "&", "\n", "(", ")")
_OP_CHARS = frozenset("&|;\n()")
# Characters :func:`lex` treats one by one; any other character extends the current word as literal text.
_PLAIN_RUN = re.compile(r"[^ \t\r\n<>&|;()\\'\"$`]+")
# Inside double quotes only ``"``, ``\``, ``$`` and backticks are special.
_DQ_RUN = re.compile(r'[^"\\$`]+')


def _scan_balanced(s: str, i: int, open_c: str, close_c: str) -> int:
    """Index just past the bracket matching ``s[i]`` (tolerant: end of string if unbalanced)."""
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
        elif c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


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
            return Part("var", m.group(), quoted, default=default.strip("\"'")), end
        if inner in ("@", "*"):
            return Part("at", inner, quoted), end
        if inner.isdigit():
            return Part("pos", inner, quoted), end
        return Part("sub", s[i:end], quoted), end
    if c in "@*":
        return Part("at", c, quoted), i + 2
    if c.isdigit():
        return Part("pos", c, quoted), i + 2
    m = _NAME_RE.match(s, i + 1)
    if m:
        return Part("var", m.group(), quoted), m.end()
    if c in "#?$!-":
        return Part("sub", s[i : i + 2], quoted), i + 2
    return Part("lit", "$", quoted), i + 1


def lex(script: str) -> list[Word | str]:
    """Tokenise a shell script into words and operator strings (``&&``, ``;``, ``\\n``, ``|`` ...).

    Handles single/double quotes, backslash escapes, ``\\``-newline continuations, ``#`` comments,
    ``$VAR``/``${VAR}``/``$(...)``/``$((...))``/backticks. Tolerant: unbalanced quotes run to the end of
    the script. Never raises.
    """
    out: list[Word | str] = []
    i, n = 0, len(script)
    parts: list[Part] = []
    start = -1

    def flush(end: int) -> None:
        nonlocal parts, start
        if start >= 0:
            out.append(Word(parts, start, script[start:end]))
        parts, start = [], -1

    def lit(text: str, quoted: bool) -> None:
        if parts and parts[-1].kind == "lit" and parts[-1].quoted == quoted:
            parts[-1].text += text
        else:
            parts.append(Part("lit", text, quoted))

    while i < n:
        c = script[i]
        if c == "\\" and i + 1 < n and script[i + 1] == "\n":
            i += 2
            continue
        if c in " \t\r":
            flush(i)
            i += 1
            continue
        if c == "#" and start < 0:
            while i < n and script[i] != "\n":
                i += 1
            continue
        if c in "<>":
            # redirection operator: keep ``2>&1``, ``>>log``, ``<&0`` in one word (dropped later)
            if start < 0:
                start = i
            j = i + 1
            if j < n and script[j] in "<>&":
                j += 1
            if script[j - 1] == "&":
                while j < n and (script[j].isdigit() or script[j] == "-"):
                    j += 1
            lit(script[i:j], False)
            i = j
            continue
        if c == "(" and start < 0 and script.startswith("((", i):
            # an arithmetic command ``(( expr ))``: one opaque word (its ``<``/``>`` are not redirections)
            end = script.find("))", i + 2)
            end = n if end < 0 else end + 2
            out.append(Word([Part("sub", script[i:end])], i, script[i:end]))
            i = end
            continue
        if c in _OP_CHARS:
            # longest operator first: ``&&``, ``||``, ``;;``, then the single characters of _OPS
            op = c + c if c in "&|;" and i + 1 < n and script[i + 1] == c else c
            flush(i)
            out.append(op)
            i += len(op)
            continue
        if start < 0:
            start = i
        if c == "\\":
            if i + 1 < n:
                lit(script[i + 1], True)
            i += 2
        elif c == "'":
            end = script.find("'", i + 1)
            end = n if end < 0 else end
            lit(script[i + 1 : end], True)
            parts.append(Part("lit", "", True))  # marks an explicit (possibly empty) quoted piece
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and script[i] != '"':
                d = script[i]
                if d == "\\" and i + 1 < n:
                    nxt = script[i + 1]
                    if nxt == "\n":
                        i += 2
                        continue
                    lit(nxt if nxt in '$`"\\' else "\\" + nxt, True)
                    i += 2
                elif d == "$":
                    part, i = _dollar(script, i, True)
                    parts.append(part)
                elif d == "`":
                    end = script.find("`", i + 1)
                    end = n if end < 0 else end + 1
                    parts.append(Part("sub", script[i:end], True))
                    i = end
                else:
                    run = _DQ_RUN.match(script, i)  # None only for a backslash ending the script
                    end = run.end() if run else i + 1
                    lit(script[i:end], True)
                    i = end
            parts.append(Part("lit", "", True))
            i += 1
        elif c == "$":
            part, i = _dollar(script, i, False)
            parts.append(part)
        elif c == "`":
            end = script.find("`", i + 1)
            end = n if end < 0 else end + 1
            parts.append(Part("sub", script[i:end], False))
            i = end
        else:
            # a run of ordinary characters (a ``#`` inside a word is ordinary) in one step
            end = _PLAIN_RUN.match(script, i).end()  # type: ignore[union-attr]
            lit(script[i:end], False)
            i = end
    flush(n)
    return out


_REDIRECT_RE = re.compile(r"^\d*(>>?|<<?|>&|&>>?)(.*)$")


def _expand(
    word: Word, env: Mapping[str, str], positional: Sequence[ShellArg], *, assign: bool = False
) -> list[ShellArg]:
    """Expand one word: variables from ``env``, ``$@`` from ``positional``, with field splitting of
    unquoted variable values. Unknown variables are kept literally and flagged ``unresolved``.

    ``assign``: the word is a ``NAME=value`` assignment, which the shell expands without field splitting
    (``"$@"`` joins the parameters with spaces): the result is one field."""
    if assign:
        parts = _expand(word, env, positional)
        if len(parts) <= 1:
            return parts
        joined = ShellArg(
            " ".join(p.text for p in parts),
            word.start,
            None,
            any(p.from_env for p in parts),
            any(p.unresolved for p in parts),
            True,
            any(p.substituted for p in parts),
        )
        return [joined]
    fields: list[ShellArg] = []
    cur: list[str] = []
    from_env = unresolved = substituted = False
    quoted_any = any(p.quoted for p in word.parts)
    have_cur = False

    def push() -> None:
        nonlocal cur, from_env, unresolved, have_cur, substituted
        if have_cur:
            fields.append(
                ShellArg("".join(cur), word.start, None, from_env, unresolved, quoted_any, substituted)
            )
        cur, from_env, unresolved, have_cur, substituted = [], False, False, False, False

    has_at = any(p.kind == "at" for p in word.parts)
    for p in word.parts:
        if p.kind == "lit":
            if has_at and not p.text:
                continue
            cur.append(p.text)
            have_cur = have_cur or bool(p.text) or p.quoted
        elif p.kind == "var":
            if p.text in env or p.default is not None:
                val = env.get(p.text) or (p.default or "")
                from_env = True
                if p.quoted:
                    cur.append(val)
                    have_cur = True
                else:
                    pieces = val.split()
                    for k, piece in enumerate(pieces):
                        if k > 0:
                            push()
                            from_env = True
                        cur.append(piece)
                        have_cur = True
            else:
                cur.append("${" + p.text + "}" if p.quoted or len(word.parts) > 1 else "$" + p.text)
                if word.raw.startswith("${") or "${" + p.text in word.raw:
                    cur[-1] = "${" + p.text + "}"
                unresolved = have_cur = True
        elif p.kind == "at":
            if cur and have_cur:
                push()
            for arg in positional[1:]:
                fields.append(arg)
        elif p.kind == "pos":
            idx = int(p.text)
            if idx < len(positional):
                arg = positional[idx]
                if not cur and not have_cur:
                    fields.append(arg)
                    continue
                cur.append(arg.text)
                have_cur = True
            else:
                cur.append("$" + p.text)
                unresolved = have_cur = True
        else:  # sub
            value = arithmetic(p.text, env)
            if value is not None:
                cur.append(value)
                from_env = have_cur = True
                continue
            cur.append(p.text)
            unresolved = have_cur = substituted = True
    push()
    return fields


_ARITH_RE = re.compile(r"^\$\(\((.*)\)\)$", re.S)
_ARITH_TOKEN = re.compile(r"\s*(?:(\d+)|\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?|([-+*/%()]))")


def arithmetic(text: str, env: Mapping[str, str]) -> str | None:
    """The value of a shell arithmetic expansion ``$(( ... ))`` of integers and variables with ``+ - * / %``
    and parentheses (``$((LWS_GROUP_SIZE * DP_SIZE_LOCAL))``), when every variable is a known integer; else
    None. Division truncates toward zero, as in the shell."""
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
        if number is not None:
            tokens.append(int(number))
        elif name is not None:
            value = env.get(name, "").strip()
            if not re.fullmatch(r"-?\d+", value):
                return None
            tokens.append(int(value))
        else:
            tokens.append(op)
        pos = t.end()
    try:
        result, rest = _arith_sum(tokens)
    except (IndexError, ZeroDivisionError, TypeError):
        return None
    return None if rest else str(result)


def _arith_sum(ts: list[int | str]) -> tuple[int, list[int | str]]:
    value, ts = _arith_product(ts)
    while ts and ts[0] in ("+", "-"):
        op, (rhs, ts) = ts[0], _arith_product(ts[1:])
        value = value + rhs if op == "+" else value - rhs
    return value, ts


def _arith_product(ts: list[int | str]) -> tuple[int, list[int | str]]:
    value, ts = _arith_atom(ts)
    while ts and ts[0] in ("*", "/", "%"):
        op, (rhs, ts) = ts[0], _arith_atom(ts[1:])
        if op == "*":
            value *= rhs
        else:
            q = abs(value) // abs(rhs) * (1 if (value >= 0) == (rhs >= 0) else -1)
            value = q if op == "/" else value - q * rhs
    return value, ts


def _arith_atom(ts: list[int | str]) -> tuple[int, list[int | str]]:
    head = ts[0]
    if head == "(":
        value, rest = _arith_sum(ts[1:])
        if not rest or rest[0] != ")":
            raise IndexError("unbalanced")
        return value, rest[1:]
    if head == "-":
        value, rest = _arith_atom(ts[1:])
        return -value, rest
    if isinstance(head, int):
        return head, ts[1:]
    raise TypeError(head)


_TEMPLATE_RE = re.compile(r"\{\{.*?\}\}", re.S)
_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "{", "}", "!", "time", "fi", "done"}
_WRAPPERS = {"exec", "nohup", "command", "builtin", "sudo", "stdbuf", "numactl", "taskset"}


def commands(
    script: str,
    env: Mapping[str, str],
    positional: Sequence[ShellArg] = (),
    *,
    _depth: int = 0,
    _eval_offset: int | None = None,
) -> Iterator[list[ShellArg]]:
    """Yield each simple command of ``script`` as expanded words, wrappers stripped.

    Leading ``NAME=value`` assignments, ``export``/``declare`` assignments and wrappers (``exec``,
    ``nohup``, ``env [-i] [A=b]``, ``then``/``do`` keywords) are removed; assignments are remembered for
    later ``$NAME`` expansion in the same script. ``eval STRING`` is re-read as a script (its words then
    point at the ``eval`` word). Redirections (``2>&1``, ``> log``) are dropped. ``positional`` are ``$0``,
    ``$1``... (``sh -c SCRIPT $0 $1 ...``). Never raises.
    """
    local_env = dict(env)
    cmd: list[Word] = []
    # Go/Helm template actions become one opaque word of the same length (offsets and lines preserved)
    templates = [(m.start(), m.group()) for m in _TEMPLATE_RE.finditer(script)]
    script = _TEMPLATE_RE.sub(lambda m: "{{" + re.sub(r"[^\n]", "_", m.group()[2:-2]) + "}}", script)
    tokens = lex(script)
    tokens.append(";")
    for tok in tokens:
        if isinstance(tok, Word):
            cmd.append(tok)
            continue
        if not cmd:
            continue
        words: list[ShellArg] = []
        leading, declaring = True, False
        for word in cmd:
            is_assign = bool(_ASSIGN_RE.match(word.raw))
            words.extend(_expand(word, local_env, positional, assign=is_assign and (leading or declaring)))
            if leading and not is_assign:
                leading = False
                declaring = word.raw in ("export", "declare", "local", "readonly", "typeset")
        cmd = []
        if templates:
            _restore_templates(words, templates)
        if _eval_offset is not None:
            for arg in words:
                if arg.offset is not None:
                    arg.offset = _eval_offset
        # drop redirections
        cleaned: list[ShellArg] = []
        skip = False
        for arg in words:
            if skip:
                skip = False
                continue
            m = _REDIRECT_RE.match(arg.text) if not arg.quoted else None
            if m:
                if not m.group(2):
                    skip = True
                continue
            cleaned.append(arg)
        words = cleaned
        while words:
            head = words[0].text
            if head in _PREFIX_KEYWORDS or head in _WRAPPERS:
                words = words[1:]
            elif _ASSIGN_RE.match(head):
                name, _, val = head.partition("=")
                if words[0].substituted:
                    local_env.pop(name, None)  # the output of a command: unknown
                else:
                    local_env[name] = val  # unresolved variables inside stay as written
                words = words[1:]
            elif head in ("export", "declare", "local", "readonly", "typeset"):
                for arg in words[1:]:
                    if _ASSIGN_RE.match(arg.text):
                        name, _, val = arg.text.partition("=")
                        if arg.substituted:
                            local_env.pop(name, None)
                        else:
                            local_env[name] = val
                words = []
            elif head == "env":
                words = words[1:]
                while words and (words[0].text.startswith("-") or _ASSIGN_RE.match(words[0].text)):
                    if _ASSIGN_RE.match(words[0].text):
                        name, _, val = words[0].text.partition("=")
                        local_env[name] = val
                    words = words[1:]
            else:
                break
        if not words:
            continue
        if words[0].text == "eval" and _depth < 3:
            inner = " ".join(w.text for w in words[1:])
            off = words[0].offset
            yield from commands(inner, local_env, positional, _depth=_depth + 1, _eval_offset=off)
            continue
        yield words


def _restore_templates(words: list[ShellArg], templates: Sequence[tuple[int, str]]) -> None:
    """Put the Go/Helm template actions back into words that hold their placeholders (``{{___}}``, which
    keep offsets while the script is lexed), so messages quote what the manifest says."""
    for arg in words:
        if "{{" not in arg.text or arg.offset is None:
            continue
        text = arg.text
        for start, original in templates:
            if start < arg.offset:
                continue
            placeholder = "{{" + re.sub(r"[^\n]", "_", original[2:-2]) + "}}"
            if placeholder in text:
                text = text.replace(placeholder, original, 1)
            if "{{_" not in text:
                break
        arg.text = text
