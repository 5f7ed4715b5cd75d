"""SGLang memory model: mem_fraction_static default, context_length and the KV pool, per TP rank.

Predicts SGLang's start-up line ``max_total_num_tokens=N, chunked_prefill_size=…, max_running_requests=…,
context_len=…`` and its memory errors, following docs/engine-memory-model.md §3 and §4. Sources:
``sglang@0.5.23:sglang/srt/arg_groups/memory_hook.py::handle_gpu_memory_settings``,
``sglang/srt/mem_cache/kv_cache_configurator.py::KVCacheConfigurator._profile_available_bytes`` /
``::resolve_max_num_reqs``, ``sglang/srt/model_executor/pool_configurator.py::_compute_cell_size``,
``sglang/srt/utils/hf_transformers/common.py::get_context_length``; ``sglang@0.4.6:sglang/srt/server_args.py::
ServerArgs.__post_init__``, ``sglang/srt/model_executor/model_runner.py::ModelRunner.profile_max_num_token``;
``sglang@0.4.10`` and ``sglang@0.5.5`` ``server_args.py``.

Exact: the mem_fraction_static heuristics, context length, cell size, page rounding, max_running_requests.
**[heuristic]**: the memory other than weights inside the static fraction (``_OTHER``); **[calibrated]** the memory
in use before SGLang measures its pre-load free memory: the CUDA context (``CUDA_CONTEXT_BYTES``) and, with more than
one rank, what ``init_torch_distributed`` allocates (:func:`preload_bytes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kvlint.engines.options import MAX_INT_SETTING
from kvlint.fastinit import direct_init
from kvlint.memory import sglang_graphs, sglang_mamba, sglang_spec
from kvlint.memory.calibration import CUDA_CONTEXT_BYTES
from kvlint.memory.kv import dsa_indexer_bytes, dtype_bytes, layer_counts
from kvlint.memory.pooling import SGLANG_HEADLESS_ARCHITECTURES, sglang_embedding
from kvlint.memory.refusal import PlanError, PlanRefusal
from kvlint.memory.versions import version_source
from kvlint.models.weights import (
    decoder_layer_bytes,
    dense_mlp_layer_bytes,
    tp_replicated_bytes,
    vision_params,
    weight_bytes,
)
from kvlint.types import MemoryPlan, ModelSpec, ServingConfig
from kvlint.values import as_float, as_int, digits, finite_number

GiB = 1 << 30
MiB = 1 << 20

NEWEST_SGLANG = "0.5.23"
"""Newest SGLang release read for docs/engine-memory-model.md §0."""

SgVersion = tuple[int, int, int]

#: [calibrated] the context's band: the range of those four logs (0.19 - 0.61 GiB) rounded outward to 0.05 GiB
_CONTEXT_RANGE = (int(0.15 * GiB), int(0.65 * GiB))
#: [heuristic] what ``init_torch_distributed`` allocates with more than one rank (NCCL communicators, custom
#: all-reduce buffers), point estimate: 0.2 GiB, so that context + distributed stays the 0.6 GiB kvlint assumed
#: before the split. The printed figures differ 15x by interconnect, which a manifest does not state: 0.13 GB on 4
#: PCIe-only L4s with custom all-reduce off (gt-252), 1.77 - 2.01 GB on 8 NVLink H200s (gt-254).
DIST_INIT_BYTES = int(0.6 * GiB) - CUDA_CONTEXT_BYTES
#: [calibrated] the band's worst case per peer rank: 2.01 GB / 7 peers on 8 NVLink H200s (gt-254)
_DIST_PER_PEER_MAX = int(0.29 * GiB)
_OTHER = int(0.3 * GiB)  # [heuristic] non-weight memory allocated during load (§3.3)
_BAND = 0.5


def preload_bytes(world: int) -> tuple[int, int, int]:
    """Memory in use on each GPU when SGLang measures its pre-load free memory, ``(point, low, high)`` in bytes, for
    ``world`` = tp × pp ranks.

    SGLang reads the free memory it sizes the pool from after the parallel groups exist
    (``sglang@0.4.6:sglang/srt/model_executor/model_runner.py::ModelRunner.init_torch_distributed``, after
    ``init_distributed_environment`` and ``initialize_model_parallel``; ``sglang@0.5.23:sglang/srt/distributed/
    bootstrap.py::measure_pre_model_load_memory``, "after parallel initialization"), so it already lacks the CUDA
    context and what the distributed set-up allocates. With one rank that set-up allocates nothing on the GPU:
    ``GroupCoordinator.__init__`` creates its PyNccl communicator and custom all-reduce only when ``world_size > 1``
    (``sglang/srt/distributed/parallel_state.py`` in both wheels), and SGLang logs
    "Init torch distributed ends. mem usage=0.00 GB" (sgl-project/sglang#15426, TP1). Point: the context
    (:data:`CUDA_CONTEXT_BYTES`) plus, with more than one rank, :data:`DIST_INIT_BYTES`. Band: the context over the
    range the logs show (0.15 - 0.65 GiB); the distributed part from 0 (PCIe-only, custom all-reduce off: 0.13 GB
    at TP4, gt-252) up to ``_DIST_PER_PEER_MAX`` per peer rank (NVLink: 2.01 GB at TP8, gt-254). **[calibrated]**
    """
    peers = max(0, world - 1)
    dist = DIST_INIT_BYTES if peers else 0
    point = CUDA_CONTEXT_BYTES + dist
    high = _CONTEXT_RANGE[1] + max(dist, _DIST_PER_PEER_MAX * peers)
    low = _CONTEXT_RANGE[0]
    return point, low, high


def sglang_version(text: str | None) -> tuple[SgVersion, bool]:
    """``(major, minor, patch)`` of an SGLang version/tag (``v0.5.5.post3-cu129`` -> 0.5.5.post3), ordered by
    PEP 440 (:func:`kvlint.memory.versions.parse_pep440`).

    Unreadable/None/``latest`` -> :data:`NEWEST_SGLANG` with ``assumed`` True. Never raises.
    """
    from kvlint.memory.versions import parse_pep440

    v = parse_pep440(text) if text and text.strip().lower() != "latest" else None
    if v is not None:
        return v, False
    newest = parse_pep440(NEWEST_SGLANG)
    assert newest is not None
    return newest, True


def pool_starts(v: SgVersion, pool_tokens: int, context_length: int) -> bool:
    """Whether SGLang ``v`` starts with a KV pool of ``pool_tokens`` (``max_total_num_tokens``).

    ``TpModelWorker`` sets ``max_req_len = min(context_len - 1, pool - 1)`` and asserts "Memory pool size is too
    small" when ``max_req_len <= 0`` or, up to 0.5.13, when ``max_req_input_len = max_req_len - 5 <= 0``; a pool
    smaller than ``context_length`` is otherwise accepted (requests are capped at ``max_req_len``). Read in
    ``sglang/srt/managers/tp_worker.py`` of the PyPI wheels 0.4.6, 0.4.10, 0.5.5 and 0.5.13 (both conditions) and
    0.5.14, 0.5.15, 0.5.18, 0.5.21, 0.5.22 and 0.5.23 (``max_req_len`` only). A pool of 0 tokens stops earlier
    ("Not enough memory", KV701).
    """
    max_req_len = min(context_length - 1, pool_tokens - 1)
    if max_req_len <= 0:
        return False
    return v >= (0, 5, 14) or max_req_len - 5 > 0


def warns_pool_below_context(v: SgVersion) -> bool:
    """Whether SGLang ``v`` logs "KV pool holds N tokens, fewer than --context-length L. One full-length request
    cannot fit, ..." when the pool is smaller than ``context_length`` (``TpModelWorker.get_worker_info``, 0.5.23).
    Earlier releases cap ``max_req_len`` at ``pool - 1`` without a word (the warning is absent from
    ``sglang/srt/managers/tp_worker.py`` in the wheels 0.4.6 ... 0.5.22). Either way SGLang starts."""
    return v >= (0, 5, 23)


def pool_below_context_behaviour(v: SgVersion) -> str:
    """What SGLang ``v`` does when its KV pool is smaller than ``context_length`` (:func:`warns_pool_below_context`):
    it starts either way and caps requests at ``pool - 1`` tokens."""
    if warns_pool_below_context(v):
        return "starts, warns 'KV pool holds N tokens, fewer than --context-length L' and caps requests at the pool"
    return "starts and silently caps requests at the pool (max_req_len = pool - 1)"


def max_running_requests_04(
    v: SgVersion,
    profiled_tokens: int,
    pool_tokens: int,
    context_length: int,
    user: int | None,
    dp_attention_size: int = 1,
) -> int:
    """SGLang 0.4.x ``max_running_requests`` (requests per DP replica).

    ``ModelRunner.init_memory_pool`` sizes the request-to-token pool from ``max_num_reqs`` = the user's
    ``--max-running-requests``, else ``min(max(int(profiled_tokens / context_length × 512), 2048), 4096)`` with
    ``profiled_tokens`` the profiled KV tokens before the ``--max-total-tokens`` cap and page rounding; the pool
    holds ``max_num_reqs + 1`` rows up to 0.4.6 and ``max_num_reqs`` from 0.4.7. ``TpModelWorker.__init__`` then
    takes ``min(pool_tokens // 2 if no user value else user // dp_attention_size, pool rows)`` (``pool_tokens`` =
    the final ``max_total_num_tokens``; the division by the DP size with ``--enable-dp-attention`` is absent in
    0.4.0). Read in ``sglang/srt/model_executor/model_runner.py`` and ``sglang/srt/managers/tp_worker.py`` of the
    PyPI wheels 0.4.0, 0.4.4.post1, 0.4.6, 0.4.7, 0.4.8, 0.4.9.post2 and 0.4.10 (0.4.1 - 0.4.3 not read).
    """
    if user is None:
        ratio = int(profiled_tokens / context_length * 512) if context_length > 0 else 0
        rows = min(max(ratio, 2048), 4096)
        want = pool_tokens // 2
    else:
        rows = user
        want = user // dp_attention_size if v >= (0, 4, 4) else user
    if v < (0, 4, 7):
        rows += 1
    return max(0, min(want, rows))


#: From this release the < 35 GiB tier (RTX 4090 / 5090, A10) defaults to chunked prefill 4096 and a decode graph
#: batch of 48 (160 at tp >= 4) (``arg_groups/memory_hook.py`` of the 0.5.20 wheel; 2048 and 24 / 80 in 0.5.19's)
TIER_35_FROM: SgVersion = (0, 5, 20)


def gpu_tier(gpu_mib: float, tp: int, v: SgVersion) -> tuple[int, int]:
    """``(chunked_prefill_size, decode cuda-graph max_bs)`` defaults by GPU memory (MiB) for SGLang >= 0.5.3.

    Source: ``sglang@0.5.23:sglang/srt/arg_groups/memory_hook.py::handle_gpu_memory_settings`` (table in §3.2;
    on the < 35 GiB tier 4096 and 48/160 from 0.5.20 (:data:`TIER_35_FROM`; read in 0.5.20 - 0.5.23), 2048 and 24/80
    in 0.5.5 - 0.5.19 (read in 0.5.5 - 0.5.8, 0.5.13, 0.5.15, 0.5.16, 0.5.18; ``memory_hook.py`` of 0.5.19), 2048
    and 16/80 in 0.5.3 and 0.5.4: ``server_args.py::ServerArgs._handle_gpu_memory_settings`` of those wheels).
    """
    g = gpu_mib / 1024
    if g < 20:
        return 2048, 8
    if g < 35:
        if v < (0, 5, 5):
            return 2048, 16 if tp < 4 else 80
        if v < TIER_35_FROM:
            return 2048, 24 if tp < 4 else 80
        return 4096, 48 if tp < 4 else 160
    if g < 60:
        return 4096, 32 if tp < 4 else 160
    if g < 160:
        return 8192, 256 if tp < 4 else 512
    return 16384, 512


#: From this release a default decode CUDA-graph batch is capped by the user's ``--max-running-requests``
#: (``arg_groups/memory_hook.py::handle_gpu_memory_settings`` of the 0.5.22 and 0.5.23 wheels; not in 0.5.21's), which
#: lowers the graph and DP-attention padding terms of the default fraction's reserve
DECODE_BS_CAPPED_FROM: SgVersion = (0, 5, 22)


#: From this release the default fraction's reserve knows the PD-disaggregation role and the decode graphs' backend,
#: and adds 2 GiB for DeepEP (``_handle_gpu_memory_settings`` of the 0.5.15 wheel; the 0.5.3 - 0.5.14 wheels have none
#: of these: 0.5.14's reserve adds the decode-graph term whatever the decode backend or role)
PD_TERMS_FROM: SgVersion = (0, 5, 15)


#: The first SGLang release whose default mem_fraction_static depends on the GPU's size (> 81920 MiB:
#: ``(gpu − 13 GiB) / gpu``), read in the PyPI wheels' ``sglang/srt/server_args.py::ServerArgs.__post_init__``.
_SG_LARGE_GPU_FRACTION = "0.4.5.post3"


def default_mem_fraction_static(
    v: SgVersion,
    gpu_mib: float,
    *,
    tp: int,
    pp: int = 1,
    is_mla: bool = False,
    deepep: bool = False,
    chunked_prefill_size: int | None = None,
    cuda_graph_max_bs: int | None = None,
    dp_attention: bool = False,
    dp: int = 1,
    speculative_reserve_mib: int = 0,
    prefill_graph_mib: float = 0.0,
    max_running_requests: int | None = None,
    disaggregation_mode: str = "null",
    decode_graphs: bool = True,
    speculative_num_draft_tokens: int | None = None,
) -> tuple[float, str]:
    """SGLang's default ``mem_fraction_static`` by version and GPU memory (``gpu_mib`` = nvidia-smi MiB).

    * 0.4.6: GPU <= 81920 MiB: tp >= 16 -> 0.79, >= 8 -> 0.81, >= 4 -> 0.85, >= 2 -> 0.87, else 0.88;
      bigger GPUs ``(gpu − 13 GiB) / gpu`` (``sglang@0.4.6:server_args.py::ServerArgs.__post_init__``). Before
      0.4.5.post3 the tp rule holds for every GPU: the PyPI wheels 0.4.3.post2, 0.4.4.post4, 0.4.5, 0.4.5.post1
      and 0.4.5.post2 have no larger-GPU branch; 0.4.5.post3 has it.
    * 0.4.10: reserved GiB by GPU size (< 35 GiB: 2.8 + p/10; < 90: 9.5 + p/2; < 160: 12 + p/2; else 32;
      p = tp × pp; + 2 for DP attention, + 4 for DeepEP); ``round((gpu − reserved)/gpu, 3)``.
    * >= 0.5.3: ``reserved = 512 + 1.5 × max(chunked_prefill_size, 2048) + (tp × pp / 8) × 1024 + 2 × max_bs``
      MiB, with DP attention + ``3 × max_bs × dp`` and, when max_bs > 300, + ``1.5 × max_bs × dp`` (the attention-DP
      size; ``server_args.py::ServerArgs._handle_gpu_memory_settings`` in the 0.5.3, 0.5.4, 0.5.5, 0.5.8 and 0.5.13
      wheels; 0.5.1 and 0.5.2 have the 0.4.10 rule), + ``prefill_graph_mib`` (the prefill CUDA graphs' reserve from
      0.5.8, :meth:`kvlint.memory.sglang_graphs.PrefillGraphs.reserve_mib`), at least 10 GiB when GPU > 60 GiB,
      + 2 GiB for DeepEP from :data:`PD_TERMS_FROM` (no such term in the 0.5.3 - 0.5.13 wheels);
      ``round((gpu − reserved)/gpu, 3)``
      (``sglang@0.5.23:memory_hook.py::handle_gpu_memory_settings``, ``::reserve_for_graph_mb``), +
      ``speculative_reserve_mib`` after the floor (the draft's reserve of 0.5.3 - 0.5.14,
      :func:`kvlint.memory.sglang_spec.default_reserve_mib`). From :data:`DECODE_BS_CAPPED_FROM` a default decode
      graph batch (no ``cuda_graph_max_bs``) above the user's ``max_running_requests`` is lowered to it. From
      :data:`PD_TERMS_FROM` (``server_args.py::ServerArgs._handle_gpu_memory_settings`` of 0.5.15 - 0.5.18,
      ``memory_hook.py`` from 0.5.19): a ``disaggregation_mode`` ``decode`` node sizes the activation term from
      ``max(max_running_requests (else the graph batch) × speculative_num_draft_tokens (else 1), 2048)``; a
      ``prefill`` node has no decode-graph, DP-attention padding or DeepEP term; without decode graphs
      (``decode_graphs`` False: ``--disable-cuda-graph``, ``--disable-decode-cuda-graph``,
      ``--cuda-graph-backend-decode disabled``) neither the graph nor the DeepEP term is added.
    Returns ``(fraction, why)``.
    """
    p = tp * pp
    if v < (0, 4, 10):
        if gpu_mib <= 81920 or v < sglang_version(_SG_LARGE_GPU_FRACTION)[0]:
            f = 0.79 if tp >= 16 else 0.81 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
            if gpu_mib > 81920:
                return (
                    f,
                    f"mem_fraction_static {f} (SGLang default for tp_size {tp}; no larger-GPU rule before 0.4.5.post3)",
                )
            return f, f"mem_fraction_static {f} (SGLang default for tp_size {tp} before 0.4.10)"
        f = round((gpu_mib - 13 * 1024) / gpu_mib, 3)
        return f, f"mem_fraction_static {f} = (gpu − 13 GiB)/gpu (SGLang 0.4.5.post3 to 0.4.9, GPU > 80 GiB)"
    if v < (0, 5, 3):
        g = gpu_mib / 1024
        if g < 35:
            r = 2.8 + p / 10
        elif g < 90:
            r = 9.5 + p / 2
        elif g < 160:
            r = 12 + p / 2
        else:
            r = 32.0
        r += (2 if dp_attention else 0) + (4 if deepep else 0)
        f = round((gpu_mib - r * 1024) / gpu_mib, 3)
        return (
            f,
            f"mem_fraction_static {f} = (gpu − {r:.1f} GiB reserved)/gpu (SGLang 0.4.10 to 0.5.2 heuristic)",
        )
    cps, bs = gpu_tier(gpu_mib, tp, v)
    cps = chunked_prefill_size if chunked_prefill_size and chunked_prefill_size > 0 else cps
    if cuda_graph_max_bs:
        bs = cuda_graph_max_bs
    elif v >= DECODE_BS_CAPPED_FROM and max_running_requests is not None and 0 < max_running_requests < bs:
        # memory_hook.py::handle_gpu_memory_settings (0.5.22, 0.5.23): a default decode max_bs above the user's
        # --max-running-requests is lowered to it, before the reserve is computed
        bs = max_running_requests
    pd = v >= PD_TERMS_FROM
    mode = disaggregation_mode if pd else "null"
    act = max(cps, 2048)
    if mode == "decode":
        # "Decode nodes do no prefill; size activation to the decode batch."
        act = max((max_running_requests or bs or 1) * (speculative_num_draft_tokens or 1), 2048)
    reserved = 512 + 1.5 * act + (p / 8) * 1024
    graphs = mode != "prefill" and (decode_graphs or not pd)
    if graphs:
        reserved += 2 * bs
    if dp_attention and mode != "prefill":
        # "DP attention needs more padding for some operations" (memory_hook.py::reserve_for_graph_mb in 0.5.23)
        reserved += 3 * bs * dp + (1.5 * bs * dp if bs > 300 else 0)
    # prefill (piecewise / breakable) CUDA graphs, before the floor (memory_hook.py::reserve_for_graph_mb in 0.5.23)
    reserved += max(0.0, prefill_graph_mib)
    if gpu_mib > 60 * 1024:
        reserved = max(reserved, 10 * 1024)
    if deepep and pd and graphs:
        # "DeepEP all-to-all buffers captured in the decode graph" (0.5.15 on; absent from 0.5.3 - 0.5.13)
        reserved += 2048
    reserved += max(0, speculative_reserve_mib)
    f = round((gpu_mib - reserved) / gpu_mib, 3)
    return (
        f,
        f"mem_fraction_static {f} = (gpu {gpu_mib:.0f} MiB − reserved {reserved:.0f} MiB)/gpu (SGLang >= 0.5.3 heuristic)",
    )


#: From this release SGLang pins transformers 5 (``Requires-Dist: transformers==5.3.0`` in the 0.5.10 wheel, 5.6.0 in
#: 0.5.11/0.5.12, 5.8.1 in 0.5.13, 5.12.1 in 0.5.16 - 0.5.21, 5.19.0 in 0.5.22/0.5.23; 4.57.1 in 0.5.5 and 0.5.9),
#: whose ``PreTrainedConfig.rope_scaling`` is a property returning ``rope_parameters`` as
#: ``standardize_rope_params`` rewrote it (transformers 5.3.0 and 5.19.0 ``configuration_utils.py``,
#: ``modeling_rope_utils.py``), which is what SGLang's ``get_context_length`` then reads.
SG_TRANSFORMERS_5_FROM = (0, 5, 10)
#: Text model types whose transformers 5 config puts a flat ``rope_scaling`` from config.json under
#: ``rope_parameters["full_attention"]`` (``Gemma3TextConfig.convert_rope_params_to_dict``,
#: ``Gemma3nTextConfig``'s; transformers 5.3.0 and 5.19.0): ``rope_scaling`` then has no top-level ``factor``.
_TF5_NESTED_ROPE = frozenset({"gemma3", "gemma3_text", "gemma3n", "gemma3n_text"})
#: Rope types to which transformers 5's ``standardize_rope_params`` adds ``original_max_position_embeddings``
#: (``max_position_embeddings`` when the config has none).
_TF5_ORIGINAL_LEN_TYPES = ("llama3", "yarn", "longrope")


#: The keys SGLang's ``get_context_length`` reads, first present first (``CONTEXT_LENGTH_KEYS``)
_SG_CONTEXT_KEYS = (
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
)


def derive_context_length(model: ModelSpec, v: SgVersion) -> tuple[int, str]:
    """SGLang ``v``'s derived context length (``get_context_length``, the same function in the 0.5.5, 0.5.9,
    0.5.10 and 0.5.23 wheels): the **first present** of ``max_sequence_length``, ``seq_length``, ``max_seq_len``,
    ``model_max_length``, ``max_position_embeddings`` in the text config, times ``config.rope_scaling["factor"]``
    unless that dict has ``original_max_position_embeddings`` or ``rope_type == "llama3"``; default 2048.
    From :data:`SG_TRANSFORMERS_5_FROM` ``config.rope_scaling`` is transformers 5's ``rope_parameters``: nested per
    layer type for Gemma 3 / 3n (:data:`_TF5_NESTED_ROPE`, no top-level factor: 131,072 tokens for
    gemma-3-12b-it, where 0.5.9 and earlier give 1,048,576), and with ``original_max_position_embeddings`` for
    :data:`_TF5_ORIGINAL_LEN_TYPES`. Returns ``(len, source)``: the key, or when a factor multiplied it the key's
    value and the factor (``max_position_embeddings 131072 × rope_scaling factor 8``), so that the length kvlint
    quotes can be found in config.json.
    """
    c = model.text_config or model.config or {}
    for key in _SG_CONTEXT_KEYS:
        val = c.get(key)
        read = finite_number(val)
        if read is not None and 0 < read <= MAX_INT_SETTING:
            n = int(read)
            rope_key = "rope_scaling" if c.get("rope_scaling") else "rope_parameters"
            rs = c.get(rope_key)
            if isinstance(rs, dict):
                rt = rs.get("rope_type") or rs.get("type")
                factor = rs.get("factor")
                if v >= SG_TRANSFORMERS_5_FROM and (
                    str(c.get("model_type") or model.model_type or "") in _TF5_NESTED_ROPE
                    or rt in _TF5_ORIGINAL_LEN_TYPES
                ):
                    factor = None
                # a factor that is not a finite number (NaN, a string, a list) scales nothing kvlint can plan
                f = finite_number(factor)
                if (
                    f
                    and n * f <= MAX_INT_SETTING
                    and "original_max_position_embeddings" not in rs
                    and rt != "llama3"
                ):
                    scaled = int(n * f)
                    if scaled != n:
                        return scaled, f"{key} {n} × {rope_key} factor {f:g}"
            return n, key
    return 2048, "default 2048"


def context_length_raises(model: ModelSpec, v: SgVersion) -> tuple[str, str] | None:
    """``(what, exception)`` when SGLang ``v``'s ``get_context_length`` raises on ``model``'s config.json, else None.

    ``get_context_length`` (sglang@0.4.6 ``srt/hf_transformers_utils.py``, 0.5.5 ``srt/utils/hf_transformers_utils.py``,
    0.5.13 and 0.5.23 ``srt/utils/hf_transformers/common.py``, the same body) takes ``rope_scaling.get("factor", 1)``
    when ``config.rope_scaling`` is a non-empty dict (1 when it has ``original_max_position_embeddings`` or
    ``rope_type == "llama3"``) and returns ``int(factor * val)`` for the first present of ``CONTEXT_LENGTH_KEYS``;
    ``ModelConfig._derive_context_length`` (``__init__`` in 0.4.6) calls it before it looks at ``--context-length``,
    so a factor that makes ``int()`` raise stops SGLang whether or not the length is given: NaN (ValueError "cannot
    convert float NaN to integer"), an infinity or a product past the float range (OverflowError "cannot convert
    float infinity to integer"), null or an object (TypeError "unsupported operand type(s) for *"), a list
    (TypeError from ``int()`` of the repeated list). transformers only warns about such a factor ("factor field must
    be a float >= 1", ``modeling_rope_utils.py`` of 5.3.0); Python's json reads NaN and Infinity. From
    :data:`SG_TRANSFORMERS_5_FROM` the factor is not read where :func:`derive_context_length` says transformers 5 drops
    it. A string factor is not judged (``int()`` of the repeated string may pass or raise). ``what`` names the key,
    its value and the factor as config.json has them."""
    c = model.text_config or model.config or {}
    rope_key = "rope_scaling" if c.get("rope_scaling") else "rope_parameters"
    rs = c.get(rope_key)
    if not isinstance(rs, dict) or not rs or "factor" not in rs:
        return None
    if "original_max_position_embeddings" in rs or rs.get("rope_type") == "llama3":
        return None
    rt = rs.get("rope_type") or rs.get("type")
    if v >= SG_TRANSFORMERS_5_FROM and (
        str(c.get("model_type") or model.model_type or "") in _TF5_NESTED_ROPE
        or rt in _TF5_ORIGINAL_LEN_TYPES
    ):
        return None
    key = next((k for k in _SG_CONTEXT_KEYS if c.get(k) is not None), None)
    if key is None:
        return None
    val, factor = c[key], rs["factor"]
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        return None
    what = f"{key} {val!r} × {rope_key} factor {factor!r}"[:120]
    if isinstance(factor, (int, float)):
        p = factor * val
        if isinstance(p, float) and p != p:
            return what, "ValueError: cannot convert float NaN to integer"
        if isinstance(p, float) and p in (float("inf"), float("-inf")):
            return what, "OverflowError: cannot convert float infinity to integer"
        return None
    if isinstance(factor, str):
        return None
    if isinstance(factor, list):
        if isinstance(val, float):
            return what, "TypeError: can't multiply sequence by non-int of type 'float'"
        return (
            what,
            "TypeError: int() argument must be a string, a bytes-like object or a real number, not 'list'",
        )
    kind = "NoneType" if factor is None else type(factor).__name__
    return what, f"TypeError: unsupported operand type(s) for *: '{kind}' and '{type(val).__name__}'"


def cell_size(
    model: ModelSpec,
    tp: int,
    kv_elem_bytes: int,
    swa_ratio: float = 0.8,
    layer_range: tuple[int, int] | None = None,
    dsa_indexer: bool = True,
) -> tuple[int, str]:
    """Bytes per token of the KV pool on one TP rank (``pool_configurator.py::_compute_cell_size``).

    non-MLA: ``kv_heads_per_rank × (head_dim + v_head_dim) × layers × bytes`` with ``kv_heads_per_rank =
    max(1, kv_heads // tp)``; MLA: ``(kv_lora_rank + qk_rope_head_dim) × layers × bytes`` (not split by TP).
    Hybrid SWA models keep separate pools; here the SWA layers count at ``swa_full_tokens_ratio`` (0.8
    default) of the full-pool tokens **[assumed]**; Mamba layers hold per-request state, not per-token KV.
    ``layer_range`` ``(start, stop)``: only the decoder layers one pipeline stage holds (SGLang passes the rank's
    ``num_effective_layers = end_layer − start_layer``, ``sglang@0.5.23:sglang/srt/model_executor/
    pool_configurator.py::DefaultPoolConfigurator.__init__``; ``sglang@0.4.10`` and ``0.5.5``
    ``model_runner.py::ModelRunner.profile_max_num_token``); None: every layer. ``dsa_indexer`` False leaves the DSA
    indexer's keys out of an MLA cell, as SGLang 0.5.3 sized it (the indexer joined ``profile_max_num_token`` in
    0.5.4, sgl-project/sglang#11309).
    """
    c = model.text_config or model.config or {}
    start, stop = layer_range if layer_range is not None else (0, None)
    if model.is_mla:
        lat = int(c.get("kv_lora_rank") or 512) + int(c.get("qk_rope_head_dim") or 64)
        # a hybrid linear-attention model (Kimi Linear: KDA + MLA) keeps MLA only on its full-attention layers
        # (DefaultPoolConfigurator: num_layers = len(mambaish.full_attention_layer_ids), sglang@003fca80
        # python/sglang/srt/model_executor/pool_configurator.py); the other MLA models have MLA on every layer
        counts = layer_counts(model.layers, start, stop)
        n = model.num_layers if layer_range is None else max(0, layer_range[1] - layer_range[0])
        if any(ly.kind == "mamba" for ly, _ in counts):
            n = sum(k for ly, k in counts if ly.kind == "mla")
        idx = max((ly.index_head_dim for ly, _ in counts if ly.kind == "mla"), default=0)
        if idx and dsa_indexer:
            # DSA (DeepSeek V3.2, GLM-5): the indexer's uint8 key cache on every layer of the pool, including the
            # layers that reuse an earlier layer's top-k (the same _compute_cell_size, CUDA path)
            return (lat * kv_elem_bytes + dsa_indexer_bytes(idx)) * n, "MLA latent + DSA indexer keys"
        return lat * n * kv_elem_bytes, "MLA latent"
    full = swa = 0
    for ly, count in layer_counts(model.layers, start, stop):  # identical layers once, times their count
        if ly.kind in ("mamba", "none"):
            continue
        kvh = max(1, (ly.kv_heads or model.num_kv_heads) // max(1, tp))
        hs = ly.head_size or model.head_size
        b = kvh * (hs + (ly.head_size_v or hs)) * kv_elem_bytes * count
        if ly.kind in ("sliding", "chunked"):
            swa += b
        else:
            full += b
    if swa and full:
        return int(full + swa * swa_ratio), f"hybrid SWA pool (swa layers × {swa_ratio}) [assumed]"
    return full + swa, "MHA/GQA"


#: How a :class:`PlanError` for a pipeline SGLang cannot build begins (KV502 reports it at ``--pp-size``): more stages
#: than the model has layers, (before 0.5.0) an MLA model over several stages, or (0.5.3 - 0.5.20) a pipeline with
#: speculative decoding; each has its :class:`~kvlint.memory.refusal.PlanRefusal`
PP_REFUSED = "--pp-size"
#: How a :class:`PlanError` for a ``SGLANG_PP_LAYER_PARTITION`` SGLang refuses begins (its
#: :attr:`~kvlint.memory.refusal.PlanRefusal.SGLANG_PP_PARTITION`, which KV502 reports)
PP_PARTITION_REFUSED = "SGLANG_PP_LAYER_PARTITION"
#: From this release the default split gives the remainder layers one each to the last stages
#: (``get_pp_indices`` of the 0.5.13 – 0.5.23 wheels); 0.4.10 and 0.5.5 give all of it to the last stage (0.5.6 –
#: 0.5.12 not read)
PP_SPREAD_REMAINDER_FROM = (0, 5, 13)
#: Releases whose argument check asserts ``speculative_algorithm is None`` with pp > 1 ("Pipeline parallelism is not
#: compatible with overlap schedule, speculative decoding[, mixed chunked prefill]": ``server_args.py::ServerArgs.
#: check_server_args`` of 0.5.3 - 0.5.19 (0.5.11, 0.5.12, 0.5.14 and 0.5.17 read too), ``arg_groups/
#: validation_hook.py`` of 0.5.20 off NPU); 0.5.21 - 0.5.23 accept EAGLE in some settings (:func:`pp_spec_refusal`).
#: Model runners of the same releases also assert "PP is not compatible with MTP models" (0.5.3 - 0.5.20), after
#: this check.
PP_SPEC_REFUSED: tuple[SgVersion, SgVersion] = ((0, 5, 3), (0, 5, 20))
#: From this release attention DP is ``--attn-dp-size N`` (``attention_data_parallel_size``), and the older
#: ``--dp-size N --enable-dp-attention`` its deprecated spelling (``arg_groups/parallel_hook.py::
#: handle_deprecated_dp_attention``, read in the 0.5.22 and 0.5.23 wheels); attention DP is ``attn_dp_size > 1``, so
#: ``--enable-dp-attention`` at dp_size 1 adds nothing (0.5.3 - 0.5.21 add the DP-attention reserve term for it:
#: their dp_size == 1 reset runs after ``_handle_gpu_memory_settings``)
ATTN_DP_SIZE_FROM: SgVersion = (0, 5, 22)
#: From this release ``arg_groups/validation_hook.py::check_pipeline_parallel_compat`` replaces the blanket refusal
#: (read in the 0.5.21, 0.5.22 and 0.5.23 wheels): :func:`pp_spec_refusal`
PP_SPEC_EAGLE_FROM: SgVersion = (0, 5, 21)


def pp_spec_refusal(
    v: SgVersion, get: Callable[[str], Any], env: Mapping[str, str], *, dp_attention: bool
) -> str:
    """Why SGLang ``v`` >= :data:`PP_SPEC_EAGLE_FROM` refuses to start with pp > 1 and ``--speculative-algorithm``
    (an AssertionError of ``arg_groups/validation_hook.py::check_pipeline_parallel_compat`` in the 0.5.21 - 0.5.23
    wheels, quoted), "" when it accepts them or before that release (the older blanket refusal is
    :data:`PP_SPEC_REFUSED`). The algorithm is read after ``speculative_hook.py``'s normalisation (NEXTN is EAGLE):
    DSPARK needs ``--disaggregation-mode prefill`` and no ``SGLANG_ENABLE_PP_SPEC``; any other algorithm but EAGLE,
    or ``--enable-multi-layer-eagle``, is refused; EAGLE with ``SGLANG_ENABLE_PP_SPEC`` set true (``EnvBool``:
    true, 1, yes, y) is refused with PD disaggregation, ``--speculative-adaptive`` or DP attention (quoted as each
    release words it: "--enable-dp-attention" in 0.5.21, "attention DP (--attn-dp-size)" from 0.5.22), and without
    it anywhere but on a PD prefill node."""
    alg = sglang_spec.normalize_algorithm(get("speculative_algorithm"))
    if v < PP_SPEC_EAGLE_FROM or not alg:
        return ""
    alg = "EAGLE" if alg == "NEXTN" else alg
    mode = str(get("disaggregation_mode") or "null").strip().lower()
    pp_spec = _env_bool(env, "SGLANG_ENABLE_PP_SPEC")
    where = f"SGLang {v[0]}.{v[1]}.{v[2]} refuses to start"
    src = "arg_groups/validation_hook.py::check_pipeline_parallel_compat"
    if alg == "DSPARK":
        if mode != "prefill":
            return f"{where} ('Pipeline parallel DSPARK requires disaggregation-mode=prefill', {src})"
        if pp_spec:
            return f"{where} ('SGLANG_ENABLE_PP_SPEC does not support DSPARK PD prefill', {src})"
        return ""
    if alg != "EAGLE" or _truthy(get("enable_multi_layer_eagle")):
        return (
            f"{where} ('Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding', "
            f"{src})"
        )
    if pp_spec:
        if mode != "null":
            return f"{where} ('SGLANG_ENABLE_PP_SPEC is not compatible with --disaggregation-mode', {src})"
        if _truthy(get("speculative_adaptive")):
            return f"{where} ('SGLANG_ENABLE_PP_SPEC is not compatible with --speculative-adaptive', {src})"
        if dp_attention:
            # 0.5.21 names the switch; 0.5.22 and 0.5.23, where attention DP is --attn-dp-size, that option
            said = "attention DP (--attn-dp-size)" if v >= ATTN_DP_SIZE_FROM else "--enable-dp-attention"
            return f"{where} ('SGLANG_ENABLE_PP_SPEC is not compatible with {said}', {src})"
        return ""
    if mode != "prefill":
        return (
            f"{where} ('PP + speculative decoding (MTP) is only supported on prefill nodes "
            f"(disaggregation-mode=prefill)', {src}; SGLANG_ENABLE_PP_SPEC=1 lifts it outside PD)"
        )
    return ""


#: Up to this release the same assertion also refuses ``--enable-mixed-chunk`` with pp > 1 (0.5.3 - 0.5.10 read)
PP_MIXED_CHUNK_REFUSED_UNTIL: SgVersion = (0, 5, 10)
#: From this release the pipeline stages agree on the smallest stage's token count (``all_reduce(..., MIN)`` over
#: the world group in ``ModelRunner.init_memory_pool`` of 0.5.5, ``KVCacheConfigurator._apply_token_constraints``
#: in 0.5.16 – 0.5.23); 0.4.10's ``model_runner.py`` has no such step, each stage keeps its own pool and pp rank 0
#: prints its own (0.5.0 – 0.5.4 not read, taken as 0.5.5) [assumed]
PP_MIN_SYNC_FROM = (0, 5, 0)
#: From this release ``get_pp_indices`` ignores ``SGLANG_PP_LAYER_PARTITION`` when ``pp_size`` is 1 ("A singleton
#: draft PP group owns every layer and must ignore the target's process-global pipeline partition list"): present in
#: the 0.5.19, 0.5.20, 0.5.21, 0.5.22 and 0.5.23 wheels, absent from 0.5.18's, whose one stage checks the list
PP_PARTITION_IGNORED_ALONE_FROM = (0, 5, 19)


def pp_stage_layers(num_layers: int, pp: int, v: SgVersion, env: Mapping[str, str]) -> tuple[int, ...]:
    """Decoder layers each of SGLang's ``pp`` pipeline stages builds (``sglang/srt/distributed/utils.py::
    get_pp_indices`` and ``sglang/srt/utils/common.py::make_layers``, read in the 0.4.10, 0.5.5, 0.5.13, 0.5.16,
    0.5.18, 0.5.22 and 0.5.23 wheels).

    * ``make_layers`` asserts ``num_hidden_layers >= pp_size`` while the model is built: more stages than layers
      stop the start-up (AssertionError) — raised here as a :class:`PlanError` starting with :data:`PP_REFUSED`
      (:attr:`~kvlint.memory.refusal.PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS`).
    * ``SGLANG_PP_LAYER_PARTITION`` (``"8,8,8,8"``), when set (even empty), gives each stage's count: entries that
      are not integers raise ``ValueError("Invalid partition string: …")``, a count other than ``pp`` "len(partitions)=
      N does not match pp_size=P.", a sum other than the layers "sum(partitions)=S does not match num_hidden_layers=L."
      (a :class:`PlanError` starting with :data:`PP_PARTITION_REFUSED`, of
      :attr:`~kvlint.memory.refusal.PlanRefusal.SGLANG_PP_PARTITION`). With one stage it is ignored from 0.5.19
      (:data:`PP_PARTITION_IGNORED_ALONE_FROM`).
    * Otherwise ``num_layers // pp`` layers each; the remainder goes to the last stage up to 0.5.5 (0.4.10, 0.5.5),
      one each to the last ``num_layers % pp`` stages from 0.5.13 (:data:`PP_SPREAD_REMAINDER_FROM`).

    Returns the per-stage layer counts (summing to ``num_layers``). A negative entry, which SGLang does not refuse
    but builds no sensible stage from, is a :class:`PlanError` too (kvlint cannot size it).
    """
    pp = max(1, pp)
    if pp > 1 and num_layers < pp:
        raise PlanError(
            f"{PP_REFUSED} {pp} is more pipeline stages than the model's {num_layers} layers: SGLang's make_layers "
            "asserts num_hidden_layers >= pp_size while the model is built (AssertionError), so the scheduler exits "
            "before the KV pool is sized",
            PlanRefusal.SGLANG_PP_EXCEEDS_LAYERS,
        )
    raw = env.get(PP_PARTITION_REFUSED)
    if raw is not None and not (pp == 1 and v >= PP_PARTITION_IGNORED_ALONE_FROM):
        shown_raw = str(raw)[:80]  # the value as the messages quote it
        try:
            parts = [int(x) for x in str(raw).split(",")]
        except ValueError:
            raise PlanError(
                f"{PP_PARTITION_REFUSED}={shown_raw!r} is not a comma-separated list of layer counts: SGLang's "
                f"get_pp_indices raises ValueError('Invalid partition string: {shown_raw}') while the model is "
                "built",
                PlanRefusal.SGLANG_PP_PARTITION,
            ) from None
        if len(parts) != pp:
            raise PlanError(
                f"{PP_PARTITION_REFUSED}={shown_raw!r} has {len(parts)} entries for {pp} pipeline stage(s): SGLang's "
                f"get_pp_indices raises ValueError('len(partitions)={len(parts)} does not match pp_size={pp}.')",
                PlanRefusal.SGLANG_PP_PARTITION,
            )
        total = sum(parts)
        if total != num_layers:
            # a sum of two 4,300-digit entries has more digits than Python converts to text (int_max_str_digits)
            shown = (
                str(total)
                if abs(total) < 10**18
                else f"{'-' * (total < 0)}(a {len(parts)}-entry sum over 10^18)"
            )
            raise PlanError(
                f"{PP_PARTITION_REFUSED}={shown_raw!r} sums to {shown} layers, not the model's {num_layers}: "
                f"SGLang's get_pp_indices raises ValueError('sum(partitions)={shown} does not match "
                f"num_hidden_layers={num_layers}.')",
                PlanRefusal.SGLANG_PP_PARTITION,
            )
        if any(n < 0 for n in parts):
            raise PlanError(
                f"{PP_PARTITION_REFUSED}={shown_raw!r} gives a stage a negative layer count, which SGLang does "
                "not refuse but builds no sensible stage from; kvlint cannot size it",
                PlanRefusal.SGLANG_PP_PARTITION,
            )
        return tuple(parts)
    base, rem = divmod(num_layers, pp)
    if v >= PP_SPREAD_REMAINDER_FROM:
        return tuple(base + (1 if rank >= pp - rem else 0) for rank in range(pp))
    return tuple(base + (rem if rank == pp - 1 else 0) for rank in range(pp))


def check_context_length(
    model: ModelSpec, user: int | None, env: Mapping[str, str], v: SgVersion
) -> tuple[int, str, str | None]:
    """``(derived context length, config key, error)``: the ValueError text SGLang raises when the user's
    ``--context-length`` exceeds the derived length and ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`` is not
    set, else None (sglang@0.4.6-0.5.23: ``srt/configs/model_config.py::ModelConfig.__init__`` with
    ``_derive_context_length``)."""
    derived, key = derive_context_length(model, v)
    if user is None or user <= derived:
        return derived, key, None
    allow = env.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "").strip().lower() in ("1", "true")
    if allow:
        return derived, key, None
    return (
        derived,
        key,
        f"User-specified context_length ({user}) is greater than the derived context_length ({derived}). "
        "This may lead to incorrect model outputs or CUDA errors. Note that the derived context_length may "
        "differ from max_position_embeddings in the model's config. To allow overriding this maximum, set "
        "the env var SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
    )


@direct_init
@dataclass(frozen=True)
class SglangPlanDetail:
    """What :func:`plan_sglang_detailed` resolved beyond the :class:`MemoryPlan` (bytes per rank).

    ``rest_bytes`` is SGLang's ``rest`` after loading (``mfs × pre_free − weights − other``), less the hybrid state
    pool of a Mamba / linear-attention model (``mamba_state_bytes`` for ``max_mamba_cache_size`` slots, a count SGLang
    refuses when not positive; ``mamba_family`` names the state, empty for other models; ``mamba_ratio`` the state
    slots one running request takes, ``max_running_requests`` being at most ``max_mamba_cache_size // mamba_ratio``);
    ``minimum_mfs``
    the smallest fraction leaving a positive pool (``1 − available/pre``); ``context_error`` the ValueError
    text when ``--context-length`` exceeds the derived length without the env override.
    """

    plan: MemoryPlan
    version: SgVersion
    version_assumed: bool
    tp: int
    pp: int
    dp: int
    mem_fraction_static: float
    mfs_user: bool
    pre_free_bytes: int
    rest_bytes: int
    minimum_mfs: float
    max_total_num_tokens: int
    context_length: int
    derived_context_length: int
    context_error: str | None
    max_running_requests: int
    page_size: int
    chunked_prefill_size: int
    max_mamba_cache_size: int = 0
    mamba_state_bytes: int = 0
    mamba_family: str = ""
    mamba_ratio: int = 1
    request_table_rows: int = 0
    request_table_bytes: int = 0


#: Columns of SGLang's request-to-token table beyond ``context_len`` (``extra_max_context_len = 4``; the speculative
#: draft tokens are not counted), read in 0.5.5 and 0.5.9.
REQUEST_TABLE_EXTRA_COLUMNS = 4


def request_table_rows(
    v: SgVersion,
    user: int | None,
    max_running_requests: int,
    profiled_tokens: int,
    context_len: int,
    dp: int = 1,
) -> int:
    """Rows of SGLang's ``ReqToTokenPool.req_to_token`` (per DP worker), the GPU table of ``rows x (context_len + 4)``
    int32 that ``init_memory_pool`` (``KVCacheConfigurator._init_pools`` from 0.5.16) allocates after the KV budget
    was profiled and before the KV pool, outside ``mem_fraction_static`` (``sglang@0.5.23:sglang/srt/arg_groups/
    memory_hook.py``: ``reserved_mem`` has no term for it).

    * 0.4.x: the user's value, else ``clamp(int(profiled tokens / context_len x 512), 2048, 4096)``, plus one row
      before 0.4.7 (:func:`max_running_requests_04`'s pool rows; docs/engine-memory-model.md §3).
    * 0.5.0 - 0.5.9: the user's value as given, else the same clamp of the profiled tokens, without the ``tokens // 2``
      the scheduler's ``max_running_requests`` takes (``sglang@0.5.5:sglang/srt/model_executor/model_runner.py::
      ModelRunner.init_memory_pool``).
    * 0.5.10 - 0.5.13: ``min(user // dp, estimate)``, else ``min(estimate, tokens // 2)``, the estimate and the
      tokens of the pool after ``--max-total-tokens`` (``sglang@0.5.10`` - ``0.5.13:sglang/srt/model_executor/
      model_runner_kv_cache_mixin.py::_resolve_max_num_reqs(token_capacity)``, called by
      ``_resolve_memory_pool_config`` after ``_resolve_token_capacity``), plus a padding row from 0.5.12
      (:data:`REQUEST_TABLE_PADDING_ROW_FROM`).
    * from 0.5.14: ``max_running_requests`` (``min(user // dp, tokens // 2)``, else ``min(estimate, tokens // 2)``)
      plus the padding row (``sglang@0.5.23:sglang/srt/mem_cache/kv_cache_configurator.py::resolve_max_num_reqs``,
      ``memory_pool.py::ReqToTokenPool``: ``_alloc_size = size + 1``).

    ``profiled_tokens``: the pool the estimate is taken of, the profiled tokens before ``--max-total-tokens`` up to
    0.5.9 (``init_memory_pool`` takes it before the cap), the capped pool from 0.5.10.
    """
    est = min(4096, max(2048, int(profiled_tokens / context_len * 512))) if context_len > 0 else 2048
    if v < (0, 5, 0):
        return (user if user is not None else est) + (1 if v < (0, 4, 7) else 0)
    if v < (0, 5, 10):
        return user if user is not None else est
    if v < (0, 5, 14):
        rows = min(user // max(1, dp), est) if user is not None else min(est, profiled_tokens // 2)
        return rows + (1 if v >= REQUEST_TABLE_PADDING_ROW_FROM else 0)
    return max_running_requests + 1


#: From this release ``ReqToTokenPool`` allocates one padding row beyond its size (``sglang@0.5.12:sglang/srt/
#: mem_cache/memory_pool.py::ReqToTokenPool.__init__``: ``self._alloc_size = size + 1``, free slots from 1; absent in
#: 0.5.10 and 0.5.11, present in 0.5.13 - 0.5.23).
REQUEST_TABLE_PADDING_ROW_FROM = (0, 5, 12)


@dataclass  # a step record of one container's plans (like kvlint.memory.vllm.PlanPrelude): built, read, dropped
class SglangPrelude:
    """What :func:`plan_sglang_detailed` settles from the flags and the model alone, before the GPU enters: the
    same on every GPU, so :func:`kvlint.memory.stage.plan_fleet` computes it once per container
    (:func:`sglang_prelude`) and passes it to each GPU's plan.

    Attributes:
        version and version_assumed (:func:`sglang_version`); tp, pp, dp; deepep (DeepEP all-to-all);
        chunked_prefill_size, mem_fraction_static, max_total_tokens, context_length, max_running_requests: the
        user's values or None; cuda_graph_max_bs: read only without a user's mem_fraction_static (the default
        fraction's input); dp_attention (``--enable-dp-attention``: the default fraction, 0.4.x
        max_running_requests); dtype (resolved), kv_cache_dtype (the flag, ``auto`` when unset);
        kv_bytes_per_token (:func:`cell_size`, bytes per token per rank); weights_bytes (per rank, bytes) and
        weights_source; page_size (tokens); derived_context_length, context_key and context_error
        (:func:`check_context_length`); max_prefill_tokens: the flag's raw value (read only when
        chunked_prefill_size is not positive); era. The notes, kept apart so that each GPU's plan puts them
        where SGLang meets them: version_notes, model_notes (dtype, cell size, the pre-load heuristic),
        context_notes. mamba (:func:`kvlint.memory.sglang_mamba.state_shape`: one request's recurrent state on a
        rank, None for a model without one) with mamba_ratio / mamba_strategy (:func:`kvlint.memory.sglang_mamba.
        request_ratio`) and the flags that size the state pool: mamba_full_memory_ratio, max_mamba_cache_size,
        disable_radix_cache. dsa (:func:`is_sglang_dsa`, from :data:`DSA_FROM`) and dsa_indexer_in_cell: the DeepSeek
        sparse-attention defaults the plan applies once the GPU is known (:func:`dsa_kv_dtype`). prefill_graphs
        (:func:`kvlint.memory.sglang_graphs.prefill_graphs`, without a user's mem_fraction_static): what decides the
        default fraction's prefill CUDA-graph reserve; max_running_requests_flag: the user's --max-running-requests
        as written (before the speculative reset to 48), which caps the default decode graph batch from 0.5.22;
        disaggregation_mode, decode_graphs (:func:`kvlint.memory.sglang_graphs.decode_graphs_on`) and
        spec_draft_tokens (``--speculative-num-draft-tokens`` as written): the default fraction's terms from 0.5.15.
    """

    version: SgVersion
    version_assumed: bool
    tp: int
    pp: int
    dp: int
    deepep: bool
    chunked_prefill_size: int | None
    mem_fraction_static: float | None
    cuda_graph_max_bs: int | None
    dp_attention: bool
    dtype: str
    kv_cache_dtype: str
    kv_bytes_per_token: int
    weights_bytes: int
    weights_source: str
    page_size: int
    max_total_tokens: int | None
    context_length: int | None
    derived_context_length: int
    context_key: str
    context_error: str | None
    max_running_requests: int | None
    max_prefill_tokens: Any
    era: str
    version_notes: tuple[str, ...]
    model_notes: tuple[str, ...]
    context_notes: tuple[str, ...]
    mamba: sglang_mamba.StateShape | None = None
    mamba_ratio: int = 1
    mamba_strategy: str = ""
    mamba_full_memory_ratio: float = sglang_mamba.DEFAULT_FULL_MEMORY_RATIO
    max_mamba_cache_size: int | None = None
    disable_radix_cache: bool = False
    mm_reserve_bytes: int = 0
    stage_layers: tuple[int, ...] = ()
    stage_weights: tuple[int, ...] = ()
    stage_cells: tuple[int, ...] = ()
    dsa: bool = False
    dsa_indexer_in_cell: bool = True
    spec: sglang_spec.SpecSizing | None = None
    prefill_graphs: sglang_graphs.PrefillGraphs | None = None
    max_running_requests_flag: int | None = None
    disaggregation_mode: str = "null"
    decode_graphs: bool = True
    spec_draft_tokens: int | None = None
    mla_copies: tuple[int, int, str, str] | None = None


def _is_dsa(model: ModelSpec) -> bool:
    """Whether ``model`` keeps DSA indexer keys in its KV cell (DeepSeek V3.2, GLM-5: :func:`cell_size`)."""
    return model.is_mla and any(
        ly.kind == "mla" and ly.index_head_dim for ly, _ in layer_counts(model.layers)
    )


def _decode_graph_max_bs(v: SgVersion, get: Callable[[str], Any]) -> int | None:
    """The user's decode CUDA-graph batch the default fraction is sized with, None for the GPU tier's: the largest
    entry of a capture list when one is given (``cuda_graph_max_bs = max(cuda_graph_bs)`` after the tier's default,
    ``server_args.py::ServerArgs._handle_gpu_memory_settings`` of 0.5.3 - 0.5.18, ``memory_hook.py::
    handle_gpu_memory_settings`` of 0.5.19 - 0.5.23, where ``decode.max_bs = max(decode.bs)``), else the maximum
    (``--cuda-graph-max-bs``; from 0.5.14 ``--cuda-graph-max-bs-decode``, whose dest the older option shares, and
    ``--cuda-graph-config``'s ``decode.max_bs`` / ``decode.bs``, which win over the flags)."""
    js_bs = sglang_graphs.user_sizes(sglang_graphs.phase_setting(get, "decode", "bs"))
    js_max = as_int(sglang_graphs.phase_setting(get, "decode", "max_bs"))
    if v >= sglang_graphs.GRAPH_CONFIG_FROM:
        listed = js_bs or sglang_graphs.user_sizes(get("cuda_graph_bs_decode"))
        top = js_max if js_max is not None else as_int(get("cuda_graph_max_bs_decode"))
    else:
        listed, top = None, None
    listed = listed or sglang_graphs.user_sizes(get("cuda_graph_bs"))
    if listed:
        return max(listed)
    return top if top is not None else as_int(get("cuda_graph_max_bs"))


def _speculative(
    model: ModelSpec,
    v: SgVersion,
    get: Callable[[str], Any],
    w_all: int,
    dbytes: int,
    tp: int,
    draft: ModelSpec | None = None,
    model_path: str = "",
    attn_tp: int = 0,
) -> tuple[sglang_spec.SpecSizing | None, list[str]]:
    """``(sizing, notes)`` of ``--speculative-algorithm`` for SGLang ``v`` (:mod:`kvlint.memory.sglang_spec`): the
    EAGLE family (EAGLE, EAGLE3, NEXTN, STANDALONE) from 0.5.3 is sized (the default fraction's reserve, 0.5.3 - 0.5.6's
    token padding, the draft's layers in the cell from 0.5.15 when the draft is the target's MTP head); other
    algorithms and releases get a note that the draft is not counted. ``w_all`` the whole model's weight bytes,
    ``dbytes`` the model dtype's (the draft weights' estimate); ``draft`` a separate draft checkpoint's resolved
    config (:attr:`kvlint.types.ServingConfig.draft_model`): its layers are sized as SGLang sizes them and its
    weights estimated from its own shapes; ``model_path`` the target's ``--model-path`` (a draft path equal to it is
    the target's own MTP head); ``attn_tp`` the ranks the attention projections are split over under DP attention
    (0 or ``tp``: all of them), for an MTP head's weight estimate."""
    attn_tp = attn_tp if 0 < attn_tp < tp else tp
    alg = sglang_spec.normalize_algorithm(get("speculative_algorithm"))
    if not alg or alg == "NGRAM":  # NGRAM drafts from the prompt: no draft model, no draft KV
        return None, []
    shown = str(get("speculative_algorithm"))[:40]
    if alg not in sglang_spec.EAGLE_FAMILY or v < sglang_spec.SIZED_FROM:
        note = (
            f"not modelled: speculative decoding (--speculative-algorithm {shown}"
            f"{' on SGLang before 0.5.3' if alg in sglang_spec.EAGLE_FAMILY else ''}); SGLang also holds the "
            "draft's KV cache and the draft model's weights, so its pool differs from this plan "
            "(docs/engine-memory-model.md §3.3)"
        )
        reserve = sglang_spec.default_reserve_mib(v, alg)
        if not reserve:
            return None, [note]
        # 0.5.3 - 0.5.14 reserve for every algorithm but NGRAM (DFLASH from 0.5.13)
        return sglang_spec.SpecSizing(alg, 0, reserve, None), [note]
    notes: list[str] = []
    draft_path = str(get("speculative_draft_model_path") or "").strip()
    layers, why = sglang_spec.draft_kv_layers(model, v, alg, draft_path, model_path, draft)
    separate = draft is not None and layers is not None and bool(draft_path) and draft_path != model_path
    arch = model.architectures[0] if model.architectures else ""
    other = ""
    if any(ly.kind in ("mamba", "sliding", "chunked") for ly, _ in layer_counts(model.layers)):
        other = "a hybrid model's draft pool (its own SWA or state configurator)"
    elif arch == "DeepseekV4ForCausalLM":
        other = "DeepSeek V4's compressed-attention pools"
    if other and layers:
        notes.append(f"not modelled: the draft's KV layers in {other}; this plan sizes the target's alone")
        layers = None
    draft_w = 0
    if separate and draft is not None:
        # the draft checkpoint's own weights, over the same TP ranks (EAGLE heads that share the target's embedding
        # and output head state less; SGLang loads them after the pool either way)
        ddt = draft.torch_dtype or "bfloat16"
        draft_w = weight_bytes(draft, dtype_bytes=dtype_bytes("bfloat16" if ddt == "float32" else ddt))[
            0
        ] // max(1, tp)
    elif layers:
        per = _layer_params(model)
        body = max(
            0, w_all - model.vocab_size * model.hidden_size * dbytes * (1 if model.tie_word_embeddings else 2)
        )
        if per and sum(per):
            layer_w = body * per[-1] // sum(per)
            draft_w = layer_w // max(1, tp)
            if attn_tp < tp:
                # DP attention: the MTP layer's attention projections over the attention-TP group, as the target's
                # (attention_over_attn_tp), the rest over all TP ranks
                attn = _layer_attention_params(model)
                if attn and per[-1]:
                    share = min(1.0, attn / per[-1])
                    draft_w = int(layer_w * ((1 - share) / tp + share / attn_tp))
            draft_w *= layers
    reserve = sglang_spec.default_reserve_mib(v, alg)
    pad = None
    if v < sglang_spec.PAD_UNTIL:
        steps, topk, tokens = (
            as_int(get("speculative_num_steps")),
            as_int(get("speculative_eagle_topk")),
            as_int(get("speculative_num_draft_tokens")),
        )
        if steps is None:
            steps, topk, tokens = sglang_spec.auto_params_055(model, alg)
        topk = topk or 1
        if topk == 1:
            tokens = steps + 1
        if max(steps, topk, tokens or 0) > sglang_spec.MAX_SPEC_PARAM:
            notes.append(
                f"speculative decoding ({shown}): num_steps {steps}, eagle_topk {topk}, num_draft_tokens {tokens} "
                f"are absurd (kvlint plans at most {sglang_spec.MAX_SPEC_PARAM:,} each); SGLang 0.5.3 - 0.5.6's padding of "
                "the pool for the tokens in flight is not applied"
            )
        else:
            pad = (steps, topk, tokens or 0)
    spec = sglang_spec.SpecSizing(alg, layers or 0, reserve, pad, draft_w)
    if layers is None:
        notes.append(
            f"speculative decoding ({shown}): the draft's KV layers are not counted ({why}); "
            + (
                "SGLang sizes them with the target's, so its pool holds fewer tokens than this plan"
                if v >= sglang_spec.ONE_CELL_FROM
                else f"SGLang {v[0]}.{v[1]}.{v[2]} gives them a pool of the target's tokens after it, outside "
                "mem_fraction_static"
            )
        )
    elif layers == 0:
        # SGLang takes a stated num_nextn_predict_layers of 0 as the count (is not None), not as absent
        notes.append(
            f"speculative decoding ({shown}): SGLang {v[0]}.{v[1]}.{v[2]} sizes no draft KV layers with the target's "
            f"({why}: a count of 0 is taken as stated, not as absent); its draft worker allocates its own layers' KV "
            "for the same tokens after the pool is sized, outside mem_fraction_static"
        )
    elif v >= sglang_spec.ONE_CELL_FROM:
        notes.append(
            f"speculative decoding ({shown}): the draft's {layers} KV layer(s) share each token's cell with the "
            f"target's ({why})"
        )
    else:
        notes.append(
            f"speculative decoding ({shown}): SGLang {v[0]}.{v[1]}.{v[2]} sizes the pool over the target's layers; "
            f"the draft's {layers} layer(s) ({why}) get a pool of the same tokens after it, outside "
            "mem_fraction_static"
        )
    if draft_w and separate:
        notes.append(
            f"the draft checkpoint's weights (about {draft_w / GiB:.2f} GiB per rank, from its config) and CUDA graphs "
            "are loaded after the KV pool is sized, from the memory mem_fraction_static leaves"
        )
    elif draft_w:
        notes.append(
            f"the draft's weights (about {draft_w / GiB:.2f} GiB per rank, {layers} MTP layer(s) at the last decoder "
            "layer's size) and CUDA graphs are loaded after the KV pool is sized, from the memory mem_fraction_static "
            "leaves"
        )
    elif layers is None:
        notes.append(
            "the draft model's weights and CUDA graphs are loaded after the KV pool is sized, from the memory "
            "mem_fraction_static leaves (not counted)"
        )
    return spec, notes


def _layer_params(model: ModelSpec) -> tuple[int, ...]:
    """Parameters (elements) of each decoder layer's linear and expert weights, from the model's own shapes
    (:func:`kvlint.models.weights._param_breakdown`'s per-module list); ``()`` when it lists none."""
    from kvlint.models.weights import _param_breakdown

    sink: list[tuple[str, int, str]] = []
    _param_breakdown(model, sink)
    per = [0] * model.num_layers
    for name, n, _part in sink:
        head, _, rest = name.partition(".")
        idx = rest.partition(".")[0]
        if head == "layers" and idx.isdigit() and int(idx) < len(per):
            per[int(idx)] += n
    return tuple(per) if sum(per) > 0 else ()


def _layer_attention_params(model: ModelSpec) -> int:
    """Parameters (elements) of the last decoder layer's attention projections (``self_attn`` modules of
    :func:`kvlint.models.weights._param_breakdown`); 0 when it lists none."""
    from kvlint.models.weights import _param_breakdown

    sink: list[tuple[str, int, str]] = []
    _param_breakdown(model, sink)
    last = f"layers.{model.num_layers - 1}.self_attn."
    return sum(n for name, n, _part in sink if name.startswith(last))


#: ``--moe-dense-tp-size`` first exists in the 0.4.6 wheel (``ServerArgs.moe_dense_tp_size``; absent from 0.4.4's)
MOE_DENSE_TP_FROM: SgVersion = (0, 4, 6)
#: Architectures whose SGLang model builds the dense MLP of its non-MoE decoder layers whole on every TP rank when
#: ``--moe-dense-tp-size 1`` (``DeepseekV2MLP(..., tp_rank=0, tp_size=1)`` behind
#: ``DeepseekV2DecoderLayer._enable_moe_dense_fully_dp()`` in sglang@0.4.6 ``srt/models/deepseek_v2.py``;
#: ``layers/communicator.py::enable_moe_dense_fully_dp`` in the 0.4.10 – 0.5.21 wheels, ``parallel_group=
#: "replicated"`` behind ``layers/layer_boundary/layout.py::is_dense_ffn_fully_dp`` in 0.5.22 and 0.5.23): the
#: ``EntryClass`` of ``deepseek_v2.py`` (0.4.6 on), ``glm4_moe.py`` (0.4.10 on), ``bailing_moe.py``, ``ernie4.py``
#: (0.5.5 on), ``glm4_moe_lite.py``, ``llada2.py``, ``mimo_v2_flash.py`` (0.5.9 on), ``sarvam_moe.py`` (0.5.10 on),
#: ``mimo_v2.py`` (0.5.11 on), ``minimax_m3.py`` (0.5.16 on), ``bailing_moe_v3.py`` (0.5.19 on), ``xllm.py``,
#: ``glm5_next.py`` (0.5.21 on), ``dots3.py`` (``Dots3NoteForCausalLM``, ``dots3_common/modeling.py``: ``Dots3MLP(...,
#: tp_rank=0, tp_size=1)`` behind ``enable_moe_dense_fully_dp()`` in the 0.5.20 wheel, ``parallel_group=
#: "replicated"`` behind ``is_dense_ffn_fully_dp()`` in 0.5.23): every release read that builds one of these models
#: honours the flag. Other models (Qwen2/Qwen3-MoE and their shared experts, Mixtral, gpt-oss, Llama 4, ...) never
#: read it; nor does ``beam.py`` (``BeamForCausalLM``, 0.5.23), which refuses ``moe_dense_tp_size=1``
#: ("Beam shards dense MLP layers over the full TP group", NotImplementedError at load). ``mimo_v2_nextn.py``'s
#: ``MiMoV2MTP`` honours it too, a draft model's, not a served architecture's.
_SG_MOE_DENSE_TP_ARCHS = frozenset(
    {
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "Glm4MoeForCausalLM",
        "GlmMoeDsaForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "BailingMoEForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "Ernie4_5_MoeForCausalLM",
        "Ernie4_5_ForCausalLM",
        "LLaDA2MoeModelLM",
        "SarvamMLAForCausalLM",
        "SarvamMoEForCausalLM",
        "MiMoV2FlashForCausalLM",
        "MiMoV2ForCausalLM",
        "MiniMaxM3SparseForCausalLM",
        "XllmForCausalLM",
        "K2HorizonForCausalLM",
        "Glm5NextForConditionalGeneration",
        "Dots3NoteForCausalLM",
    }
)

#: The architectures SGLang's DeepSeek-family defaults are declared for (where prefill context parallelism sets
#: ``moe_dense_tp_size`` itself, :func:`auto_moe_dense_tp`), among :data:`_SG_MOE_DENSE_TP_ARCHS`, with the first
#: sampled wheel whose list names them: ``server_args.py::ServerArgs._handle_model_specific_adjustments``'s
#: ``model_arch in [...]`` (0.5.8 - 0.5.13), ``arg_groups/overrides.py::_deepseek_family_overrides``'s
#: ``@_register_for(...)`` (0.5.16), ``arg_groups/model_overrides/deepseek_v2.py`` (0.5.20, 0.5.23).
_SG_CP_FAMILY_FROM: dict[str, SgVersion] = {
    "DeepseekV3ForCausalLM": (0, 5, 8),
    "GlmMoeDsaForCausalLM": (0, 5, 10),
    "DeepseekV32ForCausalLM": (0, 5, 13),
    "Glm5NextForConditionalGeneration": (0, 5, 20),
    "Dots3NoteForCausalLM": (0, 5, 20),
}
#: The first sampled wheels in which prefill context parallelism sets ``moe_dense_tp_size = 1``: for a DSA model
#: (DeepSeek V3.2, GLM-5; ``is_deepseek_dsa``) on a CUDA/ROCm GPU from 0.5.8 (``--enable-nsa-prefill-context-
#: parallel``, either ``--nsa-prefill-cp-mode``; 0.5.5 has no such block); for the other MLA models (DeepSeek V3/R1,
#: ``use_mla_backend()``) from 0.5.13 (``--enable-prefill-context-parallel``; 0.5.10 has the flag and leaves
#: ``moe_dense_tp_size`` alone); from 0.5.23 the DSA models only with ``--cp-strategy zigzag`` (the ``interleave``
#: strategy keeps it).
CP_DENSE_DSA_FROM: SgVersion = (0, 5, 8)
CP_DENSE_MLA_FROM: SgVersion = (0, 5, 13)
CP_DENSE_DSA_ZIGZAG_FROM: SgVersion = (0, 5, 23)
#: From this sampled wheel every prefill-CP option sets the one ``enable_prefill_cp`` (0.5.16 ``server_args.py``:
#: ``--enable-prefill-context-parallel`` and the deprecated ``--enable-dsa-prefill-context-parallel`` /
#: ``--enable-nsa-prefill-context-parallel`` fold into it); before, the DSA block read its own option
#: (``enable_nsa_prefill_context_parallel`` in 0.5.8 and 0.5.10, ``enable_dsa_prefill_context_parallel``, which
#: the ``nsa`` spelling also sets, in 0.5.13) and the MLA block ``enable_prefill_context_parallel``.
CP_ONE_OPTION_FROM: SgVersion = (0, 5, 16)
_CP_OPTIONS_DSA = ("enable_nsa_prefill_context_parallel", "enable_dsa_prefill_context_parallel")
_CP_OPTIONS_ALL = (*_CP_OPTIONS_DSA, "enable_prefill_context_parallel", "enable_prefill_cp")


def auto_moe_dense_tp(model: ModelSpec, v: SgVersion, get: Callable[[str], Any]) -> str:
    """The prefill-context-parallel option that makes SGLang set ``moe_dense_tp_size = 1`` itself, whatever
    ``--moe-dense-tp-size`` says, or "" when it does not (then the flag as given decides).

    SGLang's DeepSeek-family defaults (:data:`_SG_CP_FAMILY_FROM`) force it under prefill context parallelism,
    "For MLA CP, we have the following restrictions: moe_dense_tp_size == 1, moe_a2a_backend == deepep, ep_size ==
    tp_size": sglang@0.5.23 ``arg_groups/model_overrides/deepseek_v2.py::_deepseek_family_overrides``
    (``overrides["moe_dense_tp_size"] = 1`` in the DSA block on a CUDA/ROCm GPU when ``cfg.enable_prefill_cp`` and
    ``cfg.cp_strategy == "zigzag"``, and in the MLA block when ``cfg.enable_prefill_cp and
    use_mla_backend(server_args)``); the same blocks in ``server_args.py`` of the 0.5.8 - 0.5.13 wheels and in
    ``arg_groups/overrides.py`` of 0.5.16, ``model_overrides/deepseek_v2.py`` of 0.5.20, with the releases of
    :data:`CP_DENSE_DSA_FROM`, :data:`CP_DENSE_MLA_FROM`, :data:`CP_DENSE_DSA_ZIGZAG_FROM` and the options of
    :data:`CP_ONE_OPTION_FROM`. Only the setting of ``moe_dense_tp_size`` is modelled here (the attention-DP and
    expert-parallel sizes these blocks also set are not). Releases between sampled wheels take the older one's
    behaviour."""
    arch = model.architectures[0] if model.architectures else ""
    since = _SG_CP_FAMILY_FROM.get(arch)
    if since is None or v < since or not model.is_mla:
        return ""
    dsa = _is_dsa(model)
    if v >= CP_ONE_OPTION_FROM:
        names: tuple[str, ...] = _CP_OPTIONS_ALL
    else:
        names = _CP_OPTIONS_DSA if dsa else ("enable_prefill_context_parallel",)
    given = next((n for n in names if get(n) is True), None)
    if given is None:
        return ""
    if dsa:
        if v < CP_DENSE_DSA_FROM:
            return ""
        if v >= CP_DENSE_DSA_ZIGZAG_FROM and get("cp_strategy") != "zigzag":
            return ""
    elif v < CP_DENSE_MLA_FROM:
        return ""
    return (
        "--"
        + given.replace("_", "-")
        + (" --cp-strategy zigzag" if dsa and v >= CP_DENSE_DSA_ZIGZAG_FROM else "")
    )


def moe_dense_whole_bytes(
    model: ModelSpec, v: SgVersion, moe_dense_tp_size: int | None, tp: int, dbytes: int, quant: str | None
) -> tuple[tuple[int, ...], str]:
    """Bytes each TP rank holds beyond an even ``1/tp`` share because of ``--moe-dense-tp-size 1``, per decoder
    layer, and a note (``((), "")`` when the flag does not apply).

    With ``moe_dense_tp_size == 1`` SGLang builds the dense MLP of the non-MoE layers (DeepSeek-V3's first three,
    ``first_k_dense_replace``) unsplit on every TP rank, for the architectures of :data:`_SG_MOE_DENSE_TP_ARCHS`
    from 0.4.6; the MoE layers (routed and shared experts) keep their own split. A dense MLP of ``B`` bytes
    (:func:`kvlint.models.weights.dense_mlp_layer_bytes`, quantized as the checkpoint is) then adds
    ``B × (1 − 1/tp)`` per rank. ``moe_dense_tp_size`` equal to ``tp`` (accepted from 0.5.13) or unset changes
    nothing. See docs/engine-memory-model.md §3.3."""
    if moe_dense_tp_size != 1 or tp <= 1 or v < MOE_DENSE_TP_FROM:
        return (), ""
    arch = model.architectures[0] if model.architectures else ""
    if arch not in _SG_MOE_DENSE_TP_ARCHS:
        return (), ""
    per = dense_mlp_layer_bytes(model, dtype_bytes=dbytes, quantization=quant)
    extra = tuple(int(b * (1 - 1 / tp)) for b in per)
    total = sum(extra)
    if not total:
        return (), ""
    dense = sum(1 for b in per if b)
    return extra, (
        f"--moe-dense-tp-size 1: the dense MLP of {dense} non-MoE layer(s) is whole on every TP rank "
        f"({sum(per) / GiB:.2f} GiB, +{total / GiB:.2f} GiB per rank over 1/{tp}; {arch} in SGLang "
        f"{v[0]}.{v[1]}.{v[2]})"
    )


def _layer_bytes(model: ModelSpec, dbytes: int, quantization: str | None) -> tuple[int, ...]:
    """Bytes of each decoder layer's linear and expert weights, priced as the plan's weights are
    (:func:`kvlint.models.weights.decoder_layer_bytes`: the checkpoint's rate, a module its quantization config
    keeps unquantized at the model dtype, packed experts at their own rate); the parameter counts of
    :func:`_layer_params` when it lists no layer."""
    per = tuple(a + b for a, b in decoder_layer_bytes(model, dtype_bytes=dbytes, quantization=quantization))
    return per if len(per) == model.num_layers and sum(per) > 0 else _layer_params(model)


def _stage_weights(
    model: ModelSpec,
    w_all: int,
    dbytes: int,
    tp: int,
    split: tuple[int, ...],
    replicated: int = 0,
    quantization: str | None = None,
) -> tuple[int, ...]:
    """Weight bytes per TP rank of each pipeline stage: the stage's share of the decoder layers' bytes, the input
    embedding on the first stage (``if self.pp_group.is_first_rank: self.embed_tokens = ...``, a ``PPMissingLayer``
    elsewhere) and the output head on the last (``if self.pp_group.is_last_rank``), an own copy even when the
    embeddings are tied, as Qwen2's does under several stages (``sglang@0.5.23:sglang/srt/models/qwen2.py::
    Qwen2ForCausalLM.__init__``: ``world_size == 1 and tie_word_embeddings`` alone shares them), all split over
    ``tp``, plus the stage's share (by layer count) of ``replicated``, what each TP rank holds whole
    (:func:`kvlint.models.weights.tp_replicated_bytes`). SGLang builds only the stage's own layers
    (``sglang@0.5.23:sglang/srt/utils/common.py::make_layers`` over ``get_pp_indices``, ``PPMissingLayer`` for the
    others), so the share of the layers' bytes is by each layer's bytes (:func:`_layer_bytes`, ``quantization`` the
    ``--quantization`` flag): DeepSeek-V3's three dense layers hold 0.58 B parameters each, its MoE layers 11.5 B, and
    where a checkpoint keeps the dense layers unquantized beside 4-bit experts (GLM-5.1-NVFP4's first three layers)
    they weigh 3.6 times their parameter share (by parameter count until branch memory54); by layer count when the
    shapes are not known. The embedding is ``vocab_size × hidden_size`` at the model dtype (``dbytes``)."""
    embed = model.vocab_size * model.hidden_size * dbytes
    lm = 0 if model.tie_word_embeddings else embed
    body = max(0, w_all - embed - lm)
    layers = max(1, sum(split))
    per = _layer_bytes(model, dbytes, quantization) if sum(split) == model.num_layers else ()
    total = sum(per)
    out = []
    start = 0
    for rank, n in enumerate(split):
        w = body * sum(per[start : start + n]) // total if per else body * n // layers
        start += n
        if rank == 0:
            w += embed
        if rank == len(split) - 1:
            w += lm or embed
        out.append(w // max(1, tp) + replicated * n // layers)
    return tuple(out)


#: Architectures SGLang treats as DeepSeek sparse attention (DSA, "NSA" before 0.5.8) when the config has
#: ``index_topk``: ``configs/model_config.py::is_deepseek_nsa`` (0.5.3 – 0.5.7, ``is_deepseek_dsa`` later; the later
#: releases add GLM-5 and others, for which the server-argument defaults below do not apply, 0.5.23's
#: ``_DEEPSEEK_FAMILY_ARCHS``).
_SG_DSA_ARCHS = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLMNextN"})
#: The first release read that serves DeepSeek V3.2 (the DSA defaults of :func:`dsa_server_defaults` start there).
DSA_FROM: SgVersion = (0, 5, 3)
#: The architectures served by ``sglang/srt/models/deepseek_v2.py``, which split the input embedding over the
#: attention-TP group with DP attention, as they split the MLA attention projections
#: (:func:`kvlint.models.weights.tp_replicated_bytes` with ``attn_tp``).
_SG_DEEPSEEK_V2_ARCHS = frozenset(
    {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"}
)


def mla_absorbed_copy_bytes(
    model: ModelSpec, head_ranks: int, dbytes: int, *, hip: bool = False
) -> tuple[int, str]:
    """Bytes per rank of the ``w_kc`` / ``w_vc`` copies of MLA's ``kv_b_proj`` that SGLang's DeepSeek-V2 family keeps
    beside the projection itself, summed over the decoder layers (a pipeline stage holds its layers' share), and a
    note saying what they are; ``(0, "")`` for other models.

    Source: ``DeepseekV2ForCausalLM.post_load_weights`` (sglang@0.5.3 and 0.5.4 ``srt/models/deepseek_v2.py``;
    ``DeepseekWeightLoader`` in ``srt/models/deepseek_common/deepseek_weight_loader.py`` in the 0.5.13 and 0.5.23
    wheels, the same code), run at the end of the weight loading, before SGLang measures the free memory the KV pool
    is sized from: ``w = kv_b_proj.weight`` is split into ``w_kc`` (``transpose(1, 2).contiguous()``) and ``w_vc``
    (``contiguous()``), new tensors of ``kv_lora_rank x local heads x (qk_nope_head_dim + v_head_dim)`` elements
    in all, while ``kv_b_proj`` stays loaded. An fp8 checkpoint with 128 x 128 blocks on CUDA (``_is_cuda and
    weight_block_size[0] == 128 and weight_block_size[1] == 128``) is first dequantized to bfloat16
    (``block_quant_dequant(..., torch.bfloat16)``), so its copies take 2 B per element; with other blocks, or on ROCm
    (``hip``: ``_is_cuda`` is false), it is requantized per tensor (``block_quant_to_tensor_quant``, 1 B), as an fp8
    checkpoint without blocks is (``channel_quant_to_tensor_quant``, 1 B); the others keep the loaded weight's dtype
    (the model dtype, ``dbytes``; AWQ's ``awq_dequantize``, **[assumed]** 2 B).
    ``head_ranks``: the ranks the attention heads are split over (the attention-TP group with DP attention).
    Not modelled: ``SGLANG_USE_DEEPGEMM_BMM`` (``SGL_USE_DEEPGEMM_BMM`` in 0.5.3) on a Hopper GPU, which keeps fp8
    copies (1 B per element) instead.
    """
    arch = model.architectures[0] if model.architectures else ""
    if not model.is_mla or arch not in _SG_DEEPSEEK_V2_ARCHS:
        return 0, ""
    t = model.text_config or model.config
    kv_lora = as_int(t.get("kv_lora_rank")) or 0
    nope = as_int(t.get("qk_nope_head_dim")) or 0
    v_dim = as_int(t.get("v_head_dim")) or nope
    layers = sum(1 for layer in model.layers if layer.kind == "mla")
    heads = max(1, model.num_attention_heads // max(1, head_ranks))
    if not (kv_lora and nope and layers):
        return 0, ""
    qc = model.quant_config or {}
    if model.quant_method == "fp8":
        blocks = qc.get("weight_block_size")
        if isinstance(blocks, list) and [as_int(b) for b in blocks[:2]] == [128, 128] and not hip:
            elem, how = 2, "bfloat16, dequantized from the fp8 blocks"
        else:
            elem, how = 1, "fp8, requantized per tensor" + (" (ROCm)" if hip and blocks else "")
    else:
        elem, how = dbytes, "the weight's dtype"
    size = layers * heads * (nope + v_dim) * kv_lora * elem
    return size, (
        f"MLA w_kc / w_vc: copies of kv_b_proj SGLang keeps after loading ({layers} layers x {heads} heads x "
        f"{nope + v_dim} x {kv_lora} x {elem} B, {how}): +{size / GiB:.2f} GiB per rank"
    )


#: From this release the DeepSeek-V2 family's input embedding is split over the attention-TP group with DP attention
#: (``use_attn_tp_group=is_dp_attention_enabled()`` in the 0.5.8 wheel's models/deepseek_v2.py; before it, 0.5.3 -
#: 0.5.7, ``enable_tp=not is_dp_attention_enabled()``: the whole table on every rank)
EMBED_ATTN_TP_FROM: SgVersion = (0, 5, 8)

#: Architectures outside the DeepSeek-V2 family whose SGLang model builds the input embedding with
#: ``enable_tp=not is_dp_attention_enabled()`` (the whole table on every rank with DP attention) up to 0.5.8 and with
#: ``use_attn_tp_group=is_dp_attention_enabled()`` from :data:`EMBED_ATTN_TP_OTHERS_FROM`: ``Qwen2Model`` (Qwen2, and
#: Qwen3 through ``Qwen3Model(Qwen2Model)``), ``Qwen2MoeModel`` (Qwen2-MoE, Qwen3-MoE), GLM-4.5 MoE, gpt-oss, Llama 4,
#: Qwen3-Next, Bailing (``models/qwen2.py``, ``qwen2_moe.py``, ``glm4_moe.py``, ``gpt_oss.py``, ``llama4.py``,
#: ``qwen3_next.py``, ``bailing_moe.py`` of the 0.5.3, 0.5.8, 0.5.9, 0.5.13 and 0.5.23 wheels). Llama, Mistral and the
#: others keep the embedding over the whole TP group.
_SG_EMBED_DP_ARCHS = frozenset(
    {
        "Qwen2ForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen2MoeForCausalLM",
        "Qwen3MoeForCausalLM",
        "Glm4MoeForCausalLM",
        "GptOssForCausalLM",
        "Llama4ForCausalLM",
        "Llama4ForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
    }
)
#: From this release the architectures of :data:`_SG_EMBED_DP_ARCHS` split their input embedding over the
#: attention-TP group with DP attention (the 0.5.9 wheel; 0.5.8's replicate it)
EMBED_ATTN_TP_OTHERS_FROM: SgVersion = (0, 5, 9)
#: ``SGLANG_ENABLE_EMBED_REPLICATION`` (``layers/vocab_parallel_embedding.py::get_embedding_tp_kwargs``): the
#: DeepSeek-V2 family's whole input embedding on every rank, with or without DP attention (in the 0.5.13, 0.5.16 and
#: 0.5.23 wheels, not in 0.5.10's)
EMBED_REPLICATION_FROM: SgVersion = (0, 5, 13)
#: Architectures whose output head follows ``--enable-dp-lm-head`` (``ParallelLMHead(...,
#: use_attn_tp_group=enable_dp_lm_head)``: over the attention-TP group), read in the 0.5.3, 0.5.8, 0.5.9, 0.5.13
#: and 0.5.23 wheels; Qwen3's from 0.5.8 (0.5.3 - 0.5.7 keep it over the whole TP group); Qwen2 and Llama 4 never
_SG_DP_LM_HEAD_ARCHS = frozenset(
    {
        "LlamaForCausalLM",
        "Qwen2MoeForCausalLM",
        "Qwen3MoeForCausalLM",
        "Glm4MoeForCausalLM",
        "GptOssForCausalLM",
        "Qwen3NextForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
        "DeepseekV2ForCausalLM",
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
    }
)


#: SGLang's switch for sizing the KV pool after CUDA-graph capture (``environ.py``: ``EnvBool(False)``), first in the
#: 0.5.16 wheel (absent from 0.5.15's); :func:`plan_sglang_detailed` notes it as not modelled
POST_CAPTURE_KV_SIZING_ENV = "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING"
POST_CAPTURE_KV_SIZING_FROM: SgVersion = (0, 5, 16)


def _env_bool(env: Mapping[str, str], name: str) -> bool:
    """An environment variable as SGLang's ``EnvBool`` reads it (``sglang/srt/environ.py`` ``EnvBool.parse``, the
    0.5.10 - 0.5.23 wheels: the value lowered, not stripped, true for ``true``/``1``/``yes``/``y``; any other value,
    ``on`` or ``" 1"`` among them, is invalid and ``EnvField.get`` warns and keeps the default, False for the
    switches read here)."""
    return str(env.get(name, "")).lower() in ("true", "1", "yes", "y")


def post_capture_kv_sizing(v: SgVersion, env: Mapping[str, str], model: ModelSpec) -> bool:
    """Whether ``SGLANG_ENABLE_POST_CAPTURE_KV_SIZING`` may size the KV pool after CUDA-graph capture (SGLang 0.5.16
    on, CUDA, no MLA: the conditions of ``arg_groups/overrides.py::post_capture_kv_sizing_planned`` kvlint reads;
    the pool is then a virtual reservation until ``kv_pool_runtime.py::compute_post_capture_kv_resize`` fits it to
    the free memory measured after capture, so what was allocated before it, such as the request table, shrinks it
    instead of failing; read in the 0.5.23 wheel)."""
    return (
        v >= POST_CAPTURE_KV_SIZING_FROM and not model.is_mla and _env_bool(env, POST_CAPTURE_KV_SIZING_ENV)
    )


def _truthy(value: Any) -> bool:
    """A switch among the server arguments as kvlint stores them (a flag given, or a ``--config`` value): ``1``,
    ``true``, ``yes``, ``on``. Environment variables are read by :func:`_env_bool`, as SGLang's ``EnvBool`` does."""
    return str(value or "").strip().lower() in ("1", "true", "yes", "on")


#: Architectures whose SGLang attention builds its projections over the attention-TP group with DP attention
#: (``QKVParallelLinear`` / ``ColumnParallelLinear`` / ``RowParallelLinear`` with ``tp_size=attn_tp_size`` or
#: ``parallel_group="attn_tp"``), as ``(from, until)`` releases (None: every release read): the model files of the
#: 0.5.3 - 0.5.8, 0.5.13, 0.5.15 and 0.5.23 wheels, and the multimodal / draft wrappers that import those models'
#: layers. A boundary is the first wheel read that shows the change (0.5.9 - 0.5.12 and 0.5.16 - 0.5.22 not read).
#: Every other architecture (Llama, Qwen2, Mistral, Mixtral, Gemma, Phi-3, ...) keeps its attention over the whole
#: TP group in every wheel read.
_SG_ATTN_TP_SPLIT: dict[str, tuple[SgVersion | None, SgVersion | None]] = {
    **dict.fromkeys(
        (
            "BailingMoEForCausalLM",
            "BailingMoeForCausalLM",
            "BailingMoeV2ForCausalLM",
            "BailingMoeV3ForCausalLM",
            "BeamForCausalLM",
            "DeepseekV2ForCausalLM",
            "DeepseekV32ForCausalLM",
            "DeepseekV3ForCausalLM",
            "DeepseekV3ForCausalLMNextN",
            "DeepseekV4ForCausalLM",
            "DeepseekVL2ForCausalLM",
            "Exaone4ForCausalLM",
            "ExaoneMoEForCausalLM",
            "ExaoneMoeForCausalLM",
            "FalconH1ForCausalLM",
            "GigaChat35ForCausalLM",
            "Glm4MoeForCausalLM",
            "Glm4MoeForCausalLMNextN",
            "Glm4MoeLiteForCausalLM",
            "Glm4vMoeForConditionalGeneration",
            "GlmMoeDsaForCausalLM",
            "GlmMoeDsaForCausalLMNextN",
            "GptOssForCausalLM",
            "HYV4ForCausalLM",
            "IQuestQ1ForCausalLM",
            "InternS2MobiusForConditionalGeneration",
            "K2HorizonForCausalLM",
            "KimiK3ForConditionalGeneration",
            "KimiK3LinearForCausalLM",
            "KimiVLForConditionalGeneration",
            "LLaDA2MoeModelLM",
            "LagunaForCausalLM",
            "Llama4ForCausalLM",
            "Llama4ForConditionalGeneration",
            "MellumForCausalLM",
            "MiMoV2FlashForCausalLM",
            "MiMoV2ForCausalLM",
            "MiniMaxM3SparseForCausalLM",
            "MistralLarge3ForCausalLM",
            "MossVLForConditionalGeneration",
            "PhiMoEForCausalLM",
            "Qwen2MoeForCausalLM",
            "Qwen3ForCausalLM",
            "Qwen3MoeForCausalLM",
            "Qwen3NextForCausalLM",
            "Qwen3NextForCausalLMMTP",
            "Qwen3VLForConditionalGeneration",
            "Qwen3VLMoeForConditionalGeneration",
            "Qwen3_5ForConditionalGeneration",
            "Qwen3_5MoeForConditionalGeneration",
            "SDARForCausalLM",
            "SDARMoeForCausalLM",
            "SarvamMLAForCausalLM",
            "SarvamMoEForCausalLM",
            "Spark2_5ForCausalLM",
            "Step3VLForConditionalGeneration",
            "Step3p5ForCausalLM",
            "XllmForCausalLM",
        ),
        (None, None),
    ),
    "Grok1ForCausalLM": (None, (0, 5, 23)),
    "Grok1ModelForCausalLM": (None, (0, 5, 23)),
    "KimiLinearForCausalLM": ((0, 5, 13), None),
    "MiniMaxM2ForCausalLM": ((0, 5, 13), None),
    "NemotronHForCausalLMMTP": ((0, 5, 15), None),
    "BailingMoeV2_5ForCausalLM": ((0, 5, 23), None),
    "Glm4vForConditionalGeneration": ((0, 5, 23), None),
    "NemotronHForCausalLM": ((0, 5, 23), None),
    "NemotronHPuzzleForCausalLM": ((0, 5, 23), None),
}


#: The architectures whose SGLang model builds its vision encoder whole on every TP rank under
#: ``--mm-enable-dp-encoder`` (``self.use_data_parallel = get_global_server_args().mm_enable_dp_encoder``, 0.5.23's
#: ``get_mm().mm_enable_dp_encoder``, passed to the vision blocks and mergers, which then take ``tp_size = 1``), read
#: in the 0.5.8 and 0.5.23 wheels: ``sglang/srt/models/qwen2_5_vl.py`` (``Qwen2_5_VLForConditionalGeneration``),
#: ``qwen3_vl.py`` (``Qwen3VLForConditionalGeneration``, and ``qwen3_vl_moe.py::Qwen3VLMoeForConditionalGeneration``,
#: whose ``__init__`` is its), ``glm4v.py`` (``Glm4vForConditionalGeneration``, GLM-4.1V), ``glm4v_moe.py``
#: (``Glm4vMoeForConditionalGeneration``, sgl-project/sglang#14097, GLM-4.5V / GLM-4.6V) and ``internvl.py``
#: (``InternVLChatModel``); Qwen3-VL and GLM-4.1V were left out until branch review54A. **[assumed]** the model files
#: that read it in 0.5.23 only (``kimi_vl.py``, ``kimi_k25.py``, ``glm_ocr.py``, ``mimo_vl.py``, ``bailing_mm*.py``,
#: ``minimax_m3_vl.py`` ...) are not listed: the first release of each is not read.
SG_DP_ENCODER_ARCHS = frozenset(
    {
        "Qwen2_5_VLForConditionalGeneration",
        "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration",
        "Glm4vForConditionalGeneration",
        "Glm4vMoeForConditionalGeneration",
        "InternVLChatModel",
    }
)
#: The architectures whose SGLang model builds its vision tower on every pipeline stage, not the first only: the model
#: files of :data:`SG_DP_ENCODER_ARCHS`, read in the 0.5.8 and 0.5.23 wheels, build ``self.visual`` (InternVL's
#: ``self.vision_model``) outside any ``pp_group.is_first_rank`` test (Qwen3-VL's tower drops only its ``pos_embed``,
#: a ``PPMissingLayer`` after the first rank: 2304 x 1152 elements, not subtracted). **[assumed]** releases before
#: 0.5.8 not read for this (a 0.4-era ``qwen2_5_vl.py`` built the tower on the first rank only); other model files
#: differ (0.5.23's ``bailing_mm.py``, ``gemma4_mm.py`` build their encoders on the first rank only) and keep their
#: tower's bytes spread with the layers'.
SG_TOWER_EVERY_STAGE_ARCHS = SG_DP_ENCODER_ARCHS
#: The first release read for :data:`SG_TOWER_EVERY_STAGE_ARCHS`
SG_TOWER_EVERY_STAGE_FROM: SgVersion = (0, 5, 8)
#: The first sampled wheel with ``--mm-enable-dp-encoder`` (0.5.8; 0.5.5's has none, :mod:`kvlint.engines.
#: sglang_flags_data`); 0.5.6 and 0.5.7 not read
SG_DP_ENCODER_FROM: SgVersion = (0, 5, 8)


def dp_encoder_replicated_bytes(model: ModelSpec, v: SgVersion, enabled: bool, tp: int, dbytes: int) -> int:
    """Bytes per TP rank the vision encoder holds beyond its even ``1/tp`` share under SGLang's
    ``--mm-enable-dp-encoder`` (``enabled``): the tower and projector of :func:`kvlint.models.weights.vision_params` at
    the model dtype ``dbytes``, ``x (1 - 1/tp)``, for the architectures of :data:`SG_DP_ENCODER_ARCHS` from
    :data:`SG_DP_ENCODER_FROM`; 0 otherwise (the flag is read only by those model files; TP 1)."""
    first = model.architectures[0] if model.architectures else ""
    if not enabled or tp <= 1 or v < SG_DP_ENCODER_FROM or first not in SG_DP_ENCODER_ARCHS:
        return 0
    vision = vision_params(model.config or {}, model.hidden_size) * dbytes
    return int(vision * (1 - 1 / tp)) if vision > 0 else 0


def attention_over_attn_tp(model: ModelSpec, v: SgVersion) -> bool:
    """Whether SGLang ``v`` builds ``model``'s attention projections over the attention-TP group (``tp / dp`` ranks)
    with DP attention, by its first architecture (:data:`_SG_ATTN_TP_SPLIT`, read in the model files of the 0.5.3 -
    0.5.8, 0.5.13, 0.5.15 and 0.5.23 wheels: e.g. ``models/qwen3_moe.py``, ``models/deepseek_v2.py`` with
    ``attn_tp_size``; ``models/llama.py`` and ``models/qwen2.py`` keep ``QKVParallelLinear`` over the whole TP group).
    The KV cell follows the attention-TP group for every model (``get_attention_tp_size()`` in 0.5.3's
    ``profile_max_num_token``, ``attn_tp_size`` in 0.5.23's ``_compute_cell_size``)."""
    first = model.architectures[0] if model.architectures else ""
    span = _SG_ATTN_TP_SPLIT.get(first)
    if span is None:
        return False
    start, until = span
    return (start is None or v >= start) and (until is None or v < until)


def is_sglang_dsa(model: ModelSpec) -> bool:
    """SGLang's ``is_deepseek_nsa`` / ``is_deepseek_dsa`` for the DeepSeek family: the first architecture in
    :data:`_SG_DSA_ARCHS` and ``index_topk`` in the config (DeepSeek V3.2)."""
    c = model.text_config or model.config or {}
    first = model.architectures[0] if model.architectures else ""
    return first in _SG_DSA_ARCHS and c.get("index_topk") is not None


def dsa_kv_dtype(v: SgVersion, kv_cache_dtype: str, compute_capability: str | None) -> str:
    """The KV-cache dtype SGLang gives a DeepSeek sparse-attention model (:func:`is_sglang_dsa`) on a GPU of
    ``compute_capability`` (``"10.0"``; None: unknown, e.g. AMD, whose capability major is 9): ``fp8_e4m3`` on a
    major of 10 or more (B200, GB200, RTX 50xx, RTX PRO 6000), forced in 0.5.3 and 0.5.4 and only in place of
    ``auto`` from 0.5.5; ``auto`` otherwise stays the model dtype (bfloat16). Read in ``server_args.py::ServerArgs.
    _handle_model_specific_adjustments`` of the 0.5.3, 0.5.4, 0.5.5, 0.5.7 and 0.5.8 wheels, ``::
    _set_default_nsa_kv_cache_dtype`` (0.5.10) / ``_set_default_dsa_kv_cache_dtype`` (0.5.13) and ``arg_groups/
    overrides.py::_dsa_kv_cache_dtype_default`` (0.5.16, 0.5.19, 0.5.23; bfloat16 there for a checkpoint with
    learnable attention sinks, which DeepSeek V3.2 has not)."""
    try:
        major = int(str(compute_capability or "").split(".")[0])
    except ValueError:
        major = 0
    if major >= 10 and (kv_cache_dtype == "auto" or v < (0, 5, 5)):
        return "fp8_e4m3"
    return kv_cache_dtype


def _is_amd(gpu_name: str) -> bool:
    """An AMD Instinct GPU by its catalogue name (SGLang's ``is_hip``)."""
    name = gpu_name.upper()
    return "AMD" in name or "INSTINCT" in name


def sglang_prelude(
    serving: ServingConfig, model: ModelSpec, overrides: dict[str, Any] | None = None
) -> SglangPrelude:
    """The GPU-independent steps of :func:`plan_sglang_detailed` for ``serving`` (with ``overrides`` replacing
    flags) and ``model``, in the order it takes them (see :class:`SglangPrelude`). Raises :class:`PlanError`
    for a model with no KV-holding layer or no KV bytes per token, and what reading the flags raises."""
    ov = overrides or {}

    def get(name: str) -> Any:
        return ov[name] if name in ov else serving.get(name)

    v, assumed = sglang_version(serving.version)
    version_notes: tuple[str, ...] = ()
    if assumed:
        version_notes = (
            f"SGLang version unknown {version_source(serving)}; assumed {NEWEST_SGLANG} (newest read)",
        )
    tp = max(1, as_int(get("tp_size")) or 1)
    pp = max(1, as_int(get("pp_size")) or 1)
    dp = max(1, as_int(get("dp_size")) or 1)
    if not model.is_mla and not any(ly.kind not in ("mamba", "none") for ly, _ in layer_counts(model.layers)):
        raise PlanError(f"{model.id} has no attention layer holding a KV cache")
    deepep = str(get("moe_a2a_backend") or "") == "deepep" or bool(get("enable_deepep_moe"))
    cps_user = as_int(get("chunked_prefill_size"))
    mfs = as_float(get("mem_fraction_static"))
    cuda_graph_max_bs = None
    dp_attention = bool(get("enable_dp_attention"))
    model_notes: list[str] = []
    if v >= ATTN_DP_SIZE_FROM:
        # arg_groups/parallel_hook.py::handle_deprecated_dp_attention (0.5.22, 0.5.23), before any handler reads the
        # layout: --dp-size N --enable-dp-attention becomes --attn-dp-size N (dp_size 1), and attention DP is
        # attn_dp_size > 1 (runtime_context.py::attn_dp_enabled_of). kvlint keeps the attention-DP width in dp.
        attn_dp = max(1, as_int(get("attn_dp_size")) or as_int(get("attention_data_parallel_size")) or 1)
        if dp_attention and attn_dp == 1:
            attn_dp = dp
        if dp_attention and attn_dp == 1:
            model_notes.append(
                f"--enable-dp-attention with dp_size 1: SGLang {v[0]}.{v[1]}.{v[2]} resolves attn_dp_size 1, so "
                "attention DP is off (no DP-attention term in the default fraction)"
            )
        dp_attention = attn_dp > 1
        if dp_attention:
            dp = attn_dp
    page = max(1, as_int(get("page_size")) or 1)
    dsa = is_sglang_dsa(model) and v >= DSA_FROM
    if dsa:
        # sglang server_args.py::ServerArgs._handle_model_specific_adjustments for a DeepSeek NSA/DSA model off NPU:
        # 0.5.3 – 0.5.7 turn DP attention on (0.5.3 – 0.5.5 with dp_size = tp_size; gone in 0.5.8), 0.5.3 fixes
        # mem_fraction_static at 0.8, and every release read sets page_size 64 (1 on ROCm from 0.5.8, in the plan)
        forced = []
        if v <= (0, 5, 7) and not dp_attention:
            dp_attention = True
            forced.append("DP attention on")
        if v <= (0, 5, 5) and dp != tp:
            dp = tp
            forced.append(f"dp_size = tp_size = {tp}")
        if v == (0, 5, 3) and mfs != 0.8:
            mfs = 0.8
            forced.append("mem_fraction_static 0.8")
        if page != 64:
            page = 64
            forced.append("page_size 64")
        if forced:
            model_notes.append(
                f"DeepSeek sparse-attention model: SGLang {v[0]}.{v[1]}.{v[2]} sets {', '.join(forced)} "
                "(server_args.py, 'for DeepSeek NSA/DSA')"
            )
    if mfs is None:
        cuda_graph_max_bs = _decode_graph_max_bs(v, get)

    dtype = str(get("dtype") or "auto")
    if dtype == "auto":
        dtype = model.torch_dtype or "bfloat16"
        if dtype in ("float32",):
            dtype = "bfloat16"
        model_notes.append(f"dtype auto -> {dtype} (config.json torch_dtype)")
    dbytes = dtype_bytes(dtype)
    kvd = str(get("kv_cache_dtype") or "auto")
    kv_elem = dbytes if kvd == "auto" else (2 if kvd in ("bf16", "bfloat16", "float16") else 1)
    # 0.5.3 leaves the DSA indexer's keys out of the cell (added in 0.5.4, sgl-project/sglang#11309)
    indexer_in_cell = not (dsa and v < (0, 5, 4))
    # --enable-dp-attention: attention (and its KV heads) over the attention-TP group, attn_tp_size = tp / dp
    # (get_attention_tp_size() in 0.5.5's profile_max_num_token, get_parallel().attn_tp_size in 0.5.23's
    # _compute_cell_size; the state tensors too, sglang_mamba.state_shape)
    attn_tp = max(1, tp // dp) if dp_attention else tp
    per_tok, how = cell_size(model, attn_tp, kv_elem, dsa_indexer=indexer_in_cell)
    if per_tok <= 0:
        raise PlanError(f"{model.id}: no KV bytes per token could be derived")

    cell_note_at = len(model_notes)  # the cell note goes here once the draft's layers are known

    quant = get("quantization")
    w_all, wsrc = weight_bytes(model, dtype_bytes=dbytes, quantization=str(quant) if quant else None)
    if (
        model.weight_bytes is None
        and not quant
        and not model.tie_word_embeddings
        and model.architectures[:1]
        and model.architectures[0] in SGLANG_HEADLESS_ARCHITECTURES
    ):
        # the architecture estimate counted an untied LM head this embedding class does not build
        w_all = max(0, w_all - model.vocab_size * model.hidden_size * dbytes)
        wsrc += f", less the LM head SGLang's {model.architectures[0]} does not have"
    # what SGLang keeps whole on every TP rank, as vLLM does: MLA's fused_qkv_a_proj_with_mqa / kv_a_proj_with_mqa
    # and the DSA indexer's wq_b / wk / weights_proj (ReplicatedLinear), MoE routers (ReplicatedLinear(...,
    # quant_config=None), DeepSeek's MoEGate parameter), and K/V heads fewer than TP (QKVParallelLinear's
    # num_kv_head_replicas): sglang@0.5.23 models/deepseek_v2.py, models/qwen3_moe.py, layers/linear.py,
    # layers/attention/dsa/dsa_indexer.py; the same in the 0.4.10, 0.5.5, 0.5.13 and 0.5.18 wheels
    # DP attention: only the models whose SGLang attention classes build their projections over the attention-TP
    # group hold them over attn_tp ranks (attention_over_attn_tp); the others (Llama, Qwen2, Mistral, Mixtral, Gemma,
    # ...) keep QKVParallelLinear / RowParallelLinear over the whole TP group, while their KV cell follows attn_tp
    attn_split = attn_tp < tp and attention_over_attn_tp(model, v)
    repl, repl_src = tp_replicated_bytes(
        model,
        dtype_bytes=dbytes,
        quantization=str(quant) if quant else None,
        tp=tp,
        attn_tp=attn_tp if attn_split else tp,
    )
    if repl:
        model_notes.append(f"weights {repl_src}")
    cp_dense = auto_moe_dense_tp(model, v, get)
    dense_extra, dense_note = moe_dense_whole_bytes(
        model,
        v,
        1 if cp_dense else as_int(get("moe_dense_tp_size")),
        tp,
        dbytes,
        str(quant) if quant else None,
    )
    if dense_extra and cp_dense:
        dense_note = dense_note.replace(
            "--moe-dense-tp-size 1:", f"moe_dense_tp_size 1 (SGLang sets it under {cp_dense}):", 1
        )
    if dense_extra:
        repl += sum(dense_extra)
        model_notes.append(dense_note)
    absorbed, absorbed_note = mla_absorbed_copy_bytes(model, attn_tp if attn_split else tp, dbytes)
    mla_copies: tuple[int, int, str, str] | None = None
    if absorbed:
        repl += absorbed
        model_notes.append(absorbed_note)
        on_hip, hip_note = mla_absorbed_copy_bytes(model, attn_tp if attn_split else tp, dbytes, hip=True)
        mla_copies = (absorbed, on_hip, absorbed_note, hip_note)
    dp_encoder = dp_encoder_replicated_bytes(model, v, _truthy(get("mm_enable_dp_encoder")), tp, dbytes)
    if dp_encoder:
        repl += dp_encoder
        model_notes.append(
            f"--mm-enable-dp-encoder: the vision encoder is whole on every TP rank (+{dp_encoder / GiB:.2f} GiB per "
            "rank over its even share)"
        )
    embed_extra = 0  # the input embedding's bytes beyond 1/tp, on the first pipeline stage only
    head_extra = 0  # the output head's bytes beyond 1/tp (--enable-dp-lm-head), on the last stage only
    first_arch = model.architectures[0] if model.architectures else ""
    deepseek = model.is_mla and first_arch in _SG_DEEPSEEK_V2_ARCHS
    table = model.vocab_size * model.hidden_size * dbytes
    replicated = (
        deepseek and v >= EMBED_REPLICATION_FROM and _env_bool(serving.env, "SGLANG_ENABLE_EMBED_REPLICATION")
    )
    if replicated:
        # get_embedding_tp_kwargs: {"enable_tp": False}, the whole table on every rank whatever the layout
        embed_extra = int(table * (1 - 1 / tp))
        repl += embed_extra
        if embed_extra:
            model_notes.append(
                f"SGLANG_ENABLE_EMBED_REPLICATION: the input embedding is whole on every rank (+{embed_extra / GiB:.2f} "
                "GiB per rank)"
            )
    if attn_tp < tp:
        embed_ranks = 0
        if replicated:
            embed_ranks = 1
        elif deepseek:
            # the DeepSeek-V2 family's input embedding with DP attention (sglang models/deepseek_v2.py
            # DeepseekV2Model.__init__): whole on every rank before 0.5.8 (VocabParallelEmbedding(enable_tp=not
            # is_dp_attention_enabled()), the 0.5.3 - 0.5.7 wheels), over the attention-TP group from 0.5.8
            # (use_attn_tp_group=is_dp_attention_enabled(); 0.5.13 - 0.5.23 get_embedding_tp_kwargs)
            embed_ranks = attn_tp if v >= EMBED_ATTN_TP_FROM else 1
        elif first_arch in _SG_EMBED_DP_ARCHS:
            # Qwen2Model, Qwen2MoeModel, GLM-4.5 MoE, gpt-oss, Llama 4, Qwen3-Next, Bailing: replicated up to 0.5.8,
            # over the attention-TP group from 0.5.9 (_SG_EMBED_DP_ARCHS)
            embed_ranks = attn_tp if v >= EMBED_ATTN_TP_OTHERS_FROM else 1
        if embed_ranks and not replicated:
            embed_extra = int(table * (1 / embed_ranks - 1 / tp))
            repl += embed_extra
        if embed_ranks:
            embedding = (
                f"the input embedding {'over the attention-TP group' if embed_ranks > 1 else 'whole on every rank'} "
                f"(+{embed_extra / GiB:.2f} GiB per rank)"
            )
        else:
            embedding = f"the input embedding over all {tp} ranks (as {first_arch or 'this model'} builds it)"
        head_by_attn = first_arch in _SG_DP_LM_HEAD_ARCHS or (
            first_arch == "Qwen3ForCausalLM" and v >= (0, 5, 8)
        )
        if _truthy(get("enable_dp_lm_head")) and head_by_attn and not model.tie_word_embeddings:
            # ParallelLMHead(..., use_attn_tp_group=enable_dp_lm_head): the head over the attention-TP group
            head_extra = int(table * (1 / attn_tp - 1 / tp))
            repl += head_extra
            embedding += f"; --enable-dp-lm-head: the output head over the attention-TP group (+{head_extra / GiB:.2f} GiB per rank)"
        if attn_split:
            what = "the attention layers, their KV heads and states are split"
        else:
            what = (
                f"the KV heads and states are split (the attention projections of {first_arch or 'this model'} stay "
                f"over all {tp} ranks in SGLang {v[0]}.{v[1]}.{v[2]})"
            )
        model_notes.append(
            f"DP attention: {what} over the attention-TP group ({attn_tp} of {tp} ranks, tp_size / dp_size); "
            f"{embedding}"
        )
    split = pp_stage_layers(model.num_layers, pp, v, serving.env)
    target_path = str(serving.model.value).strip() if serving.model is not None else ""
    spec, spec_notes = _speculative(
        model, v, get, w_all, dbytes, tp, serving.draft_model, target_path, attn_tp if attn_split else tp
    )
    model_notes.extend(spec_notes)
    stage_w: tuple[int, ...] = ()
    stage_c: tuple[int, ...] = ()
    if pp > 1:
        if model.is_mla and v < PP_MIN_SYNC_FROM:
            raise PlanError(
                f"{PP_REFUSED} {pp} with an MLA model: SGLang {v[0]}.{v[1]}.{v[2]} asserts pp_size == 1 when it sizes "
                "the MLA KV pool ('pipeline parallelism is not compatible with mla backend', sglang@0.4.10 "
                "model_runner.py::ModelRunner.profile_max_num_token; gone in 0.5.5)",
                PlanRefusal.SGLANG_PP_MLA,
            )
        spec_alg = sglang_spec.normalize_algorithm(get("speculative_algorithm"))
        if PP_SPEC_REFUSED[0] <= v <= PP_SPEC_REFUSED[1] and (
            spec_alg or (v <= PP_MIXED_CHUNK_REFUSED_UNTIL and _truthy(get("enable_mixed_chunk")))
        ):
            what = (
                f"--speculative-algorithm {str(get('speculative_algorithm'))[:40]}"
                if spec_alg
                else "--enable-mixed-chunk"
            )
            said = (
                "overlap schedule, speculative decoding, mixed chunked prefill"
                if v <= PP_MIXED_CHUNK_REFUSED_UNTIL
                else "overlap schedule, speculative decoding"
            )
            raise PlanError(
                f"{PP_REFUSED} {pp} with {what}: SGLang {v[0]}.{v[1]}.{v[2]} refuses to start ('Pipeline parallelism is "
                f"not compatible with {said}.', server_args.py::ServerArgs.check_server_args; from 0.5.21 pipeline "
                "parallelism accepts EAGLE, on a PD prefill node or with SGLANG_ENABLE_PP_SPEC)",
                PlanRefusal.SGLANG_PP_SPECULATIVE if spec_alg else PlanRefusal.SGLANG_PP_MIXED_CHUNK,
            )
        refused = pp_spec_refusal(v, get, serving.env, dp_attention=dp_attention)
        if refused:
            raise PlanError(
                f"{PP_REFUSED} {pp} with --speculative-algorithm {str(get('speculative_algorithm'))[:40]}: {refused}",
                PlanRefusal.SGLANG_PP_SPECULATIVE_SETUP,
            )
        # the vision tower every stage builds whole (SG_TOWER_EVERY_STAGE_ARCHS): its 1/tp share and, under
        # --mm-enable-dp-encoder, the rest of it on each stage, not spread with the layers
        tower = 0
        if v >= SG_TOWER_EVERY_STAGE_FROM and first_arch in SG_TOWER_EVERY_STAGE_ARCHS:
            tower = min(w_all, vision_params(model.config or {}, model.hidden_size) * dbytes)
        tower_repl = dp_encoder if tower else 0
        stage_w = _stage_weights(
            model,
            w_all - tower,
            dbytes,
            tp,
            split,
            repl - embed_extra - head_extra - sum(dense_extra) - tower_repl,
            str(quant) if quant else None,
        )
        if tower:
            stage_w = tuple(w + tower // max(1, tp) + tower_repl for w in stage_w)
        # the DP-attention embedding share lives with the embedding, on the first stage (not spread over the layers),
        # the output head's with the head, on the last
        stage_w = (stage_w[0] + embed_extra, *stage_w[1:])
        stage_w = (*stage_w[:-1], stage_w[-1] + head_extra)
        bounds = [sum(split[:rank]) for rank in range(pp + 1)]
        if dense_extra:
            # the whole dense MLPs live with their layers (DeepSeek's first ones: the first stage)
            stage_w = tuple(w + sum(dense_extra[bounds[r] : bounds[r + 1]]) for r, w in enumerate(stage_w))
        stage_c = tuple(
            cell_size(
                model, attn_tp, kv_elem, layer_range=(bounds[r], bounds[r + 1]), dsa_indexer=indexer_in_cell
            )[0]
            for r in range(pp)
        )
        if spec is not None and spec.draft_layers:  # every stage sizes the draft's layers over its own
            dsa_cell = _is_dsa(model)
            stage_c = tuple(
                sglang_spec.scale_cell(c, split[r], spec.draft_layers, v, dsa=dsa_cell)
                for r, c in enumerate(stage_c)
            )
        source = "SGLANG_PP_LAYER_PARTITION" if PP_PARTITION_REFUSED in serving.env else "get_pp_indices"
        model_notes.append(
            f"pipeline stages hold {list(split)} layers ({source}); each sizes its KV pool from its own weights "
            f"({', '.join(f'{w / GiB:.2f}' for w in stage_w)} GiB per rank, embedding on the first, output head on "
            f"the last) and layers ({', '.join(str(c) for c in stage_c)} B/token)"
        )
    if spec is not None and spec.draft_layers:
        scaled = sglang_spec.scale_cell(per_tok, model.num_layers, spec.draft_layers, v, dsa=_is_dsa(model))
        if scaled != per_tok:
            how = f"{how} + {spec.draft_layers} draft layer(s) at the target's per-layer size"
            per_tok = scaled
    model_notes.insert(cell_note_at, f"cell_size {per_tok} B/token per rank ({how})")
    model_notes.append(_preload_note(tp * pp))
    mrr_user = as_int(get("max_running_requests"))
    if (
        mrr_user is None
        and v >= sglang_spec.SIZED_FROM
        and sglang_spec.normalize_algorithm(get("speculative_algorithm"))
    ):
        # every 0.5.x wheel read resets it before the pool is sized ("Max running requests is reset to 48 for
        # speculative decoding"): the request pool, the mamba slots and max_num_reqs all start from it
        mrr_user = sglang_spec.SPEC_MAX_RUNNING_REQUESTS
        model_notes.append(
            f"max_running_requests {mrr_user}: SGLang's default with speculative decoding (\"Max running requests "
            'is reset to 48 for speculative decoding")'
        )
    u_mtt = as_int(get("max_total_tokens"))
    u_ctx = as_int(get("context_length"))
    derived, key, ctx_err = check_context_length(model, u_ctx, serving.env, v)
    context_notes: tuple[str, ...] = ()
    if u_ctx is None:
        context_notes = (f"context_length {derived} derived from {key}",)
    mm_reserve = multimodal_reservation(
        model,
        v,
        serving.env,
        enable_multimodal=bool(get("enable_multimodal")),
        language_only=bool(get("language_only")),
        feature_transport=get("mm_feature_transport"),
    )
    if mm_reserve:
        model_notes.append(
            f"multimodal model: {mm_reserve / MiB:.0f} MiB of the KV budget reserved for its embedding cache "
            "(SGLANG_VLM_CACHE_SIZE_MB) and feature-transport pools (mm_runtime_reservation_gb)"
        )
    graphs = None
    if mfs is None:  # the default fraction's prefill-graph reserve (sglang_graphs)
        graphs = sglang_graphs.prefill_graphs(
            v,
            get,
            model,
            model_path=str(serving.model.value) if serving.model is not None else "",
            multimodal=is_multimodal(model, enable_multimodal=bool(get("enable_multimodal"))),
            deepep=deepep,
            dp_attention=dp_attention,
            pp=pp,
        )
    mamba = sglang_mamba.state_shape(model, attn_tp, pp, v, get("mamba_ssm_dtype"), serving.env, split)
    in_embedding_mode, embedding_why = sglang_embedding(model.architectures, bool(get("is_embedding")), v)
    if in_embedding_mode:
        # the pool is sized from mem_fraction_static as for generation; ModelRunner captures no decode graphs
        model_notes.append(
            f"embedding mode ({embedding_why}): the token pool is sized as for a generative model, and no decode "
            "CUDA graphs are captured (ModelRunner.init_device_graphs: only generation models decode)"
        )
    radix_off = bool(get("disable_radix_cache"))
    ratio, strategy = sglang_mamba.request_ratio(
        v,
        model.architectures,
        disable_radix_cache=radix_off,
        disable_overlap_schedule=bool(get("disable_overlap_schedule")),
        page_size=page,
        strategy=get("mamba_radix_cache_strategy") or get("mamba_scheduler_strategy"),
    )
    mfr = as_float(get("mamba_full_memory_ratio"))
    if mfr is None:  # a value SGLang cannot size the pool with is refused where it is used (pool_slots)
        mfr = sglang_mamba.DEFAULT_FULL_MEMORY_RATIO
    if mamba is not None:
        model_notes.append(
            f"hybrid state pool: {mamba.family} state {mamba.per_request} B/request per rank ({mamba.layers} layers, "
            f"conv {mamba.conv} x {mamba.conv_bytes} B + ssm {mamba.ssm} x {mamba.ssm_bytes} B {mamba.ssm_dtype}), "
            f"taken from the KV budget before the KV pool (mamba_full_memory_ratio {mfr:g}; {ratio} state slots per "
            f"running request, {strategy})"
        )
    elif sglang_mamba.state_layer_indices(model):
        model_notes.append(
            "the recurrent-state pool SGLang keeps for this architecture's linear/Mamba layers is not modelled "
            "(not counted against the KV pool)"
        )
    if post_capture_kv_sizing(v, serving.env, model):
        model_notes.append(
            f"not modelled: {POST_CAPTURE_KV_SIZING_ENV} (SGLang 0.5.16 on): when SGLang's "
            "post_capture_kv_sizing_planned holds (CUDA, no MLA, the CUDA graphs of the served phases on, ...) the "
            "default mem_fraction_static reserves only 512 MiB (1536 from 0.5.18) + tp x pp / 8 GiB, and the KV pool "
            "is shrunk after CUDA-graph capture to the free memory then measured; this plan is SGLang's sizing "
            "without it (docs/engine-memory-model.md §3.2)"
        )
    return SglangPrelude(
        version=v,
        version_assumed=assumed,
        tp=tp,
        pp=pp,
        dp=dp,
        deepep=deepep,
        chunked_prefill_size=cps_user,
        mem_fraction_static=mfs,
        cuda_graph_max_bs=cuda_graph_max_bs,
        dp_attention=dp_attention,
        dtype=dtype,
        kv_cache_dtype=kvd,
        kv_bytes_per_token=per_tok,
        weights_bytes=w_all // (tp * pp) + repl // pp,
        weights_source=wsrc,
        page_size=page,
        max_total_tokens=u_mtt,
        context_length=u_ctx,
        derived_context_length=derived,
        context_key=key,
        context_error=ctx_err,
        max_running_requests=mrr_user,
        max_prefill_tokens=get("max_prefill_tokens"),
        era=f"sglang-{v[0]}.{v[1]}" + (".x" if v >= (0, 5, 5) else ""),
        version_notes=version_notes,
        model_notes=tuple(model_notes),
        context_notes=context_notes,
        mamba=mamba,
        mamba_ratio=ratio,
        mamba_strategy=strategy,
        mamba_full_memory_ratio=mfr,
        max_mamba_cache_size=as_int(get("max_mamba_cache_size")),
        disable_radix_cache=radix_off,
        mm_reserve_bytes=mm_reserve,
        stage_layers=split,
        stage_weights=stage_w,
        stage_cells=stage_c,
        dsa=dsa,
        dsa_indexer_in_cell=indexer_in_cell,
        spec=spec,
        prefill_graphs=graphs,
        max_running_requests_flag=as_int(get("max_running_requests")),
        disaggregation_mode=str(get("disaggregation_mode") or "null").strip().lower(),
        decode_graphs=sglang_graphs.decode_graphs_on(get),
        spec_draft_tokens=as_int(get("speculative_num_draft_tokens")),
        mla_copies=mla_copies,
    )


#: First architectures SGLang serves text-only unless ``--enable-multimodal`` (``ModelConfig.__init__``,
#: ``mm_disabled_models``, the same four in the 0.5.18, 0.5.21, 0.5.22 and 0.5.23 wheels)
_SG_MM_DISABLED = frozenset(
    {
        "Gemma3ForConditionalGeneration",
        "Llama4ForConditionalGeneration",
        "Step3VLForConditionalGeneration",
        "InklingForConditionalGeneration",
    }
)


def is_multimodal(model: ModelSpec, *, enable_multimodal: bool) -> bool:
    """``ModelConfig.is_multimodal`` as SGLang resolves it (``configs/model_config.py``, 0.5.13 - 0.5.23): a config
    with a text sub-config (``text_config``, ``llm_config``, ``language_config``, ``thinker_config``: ``hf_config is
    not hf_text_config``) or a vision / audio tower, and for the first architectures of :data:`_SG_MM_DISABLED`
    only with ``--enable-multimodal`` (their ``enable_multimodal`` default is False)."""
    c = model.config or {}
    subs = ("text_config", "llm_config", "language_config", "thinker_config", "vision_config", "audio_config")
    if not any(isinstance(c.get(k), dict) for k in subs):
        return False
    first = model.architectures[0] if model.architectures else ""
    return enable_multimodal or first not in _SG_MM_DISABLED


def multimodal_reservation(
    model: ModelSpec,
    v: SgVersion,
    env: Mapping[str, str],
    *,
    enable_multimodal: bool,
    language_only: bool,
    feature_transport: Any,
) -> int:
    """Bytes SGLang takes from the KV budget for a multimodal model's post-sizing allocations, from 0.5.18
    (``kv_cache_configurator.py::mm_runtime_reservation_gb``, read in the 0.5.18, 0.5.21, 0.5.22 and 0.5.23 wheels;
    absent in 0.5.16 and 0.5.17): ``SGLANG_VLM_CACHE_SIZE_MB`` (default 100) MiB of embedding cache, plus
    ``SGLANG_MM_FEATURE_CACHE_MB`` (default 1024) with ``--mm-feature-transport cuda_ipc`` / ``cuda_vmm``; 0 for a
    text model. Multimodal as ``ModelConfig.is_multimodal`` decides it: a config with a text sub-config
    (``text_config``, ``llm_config``, ``language_config``, ``thinker_config``: ``hf_config is not hf_text_config``) or a
    vision / audio tower, unless ``--language-only``, and for the first architectures of :data:`_SG_MM_DISABLED` only
    with ``--enable-multimodal``."""
    if v < (0, 5, 18) or language_only or not is_multimodal(model, enable_multimodal=enable_multimodal):
        return 0

    def mib(name: str, default: int) -> int:
        value = digits(env.get(name))
        return default if value is None else value

    reserved = mib("SGLANG_VLM_CACHE_SIZE_MB", 100)
    if str(feature_transport or "") in ("cuda_ipc", "cuda_vmm"):
        reserved += mib("SGLANG_MM_FEATURE_CACHE_MB", 1024)
    return reserved * MiB


def _preload_note(world: int) -> str:
    """The pre-load note of a plan with ``world`` = tp × pp ranks (:func:`preload_bytes`)."""
    dist = f" − {DIST_INIT_BYTES / GiB:.1f} GiB distributed set-up ({world} ranks)" if world > 1 else ""
    return (
        f"[calibrated] pre-load free = total − {CUDA_CONTEXT_BYTES / GiB:.1f} GiB CUDA context{dist}; [heuristic] "
        f"{_OTHER / GiB:.1f} GiB non-weight memory inside the static fraction"
    )


def _binding_stage(
    pre: SglangPrelude, free_for_stage: int, state_pool: Callable[[int], tuple[int, int]] | None
) -> tuple[int, str]:
    """``(stage, note)``: the pipeline stage whose cell size sets the KV pool the plan reports.

    Every stage sizes its pool from the same memory: SGLang reads the free GPU memory after loading with
    ``get_available_gpu_memory(..., distributed=True)``, the MIN over the world group (every TP and PP rank), so each
    stage's ``rest`` is ``free_for_stage`` (mfs × pre-load free − other − multimodal reservation) less the heaviest
    stage's weights (and, for a hybrid model, the state pool), and its tokens ``rest // cell`` with its own cell
    size (``sglang@0.4.10`` and ``0.5.5`` ``model_runner.py::ModelRunner.profile_max_num_token``, ``0.5.16``
    ``mem_cache/kv_cache_configurator.py::_profile_available_bytes``). No memory left stops the start-up on every
    stage (the heaviest is named). From 0.5.0 the stages then take the smallest token count
    (:data:`PP_MIN_SYNC_FROM`: the stage with the largest cell); before it pp rank 0 prints its own. A stage without
    a KV-holding layer (cell 0: only linear/Mamba layers) never limits the pool (0.5.23's
    ``has_kv_on_another_pp_stage``)."""
    heaviest = max(range(len(pre.stage_weights)), key=lambda rank: (pre.stage_weights[rank], -rank))
    r = free_for_stage - pre.stage_weights[heaviest]
    if state_pool is not None and r > 0:
        slots, used = state_pool(r)
        r = r - used if slots > 0 else min(r, 0)
    cells = [(rank, cell) for rank, cell in enumerate(pre.stage_cells) if cell > 0]
    if not cells:
        return 0, "no pipeline stage holds a KV-holding layer"
    if r <= 0:  # the stage reported is one with a KV-holding layer (its cell sizes the plan's empty pool)
        rank = heaviest if pre.stage_cells[heaviest] > 0 else cells[0][0]
        return rank, (
            f"pipeline stage {heaviest} (the heaviest) has no memory left for its KV pool after its weights; SGLang "
            "sizes every stage from the smallest free memory across the ranks"
        )
    if pre.version >= PP_MIN_SYNC_FROM:
        rank, cell = max(cells, key=lambda x: (x[1], -x[0]))
        return rank, (
            f"pipeline stage {rank} has the fewest KV tokens ({r // cell}): every stage sizes its pool from the "
            f"smallest free memory across the ranks (stage {heaviest}'s, after its weights) over its own layers, and "
            "SGLang takes the smallest stage's count on every stage (all_reduce MIN)"
        )
    rank = cells[0][0]
    return rank, (
        f"pipeline stage {rank}'s own KV pool: every stage sizes its pool from the smallest free memory across the "
        f"ranks (stage {heaviest}'s, after its weights); SGLang before 0.5 has no cross-stage MIN of the token "
        "counts (0.4.10's model_runner.py) and pp rank 0 prints its own"
    )


def _mla_copies_for_gpu(pre: SglangPrelude, gpu_name: str) -> SglangPrelude:
    """``pre`` with the MLA ``w_kc`` / ``w_vc`` copies as SGLang makes them on the GPU (:func:`mla_absorbed_copy_bytes`):
    on an AMD GPU (ROCm, SGLang's ``_is_cuda`` false) the 128 x 128 fp8 blocks are requantized to fp8 per tensor, not
    dequantized to bfloat16, so the copies take half the bytes the prelude counted (its weights per rank and per
    pipeline stage, by layer count as :func:`_stage_weights` shares them, and its note)."""
    if pre.mla_copies is None or not _is_amd(gpu_name):
        return pre
    cuda, hip, cuda_note, hip_note = pre.mla_copies
    delta = cuda - hip
    if delta <= 0:
        return pre
    layers = max(1, sum(pre.stage_layers))
    stage_w = tuple(
        w - delta * n // layers for w, n in zip(pre.stage_weights, pre.stage_layers, strict=False)
    )
    notes = tuple(hip_note if n == cuda_note else n for n in pre.model_notes)
    return replace(
        pre,
        weights_bytes=pre.weights_bytes - delta // max(1, pre.pp),
        stage_weights=stage_w,
        model_notes=notes,
    )


def _dsa_for_gpu(
    pre: SglangPrelude, model: ModelSpec, compute_capability: str | None, gpu_name: str
) -> SglangPrelude:
    """``pre`` with the DeepSeek sparse-attention defaults that depend on the GPU: the KV dtype of
    :func:`dsa_kv_dtype` (its cell sizes recomputed by :func:`cell_size` over the attention-TP group, with the draft's
    MTP layers of :func:`kvlint.memory.sglang_spec.scale_cell` when the draft shares the cell, the cell note replaced)
    and, on ROCm from 0.5.8, page_size 1 (``server_args.py``: ``if is_hip(): self.page_size = 1``)."""
    v = pre.version
    kvd = dsa_kv_dtype(v, pre.kv_cache_dtype, compute_capability)
    page = 1 if _is_amd(gpu_name) and v >= (0, 5, 8) else pre.page_size
    if kvd == pre.kv_cache_dtype and page == pre.page_size:
        return pre
    per_tok, stage_c, notes = pre.kv_bytes_per_token, pre.stage_cells, list(pre.model_notes)
    if kvd != pre.kv_cache_dtype:
        attn_tp = max(1, pre.tp // pre.dp) if pre.dp_attention else pre.tp
        per_tok, how = cell_size(model, attn_tp, 1, dsa_indexer=pre.dsa_indexer_in_cell)
        if pre.stage_layers:
            bounds = [sum(pre.stage_layers[:r]) for r in range(pre.pp + 1)]
            stage_c = tuple(
                cell_size(
                    model,
                    attn_tp,
                    1,
                    layer_range=(bounds[r], bounds[r + 1]),
                    dsa_indexer=pre.dsa_indexer_in_cell,
                )[0]
                for r in range(pre.pp)
            )
        draft = pre.spec.draft_layers if pre.spec is not None else 0
        if draft:
            # the fp8 cell takes the draft's MTP layers as sglang_prelude's cell does (sglang_spec.scale_cell)
            dsa_cell = _is_dsa(model)
            scaled = sglang_spec.scale_cell(per_tok, model.num_layers, draft, v, dsa=dsa_cell)
            if scaled != per_tok:
                how = f"{how} + {draft} draft layer(s) at the target's per-layer size"
                per_tok = scaled
            if pre.stage_layers:
                stage_c = tuple(
                    sglang_spec.scale_cell(c, pre.stage_layers[r], draft, v, dsa=dsa_cell)
                    for r, c in enumerate(stage_c)
                )
        notes = [
            f"cell_size {per_tok} B/token per rank ({how})" if n.startswith("cell_size ") else n
            for n in notes
        ]
        how_set = (
            "in place of --kv-cache-dtype" if pre.kv_cache_dtype != "auto" else "for --kv-cache-dtype auto"
        )
        notes.append(
            f"KV cache fp8_e4m3: SGLang {v[0]}.{v[1]}.{v[2]} sets it {how_set} for a DeepSeek sparse-attention model "
            f"on a GPU of compute capability {compute_capability} (server_args.py, 'Setting KV cache dtype')"
        )
    if page != pre.page_size:
        notes.append("page_size 1: SGLang sets it for a DeepSeek sparse-attention model on ROCm from 0.5.8")
    return replace(
        pre,
        kv_cache_dtype=kvd,
        kv_bytes_per_token=per_tok,
        stage_cells=stage_c,
        page_size=page,
        model_notes=tuple(notes),
    )


def plan_sglang_detailed(
    serving: ServingConfig,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpus: int | None,
    gpu_name: str = "",
    compute_capability: str | None = None,
    overrides: dict[str, Any] | None = None,
    prelude: SglangPrelude | None = None,
) -> SglangPlanDetail:
    """SGLang start-up prediction for one TP rank (bytes per GPU; tokens per DP replica).

    ``pre_free = total − pre-load usage`` (:func:`preload_bytes`); ``rest = mfs × pre_free − weights_per_rank −
    other`` (0.5.23: ``free_now − pre × (1 − mfs)``, identical once ``free_now = pre − weights − other``);
    ``max_total_num_tokens = rest // cell_size`` rounded down to ``page_size``, capped by ``--max-total-tokens``;
    ``max_running_requests`` by ``resolve_max_num_reqs``. ``gpu_name``/``gpus`` are informative; ``overrides`` replace flags (remedies).
    ``prelude``: :func:`sglang_prelude` of ``serving``, ``model`` and ``overrides``, when the caller plans them on
    several GPUs (computed here when None; the plan is the same either way).

    Raises:
        PlanError: non-positive memory total or no KV-holding layers.
    """
    if total_bytes <= 0:
        raise PlanError("the GPU memory total is unknown or not positive")
    pre = prelude if prelude is not None else sglang_prelude(serving, model, overrides)
    v, tp, pp, dp = pre.version, pre.tp, pre.pp, pre.dp
    notes: list[str] = list(pre.version_notes)
    if pre.dsa:
        pre = _dsa_for_gpu(pre, model, compute_capability, gpu_name)
    pre = _mla_copies_for_gpu(pre, gpu_name)
    gpu_mib = total_bytes / MiB + 512  # nvidia-smi total ≈ CUDA total + driver reserve [assumed]
    cps_user = pre.chunked_prefill_size
    if v >= (0, 5, 3):
        cps_default = gpu_tier(gpu_mib, tp, v)[0]
    else:
        cps_default = 2048 if gpu_mib < 25000 else 8192
    cps = cps_user if cps_user is not None else cps_default
    mfs = pre.mem_fraction_static
    mfs_user = mfs is not None
    if mfs is None:
        graph_mib, graph_note = 0.0, ""
        if pre.prefill_graphs is not None and (pre.prefill_graphs.on or v >= sglang_graphs.DEFAULT_ON_FROM):
            graph_mib, graph_note = pre.prefill_graphs.reserve_mib(cps, amd=_is_amd(gpu_name))
        mfs, why = default_mem_fraction_static(
            v,
            gpu_mib,
            tp=tp,
            pp=pp,
            is_mla=model.is_mla,
            deepep=pre.deepep,
            chunked_prefill_size=cps_user,
            cuda_graph_max_bs=pre.cuda_graph_max_bs,
            max_running_requests=pre.max_running_requests_flag,
            disaggregation_mode=pre.disaggregation_mode,
            decode_graphs=pre.decode_graphs,
            speculative_num_draft_tokens=pre.spec_draft_tokens,
            dp_attention=pre.dp_attention,
            dp=dp,
            speculative_reserve_mib=pre.spec.reserve_mib if pre.spec is not None else 0,
            prefill_graph_mib=graph_mib,
        )
        if pre.spec is not None and pre.spec.reserve_mib:
            why += f" including {pre.spec.reserve_mib} MiB for the speculative draft"
        if graph_note:
            why += f"; {graph_note}"
        notes.append(why)
    if cps_user is None:
        notes.append(f"chunked_prefill_size {cps} (default for this GPU)")
    notes.extend(pre.model_notes)

    dtype, kvd, per_tok, weights = pre.dtype, pre.kv_cache_dtype, pre.kv_bytes_per_token, pre.weights_bytes
    used, used_lo, used_hi = preload_bytes(tp * pp)
    pre_free = total_bytes - used
    budget = int(mfs * pre_free)
    mm = pre.mm_reserve_bytes

    # the state pool comes out of rest before the KV pool is sized (sglang_mamba.pool_slots)
    def state_pool(r: int) -> tuple[int, int]:
        assert pre.mamba is not None
        return sglang_mamba.pool_slots(
            r,
            pre.mamba.per_request,
            v,
            full_memory_ratio=pre.mamba_full_memory_ratio,
            max_mamba_cache_size=pre.max_mamba_cache_size,
            disable_radix_cache=pre.disable_radix_cache,
            max_running_requests=pre.max_running_requests,
            dp_attention_size=dp if pre.dp_attention else 1,
        )

    min_weights = weights
    if pre.stage_weights:
        try:
            stage, why = _binding_stage(
                pre, budget - _OTHER - mm, state_pool if pre.mamba is not None else None
            )
        except PlanError:  # a state-pool ratio SGLang refuses (sglang_mamba.pool_slots), with its refusal
            raise
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        # the memory every stage sizes from is what the heaviest stage has left (a MIN over the ranks)
        weights, per_tok = max(pre.stage_weights), pre.stage_cells[stage]
        min_weights = weights
        notes.append(why)
    rest = budget - weights - _OTHER - mm
    rest_lo = budget - weights - int(_OTHER * (1 + _BAND)) - int((used_hi - used) * mfs) - mm
    rest_hi = budget - weights - int(_OTHER * (1 - _BAND)) + int((used - used_lo) * mfs) - mm
    min_mfs = (min_weights + _OTHER) / pre_free if pre_free > 0 else 1.0
    page = pre.page_size
    mamba_slots = mamba_bytes = 0
    if pre.mamba is not None:
        try:
            mamba_slots, mamba_bytes = state_pool(rest)
        except PlanError:
            raise
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        rest = rest - mamba_bytes if mamba_slots > 0 else min(rest, 0)
        k_lo, b_lo = state_pool(rest_lo)
        rest_lo = rest_lo - b_lo if k_lo > 0 else min(rest_lo, 0)
        k_hi, b_hi = state_pool(rest_hi)
        rest_hi = rest_hi - b_hi if k_hi > 0 else min(rest_hi, 0)
        notes.append(
            f"max_mamba_cache_size {mamba_slots} state slots, {mamba_bytes / GiB:.2f} GiB, taken from the KV budget "
            "(SGLang hybrid state pool)"
        )

    # 0.5.3 - 0.5.6 pad the profiled tokens for the draft and verify tokens in flight (sglang_spec.pad_tokens_055)
    spec = pre.spec
    pad = 0
    pad_args = spec.pad if spec is not None and spec.pad is not None else (0, 0, 0)
    if spec is not None and spec.pad is not None:
        pad = sglang_spec.pad_tokens_055(pre.max_running_requests or 0, *pad_args)

    def tokens(r: int) -> int:
        t = max(0, r) // per_tok
        if t > 0:
            t += pad
        return t // page * page

    mtt, lo, hi = tokens(rest), tokens(rest_lo), tokens(rest_hi)
    if pad and mtt > 0:
        notes.append(
            f"max_total_num_tokens padded by {pad} tokens for the speculative draft and verify tokens in flight "
            f"(max_running_requests × (num_steps × topk + num_draft_tokens) + 100 = {pre.max_running_requests} × "
            f"({pad_args[0]} × {pad_args[1]} + {pad_args[2]}) + 100, SGLang {v[0]}.{v[1]}.{v[2]}'s init_memory_pool)"
        )
    if spec is not None and spec.draft_layers and pre.version < sglang_spec.ONE_CELL_FROM and mtt > 0:
        n = max(1, model.num_layers)
        outside = mtt * (per_tok * spec.draft_layers // n)
        notes.append(
            f"the draft's KV pool ({mtt} tokens over {spec.draft_layers} layer(s), about {outside / GiB:.2f} GiB per "
            "rank) is allocated after the target's, outside mem_fraction_static"
        )
    profiled = max(0, rest) // per_tok  # before the cap and the page rounding (0.4.x max_num_reqs)
    mtt_profiled = mtt  # the pool before --max-total-tokens (0.5.0 - 0.5.9's request-table estimate)
    u_mtt = pre.max_total_tokens
    if u_mtt is not None and u_mtt < mtt:
        mtt, lo, hi = u_mtt, min(lo, u_mtt), min(hi, u_mtt)
        notes.append(f"--max-total-tokens {u_mtt} caps the pool")

    u_ctx = pre.context_length
    derived, key = pre.derived_context_length, pre.context_key
    ctx = derived if u_ctx is None else u_ctx
    notes.extend(pre.context_notes)

    u_mrr = pre.max_running_requests
    est = min(4096, max(2048, int(mtt / ctx * 512))) if ctx else 2048
    if v < (0, 5, 0):
        mrr = max_running_requests_04(v, profiled, mtt, ctx, u_mrr, dp if pre.dp_attention else 1)
        if u_mrr is None:
            notes.append(
                f"max_running_requests = min(tokens//2, clamp(tokens/context×512, 2048, 4096)"
                f"{' + 1' if v < (0, 4, 7) else ''}) = {mrr} (SGLang 0.4.x request pool)"
            )
    elif u_mrr is None:
        mrr = min(est, mtt // 2)
        notes.append(f"max_running_requests = min(clamp(tokens/context×512, 2048, 4096), tokens//2) = {mrr}")
    else:
        mrr = min(u_mrr // dp, mtt // 2)
    if pre.mamba is not None and v >= (0, 5, 0):
        cap = max(0, mamba_slots) // pre.mamba_ratio
        if cap < mrr:
            notes.append(
                f"max_running_requests capped to {cap} by the state pool (max_mamba_cache_size {mamba_slots} // "
                f"{pre.mamba_ratio} slots per request)"
            )
            mrr = cap
    table_rows = 0
    if ctx > 0 and pre.mamba is None:
        table_rows = max(
            0,
            request_table_rows(
                v,
                u_mrr,
                max(0, mrr),
                profiled if v < (0, 5, 0) else mtt_profiled if v < (0, 5, 10) else mtt,
                ctx,
                dp if pre.dp_attention else 1,
            ),
        )
    table_bytes = table_rows * (ctx + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    if table_bytes:
        notes.append(
            f"request-to-token table {table_rows:,} rows x {ctx + REQUEST_TABLE_EXTRA_COLUMNS:,} int32 = "
            f"{table_bytes / GiB:.2f} GiB per GPU, allocated after the KV budget was profiled, outside "
            "mem_fraction_static (SGLang's reserve has no term for it)"
        )
    # positional, in the field order (tests/test_plan_records.py): see kvlint.memory.vllm.resolve_startup
    plan = MemoryPlan(
        "sglang",  # engine
        f"{v[0]}.{v[1]}.{v[2]}",  # engine_version
        pre.era,  # era
        total_bytes,  # total_bytes
        mfs,  # gpu_memory_utilization
        budget,  # budget_bytes
        weights,  # weights_bytes
        0,  # activation_bytes
        _OTHER,  # non_torch_bytes
        0,  # cudagraph_bytes
        rest,  # kv_cache_bytes
        rest_lo,  # kv_cache_bytes_low
        rest_hi,  # kv_cache_bytes_high
        per_tok,  # kv_bytes_per_token
        page,  # block_size
        per_tok * page,  # bytes_per_block
        mtt // page,  # num_blocks
        lo // page,  # num_blocks_low
        hi // page,  # num_blocks_high
        mtt,  # capacity_tokens
        ctx,  # max_model_len
        "context_length" if u_ctx is not None else key,  # max_model_len_source
        derived,  # derived_max_model_len
        ctx * per_tok,  # per_request_bytes
        mtt / ctx if ctx else 0.0,  # max_concurrency
        lo / ctx if ctx else 0.0,  # max_concurrency_low
        hi / ctx if ctx else 0.0,  # max_concurrency_high
        max(0, mrr),  # max_num_seqs
        cps if cps > 0 else (as_int(pre.max_prefill_tokens) or 16384),  # max_num_batched_tokens
        tp,  # tensor_parallel_size
        pp,  # pipeline_parallel_size
        dp,  # data_parallel_size
        dtype,  # dtype
        kvd if kvd != "auto" else dtype,  # kv_cache_dtype
        pre.weights_source,  # weights_source
        tuple(notes),  # assumptions
        max(0, mamba_bytes),  # state_pool_bytes
        # ServerArgs' names (python/sglang/srt/server_args.py, --context-length, --max-running-requests,
        # --chunked-prefill-size; --max-prefill-tokens bounds a prefill batch when chunking is off)
        (
            "context_length",
            "max_running_requests",
            "chunked_prefill_size" if cps > 0 else "max_prefill_tokens",
        ),  # setting_names
    )
    return SglangPlanDetail(
        plan=plan,
        version=v,
        version_assumed=pre.version_assumed,
        tp=tp,
        pp=pp,
        dp=dp,
        mem_fraction_static=mfs,
        mfs_user=mfs_user,
        pre_free_bytes=pre_free,
        rest_bytes=rest,
        minimum_mfs=min_mfs,
        max_total_num_tokens=mtt,
        context_length=ctx,
        derived_context_length=derived,
        context_error=pre.context_error,
        max_running_requests=max(0, mrr),
        page_size=page,
        chunked_prefill_size=cps,
        max_mamba_cache_size=mamba_slots,
        mamba_state_bytes=mamba_bytes,
        mamba_family=pre.mamba.family if pre.mamba is not None else "",
        mamba_ratio=pre.mamba_ratio,
        request_table_rows=table_rows,
        request_table_bytes=table_bytes,
    )


def plan_sglang(
    serving: ServingConfig,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpus: int | None,
    gpu_name: str = "",
    compute_capability: str | None = None,
) -> MemoryPlan:
    """SGLang's memory plan for one rank: ``engine="sglang"``, ``gpu_memory_utilization`` = mem_fraction_static,
    ``budget_bytes`` = mfs × pre-load free memory, ``kv_cache_bytes`` = SGLang's ``rest``, ``capacity_tokens`` =
    ``max_total_num_tokens``, ``max_model_len`` = context_length, ``max_num_seqs`` = max_running_requests,
    ``block_size`` = page_size, ``max_num_batched_tokens`` = chunked_prefill_size. See
    :func:`plan_sglang_detailed`.

    Raises:
        PlanError: see :func:`plan_sglang_detailed`.
    """
    return plan_sglang_detailed(
        serving, model, total_bytes, gpus=gpus, gpu_name=gpu_name, compute_capability=compute_capability
    ).plan


__all__ = [
    "CUDA_CONTEXT_BYTES",
    "DIST_INIT_BYTES",
    "NEWEST_SGLANG",
    "SglangPlanDetail",
    "SglangPrelude",
    "cell_size",
    "check_context_length",
    "default_mem_fraction_static",
    "derive_context_length",
    "gpu_tier",
    "max_running_requests_04",
    "multimodal_reservation",
    "plan_sglang",
    "plan_sglang_detailed",
    "pool_below_context_behaviour",
    "pool_starts",
    "preload_bytes",
    "sglang_prelude",
    "sglang_version",
    "warns_pool_below_context",
]
