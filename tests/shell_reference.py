# The shell reader of kvlint/engines/shell.py as it was before the issue-19 lexer rewrite (kvlint at b004e88):
# the character-class lexer (its general steps, without the one-step plain-word path), the general word
# expansion and the command splitter, kept as the test oracle of tests/test_shell_oracle.py. Straightforward
# and slow on purpose (a literal piece grows by string concatenation, the command prefix is skipped by slicing,
# each unresolved variable searches the word): only run it on short scripts. Not part of the package; do not
# optimise it.
# ruff: noqa
"""Reference shell reader (see the comment above)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping, Sequence

from kvlint.engines.shell import (
    _SHELL_HOOK_NAMES,
    _SHELL_HOOK_RE,
    _default_text,
    ansi_c_text,
    cut_text,
    Part,
    ShellArg,
    Word,
    _Budget,
    _restore_templates,
    _template_shapes,
    _with_placeholders,
    arithmetic,
)
from kvlint.values import digits

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_OPS = ("&&", "||", ";;", ";", "|", "&", "\n", "(", ")")
_OP_CHARS = frozenset("&|;\n()")
# Characters :func:`lex` treats one by one; any other character extends the current word as literal text.
_PLAIN_RUN = re.compile(r"[^ \t\r\n<>&|;()\\'\"$`]+")
_BLANK_RUN = re.compile(r"[ \t\r]+")
# A whole word of ordinary characters: the run, then a blank, a newline, an operator character other than
# ``(`` (after a word, ``((`` is two operators; at the start of one, an arithmetic command) or the end.
_PLAIN_WORD = re.compile(r"[^ \t\r\n<>&|;()\\'\"$`]+(?=[ \t\r\n&|;)]|\Z)")
# Inside double quotes only ``"``, ``\``, ``$`` and backticks are special.
_DQ_RUN = re.compile(r'[^"\\$`]+')


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
            # bash's $'...': a backslash escapes the next character, a ' included
            i += 2
            while i < n and s[i] != "'":
                i += 2 if s[i] == "\\" else 1
            i += 1
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


def _unread(default: str, whole: bool) -> bool:
    """review53D: a default holding an expansion ($, a backtick; not one '...' string, not a closed $'...' alone) is
    not read."""
    return ("$" in default or "`" in default) and not (
        (len(default) >= 2 and default[0] == default[-1] == "'" and "'" not in default[1:-1])
        or (default.startswith("$'") and whole and "$" not in default[1:] and "`" not in default)
    )


def _dollar(s: str, i: int, quoted: bool) -> tuple[Part, int]:
    """Parse a ``$`` expansion starting at ``s[i] == '$'``; returns the part and the next index."""
    n = len(s)
    if i + 1 >= n:
        return Part("lit", "$", quoted), i + 1
    c = s[i + 1]
    if c == "(":
        end = _scan_balanced_walk(s, i + 1, "(", ")")
        return Part("sub", s[i:end], quoted), end
    if c == "{":
        end = _scan_balanced_walk(s, i + 1, "{", "}")
        inner = s[i + 2 : end - 1]
        m = _NAME_RE.match(inner)
        if m and m.end() == len(inner):
            return Part("var", inner, quoted), end
        if m and inner[m.end() :].startswith((":-", "-")):
            rest = inner[m.end() :]
            default = rest[2:] if rest.startswith(":-") else rest[1:]
            # one quoted string is one word, its quotes removed ($'...' escapes decoded)
            d, whole = default, False
            if len(d) >= 2 and d[0] == d[-1] and d[0] in "'\"" and d[0] not in d[1:-1]:
                if d[0] == "'" or "\\" not in d:
                    d, whole = d[1:-1], True
            elif d.startswith("$'") and d.endswith("'") and len(d) >= 3:
                body = d[2:-1]
                k, closed = 0, True
                while k < len(body):
                    if body[k] == "\\":
                        k += 2
                        if k > len(body):
                            closed = False  # the last ' was escaped
                    elif body[k] == "'":
                        closed = False
                        break
                    else:
                        k += 1
                if closed:
                    d, whole = ansi_c_text(body), True
            if not whole:
                d = d.strip("\"'")
            # ${X-d} (no colon) tests only for unset (engines48; bash(1) Parameter Expansion)
            colon = rest.startswith(":-")
            unread = _unread(default, whole)
            return Part(
                "var", m.group(), quoted, default=d, default_quoted=whole, colon=colon, default_unread=unread
            ), end
        if inner in ("@", "*"):
            return Part("at", inner, quoted), end
        if inner.isascii() and inner.isdigit():
            return Part("pos", inner, quoted), end
        # shell51: ${#}, ${1:-d}/${1-d}, ${@:2}/${@: -1}/${*:1:2}, arrays (${A[@]}, ${#A[@]}: never resolved here)
        if inner == "#":
            return Part("count", "#", quoted), end
        arr = re.match(r"(#?)([A-Za-z_][A-Za-z0-9_]*)\[(@|\*|[0-9]{1,6})\]\Z", inner)
        if arr and arr.group(1) and arr.group(3) in "@*":
            return Part("count", arr.group(2), quoted), end
        if arr and not arr.group(1):
            return Part("arr", arr.group(2), quoted, index=arr.group(3)), end
        d = re.match(r"([0-9]+)(:?)-(.*)\Z", inner, re.S)
        if d:
            text, whole = _default_text(d.group(3))
            return Part(
                "pos",
                d.group(1),
                quoted,
                default=text,
                default_quoted=whole,
                colon=bool(d.group(2)),
                default_unread=_unread(d.group(3), whole),
            ), end
        c = re.match(
            r"([@*]):(?:[ \t]+(-?[0-9]{1,9})|([0-9]{1,9}))[ \t]*(?::[ \t]*([0-9]{1,9})[ \t]*)?\Z", inner
        )
        if c:
            length = None if c.group(4) is None else int(c.group(4))
            return Part("at", c.group(1), quoted, cut=(int(c.group(2) or c.group(3)), length)), end
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
        return Part("count", "#", quoted), i + 2  # shell51
    if c in "?$!-":
        return Part("sub", s[i : i + 2], quoted), i + 2
    return Part("lit", "$", quoted), i + 1


def lex(script: str, bash: bool = False) -> list[Word | str]:
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
            if start >= 0:  # flush(i), in line: the commonest end of a word
                out.append(Word(parts, start, script[start:i]))
                parts, start = [], -1
            i = _BLANK_RUN.match(script, i).end()  # type: ignore[union-attr]  # the run of blanks at once
            continue
        if c == "#" and start < 0:
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "<>":
            # redirection operator: keep ``2>&1``, ``>>log``, ``<&0`` in one word (dropped later); it ends the
            # word before it unless that is an io-number (unquoted digits: ``2>&1``), as ``cat<<EOF``
            if start >= 0 and not (script[start:i].isascii() and script[start:i].isdigit()):
                flush(i)
            if start < 0:
                start = i
            j = i + 1
            if j < n and script[j] in "<>&":
                j += 1
            elif j < n and script[i : j + 1] == ">|":
                j += 1  # POSIX's CLOBBER operator (shell54)
            if script[i:j] == "<<" and j < n and script[j] == "<":
                j += 1  # a here-string's ``<<<``
            if script[j - 1] == "&":
                while j < n and script[j] in "0123456789-":
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
        if bash and script.startswith("&>", i):
            # shell55: bash's &> and &>> redirect (a digit before it is a word of its own, not an io-number)
            flush(i)
            start = i
            j = i + 3 if script.startswith("&>>", i) else i + 2
            lit(script[i:j], False)
            i = j
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
        elif c == "$" and script.startswith("$'", i):
            # bash's ANSI-C quoting (added after b004e88, as kvlint.engines.shell reads it): a backslash escapes
            # the next character, a ``'`` included
            j = i + 2
            while j < n and script[j] != "'":
                j += 2 if script[j] == "\\" else 1
            j = min(j, n)
            lit(ansi_c_text(script[i + 2 : j]), True)
            parts.append(Part("lit", "", True))
            i = j + 1
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


_REDIRECT_RE = re.compile(r"^\d*(>\||<>|>&|<&|&>>?|>>?|<<?)(.*)$")


def _expand(
    word: Word,
    env: Mapping[str, str],
    positional: Sequence[ShellArg],
    *,
    assign: bool = False,
    budget: _Budget | None = None,
) -> list[ShellArg]:
    """Expand one word: variables from ``env``, ``$@`` from ``positional``, with field splitting of
    unquoted variable values. Unknown variables are kept literally and flagged ``unresolved``, and so are
    those whose text ``budget`` cannot afford (:class:`_Budget`).

    ``assign``: the word is a ``NAME=value`` assignment, which the shell expands without field splitting
    (``"$@"`` joins the parameters with spaces): the result is one field.
    """
    if budget is None:
        budget = _Budget()
    if assign:
        parts = _expand(word, env, positional, budget=budget)
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
    # shell50: the word as fields of pieces (kind, text, parameter, from_env, unresolved, substituted, makes the
    # field), a new field at each split; then each field joined (a field of one parameter alone is that parameter)
    quoted_any = any(p.quoted for p in word.parts)
    has_at = any(p.kind == "at" and p.text == "@" and p.quoted for p in word.parts)
    split: list[list[tuple[str, str, Any, bool, bool, bool, bool]]] = [[]]
    # shell51: whether these are all the positional parameters (none: not known; an unquoted word not expanded may
    # have been several)
    known = bool(positional) and not any(a.unresolved and not a.quoted for a in list(positional)[1:])

    def piece(
        kind: str,
        text: str,
        arg: Any = None,
        env_: bool = False,
        unres: bool = False,
        sub: bool = False,
        makes: bool = True,
    ) -> None:
        split[-1].append((kind, text, arg, env_, unres, sub, makes))

    for p in word.parts:
        if p.kind == "lit":
            if has_at and not p.text:
                continue
            piece("lit", p.text, makes=bool(p.text) or p.quoted)
        elif p.kind == "var":
            own = env.get(p.text)
            by_default = p.default is not None and (own is None or (p.colon and not own))
            if by_default and (p.default_unread or (own is None and ("?" + p.text in env or "?*" in env))):
                # review53D: set to a value not known (marked ?NAME): the default is not taken
                piece("other", "${" + p.text + (":-" if p.colon else "-") + p.default + "}", unres=True)  # type: ignore[operator]
                continue
            val = p.default if by_default else own
            if val is not None and budget.take(len(val)):
                if p.quoted or (p.default_quoted and by_default):
                    piece("var", val, env_=True)
                else:
                    piece("var", "", env_=True, makes=False)
                    # shell50: split at IFS blanks, a blank at either end ending the field
                    for k, text in enumerate(re.split(r"[ \t\n]+", val)):
                        if k > 0:
                            split.append([])
                            piece("var", "", env_=True, makes=False)
                        if text:
                            piece("var", text, env_=True)
            else:
                text = "${" + p.text + "}" if p.quoted or len(word.parts) > 1 else "$" + p.text
                if word.raw.startswith("${") or "${" + p.text in word.raw:
                    text = "${" + p.text + "}"
                piece("var", text, unres=True)
        elif p.kind == "arr":
            piece("other", "${" + p.text + "[" + (p.index or "@") + "]}", unres=True)
        elif p.kind == "count" and p.text != "#":
            piece("other", "${#" + p.text + "[@]}", unres=True)
        elif p.kind == "count":
            # shell51: $# when every parameter is known
            if known:
                piece("other", str(len(positional) - 1), env_=True)
            else:
                piece("other", "$#", unres=True)
        elif p.kind in ("at", "pos"):
            idx = digits(p.text) if p.kind == "pos" else None
            if p.kind == "pos":
                params = [positional[idx]] if idx is not None and idx < len(positional) else None
                if params is None and known:
                    params = []  # shell51: beyond $#, unset
                if (
                    p.default is not None
                    and params is not None
                    and (not params or (p.colon and not params[0].text))
                ):
                    val = p.default
                    if p.default_unread or not budget.take(len(val)):
                        piece("other", "${" + p.text + (":-" if p.colon else "-") + val + "}", unres=True)
                    elif p.quoted or p.default_quoted:
                        piece("var", val, env_=True)
                    else:
                        piece("var", "", env_=True, makes=False)
                        for k, text in enumerate(re.split(r"[ \t\n]+", val)):
                            if k > 0:
                                split.append([])
                                piece("var", "", env_=True, makes=False)
                            if text:
                                piece("var", text, env_=True)
                    continue
            elif p.cut is not None:
                params = None
                if known:
                    first = p.cut[0] if p.cut[0] >= 0 else len(positional) + p.cut[0]
                    if first >= 0:
                        params = (
                            list(positional)[first:]
                            if p.cut[1] is None
                            else list(positional)[first : first + p.cut[1]]
                        )
            else:
                params = list(positional[1:])
            if params is None or not budget.take(sum(len(a.text) for a in params)):
                if p.default is not None:
                    piece("other", "${" + p.text + (":-" if p.colon else "-") + p.default + "}", unres=True)
                elif p.cut is not None:
                    piece(
                        "other",
                        "${" + p.text + ":" + ":".join(str(c) for c in p.cut if c is not None) + "}",
                        unres=True,
                    )
                else:
                    piece("other", "$" + p.text, unres=True)
            elif p.quoted and len(params) == 1 and (p.kind == "pos" or p.text == "*"):
                piece(
                    "param",
                    params[0].text,
                    params[0],
                    params[0].from_env,
                    params[0].unresolved,
                    params[0].substituted,
                )
            elif p.quoted and p.text == "*":
                piece(
                    "other",
                    " ".join(a.text for a in params),
                    None,
                    any(a.from_env for a in params),
                    any(a.unresolved for a in params),
                    any(a.substituted for a in params),
                )
            else:
                for k, a in enumerate(params):
                    if k > 0:
                        split.append([])
                    texts = [a.text] if p.quoted else re.split(r"[ \t\n]+", a.text)
                    for j, text in enumerate(texts):
                        if j > 0:
                            split.append([])
                        if text or p.quoted:
                            piece("param", text, a, a.from_env, a.unresolved, a.substituted)
        else:  # sub
            value = arithmetic(p.text, env)
            if value is not None:
                piece("other", value, env_=True)
            else:
                piece("other", p.text, unres=True, sub=True)
    fields: list[ShellArg] = []
    for pieces in split:
        if not any(x[6] for x in pieces):
            continue
        text = "".join(x[1] for x in pieces)
        params_in = [x for x in pieces if x[0] == "param"]
        rest = [x for x in pieces if x[0] != "param"]
        if len(params_in) == 1 and all(x[0] == "lit" and not x[1] for x in rest):
            a = params_in[0][2]
            fields.append(
                a
                if text == a.text
                else ShellArg(text, a.offset, a.loc, a.from_env, a.unresolved, a.quoted, a.substituted)
            )
        else:
            fields.append(
                ShellArg(
                    text,
                    word.start,
                    None,
                    any(x[3] for x in pieces),
                    any(x[4] for x in pieces),
                    quoted_any,
                    any(x[5] for x in pieces),
                )
            )
    return fields


_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_PREFIX_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "{", "}", "!", "time", "fi", "done"}
_WRAPPERS = {"nohup", "command", "builtin"}
# break48, review48F: the wrappers that take options of their own, from the reader's table (this reference checks
# the reader's lexing and expansion, not the table: tests/test_shell_wrappers_bash.py checks the table against the
# real tools run by bash), parsed here one option word at a time
from kvlint.engines.shell import _OPTION_WRAPPERS  # noqa: E402


def _part(text: str, word: Any) -> ShellArg:
    return ShellArg(text, word.offset, word.loc, word.from_env, word.unresolved)


def _split(word: Any) -> list[ShellArg]:
    try:
        texts = shlex.split(word.text)
    except ValueError:
        texts = word.text.split()
    return [
        ShellArg(t, word.offset, word.loc, word.from_env, word.unresolved, True, word.substituted)
        for t in texts
    ]


def _skip_wrapper(words: list[Any]) -> tuple[list[Any], Any]:
    short, attached, long, operands = _OPTION_WRAPPERS[words[0].text]
    words = words[1:]
    while words and words[0].text != "--":
        word = words[0]
        text = word.text
        if text == "-" and "--split-string" in long:
            words = words[1:]
            continue
        if not text.startswith("-") or text == "-":
            return words[operands:], None
        words = words[1:]
        if text.startswith("--"):
            if text == "--split-string" and words:
                return words[1:], words[0]
            if text.startswith("--split-string="):
                return words, _part(text[len("--split-string=") :], word)
            if text in long:
                words = words[1:]
            continue
        letters = text[1:]
        while letters and letters[0] not in attached and letters[0] not in short:
            letters = letters[1:]
        if not letters or letters[0] in attached:
            continue
        if letters[0] == "S" and "--split-string" in long:
            if letters[1:]:
                return words, _part(letters[1:], word)
            if words:
                return words[1:], words[0]
        if not letters[1:]:
            words = words[1:]
    return words[1:][operands:], None


def _clears(head: str, options: list[str]) -> list[tuple[str, None]]:
    """shell50: what env's ``-i``/``-``/``-u NAME`` and exec's ``-c`` among the option words ``options`` take out
    of the command's environment: ``(NAME, None)``, ``("", None)`` for all of it."""
    out: list[tuple[str, None]] = []
    k = 0
    while k < len(options):
        text = options[k]
        k += 1
        if text == "--":
            break
        if head == "env" and text in ("-", "--ignore-environment"):
            out.append(("", None))
        elif head == "env" and text.startswith("--unset="):
            out.append((text[len("--unset=") :], None))
        elif text.startswith("--"):
            if text in ("--unset", "--chdir") and k < len(options):
                if text == "--unset":
                    out.append((options[k], None))
                k += 1
        elif text.startswith("-"):
            for i in range(1, len(text)):
                letter = text[i]
                if letter == ("i" if head == "env" else "c"):
                    out.append(("", None))
                elif letter in ("CSu" if head == "env" else "a"):
                    value = text[i + 1 :]
                    if not value and k < len(options):
                        value = options[k]
                        k += 1
                    if letter == "u" and head == "env":
                        out.append((value, None))
                    break
    return out


