"""GitOps objects that deploy a serving engine through a chart kvlint does not fetch (Argo CD ``Application`` /
``ApplicationSet``, Flux ``HelmRelease``) are said to be not read, never passed in silence: a KV503 info naming
where Argo CD or Flux takes the pods from, counted as "not read" in the summary, and failing
``--require-sizing``. The Argo CD Application is a real one (fixtures/collected, source in its INDEX.csv)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
ARGO_APP = COLLECTED / "pkstaz__pdf-comparator-ai__k8s__argocd__vllm-application.yaml"

# Made up for this test: a Flux HelmRelease of a vLLM chart kvlint has no values reader for (vllm-stack's values
# are read: tests/test_gitops_values.py), and GitOps objects that name no serving engine or belong to another API
# group.
_FLUX = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: chat, namespace: llm}
spec:
  interval: 10m
  chart:
    spec:
      chart: vllm
      version: 0.1.7
      sourceRef: {kind: HelmRepository, name: vllm}
  values:
    servingEngineSpec:
      modelSpec:
      - name: llama
        modelURL: meta-llama/Llama-3.1-8B-Instruct
"""
_APPSET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: models}
spec:
  generators: [{list: {elements: [{model: qwen}]}}]
  template:
    metadata: {name: "{{model}}"}
    spec:
      sources:
      - repoURL: https://vllm-project.github.io/production-stack
        chart: vllm-stack
        targetRevision: 0.1.7
        helm: {valueFiles: ["$values/values/{{model}}.yaml"]}
      - {repoURL: https://github.com/example/gitops, targetRevision: main, ref: values}
"""
_QUIET = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: grafana}
spec:
  source: {repoURL: https://grafana.github.io/helm-charts, chart: grafana, targetRevision: 8.0.0}
  destination: {server: https://kubernetes.default.svc, namespace: monitoring}
---
apiVersion: app.k8s.io/v1beta1
kind: Application
metadata: {name: vllm-app}
spec:
  selector: {matchLabels: {app: vllm}}
"""

# Made up after real homelab Applications (Open WebUI's chart with its openaiBaseApiUrl parameter, NVIDIA's
# dcgm-exporter chart): deployed into the namespace that holds the vLLM server, pointing at its Service; they run
# no engine. The last deploys a chart of no known engine whose values configure vLLM under a `vllm` key.
_BESIDE_VLLM = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: open-webui, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://helm.openwebui.com/
    chart: open-webui
    targetRevision: 6.13.0
    helm:
      parameters:
      - {name: ollama.enabled, value: "false"}
      - {name: openaiBaseApiUrl, value: "http://vllm-router.vllm.svc.cluster.local/v1"}
  destination: {server: https://kubernetes.default.svc, namespace: vllm}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: exporters}
spec:
  generators: [{list: {elements: [{cluster: gpu-a, namespace: vllm}]}}]
  template:
    metadata: {name: "dcgm-{{cluster}}"}
    spec:
      source: {repoURL: https://nvidia.github.io/dcgm-exporter/helm-charts, chart: dcgm-exporter}
      destination: {name: "{{cluster}}", namespace: "{{namespace}}"}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: webui, namespace: vllm}
spec:
  targetNamespace: vllm
  chart: {spec: {chart: open-webui, sourceRef: {kind: HelmRepository, name: open-webui}}}
  values: {openaiBaseApiUrls: ["http://vllm.vllm.svc:8000/v1"]}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: chat, namespace: argocd}
spec:
  source:
    repoURL: https://charts.example.com
    chart: llm
    helm: {valuesObject: {vllm: {model: Qwen/Qwen2.5-7B-Instruct}}}
  destination: {server: https://kubernetes.default.svc, namespace: vllm}
"""


def _kv503(result):  # type: ignore[no-untyped-def]
    return [d for d in result.diagnostics if d.rule == "KV503"]


def test_argo_cd_application_deploying_vllm_is_not_passed_in_silence() -> None:
    result = run_check([str(ARGO_APP)], Options(allow_hub=False))
    (d,) = _kv503(result)
    assert d.severity == "info" and d.object == "Application/openshift-gitops/vllm-granite"
    assert (
        "Argo CD builds its pods from the directory helm/vllm of https://github.com/pkstaz/pdf-comparator-ai"
        in d.message
    )
    assert "at master with the Helm values and parameters written here" in d.message
    assert d.loc is not None and d.loc.line == 14  # spec.source
    assert summarise(result).not_read == 1
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--require-sizing", str(ARGO_APP)])
    assert (
        r.exit_code == 1
        and "Application/openshift-gitops/vllm-granite: operator settings not read" in r.stderr
    )


def test_flux_helmrelease_names_its_chart_and_source(tmp_path: Path) -> None:
    f = tmp_path / "hr.yaml"
    f.write_text(_FLUX)
    (d,) = _kv503(run_check([str(f)], Options(allow_hub=False)))
    assert (
        "Flux's helm-controller renders its pods from the chart vllm 0.1.7 from HelmRepository/vllm"
        in d.message
    )
    assert "with spec.values" in d.message and d.loc is not None and d.loc.line == 8  # spec.chart.spec


def test_gitops_objects_naming_no_engine_or_of_another_group_say_nothing(tmp_path: Path) -> None:
    f = tmp_path / "apps.yaml"
    f.write_text(_QUIET)
    result = run_check([str(f)], Options(allow_hub=False))
    assert not _kv503(result) and summarise(result).not_read == 0


def test_applicationset_names_its_chart_and_value_files_not_the_ref_source(tmp_path: Path) -> None:
    f = tmp_path / "appset.yaml"
    f.write_text(_APPSET)
    (d,) = _kv503(run_check([str(f)], Options(allow_hub=False)))
    assert (
        "Argo CD builds its pods from the Helm chart vllm-stack 0.1.7 of https://vllm-project.github.io/"
        "production-stack with the value files $values/values/{{model}}.yaml; kvlint" in d.message
    )
    assert "example/gitops" not in d.message and "written here" not in d.message


def test_where_a_gitops_object_deploys_and_the_servers_it_reaches_name_no_engine(tmp_path: Path) -> None:
    """A destination namespace, a generator's namespace, Flux's targetNamespace and a URL in the values say where
    the pods go and whom they talk to, not what they run: only the Application whose values configure vLLM is
    noted (the others were KV503 "kvlint does not read this Application's engine settings")."""
    f = tmp_path / "apps.yaml"
    f.write_text(_BESIDE_VLLM)
    result = run_check([str(f)], Options(allow_hub=False))
    assert [d.object for d in _kv503(result)] == ["Application/argocd/chat"]
    assert summarise(result).not_read == 1
