"""The wrapper table of the shell reader (:data:`kvlint.engines.shell._OPTION_WRAPPERS`) against the wrappers
themselves: each script is run by bash with a ``vllm`` on ``PATH`` that prints the arguments it was given, through
the real ``env``, ``nice``, ``timeout``, ``stdbuf`` (GNU coreutils), ``taskset``, ``setsid``, ``ionice``
(util-linux) and bash's ``exec``; the engine command kvlint reads must be the one that ran. An oracle independent of
the table (tests/shell_reference.py reads wrappers from the same table: it checks the lexer, not the table). A
wrapper missing on the machine skips its cases; nothing is fetched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import commands

SCRIPTS = [
    "env -S 'vllm serve m --tensor-parallel-size 8' --max-model-len 4096",
    'env -iS"PATH=$PATH vllm serve m" x',
    "env --split-string='vllm serve m' x",
    "env -iu CUDA_VISIBLE_DEVICES PATH=$PATH vllm serve m",
    "env -u X --unset=Y -C / A=1 vllm serve m",
    "env - PATH=$PATH vllm serve m",
    "env -- vllm serve m",
    "exec -cla engine vllm serve m",
    "exec -a engine vllm serve m",
    "nice -5 vllm serve m",
    "nice -n5 vllm serve m",
    "nice --adjustment 5 vllm serve m",
    "timeout -k5 -s TERM 10h vllm serve m",
    "timeout --kill-after=5 --foreground 1h vllm serve m",
    "timeout -vk 5 1h vllm serve m",
    "stdbuf -oL -e L vllm serve m",
    "stdbuf --output L -i0 vllm serve m",
    "taskset -ac 0 vllm serve m",
    "taskset 1 vllm serve m",
    "taskset -- 1 vllm serve m",
    "setsid -w vllm serve m",
    "ionice -tc 3 vllm serve m",
    "ionice -c3 -n 7 vllm serve m",
    "ionice --class 3 vllm serve m",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_command_read_behind_a_wrapper_is_the_one_bash_runs(script: str, tmp_path: Path) -> None:
    bash = shutil.which("bash")
    wrapper = script.split()[0]
    if bash is None or (wrapper != "exec" and shutil.which(wrapper) is None):
        pytest.skip(f"no {wrapper} here")
    shim = tmp_path / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\n" vllm "$@"\n')
    shim.chmod(0o755)
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"
    ran = subprocess.run(
        [bash, "-c", script], env={"PATH": path}, capture_output=True, text=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    read = [[w.text for w in cmd] for cmd in commands(script, {"PATH": path})]
    assert read == [ran.stdout.splitlines()], ran.stderr


@pytest.mark.parametrize(
    ("script", "engine"),
    [
        ("sudo -Eu app vllm serve m", ["vllm", "serve", "m"]),  # sudo 1.9: -u's value is the next word
        ("sudo -E --user=app -- vllm serve m", ["vllm", "serve", "m"]),
        ("sudo -hhost vllm serve m", ["vllm", "serve", "m"]),  # -h's host only attached ("h::")
        ("numactl -lN 0 vllm serve m", ["vllm", "serve", "m"]),
        ("tini -se 143 -- vllm serve m", ["vllm", "serve", "m"]),
        ("dumb-init -cr 15:2 vllm serve m", ["vllm", "serve", "m"]),
    ],
)
def test_wrappers_not_installed_here_read_by_their_option_strings(script: str, engine: list[str]) -> None:
    assert [[w.text for w in cmd] for cmd in commands(script, {})] == [engine]
