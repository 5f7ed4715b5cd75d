"""What the shell reading leaves for the engines' parsers, against bash and dash themselves (the harness of
tests/test_shell_state50.py: a ``vllm`` on ``PATH`` that prints its arguments). Offline; bash, dash and coreutils'
env only (skipped without them)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvlint.engines.shell import ShellArg, commands, unresolved
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_shell_array_writes import _agrees  # noqa: E402
from test_shell_state50 import _bash  # noqa: E402

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
        command: ["%s", "-c"]
        args: [%s]
        resources: {limits: {nvidia.com/gpu: 4}}
"""

#: the container's env declaring ARGS and EXTRA_ARGS from a Secret kvlint cannot read (their values unknown)
_SECRET_ARGS = """        env:
        - {name: ARGS, valueFrom: {secretKeyRef: {name: engine, key: args}}}
        - {name: EXTRA_ARGS, valueFrom: {secretKeyRef: {name: engine, key: args}}}
"""


def _findings(script: str, shell: str = "bash", env: str = "") -> dict[str, list[str]]:
    result = run_documents(
        load_text(_MANIFEST % (shell, json.dumps(script)) + env, "d.yaml"), Options(allow_hub=False)
    )
    out: dict[str, list[str]] = {}
    for d in result.diagnostics:
        out.setdefault(d.rule, []).append(f"{d.message} | fix: {d.fix}")
    return out


def _env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}


def _dash(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    dash = shutil.which("dash")
    if dash is None or shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash, dash or env here")
    return subprocess.run([dash, "-c", script], env=env, capture_output=True, timeout=60, check=False)


@pytest.mark.parametrize(
    "word",
    [
        "--tensor-parallel-size=${X:+${N}}",
        "--tensor-parallel-size=${U:-${N}}",
        "--tensor-parallel-size=${1:-${N}}",
    ],
)
def test_an_option_whose_value_nests_an_unknown_reference_keeps_its_option(word: str, tmp_path: Path) -> None:
    """``--tensor-parallel-size=${X:+${N}}`` with N unknown is one word bash passes, the option with a value kvlint
    cannot see: the ``}}`` that ends it closes the word's own shell references, not a Go/Helm template action (the
    word was skipped as one, the option lost: sized at TP 1, KV403 on 4 GPUs). KV503 says the size is not known."""
    env = _env(tmp_path)
    script = f"vllm serve Qwen/Qwen2.5-7B-Instruct {word} --max-model-len 4096"
    argv, _environ = _bash(script.replace("${N}", "4"), tmp_path, env)
    assert argv[3] == "--tensor-parallel-size=4"  # (one word, the option's, as bash passes it)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert unresolved(engine[3].text) and engine[3].text.startswith("--tensor-parallel-size=")
    got = _findings(script)
    assert "KV403" not in got, got
    assert any(m.startswith("--tensor-parallel-size ") and "not sized" in m for m in got["KV503"]), got


@pytest.mark.parametrize(
    ("option", "what"),
    [
        (
            "--tensor-parallel-size={2,4}{,}",
            "--tensor-parallel-size {2,4}{,}: the value is a brace expansion",
        ),
        (
            "--tensor-parallel-size {1..4}{,}",
            "--tensor-parallel-size {1..4}{,}: the value is a brace expansion",
        ),
        ("--tensor-parallel-size ~u/4", "--tensor-parallel-size ~u/4: the value is a tilde expansion"),
        ("--tensor-parallel-size $TP", "--tensor-parallel-size $TP: the value comes from a variable"),
    ],
)
def test_kv503_says_what_an_unresolved_value_is(option: str, what: str) -> None:
    """A brace or tilde word kvlint does not read is no variable: KV503 shows it as written (it showed
    ``$({2,4}{,})``, said "comes from a variable", and its fix told to give ``VAR`` a literal value), and its fix is
    the size itself; a variable's KV503 is as it was."""
    (msg,) = _findings(f"vllm serve Qwen/Qwen2.5-7B-Instruct {option} --max-model-len 4096")["KV503"]
    assert msg.startswith(what), msg
    assert ("VAR" in msg) is False and ("TP a literal value" in msg) is ("$TP" in option), msg


#: bash expansions dash 0.5.12 (``sh`` in Debian and Ubuntu images) has not: a substring and an array reference make
#: dash exit ("Bad substitution"), an array assignment is a syntax error, an ANSI-C quote is a ``$`` then a
#: single-quoted string. Under ``sh -c`` the words they make are unresolved (the assignments' names unknown); each word
#: kvlint resolves is bash's, and dash's when dash runs the script. The words kvlint leaves unresolved are listed.
DASH_APART = {
    "X=4096; vllm serve m --max-model-len ${X:1} x": ["${X:1}"],
    'X=4096; vllm serve m a"${X: -2}"b x': ["a${X: -2}b"],
    "X=4096; Y=${X:1}; vllm serve m $Y x": ["$Y"],
    "A=(--max-model-len 4096); vllm serve m ${A[@]} $A x": ["${A[@]}", "$A"],
    'A=(--max-model-len 4096); vllm serve m "${#A[@]}" x': ["${#A[@]}"],
    "vllm serve m --max-model-len $'4096' x": ["$'4096'"],
    "Z=$'a\\tb'; vllm serve m $Z x": ["$Z"],
}


@pytest.mark.parametrize("script", list(DASH_APART))
def test_sh_words_dash_does_not_expand_as_bash_are_unresolved(script: str, tmp_path: Path) -> None:
    env = _env(tmp_path)
    ran = _dash("true", env)  # (skips without dash)
    argv, _environ = _bash(script, tmp_path, env)
    ran = _dash(script, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("sh")], sh=True) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv), (argv, words)
    if ran.returncode == 0:
        dash_argv = [a.decode() for a in ran.stdout.partition(b"\1")[0].split(b"\0")[:-1]]
        assert _agrees(words, dash_argv) and dash_argv != argv, (dash_argv, words)
    else:
        assert b"Bad substitution" in ran.stderr or b"Syntax error" in ran.stderr, ran.stderr
    assert [w.text for w in engine if w.unresolved] == DASH_APART[script]
    # under bash -c they are read (the test can fail)
    (bash_engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in bash_engine if not w.unresolved] == argv


