"""Zamba2 in vLLM: hybrid layers keep their own KV cache of the shared attention block, every layer a Mamba-2 state.

Expected figures restate vllm@0.12.0:vllm/model_executor/models/zamba2.py (Zamba2Attention: num_attention_heads heads
of attention_head_dim, no separate KV heads; get_mamba_state_shape_from_config -> mamba2_state_shape) on transformers'
Zamba2Config (attention_head_dim = 2 x hidden // heads, mamba_headdim = expand x hidden // n_mamba_heads). The config
below is transformers' Zamba2Config defaults written out (no verbatim Zyphra config.json is stored).
"""

from __future__ import annotations

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import parse_config

GiB = 1 << 30
#: transformers 4.57.1 configuration_zamba2.py: Zamba2Config's default layers_block_type
BLOCKS = (
    ["mamba"]
    + (["mamba"] * 5 + ["hybrid"]) * 7
    + ["mamba"] * 4
    + ["hybrid"]
    + ["mamba"] * 3
    + ["hybrid"]
    + ["mamba"] * 2
)
CFG = {
    "architectures": ["Zamba2ForCausalLM"],
    "model_type": "zamba2",
    "hidden_size": 2560,
    "num_hidden_layers": len(BLOCKS),
    "layers_block_type": BLOCKS,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "intermediate_size": 10240,
    "mamba_d_state": 64,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
    "mamba_ngroups": 1,
    "n_mamba_heads": 8,
    "num_mem_blocks": 1,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "torch_dtype": "bfloat16",
}


def _state(cfg: dict, b: int) -> int:
    inter = cfg["mamba_expand"] * cfg["hidden_size"]
    heads = cfg["n_mamba_heads"]
    conv = (inter + 2 * cfg["mamba_ngroups"] * cfg["mamba_d_state"]) * (cfg["mamba_d_conv"] - 1)
    return (conv + heads * (inter // heads) * cfg["mamba_d_state"]) * b


def test_zamba2_layers_as_vllm_builds_them() -> None:
    spec = parse_config(CFG, model_id="zamba2", source="test")
    hybrid = BLOCKS.count("hybrid")
    head = 2 * CFG["hidden_size"] // CFG["num_attention_heads"]
    assert sum(1 for ly in spec.layers if ly.kind == "full") == hybrid
    assert sum(1 for ly in spec.layers if ly.kind == "mamba") == len(BLOCKS) - hybrid
    assert {ly.state_bytes for ly in spec.layers} == {_state(CFG, 2)}
    assert kv_bytes_per_token(spec, 1, "auto") == hybrid * 2 * CFG["num_attention_heads"] * head * 2


def test_zamba2_plan_has_attention_and_mamba_groups() -> None:
    spec = parse_config(CFG, model_id="zamba2", source="test")
    d = plan_vllm_detailed(
        VllmSettings(version="0.12.0", max_model_len=4096),
        spec,
        int(79.19 * GiB),
        gpu_name="NVIDIA H100 80GB HBM3",
        compute_capability="9.0",
    )
    assert {g.kind for g in d.groups} == {"full", "mamba"}
