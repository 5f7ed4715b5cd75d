"""A re-upload of a quantized checkpoint says that its precision is assumed too (gpus49).

The re-upload rule (docs/models.md "Close variants") sizes ``org/<name>`` as the one catalogued model of another
publisher with that repository name. Where that model is a quantized checkpoint under a plain name (gpt-oss's MXFP4,
MiniMax-M2's FP8), the copy's weights are taken at the same precision, and publishers differ in how they name
precisions (mistralai's Ministral 3 Instruct checkpoints are FP8 under the plain name, bf16 under ``-BF16``;
unsloth's FP8 builds carry ``-FP8``), so the assumption names the precision, not only the architecture. The three
ids the rule matches in the shared corpus and the collected set (RedHatAI/gpt-oss-20b, RedHatAI/Llama-3.1-8B-Instruct,
OME's minimax/MiniMax-M2) are checked here."""

from __future__ import annotations

import pytest

from kvlint.models.catalogue import load_config, lookup
from kvlint.models.resolve import resolve_model


def _method(model_id: str) -> str:
    entry = lookup(model_id)
    assert entry is not None
    config, _ = load_config(entry)
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else {}
    qc = config.get("quantization_config") or text.get("quantization_config")
    return str(qc["quant_method"]) if qc else ""


@pytest.mark.parametrize(
    ("ref", "base"),
    [("RedHatAI/gpt-oss-20b", "openai/gpt-oss-20b"), ("minimax/MiniMax-M2", "MiniMaxAI/MiniMax-M2")],
)
def test_a_quantized_base_s_precision_is_stated_as_assumed(ref: str, base: str) -> None:
    method = _method(base)
    assert method  # the base is a quantized checkpoint under a plain name
    note = resolve_model(ref, allow_hub=False).notes[0]
    assert note.startswith(f"ASSUMPTION (derived from name): {ref}")
    assert f"unchanged re-upload of {base}" in note
    assert f"Its weights are assumed the same as {base}'s too: {method}" in note


def test_an_unquantized_base_adds_no_precision_claim() -> None:
    assert not _method("meta-llama/Llama-3.1-8B-Instruct")
    note = resolve_model("RedHatAI/Llama-3.1-8B-Instruct", allow_hub=False).notes[0]
    assert "unchanged re-upload of meta-llama/Llama-3.1-8B-Instruct" in note
    assert "weights are assumed" not in note
