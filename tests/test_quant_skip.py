"""Quantized checkpoints that keep some modules at the model dtype (docs/engine-memory-model.md §1.13).

The expected figures are derived here from the configs' own shapes (h, H, K, d, intermediate size, MLA ranks), independently
of kvlint's module naming: the bytes a skip list saves or costs are the listed modules' elements times the
difference between the dtype's bytes and the method's rate.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kvlint.models import parse_config
from kvlint.models.weights import linear_bytes_per_param, skipped_params, weight_bytes
from kvlint.types import ModelSpec

DATA = Path(__file__).resolve().parent.parent / "kvlint" / "data" / "models"

# A small Llama-shaped config (made-up sizes for the test, not a real checkpoint).
L, h, H, K, INTER, V = 4, 256, 8, 2, 704, 1000
d = h // H
ATTN = h * H * d + 2 * h * K * d + H * d * h  # q, k, v, o of one layer
MLP = 3 * h * INTER  # gate, up, down of one layer


def _llama(qc: dict | None) -> ModelSpec:
    cfg = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "num_hidden_layers": L,
        "hidden_size": h,
        "num_attention_heads": H,
        "num_key_value_heads": K,
        "intermediate_size": INTER,
        "vocab_size": V,
        "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16",
    }
    if qc is not None:
        cfg["quantization_config"] = qc
    return parse_config(cfg, model_id="test/llama-small", source="test")


def _names(layers: range, block: str, leaves: tuple[str, ...]) -> list[str]:
    return [f"model.layers.{i}.{block}.{p}" for i in layers for p in leaves]


ATTN_LEAVES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_LEAVES = ("gate_proj", "up_proj", "down_proj")


def test_fbgemm_fp8_modules_to_not_convert_keeps_attention_and_edge_mlps():
    """Meta's FP8 405B layout (Llama 3 paper §6.2): every attention projection and the first and last blocks'
    MLPs stay bf16. Each kept element costs 2 B instead of 1 B."""
    keep = _names(range(L), "self_attn", ATTN_LEAVES) + _names((0, L - 1), "mlp", MLP_LEAVES) + ["lm_head"]
    plain = _llama({"quant_method": "fbgemm_fp8", "modules_to_not_convert": []})
    listed = _llama({"quant_method": "fbgemm_fp8", "modules_to_not_convert": keep})
    kept = L * ATTN + 2 * MLP
    assert skipped_params(listed, "fbgemm_fp8", listed.quant_config)[:2] == (kept, 0)
    a, _ = weight_bytes(plain, dtype_bytes=2)
    b, src = weight_bytes(listed, dtype_bytes=2)
    assert b - a == kept * (2 - 1)
    assert "left unquantized by modules_to_not_convert" in src


def test_fp8_matches_exact_names_only():
    """vLLM's is_layer_skipped compares whole prefixes: "gate" (a router) does not skip gate_proj, and a
    layer's name without its projection skips nothing."""
    qc = {"quant_method": "fp8", "modules_to_not_convert": ["gate", "model.layers.0.self_attn", "lm_head"]}
    spec = _llama(qc)
    assert skipped_params(spec, "fp8", spec.quant_config) == (0, 0, "")
    # ignored_layers wins over modules_to_not_convert (Fp8Config.from_config)
    qc2 = {**qc, "ignored_layers": _names(range(1), "self_attn", ATTN_LEAVES)}
    spec2 = _llama(qc2)
    assert skipped_params(spec2, "fp8", spec2.quant_config) == (ATTN, 0, "ignored_layers")


def test_compressed_tensors_ignore_regex():
    """compressed-tensors ``ignore``: exact names, and ``re:`` entries matched with re.match."""
    qc = {
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}},
        "ignore": ["lm_head", "re:.*self_attn.*", "model.layers.2.mlp.down_proj"],
    }
    spec = _llama(qc)
    rate, _ = linear_bytes_per_param("compressed-tensors", spec.quant_config, 2)
    plain = _llama({**qc, "ignore": []})
    kept = L * ATTN + h * INTER
    assert skipped_params(spec, "compressed-tensors", spec.quant_config)[:2] == (kept, 0)
    diff = weight_bytes(spec, dtype_bytes=2)[0] - weight_bytes(plain, dtype_bytes=2)[0]
    assert abs(diff - kept * (2 - rate)) <= 1


