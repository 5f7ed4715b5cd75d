"""Human-readable report: ``path:line:col: severity RULE statement`` grouped by file, then a summary.

Each finding leads with its short statement (what fails and by how much, :mod:`kvlint.statement`) and
the workload, then the detail (per-GPU arithmetic, the engine's error text) and the remedy on indented
lines, wrapped to the terminal width (``COLUMNS``, else the terminal's, else :data:`DEFAULT_WIDTH` when
not writing to a terminal). JSON and SARIF keep the full message.

Colour: ``--color/--no-color`` win; else ``FORCE_COLOR`` (set and not ``0``) turns it on, ``NO_COLOR``
(https://no-color.org) or ``TERM=dumb`` off, and otherwise only a terminal gets colour.
"""

from __future__ import annotations

import os
import re
import shutil
import textwrap
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

from kvlint.report.escape import inert_line, inert_path, printable
from kvlint.statement import split_message
from kvlint.types import Diagnostic
from kvlint.values import digits

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD = "\033[1m"
_DIM = "\033[2m"
_RESET = "\033[0m"


#: Line width of the text report when it is not written to a terminal and ``COLUMNS`` is unset.
DEFAULT_WIDTH = 100


def use_color(stream: TextIO, force: bool | None = None) -> bool:
    """Whether to colour output: ``force`` wins; else ``FORCE_COLOR`` (non-empty, not ``0``) on, ``NO_COLOR``
    or ``TERM=dumb`` off, else only when ``stream`` is a TTY."""
    if force is not None:
        return force
    forced = os.environ.get("FORCE_COLOR")
    if forced is not None and forced not in ("", "0"):
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def report_width(stream: TextIO | None = None) -> int:
    """Columns to wrap the report to: ``COLUMNS`` when set, the terminal's width when ``stream`` is a TTY,
    else :data:`DEFAULT_WIDTH` (so files and pipes get the same text on every machine). At least 40."""
    env = os.environ.get("COLUMNS", "")
    columns = digits(env)  # ASCII digits only: COLUMNS=² passed str.isdigit and made int() raise
    if columns:
        return max(40, columns)
    isatty = getattr(stream, "isatty", None)
    if stream is not None and isatty and isatty():
        return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    return DEFAULT_WIDTH


#: Any whitespace character other than the space: such text takes :mod:`textwrap` itself (tabs expand,
#: other whitespace becomes spaces, a chunk of Unicode spaces counts as blank there).
_OTHER_SPACE = re.compile(r"[^\S ]")
_NOT_SPACE = re.compile(r"[^ ]")


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    """Wrap at spaces only: a path, URL or flag longer than the line stays whole, so it can be copied.

    The lines are those of ``textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
    break_on_hyphens=False, break_long_words=False)`` (or ``[first.rstrip()]`` when that is empty). Text whose
    only whitespace is the space is wrapped here with string searches instead of textwrap's walk over each
    word: the same greedy rule (a line ends at the last word or space-run boundary within the width; a
    longer word stands alone; a line's trailing space run is dropped, as is the leading run of every line
    after the first)."""
    # (printable text has no whitespace but the space: Unicode counts every other one as a separator or a
    # control character, so the pattern is searched only in text that is not printable)
    if width - max(len(first), len(rest)) < 1 or (
        not text.isprintable() and _OTHER_SPACE.search(text) is not None
    ):
        return textwrap.wrap(
            text,
            width=width,
            initial_indent=first,
            subsequent_indent=rest,
            break_on_hyphens=False,
            break_long_words=False,
        ) or [first.rstrip()]
    n = len(text)
    if n <= width - len(first):  # all on the first line (its leading spaces kept, as textwrap keeps them)
        line = text.rstrip(" ")
        return [first + line] if line else [first.rstrip()]
    lines: list[str] = []
    p = 0
    while p < n:
        if lines:
            indent = rest
            if text[p] == " ":  # the space run a line starts with is dropped after the first line
                m = _NOT_SPACE.search(text, p)
                if m is None:
                    break
                p = m.start()
        else:
            indent = first
        e = p + width - len(indent)
        if e >= n:
            q = n
        elif text[e] == " ":
            q = e if text[e - 1] != " " else p + len(text[p:e].rstrip(" "))
        elif text[e - 1] == " ":
            q = e
        else:
            q = text.rfind(" ", p, e) + 1 or p
        if q == p:  # the first chunk is longer than the line: it stands alone, whole
            if text[p] == " ":
                m = _NOT_SPACE.search(text, p)
                q = n if m is None else m.start()
            else:
                q = text.find(" ", p)
                if q < 0:
                    q = n
        line = text[p:q].rstrip(" ")
        if line:
            lines.append(indent + line)
        p = q
    return lines or [first.rstrip()]


def format_diagnostic(d: Diagnostic, color: bool = False, width: int = DEFAULT_WIDTH) -> str:
    """One diagnostic: ``file:line:col: severity RULE statement [object container c]``, then the detail
    lines (indented 4) and ``fix:`` (indented 2), wrapped to ``width`` columns.

    Text from the inputs (file name, message, object, container, fix) goes through
    :func:`kvlint.report.escape.printable`: each line stays one line, free of control characters, whatever a
    file name or manifest holds; and no line is a GitHub Actions workflow command (:func:`inert_path`: a file
    name starting with ``:`` is shown as ``./:...``; :func:`inert_line`: a detail or wrapped line starting
    with ``::`` gets a backslash before it, and ``##[`` is written ``##\\[``)."""
    loc = f"{inert_path(d.loc.file)}:{d.loc.line}:{d.loc.column}" if d.loc else "<input>"
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
    statement, details = split_message(d.message, d.summary)  # d.statement and d.details, split once
    lines = [inert_line(f"{loc}: {sev} {rule} {printable(statement)}{where}")]
    for detail in details:
        lines += map(inert_line, _wrap(printable(detail), width, "    ", "      "))
    if d.fix:
        fix = [inert_line(x) for x in _wrap(printable(d.fix), width, "  fix: ", "       ")]
        lines += [f"{_DIM}{x}{_RESET}" for x in fix] if color else fix
    return "\n".join(lines)


