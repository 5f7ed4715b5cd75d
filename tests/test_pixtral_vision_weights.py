"""The Pixtral vision tower and its projector are counted module by module as vLLM builds them
(``vllm@0.19.0:vllm/model_executor/models/pixtral.py::PixtralHFVisionModel``; ``mistral3.py::
Mistral3MultiModalProjector``; ``llava.py::LlavaMultiModalProjector``): a gated MLP of three matrices per block and
a projector of two linears (with Mistral 3's patch merger), where the generic ViT estimate counted two and one.
Checked on the bundled Ministral 3 and Devstral Small 2 configs (complete Pixtral ``vision_config``), each module's
shape written out below from the vLLM source."""

from __future__ import annotations

import copy
import json

from kvlint.models.catalogue import DATA_DIR
from kvlint.models.config import parse_config
from kvlint.models.weights import param_breakdown


def _config(name: str) -> dict:
    return json.loads((DATA_DIR / name / "config.json").read_text())


def _modules(config: dict) -> dict[str, int]:
    """Each module of the tower and projector with its element count, from the vLLM classes' constructors."""
    vc, tc = config["vision_config"], config["text_config"]
    h, inter, layers = vc["hidden_size"], vc["intermediate_size"], vc["num_hidden_layers"]
    t, m = tc["hidden_size"], config.get("spatial_merge_size", 2)
    mods = {
        "patch_conv": vc["num_channels"] * vc["patch_size"] ** 2 * h,
        "ln_pre": h,
        "qkv_proj": layers * h * 3 * h,
        "o_proj": layers * h * h,
        "gate_up_proj": layers * h * 2 * inter,
        "down_proj": layers * inter * h,
        "attention_norm+ffn_norm": layers * 2 * h,
    }
    if config["model_type"] in ("mistral3", "ministral3"):
        mods |= {"norm": h, "merging_layer": h * m * m * h}
    bias = config.get("multimodal_projector_bias", config["model_type"] not in ("mistral3", "ministral3"))
    mods |= {"linear_1": h * t + (t if bias else 0), "linear_2": t * t + (t if bias else 0)}
    return mods


def _vision(config: dict) -> int:
    return param_breakdown(parse_config(config, model_id="m", source="test"))["vision"]


def test_pixtral_towers_of_the_catalogue_are_counted_module_by_module() -> None:
    for name in ("mistralai--Ministral-3-3B-Instruct-2512", "mistralai--Devstral-Small-2-24B-Instruct-2512"):
        config = _config(name)
        assert config["vision_config"]["model_type"] == "pixtral"
        assert _vision(config) == sum(_modules(config).values()), name


def test_a_llava_projector_has_no_patch_merger_and_a_bias_by_default() -> None:
    config = copy.deepcopy(_config("mistralai--Ministral-3-3B-Instruct-2512"))
    config["model_type"] = "llava"
    config.pop("multimodal_projector_bias")
    mods = _modules(config)
    assert "merging_layer" not in mods
    assert _vision(config) == sum(mods.values())


def test_a_tower_without_its_layer_count_is_not_priced() -> None:
    # a vision_config cut before its layer count (as the page the catalogue's Mistral-Small-3.1 config was transcribed
    # from is): nothing to count the blocks by
    config = copy.deepcopy(_config("mistralai--Mistral-Small-3.1-24B-Instruct-2503"))
    del config["vision_config"]["num_hidden_layers"]
    assert _vision(config) == 0


def test_mistral_small_3_1_tower_is_counted_module_by_module() -> None:
    # its vision_config completed from transformers' Mistral3Config defaults (the entry's fidelity note)
    config = _config("mistralai--Mistral-Small-3.1-24B-Instruct-2503")
    assert _vision(config) == sum(_modules(config).values()) > 0


def test_ministral_3_tower_matches_the_model_card() -> None:
    # "Ministral 3 3B consists of two main architectural components: 3.4B Language Model, 0.4B Vision Encoder"
    # (https://huggingface.co/mistralai/Ministral-3-3B-Instruct-2512-BF16, model card); the two-matrix MLP gave 0.31
    vision = _vision(_config("mistralai--Ministral-3-3B-Instruct-2512"))
    assert round(vision / 1e9, 1) == 0.4
