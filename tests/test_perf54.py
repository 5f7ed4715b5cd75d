"""Issue 19 (branch perf54): work a check or a review did for every file that only some files need."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint import suppress
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.rules.catalog import load_catalog
from kvlint.types import Diagnostic, Loc


def _prefixes_of(ids: list[str]) -> set[str]:
    """Every prefix of every id, spelled out (the oracle)."""
    out = set()
    for i in ids:
        for k in range(len(i) + 1):
            out.add(i[:k])
    return out


def test_rule_prefixes_are_made_once_for_the_catalogue() -> None:
    """The rule-id prefixes are the catalogue's (every prefix of every id) and are made once: asked again, the
    same object answers (it was built again for every file linted, twice)."""
    first = suppress._rule_prefixes()
    assert first == _prefixes_of(list(load_catalog()))
    assert {"", "K", "KV", "KV1", "KV10", "KV101"} <= first
    assert "KV1011" not in first
    assert suppress._rule_prefixes() is first


def test_rule_prefixes_follow_a_changed_catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    """A catalogue whose ids change (another rules directory) gets its own prefixes, not the last ones."""
    real = load_catalog()
    fewer = {k: v for k, v in real.items() if not k.startswith("KV1")}
    monkeypatch.setattr(suppress, "load_catalog", lambda: dict(fewer))
    got = suppress._rule_prefixes()
    assert got == _prefixes_of(list(fewer))
    assert "KV101" not in got
    monkeypatch.setattr(suppress, "load_catalog", lambda: dict(real))
    assert "KV101" in suppress._rule_prefixes()


def _diag(path: str, line: int, rule: str = "KV202") -> Diagnostic:
    return Diagnostic(rule, "warning", "m", Loc(path, line, 1))


def test_comment_suppresses_asks_for_the_prefixes_only_where_a_comment_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file without a ``kvlint:`` comment (nearly every file, every review) never needs the rule ids: the
    predicate answers without them; a file with one asks for them once, and suppresses as before."""
    asked = []
    real = suppress._rule_prefixes

    def counting() -> frozenset[str]:
        asked.append(1)
        return real()

    monkeypatch.setattr(suppress, "_rule_prefixes", counting)
    plain = tmp_path / "plain.yaml"
    plain.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")
    loaded = load_text(plain.read_bytes(), str(plain))
    pred = suppress.comment_suppresses(loaded, Options())
    assert pred is not None
    assert not pred(_diag(str(plain), 3)) and not pred(_diag(str(plain), 4))
    assert asked == []

    commented = tmp_path / "commented.yaml"
    commented.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p  # kvlint: ignore KV202=short prompts only\n"
    )
    loaded = load_text(commented.read_bytes(), str(commented))
    pred = suppress.comment_suppresses(loaded, Options())
    assert pred is not None
    assert pred(_diag(str(commented), 4))
    assert not pred(_diag(str(commented), 4, "KV101"))
    assert not pred(_diag(str(commented), 3))
    assert len(asked) == 1


def _old_holds_marker(text: str) -> bool:
    """The test before the first scans for the spellings' cores (the oracle)."""
    from kvlint.load import SUPPRESSION_MARKER, SUPPRESSION_VARIANTS

    return SUPPRESSION_MARKER in text or any(v in text for v in SUPPRESSION_VARIANTS)


def test_every_marker_spelling_holds_a_core() -> None:
    """The first scans of :func:`holds_suppression_marker` can rule out every spelling: each holds a core."""
    from kvlint.load import _MARKER_CORES, SUPPRESSION_MARKER, SUPPRESSION_VARIANTS

    for spelling in (SUPPRESSION_MARKER, *SUPPRESSION_VARIANTS):
        assert any(core in spelling for core in _MARKER_CORES), spelling


@pytest.mark.parametrize(
    "text",
    [
        "",
        "apiVersion: v1\nkind: Pod\n",
        "image: vllm/vllm-openai:v0.9.0  # kvlint: ignore KV202=short\n",
        "x: 1 # KVLINT: disable=KV202\n",
        "x: 1 #kvlint ignore\n",
        "# Kvlint: ignore KV101=x",
        "# KvLint: ignore",
        "# KVLint ignore",
        "# kvlint ignore",
        "linter: golangci-lint\n",
        "LINT: Lint lint\n",
        "k v l i n t: KV-LINT kvlin t",
        "caf\u00e9 lint \u2028 kvlint\U0001f600:",
        "\u00e9\u00e9 KVLINT",
    ],
)
def test_holds_suppression_marker_answers_as_the_seven_scans(text: str) -> None:
    """The answer is the seven spellings' scans' on texts with and without each spelling, near misses and
    non-ASCII text."""
    from kvlint.load import holds_suppression_marker

    assert holds_suppression_marker(text) is _old_holds_marker(text)


class _CountingText(str):
    """A text that counts the substring tests made of it."""

    tests: list[str]

    def __contains__(self, sub: object) -> bool:
        self.tests.append(str(sub))
        return str.__contains__(self, str(sub))


def test_a_text_without_a_marker_is_scanned_three_times() -> None:
    """A manifest without any spelling of ``kvlint`` is ruled out in three scans (it took seven: one per spelling)."""
    from kvlint.load import holds_suppression_marker

    text = _CountingText("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: vllm\n" * 50)
    text.tests = []
    assert holds_suppression_marker(text) is False
    assert len(text.tests) == 3
