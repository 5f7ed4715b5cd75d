"""Shell functions around the engine command, read as bash and dash run them (branch shell54).

A function named like the program it wraps (``vllm() { command vllm "$@" --enforce-eager; }; vllm serve m``, the
shape of entrypoints that add default options) calls the program, not itself: ``command`` suppresses the function
lookup (POSIX.1-2017 XCU ``command``: "shall cause the shell to treat the arguments as a simple command, suppressing
the shell function lookup"), and a wrapper program (``nohup``, ``env``, ``timeout``) or ``exec`` runs a program found
in PATH, never a function of the shell. kvlint called the function again through ``command``, up to its call bound:
``vllm serve m`` with ``--enforce-eager`` sixty-odd times. Each script runs in the real shells with a ``vllm`` on
PATH that records its arguments; the words kvlint reads for the vllm command must be those, and a script whose
shell runs no vllm must give kvlint none. Offline; a shell the machine lacks is skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands

SCRIPTS = [
    'vllm() { command vllm "$@" --enforce-eager; }; vllm serve m',
    'vllm() { command -- vllm "$@" --port 8000; }\nvllm serve m --max-model-len 4096',
    'start() { vllm serve m "$@"; }; start --tensor-parallel-size 2',
    'start() { exec vllm serve m "$@"; }\nstart --max-model-len 4096',
    "start() { vllm serve m; }; nohup start; true",
    "start() { vllm serve m; }; env A=1 start; true",
    'run() { local model=$1; shift; vllm serve "$model" "$@"; }; run m --max-model-len 4096',
]


def _ran(shell: str, script: str, tmp_path: Path) -> list[str] | None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    out = tmp_path / "argv"
    out.unlink(missing_ok=True)
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "ARGV_OUT": str(out)}
    subprocess.run([shell, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1] if out.exists() else None


@pytest.mark.parametrize("shell", ["bash", "dash"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_a_function_starts_gets_the_shell_s_words(shell: str, script: str, tmp_path: Path) -> None:
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    read = [
        [w.text for w in c[1:]] for c in commands(script, {}, sh=shell == "dash") if c and c[0].text == "vllm"
    ]
    ran = _ran(path, script, tmp_path)
    assert read == ([] if ran is None else [ran]), (script, read, ran)
