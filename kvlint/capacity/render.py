"""Text and Markdown rendering for capacity reports: aligned tables, horizontal bar charts, occupancy timelines.

Pure string functions; no terminal control codes. ``fmt`` is ``text`` or ``markdown`` everywhere.
"""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Sequence
from itertools import islice

GiB = 1 << 30


def gib(x: float) -> str:
    """Bytes as GiB with two decimals and thousands separators (``14.99``, ``12,207.03``)."""
    return f"{x / GiB:,.2f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], fmt: str = "text") -> str:
    """A table. Text: columns padded, numbers right-aligned, a dashed rule under the header. Markdown: a GitHub
    pipe table. Cells are converted with ``str``; ``None`` becomes ``-``."""
    cells = [[("-" if c is None else str(c)) for c in r] for r in rows]
    if fmt == "markdown":
        out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in cells]
        return "\n".join(out)
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def numeric(s: str) -> bool:
        t = s.replace(",", "").replace(".", "").replace("%", "").replace("x", "").replace("-", "")
        return t.isdigit()

    def line(r: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if numeric(c) else c.ljust(w) for c, w in zip(r, widths, strict=False)
        ).rstrip()

    return "\n".join([line(list(headers)), "  ".join("-" * w for w in widths)] + [line(r) for r in cells])


def bars(labels: Sequence[str], values: Sequence[float], *, width: int = 40, unit: str = "") -> str:
    """Horizontal bar chart, one line per label, bars scaled to the largest value (``#`` characters)."""
    top = max([v for v in values if v > 0], default=1.0)
    lw = max((len(s) for s in labels), default=0)
    out = []
    for s, v in zip(labels, values, strict=False):
        n = int(round(width * max(v, 0) / top))
        out.append(f"{s.ljust(lw)} |{'#' * n}{' ' * (width - n)}| {v:,.2f}{unit}".rstrip())
    return "\n".join(out)


def timeline(
    steps: Sequence[int], values: Sequence[int], *, capacity: int, width: int = 60, height: int = 8
) -> str:
    """Occupancy over time as a text area chart: ``width`` columns (each the maximum over its step range),
    ``height`` rows from 0 to ``capacity`` blocks, with the step range on the x axis."""
    if not steps:
        return "(no steps simulated)"
    first, last = steps[0], steps[-1]
    span = max(1, last - first + 1)
    cols = [0] * width
    if all(map(operator.le, steps, islice(steps, 1, None))):
        # increasing steps: column i holds the positions from the first step s with (s - first) * width >=
        # i * span, found by bisection, and its maximum is taken over that slice
        bounds = [bisect_left(steps, first + -(-i * span // width)) for i in range(width)] + [len(steps)]
        for i in range(width):
            cols[i] = max(0, max(values[bounds[i] : bounds[i + 1]], default=0))
    else:
        for s, v in zip(steps, values, strict=False):
            i = min(width - 1, (s - first) * width // span)
            if v > cols[i]:
                cols[i] = v
    cap = max(1, capacity)
    lines = []
    for row in range(height, 0, -1):
        thr = cap * (row - 0.5) / height
        label = f"{cap * row // height:>8,} |"
        lines.append(label + "".join("#" if v >= thr else " " for v in cols))
    lines.append(" " * 9 + "+" + "-" * width)
    lines.append(" " * 10 + f"step {first:,}".ljust(width - 12) + f"step {last:,}".rjust(12))
    return "\n".join(lines)


def heading(text: str, fmt: str, level: int = 2) -> str:
    """A section heading (Markdown ``##``; text: the title underlined)."""
    if fmt == "markdown":
        return "#" * level + " " + text
    return text + "\n" + ("=" if level <= 1 else "-") * len(text)


def bullets(items: Sequence[str], fmt: str) -> str:
    """A bullet list (``- item`` in both formats)."""
    return "\n".join(f"- {s}" for s in items)


def pre(text: str, fmt: str) -> str:
    """Preformatted block (fenced in Markdown, as is in text)."""
    return f"```\n{text}\n```" if fmt == "markdown" else text
