"""Argo CD Applications and Flux HelmReleases whose chart kvlint reads from its values (production-stack's
``vllm-stack``, KubeAI's ``models``): the inline values are read as that chart's values
(:mod:`kvlint.workloads.gitops`), the pods built are sized, and every finding is located at the inline values'
lines in the Application/HelmRelease file.

Before, each of these objects got one KV503 "not read" note and no pod. Expected positions are found in the
manifests' own text (:func:`_line_of`), expected commands from the values written in them; the manifests here
are made up for the tests (each says so) unless loaded from fixtures/collected (source in its INDEX.csv).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kvlint.load import load_paths, load_text
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise
from kvlint.workloads import find_workloads
from kvlint.workloads.gitops import MAX_PARAMETERS, MAX_VALUES_CHARS
from kvlint.workloads.stack_values import CHART_VERSION

OFFLINE = Options(allow_hub=False)

# Made up for these tests: production-stack values as the chart's tutorials write them (repository, tag,
# modelURL, requestGPU, vllmConfig), inline in an Argo CD Application three ways and in a Flux HelmRelease.
_ENTRY = """\
servingEngineSpec:
  modelSpec:
  - name: "llama3"
    repository: "vllm/vllm-openai"
    tag: "v0.8.5"
    modelURL: "meta-llama/Llama-3.1-8B-Instruct"
    replicaCount: 1
    requestCPU: 10
    requestMemory: "16Gi"
    requestGPU: 1
    vllmConfig:
      maxModelLen: 4096
