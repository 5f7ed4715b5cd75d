"""Version switches (engine-memory-model.md §1.1, §1.2, §1.4, §1.8, §4): the same command planned on the
0.8.5, 0.11.0, 0.20.0, 0.27.0 and 0.30.0 images gives the documented differences. Configs: fixtures/plan/models.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kvlint.memory.kv import cdiv
from kvlint.memory.vllm import VllmSettings, plan_vllm, plan_vllm_detailed
from kvlint.models import resolve_model

GiB = 1 << 30
MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"
H100 = int(79.19 * GiB)
VERSIONS = ("0.8.5", "0.11.0", "0.20.0", "0.27.0", "0.30.0")


def load(name: str):
    return resolve_model(str(MODELS / name), allow_hub=False)


def _plan(
    ver: str,
    model: str = "meta-llama--Llama-3.1-8B",
    total: int = H100,
    cc: str = "9.0",
    gpu: str = "NVIDIA H100 80GB HBM3",
    **kw,
):
    return plan_vllm_detailed(
        VllmSettings(version=ver, **kw), load(model), total, gpu_name=gpu, compute_capability=cc
    )


def test_default_utilization_and_cudagraph_deduction():
    """`vllm serve meta-llama/Llama-3.1-8B` on H100: util 0.90 -> 0.92 and the CUDA-graph estimate deducted
    from 0.20.0 (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS default "1", vllm@0.20.0:vllm/envs.py; still on in
    0.21.1-0.27.1 logs "CUDA graph memory profiling is enabled (default since v0.21.0)")."""
    plans = {v: _plan(v).plan for v in VERSIONS}
    assert [plans[v].gpu_memory_utilization for v in VERSIONS] == [0.90, 0.90, 0.92, 0.92, 0.92]
    assert [plans[v].cudagraph_bytes > 0 for v in VERSIONS] == [False, False, True, True, True]
    for v in VERSIONS:
        p = plans[v]
        assert p.kv_cache_bytes == (
            p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes - p.cudagraph_bytes
        )
    # the env override turns the deduction off on >= 0.20 and on for 0.18-0.19 only
    assert _plan("0.20.0", estimate_cudagraphs=False).plan.cudagraph_bytes == 0
    assert _plan("0.19.0", estimate_cudagraphs=True).plan.cudagraph_bytes > 0
    assert _plan("0.17.0", estimate_cudagraphs=True).plan.cudagraph_bytes == 0  # env does not exist yet
    assert _plan("0.30.0", enforce_eager=True).plan.cudagraph_bytes == 0


def test_v1_fallback_rules():
    """0.8.5 falls back to V0 on CC < 8.0, float32, or a non-auto KV dtype off Hopper; 0.11.0 is V1 only."""
    t4 = dict(total=int(14.56 * GiB), cc="7.5", gpu="Tesla T4", model="Qwen--Qwen3-0.6B")
    assert _plan("0.8.5", **t4).plan.era == "v0"
    assert _plan("0.11.0", **t4).plan.era == "v1"
    a100 = dict(cc="8.0", gpu="NVIDIA A100-SXM4-80GB")
    assert _plan("0.8.5", kv_cache_dtype="fp8", **a100).plan.era == "v0"
    assert _plan("0.8.5", kv_cache_dtype="fp8").plan.era == "v1"  # Hopper: FA3 fp8
    assert _plan("0.8.5", dtype="float32").plan.era == "v0"
    assert _plan("0.8.5").plan.era == "v1"
    assert all(_plan(v, kv_cache_dtype="fp8", **a100).plan.era == "v1" for v in VERSIONS[1:])


def test_budget_formula_era():
    """<= 0.26: int(total x util); >= 0.27: ceil(total x util) (request_memory)."""
    total = H100 + 1  # total x 0.92 not an integer
    p20, p27 = _plan("0.20.0", total=total).plan, _plan("0.27.0", total=total).plan
    assert p20.budget_bytes == int(total * 0.92)
    assert p27.budget_bytes == math.ceil(total * 0.92)
    assert p27.budget_bytes == p20.budget_bytes + 1


def test_yarn_multiplier_dropped_at_030():
    yarn = {
        "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 32768},
    }
    derived = {
        v: _plan(v, model="Qwen--Qwen2.5-7B", hf_overrides=yarn).plan.derived_max_model_len for v in VERSIONS
    }
    assert derived == {"0.8.5": 131072, "0.11.0": 131072, "0.20.0": 131072, "0.27.0": 131072, "0.30.0": 32768}


def test_null_block_from_029():
    for v in VERSIONS:
        d = _plan(v)
        null = d.plan.bytes_per_block if v == "0.30.0" else 0
        assert d.fit_available_bytes == d.plan.kv_cache_bytes - null, v
        assert d.needed_bytes == cdiv(d.plan.max_model_len, 16) * d.plan.bytes_per_block


def test_gpu_kv_cache_size_formula_from_021():
    """< 0.21: blocks x block_size; >= 0.21: int(max_concurrency x max_model_len) (get_kv_cache_capacity)."""
    for v in VERSIONS:
        p = _plan(v, max_model_len=1000).plan
        if v in ("0.27.0", "0.30.0"):
            assert p.capacity_tokens == int(p.num_blocks / cdiv(1000, 16) * 1000), v
        else:
            assert p.capacity_tokens == p.num_blocks * 16, v
        assert p.max_concurrency == pytest.approx(p.num_blocks / cdiv(1000, 16))


def test_unknown_version_assumes_newest():
    p = plan_vllm(VllmSettings(version="latest"), load("Qwen--Qwen3-0.6B"), H100, compute_capability="9.0")
    assert p.engine_version == "0.34.0" and any("assumed" in a for a in p.assumptions)


def test_yarn_assumption_names_the_number_it_multiplies():
    """Before 0.30 vLLM multiplies YaRN's rope_scaling original_max_position_embeddings (not the
    max_position_embeddings key) by the factor: the assumption says so, with the product, so that
    'max_position_embeddings=163840, x rope factor 40' no longer reads as 6.5M tokens (DeepSeek-R1's shape)."""
    yarn = {
        "max_position_embeddings": 163840,
        "rope_scaling": {"rope_type": "yarn", "factor": 40, "original_max_position_embeddings": 4096},
    }
    old = _plan("0.20.0", model="Qwen--Qwen2.5-7B", hf_overrides=yarn).plan
    assert old.derived_max_model_len == 4096 * 40
    (why,) = [a for a in old.assumptions if a.startswith("derived max_model_len")]
    assert "original_max_position_embeddings=4096" in why and "x rope factor 40" in why
    assert why.endswith(f"= {4096 * 40}") and "max_position_embeddings=163840" not in why
    new = _plan("0.30.0", model="Qwen--Qwen2.5-7B", hf_overrides=yarn).plan
    (why,) = [a for a in new.assumptions if a.startswith("derived max_model_len")]
    assert "max_position_embeddings=163840" in why and "not applied" in why


def test_v0_long_context_chunked_prefill_default_by_release():
    """V0 turns chunked prefill on when the flag is not given and max_model_len > 32768 from 0.5.3 (the 0.5.2 wheel
    has no such default; gt-015's log, v0.5.3.post1: "Chunked prefill is enabled by default for models with
    max_model_len > 32K" ... "max_num_batched_tokens=512"), not from 0.6.0 as kvlint had it; never with LoRA or
    speculative decoding; a multimodal model keeps it off from 0.6.2 and ROCm from 0.6.5, not before
    (vllm/engine/arg_utils.py::EngineArgs.create_engine_config in the 0.5.2 - 0.6.5 wheels)."""
    long = {"max_model_len": 131072, "use_v1": False}

    def chunked(ver: str, model: str = "meta-llama--Llama-3.1-8B", **kw) -> bool:
        p = _plan(ver, model, **{**long, **kw}).plan
        return p.max_num_batched_tokens < p.max_model_len  # without chunked prefill: max(max_model_len, 2048)

    assert not chunked("0.5.2") and chunked("0.5.3") and chunked("0.5.5") and chunked("0.6.6")
    assert not chunked("0.5.3", max_model_len=32768)
    assert not chunked("0.6.6", enable_lora=True) and not chunked("0.5.3", enable_lora=True)
    assert not chunked("0.6.6", speculative_model_id="[ngram]", num_speculative_tokens=4)
    vl = "Qwen--Qwen3-VL-30B-A3B-Instruct"
    assert chunked("0.6.1", vl) and not chunked("0.6.2", vl)
    mi300 = {"total": int(191.5 * GiB), "cc": None, "gpu": "AMD Instinct MI300X"}
    assert chunked("0.6.4", **mi300) and not chunked("0.6.5", **mi300)


def test_0_34_0_block_size_default_is_64():
    """vllm@0.34.0:vllm/config/cache.py::CacheConfig.DEFAULT_BLOCK_SIZE is 64 (16 before); --block-size still wins."""
    assert _plan("0.33.0").plan.block_size == 16
    assert _plan("0.34.0").plan.block_size == 64
    assert _plan("0.34.0", block_size=16).plan.block_size == 16
    p = _plan("0.34.0").plan
    assert p.bytes_per_block == 64 * p.kv_bytes_per_token


def test_0_34_0_extensible_kv_cache_defaults_utilization_to_one():
    """vllm@0.34.0 CacheConfig.resolved_gpu_memory_utilization: 1.0 with the extensible KV cache (on by default on
    CUDA, VllmConfig._resolve_extensible_kv_cache), 0.92 without it; --kv-cache-memory-bytes and
    --num-gpu-blocks-override turn it off."""
    assert _plan("0.33.0").plan.gpu_memory_utilization == 0.92
    assert _plan("0.34.0").plan.gpu_memory_utilization == 1.0
    off = _plan("0.34.0", enable_extensible_kv_cache=False).plan
    assert off.gpu_memory_utilization == 0.92
    assert _plan("0.34.0", num_gpu_blocks_override=1000).plan.gpu_memory_utilization == 0.92
    assert _plan("0.34.0", gpu_memory_utilization=0.8).plan.gpu_memory_utilization == 0.8
    # with the cache off, 0.34.0 keeps 0.33.0's estimate-based budget (only the block size differs)
    assert off.kv_cache_bytes == (
        off.budget_bytes
        - off.weights_bytes
        - off.activation_bytes
        - off.non_torch_bytes
        - off.cudagraph_bytes
    )
    assert _plan("0.34.0").plan.kv_cache_bytes > off.kv_cache_bytes


def test_0_34_0_extensible_kv_cache_sizing():
    """vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py::measure_kv_cache_bytes (docs §1.2.5): without CUDA graphs
    (--enforce-eager) kv = min(budget - used, init_free - used - margin) - peak, used = weights + non-torch,
    peak = the activation, margin = max(1 GiB, 0.75 x peak), init_free = total - the CUDA context; with them the
    captured graph pool joins ``used`` and nothing else changes."""
    from kvlint.memory.calibration import CUDA_CONTEXT_BYTES

    for util in (None, 0.5):
        p = _plan("0.34.0", enforce_eager=True, gpu_memory_utilization=util).plan
        assert p.cudagraph_bytes == 0
        used = p.weights_bytes + p.non_torch_bytes
        margin = max(GiB, int(0.75 * p.activation_bytes))
        expected = min(p.budget_bytes - used, H100 - CUDA_CONTEXT_BYTES - used - margin) - p.activation_bytes
        assert p.kv_cache_bytes == expected
    # with CUDA graphs the captured pool is resident and counts once: with the cache on
    # vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::GPUModelRunner.profile_cudagraph_memory returns 0, so the
    # peak kept free (reserved_headroom_bytes = Worker.peak_activation_memory) holds no CUDA-graph estimate
    eager = _plan("0.34.0", enforce_eager=True).plan
    graphs = _plan("0.34.0").plan
    off = _plan("0.34.0", enable_extensible_kv_cache=False).plan
    assert graphs.cudagraph_bytes > 0 and graphs.activation_bytes == eager.activation_bytes
    assert graphs.cudagraph_bytes == off.cudagraph_bytes
    assert graphs.kv_cache_bytes == eager.kv_cache_bytes - graphs.cudagraph_bytes
    # and the plan does not say an estimate was deducted (the cache-off plan does)
    assert not any("estimate deducted" in a for a in graphs.assumptions)
    assert any("no estimate is taken with the extensible KV cache" in a for a in graphs.assumptions)
    assert any("estimate deducted" in a for a in off.assumptions)


def test_0_34_0_error_texts():
    """E1/E2 from vllm@0.34.0:vllm/v1/core/kv_cache_planning.py::_check_enough_kv_cache_memory with the remedy of
    _more_kv_cache_memory_hint (the check after warm-up with the extensible KV cache)."""
    big = _plan("0.34.0", model="meta-llama--Llama-3.1-8B", total=int(22 * GiB), max_model_len=131072)
    assert big.error is not None
    assert "The extensible KV cache already takes all device memory left after the model" in big.error
    assert "Decreasing `max_model_len` also reduces what is needed." in big.error
    capped = _plan("0.34.0", total=int(22 * GiB), max_model_len=131072, gpu_memory_utilization=0.9)
    assert "within `gpu_memory_utilization`=0.9; increase it" in (capped.error or "")
    off = _plan("0.34.0", total=int(22 * GiB), max_model_len=131072, enable_extensible_kv_cache=False)
    assert "Try increasing `gpu_memory_utilization` when initializing the engine (this flag" in (
        off.error or ""
    )
    old = _plan("0.33.0", total=int(22 * GiB), max_model_len=131072)
    assert old.error is not None and "extensible" not in old.error


def test_0_34_0_extensible_flag_read_from_the_command():
    """``--no-enable-extensible-kv-cache`` (a BooleanOptionalAction of vllm@0.34.0 EngineArgs) reaches the plan."""
    from kvlint.engines.vllm import parse_vllm_argv
    from kvlint.memory.vllm import settings_from_config

    on = settings_from_config(parse_vllm_argv(["m"], version="0.34.0"))
    off = settings_from_config(parse_vllm_argv(["m", "--no-enable-extensible-kv-cache"], version="0.34.0"))
    assert on.enable_extensible_kv_cache is None and off.enable_extensible_kv_cache is False
    plan_off = plan_vllm_detailed(off, load("meta-llama--Llama-3.1-8B"), H100, gpu_name="NVIDIA H100 80GB HBM3",
                                  compute_capability="9.0").plan  # fmt: skip
    assert plan_off.gpu_memory_utilization == 0.92


def test_0_34_0_capacity_equation_names_what_the_extensible_cache_keeps_free():
    """The per-GPU equation of the vLLM capacity messages adds up for a 0.34.0 plan whose pool the device (budget
    less the margin and the CUDA context, §1.2.5) bounds: the difference is named, and 0.33.0's has none."""
    from kvlint.rules.families.capacity import _plan_summary

    p = _plan("0.34.0").plan
    kept = p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes - p.cudagraph_bytes
    kept -= p.kv_cache_bytes
    assert kept > 0
    assert f"- {kept / GiB:.2f} GiB kept free" in _plan_summary(p)
    assert "kept free" not in _plan_summary(_plan("0.33.0", gpu_memory_utilization=0.98).plan)


def test_rocm_takes_no_cudagraph_estimate_before_0_26_0():
    """``Worker.determine_available_memory`` profiles the CUDA graphs only on CUDA before 0.26.0 (``not
    current_platform.is_rocm()`` in 0.18.0/0.20.0, ``is_cuda()`` in 0.21.0 - 0.25.0, ``is_cuda_alike()`` from
    0.26.0: ``vllm/v1/worker/gpu_worker.py``), so on an MI300X at 0.24.0 vLLM deducts nothing for them while
    kvlint deducted the CUDA estimate (0.67 GiB for Qwen2.5-7B) off the KV cache."""
    mi300x = dict(total=int(191.98 * GiB), cc=None, gpu="AMD Instinct MI300X")
    for ver in ("0.20.0", "0.24.0", "0.25.0"):
        p = _plan(ver, **mi300x).plan
        assert p.cudagraph_bytes == 0, ver
        assert p.kv_cache_bytes == p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes
        assert any("no CUDA-graph estimate on ROCm" in a for a in p.assumptions), ver
        # the same start-up on an H100 deducts it (on the V1 runner: Llama takes the V2 one at 0.24.0, §1.2.6)
        assert _plan(ver, v2_model_runner=False).plan.cudagraph_bytes > 0, ver
    # the 0.18 - 0.19 opt-in does not reach ROCm either; from 0.26.0 the estimate is taken on ROCm too
    assert _plan("0.19.0", estimate_cudagraphs=True, **mi300x).plan.cudagraph_bytes == 0
    assert _plan("0.26.0", **mi300x).plan.cudagraph_bytes > 0


@pytest.mark.parametrize("user", [512, 200000])
def test_a_user_max_model_len_is_said_taken_from_the_flag(user):
    """``--max-model-len 512``: the assumption said "derived max_model_len from max_position_embeddings=131072",
    which read as a contradiction (newuser49). It now says what was taken and from where, the model's derived length
    only as the bound it was checked against (vLLM's _get_and_verify_max_len), above it (refused) or below."""
    plan = _plan("0.11.0", max_model_len=user).plan
    assert plan.max_model_len == user and plan.max_model_len_source == "user"
    assert not [a for a in plan.assumptions if a.startswith("derived max_model_len")], plan.assumptions
    (note,) = [a for a in plan.assumptions if a.startswith("max_model_len=")]
    assert note == (
        f"max_model_len={user} from --max-model-len (the model's maximum it is checked against: "
        "max_position_embeddings=131072)"
    )
    # without the flag the derived length is what was taken, and said so
    (derived,) = [a for a in _plan("0.11.0").plan.assumptions if a.startswith("derived max_model_len")]
    assert derived == "derived max_model_len from max_position_embeddings=131072"
