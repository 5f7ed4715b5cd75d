"""Adversarial pass on directory-walk rendering (break31): the renders of the charts and overlays a walk meets are
bounded together, not only each (kvlint.render.WALK_RENDER_BUDGET_S). Real helm and kubectl (kustomize)."""

from __future__ import annotations

import json
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
