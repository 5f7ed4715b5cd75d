"""Redirections and pipes around an engine command, read as dash and bash read them (branch shell54).

``>|`` is POSIX's CLOBBER redirection (POSIX.1-2017 XCU 2.10.2, "Shell Grammar Rules": the ``CLOBBER`` token;
2.7.2 "Redirecting Output"), which dash and bash both take as one operator writing the file whatever ``noclobber``
says; ``<>`` opens a file for reading and writing (2.7.7). kvlint's lexer read ``vllm serve m >| log --max-model-len
4096`` as ``vllm serve m >`` piped into a command ``log --max-model-len 4096``, losing every option after the
redirection, and took the file after ``3<>`` for an argument of the engine. Each script below runs in the real
dash and bash with a ``vllm`` on ``PATH`` that records its arguments; the words kvlint reads for that command must
be those. Offline; skipped for a shell the machine lacks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import commands
from kvlint.load import load_text

SCRIPTS = [
    "vllm serve m >| out.log --max-model-len 4096",
    "vllm serve m 2>|err.log --tensor-parallel-size 2 --max-model-len 4096",
    "exec vllm serve m >|out.log 2>&1 --max-model-len 4096",
    "vllm serve m 3<> rw.txt --max-model-len 4096",
    "vllm serve m --max-model-len 4096 >|out.log | cat",
    "vllm serve m --max-model-len 4096 > out.log 2>&1",
    "vllm serve m --max-model-len 4096 2>&1 | tee -a out.log",
    "vllm serve m >>out.log --max-model-len 4096 2>>err.log",
]


def _ran(shell: str, script: str, tmp_path: Path) -> list[str]:
    """The arguments the ``vllm`` of ``script`` gets when ``shell -c script`` runs it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$ARGV_OUT"\n')
    shim.chmod(0o755)
    out = tmp_path / "argv"
    out.unlink(missing_ok=True)
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}", "ARGV_OUT": str(out)}
    subprocess.run([shell, "-c", script], env=env, cwd=tmp_path, check=False, timeout=60, capture_output=True)
    return out.read_bytes().decode().split("\0")[:-1]


def _read(script: str, sh: bool) -> list[str]:
    (words,) = [c for c in commands(script, {}, sh=sh) if c and c[0].text == "vllm"]
    return [w.text for w in words[1:]]


@pytest.mark.parametrize("shell", ["dash", "bash"])
@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_gets_the_words_the_shell_gives_it(shell: str, script: str, tmp_path: Path) -> None:
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} not installed")
    assert _read(script, sh=shell == "dash") == _ran(path, script, tmp_path)


def test_options_after_a_clobber_redirection_are_read(tmp_path: Path) -> None:
    """The options after ``>|`` reach vLLM: a tensor-parallel size of 2 on one GPU is KV403's."""
    (doc,) = load_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.10.1\n    command: [sh, -c]\n"
        "    args: ['vllm serve Qwen/Qwen2.5-7B-Instruct >| /tmp/vllm.log --tensor-parallel-size 2']\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n",
        "p.yaml",
    ).documents
    container = doc.data["spec"]["containers"][0]
    cfg = parse_container(container)
    assert cfg is not None and cfg.get("tensor_parallel_size") == 2
