"""DeepSeek V4's KV cache in vLLM: the caches each layer allocates and how vLLM packs them into KV-cache groups.

Sources (vLLM main of May-June 2026, the 0.22 - 0.26 line; file, class or function):

* ``vllm/model_executor/layers/deepseek_v4_attention.py``: every layer keeps a sliding-window cache
  (``DeepseekV4SWACache``); a layer with ``compress_ratio`` > 1 also keeps its compressed latent cache
  (``DeepseekV4MLAAttention.get_kv_cache_spec``: ``MLAAttentionSpec`` with ``compress_ratio``, ``alignment=576``,
  ``model_version="deepseek_v4"``) and a ``DeepseekCompressor`` whose partial state is cached; a ratio-4 layer adds
  the lightning indexer, with its key cache (``DeepseekV4IndexerCache``, ``index_head_dim + index_head_dim // 128
  x 4`` bytes per kept token: fp8 keys and fp32 scales) and a compressor of its own.
* ``vllm/v1/kv_cache_interface.py``: ``MLAAttentionSpec.real_page_size_bytes`` (DeepSeek V4, ``fp8_ds_mla``:
  ``block_size // compress_ratio`` kept tokens x 584 B: 448 fp8 NoPE + 64 bf16 RoPE values + 8 scale bytes),
  ``SlidingWindowMLASpec`` (the same 584 B per token), ``_apply_alignment_padding`` (pages rounded up to the
  alignment), ``SlidingWindowSpec.max_memory_usage_bytes`` (``cdiv(min(W - 1 + in_flight, L), block) + 1``).
* ``vllm/v1/attention/backends/mla/sparse_swa.py``: ``DeepseekV4SWACache`` (block size 64, window
  ``sliding_window``), ``DeepseekSparseSWABackend.get_preferred_block_size`` (256).
* ``CompressorStateCache`` (``deepseek_compressor.py``): fp32 state of ``2 x coff x head_dim`` values per row,
  ``coff = 1 + (compress_ratio == 4)``, window ``coff x compress_ratio``, block 4 rows (ratio 4) or 8 (ratio 128).
* ``vllm/v1/core/kv_cache_utils.py::group_and_unify_kv_cache_specs``, ``::_get_kv_cache_groups_uniform_groups``,
  ``::_approximate_gcd``: the caches are bucketed (every ``MLAAttentionSpec`` in one bucket, each sliding
  ``(block_size, window)`` in its own), each bucket is cut into tuples of layers of different page sizes, and one
  chunk size d (the value in ``[MLA tuples, max tuples]`` that adds the fewest padding tuples, larger on ties)
  splits every bucket into ``cdiv(tuples, d)`` groups that share one block-id axis.

**[assumed]** One block id costs ``d x`` the largest tuple page of any bucket (the MLA bucket's [indexer, ratio-4,
ratio-128] tuple for V4-Flash): with gt-018's shape (V4-Flash, block 256, 16,384 in-flight tokens) this gives
1,051,776 B a block, and 30,000 tokens need 6,800 blocks = 6.66 GiB and 5.44 GiB hold 13,528 tokens, both figures
vLLM 0.22 printed; the unpadded layout of later sources (the actual layer counts, 1,002,240 B) gives 6.35 GiB and
14,196 tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from kvlint.memory.kv import LayerCounts
from kvlint.types import LayerSpec

V4_BYTES_PER_TOKEN = 584
"""Bytes one kept token occupies in a DeepSeek V4 latent or sliding-window cache (``fp8_ds_mla``): 448 fp8 NoPE + 64
bf16 RoPE values + 7 scale bytes + 1 pad (``kv_cache_interface.py::MLAAttentionSpec.real_page_size_bytes``)."""

V4_ALIGNMENT = 576
"""Page alignment of every DeepSeek V4 cache (``alignment=576``, FlashMLA's requirement)."""

V4_SWA_BLOCK = 64
"""Tokens per block of the sliding-window cache (``DeepseekV4SWACache.block_size``)."""

V4_DEFAULT_BLOCK_SIZE = 256
"""``DeepseekSparseSWABackend.get_preferred_block_size``: the block size without ``--block-size``."""

_STATE_BLOCK = {4: 4, 128: 8}
"""Rows per block of a compressor's state cache by compress ratio (``CompressorStateCache``)."""


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _aligned(n: int) -> int:
    return _cdiv(n, V4_ALIGNMENT) * V4_ALIGNMENT


def is_deepseek_v4(counts: LayerCounts) -> bool:
    """Whether a stage's layers are DeepSeek V4 layers (:attr:`kvlint.types.LayerSpec.compress_ratio` set)."""
    return any(lay.compress_ratio for lay, _ in counts)


def approximate_gcd(values: Sequence[int], lower_bound: int) -> int:
    """vLLM's ``_approximate_gcd``: the chunk size d in ``[lower_bound, max(values)]`` with the least total padding
    ``sum(cdiv(x, d) x d - x)``, the larger d on ties."""
    top = max(values)
    best, best_pad = top, None
    for d in range(max(1, min(lower_bound, top)), top + 1):
        pad = sum(_cdiv(x, d) * d - x for x in values)
        if best_pad is None or pad <= best_pad:
            best, best_pad = d, pad
    return best


def v4_pool(
    counts: LayerCounts, block_size: int
) -> tuple[list[tuple[str, int, int, int, int | None]], int, int]:
    """One rank's DeepSeek V4 KV pool: ``(groups, bytes_per_block, kv_bytes_per_token)``.

    ``groups``: ``(kind, layers, block_size, page_bytes, window)`` per KV-cache group ("full" for the group of latent
    and indexer caches, "sliding" for the window and compressor-state groups; ``page_bytes`` the group's widest
    page); ``bytes_per_block``: what one block id costs across the packed groups (module docstring; every group's
    block costs it); ``kv_bytes_per_token``: the unpadded latent and indexer pages per token of history (the part
    that grows with the context). All caches are replicated on every tensor-parallel rank (one latent head).
    """
    swa_page = _aligned(V4_SWA_BLOCK * V4_BYTES_PER_TOKEN)
    n_layers = 0
    mla: dict[int, int] = {}  # page -> caches
    sliding: dict[tuple[int, int], dict[int, int]] = {}  # (block, window) -> page -> caches
    for lay, c in counts:
        if lay.kind == "none" or lay.kv_shared:
            continue
        n_layers += c
        sliding.setdefault((V4_SWA_BLOCK, lay.window or 0), {})
        sliding[(V4_SWA_BLOCK, lay.window or 0)][swa_page] = (
            sliding[(V4_SWA_BLOCK, lay.window or 0)].get(swa_page, 0) + c
        )
        r = lay.compress_ratio
        if r <= 1:
            continue
        main = _aligned(block_size // r * V4_BYTES_PER_TOKEN)
        mla[main] = mla.get(main, 0) + c
        coff = 2 if r == 4 else 1
        sb = _STATE_BLOCK.get(r, 8)
        state = _aligned(sb * 2 * coff * (lay.head_size or 512) * 4)
        key = (sb, coff * r)
        sliding.setdefault(key, {})
        sliding[key][state] = sliding[key].get(state, 0) + c
        if r == 4:
            idx = lay.index_head_dim or 128
            ipage = _aligned(block_size // r * (idx + idx // 128 * 4))
            mla[ipage] = mla.get(ipage, 0) + c
            istate = _aligned(sb * 2 * coff * idx * 4)
            sliding[key][istate] = sliding[key].get(istate, 0) + c
    buckets: list[tuple[str, int, int | None, dict[int, int]]] = []
    if mla:
        buckets.append(("full", block_size, None, mla))
    for (sbs, sw), spages in sorted(sliding.items()):
        buckets.append(("sliding", sbs, sw, spages))
    tuples = [max(pages.values()) for _, _, _, pages in buckets]
    d = approximate_gcd(tuples, lower_bound=tuples[0]) if tuples else 1
    stride = d * max(sum(pages) for _, _, _, pages in buckets) if buckets else 0
    groups: list[tuple[str, int, int, int, int | None]] = []
    for (kind, bs, w, pages), t in zip(buckets, tuples, strict=True):
        caches = sum(pages.values())
        for g in range(_cdiv(t, d)):
            share = min(d, t - g * d)  # tuples in this group (the bucket is dealt out in turn)
            groups.append((kind, _cdiv(caches * share, t), bs, max(pages), w))
    tok = sum(p * c for p, c in mla.items()) // max(1, block_size)
    return groups, stride, tok


def v4_layer(window: int, ratio: int, index_head_dim: int = 128, head_size: int = 512) -> LayerSpec:
    """A DeepSeek V4 decoder layer as :func:`kvlint.models.config.parse_config` describes it (tests, examples)."""
    return LayerSpec(
        kind="sliding",
        kv_heads=1,
        head_size=head_size,
        head_size_v=head_size,
        window=window,
        compress_ratio=ratio,
        index_head_dim=index_head_dim,
    )
