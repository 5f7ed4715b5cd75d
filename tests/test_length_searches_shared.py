"""perfB49 (issue 19): one container's max-model-len searches are shared by the checks that ask for them. KV202's
example length and KV103's remedy searched the same lengths from the same start at the same aim on the webhook
bench's Llama 3.1 8B on an L4 (``fixtures/webhook/b01``), each with vLLM's own estimate planned afresh: two
estimates and two searches where one of each answers both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.families import capacity as cap

B01 = Path(__file__).resolve().parent.parent / "fixtures" / "webhook" / "b01-llama8b-l4-default-context.yaml"


def _counted(monkeypatch: Any) -> dict[str, int]:
    counts = {"estimate": 0, "search": 0}
    estimate, search = cap.largest_fitting_max_model_len, cap.descending_fitting

    def counting_estimate(*a: Any, **k: Any) -> Any:
        counts["estimate"] += 1
        return estimate(*a, **k)

    def counting_search(*a: Any, **k: Any) -> Any:
        counts["search"] += 1
        return search(*a, **k)

    monkeypatch.setattr(cap, "largest_fitting_max_model_len", counting_estimate)
    monkeypatch.setattr(cap, "descending_fitting", counting_search)
    return counts


def test_kv202_and_kv103_share_the_search_and_the_estimate(monkeypatch) -> None:
    counts = _counted(monkeypatch)
    result = run_check([str(B01)], Options(allow_hub=False))
    rules = {d.rule for d in result.diagnostics}
    assert {"KV103", "KV202"} <= rules
    kv202 = next(d for d in result.diagnostics if d.rule == "KV202")
    kv103 = next(d for d in result.diagnostics if d.rule == "KV103")
    # the two findings name the same length (KV202's example, KV103's first remedy)
    length = kv103.fix.split("--max-model-len ", 1)[1].split()[0]
    assert f"--max-model-len {length}" in kv202.fix
    assert counts == {"estimate": 1, "search": 1}


def test_another_container_or_options_searches_again(monkeypatch) -> None:
    """The shared searches belong to one container checked with one set of options: checking the same file again
    (a new container) or with other options searches again, with the same answers."""
    counts = _counted(monkeypatch)
    first = run_check([str(B01)], Options(allow_hub=False))
    again = run_check([str(B01)], Options(allow_hub=False))
    assert counts == {"estimate": 2, "search": 2}
    assert [(d.rule, d.message, d.fix) for d in first.diagnostics] == [
        (d.rule, d.message, d.fix) for d in again.diagnostics
    ]
    stricter = run_check([str(B01)], Options(allow_hub=False, rule_params={"KV104": {"min_concurrency": 4}}))
    assert counts["estimate"] == 3 and counts["search"] >= 3
    assert any(d.rule == "KV103" for d in stricter.diagnostics)
