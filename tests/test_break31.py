"""Adversarial pass on directory-walk rendering (break31): the renders of the charts and overlays a walk meets are
bounded together, not only each (kvlint.render.WALK_RENDER_BUDGET_S). Real helm and kubectl (kustomize)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint import render
from kvlint.cli import main
from kvlint.render import load_inputs

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
needs_kustomize = pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)

#: a template that loops 10^10 times writing nothing: minutes of helm's CPU on any machine, no output, no memory
_LOOP = "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n"


def _looping_chart(path: Path) -> None:
    (path / "templates").mkdir(parents=True)
    (path / "Chart.yaml").write_text(f"apiVersion: v2\nname: {path.name}\nversion: 0.1.0\n")
    (path / "templates" / "loop.yaml").write_text(_LOOP)


@needs_helm
@needs_kustomize
def test_the_renders_of_a_walk_share_one_time_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull request's charts each looping for just under the renderer's timeout held a CI runner for
    MAX_WALK_RENDERS times RENDER_TIMEOUT_S (six and a half hours): the walk's renders share one budget; the
    render running when it is spent is stopped there, the ones after it are not started, each a KV001."""
    monkeypatch.setattr(render, "WALK_RENDER_BUDGET_S", 2)
    for name in ("a", "b"):
        _looping_chart(tmp_path / "pr" / name)
    k = tmp_path / "pr" / "k"
    k.mkdir()
    (k / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (k / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    result = load_inputs([str(tmp_path / "pr")])
    by_file = {f.loc.file: f for f in result.findings if f.rule == "KV001" and f.loc is not None}
    first = by_file[str(tmp_path / "pr" / "a" / "Chart.yaml")]
    assert "did not finish within the" in first.message and "s left of the 2 s" in first.message
    for later in (tmp_path / "pr" / "b" / "Chart.yaml", k / "kustomization.yaml"):
        f = by_file[str(later)]
        assert f.message.startswith(
            "not rendered: the charts and overlays met in this directory walk had rendered"
        )
        assert "kvlint check -" in f.fix
    assert not result.documents  # (the ConfigMap of the overlay not built)


@needs_helm
def test_a_chart_named_on_the_command_line_is_not_held_to_the_walk_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The budget is the walk's: a chart the user names gets the renderer's own timeout, spent budget or not."""
    monkeypatch.setattr(render, "WALK_RENDER_BUDGET_S", 0)
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: named}\n")
    walked = tmp_path / "walk" / "w"
    shutil.copytree(chart, walked)
    result = load_inputs([str(chart), str(tmp_path / "walk")])
    assert [d.data["metadata"]["name"] for d in result.documents] == ["named"]
    assert [f.loc.file for f in result.findings if f.rule == "KV001" and f.loc is not None] == [
        str(walked / "Chart.yaml")
    ]


@needs_helm
def test_a_walk_split_by_nested_configurations_shares_one_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk split by a ``.kvlint.yaml`` beside each chart renders each part in its own call: the budget is still
    the run's (a pull request adding one configuration per chart got a budget per chart)."""
    monkeypatch.setattr(render, "WALK_RENDER_BUDGET_S", 2)
    repo = tmp_path / "pr"
    for name in ("a", "b"):
        _looping_chart(repo / name)
        (repo / name / ".kvlint.yaml").write_text("fail_on: error\n")
    (repo / ".kvlint.yaml").write_text("fail_on: error\n")
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(repo)])
    assert r.exit_code == 1, r.output
    messages = {
        Path(d["file"]).parent.name: d["message"]
        for d in json.loads(r.output)["diagnostics"]
        if d["rule"] == "KV001"
    }
    assert set(messages) == {"a", "b"}
    assert "did not finish within the" in messages["a"]
    assert messages["b"].startswith("not rendered: the charts and overlays met in this directory walk")