def test_modelopt_wildcards_from_hf_quant_config():
    """ModelOpt ``exclude_modules``: ``model.layers.0*`` keeps all of layer 0 (split into ``model.layers.0`` and
    ``model.layers.0.*``), ``*self_attn*`` every attention; ``mtp*`` names no decoder layer."""
    extra = {
        "quantization": {
            "quant_algo": "NVFP4",
            "group_size": 16,
            "exclude_modules": ["lm_head", "model.layers.0*", "model.layers.3.self_attn*", "mtp*"],
        }
    }
    cfg = json.loads(json.dumps(_llama(None).config))
    spec = parse_config(cfg, model_id="test/llama-small-nvfp4", source="test", quant_config_extra=extra)
    assert spec.quant_method == "modelopt_fp4"
    assert skipped_params(spec, "modelopt_fp4", spec.quant_config)[:2] == (ATTN + MLP + ATTN, 0)
    only_mtp = {
        "quantization": {**extra["quantization"], "exclude_modules": ["lm_head", "mtp*", "mtp.layers.0*"]}
    }
    spec2 = parse_config(cfg, model_id="test/llama-small-nvfp4", source="test", quant_config_extra=only_mtp)
    assert skipped_params(spec2, "modelopt_fp4", spec2.quant_config) == (0, 0, "")


def test_online_quantization_ignores_checkpoint_list():
    """``--quantization fp8`` on an unquantized checkpoint has no checkpoint list: nothing is skipped."""
    spec = _llama(None)
    _, src = weight_bytes(spec, dtype_bytes=2, quantization="fp8")
    assert "left unquantized" not in src


def _catalogue(dirname: str) -> ModelSpec:
    d = DATA / dirname
    extra = d / "hf_quant_config.json"
    return parse_config(
        json.loads((d / "config.json").read_text()),
        model_id=dirname.replace("--", "/"),
        source="test",
        quant_config_extra=json.loads(extra.read_text()) if extra.exists() else None,
    )


def test_deepseek_v31_nvfp4_keeps_mla_projections_but_not_o_proj():
    """nvidia/DeepSeek-V3.1-NVFP4's hf_quant_config.json lists q_a/q_b/kv_a/kv_b of every layer (o_proj is
    quantized): the kept elements are those four MLA projections, from the config's ranks."""
    spec = _catalogue("nvidia--DeepSeek-V3.1-NVFP4")
    t = spec.text_config or spec.config
    q_lora, kv_lora = t["q_lora_rank"], t["kv_lora_rank"]
    nope, rope, v = t["qk_nope_head_dim"], t["qk_rope_head_dim"], t["v_head_dim"]
    hh, HH = t["hidden_size"], t["num_attention_heads"]
    per_layer = hh * q_lora + q_lora * HH * (nope + rope) + hh * (kv_lora + rope) + kv_lora * HH * (nope + v)
    lin, exp, key = skipped_params(spec, spec.quant_method or "", spec.quant_config)
    assert (lin, exp, key) == (t["num_hidden_layers"] * per_layer, 0, "exclude_modules")


@pytest.mark.parametrize(
    "dirname", ["nvidia--Qwen3.6-27B-NVFP4", "MiniMaxAI--MiniMax-M2.5", "Qwen--Qwen3-30B-A3B-FP8"]
)
def test_lists_naming_no_quantized_linear_change_nothing(dirname):
    """Lists that name only MTP layers, routers, norms and lm_head (all already at the model dtype) leave the
    estimate as it was."""
    spec = _catalogue(dirname)
    assert skipped_params(spec, spec.quant_method or "", spec.quant_config) == (0, 0, "")


def test_llama31_405b_fp8_weights_match_gt015():
    """gt-015 (vLLM 0.5.3.post1, meta-llama/Meta-Llama-3.1-405B-Instruct-FP8, TP8) printed 57.75 GB of weights per
    rank. Its config is not in the corpus; its quantization is described in the Llama 3 paper (arXiv 2407.21783,
    §6.2): FBGEMM FP8 on the feed-forward layers except those of the first and last blocks, self-attention not
    quantized. That list, applied to the bf16 config (fixtures/plan/models), lands within 3% per rank; pricing every
    linear layer at 1 B, as before, falls 17% short."""
    root = Path(__file__).resolve().parent.parent
    cfg = json.loads((root / "fixtures/plan/models/meta-llama--Llama-3.1-405B/config.json").read_text())
    cases = {c["id"]: c for c in yaml.safe_load((root / "fixtures/plan/groundtruth_cases.yaml").read_text())}
    printed = cases["gt-015"]["figures"]["weights_gib"] * 2**30
    tp = cases["gt-015"]["parallelism"]["tensor_parallel"]
    n = cfg["num_hidden_layers"]
    keep = _names(range(n), "self_attn", ATTN_LEAVES) + _names((0, n - 1), "mlp", MLP_LEAVES) + ["lm_head"]
    listed = {**cfg, "quantization_config": {"quant_method": "fbgemm_fp8", "modules_to_not_convert": keep}}
    bare = {**cfg, "quantization_config": {"quant_method": "fbgemm_fp8", "modules_to_not_convert": []}}
    got = weight_bytes(parse_config(listed, model_id="405b-fp8", source="test"), dtype_bytes=2)[0] / tp
    before = weight_bytes(parse_config(bare, model_id="405b-fp8", source="test"), dtype_bytes=2)[0] / tp
    assert abs(got - printed) / printed < 0.03, (got / 2**30, printed / 2**30)
    assert (printed - before) / printed > 0.15


