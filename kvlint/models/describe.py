"""Human-readable architecture facts of a :class:`~kvlint.types.ModelSpec` (``kvlint models show ID``)."""

from __future__ import annotations

from kvlint.types import LayerSpec, ModelSpec

__all__ = ["describe"]


def _layer_label(ly: LayerSpec) -> str:
    if ly.kind == "mla":
        if ly.index_head_dim:
            return f"mla (latent {ly.head_size}, DSA indexer key {ly.index_head_dim})"
        return f"mla (latent {ly.head_size})"
    if ly.kind == "mamba":
        return f"mamba (state {ly.state_bytes:,} B/request)"
    if ly.kind == "none":
        return "none (no KV cache)"
    heads = f"{ly.kv_heads} kv heads x {ly.head_size}" + (
        f"/{ly.head_size_v}" if ly.head_size_v and ly.head_size_v != ly.head_size else ""
    )
    window = f", window {ly.window}" if ly.window else ""
    shared = ", KV shared with an earlier layer" if ly.kv_shared else ""
    state = f", + mamba state {ly.state_bytes:,} B/request" if ly.state_bytes else ""
    return f"{ly.kind} ({heads}{window}{shared}{state})"


def _runs(spec: ModelSpec) -> str:
    """Layer kinds as counts in first-seen order: ``sliding (8 kv heads x 128, window 4096) x26, full ... x8``."""
    counts: dict[str, int] = {}
    for ly in spec.layers:
        label = _layer_label(ly)
        counts[label] = counts.get(label, 0) + 1
    return "; ".join(f"{k} x{v}" for k, v in counts.items())


def describe(spec: ModelSpec) -> list[tuple[str, str]]:
    """Rows ``(name, value)`` of the architecture facts kvlint uses, for ``kvlint models show``.

    Includes the layer count and per-kind layer types (full / sliding with window / chunked / mla /
    mamba / cross / none, with KV heads and head sizes), attention and KV heads, head size, hidden and
    vocab sizes, context length (and the config key it came from), dtype, quantization, MoE experts,
    KV-cache bytes per token at TP 1 for ``--kv-cache-dtype auto`` (the model dtype) and ``fp8`` (vLLM's per-layer page sizes:
    :func:`kvlint.memory.kv.kv_bytes_per_token`, which restates vLLM ``AttentionSpec.page_size_bytes``),
    the parameter count and the checkpoint weight bytes with their source, and notes. Values are
    strings; bytes are exact integers with thousands separators. Never raises for a parsed spec.
    """
    from kvlint.memory.kv import kv_bytes_per_token

    def kv(dtype: str) -> str:
        try:
            return f"{kv_bytes_per_token(spec, 1, dtype):,}"
        except Exception as e:  # noqa: BLE001 - display only
            return f"- ({type(e).__name__})"

    rows: list[tuple[str, str]] = [
        ("id", spec.id),
        ("source", spec.source),
        ("model_type", spec.model_type),
        ("architectures", ", ".join(spec.architectures) or "-"),
        ("layers", str(spec.num_layers)),
        ("layer types", _runs(spec)),
        ("attention heads", str(spec.num_attention_heads)),
        ("KV heads", str(spec.num_kv_heads)),
        ("head size", str(spec.head_size)),
        ("hidden size", str(spec.hidden_size)),
        ("intermediate size", str(spec.intermediate_size)),
        ("vocab size", str(spec.vocab_size)),
        (
            "max_position_embeddings",
            f"{spec.max_position_embeddings} ({spec.max_len_key})"
            if spec.max_len_key
            else str(spec.max_position_embeddings),
        ),
        ("rope_scaling", str(spec.rope_scaling) if spec.rope_scaling else "-"),
        ("dtype", spec.torch_dtype or "- (not in config.json)"),
        ("quantization", spec.quant_method or "-"),
        ("MLA", "yes" if spec.is_mla else "no"),
        (
            "experts",
            f"{spec.num_experts} (moe_intermediate_size {spec.moe_intermediate_size})"
            if spec.num_experts
            else "-",
        ),
        ("KV bytes/token (kv-cache-dtype auto, TP 1)", kv("auto")),
        ("KV bytes/token (fp8 KV, TP 1)", kv("fp8")),
        ("parameters", f"{spec.param_count:,}" if spec.param_count else "-"),
        (
            "weight bytes",
            f"{spec.weight_bytes:,} ({spec.weight_bytes_source})"
            if spec.weight_bytes
            else "- (estimated by the plan)",
        ),
    ]
    rows += [("note", n) for n in spec.notes]
    return rows
