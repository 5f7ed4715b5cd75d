"""A finding quotes at most :data:`kvlint.statement.QUOTED_CHARS` characters of any one manifest value: a
5,000-digit ``nvidia.com/gpu`` value (KV405), image tag (KV208) or model name (KV502) was printed whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.checkrun import run_paths
from kvlint.options import Options
from kvlint.report import render
from kvlint.statement import MESSAGE_CHARS, QUOTED_CHARS, clip, clip_words

ROOT = Path(__file__).resolve().parents[1]
SRC = (ROOT / "fixtures" / "rules" / "KV408" / "vllm.yaml").read_text()


@pytest.mark.parametrize(
    ("rule", "written", "value"),
    [
        ("KV405", "nvidia.com/gpu: 1", "nvidia.com/gpu: '" + "9" * 5000 + "'"),
        ("KV208", "vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:v0." + "1" * 5000),
        ("KV502", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/" + "L" * 5000),
    ],
)
def test_a_finding_quotes_a_long_value_clipped(tmp_path: Path, rule: str, written: str, value: str) -> None:
    assert written in SRC
    p = tmp_path / "long.yaml"
    p.write_text(SRC.replace(written, value, 1))
    result = run_paths([str(p)], Options(allow_hub=False), no_config=True).result
    found = [d for d in result.diagnostics if d.rule == rule]
    assert found, f"the long value gets its {rule}"
    for d in result.diagnostics:
        for text in (d.message, d.fix, d.statement, *d.details):
            assert max(len(w) for w in [*text.split(), ""]) <= QUOTED_CHARS, (d.rule, text[:300])
    quoted = found[0].message
    # the value's start and its closing quote are both shown
    assert re.search(r"'[^' ]{200,}\.\.\.[^' ]*'", quoted), quoted[:400]
    assert len(render("text", result)) < 10_000


#: 40,000 words of two letters: no word to cut, 120,000 characters quoted whole before MESSAGE_CHARS
_SHORT_WORDS = " ".join(["ab"] * 40_000)


@pytest.mark.parametrize(
    ("rule", "written", "value"),
    [
        ("KV405", "nvidia.com/gpu: 1", f"nvidia.com/gpu: '{_SHORT_WORDS}'"),
        # (ideographic spaces: whitespace to the word cut, none to YAML's plain scalar)
        ("KV208", "vllm/vllm-openai:v0.11.0", "vllm/vllm-openai:" + _SHORT_WORDS.replace(" ", "\u3000")),
        ("KV502", "meta-llama/Llama-3.1-8B-Instruct", f"'{_SHORT_WORDS}'"),
    ],
)
def test_a_value_of_many_short_words_is_quoted_clipped(
    tmp_path: Path, rule: str, written: str, value: str
) -> None:
    assert written in SRC
    p = tmp_path / "words.yaml"
    p.write_text(SRC.replace(written, value, 1))
    result = run_paths([str(p)], Options(allow_hub=False), no_config=True).result
    found = [d for d in result.diagnostics if d.rule == rule]
    assert found, f"the value gets its {rule}"
    assert re.search(r"ab\sab\sab", found[0].message)  # the value is quoted, its start shown
    for d in result.diagnostics:
        for text in (d.message, d.fix, d.summary, d.statement, *d.details):
            assert len(text) <= MESSAGE_CHARS, (d.rule, len(text), text[:200])
    assert len(render("text", result)) < 4 * MESSAGE_CHARS * len(result.diagnostics)


def test_clip_words_cuts_a_long_text_of_short_words_in_its_middle() -> None:
    text = "model '" + "ab " * 10_000 + "x': not found; give kvlint the config"
    out = clip_words(text)
    assert len(out) == MESSAGE_CHARS
    assert out.startswith("model 'ab ab") and out.endswith("ab x': not found; give kvlint the config")
    assert "..." in out
    assert clip_words(out) is out  # clipped once: nothing more to cut


def test_clip_words_keeps_short_text_and_cuts_only_long_words() -> None:
    short = "image 'vllm/vllm-openai:latest' is not pinned"
    assert clip_words(short) is short
    long = "x" * QUOTED_CHARS + " " + "word " * 100
    assert clip_words(long) is long  # no long word: the text as it is, however long
    word = "'" + "7" * 1000 + "'"
    out = clip_words(f"value {word}: not a number")
    cut = out.split()[1]
    assert len(cut) == QUOTED_CHARS
    assert cut.startswith("'777") and cut.endswith("...777777':")
    assert out.endswith(" not a number")
    # the webhook's clipping of warnings: the end dropped, no end kept
    assert clip("a" * 10 + " b", 8) == "aaaaa..."
