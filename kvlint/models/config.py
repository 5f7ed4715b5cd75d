"""Read a Hugging Face ``config.json`` into a :class:`~kvlint.types.ModelSpec`.

Everything here is pure (no I/O). The field-name aliases, the choice of the text sub-config for
multimodal models, head-size precedence, MLA detection, per-layer attention kinds and the
max-model-len candidate keys follow vLLM as summarised in ``docs/engine-memory-model.md``
§1.3 (KV bytes per layer type), §1.5 (hybrid models), §1.7 (dtype) and §1.8 (max_model_len); the
vLLM sources behind those sections are ``vllm@0.33.0:vllm/transformers_utils/config.py``
(``CONFIG_FIELD_ALIASES``), ``vllm/transformers_utils/model_arch_config_convertor.py``
(``get_head_size``, ``get_total_num_kv_heads``, ``is_deepseek_mla``, ``derive_max_model_len_and_key``)
and ``vllm/config/model.py`` (``get_sliding_window``, ``_get_and_verify_dtype``).
Per-family layer patterns (which layers slide) come from the model code cited at each branch of
:func:`_layer_kinds`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from kvlint.models.shapes import DTYPE_BYTES, MAX_CONFIG_INT, dtype_bytes_of, nemotron_h_pattern
from kvlint.models.shapes import config_int as _int
from kvlint.models.shapes import dsa_indexer_layers as _dsa_indexer_layers
from kvlint.models.towers import COUNTED_AUDIO_ENCODERS, tower_configs
from kvlint.types import LayerSpec, ModelSpec

__all__ = [
    "parse_config",
    "DEEPSEEK_V41_UNMODELLED",
    "MLA_MODEL_TYPES",
    "DTYPE_BYTES",
    "declared_dtype",
    "dtype_bytes_of",
    "text_config_of",
]

#: Why kvlint refuses a DeepSeek V4.1 config (``DeepseekV41ForCausalLM``, model_type ``deepseek_v41``) instead of
#: sizing it as DeepSeek V4, whose model_type prefix it shares. vllm@0.34.0 registers the architecture on its own
#: package (vllm/model_executor/models/registry.py: ``"DeepseekV41ForCausalLM": ("vllm.models.deepseek_v41", ...)``;
#: vllm/transformers_utils/configs/deepseek_v41.py::DeepseekV41Config flattens the checkpoint's ``text_config`` and
#: ``vision_config``), and sglang 0.5.21 on reads it (sglang/srt/configs/deepseek_v41.py::
#: normalize_deepseek_v41_config maps it onto its DeepseekV4ForCausalLM with V4.1's compressor and indexer). What
#: its KV cache holds per token (a compressed sparse attention whose compressed KV and indexer are shared by the
#: layers of one compress ratio, beside each layer's window KV; Engram n-gram tables; MTP draft layers) is not
#: restated in docs/engine-memory-model.md, so no per-token figure is given rather than V4's.
DEEPSEEK_V41_UNMODELLED = (
    "DeepseekV41ForCausalLM (DeepSeek V4.1, model_type deepseek_v41) is a new architecture: vLLM 0.34.0 serves it "
    "from its own vllm.models.deepseek_v41 package and SGLang 0.5.21 on reads it, but its KV layout (compressed "
    "sparse attention whose compressed KV and indexer are shared by the layers of one compress ratio, window KV, "
    "Engram tables) is not in kvlint's memory model, and sizing it as DeepSeek V4 would be a guess"
)

#: model_type values vLLM treats as DeepSeek-style MLA when ``kv_lora_rank`` is present
#: (docs/engine-memory-model.md §1.3, ``model_arch_config_convertor.py::is_deepseek_mla``).
MLA_MODEL_TYPES = frozenset(
    {
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_mtp",
        "kimi_k2",
        "kimi_linear",
        "glm4_moe_lite",
        "glm_moe_dsa",
        "longcat_flash",
        "pangu_ultra_moe",
        "bailing_hybrid",
    }
)


# Field aliases, first present wins (vLLM CONFIG_FIELD_ALIASES + transformers attribute_map names).
_LAYERS_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
_HEADS_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
_KV_HEADS_KEYS = (
    "n_head_kv",
    "num_kv_heads",
    "num_key_value_heads",
    "multi_query_group_num",
    "num_attention_groups",
)
_HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model", "model_dim")
_INTERMEDIATE_KEYS = ("intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim")
_VOCAB_KEYS = ("vocab_size", "padded_vocab_size", "n_vocab")
_EXPERT_KEYS = ("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts")
#: vLLM's max-length candidate keys (docs/engine-memory-model.md §1.8 item 1).
MAX_LEN_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
# Nested sub-configs holding the language model of a multimodal checkpoint.
_TEXT_KEYS = ("text_config", "llm_config", "language_config", "thinker_config")

#: Encoder-decoder text families: a decoder with cross-attention over an encoder's output
#: (``is_encoder_decoder: true`` in their configs). Which engine serves which of them, and whether kvlint sizes
#: it, is said by :func:`encoder_decoder_support`.
ENCODER_DECODER_TYPES = frozenset({"t5", "mt5", "umt5", "bart", "mbart", "pegasus", "marian", "whisper"})

#: The T5 family (transformers' ``T5ForConditionalGeneration`` / ``MT5...`` / ``UMT5...``).
T5_TYPES = frozenset({"t5", "mt5", "umt5"})


class NotDecoderLLM(ValueError):
    """A ``config.json`` that is not a decoder-only LLM (encoder-only, encoder-decoder, vision or audio
    encoder). ``model_type`` is the config's top-level type; ``encoder_decoder`` is True for an
    encoder-decoder (``is_encoder_decoder`` or a type in :data:`ENCODER_DECODER_TYPES`)."""

    def __init__(self, message: str, model_type: str, encoder_decoder: bool) -> None:
        super().__init__(message)
        self.model_type = model_type
        self.encoder_decoder = encoder_decoder


#: What a model-resolution message says of a config file that was found and read but refused (bad JSON, a size
#: key out of range; ``kvlint.models.resolve._refused``, which carries it as a :class:`kvlint.types.ConfigRefusal`
#: so that KV502 does not say "config.json not found").
REFUSED = " was read but refused: "


def encoder_decoder_support(engine: str, model_type: str) -> tuple[bool | None, str]:
    """Whether ``engine`` serves an encoder-decoder ``model_type`` at all, and what it does, as one sentence.

    Returns ``(serves, sentence)``: ``serves`` False when the engine cannot load it (a start-up failure),
    True when it serves it on a path kvlint does not size, None when kvlint has not read the engine's support
    for that family. Sources:

    * vLLM, T5 family: no vLLM release registers ``T5ForConditionalGeneration`` (``MT5``/``UMT5`` neither);
      vLLM refuses the checkpoint with "Model architectures ['T5ForConditionalGeneration'] are not supported"
      (the error quoted in bentoml/OpenLLM#911). T5 support was requested in vllm-project/vllm#187 and only
      proposed in pull requests, all closed without merging: #3117 (2024), #11780 and #11334 + #11901 (2025, the
      ones a maintainer lists in #187 on 2025-01-14); those built on vLLM V0's encoder-decoder runner
      (``vllm/worker/enc_dec_model_runner.py``: BART, mllama, Whisper), which the V1 engine removed
      (vllm-project/vllm#31004: "vLLM dropped encoder-decoder support"). vLLM's fallback to transformers'
      model code covers "encoder-only, decoder-only, mixture-of-experts" architectures, not encoder-decoder ones
      (``docs/models/supported_models.md``, "Transformers modeling backend").
    * TGI, T5 family: served by the non-flash ``Seq2SeqLM`` path (``server/text_generation_server/models/
      __init__.py``: ``model_type == "t5"`` returns ``T5Sharded`` at v1.2.0 and ``Seq2SeqLM(...,
      T5ForConditionalGeneration)`` at v3.3.7). Its ``warmup`` runs one batch and returns None (``models/
      model.py::Model.warmup``, v1.2.0): no KV cache is reserved at start-up, and the router, told the model
      "does not support automatic max batch total tokens", takes ``--max-batch-total-tokens`` or
      max(16000, max_total_tokens, max_batch_prefill_tokens) (``router/src/main.rs``, v1.2.0; the same in
      ``backends/v3/src/lib.rs`` and ``models/model.py::Model.warmup`` at v3.3.7). Memory then grows
      with each batch's ``past_key_values``, which kvlint's memory model (paged KV caches reserved at start-up)
      does not describe.
    """
    t5 = model_type in T5_TYPES
    if engine == "vllm" and t5:
        return False, (
            "vLLM cannot serve it: no vLLM release registers T5ForConditionalGeneration (vLLM stops at start-up "
            "with \"Model architectures ['T5ForConditionalGeneration'] are not supported\"; T5 was only proposed, "
            "vllm-project/vllm#187, and the V1 engine has no encoder-decoder T5 path)"
        )
    if engine == "tgi" and t5:
        return True, (
            "TGI serves T5 on its non-flash Seq2SeqLM path: it reserves no KV cache at start-up (warmup returns no "
            "token budget; the router takes --max-batch-total-tokens or max(16000, max-total-tokens, "
            "max-batch-prefill-tokens)) and memory grows with each batch's past key values, which kvlint does not "
            "size"
        )
    return None, (
        f"kvlint models the paged KV caches of decoder-only LLMs and has not read how {engine} serves "
        f"'{model_type}' encoder-decoder models"
    )


# Encoder-only / encoder-decoder / non-text families kvlint does not model.
_NOT_DECODER_TYPES = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "deberta",
        "deberta-v2",
        "distilbert",
        "electra",
        "albert",
        "t5",
        "mt5",
        "umt5",
        "bart",
        "mbart",
        "pegasus",
        "marian",
        "whisper",
        "clip",
        "siglip",
        "vit",
        "wav2vec2",
        "modernbert",
    }
)


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> tuple[Any, str | None]:
    for k in keys:
        v = d.get(k)
        if v is not None:
            return v, k
    return None, None


#: Plausibility bounds on the dimensions that size per-layer lists and loops: real decoder LLMs have at most
#: a few hundred layers and heads; a config.json outside these bounds (a hostile one in a pull request, or
#: a typo) is refused rather than sized.
MAX_LAYERS = 4096
MAX_HEADS = 65_536


#: config.json keys kvlint reads as sizes (layer, head and expert counts, widths, ranks, lengths): when present and
#: not null, each must be a positive whole number of at most :data:`MAX_CONFIG_INT`. A negative, zero, fractional,
#: non-finite, non-numeric or larger value is a config transformers and vLLM cannot build a model from (vLLM's
#: layers take these as tensor shapes); :func:`_int` would read it as absent and a default or a zero would price
#: the model (a negative ``vocab_size`` made Llama-3.1-8B's weights 2.1 GB lighter, an ``intermediate_size`` of
#: ``"x"`` priced no MLP), so :func:`parse_config` refuses it instead (:func:`_check_sizes`).
_POSITIVE_SIZE_KEYS = (
    *_LAYERS_KEYS,
    *_HEADS_KEYS,
    *_KV_HEADS_KEYS,
    *_HIDDEN_KEYS,
    *_INTERMEDIATE_KEYS,
    *_VOCAB_KEYS,
    *MAX_LEN_KEYS,
    "head_dim",
    "hidden_size_per_head",
    "attention_head_dim",
    "kv_channels",
    "global_head_dim",
    "num_global_key_value_heads",
    "moe_intermediate_size",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "q_lora_rank",
    "index_head_dim",
    "index_topk_freq",
    "swa_num_key_value_heads",
    "swa_head_dim",
    "swa_v_head_dim",
    "mamba_d_ssm",
    "sliding_window_size",
    "attention_chunk_size",
    "full_attention_interval",
    "ssm_state_size",
    "mamba_d_state",
    "state_size",
    "d_state",
    "conv_kernel",
    "mamba_d_conv",
    "d_conv",
    "mamba_conv_kernel",
    "mamba_num_heads",
    "mamba_n_heads",
    "mamba_head_dim",
    "mamba_d_head",
    "n_groups",
    "mamba_n_groups",
    "mamba_intermediate_size",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
    # the Whisper-style audio encoders of Qwen2-Audio and Qwen2.5-Omni (kvlint.models.weights._audio_params)
    "encoder_layers",
    "encoder_ffn_dim",
    "num_mel_bins",
    "max_source_positions",
    "output_dim",
    # Gemma 3n's USM audio encoder (kvlint.models.weights._gemma3n_audio_params): a negative conformer layer count
    # priced the tower at -5.7e13 parameters (the model's weights below zero)
    "conf_num_hidden_layers",
    "conf_num_attention_heads",
    "conf_conv_kernel_size",
    "input_feat_size",
)
#: Counts that real configs set to 0 (a dense model's expert count, no shared experts, no MTP layer, no
#: KV-shared layers): whole numbers from 0 to :data:`MAX_CONFIG_INT`.
_COUNT_KEYS = (
    *_EXPERT_KEYS,
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "num_experts_per_tok",
    "moe_k",
    "moe_top_k",
    "moe_num_shared_experts",
    "moe_layer_interval",
    # Step 3's low-rank query and shared-expert widths (vllm step3_text.py: ``share_q_dim if share_q_dim else
    # head_dim``, so 0 is read; a negative or unreadable one was read as 0 and 2^60 priced 1.7e15 parameters)
    "share_q_dim",
    "share_expert_dim",
    "first_k_dense_replace",
    "num_nextn_predict_layers",
    "num_kv_shared_layers",
    "index_skip_topk_offset",
)


def _shown(v: Any) -> str:
    """``v`` as a message quotes a config value: its JSON text (a float as Python prints it), at most 40
    characters, non-printable characters as ``?``."""
    text = json.dumps(v, default=str) if not isinstance(v, float) else repr(v)
    text = text if len(text) <= 40 else text[:37] + "..."
    return "".join(c if c.isprintable() else "?" for c in text)


def _per_layer_shown(values: Any, layers: int) -> str:
    """How a message describes a per-layer config list ``values`` that does not hold one valid entry for each of
    ``layers`` decoder layers: ``has N entries for M layers`` when it is a list shorter than that, else
    ``is VALUE`` (:func:`_shown`)."""
    if isinstance(values, list) and len(values) < layers:
        return f"has {len(values)} entries for {layers} layers"
    return f"is {_shown(values)}"


def _check_sizes(model_id: str, *dicts: dict[str, Any], prefix: str = "") -> None:
    """Refuse a config whose size keys (:data:`_POSITIVE_SIZE_KEYS`, :data:`_COUNT_KEYS`) hold a value that is not a
    whole number in range; null and absent keys are left to the readers' defaults. ``prefix``: where ``dicts`` sit
    in config.json (``vision_config.``).

    Raises:
        ValueError: naming the model, the key and a short form of its value.
    """
    for d in dicts:
        for keys, low in ((_POSITIVE_SIZE_KEYS, 1), (_COUNT_KEYS, 0)):
            for key in keys:
                v = d.get(key)
                if v is None:
                    continue
                n = _int(v)
                if n is None or n < low:
                    raise ValueError(
                        f"{model_id}: config.json {prefix}{key} is {_shown(v)}; kvlint reads it as a whole number from "
                        f"{low} to 2^{MAX_CONFIG_INT.bit_length() - 1}, as transformers and vLLM build the "
                        "model's tensors from it"
                    )


def text_config_of(config: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The sub-dict holding the language model's dimensions, and its key.

    Returns ``(config, None)`` when the decoder fields are top-level (Llama, Qwen2.5-VL), or e.g.
    ``(config["text_config"], "text_config")`` for Llava, Gemma-3, Mllama, Llama-4 (vLLM reads all KV
    fields from ``hf_text_config``; docs/engine-memory-model.md §1.3).
    """
    for key in _TEXT_KEYS:
        sub = config.get(key)
        if isinstance(sub, dict) and (
            _first(sub, _LAYERS_KEYS)[0] is not None or _first(sub, _HIDDEN_KEYS)[0]
        ):
            if _first(config, _LAYERS_KEYS)[0] is None or key == "text_config":
                return sub, key
    thinker = config.get("thinker_config")
    sub = thinker.get("text_config") if isinstance(thinker, dict) else None
    if (
        isinstance(sub, dict)
        and _first(config, _LAYERS_KEYS)[0] is None
        and (_first(sub, _LAYERS_KEYS)[0] is not None or _first(sub, _HIDDEN_KEYS)[0])
    ):
        # Qwen2.5-Omni: the thinker (the model vLLM serves) holds the text model, its audio and vision towers;
        # transformers' Qwen2_5OmniConfig.get_text_config returns thinker_config.text_config, which vLLM reads
        # as hf_text_config (vllm@0.34.0 transformers_utils/config.py::get_hf_text_config)
        return sub, "thinker_config.text_config"
    return config, None


def declared_dtype(config: dict[str, Any], text: dict[str, Any] | None = None) -> str | None:
    """The dtype a ``config.json`` dict declares, without its ``torch.`` prefix (``bfloat16``): the first
    non-empty ``dtype`` (transformers >= 4.56's key) or ``torch_dtype`` of the top level, then of its language
    model's sub-config (``text``, by default :func:`text_config_of`'s), then of its ``vision_config``; None when
    none is given (vLLM then falls back to the safetensors dtype or float32: vllm/config/model.py
    ``_get_and_verify_dtype``, docs/engine-memory-model.md §1.7). The one reader of it for :func:`parse_config` and
    the catalogue's derived builds (:mod:`kvlint.models.catalogue`)."""
    if text is None:
        text = text_config_of(config)[0]
    for d in (config, text, config.get("vision_config") or {}):
        if isinstance(d, dict):
            v = d.get("dtype") or d.get("torch_dtype")
            if isinstance(v, str) and v:
                return v.replace("torch.", "")
    return None


#: transformers' LlamaConfig class defaults (huggingface/transformers@008e5743
#: src/transformers/models/llama/configuration_llama.py::LlamaConfig), the values a saved ``text_config`` of
#: model_type llama leaves out: LlavaConfig builds its text config as ``CONFIG_MAPPING["llama"](**text_config)``
#: (transformers@053f59ef src/transformers/models/llava/configuration_llava.py), so vLLM, which reads that config,
#: runs with them. LLaVA-1.5's config.json stores only max_position_embeddings, rms_norm_eps and vocab_size.
_LLAMA_CLASS_DEFAULTS: dict[str, Any] = {
    "vocab_size": 32000,
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "hidden_act": "silu",
    "max_position_embeddings": 2048,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
}

#: transformers' Qwen2Config class defaults (transformers 4.57.1 ``models/qwen2/configuration_qwen2.py::Qwen2Config``;
#: ``num_key_value_heads`` defaults to 32, not to the head count, and ``use_sliding_window`` to False), the values a
#: saved ``text_config`` of model_type qwen2 leaves out: Qwen2AudioConfig builds its text config as
#: ``CONFIG_MAPPING["qwen2"](**text_config)`` (``models/qwen2_audio/configuration_qwen2_audio.py``), and vLLM reads
#: that config (``vllm@0.34.0:vllm/model_executor/models/qwen2_audio.py`` builds ``Qwen2ForCausalLM`` from
#: ``config.text_config``). Qwen2-Audio-7B's config.json stores intermediate_size, max_position_embeddings,
#: rms_norm_eps, rope_theta, sliding_window and vocab_size, not the layer count, widths or heads.
_QWEN2_CLASS_DEFAULTS: dict[str, Any] = {
    "vocab_size": 151936,
    "hidden_size": 4096,
    "intermediate_size": 22016,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "hidden_act": "silu",
    "max_position_embeddings": 32768,
    "rms_norm_eps": 1e-6,
    "tie_word_embeddings": False,
    "rope_theta": 10000.0,
    "use_sliding_window": False,
    "max_window_layers": 28,
}

#: text_config model_type -> (transformers class, its defaults) for :func:`_text_class_defaults`.
_TEXT_CLASS_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("LlamaConfig", _LLAMA_CLASS_DEFAULTS),
    "qwen2": ("Qwen2Config", _QWEN2_CLASS_DEFAULTS),
}


def _text_class_defaults(config: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    """``config`` with the transformers class defaults filled into a ``text_config`` of model_type llama (LLaVA
    checkpoints) or qwen2 (Qwen2-Audio) that omits its layer count or width, the keys filled and the class name;
    ``config`` itself, ``[]`` and ``""`` otherwise."""
    text = config.get("text_config")
    if not isinstance(text, dict) or text.get("model_type") not in _TEXT_CLASS_DEFAULTS:
        return config, [], ""
    cls, defaults = _TEXT_CLASS_DEFAULTS[str(text["model_type"])]
    filled = [k for k in defaults if k not in text]
    if not filled or "hidden_size" not in filled and "num_hidden_layers" not in filled:
        return config, [], ""
    return {**config, "text_config": {**{k: defaults[k] for k in filled}, **text}}, filled, cls


def _get(text: dict[str, Any], top: dict[str, Any], key: str) -> Any:
    v = text.get(key)
    return top.get(key) if v is None else v


def _mamba_ssm_elements(text: dict[str, Any]) -> int:
    """The SSM-state elements of one Mamba layer's per-request state, as :func:`_mamba_state_bytes` counts them
    (Mamba-2 ``n_heads x head_dim x d_state``, else Mamba-1 ``intermediate x d_state``)."""
    hidden = _int(_first(text, _HIDDEN_KEYS)[0]) or 0
    d_state = _int(_first(text, ("ssm_state_size", "mamba_d_state", "state_size", "d_state"))[0]) or 128
    n_heads = _int(_first(text, ("mamba_num_heads", "mamba_n_heads"))[0])
    head_dim = _int(_first(text, ("mamba_head_dim", "mamba_d_head"))[0])
    if n_heads and head_dim:
        return n_heads * head_dim * d_state
    expand = _int(_first(text, ("mamba_expand", "expand"))[0]) or 2
    return (_int(text.get("mamba_intermediate_size") or 0) or expand * hidden) * d_state


#: Architectures vLLM gives ``NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype`` (the release's default SSM
#: dtype when the config sets no ``mamba_ssm_cache_dtype``): the text models from 0.13.0 (vllm-project/vllm#29978),
#: and, reading the text config, the VL / Omni / transcribe wrappers from 0.20.0 (vllm-project/vllm#39032)
#: (vllm@0.34.0:vllm/model_executor/models/config.py::MODELS_CONFIG_MAP).
_NEMOTRON_H_SSM_HOOK_ARCHS = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
_NEMOTRON_H_VL_SSM_HOOK_ARCHS = frozenset(
    {
        "NemotronH_Nano_VL_V2",
        "NemotronH_Nano_Omni_Reasoning_V3",
        "NemotronH_Super_Omni_Reasoning_V3",
        "NemotronH_Omni_Reasoning_V3",
        "Nemotron3_5TranscribeForConditionalGeneration",
    }
)


#: Architectures vLLM builds with ``MiniMaxText01ForCausalLM`` (vllm@0.20.0:vllm/model_executor/models/registry.py;
#: the VL model's text model is the same class); their lightning-attention layers come from ``attn_type_list``.
_MINIMAX_LINEAR_ARCHS = frozenset(
    {
        "MiniMaxText01ForCausalLM",
        "MiniMaxM1ForCausalLM",
        "MiniMaxForCausalLM",
        "MiniMaxVL01ForConditionalGeneration",
    }
)


#: Architectures vLLM no longer serves, with the last release that served each: ``_PREVIOUSLY_SUPPORTED_MODELS``
#: (vllm@0.34.0:vllm/model_executor/models/registry.py, lines 883-939 of the PyPI wheel; every entry, in its order).
#: A release after that one stops at start-up (:func:`vllm_removed_architecture`), except where vLLM's Transformers
#: modelling backend may take the model first (:data:`VLLM_REMOVED_TRANSFORMERS_CLASSES`).
VLLM_REMOVED_ARCHITECTURES: dict[str, str] = {
    "MotifForCausalLM": "0.10.2",
    "Phi3SmallForCausalLM": "0.9.2",
    "Phi4FlashForCausalLM": "0.10.2",
    "Phi4MultimodalForCausalLM": "0.12.0",
    "JAISLMHeadModel": "0.22.0",
    "ErnieModel": "0.23.0",
    "ErnieForSequenceClassification": "0.23.0",
    "ErnieForTokenClassification": "0.23.0",
    "InternLM2VEForCausalLM": "0.23.0",
    "QWenLMHeadModel": "0.23.0",
    "QwenVLForConditionalGeneration": "0.23.0",
    "InternLMForCausalLM": "0.23.0",
    "DonutForConditionalGeneration": "0.10.2",
    "MllamaForConditionalGeneration": "0.10.2",
    "XverseForCausalLM": "0.23.0",
    "Dots1ForCausalLM": "0.23.0",
    "BambaForCausalLM": "0.23.0",
    "MiniMaxForCausalLM": "0.23.0",
    "MiniMaxText01ForCausalLM": "0.23.0",
    "MiniMaxM1ForCausalLM": "0.23.0",
    "MiniMaxVL01ForConditionalGeneration": "0.23.0",
    "BaiChuanForCausalLM": "0.23.0",
    "BaichuanForCausalLM": "0.23.0",
    "AquilaModel": "0.24.0",
    "AquilaForCausalLM": "0.24.0",
    "Grok1ModelForCausalLM": "0.24.0",
    "Grok1ForCausalLM": "0.24.0",
    "TarsierForConditionalGeneration": "0.24.0",
    "Tarsier2ForConditionalGeneration": "0.23.0",
    "MantisForConditionalGeneration": "0.24.0",
    "MusicFlamingoForConditionalGeneration": "0.24.0",
    "AyaVisionForConditionalGeneration": "0.24.0",
    "TeleChatForCausalLM": "0.25.0",
    "PersimmonForCausalLM": "0.25.0",
    "FuyuForCausalLM": "0.25.0",
    "Plamo2ForCausalLM": "0.26.0",
    "OuroForCausalLM": "0.26.0",
    "ArcticForCausalLM": "0.28.0",
    "ChameleonForConditionalGeneration": "0.28.0",
    "Cheers": "0.28.0",
    "CheersForConditionalGeneration": "0.28.0",
    "Fairseq2LlamaForCausalLM": "0.28.0",
    "FireRedLIDForConditionalGeneration": "0.28.0",
    "GritLM": "0.28.0",
    "HCXVisionForCausalLM": "0.28.0",
    "MPTForCausalLM": "0.28.0",
    "MptForCausalLM": "0.28.0",
    "RWForCausalLM": "0.28.0",
    "StableLMEpochForCausalLM": "0.28.0",
    "PrithviGeoSpatialMAE": "0.28.0",
    "KeyeForConditionalGeneration": "0.33.0",
    "KeyeVL1_5ForConditionalGeneration": "0.33.0",
}

#: Entries of :data:`VLLM_REMOVED_ARCHITECTURES` that transformers defines as a model class (transformers 5.16.1, the
#: lowest release vllm 0.34.0 accepts: ``transformers<5.23.0,>=5.16.1``). For those, vLLM's
#: ``_ModelRegistry.inspect_model_cls`` tries ``_try_resolve_transformers`` (``getattr(transformers, arch)``, then
#: ``is_backend_compatible()`` or ``_can_set_attn_implementation()``) before ``_raise_for_unsupported``, and kvlint has
#: not read whether that backend takes each of them, so it does not claim the refusal (e.g. ``MiniMaxForCausalLM``,
#: the transformers port of MiniMax-Text-01, and ``MllamaForConditionalGeneration``, Llama 3.2 Vision).
VLLM_REMOVED_TRANSFORMERS_CLASSES = frozenset(
    {
        "Phi4MultimodalForCausalLM",
        "ErnieModel",
        "ErnieForSequenceClassification",
        "ErnieForTokenClassification",
        "MllamaForConditionalGeneration",
        "Dots1ForCausalLM",
        "BambaForCausalLM",
        "MiniMaxForCausalLM",
        "MusicFlamingoForConditionalGeneration",
        "AyaVisionForConditionalGeneration",
        "PersimmonForCausalLM",
        "FuyuForCausalLM",
        "ChameleonForConditionalGeneration",
        "MptForCausalLM",
    }
)


def vllm_removed_architecture(architectures: tuple[str, ...], version: str | None) -> tuple[str, str] | None:
    """``(architecture, last release)`` when vLLM ``version`` (None or unreadable: the newest read) no longer serves
    ``architectures``: every one of them is in :data:`VLLM_REMOVED_ARCHITECTURES` with a last release older than
    ``version``, and the first is not in :data:`VLLM_REMOVED_TRANSFORMERS_CLASSES`. vLLM then stops at start-up with
    ``_ModelRegistry._raise_for_unsupported``'s "Model architecture A was supported in vLLM until vX, and is not
    supported anymore. Please use an older version of vLLM if you want to use this model architecture." for the first
    architecture (vllm@0.34.0:vllm/model_executor/models/registry.py: ``inspect_model_cls`` tries each architecture
    the registry still serves, offers ``architectures[0]`` alone to its Transformers-backend fallback, then
    ``_raise_for_unsupported`` names the first architecture of the table). Else None, also when kvlint cannot tell
    (an architecture outside the table, or a first one the Transformers backend may take)."""
    from kvlint.memory.versions import parse_pep440, resolve_version

    if not architectures or architectures[0] in VLLM_REMOVED_TRANSFORMERS_CLASSES:
        return None
    v, _ = resolve_version(version)
    for a in architectures:
        last = VLLM_REMOVED_ARCHITECTURES.get(a)
        lv = parse_pep440(last) if last is not None else None
        if lv is None or not v > lv:
            return None
    return architectures[0], VLLM_REMOVED_ARCHITECTURES[architectures[0]]


def _nemotron_h_ssm_hook(text: dict[str, Any], architectures: tuple[str, ...]) -> str:
    """The vLLM Nemotron-H config hook that decides this model's SSM-state dtype, by release, or ``""``.

    ``"nemotron_h"`` / ``"nemotron_h_vl"`` (an architecture of :data:`_NEMOTRON_H_SSM_HOOK_ARCHS` /
    :data:`_NEMOTRON_H_VL_SSM_HOOK_ARCHS`) when the config sets no ``mamba_ssm_cache_dtype``: the hook's default
    applies. The same names with ``"+config"`` when the config sets it (Nemotron 3): the hook passes the config's
    value on, and a release without the hook never reads it (the SSM state then stays at the model dtype,
    ``--mamba-ssm-cache-dtype auto``: vllm@0.12.0 reads ``mamba_ssm_cache_dtype`` only from its ``CacheConfig``, in
    ``vllm/model_executor/models/nemotron_h.py::NemotronHForCausalLM.get_mamba_state_dtype_from_config`` and
    ``vllm/model_executor/layers/mamba/mamba_utils.py::MambaStateDtypeCalculator._mamba_state_dtype``).
    :func:`kvlint.memory.versions.nemotron_h_ssm_cache_dtype` answers by release. ``""`` for other models (the
    config's dtype, or the model dtype)."""
    if any(a in _NEMOTRON_H_SSM_HOOK_ARCHS for a in architectures):
        base = "nemotron_h"
    elif any(a in _NEMOTRON_H_VL_SSM_HOOK_ARCHS for a in architectures):
        base = "nemotron_h_vl"
    else:
        return ""
    return base + "+config" if text.get("mamba_ssm_cache_dtype") else base


def _mamba_state_bytes(text: dict[str, Any], model_dtype_bytes: int) -> tuple[int, str]:
    """Per-request state of one Mamba/SSM layer in bytes (conv state + SSM state).

    Mamba-2 (Nemotron-H, Granite-4, Zamba2, Falcon-H1): ``intermediate = mamba_n_heads x mamba_head_dim``,
    ``conv_dim = intermediate + 2 x n_groups x d_state``; conv state ``conv_dim x (conv_kernel - 1)``;
    SSM state ``n_heads x head_dim x d_state``. Mamba-1 (Jamba, Falcon-Mamba): conv
    ``intermediate x (d_conv - 1)``, SSM ``intermediate x d_state`` with ``intermediate = expand x hidden``.
    Shapes as vLLM's ``MambaStateShapeCalculator`` builds them (vllm@0.33.0:
    vllm/model_executor/layers/mamba/mamba_utils.py); conv state at the model dtype, SSM state at
    ``mamba_ssm_cache_dtype`` when the config sets it (else the model dtype, vLLM ``--mamba-ssm-cache-dtype auto``).
    Returns ``(bytes, note)``; the figure is approximate (page padding ignored).
    """
    hidden = _int(_first(text, _HIDDEN_KEYS)[0]) or 0
    d_state = _int(_first(text, ("ssm_state_size", "mamba_d_state", "state_size", "d_state"))[0]) or 128
    kernel = _int(_first(text, ("conv_kernel", "mamba_d_conv", "d_conv", "mamba_conv_kernel"))[0]) or 4
    n_heads = _int(_first(text, ("mamba_num_heads", "mamba_n_heads"))[0])
    head_dim = _int(_first(text, ("mamba_head_dim", "mamba_d_head"))[0])
    ssm_dtype = text.get("mamba_ssm_cache_dtype")
    ssm_bytes = dtype_bytes_of(ssm_dtype, model_dtype_bytes)
    if n_heads and head_dim:
        n_groups = _int(_first(text, ("n_groups", "mamba_n_groups"))[0]) or 1
        inter = n_heads * head_dim
        conv = (inter + 2 * n_groups * d_state) * (kernel - 1)
        ssm = n_heads * head_dim * d_state
        kind = "Mamba-2"
    else:
        expand = _int(_first(text, ("mamba_expand", "expand"))[0]) or 2
        inter = _int(text.get("mamba_intermediate_size") or 0) or expand * hidden
        conv = inter * (kernel - 1)
        ssm = inter * d_state
        kind = "Mamba-1"
    total = conv * model_dtype_bytes + ssm * ssm_bytes
    note = (
        f"{kind} state per request per layer ~{total} B (conv {conv} x {model_dtype_bytes} B + ssm {ssm} x "
        f"{ssm_bytes} B{' (mamba_ssm_cache_dtype ' + str(ssm_dtype) + ')' if ssm_dtype else ''}); approximate"
    )
    return total, note


def _gdn_heads(text: dict[str, Any]) -> tuple[int, int, int, int]:
    """A Gated-DeltaNet layer's ``(linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
    linear_value_head_dim)`` from the text config, 16, 32, 128, 128 where unset (Qwen3-Next's), as
    :func:`_gdn_state_bytes` and :func:`_gdn_conv_row_bytes` size them."""
    return (
        _int(text.get("linear_num_key_heads")) or 16,
        _int(text.get("linear_num_value_heads")) or 32,
        _int(text.get("linear_key_head_dim")) or 128,
        _int(text.get("linear_value_head_dim")) or 128,
    )


def _gdn_state_bytes(
    text: dict[str, Any], model_dtype_bytes: int, ssm_dtype: str | None = None
) -> tuple[int, str]:
    """Per-request state of one Gated-DeltaNet (linear attention) layer, Qwen3-Next / Qwen3.5 style.

    conv state ``(2 x key_heads x key_dim + value_heads x value_dim) x (kernel - 1)`` at the model dtype plus
    recurrent state ``value_heads x key_dim x value_dim`` at ``ssm_dtype`` when given, else the model dtype
    (vllm@02d71083 vllm/model_executor/layers/mamba/mamba_utils.py: ``MambaStateShapeCalculator.
    gated_delta_net_state_shape``; ``MambaStateDtypeCalculator.gated_delta_net_state_dtype``: conv at
    ``--mamba-cache-dtype`` (auto: the model dtype), recurrent at ``--mamba-ssm-cache-dtype``, auto = the conv
    dtype). ``ssm_dtype`` is what vLLM's Qwen3.5 config hook puts there (:func:`_vllm_ssm_cache_dtype`).
    Without speculation: the rows speculative tokens add are :func:`_gdn_conv_row_bytes` each, which vLLM's
    plan adds for its ``num_speculative_tokens`` (:func:`kvlint.memory.vllm.speculative_state_layers`).
    """
    kh, vh, kd, vd = _gdn_heads(text)
    kernel = _int(text.get("linear_conv_kernel_dim")) or 4
    conv = (2 * kh * kd + vh * vd) * (kernel - 1)
    rec = vh * kd * vd
    rec_bytes = dtype_bytes_of(ssm_dtype, model_dtype_bytes) if ssm_dtype else model_dtype_bytes
    total = conv * model_dtype_bytes + rec * rec_bytes
    return total, (
        f"linear-attention (Gated DeltaNet) state per request per layer ~{total} B "
        f"(conv {conv} x {model_dtype_bytes} B + recurrent {rec} x {rec_bytes} B"
        + (f", mamba_ssm_dtype {ssm_dtype}" if ssm_dtype else "")
        + "); approximate"
    )


def _gdn_conv_row_bytes(text: dict[str, Any], model_dtype_bytes: int) -> int:
    """Bytes per request of one row of a Gated-DeltaNet layer's conv state, the whole layer before the TP split:
    ``(2 x linear_num_key_heads x linear_key_head_dim + linear_num_value_heads x linear_value_head_dim) x`` the
    model dtype's bytes (the defaults of :func:`_gdn_heads`). vLLM keeps
    ``conv_kernel_size - 1 + num_spec`` such rows (``vllm@0.10.2`` and ``vllm@0.34.0``:
    ``vllm/model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator.gated_delta_net_state_shape``,
    ``num_spec`` = ``speculative_config.num_speculative_tokens`` in ``Qwen3NextForCausalLM`` /
    ``Qwen3_5ForCausalLM...get_mamba_state_shape_from_config``), so each speculative token adds one (8,192 x 2 B
    = 16 KiB for Qwen3-Next in bf16, 4 KiB per rank at TP 4)."""
    kh, vh, kd, vd = _gdn_heads(text)
    return (2 * kh * kd + vh * vd) * model_dtype_bytes


#: Architectures whose vLLM config hook takes the SSM-state dtype from the text config's ``mamba_ssm_dtype``
#: (``vllm/model_executor/models/config.py::Qwen3_5ForConditionalGenerationConfig``, vllm-project/vllm#34489): the
#: ``MODELS_CONFIG_MAP`` entries of vllm@0.34.0 whose class is that hook or calls it (``Qwen3_5ForCausalLMConfig``
#: for the text-only Qwen3.5 / Qwen3.8 checkpoints, ``ColQwen3_5Config``, ``D3ForSequenceClassificationConfig``,
#: the ``Qwen4Exp*Config`` classes). 0.20.0 listed only the two ``...ForConditionalGeneration`` names.
_SSM_DTYPE_HOOK_ARCHS = frozenset(
    {
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "ColQwen3_5",
        "D3ForSequenceClassification",
        "Qwen4ExpForConditionalGeneration",
        "Qwen4ExpForCausalLM",
        "Qwen4ExpMTP",
    }
)


def _vllm_ssm_cache_dtype(text: dict[str, Any], architectures: tuple[str, ...]) -> str | None:
    """The ``--mamba-ssm-cache-dtype`` vLLM resolves ``auto`` to for this config, when a model hook sets it.

    Qwen3.5 / 3.6 / 3.8 (``Qwen3_5ForConditionalGeneration``, ``Qwen3_5MoeForConditionalGeneration``, the
    text-only ``Qwen3_5ForCausalLM`` / ``Qwen3_5MoeForCausalLM`` and the others of :data:`_SSM_DTYPE_HOOK_ARCHS`):
    ``Qwen3_5ForConditionalGenerationConfig.verify_and_update_config`` sets ``cache_config.mamba_ssm_cache_dtype``
    to ``hf_text_config.mamba_ssm_dtype`` when the flag is ``auto`` (vllm-project/vllm#34489, merged 2026-02-13;
    the Qwen3.5 releases set ``float32``), so the Gated-DeltaNet recurrent state is float32 while the conv state stays
    at the model dtype. Else None (the model dtype). An explicit ``--mamba-ssm-cache-dtype`` is not read.
    """
    v = text.get("mamba_ssm_dtype")
    if isinstance(v, str) and v and any(a in _SSM_DTYPE_HOOK_ARCHS for a in architectures):
        return v
    return None


def _falcon_h1_state_bytes(text: dict[str, Any], model_dtype_bytes: int) -> tuple[int, str]:
    """Per-request Mamba-2 state of one Falcon-H1 layer, in bytes.

    vLLM (vllm/model_executor/models/falcon_h1.py: ``FalconH1ForCausalLM._get_mamba_cache_shape`` in the V0 engine
    that first served it, ``get_mamba_state_shape_from_config`` since) builds the Mamba-2 state shapes
    (``MambaStateShapeCalculator.mamba2_state_shape``) with ``intermediate_size = mamba_d_ssm`` (else ``mamba_expand x
    hidden_size``), ``n_groups = mamba_n_groups``, ``num_heads = mamba_n_heads``, ``head_dim = mamba_d_head``,
    ``state_size = mamba_d_state``, ``conv_kernel = mamba_d_conv``: conv ``(intermediate + 2 x n_groups x
    d_state) x (conv - 1)`` and SSM ``heads x head_dim x d_state`` elements (vllm@02d71083
    vllm/model_executor/layers/mamba/mamba_utils.py), at the model dtype (SSM at ``mamba_ssm_cache_dtype`` when the
    config sets it). ``mamba_d_head`` ``"auto"`` is ``mamba_d_ssm // mamba_n_heads``, as transformers'
    ``FalconH1Config`` derives it. Returns ``(bytes, note)``.
    """
    hidden = _int(_first(text, _HIDDEN_KEYS)[0]) or 0
    inter = _int(text.get("mamba_d_ssm")) or (_int(text.get("mamba_expand")) or 2) * hidden
    heads = _int(text.get("mamba_n_heads")) or 128
    head_dim = _int(text.get("mamba_d_head")) or max(1, inter // heads)
    groups = _int(text.get("mamba_n_groups")) or 1
    d_state = _int(text.get("mamba_d_state")) or 256
    kernel = _int(text.get("mamba_d_conv")) or 4
    ssm_bytes = dtype_bytes_of(text.get("mamba_ssm_cache_dtype"), model_dtype_bytes)
    conv = (inter + 2 * groups * d_state) * (kernel - 1)
    ssm = heads * head_dim * d_state
    total = conv * model_dtype_bytes + ssm * ssm_bytes
    return total, (
        f"Mamba-2 state per request per layer {total} B (conv {conv} x {model_dtype_bytes} B + ssm {ssm} x "
        f"{ssm_bytes} B)"
    )


def _zamba2_state_bytes(text: dict[str, Any], model_dtype_bytes: int) -> tuple[int, str]:
    """Per-request Mamba-2 state of one Zamba2 layer, in bytes, as vLLM builds it.

    vllm@0.12.0:vllm/model_executor/models/zamba2.py::Zamba2ForCausalLM.get_mamba_state_shape_from_config passes
    ``MambaStateShapeCalculator.mamba2_state_shape`` ``intermediate_size = mamba_expand x hidden_size``, ``n_groups =
    mamba_ngroups``, ``num_heads = n_mamba_heads``, ``head_dim = mamba_headdim``, ``state_size = mamba_d_state``,
    ``conv_kernel = mamba_d_conv``; transformers' ``Zamba2Config`` (4.57.1 ``configuration_zamba2.py``) derives
    ``mamba_headdim = mamba_expand x hidden_size // n_mamba_heads`` whatever the file says (defaults: expand 2,
    groups 1, 8 heads, d_state 64, d_conv 4). Conv ``(intermediate + 2 x groups x d_state) x (d_conv - 1)`` and SSM
    ``heads x head_dim x d_state`` elements, both at the model dtype (``get_mamba_state_dtype_from_config``:
    ``--mamba-cache-dtype`` / ``--mamba-ssm-cache-dtype`` auto; no config hook reads a dtype). Returns ``(bytes,
    note)``."""
    hidden = _int(_first(text, _HIDDEN_KEYS)[0]) or 0
    inter = (_int(text.get("mamba_expand")) or 2) * hidden
    heads = _int(text.get("n_mamba_heads")) or 8
    groups = _int(text.get("mamba_ngroups")) or 1
    d_state = _int(text.get("mamba_d_state")) or 64
    kernel = _int(text.get("mamba_d_conv")) or 4
    conv = (inter + 2 * groups * d_state) * (kernel - 1)
    ssm = heads * (inter // heads) * d_state
    total = (conv + ssm) * model_dtype_bytes
    return total, (
        f"Mamba-2 state per request per layer {total} B (conv {conv} + ssm {ssm} elements x {model_dtype_bytes} B)"
    )


def _kda_state_bytes(lac: dict[str, Any], model_dtype_bytes: int) -> tuple[int, str]:
    """Per-request state of one KDA (Kimi Delta Attention) layer of a Kimi Linear model, in bytes.

    vLLM (vllm@02d71083 vllm/model_executor/layers/mamba/mamba_utils.py): ``MambaStateShapeCalculator.
    kda_state_shape(tp, num_heads, head_dim, conv_kernel_size=short_conv_kernel_size)`` with the key heads and
    key head size equal to ``num_heads`` and ``head_dim`` (``KimiLinearForCausalLM.get_mamba_state_shape_from_config``
    passes none), so the conv state holds ``3 x num_heads x head_dim`` channels (q, k, v) x ``kernel - 1`` and the
    recurrent state ``num_heads x head_dim x head_dim``; ``MambaStateDtypeCalculator.kda_state_dtype`` keeps the
    conv state at the model dtype (``--mamba-cache-dtype auto``) and the recurrent state in float32. The keys are
    ``linear_attn_config``'s ``num_heads``, ``head_dim`` and ``short_conv_kernel_size`` (defaults 32, 128, 4 when
    absent). Speculative tokens' extra conv rows are not counted. Returns ``(bytes, note)``.
    """
    heads = _int(lac.get("num_heads")) or 32
    hd = _int(lac.get("head_dim")) or 128
    kernel = _int(lac.get("short_conv_kernel_size")) or 4
    conv = 3 * heads * hd * (kernel - 1)
    rec = heads * hd * hd
    total = conv * model_dtype_bytes + rec * 4
    return total, (
        f"KDA state per request per layer {total} B (conv {conv} x {model_dtype_bytes} B + recurrent {rec} x 4 B "
        "float32)"
    )


def parse_config(
    config: dict,
    *,
    model_id: str,
    source: str,
    weight_bytes: int | None = None,
    weight_bytes_source: str | None = None,
    param_count: int | None = None,
    quant_config_extra: dict | None = None,
) -> ModelSpec:
    """Build a :class:`ModelSpec` from a ``config.json`` dict (text sub-config used for VLMs).

    Args:
        config: the parsed top-level ``config.json``.
        model_id: hub id or path, for messages (``meta-llama/Llama-3.1-8B``).
        source: where the config came from (``catalogue: ...``, ``hub cache``, a local path).
        weight_bytes / weight_bytes_source: exact checkpoint size in bytes and its provenance, if known.
        param_count: a cited parameter count; when None the architecture formula
            (:func:`kvlint.models.weights.param_count`) fills it in.
        quant_config_extra: the contents of ``hf_quant_config.json`` (ModelOpt), if present; it sets
            ``quant_method`` to ``modelopt`` (FP8) or ``modelopt_fp4`` (NVFP4) as vLLM's ModelOpt loader does
            when config.json has no ``quantization_config``.

    Returns:
        The ModelSpec: ``layers`` has one :class:`LayerSpec` per decoder layer with its KV kind
        (``full``/``sliding``/``chunked``/``mla``/``mamba``/``cross``/``none``); sizes are element counts.

    Raises:
        ValueError: the dict is not a decoder-LLM config kvlint can read (encoder-only, encoder-decoder:
            :class:`NotDecoderLLM`; missing layer count / hidden size / head count), with the model id in the
            message.
    """
    if not isinstance(config, dict):
        raise ValueError(f"{model_id}: config.json is not a JSON object")
    config, class_defaults, defaults_class = _text_class_defaults(config)
    text, nested_key = text_config_of(config)
    model_type = str(text.get("model_type") or config.get("model_type") or "")
    top_type = str(config.get("model_type") or model_type)
    archs_raw = config.get("architectures") or text.get("architectures") or []
    architectures = tuple(str(a) for a in archs_raw) if isinstance(archs_raw, list) else (str(archs_raw),)
    if top_type in _NOT_DECODER_TYPES or model_type in _NOT_DECODER_TYPES or config.get("is_encoder_decoder"):
        if config.get("is_encoder_decoder") is True or top_type in ENCODER_DECODER_TYPES:
            raise NotDecoderLLM(
                f"{model_id}: model_type '{top_type}' is an encoder-decoder model "
                f"(architectures {list(architectures)}), not a decoder-only LLM; kvlint models decoder LLM "
                "serving only",
                top_type,
                True,
            )
        raise NotDecoderLLM(
            f"{model_id}: model_type '{top_type}' is not a decoder-only LLM; kvlint models decoder LLM serving only",
            top_type,
            False,
        )
    if any(
        a.endswith(("ForMaskedLM", "ForSequenceClassification", "ForTokenClassification"))
        for a in architectures
    ):
        raise ValueError(
            f"{model_id}: architectures {list(architectures)} are not a decoder LLM kvlint can read"
        )
    if (
        top_type == "deepseek_v41"
        or model_type == "deepseek_v41"
        or "DeepseekV41ForCausalLM" in architectures
    ):
        raise ValueError(f"{model_id}: {DEEPSEEK_V41_UNMODELLED}")

    notes: list[str] = []
    if any(a.startswith("Grok1") for a in architectures) and _int(text.get("sliding_window_size")) == -1:
        # Grok's "no window" (Grok-2's config sets sliding_window_size -1 with global_attn_every_n 1): SGLang's
        # grok.py does not read the key, every layer attends over the whole context (sglang 0.5.5.post3
        # sglang/srt/models/grok.py::Grok1Attention, one RadixAttention per layer without a window); not a size
        # kvlint should refuse, nor a window of -1 tokens
        stripped = {k: v for k, v in text.items() if k != "sliding_window_size"}
        config = stripped if config is text else config
        text = stripped
        notes.append(
            "sliding_window_size -1: no sliding window (Grok; every layer attends over the whole context)"
        )
    if nested_key:
        notes.append(f"decoder dimensions read from '{nested_key}' (multimodal checkpoint)")
    for where, sub in tower_configs(config):
        encoder = str(sub.get("model_type") or "")
        if where.endswith("audio_config") and encoder not in COUNTED_AUDIO_ENCODERS:
            # an audio encoder kvlint has no parameter formula for (Gemma 4's, Voxtral's, ...): said, not guessed
            notes.append(
                f"{where} (model_type '{encoder or '?'}'): this audio encoder's parameters are not in kvlint's "
                "weight estimate, which is low by them when the checkpoint's size is not known"
            )
    if class_defaults:
        notes.append(
            f"text_config (model_type {text.get('model_type')}) omits "
            + ", ".join(class_defaults)
            + f": transformers' {defaults_class} defaults apply, as when transformers and vLLM build it"
        )

    num_layers = _int(_first(text, _LAYERS_KEYS)[0])
    if isinstance(text.get("layers_block_type"), list) and nemotron_h_pattern(text):
        # NemotronHConfig.num_hidden_layers is len(layers_block_type); a stored num_hidden_layers is deprecated
        # (null in Nemotron-3 Ultra's config, stale in others) and transformers only warns on a mismatch.
        num_layers = len(text["layers_block_type"])
    hidden = _int(_first(text, _HIDDEN_KEYS)[0])
    heads = _int(_first(text, _HEADS_KEYS)[0])
    if not num_layers or not hidden or not heads:
        missing = [
            n
            for n, v in (
                ("num_hidden_layers", num_layers),
                ("hidden_size", hidden),
                ("num_attention_heads", heads),
            )
            if not v
        ]
        raise ValueError(
            f"{model_id}: config.json has no usable {', '.join(missing)} (model_type '{top_type or '?'}'); "
            "not a decoder LLM config kvlint can read"
        )

    if not 0 < num_layers <= MAX_LAYERS or not 0 < heads <= MAX_HEADS:
        raise ValueError(
            f"{model_id}: config.json has {num_layers} layers and {heads} attention heads; kvlint reads configs "
            f"with at most {MAX_LAYERS} layers and {MAX_HEADS} heads"
        )

    _check_sizes(model_id, text, *([config] if config is not text else []))
    for where, sub in tower_configs(config):
        # the encoders' sizes as well: a vision_config hidden_size of 1e308 made the parameter estimate
        # (weights.py) and the encoder profile (multimodal.py) raise OverflowError on every plan of the model
        if sub is not text:
            _check_sizes(model_id, sub, prefix=f"{where}.")

    # --- KV heads (docs/engine-memory-model.md §1.3) --------------------------------------------------
    kv_raw, _kv_key = _first(text, _KV_HEADS_KEYS)
    kv_heads = _int(kv_raw) or heads
    if model_type == "falcon" and text.get("multi_query") and not text.get("new_decoder_architecture"):
        kv_heads = 1
    if model_type == "dbrx":
        kv_heads = _int((text.get("attn_config") or {}).get("kv_n_heads")) or kv_heads

    # --- head size (model_arch_config_convertor.py::get_head_size) -----------------------------------
    is_mla = model_type in MLA_MODEL_TYPES and text.get("kv_lora_rank") is not None
    head_raw, head_key = _first(
        text, ("head_dim", "hidden_size_per_head", "attention_head_dim", "kv_channels")
    )
    explicit_head = _int(head_raw) or 0
    head_size: int = explicit_head if explicit_head > 0 else hidden // heads
    if head_key and explicit_head > 0 and hidden // heads != head_size:
        notes.append(
            f"{head_key} {head_size} differs from hidden_size/num_attention_heads = {hidden // heads}; {head_key} wins"
        )
    mla_head = 0
    if is_mla:
        mla_head = int(text["kv_lora_rank"]) + int(text.get("qk_rope_head_dim") or 0)
        notes.append(
            f"MLA: one latent of kv_lora_rank {text['kv_lora_rank']} + qk_rope_head_dim "
            f"{text.get('qk_rope_head_dim')} = {mla_head} values per token per layer, not split by TP"
        )

    # --- dtype (docs/engine-memory-model.md §1.7) ----------------------------------------------------
    torch_dtype = declared_dtype(config, text)
    if torch_dtype is None:
        notes.append(
            "config.json has no torch_dtype/dtype; vLLM falls back to the safetensors dtype or float32"
        )
    model_dtype_bytes = dtype_bytes_of(torch_dtype, 2)

    # --- quantization ---------------------------------------------------------------------------------
    qc = (
        config.get("quantization_config")
        or text.get("quantization_config")
        or config.get("compression_config")
    )
    quant_method: str | None = None
    quant_config: dict[str, Any] | None = None
    if isinstance(qc, dict):
        quant_config = qc
        quant_method = (
            str(qc.get("quant_method") or ("compressed-tensors" if "config_groups" in qc else "") or "")
            or None
        )
        if quant_method:
            quant_method = quant_method.lower()
        if quant_method == "modelopt":
            # ModelOpt exports written into config.json put quant_algo beside quant_method (the
            # "compressed-tensors style" of vLLM's ModelOptQuantConfigBase.from_config); vLLM's overrides map
            # an NVFP4 algo to modelopt_fp4 (vllm model_executor/layers/quantization/modelopt.py
            # ModelOptQuantConfigBase._extract_modelopt_quant_algo), so the stored weights are 4-bit, not FP8
            nested = qc.get("quantization")
            algo = str(
                qc.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, dict) else "") or ""
            )
            if "FP4" in algo.upper():
                quant_method = "modelopt_fp4"
                notes.append(f"quantization_config: ModelOpt quant_algo {algo.upper()} (NVFP4 weights)")
    if quant_method is None and isinstance(quant_config_extra, dict):
        q = quant_config_extra.get("quantization") or {}
        algo = str(q.get("quant_algo") or "").upper()
        if algo:
            quant_method = "modelopt_fp4" if "FP4" in algo else "modelopt"
            quant_config = dict(quant_config_extra)
            notes.append(f"quantization from hf_quant_config.json: ModelOpt quant_algo {algo}")
    if quant_method and torch_dtype:
        notes.append(
            f"torch_dtype {torch_dtype} is the activation dtype; stored weights are {quant_method}-quantized"
        )

    # --- max length (docs/engine-memory-model.md §1.8) -----------------------------------------------
    present = [(k, _int(text.get(k))) for k in MAX_LEN_KEYS if _int(text.get(k))]
    max_len: int | None = None
    max_len_key: str | None = None
    if present:
        max_len_key, max_len = min(present, key=lambda kv: kv[1])  # type: ignore[arg-type,return-value]
        mml = _int(text.get("model_max_length"))
        if mml:
            max_len_key, max_len = "model_max_length", mml
    rope = text.get("rope_scaling")
    if rope is None:
        rope = text.get("rope_parameters")
    rope_scaling: dict[str, Any] | None = None
    if isinstance(rope, dict) and rope:
        rope_scaling = dict(rope)
        if "rope_type" not in rope_scaling and "type" in rope_scaling:
            rope_scaling["rope_type"] = rope_scaling["type"]
            notes.append("rope_scaling uses the legacy key 'type' (read as rope_type)")
        if rope_scaling.get("rope_type") == "default" and rope_scaling.get("factor") is None:
            rope_scaling = None

    # --- MoE -------------------------------------------------------------------------------------------
    num_experts = _int(_first(text, _EXPERT_KEYS)[0]) or 0
    if model_type == "dbrx":
        num_experts = _int((text.get("ffn_config") or {}).get("moe_num_experts")) or num_experts
    moe_inter = _int(text.get("moe_intermediate_size")) or 0
    intermediate = _int(_first(text, _INTERMEDIATE_KEYS)[0]) or 0
    if not intermediate and model_type == "dbrx":
        # DBRX keeps its expert width in ffn_config (vllm/model_executor/models/dbrx.py, DbrxExperts:
        # FusedMoE(num_experts=ffn_config.moe_num_experts, intermediate_size=ffn_config.ffn_hidden_size)); read at
        # the top level only, the experts were sized at width 0 (databricks/dbrx-instruct at 4.8e9 parameters,
        # not its 132e9)
        intermediate = _int((text.get("ffn_config") or {}).get("ffn_hidden_size")) or 0
    if not intermediate and model_type == "falcon":
        # Falcon configs omit ffn_hidden_size: the MLP is 4 x hidden (litgpt 0.5.13 litgpt/config.py loads
        # tiiuae/falcon-7b/-40b/-180B with intermediate_size unset, which its Config sets to 4 * n_embd).
        intermediate = 4 * (_int(_first(text, ("hidden_size",))[0]) or 0)
    if (
        num_experts
        and not moe_inter
        and model_type in ("mixtral", "gpt_oss", "llama4_text", "llama4", "phimoe", "dbrx")
    ):
        moe_inter = intermediate  # Mixtral-style configs give the per-expert FFN width as intermediate_size

    vocab = _int(_first(text, _VOCAB_KEYS)[0]) or _int(_first(config, _VOCAB_KEYS)[0]) or 0
    tie = text.get("tie_word_embeddings")
    if tie is None:
        tie = config.get("tie_word_embeddings")
    if tie is None:
        # transformers class defaults: Gemma families tie, Llama/Mistral/Qwen2 classes default to False.
        tie = model_type.startswith(("gemma", "paligemma")) or top_type.startswith(("gemma", "paligemma"))

    # --- per-layer kinds -------------------------------------------------------------------------------
    ratios = text.get("compress_ratios")
    if model_type.startswith("deepseek_v4") and ratios is not None:
        # vLLM's DeepSeek V4 layers each read compress_ratios[layer index] as a whole number (0 = window only);
        # a shorter list or another value is a config it cannot build, which kvlint sized as plain sliding-window
        # layers or reported with a Python error
        bad = not isinstance(ratios, list) or len(ratios) < num_layers
        if not bad:
            bad_at = [i for i, r in enumerate(ratios[:num_layers]) if r is not None and (_int(r) or 0) < 0]
            bad_at += [i for i, r in enumerate(ratios[:num_layers]) if r is not None and _int(r) is None]
            bad = bool(bad_at)
        if bad:
            shown = _per_layer_shown(ratios, num_layers)
            raise ValueError(
                f"{model_id}: config.json compress_ratios {shown}; vLLM reads one whole number from 0 up per "
                "decoder layer (DeepSeek V4's compression ratio of that layer)"
            )
    lac = text.get("linear_attn_config")
    if model_type == "kimi_linear" and isinstance(lac, dict):
        # the KDA state shape's sizes (_kda_state_bytes): positive whole numbers, as vLLM builds tensors from them
        for key, low in (("num_heads", 1), ("head_dim", 1), ("short_conv_kernel_size", 2)):
            v = lac.get(key)
            if v is not None and (_int(v) is None or (_int(v) or 0) < low or (_int(v) or 0) > MAX_HEADS):
                raise ValueError(
                    f"{model_id}: config.json linear_attn_config.{key} is {_shown(v)}; vLLM builds the KDA layers' "
                    f"state tensors from it (a whole number from {low} to {MAX_HEADS})"
                )
    kinds = text.get("layer_types")
    if isinstance(kinds, list) and kinds and not nemotron_h_pattern(text):
        # one kind name per decoder layer, as the model classes index it (layer_types[layer_idx]) and
        # transformers' layer_type_validation checks it; kvlint filled a short list with full-attention layers
        # and read a kind that is not a name as a layer without KV cache
        if len(kinds) < num_layers or not all(isinstance(k, str) for k in kinds[:num_layers]):
            shown = _per_layer_shown(kinds, num_layers)
            raise ValueError(
                f"{model_id}: config.json layer_types {shown}; the model classes read one kind name per "
                "decoder layer"
            )
    layers, sliding_window = _layer_kinds(
        text,
        model_type,
        num_layers,
        heads,
        kv_heads,
        head_size,
        max_len,
        model_dtype_bytes,
        notes,
        _vllm_ssm_cache_dtype(text, architectures),
        architectures,
    )
    if is_mla:
        owners = _dsa_indexer_layers(text, num_layers)
        layers = [
            LayerSpec(
                kind="mla",
                kv_heads=1,
                head_size=mla_head,
                head_size_v=0,
                index_head_dim=(_int(text.get("index_head_dim")) or 128) if i in owners else 0,
            )
            if ly.kind in ("full", "sliding")
            else ly
            for i, ly in enumerate(layers)
        ]
        kv_heads, head_size = 1, mla_head
        if owners:
            notes.append(
                f"DeepSeek sparse attention: {len(owners)} of {num_layers} layers keep a lightning-indexer key cache "
                f"(index_head_dim {_int(text.get('index_head_dim')) or 128} fp8 + fp32 scales) beside the MLA latent"
            )
    attn = [ly for ly in layers if ly.kind not in ("none", "mamba")]
    if attn and not is_mla:
        kv_heads = Counter(ly.kv_heads for ly in attn).most_common(1)[0][0]

    nextn = _int(text.get("num_nextn_predict_layers"))
    if nextn:
        notes.append(
            f"num_nextn_predict_layers={nextn}: the multi-token-prediction "
            f"{'layer is' if nextn == 1 else 'layers are'} not in the main decoder stack "
            "(loaded only for MTP speculative decoding)"
        )

    spec = ModelSpec(
        id=model_id,
        source=source,
        config=config,
        model_type=model_type or top_type,
        architectures=architectures,
        num_layers=num_layers,
        num_attention_heads=heads,
        num_kv_heads=kv_heads,
        head_size=head_size,
        hidden_size=hidden,
        intermediate_size=intermediate,
        vocab_size=vocab,
        layers=tuple(layers),
        max_position_embeddings=max_len,
        max_len_key=max_len_key,
        rope_scaling=rope_scaling,
        torch_dtype=torch_dtype,
        quant_method=quant_method,
        quant_config=quant_config,
        tie_word_embeddings=bool(tie),
        is_mla=is_mla,
        num_experts=num_experts,
        moe_intermediate_size=moe_inter,
        param_count=param_count,
        weight_bytes=weight_bytes,
        weight_bytes_source=weight_bytes_source if weight_bytes is not None else None,
        sliding_window=sliding_window,
        notes=tuple(notes),
        text_config=text,
    )
    if param_count is None:
        from kvlint.models.weights import param_count as _pc

        try:
            spec = _replace(spec, param_count=_pc(spec))
        except (ValueError, TypeError, ZeroDivisionError):  # pragma: no cover - odd configs keep None
            pass
    return spec


def _replace(spec: ModelSpec, **kw: Any) -> ModelSpec:
    import dataclasses

    return dataclasses.replace(spec, **kw)


def _layer_kinds(
    text: dict[str, Any],
    model_type: str,
    n: int,
    heads: int,
    kv_heads: int,
    head_size: int,
    max_len: int | None,
    dtype_bytes: int,
    notes: list[str],
    gdn_ssm_dtype: str | None = None,
    architectures: tuple[str, ...] = (),
) -> tuple[list[LayerSpec], int | None]:
    """Per-layer KV kind for ``n`` decoder layers, and the sliding window (tokens) if any layer slides.
    ``gdn_ssm_dtype``: the Gated-DeltaNet recurrent-state dtype a vLLM model hook sets (:func:`_vllm_ssm_cache_dtype`).
    ``architectures``: the config's, for the Nemotron-H SSM-dtype hook (:func:`_nemotron_h_ssm_hook`)."""
    window = _int(text.get("sliding_window")) or _int(text.get("sliding_window_size"))

    def full(kvh: int = kv_heads) -> LayerSpec:
        return LayerSpec(kind="full", kv_heads=kvh, head_size=head_size, head_size_v=head_size)

    def sliding() -> LayerSpec:
        return LayerSpec(
            kind="sliding", kv_heads=kv_heads, head_size=head_size, head_size_v=head_size, window=window
        )

    none = LayerSpec(kind="none")

    # Nemotron-H: 'M' Mamba-2, '*' attention, '-' MLP, 'E' MoE (vllm nemotron_h.py, ALL_DECODER_LAYER_TYPES).
    pattern = nemotron_h_pattern(text)
    if pattern:
        if len(pattern) != n:
            notes.append(f"hybrid_override_pattern has {len(pattern)} entries for {n} layers")
        state, snote = _mamba_state_bytes(text, dtype_bytes)
        hook = _nemotron_h_ssm_hook(text, architectures)
        counted = dtype_bytes_of(text.get("mamba_ssm_cache_dtype"), dtype_bytes)
        ssm_default: tuple[str, int, int, int] | tuple[()] = (
            (hook, _mamba_ssm_elements(text), counted, dtype_bytes) if hook else ()
        )
        if hook.endswith("+config"):
            snote += (
                "; vLLM reads the config's mamba_ssm_cache_dtype through its NemotronH hook (from 0.13.0; the VL "
                "wrappers from 0.20.0): earlier releases keep the SSM state at the model dtype"
            )
        elif hook:
            snote += (
                "; no mamba_ssm_cache_dtype in the config: vLLM's NemotronH hook picks the SSM dtype by release "
                "(model dtype before 0.13.0, float16 0.13.0-0.19.x, float32 from 0.20.0)"
            )
        out = []
        for ch in pattern[:n]:
            if ch == "M":
                out.append(LayerSpec(kind="mamba", state_bytes=state, ssm_default=ssm_default))
            elif ch == "*":
                out.append(full())
            else:
                out.append(none)
        key = (
            "hybrid_override_pattern"
            if isinstance(text.get("hybrid_override_pattern"), str)
            else "layers_block_type"
        )
        notes.append(
            f"{key}: {pattern.count('*')} attention, {pattern.count('M')} Mamba, "
            f"{len(pattern) - pattern.count('*') - pattern.count('M')} MLP/MoE layers; {snote}"
        )
        return out, None

    # Zamba2: layers_block_type names each layer "hybrid" (a shared attention block, then a Mamba-2 layer) or a
    # Mamba-2 layer (vllm@0.12.0:vllm/model_executor/models/zamba2.py::Zamba2Model: "hybrid" builds
    # Zamba2HybridLayer, anything else Zamba2MambaDecoderLayer). The attention weights are shared by num_mem_blocks
    # blocks, but "KV cache is unique for every attention layer": Zamba2Attention gives each hybrid layer its own
    # Attention of num_attention_heads heads (its KV heads: vLLM passes no num_kv_heads, so num_key_value_heads is
    # not read) x attention_head_dim, which transformers' Zamba2Config sets to 2 x hidden_size // num_attention_heads
    # (the block attends over the hidden state concatenated with the embeddings). Every layer keeps a Mamba-2 state.
    blocks = text.get("layers_block_type")
    if model_type == "zamba2" and isinstance(blocks, list) and blocks:
        if len(blocks) != n:
            notes.append(f"layers_block_type has {len(blocks)} entries for {n} layers")
        sb, snote = _zamba2_state_bytes(text, dtype_bytes)
        hidden = _int(_first(text, _HIDDEN_KEYS)[0]) or 0
        z_head = 2 * hidden // max(1, heads)
        hybrid = LayerSpec(kind="full", kv_heads=heads, head_size=z_head, head_size_v=z_head, state_bytes=sb)
        mamba = LayerSpec(kind="mamba", state_bytes=sb)
        out = [hybrid if str(b) == "hybrid" else mamba for b in blocks[:n]]
        out += [mamba] * (n - len(out))
        h = sum(1 for ly in out if ly.kind == "full")
        notes.append(
            f"Zamba2 layers_block_type: {h} hybrid layers (shared attention, own KV cache: {heads} KV heads x {z_head}, "
            f"and a Mamba-2 state), {n - h} Mamba-2 layers; {snote}"
        )
        return out, None

    # Falcon-H1: every decoder layer runs attention and a Mamba-2 mixer in parallel (vllm/model_executor/models/
    # falcon_h1.py: FalconH1Model builds every layer as FalconH1ParallelHybrid, self_attn and mamba), so each
    # layer keeps a KV cache and a Mamba state; read before layer_types, which newer configs fill with "hybrid".
    if model_type == "falcon_h1":
        sb, snote = _falcon_h1_state_bytes(text, dtype_bytes)
        notes.append(f"Falcon-H1: attention and Mamba-2 in parallel in all {n} layers; {snote}")
        return [
            LayerSpec(
                kind="full", kv_heads=kv_heads, head_size=head_size, head_size_v=head_size, state_bytes=sb
            )
            for _ in range(n)
        ], None

    # MiMo-V2-Flash: hybrid_layer_pattern[i] == 1 is a sliding-window layer with its own KV heads and head sizes
    # (swa_num_key_value_heads, swa_head_dim, swa_v_head_dim, window sliding_window_size), else a full-attention
    # layer (num_key_value_heads, head_dim, v_head_dim) (vllm@01ed47b4
    # vllm/model_executor/models/mimo_v2_flash.py::MiMoV2FlashDecoderLayer.is_compressed_softmax_layer, MiMoV2Attention:
    # V heads of v_head_dim, per_layer_sliding_window).
    hlp = text.get("hybrid_layer_pattern")
    if model_type == "mimo_v2_flash" and isinstance(hlp, list):
        sw_window = _int(text.get("sliding_window_size")) or window
        v_full = _int(text.get("v_head_dim")) or head_size
        sw_kv = _int(text.get("swa_num_key_value_heads")) or kv_heads
        sw_head = _int(text.get("swa_head_dim")) or head_size
        sw_v = _int(text.get("swa_v_head_dim")) or sw_head
        full_layer = LayerSpec(kind="full", kv_heads=kv_heads, head_size=head_size, head_size_v=v_full)
        swa_layer = LayerSpec(
            kind="sliding", kv_heads=sw_kv, head_size=sw_head, head_size_v=sw_v, window=sw_window
        )
        out = [
            swa_layer if i < len(hlp) and _int(hlp[i]) == 1 and sw_window else full_layer for i in range(n)
        ]
        s = sum(1 for ly in out if ly.kind == "sliding")
        notes.append(
            f"hybrid_layer_pattern: {n - s} full-attention layers ({kv_heads} KV heads x K {head_size} / V {v_full}), "
            f"{s} sliding-window layers (window {sw_window}, {sw_kv} KV heads x K {sw_head} / V {sw_v})"
        )
        return out, sw_window if s else None

    # Kimi Linear (Kimi-Linear-48B-A3B, Kimi K3): linear_attn_config lists the KDA (Kimi Delta Attention) layers,
    # 1-based; the other layers are MLA (made so below). vLLM reads only this list, not layer_types
    # (vllm@01d99586 vllm/model_executor/models/kimi_linear.py::KimiDecoderLayer, config.is_kda_layer(layer_idx)
    # = layer_idx + 1 in kda_layers).
    lac = text.get("linear_attn_config")
    if model_type == "kimi_linear" and isinstance(lac, dict) and isinstance(lac.get("kda_layers"), list):
        kda = {k for k in (_int(x) for x in lac["kda_layers"]) if k is not None}
        sb, snote = _kda_state_bytes(lac, dtype_bytes)
        out = [LayerSpec(kind="mamba", state_bytes=sb) if i + 1 in kda else full() for i in range(n)]
        k = sum(1 for ly in out if ly.kind == "mamba")
        notes.append(
            f"linear_attn_config: {k} KDA (linear attention) layers (kda_layers, 1-based), {n - k} attention "
            f"layers; {snote}"
        )
        return out, None

    # Explicit per-layer types (Gemma-3, GPT-OSS, Qwen3-Next, newer transformers configs).
    # MiniMax-Text-01 / MiniMax-M1: attn_type_list[i] 0 is a lightning (linear) attention layer, 1 full softmax
    # attention (with config.sliding_window when set); vLLM reads attn_type_list, else decoder_attention_types, else
    # the HF port's layer_types ("linear_attention" 0, "full_attention" 1), else all full
    # (vllm@0.20.0:vllm/model_executor/models/minimax_text_01.py::MiniMaxText01Model.__init__). A linear layer keeps
    # no KV cache but one (num_attention_heads, head_dim, head_dim) state per request at the model dtype
    # (MiniMaxText01ForCausalLM.get_mamba_state_shape_from_config -> MambaStateShapeCalculator.
    # linear_attention_state_shape; linear_attention_state_dtype: --mamba-cache-dtype auto = the model dtype).
    if any(a in _MINIMAX_LINEAR_ARCHS for a in architectures):
        kinds_list = text.get("attn_type_list") or text.get("decoder_attention_types")
        key = "attn_type_list" if text.get("attn_type_list") else "decoder_attention_types"
        lt = text.get("layer_types")
        if not kinds_list and isinstance(lt, list) and lt:
            key = "layer_types"
            kinds_list = [{"linear_attention": 0, "full_attention": 1}.get(str(t), str(t)) for t in lt]
        if kinds_list:
            bad = not isinstance(kinds_list, list) or len(kinds_list) < n
            if not bad:
                bad = any(_int(t) not in (0, 1) or isinstance(t, bool) for t in kinds_list[:n])
            if bad:
                shown = _per_layer_shown(kinds_list, n)
                raise ValueError(
                    f"config.json {key} {shown}; vLLM's MiniMax-Text-01 / M1 reads one attention type per decoder "
                    "layer (0 lightning/linear attention, 1 full attention)"
                )
            mm_head = _int(text.get("head_dim")) or head_size
            sb = heads * mm_head * mm_head * dtype_bytes
            attn_layer = sliding() if window else full()
            out = [
                LayerSpec(kind="mamba", state_bytes=sb) if _int(t) == 0 else attn_layer
                for t in kinds_list[:n]
            ]
            n_lin = sum(1 for ly in out if ly.kind == "mamba")
            notes.append(
                f"{key}: {n - n_lin} full-attention layers, {n_lin} lightning (linear) attention layers without KV "
                f"cache; linear-attention state per request per layer {sb} B ({heads} heads x {mm_head} x {mm_head} "
                f"x {dtype_bytes} B)"
            )
            return out, window if window and n_lin < n else None

    layer_types = text.get("layer_types")
    if isinstance(layer_types, list) and layer_types:
        if len(layer_types) != n:
            notes.append(f"layer_types has {len(layer_types)} entries for {n} layers")
        out = []
        state_note = ""
        # Gemma 4's full-attention layers have their own head size (global_head_dim) and, with
        # attention_k_eq_v, their own KV head count (num_global_key_value_heads)
        # (vllm@001cabc1 vllm/model_executor/models/gemma4.py::Gemma4DecoderLayer).
        g_head = _int(text.get("global_head_dim")) if model_type.startswith("gemma4") else 0
        g_kv = _int(text.get("num_global_key_value_heads")) if text.get("attention_k_eq_v") and g_head else 0
        global_layer = LayerSpec(
            kind="full",
            kv_heads=g_kv or kv_heads,
            head_size=g_head or head_size,
            head_size_v=g_head or head_size,
        )
        if g_head:
            notes.append(
                f"full-attention layers: {g_kv or kv_heads} KV heads x {g_head} (global_head_dim"
                + (", num_global_key_value_heads with attention_k_eq_v" if g_kv else "")
                + ")"
            )
        for t in layer_types[:n]:
            t = str(t)
            if t in ("full_attention", "attention", "global_attention", "deepseek_sparse_attention"):
                # deepseek_sparse_attention: GLM-5.x (glm_moe_dsa) configs saved by transformers 5 name every
                # layer so; vLLM's GlmMoeDsaForCausalLM is DeepseekV2ForCausalLM, which reads no layer_types and
                # gives every decoder layer MLA attention (vllm/model_executor/models/deepseek_v2.py), so the
                # layer is attention here and becomes MLA below
                out.append(global_layer)
            elif t in ("sliding_attention", "local_attention", "sliding_window_attention"):
                out.append(sliding() if window else full())
            elif t in ("chunked_attention",):
                chunk_len = _int(text.get("attention_chunk_size"))
                out.append(
                    LayerSpec(
                        kind="chunked",
                        kv_heads=kv_heads,
                        head_size=head_size,
                        head_size_v=head_size,
                        window=chunk_len,
                    )
                )
            elif t in ("linear_attention", "mamba", "mamba2", "conv", "recurrent"):
                row = 0
                if model_type.startswith("qwen3_next") or "linear_num_value_heads" in text:
                    sb, state_note = _gdn_state_bytes(text, dtype_bytes, gdn_ssm_dtype)
                    row = _gdn_conv_row_bytes(text, dtype_bytes)
                else:
                    sb, state_note = _mamba_state_bytes(text, dtype_bytes)
                out.append(LayerSpec(kind="mamba", state_bytes=sb, spec_conv_bytes=row))
            else:
                out.append(none)
        while len(out) < n:
            out.append(full())
        counts = Counter(str(t) for t in layer_types[:n])
        notes.append(
            "layer_types: "
            + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
            + (f"; {state_note}" if state_note else "")
        )
        _mark_kv_shared(text, model_type, layer_types, out, notes)
        return out, window if any(ly.kind == "sliding" for ly in out) else None

    # Qwen3-Next: every full_attention_interval-th layer is full attention, the rest Gated DeltaNet
    # (transformers Qwen3NextConfig layer_types default: (i+1) % interval == 0 -> full).
    interval = _int(text.get("full_attention_interval"))
    if interval:
        sb, snote = _gdn_state_bytes(text, dtype_bytes, gdn_ssm_dtype)
        gdn = LayerSpec(kind="mamba", state_bytes=sb, spec_conv_bytes=_gdn_conv_row_bytes(text, dtype_bytes))
        out = [full() if (i + 1) % interval == 0 else gdn for i in range(n)]
        notes.append(
            f"full_attention_interval {interval}: {n // interval} full-attention layers, the rest linear attention; {snote}"
        )
        return out, None

    # Jamba: attention every attn_layer_period layers at attn_layer_offset, the rest Mamba.
    period = _int(text.get("attn_layer_period"))
    if period and "attn_layer_offset" in text:
        off = _int(text.get("attn_layer_offset")) or 0
        sb, snote = _mamba_state_bytes(text, dtype_bytes)
        notes.append(f"attn_layer_period {period}/offset {off}: attention layers, the rest Mamba; {snote}")
        return [
            full() if i % period == off else LayerSpec(kind="mamba", state_bytes=sb) for i in range(n)
        ], None

    # Nemotron-NAS (DeciLM): per-block attention; no_op / replace_with_linear blocks hold no KV.
    blocks = text.get("block_configs")
    if isinstance(blocks, list) and blocks:
        out = []
        for b in blocks[:n]:
            a = (b or {}).get("attention") or {}
            if a.get("no_op") or a.get("replace_with_linear"):
                out.append(none)
            else:
                g = _int(a.get("n_heads_in_group")) or 1
                out.append(full(max(1, heads // g)))
        while len(out) < n:
            out.append(full())
        k = sum(1 for ly in out if ly.kind == "full")
        notes.append(
            f"block_configs: {k} of {n} layers have attention (others no_op); KV heads per layer = heads / n_heads_in_group"
        )
        return out, None

    # Mllama: cross-attention layers attend to the image tokens (vllm mllama.py).
    cross = text.get("cross_attention_layers")
    if isinstance(cross, list) and cross:
        cs = {int(i) for i in cross if _int(i) is not None}
        notes.append(
            f"{len(cs)} cross-attention layers {sorted(cs)} (kind 'cross'), {n - len(cs)} self-attention"
        )
        return [
            LayerSpec(kind="cross", kv_heads=kv_heads, head_size=head_size, head_size_v=head_size)
            if i in cs
            else full()
            for i in range(n)
        ], None

    # Llama-4: chunked local attention on RoPE layers; every no_rope_layer_interval-th layer (NoPE) global
    # (transformers Llama4TextConfig no_rope_layers default; vllm llama4.py uses chunked attention when use_rope).
    chunk = _int(text.get("attention_chunk_size"))
    if chunk and model_type.startswith("llama4"):
        nrl = text.get("no_rope_layers")
        if not isinstance(nrl, list) or len(nrl) != n:
            iv = _int(text.get("no_rope_layer_interval")) or 4
            nrl = [int((i + 1) % iv != 0) for i in range(n)]
        out = [
            LayerSpec(
                kind="chunked", kv_heads=kv_heads, head_size=head_size, head_size_v=head_size, window=chunk
            )
            if nrl[i]
            else full()
            for i in range(n)
        ]
        c = sum(1 for ly in out if ly.kind == "chunked")
        notes.append(f"chunked local attention (chunk {chunk}) on {c} layers, full attention on {n - c}")
        return out, None

    if not window:
        return [full() for _ in range(n)], None

    # Qwen2-family: sliding_window present but only applied when use_sliding_window is true, on layers
    # index >= max_window_layers (transformers/vLLM qwen2.py).
    if "use_sliding_window" in text:
        if not text.get("use_sliding_window"):
            notes.append(
                f"use_sliding_window=false: sliding_window {window} is not applied (all layers full attention)"
            )
            return [full() for _ in range(n)], None
        mwl = _int(text.get("max_window_layers")) or 0
        return [sliding() if i >= mwl else full() for i in range(n)], window

    if window and max_len and window >= max_len and model_type not in ("gemma2", "gemma3", "gemma3_text"):
        notes.append(f"sliding_window {window} >= max length {max_len}: equivalent to full attention")
        return [full() for _ in range(n)], None

    # Gemma-2: alternate, sliding on even layer indices (transformers gemma2 "every second layer").
    if model_type == "gemma2":
        notes.append(f"Gemma-2: sliding window {window} on even layers, global attention on odd layers")
        return [sliding() if i % 2 == 0 else full() for i in range(n)], window
    # Gemma-3 / Cohere2: sliding_window_pattern p -> every p-th layer global.
    p = _int(text.get("sliding_window_pattern"))
    if p is None and model_type.startswith("gemma3"):
        p = 6
    if p is None and model_type == "cohere2":
        p = 4
    if p:
        notes.append(f"sliding_window_pattern {p}: every {p}th layer global, others sliding window {window}")
        return [full() if (i + 1) % p == 0 else sliding() for i in range(n)], window
    # GPT-OSS without layer_types: sliding on even layers (vllm gpt_oss.py).
    if model_type == "gpt_oss":
        return [sliding() if i % 2 == 0 else full() for i in range(n)], window
    # DeepSeek V4: every layer keeps a sliding-window cache; compress_ratios[i] (0 = window only, 4, 128) adds the
    # compressed caches of kvlint.memory.deepseek_v4 (vllm deepseek_v4_attention.py; the list's entries past the
    # decoder layers belong to the MTP layers).
    ratios = text.get("compress_ratios")
    if model_type.startswith("deepseek_v4") and isinstance(ratios, list) and len(ratios) >= n:
        idx = _int(text.get("index_head_dim")) or 128
        out = [
            LayerSpec(
                kind="sliding",
                kv_heads=kv_heads,
                head_size=head_size,
                head_size_v=head_size,
                window=window,
                compress_ratio=max(1, _int(ratios[i]) or 0),
                index_head_dim=idx,
            )
            for i in range(n)
        ]
        c4 = sum(1 for ly in out if ly.compress_ratio == 4)
        c128 = sum(1 for ly in out if ly.compress_ratio == 128)
        notes.append(
            f"DeepSeek V4 attention: sliding window {window} on all {n} layers, compressed x4 with indexer on {c4}, "
            f"x128 on {c128}"
        )
        return out, window
    # Mistral-7B-v0.1 style: one window for all layers.
    notes.append(f"sliding_window {window} on all layers")
    return [sliding() for _ in range(n)], window


def _mark_kv_shared(
    text: dict[str, Any], model_type: str, layer_types: list[Any], out: list[LayerSpec], notes: list[str]
) -> None:
    """Mark the layers of ``out`` that reuse an earlier layer's KV cache (``num_kv_shared_layers``), in place.

    Gemma 3n and Gemma 4 (E2B, E4B): the last ``num_kv_shared_layers`` decoder layers read the KV cache of the
    last non-shared layer of their own attention type (vllm@001cabc1 vllm/model_executor/models/gemma4.py::
    Gemma4Attention: ``first_kv_shared_layer_idx = num_hidden_layers - num_kv_shared_layers``, target
    ``prev_layers[::-1].index(current_layer_type)``; vllm/model_executor/models/gemma3n.py::Gemma3nAttention
    likewise, the last full and sliding layers before sharing). vLLM passes the target as
    ``kv_sharing_target_layer_name``, and ``vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.get_kv_cache_spec``
    skips such a layer ("doesn't allocate KV cache for the layer"), so it holds no KV bytes per token and no
    KV-cache group slot. A layer whose type has no earlier non-shared layer (vLLM's ``index`` would raise) is left
    unmarked. Other model types are not read (their vLLM models do not share KV this way).
    """
    if not model_type.startswith(("gemma4", "gemma3n")):
        return
    shared = _int(text.get("num_kv_shared_layers")) or 0
    n = len(out)
    first = n - shared
    if shared <= 0 or first <= 0:
        return
    prev = [str(t) for t in layer_types[:first]]
    marked = 0
    for i in range(first, n):
        t = str(layer_types[i]) if i < len(layer_types) else ""
        if t in prev and out[i].kind in ("full", "sliding"):
            out[i] = _replace_layer(out[i], kv_shared=True)
            marked += 1
    if marked:
        held = Counter(str(t) for t in prev)
        notes.append(
            f"num_kv_shared_layers {shared}: layers {first}-{n - 1} reuse the KV cache of the last earlier layer of "
            f"their type; KV is held by the first {first} layers ("
            + ", ".join(f"{v} {k}" for k, v in sorted(held.items()))
            + ")"
        )


def _replace_layer(layer: LayerSpec, **kw: Any) -> LayerSpec:
    import dataclasses

    return dataclasses.replace(layer, **kw)
