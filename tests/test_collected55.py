"""New-user pass 55 (fresh55) on manifests kvlint had not seen (fixtures/collected, INDEX.csv rows of pass 55).

* brayanpena530/multiLLM-EKS-Deploy's Mistral Deployment runs ``vllm/vllm-openai:v0.4.1`` at tensor-parallel size 1
  in a pod of ``nvidia.com/gpu: 10``. KV403's remedy offered "set data-parallel-size 10 to use all 10": vLLM took
  ``--data-parallel-size`` only from 0.8 (``vllm/engine/arg_utils.py::EngineArgs.add_cli_args``; first in
  kvlint's sampled option tables at 0.8.5), so 0.4.1 stops with "unrecognized arguments".
* Tanguille/cluster's SGLang HelmRelease (Flux, bjw-s app-template) writes ``hostnames: ["{{ .Release.Name
  }}.${SECRET_DOMAIN}"]`` in ``spec.values``: helm-controller passes the values to the chart, which runs them
  through ``tpl``. kvlint said KV002 "unrendered Helm/Go template syntax ... render with `helm template` first",
  and listed the file as "template not rendered", though nothing in this file is for the user to render.
* open-source-ai-dev/vllm-helm-chart runs ``vllm serve {{ .Values.model.name }}`` with ``model.name:
  "Llama-3.2-1B"`` and never uses its ``model.organization: "meta-llama"``: the engine is asked for a hub id without
  an organisation. KV502 said only "not in the bundled catalogue and hub access is disabled" and offered
  ``--model-dir``; it now says the name lacks its organisation and names the catalogued meta-llama/Llama-3.2-1B.
* Tanguille/cluster's LLMKube ``InferenceService`` (``inference.llmkube.dev``, ``runtime: vllm``, ``vllmConfig``,
  a ``vllm/vllm-openai-rocm`` image) was skipped in silence: kvlint reads ``InferenceService`` by kind (KServe's,
  OME's), the KServe reader found no predictor in it, and the note for operator kinds kvlint has no reader for
  took any ``InferenceService`` as known. It is now "not read" (KV503 info), as other operators' objects are.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
MISTRAL_041 = COLLECTED / "brayanpena530__multiLLM-EKS-Deploy__services__mistral.yaml"
ORGLESS_CHART = COLLECTED / "charts" / "open-source-ai-dev-vllm"
LLMKUBE_VLLM = COLLECTED / "Tanguille__cluster__kubernetes__apps__ai__llmkube__models__qwen38-27b-vllm.yaml"
LLMKUBE_LLAMACPP = COLLECTED / "Tanguille__cluster__kubernetes__apps__ai__llmkube__models__qwen35-2b.yaml"
SGLANG_RELEASE = COLLECTED / "Tanguille__cluster__kubernetes__apps__ai__sglang__app__helmrelease.yaml"


def _kv403_fix(path: Path) -> str:
    result = run_check([str(path)], Options(allow_hub=False))
    kv403 = [d for d in result.diagnostics if d.rule == "KV403"]
    assert len(kv403) == 1, [d.message for d in result.diagnostics]
    return kv403[0].fix or ""


def test_no_data_parallel_remedy_for_a_release_without_the_option() -> None:
    text = MISTRAL_041.read_text()
    assert "image: vllm/vllm-openai:v0.4.1" in text and "nvidia.com/gpu: 10" in text
    fix = _kv403_fix(MISTRAL_041)
    assert "data-parallel-size" not in fix, fix
    # Mistral-7B's 32 attention heads do not divide by 10 (KV401), so fewer GPUs is the one remedy left
    assert fix == "request 1 GPU", fix


@pytest.mark.parametrize(("tag", "offered"), [("v0.7.3", False), ("v0.8.5", True), ("v0.11.0", True)])
def test_the_data_parallel_remedy_follows_the_release(tmp_path: Path, tag: str, offered: bool) -> None:
    f = tmp_path / "mistral.yaml"
    f.write_text(MISTRAL_041.read_text().replace("vllm/vllm-openai:v0.4.1", f"vllm/vllm-openai:{tag}"))
    fix = _kv403_fix(f)
    assert ("--data-parallel-size 10 to use all 10" in fix) is offered, (tag, fix)
    assert fix.startswith("request 1 GPU"), fix


def _kv002(path: Path) -> list[tuple[int, str]]:
    result = run_check([str(path)], Options(allow_hub=False))
    # warnings only: a Flux post-build ${VAR} in the HelmRelease's values (TZ: ${TIMEZONE}) is an info
    return [
        ((d.loc.line if d.loc else 0), d.message)
        for d in result.diagnostics
        if d.rule == "KV002" and d.severity != "info"
    ]


def test_template_actions_in_a_helmrelease_values_go_to_the_chart() -> None:
    text = SGLANG_RELEASE.read_text()
    assert (
        '- "{{ .Release.Name }}.${SECRET_DOMAIN}"' in text and "apiVersion: helm.toolkit.fluxcd.io/v2" in text
    )
    assert _kv002(SGLANG_RELEASE) == []


def test_template_actions_outside_the_values_still_make_a_template(tmp_path: Path) -> None:
    # the same HelmRelease with its spec.interval written as a Helm action: a template to render first
    f = tmp_path / "helmrelease.yaml"
    text = SGLANG_RELEASE.read_text()
    assert text.count("\n  interval: 30m\n") == 1
    f.write_text(text.replace("\n  interval: 30m\n", '\n  interval: "{{ .Values.interval }}"\n'))
    line = 1 + f.read_text().split("\n").index('  interval: "{{ .Values.interval }}"')
    assert [n for n, _ in _kv002(f)] == [line]


# An Argo CD Application with two sources, made up for this test: helm.valuesObject of the first goes to its chart;
# a Helm action in the second source's releaseName, outside any values, is a template's.
_ARGO = """apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: llm
spec:
  sources:
    - repoURL: https://charts.example.com
      chart: app
      helm:
        valuesObject:
          host: "{{ .Release.Name }}.example.com"
        values: |
          other: "{{ .Release.Namespace }}"
    - repoURL: https://charts.example.com
      chart: other
      helm:
        releaseName: "{{ .Values.name }}"
  destination:
    namespace: llm
