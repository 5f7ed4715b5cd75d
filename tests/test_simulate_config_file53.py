"""``kvlint simulate -- vllm serve M --config cfg.yaml`` reads the file from this machine, as ``kvlint plan``
does (review51F, tests/test_plan_config_file.py): the command is the user's own, the file on their disk. Before,
simulate read no file and simulated vLLM's defaults in place of the file's settings."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kvlint.capacity.cli import simulate as simulate_cmd

MODEL = "Qwen/Qwen2.5-7B-Instruct"


def _simulate(tmp_path: Path, config: str) -> str:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(config)
    res = CliRunner().invoke(
        simulate_cmd,
        [
            "--accelerator",
            "l4",
            "--offline",
            "--requests",
            "20",
            "--no-sensitivity",
            "--",
            "vllm",
            "serve",
            MODEL,
            "--config",
            str(cfg),
        ],
    )
    assert res.exit_code == 0, res.output
    return res.output


def test_simulate_reads_the_local_config_file(tmp_path: Path) -> None:
    out = _simulate(tmp_path, "max-model-len: 4096\nmax-num-seqs: 7\n")
    assert "max_model_len 4,096 (user), max_num_seqs 7," in out, out
