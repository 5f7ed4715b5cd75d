"""A chart helm refuses is a KV001 at the place helm names (kvlint.render._helm_failure): the template line of a
``required``/``fail``/nil pointer/parse error, the ``dependencies`` entry of a dependency missing from ``charts/``
(with the command that fetches it), rather than line 1 of ``Chart.yaml``. Rendered with the real helm, offline."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from kvlint.render import load_inputs

pytestmark = pytest.mark.skipif(
    shutil.which("helm") is None, reason="needs helm on PATH (the dev extras install it)"
)

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: [--model, {{ required "set model to the hub id" .Values.model | quote }}]
"""


def _chart(root: Path, name: str = "serving", *, values: str = "model: ''\n", deps: str = "") -> Path:
    (root / "templates").mkdir(parents=True)
    (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n" + deps)
    (root / "values.yaml").write_text(values)
    (root / "templates" / "deployment.yaml").write_text(DEPLOYMENT)
    return root


def _kv001(paths: list[str], **kw):
    loaded = load_inputs(paths, **kw)
    (finding,) = [f for f in loaded.findings if f.rule == "KV001"]
    return finding


def _at(path: Path, text: str) -> tuple[int, int]:
    """(line, column) of ``text`` in ``path``, both 1-based."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return i, line.index(text) + 1
    raise AssertionError(text)


def test_required_value_points_at_the_template_line(tmp_path: Path) -> None:
    chart = _chart(tmp_path / "chart")
    f = _kv001([str(chart)])
    tpl = chart / "templates" / "deployment.yaml"
    assert "set model to the hub id" in f.message
    assert (f.loc.file, (f.loc.line, f.loc.column)) == (str(tpl), _at(tpl, "required"))


def test_nil_pointer_and_parse_error_point_at_their_lines(tmp_path: Path) -> None:
    chart = _chart(tmp_path / "chart", values="model: m\n")
    bad = chart / "templates" / "bad.yaml"
    bad.write_text("# a comment\nname: {{ .Values.a.b.c }}\n")
    f = _kv001([str(chart)])
    assert "nil pointer" in f.message
    # the column is the one Go's text/template names (a field of the chain), inside the action
    line, col = _at(bad, ".Values.a.b.c")
    assert (f.loc.file, f.loc.line) == (str(bad), line) and col <= f.loc.column < col + len(".Values.a.b.c")
    bad.write_text("# a comment\n\n{{ if }}\n")
    f = _kv001([str(chart)])
    assert f.loc.file == str(bad) and f.loc.line == _at(bad, "{{ if }}")[0]


def test_subchart_template_error_points_into_the_subchart(tmp_path: Path) -> None:
    """An unpacked subchart's file is named; a packed one's is not on disk, so the finding stays at Chart.yaml."""
    chart = _chart(
        tmp_path / "chart", values="model: m\n", deps="dependencies:\n  - name: engine\n    version: 0.1.0\n"
    )
    sub = _chart(chart / "charts" / "engine", "engine")
    f = _kv001([str(chart)])
    tpl = sub / "templates" / "deployment.yaml"
    assert (f.loc.file, (f.loc.line, f.loc.column)) == (str(tpl), _at(tpl, "required"))

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tgz:
        tgz.add(sub, arcname="engine")
    shutil.rmtree(sub)
    (chart / "charts" / "engine-0.1.0.tgz").write_bytes(buf.getvalue())
    f = _kv001([str(chart)])
    assert "execution error at (serving/charts/engine/templates/deployment.yaml" in f.message
    assert (f.loc.file, f.loc.line) == (str(chart / "Chart.yaml"), 1)


def test_missing_dependency_points_at_its_entry_with_the_command_to_fetch_it(tmp_path: Path) -> None:
    deps = (
        "dependencies:\n"
        "  - name: common\n    version: 2.27.0\n    repository: https://charts.bitnami.com/bitnami\n"
        "  - name: open-webui\n    version: 6.4.0\n    repository: https://helm.openwebui.com/\n"
        "    condition: open-webui.enabled\n"
    )
    chart = _chart(tmp_path / "chart", values="model: m\nopen-webui:\n  enabled: false\n", deps=deps)
    f = _kv001([str(chart)])
    assert "missing in charts/ directory" in f.message
    assert (f.loc.file, f.loc.line) == (
        str(chart / "Chart.yaml"),
        _at(chart / "Chart.yaml", "name: common")[0],
    )
    assert f"helm dependency build {chart}" in f.fix and "common, open-webui" in f.fix


def test_required_value_fix_names_the_key_to_set(tmp_path: Path) -> None:
    """Intel's TGI chart (fixtures/collected/trees/intel-ai-containers-tgi) fails on ``.Values.secret.encodedToken |
    required "..."``; the fix said "run `helm template ...` and fix what it reports". It now names the value and the
    --helm-set that gives it, for both spellings of ``required``; a line with no single ``.Values`` key keeps the
    general fix."""
    chart = _chart(tmp_path / "call")
    f = _kv001([str(chart)])
    assert "requires the value model" in (f.fix or ""), f.fix
    assert f"kvlint check {chart} --helm-set model=VALUE" in (f.fix or ""), f.fix
    pipe = _chart(tmp_path / "pipe", values="secret: {}\nmodel: m\n")
    (pipe / "templates" / "secret.yaml").write_text(
        '{{- $t := .Values.secret.encodedToken | required ".Values.secret.encodedToken is required" -}}\nkind: Secret\n'
    )
    f = _kv001([str(pipe)])
    assert "requires the value secret.encodedToken" in (f.fix or ""), f.fix
    both = _chart(tmp_path / "both", values="a: ''\nb: ''\nmodel: m\n")
    (both / "templates" / "x.yaml").write_text(
        'x: {{ required "a" .Values.a }}{{ required "b" .Values.b }}\n'
    )
    f = _kv001([str(both)])
    assert "requires the value" not in (f.fix or "") and "fix what it reports" in (f.fix or ""), f.fix
    collected = (
        Path(__file__).resolve().parents[1] / "fixtures" / "collected" / "trees" / "intel-ai-containers-tgi"
    )
    f = _kv001([str(collected)])
    assert "--helm-set secret.encodedToken=VALUE" in (f.fix or ""), f.fix


def test_required_value_of_a_subchart_is_set_under_its_name(tmp_path: Path) -> None:
    """A subchart's ``.Values.model`` is the parent's ``engine.model`` (Helm scopes a subchart's values under its
    name, or its ``alias``, as the error's path names it); ``global.x`` stays global. ``--helm-set model=VALUE``
    would set the parent's own value and leave the subchart's empty, so helm fails the same way."""
    chart = _chart(
        tmp_path / "chart", values="model: m\n", deps="dependencies:\n  - name: engine\n    version: 0.1.0\n"
    )
    sub = _chart(chart / "charts" / "engine", "engine")
    f = _kv001([str(chart)])
    assert f"kvlint check {chart} --helm-set engine.model=VALUE" in (f.fix or ""), f.fix
    (sub / "templates" / "deployment.yaml").write_text(
        DEPLOYMENT.replace(
            'required "set model to the hub id" .Values.model', 'required "g" .Values.global.hub'
        )
    )
    f = _kv001([str(chart)])
    assert "--helm-set global.hub=VALUE" in (f.fix or ""), f.fix


def test_required_value_of_an_aliased_subchart(tmp_path: Path) -> None:
    """A dependency with an ``alias`` is named by it in helm's error (``serving/charts/eng2/templates/...``), and
    its values sit under it: the finding is at the subchart's template line (was Chart.yaml line 1, the general
    fix) and the fix sets ``eng2.model``."""
    chart = _chart(
        tmp_path / "chart",
        values="model: m\n",
        deps="dependencies:\n  - name: engine\n    version: 0.1.0\n    alias: eng2\n",
    )
    sub = _chart(chart / "charts" / "engine", "engine")
    f = _kv001([str(chart)])
    tpl = sub / "templates" / "deployment.yaml"
    assert "execution error at (serving/charts/eng2/templates/deployment.yaml" in f.message
    assert (f.loc.file, (f.loc.line, f.loc.column)) == (str(tpl), _at(tpl, "required"))
    assert "--helm-set eng2.model=VALUE" in (f.fix or ""), f.fix


def test_a_failures_fix_is_the_helm_command_a_user_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix of a ``helm template`` failure kvlint cannot place (here a template that is not valid YAML once
    rendered) is the command as a user types it: ``helm template CHART -f VALUES --set K=V``, not kvlint's own
    safeguarded argv (``helm template -- c c``: a ``--`` and a release name made up from the directory, ux50);
    run as shown, in the same directory, helm fails the same way."""
    import shlex
    import subprocess

    chart = _chart(tmp_path / "c")
    (chart / "templates" / "broken.yaml").write_text("a: {{ .Values.model }}\n  b: [\n")
    (tmp_path / "prod values.yaml").write_text("model: org/name\n")
    monkeypatch.chdir(tmp_path)
    f = _kv001(["c"], helm_values=["prod values.yaml"], helm_set=["extra=1"])
    assert f.fix is not None and f.fix.startswith("run `"), f.fix
    shown = f.fix.split("`")[1]
    assert shown == "helm template c -f 'prod values.yaml' --set extra=1", shown
    assert " -- " not in shown
    argv = shlex.split(shown)
    run = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert run.returncode != 0 and "broken.yaml" in run.stderr, run.stderr
    assert "broken.yaml" in f.message
