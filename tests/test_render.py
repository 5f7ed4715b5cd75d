"""Helm / Kustomize inputs (kvlint.render): Source-comment mapping, values-file recognition, rendering."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys

import pytest

from kvlint import render
from kvlint.load import load_paths
from kvlint.pipeline import Options, run_documents
from kvlint.render import RenderError, find_sources, helm_values_reason, load_inputs, render_helm
from kvlint.source import LDict, LList, Loc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELM = os.path.join(ROOT, "fixtures", "helm")
FIX_KUSTOMIZE = os.path.join(ROOT, "fixtures", "kustomize")
RENDERED = os.path.join("fixtures", "helm", "rendered", "chat-chart.yaml")
CHART = os.path.join("fixtures", "helm", "chat-chart")
VALUES_DIR = os.path.join(HELM, "values")
OFFLINE = Options(allow_hub=False)


@pytest.fixture(autouse=True)
def _cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _scalar_locs(node: object) -> list[tuple[object, Loc]]:
    """(scalar value, its Loc) for every scalar under ``node``."""
    out: list[tuple[object, Loc]] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, LDict):
            for k, v in n.items():
                if isinstance(v, (LDict, LList)):
                    stack.append(v)
                else:
                    out.append((v, n.locs[k]))
        elif isinstance(n, LList):
            for i, v in enumerate(n):
                if isinstance(v, (LDict, LList)):
                    stack.append(v)
                else:
                    out.append((v, n.locs[i]))
    return out


def _rendered_lines() -> tuple[list[str], dict[str, int]]:
    with open(RENDERED, encoding="utf-8") as fh:
        text = fh.read()
    return text.splitlines(), {src: line for line, src in find_sources(text)}


def test_find_sources_reads_helm_comments() -> None:
    lines, sources = _rendered_lines()
    assert set(sources) == {"chat-chart/templates/service.yaml", "chat-chart/templates/deployment.yaml"}
    for src, line in sources.items():
        assert lines[line - 1] == f"# Source: {src}"
        assert lines[line - 2] == "---"


def _template_text(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines()


def test_every_location_names_the_template_line_that_wrote_it() -> None:
    """Each scalar's rewritten (file, line, column) is a line of the template file beside the rendered
    output: the line holding the value literally, or the action (``{{ ... }}``) that wrote it."""
    loaded = load_inputs([RENDERED])
    assert [d.kind for d in loaded.documents] == ["Service", "Deployment"]
    checked = 0
    for doc in loaded.documents:
        assert doc.path == doc.loc.file and os.path.isfile(doc.path)
        tpl = _template_text(doc.path)
        assert tpl[doc.loc.line - 1].startswith("apiVersion")
        for value, loc in _scalar_locs(doc.data):
            assert loc.file == doc.path
            text = tpl[loc.line - 1][loc.column - 1 :].lstrip('"')
            literal = text.split("{{")[0]
            assert text.startswith(str(value)) or ("{{" in text and str(value).startswith(literal)), (
                value,
                loc,
                text,
            )
            checked += 1
    assert checked > 20
    deployment = loaded.documents[1].data
    # values written by `include ... | nindent N` point at that include line, not at rendered offsets
    assert deployment["metadata"]["labels"].locs["app.kubernetes.io/name"].line == 6
    assert deployment["spec"]["template"]["metadata"]["labels"].locs["app.kubernetes.io/instance"].line == 15
    # literal lines below those expansions keep their own template line
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [loc.line for loc in args.locs] == [23, 24, 25]
    assert deployment["spec"]["template"]["spec"]["containers"][0].locs["image"] == Loc(
        deployment.loc.file, 21, 18
    )


def test_stdin_maps_like_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    with open(RENDERED, "rb") as fh:
        data = fh.read()
    # from the chart's parent directory, piped output names the same template files as the file does
    monkeypatch.chdir(HELM)
    rendered = os.path.join("rendered", "chat-chart.yaml")
    from_file = run_documents(load_inputs([rendered]), OFFLINE)
    from_stdin = run_documents(load_inputs(["-"], stdin=io.BytesIO(data)), OFFLINE)
    assert from_file.diagnostics
    assert [(d.rule, d.message, d.loc) for d in from_file.diagnostics] == [
        (d.rule, d.message, d.loc) for d in from_stdin.diagnostics
    ]
    assert {d.loc.file for d in from_stdin.diagnostics if d.loc} == {
        os.path.join("chat-chart", "templates", "deployment.yaml")
    }
    # inside the chart (`helm template x . | kvlint check -`): the paths start with the chart's own name
    monkeypatch.chdir(os.path.join(HELM, "chat-chart"))
    inside = run_documents(load_inputs(["-"], stdin=io.BytesIO(data)), OFFLINE)
    assert [(d.rule, d.loc.line if d.loc else 0) for d in inside.diagnostics] == [
        (d.rule, d.loc.line if d.loc else 0) for d in from_file.diagnostics
    ]
    # ... relative to the chart itself, found through its Chart.yaml name, whatever the directory is called
    assert {d.loc.file for d in inside.diagnostics if d.loc} == {os.path.join("templates", "deployment.yaml")}
    # elsewhere, where the templates cannot be found, stdin keeps its own true positions
    monkeypatch.chdir(ROOT)
    lines, _ = _rendered_lines()
    elsewhere = run_documents(load_inputs(["-"], stdin=io.BytesIO(data)), OFFLINE)
    assert [d.rule for d in elsewhere.diagnostics] == [d.rule for d in from_file.diagnostics]
    for d in elsewhere.diagnostics:
        assert d.loc is not None and d.loc.file == "-"
        assert lines[d.loc.line - 1].strip() == "args:"


def test_diagnostics_point_at_the_template_file() -> None:
    result = run_documents(load_inputs([RENDERED]), OFFLINE)
    kv103 = [d for d in result.diagnostics if d.rule == "KV103"]
    assert kv103, [d.rule for d in result.diagnostics]
    loc = kv103[0].loc
    chart_parent = os.path.relpath(os.path.dirname(os.path.dirname(RENDERED)))
    name = "chat-chart/templates/deployment.yaml"
    # a rendered file on disk: findings name the real template file next to it (it exists)
    assert loc is not None and loc.file == os.path.join(chart_parent, name) and os.path.isfile(loc.file)
    # ... at the template's own line of the command the finding is about (its args: key)
    assert _template_text(loc.file)[loc.line - 1].strip() == "args:"
    # the same manifest loaded plainly (no Source comments) reports the same rules
    raw = run_documents(load_paths([os.path.join("fixtures", "examples", "chat-8b-l4.yaml")]), OFFLINE)
    assert sorted(d.rule for d in raw.diagnostics) == sorted(d.rule for d in result.diagnostics)


KUBEAI = os.path.join("fixtures", "helm", "kubeai")
KUBEAI_RENDERED = os.path.join(KUBEAI, "rendered", "models.yaml")
KUBEAI_TEMPLATE = os.path.join(KUBEAI, "charts", "models", "templates", "models.yaml")


def test_real_helm_output_in_a_repository_layout_maps_to_its_chart() -> None:
    """KubeAI's model catalogue: real `helm template` output kept outside the chart (rendered/ beside
    charts/). Every document maps to charts/models/templates/models.yaml, each value to its line."""
    loaded = load_inputs([KUBEAI_RENDERED])
    assert len(loaded.documents) == 47 and not loaded.findings
    tpl = _template_text(KUBEAI_TEMPLATE)
    for doc in loaded.documents:
        assert doc.kind == "Model" and doc.path == KUBEAI_TEMPLATE
        assert tpl[doc.loc.line - 1] == "apiVersion: kubeai.org/v1"
        spec = doc.data["spec"]
        assert tpl[doc.data["metadata"].locs["name"].line - 1] == "  name: {{ $name }}"
        assert tpl[spec.locs["url"].line - 1] == "  url: {{ $model.url }}"
        assert tpl[spec.locs["minReplicas"].line - 1].startswith("  minReplicas: {{ default 0")
        if "args" in spec:  # every flag toYaml wrote points at the toYaml line under `args:`
            assert {(loc.line, loc.column) for loc in spec["args"].locs} == {(27, 3)}
            assert tpl[26] == "  {{- toYaml . | nindent 4 }}" and tpl[25] == "  args:"
    result = run_documents(loaded, OFFLINE)
    assert result.diagnostics
    for d in result.diagnostics:
        assert d.loc is not None and d.loc.file == KUBEAI_TEMPLATE
        assert "{{" in tpl[d.loc.line - 1] or d.loc.line in (4, 5, 6, 12), (d.rule, d.loc)


def test_locations_before_any_source_comment_are_kept(tmp_path: pytest.TempPathFactory) -> None:
    p = os.path.join(str(tmp_path), "mixed.yaml")
    with open(p, "w", encoding="utf-8") as fh:
        fh.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# Source: c/templates/b.yaml\n")
        fh.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
    # the template does not exist: a rendered manifest committed as is keeps its own locations
    docs = load_inputs([p]).documents
    assert [(d.path, d.loc.line) for d in docs] == [(p, 1), (p, 7)]
    # a file of that name that is not the template of this document (another chart's) is not taken
    os.makedirs(os.path.join(str(tmp_path), "c", "templates"))
    template = os.path.join(str(tmp_path), "c", "templates", "b.yaml")
    with open(template, "w", encoding="utf-8") as fh:
        fh.write("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: other\n")
    assert [(d.path, d.loc.line) for d in load_inputs([p]).documents] == [(p, 1), (p, 7)]
    # with the real template beside it, locations after the Source comment name it (before: kept)
    with open(template, "w", encoding="utf-8") as fh:
        fh.write("# a template\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n")
    tpl = os.path.join(os.path.relpath(str(tmp_path)), "c", "templates", "b.yaml")
    docs = load_inputs([p]).documents
    assert [(d.path, d.loc.line) for d in docs] == [(p, 1), (tpl, 2)]
    assert docs[1].data["metadata"].locs["name"] == Loc(tpl, 5, 9)


@pytest.mark.parametrize(
    "name",
    sorted(f for f in os.listdir(VALUES_DIR) if f.endswith(".yaml") and "production-stack" not in f),
)
def test_helm_values_files_are_reported(name: str) -> None:
    """Values files of charts kvlint does not read get one KV002 (production-stack's chart values are read as
    the Deployments the chart renders: tests/test_stack_values.py)."""
    path = os.path.join(VALUES_DIR, name)
    loaded = load_inputs([path])
    kv002 = [f for f in loaded.findings if f.rule == "KV002"]
    assert len(kv002) == 1
    assert "is a Helm values file" in kv002[0].message and "helm template" in kv002[0].fix
    assert kv002[0].loc is not None and kv002[0].loc.file == path
    assert "helm template" in kv002[0].fix


def test_production_stack_values_reason_names_model_spec() -> None:
    path = os.path.join(
        VALUES_DIR, "vllm-project__production-stack__tutorials__assets__values-02-basic-config.yaml"
    )
    doc = load_paths([path]).documents[0]
    assert "servingEngineSpec.modelSpec" in (helm_values_reason(doc) or "")
    # ... and, kvlint building the pods the chart renders from them, no KV002 for the file
    assert not [f for f in load_inputs([path]).findings if f.rule == "KV002"]


def test_manifests_are_not_values_files() -> None:
    loaded = load_inputs([os.path.join("fixtures", "examples"), RENDERED])
    assert not [f for f in loaded.findings if f.rule == "KV002"]


def test_values_file_beside_chart_yaml(tmp_path: pytest.TempPathFactory) -> None:
    chart = os.path.join(str(tmp_path), "c")
    os.makedirs(chart)
    with open(os.path.join(chart, "Chart.yaml"), "w") as fh:
        fh.write("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    with open(os.path.join(chart, "values-prod.yaml"), "w") as fh:
        fh.write("model: meta-llama/Llama-3.1-8B-Instruct\n")
    lone = os.path.join(str(tmp_path), "values-prod.yaml")
    shutil.copy(os.path.join(chart, "values-prod.yaml"), lone)
    flagged = load_inputs([os.path.join(chart, "values-prod.yaml")]).findings
    assert [f.rule for f in flagged] == ["KV002"] and "beside a Chart.yaml" in flagged[0].message
    assert load_inputs([lone]).findings == []


def test_chart_without_helm_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(render.shutil, "which", lambda name: None)
    with pytest.raises(RenderError, match="helm binary is not on PATH"):
        load_inputs([CHART])
    with pytest.raises(RenderError, match="neither kustomize nor kubectl"):
        load_inputs([os.path.join("fixtures", "kustomize", "overlay")])


def test_helm_options_need_a_chart() -> None:
    with pytest.raises(RenderError, match="--helm-values/--helm-set"):
        load_inputs([RENDERED], helm_set=["x=1"])
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_inputs([CHART], helm_values=["nope.yaml"])


def _fake_helm(tmp: str, body: str) -> str:
    """A ``helm`` stand-in script in ``tmp/bin``; returns that directory (put it first on PATH)."""
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    exe = os.path.join(bindir, "helm")
    with open(exe, "w") as fh:
        fh.write(f"#!{sys.executable}\nimport sys\n{body}\n")
    os.chmod(exe, os.stat(exe).st_mode | stat.S_IEXEC)
    return bindir


def test_chart_rendering_maps_to_real_template_files(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a helm on PATH that prints the recorded output, locations name files inside the chart."""
    tmp = str(tmp_path)
    args_file = os.path.join(tmp, "args")
    bindir = _fake_helm(
        tmp,
        f"open({args_file!r}, 'w').write(' '.join(sys.argv[1:]))\n"
        f"sys.stdout.write(open({os.path.join(ROOT, RENDERED)!r}).read())",
    )
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    values = os.path.join(CHART, "values.yaml")
    loaded = load_inputs([CHART], helm_values=[values], helm_set=["maxModelLen=8192"])
    with open(args_file) as fh:
        # options as single --name=value words before "--", then release and chart (issue 14: no argument
        # can become a helm option)
        assert fh.read().split() == [
            "template",
            f"--values={values}",
            "--set=maxModelLen=8192",
            "--",
            "chat-chart",
            CHART,
        ]
    assert {d.path for d in loaded.documents} == {
        os.path.join(CHART, "templates", "service.yaml"),
        os.path.join(CHART, "templates", "deployment.yaml"),
    }
    for d in loaded.documents:
        assert os.path.isfile(d.path)
    assert loaded.files == 1


