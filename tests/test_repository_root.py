"""One helper finds the git repository holding a path (:func:`kvlint.load.repository_root`): the configuration's
"outside the repository" check (:mod:`kvlint.config`, on real paths) and the GitOps reader's checkout root
(:mod:`kvlint.workloads.gitops_local`, on paths as written) both use it; they were two copies that differed in
small ways (real vs written path, ``exists`` vs ``lexists``, a depth cap in one)."""

from __future__ import annotations

import os
from pathlib import Path

import kvlint.config as config
import kvlint.workloads.gitops_local as gitops_local
from kvlint.load import repository_root


def test_a_git_directory_or_a_worktree_file_marks_the_root(tmp_path: Path) -> None:
    (tmp_path / "a" / ".git").mkdir(parents=True)
    (tmp_path / "a" / "deep" / "er").mkdir(parents=True)
    assert repository_root(str(tmp_path / "a" / "deep" / "er")) == str(tmp_path / "a")
    (tmp_path / "wt" / "x").mkdir(parents=True)
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert repository_root(str(tmp_path / "wt" / "x")) == str(tmp_path / "wt")
    (tmp_path / "none").mkdir()
    assert repository_root(str(tmp_path / "none")) in (None, *[str(p) for p in tmp_path.parents])


def test_resolve_gives_the_real_path_and_the_default_the_path_as_written(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "apps").mkdir()
    os.symlink(tmp_path / "repo", tmp_path / "link")
    written = str(tmp_path / "link" / "apps")
    assert repository_root(written) == str(tmp_path / "link")
    assert repository_root(written, resolve=True) == os.path.realpath(tmp_path / "repo")


def test_the_configuration_and_the_gitops_reader_share_it(tmp_path: Path) -> None:
    assert not hasattr(config, "_repository_root")
    assert gitops_local._repository_root is repository_root
    (tmp_path / ".git").mkdir()
    f = tmp_path / "apps" / "app.yaml"
    f.parent.mkdir()
    f.write_text("kind: Application\n")
    assert gitops_local.repository_root(str(f)) == repository_root(str(f.parent)) == str(tmp_path)
    assert gitops_local.repository_root("-") is None
