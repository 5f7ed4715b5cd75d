"""Version-keyed vLLM defaults: batch sizes, dtype, block size, max_model_len derivation.

Every function returns the value *and* a human sentence (for ``MemoryPlan.assumptions``) naming the vLLM
source it restates (docs/engine-memory-model.md §1.7, §1.8, §1.9, §1.4). Pure functions; never raise.
"""

from __future__ import annotations

import math
from typing import Any

from kvlint.engines.options import MAX_INT_SETTING
from kvlint.memory.memo import per_model
from kvlint.memory.versions import Version, fmt_version, yarn_multiplies_max_len
from kvlint.models.config import MAX_LEN_KEYS
from kvlint.types import ModelSpec
from kvlint.values import finite_number, parse_cc, yaml_text

GiB = 1 << 30

# ------------------------------------------------------------------------------------------------
# scheduler defaults (§1.9)


def batch_defaults(
    v: Version,
    era: str,
    total_bytes: int,
    gpu_name: str = "",
    compute_capability: str | None = None,
    performance_mode: str | None = None,
    max_model_len: int = 2048,
    chunked_prefill: bool = True,
) -> tuple[int, int, str]:
    """Default ``(max_num_batched_tokens, max_num_seqs, why)`` for ``vllm serve`` (usage context OpenAI server).

    V1 (``vllm@0.33.0:vllm/engine/arg_utils.py::EngineArgs.get_batch_defaults``; table in §1.9):
    0.8.0–0.8.4 by GPU name (h100/h200 -> 8192 else 2048; seqs 1024); 0.8.5 by memory (>= 70 GiB -> 8192/1024,
    else 2048/256); 0.9.0–0.27 also excludes names containing "a100"; >= 0.28 adds a >= 160 GiB tier
    (16384/1024) and excludes GB10 (CC 12.1). ``performance_mode=throughput`` (>= 0.17) doubles both.
    GB10 takes the small tier from 0.8.5 on too: vLLM reads the device total through NVML
    (``vllm@0.28.0:vllm/platforms/cuda.py::NvmlCudaPlatform.get_device_total_memory``,
    ``nvmlDeviceGetMemoryInfo``), which raises "Not Supported" on GB10's unified memory (NVIDIA DGX Spark known
    issues: nvidia-smi reports the memory usage as not supported), and ``get_batch_defaults`` (``_set_default_args``
    before 0.13, ``vllm@0.11.0:vllm/engine/arg_utils.py``) catches any exception there as ``device_memory = 0``.
    The NGC 0.13.0 start-up on a GB10 prints 2048 (bench gt-317), 0.25.1 prints Gemma 4's prefix-LM raise from
    2048 (gt-321).
    V0 (``vllm@0.6.6.post1:vllm/engine/arg_utils.py``): chunked prefill off -> ``max(max_model_len, 2048)``/256,
    on -> 2048 (512 up to 0.6.3)/256. ``total_bytes`` is the CUDA total of GPU 0.
    """
    name = (gpu_name or "").lower()
    mem = total_bytes
    vs = fmt_version(v)
    gb10 = compute_capability == "12.1"
    if era == "v0":
        if chunked_prefill:
            mbt = 512 if v <= (0, 6, 3) else 2048
            return (
                mbt,
                256,
                f"max_num_batched_tokens={mbt}, max_num_seqs=256: vLLM {vs} V0 defaults with chunked prefill",
            )
        mbt = max(max_model_len, 2048)
        return (
            mbt,
            256,
            f"max_num_batched_tokens={mbt} (= max(max_model_len, 2048)), max_num_seqs=256: vLLM {vs} V0 defaults "
            "without chunked prefill (EngineArgs.create_engine_config)",
        )
    if v < (0, 8, 5):
        big = "h100" in name or "h200" in name
        mbt, seqs = (8192 if big else 2048), 1024
        why = f"vLLM {vs} default by GPU name ({'H100/H200' if big else 'not H100/H200'})"
    elif gb10 and v < (0, 28, 0):
        # NVML cannot report GB10's memory: get_batch_defaults falls back to device_memory = 0 (docstring)
        mbt, seqs = 2048, 256
        why = f"vLLM {vs} default for a GPU whose memory NVML cannot report (GB10: device_memory taken as 0)"
    elif v < (0, 9, 0):
        big = mem >= 70 * GiB
        mbt, seqs = (8192, 1024) if big else (2048, 256)
        why = f"vLLM {vs} default for GPUs {'with >= 70' if big else 'under 70'} GiB"
    elif v < (0, 28, 0):
        big = mem >= 70 * GiB and "a100" not in name
        mbt, seqs = (8192, 1024) if big else (2048, 256)
        why = f"vLLM {vs} default for GPUs {'with >= 70 GiB (not A100)' if big else 'under 70 GiB or A100'}"
    else:
        if mem >= 160 * GiB:
            mbt, seqs, why = 16384, 1024, f"vLLM {vs} default for GPUs with >= 160 GiB"
        elif mem >= 70 * GiB and "a100" not in name and not gb10:
            mbt, seqs, why = 8192, 1024, f"vLLM {vs} default for GPUs with 70-160 GiB (not A100/GB10)"
        else:
            mbt, seqs, why = 2048, 256, f"vLLM {vs} default for GPUs under 70 GiB, A100 or GB10"
    if v >= (0, 17, 0) and (performance_mode or "balanced") == "throughput":
        mbt, seqs = mbt * 2, seqs * 2
        why += ", doubled by --performance-mode throughput"
    return (
        mbt,
        seqs,
        f"max_num_batched_tokens={mbt}, max_num_seqs={seqs}: {why} (EngineArgs.get_batch_defaults)",
    )


