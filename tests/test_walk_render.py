"""Charts and kustomizations met in a directory walk are rendered (kvlint.render.plan_walk), as kube-linter lints
what the Helm charts and kustomize directories it meets in a walk render: a chart with its own values.yaml, its
files not read again as plain files (no KV002 per template or values file), the other values files beside it named
once; of the kustomizations, the overlays (the roots of their reference graph), a base an overlay of the walk
builds on linted only through it (no KV405 the overlays fix, one info); a remote base stays a KV001. Without helm or
kubectl/kustomize on PATH the walk reads those directories as plain files, as before, with one loud note, and
does not end the run with exit code 2. Every test renders with the real helm and kubectl (kustomize)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from walk_trees import (
    APPLICATION,
    CHAT_CHART,
    DEPLOYMENT,
    GPU_PATCH,
    ROOT,
    needs_helm,
    needs_kustomize,
    offline_diags,
)

from kvlint import render
from kvlint.cli import main
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic


def _infra(tmp_path: Path) -> Path:
    """An infra repository: a chart (with a values-prod.yaml beside it), a kustomize base without GPUs and two
    overlays that give it one, and a plain manifest."""
    repo = tmp_path / "deploy"
    shutil.copytree(CHAT_CHART, repo / "charts" / "chat")
    (repo / "charts" / "chat" / "values-prod.yaml").write_text("maxModelLen: 8192\n")
    (repo / "kustomize" / "base").mkdir(parents=True)
    (repo / "kustomize" / "base" / "deployment.yaml").write_text(DEPLOYMENT)
    (repo / "kustomize" / "base" / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    for name in ("l4", "l4-canary"):
        d = repo / "kustomize" / "overlays" / name
        d.mkdir(parents=True)
        (d / "kustomization.yaml").write_text(
            f"nameSuffix: -{name}\nresources:\n- ../../base\npatches:\n- path: patch.yaml\n"
        )
        (d / "patch.yaml").write_text(GPU_PATCH)
    (repo / "plain.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n")
    return repo


def _serving(paths: list[str]) -> set[tuple[str, str, str]]:
    """(kind, name, file) of every serving container's workload."""
    return {
        (cr.workload.doc.kind or "", cr.workload.doc.name or "", cr.workload.doc.path)
        for cr in run_check(paths, Options(allow_hub=False)).containers
    }


@needs_helm
@needs_kustomize
def test_a_walk_renders_the_chart_and_the_overlays(tmp_path: Path) -> None:
    repo = _infra(tmp_path)
    chart = repo / "charts" / "chat"
    base = repo / "kustomize" / "base"
    diags = offline_diags([str(repo)])
    # the chart, rendered with its values.yaml: its findings at the template's line, on the rendered object
    template = str(chart / "templates" / "deployment.yaml")
    on_chart = [d for d in diags if d.loc is not None and d.loc.file == template]
    assert on_chart and {d.object for d in on_chart} == {"Deployment/chat-chat"}
    assert "KV103" in {d.rule for d in on_chart}  # its values.yaml leaves --max-model-len out
    # no raw template or values file linted as a plain file
    assert not [d for d in diags if d.rule == "KV002" and d.severity != "info"]
    assert not [d for d in diags if "unrendered" in d.message or "is a Helm values file" in d.message]
    # values-prod.yaml named once, with the command that applies it
    (values,) = [d for d in diags if d.loc is not None and d.loc.file == str(chart / "Chart.yaml")]
    assert values.rule == "KV002" and values.severity == "info" and "values-prod.yaml" in values.message
    assert f"kvlint check {chart} --helm-values {chart / 'values-prod.yaml'}" in (values.fix or "")
    # the overlays are built (each a GPU, through the patch), the base only through them: no KV405, one note
    serving = _serving([str(repo)])
    assert {(k, n) for k, n, _ in serving} == {
        ("Deployment", "chat-chat"),
        ("Deployment", "vllm-l4"),
        ("Deployment", "vllm-l4-canary"),
    }
    assert {f for _, n, f in serving if n.startswith("vllm")} == {str(base / "deployment.yaml")}
    assert not [d for d in diags if d.rule == "KV405"]
    (note,) = [d for d in diags if d.loc is not None and d.loc.file == str(base / "kustomization.yaml")]
    assert note.severity == "info" and "is a base of" in note.message
    for name in ("l4", "l4-canary"):
        assert str(repo / "kustomize" / "overlays" / name) in note.message
    # the sizing line counts nothing as not read
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(repo)])
    assert "not read" not in r.stdout and "sized 3 of 3 serving containers" in r.stdout


