"""The text report's wrapping (:func:`kvlint.report.text._wrap`) against :func:`textwrap.wrap` itself.

``_wrap`` wraps space-only text with string searches instead of textwrap's per-word walk; it must give the
very lines textwrap gives with the report's settings (spaces only, no breaking of long words or at hyphens),
so these tests compare the two on many generated strings: long words, hyphens, runs of spaces at the start,
the end and in the middle, and the whitespace that sends the text to textwrap (tabs, newlines, Unicode
spaces).
"""

from __future__ import annotations

import random
import textwrap

import pytest

from kvlint.report.text import _wrap


def _textwrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=width,
        initial_indent=first,
        subsequent_indent=rest,
        break_on_hyphens=False,
        break_long_words=False,
    ) or [first.rstrip()]


_INDENTS = [("", ""), ("    ", "      "), ("  fix: ", "       "), ("x", ""), ("", "   ")]


def _word(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.1:  # longer than any line
        return "".join(rng.choice("abc/-_.=") for _ in range(rng.randint(40, 160)))
    if kind < 0.3:
        return "-".join("".join(rng.choice("abcxyz") for _ in range(rng.randint(1, 8))) for _ in range(3))
    return "".join(rng.choice("abcdefghij0123456789,.;:()'=/") for _ in range(rng.randint(1, 12)))


def _text(rng: random.Random, spaces: str) -> str:
    parts = []
    if rng.random() < 0.2:
        parts.append(" " * rng.randint(1, 60))
    for _ in range(rng.randint(0, 40)):
        parts.append(_word(rng))
        parts.append(" " * rng.choice([1, 1, 1, 1, 2, 3, 50]) if rng.random() < 0.97 else rng.choice(spaces))
    if parts and rng.random() < 0.7:
        parts.pop()  # most texts end in a word
    return "".join(parts)


@pytest.mark.parametrize("spaces", [" ", " \t\n\u00a0\u2003\r\x0b\x0c"])
def test_wrap_matches_textwrap_on_generated_text(spaces: str) -> None:
    rng = random.Random(19 + len(spaces))
    for _ in range(6000):
        text = _text(rng, spaces)
        width = rng.choice([rng.randint(1, 30), rng.randint(30, 130), 100])
        first, rest = rng.choice(_INDENTS)
        case = (text, width, first, rest)
        assert _wrap(*case) == _textwrap(*case), case


def test_wrap_matches_textwrap_at_every_width() -> None:
    # Every width against a few fixed texts, so each boundary case (a line ending inside a word, on its
    # last letter, on a space, inside a run of spaces) is met at each position.
    texts = [
        "",
        " ",
        "     ",
        "word",
        "  leading spaces then words  ",
        "a  b   c    d     e      f       g        h",
        "x" * 150 + " tail",
        "head " + "y" * 150,
        "  " + "z" * 120 + "   after  the  long  word   ",
        "--max-model-len=32768 --gpu-memory-utilization 0.95 --tensor-parallel-size=8 ghcr.io/a/b:v1-2-3",
        "weights 15.0 GiB + activation 2.1 GiB + KV 0.0 GiB > 22.0 GiB usable on NVIDIA-L4 (24 GiB x 0.92)",
    ]
    for text in texts:
        for width in range(1, 160):
            for first, rest in _INDENTS:
                assert _wrap(text, width, first, rest) == _textwrap(text, width, first, rest), (text, width)
