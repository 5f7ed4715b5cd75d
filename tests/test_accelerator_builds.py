"""An engine image built for another accelerator (Ascend, TPU, Gaudi, Neuron, Intel GPU) on a pod that names an
NVIDIA or AMD GPU: KV304 says the image does not run there, and the container is not sized on that GPU (it was
planned as a CUDA start-up: a KV103 on an NVIDIA L4 for vllm-ascend). A word inside another word of the
reference (``output``, ``throughput``) is not such a build."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
      nodeSelector: {{{selector}}}
      containers:
      - name: engine
        image: {image}
        command: [{command}]
        resources: {{limits: {{{resource}: "1"}}}}
"""
VLLM = '"vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"'
TGI = '"text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-total-tokens", "131072"'
L4 = "nvidia.com/gpu.product: NVIDIA-L4"


def _run(image: str, command: str = VLLM, selector: str = L4, resource: str = "nvidia.com/gpu"):  # type: ignore[no-untyped-def]
    text = MANIFEST.format(image=image, command=command, selector=selector, resource=resource)
    return run_documents(load_text(text, "deploy.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize(
    ("image", "command", "shown"),
    [
        ("quay.io/ascend/vllm-ascend:v0.11.0rc1", VLLM, "an Ascend build of vllm"),
        ("vllm/vllm-tpu:nightly", VLLM, "a TPU build of vllm"),
        ("opea/vllm-gaudi:1.2", VLLM, "an Intel Gaudi build of vllm"),
        ("ghcr.io/huggingface/tgi-gaudi:2.3.1", TGI, "an Intel Gaudi build of tgi"),
        ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1", VLLM, "an AWS Neuron build of vllm"),
    ],
)
def test_accelerator_build_on_an_nvidia_gpu_is_kv304_and_not_sized(
    image: str, command: str, shown: str
) -> None:
    result = _run(image, command)
    kv304 = [d for d in result.diagnostics if d.rule == "KV304"]
    assert len(kv304) == 1 and kv304[0].severity == "error", result.diagnostics
    assert f"is {shown} but the pod is placed on NVIDIA L4" in kv304[0].message
    # no plan on the L4: no capacity finding, no "could not size" either, and the summary says why
    assert not [d for d in result.diagnostics if d.rule.startswith("KV1") or d.rule == "KV502"], (
        result.diagnostics
    )
    summary = summarise(result)
    assert summary.not_sized == {"not a CUDA/ROCm GPU": 1}, summary


def test_the_cuda_image_on_the_same_pod_is_sized() -> None:
    # the control: the same pod with the engine's CUDA image is planned on the L4 (and its 128k context fails)
    result = _run("vllm/vllm-openai:v0.11.0")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    assert [d for d in result.diagnostics if d.rule == "KV103"]
    assert summarise(result).not_sized == {}


@pytest.mark.parametrize(
    "image", ["registry.example/throughput-vllm:0.11.0", "registry.example/output/vllm:0.11.0"]
)
def test_a_platform_word_inside_another_word_is_not_a_build(image: str) -> None:
    result = _run(image)
    assert not [d for d in result.diagnostics if d.rule == "KV304"]


def test_an_ascend_build_on_its_npu_is_not_kv304() -> None:
    result = _run("quay.io/ascend/vllm-ascend:v0.11.0rc1", selector="", resource="huawei.com/Ascend910")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}
