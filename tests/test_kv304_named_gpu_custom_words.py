"""KV304 with a GPU named (kvlint.memory.compat.image_platform_mismatch) takes the same evidence of a build as KV304
without one (kvlint.engines.images.gpu_build_on_other_accelerator, fixB50): a vendor's published build or engine
tag suffix (kvlint.engines.images.published_build), or vLLM's --device (kvlint.engines.images.build_is_evidenced).
A platform word in a custom image's name was a KV304 error on a named NVIDIA GPU ("is an Ascend build ... placed on
NVIDIA L4") while the same pod without the nodeSelector was KV501's warning. Image names from the shared corpus
and the collected set (their sources: fixtures/collected/SOURCES)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
{selector}      containers:
      - name: engine
        image: {image}
        command: [{command}]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""
VLLM = '"vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"'
TGI = '"text-generation-launcher", "--model-id", "Qwen/Qwen2.5-7B-Instruct"'
NAMED = "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"


def _rules(image: str, command: str, named: bool) -> dict[str, list[str]]:
    text = POD.format(image=image, command=command, selector=NAMED if named else "")
    res = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    out: dict[str, list[str]] = {}
    for d in res.diagnostics:
        out.setdefault(d.rule, []).append(d.severity)
    return out


#: Custom images whose names hold a platform word: community or project builds, not a vendor's published one.
CUSTOM = [
    "ghcr.io/volcano-sh/kthena-engine:vllm-ascend_v0.10.1rc1_mooncake_v0.3.5",
    "openeuler/vllm-ascend:latest",
    "public.ecr.aws/agentic-ai-platforms-on-k8s/vllm-neuron:qwen3-8b-optimum-neuron",
    "public.ecr.aws/data-on-eks/neuron-sdk2.20-vllm0.5.0-neuron:v8",
    "image-registry.openshift-image-registry.svc:5000/gaudi-validation/vllm-workload:latest",
]


@pytest.mark.parametrize("image", CUSTOM)
def test_a_word_in_a_custom_name_is_the_same_warning_with_or_without_a_named_gpu(image: str) -> None:
    named, unnamed = _rules(image, VLLM, True), _rules(image, VLLM, False)
    assert "KV304" not in named, named
    assert named.get("KV501") == ["warning"] == unnamed.get("KV501"), (named, unnamed)
    assert "KV304" not in unnamed


@pytest.mark.parametrize(
    "image",
    [
        "nirmalsenthil/vllm-rocm",
        "registry.example.com/rocm-team/vllm:v0.8.5",
        "ghcr.io/amd-lab/vllm-openai:v0.8.5",
    ],
)
def test_a_rocm_word_in_a_custom_name_is_no_kv304_on_a_named_nvidia_gpu(image: str) -> None:
    named = _rules(image, VLLM, True)
    assert "KV304" not in named, named
    assert any(r.startswith("KV2") or r.startswith("KV1") for r in named), named  # planned on the L4


@pytest.mark.parametrize(
    ("image", "command"),
    [
        ("quay.io/ascend/vllm-ascend:v0.11.0rc1-a3", VLLM),
        ("ghcr.io/huggingface/tgi-gaudi:2.0.6", TGI),
        ("ghcr.io/huggingface/text-generation-inference:3.0.2-rocm", TGI),
        (
            "lmsysorg/sglang:v0.4.3.post2-rocm630",
            '"python3", "-m", "sglang.launch_server", "--model-path", "x/y"',
        ),
        ("rocm/vllm:rocm6.4.1_vllm_0.9.0.1_20250605", VLLM),
        (
            "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.13.0-neuronx-py312-sdk2.28.0-ubuntu24.04",
            VLLM,
        ),
        ("intel/vllm:0.10.0-xpu", VLLM),
        ("vllm/vllm-tpu:nightly", VLLM),
        (
            "registry.redhat.io/rhoai/odh-vllm-gaudi-rhel9@sha256:"
            "1041bb23d3078ad4767e77cf1996959e4ab9214730bbac657741891b4fb0bba9",
            VLLM,
        ),
        ("registry.example.com/team/vllm:v0.8.5", VLLM + ', "--device", "hpu"'),
    ],
)
def test_a_published_build_is_kv304_on_both_paths(image: str, command: str) -> None:
    assert _rules(image, command, True).get("KV304") == ["error"]
    assert _rules(image, command, False).get("KV304") == ["error"]
