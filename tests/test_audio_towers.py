"""Audio towers and Qwen2.5-Omni's thinker (kvlint.models.weights.audio_params, kvlint.models.config.text_config_of).

vLLM serves Qwen2.5-Omni as its thinker only: the text model of ``thinker_config.text_config`` (what transformers'
``Qwen2_5OmniConfig.get_text_config`` returns and vLLM reads as ``hf_text_config``), with the thinker's audio encoder
and Qwen2.5-VL vision transformer; the talker and token2wav weights are dropped on load
(``vllm@0.34.0:vllm/model_executor/models/qwen2_5_omni_thinker.py``). kvlint refused such a config ("no usable
num_hidden_layers ... correct config.json"), and counted no audio encoder's parameters at all (Qwen2-Audio's
Whisper-large-v3 encoder: 0.64 B parameters, 1.2 GiB in bf16, missing from the estimate)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kvlint.models import resolve_model
from kvlint.models.config import parse_config
from kvlint.models.weights import _qwen2_5_vl_vision_params, audio_params, param_breakdown

#: Whisper-large-v3's encoder sizes (openai/whisper-large-v3 config.json: d_model 1280, encoder_layers 32,
#: encoder_ffn_dim 5120, num_mel_bins 128, max_source_positions 1500), the encoder Qwen2-Audio and Qwen2.5-Omni build on.
WHISPER_LARGE_V3_ENCODER = {
    "d_model": 1280,
    "encoder_layers": 32,
    "encoder_attention_heads": 20,
    "encoder_ffn_dim": 5120,
    "num_mel_bins": 128,
    "max_source_positions": 1500,
}


def _omni_layout() -> dict[str, Any]:
    """A config in the layout transformers writes for ``Qwen2_5OmniConfig`` (``thinker_config`` holding
    ``text_config``, ``audio_config`` and ``vision_config``, beside ``talker_config``), with the widths of the
    catalogued Qwen2.5-VL-7B (whose vision transformer the thinker uses) and Whisper-large-v3's encoder: a layout for
    kvlint to read, not Qwen2.5-Omni-7B's own config.json, which no readable source holds."""
    vl = copy.deepcopy(resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False).config or {})
    text = {k: v for k, v in vl.items() if k not in ("vision_config", "architectures", "rope_scaling")}
    text["model_type"] = "qwen2_5_omni_text"
    vision = {**vl["vision_config"], "model_type": "qwen2_5_omni_vision_encoder"}
    audio = {
        **WHISPER_LARGE_V3_ENCODER,
        "model_type": "qwen2_5_omni_audio_encoder",
        "output_dim": text["hidden_size"],
    }
    return {
        "architectures": ["Qwen2_5OmniModel"],
        "model_type": "qwen2_5_omni",
        "thinker_config": {
            "model_type": "qwen2_5_omni_thinker",
            "text_config": text,
            "audio_config": audio,
            "vision_config": vision,
        },
        "talker_config": {"model_type": "qwen2_5_omni_talker", "hidden_size": 896, "num_hidden_layers": 24},
    }


def test_qwen2_5_omni_is_sized_from_its_thinker() -> None:
    cfg = _omni_layout()
    spec = parse_config(cfg, model_id="Qwen/Qwen2.5-Omni-7B", source="test")
    text = cfg["thinker_config"]["text_config"]
    assert (spec.num_layers, spec.num_kv_heads, spec.hidden_size) == (
        text["num_hidden_layers"],
        text["num_key_value_heads"],
        text["hidden_size"],
    )
    assert "decoder dimensions read from 'thinker_config.text_config' (multimodal checkpoint)" in spec.notes
    assert not [n for n in spec.notes if "audio encoder" in n]
    # both thinker towers count (the talker does not: vLLM does not load it)
    towers = _qwen2_5_vl_vision_params(cfg["thinker_config"]["vision_config"]) + audio_params(
        cfg, text["hidden_size"]
    )
    assert param_breakdown(spec)["vision"] == towers
    # the text model is vLLM's Qwen2ForCausalLM: q/k/v biases as Qwen2.5-VL's, same parameter count
    vl = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    assert param_breakdown(spec)["linear"] == param_breakdown(vl)["linear"]


