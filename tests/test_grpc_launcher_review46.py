"""vLLM's gRPC server under its 0.30.0+ module path (review46B).

``vllm/entrypoints/launchers/grpc_server.py`` (``main``: ``--host``, ``--port`` and ``AsyncEngineArgs.add_cli_args``;
``if __name__ == "__main__": main()``) is in the vllm 0.30.0 - 0.34.0 wheels and not in the 0.29.0 one; from 0.33.0
``vllm/entrypoints/grpc_server.py`` is a deprecated shim over it. kvlint did not know the module: ``python3 -m
vllm.entrypoints.launchers.grpc_server --model ...`` was KV503 "not a recognised engine command", unsized."""

from __future__ import annotations

from pathlib import Path

import pytest
from vllm_deployments import check, vllm_deployment

from kvlint.engines.command import GRPC_LAUNCHER_MODULE, GRPC_MODULES_FROM, parse_command_line

SINCE = GRPC_MODULES_FROM[GRPC_LAUNCHER_MODULE]
FIRST = ".".join(map(str, SINCE))
BEFORE = f"{SINCE[0]}.{SINCE[1] - 1}.0"


def _check(tmp_path: Path, tag: str, extra: str = "") -> tuple[list, list]:  # type: ignore[type-arg]
    args = f'["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096", "--port", "9000"{extra}]'
    res = check(
        vllm_deployment(tmp_path, tag, f'["python3", "-m", "{GRPC_LAUNCHER_MODULE}"]', args, f"g-{tag}.yaml")
    )
    return res.containers, res.diagnostics


@pytest.mark.parametrize("tag", [f"v{FIRST}", "v0.34.0", "latest"])
def test_launcher_module_is_read_as_vllm(tmp_path: Path, tag: str) -> None:
    containers, diags = _check(tmp_path, tag)
    (cr,) = containers
    assert cr.serving is not None and cr.serving.engine == "vllm"
    assert cr.serving.flags["max_model_len"].value == 4096
    assert not [d for d in diags if d.rule in ("KV503", "KV206", "KV205")]


def test_launcher_module_refuses_openai_server_options(tmp_path: Path) -> None:
    _, diags = _check(tmp_path, f"v{FIRST}", ', "--api-key", "k"')
    (d,) = [d for d in diags if d.rule == "KV205"]
    assert "--api-key" in d.message and d.severity == "error"
    # the module the command runs, not the older one beside it
    assert f"python -m {GRPC_LAUNCHER_MODULE} takes" in d.message


def test_launcher_module_before_its_release_is_an_error(tmp_path: Path) -> None:
    _, diags = _check(tmp_path, f"v{BEFORE}")
    (d,) = [d for d in diags if d.rule == "KV206"]
    assert d.severity == "error" and GRPC_LAUNCHER_MODULE in d.message and f"vLLM {FIRST}" in d.message
    assert d.fix is not None and "vllm.entrypoints.grpc_server" in d.fix  # the older module is there on 0.29


def test_plan_command_line_reads_the_launcher_module() -> None:
    cfg = parse_command_line(
        ["python3", "-m", GRPC_LAUNCHER_MODULE, "--model", "m", "--chat-template", "t.jinja"],
        version="0.33.0",
    )
    assert cfg.engine == "vllm" and [f.option for f in cfg.findings if f.rule == "KV205"] == [
        "--chat-template"
    ]
