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
        # vllm-spyre (IBM Spyre cards): its guide's image and Open Data Hub's runtime image were read as CUDA builds
        # and planned on the L4 (tidy49)
        ("quay.io/ibm-aiu/vllm-spyre:latest.amd64", VLLM, "an IBM Spyre build of vllm"),
        ("quay.io/opendatahub/vllm-spyre:v0.9.0", VLLM, "an IBM Spyre build of vllm"),
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
    "image",
    [
        "registry.example/throughput-vllm:0.11.0",
        "registry.example/output/vllm:0.11.0",
        "ghcr.io/inputlabs/vllm-openai:v0.11.0",
    ],
)
def test_a_platform_word_inside_another_word_is_not_a_build(image: str) -> None:
    result = _run(image)
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    assert [d for d in result.diagnostics if d.rule == "KV103"]
    # nor a build for anything else: with no GPU named it is planned on the fleet as the CUDA image it is
    # (``throughput`` was read as an Intel Gaudi build, ``output`` as a TPU one, ``input`` as an NPU one: KV501
    # "capacity rules skipped", not sized)
    result = _run(image, selector="")
    assert summarise(result).not_sized == {}, result.diagnostics
    (cr,) = result.containers
    assert cr.fleet


def test_an_ascend_build_on_its_npu_is_not_kv304() -> None:
    result = _run("quay.io/ascend/vllm-ascend:v0.11.0rc1", selector="", resource="huawei.com/Ascend910")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}


#: SGLang's own Ascend images, tagged ``v<version>-cann<CANN>-<910b|a3>`` (sgl-project/sglang
#: ``.github/workflows/release-docker-npu.yml``@024691d4590c; the nightly ``main-cann8.3.rc1-a3``): no ``npu`` or
#: ``ascend`` in the name, only the CANN toolkit's version
SGLANG_NPU = '"python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--attention-backend", "ascend"'


@pytest.mark.parametrize(
    "image", ["lmsysorg/sglang:v0.5.4-cann8.3.rc1-a3", "lmsysorg/sglang:main-cann8.3.rc1-910b"]
)
def test_sglangs_cann_images_are_ascend_builds(image: str) -> None:
    # on an NVIDIA node: KV304, not a CUDA plan on the L4
    result = _run(image, SGLANG_NPU)
    kv304 = [d for d in result.diagnostics if d.rule == "KV304"]
    assert len(kv304) == 1 and "is an Ascend build of sglang" in kv304[0].message, result.diagnostics
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}
    # on its NPUs: not sized, and not planned on kvlint's (NVIDIA) fleet either
    result = _run(image, SGLANG_NPU, selector="", resource="huawei.com/Ascend910")
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}, result.diagnostics
    assert not [d for d in result.diagnostics if d.rule == "KV304"]


def test_cann_inside_a_word_is_not_an_ascend_build() -> None:
    result = _run("registry.example/cannon/vllm-openai:v0.11.0")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    assert [d for d in result.diagnostics if d.rule == "KV103"]


@pytest.mark.parametrize(
    ("resource", "shown"),
    [
        ("huawei.com/Ascend910", "an Ascend accelerator"),
        ("google.com/tpu", "a TPU accelerator"),
        ("habana.ai/gaudi", "an Intel Gaudi accelerator"),
    ],
)
def test_a_gpu_image_requesting_only_another_accelerator_is_kv304_and_not_planned_on_the_fleet(
    resource: str, shown: str
) -> None:
    """vLLM's CUDA image with only an accelerator resource of another kind and no GPU named: the pod lands on that
    accelerator's node, where the CUDA build finds no GPU. kvlint planned it on its default NVIDIA fleet (a KV501
    warning with a fit per GPU); with Ascend NPUs counted as accelerators, SGLang and vLLM CUDA images asking for
    ``huawei.com/Ascend910`` were."""
    result = _run("vllm/vllm-openai:v0.11.0", selector="", resource=resource)
    kv304 = [d for d in result.diagnostics if d.rule == "KV304"]
    assert len(kv304) == 1 and kv304[0].severity == "error", result.diagnostics
    assert f"is a CUDA build of vllm but the container requests {resource} ({shown})" in kv304[0].message
    assert not [d for d in result.diagnostics if d.rule == "KV501"], result.diagnostics
    (cr,) = result.containers
    assert not cr.fleet
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}


def test_the_same_image_requesting_a_gpu_is_still_planned_on_the_fleet() -> None:
    result = _run("vllm/vllm-openai:v0.11.0", selector="")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    (cr,) = result.containers
    assert cr.fleet


