"""A finding's short statement and its detail lines, split from the full message.

Rule messages are one sentence carrying everything: what fails, the per-GPU arithmetic, the GPU and
how it was chosen, the engine's own error text. Reports meant to be read at a glance (text, the
Markdown summary) lead with a short statement and put the rest on indented lines below it, as ruff and
rustc show context under a diagnostic; JSON and SARIF keep the full message.

The split is mechanical, so every rule gets it without writing two texts (a check may still pass an
explicit ``summary``): the message's clauses are separated at top-level ``"; "`` (outside parentheses,
brackets and quotes); the first clause is the statement, with its long parenthetical asides (the per-GPU
arithmetic, the node selector that chose the GPU; longer than :data:`ASIDE_CHARS`) moved to the detail;
the following clauses are detail lines in their order. No word is dropped: joining the statement's
text and the details gives back every part of the message.
"""

from __future__ import annotations

import re

__all__ = [
    "ASIDE_CHARS",
    "MESSAGE_CHARS",
    "QUOTED_CHARS",
    "clip",
    "clip_words",
    "split_clauses",
    "split_message",
    "squeeze",
    "statement_of",
]

#: A parenthetical aside of the first clause longer than this many characters (parentheses included)
#: moves to the detail lines; shorter ones, such as ``(131,072 B/token)``, stay in the statement.
ASIDE_CHARS = 40

#: The longest word (run of characters other than whitespace) a finding's message, fix or summary quotes whole
#: (:func:`clip_words`): a longer one is manifest text quoted as written -- a 5,000-digit ``nvidia.com/gpu``
#: value, an image tag, a model name -- and is cut. kvlint's own words and the paths it names are shorter
#: (the longest of the shared corpus's and fixtures' findings: a 161-character path in a KV002 fix); 256 is
#: also one admission warning (:data:`kvlint.webhook.review.MAX_WARNING_CHARS`).
QUOTED_CHARS = 256
#: Characters kept of the end of a word :func:`clip_words` cuts: its closing quote or parenthesis, which
#: :func:`split_message` reads.
_KEPT_END = 8
_LONG_WORD = re.compile(rf"\S{{{QUOTED_CHARS + 1},}}")
#: The longest message, fix or summary a finding holds (:func:`clip_words`): a manifest value of many short words
#: (``"ab ab ab ..."`` as a model name, an image tag with ideographic spaces, an ``nvidia.com/gpu`` string) passes
#: the word cut whole, and KV208, KV405 and KV502 quoted 100 KB of it. kvlint's own texts are shorter (the
#: longest of the shared corpus's and fixtures' findings: a 1,069-character KV505 message), with room left
#: for a few words of :data:`QUOTED_CHARS`.
MESSAGE_CHARS = 4096
#: Characters kept of the end of a text :func:`clip_words` cuts to :data:`MESSAGE_CHARS`: what follows a
#: quoted value (its closing quote, the clauses after it), which :func:`split_message` reads.
_KEPT_TAIL = 1024

_OPEN = {"(": ")", "[": "]"}
#: The characters the scanners act on (the text between them is skipped in C, not walked in Python): a
#: single character class, searched about twice as fast as an alternation with the two-character ``"; "``
#: (a ``;`` cuts only when a space follows it).
_DELIMITER = re.compile(r"[()\[\]';]")
_PAREN_OR_QUOTE = re.compile(r"[()']")


def _top_level_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each top-level ``(...)`` group in ``text`` (end exclusive), outside quotes."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    quote = False
    for m in _PAREN_OR_QUOTE.finditer(text):
        ch, i = m.group(), m.start()
        if quote:
            quote = ch != "'"
            continue
        if ch == "'":
            quote = i == 0 or not text[i - 1].isalnum()  # an opening quote, not an apostrophe ("model's")
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _long(text: str) -> bool:
    """Whether ``text`` may hold a parenthesised group longer than :data:`ASIDE_CHARS` (its first ``(`` and
    its last ``)`` are that far apart)."""
    o = text.find("(")
    return o >= 0 and text.rfind(")") - o >= ASIDE_CHARS


