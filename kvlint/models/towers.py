"""The encoder towers beside a model's language model in its ``config.json`` (vision, audio, speech), as vLLM
finds them: the sub-configs both the config reader (:mod:`kvlint.models.config`) and the weight count
(:mod:`kvlint.models.weights`) read, kept apart so that neither imports the other for them."""

from __future__ import annotations

from typing import Any

#: The encoder configs beside the text model's (the config reader checks their sizes too, through :func:`tower_configs`:
#: 86 of the catalogue's, the fixtures' and the shared corpus's configs have one; all pass)
TOWER_CONFIGS = ("vision_config", "audio_config", "encoder_config", "speech_config", "vision_tower_config")


def tower_configs(config: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(where, sub-config)`` of the encoder towers beside the language model (:data:`TOWER_CONFIGS`): at the top
    level, or inside ``thinker_config`` for Qwen2.5-Omni (its thinker holds the audio and vision encoders vLLM
    builds; the talker and token2wav are not loaded: ``vllm@0.34.0:vllm/model_executor/models/
    qwen2_5_omni_thinker.py`` maps their weights to None)."""
    out: list[tuple[str, dict[str, Any]]] = []
    thinker = config.get("thinker_config")
    for where, d in (("", config), ("thinker_config.", thinker if isinstance(thinker, dict) else {})):
        for tower in TOWER_CONFIGS:
            sub = d.get(tower)
            if isinstance(sub, dict):
                out.append((f"{where}{tower}", sub))
    return out


def tower_config(config: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``name`` tower sub-config (``vision_config``, ``audio_config``) of the model vLLM builds: the top-level one,
    else the one inside ``thinker_config`` (Qwen2.5-Omni, :func:`tower_configs`); {} when there is none."""
    sub = config.get(name)
    thinker = config.get("thinker_config")
    if not isinstance(sub, dict) and isinstance(thinker, dict):
        sub = thinker.get(name)
    return sub if isinstance(sub, dict) else {}


#: Audio encoders whose parameters :func:`kvlint.models.weights.audio_params` counts, by their ``model_type``:
#: the Whisper-style encoders of Qwen2-Audio (``Qwen2AudioEncoder``) and Qwen2.5-Omni's thinker
#: (``Qwen2_5OmniAudioEncoder``), Gemma 4's Conformer (``Gemma4AudioModel``) and Gemma 3n's USM Conformer
#: (``Gemma3nAudioEncoder``), all built by transformers' classes in vLLM.
COUNTED_AUDIO_ENCODERS = frozenset(
    {"qwen2_audio_encoder", "qwen2_5_omni_audio_encoder", "gemma4_audio", "gemma3n_audio"}
)
