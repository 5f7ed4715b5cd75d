"""Field splitting at an ``IFS`` the script sets, against bash itself: ``IFS=,``, ``IFS=$'\\n'``, ``IFS=`` (no
splitting), blanks and other characters mixed, for a variable's value and for ``$*``/``$@``/``$1`` (``"$*"`` joined
with IFS's first character). IFS from the container's environment is not taken (bash resets it at start). Each
script runs in bash with a ``vllm`` on ``PATH`` that prints its arguments; the words kvlint reads must be the ones bash
passes. Offline; bash only (skipped without it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands


def _q(text: str) -> str:
    """``text`` as a bash ``$'...'`` string."""
    body = text.replace("\\", "\\\\").replace("'", "\\'").replace("\t", "\\t").replace("\n", "\\n")
    return f"$'{body}'"


VALUES = [
    ",b",
    "b,",
    ",,",
    "a,,b",
    " , b , ",
    ",",
    "a, ,b",
    "m --max-model-len 4096",
    "a\tb\nc",
    "",
    " ",
    "a:b c",
]
SCRIPTS = [
    "IFS=,; A=serve,m,--max-model-len,4096; vllm $A",
    "IFS=$'\\n'; A='m --max-model-len 4096'; vllm serve $A",
    "IFS=; A='m --max-model-len 4096'; vllm serve $A x$A",
    "IFS=,; unset IFS; A='m --max-model-len 4096'; vllm serve $A",
    "IFS=, vllm serve m $X",
    "vllm serve m $X",
    "f() { IFS=:; }; f; A=m:--port:80; vllm serve $A",
    "IFS=:; set -- m 'a b' c; vllm serve \"$*\" $*",
    "IFS=; set -- m 'a b' '' c; vllm serve \"$*\" $* $@",
    # IFS starts at bash's default, which a script saves and puts back
    'OLDIFS=$IFS; IFS=,; A="x,y z"; IFS=$OLDIFS; vllm serve m $A',
    'IFS="$IFS,"; A="x,y z"; vllm serve m $A "$IFS"',
    # an assignment's value is not split: B keeps A's blanks
    'A="x  y"; B=$A; vllm serve m "$B"',
    "A=$'a\\tb'; B=$A; vllm serve m \"$B\"",
    'set -- "a  b" c; B=$@; C=$*; vllm serve m "$B" "$C"',
    'IFS=,; set -- "a  b" c; B=$@; C=$*; vllm serve m "$B" "$C"',
]
# a variable's value, split at each IFS (blanks, other characters, both, none)
SCRIPTS += [
    f"IFS={_q(ifs)}; A={_q(v)}; vllm serve m $A x${{A}}y"
    for ifs in (",", " ,", ", \t", "", ":", "\n")
    for v in VALUES
]
# the positional parameters, at an IFS of blanks only or of other characters only
SCRIPTS += [
    f'IFS={_q(ifs)}; set -- {_q(v)} p,q {_q(v)}; vllm serve m "$*" $* $@ z$1 "x$*"'
    for ifs in (",", ":", "", "\n", "\t\n")
    for v in VALUES
]

# an array's elements expand as the positional parameters do (bash(1) "Arrays": ``${A[*]}``/``${A[@]}`` as
# ``$*``/``$@``, ``${A[1]}`` as ``$2``; one helper in kvlint serves both): the same words side by side, at IFS unset
# (bash's default), empty, of other characters or of blanks only; elements with blanks, empty ones, none at all
_ARRAY_WORDS = (
    '"${A[*]}" "$*" ${A[*]} $* ${A[@]} $@ "${A[@]}" "$@" "x${A[@]}y" "x$@y" "x${A[*]}y" "x$*y" '
    'z${A[1]} z$2 "${A[5]}" "$5" ${A[5]} $5 e'
)
SCRIPTS += [
    f'{set_ifs}A=({_q(v)} p,q {_q(v)}); set -- "${{A[@]}}"; vllm serve m {_ARRAY_WORDS}'
    for set_ifs in ("unset IFS; ", "IFS=; ", "IFS=,; ", "IFS=:; ", f"IFS={_q(chr(9) + chr(10))}; ")
    for v in VALUES
]
SCRIPTS += [
    f"{set_ifs}{arr}; vllm serve m {_ARRAY_WORDS}"
    for set_ifs in ("", "IFS=; ", "IFS=,; ")
    for arr in ("A=(); set --", "A=(''); set -- ''", "A=('a  b' '' c); set -- 'a  b' '' c", "A=(x); set -- x")
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_unquoted_expansions_are_split_at_the_script_s_ifs_as_bash_splits_them(
    script: str, tmp_path: Path
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    shim = tmp_path / "vllm"
    shim.write_text("#!/bin/sh\nprintf '%s\\0' vllm \"$@\"\n")
    shim.chmod(0o755)
    # X's value holds commas and blanks; IFS in the environment is one bash does not take
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "a,b c", "IFS": ","}
    ran = subprocess.run(
        [shutil.which("bash") or "bash", "-c", script], env=env, capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 0, ran.stderr
    argv = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    (engine,) = [c for c in commands(script, env, [ShellArg("sh")]) if c and c[0].text == "vllm"]
    assert [w.text for w in engine] == argv


def test_a_field_of_joined_parameters_points_at_its_parameter() -> None:
    a, b, c = ShellArg("sh"), ShellArg("m,--port", offset=40), ShellArg("80", offset=50)
    (engine,) = commands("IFS=,; vllm serve $*", {}, [a, b, c])
    assert [(w.text, w.offset) for w in engine[2:]] == [("m", 40), ("--port", 40), ("80", 50)]


def test_an_ifs_kvlint_cannot_know_leaves_the_split_words_unresolved() -> None:
    # IFS from a variable of the image: where bash splits $A is not known, so the word is not claimed
    (engine,) = commands('IFS=$SEP; A="x,y z"; vllm serve m $A --max-model-len 4096', {})
    assert [(w.text, w.unresolved) for w in engine[3:]] == [
        ("x,y z", True),
        ("--max-model-len", False),
        ("4096", False),
    ]
