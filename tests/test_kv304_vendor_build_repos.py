"""KV304 on a named GPU reads a ROCm or accelerator build from a vendor's published image only
(kvlint.engines.images.build_is_evidenced, 0.51): vendors' repositories it missed then were reported as KV501's
warning, where they had been KV304's error: Red Hat OpenShift AI's ``odh-vllm-rocm-rhel9`` (and its Gaudi twin on
quay.io/rhoai and registry.redhat.io/rhaii), its ``quay.io/modh/vllm:rhoai-X-rocm``/``-gaudi`` tags, Red Hat AI
Inference Server's TPU, Spyre, Neuron and Gaudi builds (``rhaiis/vllm-tpu-rhel9`` ...), and AMD's SGLang images
``rocm/sgl-dev``. A custom image's platform word is still no evidence."""

from __future__ import annotations

import pytest

from kvlint.engines.images import published_build
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: t}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: e
    image: {image}
    args: {args}
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
VLLM = '["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]'
SGLANG = '["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]'

VENDOR = [
    ("registry.redhat.io/rhoai/odh-vllm-rocm-rhel9:v2.25.9", VLLM),
    ("quay.io/rhoai/odh-vllm-rocm-rhel9:rhoai-3.4", VLLM),
    ("registry.redhat.io/rhaii/odh-vllm-rocm-rhel9:3.0", VLLM),
    ("quay.io/rhoai/odh-vllm-gaudi-rhel9:rhoai-3.4", VLLM),
    ("registry.redhat.io/rhaii/odh-vllm-gaudi-rhel9:3.0", VLLM),
    ("quay.io/modh/vllm:rhoai-2.25-rocm", VLLM),
    ("quay.io/modh/vllm:rhoai-2.25-gaudi", VLLM),
    ("rocm/sgl-dev:v0.4.6.post5-rocm630-mi30x", SGLANG),
    ("registry.redhat.io/rhaiis/vllm-tpu-rhel9:3.2.5", VLLM),
    ("registry.redhat.io/rhaiis/vllm-spyre-rhel9:3.3.0", VLLM),
    ("registry.redhat.io/rhaiis/vllm-neuron-rhel9:3.5.0", VLLM),
    ("registry.redhat.io/rhaiis/vllm-gaudi-rhel9:3.5.0", VLLM),
]


@pytest.mark.parametrize("selector", ["cloud.google.com/gke-accelerator: nvidia-l4", ""])
@pytest.mark.parametrize(("image", "args"), VENDOR)
def test_a_vendor_build_on_an_nvidia_gpu_is_kv304(image: str, args: str, selector: str) -> None:
    assert published_build(image)
    res = run_documents(
        load_text(POD.format(selector=selector, image=image, args=args), "d.yaml"), Options(allow_hub=False)
    )
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error"


@pytest.mark.parametrize(
    "image",
    [
        "quay.io/modh/vllm:rhoai-2.25-cuda",
        "quay.io/acme/odh-vllm-rocm-rhel9:1",
        "ghcr.io/acme/sgl-dev:rocm630",
    ],
)
def test_cuda_tags_and_other_owners_are_not_evidence(image: str) -> None:
    assert not published_build(image)
