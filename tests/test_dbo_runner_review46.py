"""Dual batch overlap on vLLM 0.34.0's one model runner (review46B).

engine46 restated the V2 runner's DBO refusals for 0.30.0 - 0.33.x (with ``VLLM_USE_V2_MODEL_RUNNER`` set) and took
0.34.0 as refusing nothing ("only the V2 runner left"). The 0.34.0 wheel's ``VllmConfig.__post_init__`` calls
``_validate_model_runner`` on every start-up: ``_get_model_runner_unsupported_features`` lists, when
``use_ubatching`` (``--enable-dbo`` or ``--ubatch-size`` > 1), ``_get_dbo_unsupported_features``'s LoRA, pipeline
parallelism, prefill context parallelism and hybrid models, and it raises "The GPU model runner does not support:
..." (``vllm@0.34.0:vllm/config/vllm.py``). kvlint planned those start-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory import vllm_runner as vr
from kvlint.memory.versions import parse_version as v
from kvlint.pipeline import Options, run_check

F = vr.RunnerFeatures


@pytest.mark.parametrize(
    ("features", "entries"),
    [
        (F(enable_dbo=True, lora=True), "dual batch overlap with LoRA"),
        (F(ubatch_size=2, pp=2), "dual batch overlap with pipeline parallelism"),
        (F(enable_dbo=True, pcp=2), "dual batch overlap with prefill context parallelism"),
        (F(enable_dbo=True, inner_state=True, hybrid=True), "dual batch overlap with hybrid models"),
        (
            F(enable_dbo=True, lora=True, pp=2),
            "dual batch overlap with LoRA, dual batch overlap with pipeline parallelism",
        ),
    ],
)
def test_dbo_beside_what_the_runner_cannot_combine(features: vr.RunnerFeatures, entries: str) -> None:
    said = vr.runner_unsupported(v("0.34.0"), features) or ""
    assert f'The GPU model runner does not support: {entries}")' in said


@pytest.mark.parametrize(
    ("version", "features"),
    [
        ("0.34.0", F(enable_dbo=True)),  # DBO alone
        ("0.34.0", F(enable_dbo=True, dcp=2)),  # decode context parallelism is no longer listed
        ("0.34.0", F(lora=True, pp=2, pcp=2)),  # no DBO
        ("0.33.0", F(enable_dbo=True, lora=True)),  # 0.33.x: the V2 runner's list (v2_unsupported), or V1
    ],
)
def test_what_the_runner_takes(version: str, features: vr.RunnerFeatures) -> None:
    assert vr.runner_unsupported(v(version), features) is None


_MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: m
spec:
  template:
    spec:
      containers:
      - name: main
        image: vllm/vllm-openai:VERSION
        args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", "--tensor-parallel-size", "2",
               "--enable-dbo", "--enable-lora"]
        resources:
          limits:
            nvidia.com/gpu: '2'
"""


@pytest.mark.parametrize(("version", "refused"), [("v0.34.0", True), ("v0.33.0", False)])
def test_through_the_pipeline(tmp_path: Path, version: str, refused: bool) -> None:
    f = tmp_path / "m.yaml"
    f.write_text(_MANIFEST.replace("VERSION", version))
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    (cr,) = res.containers
    found = [x for x in res.diagnostics if "dual batch overlap with LoRA" in x.message]
    if not refused:
        assert cr.plan is not None and not found
        return
    assert cr.plan is None and cr.plan_refusal is not None and cr.plan_refusal.value == "vllm-dbo-unsupported"
    (d,) = found
    assert d.rule == "KV502" and d.severity == "error" and d.loc is not None and d.loc.line == 12
    assert d.fix is not None and "--enable-dbo" in d.fix
