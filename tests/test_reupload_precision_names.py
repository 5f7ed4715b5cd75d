"""The precision a re-upload's assumption states is the weights' precision, not the checkpoint's format name.

``_reupload_precision`` (gpus49) printed ``quant_method`` as the precision. For a compressed-tensors checkpoint under
a plain name (moonshotai/Kimi-K2.5: ``quant_method: compressed-tensors``, its ``config_groups`` weights 4-bit ``int``
in groups of 32) that said "Its weights are assumed the same as moonshotai/Kimi-K2.5's too: compressed-tensors",
a container format that holds int4, int8, fp8 or nvfp4 alike; a ModelOpt checkpoint whose ``quantization_config``
carries ``quant_algo`` but no ``quant_method`` (Qwen/Qwen3-32B-FP8-Static-PerTensor) said "quantized". The expected
words are read from each stored config here, not restated."""

from __future__ import annotations

from typing import Any

import pytest

from kvlint.models.catalogue import load_config, lookup
from kvlint.models.resolve import resolve_model


def _qc(model_id: str) -> dict[str, Any]:
    entry = lookup(model_id)
    assert entry is not None
    config, _ = load_config(entry)
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    qc = config.get("quantization_config") or text.get("quantization_config")  # Kimi-K2.5: in text_config
    assert isinstance(qc, dict)
    return qc


def _note(ref: str, base: str) -> str:
    note = resolve_model(ref, allow_hub=False).notes[0]
    assert f"unchanged re-upload of {base}" in note, note
    return note


def test_a_compressed_tensors_base_names_its_weight_bits_and_type() -> None:
    base = "moonshotai/Kimi-K2.5"
    qc = _qc(base)
    assert qc["quant_method"] == "compressed-tensors"
    (group,) = qc["config_groups"].values()
    w = group["weights"]
    note = _note("someorg/Kimi-K2.5", base)
    said = note.split(f"the same as {base}'s too: ", 1)[1]
    assert said.startswith(f"{w['type']}{w['num_bits']} "), said
    assert "compressed-tensors" in said and f"group size {w['group_size']}" in said


def test_a_modelopt_base_without_quant_method_names_its_algorithm() -> None:
    base = "Qwen/Qwen3-32B-FP8-Static-PerTensor"
    qc = _qc(base)
    assert "quant_method" not in qc and qc["quant_algo"]
    note = _note("someorg/Qwen3-32B-FP8-Static-PerTensor", base)
    assert f"the same as {base}'s too: ModelOpt {qc['quant_algo']} " in note, note


@pytest.mark.parametrize(
    ("ref", "base", "said"),
    [
        # quant_method is the precision itself for these: unchanged
        ("RedHatAI/gpt-oss-20b", "openai/gpt-oss-20b", "mxfp4"),
        ("minimax/MiniMax-M2", "MiniMaxAI/MiniMax-M2", "fp8"),
    ],
)
def test_a_method_that_is_a_precision_is_said_as_before(ref: str, base: str, said: str) -> None:
    assert _qc(base)["quant_method"] == said
    assert f"the same as {base}'s too: {said} (" in _note(ref, base)
