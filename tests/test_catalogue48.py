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

import pytest
import yaml

from kvlint.memory.kv import kv_bytes_per_token
from kvlint.memory.vllm import moe_top_k
from kvlint.models.catalogue import lookup
from kvlint.models.resolve import resolve_model
from kvlint.models.weights import param_count
from kvlint.types import ModelUnavailable

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


def test_minimax_org_served_name_is_read_as_a_reupload_of_the_catalogued_m2() -> None:
    """OME's srt-minimax-m2 runtime serves ``--served-model-name minimax/MiniMax-M2`` (not the Hub's MiniMaxAI
    organisation): with MiniMaxAI/MiniMax-M2 catalogued it is the only catalogued model of that repository name,
    so it is sized as an unchanged re-upload, stated as an assumption (KV505), not silently."""
    spec = resolve_model("minimax/MiniMax-M2", allow_hub=False)
    assert spec.notes[0].startswith(
        "ASSUMPTION (derived from name): minimax/MiniMax-M2 is not in the catalogue"
    )
    assert "unchanged re-upload of MiniMaxAI/MiniMax-M2" in spec.notes[0]
    assert spec.layers == resolve_model("MiniMaxAI/MiniMax-M2.5", allow_hub=False).layers


def test_a_fine_tune_naming_its_base_is_not_sized_from_the_base() -> None:
    """The close-variant rule (docs/models.md): an id is read from a catalogued model's config only when its
    repository name is that model's (another publisher's re-upload) or that name plus a known quantization
    suffix (a re-quantization), each stated as an assumption. A fine-tune that names its base in a longer name
    (GKE's TGI tutorial serves TheBloke/Mistral-7B-OpenOrca-AWQ, Open-Orca's fine-tune of Mistral-7B-v0.1) is
    not: a fine-tune can add tokens, change the context or the rope, and its model card's base_model is not
    read offline."""
    with pytest.raises(ModelUnavailable, match="not in the bundled catalogue"):
        resolve_model("TheBloke/Mistral-7B-OpenOrca-AWQ", allow_hub=False)
    requant = resolve_model("TheBloke/Mistral-7B-v0.1-AWQ", allow_hub=False)
    assert requant.notes[0].startswith("ASSUMPTION (derived from name)") and requant.quant_method == "awq"
    reupload = resolve_model("someone/Mistral-7B-v0.1", allow_hub=False)
    assert "unchanged re-upload of mistralai/Mistral-7B-v0.1" in reupload.notes[0]


def _write_config(root: Path, model_id: str, cfg: dict) -> None:
    import json

    d = root / model_id.replace("/", "--")
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg))


