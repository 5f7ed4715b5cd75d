"""End-to-end pipeline behaviour on small manifests (fixtures/pipeline/)."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pipeline"


def test_config_file_from_configmap_is_applied_and_located() -> None:
    result = run_check([str(FIX / "config-from-configmap.yaml")], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.serving.model is not None and cr.serving.model.value == "meta-llama/Llama-3.1-8B-Instruct"
    assert cr.serving.get("max_model_len") == 200000
    kv201 = [d for d in result.diagnostics if d.rule == "KV201"]
    assert len(kv201) == 1
    # the value's line inside the ConfigMap's block scalar
    assert kv201[0].loc is not None and kv201[0].loc.line == 12
    assert "131072" in kv201[0].message


def test_several_candidate_gpus_worst_case_decides_and_each_is_named() -> None:
    result = run_check([str(FIX / "affinity-two-gpus.yaml")], Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.placement is not None and len(cr.placement.candidates) == 2
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-l4"
    (kv103,) = [d for d in result.diagnostics if d.rule == "KV103"]
    assert "NVIDIA L4 fails (KV103)" in kv103.message
    assert "H100" in kv103.message and "fits" in kv103.message
