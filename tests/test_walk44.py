"""Directory walks of real repositories (vllm-project/aibrix, vllm-project/production-stack, kubeai) read as a new
user reads them: the bases of a walk's kustomize overlays named in one info, not one each; the values files beside a
chart found by what they hold, not only by name; paths in findings normalised and relative to the repository. Every
test renders with the real helm and kubectl (kustomize) where it needs them."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from walk_trees import (
    APPLICATION,
    CHAT_CHART,
    CONFIGMAP,
    ROOT,
    needs_helm,
    needs_kustomize,
    offline_diags,
    write_kustomization,
)

from kvlint import render
from kvlint.options import Options
from kvlint.pipeline import run_check


@needs_kustomize
def test_the_bases_of_a_walks_overlays_are_named_in_one_info(tmp_path: Path) -> None:
    """aibrix's config/ holds 33 bases of its overlays: one info each was 33 notes of 5 lines. One info per walk
    names every base with its overlays (relative to the directory walked), at the first base's kustomization."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for base in ("rbac", "manager", "crd"):
        write_kustomization(repo / "config" / base, f"resources:\n- {base}.yaml\n")
        (repo / "config" / base / f"{base}.yaml").write_text(CONFIGMAP % base)
    write_kustomization(repo / "config" / "overlays" / "dev", "resources:\n- ../../manager\n- ../../rbac\n")
    write_kustomization(repo / "config" / "overlays" / "prod", "resources:\n- ../../manager\n- ../../crd\n")
    diags = offline_diags([str(repo)])
    notes = [d for d in diags if d.rule == "KV002"]
    assert len(notes) == 1, [(d.loc, d.message) for d in notes]
    (note,) = notes
    assert note.severity == "info" and note.loc is not None
    assert note.loc.file == str(repo / "config" / "crd" / "kustomization.yaml")  # the first in walk order
    assert note.message.startswith("3 kustomizations met in this walk are bases of its overlays")
    for line in (
        "config/crd is a base of config/overlays/prod",
        "config/manager is a base of config/overlays/dev, config/overlays/prod",
        "config/rbac is a base of config/overlays/dev",
    ):
        assert line in note.message
    assert note.fix.endswith(f"kvlint check {repo / 'config' / 'crd'}")