def test_chart_that_helm_rejects_is_kv001(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = _fake_helm(
        str(tmp_path), "sys.stderr.write('Error: parse error at (x/templates/a.yaml:3)\\n')\nsys.exit(1)"
    )
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    loaded = load_inputs([CHART, os.path.join("fixtures", "examples", "chat-8b-l4.yaml")])
    assert [f.rule for f in loaded.findings] == ["KV001"]
    assert loaded.findings[0].loc == Loc(os.path.join(CHART, "Chart.yaml"), 1, 1)
    assert "parse error at (x/templates/a.yaml:3)" in loaded.findings[0].message
    assert len(loaded.documents) == 1  # the other input is still linted


def _helm_template(cwd: str, *args: str) -> str:
    helm = shutil.which("helm")
    assert helm is not None
    proc = subprocess.run([helm, "template", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_real_helm_renders_the_recorded_output() -> None:
    """The recorded fixtures are helm's own output, byte for byte, and kvlint's rendering of the charts
    gives the same documents at the same template locations as loading the recorded output."""
    with open(RENDERED, encoding="utf-8") as fh:
        assert _helm_template(ROOT, "chat", CHART) == fh.read()
    with open(KUBEAI_RENDERED, encoding="utf-8") as fh:
        assert _helm_template(KUBEAI, "./charts/models", "--set", "all.enabled=true") == fh.read()
    for chart, recorded, kwargs in (
        (CHART, RENDERED, {"release": "chat"}),
        (os.path.join(KUBEAI, "charts", "models"), KUBEAI_RENDERED, {"set_values": ["all.enabled=true"]}),
    ):
        rendered = render_helm(chart, **kwargs)  # type: ignore[arg-type]
        loaded = load_inputs([recorded])
        assert [(d.path, d.loc, d.data) for d in rendered.documents] == [
            (d.path, d.loc, d.data) for d in loaded.documents
        ]
        assert [d.data.locs for d in rendered.documents] == [d.data.locs for d in loaded.documents]


@pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)
def test_kustomize_overlay_maps_to_the_base_file() -> None:
    base = os.path.join("fixtures", "kustomize", "base", "deployment.yaml")
    loaded = load_inputs([os.path.join("fixtures", "kustomize", "overlay")])
    (doc,) = loaded.documents
    assert doc.name == "prod-chat-8b" and doc.namespace == "prod"
    assert doc.path == base
    result = run_documents(loaded, OFFLINE)
    raw = run_documents(load_paths([base]), OFFLINE)
    assert result.diagnostics and [(d.rule, d.loc) for d in result.diagnostics] == [
        (d.rule, d.loc) for d in raw.diagnostics
    ]


@pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)
def test_kustomize_strategic_merge_patch_values_point_at_the_patch(tmp_path: pytest.TempPathFactory) -> None:
    """A value a strategic-merge patch sets points at the patch; values only the base has point at the
    base (the patch names the container but has no args); containers are paired by name."""
    root = str(tmp_path)
    base = os.path.join(root, "base")
    over = os.path.join(root, "prod")
    os.makedirs(os.path.join(root, ".git"))  # a repository: the overlay's ../base is inside it
    os.makedirs(base)
    os.makedirs(over)
    with open(os.path.join(FIX_KUSTOMIZE, "base", "deployment.yaml"), encoding="utf-8") as fh:
        deployment = fh.read()
    with open(os.path.join(base, "deployment.yaml"), "w", encoding="utf-8") as fh:
        fh.write(deployment)
    with open(os.path.join(base, "kustomization.yaml"), "w", encoding="utf-8") as fh:
        fh.write("resources:\n  - deployment.yaml\n")
    patch = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: {ns}\nspec:\n"
        "  template:\n    spec:\n"
        "      containers:\n        - name: {container}\n          resources:\n            limits:\n"
        "              nvidia.com/gpu: 2\n"
    )
    import yaml

    src = yaml.safe_load(deployment)
    name = src["metadata"]["name"]
    container = src["spec"]["template"]["spec"]["containers"][0]["name"]
    with open(os.path.join(over, "patch-gpus.yaml"), "w", encoding="utf-8") as fh:
        fh.write(patch.format(name=name, ns=src["metadata"].get("namespace", "default"), container=container))
    with open(os.path.join(over, "kustomization.yaml"), "w", encoding="utf-8") as fh:
        fh.write("resources:\n  - ../base\nnamePrefix: prod-\npatches:\n  - path: patch-gpus.yaml\n")
    (doc,) = load_inputs([over]).documents
    c = doc.data["spec"]["template"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 2
    gpu_loc = c["resources"]["limits"].locs["nvidia.com/gpu"]
    assert gpu_loc.file == os.path.join(over, "patch-gpus.yaml") and gpu_loc.line == 13
    assert {loc.file for loc in c["args"].locs} == {os.path.join(base, "deployment.yaml")}
    assert c.locs["image"].file == os.path.join(base, "deployment.yaml")
    assert doc.path == os.path.join(base, "deployment.yaml")


def test_path_below_an_unenterable_directory_is_kv001(monkeypatch: pytest.MonkeyPatch) -> None:
    """Root can enter any directory, so os.stat raises EACCES for that one path, as it does for others."""
    locked = os.path.join("somewhere", "locked", "m.yaml")
    real_stat = os.stat

    def stat(path, *a, **k):  # type: ignore[no-untyped-def]
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_stat(path, *a, **k)

    monkeypatch.setattr(os, "stat", stat)
    loaded = load_inputs([locked, RENDERED])
    assert [(f.rule, f.loc) for f in loaded.findings] == [("KV001", Loc(locked, 1, 1))]
    assert "permission denied" in loaded.findings[0].message
    assert len(loaded.documents) == 2  # the other input is still read


_TWO_DEPLOYMENTS = """\
{{- range $role := list "prefill" "decode" }}
{{- end }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-prefill
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model
            - meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=8192
          resources:
            limits:
              nvidia.com/gpu: 1
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-decode
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args:
            - --model
            - meta-llama/Llama-3.1-8B-Instruct
            - --max-model-len=8192
            - --gpu-memory-utilzation=0.9
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _chart(root: str, dirname: str, chart_name: str, template: str) -> str:
    chart = os.path.join(root, dirname)
    os.makedirs(os.path.join(chart, "templates"))
    with open(os.path.join(chart, "Chart.yaml"), "w", encoding="utf-8") as fh:
        fh.write(f"apiVersion: v2\nname: {chart_name}\nversion: 0.1.0\n")
    with open(os.path.join(chart, "templates", "serve.yaml"), "w", encoding="utf-8") as fh:
        fh.write(template)
    return chart


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_second_document_of_a_template_maps_to_its_own_lines(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two look-alike Deployments in one template: the decode one's typo is on the decode lines, and the
    chart is found from inside its directory although the directory is not named like the chart."""
    chart = _chart(str(tmp_path), "some-dir", "fleet", _TWO_DEPLOYMENTS)
    template = os.path.join(chart, "templates", "serve.yaml")
    line = _TWO_DEPLOYMENTS.splitlines().index("            - --gpu-memory-utilzation=0.9") + 1
    for cwd, arg in ((str(tmp_path), "some-dir"), (chart, ".")):
        monkeypatch.chdir(cwd)
        res = run_documents(load_inputs([arg]), OFFLINE)
        (d,) = [d for d in res.diagnostics if d.rule == "KV205"]
        assert d.loc is not None and os.path.samefile(d.loc.file, template) and d.loc.line == line, d.loc


def test_a_look_alike_template_of_another_chart_is_not_taken(tmp_path: pytest.TempPathFactory) -> None:
    """A rendered file whose Source names llm/templates/deployment.yaml, next to a different chart called
    llm (a helm-create style Deployment): the findings stay in the rendered file."""
    root = str(tmp_path)
    other = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "llm.fullname" . }}
