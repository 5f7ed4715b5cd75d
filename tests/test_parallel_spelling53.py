"""KV403's remedies and KV404's summary of the worker sizes name the options as the manifest wrote them (``-tp 2``,
SGLang's ``--tp 4``), as the statements of the layout do since engines52 (kvlint.engines.layout.Parallelism
.described): KV404 said "TP 2, PP 1, DP 1" and KV403 "lower --tp-size/--dp-size" or "set tensor-parallel-size 2"
whatever the command's spelling."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
      containers:
      - name: engine
        image: {image}
{command}        args: {args}
        resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}
"""
VLLM = "vllm/vllm-openai:v0.11.0"
SGLANG = "lmsysorg/sglang:v0.5.5"
QWEN = "Qwen/Qwen2.5-7B-Instruct"


def _diags(image: str, args: str, gpus: int, rule: str):  # type: ignore[no-untyped-def]
    command = "        command: [python3, -m, sglang.launch_server]\n" if image == SGLANG else ""
    text = POD.format(image=image, command=command, args=args, gpus=gpus)
    res = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    return [d for d in res.diagnostics if d.rule == rule]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (f"[--model, {QWEN}, -tp, '2', --max-model-len, '8192']", "2 GPU workers (-tp 2)"),
        (
            f"[--model, {QWEN}, --tensor-parallel-size=2, --max-model-len, '8192']",
            "(--tensor-parallel-size 2)",
        ),
        (
            f"[--model, {QWEN}, -tp, '1', -dp, '2', --max-model-len, '8192']",
            "(-tp 1 x -dp 2)",
        ),
    ],
)
def test_kv404_names_the_vllm_sizes_as_written(args: str, said: str) -> None:
    (kv404,) = _diags(VLLM, args, 2, "KV404")
    assert said in kv404.message and "TP 2, PP 1" not in kv404.message, kv404.message


def test_kv403_use_all_names_vllms_option_as_written() -> None:
    (kv403,) = _diags(VLLM, f"[--model, {QWEN}, -tp, '1', --max-model-len, '8192']", 2, "KV403")
    assert "set -tp 2 or --data-parallel-size 2 to use all 2" in (kv403.fix or ""), kv403.fix


def test_kv403_use_all_spells_unwritten_vllm_options_as_its_cli_does() -> None:
    """A vLLM command that writes neither size: the remedy names the options as ``vllm serve --help`` spells them
    (vllm/engine/arg_utils.py, ``EngineArgs.add_cli_args``: ``--tensor-parallel-size``, ``--data-parallel-size``),
    as SGLang's are (``--tp-size``). It said "set tensor-parallel-size 2 or data-parallel-size 2", no dashes."""
    (kv403,) = _diags(VLLM, f"[--model, {QWEN}, --max-model-len, '8192']", 2, "KV403")
    assert "set --tensor-parallel-size 2 or --data-parallel-size 2 to use all 2" in (kv403.fix or ""), (
        kv403.fix
    )


def test_kv403_lower_names_sglangs_options_as_written() -> None:
    args = f"[--model-path, {QWEN}, --tp, '4', --context-length, '8192']"
    (kv403,) = _diags(SGLANG, args, 2, "KV403")
    assert "lower --tp/--dp-size so that tp x pp x dp is 2" in (kv403.fix or ""), kv403.fix