"""


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line if line else line for line in text.splitlines(keepends=True))


def _argo(helm: str, *, chart: str = "vllm-stack", revision: str = "0.1.7") -> str:
    return (
        "apiVersion: argoproj.io/v1alpha1\n"
        "kind: Application\n"
        "metadata: {name: chat, namespace: argocd}\n"
        "spec:\n"
        "  project: default\n"
        "  destination: {server: https://kubernetes.default.svc, namespace: serving}\n"
        "  source:\n"
        "    repoURL: https://vllm-project.github.io/production-stack\n"
        f"    chart: {chart}\n"
        f"    targetRevision: {revision}\n"
        "    helm:\n" + helm
    )


ARGO_STRING = _argo("      valueFiles: [values-prod.yaml]\n      values: |\n" + _indent(_ENTRY, 8))
ARGO_OBJECT = _argo("      valuesObject:\n" + _indent(_ENTRY, 8))
FLUX = (
    "apiVersion: helm.toolkit.fluxcd.io/v2\n"
    "kind: HelmRelease\n"
    "metadata: {name: chat, namespace: llm}\n"
    "spec:\n"
    "  interval: 10m\n"
    "  targetNamespace: serving\n"
    "  chart:\n"
    "    spec:\n"
    "      chart: vllm-stack\n"
    f"      version: {CHART_VERSION}\n"
    "      sourceRef: {kind: HelmRepository, name: vllm}\n"
    "  valuesFrom:\n"
    "  - {kind: ConfigMap, name: chat-values}\n"
    "  - {kind: Secret, name: chat-token, valuesKey: token, targetPath: servingEngineSpec.hf_token}\n"
    "  values:\n" + _indent(_ENTRY, 4)
)


def _line_of(text: str, needle: str, nth: int = 0) -> int:
    return [i + 1 for i, line in enumerate(text.splitlines()) if needle in line][nth]


def _write(tmp: Path, name: str, body: str) -> str:
    p = tmp / name
    p.write_text(body)
    return str(p)


def _run(path: str):  # type: ignore[no-untyped-def]
    return run_check([path], OFFLINE)


def _command(path: str) -> list[str]:
    (w,) = find_workloads(load_paths([path]).documents)
    (c,) = w.pod_spec["containers"]
    return list(c["command"])


@pytest.mark.parametrize("body", [ARGO_STRING, ARGO_OBJECT, FLUX], ids=["argo-values", "argo-object", "flux"])
def test_inline_values_become_the_pod_the_chart_renders(tmp_path: Path, body: str) -> None:
    """Each form gives the one Deployment the chart renders, the engine command built from the values, every
    value located at its own line of the Application/HelmRelease (the block scalar's lines for helm.values),
    sized, counted as read."""
    path = _write(tmp_path, "app.yaml", body)
    (w,) = find_workloads(load_paths([path]).documents)
    release = "chat" if "Application" in body else "serving-chat"  # Flux: targetNamespace-name
    assert (w.kind, w.name, w.namespace) == ("Deployment", f"{release}-llama3-deployment-vllm", "serving")
    (c,) = w.pod_spec["containers"]
    cmd = list(c["command"])
    assert cmd[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
    i = cmd.index("--max-model-len")
    assert cmd[i + 1] == "4096"
    loc = c["command"].locs[i + 1]
    assert (loc.file, loc.line) == (path, _line_of(body, "maxModelLen: 4096"))
    assert loc.column == body.splitlines()[loc.line - 1].index("4096") + 1
    result = _run(path)
    assert len(result.containers) == 1 and summarise(result).not_read == 0
    assert not [d for d in result.diagnostics if d.rule == "KV503"]
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert note.loc is not None and note.loc.line == _line_of(body, "chart: vllm-stack")
    assert "inline Helm values" in note.message


def test_note_says_the_pinned_version_against_the_restated_one(tmp_path: Path) -> None:
    old = _run(_write(tmp_path, "a.yaml", ARGO_STRING))
    (note,) = [d for d in old.diagnostics if d.rule == "KV504"]
    assert f"pinned here is 0.1.7, kvlint restates vllm-stack {CHART_VERSION}" in note.message
    assert "value file values-prod.yaml" in note.message and "assumes it sets nothing" in note.message
    same = _run(_write(tmp_path, "f.yaml", FLUX))
    (note,) = [d for d in same.diagnostics if d.rule == "KV504"]
    assert f"pinned chart version {CHART_VERSION} is the one kvlint restates" in note.message
    assert "ConfigMap/chat-values (values.yaml)" in note.message
    assert "Secret/chat-token (token at servingEngineSpec.hf_token)" in note.message


def test_parameters_override_values_typed_as_helm_set_types_them(tmp_path: Path) -> None:
    """Argo CD: parameters > valuesObject > values. A parameter replaces the value written in helm.values
    (and is located at its own line); forceString keeps a string; an unparsable name is said, not applied."""
    helm = (
        "      parameters:\n"
        "      - {name: 'servingEngineSpec.modelSpec[0].vllmConfig.maxModelLen', value: '8192'}\n"
        "      - {name: 'servingEngineSpec.modelSpec[0].tag', value: 'v0.9.2', forceString: true}\n"
        "      - {name: 'a\\.b', value: x}\n"
        "      values: |\n" + _indent(_ENTRY, 8)
    )
    body = _argo(helm)
    path = _write(tmp_path, "p.yaml", body)
    (w,) = find_workloads(load_paths([path]).documents)
    (c,) = w.pod_spec["containers"]
    cmd = list(c["command"])
    i = cmd.index("--max-model-len")
    assert cmd[i + 1] == "8192" and c["command"].locs[i + 1].line == _line_of(body, "value: '8192'")
    assert c["image"] == "vllm/vllm-openai:v0.9.2"
    (note,) = [d for d in _run(path).diagnostics if d.rule == "KV504"]
    assert "not applied: a\\.b" in note.message


def test_values_object_wins_over_values_string(tmp_path: Path) -> None:
    other = _ENTRY.replace("maxModelLen: 4096", "maxModelLen: 2048")
    body = _argo("      values: |\n" + _indent(other, 8) + "      valuesObject:\n" + _indent(_ENTRY, 8))
    path = _write(tmp_path, "o.yaml", body)
    cmd = _command(path)
    assert cmd[cmd.index("--max-model-len") + 1] == "4096"
    (note,) = [d for d in _run(path).diagnostics if d.rule == "KV504"]
    assert "helm.values (Argo CD uses helm.valuesObject alone" in note.message


def test_values_string_from_stdin_is_located_at_its_key() -> None:
    """The block scalar cannot be read again from standard input: positions are the helm.values key's."""
    docs = load_text(ARGO_STRING, "-").documents
    (w,) = find_workloads(docs)
    (c,) = w.pod_spec["containers"]
    at = c["command"].locs[list(c["command"]).index("--max-model-len") + 1]
    assert at.line == _line_of(ARGO_STRING, "values: |")
    result = run_check(["-"], OFFLINE, stdin=io.StringIO(ARGO_STRING))
    assert len(result.containers) == 1


def test_kubeai_models_chart_catalogue_inline(tmp_path: Path) -> None:
    body = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\n"
        "kind: HelmRelease\n"
        "metadata: {name: models, namespace: kubeai}\n"
        "spec:\n"
        "  chart: {spec: {chart: models, sourceRef: {kind: HelmRepository, name: kubeai}}}\n"
        "  values:\n"
        "    catalog:\n"
        "      llama-3.1-8b-instruct-l4:\n"
        "        enabled: true\n"
        "        features: [TextGeneration]\n"
        "        url: hf://meta-llama/Llama-3.1-8B-Instruct\n"
        "        engine: VLLM\n"
        "        args: [--max-model-len=16384]\n"
        "        resourceProfile: nvidia-gpu-l4:1\n"
    )
    path = _write(tmp_path, "m.yaml", body)
    (w,) = find_workloads(load_paths([path]).documents)
    assert w.name == "llama-3.1-8b-instruct-l4"
    result = _run(path)
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert "KubeAI's models chart" in note.message and "no chart version is pinned" in note.message
    assert summarise(result).not_read == 0


