"""A bare script word kvlint cannot expand (``$EXTRA_ARGS``) in a TGI or SGLang command: the shell splits it into any
number of words, options among them, as for vLLM (branch shell53): the arguments are not all read."""

from __future__ import annotations

import json

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
      containers:
      - name: e
        image: %s
        command: %s
        args: %s
        resources: {limits: {nvidia.com/gpu: 1}}
        env:
        - {name: EXTRA_ARGS, valueFrom: {secretKeyRef: {name: engine, key: args}}}
"""

_TGI = "ghcr.io/huggingface/text-generation-inference:3.0.1"
_SGLANG = "lmsysorg/sglang:v0.4.6"
_TGI_CMD = "text-generation-launcher --model-id Qwen/Qwen2.5-7B-Instruct --max-total-tokens 8192"
_SGLANG_CMD = "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --trust-remote-code"


def _rules(image: str, command: list[str], args: list[str]) -> dict[str, list[str]]:
    text = _MANIFEST % (image, json.dumps(command), json.dumps(args))
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    out: dict[str, list[str]] = {}
    for d in result.diagnostics:
        out.setdefault(d.rule, []).append(d.message)
    return out


@pytest.mark.parametrize(
    ("image", "script", "engine"),
    [
        (_TGI, f"{_TGI_CMD} $EXTRA_ARGS", "TGI"),
        (_TGI, f"{_TGI_CMD} ${{EXTRA_ARGS}} --port 80", "TGI"),
        (_SGLANG, f"{_SGLANG_CMD} $EXTRA_ARGS", "SGLang"),
        (_SGLANG, f"{_SGLANG_CMD} --port 80 ${{EXTRA_ARGS}}", "SGLang"),
    ],
)
def test_a_bare_unknown_word_leaves_the_arguments_not_all_read(image: str, script: str, engine: str) -> None:
    """``text-generation-launcher ... $EXTRA_ARGS``: the word was skipped and the command sized at the launcher's
    defaults (SGLang: KV202 "no --context-length"), though it may set --num-shard or --context-length."""
    got = _rules(image, ["bash", "-c"], [script])
    assert any(f"the {engine} command's arguments are not all known" in m for m in got.get("KV503", [])), got
    assert "KV202" not in got, got


@pytest.mark.parametrize(
    ("image", "script"),
    [
        (_TGI, f"{_TGI_CMD} --num-shard $N"),
        (_SGLANG, f"{_SGLANG_CMD} --context-length $LEN"),
        (_SGLANG, f"{_SGLANG_CMD} --context-length 4096"),
    ],
)
def test_an_unknown_value_of_an_option_is_no_bare_word(image: str, script: str) -> None:
    """The value of an option (``--num-shard $N``) is that option's, not words of their own."""
    got = _rules(image, ["bash", "-c"], [script])
    assert not any("arguments are not all known" in m for m in got.get("KV503", [])), got


def test_without_a_shell_the_word_is_the_engines_literal_text() -> None:
    """``args: [..., "$EXTRA_ARGS"]`` with no shell: the kubelet leaves ``$EXTRA_ARGS`` as written (only ``$(VAR)``
    is its syntax); SGLang receives that one word, not options."""
    got = _rules(
        _SGLANG,
        ["python3", "-m", "sglang.launch_server"],
        ["--model-path", "Qwen/Qwen2.5-7B-Instruct", "--trust-remote-code", "$EXTRA_ARGS"],
    )
    assert not any("arguments are not all known" in m for m in got.get("KV503", [])), got
