"""``kvlint plan --compare`` and ``--sweep`` for TGI and SGLang commands.

Every cell or sweep point is ``kvlint plan`` of the typed command with the engine's own settings changed
(:func:`kvlint.capacity.plan_command.plan_command` with ``flags``: TGI's ``num_shard``, ``kv_cache_dtype``,
``max_total_tokens``...; SGLang's ``tp_size``, ``context_length``, ``mem_fraction_static``...), so the memory
figures are the engine's memory model's (:func:`kvlint.memory.tgi.plan_tgi_detailed`,
:func:`kvlint.memory.sglang.plan_sglang_detailed`) exactly as ``kvlint plan`` prints them for that command, and
the verdict is ``kvlint plan``'s: ``fits`` (ok), ``risky`` (KV105, KV702), ``fails`` (an error of the memory rules:
the warmup or the KV pool does not fit, :data:`MEMORY_RULES`) or ``refused`` (any other error: the launcher, the
router or the server refuses the settings before sizing memory, the rule named). The largest length that fits
is sought with the same model (:func:`kvlint.memory.stage.replan`).

``kvlint simulate`` stays vLLM's: it replays vLLM V1's scheduler (admission by free paged blocks, chunked prefill
under ``max_num_batched_tokens``, preemption by recompute), which TGI's router (token budget
``max_batch_total_tokens``, no preemption) and SGLang's scheduler (radix cache, ``new_token_ratio`` admission,
retraction) do not share.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kvlint.capacity.compare import CompareRow, candidate_accelerators
from kvlint.capacity.engine_terms import TERMS, EngineTerms
from kvlint.capacity.sweep import SweepError, SweepPoint, parse_sweep
from kvlint.types import ENGINE_NAMES, Accelerator, MemoryPlan

__all__ = [
    "MEMORY_RULES",
    "TERMS",
    "CommandContext",
    "EngineTerms",
    "cell_verdict",
    "command_engine",
    "compare",
    "largest_length",
    "parse_engine_sweep",
    "resolve_command",
    "sweep",
]

if TYPE_CHECKING:
    from kvlint.accelerators.site import Site
    from kvlint.capacity.plan_command import PlanOutput
    from kvlint.options import Options


#: Rules whose error means the engine starts sizing memory and runs out (``fails``): vLLM's capacity rules,
#: TGI's warmup (KV603 max-total-tokens above the KV cache, KV604 the prefill batch) and SGLang's empty KV pool
#: (KV701). Any other error is a refusal before memory is sized (``refused``).
MEMORY_RULES = frozenset({"KV101", "KV102", "KV103", "KV106", "KV107", "KV108", "KV603", "KV604", "KV701"})


@dataclass(frozen=True)
class CommandContext:
    """A TGI or SGLang command line resolved for the capacity tables: ``argv``, the ``options`` it is planned
    with, ``out`` its ``kvlint plan`` (on ``--accelerator`` when given), ``engine`` (``tgi`` | ``sglang``)."""

    argv: tuple[str, ...]
    options: Options
    out: PlanOutput
    engine: str
    #: the command's ``--config FILE`` is read from this machine (``kvlint plan``'s own command line), in each cell too
    local_config: bool = False

    @property
    def terms(self) -> EngineTerms:
        """The engine's names (:data:`TERMS`)."""
        return TERMS[self.engine]

    @property
    def accelerator(self) -> Accelerator | None:
        """The GPU of ``--accelerator``/``--gpu-memory`` (None without one)."""
        p = self.out.result.placement
        return p.accelerator if p else None

    @property
    def version_read(self) -> str:
        """The release the command or ``--engine-version`` names, or ``""``."""
        return self.out.result.serving.version or ""

    @property
    def version_assumed(self) -> bool:
        """No release named: the newest kvlint models is assumed."""
        return not self.version_read

    @property
    def release(self) -> str:
        """The release planned (``3.3.7``): the one named, else the one the memory model assumed."""
        from kvlint.memory.sglang import sglang_version
        from kvlint.memory.tgi import tgi_version

        read = tgi_version if self.engine == "tgi" else sglang_version
        v = read(self.version_read or None)[0]
        return self.version_read or str(v)

    @property
    def engine_label(self) -> str:
        """``TGI 3.3.7`` / ``SGLang 0.5.23 (assumed)``: the release the numbers are for."""
        return f"{ENGINE_NAMES[self.engine]} {self.release}" + (" (assumed)" if self.version_assumed else "")

    @property
    def version_note(self) -> str:
        """A sentence saying the engine version was assumed (empty when the command or --engine-version gave it)."""
        if not self.version_assumed:
            return ""
        return (
            f"No engine version given: the newest release kvlint models ({ENGINE_NAMES[self.engine]} "
            f"{self.release}) is assumed; pass --engine-version for the release you run."
        )


