"""The shell reader (:mod:`kvlint.engines.shell`) against the straightforward reader it replaced
(``tests/shell_reference.py``, the character-class lexer, general word expansion and command splitter of
kvlint at b004e88): the same tokens (words with their pieces, offsets and raw text; operators) and the same
expanded commands, on many generated scripts, on the scripts of the shared corpus, and on the hostile shapes
that made the old reader quadratic (at sizes the reference still reads quickly)."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from kvlint.engines import shell as S

sys.path.insert(0, str(Path(__file__).resolve().parent))
import shell_reference as R  # noqa: E402
from test_argv_fast_paths import _SHELL_PIECES, CORPUS, _corpus_scripts  # noqa: E402

#: More pieces: the hostile units (joined variables, assignments, wrappers, runs of redirections) and
#: escapes, quotes and expansions next to one another.
_MORE_PIECES = [
    "$A",
    "${A}",
    "${AB}",
    "$AB",
    "${A-x}",
    "${A:-'d e'}",
    "a=$B ",
    "a=$A",
    "X=1 ",
    "exec ",
    "env ",
    "env -u ",
    "nohup ",
    "export ",
    "eval ",
    ">&1",
    ">&",
    ">&-",
    "2>&1",
    "<<",
    "<>",
    "&>",
    "&>>",
    '\\"',
    "\\$",
    '"\\',
    '"\\a\\$\\`\\\\"',
    '"$A$B"',
    '"`x`"',
    "''",
    '""',
    "$'x'",
    "$'a\\'b'",
    "$'\\tq",
    "${#A}",
    "${A/x/y}",
    "$((A*2))",
    "$((X+1))",
    "((a<b))",
    "a((",
    "vllm serve m ",
    "sh -c ",
    "#",
    "a#",
    "\t#x\n",
    "{{ .V }}",
    "{{\n}}",
]

_ENVS: list[dict[str, str]] = [
    {},
    {"A": "a1", "B": "b1 b2", "X": "7", "Y": "", "Q": '"q"'},
    {"A": "", "AB": "x y", "B": "$A"},
]
_POSITIONAL = [
    [],
    [S.ShellArg("sh"), S.ShellArg("p1"), S.ShellArg("p 2", quoted=True)],
]


def _scripts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    pieces = _SHELL_PIECES + _MORE_PIECES
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def _heredoc_body_follows(script: str) -> bool:
    """Whether a ``<<`` is followed by a newline: the reader skips a here-document's body there, which the
    reference (that of b004e88) lexed as commands (tests/test_shell_heredoc.py covers those scripts)."""
    at = script.find("<<")
    return at >= 0 and "\n" in script[at:]


def _same(script: str, env: dict[str, str], positional: list[Any]) -> None:
    if _heredoc_body_follows(script):
        return
    assert S.lex(script) == R.lex(script), script
    got = list(S.commands(script, env, positional))
    want = list(R.commands(script, env, positional))
    assert got == want, (script, env)


def test_lexer_and_commands_match_the_reference_on_generated_scripts() -> None:
    for k, script in enumerate(_scripts(4000, seed=1919)):
        _same(script, _ENVS[k % len(_ENVS)], _POSITIONAL[k % len(_POSITIONAL)])


def test_lexer_and_commands_match_the_reference_on_repetitions() -> None:
    """Each piece repeated (the shape of the hostile inputs), alone and after an engine command."""
    for piece in _SHELL_PIECES + _MORE_PIECES:
        for script in (piece * 60, "vllm serve m " + piece * 60, piece * 30 + " vllm serve m"):
            for env in _ENVS:
                _same(script, env, _POSITIONAL[1])


def test_lexer_and_commands_match_the_reference_on_corpus(monkeypatch: pytest.MonkeyPatch) -> None:
    if not CORPUS.is_dir():
        pytest.skip("shared corpus not present")
    scripts = _corpus_scripts(monkeypatch)
    assert len(scripts) >= 10, "the corpus holds sh -c scripts; too few were read"
    for script in scripts:
        _same(script, _ENVS[1], _POSITIONAL[1])
