"""Human-readable report: ``path:line:col: severity RULE message`` grouped by file, then a summary.

Colour only when writing to a terminal and ``NO_COLOR`` is unset (https://no-color.org).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

from kvlint.report.escape import printable
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.types import CheckResult

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD = "\033[1m"
_DIM = "\033[2m"
_RESET = "\033[0m"


def use_color(stream: TextIO, force: bool | None = None) -> bool:
    """Whether to colour output: ``force`` wins; else a TTY without ``NO_COLOR`` set."""
    if force is not None:
        return force
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def format_diagnostic(d: Diagnostic, color: bool = False) -> str:
    """One diagnostic as ``file:line:col: severity RULE message`` plus an indented ``fix:`` line.

    Text from the inputs (file name, message, object, container, fix) goes through
    :func:`kvlint.report.escape.printable`: each of the two lines stays one line, free of control
    characters, whatever a file name or manifest holds."""
    loc = f"{printable(d.loc.file)}:{d.loc.line}:{d.loc.column}" if d.loc else "<input>"
    sev: str = d.severity
    if color:
        sev = f"{_COLORS.get(d.severity, '')}{d.severity}{_RESET}"
        rule = f"{_BOLD}{d.rule}{_RESET}"
    else:
        rule = d.rule
    where = ""
    if d.object:
        where = (
            f" [{printable(d.object)}" + (f" container {printable(d.container)}" if d.container else "") + "]"
        )
    lines = [f"{loc}: {sev} {rule} {printable(d.message)}{where}"]
    if d.fix:
        fix = f"  fix: {printable(d.fix)}"
        lines.append(f"{_DIM}{fix}{_RESET}" if color else fix)
    return "\n".join(lines)


def render_text(result: CheckResult, *, color: bool = False, suppressed: int | None = None) -> str:
    """The whole report: diagnostics grouped by file (a blank line between files) and a summary line.

    ``suppressed`` defaults to ``result.suppressed`` (findings removed by ``kvlint.io/ignore``)."""
    if suppressed is None:
        suppressed = result.suppressed
    out: list[str] = []
    current: str | None = None
    for d in result.diagnostics:
        f = d.loc.file if d.loc else "<input>"
        if current is not None and f != current:
            out.append("")
        current = f
        out.append(format_diagnostic(d, color))
    if out:
        out.append("")
    out.append(summary_line(result, suppressed=suppressed))
    return "\n".join(out) + "\n"


def summary_line(result: CheckResult, suppressed: int | None = None) -> str:
    """``N errors, M warnings in F files (D documents, W workloads, S serving containers); K suppressed``.

    The suppressed count (default ``result.suppressed``) is always shown; ``exemptions disabled`` is
    added when the run did not allow ``kvlint.io/ignore`` annotations."""
    if suppressed is None:
        suppressed = getattr(result, "suppressed", 0)
    c = result.counts()

    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    parts = [plural(c.get("error", 0), "error"), plural(c.get("warning", 0), "warning")]
    if c.get("info"):
        parts.append(plural(c["info"], "info"))
    text = (
        f"{', '.join(parts)} in {plural(result.files, 'file')} ({plural(result.documents, 'document')}, "
        f"{plural(result.workloads, 'workload')}, {plural(len(result.containers), 'serving container')})"
    )
    text += f"; {suppressed} suppressed"
    if not getattr(result, "exemptions_allowed", True):
        text += " (exemptions disabled)"
    return text
