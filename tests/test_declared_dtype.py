"""One reader of the dtype a config.json declares (:func:`kvlint.models.config.declared_dtype`): the memory model
(:func:`kvlint.models.config.parse_config`) and the catalogue's name-derived AWQ builds
(:func:`kvlint.models.catalogue.derive_quantized`, which says "torch_dtype float16 assumed instead of the base's
X") read it the same way. The catalogue had its own loop that looked at the top level and ``text_config`` only,
so a base whose dtype sits in ``llm_config`` (InternVL) or ``vision_config`` read as "none declared" there and as
bfloat16 in the plan."""

from __future__ import annotations

import json

import pytest

from kvlint.models import catalogue
from kvlint.models.catalogue import DATA_DIR
from kvlint.models.config import declared_dtype, parse_config

_LLAMA_TEXT = {
    "model_type": "llama",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
    "max_position_embeddings": 8192,
}


@pytest.mark.parametrize(
    ("config", "dtype"),
    [
        ({**_LLAMA_TEXT, "torch_dtype": "torch.bfloat16"}, "bfloat16"),
        ({**_LLAMA_TEXT, "dtype": "float16", "torch_dtype": "float32"}, "float16"),
        (
            {"model_type": "internvl_chat", "llm_config": {**_LLAMA_TEXT, "torch_dtype": "bfloat16"}},
            "bfloat16",
        ),
        (
            {"model_type": "llava", "text_config": _LLAMA_TEXT, "vision_config": {"torch_dtype": "float16"}},
            "float16",
        ),
        (dict(_LLAMA_TEXT), None),
    ],
)
def test_declared_dtype_is_what_the_memory_model_reads(config: dict, dtype: str | None) -> None:
    assert declared_dtype(config) == dtype
    assert parse_config(config, model_id="example/model", source="test").torch_dtype == dtype


def test_catalogue_has_no_reader_of_its_own() -> None:
    assert not hasattr(catalogue, "_config_dtype")


def test_every_catalogued_config_reads_one_dtype() -> None:
    paths = sorted(DATA_DIR.rglob("config.json"))
    assert len(paths) > 100
    for path in paths:
        config = json.loads(path.read_text(encoding="utf-8"))
        try:
            spec = parse_config(config, model_id=path.parent.name, source=str(path))
        except ValueError:
            continue  # refused as not a decoder LLM kvlint sizes: no plan reads its dtype
        assert spec.torch_dtype == declared_dtype(config), path
