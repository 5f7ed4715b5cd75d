"""A suppression comment spelled otherwise than kvlint reads it (``# KVLINT: disable=KV202``, ``# kvlint: IGNORE
...``, ``# Kvlint: ignore``, ``# kvlint ignore ...`` without the colon) suppressed nothing without a word: the file
was not even kept for the comment pass (its text held no lower-case ``kvlint:``). Each is a KV003 at the comment
that names the form kvlint reads, ``# kvlint: ignore RULE=reason``, and the finding stays; in a streaming run
(``-j 2``) and in the admission webhook's JSON fast path alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"
READS = "'# kvlint: ignore RULE=reason'"


def _with_comment(comment: str) -> tuple[str, int]:
    text = EXAMPLE.read_text(encoding="utf-8").replace("          args:\n", f"          args: {comment}\n", 1)
    assert comment in text
    return text, text.splitlines().index(f"          args: {comment}") + 1


@pytest.mark.parametrize(
    "comment, written, entries",
    [
        ("# KVLINT: disable=KV202", "# KVLINT: disable", "KV202=why this is acceptable"),
        (
            "# KVLINT: ignore KV202=clients send max_tokens",
            "# KVLINT: ignore",
            "KV202=clients send max_tokens",
        ),
        ("# Kvlint: ignore KV202=short prompts", "# Kvlint: ignore", "KV202=short prompts"),
        ("# kvlint: IGNORE kv202=short prompts", "# kvlint: IGNORE", "KV202=short prompts"),
        ("# KvLint: noqa", "# KvLint: noqa", "KV104=why this is acceptable"),
        ("# kvlint ignore KV202=short prompts", "# kvlint ignore", "KV202=short prompts"),
        ("#kvlint-ignore KV202", "#kvlint-ignore", "KV202=why this is acceptable"),
        (
            "# KVLINT:disable-next-line max-model-len-unset",
            "# KVLINT:disable-next-line",
            "KV202=why this is acceptable",
        ),
    ],
)
def test_another_spelling_is_kv003_naming_the_form_kvlint_reads(
    comment: str, written: str, entries: str
) -> None:
    text, line = _with_comment(comment)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    assert "KV202" in [d.rule for d in result.diagnostics] and result.suppressed == 0
    (kv003,) = [d for d in result.diagnostics if d.rule == "KV003"]
    assert kv003.loc is not None and (kv003.loc.line, kv003.loc.column) == (line, len("          args: ") + 1)
    assert kv003.message.startswith(
        f"'{written}' is not spelled as kvlint reads its comments, so it suppresses nothing"
    )
    assert READS in kv003.message
    assert (
        kv003.fix == f'write "# kvlint: ignore {entries}" (a reason after "=", entries separated by commas)'
    )
    # what the fix says to write suppresses the finding
    fixed = text.replace(comment, f"# kvlint: ignore {entries}")
    again = run_documents(load_text(fixed, "d.yaml"), Options(allow_hub=False))
    assert "KV003" not in [d.rule for d in again.diagnostics]
    assert ("KV202" in [d.rule for d in again.diagnostics]) == (not entries.startswith("KV202"))


@pytest.mark.parametrize(
    "comment",
    [
        "# Kvlint ignores this list on purpose",  # prose: "ignores" is not the word
        "# KVLINT: skip the GPU check upstream",  # prose after the word
        "# the KVLINT docs say to keep these flags",
    ],
)
def test_prose_that_mentions_kvlint_is_not_flagged(comment: str) -> None:
    text, _ = _with_comment(comment)
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    assert "KV003" not in [d.rule for d in result.diagnostics]


def test_a_streaming_run_flags_it_too(tmp_path: Path) -> None:
    text, line = _with_comment("# KVLINT: disable=KV202")
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    r = CliRunner().invoke(
        main,
        [
            "check",
            "--offline",
            "--no-config",
            "--fail-on",
            "never",
            "-j",
            "2",
            "--format",
            "json",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    kv003 = [d for d in json.loads(r.stdout)["diagnostics"] if d["rule"] == "KV003"]
    assert [(d["file"], d["line"]) for d in kv003] == [(str(tmp_path / "a.yaml"), line)]


def test_the_webhook_fast_path_gives_way_on_another_spelling() -> None:
    """The JSON fast path reproduces the loader, which now keeps a text holding ``KVLINT`` for the comment pass:
    a string value holding it makes the fast path give way, as ``kvlint:`` does."""
    from kvlint.webhook.jsonload import load_object

    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x"},
        "data": {"a": "# KVLINT: disable"},
    }
    text = json.dumps(obj, indent=1, ensure_ascii=False)
    assert list(load_text(text, "review.json").source_texts) == ["review.json"]
    assert load_object(obj, "review.json") is None  # the caller loads the text instead
    plain = {**obj, "data": {"a": "no comment here"}}
    fast = load_object(plain, "review.json")
    assert fast is not None and not fast.source_texts


def test_an_annotation_key_in_another_case_is_named_with_the_one_kvlint_reads() -> None:
    """``KVLINT.IO/IGNORE`` (annotation keys are case-sensitive; kvlint reads ``kvlint.io/ignore``) suppressed
    nothing and KV005, which names unread ``kvlint.io/`` keys, skipped it for its prefix's case. It is a KV005 at
    the key, "did you mean 'kvlint.io/ignore'?", and the webhook counts the key as one that changes findings."""
    from kvlint.webhook.review import lint_relevant

    base = EXAMPLE.read_text(encoding="utf-8")
    for key in ("KVLINT.IO/IGNORE", "Kvlint.io/ignore", "KVLINT.IO/Ignore"):
        text = base.replace(
            "metadata:\n", f'metadata:\n  annotations:\n    {key}: "KV202=short prompts"\n', 1
        )
        result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
        assert "KV202" in [d.rule for d in result.diagnostics] and result.suppressed == 0
        (kv005,) = [d for d in result.diagnostics if d.rule == "KV005" and key in d.message]
        assert (
            kv005.loc is not None
            and kv005.loc.line == text.splitlines().index(f'    {key}: "KV202=short prompts"') + 1
        )
        assert "did you mean 'kvlint.io/ignore'?" in kv005.message
        assert kv005.fix == f"rename '{key}' to 'kvlint.io/ignore'"
        obj = {"metadata": {"annotations": {key: "x", "other.io/y": "z"}}, "spec": {}}
        assert lint_relevant(obj)["metadata"]["annotations"] == {key: "x"}


def test_a_long_run_of_blanks_after_kvlint_is_read_in_linear_time() -> None:
    """``\\s*[:=_-]?\\s*`` after ``kvlint`` split a run of blanks between its two ``\\s*`` every way before the word
    failed: ``# kvlint`` and 8,000 blanks on one comment line took 8 s of a ``kvlint check`` (12,000: 16 s CPU here),
    growing as the square. The comment pass now reads such a line at once (CPU time of this process, not wall
    time; the limit is a hundred times what the line takes), and still reads blanks around the separator."""
    import time

    from kvlint.suppress import _ANY_SPELLING_RE

    line = "# kvlint" + " " * 12_000 + "x"
    t = time.process_time()
    assert _ANY_SPELLING_RE.search(line) is None
    assert time.process_time() - t < 1.0
    for spelt in ("# kvlint   ignore KV202", "#kvlint :  disable KV202", "# KVLINT-ignore KV202"):
        m = _ANY_SPELLING_RE.search(spelt)
        assert m is not None and m.group(2) == "KV202", spelt


@pytest.mark.parametrize(
    "comment, expected",
    [
        ("#  kvlint ignore KV202=short prompts", False),  # two blanks: no text the loader keeps a file for
        ("#\tkvlint-ignore KV202=short prompts", False),
        ("# kVlint ignore KV202=short prompts", False),
        # the colon kvlint reads, after any blanks: another linter's word
        ("#   kvlint: disable KV202", True),
        ("#  kvlint : disable KV202", False),  # no "kvlint:" as written
        ("#  KVLINT ignore KV202=short prompts", True),  # a capitalised spelling, after any blanks
    ],
)
def test_whether_a_comment_is_flagged_does_not_depend_on_the_rest_of_its_file(
    comment: str, expected: bool
) -> None:
    """The comment pass reads the files the loader kept (:func:`kvlint.load.holds_suppression_marker`): a spelling
    it flags in a file that also holds a ``# kvlint: ignore`` comment is flagged alone too, and one it does not
    flag alone is not flagged next to such a comment either."""
    text, line = _with_comment(comment)
    other = "# kvlint: ignore KV104=one long request at a time\n"

    def flagged(t: str, at: int) -> bool:
        result = run_documents(load_text(t, "d.yaml"), Options(allow_hub=False))
        return any(d.rule == "KV003" and d.loc is not None and d.loc.line == at for d in result.diagnostics)

    alone, with_other = flagged(text, line), flagged(other + text, line + 1)
    assert alone == with_other == expected, (alone, with_other)
