"""How TGI and SGLang name what ``kvlint plan --compare`` and ``--sweep`` show: the settings each table changes,
the per-request length, the KV-cache dtypes, and the legends (:mod:`kvlint.capacity.engines` plans the cells;
:func:`kvlint.capacity.compare.render_compare` and :func:`kvlint.capacity.sweep.render_sweep` print them).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.types import ENGINE_NAMES

__all__ = ["TERMS", "EngineTerms", "units_legend", "verdict_legend"]


@dataclass(frozen=True)
class EngineTerms:
    """How one engine names what the tables show: its tensor-parallel setting (``tp``), the per-request length
    (``length``, a parser dest), the KV-cache dtypes a comparison tries (``kv_dtypes``; ``auto`` = the flag unset,
    the model's dtype), the settings ``--sweep`` takes (flag name -> dest), and the start-up line whose token count
    the ``KV tokens`` column is (``tokens_line``)."""

    tp: str
    length: str
    kv_dtypes: tuple[str, ...]
    sweepable: dict[str, str]
    fractions: frozenset[str]
    tokens_line: str
    kv_dtype_choices: tuple[str, ...] = ()


#: TGI: the launcher's ``Args`` (tgi@v3.3.7:launcher/src/main.rs); ``--kv-cache-dtype`` takes ``fp8_e4m3fn`` or
#: ``fp8_e5m2`` (the model's dtype when unset: ``auto`` here; :data:`kvlint.engines.tgi._TGI_CHOICES`). SGLang:
#: ``ServerArgs.add_cli_args`` (sglang@v0.5.5: python/sglang/srt/server_args.py), ``--kv-cache-dtype`` ``auto``,
#: ``fp8_e5m2`` or ``fp8_e4m3`` (and the 16-bit names :func:`kvlint.memory.sglang.sglang_prelude` reads).
TERMS: dict[str, EngineTerms] = {
    "tgi": EngineTerms(
        tp="num_shard",
        length="max_total_tokens",
        kv_dtypes=("auto", "fp8_e4m3fn"),
        sweepable={
            "max-total-tokens": "max_total_tokens",
            "max-input-tokens": "max_input_tokens",
            "max-batch-prefill-tokens": "max_batch_prefill_tokens",
            "max-batch-size": "max_batch_size",
            "cuda-memory-fraction": "cuda_memory_fraction",
            "kv-cache-dtype": "kv_cache_dtype",
        },
        fractions=frozenset({"cuda_memory_fraction"}),
        tokens_line="TGI's 'Setting max batch total tokens to N' (the router's budget)",
        kv_dtype_choices=("auto", "fp8_e4m3fn", "fp8_e5m2"),
    ),
    "sglang": EngineTerms(
        tp="tp_size",
        length="context_length",
        kv_dtypes=("auto", "fp8_e4m3"),
        sweepable={
            "context-length": "context_length",
            "mem-fraction-static": "mem_fraction_static",
            "max-running-requests": "max_running_requests",
            "chunked-prefill-size": "chunked_prefill_size",
            "kv-cache-dtype": "kv_cache_dtype",
        },
        fractions=frozenset({"mem_fraction_static"}),
        tokens_line="SGLang's 'max_total_num_tokens' (the KV pool of one DP replica)",
        kv_dtype_choices=("auto", "fp8_e5m2", "fp8_e4m3", "bf16", "bfloat16"),
    ),
}


def verdict_legend(engine: str) -> str:
    """The legend of the ``fits`` column for ``engine``'s table (vLLM's: :data:`kvlint.capacity.compare.VERDICT_LEGEND`)."""
    name = ENGINE_NAMES[engine]
    length = TERMS[engine].length
    no = (
        "TGI's warmup runs out of memory or max_total_tokens exceeds the KV cache it finds (KV603/KV604)"
        if engine == "tgi"
        else "the weights leave SGLang no KV pool (KV701)"
    )
    risky = (
        "one max_total_tokens request fits only in the band's upper part (KV105)"
        if engine == "tgi"
        else "the KV pool holds less than one context_length request, so SGLang caps requests below it (KV702), "
        "or holds one only in the band's upper part"
    )
    return (
        f"fits: yes = `kvlint plan` of this cell's command says ok: one {length} request fits across kvlint's "
        f"prediction band; risky = {risky}; no = {no}; refused = {name} does not start with these settings for "
        "another reason, before sizing memory (the rule named; the memory figures do not apply)"
    )


def units_legend(engine: str) -> str:
    """The units legend of ``engine``'s tables (vLLM's: :data:`kvlint.capacity.compare.UNITS_LEGEND`)."""
    terms = TERMS[engine]
    return (
        "units: GiB/GPU = GiB (2^30 bytes) on each GPU of the replica; KV tokens = the KV cache of one replica, as "
        f"{terms.tokens_line} counts it; concurrency = requests of {terms.length} tokens that fit in it at once; "
        f"GPUs/replica = {'--num-shard' if engine == 'tgi' else '--tp-size x --pp-size'}"
    )