def test_whisper_large_v3_encoder_count_matches_the_published_sizes() -> None:
    """Published totals (the Whisper table of Intel/whisper-small-openvino's model card, commit 060a009 on
    huggingface.co): distil-large-v3 (Whisper-large-v3's 32-layer encoder, 2 decoder layers) 756 M, large-v3-turbo
    (the same encoder, 4 decoder layers) 809 M. So two decoder layers are 53 M and the encoder is
    756 M - 53 M - the decoder's token (51,866 x 1,280) and position (448 x 1,280) tables and final LayerNorm,
    636.0 M, each figure rounded to 1 M."""
    cfg = {"audio_config": {**WHISPER_LARGE_V3_ENCODER, "model_type": "qwen2_audio_encoder"}}
    text_hidden = 3584
    encoder = audio_params(cfg, text_hidden) - (1280 * text_hidden + text_hidden)  # without the projector
    published = (756 - 53) * 10**6 - 51_866 * 1280 - 448 * 1280 - 2 * 1280
    assert abs(encoder - published) < 2 * 10**6


def test_qwen2_audio_counts_its_encoder_and_projector() -> None:
    base = resolve_model("Qwen/Qwen2.5-7B-Instruct", allow_hub=False)
    text = {**(base.config or {}), "model_type": "qwen2"}
    cfg = {
        "architectures": ["Qwen2AudioForConditionalGeneration"],
        "model_type": "qwen2_audio",
        "text_config": text,
        "audio_config": {**WHISPER_LARGE_V3_ENCODER, "model_type": "qwen2_audio_encoder"},
    }
    spec = parse_config(cfg, model_id="Qwen/Qwen2-Audio-7B-Instruct", source="test")
    assert not [n for n in spec.notes if "audio encoder" in n]
    assert param_breakdown(spec)["vision"] == audio_params(cfg, spec.hidden_size) > 0.63e9
    # vLLM's Qwen2AudioMultiModalProjector: a biased d_model -> text hidden linear
    h = spec.hidden_size
    assert audio_params(cfg, h + 1) - audio_params(cfg, h) == WHISPER_LARGE_V3_ENCODER["d_model"] + 1


def test_an_audio_encoder_kvlint_has_no_formula_for_is_named() -> None:
    # an audio encoder without a formula (here Voxtral's model_type on Gemma 4 E2B's config): not counted, and said
    base = resolve_model("google/gemma-4-E2B-it", allow_hub=False)
    cfg = {
        **(base.config or {}),
        "audio_config": {**(base.config or {})["audio_config"], "model_type": "voxtral_encoder"},
    }
    spec = parse_config(cfg, model_id="test/voxtral-like", source="test")
    (note,) = [n for n in spec.notes if "audio encoder" in n]
    assert note.startswith(
        "audio_config (model_type 'voxtral_encoder'): this audio encoder's parameters are not"
    )


def test_gemma4_conformer_audio_encoder_is_counted() -> None:
    """Gemma 4 E2B's audio tower (transformers' Gemma4AudioModel, built by vLLM's gemma4_mm.py with AutoModel, and
    vLLM's Gemma4MultimodalEmbedder), from its config (hidden 1,024, 12 layers, 8 heads, conv channels 128 and 32,
    kernel 5, output_proj_dims 1,536; text hidden 1,536): subsampling 9 x 128 + 128 + 9 x 128 x 32 + 32 + 32 x 32 x
    1,024 = 1,086,752; a layer 2 x (8 d^2 + 2 d) + (5 d^2 + 128) + (3 d^2 + 5 d + 2 d) + 3 d = 25,180,288; output_proj
    1,024 x 1,536 + 1,536; the embedder 1,536 x 1,536: 307,183,904 parameters, 0.57 GiB in bf16, which kvlint left
    out (a note said so)."""
    spec = resolve_model("google/gemma-4-E2B-it", allow_hub=False)
    assert not [n for n in spec.notes if "audio encoder" in n]
    assert audio_params(spec.config or {}, spec.hidden_size) == 307_183_904
    assert param_breakdown(spec)["vision"] > 307_183_904  # with the vision tower


@pytest.mark.parametrize("key", ["encoder_layers", "encoder_ffn_dim", "output_dim"])
def test_absurd_audio_encoder_sizes_are_refused(key: str) -> None:
    cfg = _omni_layout()
    cfg["thinker_config"]["audio_config"][key] = 1e30
    with pytest.raises(ValueError, match=f"config.json thinker_config.audio_config.{key} is 1e"):
        parse_config(cfg, model_id="Qwen/Qwen2.5-Omni-7B", source="test")


def test_qwen2_5_omni_encoder_profile_is_said_to_be_unmodelled() -> None:
    """The thinker's towers make the model multimodal for vLLM's profile; kvlint does not model the Omni profile's
    items (image, video and audio) and says so rather than planning no encoder pass in silence."""
    from kvlint.memory.multimodal import encoder_profile, is_multimodal

    spec = parse_config(_omni_layout(), model_id="Qwen/Qwen2.5-Omni-7B", source="test")
    assert is_multimodal(spec)
    profile, notes = encoder_profile(
        spec,
        era="v1",
        max_num_seqs=256,
        max_num_batched_tokens=2048,
        max_model_len=8192,
        chunked_prefill=True,
        tp=1,
        dtype_bytes=2,
    )
    assert profile is None
    assert "qwen2_5_omni: vision tower without a fixed image size; encoder profiling not modelled" in notes


