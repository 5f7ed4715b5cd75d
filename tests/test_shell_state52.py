"""More of what bash does to a script's words, against bash itself (the harness of tests/test_shell_state50.py: a
``vllm`` on ``PATH`` that prints its arguments; every word kvlint resolves must be the one bash passes, a word it
leaves unresolved is left out of the comparison). Substring expansion (``${X: -1}``, ``${A[@]:1:2}``), the
positional parameters with a default (``${@:-d}``) and counted (``${#@}``). Offline; bash and coreutils' env only
(skipped without them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_array_writes import _agrees  # noqa: E402
from test_shell_state50 import _bash  # noqa: E402

SCRIPTS = [
    # substring expansion of a variable: a negative offset written after a blank counts from the end; out of the
    # value, nothing (unquoted: no word); split at IFS when unquoted
    'X=abc; vllm serve m ${X: -1} ${X: 1:1} ${X:1} ${X: -5} x ${X:0:0} "${X:1:0}" a${X:3}b ${X:7} "${X: -2}"',
    'X="a  b c"; vllm serve m ${X:1} "${X: -3}" ${X:0:2}y ${X:5:9} ${Y: -1} x',
    "X=4096; vllm serve m --max-model-len ${X: -4} --port ${X:1:2}",
    # of an array's elements: 0 is the first, negative from the end, out of it none
    'A=(p q 4096); vllm serve m "${A[@]: -1}" ${A[@]: -2:1} "${A[*]:1}" ${A[@]: -7} x "${A[@]:5}" "${A[@]:0:2}"',
    'IFS=,; A=(a b c); vllm serve m "${A[*]:1}" ${A[@]:1:1}',
    'A=($(f) b); vllm serve m "${A[@]: -1}" ${U[@]:1} x',
    # all the positional parameters with a default: taken when there are none (``:-``: or one empty one); counted
    'set -- a b; vllm serve m ${@:-d} "${#@}" ${#*} "${*:-d}"',
    'set --; vllm serve m ${@:-d e} "${@:-d e}" "${*:-d}" ${*-"p q"} x',
    'set -- ""; vllm serve m "${@:-d}" "${@-d}" x ${@-d} ${*:-e}',
    'set -- "" ""; vllm serve m "${@:-d}" x "${*:-d}" ${@:-d} y',
    'f() { vllm serve m "${@:-none}" ${#@} "${1:-u}"; }; f',
    'IFS=; set -- "" ""; vllm serve m "${@:-d}" / "${*:-d}"',
    # ``${N:=x}`` of a parameter that is set: its value (bash assigns nothing)
    'set -- a b; vllm serve m ${2:=x} ${1=y} "${@:=z}"',
]

#: A compound command that is part of a pipeline, or runs in the background (alone or in an AND-OR list), runs in a
#: subshell (bash(1) "Pipelines", "Lists"): what it assigns or exports is gone after it; otherwise it is kept
ISOLATED = [
    "{ A=1; } | cat; vllm serve m $A",
    "{ export A=1; } | cat; vllm serve m $A",
    "cat /dev/null | { A=1; }; vllm serve m $A",
    "if true; then A=1; fi | cat; vllm serve m $A",
    "for i in 1; do A=1; done | cat; vllm serve m $A",
    "true | while read x; do A=1; done; vllm serve m $A",
    "case x in x) A=1 ;; esac | cat; vllm serve m $A",
    "{ A=1; } & wait; vllm serve m $A",
    "A=1 && (B=2) & wait; vllm serve m $A $B",
    "A=1 || (B=2) & wait; vllm serve m $A $B",
    "A=1 && { B=2; } & wait; vllm serve m $A $B",
    "{ A=1; } && B=2 & wait; vllm serve m $A $B",
    "(A=1) && B=2 && C=3 & wait; vllm serve m $A $B $C",
    "true && { A=1; } | cat; vllm serve m $A",
    "{ A=1 && B=2 & } ; wait; vllm serve m $A $B",
]
KEPT = [
    "{ A=1; }; B=2; if true; then C=3; fi; vllm serve m $A $B $C",
    "A=0; { A=1; if true; then { B=2; } fi; } > /dev/null; vllm serve m $A $B",
    "A=1 && { B=2; C=3; } && D=4; vllm serve m $A $B $C $D",
    "for i in 1; do A=1; done; while false; do :; done; vllm serve m $A",
    "{ A=1; } | cat; B=2; { C=3; }; vllm serve m $B $C",
]


@pytest.mark.parametrize("script", ISOLATED + KEPT)
def test_a_compound_command_in_a_pipeline_or_the_background_keeps_its_state_apart(
    script: str, tmp_path: Path
) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in engine if not w.unresolved] == argv
    if script in KEPT:
        assert not any(w.unresolved for w in engine)


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x", "HOME": "/home/u"}


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_engine_gets_the_words_bash_gives_it(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert _agrees([(w.text, w.unresolved) for w in engine[0]], argv), (argv, engine[0])
    # every value these read is known: each word is resolved, as bash gives it
    if not any(unknown in script for unknown in ("${Y:", "$(f)", "IFS=;")):
        assert [w.text for w in engine[0] if not w.unresolved] == argv


def test_a_substring_of_a_known_value_is_read() -> None:
    (engine,) = commands("X=--max-model-len=4096; A=(1 2 3); vllm serve m ${X: -20} ${A[@]: -1}", {})
    assert [w.text for w in engine] == ["vllm", "serve", "m", "--max-model-len=4096", "3"]
    assert not any(w.unresolved for w in engine)


def test_an_unknown_substring_keeps_its_text() -> None:
    (engine,) = commands("vllm serve m ${U: -1} ${U:2:3} ${A[@]: -2:1} ${@: -1}", {})
    assert [w.text for w in engine[3:]] == ["${U: -1}", "${U:2:3}", "${A[@]: -2:1}", "${@: -1}"]
    assert all(w.unresolved for w in engine[3:])


_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        command: ["bash", "-c"]
        args: [%s]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    "script",
    [
        "vllm serve Qwen/Qwen2.5-7B-Instruct ${X: -1}",
        'vllm serve Qwen/Qwen2.5-7B-Instruct "${A[@]: -2:1}"',
    ],
)
def test_an_unknown_substring_is_a_word_kvlint_cannot_see_not_an_unknown_option(script: str) -> None:
    """``${X: -1}`` with X unknown: its blank is the expansion's syntax, not one of the word vLLM gets (which made
    it an "unexpected positional argument", KV205, an error): a word kvlint cannot resolve (KV503)."""
    result = run_documents(load_text(_MANIFEST % json.dumps(script), "d.yaml"), Options(allow_hub=False))
    rules = {d.rule: d.message for d in result.diagnostics}
    assert "KV205" not in rules
    assert "expands to arguments kvlint cannot see" in rules["KV503"]


def test_substrings_of_a_long_value_stay_bounded() -> None:
    """10,000 substring expansions of a 100,000-character value (each searched the whole value for an unresolved
    reference before: 20 s of CPU): the ones the budget affords are made, the rest kept unresolved; bounded CPU
    (the limit of tests/test_hostile_shapes.py, :data:`LIMIT_S`; the growth is bench/hostile.py's sh_substrings)."""
    from test_hostile_shapes import LIMIT_S

    script = (
        "IFS=,; A='" + "," * 100_000 + "'; " + ': ${A:1} "${A: -99999}"; ' * 10_000 + "vllm serve m ${A:0:3}"
    )
    t = time.process_time()
    got = list(commands(script, {}))
    assert time.process_time() - t < LIMIT_S
    assert [w.text for w in got[0]] == [":", *[""] * 99_999, "," * 99_999]
    assert len(got) == 10_001 and all(w.unresolved for w in got[-2][1:])  # (the budget spent by then)


@pytest.mark.parametrize("script", ['set -- a ""; vllm serve m ${2:=x}', "vllm serve m ${3=y} ${@:=z}"])
def test_assigning_to_a_positional_parameter_is_not_read_as_a_default(script: str, tmp_path: Path) -> None:
    """bash refuses to assign a positional or special parameter the default of ``${2:=x}`` ("$2: cannot assign in
    this way", a non-interactive shell exits 1, the engine never runs): kvlint does not take the default."""
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    ran = subprocess.run(
        ["bash", "-c", script], env=_env(tmp_path), capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 1 and b"cannot assign in this way" in ran.stderr
    engine = list(commands(script, {}, [ShellArg("bash")]))[-1]
    assert engine[3].unresolved and engine[3].text in ("${2:=x}", "${3=y}")


XARGS = [
    "printf -- '--port\\n1\\n' | xargs vllm serve m --max-model-len 8",
    "printf -- '--port 1' | xargs -0 -n 3 -- vllm serve m",
    "printf -- 'a\\n' | xargs -I {} vllm serve m --served-model-name {}",
    "printf -- 'a b' | xargs -d ' ' -E x -e vllm serve m",
    "printf -- 'a' | xargs --max-args 2 --delimiter=, vllm serve m",
]


@pytest.mark.parametrize("script", XARGS)
def test_xargs_runs_the_engine_with_words_kvlint_cannot_see(script: str, tmp_path: Path) -> None:
    """GNU xargs runs its command with the words it reads from its input appended (``-I``: in place of the replace
    string): kvlint reads the command behind xargs' options, its words the start of bash's (those it can see), and
    marks it as not all of them (:attr:`ShellCommand.appends`)."""
    if shutil.which("bash") is None or shutil.which("env") is None or shutil.which("xargs") is None:
        pytest.skip("no bash, env or xargs here")
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert engine.appends is not None and "xargs" in engine.appends
    texts = [w.text for w in engine]
    if "-I" not in script:
        assert argv[: len(texts)] == texts and len(argv) > len(texts)


def _findings(script: str, image: str = "vllm/vllm-openai:v0.10.1", gpus: int = 4) -> dict[str, list[str]]:
    text = (_MANIFEST % json.dumps(script)).replace("vllm/vllm-openai:v0.10.1", image)
    text = text.replace("nvidia.com/gpu: 1", f"nvidia.com/gpu: {gpus}")
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    out: dict[str, list[str]] = {}
    for d in result.diagnostics:
        out.setdefault(d.rule, []).append(d.message)
    return out


@pytest.mark.parametrize(
    ("command", "image"),
    [
        ("vllm serve Qwen/Qwen2.5-7B-Instruct", "vllm/vllm-openai:v0.10.1"),
        ("python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct", "lmsysorg/sglang:v0.4.9"),
    ],
)
def test_an_engine_behind_xargs_is_not_taken_at_its_defaults(command: str, image: str) -> None:
    """``... | xargs vllm serve M`` on 4 GPUs: the words xargs appends may set the parallel sizes and the context
    limit, so neither KV403 ("tensor-parallel-size 1 uses only 1") nor KV202 ("no --max-model-len") is asserted;
    a KV503 warning says why. The same command without xargs has both (the test can fail)."""
    plain = _findings(command, image)
    assert "KV403" in plain and "KV202" in plain
    got = _findings("cat /etc/engine-args | xargs " + command, image)
    assert "KV403" not in got and "KV202" not in got
    (msg,) = got["KV503"]
    assert "arguments are not all known: xargs adds words it reads from its input" in msg
    assert "not sized" in msg


@pytest.mark.parametrize(
    ("command", "image"),
    [
        ("vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size", "vllm/vllm-openai:v0.10.1"),
        ("vllm serve Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization", "vllm/vllm-openai:v0.10.1"),
        ("text-generation-launcher --model-id Qwen/Qwen2.5-7B-Instruct --num-shard", "ghcr.io/huggingface/text-generation-inference:3.3.4"),
        ("python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp", "lmsysorg/sglang:v0.4.9"),
    ],
)  # fmt: skip
def test_an_option_written_last_before_xargs_appends_gets_its_value_from_them(
    command: str, image: str
) -> None:
    """``cat /etc/tp | xargs vllm serve M --tensor-parallel-size``: xargs appends the words it reads after the last
    one, so the option's value is the first of them, not missing: no KV206 "expected a value" error (the same
    command without xargs has it: the test can fail), and the option is a setting kvlint does not know."""
    plain = _findings(command, image)
    assert any("expected a value" in m for m in plain.get("KV206", [])), plain
    got = _findings("cat /etc/value | xargs " + command, image)
    assert not any("expected a value" in m for m in got.get("KV206", [])), got
    assert any("arguments are not all known" in m for m in got["KV503"])


@pytest.mark.parametrize(
    "unit",
    ["if :; then A=1; fi | cat; { B=2; } && C=3 & ", "{ ", "while :; do { if :; then ", "(A=1) && B=2 & "],
)
def test_compound_commands_are_read_ahead_once(unit: str) -> None:
    """8,000 compound commands, in a row or nested (each one at nesting 0 is read ahead to the operator after its
    end, once): bounded CPU (the limit of tests/test_hostile_shapes.py; the growth is bench/hostile.py's
    sh_compounds). Past the subshells a reading isolates (64), the state is no longer kept apart."""
    from test_hostile_shapes import LIMIT_S

    script = unit * 8_000 + "vllm serve m $A"
    t = time.process_time()
    got = list(commands(script, {}))
    assert time.process_time() - t < LIMIT_S
    assert [w.text for w in got[-1]][:3] == ["vllm", "serve", "m"]


#: Brace expansion (one ``{a,b}`` or ``{1..3}`` of a plain word; an empty word dropped) and tilde expansion (a leading
#: ``~``, or after the ``=`` of ``NAME=~/x``, from the shell's HOME), as bash 5.2 makes them; two brace expansions in a
#: word, ``~user`` and ``~`` without HOME are left unresolved
BRACE_TILDE = {
    "vllm serve m --tensor-parallel-size {1,2} {4096,} x{,} {a,b}c {3..1} {a} {} --x={1,2} {,} y": [],
    "vllm serve ~/m ~ ~/ a=~/x --model=~/y ~nosuch/x a{b,c}d{e,f} z": ["~nosuch/x", "a{b,c}d{e,f}"],
    "A=~/m B={a,b}; export C=~/c; vllm serve $A $B $C": [],
    "unset HOME; vllm serve ~/m x": ["~/m"],
    # sequence expressions (bash 5.2 braces.c mkseq): a step, zero-padding to the wider term, letters
    "vllm serve m {1..10..2} {01..10} {a..e} {1..3..0} {a..c..2} {-01..3} --d={a..c} {5..1..-2} {010..8} {Z..X}": [],
    # not read: letters across cases (punctuation between), a letter and an integer (bash keeps it as written)
    "vllm serve m {Z..c} {1..a} x": ["{Z..c}", "{1..a}"],
    # a word with quotes or expansions is brace-expanded first too (the quotes and `$` kept for later): not read here
    'vllm serve m {a,"b c"} {$X,b} ${X}{a,b} a{b,c}\\d --x={1..3}$X ~"/x" ~$X y': [
        "{a,b c}",
        "{x,b}",
        "x{a,b}",
        "a{b,c}d",
        "--x={1..3}x",
        "~/x",
        "~x",
    ],
    # a ~ after a `:` of an assignment's value (or an argument that looks like one) is expanded too: not read here
    'A=~/a:~/b; vllm serve m "$A" x=a:~/b --p=a:~/b': ["${A}", "x=a:~/b"],
    # quoted braces are not expanded; a leading ~/ is HOME before a quoted or expanded rest
    'vllm serve m "{a,b}" \'{a,b}\' \\{a,b\\} "$X{a,b}" \'{"a":1,"b":2}\' ~/"$X" ~/$X': [],
}


@pytest.mark.parametrize("script", list(BRACE_TILDE))
def test_brace_and_tilde_expansion_as_bash_makes_them(script: str, tmp_path: Path) -> None:
    """Every word kvlint resolves is bash's; those it leaves unresolved are the ones listed (it could not know them)."""
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert _agrees([(w.text, w.unresolved) for w in engine], argv), (argv, engine)
    assert [w.text for w in engine if w.unresolved] == BRACE_TILDE[script]
    if not BRACE_TILDE[script]:
        assert [w.text for w in engine] == argv


def test_brace_expansions_stay_bounded() -> None:
    """200 words of 100,000 characters and a brace expansion of 1,001 items each (20 GB of words if made), and
    200 of ``{1..1000}``: the words the budget affords are made, the rest kept unresolved; bounded CPU."""
    from test_hostile_shapes import LIMIT_S

    script = "vllm serve m " + ("x" * 100_000 + "{" + "a," * 1000 + "b} ") * 200 + "~/m{1..1000} " * 200
    t = time.process_time()
    (engine,) = commands(script, {"HOME": "/h"})
    assert time.process_time() - t < LIMIT_S
    assert engine[3].unresolved and engine[-1].unresolved  # (the budget spent by then)
    assert "/h/m1000" in [w.text for w in engine if not w.unresolved]


#: ``sh -c``: /bin/sh is dash in Debian and Ubuntu images (the engines' own), bash elsewhere; dash has no brace
#: expansion and expands a ``~`` after ``=`` only in an assignment. The words the two make apart are unresolved.
SH_SCRIPTS = {
    'vllm serve m --max-model-len={4096,8192} {a} "{a,b}" {1..3} x=~/y ~/z y': [
        "--max-model-len={4096,8192}",
        "{1..3}",
        "x=~/y",
    ],
    "A=~/a; B={a,b}; vllm serve m $A $B ~ y": [],
}


@pytest.mark.parametrize("script", list(SH_SCRIPTS))
def test_sh_words_bash_and_dash_expand_apart_are_unresolved(script: str, tmp_path: Path) -> None:
    """Every word kvlint resolves for ``sh -c`` is both bash's and dash's; those it leaves unresolved are listed."""
    dash = shutil.which("dash")
    if shutil.which("bash") is None or shutil.which("env") is None or dash is None:
        pytest.skip("no bash, dash or env here")
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    ran = subprocess.run([dash, "-c", script], env=env, capture_output=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    dash_argv = [a.decode() for a in ran.stdout.partition(b"\1")[0].split(b"\0")[:-1]]
    (engine,) = [c for c in commands(script, env, [ShellArg("sh")], sh=True) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv) and _agrees(words, dash_argv), (argv, dash_argv, engine)
    assert [w.text for w in engine if w.unresolved] == SH_SCRIPTS[script]
    if not SH_SCRIPTS[script]:
        assert [w.text for w in engine] == argv == dash_argv


def test_a_container_sh_script_is_read_as_maybe_dash() -> None:
    """``command: [sh, -c]``: ``--tensor-parallel-size={2,4}`` is two options in bash (KV207: given twice), one
    word dash passes as written (which vLLM refuses); kvlint takes neither reading for sh: KV503, not sized."""
    script = "vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size={2,4} --max-model-len 4096"
    assert "KV207" in _findings(script)
    global _MANIFEST
    saved = _MANIFEST
    try:
        _MANIFEST = saved.replace('["bash", "-c"]', '["sh", "-c"]')
        got = _findings(script)
        assert "KV207" not in got and "KV206" not in got and "not sized" in got["KV503"][0]
    finally:
        _MANIFEST = saved


def test_a_brace_left_open_before_many_commas_stays_linear() -> None:
    """A ``{`` followed by 50,000 commas and no ``}``, in a word with an expansion and in a plain word of ``sh -c``
    (where bash and dash differ): each stretch between braces is read once (a regular expression retried the rest
    of the word at each comma: quadratic); bounded CPU (tests/test_hostile_shapes.py's limit)."""
    from test_hostile_shapes import LIMIT_S

    script = 'vllm serve m "$X"{' + "," * 50_000 + " {" + "," * 50_000 + " x"
    t = time.process_time()
    (engine,) = commands(script, {"X": "x"}, [ShellArg("sh")], sh=True)
    assert time.process_time() - t < LIMIT_S
    assert [w.text for w in engine][-1] == "x"


def test_brace_sequences_are_charged_their_words() -> None:
    """``{1..1000}`` makes 3,893 characters of words (and 1,000 arguments' overhead), not its body's 7: 600 of them
    are resolved up to what ``execve(2)`` takes (ARG_MAX, as the budget counts an argument), the rest unresolved
    (they were charged the body's length: 3.2 MB of words made, an argument list bash cannot run)."""
    from test_hostile_shapes import LIMIT_S

    from kvlint.engines.shell import _ARG_OVERHEAD, ARG_MAX

    t = time.process_time()
    (engine,) = commands("vllm serve m " + "{1..1000} {001..1000..1} " * 300, {})
    assert time.process_time() - t < LIMIT_S
    made = [w.text for w in engine if not w.unresolved]
    assert sum(len(text) + _ARG_OVERHEAD for text in made) <= ARG_MAX
    assert "999" in made and "0999" in made and engine[-1].unresolved


@pytest.mark.parametrize(
    "option",
    ["--tensor-parallel-size={2,4}{,}", "--tensor-parallel-size {2,4}{,}", "--tensor-parallel-size ~u/4"],
)
def test_a_brace_or_tilde_word_kvlint_does_not_read_is_not_taken_as_written(option: str) -> None:
    """bash makes ``--tensor-parallel-size={2,4}{,}`` four words (TP 4 last): kvlint leaves the word unresolved,
    and the engine's parser must not read it as the value written (KV206 "invalid value '{2,4}{,}'", an error on
    a command that runs) nor take the default (KV403): KV503, not sized."""
    got = _findings(f"vllm serve Qwen/Qwen2.5-7B-Instruct {option} --max-model-len 4096")
    assert "KV206" not in got and "KV403" not in got
    (msg,) = got["KV503"]
    assert (
        msg.startswith("--tensor-parallel-size " + option.split("=")[-1].split(" ")[-1])
        and "not sized" in msg
    )
