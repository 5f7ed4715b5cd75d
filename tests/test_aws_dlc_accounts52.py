"""AWS's vLLM Deep Learning Containers registries are the DLC account of each region (aws/deep-learning-containers
available_images.md: 763104351884 in most, another account in af-south-1, ap-east-1, ap-northeast-3,
ap-southeast-3, eu-south-1, me-south-1, me-central-1, and 727897471807 in China's amazonaws.com.cn), not
763104351884 everywhere (kvlint.engines.images.bare_vllm_published)."""

from __future__ import annotations

import pytest

from kvlint.engines.images import bare_vllm_published, engine_version


@pytest.mark.parametrize(
    "image",
    [
        "871362719292.dkr.ecr.ap-east-1.amazonaws.com/vllm:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2",
        "626614931356.dkr.ecr.af-south-1.amazonaws.com/vllm:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2",
        "727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/vllm:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2",
        "763104351884.dkr.ecr.eu-west-1.amazonaws.com/vllm:0.10.2-gpu-py312-cu129-ubuntu22.04-ec2",
    ],
)
def test_each_regions_dlc_account_is_aws(image: str) -> None:
    assert bare_vllm_published(image), image
    assert engine_version(image) == "0.10.2", image


@pytest.mark.parametrize(
    "image",
    [
        # an account that is not the DLC account of that region (nor of any): not AWS's DLC
        "871362719292.dkr.ecr.us-east-1.amazonaws.com/vllm:0.10.2-gpu-py312-ec2",
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/vllm:0.10.2-gpu-py312-ec2",
        "763104351884.dkr.ecr.cn-north-1.amazonaws.com.cn/vllm:0.10.2-gpu-py312-ec2",
    ],
)
def test_other_accounts_are_not_aws_dlc(image: str) -> None:
    assert not bare_vllm_published(image), image