"""


def test_argo_cd_values_go_to_the_chart_and_other_fields_do_not(tmp_path: Path) -> None:
    f = tmp_path / "app.yaml"
    f.write_text(_ARGO)
    assert [n for n, _ in _kv002(f)] == [17]
    f.write_text(_ARGO.replace('        releaseName: "{{ .Values.name }}"\n', ""))
    assert _kv002(f) == []


def test_argo_cd_helm_parameters_go_to_the_chart_too(tmp_path: Path) -> None:
    """helm.parameters: argo-cd's helmTemplate hands each value to Helm as --set, which the chart reads as written,
    as it reads helm.values; the releaseName action below them still makes a template."""
    params = (
        "        parameters:\n"
        "          - name: ingress.host\n"
        '            value: "{{ .Release.Name }}.example.com"\n'
        '        releaseName: "{{ .Values.name }}"\n'
    )
    f = tmp_path / "app.yaml"
    f.write_text(_ARGO.replace('        releaseName: "{{ .Values.name }}"\n', params))
    lines = f.read_text().split("\n")
    assert [n for n, _ in _kv002(f)] == [1 + lines.index('        releaseName: "{{ .Values.name }}"')]


def test_an_application_in_a_chart_template_is_rendered_first(tmp_path: Path) -> None:
    # app of apps: the Application is a template of a chart, whose own Helm renders the action before Argo CD sees
    # it, so it is still KV002 there
    chart = tmp_path / "apps"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: apps\nversion: 0.1.0\n")
    f = chart / "templates" / "app.yaml"
    f.write_text(_ARGO.replace('        releaseName: "{{ .Values.name }}"\n', ""))
    assert [n for n, _ in _kv002(f)] == [11]


def _kv502(path: Path) -> list[tuple[str, str]]:
    result = run_check([str(path)], Options(allow_hub=False))
    return [(d.message, d.fix or "") for d in result.diagnostics if d.rule == "KV502"]


@pytest.mark.skipif(shutil.which("helm") is None, reason="renders the chart with helm")
def test_a_model_name_without_its_organisation_names_the_catalogued_id() -> None:
    values = (ORGLESS_CHART / "values.yaml").read_text()
    assert 'organization: "meta-llama"' in values and 'name: "Llama-3.2-1B"' in values
    assert (
        "vllm serve {{ .Values.model.name }}" in (ORGLESS_CHART / "templates" / "deployment.yaml").read_text()
    )
    [(message, fix)] = _kv502(ORGLESS_CHART)
    assert "'Llama-3.2-1B' is a hub id without its organisation" in message, message
    assert "did you mean meta-llama/Llama-3.2-1B?" in message
    assert fix.startswith("provide it with its hub id meta-llama/Llama-3.2-1B in the command"), fix


# A Deployment made up for this test: the engine command as the chart above renders it, the name given three ways.
_BARE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.6.3
          command: ["/bin/sh", "-c"]
          args: ["vllm serve MODEL --max-model-len 8192"]
          resources: {limits: {nvidia.com/gpu: "1"}}
"""


