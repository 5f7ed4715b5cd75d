"""Can this vLLM release run an fp8 KV cache on this GPU? (engine choice and start-up failure, KV302)

An fp8 ``--kv-cache-dtype`` is accepted by vLLM's argument parser everywhere; what happens next depends on
the release, the GPU and the attention backend, and it is one of three things: it runs, the release
falls back from its V1 engine to V0 and runs (0.8.0-0.10.x only, and only when ``VLLM_USE_V1`` is not set
explicitly), or the engine dies while it builds the model or profiles memory. :func:`fp8_kv_support`
restates the decision as vLLM's source makes it, release by release. Read in the PyPI wheels of
0.6.6 ... 0.33.0 (33 releases):

* **V0 only (< 0.8.0)**: ``vllm@0.6.6:vllm/attention/selector.py::which_attn_to_use`` switches
  FlashAttention to XFormers for fp8 and the paged-attention kernels convert fp8 in software, so any GPU
  runs. DeepSeek-style MLA models cannot (``vllm@0.7.3`` Triton/FlashMLA MLA implementations raise
  ``NotImplementedError`` for an fp8 KV cache).
* **V1 by default (0.8.0-0.10.x)**: ``EngineArgs._is_v1_supported_oracle`` keeps V1 for an fp8 KV cache only
  with FlashAttention 3 on compute capability 9.x (0.8.5/0.9.2, ``vllm/attention/utils/fa_utils.py::
  flash_attn_supports_fp8``), also on ROCm from 0.9 and on cc 10.0 from 0.10.0
  (``vllm@0.10.1.1:vllm/platforms/cuda.py::CudaPlatformBase.is_kv_cache_dtype_supported``), and from 0.10.2
  with a forced ``FLASHINFER`` backend, or ``TRITON_ATTN_VLLM_V1`` on cc >= 8.9, or for MLA models with the
  default FlashMLA/CUTLASS MLA backend (``vllm@0.10.2``, same function). Otherwise ``_raise_or_fallback``
  falls back to V0 with a warning, or raises ``NotImplementedError`` when ``VLLM_USE_V1=1`` is set.
  The oracle's own ``compute capability < 8.0`` fallback exists up to 0.10.1 and is gone in 0.10.2.
* **0.11.0** (V1 only, hand-written selector, ``vllm@0.11.0:vllm/platforms/cuda.py::
  CudaPlatformBase.get_attn_backend_cls``): fp8 on cc 8.x other than 9.0 goes to TRITON_ATTN, whose
  ``float8_e4m3fn`` view Triton cannot compile below sm_89 (vllm-project/vllm#26431); cc < 8.0 goes to
  FlexAttention, which raises for a quantized KV cache (``.../flex_attention.py::FlexAttentionImpl``).
* **0.11.1-0.33.0** (validated priority selector, ``vllm@X:vllm/platforms/cuda.py::
  _get_backend_priorities`` / ``get_valid_backends``): FLASH_ATTN takes fp8 only with FA3 on cc 9.x; then
  FLASHINFER (fp8 with head size 64/128/256, fp16/bf16, no attention sinks, cc 7.5-12.1; from 0.24.0 cc
  >= 8.0 and head size 512 too); then TRITON_ATTN, which fails below sm_89 (an explicit ``ValueError``
  from 0.24.0, ``.../triton_attn.py::TritonAttentionImpl.__init__``; vllm-project/vllm#47549 on a T4).
  MLA models: no valid backend below cc 9.0 up to 0.17.x, below sm_89 from 0.18 (explicit from 0.26.0,
  ``.../mla/triton_mla.py::TritonMLAImpl.__init__``); no MLA backend accepts ``fp8_e5m2``.
* Hopper with ``fp8_e5m2`` on FlashAttention 3 (0.10.0-0.22.0) raises "Unrecognized FP8 dtype"
  (``FlashAttentionBackend.get_fp8_dtype_for_flashattn``) during CUDA-graph capture; from 0.22.1
  FlashAttention refuses e5m2 at selection and FlashInfer takes it.
* ROCm: no Python-level check; V1 views the cache as ``float8_e4m3fn`` except on gfx94x, and Triton on
  gfx90a (MI210/MI250, no fp8 hardware) supports only e5m2 (vllm-project/vllm#16394): "likely fails",
  reported as a warning. MI300-class GPUs (fp8 hardware) run.

A forced backend (``VLLM_ATTENTION_BACKEND``, read up to 0.14.x; ``--attention-backend`` from 0.13) is
taken into account where the source makes it decisive. Anything not covered returns ``unknown`` and
kvlint says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.memory.versions import Version

__all__ = ["Fp8KvSupport", "fp8_kv_support", "forced_backend"]

#: Head sizes FlashInfer's fp8 path accepts (``FlashInferBackend.get_supported_head_sizes``); 512 from 0.24.0.
_FI_HEADS = frozenset({64, 128, 256})
#: Architectures with attention sinks, which FlashInfer does not take below SM100 (gpt-oss).
_SINK_ARCHS = ("GptOssForCausalLM",)


@dataclass(frozen=True)
class Fp8KvSupport:
    """What vLLM does with an fp8 KV cache here.

    Attributes:
        outcome: ``ok`` (runs), ``raises`` (start-up fails, from the source), ``likely_raises`` (the
            source and reports point to a failure but nothing in vLLM checks it: ROCm gfx90a),
            ``unknown``.
        engine: ``v0`` when vLLM falls back to its V0 engine to run it (0.8.0-0.10.x), ``v1``, or None
            when the outcome does not depend on it.
        why: the decisive condition in words (no numbers the caller does not already print).
        source: ``vllm@X:path::function`` of the decision.
    """

    outcome: str
    engine: str | None
    why: str
    source: str


def forced_backend(v: Version, env_backend: str | None, flag_backend: str | None) -> str | None:
    """The attention backend the user forces, normalised (``FLASH_ATTN_VLLM_V1`` -> ``FLASH_ATTN``):
    ``--attention-backend`` from 0.13, else ``VLLM_ATTENTION_BACKEND`` up to 0.14.x (0.15.1 no longer
    reads it, ``vllm@0.15.1:vllm/envs.py``)."""
    raw = None
    if flag_backend and v >= (0, 13, 0):
        raw = flag_backend
    elif env_backend and v < (0, 15, 0):
        raw = env_backend
    if not raw:
        return None
    name = str(raw).strip().upper()
    return name[: -len("_VLLM_V1")] if name.endswith("_VLLM_V1") else name


def fp8_kv_support(
    v: Version,
    kv_cache_dtype: str,
    *,
    vendor: str,
    cc: tuple[int, int] | None,
    gpu_has_fp8: bool = False,
    is_mla: bool = False,
    head_size: int | None = None,
    dtype: str = "bfloat16",
    architectures: tuple[str, ...] = (),
    use_v1_env: bool | None = None,
    backend: str | None = None,
    mla_disabled: bool = False,
) -> Fp8KvSupport:
    """Decide, as vLLM ``v`` does, whether ``--kv-cache-dtype kv_cache_dtype`` runs on this GPU.

    Args:
        v: vLLM release. kv_cache_dtype: the flag's value (anything not ``fp8``/``fp8_e4m3``/``fp8_e5m2``
            gives ``unknown``).
        vendor: ``nvidia`` or ``amd`` (other vendors: ``unknown``). cc: CUDA compute capability (None for
            AMD). gpu_has_fp8: the GPU has fp8 hardware (AMD: MI300-class yes, MI210/MI250 no).
        is_mla: DeepSeek-style MLA attention. head_size: attention head size. dtype: the resolved model
            dtype. architectures: config.json ``architectures`` (attention sinks).
        use_v1_env: ``VLLM_USE_V1`` as set in the pod (None: not set). backend: :func:`forced_backend`.
        mla_disabled: ``VLLM_MLA_DISABLE=1`` (MLA models then use ordinary attention).

    Returns:
        :class:`Fp8KvSupport`. Never raises. Sources: see the module docstring.
    """
    kvd = (kv_cache_dtype or "auto").lower()
    if kvd not in ("fp8", "fp8_e4m3", "fp8_e5m2"):
        return Fp8KvSupport("unknown", None, f"{kvd} is not one of the fp8 KV dtypes kvlint checks", "")
    mla = is_mla and not mla_disabled
    e5m2 = kvd == "fp8_e5m2"
    if vendor not in ("nvidia", "amd") or (vendor == "nvidia" and cc is None):
        return Fp8KvSupport("unknown", None, "GPU architecture unknown", "")
    amd = vendor == "amd"
    c = cc or (0, 0)

    # ---- V0 only
    if v < (0, 8, 0):
        if mla and v >= (0, 7, 3) and not amd:
            return _raises(
                None,
                "its MLA attention implementations (Triton MLA, FlashMLA) reject an fp8 KV cache",
                "vllm@0.7.3:vllm/attention/backends/triton_mla.py",
            )
        return Fp8KvSupport(
            "ok", "v0", "the V0 engine converts fp8 in software", "vllm@0.6.6:vllm/attention/selector.py"
        )

    # ---- V1 by default, V0 fallback (0.8.0 - 0.10.x)
    if v < (0, 11, 0):
        read = (
            "0.8.5"
            if v < (0, 9, 0)
            else "0.9.2"
            if v < (0, 10, 0)
            else "0.10.1.1"
            if v < (0, 10, 2)
            else "0.10.2"
        )
        oracle = f"vllm@{read}:vllm/engine/arg_utils.py::EngineArgs._is_v1_supported_oracle"
        if amd:
            v1_ok = v >= (0, 9, 0)
        elif v < (0, 10, 2):
            fa = backend in (None, "FLASH_ATTN")
            v1_ok = (v >= (0, 10, 0) and c == (10, 0)) or (fa and c[0] == 9)
        elif mla:
            v1_ok = backend in (None, "FLASHMLA", "CUTLASS_MLA")
        elif c == (10, 0):
            v1_ok = True
        elif backend in (None, "FLASH_ATTN"):
            v1_ok = c[0] == 9
        elif backend == "FLASHINFER":
            v1_ok = True
        elif backend == "TRITON_ATTN":
            v1_ok = c >= (8, 9)
        else:
            v1_ok = False
        if not v1_ok:
            if use_v1_env is True:
                return _raises(
                    "v1",
                    f"its V1 engine cannot run --kv-cache-dtype {kvd} here and VLLM_USE_V1=1 forbids the fallback "
                    "to V0 (NotImplementedError)",
                    oracle,
                )
            if mla and not amd:
                return _raises("v0", "its V0 MLA implementations reject an fp8 KV cache", oracle)
            return Fp8KvSupport(
                "ok",
                "v0",
                f"--kv-cache-dtype {kvd} is not supported by the V1 engine here: V0 fallback",
                oracle,
            )
        if mla and not amd:
            if v < (0, 10, 0):
                return _raises(
                    "v1",
                    "FlashMLA rejects an fp8 KV cache in this release",
                    "vllm@0.8.5:vllm/v1/attention/backends/mla/flashmla.py",
                )
            if c[0] not in (9, 10):
                return _raises(
                    "v1",
                    "the Triton MLA backend used below compute capability 9.0 rejects an fp8 KV cache",
                    "vllm@0.10.2:vllm/v1/attention/backends/mla/triton_mla.py",
                )
            return Fp8KvSupport("ok", "v1", "FlashMLA/CUTLASS MLA run an fp8 KV cache", oracle)
        if amd:
            return _amd(v, gpu_has_fp8, "v1")
        if c[0] == 9 and e5m2 and v >= (0, 10, 0):
            return _raises(
                "v1",
                "FlashAttention 3 does not know fp8_e5m2 ('Unrecognized FP8 dtype'), raised during CUDA-graph capture",
                "vllm@0.10.2:vllm/v1/attention/backends/flash_attn.py::FlashAttentionBackend.get_fp8_dtype_for_flashattn",
            )
        return Fp8KvSupport("ok", "v1", "the V1 engine runs an fp8 KV cache here", oracle)

    # ---- V1 only (0.11.0+)
    if amd:
        if mla:
            return Fp8KvSupport("unknown", "v1", "ROCm MLA with fp8 KV not analysed", "")
        return _amd(v, gpu_has_fp8, "v1")
    sel = "vllm@0.11.0:vllm/platforms/cuda.py::CudaPlatformBase.get_attn_backend_cls"
    triton = (
        "vllm@0.24.0:vllm/v1/attention/backends/triton_attn.py::TritonAttentionImpl.__init__"
        if v >= (0, 24, 0)
        else "vllm@0.11.0:vllm/v1/attention/backends/triton_attn.py (Triton fp8e4nv needs sm_89)"
    )
    triton_why = "the Triton attention backend cannot hold an fp8 KV cache below compute capability 8.9"
    if mla:
        if e5m2 and v >= (0, 11, 1):
            return _raises(
                "v1", "no MLA attention backend accepts fp8_e5m2", "vllm@0.12.0:vllm/platforms/cuda.py"
            )
        floor_ok = c[0] in (9, 10) if v < (0, 18, 0) else (c >= (8, 9))
        if floor_ok:
            return Fp8KvSupport("ok", "v1", "an MLA backend with fp8 support is selected", sel)
        return _raises(
            "v1",
            "no MLA attention backend runs an fp8 KV cache on this GPU"
            + (" ('No valid attention backend found')" if (0, 11, 1) <= v < (0, 18, 0) else ""),
            "vllm@0.26.0:vllm/v1/attention/backends/mla/triton_mla.py::TritonMLAImpl.__init__"
            if v >= (0, 26, 0)
            else "vllm@0.12.0:vllm/platforms/cuda.py::CudaPlatformBase.get_attn_backend_cls",
        )
    hopper_e5m2 = c[0] == 9 and e5m2 and v < (0, 22, 1)
    if v < (0, 11, 1):  # 0.11.0's hand-written selector
        if backend == "FLASHINFER":
            return Fp8KvSupport("ok", "v1", "forced FlashInfer runs an fp8 KV cache", sel)
        if backend == "FLASH_ATTN" and c[0] != 9:
            return _raises("v1", "forced FlashAttention has no fp8 KV cache on this GPU", sel)
        if backend == "FLEX_ATTENTION":
            return _raises("v1", "FlexAttention does not support a quantized KV cache", sel)
        if backend == "TRITON_ATTN":
            return Fp8KvSupport("ok", "v1", "", sel) if c >= (8, 9) else _raises("v1", triton_why, triton)
        if backend:
            return Fp8KvSupport("unknown", "v1", f"forced backend {backend}", sel)
        if c >= (10, 0):
            return Fp8KvSupport("ok", "v1", "FlashInfer runs an fp8 KV cache", sel)
        if c[0] == 9:
            if hopper_e5m2:
                return _raises(
                    "v1", "FlashAttention 3 does not know fp8_e5m2 ('Unrecognized FP8 dtype')", sel
                )
            return Fp8KvSupport("ok", "v1", "FlashAttention 3 runs an fp8 KV cache", sel)
        if c >= (8, 9):
            return Fp8KvSupport("ok", "v1", "the Triton backend runs an fp8 KV cache on sm_89", sel)
        if c >= (8, 0):
            return _raises(
                "v1", "fp8 goes to the Triton backend, which cannot compile fp8e4nv below sm_89", sel
            )
        return _raises(
            "v1",
            "fp8 goes to FlexAttention below compute capability 8.0, which does not support a quantized KV cache",
            "vllm@0.11.0:vllm/v1/attention/backends/flex_attention.py::FlexAttentionImpl.__init__",
        )
    prio = "vllm@0.12.0:vllm/platforms/cuda.py::CudaPlatformBase.get_attn_backend_cls"
    fi_floor = (8, 0) if v >= (0, 24, 0) else (7, 5)
    heads = _FI_HEADS | ({512} if v >= (0, 24, 0) else set())
    sinks = any(a in _SINK_ARCHS for a in architectures)
    fi_ok = (
        fi_floor <= c <= (12, 1)
        and (head_size is None or head_size in heads)
        and dtype in ("float16", "bfloat16")
        and not (sinks and c[0] < 10)
    )
    if backend:
        if backend == "FLASH_ATTN":
            if c[0] == 9 and not e5m2:
                return Fp8KvSupport("ok", "v1", "", prio)
            if c[0] == 10 and v >= (0, 29, 0) and not e5m2:
                return Fp8KvSupport("ok", "v1", "", prio)
            return _raises(
                "v1", "the forced FlashAttention backend is not valid with this fp8 KV cache here", prio
            )
        if backend == "FLASHINFER":
            return (
                Fp8KvSupport("ok", "v1", "", prio)
                if fi_ok
                else _raises("v1", "the forced FlashInfer backend is not valid for this model or GPU", prio)
            )
        if backend == "TRITON_ATTN":
            return Fp8KvSupport("ok", "v1", "", prio) if c >= (8, 9) else _raises("v1", triton_why, triton)
        if backend == "FLEX_ATTENTION":
            return _raises("v1", "FlexAttention does not support a quantized KV cache", prio)
        return Fp8KvSupport("unknown", "v1", f"forced backend {backend}", prio)
    if c[0] == 9:
        if hopper_e5m2:
            return _raises(
                "v1",
                "FlashAttention 3 does not know fp8_e5m2 ('Unrecognized FP8 dtype'), raised during CUDA-graph capture",
                "vllm@0.12.0:vllm/v1/attention/backends/flash_attn.py::FlashAttentionBackend.get_fp8_dtype_for_flashattn",
            )
        return Fp8KvSupport("ok", "v1", "FlashAttention 3 runs an fp8 KV cache", prio)
    if c >= (8, 9):
        return Fp8KvSupport("ok", "v1", "FlashInfer or Triton run an fp8 KV cache from sm_89", prio)
    if fi_ok:
        return Fp8KvSupport("ok", "v1", "FlashInfer is selected and runs an fp8 KV cache", prio)
    why = triton_why
    if c >= fi_floor:
        why = "FlashInfer does not take this model (head size, dtype or attention sinks), so " + why
    elif c >= (7, 5) and v >= (0, 24, 0):
        why = "FlashInfer needs compute capability 8.0 from vLLM 0.24.0, so " + why
    return _raises("v1", why, triton)


def _raises(engine: str | None, why: str, source: str) -> Fp8KvSupport:
    return Fp8KvSupport("raises", engine, why, source)


def _amd(v: Version, gpu_has_fp8: bool, engine: str) -> Fp8KvSupport:
    if gpu_has_fp8:
        return Fp8KvSupport(
            "ok", engine, "MI300-class GPUs run an fp8 KV cache", "vllm@0.33.0:vllm/platforms/rocm.py"
        )
    return Fp8KvSupport(
        "likely_raises",
        engine,
        "the V1 ROCm backends view the cache as float8_e4m3fn, which Triton cannot compile on a GPU without fp8 "
        "(gfx90a supports only e5m2, vllm-project/vllm#16394); nothing in vLLM checks it",
        "vllm@0.33.0:vllm/platforms/rocm.py::RocmPlatform.fp8_dtype",
    )
