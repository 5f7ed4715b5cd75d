"""Parameter counts and weight bytes from the architecture (docs/engine-memory-model.md §1.13).

vLLM measures weight memory at load time (``model_memory_usage``); statically the most faithful figure
is the checkpoint size (sum of ``*.safetensors`` / ``model.safetensors.index.json`` ``metadata.total_size``).
When that is unknown, or an online conversion changes it (``--quantization fp8`` on a bf16 checkpoint,
``--dtype`` differing from the checkpoint dtype), the bytes are estimated from a parameter count built
from the config, split into parts that quantization methods treat differently:

* ``embed``: input embedding + untied ``lm_head`` (kept in the activation dtype by every method),
* ``linear``: attention/MLP/shared-expert/Mamba projection matrices (quantized),
* ``experts``: routed-expert matrices (quantized; the only quantized part for ``mxfp4``),
* ``other``: norms, routers, biases, Mamba conv/A/D/dt, a reward model's score head (activation dtype),
* ``vision``: a rough ViT estimate for multimodal checkpoints (activation dtype).

Linear and expert modules a quantized checkpoint lists as not converted (``modules_to_not_convert``,
``ignored_layers``, compressed-tensors ``ignore``, ModelOpt ``exclude_modules``, GPTQ ``dynamic`` ``-:`` rules,
bitsandbytes ``llm_int8_skip_modules``) are moved to the activation dtype by :func:`skipped_params`, with each vLLM
loader's matching rule (§1.13); GPTQ ``dynamic`` positive rules price their modules at their own bits / group size.

Formula (§1.13): ``P = V*h + [untied] V*h + L*(h*H*d + 2*h*K*d + H*d*h + 3*h*I + 2h)`` with MoE MLP
``E*3*h*I_moe + shared + router h*E`` (latent MoE, ``moe_latent_size`` l: ``E*2*l*I_moe + 2*h*l``); MLA, Mamba-2, Gated-DeltaNet and NAS blocks per the layer shapes
cited in :func:`param_breakdown`. Byte rates per method: table of §1.13 (read there from
``vllm@0.33.0:vllm/model_executor/layers/quantization/*.py`` parameter shapes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kvlint.engines.options import MAX_INT_SETTING
from kvlint.memory.memo import per_model
from kvlint.models.shapes import (
    NON_GATED_MLP_TYPES,
    dsa_indexer_layers,
    dtype_bytes_of,
    ffn_mult_to_intermediate,
    nemotron_h_pattern,
)
from kvlint.models.towers import COUNTED_AUDIO_ENCODERS, tower_config
from kvlint.types import ModelSpec
from kvlint.values import finite_number

__all__ = [
    "param_count",
    "param_breakdown",
    "weight_bytes",
    "linear_bytes_per_param",
    "skipped_params",
    "tp_replicated_bytes",
]


def _i(v: Any, default: int = 0) -> int:
    """``int(v)`` of a config value; ``default`` for None, a boolean, what ``int()`` refuses and a number past
    2^63 - 1 (read as the flags' are: a ``moe_shared_expert_intermediate_size``, a vision ``patch_size`` or a
    compressed-tensors ``num_bits`` of 1e308 made the estimate raise OverflowError on every plan of the model)."""
    if isinstance(v, bool) or v is None:
        return default
    try:
        n = int(v)
    except (TypeError, ValueError, OverflowError):
        return default
    return n if abs(n) <= MAX_INT_SETTING else default


def _past_int64(v: Any) -> bool:
    """``v`` is a number (an infinity included) beyond 2^63 - 1, which :func:`_i` reads as absent."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        return False
    return abs(v) > MAX_INT_SETTING


def _vision_params(config: dict[str, Any], text_hidden: int) -> int:
    """Rough parameter count of a ViT vision tower + projector (approximate; kvlint only needs its bytes).

    ``L_v x (4 h_v^2 + 2 h_v I_v) + 3 p^2 h_v + projector(in x h_text)``; layers from ``num_hidden_layers``
    or ``depth`` (+ ``num_global_layers``, Mllama), width ``hidden_size`` or ``embed_dim``. Qwen2.5-Omni's
    thinker keeps its ``vision_config`` inside ``thinker_config``; vLLM builds it as Qwen2.5-VL's
    ``Qwen2_5_VisionTransformer`` (``vllm@0.34.0:vllm/model_executor/models/qwen2_5_omni_thinker.py``).
    """
    vc = tower_config(config, "vision_config")
    if not vc:
        return 0
    if config.get("model_type") == "qwen2_5_vl" or vc.get("model_type") == "qwen2_5_omni_vision_encoder":
        return _qwen2_5_vl_vision_params(vc)
    if vc.get("model_type") == "pixtral":
        return _pixtral_vision_params(config, vc, text_hidden)
    if config.get("model_type") == "kimi_k25":
        return _kimi_k25_vision_params(vc, text_hidden)
    layers = _i(vc.get("num_hidden_layers") or vc.get("depth")) + _i(vc.get("num_global_layers"))
    h = _i(vc.get("hidden_size") or vc.get("embed_dim"))
    if not layers or not h:
        return 0
    ratio = finite_number(vc.get("mlp_ratio"))
    inter = _i(vc.get("intermediate_size")) or _i(h * (ratio if ratio is not None and ratio > 0 else 4.0))
    patch = _i(vc.get("patch_size"), 14)
    proj_in = (
        _i(vc.get("vision_output_dim") or vc.get("projector_input_dim") or vc.get("out_hidden_size")) or h
    )
    return layers * (4 * h * h + 2 * h * inter) + 3 * patch * patch * h + proj_in * text_hidden


#: The class defaults of transformers' ``Qwen2AudioEncoderConfig`` and ``Qwen2_5OmniAudioEncoderConfig`` (4.57.1
#: ``models/qwen2_audio/configuration_qwen2_audio.py``, ``models/qwen2_5_omni/configuration_qwen2_5_omni.py``; the
#: same for both, ``output_dim`` the Omni encoder's only): Whisper-large-v3's encoder. What an ``audio_config`` omits.
_AUDIO_ENCODER_DEFAULTS = {
    "d_model": 1280,
    "encoder_layers": 32,
    "encoder_ffn_dim": 5120,
    "num_mel_bins": 128,
    "max_source_positions": 1500,
    "output_dim": 3584,
}


def _ernie_moe_layers(t: dict[str, Any], num_layers: int) -> tuple[int, int, int] | None:
    """``(first, last, interval)`` of the layers ERNIE 4.5's MoE config routes (``moe_layer_start_index``,
    ``moe_layer_end_index``, ``moe_layer_interval``), or None when the config has none of the three keys. vLLM builds
    ``Ernie4_5_MoeMoE`` on layer ``i`` when ``(i + 1) % moe_layer_interval == 0`` and ``start <= i <= end``, and a
    dense MLP of ``intermediate_size`` elsewhere (vllm@0028a751 vllm/model_executor/models/ernie45_moe.py::
    Ernie4_5_MoeDecoderLayer; defaults 0, ``num_hidden_layers - 1`` and 1). ERNIE-4.5-21B-A3B routes layers 1 - 27 of
    28 (start 1, end 27), ERNIE-4.5-300B-A47B 3 - 53 of 54. An end index that is missing, null or negative (the
    transformers config's -1) reads as the last layer; lists (the VL configs' per-modality pairs) as their smallest
    start and largest end, as transformers' conversion script reads them."""
    keys = ("moe_layer_start_index", "moe_layer_end_index", "moe_layer_interval")
    if not any(k in t for k in keys):
        return None

    def pick(v: Any, f: Callable[..., int], default: int) -> int:
        if isinstance(v, list):
            vals = [_i(x, default) for x in v if isinstance(x, int | float | str)]
            return f(vals) if vals else default
        return _i(v, default) if v is not None else default

    last = num_layers - 1
    start = max(0, pick(t.get("moe_layer_start_index"), min, 0))
    end = pick(t.get("moe_layer_end_index"), max, last)
    end = last if end < 0 else min(end, last)
    every = max(1, _i(t.get("moe_layer_interval"), 1) or 1)
    return start, end, every


def _step3_moe_layers(t: dict[str, Any], num_layers: int) -> frozenset[int]:
    """The decoder layers Step 3 builds as MoE: ``moe_layers_enum``, a comma-separated string of layer indices
    (``"4,5,...,59"``, ``int(i) for i in moe_layers_enum.strip().split(",")``), or every layer but the first when the
    key is absent ("Default to 1dense"; vllm@0169d396 vllm/model_executor/models/step3_text.py::
    Step3TextDecoderLayer); the others hold a dense MLP of ``intermediate_size``. A list of indices is read alike;
    entries that are not indices of the model's layers are left out (a config.json may be pull-request input: at
    most one entry per layer is read)."""
    raw = t.get("moe_layers_enum")
    if raw is None:
        return frozenset(range(1, num_layers))
    items: list[Any] = raw.strip().split(",")[: num_layers * 2] if isinstance(raw, str) else []
    if isinstance(raw, list | tuple):
        items = list(raw[: num_layers * 2])
    picked = (_i(x.strip() if isinstance(x, str) and len(x) <= 12 else x, -1) for x in items)
    return frozenset(i for i in picked if 0 <= i < num_layers)


def vision_params(config: dict[str, Any], text_hidden: int) -> int:
    """Parameters (elements) of the vision tower and projector :func:`param_breakdown` counts (``"vision"``, less the
    audio encoder of :func:`audio_params`)."""
    return _vision_params(config, text_hidden)


def audio_params(config: dict[str, Any], text_hidden: int) -> int:
    """Parameters (elements) of the Whisper-style audio encoder of Qwen2-Audio or Qwen2.5-Omni's thinker, as vLLM
    builds it with transformers' classes; 0 for any other (or no) audio tower, which the model's notes name
    (:data:`kvlint.models.towers.COUNTED_AUDIO_ENCODERS`).

    Both encoders (``Qwen2AudioEncoder``, transformers 4.57.1 ``models/qwen2_audio/modeling_qwen2_audio.py``;
    ``Qwen2_5OmniAudioEncoder``, ``models/qwen2_5_omni/modeling_qwen2_5_omni.py``) have ``conv1``
    (``num_mel_bins -> d``, kernel 3) and ``conv2`` (``d -> d``, kernel 3) with biases, and ``encoder_layers``
    layers of: ``q_proj``, ``v_proj``, ``out_proj`` ``d -> d`` with biases and ``k_proj`` without, two LayerNorms,
    ``fc1`` ``d -> encoder_ffn_dim`` and ``fc2`` back, with biases; then a final LayerNorm. Qwen2-Audio adds the
    ``embed_positions`` table (``max_source_positions x d``) and vLLM's ``Qwen2AudioMultiModalProjector``, a biased
    ``d -> text hidden`` linear (``vllm@0.34.0:vllm/model_executor/models/qwen2_audio.py``); Qwen2.5-Omni adds
    its sinusoid position buffer (``max_source_positions x d``, on the GPU with the model), ``audio_bos_eos_token``
    (``2 x output_dim``) and ``proj`` (``d -> output_dim``, biased). Whisper-large-v3's encoder sizes (32 layers, d
    1280, ffn 5120, 128 mel bins, 1500 positions) give 0.64 B parameters, 1.2 GiB in bf16; they are also the encoder
    configs' class defaults, which a size the config omits takes (:data:`_AUDIO_ENCODER_DEFAULTS`)."""
    ac = tower_config(config, "audio_config")
    kind = ac.get("model_type")
    if kind not in COUNTED_AUDIO_ENCODERS:
        return 0
    if kind == "gemma4_audio":
        return _gemma4_audio_params(ac, config, text_hidden)
    if kind == "gemma3n_audio":
        return _gemma3n_audio_params(ac, config, text_hidden)
    # a size the config omits is the encoder config class's default (transformers builds audio_config as
    # CONFIG_MAPPING[model_type](**audio_config): Qwen2AudioEncoderConfig, Qwen2_5OmniAudioEncoderConfig, 4.57.1)
    d = _i(ac.get("d_model"), _AUDIO_ENCODER_DEFAULTS["d_model"])
    layers = _i(ac.get("encoder_layers"), _AUDIO_ENCODER_DEFAULTS["encoder_layers"])
    ffn = _i(ac.get("encoder_ffn_dim"), _AUDIO_ENCODER_DEFAULTS["encoder_ffn_dim"])
    mels = _i(ac.get("num_mel_bins"), _AUDIO_ENCODER_DEFAULTS["num_mel_bins"])
    positions = _i(ac.get("max_source_positions"), _AUDIO_ENCODER_DEFAULTS["max_source_positions"])
    if not d or not layers:
        return 0
    convs = (mels * d * 3 + d) + (d * d * 3 + d)
    layer = (3 * (d * d + d) + d * d) + 2 * 2 * d + (d * ffn + ffn) + (ffn * d + d)
    total = convs + layers * layer + 2 * d + positions * d
    if kind == "qwen2_audio_encoder":
        return total + d * text_hidden + text_hidden
    out = _i(ac.get("output_dim"), _AUDIO_ENCODER_DEFAULTS["output_dim"])
    return total + 2 * out + d * out + out


#: ``Gemma3nAudioConfig``'s class defaults (transformers 4.57.1 ``models/gemma3n/configuration_gemma3n.py``), which a
#: size the checkpoint's ``audio_config`` omits takes
_GEMMA3N_AUDIO_DEFAULTS: dict[str, Any] = {
    "hidden_size": 1536,
    "conf_num_hidden_layers": 12,
    "conf_num_attention_heads": 8,
    "conf_conv_kernel_size": 5,
    "input_feat_size": 128,
    "vocab_size": 128,
    "sscp_conv_channel_size": [128, 32],
    "sscp_conv_kernel_size": [[3, 3], [3, 3]],
    "sscp_conv_stride_size": [[2, 2], [2, 2]],
}