@pytest.mark.parametrize(
    ("model", "meant"),
    [
        ("Llama-3.2-1B", "meta-llama/Llama-3.2-1B"),
        (
            "qwen2.5-7b-instruct",
            "Qwen/Qwen2.5-7B-Instruct",
        ),  # the Hub's ids are case-insensitive, as the catalogue's
        ("gpt2", None),  # a legacy canonical id the catalogue has no model of: as before
        ("someorg/Llama-3.2-1B-custom", None),  # an id with its organisation: as before
    ],
)
def test_only_a_bare_catalogued_repository_name_gets_the_hint(
    tmp_path: Path, model: str, meant: str | None
) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(_BARE.replace("MODEL", model))
    [(message, fix)] = _kv502(f)
    if meant is None:
        assert "without its organisation" not in message and "did you mean" not in message, message
        assert fix.startswith("provide it with --model-dir") or fix.startswith(
            "provide it with `kvlint models pull"
        ), fix
    else:
        assert f"did you mean {meant}?" in message, message
        assert f"provide it with its hub id {meant} in the command" in fix, fix


def _kv503(path: Path) -> list[tuple[int, str, str]]:
    result = run_check([str(path)], Options(allow_hub=False))
    return [
        ((d.loc.line if d.loc else 0), d.severity, d.message) for d in result.diagnostics if d.rule == "KV503"
    ]


def test_an_inference_service_of_another_operator_is_not_read_out_loud() -> None:
    text = LLMKUBE_VLLM.read_text()
    assert (
        "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService" in text
        and "runtime: vllm" in text
    )
    [(line, severity, message)] = _kv503(LLMKUBE_VLLM)
    assert severity == "info"
    assert (
        "kvlint has no reader for InferenceService (inference.llmkube.dev), whose spec.vllmConfig configures vLLM"
        in message
    )
    # at spec.vllmConfig: the first setting below the key (the comments between are skipped)
    lines = text.split("\n")
    key = next(i for i, ln in enumerate(lines) if ln.strip() == "vllmConfig:")
    first = next(
        i for i in range(key + 1, len(lines)) if lines[i].strip() and not lines[i].strip().startswith("#")
    )
    assert line == first + 1, (line, first + 1)


def test_an_inference_service_of_another_operator_serving_no_engine_kvlint_reads_stays_quiet() -> None:
    # the same operator's llama.cpp InferenceService: no engine of kvlint's in its spec
    text = LLMKUBE_LLAMACPP.read_text()
    assert "kind: InferenceService" in text and "llama.cpp:server-vulkan" in text
    assert _kv503(LLMKUBE_LLAMACPP) == []


def test_a_kserve_inference_service_is_still_kserves(tmp_path: Path) -> None:
    # the LLMKube object with KServe's API group: read as KServe's (no predictor: nothing to say), as before
    f = tmp_path / "isvc.yaml"
    f.write_text(
        LLMKUBE_VLLM.read_text().replace(
            "apiVersion: inference.llmkube.dev/v1alpha1\nkind: InferenceService",
            "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService",
        )
    )
    assert all("llmkube" not in m and "no reader for InferenceService" not in m for _, _, m in _kv503(f))


