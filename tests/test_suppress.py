"""`kvlint.io/ignore` suppressions: parsing, placement (pod template / object), reasons required (KV003),
unknown ids, --no-exemptions, and the suppressed count in every report (fixtures/config/suppress/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.load import load_text
from kvlint.pipeline import Exemption, Options, parse_ignore_annotation, run_check, run_documents
from kvlint.report import FORMATS, render

SUP = Path(__file__).resolve().parents[1] / "fixtures" / "config" / "suppress"
OFF = Options(allow_hub=False)


def _run(name: str, options: Options = OFF):  # type: ignore[no-untyped-def]
    return run_check([str(SUP / name)], options)


def test_parse_annotation_reasons_may_hold_commas() -> None:
    ex, bad = parse_ignore_annotation("KV202=clients send max_tokens, and prompts are short, kv208 = pinned")
    assert ex == [
        Exemption("KV202", "clients send max_tokens, and prompts are short"),
        Exemption("KV208", "pinned"),
    ]
    assert bad == []
    ex, bad = parse_ignore_annotation("KV104, KV1=capacity reviewed, KV105:oops")
    assert ex == [Exemption("KV104", ""), Exemption("KV1", "capacity reviewed")]
    assert bad == ["KV105:oops"]


def test_unsuppressed_baseline_has_the_findings() -> None:
    rules = sorted(
        d.rule for d in _run("template.yaml", Options(allow_hub=False, exemptions_allowed=False)).diagnostics
    )
    assert rules == ["KV202", "KV208"]


def test_template_annotation_suppresses_with_reasons() -> None:
    res = _run("template.yaml")
    assert res.diagnostics == []
    assert res.suppressed == 2
    reasons = {s.diagnostic.rule: s.reason for s in res.suppressed_diagnostics}
    assert reasons == {
        "KV202": "clients always send max_tokens, and prompts are short",
        "KV208": "pinned by digest in prod",
    }
    # the annotation's own position (line 11 of the fixture, the value's column)
    assert {(s.annotation.line, s.annotation.column) for s in res.suppressed_diagnostics} == {(11, 27)}


def test_object_annotation_and_prefix() -> None:
    res = _run("object.yaml")
    assert res.diagnostics == []
    assert sorted(s.diagnostic.rule for s in res.suppressed_diagnostics) == ["KV202", "KV208"]
    assert res.suppressed_diagnostics[0].annotation.line == 7


def test_entry_without_reason_is_kv003_and_not_applied() -> None:
    res = _run("noreason.yaml")
    by_rule = {d.rule: d for d in res.diagnostics}
    assert sorted(by_rule) == ["KV003", "KV202"]
    kv003 = by_rule["KV003"]
    assert kv003.severity == "warning"
    assert "KV202 without a reason" in kv003.message
    assert (kv003.loc.line, kv003.loc.column) == (10, 27)
    assert kv003.object == "Deployment/chat"
    assert [s.diagnostic.rule for s in res.suppressed_diagnostics] == ["KV208"]


def test_unknown_rule_is_kv003() -> None:
    res = _run("unknown.yaml")
    rules = sorted(d.rule for d in res.diagnostics)
    assert rules == ["KV003", "KV202"]
    assert "unknown rule KV992" in next(d.message for d in res.diagnostics if d.rule == "KV003")
    assert res.suppressed == 0


def test_no_exemptions_reports_everything_and_no_kv003() -> None:
    opts = Options(allow_hub=False, exemptions_allowed=False)
    for name in ("template.yaml", "noreason.yaml"):
        res = _run(name, opts)
        assert res.suppressed == 0
        assert sorted(d.rule for d in res.diagnostics) == ["KV202", "KV208"]


def test_kv003_can_be_ignored_by_config_but_not_by_annotation() -> None:
    res = _run("noreason.yaml", Options(allow_hub=False, ignore=("KV003",)))
    assert [d.rule for d in res.diagnostics] == ["KV202"]
    text = (SUP / "noreason.yaml").read_text().replace('"KV202, KV208', '"KV003=quiet, KV202, KV208')
    res2 = run_documents(load_text(text, "x.yaml"), OFF)
    assert "KV003" in {d.rule for d in res2.diagnostics}


def test_config_ignored_rules_are_not_counted_as_suppressed() -> None:
    res = _run("template.yaml", Options(allow_hub=False, ignore=("KV208",)))
    assert [s.diagnostic.rule for s in res.suppressed_diagnostics] == ["KV202"]


def test_every_format_reports_the_count() -> None:
    res = _run("template.yaml")
    for fmt in FORMATS:
        out = render(fmt, res)
        if fmt == "json":
            doc = json.loads(out)
            assert doc["summary"]["suppressed"] == 2
            assert {s["rule"] for s in doc["suppressed"]} == {"KV202", "KV208"}
        elif fmt == "sarif":
            results = json.loads(out)["runs"][0]["results"]
            sup = [r for r in results if r.get("suppressions")]
            assert len(sup) == 2 and sup[0]["suppressions"][0]["kind"] == "inSource"
            assert {r["suppressions"][0]["justification"] for r in sup} == {
                "clients always send max_tokens, and prompts are short",
                "pinned by digest in prod",
            }
        elif fmt == "junit":
            assert out.count("<skipped ") == 2 and 'skipped="2"' in out
        elif fmt == "jsonl":
            *diags, last = [json.loads(line) for line in out.splitlines()]
            assert last["run_summary"]["suppressed"] == 2
            assert not {"KV202", "KV208"} & {d["rule"] for d in diags}
        else:
            assert "2 suppressed" in out, fmt


def test_cli_no_exemptions_flag() -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["check", "--offline", "--no-config", str(SUP / "template.yaml")])
    assert r.exit_code == 0, r.output
    assert "0 errors, 0 warnings" in r.output and "2 suppressed" in r.output
    r = runner.invoke(
        main,
        [
            "check",
            "--offline",
            "--no-config",
            "--no-exemptions",
            "--fail-on",
            "warning",
            str(SUP / "template.yaml"),
        ],
    )
    assert r.exit_code == 1
    assert "KV202" in r.output and "0 suppressed (exemptions disabled)" in r.output


# ---- separators, bare "KV" selector, empty value ------------------------------------------------------------

_TEMPLATE_VALUE = (
    '"KV202=clients always send max_tokens, and prompts are short, KV208=pinned by digest in prod"'
)


def _with_value(value: str):  # type: ignore[no-untyped-def]
    text = (SUP / "template.yaml").read_text()
    assert _TEMPLATE_VALUE in text
    return run_documents(load_text(text.replace(_TEMPLATE_VALUE, value), "t.yaml"), OFF)


def test_parse_annotation_semicolon_separator() -> None:
    ex, bad = parse_ignore_annotation("KV103=a; KV202=b;kv208 = c; d")
    assert ex == [Exemption("KV103", "a"), Exemption("KV202", "b"), Exemption("KV208", "c; d")]
    assert bad == []


def test_semicolon_separated_annotation_suppresses_both() -> None:
    res = _with_value('"KV202=clients send max_tokens; KV208=pinned by digest"')
    assert res.diagnostics == []
    assert {s.diagnostic.rule: s.reason for s in res.suppressed_diagnostics} == {
        "KV202": "clients send max_tokens",
        "KV208": "pinned by digest",
    }


def test_parse_annotation_selector_needs_a_digit() -> None:
    ex, bad = parse_ignore_annotation("KV=everything, KV1=capacity, KV10=x, KV103=y")
    assert ex == [Exemption("KV1", "capacity"), Exemption("KV10", "x"), Exemption("KV103", "y")]
    assert bad == ["KV=everything"]


def test_bare_kv_selector_is_kv003_and_suppresses_nothing() -> None:
    res = _with_value('"KV=we accept everything"')
    assert res.suppressed == 0
    assert sorted(d.rule for d in res.diagnostics) == ["KV003", "KV202", "KV208"]
    kv003 = next(d for d in res.diagnostics if d.rule == "KV003")
    assert "at least one digit" in kv003.message and kv003.loc.line == 11


def test_empty_annotation_is_kv003() -> None:
    for value in ('""', '"  "'):
        res = _with_value(value)
        assert res.suppressed == 0
        assert sorted(d.rule for d in res.diagnostics) == ["KV003", "KV202", "KV208"]
        assert "is empty" in next(d.message for d in res.diagnostics if d.rule == "KV003")


# ---------------------------------------------------------------------------------------- inline comments

CHAT = (
    Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"
)  # KV103 + KV202 on `args:` (the vLLM command's line)


def _inline(tmp_path: Path, comment: str, *, trailing: bool = False) -> Path:
    text = CHAT.read_text()
    if trailing:
        text = text.replace("          args:\n", f"          args:  {comment}\n", 1)
    else:
        text = text.replace("          args:\n", f"          {comment}\n          args:\n", 1)
    p = tmp_path / "inline.yaml"
    p.write_text(text)
    return p


def test_inline_comment_above_suppresses_with_reasons(tmp_path: Path) -> None:
    p = _inline(tmp_path, "# kvlint: ignore KV202=the gateway caps prompts at 8k, KV103=a staging smoke test")
    res = run_check([str(p)], Options(allow_hub=False))
    assert res.diagnostics == []
    assert sorted((s.diagnostic.rule, s.reason) for s in res.suppressed_diagnostics) == [
        ("KV103", "a staging smoke test"),
        ("KV202", "the gateway caps prompts at 8k"),
    ]
    assert all(s.annotation is not None and s.annotation.line == 22 for s in res.suppressed_diagnostics)


def test_inline_trailing_comment_and_prefix(tmp_path: Path) -> None:
    p = _inline(tmp_path, "# kvlint: ignore KV2=context limits are enforced upstream", trailing=True)
    res = run_check([str(p)], Options(allow_hub=False))
    assert [d.rule for d in res.diagnostics] == ["KV103"]
    assert [s.diagnostic.rule for s in res.suppressed_diagnostics] == ["KV202"]


def test_inline_comment_without_reason_is_kv003_and_not_applied(tmp_path: Path) -> None:
    p = _inline(tmp_path, "# kvlint: ignore KV202, KV999=typo")
    res = run_check([str(p)], Options(allow_hub=False))
    rules = sorted(d.rule for d in res.diagnostics)
    assert rules == ["KV003", "KV103", "KV202"]
    (note,) = [d for d in res.diagnostics if d.rule == "KV003"]
    assert note.loc is not None and (note.loc.line, note.loc.column) == (22, 11)
    assert "KV202 has no reason" in note.message and "KV999 is not a rule id" in note.message
    # the fix shows the comment this one should be, for the rule it named (it always said KV104)
    assert note.fix is not None and note.fix.startswith(
        'write "# kvlint: ignore KV202=why this is acceptable"'
    )


def test_inline_comments_are_ignored_without_exemptions(tmp_path: Path) -> None:
    p = _inline(tmp_path, "# kvlint: ignore KV202=reason")
    res = run_check([str(p)], Options(allow_hub=False, exemptions_allowed=False))
    assert sorted(d.rule for d in res.diagnostics) == ["KV103", "KV202"] and res.suppressed == 0


def test_inline_comment_in_a_helm_template(tmp_path: Path) -> None:
    """Findings mapped to a chart's template honour the comments written in the template."""
    import shutil

    chart = tmp_path / "chat-chart"
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "chat-chart", chart)
    tpl = chart / "templates" / "deployment.yaml"
    text = tpl.read_text().replace(
        "          args:\n",
        "          # kvlint: ignore KV202=prompts are capped upstream\n          args:\n",
    )
    tpl.write_text(text)
    rendered_src = Path(__file__).resolve().parents[1] / "fixtures" / "helm" / "rendered" / "chat-chart.yaml"
    rendered = tmp_path / "rendered.yaml"
    # the rendered output as helm prints it for the edited template (the comment line renders too)
    rendered.write_text(
        rendered_src.read_text().replace(
            "          args:\n",
            "          # kvlint: ignore KV202=prompts are capped upstream\n          args:\n",
        )
    )
    res = run_check([str(rendered)], Options(allow_hub=False))
    assert [d.rule for d in res.diagnostics] == ["KV103"]
    assert res.diagnostics[0].loc is not None and res.diagnostics[0].loc.file.endswith("deployment.yaml")
    assert [s.diagnostic.rule for s in res.suppressed_diagnostics] == ["KV202"]