def _deep(top: Path, depth: int) -> Path:
    """``top/a/a/.../a`` ``depth`` levels deep (made from inside, each ``mkdir`` a one-letter relative path)."""
    here = os.getcwd()
    try:
        os.makedirs(top, exist_ok=True)
        os.chdir(top)
        for _ in range(depth):
            os.mkdir("a")
            os.chdir("a")
        return Path(os.getcwd())
    finally:
        os.chdir(here)


@needs_helm
def test_a_tree_a_thousand_directories_deep_is_walked_without_recursion(tmp_path: Path) -> None:
    """Python 3.11's os.walk recursed once a level: a pull request adding a path 1,100 one-letter directories
    deep (2.2 KB, which git checks out) made every walk of the checkout end in a RecursionError traceback
    (the nested-configuration scan, the chart and overlay plan, the file walk, a chart's link scan)."""
    try:
        _check_deep_tree(tmp_path)
    finally:  # (pytest removes old temporary directories recursively: a tree this deep would break its clean-up)
        _remove_deep(tmp_path / "pr")


def _remove_deep(top: Path) -> None:
    """Remove the tree ``top`` without recursion (shutil.rmtree recurses once a level)."""
    from kvlint.paths import walk_tree

    for here, _dirs, files in reversed(list(walk_tree(str(top)))):
        for name in files:
            os.unlink(os.path.join(here, name))
        os.rmdir(here)


def _check_deep_tree(tmp_path: Path) -> None:
    bottom = _deep(tmp_path / "pr", 1100)
    (bottom / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\n")
    chart = tmp_path / "pr" / "c"
    _deep(chart, 1100)  # (below the chart: its link scan walks it)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates").mkdir()
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chart}\n")
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(tmp_path / "pr")])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["summary"]["documents"] == 2


def test_walk_tree_walks_as_os_walk(tmp_path: Path) -> None:
    """walk_tree is os.walk without recursion: the same triples in the same order, a link to a directory listed
    and not entered, ``dirs`` pruned in place obeyed, an unreadable top handed to ``onerror``."""
    from kvlint.paths import walk_tree

    root = Path(__file__).resolve().parents[1] / "fixtures"
    assert list(walk_tree(str(root))) == list(os.walk(root))
    (tmp_path / "d" / "e").mkdir(parents=True)
    (tmp_path / "skip" / "x").mkdir(parents=True)
    (tmp_path / "f.yaml").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "d")
    mine, theirs = [], []
    for out, walk in ((mine, walk_tree(str(tmp_path))), (theirs, os.walk(tmp_path))):
        for here, dirs, files in walk:
            dirs[:] = sorted(d for d in dirs if d != "skip")
            out.append((here, dirs[:], sorted(files)))
    assert mine == theirs and any("link" in dirs for _, dirs, _ in mine)
    errors: list[OSError] = []
    assert list(walk_tree(str(tmp_path / "missing"), errors.append)) == [] and len(errors) == 1


@needs_helm
def test_the_renders_of_a_walk_share_one_output_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kvlint holds what a run renders (about 36 times its size): the walk's renders together print at most
    WALK_RENDER_BYTES times --max-file-bytes; the charts left once that is printed are not started, each a KV001."""
    monkeypatch.setattr(render, "WALK_RENDER_BYTES", 1)
    for name in ("a", "b", "c"):
        chart = tmp_path / "pr" / name
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        (chart / "templates" / "cm.yaml").write_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "
            + name
            + "}\ndata: {pad: '"
            + "x" * 500
            + "'}\n"
        )
    result = load_inputs([str(tmp_path / "pr")], max_file_bytes=1000)
    assert sorted(d.data["metadata"]["name"] for d in result.documents) == ["a", "b"]
    (skipped,) = [f for f in result.findings if f.rule == "KV001"]
    assert skipped.loc is not None and skipped.loc.file == str(tmp_path / "pr" / "c" / "Chart.yaml")
    assert skipped.message.startswith(
        "not rendered: the charts and overlays met in this directory walk had printed"
    )