V0_LONG_CONTEXT_CHUNKED_FROM: Version = (0, 5, 3)
"""First release whose V0 engine turns chunked prefill on by default for ``max_model_len > 32768``
(``vllm@0.5.3:vllm/engine/arg_utils.py::EngineArgs.create_engine_config``; absent in the 0.5.2 wheel). gt-015's
own log (vllm-project/vllm#6746, 0.5.3.post1) prints "Chunked prefill is enabled by default for models with
max_model_len > 32K" and "Chunked prefill is enabled with max_num_batched_tokens=512"."""

V0_MULTIMODAL_NO_CHUNKED_FROM: Version = (0, 6, 2)
"""First release that leaves a multimodal model's chunked prefill off in V0 (``use_long_context and not
model_config.is_multimodal_model``, vllm@0.6.2; not in the 0.6.1 wheel)."""

V0_ROCM_NO_CHUNKED_FROM: Version = (0, 6, 5)
"""First release that leaves chunked prefill off on ROCm (``not current_platform.is_rocm()``, vllm@0.6.5; before,
ROCm ran with ``device_type == "cuda"`` and took the default)."""


def v0_chunked_prefill_default(
    v: Version,
    max_model_len: int,
    has_sliding_window: bool,
    *,
    multimodal: bool = False,
    rocm: bool = False,
    speculative: bool = False,
    lora: bool = False,
) -> bool:
    """Whether V0 turns chunked prefill on when the flag is not given.

    Only when ``max_model_len > 32768`` on a CUDA device, without sliding window, speculative decoding or LoRA
    (``EngineArgs.create_engine_config``, read in the 0.5.3, 0.5.4, 0.5.5, 0.6.0 - 0.6.5 wheels;
    ``EngineArgs._set_default_args_v0`` in 0.8.0), from 0.5.3 (:data:`V0_LONG_CONTEXT_CHUNKED_FROM`), with a
    multimodal model not from 0.6.2 (:data:`V0_MULTIMODAL_NO_CHUNKED_FROM`) and on ROCm not from 0.6.5
    (:data:`V0_ROCM_NO_CHUNKED_FROM`). **[assumed]** Not modelled: prompt adapters (all releases), prefix caching
    (excluded in 0.5.3 - 0.6.0), Mamba-style layers (excluded in 0.6.1 - 0.6.2), pooling models (from 0.6.5) and MLA
    (0.8.0); kvlint does not read those for this default.
    """
    if v < V0_LONG_CONTEXT_CHUNKED_FROM or max_model_len <= 32768:
        return False
    if has_sliding_window or speculative or lora:
        return False
    if multimodal and v >= V0_MULTIMODAL_NO_CHUNKED_FROM:
        return False
    return not (rocm and v >= V0_ROCM_NO_CHUNKED_FROM)


