"""Models real manifests name that kvlint could not size offline (branch catalogue48).

- MiniMaxAI/MiniMax-M2: a cited variant of the stored MiniMaxAI/MiniMax-M2.5 config
  (kvlint/models/sources/variants.yaml): transformers 5.1.0's ``MiniMaxM2Config`` documents MiniMax-M2 and its
  defaults are the stored config's architecture values; the test checks each value the reason quotes against
  the stored config, so an edit of either is caught.
- A hub id kvlint has not catalogued whose repository name a catalogued model has under another organisation
  (OME's ``--served-model-name minimax/MiniMax-M2``): KV502 offers the catalogued id as a "did you mean", never
  assumes it (a repository name says nothing about who published what under it).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.models.catalogue import lookup
from kvlint.models.resolve import resolve_model
from kvlint.models.weights import param_count

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = ROOT / "kvlint" / "models" / "sources" / "variants.yaml"

#: phrase of the reason -> config.json key it states
_QUOTED = {
    r"(\d+) layers": "num_hidden_layers",
    r"hidden (\d+)": "hidden_size",
    r"(\d+) heads": "num_attention_heads",
    r"(\d+) KV heads": "num_key_value_heads",
    r"head_dim (\d+)": "head_dim",
    r"intermediate \(per expert\) (\d+)": "intermediate_size",
    r"(\d+) local experts": "num_local_experts",
    r"with (\d+) per token": "num_experts_per_tok",
    r"vocab (\d+)": "vocab_size",
    r"context (\d+)": "max_position_embeddings",
    r"rope theta (\d+)": "rope_theta",
}


def test_minimax_m2_reason_states_the_stored_configs_values() -> None:
    rows = yaml.safe_load(VARIANTS.read_text())["variants"]["MiniMaxAI/MiniMax-M2.5"]
    why = next(r["why"] for r in rows if r["id"] == "MiniMaxAI/MiniMax-M2")
    cfg = resolve_model("MiniMaxAI/MiniMax-M2.5", allow_hub=False).config
    for pattern, key in _QUOTED.items():
        m = re.search(pattern, why)
        assert m, pattern
        assert int(m.group(1)) == cfg[key], key
    assert "MiniMaxM2ForCausalLM" in why and cfg["architectures"] == ["MiniMaxM2ForCausalLM"]
    assert "128 x 128" in why and cfg["quantization_config"]["weight_block_size"] == [128, 128]


def test_minimax_m2_resolves_offline_on_the_m25_stack() -> None:
    entry = lookup("MiniMaxAI/MiniMax-M2")
    assert entry is not None and entry.base_id == "MiniMaxAI/MiniMax-M2.5"
    assert lookup("minimaxai/minimax-m2") is not None  # the Hub resolves ids case-insensitively
    m2 = resolve_model("MiniMaxAI/MiniMax-M2", allow_hub=False)
    m25 = resolve_model("MiniMaxAI/MiniMax-M2.5", allow_hub=False)
    assert m2.layers == m25.layers and param_count(m2) == param_count(m25)
    assert m2.quant_method == "fp8"
    c = m2.config
    # full attention on every layer: K and V of kv heads x head_dim per layer, at the bf16 default KV dtype
    assert (
        kv_bytes_per_token(m2, 1, "auto")
        == 2 * c["num_hidden_layers"] * c["num_key_value_heads"] * c["head_dim"] * 2
    )
    assert m2.notes[0].startswith("MiniMaxAI/MiniMax-M2 uses the config of")
