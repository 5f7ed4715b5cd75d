"""The terms vLLM *measures* at start-up: activation peak, non-torch memory, CUDA-graph pool (bytes per GPU;
docs/engine-memory-model.md §5). [heuristic]

No source-level formula gives these numbers (docs/engine-memory-model.md §5), but the source says what the profile run
builds, release by release; kvlint derives each term from those shapes and keeps one calibrated factor per term
where the memory of an operation is not in the source (the temporaries of a sort, NCCL's buffers). [shapes from
source, factors calibrated]

Activation (``activation_bytes``) = the largest of the profile run's three phases (they run one after the other,
``vllm@0.11.2:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.profile_run``; V0 ``vllm@0.6.6:
vllm/worker/model_runner.py::GPUModelRunnerBase.profile_run`` runs the same forward and sampler in one step):

* **encoder** (multimodal models): ``K_ENCODER x`` the shape-derived peak of the vision tower over the dummy items
  (:mod:`kvlint.memory.multimodal`);
* **forward**: ``T x (3 x I_eff / tp + 4 x hidden) x dtype_bytes``, T = max_num_batched_tokens (the dummy run's
  tokens): the MLP's gate_up and activation outputs and a few residual-width buffers; I_eff = top_k x
  moe_intermediate for MoE;
* **sampler**: ``K_SAMPLER[path] x R x vocab x 4`` with R the sampled rows (V1: ``min(max_num_seqs, T)`` dummy
  requests, ``_dummy_sampler_run``; V0: the dummy sequences) and fp32 logits. The factor depends on which
  top-k/top-p implementation the release runs by default (:func:`sampler_path`): FlashInfer's rejection sampler
  needs the bf16 logits, their fp32 copy and the probabilities (about 10 bytes per element, factor ~2.5); the
  PyTorch path (``v1_native``) sorts the fp32 logits, and the sort's outputs and PyTorch's sort scratch set its
  peak: not calibrated, :func:`native_sampler_bytes` counts it from the source (38 B per logit, 9.5 x the fp32
  logits, for a 16-bit model at 128 rows or more; 50 B at 2 - 127 rows). From vLLM 0.17.0 the PyTorch path masks
  in place with a Triton kernel when R >= 8 (``v1_triton``, not calibrated: :func:`triton_sampler_bytes` counts
  its tensors from the source, and the same sort below 8 rows up to 0.29.x).

Plus the encoder outputs the V1 profile keeps in its encoder cache during the forward and sampler phases.

Non-torch (``non_torch_bytes``) = ``NON_TORCH_GIB[era] + NON_TORCH_GIB["per_peer"] x peers`` (NCCL communicator
buffers and the custom all-reduce buffers) ``+ NON_TORCH_GIB["rocm"]`` on AMD GPUs (HIP/RCCL runtime), with peers =
``tp x pp - 1`` on GPUs whose NCCL may run NVLink SHARP (NVLS: its buffers grow with the ranks), capped at the
NVLink domain's ``domain - 1`` (:func:`nvls_domain`: 8 GPUs on an HGX board, 72 on an NVL72 rack), and at most 1 on
GPUs that cannot (NCCL's ring and tree buffers do not): :func:`nccl_peers`. CUDA graphs (``cudagraph_bytes``) = ``CG_BASE +
K_CUDAGRAPH MiB x layers x graphs``: the graphs vLLM captures (:func:`cudagraph_count`: one piecewise graph per capture
size up to the largest, ``min(2 x max_num_seqs, 512)`` (``vllm@0.11.0:vllm/config/scheduler.py``; x (1 + speculative
tokens) from 0.13.0, never above ``max_num_batched_tokens``, a model's own size such as gpt-oss's 1,024:
:func:`cudagraph_capture_tokens`), plus from 0.11.0 a FULL graph per decode size), each holding memory for the
kernels of every layer of the stage.

The factors are fitted by :func:`refit` on :data:`OBSERVATIONS`, figures printed by vLLM and transcribed from the
ground truth (``../shared/groundtruth/cases.yaml`` and ``bench/groundtruth/cases.yaml``, ids cited per row); the
shapes in each row are those of the case's config and flags. They are constants at run time: the ground-truth files
are never read by the planner. ``tests/test_plan_accuracy.py`` checks the constants equal ``refit()`` and
``bench/accuracy.py`` prints a leave-one-out figure for each term.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from kvlint.memory.memo import by_value
from kvlint.values import parse_cc

GiB = 1 << 30
MiB = 1 << 20

#: [calibrated] CUDA context a GPU process holds before any distributed set-up: the median of the four start-up
#: logs that separate it from SGLang's "Init torch distributed ends. mem usage=X GB" (total - the pre-load free
#: memory - that usage): gt-250 0.39 and gt-251 0.61 GiB (TP1 H100, no distributed memory), gt-252 0.19 GiB (TP4
#: L4), 0.42 GiB on 8 H200s (gt-254, sgl-project/sglang#11716, TP0: 139.72 - 137.34 - 1.96).
#: docs/engine-memory-model.md §3.3. KV101 (vLLM) keeps it as the margin for "the weights still load" (vLLM
#: counts NCCL in its non-torch term), and vLLM's extensible KV cache (>= 0.34.0) as what its start snapshot
#: finds in use (§1.2.5). Read by :mod:`kvlint.memory.sglang` too.
CUDA_CONTEXT_BYTES = int(0.4 * GiB)


def capture_sizes(top: int, stepped: bool = True) -> list[int]:
    """vLLM's CUDA-graph capture sizes up to ``top`` tokens. ``stepped`` (from 0.11.1, and the list gpt-oss's
    override builds from 0.10.1): ``[1, 2, 4]``, multiples of 8 below 256, multiples of 16 from 256
    (``vllm@0.11.1``/``vllm@0.12.0:vllm/config/vllm.py::VllmConfig._set_cudagraph_sizes``): 51 sizes at 512, 83 at
    1,024, 81 at 992. Otherwise the default list of 0.10.x - 0.11.0, ``[1, 2, 4]`` and multiples of 8 throughout
    (``vllm@0.10.2``/``vllm@0.11.0:vllm/config/__init__.py``; ``vllm/config/vllm.py``): 67 at 512."""
    if stepped:
        sizes = [1, 2, 4, *range(8, 256, 8), *range(256, top + 1, 16)]
    else:
        sizes = [1, 2, 4, *range(8, top + 1, 8)]
    return [s for s in sizes if s <= top]


#: vLLM's ``cudagraph_mode`` values (``vllm/config/compilation.py::CUDAGraphMode``): (graphs per capture size - the
#: mixed-batch routine, piecewise or FULL -, a FULL graph per uniform-decode size as a separate routine).
#: ``GPUModelRunner.capture_model`` (``vllm@0.11.0``/``vllm@0.19.0:vllm/v1/worker/gpu_model_runner.py``) captures
#: ``mixed_mode()`` over every capture size unless it is NONE, and the FULL decode graphs when ``decode_mode()`` is
#: FULL and the mode is a separate routine (FULL_DECODE_ONLY, FULL_AND_PIECEWISE).
CUDAGRAPH_MODES: dict[str, tuple[bool, bool]] = {
    "NONE": (False, False),
    "PIECEWISE": (True, False),
    "FULL": (True, False),
    "FULL_DECODE_ONLY": (False, True),
    "FULL_AND_PIECEWISE": (True, True),
}


@dataclass(frozen=True)
class CudagraphUser:
    """What a command line sets of vLLM's CUDA-graph capture (:func:`kvlint.memory.vllm.cudagraph_user`):
    ``mode`` a :data:`CUDAGRAPH_MODES` key the user (or ``-O``/the compilation level) set, else None (the release's
    default); ``sizes`` the capture sizes given as a list (``cudagraph_capture_sizes``, or ``--cuda-graph-sizes``
    with several values or from 0.11.1), deduplicated; ``max_size`` the largest capture size given
    (``max_cudagraph_capture_size``, 0.11.1 on); ``stepped_to`` ``--cuda-graph-sizes N`` of 0.9 - 0.11.0 (one
    value: ``[1, 2, 4]`` and multiples of 8 up to N, no 512 cap); ``interactivity`` ``--performance-mode
    interactivity`` (every size from 1 to 32 first); ``filter_sizes`` whether vLLM drops the listed sizes above
    ``max_num_batched_tokens`` (from 0.11.1 for ``cudagraph_capture_sizes``, always for the scheduler's list)."""

    mode: str | None = None
    sizes: tuple[int, ...] | None = None
    max_size: int | None = None
    stepped_to: int | None = None
    interactivity: bool = False
    filter_sizes: bool = True

    @property
    def sets_sizes(self) -> bool:
        """The user chose the capture sizes (a model's own default, gpt-oss's 1,024, then does not apply)."""
        return self.sizes is not None or self.max_size is not None or self.stepped_to is not None


def _sizes_le(y: int, top: int, stepped: bool, interactivity: bool = False) -> int:
    """How many of vLLM's generated capture sizes up to ``top`` (:func:`capture_sizes`) are <= ``y``, counted
    without building the list (``top`` may come from a flag: no loop is sized by it)."""
    y = min(y, top)
    if y < 1:
        return 0
    if not stepped:
        return sum(1 for s in (1, 2, 4) if s <= y) + y // 8
    n = min(y, 32) if interactivity else sum(1 for s in (1, 2, 4) if s <= y)
    n += min(y, 248) // 8 - (min(y, 32) // 8 if interactivity else 0)  # 8, 16, 24, 32 already counted
    if y >= 256:
        n += (y - 256) // 16 + 1
    return n


def cudagraph_count(
    capture: int,
    max_num_seqs: int,
    decode_query_len: int = 1,
    version: tuple[int, int, int] | None = None,
    model_list: bool = False,
    mode: str | None = None,
    sizes: tuple[int, ...] | None = None,
    interactivity: bool = False,
) -> int:
    """The CUDA graphs vLLM captures per rank: per :data:`CUDAGRAPH_MODES`, a graph per capture size up to
    ``capture`` (:func:`capture_sizes`; the stepped list from 0.11.1, or when ``model_list`` - a model's own
    list such as gpt-oss's; from 1 to 32 first with ``interactivity``), or per size of ``sizes`` when the user
    listed them, and a FULL graph for each size of a uniform decode batch, ``decode_query_len <= size <=
    max_num_seqs x decode_query_len`` (``vllm@0.14.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.
    capture_model``, ``decode_cudagraph_batch_sizes``). ``mode`` None: the release's default, ``FULL_AND_PIECEWISE``
    from 0.11.0 ("(v1 default)", ``vllm@0.11.0:vllm/config/compilation.py::CUDAGraphMode``), ``PIECEWISE``
    before. ``version`` None: the newest behaviour. The caller passes ``mode`` PIECEWISE where the attention
    backend supports no full graph (chunked local attention: :func:`kvlint.memory.vllm.effective_cudagraph_user`);
    other such backends are not modelled (FlashInfer with speculative decoding). With FULL decode graphs and
    ``decode_query_len`` q > 1, 0.11.1 - 0.33.x round every size up to a multiple of q first (below)."""
    v = version or (99, 0, 0)
    if mode is None:
        mode = "FULL_AND_PIECEWISE" if v >= (0, 11, 0) else "PIECEWISE"
    mixed, decode = CUDAGRAPH_MODES.get(mode, (True, v >= (0, 11, 0)))
    q = max(1, decode_query_len)
    hi = max_num_seqs * q
    if sizes is not None:
        n_all = len(sizes)
        n_dec = sum(1 for s in sizes if q <= s <= hi)
    else:
        stepped = model_list or v >= (0, 11, 1) or interactivity
        n_all = _sizes_le(capture, capture, stepped, interactivity)
        n_dec = max(
            0,
            _sizes_le(hi, capture, stepped, interactivity)
            - _sizes_le(q - 1, capture, stepped, interactivity),
        )
    if decode and q > 1 and (0, 11, 1) <= v < (0, 34, 0) and n_all <= _ROUND_ENUM_MAX:
        # FULL decode graphs with speculative decoding: every capture size rounded up to a multiple of q, no more
        # than the largest, deduplicated (vllm@0.11.1 - vllm@0.33.0:vllm/config/compilation.py::CompilationConfig.
        # adjust_cudagraph_sizes_for_spec_decode, called by GPUModelRunner when the decode mode is FULL and a
        # separate routine); gt-291: "PIECEWISE=38 (largest=336), FULL=22 (largest=168)" from 40 sizes
        if sizes is not None:
            base = list(sizes)
        else:
            st = model_list or v >= (0, 11, 1) or interactivity
            base = [x for x in _generated_sizes(capture, st, interactivity)]
        top = max(base, default=0)
        rounded = sorted({-(-x // q) * q for x in base if -(-x // q) * q <= top})
        if not rounded and q <= top:
            rounded = [q]
        n_all = len(rounded)
        n_dec = sum(1 for x in rounded if q <= x <= hi)
    return (n_all if mixed else 0) + (n_dec if decode else 0)


#: the most capture sizes kvlint rounds one by one for speculative decoding (past it the unrounded count stands)
_ROUND_ENUM_MAX = 1 << 16


def _generated_sizes(top: int, stepped: bool, interactivity: bool = False) -> list[int]:
    """vLLM's generated capture list up to ``top`` (:func:`capture_sizes`; every size from 1 to 32 first with
    ``interactivity``). Only called when :func:`_sizes_le` counts at most :data:`_ROUND_ENUM_MAX` of them."""
    if interactivity:
        out = set(range(1, min(top, 32) + 1))
        out.update(capture_sizes(top, stepped=True))
        return sorted(out)
    return capture_sizes(top, stepped)


@dataclass(frozen=True)
class Observation:
    """One measured start-up (GiB as vLLM printed it). Source: groundtruth cases ``gt``.

    ``path`` the sampler path (:func:`sampler_path`) of that release; ``rows`` sampled rows R; ``tokens`` the
    dummy run's tokens T; ``vocab``, ``hidden``, ``inter_eff`` (whole model), ``tp``, ``layers`` (per rank),
    ``capture`` (largest CUDA-graph batch), ``graphs`` (:func:`cudagraph_count` for the case's release and
    flags), ``dtype_bytes`` of the case's config and flags; ``world`` = TP x PP;
    ``vendor`` ``nvidia``/``amd``; ``nvls`` whether the case's GPU can run NCCL's NVLink SHARP (:func:`nvls_capable`);
    ``version`` the release the case is replayed at, given on the multi-GPU rows (it decides which NCCL share falls
    in the non-torch window, :func:`profiled_peer_world`; None: the newest release's rule).
    Printed figures: ``activation_gib``, ``non_torch_gib``, ``cudagraph_gib`` (graph
    memory after capture), or ``overhead_gib`` = budget - weights - KV when only those were printed (then the
    sum of activation, non-torch and any deducted graph estimate). ``encoder_peak_gib``/``encoder_cache_gib``: the
    shape-derived encoder peak and cache of :func:`kvlint.memory.multimodal.encoder_profile` for that case.
    """

    gt: str
    path: str
    rows: int
    tokens: int
    vocab: int
    hidden: int
    inter_eff: int
    tp: int
    world: int
    activation_gib: float | None = None
    non_torch_gib: float | None = None
    overhead_gib: float | None = None
    layers: int = 0
    capture: int = 0
    cudagraph_gib: float | None = None
    graphs: int = 0
    vendor: str = "nvidia"
    dtype_bytes: int = 2
    encoder_peak_gib: float = 0.0
    encoder_cache_gib: float = 0.0
    nvls: bool | None = None
    version: tuple[int, ...] | None = None

    @property
    def era(self) -> str:
        return "v0" if self.path.startswith("v0") else "v1"

    @property
    def peers(self) -> int:
        """The NCCL shares the planner counts for this run (:func:`non_torch_bytes`): :func:`nccl_peers` of the
        ranks whose communicators fall in vLLM's non-torch window (:func:`profiled_peer_world`), so the refit
        divides by the multiplier the model multiplies by (a TP 1 x PP 2 run of 0.11.0 or later has none)."""
        return nccl_peers(profiled_peer_world(self.world, self.tp, self.version), self.nvls)


# Transcribed from the ground truth (printed figures) and the cases' configs (shapes). Sampler path per release:
# sampler_path(). Rows whose activation is not printed carry overhead_gib = budget - weights - KV (our arithmetic
# on printed numbers).
OBSERVATIONS: tuple[Observation, ...] = (
    # vLLM 0.14.x (vllm/vllm-openai:latest of 2026-01-26, H100 79.18 GiB, per-term 'Actual usage' line): native sampler
    Observation("gt-056", "v1_native", 1024, 8192, 128256, 4096, 14336, 1, 1, 4.76, 0.13),  # Llama-3.1-8B
    Observation(
        "gt-058",
        "v1_native",
        1024,
        8192,
        151936,
        1024,
        3072,
        1,
        1,
        5.56,
        0.13,
        None,
        28,
        512,
        0.10,
        graphs=cudagraph_count(512, 1024, 1, (0, 14, 1)),
    ),
    Observation(
        "gt-052",
        "v1_native",
        1024,
        8192,
        201088,
        2880,
        11520,
        1,
        1,
        7.38,
        0.13,
        None,
        24,
        1024,
        0.39,
        graphs=cudagraph_count(1024, 1024, 1, (0, 14, 1), model_list=True),
    ),  # gpt-oss-20b: its config raises the largest capture size to 1,024 (vllm.model_capture_size)
    Observation(
        "gt-054",
        "v1_native",
        1024,
        8192,
        128256,
        8192,
        28672,
        2,
        2,
        4.84,
        0.55,
        version=(0, 14, 1),
        nvls=True,
    ),  # Llama-3.3-70B FP8 TP2
    # 0.26.0 on an RTX 4080 (CC 8.9): FlashInfer sampler by default
    Observation(
        "gt-062",
        "v1_flashinfer",
        256,
        2048,
        152064,
        3584,
        18944,
        1,
        1,
        1.04,
        0.06,
        None,
        28,
        512,
        0.48,
        graphs=cudagraph_count(512, 256, 1, (0, 26, 0)),
    ),
    # 0.10.1.1 (FlashInfer sampler by default), A100 80GB (79.26 GiB): overhead only
    Observation(
        "gt-210",
        "v1_flashinfer",
        256,
        2048,
        152064,
        3584,
        18944,
        1,
        1,
        None,
        None,
        0.56,
        28,
        512,
        0.5,
        graphs=cudagraph_count(512, 256, 1, (0, 10, 1)),
    ),
    Observation(
        "gt-211",
        "v1_flashinfer",
        256,
        2048,
        152064,
        3584,
        18944,
        1,
        1,
        None,
        None,
        0.55,
        28,
        512,
        0.5,
        graphs=cudagraph_count(512, 256, 1, (0, 10, 1)),
    ),
    Observation(
        "gt-213",
        "v1_flashinfer",
        256,
        2048,
        152064,
        3584,
        18944,
        2,
        2,
        None,
        None,
        0.67,
        28,
        512,
        0.65,
        version=(0, 10, 1),
        nvls=False,
        graphs=cudagraph_count(512, 256, 1, (0, 10, 1)),
    ),
    Observation(
        "gt-214",
        "v1_flashinfer",
        256,
        2048,
        152064,
        3584,
        18944,
        2,
        2,
        None,
        None,
        0.68,
        28,
        512,
        0.65,
        version=(0, 10, 1),
        nvls=False,
        graphs=cudagraph_count(512, 256, 1, (0, 10, 1)),
    ),
    Observation(
        "gt-215",
        "v1_flashinfer",
        256,
        2048,
        201088,
        2880,
        11520,
        4,
        4,
        None,
        None,
        0.87,
        36,
        1024,  # gpt-oss's own largest capture size (0.10.1.1), below the 2,048 batched tokens
        1.88,
        version=(0, 10, 1),
        nvls=False,
        graphs=cudagraph_count(1024, 256, 1, (0, 10, 1), model_list=True),
    ),
    # 0.11.2 (native sampler), gemma-3-27b-it on B200: overhead 160.51 - 51.45 - 88.51
    Observation(
        "gt-203",
        "v1_native",
        1024,
        16384,
        262208,
        5376,
        21504,
        1,
        1,
        None,
        None,
        20.56,
        62,
        512,
        4.19,
        graphs=cudagraph_count(512, 1024, 1, (0, 11, 2)),
        encoder_peak_gib=5.53,
        encoder_cache_gib=10.34,
    ),  # fmt: skip
    # V0 (printed 'Memory profiling' terms)
    Observation(
        "gt-010", "v0_sort", 256, 4096, 152064, 3584, 18944, 1, 1, 1.42, 0.03
    ),  # Qwen2.5-7B, RTX 4060
    Observation("gt-070", "v0_sort", 256, 4096, 151936, 1536, 8960, 1, 1, 1.40, 0.05),  # Qwen2.5-Math-1.5B
    Observation(
        "gt-217", "v0_sort", 256, 8192, 128256, 4096, 14336, 1, 1, 1.26, 1.79
    ),  # Llama-3-8B, Dec 2024 main
    Observation(
        "gt-218", "v0_sort", 256, 8192, 128256, 4096, 14336, 2, 2, 1.26, 3.58, version=(0, 6, 5), nvls=True
    ),  # same, TP2
    Observation("gt-066", "v0_sort", 256, 32768, 151936, 1536, 8960, 1, 1, 2.02, 0.01),  # Qwen2.5-1.5B, T4
    Observation("gt-209", "v0_sort", 8, 8192, 151936, 1024, 3072, 1, 1, 0.23, 0.16),  # Qwen3-0.6B, V0 forced
    Observation("gt-220", "v0_sort", 256, 4096, 32000, 4096, 11008, 1, 1, None, 0.16),  # Llama-2-7b + LoRA
    Observation(
        "gt-071", "v0_chunked", 256, 2048, 128256, 4096, 14336, 1, 1, 0.22, 0.05
    ),  # Llama-3.1-8B-class
    Observation(
        "gt-221",
        "v0_chunked",
        256,
        2048,
        152064,
        5120,
        13824,
        2,
        2,
        0.19,
        0.25,
        version=(0, 7, 0),
        nvls=False,
    ),  # R1-Distill-14B TP2 on RTX 4090s
    Observation(
        "gt-009",
        "v0_chunked",
        256,
        2048,
        152064,
        8192,
        29568,
        4,
        4,
        None,
        0.38,
        version=(0, 8, 3),
        nvls=False,
    ),  # Qwen2.5-VL-72B TP4 on A100-40GB (Ampere: no NVLS)
    Observation(
        "gt-219",
        "v0_sort",
        128,
        65536,
        128256,
        4096,
        14336,
        1,
        1,
        36.63,
        0.16,
        encoder_peak_gib=40.2,
        encoder_cache_gib=6.28,
    ),  # Llama-3.2-11B-Vision (mllama), 128 dummy images
    # vLLM 0.19.0 on H100 80GB (llm-d-planner's sweep, FULL_AND_PIECEWISE, max_num_seqs 1,024): the CUDA-graph pool
    # only ("Graph capturing finished ... took X GiB", measured after torch.accelerator.empty_cache() in
    # GPUModelRunner.capture_model); their activation and non-torch figures are not transcribed here (0.19's TP > 1
    # non-torch memory is an open gap, docs §5)
    Observation(
        "gt-345",
        "v1_triton",
        1024,
        8192,
        151936,
        4096,
        12288,
        1,
        1,
        layers=36,
        capture=512,
        cudagraph_gib=0.96,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen3-8B
    Observation(
        "gt-346",
        "v1_triton",
        1024,
        8192,
        32016,
        4096,
        11008,
        1,
        1,
        layers=32,
        capture=512,
        cudagraph_gib=0.89,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # CodeLlama-7b
    Observation(
        "gt-347",
        "v1_triton",
        1024,
        8192,
        256000,
        3584,
        14336,
        1,
        1,
        layers=42,
        capture=512,
        cudagraph_gib=1.09,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # gemma-2-9b-it
    Observation(
        "gt-348",
        "v1_triton",
        1024,
        8192,
        262208,
        5376,
        21504,
        1,
        1,
        layers=62,
        capture=512,
        cudagraph_gib=1.14,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # gemma-3-27b-it
    Observation(
        "gt-349",
        "v1_triton",
        1024,
        8192,
        100352,
        5120,
        17920,
        1,
        1,
        layers=40,
        capture=512,
        cudagraph_gib=1.07,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # phi-4
    Observation(
        "gt-350",
        "v1_triton",
        1024,
        8192,
        151936,
        2048,
        5632,
        1,
        1,
        layers=24,
        capture=512,
        cudagraph_gib=1.1,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen1.5-MoE-A2.7B
    Observation(
        "gt-351",
        "v1_triton",
        1024,
        8192,
        151936,
        2048,
        6144,
        1,
        1,
        layers=48,
        capture=512,
        cudagraph_gib=1.41,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen3-30B-A3B
    Observation(
        "gt-352",
        "v1_triton",
        1024,
        8192,
        128256,
        4096,
        14336,
        2,
        2,
        layers=32,
        capture=512,
        cudagraph_gib=0.76,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.1-8B, TP 2
    Observation(
        "gt-353",
        "v1_triton",
        1024,
        8192,
        152064,
        8192,
        29568,
        2,
        2,
        layers=80,
        capture=512,
        cudagraph_gib=1.61,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen2.5-72B, TP 2
    Observation(
        "gt-354",
        "v1_triton",
        1024,
        8192,
        32000,
        4096,
        28672,
        2,
        2,
        layers=32,
        capture=512,
        cudagraph_gib=0.93,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Mixtral-8x7B, TP 2
    Observation(
        "gt-355",
        "v1_triton",
        1024,
        8192,
        128256,
        4096,
        14336,
        1,
        2,
        layers=16,
        capture=512,
        cudagraph_gib=0.65,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.1-8B, PP 2: 16 layers a stage
    Observation(
        "gt-356",
        "v1_triton",
        1024,
        8192,
        202048,
        5120,
        8192,
        4,
        4,
        layers=48,
        capture=512,
        cudagraph_gib=1.13,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0), mode="PIECEWISE"),
    ),  # Llama-4-Scout, TP 4: chunked local attention, no FULL graph ("PIECEWISE=51 (largest=512)")
    Observation(
        "gt-357",
        "v1_triton",
        1024,
        8192,
        128256,
        4096,
        14336,
        1,
        1,
        layers=32,
        capture=512,
        cudagraph_gib=0.91,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.1-8B, fp8 KV
    Observation(
        "gt-359",
        "v1_triton",
        1024,
        8192,
        201088,
        2880,
        11520,
        1,
        1,
        layers=24,
        capture=1024,
        cudagraph_gib=1.84,
        graphs=cudagraph_count(1024, 1024, 1, (0, 19, 0), model_list=True),
    ),  # gpt-oss-20b: its own 1,024-token capture; not replayed (a failure), gt-052's shapes
    # the same sweep's TP 2 and TP 4 runs added by branch logs47
    Observation(
        "gt-360",
        "v1_triton",
        1024,
        8192,
        128256,
        4096,
        14336,
        4,
        4,
        layers=32,
        capture=512,
        cudagraph_gib=0.67,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.1-8B, TP 4
    Observation(
        "gt-361",
        "v1_triton",
        1024,
        8192,
        152064,
        3584,
        18944,
        2,
        2,
        layers=28,
        capture=512,
        cudagraph_gib=0.71,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen2.5-7B, TP 2
    Observation(
        "gt-362",
        "v1_triton",
        1024,
        8192,
        152064,
        3584,
        18944,
        4,
        4,
        layers=28,
        capture=512,
        cudagraph_gib=0.64,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Qwen2.5-7B, TP 4
    Observation(
        "gt-363",
        "v1_triton",
        1024,
        8192,
        128256,
        8192,
        28672,
        2,
        2,
        layers=80,
        capture=512,
        cudagraph_gib=1.79,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.3-70B FP8, TP 2
    Observation(
        "gt-364",
        "v1_triton",
        1024,
        8192,
        128256,
        8192,
        28672,
        4,
        4,
        layers=80,
        capture=512,
        cudagraph_gib=1.66,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.3-70B FP8, TP 4
    Observation(
        "gt-365",
        "v1_triton",
        1024,
        8192,
        128256,
        8192,
        28672,
        2,
        2,
        layers=80,
        capture=512,
        cudagraph_gib=1.85,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Llama-3.3-70B W8A8, TP 2
    Observation(
        "gt-366",
        "v1_triton",
        1024,
        8192,
        131072,
        5120,
        32768,
        2,
        2,
        layers=40,
        capture=512,
        cudagraph_gib=1.03,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Mistral-Small-3.1 W8A8, TP 2
    Observation(
        "gt-367",
        "v1_triton",
        1024,
        8192,
        152064,
        8192,
        29568,
        2,
        2,
        layers=80,
        capture=512,
        cudagraph_gib=1.61,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Kimi-Dev-72B (Qwen2.5-72B shapes), TP 2
    Observation(
        "gt-368",
        "v1_triton",
        1024,
        8192,
        152064,
        8192,
        29568,
        4,
        4,
        layers=80,
        capture=512,
        cudagraph_gib=1.54,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(512, 1024, 1, (0, 19, 0)),
    ),  # Kimi-Dev-72B, TP 4
    Observation(
        "gt-369",
        "v1_triton",
        1024,
        8192,
        201088,
        2880,
        11520,
        2,
        2,
        layers=24,
        capture=1024,
        cudagraph_gib=1.55,
        version=(0, 19, 0),
        nvls=True,
        graphs=cudagraph_count(1024, 1024, 1, (0, 19, 0), model_list=True),
    ),  # gpt-oss-20b, TP 2, its own 1,024-token capture
    # ROCm (MI300X 191.98 GiB, ROCm 6.2 build, V0): overhead 172.79 - 14.96 (bf16 weights) - 78,897 blocks x 2 MiB
    Observation("gt-202", "v0_sort", 256, 8192, 128256, 4096, 14336, 1, 1, None, None, 3.72, vendor="amd"),
)


def _sampler_unit(o: Observation) -> float:
    return o.rows * o.vocab * 4 / GiB


def _forward_unit(o: Observation) -> float:
    return o.tokens * (3 * o.inter_eff / max(1, o.tp) + 4 * o.hidden) * o.dtype_bytes / GiB


def _cg_unit(o: Observation) -> float:
    return o.layers * o.graphs * MiB / GiB


_PATH_FALLBACK = {
    "v0_sort": ("v1_native", "v0_chunked"),
    "v0_chunked": ("v0_sort",),
    "v1_native": ("v0_sort", "v1_flashinfer"),
    "v1_flashinfer": ("v1_native",),
}
"""When a path has no observation (leave-one-out removed its only case) its factor is borrowed from the nearest
path in this order."""


def _nt_model(o: Observation, nt: dict[str, float]) -> float:
    rocm = nt["rocm"] if o.vendor == "amd" else 0.0
    nv = nvls_buffer_bytes(o.tp, o.nvls, version=o.version) / GiB if o.vendor == "nvidia" else 0.0  # Hopper
    return nt[o.era] + nt["per_peer"] * o.peers + nv + rocm


def _activation_seen(o: Observation, nt: dict[str, float]) -> float | None:
    """The printed activation, else the overhead minus the modelled non-torch term (GiB)."""
    if o.activation_gib is not None:
        return o.activation_gib
    if o.overhead_gib is not None and o.vendor == "nvidia":
        return o.overhead_gib - _nt_model(o, nt)
    return None


def refit(observations: tuple[Observation, ...] = OBSERVATIONS) -> dict[str, Any]:
    """Re-derive the factors from the observations, term by term (medians, so one odd report moves little):

    1. ``non_torch_gib``: per era the median printed non-torch of single-GPU NVIDIA runs; ``per_peer`` the median of
       (printed - era base - NVLS buffer) / shares over the runs the planner charges a share
       (:attr:`Observation.peers`: :func:`nccl_peers` of :func:`profiled_peer_world`, as :func:`non_torch_bytes`
       counts them; a pipeline-parallel run of 0.11.0 or later at TP 1 has none); ``rocm`` the median AMD overhead
       left after the modelled activation, base and peers.
    2. ``k_sampler`` per path: activation (printed, or overhead - modelled non-torch) minus the encoder cache, over
       R x vocab x 4 B, on runs where the sampler phase is the peak (activation above 1.15 x the forward estimate and
       not dominated by an encoder pass).
    3. ``k_encoder``: activation / shape-derived encoder peak on runs whose peak is the encoder pass.
    4. ``k_cudagraph``: (printed graph memory - base) / (layers x graphs) over V1 runs, in MiB.

    Terms without any observation fall back to a value that owes nothing to the removed case (a sampler path
    borrows the nearest path, :data:`_PATH_FALLBACK`; no AMD run -> no ROCm share; no encoder-bound run -> factor
    1.0, the bare shape estimate), so a leave-one-out refit is complete and honest. Returns ``{"k_sampler": {...}, "non_torch_gib": {...},
    "k_encoder": float, "k_cudagraph": float}``.
    """
    obs = observations
    nt: dict[str, float] = {}
    for era in ("v0", "v1"):
        vals = [o.non_torch_gib for o in obs if o.era == era and o.world == 1 and o.vendor == "nvidia"
                and o.non_torch_gib is not None]  # fmt: skip
        nt[era] = round(statistics.median(vals), 2) if vals else NON_TORCH_GIB[era]
    peers = [(o.non_torch_gib - nt[o.era] - nvls_buffer_bytes(o.tp, o.nvls, version=o.version) / GiB) / o.peers
             for o in obs if o.peers > 0 and o.non_torch_gib is not None and o.vendor == "nvidia"]  # fmt: skip
    nt["per_peer"] = round(statistics.median(peers), 2) if peers else NON_TORCH_GIB["per_peer"]
    nt["rocm"] = 0.0  # no AMD observation: no ROCm share (not the shipped constant, which came from one)

    enc: list[float] = []
    ks: dict[str, list[float]] = {}
    for o in obs:
        act = _activation_seen(o, {**nt, "rocm": 0.0})
        if act is None:
            continue
        if o.encoder_peak_gib and o.encoder_peak_gib >= 0.5 * act:
            enc.append(act / o.encoder_peak_gib)
            continue
        rest = act - o.encoder_cache_gib
        if rest > 1.15 * _forward_unit(o) and _sampler_unit(o) > 0:
            ks.setdefault(o.path, []).append(rest / _sampler_unit(o))
    k = {p: round(statistics.median(v), 2) for p, v in sorted(ks.items())}
    for p, chain in _PATH_FALLBACK.items():
        if p not in k:
            k[p] = next((k[q] for q in chain if q in k), K_SAMPLER[p])
    k_enc = round(statistics.median(enc), 2) if enc else 1.0  # no observation: the bare shape estimate

    rocm = []
    for o in obs:
        if o.vendor != "amd" or o.overhead_gib is None:
            continue
        act = max(k[o.path] * _sampler_unit(o), _forward_unit(o))
        rocm.append(o.overhead_gib - act - _nt_model(o, {**nt, "rocm": 0.0}))
    if rocm:
        nt["rocm"] = round(statistics.median(rocm), 2)

    cg = [(o.cudagraph_gib - CG_BASE_GIB) / _cg_unit(o) for o in obs
          if o.era == "v1" and o.cudagraph_gib and o.cudagraph_gib > 0 and o.layers and o.graphs]  # fmt: skip
    return {
        "k_sampler": k,
        "non_torch_gib": nt,
        "k_encoder": k_enc,
        "k_cudagraph": round(statistics.median(cg), 2) if cg else K_CUDAGRAPH,
    }


@contextmanager
def using(coefficients: dict[str, Any]) -> Iterator[None]:
    """Temporarily plan with other coefficients (a :func:`refit` result, or any subset of its keys), e.g. for
    leave-one-out accuracy in ``bench/accuracy.py``; the shipped constants are restored on exit. Not thread-safe."""
    global K_CUDAGRAPH, K_ENCODER
    saved = (dict(K_SAMPLER), dict(NON_TORCH_GIB), K_CUDAGRAPH, K_ENCODER)
    try:
        if "k_sampler" in coefficients:
            K_SAMPLER.update(coefficients["k_sampler"])
        if "non_torch_gib" in coefficients:
            NON_TORCH_GIB.update(coefficients["non_torch_gib"])
        if "k_cudagraph" in coefficients:
            K_CUDAGRAPH = float(coefficients["k_cudagraph"])
        if "k_encoder" in coefficients:
            K_ENCODER = float(coefficients["k_encoder"])
        yield
    finally:
        K_SAMPLER.clear()
        K_SAMPLER.update(saved[0])
        NON_TORCH_GIB.clear()
        NON_TORCH_GIB.update(saved[1])
        K_CUDAGRAPH, K_ENCODER = saved[2], saved[3]


def without(gt: str) -> tuple[Observation, ...]:
    """The observations minus those transcribed from case ``gt`` (leave-one-out)."""
    return tuple(o for o in OBSERVATIONS if o.gt != gt)


CG_BASE_GIB = 0.05
#: ``v1_native`` is still refitted (test_plan_accuracy) but prices no V1 start-up: the 0.8 - 0.16 native sampler and
#: the Triton path's fall-back to the same sort below 8 rows (0.17.0 - 0.29.x) are counted from the source
#: (:func:`native_sampler_bytes`, :func:`triton_sampler_bytes`); it stands in for a V0 path without observations
K_SAMPLER = {"v0_chunked": 1.31, "v0_sort": 10.05, "v1_flashinfer": 2.46, "v1_native": 9.73}
NON_TORCH_GIB = {"v0": 0.11, "v1": 0.13, "per_peer": 0.35, "rocm": 2.38}
K_ENCODER = 0.91
K_CUDAGRAPH = 0.25

# Uncertainty band of the predicted KV bytes, from the residuals of bench/accuracy.py over the replayable
# ground-truth cases (predicted - reported KV GiB): the band is [kv - BAND_LOW, kv + BAND_HIGH] with each side
# = BAND_ABS_GIB + BAND_REL x (activation + non_torch + cudagraph) so it widens with the heuristic terms.
BAND_ABS_GIB = 0.35
BAND_REL = 0.35


def sampler_path(
    era: str,
    version: tuple[int, int, int],
    chunked_prefill: bool,
    compute_capability: tuple[int, int] | None = None,
    vendor: str = "nvidia",
    flashinfer_env: bool | None = None,
    v2_runner: bool = False,
) -> str:
    """Which top-k/top-p implementation the profile's dummy sampler runs, by release (read in the wheels):

    * V0: the PyTorch sampler (sort); ``v0_chunked`` when chunked prefill is on (then the profile's sampler peak is
      far lower, gt-071/gt-221; the source reason was not pinned down, so it is its own calibrated path).
    * V1 0.8.x: PyTorch, because FlashInfer >= 0.2.3 is refused ("FlashInfer>=v0.2.3 is not backward compatible",
      ``vllm@0.8.5:vllm/v1/sample/ops/topk_topp_sampler.py::TopKTopPSampler.__init__``; vllm-project/vllm#14815);
      only an older FlashInfer would be used.
    * 0.9.0 - 0.11.0: FlashInfer when installed (>= 0.2.3) unless ``VLLM_USE_FLASHINFER_SAMPLER=0``
      (``vllm@0.9.2``/``vllm@0.11.0``, same function: ``VLLM_USE_FLASHINFER_SAMPLER is not False``).
    * 0.11.1 - 0.20.x: PyTorch/Triton unless ``VLLM_USE_FLASHINFER_SAMPLER=1`` ("Users must opt in explicitly",
      ``vllm@0.11.1`` … ``vllm@0.20.0``; vllm-project/vllm#26859, 2025-10).
    * 0.21.0 on: FlashInfer by default on GPUs its backend supports: compute capability 7.5 - 12.1, from 0.24.0
      8.0 - 12.1 (``vllm@0.21.0``/``vllm@0.24.0:vllm/v1/attention/backends/flashinfer.py::FlashInferBackend.
      supports_compute_capability``; ``vllm@0.24.0:…/topk_topp_sampler.py::flashinfer_sampler_supported``).
    * From 0.17.0 the non-FlashInfer path on NVIDIA GPUs is ``v1_triton``: ``apply_top_k_top_p`` masks the logits
      in place with ``apply_top_k_top_p_triton`` when ``HAS_TRITON`` and the batch has 8 rows or more, the PyTorch
      sort below that (``vllm@0.17.0``/``vllm@0.20.0:vllm/v1/sample/ops/topk_topp_sampler.py::apply_top_k_top_p``;
      vllm-project/vllm#33538; the 0.16.0 wheel has no ``topk_topp_triton.py``). :func:`triton_sampler_bytes` counts
      the PyTorch sort (:func:`native_sampler_bytes`) for fewer than 8 rows before 0.30.0.
    * AMD GPUs: never FlashInfer (``current_platform.is_cuda()`` is false on ROCm); ``forward_native``, hence the
      same ``v1_triton`` from 0.17.0 (Triton ships with ROCm PyTorch, so ``HAS_TRITON``): ``TopKTopPSampler.__init__``
      takes ``forward_hip`` only with AITER on (``VLLM_ROCM_USE_AITER``, off by default), and that one calls
      ``forward_native`` too through 0.20.x (``DISABLE_AITER_SAMPLER = True``; ``vllm@0.17.0``/``vllm@0.20.0``/
      ``vllm@0.24.0:vllm/v1/sample/ops/topk_topp_sampler.py``). AITER's own sampler from 0.24.0 is not modelled.

    * The V2 model runner (``v2_runner``, :func:`kvlint.memory.vllm_runner.uses_v2_runner`) on NVIDIA/AMD GPUs:
      ``v2_logits`` before 0.33.0 (its dummy sampler only passes the model-dtype logits through), from 0.33.0
      ``v2_flashinfer`` where the V1 choice above is FlashInfer (the V2 ``Sampler.use_flashinfer`` is the same
      ``flashinfer_sampler_supported()``, ``vllm@0.33.0``/``vllm@0.34.0:vllm/v1/worker/gpu/sample/sampler.py``),
      else ``v2_triton``: :func:`v2_sampler_bytes`.

    Before 0.11.1 the choice depends on the FlashInfer package installed in the image, which a manifest does not
    show: :func:`sampler_path_alternative` gives the other path, and the plan's band covers both.

    Only ``vendor`` ``nvidia`` and ``amd`` (what :func:`kvlint.memory.vllm.gpu_vendor` gives): TPU and Gaudi run
    their own runners' samplers (``vllm/v1/worker/tpu_model_runner.py`` / the tpu-inference and vllm-gaudi
    plugins), which kvlint has not read, and it plans no such start-up (``"not a CUDA/ROCm GPU"``,
    :func:`kvlint.engines.images.unsized_whatever_model`, KV501); any other vendor raises ``ValueError`` rather
    than take the CUDA native sampler's price unread.
    """
    if era == "v0":
        return "v0_chunked" if chunked_prefill else "v0_sort"
    if v2_runner and vendor in ("nvidia", "amd"):
        if version < V2_WARMUP_PASS_FROM:
            return "v2_logits"
        v1 = sampler_path(era, version, chunked_prefill, compute_capability, vendor, flashinfer_env)
        return "v2_flashinfer" if v1 == "v1_flashinfer" else "v2_triton"
    if vendor not in ("nvidia", "amd"):
        raise ValueError(
            f"no dummy sampler read for a {vendor!r} device: kvlint prices the CUDA and ROCm samplers only "
            "(a TPU or Gaudi start-up gets no plan: KV501)"
        )
    native = "v1_triton" if version >= TRITON_SAMPLER_FROM else "v1_native"
    if vendor == "amd":
        return native
    if flashinfer_env is False:
        return native
    if flashinfer_env:
        return "v1_flashinfer"
    if version < (0, 9, 0):
        return "v1_native"
    if version < (0, 11, 1):
        return "v1_flashinfer"
    if version < (0, 21, 0):
        return native
    low = (8, 0) if version >= (0, 24, 0) else (7, 5)
    cc = compute_capability
    return "v1_flashinfer" if cc is None or low <= cc <= (12, 1) else native


def sampler_path_alternative(
    era: str, version: tuple[int, int, int], vendor: str = "nvidia", flashinfer_env: bool | None = None
) -> str | None:
    """The other sampler path when the release's choice depends on the installed FlashInfer package (V1 before
    0.11.1 on NVIDIA GPUs without ``VLLM_USE_FLASHINFER_SAMPLER`` set), else None."""
    if era != "v1" or vendor != "nvidia" or flashinfer_env is not None or version >= (0, 11, 1):
        return None
    return "v1_flashinfer" if version < (0, 9, 0) else "v1_native"


def activation_bytes(
    path: str,
    rows: int,
    tokens: int,
    vocab: int,
    hidden: int,
    inter_eff: int,
    tp: int,
    dtype_bytes: int,
    last_stage: bool = True,
    encoder_peak: int = 0,
    encoder_cache: int = 0,
    forward_extra: int = 0,
    triton_all_rows: bool = False,
    sampler_extra: int = 0,
) -> int:
    """Activation peak of the profile run per GPU (bytes) = max(K_ENCODER x encoder peak, encoder cache + forward,
    encoder cache + sampler); the sampler only on the last PP stage (the one computing logits). ``rows`` = sampled
    rows R, ``tokens`` = T; ``forward_extra`` bytes the forward pass holds beyond its T-token shapes (the MoE
    layers' gathered data-parallel batch, :func:`kvlint.memory.vllm.dp_moe_gather_bytes`). ``triton_all_rows``:
    the release runs the Triton top-k/top-p kernel below 8 rows too (>= 0.30.0, :data:`TRITON_ALL_ROWS_FROM`).
    ``sampler_extra`` bytes the forward pass leaves allocated beside the sampler on the last stage (the unquantized
    MoE experts' workspace, :func:`kvlint.memory.vllm.moe_workspace_bytes`).
    The V2 runner's paths (``v2_*``) are counted from the source by :func:`v2_sampler_bytes`.
    [shapes from source; the native and Triton samplers counted from the source (:func:`native_sampler_bytes`,
    :func:`triton_sampler_bytes`); K_SAMPLER (FlashInfer, V0), K_ENCODER calibrated: see :data:`OBSERVATIONS`]"""
    if not last_stage:
        sampler = 0.0
    elif path.startswith("v2_"):
        sampler = float(v2_sampler_bytes(path, rows, vocab, dtype_bytes, tokens, hidden))
    elif path == "v1_triton":
        sampler = float(triton_sampler_bytes(rows, vocab, dtype_bytes, triton_all_rows, tokens, hidden))
    elif path == "v1_native":
        sampler = float(native_sampler_bytes(rows, vocab, dtype_bytes, tokens, hidden))
    else:
        sampler = K_SAMPLER[path] * rows * vocab * 4
    forward = tokens * (3 * inter_eff / max(1, tp) + 4 * hidden) * dtype_bytes + forward_extra
    if last_stage and sampler > 0:
        sampler += sampler_extra
    return int(max(K_ENCODER * encoder_peak, encoder_cache + forward, encoder_cache + sampler))


SORT_FULL_BELOW_ROWS = 128
"""PyTorch's CUDA ``sort`` of a ``rows x vocab`` tensor (vocab > 4,096, so the stable cub path) sorts 2 - 127 rows
as one global radix sort of (index, segment) pairs followed by a sort by segment, and one row or 128 rows and more
with CUB's segmented radix sort (``pytorch/pytorch:aten/src/ATen/native/cuda/SortStable.cu::
do_launch_stable_sort_kernel``: ``nsegments == 1`` -> ``segmented_sort_large_segments``, ``nsegments < 128`` ->
``segmented_sort_pairs_by_full_sort``, else ``segmented_sort_pairs``; the 128-segment split since pytorch/pytorch#63456,
2021, so in every PyTorch a V1 vLLM ships with)."""


def native_sampler_bytes(rows: int, vocab: int, dtype_bytes: int, tokens: int = 0, hidden: int = 0) -> int:
    """Peak of the V1 profile's dummy sampler on the PyTorch-native top-k/top-p path (bytes), counted from the
    source, not calibrated. The peak is inside ``logits.sort()`` of ``apply_top_k_top_p``
    (``vllm@0.10.2``/``vllm@0.16.0:vllm/v1/sample/ops/topk_topp_sampler.py``; the mask, softmax and scatter that
    follow hold 28 B per logit at most, below the sort's 38), and holds, per logit (``rows x vocab``):

    * the logits in the model dtype, kept by ``GPUModelRunner._dummy_sampler_run`` (``compute_logits``), and their
      fp32 copy (``Sampler.forward``: ``logits.to(torch.float32)``, none when the model runs in fp32; temperature is
      applied in place): ``dtype_bytes + 4``;
    * the sort's outputs, fp32 values and int64 indices: 12 B;
    * PyTorch's scratch (``pytorch/pytorch:aten/src/ATen/native/cuda/SortStable.cu`` with the ``CUB_WRAPPER``
      temporary storage of ``aten/src/ATen/cuda/cub.cuh``; CUB's non-overwriting radix sorts take an alternate
      keys and values buffer of the input's size, ``cub/device/dispatch/dispatch_segmented_sort.cuh``): with one
      row or :data:`SORT_FULL_BELOW_ROWS` rows and more, the int64 source indices (8 B) and CUB's alternate fp32
      keys and int64 values (12 B): 20 B; with 2 - 127 rows, two int2 (index, segment) buffers (16 B), the sorted
      keys (4 B) and CUB's alternate fp32 keys and int2 values (12 B): 32 B.

    So 38 B per logit (9.5 x the fp32 logits) for a 16-bit model at 128 rows or more, 50 B (12.5 x) at 2 - 127
    rows. Plus what ``profile_run`` keeps alive beside the sampler: the forward pass's ``tokens x hidden`` output
    and the sampled rows' hidden states with their ``torch.rand_like`` replacement (``2 x rows x hidden``), in the
    model dtype. The printed peak of the 0.14 runs (gt-056: Llama-3.1-8B, 1,024 rows, 4.76 GiB) is within about 1 %
    of this sum; the fitted ``K_SAMPLER["v1_native"]`` it replaces put 9.73 x the fp32 logits on every row count.
    """
    copy = dtype_bytes if dtype_bytes != 4 else 0
    scratch = 32 if 1 < rows < SORT_FULL_BELOW_ROWS else 20
    return rows * vocab * (copy + 4 + 12 + scratch) + (tokens + 2 * rows) * hidden * dtype_bytes


TRITON_SAMPLER_FROM = (0, 17, 0)
"""First vLLM release whose PyTorch-native top-k/top-p path runs the Triton kernel (vllm-project/vllm#33538)."""
TRITON_SAMPLER_MIN_ROWS = 8
"""``apply_top_k_top_p`` takes the Triton kernel from this many rows, the PyTorch sort below
(``vllm@0.17.0``/``vllm@0.29.0:vllm/v1/sample/ops/topk_topp_sampler.py``)."""
TRITON_ALL_ROWS_FROM = (0, 30, 0)
"""First release whose ``apply_top_k_top_p`` takes the Triton kernel whenever ``HAS_TRITON``, whatever the batch
size (``vllm@0.30.0``/``vllm@0.34.0:vllm/v1/sample/ops/topk_topp_sampler.py``; 0.29.0 still sorts below 8 rows)."""
V2_WARMUP_PASS_FROM = (0, 33, 0)
"""First release whose V2 ``_dummy_sampler_run`` adds the ``SamplingParams.for_sampler_warmup()`` pass
(``vllm@0.33.0:vllm/v1/worker/gpu/model_runner.py``; 0.32.0 runs the default pass only)."""
TRITON_SAMPLER_SMS = 132
"""Streaming multiprocessors assumed for the Triton kernel's scratch buffer, which has one vocab-wide fp32 row per
program, ``min(next_power_of_2(min(rows, SMs)), SMs)`` rows (``vllm@0.17.0:vllm/v1/sample/ops/topk_topp_triton.py::
apply_top_k_top_p_triton``; ``num_compute_units``: SMs on NVIDIA, compute units on ROCm). The accelerator catalogue
holds no SM count: an H100/H200's 132. The catalogue's devices span 40 (T4) to 304 (MI300X compute units), so the
buffer is off by at most 92 rows fewer or 172 more: 0.05 / 0.10 GiB at a 152k vocabulary, 0.17 GiB at 262k (Gemma)."""


def triton_sampler_bytes(
    rows: int, vocab: int, dtype_bytes: int, all_rows: bool = False, tokens: int = 0, hidden: int = 0
) -> int:
    """Peak of the V1 profile's dummy sampler on the Triton top-k/top-p path (bytes), counted from the source, not
    calibrated (vLLM 0.17.0 and 0.20.0 wheels, ``vllm/v1/worker/gpu_model_runner.py::_dummy_sampler_run``,
    ``vllm/v1/sample/sampler.py::Sampler.forward``/``sample``, ``vllm/v1/sample/ops/topk_topp_sampler.py``):
    the ``rows x vocab`` logits in the model dtype (``compute_logits``, kept by the caller), their fp32 copy
    (``logits.to(torch.float32)``; none when the model runs in fp32), temperature and top-k/top-p applied in place on
    it, the fp32 softmax ``probs`` and the exponential noise ``q`` (``random_sample``: ``probs.div_(q)`` in place),
    plus the Triton scratch buffer (:func:`triton_buffer_rows`).

    Plus, as on the native path (:func:`native_sampler_bytes`), what ``profile_run`` keeps alive beside the sampler:
    the forward pass's ``tokens x hidden`` output (``hidden_states``, deleted only after the sampler) and the
    sampled rows' hidden states with the ``torch.rand_like`` copy ``_dummy_sampler_run`` feeds ``compute_logits``
    (``2 x rows x hidden``), in the model dtype (``vllm@0.17.0``/``vllm@0.29.0``/``vllm@0.31.0:vllm/v1/worker/
    gpu_model_runner.py::GPUModelRunner.profile_run`` and ``_dummy_sampler_run``, the same in each).

    Below :data:`TRITON_SAMPLER_MIN_ROWS` rows ``apply_top_k_top_p`` calls ``apply_top_k_top_p_pytorch``, the
    0.16.0 sort unchanged (``logits.sort()``, then the masks and the scatter; read in the 0.17.0 and 0.29.0
    wheels), so those rows take :func:`native_sampler_bytes`, unless ``all_rows`` (>= 0.30.0, where the Triton
    kernel runs whatever the batch size, :data:`TRITON_ALL_ROWS_FROM`)."""
    if rows < TRITON_SAMPLER_MIN_ROWS and not all_rows:
        return native_sampler_bytes(rows, vocab, dtype_bytes, tokens, hidden)
    copy = dtype_bytes if dtype_bytes != 4 else 0
    held = (tokens + 2 * rows) * hidden * dtype_bytes
    return rows * vocab * (copy + 3 * 4) + triton_buffer_rows(rows) * vocab * 4 + held


def triton_buffer_rows(rows: int) -> int:
    """Rows of the Triton top-k/top-p kernel's scratch buffer (one vocab-wide fp32 row each):
    ``min(next_power_of_2(min(rows, SMs)), SMs)`` (``vllm@0.17.0``/``vllm@0.34.0:vllm/v1/sample/ops/
    topk_topp_triton.py::apply_top_k_top_p_triton``; SMs :data:`TRITON_SAMPLER_SMS`); 0 without rows."""
    if rows <= 0:
        return 0
    programs = min(rows, TRITON_SAMPLER_SMS)
    return min(1 << (programs - 1).bit_length(), TRITON_SAMPLER_SMS)


GUMBEL_BLOCK = 1024
"""Vocabulary block of the V2 runner's ``gumbel_sample``: one int64 arg-max and one fp32 maximum per row and
block (``vllm@0.31.0``/``vllm@0.34.0:vllm/v1/worker/gpu/sample/gumbel.py::gumbel_sample``, ``BLOCK_SIZE = 1024``)."""


def v2_sampler_bytes(
    path: str, rows: int, vocab: int, dtype_bytes: int, tokens: int = 0, hidden: int = 0
) -> int:
    """Peak of the V2 model runner's dummy sampler (bytes), counted from the source, not calibrated
    (``vllm/v1/worker/gpu/model_runner.py::GPUModelRunner._dummy_sampler_run``, ``vllm/v1/worker/gpu/sample/
    sampler.py::Sampler``, 0.29.0 - 0.34.0 wheels). Always: the ``rows x vocab`` logits in the model dtype
    (``compute_logits``, held by the caller) and ``gumbel_sample``'s per-block arg-max/maximum
    (:data:`GUMBEL_BLOCK`). By path (:func:`sampler_path`):

    * ``v2_logits`` (before 0.33.0): the default pass only; no request is added, so
      ``Sampler.apply_sampling_params`` returns the logits untouched (no fp32 copy), there is no top-k/top-p and
      no logprobs;
    * from 0.33.0 the ``SamplingParams.for_sampler_warmup()`` pass adds the fp32 copy of the logits
      (``torch.empty_like(logits, dtype=torch.float32).copy_``); bias, penalties, bad words, temperature and
      min-p apply in place; its top-k 50 and top-p 0.9 then run ``flashinfer_sample`` (``v2_flashinfer``:
      ``top_k_top_p_sampling_from_logits``, which builds the masked fp32 logits and their fp32 softmax,
      [assumed] FlashInfer's ``top_k_first`` order) or ``apply_top_k_top_p`` in place with the Triton scratch
      buffer (``v2_triton``, :func:`triton_buffer_rows`). Its 5 logprobs are ``torch.topk`` of the raw logits
      (``raw_logprobs``, 5 columns a row).

    Plus what ``profile_run`` keeps alive beside the sampler: the forward pass's ``tokens x hidden`` output and the
    sampled rows' hidden states (``hidden_states[logits_indices]``, ``rows x hidden``), both deleted only after
    ``_dummy_sampler_run``, in the model dtype; unlike the V1 runner there is no ``rand_like`` copy
    (``vllm@0.29.0``/``vllm@0.31.0``/``vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::GPUModelRunner.profile_run``,
    ``_dummy_run``, ``_dummy_sampler_run``)."""
    blocks = -(-max(0, vocab) // GUMBEL_BLOCK)
    base = rows * vocab * dtype_bytes + rows * blocks * (8 + 4) + (tokens + rows) * hidden * dtype_bytes
    if path == "v2_logits":
        return base
    if path == "v2_flashinfer":
        return base + rows * vocab * 3 * 4
    return base + rows * vocab * 4 + triton_buffer_rows(rows) * vocab * 4


#: Name parts of GPUs without NVLink SHARP (PCIe and NVL-bridge cards, workstation and GeForce parts, GB10, and the
#: pre-Hopper data-centre parts, for names read without a compute capability) and of the HGX/NVL-rack parts with it.
_NO_NVLS_NAMES = (
    "pcie",
    "rtx",
    "geforce",
    "gb10",
    "a100",
    "a800",
    "a10",
    "a30",
    "a40",
    "l4",
    "t4",
    "v100",
)
_NVLS_NAMES = ("h100", "h200", "h20", "h800", "b200", "b300")
#: the NVL-bridge cards (H100 NVL, H200 NVL), however a custom accelerator's id spells it ("h100-nvl", "H100NVL"),
#: not NVLink ("H100 SXM5 NVLink")
_NVL_CARD = re.compile(r"nvl(?!ink)")
#: a MIG instance's device name, as CUDA reports it ("NVIDIA H100 80GB HBM3 MIG 3g.40gb", torch.cuda.get_device_name)
#: or as GPU feature discovery labels it ("NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"): the driver runs no NVLink P2P and no
#: fabric address space in MIG mode (NVIDIA/open-gpu-kernel-modules@595.45.04: ``kernel_mig_manager.c::
#: kmigmgrIsMIGNvlinkP2PSupported_IMPL``, "MIG+NVLINK not supported by default"; ``kern_bus_ga100.c``, "Disable FLA
#: when MIG is enabled"), so no multicast object, no NVLS and no FlashInfer fusion workspace. A compute instance
#: smaller than its GPU instance carries its own prefix ("NVIDIA H100 MIG 1c.4g.48gb", "MIG 1c.3g.40gb" in
#: ``nvidia-smi -L``; ``nvidia-smi mig -cci`` profiles ``1c.2g.10gb``)
_MIG_NAME = re.compile(r"(?:^|[\s_-])mig[\s_-]+(?:\d+c\.)?\d+g\.\d+gb")


@by_value
def nvls_capable(gpu_name: str, compute_capability: str | None = None) -> bool | None:
    """Whether NCCL on this GPU can run NVLink SHARP (NVLS), whose buffers grow with the ranks: True on the
    NVSwitch products of compute capability 9.0 and above (HGX H100/H200/H20/H800, B200, B300, GB200/GB300), False
    on every GPU that cannot (NVLS needs Hopper's third-generation NVSwitch: compute capability below 9.0, and the
    PCIe, NVL-bridge, workstation and GeForce parts of later generations, and a MIG instance named as such:
    :data:`_MIG_NAME`), None when the GPU is not known (GH200,
    whose NVSwitch depends on the system, or no name). docs/engine-memory-model.md §5. A function of the GPU
    alone, asked by every vLLM plan on it (each GPU of a fleet, each re-plan): memoised by value
    (:func:`kvlint.memory.memo.by_value`)."""
    name = gpu_name.lower()
    cc = parse_cc(compute_capability)  # "9" is (9, 0), as everywhere else a capability is read
    if cc is not None and cc < (9, 0):
        return False
    if not name:
        return None
    if _MIG_NAME.search(name):
        return False  # a MIG instance: no NVLink, no multicast (_MIG_NAME)
    if "gb200" in name or "gb300" in name:
        return True
    if "gh200" in name:
        return None
    if any(k in name for k in _NO_NVLS_NAMES) or _NVL_CARD.search(name):
        return False
    if any(k in name for k in _NVLS_NAMES):
        return True
    return None


@by_value
def nvls_domain(gpu_name: str) -> int | None:
    """The GPUs one NVLS communicator can span, for an NVLS-capable GPU (:func:`nvls_capable`): 8 on the HGX/DGX
    baseboards (H100/H200/H20/H800, B200/B300: eight GPUs on the board's NVSwitches), 72 on GB200/GB300 (the NVL72
    rack's NVLink domain spans its compute trays); None otherwise. NVLS's multicast group and its heads are the
    communicator's ranks on that domain (``NVIDIA/nccl@5067397c:src/transport/nvls.cc``: ``mcprop.numDevices =
    comm->localRanks``); ranks on other nodes are reached through the network."""
    name = gpu_name.lower()
    if "gb200" in name or "gb300" in name:
        return 72
    if nvls_capable(gpu_name) is True:
        return 8
    return None


def nccl_peers(world: int, nvls: bool | None = None, domain: int | None = None) -> int:
    """NCCL shares a GPU process holds, the multiplier of ``NON_TORCH_GIB["per_peer"]``: one for any multi-GPU
    group (``world`` = TP x PP > 1), none on one GPU.

    NCCL's ring and tree collectives connect each rank to its neighbours on every channel, so their buffers (per
    connection ``NCCL_STEPS`` slots of the SIMPLE, LL and LL128 protocols) do not grow with the ranks; the share
    (ring and tree buffers, the custom all-reduce's, the allocator's) is fitted on TP 2 runs. What does grow with
    the ranks, NVLink SHARP's buffers, is sized from NCCL's source by :func:`nvls_buffer_bytes`, not by further
    shares: the old multiplier ``world - 1`` on NVLS GPUs (branch accuracy46) charged TP 4 three shares (1.05 GiB)
    where vLLM 0.19.0's five TP 4 runs on HGX H100s print 0.03 - 0.15 GiB more non-torch memory than its TP 2 runs
    (gt-356, gt-360, gt-362, gt-364, gt-368; docs/engine-memory-model.md §5). ``nvls`` and ``domain`` are kept for
    the callers' signature; they size :func:`nvls_buffer_bytes`, not this count."""
    return min(max(0, world - 1), 1)


#: vLLM releases from which the bundled NCCL sizes NVLS's buffer by its chunk (``NCCL_NVLS_CHUNKSIZE`` 128 KiB x
#: ``NCCL_STEPS`` 8 = 1 MiB a channel and direction, NCCL 2.21): vLLM 0.6.4 pins torch 2.5.1, which pins
#: nvidia-nccl-cu12 2.21.5 (0.6.3: torch 2.4.0, NCCL 2.20.5, whose buffer is ``NCCL_BUFFSIZE``, 4 MiB:
#: ``NVIDIA/nccl@v2.20.5-1:src/transport/nvls.cc::ncclNvlsSetup``); the wheels' Requires-Dist read with
#: ``pip install --dry-run --report``.
NCCL_NVLS_CHUNK_FROM = (0, 6, 4)
#: vLLM releases from which the bundled NCCL (2.26.2, torch 2.7.0, vLLM 0.9.0; 0.6.4 - 0.8.x pin torch 2.5.1 / 2.6.0,
#: NCCL 2.21.5) keeps each channel's head/tail credit out of the NVLS buffer, in an allocation of its own of 64 B a
#: channel, direction and head (2 MiB with the granularity; ``NVIDIA/nccl@v2.22.3-1:src/transport/nvls.cc::
#: ncclNvlsSetup``, not counted); before, NCCL 2.18 - 2.21 lay out ``nChannels x 2 x (buffSize + memSize)`` per head
#: with ``memSize = NVLS_MEM_ALIGN_SIZE``, 2 MiB (``NVIDIA/nccl@v2.21.5-1:src/transport/nvls.cc::ncclNvlsSetup``;
#: a 2-node H100 log: ``nHeads 4 buffSize 1048576 memSize 2097152 nvlsPerRankSize 100663296``), and set it up when
#: the communicator is created.
NCCL_NVLS_CREDIT_APART_FROM = (0, 9, 0)
_NVLS_MEM_ALIGN_SIZE = 1 << 21
#: vLLM releases from which the bundled NCCL (2.27.3, torch 2.8.0, vLLM 0.10.2; 0.10.0 - 0.10.1.1 pin torch 2.7.1,
#: NCCL 2.26.2) runs 24 NVLS channels on Blackwell within one node or NVLink domain (``NVLS_NCHANNELS_SM100_NVL``),
#: 32 before and across nodes (``NVLS_NCHANNELS_SM100``); Hopper runs 16 (``NVLS_NCHANNELS_SM90``; the
#: ``NCCL_NVLS_NCHANNELS`` default, 16, in 2.18 - 2.24)
NCCL_SM100_NVL_FROM = (0, 10, 2)
_NVLS_ALIGN = 1 << 21


def nvls_heads(tp: int, nvls: bool | None, domain: int | None = None) -> int:
    """NVLink SHARP heads of the tensor-parallel group's NCCL communicator: its ranks on one NVLink domain
    (:func:`nvls_domain`; ``mcprop.numDevices = comm->localRanks``), 0 where NVLS does not run: the GPU cannot
    (``nvls`` False, :func:`nvls_capable`) or the communicator has two GPUs or fewer (``NVIDIA/nccl@v2.27.5-1:
    src/transport/nvls.cc::ncclNvlsInit``: ``if (!ncclParamNvlsEnable() || gpuCount <= 2) return``, the same test
    from 2.18). The TP group, not TP x PP: vLLM's collectives in the profile are the TP group's all-reduces and
    gathers (``tensor_model_parallel_all_reduce``), a pipeline stage only sends to and receives from its neighbour.
    A GPU not known (``nvls`` None) is taken as able."""
    if nvls is False:
        return 0
    heads = min(tp, domain) if domain else tp
    return heads if heads > 2 else 0


#: C's ``strtoll(text, NULL, 0)`` prefix: white space, a sign, then a hexadecimal (``0x``), octal (leading ``0``) or
#: decimal digit run; text without one converts to 0 (glibc sets no error for it)
_STRTOLL_PREFIX = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:0[xX]([0-9a-fA-F]+)|(0[0-7]*)|([1-9][0-9]*))?")


def nccl_nvls_disabled(value: str | None) -> bool:
    """Whether the container's ``NCCL_NVLS_ENABLE`` turns NVLink SHARP off. NCCL reads it with ``strtoll(str,
    nullptr, 0)`` when it is not empty (``NVIDIA/nccl@v2.27.5-1:src/misc/param.cc::ncclLoadParam``; the parameter is
    ``NCCL_PARAM(NvlsEnable, "NVLS_ENABLE", 2)``), so ``0``, ``00`` and text that is no number (``false``) are 0;
    ``ncclNvlsInit`` returns before any multicast when it is 0 (``src/transport/nvls.cc``, the same test from 2.18):
    no NVLS buffer. vLLM sets it to 0 itself only for batch-invariant runs (``vllm@0.19.0:vllm/model_executor/layers/
    batch_invariant.py``), not read here."""
    if not value:
        return False
    m = _STRTOLL_PREFIX.match(value)
    digits = (m.group(1) or m.group(2) or m.group(3) or "") if m else ""
    return digits.strip("0") == ""


def nvls_buffer_bytes(
    tp: int,
    nvls: bool | None,
    domain: int | None = None,
    compute_capability: str | None = None,
    version: tuple[int, ...] | None = None,
) -> int:
    """Device memory per GPU of NCCL's NVLink SHARP buffer for the TP group (bytes), 0 where NVLS does not run
    (:func:`nvls_heads`). ``NVIDIA/nccl@v2.27.5-1:src/transport/nvls.cc::ncclNvlsBufferSetup``: ``buffSize =
    nvlsChunkSize x NCCL_STEPS`` (128 KiB x 8), ``nvlsPerRankSize = nChannels x 2 x buffSize``, ``nvlsTotalSize =
    nvlsPerRankSize x nHeads``, one local allocation of that size (``nvlsAllocateMem``: ``cuMemCreate`` of the
    size aligned to the allocation granularity, 2 MiB; the multicast object's own 512 MiB granularity aligns its
    address range, not the memory bound to it) on every rank; ``nChannels`` = 16 on Hopper, 24 (32 before
    :data:`NCCL_SM100_NVL_FROM`, 16 before NCCL 2.25 and :data:`NCCL_NVLS_CREDIT_APART_FROM`) on Blackwell. Before
    :data:`NCCL_NVLS_CREDIT_APART_FROM` (NCCL 2.18 - 2.21) each channel and direction also holds a 2 MiB head/tail
    slot (``memSize``), and before :data:`NCCL_NVLS_CHUNK_FROM` (NCCL 2.18 - 2.20) the buffer is ``NCCL_BUFFSIZE``
    (4 MiB): HGX H100 at TP 4 holds 16 x 2 x 3 MiB x 4 = 384 MiB under NCCL 2.21 (vLLM 0.6.4 - 0.8.x), 768 MiB under
    2.20. NCCL 2.20 - 2.21 count ``comm->nChannels`` there, the communicator's collective channels, which
    ``ncclTopoPostset`` raises to at least the 16 NVLS channels and which may be more (24 on 8-GPU HGX H100 logs of
    later releases): 16 is a floor. With NCCL's runtime connection (``NCCL_RUNTIME_CONNECT``, on by
    default from 2.22) the buffer is set up at the first collective that runs NVLS (``group.cc::
    ncclCollPreconnectFunc``), in vLLM's memory profile: HGX H100 at TP 4 (vLLM 0.19.0, NCCL 2.27.5), 16 x 2 x 1 MiB
    x 4 heads = 128 MiB, where the printed non-torch memory grows 0.03 - 0.15 GiB from TP 2 (no NVLS) to TP 4.
    ``version`` None: the newest release's NCCL. [shapes from source]"""
    heads = nvls_heads(tp, nvls, domain)
    if heads <= 0:
        return 0
    v = version or (99, 0, 0)
    cc = parse_cc(compute_capability)
    if cc is not None and cc >= (10, 0):
        channels = 24 if v >= NCCL_SM100_NVL_FROM and (domain is None or tp <= domain) else 32
        if v < NCCL_NVLS_CREDIT_APART_FROM:
            channels = 16  # NCCL 2.18 - 2.21: NCCL_NVLS_NCHANNELS, 16 on every architecture
    else:
        channels = 16
    step = (1 << 20) if v >= NCCL_NVLS_CHUNK_FROM else 4 << 20
    if v < NCCL_NVLS_CREDIT_APART_FROM:
        step += _NVLS_MEM_ALIGN_SIZE
    size = channels * 2 * step * heads
    return -(-size // _NVLS_ALIGN) * _NVLS_ALIGN


#: vLLM releases whose worker creates its NCCL communicators before the memory snapshot its non-torch figure starts
#: from: ``vllm@0.11.0:vllm/v1/worker/gpu_worker.py::Worker.init_device`` runs ``init_worker_distributed_environment``
#: first ("Initialize the distributed environment BEFORE taking memory snapshot. This ensures NCCL buffers are
#: allocated before we measure available memory"), then ``MemorySnapshot()``, the same in the 0.12.0, 0.14.0, 0.17.0
#: and 0.19.0 wheels; 0.10.0 - 0.10.2 take the snapshot first and create the communicators after it. The
#: communicators are warmed up there (``vllm/distributed/device_communicators/pynccl.py::PyNcclCommunicator``: "A
#: small all_reduce for warmup").
NCCL_BEFORE_SNAPSHOT_FROM = (0, 11, 0)


def profiled_peer_world(world: int, tp: int | None = None, version: tuple[int, ...] | None = None) -> int:
    """The ranks whose NCCL memory falls inside vLLM's non-torch window, the ``world`` :func:`nccl_peers` counts.

    Before 0.11.0 (:data:`NCCL_BEFORE_SNAPSHOT_FROM`) the communicators of every group are created after the init
    snapshot, so any multi-GPU process (``world`` = TP x PP) counts its share. From 0.11.0 vLLM's own communicators
    exist before it: the TP and PP groups' ``PyNcclCommunicator`` (created and warmed up with a one-element
    all-reduce) and the custom all-reduce's IPC buffers (``CudaCommunicator.__init__``, allocated once there; the
    eager profile run copies into them). What is still created inside the window is torch's own NCCL communicator
    of a group's ``device_group``, which ``ProcessGroupNCCL`` builds lazily at the first collective on it (vLLM
    passes no ``device_id`` to ``init_process_group``, ``vllm@0.19.0:vllm/distributed/parallel_state.py::
    init_distributed_environment``). The profile run's first such collective is the TP group's logits all-gather
    (``vllm/model_executor/layers/logits_processor.py::LogitsProcessor._gather_logits`` ->
    ``tensor_model_parallel_all_gather`` -> ``DeviceCommunicatorBase.all_gather``,
    ``torch.distributed.all_gather_into_tensor(..., group=self.device_group)``, which ``CudaCommunicator`` does not
    override: 0.10.2, 0.11.0, 0.14.0, 0.19.0 wheels alike), and the all-gather is skipped at TP 1
    (``GroupCoordinator.all_gather`` returns its input on a world of one). A pipeline stage's dummy run exchanges
    nothing (``vllm@0.19.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner._dummy_run`` gives a later stage
    zero-filled ``intermediate_tensors`` of its own, no ``recv``), so TP 1 x PP N counts none, and TP x PP counts the
    TP group's one share. The logs: vLLM 0.19.0 at PP 2 and PP 4 (TP 1) print 0.07 GiB of non-torch memory on every
    rank, with the communicators already in the init snapshot (``non_torch_memory=1.43GiB`` at PP 2 and 1.48 at PP
    4 against 0.51 at TP 1; gt-355, llm-d-planner's sweep); 0.14.x at TP 2 still prints 0.55 (gt-054).
    ``tp`` None (a caller that knows only the world): ``world``; ``version`` None: the rule of 0.11.0 and later.
    The planner passes ``world`` = TP x PP x DP: before 0.11.0 a data-parallel rank's groups are also created after
    the snapshot (``vllm@0.10.1:vllm/v1/worker/gpu_worker.py::Worker.init_device`` takes ``init_snapshot`` before
    ``init_worker_distributed_environment``), the DP group with a ``PyNcclCommunicator`` (``CudaCommunicator``:
    pynccl for every group but ``ep``, warmed up with an all-reduce at init), and with expert parallelism the MoE
    layers' naive dispatch broadcasts on that group's torch ``device_group`` and all-reduces on its pynccl
    communicator in the profile run (``device_communicators/all2all.py::NaiveAll2AllManager``): one share, as a TP
    group's."""
    if tp is None:
        return world
    if version is not None and tuple(version) < NCCL_BEFORE_SNAPSHOT_FROM:
        return world
    return tp


def non_torch_bytes(
    era: str,
    world: int,
    vendor: str = "nvidia",
    nvls: bool | None = None,
    domain: int | None = None,
    tp: int | None = None,
    compute_capability: str | None = None,
    version: tuple[int, ...] | None = None,
) -> int:
    """Non-torch memory growth per GPU (bytes): the era's base (cuBLAS workspaces, allocator slack), plus one
    ``per_peer`` share for a multi-GPU group (:func:`nccl_peers`: NCCL communicator buffers, custom all-reduce
    buffers; from 0.11.0 only a TP group's, :func:`profiled_peer_world`), plus NCCL's NVLink SHARP buffer of the TP group (:func:`nvls_buffer_bytes`, from NCCL's source; ``tp``
    None: the whole ``world``), plus the ROCm runtime's share on AMD GPUs. [calibrated: see :data:`OBSERVATIONS`]"""
    gib = NON_TORCH_GIB["v0" if era == "v0" else "v1"] + NON_TORCH_GIB["per_peer"] * nccl_peers(
        profiled_peer_world(world, tp, version), nvls, domain
    )
    if vendor == "amd":
        gib += NON_TORCH_GIB["rocm"]
    nv = nvls_buffer_bytes(tp if tp is not None else world, nvls, domain, compute_capability, version)
    return int(gib * GiB) + (nv if vendor == "nvidia" else 0)


def cudagraph_capture_tokens(
    max_num_seqs: int,
    decode_query_len: int = 1,
    max_num_batched_tokens: int | None = None,
    model_max: int | None = None,
) -> int:
    """vLLM's default largest CUDA-graph capture size (tokens): ``min(2 x max_num_seqs x decode_query_len, 512)``,
    then no more than ``max_num_batched_tokens`` (``vllm@0.13.0:vllm/config/vllm.py::VllmConfig.
    _set_cudagraph_sizes``: ``max_cudagraph_capture_size = min(max_num_tokens, max_cudagraph_capture_size)`` with
    ``max_num_tokens = scheduler_config.max_num_batched_tokens``, the same in the 0.12.0 and 0.23.0 wheels; 0.10.1
    and 0.10.2 drop the sizes above ``max_num_batched_tokens`` from ``batch_size_capture_list``). ``decode_query_len``
    is 1 before 0.13.0 (:func:`kvlint.memory.vllm.decode_query_len`); ``max_num_batched_tokens`` None or 0: no cap.
    The capture list's rounding (multiples of 8 below 256, of 16 above) is not modelled. ``model_max``: the
    largest capture size the model's own config sets in place of that default (gpt-oss's 1,024,
    :func:`kvlint.memory.vllm.model_capture_size`), still no more than ``max_num_batched_tokens``."""
    top = model_max if model_max else min(2 * max_num_seqs * max(1, decode_query_len), 512)
    if max_num_batched_tokens and max_num_batched_tokens > 0:
        top = min(top, max_num_batched_tokens)
    return top


def cudagraph_bytes(
    layers: int,
    max_num_seqs: int,
    decode_query_len: int = 1,
    max_num_batched_tokens: int | None = None,
    model_max: int | None = None,
    version: tuple[int, int, int] | None = None,
    user: CudagraphUser | None = None,
) -> int:
    """CUDA-graph pool estimate per GPU (bytes): ``CG_BASE_GIB + K_CUDAGRAPH MiB x layers x graphs``.
    [calibrated: the V1 rows of :data:`OBSERVATIONS` with graph memory]

    vLLM measures the pool graph by graph: its estimate (``vllm@0.19.0:vllm/v1/worker/gpu_model_runner.py::
    GPUModelRunner.profile_cudagraph_memory``) is, per graph mode, the first (largest) capture plus the second
    capture times the remaining graphs, and the 0.19.0 logs print 4 - 26 MiB per graph after a first capture of
    100 - 520 MiB; so the term follows the number of graphs (:func:`cudagraph_count`), each holding memory for
    every layer of the stage (``layers``), not the width of one capture. The largest capture size is
    :func:`cudagraph_capture_tokens`: ``min(2 x max_num_seqs x decode_query_len, 512, max_num_batched_tokens)``
    tokens, vLLM's default ``max_cudagraph_capture_size`` (``vllm@0.13.0:vllm/config/vllm.py::
    VllmConfig._set_cudagraph_sizes``), where ``decode_query_len`` is 1 + ``num_speculative_tokens`` from 0.13.0
    and 1 before (:func:`kvlint.memory.vllm.decode_query_len`), or ``model_max``, a model's own largest size
    (:func:`kvlint.memory.vllm.model_capture_size`). ``user``: the command line's ``cudagraph_mode`` and capture
    sizes (:class:`CudagraphUser`, read by ``VllmConfig._set_cudagraph_sizes`` in place of the defaults and of a
    model's own size; the listed sizes above ``max_num_batched_tokens`` dropped as vLLM does); a mode with no
    graph (``NONE``) prices nothing, not even the base. ``version`` None: the newest release's graphs."""
    u = user or CudagraphUser()
    mbt = max_num_batched_tokens if max_num_batched_tokens and max_num_batched_tokens > 0 else None
    sizes: tuple[int, ...] | None = None
    own_list = bool(model_max) and not u.sets_sizes
    if u.sizes is not None:
        sizes = tuple(s for s in u.sizes if not (u.filter_sizes and mbt is not None and s > mbt))
        capture = max(sizes, default=0)
    elif u.stepped_to is not None or u.max_size is not None:
        # --cuda-graph-sizes N (0.9 - 0.11.0: that release's list, multiples of 8) or max_cudagraph_capture_size
        # (0.11.1 on: the stepped list), no more than max_num_batched_tokens
        top = int(u.stepped_to if u.stepped_to is not None else u.max_size or 0)
        if u.stepped_to is not None and model_max and top < model_max:
            # 0.10.1 - 0.11.0: gpt-oss's override reads the scheduler's one-value list and replaces one below its
            # own size with its stepped list (vllm@0.11.0:vllm/model_executor/models/config.py::
            # GptOssForCausalLMConfig: "if len(scheduler_config.cuda_graph_sizes) == 1" ... "< 992")
            top, own_list = model_max, True
        capture = min(top, mbt) if mbt is not None else top
    else:
        capture = cudagraph_capture_tokens(max_num_seqs, decode_query_len, max_num_batched_tokens, model_max)
    graphs = cudagraph_count(
        capture,
        max_num_seqs,
        decode_query_len,
        version,
        model_list=own_list,
        mode=u.mode,
        sizes=sizes,
        interactivity=u.interactivity,
    )
    if graphs <= 0:
        return 0
    return int(CG_BASE_GIB * GiB + K_CUDAGRAPH * MiB * layers * graphs)


def band_bytes(overhead_bytes: int) -> int:
    """Half-width of the KV uncertainty band for a plan whose heuristic terms sum to ``overhead_bytes``."""
    return int(BAND_ABS_GIB * GiB + BAND_REL * overhead_bytes)
