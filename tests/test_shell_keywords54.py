"""bash's ``time`` reserved word before the engine, with its ``-p`` (POSIX output format: bash(1) "Pipelines",
``time [-p] pipeline``): ``time -p vllm serve m ...`` runs vLLM with the words after ``-p``; kvlint took ``-p`` for the
program and read no engine (branch shell54). Checked against bash with a ``vllm`` that records its arguments."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands

SCRIPTS = [
    "time -p vllm serve m --max-model-len 4096",
    "time vllm serve m --max-model-len 4096",
    "time -p exec vllm serve m --tensor-parallel-size 2",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_time_runs_the_engine_with_its_words(script: str, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    shim = tmp_path / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    out = tmp_path / "argv"
    env = {"PATH": f"{tmp_path}:{os.environ.get('PATH', '/usr/bin:/bin')}", "ARGV_OUT": str(out)}
    subprocess.run([bash, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    ran = out.read_bytes().decode().split("\0")[:-1]
    (read,) = [[w.text for w in c[1:]] for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert read == ran
