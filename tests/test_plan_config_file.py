"""``kvlint plan -- ... --config FILE`` reads the file from this machine, bounded as a ConfigMap (review51F).

fresh51 made an unread engine ``--config`` file leave the parallel sizes and the context limit unknown; ``kvlint
plan`` read no file at all, so a CLI user's own ``vllm serve M --config cfg.yaml`` answered "verdict: unknown"
with the KV503 fix "pass the ConfigMap", though the file is on their disk. vLLM reads the file's keys as options
that the command line overrides (vllm/utils/argparse_utils.py::FlexibleArgumentParser.load_config_file); SGLang
0.5.3+ likewise (python/sglang/srt/server_args_config_parser.py::ConfigArgumentMerger).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.capacity.plan_command import plan_command
from kvlint.cli import main
from kvlint.engines.vllm import MAX_CONFIG_FILE_BYTES
from kvlint.options import Options

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def _plan(argv: list[str], **kw: object):  # noqa: ANN202
    return plan_command(argv, Options(allow_hub=False, accelerator="l4"), gpus=2, **kw)  # type: ignore[arg-type]


def test_vllm_plan_reads_a_local_config_file_and_the_command_line_wins(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("tensor-parallel-size: 2\nmax-model-len: 16384\ngpu-memory-utilization: 0.8\n")
    out = _plan(["vllm", "serve", MODEL, "--config", str(cfg), "--max-model-len", "8192"], local_config=True)
    s = out.result.serving
    assert s.get("tensor_parallel_size") == 2 and s.get("gpu_memory_utilization") == 0.8
    assert s.get("max_model_len") == 8192  # the command line over the file, as vLLM
    assert not s.unresolved and out.verdict != "unknown"
    assert not any(d.rule == "KV503" for d in out.diagnostics)
    # a start-up log's command (kvlint verify): the file was on the serving machine, not read here
    out = _plan(["vllm", "serve", MODEL, "--config", str(cfg)])
    assert "tensor_parallel_size" in out.result.serving.unresolved and out.verdict == "unknown"


def test_sglang_plan_reads_a_local_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("tp-size: 2\ncontext-length: 8192\n")
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, "--config", str(cfg)]
    out = plan_command(
        argv, Options(allow_hub=False, accelerator="l4", engine_version="0.5.5"), gpus=2, local_config=True
    )
    s = out.result.serving
    assert s.get("tp_size") == 2 and s.get("context_length") == 8192 and not s.unresolved
    assert out.verdict != "unknown"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_plan_local_config_file_bounded(tmp_path: Path) -> None:
    """A device (never ends) and a file over a ConfigMap's 1 MiB are not read: KV503, unknown, never a hang."""
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * MAX_CONFIG_FILE_BYTES + "\ntensor-parallel-size: 2\n")
    # (named .yaml: vLLM refuses any other name before it opens the file, KV206: test_vllm_config_extension52)
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    for path in (str(zero), str(big), str(tmp_path / "missing.yaml")):
        out = _plan(["vllm", "serve", MODEL, "--config", path], local_config=True)
        assert out.verdict == "unknown", path
        assert "tensor_parallel_size" in out.result.serving.unresolved
        (kv503,) = [d for d in out.diagnostics if d.rule == "KV503" and "--config" in d.message]
        assert "ConfigMap with the workload" not in (kv503.fix or ""), kv503


def test_cli_plan_reads_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("tensor-parallel-size: 2\nmax-model-len: 16384\n")
    res = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--accelerator",
            "l4",
            "--gpus",
            "2",
            "--",
            "vllm",
            "serve",
            MODEL,
            "--config",
            str(cfg),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "TP=2" in res.output and "verdict: ok" in res.output


def test_vllm_config_with_equals_is_never_read_by_vllm(tmp_path: Path) -> None:
    """vLLM loads the file only when ``--config`` is a word of its own (FlexibleArgumentParser.parse_args: ``if
    "--config" in args``, 0.20.0 to 0.34.0); ``--config=FILE`` is the value of the declared ``--config`` argparse
    option, which nothing reads. kvlint read the file as if vLLM did (and with fresh51, unread, left the sizes
    unknown): the engine runs on its defaults and the command line's values, which kvlint plans, with a warning."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("tensor-parallel-size: 2\nmax-model-len: 4096\n")
    out = _plan(["vllm", "serve", MODEL, f"--config={cfg}"], local_config=True)
    s = out.result.serving
    assert s.get("tensor_parallel_size") is None and s.get("max_model_len") is None and not s.unresolved
    (kv503,) = [d for d in out.diagnostics if d.rule == "KV503"]
    assert kv503.severity == "warning" and "vLLM never reads this file" in kv503.message
    assert f"--config {cfg}" in kv503.fix
    assert out.verdict != "unknown"


@pytest.mark.parametrize(
    ("extra", "command", "body"),
    [
        (
            ["--sweep", "max-model-len=4k..8k"],
            ["vllm", "serve", MODEL],
            "tensor-parallel-size: 2\ngpu-memory-utilization: 0.5\n",
        ),
        (
            ["--compare", "--accelerators", "l4"],
            ["vllm", "serve", MODEL],
            "tensor-parallel-size: 2\ngpu-memory-utilization: 0.5\n",
        ),
        (
            ["--sweep", "context-length=4k..8k"],
            ["python3", "-m", "sglang.launch_server", "--model-path", MODEL],
            "tp-size: 2\nmem-fraction-static: 0.5\n",
        ),
    ],
)
def test_plan_compare_and_sweep_read_the_local_file_too(
    tmp_path: Path, extra: list[str], command: list[str], body: str
) -> None:
    """``kvlint plan --compare/--sweep`` planned the command without its local --config file (engines52): the
    file's TP 2 unknown, "no memory plan on NVIDIA L4: unknown reason" / "--sweep context-length=4000: no plan"."""
    import json

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(body)
    args = ["plan", "--offline", "--accelerator", "l4", "--format", "json", *extra, "--", *command]
    res = CliRunner().invoke(main, [*args, "--config", str(cfg)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    if "sweeps" in doc:
        (sweep,) = doc["sweeps"]
        assert all(p["kv_tokens"] > 0 for p in sweep["points"]), sweep
    else:
        # the file's gpu-memory-utilization 0.5 of an L4 (about 12 GB) does not hold the 15 GB of weights at TP 1
        (row,) = [r for r in doc["compare"]["rows"] if r["tp"] == 1 and r["kv_cache_dtype"] == "auto"]
        assert row["kv_cache_bytes"] < 0 and not row["fits"], row
