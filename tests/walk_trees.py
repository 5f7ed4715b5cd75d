"""What the tests of directory walks over Helm charts and kustomize trees share (tests/test_walk_render.py,
tests/test_walk44.py, tests/test_walk45.py, tests/test_kustomize_base_alone.py): the markers that skip a test
without helm or kubectl/kustomize, the manifests their made-up trees are built from, and the offline check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint import render
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic

ROOT = Path(__file__).resolve().parents[1]
CHAT_CHART = ROOT / "fixtures" / "helm" / "chat-chart"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
needs_kustomize = pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)

#: A kustomize base's vLLM Deployment that leaves the GPUs to its overlays (no GPU limit, no node selector)
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: vllm}}
  template:
    metadata: {labels: {app: vllm}}
    spec:
      containers:
      - name: inference-server
        image: vllm/vllm-openai:v0.11.0
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, "8192"]
        resources: {requests: {cpu: "4", memory: 32Gi}}
"""
#: An overlay's patch of :data:`DEPLOYMENT` giving it one L4
GPU_PATCH = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: inference-server
        resources: {limits: {nvidia.com/gpu: "1"}}
"""
#: An Argo CD Application deploying the checkout's ``charts/chat`` (:data:`CHAT_CHART`) with its own values
APPLICATION = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: chat, namespace: argocd}
spec:
  project: default
  source:
    repoURL: https://github.com/example/infra
    targetRevision: main
    path: charts/chat
    helm:
      valuesObject: {maxModelLen: 8192}
  destination: {server: https://kubernetes.default.svc, namespace: serving}
"""
#: A ConfigMap named ``% name``
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {a: b}\n"


def offline_diags(paths: list[str]) -> list[Diagnostic]:
    """The diagnostics of ``kvlint check PATHS...`` without hub access."""
    return run_check(paths, Options(allow_hub=False)).diagnostics


def write_kustomization(d: Path, text: str) -> None:
    """``d/kustomization.yaml`` holding ``text`` (``d`` made with its parents)."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "kustomization.yaml").write_text(text)
