"""Minimal stand-ins for kvlint.models used by the planner's tests and benchmark (and as a runtime
fallback when ``kvlint.models.weights`` is unavailable).

``spec_from_config`` reads the KV-relevant facts of a HF ``config.json`` (text_config for VLMs; head size from
``head_dim`` first; kv-heads aliases; MLA; sliding-window patterns from ``layer_types``/Gemma-2 alternation/
``sliding_window_pattern``; Mamba hybrids from ``hybrid_override_pattern``/``layer_types``) following
engine-memory-model.md §1.3. ``estimate_weight_bytes`` is the §1.13 parameter-count formula times bytes per
quantization method. The real implementations live in kvlint/models (owned elsewhere); these are deliberately
small.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kvlint.types import LayerSpec, ModelSpec

_MLA_TYPES = {
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "deepseek_v4",
    "kimi_k2",
    "kimi_linear",
    "glm4_moe_lite",
}


def _first(d: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return default


def spec_from_config(config: dict[str, Any], model_id: str = "", source: str = "") -> ModelSpec:
    """A :class:`ModelSpec` from a parsed config.json dict. Raises ValueError when it has no layer count."""
    tc = config.get("text_config") if isinstance(config.get("text_config"), dict) else None
    c = dict(tc) if tc else config
    model_type = str(c.get("model_type") or config.get("model_type") or "")
    n_layers = _first(c, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    if not isinstance(n_layers, int):
        raise ValueError(f"{model_id or 'config'}: no num_hidden_layers")
    heads = int(_first(c, "num_attention_heads", "n_head", default=0) or 0)
    kv = int(
        _first(c, "n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", default=heads)
        or heads
    )
    hidden = int(_first(c, "hidden_size", "n_embd", "d_model", default=0) or 0)
    head = c.get("head_dim") or (hidden // heads if heads else 0)
    is_mla = model_type in _MLA_TYPES and c.get("kv_lora_rank") is not None
    if is_mla:
        head = int(c["kv_lora_rank"]) + int(c.get("qk_rope_head_dim") or 0)
    window = c.get("sliding_window") if isinstance(c.get("sliding_window"), int) else None
    kinds: list[str] = ["full"] * n_layers
    lt = c.get("layer_types")
    pattern = c.get("hybrid_override_pattern")
    if isinstance(lt, list) and len(lt) == n_layers:
        m = {
            "sliding_attention": "sliding",
            "full_attention": "full",
            "linear_attention": "mamba",
            "mamba": "mamba",
        }
        kinds = [m.get(str(x), "full") for x in lt]
    elif isinstance(pattern, str) and len(pattern) == n_layers:
        kinds = ["full" if ch == "*" else ("mamba" if ch == "M" else "none") for ch in pattern]
    elif model_type == "gemma2" and window:
        kinds = ["sliding" if i % 2 == 0 else "full" for i in range(n_layers)]
    elif model_type.startswith("gemma3") and window:
        p = int(c.get("sliding_window_pattern") or 6)
        kinds = ["full" if (i + 1) % p == 0 else "sliding" for i in range(n_layers)]
    elif model_type == "qwen3_next":
        iv = int(c.get("full_attention_interval") or 4)
        kinds = ["full" if (i + 1) % iv == 0 else "mamba" for i in range(n_layers)]
    elif window and model_type in ("mistral",) and c.get("use_sliding_window", True):
        kinds = ["sliding"] * n_layers
    layers: list[LayerSpec] = []
    bc = c.get("block_configs")
    for i, kind in enumerate(kinds):
        if is_mla:
            layers.append(LayerSpec("mla", kv_heads=1, head_size=head, head_size_v=0))
        elif isinstance(bc, list) and i < len(bc):
            att = bc[i].get("attention", {}) if isinstance(bc[i], dict) else {}
            if att.get("no_op") or att.get("replace_with_linear"):
                layers.append(LayerSpec("none"))
            else:
                nkv = heads // int(att.get("n_heads_in_group") or 1)
                layers.append(LayerSpec("full", kv_heads=nkv, head_size=head, head_size_v=head))
        elif kind == "mamba":
            layers.append(LayerSpec("mamba", state_bytes=_mamba_state_bytes(c)))
        elif kind == "none":
            layers.append(LayerSpec("none"))
        else:
            layers.append(
                LayerSpec(
                    kind,
                    kv_heads=kv,
                    head_size=head,
                    head_size_v=head,
                    window=window if kind == "sliding" else None,
                )
            )
    qc = config.get("quantization_config") if isinstance(config.get("quantization_config"), dict) else None
    max_pos = _first(c, "max_position_embeddings", "n_positions", "max_seq_len", "seq_length")
    return ModelSpec(
        id=model_id,
        source=source,
        config=config,
        model_type=model_type,
        architectures=tuple(config.get("architectures") or ()),
        num_layers=n_layers,
        num_attention_heads=heads,
        num_kv_heads=kv,
        head_size=int(head),
        hidden_size=hidden,
        intermediate_size=int(
            _first(c, "intermediate_size", "ffn_hidden_size", default=4 * hidden) or 4 * hidden
        ),
        vocab_size=int(_first(c, "vocab_size", "padded_vocab_size", default=32000)),
        layers=tuple(layers),
        max_position_embeddings=max_pos if isinstance(max_pos, int) else None,
        max_len_key="max_position_embeddings" if isinstance(max_pos, int) else None,
        rope_scaling=c.get("rope_scaling"),
        torch_dtype=_first(c, "torch_dtype", "dtype") or _first(config, "torch_dtype", "dtype"),
        quant_method=(qc or {}).get("quant_method"),
        quant_config=qc,
        tie_word_embeddings=bool(
            _first(c, "tie_word_embeddings", default=config.get("tie_word_embeddings", False))
        ),
        is_mla=is_mla,
        num_experts=int(_first(c, "num_local_experts", "n_routed_experts", "num_experts", default=0) or 0),
        moe_intermediate_size=int(_first(c, "moe_intermediate_size", default=0) or 0),
        sliding_window=window,
        text_config=dict(tc) if tc else {},
    )


def _mamba_state_bytes(c: dict[str, Any]) -> int:
    """Rough Mamba2/GDN state bytes per request (conv + ssm state, fp32 ssm) [heuristic]."""
    heads = int(c.get("mamba_num_heads") or c.get("linear_num_value_heads") or 64)
    hd = int(c.get("mamba_head_dim") or c.get("linear_value_head_dim") or 64)
    st = int(c.get("ssm_state_size") or c.get("linear_key_head_dim") or 128)
    return heads * hd * st * 4 + 4 * heads * hd * 2


def load_spec(model_dir: str | Path) -> ModelSpec:
    """:func:`spec_from_config` on ``<model_dir>/config.json`` (id = ``org--name`` -> ``org/name``)."""
    p = Path(model_dir)
    cfg = json.loads((p / "config.json").read_text())
    return spec_from_config(cfg, model_id=p.name.replace("--", "/", 1), source=str(p / "config.json"))


def param_breakdown(spec: ModelSpec) -> tuple[int, int, int, int]:
    """``(embedding, lm_head, per_layer_dense, per_layer_experts)`` parameter counts (elements) by the §1.13
    formula: embed V*h, lm_head V*h unless tied, per layer attention h*(H*d) + 2*h*(K*d) + (H*d)*h, MLP 3*h*I
    (or MoE E*3*h*I_moe + router h*E), norms 2h. MLA attention approximated as dense GQA [heuristic]."""
    c = spec.text_config or spec.config
    h, v = spec.hidden_size, spec.vocab_size
    hh, kk, d = spec.num_attention_heads, spec.num_kv_heads, spec.head_size
    if spec.is_mla:
        d = int(c.get("qk_nope_head_dim") or 128) + int(c.get("qk_rope_head_dim") or 64)
        kk = hh
    embed = v * h
    lm = 0 if spec.tie_word_embeddings else v * h
    attn = h * hh * d + 2 * h * kk * d + hh * d * h
    experts = 0
    if spec.num_experts and spec.moe_intermediate_size:
        experts = spec.num_experts * 3 * h * spec.moe_intermediate_size
        shared = int(c.get("n_shared_experts") or 0) * 3 * h * spec.moe_intermediate_size
        mlp = shared + h * spec.num_experts
    elif spec.num_experts:
        experts = spec.num_experts * 3 * h * spec.intermediate_size
        mlp = h * spec.num_experts
    else:
        mlp = 3 * h * spec.intermediate_size
    return embed, lm, attn + mlp + 2 * h, experts


_QUANT_BYTES = {
    "fp8": 1.0,
    "fbgemm_fp8": 1.0,
    "compressed-tensors": 1.0,
    "modelopt": 1.0,
    "experts_int8": 1.0,
    "awq": 0.52,
    "awq_marlin": 0.52,
    "gptq": 0.52,
    "gptq_marlin": 0.52,
    "auto_round": 0.52,
    "bitsandbytes": 0.56,
    "mxfp4": 0.53,
    "modelopt_fp4": 0.56,
}


def linear_bytes_per_param(spec: ModelSpec, dtype_bytes: int, quantization: str | None) -> tuple[float, str]:
    """Bytes per parameter of the linear (layer) weights under a quantization method (§1.13 table); embeddings
    and lm_head stay at ``dtype_bytes``. compressed-tensors reads ``config_groups`` weight bits when present."""
    q = (quantization or spec.quant_method or "").lower()
    if not q:
        return float(dtype_bytes), f"{dtype_bytes} B/param"
    if q == "compressed-tensors" and spec.quant_config:
        for g in (spec.quant_config.get("config_groups") or {}).values():
            bits = ((g or {}).get("weights") or {}).get("num_bits")
            if isinstance(bits, int):
                return (bits / 8 + (0.02 if bits < 8 else 0.0)), f"compressed-tensors {bits}-bit"
    if q in ("gptq", "gptq_marlin") and spec.quant_config and spec.quant_config.get("bits") == 8:
        return 1.02, "gptq 8-bit"
    return _QUANT_BYTES.get(q, float(dtype_bytes)), f"{q} ~{_QUANT_BYTES.get(q, dtype_bytes)} B/param"


def estimate_weight_bytes(
    spec: ModelSpec, dtype_bytes: int = 2, quantization: str | None = None
) -> tuple[int, str]:
    """Whole-model weight bytes (all ranks) and a source sentence: the checkpoint size when the spec has it,
    else parameter count x bytes per method (linear layers quantized, embeddings at ``dtype_bytes``)."""
    if spec.weight_bytes and not quantization:
        return spec.weight_bytes, spec.weight_bytes_source or "checkpoint size"
    embed, lm, per_layer, experts = param_breakdown(spec)
    lb, why = linear_bytes_per_param(spec, dtype_bytes, quantization)
    n_att = spec.num_layers
    total = (embed + lm) * dtype_bytes + n_att * (per_layer + experts) * lb
    return int(total), f"estimated from config.json parameter count ({why})"
