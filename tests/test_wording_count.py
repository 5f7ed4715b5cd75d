"""Counts in messages take the number they print: "1 GPU sits idle", "request 2 GPUs", never "GPU(s)" (the
lazy plural was in KV403's idle GPUs and its fix, KV501's fleet plan "with 1 GPU(s) per pod", KV406, the data-parallel
line and `kvlint simulate`'s header)."""

from __future__ import annotations

import copy
import json

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.webhook.worker import WARM_UP_OBJECT
from kvlint.wording import count, idle


def test_count_and_idle() -> None:
    assert [count(n, "GPU") for n in (0, 1, 2)] == ["0 GPUs", "1 GPU", "2 GPUs"]
    assert idle(1, "NPU") == "1 NPU sits idle" and idle(3, "NeuronCore") == "3 NeuronCores sit idle"


def test_kv403_says_one_idle_gpu_in_the_singular() -> None:
    """A TP 1 vLLM pod requesting 2 GPUs: one sits idle, and the fix requests one."""
    obj = copy.deepcopy(WARM_UP_OBJECT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container.setdefault("resources", {})["limits"] = {"nvidia.com/gpu": 2}
    result = run_documents(load_text(json.dumps(obj, indent=1), "two.json"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV403"]
    assert d.message.endswith("uses only 1; 1 GPU sits idle"), d.message
    assert d.fix.startswith("request 1 GPU") and not d.fix.startswith("request 1 GPUs"), d.fix
    assert "(s)" not in d.message + d.fix


def test_one_llminferenceservice_preset_is_said_in_the_singular() -> None:
    """KV208 on an LLMInferenceService said "chosen by KServe's LLMInferenceServiceConfig preset(s)
    kserve-config-llm-worker-data-parallel", one preset named."""
    from pathlib import Path

    from kvlint.pipeline import run_check

    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "collected"
        / "kserve__kserve__docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__llm-inference-service-dp-ep-deepseek-r1-gpu-naive.yaml"
    )
    result = run_check([str(path)], Options(allow_hub=False))
    said = [d.message for d in result.diagnostics if "LLMInferenceServiceConfig preset" in d.message]
    assert said and all("preset(s)" not in m for m in said)
    assert any("LLMInferenceServiceConfig preset kserve-config-" in m for m in said), said


def test_tpu_and_neuron_counts_take_their_number(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """KV403 on TPU said "1 device(s) sit idle", on Neuron "request 1 device(s)" (aws.amazon.com/neuron) and
    "request 1 NeuronCores" (aws.amazon.com/neuroncore): the counts the other KV403 messages now say in number."""
    from test_capacity_rules import _neuron_pod
    from test_unseen_round16 import _kv403, _variant

    v6e = _variant(tmp_path, "gke-tpu-accelerator: tpu7x", "gke-tpu-accelerator: tpu-v6e-slice")
    text = v6e.read_text().replace("--tensor-parallel-size=8", "--tensor-parallel-size=3")
    v6e.write_text(text)
    (d,) = _kv403(v6e)
    assert d.message.endswith("uses only 3; 1 device sits idle"), d.message
    cores = [d for d in _neuron_pod(tmp_path, "aws.amazon.com/neuroncore", 2, 1) if d.rule == "KV403"]
    assert [d.fix.split(" (")[0] for d in cores] == ["request 1 NeuronCore"]
    devices = [
        d for d in _neuron_pod(tmp_path, "aws.amazon.com/neuron", 2, 2, "inf2.48xlarge") if d.rule == "KV403"
    ]
    assert [d.fix.split(" (")[0] for d in devices] == ["request 1 device"]
    assert all("(s)" not in d.message + d.fix for d in [*cores, *devices])
