"""Argo CD Applications / Flux HelmReleases whose chart is a directory of the same checkout
(:mod:`kvlint.workloads.gitops_local`): found only inside the repository root (the directory holding ``.git``),
never through ``..``, an absolute path or a symbolic link; rendered with kvlint's helm rendering, passed the
value files, the inline values and the parameters in the order Argo CD and Flux pass them.

The Application and chart are real (fixtures/gitops, pkstaz/pdf-comparator-ai; SOURCE.md there), unpacked into a
temporary repository. ``helm`` itself is not needed for most tests: where the arguments kvlint passes are
checked, a stand-in ``helm`` on PATH records them and prints a rendered Deployment (the rendering of a real
helm is tested where helm is installed)."""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
from pathlib import Path

import pytest
import yaml

from kvlint.load import load_paths
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise
from kvlint.workloads import find_workloads
from kvlint.workloads.gitops_local import contained, local_charts, repository_root

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "gitops" / "pkstaz-pdf-comparator-ai.tar.gz"
APP = "k8s/argocd/vllm-application.yaml"
OFFLINE = Options(allow_hub=False)


def _repo(tmp: Path, *, git: bool = True) -> Path:
    with tarfile.open(FIXTURE) as tf:
        tf.extractall(tmp, filter="data")
    root = tmp / "pkstaz-pdf-comparator-ai"
    if git:
        (root / ".git").mkdir()
    return root


def _doc(path: Path):  # type: ignore[no-untyped-def]
    (doc,) = load_paths([str(path)]).documents
    return doc


def _kv503(result):  # type: ignore[no-untyped-def]
    return [d for d in result.diagnostics if d.rule == "KV503"]


