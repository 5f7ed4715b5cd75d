"""A build for another device than the GPU vendor a pod's resource names, with no GPU model named: NVIDIA's device
plugin advertises ``nvidia.com/gpu`` on NVIDIA nodes only, AMD's ``amd.com/gpu`` on AMD nodes only, so a ROCm build
requesting ``nvidia.com/gpu`` finds no AMD GPU and never starts, as KV304 says when the GPU model is named. Before,
``rocm/vllm`` with ``nvidia.com/gpu`` got KV501 "cannot tell which GPU this pod lands on" and was planned on the
AMD Instinct fleet; ``vllm/vllm-openai`` with ``amd.com/gpu`` likewise on AMD GPUs; an Ascend or Intel GPU build
with ``nvidia.com/gpu`` got KV501 "capacity rules skipped" (a warning)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import sizing_of

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  selector: {{matchLabels: {{app: s}}}}
  template:
    metadata: {{labels: {{app: s}}}}
    spec:{selector}
      containers:
      - name: engine
        image: {image}
        command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
        resources: {{limits: {{{resource}: 1}}}}
"""


def _run(image: str, resource: str, selector: str = ""):  # type: ignore[no-untyped-def]
    text = POD.format(image=image, resource=resource, selector=selector)
    return run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize(
    ("image", "resource", "words"),
    [
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "nvidia.com/gpu", "ROCm build of vllm"),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "nvidia.com/mig-1g.10gb", "ROCm build of vllm"),
        ("vllm/vllm-openai:v0.10.1", "amd.com/gpu", "CUDA build of vllm"),
        ("quay.io/ascend/vllm-ascend:v0.9.1", "nvidia.com/gpu", "Ascend build of vllm"),
        ("vllm/vllm-tpu:nightly", "amd.com/gpu", "TPU build of vllm"),
    ],
)
def test_build_for_another_device_than_the_resource_is_kv304(image: str, resource: str, words: str) -> None:
    res = run_documents(
        load_text(POD.format(image=image, resource=resource, selector=""), "d.yaml"), Options(allow_hub=False)
    )
    rules = [d.rule for d in res.diagnostics]
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error" and words in kv304.message and f"requests {resource}" in kv304.message
    assert "KV501" not in rules, [d.message for d in res.diagnostics if d.rule == "KV501"]
    (c,) = [c for c in res.containers if c.serving is not None]
    assert not c.fleet and c.plan is None
    assert sizing_of(c) in ("built for another GPU", "not a CUDA/ROCm GPU")


@pytest.mark.parametrize(
    ("image", "resource"),
    [
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "amd.com/gpu"),
        ("vllm/vllm-openai:v0.10.1", "nvidia.com/gpu"),
        ("registry.example/team/llm:1", "amd.com/gpu"),  # a custom image: its build is not known (AMD fleet)
    ],
)
def test_matching_or_unknown_build_keeps_the_fleet(image: str, resource: str) -> None:
    res = _run(image, resource)
    assert "KV304" not in [d.rule for d in res.diagnostics]
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.fleet


@pytest.mark.parametrize(
    ("image", "resource", "vendor"),
    [
        ("registry.example/team/llm:1", "amd.com/gpu", "amd"),
        ("python:3.11", "amd.com/gpu", "amd"),
        ("registry.example/team/llm:1", "nvidia.com/gpu", "nvidia"),
    ],
)
def test_unknown_build_is_planned_on_the_resources_vendor(image: str, resource: str, vendor: str) -> None:
    """amd.com/gpu is advertised on AMD nodes only: an image whose build kvlint cannot read is planned on AMD
    GPUs there (was kvlint's default CUDA fleet, Tesla T4 to H200, where that pod never lands)."""
    res = _run(image, resource)
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.fleet and {e.accelerator.vendor for e in c.fleet} == {vendor}
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert ("ROCm fleet (AMD Instinct)" in kv501.message) == (vendor == "amd")


