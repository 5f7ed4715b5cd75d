"""Architecture facts that both the config reader (:mod:`kvlint.models.config`) and the weight estimator
(:mod:`kvlint.models.weights`) use: bytes per dtype name, which families have a non-gated MLP, the
NAS-style FFN width rule, the Nemotron-H layer pattern and the layers that build a DSA indexer.
"""

from __future__ import annotations

import math
from typing import Any

#: bytes per element of the dtype names found in ``torch_dtype``/``dtype``.
DTYPE_BYTES: dict[str, int] = {
    "float32": 4,
    "float": 4,
    "fp32": 4,
    "float16": 2,
    "half": 2,
    "fp16": 2,
    "bfloat16": 2,
    "bf16": 2,
    "float8_e4m3fn": 1,
    "float8": 1,
    "fp8": 1,
}

# Families whose MLP is not gated (up + down only), used by the parameter-count formula.
NON_GATED_MLP_TYPES = frozenset(
    {
        "nemotron_h",
        "nemotron",
        "falcon",
        "gpt2",
        "gpt_bigcode",
        "starcoder2",
        "phi",
        "gpt_neox",
        "opt",
        "bloom",
        "mpt",
    }
)


def dtype_bytes_of(name: str | None, default: int = 2) -> int:
    """Bytes per element of a config dtype name (``bfloat16`` -> 2); ``default`` when unknown/None."""
    if not name:
        return default
    return DTYPE_BYTES.get(str(name).lower().replace("torch.", ""), default)


def ffn_mult_to_intermediate(ffn_mult: float, hidden: int) -> int:
    """DeciLM/Nemotron-NAS FFN width: ``int(2 x ffn_mult x hidden / 3)`` rounded up to a multiple of 256
    (``_ffn_mult_to_intermediate_size`` in the checkpoint's ``modeling_decilm.py``)."""
    inter = int(2 * ffn_mult * hidden / 3)
    return -(-inter // 256) * 256


#: Nemotron-H block names of ``layers_block_type`` (and the legacy names transformers remaps onto them) as the
#: characters of ``hybrid_override_pattern`` (transformers@13923c63
#: src/transformers/models/nemotron_h/configuration_nemotron_h.py::NemotronHConfig._list_to_pattern).
_NEMOTRON_BLOCKS = {
    "linear_attention": "M",
    "mamba": "M",
    "full_attention": "*",
    "attention": "*",
    "moe": "E",
    "mlp": "-",
}


def nemotron_h_pattern(text: dict[str, Any]) -> str | None:
    """The Nemotron-H layer pattern (``M`` Mamba-2, ``*`` attention, ``E`` MoE, ``-`` MLP; one character per
    decoder layer) of a text config: its ``hybrid_override_pattern`` string, else its ``layers_block_type``
    list written as that string, the form newer configs (Nemotron-3 Ultra, Nemotron-3.5) store. transformers'
    ``NemotronHConfig`` derives ``num_hidden_layers`` from that list (its length) and reads the string as the
    same list (``_pattern_to_list``); vLLM's ``nemotron_h.py`` builds its layers from the pattern
    (``ALL_DECODER_LAYER_TYPES``). None when the config has neither, a block name outside that table, or the
    list in a config whose model_type is not nemotron_h (Zamba2, for one, names its blocks in a list of that
    name with other meanings)."""
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return pattern
    blocks = text.get("layers_block_type")
    if (
        text.get("model_type") == "nemotron_h"
        and isinstance(blocks, list)
        and blocks
        and all(str(b) in _NEMOTRON_BLOCKS for b in blocks)
    ):
        return "".join(_NEMOTRON_BLOCKS[str(b)] for b in blocks)
    return None


#: Largest integer read from a config.json (2^53: beyond it a JSON number is not exact as a float anyway).
MAX_CONFIG_INT = 2**53


def config_int(v: Any) -> int | None:
    """An integer config value: an int, or a whole finite float, of at most :data:`MAX_CONFIG_INT` in magnitude;
    else None (bools and larger values are not numbers kvlint reads). The one reader of
    :mod:`kvlint.models.config` (``_int``) and of this module."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if abs(v) <= MAX_CONFIG_INT else None
    if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) <= MAX_CONFIG_INT:
        return int(v)
    return None


def dsa_indexer_layers(text: dict[str, Any], n: int) -> frozenset[int]:
    """The decoder layers (0-based) of a DeepSeek sparse attention (DSA) model that build a lightning indexer, and
    so keep its key cache; empty for a config without ``index_topk`` (not DSA).

    vLLM (vllm@002d6073 vllm/model_executor/models/deepseek_v2.py::DeepseekV2MLAAttention): ``is_v32 =
    hasattr(config, "index_topk")``; a layer skips its own top-k (IndexCache, reusing an earlier layer's indices,
    and builds no ``Indexer`` and so no ``DeepseekV32IndexerCache``) when ``index_topk_pattern[layer] == "S"``, or,
    without a pattern, when ``max(layer - index_skip_topk_offset + 1, 0) % index_topk_freq != 0`` (defaults: offset
    2, freq 1, so every layer of DeepSeek V3.2 and GLM-5 / 5.1 has one; GLM-5.2 / 5.3, freq 4 offset 3: layers 0, 1,
    2, 6, 10, ..., 74, the ``full`` entries of their ``indexer_types``, which vLLM does not read).
    """
    if "index_topk" not in text:
        return frozenset()
    pattern = text.get("index_topk_pattern")
    if isinstance(pattern, list):
        return frozenset(i for i in range(n) if not (i < len(pattern) and pattern[i] == "S"))
    freq = config_int(text.get("index_topk_freq")) or 1
    off = config_int(text.get("index_skip_topk_offset"))
    off = 2 if off is None else off
    return frozenset(i for i in range(n) if max(i - off + 1, 0) % freq == 0)