@needs_kustomize
def test_a_single_base_keeps_its_own_info(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_kustomization(repo / "base", "resources:\n- cm.yaml\n")
    (repo / "base" / "cm.yaml").write_text(CONFIGMAP % "cm")
    write_kustomization(repo / "overlay", "resources:\n- ../base\n")
    (note,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV002"]
    assert note.message.startswith(f"this kustomization is a base of {repo / 'overlay'} in this walk")


@needs_kustomize
def test_a_finding_in_a_base_named_up_the_tree_is_at_its_normalised_path(tmp_path: Path) -> None:
    """aibrix's config/overlays/vke/dependency names ../../../dependency/envoy-gateway, whose remote resource is a
    KV001: at config/dependency/envoy-gateway/kustomization.yaml, not at config/overlays/vke/dependency/../../..."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_kustomization(
        repo / "config" / "dependency" / "gw", "resources:\n- https://example.com/install.yaml\n"
    )
    write_kustomization(
        repo / "config" / "overlays" / "vke" / "dependency", "resources:\n- ../../../dependency/gw\n"
    )
    (kv001,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV001"]
    assert kv001.loc is not None
    assert kv001.loc.file == str(repo / "config" / "dependency" / "gw" / "kustomization.yaml")


_CHART = "apiVersion: v2\nname: app\nversion: 0.1.0\n"


@needs_helm
def test_a_failed_chart_at_a_repository_root_quotes_no_checkout_path(tmp_path: Path) -> None:
    """A chart at the top of a repository is rendered through links without its .git: helm's warning that it
    followed them (with the checkout's absolute path) is not the error, and is not quoted."""
    repo = tmp_path / "chart"
    (repo / ".git").mkdir(parents=True)
    (repo / "templates").mkdir()
    (repo / "Chart.yaml").write_text(_CHART)
    (repo / "values.yaml").write_text("a: 1\n")
    (repo / "templates" / "cm.yaml").write_text("x: {{ .Values.a.b.c }}\n")
    (kv001,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV001"]
    assert "can't evaluate field b" in kv001.message
    assert str(tmp_path) not in kv001.message and "symbolic link" not in kv001.message


@needs_helm
def test_helms_error_quotes_paths_relative_to_the_repository(tmp_path: Path) -> None:
    """helm quotes a values file it cannot parse by the path it was given: inside the repository relative to it,
    a file the user names outside as named (the user's own), never another path of the runner."""
    repo = tmp_path / "repo"
    chart = repo / "charts" / "app"
    (repo / ".git").mkdir(parents=True)
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(_CHART)
    (chart / "templates" / "cm.yaml").write_text(CONFIGMAP % "cm")
    (chart / "values-bad.yaml").write_text("a: [\n")
    (kv001,) = render.render_helm(str(chart), values=[str(chart / "values-bad.yaml")]).findings
    assert (
        "failed to parse charts/app/values-bad.yaml" in kv001.message and str(tmp_path) not in kv001.message
    )
    outside = tmp_path / "mine.yaml"
    outside.write_text("a: [\n")
    (kv001,) = render.render_helm(str(chart), values=[str(outside)]).findings
    assert f"failed to parse {outside}" in kv001.message


@needs_helm
def test_a_values_file_beside_a_chart_is_told_by_its_keys_not_its_name(tmp_path: Path) -> None:
    """aibrix's dist/chart keeps its deployment values in stable.yaml and vke.yaml: named by the walk's note as
    values*.yaml files are, for their top-level keys are the chart's values keys; a manifest or a file with a key
    values.yaml does not have is not a values file."""
    repo = tmp_path / "repo"
    chart = repo / "charts" / "chat"
    shutil.copytree(CHAT_CHART, chart)
    (chart / "stable.yaml").write_text("replicaCount: 2\nmaxModelLen: 8192\n")
    (chart / "example.yaml").write_text(CONFIGMAP % "example")
    (chart / "other.yaml").write_text("replicaCount: 2\nnotAValue: 1\n")
    (chart / "Chart.lock").write_text("dependencies: []\n")
    (note,) = [
        d for d in offline_diags([str(repo)]) if d.loc is not None and d.loc.file == str(chart / "Chart.yaml")
    ]
    assert note.rule == "KV002" and note.severity == "info"
    assert note.message.endswith("the other values files beside it were not applied: stable.yaml")
    assert note.fix.endswith(f"--helm-values {chart / 'stable.yaml'}")


@needs_helm
def test_a_chart_an_application_file_over_1_mib_deploys_is_not_also_rendered_alone(tmp_path: Path) -> None:
    """The walk looked for Argo CD objects only in files of at most 1 MiB; the run reads (and renders the charts
    of) files up to --max-file-bytes: an Application beside a 1.5 MB ConfigMap had its chart rendered twice, once
    alone with its own values.yaml (KV103, a second serving container)."""
    repo = tmp_path / "infra"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHAT_CHART, repo / "charts" / "chat")
    (repo / "apps").mkdir()
    big = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + "".join(
        f"  k{i}: {'x' * 1000}\n" for i in range(1500)
    )
    app = repo / "apps" / "chat.yaml"
    app.write_text(big + "---\n" + APPLICATION)
    assert app.stat().st_size > 1 << 20
    result = run_check([str(repo)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV103"]
    assert len(result.containers) == 1
    (note,) = [
        d
        for d in result.diagnostics
        if d.loc is not None and d.loc.file == str(repo / "charts" / "chat" / "Chart.yaml")
    ]
    assert str(app) in note.message
    from click.testing import CliRunner

    from kvlint.cli import main

    out = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(repo)]).stdout
    assert "sized 1 of 1 serving container" in out and "KV103" not in out  # (the streaming run alike)


def test_the_walks_batches_of_a_large_file_are_the_runs(tmp_path: Path) -> None:
    """The GitOps scan counts a large file's renders per batch of the run (kvlint.stream.batch_first_lines): its
    batches start at the lines the run's own plan of the file starts them (kvlint.stream._plan_file)."""
    from kvlint import stream

    f = tmp_path / "apps.yaml"
    docs = [CONFIGMAP % f"cm{i}" + f"  pad: {'y' * (3000 + 7 * (i % 50))}\n" for i in range(1800)]
    f.write_text("---\n".join(docs))
    assert f.stat().st_size > stream.SEGMENT_BYTES
    units = stream._plan_file(str(f), 1 << 30, lambda *a: None, stream._Plan(), lambda size: False)
    spans = [u.span for u in units]
    assert len(spans) > 2 and all(s is not None for s in spans)
    assert stream.batch_first_lines(str(f)) == [s[2] for s in spans if s is not None]


@needs_helm
def test_a_chart_helm_refuses_gets_its_kv001_not_the_values_note_too(tmp_path: Path) -> None:
    """production-stack's helm/ and kubeai's charts/kubeai lack their dependencies in charts/: the walk said
    "kvlint rendered this chart ... with its own values.yaml only" beside helm's KV001 saying it did not render,
    and suggested --helm-values values-example.yaml, which fails the same. The KV001 alone now; a chart that
    fails on its values names the first values file in its --helm-values hint instead of FILE."""
    repo = tmp_path / "repo"
    deps = repo / "charts" / "deps"
    shutil.copytree(CHAT_CHART, deps)
    with open(deps / "Chart.yaml", "a") as fh:
        fh.write("dependencies:\n- name: redis\n  version: 1.0.0\n  repository: https://example.com/charts\n")
    (deps / "values-prod.yaml").write_text("maxModelLen: 8192\n")
    needs = repo / "charts" / "needs"
    (needs / "templates").mkdir(parents=True)
    (needs / "Chart.yaml").write_text(_CHART)
    (needs / "values.yaml").write_text("model: null\n")
    (needs / "templates" / "cm.yaml").write_text('x: {{ required "model is required" .Values.model }}\n')
    (needs / "values-prod.yaml").write_text("model: m\n")
    diags = offline_diags([str(repo)])
    on_deps = [d for d in diags if d.loc is not None and d.loc.file == str(deps / "Chart.yaml")]
    assert [d.rule for d in on_deps] == ["KV001"], [(d.rule, d.message) for d in on_deps]
    on_needs = [d for d in diags if d.loc is not None and str(needs) in d.loc.file]
    assert [d.rule for d in on_needs] == ["KV001"], [(d.rule, d.message) for d in on_needs]
    assert on_needs[0].fix.endswith(f"kvlint check {needs} --helm-values {needs / 'values-prod.yaml'}")


def test_a_json_file_with_comments_that_names_no_api_version_is_no_broken_manifest(tmp_path: Path) -> None:
    """kserve/website's tsconfig.json (JSON with // comments) was a KV001 "YAML syntax error" and exit 1 on a docs
    repository: a .json file with comment lines that does not parse and names no apiVersion is no Kubernetes
    manifest. A broken JSON file that names one, or that has no comment, still is a KV001."""
    (tmp_path / "tsconfig.json").write_text(
        '{\n  // editor settings\n  "extends": "@docusaurus/tsconfig",\n  "exclude": [".docusaurus", "build"],\n}\n'
    )
    (tmp_path / "deploy.json").write_text(
        '{\n  // a manifest\n  "apiVersion": "v1",\n  "kind": ["ConfigMap"\n}\n'
    )
    (tmp_path / "broken.json").write_text('{\n  "a": [1,\n}\n')
    diags = offline_diags([str(tmp_path)])
    assert [(d.rule, d.loc.file if d.loc else None) for d in diags] == [
        ("KV001", str(tmp_path / "broken.json")),
        ("KV001", str(tmp_path / "deploy.json")),
    ]


def test_a_walk_that_finds_no_file_names_the_hidden_directories_holding_some(tmp_path: Path) -> None:
    """llm-d/llm-d's manifests are all in .tekton/ and .github/, which a walk skips: "no .yaml, .yml or .json files
    found" now says which hidden directories hold some and how to lint one (not .git; not for an empty tree)."""
    from click.testing import CliRunner

    from kvlint.cli import main

    (tmp_path / ".tekton").mkdir()
    (tmp_path / ".tekton" / "pipeline.yaml").write_text(CONFIGMAP % "p")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.json").write_text("{}")
    (tmp_path / ".cache").mkdir()
    (tmp_path / "README.md").write_text("docs\n")
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(tmp_path)])
    assert r.exit_code == 0
    tekton = tmp_path / ".tekton"
    assert f"this one holds some: {tekton}; to lint one, name it: kvlint check {tekton})" in r.stderr
    assert ".git" not in r.stderr and ".cache" not in r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", str(empty)])
    assert r.stderr.strip() == f"kvlint: warning: no .yaml, .yml or .json files found in {empty}"


@needs_kustomize
def test_kubectls_multi_line_error_is_quoted_whole(tmp_path: Path) -> None:
    """kserve's config/overlays/dev-image-config patches with a file its Makefile writes: kubectl logs the error
    over several lines (klog's err=< ... >) and the KV001 quoted the last three, pieces of it ("path: ...",
    "`: failed to get the patch file ...", ">"). Quoted whole now, on one line, relative to the repository."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_kustomization(repo / "base", "resources:\n- cm.yaml\n")
    (repo / "base" / "cm.yaml").write_text(CONFIGMAP % "cm")
    write_kustomization(repo / "overlay", "resources:\n- ../base\npatches:\n- path: patch.yaml\n")
    (kv001,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV001"]
    assert "with config: ` path: patch.yaml `: failed to get the patch file" in kv001.message
    assert "lstat overlay/patch.yaml: no such file or directory" in kv001.message
    assert not kv001.message.rstrip('"').endswith(">") and str(tmp_path) not in kv001.message


def test_klog_multi_line_values_are_joined() -> None:
    lines = ['E1206 run.go:72] "command failed" err=<', "\tfirst line", "\tsecond", " >", "after"]
    assert render._klog_lines(lines) == ['E1206 run.go:72] "command failed" err="first line second"', "after"]
    assert render._klog_lines(["a", "b"]) == ["a", "b"]
    assert render._klog_lines(["x err=<", "\tcut"]) == ['x err="cut"']


def test_a_single_brace_placeholder_is_named_in_the_syntax_error(tmp_path: Path) -> None:
    """kserve's docs samples write image: {username}/torchserve-gpu:latest (ten files): a bare "YAML syntax error:
    while parsing a block mapping" did not say why. The KV001 names the placeholder; a quoted one parses, and a
    syntax error elsewhere keeps the plain message."""
    from kvlint.load import load_text

    sample = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - image: {username}/ts:latest\n"
    (kv001,) = load_text(sample, "s.yaml").findings
    assert kv001.rule == "KV001" and kv001.loc is not None and kv001.loc.line == 6
    assert "unquoted placeholder {username}; a value to fill in by hand" in kv001.message
    assert kv001.fix.startswith("replace {username} with the value it stands for")
    assert not load_text(sample.replace("{username}/ts:latest", '"{username}/ts:latest"'), "q.yaml").findings
    (other,) = load_text("a: [b\nc: d\n", "o.yaml").findings
    assert "placeholder" not in other.message


@needs_helm
def test_a_charts_example_values_are_named_by_the_walks_note(tmp_path: Path) -> None:
    """neuralmagic/helm-charts' nm-vllm chart requests its GPU only in ``examples/basic/values.yaml`` (model, one
    nvidia.com/gpu, a GFD product nodeSelector): a walk rendered the chart with its values.yaml (no GPU: not sized)
    and said nothing of the example, so the one configuration kvlint could size was silent. The walk's note now
    names it with the command that applies it, as it names values files beside Chart.yaml; a manifest kept among
    the examples (not values keys) is not named."""
    nm = ROOT / "fixtures" / "collected" / "trees" / "neuralmagic-nm-vllm"
    repo = tmp_path / "repo"
    chart = repo / "charts" / "nm-vllm"
    shutil.copytree(nm, chart)
    (chart / "examples" / "basic" / "service.yaml").write_text(CONFIGMAP % "example")
    example = chart / "examples" / "basic" / "values.yaml"
    result = run_check([str(repo)], Options(allow_hub=False))
    (note,) = [d for d in result.diagnostics if d.loc is not None and d.loc.file == str(chart / "Chart.yaml")]
    assert note.rule == "KV002" and note.severity == "info"
    assert note.message.endswith(
        "the other values files beside it were not applied: examples/basic/values.yaml"
    )
    assert note.fix is not None and note.fix.endswith(f"--helm-values {example}")
    # what the note says to run sizes the container the walk could not
    assert [c.plan for c in result.containers] == [None]
    applied = run_check([str(chart)], Options(allow_hub=False, helm_values=(str(example),)))
    assert [c.plan is not None for c in applied.containers] == [True]


def test_a_charts_examples_walk_looks_at_directories_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The examples walk queued every entry of an examples directory, files too, and took each off the front of a
    list (``list.pop(0)``): 200,000 files in ``examples/`` took 16 s for the chart's values note, quadratic in the
    files. Only directories are queued now: the walk's ``stat`` calls are one per directory, whatever the files.
    Still two levels below ``examples/``, and never through a link (one to a directory outside the chart here)."""
    chart = tmp_path / "c"
    (chart / "examples" / "basic" / "deeper" / "deepest").mkdir(parents=True)
    for i in range(300):
        (chart / "examples" / f"f{i:03d}.yaml").write_text("a: 1\n")
    outside = tmp_path / "outside"
    (outside / "inner").mkdir(parents=True)
    (chart / "examples" / "out").symlink_to(outside, target_is_directory=True)
    looked: list[str] = []
    isdir = os.path.isdir

    def counting(path: object) -> bool:
        looked.append(str(path))
        return isdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "isdir", counting)
    got = render._example_dirs(str(chart))
    assert got == ["examples", os.path.join("examples", "basic"), os.path.join("examples", "basic", "deeper")]
    assert len(looked) <= 5, looked[:10]
