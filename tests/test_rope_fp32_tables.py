"""RoPE cos/sin caches vLLM builds in float32 whatever the model dtype (docs/engine-memory-model.md §1.13):
MiniMax-Text-01/M1's, ``rotary_dim`` wide and capped by ``max_model_len``
(``vllm/model_executor/models/minimax_text_01.py``, 0.9.2 - 0.23.x)."""

from __future__ import annotations

from pathlib import Path

from kvlint.memory.vllm import VllmSettings, _rotary_cache_bytes, plan_vllm_detailed
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
M1 = ROOT / "fixtures" / "models" / "linear" / "MiniMaxAI--MiniMax-M1-80k"


def _m1():
    return resolve_model(str(M1), allow_hub=False)


def test_minimax_cache_is_float32_rotary_dim_wide_and_capped_by_max_model_len():
    """MiniMaxText01DecoderLayer: max_position = min(max_position_embeddings, max_model_len); get_rope(head_dim,
    rotary_dim=config.rotary_dim, dtype=torch.float32): 65,536 x 64 x 4 B at --max-model-len 65536."""
    m = _m1()
    assert _rotary_cache_bytes(m, 2, 65536) == 65536 * 64 * 4
    # the config's own length (10,240,000) when the engine's is not given, still 64 wide and 4 bytes
    assert _rotary_cache_bytes(m, 2) == 10_240_000 * 64 * 4
    assert _rotary_cache_bytes(m, 2, 20_000_000) == 10_240_000 * 64 * 4


def test_plan_weights_follow_max_model_len():
    """The plan's weights grow by the cache's positions between two --max-model-len values, nothing else."""
    m = _m1()
    plans = [
        plan_vllm_detailed(
            VllmSettings(version="0.20.0", tensor_parallel_size=8, max_model_len=n),
            m,
            int(139.8 * (1 << 30)),
            gpu_name="NVIDIA H200",
            compute_capability="9.0",
        ).plan
        for n in (65536, 1_000_000)
    ]
    assert plans[1].weights_bytes - plans[0].weights_bytes == (1_000_000 - 65536) * 64 * 4
