"""Reading gaps left last stop: OpenShift AI hardware profiles on LLMInferenceServices, ..."""

from __future__ import annotations

from pathlib import Path

import configmap_pods
import pytest

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"

#: A real LLMInferenceService for OpenShift AI (manu-joy/rosa-llm-driven-deployment, Qwen3.6-35B-A3B-FP8 on an
#: ARO A100 node pool), with its own GPU request, nodeSelector and toleration.
ROSA_LLMISVC = (
    COLLECTED
    / "manu-joy__rosa-llm-driven-deployment__PCA_Deployment_ARO__argocd__03-ai-serving__llminferenceservice.yaml"
)

#: A HardwareProfile as OpenShift AI stores it (infrastructure.opendatahub.io/v1; fields of opendatahub-operator
#: api/infrastructure/v1/hardwareprofile_types.go): two A100 80GB GPUs, scheduled onto those nodes with a
#: toleration of its own. Made up for these tests in the shape of the profiles the dashboard writes.
A100_PROFILE = """apiVersion: infrastructure.opendatahub.io/v1
kind: HardwareProfile
metadata:
  name: a100-x2
  namespace: redhat-ods-applications
spec:
  identifiers:
    - {defaultCount: 2, displayName: GPU, identifier: nvidia.com/gpu, maxCount: 4, minCount: 1, resourceType: Accelerator}
  scheduling:
    type: Node
    node:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      tolerations:
        - {key: a100-only, operator: Exists, effect: NoSchedule}
"""


def _profiled_llmisvc(where: Path, *, container: str = "main") -> Path:
    """The ROSA LLMInferenceService without its GPU request (left to the profile, as the dashboard deploys
    it) and with the annotations naming the profile."""
    text = ROSA_LLMISVC.read_text()
    start, end = text.index("        resources:\n"), len(text)
    assert 'nvidia.com/gpu: "1"' in text[start:end]
    text = text[:start]
    text = text.replace(
        "  annotations:\n",
        "  annotations:\n    opendatahub.io/hardware-profile-name: a100-x2\n"
        "    opendatahub.io/hardware-profile-namespace: redhat-ods-applications\n",
        1,
    )
    assert text.count("      - name: main\n") == 1
    text = text.replace("      - name: main\n", f"      - name: {container}\n")
    path = where / "llmisvc.yaml"
    path.write_text(text)
    return path


def test_a_hardware_profile_is_applied_to_an_llminferenceservice_as_the_webhook_does(tmp_path):
    """odh-model-controller's LLMInferenceService webhook (applyHardwareProfileLLMISVC, ApplyToLLMIsvcResources,
    MergeNodeScheduling) writes the named profile's identifiers into the ``main`` container of spec.template
    and merges its node scheduling into the template, before KServe merges its presets under the service:
    the engine is sized on two A100 80GB GPUs (before, only InferenceServices got their profile, and this
    service was planned against the fleet with a KV405 info). Variants: a template whose containers have none
    named ``main`` gets nothing of the profile; without the profile among the inputs the GPUs are named as
    possibly coming from it."""
    svc = _profiled_llmisvc(tmp_path)
    profile = tmp_path / "profile.yaml"
    profile.write_text(A100_PROFILE)
    res = run_check([str(svc), str(profile)], Options(allow_hub=False))
    (cr,) = res.containers
    c = cr.container
    assert c["name"] == "main"
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "2"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "2"
    # the service's own scheduling stays, the profile's is added (tolerations: the profile's first)
    assert cr.workload.pod_spec["nodeSelector"] == {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
    }
    assert [t["key"] for t in cr.workload.pod_spec["tolerations"]] == ["a100-only", "nvidia.com/gpu"]
    assert cr.placement.gpus == 2 and cr.placement.accelerator.id.startswith("nvidia-a100")
    assert cr.placement.gpus_loc.file == str(profile)
    assert cr.plan is not None
    assert not [d for d in res.diagnostics if d.rule in ("KV405", "KV501")]

    # a template with containers but none named main: the webhook applies nothing of the profile
    (tmp_path / "other").mkdir()
    other = _profiled_llmisvc(tmp_path / "other", container="vllm")
    res = run_check([str(other), str(profile)], Options(allow_hub=False))
    assert res.containers and all(c.placement.gpus != 2 for c in res.containers)
    # and it is said so, rather than that the GPUs may come from the profile
    kv405 = [d for d in res.diagnostics if d.rule == "KV405"]
    assert any("applies nothing of it" in d.message and d.severity == "warning" for d in kv405), kv405
    assert not any("may come from the profile" in d.message for d in res.diagnostics)
    assert all(
        "nvidia.com/gpu.product" not in c.workload.pod_spec.get("nodeSelector", {}) for c in res.containers
    )

    # the profile not among the inputs: the missing GPU is said to possibly come from it
    res = run_check([str(svc)], Options(allow_hub=False))
    assert [d for d in res.diagnostics if d.rule == "KV405" and "hardware profile 'a100-x2'" in d.message]


