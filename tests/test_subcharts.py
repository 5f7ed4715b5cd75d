"""A chart inside another chart's ``charts/`` directory is a subchart: helm renders it only through its parent,
with the values the parent sets under its name. A directory walk renders the outermost chart only (the subchart
through it); without helm it reads their files, and the KV002 of a subchart's raw template or values file names the
outermost parent chart to lint, not the subchart (which, rendered alone, takes its own defaults). Given with its parent, a subchart is not rendered a second time alone (its own defaults
gave a false KV201 below); given alone, it is rendered and an info says its parent's values were not applied.
The umbrella chart is made up in the shape of a parent chart vendoring an engine chart (``dependencies`` with
the chart copied into ``charts/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.load import outermost_chart, parent_charts
from kvlint.options import Options
from kvlint.pipeline import run_check

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")

_FILES = {
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- {name: engine, version: 0.1.0}\n",
    "app/values.yaml": "engine:\n  model: Qwen/Qwen2.5-7B-Instruct\n",
    "app/templates/ui.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-ui'}\n",
    "app/charts/engine/Chart.yaml": "apiVersion: v2\nname: engine\nversion: 0.1.0\n",
    # the subchart's own default: a model whose 2,048-token context the chart's --max-model-len 4096 exceeds
    "app/charts/engine/values.yaml": "model: facebook/opt-125m\n",
    "app/charts/engine/templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: '{{ .Release.Name }}-engine'}
spec:
  selector: {matchLabels: {app: engine}}
  template:
    metadata: {labels: {app: engine}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "{{ .Values.model }}", "--max-model-len", "4096"]
        resources: {limits: {nvidia.com/gpu: 1}}
""",
}


def _repo(tmp_path: Path) -> Path:
    for rel, text in _FILES.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return tmp_path


def test_parent_charts_climb_through_charts_directories(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    leaf = root / "app" / "charts" / "engine" / "charts" / "leaf"
    leaf.mkdir(parents=True)
    (leaf / "Chart.yaml").write_text("apiVersion: v2\nname: leaf\nversion: 0.1.0\n")
    assert parent_charts(str(leaf)) == [str(root / "app" / "charts" / "engine"), str(root / "app")]
    assert outermost_chart(str(leaf)) == str(root / "app")
    assert outermost_chart(str(root / "app")) == str(root / "app")
    # a folder named charts/ that is no chart's (a repository's layout) makes no subchart
    (root / "other" / "charts" / "x").mkdir(parents=True)
    assert parent_charts(str(root / "other" / "charts" / "x")) == []


def test_a_walk_without_helm_names_the_parent_chart_for_the_subcharts_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm: the walk reads the charts' files as plain files
    kv002 = {
        d.loc.file: d.fix
        for d in run_check([str(root)], Options(allow_hub=False)).diagnostics
        if d.rule == "KV002" and d.loc is not None
    }
    app = root / "app"
    for rel in ("charts/engine/templates/deployment.yaml", "charts/engine/values.yaml"):
        fix = kv002[str(app / rel)]
        assert f"kvlint check {app} ({app / 'charts' / 'engine'} is a subchart of it" in fix
    assert f"kvlint check {app} (kvlint renders" in kv002[str(app / "templates" / "ui.yaml")]


@needs_helm
def test_a_walk_renders_the_subchart_only_through_its_parent(tmp_path: Path) -> None:
    """The walk renders the parent chart, whose values give the subchart its model: no KV201 from the subchart's
    own default, no KV002 on its files, and it is not rendered alone."""
    root = _repo(tmp_path)
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(root)])
    report = json.loads(r.stdout)
    assert not [d for d in report["diagnostics"] if d["rule"] in ("KV201", "KV002")]
    assert [(w["name"], w["model"]) for w in report["workloads"]] == [
        ("app-engine", "Qwen/Qwen2.5-7B-Instruct")
    ]


@needs_helm
@pytest.mark.parametrize("stream", [False, True])
def test_a_subchart_given_with_its_parent_is_rendered_through_it_only(tmp_path: Path, stream: bool) -> None:
    root = _repo(tmp_path)
    app, engine = root / "app", root / "app" / "charts" / "engine"
    if stream:
        r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(app), str(engine)])
        out = r.stdout
        assert "KV201" not in out and "facebook/opt-125m" not in out
        assert f"this chart is a subchart of {app}, which is also linted" in out
        return
    diags = run_check([str(app), str(engine)], Options(allow_hub=False)).diagnostics
    assert not [d for d in diags if d.rule == "KV201"]
    (note,) = [d for d in diags if d.rule == "KV002"]
    assert note.severity == "info" and note.loc is not None and note.loc.file == str(engine / "Chart.yaml")


@needs_helm
def test_a_subchart_given_alone_is_rendered_and_says_whose_values_it_lacks(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    app, engine = root / "app", root / "app" / "charts" / "engine"
    diags = run_check([str(engine)], Options(allow_hub=False)).diagnostics
    assert any(d.rule == "KV201" for d in diags)  # its own default model, as helm renders it alone
    (note,) = [d for d in diags if d.rule == "KV002"]
    assert f"subchart of {app}: kvlint rendered it alone" in note.message
    assert note.fix == f"lint what is deployed: kvlint check {app}"
