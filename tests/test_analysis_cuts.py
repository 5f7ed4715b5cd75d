"""The per-container analysis cuts of issue 19 (branch perf27, ``docs/performance.md``): each faster form is
checked against the form it replaced, kept here as the reference, on crafted and on seeded random inputs."""

from __future__ import annotations

import random
import re

import pytest

from kvlint.load import top_level_keys

# the pattern repository_chart searched before: a top-level key at the start of any line (re.MULTILINE)
_TOP_KEY_REFERENCE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:", re.MULTILINE)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "workload:\n  image: x\nmodelArtifacts:\n  name: y\n",
        "a: 1",  # a key at the very start of the text
        "\n\nb:\n",
        "  indented: 1\nnot_a_key\nc :\n",  # indented keys are not top-level
        "key\n: value\n",  # \s* crosses the newline, as before
        "x\r\ny: 1\r\n",  # a carriage return does not start a line for ^
        "u\u2028v: 1\x85w: 2\x0cz: 3\n",  # nor do Unicode line breaks, NEL or form feed
        "# comment: no\n-dash: no\n_under-score9: yes\n9digit: no\n",
        "a:b:c:\nd::\n",
    ],
)
def test_top_level_keys_match_the_multiline_pattern(text: str) -> None:
    assert top_level_keys(text) == set(_TOP_KEY_REFERENCE.findall(text))


def test_top_level_keys_match_the_multiline_pattern_on_random_text() -> None:
    rng = random.Random(27)
    alphabet = "ab_-9: \t\n\r#\x0b\x0c\u2028\x85"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert top_level_keys(text) == set(_TOP_KEY_REFERENCE.findall(text)), repr(text)


def test_names_engine_is_the_engine_text_search() -> None:
    """names_engine (substring tests first) answers as ENGINE_TEXT.search on lower-cased text, the ``tgi``
    alternatives with their lookarounds included."""
    from kvlint.engines.images import ENGINE_TEXT, ENGINE_TEXT_WORDS, names_engine

    texts = [
        "",
        "image: nginx\n",
        "image: vllm/vllm-openai:v0.11.0",
        "python3 -m sglang.launch_server",
        "ghcr.io/huggingface/text-generation-inference:3.0",
        "text-generation-launcher --model-id x",
        "ghcr.io/llm-d/llm-d-cuda:v0.3",
        "huggingface/tgi-gaudi:2.0",
        "image: neuronx-tgi:0.0.25",  # -tgi at a word's end
        "tgi-entrypoint.sh",  # tgi- at a word's start
        "mytgi-x",  # tgi- inside a word: no match
        "a-tgix",  # -tgi followed by a letter: no match
        "stgi",
        "x-tgi",
        "tgi",
        *ENGINE_TEXT_WORDS,
    ]
    rng = random.Random(27)
    pieces = ["tgi", "-", "a", "0", " ", "vll", "m", "llm-d/", "llm-d", "sg", "lang", "\n"]
    pieces.append("text-generation-")
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(20000)]
    found = [names_engine(t) for t in texts]
    assert found == [ENGINE_TEXT.search(t) is not None for t in texts]
    assert 100 < sum(found) < len(found) - 100


def _old_flag_term(flag: str, dashes: str = "--") -> str:
    words = flag.lstrip("-").replace("_", "-").split("-")
    return r"(?<![\w-])" + dashes + "[-_]".join(map(re.escape, words)) + r"(?![\w-])"


