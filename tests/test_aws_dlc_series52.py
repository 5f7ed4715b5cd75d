"""AWS's vLLM Deep Learning Containers (aws/deep-learning-containers vllm/CHANGELOG.md): the tag
``X.Y.Z-gpu-py312-...`` is vLLM's release X.Y.Z, but the series tag ``X.Y-gpu-py312-ec2`` moves to each X.Y release
AWS publishes (``0.9-gpu-py312-ec2`` carried 0.9.0.1, then 0.9.1, then 0.9.2), so it names no one release
(kvlint.engines.images.aws_vllm_series)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.images import engine_version
from kvlint.options import Options
from kvlint.pipeline import run_check


@pytest.mark.parametrize(
    "image",
    [
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.9-gpu-py312-ec2",
        "public.ecr.aws/deep-learning-containers/vllm:0.11-gpu-py312-ec2",
    ],
)
def test_the_series_tag_names_no_one_release(tmp_path: Path, image: str) -> None:
    assert engine_version(image) is None, image
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        f"    image: {image}\n    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '8192']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in r.diagnostics if d.rule == "KV208"]
    series = image.rsplit(":", 1)[1].split("-")[0]
    assert f"AWS's series tag for vLLM {series}" in d.message, d.message
    assert d.severity != "info", d


def test_a_full_release_tag_is_that_release() -> None:
    assert (
        engine_version(
            "763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:0.9.2-gpu-py312-cu128-ubuntu22.04-ec2"
        )
        == "0.9.2"
    )
    assert engine_version("public.ecr.aws/deep-learning-containers/vllm:0.14.0-gpu-py312-ec2") == "0.14.0"
