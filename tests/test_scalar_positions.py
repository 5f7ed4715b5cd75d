"""Diagnostics inside a script held by one YAML scalar point at the token's own line and column, in every
scalar style: literal |, folded >, double- and single-quoted and plain scalars folded over several lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

HEAD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    resources: {limits: {nvidia.com/gpu: 1}}
    command: ["sh", "-c"]
    args:
"""

CASES = {
    "literal": "      - |\n        echo hi\n        vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n"
    "          --max-model-len 8192 --gpu-memory-utilzation 0.9\n",
    "folded": "      - >\n        vllm serve meta-llama/Llama-3.1-8B-Instruct\n"
    "        --max-model-len 8192\n        --gpu-memory-utilzation 0.9\n",
    "double-quoted": '      - "echo starting;\n        vllm serve meta-llama/Llama-3.1-8B-Instruct\n'
    '        --max-model-len 8192 --gpu-memory-utilzation 0.9"\n',
    "single-quoted": "      - 'echo ''a'';\n        vllm serve meta-llama/Llama-3.1-8B-Instruct\n"
    "        --max-model-len 8192   --gpu-memory-utilzation 0.9'\n",
    "plain": "      - vllm serve meta-llama/Llama-3.1-8B-Instruct\n"
    "        --max-model-len 8192 --gpu-memory-utilzation 0.9\n",
}


@pytest.mark.parametrize("style", sorted(CASES))
def test_misspelled_flag_is_located_in_every_scalar_style(style: str, tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    text = HEAD + CASES[style]
    path.write_text(text)
    res = run_check([str(path)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert d.loc is not None
    line = text.splitlines()[d.loc.line - 1]
    assert line[d.loc.column - 1 :].startswith("--gpu-memory-utilzation"), (style, d.loc, line)