def test_the_application_names_the_chart_of_its_checkout_with_its_parameters(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    app = root / APP
    assert repository_root(str(app)) == str(root)
    (lc,), refused = local_charts(_doc(app))
    assert not refused
    params = yaml.safe_load(app.read_text())["spec"]["source"]["helm"]["parameters"]
    assert Path(lc.chart) == root / "helm" / "vllm" and lc.release == "vllm-granite"
    assert lc.set_values == tuple(f"{p['name']}={p['value']}" for p in params)
    assert lc.inline is None and not lc.value_files and not lc.unseen


def test_outside_a_repository_the_chart_is_not_looked_for(tmp_path: Path) -> None:
    root = _repo(tmp_path, git=False)
    assert repository_root(str(root / APP)) is None
    result = run_check([str(root / APP)], OFFLINE)
    (d,) = _kv503(result)
    assert "Argo CD builds its pods from the directory helm/vllm" in d.message
    assert summarise(result).not_read == 1


def test_without_helm_the_chart_is_said_not_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = run_check([str(root / APP)], OFFLINE)
    (d,) = _kv503(result)
    assert "the helm binary is not on PATH" in d.message and d.loc is not None
    assert (
        d.loc.line == [i + 1 for i, x in enumerate((root / APP).read_text().splitlines()) if "path:" in x][0]
    )
    assert summarise(result).not_read == 1


@pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm")
def test_real_helm_reports_the_chart_it_cannot_render(tmp_path: Path) -> None:
    """The chart at that commit does not render: templates/servicemonitor.yaml ends inside its ``if`` (no
    ``end``), so ``helm template`` (and Argo CD) fail; kvlint says so at that template (helm's parse error names
    it, kvlint.render._helm_failure) and counts the Application not read."""
    root = _repo(tmp_path)
    assert "{{- end }}" not in (root / "helm/vllm/templates/servicemonitor.yaml").read_text()
    result = run_check([str(root / APP)], OFFLINE)
    (err,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert err.loc is not None and err.loc.file == str(root / "helm/vllm/templates/servicemonitor.yaml")
    assert "servicemonitor.yaml" in err.message
    (d,) = _kv503(result)
    assert "was not rendered: helm template failed" in d.message and summarise(result).not_read == 1


@pytest.mark.skipif(shutil.which("helm") is None, reason="needs helm")
def test_real_helm_renders_the_chart_with_the_parameters(tmp_path: Path) -> None:
    """With the unrenderable template removed and serviceAccount.create set inline (changes made for this test:
    the chart fails on both at that commit), the chart renders: the vLLM
    Deployment is built from the Application's parameters (maxModelLen 8192, maxNumSeqs 256) and located in
    the chart's deployment template."""
    root = _repo(tmp_path)
    (root / "helm/vllm/templates/servicemonitor.yaml").unlink()
    app = root / APP
    # the chart's _helpers.tpl reads serviceAccount.create, which its values.yaml does not set: set here
    app.write_text(
        app.read_text().replace(
            "    helm:\n", "    helm:\n      valuesObject: {serviceAccount: {create: false}}\n", 1
        )
    )
    params = {
        p["name"]: p["value"] for p in yaml.safe_load(app.read_text())["spec"]["source"]["helm"]["parameters"]
    }
    result = run_check([str(app)], OFFLINE)
    (c,) = result.containers
    (container,) = c.workload.pod_spec["containers"]
    args = list(container["args"])
    assert args[args.index("--max-model-len") + 1] == params["deployment.maxModelLen"]
    assert args[args.index("--max-num-seqs") + 1] == params["deployment.maxNumSeqs"]
    assert c.workload.name == "vllm-granite" or c.workload.name.startswith("vllm-granite")
    loc = container["args"].locs[args.index("--max-model-len") + 1]
    assert loc.file == str(root / "helm/vllm/templates/deployment.yaml")
    assert (
        "deployment.maxModelLen"
        in (root / "helm/vllm/templates/deployment.yaml").read_text().splitlines()[loc.line - 1]
    )
    assert not _kv503(result) and summarise(result).not_read == 0
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.loc is not None and note.loc.file == str(app)


_RENDERED = """\
---
# Source: vllm/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm-granite}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, ibm-granite/granite-3.1-8b-instruct, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _stand_in_helm(tmp: Path) -> Path:
    """A ``helm`` on PATH that records its arguments (one a line) and prints :data:`_RENDERED` (made up)."""
    bindir = tmp / "bin"
    bindir.mkdir()
    log = tmp / "helm-args"
    out = tmp / "rendered.yaml"
    out.write_text(_RENDERED)
    script = bindir / "helm"
    script.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {log}\ncat {out}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return log


def test_values_are_passed_in_argo_cd_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """valueFiles (relative to the chart, in the tree), then the inline values, then parameters as --set and
    forceString ones as --set-string; value files out of the tree or of another source are not passed and
    are named in the note; the rendered pod is linted and the KV504 note sits at the source's path."""
    root = _repo(tmp_path)
    (root / "helm" / "vllm" / "values-prod.yaml").write_text("deployment: {maxModelLen: 4096}\n")
    os.symlink(
        "values-prod.yaml", root / "helm" / "vllm" / "linked.yaml"
    )  # inside the chart: helm may render
    app = root / "k8s" / "argocd" / "app2.yaml"
    app.write_text(
        "apiVersion: argoproj.io/v1alpha1\n"
        "kind: Application\n"
        "metadata: {name: chat}\n"
        "spec:\n"
        "  source:\n"
        "    repoURL: https://github.com/pkstaz/pdf-comparator-ai\n"
        "    path: helm/vllm\n"
        "    helm:\n"
        "      valueFiles: [values-prod.yaml, ../../../etc/passwd, linked.yaml, $values/x.yaml]\n"
        "      values: |\n"
        "        model: {huggingfaceName: ibm-granite/granite-3.1-8b-instruct}\n"
        "      parameters:\n"
        "      - {name: deployment.maxNumSeqs, value: '64'}\n"
        "      - {name: api.corsAllowOrigins, value: 'a,b'}\n"
        "      - {name: deployment.image.tag, value: '1.0', forceString: true}\n"
    )
    log = _stand_in_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = run_check([str(app)], OFFLINE)
    args = log.read_text().splitlines()
    values = [a.split("=", 1)[1] for a in args if a.startswith("--values=")]
    assert values[0] == str(root / "helm" / "vllm" / "values-prod.yaml") and len(values) == 2
    assert (
        Path(values[1]).name == "values.yaml" and not Path(values[1]).exists()
    )  # the inline values, removed
    sets = [a for a in args if a.startswith("--set")]
    assert sets == [
        "--set=deployment.maxNumSeqs=64",
        "--set=api.corsAllowOrigins=a\\,b",
        "--set-string=deployment.image.tag=1.0",
    ]
    assert args[-3:] == ["--", "chat", str(root / "helm" / "vllm")]
    assert args.index(sets[0]) > max(args.index(f"--values={v}") for v in values)
    (c,) = result.containers
    assert c.workload.loc is not None and c.workload.loc.file.endswith(
        os.path.join("templates", "deployment.yaml")
    )
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.loc is not None and note.loc.file == str(app) and note.loc.line == 7
    assert "../../../etc/passwd (a path that climbs with '..')" in note.message
    assert "linked.yaml (a path through a symbolic link)" in note.message
    assert "$values/x.yaml (of another source)" in note.message
    assert not _kv503(result)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../outside", "climbs with '..'"),
        ("/etc", "an absolute or empty path"),
        ("charts/link", "through a symbolic link"),
        ("charts/out", "through a symbolic link"),
    ],
)
def test_paths_out_of_the_tree_are_refused_and_said(tmp_path: Path, path: str, why: str) -> None:
    root = _repo(tmp_path)
    (root / "charts").mkdir()
    os.symlink(root / "helm" / "vllm", root / "charts" / "link")  # a link inside the tree: still refused
    outside = tmp_path / "outside"
    shutil.copytree(root / "helm" / "vllm", outside)
    os.symlink(outside, root / "charts" / "out")
    text = (root / APP).read_text().replace("path: helm/vllm", f"path: {path}")
    app = root / "k8s" / "argocd" / "bad.yaml"
    app.write_text(text)
    charts, refused = local_charts(_doc(app))
    assert not charts and len(refused) == 1 and why in refused[0]
    (d,) = _kv503(run_check([str(app)], OFFLINE))
    assert "the chart it names is not rendered" in d.message and why in d.message


