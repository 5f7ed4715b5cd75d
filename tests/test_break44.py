"""Adversarial pass on the last stop's code (break44): directory walks that render what they meet, the GitOps
scan of a walk, typed marks, NIMCache profiles, AMD DRA partitions, SGLang --cuda-graph-config/--config. Each test
fails before its fix. Real helm and kubectl (kustomize) where a walk renders."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint import render
from kvlint.cli import main

needs_kustomize = pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)


def _check(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-color", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exc_info
    return r.exit_code, r.output


def test_a_walked_kustomization_naming_a_path_with_a_nul_is_a_kv001_not_a_traceback(tmp_path: Path) -> None:
    """``resources: ["../base\\0x"]`` (a YAML escape) in an overlay of a walk: the walk's plan looked the path up with
    os.path.realpath, which raises ValueError on a NUL: the run ended in a traceback. Now the overlay's own check
    says the path names no file (remote_references), whether or not kustomize is installed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "app" / "base").mkdir(parents=True)
    (tmp_path / "app" / "overlay").mkdir()
    (tmp_path / "app" / "base" / "kustomization.yaml").write_text("resources: []\n")
    (tmp_path / "app" / "overlay" / "kustomization.yaml").write_text('resources:\n- "../base\\0x"\n')
    code, out = _check(str(tmp_path))
    assert code in (0, 1), out
    assert "Traceback" not in out


@needs_kustomize
def test_the_nul_path_of_a_walked_overlay_is_reported_where_it_is(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text('resources:\n- "base\\0x"\n')
    code, out = _check(str(tmp_path))
    assert code == 1, out
    assert "overlay/kustomization.yaml:2:3: error KV001 resources names a path holding a NUL" in out


needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")

ROOT = Path(__file__).resolve().parents[1]
CHAT_CHART = ROOT / "fixtures" / "helm" / "chat-chart"


def _applications(repo: Path, n: int) -> Path:
    """A repository holding fixtures/helm/chat-chart and one file of ``n`` Argo CD Applications deploying it, each
    with its own release name and values."""
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHAT_CHART, repo / "charts" / "chat")
    (repo / "apps").mkdir()
    apps = "---\n".join(
        f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: chat{i}, namespace: argocd}}
