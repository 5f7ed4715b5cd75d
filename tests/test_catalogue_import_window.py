"""tools/catalogue_import.py ``convert_one`` (litgpt sizes on a template config's key layout): the converted
entry's sliding window is litgpt's value for that checkpoint, never the template's. Mistral-7B-Instruct-v0.2 was
converted on the v0.1 template, whose ``sliding_window_size`` 4096 stayed (litgpt's ``None`` for v0.2 was
skipped as "no value"), so every layer was planned as a 4096-token window until it was removed by hand."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from typing import Any

from kvlint.models import catalogue
from kvlint.models.config import parse_config

ROOT = Path(__file__).resolve().parent.parent


def _tool() -> Any:
    spec = importlib.util.spec_from_file_location("catalogue_import", ROOT / "tools" / "catalogue_import.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclasses.dataclass
class _LitConfig:
    """The fields of litgpt's ``Config`` that ``convert_one`` reads; a stand-in, not litgpt's class. Sizes are
    litgpt 0.5.13's for Mistral 7B (as recorded in the source list's ``litgpt_sizes``)."""

    name: str = "Mistral-7B-v0.1"
    hf_config: dict = dataclasses.field(default_factory=dict)
    n_layer: int = 32
    n_embd: int = 4096
    n_head: int = 32
    n_query_groups: int = 8
    head_size: int = 128
    intermediate_size: int = 14336
    moe_intermediate_size: int | None = None
    n_expert: int = 0
    n_expert_per_token: int = 0
    padded_vocab_size: int = 32000
    vocab_size: int = 32000
    padding_multiple: int = 512
    block_size: int = 32768
    rope_base: int = 10000
    attention_scores_scalar: int | None = None
    sliding_window_size: int | None = None
    sliding_window_indices: list[int] | None = None
    rope_indices: list[int] | None = None
    rope_adjustments: dict | None = None
    norm_class_name: str = "RMSNorm"
    mlp_class_name: str = "LLaMAMLP"


def _template() -> dict[str, Any]:
    cfg, _ = catalogue.load_config(catalogue.lookup("mistralai/Mistral-7B-v0.1"))
    assert cfg["sliding_window_size"] == 4096  # the mlc-llm preset's key for v0.1's window
    return cfg


def test_a_target_without_window_does_not_take_the_templates() -> None:
    tool = _tool()
    target = _LitConfig(name="Mistral-7B-Instruct-v0.2", rope_base=1000000)
    cfg, why = tool.convert_one(target, _LitConfig(), _template())
    assert cfg is not None, why
    assert cfg["sliding_window_size"] is None
    spec = parse_config(cfg, model_id="mistralai/Mistral-7B-Instruct-v0.2", source="test")
    assert spec.sliding_window is None and {ly.kind for ly in spec.layers} == {"full"}


def test_a_target_window_is_its_own() -> None:
    tool = _tool()
    cfg, why = tool.convert_one(_LitConfig(sliding_window_size=2048), _LitConfig(), _template())
    assert cfg is not None, why
    assert cfg["sliding_window_size"] == 2048
    spec = parse_config(cfg, model_id="x", source="test")
    assert spec.sliding_window == 2048


def test_a_target_window_needs_a_key_in_the_template() -> None:
    tool = _tool()
    tmpl = {k: v for k, v in _template().items() if k != "sliding_window_size"}
    cfg, why = tool.convert_one(_LitConfig(sliding_window_size=4096), _LitConfig(), tmpl)
    assert cfg is None and "sliding_window_size" in why
