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
from kvlint.sizing import REASONS, SIZED, outcomes
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
        assert "KV502 says so at the container, and its fix what to add" in " ".join(head.split())
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
