"""``--cluster`` and the ``kvlint.io/accelerator`` annotation: the live nodes a pod can schedule on are its own
facts, so the annotation is weighed against them as it is against a nodeSelector without ``--cluster``
(docs/rules.md, KV005): applied and reported with exemptions allowed, reported as not applied with them disabled,
and applied either way when no fitting node names a GPU kvlint knows. kvlint ignored the annotation altogether
under ``--cluster``. The nodes are fixtures/cluster/nodes.json (read as the API server's NodeList); the expected
GPUs are those the nodes' labels name."""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.cluster import inventory_from_node_list
from kvlint.pipeline import Options, run_check

CLUSTER = Path(__file__).resolve().parents[1] / "fixtures" / "cluster"
INVENTORY = inventory_from_node_list(json.loads((CLUSTER / "nodes.json").read_text()))


def _run(tmp_path: Path, annotation: str, exemptions: bool, pod: str | None = None):
    text = pod or (CLUSTER / "pod-gpu-count-8.yaml").read_text()
    text = text.replace(
        "  name: llama-anywhere\n",
        f"  name: llama-anywhere\n  annotations:\n    kvlint.io/accelerator: {annotation}\n",
    )
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    res = run_check(
        [str(path)], Options(allow_hub=False, cluster_inventory=INVENTORY, exemptions_allowed=exemptions)
    )
    (cr,) = res.containers
    assert cr.placement is not None
    acc = cr.placement.accelerator.id if cr.placement.accelerator else None
    return acc, [f"{d.severity} {d.message}" for d in res.diagnostics if d.rule == "KV005"]


def test_an_annotation_the_nodes_contradict_is_applied_and_reported_with_exemptions(tmp_path: Path) -> None:
    acc, kv005 = _run(tmp_path, "h200", True)
    assert acc == "nvidia-h200-141gb"
    (d,) = kv005
    assert d.startswith(
        "warning kvlint.io/accelerator: h200 (NVIDIA H200) contradicts the pod's own scheduling"
    )
    assert "--cluster" in d and "node gpu-a100-80" in d


def test_without_exemptions_the_nodes_decide(tmp_path: Path) -> None:
    acc, kv005 = _run(tmp_path, "h200", False)
    assert acc == "nvidia-a100-sxm4-80gb"
    (d,) = kv005
    assert d.startswith("warning kvlint.io/accelerator: h200 (NVIDIA H200) is not applied")


def test_the_nodes_own_gpu_named_again_changes_nothing(tmp_path: Path) -> None:
    for exemptions in (True, False):
        acc, kv005 = _run(tmp_path, "a100-80gb", exemptions)
        assert (acc, kv005) == ("nvidia-a100-sxm4-80gb", [])


def test_where_no_fitting_node_names_a_gpu_the_annotation_does(tmp_path: Path) -> None:
    """A CPU-only pod fits the node cpu-1, whose labels name no GPU: the annotation names it, either way."""
    pod = """\
apiVersion: v1
kind: Pod
metadata:
  name: llama-anywhere
spec:
  nodeSelector: {kubernetes.io/hostname: cpu-1}
  containers:
    - name: vllm
      image: vllm/vllm-openai:v0.11.0
      args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32768"]
"""
    for exemptions in (True, False):
        acc, kv005 = _run(tmp_path, "l4", exemptions, pod)
        assert (acc, kv005) == ("nvidia-l4", [])
