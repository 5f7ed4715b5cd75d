"""Report formats of ``kvlint check``: text, json, jsonl, sarif, github, junit, markdown.

:func:`render` dispatches by format name; each module documents its shape. :func:`write_report` writes a
report to a stream, line by line for the formats in :data:`STREAMED` (the others are rendered, then
written). All reporters read the same :class:`~kvlint.pipeline.CheckResult` (rule selection, severity
overrides and suppressions are already applied by the pipeline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult

#: Format names accepted by ``kvlint check --format``.
FORMATS = ("text", "json", "jsonl", "sarif", "github", "junit", "markdown")
#: Formats :func:`write_report` writes a line at a time, without building the whole report as one string.
STREAMED = ("jsonl",)


def render(
    fmt: str,
    result: CheckResult,
    *,
    color: bool = False,
    width: int | None = None,
    sizing: SizingSummary | None = None,
) -> str:
    """The report in format ``fmt`` as text. ``color`` and ``width`` (columns the detail lines wrap at,
    default :data:`kvlint.report.text.DEFAULT_WIDTH`) apply to ``text`` only. ``sizing``: the run's
    :func:`kvlint.sizing.summarise`, when the caller has it (a run writing several reports computes it once);
    else each report computes it.

    Raises:
        ValueError: unknown format name (the message lists :data:`FORMATS`).
    """
    from kvlint.report.escape import inert_json, inert_xml

    # a report printed to a GitHub Actions job's log holds no workflow command: the JSON and XML ones escape the
    # runner's legacy "##[" (honoured anywhere in a line) as their readers read it back (escape.inert_json)
    if fmt == "text":
        from kvlint.report.text import DEFAULT_WIDTH, render_text

        return render_text(result, color=color, width=width or DEFAULT_WIDTH, sizing=sizing)
    if fmt == "json":
        from kvlint.report.jsonout import render_json

        return inert_json(render_json(result, sizing))
    if fmt == "jsonl":
        from kvlint.report.jsonl import render_jsonl

        return render_jsonl(result, sizing)
    if fmt == "sarif":
        from kvlint.report.sarif import render_sarif

        return inert_json(render_sarif(result, sizing))
    if fmt == "github":
        from kvlint.report.github import render_github

        return render_github(result, sizing=sizing)
    if fmt == "junit":
        from kvlint.report.junit import render_junit

        return inert_xml(render_junit(result))
    if fmt == "markdown":
        from kvlint.report.markdown import render_markdown

        return render_markdown(result, sizing)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def write_report(
    fmt: str,
    result: CheckResult,
    stream: TextIO,
    *,
    color: bool = False,
    width: int | None = None,
    sizing: SizingSummary | None = None,
) -> None:
    """Write the report in format ``fmt`` to ``stream``: a line at a time for :data:`STREAMED` formats,
    else the text of :func:`render` (same arguments) in one write. The stream is not flushed or closed.

    Raises:
        ValueError: unknown format name (the message lists :data:`FORMATS`).
    """
    if fmt == "jsonl":
        from kvlint.report.jsonl import write_jsonl

        write_jsonl(result, stream, sizing)
        return
    stream.write(render(fmt, result, color=color, width=width, sizing=sizing))


__all__ = ["FORMATS", "STREAMED", "render", "write_report"]