def command_engine(argv: list[str], options: Options) -> str | None:
    """The engine of ``argv`` (``vllm`` | ``tgi`` | ``sglang``) as ``kvlint plan`` reads it, or None when the
    parser does not know the command (``kvlint plan`` says why)."""
    from kvlint.engines import parse_command_line

    try:
        return parse_command_line(list(argv), options.engine_version).engine
    except ValueError:
        return None


def resolve_command(argv: list[str], options: Options, *, local_config: bool = False) -> CommandContext:
    """``kvlint plan`` of a TGI or SGLang ``argv``; raises :class:`~kvlint.capacity.context.CapacityError` when
    the command cannot be planned or its model has no config.json (the message says how to provide one).
    ``local_config``: read the command's ``--config FILE`` from this machine, as ``kvlint plan`` does
    (:func:`kvlint.capacity.plan_command.plan_command`)."""
    from kvlint.capacity.context import CapacityError
    from kvlint.capacity.plan_command import PlanRequestError, plan_command

    try:
        out = plan_command(list(argv), options, local_config=local_config)
    except PlanRequestError as exc:
        raise CapacityError(str(exc)) from exc
    cr = out.result
    if cr.model is None:
        raise CapacityError(str(cr.model_error or "model unavailable"))
    return CommandContext(tuple(argv), options, out, cr.serving.engine, local_config)


def plan_cell(
    ctx: CommandContext, acc: Accelerator, flags: dict[str, Any], *, gpu_memory: bool = False
) -> PlanOutput:
    """``kvlint plan --accelerator ACC`` of the command with ``flags`` set (None unsets one): the cell's plan.
    ``gpu_memory``: keep ``--gpu-memory`` (a sweep on the command's own GPU); a comparison plans each GPU's
    catalogue total."""
    from kvlint.capacity.plan_command import plan_command

    opts = ctx.options if gpu_memory else dataclasses.replace(ctx.options, gpu_memory_bytes=None)
    return plan_command(list(ctx.argv), opts, flags=flags, accelerator=acc, local_config=ctx.local_config)


def cell_verdict(out: PlanOutput) -> tuple[str, str, str]:
    """``(verdict, reason, refused_by)`` of a cell from its ``kvlint plan`` (see the module docstring); the
    reason is the memory model's own clause (:func:`kvlint.memory.stage.fit_assessment`) where it has one, else
    the finding's first sentence."""
    from kvlint.capacity.plan_command import RISKY_RULES
    from kvlint.memory.stage import fit_assessment

    detail = out.result.plan_detail
    clause = fit_assessment(detail)[1] if detail is not None else None
    verdict = out.verdict
    if verdict == "unknown":
        return "error", out.result.plan_error or "no plan", ""
    if verdict == "ok":
        return "fits", "", ""
    if verdict == "risky":
        d = next(d for d in out.diagnostics if d.rule in RISKY_RULES)
        return "risky", clause or _first_sentence(d.message), ""
    err = next(d for d in out.diagnostics if d.severity == "error")
    if err.rule in MEMORY_RULES:
        return "fails", clause or _first_sentence(err.message), ""
    return "refused", _first_sentence(err.message), err.rule