@needs_helm
@needs_kustomize
def test_the_same_walk_given_alone_is_what_naming_each_gives(tmp_path: Path) -> None:
    """The walk's findings are those of naming the chart and each overlay (the notes on the walk aside)."""
    repo = _infra(tmp_path)
    (repo / ".git").mkdir()  # a repository (the overlays' bases are confined to it when named alone)
    overlays = [str(repo / "kustomize" / "overlays" / n) for n in ("l4", "l4-canary")]

    def key(d: Diagnostic) -> tuple[object, ...]:
        return (d.rule, d.loc, d.object, d.message)

    walk = {key(d) for d in offline_diags([str(repo)]) if d.severity != "info" or d.rule != "KV002"}
    named = {
        key(d) for d in offline_diags([str(repo / "charts" / "chat"), *overlays, str(repo / "plain.yaml")])
    }
    assert walk == named


@needs_helm
@needs_kustomize
def test_jobs_1_and_jobs_2_print_the_same(tmp_path: Path) -> None:
    repo = _infra(tmp_path)
    outs = []
    for jobs in ("1", "2"):
        for fmt in ("text", "json"):
            args = ["check", "--offline", "--no-config", "--jobs", jobs, "--format", fmt, str(repo)]
            r = CliRunner().invoke(main, args)
            assert r.exit_code == 1, r.output
            outs.append(r.stdout)
    assert outs[:2] == outs[2:]
    names = {w["name"] for w in json.loads(outs[1])["workloads"]}
    assert names == {"chat-chat", "vllm-l4", "vllm-l4-canary"}


def test_without_helm_or_kubectl_the_walk_reads_plain_files_with_one_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No renderer on PATH: not exit 2, the files read as before (a template's KV002, the base's KV405), and one
    warning per missing tool saying what was not rendered, why and the fix."""
    repo = _infra(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert render.kustomize_command(".") is None and shutil.which("helm") is None
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(repo)])
    assert r.exit_code == 0, r.output  # (warnings only: not the exit code 2 of a named chart without helm)
    found = json.loads(r.stdout)["diagnostics"]
    chart = repo / "charts" / "chat"
    (helm,) = [d for d in found if "helm is not on PATH" in d["message"]]
    assert helm["severity"] == "warning" and helm["file"] == str(chart / "Chart.yaml")
    assert (
        "1 Helm chart met in this walk" in helm["message"]
        and "was not rendered" in helm["message"]
        and "install helm" in helm["fix"]
    )
    (kust,) = [d for d in found if "neither kustomize nor kubectl is on PATH" in d["message"]]
    assert (
        kust["severity"] == "warning" and "2 kustomizations met in this walk" in kust["message"]
    )  # the overlays
    # as before: the raw template, the values files, the base read as written
    assert any(
        d["rule"] == "KV002" and d["file"] == str(chart / "templates" / "deployment.yaml") for d in found
    )
    assert any(d["rule"] == "KV002" and d["file"] == str(chart / "values-prod.yaml") for d in found)
    assert any(d["rule"] == "KV405" for d in found)


def test_a_chart_named_without_helm_still_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the user names is rendered or refused, as before: exit code 2."""
    repo = _infra(tmp_path)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(repo / "charts" / "chat")])
    assert r.exit_code == 2 and "helm binary is not on PATH" in r.output


@needs_kustomize
def test_a_remote_base_met_in_a_walk_is_a_kv001_and_nothing_is_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = tmp_path / "deploy" / "overlay"
    d.mkdir(parents=True)
    (d / "kustomization.yaml").write_text(
        "resources:\n- https://github.com/example/config//base?ref=v1\n- deployment.yaml\n"
    )
    (d / "deployment.yaml").write_text(DEPLOYMENT)
    ran: list[list[str]] = []
    real = render._run

    def recording(cmd: list[str], *args: object, **kwargs: object) -> object:
        ran.append(cmd)
        return real(cmd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "_run", recording)
    diags = offline_diags([str(tmp_path / "deploy")])
    (kv001,) = [x for x in diags if x.rule == "KV001"]
    assert kv001.loc is not None and kv001.loc.file == str(d / "kustomization.yaml") and kv001.loc.line == 2
    assert ran == []  # kustomize never ran


