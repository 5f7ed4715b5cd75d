"""AWS's vLLM Deep Learning Container for Graviton, repository ``vllm-arm64`` (the DLC registries and
``public.ecr.aws/deep-learning-containers/vllm-arm64``), tags its releases with the vLLM release it builds
(aws/deep-learning-containers@2e6fa46896 vllm/buildspec-arm64.yml ``version: "0.11.0"`` and Dockerfile.arm64
``git checkout v0.11.0``), as its x86_64 ``vllm`` repository does: kvlint read no release from it and planned the
newest vLLM. Its series tags (``0.10-gpu-py312-ec2``) move as the x86_64 ones do (kvlint.engines.images
.bare_vllm_published, aws_vllm_series)."""

from __future__ import annotations

import pytest

from kvlint.engines.images import aws_vllm_series, engine_release
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

DLC = "763104351884.dkr.ecr.us-west-2.amazonaws.com"


@pytest.mark.parametrize(
    ("image", "release"),
    [
        (f"{DLC}/vllm-arm64:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2", "0.10.2"),
        (
            "public.ecr.aws/deep-learning-containers/vllm-arm64:0.11.0-gpu-py312-cu129-ubuntu22.04-ec2",
            "0.11.0",
        ),
        # another account or publisher: its own tags
        ("111111111111.dkr.ecr.us-west-2.amazonaws.com/vllm-arm64:0.10.2-gpu-py312-ec2", None),
        ("public.ecr.aws/someone/vllm-arm64:0.10.2", None),
        ("myorg/vllm-arm64:1.0", None),
    ],
)
def test_the_arm64_dlc_tag_is_the_vllm_release(image: str, release: str | None) -> None:
    assert engine_release(image, "vllm", None) == release


def test_the_arm64_series_tag_moves() -> None:
    image = f"{DLC}/vllm-arm64:0.10-gpu-py312-cu129-ubuntu22.04-ec2-v1"
    assert aws_vllm_series(image) == "0.10" and engine_release(image, "vllm", None) is None
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: vllm\n"
        f"    image: {image}\n    args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (kv208,) = [d.message for d in res.diagnostics if d.rule == "KV208"]
    assert "AWS's series tag for vLLM 0.10" in kv208, kv208
