"""vLLM's gRPC server given the OpenAI server's own options (engine46).

``python -m vllm.entrypoints.grpc_server`` builds its parser from ``--host``, ``--port`` and
``AsyncEngineArgs.add_cli_args`` (vllm 0.14.0 - 0.34.0 ``vllm/entrypoints/grpc_server.py::main``, from 0.33.0 in
``launchers/grpc_server.py``), so argparse stops it with "unrecognized arguments" on the HTTP server's options
(``--api-key``, ``--chat-template``, ``--enable-auto-tool-choice`` ...). kvlint read its command with the OpenAI
server's option table and said nothing. The table of those options is generated from the wheels
(``tools/flag_tables/gen_grpc_module.py``, :mod:`kvlint.engines.vllm_grpc_data`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from vllm_deployments import check, vllm_container, vllm_deployment

from kvlint.engines import vllm_flags_data as data
from kvlint.engines import vllm_grpc_data as grpc_data
from kvlint.engines.command import GRPC_SERVER_MODULE, parse_command_line
from kvlint.engines.vllm import parse_vllm_argv

API = "vllm.entrypoints.openai.api_server"


def _manifest(tmp_path: Path, module: str, extra: str, tag: str = "v0.20.0") -> Path:
    """``--model Qwen/Qwen3-8B``, ``extra`` (block list items from line 15), ``--max-model-len 4096``."""
    args = (
        '\n        - "--model"\n        - "Qwen/Qwen3-8B"\n'
        + extra
        + '        - "--max-model-len"\n        - "4096"'
    )
    return vllm_deployment(tmp_path, tag, f'["python3", "-m", "{module}"]', args, "grpc.yaml")


def _kv205(path: Path) -> list:  # type: ignore[type-arg]
    """The KV205 errors (an abbreviation such as ``--max-num-seq`` is a KV205 warning)."""
    res = check(path)
    cr = vllm_container(res)
    assert cr.serving.get("max_model_len") == 4096  # the value after the refused option is still read
    return [d for d in res.diagnostics if d.rule == "KV205" and d.severity == "error"]


def test_api_key_on_the_grpc_server_is_refused(tmp_path: Path) -> None:
    extra = '        - "--api-key"\n        - "secret"\n'
    (d,) = _kv205(_manifest(tmp_path, GRPC_SERVER_MODULE, extra))
    assert d.severity == "error"
    assert "gRPC server option --api-key" in d.message and "unrecognized arguments" in d.message
    assert d.loc is not None and d.loc.line == 15  # the --api-key item, not its value
    # the OpenAI server takes it
    (tmp_path / "o").mkdir()
    assert _kv205(_manifest(tmp_path / "o", API, extra)) == []


def test_tool_calling_switches_on_the_grpc_server_are_refused(tmp_path: Path) -> None:
    extra = '        - "--enable-auto-tool-choice"\n        - "--tool-call-parser=hermes"\n'
    found = _kv205(_manifest(tmp_path, GRPC_SERVER_MODULE, extra, tag="v0.14.0"))
    assert [d.loc.line if d.loc else None for d in found] == [15, 16]
    assert "--enable-auto-tool-choice" in found[0].message and "--tool-call-parser" in found[1].message


def test_the_grpc_servers_own_and_the_engines_options_are_taken(tmp_path: Path) -> None:
    extra = (
        '        - "--host"\n        - "0.0.0.0"\n        - "--port"\n        - "50051"\n'
        '        - "--served-model-name"\n        - "qwen"\n        - "--enable-log-requests"\n'
        '        - "--max-num-seq"\n        - "64"\n'
    )
    assert _kv205(_manifest(tmp_path, GRPC_SERVER_MODULE, extra)) == []


@pytest.mark.parametrize("version", [*grpc_data.GRPC_RELEASES, "0.15.0", "0.31.0", None])
def test_frontend_options_are_refused_on_every_grpc_release(version: str | None) -> None:
    """Every release from 0.14.0 (between two sampled ones too, and an unknown one): the HTTP server's CORS,
    API key and chat template options are not the gRPC server's; the engine's options are."""
    for option in ("--api-key", "--allowed-origins", "--chat-template", "--uvicorn-log-level"):
        sc = parse_command_line(
            ["python3", "-m", GRPC_SERVER_MODULE, "--model", "m", option, "x", "--tensor-parallel-size", "2"],
            version=version,
        )
        assert [(f.rule, f.option) for f in sc.findings] == [("KV205", option)], (version, option)
        assert sc.flags["tensor_parallel_size"].value == 2
    sc = parse_command_line(
        [
            "python3",
            "-m",
            GRPC_SERVER_MODULE,
            "--model",
            "m",
            "--gpu-memory-utilization",
            "0.8",
            "--enforce-eager",
        ],
        version=version,
    )
    assert sc.findings == []


def test_generated_table_is_the_openai_servers_own_options() -> None:
    """Spot checks of the generated table against the wheels' source: ``--api-key`` is
    ``FrontendArgs.api_key`` (``vllm/entrypoints/openai/cli_args.py``) on every release read; ``--served-model-name``
    (``ModelConfig``) and ``--enable-log-requests`` (``AsyncEngineArgs.add_cli_args``) are the engine's;
    ``--host``/``--port``, which the gRPC server adds itself, are in the table but kept by the parser."""
    read = sum(1 << data.VERSIONS.index(v) for v in grpc_data.GRPC_RELEASES)
    assert grpc_data.FRONTEND_ONLY["--api-key"] & read == read
    assert grpc_data.FRONTEND_ONLY["--host"] & read == read
    for option in ("--served-model-name", "--enable-log-requests", "--max-model-len", "-tp"):
        assert option not in grpc_data.FRONTEND_ONLY
    assert set(grpc_data.FRONTEND_ONLY) <= set(data.OPTIONS)


def test_openai_option_in_the_grpc_servers_config_file_is_refused() -> None:
    """``--config FILE`` is replaced by the file's options before argparse (``FlexibleArgumentParser``), so a key
    of the HTTP server in it stops the gRPC server as on the command line."""

    def loader(path: str):  # type: ignore[no-untyped-def]
        return ("model: Qwen/Qwen3-8B\napi-key: secret\nmax-model-len: 4096\n", None)

    sc = parse_vllm_argv(
        ["--config", "/etc/vllm.yaml"],
        version="0.20.0",
        config_loader=loader,
        positional_model=False,
        grpc="vllm.entrypoints.grpc_server",
    )
    assert [(f.rule, f.option) for f in sc.findings] == [("KV205", "--api-key")]
    assert sc.flags["max_model_len"].value == 4096
    same = parse_vllm_argv(["--config", "/etc/vllm.yaml"], version="0.20.0", config_loader=loader)
    assert not [f for f in same.findings if f.rule == "KV205"]