def test_compressed_tensors_ignore_does_not_reach_fused_moe_but_fp8_list_does():
    """A listed routed-expert block: fp8 keeps it (is_layer_skipped's experts branch), compressed-tensors does not
    test its fused MoE against ``ignore`` (vllm@0.11.0 CompressedTensorsConfig.get_quant_method)."""
    spec = _catalogue("Qwen--Qwen3-30B-A3B-FP8")
    t = spec.text_config or spec.config
    e, hh, mi = t["num_experts"], t["hidden_size"], t["moe_intermediate_size"]
    listed = ["model.layers.0.mlp.experts.0.gate_proj", "model.layers.0.mlp.experts.0.up_proj"]
    qc = {"quant_method": "fp8", "modules_to_not_convert": listed}
    assert skipped_params(spec, "fp8", qc) == (0, e * 3 * hh * mi, "modules_to_not_convert")
    ct = {"quant_method": "compressed-tensors", "ignore": ["re:.*mlp\\.experts.*"]}
    assert skipped_params(spec, "compressed-tensors", ct) == (0, 0, "")


def test_deepseek_v4_fp4_experts_are_mxfp4_and_linears_fp8_blocks():
    """DeepSeek-V4-Flash: quant_method fp8 (128x128 blocks) with expert_dtype "fp4". vLLM loads a deepseek_v4
    fp8 checkpoint with DeepseekV4FP8Config, which hands every fused-MoE layer to Mxfp4MoEMethod when expert_dtype
    is fp4 (4-bit values + one e8m0 byte per 32: 0.5 + 1/32 B) and keeps Fp8Config for the rest (1 + 4/128^2 B);
    expert_dtype "fp8" (Flash-Base) keeps fp8 experts. Before, the routed experts were priced as FP8 (1 B)."""
    from kvlint.models.weights import param_breakdown

    cfg = json.loads((DATA / "deepseek-ai--DeepSeek-V4-Flash" / "config.json").read_text())
    assert cfg["expert_dtype"] == "fp4" and cfg["quantization_config"]["weight_block_size"] == [128, 128]
    spec = parse_config(cfg, model_id="deepseek-ai/DeepSeek-V4-Flash", source="test")
    p = param_breakdown(spec)
    # hidden 4096 and moe_intermediate 2048 are multiples of MXFP4's padding (256 / 64), so no padding at TP 1
    assert cfg["hidden_size"] % 256 == 0 and cfg["moe_intermediate_size"] % 64 == 0
    want = (
        p["linear"] * (1 + 4 / (128 * 128))
        + p["experts"] * (0.5 + 1 / 32)
        + (p["embed"] + p["other"] + p["vision"]) * 2
    )
    got, how = weight_bytes(spec, dtype_bytes=2)
    assert got == int(want) and "expert_dtype fp4" in how
    base = parse_config({**cfg, "expert_dtype": "fp8"}, model_id="flash-base-shaped", source="test")
    got8, _ = weight_bytes(base, dtype_bytes=2)
    assert got8 == int(
        (p["linear"] + p["experts"]) * (1 + 4 / (128 * 128)) + (p["embed"] + p["other"] + p["vision"]) * 2
    )
    missing = parse_config(
        {k: v for k, v in cfg.items() if k != "expert_dtype"}, model_id="no-expert-dtype", source="test"
    )
    assert weight_bytes(missing, dtype_bytes=2)[0] == got  # vLLM's default when the key is missing is "fp4"


