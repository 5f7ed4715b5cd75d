"""``kvlint explain`` takes a not-sized reason as the sizing line prints it ("not sized: model unknown 4"): what it
means and the rule whose finding says what to add, then that rule. Every reason :func:`kvlint.sizing.sizing_of` can
give is explained, and on the fixtures and the shared corpus each unsized container's reason is said by a finding of
the rule the explanation names, at that container (so the explanation points where the remedy is)."""

from __future__ import annotations

import ast
import inspect

from click.testing import CliRunner

from kvlint import sizing
from kvlint.cli import main
from kvlint.engines.images import Unsized
from kvlint.rules.catalog import load_catalog
from kvlint.sizing import REASONS, SIZED, UNREAD_REASONS, outcomes
from kvlint.types import CheckResult


def _reasons_sizing_of_returns() -> set[str]:
    """The string constants :func:`kvlint.sizing.sizing_of` returns, read from its source, and the Unsized values
    (returned as ``why.value``)."""
    tree = ast.parse(inspect.getsource(sizing.sizing_of))
    out = {v.value for v in Unsized}
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            for c in ast.walk(node.value):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    out.add(c.value)
    return out - set(SIZED)


def test_every_reason_is_explained_by_a_rule_of_the_catalogue() -> None:
    given = _reasons_sizing_of_returns()
    assert "model unknown" in given and "parallel size unknown" in given  # the premise: the source was read
    assert given <= set(REASONS), given - set(REASONS)
    assert {rule for rule, _ in REASONS.values()} <= set(load_catalog())


def test_explain_takes_a_reason_as_the_sizing_line_prints_it() -> None:
    for words in ("model unknown", "Model Unknown", "not sized: model unknown", "  model   unknown "):
        r = CliRunner().invoke(main, ["explain", words])
        assert r.exit_code == 0, r.output
        head, _, rest = r.stdout.partition("\n\n")
        assert head.startswith("not sized: model unknown (")
        assert "KV502 says so at the container, and its fix what to do" in " ".join(head.split())
        assert rest.startswith("KV502 model-config-unavailable (warning)")
    r = CliRunner().invoke(main, ["explain", "model known"])
    assert r.exit_code == 2 and "'model unknown'" in r.stderr


def test_the_rule_named_says_so_at_each_unsized_container(fixtures_and_corpus_check: CheckResult) -> None:
    result = fixtures_and_corpus_check
    why = {(d.object, d.container, d.rule) for d in result.diagnostics}
    missing = []
    seen = set()
    for cr, reason in zip(result.containers, outcomes(result.containers), strict=True):
        if reason in SIZED or reason == "leader":
            continue
        rule = REASONS[reason][0]
        seen.add(reason)
        if (cr.object_ref, cr.container_name, rule) not in why and (cr.object_ref, "", rule) not in why:
            missing.append((cr.workload.doc.path, cr.object_ref, cr.container_name, reason))
    assert len(seen) >= 6, seen
    # a worker that joins its leader takes the leader's reason; its own container may carry no finding
    assert len(missing) <= len([1 for cr in result.containers if cr.serving.joins is not None]), missing[:10]


def _reasons_unread_gives() -> set[str]:
    """The reason strings :func:`kvlint.sizing.unread` appends (the constants in its ``out.append`` calls) and the
    render roots' (:data:`kvlint.sizing._RENDER_ROOTS`)."""
    tree = ast.parse(inspect.getsource(sizing.unread))
    out = set(sizing._RENDER_ROOTS.values())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "append":
            for c in ast.walk(node):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    out.add(c.value)
    return out


def test_every_not_read_reason_is_explained() -> None:
    given = _reasons_unread_gives()
    assert "operator settings not read" in given and "kustomize patch not applied" in given
    assert given <= set(UNREAD_REASONS), given - set(UNREAD_REASONS)
    assert {rule for rule, _ in UNREAD_REASONS.values()} <= set(load_catalog())
    # as the text report lists one ("  not read: FILE:LINE: REASON"), and a reason that is both kinds says both
    r = CliRunner().invoke(main, ["explain", "not read: Helm values file not rendered"])
    assert r.exit_code == 0 and r.stdout.startswith("not read: Helm values file not rendered (")
    assert "\nKV002 " in r.stdout
    r = CliRunner().invoke(main, ["explain", "template not rendered"])
    assert r.exit_code == 0
    assert (
        r.stdout.startswith("not sized: template not rendered (")
        and "\nnot read: template not rendered (" in r.stdout
    )
    assert "\nKV502 " in r.stdout and "\nKV002 " in r.stdout