_HOSTILE_HELM = {
    "values-not-string": "      values: {servingEngineSpec: 3}\n",
    "values-object-list": "      valuesObject: [1, 2]\n",
    "values-yaml-list": "      values: |\n        - a\n        - b\n",
    "values-bad-yaml": "      values: |\n        a: [\n",
    "values-template": "      values: |\n        servingEngineSpec: {{ .Values.x }}\n",
    "params-not-list": "      parameters: {name: x}\n",
    "params-wrong-items": "      parameters: [3, {value: 1}, {name: [a]}, {name: 'a[99999].b', value: 1}]\n",
    "params-into-scalar": "      parameters: [{name: a.b, value: 1}, {name: a.b.c, value: 2}, {name: 'a.b[0]', value: 3}]\n",
    "model-spec-wrong": "      valuesObject: {servingEngineSpec: {modelSpec: {a: 1}}}\n",
    "value-files-wrong": "      valueFiles: 7\n      valuesObject: {servingEngineSpec: {modelSpec: []}}\n",
}


@pytest.mark.parametrize("helm", list(_HOSTILE_HELM.values()), ids=list(_HOSTILE_HELM))
def test_wrong_types_in_every_field_never_raise(tmp_path: Path, helm: str) -> None:
    """Every field of the wrong type: no exception, no pod invented; what was read or not is said."""
    path = _write(tmp_path, "h.yaml", _argo(helm))
    result = _run(path)
    assert not result.containers
    assert all(d.rule in ("KV001", "KV002", "KV503", "KV504") for d in result.diagnostics)


def test_huge_values_string_is_not_parsed(tmp_path: Path) -> None:
    filler = "        k{}: v\n"
    n = MAX_VALUES_CHARS // len(filler.format(0).strip()) + 10  # the string holds the lines without indent
    helm = "      values: |\n" + _indent(_ENTRY, 8) + "".join(filler.format(i) for i in range(n))
    path = _write(tmp_path, "big.yaml", _argo(helm))
    result = _run(path)
    assert not result.containers
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert d.message.startswith("kvlint does not read this Application's engine settings")
    assert summarise(result).not_read == 1


def test_many_parameters_stop_at_the_cap(tmp_path: Path) -> None:
    items = "".join(f"      - {{name: 'x.k{i}', value: '1'}}\n" for i in range(MAX_PARAMETERS + 5))
    body = _argo("      parameters:\n" + items + "      valuesObject:\n" + _indent(_ENTRY, 8))
    result = _run(_write(tmp_path, "many.yaml", body))
    (note,) = [d for d in result.diagnostics if d.rule == "KV504"]
    assert f"helm.parameters beyond the first {MAX_PARAMETERS}" in note.message


