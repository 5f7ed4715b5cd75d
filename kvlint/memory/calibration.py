"""Calibrated heuristics for the terms vLLM *measures* at start-up and no source formula gives:
activation peak, non-torch memory and the CUDA-graph pool (docs/engine-memory-model.md §5). All values are
bytes per GPU. [heuristic]

Model (per GPU):

* activation = max(sampler, forward) where
  ``sampler = K_SAMPLER[regime] x R x vocab x 4`` (R = min(max_num_seqs, max_num_batched_tokens) dummy requests,
  fp32 logits and the sampler's temporaries: vLLM's profile run ends with a dummy sampler pass over one logit row
  per request, ``vllm@0.11.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run/_dummy_sampler_run``)
  and ``forward = T x (3 x I_eff/tp + 4 x hidden) x dtype_bytes`` (T = max_num_batched_tokens; gate_up + act
  outputs of the MLP and a few residual-width buffers; I_eff = top_k x moe_intermediate for MoE).
* non_torch = NON_TORCH[era/world] (NCCL/cuBLAS/allocator slack; larger when TP/PP > 1).
* cudagraph = CG_BASE + K_CG x layers x capture x (hidden + I_eff/tp) x dtype_bytes, capture =
  min(2 x max_num_seqs, 512) (largest capture size, ``vllm@0.11.0:vllm/config/scheduler.py``).

The coefficients are fitted by :func:`refit` on the observations in :data:`OBSERVATIONS`, which are figures
printed by vLLM and transcribed in the project's ground-truth cases (``fixtures/plan/groundtruth_cases.yaml``; ids
cited per row). They are constants at run time: the ground-truth file is never read by the planner.
``tests/test_plan_accuracy.py`` checks the constants equal ``refit()``.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

GiB = 1 << 30


@dataclass(frozen=True)
class Observation:
    """One measured start-up breakdown (GiB as vLLM printed it). Source: groundtruth/cases.yaml ``gt``."""

    gt: str
    regime: str  # v0_chunked_off | v0_chunked_on | v1_pre020 | v1_020plus
    max_num_seqs: int
    max_num_batched_tokens: int
    vocab: int
    activation_gib: float | None
    non_torch_gib: float | None
    world: int
    layers: int = 0
    hidden: int = 0
    inter_eff: int = 0
    cudagraph_gib: float | None = None


# Transcribed from the ground-truth cases (fixtures/plan/groundtruth_cases.yaml: facts printed by vLLM; model sizes
# from the corpus configs in fixtures/plan/models or the model's public config.json). Batch settings are the version defaults of
# kvlint.memory.defaults.batch_defaults for the reported GPU and flags.
OBSERVATIONS: tuple[Observation, ...] = (
    Observation("gt-056", "v1_pre020", 1024, 8192, 128256, 4.76, 0.13, 1),  # Llama-3.1-8B, H100
    Observation("gt-058", "v1_pre020", 1024, 8192, 151936, 5.56, 0.13, 1, 28, 1024, 3072, 0.10),  # Qwen3-0.6B
    Observation(
        "gt-052", "v1_pre020", 1024, 8192, 201088, 7.38, 0.13, 1, 24, 2880, 4 * 2880, 0.39
    ),  # gpt-oss-20b
    Observation("gt-054", "v1_pre020", 1024, 8192, 128256, 4.84, 0.55, 2),  # Llama-3.3-70B FP8, TP2
    Observation(
        "gt-062", "v1_020plus", 256, 2048, 152064, 1.04, 0.06, 1, 28, 3584, 18944, 0.48
    ),  # Qwen2.5-7B AWQ
    Observation("gt-010", "v0_chunked_off", 256, 4096, 152064, 1.42, 0.03, 1),  # Qwen2.5-7B, RTX 4060
    Observation("gt-070", "v0_chunked_off", 256, 4096, 151936, 1.40, 0.05, 1),  # Qwen2.5-Math-1.5B
    Observation(
        "gt-071", "v0_chunked_on", 256, 2048, 128256, 0.22, 0.05, 1
    ),  # Llama-3.1-8B-class, 131072 ctx
    Observation("gt-009", "v1_pre020", 256, 2048, 152064, None, 0.38, 4),  # Qwen2.5-VL-72B TP4 (median rank)
)


def _sampler_unit(o: Observation) -> float:
    r = min(o.max_num_seqs, o.max_num_batched_tokens)
    return r * o.vocab * 4 / GiB


def _cg_unit(o: Observation) -> float:
    capture = min(2 * o.max_num_seqs, 512)
    return o.layers * capture * (o.hidden + o.inter_eff) * 2 / GiB


_REGIME_FALLBACK = {
    "v1_020plus": ("v1_pre020",),
    "v1_pre020": ("v1_020plus",),
    "v0_chunked_off": ("v0_chunked_on", "v1_pre020"),
    "v0_chunked_on": ("v0_chunked_off",),
}
"""When a regime has no observation (e.g. leave-one-out removed its only case) its sampler coefficient is
borrowed from the nearest regime in this order."""


def refit(observations: tuple[Observation, ...] = OBSERVATIONS) -> dict[str, dict[str, float] | float]:
    """Re-derive the coefficients from the observations: per regime the median of activation / sampler unit,
    the median non-torch GiB by (era, single/multi GPU), and the median CUDA-graph ratio after the base.

    Regimes or non-torch classes without any observation borrow the value of the nearest regime
    (:data:`_REGIME_FALLBACK`) or keep the shipped constant, so a leave-one-out refit is always complete.
    Returns ``{"k_sampler": {...}, "non_torch_gib": {...}, "k_cudagraph": float}``.
    """
    k: dict[str, float] = {}
    for regime in sorted({o.regime for o in observations}):
        ratios = [
            o.activation_gib / _sampler_unit(o)
            for o in observations
            if o.regime == regime and o.activation_gib
        ]
        if ratios:
            k[regime] = round(statistics.median(ratios), 2)
    for regime, chain in _REGIME_FALLBACK.items():
        if regime not in k:
            k[regime] = next((k[r] for r in chain if r in k), K_SAMPLER[regime])
    nt: dict[str, float] = {}
    for key, sel in (
        ("v0", lambda o: o.regime.startswith("v0")),
        ("v1_single", lambda o: o.regime.startswith("v1") and o.world == 1),
        ("v1_multi", lambda o: o.regime.startswith("v1") and o.world > 1),
    ):
        vals = [o.non_torch_gib for o in observations if sel(o) and o.non_torch_gib is not None]
        nt[key] = round(statistics.median(vals), 2) if vals else NON_TORCH_GIB[key]
    cg = [(o.cudagraph_gib - CG_BASE_GIB) / _cg_unit(o) for o in observations if o.cudagraph_gib and o.layers]
    return {
        "k_sampler": k,
        "non_torch_gib": nt,
        "k_cudagraph": round(statistics.median(cg), 2) if cg else K_CUDAGRAPH,
    }


@contextmanager
def using(coefficients: dict[str, dict[str, float] | float]) -> Iterator[None]:
    """Temporarily plan with other coefficients (a :func:`refit` result), e.g. for leave-one-out accuracy in
    ``bench/accuracy.py``; the shipped constants are restored on exit. Not thread-safe."""
    global K_CUDAGRAPH
    saved = (dict(K_SAMPLER), dict(NON_TORCH_GIB), K_CUDAGRAPH)
    ks, nt, kc = coefficients["k_sampler"], coefficients["non_torch_gib"], coefficients["k_cudagraph"]
    assert isinstance(ks, dict) and isinstance(nt, dict) and isinstance(kc, float)
    try:
        K_SAMPLER.update(ks)
        NON_TORCH_GIB.update(nt)
        K_CUDAGRAPH = kc
        yield
    finally:
        K_SAMPLER.clear()
        K_SAMPLER.update(saved[0])
        NON_TORCH_GIB.clear()
        NON_TORCH_GIB.update(saved[1])
        K_CUDAGRAPH = saved[2]


def without(gt: str) -> tuple[Observation, ...]:
    """The observations minus those transcribed from case ``gt`` (leave-one-out)."""
    return tuple(o for o in OBSERVATIONS if o.gt != gt)


CG_BASE_GIB = 0.05
K_SAMPLER = {"v0_chunked_off": 9.73, "v0_chunked_on": 1.8, "v1_020plus": 7.17, "v1_pre020": 9.67}
NON_TORCH_GIB = {"v0": 0.05, "v1_single": 0.13, "v1_multi": 0.47}
K_CUDAGRAPH = 0.71

# Uncertainty band of the predicted KV bytes, from the residuals of bench/accuracy.py over the replayable
# ground-truth cases (predicted - reported KV GiB): the band is [kv - BAND_LOW, kv + BAND_HIGH] with each side
# = BAND_ABS_GIB + BAND_REL x (activation + non_torch + cudagraph) so it widens with the heuristic terms.
BAND_ABS_GIB = 0.35
BAND_REL = 0.35


def sampler_regime(era: str, version: tuple[int, int, int], chunked_prefill: bool) -> str:
    """Which fitted sampler coefficient applies: V0 with/without chunked prefill; V1 before/after 0.20.0."""
    if era == "v0":
        return "v0_chunked_on" if chunked_prefill else "v0_chunked_off"
    return "v1_020plus" if version >= (0, 20, 0) else "v1_pre020"


def activation_bytes(
    regime: str,
    max_num_seqs: int,
    max_num_batched_tokens: int,
    vocab: int,
    hidden: int,
    inter_eff: int,
    tp: int,
    dtype_bytes: int,
    last_stage: bool = True,
) -> int:
    """Activation peak of the profile run per GPU (bytes) = max(sampler, forward); the sampler term only on the
    last PP stage (the one computing logits). [heuristic, calibrated: gt-010, gt-052, gt-054, gt-056, gt-058,
    gt-062, gt-070, gt-071]"""
    r = min(max_num_seqs, max_num_batched_tokens)
    sampler = K_SAMPLER[regime] * r * vocab * 4 if last_stage else 0.0
    forward = max_num_batched_tokens * (3 * inter_eff / max(1, tp) + 4 * hidden) * dtype_bytes
    return int(max(sampler, forward))


def non_torch_bytes(era: str, world: int) -> int:
    """Non-torch memory growth per GPU (bytes): NCCL buffers when TP x PP > 1, cuBLAS/allocator otherwise.
    [heuristic, calibrated: gt-009, gt-010, gt-052, gt-054, gt-056, gt-058, gt-062, gt-070, gt-071]"""
    if era == "v0":
        return int(NON_TORCH_GIB["v0"] * GiB)
    return int(NON_TORCH_GIB["v1_multi" if world > 1 else "v1_single"] * GiB)


def cudagraph_bytes(
    layers: int, max_num_seqs: int, hidden: int, inter_eff: int, tp: int, dtype_bytes: int
) -> int:
    """CUDA-graph pool estimate per GPU (bytes). [heuristic, calibrated: gt-052, gt-058, gt-062]"""
    capture = min(2 * max_num_seqs, 512)
    return int(
        CG_BASE_GIB * GiB + K_CUDAGRAPH * layers * capture * (hidden + inter_eff / max(1, tp)) * dtype_bytes
    )


def band_bytes(overhead_bytes: int) -> int:
    """Half-width of the KV uncertainty band for a plan whose heuristic terms sum to ``overhead_bytes``."""
    return int(BAND_ABS_GIB * GiB + BAND_REL * overhead_bytes)
