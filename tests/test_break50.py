"""Hostile input found by the break50 pass, each read with the right result (the CPU growth of the loops is
reported by ``bench/hostile.py``, not asserted here)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.engines.command import parse_container
from kvlint.engines.shell import ARG_MAX, commands, env_split_words

#: what execve(2) charges an argument beyond its text: its NUL and its argv pointer (Linux fs/exec.c
#: bprm_stack_limits: ``(argc + envc) * sizeof(void *)`` taken from the limit, strings counted with their NUL)
ARG_COST = 1 + 8


def _shim(tmp_path: Path) -> dict[str, str]:
    """PATH with a ``vllm`` that prints its arguments, NUL-terminated."""
    shim = tmp_path / "vllm"
    shim.write_text("#!/bin/sh\nprintf '%s\\0' vllm \"$@\"\n")
    shim.chmod(0o755)
    return {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_dollar_at_of_empty_parameters_is_charged_their_nul_bytes() -> None:
    """``set --`` of 40,000 empty parameters, then ``"$@"`` 100 times: each expansion passes 40,000 arguments,
    which ``execve(2)`` counts against ARG_MAX with their NUL bytes and argv pointers (9 bytes each), so the
    script's budget affords ARG_MAX // 360,000 of them and the rest stay unexpanded. Before, an empty parameter cost
    nothing: every reference made 40,000 fields (1,000 references of a 128 KB script: 21 s, 354 MB)."""
    k, refs = 40_000, 100
    script = "set -- " + "'' " * k + "; " + ': "$@"; ' * refs + "vllm serve m"
    got = [cmd for cmd in commands(script, {}) if cmd and cmd[0].text == ":"]
    assert len(got) == refs
    expanded = [cmd for cmd in got if len(cmd) == k + 1]
    kept = [cmd for cmd in got if [w.text for w in cmd] == [":", "$@"] and cmd[1].unresolved]
    assert len(expanded) == ARG_MAX // (ARG_COST * k)
    assert len(expanded) + len(kept) == refs
    assert all(w.text == "" for w in expanded[0][1:])


def test_dollar_at_past_the_budget_stays_unresolved_and_the_engine_after_it_is_read() -> None:
    """4,000 one-letter parameters referenced 10,000 times (the sum of their lengths was taken at each reference,
    the budget long spent: 4 s for 68 KB): the references the budget affords are expanded (each costs 40,000 bytes:
    4,000 letters, their NULs and argv pointers), the rest kept, and the engine command after them read."""
    k, refs = 4_000, 10_000
    script = "set -- " + "a " * k + "; " + ": $@; " * refs + "vllm serve m"
    got = list(commands(script, {}))
    assert [w.text for w in got[-1]] == ["vllm", "serve", "m"]
    expanded = sum(1 for cmd in got if cmd and cmd[0].text == ":" and len(cmd) == k + 1)
    assert expanded == ARG_MAX // ((1 + ARG_COST) * k)


def test_an_ifs_split_into_many_empty_fields_is_charged_per_field() -> None:
    """``IFS=,`` and a value of 100,000 commas expanded 100 times: each expansion makes 100,000 empty fields (as
    bash does), each charged as an argument (its NUL and argv pointer besides its comma), so the budget affords
    ARG_MAX // 1,000,000 of them; the rest stay unexpanded instead of making ten million fields."""
    k, refs = 100_000, 100
    script = "IFS=,; A='" + "," * k + "'; " + ": $A; " * refs + "vllm serve m"
    got = [cmd for cmd in commands(script, {}) if cmd and cmd[0].text == ":"]
    assert len(got) == refs
    expanded = [cmd for cmd in got if len(cmd) == k + 1]
    assert all(w.text == "" for w in expanded[0][1:])
    assert len(expanded) == ARG_MAX // (k + ARG_COST * k)
    assert all([w.text for w in cmd] == [":", "$A"] and cmd[1].unresolved for cmd in got[len(expanded) :])


ENV_S_STRINGS = [
    r"vllm serve m \c --max-model-len 999999",  # \c ends the string
    r"vllm serve m --max-model-len 4096 # the context we serve",  # a comment
    r"vllm serve m --max-model-len 4096 #",
    r"vllm serve m a#b x\_#c --port 1",  # '#' inside a word; after \_ it starts one: a comment
    r"vllm serve m\_--max-model-len\_4096",  # \_ separates words
    r"vllm serve m --served-model-name " + "\"a\\_b\" 'c\\'d' 'e\\\\f' 'g\\nh' \"i\\tj\" \\\"k\\\" '' \"\"#l",
    "vllm\tserve\vm\f--port\r8000\n--max-model-len 4096",  # the blanks C isspace knows
]