def test_kv208_says_the_memory_rules_were_skipped_for_a_gpu_image_on_another_accelerator() -> None:
    # the untagged image's assumed release only read the command: no GPU memory rule ran (KV304 says why)
    result = _run("vllm/vllm-openai", selector="", resource="google.com/tpu")
    (kv208,) = [d for d in result.diagnostics if d.rule == "KV208"]
    text = kv208.message + " " + " ".join(kv208.details or ())
    assert "its GPU memory rules were skipped on the TPU node it requests (google.com/tpu) (KV304)" in text, (
        text
    )


def test_the_spyre_guides_deployment_is_not_sized_and_named_for_its_cards() -> None:
    # vllm-spyre's own Kubernetes guide (fixtures/accelerators/vllm-spyre-k8s.yaml): not planned on a CUDA GPU
    from pathlib import Path

    text = (
        Path(__file__).resolve().parents[1] / "fixtures" / "accelerators" / "vllm-spyre-k8s.yaml"
    ).read_text()
    result = run_documents(load_text(text, "deploy.yaml"), Options(allow_hub=False))
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}, result.diagnostics
    # on an NVIDIA GPU, KV304's remedy names the Spyre card's resource
    (kv304,) = [d for d in _run("quay.io/ibm-aiu/vllm-spyre:latest.amd64").diagnostics if d.rule == "KV304"]
    assert "request the IBM Spyre accelerator the image is built for (ibm.com/aiu_pf)" in (kv304.fix or "")


#: TGI's non-CUDA images as its build workflow tags them (huggingface/text-generation-inference
#: ``.github/workflows/build.yaml``: ``-intel`` from 480d3b33, v2.1.0-v2.2.0 and ``latest-intel``, then
#: ``-intel-xpu``, ``-intel-cpu``, ``-gaudi``), each with the platform it is read as.
TGI_INTEL_TAGS = [
    ("ghcr.io/huggingface/text-generation-inference:latest-intel", "xpu"),
    ("ghcr.io/huggingface/text-generation-inference:2.2.0-intel", "xpu"),
    ("ghcr.io/huggingface/text-generation-inference:latest-intel-xpu", "xpu"),
    ("ghcr.io/huggingface/text-generation-inference:3.3.5-intel-cpu", "cpu"),
    ("ghcr.io/huggingface/text-generation-inference:latest-gaudi", "gaudi"),
]


@pytest.mark.parametrize(("image", "platform"), TGI_INTEL_TAGS)
def test_tgis_intel_tags_on_an_intel_gpu_are_not_kv304(image: str, platform: str) -> None:
    """Intel's TGI chart (fixtures/collected/trees/intel-ai-containers-tgi) runs ``latest-intel`` on
    ``gpu.intel.com/i915``: it was a KV304 error calling the image a CUDA build (newuser49)."""
    from kvlint.engines.images import image_platform

    assert image_platform(image) == platform
    result = _run(image, TGI, selector="", resource="gpu.intel.com/i915")
    assert not [d for d in result.diagnostics if d.rule == "KV304"], result.diagnostics
    assert summarise(result).not_sized == {"not a CUDA/ROCm GPU": 1}, result.diagnostics


@pytest.mark.parametrize("image", ["ghcr.io/huggingface/text-generation-inference:latest-intel"])
def test_tgis_intel_xpu_tag_on_an_nvidia_gpu_is_kv304(image: str) -> None:
    (kv304,) = [d for d in _run(image, TGI).diagnostics if d.rule == "KV304"]
    assert "is an Intel XPU build of tgi but the pod is placed on NVIDIA L4" in kv304.message, kv304


@pytest.mark.parametrize(
    "image",
    [
        # ``intel`` in a repository or namespace, or inside a word of the tag, is not the build's tag
        "registry.example/intel/text-generation-inference:3.0.1",
        "ghcr.io/huggingface/text-generation-inference:3.0.1-intelligent",
    ],
)
def test_intel_outside_a_tag_word_is_not_an_xpu_build(image: str) -> None:
    from kvlint.engines.images import image_platform

    assert image_platform(image) == "cuda"


def test_two_words_in_a_custom_name_are_one_build_and_no_kv304() -> None:
    """Two platform words: the one the platform reader takes (it takes them in one order, tpu before npu); a second
    matcher took the leftmost (npu), disagreed and made it no build at all (tidy49). The repository is a custom one,
    so the words are no evidence of the build (tests/test_kv304_named_gpu_custom_words.py): KV501's warning names
    the TPU build, KV304 says nothing."""
    result = _run("registry.example/npu-lab/vllm-tpu:nightly")
    assert not [d for d in result.diagnostics if d.rule == "KV304"]
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert kv501.severity == "warning" and "is a TPU build of vllm" in kv501.message, kv501.message