def _gemma3n_audio_params(ac: dict[str, Any], config: dict[str, Any], text_hidden: int) -> int:
    """Parameters (elements) of Gemma 3n's audio encoder and its embedder as vLLM builds them: the encoder is
    transformers' ``Gemma3nAudioEncoder`` (``vllm@0.19.0:vllm/model_executor/models/gemma3n_mm.py::
    Gemma3nForConditionalGeneration``: ``AutoModel.from_config(config=config.audio_config)`` under
    ``_mark_tower_model(vllm_config, "audio")``), a USM Conformer (transformers 4.57.1 ``models/gemma3n/
    modeling_gemma3n.py``): ``subsample_conv_projection``, two bias-free ``Conv2d`` (1 -> c0 -> c1 channels,
    ``sscp_conv_kernel_size``) each with a ``Gemma3nAudioCumulativeGroupNorm`` weight of its channels, then a
    bias-free ``input_proj_linear`` of ``c1 x f1`` -> d, f1 the mel bins (``input_feat_size``) after the two
    strided convolutions over one column of padding a side; per ``Gemma3nAudioConformerBlock`` two feed-forwards
    (``ffw_layer_1`` d -> 4d, ``ffw_layer_2`` back, bias-free, two RMSNorms each), the attention (``pre_attn_norm``,
    bias-free ``q_proj``/``k_proj``/``v_proj`` d -> d, ``relative_position_embedding.pos_proj`` d -> d,
    ``per_dim_scale`` of head_dim, ``post`` d -> d, ``post_norm``), the light conv (``linear_start`` d -> 2d, a
    depthwise bias-free ``Conv1d`` of ``conf_conv_kernel_size``, ``linear_end`` d -> d, two RMSNorms) and a final
    RMSNorm. vLLM's ``embed_audio`` (``Gemma3nMultimodalEmbedder``) adds an embedding of ``vocab_size`` x d, two
    RMSNorms of d and a bias-free d -> text hidden ``embedding_projection`` (its post-projection norm has no
    weight). At the class defaults (gemma-3n-E2B/E4B-it: 12 layers of 1,536) the encoder is 0.68 B parameters,
    1.27 GiB in bf16."""
    d_ = _GEMMA3N_AUDIO_DEFAULTS

    def get(key: str) -> Any:
        v = ac.get(key)
        return d_[key] if v is None else v

    d = _i(get("hidden_size"))
    layers = _i(get("conf_num_hidden_layers"))
    heads = _i(get("conf_num_attention_heads")) or 1
    k = _i(get("conf_conv_kernel_size"))
    if not d or not layers:
        return 0
    chans, kernels, strides = (
        get("sscp_conv_channel_size"),
        get("sscp_conv_kernel_size"),
        get("sscp_conv_stride_size"),
    )
    try:
        c0, c1 = _i(chans[0]), _i(chans[1])
        (k0h, k0w), (k1h, k1w) = ((_i(a), _i(b)) for a, b in kernels[:2])
        s0w, s1w = _i(strides[0][1]), _i(strides[1][1])
    except (TypeError, ValueError, IndexError, KeyError):
        return 0
    if min(c0, c1, k0h, k0w, k1h, k1w, s0w, s1w) < 1 or min(d, layers, k) < 1:
        return 0  # (parse_config refuses such sizes; a negative one would count negative parameters)
    f0 = (
        _i(get("input_feat_size")) + 2 - k0w
    ) // s0w + 1  # Gemma3nAudioSubSampleConvProjection: pad_f 1 a side
    f1 = (f0 + 2 - k1w) // s1w + 1
    if f1 < 1:
        return 0
    sub = (k0h * k0w * c0 + c0) + (c0 * k1h * k1w * c1 + c1) + c1 * f1 * d
    ffw = 8 * d * d + 2 * d
    attn = 5 * d * d + d // heads + 2 * d
    conv = 3 * d * d + k * d + 2 * d
    layer = 2 * ffw + attn + conv + d
    text = tower_config(config, "text_config")
    t = _i(text.get("hidden_size")) or text_hidden
    embedder = _i(get("vocab_size")) * d + 2 * d + d * t
    return sub + layers * layer + embedder


def _gemma4_audio_params(ac: dict[str, Any], config: dict[str, Any], text_hidden: int) -> int:
    """Parameters (elements) of Gemma 4's audio encoder and its embedder as vLLM builds them: the encoder is
    transformers' ``Gemma4AudioModel`` (``vllm@0.19.0:vllm/model_executor/models/gemma4_mm.py``:
    ``AutoModel.from_config(config.audio_config)``), a Conformer (huggingface/transformers@c308a309
    ``src/transformers/models/gemma4/modeling_gemma4.py``): ``subsample_conv_projection`` (two bias-free 3 x 3 convs,
    1 -> c0 -> c1 channels, each with a bias-free LayerNorm, then ``input_proj_linear`` (c0 / 4 x c1) -> d); per layer
    (``Gemma4AudioLayer``) two feed-forwards (``ffw_layer_1`` d -> 4d, ``ffw_layer_2`` 4d -> d, bias-free, two
    RMSNorms), attention (bias-free ``q_proj``, ``k_proj``, ``v_proj``, ``post`` d -> d, ``relative_k_proj`` d -> d,
    ``per_dim_scale`` of head_dim), the light conv (``linear_start`` d -> 2d, ``linear_end`` d -> d, a depthwise
    conv of ``conv_kernel_size`` without bias, two RMSNorms) and three RMSNorms; ``output_proj`` d ->
    ``output_proj_dims`` with bias. vLLM's ``embed_audio`` (``Gemma4MultimodalEmbedder``) adds a bias-free
    ``output_proj_dims`` -> text hidden projection (its norm has no weight). gemma-4-E2B-it: 12 layers of 1,024,
    0.31 B parameters."""
    d = _i(ac.get("hidden_size"))
    layers = _i(ac.get("num_hidden_layers"))
    heads = _i(ac.get("num_attention_heads")) or 1
    if not d or not layers:
        return 0
    chans = ac.get("subsampling_conv_channels")
    c0, c1 = (_i(chans[0]), _i(chans[1])) if isinstance(chans, list) and len(chans) >= 2 else (128, 32)
    k = _i(ac.get("conv_kernel_size"), 5)
    out = _i(ac.get("output_proj_dims")) or d
    text = tower_config(config, "text_config")
    t = _i(text.get("hidden_size")) or text_hidden
    sub = 9 * c0 + c0 + 9 * c0 * c1 + c1 + (c0 // 4) * c1 * d
    ffw = 8 * d * d + 2 * d
    attn = 5 * d * d + d // heads
    conv = 3 * d * d + d * k + 2 * d
    layer = 2 * ffw + attn + conv + 3 * d
    return sub + layers * layer + d * out + out + out * t


def gemma4_moe_keeps_dense_mlp(text_config: dict[str, Any], model_type: str) -> bool:
    """True when a Gemma 4 MoE checkpoint keeps a dense MLP of ``intermediate_size`` in every layer beside its experts:
    ``Gemma4DecoderLayer`` always builds ``self.mlp`` and, when ``enable_moe_block`` (or ``use_second_mlp_block``)
    is set, adds the router and ``self.moe``; the forward sums both branches (``vllm@0.20.0:vllm/model_executor/
    models/gemma4.py::Gemma4DecoderLayer.__init__``/``forward``). gemma-4-26B-A4B: 30 x 3 x 2,816 x 2,112 = 535 M
    parameters (1.0 GiB in bf16) the expert count alone misses."""
    return model_type.startswith("gemma4") and bool(
        text_config.get("enable_moe_block") or text_config.get("use_second_mlp_block")
    )


def arctic_residual_mlp(text_config: dict[str, Any], model_type: str) -> bool:
    """True when a Snowflake Arctic checkpoint builds a residual MLP beside each MoE layer's experts: vLLM's
    ``ArcticDecoderLayer`` adds ``residual_mlp = ArcticMLP(is_residual_mlp=True)``, a gated MLP whose width is the
    hidden size (``ffn_dim = hidden_size``), and a ``residual_layernorm`` where ``config.use_residual`` and the layer
    is a MoE layer, and sums it with the experts' output (``vllm@00db0119:vllm/model_executor/models/arctic.py::
    ArcticDecoderLayer``, ``ArcticMLP``). Snowflake/snowflake-arctic-instruct: 35 x 3 x 7,168^2 = 5.4 B parameters
    (10.0 GiB in bf16), the "10B dense" half of its "10B dense transformer model with a residual 128x3.66B MoE MLP"
    (the model card) that the expert count alone misses."""
    return model_type == "arctic" and text_config.get("use_residual") is True


#: Top-level model types whose projector is ``Mistral3MultiModalProjector`` (a patch merger before the two linears);
#: the others with a Pixtral tower (Pixtral-12B's ``llava``) use ``LlavaMultiModalProjector``.
_MISTRAL3_PROJECTOR_TYPES = ("mistral3", "ministral3")


def _pixtral_vision_params(config: dict[str, Any], vc: dict[str, Any], text_hidden: int) -> int:
    """Parameters of a Pixtral (HF layout) vision tower and its projector as vLLM builds them (elements;
    ``vllm@0.19.0:vllm/model_executor/models/pixtral.py::PixtralHFVisionModel``, ``PixtralHFTransformerBlock``,
    ``PixtralHFAttention``, ``PixtralHFMLP``; ``mistral3.py::Mistral3MultiModalProjector``, ``Mistral3PatchMerger``;
    ``llava.py::LlavaMultiModalProjector``).

    ``patch_conv``: a bias-free ``Conv2d`` of ``num_channels x patch_size^2 x h``; ``ln_pre`` (``h``).
    ``num_hidden_layers`` x block: ``qkv_proj`` ``h -> 3h`` and ``o_proj`` ``h -> h`` (no bias), the *gated* MLP
    ``gate_up_proj`` ``h -> 2 x intermediate_size`` and ``down_proj`` back (no bias), two RMSNorms. The generic ViT
    estimate counted a two-matrix MLP (a third of the MLP short: 0.1 B parameters for the 24-layer, 1,024-wide tower
    of Mistral-Small-3.1 and Ministral 3) and a one-matrix projector. Mistral 3's projector: ``norm`` (``h``),
    ``patch_merger.merging_layer`` ``h m^2 -> h`` (no bias, ``m`` = ``spatial_merge_size``), ``linear_1``
    ``h -> text`` and ``linear_2`` ``text -> text`` (bias per ``multimodal_projector_bias``); Llava's: the two
    linears only (bias by default)."""
    h = _i(vc.get("hidden_size"))
    layers = _i(vc.get("num_hidden_layers"))
    if not h or not layers:
        return 0
    inter = _i(vc.get("intermediate_size")) or 4 * h
    patch = _i(vc.get("patch_size"), 14)
    chans = _i(vc.get("num_channels"), 3)
    block = 4 * h * h + 3 * h * inter + 2 * h
    tower = chans * patch * patch * h + h + layers * block
    text = text_hidden or h
    bias = config.get("multimodal_projector_bias")
    if config.get("model_type") in _MISTRAL3_PROJECTOR_TYPES:
        merge = _i(config.get("spatial_merge_size"), 2)
        biased = bias is True
        projector = h + h * merge * merge * h + h * text + text * text + (2 * text if biased else 0)
    else:
        biased = bias is not False
        projector = h * text + text * text + (2 * text if biased else 0)
    return tower + projector


#: ``KimiK25VisionConfig``'s class defaults (``vllm@0.19.0:vllm/transformers_utils/configs/kimi_k25.py``): hidden
#: size, intermediate size, layers, patch size, position-embedding height and width
_KIMI_K25_VISION_DEFAULTS = (1152, 4304, 27, 14, 64, 64)


def _kimi_k25_vision_params(vc: dict[str, Any], text_hidden: int) -> int:
    """Parameters of Kimi-K2.5's MoonViT 3D tower and patch-merger projector as vLLM 0.19.0 builds them
    (``vllm/model_executor/models/kimi_k25_vit.py``, ``kimi_k25.py``). vLLM's ``KimiK25VisionConfig`` reads
    ``hidden_size``, ``intermediate_size``, ``num_hidden_layers``, ``patch_size``, ``init_pos_emb_height`` /
    ``_width``, ``merge_kernel_size`` and ``mm_hidden_size``, each with its class default
    (:data:`_KIMI_K25_VISION_DEFAULTS`, merge 2 x 2); the checkpoint's ``vt_hidden_size`` / ``vt_intermediate_size`` /
    ``vt_num_hidden_layers`` are not those names, so the defaults (the same sizes) apply. ``KimiK25Config`` sets
    ``mm_hidden_size`` to the text hidden size when it equals the tower's. The modules: ``MoonVision3dPatchEmbed``'s
    ``Conv2d(3, h, patch)`` with bias and its ``pos_emb_height x pos_emb_width x h`` table; per layer two
    LayerNorms, ``wqkv`` ``h -> 3h`` and ``wo`` ``h -> h`` with biases (``attn_bias=True``), ``MLP2`` ``fc0``
    ``h -> I`` and ``fc1`` ``I -> h`` with biases; a final LayerNorm; the projector's LayerNorm(h), ``linear_1``
    ``4h -> 4h`` and ``linear_2`` ``4h -> mm_hidden``, with biases (4 = the 2 x 2 merge). Not quantized under a
    compressed-tensors checkpoint (``_maybe_ignore_quant_config``)."""
    dh, di, dl, dp, dph, dpw = _KIMI_K25_VISION_DEFAULTS

    def size(v: Any, default: int) -> int:
        # a size that is not a positive whole number (a config.json may be pull-request input) is read as absent,
        # so the class default applies: a 0 or negative entry must not take parameters off the model
        n = _i(v, default)
        return n if n > 0 else default

    h, inter, layers = (
        size(vc.get("hidden_size"), dh),
        size(vc.get("intermediate_size"), di),
        size(vc.get("num_hidden_layers"), dl),
    )
    patch, ph, pw = (
        size(vc.get("patch_size"), dp),
        size(vc.get("init_pos_emb_height"), dph),
        size(vc.get("init_pos_emb_width"), dpw),
    )
    merge = vc.get("merge_kernel_size")
    mh, mw = (
        (size(merge[0], 2), size(merge[1], 2))
        if isinstance(merge, list | tuple) and len(merge) == 2
        else (2, 2)
    )
    mm = size(vc.get("mm_hidden_size"), 0) or h
    if mm == h:
        mm = text_hidden
    embed = 3 * patch * patch * h + h + ph * pw * h
    layer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * inter + inter) + (inter * h + h)
    hm = h * mh * mw
    projector = 2 * h + (hm * hm + hm) + (hm * mm + mm)
    return embed + layers * layer + 2 * h + projector


def _qwen2_5_vl_vision_params(vc: dict[str, Any]) -> int:
    """Parameters of the Qwen2.5-VL vision tower as vLLM builds it (elements; ``vllm@0.11.0`` and ``0.23.0:vllm/model_executor/
    models/qwen2_5_vl.py``, the same module list as transformers' checkpoint).

    ``Qwen2_5_VisionPatchEmbed``: a bias-free ``Conv3d`` of ``in_chans x temporal_patch_size x patch_size^2 x h``.
    ``depth`` x ``Qwen2_5_VisionBlock``: two RMSNorms (``h`` each), ``qkv`` ``h -> 3h`` and ``proj`` ``h -> h``
    with biases, and the gated ``Qwen2_5_VisionMLP``: ``gate_up_proj`` ``h -> 2 x intermediate_size`` and
    ``down_proj`` back, both with biases. ``Qwen2_5_VisionPatchMerger``: ``ln_q`` (``h``) and two biased linears
    ``h m^2 -> h m^2 -> out_hidden_size`` (``m`` = ``spatial_merge_size``). The generic ViT estimate counted a
    two-matrix MLP and a one-matrix projector: 0.17 B parameters short for Qwen2.5-VL-7B (0.32 GiB in bf16).
    """
    h = _i(vc.get("hidden_size"))
    layers = _i(vc.get("depth") or vc.get("num_hidden_layers"))
    inter = _i(vc.get("intermediate_size")) or 4 * h
    patch = _i(vc.get("patch_size") or vc.get("spatial_patch_size"), 14)
    temporal = _i(vc.get("temporal_patch_size"), 2)
    chans = _i(vc.get("in_chans") or vc.get("in_channels"), 3)
    merge = _i(vc.get("spatial_merge_size"), 2)
    out = _i(vc.get("out_hidden_size")) or h
    if not h or not layers:
        return 0
    block = (h * 3 * h + 3 * h) + (h * h + h) + (h * 2 * inter + 2 * inter) + (inter * h + h) + 2 * h
    wide = h * merge * merge
    merger = h + (wide * wide + wide) + (wide * out + out)
    return chans * temporal * patch * patch * h + layers * block + merger


