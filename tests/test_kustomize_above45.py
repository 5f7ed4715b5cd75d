"""A file a kustomization names above its own directory, in a walk (review45C of newuser45's load-restrictor change).

kustomize's default load restrictor refuses every such file, and the walk reads a refused ``resources`` entry (a
whole object: GKE's Gemma overlays' ``../vllm-7b.yaml``) as a plain file. A patch above the kustomization is no whole
object: read alone it was reported as a strategic-merge patch (KV002) beside the refused build's KV001; before the
change it stayed with its kustomization, and so it does again."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

DEPLOY = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  selector: {matchLabels: {app: v}}
  template:
    metadata: {labels: {app: v}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.20.0
        args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""

PATCH = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"]
"""


def _tree(tmp_path: Path, kustomization: str) -> Path:
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(kustomization)
    return tmp_path


def _files(res) -> set[str]:  # type: ignore[no-untyped-def]
    return {Path(d.loc.file).name for d in res.diagnostics if d.loc is not None and d.loc.file}


def test_a_patch_above_an_overlay_stays_with_its_build(tmp_path: Path) -> None:
    root = _tree(tmp_path, "resources:\n- deploy.yaml\npatches:\n- path: ../patch.yaml\n")
    (root / "overlay" / "deploy.yaml").write_text(DEPLOY)
    (root / "patch.yaml").write_text(PATCH)
    res = run_check([str(root)], Options(allow_hub=False))
    assert "kustomization.yaml" in _files(res)  # the refused build says why
    assert "patch.yaml" not in _files(res)
    assert not [d for d in res.diagnostics if d.rule == "KV002"]


def test_a_resource_above_an_overlay_is_still_read_as_a_plain_file(tmp_path: Path) -> None:
    root = _tree(tmp_path, "resources:\n- ../deploy.yaml\n")
    (root / "deploy.yaml").write_text(DEPLOY)
    res = run_check([str(root)], Options(allow_hub=False))
    assert [cr for cr in res.containers if cr.serving is not None and cr.serving.engine == "vllm"]
