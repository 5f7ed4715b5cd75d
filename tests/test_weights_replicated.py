"""Weights each tensor-parallel rank holds whole (docs/engine-memory-model.md §1.13, "Per rank").

vLLM shards most linear layers over TP but builds MLA's ``q_a_proj``/``kv_a_proj_with_mqa`` (``fused_qkv_a_proj``,
``disable_tp=True``), the DSA indexer and the MoE routers replicated, and gives every rank at least one whole K/V
head (vllm@002d6073 vllm/model_executor/models/deepseek_v2.py, vllm/model_executor/layers/linear.py::
QKVParallelLinear). The expected figures are derived here from the configs' shapes, a real checkpoint's stored
size and those rules, independently of kvlint's module naming.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import parse_config, resolve_model
from kvlint.models.weights import param_breakdown, tp_replicated_bytes, weight_bytes
from kvlint.types import ModelSpec

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "models"
AWQ_DIR = FIX / "quant" / "cognitivecomputations--DeepSeek-V3-AWQ"
DATA = Path(__file__).resolve().parent.parent / "kvlint" / "data" / "models"
GiB = 1 << 30


def _awq_rate(g: int) -> float:
    """AWQ bytes per weight element: 4-bit qweight, fp16 scale and 4-bit zero per group of g (vLLM awq.py
    AWQLinearMethod.create_weights: qweight in x out/8 int32, qzeros in/g x out/8 int32, scales in/g x out fp16)."""
    return 0.5 + 2 / g + 0.5 / g


def _index_total() -> int:
    return int(json.loads((AWQ_DIR / "model.safetensors.index.json").read_text())["metadata"]["total_size"])


def _config() -> dict:
    return json.loads((AWQ_DIR / "config.json").read_text())


def _whole_on_every_rank() -> float:
    """Bytes of the AWQ DeepSeek-V3 checkpoint's modules the engines build whole on every TP rank, from its config:
    MLA's fused q_a/kv_a projection (AWQ g64) on every layer and the MoE routers (bf16) of the MoE layers."""
    cfg = _config()
    h, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    moe_layers = sum(
        1 for i in range(L) if i >= cfg["first_k_dense_replace"] and i % cfg["moe_layer_freq"] == 0
    )
    qkv_a = L * h * (cfg["q_lora_rank"] + cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * _awq_rate(64)
    routers = moe_layers * h * cfg["n_routed_experts"] * 2
    return qkv_a + routers


def test_awq_estimate_reproduces_the_stored_checkpoint_size() -> None:
    """kvlint's AWQ pricing of every DeepSeek-V3 linear (MLA projections included) gives the checkpoint's stored
    bytes: the index total counts no MTP layer, and kvlint counts none."""
    spec = dataclasses.replace(resolve_model(str(AWQ_DIR), allow_hub=False), weight_bytes=None)
    est, src = weight_bytes(spec, dtype_bytes=2)
    assert "awq 4-bit g64" in src
    assert abs(est - _index_total()) / _index_total() < 1e-6


def test_per_rank_weights_of_an_awq_mla_moe_checkpoint_hold_the_replicated_modules() -> None:
    """TP 8 on the stored size: the layers' bytes split evenly, plus 7/8 of the replicated fused_qkv_a_proj (AWQ) and
    routers (bf16) on every rank; embedding and lm_head split over TP; the RoPE cache (yarn: original x factor
    positions x rope dim x 2 B) on every rank. Failed before: the replicated modules were divided by 8 too."""
    cfg = _config()
    spec = resolve_model(str(AWQ_DIR), allow_hub=False)
    total = _index_total()
    assert spec.weight_bytes == total
    h, V = cfg["hidden_size"], cfg["vocab_size"]
    embed = lm = V * h * 2
    rs = cfg["rope_scaling"]
    rotary = rs["original_max_position_embeddings"] * int(rs["factor"]) * cfg["qk_rope_head_dim"] * 2
    tp = 8
    expected = (total - embed - lm) / tp + _whole_on_every_rank() * (1 - 1 / tp) + (embed + lm) / tp + rotary
    plan = plan_vllm_detailed(
        VllmSettings(tensor_parallel_size=tp, max_model_len=8192, quantization="awq"),
        spec,
        141 * GiB,
        compute_capability="9.0",
    ).plan
    assert abs(plan.weights_bytes - expected) / expected < 2e-4, (plan.weights_bytes / GiB, expected / GiB)
    assert "replicated on every TP rank" in plan.weights_source


def test_dsa_indexer_weights_counted_on_the_layers_that_build_one() -> None:
    """GLM-5.3's indexer (wq_b q_lora x heads x dim, wk h x dim; weights_proj h x heads at the model dtype) exists on
    the layers its config's ``indexer_types`` marks ``full`` (vLLM derives the same set from index_topk_freq and
    index_skip_topk_offset). Failed before: no indexer weights were counted."""
    cfg = json.loads((DATA / "zai-org--GLM-5.3-FP8" / "config.json").read_text())
    full = [i for i, kind in enumerate(cfg["indexer_types"][: cfg["num_hidden_layers"]]) if kind == "full"]
    assert 0 < len(full) < cfg["num_hidden_layers"]
    with_idx = param_breakdown(parse_config(cfg, model_id="zai-org/GLM-5.3-FP8", source="test"))
    bare = {k: v for k, v in cfg.items() if not k.startswith("index")}
    without = param_breakdown(parse_config(bare, model_id="zai-org/GLM-5.3-FP8", source="test"))
    h, ih, ihd = cfg["hidden_size"], cfg["index_n_heads"], cfg["index_head_dim"]
    assert with_idx["linear"] - without["linear"] == len(full) * (cfg["q_lora_rank"] * ih * ihd + h * ihd)
    assert with_idx["other"] - without["other"] == len(full) * (h * ih + 2 * ihd)


def test_glm_dsa_indexer_and_mla_a_projections_replicated_at_fp8_block_rate() -> None:
    """GLM-5.3-FP8 at TP 8: fused_qkv_a_proj on every layer and the indexer's wq_b/wk at the fp8 block rate
    (1 + 4/128^2), its weights_proj and the routers at bf16, 7/8 of each extra per rank."""
    cfg = json.loads((DATA / "zai-org--GLM-5.3-FP8" / "config.json").read_text())
    spec = parse_config(cfg, model_id="zai-org/GLM-5.3-FP8", source="test")
    h, L, E = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["n_routed_experts"]
    full = sum(1 for kind in cfg["indexer_types"][:L] if kind == "full")
    fp8 = 1 + 4 / (128 * 128)
    lin = L * h * (cfg["q_lora_rank"] + cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"])
    lin += full * (
        cfg["q_lora_rank"] * cfg["index_n_heads"] * cfg["index_head_dim"] + h * cfg["index_head_dim"]
    )
    bf16 = (L - cfg["first_k_dense_replace"]) * h * E + full * h * cfg["index_n_heads"]
    expected = (lin * fp8 + bf16 * 2) * 7 / 8
    got, what = tp_replicated_bytes(spec, dtype_bytes=2, tp=8)
    assert abs(got - expected) <= 1, (got, expected)
    assert "MLA/indexer" in what and "routers" in what
    assert tp_replicated_bytes(spec, dtype_bytes=2, tp=1) == (0, "")


@pytest.mark.parametrize("tp", [4, 8])
def test_kv_heads_fewer_than_tp_are_replicated(tp: int) -> None:
    """Qwen3-30B-A3B (4 KV heads) at TP 8: every rank holds one whole K and V head (num_kv_heads = max(1, K // tp)),
    where an even split gives half a head; at TP 4 nothing is replicated but the routers."""
    spec: ModelSpec = resolve_model("Qwen/Qwen3-30B-A3B", allow_hub=False)
    c = spec.text_config or spec.config
    h, L, K, d, E = (
        c["hidden_size"],
        c["num_hidden_layers"],
        c["num_key_value_heads"],
        c["head_dim"],
        c["num_experts"],
    )
    kv_extra = L * 2 * h * d * (1 - K / tp) * 2 if K < tp else 0
    expected = kv_extra + L * h * E * 2 * (1 - 1 / tp)
    got, what = tp_replicated_bytes(spec, dtype_bytes=2, tp=tp)
    assert abs(got - expected) <= 1, (got, expected)
    assert ("K/V heads" in what) == (K < tp)


def test_sglang_per_rank_weights_hold_the_replicated_modules_as_vllm() -> None:
    """SGLang builds the same modules whole on every TP rank (sglang@0.5.23 models/deepseek_v2.py: fused_qkv_a_proj_
    with_mqa ``ReplicatedLinear``, ``MoEGate`` a plain parameter; the same in the 0.4.10 – 0.5.18 wheels): TP 8 on the
    AWQ checkpoint's stored size holds 7/8 of them more per rank than an even split. Failed before: SGLang's plan
    divided the whole checkpoint by TP. After loading, each rank also holds the MLA ``w_kc`` / ``w_vc`` copies of its
    heads' ``kv_b_proj`` (``mla_absorbed_copy_bytes``, tests/test_sglang_dsa.py), which the checkpoint does not store."""
    from kvlint.engines import parse_command_line
    from kvlint.memory.sglang import mla_absorbed_copy_bytes, plan_sglang_detailed

    spec = resolve_model(str(AWQ_DIR), allow_hub=False)
    total = _index_total()
    tp = 8
    copies = mla_absorbed_copy_bytes(spec, tp, 2)[0]  # AWQ runs in float16
    assert copies > 0
    expected = total / tp + _whole_on_every_rank() * (1 - 1 / tp) + copies
    argv = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "x",
        "--tp",
        str(tp),
        "--quantization",
        "awq",
    ]
    s = parse_command_line(argv, "0.5.23")
    s.version = "0.5.23"
    got = plan_sglang_detailed(s, spec, 141 * GiB, gpus=tp).plan.weights_bytes
    assert abs(got - expected) / expected < 2e-4, (got / GiB, expected / GiB)
    # no replication at TP 1: the whole checkpoint on the one rank
    s1 = parse_command_line(
        ["python", "-m", "sglang.launch_server", "--model-path", "x", "--quantization", "awq"], "0.5.23"
    )
    s1.version = "0.5.23"
    assert (
        plan_sglang_detailed(s1, spec, 900 * GiB, gpus=1).plan.weights_bytes
        == total + mla_absorbed_copy_bytes(spec, 1, 2)[0]
    )


def test_tgi_per_shard_weights_hold_mla_a_projections_and_routers_but_never_kv_copies() -> None:
    """TGI loads MLA's q_a_proj / kv_a_proj_with_mqa with ``weights.get_weights`` ("without tensor parallelism") and
    the routers with ``FastLinear.load`` (the whole tensor; v3.3.6 flash_deepseek_v3_modeling.py, flash_mixtral_
    modeling.py; the same from v2.2.0), so each of 8 shards holds 7/8 of them more than an even split. It refuses
    K/V heads the shards cannot split, so none are replicated. Failed before: the whole checkpoint / 8."""
    from kvlint.engines import parse_command_line
    from kvlint.memory.tgi import plan_tgi

    spec = resolve_model(str(AWQ_DIR), allow_hub=False)
    total = _index_total()
    shards = 8
    expected = total / shards + _whole_on_every_rank() * (1 - 1 / shards)
    s = parse_command_line(
        ["text-generation-launcher", "--model-id", "x", "--num-shard", str(shards), "--quantize", "awq"],
        "3.3.6",
    )
    s.version = "3.3.6"
    got = plan_tgi(s, spec, 141 * GiB, gpus=shards).weights_bytes
    assert abs(got - expected) / expected < 2e-4, (got / GiB, expected / GiB)
    # Qwen3-30B-A3B (4 KV heads) over 8 shards: TGI keeps no K/V copies, only the routers whole
    qwen: ModelSpec = resolve_model("Qwen/Qwen3-30B-A3B", allow_hub=False)
    c = qwen.text_config or qwen.config
    only_routers = c["num_hidden_layers"] * c["hidden_size"] * c["num_experts"] * 2 * (1 - 1 / 8)
    got_q, what = tp_replicated_bytes(qwen, dtype_bytes=2, tp=8, replicate_kv=False)
    assert abs(got_q - only_routers) <= 1 and "K/V" not in what
