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

__all__ = ["ASIDE_CHARS", "split_clauses", "split_message"]

#: A parenthetical aside of the first clause longer than this many characters (parentheses included)
#: moves to the detail lines; shorter ones, such as ``(131,072 B/token)``, stay in the statement.
ASIDE_CHARS = 40

_OPEN = {"(": ")", "[": "]"}
#: The characters the scanners act on (the text between them is skipped in C, not walked in Python).
_DELIMITER = re.compile(r"[()\[\]']|; ")
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


def split_clauses(message: str) -> list[str]:
    """``message`` cut at each top-level ``"; "`` (not inside ``()``, ``[]`` or single quotes)."""
    if "; " not in message:
        return [message.strip()] if message.strip() else []
    parts: list[str] = []
    depth = 0
    quote = False
    cur = 0
    # nothing after the last "; " can cut the message: the scan stops there
    for m in _DELIMITER.finditer(message, 0, message.rfind("; ") + 2):
        ch, i = m.group(), m.start()
        if quote:
            quote = ch != "'"
        elif ch == "'":
            quote = i == 0 or not message[i - 1].isalnum()
        elif ch in _OPEN:
            depth += 1
        elif ch in ")]":
            if depth:
                depth -= 1
        elif depth == 0:  # "; " at top level
            parts.append(message[cur:i].strip())
            cur = i + 2
    parts.append(message[cur:].strip())
    return [p for p in parts if p]


def split_message(message: str, summary: str = "") -> tuple[str, list[str]]:
    """``(statement, detail lines)`` of a finding's ``message``.

    With an explicit ``summary`` the statement is that text and every clause of the message is a
    detail line; otherwise the statement is the message's first clause without its long asides (see
    the module docstring), and the asides then the other clauses are the detail lines.
    """
    clauses = split_clauses(message) or [message]
    if summary:
        return summary, clauses
    first, rest = clauses[0], clauses[1:]
    asides: list[str] = []
    kept: list[str] = []
    pos = 0
    for a, b in _top_level_spans(first):
        if b - a > ASIDE_CHARS:
            kept.append(first[pos:a])
            asides.append(first[a + 1 : b - 1].strip())
            pos = b
    kept.append(first[pos:])
    statement = " ".join("".join(kept).split())
    statement = statement.replace(" ,", ",").replace(" :", ":").replace(" ;", ";")
    return statement, asides + rest