V1_HONOURS_NO_CHUNKED_PREFILL: Version = (0, 11, 1)
"""First release whose V1 engine keeps a user's ``--no-enable-chunked-prefill`` for generative models."""


def v1_chunked_prefill_forced(v: Version) -> bool:
    """Whether V1 turns chunked prefill on for a generative model whatever the flag says.

    Up to 0.11.0, ``EngineArgs._set_default_args_v1`` (0.8.x-0.10.x) and ``EngineArgs._set_default_args``
    (0.11.0) set ``self.enable_chunked_prefill = True`` for every non-pooling runner, so
    ``--no-enable-chunked-prefill`` is ignored and ``max_num_batched_tokens`` keeps the chunked default. From
    0.11.1 (``vllm/engine/arg_utils.py::EngineArgs._set_default_args``) the flag's value is kept and only a
    missing flag takes the default (``get_chunked_prefill_prefix_caching_defaults``). Read in the 0.10.1,
    0.10.2, 0.11.0, 0.11.1, 0.11.2, 0.12.0 and 0.13.0 sources.
    """
    return v < V1_HONOURS_NO_CHUNKED_PREFILL


# ------------------------------------------------------------------------------------------------
# dtype (§1.7)

_DTYPE_ALIASES = {
    "half": "float16",
    "float16": "float16",
    "fp16": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float": "float32",
    "float32": "float32",
    "fp32": "float32",
}


def resolve_dtype(
    v: Version, config_dtype: str | None, dtype_flag: str | None, cc: str | None
) -> tuple[str, str]:
    """The activation/weight dtype vLLM runs with, and why.

    ``--dtype`` explicit wins (aliases half/float). ``auto``: >= 0.9.2 the config dtype if the platform
    supports it, float32 configs downcast to the preferred dtype (bf16 on CC >= 8.0, fp16 below) and bf16
    falls back to fp16 on CC < 8.0; <= 0.9.1 float32 -> float16 and bf16 kept even on CC < 8.0 (which then fails,
    E5). Missing config dtype -> float32 (then downcast). Source: ``vllm@0.33.0:vllm/config/model.py::
    _get_and_verify_dtype``/``_resolve_auto_dtype``, ``vllm/platforms/cuda.py::supported_dtypes``.
    """
    flag = (dtype_flag or "auto").lower()
    if flag != "auto":
        d = _DTYPE_ALIASES.get(flag, flag)
        return d, f"dtype={d}: set by --dtype"
    cfg = _DTYPE_ALIASES.get((config_dtype or "float32").lower().replace("torch.", ""), "float32")
    c = parse_cc(cc)
    bf16_ok = c is None or c >= (8, 0)
    if v >= (0, 9, 2):
        preferred = "bfloat16" if bf16_ok else "float16"
        if cfg == "float32":
            return (
                preferred,
                f"dtype={preferred}: float32 config downcast to the platform's preferred dtype (vLLM >= 0.9.2)",
            )
        if cfg == "bfloat16" and not bf16_ok:
            return (
                "float16",
                "dtype=float16: bf16 config falls back to fp16 on compute capability < 8.0 (vLLM >= 0.9.2)",
            )
        return cfg, f"dtype={cfg}: from config.json (--dtype auto)"
    if cfg == "float32":
        return "float16", "dtype=float16: float32 config downcast to float16 (vLLM <= 0.9.1 auto)"
    return cfg, f"dtype={cfg}: from config.json (--dtype auto)"


# ------------------------------------------------------------------------------------------------
# block size (§1.4)