spec:
  selector:
    matchLabels:
      app: web
  template:
    spec:
      serviceAccountName: {{ include "llm.serviceAccountName" . }}
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: 80
              protocol: TCP
          livenessProbe:
            {{- toYaml .Values.livenessProbe | nindent 12 }}
"""
    os.makedirs(os.path.join(root, "llm", "templates"))
    with open(os.path.join(root, "llm", "templates", "deployment.yaml"), "w", encoding="utf-8") as fh:
        fh.write(other)
    rendered = os.path.join(root, "rendered.yaml")
    with open(os.path.join(ROOT, RENDERED), encoding="utf-8") as fh:
        text = fh.read().replace("chat-chart/templates/deployment.yaml", "llm/templates/deployment.yaml")
    with open(rendered, "w", encoding="utf-8") as fh:
        fh.write(text)
    docs = [d for d in load_inputs([rendered]).documents if d.kind == "Deployment"]
    assert docs and all(d.path == rendered for d in docs)


def test_duplicate_key_message_names_the_template_lines(tmp_path: pytest.TempPathFactory) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "c", "templates"))
    template = "# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: 1\n  a: 2\n"
    with open(os.path.join(root, "c", "templates", "cm.yaml"), "w", encoding="utf-8") as fh:
        fh.write(template)
    rendered = os.path.join(root, "out.yaml")
    with open(rendered, "w", encoding="utf-8") as fh:
        fh.write(
            "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
        )
        fh.write("data:\n  a: 1\n  a: 2\n")
    (f,) = [f for f in load_inputs([rendered]).findings if f.rule == "KV004"]
    assert (
        f.loc is not None
        and f.loc.file.endswith(os.path.join("c", "templates", "cm.yaml"))
        and f.loc.line == 8
    )
    assert "(first at line 7)" in f.message


def test_source_comments_outside_the_chart_are_ignored(tmp_path) -> None:
    """A ``# Source:`` path helm never writes (absolute, climbing with ``..``, a drive or a backslash) is not a
    template path: kvlint never reads, maps to, or quotes a file outside the chart because a manifest says so."""
    from kvlint.render import find_sources, load_inputs

    text = (
        "---\n# Source: c/templates/a.yaml\nx: 1\n---\n# Source: c/../../secret.yaml\ny: 2\n"
        "---\n# Source: /etc/passwd\n---\n# Source: C:/x\n---\n# Source: a\\\\b\n"
    )
    assert find_sources(text) == [(2, "c/templates/a.yaml")]
    # a "template" beside the manifest that the rendered document matches, reached only through ../
    (tmp_path / "secret.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n")
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    manifest = sub / "m.yaml"
    manifest.write_text(
        "---\n# Source: c/../../../secret.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"
    )
    res = load_inputs([str(manifest)])
    assert res.documents and all(d.loc is None or d.loc.file == str(manifest) for d in res.documents)
    # the same comment without the climb maps to the chart's template as before
    chart = tmp_path / "a" / "b" / "c" / "templates"
    chart.mkdir(parents=True)
    (chart / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n")
    manifest.write_text(
        "---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"
    )
    res = load_inputs([str(manifest)])
    assert any(d.loc is not None and d.loc.file.endswith("cm.yaml") for d in res.documents)


_RENDERED_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  replicas: 1
  selector:
    matchLabels:
      app: llm
  template:
    metadata:
      labels:
        app: llm
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args:
            - --model=Qwen/Qwen2.5-7B-Instruct
            - --gpu-memory-utilzation=0.9
          resources:
            limits:
              nvidia.com/gpu: 1
"""