#: Qwen2-Audio-7B-Instruct's config.json as published: the audio encoder's sizes are written out, the text_config only
#: what differs from transformers' Qwen2Config defaults (transformers writes a sub-config's diff). The layout as
#: replicated, key for key, by public projects reading that file (e.g. a Rust port's test "Minimal replica of the
#: pinned config.json (whose text_config omits most geometry; the upstream defaults apply)", and model-unfolding
#: test fixtures named QWEN2_AUDIO_SPARSE_CONFIG for Qwen/Qwen2-Audio-7B).
QWEN2_AUDIO_PUBLISHED_LAYOUT: dict[str, Any] = {
    "architectures": ["Qwen2AudioForConditionalGeneration"],
    "model_type": "qwen2_audio",
    "audio_token_index": 151646,
    "audio_config": {
        "model_type": "qwen2_audio_encoder",
        "num_mel_bins": 128,
        "encoder_layers": 32,
        "encoder_attention_heads": 20,
        "encoder_ffn_dim": 5120,
        "d_model": 1280,
        "activation_function": "gelu",
        "scale_embedding": False,
        "max_source_positions": 1500,
    },
    "text_config": {
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "intermediate_size": 11008,
        "max_position_embeddings": 8192,
        "model_type": "qwen2",
        "rms_norm_eps": 1e-05,
        "rope_theta": 10000,
        "sliding_window": 32768,
        "torch_dtype": "bfloat16",
        "use_mrope": False,
        "vocab_size": 156032,
    },
    "torch_dtype": "bfloat16",
}