@pytest.mark.parametrize("string", ENV_S_STRINGS)
def test_env_split_string_makes_the_words_env_makes(string: str, tmp_path: Path) -> None:
    """``env -S STRING`` split as GNU env 9.1 splits it (env.c ``build_argv``), compared with the real env running
    a shim that prints its arguments. Before, STRING was split by ``shlex`` (POSIX shell rules): ``\\c`` read as
    ``c`` and the words after it kept, ``# comment`` read as arguments (KV205 unknown options), ``\\_`` as ``_``,
    ``'c\\'d'`` an unclosed quote; and a long word took time quadratic in its length (1 MB: 15 s)."""
    if shutil.which("env") is None:
        pytest.skip("no env here")
    env = _shim(tmp_path)
    ran = subprocess.run(["env", "-S", string], env=env, capture_output=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stderr
    real = [a.decode() for a in ran.stdout.split(b"\0")[:-1]]
    read = env_split_words(string)
    assert read is not None
    assert [w for w, _kept in read[0]] == real


@pytest.mark.parametrize(
    "string",
    [
        r"vllm serve \x",
        "vllm serve m\\",
        r'vllm "serve\c"',
        "vllm 'serve",
        'vllm "serve',
        "vllm $A",
        "vllm ${A-x}",
    ],
)
def test_env_split_string_env_refuses_is_none(string: str, tmp_path: Path) -> None:
    """What env refuses (an unknown ``\\`` sequence, a trailing ``\\``, ``\\c`` in double quotes, an unclosed quote,
    ``$`` other than ``${NAME}``): env exits 125 without running anything."""
    if shutil.which("env") is None:
        pytest.skip("no env here")
    ran = subprocess.run(
        ["env", "-S", string], env=_shim(tmp_path), capture_output=True, timeout=60, check=False
    )
    assert ran.returncode == 125
    assert env_split_words(string) is None


def test_env_split_string_keeps_an_unknown_variable_unresolved() -> None:
    words, expanded = env_split_words("vllm serve ${M} '${M}' \"x${A}\"", {"A": "a b"}) or ([], False)
    assert words == [("vllm", False), ("serve", False), ("${M}", True), ("${M}", False), ("xa b", False)]
    assert expanded


def test_env_split_string_of_a_long_word_is_one_pass() -> None:
    """A 1 MB word of ``${A}`` with A unset (read by shlex one character at a time before): the word as written."""
    words, _ = env_split_words("vllm " + "${A}" * 250_000, {}) or ([], False)
    assert [len(w) for w, _ in words] == [4, 1_000_000]


@pytest.mark.parametrize(
    "container",
    [
        {"image": "vllm/vllm-openai:v0.21.0", "args": ["--model", "m", " "]},
        {"image": "vllm/vllm-openai:v0.21.0", "args": ["--model", "m", "\t\n"]},
        {"image": "vllm/vllm-openai:v0.21.0", "command": ["sh", "-c", "vllm serve m \\ "]},
        {"image": "ghcr.io/huggingface/text-generation-inference:3.3.7", "args": ["--model-id", "m", " "]},
    ],
)
def test_a_word_of_white_space_only_is_a_kv205_not_an_unread_command(container: dict[str, object]) -> None:
    """An argument of white space only (an args item ``" "``, an escaped blank ``\\ `` at the end of a script) is
    an unknown argument the engine refuses (argparse: "unrecognized arguments", clap: "unexpected argument"): a
    KV205 error, the container still read and sized. Before, splitting the empty stripped word raised ValueError,
    reported as a KV503 warning "could not read this container's command": the container went unsized and a
    webhook (--failure-mode open, the default) admitted it with no capacity rule run (found by fuzzing scripts of pass 50's shell features)."""
    cfg = parse_container({"name": "e", **container})
    assert cfg is not None and not isinstance(cfg, list)
    assert cfg.model is not None and cfg.model.value == "m"
    assert not [f for f in cfg.findings if f.rule == "KV503"]
    assert [f for f in cfg.findings if f.rule == "KV205" and f.severity == "error"]


IFS_SCRIPTS = [
    'IFS=,; A="--max-model-len,4096"; printf "[%s]" vllm serve m $A',
    'IFS=; A="a b"; printf "[%s]" $A',
    'IFS=", "; A="a, b,,c  d"; printf "[%s]" $A',
    'IFS=","; A=",a,"; printf "[%s]" $A x',
    'IFS=","; A=",,"; printf "[%s]" x${A}y',
    'IFS=","; A="b,"; printf "[%s]" x${A}y',
    'IFS=","; set -- "a,b" "c" ",d"; printf "[%s]" $@ "$*" $1',
    'IFS=; set -- "a b" c; printf "[%s]" $@ "$*"',
    'A="a b"; IFS=, eval \'printf "[%s]" $A\'',
    'IFS=:; f() { printf "[%s]" $1; }; f "a:b"',
    'IFS=,; unset IFS; A="a,b c"; printf "[%s]" $A',
    'IFS=,; export IFS; sh -c \'A="a,b c"; printf "[%s]" $A\'',
    'IFS=" ,"; A="  a ,  b  "; printf "[%s]" x${A}y',
    'IFS=",:"; A="a:b,c::d"; printf "[%s]" $A',
    'IFS="]-"; A="a]b-c"; printf "[%s]" $A',
    'A="a,b c"; printf "[%s]" $A',  # IFS=, in the environment: bash does not take it
]


@pytest.mark.parametrize("script", IFS_SCRIPTS)
def test_unquoted_expansions_split_at_the_scripts_ifs_as_bash_does(script: str) -> None:
    """A script's own ``IFS`` splits its unquoted expansions (POSIX Field Splitting: a non-blank IFS character ends
    a field even when empty, blanks around it join it, ``IFS=`` splits nothing, ``"$*"`` joins with IFS's first
    character); an ``IFS`` in the environment is not taken (bash and dash reset it at start). Before, every
    expansion split at blanks whatever IFS held: ``IFS=,; A="--max-model-len,4096"; vllm serve m $A`` was read as
    one unknown option where bash passes --max-model-len 4096. Compared with bash."""
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "IFS": ","}
    real = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60).stdout
    printed = [cmd for cmd in commands(script, {"IFS": ","}) if cmd and cmd[0].text == "printf"]
    assert printed
    assert "".join(f"[{w.text}]" for w in printed[-1][2:]) == real