def _nested_shell_script(words: list[Any]) -> int | None:
    """wrap48: where SCRIPT is in ``sh|bash|... [-opts] -c [--] SCRIPT [args]`` (an option word holding ``c``)."""
    if len(words) < 3 or words[0].text.split("/")[-1] not in ("sh", "bash", "ash", "dash", "zsh", "ksh"):
        return None
    for k in range(1, len(words)):
        text = words[k].text
        if not text.startswith("-") or text == "--":
            return None
        if not text.startswith("--") and "c" in text[1:]:
            k += 1
            if k < len(words) and words[k].text == "--":
                k += 1
            return k if k < len(words) else None
    return None


_REF_STDIN = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _ref_refs(value: str) -> list[str]:
    """shell55: the names a value references (``$A``, ``${A...``)."""
    return re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", value)


def _ref_stale(local_env: dict[str, str], deps: dict[str, set[str]], name: str) -> None:
    """shell55: ``name`` is assigned: a variable holding the text of a reference to its old, unknown value is unknown."""
    for dep in deps.pop(name, set()):
        if dep in local_env and name in _ref_refs(local_env[dep]):
            del local_env[dep]
            local_env["?" + dep] = ""


def _ref_depends(local_env: dict[str, str], deps: dict[str, set[str]], name: str, value: str) -> None:
    """shell55: ``name``'s value references variables set to values not known."""
    for ref in _ref_refs(value):
        if ref != name and ("?" + ref in local_env or ("?*" in local_env and ref not in local_env)):
            deps.setdefault(ref, set()).add(name)


