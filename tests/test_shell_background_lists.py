"""An AND-OR list run with ``&`` (``A=1 && B=2 &``) runs whole in a subshell (bash(1) "Lists"): what any of its
commands sets is not kept after it, and the engine command in it is still read with what the list set before it.
Against bash itself (tests/test_shell_array_writes.py's comparison). Offline; bash and coreutils' env only."""

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

SCRIPTS = [
    'A=1 && B=2 & wait; vllm serve m "$A" "$B" x',
    'A=1 || true & wait; vllm serve m "$A" x',
    'export A=1 && set -- p q || true & wait; vllm serve m "$A" $# x',
    # the engine in such a list sees what the list set before it
    'export X=2 && cd / && vllm serve m "$X" --port "$X" & wait',
    # `|&` is a pipe, not `&`: the list's first command runs in this shell; a `;` ends the list
    'A=1 && B=2 |& cat; vllm serve m "$A" x',
    'A=1 && B=2; C=3 & wait; vllm serve m "$A" "$B" x',
    # a list whose last pipeline has several commands, run with `&`
    'A=1 && B=2 | cat & wait; vllm serve m "$A" "$B" x',
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_and_or_list_run_in_the_background_keeps_nothing(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    words = [(w.text, w.unresolved) for w in engine[0]]
    assert _agrees(words, argv), (argv, engine[0])


def test_the_engine_of_a_background_list_is_read_whole() -> None:
    (engine,) = [
        c for c in commands("export P=8000 && vllm serve m --port $P & wait", {}) if c and c[0].text == "vllm"
    ]
    assert [w.text for w in engine] == ["vllm", "serve", "m", "--port", "8000"]
    assert not any(w.unresolved for w in engine)