def test_malformed_inline_comment_is_reported_wherever_it_stands(tmp_path: Path) -> None:
    text = CHAT.read_text().replace("spec:\n", "spec:  # kvlint: ignore KV104\n", 1)
    p = tmp_path / "far.yaml"
    p.write_text(text)
    res = run_check([str(p)], Options(allow_hub=False))
    notes = [d for d in res.diagnostics if d.rule == "KV003"]
    assert len(notes) == 1 and "KV104 has no reason" in notes[0].message


def test_an_ignore_annotation_of_more_than_64_kib_is_one_kv003_and_suppresses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A custom resource's pod template may hold an annotation of megabytes; read entry by entry (a parse, a rule
    lookup and a KV003 note each), 170,000 entries in 1 MB cost the webhook worker 0.9 s of CPU, and 3 MB ran
    past its 2 s budget (admitted unchecked). A value over 64 KiB is not parsed (counted: no call to the
    parser), suppresses nothing and gets one KV003 saying why."""
    from kvlint import suppress

    calls: list[int] = []
    real = suppress.parse_ignore_annotation
    monkeypatch.setattr(suppress, "parse_ignore_annotation", lambda v: calls.append(len(v)) or real(v))
    value = '"KV202=clients send max_tokens, KV208=pinned by digest' + ", KV1" * 14_000 + '"'
    res = _with_value(value)
    assert calls == []
    assert res.suppressed == 0
    assert sorted(d.rule for d in res.diagnostics) == ["KV003", "KV202", "KV208"]
    kv003 = next(d for d in res.diagnostics if d.rule == "KV003")
    assert "characters long" in kv003.message and "65,536" in kv003.message and kv003.loc.line == 11
    # the same entries in a value under the bound are parsed and applied as before
    res = _with_value('"KV202=clients send max_tokens, KV208=pinned by digest' + ", KV1" * 100 + '"')
    assert calls and res.suppressed == 2


@pytest.mark.parametrize(
    "comment",
    [
        "# kvlint: disable KV202",
        "# kvlint:disable-line KV202",
        "# kvlint: noqa: KV202",
        "#kvlint: skip KV202",
    ],
)
def test_another_linters_word_is_kv003_and_suppresses_nothing(comment: str) -> None:
    """``# kvlint: disable KV202`` (yamllint's word, ESLint's, Checkov's ``skip``, flake8's ``noqa``) was read as no
    comment at all: the finding stayed and nothing said why (ux50). It is a KV003 at the comment naming kvlint's
    ``# kvlint: ignore KV202=reason``, and the finding stays."""
    example = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"
    text = example.read_text(encoding="utf-8").replace("          args:\n", f"          args: {comment}\n", 1)
    assert comment in text
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    rules = [d.rule for d in result.diagnostics]
    assert "KV202" in rules and result.suppressed == 0
    (kv003,) = [d for d in result.diagnostics if d.rule == "KV003"]
    line = text.splitlines().index(f"          args: {comment}") + 1
    assert kv003.loc is not None and (kv003.loc.line, kv003.loc.column) == (line, len("          args: ") + 1)
    assert "is not a kvlint comment, so it suppresses nothing" in kv003.message
    assert (
        kv003.fix
        == 'write "# kvlint: ignore KV202=why this is acceptable" (a reason after "=", entries separated by commas)'
    )
    # prose that mentions kvlint: is not a directive
    prose = example.read_text(encoding="utf-8").replace(
        "          args:\n", "          args: # kvlint: this list is checked in CI\n", 1
    )
    assert "KV003" not in [
        d.rule for d in run_documents(load_text(prose, "d.yaml"), Options(allow_hub=False)).diagnostics
    ]