_BREAKDOWN_CACHE: dict[int, tuple[ModelSpec, dict[str, int]]] = {}


#: Reward architectures whose model class adds a score head over the decoder, with the head's ``num_labels``:
#: ``score = Sequential(Linear(h, h), ReLU(), Linear(h, num_labels))``, both with a bias
#: (``vllm@0.10.1`` and ``vllm@0.34.0:vllm/model_executor/models/qwen2_rm.py::Qwen2RewardBaseModel``:
#: ``ColumnParallelLinear``/``RowParallelLinear``, ``num_labels`` set to 1 by ``Qwen2ForRewardModel`` and 2 by
#: ``Qwen2ForProcessRewardModel``; ``sglang@0.5.5`` and ``sglang@0.5.23:python/sglang/srt/models/qwen2_rm.py``:
#: ``nn.Linear``, ``num_labels = 1``). Counted in ``other`` (activation dtype): SGLang's ``nn.Linear`` is never
#: quantized; vLLM passes the quantization config to it, so a quantized checkpoint's head is a little
#: overcounted.
SCORE_HEAD_LABELS: dict[str, int] = {"Qwen2ForRewardModel": 1, "Qwen2ForProcessRewardModel": 2}


def param_breakdown(spec: ModelSpec) -> dict[str, int]:
    """Memoised :func:`_param_breakdown` (the planner asks for it on every re-plan of a remedy).

    Keyed by object identity; the cache holds the spec itself, so an id cannot be reused while its entry
    lives. Returns a fresh dict each call.
    """
    hit = _BREAKDOWN_CACHE.get(id(spec))
    if hit is not None and hit[0] is spec:
        return dict(hit[1])
    parts = _param_breakdown(spec)
    if len(_BREAKDOWN_CACHE) >= 512:
        _BREAKDOWN_CACHE.clear()
    _BREAKDOWN_CACHE[id(spec)] = (spec, parts)
    return dict(parts)


