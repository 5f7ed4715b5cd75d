"""vLLM plans kept across analyses (kvlint.memory.stage.keep_plans, the admission webhook's review workers): a
plan asked for again with every input equal by value (the model object the same) is the kept one, a plan with
any input different is planned afresh, the answers are those made without it, and what is kept is bounded.
Fixtures: fixtures/webhook (sources in its SOURCE.md)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kvlint.load import load_text
from kvlint.memory import stage
from kvlint.memory.stage import KEPT_KEY_CHARS, KEPT_PLANS, keep_plans, plan_settings, replan
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult
from kvlint.webhook.answer import answer_review
from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.review import WebhookSettings
from kvlint.workloads import find_workloads

ROOT = Path(__file__).resolve().parent.parent
WEBHOOK = ROOT / "fixtures" / "webhook"
#: Llama-3.1-8B on one L4 with its default context: KV103, whose remedies re-plan.
L4 = WEBHOOK / "b01-llama8b-l4-default-context.yaml"
#: A LeaderWorkerSet whose pods name no GPU: planned on the default fleet (KV501).
FLEET = WEBHOOK / "kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml"


@pytest.fixture(autouse=True)
def _no_kept_plans() -> Iterator[None]:
    """Each test starts and ends with no plan kept (the process's other tests plan without keep_plans)."""
    keep_plans(0)
    yield
    keep_plans(0)


@pytest.fixture
def plan_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The memory model's runs (plan_vllm_detailed as the plan stage calls it), each as the settings it planned."""
    runs: list[Any] = []
    real = stage.plan_vllm_detailed

    def recording(settings: Any, model: Any, total: int, **kw: Any) -> Any:
        runs.append(settings)
        return real(settings, model, total, **kw)

    monkeypatch.setattr(stage, "plan_vllm_detailed", recording)
    return runs


def _bodies(path: Path) -> list[bytes]:
    """AdmissionReview request bodies, one per workload object of ``path`` (as bench/webhook.py builds them)."""
    loaded = load_text(path.read_bytes(), str(path))
    docs = {id(w.doc): w.doc for w in find_workloads(loaded.documents)}
    out = []
    for i, doc in enumerate(docs.values()):
        obj = json.loads(json.dumps(doc.data))
        meta = obj.get("metadata") or {}
        group, _, version = str(obj.get("apiVersion", "v1")).rpartition("/")
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": f"u-{path.stem[:20]}-{i}",
                "kind": {"group": group, "version": version, "kind": obj.get("kind", "")},
                "resource": {
                    "group": group,
                    "version": version,
                    "resource": str(obj.get("kind", "")).lower() + "s",
                },
                "namespace": meta.get("namespace") or "default",
                "name": meta.get("name", ""),
                "operation": "CREATE",
                "userInfo": {"username": "alice"},
                "object": obj,
                "dryRun": False,
            },
        }
        out.append(json.dumps(review).encode())
    return out


def _answers(bodies: list[bytes]) -> list[tuple[str, bytes]]:
    """Each body's answer as the worker makes it: its kind and the response's bytes."""
    options = webhook_options()
    settings = WebhookSettings(options=options)
    out = []
    for b in bodies:
        answer = answer_review(b, 0, settings, options)
        assert answer[0] == "answer", answer
        out.append((answer[0], answer[2]))
    return out


def _cr(path: Path = L4) -> ContainerResult:
    res = run_check([str(path)], Options(allow_hub=False))
    return next(c for c in res.containers if c.serving.engine == "vllm" and c.plan_detail is not None)


def test_a_review_repeated_plans_nothing_and_answers_the_same(plan_runs: list[Any]) -> None:
    """The second review of the same objects (another request, other dicts, another ServingConfig) plans nothing:
    the plan stage's plans, the remedies' re-plans and the fleet's plans are the kept ones; and every answer is
    the one made with nothing kept."""
    bodies = _bodies(L4) + _bodies(FLEET)
    cold = _answers(bodies)
    planned_cold = len(plan_runs)
    assert planned_cold > 8  # the L4's remedies and the 8 GPUs of the fleet
    keep_plans(KEPT_PLANS)
    first = _answers(bodies)
    assert len(plan_runs) == 2 * planned_cold  # nothing kept yet: planned as without
    second = _answers(bodies)
    assert len(plan_runs) == 2 * planned_cold
    assert first == cold and second == cold
    assert b"KV103" in cold[0][1] and b"KV501" in b"".join(a[1] for a in cold[1:])


def test_an_answer_is_the_same_whatever_was_kept_before_it() -> None:
    """Every webhook fixture answered after the others (their plans kept, a limit of 1 and of 3 evicting them in
    turn) is answered as it is alone with nothing kept."""
    bodies = [b for p in sorted(WEBHOOK.glob("*.yaml")) for b in _bodies(p)]
    alone = []
    for b in bodies:
        keep_plans(0)
        alone.append(_answers([b])[0])
    for limit in (1, 3, KEPT_PLANS):
        keep_plans(limit)
        assert _answers(bodies + bodies[::-1]) == alone + alone[::-1]
        assert len(stage._KEPT.plans) <= limit


