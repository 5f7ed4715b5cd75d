"""Mends of stop 27 (tidy27): one climb to a checkout's root, shared texts and constants instead of copies."""

from __future__ import annotations

import os
from pathlib import Path

import kvlint.load as load
import kvlint.render as render


def _chart_reading(directory: Path, value: str) -> Path:
    """A minimal chart at ``directory`` whose one template reads ``.Values.<value>``."""
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {directory.name}\nversion: 0.1.0\n")
    (directory / "templates" / "deployment.yaml").write_text("{{ .Values." + value + " }}\n")
    return directory


def test_a_values_file_deep_in_a_checkout_still_names_its_chart(tmp_path: Path) -> None:
    """The search for a values file's chart stopped looking for the checkout's root 13 directories up, so a file
    deeper than that in a checkout was taken as outside any and named no chart; the one climb
    (:func:`kvlint.load.directories_to_repository_root`) goes to the root however deep the file is."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    near = repo.joinpath(*[f"d{i}" for i in range(12)])
    chart = _chart_reading(near / "charts" / "serving", "workload.image")
    values = near / "envs" / "prod" / "values.yaml"
    values.parent.mkdir(parents=True)
    values.write_text("workload:\n  image:\n")
    assert len(values.parent.relative_to(repo).parts) == 14
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) == str(chart)
    # the same tree outside a checkout names none (kvlint searches only a repository for the chart)
    (repo / ".git").rmdir()
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) is None
    load._charts_under.cache_clear()


def test_the_rendered_files_chart_search_climbs_as_far_as_the_repository_root(tmp_path: Path) -> None:
    """:func:`kvlint.render._search_places` lists the directories of that one climb, then the cwd: its last
    directory is :func:`kvlint.load.repository_root`, a ``.git`` that is a dangling link (a worktree whose main
    checkout moved) included, as git and the configuration's search take it."""
    repo = tmp_path / "repo"
    deep = repo / "deploy" / "rendered"
    deep.mkdir(parents=True)
    (repo / ".git").symlink_to(tmp_path / "moved")
    assert not (repo / ".git").exists()
    render.clear_file_cache()
    places = render._search_places(str(deep / "out.yaml"))
    render.clear_file_cache()
    assert places == [str(deep), str(repo / "deploy"), str(repo), os.getcwd()]
    assert load.repository_root(str(deep)) == places[-2]
    assert load.directories_to_repository_root(str(deep)) == (places[:-1], True)


def test_one_climb_serves_the_repository_root_the_values_search_and_the_rendered_files_search() -> None:
    assert not hasattr(load, "_checkout_root")
    assert render.directories_to_repository_root is load.directories_to_repository_root
