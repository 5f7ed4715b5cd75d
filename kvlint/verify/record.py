"""``kvlint verify --record``: a start-up as a ground-truth case, in the format of ``../shared/groundtruth/cases.yaml``
(fields described in its README), so users can contribute their start-ups.

Only what the log printed and what the user told kvlint (model, GPU, version, the engine flags typed after ``--``)
goes in; everything else is ``null``.
The case has no source URL (the user adds where the log was published); ``reliability`` is ``high`` since the full
log lines are at hand.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from typing import Any

from kvlint.values import digits
from kvlint.verify.compare import VerifyResult
from kvlint.verify.logparse import StartupLog

__all__ = ["record_case"]

#: ground-truth figure keys copied from the parsed log when present (others are verify-only helpers)
_FIGURES = (
    "budget_gib",
    "weights_gib",
    "weights_unit_printed",
    "activation_gib",
    "non_torch_gib",
    "weights_plus_non_torch_gib",
    "cudagraph_gib",
    "cudagraph_estimated_gib",
    "kv_cache_gib",
    "kv_reserved_gib",
    "kv_tokens",
    "gpu_blocks",
    "cpu_blocks",
    "max_concurrency",
    "concurrency_for_len",
    "free_at_startup_gib",
    # vLLM 0.6.4's V0 "Memory profiling results: total_gpu_memory=…GiB initial_memory_usage=…GiB peak_torch_memory=…"
    "initial_memory_usage_gib",
    "peak_torch_memory_gib",
    # vLLM's hint when the KV cache does not fit: "`--kv-cache-memory=N` to fit into requested memory, or
    # `--kv-cache-memory=M` to fully utilize gpu memory" (bytes, as the shared ground truth records them)
    "suggested_kv_cache_memory_bytes_requested",
    "suggested_kv_cache_memory_bytes_full",
    "encoder_profile_items",
    # vLLM >= 0.34.0's extensible KV cache: "Memory after warmup: …" and "Extended KV cache to …" (the pool it
    # committed after warm-up, which verify compares in place of the profile's reservation)
    "free_after_warmup_gib",
    "transient_peak_gib",
    "kv_measured_blocks",
    "kv_measured_gib",
    "kv_extended_blocks",
    "kv_extended_gib",
    "max_batch_total_tokens",
    "max_batch_prefill_tokens_default",
    "weights_gb",
    "free_before_weights_gb",
    "free_after_weights_gb",
    "free_after_kv_pool_gb",
    "k_size_gb",
    "v_size_gb",
    "kv_size_gb",  # SGLang's MLA pool: one "KV size: X GB" (gt-297, gt-298)
    # TGI: the shard's warmup "KV-cache blocks: N, size: S" and the launcher's token defaults (renamed below)
    "kv_cache_blocks",
    "kv_block_size",
    "max_input_tokens",
    "max_total_tokens",
    # SGLang: the fraction it printed and the limits of the scheduler's "max_total_num_tokens=N, ..." line
    "mem_fraction_static",
    "context_len",
    "chunked_prefill_size",
    "max_prefill_tokens",
    "max_running_requests",
    "available_gpu_mem_gb",
)

#: figure keys whose name in ``cases.yaml`` differs from verify's: TGI's launcher defaults ("Default
#: `max_total_tokens` to N") are ``*_default`` there (gt-082), ``max_total_tokens`` being the value the user set
_CASE_NAMES = {"max_input_tokens": "max_input_tokens_default", "max_total_tokens": "max_total_tokens_default"}


#: what the case's notes say of an event that did not stop the start-up (:attr:`StartupLog.warnings`)
_WARNINGS = {
    "tgi_decode_cuda_graph_warmup_failed": "the shard started without some of its decode CUDA graphs: TGI logged "
    "'Decode cuda graph warmup failed' (an out-of-memory in the capture after the KV cache was allocated)",
}

#: figure units counted in whole numbers: a prediction in them is written as an integer (``kv_tokens 480256``, not
#: ``4.803e+05``), as the engine prints it
_COUNTS = frozenset({"tokens", "blocks", "requests"})


def _predicted(value: float, unit: str) -> str:
    """kvlint's prediction as the record's notes write it: a count (:data:`_COUNTS`) as an integer, GiB and
    fractions to 4 significant digits."""
    return str(int(round(value))) if unit in _COUNTS else f"{value:.4g}"


def _arg(args: dict[str, Any], *names: str) -> Any:
    for n in names:
        if n in args:
            return args[n]
    return None


#: the program words before an engine's own flags, to read the flags typed after ``--`` with that engine's parser
_PROGRAM = {
    "vllm": ["vllm", "serve", "MODEL"],
    "tgi": ["text-generation-launcher", "--model-id", "MODEL"],
    "sglang": ["python", "-m", "sglang.launch_server", "--model-path", "MODEL"],
}


def _flags(argv: Sequence[str], version: str | None) -> dict[str, Any]:
    """The flags of the engine command ``argv`` by the engine parser's names (``num_shard``,
    ``tensor_parallel_size``, ``tp_size``...), as :func:`kvlint.engines.command.parse_command_line` reads them for
    the replay; empty when the command does not parse."""
    from kvlint.engines.command import parse_command_line

    try:
        cfg = parse_command_line(list(argv), version)
    except ValueError:
        return {}
    return {name: v.value for name, v in cfg.flags.items() if v.value is not None}


def _typed_flags(engine: str | None, extra_args: Sequence[str], version: str | None) -> dict[str, Any]:
    """The engine flags the user typed after ``--`` (``kvlint verify LOG -- --num-shard 2``), by the engine
    parser's names; empty when none are typed or they are not the engine's (the replay said so)."""
    if not extra_args or engine not in _PROGRAM:
        return {}
    return _flags([*_PROGRAM[engine], *extra_args], version)


def _replayed_flags(
    result: VerifyResult | None, log: StartupLog, extra_args: Sequence[str], version: str | None
) -> dict[str, Any]:
    """The settings the replay planned with: the flags of the command verify rebuilt (:attr:`VerifyResult.command`:
    the log's non-default args, vLLM's engine-config line (quantization, KV-cache dtype, enforce-eager, max seq
    len), its "Using max model len" and memory-profiling lines, then the flags typed after ``--``); without a
    replay, the flags typed after ``--``."""
    if result is None or log.engine not in _PROGRAM:
        return _typed_flags(log.engine, extra_args, version)
    return _flags(result.command, version)


def record_case(
    result: VerifyResult | None,
    log: StartupLog,
    *,
    source: str | None = None,
    engine_version: str | None = None,
    extra_args: Sequence[str] = (),
) -> dict[str, Any]:
    """The case dict (one list item of ``cases.yaml``). ``result`` may be None when nothing could be replayed;
    ``source`` is the log's file name (``locator``); ``engine_version`` the release the user named
    (``--engine-version``), recorded when the log prints none (TGI and SGLang logs rarely do); ``extra_args`` the
    engine flags typed after ``--``, which the replay used, so the case's parallelism, quantization and limits
    hold them as the log's own arguments (a typed flag wins over the log's, as it comes last in the replayed
    command). The setting fields are read from the command the replay planned (:func:`_replayed_flags`), which
    also holds what vLLM's engine-config line, "Using max model len" and memory-profiling lines said. Every figure verify reads from the log goes in (:data:`_FIGURES`, named as ``cases.yaml`` names it:
    :data:`_CASE_NAMES`)."""
    digest = hashlib.sha256(repr(sorted(log.figures.items())).encode()).hexdigest()[:8]
    args = {**log.args, **_replayed_flags(result, log, extra_args, log.version or engine_version)}
    tp = _arg(args, "tensor_parallel_size", "num_shard", "tp_size")
    if tp is None:  # ASCII digits only: "²" passes str.isdigit and made int() raise, as 5,000 digits did
        tp = digits(log.config.get("tensor_parallel_size"))
    pp = _arg(args, "pipeline_parallel_size", "pp_size")
    figures = {_CASE_NAMES.get(k, k): log.figures[k] for k in _FIGURES if k in log.figures}
    failure = dict(log.failure) if log.failure else None
    acc = result.accelerator if result else None
    gpu_model = None
    if acc:
        from kvlint.accelerators import lookup

        a = lookup(acc)
        gpu_model = a.name if a else acc
    kv = _arg(args, "kv_cache_dtype")
    return {
        "id": f"gt-user-{digest}",
        "source": {
            "repo": None,
            "kind": "user start-up log (kvlint verify --record)",
            "number": None,
            "url": None,
            "date": datetime.date.today().isoformat(),
            "locator": source,
            "reporter_role": "user",
        },
        "engine": log.engine,
        "engine_version": log.version or engine_version,
        "model_id": (result.command[2] if result and log.engine == "vllm" else None)
        or (
            result.command[result.command.index("--model-id") + 1]
            if result and "--model-id" in result.command
            else None
        )
        or (
            result.command[result.command.index("--model-path") + 1]
            if result and "--model-path" in result.command
            else None
        )
        or log.model,
        "model_notes": None
        if not log.model or (result and log.model in result.command)
        else f"the log names {log.model}",
        "user_stated_model_config": None,
        "gpu": {
            "model": gpu_model,
            "count": tp,
            "total_gib_reported": log.gpu_total_gib,
        },
        "parallelism": {
            "tensor_parallel": tp,
            "pipeline_parallel": pp,
            "expert_parallel": None,
            "data_parallel": _arg(args, "data_parallel_size", "dp_size"),
        },
        "dtype": _arg(args, "dtype"),
        "quantization": _arg(args, "quantization", "quantize"),
        "kv_cache_dtype": kv,
        "gpu_memory_utilization": _arg(args, "gpu_memory_utilization")
        or log.figures.get("gpu_memory_utilization"),
        "max_model_len": _arg(args, "max_model_len", "context_length") or log.figures.get("max_model_len"),
        "max_num_seqs": _arg(args, "max_num_seqs", "max_running_requests"),
        "max_num_batched_tokens": _arg(args, "max_num_batched_tokens", "chunked_prefill_size"),
        "enforce_eager": _arg(args, "enforce_eager"),
        "block_size": _arg(args, "block_size", "page_size"),
        "other_flags": [f"{k}={v}" for k, v in sorted(args.items()) if k not in _KNOWN_ARGS] or None,
        "outcome": log.outcome,
        "failure": failure,
        "figures": figures or None,
        "log_format": "; ".join(log.log_format) or None,
        "notes": "Recorded by kvlint verify from the start-up log; kvlint's prediction at recording: "
        + (
            ", ".join(
                f"{_CASE_NAMES.get(f.key, f.key)} {_predicted(f.predicted, f.unit)}"
                for f in (result.figures if result else [])
                if f.predicted is not None
            )
            or "none"
        )
        + (f" (verdict {result.verdict})" if result else "")
        + "".join(f"; {_WARNINGS[k]} (line {n})" for k, n in log.warnings.items() if k in _WARNINGS),
        "reliability": "high",
    }


_KNOWN_ARGS = frozenset(
    {
        "model",
        "model_tag",
        "model_id",
        "model_path",
        "tensor_parallel_size",
        "num_shard",
        "tp_size",
        "pipeline_parallel_size",
        "pp_size",
        "data_parallel_size",
        "dp_size",
        "dtype",
        "quantization",
        "quantize",
        "kv_cache_dtype",
        "gpu_memory_utilization",
        "max_model_len",
        "context_length",
        "max_num_seqs",
        "max_running_requests",
        "max_num_batched_tokens",
        "chunked_prefill_size",
        "enforce_eager",
        "block_size",
        "page_size",
    }
)
