"""``kvlint plan --compare``: one model and engine settings over accelerators x TP sizes x KV-cache dtypes.

Every cell is :func:`kvlint.memory.vllm.plan_vllm_detailed` (the linter's memory model) with
``tensor_parallel_size``/``kv_cache_dtype`` replaced; nothing is estimated separately.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.capacity import render as R
from kvlint.capacity.context import EngineContext, largest_len, plan_detail
from kvlint.types import Accelerator

TP_SIZES = (1, 2, 4, 8)
KV_DTYPES = ("auto", "fp8")


@dataclass(frozen=True)
class CompareRow:
    """One accelerator x TP x KV dtype. Bytes per GPU; ``kv_tokens`` vLLM's "GPU KV cache size";
    ``concurrency`` at max_model_len; ``largest_max_model_len`` the largest length that fits, up to the derived one (0: nothing fits);
    ``gpus`` per replica (TP x PP); ``error`` why no plan (then the numbers are 0)."""

    accelerator: str
    tp: int
    kv_cache_dtype: str
    fits: bool
    weights_bytes: int
    kv_cache_bytes: int
    kv_tokens: int
    concurrency: float
    max_model_len: int
    largest_max_model_len: int
    gpus: int
    error: str = ""


def candidate_accelerators(only: list[str] | None = None) -> list[Accelerator]:
    """CUDA/ROCm GPUs of the catalogue (the vLLM GPU memory model applies), or the ``only`` ids/aliases.
    Raises ValueError naming an unknown id."""
    from kvlint.accelerators import catalogue, lookup

    if only:
        out = []
        for ref in only:
            acc = lookup(ref)
            if acc is None:
                raise ValueError(
                    f"unknown accelerator '{ref}'; `kvlint accelerators` lists the ids and aliases"
                )
            out.append(acc)
        return out
    return [a for a in catalogue().values() if a.vendor in ("nvidia", "amd")]


def compare(
    ctx: EngineContext,
    accelerators: list[str] | None = None,
    tp_sizes: tuple[int, ...] = TP_SIZES,
    kv_dtypes: tuple[str, ...] = KV_DTYPES,
) -> list[CompareRow]:
    """The comparison rows. TP sizes that do not divide the model's attention heads are skipped (vLLM refuses
    them: ``vllm/config/parallel.py``, heads % TP); ``fp8`` KV rows are skipped on GPUs without FP8 support.
    Raises ValueError for unknown accelerator ids."""
    from kvlint.memory.vllm import PlanError

    rows: list[CompareRow] = []
    heads = ctx.model.num_attention_heads or 1
    pp = ctx.settings.pipeline_parallel_size
    for acc in candidate_accelerators(accelerators):
        for tp in tp_sizes:
            if heads % tp:
                continue
            for kvd in kv_dtypes:
                if kvd != "auto" and not acc.fp8:
                    continue
                try:
                    d = plan_detail(ctx, acc, tensor_parallel_size=tp, kv_cache_dtype=kvd)
                except (PlanError, ValueError, ZeroDivisionError) as exc:
                    rows.append(CompareRow(acc.id, tp, kvd, False, 0, 0, 0, 0.0, 0, 0, tp * pp, str(exc)))
                    continue
                p = d.plan
                rows.append(
                    CompareRow(
                        acc.id,
                        tp,
                        kvd,
                        d.fits,
                        p.weights_bytes,
                        p.kv_cache_bytes,
                        p.capacity_tokens if p.num_blocks > 0 else 0,
                        p.max_concurrency,
                        p.max_model_len,
                        largest_len(ctx, acc, tensor_parallel_size=tp, kv_cache_dtype=kvd),
                        tp * pp,
                    )
                )
    return rows


def render_compare(rows: list[CompareRow], fmt: str = "text") -> str:
    """The comparison as a table (text or Markdown)."""
    head = (
        "accelerator",
        "TP",
        "KV dtype",
        "fits",
        "weights GiB/GPU",
        "KV GiB/GPU",
        "KV tokens",
        "concurrency @max_model_len",
        "largest max_model_len",
        "GPUs/replica",
    )
    body = [
        (
            r.accelerator,
            r.tp,
            r.kv_cache_dtype,
            "yes" if r.fits else ("error" if r.error else "no"),
            R.gib(r.weights_bytes),
            R.gib(max(0, r.kv_cache_bytes)),
            f"{r.kv_tokens:,}",
            f"{r.concurrency:.2f}x",
            f"{r.largest_max_model_len:,}",
            r.gpus,
        )
        for r in rows
    ]
    return R.table(head, body, fmt)
