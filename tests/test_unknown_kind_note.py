"""An object of an operator kind kvlint has no reader for, holding no pod template, whose spec configures a
serving engine (a key naming it, ``serving.vllmArgs``, or an engine chooser's value, ``engine: sglang``) is
said to be not read (KV503 info, "not read" in the summary, --require-sizing fails) instead of passing in
silence; objects whose engine words are only values of other keys (labels, selectors, names) stay silent.
The LLMModel is a real one (fixtures/collected, source in its INDEX.csv)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.sizing import summarise

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
NEBARI = COLLECTED / "nebari-dev__llm-serving-pack__examples__models__qwen3-5-35b-a3b-gptq-int4.yaml"

# Made up for this test: an operator object choosing its engine by value, and objects that only mention
# engines in values of other keys (an inference pool's selector, a monitor's name), or are core kinds.
_OTHERS = """\
apiVersion: example.dev/v1
kind: ModelDeployment
metadata: {name: chooser}
spec:
  runtime: {engine: SGLang, replicas: 1}
---
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferencePool
metadata: {name: vllm-llama3-8b-instruct}
spec:
  targetPortNumber: 8000
  selector: {app: vllm-llama3-8b-instruct}
---
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: vllm}
spec:
  endpoints: [{port: vllm-metrics}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: vllm-config}
data: {vllmArgs: --max-model-len 8192}
"""


def _kv503(result):  # type: ignore[no-untyped-def]
    return [d for d in result.diagnostics if d.rule == "KV503"]


def test_operator_object_configuring_vllm_in_a_key_is_not_read() -> None:
    result = run_check([str(NEBARI)], Options(allow_hub=False))
    (d,) = _kv503(result)
    assert d.severity == "info" and d.object == "LLMModel/nebari-llm-serving-system/qwen3-5-35b-a3b-gptq-int4"
    assert "no reader for LLMModel (llm.nebari.dev), whose spec.serving.vllmArgs configures vLLM" in d.message
    assert d.loc is not None and d.loc.line == 29  # the vllmArgs key
    assert summarise(result).not_read == 1
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--require-sizing", str(NEBARI)])
    assert r.exit_code == 1 and "LLMModel/nebari-llm-serving-system/qwen3-5-35b-a3b-gptq-int4" in r.stderr


def test_engine_chooser_value_counts_and_mere_mentions_do_not(tmp_path: Path) -> None:
    f = tmp_path / "others.yaml"
    f.write_text(_OTHERS)
    result = run_check([str(f)], Options(allow_hub=False))
    assert [(d.object, d.loc.line if d.loc else None) for d in _kv503(result)] == [
        ("ModelDeployment/chooser", 5)
    ]
    assert "whose spec.runtime.engine configures SGLang" in _kv503(result)[0].message
    assert summarise(result).not_read == 1
