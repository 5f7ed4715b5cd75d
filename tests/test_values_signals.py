"""Kind-less Helm values of a serving chart that has none of the known values shapes (substratusai/helm's vllm
chart: ``model``, ``resources.limits nvidia.com/gpu``, ``env``, ``nodeSelector``) get the KV002 "this is a Helm
values file" and are counted as not read, instead of "0 workloads" and exit 0; kind-less YAML that is not
chart values (Compose, kustomize configurations, CI workflows, OpenAPI, an operator's or an engine's own
config, .kvlint.yaml, Ansible) stays quiet. The files are real (fixtures/helm/SOURCE.md,
fixtures/load/not-values/INDEX.csv) unless a test says it wrote them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise, unread

FIX = Path(__file__).resolve().parent.parent / "fixtures"
VLLM_CHART_VALUES = sorted(
    (FIX / "helm" / "values").glob("substratusai__helm__charts__vllm__examples__*.yaml")
)
NOT_VALUES = sorted(p for p in (FIX / "load" / "not-values").iterdir() if p.suffix in (".yaml", ".yml")) + [
    FIX / "config" / "project" / ".kvlint.yaml",
    FIX / "collected" / "substratusai__kubeai__charts__kubeai__values-eks.yaml",
]


def test_the_fixtures_are_there() -> None:
    assert len(VLLM_CHART_VALUES) == 3 and len(NOT_VALUES) == 8


@pytest.mark.parametrize("path", VLLM_CHART_VALUES, ids=lambda p: p.name)
def test_serving_chart_values_get_kv002_and_count_as_not_read(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert "kind" not in data and "apiVersion" not in data
    result = run_check([str(path)], Options(allow_hub=False))
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert "is a Helm values file" in kv002.message and f"-f {path}" in kv002.fix
    # the reason names what made it values: the GPU limit and the model the file sets
    assert "resources.limits nvidia.com/gpu" in kv002.message and data["model"] in kv002.message
    # the files name no engine (no "vllm" in them): counted as not read for their GPU limit
    assert "vllm" not in path.read_text(encoding="utf-8").lower()
    assert [why for _, why in unread(result)] == ["Helm values file not rendered"]
    assert summarise(result).not_read == 1


@pytest.mark.parametrize("path", NOT_VALUES, ids=lambda p: p.name)
def test_kindless_yaml_that_is_not_values_stays_quiet(path: Path) -> None:
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV002"], path
    assert summarise(result).not_read == 0


@pytest.mark.parametrize(
    "text",
    [
        # written for this test: an Ansible playbook (a list), and an Ansible vars file
        "- hosts: gpu\n  tasks:\n    - name: run vllm\n      shell: vllm serve meta-llama/Llama-3.1-8B\n",
        "model: meta-llama/Llama-3.1-8B\nenv: production\nnodeSelector: gpu-01\n",
        # written for this test: a vLLM --config file (the model and flags, no pod keys)
        "model: meta-llama/Llama-3.1-8B\ntensor-parallel-size: 2\nmax-model-len: 8192\n",
        # written for this test: one signal alone (a resources fragment; a model name with a plain env map)
        "resources:\n  limits:\n    nvidia.com/gpu: 1\n",
        "model: meta-llama/Llama-3.1-8B\nenv:\n  HF_TOKEN: x\n",
        # written for this test: a Compose file with a GPU reservation
        "services:\n  vllm:\n    image: vllm/vllm-openai\n    deploy:\n      resources:\n        reservations:\n"
        "          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]\n",
        # written for this test: a model that is a URL or a local path is no repository id
        "model: /models/llama\nresources: {limits: {cpu: 4}}\nnodeSelector: {a: b}\n",
    ],
)
def test_written_near_misses_stay_quiet(tmp_path: Path, text: str) -> None:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV002"]


def test_piped_values_with_a_gpu_count_as_not_read() -> None:
    """Standard input cannot be read again for an engine's name: the GPU limit in the reason is enough."""
    text = (VLLM_CHART_VALUES[0]).read_text(encoding="utf-8")
    result = run_check(["-"], Options(allow_hub=False), stdin=io.StringIO(text))
    assert [d.rule for d in result.diagnostics] == ["KV002"]
    assert summarise(result).not_read == 1


def test_a_kind_keeps_an_object_out() -> None:
    """The same keys under a kind are an object of that kind, never values."""
    text = (VLLM_CHART_VALUES[0]).read_text(encoding="utf-8")
    result = run_check(["-"], Options(allow_hub=False), stdin=io.StringIO("kind: Thing\n" + text))
    assert not [d for d in result.diagnostics if d.rule == "KV002"]


def test_llm_d_modelservice_values_are_a_values_file_not_pods() -> None:
    # llm-d-incubation/llm-d-modelservice examples/values-pd.yaml (fixtures/collected, source in its INDEX.csv):
    # decode/prefill `containers` with `modelCommand: vllmServe`, which the chart turns into `vllm serve` with the
    # model of `modelArtifacts`. Read as pods, both containers got KV503 "the vLLM command names no model".
    path = FIX / "collected" / "llm-d-incubation__llm-d-modelservice__examples__values-pd.yaml"
    r = run_check([str(path)], Options(allow_hub=False))
    assert r.containers == [] and not [d for d in r.diagnostics if d.rule == "KV503"]
    assert [d.rule for d in r.diagnostics] == ["KV002"]
    assert [why for _, why in unread(r)] == ["template not rendered"]
    # without its one template expression (modelArtifacts.uri), the same values get the values-file KV002
    text = "".join(line for line in path.read_text().splitlines(True) if "{{" not in line)
    r = run_check(["-"], Options(allow_hub=False), stdin=io.StringIO(text))
    (d,) = r.diagnostics
    assert d.rule == "KV002" and "llm-d-modelservice chart values" in d.message and r.containers == []