def kv_bytes_shown(p: MemoryPlan) -> int:
    """The KV cache bytes per GPU a TGI or SGLang cell shows: the plan's, or 0 when it has no KV blocks (the engine
    exits before allocating any: a TGI warmup that runs out of memory left 1.02 GiB in a sweep row whose blocks and
    tokens were 0, while ``--compare`` showed 0.00 where the memory left was negative)."""
    return p.kv_cache_bytes if p.num_blocks > 0 else 0


def kv_tokens_shown(p: MemoryPlan) -> int:
    """The KV tokens of one replica a TGI or SGLang cell shows: the plan's, or 0 when it has no KV blocks
    (:func:`kv_bytes_shown`)."""
    return p.capacity_tokens if p.num_blocks > 0 else 0


def _kv_dtype_flag(ctx: CommandContext, value: object) -> object:
    """The ``kv_cache_dtype`` setting a cell types for ``value``: TGI's ``auto`` is the flag unset (None; its
    launcher has no ``auto``, the model's dtype is its default), anything else as given."""
    return None if value == "auto" and ctx.engine == "tgi" else value


def _first_sentence(text: str) -> str:
    """``text`` up to its first ``". "`` (a finding's statement without its arithmetic)."""
    return text.split(". ", 1)[0].rstrip(".")


def _row_figures(out: PlanOutput) -> tuple[int, int, int, float, int, int]:
    """(weights, KV bytes per GPU, KV tokens, concurrency at the length, the length, GPUs per replica) of a plan.
    A plan without KV blocks (TGI's warmup ran out of memory, SGLang has no pool) has no KV cache: 0 bytes, as its
    tokens, though memory may be left beside the warmup's activation (:func:`kv_bytes_shown`)."""
    p = out.result.plan
    assert p is not None
    return (
        p.weights_bytes,
        kv_bytes_shown(p),
        kv_tokens_shown(p),
        p.max_concurrency,
        p.max_model_len,
        p.tensor_parallel_size * p.pipeline_parallel_size,
    )


#: The shortest length :func:`largest_length` tries: SGLang up to 0.5.13 refuses a context of 6 tokens or fewer
#: (``max_req_input_len = min(context_length - 1, pool - 1) - 5 <= 0``, :func:`kvlint.memory.sglang.pool_starts`),
#: so the search starts above that; no one serves requests this short.
_SHORTEST = 16