def test_contained_never_leaves_the_root(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert contained(str(root), "helm/vllm")[0] == str(root / "helm" / "vllm")
    assert contained(str(root), "./helm/./vllm/")[0] == str(root / "helm" / "vllm")
    for bad in ("", "..", "helm/../../x", "/", "a\x00b", "helm/vllm/../../.."):
        assert contained(str(root), bad)[0] is None
    assert contained(str(root), "values-prod.yaml", base="helm/vllm")[0] is None  # missing


def test_value_files_and_charts_inside_git_metadata_are_refused(tmp_path: Path) -> None:
    """``.git`` holds git's metadata, not the checkout's files (actions/checkout keeps its token in .git/config):
    a Flux ``valuesFiles: [.git/config]`` or an Argo CD value file ``../../.git/...`` was passed to helm."""
    root = _repo(tmp_path)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".GIT").mkdir()
    (root / ".GIT" / "x").write_text("a: 1\n")
    for bad in (".git/config", "./.git/config", ".GIT/x", "helm/../.git/config"):
        path, why = contained(str(root), bad)
        assert path is None and why is not None, bad
    assert ".git" in (contained(str(root), ".git/config")[1] or "")


def test_flux_helmrelease_with_a_git_repository_chart_path(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "prod.yaml").write_text("deployment: {maxModelLen: 4096}\n")
    hr = root / "hr.yaml"
    hr.write_text(
        "apiVersion: helm.toolkit.fluxcd.io/v2\n"
        "kind: HelmRelease\n"
        "metadata: {name: granite, namespace: flux-system}\n"
        "spec:\n"
        "  targetNamespace: llm\n"
        "  chart:\n"
        "    spec:\n"
        "      chart: ./helm/vllm\n"
        "      valuesFiles: [helm/vllm/values.yaml, prod.yaml, ../x.yaml]\n"
        "      sourceRef: {kind: GitRepository, name: flux-system}\n"
        "  valuesFrom: [{kind: ConfigMap, name: granite-values}]\n"
        "  values: {deployment: {maxNumSeqs: 64}}\n"
    )
    (lc,), refused = local_charts(_doc(hr))
    assert not refused and lc.release == "llm-granite"
    assert lc.value_files == (str(root / "helm" / "vllm" / "values.yaml"), str(root / "prod.yaml"))
    assert lc.inline is not None and yaml.safe_load(lc.inline) == {"deployment": {"maxNumSeqs": 64}}
    assert lc.unseen == ("value file ../x.yaml (a path that climbs with '..')", "ConfigMap/granite-values")
    other = hr.read_text().replace("kind: GitRepository", "kind: HelmRepository")
    hr.write_text(other)
    assert local_charts(_doc(hr)) == ([], [])  # a chart of a Helm repository: not in this checkout


