"""``kvlint plan --sweep NAME=SPEC``: how capacity and concurrency move with one engine setting.

NAME is a vLLM flag (``max-model-len``, ``gpu-memory-utilization``, ``max-num-seqs``, ``max-num-batched-tokens``,
``kv-cache-dtype``). SPEC is a comma list (``auto,fp8``; ``0.8,0.9``) or a range ``LO..HI``: token counts double from
LO to HI (``8k..128k``: 8000, 16000, ... and HI), fractions step by 0.05. Each point is a full re-plan with the
linter's memory model (:func:`kvlint.memory.vllm.plan_vllm_detailed`); its ``fits`` verdict is the plan's across
kvlint's prediction band (yes / risky / no), or ``refused`` where vLLM refuses the model dtype or KV-cache dtype
on the GPU (the KV301/KV302/KV305 tests, :func:`kvlint.memory.compat.startup_refusal`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.capacity import render as R
from kvlint.capacity.context import EngineContext, cell_verdict, largest_len, plan_detail
from kvlint.capacity.engine_terms import TERMS
from kvlint.numbers import fraction, times
from kvlint.statement import clip
from kvlint.types import Accelerator

SWEEPABLE = {
    "max-model-len": "max_model_len",
    "gpu-memory-utilization": "gpu_memory_utilization",
    "max-num-seqs": "max_num_seqs",
    "max-num-batched-tokens": "max_num_batched_tokens",
    "kv-cache-dtype": "kv_cache_dtype",
}


#: The most values a listed ``--sweep`` gives (``max-model-len=4k,8k,...``): a range doubles from its low end, so at
#: most 64 points from 1 to 2^63; each point is a plan of its own
MAX_SWEEP_POINTS = 64


class SweepError(ValueError):
    """A ``--sweep`` spec that cannot be read; the message quotes it."""


def parse_sweep(
    spec: str,
    *,
    sweepable: dict[str, str] | None = None,
    fractions: frozenset[str] = frozenset({"gpu_memory_utilization"}),
) -> tuple[str, list[object]]:
    """``"max-model-len=8k..128k"`` -> ``("max_model_len", [8000, 16000, 32000, 64000, 128000])``.

    ``sweepable``: flag name -> setting, vLLM's :data:`SWEEPABLE` by default (TGI's and SGLang's:
    :data:`kvlint.capacity.engines.TERMS`); ``fractions`` the settings that are shares of GPU memory in (0, 1].
    Raises :class:`SweepError` for unknown names, unreadable values or empty ranges.
    """
    from kvlint.engines.options import human_readable_int

    table = SWEEPABLE if sweepable is None else sweepable
    name, sep, vals = spec.partition("=")
    key = name.strip().lstrip("-").replace("_", "-")
    if not sep or key not in table:
        raise SweepError(f"--sweep '{spec}': expected NAME=VALUES with NAME one of {', '.join(table)}")
    dest = table[key]
    if ".." not in vals and vals.count(",") >= MAX_SWEEP_POINTS:
        # counted before any value is read: each point is a whole plan (20,000 listed values took 16 CPU seconds)
        raise SweepError(
            f"--sweep '{clip(spec, 60)}': {vals.count(',') + 1:,} values; kvlint sweeps at most "
            f"{MAX_SWEEP_POINTS} listed values (a range LO..HI doubles from LO)"
        )
    try:
        if dest == "kv_cache_dtype":
            out: list[object] = [v.strip() for v in vals.split(",") if v.strip()]
        elif dest in fractions:
            if ".." in vals:
                lo_s, hi_s = vals.split("..", 1)
                lo, hi = float(lo_s), float(hi_s)
                # both ends in (0, 1] before the steps are counted: an infinite end made int() raise, and a far
                # one (-1e9..1) a list of billions of points refused only once it was built
                if not (0 < lo <= 1 and 0 < hi <= 1):
                    raise ValueError(f"{key} must be in (0, 1]")
                n = int(round((hi - lo) / 0.05))
                out = [round(lo + 0.05 * i, 4) for i in range(n + 1)] if hi >= lo else []
            else:
                out = [float(v) for v in vals.split(",") if v.strip()]
            if any(not 0 < float(v) <= 1 for v in out):  # type: ignore[arg-type]
                raise ValueError(f"{key} must be in (0, 1]")
        elif ".." in vals:
            lo_s, hi_s = vals.split("..", 1)
            lo, hi = human_readable_int(lo_s), human_readable_int(hi_s)
            if lo < 1 or hi < lo:
                raise ValueError("range needs 1 <= LO <= HI")
            pts = []
            x = lo
            while x < hi:
                pts.append(x)
                x *= 2
            out = [*pts, hi]
        else:
            out = [human_readable_int(v) for v in vals.split(",") if v.strip()]
            if any(int(v) < 1 for v in out):  # type: ignore[call-overload]
                raise ValueError(f"{key} takes whole numbers of at least 1")
    except ValueError as exc:
        raise SweepError(f"--sweep '{spec}': {exc}") from exc
    if not out:
        raise SweepError(f"--sweep '{spec}': no values")
    return dest, out


@dataclass(frozen=True)
class SweepPoint:
    """One value of the swept setting and the plan's answer (per GPU): KV bytes, blocks, KV tokens, concurrency at
    the (possibly swept) max_model_len, whether one max_model_len request fits, largest fitting max_model_len.

    ``fits`` is the point estimate (False where vLLM refuses to start); ``verdict`` ``fits`` | ``risky`` |
    ``fails`` across kvlint's band, or ``refused`` (``refused_by`` KV301/KV302/KV305); ``reason`` why not ``fits``."""

    value: object
    kv_cache_bytes: int
    num_blocks: int
    kv_tokens: int
    max_model_len: int
    concurrency: float
    fits: bool
    largest_max_model_len: int
    max_num_seqs: int
    verdict: str = ""
    reason: str = ""
    refused_by: str = ""