def test_a_chart_kvlint_has_no_reader_for_stays_not_read(tmp_path: Path) -> None:
    body = _argo("      valuesObject:\n" + _indent(_ENTRY, 8), chart="vllm")
    result = _run(_write(tmp_path, "x.yaml", body))
    (d,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert d.message.startswith("kvlint does not read this Application's engine settings: Argo CD builds")
    assert summarise(result).not_read == 1 and not result.containers


def _annotated(body: str, annotations: str) -> str:
    """``body`` (an Application or HelmRelease above) with ``annotations`` (YAML lines, indented 4) on its
    metadata."""
    head, _, rest = body.partition("metadata: {name: chat, namespace: ")
    ns, _, tail = rest.partition("}\n")
    return f"{head}metadata:\n  name: chat\n  namespace: {ns}\n  annotations:\n{annotations}{tail}"


@pytest.mark.parametrize("body", [ARGO_OBJECT, FLUX], ids=["argo-object", "flux"])
def test_kvlint_annotations_on_the_gitops_object_reach_the_pods_built_from_it(
    tmp_path: Path, body: str
) -> None:
    """``kvlint.io/ignore`` on the Application or HelmRelease the user wrote applies to the pods kvlint builds
    from its inline values (it did not: the built Deployment carried only the values' own annotations), as on a
    Deployment's metadata for its pod template: KV501 (the values name no GPU type) is suppressed with its
    reason; ``kvlint.io/accelerator`` there places the pod (sized on that GPU, no KV501 at all); a malformed
    ignore gets its KV003 at the object's annotation line. The values' own podAnnotations win over the
    object's."""
    plain = _run(_write(tmp_path, "plain.yaml", body))
    assert [d for d in plain.diagnostics if d.rule == "KV501"]
    ignored_body = _annotated(
        body, '    kvlint.io/ignore: "KV501=the node pool has one GPU type, see infra"\n'
    )
    ignored = _run(_write(tmp_path, "ignored.yaml", ignored_body))
    assert not [d for d in ignored.diagnostics if d.rule == "KV501"]
    (gone,) = ignored.suppressed_diagnostics
    assert gone.diagnostic.rule == "KV501" and gone.reason == "the node pool has one GPU type, see infra"
    assert gone.annotation is not None and gone.annotation.line == _line_of(ignored_body, "kvlint.io/ignore:")
    placed = _run(_write(tmp_path, "placed.yaml", _annotated(body, "    kvlint.io/accelerator: nvidia-l4\n")))
    assert not [d for d in placed.diagnostics if d.rule == "KV501"]
    (cr,) = placed.containers
    assert cr.plan is not None and cr.placement is not None and cr.placement.accelerator.id == "nvidia-l4"
    bad_body = _annotated(body, "    kvlint.io/ignore: KV501\n")
    (note,) = [d for d in _run(_write(tmp_path, "bad.yaml", bad_body)).diagnostics if d.rule == "KV003"]
    assert note.loc is not None and note.loc.line == _line_of(bad_body, "kvlint.io/ignore: KV501")
    entry = _ENTRY + "    podAnnotations:\n      kvlint.io/accelerator: nvidia-a100-sxm4-80gb\n"
    n = 8 if body is ARGO_OBJECT else 4
    own = body.replace(_indent(_ENTRY, n), _indent(entry, n))
    assert own != body
    both = _run(_write(tmp_path, "both.yaml", _annotated(own, "    kvlint.io/accelerator: nvidia-l4\n")))
    (cr,) = both.containers
    assert cr.placement is not None and cr.placement.accelerator.id == "nvidia-a100-sxm4-80gb"


def test_parameters_copy_each_mapping_of_the_values_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each parameter copied the containers on its path (so the Application's own mapping is not changed):
    1,024 parameters under servingEngineSpec, a mapping of 10^5 keys, copied it 1,024 times (7.4 s of CPU).
    Now each container is copied once per source; the parameters still apply, the Application's mapping is
    left as written."""
    from kvlint.workloads import gitops

    copies: list[int] = []
    real_copy = gitops._copy

    def counting(node):  # type: ignore[no-untyped-def]
        copies.append(len(node) if isinstance(node, (dict, list)) else 0)
        return real_copy(node)

    monkeypatch.setattr(gitops, "_copy", counting)
    items = "".join(
        f"      - {{name: 'servingEngineSpec.modelSpec[0].vllmConfig.p{i}', value: '{i}'}}\n"
        for i in range(300)
    )
    items += "      - {name: 'servingEngineSpec.modelSpec[0].vllmConfig.maxModelLen', value: '8192'}\n"
    body = _argo("      parameters:\n" + items + "      valuesObject:\n" + _indent(_ENTRY, 8))
    (doc,) = load_paths([_write(tmp_path, "p.yaml", body)]).documents
    (src,) = gitops.chart_sources(doc)
    spec = src.values["servingEngineSpec"]["modelSpec"][0]["vllmConfig"]
    assert spec["maxModelLen"] == 8192 and spec["p299"] == 299 and spec["p0"] == 0
    assert len(copies) <= 5, copies  # the top mapping, servingEngineSpec, modelSpec, [0], vllmConfig
    written = doc.data["spec"]["source"]["helm"]["valuesObject"]["servingEngineSpec"]["modelSpec"][0]
    assert written["vllmConfig"] == {"maxModelLen": 4096}


def test_a_file_of_many_values_strings_is_read_once(tmp_path: Path) -> None:
    """Each helm.values string is placed in its file's block scalar: the file was read, decoded and split
    again for every string, and the loader was handed as many blank lines as came before it (a 1.9 MB file of
    4,000 Applications took 27.5 s of CPU, 6.3 s now). The file is now read once per run and the lines before
    are an offset; every value is still located at its own line."""
    from kvlint.workloads import gitops

    helm = "      values: |\n" + _indent(_ENTRY, 8)
    bodies = [_argo(helm).replace("name: chat,", f"name: chat{i},") for i in range(40)]
    text = "---\n".join(bodies)
    path = _write(tmp_path, "many.yaml", text)
    result = _run(path)
    assert len(result.containers) == 40
    lines = sorted(c.workload.pod_spec["containers"][0]["command"].locs[0].line for c in result.containers)
    assert lines == [i + 1 for i, line in enumerate(text.splitlines()) if "vllm/vllm-openai" in line]
    assert gitops._block_text.cache_info().misses == 1


def test_load_text_with_a_line_offset_locates_as_padding_did() -> None:
    text = "a: 1\nb:\n  - [2, {c: 3}]\n---\nd: x\n"
    shifted = load_text(text, "f.yaml", line_offset=7)
    padded = load_text("\n" * 7 + text, "f.yaml")

    def locs(node):  # type: ignore[no-untyped-def]
        if isinstance(node, dict):
            return [(node.loc, k, node.locs[k], node.key_locs[k], locs(v)) for k, v in node.items()]
        if isinstance(node, list):
            return [(node.loc, node.locs[i], locs(v)) for i, v in enumerate(node)]
        return node

    assert [locs(d.data) for d in shifted.documents] == [locs(d.data) for d in padded.documents]
    assert [d.loc for d in shifted.documents] == [d.loc for d in padded.documents]
    bad = load_text("a: [\n", "f.yaml", line_offset=7)
    assert bad.findings[0].loc == load_text("\n" * 7 + "a: [\n", "f.yaml").findings[0].loc


def test_the_objects_annotation_beats_the_gpu_the_values_derive(tmp_path: Path) -> None:
    """``kvlint.io/accelerator`` on a HelmRelease of KubeAI's models chart places the Model's pod on that GPU,
    over the one its ``resourceProfile`` names (the profile's GPU used to win: kvlint wrote it as an annotation
    of the built workload, which the object's did not replace), as the same annotation on a KubeAI Model does."""
    body = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\n"
        "kind: HelmRelease\n"
        "metadata:\n"
        "  name: models\n"
        "  namespace: kubeai\n"
        "  annotations: {kvlint.io/accelerator: nvidia-a10g}\n"
        "spec:\n"
        "  chart: {spec: {chart: models, sourceRef: {kind: HelmRepository, name: kubeai}}}\n"
        "  values:\n"
        "    catalog:\n"
        "      qwen-l4:\n"
        "        enabled: true\n"
        "        features: [TextGeneration]\n"
        "        url: hf://Qwen/Qwen2.5-7B-Instruct\n"
        "        engine: VLLM\n"
        "        args: [--max-model-len=8192]\n"
        "        resourceProfile: nvidia-gpu-l4:1\n"
    )
    profile = _run(
        _write(
            tmp_path,
            "profile.yaml",
            body.replace("  annotations: {kvlint.io/accelerator: nvidia-a10g}\n", ""),
        )
    )
    (cr,) = profile.containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l4"
    assert cr.placement.how.startswith("KubeAI spec.resourceProfile=nvidia-gpu-l4:1")
    path = _write(tmp_path, "annotated.yaml", body)
    (cr,) = _run(path).containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a10g"
    assert cr.placement.how == "annotation kvlint.io/accelerator=nvidia-a10g"
    assert cr.placement.loc is not None and cr.placement.loc.line == _line_of(body, "kvlint.io/accelerator")
