"""vLLM widens a Gated-DeltaNet layer's conv state by one row per speculative token.

``vllm@0.10.2`` / ``vllm@0.34.0``: ``vllm/model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.
gated_delta_net_state_shape`` sizes the conv state ``(conv_kernel_size - 1 + num_spec) x conv_dim / TP`` with
``num_spec`` the ``--speculative-config`` ``num_speculative_tokens``; the Mamba page then sets the attention block
size (``vllm/model_executor/models/config.py::HybridAttentionMambaModelConfig``). gt-303 (vllm-project/vllm#25760,
Qwen3-Next FP8 at TP 4 on RTX 3090s with ``qwen3_next_mtp``) prints a token count that only this arithmetic, with an
fp8 KV cache and two or three speculative tokens, reproduces from its own "Available KV cache memory".
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.memory.kv import cdiv
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed, speculative_state_layers
from kvlint.models import resolve_model
from kvlint.verify import parse_log

GiB = 1 << 30
ROOT = Path(__file__).resolve().parents[1]
QWEN3_NEXT = "Qwen/Qwen3-Next-80B-A3B-Thinking"
RTX3090 = {"gpu_name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}


def _model():
    return resolve_model(QWEN3_NEXT, allow_hub=False)


def _conv_dim(m) -> int:
    """conv_dim of the config, as gated_delta_net_state_shape builds it."""
    t = m.text_config or m.config
    return (
        2 * t["linear_num_key_heads"] * t["linear_key_head_dim"]
        + t["linear_num_value_heads"] * t["linear_value_head_dim"]
    )


def _settings(num_spec: int, **kw) -> VllmSettings:
    base = dict(
        version="0.10.2",
        tensor_parallel_size=4,
        enable_expert_parallel=True,
        quantization="fp8",
        max_model_len=10000,
        speculative_method="qwen3_next_mtp" if num_spec else None,
        num_speculative_tokens=num_spec,
    )
    base.update(kw)
    return VllmSettings(**base)


def _mamba_page(d) -> int:
    return max(g.page_bytes for g in d.groups if g.kind == "mamba")


def test_gdn_layers_carry_their_conv_row():
    m = _model()
    gdn = [lay for lay in m.layers if lay.kind == "mamba"]
    assert gdn and all(lay.spec_conv_bytes == _conv_dim(m) * 2 for lay in gdn)  # bf16 model dtype
    assert all(lay.spec_conv_bytes == 0 for lay in m.layers if lay.kind != "mamba")


@pytest.mark.parametrize("num_spec", [1, 2, 3, 5])
def test_each_speculative_token_adds_one_conv_row_per_rank(num_spec):
    m = _model()
    total = int(23.59 * GiB)
    plain = plan_vllm_detailed(_settings(0), m, total, **RTX3090)
    spec = plan_vllm_detailed(_settings(num_spec), m, total, **RTX3090)
    tp = 4
    row = _conv_dim(m) // tp * 2
    # the Mamba page is padded up to the attention page; the unpadded state is what sets the block size
    state0 = max(lay.state_bytes for lay in m.layers if lay.kind == "mamba") // tp
    for d, n in ((plain, 0), (spec, num_spec)):
        per_tok = min(g.page_bytes // g.block_size for g in d.groups if g.kind == "full")
        want_bs = 16 * cdiv(state0 + n * row, 16 * per_tok)
        assert d.plan.block_size == want_bs, (n, d.plan.block_size, want_bs)
        assert _mamba_page(d) == want_bs * per_tok


def test_no_speculation_leaves_the_layers_untouched():
    m = _model()
    notes: list[str] = []
    assert speculative_state_layers(m.layers, 0, notes) is m.layers
    assert not notes
    dense = resolve_model("Qwen/Qwen3-0.6B", allow_hub=False)
    assert speculative_state_layers(dense.layers, 3, notes) is dense.layers
    assert not notes


def test_gt303_tokens_from_the_printed_kv_memory():
    """The run's launch arguments are not in the stored excerpt; the reporter's script forces FlashInfer
    (``VLLM_ATTENTION_BACKEND=FLASHINFER``, ``VLLM_USE_V1=1``). With an fp8 KV cache and 2 speculative tokens the
    block and group arithmetic on the engine's own "Available KV cache memory" gives its "GPU KV cache size"; with
    the conv rows left out (the state without speculation) it does not."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-303.log").read_text(encoding="utf-8"))
    kv, tokens = log.figures["kv_cache_gib"], log.figures["kv_tokens"]
    m = _model()
    env = dict(attention_backend_env="FLASHINFER", use_v1=True)
    total = int(23.59 * GiB)
    for n in (2, 3):
        d = plan_vllm_detailed(_settings(n, kv_cache_dtype="fp8", **env), m, total, **RTX3090)
        assert d.plan.era == "v1"
        assert d.capacity_tokens_for(int(kv * GiB)) == tokens
    # without the speculative rows (the state kvlint took before): another block size, another count
    flat = replace(m, layers=tuple(replace(lay, spec_conv_bytes=0) for lay in m.layers))
    d0 = plan_vllm_detailed(_settings(2, kv_cache_dtype="fp8", **env), flat, total, **RTX3090)
    assert d0.capacity_tokens_for(int(kv * GiB)) != tokens
    # and with the bf16 KV cache the count is about half the printed one, whatever the speculation
    d_bf16 = plan_vllm_detailed(_settings(2, **env), m, total, **RTX3090)
    assert d_bf16.capacity_tokens_for(int(kv * GiB)) < 0.55 * tokens


def test_plan_notes_the_widened_state():
    m = _model()
    d = plan_vllm_detailed(_settings(2), m, int(23.59 * GiB), **RTX3090)
    notes = d.plan.assumptions
    assert any("speculative token" in n and "conv state" in n for n in notes), json.dumps(notes)