def _param_breakdown(
    spec: ModelSpec,
    sink: list[tuple[str, int, str]] | None = None,
    unquantized_replicated: list[tuple[str, int]] | None = None,
) -> dict[str, int]:
    """Parameter count of the whole model (all ranks) split into ``embed``, ``linear``, ``experts``,
    ``other`` and ``vision`` (element counts; see the module docstring for what each holds).

    Layer shapes: attention q/k/v/o ``h x H d``, ``h x K d`` (x2), ``H d x h`` (Qwen3-Next doubles q for its
    output gate); MLA (DeepSeek-V2/V3 ``DeepseekV2MLAAttention``) q_a ``h x q_lora``, q_b
    ``q_lora x H (nope + rope)``, kv_a ``h x (kv_lora + rope)``, kv_b ``kv_lora x H (nope + v)``, o ``H v x h``, and
    on the layers of a DeepSeek-sparse-attention model that build one, the indexer's wq_b
    ``q_lora x index_n_heads index_head_dim`` and wk ``h x index_head_dim`` (weights_proj ``h x index_n_heads`` in
    ``other``);
    Mamba-2 in_proj ``h x (2 I + 2 G N + nh)``, out_proj ``I x h``; Gated DeltaNet in_proj
    ``h x (2 Kdim + 2 Vdim + 2 nv)``, out ``Vdim x h``; NAS FFN width from ``ffn_mult``. MoE layer placement:
    a per-layer ``moe_layer_freq`` list (MiMo-V2, MiniMax-M3: a true entry is MoE), DeepSeek/GLM
    ``first_k_dense_replace``/``moe_layer_freq``, Llama-4 ``interleave_moe_layer_step`` (dense layers use
    ``intermediate_size_mlp``), ``mlp_layer_types`` ("sparse": Laguna), Qwen-MoE ``decoder_sparse_step``/
    ``mlp_only_layers``, Jamba ``expert_layer_period``/``expert_layer_offset``, else every layer; MiniMax-M3's
    dense layers use ``dense_intermediate_size``.
    MTP layers (``num_nextn_predict_layers``) are not counted.

    ``sink``, when given, receives one ``(module, elements, part)`` per quantizable module (``part`` is
    ``linear`` or ``experts``), named as the checkpoint names it below ``layers.{i}.``
    (``layers.3.self_attn.q_proj``; fused vLLM modules by their checkpoint shards joined with ``|``), for
    :func:`skipped_params`. ``unquantized_replicated``, when given, receives ``(module, elements)`` of the modules
    vLLM keeps whole on every tensor-parallel rank and never quantizes (MoE routers, the DSA indexer's
    ``weights_proj``), for :func:`tp_replicated_bytes`.
    """
    t = spec.text_config or spec.config
    mt = spec.model_type
    h, H, d, V = spec.hidden_size, spec.num_attention_heads, spec.head_size, spec.vocab_size
    if spec.is_mla:
        d = _i(t.get("qk_nope_head_dim")) + _i(t.get("qk_rope_head_dim"))
    gated = mt not in NON_GATED_MLP_TYPES
    mlp_mult = 3 if gated else 2
    out = {
        "embed": V * h * (1 if spec.tie_word_embeddings else 2),
        "linear": 0,
        "experts": 0,
        "other": h,
        "vision": 0,
    }
    # (vLLM builds Qwen2.5-Omni's text model, qwen2_5_omni_text, as Qwen2ForCausalLM: qwen2_5_omni_thinker.py)
    qwen2_types = ("qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_5_omni_text")
    attn_bias = bool(t.get("attention_bias")) or mt in qwen2_types
    # GPT-NeoX (Pythia): every linear but embed_out has a bias and both LayerNorms have one too
    # (vllm-project/vllm@002800f0 vllm/model_executor/models/gpt_neox.py: GPTNeoXAttention's fused
    # query_key_value h -> 3h and dense h -> h, GPTNeoXMLP's dense_h_to_4h h -> I and dense_4h_to_h I -> h are
    # Column/RowParallelLinear with their default bias; input_layernorm, post_attention_layernorm and
    # final_layer_norm are nn.LayerNorm). A config stating attention_bias false (transformers' GPTNeoXConfig
    # defaults it to true) drops the two attention biases.
    neox = mt == "gpt_neox"
    if neox and t.get("attention_bias") is not False:
        attn_bias = True
    if neox:
        out["other"] += h  # final_layer_norm bias

    E = spec.num_experts
    I_moe = spec.moe_intermediate_size or spec.intermediate_size
    I_dense = spec.intermediate_size
    first_dense = _i(t.get("first_k_dense_replace"))
    freq = _i(t.get("moe_layer_freq"), 1) or 1
    sparse_step = _i(t.get("decoder_sparse_step"), 1) or 1
    only = t.get("mlp_only_layers")
    mlp_only = {_i(x) for x in (only if isinstance(only, list) else [])}
    l4_step = _i(t.get("interleave_moe_layer_step"), 1) or 1
    pattern = nemotron_h_pattern(t)
    blocks = t.get("block_configs") if isinstance(t.get("block_configs"), list) else None

    freq_list = t.get("moe_layer_freq") if isinstance(t.get("moe_layer_freq"), list) else None
    mlp_types = t.get("mlp_layer_types") if isinstance(t.get("mlp_layer_types"), list) else None

    ernie_range = _ernie_moe_layers(t, len(spec.layers))
    arctic_residual = arctic_residual_mlp(t, mt)
    step3_moe_layers = _step3_moe_layers(t, len(spec.layers)) if mt == "step3_text" else None
    step3_share_q = max(0, _i(t.get("share_q_dim"))) if mt == "step3_text" else 0

    def is_moe_layer(i: int) -> bool:
        if not E:
            return False
        if freq_list is not None:
            # a per-layer list: MiMo-V2-Flash's first layer is dense (vllm@0.34.0 mimo_v2.py::MiMoV2DecoderLayer.
            # is_moe_layer: ``moe_layer_freq[layer_idx]``); MiniMax-M3's config class makes it ``mlp_layer_types``
            # (transformers 5.25.0 configuration_minimax_m3.py: "sparse" if f else "dense")
            return i < len(freq_list) and bool(freq_list[i])
        if "first_k_dense_replace" in t or "moe_layer_freq" in t:
            return i >= first_dense and i % freq == 0
        if mt == "jamba":
            # Jamba: experts on every expert_layer_period-th layer from expert_layer_offset, a dense MLP of
            # intermediate_size elsewhere (vllm@0.34.0 jamba.py: JambaMoE where config.layers_num_experts[i] > 1;
            # transformers 5.25.0 JambaConfig.layers_num_experts: num_experts if i % period == offset, defaults 2, 1)
            return i % (_i(t.get("expert_layer_period"), 2) or 1) == _i(t.get("expert_layer_offset"), 1)
        if mt.startswith("llama4"):
            return (i + 1) % l4_step == 0
        if step3_moe_layers is not None:
            return i in step3_moe_layers
        if mt == "arctic":
            # ArcticMoE.is_moe_layer: (layer_id + 1) % config.moe_layer_frequency == 0; a dense ArcticMLP of
            # intermediate_size elsewhere (vllm@00db0119 vllm/model_executor/models/arctic.py)
            return (i + 1) % (_i(t.get("moe_layer_frequency"), 1) or 1) == 0
        if mlp_types is not None:
            # Laguna: ``mlp_layer_types[layer_idx] == "sparse"`` (vllm@0.34.0 laguna.py::LagunaDecoderLayer)
            return i < len(mlp_types) and mlp_types[i] == "sparse"
        if "decoder_sparse_step" in t or mlp_only:
            return i not in mlp_only and (i + 1) % sparse_step == 0
        if ernie_range is not None:
            lo, hi, every = ernie_range
            return (i + 1) % every == 0 and lo <= i <= hi
        return True

    # Latent MoE (Nemotron-3 Super/Ultra, ``moe_latent_size``): the routed experts run in the latent width, between
    # fc1_latent_proj (h x latent) and fc2_latent_proj (latent x h); the shared expert and the router stay at h
    # (vllm@00b08dc4 vllm/model_executor/models/nemotron_h.py::NemotronHMoE: FusedMoE hidden_size=moe_latent_size).
    latent = _i(t.get("moe_latent_size"))
    dsa_indexers = dsa_indexer_layers(t, len(spec.layers))

    def moe_params() -> tuple[int, int, int]:
        """(expert linear, shared linear (with the latent projections), router+gates) of one MoE layer."""
        experts = E * mlp_mult * (latent or h) * I_moe
        shared = 2 * h * latent
        n_shared = _i(t.get("n_shared_experts"))
        if mt == "kimi_linear":
            # KimiMoE's shared experts: one MLP of moe_intermediate_size x num_shared_experts
            # (vllm@01d99586 vllm/model_executor/models/kimi_linear.py::KimiMoE)
            n_shared = n_shared or _i(t.get("num_shared_experts"))
        # ERNIE 4.5's: one MLP of moe_intermediate_size x moe_num_shared_experts (vllm@0028a751
        # vllm/model_executor/models/ernie45_moe.py::Ernie4_5_MoeMoE, ``shared_experts``)
        n_shared = n_shared or _i(t.get("moe_num_shared_experts"))
        if mt == "step3_text" and _i(t.get("share_expert_dim")) > 0:
            # Step 3's share_expert: one MLP of share_expert_dim on each MoE layer (vllm@0169d396
            # vllm/model_executor/models/step3_text.py::Step3TextDecoderLayer)
            shared += mlp_mult * h * _i(t.get("share_expert_dim"))
        elif _i(t.get("moe_shared_expert_intermediate_size")):
            shared += mlp_mult * h * _i(t.get("moe_shared_expert_intermediate_size"))
        elif _i(t.get("shared_expert_intermediate_size")):
            shared += mlp_mult * h * _i(t.get("shared_expert_intermediate_size"))
        elif n_shared:
            shared += n_shared * mlp_mult * h * I_moe
        elif mt.startswith("llama4"):
            shared += mlp_mult * h * I_dense
        elif t.get("residual_moe") is True:
            # Grok's residual MoE (Grok-2): a dense MLP of intermediate_size beside the experts of
            # moe_intermediate_size, their outputs averaged (sglang 0.5.5.post3 sglang/srt/models/grok.py::
            # Grok1DecoderLayer: block_sparse_moe = Grok1MoE(intermediate_size=moe_intermediate_size or
            # intermediate_size), mlp = Grok1MLP(intermediate_size=config.intermediate_size) when residual_moe;
            # Grok1ForCausalLM.get_num_params_analytical counts it as one more expert)
            shared += mlp_mult * h * I_dense
        router = h * E + (h if _i(t.get("shared_expert_intermediate_size")) else 0)
        return experts, shared, router

    # Checkpoint module names (for ``sink``): Nemotron-H blocks are ``mixer``, MiniMax/Mixtral MoE blocks
    # ``block_sparse_moe``, Qwen-MoE's single shared expert ``shared_expert``, Gemma 4's routed experts sit
    # beside its MLP (``layers.N.experts``, ``layers.N.router``).
    hybrid_mixer = pattern is not None
    attn_name = "mixer" if hybrid_mixer else "self_attn"
    moe_name = (
        "mixer"
        if hybrid_mixer
        else "block_sparse_moe"
        if mt.startswith(("minimax", "mixtral", "arctic"))
        else ""
        if mt.startswith("gemma4")
        else "mlp"
    )
    shared_name = "shared_expert" if _i(t.get("shared_expert_intermediate_size")) else "shared_experts"
    mlp_names = ("gate_proj", "up_proj", "down_proj") if gated else ("up_proj", "down_proj")

    def put(i: int, part: str, block: str, named: list[tuple[str, int]]) -> None:
        out[part] += sum(n for _, n in named)
        if sink is not None:
            at = f"layers.{i}.{block}." if block else f"layers.{i}."
            sink.extend((at + name, n, part) for name, n in named)

    def put_mlp(i: int, block: str, width: int) -> None:
        put(i, "linear", block, [(nm, h * width) for nm in mlp_names])

    def put_moe(i: int) -> None:
        ex, sh, rt = moe_params()
        put(i, "experts", moe_name, [("experts", ex)])
        if latent:
            put(i, "linear", moe_name, [("fc1_latent_proj", h * latent), ("fc2_latent_proj", h * latent)])
        if sh - 2 * h * latent:
            rest = sh - 2 * h * latent
            per = rest // len(mlp_names)
            sizes = [per] * (len(mlp_names) - 1) + [rest - per * (len(mlp_names) - 1)]
            put(
                i, "linear", f"{moe_name}.{shared_name}".lstrip("."), list(zip(mlp_names, sizes, strict=True))
            )
        out["other"] += rt
        if unquantized_replicated is not None:
            unquantized_replicated.append((f"layers.{i}.{moe_name}.gate".replace("..", "."), rt))

    for i, layer in enumerate(spec.layers):
        k = layer.kind
        out["other"] += 2 * h
        if neox:
            # the two LayerNorm biases, then dense_h_to_4h's and dense_4h_to_h's biases
            out["other"] += 2 * h + I_dense + h
        # attention / mixer
        if k in ("full", "sliding", "chunked", "cross"):
            K = layer.kv_heads
            q_mult = 2 if mt.startswith("qwen3_next") else 1
            dl = (
                layer.head_size if mt.startswith("gemma4") and layer.head_size else d
            )  # Gemma 4 global_head_dim
            if step3_share_q:
                # Step 3's attention: q_proj only to the shared low-rank query (share_q_dim), fused with k/v into a
                # ReplicatedLinear qkv_proj; inter_norm over it; wq share_q_dim -> H d (ColumnParallelLinear); o_proj
                # (vllm@0169d396 vllm/model_executor/models/step3_text.py::Step3TextAttention)
                put(
                    i,
                    "linear",
                    attn_name,
                    [
                        ("q_proj", h * step3_share_q),
                        ("k_proj", h * K * dl),
                        ("v_proj", h * K * dl),
                        ("wq", step3_share_q * H * dl),
                        ("o_proj", H * dl * h),
                    ],
                )
                out["other"] += step3_share_q
            else:
                put(
                    i,
                    "linear",
                    attn_name,
                    [
                        ("q_proj", h * H * dl * q_mult),
                        ("k_proj", h * K * dl),
                        ("v_proj", h * K * dl),
                        ("o_proj", H * dl * h),
                    ],
                )
            if attn_bias:
                out["other"] += H * dl + 2 * K * dl
                if neox:
                    out["other"] += h  # dense (output projection) bias
            if layer.state_bytes and mt == "falcon_h1":
                # Falcon-H1's parallel Mamba-2 mixer (vllm falcon_h1.py FalconH1SSMDecoderLayer, MambaMixer2):
                # in_proj to 2 x d_ssm + 2 x groups x d_state + heads, out_proj back; conv, A, D, dt_bias, norm
                ssm = _i(t.get("mamba_d_ssm")) or _i(t.get("mamba_expand"), 2) * h
                nh = _i(t.get("mamba_n_heads"), 128)
                G = _i(t.get("mamba_n_groups"), 1)
                N = _i(t.get("mamba_d_state"), 256)
                conv_dim = ssm + 2 * G * N
                put(
                    i,
                    "linear",
                    "mamba",
                    [("in_proj", h * (2 * ssm + 2 * G * N + nh)), ("out_proj", ssm * h)],
                )
                out["other"] += conv_dim * (_i(t.get("mamba_d_conv"), 4) + 1) + 3 * nh + ssm
        elif k == "mla":
            q_lora = _i(t.get("q_lora_rank"))
            kv_lora = _i(t.get("kv_lora_rank"))
            rope = _i(t.get("qk_rope_head_dim"))
            nope = _i(t.get("qk_nope_head_dim"))
            v = _i(t.get("v_head_dim"), nope)
            qs = (
                [("q_a_proj", h * q_lora), ("q_b_proj", q_lora * H * (nope + rope))]
                if q_lora
                else [("q_proj", h * H * (nope + rope))]
            )
            put(
                i,
                "linear",
                "self_attn",
                qs
                + [
                    ("kv_a_proj_with_mqa", h * (kv_lora + rope)),
                    ("kv_b_proj", kv_lora * H * (nope + v)),
                    ("o_proj", H * v * h),
                ],
            )
            out["other"] += q_lora + kv_lora
            if q_lora and i in dsa_indexers:
                # DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5.x), on the layers that build one
                # (vllm@002d6073 vllm/model_executor/models/deepseek_v2.py::Indexer): wq_b q_lora x (heads x dim) and
                # wk h x dim, quantized like the other projections; weights_proj h x heads (quant_config=None) and the
                # k_norm LayerNorm (weight + bias) stay at the activation dtype
                ih, ihd = _i(t.get("index_n_heads"), 64), _i(t.get("index_head_dim"), 128)
                put(i, "linear", "self_attn", [("indexer.wq_b", q_lora * ih * ihd), ("indexer.wk", h * ihd)])
                out["other"] += h * ih + 2 * ihd
                if unquantized_replicated is not None:
                    unquantized_replicated.append((f"layers.{i}.self_attn.indexer.weights_proj", h * ih))
        elif k == "mamba":
            lac = t.get("linear_attn_config")
            if mt == "kimi_linear" and isinstance(lac, dict):
                # KDA layer (vllm@01a7e5d9 vllm/model_executor/layers/kda.py::KimiDeltaAttention): q/k/v/o
                # projections of num_heads x head_dim, the low-rank f (decay) and g (output gate) projections through
                # head_dim, b_proj to num_heads; conv weights, dt_bias, A_log and o_norm are not quantized
                nh, hd = _i(lac.get("num_heads"), 32), _i(lac.get("head_dim"), 128)
                p = nh * hd
                put(
                    i,
                    "linear",
                    "self_attn",
                    [
                        ("q_proj", h * p),
                        ("k_proj", h * p),
                        ("v_proj", h * p),
                        ("f_a_proj", h * hd),
                        ("f_b_proj", hd * p),
                        ("b_proj", h * nh),
                        ("g_a_proj", h * hd),
                        ("g_b_proj", hd * p),
                        ("o_proj", p * h),
                    ],
                )
                out["other"] += 3 * p * _i(lac.get("short_conv_kernel_size"), 4) + p + nh + hd
            elif "linear_num_value_heads" in t:
                kh, vh = _i(t.get("linear_num_key_heads"), 16), _i(t.get("linear_num_value_heads"), 32)
                kd, vd = _i(t.get("linear_key_head_dim"), 128), _i(t.get("linear_value_head_dim"), 128)
                kdim, vdim = kh * kd, vh * vd
                put(
                    i,
                    "linear",
                    "linear_attn",
                    [
                        ("in_proj_qkvz|in_proj_qkv|in_proj_z", h * (2 * kdim + 2 * vdim)),
                        ("in_proj_ba|in_proj_b|in_proj_a", h * 2 * vh),
                        ("out_proj", vdim * h),
                    ],
                )
                out["other"] += (2 * kdim + vdim) * _i(t.get("linear_conv_kernel_dim"), 4) + 2 * vh + vd
            else:
                nh = _i(t.get("mamba_num_heads") or t.get("mamba_n_heads"))
                hd = _i(t.get("mamba_head_dim") or t.get("mamba_d_head"))
                N = _i(t.get("ssm_state_size") or t.get("mamba_d_state") or t.get("state_size"), 128)
                kern = _i(t.get("conv_kernel") or t.get("mamba_d_conv"), 4)
                if nh and hd:
                    G = _i(t.get("n_groups") or t.get("mamba_n_groups"), 1)
                    inner = nh * hd
                    conv_dim = inner + 2 * G * N
                    put(
                        i,
                        "linear",
                        "mixer",
                        [("in_proj", h * (2 * inner + 2 * G * N + nh)), ("out_proj", inner * h)],
                    )
                    out["other"] += conv_dim * (kern + 1) + 3 * nh + inner
                else:
                    inner = _i(t.get("mamba_expand") or t.get("expand"), 2) * h
                    dt_rank = _i(t.get("mamba_dt_rank") or t.get("time_step_rank")) or -(-h // 16)
                    put(
                        i,
                        "linear",
                        "mixer",
                        [
                            ("in_proj", h * 2 * inner),
                            ("x_proj", inner * (dt_rank + 2 * N)),
                            ("dt_proj", dt_rank * inner),
                            ("out_proj", inner * h),
                        ],
                    )
                    out["other"] += inner * (kern + 1) + inner * N + 2 * inner
        # MLP
        if pattern is not None:
            ch = pattern[i] if i < len(pattern) else "-"
            if ch == "-":
                put_mlp(i, "mixer", I_dense)
            elif ch == "E":
                put_moe(i)
            continue
        if blocks is not None:
            ffn = (blocks[i] or {}).get("ffn") or {} if i < len(blocks) else {}
            if not ffn.get("no_op") and ffn.get("ffn_mult") is not None:
                put_mlp(i, "mlp", ffn_mult_to_intermediate(float(ffn["ffn_mult"]), h))
            continue
        dense_i = (
            _i(t.get("intermediate_size_mlp"))
            if mt.startswith("llama4")
            # MiniMax-M3's dense layers (vllm@0.34.0 vllm/models/minimax_m3/nvidia/model.py: MiniMaxM3MLP of
            # config.dense_intermediate_size; intermediate_size is the experts')
            else _i(t.get("dense_intermediate_size"))
            if mt.startswith("minimax_m3")
            else I_dense
        )
        dense_i = dense_i or I_dense
        if t.get("use_double_wide_mlp") is True and i < len(spec.layers) and spec.layers[i].kv_shared:
            # Gemma 4 E2B: a KV-shared layer's MLP is twice as wide (vllm gemma4.py Gemma4DecoderLayer:
            # intermediate_size * 2 when use_double_wide_mlp and is_kv_shared_layer)
            dense_i *= 2
        if is_moe_layer(i):
            put_moe(i)
            if gemma4_moe_keeps_dense_mlp(t, mt):
                put_mlp(i, "mlp", dense_i)
            if arctic_residual:
                # Arctic's residual MLP (w1, w3 gated, w2) of the hidden width, and its residual_layernorm
                put(i, "linear", "residual_mlp", [("w1", h * h), ("w3", h * h), ("w2", h * h)])
                out["other"] += h
        else:
            put_mlp(i, "mlp", dense_i)
    ple = _i(t.get("hidden_size_per_layer_input"))
    if ple > 0:
        # Per-layer embeddings (Gemma 3n, Gemma 4 E2B/E4B), as vLLM builds them
        # (vllm gemma3n.py::Gemma3nSelfDecoder, Gemma3nDecoderLayer; gemma4.py the same for Gemma 4):
        # embed_tokens_per_layer, a VocabParallelEmbedding of vocab_size_per_layer_input x (layers x ple),
        # created on the GPU with the model (so --cpu-offload-gb does not move it) and kept in the activation
        # dtype like the input embedding; per_layer_model_projection (h -> layers x ple) and its norm; per layer
        # per_layer_input_gate (h -> ple), per_layer_projection (ple -> h) and post_per_layer_input_norm (h).
        L = spec.num_layers
        out["embed"] += (_i(t.get("vocab_size_per_layer_input")) or V) * L * ple
        out["linear"] += h * L * ple + L * 2 * h * ple
        out["other"] += ple + L * h
    labels = SCORE_HEAD_LABELS.get(spec.architectures[0]) if spec.architectures else None
    if labels:
        # the reward head: Linear(h, h) + bias, ReLU, Linear(h, num_labels) + bias (SCORE_HEAD_LABELS)
        out["other"] += h * h + h + h * labels + labels
    # the encoder towers, kept unquantized: vision, and the audio encoders kvlint has a formula for
    out["vision"] = _vision_params(spec.config, h) + audio_params(spec.config, h)
    return out


def param_count(spec: ModelSpec) -> int:
    """Total parameters of the checkpoint's model (elements, all ranks), from the architecture formula.

    Includes embeddings (once when ``tie_word_embeddings``), every decoder layer (attention/MLA/Mamba
    mixer, dense or MoE MLP with shared experts and router, norms) and a rough vision-tower estimate for
    multimodal checkpoints; excludes MTP layers. Accuracy on the corpus: within 2% of cited counts
    (tests/test_models.py). Raises nothing for configs :func:`parse_config` accepted.
    """
    return sum(param_breakdown(spec).values())


_QUANT_ALIASES = {
    "awq_marlin": "awq",
    "auto_awq": "awq",
    "gptq_marlin": "gptq",
    "auto_gptq": "gptq",
    "gptq_marlin_24": "gptq",
    "fbgemm_fp8": "fp8",
    "fp8_per_tensor": "fp8",
    "fp8_per_block": "fp8",
    "fp8_per_channel": "fp8",
    "modelopt_mxfp8": "fp8",
    "gpt_oss_mxfp4": "mxfp4",
    "ptpc_fp8": "fp8",
}


#: The GPTQ weight widths vLLM loads (``vllm/model_executor/layers/quantization/gptq.py::GPTQConfig.__init__``:
#: "Currently, only 2/3/4/8-bit weight quantization is supported for GPTQ"); another ``bits`` (0, negative, a
#: 400-digit number in a pull request's config.json) is priced as 4-bit and said so.
GPTQ_BITS = (2, 3, 4, 8)
#: The largest quantization group read as a group (a larger one, or 0 and -1, is priced as per-channel, g4096);
#: a 400-digit group size made ``2 / g`` raise OverflowError.
MAX_GROUP_SIZE = 1 << 20


def linear_bytes_per_param(method: str, qc: dict[str, Any] | None, dtype_bytes: int) -> tuple[float, str]:
    """Bytes per quantized linear-weight element for ``method`` (docs/engine-memory-model.md §1.13 table).

    awq: ``0.5 + 2/g + 0.5/g`` (4-bit qweight, fp16 scales and 4-bit zeros per group g); gptq b-bit:
    ``b/8 + 2/g + b/8/g``; fp8: 1 (+ ``4/(bs0*bs1)`` for block scales ``weight_block_size``);
    compressed-tensors: ``num_bits/8`` + scales (fp8 per 16 for NVFP4, 2/g for int groups); mxfp4 /
    modelopt_fp4: ``0.5 + 1/32`` resp. ``0.5 + 1/16``; bitsandbytes: 8-bit 1, 4-bit ``0.5 + 4/64``
    (``+1/64`` with double quant); experts_int8: 1. Unknown methods: ``dtype_bytes`` (unquantized).
    Returns ``(bytes_per_param, label)``.
    """
    qc = qc or {}
    m = _QUANT_ALIASES.get(method, method)
    if m == "awq":
        g = _i(qc.get("group_size") or qc.get("q_group_size"), 128)
        g = g if g > 0 else 4096
        return 0.5 + 2 / g + 0.5 / g, f"awq 4-bit g{g}"
    if m == "gptq":
        raw_b, raw_g = qc.get("bits"), qc.get("group_size")
        b = _i(raw_b, 4)
        g = _i(raw_g, 128)
        g = g if 0 < g <= MAX_GROUP_SIZE and not _past_int64(raw_g) else 4096
        if b not in GPTQ_BITS or _past_int64(raw_b):
            # vLLM refuses to load it; a hostile -8 or 10**400 must not price the weights
            shown = str(raw_b if _past_int64(raw_b) else b)[:20]
            return (
                0.5 + 2 / g + 0.5 / g,
                f"gptq {4}-bit g{g} (bits {shown} is no width vLLM loads; 4 assumed)",
            )
        return b / 8 + 2 / g + b / 8 / g, f"gptq {b}-bit g{g}"
    if m in ("fp8", "modelopt"):
        bs = qc.get("weight_block_size")
        if isinstance(bs, list) and len(bs) == 2 and _i(bs[0]) and _i(bs[1]):
            return 1 + 4 / (_i(bs[0]) * _i(bs[1])), f"fp8 block {bs[0]}x{bs[1]}"
        quant = qc.get("quantization")
        algo = str(quant.get("quant_algo") or "") if m == "modelopt" and isinstance(quant, dict) else ""
        return 1.0, f"fp8{' (ModelOpt ' + algo + ')' if algo else ''}"
    if m in ("modelopt_fp4", "nvfp4"):
        return 0.5 + 1 / 16, "nvfp4 (fp8 scale per 16)"
    if m == "mxfp4":
        return 0.5 + 1 / 32, "mxfp4 (e8m0 scale per 32)"
    if m == "experts_int8":
        return 1.0, "int8"
    if m == "bitsandbytes":
        if qc.get("load_in_8bit") or qc.get("_load_in_8bit"):
            return 1.0, "bitsandbytes 8-bit"
        dq = bool(qc.get("bnb_4bit_use_double_quant"))
        return (0.5 + 1 / 64 + 4 / (64 * 256)) if dq else 0.5 + 4 / 64, "bitsandbytes 4-bit"
    if m == "compressed-tensors":
        groups = qc.get("config_groups") or {}
        for grp in groups.values() if isinstance(groups, dict) else []:
            # a group or its weights that is not a mapping (a hand-written config.json) reads as 8-bit
            w = grp.get("weights") if isinstance(grp, dict) else None
            w = w if isinstance(w, dict) else {}
            bits = _i(w.get("num_bits"), 8)
            gs = _i(w.get("group_size"))
            kind = str(w.get("type") or "int")
            scale = 0.0
            if gs:
                scale = (1 / gs) if (kind == "float" and bits == 4) else 2 / gs
            return bits / 8 + scale, f"compressed-tensors {kind}{bits}" + (f" g{gs}" if gs else "")
        return 1.0, "compressed-tensors (no config_groups; 8-bit assumed)"
    return float(dtype_bytes), f"unknown quantization '{method}' (counted unquantized)"


def _skip_list(method: str, qc: dict[str, Any]) -> tuple[list[str], str]:
    """The modules a checkpoint keeps unquantized, as the vLLM loader of ``method`` reads them from its
    ``quantization_config`` (or ``hf_quant_config.json``), and the key they came from.

    * ``fp8`` (and aliases): ``ignored_layers``, else ``modules_to_not_convert``
      (``vllm@0.11.0:vllm/model_executor/layers/quantization/fp8.py::Fp8Config.from_config``); ``fbgemm_fp8``:
      ``modules_to_not_convert`` (``fbgemm_fp8.py::FBGEMMFp8Config.from_config``).
    * ``modelopt`` / ``modelopt_fp4``: ``quantization.exclude_modules`` of ``hf_quant_config.json``, else the
      ``ignore`` (current vLLM) or ``exclude_modules`` (0.11.0) beside ``quant_algo`` in config.json
      (``modelopt.py::ModelOptQuantConfigBase.from_config``).
    * ``compressed-tensors``: ``ignore`` (``compressed_tensors.py::CompressedTensorsConfig.from_config``).
    * ``awq``: ``modules_to_not_convert`` (``awq.py::AWQConfig.from_config``).

    Other methods return ``[]`` (MXFP4, whose list names only modules kvlint already keeps); GPTQ ``dynamic`` and
    bitsandbytes ``llm_int8_skip_modules`` are read by :func:`_vllm_named_skips`, which matches vLLM's packed layer
    prefixes.
    """
    m = _QUANT_ALIASES.get(method, method)
    keys: tuple[str, ...] = ()
    if m in ("fp8",) and method != "fbgemm_fp8":
        keys = ("ignored_layers", "modules_to_not_convert")
    elif method == "fbgemm_fp8" or m == "awq":
        keys = ("modules_to_not_convert",)
    elif m in ("modelopt", "modelopt_fp4"):
        nested = qc.get("quantization")
        if isinstance(nested, dict):
            v = nested.get("exclude_modules")
            return ([str(x) for x in v] if isinstance(v, list) else []), "exclude_modules"
        keys = ("ignore", "exclude_modules")
    elif m == "compressed-tensors":
        keys = ("ignore",)
    for k in keys:
        v = qc.get(k)
        if isinstance(v, list) and v:
            return [str(x) for x in v], k
    return [], ""


def _skip_matcher(method: str, skip: list[str], names_count: int = 0, longest: int = 0) -> Any:
    """``name -> bool``: whether vLLM leaves the module ``name`` (full checkpoint prefix) unquantized.
    ``names_count`` and ``longest``: how many names will be tested and the longest, the budget of the
    compressed-tensors ``re:`` entries (:func:`ct_ignore_matcher`).

    Restates, per loader: ``fp8``/``fbgemm_fp8``: exact name, and for a fused-MoE prefix (containing
    ``experts``) any listed name containing ``experts`` that contains the prefix
    (``vllm@0.11.0:vllm/model_executor/layers/quantization/utils/quant_utils.py::is_layer_skipped``);
    ``compressed-tensors``: exact name or, for ``re:``-prefixed entries, ``re.match``
    (``compressed_tensors/utils.py::should_ignore_layer``, ``_is_equal_or_regex_match``); ModelOpt: exact (with
    the same fused-MoE branch), substring (also without a leading ``language_model.``) or ``fnmatch`` wildcard, a trailing ``path*`` split
    into ``path`` and ``path.*`` first (vLLM main ``modelopt.py::ModelOptQuantConfigBase.is_layer_excluded``,
    ``apply_vllm_mapper``); ``awq``: substring (``awq.py::is_layer_skipped_awq``).
    """
    import fnmatch
    import re

    m = _QUANT_ALIASES.get(method, method)
    exact = set(skip)
    experts = [x for x in skip if "experts" in x]

    def listed_inside(name: str) -> bool:
        """is_layer_skipped's fused-MoE branch: a listed name containing ``experts`` contains the prefix."""
        return name.rsplit(".", 1)[-1] == "experts" and any(name in x for x in experts)

    if m == "compressed-tensors":
        return ct_ignore_matcher(skip, names_count, longest)
    if m == "awq":
        return _substring_test(skip)
    if m in ("modelopt", "modelopt_fp4"):
        pats: list[str] = []
        for x in skip:
            if len(x) >= 2 and x.endswith("*") and x[-2] != ".":
                pats += [x[:-1], x[:-1] + ".*"]
            else:
                pats.append(x)

        # the substring test by the listed texts' lengths, and one alternation for the fnmatch test of the patterns
        # holding a wildcard (a pattern without one fnmatch-es only its own text, which the substring test has
        # found): the first MAX_GPTQ_RULES of them, as GPTQ's dynamic rules are bounded (real exports list up to
        # ~150; a config.json of 300,000 entries took 19 CPU s as two alternations of all of them)
        contains = _substring_test(pats)
        wildcards = [p for p in pats if any(c in p for c in "*?[")][:MAX_GPTQ_RULES]
        wild = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in wildcards)) if wildcards else None

        def modelopt(name: str) -> bool:
            bare = name.removeprefix("language_model.")
            return bool(
                contains(name)
                or contains(bare)
                or (wild is not None and wild.match(name))
                or listed_inside(name)
            )

        return modelopt

    def fp8(name: str) -> bool:
        if name.rsplit(".", 1)[-1] == "experts":
            return listed_inside(name)
        return name in exact

    return fp8


