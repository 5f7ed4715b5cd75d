"""Delimited spans found in linear time, for text from manifests and logs (attacker-controlled).

A regex such as ``\\{\\{.*?\\}\\}`` is tried at every ``{{``; when no ``}}`` follows, each attempt scans to
the end of the text before failing, so ``"{{ " * 20000`` costs 20,000 scans of up to 60 KB (quadratic:
seconds to minutes). :func:`delimited_spans` finds the same spans with :meth:`str.find` and stops at the first
opening without a closing after it (no later opening can have one either).
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["delimited_spans"]


def delimited_spans(text: str, opening: str = "{{", closing: str = "}}") -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each non-overlapping ``opening ... closing`` span of ``text``, left to right: the
    spans (``m.start()``, ``m.end()``) of ``re.finditer(re.escape(opening) + ".*?" + re.escape(closing), text,
    re.S)``. Each span ends at the first ``closing`` that starts after its ``opening``. Linear in
    ``len(text)``: two :meth:`str.find` calls per span and one more at the end."""
    pos = 0
    width = len(opening)
    while True:
        i = text.find(opening, pos)
        if i < 0:
            return
        j = text.find(closing, i + width)
        if j < 0:
            return  # every later opening is followed by no closing either
        pos = j + len(closing)
        yield i, pos