@needs_helm
def test_a_subchart_met_in_a_walk_of_its_charts_directory_is_rendered_alone_with_the_note(
    tmp_path: Path,
) -> None:
    """A walk that starts inside a chart's charts/ meets the subchart without its parent: rendered alone, with the
    existing subchart note (its parent's values were not applied)."""
    parent = tmp_path / "app"
    shutil.copytree(CHAT_CHART, parent / "charts" / "chat")
    (parent / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\n")
    diags = offline_diags([str(parent / "charts")])
    (note,) = [d for d in diags if d.rule == "KV002"]
    assert note.severity == "info" and f"this chart is a subchart of {parent}" in note.message
    assert any(d.object == "Deployment/chat-chat" for d in diags)


@needs_helm
@needs_kustomize
def test_a_nested_configuration_keeps_the_walk_rendering(tmp_path: Path) -> None:
    """A .kvlint.yaml below the walked directory splits the walk by configuration (kvlint.checkrun.config_groups):
    the chart and the overlays are still rendered, each under its own directory's configuration."""
    repo = _infra(tmp_path)
    (repo / "charts" / ".kvlint.yaml").write_text("ignore: [KV202]\n")
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(repo)])
    found = json.loads(r.stdout)["diagnostics"]
    chart = repo / "charts" / "chat"
    assert not [d for d in found if d["rule"] == "KV002" and d["severity"] != "info"]
    on_chart = {d["rule"] for d in found if d["file"] == str(chart / "templates" / "deployment.yaml")}
    assert "KV103" in on_chart and "KV202" not in on_chart  # rendered, under charts/.kvlint.yaml
    names = {w["name"] for w in json.loads(r.stdout)["workloads"]}
    assert names == {"chat-chat", "vllm-l4", "vllm-l4-canary"}
    assert not [d for d in found if d["rule"] == "KV405"]
    base = repo / "kustomize" / "base" / "kustomization.yaml"
    assert [d["severity"] for d in found if d["file"] == str(base)] == ["info"]


def test_plan_walk_finds_the_roots_of_the_reference_graph(tmp_path: Path) -> None:
    """Overlays are the kustomizations no other of the walk builds on; a base reached through another base is a
    base of the overlay too; a cycle no overlay leads into is rendered (kustomize reports it)."""
    repo = _infra(tmp_path)
    k = repo / "kustomize"
    (k / "mid").mkdir()
    (k / "mid" / "kustomization.yaml").write_text("resources:\n- ../base\n")
    (k / "top").mkdir()
    (k / "top" / "kustomization.yaml").write_text("resources:\n- ../mid\n")
    for a, b in (("c1", "c2"), ("c2", "c1")):
        (k / a).mkdir()
        (k / a / "kustomization.yaml").write_text(f"resources:\n- ../{b}\n")
    found, skip = render.plan_walk(str(k))
    roots = {os.path.basename(w): w.bases for w in found if w.tool == "kustomize"}
    assert set(roots) == {"l4", "l4-canary", "top", "c1"}
    assert roots["top"] == (str(k / "base"), str(k / "mid")) or set(roots["top"]) == {
        str(k / "base"),
        str(k / "mid"),
    }
    assert roots["c1"] == (str(k / "c2"),)


@needs_helm
@needs_kustomize
def test_a_walk_of_too_many_charts_renders_none_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More charts and overlays than MAX_WALK_RENDERS in one walk (a pull request adding thousands of Chart.yaml
    files): no renderer starts, the files are read as plain files, one warning says why and what to do."""
    repo = _infra(tmp_path)
    monkeypatch.setattr(render, "MAX_WALK_RENDERS", 2)  # the chart and two overlays are three
    ran: list[list[str]] = []
    real = render._run

    def recording(cmd: list[str], *args: object, **kwargs: object) -> object:
        ran.append(cmd)
        return real(cmd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "_run", recording)
    diags = offline_diags([str(repo)])
    assert ran == []
    (note,) = [d for d in diags if "kvlint renders in one walk" in d.message]
    assert note.severity == "warning" and note.message.startswith("3 Helm charts and kustomize overlays")
    chart = repo / "charts" / "chat"
    assert any(
        d.rule == "KV002" and d.loc is not None and d.loc.file == str(chart / "templates" / "deployment.yaml")
        for d in diags
    )
    assert any(d.rule == "KV405" for d in diags)  # the base read as written, as before


@needs_kustomize
def test_a_kustomization_file_linked_out_of_the_walk_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request's ``overlay/kustomization.yaml -> /outside/file``: the walk reads no link out of the directory
    walked (an info), and does not hand kustomize a kustomization it would read there."""
    outside = tmp_path / "outside.yaml"
    outside.write_text("resources:\n- deployment.yaml\n")
    d = tmp_path / "deploy" / "overlay"
    d.mkdir(parents=True)
    (d / "deployment.yaml").write_text(DEPLOYMENT)
    (d / "kustomization.yaml").symlink_to(outside)
    ran: list[list[str]] = []
    real = render._run

    def recording(cmd: list[str], *args: object, **kwargs: object) -> object:
        ran.append(cmd)
        return real(cmd, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render, "_run", recording)
    diags = offline_diags([str(tmp_path / "deploy")])
    assert ran == []
    (link,) = [x for x in diags if x.rule == "KV001"]
    assert link.severity == "info" and "points outside the directory walked" in link.message


