"""JSON Lines report (``kvlint check --format jsonl``): one JSON object per line, for log pipelines and
tools that read a finding at a time (``jq -c``, ``grep``, line-oriented ingestion).

Shape: one line per reported diagnostic, in the order every other report lists them (file, line,
column, rule: :attr:`kvlint.types.CheckResult.diagnostics`), each the object the JSON report's
``diagnostics`` holds (:meth:`kvlint.types.Diagnostic.as_dict`: ``rule``, ``severity``, ``message``,
``fix``, ``file``, ``line``, ``column``, ``object``, ``container``, ``summary``, ``setting``, ``sources``, and
``sources_more`` when sources were left out, ``stands_for`` when the finding stands for more than one);
then one last line::

    {"run_summary": {... the JSON report's summary ...}, "schema_version": 2, "kvlint_version": "0.1.0"}

The last line is told apart by its ``run_summary`` key (a diagnostic has ``rule``; its ``summary`` is the
finding's short statement, so that name could not mark the run's summary). ``schema_version`` is the JSON
report's (:data:`kvlint.report.jsonout.SCHEMA_VERSION`): the lines are that report's objects, and change
with it. Findings suppressed by ``kvlint.io/ignore`` are counted in ``run_summary.suppressed`` but not
listed (the ``json`` and ``sarif`` reports list them). Lines are compact (``,`` and ``:`` with no
spaces), ASCII (``\\uXXXX`` escapes, as in the JSON report) and end with ``\\n``; :func:`write_jsonl`
writes them one at a time, without holding the whole report in memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

from kvlint import __version__
from kvlint.report.escape import inert_json
from kvlint.report.jsonout import SCHEMA_VERSION, diagnostic_dict, summary_dict

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult

#: The key of the last line's object, which holds the JSON report's ``summary``.
SUMMARY_KEY = "run_summary"

# compact separators and no indent: json's C encoder (an indent falls back to the pure-Python one)
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def iter_jsonl(result: CheckResult, sizing: SizingSummary | None = None) -> Iterator[str]:
    """The report's lines, each ending with ``\\n``: one per diagnostic, then the summary line (``sizing``: the
    run's :func:`kvlint.sizing.summarise`, computed here when not given)."""
    for d in result.diagnostics:
        # no line holds the runner's legacy "##[" workflow command (kvlint.report.escape.inert_json)
        yield inert_json(_ENCODE(diagnostic_dict(d, result))) + "\n"
    summary = {
        SUMMARY_KEY: summary_dict(result, sizing),
        "schema_version": SCHEMA_VERSION,
        "kvlint_version": __version__,
    }
    yield inert_json(_ENCODE(summary)) + "\n"


def write_jsonl(result: CheckResult, stream: TextIO, sizing: SizingSummary | None = None) -> None:
    """Write the report to ``stream`` line by line (no string of the whole report is built)."""
    for line in iter_jsonl(result, sizing):
        stream.write(line)


def render_jsonl(result: CheckResult, sizing: SizingSummary | None = None) -> str:
    """The whole report as one string (for tests and callers that want text)."""
    return "".join(iter_jsonl(result, sizing))
