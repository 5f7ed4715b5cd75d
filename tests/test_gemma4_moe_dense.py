"""Gemma 4 MoE layers keep their dense MLP beside the experts, and route ``top_k_experts`` tokens' worth of experts.

Source: ``vllm@0.20.0:vllm/model_executor/models/gemma4.py``: ``Gemma4DecoderLayer`` always builds ``self.mlp``
(``intermediate_size``) and, with ``enable_moe_block``, a router and ``self.moe`` whose outputs it sums with the MLP's;
``Gemma4MoE`` builds ``FusedMoE(top_k=config.top_k_experts)``. Ground truth: gt-323 (vLLM 0.20.2, gemma-4-26B-A4B-it,
bf16, one H200) printed 48.5 GiB of weights where kvlint counted the experts only (46.93 GiB, -3.2 %).
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from kvlint.memory.vllm import _inter_eff
from kvlint.models import parse_config, resolve_model
from kvlint.models.weights import param_breakdown, weight_bytes

GiB = 1 << 30
ROOT = Path(__file__).resolve().parents[1]
REF = "google/gemma-4-26B-A4B"


def _without_moe_block_flag():
    spec = resolve_model(REF, allow_hub=False)
    cfg = copy.deepcopy(spec.config)
    cfg["text_config"]["enable_moe_block"] = False
    return spec, parse_config(cfg, model_id="gemma4-no-flag", source="test")


def test_every_moe_layer_keeps_its_dense_mlp() -> None:
    spec, bare = _without_moe_block_flag()
    t = spec.text_config
    dense = t["num_hidden_layers"] * 3 * t["hidden_size"] * t["intermediate_size"]
    assert param_breakdown(spec)["linear"] - param_breakdown(bare)["linear"] == dense
    assert param_breakdown(spec)["experts"] == param_breakdown(bare)["experts"]


def test_effective_width_uses_top_k_experts_and_the_dense_mlp() -> None:
    spec, bare = _without_moe_block_flag()
    t = spec.text_config
    assert "num_experts_per_tok" not in t  # Gemma 4 names it top_k_experts
    assert _inter_eff(spec) == t["top_k_experts"] * t["moe_intermediate_size"] + t["intermediate_size"]
    assert _inter_eff(bare) == t["top_k_experts"] * t["moe_intermediate_size"]


def test_gt323_weights_within_two_percent() -> None:
    case = {c["id"]: c for c in yaml.safe_load((ROOT / "bench/groundtruth/cases.yaml").read_text())}["gt-323"]
    printed = case["figures"]["weights_gib"] * GiB
    spec, bare = _without_moe_block_flag()
    got = weight_bytes(spec, dtype_bytes=2)[0]
    assert abs(got - printed) / printed < 0.02, got / GiB
    assert (printed - weight_bytes(bare, dtype_bytes=2)[0]) / printed > 0.02  # the experts alone fall short
