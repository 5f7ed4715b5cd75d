"""The streaming check (kvlint/stream.py): ``--jobs 1`` and ``--jobs 2`` give byte-identical reports, equal to
the whole-run pipeline's (:func:`kvlint.pipeline.run_check`), on the shared corpus and the fixtures; a large
file read in ``---`` segments gives the report of the same file read whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvlint import stream
from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
FIXTURES = ROOT / "fixtures"
FORMATS = ("text", "json", "jsonl", "sarif", "github", "junit", "markdown")


def _reports(result: object) -> dict[str, str]:
    return {name: render(name, result) for name in FORMATS}


def _inputs() -> list[str]:
    paths = [str(FIXTURES / "examples"), str(FIXTURES / "crds")]
    if CORPUS.is_dir():
        paths.insert(0, str(CORPUS))
    return [p for p in paths if os.path.isdir(p)]


@pytest.mark.parametrize("path", _inputs())
def test_jobs_give_identical_reports(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)  # fork workers even for a small input
    options = Options(allow_hub=False)
    one = run_paths([path], options, no_config=True, jobs=1).result
    assert stream.LAST_PIDS == {os.getpid()}
    two = run_paths([path], options, no_config=True, jobs=2).result
    if one.files > 1:
        # the files were analysed in worker processes (how many of the two got work depends on the machine's
        # load: a small input can be taken whole by the first worker to start)
        assert 1 <= len(stream.LAST_PIDS) <= 2 and os.getpid() not in stream.LAST_PIDS
    whole = run_check([path], options)
    assert one.diagnostics, "an input with findings"
    reports = _reports(one)
    assert _reports(two) == reports
    assert _reports(whole) == reports


def test_segments_read_like_the_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file above SEGMENT_BYTES is read in batches of segments, with ConfigMaps, runtimes and services
    from anywhere in it: same report as the file read whole, with one job and two."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/manifests not present")
    texts = [p.read_text() for p in sorted(CORPUS.glob("*.yaml"))]
    big = tmp_path / "all.yaml"
    big.write_text("".join("---\n" + t.strip("\n-") + "\n" for t in texts if "kvlint:" not in t))
    options = Options(allow_hub=False, max_file_bytes=2**26)
    whole = run_check([str(big)], options)
    monkeypatch.setattr(stream, "SEGMENT_BYTES", 2**16)
    monkeypatch.setattr(stream, "BATCH_BYTES", 2**15)
    monkeypatch.setattr(stream, "PARALLEL_MIN_BYTES", 0)
    for jobs in (1, 2):
        part = run_paths([str(big)], options, no_config=True, jobs=jobs).result
        assert _reports(part) == _reports(whole)


def test_repeated_context_and_files_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus twice over (every runtime, preset and ConfigMap repeated) with no file kept between the
    context pass and its turn (HELD_BYTES 0): each service is joined again in its turn, the repeated
    runtimes are held once, and the report is still that of the whole-input run."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/manifests not present")
    for copy in ("a", "b"):
        (tmp_path / copy).mkdir()
        for p in sorted(CORPUS.glob("*.yaml")):
            (tmp_path / copy / p.name).write_bytes(p.read_bytes())
    options = Options(allow_hub=False)
    whole = run_check([str(tmp_path)], options)
    monkeypatch.setattr(stream, "HELD_BYTES", 0)
    part = run_paths([str(tmp_path)], options, no_config=True, jobs=1).result
    assert any(d.rule == "KV502" for d in whole.diagnostics), "runtimes linted on their own among the inputs"
    assert _reports(part) == _reports(whole)
