"""vLLM memory model (kvlint.memory.vllm): worked examples W1-W5 of engine-memory-model.md §7 recomputed from
the real configs in fixtures/plan/models, plus the version switches of §1.2/§1.4/§1.8.

Assumptions stated per §7: GiB = 2^30; H100-80GB CUDA total 79.19 GiB and L4 22.03 GiB [assumed]; activation,
non-torch and CUDA-graph terms come from kvlint.memory.calibration (heuristic) -- so exact assertions are made only
on the source-derived parts (per-token bytes, blocks from a given KV size, formulas), bands elsewhere.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.memory.kv import cdiv
from kvlint.memory.vllm import (
    PlanError,
    VllmSettings,
    largest_fitting_max_model_len,
    plan_vllm,
    plan_vllm_detailed,
    pp_layer_split,
    replan,
    smallest_fitting_utilization,
)
from kvlint.models import resolve_model
from kvlint.types import LayerSpec

GiB = 1 << 30
MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
L4 = {"gpu_name": "NVIDIA L4", "compute_capability": "8.9"}
H100_TOTAL = int(79.19 * GiB)
L4_TOTAL = int(22.03 * GiB)


def spec(name: str):
    return resolve_model(str(MODELS / name), allow_hub=False)


LLAMA8 = spec("meta-llama--Llama-3.1-8B")


def test_w1_llama8b_h100_defaults_v011():
    p = plan_vllm(VllmSettings(version="0.11.0"), LLAMA8, H100_TOTAL, **H100)
    assert p.max_model_len == 131072 and p.max_model_len_source == "derived"  # llama3 rope not multiplied
    assert p.kv_bytes_per_token == 131072 and p.block_size == 16 and p.bytes_per_block == 2 * 1024 * 1024
    assert p.gpu_memory_utilization == 0.90 and p.budget_bytes == int(H100_TOTAL * 0.90)
    assert p.weights_bytes / GiB == pytest.approx(14.99, abs=0.01)  # vLLM prints 14.9888 (gt-056, gt-071)
    assert (p.max_num_batched_tokens, p.max_num_seqs) == (8192, 1024)
    # exact part: blocks and tokens follow from the KV bytes
    assert p.num_blocks == p.kv_cache_bytes // p.bytes_per_block
    assert p.capacity_tokens == (p.num_blocks // 1) * 16
    assert p.max_concurrency == pytest.approx(p.num_blocks / cdiv(131072, 16))
    assert p.per_request_bytes == 16 * GiB
    assert 50 * GiB < p.kv_cache_bytes < 56 * GiB  # §7: ~54 GiB with a 2 GiB overhead guess
    assert p.kv_cache_bytes_low < p.kv_cache_bytes < p.kv_cache_bytes_high


def test_w1_util_default_switch_at_020_and_cudagraph_deduction():
    old = plan_vllm(VllmSettings(version="0.19.0"), LLAMA8, H100_TOTAL, **H100)
    new = plan_vllm(VllmSettings(version="0.20.0"), LLAMA8, H100_TOTAL, **H100)
    assert old.gpu_memory_utilization == 0.90 and new.gpu_memory_utilization == 0.92
    assert old.cudagraph_bytes == 0 and new.cudagraph_bytes > 0
    eager = plan_vllm(VllmSettings(version="0.20.0", enforce_eager=True), LLAMA8, H100_TOTAL, **H100)
    assert eager.cudagraph_bytes == 0 and eager.kv_cache_bytes > new.kv_cache_bytes
    env = plan_vllm(VllmSettings(version="0.19.0", estimate_cudagraphs=True), LLAMA8, H100_TOTAL, **H100)
    assert env.cudagraph_bytes > 0


def test_w2_llama8b_l4_fails_with_estimate():
    d = plan_vllm_detailed(
        VllmSettings(version="0.11.0", gpu_memory_utilization=0.90), LLAMA8, L4_TOTAL, **L4
    )
    p = d.plan
    assert (p.max_num_batched_tokens, p.max_num_seqs) == (2048, 256)
    assert not d.fits and d.needed_bytes == 16 * GiB
    # vLLM's estimate for a uniform model: floor(avail / bytes_per_block) x block_size
    assert d.estimated_max_model_len == (p.kv_cache_bytes // p.bytes_per_block) * 16
    # §7 W2 guessed ~1.5 GiB of overhead (~27k); 0.11.0 samples with FlashInfer (small sampler peak), ~4.3 GiB
    # of KV are left, so vLLM's estimate is ~35k
    assert 30000 < d.estimated_max_model_len < 40000
    assert (
        d.error
        and "estimated maximum model length is" in d.error
        and "models's max seq len (131072)" in d.error
    )
    assert "16.00 GiB" in d.error
    assert (
        largest_fitting_max_model_len(VllmSettings(version="0.11.0"), LLAMA8, L4_TOTAL, **L4)
        == d.estimated_max_model_len
    )
    # 0.29+: the null block is subtracted before the estimate; wording of 0.22+
    d29 = plan_vllm_detailed(
        VllmSettings(version="0.29.0", gpu_memory_utilization=0.90), LLAMA8, L4_TOTAL, **L4
    )
    assert d29.fit_available_bytes == d29.plan.kv_cache_bytes - d29.plan.bytes_per_block
    assert (
        d29.estimated_max_model_len
        == ((d29.plan.kv_cache_bytes - d29.plan.bytes_per_block) // (2 << 20)) * 16
    )
    assert "model's max seq len" in (d29.error or "") and "16.0 GiB" in (d29.error or "")


def test_w2_fixes_verified_by_replanning():
    s = VllmSettings(version="0.11.0")
    n = largest_fitting_max_model_len(s, LLAMA8, L4_TOTAL, **L4)
    assert plan_vllm_detailed(replace(s, max_model_len=n), LLAMA8, L4_TOTAL, **L4).fits
    assert not plan_vllm_detailed(replace(s, max_model_len=n + 16), LLAMA8, L4_TOTAL, **L4).fits
    fp8 = replan(s, LLAMA8, L4_TOTAL, kv_cache_dtype="fp8", **L4)
    assert fp8.kv_bytes_per_token == 65536
    u = smallest_fitting_utilization(replace(s, max_model_len=32768), LLAMA8, L4_TOTAL, **L4)
    assert u is not None and u <= 1.0
    assert plan_vllm_detailed(
        replace(s, max_model_len=32768, gpu_memory_utilization=u), LLAMA8, L4_TOTAL, **L4
    ).fits
    assert not plan_vllm_detailed(
        replace(s, max_model_len=32768, gpu_memory_utilization=round(u - 0.01, 2)), LLAMA8, L4_TOTAL, **L4
    ).fits
    assert smallest_fitting_utilization(s, LLAMA8, L4_TOTAL, **L4) is None  # 131072 never fits on an L4


def test_auto_max_model_len_from_014():
    p = plan_vllm(VllmSettings(version="0.14.0", max_model_len=-1), LLAMA8, L4_TOTAL, **L4)
    assert p.max_model_len_source == "auto" and 0 < p.max_model_len < 131072
    old = plan_vllm(VllmSettings(version="0.13.0", max_model_len=-1), LLAMA8, L4_TOTAL, **L4)
    assert old.max_model_len == 131072


def test_w3_llama70b_tp4():
    m = spec("meta-llama--Llama-3.1-70B")
    p = plan_vllm(VllmSettings(version="0.11.0", tensor_parallel_size=4), m, H100_TOTAL, **H100)
    assert p.kv_bytes_per_token == 81920 and p.bytes_per_block == 81920 * 16
    assert p.weights_bytes / GiB == pytest.approx(70.55e9 * 2 / 4 / GiB, rel=0.01)  # ~32.85 GiB
    assert p.per_request_bytes == 10 * GiB
    assert 3.2 < p.max_concurrency < 3.8  # §7: ~3.56x; a public log shows 3.53x


def test_w4_deepseek_mla_block_size_and_len():
    m = spec("deepseek-ai--DeepSeek-V3")
    p29 = plan_vllm(
        VllmSettings(version="0.29.0", tensor_parallel_size=8),
        m,
        int(139.8 * GiB),
        gpu_name="NVIDIA H200",
        compute_capability="9.0",
    )
    p30 = plan_vllm(
        VllmSettings(version="0.30.0", tensor_parallel_size=8),
        m,
        int(139.8 * GiB),
        gpu_name="NVIDIA H200",
        compute_capability="9.0",
    )
    assert p29.kv_bytes_per_token == 70272 and p29.block_size == 64
    assert p29.max_model_len == 163840 == p30.max_model_len  # 4096 x 40 (<=0.29) vs unscaled (>=0.30)


def test_w5_qwen_yarn_override_by_version():
    m = spec("Qwen--Qwen2.5-7B")
    # the base config says 131072; the Instruct config (32768) is reproduced with an override
    y = {
        "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    }
    p29 = plan_vllm(VllmSettings(version="0.29.0", hf_overrides=y), m, H100_TOTAL, **H100)
    p30 = plan_vllm(VllmSettings(version="0.30.0", hf_overrides=y), m, H100_TOTAL, **H100)
    assert p29.derived_max_model_len == 131072 and p30.derived_max_model_len == 32768
    p = plan_vllm(VllmSettings(version="0.30.0", hf_overrides=y, max_model_len=131072), m, H100_TOTAL, **H100)
    assert any("refuses to start" in a for a in p.assumptions)
    assert p.kv_bytes_per_token == 57344


def test_gemma3_rope_never_multiplied_and_sliding_window_hybrid():
    m = spec("google--gemma-3-1b-it")
    p = plan_vllm(VllmSettings(version="0.11.0"), m, L4_TOTAL, **L4)
    assert p.derived_max_model_len == m.config.get("max_position_embeddings")
    off = plan_vllm(VllmSettings(version="0.11.0", disable_hybrid_kv_cache_manager=True), m, L4_TOTAL, **L4)
    assert p.max_concurrency > 2 * off.max_concurrency  # sliding layers bounded by the window


def test_longrope_defaults_to_original_length():
    m = spec("microsoft--Phi-3.5-mini-instruct")
    p = plan_vllm(VllmSettings(version="0.11.0"), m, H100_TOTAL, **H100)
    assert p.max_model_len == m.config["original_max_position_embeddings"]


def test_capacity_formula_by_version_and_v0_fallback():
    p08 = plan_vllm(VllmSettings(version="0.8.5"), LLAMA8, H100_TOTAL, **H100)
    p21 = plan_vllm(VllmSettings(version="0.21.0", max_model_len=1000), LLAMA8, H100_TOTAL, **H100)
    assert p08.era == "v1" and p08.capacity_tokens == p08.num_blocks * 16
    assert p21.capacity_tokens == int(p21.num_blocks / cdiv(1000, 16) * 1000)  # 0.21+: concurrency x len
    t4 = plan_vllm(
        VllmSettings(version="0.9.2"), LLAMA8, int(14.57 * GiB), gpu_name="Tesla T4", compute_capability="7.5"
    )
    assert t4.era == "v0" and t4.dtype == "float16"  # CC < 8: V0 fallback, bf16 -> fp16 (>= 0.9.2)
    assert (
        plan_vllm(VllmSettings(version="0.8.5"), LLAMA8, int(14.57 * GiB), compute_capability="7.5").dtype
        == "bfloat16"
    )
    fp8 = plan_vllm(
        VllmSettings(version="0.8.5", kv_cache_dtype="fp8"),
        LLAMA8,
        H100_TOTAL,
        gpu_name="A100",
        compute_capability="8.0",
    )
    assert fp8.era == "v0"
    assert plan_vllm(VllmSettings(version="0.7.3"), LLAMA8, H100_TOTAL, **H100).era == "v0"


def test_kv_cache_memory_bytes_bypass_and_block_override():
    s = VllmSettings(version="0.11.0", kv_cache_memory_bytes=8 * GiB)
    p = plan_vllm(s, LLAMA8, H100_TOTAL, **H100)
    assert p.kv_cache_bytes == 8 * GiB == p.kv_cache_bytes_low == p.kv_cache_bytes_high
    assert p.num_blocks == 8 * GiB // (2 << 20) == 4096 and p.capacity_tokens == 65536
    old = plan_vllm(replace(s, version="0.10.1"), LLAMA8, H100_TOTAL, **H100)
    assert old.kv_cache_bytes != 8 * GiB
    o = plan_vllm(VllmSettings(version="0.11.0", num_gpu_blocks_override=100), LLAMA8, H100_TOTAL, **H100)
    assert o.num_blocks == 100 and o.capacity_tokens == 1600


def test_cpu_offload_grows_kv_by_offloaded_bytes():
    a = plan_vllm(VllmSettings(version="0.11.0"), LLAMA8, L4_TOTAL, **L4)
    b = plan_vllm(VllmSettings(version="0.11.0", cpu_offload_gb=4), LLAMA8, L4_TOTAL, **L4)
    assert a.weights_bytes - b.weights_bytes == 4 * GiB and b.kv_cache_bytes - a.kv_cache_bytes == 4 * GiB


def test_pp_fullest_stage_limits():
    assert pp_layer_split(80, 3) == [27, 27, 26]  # remainder to stages -2, -3
    assert pp_layer_split(32, 5) == [6, 6, 7, 7, 6]
    assert pp_layer_split(32, 2, (10, 22)) == [10, 22]
    m = spec("meta-llama--Llama-3.1-70B")
    p = plan_vllm(
        VllmSettings(version="0.14.1", tensor_parallel_size=2, pipeline_parallel_size=3),
        m,
        H100_TOTAL,
        **H100,
    )
    # stages [27, 27, 26]: the last stage holds lm_head and runs the sampler (PyTorch path on 0.14, 1,024 rows x
    # 128,256 logits), so it has the fewest blocks
    assert p.kv_bytes_per_token == 2 * 4 * 128 * 2 * 26
    # with the FlashInfer sampler (0.11.0) the last stage's sampler peak is small: a 27-layer stage limits
    p_fi = plan_vllm(
        VllmSettings(version="0.11.0", tensor_parallel_size=2, pipeline_parallel_size=3),
        m,
        H100_TOTAL,
        **H100,
    )
    assert p_fi.kv_bytes_per_token == 2 * 4 * 128 * 2 * 27
    p_one = plan_vllm(VllmSettings(version="0.14.1", tensor_parallel_size=2), m, H100_TOTAL, **H100)
    assert p.weights_bytes < p_one.weights_bytes / 2
    p1 = plan_vllm(
        VllmSettings(
            version="0.11.0",
            tensor_parallel_size=2,
            pipeline_parallel_size=3,
            pp_layer_partition=(40, 20, 20),
        ),
        m,
        H100_TOTAL,
        **H100,
    )
    assert p1.kv_bytes_per_token == 2 * 4 * 128 * 2 * 40


def test_moe_weights_and_chunked_prefill_off_defaults():
    m = spec("Qwen--Qwen3-30B-A3B")
    p = plan_vllm(
        VllmSettings(version="0.11.1", enable_chunked_prefill=False, max_model_len=32768),
        m,
        H100_TOTAL,
        **H100,
    )
    assert p.max_num_batched_tokens == 32768  # max(max_model_len, default) when chunked prefill is off
    # up to 0.11.0 the V1 engine forces chunked prefill on: the flag changes nothing and the default stays
    forced = plan_vllm(
        VllmSettings(version="0.11.0", enable_chunked_prefill=False, max_model_len=32768),
        m,
        H100_TOTAL,
        **H100,
    )
    default = plan_vllm(VllmSettings(version="0.11.0", max_model_len=32768), m, H100_TOTAL, **H100)
    assert forced.max_num_batched_tokens == default.max_num_batched_tokens < 32768
    assert forced.kv_cache_bytes == default.kv_cache_bytes
    assert any("--no-enable-chunked-prefill is ignored by vLLM 0.11.0" in a for a in forced.assumptions)
    assert not any("is ignored" in a for a in p.assumptions)
    # the V0 engine (VLLM_USE_V1=0 on 0.10.x) keeps it off
    v0 = plan_vllm(
        VllmSettings(version="0.10.1", enable_chunked_prefill=False, max_model_len=32768, use_v1=False),
        m,
        H100_TOTAL,
        **H100,
    )
    assert v0.era == "v0" and v0.max_num_batched_tokens == 32768
    assert p.kv_bytes_per_token == 2 * 4 * 128 * 2 * 48
    assert 55 * GiB < p.weights_bytes < 59 * GiB  # 30.5B params bf16


def test_plan_error_without_kv_layers():
    m = replace(LLAMA8, layers=(LayerSpec("none"),) * 2)
    with pytest.raises(PlanError):
        plan_vllm(VllmSettings(), m, H100_TOTAL)
    with pytest.raises(PlanError):
        plan_vllm(VllmSettings(), LLAMA8, 0)


def test_explicit_max_num_seqs_is_not_lowered_to_the_default_batch_tokens() -> None:
    """vLLM lowers only its *default* max_num_seqs to max_num_batched_tokens (EngineArgs: `if
    orig_max_num_seqs is None`); an explicit larger value stays and SchedulerConfig rejects it (KV204)."""
    from kvlint.load import load_text
    from kvlint.pipeline import Options, run_documents

    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192", '
        '"--max-num-seqs", "4096"]\n'
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.plan is not None and cr.plan.max_num_seqs == 4096 and cr.plan.max_num_batched_tokens == 2048
    assert not any("max_num_seqs=256" in a for a in cr.plan.assumptions)
    rules = [d.rule for d in res.diagnostics]
    assert "KV204" in rules
    kv204 = next(d for d in res.diagnostics if d.rule == "KV204")
    assert "2048, the vLLM default here" in kv204.message and "4096" in kv204.message
    # vLLM stops at config validation: no capacity findings about a configuration that never runs
    assert not {"KV101", "KV102", "KV103", "KV104", "KV105"} & set(rules)


def test_invalid_capacity_flag_gives_no_capacity_findings_for_a_length_nobody_asked_for() -> None:
    from kvlint.load import load_text
    from kvlint.pipeline import Options, run_documents

    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n  containers:\n  - name: vllm\n"
        "    image: vllm/vllm-openai:v0.11.0\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
        '    args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "1e9"]\n'
    )
    res = run_documents(load_text(text, "p.yaml"), Options(allow_hub=False))
    rules = [d.rule for d in res.diagnostics]
    assert "KV206" in rules
    assert not {"KV101", "KV102", "KV103", "KV104", "KV105"} & set(rules), rules
    assert all(d.fix for d in res.diagnostics if d.rule == "KV206")


def test_kv_connector_is_stated_as_not_modelled() -> None:
    """--kv-transfer-config names a KV connector whose own GPU memory kvlint does not model: the plan says so
    (parsed JSON or text), and says nothing without the flag."""
    from kvlint.engines import parse_command_line
    from kvlint.memory.vllm import settings_from_config

    flag = '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}'
    with_connector = settings_from_config(
        parse_command_line(["vllm", "serve", "m", "--kv-transfer-config", flag])
    )
    assert with_connector.kv_connector == "LMCacheConnectorV1"
    p = plan_vllm(with_connector, LLAMA8, H100_TOTAL, **H100)
    assert any("not modelled: the KV connector" in a and "LMCacheConnectorV1" in a for a in p.assumptions)
    plain = plan_vllm(VllmSettings(), LLAMA8, H100_TOTAL, **H100)
    assert not any("KV connector" in a for a in plain.assumptions)
    assert plain.kv_cache_bytes == p.kv_cache_bytes  # stated, not guessed


def test_pp_remainder_on_the_last_stage_before_0_8():
    """vLLM 0.5.x - 0.7.3's ``get_pp_indices`` gives the whole ``layers % pp`` remainder to the last stage
    (``end_layer = num_hidden_layers`` on the last rank; read in the 0.5.5, 0.6.6.post1 and 0.7.3 wheels); 0.8.0 gives
    it one layer each to the stages before the last (vllm-project/vllm#13839). kvlint split every release the 0.8
    way: Llama-3.1-70B's 80 layers over 3 stages are [26, 26, 28] on 0.7.3, not [27, 27, 26], and the 28-layer last
    stage (with the LM head) holds the fewest blocks."""
    assert pp_layer_split(80, 3, version=(0, 7, 3)) == [26, 26, 28]
    assert pp_layer_split(61, 8, version=(0, 6, 6)) == [7] * 7 + [12]
    assert pp_layer_split(80, 3, version=(0, 8, 0)) == [27, 27, 26]
    assert pp_layer_split(32, 2, (10, 22), version=(0, 7, 3)) == [10, 22]  # VLLM_PP_LAYER_PARTITION in both
    m = spec("meta-llama--Llama-3.1-70B")
    s = {"tensor_parallel_size": 2, "pipeline_parallel_size": 3}
    old = plan_vllm_detailed(VllmSettings(version="0.7.3", **s), m, H100_TOTAL, **H100)
    new = plan_vllm_detailed(VllmSettings(version="0.8.0", **s), m, H100_TOTAL, **H100)
    assert old.stage_layers == (26, 26, 28) and new.stage_layers == (27, 27, 26)
    assert old.plan.kv_bytes_per_token == 2 * 4 * 128 * 2 * 28  # the fullest stage sizes the per-token KV
