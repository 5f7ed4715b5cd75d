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
    # arrays: assigned whole, appended to, read whole, by element, counted; in a subshell not kept
    'ARGS=(--tensor-parallel-size 4); vllm serve m "${ARGS[@]}"',
    'A=(a "b c"\n d); A+=(e); vllm serve m "${A[@]}" ${A[@]} "${A[*]}" "${A[1]}" ${#A[@]} $A "${A[9]}"',
    'A=(1 2); (A=(3)); A+=(4) | cat; vllm serve m "${A[@]}"',
    'A=(); B=x; A+=(y); B+=(z); vllm serve m "${A[@]}" "${B[@]}" x',
    'declare -a A=(--x 1); set -- p q; C=("$@" "$X"); vllm serve m "${A[@]}" "${C[@]}"',
    'unset X; X=(u); unset X; vllm serve m "${X[@]}" x',
    'export A=1; A=(2 3); vllm serve m "${A[@]}"',
    'IFS=,; A=(a,b "c,d"); vllm serve m ${A[@]} "${A[*]}"',
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


#: The wrappers shell51 added, run by bash with a ``vllm`` that prints its arguments (skipped where the tool is not
#: installed, chroot where it is not allowed): util-linux 2.38's flock (``-c COMMAND`` after the file runs it with
#: ``$SHELL -c``), coreutils 9.1's chroot
WRAPPED = [
    "flock -w 5 {lock} vllm serve m --max-model-len 4096",
    "flock --timeout=5 -E 3 -- {lock} vllm serve m",
    "flock -sw5 {lock} -c 'vllm serve m --port 1'",
    "flock {lock} --command 'A=2; vllm serve m $A'",
    "flock {lock} -c 'vllm serve m' extra; vllm serve other",  # more than one word after -c: flock exits 64
    "chroot --userspec=0:0 --groups 0 / vllm serve m",
    "chroot --skip-chdir / vllm serve m",
]


@pytest.mark.parametrize("script", WRAPPED)
def test_the_engine_command_behind_flock_and_chroot_is_the_one_bash_runs(script: str, tmp_path: Path) -> None:
    bash, tool = shutil.which("bash"), shutil.which(script.split()[0])
    if bash is None or tool is None:
        pytest.skip(f"no {script.split()[0]} here")
    shim = tmp_path / "vllm"
    shim.write_text('#!/bin/sh\nprintf "%s\\n" vllm "$@"\n')
    shim.chmod(0o755)
    script = script.format(lock=tmp_path / "lock")
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"
    ran = subprocess.run(
        [bash, "-c", script],
        env={"PATH": path, "SHELL": "/bin/sh"},
        capture_output=True,
        text=True,
        check=False,
    )
    if script.startswith("chroot") and "Operation not permitted" in ran.stderr:
        pytest.skip("chroot not permitted here")
    read = [[w.text for w in cmd] for cmd in commands(script, {"PATH": path}) if cmd[0].text == "vllm"]
    assert read == [ran.stdout.splitlines()], ran.stderr


@pytest.mark.parametrize(
    ("script", "engine"),
    [
        ("doas -u app vllm serve m", ["vllm", "serve", "m"]),  # doas 6.8 "+a:C:Lnsu:"
        ("doas -nuapp -- vllm serve m", ["vllm", "serve", "m"]),
        ("doas -a bsdauth vllm serve m", ["vllm", "serve", "m"]),
        ("doas -C /etc/doas.conf vllm serve m", None),  # checks the config only
        ("doas -s vllm serve m", None),  # a shell; a command with -s is refused
        ("doas -L", None),
    ],
)
def test_doas_read_by_its_option_string(script: str, engine: list[str] | None) -> None:
    (cmd,) = list(commands(script, {}))
    assert [w.text for w in cmd] == engine if engine is not None else cmd[0].text == "doas"


def test_an_exec_form_flock_runs_its_command_string_with_a_shell() -> None:
    cfg = parse_container(
        LDict(
            {
                "name": "e",
                "image": "vllm/vllm-openai:v0.8.5",
                "command": [
                    "flock",
                    "/run/lock",
                    "-c",
                    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 2048",
                ],
            }
        )
    )
    assert cfg is not None and cfg.model is not None and cfg.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert cfg.get("max_model_len") == 2048


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_an_env_entry_execve_refuses_is_a_kv503_error(extra: int) -> None:
    """An environment string (``NAME=value`` and its NUL) of more than 131,072 bytes: Linux's execve(2) refuses it with
    E2BIG as it refuses such an argument, so the container never starts. The boundary is checked against the kernel
    here (a program run with that environment), not written down."""
    true = shutil.which("true")
    if true is None:
        pytest.skip("no true here")
    value = "x" * (131_072 - len("BIG_VALUE=") - 1 + extra)
    try:
        subprocess.run([true], env={"BIG_VALUE": value}, check=False)
        refused = False
    except OSError as e:
        assert e.errno == 7  # E2BIG
        refused = True
    container = {
        "name": "e",
        "image": "vllm/vllm-openai:v0.8.5",
        "command": ["vllm", "serve", "m"],
        "env": [{"name": "BIG_VALUE", "value": value}],
    }
    cfg = parse_container(LDict(container))
    assert cfg is not None
    errors = [f for f in cfg.findings if f.rule == "KV503" and f.severity == "error"]
    assert bool(errors) == refused
    if refused:
        assert "BIG_VALUE" in errors[0].message and "argument list too long" in errors[0].message


def test_an_array_assigned_a_scalar_since_stays_unresolved() -> None:
    # bash: `A=(1 2); A=x` sets element 0 (x 2); kvlint does not follow that, and does not guess
    (engine,) = list(commands('A=(1 2); A=x; vllm serve m "${A[@]}" ${#A[@]}', {}))
    assert [(w.text, w.unresolved) for w in engine[3:]] == [("${A[@]}", True), ("${#A[@]}", True)]
    # appended in a loop: how many elements is not known (kserve's llm template counts its HCAs so)
    (engine,) = [
        c
        for c in commands('A=(); for h in $(ls); do A+=("$h"); done; vllm serve m ${#A[@]} "${A[@]}"', {})
        if c[0].text == "vllm"
    ]
    assert all(w.unresolved for w in engine[3:])
    # `local A=(...)` in a function: not kept (the array is the call's)
    (engine,) = list(commands('f() { local A=(1); vllm serve m "${A[@]}"; }; f', {}))
    assert engine[-1].unresolved


def test_an_array_of_engine_arguments_is_read_and_sized() -> None:
    """The array's elements are the engine's arguments (KV403 said "tensor-parallel-size 1" of 4 GPUs, the arguments
    in ``"${ARGS[@]}"`` not seen)."""
    script = (
        "ARGS=(--tensor-parallel-size 4\n  --max-model-len 4096)\n"
        'vllm serve meta-llama/Llama-3.1-8B-Instruct "${ARGS[@]}"'
    )
    cfg = parse_container(
        LDict({"name": "e", "image": "vllm/vllm-openai:v0.8.5", "command": ["bash", "-c", script]})
    )
    assert cfg is not None and cfg.get("tensor_parallel_size") == 4 and cfg.get("max_model_len") == 4096
