"""A serving container that requests no GPU (fixtures/collected: deepaksatna's privileged vLLM Pod with
``--tensor-parallel-size 4`` and NVIDIA_VISIBLE_DEVICES=all, Angel-FulFilment's Thor Deployment behind
``runtimeClassName: nvidia``): KV405's and KV501's remedies give the one resource line that would let kvlint size
it, with the GPU count the engine's own layout uses (tensor x pipeline), where they said "N" / "the number of GPUs
the engine uses"."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
%s      containers:
      - name: engine
        image: %s
        args: [%s]
        resources: {limits: {cpu: "8"}}
"""


def _fixes(image: str, args: str, spec: str = "") -> dict[str, str]:
    result = run_documents(load_text(_MANIFEST % (spec, image, args), "d.yaml"), Options(allow_hub=False))
    return {d.rule: d.fix or "" for d in result.diagnostics if d.rule in ("KV405", "KV501")}


@pytest.mark.parametrize(
    ("image", "args", "tp", "pp"),
    [
        ("vllm/vllm-openai:v0.10.1", "Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '4'", 4, 1),
        (
            "vllm/vllm-openai:v0.10.1",
            "Qwen/Qwen2.5-7B-Instruct, --tensor-parallel-size, '4', --pipeline-parallel-size, '2'",
            4,
            2,
        ),
        ("lmsysorg/sglang:v0.5.5", "--model-path, Qwen/Qwen2.5-7B-Instruct, --tp-size, '2'", 2, 1),
    ],
)
def test_the_remedy_requests_the_gpus_the_engine_layout_uses(image: str, args: str, tp: int, pp: int) -> None:
    image_args = args if "sglang" not in image else "python3, -m, sglang.launch_server, " + args
    if "sglang" in image:
        text = _MANIFEST.replace("        args: [%s]", "        command: [%s]")
        result = run_documents(load_text(text % ("", image, image_args), "d.yaml"), Options(allow_hub=False))
        fixes = {d.rule: d.fix or "" for d in result.diagnostics if d.rule in ("KV405", "KV501")}
    else:
        fixes = _fixes(image, image_args)
    n = tp * pp  # one GPU per worker of the tensor x pipeline layout
    assert f"nvidia.com/gpu']: {n}, the GPUs the engine uses" in fixes["KV405"], fixes
    assert f"resources.limits: {{nvidia.com/gpu: {n}}}" in fixes["KV501"], fixes
    assert "then name the GPU type" in fixes["KV501"], fixes


def test_a_layout_the_command_does_not_fix_keeps_the_placeholder() -> None:
    """TGI without --num-shard shards over the GPUs it sees, whatever the pod requests: no count to give."""
    fixes = _fixes(
        "ghcr.io/huggingface/text-generation-inference:3.3.4", "--model-id, Qwen/Qwen2.5-7B-Instruct"
    )
    assert "the number of GPUs the engine uses" in fixes["KV405"], fixes
    assert "{nvidia.com/gpu: N}" in fixes["KV501"], fixes