def render_text(
    result: CheckResult,
    *,
    color: bool = False,
    suppressed: int | None = None,
    width: int = DEFAULT_WIDTH,
    sizing: SizingSummary | None = None,
) -> str:
    """The whole report: diagnostics grouped by file (a blank line between files) and a summary line.

    ``suppressed`` defaults to ``result.suppressed`` (findings removed by ``kvlint.io/ignore``); ``width``
    is the column the detail lines wrap at; ``sizing`` the run's :func:`kvlint.sizing.summarise` (computed here
    when not given)."""
    return "".join(iter_text(result, color=color, suppressed=suppressed, width=width, sizing=sizing))


def iter_text(
    result: CheckResult,
    *,
    color: bool = False,
    suppressed: int | None = None,
    width: int = DEFAULT_WIDTH,
    summary: bool = True,
    sizing: SizingSummary | None = None,
) -> Iterator[str]:
    """:func:`render_text` in pieces (one per diagnostic, then the summary lines), for writing a large report
    without holding it whole; joined, the pieces are :func:`render_text`'s text. Without ``summary``, the
    diagnostics only, each line ended (``--quiet``)."""
    current: str | None = None
    cache = getattr(result, "text_cache", None)
    texts = cache[1] if cache is not None and cache[0] == (color, width) and cache[1] else None
    for d in result.diagnostics:
        f = d.loc.file if d.loc else "<input>"
        sep = "" if current is None else ("\n" if f == current else "\n\n")
        current = f
        text = texts.get(d) if texts is not None else None
        yield sep + (format_diagnostic(d, color, width) if text is None else text)
    if not summary:
        if current is not None:
            yield "\n"
        return
    if current is not None:
        yield "\n\n"
    if suppressed is None:
        suppressed = result.suppressed
    from kvlint.sizing import summarise

    tail = []
    if sizing is None:
        sizing = summarise(result)
    if sizing.serving or sizing.not_read:
        tail.append(sizing.line())
        # which objects were not read (the first UNREAD_SHOWN, then how many more), below the line that counts them
        tail += [printable(x) for x in sizing.unread_lines()]
    tail.append(summary_line(result, suppressed=suppressed))
    note = getattr(result, "fail_on_note", None)
    if note:
        tail.append(printable(note))
    yield "\n".join(map(inert_line, tail)) + "\n"


def fail_on_note(failing: Iterable[Diagnostic], thresholds: Sequence[dict[str, str]]) -> str | None:
    """The line that says why a run exits 1 on findings that are not errors: ``exit status 1: warnings at or above
    fail_on warning (.kvlint.yaml)``, naming the severities of ``failing`` (the findings at or above the threshold
    that applies to each, :meth:`kvlint.checkrun.CheckRun.failing`) below ``error`` and each threshold below
    ``error`` with its source (``thresholds``: :meth:`kvlint.checkrun.CheckRun.thresholds`, ``source`` a
    configuration path, ``--fail-on`` or ``default``). None when only errors fail the run (the default, which the
    summary's error count already explains) or nothing fails it. ruff and kube-linter end a failing run with such a
    line."""
    below = {d.severity for d in failing if d.severity != "error"}
    if not below:
        return None
    what = " and ".join(f"{s}s" for s in ("warning", "info") if s in below) or "findings"
    low = [t for t in thresholds if t["threshold"] in ("warning", "info")]
    said = ", ".join(f"{t['threshold']} ({t['source']})" for t in low) or "?"
    return f"exit status 1: {what} at or above fail_on {said}"


def summary_line(result: CheckResult, suppressed: int | None = None) -> str:
    """``N errors, M warnings in F files (D documents, W workloads, S serving containers); K suppressed``.

    The severities count findings (:meth:`~kvlint.types.CheckResult.finding_counts`): a finding that stands for
    several (past :data:`kvlint.findcap.MAX_PER_RULE` of a rule in a container) counts them all, and then
    ``; L listed: 1 of them stands for N findings not listed one by one`` says how many the report lists. The
    suppressed count (default ``result.suppressed``) is always shown; ``exemptions disabled`` is added when
    the run did not allow ``kvlint.io/ignore`` annotations."""
    if suppressed is None:
        suppressed = getattr(result, "suppressed", 0)
    c = result.finding_counts()
    standing = result.standing()

    def plural(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    parts = [plural(c.get("error", 0), "error"), plural(c.get("warning", 0), "warning")]
    if c.get("info"):
        parts.append(plural(c["info"], "info"))
    text = (
        f"{', '.join(parts)} in {plural(result.files, 'file')} ({plural(result.documents, 'document')}, "
        f"{plural(result.workloads, 'workload')}, {plural(result.serving, 'serving container')})"
    )
    text += f"; {suppressed} suppressed"
    if not getattr(result, "exemptions_allowed", True):
        text += " (exemptions disabled)"
    if standing:
        k = len(standing)
        stood = sum(n for _, n in standing)
        text += (
            f"; {len(result.diagnostics):,} listed: {k:,} of them {'stands' if k == 1 else 'stand'} for "
            f"{stood:,} findings not listed one by one"
        )
    return text
