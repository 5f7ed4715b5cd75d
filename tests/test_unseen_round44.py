"""New-user pass 44: models named by the manifests it collected (fixtures/collected, sources in its INDEX.csv) that
the catalogue lacked.

ibm-granite/granite-3.0-3b-a800m-instruct (GraniteMoeForCausalLM), named by vLLM production-stack's sleep-mode values
(tutorials/assets/values-19-sleep-mode-aware.yaml), was "model unknown" (KV502). Its config.json is transcribed from
the huggingface.co file page (kvlint/models/sources/hf-pages.yaml); the parameter count kvlint derives from it is
checked against the layer shapes of the architecture (transformers' GraniteMoe: q/o of hidden x hidden, k/v of
hidden x KV heads x head size, per expert an input linear of 2 x intermediate x hidden and an output linear of
hidden x intermediate, a router of experts x hidden, two RMSNorms a layer, tied embeddings).
"""

from __future__ import annotations

import json
from pathlib import Path

from kvlint.models.catalogue import lookup
from kvlint.models.resolve import resolve_model
from kvlint.models.weights import param_count
from kvlint.pipeline import Options, run_check
from kvlint.sizing import sizing_of

ROOT = Path(__file__).resolve().parents[1]
GRANITE = "ibm-granite/granite-3.0-3b-a800m-instruct"
STORED = (
    ROOT / "fixtures" / "models" / "catalogue" / "ibm-granite--granite-3.0-3b-a800m-instruct" / "config.json"
)
SLEEP_VALUES = (
    ROOT
    / "fixtures"
    / "collected"
    / "vllm-project__production-stack__tutorials__assets__values-19-sleep-mode-aware.yaml"
)


def test_granite_moe_is_catalogued_with_its_page_size() -> None:
    assert lookup(GRANITE) is not None
    # the huggingface.co tree pages of the repository give config.json as 890 bytes
    assert len(STORED.read_bytes()) == 890


def test_granite_moe_parameter_count_is_its_layer_shapes() -> None:
    c = json.loads(STORED.read_text())
    h, inter, layers = c["hidden_size"], c["intermediate_size"], c["num_hidden_layers"]
    kv = c["num_key_value_heads"] * h // c["num_attention_heads"]
    experts = c["num_local_experts"]
    attention = 2 * h * h + 2 * h * kv
    moe = experts * (2 * inter * h + h * inter) + experts * h
    norms = 2 * h
    expected = c["vocab_size"] * h + layers * (attention + moe + norms) + h  # tied head, final norm
    spec = resolve_model(GRANITE, allow_hub=False)
    assert param_count(spec) == expected


def test_production_stack_sleep_mode_values_are_sized_offline() -> None:
    r = run_check([str(SLEEP_VALUES)], Options(allow_hub=False))
    (cr,) = r.containers
    assert cr.model is not None and cr.model.id == GRANITE
    assert sizing_of(cr) == "fleet"
    assert not [d for d in r.diagnostics if d.rule == "KV502"]