def sweep(ctx: EngineContext, acc: Accelerator, spec: str) -> tuple[str, list[SweepPoint]]:
    """Re-plan ``ctx`` on ``acc`` for each value of ``spec``. Returns (setting dest name, points).
    Raises :class:`SweepError` for a bad spec."""
    from kvlint.memory.vllm import PlanError

    dest, values = parse_sweep(spec)
    if dest == "kv_cache_dtype":
        # argparse's choices of the release planned, as KV206 checks a typed --kv-cache-dtype
        from kvlint.engines.vllm import option_choices

        allowed = option_choices("kv_cache_dtype", ctx.settings.version)
        unknown = [str(v) for v in values if allowed is not None and v not in allowed]
        if unknown and allowed is not None:
            raise SweepError(
                f"--sweep '{spec}': vLLM {ctx.settings.version} does not accept --kv-cache-dtype "
                f"{', '.join(unknown)}; it accepts {', '.join(sorted(allowed))}"
            )
    pts = []
    for v in values:
        try:
            d = plan_detail(ctx, acc, ctx.total_bytes, **{dest: v})
        except (PlanError, ValueError) as exc:
            raise SweepError(f"--sweep {dest}={v}: {exc}") from exc
        p = d.plan
        verdict, reason, refused_by = cell_verdict(ctx, acc, d, **{dest: v})
        pts.append(
            SweepPoint(
                v,
                p.kv_cache_bytes,
                p.num_blocks,
                p.capacity_tokens,
                p.max_model_len,
                p.max_concurrency,
                d.fits and verdict != "refused",
                largest_len(ctx, acc, ctx.total_bytes, **{dest: v}),
                p.max_num_seqs,
                verdict,
                reason,
                refused_by,
            )
        )
    return dest, pts


#: The settings that are shares of GPU memory (vLLM's, TGI's and SGLang's :attr:`EngineTerms.fractions
#: <kvlint.capacity.engine_terms.EngineTerms.fractions>`), written as fractions.
_FRACTIONS = frozenset({"gpu_memory_utilization"}).union(*(t.fractions for t in TERMS.values()))


def _value_text(dest: str, value: object) -> str:
    """A swept value as the table and chart write it: token counts with separators, a memory fraction as every
    report writes one (:func:`kvlint.numbers.fraction`: ``0.90`` beside ``0.85``, not ``0.9``), a dtype as is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if dest in _FRACTIONS and isinstance(value, float):
        return fraction(value)
    return str(value)


def render_sweep(dest: str, pts: list[SweepPoint], fmt: str = "text", engine: str = "vllm") -> str:
    """Table (with a ``note`` column: why a point is not ``yes``) plus a text bar chart of the concurrency at
    max_model_len for each point; a refused point shows no capacity figures and no bar. ``engine``: whose terms
    the columns and legends use (TGI's max_total_tokens, SGLang's context_length: :func:`~kvlint.capacity.compare.table_terms`)."""
    from kvlint.capacity.compare import fits_text, table_terms

    length, legend, units_text = table_terms(engine)
    name = dest.replace("_", "-")
    header = [
        name,
        "KV GiB/GPU",
        "blocks",
        "KV tokens",
        length,
        "concurrency",
        "fits",
        f"largest {length}",
        "note",
    ]
    rows: list[list[object]] = []
    for p in pts:
        shown = p.verdict != "refused"
        rows.append(
            [
                _value_text(dest, p.value),
                R.gib(max(0, p.kv_cache_bytes)) if shown else None,
                f"{p.num_blocks:,}" if shown else None,
                f"{p.kv_tokens:,}" if shown else None,
                f"{p.max_model_len:,}",
                f"{times(p.concurrency)}x" if shown else None,
                fits_text(p.verdict, p.fits),
                f"{p.largest_max_model_len:,}" if shown else None,
                f"{p.reason} ({p.refused_by})" if p.refused_by else p.reason,
            ]
        )
    if dest == length:  # the swept column already is max_model_len
        del header[4]
        for r in rows:
            del r[4]
    tab = R.table(tuple(header), [tuple(r) for r in rows], fmt)
    chart = R.bars(
        [str(r[0]) for r in rows],
        [p.concurrency if p.verdict != "refused" else 0.0 for p in pts],
        unit=f"x concurrent @{length}",
    )
    units = units_text.split("; GPUs/replica = ", 1)[0]
    return tab + "\n\n" + legend + "\n\n" + units + "\n\n" + R.pre(chart, fmt)
