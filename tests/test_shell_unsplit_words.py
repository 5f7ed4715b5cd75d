"""A word kvlint could not expand (``$(cmd)``, an unknown ``$ARGS``, ``"${ARGS[@]}"``) may have been any number of
words: the positional parameters or array elements after it are not known by their place, nor is their count. Against
bash itself (tests/test_shell_array_writes.py's comparison: what kvlint resolves is what bash gives). Offline; bash
and coreutils' env only (skipped without them)."""

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
    # array elements and their count after an element of unknown words
    'U="p q"; A=($(echo $U) b); vllm serve m ${#A[@]} "${A[1]}" x',
    'A=($(echo) b c); vllm serve m "${A[1]}" ${#A[@]} x',
    'A=($(echo p q) b); set -- "${A[@]}"; vllm serve m $# "$2" x',
    # positional parameters after such a word, also after shift; before it they are known
    'f() { vllm serve m "$1" "$2" x; }; f $(echo p q) b',
    'f() { shift; vllm serve m "$1" x; }; f $(echo p q) b',
    'f() { vllm serve m "$1" "$3" x; }; f a "${ZZ[@]}" b',
    'f() { vllm serve m "$1" x; }; f a $(echo p q)',
    # a quoted one is one word: what follows it is known
    'f() { vllm serve m "$2" x; }; f "$(echo p q)" b',
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_what_follows_a_word_of_unknown_words_is_not_guessed(script: str, tmp_path: Path) -> None:
    if shutil.which("bash") is None or shutil.which("env") is None:
        pytest.skip("no bash or env here")
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}", "X": "x"}
    argv, _environ = _bash(script, tmp_path, env)
    engine = [c for c in commands(script, env, [ShellArg("bash")]) if c and c[0].text == "vllm"]
    assert len(engine) == 1
    assert _agrees([(w.text, w.unresolved) for w in engine[0]], argv), (argv, engine[0])


def test_a_word_known_before_the_unknown_one_is_read() -> None:
    (engine,) = [
        c for c in commands('f() { vllm serve m "$1" "$2"; }; f --port $(cat p)', {}) if c[0].text == "vllm"
    ]
    assert engine[3].text == "--port" and not engine[3].unresolved
    assert engine[4].unresolved