def default_block_size(v: Version, is_mla: bool, cc: str | None, user: int | None) -> tuple[int, str]:
    """KV block size in tokens: ``--block-size`` if given, else ``CacheConfig.DEFAULT_BLOCK_SIZE`` (16 up to 0.33.x,
    64 from 0.34.0: ``vllm@0.34.0:vllm/config/cache.py::CacheConfig.DEFAULT_BLOCK_SIZE``, which
    ``vllm/platforms/interface.py::Platform.update_block_size_for_backend`` keeps when the attention backend accepts
    it, as FlashAttention and FlashInfer do), except MLA on CUDA where the backend forces it
    (``vllm@0.11.0:vllm/platforms/cuda.py::CudaPlatformBase.check_and_update_config``): FlashMLA 64 on Hopper
    (CC 9.x), CUTLASS-MLA 128 on Blackwell (CC 10.x) [backend-dependent; assumed from 0.8.0].
    """
    if user:
        return int(user), f"block_size={user}: set by --block-size"
    c = parse_cc(cc)
    if is_mla and v >= (0, 8, 0) and c is not None:
        if c[0] == 9:
            return 64, "block_size=64: FlashMLA backend forces 64 on Hopper [backend-dependent]"
        if c[0] == 10:
            return 128, "block_size=128: CUTLASS MLA backend forces 128 on Blackwell [backend-dependent]"
    if v >= (0, 34, 0):
        return 64, "block_size=64: vLLM default from 0.34.0 (CacheConfig.DEFAULT_BLOCK_SIZE)"
    return 16, "block_size=16: vLLM default (CacheConfig.DEFAULT_BLOCK_SIZE)"


# ------------------------------------------------------------------------------------------------
# max_model_len derivation (§1.8)


_NO_MULT_OLD = {"su", "longrope", "llama3"}
_NO_MULT_NEW = {"su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"}


