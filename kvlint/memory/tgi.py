"""TGI (text-generation-inference) memory model: what the launcher, the shard's warmup and the router compute.

Predicts the log lines "Default `max_batch_prefill_tokens` to N", "KV-cache blocks: N, size: B" and
"Setting max batch total tokens to N", the inferred ``max_total_tokens``/``max_input_tokens`` and the
start-up errors, per shard (GPU), following docs/engine-memory-model.md §2 and §4. Sources (TGI git,
HEAD db931fcf unless a tag is named): ``launcher/src/main.rs::{main, find_num_shards, compute_optimal,
vram_maximum}``, ``server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup``,
``server/text_generation_server/models/globals.py`` (BLOCK_SIZE, TGI_WIGGLE_ROOM),
``server/text_generation_server/utils/import_utils.py::get_cuda_free_memory``,
``server/text_generation_server/models/__init__.py::get_model`` (dtype defaults),
``backends/v3/src/main.rs`` and ``backends/v3/src/lib.rs::connect_backend`` (router validation).

The exact parts (shards, dtype, block size, per-token KV bytes, the warmup formula by version, the token
defaults) restate TGI; the measured parts (CUDA context, prefill activation peak) are **[heuristic]**
and carry an uncertainty band.

CUDA graphs are not deducted (``cudagraph_bytes`` 0) and cannot stop a start-up that fits: ``FlashCausalLM.warmup``
captures them after the KV cache is allocated, in the memory the wiggle room leaves, inside ``try: ... except
torch.cuda.OutOfMemoryError: logger.exception("Decode cuda graph warmup failed")`` (the same in every tag read,
v2.2.0 - v3.3.7), so a capture that runs out of memory is logged and the shard serves without the graphs not yet
captured (``CUDA_GRAPHS`` is sorted largest first in ``globals.py``: an OOM on the largest leaves none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kvlint.engines.shell import UNRESOLVED_RE
from kvlint.fastinit import direct_init
from kvlint.memory.kv import dtype_bytes, layer_counts
from kvlint.memory.refusal import PlanError, PlanRefusal
from kvlint.memory.versions import version_source
from kvlint.models.weights import param_breakdown, tp_replicated_bytes, weight_bytes
from kvlint.types import MemoryPlan, ModelSpec, ServingConfig
from kvlint.values import as_float, as_int

GiB = 1 << 30
MiB = 1 << 20

NEWEST_TGI = "3.3.7"
"""Newest TGI release read for docs/engine-memory-model.md §0 (HEAD after tag v3.3.7)."""

TgiVersion = tuple[int, int, int]

#: The newest patch release of each TGI release series, from the repository's tags (huggingface/
#: text-generation-inference, v0.9.0 to v3.3.7). TGI's image workflow tags every release both ``MAJOR.MINOR.PATCH``
#: and ``MAJOR.MINOR`` (.github/workflows/build.yaml, docker/metadata-action ``type=semver,pattern={{major}}.{{minor}}``),
#: so an image tagged ``2.4`` pulls the series' newest release; Google's DLC images named by series
#: (``...-cu124.2-3...``) are rebuilt on the series' patch releases (huggingface/Google-Cloud-Containers
#: ``containers/tgi/gpu/<version>``).
SERIES_NEWEST: dict[tuple[int, int], TgiVersion] = {
    (0, 9): (0, 9, 4),
    (1, 0): (1, 0, 3),
    (1, 1): (1, 1, 1),
    (1, 2): (1, 2, 0),
    (1, 3): (1, 3, 4),
    (1, 4): (1, 4, 5),
    (2, 0): (2, 0, 4),
    (2, 1): (2, 1, 1),
    (2, 2): (2, 2, 0),
    (2, 3): (2, 3, 1),
    (2, 4): (2, 4, 1),
    (3, 0): (3, 0, 2),
    (3, 1): (3, 1, 1),
    (3, 2): (3, 2, 3),
    (3, 3): (3, 3, 7),
}


def series_release(text: str | None) -> TgiVersion | None:
    """The release a TGI version text that names only a series pulls today (``2.4``; a DLC image named
    ``...-cu124.2-4...`` reads as ``2.4``): :data:`SERIES_NEWEST` of that series; None when the text names a
    patch release, is unreadable, or names a series not in the table."""
    if not _series_only(text):
        return None
    v, assumed = tgi_version(text)
    return None if assumed else SERIES_NEWEST.get((v[0], v[1]))


#: Launcher default ``--max-concurrent-requests`` (TGI launcher/src/main.rs::Args, all 1.x-3.x tags).
DEFAULT_MAX_CONCURRENT_REQUESTS = 128

#: GPU fp16 dense FLOP/s the launcher's ``ComputeType::f16_flop`` knows (HEAD launcher/src/main.rs), matched on
#: the lower-cased GPU name; order matters (``l40s`` before ``l40``). docs/engine-memory-model.md §2.3.
GPU_F16_FLOPS: tuple[tuple[str, float], ...] = (
    ("4090", 82e12),
    ("t4", 65e12),
    ("l40s", 363e12),
    ("l40", 181e12),
    ("l4", 121e12),
    ("a10g", 125e12),
    ("a40", 149e12),
    ("a100", 312e12),
    ("h100", 900e12),
    ("h200", 989e12),
)

#: Model types whose default dtype is bfloat16 in ``models/__init__.py::get_model`` (HEAD); others float16.
_BF16_DEFAULT_TYPES = frozenset(
    {
        "gemma",
        "gemma2",
        "gemma3",
        "gemma3_text",
        "dbrx",
        "deepseek_v2",
        "deepseek_v3",
        "qwen2_vl",
        "qwen2_5_vl",
    }
)
#: Quantizers that force float16 when ``--dtype`` is unset (``get_model``).
_FP16_QUANT = frozenset({"awq", "exl2", "gptq", "marlin"})
#: Model types whose launcher default ``max_batch_prefill_tokens`` is not 4096 (HEAD launcher ``Config``).
_MODEL_PREFILL_DEFAULT = {"qwen2_vl": 10000, "qwen2_5_vl": 10000, "gemma3": 8000}
#: The start of the plan error for an ``ATTENTION`` value TGI's shards refuse (:func:`resolve_attention`), whose
#: :attr:`~kvlint.memory.refusal.PlanRefusal.TGI_ATTENTION` KV502 reports as an error at the variable.
ATTENTION_REFUSED = "ATTENTION="

#: BLOCK_SIZE per attention backend (``models/globals.py``).
BLOCK_SIZES = {"flashinfer": 1, "flashdecoding": 256, "flashdecoding-ipex": 64, "paged": 16}

# [heuristic] CUDA context + cuBLAS workspace + allocator slack per shard, and extra NCCL buffers when sharded.
_NON_TORCH = int(0.5 * GiB)
_NON_TORCH_SHARDED = int(0.25 * GiB)
# [heuristic] relative uncertainty of (non-torch + activation).
_BAND = 0.5

#: Bytes of the FlashInfer workspace every shard allocates when the model is built with ``ATTENTION=flashinfer``,
#: before the warmup measures free memory: ``get_workspace`` keeps one ``torch.empty(128 * 1024 * 1024,
#: dtype=torch.uint8)`` that the prefill, paged-prefill and decode wrappers share, created by
#: ``FlashCausalLM.__init__`` (``create_prefill_state`` / ``create_prefill_with_paged_kv_state`` /
#: ``create_decode_state``). Read at tgi@v2.3.0, v2.4.0, v2.4.1, v3.0.0, v3.0.1 and v3.3.6
#: (``server/text_generation_server/layers/attention/flashinfer.py::get_workspace``,
#: ``server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.__init__``). The wrappers' own
#: buffers (FlashInfer's, version-dependent) are not counted.
FLASHINFER_WORKSPACE_BYTES = 128 * 1024 * 1024


#: Bytes per linear-weight element of TGI's in-flight quantizers (weights quantized on load, ``--quantize``):
#: ``bitsandbytes-nf4``/``-fp4`` build ``Linear4bit`` with ``Params4bit(compress_statistics=True)``, i.e. 4-bit
#: values, an 8-bit absmax per 64-element block and an fp32 absmax per 256 of those (0.5 + 1/64 + 4/(64·256) B);
#: ``bitsandbytes`` builds ``Linear8bitLt(has_fp16_weights=False)`` (``Int8Params``: int8 values, one fp32 scale
#: per output row, ~1 B); ``eetq`` stores int8 values with an fp16 scale per output channel (~1 B).
#: tgi@v1.0.0:server/text_generation_server/utils/layers.py::Linear4bit/Linear8bitLt/get_linear,
#: tgi@v2.3.1:server/text_generation_server/layers/bnb.py::Linear4bit/Linear8bitLt and layers/eetq.py::EETQLinear.
IN_FLIGHT_RATES = {
    "bitsandbytes-nf4": (0.5 + 1 / 64 + 4 / (64 * 256), "NF4, double-quantized absmax"),
    "bitsandbytes-fp4": (0.5 + 1 / 64 + 4 / (64 * 256), "FP4, double-quantized absmax"),
    "bitsandbytes": (1.0, "int8"),
    "eetq": (1.0, "int8"),
}

#: First TGI release whose ``TensorParallelHead.load`` builds the lm_head from a bare tensor (``get_linear(weight,
#: bias=None)``), so it stays at the model dtype under bitsandbytes; through v2.1.1 it passed ``quantize`` and the
#: head was quantized like the other linear layers (GPTQ/AWQ/EETQ/Marlin excepted).
#: tgi@v2.1.1 / tgi@v2.2.0:server/text_generation_server/layers/tensor_parallel.py::TensorParallelHead.load.
HEAD_UNQUANTIZED_FROM: TgiVersion = (2, 2, 0)


def in_flight_factor(model: ModelSpec, quant: str, dtype_bytes: int, v: TgiVersion) -> tuple[float, str]:
    """Ratio of a model's weight bytes under TGI's in-flight ``--quantize`` to its unquantized bytes.

    The linear and routed-expert parameters (:func:`kvlint.models.weights.param_breakdown`) are stored at
    :data:`IN_FLIGHT_RATES` bytes each; the embedding, norms and other parameters stay at ``dtype_bytes``, and so
    does an untied lm_head from v2.2.0 (:data:`HEAD_UNQUANTIZED_FROM`; quantized before). A flat factor does not
    fit both a 7B model whose embedding is a tenth of it and a 70B model whose linear layers are 99 % of it.

    Returns ``(factor, description)``; description names the rate and the parameter counts, for the plan's
    weight source. docs/engine-memory-model.md §2 (weights).
    """
    rate, label = IN_FLIGHT_RATES[quant]
    parts = param_breakdown(model)
    quantized = parts["linear"] + parts["experts"]
    kept = parts["embed"] + parts["other"] + parts["vision"]
    head = 0 if model.tie_word_embeddings else int(model.vocab_size or 0) * int(model.hidden_size or 0)
    if head and v < HEAD_UNQUANTIZED_FROM and quant != "eetq":
        quantized, kept = quantized + head, kept - head
    total = quantized + kept
    if total <= 0:
        return 1.0, f"{label}: no parameter count, counted unquantized"
    factor = (quantized * rate + kept * dtype_bytes) / (total * dtype_bytes)
    return factor, (
        f"{quantized:.3g} linear params x {rate:.3f} B ({label}, in-flight) + {kept:.3g} embedding/other params "
        f"x {dtype_bytes} B"
    )


def tgi_version(text: str | None) -> tuple[TgiVersion, bool]:
    """``(major, minor, patch)`` of a TGI image tag / version (``3.0.1``, ``2.3``, ``2.4.1-rocm``,
    ``sha-293b8125-rocm``), ordered by PEP 440 (:func:`kvlint.memory.versions.parse_pep440`).

    Returns ``(version, assumed)``; unreadable, ``latest`` or None -> :data:`NEWEST_TGI` with ``assumed``
    True. Never raises.
    """
    from kvlint.memory.versions import parse_pep440

    v = parse_pep440(text) if text and text.strip().lower() != "latest" else None
    if v is not None:
        return v, False
    newest = parse_pep440(NEWEST_TGI)
    assert newest is not None
    return newest, True


#: First TGI release whose launcher leaves ``max_input_tokens``/``max_total_tokens`` unset for the shard to infer at
#: warmup and defaults ``max_batch_prefill_tokens`` to ``min(4096, max_position_embeddings)``: commit 0c9b6cdd
#: ("Choosing input/total tokens automatically based on available VRAM?", #2673) lies between v2.4.0 and v2.4.1.
#: tgi@v2.4.0:launcher/src/main.rs::main still defaults them as 2.0 - 2.3 did (max_position_embeddings capped at
#: 4096, ``max_input_tokens = that − 1``, ``max_total_tokens = that``, prefill ``max_input_tokens + 50``) and the
#: v2.4.0 shard's ``FlashCausalLM.warmup(batch)`` takes no token limits to infer.
INFERRED_LIMITS_FROM: TgiVersion = (2, 4, 1)


def wiggle_room(v: TgiVersion) -> tuple[float, bool, str]:
    """TGI_WIGGLE_ROOM default and how it is applied, by version.

    Returns ``(wiggle, subtractive, era)``: ``subtractive`` True for v3.x (``free − (1 − fraction × wiggle) ×
    total``), False before (free × wiggle, free = ``free − (1 − fraction) × total``). Source:
    ``server/text_generation_server/models/globals.py`` and ``flash_causal_lm.py::FlashCausalLM.warmup`` at tags
    v1.4.0 (none: ``free_memory // total_cache_size``), v1.4.1 - v2.2.0 (0.95, hard-coded "Leave 5% for some
    wiggle room": ``(free_memory * 0.95) // total_cache_size``, added by 0d794af6, #1428), v2.3.0/v2.3.1 (0.95,
    now the ``TGI_WIGGLE_ROOM`` default; e415b690, #2449), v2.4.0/v2.4.1 (0.90, multiplies free), v3.0.0 (0.95),
    v3.1.0/v3.2.0 (0.93), v3.3.0+ (0.90).
    """
    if v >= (3, 3, 0):
        return 0.90, True, "tgi-3.3"
    if v >= (3, 1, 0):
        return 0.93, True, "tgi-3.1"
    if v >= (3, 0, 0):
        return 0.95, True, "tgi-3.0"
    if v >= (2, 4, 0):
        return 0.90, False, "tgi-2.4"
    if v >= (2, 3, 0):
        return 0.95, False, "tgi-2.3"
    if v >= (2, 0, 0):
        return 0.95, False, "tgi-2.0"
    if v >= (1, 4, 1):
        return 0.95, False, "tgi-1.x"
    return 1.0, False, "tgi-1.x"


def default_dtype(model: ModelSpec, quantize: str | None, user: str | None) -> tuple[str, str]:
    """TGI's model dtype: ``--dtype`` if given; awq/exl2/gptq/marlin -> float16; else the per-model default
    (bfloat16 for Gemma/Gemma2/Gemma3, DBRX, DeepSeek-V2/V3, Qwen2-VL/2.5-VL; float16 for the base
    ``FlashCausalLM`` models such as Llama, Mistral, Qwen2). Returns ``(dtype, why)``.
    Source: TGI ``server/text_generation_server/models/__init__.py::get_model`` (HEAD), §2.2.
    """
    if user:
        return user, f"--dtype {user}"
    q = (quantize or "").lower()
    if q in _FP16_QUANT:
        return "float16", f"dtype float16 forced by --quantize {q} (models/__init__.py::get_model)"
    mt = (model.model_type or "").lower()
    if mt in _BF16_DEFAULT_TYPES:
        return (
            "bfloat16",
            f"dtype bfloat16: TGI's default for model_type {mt} (models/__init__.py::get_model)",
        )
    said = (model.torch_dtype or "").lower()
    if not said:
        config = "config.json names no torch_dtype"
    elif said in ("float16", "fp16", "half"):
        config = f"the same as config.json's {model.torch_dtype}"
    else:
        config = f"not config.json's {model.torch_dtype}"
    return "float16", (
        f"dtype float16: TGI's FlashCausalLM default for model_type {mt or '?'}, {config} "
        "(models/__init__.py::get_model)"
    )


def resolve_attention(
    v: TgiVersion, model: ModelSpec, compute_capability: str | None, env: dict[str, str]
) -> tuple[str, str]:
    """Attention backend the launcher picks (``launcher/src/main.rs::resolve_attention``), by release.

    * Before v2.3.0 there is no launcher choice: paged attention, ``BLOCK_SIZE`` 16, or 256 with
      ``FLASH_DECODING=1`` from v2.1.1 (``server/text_generation_server/models/globals.py`` at v2.0.4, v2.1.1,
      v2.2.0; ``ATTENTION`` is not read).
    * From v2.3.0 the launcher sets ``ATTENTION`` for the shards: the container's ``ATTENTION`` wins, else
      ``flashinfer`` (``BLOCK_SIZE`` 1), except for a head_dim other than 64/128/256 and for falcon and
      deepseek_v2 (also gemma2 in v2.3.x): ``flashdecoding`` in v2.3.0, from v2.3.1 ``flashdecoding`` on compute
      capability >= 8 and ``paged`` below (kvlint: ``paged`` when the GPU is unknown). Read at v2.3.0, v2.3.1,
      v2.4.0, v2.4.1, v3.0.0 and HEAD.
    Returns ``(backend, why)``.
    """
    if v < (2, 3, 0):
        fd = str(env.get("FLASH_DECODING", "")).strip() in ("1", "true", "True")
        if fd and v >= (2, 1, 1):
            return (
                "flashdecoding",
                "attention flashdecoding (FLASH_DECODING=1, BLOCK_SIZE 256; TGI 2.1.1-2.2)",
            )
        return "paged", "attention paged (BLOCK_SIZE 16): TGI before 2.3 has no other default"
    forced = env.get("ATTENTION")
    if forced is not None and not UNRESOLVED_RE.search(forced):
        # the launcher passes a set ATTENTION to the shards as it is (launcher/src/main.rs::resolve_attention,
        # `std::env::var("ATTENTION")`), and models/globals.py asserts it is one of `_expected`, case and blanks
        # included: "flashdecoding-ipex" joins the set in v3.1.0 (read at v2.3.0, v3.0.0, v3.1.0, v3.3.6)
        expected = sorted(b for b in BLOCK_SIZES if b != "flashdecoding-ipex" or v >= (3, 1, 0))
        if forced not in expected:
            raise PlanError(
                f"{ATTENTION_REFUSED}{forced!r} is refused by TGI {'.'.join(map(str, v))}'s shards: \"Attention is not "
                f'valid {forced}, expected {{{", ".join(repr(b) for b in expected)}}}" '
                "(server/text_generation_server/models/globals.py)",
                PlanRefusal.TGI_ATTENTION,
            )
        return forced, f"ATTENTION={forced}"
    cc_major = None
    if compute_capability:
        try:
            cc_major = int(compute_capability.split(".")[0])
        except ValueError:
            cc_major = None
    odd_head = model.head_size not in (64, 128, 256)
    forced_types = ("falcon", "deepseek_v2", "gemma2") if v < (2, 4, 0) else ("falcon", "deepseek_v2")
    if odd_head or (model.model_type or "") in forced_types:
        if v < (2, 3, 1):
            backend = "flashdecoding"
        else:
            backend = "flashdecoding" if cc_major is not None and cc_major >= 8 else "paged"
        reason = f"head_dim {model.head_size}" if odd_head else f"model_type {model.model_type}"
        return backend, f"attention {backend}: flashinfer unsupported for {reason} (resolve_attention)"
    return "flashinfer", "attention flashinfer (TGI >= 2.3 default, resolve_attention)"


def kv_bytes_per_token_shard(model: ModelSpec, shards: int, kv_elem_bytes: int) -> int:
    """KV bytes per token on one shard: ``num_layers × kv_heads_per_shard × head_size × 2 × bytes``.

    ``kv_heads_per_shard`` = ``kv_heads // shards`` if kv_heads > 1 else 1 (MQA replicated). TGI allocates
    every layer uniformly (no sliding-window saving). MLA models (DeepSeek-V2/V3) are stored by TGI as full
    K/V heads of ``qk_nope_head_dim + qk_rope_head_dim`` **[assumed]**. Mamba/no-KV layers are not counted.
    Source: ``flash_causal_lm.py::FlashCausalLM.__init__`` (num_kv_heads per rank) and ``warmup``
    (cache size), §2.2.
    """
    c = model.text_config or model.config or {}
    if model.is_mla:
        head = int(c.get("qk_nope_head_dim") or 128) + int(c.get("qk_rope_head_dim") or 64)
        heads = max(1, model.num_attention_heads // max(1, shards))
        layers = model.num_layers
        return layers * heads * head * 2 * kv_elem_bytes
    total = 0
    for ly, count in layer_counts(model.layers):  # identical layers once, times their count
        if ly.kind in ("mamba", "none"):
            continue
        kvh = ly.kv_heads or model.num_kv_heads
        per = kvh // shards if kvh > 1 else 1
        hs = ly.head_size or model.head_size
        hv = ly.head_size_v or hs
        total += max(1, per) * (hs + hv) * kv_elem_bytes * count
    return total


#: First TGI release whose warmup takes the prefill log-probabilities in place, ``torch.log_softmax(out, -1,
#: out=out)`` (commit 5f32dea1, #2661 "prefer inplace softmax to avoid copy"; v2.3.1 still allocates a new tensor).
INPLACE_LOG_SOFTMAX_FROM: TgiVersion = (2, 4, 0)


def lm_head_gathered(model: ModelSpec, shards: int) -> bool:
    """Whether each shard all-gathers the full-vocabulary logits: with more than one shard TGI loads the LM head
    split by rows (``weights.get_sharded(..., dim=0)``, which asserts the vocabulary divides by the shard count)
    and gathers, else loads it whole on every shard and does not (tgi@v1.0.0:server/text_generation_server/utils/
    layers.py::TensorParallelHead.load, tgi@v2.4.0:server/text_generation_server/layers/tensor_parallel.py)."""
    return shards > 1 and model.vocab_size > 0 and model.vocab_size % shards == 0


def prefill_logits_bytes(model: ModelSpec, tokens: int, shards: int, dbytes: int, v: TgiVersion) -> int:
    """Bytes per shard of the warmup's prefill logits when logits are produced for every prompt token.

    Sources: the LM head (``TensorParallelHead.forward``) returns ``vocab × tokens`` logits at the model dtype on
    every shard; when gathered (:func:`lm_head_gathered`) it is the transposed view ``world_out.T`` of the
    all-gather output (tgi@v1.0.0:server/text_generation_server/utils/layers.py, tgi@v2.4.0:server/
    text_generation_server/layers/tensor_parallel.py). The warmup then takes the prefill log-probabilities over
    all of them (``FlashCausalLM.generate_token``): ``torch.log_softmax(out, -1)``, a new tensor, before v2.4.0;
    ``torch.log_softmax(out, -1, out=out)`` from v2.4.0 (:data:`INPLACE_LOG_SOFTMAX_FROM`). PyTorch's CUDA softmax
    reads a contiguous input (``aten/src/ATen/native/cuda/SoftMax.cu::host_softmax``: ``input_.contiguous()``) and
    ``log_softmax_out`` writes a non-contiguous ``out`` through a temporary (``aten/src/ATen/native/SoftMax.cpp::
    log_softmax_out``). So the copies of ``vocab × tokens × dbytes`` alive together are: gathered, 3 (the gathered
    logits, their contiguous copy, the result or the temporary), in either release; not gathered, 2 before v2.4.0
    (the logits and the result) and 1 from v2.4.0 (in place).
    """
    if tokens <= 0 or model.vocab_size <= 0:
        return 0
    if lm_head_gathered(model, shards):
        copies = 3
    else:
        copies = 1 if v >= INPLACE_LOG_SOFTMAX_FROM else 2
    return int(tokens * copies * model.vocab_size * dbytes)


def prefill_activation_bytes(
    model: ModelSpec,
    tokens: int,
    shards: int,
    dbytes: int,
    all_logits: bool,
    v: TgiVersion = (3, 0, 0),
) -> int:
    """**[heuristic]** Peak activation memory of the warmup prefill forward of ``tokens`` tokens on one shard.

    Per token: residual + normed hidden states (``2 × hidden``), the fused gate/up projection and its
    activation (``3 × intermediate / shards``) at the model dtype **[heuristic]**; plus, when logits are produced
    for every prompt token (``all_logits``: TGI < 3.0 warmup, or ``--enable-prefill-logprobs``), the logits and
    their log-softmax as the release computes them (:func:`prefill_logits_bytes`, full vocabulary on every shard).
    The forward's form was chosen from gt-077 (Llama-2-7B, A10G, 4096 prefill tokens), so that case is not an
    independent check. Before the logits were read in TGI's source they were taken as ``vocab / shards`` in fp16
    plus an fp32 copy, which missed the all-gather of sharded warmups (gt-235, gt-234).
    """
    inter = model.intermediate_size
    if model.num_experts and model.moe_intermediate_size:
        inter = model.moe_intermediate_size * 8
    per = (2 * model.hidden_size + 3 * max(1, inter // max(1, shards))) * dbytes
    logits = prefill_logits_bytes(model, tokens, shards, dbytes, v) if all_logits else 0
    return int(tokens * per) + logits


#: First TGI release whose launcher sets ``TORCH_NCCL_AVOID_RECORD_STREAMS=1`` for the shards
#: (tgi@v1.4.1:launcher/src/main.rs::shard_manager, commit 65db02f1 "fix: use TORCH_NCCL_AVOID_RECORD_STREAMS=1";
#: absent at v1.4.0).
AVOID_RECORD_STREAMS_FROM: TgiVersion = (1, 4, 1)


def recorded_allreduce_bytes(
    model: ModelSpec, tokens: int, shards: int, dbytes: int, v: TgiVersion, env: dict[str, str]
) -> int:
    """Bytes per shard the CUDA caching allocator keeps reserved after the warmup prefill of ``tokens`` tokens
    because the tensor-parallel all-reduce inputs were ``recordStream``-ed on NCCL's stream.

    Source: PyTorch ``torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp`` (``TORCH_NCCL_AVOID_RECORD_STREAMS``):
    unless that variable is set, ProcessGroupNCCL calls ``recordStream`` on the tensors a collective uses on its
    internal stream, so the allocator does not reuse their blocks until NCCL's stream has passed the point where
    they were freed. TGI's flash models all-reduce the row-parallel attention output and MLP output of every layer
    and the vocab-parallel embedding (``tensor_parallel.py::TensorParallelRowLinear``/``TensorParallelEmbedding``):
    ``(2 × layers + 1)`` tensors of ``tokens × hidden`` at the model dtype; models whose attention and MLP run in
    parallel off one layer norm sum both before a single all-reduce per layer (``layers + 1``: Falcon
    ``parallel_attn``/``new_decoder_architecture``, GPT-NeoX ``use_parallel_residual``; tgi@v1.4.0:
    ``flash_rw_modeling.py::FlashRWLayer``/``FlashRWLargeLayer``, ``flash_neox_modeling.py::FlashNeoXLayer``). The warmup measures free memory
    (``torch.cuda.mem_get_info``) after the forward without emptying the cache (tgi@v1.0.0:server/
    text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup), so those reserved blocks are
    taken from the KV cache. From v1.4.1 the launcher sets the variable (:data:`AVOID_RECORD_STREAMS_FROM`) and
    this is 0; before, it is 0 when the container sets ``TORCH_NCCL_AVOID_RECORD_STREAMS=1`` itself, or with one
    shard.

    **[heuristic]** All of them are counted: the host enqueues the warmup forward ahead of the GPU, so NCCL's
    stream has reached none of the frees while the forward allocates (an upper bound of the mechanism). vLLM
    before its own all-reduce paths shows the size at the same shapes: its profile counted about 13.1 GiB more
    per GPU at TP 4 once it measured free memory instead of ``max_memory_allocated`` (gt-249, vllm-project/vllm
    #2031, Llama-2-70B, 4096 tokens), where this gives 10.1 GiB.
    """
    if shards <= 1:
        return 0
    if v >= AVOID_RECORD_STREAMS_FROM or str(env.get("TORCH_NCCL_AVOID_RECORD_STREAMS", "")).strip() == "1":
        return 0
    return allreduces_per_warmup(model) * tokens * model.hidden_size * dbytes


def _series_only(text: str | None) -> bool:
    """Whether a version text names a release series without its patch number (``1.4``, ``cu121.1-4`` read as
    ``1.4``): the digits kvlint read stop after the minor version."""
    if not text:
        return False
    nums = re.findall(r"\d+", str(text).split("+")[0])
    return len(nums) == 2


def allreduces_per_warmup(model: ModelSpec) -> int:
    """All-reduces of ``tokens × hidden`` in one TGI forward: two per layer (attention, MLP) and the embedding's,
    one per layer for the parallel-attention layouts (:func:`recorded_allreduce_bytes`)."""
    cfg = model.config or {}
    parallel = any(
        bool(cfg.get(k)) for k in ("parallel_attn", "new_decoder_architecture", "use_parallel_residual")
    )
    return (1 if parallel else 2) * model.num_layers + 1


def _flops_per_token(model: ModelSpec) -> float:
    from kvlint.models.weights import param_breakdown

    try:
        parts = param_breakdown(model)
        params = sum(parts.values()) - int(parts.get("embed", 0) / (1 if model.tie_word_embeddings else 2))
    except Exception:
        params = model.param_count or 0
    return 2.0 * float(params)


def default_max_batch_prefill_tokens(
    v: TgiVersion,
    model: ModelSpec,
    *,
    shards: int,
    total_bytes: int,
    fraction: float,
    gpu_name: str,
    max_input_tokens: int | None,
    max_batch_size: int | None,
    weights_all_shards: int,
    kv_per_token_all_shards: int,
    quantized: bool,
) -> tuple[int, str]:
    """The launcher's default ``--max-batch-prefill-tokens`` by version (§2.3 and §4).

    * v1.x: 4096. * v2.0-2.4.0: ``max_input_tokens + 50`` (or ``max_batch_size × max_input_tokens``).
    * v2.4.1 - 2.4.x (:data:`INFERRED_LIMITS_FROM`): ``min(4096, max_position_embeddings)``.
    * v3.0+: ``min(compute_optimal or model default, max_position_embeddings, vram_maximum)`` where
      ``compute_optimal = GPU fp16 FLOP/s × shards / (2 × non-embedding params)`` (only when > 100 and the GPU
      is in :data:`GPU_F16_FLOPS`), model default 4096 (qwen2-vl 10000, gemma3 8000), ``vram_maximum =
      (total × shards × fraction × 0.95 − model_vram) / token_vram`` with token_vram **[assumed]** = 2 × KV
      bytes per token (reproduces §7 W7); estimates skipped for quantized models.
    Source: TGI ``launcher/src/main.rs::main`` / ``compute_optimal`` / ``vram_maximum`` (HEAD and tags).
    Returns ``(tokens, why)``.
    """
    maxpos = model.max_position_embeddings or 4096
    if v < (2, 0, 0):
        return 4096, "max_batch_prefill_tokens 4096 (TGI 1.x default)"
    if v < INFERRED_LIMITS_FROM:
        mi = max_input_tokens if max_input_tokens is not None else min(maxpos, 4096) - 1
        if max_batch_size:
            return (
                max_batch_size * mi,
                f"max_batch_prefill_tokens = max_batch_size × max_input_tokens (TGI {v[0]}.{v[1]})",
            )
        return (
            mi + 50,
            f"max_batch_prefill_tokens = max_input_tokens + 50 = {mi + 50} (TGI 2.0-2.4.0 launcher)",
        )
    if v < (3, 0, 0):
        return min(4096, maxpos), "max_batch_prefill_tokens = min(4096, max_position_embeddings) (TGI 2.4.1+)"
    mdefault = _MODEL_PREFILL_DEFAULT.get(model.model_type, 4096)
    candidates = [maxpos]
    why = [f"max_position_embeddings {maxpos}"]
    base = mdefault
    if not quantized:
        name = gpu_name.lower()
        flops = next((f for key, f in GPU_F16_FLOPS if key in name), None)
        fpt = _flops_per_token(model)
        if flops and fpt > 0:
            opt = int(flops * shards / fpt)
            if opt > 100:
                base = opt
                why.append(
                    f"compute_optimal {opt} ({flops / 1e12:.0f} TFLOP/s × {shards} / {fpt:.3g} FLOP/token)"
                )
        if kv_per_token_all_shards > 0:
            vram = int(
                (total_bytes * shards * fraction * 0.95 - weights_all_shards) / (2 * kv_per_token_all_shards)
            )
            if vram > 0:
                candidates.append(vram)
                why.append(f"vram_maximum {vram}")
    if base == mdefault:
        why.append(f"model default {mdefault}")
    candidates.append(base)
    return min(candidates), "Default `max_batch_prefill_tokens` = min(" + ", ".join(
        why
    ) + ") (TGI 3.x launcher)"


@direct_init
@dataclass(frozen=True)
class TgiPlanDetail:
    """Everything :func:`plan_tgi_detailed` resolved, beyond the :class:`MemoryPlan`.

    Token figures are per deployment (TGI's router view, identical on each shard); bytes per shard (GPU).
    ``user_*`` are what the command set (None = default). ``warmup_oom``: the warmup prefill batch does not
    fit (``Not enough memory to handle N prefill tokens``). ``max_batch_total_tokens`` is the warmup's
    ``num_blocks × BLOCK_SIZE``; ``has_chunking`` whether the model supports chunked prefill (flash models
    from v3.0).
    """

    plan: MemoryPlan
    version: TgiVersion
    version_assumed: bool
    num_shard: int
    attention: str
    cuda_memory_fraction: float
    wiggle: float
    max_input_tokens: int
    max_total_tokens: int
    max_batch_prefill_tokens: int
    max_batch_total_tokens: int
    max_batch_size: int | None
    max_concurrent_requests: int
    user_max_input_tokens: int | None
    user_max_total_tokens: int | None
    user_max_batch_prefill_tokens: int | None
    user_max_batch_total_tokens: int | None
    warmup_need_bytes: int
    warmup_oom: bool
    has_chunking: bool
    assumptions: tuple[str, ...] = field(default_factory=tuple)


def tgi_starts(d: object) -> bool:
    """Whether a TGI plan result describes a start that passes every launcher, warmup and router check: no warmup
    OOM, ``max_input_tokens < max_total_tokens <= max_batch_total_tokens``, and the prefill budget holds one
    prompt (without chunking) within ``max_batch_total_tokens`` (rules KV601-KV604 and the remedies that must
    clear them)."""
    if not isinstance(d, TgiPlanDetail) or d.warmup_oom or d.max_input_tokens >= d.max_total_tokens:
        return False
    if d.max_batch_total_tokens <= 0 or d.max_total_tokens > d.max_batch_total_tokens:
        return False
    if not d.has_chunking and d.max_batch_prefill_tokens < d.max_input_tokens:
        return False
    return d.max_batch_prefill_tokens <= d.max_batch_total_tokens or d.has_chunking


def find_num_shards(serving: ServingConfig, gpus: int | None) -> tuple[int, str]:
    """Shard count as the launcher's ``find_num_shards`` decides (§2.2).

    ``--num-shard``/``NUM_SHARD`` if set; else ``--sharded false`` -> 1; else the visible GPU count
    (``CUDA_VISIBLE_DEVICES`` list, else the container's GPU request ``gpus``), else 1.
    Raises :class:`PlanError` with the launcher's text for ``num_shard < 1`` and ``sharded`` with <= 1 GPU.
    """
    n = as_int(serving.get("num_shard"))
    sharded = serving.get("sharded")
    visible: int | None = None
    cvd = serving.env.get("CUDA_VISIBLE_DEVICES")
    if cvd and cvd.strip() and cvd.strip().lower() not in ("all", "void"):
        visible = len([x for x in cvd.split(",") if x.strip()])
    elif gpus:
        visible = gpus
    if n is not None:
        if n < 1:
            raise PlanError("`num_shard` cannot be < 1 (TGI launcher find_num_shards)")
        if sharded is True and n <= 1:
            raise PlanError("`sharded` is true but `num_shard` <= 1 (TGI launcher find_num_shards)")
        return n, f"num_shard {n} (--num-shard/NUM_SHARD)"
    if sharded is False:
        return 1, "num_shard 1 (--sharded false)"
    if sharded is True:
        if not visible or visible <= 1:
            raise PlanError(
                f"`sharded` is true but only found {visible or 0} CUDA devices (TGI launcher find_num_shards)"
            )
        return visible, f"num_shard {visible} = visible GPUs (--sharded true)"
    if visible:
        return visible, f"num_shard {visible} = visible GPUs (launcher default)"
    return 1, "num_shard 1 (no GPU count known; launcher default when one GPU is visible)"


def plan_tgi_detailed(
    serving: ServingConfig,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpus: int | None,
    gpu_name: str = "",
    compute_capability: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> TgiPlanDetail:
    """Full TGI start-up prediction for one shard (bytes per GPU; token limits per deployment).

    Args:
        serving: parsed ``text-generation-launcher`` settings (``flags`` keyed by launcher field names,
            env already merged, ``version`` from the image tag).
        model: the model (``config.json`` facts, checkpoint size).
        total_bytes: device total as CUDA reports it (bytes per GPU).
        gpus: GPUs the container is given (``nvidia.com/gpu``), used for the default shard count.
        gpu_name, compute_capability: for the compute-optimal prefill default and the attention backend.
        overrides: settings replacing ``serving.flags`` (launcher field names), used to verify remedies.

    Warmup arithmetic (§2.3): ``kv = fraction × wiggle × total − weights − workspace − non_torch − activation``
    (v3.x; ``workspace`` the FlashInfer buffer, :data:`FLASHINFER_WORKSPACE_BYTES`, with that attention;
    subtractive wiggle), ``(fraction × total − used) × wiggle`` (v1.4.1 - v2.3: 0.95, v2.4: 0.90), ``fraction ×
    total − used`` (< 1.4.1); the
    warmup batch's own blocks are part of that figure (``+ blocks_of_warmup_batch``). ``num_blocks = kv //
    (BLOCK_SIZE × bytes/token)``, ``max_batch_total_tokens = num_blocks × BLOCK_SIZE``.

    Raises:
        PlanError: non-positive memory total, no KV-holding layer, or a shard configuration the launcher rejects.
    """
    if total_bytes <= 0:
        raise PlanError("the GPU memory total is unknown or not positive")
    ov = dict(overrides or {})

    def get(name: str) -> Any:
        return ov[name] if name in ov else serving.get(name)

    v, assumed = tgi_version(serving.version)
    series_first = v  # the series' first release when the text names only a series (x.y -> x.y.0)
    notes: list[str] = []
    if assumed:
        notes.append(f"TGI version unknown {version_source(serving)}; assumed {NEWEST_TGI} (newest read)")
    newest_of_series = series_release(serving.version)
    if newest_of_series is not None:
        v = newest_of_series
        notes.append(
            f"TGI {v[0]}.{v[1]} names a release series, not a release: read as its newest release "
            f"{v[0]}.{v[1]}.{v[2]}, a MAJOR.MINOR image tag follows the series' releases"
        )
    vs = f"{v[0]}.{v[1]}.{v[2]}"
    if "num_shard" in ov:
        shards, why = int(ov["num_shard"]), f"num_shard {ov['num_shard']} (remedy)"
    else:
        shards, why = find_num_shards(serving, gpus)
    notes.append(why)
    if not any(ly.kind not in ("mamba", "none") for ly, _ in layer_counts(model.layers)) and not model.is_mla:
        raise PlanError(
            f"{model.id} has no attention layer holding a KV cache; TGI's paged KV model does not apply"
        )

    quantize = get("quantize")
    quant = str(quantize).lower() if quantize else (model.quant_method or None)
    dtype, why = default_dtype(model, quant, get("dtype"))
    notes.append(why)
    dbytes = dtype_bytes(dtype)
    kvd = get("kv_cache_dtype")
    kv_elem = 1 if kvd and str(kvd).startswith("fp8") else dbytes
    kv_dtype_name = str(kvd) if kvd else dtype
    if not kvd:
        notes.append(f"KV cache dtype = model dtype {dtype} (--kv-cache-dtype unset)")

    fraction = as_float(get("cuda_memory_fraction"))
    if fraction is None:
        fraction = 1.0
        notes.append("cuda_memory_fraction 1.0 (launcher default)")
    wiggle, subtractive, era = wiggle_room(v)
    # TGI reads TGI_WIGGLE_ROOM from 2.3.0 (server/text_generation_server/models/globals.py; absent at v2.2.0)
    env_wiggle = as_float(serving.env.get("TGI_WIGGLE_ROOM")) if v >= (2, 3, 0) else None
    if env_wiggle is not None:
        wiggle = env_wiggle
        notes.append(f"TGI_WIGGLE_ROOM={env_wiggle} from the container env")
    elif v < (2, 3, 0):
        # 1.4.1 - 2.2: the same 0.95, hard-coded in FlashCausalLM.warmup (no variable to set); none before 1.4.1
        notes.append(
            "wiggle room 0.95 (hard-coded in TGI 1.4.1 - 2.2, multiplies free memory; TGI_WIGGLE_ROOM from 2.3)"
            if wiggle != 1.0
            else "no wiggle room (TGI before 1.4.1)"
        )
    else:
        notes.append(
            f"TGI_WIGGLE_ROOM {wiggle} ({era} default, {'subtracted from total' if subtractive else 'multiplies free memory'})"
        )

    attention, why = resolve_attention(v, model, compute_capability, serving.env)
    notes.append(why)
    block = BLOCK_SIZES[attention]
    per_tok = kv_bytes_per_token_shard(model, shards, kv_elem)
    if per_tok <= 0:
        raise PlanError(f"{model.id}: no KV bytes per token could be derived")
    bytes_per_block = per_tok * block

    wq = None if quant in IN_FLIGHT_RATES else quant
    w_all, wsrc = weight_bytes(model, dtype_bytes=dbytes, quantization=wq)
    if quant in IN_FLIGHT_RATES:
        factor, what = in_flight_factor(model, quant, dbytes, v)
        w_all = int(w_all * factor)
        wsrc += f"; x{factor:.3f} for {quant} ({what})"
    weights = w_all // shards
    notes.append(f"weights {weights / GiB:.2f} GiB per shard ({wsrc}, / {shards} shards)")
    # what every shard loads whole (TGI v3.3.6, the same from v2.2.0): MLA's q_a_proj / kv_a_proj_with_mqa through
    # weights.get_weights ("without tensor parallelism", flash_deepseek_v2_modeling.py / _v3_modeling.py) and the MoE
    # routers through FastLinear.load (flash_mixtral, flash_deepseek_v2/v3, flash_dbrx: the whole tensor, never
    # quantized); K/V heads are not replicated: TGI refuses a head count the shards cannot split (KV401)
    # (not added for an in-flight quantization, whose rates for them were not read)
    if quant not in IN_FLIGHT_RATES:
        repl, repl_src = tp_replicated_bytes(
            model, dtype_bytes=dbytes, quantization=wq, tp=shards, replicate_kv=False
        )
        if repl:
            weights += repl
            notes.append(f"weights {repl_src}")

    u_in = as_int(get("max_input_tokens"))
    u_tot = as_int(get("max_total_tokens"))
    u_pre = as_int(get("max_batch_prefill_tokens"))
    u_bt = as_int(get("max_batch_total_tokens"))
    u_bs = as_int(get("max_batch_size"))
    mcr = as_int(get("max_concurrent_requests"))
    if mcr is None:
        mcr = DEFAULT_MAX_CONCURRENT_REQUESTS
        notes.append(f"max_concurrent_requests {mcr} (launcher default)")
    maxpos = model.max_position_embeddings

    # Pre-warmup token defaults (launcher).
    if u_pre is not None:
        prefill = u_pre
    else:
        prefill, why = default_max_batch_prefill_tokens(
            v,
            model,
            shards=shards,
            total_bytes=total_bytes,
            fraction=fraction,
            gpu_name=gpu_name,
            max_input_tokens=u_in,
            max_batch_size=u_bs,
            weights_all_shards=w_all,
            kv_per_token_all_shards=per_tok * shards,
            quantized=bool(quant),
        )
        notes.append(why)

    # Warmup (shard): weights + non-torch + prefill activation + warmup batch KV must fit under the fraction.
    non_torch = _NON_TORCH + (_NON_TORCH_SHARDED if shards > 1 else 0)
    # a sourced allocation, outside the heuristic band
    workspace = FLASHINFER_WORKSPACE_BYTES if attention == "flashinfer" else 0
    if workspace:
        notes.append(
            f"FlashInfer workspace {workspace / GiB:.3f} GiB per shard, allocated before the warmup "
            "(layers/attention/flashinfer.py::get_workspace)"
        )
    all_logits = v < (3, 0, 0) or bool(get("enable_prefill_logprobs"))
    act = prefill_activation_bytes(model, prefill, shards, dbytes, all_logits, v)
    notes.append(
        f"[heuristic] non-torch {non_torch / GiB:.2f} GiB + warmup activation {act / GiB:.2f} GiB for {prefill} "
        f"prefill tokens{' (logits for every prompt token)' if all_logits else ''}; band ±{int(_BAND * 100)}%"
    )
    held = recorded_allreduce_bytes(model, prefill, shards, dbytes, series_first, serving.env)
    held_maybe = 0
    what = (
        f"warmup all-reduce inputs held on NCCL's stream (recordStream: "
        f"{allreduces_per_warmup(model)} x {prefill} tokens x hidden {model.hidden_size})"
    )
    if held and v[:2] == AVOID_RECORD_STREAMS_FROM[:2] and _series_only(serving.version):
        # a 1.4 series tag: 1.4.0 keeps them, 1.4.1 on does not -> the pessimistic side of the band only
        held, held_maybe = 0, held
        notes.append(
            f"[heuristic] TGI {v[0]}.{v[1]} names no patch release: 1.4.0 would also keep {held_maybe / GiB:.2f} GiB "
            f"of {what}; 1.4.1 on sets TORCH_NCCL_AVOID_RECORD_STREAMS=1 (in the band's low end only)"
        )
    if held:
        act += held
        notes.append(
            f"[heuristic] + {held / GiB:.2f} GiB of {what}; TGI before 1.4.1 does not set "
            "TORCH_NCCL_AVOID_RECORD_STREAMS=1, counted as activation"
        )
    warmup_kv = -(-prefill // block) * bytes_per_block
    warmup_need = weights + workspace + non_torch + act + warmup_kv
    warmup_oom = warmup_need > fraction * total_bytes

    def kv_for(nt: int, ac: int) -> int:
        used = weights + workspace + nt + ac
        if subtractive:
            return int(fraction * wiggle * total_bytes - used)
        return int((fraction * total_bytes - used) * wiggle)

    kv = kv_for(non_torch, act)
    kv_lo = kv_for(int(non_torch * (1 + _BAND)), int(act * (1 + _BAND)) + held_maybe)
    kv_hi = kv_for(int(non_torch * (1 - _BAND)), int(act * (1 - _BAND)))
    budget = int(fraction * wiggle * total_bytes) if subtractive else int(fraction * total_bytes)
    nb = max(0, kv) // bytes_per_block
    nb_lo = max(0, kv_lo) // bytes_per_block
    nb_hi = max(0, kv_hi) // bytes_per_block
    if warmup_oom:
        nb = nb_lo = nb_hi = 0
    batch_total = nb * block
    # v2.4 had prefill chunking only behind PREFILL_CHUNKING=1 (tgi@v2.4.1:server/text_generation_server/models/
    # globals.py: default "0"; models/model.py: support_chunking = support_chunking and PREFILL_CHUNKING)
    has_chunking = v >= (3, 0, 0) or (
        v >= (2, 4, 0) and str(serving.env.get("PREFILL_CHUNKING", "0")).lower() in ("1", "true")
    )

    # Token limits after warmup (§2.3 steps 4-5) or the older launcher defaults (§2.3 "Older defaults").
    if v < (2, 0, 0):
        max_total = u_tot if u_tot is not None else 2048
        max_in = u_in if u_in is not None else 1024
        notes.append(
            "max_input_length 1024 / max_total_tokens 2048 defaults (TGI 1.x)" if u_tot is None else ""
        )
    elif v < INFERRED_LIMITS_FROM:
        cap = min(maxpos or 4096, 4096)
        max_total = u_tot if u_tot is not None else cap
        max_in = u_in if u_in is not None else cap - 1
        if u_tot is None or u_in is None:
            notes.append(
                f"token defaults min(max_position_embeddings, 4096) = {cap} (TGI 2.0-2.4.0 launcher)"
            )
    elif v < (3, 0, 0) and not has_chunking:
        # v2.4 without chunking (tgi@v2.4.1:server/text_generation_server/models/flash_causal_lm.py::
        # FlashCausalLM.warmup): max_total_tokens = sum(batch.cache_lengths) of the warmup batch, which the router
        # fills with requests up to max_batch_prefill_tokens tokens (tgi@v2.4.1:backends/v3/src/client/
        # grpc_client.rs::Client.warmup), and max_input_tokens = max_total_tokens - 1
        max_total = u_tot if u_tot is not None else prefill
        max_in = u_in if u_in is not None else max(0, max_total - 1)
        if u_tot is None or u_in is None:
            notes.append(
                f"max_total_tokens = the warmup batch's {prefill} tokens, max_input_tokens = that - 1 (TGI 2.4 "
                "without PREFILL_CHUNKING)"
            )
    else:
        if u_tot is not None:
            max_total = u_tot
        else:
            lim = [batch_total] if batch_total > 0 else []
            if maxpos:
                lim.append(maxpos)
            max_total = min(lim) if lim else 0
            notes.append(
                "max_total_tokens = min(num_blocks × BLOCK_SIZE, tokenizer model_max_length, max_position_embeddings); "
                "tokenizer model_max_length assumed >= max_position_embeddings [assumed]"
            )
        if u_in is not None:
            max_in = u_in
        else:
            max_in = max(0, max_total - 1)
            if v < (3, 0, 0) and u_tot is None:
                max_in = max(0, min(batch_total - 1, maxpos or batch_total) if batch_total else 0)
            notes.append("max_input_tokens = max_total_tokens − 1 (inferred at warmup)")

    plan = MemoryPlan(
        engine="tgi",
        engine_version=vs,
        era=era,
        total_bytes=total_bytes,
        gpu_memory_utilization=fraction,
        budget_bytes=budget,
        weights_bytes=weights,
        activation_bytes=act,
        non_torch_bytes=non_torch + workspace,
        cudagraph_bytes=0,
        kv_cache_bytes=kv,
        kv_cache_bytes_low=kv_lo,
        kv_cache_bytes_high=kv_hi,
        kv_bytes_per_token=per_tok,
        block_size=block,
        bytes_per_block=bytes_per_block,
        num_blocks=nb,
        num_blocks_low=nb_lo,
        num_blocks_high=nb_hi,
        capacity_tokens=batch_total,
        max_model_len=max_total,
        max_model_len_source="max_total_tokens" if u_tot is not None else "inferred",
        derived_max_model_len=maxpos,
        per_request_bytes=max_total * per_tok,
        max_concurrency=batch_total / max_total if max_total else 0.0,
        max_concurrency_low=nb_lo * block / max_total if max_total else 0.0,
        max_concurrency_high=nb_hi * block / max_total if max_total else 0.0,
        max_num_seqs=u_bs if u_bs is not None else mcr,
        max_num_batched_tokens=prefill,
        tensor_parallel_size=shards,
        pipeline_parallel_size=1,
        data_parallel_size=1,
        dtype=dtype,
        kv_cache_dtype=kv_dtype_name,
        weights_source=wsrc,
        assumptions=tuple(x for x in notes if x),
        # the launcher's names (launcher/src/main.rs::Args, v1.4 - v3.3.7): max_batch_size, when set, is what
        # bounds the running batch instead of max_concurrent_requests (max_num_seqs above)
        setting_names=(
            "max_total_tokens",
            "max_batch_size" if u_bs is not None else "max_concurrent_requests",
            "max_batch_prefill_tokens",
        ),
    )
    return TgiPlanDetail(
        plan=plan,
        version=v,
        version_assumed=assumed,
        num_shard=shards,
        attention=attention,
        cuda_memory_fraction=fraction,
        wiggle=wiggle,
        max_input_tokens=max_in,
        max_total_tokens=max_total,
        max_batch_prefill_tokens=prefill,
        max_batch_total_tokens=batch_total,
        max_batch_size=u_bs,
        max_concurrent_requests=mcr,
        user_max_input_tokens=u_in,
        user_max_total_tokens=u_tot,
        user_max_batch_prefill_tokens=u_pre,
        user_max_batch_total_tokens=u_bt,
        warmup_need_bytes=warmup_need,
        warmup_oom=warmup_oom,
        has_chunking=has_chunking,
        assumptions=tuple(plan.assumptions),
    )


def plan_tgi(
    serving: ServingConfig,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpus: int | None,
    gpu_name: str = "",
    compute_capability: str | None = None,
) -> MemoryPlan:
    """TGI's memory plan for one shard (see :func:`plan_tgi_detailed`).

    Fields: ``engine="tgi"``, ``era`` ``tgi-1.x``/``tgi-2.0``/``tgi-2.4``/``tgi-3.0``/``tgi-3.1``/``tgi-3.3``;
    ``gpu_memory_utilization`` = cuda_memory_fraction; ``budget_bytes`` = total × fraction (× wiggle for 3.x);
    ``weights_bytes`` per shard; ``activation_bytes`` the warmup prefill peak; ``kv_cache_bytes`` free after
    warmup; ``block_size`` TGI's BLOCK_SIZE; ``capacity_tokens`` the predicted ``max_batch_total_tokens``;
    ``max_model_len`` = max_total_tokens; ``max_num_seqs`` = max_batch_size or max_concurrent_requests;
    ``max_num_batched_tokens`` = max_batch_prefill_tokens.

    Raises:
        PlanError: see :func:`plan_tgi_detailed`.
    """
    return plan_tgi_detailed(
        serving, model, total_bytes, gpus=gpus, gpu_name=gpu_name, compute_capability=compute_capability
    ).plan


__all__ = [
    "INFERRED_LIMITS_FROM",
    "NEWEST_TGI",
    "TgiPlanDetail",
    "default_dtype",
    "default_max_batch_prefill_tokens",
    "find_num_shards",
    "kv_bytes_per_token_shard",
    "plan_tgi",
    "plan_tgi_detailed",
    "resolve_attention",
    "series_release",
    "tgi_starts",
    "tgi_version",
    "wiggle_room",
]