@pytest.mark.parametrize(
    ("option", "what"),
    [
        ("X=14; vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size ${X:1}", "--tensor-parallel-size ${X:1}: "),
        ("vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size $'4'", "--tensor-parallel-size $'4': the value is an ANSI-C"),
    ],
)  # fmt: skip
def test_a_sh_size_dash_reads_apart_is_not_sized(option: str, what: str) -> None:
    """``sh -c``: ``--tensor-parallel-size ${X:1}`` is 4 in bash, a "Bad substitution" in dash: not sized, KV503
    (with bash -c: TP 4 on 4 GPUs, no KV503)."""
    assert "KV503" not in _findings(option + " --max-model-len 4096")
    (msg,) = _findings(option + " --max-model-len 4096", "sh")["KV503"]
    assert msg.startswith(what) and "not sized" in msg, msg


#: Subshells that use up the ones a reading keeps apart (kvlint.engines.shell._SUBSHELLS, 64): a command of a pipeline,
#: a `( ... )`, each one.
_SPENT = [": | cat; " * 32, "(:); " * 64, "(:) & " * 64 + "wait; "]


@pytest.mark.parametrize("spent", _SPENT)
@pytest.mark.parametrize(
    "shape",
    [
        "{ A=4096; } | cat; vllm serve m $A x",
        "{ export A=4096; } | cat; vllm serve m $A x",
        "(A=4096); vllm serve m $A x",
        "A=4096 | cat; vllm serve m $A x",
        "A=1 && B=4096 & wait; vllm serve m $B x",
        "{ A=(4096); } | cat; vllm serve m ${A[@]} x",
        "true | while read x; do A=4096; done; vllm serve m $A x",
    ],
)
def test_a_subshell_past_those_kept_apart_leaves_its_assignments_unknown(
    spent: str, shape: str, tmp_path: Path
) -> None:
    """Past the subshells a reading keeps apart, a subshell's assignments stayed after it with their values (4096
    passed where bash passes nothing); now what is assigned from there on is unknown: every word kvlint resolves
    is bash's, and the variable set in the subshell is not one of them."""
    env = _env(tmp_path)
    script = spent + shape
    argv, environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in engine if not w.unresolved] == argv, (argv, engine)
    assert "A" not in environ and engine.environ is not None
    assert engine.environ.get()[0].get("A") is None
    # the same shape with subshells to spare is read as before (the test can fail)
    (fresh,) = [c for c in commands(shape, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert [w.text for w in fresh if not w.unresolved] == argv


def test_assignments_before_the_subshells_run_out_stay_known() -> None:
    (engine,) = [
        c
        for c in commands("A=4096; " + _SPENT[0] + "{ B=1; } | cat; vllm serve m $A $B", {})
        if c and c[0].text == "vllm"
    ]
    assert [(w.text, w.unresolved) for w in engine][3:] == [("4096", False), ("$B", True)]


@pytest.mark.parametrize(
    "script",
    [
        "printf '%s\\n' --max-model-len 4096 | xargs sh -c 'vllm serve m \"$@\" x' _",
        "printf '%s\\n' _ 4096 | xargs sh -c 'vllm serve m --max-model-len \"$@\"'",
    ],
)
def test_xargs_words_reach_a_shell_script_through_its_parameters(script: str, tmp_path: Path) -> None:
    """``xargs sh -c 'vllm serve m "$@"' _``: the words xargs appends are the script's $1 ... (its $0 when none is
    written), which ``"$@"`` passes on: not known (they were none: the engine's options read at their defaults),
    and the engine command is marked as one whose arguments are not all read."""
    env = _env(tmp_path)
    argv, _environ = _bash(script, tmp_path, env)
    (engine,) = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    words = [(w.text, w.unresolved) for w in engine]
    assert _agrees(words, argv) and any(u for _t, u in words), (argv, words)
    assert engine.appends is not None and "xargs" in engine.appends
    assert len(argv) > len([w for w in words if not w[1]])


def test_an_engine_reading_xargs_words_through_a_shell_is_not_taken_at_its_defaults() -> None:
    """4 GPUs, ``vllm serve M`` alone: KV403 (TP 1 uses one) and KV202 (no --max-model-len); behind ``xargs sh -c
    '... "$@"'`` the words xargs reads may set both: neither, a KV503 says why (the test can fail: both were given)."""
    command = "vllm serve Qwen/Qwen2.5-7B-Instruct"
    plain = _findings(command)
    assert "KV403" in plain and "KV202" in plain
    got = _findings(f"cat /etc/engine-args | xargs sh -c '{command} \"$@\"' _")
    assert "KV403" not in got and "KV202" not in got, got
    assert any("arguments are not all known: xargs" in m for m in got["KV503"]), got


@pytest.mark.parametrize("word", ["$ARGS", "${EXTRA_ARGS}"])
def test_a_bare_word_kvlint_cannot_expand_leaves_the_arguments_not_all_read(
    word: str, tmp_path: Path
) -> None:
    """``vllm serve M $ARGS`` with ARGS unknown: bash splits it into any number of words (``--tensor-parallel-size 4
    --max-model-len 8192`` in ARGS is four), options among them, so the engine's settings are not taken at their
    defaults (KV403 "tensor-parallel-size 1" and KV202 "no --max-model-len" were given on 4 GPUs): KV503, not sized,
    as behind xargs."""
    env = _env(tmp_path)
    script = f"vllm serve Qwen/Qwen2.5-7B-Instruct {word}"
    argv, _environ = _bash(
        script.replace(word, "$ARGS"),
        tmp_path,
        {**env, "ARGS": "--tensor-parallel-size 4 --max-model-len 8192"},
    )
    assert argv[3:] == ["--tensor-parallel-size", "4", "--max-model-len", "8192"]
    got = _findings(script, env=_SECRET_ARGS)
    assert "KV403" not in got and "KV202" not in got, got
    (msg,) = got["KV503"]
    assert msg.startswith(f"the vLLM command's arguments are not all known: {word} expands to arguments"), msg
    assert "not sized" in msg
    # any name may come from an envFrom kvlint does not read
    got = _findings(script, env="        envFrom: [{secretRef: {name: engine}}]\n")
    assert "KV403" not in got and "KV202" not in got, got
    # a variable the container does not declare is unset as far as the manifest says (bash expands the word to
    # nothing; the image's ENV is not read, as for ${X:-d}): the defaults stand, an info says what was assumed
    got = _findings(script)
    assert "KV403" in got and "KV202" in got, got
    (msg,) = got["KV503"]
    assert "not set in the container env" in msg and "not all known" not in msg, msg
    # an option's value from a variable is one setting unknown, the rest read (KV202 still given)
    assert "KV202" in _findings("vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size $TP")
