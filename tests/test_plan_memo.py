"""One container's vLLM plans are computed once each (kvlint.memory.stage memo): a repeated plan is the first
run's result, a plan with any input different is computed afresh, and the answers are those of
plan_vllm_detailed itself. Fixtures: fixtures/webhook (sources in its SOURCE.md)."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.memory import stage
from kvlint.memory.stage import _frozen, _Unkeyable, plan_settings, replan
from kvlint.memory.vllm import VllmSettings, largest_fitting_max_model_len, plan_vllm_detailed
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult

WEBHOOK = Path(__file__).resolve().parent.parent / "fixtures" / "webhook"


def _cr() -> ContainerResult:
    """Llama-3.1-8B on one L4 with its default context: KV103, whose remedies re-plan."""
    res = run_check([str(WEBHOOK / "b01-llama8b-l4-default-context.yaml")], Options(allow_hub=False))
    return next(c for c in res.containers if c.serving.engine == "vllm" and c.plan_detail is not None)


def _fresh(cr: ContainerResult, settings: VllmSettings):
    p = cr.placement
    assert p is not None and p.accelerator is not None and cr.model is not None
    return plan_vllm_detailed(
        settings,
        cr.model,
        p.memory_bytes or 0,
        gpu_name=p.accelerator.name,
        compute_capability=p.accelerator.compute_capability,
    )


def test_a_repeated_plan_is_the_first_result_and_equals_a_fresh_plan():
    cr = _cr()
    a = replan(cr, max_model_len=16384)
    assert a is not None
    assert replan(cr, max_model_len=16384) is a
    assert a == _fresh(cr, replace(cr.settings, max_model_len=16384))
    # the plan stage's own plan is the one the remedies get for unchanged settings
    assert plan_settings(cr, cr.settings) is cr.plan_detail
    assert cr.plan_detail == _fresh(cr, cr.settings)


def test_values_equal_in_python_but_not_to_the_model_are_planned_apart():
    cr = _cr()
    as_int = replan(cr, gpu_memory_utilization=1)
    as_float = replan(cr, gpu_memory_utilization=1.0)
    assert as_int is not None and as_float is not None and as_int is not as_float
    assert as_int == _fresh(cr, replace(cr.settings, gpu_memory_utilization=1))
    assert as_float == _fresh(cr, replace(cr.settings, gpu_memory_utilization=1.0))


def test_another_container_does_not_see_this_one_s_plans():
    cr = _cr()
    a = replan(cr, max_model_len=8192)
    other = replace(cr, serving=copy.copy(cr.serving))  # another container object with the same command
    b = replan(other, max_model_len=8192)
    assert b is not a and b == a


def test_largest_fitting_length_through_the_memo_is_the_planner_s():
    cr = _cr()
    p = cr.placement
    assert p is not None and p.accelerator is not None and cr.model is not None
    kw = {"gpu_name": p.accelerator.name, "compute_capability": p.accelerator.compute_capability}
    total = p.memory_bytes or 0
    for s in (cr.settings, replace(cr.settings, max_model_len=4096)):
        direct = largest_fitting_max_model_len(s, cr.model, total, **kw)
        assert direct > 0
        assert (
            largest_fitting_max_model_len(s, cr.model, total, **kw, plan=lambda x: plan_settings(cr, x))
            == direct
        )


def test_an_analysis_runs_each_distinct_plan_once(monkeypatch):
    """The KV103/KV104/KV202 remedies of the webhook fixtures ask for the same plans several times."""
    seen: list[str] = []
    real = stage.plan_vllm_detailed

    def recording(settings, model, total, **kw):
        seen.append(repr((settings, id(model), total, sorted(kw.items()))))
        return real(settings, model, total, **kw)

    monkeypatch.setattr(stage, "plan_vllm_detailed", recording)
    res = run_check([str(WEBHOOK)], Options(allow_hub=False))
    assert any(d.rule == "KV103" for d in res.diagnostics)
    assert len(seen) > len(res.containers)  # remedies and fleets did re-plan
    assert len(seen) == len(set(seen))


def test_memo_keys_tell_apart_what_the_models_tell_apart():
    assert _frozen(0.0) != _frozen(-0.0)
    assert _frozen(1) != _frozen(1.0) != _frozen(True)
    assert _frozen({"a": 1, "b": 2}) != _frozen({"b": 2, "a": 1})
    assert _frozen([1, 2]) != _frozen((1, 2))
    assert _frozen({"max_pixels": [1, 2.5]}) == _frozen({"max_pixels": [1, 2.5]})
    with pytest.raises(_Unkeyable):
        _frozen({1, 2})


def test_the_first_plan_is_keyed_only_when_another_is_asked_for():
    """The plan stage's plan waits unkeyed in the container's scope (no settings delta computed for a container
    nothing re-plans); the first re-plan keys it, and asking for the same settings then answers that plan."""
    base = _cr()
    serving = copy.copy(base.serving)  # a container object nothing has planned yet
    outcome = stage.plan_container(serving, base.model, base.placement, Options(allow_hub=False))
    assert outcome.detail is not None and outcome.detail == base.plan_detail
    cr = replace(base, serving=serving, settings=outcome.settings, plan_detail=outcome.detail)
    scope = stage._scope(serving)
    assert scope.first is not None and scope.first[3] is outcome.detail
    assert not scope.plans and not scope.deltas
    assert plan_settings(cr, cr.settings) is outcome.detail
    assert scope.first is None and len(scope.plans) == 1
    other = replan(cr, max_model_len=4096)
    assert other is not None and replan(cr, max_model_len=4096) is other and len(scope.plans) == 2
