"""More of what bash does to a script's words and state, against bash itself (the harness of
tests/test_shell_state50.py: a ``vllm`` on ``PATH`` that prints its arguments and environment; every word kvlint
resolves must be the one bash passes, and a word kvlint leaves unresolved is left out of the comparison, so a word it
could know but leaves unresolved fails). Positional parameters beyond ``$#`` (unset: ``"$5"`` is one empty word),
``${1:-x}``, ``${@:2}``, ``$#``. Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import ShellArg, commands, unresolved
from kvlint.source import LDict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_state50 import _SHELL_OWN, _bash  # noqa: E402

SCRIPTS = [
    # positional parameters: beyond $# they are unset; defaults, slices and $# as bash expands them
    'set -- a b; vllm serve m "$5" x $5 y',
    'set -- a; vllm serve m ${1:-x} ${2:-y} ${2-"p q"} "${1:-u}" ${3:-"c d"}',
    "set -- '' b; vllm serve m ${1:-x} ${1-y} ${2:-z}",
    'set -- a b c; vllm serve m "${@:2}" $# ${#} "${@: -1}" "${@:1:2}" "${*:2}" ${@:0:1}',
    'set -- a b c; vllm serve m "${@:7}" x "$#"',
    'f() { vllm serve m "$3" $# "${2:-d}"; }; f "$X" b',
    'f() { shift; vllm serve m "$2" $#; }; f a b',
    'bash -c \'vllm serve m "$5" "$1" $#\' zero one',
    # each part of a pipeline, and a command run in the background, runs in a subshell
    "export A=1 | cat; vllm serve m --max-model-len $A",
    "A=1 & vllm serve m $A; wait",
    'cat /dev/null | B=2; set -- x y | cat; vllm serve m $B "$1" $#',
    "f() { export A=5; X=6; }; f | cat; vllm serve m $A $X",
    "A=1 && B=2 || C=3; true | D=4 && vllm serve m $A $B $D",
    "case x in a|x) A=1 ;; esac; vllm serve m $A",
    # a function whose body is a subshell: read at its call, what it sets not kept after it
    "f() ( vllm serve m $A ); A=1; f",
    "f() ( export B=2; A=3; set -- q ); A=1; f; vllm serve m $A $B",
    'f() (\n  case x in x) A=2 ;; esac\n  vllm serve m $A "$1"\n); g() ( f z; ); A=1; g; : $A',
    "function f () ( vllm serve m $1 ); A=1; f 2",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_gets_the_words_and_environment_bash_gives_it(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, environ = _bash(script, tmp_path, env)
    engine = [
        c
        for c in commands(script, env, [ShellArg(shutil.which("bash") or "bash")])
        if c and c[0].text == "vllm"
    ]
    assert len(engine) == 1
    assert [w.text for w in engine[0] if not w.unresolved] == argv
    assert engine[0].environ is not None
    read = {k: v for k, v in engine[0].environ.get()[0].items() if k not in _SHELL_OWN}
    assert {k: v for k, v in read.items() if not unresolved(v)} == {
        k: v for k, v in environ.items() if not (k in read and unresolved(read[k]))
    }


@pytest.mark.parametrize(
    ("script", "positional"),
    [
        ('vllm serve m "$5" $#', []),  # no parameters at all: how many bash had is not known
        ('f() { vllm serve m "$5" $# "${2:-d}" "${@:2}"; }; f $UNKNOWN', [ShellArg("sh")]),
    ],
)
def test_parameters_beyond_an_unknown_count_stay_unresolved(script: str, positional: list[ShellArg]) -> None:
    (engine,) = [c for c in commands(script, {}, positional) if c and c[0].text == "vllm"]
    assert all(w.unresolved for w in engine[3:]) and len(engine) > 4


def test_parameters_left_by_many_shifts_are_read_from_their_base() -> None:
    """40,000 parameters then 2,000 ``shift`` lines each reading ``"$@"``, a slice, ``$7`` and ``$#`` (the parameters
    left were summed after each shift: minutes before): each reads the parameters left after its shifts."""
    n = 2_000
    script = 'shift; : "${@:3:2}" "$7" $#\n' * n + "vllm serve m $1 $#"
    params = [ShellArg("sh"), *(ShellArg(f"p{i}") for i in range(1, 40_001))]
    got = [[w.text for w in c] for c in commands(script, {}, params) if c[0].text != "shift"]
    assert got[0] == [":", "p4", "p5", "p8", "39999"]
    assert got[n - 1] == [":", f"p{n + 3}", f"p{n + 4}", f"p{n + 7}", str(40_000 - n)]
    assert got[n] == ["vllm", "serve", "m", f"p{n + 1}", str(40_000 - n)]


#: ``env -S`` strings GNU env 9.1 refuses (exit status 125, nothing run): an unclosed quote, an unknown escape, a
#: trailing backslash, ``$NAME`` without braces, ``\c`` in double quotes
REFUSED = [
    "vllm serve 'm",
    'vllm serve "m',
    "vllm serve m \\q",
    "vllm serve m \\",
    "vllm serve $M",
    'vllm serve "a\\cb"',
]


@pytest.mark.parametrize("string", REFUSED)
def test_an_env_s_string_env_refuses_runs_no_engine(string: str, tmp_path: Path) -> None:
    env_program = shutil.which("env")
    if env_program is None:
        pytest.skip("no env here")
    shim = tmp_path / "vllm"
    shim.write_text("#!/bin/sh\necho ran\n")
    shim.chmod(0o755)
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"
    ran = subprocess.run(
        [env_program, "-S", string, "--port", "8000"],
        env={"PATH": path},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 125 and not ran.stdout
    script = "env -S " + shlex.quote(string) + " --port 8000"
    (cmd,) = list(commands(script, {"PATH": path}))
    # kvlint's reason is env's own message
    assert cmd.env_refused is not None and ran.stderr.strip() == f"{env_program}: {cmd.env_refused}"
    for container in (
        {"name": "e", "image": "vllm/vllm-openai:v0.8.5", "command": ["sh", "-c", script]},
        {"name": "e", "image": "vllm/vllm-openai:v0.8.5", "command": ["env", "-S", string, "--port", "8000"]},
    ):
        cfg = parse_container(LDict(container))
        assert cfg is not None and cfg.model is None
        (refusal,) = [f for f in cfg.findings if f.rule == "KV503" and f.severity == "error"]
        assert "env refuses the -S string" in refusal.message and cmd.env_refused in refusal.message