def _clauses(message: str, spans: list[tuple[int, int]] | None, first_only: bool = False) -> list[str]:
    """The nonempty clauses of ``message`` (see :func:`split_clauses`). When ``spans`` is a list, those of
    the first clause's :func:`_top_level_spans` longer than :data:`ASIDE_CHARS` are added to it, found in
    the same scan. ``first_only``: the scan stops at the end of the first clause (only that one is returned).

    One scan keeps two depths: ``depth`` over ``()`` and ``[]`` together (a ``"; "`` cuts only at depth 0,
    outside quotes) and, while the first clause is read, ``paren`` over ``()`` alone (the groups that
    :func:`_top_level_spans` reports). Both start at 0 with no quote open at each clause's start, as they
    do when the clause is scanned alone (the character before a clause is a space, which opens a quote as
    the start of the text does)."""
    stop = message.rfind("; ")
    if stop < 0:
        text = message.strip()
        if not text:
            return []
        if spans is not None and _long(text):
            spans += [(a, b) for a, b in _top_level_spans(text) if b - a > ASIDE_CHARS]
        return [text]
    parts: list[str] = []
    depth = 0
    quote = False
    cur = 0
    track = spans is not None and _long(message)  # still in the first nonempty clause
    paren = 0
    start = 0
    found: list[tuple[int, int]] = []  # groups of the clause being read, in the message's positions
    for m in _DELIMITER.finditer(message):
        i = m.start()
        if i > stop and not track:  # nothing after the last "; " can cut the message
            break
        ch = m.group()
        if quote:
            quote = ch != "'"
        elif ch == "'":
            quote = i == 0 or not message[i - 1].isalnum()  # an opening quote, not an apostrophe ("model's")
        elif ch == "(":
            depth += 1
            if track:
                if paren == 0:
                    start = i
                paren += 1
        elif ch == ")":
            if depth:
                depth -= 1
            if track and paren:
                paren -= 1
                if paren == 0 and i + 1 - start > ASIDE_CHARS:
                    found.append((start, i + 1))
        elif ch == "[":
            depth += 1
        elif ch == "]":
            if depth:
                depth -= 1
        elif depth == 0 and message.startswith(" ", i + 1):  # "; " at top level
            raw = message[cur:i]
            text = raw.strip()
            if text:
                parts.append(text)
                if track:
                    _add_spans(spans, found, cur + len(raw) - len(raw.lstrip()))
                    track = False
                if first_only:
                    return parts
            cur = i + 2  # (an empty clause is only spaces: it held no group)
    raw = message[cur:]
    text = raw.strip()
    if text:
        parts.append(text)
        if track:
            _add_spans(spans, found, cur + len(raw) - len(raw.lstrip()))
    return parts


def _add_spans(spans: list[tuple[int, int]] | None, found: list[tuple[int, int]], offset: int) -> None:
    if spans is not None:
        spans += [(a - offset, b - offset) for a, b in found]


def clip(text: str, limit: int, keep_end: int = 0) -> str:
    """``text`` when at most ``limit`` characters, else cut to ``limit`` with ``...``: its first characters
    (trailing whitespace dropped) and, with ``keep_end``, its last ``keep_end`` after the ``...``. The one
    clipping of the admission webhook's warnings (:func:`kvlint.webhook.review.format_warning`) and of
    the words findings quote (:func:`clip_words`)."""
    if len(text) <= limit:
        return text
    return text[: limit - 3 - keep_end].rstrip() + "..." + (text[len(text) - keep_end :] if keep_end else "")


