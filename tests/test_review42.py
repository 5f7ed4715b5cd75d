"""Review of the verify28/chartmap28/tidy28 merges: the defects found, each with the test that failed before its
fix (review42)."""

from __future__ import annotations

import os
from pathlib import Path

from kvlint.paths import real_path_inside


def test_a_resolved_root_that_is_relative_is_not_read_against_nothing(tmp_path: Path) -> None:
    """``resolved=True`` says the root is a real path already; an empty one stripped of its separators was the
    prefix ``/``, so every path was inside it, and a relative one (``chart``) held not even itself. A relative
    root is resolved from the working directory, as without ``resolved``."""
    assert not real_path_inside("/etc/passwd", "", resolved=True)
    assert not real_path_inside("/etc/passwd", "", below=True, resolved=True)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert real_path_inside(chart / "templates", "chart", below=True, resolved=True)
        assert real_path_inside("chart", "chart", resolved=True)
        assert not real_path_inside(tmp_path, "chart", resolved=True)
    finally:
        os.chdir(cwd)


def test_a_resolved_root_written_with_a_trailing_separator_holds_itself(tmp_path: Path) -> None:
    """The directory itself is in it (``below`` False) however its real path is written."""
    root = os.path.realpath(tmp_path)
    assert real_path_inside(root, root + os.sep, resolved=True)
    assert not real_path_inside(root, root + os.sep, below=True, resolved=True)
    assert real_path_inside(os.sep, os.sep, resolved=True)
    assert real_path_inside(os.path.join(root, "x"), os.sep, below=True, resolved=True)