def largest_length(ctx: CommandContext, out: PlanOutput) -> int:
    """The largest per-request length (TGI ``max_total_tokens``, SGLang ``context_length``) with which the
    engine starts and one such request fits the point estimate, up to the length derived from config.json; 0
    when not even :data:`_SHORTEST` tokens fit. TGI: :func:`kvlint.memory.tgi.tgi_starts` (launcher, warmup and router checks), with
    ``max_input_tokens`` below the length: the user's when smaller; else, before TGI 2.4.1, the launcher's fixed
    default when the length is above it (what TGI runs with when only ``--max-total-tokens`` is typed) and one token
    less than the length otherwise (what a user must type then); from 2.4.1 one token less (the router's
    inference); SGLang: the server accepts the length and its pool starts (:func:`kvlint.memory.sglang.pool_starts`)
    and holds it (SGLang caps a request at ``min(context_length - 1, pool - 1)`` tokens, ``max_req_len`` of
    sglang/srt/managers/tp_worker.py::TpModelWorker: at a context_length of the pool's size the pool cuts nothing the
    context does not, one token more and it does, KV702). Searched by bisection over re-plans of the same
    model (:func:`kvlint.memory.stage.replan`), the plan's assumptions being monotone in the length."""
    from kvlint.memory.sglang import SglangPlanDetail, pool_starts
    from kvlint.memory.stage import replan
    from kvlint.memory.tgi import INFERRED_LIMITS_FROM, TgiPlanDetail, tgi_starts, tgi_version

    cr = out.result
    if cr.plan is None or cr.placement is None:
        return 0
    top = max(cr.plan.derived_max_model_len or 0, cr.plan.max_model_len)
    user_input = cr.serving.get("max_input_tokens") if ctx.engine == "tgi" else None
    # TGI before 2.4.1 defaults max_input_tokens to min(max_position_embeddings, 4096) - 1 whatever max_total_tokens
    # is (tgi@v2.3.0:launcher/src/main.rs::main, "Default `max_input_tokens` to N"), and refuses a max_total_tokens
    # at or below it ("`max_input_tokens must be < `max_total_tokens`"): a longer length keeps that default (and its
    # prefill default, + 50), a shorter one needs --max-input-tokens typed below it. From 2.4.1 the router infers
    # max_input_tokens = max_total_tokens - 1 when only the total is typed.
    fixed_input: int | None = None
    if ctx.engine == "tgi" and not user_input and isinstance(cr.plan_detail, TgiPlanDetail):
        v, _assumed = tgi_version(cr.serving.version)
        if v < INFERRED_LIMITS_FROM:
            fixed_input = cr.plan_detail.max_input_tokens

    def fits(length: int) -> bool:
        changes: dict[str, Any] = {ctx.terms.length: length}
        if ctx.engine == "tgi":
            # below the length, as the launcher requires (KV601)
            if user_input:
                changes["max_input_tokens"] = min(int(user_input), length - 1)
            elif fixed_input is None or length <= fixed_input:
                changes["max_input_tokens"] = length - 1
        d = replan(cr, None, **changes)
        if d is None:
            return False
        if isinstance(d, SglangPlanDetail):
            return (
                d.context_error is None
                and pool_starts(d.version, d.max_total_num_tokens, d.context_length)
                and d.max_total_num_tokens >= length
            )
        return tgi_starts(d)

    if top < _SHORTEST or not fits(_SHORTEST):
        return 0
    if fits(top):
        return top
    lo, hi = _SHORTEST, top  # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def kv_dtypes(ctx: CommandContext) -> tuple[str, ...]:
    """The KV-cache dtypes a comparison tries (:attr:`EngineTerms.kv_dtypes`), less fp8 for a TGI release without
    ``--kv-cache-dtype`` (before 2.4.0: :data:`kvlint.engines.tgi.KV_CACHE_DTYPE_FROM`), whose KV cache always has
    the model's dtype."""
    from kvlint.engines.tgi import has_kv_cache_dtype

    if ctx.engine == "tgi" and not has_kv_cache_dtype(ctx.version_read or None):
        return ("auto",)
    return ctx.terms.kv_dtypes


def compare(
    ctx: CommandContext,
    accelerators: list[str] | None = None,
    tp_sizes: tuple[int, ...] = (1, 2, 4, 8),
    site: Site | None = None,
) -> list[CompareRow]:
    """The comparison rows of a TGI or SGLang command over ``accelerators`` (default: the fleet) x TP sizes (the
    engine's ``--num-shard`` / ``--tp-size``) x KV-cache dtypes (:attr:`EngineTerms.kv_dtypes`). TP sizes that do
    not divide the model's attention heads are skipped, as in vLLM's table (both engines refuse them: KV401).
    Raises ValueError for unknown accelerator ids."""
    rows: list[CompareRow] = []
    model = ctx.out.result.model
    heads = (model.num_attention_heads if model else 0) or 1
    terms = ctx.terms
    for acc in candidate_accelerators(accelerators, site):
        for tp in tp_sizes:
            if heads % tp:
                continue
            for kvd in kv_dtypes(ctx):
                flags = {
                    terms.tp: tp,
                    "kv_cache_dtype": _kv_dtype_flag(ctx, kvd),
                }
                out = plan_cell(ctx, acc, flags)
                verdict, reason, refused_by = cell_verdict(out)
                if out.result.plan is None:  # refused before any memory is sized, or no plan at all
                    verdict = verdict if verdict == "refused" else "error"
                    err = "" if verdict == "refused" else reason
                    rows.append(
                        CompareRow(
                            acc.id, tp, kvd, False, 0, 0, 0, 0.0, 0, 0, tp, err, verdict, reason, refused_by
                        )
                    )
                    continue
                w, kv, tok, conc, length, gpus = _row_figures(out)
                rows.append(
                    CompareRow(
                        acc.id,
                        tp,
                        kvd,
                        verdict in ("fits", "risky") and conc >= 1,
                        w,
                        kv,
                        tok,
                        conc,
                        length,
                        largest_length(ctx, out),
                        gpus,
                        "",
                        verdict,
                        reason,
                        refused_by,
                    )
                )
    return rows