def test_gptq_dynamic_exclusions_and_overrides():
    """GPTQModel's ``dynamic`` as vLLM reads it (gptq_utils.get_dynamic_override): rules are tried in file order
    with re.match on vLLM's layer prefix (q/k/v packed as ``qkv_proj``, gate/up as ``gate_up_proj``) and the first
    match decides: ``-:`` leaves the module unquantized, a positive rule overrides bits / group_size for it.
    Here layer 0's attention is excluded, every ``down_proj`` is 8-bit g32, and the earlier exclusion of
    layer 0 shields its attention from the later ``.*`` override (which only changes desc_act)."""
    base = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    qc = {
        **base,
        "dynamic": {
            r"-:model\.layers\.0\.self_attn\..*": {},
            r"+:.*\.down_proj": {"bits": 8, "group_size": 32},
            r".*": {"desc_act": True},
        },
    }
    spec, plain = _llama(qc), _llama(base)
    assert skipped_params(spec, "gptq", spec.quant_config) == (ATTN, 0, "dynamic")
    r4, _ = linear_bytes_per_param("gptq", base, 2)
    r8, _ = linear_bytes_per_param("gptq", {"bits": 8, "group_size": 32}, 2)
    assert r8 == 1 + 2 / 32 + 1 / 32
    down = L * h * INTER
    want = ATTN * (2 - r4) + down * (r8 - r4)
    got, src = weight_bytes(spec, dtype_bytes=2)
    assert abs((got - weight_bytes(plain, dtype_bytes=2)[0]) - want) <= 2
    assert "left unquantized by dynamic" in src and "gptq 8-bit g32" in src
    # a rule that matches nothing, or an unpackaged shard name vLLM never sees (q_proj is packed), changes nothing
    none = _llama({**base, "dynamic": {r"-:.*\.q_proj$": {}, r"-:lm_head": {}}})
    assert skipped_params(none, "gptq", none.quant_config) == (0, 0, "")
    assert weight_bytes(none, dtype_bytes=2)[0] == weight_bytes(plain, dtype_bytes=2)[0]


def test_bitsandbytes_llm_int8_skip_modules():
    """bitsandbytes ``llm_int8_skip_modules`` (vLLM is_layer_skipped_bnb): a listed name equal to a component of
    the layer prefix or to one of its leading paths keeps the module in the model dtype; unsloth's dynamic 4-bit
    builds list whole blocks this way (``model.layers.1.mlp``)."""
    base = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    spec = _llama({**base, "llm_int8_skip_modules": ["lm_head", "model.layers.1.mlp", "o_proj"]})
    plain = _llama(base)
    kept = MLP + L * (H * d * h)  # layer 1's MLP and every o_proj
    assert skipped_params(spec, "bitsandbytes", spec.quant_config) == (kept, 0, "llm_int8_skip_modules")
    rate, _ = linear_bytes_per_param("bitsandbytes", spec.quant_config, 2)
    diff = weight_bytes(spec, dtype_bytes=2)[0] - weight_bytes(plain, dtype_bytes=2)[0]
    assert abs(diff - kept * (2 - rate)) <= 1
    # "mlp" alone is a component of every MLP prefix; "layers.1.mlp" is neither a component nor a leading path
    every = _llama({**base, "llm_int8_skip_modules": ["mlp"]})
    assert skipped_params(every, "bitsandbytes", every.quant_config)[:2] == (L * MLP, 0)
    partial = _llama({**base, "llm_int8_skip_modules": ["layers.1.mlp"]})
    assert skipped_params(partial, "bitsandbytes", partial.quant_config) == (0, 0, "")