@pytest.mark.parametrize("model", ["Llama-3.2-1B", "qwen2.5-7b-instruct"])
def test_the_organisation_hint_holds_when_the_hub_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    """Hub access allowed (the CLI's default): the bare name is not in the (empty) Hugging Face cache and the Hub
    is not reached (HF_HUB_OFFLINE), and KV502 still names the catalogued id, as with --offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    f = tmp_path / "d.yaml"
    f.write_text(_BARE.replace("MODEL", model))
    result = run_check([str(f)], Options(allow_hub=True))
    [kv502] = [d for d in result.diagnostics if d.rule == "KV502"]
    assert "HF_HUB_OFFLINE is set" in kv502.message, kv502.message
    assert "without its organisation" in kv502.message and "did you mean " in kv502.message, kv502.message
    assert (kv502.fix or "").startswith("provide it with its hub id "), kv502.fix


SKABRITS_LWS = COLLECTED / "skabrits__vllm__vllm.yaml"


def _kv102(path: Path) -> list[str]:
    result = run_check([str(path)], Options(allow_hub=False))
    return [d.fix or "" for d in result.diagnostics if d.rule == "KV102"]


def test_a_video_profile_that_leaves_no_kv_cache_gets_the_video_limit_remedy(tmp_path: Path) -> None:
    """skabrits/vllm: Qwen2.5-VL-7B (bitsandbytes 4-bit) on an RTX 4070, no --max-model-len, no
    --limit-mm-per-prompt: vLLM profiles the vision tower with a dummy video of max_pixels frames, whose activation
    alone exceeds the card. KV102's fix was only "use a larger GPU or a quantized model" (the model is already
    quantized); it now names the video limit (and the length it then needs), and that fix, written into the
    manifest's command, leaves no KV102."""
    text = SKABRITS_LWS.read_text()
    command = (
        "--tensor-parallel-size 1 --pipeline_parallel_size 2 --trust-remote-code --quantization bitsandbytes;"
    )
    assert command in text and "Qwen/Qwen2.5-VL-7B-Instruct" in text and "limit-mm-per-prompt" not in text
    [fix] = _kv102(SKABRITS_LWS)
    m = re.match(
        r"--limit-mm-per-prompt '(\{[^']*\})'(?: and --max-model-len (\d+))?, if the service takes no video",
        fix,
    )
    assert m is not None, fix
    assert json.loads(m.group(1)) == {"video": 0}
    added = f"--limit-mm-per-prompt '{m.group(1)}'" + (f" --max-model-len {m.group(2)}" if m.group(2) else "")
    fixed = tmp_path / "vllm.yaml"
    fixed.write_text(text.replace(command, command[:-1] + " " + added + ";"))
    assert _kv102(fixed) == []


PROX_OPS = COLLECTED / "jlengelbrecht__prox-ops__kubernetes__apps__ai__vllm__app__helmrelease.yaml"


def test_an_api_key_in_a_model_entry_is_pointed_to_the_engine_spec() -> None:
    """prox-ops' HelmRelease writes ``vllmAPIKey`` (secretName, secretKey) inside its modelSpec entry; production-stack's
    chart reads the API key only as servingEngineSpec.vllmApiKey (deployment-vllm-multi.yaml). KV005 said "remove it
    or move it where the chart reads it" without saying where."""
    text = PROX_OPS.read_text()
    assert "          vllmAPIKey:\n            secretName: vllm-secret" in text
    result = run_check([str(PROX_OPS)], Options(allow_hub=False))
    [kv005] = [d for d in result.diagnostics if d.rule == "KV005" and "'vllmAPIKey'" in d.message]
    assert "servingEngineSpec.vllmApiKey" in kv005.message, kv005.message
    assert (kv005.fix or "").startswith("move it to servingEngineSpec.vllmApiKey"), kv005.fix