def test_an_entry_naming_a_rule_by_its_name_says_its_id() -> None:
    """An entry written with the rule's name as the GitHub annotation's title and SARIF show it
    (``max-model-len-unset=...``) suppresses nothing, as before, but the KV003 says which id that name is and
    the entry to write, in the comment and in the annotation (ux50: "not of the form RULE=reason" only)."""
    example = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"
    base = example.read_text(encoding="utf-8")
    comment = base.replace(
        "          args:\n", "          args: # kvlint: ignore max-model-len-unset=short prompts\n", 1
    )
    annotated = base.replace(
        "metadata:\n",
        'metadata:\n  annotations:\n    kvlint.io/ignore: "max-model-len-unset=short prompts"\n',
        1,
    )
    for text, fix in (
        (comment, 'write "# kvlint: ignore KV202=short prompts"'),
        (annotated, 'write "KV202=short prompts"'),
    ):
        assert text != base
        result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
        assert "KV202" in [d.rule for d in result.diagnostics] and result.suppressed == 0
        (kv003,) = [d for d in result.diagnostics if d.rule == "KV003"]
        assert "'max-model-len-unset' is the name of KV202" in kv003.message, kv003.message
        assert kv003.fix == fix


@pytest.mark.parametrize(
    "comment, flagged, entry",
    [
        # prose that starts with kvlint: and one of the words: not a directive (review50G: each was a KV003)
        ("# kvlint: off-by-one in the replica count was fixed", False, ""),
        ("# kvlint: exclude this from the docs index", False, ""),
        ("# kvlint: skip the GPU check upstream", False, ""),
        # another linter's directive for another tool: nothing to say
        ("# yamllint disable rule:line-length", False, ""),
        ("# noqa: E501", False, ""),
        # directives addressed to kvlint: the word alone, or a rule after it (id, yamllint's rule:, name)
        ("# kvlint: off", True, "KV104"),
        ("# kvlint: noqa  # upstream default", True, "KV104"),
        ("# kvlint: disable rule:KV202", True, "KV202"),
        ("# kvlint: disable max-model-len-unset", True, "KV202"),
    ],
)
def test_only_a_directive_addressed_to_kvlint_is_a_foreign_comment(
    comment: str, flagged: bool, entry: str
) -> None:
    example = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"
    text = example.read_text(encoding="utf-8").replace("          args:\n", f"          args: {comment}\n", 1)
    assert comment in text
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    kv003 = [d for d in result.diagnostics if d.rule == "KV003"]
    assert "KV202" in [d.rule for d in result.diagnostics] and result.suppressed == 0
    assert len(kv003) == int(flagged), [d.message for d in kv003]
    if flagged:
        fix = kv003[0].fix
        assert fix.startswith(f'write "# kvlint: ignore {entry}=why this is acceptable"'), fix
