"""The admission texts (warnings, deny message) equal their definitions: every message and fix squeezed with
``" ".join(text.split())`` and escaped with ``printable``, whatever whitespace, control or non-ASCII
characters they hold (``kvlint.statement.squeeze`` skips the split for text with nothing to squeeze)."""

from __future__ import annotations

import random

import pytest

from kvlint.report.escape import printable
from kvlint.source import Loc
from kvlint.statement import squeeze
from kvlint.types import Diagnostic
from kvlint.webhook.review import MAX_MESSAGE_CHARS, MAX_WARNING_CHARS, Review, deny_message, format_warning

#: every character str.split splits on, some printable and unprintable others, a lone surrogate
ODD = [chr(c) for c in range(0x21)] + ["\x7f", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u200b"]
ODD += ["\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u202e", "\ufeff", "\udcff", "é", "語", " ", "  "]


def _texts() -> list[str]:
    rnd = random.Random(19)
    out = ["", " ", "a", " a", "a ", "a  b", "a b", "plain text, one space each: fine"]
    out += [f"x{c}y" for c in ODD] + [f"{c}x" for c in ODD] + [f"x{c}" for c in ODD]
    words = ["KV103", "needs", "16.00", "GiB", "--max-model-len", "131072", "fits"]
    for _ in range(400):
        parts = [rnd.choice(words + ODD) for _ in range(rnd.randint(0, 90))]
        out.append("".join(p if rnd.random() < 0.3 else p + " " for p in parts))
    return out


def _old_clip(text: str, limit: int) -> str:
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _old_warning(d: Diagnostic, note: str = "") -> str:
    where = f" [container {d.container}]" if d.container else ""
    head = printable(f"{d.rule}{note}{where}: ")
    msg = printable(" ".join(d.message.split()))
    fix = printable(" ".join(d.fix.split()))
    full = f"{head}{msg}; fix: {fix}" if fix else f"{head}{msg}"
    return full if len(full) <= MAX_WARNING_CHARS else _old_clip(f"{head}{msg}", MAX_WARNING_CHARS)


def _old_deny(review: Review, errors: list[Diagnostic]) -> str:
    n = len(errors)
    lines = [f"kvlint: {printable(review.ref or 'object')} has {n} error{'s' if n != 1 else ''}:"]
    repeats = 0
    for i, d in enumerate(errors):
        where = f" [container {d.container}]" if d.container else ""
        entry = printable(f"- {d.rule}{where}: {' '.join(d.message.split())}")
        if d.fix:
            entry += "\n  fix: " + printable(" ".join(d.fix.split()))
        if entry in lines:  # an entry listed already is counted at the end
            repeats += d.stands_for
            continue
        if sum(len(x) + 1 for x in lines) + len(entry) > MAX_MESSAGE_CHARS - 100:
            lines.append(f"- ... {n - i} more; run `kvlint check` on the manifest for the full report")
            break
        lines.append(entry)
    if repeats:
        lines.append(
            "- (and 1 more error as listed above: the same finding in another container of the same name)"
            if repeats == 1
            else f"- (and {repeats} more errors as listed above: the same findings in other containers of the "
            "same name)"
        )
    text = "\n".join(lines)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."


def test_squeeze_is_split_and_join() -> None:
    for text in _texts():
        assert squeeze(text) == " ".join(text.split()), repr(text)


@pytest.mark.parametrize("note", ["", " (error, not enforced)"])
def test_warnings_and_deny_message_equal_their_definitions(note: str) -> None:
    texts = _texts()
    rnd = random.Random(7)
    review = Review("admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, {}, None)
    diags = []
    for text in texts:
        fix = rnd.choice(["", text[::-1], "--max-model-len 8192", " a\tb "])
        container = rnd.choice(["", "vllm", "a b", "x\u3000y", "tab\there"])
        diags.append(Diagnostic("KV103", "error", text, Loc("f.json", 1, 1), fix=fix, container=container))
    for container in ("", "a  b", "x\u3000y "):  # an empty message beside a fix too long to keep
        diags.append(
            Diagnostic("KV103", "error", "", Loc("f.json", 1, 1), fix="y " * 200, container=container)
        )
    for d in diags:
        assert format_warning(d, note) == _old_warning(d, note), repr(d)
    for k in range(0, len(diags), 3):
        errors = diags[k : k + rnd.randint(1, 12)]
        assert deny_message(review, errors) == _old_deny(review, errors)


def test_a_repeated_error_is_listed_once_and_leaves_room_for_the_others() -> None:
    """Three containers of one name with the same error filled the deny message three times with one text, and
    the object's other error was left out ("... 1 more"); the repeats are counted on one line now."""
    review = Review("admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, {}, None)
    same = Diagnostic("KV103", "error", "needs " + "x" * 1300, Loc("f.json", 1, 1), fix="f", container="vllm")
    other = Diagnostic("KV405", "error", "another problem", Loc("f.json", 9, 1), container="vllm")
    text = deny_message(review, [same, same, same, other])
    assert text.startswith("kvlint: Deployment/ns/n has 4 errors:\n")
    assert text.count("- KV103") == 1 and "- KV405 [container vllm]: another problem" in text
    assert text.endswith(
        "- (and 2 more errors as listed above: the same findings in other containers of the same name)"
    )
    one = deny_message(review, [same, same, other])
    assert one.endswith(
        "- (and 1 more error as listed above: the same finding in another container of the same name)"
    )
    # a repeated capped finding repeats the findings it stands for: 1 + 70 + 70 + 1 = 142 errors, 70 of them repeats
    rest = Diagnostic(
        "KV206", "error", "70 more KV206 findings", Loc("f.json", 9, 1), container="vllm", stands_for=70
    )
    capped = deny_message(review, [same, rest, rest, other])
    assert capped.startswith("kvlint: Deployment/ns/n has 142 errors:\n")
    assert capped.endswith(
        "- (and 70 more errors as listed above: the same findings in other containers of the same name)"
    )
    assert "more; run" not in text
