"""Capacity family (KV101-KV108): does the model, its KV cache and the requested context fit the GPU.

KV101-KV105 read the engine's memory plan (:mod:`kvlint.memory`) and state the per-GPU arithmetic; every
remedy they print was planned again with the remedy applied (:mod:`kvlint.rules.remedies`) and passed the
same test, at the low end of kvlint's prediction band too, so applying it does not trade an error for a
KV105. For vLLM the verdict follows the start-up checks of ``vllm/v1/core/kv_cache_utils.py``
(docs/engine-memory-model.md §1.11 E1/E2); for TGI the warmup of ``flash_causal_lm.py::FlashCausalLM.warmup`` and
the router's token limits (§2.3); for SGLang ``ModelRunner.init_memory_pool`` (§3.3).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from kvlint.engines.layout import MEMORY_FRACTION
from kvlint.engines.tgi import tgi_option
from kvlint.memory.calibration import BAND_REL, band_bytes
from kvlint.memory.sglang import CUDA_CONTEXT_BYTES, SglangPlanDetail
from kvlint.memory.stage import PlanDetail, plan_settings, utilization_planner
from kvlint.memory.tgi import FLASHINFER_WORKSPACE_BYTES, INFERRED_LIMITS_FROM, TgiPlanDetail
from kvlint.memory.versions import (
    default_gpu_memory_utilization,
    has_extensible_kv_cache,
    has_kv_cache_memory_bytes,
    parse_version,
)
from kvlint.memory.vllm import VllmPlanDetail, largest_fitting_max_model_len, override_over_device
from kvlint.models.weights import linear_bytes_per_param
from kvlint.numbers import fraction, times
from kvlint.rules.context import GiB, RuleContext, gib
from kvlint.rules.families.hardware import fp8_support
from kvlint.rules.families.parallelism import _on_mig, kv_heads_tp_ok, mps_one_replica, pod_known, shm_note
from kvlint.rules.families.tgi import more_shards, tgi_starts, tgi_starts_in_band
from kvlint.rules.registry import check
from kvlint.rules.remedies import (
    MIN_USEFUL_MAX_MODEL_LEN,
    descending_fitting,
    first_fitting,
    largest_fitting,
    replanned,
    smallest_fitting,
)
from kvlint.types import ContainerResult, Diagnostic, MemoryPlan
from kvlint.values import as_float

# ---------------------------------------------------------------------------------------------------------
# vLLM: one verdict, five rules


def _kv_bytes_bypass(ctx: RuleContext) -> bool:
    """True when ``--kv-cache-memory-bytes`` fixes the KV size (vLLM >= 0.10.2; utilization is then ignored,
    ``vllm/v1/worker/gpu_worker.py::determine_available_memory``)."""
    s = ctx.cr.settings
    if s is None or getattr(s, "kv_cache_memory_bytes", None) is None:
        return False
    return bool(has_kv_cache_memory_bytes(parse_version(ctx.serving.version)))


def _band(ctx: RuleContext) -> float:
    """KV105's ``band`` parameter: the share of the KV cache a fit must keep spare to be called robust."""
    return float(ctx.param("band", "KV105"))


def _min_concurrency(ctx: RuleContext) -> float:
    """KV104's ``min_concurrency`` parameter (full-length requests the KV cache must hold at once), which every
    capacity remedy aims at so that applying one does not trade its finding for KV104."""
    return float(ctx.param("min_concurrency", "KV104"))


def _below_kv104(ctx: RuleContext, concurrency: float) -> str:
    """The explicit statement a remedy carries when it leaves fewer than KV104's ``min_concurrency``
    full-length requests (``concurrency``, requests at once), else ''."""
    want = _min_concurrency(ctx)
    if concurrency >= want:
        return ""
    return (
        f"; it leaves {times(concurrency, want)} concurrent full-length requests, below KV104's minimum of {want:g}, so "
        "KV104 then warns"
    )


#: each heuristic term of a plan's KV band: (short name, what it is), as the band explanation names it
_TERM_NAMES = {
    "activation": ("activation", "activation peak of the profiling pass"),
    "non_torch": ("non-torch", "non-torch memory (CUDA context, NCCL buffers)"),
    "cudagraph": ("CUDA graph", "CUDA graph pool"),
    "sampler": ("sampler", "activation of the other top-k/top-p sampler the image may pick"),
    "prefill": ("warmup activation", "activation of the warmup prefill batch"),
}


@dataclass(frozen=True)
class BandDriver:
    """The heuristic term that dominates the pessimistic side of a plan's KV band, per GPU: ``short``/``what``
    name it, ``term_bytes`` is kvlint's estimate of it, ``share_bytes`` its part of the band and ``half_bytes``
    the whole distance from the predicted to the pessimistic KV cache."""

    short: str
    what: str
    term_bytes: int
    share_bytes: int
    half_bytes: int

    def text(self) -> str:
        """'the largest share from its [heuristic] estimate of the ... (3.62 GiB: 1.27 GiB of the 2.70 GiB ...)'."""
        return (
            f"the largest share from its [heuristic] estimate of the {self.what}, {gib(self.term_bytes)}, which "
            f"accounts for {gib(self.share_bytes)} of the {gib(self.half_bytes)} between the predicted and the "
            "pessimistic KV cache"
        )


