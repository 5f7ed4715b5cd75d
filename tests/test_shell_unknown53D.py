"""Variables kvlint cannot know, against bash itself (the harness of tests/test_shell_state50.py: a ``vllm`` on
``PATH`` that prints its arguments): a value the script gives a variable through a builtin or a loop kvlint does not
run is not the value it held before. Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_array_writes import _agrees  # noqa: E402
from test_shell_state50 import _bash  # noqa: E402

#: each assigns A (or the name a builtin fills without one) a value other than the 1 it held
BUILTIN_WRITES = [
    "A=1; read A <<< 2; vllm serve m --max-model-len=$A",
    "A=1; read -r -p x A B <<< '2 3'; vllm serve m --max-model-len=$A",
    "A=1; while read A; do break; done <<< 2; vllm serve m --max-model-len=$A",
    "A=1; if read A <<< 2; then :; fi; vllm serve m --max-model-len=$A",
    "REPLY=1; read <<< 2; vllm serve m --max-model-len=$REPLY",
    "A=1; for A in 2 3; do :; done; vllm serve m --max-model-len=$A",
    "A=1; select A in 2; do break; done <<< 1 2>/dev/null; vllm serve m --max-model-len=$A",
    "A=1; getopts a: A -a 3; vllm serve m --max-model-len=$A $OPTARG",
    "A=1; printf -v A %s 2; vllm serve m --max-model-len=$A",
    "A=1; printf -vA %s 2; vllm serve m --max-model-len=$A",
    "A=1; mapfile A <<< 2; vllm serve m --max-model-len=$A",
    "MAPFILE=1; readarray <<< 2; vllm serve m --max-model-len=$MAPFILE",
]


@pytest.mark.parametrize("script", BUILTIN_WRITES)
def test_a_variable_a_builtin_or_loop_assigns_is_not_its_old_value(script: str, tmp_path: Path) -> None:
    """``A=1; read A``: bash passes the line read, kvlint passed ``--max-model-len=1`` (the value before): the
    variable is unknown after ``read``, ``for``/``select``, ``getopts``, ``printf -v``, ``mapfile``."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert argv[3] != "--max-model-len=1"  # (the script does change the value)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv), (argv, words)
    assert words[3][1], words


def test_printf_without_v_assigns_nothing(tmp_path: Path) -> None:
    """``printf %s A`` prints; A keeps its value (bash's too)."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    script = "A=1; printf %s A >/dev/null; vllm serve m --max-model-len=$A"
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == argv