#: GKE's own vLLM sample (kubernetes-engine-samples ai-ml/llm-serving-gemma, Gemma 7B on 8 H100 80GB), which
#: selects its nodes by the gke-accelerator label and the Autopilot Accelerator compute class.
GKE_H100 = (
    COLLECTED
    / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-7b-it-h100-80gb.yaml"
)

#: A custom ComputeClass in the shape of GKE's ComputeClass CRD reference (cloud.google.com/v1): H100 80GB
#: nodes first, A100 80GB as the fallback. Made up for these tests.
H100_CLASS = """apiVersion: cloud.google.com/v1
kind: ComputeClass
metadata:
  name: h100-first
spec:
  priorities:
  - gpu: {type: nvidia-h100-80gb, count: 8}
  - gpu: {type: nvidia-a100-80gb, count: 8}
  nodePoolAutoCreation: {enabled: true}
"""


def _affinity_sample(tmp_path: Path, terms: str) -> Path:
    """GKE's sample with its nodeSelector replaced by required node affinity (``terms``: the YAML of the
    nodeSelectorTerms list, indented for the pod spec)."""
    text = GKE_H100.read_text()
    old = (
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-h100-80gb\n"
        "        cloud.google.com/compute-class: Accelerator\n"
    )
    assert text.count(old) == 1
    new = (
        "      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n" + terms
    )
    path = tmp_path / "sample.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_a_compute_class_selected_through_node_affinity_names_the_gpu(tmp_path):
    """Nodes of a GKE ComputeClass carry ``cloud.google.com/compute-class: NAME``, so a pod whose required node
    affinity allows only NAME runs on them, as one selecting it by nodeSelector does: the class among the inputs
    names the GPU (before, only a nodeSelector was read, and the pod was planned against the fleet, KV501).
    Variants: two terms naming the same class; a term that leaves the class open (the pod may land anywhere)
    and a term naming two classes name no class."""
    cls = tmp_path / "class.yaml"
    cls.write_text(H100_CLASS)

    runs: list[str] = []

    def placed(terms: str):
        runs.append(terms)
        d = tmp_path / f"run{len(runs)}"
        d.mkdir()
        res = run_check([str(_affinity_sample(d, terms)), str(cls)], Options(allow_hub=False))
        (cr,) = res.containers
        return cr, res

    one = "            - matchExpressions:\n              - {key: cloud.google.com/compute-class, operator: In, values: [h100-first]}\n"
    cr, res = placed(one)
    assert cr.placement.accelerator is not None
    assert cr.placement.accelerator.id.startswith("nvidia-h100"), cr.placement.accelerator.id
    assert "nodeAffinity cloud.google.com/compute-class In [h100-first]" in cr.placement.how
    assert not [d for d in res.diagnostics if d.rule == "KV501"]

    two_same = one + (
        "            - matchExpressions:\n              - {key: cloud.google.com/compute-class, operator: In,"
        " values: [h100-first]}\n              - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"
    )
    cr, _ = placed(two_same)
    assert "h100-first" in cr.placement.how

    open_term = (
        one
        + "            - matchExpressions:\n              - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n"
    )
    cr, _ = placed(open_term)
    assert "h100-first" not in (cr.placement.how or "")
    two_classes = "            - matchExpressions:\n              - {key: cloud.google.com/compute-class, operator: In, values: [h100-first, other]}\n"
    cr, _ = placed(two_classes)
    assert "h100-first" not in (cr.placement.how or "")


#: KubeAI's models chart rendered with its default values (fixtures/helm/kubeai): Models of every engine.
KUBEAI_MODELS = ROOT / "fixtures" / "helm" / "kubeai" / "rendered" / "models.yaml"


