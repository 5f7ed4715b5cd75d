"""KV403/KV404 describe vLLM's and TGI's layout under the spelling the manifest wrote (``-tp 4``,
``--tensor_parallel_size 4``, ``NUM_SHARD=2``), as SGLang's texts already do (``--tp 4``): vLLM's argparse takes
``-tp`` and the underscore spelling for ``--tensor-parallel-size`` (kvlint/engines/vllm_flags_data.py), TGI's clap
takes ``--num-shard`` or its ``NUM_SHARD`` variable (launcher/src/main.rs ``#[clap(long, env)]``)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  selector: {{matchLabels: {{app: x}}}}
  template:
    metadata: {{labels: {{app: x}}}}
    spec:
      containers:
      - name: e
        image: {image}
        args: {args}
        env: {env}
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _messages(image: str, args: str, env: str = "[]") -> dict[str, str]:
    res = run_documents(
        load_text(POD.format(image=image, args=args, env=env), "d.yaml"), Options(allow_hub=False)
    )
    return {d.rule: d.message for d in res.diagnostics if d.rule in ("KV403", "KV404")}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ('["--model", "Qwen/Qwen2.5-7B-Instruct", "-tp", "2"]', "-tp 2 needs 2 GPUs"),
        ('["--model", "Qwen/Qwen2.5-7B-Instruct", "-tp=2"]', "-tp 2 needs 2 GPUs"),
        (
            '["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor_parallel_size", "2"]',
            "--tensor_parallel_size 2 needs",
        ),
        (
            '["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size=2"]',
            "--tensor-parallel-size 2 needs",
        ),
        (
            '["--model", "Qwen/Qwen2.5-7B-Instruct", "-pp", "2", "--data-parallel-size-local", "2"]',
            "tensor-parallel-size 1 x -pp 2 x --data-parallel-size-local 2 needs 4 GPUs",
        ),
    ],
)
def test_vllm_layout_quotes_the_option_as_written(args: str, said: str) -> None:
    msg = _messages("vllm/vllm-openai:v0.11.0", args)["KV403"]
    assert msg.startswith(said), msg


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (
            '["--model-id", "Qwen/Qwen2.5-7B-Instruct"]',
            '[{name: NUM_SHARD, value: "2"}]',
            "NUM_SHARD=2 needs 2",
        ),
        ('["--model-id", "Qwen/Qwen2.5-7B-Instruct", "--num-shard", "2"]', "[]", "--num-shard 2 needs 2"),
        # the command line wins over the variable (clap), and is what the text quotes
        (
            '["--model-id", "Qwen/Qwen2.5-7B-Instruct", "--num-shard", "2"]',
            '[{name: NUM_SHARD, value: "4"}]',
            "--num-shard 2 needs 2",
        ),
    ],
)
def test_tgi_layout_quotes_the_option_or_variable_as_written(args: str, env: str, said: str) -> None:
    msg = _messages("ghcr.io/huggingface/text-generation-inference:3.0.1", args, env)["KV403"]
    assert msg.startswith(said), msg
