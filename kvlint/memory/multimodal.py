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

Architectures without a known maximum item size (Qwen2-VL-style processors read ``max_pixels`` from
``preprocessor_config.json``, which kvlint does not read) are modelled only when ``--mm-processor-kwargs`` gives
``max_pixels``; otherwise :func:`encoder_profile` says so in its notes and returns no profile.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from kvlint.types import ModelSpec
from kvlint.values import digits

__all__ = ["EncoderProfile", "cache_holds_full_budget", "encoder_profile", "is_multimodal", "parse_mm_limits"]


@dataclass(frozen=True)
class EncoderProfile:
    """The multimodal part of one profile run (bytes per GPU).

    ``arch`` the rule used; ``items`` dummy items encoded in one batch; ``tokens_per_item`` decoder tokens one item
    takes (what the encoder budget counts); ``encoder_tokens_per_item`` tokens through the vision tower;
    ``peak_bytes`` the shape-derived transient peak of the encoder pass (before :data:`calibration.K_ENCODER`);
    ``cache_bytes`` the encoder outputs held while the text dummy run goes (V1 encoder cache, mllama's projected
    cross-attention states); ``notes`` how the numbers were chosen.
    """

    arch: str
    items: int
    tokens_per_item: int
    encoder_tokens_per_item: int
    peak_bytes: int
    cache_bytes: int
    notes: tuple[str, ...] = ()


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
    except ValueError:
        pass
    out: dict[str, int] = {}
    for part in text.split(","):
        k, _, v = part.partition("=")
        n = digits(v)
        if k.strip() and n is not None:
            out[k.strip()] = n
    return out


def _vision(model: ModelSpec) -> dict[str, Any]:
    c = model.config or {}
    v = c.get("vision_config")
    return v if isinstance(v, dict) else {}


def _int(x: Any, default: int = 0) -> int:
    try:
        return int(x)
    except (TypeError, ValueError, OverflowError):
        return default


#: The most tiles kvlint profiles a Llama 4 image as (``--mm-processor-kwargs`` ``max_patches``; the image
#: processor's default is 16): beyond it, a value is taken as a mistake and the encoder profile is not modelled
#: rather than sized at billions of GiB
LLAMA4_MAX_TILES = 1024


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


def is_multimodal(model: ModelSpec) -> bool:
    """The config declares a vision or audio tower (``vision_config``/``audio_config``)."""
    c = model.config or {}
    return isinstance(c.get("vision_config"), dict) or isinstance(c.get("audio_config"), dict)


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
) -> tuple[EncoderProfile | None, list[str]]:
    """The encoder part of vLLM's profile run for a multimodal ``model``, or None (text-only model, images
    disabled with ``--limit-mm-per-prompt '{"image": 0}'``, or an architecture whose maximum item is unknown).

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
    if not vis:
        return None, notes
    limits = limit_mm_per_prompt or {}
    limit = int(limits.get("image", 1 if era == "v0" else 999))
    if limit <= 0:
        notes.append("--limit-mm-per-prompt disables images: no encoder profiling")
        return None, notes
    mt = (model.config or {}).get("model_type") or model.model_type
    h_v = _int(vis.get("hidden_size"))
    i_v = _int(vis.get("intermediate_size")) or 4 * h_v
    patch = _int(vis.get("patch_size"), 14)
    text_hidden = model.hidden_size
    kw = mm_processor_kwargs or {}

    if mt == "mllama":
        tiles = _int(vis.get("max_num_tiles"), 4)
        size = _int(vis.get("image_size"), 560)
        n = (size // patch) ** 2 + 1
        n_pad = n + (8 - n % 8) % 8
        enc_per_item = tiles * n_pad
        items = max_num_seqs if era == "v0" else max(1, max_num_batched_tokens // enc_per_item)
        inter_layers = len(vis.get("intermediate_layers_indices") or [])
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
        size = _int(vis.get("image_size"), 896)
        enc_per_item = (size // patch) ** 2
        llm_tokens = _int((model.config or {}).get("mm_tokens_per_image"), 256)
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
        size = _int(vis.get("image_size"), 336)
        tiles = _int(kw.get("max_patches"), 16)
        if not 1 <= tiles <= LLAMA4_MAX_TILES:
            notes.append(
                f"llama4: --mm-processor-kwargs max_patches {kw.get('max_patches')!r} is not a tile count from 1 to "
                f"{LLAMA4_MAX_TILES:,}; encoder profiling not modelled"
            )
            return None, notes
        patches = (size // patch) ** 2
        ratio = float(vis.get("pixel_shuffle_ratio") or 0.5)
        per_chunk = patches // max(1, round(1.0 / (ratio * ratio)))
        chunks = tiles + 1 if tiles > 1 else 1
        per_item = (tiles * (per_chunk + 1) if tiles > 1 else 0) + per_chunk + 3
        enc_per_item = chunks * (patches + 1)
        pixels = chunks * size * size
        arch = "llama4"
    elif mt.startswith("qwen2_vl") or mt.startswith("qwen2_5_vl") or mt.startswith("qwen3"):
        max_pixels = _int(kw.get("max_pixels"))
        if not max_pixels:
            notes.append(
                f"{mt}: the processor's max_pixels (preprocessor_config.json) is not known to kvlint; encoder "
                "profiling not modelled (give --mm-processor-kwargs '{\"max_pixels\": N}' to model it)"
            )
            return None, notes
        merge = _int(vis.get("spatial_merge_size"), 2)
        enc_per_item = max_pixels // (patch * patch)
        per_item = max(1, enc_per_item // (merge * merge))
        size = int(math.sqrt(max_pixels))
        arch = "qwen-vl"
    elif vis.get("image_size"):
        size = _int(vis.get("image_size"))
        enc_per_item = (size // patch) ** 2 + (1 if "clip" in str(vis.get("model_type", "")) else 0)
        per_item = _int((model.config or {}).get("image_seq_length")) or enc_per_item
        arch = "vit"
    else:
        notes.append(f"{mt}: vision tower without a fixed image size; encoder profiling not modelled")
        return None, notes

    if era == "v0":
        seqs = max(1, min(max_num_seqs, max_num_batched_tokens // max(1, per_item * limit)))
        items = seqs * limit
        how = f"V0: {seqs} dummy sequence(s) x {limit} image(s)"
    else:
        items = _v1_items(
            per_item, limit, max_num_seqs, max_num_batched_tokens, max_model_len, chunked_prefill
        )
        how = (
            f"V1 encoder budget {max(max_num_batched_tokens, per_item)} tokens / {per_item} language-model "
            "tokens per image"
        )
    tok = items * enc_per_item
    if arch != "llama4":
        pixels = size * size
    peak = _vit_peak(tok, h_v, i_v, tp, dtype_bytes) + items * 3 * pixels * dtype_bytes
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
