"""What kvlint resolves of a script's arrays must be what bash gives, also where it cannot follow the script: an
element assigned or unset (``A[5]=x``, ``unset 'A[1]'``), an array filled by ``read -a``/``mapfile``, an associative
array (``declare -A``), a ``[N]=value`` element, an array assignment before a command (``A=(a b) true``). Against bash
itself (the harness of tests/test_shell_state50.py): the words kvlint resolves before its first unresolved word are
bash's first words, those after its last are bash's last; a script kvlint resolves whole gives bash's words exactly.
Offline; bash and coreutils' env only (skipped without them)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_state50 import _bash  # noqa: E402

SCRIPTS = [
    # an element assigned, appended to or unset, or the array filled by a builtin: not the elements kvlint kept
    'A=(a b c); A[5]=x; vllm serve m "${A[@]}" ${#A[@]} x',
    'A=(a b); A[0]=z; vllm serve m "${A[@]}" $A x',
    'A=(a b); A[1]+=z; vllm serve m "${A[1]}" x',
    'A=(a b c); unset \'A[1]\'; vllm serve m "${A[@]}" "${A[2]}" x',
    'A=(a b); declare A[3]=q; vllm serve m "${A[@]}" x',
    'A=(a b); read -r -a A <<< "p q r"; vllm serve m "${A[@]}" x',
    'A=(a b); mapfile -t A < /dev/null; vllm serve m "${A[@]}" x',
    'A=(a b); (A[1]=z); vllm serve m "${A[@]}" x',
    # the name made a new variable or unset, then given a value equal to element 0: no longer the array
    'A=(a b); f() { local A=a; vllm serve m "${A[@]}" ${#A[@]} x; }; f',
    'A=(a b); f() { declare A; A=a; vllm serve m "${A[@]}" x; }; f',
    'A=(a b); unset A; A=a; vllm serve m "${A[@]}" x',
    'A=(a b); unset -v A; A=a; vllm serve m "${A[@]}" x',
    # an associative array (declare -A, before or with its assignment) is no list; a [N]=value element is assigned
    # at N; an array assignment in a loop or a function's local one sets $A (element 0) all the same
    'declare -A M=([a]=1 [b]=2); vllm serve m "${M[@]}" "${M[0]}" x',
    'declare -A M; M=(x y); vllm serve m "${M[@]}" $M x',
    'typeset -gA M=(x y); vllm serve m "${M[@]}" x',
    'A=x; A=([2]=p q); vllm serve m "${A[@]}" "$A" "${A[3]}" x',
    "A=x; for i in 1; do A=(y); done; vllm serve m $A x",
    "f() { local -a A=(y z); vllm serve m $A x; }; A=x; f",
    # an array assignment before a command's name sets nothing in the shell; before another assignment it does
    'A=(a b) true; vllm serve m "${A[@]}" x',
    'A=(1 2); A=(p q) true; A+=(r) true; vllm serve m "${A[@]}" $A x',
    'A=(a b) B=1; vllm serve m "${A[@]}" $B',
    'A=(a b); A=(c) >/dev/null; A+=(d) 2>&1; A+=(e) > /dev/null 2>&1; vllm serve m "${A[@]}" x',
]


def _agrees(words: list[tuple[str, bool]], argv: list[str]) -> bool:
    """kvlint's words (text, unresolved) against bash's argv: equal when all are resolved; else the resolved words
    before the first unresolved one and after the last one are bash's first and last words."""
    flags = [u for _t, u in words]
    if not any(flags):
        return [t for t, _u in words] == argv
    first = flags.index(True)
    last = len(flags) - 1 - flags[::-1].index(True)
    head = [t for t, _u in words[:first]]
    tail = [t for t, _u in words[last + 1 :]]
    return (
        len(head) + len(tail) <= len(argv)
        and argv[: len(head)] == head
        and argv[len(argv) - len(tail) :] == tail
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_what_kvlint_resolves_of_an_array_is_what_bash_gives(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, _environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert _agrees([(w.text, w.unresolved) for w in engine[0]], argv), (argv, engine[0])


def test_an_array_left_whole_is_still_read() -> None:
    # the arrays a script does not change by element are read as before (ARGS=(--tensor-parallel-size 4))
    (engine,) = [
        c
        for c in commands('ARGS=(--tensor-parallel-size 4); X[1]=y; vllm serve m "${ARGS[@]}"', {})
        if c[0].text == "vllm"
    ]
    assert [w.text for w in engine[3:]] == ["--tensor-parallel-size", "4"]
    assert not any(w.unresolved for w in engine)


@pytest.mark.parametrize("script", ["A=(a b)", "vllm serve m; A=(a b)", "A=(a b", "A=(a b) B=(c)"])
def test_an_array_assignment_ending_the_script_is_read(script: str) -> None:
    # (nothing after the `)`: no command it could be the prefix of)
    assert all(c[0].text != "A" for c in commands(script, {}) if c)
