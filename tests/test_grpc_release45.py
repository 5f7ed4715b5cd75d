"""vLLM's gRPC server module on an image whose release does not ship it (review45C).

``vllm/entrypoints/grpc_server.py`` is in the vllm 0.14.0 wheel and later ones (0.17.0, 0.20.0, 0.21.0, 0.34.0 read)
and in neither the 0.12.0 nor the 0.13.0 wheel: ``python -m vllm.entrypoints.grpc_server`` on an older image stops
with "No module named ...". kvlint read such a container as a working vLLM and said nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from vllm_deployments import COMMAND_LINE, check, vllm_container, vllm_deployment

from kvlint.engines.command import (
    GRPC_MODULES_FROM,
    GRPC_OWN_OPTION,
    GRPC_OWN_OPTION_UNTIL,
    GRPC_SERVER_MODULE,
)

SINCE = GRPC_MODULES_FROM[GRPC_SERVER_MODULE]
FIRST = ".".join(map(str, SINCE))
BEFORE = f"{SINCE[0]}.{SINCE[1] - 1}.0"


def _manifest(tmp_path: Path, tag: str, command: str) -> Path:
    args = '["--model", "Qwen/Qwen3-8B", "--max-model-len", "4096", "--port", "9000"]'
    return vllm_deployment(tmp_path, tag, command, args, f"grpc-{tag}.yaml")


def _kv206(path: Path) -> list:  # type: ignore[type-arg]
    res = check(path)
    vllm_container(res)
    return [d for d in res.diagnostics if d.rule == "KV206" and GRPC_SERVER_MODULE in d.message]


@pytest.mark.parametrize(
    "command",
    [
        f'["python3", "-m", "{GRPC_SERVER_MODULE}"]',
        f'["sh", "-c", "exec python3 -m {GRPC_SERVER_MODULE} \\"$@\\"", "--"]',
    ],
)
def test_grpc_server_before_its_release_is_an_error(tmp_path: Path, command: str) -> None:
    (d,) = _kv206(_manifest(tmp_path, f"v{BEFORE}", command))
    assert d.severity == "error"
    assert f"vLLM {BEFORE} has no gRPC server" in d.message and FIRST in d.message
    assert d.loc is not None and d.loc.line == COMMAND_LINE  # the command: line that starts the module


@pytest.mark.parametrize("tag", [f"v{FIRST}", "latest"])
def test_grpc_server_from_its_release_is_accepted(tmp_path: Path, tag: str) -> None:
    assert _kv206(_manifest(tmp_path, tag, f'["python3", "-m", "{GRPC_SERVER_MODULE}"]')) == []


def test_openai_server_on_an_old_release_is_not_the_grpc_finding(tmp_path: Path) -> None:
    path = _manifest(tmp_path, f"v{BEFORE}", '["python3", "-m", "vllm.entrypoints.openai.api_server"]')
    assert _kv206(path) == []


def _kv205(tmp_path: Path, tag: str, module: str) -> list:  # type: ignore[type-arg]
    path = _manifest(tmp_path, tag, f'["python3", "-m", "{module}"]')
    text = path.read_text().replace('"--port", "9000"', f'"{GRPC_OWN_OPTION}", "--port", "9000"')
    path.write_text(text)
    res = check(path)
    return [d for d in res.diagnostics if d.rule == "KV205" and GRPC_OWN_OPTION in d.message]


def test_grpc_servers_own_option_is_known_on_its_releases(tmp_path: Path) -> None:
    """0.14.0 - 0.17.x's gRPC server takes --disable-log-stats-server (its main adds it), which kvlint called an
    unknown vLLM option (KV205 error: the container would not start)."""
    last = f"{GRPC_OWN_OPTION_UNTIL[0]}.{GRPC_OWN_OPTION_UNTIL[1] - 1}.0"
    assert _kv205(tmp_path, f"v{last}", GRPC_SERVER_MODULE) == []


def test_grpc_servers_own_option_is_refused_elsewhere(tmp_path: Path) -> None:
    """From 0.18.0 the gRPC server takes --host/--port only, and the OpenAI server never took the option."""
    until = ".".join(map(str, GRPC_OWN_OPTION_UNTIL))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (a,) = _kv205(tmp_path / "a", f"v{until}", GRPC_SERVER_MODULE)
    (b,) = _kv205(tmp_path / "b", "v0.17.0", "vllm.entrypoints.openai.api_server")
    assert a.severity == b.severity == "error"
