"""The Markdown findings table names the workload and container of each finding, as every other format does (the
text report's ``[Kind/namespace/name container c]``, the GitHub annotation's, SARIF's logical location, JUnit's
test name): its location cell held the file position only, so a file of several documents (or an object of several
containers) had rows of the same rule that did not say whose they were."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def test_each_findings_row_names_its_workload_and_container() -> None:
    result = run_check([str(ROOT / "fixtures" / "examples")], Options(allow_hub=False))
    rows = [ln for ln in render("markdown", result).splitlines() if ln.startswith(("| ❌", "| ⚠️", "| ℹ️"))]
    assert len(rows) == len(result.diagnostics) > 0
    for row, d in zip(rows, result.diagnostics, strict=True):
        where = _cells(row)[2]
        assert d.loc is not None and where.startswith(f"`{d.loc.file}:{d.loc.line}:{d.loc.column}`")
        if d.object:
            assert f"<br>{d.object}" in where, where
        if d.container:
            assert where.endswith(f" container `{d.container}`"), where
    assert any(d.container for d in result.diagnostics)


def test_a_finding_of_no_object_keeps_its_position_alone() -> None:
    from kvlint.report.markdown import location_cell
    from kvlint.types import Diagnostic, Loc

    assert location_cell(Diagnostic("KV001", "error", "m", Loc("a.yaml", 3, 1))) == "`a.yaml:3:1`"