def _ref_unread_script(word: ShellArg, env: Mapping[str, str]) -> bool:
    """shell55: an eval word kvlint cannot read as script: a command's output, or a whole reference that may be set."""
    if word.substituted:
        return _SHELL_HOOK_RE.fullmatch(word.text) is None  # (a tool's shell hook: its own names only)
    m = re.fullmatch(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})", word.text)
    name = m and (m.group(1) or m.group(2))
    return bool(word.unresolved and name and ("?" + name in env or "?*" in env))


def _ref_forget_all(local_env: dict[str, str], deps: dict[str, set[str]], only: Any = None) -> None:
    """shell55: a script not read ran in this shell: every variable unknown, any other name may be set; ``only``:
    the prefixes and names a tool's shell hook sets, the only ones made unknown."""
    for name in list(local_env):
        if name[:1] != "?" and name != "IFS":
            if only is not None and not (name.startswith(only[0]) or name in only[1]):
                continue
            del local_env[name]
            local_env["?" + name] = ""
    if only is None:
        local_env["?*"] = ""
        deps.clear()


def commands(
    script: str,
    env: Mapping[str, str],
    positional: Sequence[ShellArg] = (),
    *,
    _depth: int = 0,
    _eval_offset: int | None = None,
    _budget: _Budget | None = None,
    _state: tuple[dict[str, str], set[str], dict[str, set[str]]] | None = None,
    _sh: bool = False,
) -> Iterator[list[ShellArg]]:
    """Yield each simple command of ``script`` as expanded words, wrappers stripped.

    Leading ``NAME=value`` assignments, ``export``/``declare`` assignments and wrappers (``exec``,
    ``nohup``, ``env [-i] [A=b]``, ``then``/``do`` keywords) are removed; assignments are remembered for
    later ``$NAME`` expansion in the same script. ``eval STRING`` is re-read as a script (its words then
    point at the ``eval`` word). Redirections (``2>&1``, ``> log``) are dropped. ``positional`` are ``$0``,
    ``$1``... (``sh -c SCRIPT $0 $1 ...``). The expansions of the whole script add at most :data:`ARG_MAX`
    characters, none a value over :data:`MAX_ARG_STRLEN` (the rest stay unresolved). Never raises.
    """
    # shell50: the shell's variables and the names it exports (it inherited or exported), which eval's string shares
    if _state is None:
        _state = (dict(env), set(env), {})
    local_env, exported, deps = _state
    budget = _budget if _budget is not None else _Budget()
    cmd: list[Word] = []
    # Go/Helm template actions become one opaque word of the same length (offsets and lines preserved)
    templates = _template_shapes(script)
    if templates:
        script = _with_placeholders(script)
    tokens = lex(script, bash=not _sh)
    tokens.append(";")
    # shell51: a command of a pipeline (`A=1 | cat`) or run in the background (`A=1 &`) runs in a subshell: the state
    # before it is put back at the next operator
    last_op = ""
    piped: tuple[dict[str, str], set[str]] | None = None
    array: list[str] | None = None  # shell51: the elements of `NAME=(...)` being read
    for k, tok in enumerate(tokens):
        if array is not None:
            if tok == ")":
                array = None
            elif isinstance(tok, Word):
                array.append(tok.raw)
            continue
        if isinstance(tok, Word):
            cmd.append(tok)
            continue
        heads = [w.raw for w in cmd[:-1]]
        while heads and heads[0] in _PREFIX_KEYWORDS:
            heads = heads[1:]
        declared = bool(heads) and heads[0] in ("export", "declare", "local", "readonly", "typeset")
        if (
            tok == "("
            and cmd
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=", cmd[-1].raw)
            and all((declared and h.startswith("-")) or _ASSIGN_RE.match(h) for h in heads[declared:])
        ):
            # shell51: `NAME=(a b)`: an array, its words up to the `)` its elements, NAME its first (plain words
            # only here)
            array = []
            name = cmd[-1].raw.rstrip("+=")
            cmd.pop()
            rest = tokens[k + 1 :]
            close = rest.index(")") if ")" in rest else len(rest)
            first = next((w.raw for w in rest[:close] if isinstance(w, Word)), None)
            if first is not None and all(w.raw in _PREFIX_KEYWORDS for w in cmd):
                local_env[name] = first
            if _sh:
                local_env.pop(name, None)  # shell53: dash has no arrays
            continue
        if piped is not None:
            local_env.clear()
            local_env.update(piped[0])
            exported.clear()
            exported.update(piped[1])
            piped = None
        op, last_op = last_op, tok
        if not cmd:
            continue
        if op == "|" or tok in ("|", "&"):
            piped = (dict(local_env), set(exported))
        words: list[ShellArg] = []
        leading, declaring = True, False
        tmp: dict[str, str] | None = None  # shell50: the command's assignments so far, which later ones see
        for word in cmd:
            is_assign = "=" in word.raw and bool(_ASSIGN_RE.match(word.raw))
            assigning = is_assign and (leading or declaring)
            if _sh and "$'" in word.raw:
                # shell53: an ANSI-C quote in a sh script (dash 0.5.12 has none): the word as written, not known
                own_value = is_assign and leading
                fields = [ShellArg(word.raw, word.start, None, False, not own_value, True, own_value)]
            else:
                if _sh:
                    # shell53: a substring or an array reference in a sh script (dash: "Bad substitution"): not read
                    word = Word(
                        [
                            Part(
                                "sub",
                                cut_text(p.text if p.kind != "arr" else f"{p.text}[{p.index or '@'}]", p.cut),
                                p.quoted,
                            )
                            if p.cut is not None
                            else Part("sub", "${" + p.text + "[" + (p.index or "@") + "]}", p.quoted)
                            if p.kind == "arr"
                            else Part("sub", "${#" + p.text + "[@]}", p.quoted)
                            if p.kind == "count" and p.text != "#"
                            else p
                            for p in word.parts
                        ],
                        word.start,
                        word.raw,
                        word.unclosed,
                    )
                fields = _expand(
                    word,
                    tmp if is_assign and leading and tmp is not None else local_env,
                    positional,
                    assign=assigning,
                    budget=budget,
                )
            if is_assign and leading and fields:
                tmp = dict(local_env) if tmp is None else tmp
                name, _, val = fields[0].text.partition("=")
                if fields[0].substituted:
                    tmp.pop(name, None)
                else:
                    tmp[name] = val
            if word.raw.startswith("<<<"):
                # shell50: a here-string is the command's input: `<<<` alone drops the next word too (as a bare `>`
                # does below), `<<<WORD` itself
                fields = [ShellArg(">") if f.text == "<<<" else f for f in fields]
                fields = [f for f in fields if not (f.text.startswith("<<<") and len(f.text) > 3)]
            words.extend(fields)
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
            text = arg.text
            # every redirection operator holds a ``<`` or ``>``: other words are not matched
            m = _REDIRECT_RE.match(text) if not arg.quoted and ("<" in text or ">" in text) else None
            if m:
                if not m.group(2):
                    skip = True
                continue
            cleaned.append(arg)
        words = cleaned
        splits = 0
        # shell50: a NAME=value before the command holds for that command only, as env's NAME=value and -u/-i do
        prefix: list[tuple[str, str | None]] = []
        prefix_args: list[ShellArg] = []
        own: list[tuple[str, str | None]] = []
        wrapped = False
        while words:
            head = words[0].text
            if head in _PREFIX_KEYWORDS:
                words = words[1:]
            elif head in _WRAPPERS:
                wrapped = True
                words = words[2:] if len(words) > 1 and words[1].text == "--" else words[1:]
            elif head in _OPTION_WRAPPERS:
                wrapped = True
                rest, split = _skip_wrapper(words)
                if split is not None and splits < 4:
                    splits += 1
                    words = [words[0], *_split(split), *rest]
                    continue
                if split is None and head in ("env", "exec"):
                    own.extend(_clears(head, [w.text for w in words[1 : len(words) - len(rest)]]))
                words = rest
                while head == "env" and words and _ASSIGN_RE.match(words[0].text):
                    name, _, val = words[0].text.partition("=")
                    own.append((name, None if words[0].substituted else val))
                    words = words[1:]
            elif "=" in head and _ASSIGN_RE.match(head):
                name, _, val = head.partition("=")
                if not wrapped:
                    prefix.append((name, None if words[0].substituted else val))
                    prefix_args.append(words[0])
                words = words[1:]
            elif head in ("export", "declare", "local", "readonly", "typeset"):
                for arg in words[1:]:
                    if _ASSIGN_RE.match(arg.text):
                        name, _, val = arg.text.partition("=")
                        _ref_stale(local_env, deps, name)
                        if arg.substituted:
                            local_env.pop(name, None)
                            local_env["?" + name] = ""  # review53D: set, its value not known
                        else:
                            local_env[name] = val
                            local_env.pop("?" + name, None)
                            if arg.unresolved:
                                _ref_depends(local_env, deps, name, val)
                        if head == "export":
                            exported.add(name)
                words = []
            else:
                break
        if prefix and not words:
            for (name, value), arg in zip(prefix, prefix_args):  # assignments alone: the shell's variables
                _ref_stale(local_env, deps, name)
                if value is None:
                    local_env.pop(name, None)
                    local_env["?" + name] = ""  # review53D: set, its value not known
                else:
                    local_env[name] = value
                    local_env.pop("?" + name, None)
                    if arg.unresolved:
                        _ref_depends(local_env, deps, name, value)
        if not words:
            continue
        if words[0].text == "eval" and _depth < 3:
            inner = " ".join(w.text for w in words[1:])
            off = words[0].offset
            saved = dict(local_env)
            for name, value in prefix:
                if value is None:
                    local_env.pop(name, None)
                else:
                    local_env[name] = value
            yield from commands(
                inner,
                local_env,
                positional,
                _depth=_depth + 1,
                _eval_offset=off,
                _budget=budget,
                _state=_state,
                _sh=_sh,
            )
            for name, _value in prefix:
                if name in saved:
                    local_env[name] = saved[name]
                else:
                    local_env.pop(name, None)
            if any(_ref_unread_script(w, local_env) for w in words[1:]):
                _ref_forget_all(local_env, deps)
            elif any(w.substituted for w in words[1:]) and all(
                not w.substituted or _SHELL_HOOK_RE.fullmatch(w.text) for w in words[1:]
            ):
                _ref_forget_all(local_env, deps, _SHELL_HOOK_NAMES)
            continue
        if words[0].text == "eval" and any(_ref_unread_script(w, local_env) for w in words[1:]):
            _ref_forget_all(local_env, deps)  # shell55: an eval not read here (nested too deep)
        elif (
            words[0].text == "eval"
            and any(w.substituted for w in words[1:])
            and all(not w.substituted or _SHELL_HOOK_RE.fullmatch(w.text) for w in words[1:])
        ):
            _ref_forget_all(local_env, deps, _SHELL_HOOK_NAMES)
        if words[0].text in (".", "source") and len(words) >= 2 and words[1].text not in _REF_STDIN:
            # shell55: a file not read (a Python environment's bin/activate: its own names only)
            activate = re.search(r"(?:\A|/)bin/activate\Z", words[1].text)
            _ref_forget_all(local_env, deps, _SHELL_HOOK_NAMES if activate else None)
        at = _nested_shell_script(words)
        if at is not None and _depth < 3:
            off = words[at].offset if _eval_offset is None else _eval_offset
            # its environment: the shell's exported variables, then the command's own
            child = {
                k: v for k, v in local_env.items() if k in exported or (k[:1] == "?" and k[1:] in exported)
            }
            for k, (name, value) in enumerate(prefix + own):
                if not name:
                    child = {}
                elif value is None:
                    child.pop(name, None)
                    if k < len(prefix):
                        child["?" + name] = ""  # review53D: `A=$(cmd) bash -c ...`: set, its value not known
                else:
                    child[name] = value
            yield from commands(
                words[at].text,
                child,
                words[at + 1 :],
                _depth=_depth + 1,
                _eval_offset=off,
                _budget=budget,
                _sh=words[0].text.rsplit("/", 1)[-1] in ("sh", "ash", "dash"),
            )
            continue
        yield words
