"""A KubeAI chart profile whose GPU kvlint assumes says so where the finding names the GPU. The chart's
``nvidia-gpu-rtx4070-8gb`` selects no node (substratusai/kubeai charts/kubeai/values.yaml@00218190
``resourceProfiles``); kvlint reads it as the GeForce RTX 4070 Laptop GPU (8188 MiB, the 8 GB part; the desktop
RTX 4070 has 12 GB), an assumption the evidence line did not mention, so a KV101 error on "NVIDIA GeForce RTX
4070 Laptop GPU" read as if the Model had named that part."""

from __future__ import annotations

from kvlint.accelerators import workload_placement
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.workloads import find_workloads

MODEL = """\
apiVersion: kubeai.org/v1
kind: Model
metadata: {name: qwen}
spec:
  features: [TextGeneration]
  url: hf://Qwen/Qwen2.5-7B-Instruct
  engine: VLLM
  resourceProfile: PROFILE:1
  args:
  - --max-model-len=32768
"""


def _how(profile: str) -> str:
    (w,) = find_workloads(load_text(MODEL.replace("PROFILE", profile), "m.yaml").documents)
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.accelerator is not None
    return p.how


def test_rtx4070_8gb_profile_says_the_gpu_is_assumed() -> None:
    how = _how("nvidia-gpu-rtx4070-8gb")
    assert "-> nvidia-geforce-rtx-4070-laptop; assumed:" in how, how
    assert "selects no node" in how


def test_a_profile_the_chart_selects_is_not_called_assumed() -> None:
    assert "assumed" not in _how("nvidia-gpu-l4")


def test_the_finding_on_the_assumed_gpu_shows_it() -> None:
    text = MODEL.replace("PROFILE", "nvidia-gpu-rtx4070-8gb")
    r = run_documents(load_text(text, "m.yaml"), Options(allow_hub=False))
    (d,) = [d for d in r.diagnostics if d.rule == "KV101"]  # 7B bf16 weights (14 GiB) on an 8 GB GPU
    assert "NVIDIA GeForce RTX 4070 Laptop GPU" in d.message
    assert "-> nvidia-geforce-rtx-4070-laptop; assumed:" in d.message, d.message
