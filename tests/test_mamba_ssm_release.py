"""Release-keyed SSM-state dtype of Nemotron-H in vLLM (kvlint.memory.versions.nemotron_h_ssm_cache_dtype).

vLLM's ``NemotronHForCausalLMConfig`` hook resolves ``--mamba-ssm-cache-dtype auto`` for a config without
``mamba_ssm_cache_dtype``: no hook up to 0.12.x (the model dtype), float16 in 0.13.0-0.19.x (vllm-project/vllm#29978),
float32 from 0.20.0 (vllm-project/vllm#39032). The expected state is rebuilt here from vLLM's
``MambaStateShapeCalculator.mamba2_state_shape`` (conv at the model dtype, SSM at the resolved dtype) and the block
size from ``_align_hybrid_block_size`` (the attention block raised, in steps of 16 tokens, to cover the state page).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.memory.kv import cdiv
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import parse_config

DATA = Path(__file__).resolve().parents[1] / "kvlint" / "data" / "models"
GiB = 1 << 30
H100 = int(79.19 * GiB)
_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}


def _cfg(d: str) -> dict:
    return json.loads((DATA / d / "config.json").read_text())


def _mamba2_state(cfg: dict, model_bytes: int, ssm_bytes: int) -> int:
    heads, head_dim, d_state = cfg["mamba_num_heads"], cfg["mamba_head_dim"], cfg["ssm_state_size"]
    conv = (heads * head_dim + 2 * cfg["n_groups"] * d_state) * (cfg["conv_kernel"] - 1)
    return conv * model_bytes + heads * head_dim * d_state * ssm_bytes


def _release_ssm_dtype(version: str, model_dtype: str) -> str:
    # read in the vLLM sources of 0.12.0 / 0.13.0 / 0.19.1 / 0.20.0 (see the module docstring)
    major_minor = tuple(int(x) for x in version.split(".")[:2])
    if major_minor >= (0, 20):
        return "float32"
    if major_minor >= (0, 13):
        return "float16"
    return model_dtype


def _attn_bytes_per_token(cfg: dict, kv_bytes: int) -> int:
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    return cfg["num_key_value_heads"] * head_dim * 2 * kv_bytes


@pytest.mark.parametrize("model_dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("version", ["0.12.0", "0.13.0", "0.19.1", "0.20.0", "0.34.0"])
def test_nemotron_h_ssm_state_follows_the_release(version: str, model_dtype: str) -> None:
    cfg = {**_cfg("nvidia--Nemotron-H-56B-Base-8K"), "torch_dtype": model_dtype}
    assert "mamba_ssm_cache_dtype" not in cfg and cfg["architectures"] == ["NemotronHForCausalLM"]
    spec = parse_config(cfg, model_id="nemotron-h-56b", source="test")
    mb = _BYTES[model_dtype]
    want = _mamba2_state(cfg, mb, _BYTES[_release_ssm_dtype(version, model_dtype)])
    d = plan_vllm_detailed(
        VllmSettings(version=version, max_model_len=8192, dtype=model_dtype),
        spec,
        H100,
        gpu_name="NVIDIA H100 80GB HBM3",
        compute_capability="9.0",
    )
    kinds = sorted({g.kind for g in d.groups})
    assert kinds == ["full", "mamba"], kinds
    tok = _attn_bytes_per_token(cfg, mb)
    blocks = {g.block_size for g in d.groups}
    assert blocks == {16 * cdiv(want, 16 * tok)}, (version, model_dtype, blocks, want)


def test_nemotron_h_ssm_dtype_in_the_config_is_read_from_the_hook_release() -> None:
    """Nemotron 3 Nano sets mamba_ssm_cache_dtype float32: releases with the NemotronH hook (0.13.0 on) pass it on;
    0.12.0 reads the SSM dtype only from --mamba-ssm-cache-dtype (auto: the model dtype), never from the config."""
    cfg = _cfg("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert cfg["mamba_ssm_cache_dtype"] == "float32" and cfg["torch_dtype"] == "bfloat16"
    spec = parse_config(cfg, model_id="nano", source="test")
    tok = _attn_bytes_per_token(cfg, 2)
    for version, ssm_bytes in (("0.12.0", 2), ("0.13.0", 4), ("0.19.1", 4), ("0.20.0", 4), ("0.34.0", 4)):
        d = plan_vllm_detailed(
            VllmSettings(version=version, max_model_len=8192),
            spec,
            H100,
            gpu_name="NVIDIA H100 80GB HBM3",
            compute_capability="9.0",
        )
        want = _mamba2_state(cfg, 2, ssm_bytes)
        assert {g.block_size for g in d.groups} == {16 * cdiv(want, 16 * tok)}, version