def test_a_kubeai_model_on_another_engine_is_said_not_to_be_sized():
    """A KubeAI Model whose engine is OLlama, Infinity or FasterWhisper runs no vLLM, SGLang or TGI (substratusai/kubeai
    internal/modelcontroller engine_ollama.go, engine_infinity.go, engine_fasterwhisper.go): kvlint said nothing
    of it. Each now gets a KV503 info at its ``engine`` naming the server it runs, and the run counts it as not
    read; the vLLM Models are sized as before and get no such note."""
    import yaml

    from kvlint.sizing import unread

    docs = [d for d in yaml.safe_load_all(KUBEAI_MODELS.read_text()) if d]
    engines = {d["metadata"]["name"]: d["spec"]["engine"] for d in docs}
    assert {"OLlama", "Infinity", "FasterWhisper", "VLLM"} <= set(engines.values())
    res = run_check([str(KUBEAI_MODELS)], Options(allow_hub=False))
    notes = [
        d
        for d in res.diagnostics
        if d.rule == "KV503" and "kvlint sizes only vLLM, SGLang and TGI" in d.message
    ]
    named = {d.object.split("/", 1)[1]: d for d in notes}
    assert set(named) == {n for n, e in engines.items() if e != "VLLM"}
    for name, d in named.items():
        assert d.severity == "info" and f"engine: {engines[name]} runs the model on the " in d.message
        # (located where the chart's template writes the engine: the rendered file names its template)
        at = Path(d.loc.file).read_text().splitlines()[d.loc.line - 1]
        assert at.strip().startswith("engine:"), at
    assert "Infinity embedding" in named["bge-embed-text-cpu"].message
    assert "speech-to-text" in named["faster-whisper-medium-en-cpu"].message
    assert len([r for _, r in unread(res) if r == "operator settings not read"]) == len(named)
    sized = {cr.workload.name for cr in res.containers}
    assert sized == {n for n, e in engines.items() if e == "VLLM"}


#: The ConfigMap llm-files that tests/configmap_pods.py's Deployment reads its settings from (a --config file, a
#: variable, TGI's envFrom, a wrapper script), in a file of its own whose block scalar is indented with a tab (a YAML
#: error kubectl reports too).
_BROKEN_CM = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: llm-files\n  labels: {app: llm}\ndata:\n"
    "  MODEL: Qwen/Qwen2.5-7B-Instruct\n  MODEL_ID: Qwen/Qwen2.5-7B-Instruct\n"
    "  start.sh: |\n    exec vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 4096\n"
    "  config.yaml: |\n    model: Qwen/Qwen2.5-7B-Instruct\n\tmax-model-len: 4096\n"
)


@pytest.mark.parametrize("shape", sorted(configmap_pods.SHAPES))
def test_a_configmap_in_a_file_that_does_not_parse_is_said_so_not_missing(tmp_path, shape):
    """The ConfigMap a container reads its settings from sits in a file kvlint could not parse (KV001): the
    container's note said "ConfigMap llm-files is not among the inputs" (and to pass it with the workload,
    which the user had done). It now says that the ConfigMap is in a file kvlint could not parse, with the
    file and line of the error, and to fix that error; in a whole-input run and in a streaming run with two
    jobs alike. A ConfigMap really missing is still said to be missing."""
    from click.testing import CliRunner

    from kvlint.cli import main

    pod, cm = tmp_path / "llm.yaml", tmp_path / "llm-files.yaml"
    pod.write_text(configmap_pods.pod(shape))
    cm.write_text(_BROKEN_CM)
    error_line = _BROKEN_CM.splitlines().index("\tmax-model-len: 4096") + 1
    res = run_check([str(pod), str(cm)], Options(allow_hub=False))
    (kv001,) = [d for d in res.diagnostics if d.rule == "KV001"]
    assert kv001.loc.file == str(cm)
    said = [d for d in res.diagnostics if d.object == "Deployment/llm" and d.rule in ("KV502", "KV503")]
    text = " ".join(d.message for d in said)
    where = f"is in a file kvlint could not parse ({cm}:{kv001.loc.line})"
    assert kv001.loc.line == error_line
    assert "ConfigMap llm-files" in text and where in text, said
    assert "not among the inputs" not in text
    assert any("fix the YAML error kvlint reports (KV001)" in d.fix for d in said)

    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--jobs", "2", str(pod), str(cm)])
    # (the text report wraps, and may show the parenthesis on a line of its own)
    shown = " ".join(r.stdout.split())
    assert "is in a file kvlint could not parse" in shown and f"{cm}:{kv001.loc.line}" in shown
    assert "not among the inputs" not in shown

    # the variant: the ConfigMap file left out, it is missing
    res = run_check([str(pod)], Options(allow_hub=False))
    text = " ".join(d.message for d in res.diagnostics if d.object == "Deployment/llm")
    assert "could not parse" not in text