def test_gptq_dynamic_with_unbounded_backtracking_is_not_read():
    """A config.json is pull-request input (a local model path, --model-dir): a ``dynamic`` pattern with a
    repeat inside a repeat (``(.*)*Z``) backtracks 2^33 times on ``model.layers.0.self_attn.qkv_proj`` before it
    fails. kvlint does not match such a rule (nor, since the first match decides, the others): the modules keep
    the checkpoint's bits, and the weights line says why. Run in a child process: before, it never returned."""
    import subprocess
    import sys

    here = str(Path(__file__).resolve().parent)
    code = f"import sys; sys.path.insert(0, {here!r}); from test_quant_skip import _llama, ATTN\n" + (
        "from kvlint.models.weights import weight_bytes, skipped_params\n"
        "base = {'quant_method': 'gptq', 'bits': 4, 'group_size': 128}\n"
        "for pat in [r'-:(.*)*Z', r'-:(.|.)*Z', r'-:(\\w+\\.?)+Z', r'-:(a)\\1']:\n"
        "    spec = _llama({**base, 'dynamic': {r'-:model\\.layers\\.0\\.self_attn\\..*': {}, pat: {}}})\n"
        "    got, src = weight_bytes(spec, dtype_bytes=2)\n"
        "    assert got == weight_bytes(_llama(base), dtype_bytes=2)[0], pat\n"
        "    assert 'GPTQ dynamic not read' in src and 'no bound' in src, src\n"
        "    assert skipped_params(spec, 'gptq', spec.quant_config) == (0, 0, '')\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_gptq_dynamic_rule_count_and_matching_budget():
    """At most MAX_GPTQ_RULES rules are read (a 4 MiB config.json can hold 400,000; before, 5,000 rules took
    98 s on Llama-3.1-70B, each re.match compiling its pattern again past re's cache): 1,024 rules ending with
    an exclusion are read, 1,025 are not. Rules whose repeats would backtrack beyond the matching budget (here
    many rules of eight ``.*``) are not read either."""
    MAX_GPTQ_RULES = 1024  # kvlint.models.weights.MAX_GPTQ_RULES
    base = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    plain = weight_bytes(_llama(base), dtype_bytes=2)[0]
    filler = {f"-:nomatch{i}\\.x": {} for i in range(MAX_GPTQ_RULES - 1)}
    read = _llama({**base, "dynamic": {**filler, r"-:model\.layers\.0\.self_attn\..*": {}}})
    assert skipped_params(read, "gptq", read.quant_config) == (ATTN, 0, "dynamic")
    over = _llama({**base, "dynamic": {**filler, "-:extra": {}, r"-:model\.layers\.0\.self_attn\..*": {}}})
    got, src = weight_bytes(over, dtype_bytes=2)
    assert got == plain and f"{MAX_GPTQ_RULES + 1:,} rules" in src
    assert skipped_params(over, "gptq", over.quant_config) == (0, 0, "")
    stars = {f"-:{'.*' * 8}Z{i}": {} for i in range(50)}
    slow = _llama({**base, "dynamic": {**stars, r"-:model\.layers\.0\.self_attn\..*": {}}})
    got, src = weight_bytes(slow, dtype_bytes=2)
    assert got == plain and "matching budget" in src
    # a pattern over the length cap is not read
    long = _llama({**base, "dynamic": {"-:" + "a" * 1001: {}, r"-:model\.layers\.0\.self_attn\..*": {}}})
    assert "1,001 characters" in weight_bytes(long, dtype_bytes=2)[1]


def test_bitsandbytes_long_skip_list_prices_as_its_matching_entries():
    """llm_int8_skip_modules is read as a set: 200,000 names that match nothing plus ``o_proj`` keep exactly the
    o_proj modules, as the one-entry list does (before, each module name scanned the whole list: 100,000 entries
    took 4 s on Llama-3.1-70B)."""
    base = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
    long = _llama({**base, "llm_int8_skip_modules": [f"nomatch{i}" for i in range(200_000)] + ["o_proj"]})
    short = _llama({**base, "llm_int8_skip_modules": ["o_proj"]})
    assert skipped_params(long, "bitsandbytes", long.quant_config) == (
        L * H * d * h,
        0,
        "llm_int8_skip_modules",
    )
    assert weight_bytes(long, dtype_bytes=2) == weight_bytes(short, dtype_bytes=2)


def test_gptq_bits_vllm_does_not_load_are_priced_as_4_bit():
    """GPTQ widths other than 2/3/4/8 (vLLM's GPTQConfig refuses them) in the checkpoint or in a ``dynamic``
    override: before, ``bits: -8`` priced the weights negative, ``bits: 0`` nearly free, and a 400-digit
    ``bits`` or ``group_size`` raised OverflowError. Now each is priced as 4-bit and the label says so."""
    base = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    plain = weight_bytes(_llama(base), dtype_bytes=2)[0]
    for bits in (-8, 0, 10**400, 16):
        got, src = weight_bytes(_llama({**base, "bits": bits}), dtype_bytes=2)
        assert got == plain and "no width vLLM loads; 4 assumed" in src, bits
        over = _llama({**base, "dynamic": {"+:.*": {"bits": bits}}})
        assert weight_bytes(over, dtype_bytes=2)[0] == plain, bits
    huge_group = weight_bytes(_llama({**base, "group_size": 10**400}), dtype_bytes=2)
    assert huge_group == weight_bytes(_llama({**base, "group_size": -1}), dtype_bytes=2)
