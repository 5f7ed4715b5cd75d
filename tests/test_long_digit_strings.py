"""Digit strings longer than Python's int() converts (4,300 digits) where kvlint reads a count: KServe's managed DRA
device count annotation and an OME runtime's GPU quantity. int() raised ValueError, which took the check of the
whole file down (KV503 "could not finish checking this file") and, in the webhook, the review (admitted unchecked
under the default fail-open mode): one annotation let any LLMInferenceService through."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.worker import lint_object

COLLECTED = Path(__file__).resolve().parent.parent / "fixtures" / "collected"
DRA = (
    COLLECTED
    / "kserve__kserve__docs__samples__llmisvc__managed-dra__llm-inference-service-managed-dra-minimal.yaml"
)
OME = (
    COLLECTED / "sgl-project__ome__config__runtimes__srt__nvidia__nvidia-nemotron-3-nano-30b-a3b-fp8-rt.yaml"
)
LONG = "7" * 5000


def _lint(obj: dict[str, Any]) -> list[Any]:
    return list(lint_object(obj, "<admission test>.json", webhook_options()).diagnostics)


def test_a_managed_dra_count_of_5000_digits_is_refused_as_kserve_refuses_it() -> None:
    obj = yaml.safe_load(DRA.read_text())
    obj["metadata"]["annotations"]["serving.kserve.io/exp-dra-device-count"] = LONG
    found = _lint(obj)
    said = [d.message for d in found if "exp-dra-device-count" in d.message]
    assert said and all(f"exp-dra-device-count '{LONG[:40]}" in m and LONG not in m for m in said), said
    # Go's Atoi takes leading zeros and a sign: a small count so written is read, one past int64 refused
    for raw, ok in (("+" + "0" * 30 + "2", True), ("9" * 19, False), ("-" + "0" * 25, False)):
        obj["metadata"]["annotations"]["serving.kserve.io/exp-dra-device-count"] = raw
        words = " ".join(d.message for d in _lint(obj))
        assert ("2 devices" in words) is ok and ("is not a whole number from 1" in words) is not ok, (
            raw,
            words,
        )


def test_an_ome_runtime_gpu_quantity_of_5000_digits_is_no_count() -> None:
    obj = yaml.safe_load(re.sub(r"nvidia.com/gpu: *\d+", f'nvidia.com/gpu: "{LONG}"', OME.read_text()))
    found = _lint(obj)
    assert any(d.rule == "KV405" and d.severity == "error" for d in found)
    assert not any(d.rule == "KV503" and d.severity != "info" for d in found)


def test_an_amd_vram_node_label_of_5000_digits_names_no_gpu_and_hides_no_error() -> None:
    """``amd.com/gpu.vram`` in a CRD's pod template (the API server validates no label value there): int() of a
    5,000-digit value raised inside placement, which answered "no GPU requested" (KV405 warning, capacity rules
    skipped): the pod was not planned at all."""
    from kvlint.accelerators.registry import amd_vram

    assert amd_vram(LONG + "G") == [] and amd_vram("0" * 5000 + "192G") == amd_vram("192G") != []
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "d"},
        "spec": {
            "nodeSelector": {"amd.com/gpu.vram": LONG + "G"},
            "containers": [
                {
                    "name": "e",
                    "image": "rocm/vllm:latest",
                    "command": ["vllm", "serve", "meta-llama/Llama-3.1-405B-Instruct"],
                    "resources": {"limits": {"amd.com/gpu": 1}},
                }
            ],
        },
    }
    found = _lint(pod)
    assert not [d for d in found if d.rule == "KV405"], [d.message for d in found]
    # planned on the AMD fleet as a pod whose GPU kvlint cannot tell (the label names none), not skipped
    assert any(d.rule == "KV501" and "default ROCm fleet" in d.message for d in found)