def test_markdown_shows_kvlints_code_spans_as_code_and_manifest_text_inert(tmp_path):
    """``--format markdown`` (the job summary) escaped every backtick, so kvlint's own code spans showed as
    literal backticks ("render with \\`helm template\\` first"). They are now code spans; text quoted from
    the manifest stays inert: a model name holding HTML, a link and backticks renders no tag, no link and no
    new cell. Inputs: the KubeAI models chart's template linted as a file (KV002), and the chat example with
    a hostile model name."""
    from click.testing import CliRunner

    from kvlint.cli import main

    template = ROOT / "fixtures" / "helm" / "kubeai" / "charts" / "models" / "templates" / "models.yaml"
    hostile = "evil/`x` <img src=y onerror=z> [l](http://e) | a*b*"
    chat = (ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml").read_text()
    assert chat.count("meta-llama/Llama-3.1-8B-Instruct") >= 1
    bad = tmp_path / "chat.yaml"
    bad.write_text(chat.replace("meta-llama/Llama-3.1-8B-Instruct", f"'{hostile}'"))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "markdown", str(template), str(bad)]
    )
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| ")]
    kv002 = [ln for ln in rows if "| KV002 |" in ln]
    assert kv002 and all("render with `helm template` first" in ln for ln in kv002), kv002
    assert "\\`helm template\\`" not in r.stdout
    mine = [ln for ln in rows if "evil/" in ln]
    assert mine, rows
    for ln in mine:
        assert "<img" not in ln and "&lt;img" in ln
        assert "[l](http" not in ln and "\\[l\\](http://e)" in ln  # the brackets escaped: no link
        # the row keeps its five cells: no | of the value opens a new one
        cells = [c for c in ln.replace("\\|", "").split("|")][1:-1]
        assert len(cells) == 5, ln


def test_a_walk_counts_an_umbrella_chart_and_its_unpacked_subchart_as_one_chart_not_rendered(
    tmp_path, monkeypatch
):
    """A directory walk without helm on PATH lints chart files as plain files (kvlint.render.plan_walk's fallback):
    the KV002 of a subchart unpacked in its parent's charts/ already named the parent as the chart to render
    (helm renders the subchart through it), but the run counted the parent and the subchart as two "Helm chart
    not rendered". They are one. Real charts of fixtures/collected (redhat-ai-services' vllm-kserve as the
    umbrella, castai's vLLM chart unpacked under its charts/); variant: the same two charts side by side are
    two charts."""
    import shutil

    from kvlint.sizing import unread

    charts = COLLECTED / "charts"
    umbrella = tmp_path / "repo" / "umbrella"
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm
    shutil.copytree(charts / "vllm-kserve", umbrella)
    shutil.copytree(charts / "castai-hosted-model-vllm", umbrella / "charts" / "vllm")
    res = run_check([str(tmp_path / "repo")], Options(allow_hub=False))
    sub_kv002 = [d for d in res.diagnostics if d.rule == "KV002" and "/charts/vllm/" in d.loc.file]
    assert sub_kv002 and all(f"kvlint check {umbrella}" in d.fix for d in sub_kv002)
    why = [w for _, w in unread(res)]
    assert why == ["Helm chart not rendered (its files linted as they are)"], why

    apart = tmp_path / "apart"
    shutil.copytree(charts / "vllm-kserve", apart / "vllm-kserve")
    shutil.copytree(charts / "castai-hosted-model-vllm", apart / "vllm")
    why = [w for _, w in unread(run_check([str(apart)], Options(allow_hub=False)))]
    assert why == ["Helm chart not rendered (its files linted as they are)"] * 2, why


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    name: not-me\n  name: llm-files\n",
            (None, "llm-files"),
        ),
        (
            "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: llm-files\r\n  namespace: ai\r\n",
            ("ai", "llm-files"),
        ),
        (
            "kind: 'ConfigMap' # c\nmetadata: {namespace: ai, name: \"llm-files\"}\ndata: [\n",
            ("ai", "llm-files"),
        ),
        ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: llm-files\n", None),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    name: not-me\n", None),
        ("apiVersion: v1\nkind: ConfigMapList\nmetadata:\n  name: x\n", None),
    ],
)
def test_the_configmap_of_an_unparsed_document_is_read_from_its_text(text, expected):
    """The name (and namespace) of the ConfigMap in a document that does not parse come from its top-level
    ``kind`` and the ``name`` directly under ``metadata`` (block or flow, CRLF line ends too); a label called
    ``name`` is not it, and another kind gives nothing."""
    from kvlint.load import unparsed_configmap

    assert unparsed_configmap(text) == expected
