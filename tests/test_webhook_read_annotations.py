"""The annotations :func:`kvlint.webhook.review.lint_relevant` keeps are those kvlint reads: an UPDATE whose only
change is such an annotation is reviewed, not admitted as "metadata only"."""

from __future__ import annotations

import json
from typing import Any

from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.review import lint_relevant
from kvlint.webhook.worker import lint_object
from kvlint.workloads.hardwareprofile import PROFILE_NAME, PROFILE_NAMESPACE


def _isvc(annotations: dict[str, str]) -> dict[str, Any]:
    """An OpenShift AI InferenceService whose vLLM container requests no GPU (as one whose GPUs the hardware
    profile's identifiers give at admission is written)."""
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "llm", "namespace": "team", "annotations": annotations},
        "spec": {
            "predictor": {
                "model": {
                    "modelFormat": {"name": "vLLM"},
                    "image": "vllm/vllm-openai:v0.11.0",
                    "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
                }
            }
        },
    }


def _kv405(obj: dict[str, Any]) -> list[tuple[str, str]]:
    res = lint_object(json.loads(json.dumps(obj)), "<admission test>.json", webhook_options())
    return [(d.severity, d.message) for d in res.diagnostics if d.rule == "KV405"]


def test_an_update_of_the_hardware_profile_annotations_is_reviewed() -> None:
    """Taking ``opendatahub.io/hardware-profile-name`` off turns KV405 from an info into a warning the webhook
    sends; the UPDATE was admitted unreviewed as "metadata only", the warning unsent. Its namespace companion
    chooses the profile too."""
    named = _isvc({PROFILE_NAME: "gpu-profile", "team.example/owner": "a"})
    bare = _isvc({"team.example/owner": "b"})
    assert [s for s, _ in _kv405(named)] == ["info"] and [s for s, _ in _kv405(bare)] == ["warning"]
    assert lint_relevant(named) != lint_relevant(bare)
    elsewhere = _isvc({PROFILE_NAME: "gpu-profile", PROFILE_NAMESPACE: "shared"})
    assert lint_relevant(elsewhere) != lint_relevant(named)
    assert "in namespace shared" in _kv405(elsewhere)[0][1]
    # what kvlint does not read still leaves the projection unchanged
    assert lint_relevant(_isvc({PROFILE_NAME: "gpu-profile", "team.example/owner": "b"})) == lint_relevant(
        named
    )
