"""bench/check_corpus.py's floor (issue 19): what it measures, not how fast (no timed test)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import check_corpus  # noqa: E402

pytest.importorskip("yaml")


def test_floor_counts_the_files_libyaml_stops_in(tmp_path: Path) -> None:
    good = tmp_path / "a.yaml"
    good.write_text("a: 1\n---\nb: 2\n---\nc: 3\n")
    bad = tmp_path / "b.yaml"  # one document, then a template line libyaml cannot parse
    bad.write_text("x: 1\n---\ny: {{ .Values.y }}\n---\nz: 3\n")
    secs, docs, errors = check_corpus.floor([good, bad])
    assert secs >= 0
    assert (docs, errors) == (4, 1)


def test_floor_does_not_scan_what_was_alive_before_it(tmp_path: Path) -> None:
    """The objects alive before the floor (in the bench: kvlint's warm-up run) are frozen while it runs, so
    its collections do not scan them; the freeze is undone after."""
    if not hasattr(gc, "get_freeze_count"):
        pytest.skip("gc.freeze needs Python 3.7+")
    alive = [{"k": i} for i in range(20000)]  # GC-tracked, like kvlint's catalogues and memos
    doc = "".join(f"k{i}: [a, b, {{c: {i}}}]\n" for i in range(50))
    path = tmp_path / "many.yaml"
    path.write_text("---\n".join([doc] * 40))  # enough container objects to trigger young collections
    frozen_at_collection: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        # gc.get_freeze_count() walks the whole permanent generation (everything the test session holds
        # frozen): sample the first collections only, or the test costs seconds per collection
        if phase == "start" and len(frozen_at_collection) < 5:
            frozen_at_collection.append(gc.get_freeze_count())

    was_enabled = gc.isenabled()
    gc.enable()
    gc.callbacks.append(watch)
    try:
        _, docs, errors = check_corpus.floor([path])
    finally:
        gc.callbacks.remove(watch)
        if not was_enabled:
            gc.disable()
    assert (docs, errors) == (40, 0)
    assert frozen_at_collection, "the floor's load triggered no collection: the test input is too small"
    assert min(frozen_at_collection) >= len(alive)
    assert gc.get_freeze_count() == 0
