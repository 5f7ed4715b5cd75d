"""A directory walk does not read a symbolic link whose target is outside the directory walked (kustomize's
LoadRestrictionsRootOnly): a pull request's ``x.yaml -> /proc/self/environ`` must not make the Action read the
runner's files. A KV001 info note stands at the link; a link inside the tree and a file named on the command
line are read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
SRC = (ROOT / "fixtures" / "rules" / "KV408" / "vllm.yaml").read_text()

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="symbolic links")


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """``tree/`` with ``in.yaml`` (a link to ``tree/real/a.yaml``) and ``sub/out.yaml`` (a link to
    ``secret/s.yaml`` beside the tree); both targets hold the KV408 fixture."""
    tree = tmp_path / "tree"
    (tree / "real").mkdir(parents=True)
    (tree / "sub").mkdir()
    (tree / "real" / "a.yaml").write_text(SRC)
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "s.yaml").write_text(SRC)
    inside = tree / "in.yaml"
    inside.symlink_to(Path("real") / "a.yaml")
    outside = tree / "sub" / "out.yaml"
    outside.symlink_to(tmp_path / "secret" / "s.yaml")
    (tree / "dir").symlink_to(tmp_path / "secret", target_is_directory=True)
    return tree, inside, outside


def _runs(paths: list[str]) -> list[object]:
    options = Options(allow_hub=False)
    return [run_paths(paths, options, no_config=True).result, run_check(paths, options)]


def test_a_link_out_of_the_walked_directory_is_not_read(tmp_path: Path) -> None:
    tree, inside, outside = _tree(tmp_path)
    for result in _runs([str(tree)]):
        files = {d.loc.file for d in result.diagnostics if d.rule == "KV408"}  # type: ignore[attr-defined]
        # the tree's file is read once (under the link's name, the first met); the target outside, through the
        # link or the linked directory, not at all
        assert files == {str(inside)}
        notes = [d for d in result.diagnostics if d.rule == "KV001"]  # type: ignore[attr-defined]
        assert len(notes) == 1
        note = notes[0]
        assert note.severity == "info"
        assert (note.loc.file, note.loc.line) == (str(outside), 1)
        assert f"outside the directory walked ({tree}), to {tmp_path / 'secret' / 's.yaml'}" in note.message
        assert result.files == 1  # type: ignore[attr-defined]


def test_a_link_named_on_the_command_line_is_read(tmp_path: Path) -> None:
    _, _, outside = _tree(tmp_path)
    for result in _runs([str(outside)]):
        assert [d for d in result.diagnostics if d.rule == "KV408"]  # type: ignore[attr-defined]
        assert not [d for d in result.diagnostics if d.rule == "KV001"]  # type: ignore[attr-defined]