@pytest.mark.parametrize(
    "image",
    [
        "registry.example.com/npu-team/vllm:v0.8.5",
        "ghcr.io/xpu-lab/vllm-openai:v0.8.5",
        "ghcr.io/acme/tpu-migration/vllm-openai:v0.8.5",
        "ghcr.io/acme/vllm:v0.8.5-neuron-ready",
        "ghcr.io/acme/hpu-bench/vllm:0.8.5",
        "ghcr.io/amd-lab/vllm-openai:v0.8.5",
        "registry.example.com/rocm-team/vllm:v0.8.5",
    ],
)
def test_a_word_in_a_custom_images_name_is_no_kv304(image: str) -> None:
    """A platform word in a custom image's namespace, repository or tag is what its owner called it, not evidence
    of the build: no KV304 error (it blocks deploys), a KV501 warning as before 0.50's change (the Ascend, XPU,
    TPU and Neuron images above were KV304's "is an Ascend build ..." errors)."""
    res = _run(image, "nvidia.com/gpu")
    rules = [d.rule for d in res.diagnostics]
    assert "KV304" not in rules, [d.message for d in res.diagnostics if d.rule == "KV304"]
    assert [d.severity for d in res.diagnostics if d.rule == "KV501"] == ["warning"]


CMD_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  template:
    spec:
      containers:
      - name: engine
        image: {image}
        args: {args}
        resources: {{limits: {{{resource}: 1}}}}
"""
_VLLM_ARGS = '["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]'
_TGI_ARGS = '["--model-id", "Qwen/Qwen2.5-7B-Instruct"]'
_SGLANG_ARGS = '["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"]'


@pytest.mark.parametrize(
    ("image", "args", "resource"),
    [
        ("ghcr.io/huggingface/text-generation-inference:3.3.5-neuron", _TGI_ARGS, "nvidia.com/gpu"),
        ("ghcr.io/huggingface/text-generation-inference:3.3.5-gaudi", _TGI_ARGS, "amd.com/gpu"),
        ("ghcr.io/huggingface/text-generation-inference:2.4.1-rocm", _TGI_ARGS, "nvidia.com/gpu"),
        ("ghcr.io/huggingface/text-generation-inference:3.0.0-intel-xpu", _TGI_ARGS, "nvidia.com/gpu"),
        ("lmsysorg/sglang:v0.5.4-cann8.3.rc1-a3", _SGLANG_ARGS, "nvidia.com/gpu"),
        ("lmsysorg/sglang:v0.4.6.post5-rocm630", _SGLANG_ARGS, "nvidia.com/gpu"),
        ("quay.io/ascend/vllm-ascend:v0.9.1", _VLLM_ARGS, "amd.com/gpu"),
        (
            "vault.habana.ai/gaudi-docker/1.21.0/ubuntu22.04/habanalabs/pytorch-installer-2.6.0:latest",
            _VLLM_ARGS,
            "nvidia.com/gpu",
        ),
        (
            "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1-neuronx-py310-sdk2.25.0-ubuntu22.04",
            _VLLM_ARGS,
            "nvidia.com/gpu",
        ),
        ("intel/vllm:0.10.2-xpu", _VLLM_ARGS, "nvidia.com/gpu"),
        ("opea/vllm-gaudi:1.2", _VLLM_ARGS, "nvidia.com/gpu"),
        ("ghcr.io/llm-d/llm-d-rocm:v0.9.0", _VLLM_ARGS, "nvidia.com/gpu"),
        (
            "registry.example.com/team/vllm:v0.8.5",
            '["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--device", "hpu"]',
            "nvidia.com/gpu",
        ),
    ],
)
def test_a_published_build_for_another_device_stays_kv304(image: str, args: str, resource: str) -> None:
    """The engines' and vendors' own builds for another device (kvlint.engines.images.published_build), and vLLM's
    ``--device``, are still KV304 errors on an NVIDIA or AMD GPU resource."""
    text = CMD_POD.format(image=image, args=args, resource=resource)
    res = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    kv304 = [d for d in res.diagnostics if d.rule == "KV304"]
    assert [d.severity for d in kv304] == ["error"], [(d.rule, d.message) for d in res.diagnostics]
    assert f"requests {resource}" in kv304[0].message
