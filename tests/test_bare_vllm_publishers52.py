"""A repository named bare ``vllm`` pins a vLLM release in its tag only where its publisher says the tag is vLLM's
release (kvlint.engines.images.bare_vllm_published): Intel's ``intel/vllm`` (intel/ai-containers vllm/0.10.2-xpu.md,
"based on v0.10.2") and AWS's vLLM Deep Learning Containers (aws/deep-learning-containers vllm/CHANGELOG.md:
"vllm/vllm-openai version vX.Y.Z" per release). Any other publisher's ``vllm`` (``myorg/vllm:1.0``) names its own
product: kvlint read its tag as vLLM 1.0 (KV208 "newer than the releases kvlint models", KV205 errors turned into
"assumed" warnings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.images import bare_vllm_published, engine_release
from kvlint.options import Options
from kvlint.pipeline import run_check


@pytest.mark.parametrize(
    ("image", "release"),
    [
        ("intel/vllm:0.10.2-xpu", "0.10.2"),
        ("docker.io/intel/vllm:0.17.0-xpu", "0.17.0"),
        (
            "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2",
            "0.10.2",
        ),
        ("public.ecr.aws/deep-learning-containers/vllm:0.11.2-gpu-py312-ec2", "0.11.2"),
    ],
)
def test_a_publisher_that_tags_vllms_release(image: str, release: str) -> None:
    assert bare_vllm_published(image)
    assert engine_release(image, "vllm", None) == release


@pytest.mark.parametrize(
    "image",
    [
        "myorg/vllm:1.0",
        "registry.example.com/team/vllm:v0.8.5",
        # a customer's own ECR account, another registry's intel namespace
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:0.9.2",
        "quay.io/intel/vllm:0.10.0",
    ],
)
def test_another_publishers_vllm_tag_is_its_own(image: str) -> None:
    assert not bare_vllm_published(image)
    assert engine_release(image, "vllm", None) is None
    assert engine_release(image, "vllm", "0.8.5") == "0.8.5"  # --engine-version fills it in


def test_kv208_says_the_tag_is_the_images_own(tmp_path: Path) -> None:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: e\n"
        "    image: myorg/vllm:1.0\n"
        "    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    assert cr.serving.version is None
    (kv208,) = [d for d in r.diagnostics if d.rule == "KV208"]
    assert kv208.severity == "info", kv208
    assert "its tag 1.0 is read as that image's own version, not as a vLLM release" in kv208.message
    assert "vLLM 1.0" not in kv208.message


def test_a_word_tag_still_names_no_release(tmp_path: Path) -> None:
    # quay.io/opendatahub/vllm:fast (fixtures/collected): a word, not a version of the image's own
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: e\n"
        "    image: quay.io/opendatahub/vllm:fast\n"
        "    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (kv208,) = [d for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV208"]
    assert "the tag fast names no vLLM release kvlint can read" in kv208.message, kv208.message