def test_dbrx_experts_take_their_width_from_ffn_config(tmp_path: Path) -> None:
    """DBRX keeps its expert width in ``ffn_config.ffn_hidden_size`` (vLLM ``dbrx.py``: ``DbrxExperts`` is a
    ``FusedMoE`` of ``moe_num_experts`` experts of that width, gate/up/down; ``Wqkv`` fused with
    ``attn_config.kv_n_heads`` KV heads, no bias; untied ``lm_head``). kvlint read the width at the top level only,
    so a supplied DBRX config (``kvlint models pull databricks/dbrx-instruct``) had experts of width 0: 4.8e9
    parameters, 9.5 GB of bf16 weights, for a model its card gives as 132B total, 36B active. The layout is the
    one several restatements give (an MLX re-save's config, a PyTorch port reading the GGUF's dbrx.* metadata:
    40 layers, d_model 6144, 48 heads, 8 KV heads, 16 experts of 10752, top 4, vocab 100352); the counts are
    checked against the card's figures."""
    cfg = {
        "architectures": ["DbrxForCausalLM"],
        "model_type": "dbrx",
        "d_model": 6144,
        "n_layers": 40,
        "n_heads": 48,
        "max_seq_len": 32768,
        "vocab_size": 100352,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
        "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4},
    }
    _write_config(tmp_path, "databricks/dbrx-instruct", cfg)
    spec = resolve_model("databricks/dbrx-instruct", model_dirs=[str(tmp_path)], allow_hub=False)
    assert (spec.num_experts, spec.moe_intermediate_size) == (16, 10752)
    h, layers, e, inter, top_k = 6144, 40, 16, 10752, 4
    total = param_count(spec)
    assert abs(total - 132e9) / 132e9 < 0.01, total
    experts_per_layer = e * 3 * h * inter
    active = total - layers * (e - top_k) * experts_per_layer // e
    assert abs(active - 36e9) / 36e9 < 0.02, active
    # KV: every layer full attention, K and V of 8 heads x 128 (d_model / n_heads) at bf16
    assert kv_bytes_per_token(spec, 1, "auto") == 2 * layers * 8 * (h // 48) * 2
    # the fused MoE routes each token to ffn_config.moe_top_k experts (DbrxExperts: FusedMoE(top_k=...)), not the
    # default 2 kvlint takes when no top-k key is found
    assert moe_top_k(spec.config) == top_k


def test_grok2_residual_moe_and_no_window(tmp_path: Path) -> None:
    """A Grok-2 config (``xai-org/grok-2``, OME's SGLang runtime srt-grok-2; not in the catalogue: no citable copy)
    supplied by the user. SGLang 0.5.5.post3 ``sglang/srt/models/grok.py``: each ``Grok1DecoderLayer`` with
    ``residual_moe`` runs a dense ``Grok1MLP`` of ``intermediate_size`` beside 8 experts of
    ``moe_intermediate_size`` (kvlint counted the experts only, 20 % light), and its attention has no window
    (the config's ``sliding_window_size`` -1, which kvlint refused as a size). The widths, heads and expert counts
    are those sglang-jax's Grok-2 tests and a MoE benchmark table citing the Hub config give (hidden 8192, 64 / 8
    heads of 128, 8 experts of 16384, top 2, vocab 131072), 64 layers as the LLM architecture gallery lists; the
    total is checked against the gallery's 270B and its 256 KiB of bf16 KV a token."""
    cfg = {
        "architectures": ["Grok1ForCausalLM"],
        "model_type": "git",
        "vocab_size": 131072,
        "hidden_size": 8192,
        "intermediate_size": 32768,
        "moe_intermediate_size": 16384,
        "max_position_embeddings": 131072,
        "num_experts_per_tok": 2,
        "num_local_experts": 8,
        "residual_moe": True,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "num_hidden_layers": 64,
        "head_dim": 128,
        "sliding_window_size": -1,
        "global_attn_every_n": 1,
        "torch_dtype": "bfloat16",
    }
    _write_config(tmp_path, "xai-org/grok-2", cfg)
    spec = resolve_model("xai-org/grok-2", model_dirs=[str(tmp_path)], allow_hub=False)
    assert {ly.kind for ly in spec.layers} == {"full"}
    assert kv_bytes_per_token(spec, 1, "auto") == 256 * 1024
    total = param_count(spec)
    assert abs(total - 270e9) / 270e9 < 0.01, total
    # without residual_moe the dense MLP is not built: 64 x 3 x 8192 x 32768 fewer parameters
    _write_config(tmp_path, "xai-org/grok-2-no-rmoe", {**cfg, "residual_moe": False})
    plain = resolve_model("xai-org/grok-2-no-rmoe", model_dirs=[str(tmp_path)], allow_hub=False)
    assert total - param_count(plain) == 64 * 3 * 8192 * 32768
    # a window of -1 is still refused where it is not Grok's "no window"
    _write_config(
        tmp_path, "acme/not-grok", {**cfg, "architectures": ["MistralForCausalLM"], "model_type": "mistral"}
    )
    with pytest.raises(ModelUnavailable, match="sliding_window_size is -1"):
        resolve_model("acme/not-grok", model_dirs=[str(tmp_path)], allow_hub=False)