def _substring_test(texts: list[str]) -> Callable[[str], bool]:
    """``name -> bool``: whether one of ``texts`` occurs in ``name`` (``any(t in name for t in texts)``, the AWQ and
    ModelOpt skip tests), looked up by the texts' lengths: each slice of ``name`` of a listed length is one set
    lookup, so the cost per name does not grow with the number of texts (a config.json, up to
    :data:`kvlint.models.resolve.MAX_CONFIG_BYTES`, can list 300,000)."""
    listed = set(texts)
    if "" in listed:
        return lambda name: True
    lengths = sorted({len(t) for t in listed})

    def test(name: str) -> bool:
        for n in lengths:
            if n > len(name):
                return False
            if any(name[i : i + n] in listed for i in range(len(name) - n + 1)):
                return True
        return False

    return test


def _layer_prefix(skip: list[str]) -> str:
    """The text before ``layers.N.`` in the skip list (``model.``, ``model.language_model.``,
    ``language_model.model.``, ``backbone.``), which is how this checkpoint names its decoder layers;
    ``model.`` when no entry names a decoder layer (an ``mtp.layers.N`` entry names a speculative layer). **[assumed]**: the skip list and the weights use one naming, as vLLM maps both with the model's
    ``hf_to_vllm_mapper``."""
    import re

    for x in skip:
        hit = re.search(r"(^|[^A-Za-z0-9_])layers\.\d", x)
        if hit:
            pre = x[: hit.start() + len(hit.group(1))]
            if re.fullmatch(r"((model|language_model|backbone|transformer)\.)+", pre):
                return pre
    return "model."


def skipped_params(spec: ModelSpec, method: str, qc: dict[str, Any] | None) -> tuple[int, int, str]:
    """Elements of the linear and routed-expert parts (:func:`param_breakdown`) a quantized checkpoint keeps at
    the model dtype because its ``quantization_config`` lists them as not converted.

    Each quantizable module :func:`_param_breakdown` counts is named as the checkpoint names it
    (``model.layers.3.self_attn.q_proj``) and tested against the list with the loader's own rule
    (:func:`_skip_list`, :func:`_skip_matcher`); a module vLLM fuses (``in_proj_qkvz``) counts as skipped when
    its fused name or every shard is listed. Returns ``(linear elements, expert elements, key)``, key being
    the config key read (``""`` when nothing is skipped).
    """
    m = _QUANT_ALIASES.get(method, method)
    if m in ("gptq", "bitsandbytes"):
        return _vllm_named_skips(spec, m, qc or {})
    skip, key = _skip_list(method, qc or {})
    if not skip:
        return 0, 0, ""
    pre = _layer_prefix(skip)
    sink: list[tuple[str, int, str]] = []
    _param_breakdown(spec, sink)
    match = _skip_matcher(method, skip, len(sink), max((len(pre) + len(n) for n, _k, _p in sink), default=0))
    # compressed-tensors tests only linear layers against ``ignore`` (CompressedTensorsConfig.get_quant_method hands
    # a FusedMoE to CompressedTensorsMoEMethod.get_moe_method without it, vllm@0.11.0)
    experts_tested = m != "compressed-tensors"
    lin = exp = 0
    for name, n, part in sink:
        if part == "experts" and not experts_tested:
            continue
        block, _, leaf = name.rpartition(".")
        fused, *shards = leaf.split("|")
        hit = match(f"{pre}{block}.{fused}") or (
            bool(shards) and all(match(f"{pre}{block}.{s}") for s in shards)
        )
        if hit and part == "experts":
            exp += n
        elif hit:
            lin += n
    return lin, exp, key if lin or exp else ""


#: vLLM's packed modules of Llama-style models (``packed_modules_mapping``: q/k/v -> ``qkv_proj``, gate/up ->
#: ``gate_up_proj``): the layer prefix a quantization config's ``get_quant_method`` is asked about.
_PACKED = {"q_proj": "qkv_proj", "k_proj": "qkv_proj", "v_proj": "qkv_proj", "gate_proj": "gate_up_proj"}
_PACKED["up_proj"] = "gate_up_proj"


def _vllm_modules(spec: ModelSpec, pre: str = "model.") -> list[tuple[str, int, str]]:
    """``(vLLM layer prefix, elements, part)`` of every quantizable module :func:`_param_breakdown` counts: the
    checkpoint name with q/k/v and gate/up under their packed name (``model.layers.3.self_attn.qkv_proj``), a
    module kvlint already counts fused (``in_proj_qkvz``) under that name, routed experts as ``…mlp.experts``.
    **[assumed]**: decoder layers under ``model.`` and Llama-style packing, as vLLM names them for most models."""
    sink: list[tuple[str, int, str]] = []
    _param_breakdown(spec, sink)
    out = []
    for name, n, part in sink:
        block, _, leaf = name.rpartition(".")
        fused, *shards = leaf.split("|")
        out.append((f"{pre}{block}.{fused if shards else _PACKED.get(fused, fused)}", n, part))
    return out


#: At most this many GPTQ ``dynamic`` rules are read (GPTQModel's own configs hold a handful; a config.json, up to
#: :data:`kvlint.models.resolve.MAX_CONFIG_BYTES`, could hold 400,000): beyond it the rules are not read.
MAX_GPTQ_RULES = 1024
#: The longest ``dynamic`` pattern read, in characters.
MAX_GPTQ_PATTERN_CHARS = 1000
#: Backtracking budget of one model's ``dynamic`` rules: the sum over rules of (module names) x C(L + k, k), the
#: positions a pattern with ``k`` repeats can try on a name of ``L`` characters before it fails (a sequence of
#: ``k`` ``.*`` on a 34-character name: C(42, 8) = 1.2e8 steps, 0.3 s of CPython's ``re``). 2e8 is about half a
#: second of matching; a pattern whose cost has no such bound (a repeat inside a repeat, an alternation under a
#: repeat, a back-reference: ``(.*)*Z`` runs for hours on ``model.layers.0.self_attn.qkv_proj``) is not read.
GPTQ_MATCH_BUDGET = 2 * 10**8

_GptqRule = tuple[Any, bool, Any]  # (compiled pattern, is a '-:' rule, overrides)


def ct_ignore_matcher(entries: list[str], names_count: int, longest: int) -> Callable[[str], bool]:
    """``name -> bool``: whether a layer ``name`` matches one of a compressed-tensors ``ignore`` list's ``entries``
    as vLLM tests them: equal, or a ``re:`` entry whose regex ``re.match``-es it (vllm-project/vllm
    vllm/model_executor/layers/quantization/compressed_tensors/utils.py ``should_ignore_layer``,
    ``_is_equal_or_regex_match``; v0.11.0 and v0.34.0).

    The list comes from a checkpoint's config.json, which a pull request can write (a local model path, a
    ``--model-dir``), so its ``re:`` entries are bounded as GPTQ's ``dynamic`` rules are (:func:`_gptq_dynamic`):
    an entry Python's ``re`` cannot compile (vLLM fails on it when it loads the model), longer than
    :data:`MAX_GPTQ_PATTERN_CHARS`, or whose backtracking has no bound (:func:`_repeats`: ``re:(.+)+Z`` runs for
    hours on ``model.layers.1.self_attn.q_proj``) matches nothing here, and so do the entries past
    :data:`MAX_GPTQ_RULES` regexes or past :data:`GPTQ_MATCH_BUDGET` in all, the cost of one entry being
    ``names_count`` x C(``longest`` + k, k) for its ``k`` repeats. Exact entries cost one set lookup."""
    import math
    import re

    exact = {x for x in entries if not x.startswith("re:")}
    regs: list[re.Pattern[str]] = []
    cost = 0
    for x in entries:
        if not x.startswith("re:") or len(x) - 3 > MAX_GPTQ_PATTERN_CHARS or len(regs) >= MAX_GPTQ_RULES:
            continue
        try:
            compiled = re.compile(x[3:])
            k = _repeats(_sre_parse(x[3:]))
        except (re.error, RecursionError, OverflowError):
            continue
        if k is None:
            continue
        cost += max(names_count, 1) * math.comb(longest + k, k)
        if cost > GPTQ_MATCH_BUDGET:
            break
        regs.append(compiled)
    return lambda name: name in exact or any(r.match(name) for r in regs)


def _sre_parse(pattern: str) -> Any:
    import importlib

    try:
        mod = importlib.import_module("re._parser")
    except ImportError:  # Python < 3.11
        mod = importlib.import_module("sre_parse")
    return mod.parse(pattern)


def _repeats(parsed: Any) -> int | None:
    """Repeats of variable length (``*``, ``+``, ``?``, ``{m,n}`` with m < n) in a parsed pattern, or None when
    its backtracking has no polynomial bound kvlint can state: a repeat of more than one whose body holds another
    variable repeat or an alternation, or a back-reference."""
    count = 0
    for op, av in parsed:
        name = str(op)
        if name.startswith("GROUPREF"):
            return None
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, body = av
            inner = _repeats(body)
            if inner is None or (hi != 1 and (inner or _has_branch(body))):
                return None
            count += (lo != hi) + inner
        elif name == "BRANCH":
            for alt in av[1]:
                inner = _repeats(alt)
                if inner is None:
                    return None
                count += inner
        elif name in ("SUBPATTERN", "ASSERT", "ASSERT_NOT", "ATOMIC_GROUP"):
            inner = _repeats(av if name == "ATOMIC_GROUP" else av[-1])
            if inner is None:
                return None
            count += inner
    return count


