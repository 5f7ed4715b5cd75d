"""``kvlint plan --compare``: one model and engine settings over accelerators x TP sizes x KV-cache dtypes.

Every cell is :func:`kvlint.memory.vllm.plan_vllm_detailed` (the linter's memory model) with
``tensor_parallel_size``/``kv_cache_dtype`` replaced; nothing is estimated separately. Each cell's verdict is
the plan's own (:attr:`kvlint.memory.vllm.VllmPlanDetail.verdict`, across kvlint's prediction band) unless vLLM
refuses the dtype, KV-cache dtype or quantization method on that GPU, by the same tests as rules KV301/KV302/KV305
(:func:`kvlint.memory.compat.startup_refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.accelerators.registry import did_you_mean
from kvlint.accelerators.site import Site
from kvlint.capacity import render as R
from kvlint.capacity.context import EngineContext, cell_verdict, largest_len, plan_detail
from kvlint.numbers import times
from kvlint.types import Accelerator

TP_SIZES = (1, 2, 4, 8)
KV_DTYPES = ("auto", "fp8")

#: What the ``fits`` column says for each verdict (see :data:`VERDICT_LEGEND`).
FITS_TEXT = {"fits": "yes", "risky": "risky", "fails": "no", "refused": "refused", "error": "error"}

#: The legend printed under the table: what each ``fits`` value means.
VERDICT_LEGEND = (
    "fits: yes = one max_model_len request fits across kvlint's whole prediction band; risky = only in the "
    "band's upper part (it may fail on a real node); no = not even at the band's high end (vLLM refuses to "
    "start); refused = vLLM does not start: a max-model-len above the model's (KV201), a max-num-seqs above "
    "max-num-batched-tokens (KV204) or this dtype, KV-cache dtype or quantization method on this GPU (the "
    "KV301/KV302/KV305 tests), all before sizing memory (the memory figures do not apply), or a "
    "hybrid model's max_num_seqs above its Mamba cache blocks (KV108)"
)

#: The units of the comparison and sweep columns, printed under both tables.
UNITS_LEGEND = (
    "units: GiB/GPU = GiB (2^30 bytes) on each GPU of the replica; KV tokens = the KV cache of one replica, as "
    "vLLM's 'GPU KV cache size' line counts it (each data-parallel engine has its own); concurrency = requests of "
    "max_model_len tokens that fit in it at once; GPUs/replica = TP x PP"
)


@dataclass(frozen=True)
class CompareRow:
    """One accelerator x TP x KV dtype. Bytes per GPU; ``kv_tokens`` vLLM's "GPU KV cache size";
    ``concurrency`` at max_model_len; ``largest_max_model_len`` the largest length that fits, up to the derived one (0: nothing fits);
    ``gpus`` per replica (TP x PP); ``error`` why no plan (then the numbers are 0).

    ``fits``: the plan's point estimate holds one max_model_len request and vLLM does not refuse the cell.
    ``verdict``: ``fits`` | ``risky`` | ``fails`` (the plan across kvlint's band, :attr:`VllmPlanDetail.verdict`),
    ``refused`` (vLLM does not start: ``refused_by`` names the rule, KV301, KV302 or KV305), or ``error``; ``reason``
    says why a verdict is not ``fits``."""

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
    verdict: str = ""
    reason: str = ""
    refused_by: str = ""


def candidate_accelerators(only: list[str] | None = None, site: Site | None = None) -> list[Accelerator]:
    """The ``only`` ids/aliases (a site's own accelerators too), else the fleet: ``site``'s configured fleet
    (``.kvlint.yaml`` ``fleet``), or kvlint's default fleet (:data:`kvlint.accelerators.site.DEFAULT_FLEET`).
    An accelerator named more than once (``h100,h100``, or an id and its alias) is listed once, where first
    named, so the tables and the planning grow with the catalogue, never with the argument.
    Raises ValueError naming an unknown id."""
    site = site or Site()
    if only:
        out: list[Accelerator] = []
        seen: set[str] = set()
        for ref in only:
            acc = site.lookup(ref)
            if acc is None:
                raise ValueError(
                    f"unknown accelerator '{ref}'{did_you_mean(ref)}; `kvlint accelerators` lists the ids and aliases"
                )
            if acc.id not in seen:
                seen.add(acc.id)
                out.append(acc)
        return out
    return list(site.fleet_accelerators()[0])


def fleet_description(only: list[str] | None = None, site: Site | None = None) -> str:
    """Which accelerators :func:`candidate_accelerators` compares, in words (for the table's preamble)."""
    if only:
        return "the accelerators given with --accelerators"
    site = site or Site()
    if site.fleet_accelerators()[1]:
        return f"the configured fleet ({site.source} fleet)"
    return "kvlint's default fleet (set `fleet` in .kvlint.yaml, or --accelerators, to choose)"


def compare(
    ctx: EngineContext,
    accelerators: list[str] | None = None,
    tp_sizes: tuple[int, ...] = TP_SIZES,
    kv_dtypes: tuple[str, ...] = KV_DTYPES,
    site: Site | None = None,
) -> list[CompareRow]:
    """The comparison rows over ``accelerators`` (default: the fleet, :func:`candidate_accelerators`). TP sizes
    that do not divide the model's attention heads are skipped (vLLM refuses them: ``vllm/config/parallel.py``,
    heads % TP). A KV dtype or model dtype vLLM refuses on a GPU is a ``refused`` row with the reason (KV301,
    KV302), never skipped. An accelerator that is not a CUDA/ROCm GPU (TPU, Gaudi) gets ``error`` rows saying so,
    as the TGI and SGLang tables do. Raises ValueError for unknown accelerator ids."""
    from kvlint.memory.stage import not_a_cuda_rocm_gpu
    from kvlint.memory.vllm import PlanError

    rows: list[CompareRow] = []
    heads = ctx.model.num_attention_heads or 1
    pp = ctx.settings.pipeline_parallel_size
    for acc in candidate_accelerators(accelerators, site):
        # a TPU or Gaudi: no vLLM GPU plan (as `kvlint plan --accelerator` and the TGI/SGLang tables answer it)
        not_gpu = not_a_cuda_rocm_gpu(acc, "vllm")
        for tp in tp_sizes:
            if heads % tp:
                continue
            for kvd in kv_dtypes:
                if not_gpu is not None:
                    rows.append(
                        CompareRow(
                            acc.id, tp, kvd, False, 0, 0, 0, 0.0, 0, 0, tp * pp, not_gpu, "error", not_gpu
                        )
                    )
                    continue
                try:
                    d = plan_detail(ctx, acc, tensor_parallel_size=tp, kv_cache_dtype=kvd)
                except (PlanError, ValueError, ZeroDivisionError) as exc:
                    rows.append(
                        CompareRow(
                            acc.id, tp, kvd, False, 0, 0, 0, 0.0, 0, 0, tp * pp, str(exc), "error", str(exc)
                        )
                    )
                    continue
                p = d.plan
                verdict, reason, refused_by = cell_verdict(ctx, acc, d, kv_cache_dtype=kvd)
                rows.append(
                    CompareRow(
                        acc.id,
                        tp,
                        kvd,
                        d.fits and verdict != "refused",
                        p.weights_bytes,
                        p.kv_cache_bytes,
                        p.capacity_tokens if p.num_blocks > 0 else 0,
                        p.max_concurrency,
                        p.max_model_len,
                        largest_len(ctx, acc, tensor_parallel_size=tp, kv_cache_dtype=kvd),
                        tp * pp,
                        "",
                        verdict,
                        reason,
                        refused_by,
                    )
                )
    return rows


def fits_text(verdict: str, fits: bool, error: str = "") -> str:
    """The ``fits`` cell of a row or sweep point: :data:`FITS_TEXT` of its verdict (rows made without one fall
    back to ``yes``/``no``/``error``)."""
    if verdict in FITS_TEXT:
        return FITS_TEXT[verdict]
    return "yes" if fits else ("error" if error else "no")


def table_terms(engine: str) -> tuple[str, str, str]:
    """``(length, fits legend, units legend)`` of ``engine``'s comparison and sweep tables: vLLM's
    ``max_model_len``, :data:`VERDICT_LEGEND` and :data:`UNITS_LEGEND`; TGI's and SGLang's from
    :mod:`kvlint.capacity.engine_terms` (``max_total_tokens`` / ``context_length`` and their legends)."""
    if engine == "vllm":
        return "max_model_len", VERDICT_LEGEND, UNITS_LEGEND
    from kvlint.capacity.engine_terms import TERMS, units_legend, verdict_legend

    return TERMS[engine].length, verdict_legend(engine), units_legend(engine)


def render_compare(rows: list[CompareRow], fmt: str = "text", engine: str = "vllm") -> str:
    """The comparison as a table (text or Markdown), a ``note`` column with each non-``yes`` cell's reason and
    the legend of the ``fits`` column. Refused rows show no capacity figures (the engine does not start).
    ``engine``: whose terms the columns and legends use (:func:`table_terms`)."""
    length, legend, units = table_terms(engine)
    head = (
        "accelerator",
        "TP",
        "KV dtype",
        "fits",
        "weights GiB/GPU",
        "KV GiB/GPU",
        "KV tokens",
        f"concurrency @{length}",
        f"largest {length}",
        "GPUs/replica",
        "note",
    )
    body = []
    for r in rows:
        refused = r.verdict == "refused"
        body.append(
            (
                r.accelerator,
                r.tp,
                r.kv_cache_dtype,
                fits_text(r.verdict, r.fits, r.error),
                R.gib(r.weights_bytes),
                None if refused else R.gib(max(0, r.kv_cache_bytes)),
                None if refused else f"{r.kv_tokens:,}",
                None if refused else f"{times(r.concurrency)}x",
                None if refused else f"{r.largest_max_model_len:,}",
                r.gpus,
                (f"{r.reason} ({r.refused_by})" if r.refused_by else r.reason) or r.error,
            )
        )
    return R.table(head, body, fmt) + "\n\n" + legend + "\n\n" + units
