"""One test per config.json quirk listed in issue 4 / shared/corpus/models/README.md.

Real configs come from the bundled catalogue (kvlint/data/models/, copied from shared/corpus/models with
their sources). Quirks that no corpus config exhibits (``n_layer``/``num_layers`` key spellings) are tested
on a real config with only that key renamed, and say so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.models import parse_config, resolve_model

DATA = Path(__file__).resolve().parents[1] / "kvlint" / "data" / "models"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "models"


def _cfg(d: str) -> dict:
    return json.loads((DATA / d / "config.json").read_text())


def _kinds(spec) -> dict[str, int]:
    out: dict[str, int] = {}
    for ly in spec.layers:
        out[ly.kind] = out.get(ly.kind, 0) + 1
    return out


def test_nested_text_config_is_read_for_decoder_fields() -> None:
    # Qwen2.5-VL keeps decoder fields at the top level in some exports and in text_config in others;
    # medgemma-27b (Gemma 3) keeps them only under text_config.
    top = _cfg("google--medgemma-27b-it")
    assert "num_hidden_layers" not in top and "text_config" in top
    spec = resolve_model("google/medgemma-27b-it", allow_hub=False)
    assert spec.num_layers == top["text_config"]["num_hidden_layers"]
    assert spec.num_kv_heads == top["text_config"]["num_key_value_heads"]


def test_n_layer_and_num_layers_spellings() -> None:
    # No corpus config spells the layer count this way: rename the key of a real config (Qwen2.5-7B).
    base = _cfg("Qwen--Qwen2.5-7B")
    n = base["num_hidden_layers"]
    for key in ("n_layer", "num_layers"):
        cfg = {k: v for k, v in base.items() if k != "num_hidden_layers"}
        cfg[key] = n
        spec = parse_config(cfg, model_id="renamed", source="test")
        assert spec.num_layers == n and len(spec.layers) == n


def test_attention_head_dim_wins_for_nemotron_h() -> None:
    cfg = _cfg("nvidia--Nemotron-H-56B-Base-8K")
    assert cfg["attention_head_dim"] == 128
    spec = parse_config({**cfg, "attention_head_dim": 96}, model_id="nh", source="test")
    attn = [ly for ly in spec.layers if ly.kind == "full"]
    assert attn and all(ly.head_size == 96 for ly in attn)  # not hidden/heads = 8192/64 = 128


def test_layer_types_and_sliding_window_pattern() -> None:
    g3 = resolve_model("google/gemma-3-1b-it", allow_hub=False)
    assert _cfg("google--gemma-3-1b-it")["sliding_window_pattern"] == 6
    kinds = [ly.kind for ly in g3.layers]
    assert kinds[:6] == ["sliding"] * 5 + ["full"] and kinds.count("full") == len(kinds) // 6


def test_hybrid_override_pattern_counts_only_attention_layers_for_kv() -> None:
    spec = resolve_model("nvidia/Nemotron-H-56B-Base-8K", allow_hub=False)
    pattern = _cfg("nvidia--Nemotron-H-56B-Base-8K")["hybrid_override_pattern"]
    assert _kinds(spec)["full"] == pattern.count("*")
    per_full = 2 * spec.num_kv_heads * 128 * 2
    assert kv_bytes_per_token(spec, 1, "auto") == per_full * pattern.count("*")


def test_full_attention_interval() -> None:
    cfg = _cfg("Qwen--Qwen3-Next-80B-A3B-Thinking")
    spec = resolve_model("Qwen/Qwen3-Next-80B-A3B-Thinking", allow_hub=False)
    every = cfg["full_attention_interval"]
    full = [i for i, ly in enumerate(spec.layers) if ly.kind == "full"]
    assert full == list(range(every - 1, cfg["num_hidden_layers"], every))


def test_block_configs_per_layer_kv_heads_and_no_op_attention() -> None:
    cfg = _cfg("nvidia--Llama-3_3-Nemotron-Super-49B-v1")
    spec = resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1", allow_hub=False)
    for block, ly in zip(cfg["block_configs"], spec.layers, strict=True):
        att = block["attention"]
        if att.get("no_op") or att.get("replace_with_linear"):
            assert ly.kind == "none"
        else:
            assert ly.kind == "full"
            assert ly.kv_heads == cfg["num_attention_heads"] // att["n_heads_in_group"]


def test_cross_attention_layers() -> None:
    cfg = _cfg("meta-llama--Llama-3.2-11B-Vision-Instruct")
    spec = resolve_model("meta-llama/Llama-3.2-11B-Vision-Instruct", allow_hub=False)
    cross = [i for i, ly in enumerate(spec.layers) if ly.kind == "cross"]
    assert cross == sorted(cfg["text_config"]["cross_attention_layers"])


def test_num_nextn_predict_layers_is_noted_not_stacked() -> None:
    cfg = _cfg("deepseek-ai--DeepSeek-V3")
    spec = resolve_model("deepseek-ai/DeepSeek-V3", allow_hub=False)
    assert cfg["num_nextn_predict_layers"] == 1
    assert len(spec.layers) == cfg["num_hidden_layers"]  # MTP layer not in the main stack
    assert any("num_nextn_predict_layers" in n for n in spec.notes)


def test_missing_torch_dtype() -> None:
    cfg = _cfg("openai--gpt-oss-120b")
    assert "torch_dtype" not in cfg and "dtype" not in cfg
    spec = resolve_model("openai/gpt-oss-120b", allow_hub=False)
    assert spec.torch_dtype is None


def test_quantization_from_hf_quant_config_json() -> None:
    assert (DATA / "nvidia--Llama-3.1-70B-Instruct-FP8" / "hf_quant_config.json").is_file()
    assert "quantization_config" not in _cfg("nvidia--Llama-3.1-70B-Instruct-FP8")
    spec = resolve_model("nvidia/Llama-3.1-70B-Instruct-FP8", allow_hub=False)
    assert spec.quant_method == "modelopt"
    assert spec.quant_config is not None and spec.quant_config["quantization"]["quant_algo"] == "FP8"


def test_modelopt_quant_algo_beside_quant_method_in_config_json() -> None:
    """A ModelOpt export that writes its quantization into config.json (quant_method "modelopt" with quant_algo
    beside it, no hf_quant_config.json "quantization" block) is NVFP4 when quant_algo says so, as vLLM's
    ModelOptQuantConfigBase._extract_modelopt_quant_algo reads it: weights of 4 bits plus an FP8 scale per 16,
    not the 1 byte of FP8 (nvidia/Gemma-4-31B-IT-NVFP4, a real config from the catalogue)."""
    from kvlint.models.weights import param_breakdown, weight_bytes

    qc = _cfg("nvidia--Gemma-4-31B-IT-NVFP4")["quantization_config"]
    assert qc["quant_method"] == "modelopt" and qc["quant_algo"] == "NVFP4" and "quantization" not in qc
    spec = resolve_model("nvidia/Gemma-4-31B-IT-NVFP4", allow_hub=False)
    assert spec.quant_method == "modelopt_fp4"
    assert (
        "ignore" in qc
    )  # the modules it keeps in bf16 are tested in tests/test_quant_skip.py; here the rate
    no_skip = {**_cfg("nvidia--Gemma-4-31B-IT-NVFP4"), "quantization_config": {**qc, "ignore": []}}
    spec = parse_config(no_skip, model_id="x/nvfp4", source="test: the NVFP4 config without its ignore list")
    assert spec.quant_method == "modelopt_fp4"
    parts = param_breakdown(spec)
    got, source = weight_bytes(spec, dtype_bytes=2)
    assert "nvfp4" in source
    linear = sum(v for k, v in parts.items() if "linear" in k)
    assert 0 < linear < sum(parts.values())
    # 4-bit e2m1 values plus one FP8 scale per 16 of them, the rest in bfloat16 (2 B), within 1%
    want = linear * (0.5 + 1 / 16) + (sum(parts.values()) - linear) * 2
    assert abs(got - want) / want < 0.01, (got, want, parts)
    # the same config with quant_algo FP8 stays FP8 (1 B per linear weight)
    cfg = {
        **_cfg("nvidia--Gemma-4-31B-IT-NVFP4"),
        "quantization_config": {**qc, "quant_algo": "FP8", "ignore": []},
    }
    fp8 = parse_config(cfg, model_id="x/fp8", source="test: the NVFP4 config with quant_algo FP8")
    assert fp8.quant_method == "modelopt"


def test_deepseek_sparse_attention_layer_types_are_mla_layers() -> None:
    # NVIDIA's GLM-5.2/5.3 NVFP4 configs (transformers 5) list every layer as "deepseek_sparse_attention"; vLLM's
    # GlmMoeDsaForCausalLM (DeepseekV2ForCausalLM) reads no layer_types and gives each layer MLA attention, one
    # latent of kv_lora_rank + qk_rope_head_dim values per token. kvlint read the name as "no KV cache" (0 B/token).
    for d in ("nvidia--GLM-5.2-NVFP4", "nvidia--GLM-5.3-NVFP4"):
        cfg = _cfg(d)
        assert set(cfg["layer_types"]) == {"deepseek_sparse_attention"}
        spec = parse_config(cfg, model_id=d, source="test")
        assert _kinds(spec) == {"mla": cfg["num_hidden_layers"]}
        latent = cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]
        assert {ly.head_size for ly in spec.layers} == {latent}
        # bfloat16 latent (+ the DSA indexer keys)
        assert kv_bytes_per_token(spec, 1, "auto") >= cfg["num_hidden_layers"] * latent * 2
        # the same as the layer_types-less zai-org config of the same architecture
        same = parse_config(_cfg("zai-org--GLM-5.2"), model_id="zai", source="test")
        assert kv_bytes_per_token(spec, 1, "auto") == kv_bytes_per_token(same, 1, "auto")


def _kda_state_bytes_vllm(lac: dict, model_dtype_bytes: int) -> int:
    # vLLM MambaStateShapeCalculator.kda_state_shape (num_k_heads = num_heads, head_k_dim = head_dim) and
    # MambaStateDtypeCalculator.kda_state_dtype: conv (q, k, v channels) x (kernel - 1) at the model dtype,
    # recurrent num_heads x head_dim x head_dim in float32
    nh, hd, kern = lac["num_heads"], lac["head_dim"], lac["short_conv_kernel_size"]
    return (nh * hd + 2 * nh * hd) * (kern - 1) * model_dtype_bytes + nh * hd * hd * 4


def test_kimi_linear_kda_layers_hold_state_not_mla() -> None:
    # Kimi K3 (model_type kimi_linear in text_config): linear_attn_config.kda_layers (1-based, as vLLM's
    # KimiLinearConfig.is_kda_layer reads them) are KDA linear-attention layers with a per-request state; only the
    # others are MLA. kvlint made all 93 layers MLA.
    from kvlint.memory.sglang import cell_size
    from kvlint.memory.vllm import build_groups, mamba_state_bytes_per_rank

    text = _cfg("moonshotai--Kimi-K3")["text_config"]
    lac = text["linear_attn_config"]
    n = text["num_hidden_layers"]
    spec = resolve_model("moonshotai/Kimi-K3", allow_hub=False)
    kda = {i - 1 for i in lac["kda_layers"]}
    assert [i for i, ly in enumerate(spec.layers) if ly.kind == "mamba"] == sorted(kda)
    assert all(ly.kind == "mla" for i, ly in enumerate(spec.layers) if i not in kda)
    n_mla = n - len(kda)
    assert n_mla == len(lac["full_attn_layers"])
    state = _kda_state_bytes_vllm(lac, 2)
    assert {ly.state_bytes for ly in spec.layers if ly.kind == "mamba"} == {state}
    latent = text["kv_lora_rank"] + text["qk_rope_head_dim"]
    assert kv_bytes_per_token(spec, 1, "auto") == n_mla * latent * 2
    # vLLM at TP 8: the attention block grows until its page covers one rank's KDA state page (align 16)
    groups, _, bs, _ = build_groups(list(spec.layers), 8, 2, "auto", 16, True)
    page = mamba_state_bytes_per_rank(state, 8)
    assert bs == 16 * -(-page // (16 * latent * 2)) and bs * latent * 2 >= page
    # SGLang's MLA pool holds the full-attention layers only
    assert cell_size(spec, 8, 2)[0] == n_mla * latent * 2


def test_kimi_linear_kda_sizes_out_of_range_are_refused() -> None:
    import pytest

    cfg = _cfg("moonshotai--Kimi-K3")
    for key, bad in (("num_heads", -96), ("head_dim", 0), ("short_conv_kernel_size", "4")):
        text = {
            **cfg["text_config"],
            "linear_attn_config": {**cfg["text_config"]["linear_attn_config"], key: bad},
        }
        with pytest.raises(ValueError, match=f"linear_attn_config.{key}"):
            parse_config({**cfg, "text_config": text}, model_id="k3", source="test")


def _dsa_indexer_owners_vllm(cfg: dict) -> list[int]:
    # vLLM DeepseekV2MLAAttention: a layer builds an Indexer (and its DeepseekV32IndexerCache) unless it skips top-k:
    # index_topk_pattern[layer] == "S", else max(layer - index_skip_topk_offset + 1, 0) % index_topk_freq != 0
    # (defaults offset 2, freq 1)
    n = cfg["num_hidden_layers"]
    pattern = cfg.get("index_topk_pattern")
    if pattern is not None:
        return [i for i in range(n) if pattern[i] != "S"]
    freq, off = cfg.get("index_topk_freq", 1), cfg.get("index_skip_topk_offset", 2)
    return [i for i in range(n) if max(i - off + 1, 0) % freq == 0]


def test_dsa_indexer_key_cache_is_counted_beside_the_mla_latent() -> None:
    # DeepSeek V3.2 / GLM-5 (DSA): vLLM registers, beside each indexer layer's MLA latent, a DeepseekV32IndexerCache
    # MLAAttentionSpec of index_head_dim + index_head_dim // 128 * 4 uint8 bytes per token (fp8 keys + fp32
    # scales), in the same UniformTypeKVCacheSpecs group; SGLang adds the same bytes on every layer. kvlint counted
    # the latent only.
    from kvlint.memory.sglang import cell_size
    from kvlint.memory.vllm import build_groups

    for d in ("deepseek-ai--DeepSeek-V3.2", "zai-org--GLM-5", "zai-org--GLM-5.2"):
        cfg = _cfg(d)
        spec = parse_config(cfg, model_id=d, source="test")
        n = cfg["num_hidden_layers"]
        latent = cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]
        idx = cfg["index_head_dim"] + cfg["index_head_dim"] // 128 * 4
        owners = _dsa_indexer_owners_vllm(cfg)
        if "indexer_types" in cfg:  # GLM-5.2: vLLM's rule gives the config's own "full" layers
            assert (
                owners == [i for i, t in enumerate(cfg["indexer_types"]) if t == "full"] and len(owners) < n
            )
        else:
            assert owners == list(range(n))
        assert [i for i, ly in enumerate(spec.layers) if ly.index_head_dim] == owners
        assert kv_bytes_per_token(spec, 1, "auto") == n * latent * 2 + len(owners) * idx
        assert kv_bytes_per_token(spec, 1, "fp8_ds_mla") == n * 656 + len(owners) * idx
        _, per_block, bs, _ = build_groups(list(spec.layers), 8, 2, "auto", 64, True)
        assert per_block == (n * latent * 2 + len(owners) * idx) * bs
        assert cell_size(spec, 8, 2)[0] == n * (latent * 2 + idx)
    # MLA models without DSA keep the latent alone
    v3 = parse_config(_cfg("deepseek-ai--DeepSeek-V3"), model_id="v3", source="test")
    assert kv_bytes_per_token(v3, 1, "auto") == 61 * 576 * 2


def test_mimo_v2_flash_hybrid_layer_pattern() -> None:
    # vLLM MiMoV2FlashDecoderLayer: hybrid_layer_pattern[i] == 1 -> sliding window sliding_window_size with
    # swa_num_key_value_heads heads of K swa_head_dim / V swa_v_head_dim; else full attention with num_key_value_heads
    # heads of K head_dim / V v_head_dim. kvlint made every layer a sliding layer of 4 heads x 192/192.
    from kvlint.memory.sglang import cell_size

    cfg = _cfg("XiaomiMiMo--MiMo-V2-Flash")
    spec = parse_config(cfg, model_id="mimo", source="test")
    pat = cfg["hybrid_layer_pattern"]
    assert [ly.kind for ly in spec.layers] == ["sliding" if p == 1 else "full" for p in pat]
    full = cfg["num_key_value_heads"] * (cfg["head_dim"] + cfg["v_head_dim"]) * 2
    swa = cfg["swa_num_key_value_heads"] * (cfg["swa_head_dim"] + cfg["swa_v_head_dim"]) * 2
    n_swa = sum(pat)
    assert kv_bytes_per_token(spec, 1, "auto") == (len(pat) - n_swa) * full + n_swa * swa
    assert {ly.window for ly in spec.layers if ly.kind == "sliding"} == {cfg["sliding_window_size"]}
    # TP 8: one KV head per rank on the full layers (4 // 8 -> 1, replicated), 1 on the sliding ones
    tp8 = (len(pat) - n_swa) * 1 * (cfg["head_dim"] + cfg["v_head_dim"]) * 2 + n_swa * 1 * (
        cfg["swa_head_dim"] + cfg["swa_v_head_dim"]
    ) * 2
    assert kv_bytes_per_token(spec, 8, "auto") == tp8
    assert cell_size(spec, 1, 2)[0] == (len(pat) - n_swa) * full + int(n_swa * swa * 0.8)


def test_falcon_h1_layers_keep_kv_and_mamba_state() -> None:
    # Falcon-H1 runs attention and a Mamba-2 mixer in parallel in every layer (vLLM FalconH1ParallelHybrid), so each
    # layer keeps a KV cache and a Mamba-2 state. kvlint read it as plain full attention (no state). No verbatim
    # Falcon-H1 config.json was found; the sizes are Falcon-H1 7B's row of transformers' FalconH1Config table
    # (docs/source/en/model_doc/falcon_h1.md, v5.0.0rc1: 44 layers, dim 3072, 12 heads, 2 KV, 24 Mamba heads of
    # 128, d_state 256), with mamba_d_ssm = 24 x 128 and the class defaults for conv and groups.
    from kvlint.memory.vllm import build_groups

    cfg = {
        "architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1",
        "torch_dtype": "bfloat16",
        "num_hidden_layers": 44,
        "hidden_size": 3072,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "intermediate_size": 12288,
        "vocab_size": 130049,
        "max_position_embeddings": 262144,
        "mamba_d_ssm": 3072,
        "mamba_n_heads": 24,
        "mamba_d_head": 128,
        "mamba_d_state": 256,
        "mamba_n_groups": 1,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
    }
    spec = parse_config(cfg, model_id="falcon-h1-7b", source="test")
    n = cfg["num_hidden_layers"]
    # vLLM mamba2_state_shape: conv (d_ssm + 2 x groups x d_state) x (d_conv - 1), ssm heads x d_head x d_state
    conv = (cfg["mamba_d_ssm"] + 2 * cfg["mamba_n_groups"] * cfg["mamba_d_state"]) * (cfg["mamba_d_conv"] - 1)
    ssm = cfg["mamba_n_heads"] * cfg["mamba_d_head"] * cfg["mamba_d_state"]
    state = (conv + ssm) * 2
    assert [(ly.kind, ly.state_bytes) for ly in spec.layers] == [("full", state)] * n
    attn_tok = n * cfg["num_key_value_heads"] * cfg["head_dim"] * 2 * 2
    assert kv_bytes_per_token(spec, 1, "auto") == attn_tok
    groups, _, bs, _ = build_groups(list(spec.layers), 1, 2, "auto", 16, True)
    assert sorted(g.kind for g in groups) == ["full", "mamba"]
    per_layer_tok = cfg["num_key_value_heads"] * cfg["head_dim"] * 2 * 2
    assert bs == 16 * -(-state // (16 * per_layer_tok))
    # the parallel Mamba mixer's weights are counted too
    plain = parse_config({**cfg, "model_type": "llama"}, model_id="as-llama", source="test")
    assert spec.param_count > plain.param_count + n * cfg["hidden_size"] * 3 * cfg["mamba_d_ssm"]


def _gdn_state_bytes_vllm(text: dict, conv_bytes: int, ssm_bytes: int) -> int:
    # vLLM gated_delta_net_state_shape: conv (2 x k_heads x k_dim + v_heads x v_dim) x (kernel - 1), recurrent
    # v_heads x k_dim x v_dim; gated_delta_net_state_dtype: conv at the model dtype, recurrent at mamba_ssm_cache_dtype
    conv = (2 * text["linear_num_key_heads"] * text["linear_key_head_dim"]) + (
        text["linear_num_value_heads"] * text["linear_value_head_dim"]
    )
    conv *= text["linear_conv_kernel_dim"] - 1
    rec = text["linear_num_value_heads"] * text["linear_key_head_dim"] * text["linear_value_head_dim"]
    return conv * conv_bytes + rec * ssm_bytes


def test_qwen3_5_recurrent_state_takes_mamba_ssm_dtype() -> None:
    # vLLM's Qwen3_5ForConditionalGenerationConfig hook sets --mamba-ssm-cache-dtype auto to the text config's
    # mamba_ssm_dtype (float32 in the Qwen3.5 / 3.6 releases): the GDN recurrent state is float32, the conv state
    # bf16. kvlint kept both at the model dtype (half the recurrent state).
    for d in ("Qwen--Qwen3.5-27B", "Qwen--Qwen3.6-35B-A3B", "Qwen--Qwen3.5-397B-A17B"):
        cfg = _cfg(d)
        text = cfg["text_config"]
        assert text["mamba_ssm_dtype"] == "float32" and text["dtype"] == "bfloat16"
        assert cfg["architectures"][0] in (
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
        )
        spec = parse_config(cfg, model_id=d, source="test")
        states = {ly.state_bytes for ly in spec.layers if ly.kind == "mamba"}
        assert states == {_gdn_state_bytes_vllm(text, 2, 4)}
    # the text-only Qwen3.8 checkpoint (Qwen3_5MoeForCausalLM) takes the same hook in vLLM's MODELS_CONFIG_MAP
    # (Qwen3_5ForCausalLMConfig calls Qwen3_5ForConditionalGenerationConfig.verify_and_update_config); kvlint
    # kept its recurrent state at bf16
    for d in ("Qwen--Qwen3.8-2.4T-A95B", "Qwen--Qwen3.8-2.4T-A95B-FP8"):
        cfg = _cfg(d)
        text = cfg.get("text_config", cfg)
        assert cfg["architectures"] == ["Qwen3_5MoeForCausalLM"] and text["mamba_ssm_dtype"] == "float32"
        spec = parse_config(cfg, model_id=d, source="test")
        states = {ly.state_bytes for ly in spec.layers if ly.kind == "mamba"}
        assert states == {_gdn_state_bytes_vllm(text, 2, 4)}, d
    # Qwen3-Next has no such hook (nor key): both states at the model dtype
    nxt = _cfg("Qwen--Qwen3-Next-80B-A3B-Thinking")
    spec = parse_config(nxt, model_id="next", source="test")
    assert {ly.state_bytes for ly in spec.layers if ly.kind == "mamba"} == {_gdn_state_bytes_vllm(nxt, 2, 2)}


def test_minimax_m1_lightning_layers_keep_state_not_kv() -> None:
    # vLLM's MiniMaxText01Model reads attn_type_list: 0 = lightning (linear) attention, which keeps no KV cache but a
    # (num_attention_heads, head_dim, head_dim) state per request at the model dtype (linear_attention_state_shape /
    # linear_attention_state_dtype); 1 = full attention with num_key_value_heads x head_dim KV. kvlint sized every
    # layer as full attention.
    cfg = json.loads((FIXTURES / "linear" / "MiniMaxAI--MiniMax-M1-80k" / "config.json").read_text())
    spec = parse_config(cfg, model_id="MiniMaxAI/MiniMax-M1-80k", source="test")
    types = cfg["attn_type_list"]
    assert len(spec.layers) == cfg["num_hidden_layers"] == len(types)
    model_bytes = 2  # no torch_dtype in this config: kvlint's bf16 fallback, as its other configs
    state = cfg["num_attention_heads"] * cfg["head_dim"] * cfg["head_dim"] * model_bytes
    for t, ly in zip(types, spec.layers, strict=True):
        if t == 0:
            assert (ly.kind, ly.state_bytes) == ("mamba", state)
        else:
            assert (ly.kind, ly.kv_heads, ly.head_size) == (
                "full",
                cfg["num_key_value_heads"],
                cfg["head_dim"],
            )
    full = sum(1 for t in types if t == 1)
    assert kv_bytes_per_token(spec, 1, "auto") == full * 2 * cfg["num_key_value_heads"] * cfg["head_dim"] * 2
    # the HF port's layer_types spelling gives the same layers; an entry vLLM cannot build is refused
    alt = {k: v for k, v in cfg.items() if k != "attn_type_list"}
    alt["layer_types"] = ["linear_attention" if t == 0 else "full_attention" for t in types]
    assert parse_config(alt, model_id="alt", source="test").layers == spec.layers
    with pytest.raises(ValueError, match="attn_type_list"):
        parse_config({**cfg, "attn_type_list": types[:-1] + [2]}, model_id="bad", source="test")
