"""``--num-gpu-blocks-override`` values kvlint refuses before sizing anything: zero or below (vLLM's BlockPool
asserts a positive count), or past the int32 block ids of vLLM's block tables. Each was read as given: ``--num-gpu-blocks-override 1000000000000`` sized a KV cache of 10^12 blocks and no rule
said anything (the fit check found it roomy); ``0`` was read as no override at all."""

from __future__ import annotations

import json

import pytest

from kvlint.load import load_text
from kvlint.pipeline import run_documents
from kvlint.webhook.request_options import webhook_options

INT32_MAX = 2**31 - 1  # torch.int32, as vLLM's BlockTable holds block ids


def _findings(*args: str) -> tuple[str, list[tuple[str, str, int | None, int | None]]]:
    """The manifest's text and ``(rule, message, line, column)`` of each finding of a Deployment running vLLM 0.11.0 with ``args`` on one L4."""
    container = {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", *args],
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "absurd", "namespace": "default"},
        "spec": {"template": {"spec": {
            "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}, "containers": [container]}}},
    }  # fmt: skip
    text = json.dumps(obj, indent=1)
    result = run_documents(load_text(text, "absurd.json"), webhook_options())
    return text, [(d.rule, d.message, d.loc.line if d.loc else None, d.loc.column if d.loc else None)
                  for d in result.diagnostics]  # fmt: skip


@pytest.mark.parametrize(
    "option, value",
    [
        ("--num-gpu-blocks-override", str(10**12)),
        ("--num-gpu-blocks-override", str(INT32_MAX + 1)),
        ("--num-gpu-blocks-override", "0"),
        ("--num-gpu-blocks-override", "-5"),
    ],
)
def test_an_absurd_count_is_a_kv206_error_at_its_value(option: str, value: str) -> None:
    text, found = _findings(option, value)
    kv206 = [f for f in found if f[0] == "KV206"]
    assert len(kv206) == 1, found
    _, message, line, _ = kv206[0]
    assert option in message and value in message, message
    at = [i + 1 for i, t in enumerate(text.splitlines()) if t.strip() == f'"{value}"']
    assert at and line == at[0], (line, at, message)  # at the value's own line
    # refused before sizing anything: no capacity or batch-buffer finding was computed from it
    assert not [f for f in found if f[0] in ("KV102", "KV103", "KV104", "KV209")], found


@pytest.mark.parametrize(
    "option, value",
    [
        ("--num-gpu-blocks-override", str(INT32_MAX)),
        ("--num-gpu-blocks-override", "2000"),
        ("--max-num-batched-tokens", "16384"),
    ],  # fmt: skip
)
def test_a_count_within_bounds_is_no_kv206(option: str, value: str) -> None:
    _, found = _findings(option, value)
    assert not [f for f in found if f[0] == "KV206"], found