@needs_helm
@needs_kustomize
def test_a_chart_both_named_and_met_in_the_walk_is_rendered_once_as_named(tmp_path: Path) -> None:
    """``kvlint check deploy deploy/charts/chat --helm-values values-prod.yaml``: the chart is rendered once, with the
    values file (its --max-model-len: no KV202), and gets no note that its other values were not applied."""
    repo = _infra(tmp_path)
    chart = repo / "charts" / "chat"
    result = run_check(
        [str(repo), str(chart)],
        Options(allow_hub=False, helm_values=(str(chart / "values-prod.yaml"),)),
    )
    on_chart = [d for d in result.diagnostics if d.loc is not None and str(chart) in d.loc.file]
    assert not [d for d in on_chart if d.rule in ("KV002", "KV202")]
    assert [cr.workload.doc.name for cr in result.containers].count("chat-chat") == 1


@needs_kustomize
def test_an_overlays_json6902_patch_is_a_source_in_a_walk(tmp_path: Path) -> None:
    """The pull-request annotation's sources (kvlint.origins.attach_sources, as kvlint.checkrun.run_paths attaches
    them) hold the JSON 6902 patch operation of an overlay met in a walk, as of one named (tests/test_ci_cli.py)."""
    from kvlint.checkrun import run_paths

    repo = tmp_path / "deploy"
    shutil.copytree(ROOT / "fixtures" / "kustomize" / "base", repo / "base")
    overlay = repo / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n  - ../base\npatches:\n  - target: {kind: Deployment, name: chat-8b}\n    path: mml.yaml\n"
    )
    (overlay / "mml.yaml").write_text(
        "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --max-model-len=65536\n"
    )
    result = run_paths([str(repo)], Options(allow_hub=False), no_config=True).result
    sources = {(s.file, s.line) for d in result.diagnostics for s in d.sources}
    assert (str(overlay / "mml.yaml"), 1) in sources


@needs_helm
def test_a_chart_an_argo_application_of_the_walk_deploys_is_linted_only_through_it(tmp_path: Path) -> None:
    """An Argo CD Application of the walk renders the checkout's chart with its values (kvlint.workloads.gitops_local);
    the walk does not render the chart again alone, whose own values.yaml (no --max-model-len: KV103) is not what is
    deployed: one serving container, no KV103, one info at Chart.yaml naming the Application's file."""
    repo = tmp_path / "infra"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHAT_CHART, repo / "charts" / "chat")
    (repo / "apps").mkdir()
    app = repo / "apps" / "chat.yaml"
    app.write_text(APPLICATION)
    chart = repo / "charts" / "chat"
    diags = offline_diags([str(repo)])
    assert not [d for d in diags if d.rule == "KV103"]
    serving = _serving([str(repo)])
    assert len(serving) == 1 and {f for _, _, f in serving} == {str(chart / "templates" / "deployment.yaml")}
    (note,) = [d for d in diags if d.loc is not None and d.loc.file == str(chart / "Chart.yaml")]
    assert note.rule == "KV002" and note.severity == "info" and str(app) in note.message
    # the chart named alone is still rendered with its own values (KV103), and --jobs 2 prints what --jobs 1 does
    assert "KV103" in {d.rule for d in offline_diags([str(chart)])}
    outs = [
        CliRunner().invoke(main, ["check", "--offline", "--no-config", "--jobs", j, str(repo)]).stdout
        for j in ("1", "2")
    ]
    assert outs[0] == outs[1] and "sized 1 of 1 serving container" in outs[0]


