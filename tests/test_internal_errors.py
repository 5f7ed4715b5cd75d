"""A crash in kvlint's own code on one input becomes a KV503 at that input, never a traceback that hides the
other files' findings: the per-workload net (kvlint.pipeline._analyse_workloads), the per-document one of the
recognisers of unrendered files (kvlint.render.unrendered_or_error) and the per-unit one of the streaming run
(kvlint.stream._analyse_unit). Each is tested by making a real helper the code under test calls raise."""

from __future__ import annotations

from pathlib import Path

import pytest

import kvlint.render
import kvlint.workloads
from kvlint import stream
from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.render import COULD_NOT_FINISH

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "fixtures" / "rules" / "KV408" / "vllm.yaml"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A directory with the KV408 fixture (a finding to keep) and ``bad.yaml`` (a Service on line 3)."""
    good = tmp_path / "good.yaml"
    good.write_text(GOOD.read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "# a comment\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"
    )
    return good, bad


def _crashes(diags: object) -> list[object]:
    return [d for d in diags if d.rule == "KV503" and COULD_NOT_FINISH in d.message]  # type: ignore[attr-defined]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_reading_a_document_as_chart_values_is_a_kv503_at_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    good, bad = _tree(tmp_path)
    real = kvlint.render._values_reason

    def raising(doc: object) -> tuple[str, tuple[str, ...], bool] | None:
        if str(getattr(doc, "path", "")).endswith("bad.yaml"):
            raise TypeError("unhashable type: 'dict'")
        return real(doc)  # type: ignore[arg-type]

    monkeypatch.setattr(kvlint.render, "_values_reason", raising)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    options = Options(allow_hub=False)
    for result in (
        run_paths([str(tmp_path)], options, no_config=True, jobs=jobs).result,
        run_check([str(tmp_path)], options),
    ):
        crashes = _crashes(result.diagnostics)
        assert len(crashes) == 1
        d = crashes[0]
        assert (d.loc.file, d.loc.line) == (str(bad), 3)  # type: ignore[attr-defined]
        assert "this document (TypeError: unhashable type: 'dict')" in d.message  # type: ignore[attr-defined]
        assert [x for x in result.diagnostics if x.rule == "KV408" and x.loc.file == str(good)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_finding_a_files_workloads_is_a_kv503_at_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    good, bad = _tree(tmp_path)
    real = kvlint.workloads.find_workloads

    def raising(docs: list, **kw: object) -> object:
        if any(d.path.endswith("bad.yaml") for d in docs):
            raise RecursionError("maximum recursion depth exceeded")
        return real(docs, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(kvlint.workloads, "find_workloads", raising)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    result = run_paths([str(tmp_path)], Options(allow_hub=False), no_config=True, jobs=jobs).result
    crashes = _crashes(result.diagnostics)
    assert len(crashes) == 1
    d = crashes[0]
    assert (d.loc.file, d.loc.line) == (str(bad), 1)  # type: ignore[attr-defined]
    assert "this file (RecursionError: maximum recursion depth exceeded)" in d.message  # type: ignore[attr-defined]
    assert [x for x in result.diagnostics if x.rule == "KV408" and x.loc.file == str(good)]
    assert result.files == 2