def test_a_chart_serving_no_llm_is_not_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An Application of a local chart that names no engine, nor does its chart: nothing rendered, nothing
    said (as before)."""
    root = _repo(tmp_path)
    chart = root / "charts" / "grafana"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: grafana\nversion: 1.0.0\n")
    (chart / "values.yaml").write_text("image: grafana/grafana\n")
    app = root / "grafana.yaml"
    app.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: grafana}\n"
        "spec:\n  source: {repoURL: https://github.com/example/x, path: charts/grafana}\n"
    )
    log = _stand_in_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = run_check([str(app)], OFFLINE)
    assert not log.exists() and not result.diagnostics and not result.containers
    assert find_workloads(load_paths([str(app)]).documents) == []


def test_the_charts_rendered_in_one_run_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One 15 KB file of 100 Applications with 10 sources each naming the checkout's chart ran helm 1,000 times
    (47 s; a chart that loops until the renderer's timeout, 120 s each): at most MAX_LOCAL_RENDERS run for one
    file, the others get a KV503 saying why, and the next run renders again."""
    from kvlint.workloads.gitops_local import MAX_LOCAL_RENDERS

    root = _repo(tmp_path)
    sources = "".join(
        f"  - {{repoURL: x, path: helm/vllm, helm: {{releaseName: r{j}}}}}\n" for j in range(10)
    )
    docs = [
        f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a{i}}}\nspec:\n  sources:\n{sources}"
        for i in range(10)
    ]
    app = root / "many.yaml"
    app.write_text("---\n".join(docs))
    log = _stand_in_helm(tmp_path)
    runs = tmp_path / "runs"
    script = tmp_path / "bin" / "helm"
    script.write_text(script.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\necho x >> {runs}\n", 1))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for _ in range(2):
        runs.write_text("")
        result = run_check([str(app)], OFFLINE)
        assert len(runs.read_text().splitlines()) == MAX_LOCAL_RENDERS < 100
        assert len(result.containers) == MAX_LOCAL_RENDERS
        capped = [d for d in _kv503(result) if f"at most {MAX_LOCAL_RENDERS} charts" in d.message]
        assert all("of one file" in d.message for d in capped)
        assert len(capped) == 100 - MAX_LOCAL_RENDERS
    assert log.exists()


@pytest.mark.parametrize("helm", ['parameters: [{name: a, value: "x\\0y"}]', 'releaseName: "r\\0"'])
def test_a_nul_in_what_helm_is_passed_is_a_finding_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helm: str
) -> None:
    """A parameter value or release name holding NUL (a YAML "\\0" escape) reached Popen, which raised
    ValueError ("embedded null byte"): kvlint check ended in a traceback, and the other documents of the file
    were not reported. Now a KV001 at the chart and the Application's KV503; the Deployment beside it is
    checked."""
    root = _repo(tmp_path)
    _stand_in_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    app = root / "nul.yaml"
    app.write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: chat}\n"
        f"spec:\n  source: {{repoURL: x, path: helm/vllm, helm: {{{helm}}}}}\n---\n"
        + _RENDERED.split("\n", 2)[2]
    )
    result = run_check([str(app)], OFFLINE)
    (err,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "holds a NUL character" in err.message
    (d,) = _kv503(result)
    assert "holds a NUL character" in d.message
    (c,) = result.containers
    assert (
        c.workload.name == "vllm-granite" and c.workload.loc is not None and c.workload.loc.file == str(app)
    )


def test_max_file_bytes_caps_what_helm_renders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--max-file-bytes`` bounds every input, and what kvlint renders is one: the charts of this checkout that
    an Application deploys were rendered under the default 16 MiB whatever the option said. A rendering of
    about 150 KB is now refused under a 100 KB cap (a KV503 saying the chart was not rendered and why, no
    container linted) and linted under a 1 MB one."""
    root = _repo(tmp_path)
    _stand_in_helm(tmp_path)
    (tmp_path / "rendered.yaml").write_text(_RENDERED + "# " + "x" * 150_000 + "\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    app = root / APP
    small = run_check([str(app)], Options(allow_hub=False, max_file_bytes=100_000))
    assert not small.containers
    (note,) = [d for d in _kv503(small) if "not rendered" in d.message]
    assert "more than the 100000-byte limit" in note.message, note.message
    large = run_check([str(app)], Options(allow_hub=False, max_file_bytes=1_000_000))
    assert len(large.containers) == 1 and not [d for d in _kv503(large) if "not rendered" in d.message]


def test_renders_of_a_file_read_in_parts_do_not_depend_on_jobs(tmp_path: Path) -> None:
    """A file over kvlint.stream.SEGMENT_BYTES is analysed in batches that several --jobs processes take apart,
    and each process counted MAX_LOCAL_RENDERS renders of the file for itself: a 6 MB file of 300 Applications
    rendered 64 charts with --jobs 1 and 128 with --jobs 2, and the reports differed. Each batch now has its
    share of MAX_LOCAL_RENDERS: the same renders, at most MAX_LOCAL_RENDERS, and the same report either way."""
    import subprocess
    import sys

    from kvlint.stream import SEGMENT_BYTES
    from kvlint.workloads.gitops_local import MAX_LOCAL_RENDERS

    root = _repo(tmp_path)
    _stand_in_helm(tmp_path)
    runs = tmp_path / "runs"
    script = tmp_path / "bin" / "helm"
    script.write_text(script.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\necho x >> {runs}\n", 1))
    pad = "x" * 20_000
    docs = [
        f"apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: a{i}}}\nspec:\n"
        f"  source: {{repoURL: x, path: helm/vllm, helm: {{releaseName: r{i}}}}}\n---\n"
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{k: {pad}}}\n"
        for i in range(300)
    ]
    big = root / "many.yaml"
    big.write_text("---\n".join(docs))
    assert big.stat().st_size > SEGMENT_BYTES
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    reports = []
    for jobs in ("1", "2"):
        runs.write_text("")
        cmd = [sys.executable, "-m", "kvlint", "check", "--offline", "--no-config", "--jobs", jobs, str(big)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert "Traceback" not in done.stderr, done.stderr
        reports.append(done.stdout)
        assert 0 < len(runs.read_text().splitlines()) <= MAX_LOCAL_RENDERS
    assert reports[0] == reports[1]
    assert f"at most {MAX_LOCAL_RENDERS} charts" in reports[0]
