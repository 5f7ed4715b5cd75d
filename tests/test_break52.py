"""break52: hostile and odd inputs to this session's new paths (MIG slices in the plan, AMD partitions, ...).

A MIG slice whose profile no MIG table of the catalogue holds (``nvidia.com/mig-1g.11gb`` on an H100, or GKE's
partition label with such a value) was planned on the whole board's memory (79.20 GiB for an H100 80GB), up to
seven times what the slice the engine sees holds: a 70B model "needs --tensor-parallel-size 4" on a 1g slice.
It is now not sized, KV501 saying why; a known profile is sized on its slice as before, and ``--gpu-memory``
still gives the memory.
"""

from __future__ import annotations

from typing import Any

from kvlint.accelerators import registry as cat
from kvlint.accelerators import resolve_placement
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

H100 = {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}


def _pod(limits: dict[str, Any], selector: dict[str, str] = H100) -> dict[str, Any]:
    return {"nodeSelector": dict(selector), "containers": [{"name": "c", "resources": {"limits": limits}}]}


def test_an_unknown_mig_profile_is_not_sized_on_the_whole_gpu() -> None:
    pod = _pod({"nvidia.com/mig-1g.11gb": 1})
    assert cat.mig_gpus("1g.11gb") == []  # no MIG table holds it
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes is None, p.how
    assert p.undecided and "1g.11gb" in "; ".join(p.undecided)


def test_an_unknown_gke_partition_is_not_sized_on_the_whole_gpu() -> None:
    pod = _pod({"nvidia.com/gpu": 1}, {**H100, "cloud.google.com/gke-gpu-partition-size": "2g.33gb"})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.memory_bytes is None, p.how


def test_a_known_profile_and_gpu_memory_are_still_sized() -> None:
    pod = _pod({"nvidia.com/mig-1g.10gb": 1})
    p = resolve_placement(pod, pod["containers"][0], {})
    assert p.accelerator is not None and p.memory_bytes == cat._cat().mig[p.accelerator.id]["1g.10gb"].memory_bytes
    pod = _pod({"nvidia.com/mig-1g.11gb": 1})
    p = resolve_placement(pod, pod["containers"][0], {}, gpu_memory_bytes=11 * 2**30)
    assert p.memory_bytes == 11 * 2**30, p.how


def test_check_reports_kv501_not_a_whole_gpu_plan() -> None:
    text = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: unk}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, meta-llama/Llama-3.1-70B-Instruct, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/mig-1g.11gb: 1}}
"""
    res = run_documents(load_text(text, "unk.yaml"), Options(allow_hub=False))
    rules = {d.rule for d in res.diagnostics}
    assert "KV501" in rules and "KV101" not in rules, [(d.rule, d.message) for d in res.diagnostics]
    assert not any("79.20 GiB" in d.message for d in res.diagnostics)