@pytest.mark.parametrize("streaming", [False, True])
def test_chart_lookups_are_not_kept_from_one_run_to_the_next(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    """The file-system answers of the chart search are kept for one run only (render.clear_file_cache at
    its start): a chart written, then removed, between two runs of the same process is found by the run
    after it is written and not by the run after it is removed. Two rendered files of one directory in
    the same run both find it (the second from the first's answers): their two findings are the one
    finding at the template's line."""
    from kvlint.checkrun import run_paths
    from kvlint.pipeline import run_check

    root = str(tmp_path)
    monkeypatch.chdir(root)
    out = os.path.join(root, "out")
    os.makedirs(out)
    for name in ("a.yaml", "b.yaml"):
        with open(os.path.join(out, name), "w", encoding="utf-8") as fh:
            fh.write("---\n# Source: llm/templates/serve.yaml\n" + _RENDERED_DEPLOYMENT)
    line = _RENDERED_DEPLOYMENT.splitlines().index("            - --gpu-memory-utilzation=0.9") + 1

    def kv205_files() -> list[str]:
        if streaming:
            result = run_paths([out], OFFLINE, jobs=1, keep_records=False, keep_json=False).result
        else:
            result = run_check([out], OFFLINE)
        found = [d.loc for d in result.diagnostics if d.rule == "KV205"]
        assert found and all(loc is not None for loc in found)
        return sorted({os.path.relpath(loc.file, root) + f":{loc.line}" for loc in found if loc is not None})

    assert kv205_files() == ["out/a.yaml:" + str(line + 2), "out/b.yaml:" + str(line + 2)]
    chart = _chart(root, "llm", "llm", _RENDERED_DEPLOYMENT)  # beside out/, not linted itself
    template = os.path.join("llm", "templates", "serve.yaml")
    assert kv205_files() == [f"{template}:{line}"]  # both files' findings, at the one template line
    shutil.rmtree(chart)
    assert kv205_files() == ["out/a.yaml:" + str(line + 2), "out/b.yaml:" + str(line + 2)]


@pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)
def test_failed_kustomize_build_reads_the_same_every_run(tmp_path: pytest.TempPathFactory) -> None:
    """A kustomization naming a file that does not exist: the KV001 finding quotes what the renderer says,
    without the klog header (time and process id) that ``kubectl kustomize`` puts before it, so two runs
    give the same finding (a baseline or SARIF result matches it)."""
    d = str(tmp_path)
    with open(os.path.join(d, "kustomization.yaml"), "w") as fh:
        fh.write("resources:\n  - missing.yaml\n")
    first, second = (render.render_kustomize(d).findings for _ in range(2))
    assert [f.rule for f in first] == ["KV001"]
    assert "missing.yaml" in first[0].message
    assert first[0].message == second[0].message