def _may_hold_long_word(text: str) -> bool:
    """False when ``text`` has a space in every stretch of ``QUOTED_CHARS + 1`` characters (then no run of
    non-whitespace is longer than :data:`QUOTED_CHARS`: :data:`_LONG_WORD` cannot match), found with one
    ``str.rfind`` per such stretch (the last space of each, so a message of a few hundred characters takes one
    or two); True otherwise (the pattern decides). :data:`_LONG_WORD` has no literal to skip to, so the regular
    expression engine tries it at every character of each finding's message and fix (about 60 instructions a
    character, counting runs of non-space)."""
    start, n = 0, len(text)
    while n - start > QUOTED_CHARS:
        space = text.rfind(" ", start, start + QUOTED_CHARS + 1)
        if space < 0:
            return True
        start = space + 1
    return False


def clip_words(text: str) -> str:
    """``text`` with each word longer than :data:`QUOTED_CHARS` characters cut to that many (:func:`clip`, its
    last characters kept), so that a finding quoting a manifest value whole quotes at most a few hundred
    characters of it, and then, when still longer than :data:`MESSAGE_CHARS` (a value of many short words),
    cut to that many in its middle (its first characters and its last :data:`_KEPT_TAIL` kept); ``text``
    itself (the same object) when it has neither, as for every finding of the shared corpus. Pure."""
    if len(text) <= QUOTED_CHARS:
        return text
    if _may_hold_long_word(text) and _LONG_WORD.search(text) is not None:
        text = _LONG_WORD.sub(lambda m: clip(m.group(), QUOTED_CHARS, _KEPT_END), text)
    return clip(text, MESSAGE_CHARS, _KEPT_TAIL)


def squeeze(text: str) -> str:
    """``" ".join(text.split())``: runs of whitespace as one space, none at either end; ``text`` itself
    when it has nothing to change, found without splitting it: every character ``str.split`` splits on but
    the ASCII space is one ``str.isprintable`` rejects (categories Cc, Zs, Zl, Zp), so a printable text
    with no two spaces in a row and none at either end is already squeezed."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())


def split_clauses(message: str) -> list[str]:
    """``message`` cut at each top-level ``"; "`` (not inside ``()``, ``[]`` or single quotes)."""
    return _clauses(message, None)


def split_message(message: str, summary: str = "") -> tuple[str, list[str]]:
    """``(statement, detail lines)`` of a finding's ``message``.

    With an explicit ``summary`` the statement is that text and every clause of the message is a
    detail line; otherwise the statement is the message's first clause without its long asides (see
    the module docstring), and the asides then the other clauses are the detail lines.
    """
    if summary:
        return summary, _clauses(message, None) or [message]
    spans: list[tuple[int, int]] = []
    clauses = _clauses(message, spans)
    if not clauses:  # nothing but spaces and "; ": the whole message is the statement
        clauses = [message]
        spans = [(a, b) for a, b in _top_level_spans(message) if b - a > ASIDE_CHARS]
    statement, asides = _statement(clauses[0], spans)
    return statement, asides + clauses[1:]


def statement_of(message: str, summary: str = "") -> str:
    """``split_message(message, summary)[0]``, the short statement alone: the message is read up to the end
    of its first clause only."""
    if summary:
        return summary
    spans: list[tuple[int, int]] = []
    clauses = _clauses(message, spans, first_only=True)
    if not clauses:
        clauses = [message]
        spans = [(a, b) for a, b in _top_level_spans(message) if b - a > ASIDE_CHARS]
    return _statement(clauses[0], spans)[0]


def _statement(first: str, spans: list[tuple[int, int]]) -> tuple[str, list[str]]:
    """The statement made of the first clause ``first`` without its long groups ``spans``, and those groups'
    text (the asides)."""
    asides: list[str] = []
    kept: list[str] = []
    pos = 0
    for a, b in spans:
        kept.append(first[pos:a])
        asides.append(first[a + 1 : b - 1].strip())
        pos = b
    if asides:
        kept.append(first[pos:])
        statement = " ".join("".join(kept).split())
    else:
        statement = squeeze(first)
    return statement.replace(" ,", ",").replace(" :", ":").replace(" ;", ";"), asides
