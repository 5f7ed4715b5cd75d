"""KV201 (a --max-model-len / --context-length above the model's derived limit) stops vLLM and SGLang while they
build their model config, before any weight is loaded: the capacity rules must not run after it, or they offer a
remedy that still fails KV201 (a --max-model-len that fits the KV cache but is above the model's limit)."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.rules.catalog import load_catalog

POD = """apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
  containers:
  - name: c
    image: vllm/vllm-openai:v0.10.1
    args: [--model, microsoft/phi-2, --max-model-len, "32768", --gpu-memory-utilization, "0.5"]
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_kv201_is_a_before_loading_rule() -> None:
    assert load_catalog()["KV201"].before_loading


def test_no_capacity_remedy_after_kv201(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD)
    rules = {d.rule: d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics}
    assert "KV201" in rules  # 32768 > phi-2's n_positions 2048
    # KV103 used to say "--max-model-len 13312 fits", which vLLM refuses just the same (13312 > 2048)
    assert not {r for r in rules if r.startswith("KV1")}


def test_kv201_names_the_assumed_release_when_the_tag_names_none(tmp_path: Path) -> None:
    """An image tag naming no release (``latest``) left an empty version in KV201's message ("vLLM  derives");
    the message now names the release kvlint assumed, the one KV208 reports and the derivation used."""
    from kvlint.memory.versions import NEWEST_VLLM

    path = tmp_path / "pod.yaml"
    path.write_text(POD.replace("v0.10.1", "latest"))
    kv201 = [d for d in run_check([str(path)], Options(allow_hub=False)).diagnostics if d.rule == "KV201"]
    assert len(kv201) == 1
    assert "  " not in kv201[0].message
    assert f"vLLM {NEWEST_VLLM} (assumed) derives" in kv201[0].message