def test_qwen2_audio_published_config_is_sized_with_qwen2config_defaults() -> None:
    """Qwen2AudioConfig builds its text model as ``CONFIG_MAPPING["qwen2"](**text_config)`` (transformers 4.57.1
    ``models/qwen2_audio/configuration_qwen2_audio.py``), so the keys the saved text_config leaves out are
    Qwen2Config's class defaults (``models/qwen2/configuration_qwen2.py``) when vLLM reads it: 32 layers of width
    4096, 32 attention heads and 32 KV heads (a 7B model of Qwen-7B's shape), no sliding window. kvlint refused the
    published config ("no usable num_hidden_layers"), so the audio encoder it counts was never counted for it."""
    cfg = copy.deepcopy(QWEN2_AUDIO_PUBLISHED_LAYOUT)
    spec = parse_config(cfg, model_id="Qwen/Qwen2-Audio-7B-Instruct", source="test")
    assert (spec.num_layers, spec.hidden_size, spec.num_kv_heads) == (32, 4096, 32)
    assert spec.max_position_embeddings == 8192
    assert all(layer.kind == "full" for layer in spec.layers)
    (note,) = [n for n in spec.notes if "Qwen2Config defaults" in n]
    assert "hidden_size" in note and "num_key_value_heads" in note and "intermediate_size" not in note
    parts = param_breakdown(spec)
    assert parts["vision"] == audio_params(cfg, 4096) > 0.63e9
    # the text model: the stored intermediate_size and vocab_size, the defaults for the rest
    text = {**cfg["text_config"], "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}
    text["num_key_value_heads"] = 32
    full = parse_config({**text, "architectures": ["Qwen2ForCausalLM"]}, model_id="t", source="test")
    assert parts["linear"] == param_breakdown(full)["linear"]


@pytest.mark.parametrize(
    ("limits", "skip", "said"),
    [(None, False, True), ('{"audio": 0}', False, False), (None, True, False)],
)
def test_an_audio_only_model_says_its_encoder_profile_is_not_modelled(
    limits: str | None, skip: bool, said: bool
) -> None:
    """vLLM's V1 profile run passes dummy audio clips through Qwen2-Audio's encoder and holds their embeddings in the
    encoder cache during the dummy forward (``vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::profile_run``,
    ``gpu/mm/encoder_runner.py::profile_encoder_cache``) unless ``--skip-mm-profiling`` or an audio limit of 0.
    kvlint does not model that pass; for a model with an audio tower and no vision tower it said nothing at all."""
    from kvlint.memory.multimodal import parse_mm_limits
    from kvlint.memory.vllm import VllmSettings, plan_vllm

    spec = parse_config(
        copy.deepcopy(QWEN2_AUDIO_PUBLISHED_LAYOUT), model_id="Qwen/Qwen2-Audio-7B", source="test"
    )
    settings = VllmSettings(
        version="0.34.0",
        limit_mm_per_prompt=parse_mm_limits(limits) if limits else {},
        skip_mm_profiling=skip,
    )
    plan = plan_vllm(settings, spec, 80 * 2**30, gpu_name="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    notes = [n for n in plan.assumptions if "audio encoder" in n and "profil" in n]
    assert bool(notes) == said, list(plan.assumptions)


def test_the_audio_encoder_is_whole_on_every_tensor_parallel_rank() -> None:
    """vLLM builds Qwen2-Audio's encoder and projector from plain ``nn.Linear`` / ``nn.Conv1d`` modules
    (transformers' ``Qwen2AudioEncoder``; ``Qwen2AudioMultiModalProjector``'s ``nn.Linear``:
    ``vllm@0.34.0:vllm/model_executor/models/qwen2_audio.py``), not tensor-parallel layers, so every TP rank holds all
    of it. kvlint split it over the ranks with the decoder layers: 0.60 GiB per GPU too few at TP 2."""
    from kvlint.memory.vllm import VllmSettings, plan_vllm
    from kvlint.models.weights import tp_replicated_bytes

    cfg = copy.deepcopy(QWEN2_AUDIO_PUBLISHED_LAYOUT)
    spec = parse_config(cfg, model_id="Qwen/Qwen2-Audio-7B-Instruct", source="test")
    tower = audio_params(cfg, spec.hidden_size) * 2  # bf16
    assert tp_replicated_bytes(spec, dtype_bytes=2, tp=1) == (0, "")
    for tp in (2, 4):
        repl, what = tp_replicated_bytes(spec, dtype_bytes=2, tp=tp)
        assert abs(repl - tower * (1 - 1 / tp)) <= 1  # 32 KV heads: no K/V replication here
        assert "audio encoder" in what
    plans = {
        tp: plan_vllm(
            VllmSettings(version="0.34.0", tensor_parallel_size=tp, max_model_len=8192),
            spec,
            80 * 2**30,
            gpu_name="NVIDIA H100 80GB HBM3",
            compute_capability="9.0",
        )
        for tp in (1, 2)
    }
    # at TP 2 a rank holds half of the rest and all of the tower (0.60 GiB more than half of it), give or take the
    # rotary cos/sin cache every rank also holds whole (2 MiB here)
    half = (plans[1].weights_bytes - tower) / 2 + tower
    assert abs(plans[2].weights_bytes - half) < 4 * 2**20


@pytest.mark.parametrize("kind", sorted(["qwen2_audio_encoder", "qwen2_5_omni_audio_encoder"]))
def test_an_audio_config_that_omits_its_sizes_takes_the_encoder_config_defaults(kind: str) -> None:
    """transformers builds ``audio_config`` as ``CONFIG_MAPPING[model_type](**audio_config)``; what it omits is the
    class default of ``Qwen2AudioEncoderConfig`` / ``Qwen2_5OmniAudioEncoderConfig`` (transformers 4.57.1: 32 layers,
    d_model 1280, ffn 5120, 128 mel bins, 1500 positions; Omni's output_dim 3584), Whisper-large-v3's encoder, which
    vLLM then builds. kvlint counted such an encoder as 0 parameters, without a note."""
    text_hidden = 3584
    sizes = {**WHISPER_LARGE_V3_ENCODER, "output_dim": 3584}
    full = audio_params({"audio_config": {**sizes, "model_type": kind}}, text_hidden)
    assert full > 0.63e9
    assert audio_params({"audio_config": {"model_type": kind}}, text_hidden) == full


def _gemma3n_audio_tensors(ac: dict[str, Any], text_hidden: int) -> list[tuple[str, int]]:
    """Every parameter tensor (name, elements) of transformers' ``Gemma3nAudioEncoder`` (4.57.1
    ``models/gemma3n/modeling_gemma3n.py``) and vLLM's ``Gemma3nMultimodalEmbedder`` (``vllm@0.19.0:vllm/
    model_executor/models/gemma3n_mm.py``), module by module as their ``__init__`` build them."""
    d, layers, heads = ac["hidden_size"], ac["conf_num_hidden_layers"], ac["conf_num_attention_heads"]
    (c0, c1), (k0, k1) = ac["sscp_conv_channel_size"], ac["sscp_conv_kernel_size"]
    f = ac["input_feat_size"]
    for (_kh, kw), (_sh, sw) in zip(ac["sscp_conv_kernel_size"], ac["sscp_conv_stride_size"], strict=True):
        f = (f + 1 + 1 - kw) // sw + 1  # pad_f_left = pad_f_right = 1
    out = [
        ("subsample_conv_projection.conv_0.conv.weight", c0 * 1 * k0[0] * k0[1]),
        ("subsample_conv_projection.conv_0.norm.weight", c0),
        ("subsample_conv_projection.conv_1.conv.weight", c1 * c0 * k1[0] * k1[1]),
        ("subsample_conv_projection.conv_1.norm.weight", c1),
        ("subsample_conv_projection.input_proj_linear.weight", d * c1 * f),
    ]
    for i in range(layers):
        p = f"conformer.{i}."
        for ffw in ("ffw_layer_start", "ffw_layer_end"):
            out += [(f"{p}{ffw}.pre_layer_norm.weight", d), (f"{p}{ffw}.ffw_layer_1.weight", 4 * d * d)]
            out += [(f"{p}{ffw}.ffw_layer_2.weight", 4 * d * d), (f"{p}{ffw}.post_layer_norm.weight", d)]
        a = f"{p}attention."
        out += [
            (f"{a}pre_attn_norm.weight", d),
            (f"{a}attn.relative_position_embedding.pos_proj.weight", d * d),
        ]
        out += [(f"{a}attn.per_dim_scale", d // heads)]
        out += [(f"{a}attn.{x}_proj.weight", d * d) for x in "qkv"]
        out += [(f"{a}post.weight", d * d), (f"{a}post_norm.weight", d)]
        c = f"{p}lconv1d."
        out += [(f"{c}pre_layer_norm.weight", d), (f"{c}linear_start.weight", 2 * d * d)]
        out += [
            (f"{c}depthwise_conv1d.weight", d * 1 * ac["conf_conv_kernel_size"]),
            (f"{c}conv_norm.weight", d),
        ]
        out += [(f"{c}linear_end.weight", d * d), (f"{p}norm.weight", d)]
    out += [("embed_audio.embedding.weight", ac["vocab_size"] * d)]
    out += [("embed_audio.hard_embedding_norm.weight", d), ("embed_audio.soft_embedding_norm.weight", d)]
    out += [("embed_audio.embedding_projection.weight", text_hidden * d)]
    return out


_GEMMA3N_AUDIO = {  # Gemma3nAudioConfig's class defaults (transformers 4.57.1), the E2B/E4B checkpoints' sizes
    "model_type": "gemma3n_audio",
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


def test_gemma3n_usm_audio_encoder_is_counted() -> None:
    """Gemma 3n's audio tower (transformers' Gemma3nAudioEncoder, built by vLLM's gemma3n_mm.py with AutoModel under
    ``_mark_tower_model(..., "audio")``, and vLLM's Gemma3nMultimodalEmbedder): at the class defaults, the E2B/E4B
    sizes, and a text hidden of 2,048, 684,694,048 parameters, 1.28 GiB in bf16, which kvlint left out (the config
    reader's note "this audio encoder's parameters are not in kvlint's weight estimate"). Expected: the tensors the
    modules build, listed one by one (:func:`_gemma3n_audio_tensors`); a small config checks every field is read."""
    cfg = {"audio_config": {"model_type": "gemma3n_audio"}, "text_config": {"hidden_size": 2048}}
    want = sum(n for _, n in _gemma3n_audio_tensors(_GEMMA3N_AUDIO, 2048))
    assert audio_params(cfg, 0) == want == 684_694_048
    assert audio_params({"audio_config": _GEMMA3N_AUDIO}, 2048) == want  # the same sizes written out
    small = {
        **_GEMMA3N_AUDIO,
        "hidden_size": 48,
        "conf_num_hidden_layers": 3,
        "conf_num_attention_heads": 4,
        "conf_conv_kernel_size": 7,
        "input_feat_size": 40,
        "vocab_size": 16,
        "sscp_conv_channel_size": [8, 6],
        "sscp_conv_kernel_size": [[3, 5], [2, 3]],
        "sscp_conv_stride_size": [[2, 3], [1, 2]],
    }
    assert audio_params({"audio_config": small}, 64) == sum(n for _, n in _gemma3n_audio_tensors(small, 64))
    # counted, so no longer named as left out
    base = resolve_model("google/gemma-4-E2B-it", allow_hub=False)
    spec = parse_config(
        {**(base.config or {}), "audio_config": dict(_GEMMA3N_AUDIO)},
        model_id="test/gemma3n-audio",
        source="test",
    )
    assert not [n for n in spec.notes if "audio encoder" in n]