def test_klog_header_is_left_out_of_renderer_messages() -> None:
    """The klog header of a renderer's stderr line is dropped, the message after it kept; other lines as
    they are."""
    line = 'E1205 02:05:38.420623   12890 run.go:72] "command failed" err="accumulating resources: x"'
    assert render._KLOG_HEADER.sub("", line) == '"command failed" err="accumulating resources: x"'
    for plain in ("Error: accumulating resources: x", "error: E1205 is not a header here", "I1205 oops"):
        assert render._KLOG_HEADER.sub("", plain) == plain


@pytest.mark.parametrize("streaming", [False, True])
def test_a_file_edited_between_two_runs_of_one_process_gets_positions_from_its_new_text(
    tmp_path: pytest.TempPathFactory, streaming: bool
) -> None:
    """The file lines and scalar positions kept for finding positions (read back from the file for a word of
    a multi-line ``sh -c`` script) are kept for one run only: after the script's line is indented further, the
    next run of the same process points at the value's new column (it pointed three characters early)."""
    from kvlint.checkrun import run_paths
    from kvlint.pipeline import run_check

    path = os.path.join(str(tmp_path), "d.yaml")

    def write(pad: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
                "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
                "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
                '        command: [sh, -c]\n        args:\n        - "echo hi;\n'
                f'          {pad}vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072"\n'
                "        resources: {limits: {nvidia.com/gpu: 1}}\n"
            )

    def kv103_text() -> str:
        if streaming:
            result = run_paths([path], OFFLINE, jobs=1, keep_records=False, keep_json=False).result
        else:
            result = run_check([path], OFFLINE)
        (loc,) = [d.loc for d in result.diagnostics if d.rule == "KV103"]
        assert loc is not None
        with open(path, encoding="utf-8") as fh:
            return fh.read().split("\n")[loc.line - 1][loc.column - 1 :]

    for pad in ("", "   ", ""):
        write(pad)
        assert kv103_text() == '131072"'


