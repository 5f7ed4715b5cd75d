"""The unquantized MoE experts' workspace that vLLM 0.14 - 0.19 keeps through the profile's dummy sampler pass
(kvlint.memory.vllm.moe_workspace_bytes, docs/engine-memory-model.md §5)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kvlint.memory.vllm import VllmSettings, moe_workspace_bytes, plan_vllm_detailed, resolve_startup
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
TOTAL = int(79.19 * GiB)  # the llm-d-planner sweep's printed H100 total (gt-345 - gt-357)


def _moe():
    return resolve_model(str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen3-30B-A3B"), allow_hub=False)


def _settings(version: str, **kw) -> VllmSettings:
    return VllmSettings(version=version, max_model_len=8192, gpu_memory_utilization=0.95, **kw)


def test_printed_moe_activation_is_met_at_0_19() -> None:
    """gt-351 (vLLM 0.19.0, Qwen3-30B-A3B on an H100, 8,192 profile tokens, 1,024 sampler rows) printed 2.68 GiB
    of peak activation: the Triton sampler's tensors (2.10 GiB) and the experts' 0.50 GiB workspace that the
    WorkspaceManager keeps. Without the workspace kvlint was 21.5 % low."""
    d = plan_vllm_detailed(_settings("0.19.0"), _moe(), TOTAL, **H100)
    assert d.plan.activation_bytes / GiB == pytest.approx(2.68, rel=0.05)


def test_workspace_follows_the_releases_and_shapes_read() -> None:
    m = _moe()

    def ws(version: str, tokens: int = 8192, **kw) -> int:
        s = _settings(version, **kw)
        cfg = resolve_startup(s, m, TOTAL, **H100)
        return moe_workspace_bytes(s, m, cfg, tokens)

    assert ws("0.19.0") > 0 and ws("0.14.0") == ws("0.19.0")
    assert ws("0.13.0") == 0 and ws("0.20.0") == 0  # fused_experts frees its buffers / not read
    # a dense model has none; quantized experts take other kernels (not read)
    dense = resolve_model(str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen2.5-7B"), allow_hub=False)
    s = _settings("0.19.0")
    assert moe_workspace_bytes(s, dense, resolve_startup(s, dense, TOTAL, **H100), 8192) == 0
    fp8 = dataclasses.replace(m, quant_method="fp8", quant_config={"quant_method": "fp8"}, weight_bytes=None)
    s = _settings("0.19.0")
    assert moe_workspace_bytes(s, fp8, resolve_startup(s, fp8, TOTAL, **H100), 8192) == 0
    # FlashInfer's experts, opted into with VLLM_USE_FLASHINFER_MOE_FP16, size their buffers otherwise: CUTLASS only
    # with expert parallelism (no DP) on compute capability >= 9.0; on an H100 without it the oracle keeps Triton
    assert ws("0.19.0", flashinfer_moe_fp16=True) == ws("0.19.0") > 0
    assert ws("0.19.0", flashinfer_moe_fp16=True, enable_expert_parallel=True, tensor_parallel_size=2) == 0
    assert ws("0.19.0", enable_expert_parallel=True, tensor_parallel_size=2) > 0
    from kvlint.memory.vllm import settings_from_flags

    assert settings_from_flags({}, {"VLLM_USE_FLASHINFER_MOE_FP16": "1"}, "0.19.0").flashinfer_moe_fp16
    assert not settings_from_flags({}, {}, "0.19.0").flashinfer_moe_fp16
    # linear in the profile's tokens; before 0.19.0 the modular kernel chunks them by VLLM_FUSED_MOE_CHUNK_SIZE
    assert ws("0.19.0", 16384) == 2 * ws("0.19.0", 8192) and ws("0.19.0", 32768) == 4 * ws("0.19.0", 8192)
    assert ws("0.17.0", 32768) == ws("0.17.0", 16384)
    # TP splits the experts' width (N), not the hidden size (K), and every shape takes max(N or N/2, K): with
    # Qwen3-30B-A3B's N = 2 x 768 below K = 2,048 the workspace is the same at TP 2
    assert ws("0.19.0", tensor_parallel_size=2) == ws("0.19.0")
    # with the experts wider than the hidden size, as Mixtral's (2 x 14,336 against 4,096), TP 2 shrinks it
    wide = dataclasses.replace(m, moe_intermediate_size=14336)
    s2, s1 = _settings("0.19.0", tensor_parallel_size=2), _settings("0.19.0")
    w2 = moe_workspace_bytes(s2, wide, resolve_startup(s2, wide, TOTAL, **H100), 8192)
    w1 = moe_workspace_bytes(s1, wide, resolve_startup(s1, wide, TOTAL, **H100), 8192)
    assert 0 < w2 < w1


def test_flashinfer_opt_in_follows_the_oracle() -> None:
    """vllm@0.19.0 ``select_unquantized_moe_backend``: VLLM_USE_FLASHINFER_MOE_FP16 takes FlashInfer's TRTLLM experts
    on the Blackwell family (from 0.17.0; 0.14.0 has only the CUTLASS branch) unless VLLM_FLASHINFER_MOE_BACKEND moves
    off ``latency``; an explicit ``--moe-backend`` (0.17.0 on) wins over both."""
    from kvlint.engines.vllm import parse_vllm_argv
    from kvlint.memory.vllm import settings_from_config

    m = _moe()
    b200 = {"gpu_name": "NVIDIA B200", "compute_capability": "10.0"}

    def ws(version: str, gpu: dict, argv: list[str], env: dict[str, str]) -> int:
        s = settings_from_config(parse_vllm_argv(["Qwen/Qwen3-30B-A3B", *argv], version=version, env=env))
        s = dataclasses.replace(s, max_model_len=8192)
        return moe_workspace_bytes(s, m, resolve_startup(s, m, int(178 * GiB), **gpu), 8192)

    fi = {"VLLM_USE_FLASHINFER_MOE_FP16": "1"}
    assert ws("0.19.0", b200, [], {}) > 0
    assert ws("0.19.0", b200, [], fi) == 0
    assert ws("0.19.0", b200, [], {**fi, "VLLM_FLASHINFER_MOE_BACKEND": "throughput"}) > 0
    assert ws("0.14.0", b200, [], fi) > 0
    assert ws("0.19.0", H100, [], fi) > 0
    assert ws("0.19.0", H100, ["--moe-backend", "flashinfer_cutlass"], {}) == 0
    assert ws("0.19.0", b200, ["--moe-backend", "triton"], fi) > 0
