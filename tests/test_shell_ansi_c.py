"""``$'...'`` (ANSI-C quoting) decoded as bash decodes it (bash ``lib/sh/strtrans.c::ansicstr``, the bash manual's
"ANSI-C Quoting"). kvlint kept ``\\xHH``, ``\\nnn``, ``\\uHHHH`` and ``\\cX`` as written, so ``$'\\x41'`` read as
the four characters ``\\x41`` where bash passes ``A``: a fuzz of the lexer against bash's own word splitting
(``bash -c 'printf "%s\\0" WORDS'``) found it in a third of the words with such an escape."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from kvlint.engines.shell import Word, ansi_c_text, lex


@pytest.mark.parametrize(
    ("body", "want"),
    [
        # the manual's list: \xHH (one or two hex digits), \nnn (one to three octal digits), \uHHHH, \UHHHHHHHH,
        # \cX (control-X)
        (r"\x41", "A"),
        (r"\x414", "A4"),
        (r"\x4g", "\x04g"),
        (r"\101", "A"),
        (r"\7", "\x07"),
        (r"\1011", "A1"),
        (r"\u263a", "\u263a"),
        (r"\U0001F600", "\U0001f600"),
        (r"\cA", "\x01"),
        (r"\ca", "\x01"),
        (r"\c?", "\x7f"),
        # no digit after \x / \u: kept as written
        (r"\x", "\\x"),
        (r"\uZ", "\\uZ"),
        # a NUL ends bash's C string
        (r"a\0b", "a"),
        (r"a\x00b", "a"),
        # raw bytes read as UTF-8
        (r"\xc3\xa9", "\u00e9"),
        (r"\303\251", "\u00e9"),
        (r"\xff", "\ufffd"),
        # the one-character escapes, and an unknown one keeping its backslash
        (r"\n\t\\\'", "\n\t\\'"),
        (r"\z", "\\z"),
    ],
)
def test_ansi_c_escapes(body: str, want: str) -> None:
    assert ansi_c_text(body) == want


def _word(rng: random.Random) -> str:
    pieces = "\\x41 \\x4 \\x414 \\x \\101 \\7 \\1234 \\u41 \\U0000004a \\u \\ca \\c? \\c[ \\0 \\x00 \\e \\n \\z".split()
    pieces += ["\\c\\\\", "\\'", '"', "a", " ", "\\\\"]
    ansi = "$'" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4))) + "'"
    return rng.choice(["", "a", "'b'", '"c"']) + ansi + rng.choice(["", "d", "'e'"])


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_lexer_matches_bash_on_ansi_c_words() -> None:
    """300 random words with ANSI-C escapes (fixed seed), split and decoded by bash in one process and by
    :func:`kvlint.engines.shell.lex`: the same words, the same text."""
    rng = random.Random(47)
    words = [_word(rng) for _ in range(300)]
    script = "printf '%s\\0' " + " ".join(words)
    out = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, check=True).stdout
    want = out.decode("utf-8", "replace").split("\0")[:-1]
    got = ["".join(p.text for p in t.parts) for t in lex(script) if isinstance(t, Word)][2:]
    assert len(got) == len(want)
    bad = [(w, g, b) for w, g, b in zip(words, got, want, strict=True) if g != b]
    assert not bad, bad[:5]