spec:
  source:
    repoURL: https://github.com/example/infra
    path: charts/chat
    helm:
      valuesObject: {{maxModelLen: {8192 + i}}}
  destination: {{server: https://kubernetes.default.svc, namespace: serving}}
"""
        for i in range(n)
    )
    (repo / "apps" / "chat.yaml").write_text(apps)
    return repo


@needs_helm
def test_the_charts_argo_applications_deploy_share_the_runs_render_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The charts of the checkout that Argo CD/Flux objects deploy were rendered each with the renderer's own
    timeout, outside the walk's budget: one file of 64 Applications deploying a chart that loops held a CI runner for
    64 x 120 s, and every further such file for as long again. They share the run's budget now: once it is spent
    (here from the start), a chart is not rendered and says so (KV001), nothing sized."""
    repo = _applications(tmp_path / "infra", 2)
    monkeypatch.setattr(render, "WALK_RENDER_BUDGET_S", 0)
    for target in (repo, repo / "apps" / "chat.yaml"):  # walked, or the file named
        code, out = _check("--no-config", str(target))
        assert code == 1, out
        assert (
            out.count("error KV001 the chart charts/chat of this checkout is not rendered: the charts") == 2
        ), out
        assert "rendered for 0 s together" in out and "sized 0 of 0 serving containers" in out
        assert "rendered from this checkout" not in out


@needs_helm
def test_the_output_of_the_charts_argo_applications_deploy_counts_against_the_runs_output_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What those renders print counts against the run's output budget (WALK_RENDER_BYTES x --max-file-bytes): the
    chart prints about 1.2 kB; with a budget of 2,000 bytes, the third Application's render is not started."""
    repo = _applications(tmp_path / "infra", 3)
    monkeypatch.setattr(render, "WALK_RENDER_BYTES", 1)
    code, out = _check("--no-config", "--max-file-bytes", "2000", str(repo))
    assert out.count("rendered from this checkout: kvlint ran helm template") == 2, out
    (refused,) = [
        ln for ln in out.splitlines() if "KV001" in ln and "is not rendered: the charts and overlays" in ln
    ]
    assert "[Application/argocd/chat2]" in refused and "had printed 2000 bytes together" in refused
    assert code == 1


@needs_helm
def test_without_a_spent_budget_every_application_is_rendered(tmp_path: Path) -> None:
    """(The two tests above are about the budget: with the default one, all three are rendered.)"""
    code, out = _check("--no-config", str(_applications(tmp_path / "infra", 3)))
    assert out.count("rendered from this checkout: kvlint ran helm template") == 3, out
    assert "is not rendered" not in out


@needs_helm
def test_helms_failure_on_an_applications_inline_values_names_no_temporary_file(tmp_path: Path) -> None:
    """Inline values helm cannot parse: helm's error and the fix's command quoted the temporary file kvlint wrote them
    to (/tmp/kvlint-values-RANDOM/values.yaml, removed since): each run printed another report (a CI diff of two
    runs, a SARIF baseline) and the fix named no file. Now both say INLINE-VALUES.yaml and the fix says what it is."""
    repo = _applications(tmp_path / "infra", 1)
    app = repo / "apps" / "chat.yaml"
    app.write_text(app.read_text().replace("valuesObject: {maxModelLen: 8192}", 'values: "a: [\\n"'))
    outs = [_check("--no-config", str(app)) for _ in range(2)]
    assert outs[0] == outs[1]
    code, out = outs[0]
    assert code == 1 and "kvlint-values-" not in out, out
    assert "failed to parse INLINE-VALUES.yaml" in out
    flat = " ".join(out.split())  # the fix's text is wrapped
    assert "-f INLINE-VALUES.yaml" in flat and "(INLINE-VALUES.yaml: the source's inline values" in flat


def test_the_references_a_walks_plan_looks_up_are_bounded_in_path_components(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """plan_walk resolved every path every kustomization of a walk names (os.path.realpath: one file-system lookup
    a component): 512 kustomizations of 64 KiB listing paths 200 components deep were 17 million lookups (34 CPU s)
    before anything was rendered; the same 64 KiB file linked 512 times makes that a tiny pull request. The lookups
    are bounded together (MAX_WALK_REFERENCE_PARTS components; here 5,000 of 40,000), counted, not timed."""
    (tmp_path / ".git").mkdir()
    deep = "/".join(["a"] * 40)
    text = "resources:\n" + "".join(f"- {deep}/{i}\n" for i in range(100))
    for i in range(10):
        (tmp_path / f"k{i}").mkdir()
        (tmp_path / f"k{i}" / "kustomization.yaml").write_text(text)
    monkeypatch.setattr(render, "MAX_WALK_REFERENCE_PARTS", 5000, raising=False)
    looked_up: list[int] = []
    realpath = os.path.realpath

    def counted(path: str, *args: object, **kwargs: object) -> str:
        looked_up.append(str(path).count(os.sep) + 1)
        return realpath(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "realpath", counted)
    render._WALKS.clear()
    found, _skip = render.plan_walk(str(tmp_path))
    monkeypatch.undo()
    assert sorted(os.path.basename(w) for w in found if w.tool == "kustomize") == [f"k{i}" for i in range(10)]
    walk_dirs = 10 * (str(tmp_path).count(os.sep) + 2)  # (the walk's own directories, resolved once each)
    assert sum(looked_up) <= 5000 + walk_dirs + 2 * (str(tmp_path).count(os.sep) + 42), sum(looked_up)


def test_references_within_the_bound_still_make_bases(tmp_path: Path) -> None:
    """(The bound leaves a real tree's graph as it was: an overlay's base is not a root.)"""
    (tmp_path / ".git").mkdir()
    for d, text in (("base", "resources: []\n"), ("overlay", "resources: [../base]\n")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "kustomization.yaml").write_text(text)
    render._WALKS.clear()
    found, _skip = render.plan_walk(str(tmp_path))
    (root,) = [w for w in found if w.tool == "kustomize"]
    assert os.path.basename(root) == "overlay" and [os.path.basename(b) for b in root.bases] == ["base"]


@needs_helm
def test_the_note_on_a_walked_charts_other_values_files_names_five_of_them(tmp_path: Path) -> None:
    """A chart met in a walk with other values files beside it gets an info naming them: all of them, so a chart of
    20,000 values-N.yaml files printed one finding of 20,000 names (the walk's other notes name five and count the
    rest)."""
    (tmp_path / ".git").mkdir()
    chart = tmp_path / "charts" / "chat"
    shutil.copytree(CHAT_CHART, chart)
    for i in range(40):
        (chart / f"values-{i:02d}.yaml").write_text("{}\n")
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(tmp_path)])
    messages = [
        d["message"] for d in json.loads(r.stdout)["diagnostics"] if "were not applied" in d["message"]
    ]
    (message,) = messages
    assert message.endswith(
        "values-00.yaml, values-01.yaml, values-02.yaml, values-03.yaml, values-04.yaml and 35 more"
    ), message


def _outside_kustomization(tmp_path: Path) -> tuple[Path, Path]:
    """``(repo, k)``: a repository whose ``k/kustomization.yaml`` is a symbolic link to a kustomization beside the
    repository (the runner's disk) naming a remote base with a token in its URL."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / "k").mkdir()
    outside.mkdir()
    (outside / "kustomization.yaml").write_text("resources:\n- https://example.com/RUNNER-SECRET-7f3a\n")
    (repo / "k" / "kustomization.yaml").symlink_to(outside / "kustomization.yaml")
    return repo, repo / "k"


@pytest.mark.parametrize("how", ["named", "walked beside a Kustomization"])
def test_a_kustomization_file_linked_out_of_the_repository_is_not_read(tmp_path: Path, how: str) -> None:
    """The confinement covered every path a kustomization names but not the kustomization file itself: a
    ``kustomization.yaml`` linked to a file of the runner's disk was read, its content quoted by the findings
    (a remote base's URL, here with a token) -- named on the command line, or met in a walk
    beside a regular ``Kustomization`` (the walk reads a kustomization only when some file of it is in the walk,
    then read the first name). Now a KV001 at the link says it was not read."""
    repo, k = _outside_kustomization(tmp_path)
    if how == "named":
        target = k
    else:
        (k / "Kustomization").write_text("resources: []\n")
        target = repo
    code, out = _check("--no-config", str(target))
    assert "RUNNER-SECRET" not in out
    if how == "named" or render.kustomize_command(".") is not None:
        assert (
            "kustomization.yaml:1:1: error KV001 this kustomization file is a symbolic link to a file outside"
            in out
        )
        assert code == 1


def test_a_kustomization_file_linked_into_git_metadata_is_not_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("resources:\n- https://example.com/GIT-CONFIG-TOKEN\n")
    (repo / "k").mkdir()
    (repo / "k" / "kustomization.yaml").symlink_to("../.git/config")
    code, out = _check("--no-config", str(repo / "k"))
    assert code == 1 and "GIT-CONFIG-TOKEN" not in out
    assert (
        "error KV001 this kustomization file is a symbolic link to a file outside the repository (or into"
        in out
    )


def test_a_kustomization_file_linked_within_the_repository_is_not_refused_by_kvlint(tmp_path: Path) -> None:
    """(A link inside the repository is left to kustomize, which reports what it makes of it.)"""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "shared").mkdir()
    (repo / "shared" / "kustomization.yaml").write_text("resources:\n- https://example.com/IN-REPO-REMOTE\n")
    (repo / "k").mkdir()
    (repo / "k" / "kustomization.yaml").symlink_to("../shared/kustomization.yaml")
    code, out = _check("--no-config", str(repo / "k"))
    assert code == 1 and "names a remote reference (https://example.com/IN-REPO-REMOTE)" in out
    assert "symbolic link to a file outside" not in out


def _failed_kustomization(tmp_path: Path) -> Path:
    """A repository whose ``k/`` kustomization fails to build (its resource is missing)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k").mkdir()
    (repo / "k" / "kustomization.yaml").write_text("resources: [missing.yaml]\n")
    return repo


def test_the_unread_summary_opens_no_pipe_of_a_failed_kustomization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart or kustomization that failed to render is 'not read' when its files name an engine
    (kvlint.sizing._dir_names_engine): it opened every .yaml under the directory, a named pipe too, and opening a
    pipe waits for a writer for ever (a walk's kustomization failing to build with a values.yaml pipe beside it hung
    the run). Only regular files are opened: what it opens is recorded here (nothing is made to block)."""
    from kvlint import sizing

    repo = _failed_kustomization(tmp_path)
    os.mkfifo(repo / "k" / "values.yaml")
    (repo / "k" / "other.yaml").write_text("image: vllm/vllm-openai:v0.8.5\n")
    opened: list[str] = []
    real_open = open

    def recording(path: str, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        opened.append(os.path.basename(str(path)))
        if os.path.exists(path) and not os.path.isfile(path):
            raise OSError("a pipe (opening it would wait for a writer)")
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(sizing, "open", recording, raising=False)
    assert sizing._dir_names_engine(str(repo / "k"), {}) is True
    assert "values.yaml" not in opened and "other.yaml" in opened


def test_the_unread_summary_reads_no_link_out_of_a_failed_kustomization(tmp_path: Path) -> None:
    """... nor a symbolic link out of the directory: a pull request's link to a file of the runner's disk (here one
    naming vLLM) made the kustomization count as a serving one 'not read'."""
    repo = _failed_kustomization(tmp_path)
    (tmp_path / "runner.yaml").write_text("image: vllm/vllm-openai:v0.8.5\n")
    (repo / "k" / "values.yaml").symlink_to(tmp_path / "runner.yaml")
    from kvlint import sizing

    assert sizing._dir_names_engine(str(repo / "k"), {}) is False
    (repo / "k" / "inside.yaml").write_text("image: vllm/vllm-openai:v0.8.5\n")
    assert sizing._dir_names_engine(str(repo / "k"), {}) is True


_LEAK_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.0
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""
_INLINE_GENERATOR = """resources: [deployment.yaml]
generators:
- |-
  apiVersion: builtin
  kind: ConfigMapGenerator
  metadata: {name: leak}
  files: [model=.git/config]
replacements:
- source: {kind: ConfigMap, name: leak, fieldPath: data.model}
  targets:
  - select: {kind: Deployment, name: vllm}
    fieldPaths: [spec.template.spec.containers.0.args.1]
"""


@needs_kustomize
@pytest.mark.parametrize("how", ["named", "a base of a walked overlay"])
def test_a_kustomization_beside_git_with_a_generator_is_not_built(tmp_path: Path, how: str) -> None:
    """A kustomization at the top of a repository loads files of its directory, .git/config among them (where
    actions/checkout keeps the token): an inline ConfigMapGenerator (a multi-line string, not a path kvlint looked
    at) read it and a replacement put it into --model, quoted by KV502. kustomize keeps plugin files inside the
    kustomization's directory, so only one beside .git is refused (KV001 at the field, nothing built)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("GIT-CONFIG-TOKEN-42\n")
    (repo / "deployment.yaml").write_text(_LEAK_DEPLOYMENT)
    (repo / "kustomization.yaml").write_text(_INLINE_GENERATOR)
    if how == "named":
        target = repo
    else:
        (repo / "overlays" / "prod").mkdir(parents=True)
        (repo / "overlays" / "prod" / "kustomization.yaml").write_text("resources: [../..]\n")
        target = repo / "overlays"
    code, out = _check("--no-config", str(target))
    assert "GIT-CONFIG-TOKEN" not in out, out
    assert code == 1 and "error KV001 this kustomization is at the top of a git repository" in out


@needs_kustomize
def test_a_generator_of_a_kustomization_below_the_top_is_still_built(tmp_path: Path) -> None:
    """(kustomize refuses its files out of its directory by real path: ../.git/config is not reachable from there.)"""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k").mkdir()
    (repo / "k" / "deployment.yaml").write_text(_LEAK_DEPLOYMENT)
    (repo / "k" / "model").write_text("Qwen/Qwen3-8B")
    (repo / "k" / "kustomization.yaml").write_text(_INLINE_GENERATOR.replace("model=.git/config", "model"))
    code, out = _check("--no-config", "--format", "json", str(repo / "k"))
    assert json.loads(out)["summary"]["documents"] == 2, out
    assert "at the top of a git repository" not in out


@needs_helm
def test_a_failing_chart_at_a_repository_top_shows_helms_error_not_its_link_warnings(tmp_path: Path) -> None:
    """A chart at the top of a repository is rendered from links to its files (leaving .git out), and helm warns on
    each link ('walk.go:75: found symbolic link in path: ... Contents of linked file included and used') before its
    error: the KV001 quoted those warnings, links kvlint made, as if they were why the chart failed."""
    chart = tmp_path / "chart"
    shutil.copytree(CHAT_CHART, chart)
    (chart / ".git").mkdir()
    (chart / "templates" / "x.yaml").write_text('{{ fail "boom" }}\n')
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(chart)])
    (message,) = [d["message"] for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV001"]
    assert "boom" in message and "symbolic link" not in message, message
