"""GitHub Actions workflow commands (``kvlint check --format github``).

One line per diagnostic, which the Actions runner turns into an annotation on the pull request's diff:
``::error file=PATH,line=L,col=C,title=KV103 max-model-len-exceeds-kv-capacity::MESSAGE%0Afix: ...``
(``warning`` for warnings, ``notice`` for info). Values are escaped as the runner expects
(``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and ``,`` -> ``%2C``).
A last plain line gives the summary (with the suppressed count). Reference: GitHub Docs, "Workflow
commands for GitHub Actions" (setting an error/warning/notice message).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlint.report.escape import printable
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.types import CheckResult

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    """Escape a workflow-command message; other control characters, bidi overrides and the bytes of
    non-UTF-8 file names become visible escapes (:func:`kvlint.report.escape.printable`)."""
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(s)


def escape_property(s: str) -> str:
    """Escape a workflow-command property value (``file=``, ``title=``)."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def format_command(d: Diagnostic, rule_name: str = "") -> str:
    """One diagnostic as a ``::error file=..,line=..,col=..,title=..::message`` line."""
    props = []
    if d.loc is not None:
        props += [f"file={escape_property(d.loc.file)}", f"line={d.loc.line}", f"col={d.loc.column}"]
    title = f"{d.rule} {rule_name}".strip()
    props.append(f"title={escape_property(title)}")
    where = f" [{d.object}" + (f" container {d.container}" if d.container else "") + "]" if d.object else ""
    body = d.message + where + (f"\nfix: {d.fix}" if d.fix else "")
    return f"::{_COMMAND.get(d.severity, 'warning')} {','.join(props)}::{escape_data(body)}"


def render_github(result: CheckResult) -> str:
    """All diagnostics as workflow commands, then the summary line."""
    from kvlint.report.text import summary_line
    from kvlint.rules.catalog import load_catalog

    names = {k: v.name for k, v in load_catalog().items()}
    lines = [format_command(d, names.get(d.rule, "")) for d in result.diagnostics]
    if result.serving:
        from kvlint.sizing import summarise

        sizing = summarise(result)
        lines.append(
            f"::{'warning' if sizing.unsized else 'notice'} title=kvlint sizing::{escape_data(sizing.line())}"
        )
    lines.append(summary_line(result, suppressed=result.suppressed))
    return "\n".join(lines) + "\n"
