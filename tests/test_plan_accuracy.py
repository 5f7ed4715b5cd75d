"""Accuracy of the vLLM memory model against ground truth (fixtures/plan/groundtruth_cases.yaml, a copy of
../shared/groundtruth/cases.yaml), the calibration constants, and the text report.

Honest bounds: the heuristic terms were calibrated on these same cases (in-sample), so the end-to-end bound below
is what is achieved, not a generalisation claim. The exact part (KV bytes -> blocks -> tokens) is isolated by
feeding the engine's own printed KV GiB.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvlint.memory import calibration as cal
from kvlint.memory.vllm import VllmSettings, build_groups, plan_vllm
from kvlint.models import resolve_model
from kvlint.report.plan_text import render_plan_text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

GiB = 1 << 30
MODELS = ROOT / "fixtures" / "plan" / "models"
CASES = ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml"


@pytest.mark.parametrize(
    "gid,model,tp,kv_gib,tokens",
    [
        ("gt-062", "Qwen--Qwen2.5-7B", 1, 8.0, 149712),  # 0.26.0, RTX 4080
        ("gt-071", "meta-llama--Llama-3.1-8B", 1, 4.6, 37696),  # V0, 2356 blocks
        ("gt-064", "Qwen--Qwen3-30B-A3B", 1, 33.59, 366880),  # Qwen3-VL-30B-A3B text stack = Qwen3-30B-A3B
    ],
)
def test_tokens_from_engine_kv_bytes_exact(gid, model, tp, kv_gib, tokens):
    m = resolve_model(str(MODELS / model), allow_hub=False)
    groups, bpb, bs, _ = build_groups(list(m.layers), tp, 2, "auto", 16, True)
    predicted = int(kv_gib * GiB) // bpb * bs
    assert abs(predicted - tokens) / tokens < 0.005, gid


def test_end_to_end_accuracy_on_ground_truth():
    """Replays every classified case (bench/accuracy.py) from fixtures only; the issue's acceptance figures."""
    rows = accuracy.replay(CASES, MODELS)
    by = {r["id"]: r for r in rows}
    assert len(rows) >= 12
    for key, vkey in (("pred_kv", "verdict"), ("loo_kv", "loo_verdict")):
        s = accuracy.summary(rows, key, vkey)
        assert s["kv_cases"] >= 5
        assert s["median"] <= 5.0 and s["p90"] <= 15.0, (key, s)
        assert s["fail_missed"] == 0, key  # every capacity failure predicted fail or risky
        assert s["started_pred_fail"] * 20 <= s["started"], key
    # weights ("Model loading took") within 2% where printed, except the FP8 405B (attention kept in bf16)
    for r in rows:
        if r["rep_w"] and r["id"] != "gt-015":
            assert abs(r["pred_w"] - r["rep_w"]) / r["rep_w"] < 0.02, r["id"]
    # the exact part: tokens from the engine's own KV GiB (dense cases) within 0.5%
    for gid in ("gt-062", "gt-071"):
        r = by[gid]
        assert abs(r["tok_from_rep_kv"] - r["rep_tok"]) / r["rep_tok"] < 0.005, gid


def test_every_case_is_classified():
    cases = accuracy.yaml.safe_load(CASES.read_text())
    for c in cases:
        if c["engine"] == "vllm":
            assert (c["id"] in accuracy.REPLAY) != (c["id"] in accuracy.SKIP), c["id"]


def test_calibration_constants_equal_refit():
    fitted = cal.refit()
    assert fitted["k_sampler"] == cal.K_SAMPLER
    assert fitted["non_torch_gib"] == cal.NON_TORCH_GIB
    assert fitted["k_cudagraph"] == pytest.approx(cal.K_CUDAGRAPH)


def test_render_plan_text():
    m = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    p = plan_vllm(
        VllmSettings(version="0.11.0"), m, int(79.19 * GiB), gpu_name="H100", compute_capability="9.0"
    )
    t = render_plan_text(p, width=40)
    assert f"GPU KV cache size: {p.capacity_tokens:,} tokens" in t
    assert f"Maximum concurrency for 131,072 tokens per request: {p.max_concurrency:.2f}x" in t
    assert "weights" in t and "14.99" in t and "assumptions:" in t
    bar = next(line for line in t.splitlines() if line.startswith("["))
    assert len(bar) == 42 and bar.count("W") == round(p.weights_bytes / p.total_bytes * 40)
    assert "\x1b[" in render_plan_text(p, color=True)