@needs_kustomize
def test_a_kustomize_component_is_built_only_through_the_overlay_listing_it(tmp_path: Path) -> None:
    """A ``kind: Component`` kustomization is never built alone (kustomize applies it only to a kustomization that
    lists it under ``components``; alone, its patch has no target and kustomize fails): a walk holding one that no
    overlay of the walk lists gives no KV001, one info, and does not read its patch as a plain file (no KV405)."""
    repo = tmp_path / "deploy"
    comp = repo / "components" / "gpu"
    comp.mkdir(parents=True)
    (comp / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: patch.yaml\n"
    )
    (comp / "patch.yaml").write_text(GPU_PATCH)
    diags = offline_diags([str(repo / "components")])
    assert not [d for d in diags if d.rule == "KV001"]
    (note,) = diags
    assert note.rule == "KV002" and note.severity == "info" and "Component" in note.message
    assert note.loc is not None and note.loc.file == str(comp / "kustomization.yaml")
    # an overlay of the walk listing it is built with it (the GPU its patch sets), the component not alone
    base = repo / "base"
    base.mkdir()
    (base / "deployment.yaml").write_text(DEPLOYMENT)
    (base / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    overlay = repo / "overlays" / "l4"
    overlay.mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "resources:\n- ../../base\ncomponents:\n- ../../components/gpu\n"
    )
    diags = offline_diags([str(repo)])
    assert not [d for d in diags if d.rule in ("KV001", "KV405")]
    assert {(k, n) for k, n, _ in _serving([str(repo)])} == {("Deployment", "vllm")}


@needs_helm
def test_a_fresh_cli_process_with_nested_configs_lints_an_argo_deployed_chart_once(tmp_path: Path) -> None:
    """The GitOps scan lives in the workloads stage (kvlint.workloads.gitops_walk, registered with kvlint.render on
    import: render cannot import it back). A fresh ``kvlint check`` whose walk is split by a nested .kvlint.yaml
    plans the walk (kvlint.checkrun.config_groups) before the pipeline is imported; the walk, cached for the run,
    then rendered the Application's chart alone as well (sized 2 of 2) until checkrun and stream imported the
    scan before planning. Run in a new interpreter, where nothing of kvlint.workloads is loaded yet."""
    import subprocess
    import sys

    repo = tmp_path / "infra"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHAT_CHART, repo / "charts" / "chat")
    (repo / "apps").mkdir()
    (repo / "apps" / "chat.yaml").write_text(APPLICATION)
    (repo / "charts" / ".kvlint.yaml").write_text("")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    out = subprocess.run(
        [sys.executable, "-m", "kvlint", "check", "--offline", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    ).stdout
    assert "sized 1 of 1 serving container" in out, out


@needs_helm
@needs_kustomize
def test_every_file_is_named_one_way_whatever_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint check .`` names every file as ruff names them, relative and without ``./``: plain files were
    ``./plain.yaml`` and ``./kustomize/base/kustomization.yaml`` while rendered ones were ``charts/chat/...`` (ux50),
    which also sorted the two kinds apart. The files and the paths in messages are the same whether the walk starts
    at ``.``, ``./`` or the directory's name from its parent, and the GitHub format keeps its repository-relative
    names. A chart that fails to render in ``.`` names its template the same way."""
    repo = _infra(tmp_path)
    (repo / "charts" / "broken" / "templates").mkdir(parents=True)
    (repo / "charts" / "broken" / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
    (repo / "charts" / "broken" / "templates" / "x.yaml").write_text("x: {{ .Values.a }\n")
    # a model named in a plain manifest, so that the plain file has a finding too
    (repo / "plain.yaml").write_text(DEPLOYMENT)
    reports = {}
    for where, arg in ((repo, "."), (repo, "./"), (repo.parent, "deploy")):
        monkeypatch.chdir(where)
        r = CliRunner().invoke(main, ["check", "--offline", "--format", "json", arg])
        doc = json.loads(r.stdout)
        files = [d["file"] for d in doc["diagnostics"]]
        if arg == "deploy":
            files = [os.path.relpath(f, "deploy") for f in files]
        reports[arg] = (files, [d["message"] for d in doc["diagnostics"]])
        assert not [f for f in files if f.startswith("./") or "/./" in f or "//" in f], files
    files, messages = reports["."]
    assert {"plain.yaml", "kustomize/base/kustomization.yaml", "charts/broken/templates/x.yaml"} <= set(files)
    assert any(f.startswith("charts/chat/templates/") for f in files)
    assert files == sorted(files)  # (the report's order: by file, then line)
    assert reports["./"] == reports["."] and reports["deploy"][0] == files
    assert not [m for m in messages if "./kustomize" in m or " ./" in m], messages
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "github", "."])
    assert "file=plain.yaml," in r.stdout and "file=./" not in r.stdout
