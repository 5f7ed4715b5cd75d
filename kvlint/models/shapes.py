"""Architecture facts that both the config reader (:mod:`kvlint.models.config`) and the weight estimator
(:mod:`kvlint.models.weights`) use: bytes per dtype name, which families have a non-gated MLP, and the
NAS-style FFN width rule.
"""

from __future__ import annotations

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