def _has_branch(parsed: Any) -> bool:
    """Whether a parsed pattern holds an alternation, outside any repeat of its own (those :func:`_repeats`
    refuses already)."""
    for op, av in parsed:
        name = str(op)
        if name == "BRANCH":
            return True
        if name in ("SUBPATTERN", "ASSERT", "ASSERT_NOT") and _has_branch(av[-1]):
            return True
        if name == "ATOMIC_GROUP" and _has_branch(av):
            return True
    return False


def _gptq_dynamic(qc: dict[str, Any], spec: ModelSpec) -> tuple[list[_GptqRule], str]:
    """GPTQModel's ``dynamic`` rules in file order, compiled, ``(pattern, negative, overrides)``, and ``""``; or
    ``[]`` and why they were not read. ``[]`` and ``""`` when absent or malformed. A pattern Python's ``re``
    cannot compile is skipped (vLLM would fail to load).

    The rules come from a checkpoint's config.json, which a pull request can write (a local model path, a
    ``--model-dir``), so they are bounded before they are matched against ``names`` (vLLM's layer prefixes):
    at most :data:`MAX_GPTQ_RULES` rules of :data:`MAX_GPTQ_PATTERN_CHARS` characters, no pattern whose
    backtracking is unbounded (:func:`_repeats`), and :data:`GPTQ_MATCH_BUDGET` in all (``spec``'s module names,
    :func:`_vllm_modules`, give the budget's name count and length). The first matching rule
    decides, so one rule not read leaves all of them unread: the modules are priced at the checkpoint's own
    ``bits`` and ``group_size``, and the weights line says why."""
    import math
    import re

    dyn = qc.get("dynamic")
    if not isinstance(dyn, dict) or not dyn:
        return [], ""
    if len(dyn) > MAX_GPTQ_RULES:
        return [], f"GPTQ dynamic not read: {len(dyn):,} rules (kvlint reads up to {MAX_GPTQ_RULES:,})"
    names = [name for name, _n, _part in _vllm_modules(spec)]
    longest = max((len(n) for n in names), default=0)
    cost = 0
    out: list[_GptqRule] = []
    for key, over in dyn.items():
        pattern = str(key)
        neg = pattern.startswith("-:")
        body = pattern[2:] if neg or pattern.startswith("+:") else pattern
        if len(body) > MAX_GPTQ_PATTERN_CHARS:
            return (
                [],
                f"GPTQ dynamic not read: a pattern of {len(body):,} characters (kvlint reads up to {MAX_GPTQ_PATTERN_CHARS:,})",
            )
        try:
            compiled = re.compile(body)
            k = _repeats(_sre_parse(body))
        except (re.error, RecursionError, OverflowError):
            continue
        if k is None:
            return (
                [],
                "GPTQ dynamic not read: a pattern with nested repeats or back-references, whose matching time has no bound",
            )
        cost += len(names) * math.comb(longest + k, k)
        if cost > GPTQ_MATCH_BUDGET:
            return [], "GPTQ dynamic not read: its patterns' repeats exceed kvlint's matching budget"
        out.append((compiled, neg, over))
    return out, ""


def _gptq_rule(rules: list[_GptqRule], name: str) -> Any:
    """vLLM's ``get_dynamic_override(config, name)``: the first rule whose regex ``re.match``-es ``name`` decides;
    a ``-:`` rule returns False (the module is left unquantized), a ``+:`` or bare rule its override dict; None when
    no rule matches."""
    for compiled, neg, over in rules:
        if compiled.match(name):
            return False if neg else (over if isinstance(over, dict) else {})
    return None


def _bnb_skipped(name: str, skip: set[str]) -> bool:
    """vLLM's ``is_layer_skipped_bnb``: a listed name equals one dot-separated component of the prefix, or one of
    its leading paths (``model.layers.1.mlp`` for ``model.layers.1.mlp.gate_up_proj``). ``skip`` is a set, so a
    list of any length costs one lookup per component and path of ``name``."""
    parts = name.split(".")
    return any(x in skip for x in parts) or any(".".join(parts[: i + 1]) in skip for i in range(len(parts)))


def _vllm_named_skips(spec: ModelSpec, m: str, qc: dict[str, Any]) -> tuple[int, int, str]:
    """:func:`skipped_params` for the loaders that test vLLM's own layer prefixes.

    * ``gptq`` (and ``gptq_marlin``): ``dynamic``; a module whose first matching rule is a ``-:`` rule is built with
      ``UnquantizedLinearMethod`` (linear) or ``UnquantizedFusedMoEMethod`` (routed experts)
      (vllm-project/vllm@02239f5e ``vllm/model_executor/layers/quantization/utils/gptq_utils.py::get_dynamic_override``,
      ``::get_linear_quant_method``; ``gptq_marlin.py::get_moe_quant_method``; vLLM >= 0.7.2).
    * ``bitsandbytes``: ``llm_int8_skip_modules`` with ``is_layer_skipped_bnb``, linear layers only (a fused MoE
      always gets ``BitsAndBytesMoEMethod``) (``vllm/model_executor/layers/quantization/bitsandbytes.py::
      BitsAndBytesConfig.get_quant_method``).
    """
    if m == "gptq":
        rules, _why = _gptq_dynamic(qc, spec)
        if not any(neg for _p, neg, _o in rules):
            return 0, 0, ""

        def kept(name: str, part: str) -> bool:
            return _gptq_rule(rules, name) is False

        key = "dynamic"
    else:
        raw = qc.get("llm_int8_skip_modules")
        skip = {str(x) for x in raw} if isinstance(raw, list) else set()
        if not skip:
            return 0, 0, ""

        def kept(name: str, part: str) -> bool:
            return part != "experts" and _bnb_skipped(name, skip)

        key = "llm_int8_skip_modules"
    lin = exp = 0
    for name, n, part in _vllm_modules(spec):
        if kept(name, part):
            if part == "experts":
                exp += n
            else:
                lin += n
    return lin, exp, key if lin or exp else ""


@per_model
def _gptq_overrides(spec: ModelSpec) -> tuple[tuple[float, str, int], ...]:
    """GPTQ ``dynamic`` positive rules of the checkpoint that change a module's ``bits`` or ``group_size``
    (vLLM ``override_config``): ``(bytes per element, label, elements)`` per distinct override, the modules
    whose first matching rule is that positive rule. Memoised per model."""
    qc = spec.quant_config or {}
    rules, _why = _gptq_dynamic(qc, spec)
    if not rules:
        return ()
    base_bits, base_g = _i(qc.get("bits"), 4), _i(qc.get("group_size"), 128)
    acc: dict[tuple[int, int], int] = {}
    for name, n, _part in _vllm_modules(spec):
        over = _gptq_rule(rules, name)
        if not isinstance(over, dict):
            continue
        bits = over.get("bits", base_bits)
        g = over.get("group_size", base_g)
        bits = bits if isinstance(bits, int) and not isinstance(bits, bool) else base_bits
        g = g if isinstance(g, int) and not isinstance(g, bool) else base_g
        if (bits, g) != (base_bits, base_g):
            acc[(bits, g)] = acc.get((bits, g), 0) + n
    out = []
    for (bits, g), n in acc.items():
        rate, label = linear_bytes_per_param("gptq", {"bits": bits, "group_size": g}, 2)
        out.append((rate, label, n))
    return tuple(out)


@per_model
def _gptq_unread(spec: ModelSpec) -> str:
    """Why the checkpoint's GPTQ ``dynamic`` rules were not read (:func:`_gptq_dynamic`), or ""."""
    qc = spec.quant_config or {}
    return _gptq_dynamic(qc, spec)[1]


@per_model
def _checkpoint_skipped(spec: ModelSpec, method: str) -> tuple[int, int, str]:
    """:func:`skipped_params` of the checkpoint's own ``quant_config``, memoised per model (the fleet plans one
    model on GPUs of several compute capabilities, each a separate :func:`_weight_bytes` entry)."""
    return skipped_params(spec, method, spec.quant_config)


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