def test_a_plan_with_any_input_different_is_planned_afresh(plan_runs: list[Any]) -> None:
    keep_plans(KEPT_PLANS)
    cr = _cr()
    n = len(plan_runs)
    other = replace(cr, serving=copy.copy(cr.serving))  # another container object, the same command
    assert plan_settings(other, cr.settings) is cr.plan_detail  # kept: equal by value, the same model
    assert len(plan_runs) == n
    # another value of one setting, another GPU memory total, an equal copy of the model: each planned
    assert replan(other, max_model_len=4096) is not None
    assert len(plan_runs) == n + 1
    assert cr.placement is not None and cr.placement.memory_bytes
    smaller = replace(cr.placement, memory_bytes_override=cr.placement.memory_bytes - 2**30)
    assert replan(replace(cr, serving=copy.copy(cr.serving)), placement=smaller) is not None
    assert len(plan_runs) == n + 2
    assert cr.model is not None
    twin = replace(cr, serving=copy.copy(cr.serving), model=replace(cr.model))
    detail = plan_settings(twin, cr.settings)
    assert len(plan_runs) == n + 3
    assert detail == cr.plan_detail and detail is not cr.plan_detail


def test_kept_plans_are_bounded_and_the_least_recently_used_goes_first(plan_runs: list[Any]) -> None:
    keep_plans(2)
    cr = _cr()  # keeps the plan stage's plan and its remedies' (the last 2 of them)
    lens = (2048, 4096, 8192)
    plans = {n: replan(replace(cr, serving=copy.copy(cr.serving)), max_model_len=n) for n in lens}
    assert len(stage._KEPT.plans) == 2
    n = len(plan_runs)
    # 4096 and 8192 kept; asking for 4096 makes 8192 the least recently used, which 2048 then replaces
    assert replan(replace(cr, serving=copy.copy(cr.serving)), max_model_len=4096) is plans[4096]
    assert replan(replace(cr, serving=copy.copy(cr.serving)), max_model_len=2048) is not plans[2048]
    assert replan(replace(cr, serving=copy.copy(cr.serving)), max_model_len=4096) is plans[4096]
    assert len(plan_runs) == n + 1
    assert replan(replace(cr, serving=copy.copy(cr.serving)), max_model_len=8192) is not plans[8192]
    assert len(plan_runs) == n + 2 and len(stage._KEPT.plans) == 2


def test_long_settings_and_draft_models_are_planned_but_not_kept(plan_runs: list[Any]) -> None:
    keep_plans(KEPT_PLANS)
    cr = _cr()
    assert cr.model is not None
    kept = len(stage._KEPT.plans)
    long = replace(cr.settings, hf_overrides={"x" * KEPT_KEY_CHARS: 1})
    drafted = replace(cr.settings, speculative_model=cr.model, num_speculative_tokens=1)
    for settings in (long, drafted):
        n = len(plan_runs)
        for _ in range(2):
            assert (
                plan_settings(replace(cr, serving=copy.copy(cr.serving), settings=settings), settings)
                is not None
            )
        assert len(plan_runs) == n + 2  # another container each time: planned again, nothing kept
    assert len(stage._KEPT.plans) == kept


def test_keep_plans_refuses_a_negative_limit_and_zero_drops_what_was_kept() -> None:
    with pytest.raises(ValueError, match="limit"):
        keep_plans(-1)
    keep_plans(KEPT_PLANS)
    _cr()
    assert stage._KEPT.plans
    keep_plans(0)
    assert not stage._KEPT.plans
    cr = _cr()
    assert cr.plan_detail is not None and not stage._KEPT.plans


def _nested_overrides(depth: int) -> str:
    """The L4 fixture with ``--hf-overrides`` a JSON object nested ``depth`` deep (valid JSON, which vLLM reads:
    Python's json module nests far deeper than this)."""
    nested = "1"
    for _ in range(depth):
        nested = '{"a":' + nested + "}"
    text = L4.read_text()
    flag = "- --gpu-memory-utilization=0.90"
    assert flag in text
    return text.replace(flag, flag + '\n            - --hf-overrides\n            - \'{"x":' + nested + "}'")


def test_settings_nested_too_deep_to_write_are_planned_not_kept(tmp_path: Path) -> None:
    """A settings delta that ``repr`` cannot write (nested deeper than it recurses) is not kept, and the review
    answers as it does with nothing kept: it used to end in KV503 (RecursionError) with plans kept only."""
    deep: Any = 1
    for _ in range(20_000):
        deep = (tuple, ((deep,),))
    assert stage._KEPT.admits(((0, deep),)) is False
    for depth in (250, 300, 350, 400, 450):
        path = tmp_path / f"deep{depth}.yaml"
        path.write_text(_nested_overrides(depth))
        keep_plans(0)
        alone = _answers(_bodies(path))
        keep_plans(KEPT_PLANS)
        assert _answers(_bodies(path)) == alone, depth


def test_settings_nested_too_deep_to_key_are_planned_not_memoised(tmp_path: Path) -> None:
    """Settings whose ``--hf-overrides`` nests deeper than the memo's key recurses (still valid JSON, which vLLM
    reads) are planned without the memo: reviewed, with plans kept and without, and checked, as the settings
    deserve (KV103 for the L4 fixture), where they used to end in KV503 (RecursionError) and be admitted."""
    for depth in (500, 700):
        path = tmp_path / f"deep{depth}.yaml"
        path.write_text(_nested_overrides(depth))
        keep_plans(0)
        alone = _answers(_bodies(path))
        keep_plans(KEPT_PLANS)
        assert _answers(_bodies(path)) == alone, depth
        assert b"KV103" in alone[0][1] and b"KV503" not in alone[0][1], depth
        keep_plans(0)
        rules = {d.rule for d in run_check([str(path)], Options(allow_hub=False)).diagnostics}
        assert "KV103" in rules and "KV503" not in rules, (depth, rules)
