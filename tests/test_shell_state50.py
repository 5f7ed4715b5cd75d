"""The state a script's shell keeps from one command to the next, against bash itself: each script runs in bash with
a ``vllm`` on ``PATH`` that prints its arguments and its environment, and the engine command kvlint reads must be
the one that ran. A prefix assignment (``A=1 true``) or ``env A=1`` holds for that command only, not for later
``$A``; assignments expand left to right (``A=1 B=$A``); ``set -a``/``set -o allexport`` export what is assigned
after it; what ``eval`` assigns and exports stays in the shell; a nested ``bash -c`` starts from its command's
environment (the shell's exported variables), not from all the shell's variables. A word kvlint leaves unresolved
(``$A`` of a variable it cannot know, which bash may expand to nothing) is left out of the comparison, as is a
variable whose value holds one: every word and value kvlint resolves must be the one bash passes. Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import ShellArg, commands, unresolved
from kvlint.source import Loc

SCRIPTS = [
    "A=1 true; vllm serve m --max-model-len $A",
    "env A=1 true; vllm serve m $A",
    "X=2 true; vllm serve m $X",
    "A=1 B=$A; export B; vllm serve m $B",
    "A=1 B=$A vllm serve m",
    "export A=1 B=$A; vllm serve m",
    "set -a; A=1; vllm serve m $A",
    "set -o allexport; A=1; set +a; B=2; vllm serve m",
    "set -ea; declare C=3; vllm serve m",
    "set +o allexport; A=1; vllm serve m",
    'eval "export A=1"; vllm serve m $A',
    'eval "A=1"; vllm serve m $A',
    "A=1 eval 'vllm serve m $A'",
    "A=1 eval true; vllm serve m $A",
    "eval 'set -a'; A=1; vllm serve m",
    "A=1; bash -c 'vllm serve m $A'",
    "A=1 bash -c 'vllm serve m $A'",
    "export A=1; A=2 bash -c 'A=3; vllm serve m $A'",
    "set -a; eval 'A=1'; bash -c 'vllm serve m $A'",
    "unset X; bash -c 'vllm serve m $X'",
    "env -u X bash -c 'vllm serve m $X'",
    "A=1; env A=2 bash -c 'vllm serve m $A'",
    'A=" b  c "; vllm serve m x${A}y $A',
    'A=" "; vllm serve m x${A}y',
    "A=$'a\\xc2\\xa0b'; vllm serve m $A",
    "A=$'a\\rb\\tc'; vllm serve m $A",
    # a subshell: what it assigns, exports, set -a's, set --'s or defines stays in it
    "( A=5 ); vllm serve m $A",
    "( set -a; A=1 ); bash -c 'vllm serve m $A'",
    "( set -a ); A=1; bash -c 'vllm serve m $A'",
    "( export A=1 ); vllm serve m",
    "export A=1; ( unset A ); vllm serve m $A",
    'set -- a; ( set -- x y ); vllm serve m "$@"',
    "( f() { vllm serve m; } ); f; vllm serve m --x 1",
    "(A=1; (B=2); vllm serve m $A $B)",
    "( a=(1 2); B=3 ); vllm serve m $B",
    "( case x in x) A=1 ;; esac ); vllm serve m $A",
    "case x in (x) A=1 ;; esac; vllm serve m $A",
    "if true; then ( export A=1 ); fi; vllm serve m",
    "export A=1; ( A=2 ); bash -c 'vllm serve m $A'",
    "f() { (local A=2); vllm serve m $A; }; A=1; f",
    "( sleep 0; A=2 ) & A=3; vllm serve m $A",
]

_SHELL_OWN = ("SHLVL", "PWD", "OLDPWD", "_")


def _bash(script: str, tmp_path: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The arguments and environment bash's ``vllm`` ran with."""
    shim = tmp_path / "vllm"
    shim.write_text(f"#!/bin/sh\nprintf '%s\\0' vllm \"$@\"\nprintf '\\1'\nexec {shutil.which('env')} -0\n")
    shim.chmod(0o755)
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script], env=env, capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    argv, _, environ = ran.stdout.partition(b"\1")
    pairs = [p.decode() for p in environ.split(b"\0") if p]
    return [a.decode() for a in argv.split(b"\0")[:-1]], {
        k: v for k, _, v in (p.partition("=") for p in pairs) if k not in _SHELL_OWN
    }


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_gets_the_words_and_environment_bash_gives_it(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert [w.text for w in engine[0] if not w.unresolved] == argv
    assert engine[0].environ is not None
    read = {k: v for k, v in engine[0].environ.get()[0].items() if k not in _SHELL_OWN}
    # a value holding a reference kvlint could not resolve (``export A=1 B=$A``: B's ``$A`` is expanded before
    # export runs, to what the shell held) is left out, as such a word is
    assert {k: v for k, v in read.items() if not unresolved(v)} == {
        k: v for k, v in environ.items() if not (k in read and unresolved(read[k]))
    }


def test_a_prefix_assignment_leaves_later_references_unresolved() -> None:
    # bash expands $A to what the shell holds (here: nothing kvlint knows; the image may set it), never the 1 that
    # only `true` saw
    (_true, engine) = commands("A=1 true; vllm serve m --max-model-len $A", {})
    assert engine[-1].text == "$A" and engine[-1].unresolved


def test_thousands_of_nested_shells_behind_thousands_of_variables_read_each_variable() -> None:
    n = 20_000
    script = "".join(f"export a{i}={i}; sh -c :\n" for i in range(n)) + "sh -c 'vllm serve m $a19999'\n"
    (engine,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == ["vllm", "serve", "m", "19999"]
    env = engine.environ.get()[0]  # type: ignore[union-attr]
    assert len(env) == n and env["a0"] == "0"


#: scripts run as ``bash -c SCRIPT sh 'a b' '' 'c  d'`` (kvlint: the same ``$0 $1 ...``)
PARAMETER_SCRIPTS = [
    "vllm serve m x$@y",
    "vllm serve m --x=$@",
    'vllm serve m --x="$@"',
    'vllm serve m a"$@"b',
    'vllm serve m "$@"',
    'vllm serve m "x$@"',
    'vllm serve m "${@}"',
    "vllm serve m $*",
    'vllm serve m "$*"',
    'vllm serve m x"$*"y',
    "vllm serve m $1",
    'vllm serve m "$1"',
    'vllm serve m $3 "$3" ${3}',
    "vllm serve m $2",
    'vllm serve m "$2"',
    "vllm serve m x$2",
    'vllm serve m "$1$3"',
    'vllm serve m x"$1"',
    'vllm serve m ""$@',
    'A="$@"; vllm serve m "$A"',
    'set -- m --max-model-len 4096; vllm serve "$@"',
    'set -- "$@" --port 8000; vllm serve m "$@"',
    'set -e; vllm serve m "$@"',
    'set -eo pipefail x y; vllm serve m "$2"',
    'set -; vllm serve m "$@"',
    'set --; vllm serve m x "$@"',
    'f() { set -- n; vllm serve "$1"; }; f m',
    'shift; vllm serve m "$@"',
    'shift 2; vllm serve m "$1"',
    'shift 4; vllm serve m "$@"',
    'shift x; vllm serve m "$1"',
    'set -- serve m --max-model-len 4096; shift; vllm serve "$@"',
    'f() { shift; vllm serve m "$@"; }; f a --x 1',
    'f() { shift; }; f a; vllm serve m "$1"',
]


@pytest.mark.parametrize("script", PARAMETER_SCRIPTS)
def test_positional_parameters_are_split_and_joined_as_bash_does(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    params = ["sh", "a b", "", "c  d"]
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    shim = tmp_path / "vllm"
    shim.write_text("#!/bin/sh\nprintf '%s\\0' vllm \"$@\"\n")
    shim.chmod(0o755)
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script, *params],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    argv = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    positional = [ShellArg(p) for p in params]
    engine = [c for c in commands(script, env, positional) if c and c[0].text == "vllm"]
    assert [w.text for w in engine[0]] == argv


def test_a_parameter_word_keeps_the_position_of_its_argument() -> None:
    # `sh -c 'vllm serve $1' sh 'm --max-model-len 4096'`: each field of the split argument points at that argument
    loc = Loc("pod.yaml", 9, 7)
    (engine,) = commands("vllm serve $1", {}, [ShellArg("sh"), ShellArg("m --max-model-len 4096", loc=loc)])
    assert [(w.text, w.loc) for w in engine[2:]] == [("m", loc), ("--max-model-len", loc), ("4096", loc)]


FUNCTION_SCRIPTS = [
    'f() { vllm serve "$@"; }; f m --max-model-len 4096',
    'function f { vllm serve "$@"; }; f m',
    'serve() {\n  exec vllm serve "$@" --port 8000\n}\nserve m --max-model-len 4096',
    'function run() { vllm serve $1; }\nrun "m n"',
    "f() { export A=1; }; f; vllm serve m $A",
    'f() { if true; then { vllm serve "$1"; }; fi; }; B=2 f m',
    'f () \n{\n  A=3\n}\nf; export A; vllm serve m "$A"',
    'f() { vllm serve "$@"; }\nA=1 f m',
    "f() { local A=5; }; A=1; f; vllm serve m $A",
    "f() { declare A=5 B=2; }; A=1; f; vllm serve m $A",
    "f() { typeset -x A=5; }; A=1; f; vllm serve m $A",
    "f() { declare -g A=5; }; A=1; f; vllm serve m $A",
    "f() { local A; A=3; }; A=1; f; vllm serve m $A",
    "f() { local A=3; g; }; g() { A=4; }; A=1; f; vllm serve m $A",
    "export A=1; f() { local A=5; bash -c 'vllm serve m $A'; }; f",
    "A=1; f() { local -x A=5; }; f; bash -c 'vllm serve m $A'",
    "f() { local A=3 B=$A; vllm serve m $B; }; A=1; f",
    "local A=3; vllm serve m --x $A",
    # functions calling functions, deeper than the three nested scripts read
    'f() { vllm serve "$@"; }; g() { f "$@"; }; h() { g "$@" --y 2; }; i() { h "$@"; }; i m --x 1',
    "a() { b; }; b() { c; }; c() { d; }; d() { e; }; e() { bash -c 'vllm serve m --x 1'; }; a",
]


@pytest.mark.parametrize("script", FUNCTION_SCRIPTS)
def test_a_function_runs_its_body_where_it_is_called(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert [w.text for w in engine[0] if not w.unresolved] == argv
    read = {k: v for k, v in engine[0].environ.get()[0].items() if k not in _SHELL_OWN}  # type: ignore[union-attr]
    assert read == environ


def test_a_function_never_called_runs_nothing() -> None:
    # was read as `vllm serve` (no model) where the function is defined
    assert [[w.text for w in c] for c in commands('f() { vllm serve "$@"; }\necho ready', {})] == [
        ["echo", "ready"]
    ]


def test_a_function_body_points_at_its_script_and_its_arguments_at_the_call() -> None:
    script = 'f() {\n  vllm serve "$@"\n}\nf m'
    (engine,) = commands(script, {})
    assert [(w.text, w.offset) for w in engine] == [
        ("vllm", script.index("vllm")),
        ("serve", script.index("serve")),
        ("m", script.rindex("m")),
    ]


def test_function_calls_are_bounded() -> None:
    # a function calling itself twice, and thousands of calls: at most a bounded number of bodies read
    got = list(commands("f() { f; f; vllm serve m; }; f\n" + "f\n" * 5000, {}))
    assert 0 < sum(1 for c in got if c[0].text == "vllm") <= 64


SOURCE_SCRIPTS = [
    ". /dev/stdin <<EOF\nexport A=1\nEOF\nvllm serve m $A",
    "source /dev/stdin <<'EOF'\nB=2\nexport B\nEOF\nvllm serve m $B",
    'source /dev/stdin <<< "export C=3"; vllm serve m $C',
    '. /dev/stdin <<< "vllm serve m --max-model-len 4096"',
    'S="export D=4"; . /dev/stdin <<< "$S"; vllm serve m "$D"',
    'true <<< "x"; vllm serve m',
    '. /dev/stdin a b <<"EOF"\nvllm serve m "$1" "$2"\nEOF',
    "cat <<A >/dev/null; . /dev/stdin <<B\nvllm serve x\nA\nexport E=5\nB\nvllm serve m $E",
]


@pytest.mark.parametrize("script", SOURCE_SCRIPTS)
def test_a_script_sourced_from_the_command_input_runs_in_the_shell(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert [w.text for w in engine[0] if not w.unresolved] == argv
    read = {k: v for k, v in engine[0].environ.get()[0].items() if k not in _SHELL_OWN}  # type: ignore[union-attr]
    assert read == environ


def test_scripts_sourced_from_here_documents_on_one_line_are_bounded() -> None:
    n = 3000
    script = ". /dev/stdin <<E; " * n + "vllm serve m\n" + "export A=1\nE\n" * n
    got = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert len(got) == 1


@pytest.mark.parametrize(
    "options",
    [
        ["-a"],
        ["-ac"],
        ["-o", "allexport"],
        ["-a", "+a"],
        ["-e", "-o", "pipefail"],
        ["+o", "allexport", "-ea"],
    ],
)
def test_allexport_given_to_the_shell_exports_the_script_s_assignments(
    options: list[str], tmp_path: Path
) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    script = "A=1; vllm serve m"
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    invocation = [*options] if options[-1].endswith("c") else [*options, "-c"]
    _argv, environ = _bash(f"bash {' '.join(invocation)} '{script}'", tmp_path, env)
    # the same shell as an exec-form list, and nested in a script
    cfg = parse_container(
        {"name": "e", "image": "vllm/vllm-openai:v0.8.5", "command": ["bash", *invocation, script]}
    )
    assert cfg is not None and not isinstance(cfg, list)
    assert cfg.env.get("A") == environ.get("A")
    (engine,) = [
        c for c in commands(f"bash {' '.join(invocation)} '{script}'", env) if c and c[0].text == "vllm"
    ]
    assert engine.environ is not None and engine.environ.get()[0].get("A") == environ.get("A")


ARITHMETIC_SCRIPTS = [
    "A=1; (( A++ )); vllm serve m $A",
    "A=1; ((A+=2)); vllm serve m $A",
    "A=1; let A=5; vllm serve m $A",
    "A=1; B=$(( A += 4 )); vllm serve m $A",
    "A=1; (( --A )); vllm serve m $A",
    "export A=1; (( A=7 )); bash -c 'vllm serve m $A'",
]


@pytest.mark.parametrize("script", ARITHMETIC_SCRIPTS)
def test_a_variable_arithmetic_assigns_is_no_longer_its_old_value(script: str, tmp_path: Path) -> None:
    # kvlint does not evaluate arithmetic that assigns: the variable is unresolved after it, not read as 1
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}
    argv, _environ = _bash(script, tmp_path, env)
    assert argv[-1] != "1"  # bash changed it
    (engine,) = [c for c in commands(script, env) if c and c[0].text == "vllm"]
    assert [w.text for w in engine[:3]] == argv[:3]
    assert engine[-1].unresolved


@pytest.mark.parametrize(
    "script",
    [
        "A=1; (( A == 1 )); vllm serve m $A",
        "A=1; (( A <= 2 )); vllm serve m $A",
        "A=1; x=$((A*2)); vllm serve m $A",
    ],
)
def test_arithmetic_that_only_reads_a_variable_keeps_it(script: str) -> None:
    (engine,) = [c for c in commands(script, {}) if c and c[0].text == "vllm"]
    assert engine[-1].text == "1" and not engine[-1].unresolved