def _mxfp4_expert_padding(
    spec: ModelSpec, tp: int = 1, compute_capability: str | None = None, backend: str | None = None
) -> float:
    """Growth factor of MXFP4 routed-expert storage from vLLM's kernel padding, per tensor-parallel rank.

    ``vllm@0.10.1.1``/``vllm@0.14.1:vllm/model_executor/layers/quantization/mxfp4.py::Mxfp4MoEMethod.create_weights``
    allocates the fused-MoE weights padded for the backend it picked:

    * GPUs without native MXFP4 (compute capability < 9.0, e.g. A100, L40S: ``_should_use_marlin`` / backend
      ``MARLIN``): the weight-only Marlin kernel needs ``n % 256 == 0`` and ``k % 128 == 0``, so ``hidden_size`` is
      rounded up to 256 and the intermediate size *per partition* to 128; ``prepare_moe_fp4_layer_for_marlin``
      repacks the 4-bit weights and returns the e8m0 scales to one byte (``mxfp4_marlin_process_scales``), so the
      byte rate stays 0.5 + 1/32 on the padded shape. gpt-oss-120b at TP 4 (hidden 2880 -> 3072, 720 -> 768 per
      rank): 17.1 GiB per rank, vLLM printed 17.22 GiB (gt-215, 0.10.1.1 on A100 80GB); unpadded 16.1.
    * Hopper and newer: ``hidden_size`` rounded to 256 and the intermediate size per partition to 64, which
      loads 64.5 GiB (gpt-oss-120b) and 13.4 GiB (20b) at TP 1, matching the 64.38 and 13.47 GiB vLLM printed
      (gt-008, gt-052) where the unpadded count gave 60.7/12.8.
    * ``backend="marlin"``: Marlin's padding on any GPU. Hopper and Blackwell take Marlin too when neither a
      FlashInfer MXFP4 backend nor the Triton one is available: ``vllm@0.11.0:vllm/model_executor/layers/
      quantization/mxfp4.py::get_mxfp4_backend`` returns ``MARLIN`` when the compute capability is below 9, or
      the optional ``triton_kernels`` module is missing (``vllm/utils/__init__.py::has_triton_kernels``; not a
      dependency of the 0.11.0 wheel, nor is FlashInfer outside the ``flashinfer`` extra), or torch is older than
      2.8; 0.11.1 adds ``VLLM_MXFP4_USE_MARLIN=1`` to that test and takes Marlin for every LoRA-enabled MXFP4
      model (``get_mxfp4_backend_with_lora``). gpt-oss-120b on an H100 then loads 65.84 GiB (intermediate 2880 ->
      2944), where vLLM printed 65.97 GiB under Marlin (vllm-project/vllm#23278). kvlint cannot see an install's
      optional packages, so the caller names the backend (:class:`kvlint.memory.vllm.VllmSettings`
      ``mxfp4_backend``).

    * FlashInfer's backends (``backend`` from :func:`kvlint.memory.vllm.mxfp4_moe_backend`), padded as
      ``vllm@0.21.0:vllm/model_executor/layers/fused_moe/oracle/mxfp4.py::
      mxfp4_round_up_hidden_size_and_intermediate_size`` (0.11.1 - 0.18.x: the same branches inline in
      ``quantization/mxfp4.py::Mxfp4MoEMethod.create_weights``): ``"flashinfer-trtllm"`` (TRT-LLM, Blackwell
      SM100) rounds hidden and the intermediate size per partition to 256, ``"flashinfer-trtllm-i128"`` the
      intermediate size to 128 only (from 0.27.0), ``"flashinfer-cutlass"`` (CUTLASS: SM90 with
      ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1``, consumer Blackwell SM120) both to 128. gpt-oss-120b at TP 1 on a B200
      (2,880 -> 3,072 twice): 13.8 % over the unpadded experts where the SM90 rule (intermediate to 64) gave 6.7 %.

    Returns 1.0 for non-MoE configs.
    """
    h = int(spec.hidden_size or 0)
    inter = int(spec.moe_intermediate_size or spec.intermediate_size or 0)
    if not spec.num_experts or h <= 0 or inter <= 0:
        return 1.0
    part = max(1, inter // max(1, tp))
    if backend in _MXFP4_FLASHINFER_PADDING:
        h_align, i_align = _MXFP4_FLASHINFER_PADDING[backend]
        return (_round_up(h, h_align) * _round_up(part, i_align)) / (h * part)
    cc = None
    if compute_capability:
        try:
            cc = tuple(int(x) for x in str(compute_capability).split(".")[:2])
        except ValueError:
            cc = None
    align = 128 if backend == "marlin" or (cc is not None and cc < (9, 0)) else 64
    return (_round_up(h, 256) * _round_up(part, align)) / (h * part)


#: (hidden, intermediate-per-partition) alignment of FlashInfer's MXFP4 MoE backends in vLLM
#: (``oracle/mxfp4.py::mxfp4_round_up_hidden_size_and_intermediate_size``; ``TRTLLM_BACKENDS`` 256/256 up to
#: 0.26.x, intermediate 128 from 0.27.0; ``FLASHINFER_CUTLASS_MXFP4_BF16``/``_MXFP8`` 128/128 in every release).
_MXFP4_FLASHINFER_PADDING: dict[str, tuple[int, int]] = {
    "flashinfer-trtllm": (256, 256),
    "flashinfer-trtllm-i128": (256, 128),
    "flashinfer-cutlass": (128, 128),
}
_MXFP4_TRTLLM = ("flashinfer-trtllm", "flashinfer-trtllm-i128")
_MXFP4_PADDED_LABEL = {
    "marlin": " (Marlin-padded)",
    "flashinfer-trtllm": " (FlashInfer TRT-LLM-padded)",
    "flashinfer-trtllm-i128": " (FlashInfer TRT-LLM-padded)",
    "flashinfer-cutlass": " (FlashInfer CUTLASS-padded)",
}


#: vLLM releases whose Hopper MXFP4 experts take the Triton backend's swizzled layout by default, and how the
#: bundled ``triton_kernels`` pads it: ``"triton"`` (0.12.0 - 0.16.x: ``HopperMXValueLayout.swizzle_data`` pads
#: only to its MMA tiles) or ``"triton-pad64"`` (0.17.0 - 0.20.x: it first pads both byte dimensions to 64).
#: Read in the release wheels (``vllm/third_party/triton_kernels``, bundled from 0.12.0; 0.11.x has none, so a
#: plain install takes Marlin there). 0.21.0 rewrote the backend choice (``oracle/mxfp4.py::
#: _get_priority_backends_for_gpt_oss``: TRT-LLM, which needs SM100, then ROCm's AITER, then Triton on
#: 9.0 <= capability < 11.0) but bundles 0.20.x's ``triton_kernels`` and converts as 0.20.x did; 0.22.0 bundles an
#: older ``HopperMXValueLayout`` without the pre-pad to 64 (``tensor_details/layout_details/hopper_value.py``)
#: and its conversion only interleaves w13's halves (same bytes); 0.25.0 changed the Triton conversion again:
#: not read, so 0.25.0 and later keep :func:`_mxfp4_expert_padding`.
MXFP4_TRITON_RELEASES: tuple[tuple[tuple[int, int, int], tuple[int, int, int], str], ...] = (
    ((0, 12, 0), (0, 17, 0), "triton"),
    ((0, 17, 0), (0, 22, 0), "triton-pad64"),
    ((0, 22, 0), (0, 25, 0), "triton"),
)


def _mxfp4_triton_hopper_rate(spec: ModelSpec, tp: int, pre_pad_64: bool) -> float | None:
    """Bytes per routed-expert parameter of MXFP4 experts as vLLM's Triton backend holds them on Hopper.

    ``vllm@0.19.0:vllm/model_executor/layers/quantization/mxfp4.py::Mxfp4MoEMethod`` (``create_weights``,
    ``process_weights_after_loading``) with ``fused_moe/oracle/mxfp4.py::convert_to_mxfp4_moe_kernel_format``
    (0.12.0 - 0.18.x: the same steps inline in ``Mxfp4MoEMethod.process_weights_after_loading``), per layer and
    rank, E experts, H the hidden size, I the intermediate size per partition rounded up to 64
    (``mxfp4_round_up_hidden_size_and_intermediate_size``; H is not rounded for this backend):

    * loaded: w13 ``[E, 2I, H/2]`` and w2 ``[E, H, I/2]`` uint8 (two e2m1 values a byte), their e8m0 scales
      ``[E, 2I, H/32]`` and ``[E, H, I/32]``, biases ``[E, 2I]`` and ``[E, H]`` bf16;
    * ``quantization/utils/mxfp4_utils.py::_swizzle_mxfp4`` re-lays each weight and scale, transposed, with
      ``triton_kernels``' Hopper layouts (``tensor_details/layout_details/hopper_value.py::
      HopperMXValueLayout.swizzle_data``: the ``[E, 2I, H/2]`` bytes padded to 16 x 32, after 0.17.0 - 0.20.x's
      pre-pad of both to 64; ``hopper_scale.py::HopperMXScaleLayout.swizzle_data``: rows padded to
      2 x num_warps x 2 x 8 = 256 at the default 8 warps, columns to 2), then ``del layer.w13_weight`` /
      ``w2_weight`` frees the loaded weights but not the loaded scales, which stay registered on the layer beside
      the swizzled ones (``w13_precision_config``);
    * the biases are converted to float32.

    "Model loading took" is the allocated memory after all this (``DeviceMemoryProfiler``). gpt-oss-20b at TP 2
    (I 1,440 -> 1,472, H 2,880) then holds 5.28 GiB of experts per rank where one MXFP4 copy of the padded shape
    is 5.16 GiB: vLLM 0.19.0 printed 7.01 GiB of weights on an H100 (gt-369).

    Returns None when the experts are not gated ``E x 3 x H x I`` matrices in whole layers (the layout is then
    not read) or the shapes are missing.
    """
    h = int(spec.hidden_size or 0)
    inter = int(spec.moe_intermediate_size or spec.intermediate_size or 0)
    e = int(spec.num_experts or 0)
    if e <= 0 or h <= 0 or inter <= 0 or tp <= 0:
        return None
    experts = param_breakdown(spec)["experts"]
    per_layer = e * 3 * h * inter
    if experts <= 0 or experts % per_layer:
        return None
    layers = experts // per_layer
    i_p = _round_up(max(1, inter // tp), 64)

    def value(rows: int, cols: int) -> int:  # bytes of one expert's [rows, cols] uint8 matrix once swizzled
        if pre_pad_64:
            rows, cols = _round_up(rows, 64), _round_up(cols, 64)
        return _round_up(rows, 16) * _round_up(cols, 32)

    def scale(rows: int, cols: int) -> int:  # one expert's [rows, cols] e8m0 scales once swizzled
        return _round_up(rows, 256) * _round_up(cols, 2)

    h_half, h_blk, i_half, i_blk = -(-h // 2), -(-h // 32), -(-i_p // 2), -(-i_p // 32)
    swizzled = value(2 * i_p, h_half) + value(h, i_half) + scale(2 * i_p, h_blk) + scale(h, i_blk)
    loaded_scales = 2 * i_p * h_blk + h * i_blk
    biases_fp32 = (2 * i_p + h) * 4
    rank_bytes = layers * e * (swizzled + loaded_scales + biases_fp32)
    return rank_bytes * tp / experts


def weight_bytes(
    spec: ModelSpec,
    *,
    dtype_bytes: int,
    quantization: str | None = None,
    tp: int = 1,
    compute_capability: str | None = None,
    mxfp4_backend: str | None = None,
) -> tuple[int, str]:
    """Bytes of all model weights (whole model, before dividing by TP/PP), and where the figure comes from.

    Args:
        spec: the model.
        dtype_bytes: activation/parameter dtype in effect (2 for bf16/fp16, 4 for fp32) — the dtype
            vLLM resolved from ``--dtype`` (§1.7); unquantized parts are stored at this width.
        quantization: vLLM ``--quantization`` value, or None (the checkpoint's ``quant_method`` applies).
        tp, compute_capability: tensor-parallel size and GPU, for the MXFP4 kernel padding
            (:func:`_mxfp4_expert_padding`); the result is still the whole model's bytes at that padding.
        mxfp4_backend: ``"marlin"`` when vLLM's MXFP4 MoE backend is known to be Marlin on a GPU that would
            otherwise take another; ``"triton"``/``"triton-pad64"`` for the Triton backend's Hopper layout of the
            releases in :data:`MXFP4_TRITON_RELEASES` (:func:`_mxfp4_triton_hopper_rate`); a FlashInfer backend of
            :data:`_MXFP4_FLASHINFER_PADDING` for its padding; None: the kernel padding chosen by compute
            capability (:func:`_mxfp4_expert_padding`). :func:`kvlint.memory.vllm.mxfp4_moe_backend` names it.

    Returns:
        ``(bytes, source)``. The checkpoint size (``spec.weight_bytes``) is used when known and no load-time
        conversion applies; an unquantized checkpoint loaded at another dtype is scaled by the dtype ratio;
        otherwise the bytes are estimated from :func:`param_breakdown` with the §1.13 byte rates, keeping
        embeddings, lm_head, norms, routers and vision tower at ``dtype_bytes``, and also the linear modules the
        checkpoint's quantization config lists as not converted (:func:`skipped_params`)
        (e.g. ``"estimated: 8.03e9 params x 2 B (bfloat16)"``).

    Memoised per model (:func:`kvlint.memory.memo.per_model`): a fleet plans the same model on each GPU.
    """
    return _weight_bytes(spec, dtype_bytes, quantization, tp, compute_capability, mxfp4_backend)


def _online_method(spec: ModelSpec, quantization: str | None) -> str | None:
    """The method of an online conversion: ``quantization`` (the ``--quantization`` flag, lower case, through
    :data:`_QUANT_ALIASES`) on a checkpoint without a quantization method of its own; None when the flag is unset or
    the checkpoint is quantized (its own method is what loads)."""
    q = (quantization or "").lower()
    if not q or spec.quant_method:
        return None
    return _QUANT_ALIASES.get(q, q)


@per_model
def _weight_bytes(
    spec: ModelSpec,
    dtype_bytes: int,
    quantization: str | None,
    tp: int,
    compute_capability: str | None,
    mxfp4_backend: str | None = None,
) -> tuple[int, str]:
    """:func:`weight_bytes` itself, with positional arguments."""
    ck_method = spec.quant_method
    # e.g. --quantization fp8 on a bf16 checkpoint (online dynamic fp8)
    online = _online_method(spec, quantization)
    ck_dtype_bytes = dtype_bytes_of(spec.torch_dtype, 2)
    dname = {1: "fp8", 2: "bf16/fp16", 4: "float32"}.get(dtype_bytes, f"{dtype_bytes}-byte")
    if spec.torch_dtype and dtype_bytes_of(spec.torch_dtype, 0) == dtype_bytes:
        dname = spec.torch_dtype

    if spec.weight_bytes and not online:
        src = spec.weight_bytes_source or "checkpoint size"
        if not ck_method and dtype_bytes != ck_dtype_bytes:
            scaled = spec.weight_bytes * dtype_bytes // ck_dtype_bytes
            return scaled, f"{src}, scaled {ck_dtype_bytes} B -> {dtype_bytes} B per parameter for --dtype"
        return spec.weight_bytes, src

    parts = param_breakdown(spec)
    total_params = sum(parts.values())
    method = online or ck_method
    if not method:
        return total_params * dtype_bytes, f"estimated: {total_params:.3g} params x {dtype_bytes} B ({dname})"
    qc = spec.quant_config if not online else {}
    if online == "bitsandbytes":
        qc = {"load_in_4bit": True}  # vLLM in-flight bitsandbytes quantizes to 4-bit
    rate, label = linear_bytes_per_param(method, qc, dtype_bytes)
    # DeepSeek V4 with fp4 experts: fp8 block linears, MXFP4 routed experts (priced apart, below)
    v4_fp4 = not online and _deepseek_v4_fp4_experts(spec, method)
    n_mx = parts["experts"] if v4_fp4 else 0
    triton_rate = None
    if _QUANT_ALIASES.get(method, method) == "mxfp4" and mxfp4_backend in ("triton", "triton-pad64"):
        triton_rate = _mxfp4_triton_hopper_rate(spec, tp, mxfp4_backend == "triton-pad64")
    if triton_rate is not None:
        quantized = parts["experts"]
        kept = parts["linear"] + parts["embed"] + parts["other"] + parts["vision"]
        rate, label = (
            triton_rate,
            "mxfp4 in the Triton backend's Hopper layout, loaded scales and fp32 biases",
        )
        what = "expert"
    elif _QUANT_ALIASES.get(method, method) == "mxfp4":
        quantized = int(parts["experts"] * _mxfp4_expert_padding(spec, tp, compute_capability, mxfp4_backend))
        kept = parts["linear"] + parts["embed"] + parts["other"] + parts["vision"]
        what = "expert" + _MXFP4_PADDED_LABEL.get(mxfp4_backend or "", "")
    else:
        quantized = parts["linear"] + parts["experts"] - n_mx
        kept = parts["embed"] + parts["other"] + parts["vision"]
        what = "linear"
    skipped = ""
    if not online:
        lin_kept, exp_kept, key = _checkpoint_skipped(spec, method)
        if lin_kept or exp_kept:
            if v4_fp4:
                quantized -= lin_kept
                n_mx -= exp_kept
            else:
                quantized -= lin_kept + exp_kept
            kept += lin_kept + exp_kept
            skipped = f", {lin_kept + exp_kept:.3g} of them left unquantized by {key}"
    over_bytes = 0.0
    if not online and _QUANT_ALIASES.get(method, method) == "gptq":
        for o_rate, o_label, n in _gptq_overrides(spec):
            quantized -= n
            over_bytes += n * o_rate
            skipped += f", {n:.3g} of them at {o_label} ({o_rate:.3f} B) by dynamic"
        unread = _gptq_unread(spec)
        if unread:
            skipped += f"; {unread}"
    mx_bytes = 0.0
    mx_label = ""
    if v4_fp4:
        mx_rate, mx_name = linear_bytes_per_param("mxfp4", None, dtype_bytes)
        # DeepSeek V4 has its own order (``oracle/mxfp4.py::select_deepseek_v4_mxfp4_moe_backend``: TRT-LLM MXFP8
        # first on SM100, no CUTLASS or Triton step): only Marlin's and TRT-LLM's padding carry over
        v4_backend = mxfp4_backend if mxfp4_backend in ("marlin", *_MXFP4_TRTLLM) else None
        mx_bytes = n_mx * _mxfp4_expert_padding(spec, tp, compute_capability, v4_backend) * mx_rate
        mx_label = f" + {n_mx:.3g} routed-expert params x {mx_rate:.3f} B ({mx_name}, expert_dtype fp4)"
    total = int(quantized * rate + kept * dtype_bytes + mx_bytes + over_bytes)
    how = "online " if online else ""
    return total, (
        f"estimated: {quantized:.3g} {what} params x {rate:.3f} B ({how}{label}){mx_label} + {kept:.3g} "
        f"embedding/other params x {dtype_bytes} B ({dname}{skipped})"
    )


def _deepseek_v4_fp4_experts(spec: ModelSpec, method: str) -> bool:
    """Whether vLLM stores this checkpoint's routed experts as MXFP4 while its linears are fp8 blocks.

    A ``deepseek_v4`` model with ``quant_method: fp8`` is loaded with ``DeepseekV4FP8Config``
    (``override_quantization_method`` -> ``deepseek_v4_fp8``), whose ``get_quant_method`` returns
    ``Mxfp4MoEMethod`` for every fused-MoE layer when the config's ``expert_dtype`` is ``"fp4"`` (its default when
    the key is missing; DeepSeek-V4-Flash/-Pro) and ``Fp8MoEMethod`` for ``"fp8"`` (Flash-Base); the other layers
    stay ``Fp8Config``'s (vllm-project/vllm@023da1fc vllm/model_executor/models/deepseek_v4.py::DeepseekV4FP8Config,
    ``expert_dtype``, ``get_quant_method``). MXFP4 stores 4-bit values with one e8m0 scale per 32
    (:func:`linear_bytes_per_param`), padded as :func:`_mxfp4_expert_padding`. A quantization config with
    ``config_groups`` or ``quant_algo`` (compressed-tensors, ModelOpt exports written under ``quant_method: fp8``)
    is not the plain fp8 block config this override reads and is left to its own method."""
    if not spec.model_type.startswith("deepseek_v4") or method not in ("fp8", "deepseek_v4_fp8"):
        return False
    qc = spec.quant_config or {}
    if "config_groups" in qc or "quant_algo" in qc:
        return False
    t = spec.text_config or spec.config or {}
    expert_dtype = t.get("expert_dtype", (spec.config or {}).get("expert_dtype", "fp4"))
    return str(expert_dtype).lower() == "fp4" and bool(spec.num_experts)


def _kept_flags(
    spec: ModelSpec, method: str, qc: dict[str, Any], sink: list[tuple[str, int, str]]
) -> list[bool]:
    """Per module of :func:`_param_breakdown`'s ``sink`` (same order; the caller's, already filled): whether the
    checkpoint's quantization config keeps it unquantized, by the loader rules :func:`skipped_params` applies (the
    same matchers, one flag each)."""
    m = _QUANT_ALIASES.get(method, method)
    if m == "gptq":
        rules, _why = _gptq_dynamic(qc, spec)
        return [_gptq_rule(rules, name) is False for name, _n, _p in _vllm_modules(spec)]
    if m == "bitsandbytes":
        raw = qc.get("llm_int8_skip_modules")
        bnb = {str(x) for x in raw} if isinstance(raw, list) else set()
        return [p != "experts" and _bnb_skipped(name, bnb) for name, _n, p in _vllm_modules(spec)]
    skip, _key = _skip_list(method, qc)
    if not skip:
        return [False] * len(sink)
    pre = _layer_prefix(skip)
    match = _skip_matcher(method, skip, len(sink), max((len(pre) + len(n) for n, _k, _p in sink), default=0))
    flags = []
    for name, _n, part in sink:
        if part == "experts" and m == "compressed-tensors":
            flags.append(False)
            continue
        block, _, leaf = name.rpartition(".")
        fused, *shards = leaf.split("|")
        flags.append(
            bool(
                match(f"{pre}{block}.{fused}")
                or (bool(shards) and all(match(f"{pre}{block}.{s}") for s in shards))
            )
        )
    return flags


def _priced_linears(
    spec: ModelSpec, dtype_bytes: int, quantization: str | None
) -> tuple[list[tuple[str, int, str]], list[bool], float, list[tuple[str, int]]]:
    """``(modules, kept, rate, unquantized)``: the model's modules as :func:`_param_breakdown` lists them, whether
    the checkpoint keeps each unquantized (:func:`_kept_flags`), the bytes per element of a quantized linear (the
    checkpoint's method, or ``quantization`` for an online conversion; ``dtype_bytes`` unquantized and for MXFP4,
    whose experts only are packed) and the modules :func:`_param_breakdown` lists as never quantized (routers)."""
    ck_method = spec.quant_method
    online = _online_method(spec, quantization)
    method = online or ck_method
    qc: dict[str, Any] = {} if online else dict(spec.quant_config or {})
    if online == "bitsandbytes":
        qc = {"load_in_4bit": True}
    rate = float(dtype_bytes)
    if method and _QUANT_ALIASES.get(method, method) != "mxfp4":
        rate = linear_bytes_per_param(method, qc, dtype_bytes)[0]
    sink: list[tuple[str, int, str]] = []
    unq: list[tuple[str, int]] = []
    _param_breakdown(spec, sink, unq)
    kept = _kept_flags(spec, method, qc, sink) if method and not online else [False] * len(sink)
    return sink, kept, rate, unq


#: The dense MLP's projections of a decoder layer as :func:`_param_breakdown` names them (``layers.{i}.mlp.<leaf>``,
#: not a MoE block's ``shared_experts``/``shared_expert`` nor the experts)
_DENSE_MLP_LEAVES = frozenset({"gate_proj", "up_proj", "down_proj"})


def dense_mlp_layer_bytes(
    spec: ModelSpec, *, dtype_bytes: int, quantization: str | None = None
) -> tuple[int, ...]:
    """Bytes of each decoder layer's dense MLP (``gate_proj``/``up_proj``/``down_proj`` directly under
    ``layers.{i}.mlp``; 0 for a MoE layer, whose shared experts and experts are not counted), whole (all ranks),
    priced as :func:`weight_bytes` prices the model's linears (the checkpoint's method, or ``quantization`` for an
    online conversion; a module the checkpoint keeps unquantized at ``dtype_bytes``). One entry per decoder layer,
    in order; which layers are dense follows :func:`_param_breakdown` (``first_k_dense_replace``/``moe_layer_freq``,
    ``decoder_sparse_step``/``mlp_only_layers``, ...). For SGLang's ``--moe-dense-tp-size 1``, which builds these
    modules whole on every TP rank (:func:`kvlint.memory.sglang.moe_dense_whole_bytes`)."""
    return _dense_mlp_layer_bytes(spec, dtype_bytes, quantization)


@per_model
def _dense_mlp_layer_bytes(spec: ModelSpec, dtype_bytes: int, quantization: str | None) -> tuple[int, ...]:
    """:func:`dense_mlp_layer_bytes` itself, with positional arguments."""
    sink, kept, rate, _unq = _priced_linears(spec, dtype_bytes, quantization)
    per = [0.0] * len(spec.layers)
    for (name, n, part), keep in zip(sink, kept, strict=True):
        bits = name.split(".")
        if part != "linear" or len(bits) != 4 or bits[0] != "layers" or bits[2] != "mlp":
            continue
        if bits[3] not in _DENSE_MLP_LEAVES or not bits[1].isdigit() or int(bits[1]) >= len(per):
            continue
        per[int(bits[1])] += n * (dtype_bytes if keep else rate)
    return tuple(int(b) for b in per)


def decoder_layer_bytes(
    spec: ModelSpec, *, dtype_bytes: int, quantization: str | None = None
) -> tuple[tuple[int, int], ...]:
    """Each decoder layer's ``(linear bytes, routed-expert bytes)``, whole (all ranks), priced as
    :func:`dense_mlp_layer_bytes` prices them (a module the checkpoint keeps unquantized at ``dtype_bytes``); one
    entry per decoder layer, in order. The layers of one model differ: a DeepSeek / GLM MoE model's first
    ``first_k_dense_replace`` layers hold a dense MLP and no experts (``vllm@0.17.0:vllm/model_executor/models/
    glm4_moe.py::Glm4MoeDecoderLayer``: ``Glm4MoE`` only where ``layer_idx >= config.first_k_dense_replace``), a
    Qwen-MoE model's ``mlp_only_layers``, Llama 4's non-interleaved layers, a NAS model's narrower FFNs. vLLM builds
    only a pipeline stage's own layers on its rank (``vllm/model_executor/models/utils.py::make_layers``, the range
    of ``get_pp_indices``), so a stage holds the bytes of those layers, not ``1/pp`` of the whole: GLM-4.7's 89 MoE
    layers are 3.1 % above its per-layer mean (gt-282). Routed experts are priced at their own rate where the
    checkpoint packs them apart from the other linears (MXFP4 experts beside bf16 attention, DeepSeek V4's fp4
    experts beside fp8 blocks: :func:`weight_bytes`' ``0.5 + 1/32`` B per element, without the kernels' padding), so
    that a layer's linear and expert bytes add up to its bytes. Modules outside the decoder layers (embedding, LM
    head, towers) are not listed."""
    return _decoder_layer_bytes(spec, dtype_bytes, quantization)


def _expert_rate(spec: ModelSpec, dtype_bytes: int, quantization: str | None, rate: float) -> float:
    """Bytes per routed-expert element as :func:`weight_bytes` prices them before padding: MXFP4's ``0.5 + 1/32``
    for an MXFP4 checkpoint (or ``--quantization mxfp4`` on an unquantized one) and for DeepSeek V4's fp4 experts
    (:func:`_deepseek_v4_fp4_experts`), else ``rate``, the other linears' (:func:`_priced_linears`)."""
    online = _online_method(spec, quantization)
    method = online or spec.quant_method
    if not method:
        return rate
    if _QUANT_ALIASES.get(method, method) == "mxfp4" or (
        not online and _deepseek_v4_fp4_experts(spec, method)
    ):
        return linear_bytes_per_param("mxfp4", None, dtype_bytes)[0]
    return rate


@per_model
def _decoder_layer_bytes(
    spec: ModelSpec, dtype_bytes: int, quantization: str | None
) -> tuple[tuple[int, int], ...]:
    """:func:`decoder_layer_bytes` itself, with positional arguments."""
    sink, kept, rate, _unq = _priced_linears(spec, dtype_bytes, quantization)
    exp_rate = _expert_rate(spec, dtype_bytes, quantization, rate)
    lin = [0.0] * len(spec.layers)
    exp = [0.0] * len(spec.layers)
    for (name, n, part), keep in zip(sink, kept, strict=True):
        bits = name.split(".")
        if len(bits) < 3 or bits[0] != "layers" or not bits[1].isdigit() or int(bits[1]) >= len(lin):
            continue
        if part == "experts":
            exp[int(bits[1])] += n * (dtype_bytes if keep else exp_rate)
        else:
            lin[int(bits[1])] += n * (dtype_bytes if keep else rate)
    return tuple((int(a), int(b)) for a, b in zip(lin, exp, strict=True))


#: Quantizable modules vLLM builds whole on every tensor-parallel rank (``ReplicatedLinear`` or ``disable_tp=True``),
#: by their checkpoint leaf name under ``self_attn``: MLA's ``q_a_proj`` and ``kv_a_proj_with_mqa`` (fused into the
#: replicated ``fused_qkv_a_proj`` when ``q_lora_rank`` is set) and the DSA indexer's ``wq_b`` and ``wk``
#: (vllm@002d6073 vllm/model_executor/models/deepseek_v2.py::DeepseekV2MLAAttention, ``DeepSeekV2FusedQkvAProjLinear``,
#: ``Indexer``).
_REPLICATED_LEAVES = ("self_attn.q_a_proj", "self_attn.kv_a_proj_with_mqa", "indexer.wq_b", "indexer.wk")


def tp_replicated_bytes(
    spec: ModelSpec,
    *,
    dtype_bytes: int,
    quantization: str | None = None,
    tp: int = 1,
    replicate_kv: bool = True,
    attn_tp: int | None = None,
) -> tuple[int, str]:
    """Bytes each tensor-parallel rank holds beyond an even ``1/tp`` share of the whole model's weights, summed
    over all decoder layers (a pipeline stage holds its layers' share), and what they are.

    vLLM shards most linear layers over TP but keeps some whole on every rank:

    * MLA ``q_a_proj`` + ``kv_a_proj_with_mqa`` (one replicated ``fused_qkv_a_proj`` when ``q_lora_rank`` is set,
      else a ``ReplicatedLinear``) and the DeepSeek-sparse-attention indexer's ``wq_b`` (``ReplicatedLinear``) and
      ``wk`` + ``weights_proj`` (``disable_tp=True``), quantized like the checkpoint's other linears unless its list
      keeps them (vllm@002d6073 vllm/model_executor/models/deepseek_v2.py::DeepseekV2MLAAttention, ``Indexer``);
    * MoE routers, at the activation dtype (``GateLinear`` in deepseek_v2.py above; ``self.gate = ReplicatedLinear(
      hidden_size, num_experts, quant_config=None)`` in vllm@002456df vllm/model_executor/models/qwen3_moe.py::
      Qwen3MoeSparseMoeBlock; **[assumed]** the same for the other MoE families, whose routers kvlint counts alike);
    * attention K/V projections when the model has fewer KV heads than ``tp``: every rank keeps
      ``max(1, K // tp)`` heads, so each holds one whole head (vllm@002456df qwen3_moe.py::Qwen3MoeAttention, "we
      replicate the KV heads across multiple tensor parallel GPUs"; ``QKVParallelLinear``'s
      ``num_kv_head_replicas``);
    * the Whisper-style audio encoder and its projector (:func:`audio_params`, at the activation dtype): vLLM builds
      them from transformers' ``Qwen2AudioEncoder`` / ``Qwen2_5OmniAudioEncoder`` and plain ``nn.Linear``
      projectors, no tensor-parallel layers (``vllm@0.34.0:vllm/model_executor/models/qwen2_audio.py``,
      ``qwen2_5_omni_thinker.py``), so every rank holds all of it. A pipeline stage holds the towers whole or not
      at all (:func:`kvlint.memory.vllm.pipeline_towers` takes this term out of the stages' layer share).

    A replicated module of ``B`` bytes adds ``B x (1 - 1/tp)`` per rank; a K/V projection of ``B`` bytes over ``K``
    heads adds ``B x (1/K - 1/tp)``. Byte rates per element as :func:`weight_bytes` prices the model (the
    checkpoint's method, or ``quantization`` for an online conversion). Returns ``(0, "")`` at ``tp`` 1.
    ``replicate_kv=False`` leaves the K/V heads out, for an engine that refuses K/V heads it cannot split evenly
    rather than replicating them (TGI: ``num_key_value_heads must be divisible by num_shards``).

    ``attn_tp``: the attention layers' own tensor-parallel size when smaller than ``tp`` (SGLang's DP attention,
    ``attn_tp_size = tp / dp``): the attention projections (q/k/v/o, MLA ``q_b_proj`` / ``kv_b_proj`` / ``o_proj``)
    are split over ``attn_tp`` ranks (``QKVParallelLinear`` / ``RowParallelLinear`` with ``parallel_group="attn_tp"``,
    sglang@0.5.23 models/qwen3_moe.py::Qwen3MoeAttention; ``attn_tp_size`` in models/deepseek_v2.py), so a module of
    ``B`` bytes adds ``B x (1/attn_tp - 1/tp)``, and K/V heads fewer than ``attn_tp`` are kept whole per head
    (``max(1, K // attn_tp)``): ``B x (1/min(K, attn_tp) - 1/tp)``. The caller passes it only for a model whose
    attention SGLang builds over that group (:func:`kvlint.memory.sglang.attention_over_attn_tp`; Llama, Qwen2 and
    the other ``LlamaAttention``-style models keep their projections over the whole TP group).
    """
    return _tp_replicated_bytes(spec, dtype_bytes, quantization, tp, replicate_kv, attn_tp or tp)


@per_model
def _tp_replicated_bytes(
    spec: ModelSpec,
    dtype_bytes: int,
    quantization: str | None,
    tp: int,
    replicate_kv: bool = True,
    attn_tp: int = 0,
) -> tuple[int, str]:
    """:func:`tp_replicated_bytes` itself, with positional arguments (``attn_tp`` 0: ``tp``)."""
    attn_tp = max(1, min(attn_tp or tp, tp))
    if tp <= 1:
        return 0, ""
    sink, kept, rate, unq = _priced_linears(spec, dtype_bytes, quantization)
    share = 1 - 1 / tp
    step3 = (
        spec.model_type == "step3_text" and _i((spec.text_config or spec.config or {}).get("share_q_dim")) > 0
    )
    whole = 0.0
    kv = 0.0
    attn = 0.0  # attention projections split over attn_tp < tp (SGLang DP attention)
    attn_kinds = ("full", "sliding", "chunked", "cross")
    kv_heads = {i: lay.kv_heads for i, lay in enumerate(spec.layers) if lay.kind in attn_kinds}
    for (name, n, part), keep in zip(sink, kept, strict=True):
        if part != "linear":
            continue
        b = n * (dtype_bytes if keep else rate)
        if name.endswith(_REPLICATED_LEAVES) or (step3 and name.endswith(".self_attn.q_proj")):
            # Step 3's q_proj is the low-rank query inside the ReplicatedLinear qkv_proj (its k/v one KV head,
            # replicated below as any head fewer than TP)
            whole += b
        elif replicate_kv and name.endswith((".k_proj", ".v_proj")):
            i = _i(name.split(".")[1], -1)
            K = kv_heads.get(i, 0)
            if 0 < K < attn_tp:
                kv += b * (1 / K - 1 / tp)
            elif attn_tp < tp:
                attn += b * (1 / attn_tp - 1 / tp)
        elif attn_tp < tp and ".self_attn." in name:
            attn += b * (1 / attn_tp - 1 / tp)
    routers = sum(n for _name, n in unq) * dtype_bytes
    audio = audio_params(spec.config or {}, spec.hidden_size) * dtype_bytes
    total = int((whole + routers + audio) * share + kv + attn)
    if not total:
        return 0, ""
    what = []
    if audio:
        what.append(f"audio encoder {audio / 2**30:.2f} GiB")
    if attn:
        what.append(f"attention split over {attn_tp} of {tp} ranks +{attn / 2**30:.2f} GiB")
    if whole:
        what.append(
            f"{'the low-rank query of qkv_proj' if step3 else 'MLA/indexer projections'} {whole / 2**30:.2f} GiB"
        )
    if routers:
        what.append(f"routers {routers / 2**30:.2f} GiB")
    if kv:
        what.append(f"K/V heads replicated to {attn_tp} ranks +{kv / 2**30:.2f} GiB")
    return (
        total,
        f"{'held beyond an even share' if attn else 'replicated'} on every TP rank: {', '.join(what)} "
        f"(+{total / 2**30:.2f} GiB per rank over 1/{tp})",
    )