def test_values_terms_and_flag_pattern_match_their_lookbehind_first_forms() -> None:
    """The production-stack values terms (workloads.stack_values.VALUES_TERMS) and rules.context._FLAG, written to
    start with a literal, find the same spans as the patterns that started with ``(?<![\\w-])``, on random fixes
    built of the terms' own words."""
    from kvlint.rules.context import _FLAG
    from kvlint.workloads.stack_values import _KEY_FLAGS, VALUES_TERMS

    old = [_old_flag_term(flag, "(?:--)?") for _, flag in _KEY_FLAGS]
    old += [_old_flag_term("--enable-chunked-prefill", "--(?:no-)?")]
    old += [_old_flag_term("--enable-prefix-caching", "--(?:no-)?")]
    by_text = {t.pattern.pattern: t.pattern for t in VALUES_TERMS}
    new = [t.pattern for t in VALUES_TERMS[: len(old)]]
    port = next(p for s, p in by_text.items() if "port(" in s)
    other = next(p for s, p in by_text.items() if s.endswith("[a-z][a-z0-9_-]*"))
    pairs = list(zip([re.compile(p) for p in old], new, strict=True))
    pairs += [(re.compile(_old_flag_term("--port")), port)]
    pairs += [(re.compile(r"(?<![\w-])--[a-z][a-z0-9_-]*"), other)]
    pairs += [(re.compile(r"(?<![\w-])--([a-z][a-z0-9_-]*)"), _FLAG)]
    rng = random.Random(27)
    pieces = ["--", "-", "_", "no-", "max", "model", "len", "dtype", "port", "enable", "chunked", "prefill"]
    pieces += [
        "tensor",
        "parallel",
        "size",
        "gpu",
        "memory",
        "utilization",
        "runner",
        " ",
        "x",
        "9",
        "é",
        "(",
    ]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))) for _ in range(20000)]
    texts += [
        "--max-model-len 2048",
        "set max_model_len",
        "x--port",
        "--port=8000",
        "a --no-enable-chunked-prefill",
    ]
    hits = 0
    for before, after in pairs:
        for text in texts:
            spans = [(m.span(), m.groups()) for m in before.finditer(text)]
            assert [(m.span(), m.groups()) for m in after.finditer(text)] == spans, (before.pattern, text)
            hits += bool(spans)
    assert hits > 1000


def test_values_terms_and_flag_pattern_start_with_a_literal() -> None:
    """No values term nor _FLAG starts with a lookbehind (which the regular expression engine cannot skip ahead
    to: it tries such a pattern at every character)."""
    from kvlint.rules.context import _FLAG
    from kvlint.workloads.stack_values import VALUES_TERMS

    for p in [_FLAG, *(t.pattern for t in VALUES_TERMS)]:
        assert not any(alt.startswith("(?<") for alt in p.pattern.split("|")), p.pattern


def test_workloads_are_copied_by_replaced_as_dataclasses_replace_builds_them() -> None:
    """workloads.find and workloads.kubeai change a Workload with fastinit.replaced (a __dict__ copy, not the
    dataclass's field walk): Workload is a class it copies, and the copy equals dataclasses.replace's."""
    import dataclasses

    from kvlint.fastinit import _copyable_fields, replaced
    from kvlint.source import LDict
    from kvlint.types import Document, Finding, Workload

    assert _copyable_fields(Workload) is not None
    doc = Document("f.yaml", 0, LDict({"kind": "Deployment"}), None)
    w = Workload(doc, "Deployment", "x", None, LDict(), "spec.template.spec")
    note = Finding("KV503", "m", None)
    for changes in ({"findings": (note,)}, {"name": "x (enabled: false)"}, {"role": "head", "leader": "y"}):
        assert replaced(w, **changes) == dataclasses.replace(w, **changes)


def test_long_word_prefilter_never_hides_a_long_word() -> None:
    """statement._may_hold_long_word is False only for text in which _LONG_WORD finds nothing, on text built of
    words around QUOTED_CHARS long, separated by spaces, tabs, newlines and Unicode spaces; and clip_words'
    answers are those of the pattern alone."""
    from kvlint.statement import _LONG_WORD, _may_hold_long_word, clip, clip_words

    def reference(text: str) -> str:
        if len(text) <= 256:
            return text
        if _LONG_WORD.search(text) is not None:
            text = _LONG_WORD.sub(lambda m: clip(m.group(), 256, 8), text)
        return clip(text, 4096, 1024)

    rng = random.Random(27)
    seps = [" ", "  ", "\t", "\n", "\u3000", "\xa0"]
    texts = []
    for _ in range(3000):
        words = [
            "x" * rng.choice([0, 1, 5, 100, 200, 255, 256, 257, 258, 300]) for _ in range(rng.randint(1, 6))
        ]
        texts.append("".join(w + rng.choice(seps) for w in words)[: rng.randint(200, 2000)])
    texts += ["a " * 300, "a" * 256 + " b", "a" * 257, " " + "a" * 257, "b " * 100 + "a" * 257 + " c"]
    long = [t for t in texts if _LONG_WORD.search(t)]
    assert long and all(_may_hold_long_word(t) for t in long)
    assert any(not _may_hold_long_word(t) for t in texts if len(t) > 256)
    assert [clip_words(t) for t in texts] == [reference(t) for t in texts]
