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


def test_a_chain_of_links_out_is_named_to_its_end(tmp_path: Path) -> None:
    """``b.yaml -> a.yaml -> secret/s.yaml``: the note named only the first hop (``to a.yaml``, a file beside the
    link, as if inside the tree); it names each hop as its link writes it, to the file outside."""
    tree, _, _ = _tree(tmp_path)
    (tree / "a.yaml").symlink_to(tmp_path / "secret" / "s.yaml")
    (tree / "b.yaml").symlink_to("a.yaml")
    (tree / "c.yaml").symlink_to(Path("dir") / "s.yaml")  # a relative hop through the linked directory
    for result in _runs([str(tree)]):
        notes = {d.loc.file: d.message for d in result.diagnostics if d.rule == "KV001"}  # type: ignore[attr-defined]
        secret = tmp_path / "secret" / "s.yaml"
        assert notes[str(tree / "a.yaml")].endswith(
            f"), to {secret}; kvlint reads only files inside a directory it walks"
        )
        assert f"), to a.yaml -> {secret}; " in notes[str(tree / "b.yaml")]
        assert f"), to {Path('dir') / 's.yaml'} ({os.path.realpath(secret)}); " in notes[str(tree / "c.yaml")]


def test_a_long_chain_or_a_loop_of_links_is_named_bounded(tmp_path: Path) -> None:
    from kvlint.load import MAX_LINK_HOPS, link_chain

    end = tmp_path / "end.yaml"
    end.write_text("a: 1\n")
    (tmp_path / "l0").symlink_to(end)
    for i in range(1, 3 * MAX_LINK_HOPS):
        (tmp_path / f"l{i}").symlink_to(f"l{i - 1}")
    last = tmp_path / f"l{3 * MAX_LINK_HOPS - 1}"
    shown = link_chain(str(last))
    assert shown.count(" -> ") == MAX_LINK_HOPS and shown.endswith(f" -> ... ({os.path.realpath(end)})")
    (tmp_path / "x").symlink_to("y")
    (tmp_path / "y").symlink_to("x")
    assert link_chain(str(tmp_path / "x")) == "y -> x (a loop)"
