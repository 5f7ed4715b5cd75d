"""Pure KV-cache arithmetic (no I/O, no engine state).

Units: bytes, tokens, elements; "per GPU" = per tensor-parallel rank. Sources: vLLM
``vllm@0.33.0:vllm/v1/kv_cache_interface.py::AttentionSpec.page_size_bytes`` (page = block_size x
kv_heads_per_rank x (head_size + head_size_v) x dtype bytes), ``MLAAttentionSpec.page_size_bytes``
(one latent "head", 656 B/token for ``fp8_ds_mla``), ``vllm/config/model.py::ModelConfig.get_num_kv_heads``
(``max(1, kv_heads // tp)``; MLA = 1), as restated in docs/engine-memory-model.md §1.3 and §1.6.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvlint.types import LayerSpec, ModelSpec

_TWO_BYTE = {"float16", "fp16", "half", "bfloat16", "bf16"}
_FOUR_BYTE = {"float32", "fp32", "float"}
_ONE_BYTE = {"fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "int8", "fp8_per_token_head", "int8_per_token_head"}
# packed 4-bit formats: backend-specific packing; counted as 1 byte/element here (upper bound). [heuristic]
_PACKED = {"nvfp4", "nvfp4_4over6", "nvfp4_ds_mla", "int4_per_token_head", "ultraquant_4bit"}

FP8_DS_MLA_BYTES_PER_TOKEN_LAYER = 656
"""DeepSeek-V3.2 sparse MLA fp8 layout: 656 B/token/layer (``vllm@0.11.0:vllm/v1/kv_cache_interface.py::MLAAttentionSpec``)."""


def dtype_bytes(dtype: str | None) -> int:
    """Bytes per element of a model/activation dtype name (``bfloat16`` -> 2, ``float32`` -> 4).

    Unknown or None -> 2 (the common 16-bit case). Never raises.
    """
    d = (dtype or "").lower().replace("torch.", "")
    if d in _FOUR_BYTE:
        return 4
    if d in _ONE_BYTE or d.startswith("fp8") or d.startswith("float8"):
        return 1
    return 2


DSA_INDEXER_QUANT_BLOCK = 128
"""Values per fp32 scale in the DSA indexer's fp8 key cache (vLLM ``Indexer.quant_block_size``, SGLang
``DSATokenToKVPool.quant_block_size``)."""


def dsa_indexer_bytes(index_head_dim: int) -> int:
    """Bytes one token occupies in one layer's DeepSeek sparse attention (DSA) indexer key cache.

    ``index_head_dim`` fp8 values plus one 4-byte fp32 scale per 128 values, stored as uint8: 132 for DeepSeek V3.2
    and GLM-5 (index_head_dim 128), whatever ``--kv-cache-dtype`` is. vLLM: ``DeepseekV32IndexerCache`` registers
    ``MLAAttentionSpec(num_kv_heads=1, head_size=index_head_dim + index_head_dim // quant_block_size * 4,
    dtype=torch.uint8)`` beside the layer's MLA cache (``vllm/model_executor/models/deepseek_v2.py``, v0.11.0 on);
    SGLang: ``indexer_size_per_token = index_head_dim + index_head_dim // DSATokenToKVPool.quant_block_size * 4``
    (sglang@003fca80 ``python/sglang/srt/model_executor/pool_configurator.py::DefaultPoolConfigurator.
    _compute_cell_size``). 0 for 0.
    """
    if index_head_dim <= 0:
        return 0
    return index_head_dim + index_head_dim // DSA_INDEXER_QUANT_BLOCK * 4


def kv_dtype_bytes(kv_cache_dtype: str | None, model_dtype: str | None) -> int:
    """Bytes per stored KV element for vLLM's ``--kv-cache-dtype``.

    Args:
        kv_cache_dtype: ``auto`` (or None) -> the model dtype; ``float16``/``bfloat16`` -> 2; ``fp8``,
            ``fp8_e4m3``, ``fp8_e5m2``, ``fp8_inc`` -> 1; packed 4-bit dtypes -> 1 (upper bound,
            [backend-dependent]); ``fp8_ds_mla`` -> 1 (its 656-byte latent is handled in
            :func:`layer_bytes_per_token`).
        model_dtype: resolved model dtype (``bfloat16``, ``float16``, ``float32``).

    Source: ``vllm@0.33.0:vllm/config/cache.py::CacheDType``, ``vllm/utils/torch_utils.py::STR_DTYPE_TO_TORCH_DTYPE``
    (docs/engine-memory-model.md §1.6). Never raises.
    """
    k = (kv_cache_dtype or "auto").lower()
    if k == "auto":
        return dtype_bytes(model_dtype)
    if k in _TWO_BYTE:
        return 2
    if k in _FOUR_BYTE:
        return 4
    if k in _PACKED or k.startswith("fp8") or k in _ONE_BYTE or k.startswith(("turboquant", "octave")):
        return 1
    return dtype_bytes(model_dtype)


def kv_heads_per_rank(layer: LayerSpec, tp: int) -> int:
    """KV heads a TP rank stores for one layer: MLA -> 1 (latent, replicated on every rank);
    else ``max(1, kv_heads // tp)`` (heads replicated when tp > kv_heads).

    Source: ``vllm@0.33.0:vllm/config/model.py::ModelConfig.get_num_kv_heads``.
    """
    if layer.kind == "mla":
        return 1
    return max(1, layer.kv_heads // max(1, tp))


def layer_bytes_per_token(layer: LayerSpec, tp: int, kv_bytes: int, kv_cache_dtype: str = "auto") -> int:
    """KV bytes one token occupies in one layer on one TP rank (0 for ``mamba``/``none`` layers).

    full/sliding/chunked/cross: ``kv_heads_per_rank x (head_size + head_size_v) x kv_bytes`` with
    ``head_size_v`` = ``head_size`` when 0; MLA: ``head_size x kv_bytes`` (576 x 2 = 1152 for DeepSeek bf16),
    or 656 with ``fp8_ds_mla``; an MLA layer with a DSA indexer (``index_head_dim``, DeepSeek V3.2 / GLM-5) adds
    its indexer key cache (:func:`dsa_indexer_bytes`, 132 B), a second spec of the same full-attention type that
    vLLM puts in the same ``UniformTypeKVCacheSpecs`` group. Source: ``AttentionSpec.page_size_bytes`` /
    ``MLAAttentionSpec.page_size_bytes`` divided by block_size (vllm@0.33.0). A ``kv_shared`` layer (Gemma 3n / 4 ``num_kv_shared_layers``) has no
    KV-cache spec of its own (``GPUModelRunner.get_kv_cache_spec`` skips a layer with a
    ``kv_sharing_target_layer_name``): 0.
    """
    if layer.kind in ("mamba", "none") or layer.kv_shared:
        return 0
    if layer.kind == "mla":
        indexer = dsa_indexer_bytes(layer.index_head_dim)
        if (kv_cache_dtype or "").lower() == "fp8_ds_mla":
            return FP8_DS_MLA_BYTES_PER_TOKEN_LAYER + indexer
        return layer.head_size * kv_bytes + indexer
    hv = layer.head_size_v or layer.head_size
    return kv_heads_per_rank(layer, tp) * (layer.head_size + hv) * kv_bytes


LayerCounts = tuple[tuple[LayerSpec, int], ...]
"""Distinct layer specs with how many layers have each, in order of first occurrence (:func:`layer_counts`)."""

_COUNTS: dict[tuple[int, int, int | None], tuple[Sequence[LayerSpec], LayerCounts]] = {}
_COUNTS_MAX = 512


def layer_counts(layers: Sequence[LayerSpec], start: int = 0, stop: int | None = None) -> LayerCounts:
    """The distinct :class:`~kvlint.types.LayerSpec` values of ``layers[start:stop]`` with their multiplicity, in
    order of first occurrence: ``((LayerSpec("full", 8, 128, 128), 32),)`` for Llama-3.1-8B.

    Every per-layer figure of the memory models (KV bytes per token, Mamba state page, KV-cache group
    bucket) is a function of the LayerSpec alone, so a sum over layers equals a sum over distinct specs
    times their count, in exact integer arithmetic; a homogeneous model has one distinct spec, a
    sliding/full hybrid two. Memoised on the identity of a ``tuple`` and the range (a model's own ``layers``,
    a pipeline stage's slice of them; the memo keeps the tuple alive so its id cannot be reused); other
    sequences are counted each time. Never raises for hashable specs.
    """
    is_tuple = type(layers) is tuple
    key = (id(layers), start, stop)
    if is_tuple:
        hit = _COUNTS.get(key)
        if hit is not None and hit[0] is layers:
            return hit[1]
    counts: dict[LayerSpec, int] = {}
    for lay in layers[start:stop]:
        counts[lay] = counts.get(lay, 0) + 1
    out = tuple(counts.items())
    if is_tuple:
        if len(_COUNTS) >= _COUNTS_MAX:
            _COUNTS.clear()
        _COUNTS[key] = (layers, out)
    return out


def kv_bytes_per_token(model: ModelSpec, tp: int = 1, kv_dtype: str | int | None = "auto") -> int:
    """KV bytes per token per GPU summed over every attention layer of the model (full-attention view).

    Args:
        model: the ModelSpec (its ``layers``; ``torch_dtype`` for ``auto``).
        tp: tensor-parallel size (KV heads split, MLA not).
        kv_dtype: ``--kv-cache-dtype`` name, or bytes per element as an int.

    Returns bytes/token/GPU; sliding-window layers are counted as if full (their per-request bound is
    applied by the planner), Mamba layers count 0. Example: Llama-3.1-8B bf16 TP1 -> 131072.
    """
    if isinstance(kv_dtype, int):
        kb, name = kv_dtype, "auto"
    else:
        name = kv_dtype or "auto"
        kb = kv_dtype_bytes(name, model.torch_dtype)
    return sum(layer_bytes_per_token(layer, tp, kb, name) * n for layer, n in layer_counts(model.layers))


def kv_cache_bytes(tokens: int, layers: int, kv_heads: int, head_dim: int, bytes_per_element: float) -> int:
    """Textbook KV size: ``2 (K and V) x layers x kv_heads x head_dim x bytes x tokens`` bytes.

    Example (capacity-planning seed): 80 layers, 8 KV heads, head 128, 2 bytes, 32768 tokens -> 10 GiB.
    """
    return int(2 * layers * kv_heads * head_dim * bytes_per_element * tokens)


def sequences_memory_bytes(
    tokens_per_seq: int,
    num_seqs: int,
    layers: int,
    kv_heads: int,
    head_dim: int,
    bytes_per_element: float,
    overhead: float = 1.0,
) -> float:
    """KV memory for ``num_seqs`` sequences of ``tokens_per_seq`` tokens, times an ``overhead`` factor (bytes).

    Example (seed): 32 layers, 8 KV heads, 128, bf16, 8192 tokens, 16 sequences, x1.15 -> 18.4 GiB.
    """
    return kv_cache_bytes(tokens_per_seq, layers, kv_heads, head_dim, bytes_per_element) * num_seqs * overhead


def cdiv(a: int, b: int) -> int:
    """Ceiling division for non-negative ints (``vllm/utils::cdiv``)."""
    return -(-a // b)
