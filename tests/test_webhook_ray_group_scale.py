"""An UPDATE of a RayService that changes only its GPU worker group's pod count is reviewed.

The webhook skips UPDATEs that change only scale keys (``replicas``, ``minReplicas``, ``maxReplicas``) at any
depth, but a KubeRay worker group's pod count is the GPUs vLLM's Ray placement group spans: a RayService at
tensor 8 x pipeline 2 on two 8-GPU pods, set to one pod, gets KV403's error (16 bundles on 8 GPUs) and was
admitted unreviewed as "update changes only replicas". With the Ray autoscaler on, ``replicas`` is the
autoscaler's to write (kvlint reads ``maxReplicas`` then) and stays skipped."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("starlette")

from kvlint.webhook.review import (  # noqa: E402
    WebhookSettings,
    lint_review,
    parse_review,
    skip_reason,
    webhook_options,
)

ROOT = Path(__file__).resolve().parents[1]
RAY = (
    ROOT
    / "fixtures"
    / "collected"
    / "versions"
    / "dc203e2"
    / "ray-project__kuberay__ray-operator__config__samples__ray-service.deepseek.yaml"
)


def _update(new: dict[str, Any], old: dict[str, Any]) -> Any:
    group, _, version = new["apiVersion"].rpartition("/")
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-ray",
            "kind": {"group": group, "version": version, "kind": new["kind"]},
            "resource": {"group": group, "version": version, "resource": "rayservices"},
            "name": new["metadata"]["name"],
            "namespace": "serving",
            "operation": "UPDATE",
            "userInfo": {"username": "alice"},
            "object": new,
            "oldObject": old,
            "dryRun": False,
        },
    }
    return parse_review(json.dumps(body))


def _errors(review: Any) -> set[str]:
    return {d.rule for d in lint_review(review, webhook_options()).diagnostics if d.severity == "error"}


def _scaled(obj: dict[str, Any], pods: int, *keys: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    (group,) = out["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    for k in keys:
        group[k] = pods
    return out


def test_a_gpu_group_taken_to_fewer_pods_is_reviewed() -> None:
    old = yaml.safe_load(RAY.read_text())
    (group,) = old["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    pods = group["maxReplicas"]
    assert pods > 1 and group["replicas"] == pods
    new = _scaled(old, pods - 1, "replicas", "minReplicas", "maxReplicas")
    review = _update(new, old)
    # the change matters: the new object has an error the old one has not
    assert "KV403" in _errors(review) - _errors(_update(old, old))
    assert skip_reason(review, WebhookSettings()) is None
    # without the autoscaler, replicas alone is the pod count (maxReplicas absent)
    for g in (old, new):
        del g["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["maxReplicas"]
    review = _update(new, old)
    assert "KV403" in _errors(review)
    assert skip_reason(review, WebhookSettings()) is None


def test_the_ray_autoscalers_replicas_and_other_scale_keys_stay_skipped() -> None:
    old = yaml.safe_load(RAY.read_text())
    old["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = True
    pods = old["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["maxReplicas"]
    # the autoscaler's write (replicas within [minReplicas, maxReplicas]), a minReplicas change
    for new in (_scaled(old, pods - 1, "replicas"), _scaled(old, pods - 1, "minReplicas")):
        assert skip_reason(_update(new, old), WebhookSettings()) is not None
    scaled = copy.deepcopy(old)
    scaled["spec"]["replicas"] = 3  # a raised count outside the worker groups is reviewed (break29: KV106)
    assert skip_reason(_update(scaled, old), WebhookSettings()) is None
    lowered = copy.deepcopy(old)
    lowered["spec"]["replicas"] = 1
    assert skip_reason(_update(lowered, scaled), WebhookSettings()) is not None  # lowered: skipped
    # the bound it plans with is reviewed
    assert skip_reason(_update(_scaled(old, pods - 1, "maxReplicas"), old), WebhookSettings()) is None