def text_config(model: ModelSpec, hf_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``hf_text_config`` as vLLM sees it: ``text_config`` for multimodal models else the top-level config,
    with ``--hf-overrides`` applied on top (flat keys; a ``text_config`` sub-dict is merged into it)."""
    base = dict(model.text_config or model.config or {})
    if hf_overrides:
        sub = hf_overrides.get("text_config")
        for k, val in hf_overrides.items():
            if k != "text_config":
                base[k] = val
        if isinstance(sub, dict):
            base.update(sub)
    return base


def rope_scaling_of(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """The RoPE scaling dict (``rope_scaling``, or transformers 5 ``rope_parameters``) with ``rope_type`` filled
    from the legacy ``type`` key (vLLM ``patch_rope_scaling``)."""
    rs = cfg.get("rope_scaling") or cfg.get("rope_parameters")
    if not isinstance(rs, dict):
        return None
    rs = dict(rs)
    if "rope_type" not in rs and "type" in rs:
        rs["rope_type"] = rs["type"]
    if rs.get("rope_type") == "mrope":
        rs["rope_type"] = "default"
    return rs


#: The end of :func:`derive_max_model_len`'s ``why`` when the RoPE factor is not a number vLLM can multiply into a
#: length (NaN, an infinity, not a number, a product past 2^63 - 1): without ``--max-model-len`` vLLM's
#: ``int(derived_max_model_len)`` raises at start-up (KV202 says so, an error)
ROPE_NOT_APPLIED = ": not applied"


def derive_max_model_len(
    v: Version, model: ModelSpec, hf_overrides: dict[str, Any] | None = None
) -> tuple[float, str, int | None, str]:
    """vLLM's derived maximum model length from config.json (:func:`_derive_max_model_len`; memoised per model
    and release when there are no ``hf_overrides``, :func:`kvlint.memory.memo.per_model`)."""
    if hf_overrides:
        return _derive_max_model_len(model, v, hf_overrides)
    return _derive_max_model_len_memo(model, v)


def _derive_max_model_len(
    model: ModelSpec, v: Version, hf_overrides: dict[str, Any] | None = None
) -> tuple[float, str, int | None, str]:
    """vLLM's derived maximum model length from config.json.

    Returns ``(derived, key, model_max_length, why)``: the smallest present candidate key (a truthy
    ``model_max_length`` overrides), times the RoPE ``factor`` unless the rope type is exempt (<= 0.29: su,
    longrope, llama3; >= 0.30 also yarn, deepseek_yarn, deepseek_llama_scaling); for YaRN on <= 0.29 the base is
    ``original_max_position_embeddings``; ``gemma3*`` never multiplied; no key -> 2048. ``derived`` may be a float
    (>= 0.30 multiplies by 1.0). Source: ``vllm@0.33.0:vllm/transformers_utils/model_arch_config_convertor.py::
    derive_max_model_len_and_key``, ``vllm@0.11.0:vllm/config/model.py::_get_and_verify_max_len``.
    """
    cfg = text_config(model, hf_overrides)
    derived: float = float("inf")
    key = ""
    for k in MAX_LEN_KEYS:
        val = cfg.get(k)
        read = finite_number(val)
        if read is not None and 0 < read < derived and read <= MAX_INT_SETTING:
            derived, key = (val if isinstance(val, int) else read), k
    mml_f = finite_number(cfg.get("model_max_length"))
    mml_i = int(mml_f) if mml_f and abs(mml_f) <= MAX_INT_SETTING else None
    if mml_i:
        derived, key = mml_i, "model_max_length"
    if derived == float("inf"):
        return (
            2048,
            "default",
            None,
            "derived max_model_len=2048: no length key in config.json (vLLM default)",
        )
    why = f"derived max_model_len from {key}={int(derived)}"
    rs = rope_scaling_of(cfg)
    model_type = str(cfg.get("model_type") or model.model_type or "")
    if rs is not None and "gemma3" not in model_type:
        rtype = str(rs.get("rope_type") or "default")
        exempt = _NO_MULT_OLD if yarn_multiplies_max_len(v) else _NO_MULT_NEW
        if rtype not in exempt:
            raw_factor = rs.get("factor")
            read = 1.0 if raw_factor is None else finite_number(raw_factor)
            base = finite_number(rs.get("original_max_position_embeddings"))
            yarn_base = rtype == "yarn" and yarn_multiplies_max_len(v) and bool(base)
            product = (base if yarn_base and base else derived) * (read if read is not None else 1.0)
            if read is None or not (math.isfinite(product) and product <= MAX_INT_SETTING):
                # not a length vLLM can use: it multiplies its derived length by the factor as it is, and int() of
                # that product raises at start-up when --max-model-len is not given (_get_and_verify_max_len); a
                # length past 2^63 - 1 tokens is not read, as a flag's is not (KV206)
                what = (
                    "is not a finite number" if read is None else "makes the length more than 2^63 - 1 tokens"
                )
                return (
                    derived,
                    key,
                    mml_i,
                    f"{why}; rope {rtype} factor {yaml_text(raw_factor, 20)} {what}{ROPE_NOT_APPLIED}",
                )
            factor = read
            if yarn_base and base:
                derived = int(base)
                # the base is YaRN's original length, not the key named first: say which number is multiplied
                why = (
                    f"derived max_model_len from rope_scaling original_max_position_embeddings={int(derived)}"
                )
            derived = derived * factor
            if factor != 1.0:
                why += f", x rope factor {factor:g} ({rtype}, vLLM {fmt_version(v)})"
                if yarn_base:
                    why += f" = {derived:g}"
        elif rtype == "yarn":
            why += f" (YaRN factor not applied from vLLM 0.30.0; vLLM {fmt_version(v)})"
    return derived, key, mml_i, why


_derive_max_model_len_memo = per_model(_derive_max_model_len)


def default_max_model_len(
    v: Version, model: ModelSpec, derived: float, hf_overrides: dict[str, Any] | None = None
) -> int:
    """max_model_len when the user gives none: ``int(derived)``, but for ``longrope`` the top-level
    ``original_max_position_embeddings`` (``vllm@0.33.0:vllm/config/model.py::_get_and_verify_max_len``).
    Memoised per model and ``derived`` when there are no ``hf_overrides``."""
    if hf_overrides:
        return _default_max_model_len(model, derived, hf_overrides)
    return _default_max_model_len_memo(model, derived)


def _default_max_model_len(
    model: ModelSpec, derived: float, hf_overrides: dict[str, Any] | None = None
) -> int:
    """:func:`default_max_model_len` itself (it does not depend on the release)."""
    cfg = text_config(model, hf_overrides)
    rs = rope_scaling_of(cfg)
    if rs is not None and rs.get("rope_type") in ("longrope", "su"):
        orig = cfg.get("original_max_position_embeddings") or rs.get("original_max_position_embeddings")
        if isinstance(orig, int) and orig > 0:
            return orig
    return int(derived)


_default_max_model_len_memo = per_model(_default_max_model_len)