def band_driver(ctx: RuleContext) -> BandDriver | None:
    """The heuristic term that dominates the pessimistic side of the plan's KV band (bytes per GPU).

    vLLM: the distance is :func:`kvlint.memory.calibration.band_bytes` of activation + non-torch + CUDA graphs (a
    fixed part plus ``BAND_REL`` of each term) plus, before 0.11.1, the other sampler's activation; TGI:
    ``±50 %`` of non-torch and the warmup prefill activation (:mod:`kvlint.memory.tgi`). None for SGLang or when
    the band is empty (``--kv-cache-memory-bytes``)."""
    plan = ctx.plan
    if plan is None:
        return None
    half = plan.kv_cache_bytes - plan.kv_cache_bytes_low
    if half <= 0:
        return None
    if ctx.engine == "vllm":
        act, nt, cg = plan.activation_bytes, plan.non_torch_bytes, plan.cudagraph_bytes
        terms = [
            ("activation", act, int(BAND_REL * act)),
            ("non_torch", nt, int(BAND_REL * nt)),
            ("cudagraph", cg, int(BAND_REL * cg)),
        ]
        sampler = half - band_bytes(act + nt + cg)
        if sampler > 0:
            terms.append(("sampler", sampler, sampler))
    elif ctx.engine == "tgi":
        act, nt = plan.activation_bytes, plan.non_torch_bytes
        if act + nt <= 0:
            return None
        terms = [("prefill", act, half * act // (act + nt)), ("non_torch", nt, half * nt // (act + nt))]
    else:
        return None
    key, term, share = max(terms, key=lambda t: t[2])
    if share <= 0:
        return None
    short, what = _TERM_NAMES[key]
    return BandDriver(short, what, term, share, half)


def _vllm_verdict(ctx: RuleContext) -> str | None:
    """Which capacity rule the vLLM plan breaks, at most one, in the order the engine meets them:
    ``KV101`` (weights over the budget, or with ``--kv-cache-memory-bytes`` over the device), ``KV102`` (no
    KV memory), ``KV101`` again (the KV cache ``--num-gpu-blocks-override`` allocates after the fit check, with
    everything else, over the device: :func:`override_overshoot`), ``KV103`` (one max-model-len request cannot fit even at the optimistic bound), ``KV105`` (the
    verdict flips inside the band, or the spare room is within ``band``), ``KV104`` (fewer than
    ``min_concurrency`` requests at max-model-len); None when it fits."""
    plan = ctx.plan
    if plan is None or not (0.0 < plan.gpu_memory_utilization <= 1.0):
        return None  # KV107 reports the value; a plan built on it would mislead
    bypass = _kv_bytes_bypass(ctx)
    if bypass and plan.budget_bytes > plan.total_bytes:
        return "KV101"
    if not bypass and plan.weights_bytes > plan.budget_bytes:
        return "KV101"
    if plan.kv_cache_bytes <= 0:
        return "KV102"
    if override_overshoot(ctx) is not None:
        return "KV101"
    if plan.max_model_len_source == "auto":
        return None
    if plan.max_concurrency_high < 1.0:
        return "KV103"
    if plan.max_concurrency_low < 1.0:
        return "KV105"
    headroom = plan.kv_cache_bytes - plan.per_request_bytes
    if plan.max_concurrency < 1.25 and 0 <= headroom < _band(ctx) * plan.kv_cache_bytes:
        return "KV105"
    if plan.max_concurrency < float(ctx.param("min_concurrency", "KV104")):
        return "KV104"
    return None


@dataclass(frozen=True)
class OverrideOvershoot:
    """A ``--num-gpu-blocks-override`` whose KV cache does not fit the device beside everything else, bytes per GPU.

    ``blocks`` the override; ``kv_bytes`` = ``blocks`` x the plan's bytes per block, what vLLM allocates;
    ``other_bytes`` the activation peak, non-torch memory and CUDA graphs at the optimistic end of kvlint's band
    (``budget - weights - kv_cache_bytes_high``, at least 0: the band's fixed part can take them all); ``total_bytes`` the device; ``allocates``: the weights, the non-torch
    memory and the KV cache fit the device (central estimate), so the allocation succeeds and what is short is the
    activation peak and the graphs', else the allocation itself fails."""

    blocks: int
    kv_bytes: int
    other_bytes: int
    total_bytes: int
    allocates: bool


def override_overshoot(ctx: RuleContext) -> OverrideOvershoot | None:
    """The vLLM container's ``--num-gpu-blocks-override`` when its KV cache, with the weights and the other terms
    at the optimistic end of kvlint's band, exceeds the device's total memory
    (:func:`kvlint.memory.vllm.override_over_device`, which says how vLLM applies the override); else None (no
    override, no plan, or it fits)."""
    plan = ctx.plan
    blocks = getattr(ctx.cr.settings, "num_gpu_blocks_override", None)
    if plan is None or ctx.engine != "vllm" or not isinstance(blocks, int) or blocks <= 0:
        return None
    return _overshoot(plan, blocks)


def _overshoot(plan: MemoryPlan, blocks: int) -> OverrideOvershoot | None:
    """:func:`override_overshoot` of ``blocks`` on the vLLM ``plan`` (bytes per GPU)."""
    over = override_over_device(plan, blocks)
    if over is None:
        return None
    kv, other = over
    allocates = plan.weights_bytes + plan.non_torch_bytes + kv <= plan.total_bytes
    return OverrideOvershoot(blocks, kv, other, plan.total_bytes, allocates)


def _plan_summary(plan: MemoryPlan) -> str:
    """The per-GPU budget equation, as every vLLM capacity message states it."""
    if plan.budget_bytes != math.ceil(
        plan.total_bytes * plan.gpu_memory_utilization
    ) and plan.kv_cache_bytes == (plan.kv_cache_bytes_low):
        return (
            f"per GPU: {gib(plan.weights_bytes)} weights + {gib(plan.activation_bytes)} activation + "
            f"{gib(plan.non_torch_bytes)} non-torch + {gib(plan.cudagraph_bytes)} CUDA graphs + "
            f"{gib(plan.kv_cache_bytes)} KV cache (--kv-cache-memory-bytes) = {gib(plan.budget_bytes)} of "
            f"{gib(plan.total_bytes)}"
        )
    # vLLM >= 0.34.0's extensible KV cache also keeps a margin (and the CUDA context) free when the device, not the
    # budget, bounds the pool (docs/engine-memory-model.md §1.2.5): the equation names it so that it adds up
    kept = (
        plan.budget_bytes
        - plan.weights_bytes
        - plan.activation_bytes
        - plan.non_torch_bytes
        - plan.cudagraph_bytes
        - plan.kv_cache_bytes
    )
    return (
        f"per GPU: {gib(plan.total_bytes)} x {fraction(plan.gpu_memory_utilization)} = {gib(plan.budget_bytes)} budget"
        f" - {gib(plan.weights_bytes)} weights - {gib(plan.activation_bytes)} activation"
        f" - {gib(plan.non_torch_bytes)} non-torch"
        + (f" - {gib(plan.cudagraph_bytes)} CUDA graphs" if plan.cudagraph_bytes else "")
        + (f" - {gib(kept)} kept free (extensible KV cache margin and CUDA context)" if kept > 0 else "")
        + f" = {gib(plan.kv_cache_bytes)} KV cache (range {gib(plan.kv_cache_bytes_low)} to {gib(plan.kv_cache_bytes_high)})"
    )


def _fits(plan: MemoryPlan, min_concurrency: float, band: float) -> bool:
    """A vLLM remedy counts only if the re-planned workload is robustly fine: ``min_concurrency`` requests
    of max-model-len fit at the central estimate, one fits at the low end of the band, and the spare room is
    not within ``band`` (KV105's parameter) of the limit -- so applying it never produces KV103 or KV105."""
    if plan.kv_cache_bytes <= 0:
        return False
    if plan.max_concurrency < min_concurrency or plan.max_concurrency_low < 1.0:
        return False
    headroom = plan.kv_cache_bytes - plan.per_request_bytes
    return plan.max_concurrency >= 1.25 or headroom >= band * plan.kv_cache_bytes


def _join(*fixes: str) -> str:
    return "; or ".join(f for f in fixes if f)


def _aimed(ctx: RuleContext, remedy: Callable[[RuleContext, float], str]) -> str:
    """``remedy`` aimed at KV104's ``min_concurrency`` when some value reaches it; else aimed at one request,
    and the text then says that KV104 still warns (:func:`_below_kv104`), so no remedy silently trades one
    capacity finding for another."""
    return remedy(ctx, _min_concurrency(ctx)) or remedy(ctx, 1.0)


#: GPUs of the largest common GPU node (HGX/DGX, cloud 8-GPU machine types): a remedy that asks one pod for more
#: is not offered (KV403 says the same of a command that needs more).
NODE_GPUS = 8


def _one_pod(ctx: RuleContext) -> bool:
    """The engine runs in one pod: no Ray executor, no ``--nnodes``, no LeaderWorkerSet or Ray group."""
    lay, w = ctx.layout, ctx.workload
    return not lay.ray and lay.nnodes <= 1 and not (w.group_size and w.group_size > 1)


def _on_mig_slices(ctx: RuleContext) -> bool:
    """Whether the pod runs on MIG slices (:func:`kvlint.rules.families.parallelism._on_mig`: a ``nvidia.com/mig-``
    resource, or ``nvidia.com/gpu`` on nodes whose GFD product or GKE partition label names a slice, or ``--gpu-memory``
    on a MIG resource). CUDA enumerates one MIG device per process, so no remedy may offer more tensor-parallel
    GPUs there (KV403 would refuse it: ``_mig_slices``)."""
    p = ctx.placement
    return p is not None and (
        _on_mig(p) or bool(p.memory_bytes_override and "mig" in (p.resource or p.how or "").lower())
    )


def _more_gpus(ctx: RuleContext) -> str:
    """The "more GPUs" part of a capacity fallback: ``--tensor-parallel-size``, or -- when the pod already runs
    :data:`NODE_GPUS` / 2 or more GPUs' worth of TP x PP x local DP, so a larger TP would not fit one node -- more
    nodes (pipeline parallelism across pods); on MIG slices (:func:`_on_mig_slices`), whole GPUs first."""
    if _on_mig_slices(ctx):
        return "whole GPUs (nvidia.com/gpu on nodes without MIG: a process sees one MIG slice, so slices add none)"
    if mps_one_replica(ctx):
        return (
            "GPUs not shared through MPS (the device plugin gives a container one MPS replica at most, KV410)"
        )
    plan = ctx.plan
    if plan is not None and _one_pod(ctx):
        gpus = plan.tensor_parallel_size * plan.pipeline_parallel_size * ctx.layout.dp_local
        if gpus * 2 > NODE_GPUS:
            return (
                f"more nodes (this pod's {gpus} GPUs leave no room for a larger tensor-parallel size on one "
                f"{NODE_GPUS}-GPU node: pipeline parallelism across pods, a LeaderWorkerSet or a Ray cluster)"
            )
    return "more GPUs (--tensor-parallel-size)"


def _tp_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """The smallest valid TP (2, 4, 8 above the current one) that makes the plan fit. In one pod (no
    LeaderWorkerSet or Ray group, no ``--nnodes``) a TP whose pod would need more than :data:`NODE_GPUS` GPUs
    (TP x PP x local DP) is not offered: no common node has them (KubeAI's Llama-3.1-70B at PP 4 on L4s was told
    TP 4, 16 GPUs per pod). None on MPS-shared nodes (:func:`~kvlint.rules.families.parallelism.mps_one_replica`)."""
    m, plan = ctx.model, ctx.plan
    if m is None or plan is None:
        return ""
    if _on_mig_slices(ctx):  # CUDA enumerates one MIG slice per process; no peer-to-peer path between them
        return ""
    if mps_one_replica(ctx):  # one MPS replica per container (KV410): no second GPU for the pod
        return ""
    cur, band = plan.tensor_parallel_size, _band(ctx)
    lay = ctx.layout
    one_pod, per_pod = _one_pod(ctx), plan.pipeline_parallel_size * lay.dp_local
    sizes = [
        t
        for t in (2, 4, 8)
        if t > cur
        and not m.num_attention_heads % t
        and (m.is_mla or kv_heads_tp_ok(m.num_kv_heads, t))
        and (not one_pod or t * per_pod <= NODE_GPUS)
    ]
    found = first_fitting(
        sizes,
        lambda t: replanned(ctx.cr, tensor_parallel_size=t),
        lambda d: _fits(d.plan, min_concurrency, band),
    )
    if found is None:
        return ""
    t, d = found
    # the pod runs every local data-parallel engine's TP x PP workers (KV403's count, kvlint.engines.layout)
    dp_local = lay.dp_local
    return (
        f"--tensor-parallel-size {t} (and {t * plan.pipeline_parallel_size * dp_local} GPUs"
        f"{' per pod' if pod_known(ctx) else ''}{shm_note(ctx)}) fits: "
        f"{gib(d.plan.kv_cache_bytes)} KV per GPU, {d.plan.capacity_tokens:,} tokens, {d.plan.max_concurrency:.2f}x"
        + _below_kv104(ctx, d.plan.max_concurrency)
    )


def _lighter_checkpoints(ctx: RuleContext, online_fp8: str, four_bit: str) -> list[tuple[str, str]]:
    """``(quantization method to re-plan with, what to tell the user)`` of the lighter checkpoints a KV101 remedy
    tries, lightest last: for an unquantized model, the engine's online FP8 (``online_fp8``) on a GPU with FP8
    support, then a 4-bit AWQ/GPTQ build (``four_bit``, planned as the linear weights at AWQ's rate,
    ``docs/engine-memory-model.md`` §1.13); for a model quantized heavier than 4 bits, the 4-bit build."""
    m, p = ctx.model, ctx.placement
    if m is None:
        return []
    current = (m.quant_method or "").lower()
    acc = p.accelerator if p is not None else None
    out: list[tuple[str, str]] = []
    if not current and acc is not None and acc.fp8:
        out.append(("fp8", online_fp8))
    if not current or linear_bytes_per_param(current, m.quant_config, 2)[0] > 0.75:
        out.append(("awq", four_bit))
    return out


def _quant_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """A lighter checkpoint, re-planned: for an unquantized model, ``--quantization fp8`` (vLLM's online FP8,
    offered on a GPU with FP8 support) and else a 4-bit AWQ/GPTQ build (planned as the linear weights at AWQ's
    rate, ``docs/engine-memory-model.md`` §1.13); for an FP8 model the 4-bit build. The first that fits is
    offered with its figures; none when none fits (the weights alone may exceed the GPU at 4 bits)."""
    if ctx.plan is None:
        return ""
    candidates = _lighter_checkpoints(
        ctx,
        "--quantization fp8 (vLLM quantizes this checkpoint's weights to FP8 at load)",
        "a 4-bit AWQ/GPTQ checkpoint of the model",
    )
    band = _band(ctx)
    found = first_fitting(
        candidates,
        lambda c: replanned(ctx.cr, quantization=c[0]),
        lambda d: _fits(d.plan, min_concurrency, band),
    )
    if found is None:
        return ""
    (_, what), d = found
    return (
        f"{what} fits: about {gib(d.plan.weights_bytes)} weights and {gib(d.plan.kv_cache_bytes)} KV per GPU, "
        f"{d.plan.max_concurrency:.2f}x" + _below_kv104(ctx, d.plan.max_concurrency)
    )


def _hundredths(share: float) -> int:
    """A memory fraction (0 - 1) in whole hundredths, rounded down, where the remedies that search a fraction in
    steps of 0.01 start (``0.9`` is 90 despite its binary value, ``0.925`` is 92)."""
    return int(math.floor(share * 100 + 1e-9))


def _util_ceiling(ctx: RuleContext) -> int:
    """The largest ``--gpu-memory-utilization`` a remedy may offer, in hundredths: 98, or on a GPU shared through MPS
    with a replica count (:attr:`~kvlint.types.Placement.mps_limit_bytes`) the most whose claim of the whole GPU, with
    :data:`_PROCESS_RESERVE`, fits the cap each client may allocate (KV106's arithmetic, :func:`_mps_claim`): vLLM
    finds no more than the cap free, so a remedy above it is refused at start-up (not with the extensible KV cache,
    which skips that check, :func:`_mps_claim`)."""
    p = ctx.placement
    if (
        ctx.engine == "vllm"
        and p is not None
        and p.mps_limit_bytes
        and p.memory_bytes
        and not _vllm_extensible(ctx)
    ):
        return min(98, _hundredths((p.mps_limit_bytes - _PROCESS_RESERVE) / p.memory_bytes))
    return 98


def _util_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """The smallest ``--gpu-memory-utilization`` (2 decimals, at most 0.98, or the MPS cap's :func:`_util_ceiling`)
    that makes the plan fit robustly
    (the KV budget grows monotonically with utilization, and nothing else changes with it).

    The candidates are planned with the start-up settled once (:func:`kvlint.memory.stage.utilization_planner`)
    and bracketed around the value where the KV pool would reach :func:`_fits`'s needs
    (:func:`_utilization_guess`); the answer is then re-planned in full (:func:`replanned`) and offered only if
    that plan fits."""
    plan = ctx.plan
    if plan is None:
        return ""
    band = _band(ctx)
    lo = _hundredths(plan.gpu_memory_utilization)  # hundredths; known not to fit
    planner = utilization_planner(ctx.cr)
    if planner is not None:
        at = planner

        def plan_for(h: int) -> PlanDetail | None:
            return at(h / 100)
    else:

        def plan_for(h: int) -> PlanDetail | None:
            return replanned(ctx.cr, gpu_memory_utilization=h / 100)

    def fits(d: PlanDetail) -> bool:
        return _fits(d.plan, min_concurrency, band)

    hi = _util_ceiling(ctx)  # 98, or what an MPS client's cap allows
    guess = _utilization_guess(plan, min_concurrency, band)
    if guess is not None:
        guess = min(max(guess, lo + 1), hi - 1)  # inside (lo, hi): a guess beyond the range tries its edge
    found = smallest_fitting(lo, hi, plan_for, fits, guess=guess)
    if found is None:
        return ""
    h, _ = found
    d = replanned(ctx.cr, gpu_memory_utilization=h / 100)  # the remedy itself, planned as the engine would
    if d is None or not fits(d):
        return ""
    return (
        f"--gpu-memory-utilization {h / 100:.2f} fits ({gib(d.plan.kv_cache_bytes)} KV per GPU, "
        f"{d.plan.max_concurrency:.2f}x) if nothing else uses the GPU"
        + _below_kv104(ctx, d.plan.max_concurrency)
    )


#: The smallest ``--max-num-batched-tokens`` a remedy proposes: vLLM's smallest V1 default (GPUs under 70 GiB and
#: A100s, ``vllm@0.33.0:vllm/engine/arg_utils.py::EngineArgs.get_batch_defaults``); a smaller prefill chunk
#: buys little activation memory and costs prefill throughput.
MIN_REMEDY_BATCHED_TOKENS = 2048


def _chunked_prefill_on(ctx: RuleContext) -> bool:
    """Whether the plan's vLLM prefills in chunks, so that ``max_num_batched_tokens`` may be below max-model-len:
    the V1 engine unless ``--no-enable-chunked-prefill`` (which V1 ignores before 0.11.1,
    :func:`kvlint.memory.defaults.v1_chunked_prefill_forced`). V0 is not counted on (its default depends on the
    length and the model), so a V0 plan keeps ``max_num_batched_tokens >= max_model_len`` (KV203)."""
    from kvlint.memory.defaults import v1_chunked_prefill_forced

    plan, settings = ctx.plan, ctx.cr.settings
    if plan is None or plan.era != "v1" or settings is None:
        return False
    if getattr(settings, "enable_chunked_prefill", None) is not False:
        return True
    return v1_chunked_prefill_forced(parse_version(ctx.serving.version))


def _smaller_batches(ctx: RuleContext, plan: MemoryPlan, at_least: int = 0) -> list[int]:
    """The ``--max-num-batched-tokens`` candidates of :func:`_mbt_remedy` and :func:`_chunked_remedy`: the halvings
    of ``plan.max_num_batched_tokens``, largest first, down to :data:`MIN_REMEDY_BATCHED_TOKENS`, never below an
    explicit ``--max-num-seqs`` (KV204) nor ``at_least`` (max-model-len without chunked prefill, KV203)."""
    floor = max(MIN_REMEDY_BATCHED_TOKENS, at_least)
    seqs = ctx.serving.get("max_num_seqs")
    if isinstance(seqs, int) and not isinstance(seqs, bool):
        floor = max(floor, seqs)
    out = []
    n = plan.max_num_batched_tokens // 2
    while n >= floor:
        out.append(n)
        n //= 2
    return out


def _mbt_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """A smaller ``--max-num-batched-tokens`` where the profiling pass's activation peak is what leaves too little
    KV cache: vLLM profiles one dummy forward of ``max_num_batched_tokens`` tokens before sizing the KV cache
    (``vllm@0.11.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run`` calls ``self._dummy_run(
    self.max_num_tokens, is_profile=True)``, ``max_num_tokens = scheduler_config.max_num_batched_tokens``; the
    same at later releases), and kvlint's forward term grows with it (docs/engine-memory-model.md §5).

    Candidates halve the current value (the user's or the release's default for this GPU) down to
    :data:`MIN_REMEDY_BATCHED_TOKENS`, largest first (the least prefill throughput given up), never below an
    explicit ``--max-num-seqs`` (KV204) nor, without chunked prefill (:func:`_chunked_prefill_on`), below
    max-model-len (KV203). Each is re-planned; the first whose activation estimate is smaller and whose plan
    fits (:func:`_fits`) is offered. None under ``--kv-cache-memory-bytes`` (the KV size is fixed)."""
    plan = ctx.plan
    if plan is None or plan.engine != "vllm" or _kv_bytes_bypass(ctx):
        return ""
    candidates = _smaller_batches(ctx, plan, 0 if _chunked_prefill_on(ctx) else plan.max_model_len)
    band = _band(ctx)
    found = first_fitting(
        candidates,
        lambda v: replanned(ctx.cr, max_num_batched_tokens=v),
        lambda d: d.plan.activation_bytes < plan.activation_bytes and _fits(d.plan, min_concurrency, band),
    )
    if found is None:
        return ""
    v, d = found
    return (
        f"--max-num-batched-tokens {v} fits: vLLM profiles a batch of that many tokens instead of "
        f"{plan.max_num_batched_tokens:,}, so the activation peak is about {gib(d.plan.activation_bytes)} instead "
        f"of {gib(plan.activation_bytes)} and {gib(d.plan.kv_cache_bytes)} of KV per GPU remain, "
        f"{times(d.plan.max_concurrency)}x (prompts are prefilled in chunks of {v:,} tokens)"
        + _below_kv104(ctx, d.plan.max_concurrency)
    )


def _video_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """``--limit-mm-per-prompt`` with no video per prompt, where the multimodal encoder's profile of one dummy video
    is what leaves too little memory: vLLM's V1 profile run feeds the encoder the modality of the largest item
    budget, for Qwen2-VL/Qwen2.5-VL a video of ``max_pixels`` frames (``vllm@0.11.0:vllm/v1/worker/
    gpu_model_runner.py::GPUModelRunner.profile_run``, ``_get_mm_dummy_batch``; :mod:`kvlint.memory.multimodal`),
    and a limit of 0 videos leaves it out of the profile (images stay). The container is re-planned with the
    video limit 0 (its other limits kept), and, when one max-model-len request then still does not fit, with the
    longest ``--max-model-len`` (in steps of 1,024 tokens) that does; offered only when the activation estimate is
    then smaller and the plan fits (:func:`_fits`), so a model without video, or one whose images alone still do
    not fit, gets nothing. The
    flag is written as the release reads it: JSON from 0.8, ``video=0`` before (``nullable_kvs``,
    :mod:`kvlint.engines.vllm_json`). None under ``--kv-cache-memory-bytes``."""
    plan, settings = ctx.plan, ctx.cr.settings
    if plan is None or plan.engine != "vllm" or _kv_bytes_bypass(ctx) or settings is None:
        return ""
    current = dict(getattr(settings, "limit_mm_per_prompt", None) or {})
    if current.get("video") == 0:
        return ""
    limits = {**current, "video": 0}
    band = _band(ctx)

    def fits(d: PlanDetail) -> bool:
        return d.plan.activation_bytes < plan.activation_bytes and _fits(d.plan, min_concurrency, band)

    length = ""
    d = replanned(ctx.cr, limit_mm_per_prompt=limits)
    if d is None or d.plan.activation_bytes >= plan.activation_bytes:
        return ""
    if not fits(d):
        # the profile is no longer the obstacle, one max-model-len request may be: the longest length that fits
        # with it, in steps of 1,024 tokens
        found = largest_fitting(
            MIN_USEFUL_MAX_MODEL_LEN // 1024,
            (plan.max_model_len - 1) // 1024,
            lambda k: replanned(ctx.cr, limit_mm_per_prompt=limits, max_model_len=k * 1024),
            fits,
        )
        if found is None:
            return ""
        length = f" and --max-model-len {found[0] * 1024}"
        d = found[1]
    vt = parse_version(plan.engine_version)
    if vt < (0, 8):
        written = ",".join(f"{k}={v}" for k, v in limits.items())
    else:
        written = "'" + json.dumps(limits) + "'"
    return (
        f"--limit-mm-per-prompt {written}{length}, if the service takes no video, fits: vLLM then profiles the encoder "
        f"without a dummy video, so the activation peak is about {gib(d.plan.activation_bytes)} instead of "
        f"{gib(plan.activation_bytes)} and {gib(d.plan.kv_cache_bytes)} of KV per GPU remain, "
        f"{times(d.plan.max_concurrency)}x at max-model-len {d.plan.max_model_len:,}"
        + _below_kv104(ctx, d.plan.max_concurrency)
    )


def _chunked_switch(ctx: RuleContext) -> str:
    """How to turn vLLM's chunked prefill on for this container, in its own words: remove the
    ``--no-enable-chunked-prefill`` (or ``--enable-chunked-prefill=false``) it writes (V1's default is on, ``vllm@0.11.1:vllm/engine/arg_utils.py::
    EngineArgs``, ``enable_chunked_prefill`` a ``BooleanOptionalAction``), else ``--enable-chunked-prefill``."""
    v = ctx.serving.flags.get("enable_chunked_prefill")
    raw = (v.raw or "") if v is not None else ""
    if v is not None and v.source == "arg" and raw.startswith("--no-enable"):
        return f"remove {raw}"
    if v is not None and v.source == "arg" and v.value is False and raw and not raw.startswith("-"):
        return f"remove --enable-chunked-prefill={raw}"  # the =value form releases before 0.10 read
    return "--enable-chunked-prefill"


def _chunked_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """One remedy for a vLLM V1 plan whose chunked prefill is off (``--no-enable-chunked-prefill``, kept from
    0.11.1, :func:`_chunked_prefill_on`), where ``max_num_batched_tokens`` must hold one max-model-len prompt
    (KV203) and vLLM profiles a dummy batch of that many tokens before sizing the KV cache (:func:`_mbt_remedy`):
    chunked prefill on with a smaller ``--max-num-batched-tokens`` (the halvings of the current value down to
    :data:`MIN_REMEDY_BATCHED_TOKENS`, never below an explicit ``--max-num-seqs``, KV204), and, when that alone
    does not fit, also the largest ``--max-model-len`` that does (rounded down to 1,024 tokens, searched
    downwards from what the re-planned pool holds at its low end). Every change is named in the one remedy and
    the whole is re-planned (:func:`replanned`) and offered only when it fits (:func:`_fits`): neither a smaller
    max-model-len (its prompt still needs the same batch) nor a smaller batch (KV203 refuses it without chunking)
    fits alone here. Among the batch sizes, the one that keeps the longest max-model-len (then the largest
    batch) is offered. None with chunked prefill on, on V0, or under ``--kv-cache-memory-bytes``."""
    plan, settings = ctx.plan, ctx.cr.settings
    if plan is None or plan.engine != "vllm" or plan.era != "v1" or settings is None or _kv_bytes_bypass(ctx):
        return ""
    if _chunked_prefill_on(ctx):
        return ""
    batches = _smaller_batches(ctx, plan)
    if not batches:
        return ""
    band, cr, switch = _band(ctx), ctx.cr, _chunked_switch(ctx)

    def fits(d: PlanDetail) -> bool:
        return d.plan.activation_bytes < plan.activation_bytes and _fits(d.plan, min_concurrency, band)

    found = first_fitting(
        batches,
        lambda v: replanned(cr, enable_chunked_prefill=True, max_num_batched_tokens=v),
        fits,
    )
    if found is not None:
        v, d = found
        return (
            f"chunked prefill on ({switch}) with --max-num-batched-tokens {v} fits: "
            f"vLLM then profiles a batch of {v:,} tokens instead of {plan.max_num_batched_tokens:,} (activation about "
            f"{gib(d.plan.activation_bytes)} instead of {gib(plan.activation_bytes)}), {gib(d.plan.kv_cache_bytes)} "
            f"of KV per GPU, {times(d.plan.max_concurrency)}x at max-model-len {d.plan.max_model_len:,}"
            + _below_kv104(ctx, d.plan.max_concurrency)
        )
    best: tuple[int, int, PlanDetail] | None = None
    for v in batches:
        base = replanned(cr, enable_chunked_prefill=True, max_num_batched_tokens=v)
        if base is None or base.plan.num_blocks_low <= 0 or base.plan.kv_bytes_per_token <= 0:
            continue
        p = base.plan
        low_tokens = p.num_blocks_low * p.block_size if p.block_size else p.capacity_tokens
        start = int(min(low_tokens, p.capacity_tokens / max(min_concurrency, 1e-9), plan.max_model_len - 1))
        start = start // 1024 * 1024
        if start < MIN_USEFUL_MAX_MODEL_LEN or (best is not None and start <= best[0]):
            continue

        def step_down(cand: int) -> int:
            return (cand - max(1024, cand // 16)) // 1024 * 1024

        hit = descending_fitting(
            start,
            step_down,
            lambda n, v=v: (  # type: ignore[misc]
                replanned(cr, enable_chunked_prefill=True, max_num_batched_tokens=v, max_model_len=n)
                if n >= MIN_USEFUL_MAX_MODEL_LEN
                else None
            ),
            fits,
        )
        if hit is not None and (best is None or hit[0] > best[0]):
            best = (hit[0], v, hit[1])
    if best is None:
        return ""
    length, v, d = best
    return (
        f"--max-model-len {length} and --max-num-batched-tokens {v} with chunked prefill on ({switch}) fits "
        f"({gib(d.plan.kv_cache_bytes)} of KV "
        f"per GPU, {times(d.plan.max_concurrency)}x concurrent requests of that length, also at the low end of the "
        f"band): with chunked prefill off a prompt of max-model-len must fit one batch, so neither a shorter "
        f"max-model-len nor a smaller batch fits alone" + _below_kv104(ctx, d.plan.max_concurrency)
    )


def _batch_remedy(ctx: RuleContext, min_concurrency: float | None = None, length: str = "") -> str:
    """The batched-token remedy of KV102-KV105: a smaller ``--max-num-batched-tokens`` alone (:func:`_mbt_remedy`),
    else, when neither it nor a shorter max-model-len (``length``, the rule's own :func:`_len_remedy` text) fits,
    chunked prefill on with a smaller batch and, if need be, a shorter max-model-len, as one re-planned remedy
    (:func:`_chunked_remedy`). ``min_concurrency`` None: aimed as :func:`_aimed` aims (KV104's minimum, else one
    request); else at that concurrency."""

    def aim(remedy: Callable[[RuleContext, float], str]) -> str:
        return _aimed(ctx, remedy) if min_concurrency is None else remedy(ctx, min_concurrency)

    alone = aim(_mbt_remedy)
    if alone or length:
        return alone
    return aim(_chunked_remedy)


def _utilization_guess(plan: MemoryPlan, min_concurrency: float, band: float) -> int | None:
    """Where :func:`_util_remedy`'s answer probably is (hundredths), for its bracketed search: the utilization at
    which the KV pool grows (one byte per byte of budget) to what :func:`_fits` asks, estimated from this plan's
    bytes per request (KV needed for ``min_concurrency`` requests, one request at the band's low end, and the
    ``band`` headroom). An estimate only: the search's answer does not depend on it. None without a request size."""
    need = plan.per_request_bytes
    if need <= 0 or plan.total_bytes <= 0:
        return None
    spread = max(0, plan.kv_cache_bytes - plan.kv_cache_bytes_low)
    target = max(min_concurrency * need, need + spread, min(1.25 * need, need / max(1e-9, 1 - band)))
    return math.ceil(
        plan.gpu_memory_utilization * 100 + (target - plan.kv_cache_bytes) * 100 / plan.total_bytes
    )


def _fp8_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """``--kv-cache-dtype fp8`` when this release runs an fp8 KV cache on this GPU and it then fits."""
    plan = ctx.plan
    if plan is None or ctx.placement is None or ctx.placement.accelerator is None:
        return ""
    if plan.kv_cache_dtype.startswith("fp8"):
        return ""
    sup = fp8_support(ctx.cr, "fp8")
    if sup is None or sup.outcome != "ok":  # never suggest what the engine cannot run here
        return ""
    d = replanned(ctx.cr, kv_cache_dtype="fp8")
    if d is None or not _fits(d.plan, min_concurrency, _band(ctx)):
        return ""
    p2 = d.plan
    switch = (
        f" (vLLM {p2.engine_version} runs it with its {p2.era.upper()} engine on this GPU, whose memory use differs)"
        if p2.era != plan.era
        else ""
    )
    return (
        f"--kv-cache-dtype fp8 halves KV per token ({p2.kv_bytes_per_token:,} B): {p2.capacity_tokens:,} tokens, "
        f"{p2.max_concurrency:.2f}x at max-model-len {p2.max_model_len:,}{switch}"
        + _below_kv104(ctx, p2.max_concurrency)
    )


@dataclass(frozen=True)
class LengthFit:
    """A max-model-len that fits robustly (:func:`_fits`): ``tokens`` the length, ``detail`` the re-planned
    engine plan at it; :attr:`engine_estimate` vLLM's own largest-length estimate (0 when unknown), worked out
    when it is first read (``estimate``)."""

    tokens: int
    detail: VllmPlanDetail
    estimate: _EngineEstimate = field(repr=False, compare=False)

    @property
    def engine_estimate(self) -> int:
        """vLLM's own estimate of the largest max-model-len on this GPU, tokens (0 when unknown):
        :func:`kvlint.memory.vllm.largest_fitting_max_model_len` of the container."""
        return self.estimate.value()


class _EngineEstimate:
    """vLLM's own largest-max-model-len estimate for one container (tokens; 0 when it cannot be planned):
    :func:`kvlint.memory.vllm.largest_fitting_max_model_len` through the container's memoised planner, computed
    on first use. When the container's settings fit, that estimate is at least their max-model-len (the function
    answers ``max(..., max_model_len)``), and planning it takes a plan at the full derived length; a search
    whose lengths all lie below that bound (:meth:`bounds`) then needs the figure only to quote it."""

    __slots__ = ("_cr", "_value")

    def __init__(self, cr: ContainerResult) -> None:
        self._cr = cr
        self._value: int | None = None

    def value(self) -> int:
        """The estimate (tokens), computed once."""
        if self._value is None:
            self._value = self._compute()
        return self._value

    def _compute(self) -> int:
        cr = self._cr
        acc = cr.placement.accelerator if cr.placement else None
        if cr.settings is None or cr.model is None or acc is None or cr.placement is None:
            return 0
        try:
            return int(
                largest_fitting_max_model_len(
                    cr.settings,
                    cr.model,
                    cr.placement.memory_bytes or 0,
                    gpu_name=acc.name,
                    compute_capability=acc.compute_capability,
                    plan=lambda s: plan_settings(cr, s),  # memoised with the container's other plans
                )
            )
        except Exception:
            return 0

    def bounds(self, start: int) -> bool:
        """Whether ``min(start, estimate)`` may differ from ``start`` (tokens): False without computing the
        estimate when the container's settings fit at a max-model-len of at least ``start`` (the estimate is
        then at least that length), else True."""
        if self._value is not None:
            return True
        cr = self._cr
        if cr.settings is not None and cr.model is not None and cr.placement is not None:
            try:
                d = plan_settings(
                    cr, cr.settings
                )  # the container's own plan (memoised): what the estimate plans first
            except Exception:
                return True
            if d.fits and start <= d.plan.max_model_len:
                return False
        return True


def fitting_max_model_len(
    ctx: RuleContext, min_concurrency: float = 1.0, below: int | None = None
) -> LengthFit | None:
    """The largest max-model-len below ``below`` (default: the current one) at which ``min_concurrency``
    requests fit robustly (also at the low end of the band), searched downwards from vLLM's own estimate
    (:func:`kvlint.memory.vllm.largest_fitting_max_model_len`, the figure its E1 error prints) and re-planned
    at each candidate. Lengths are rounded down to 1,024 tokens (to the block size below 2,048). None when no
    plan, or when nothing from :data:`MIN_USEFUL_MAX_MODEL_LEN` tokens up fits. vLLM's estimate is planned only
    where it can lower the start (:meth:`_EngineEstimate.bounds`) or is quoted (:attr:`LengthFit.engine_estimate`)."""
    cr, plan = ctx.cr, ctx.plan
    if plan is None or plan.kv_bytes_per_token <= 0 or plan.num_blocks <= 0:
        return None
    estimate = _EngineEstimate(cr)
    low_tokens = plan.num_blocks_low * plan.block_size if plan.block_size else plan.capacity_tokens
    start = int(min(low_tokens, plan.capacity_tokens / max(min_concurrency, 1e-9)))
    start = min(start, (below if below is not None else plan.max_model_len) - 1)
    if estimate.bounds(start):
        engine_estimate = estimate.value()
        if engine_estimate > 0:
            start = min(start, engine_estimate)
    if start >= 2048:
        start = start // 1024 * 1024
    elif plan.block_size:
        start = start // plan.block_size * plan.block_size
    if start < MIN_USEFUL_MAX_MODEL_LEN:
        return None

    def step_down(cand: int) -> int:
        cand -= max(plan.block_size or 16, cand // 16)
        return cand // 1024 * 1024 if cand >= 2048 else cand

    band = _band(ctx)
    found = descending_fitting(
        start,
        step_down,
        lambda n: replanned(cr, max_model_len=n) if n >= MIN_USEFUL_MAX_MODEL_LEN else None,
        lambda d: _fits(d.plan, min_concurrency, band),
    )
    if found is None or not isinstance(found[1], VllmPlanDetail):
        return None
    return LengthFit(found[0], found[1], estimate)


def proposed_max_model_len(ctx: RuleContext, below: int | None = None) -> LengthFit | None:
    """The max-model-len the capacity remedies propose (:func:`fitting_max_model_len`): the largest that holds
    KV104's ``min_concurrency`` requests when one does, else the largest that holds one (KV103's and KV202's
    shared answer, so the two findings never disagree)."""
    return fitting_max_model_len(ctx, _min_concurrency(ctx), below) or fitting_max_model_len(ctx, 1.0, below)


def _len_remedy(ctx: RuleContext, min_concurrency: float = 1.0) -> str:
    """The remedy text for :func:`fitting_max_model_len`, quoting vLLM's own estimate when it differs."""
    fit = fitting_max_model_len(ctx, min_concurrency)
    if fit is None:
        return ""
    note = ""
    if fit.engine_estimate and fit.engine_estimate != fit.tokens:
        note = f"; vLLM's own estimate of the maximum is {fit.engine_estimate:,}"
    return (
        f"--max-model-len {fit.tokens} fits ({fit.detail.plan.max_concurrency:.2f}x concurrent requests of that "
        f"length, also at the low end of the band{note})" + _below_kv104(ctx, fit.detail.plan.max_concurrency)
    )


def _len_loc(ctx: RuleContext):  # noqa: ANN202 - Loc | None
    s = ctx.serving
    return s.loc("max_model_len") if "max_model_len" in s.flags else s.command_loc


@check("KV101", engine="vllm")
def weights_exceed_budget_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV101 (vLLM): the weights per GPU exceed ``gpu_memory_utilization`` x total (or, with
    ``--kv-cache-memory-bytes``, weights + reserve + that KV exceed the device). Weights that still fit the
    device load, and start-up then fails at the KV-cache check ('No available memory for the cache blocks',
    vllm@0.11.0:vllm/v1/core/kv_cache_utils.py::check_enough_kv_cache_memory): the message says which, and
    only then is a re-planned ``--gpu-memory-utilization`` offered."""
    if _vllm_verdict(ctx) != "KV101":
        return
    plan, s = ctx.plan, ctx.serving
    assert plan is not None
    bypass = _kv_bytes_bypass(ctx)
    # the verdict's first two tests (_vllm_verdict): when neither holds, the override is what breaks the plan
    if not (plan.budget_bytes > plan.total_bytes if bypass else plan.weights_bytes > plan.budget_bytes):
        over = override_overshoot(ctx)
        if over is not None:
            yield _override_finding(ctx, over)
        return
    if bypass:
        yield ctx.finding(
            f"with --kv-cache-memory-bytes the engine holds {gib(plan.weights_bytes)} weights + "
            f"{gib(plan.activation_bytes + plan.non_torch_bytes + plan.cudagraph_bytes)} activation and runtime + "
            f"{gib(plan.kv_cache_bytes)} KV cache = {gib(plan.budget_bytes)} per GPU, more than the "
            f"{gib(plan.total_bytes)} of {ctx.where}: start-up fails with CUDA out of memory",
            s.loc("kv_cache_memory_bytes"),
            fix=f"--kv-cache-memory-bytes {max(0, plan.total_bytes - (plan.budget_bytes - plan.kv_cache_bytes)) * 9 // 10}"
            " or less (90% of what is left), or more GPUs",
        )
        return
    # vLLM does not cap the weights at the budget while loading them: weights (with the process's non-torch
    # memory) that fit the device load, and the profile that follows finds a negative KV budget
    # (vllm@0.11.0:vllm/v1/core/kv_cache_utils.py::check_enough_kv_cache_memory; V0's
    # Worker.determine_num_available_blocks the same); weights that do not fit run out of memory while loading.
    # "Fit" keeps a margin for the CUDA context the process holds before loading [heuristic], so a borderline
    # case keeps the out-of-memory outcome
    loads = plan.weights_bytes + plan.non_torch_bytes + CUDA_CONTEXT_BYTES <= plan.total_bytes
    outcome = (
        f"the weights load, but the memory profile then leaves nothing for the KV cache: vLLM "
        f"{plan.engine_version} fails with 'No available memory for the cache blocks'"
        if loads
        else "loading fails with CUDA out of memory"
    )
    yield ctx.finding(
        f"weights need {gib(plan.weights_bytes)} per GPU but vLLM {plan.engine_version} may use only "
        f"{gib(plan.budget_bytes)} of {ctx.where} ({gib(plan.total_bytes)} x gpu-memory-utilization "
        f"{fraction(plan.gpu_memory_utilization)}); {outcome}",
        s.loc("tensor_parallel_size")
        if "tensor_parallel_size" in s.flags
        else (s.model.loc if s.model else None),
        fix=_join(
            _aimed(ctx, _util_remedy) if loads else "",
            _aimed(ctx, _tp_remedy),
            _aimed(ctx, _quant_remedy),
        )
        or "a smaller model or more GPU memory per replica: no tensor-parallel size or lighter checkpoint that "
        "kvlint re-planned fits",
    )


def _override_finding(ctx: RuleContext, over: OverrideOvershoot) -> Diagnostic:
    """KV101's finding for a ``--num-gpu-blocks-override`` over the device (:func:`override_overshoot`), with the
    arithmetic, at the flag's value. The remedy is the block count vLLM sizes itself at the pessimistic end of the
    band (``plan.num_blocks_low``, under ``gpu_memory_utilization``), offered only when the container re-planned
    with it passes this test and holds one max-model-len request."""
    plan, s = ctx.plan, ctx.serving
    assert plan is not None
    bpb = plan.bytes_per_block
    others = (
        f" and at least {gib(over.other_bytes)} activation, non-torch memory and CUDA graphs (the optimistic end of "
        "kvlint's band)"
        if over.other_bytes
        else ""
    )
    figures = (
        f"--num-gpu-blocks-override {over.blocks:,} x {bpb:,} bytes per block = {gib(over.kv_bytes)} of KV cache per "
        f"GPU, which vLLM {plan.engine_version} allocates as given, whatever memory is left; with "
        f"{gib(plan.weights_bytes)} weights{others} that is "
        f"{gib(over.kv_bytes + plan.weights_bytes + over.other_bytes)}, more than the {gib(over.total_bytes)} of "
        f"{ctx.where}"
    )
    if over.allocates:
        left = over.total_bytes - plan.weights_bytes - plan.non_torch_bytes - over.kv_bytes
        outcome = (
            f"the KV cache allocates, but leaves {gib(left)} for the activation peak and the CUDA graphs, which need "
            f"{gib(plan.activation_bytes + plan.cudagraph_bytes)}: graph capture or the first full batch "
            f"({plan.max_num_batched_tokens:,} tokens) runs out of CUDA memory"
        )
    else:
        outcome = "allocating the KV cache fails with CUDA out of memory and the engine never starts"
    fix = ""
    n = plan.num_blocks_low
    d = replanned(ctx.cr, num_gpu_blocks_override=n) if n > 0 else None
    if isinstance(d, VllmPlanDetail) and d.fits and _overshoot(d.plan, n) is None:
        fix = (
            f"--num-gpu-blocks-override {n} or less ({gib(n * bpb)} of KV cache: the blocks vLLM sizes itself at "
            f"gpu-memory-utilization {fraction(plan.gpu_memory_utilization)}, at the low end of kvlint's band; "
            f"{d.plan.max_concurrency:.2f}x concurrent max-model-len requests"
            + _below_kv104(ctx, d.plan.max_concurrency)
            + "), or drop the flag and let vLLM size the KV cache from the memory it measures"
        )
    return ctx.finding(
        f"{figures}: {outcome}",
        s.loc("num_gpu_blocks_override"),
        fix=fix
        or "drop --num-gpu-blocks-override and let vLLM size the KV cache from the memory it measures",
    )


def profile_exceeds_device(plan: MemoryPlan) -> bool:
    """Whether the memory profile itself cannot run: the weights and every non-KV term at the optimistic end of the band
    (``budget - kv_cache_bytes_high``) exceed the device's total memory, so the dummy forward pass of
    ``max_num_batched_tokens`` tokens in ``profile_run`` (``vllm@0.11.0:vllm/v1/worker/gpu_model_runner.py::
    GPUModelRunner.profile_run``, ``_dummy_run(self.max_num_tokens, is_profile=True)``; V0's ``profile_run`` alike)
    raises ``torch.OutOfMemoryError`` whatever the utilization, before vLLM reaches its "No available memory for the
    cache blocks" check (docs/engine-memory-model.md §1.9)."""
    return plan.budget_bytes - plan.kv_cache_bytes_high > plan.total_bytes


@check("KV102")
def no_kv_memory(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV102 (vLLM): nothing is left for the KV cache after weights, activation, non-torch and CUDA graphs."""
    if _vllm_verdict(ctx) != "KV102":
        return
    plan, s = ctx.plan, ctx.serving
    assert plan is not None
    util_loc = s.loc("gpu_memory_utilization") if "gpu_memory_utilization" in s.flags else s.command_loc
    yield ctx.finding(
        f"no memory is left for the KV cache on {ctx.where}: {_plan_summary(plan)}; vLLM {plan.engine_version} "
        + (
            "cannot even run its memory profile: the weights and the profile run's activation peak exceed the "
            f"device's {gib(plan.total_bytes)} even at the band's low end, so the worker stops with "
            "torch.OutOfMemoryError ('CUDA out of memory') in profile_run, max_num_batched_tokens "
            f"{plan.max_num_batched_tokens:,}, before the KV-cache check"
            if profile_exceeds_device(plan)
            else "fails with 'No available memory for the cache blocks'"
        ),
        util_loc,
        fix=_join(
            _aimed(ctx, _util_remedy), _batch_remedy(ctx), _aimed(ctx, _video_remedy), _aimed(ctx, _tp_remedy)
        )
        or "use a larger GPU or a quantized model",
    )


@check("KV103")
def max_model_len_exceeds_kv(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV103 (vLLM): one max-model-len request does not fit even the optimistic KV bound (E1)."""
    if _vllm_verdict(ctx) != "KV103":
        return
    plan = ctx.plan
    assert plan is not None
    yield ctx.finding(
        f"one request of max-model-len {plan.max_model_len:,} tokens needs {gib(plan.per_request_bytes)} of KV "
        f"cache per GPU ({plan.kv_bytes_per_token:,} B/token), but vLLM {plan.engine_version} on {ctx.where} has "
        f"about {gib(plan.kv_cache_bytes)} ({_plan_summary(plan)}); start-up fails with 'To serve at least one "
        "request with the model's max seq len ... KV cache is needed, which is larger than the available KV "
        "cache memory'",
        _len_loc(ctx),
        fix=_join(
            length := _aimed(ctx, _len_remedy),
            _aimed(ctx, _fp8_remedy),
            _batch_remedy(ctx, length=length),
            _aimed(ctx, _util_remedy),
            _aimed(ctx, _tp_remedy),
        )
        or f"use a larger GPU or {_more_gpus(ctx)}",
    )


@check("KV104", engine="vllm")
def low_concurrency_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV104 (vLLM): fewer than ``min_concurrency`` max-model-len requests fit the KV cache at once."""
    if _vllm_verdict(ctx) != "KV104":
        return
    plan = ctx.plan
    assert plan is not None
    min_c = float(ctx.param("min_concurrency"))
    dp = int(plan.data_parallel_size or 1)
    # each data-parallel rank is its own engine with its own KV cache (kvlint.report.plan_text.data_parallel_line)
    per = "replica" if dp <= 1 else f"data-parallel engine ({dp} per replica, each its own KV cache)"
    yield ctx.finding(
        f"the KV cache holds {plan.capacity_tokens:,} tokens per {per} on {ctx.where}: only "
        f"{times(plan.max_concurrency, min_c)} requests of max-model-len {plan.max_model_len:,} fit at once (minimum "
        f"{min_c:g}); further long requests queue or are preempted; {_plan_summary(plan)}",
        _len_loc(ctx),
        fix=_join(
            length := _len_remedy(ctx, min_c),
            _fp8_remedy(ctx, min_c),
            _batch_remedy(ctx, min_c, length=length),
            _tp_remedy(ctx, min_c),
        ),
    )


@check("KV105", engine="vllm")
def within_band_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV105 (vLLM): one max-model-len request fits or not depending on where in kvlint's band the node's
    real figures fall, or fits with less spare room than ``band`` x the KV cache."""
    if _vllm_verdict(ctx) != "KV105":
        return
    plan = ctx.plan
    assert plan is not None
    fix = (
        _join(
            length := _aimed(ctx, _len_remedy),
            _aimed(ctx, _fp8_remedy),
            _batch_remedy(ctx, length=length),
            _aimed(ctx, _util_remedy),
        )
        or _aimed(ctx, _tp_remedy)
        or (
            f"use a larger GPU or {_more_gpus(ctx)}: no shorter context of at least "
            f"{MIN_USEFUL_MAX_MODEL_LEN:,} tokens fits robustly here"
        )
    )
    if plan.max_concurrency_low < 1.0:
        # one convention: the band's ends are the plan's signed figures, as the budget equation prints them; an
        # end at or below zero is said in words (no KV cache at all), never clamped to 0.00 GiB
        low, high = plan.kv_cache_bytes_low, plan.kv_cache_bytes_high
        need = f"one max-model-len request ({plan.max_model_len:,} tokens, {gib(plan.per_request_bytes)} of KV per GPU)"
        fails = plan.max_concurrency < 1.0
        outcome = "start-up most likely fails" if fails else "start-up may fail on some nodes"
        if low <= 0:
            # the band reaches from no KV cache at all to at least one request: "risky" says little, so say
            # which heuristic term makes it that wide
            drv = band_driver(ctx)
            lines = [
                f"{need} {'does not fit' if fails else 'fits'} the predicted KV cache ({gib(plan.kv_cache_bytes)})",
                f"kvlint's band runs from {gib(low)} (the other terms exceed the budget: no KV cache at all) to "
                f"{gib(high)} (it fits)" + (f", {drv.text()}" if drv else ""),
                f"so the verdict depends on {'that estimate' if drv else 'kvlint estimates'} more than on this "
                f"configuration: {outcome}, and the engine's 'Available KV cache memory' log line settles it",
                _plan_summary(plan),
            ]
            summary = (
                f"one max-model-len request needs {gib(plan.per_request_bytes)} of KV per GPU against a predicted "
                f"{gib(plan.kv_cache_bytes)}, but kvlint's band runs from no KV cache at all to {gib(high)}"
                + (
                    f", the largest share from its {drv.short} estimate ({gib(drv.term_bytes)})"
                    if drv
                    else ""
                )
                + f": {outcome}"
            )
        elif fails:
            # the central estimate already fails: only nodes at the band's upper end would start it. Still the
            # catalogue's warning: inside the band kvlint cannot be sure, and an error would deny at admission
            lines = [
                f"{need} does not fit the predicted KV cache ({gib(plan.kv_cache_bytes)})",
                f"only the upper end of kvlint's prediction band ({gib(low)} to {gib(high)}) holds it: {outcome}",
                _plan_summary(plan),
            ]
            summary = (
                f"one max-model-len request needs {gib(plan.per_request_bytes)} of KV per GPU against a predicted "
                f"{gib(plan.kv_cache_bytes)} (band {gib(low)} to {gib(high)}): {outcome}"
            )
        else:
            lines = [
                f"{need} fits the predicted KV cache ({gib(plan.kv_cache_bytes)}), but the verdict flips inside "
                f"kvlint's prediction band ({gib(low)} to {gib(high)}): {outcome}",
                _plan_summary(plan),
            ]
            summary = (
                f"one max-model-len request needs {gib(plan.per_request_bytes)} of KV per GPU against a predicted "
                f"{gib(plan.kv_cache_bytes)} (band {gib(low)} to {gib(high)}): {outcome}"
            )
        yield ctx.finding("; ".join(lines), _len_loc(ctx), fix=fix, summary=summary)
        return
    band = _band(ctx)
    headroom = plan.kv_cache_bytes - plan.per_request_bytes
    yield ctx.finding(
        f"one max-model-len request ({plan.max_model_len:,} tokens, {gib(plan.per_request_bytes)} of KV per GPU) "
        f"fits the predicted KV cache ({gib(plan.kv_cache_bytes)}) with only {gib(headroom)} to spare, less "
        f"than the configured band ({band:g} x the KV cache = {gib(band * plan.kv_cache_bytes)}): start-up may "
        f"fail on some nodes; {_plan_summary(plan)}",
        _len_loc(ctx),
        fix=fix,
        summary=f"one max-model-len request fits the predicted KV cache with only {gib(headroom)} to spare "
        f"(band {band:g} x KV cache = {gib(band * plan.kv_cache_bytes)}): start-up may fail on some nodes",
    )


# ---------------------------------------------------------------------------------------------------------
# TGI: weights against the shard's memory fraction; concurrency at max_total_tokens


@check("KV101", engine="tgi")
def weights_exceed_budget_tgi(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV101 (TGI): the weights of one shard exceed ``cuda_memory_fraction`` x total. TGI caps each shard's
    process at that fraction before loading (``torch.cuda.set_per_process_memory_fraction(MEMORY_FRACTION)``,
    ``server/text_generation_server/utils/dist.py::initialize_torch_distributed``, v1.4-v3.3), so loading
    fails with CUDA out of memory before the warmup (KV604) is reached."""
    d = ctx.detail
    if not isinstance(d, TgiPlanDetail):
        return
    p = d.plan
    cap = int(d.cuda_memory_fraction * p.total_bytes)
    if p.weights_bytes + p.non_torch_bytes <= cap:
        return
    s = ctx.serving
    # the plan's non-torch term includes FlashInfer's workspace (sourced) with that attention
    ws = (
        f", the {gib(FLASHINFER_WORKSPACE_BYTES)} FlashInfer workspace included"
        if d.attention == "flashinfer"
        else ""
    )
    shards = "TGI's one shard" if d.num_shard == 1 else f"each of TGI's {d.num_shard} shards"
    yield ctx.finding(
        f"{shards} holds {gib(p.weights_bytes)} of weights (+ {gib(p.non_torch_bytes)} "
        f"non-torch [heuristic]{ws}) but may use only cuda_memory_fraction {d.cuda_memory_fraction:g} x "
        f"{gib(p.total_bytes)} = {gib(cap)} of {ctx.where}; loading fails with CUDA out of memory",
        s.loc("num_shard") if "num_shard" in s.flags else (s.model.loc if s.model else None),
        fix=_join(_tgi_shard_remedy(ctx, d), _tgi_quant_remedy(ctx))
        or "a smaller model or more GPU memory per replica: no shard count or lighter checkpoint that kvlint "
        "re-planned fits",
    )


def _tgi_quant_remedy(ctx: RuleContext) -> str:
    """A lighter checkpoint for TGI (:func:`_lighter_checkpoints`: ``--quantize fp8``, TGI's online FP8, or a
    4-bit AWQ/GPTQ build), re-planned and offered only when TGI then starts within kvlint's band."""
    candidates = _lighter_checkpoints(
        ctx,
        "--quantize fp8 (TGI quantizes the weights to FP8 at load)",
        "a 4-bit AWQ/GPTQ checkpoint (--quantize awq/gptq)",
    )
    found = first_fitting(candidates, lambda c: replanned(ctx.cr, quantize=c[0]), tgi_starts_in_band)
    if found is None:
        return ""
    (_, what), nd = found
    assert isinstance(nd, TgiPlanDetail)
    return (
        f"{what} fits: about {gib(nd.plan.weights_bytes)} weights per shard (re-planned: max_batch_total_tokens "
        f"{nd.max_batch_total_tokens:,})"
    )


def _tgi_shard_remedy(ctx: RuleContext, d: TgiPlanDetail) -> str:
    if _on_mig_slices(ctx):
        return ""
    found = more_shards(ctx, d, tgi_starts)
    if found is None:
        return ""
    n, nd = found
    return f"{tgi_option(ctx.serving, 'num_shard', n)} with {n} GPUs{shm_note(ctx)} (re-planned: max_batch_total_tokens {nd.max_batch_total_tokens:,})"


def _concurrency_loc(ctx: RuleContext):  # noqa: ANN202 - Loc | None
    s = ctx.serving
    name = {"tgi": "max_total_tokens", "sglang": "context_length"}.get(ctx.engine, "max_model_len")
    return s.loc(name) if name in s.flags else s.command_loc


@check("KV104", engine="tgi")
def low_concurrency_tgi(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV104 (TGI): ``max_batch_total_tokens`` (the warmup's KV capacity, tokens per deployment) holds fewer
    than ``min_concurrency`` requests of the user's ``max_total_tokens``. When ``max_total_tokens`` is not set,
    TGI >= 2.4 sizes it to the capacity itself, so this is not reported then."""
    d = ctx.detail
    if not isinstance(d, TgiPlanDetail) or d.user_max_total_tokens is None or d.max_total_tokens <= 0:
        return
    bt, mt = d.max_batch_total_tokens, d.max_total_tokens
    if bt < mt or d.warmup_oom:
        return  # KV603 / KV604
    if d.plan.max_concurrency_low < 1.0:
        return  # KV105
    min_c = float(ctx.param("min_concurrency"))
    if bt / mt >= min_c:
        return
    fixes = []
    target = bt // math.ceil(min_c)
    if target > 1:
        nd = replanned(ctx.cr, max_total_tokens=target, max_input_tokens=min(d.max_input_tokens, target - 1))
        if isinstance(nd, TgiPlanDetail) and nd.max_batch_total_tokens >= min_c * target:
            fixes.append(
                f"{tgi_option(ctx.serving, 'max_total_tokens', target)} (re-planned: {nd.max_batch_total_tokens / target:.2f}x)"
            )
    yield ctx.finding(
        f"TGI's KV cache holds max_batch_total_tokens {bt:,} on {ctx.where}: only {bt / mt:.2f} requests of "
        f"max_total_tokens {mt:,} fit at once (minimum {min_c:g}); further long requests wait in the queue",
        _concurrency_loc(ctx),
        fix=_join(*fixes, _tgi_shard_remedy(ctx, d)) or "use a larger GPU or more shards",
    )


def tgi_band_requirement(d: TgiPlanDetail) -> tuple[int, str, str] | None:
    """What the warmup's ``max_batch_total_tokens`` must hold for TGI to start, when that does not adapt to the
    memory the warmup finds: ``(tokens, what sets them, TGI's refusal)``; None when TGI sizes its limits to
    the KV cache itself.

    * ``max_total_tokens`` as the user set it (all versions), or as the launcher defaulted it before 2.4
      (1.x: 2048; 2.0-2.4.0: ``min(max_position_embeddings, 4096)``, ``launcher/src/main.rs::main`` at v1.4.5 and
      v2.0.4-v2.4.0; inferred from v2.4.1, ``kvlint.memory.tgi.INFERRED_LIMITS_FROM``): the router refuses above
      ``max_batch_total_tokens`` (``router/src/main.rs`` in 1.x-2.x,
      ``backends/v3/src/lib.rs::connect_backend`` "Not enough memory to handle `max_total_tokens`" from 3.0).
    * From 2.4 with prompt chunking, an unset ``max_total_tokens`` is taken from the KV blocks at warmup
      (``FlashCausalLM.warmup``, capped by ``max_position_embeddings``), so a set ``max_input_tokens`` must stay
      below them: ``max_input_tokens + 1`` tokens, else the router refuses with "`max_input_tokens` must be <
      `max_total_tokens`" (``backends/v3/src/main.rs``, v2.4.1-v3.3.7).
    * From 2.4 without chunking the default is the warmup batch itself (its blocks are in the cache), and with
      neither limit set both follow the cache: None (KV604 covers a warmup batch that does not fit).
    """
    v = ".".join(map(str, d.version))
    if d.user_max_total_tokens is not None or d.version < INFERRED_LIMITS_FROM:
        refusal = (
            f"Not enough memory to handle `max_total_tokens={d.max_total_tokens}`"
            if d.version >= (3, 0, 0)
            else "`max_total_tokens` must be <= `max_batch_total_tokens`"
        )
        if d.user_max_total_tokens is not None:
            return d.max_total_tokens, f"max_total_tokens {d.max_total_tokens:,}", refusal
        default = "2048" if d.version < (2, 0, 0) else "min(max_position_embeddings, 4096)"
        return (
            d.max_total_tokens,
            f"max_total_tokens {d.max_total_tokens:,} (TGI {v}'s default when unset: {default})",
            refusal,
        )
    if d.has_chunking and d.user_max_input_tokens is not None:
        return (
            d.user_max_input_tokens + 1,
            f"max_input_tokens {d.user_max_input_tokens:,} + 1 (with max_total_tokens unset, TGI {v} takes it from "
            "the KV blocks at warmup, and it must exceed max_input_tokens)",
            "`max_input_tokens` must be < `max_total_tokens`",
        )
    return None


def _tgi_band_fix(ctx: RuleContext, d: TgiPlanDetail, low: int) -> str:
    """A re-planned KV105 remedy for TGI: lower the limit to what the low end of the band holds, aimed at KV104's
    ``min_concurrency`` when ``max_total_tokens`` is set (KV104 then applies), else the text says KV104 warns."""

    def robust(nd: object, need: int) -> bool:
        return (
            tgi_starts(nd)
            and isinstance(nd, TgiPlanDetail)
            and (nd.plan.num_blocks_low * nd.plan.block_size >= need)
        )

    fixes: list[str] = []
    if d.user_max_total_tokens is None and d.version >= INFERRED_LIMITS_FROM:
        target = low - 1  # max_input_tokens below what the pessimistic cache holds
        if target >= MIN_USEFUL_MAX_MODEL_LEN:
            nd = replanned(ctx.cr, max_input_tokens=target)
            if robust(nd, target + 1):
                fixes.append(
                    f"{tgi_option(ctx.serving, 'max_input_tokens', target)} or less (re-planned: fits at the low end of kvlint's band)"
                )
    else:
        bt = d.max_batch_total_tokens
        for target in dict.fromkeys((min(low, int(bt / _min_concurrency(ctx))), low)):
            if target < MIN_USEFUL_MAX_MODEL_LEN:
                continue
            max_in = min(d.max_input_tokens, target - 1)
            nd = replanned(ctx.cr, max_total_tokens=target, max_input_tokens=max_in)
            if isinstance(nd, TgiPlanDetail) and robust(nd, target):
                conc = nd.max_batch_total_tokens / target
                low_conc = nd.plan.num_blocks_low * nd.plan.block_size / target
                # both figures named: the predicted one (what KV104 compares) alone read as the low end's
                fixes.append(
                    f"{tgi_option(ctx.serving, 'max_total_tokens', target)} and "
                    f"{tgi_option(ctx.serving, 'max_input_tokens', max_in)} (re-planned: {conc:.2f}x concurrent "
                    f"requests of that length at kvlint's prediction, max_batch_total_tokens "
                    f"{nd.max_batch_total_tokens:,}; {low_conc:.2f}x at the low end of its band)"
                    + _below_kv104(ctx, conc)
                )
                break
    more = _tgi_shard_remedy(ctx, d)
    if not fixes and not more:
        fixes.append(_tgi_prefill_band_fix(ctx, d, robust))
    return _join(*fixes, more) or "use a larger GPU or more shards"


def _tgi_prefill_band_fix(ctx: RuleContext, d: TgiPlanDetail, robust: Callable[[object, int], bool]) -> str:
    """KV105's last TGI remedy: the largest ``max_batch_prefill_tokens`` (a multiple of 256, at least 256 and,
    without prompt chunking, at least ``max_input_tokens``, KV602) whose smaller warmup batch leaves a KV cache
    that holds what :func:`tgi_band_requirement` asks also at the low end of kvlint's band (``robust``),
    re-planned; "" when none does (the text said "lower it" with no value, re-planned or not)."""
    req = tgi_band_requirement(d)
    if req is None:
        return ""
    need = req[0]
    floor = 256 if d.has_chunking else max(256, d.max_input_tokens)
    found = largest_fitting(
        floor,
        d.max_batch_prefill_tokens - 1,
        lambda n: replanned(ctx.cr, max_batch_prefill_tokens=n),
        lambda nd: robust(nd, need),  # a smaller warmup batch leaves more to the KV cache: monotone
    )
    if found is None:
        return ""
    best = max(floor, found[0] // 256 * 256)
    nd = replanned(ctx.cr, max_batch_prefill_tokens=best)
    if not robust(nd, need) or not isinstance(nd, TgiPlanDetail):
        return ""
    return (
        f"{tgi_option(ctx.serving, 'max_batch_prefill_tokens', best)} (re-planned: the smaller warmup batch leaves "
        f"max_batch_total_tokens {nd.max_batch_total_tokens:,}, which holds {need:,} also at the low end of kvlint's "
        "band)"
    )


@check("KV105", engine="tgi")
def within_band_tgi(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV105 (TGI): what the warmup's ``max_batch_total_tokens`` must hold (:func:`tgi_band_requirement`: the
    user's ``max_total_tokens``, the launcher's default before 2.4, or a set ``max_input_tokens`` + 1 from 2.4)
    fits the predicted figure but not its low end, so TGI's check after warmup may refuse on some nodes."""
    d = ctx.detail
    if not isinstance(d, TgiPlanDetail) or d.warmup_oom:
        return
    req = tgi_band_requirement(d)
    if req is None:
        return
    need, what, refusal = req
    p = d.plan
    low, high = p.num_blocks_low * p.block_size, p.num_blocks_high * p.block_size
    if not (low < need <= d.max_batch_total_tokens):
        return
    exits = f"the warmup may leave too little KV cache on some nodes and TGI then exits ('{refusal}')"
    summary = ""
    if low <= 0:
        drv = band_driver(ctx)
        band = f"kvlint's band runs from no KV cache at all (0 tokens) to {high:,}"
        summary = (
            f"{what.split(' (')[0]} fits TGI's predicted max_batch_total_tokens {d.max_batch_total_tokens:,}, but "
            f"{band}"
            + (f", the largest share from its {drv.short} estimate ({gib(drv.term_bytes)})" if drv else "")
            + f": {exits.split(' (')[0]}"
        )
        band += (
            f"; {drv.text()}; so the verdict depends on that estimate more than on this configuration"
            if drv
            else ""
        )
        band += ";"
    else:
        band = f"not the low end of kvlint's band ({low:,} to {high:,}):"
    yield ctx.finding(
        f"{what} fits TGI's predicted max_batch_total_tokens {d.max_batch_total_tokens:,} on {ctx.where}, but "
        f"{band} {exits}",
        _concurrency_loc(ctx)
        if d.user_max_total_tokens is not None or d.user_max_input_tokens is None
        else ctx.serving.loc("max_input_tokens"),
        fix=_tgi_band_fix(ctx, d, low),
        summary=summary,
    )


# ---------------------------------------------------------------------------------------------------------
# SGLang: the KV pool against --context-length


@check("KV101", engine="sglang")
def weights_exceed_budget_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV101 (SGLang): the weights of one rank are larger than the whole GPU, so loading fails with CUDA out
    of memory before SGLang sizes its pool. Weights that load but leave no pool under
    ``--mem-fraction-static`` are KV701."""
    d = ctx.detail
    if not isinstance(d, SglangPlanDetail):
        return
    p = d.plan
    if p.weights_bytes <= d.pre_free_bytes:
        return
    s = ctx.serving
    ranks = (
        "SGLang's one tensor-parallel rank" if d.tp == 1 else f"each of SGLang's {d.tp} tensor-parallel ranks"
    )
    yield ctx.finding(
        f"{ranks} loads {gib(p.weights_bytes)} of weights but "
        f"{ctx.where} has {gib(d.pre_free_bytes)} free before loading; loading fails with CUDA out of memory",
        s.loc("tp_size") if "tp_size" in s.flags else (s.model.loc if s.model else None),
        fix=_join(_sglang_tp_remedy(ctx, d), _sglang_quant_remedy(ctx))
        or "a smaller model or more GPU memory per replica: no TP size or lighter checkpoint that kvlint "
        "re-planned fits",
    )


def _sglang_quant_remedy(ctx: RuleContext) -> str:
    """A lighter checkpoint for SGLang (:func:`_lighter_checkpoints`: ``--quantization fp8``, SGLang's online FP8,
    or a 4-bit AWQ/GPTQ build), re-planned and offered only when one context_length request then fits the pool."""
    candidates = _lighter_checkpoints(
        ctx,
        "--quantization fp8 (SGLang quantizes the weights to FP8 at load)",
        "a 4-bit AWQ/GPTQ checkpoint of the model",
    )

    def ok(x: object) -> bool:
        return isinstance(x, SglangPlanDetail) and 0 < x.context_length <= x.max_total_num_tokens

    found = first_fitting(candidates, lambda c: replanned(ctx.cr, quantization=c[0]), ok)
    if found is None:
        return ""
    (_, what), nd = found
    assert isinstance(nd, SglangPlanDetail)
    return (
        f"{what} fits: about {gib(nd.plan.weights_bytes)} weights per rank (re-planned: {nd.max_total_num_tokens:,} "
        "tokens)"
    )


def _sglang_tp_remedy(ctx: RuleContext, d: SglangPlanDetail) -> str:
    m = ctx.model
    if m is None or _on_mig_slices(ctx):
        return ""
    sizes = [n for n in (2, 4, 8) if n > d.tp and not m.num_attention_heads % n]

    def ok(x: object) -> bool:
        return isinstance(x, SglangPlanDetail) and x.max_total_num_tokens >= x.context_length

    found = first_fitting(sizes, lambda n: replanned(ctx.cr, tp_size=n), ok)
    if found is None:
        return _sglang_tp_fraction_remedy(ctx, d, sizes)
    n, nd = found
    assert isinstance(nd, SglangPlanDetail)
    return f"--tp-size {n} with {n} GPUs{shm_note(ctx)} (re-planned: {nd.max_total_num_tokens:,} tokens)"


def _sglang_tp_fraction_remedy(ctx: RuleContext, d: SglangPlanDetail, sizes: list[int]) -> str:
    """When no larger ``--tp-size`` fits at SGLang's own ``mem_fraction_static`` (its default for that GPU and TP
    size, or the container's): the smallest TP size (of ``sizes``) and, with it, the smallest
    ``--mem-fraction-static`` up to 0.95 (hundredths) whose pool holds one ``context_length`` request also at
    the low end of kvlint's band (:func:`kvlint.rules.families.sglang._holds_one_request`), both applied and
    re-planned together; "" when none does. A 70B model on L4s at TP 2: TP 8 alone keeps the default fraction of
    about 0.69, below the weights, while TP 8 at a higher fraction serves."""
    from kvlint.rules.families.sglang import _holds_one_request

    for n in sizes:
        nd0 = replanned(ctx.cr, tp_size=n)
        if not isinstance(nd0, SglangPlanDetail) or nd0.plan.weights_bytes > nd0.pre_free_bytes:
            continue  # the weights of one rank do not even load at this size
        lowest = _hundredths(nd0.mem_fraction_static)
        if lowest >= 95:
            continue

        def plan_at(h: int, n: int = n) -> PlanDetail | None:
            return replanned(ctx.cr, tp_size=n, mem_fraction_static=h / 100)

        found = smallest_fitting(lowest, 95, plan_at, _holds_one_request)
        if found is not None:
            h, nd = found[0], found[1]
            assert isinstance(nd, SglangPlanDetail)
            return (
                f"--tp-size {n} and --mem-fraction-static {h / 100:.2f} with {n} GPUs{shm_note(ctx)} (re-planned: "
                f"{nd.max_total_num_tokens:,} tokens, one context_length {nd.context_length:,} request fits also at "
                f"the low end of kvlint's band; at SGLang's own {fraction(nd0.mem_fraction_static)} its pool holds "
                "none)"
            )
    return ""


@check("KV104", engine="sglang")
def low_concurrency_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV104 (SGLang): the KV pool (``max_total_num_tokens``) holds fewer than ``min_concurrency`` requests of
    ``context_length``; fewer than one is KV702."""
    d = ctx.detail
    if not isinstance(d, SglangPlanDetail) or d.context_length <= 0 or d.max_total_num_tokens <= 0:
        return
    if d.max_total_num_tokens < d.context_length or d.plan.max_concurrency_low < 1.0:
        return  # KV702 / KV105
    min_c = float(ctx.param("min_concurrency"))
    conc = d.max_total_num_tokens / d.context_length
    if conc >= min_c:
        return
    target = d.max_total_num_tokens // math.ceil(min_c)
    fixes = []
    if target > 0:
        nd = replanned(ctx.cr, context_length=target)
        if isinstance(nd, SglangPlanDetail) and nd.max_total_num_tokens >= min_c * nd.context_length:
            fixes.append(f"--context-length {target} (re-planned: {nd.max_total_num_tokens / target:.2f}x)")
    yield ctx.finding(
        f"SGLang's KV pool holds max_total_num_tokens {d.max_total_num_tokens:,} on {ctx.where}: only {times(conc, min_c)} "
        f"requests of context_length {d.context_length:,} fit at once (minimum {min_c:g}); further long requests "
        "wait in the queue or are retracted",
        _concurrency_loc(ctx),
        fix=_join(*fixes, _sglang_tp_remedy(ctx, d))
        or "use a larger GPU, more GPUs or --kv-cache-dtype fp8_e4m3",
    )


@check("KV105", engine="sglang")
def within_band_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV105 (SGLang): one context_length request fits the predicted pool but not its low end."""
    d = ctx.detail
    if not isinstance(d, SglangPlanDetail) or d.context_length <= 0:
        return
    p = d.plan
    if not (p.max_concurrency_low < 1.0 <= p.max_concurrency):
        return
    low = int(p.max_concurrency_low * d.context_length)
    yield ctx.finding(
        f"one request of context_length {d.context_length:,} fits SGLang's predicted KV pool "
        f"({d.max_total_num_tokens:,} tokens) on {ctx.where}, but not the low end of kvlint's band (about "
        f"{low:,} tokens): on some nodes the pool may hold less than one full-length request",
        _concurrency_loc(ctx),
        fix=_sglang_band_fix(ctx, d),
    )


def _sglang_band_fix(ctx: RuleContext, d: SglangPlanDetail) -> str:
    """KV105's remedies for SGLang, each re-planned and offered only when one request then fits also at the low
    end of kvlint's band (:func:`kvlint.rules.families.sglang._holds_one_request`): the longest shorter
    ``--context-length`` the pool holds there (:func:`kvlint.rules.families.sglang.fitting_context_length`, at
    least :data:`MIN_USEFUL_MAX_MODEL_LEN`), and the smallest larger ``--tp-size`` (2, 4, 8 dividing the
    attention heads)."""
    from kvlint.rules.families.sglang import _holds_one_request, fitting_context_length

    fixes = []
    fit = fitting_context_length(ctx, at_most=d.context_length - 1)
    if fit is not None:
        fixes.append(
            f"--context-length {fit[0]} or less (re-planned: {fit[1].max_total_num_tokens:,} tokens, one request "
            "fits, also at the low end of kvlint's band)"
        )
    m = ctx.model
    sizes = [n for n in (2, 4, 8) if n > d.tp and m is not None and not m.num_attention_heads % n]
    found = first_fitting(sizes, lambda n: replanned(ctx.cr, tp_size=n), _holds_one_request)
    if found is not None:
        n, nd = found
        assert isinstance(nd, SglangPlanDetail)
        fixes.append(
            f"--tp-size {n} with {n} GPUs{shm_note(ctx)} (re-planned: {nd.max_total_num_tokens:,} tokens)"
        )
    return _join(*fixes) or (
        f"a larger GPU: no --context-length of at least {MIN_USEFUL_MAX_MODEL_LEN:,} tokens or larger --tp-size "
        "that kvlint re-planned fits at the low end of its band"
    )


# ---------------------------------------------------------------------------------------------------------
# all engines


def _memory_fraction(ctx: RuleContext) -> tuple[float | None, str]:
    """The fraction of each GPU the engine claims and its flag: the plan's figure when planned, else the
    flag, else the engine's default (vLLM's by release; TGI 1.0; SGLang's depends on the GPU: unknown)."""
    name, flag, default = MEMORY_FRACTION[ctx.engine]
    if ctx.engine == "tgi":  # the option or its environment variable, as the container writes its settings
        flag = tgi_option(ctx.serving, name)
    if ctx.plan is not None:
        return ctx.plan.gpu_memory_utilization, flag
    value = as_float(ctx.serving.get(name))
    if value is not None:
        return value, flag
    if ctx.engine == "vllm":
        if _vllm_extensible(ctx):
            return 1.0, flag
        return default_gpu_memory_utilization(parse_version(ctx.serving.version)), flag
    return default, flag


def _vllm_extensible(ctx: RuleContext) -> bool:
    """vLLM >= 0.34.0 sizes its pool with the extensible KV cache (on by default; off with
    ``--no-enable-extensible-kv-cache`` and the other settings :func:`kvlint.memory.vllm.extensible_kv_cache`
    reads: ``--kv-cache-memory-bytes``, ``--num-gpu-blocks-override``, ``--enable-elastic-ep``, some KV
    connectors; on ROCm those that register the cache for RDMA), which skips the free >= requested check and
    defaults the utilization to 1.0 (``vllm@0.34.0:vllm/v1/worker/utils.py::request_memory``;
    docs/engine-memory-model.md §1.2.5). Decided with the GPU vendor of the placement's accelerator, as the plan
    decides it (:func:`kvlint.memory.vllm.resolve_startup`, :func:`kvlint.memory.vllm.gpu_vendor` of the same
    name and compute capability), so rule and plan agree; not decided for ROCm when the GPU is unknown."""
    s = ctx.serving
    if ctx.engine != "vllm" or not has_extensible_kv_cache(parse_version(s.version)):
        return False
    from kvlint.memory.vllm import extensible_kv_cache, gpu_vendor, release_switches, settings_from_config

    acc = ctx.placement.accelerator if ctx.placement is not None else None
    vendor = gpu_vendor(acc.name, acc.compute_capability) if acc is not None else None
    return extensible_kv_cache(settings_from_config(s), release_switches(parse_version(s.version)), vendor)


#: [heuristic] Memory each engine process holds outside its memory fraction: the CUDA context and the
#: NCCL/cuBLAS handles. vLLM creates them before its start-up snapshot and then requires the free memory to be at
#: least utilization x total (docs/engine-memory-model.md §1.2.1 step 1 and §1.11 E3, ``request_memory``), so n engines
#: at 1/n each cannot all start. The figure is the one kvlint's SGLang model assumes for the same memory
#: (:mod:`kvlint.memory.sglang`: CUDA context + the distributed set-up of more than one rank, 0.4 + 0.2 GiB).
_PROCESS_RESERVE = int(0.6 * GiB)


def _mps_claim(ctx: RuleContext, util: float, flag: str, cap: int, total: int) -> Iterator[Diagnostic]:
    """KV106 on a GPU shared through MPS, whose device plugin lets each client allocate at most ``cap`` bytes of the
    device's ``total`` (the whole GPU, which the engine reads as its total, while it finds at most the cap free).

    vLLM (>= 0.9.2, ``request_memory``) claims ``util`` x ``total`` (plus :data:`_PROCESS_RESERVE`) and stops at
    start-up when that is more than it finds free: an error. TGI and SGLang size their memory from what they find
    free, so they never claim more than the cap: TGI's ``get_cuda_free_memory`` takes ``max(0, free - (1 -
    cuda_memory_fraction) x total)`` (``text-generation-inference@v3.3.6:server/text_generation_server/utils/
    import_utils.py``), which leaves nothing beyond its warmup batch's blocks when ``(1 - fraction) x total`` is
    more than the cap (a warning saying so); SGLang's ``profile_max_num_token`` takes ``available - total_gpu_memory x (1 - mem_fraction_static)``
    with ``total_gpu_memory`` the memory free when it started (``sglang@v0.5.5:python/sglang/srt/model_executor/
    model_runner.py``), the cap; vLLM's extensible KV cache (>= 0.34.0) skips the check and sizes its pool from the
    free memory it measures (``vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py::measure_kv_cache_blocks``,
    docs/engine-memory-model.md §1.2.5), the cap too. For those a warning says the plan, on the whole GPU, overstates
    their memory."""
    p = ctx.placement
    assert p is not None
    acc = p.accelerator.name if p.accelerator else "the GPU"
    name = MEMORY_FRACTION[ctx.engine][0]
    s = ctx.serving
    loc = s.loc(name) if name in s.flags else (p.gpus_loc or p.loc)
    shared = f"{acc} is shared through MPS ({p.how or p.resource}): each engine may allocate at most {gib(cap)} of it"
    plan_on_cap = f"plan it on the cap (kvlint plan --gpu-memory {cap / GiB:.2f}GiB)"
    if ctx.engine == "tgi":
        kept = (1 - util) * total
        if kept + _PROCESS_RESERVE >= cap:
            yield ctx.finding(
                f"{shared}, and TGI finds at most that free; {flag.lstrip('-')} {util:.2f} keeps (1 - {util:.2f}) x "
                f"{gib(total)} = {gib(kept)} of the whole GPU out of it (get_cuda_free_memory), so with "
                f"{gib(_PROCESS_RESERVE)} CUDA context and NCCL [heuristic] nothing is left for its KV cache beyond "
                "its warmup batch's blocks (about one max_batch_prefill_tokens batch), far below the plan",
                loc,
                fix=f"leave {tgi_option(s, name)} at its default 1.0 (TGI then sizes its memory from the cap), or "
                "request a GPU that is not shared through MPS",
                severity="warning",
            )
            return
    if ctx.engine in ("tgi", "sglang") or _vllm_extensible(ctx):
        who = {"tgi": "TGI", "sglang": "SGLang"}.get(ctx.engine, "vLLM's extensible KV cache (>= 0.34.0)")
        yield ctx.finding(
            f"{shared}; {who} sizes its memory from what it finds free, at most the cap, not from the whole "
            f"{gib(total)} the plan is sized on, so its KV cache is smaller than planned",
            loc,
            fix=plan_on_cap + ", or request a GPU that is not shared through MPS",
            severity="warning",
        )
        return
    claimed = util * total + _PROCESS_RESERVE
    if claimed <= cap:
        return
    outcome = (
        "vLLM reads the whole GPU as its total but finds at most the cap free, and stops with 'Free memory on "
        "device ... is less than desired GPU memory utilization'"
    )
    most = math.floor(100 * (cap - _PROCESS_RESERVE) / total) / 100
    fix = "request a GPU that is not shared through MPS"
    if most > 0:
        fix = f"set {flag} {most:.2f} or less (the cap over the whole GPU), or " + fix
    yield ctx.finding(
        f"{shared}, but {flag.lstrip('-')} {util:.2f} claims {util:.2f} x {gib(total)} + {gib(_PROCESS_RESERVE)} "
        f"CUDA context and NCCL [heuristic] = {gib(claimed)}; {outcome}",
        loc,
        fix=fix,
    )


@check("KV106")
def gpu_oversubscribed(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV106: engines sharing one GPU (time-slicing/MPS) that together claim more than all of it.

    vLLM (>=0.9.2) checks at start-up that free memory >= gpu_memory_utilization x total
    (``vllm/v1/worker/utils.py::request_memory``, docs/engine-memory-model.md §1.11 E3), so two engines at 0.9 on one
    GPU cannot both start; TGI caps each process at ``cuda_memory_fraction`` (default 1.0, the whole GPU) and
    SGLang sizes its pool from ``mem_fraction_static`` of the memory free when it starts. Each process also holds
    :data:`_PROCESS_RESERVE` outside its fraction, so the fractions must add up to less than the whole device.

    Under MPS with a replica count (:attr:`~kvlint.types.Placement.mps_limit_bytes`) each engine is held to its own
    cap, 1/N of the GPU (NVIDIA k8s-device-plugin ``Daemon.perDevicePinnedDeviceMemoryLimits``), whatever else runs
    there, while it still reads the whole GPU as its total: its fraction of the whole GPU (plus
    :data:`_PROCESS_RESERVE`) must fit the cap, one engine alone included (:func:`_mps_claim`).
    """
    p = ctx.placement
    if p is None or not p.shared:
        return
    util, flag = _memory_fraction(ctx)
    if util is None:
        return
    if p.mps_limit_bytes is not None and p.memory_bytes:
        yield from _mps_claim(ctx, util, flag, p.mps_limit_bytes, p.memory_bytes)
        return
    w = ctx.workload
    replicas = w.replicas or 1
    sharers = p.max_sharers or replicas
    n = max(2, min(replicas, sharers) if p.max_sharers else replicas)
    total = p.memory_bytes
    if total:
        claimed = n * (util * total + _PROCESS_RESERVE)
        if claimed <= total:
            return
        arithmetic = (
            f"{n} x ({util:.2f} x {gib(total)} + {gib(_PROCESS_RESERVE)} CUDA context and NCCL [heuristic]) = "
            f"{gib(claimed)}, more than the {gib(total)} of the device"
        )
        most = math.floor(100 * (total / n - _PROCESS_RESERVE) / total) / 100
    else:
        if util * n <= 1.0:
            return
        arithmetic = f"{n} x {util:.2f} = {n * util:.2f} of the device"
        most = math.floor(100 / n) / 100
    acc = p.accelerator.name if p.accelerator else "the GPU"
    name = MEMORY_FRACTION[ctx.engine][0]
    s = ctx.serving
    loc = s.loc(name) if name in s.flags else (p.gpus_loc or p.loc)
    outcome = {
        "vllm": "the extensible KV cache (vLLM >= 0.34.0) does not check the claim against the free memory, so each "
        "sizes its KV cache from what the others left and the last to start finds little or none"
        if _vllm_extensible(ctx)
        else "the second fails with 'Free memory on device ... is less than desired GPU memory utilization'",
        "tgi": "the second runs out of CUDA memory while loading or at warmup",
        "sglang": "the second finds too little free memory and sizes no usable KV pool",
    }[ctx.engine]
    fix = "request a dedicated GPU (nvidia.com/gpu) instead of a shared one"
    if most > 0:
        value = tgi_option(s, name, f"{most:.2f}") if ctx.engine == "tgi" else f"{flag} {most:.2f}"
        fix = f"set {value} or less, or " + fix
    yield ctx.finding(
        f"{acc} is shared ({p.how or p.resource}): up to {n} engines may land on one GPU and each claims "
        f"{flag.lstrip('-')} {util:.2f} ({arithmetic}); {outcome}",
        loc,
        fix=fix,
    )


@check("KV107")
def invalid_memory_fraction(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV107: the engine's memory fraction outside (0, 1].

    Sources: vLLM ``vllm/config/cache.py::CacheConfig.gpu_memory_utilization`` (pydantic ``gt=0, le=1`` from
    0.11.1; ``_verify_args`` ValueError before); TGI ``torch.cuda.set_per_process_memory_fraction`` rejects a
    fraction outside [0, 1]; SGLang's ``mem_fraction_static`` multiplies the free memory (a value above 1
    claims memory that does not exist).
    """
    name, flag, _ = MEMORY_FRACTION[ctx.engine]
    s = ctx.serving
    raw = s.get(name)
    value = as_float(raw)
    if raw is None or value is None or 0.0 < value <= 1.0:
        return
    if ctx.engine == "vllm":
        message = (
            f"--gpu-memory-utilization {raw} is outside (0, 1]: it is the fraction of the GPU's memory vLLM "
            "may use, not a percentage or GiB"
        )
        fix = "use a fraction such as 0.90"
    else:
        option = tgi_option(s, name) if ctx.engine == "tgi" else flag
        message = (
            f"{option} {value} is outside (0, 1]: it is the fraction of each GPU's memory the engine may use"
        )
        fix = f"set {option} between 0 and 1 (e.g. 0.9)"
    yield ctx.finding(message, s.loc(name), fix=fix)


def _mamba_blocks_starts(d: PlanDetail) -> bool:
    """Whether the re-planned ``d`` passes vLLM's Mamba-block check at the low end of kvlint's band (``max_num_seqs``
    at most the pessimistic block count) and its KV fit check (:attr:`VllmPlanDetail.verdict` not ``fail``)."""
    if not isinstance(d, VllmPlanDetail) or d.verdict == "fail":
        return False
    return not d.mamba_blocks_high or d.plan.max_num_seqs <= d.mamba_blocks_low


def _mamba_seqs_remedy(ctx: RuleContext) -> str:
    """The largest ``--max-num-seqs`` below the current one whose re-planned pool still holds that many blocks at
    the band's low end (fewer sequences shrink the CUDA-graph estimate and the sampler's rows, so the pool only
    grows as it falls)."""
    d0 = ctx.detail
    if not isinstance(d0, VllmPlanDetail) or d0.mamba_blocks_low < 1:
        return ""
    cur = d0.plan.max_num_seqs
    found = largest_fitting(
        d0.mamba_blocks_low,
        cur - 1,
        lambda n: replanned(ctx.cr, max_num_seqs=n),
        _mamba_blocks_starts,
    )
    if found is None:
        return ""
    n, d = found
    assert isinstance(d, VllmPlanDetail)
    return (
        f"--max-num-seqs {n} starts: the pool then holds {d.mamba_blocks:,} blocks (at least {d.mamba_blocks_low:,} "
        "at the low end of the band)"
    )


def _mamba_util_remedy(ctx: RuleContext) -> str:
    """The smallest ``--gpu-memory-utilization`` (2 decimals, at most 0.98 or :func:`_util_ceiling`) whose re-planned
    pool holds
    ``max_num_seqs`` blocks at the band's low end (the pool grows with the budget)."""
    plan = ctx.plan
    if plan is None:
        return ""
    lo = _hundredths(plan.gpu_memory_utilization)
    found = smallest_fitting(
        lo,
        _util_ceiling(ctx),
        lambda h: replanned(ctx.cr, gpu_memory_utilization=h / 100),
        _mamba_blocks_starts,
    )
    if found is None:
        return ""
    h, d = found
    assert isinstance(d, VllmPlanDetail)
    return (
        f"--gpu-memory-utilization {h / 100:.2f} starts ({d.mamba_blocks:,} blocks, at least "
        f"{d.mamba_blocks_low:,} at the low end of the band) if nothing else uses the GPU"
    )


@check("KV108", engine="vllm")
def max_num_seqs_exceeds_mamba_blocks(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV108 (vLLM >= 0.20.0 **[assumed]**, read in 0.22.0 and 0.34.0): a model with Mamba-style state layers
    (Mamba-1/2, gated DeltaNet, KDA, linear attention) keeps one KV-cache block per decode sequence, and with FULL
    decode CUDA graphs vLLM refuses to start when ``max_num_seqs`` exceeds the pool's blocks
    (``vllm@0.34.0:vllm/config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes``). The block
    count is :func:`kvlint.memory.vllm.mamba_block_count`'s; the check runs after the KV fit check, so not when
    KV101-KV103 already stop the start."""
    d = ctx.detail
    if not isinstance(d, VllmPlanDetail) or d.mamba_refusal is None:
        return
    if _vllm_verdict(ctx) in ("KV101", "KV102", "KV103"):
        return
    plan, s = d.plan, ctx.serving
    n = plan.max_num_seqs
    given = "max_num_seqs" in s.flags
    which = (
        f"--max-num-seqs {n:,}"
        if given
        else f"max_num_seqs {n:,} (vLLM {plan.engine_version}'s default here)"
    )
    band = (
        f"{d.mamba_blocks:,} (band {d.mamba_blocks_low:,} to {d.mamba_blocks_high:,})"
        if d.mamba_blocks_low != d.mamba_blocks_high
        else f"{d.mamba_blocks:,}"
    )
    yield ctx.finding(
        f"{which} exceeds the {band} KV-cache blocks of {plan.bytes_per_block / 2**20:,.1f} MiB that vLLM "
        f"{plan.engine_version} plans on {ctx.where}: this hybrid model keeps one Mamba state block per decode "
        f"sequence, so with CUDA graphs start-up fails with '{d.mamba_refusal.split('. Each', 1)[0]}'; "
        f"{_plan_summary(plan)}",
        s.loc("max_num_seqs") if given else s.command_loc,
        fix=_join(
            _mamba_seqs_remedy(ctx),
            _mamba_util_remedy(ctx),
            "--enforce-eager (no CUDA graphs, so no such check, at a cost in decode speed)",
        ),
    )