def parse_engine_sweep(ctx: CommandContext, spec: str) -> tuple[str, list[object]]:
    """``--sweep NAME=SPEC`` for this engine's settings (:attr:`EngineTerms.sweepable`), read as vLLM's are
    (:func:`kvlint.capacity.sweep.parse_sweep`). vLLM's name of a setting the engine calls otherwise is a
    :class:`SweepError` naming the engine's (``max-model-len`` -> TGI's ``max-total-tokens``)."""
    from kvlint.engines.options import COUNTERPARTS

    name = ENGINE_NAMES[ctx.engine]
    terms = ctx.terms
    key = spec.partition("=")[0].strip().lstrip("-").replace("_", "-")
    if key not in terms.sweepable:
        own = COUNTERPARTS.get(name, {}).get("--" + key)
        hint = f" ({name} calls it {own[0].split()[0].lstrip('-')})" if own else ""
        raise SweepError(
            f"--sweep '{spec}': this is {'an' if name == 'SGLang' else 'a'} {name} command{hint}; NAME is one of "
            f"{', '.join(terms.sweepable)}"
        )
    return parse_sweep(spec, sweepable=terms.sweepable, fractions=terms.fractions)


def sweep(ctx: CommandContext, acc: Accelerator, spec: str) -> tuple[str, list[SweepPoint]]:
    """Re-plan the command on ``acc`` for each value of ``spec`` (``kvlint plan`` with that setting typed; a KV
    dtype ``auto`` of TGI is the flag unset). Returns (setting dest name, points). Raises :class:`SweepError`."""
    dest, values = parse_engine_sweep(ctx, spec)
    allowed = ctx.terms.kv_dtype_choices
    unknown = [str(v) for v in values if dest == "kv_cache_dtype" and v not in allowed]
    if dest == "kv_cache_dtype" and kv_dtypes(ctx) == ("auto",) and any(v != "auto" for v in values):
        raise SweepError(
            f"--sweep '{spec}': TGI {ctx.version_read} has no --kv-cache-dtype (TGI accepts it from 2.4.0); its KV "
            "cache has the model's dtype"
        )
    if unknown:
        name = ENGINE_NAMES[ctx.engine]
        raise SweepError(
            f"--sweep '{spec}': {name} does not accept --kv-cache-dtype {', '.join(unknown)}; it accepts "
            f"{', '.join(allowed)}"
            + (" (auto: the flag unset, the model's dtype)" if ctx.engine == "tgi" else "")
        )
    pts = []
    for v in values:
        value = _kv_dtype_flag(ctx, v) if dest == "kv_cache_dtype" else v
        out = plan_cell(ctx, acc, {dest: value}, gpu_memory=True)
        verdict, reason, refused_by = cell_verdict(out)
        p = out.result.plan
        if p is None and verdict == "refused":  # the engine refuses this value before sizing memory
            pts.append(SweepPoint(v, 0, 0, 0, 0, 0.0, False, 0, 0, verdict, reason, refused_by))
            continue
        if p is None:
            raise SweepError(f"--sweep {dest.replace('_', '-')}={v}: {reason}")
        pts.append(
            SweepPoint(
                v,
                kv_bytes_shown(p),
                p.num_blocks,
                kv_tokens_shown(p),
                p.max_model_len,
                p.max_concurrency,
                verdict in ("fits", "risky") and p.max_concurrency >= 1,
                largest_length(ctx, out),
                p.max_num_seqs,
                verdict,
                reason,
                refused_by,
            )
        )
    return dest, pts
