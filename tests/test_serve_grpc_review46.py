"""``vllm serve MODEL --grpc`` (review46B).

``ServeSubcommand.cmd`` (vllm 0.20.0 - 0.34.0 ``vllm/entrypoints/cli/serve.py``) runs ``serve_grpc(args)`` and returns
when ``args.grpc`` is set; ``serve_grpc`` reads ``args.host``/``args.port`` and the engine's options and serves on
``add_insecure_port``. The parser is the OpenAI server's, so ``--api-key`` is accepted and ignored: kvlint said
nothing. ``python -m vllm.entrypoints.openai.api_server --grpc`` starts the HTTP server (its code never reads
``args.grpc``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from vllm_deployments import COMMAND_LINE, check, vllm_container, vllm_deployment


def _kv205(tmp_path: Path, command: str, args: str, tag: str = "v0.33.0") -> list:  # type: ignore[type-arg]
    res = check(vllm_deployment(tmp_path, tag, command, args, "g.yaml"))
    vllm_container(res)
    return [d for d in res.diagnostics if d.rule == "KV205"]


SERVE = '["vllm", "serve"]'


@pytest.mark.parametrize("tag", ["v0.20.0", "v0.33.0", "latest"])
def test_frontend_options_with_grpc_are_ignored(tmp_path: Path, tag: str) -> None:
    args = '["Qwen/Qwen3-8B", "--grpc", "--api-key", "k", "--max-model-len", "4096", "--port", "9000"]'
    (d,) = _kv205(tmp_path, SERVE, args, tag)
    assert d.severity == "warning" and d.message.startswith("--api-key is ignored")
    assert "without the key" in d.message
    assert d.loc is not None and d.loc.line == COMMAND_LINE + 1  # the args: line


def test_spellings_of_frontend_options_with_grpc(tmp_path: Path) -> None:
    args = (
        '["Qwen/Qwen3-8B", "--grpc", "--chat_template=t.jinja", "--enable-auto-tool-choice", "--port", "1"]'
    )
    found = _kv205(tmp_path, SERVE, args)
    assert sorted(d.message.split()[0] for d in found) == ["--chat-template", "--enable-auto-tool-choice"]
    assert all(d.severity == "warning" for d in found)


def test_grpc_without_frontend_options_says_nothing(tmp_path: Path) -> None:
    args = '["Qwen/Qwen3-8B", "--grpc", "--host", "0.0.0.0", "--port", "9000", "--max-model-len", "4096"]'
    assert _kv205(tmp_path, SERVE, args) == []


def test_frontend_options_without_grpc_are_taken(tmp_path: Path) -> None:
    assert _kv205(tmp_path, SERVE, '["Qwen/Qwen3-8B", "--api-key", "k"]') == []


def test_api_server_module_ignores_grpc(tmp_path: Path) -> None:
    command = '["python3", "-m", "vllm.entrypoints.openai.api_server"]'
    (d,) = _kv205(tmp_path, command, '["--model", "Qwen/Qwen3-8B", "--grpc", "--api-key", "k"]')
    assert (
        d.message.startswith("--grpc is ignored") and d.severity == "warning" and "HTTP server" in d.message
    )
