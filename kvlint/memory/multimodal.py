"""The multimodal part of vLLM's start-up profile: how many images the profile run encodes at once, how many
tokens go through the vision tower, and the memory that takes (bytes per GPU). [shapes from source; the
peak is scaled by one calibrated factor, :data:`kvlint.memory.calibration.K_ENCODER`]

What vLLM does (read in the wheels):

* V1 (``vllm@0.11.2:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run``): before the text dummy run,
  it builds ``max_mm_items_per_batch`` dummy items of the modality with the most tokens, each of the maximum
  size the processor allows, runs ``get_multimodal_embeddings`` on all of them at once and keeps the outputs in
  the encoder cache while the text dummy run and the dummy sampler run. The item count is
  ``vllm@0.11.2:vllm/v1/worker/utils.py::MultiModalBudget.get_max_items``: the encoder budget
  (``max(max_num_batched_tokens, max tokens per item)``, ``vllm/v1/core/encoder_cache_manager.py::
  compute_mm_encoder_budget``) divided by the tokens per item, capped by ``max_num_seqs`` (``max_num_batched_tokens
  // tokens per item`` without chunked prefill) times the items one prompt may hold
  (``min(--limit-mm-per-prompt, max_model_len // tokens per item)``, at least 1). The log line "Encoder cache will
  be initialized with a budget of N tokens, and profiled with M image items of the maximum feature size" prints
  both numbers (gt-203: 16384 and 63 for Gemma 3, 260 tokens per image).
* V0 decoder-only models (``vllm@0.6.6:vllm/worker/model_runner.py::GPUModelRunnerBase.profile_run``): the dummy
  sequences drop to ``min(max_num_seqs, max_num_batched_tokens // max multimodal tokens)``, each with the prompt's
  item limit.
* V0 encoder-decoder models (Llama-3.2-Vision, ``mllama``; ``vllm@0.6.6:vllm/worker/enc_dec_model_runner.py::
  EncoderDecoderModelRunner.profile_run``): every one of the ``max_num_seqs`` dummy sequences carries one image
  of ``max_num_tiles`` tiles (gt-225 logs ``pixel_values [256, 1, 1, 4, 3, 560, 560]`` for 256 sequences), and the
  vision encoder runs on all of them in one batch.

The peak of a vision transformer pass, from the layer shapes (per token of the tower: the MLP's first linear and its
activation output, ``2 x intermediate / tp``, plus the residual and the normalised input, ``2 x hidden``), times the
tokens in the batch, plus the input pixels. ``mllama`` adds what its vision model holds
(``vllm@0.6.6:vllm/model_executor/models/mllama.py::MllamaVisionModel.forward``): the attention mask
``[batch, 1, tiles x patches, tiles x patches]`` in the model dtype (``_prepare_aspect_ratio_attention_mask``) and the
hidden states of ``intermediate_layers_indices`` kept for the final concatenation; patches are padded to a multiple
of 8. Attention scores are not counted: the towers use fused attention (SDPA / FlashAttention).

The Qwen2-VL family sizes its largest item from the processor's ``max_pixels``: ``--mm-processor-kwargs`` first, else
the checkpoint's ``preprocessor_config.json`` bundled beside its config in the catalogue
(:func:`kvlint.models.catalogue.processor_config`); on V1 the profiled item may be a video of up to 16 (14 from 0.11.0)
frames of that size (:func:`_qwen2_vl_profile`). Without either, and for Qwen3-VL (whose video item is sized by a
``video_preprocessor_config.json`` kvlint does not bundle), :func:`encoder_profile` says so in its notes and returns no
profile.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from kvlint.engines.options import MAX_INT_SETTING
from kvlint.models.towers import tower_config
from kvlint.types import ModelSpec
from kvlint.values import digits, finite_number

__all__ = [
    "EncoderProfile",
    "cache_holds_full_budget",
    "encoder_profile",
    "is_multimodal",
    "language_model_only_limits",
    "parse_mm_limits",
]


@dataclass(frozen=True)
class EncoderProfile:
    """The multimodal part of one profile run (bytes per GPU).

    ``arch`` the rule used; ``items`` dummy items encoded in one batch; ``tokens_per_item`` decoder tokens one item
    takes (what the encoder budget counts); ``encoder_tokens_per_item`` tokens through the vision tower;
    ``peak_bytes`` the shape-derived transient peak of the encoder pass (before :data:`calibration.K_ENCODER`);
    ``cache_bytes`` the encoder outputs held while the text dummy run goes (V1 encoder cache, mllama's projected
    cross-attention states); ``notes`` how the numbers were chosen; ``modality`` the dummy items' modality
    (``image``, or ``video`` when the Qwen2-VL family's dummy video has more tokens than its largest image).
    """

    arch: str
    items: int
    tokens_per_item: int
    encoder_tokens_per_item: int
    peak_bytes: int
    cache_bytes: int
    notes: tuple[str, ...] = ()
    modality: str = "image"


def _counts(obj: dict[Any, Any]) -> dict[str, int]:
    """The numeric entries of a ``--limit-mm-per-prompt`` mapping as integers, leaving out those no integer
    is (1e400, JSON's infinity; NaN) or beyond 64 bits: ``int()`` raised OverflowError on them, and the
    container's memory plan failed ("could not size ... cannot convert float infinity to integer")."""
    return {str(k): int(v) for k, v in obj.items() if isinstance(v, (int, float)) and abs(v) < 2**63}


def parse_mm_limits(value: Any) -> dict[str, int]:
    """``--limit-mm-per-prompt``: JSON (``{"image": 2, "video": 0}``, 0.8+) or the older ``image=2,audio=0`` form."""
    if isinstance(value, dict):
        return _counts(value)
    if not value:
        return {}
    text = str(value).strip()
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            return _counts(obj)
    except (ValueError, RecursionError):
        pass
    out: dict[str, int] = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        n = digits(v)
        if k.strip() and n is not None:
            out[k.strip()] = n
    return out


def _vision(model: ModelSpec) -> dict[str, Any]:
    """The vision tower's config (the thinker's for Qwen2.5-Omni: :func:`kvlint.models.towers.tower_config`)."""
    return tower_config(model.config or {}, "vision_config")


def _int(x: Any, default: int = 0) -> int:
    try:
        return int(x)
    except (TypeError, ValueError, OverflowError):
        return default


def _size(x: Any, default: int = 0) -> int:
    """A vision config's size (``patch_size``, ``image_size``, ``spatial_merge_size``, ``hidden_size``...) as
    :func:`_int` reads it, ``default`` when it is below 1 or past 2^63 - 1 as well (``patch_size: 0`` made
    ``image_size // patch_size`` raise ZeroDivisionError, ``image_size: 1e308`` the profile's float arithmetic
    OverflowError)."""
    n = _int(x, default)
    return n if 1 <= n <= MAX_INT_SETTING else default


def _float(x: Any, default: float) -> float:
    """A config ratio (``mlp_ratio``, ``pixel_shuffle_ratio``) as a finite number above 0, else ``default`` (a
    list, a string, NaN or infinity made ``float()`` raise, or the arithmetic after it)."""
    f = finite_number(x)
    return f if f is not None and f > 0 else default


#: The most tiles kvlint profiles a Llama 4 image as (``--mm-processor-kwargs`` ``max_patches``; the image
#: processor's default is 16): beyond it, a value is taken as a mistake and the encoder profile is not modelled
#: rather than sized at billions of GiB
LLAMA4_MAX_TILES = 1024
#: The most pixels kvlint profiles a Qwen-VL image as (``min_pixels``/``max_pixels`` from ``--mm-processor-kwargs``
#: or the checkpoint's preprocessor_config.json; the Qwen2-VL / Qwen2.5-VL processors default to 12,845,056 =
#: 16,384 merged patches of 28 x 28): 2^28 pixels (a 16,384-pixel square) is 342,392 merged 28-pixel patches, more
#: tokens than the longest Qwen-VL context (262,144) holds for one image; beyond it, or at zero or below, a value is
#: taken as a mistake and the encoder profile is not modelled rather than sized at billions of GiB (or left to a
#: factor search over ~10^12 patch counts)
QWEN_VL_MAX_PIXELS = 2**28


#: The one list of the models vLLM runs ``--mm-encoder-tp-mode data`` for (the weights in
#: :func:`kvlint.memory.vllm.vision_replicated_bytes`, the encoder's profile here): the classes (``architectures[0]``,
#: as vLLM's model registry picks the class) whose module declares ``supports_encoder_tp_data = True`` and builds
#: its vision tower with ``use_data_parallel = multimodal_config.mm_encoder_tp_mode == "data"`` (``disable_tp`` on
#: the tower's linear layers; each rank encodes its share of the items with the whole tower), mapped to the first
#: release read that has it. The flag itself is new in 0.10.2 (``vllm/config/__init__.py::ModelConfig``; not in
#: the 0.10.1 wheel). Read in the wheels: 0.10.2 declares it for Qwen2.5-VL (``qwen2_5_vl.py``) and Kimi-VL
#: (``kimi_vl.py``); 0.11.0 adds Qwen2-VL (``qwen2_vl.py``), Qwen3-VL (``qwen3_vl.py``) and its MoE subclass
#: (``qwen3_vl_moe.py::Qwen3VLMoeForConditionalGeneration(Qwen3VLForConditionalGeneration)``); Kimi-K2.5
#: (``kimi_k25.py``) first appears, declaring it, in 0.15.0 (not in 0.14.0); all are still declared in 0.19.0. Any
#: other model, or an earlier release: ``ModelConfig`` warns "This model does not support `--mm-encoder-tp-mode
#: data`" and falls back to ``weights``. Keyed by class, not by :attr:`ModelSpec.model_type`, which is the text
#: model's (``qwen3_vl_text``, ``kimi_k2``) where the config nests one. **[assumed]** other classes that declare it
#: (GLM-4.1V, MiniCPM-V, Step3-VL from 0.10.2; dots.ocr, InternVL from 0.11.0; ...) are not listed until their
#: towers' shapes are read.
ENCODER_TP_DATA_FROM: dict[str, tuple[int, int, int]] = {
    "Qwen2_5_VLForConditionalGeneration": (0, 10, 2),
    "KimiVLForConditionalGeneration": (0, 10, 2),
    "Qwen2VLForConditionalGeneration": (0, 11, 0),
    "Qwen3VLForConditionalGeneration": (0, 11, 0),
    "Qwen3VLMoeForConditionalGeneration": (0, 11, 0),
    "KimiK25ForConditionalGeneration": (0, 15, 0),
    # Llama 4 builds its tower (Llama4VisionModel, the pixel-shuffle adapter) with disable_tp / tp_size 1 and shards
    # the images over the ranks (run_dp_sharded_vision_model) from 0.9.2, where the deprecated
    # --enable-multimodal-encoder-data-parallel is how it is asked for (vllm@0.9.2 / 0.10.1 mllama4.py reads
    # parallel_config.enable_multimodal_encoder_data_parallel), then --mm-encoder-tp-mode data (0.10.2 - 0.19.0
    # declare supports_encoder_tp_data); kvlint.memory.vllm.mm_encoder_tp_mode_set maps the old flag
    "Llama4ForConditionalGeneration": (0, 9, 2),
}


def encoder_tp_data_applies(
    mm_encoder_tp_mode: str | None,
    architectures: tuple[str, ...] | list[str] | None,
    version: tuple[int, ...],
) -> bool:
    """Whether vLLM release ``version`` runs the vision tower whole on every tensor-parallel rank for a model of
    these ``architectures``: ``--mm-encoder-tp-mode data`` and the first architecture in :data:`ENCODER_TP_DATA_FROM`
    from its release on; otherwise vLLM splits the tower by TP (``weights``, or its fall-back to it)."""
    if str(mm_encoder_tp_mode or "").strip().lower() != "data":
        return False
    first = architectures[0] if architectures else ""
    since = ENCODER_TP_DATA_FROM.get(first)
    return since is not None and tuple(version) >= since


def encoder_items_per_rank(items: int, ranks: int) -> int:
    """Profile items (images or videos, all the same size) the busiest of ``ranks`` tensor-parallel ranks encodes
    under ``--mm-encoder-tp-mode data``: ``run_dp_sharded_mrope_vision_model`` hands each item, largest first, to
    the rank with the least patches so far (``get_load_balance_assignment``, ``vllm@0.11.0``/``vllm@0.19.0:
    vllm/model_executor/models/vision.py``), so equal items go round the ranks and the busiest holds
    ``ceil(items / ranks)``; each rank runs the whole tower on its share and the embeddings are gathered on all."""
    return -(-max(0, items) // max(1, ranks))


def _vit_peak(tokens: int, hidden: int, inter: int, tp: int, dtype_bytes: int) -> int:
    """Transient peak of one vision-transformer layer over ``tokens`` tokens: MLP first linear + activation output
    (``2 x intermediate / tp``) and residual + normalised input (``2 x hidden``)."""
    return tokens * (2 * math.ceil(inter / max(1, tp)) + 2 * hidden) * dtype_bytes


def _v1_items(
    tokens_per_item: int,
    limit: int,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    max_model_len: int,
    chunked_prefill: bool,
) -> int:
    """``MultiModalBudget.get_max_items`` (vllm@0.11.2:vllm/v1/worker/utils.py)."""
    budget = max(max_num_batched_tokens, tokens_per_item)
    enc_items = budget // tokens_per_item
    per_prompt = max(1, min(limit, max_model_len // tokens_per_item))
    reqs = max_num_seqs if chunked_prefill else min(max_num_seqs, max_num_batched_tokens // tokens_per_item)
    return max(1, min(enc_items, reqs * per_prompt))


def _profile_items(
    era: str,
    per_item: int,
    limit: int,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    max_model_len: int,
    chunked_prefill: bool,
    modality: str,
) -> tuple[int, str]:
    """``(items, how)``: how many dummy multimodal items of ``per_item`` language-model tokens the start-up profile
    encodes, and the words that say why. V0: ``min(max_num_seqs, max_num_batched_tokens // (per_item x limit))``
    dummy sequences (at least one) of ``limit`` images each (vLLM V0 ``GPUModelRunner.profile_run``); V1:
    :func:`_v1_items` (``MultiModalBudget.get_max_items``)."""
    if era == "v0":
        seqs = max(1, min(max_num_seqs, max_num_batched_tokens // max(1, per_item * limit)))
        return seqs * limit, f"V0: {seqs} dummy sequence(s) x {limit} image(s)"
    items = _v1_items(per_item, limit, max_num_seqs, max_num_batched_tokens, max_model_len, chunked_prefill)
    how = (
        f"V1 encoder budget {max(max_num_batched_tokens, per_item)} tokens / {per_item} language-model tokens per "
        f"{modality}"
    )
    return items, how


#: ``--skip-mm-profiling`` is read by ``GPUModelRunner.profile_run`` from this release (absent in the 0.10.0 wheel,
#: present in 0.10.1's ``vllm/v1/worker/gpu_model_runner.py``).
SKIP_MM_PROFILING_FROM = (0, 10, 1)
#: Qwen2-VL's video budget subtracts the image tokens of the prompt's images from ``max_model_len`` before counting
#: frames up to 0.10.1 (``Qwen2VLProcessingInfo.get_num_frames_with_most_features``: ``seq_len - max_image_tokens``
#: in the 0.8.0 - 0.10.1 wheels, gone in 0.10.2).
QWEN2_VL_VIDEO_MINUS_IMAGES_BEFORE = (0, 10, 2)
#: ``_MAX_FRAMES_PER_VIDEO`` of ``vllm/model_executor/models/qwen2_vl.py``: 16 up to 0.10.2, 14 from 0.11.0.
QWEN2_VL_FRAMES_14_FROM = (0, 11, 0)
#: From 0.13.0 ``get_image_size_with_most_features`` factorises ``max_pixels // (patch x merge)^2`` into the closest
#: pair of sides (aspect ratio <= 200) instead of resizing a 9,999,999-pixel square (0.12.0 and older).
QWEN2_VL_FACTOR_PAIR_FROM = (0, 13, 0)


def _smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """transformers' ``qwen2_vl/image_processing_qwen2_vl.py::smart_resize`` (what vLLM's Qwen2-VL processing info
    calls): both sides rounded to ``factor``, scaled down (floor) when the area exceeds ``max_pixels`` and up (ceil)
    when it is below ``min_pixels``. Returns ``(height, width)`` in pixels."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def qwen2_vl_max_image_grid(
    patch: int, merge: int, min_pixels: int, max_pixels: int, version: tuple[int, int, int]
) -> tuple[int, int]:
    """Patches ``(rows, columns)`` of the image with the most features that vLLM's Qwen2-VL profile builds.

    Up to 0.12.x ``Qwen2VLProcessingInfo.get_image_size_with_most_features`` resizes a 9,999,999 x 9,999,999 image
    with :func:`_smart_resize` (``factor = patch x merge``; vllm@0.12.0:vllm/model_executor/models/qwen2_vl.py); from
    0.13.0 it takes ``n = max_pixels // (patch x merge)^2`` merged patches and splits ``n`` (or the largest smaller
    count that allows it) into the closest factor pair whose ratio is at most 200 (vllm@0.13.0, same file). The
    image tokens are ``rows x columns / merge^2`` (``_get_vision_info``, one frame, ``grid_t`` 1).
    """
    unit = patch * merge
    if version >= QWEN2_VL_FACTOR_PAIR_FROM:
        n = max(1, max_pixels // (unit * unit))
        hf, wf = 1, n
        for m in range(n, 0, -1):
            d = math.isqrt(m)
            while d > 1 and m % d:
                d -= 1
            hf, wf = d, m // d
            if wf / hf <= 200:
                break
        return hf * merge, wf * merge
    h, w = _smart_resize(9_999_999, 9_999_999, unit, min_pixels, max_pixels)
    return h // patch, w // patch


def _processor_pixels(model: ModelSpec, kw: dict[str, Any]) -> tuple[int, int, str, str]:
    """``(min_pixels, max_pixels, where max_pixels is from, where min_pixels is from)``: ``--mm-processor-kwargs``
    first (vLLM merges them into the HF processor's arguments), then the checkpoint's ``preprocessor_config.json``
    bundled in the catalogue (flat ``min_pixels``/``max_pixels`` or ``size.shortest_edge``/``size.longest_edge``); 0
    (and an empty source) where neither says."""
    from kvlint.models.catalogue import processor_config

    found = processor_config(model.id) if model.id else None
    proc: dict[str, Any] = found[0] if found else {}
    p_size = proc.get("size")
    size: dict[str, Any] = p_size if isinstance(p_size, dict) else {}
    k_size_raw = kw.get("size")
    k_size: dict[str, Any] = k_size_raw if isinstance(k_size_raw, dict) else {}
    kw_max = _int(kw.get("max_pixels")) or _int(k_size.get("longest_edge"))
    kw_min = _int(kw.get("min_pixels")) or _int(k_size.get("shortest_edge"))
    min_px = kw_min or _int(proc.get("min_pixels")) or _int(size.get("shortest_edge"))
    max_px = kw_max or _int(proc.get("max_pixels")) or _int(size.get("longest_edge"))
    if kw_max:
        where = "--mm-processor-kwargs"
    elif found and max_px:
        where = f"preprocessor_config.json {found[1]}"
    else:
        where = ""
    min_where = (
        "--mm-processor-kwargs" if kw_min else (f"preprocessor_config.json {found[1]}" if found else "")
    )
    return min_px, max_px, where, min_where


def _pixels_refusal(mt: str, min_px: int, max_px: int, where: str, min_where: str) -> str | None:
    """The note refusing a Qwen-VL ``min_pixels``/``max_pixels`` outside 1 .. :data:`QWEN_VL_MAX_PIXELS` (``where``
    and ``min_where`` name each value's source: ``--mm-processor-kwargs`` or the preprocessor_config.json citation),
    or None when both are in range (0 means unset)."""
    for name, px, src in (("max_pixels", max_px, where), ("min_pixels", min_px, min_where)):
        if px and not 1 <= px <= QWEN_VL_MAX_PIXELS:
            return (
                f"{mt}: {name} {px:,} (from {src}) is not a pixel count from 1 to {QWEN_VL_MAX_PIXELS:,}; "
                "encoder profiling not modelled"
            )
    return None


def _qwen2_vl_profile(
    model: ModelSpec,
    mt: str,
    *,
    era: str,
    version: tuple[int, int, int],
    max_num_seqs: int,
    max_num_batched_tokens: int,
    max_model_len: int,
    chunked_prefill: bool,
    tp: int,
    dtype_bytes: int,
    limits: dict[str, int],
    kw: dict[str, Any],
    item_ranks: int = 1,
) -> tuple[EncoderProfile | None, list[str]]:
    """The Qwen2-VL / Qwen2.5-VL part of :func:`encoder_profile` (bytes per GPU).

    The largest image is :func:`qwen2_vl_max_image_grid`. On V1 the profile also weighs a video of the same frame
    size (``MultiModalBudget``: ``get_mm_max_tokens_per_item`` with one item of each modality the prompt limit
    allows, ``seq_len = max_model_len``): frames are added while the video's tokens (``ceil(frames /
    temporal_patch_size)`` frames' grid, ``/ merge^2``) stay within ``max_model_len`` (less one image's tokens up
    to 0.10.1), capped at ``_MAX_FRAMES_PER_VIDEO`` (16, 14 from 0.11.0) and at least 1; the modality with more tokens
    is profiled (``get_modality_with_max_tokens``; on a tie the numbers are the same). Items then follow
    :func:`_v1_items` with that modality's limit. The vision tower: Qwen2-VL's ``embed_dim`` x ``mlp_ratio`` MLP
    (:func:`_vit_peak`), Qwen2.5-VL's gated ``hidden_size``/``intermediate_size`` MLP (``3 x intermediate / tp + 3 x
    hidden`` per patch), plus the float32 ``pixel_values`` (``3 x temporal_patch_size x patch^2`` per patch);
    ``--mm-encoder-tp-mode data`` replicates Qwen2.5-VL's (the caller passes ``tp`` 1; Qwen2-VL falls back to
    ``weights``, :func:`encoder_tp_data_applies`) and shares the items over the ``item_ranks`` tensor-parallel ranks (:func:`encoder_items_per_rank`). V0 profiles images only here (its dummy
    sequences' videos are not modelled; noted).
    """
    vis = _vision(model)
    notes: list[str] = []
    min_px, max_px, where, min_where = _processor_pixels(model, kw)
    if not max_px:
        notes.append(
            f"{mt}: the checkpoint's preprocessor_config.json (max_pixels) is not bundled for {model.id or 'this model'}"
            "; encoder profiling not modelled (give --mm-processor-kwargs '{\"max_pixels\": N}' to model it)"
        )
        return None, notes
    refused = _pixels_refusal(mt, min_px, max_px, where, min_where)
    if refused:
        notes.append(refused)
        return None, notes
    patch = _size(vis.get("patch_size"), 14)
    merge = _size(vis.get("spatial_merge_size"), 2)
    temporal = max(1, _size(vis.get("temporal_patch_size"), 2))
    if mt == "qwen2_vl":
        h_v = _size(vis.get("embed_dim"), 1280)
        wide = h_v * _float(vis.get("mlp_ratio"), 4.0)
        i_v = int(wide) if math.isfinite(wide) and wide <= MAX_INT_SETTING else 4 * h_v
    else:
        h_v = _size(vis.get("hidden_size"), 1280)
        i_v = _size(vis.get("intermediate_size")) or 4 * h_v
    rows_p, cols_p = qwen2_vl_max_image_grid(patch, merge, min_px or 56 * 56, max_px, version)
    frame_patches = rows_p * cols_p
    image_tokens = max(1, frame_patches // (merge * merge))
    image_limit = int(limits.get("image", 1 if era == "v0" else 999))
    video_limit = int(limits.get("video", 1 if era == "v0" else 999))

    def video_tokens(frames: int) -> int:
        padded = frames + frames % temporal
        return max(padded // temporal, 1) * frame_patches // (merge * merge)

    modality, per_item, enc_per_item, limit = "image", image_tokens, frame_patches, image_limit
    frames = 1
    if era == "v1" and video_limit > 0:
        cap = 16 if version < QWEN2_VL_FRAMES_14_FROM else 14
        seq = max_model_len
        if version < QWEN2_VL_VIDEO_MINUS_IMAGES_BEFORE and image_limit > 0:
            seq -= image_tokens
        n = 0
        while n < cap and video_tokens(n + 1) <= seq:
            n += 1
        frames = max(1, min(n, cap))
        v_tokens = video_tokens(frames)
        if image_limit <= 0 or v_tokens > image_tokens:
            modality, per_item, limit = "video", v_tokens, video_limit
            enc_per_item = max((frames + frames % temporal) // temporal, 1) * frame_patches
    if limit <= 0:
        if era == "v0" and video_limit > 0:
            notes.append(
                "--limit-mm-per-prompt disables images: V0's dummy sequences carry videos, which kvlint does not "
                "model; encoder profiling not modelled"
            )
        else:
            notes.append("--limit-mm-per-prompt disables images and videos: no encoder profiling")
        return None, notes
    items, how = _profile_items(
        era, per_item, limit, max_num_seqs, max_num_batched_tokens, max_model_len, chunked_prefill, modality
    )
    if era == "v0":
        how += "; the dummy sequences' videos are not modelled"
    # pixel_values: one row of channels x temporal_patch_size x patch^2 values per patch, float32 as the HF processor
    # returns them, held by the caller while the tower runs on its model-dtype copy (Qwen2_5_VisionTransformer.forward:
    # x.to(device, dtype)); Qwen2.5-VL's gated MLP keeps gate_up (2 x intermediate) alive through the activation and
    # down_proj (vllm@0.22.0:vllm/model_executor/models/qwen2_5_vl.py::Qwen2_5_VisionMLP.forward): 3 x intermediate
    # + 3 x hidden per token, where Qwen2-VL's fc1 -> QuickGELU -> fc2 MLP is the 2 + 2 of _vit_peak
    pixels = items * enc_per_item * 3 * temporal * patch * patch * 4
    tower_tok = encoder_items_per_rank(items, item_ranks) * enc_per_item
    if mt == "qwen2_5_vl":
        peak = tower_tok * (3 * math.ceil(i_v / max(1, tp)) + 3 * h_v) * dtype_bytes + pixels
    else:
        peak = _vit_peak(tower_tok, h_v, i_v, tp, dtype_bytes) + pixels
    rows = per_item
    if era == "v1" and cache_holds_full_budget(version):
        rows = max(max_num_batched_tokens, per_item)
        notes.append(f"profile encoder cache padded to the {rows}-token budget per item (vLLM 0.11.0-0.12.x)")
    cache = items * rows * model.hidden_size * dtype_bytes
    what = (
        f"{frames}-frame video of {cols_p * patch}x{rows_p * patch} pixels"
        if modality == "video"
        else f"image of {cols_p * patch}x{rows_p * patch} pixels"
    )
    notes.append(
        f"multimodal encoder profiling (qwen-vl, max_pixels {max_px} from {where}): {items} {modality} item(s), "
        f"each a {what}: {enc_per_item} patches through the vision tower and {per_item} tokens ({how}); "
        f"encoder cache {cache / 2**30:.2f} GiB"
    )
    prof = EncoderProfile(
        "qwen-vl", items, per_item, enc_per_item, int(peak), int(cache), tuple(notes), modality
    )
    return prof, notes


#: The first release read in which a tower is built inside ``SupportsMultiModal._mark_tower_model`` (0.15.1, 0.16.0,
#: 0.17.0, 0.19.0 and 0.20.0 wheels: ``vllm/model_executor/models/interfaces.py``): "Tower model components are
#: automatically skipped when ``--limit-mm-per-prompt`` is set to zero for all of their modalities" (``no_init_weights``
#: puts a ``StageMissingLayer`` in their place, so neither their weights nor their memory are loaded). 0.14.0 has no
#: such helper; 0.15.0 was not read and keeps 0.14's per-model rule.
TOWER_SKIP_GENERIC_FROM = (0, 15, 1)
#: The first release whose model classes skip a tower at a limit of 0 one by one (vllm-project/vllm#22224 for LLaVA
#: and #22299 for the others, August 2025; read in the 0.10.1.1, 0.10.2, 0.11.0, 0.12.0, 0.13.0 and 0.14.0 wheels:
#: ``if multimodal_config.get_limit_per_prompt("image"): self.vision_tower = ...``); earlier releases build every
#: tower (the 0.10.0 wheel: no model class reads the limit to build a tower).
TOWER_SKIP_PER_MODEL_FROM = (0, 10, 1)
#: 0.10.1 - 0.15.0: architecture -> (the release from which its class tests the limit, the modalities of its vision
#: tower, of its audio tower or None). Read in the wheels above: ``llava.py`` (LLaVA and its subclass Mantis),
#: ``mistral3.py``, ``mllama4.py``, ``step3_vl.py``, ``qwen2_vl.py`` (Qwen2-VL and its subclass Tarsier2: image or
#: video), ``qwen2_5_vl.py``, ``qwen2_5_omni_thinker.py`` (audio tower on the audio limit) from 0.10.1.1;
#: ``qwen3_vl.py``, ``qwen3_vl_moe.py`` from 0.11.0; ``pixtral.py``, ``hunyuan_vision.py``, ``opencua.py`` from
#: 0.12.0. Any other class builds its towers whatever the limit there (Gemma 3's, for one).
PER_MODEL_TOWER_SKIP: dict[str, tuple[tuple[int, int, int], tuple[str, ...], tuple[str, ...] | None]] = {
    "LlavaForConditionalGeneration": ((0, 10, 1), ("image",), None),
    "MantisForConditionalGeneration": ((0, 10, 1), ("image",), None),
    "Mistral3ForConditionalGeneration": ((0, 10, 1), ("image",), None),
    "Llama4ForConditionalGeneration": ((0, 10, 1), ("image",), None),
    "Step3VLForConditionalGeneration": ((0, 10, 1), ("image",), None),
    "Qwen2VLForConditionalGeneration": ((0, 10, 1), ("image", "video"), None),
    "Tarsier2ForConditionalGeneration": ((0, 10, 1), ("image", "video"), None),
    "Qwen2_5_VLForConditionalGeneration": ((0, 10, 1), ("image", "video"), None),
    "Qwen2_5OmniModel": ((0, 10, 1), ("image", "video"), ("audio",)),
    "Qwen2_5OmniForConditionalGeneration": ((0, 10, 1), ("image", "video"), ("audio",)),
    "Qwen3VLForConditionalGeneration": ((0, 11, 0), ("image", "video"), None),
    "Qwen3VLMoeForConditionalGeneration": ((0, 11, 0), ("image", "video"), None),
    "PixtralForConditionalGeneration": ((0, 12, 0), ("image",), None),
    "HunYuanVLForConditionalGeneration": ((0, 12, 0), ("image",), None),
    "OpenCUAForConditionalGeneration": ((0, 12, 0), ("image",), None),
}


#: The modalities kvlint's plan reads a limit of (the towers' marks in :data:`kvlint.memory.tower_marks.TOWER_MARKS`)
MODALITIES = ("image", "video", "audio", "vision_chunk")


def language_model_only_limits(limits: dict[str, int]) -> dict[str, int]:
    """``--language-model-only``: every modality's limit 0 (``MultiModalConfig.language_model_only``, 0.17.0 - 0.34.0
    wheels: "Equivalent to setting ``--limit-mm-per-prompt`` to 0 for every modality";
    ``get_limit_per_prompt`` returns 0 before it looks at the limits), so no tower is built and no encoder profiled."""
    return {**dict.fromkeys(limits, 0), **dict.fromkeys(MODALITIES, 0)}


def _tower_marks(arch: str) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """(vision tower's modalities, audio tower's modalities) of ``arch`` from 0.15.1 (:data:`kvlint.memory.
    tower_marks.TOWER_MARKS`): the vision tower is the mark that serves an image, video or ``vision_chunk`` input
    (Nemotron Nano VL's one mark also serves audio), the audio tower the mark that serves audio (the audio-only mark
    where a model has two). None where vLLM marks no such tower."""
    from kvlint.memory.tower_marks import TOWER_MARKS

    marks = TOWER_MARKS.get(arch, ())
    vision = next((m for m in marks if {"image", "video", "vision_chunk"} & set(m)), None)
    audio = next((m for m in marks if m == ("audio",)), None) or next(
        (m for m in marks if "audio" in m), None
    )
    return vision, audio


def towers_not_loaded(
    model: ModelSpec, version: tuple[int, ...], limit_mm_per_prompt: dict[str, int] | None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The encoder towers vLLM does not build for these ``--limit-mm-per-prompt`` limits, as ``(tower, modalities)``
    with ``tower`` ``"vision"`` or ``"audio"``: a tower whose modalities are all limited to 0 (an unset modality is
    999: ``MultiModalConfig.get_limit_per_prompt``; an image-and-video tower, Qwen3.5's or Qwen2.5-VL's, stays at
    ``{"image": 0}``). From :data:`TOWER_SKIP_GENERIC_FROM` the towers and modalities of the architecture's
    ``_mark_tower_model`` calls (:func:`_tower_marks`; an architecture vLLM does not mark, or one kvlint has not
    read, keeps its towers); from :data:`TOWER_SKIP_PER_MODEL_FROM` the classes of :data:`PER_MODEL_TOWER_SKIP`;
    none before."""
    limits = limit_mm_per_prompt or {}
    if not limits or version < TOWER_SKIP_PER_MODEL_FROM:
        return ()
    cfg = model.config or {}
    arch = str((model.architectures or ("",))[0] or "")

    def off(modalities: tuple[str, ...] | None) -> bool:
        return bool(modalities) and all(_limit(limits.get(m)) == 0 for m in modalities or ())

    vision: tuple[str, ...] | None
    audio: tuple[str, ...] | None
    if version >= TOWER_SKIP_GENERIC_FROM:
        vision, audio = _tower_marks(arch)
    else:
        since, vision, audio = PER_MODEL_TOWER_SKIP.get(arch, ((99,), None, None))
        if version < since:
            vision = audio = None
    out: list[tuple[str, tuple[str, ...]]] = []
    if tower_config(cfg, "vision_config") and vision and off(vision):
        out.append(("vision", vision))
    if tower_config(cfg, "audio_config") and audio and off(audio):
        out.append(("audio", audio))
    return tuple(out)


def _limit(value: Any) -> int:
    """One modality's limit as ``get_limit_per_prompt`` reads it: unset is 999; a count, else 999."""
    if value is None:
        return 999
    try:
        return int(value)
    except (TypeError, ValueError):
        return 999


def is_multimodal(model: ModelSpec) -> bool:
    """The config declares a vision or audio tower (``vision_config``/``audio_config``; Qwen2.5-Omni's inside
    ``thinker_config``)."""
    c = model.config or {}
    return bool(tower_config(c, "vision_config") or tower_config(c, "audio_config"))


def cache_holds_full_budget(version: tuple[int, int, int]) -> bool:
    """0.11.0 - 0.12.x copy every dummy encoder output into a zero tensor of ``encoder budget`` rows before caching it
    (``vllm@0.11.2:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run``: ``output.new_zeros((encoder_budget,
    hidden))``; absent in 0.10.2 and 0.13.0): the profile's encoder cache is then items x budget x hidden, not
    items x tokens per item x hidden (gt-203: 63 x 16,384 x 5,376 x 2 B = 10.3 GiB)."""
    return (0, 11, 0) <= version < (0, 13, 0)


def encoder_profile(
    model: ModelSpec,
    *,
    era: str,
    version: tuple[int, int, int] = (0, 33, 0),
    max_num_seqs: int,
    max_num_batched_tokens: int,
    max_model_len: int,
    chunked_prefill: bool,
    tp: int,
    dtype_bytes: int,
    limit_mm_per_prompt: dict[str, int] | None = None,
    mm_processor_kwargs: dict[str, Any] | None = None,
    skip_mm_profiling: bool = False,
    mm_encoder_tp_mode: str | None = None,
) -> tuple[EncoderProfile | None, list[str]]:
    """The encoder part of vLLM's profile run for a multimodal ``model``, or None (text-only model, images
    disabled with ``--limit-mm-per-prompt '{"image": 0}'``, or an architecture whose maximum item is unknown;
    a model with an audio tower and no vision tower, Qwen2-Audio, with a note that V1's audio encoder pass is
    not modelled, unless ``--skip-mm-profiling`` or an audio limit of 0 leaves none).

    Returns ``(profile, notes)``. Rules by architecture (``model_type``): ``mllama`` (V0 encoder-decoder),
    ``gemma3`` (SigLIP, ``mm_tokens_per_image`` + 4 prompt tokens per image: ``vllm@0.11.2:
    vllm/model_executor/models/gemma3_mm.py::Gemma3ProcessingInfo.get_image_repl`` wraps the image tokens in
    ``\\n\\n<start_of_image>`` … ``<end_of_image>\\n\\n``), ``llama4`` (up to ``max_patches`` tiles + a global one,
    each pixel-shuffled to ``get_patch_per_chunk`` tokens; see the branch), Qwen2-VL family (``max_pixels`` from
    ``--mm-processor-kwargs``; ``patch_size``, ``spatial_merge_size``), and CLIP/SigLIP towers with a fixed
    ``image_size`` (LLaVA-style: ``(image_size / patch_size)^2`` tokens, ``image_seq_length`` when the config gives it).
    """
    vis = _vision(model)
    notes: list[str] = []
    limits = limit_mm_per_prompt or {}
    own = (model.config or {}).get("model_type")
    mt = own if isinstance(own, str) and own else str(model.model_type or "")
    skipped = era == "v1" and skip_mm_profiling and version >= SKIP_MM_PROFILING_FROM
    if not vis:
        if tower_config(model.config or {}, "audio_config") and era == "v1" and not skipped:
            if int(limits.get("audio", 1)) > 0:
                # an audio-only model (Qwen2-Audio): V1's profile run encodes dummy audio clips of the longest
                # length and holds their embeddings in the encoder cache during the dummy forward
                # (vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::profile_run,
                # gpu/mm/encoder_runner.py::profile_encoder_cache); no formula for that pass here
                notes.append(
                    f"{mt}: vLLM's profile run also passes dummy audio clips through the audio encoder and keeps "
                    "their embeddings in the encoder cache; encoder profiling not modelled"
                )
        return None, notes
    if skipped:
        notes.append(
            "--skip-mm-profiling: vLLM does not profile the multimodal encoder or its cache (GPUModelRunner."
            "profile_run, vllm >= 0.10.1); images at run time need memory the plan does not hold"
        )
        return None, notes
    if mt in ("qwen2_vl", "qwen2_5_vl"):
        data = encoder_tp_data_applies(mm_encoder_tp_mode, model.architectures, version)
        return _qwen2_vl_profile(
            model,
            str(mt),
            era=era,
            version=version,
            max_num_seqs=max_num_seqs,
            max_num_batched_tokens=max_num_batched_tokens,
            max_model_len=max_model_len,
            chunked_prefill=chunked_prefill,
            tp=1 if data else tp,
            dtype_bytes=dtype_bytes,
            limits=limits,
            kw=mm_processor_kwargs or {},
            item_ranks=tp if data else 1,
        )
    limit = int(limits.get("image", 1 if era == "v0" else 999))
    if limit <= 0:
        notes.append("--limit-mm-per-prompt disables images: no encoder profiling")
        return None, notes
    h_v = _size(vis.get("hidden_size"))
    i_v = _size(vis.get("intermediate_size")) or 4 * h_v
    patch = _size(vis.get("patch_size"), 14)
    text_hidden = model.hidden_size
    kw = mm_processor_kwargs or {}

    if mt == "mllama":
        tiles = _size(vis.get("max_num_tiles"), 4)
        size = _size(vis.get("image_size"), 560)
        n = (size // patch) ** 2 + 1
        n_pad = n + (8 - n % 8) % 8
        enc_per_item = tiles * n_pad
        items = max_num_seqs if era == "v0" else max(1, max_num_batched_tokens // enc_per_item)
        kept = vis.get("intermediate_layers_indices")
        inter_layers = len(kept) if isinstance(kept, list) else 0
        tok = items * enc_per_item
        mask = items * (tiles * n_pad) ** 2 * dtype_bytes
        peak = mask + _vit_peak(tok, h_v, i_v, tp, dtype_bytes) + tok * inter_layers * h_v * dtype_bytes
        peak += items * tiles * 3 * size * size * dtype_bytes
        cache = tok * text_hidden * dtype_bytes
        notes.append(
            f"mllama profile: {items} image(s) x {tiles} tiles x {n_pad} patches through the vision encoder "
            f"(attention mask, {inter_layers} kept intermediate layers)"
        )
        return EncoderProfile("mllama", items, 1, enc_per_item, int(peak), int(cache), tuple(notes)), notes

    if mt in ("gemma3", "gemma3n"):
        size = _size(vis.get("image_size"), 896)
        enc_per_item = (size // patch) ** 2
        llm_tokens = _size((model.config or {}).get("mm_tokens_per_image"), 256)
        per_item = llm_tokens + 4
        arch = "gemma3"
    elif mt == "llama4":
        # vllm@0.12.0:vllm/model_executor/models/mllama4.py: the dummy image is the one with the most features,
        # max_patches tiles of image_size stacked 16:1 (Mllama4ProcessingInfo.get_image_size_with_most_features; the
        # image processor's max_patches, 16 by default: transformers' Llama4ImageProcessorFast, preprocessor_config.json
        # not read [assumed]), cut into those tiles plus a global one; each tile is image_size/patch_size squared
        # patches + a class token through the vision model (Llama4VisionModel: num_patches + 1), then pixel-shuffled to
        # get_patch_per_chunk = patches // round(1 / pixel_shuffle_ratio^2) language-model tokens. The encoder budget
        # counts the whole placeholder (MultiModalProfiler.get_mm_max_contiguous_tokens), which transformers'
        # Llama4Processor._prompt_split_image writes as <|image_start|>, one row of patch tokens and a
        # <|tile_y_separator|> per tile (a 16:1 image has no x separators), <|image|>, the global tile's patch
        # tokens and <|image_end|>.
        size = _size(vis.get("image_size"), 336)
        tiles = _int(kw.get("max_patches"), 16)
        if not 1 <= tiles <= LLAMA4_MAX_TILES:
            notes.append(
                f"llama4: --mm-processor-kwargs max_patches {kw.get('max_patches')!r} is not a tile count from 1 to "
                f"{LLAMA4_MAX_TILES:,}; encoder profiling not modelled"
            )
            return None, notes
        patches = (size // patch) ** 2
        ratio = _float(vis.get("pixel_shuffle_ratio"), 0.5)
        # pixel shuffle merges patches: a ratio above 1 is no such config
        ratio = ratio if ratio <= 1 else 0.5
        area = ratio * ratio  # 0.0 for a ratio of 1e-300: no patch then makes a token
        per_chunk = patches // max(1, round(1.0 / area)) if area * MAX_INT_SETTING >= 1 else 0
        chunks = tiles + 1 if tiles > 1 else 1
        per_item = (tiles * (per_chunk + 1) if tiles > 1 else 0) + per_chunk + 3
        enc_per_item = chunks * (patches + 1)
        pixels = chunks * size * size
        arch = "llama4"
    elif mt.startswith("qwen3"):
        max_pixels = _int(kw.get("max_pixels"))
        if not max_pixels:
            notes.append(
                f"{mt}: encoder profiling not modelled: vLLM's Qwen3-VL profile item is a video sized by the "
                "checkpoint's video_preprocessor_config.json (the whole clip's pixels bounded by its longest_edge, "
                "Qwen3VLProcessingInfo._get_vision_info with video_smart_resize) and counted at 12.5 prompt tokens "
                "per video token (get_max_video_tokens, vllm@0.12.0:vllm/model_executor/models/qwen3_vl.py), and "
                "kvlint bundles neither processor file (give --mm-processor-kwargs '{\"max_pixels\": N}' to model "
                "an image profile)"
            )
            return None, notes
        refused = _pixels_refusal(str(mt), 0, max_pixels, "--mm-processor-kwargs", "")
        if refused:
            notes.append(refused)
            return None, notes
        merge = _size(vis.get("spatial_merge_size"), 2)
        enc_per_item = max_pixels // (patch * patch)
        per_item = max(1, enc_per_item // (merge * merge))
        size = int(math.sqrt(max_pixels))
        arch = "qwen-vl"
    elif vis.get("image_size"):
        size = _size(vis.get("image_size"))
        enc_per_item = (size // patch) ** 2 + (1 if "clip" in str(vis.get("model_type", "")) else 0)
        per_item = _size((model.config or {}).get("image_seq_length")) or enc_per_item
        arch = "vit"
    else:
        notes.append(f"{mt}: vision tower without a fixed image size; encoder profiling not modelled")
        return None, notes

    items, how = _profile_items(
        era, per_item, limit, max_num_seqs, max_num_batched_tokens, max_model_len, chunked_prefill, "image"
    )
    tok = items * enc_per_item
    if arch != "llama4":
        pixels = size * size
    tower_tp, tower_tok = tp, tok
    if encoder_tp_data_applies(mm_encoder_tp_mode, model.architectures, version):
        # the whole tower on every rank, each encoding its share of the items (encoder_items_per_rank)
        tower_tp, tower_tok = 1, encoder_items_per_rank(items, tp) * enc_per_item
    peak = _vit_peak(tower_tok, h_v, i_v, tower_tp, dtype_bytes) + items * 3 * pixels * dtype_bytes
    rows = per_item
    if era == "v1" and cache_holds_full_budget(version):
        rows = max(max_num_batched_tokens, per_item)
        notes.append(f"profile encoder cache padded to the {rows}-token budget per item (vLLM 0.11.0-0.12.x)")
    cache = items * rows * text_hidden * dtype_bytes
    notes.append(
        f"multimodal encoder profiling ({arch}): {items} image(s), each {enc_per_item} patch tokens through the "
        f"vision tower ({how}); encoder cache {cache / 2**30:.2f} GiB"
    )
    return EncoderProfile(arch, items, per_item, enc_per_item, int(peak), int(cache), tuple(notes)), notes