@pytest.mark.parametrize(
    "directory",
    [
        # a real chart directory name (the louis030195/text-generation-inference-helm chart copied under its
        # repository path): its 53rd character is a '-', which Helm refuses at the end of a release name
        "louis030195__text-generation-inference-helm__charts__text-generation-inference",
        "Ünïcode-chärt",  # letters Python calls alphanumeric that Helm's pattern does not allow
        "---",
        "a" * 52 + ".b",
    ],
)
def test_default_release_name_is_one_helm_accepts(directory: str) -> None:
    name = render._release_name(os.path.join("some", directory))
    assert len(name) <= 53 and render._RELEASE_NAME_RE.match(name), name


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_chart_in_a_long_directory_renders(tmp_path: pytest.TempPathFactory) -> None:
    """A chart whose directory name, cut to 53 characters, ends on '-' renders (helm template refused the
    release name kvlint made from it: KV001 'invalid release name')."""
    chart = os.path.join(
        str(tmp_path), "louis030195__text-generation-inference-helm__charts__text-generation-inference"
    )
    shutil.copytree(CHART, chart)
    loaded = load_inputs([chart])
    assert [f.rule for f in loaded.findings] == []
    assert {d.kind for d in loaded.documents} == {"Deployment", "Service"}


def test_umbrella_chart_values_for_a_subchart_are_reported() -> None:
    """OPEA's ChatQnA values for AMD GPUs hold the TGI subchart's image, model and flags under ``tgi:`` and
    nothing at the top but subchart keys: a values file (KV002, counted as not read), where kvlint said
    nothing before (0 workloads, exit 0)."""
    path = os.path.join(
        "fixtures",
        "collected",
        "opea-project__GenAIExamples__ChatQnA__kubernetes__helm__rocm-tgi-values.yaml",
    )
    (kv002,) = [f for f in load_inputs([path]).findings if f.rule == "KV002"]
    assert "is a Helm values file" in kv002.message and "tgi.image.repository" in kv002.message
    assert kv002.fix is not None and f"-f {path}" in kv002.fix
    from kvlint.sizing import unread

    result = run_documents(load_inputs([path]), OFFLINE)
    assert [why for _, why in unread(result)] == ["Helm values file not rendered"]


def test_documents_with_an_image_string_are_not_values(tmp_path: pytest.TempPathFactory) -> None:
    """A Compose file's ``image`` is a string, not Helm's ``image.repository``: not a values file."""
    p = os.path.join(str(tmp_path), "compose.yaml")
    with open(p, "w") as fh:
        fh.write("services:\n  tgi:\n    image: ghcr.io/huggingface/text-generation-inference:3.0.0\n")
    assert [f.rule for f in load_inputs([p]).findings] == []
