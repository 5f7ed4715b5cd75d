"""vLLM memory model: what vLLM computes and prints at start-up, per GPU, version by version.

Predicts "Model loading took X GiB", "Available KV cache memory: X GiB", "GPU KV cache size: N tokens",
"Maximum concurrency for L tokens per request: X.XXx" and the E1 fit-check error with its "estimated maximum
model length", following docs/engine-memory-model.md §1 (sources cited per function as
``vllm@VERSION:path::function``). The exact parts (budget, KV bytes per token, blocks, groups, capacity,
concurrency, fit check) restate vLLM; the measured parts (activation, non-torch, CUDA graphs) come from
:mod:`kvlint.memory.calibration` and carry an uncertainty band.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kvlint.engines.options import MAX_INT_SETTING, SPEC_SHORTHANDS
from kvlint.fastinit import direct_init, replaced
from kvlint.memory import calibration as cal
from kvlint.memory import defaults as dfl
from kvlint.memory import vllm_runner
from kvlint.memory.deepseek_v4 import V4_DEFAULT_BLOCK_SIZE, is_deepseek_v4, v4_pool
from kvlint.memory.fp8kv import forced_backend, fp8_kv_support
from kvlint.memory.kv import (
    LayerCounts,
    cdiv,
    dtype_bytes,
    kv_dtype_bytes,
    layer_bytes_per_token,
    layer_counts,
)
from kvlint.memory.lora import (
    DEFAULT_MAX_LORA_RANK,
    DEFAULT_MAX_LORAS,
    lora_dtype_bytes,
    lora_stacks,
    stacks_in_kv_budget,
)
from kvlint.memory.memo import by_value, per_model, per_object
from kvlint.memory.multimodal import (
    EncoderProfile,
    encoder_profile,
    encoder_tp_data_applies,
    is_multimodal,
    language_model_only_limits,
    parse_mm_limits,
    towers_not_loaded,
)
from kvlint.memory.pooling import VLLM_V1_POOLING_FROM, vllm_pooling, vllm_pooling_chunked_prefill
from kvlint.memory.refusal import PlanError, PlanRefusal
from kvlint.memory.versions import (
    Version,
    capacity_is_concurrency_times_len,
    cudagraph_capture_follows_speculation,
    cudagraph_env_exists,
    cudagraph_estimated_on_rocm,
    cudagraph_subtracted_by_default,
    default_gpu_memory_utilization,
    fit_check_whole_model_under_pp,
    fmt_version,
    has_extensible_kv_cache,
    has_kv_cache_memory_bytes,
    has_null_block_in_fit_check,
    hybrid_allocator_available,
    moe_gathers_dp_batch,
    moe_shards_experts_across_dp,
    nemotron_h_ssm_cache_dtype,
    refuses_max_num_seqs_over_mamba_blocks,
    resolve_version,
    supports_auto_max_model_len,
)
from kvlint.models.shapes import dtype_bytes_of
from kvlint.models.towers import tower_config
from kvlint.models.weights import (
    MXFP4_TRITON_RELEASES,
    arctic_residual_mlp,
    audio_params,
    decoder_layer_bytes,
    gemma4_moe_keeps_dense_mlp,
    param_breakdown,
    tp_replicated_bytes,
    vision_params,
    weight_bytes,
)
from kvlint.types import LayerSpec, MemoryPlan, ModelSpec, NoteItem, PlanNotes, ServingConfig, Value
from kvlint.values import as_float, as_int, finite_number, lax_int, parse_cc, truthy

GiB = 1 << 30


#: How a :class:`PlanError` for more pipeline stages than the model has layers begins (its
#: :attr:`~kvlint.memory.refusal.PlanRefusal.VLLM_PP_EXCEEDS_LAYERS`, which KV502 reports at the pipeline-parallel size:
#: :func:`kvlint.rules.families.resolution.model_config_unavailable`).
PP_EXCEEDS_LAYERS = "--pipeline-parallel-size"
#: How the plan's note for a ``--max-model-len`` above the length vLLM derives from config.json ends without
#: ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` (vLLM's E6, rule KV201); the refusal itself is carried as
#: :attr:`VllmPlanDetail.length_refused` (:func:`kvlint.capacity.context.cell_verdict` reads that).
ABOVE_DERIVED_REFUSED = ": vLLM refuses to start (E6)"
#: vLLM's environment variable naming each pipeline stage's layer count (``get_pp_indices``)
PP_PARTITION_ENV = "VLLM_PP_LAYER_PARTITION"
#: How a :class:`PlanError` for a ``VLLM_PP_LAYER_PARTITION`` vLLM refuses begins (its
#: :attr:`~kvlint.memory.refusal.PlanRefusal.VLLM_PP_PARTITION`, which KV502 reports): :func:`pp_partition_refused`
PP_PARTITION_REFUSED = PP_PARTITION_ENV


def pp_exceeds_layers(num_layers: int, pp: int) -> str | None:
    """Why vLLM cannot serve a model of ``num_layers`` decoder layers over ``pp`` pipeline stages, or None.

    vLLM does not refuse the sizes up front (``get_pp_indices``, vllm@0.34.0:vllm/distributed/utils.py, checks only
    a ``VLLM_PP_LAYER_PARTITION``; an explicit check was declined in vllm-project/vllm#6115): with ``pp >
    num_layers`` its split (:func:`pp_layer_split`) gives ``pp - num_layers`` stages no layer at all. Such a stage
    holds no attention layer, so no KV cache: vLLM 0.34.0's ``get_kv_cache_configs``
    (vllm/v1/core/kv_cache_planning.py) sizes that worker's block from its empty layer list (0 bytes) and divides by
    it [read, not run]. Either way the stage's GPUs serve nothing."""
    if num_layers <= 0 or pp <= num_layers:
        return None
    return (
        f"{PP_EXCEEDS_LAYERS} {pp} is more pipeline stages than the model's {num_layers} layers: vLLM's get_pp_indices "
        f"gives {pp - num_layers} stage(s) no layer, whose GPUs hold no KV cache (vLLM 0.34.0's KV cache planning "
        "divides by such a stage's zero block size [read, not run])"
    )


@dataclass(frozen=True)
class VllmSettings:
    """Resolved vLLM engine settings (argparse dest names). ``None`` = the version default applies.

    ``max_model_len``: int, None (derive) or -1 (``auto``, >= 0.14). ``gpu_memory_utilization`` fraction of the
    CUDA total per GPU. ``cpu_offload_gb`` GiB of weights per GPU held in host memory. ``kv_cache_memory_bytes``
    per GPU (>= 0.10.2). ``enable_extensible_kv_cache``: ``--[no-]enable-extensible-kv-cache`` (>= 0.34.0; None: on
    where vLLM supports it, §1.2.5). ``estimate_cudagraphs``: the ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` env
    override.
    ``speculative_model``/``num_speculative_tokens``: a draft model sharing the GPU (weights + KV layers).
    ``speculative_model_id``/``speculative_method``: ``--speculative-config`` ``model``/``method`` (the caller
    resolves the id to ``speculative_model``); without a draft model, ``method`` ``mtp``/``deepseek_mtp``/... or a
    config with ``num_nextn_predict_layers`` adds the MTP layers to the pool. ``pp_layer_partition``:
    ``VLLM_PP_LAYER_PARTITION`` read as integers, ``pp_layer_partition_env`` its text as the container sets it
    (even empty or not integers: :func:`pp_partition_refused` says why vLLM refuses it). ``limit_mm_per_prompt``
    (``--limit-mm-per-prompt``, items per modality; every one 0 under ``--language-model-only``) and
    ``mm_processor_kwargs`` (``--mm-processor-kwargs``) size the multimodal encoder profile,
    ``skip_mm_profiling`` (``--skip-mm-profiling``) drops it and ``mm_encoder_tp_mode`` (``--mm-encoder-tp-mode``;
    ``data`` replicates the vision tower) sets how the Qwen2-VL family's tower is split;
    ``flashinfer_sampler``: the ``VLLM_USE_FLASHINFER_SAMPLER`` env override; ``v2_model_runner``:
    ``VLLM_USE_V2_MODEL_RUNNER`` (:func:`kvlint.memory.vllm_runner.uses_v2_runner`), ``v2_model_runner_env`` its
    string as set (:func:`kvlint.memory.vllm_runner.v2_env_refused`). ``mxfp4_backend``: ``"marlin"`` when
    the install's MXFP4 MoE backend is known to be Marlin (no FlashInfer MXFP4 backend and no ``triton_kernels``,
    :func:`kvlint.models.weights._mxfp4_expert_padding`); None: by compute capability. ``mxfp4_use_marlin`` and
    ``flashinfer_mxfp4_bf16``: the ``VLLM_MXFP4_USE_MARLIN`` and ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16`` env switches
    (None: unset), which pick the MXFP4 MoE backend on Hopper (:func:`mxfp4_moe_backend`); ``flashinfer_mxfp4_mxfp8``
    and ``flashinfer_mxfp4_mxfp8_cutlass``: ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8`` and
    ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS``, FlashInfer's MXFP8-activation backends on Blackwell (TRT-LLM's
    or CUTLASS's padding, 0.10.2 - 0.23.x). ``nccl_nvls_off``: the container sets ``NCCL_NVLS_ENABLE`` to 0, so NCCL
    builds no NVLink SHARP buffer (:func:`kvlint.memory.calibration.nccl_nvls_disabled`). ``enable_lora`` with
    ``max_loras``/``max_lora_rank`` (None: vLLM's 1 and 16), ``fully_sharded_loras`` and ``lora_dtype`` size the
    LoRA slot stacks held with the weights (:mod:`kvlint.memory.lora`). ``kv_cache_access``: how the KV connector
    of ``--kv-transfer-config`` reaches the device KV cache (:func:`kv_cache_access`, sorted); ``enable_elastic_ep``:
    ``--enable-elastic-ep``; both can turn the extensible KV cache off (:func:`extensible_kv_cache`).
    ``all2all_backend``: ``--all2all-backend`` or the ``VLLM_ALL2ALL_BACKEND`` env (None: the release's default),
    which decides whether the MoE layers gather every data-parallel rank's batch (:func:`dp_moe_gather_bytes`).
    ``runner``/``task``/``convert``: ``--runner``, ``--task`` and ``--convert`` as given, which decide whether vLLM
    runs a pooling model (:func:`kvlint.memory.pooling.vllm_pooling`). ``prefill_context_parallel_size``,
    ``decode_context_parallel_size``, ``enable_dbo``, ``ubatch_size`` (1, 1, False, 1 when not given) and
    ``mamba_cache_mode`` (None: not given) decide with the model whether the V2 model runner runs the start-up and
    whether 0.34.0 refuses dual batch overlap (:class:`kvlint.memory.vllm_runner.RunnerFeatures`), as do
    ``distributed_executor_backend``, ``enable_return_routed_experts``, ``logits_processors`` (given),
    ``enable_prompt_embeds``, ``logprobs_mode``, ``kv_sharing_fast_prefill`` and ``ec_transfer``
    (``--ec-transfer-config`` given).
    ``pooler_config``: ``--pooler-config`` (or the older ``--override-pooler-config``) as JSON text, whose pooling
    type decides a pooling model's chunked prefill (:func:`kvlint.memory.pooling.vllm_pooling_chunked_prefill`).
    ``flashinfer_moe_fp16``/``flashinfer_moe_backend_env`` (``VLLM_USE_FLASHINFER_MOE_FP16``,
    ``VLLM_FLASHINFER_MOE_BACKEND``), ``moe_backend`` (``--moe-backend``, lower case, ``-`` as ``_``) and
    ``rocm_aiter`` (AITER's fused MoE on: ``VLLM_ROCM_USE_AITER`` and ``VLLM_ROCM_USE_AITER_MOE``,
    :func:`rocm_aiter_moe_enabled`) decide which unquantized MoE experts run
    (:func:`unquantized_moe_takes_triton`); ``fp8_moe_env_steers``: ``VLLM_USE_FLASHINFER_MOE_FP8`` or the DeepGEMM
    switches choose FP8 MoE experts other than Triton (:func:`fp8_moe_env_steers_from_triton`); ``allreduce_fusion_off``: ``-O``/``--optimization-level`` or
    ``--compilation-config`` turn the all-reduce + RMSNorm fusion off (:func:`allreduce_fusion_switched_off`).
    """

    version: str = "0.34.0"
    version_assumed: bool = False
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    data_parallel_size: int = 1
    enable_expert_parallel: bool = False
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_dtype: str = "auto"
    dtype: str = "auto"
    quantization: str | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    enable_chunked_prefill: bool | None = None
    enforce_eager: bool = False
    block_size: int | None = None
    cpu_offload_gb: float = 0.0
    kv_cache_memory_bytes: int | None = None
    num_gpu_blocks_override: int | None = None
    enable_extensible_kv_cache: bool | None = None
    disable_hybrid_kv_cache_manager: bool | None = None
    disable_sliding_window: bool = False
    performance_mode: str | None = None
    cudagraph_user: cal.CudagraphUser = field(default_factory=cal.CudagraphUser)
    allow_long_max_model_len: bool = False
    estimate_cudagraphs: bool | None = None
    use_v1: bool | None = None
    attention_backend: str | None = None
    attention_backend_env: str | None = None
    mla_disabled: bool = False
    flashinfer_moe_fp16: bool = False
    flashinfer_moe_backend_env: str | None = None
    moe_backend: str | None = None
    rocm_aiter: bool = False
    fp8_moe_env_steers: bool = False
    allreduce_fusion_off: bool = False
    speculative_model: ModelSpec | None = None
    num_speculative_tokens: int = 0
    speculative_model_id: str | None = None
    speculative_method: str | None = None
    pp_layer_partition: tuple[int, ...] | None = None
    pp_layer_partition_env: str | None = None
    hf_overrides: dict[str, Any] = field(default_factory=dict)
    limit_mm_per_prompt: dict[str, int] = field(default_factory=dict)
    mm_processor_kwargs: dict[str, Any] = field(default_factory=dict)
    skip_mm_profiling: bool = False
    mm_encoder_tp_mode: str | None = None
    flashinfer_sampler: bool | None = None
    v2_model_runner: bool | None = None
    v2_model_runner_env: str | None = None
    mxfp4_backend: str | None = None
    mxfp4_use_marlin: bool | None = None
    flashinfer_mxfp4_bf16: bool | None = None
    flashinfer_mxfp4_mxfp8: bool | None = None
    flashinfer_mxfp4_mxfp8_cutlass: bool | None = None
    nccl_nvls_off: bool = False
    kv_connector: str | None = None
    kv_cache_access: tuple[str, ...] = ()
    enable_elastic_ep: bool = False
    enable_lora: bool = False
    max_loras: int | None = None
    max_lora_rank: int | None = None
    fully_sharded_loras: bool = False
    lora_dtype: str | None = None
    all2all_backend: str | None = None
    runner: str | None = None
    task: str | None = None
    convert: str | None = None
    prefill_context_parallel_size: int = 1
    decode_context_parallel_size: int = 1
    enable_dbo: bool = False
    ubatch_size: int = 1
    mamba_cache_mode: str | None = None
    pooler_config: str | None = None
    distributed_executor_backend: str | None = None
    enable_return_routed_experts: bool = False
    logits_processors: bool = False
    enable_prompt_embeds: bool = False
    logprobs_mode: str | None = None
    kv_sharing_fast_prefill: bool = False
    ec_transfer: bool = False

    def changed(self, **changes: Any) -> VllmSettings:
        """``dataclasses.replace(self, **changes)``: the same settings with some fields changed (a remedy search
        re-plans with one field changed many times; :func:`kvlint.fastinit.replaced` copies the fields instead
        of running the generated ``__init__`` over all of them, and nothing here is computed at construction).
        Unknown field names raise ``TypeError`` as :func:`dataclasses.replace` does."""
        return replaced(self, **changes)


_DEFAULT_SETTINGS = VllmSettings()


def _kv_connector(value: Any) -> str | None:
    """The ``kv_connector`` named by ``--kv-transfer-config`` (a JSON object, parsed or as text), ``"?"`` when
    the flag is set but names none kvlint can read, None when it is not set."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return "?"
    name = value.get("kv_connector") if isinstance(value, dict) else None
    return str(name) if name else "?"


#: ``KVConnectorBase_V1.kv_cache_access`` of vLLM 0.34.0's registered connectors that override it
#: (``vllm@0.34.0:vllm/distributed/kv_transfer/kv_connector/v1/``: ``mooncake/mooncake_connector.py``,
#: ``mooncake/store/connector.py``, ``moriio/moriio_connector.py``, ``umbp/connector.py`` register the cache with
#: an RDMA engine; ``lmcache_mp_connector.py`` shares it through legacy CUDA IPC, and
#: ``factory.py::KVConnectorFactory.kv_cache_access`` says so too for an lmcache package's connector that does not
#: override it). NIXL (``nixl/connector.py::NixlBaseConnector.kv_cache_access``) is read in :func:`kv_cache_access`;
#: the others keep the base's in-process access.
_CONNECTOR_ACCESS = {
    "MooncakeConnector": frozenset({"registers"}),
    "MooncakeStoreConnector": frozenset({"registers"}),
    "MoRIIOConnector": frozenset({"registers"}),
    "UMBPStoreConnector": frozenset({"registers"}),
    "LMCacheMPConnector": frozenset({"legacy_ipc"}),
}


def kv_cache_access(value: Any) -> frozenset[str]:
    """How the KV connector(s) of ``--kv-transfer-config`` (a JSON object, parsed or as text) reach the device KV
    cache, as the names of vLLM 0.34.0's ``KVCacheAccess`` flags that matter to the extensible KV cache:
    ``registers`` (UCX/RDMA registration), ``exports_fabric`` (peers on the host map it through FABRIC handles),
    ``legacy_ipc`` (legacy CUDA IPC), plus ``custom_mem_pool`` when a connector's ``kv_connector_extra_config``
    asks for one. Restates ``vllm@0.34.0:vllm/config/kv_transfer.py::KVTransferConfig.kv_cache_access``,
    ``::uses_custom_mem_pool`` and ``multi_connector.py::MultiConnector.kv_cache_access`` (the union of the
    children's). NIXL: ``registers`` and ``exports_fabric``, nothing with ``kv_buffer_device`` ``cpu``
    (``nixl/connector.py::NixlBaseConnector.kv_cache_access``). **[assumed]** a connector loaded from
    ``kv_connector_module_path`` or not listed accesses the cache in process. Empty when unset or unreadable."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return frozenset()
    if not isinstance(value, dict):
        return frozenset()
    extra = value.get("kv_connector_extra_config")
    extra = extra if isinstance(extra, dict) else {}
    out: set[str] = set()
    if extra.get("custom_mem_pool"):
        out.add("custom_mem_pool")
    name = value.get("kv_connector")
    if name == "MultiConnector":
        children = extra.get("connectors")
        for child in children if isinstance(children, list) else []:
            out |= kv_cache_access(child)
        return frozenset(out)
    if value.get("kv_connector_module_path"):
        return frozenset(out)
    if isinstance(name, str) and name.startswith("Nixl") and name.endswith("Connector"):
        if str(value.get("kv_buffer_device") or "cuda") != "cpu":
            out |= {"registers", "exports_fabric"}
    elif isinstance(name, str):
        out |= _CONNECTOR_ACCESS.get(name, frozenset())
    return frozenset(out)


def settings_from_config(cfg: ServingConfig) -> VllmSettings:
    """:class:`VllmSettings` from a parsed container (``cfg.flags`` canonical dest names, ``cfg.env``, ``cfg.version``).

    Unreadable values fall back to defaults (the engine-config stage reports them as KV206). Never raises.
    """
    return settings_from_flags(cfg.flags, cfg.env, cfg.version)


#: The releases whose ``--enable-multimodal-encoder-data-parallel`` runs the vision tower in data mode: 0.10.2 -
#: 0.12.x's ``EngineArgs.create_model_config`` turns the deprecated flag into ``mm_encoder_tp_mode = "data"`` (read in
#: the 0.10.2, 0.11.0 and 0.12.0 wheels, "deprecated and will be removed in v0.13"); in 0.9.2 - 0.10.1, before
#: ``--mm-encoder-tp-mode``, Llama 4's and Step3-VL's modules read the flag themselves
#: (``parallel_config.enable_multimodal_encoder_data_parallel``; which classes honour it, by release:
#: :data:`kvlint.memory.multimodal.ENCODER_TP_DATA_FROM`)
MM_ENCODER_DP_FLAG_ALIAS: tuple[Version, Version] = ((0, 9, 2), (0, 13, 0))


def mm_encoder_tp_mode_set(mode: Any, deprecated_flag: bool, version: Version) -> str | None:
    """The ``mm_encoder_tp_mode`` vLLM release ``version`` runs with: ``--mm-encoder-tp-mode``'s value (None when
    not given), or ``"data"`` where the deprecated ``--enable-multimodal-encoder-data-parallel`` is given in
    :data:`MM_ENCODER_DP_FLAG_ALIAS`, which sets it whatever ``--mm-encoder-tp-mode`` says."""
    lo, hi = MM_ENCODER_DP_FLAG_ALIAS
    if deprecated_flag and lo <= tuple(version) < hi:
        return "data"
    return str(mode) if mode else None


def settings_from_flags(
    flags: Mapping[str, Value | None], env: Mapping[str, str], version: str | None
) -> VllmSettings:
    """:class:`VllmSettings` from vLLM's parsed settings (``flags``, canonical dest names), the container's
    ``env`` and the release ``version``: the one mapping of settings to fields, for a parsed container
    (:func:`settings_from_config`) and for the parser's own checks before the container is put together
    (:func:`kvlint.engines.vllm._check_extensible`). Unreadable values fall back to defaults. Never raises."""
    ver, assumed = resolve_version(version)
    # the parsed values by dest name, taken once (a container sets a few flags; 33 are asked for): ``get`` is
    # then ``ServingConfig.get`` as a dict look-up in C, not two Python calls per setting
    get = {name: v.value for name, v in flags.items() if v is not None}.get

    mml_raw = get("max_model_len")
    mml = -1 if isinstance(mml_raw, str) and mml_raw.strip().lower() == "auto" else as_int(mml_raw)
    hfo = get("hf_overrides") or {}
    if isinstance(hfo, str):
        try:
            hfo = json.loads(hfo)
        except (ValueError, RecursionError):
            hfo = {}
    spec_cfg = get("speculative_config")
    if isinstance(spec_cfg, str):
        try:
            spec_cfg = json.loads(spec_cfg)
        except (ValueError, RecursionError):
            spec_cfg = None
    # --spec-method / --spec-model / --spec-tokens (0.24.0 on) set their key of the config, as
    # EngineArgs.create_speculative_config does (kvlint.engines.options.SPEC_SHORTHANDS; a clash is a KV206 in
    # kvlint.engines.vllm)
    for short, key in SPEC_SHORTHANDS:
        given = get(short)
        if (
            given is not None
            and (spec_cfg is None or isinstance(spec_cfg, dict))
            and key not in (spec_cfg or {})
        ):
            spec_cfg = {**(spec_cfg or {}), key: given}
    # pydantic's lax int, as SpeculativeConfig reads it (kvlint.engines.vllm._speculative_count)
    nst = lax_int((spec_cfg or {}).get("num_speculative_tokens")) if isinstance(spec_cfg, dict) else None
    spec_model = spec_cfg.get("model") if isinstance(spec_cfg, dict) else None
    spec_method = spec_cfg.get("method") if isinstance(spec_cfg, dict) else None
    if spec_model is None and get("speculative_model"):
        spec_model = get("speculative_model")
        nst = nst or as_int(get("num_speculative_tokens"))
    part = env.get(PP_PARTITION_ENV)
    pp_part: tuple[int, ...] | None = None
    if part:
        try:
            pp_part = tuple(int(x) for x in part.split(","))
        except ValueError:
            pp_part = None
    # every field given: the defaults' copy with them set (VllmSettings.changed), not the frozen __init__ over 41
    return _DEFAULT_SETTINGS.changed(
        version=fmt_version(ver),
        version_assumed=assumed,
        tensor_parallel_size=as_int(get("tensor_parallel_size")) or 1,
        pipeline_parallel_size=as_int(get("pipeline_parallel_size")) or 1,
        data_parallel_size=as_int(get("data_parallel_size")) or 1,
        enable_expert_parallel=bool(get("enable_expert_parallel", False)),
        max_model_len=mml,
        gpu_memory_utilization=as_float(get("gpu_memory_utilization")),
        kv_cache_dtype=str(get("kv_cache_dtype") or "auto"),
        dtype=str(get("dtype") or "auto"),
        quantization=get("quantization"),
        max_num_seqs=as_int(get("max_num_seqs")),
        max_num_batched_tokens=as_int(get("max_num_batched_tokens")),
        enable_chunked_prefill=get("enable_chunked_prefill"),
        enforce_eager=bool(get("enforce_eager", False)),
        block_size=as_int(get("block_size")),
        cpu_offload_gb=as_float(get("cpu_offload_gb")) or 0.0,
        kv_cache_memory_bytes=as_int(get("kv_cache_memory_bytes")),
        num_gpu_blocks_override=as_int(get("num_gpu_blocks_override")),
        enable_extensible_kv_cache=get("enable_extensible_kv_cache"),
        disable_hybrid_kv_cache_manager=get("disable_hybrid_kv_cache_manager"),
        disable_sliding_window=bool(get("disable_sliding_window", False)),
        performance_mode=get("performance_mode"),
        cudagraph_user=cudagraph_user(
            _json_dict(get("compilation_config")),
            get("cudagraph_capture_sizes"),
            get("max_cudagraph_capture_size"),
            get("cuda_graph_sizes"),
            get("optimization_level"),
            get("performance_mode"),
            ver,
        ),
        allow_long_max_model_len=bool(truthy(env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN"))),
        estimate_cudagraphs=truthy(env.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")),
        use_v1=truthy(env.get("VLLM_USE_V1")),
        attention_backend=get("attention_backend"),
        attention_backend_env=env.get("VLLM_ATTENTION_BACKEND"),
        mla_disabled=bool(truthy(env.get("VLLM_MLA_DISABLE"))),
        flashinfer_moe_fp16=bool(truthy(env.get("VLLM_USE_FLASHINFER_MOE_FP16"))),
        flashinfer_moe_backend_env=env.get("VLLM_FLASHINFER_MOE_BACKEND"),
        mxfp4_use_marlin=truthy(env.get("VLLM_MXFP4_USE_MARLIN")),
        flashinfer_mxfp4_bf16=truthy(env.get("VLLM_USE_FLASHINFER_MOE_MXFP4_BF16")),
        flashinfer_mxfp4_mxfp8=truthy(env.get("VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8")),
        flashinfer_mxfp4_mxfp8_cutlass=truthy(env.get("VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS")),
        nccl_nvls_off=cal.nccl_nvls_disabled(env.get("NCCL_NVLS_ENABLE")),
        moe_backend=str(get("moe_backend")).strip().lower().replace("-", "_") if get("moe_backend") else None,
        rocm_aiter=rocm_aiter_moe_enabled(env.get("VLLM_ROCM_USE_AITER"), env.get("VLLM_ROCM_USE_AITER_MOE")),
        fp8_moe_env_steers=fp8_moe_env_steers_from_triton(
            env.get("VLLM_USE_FLASHINFER_MOE_FP8"),
            env.get("VLLM_USE_DEEP_GEMM"),
            env.get("VLLM_MOE_USE_DEEP_GEMM"),
        ),
        allreduce_fusion_off=allreduce_fusion_switched_off(
            get("optimization_level"), _json_dict(get("compilation_config"))
        ),
        num_speculative_tokens=max(0, nst or 0),
        speculative_model_id=str(spec_model) if spec_model else None,
        speculative_method=str(spec_method) if spec_method else None,
        pp_layer_partition=pp_part,
        pp_layer_partition_env=part,
        hf_overrides=hfo if isinstance(hfo, dict) else {},
        limit_mm_per_prompt=(
            language_model_only_limits(parse_mm_limits(get("limit_mm_per_prompt")))
            if bool(get("language_model_only", False))
            else parse_mm_limits(get("limit_mm_per_prompt"))
        ),
        mm_processor_kwargs=_json_dict(get("mm_processor_kwargs")),
        skip_mm_profiling=bool(get("skip_mm_profiling", False)),
        mm_encoder_tp_mode=mm_encoder_tp_mode_set(
            get("mm_encoder_tp_mode"), bool(get("enable_multimodal_encoder_data_parallel", False)), ver
        ),
        flashinfer_sampler=truthy(env.get("VLLM_USE_FLASHINFER_SAMPLER")),
        v2_model_runner=truthy(env.get("VLLM_USE_V2_MODEL_RUNNER")),
        v2_model_runner_env=env.get("VLLM_USE_V2_MODEL_RUNNER"),
        kv_connector=_kv_connector(get("kv_transfer_config")),
        kv_cache_access=tuple(sorted(kv_cache_access(get("kv_transfer_config")))),
        enable_elastic_ep=bool(get("enable_elastic_ep", False)),
        enable_lora=bool(get("enable_lora", False)),
        max_loras=as_int(get("max_loras")),
        max_lora_rank=as_int(get("max_lora_rank")),
        fully_sharded_loras=bool(get("fully_sharded_loras", False)),
        lora_dtype=str(get("lora_dtype")) if get("lora_dtype") else None,
        all2all_backend=str(get("all2all_backend") or env.get("VLLM_ALL2ALL_BACKEND") or "").strip().lower()
        or None,
        runner=str(get("runner")) if get("runner") else None,
        task=str(get("task")) if get("task") else None,
        convert=str(get("convert")) if get("convert") else None,
        prefill_context_parallel_size=as_int(get("prefill_context_parallel_size")) or 1,
        decode_context_parallel_size=as_int(get("decode_context_parallel_size")) or 1,
        enable_dbo=bool(get("enable_dbo", False)),
        ubatch_size=as_int(get("ubatch_size")) or 1,
        mamba_cache_mode=str(get("mamba_cache_mode")).strip().lower() if get("mamba_cache_mode") else None,
        pooler_config=_json_text(get("pooler_config") or get("override_pooler_config")),
        distributed_executor_backend=str(get("distributed_executor_backend") or "").strip() or None,
        enable_return_routed_experts=bool(get("enable_return_routed_experts", False)),
        logits_processors=bool(get("logits_processors")),
        enable_prompt_embeds=bool(get("enable_prompt_embeds", False)),
        logprobs_mode=str(get("logprobs_mode") or "").strip() or None,
        kv_sharing_fast_prefill=bool(get("kv_sharing_fast_prefill", False)),
        ec_transfer=get("ec_transfer_config") not in (None, "", "None"),
    )


#: the largest capture size or list length kvlint takes from a command line (vLLM's graphs are captured one by one;
#: a list past it is not read, the default then prices the graphs)
_MAX_CAPTURE_ENTRIES = 1 << 16


def _size_list(value: Any) -> tuple[int, ...] | None:
    """A capture-size list as a flag or JSON gives it (``[1, 2, 4]``, ``"1 2 4"``, ``["8", "16"]``, a single
    number), deduplicated and sorted as ``VllmConfig._set_cudagraph_sizes`` does; None when not readable, empty, or
    longer than :data:`_MAX_CAPTURE_ENTRIES` (the length is checked before any entry is read)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip().strip("[]")
        items: list[Any] = [t for t in text.replace(",", " ").split() if t]
    elif isinstance(value, (list, tuple)):
        items = list(value) if len(value) <= _MAX_CAPTURE_ENTRIES else []
        if len(items) == 1 and isinstance(items[0], str) and (" " in items[0] or "," in items[0]):
            return _size_list(items[0])
    else:
        items = [value]
    if not items or len(items) > _MAX_CAPTURE_ENTRIES:
        return None
    out = {as_int(x) for x in items}
    if None in out or any(x is None or x < 1 for x in out):
        return None
    return tuple(sorted(x for x in out if x is not None))


def cudagraph_user(
    compilation_config: Mapping[str, Any],
    capture_sizes: Any,
    max_capture_size: Any,
    cuda_graph_sizes: Any,
    optimization_level: Any,
    performance_mode: Any,
    v: Version,
) -> cal.CudagraphUser:
    """What the command line sets of the CUDA-graph capture (:class:`kvlint.memory.calibration.CudagraphUser`).

    ``cudagraph_mode`` from ``--compilation-config`` (``-cc``/``-O`` JSON): a :data:`~kvlint.memory.calibration.
    CUDAGRAPH_MODES` name, any case; else from the level: ``-O0`` (``--optimization-level 0``) NONE and ``-O1``
    PIECEWISE (``vllm@0.19.0:vllm/config/vllm.py::OPTIMIZATION_LEVEL_00``/``_01``), and a compilation
    ``level``/``mode`` other than 3 (VLLM_COMPILE) leaves no mode that needs piecewise compilation (``vllm@0.11.0:
    vllm/config/__init__.py::VllmConfig.__post_init__``: "level != PIECEWISE" -> NONE; ``vllm@0.19.0``: "Cudagraph
    mode ... is not compatible with compilation mode ... Overriding to NONE"). Capture sizes: ``cudagraph_capture_sizes``
    (the JSON key, or ``--cudagraph-capture-sizes``), ``max_cudagraph_capture_size`` (key or flag, 0.11.1 on), and
    ``--cuda-graph-sizes``: before 0.11.1 the scheduler's ``cuda_graph_sizes`` (one value N: ``[1, 2, 4]`` and
    multiples of 8 up to N; several: that list; ``vllm@0.11.0:vllm/config/__init__.py::
    VllmConfig._set_cudagraph_sizes``), from 0.11.1 the capture list itself (``vllm@0.11.1:vllm/engine/
    arg_utils.py``: ``compilation_config.cudagraph_capture_sizes = self.cuda_graph_sizes``).
    ``--performance-mode interactivity`` (``vllm@0.19.0``) starts the default list with every size from 1 to 32.
    Unreadable values are left to the default (the flag parser reports them)."""
    cc = compilation_config or {}
    mode: str | None = None
    raw_mode = cc.get("cudagraph_mode")
    if isinstance(raw_mode, str) and raw_mode.strip().upper() in cal.CUDAGRAPH_MODES:
        mode = raw_mode.strip().upper()
    elif cc.get("use_cudagraph") is False:
        mode = "NONE"  # 0.10 - 0.11's deprecated switch
    level = as_int(optimization_level)
    if mode is None and level in (0, 1):
        mode = "NONE" if level == 0 else "PIECEWISE"
    comp = cc.get("mode", cc.get("level"))
    comp_level = as_int(comp) if not isinstance(comp, str) or comp.strip().isdigit() else None
    if isinstance(comp, str) and not comp.strip().isdigit():
        comp_level = 3 if comp.strip().upper() == "VLLM_COMPILE" else 0
    if comp_level is not None and comp_level != 3 and mode in (None, "PIECEWISE", "FULL_AND_PIECEWISE"):
        mode = "NONE"
    sizes = _size_list(cc.get("cudagraph_capture_sizes"))
    if sizes is None:
        sizes = _size_list(capture_sizes)
    top = as_int(cc.get("max_cudagraph_capture_size"))
    if top is None:
        top = as_int(max_capture_size)
    stepped_to = None
    filter_sizes = v >= (0, 11, 1)
    graph_sizes = _size_list(cuda_graph_sizes) if sizes is None else None
    if graph_sizes is not None:
        if v >= (0, 11, 1):
            sizes = graph_sizes
        elif len(graph_sizes) == 1:
            stepped_to = graph_sizes[0]
        else:
            sizes, filter_sizes = graph_sizes, True
    return cal.CudagraphUser(
        mode=mode,
        sizes=sizes,
        max_size=top if top is not None and 1 <= top and sizes is None and stepped_to is None else None,
        stepped_to=stepped_to,
        interactivity=str(performance_mode or "").strip().lower() == "interactivity",
        filter_sizes=filter_sizes,
    )


def _json_text(value: Any) -> str | None:
    """A JSON flag value (parsed or as text) as text, None when not given."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return None


def _json_dict(value: Any) -> dict[str, Any]:
    """A JSON-object flag value (``--mm-processor-kwargs '{"max_pixels": 1003520}'``) as a dict, else {}."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            obj = json.loads(value)
        except (ValueError, RecursionError):
            return {}
        return obj if isinstance(obj, dict) else {}
    return {}


# ------------------------------------------------------------------------------------------------
# KV-cache groups


@dataclass(frozen=True)
class KVGroup:
    """One KV-cache group of vLLM's allocator on one rank.

    ``kind``: full | sliding | chunked | mamba; ``layers`` layers in the group; ``block_size`` tokens per block
    for these layers; ``page_bytes`` bytes of one block of one layer; ``window`` for sliding/chunked.
    ``stride_bytes``: what one block of this group costs when vLLM packs the groups on one block-id axis
    (DeepSeek V4, :mod:`kvlint.memory.deepseek_v4`); 0 = ``page_bytes x layers``.
    """

    kind: str
    layers: int
    block_size: int
    page_bytes: int
    window: int | None = None
    stride_bytes: int = 0

    def blocks_per_request(self, max_model_len: int, in_flight: int, spec_blocks: int = 0) -> int:
        """Blocks one request of ``max_model_len`` tokens holds in this group (``max_memory_usage_bytes`` / page,
        ``vllm@0.33.0:vllm/v1/kv_cache_interface.py``): full cdiv(L, bs); sliding cdiv(min(W-1+in_flight, L), bs)+1;
        chunked cdiv(min(chunk+in_flight, L), bs); mamba 1 (+ speculative blocks)."""
        if self.kind == "mamba":
            return 1 + spec_blocks
        if self.kind == "sliding" and self.window:
            return cdiv(min(self.window - 1 + in_flight, max_model_len), self.block_size) + 1
        if self.kind == "chunked" and self.window:
            return cdiv(min(self.window + in_flight, max_model_len), self.block_size)
        return cdiv(max_model_len, self.block_size)


def mamba_state_bytes_per_rank(state_bytes: int, tp: int) -> int:
    """One Mamba/linear-attention layer's per-request state on one tensor-parallel rank (bytes).

    vLLM shards the state tensors with the heads: every shape of
    ``vllm@0.33.0:vllm/model_executor/layers/mamba/mamba_utils.py::MambaStateShapeCalculator`` divides the conv
    channels and the SSM/recurrent heads by ``tp_world_size`` (``mamba1_state_shape``, ``mamba2_state_shape``,
    ``gated_delta_net_state_shape``, ``linear_attention_state_shape``, ``short_conv_state_shape``), so the page of a
    state layer is 1/TP of the whole state, like the attention bytes per token. (Mamba-2 with fewer groups than
    ranks replicates groups, ``extra_groups_for_head_shards``: a few KiB more, not modelled.) Example, Qwen3-Next at
    TP 2: attention 1,024 B/token per rank and ~536 KiB of GDN state per rank -> attention block 544 tokens, as vLLM
    prints ("Setting attention block size to 544 tokens"), not 1,072.
    """
    return state_bytes // max(1, tp)


def build_groups(
    layers: list[LayerSpec], tp: int, kv_bytes: int, kv_cache_dtype: str, block_size: int, hybrid: bool
) -> tuple[list[KVGroup], int, int, list[str]]:
    """vLLM V1 KV-cache groups of one rank's layers.

    Returns ``(groups, bytes_per_block, block_size, notes)`` where ``bytes_per_block`` = bytes one block id costs
    across all groups' tensors (num_blocks = floor(available / bytes_per_block)). Uniform spec -> one group; all
    full-type with different pages -> one UniformType group (Σ pages); otherwise bucket by spec, group size =
    smallest bucket (largest if max < 1.5 x min), pages unified to the largest; Mamba hybrids enlarge the attention
    block to cover the Mamba page (align 16). With ``hybrid`` False sliding/chunked layers count as full.
    Sources: ``vllm@0.33.0:vllm/v1/core/kv_cache_planning.py::get_kv_cache_groups``,
    ``::_get_kv_cache_groups_uniform_page_size``, ``::unify_kv_cache_spec_page_size``;
    ``vllm/platforms/interface.py::_align_hybrid_block_size`` (§1.5).
    """
    return build_groups_counted(layer_counts(layers), tp, kv_bytes, kv_cache_dtype, block_size, hybrid)


def build_groups_counted(
    counts: LayerCounts, tp: int, kv_bytes: int, kv_cache_dtype: str, block_size: int, hybrid: bool
) -> tuple[list[KVGroup], int, int, list[str]]:
    """:func:`build_groups` on the distinct layer specs of one rank with their counts
    (:func:`kvlint.memory.kv.layer_counts`): the same groups, bytes per block, block size and notes, computed
    once per distinct spec instead of once per layer (every quantity is a count, a sum, a max or a set of the
    per-layer specs, so the layers' order does not enter). Sources as :func:`build_groups`. Memoised by value
    (:func:`kvlint.memory.memo.by_value`; the GPUs of a fleet mostly share the groups); the lists are new."""
    groups, bytes_per_block, block_size, notes = _build_groups_counted(
        counts, tp, kv_bytes, kv_cache_dtype, block_size, hybrid
    )
    return list(groups), bytes_per_block, block_size, list(notes)


@by_value
def _build_groups_counted(
    counts: LayerCounts, tp: int, kv_bytes: int, kv_cache_dtype: str, block_size: int, hybrid: bool
) -> tuple[list[KVGroup], int, int, list[str]]:
    """:func:`build_groups_counted` itself (its lists are kept by the memo, never handed out)."""
    notes: list[str] = []
    if is_deepseek_v4(counts):
        v4, stride, _ = v4_pool(counts, block_size)
        notes.append(
            f"DeepSeek V4 KV caches packed in {len(v4)} groups, {stride:,} B per block id "
            "(sliding window, compressed latent, indexer and compressor-state caches)"
        )
        return [KVGroup(k, n, bs, page, w, stride) for k, n, bs, page, w in v4], stride, block_size, notes
    # (kind, window, bytes/token, state bytes) -> number of layers
    specs: dict[tuple[str, int | None, int, int], int] = {}
    for lay, count in counts:
        if lay.kind == "none" or lay.kv_shared:  # a KV-sharing layer has no KVCacheSpec (get_kv_cache_spec)
            continue
        if lay.kind == "mamba":
            key: tuple[str, int | None, int, int] = (
                "mamba",
                None,
                0,
                mamba_state_bytes_per_rank(lay.state_bytes, tp),
            )
        else:
            kind = lay.kind if lay.kind in ("sliding", "chunked") and lay.window else "full"
            if not hybrid and kind != "full":
                kind = "full"
            key = (
                kind,
                lay.window if kind != "full" else None,
                layer_bytes_per_token(lay, tp, kv_bytes, kv_cache_dtype),
                0,
            )
            if lay.state_bytes:
                # a parallel-hybrid layer (Falcon-H1): its Mamba mixer registers a MambaSpec beside the attention's
                mkey: tuple[str, int | None, int, int] = (
                    "mamba",
                    None,
                    0,
                    mamba_state_bytes_per_rank(lay.state_bytes, tp),
                )
                specs[mkey] = specs.get(mkey, 0) + count
        specs[key] = specs.get(key, 0) + count
    if not specs:
        return [], 0, block_size, notes
    n_layers = sum(specs.values())
    attn = [s for s in specs if s[0] != "mamba"]
    mamba = [s for s in specs if s[0] == "mamba"]
    if mamba and attn:
        tok = max(s[2] for s in attn)
        mpage = max(s[3] for s in mamba)
        align = 16
        new_bs = max(block_size, align * cdiv(mpage, align * tok))
        if new_bs != block_size:
            notes.append(
                f"attention block size raised to {new_bs} tokens so its page covers the Mamba state page"
            )
        block_size = new_bs
    keys = sorted(specs, key=str)
    if len(keys) == 1:
        k = keys[0]
        page = k[3] if k[0] == "mamba" else k[2] * block_size
        return [KVGroup(k[0], n_layers, block_size, page, k[1])], n_layers * page, block_size, notes
    if not mamba and all(k[0] == "full" for k in keys):
        total_tok = sum(s[2] * c for s, c in specs.items())
        avg = max(1, total_tok // n_layers)
        notes.append("layers differ in KV size: one UniformTypeKVCacheSpecs group")
        return (
            [KVGroup("full", n_layers, block_size, avg * block_size)],
            total_tok * block_size,
            block_size,
            notes,
        )
    buckets: dict[tuple[str, int | None], int] = {}
    for s, c in specs.items():
        buckets[(s[0], s[1])] = buckets.get((s[0], s[1]), 0) + c
    page = max(max((s[2] * block_size for s in attn), default=0), max((s[3] for s in mamba), default=0))
    cmin, cmax = min(buckets.values()), max(buckets.values())
    gsize = cmax if cmax < 1.5 * cmin else cmin
    groups: list[KVGroup] = []
    for (kind, window), count in sorted(buckets.items(), key=str):
        tok = max((s[2] for s in attn if (s[0], s[1]) == (kind, window)), default=0)
        bs = block_size if kind == "mamba" or tok == 0 else max(block_size, page // tok)
        for g in range(cdiv(count, gsize)):
            groups.append(KVGroup(kind, min(gsize, count - g * gsize), bs, page, window))
    padded = sum(cdiv(c, gsize) * gsize - c for c in buckets.values())
    if padded:
        notes.append(f"{padded} padding layer(s) added to equalise KV-cache groups")
    return groups, gsize * page, block_size, notes


# ------------------------------------------------------------------------------------------------
# plan


@direct_init
@dataclass(frozen=True)
class VllmPlanDetail:
    """The plan plus the fit check vLLM performs after profiling.

    ``fits``: one max-model-len request fits (no E1/E2). ``needed_bytes``/``fit_available_bytes``: the two numbers of
    the E1 message (per GPU). ``estimated_max_model_len``: vLLM's own estimate (0 = nothing fits). ``error``: the
    start-up error text vLLM would print, in the wording of that version, or None. ``groups``: KV-cache groups of
    the limiting rank. ``per_request_blocks``: blocks one max-model-len request holds across all groups.
    ``length_refused``: why vLLM refuses the max-model-len (above the derived length, KV201), else None;
    ``v0_fallback``: why vLLM 0.8 - 0.10 runs its V0 engine for this configuration, else None (both from
    :class:`StartupConfig`, for :func:`kvlint.capacity.context.cell_verdict`). ``v2_runner``: the start-up runs the
    V2 model runner (:attr:`StartupConfig.v2_runner`, §1.2.6), whose persistent input buffers differ (KV209).
    ``speculative_method``: ``--speculative-config``'s ``method``, which decides where the V2 runner keeps its token
    table (KV209).
    """

    plan: MemoryPlan
    fits: bool
    needed_bytes: int
    fit_available_bytes: int
    estimated_max_model_len: int
    error: str | None
    groups: tuple[KVGroup, ...]
    stage_layers: tuple[int, ...]
    per_request_blocks: int = 0
    mamba_blocks: int = 0
    mamba_blocks_low: int = 0
    mamba_blocks_high: int = 0
    length_refused: str | None = None
    v0_fallback: str | None = None
    v2_runner: bool = False
    speculative_method: str | None = None
    override_blocks: int = 0

    @property
    def override_over_device(self) -> bool:
        """Whether ``--num-gpu-blocks-override`` (``override_blocks``, 0 without one) sizes a KV cache that does not
        fit the device beside the rest (:func:`override_over_device`)."""
        return override_over_device(self.plan, self.override_blocks) is not None

    @property
    def mamba_refusal(self) -> str | None:
        """vLLM's "max_num_seqs (N) exceeds available Mamba cache blocks (M)" start-up refusal in its own words, when
        this plan's ``max_num_seqs`` exceeds the predicted block count ``mamba_blocks``, else None. ``mamba_blocks``
        is 0 when the release, the graphs or the model make no such check (:func:`mamba_block_count`)."""
        n, m = self.plan.max_num_seqs, self.mamba_blocks
        if not (self.mamba_blocks_high or m) or n <= m:
            return None
        return (
            f"max_num_seqs ({n}) exceeds available Mamba cache blocks ({m}). Each decode sequence requires one Mamba "
            "cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most "
            f"{m} or increase gpu_memory_utilization."
        )

    @property
    def verdict(self) -> str:
        """``"fail"`` when even the optimistic KV bound (``plan.kv_cache_bytes_high``) cannot hold one
        max-model-len request (E1) or leaves no block (E2), or when ``--num-gpu-blocks-override`` sizes a KV cache
        the device cannot hold beside the rest (:attr:`override_over_device`); with an override that fits, ``"ok"``
        or ``"fail"`` as one max-model-len request fits its blocks (the KV cache is fixed: no band); ``"risky"`` when the band straddles the limit (the
        pessimistic bound fails, the optimistic one fits); ``"ok"`` when the pessimistic bound fits. The limit is
        the same fit check vLLM runs (needed bytes vs available minus the null block from 0.29)."""
        p = self.plan
        if self.override_over_device:
            return "fail"  # allocating the override's KV cache, or running beside it, runs out of memory
        if self.override_blocks:
            # the override fixes the KV cache (the fit check's figures are its blocks' bytes): no band to straddle,
            # and plan.kv_cache_bytes - fit_available_bytes is no null block then. V0 refuses to start when one
            # request does not fit the override's blocks (vllm@0.10.1:vllm/worker/worker.py::
            # raise_if_cache_size_invalid, after LLMEngine._initialize_kv_caches applies it); V1 checks the measured
            # memory, starts, and never holds such a request (its scheduler finds no free blocks for it)
            return "ok" if self.fits else "fail"
        if p.kv_cache_bytes == p.kv_cache_bytes_low == p.kv_cache_bytes_high:
            return "ok" if self.fits else "fail"
        null = p.kv_cache_bytes - self.fit_available_bytes  # bytes_per_block from 0.29, else 0

        def fits_at(kv: int) -> bool:
            return kv > 0 and kv // max(1, p.bytes_per_block) > 0 and self.needed_bytes <= kv - null

        if not fits_at(p.kv_cache_bytes_high):
            return "fail"
        return "ok" if fits_at(p.kv_cache_bytes_low) else "risky"

    def capacity_tokens_for(self, kv_bytes: int) -> int:
        """The "GPU KV cache size: N tokens" vLLM would print for a KV pool of ``kv_bytes`` per GPU with this
        plan's groups, block size and max_model_len (same version formula as ``plan.capacity_tokens``). Used to
        check the token arithmetic against a report's own "Available KV cache memory"."""
        p = self.plan
        nb = max(0, int(kv_bytes) // max(1, p.bytes_per_block))
        v, _ = resolve_version(p.engine_version)
        if p.era == "v0" or not self.groups:
            return nb * p.block_size
        if capacity_is_concurrency_times_len(v) and p.max_model_len:
            return int(nb / max(1, self.per_request_blocks) * p.max_model_len)
        if v >= (0, 9, 0):
            return (nb // len(self.groups)) * min(g.block_size for g in self.groups)
        return nb * p.block_size


def pp_partition_refused(num_layers: int, pp: int, settings: VllmSettings) -> str | None:
    """Why vLLM refuses the container's ``VLLM_PP_LAYER_PARTITION`` for a model of ``num_layers`` decoder layers
    over ``pp`` pipeline stages, or None (not set, or a split vLLM builds).

    ``vllm/distributed/utils.py::get_pp_indices`` (read in the 0.9.2, 0.10.1, 0.10.2, 0.11.0, 0.12.0 and 0.34.0
    wheels; the variable is absent from 0.5.0's ``envs.py``) runs for every stage while the model is built, even
    with one stage, whenever the variable is set (``os.getenv``: an empty value counts): entries that are not
    integers raise ``ValueError("Invalid partition string: …")``, a count other than ``pp`` "len(partitions)=N does
    not match pp_size=P.", a sum other than the layers "sum(partitions)=S does not match num_hidden_layers=L.", and
    in 0.34.0 a negative entry "Negative layer count in partition_list_str=…" (releases without that check build
    no sensible stage from one; kvlint cannot size it either way). Each stops the start-up before the KV cache is
    sized. An entry of 0 passes those checks but builds a stage with no layer, refused as :func:`pp_exceeds_layers`
    refuses the default split's empty stages. kvlint took such a value for the default split, and sized negative or huge entries as layer counts
    (a stage of 10^21 layers). The text starts with :data:`PP_PARTITION_REFUSED` and ``=``; the plan raises it as
    a :class:`PlanError` of :attr:`~kvlint.memory.refusal.PlanRefusal.VLLM_PP_PARTITION` (KV502 reports it)."""
    raw = settings.pp_layer_partition_env
    if raw is None and settings.pp_layer_partition is not None:
        raw = ",".join(str(n) for n in settings.pp_layer_partition)
    if raw is None:
        return None
    shown_raw = repr(raw[:80] + ("…" if len(raw) > 80 else ""))
    head = f"{PP_PARTITION_REFUSED}={shown_raw}"
    try:
        # int() as get_pp_indices calls it (Python's digit limit included)
        parts = [int(x) for x in raw.split(",")]
    except ValueError:
        return (
            f"{head} is not a comma-separated list of layer counts: vLLM's get_pp_indices raises "
            "ValueError('Invalid partition string: …') while the model is built"
        )
    if len(parts) != pp:
        return (
            f"{head} has {len(parts):,} entries for {pp} pipeline stage(s): vLLM's get_pp_indices raises "
            f"ValueError('len(partitions)={len(parts)} does not match pp_size={pp}.') while the model is built"
        )
    total = sum(parts)
    if total != num_layers:
        # the sum of entries of thousands of digits has more digits than Python converts to text
        over = f"{'-' * (total < 0)}(a {len(parts)}-entry sum over 10^18)"
        shown = str(total) if abs(total) < 10**18 else over
        return (
            f"{head} sums to {shown} layers, not the model's {num_layers}: vLLM's get_pp_indices raises "
            f"ValueError('sum(partitions)={shown} does not match num_hidden_layers={num_layers}.') while the model "
            "is built"
        )
    if any(n < 0 for n in parts):
        return (
            f"{head} gives a stage a negative layer count: vLLM 0.34.0's get_pp_indices raises "
            "ValueError('Negative layer count in partition_list_str=…'), and no release builds a sensible stage "
            "from it; kvlint cannot size it"
        )
    empty = parts.count(0)
    if empty:
        # what pp_exceeds_layers says of the default split's empty stages: vLLM builds the stage, with no layer
        return (
            f"{head} gives {empty} pipeline stage(s) no layer: vLLM's get_pp_indices builds such a stage empty, and "
            "its GPUs hold no KV cache (vLLM 0.34.0's KV cache planning divides by its zero block size [read, not run])"
        )
    return None


#: First vLLM release whose ``get_pp_indices`` gives the ``layers % pp`` remainder one layer each to the stages before
#: the last, counting backwards (vllm-project/vllm#13839, merged 2025-02-26; read in the 0.8.0 wheel); 0.5.x - 0.7.3
#: give the whole remainder to the last stage (``end_layer = num_hidden_layers`` on ``pp_rank == pp_size - 1``;
#: read in the 0.5.5, 0.6.3, 0.6.6.post1 and 0.7.3 wheels)
PP_REMAINDER_BEFORE_LAST_FROM: Version = (0, 8, 0)


def pp_layer_split(
    num_layers: int, pp: int, partition: tuple[int, ...] | None = None, version: Version | None = None
) -> list[int]:
    """Layers per pipeline stage: ``layers // pp`` each, the remainder added one each to stages from the
    second-to-last backwards (from :data:`PP_REMAINDER_BEFORE_LAST_FROM`; ``version`` None: that split), all of it
    to the last stage before; or ``VLLM_PP_LAYER_PARTITION`` when it has pp entries summing to the layer count.
    Source: ``vllm/distributed/utils.py::get_pp_indices`` (§1.10)."""
    if partition and len(partition) == pp and sum(partition) == num_layers:
        return list(partition)
    parts = [num_layers // pp] * pp
    if version is not None and version < PP_REMAINDER_BEFORE_LAST_FROM:
        parts[-1] += num_layers % pp
        return parts
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return parts


def _era(
    v: Version,
    s: VllmSettings,
    cc: str | None,
    dtype: str,
    model: ModelSpec | None,
    pooling: str | None,
    features: vllm_runner.RunnerFeatures,
) -> tuple[str, str, str | None]:
    """``("v0"|"v1", why, fallback)`` per §1.1 (``fallback``: why vLLM 0.8 - 0.10 falls back from V1 to V0, without
    the source ``why`` adds, else None): ``EngineArgs._is_v1_supported_oracle`` of 0.8.5, 0.9.2, 0.10.0,
    0.10.1.1 and 0.10.2 (read in the wheels). Its compute capability < 8.0 fallback exists up to 0.10.1 and
    is gone in 0.10.2; its fp16/bf16-only dtype check exists in 0.8.5 and is gone by 0.9.2 (0.9.0 assumed);
    the kv-cache-dtype decision is :func:`kvlint.memory.fp8kv.fp8_kv_support`. AMD GPUs (no compute
    capability) are taken as passing the checks. ``pooling``: why vLLM runs a pooling model (None: a generative
    one), which falls back to V0 before 0.9.2 ("No Embedding Models so far" in the 0.8.5 oracle; 0.9.0 and 0.9.1
    assumed the same, :data:`kvlint.memory.pooling.VLLM_V1_POOLING_FROM`). ``features``: :func:`_runner_features`
    of ``s`` and ``model`` (:attr:`PlanPrelude.features`, settled once per container): required, so that no caller
    recomputes them per GPU (a fallback that did so for callers without a prelude was removed, perf48)."""
    c = parse_cc(cc)
    refused = v1_pooling_refused(v, s, pooling)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_V1_POOLING)
    refused = vllm_runner.v2_env_refused(v, s.v2_model_runner_env)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_V2_RUNNER_ENV)
    refused = vllm_runner.v2_unsupported(
        v, s.v2_model_runner_env, _spec_method(s), s.enable_elastic_ep, features
    )
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_V2_RUNNER_UNSUPPORTED)
    refused = vllm_runner.runner_unsupported(v, features)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_DBO_UNSUPPORTED)
    if v < (0, 8, 0):
        if s.use_v1 and v >= (0, 6, 6):
            return "v1", "V1 engine opted in with VLLM_USE_V1=1", None
        return "v0", f"V0 engine (default up to 0.7.x; vLLM {fmt_version(v)})", None
    if v >= (0, 11, 0):
        return "v1", "V1 engine (only engine from 0.11.0)", None
    if s.use_v1 is False:
        return "v0", "V0 engine forced by VLLM_USE_V1=0", None
    oracle = "EngineArgs._is_v1_supported_oracle"
    if c is not None and c < (8, 0) and v < (0, 10, 2):
        return _v0_fallback(f"compute capability {cc} < 8.0", oracle)
    if dtype == "float32" and v < (0, 9, 0):
        return _v0_fallback("dtype float32 not supported by V1", oracle)
    kvd = (s.kv_cache_dtype or "auto").lower()
    if kvd != "auto" and c is not None:
        if kvd.startswith("fp8") and kvd in ("fp8", "fp8_e4m3", "fp8_e5m2"):
            sup = fp8_kv_support(
                v,
                kvd,
                vendor="nvidia",
                cc=c,
                is_mla=bool(model is not None and model.is_mla),
                use_v1_env=s.use_v1,
                backend=forced_backend(v, s.attention_backend_env, s.attention_backend),
                mla_disabled=s.mla_disabled,
            )
            if sup.engine == "v0":
                return _v0_fallback(f"--kv-cache-dtype {kvd} unsupported by V1 on this GPU", sup.source)
        elif v < (0, 10, 2):
            return _v0_fallback(f"--kv-cache-dtype {kvd} unsupported by V1", oracle)
    if pooling is not None and v < VLLM_V1_POOLING_FROM:
        return _v0_fallback("a pooling model (V1 runs only generative models before 0.9.2)", oracle)
    return "v1", f"V1 engine (default from 0.8.0; vLLM {fmt_version(v)})", None


def v1_pooling_refused(v: Version, s: VllmSettings, pooling: str | None) -> str | None:
    """Why vLLM release ``v`` does not start a pooling model (``pooling``: why it is one, None for a generative
    model) that ``VLLM_USE_V1=1`` puts on the V1 engine before V1 ran pooling models
    (:data:`kvlint.memory.pooling.VLLM_V1_POOLING_FROM`), else None.

    0.8.0 - 0.9.1: ``EngineArgs._is_v1_supported_oracle`` meets a ``--task`` other than ``generate`` ("No Embedding
    Models so far") and calls ``_raise_or_fallback``, which raises ``NotImplementedError("VLLM_USE_V1=1 is not
    supported with --task embed.")`` when ``VLLM_USE_V1`` is set to 1 instead of falling back to V0
    (``vllm@0.8.5:vllm/engine/arg_utils.py``; 0.9.0 and 0.9.1 assumed the same). 0.6.6 - 0.7.x: the opt-in V1
    engine has no pooling runner and ``EngineCore.__init__`` asserts ``runner_type != "pooling"``
    (``vllm@0.7.3:vllm/v1/engine/core.py``; 0.6.6 - 0.7.2 assumed the same)."""
    if pooling is None or not s.use_v1 or v >= VLLM_V1_POOLING_FROM or v < (0, 6, 6):
        return None
    if v >= (0, 8, 0):
        return (
            f"vLLM {fmt_version(v)} refuses to start: VLLM_USE_V1=1 asks for the V1 engine, which does not run "
            f"pooling models before 0.9.2, so EngineArgs._is_v1_supported_oracle raises NotImplementedError "
            f'("VLLM_USE_V1=1 is not supported with --task ...") instead of falling back to V0 ({pooling})'
        )
    return (
        f"vLLM {fmt_version(v)} does not start: VLLM_USE_V1=1 selects the V1 engine, whose EngineCore asserts the "
        f"model is not a pooling model ({pooling})"
    )


def _v0_fallback(why: str, source: str) -> tuple[str, str, str]:
    """:func:`_era`'s answer for a fallback to V0: ``("v0", its note, why)``."""
    return "v0", f"V0 fallback: {why} ({source})", why


def _weights_total(
    model: ModelSpec,
    dbytes: int,
    quant: str | None,
    tp: int = 1,
    cc: str | None = None,
    mxfp4_backend: str | None = None,
) -> tuple[int, str]:
    """Whole-model weight bytes and their source, from :func:`kvlint.models.weights.weight_bytes` (``tp``/``cc``
    and ``mxfp4_backend`` select the MXFP4 kernel padding)."""
    b, src = weight_bytes(
        model,
        dtype_bytes=dbytes,
        quantization=quant,
        tp=tp,
        compute_capability=cc,
        mxfp4_backend=mxfp4_backend,
    )
    return int(b), str(src)


def moe_top_k(c: dict[str, Any]) -> int:
    """Experts each token is routed to, from the config's key for it (``num_experts_per_tok``, ``moe_topk``,
    ``experts_per_token``; ERNIE 4.5's ``moe_k``, ``vllm@0028a751:vllm/model_executor/models/ernie45_moe.py::
    Ernie4_5_MoeMoE``: ``FusedMoE(top_k=config.moe_k)``; Step 3's ``moe_top_k``, ``step3_text.py::FusedMoEBlock``;
    Gemma 4's ``top_k_experts``, ``vllm@0.20.0:vllm/model_executor/models/gemma4.py::
    Gemma4MoE``: ``FusedMoE(top_k=config.top_k_experts)``; DBRX's ``ffn_config.moe_top_k``, ``vllm/model_executor/
    models/dbrx.py::DbrxExperts``: ``FusedMoE(top_k=config.ffn_config.moe_top_k)``); 2 when none is set. A per-layer
    list (Hunyuan's ``moe_topk``) reads as its first entry; a value that is not a whole number from 1 to 2^16 as
    absent (a config.json may be pull-request input)."""
    ffn = c.get("ffn_config")
    for v in (
        c.get("num_experts_per_tok"),
        c.get("moe_topk"),
        c.get("moe_k"),
        c.get("moe_top_k"),
        c.get("experts_per_token"),
        c.get("top_k_experts"),
        ffn.get("moe_top_k") if isinstance(ffn, dict) else None,
    ):
        if isinstance(v, list):
            v = v[0] if v else None
        k = lax_int(v)
        if k is not None and 0 < k <= 1 << 16:
            return k
    return 2


def _inter_eff(model: ModelSpec) -> int:
    """Effective MLP width of one token (elements): top-k x expert width for MoE, plus the dense MLP a Gemma 4 MoE
    layer runs beside its experts (:func:`kvlint.models.weights.gemma4_moe_keeps_dense_mlp`) or Arctic's residual MLP
    of the hidden width (:func:`kvlint.models.weights.arctic_residual_mlp`)."""
    c = model.text_config or model.config or {}
    if model.num_experts and model.moe_intermediate_size:
        eff = moe_top_k(c) * model.moe_intermediate_size
        if gemma4_moe_keeps_dense_mlp(c, model.model_type):
            eff += model.intermediate_size
        return eff
    if model.num_experts:
        eff = moe_top_k(c) * model.intermediate_size
        if arctic_residual_mlp(c, model.model_type):
            eff += model.hidden_size
        return eff
    return model.intermediate_size


#: ``VLLM_FUSED_MOE_CHUNK_SIZE`` default, tokens (``vllm/envs.py`` of 0.9.0 - 0.11.0): the fused MoE sizes its
#: workspaces for ``min(tokens, chunk)`` and loops over chunks (``fused_moe.py::fused_experts_impl``)
FUSED_MOE_CHUNK_TOKENS = 32768


def _fused_moe_workspace(tokens: int, topk: int, n: int, k: int, act_bytes: int, fp8: bool) -> int:
    """Bytes the Triton fused MoE allocates for a batch of ``tokens`` (``vllm/model_executor/layers/fused_moe/
    fused_moe.py::fused_experts_impl``, 0.9.0 - 0.11.0): ``M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE)``;
    ``cache13`` ``M x topk x max(N, K)`` and ``intermediate_cache2`` ``M x topk x N/2`` in the activation dtype
    (``N`` = the rank's ``w13`` rows, 2 x its intermediate size; ``K`` = hidden size); with FP8 W8A8 weights
    ``moe_kernel_quantize_input`` adds the 1-byte copies of the chunk's input (``M x K``) and of cache2.

    With more than one chunk the loop quantizes a chunk's input and intermediate while the previous chunk's quantized
    copies are still bound to ``qcurr_hidden_states`` and ``qintermediate_cache2`` (a Python name lets go of its
    tensor only once the new one is assigned; the same loop in the 0.10.1 and 0.11.0 wheels): for a second chunk of
    ``M1`` rows the peak of the quantized copies is the larger of ``M K + M1 K + M topk N/2`` (quantizing the input)
    and ``M1 K + M topk N/2 + M1 topk N/2`` (quantizing cache2), beside the caches. [shapes from source]"""
    m = min(tokens, FUSED_MOE_CHUNK_TOKENS)
    b = m * topk * max(n, k) * act_bytes + m * topk * (n // 2) * act_bytes
    if fp8:
        q = m * k + m * topk * (n // 2)  # one chunk's quantized input and cache2
        m1 = min(m, tokens - m)  # the largest later chunk (a full one when there are three or more)
        if m1 > 0:
            q = max(q + m1 * k, m1 * k + (m + m1) * topk * (n // 2))
        b += q
    return b


#: ``VLLM_ALL2ALL_BACKEND`` values whose MoE layers skip the naive dispatch with expert parallelism (0.9.2 - 0.11.0
#: ``FusedMoE.forward_impl``: ``use_pplx_kernels`` / ``use_deepep_ll_kernels`` take ``forward_impl_chunked``,
#: ``use_deepep_ht_kernels`` turns ``do_naive_dispatch_combine`` off; each needs ``use_all2all_kernels``, which is
#: ``dp_size > 1 and use_ep``, ``vllm/model_executor/layers/fused_moe/config.py``)
_ALL2ALL_KERNEL_BACKENDS = frozenset({"pplx", "deepep_high_throughput", "deepep_low_latency"})


def dp_moe_gather_bytes(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> int:
    """Extra profile activation per GPU (bytes) when an MoE model runs with ``--data-parallel-size`` > 1 and its
    MoE layers see every DP rank's batch (:func:`~kvlint.memory.versions.moe_gathers_dp_batch`, V1 0.9.0 - 0.11.0);
    0 otherwise.

    Each DP rank profiles ``max_num_batched_tokens`` tokens (``GPUModelRunner.profile_run`` ->
    ``_dummy_run(max_num_tokens)``, padded to the same count on every rank), so the MoE layer gets
    ``dp x max_num_batched_tokens`` rows: the gathered hidden states and router logits (``NaiveAll2AllManager.
    naive_multicast`` allocates them as one buffer; ``AgRsAll2AllManager`` ``all_gatherv``) and the fused-MoE
    workspaces of that batch (:func:`_fused_moe_workspace`) instead of one rank's. The term is that gathered
    buffer plus the workspace difference; the rest of the layer (one rank's tokens) is already in kvlint's forward
    term. ``N`` per rank: ``2 x moe_intermediate_size`` with expert parallelism, divided by ``tp x dp`` without it
    (``FusedMoEParallelConfig.make`` flattens TP across DP). 0 with expert parallelism and a PPLX or DeepEP
    ``VLLM_ALL2ALL_BACKEND`` (:data:`_ALL2ALL_KERNEL_BACKENDS`: no naive dispatch; what those kernels hold is not
    modelled). Otherwise assumes the default all-to-all backend
    (``VLLM_ALL2ALL_BACKEND`` ``naive``, ``allgather_reducescatter`` from 0.11.0) and the Triton fused MoE (the
    FlashInfer CUTLASS, DeepEP and DeepGEMM paths size their buffers otherwise). [shapes from source]

    In 0.14 - 0.19 (:data:`MOE_WORKSPACE_KEPT`) without expert parallelism the layer gathers the same way (the
    default ``allgather_reducescatter`` all-to-all's ``all_gatherv`` of the hidden states and router logits,
    ``vllm@0.14.0:vllm/distributed/device_communicators/all2all.py::AgRsAll2AllManager.dispatch``; read in the
    0.14.0 - 0.19.0 wheels): the term is the gathered buffers alone, the experts' workspace for the gathered rows
    being :func:`moe_workspace_bytes`'. From 0.16.0 only where the MoE runner dispatches
    (:func:`moe_runner_dispatches_dp`): a method that builds its own modular kernel (``supports_internal_mk``) lets
    that kernel's naive DP prepare step quantize the input first and dispatch it with the top-k weights and ids
    (``fused_moe/prepare_finalize/naive_dp_ep.py``), shapes not modelled (0). With expert parallelism in those
    releases nothing is added (not read).
    """
    v = cfg.version
    if cfg.era != "v1" or cfg.dp <= 1 or not model.num_experts:
        return 0
    lo, hi = MOE_WORKSPACE_KEPT
    if lo <= v < hi and not settings.enable_expert_parallel:
        # the same dispatch (AgRsAll2AllManager.dispatch: all_gatherv of both); the experts' workspace for the
        # gathered rows is moe_workspace_bytes'. A method with its own modular kernel (supports_internal_mk)
        # gathers its quantized input and top-k tensors instead: not modelled
        if not moe_runner_dispatches_dp(settings, model, v):
            return 0
        return int(
            cfg.dp * cfg.max_num_batched_tokens * (model.hidden_size + model.num_experts) * cfg.dtype_bytes
        )
    if not moe_gathers_dp_batch(v):
        return 0
    if settings.enable_expert_parallel and settings.all2all_backend in _ALL2ALL_KERNEL_BACKENDS:
        return 0  # PPLX / DeepEP all-to-all kernels: no naive dispatch of the gathered batch
    c = model.text_config or model.config or {}
    inter = model.moe_intermediate_size or model.intermediate_size
    topk = moe_top_k(c)
    if not inter:
        return 0
    tp_moe = 1 if settings.enable_expert_parallel else cfg.tp * cfg.dp
    n = 2 * inter // max(1, tp_moe)
    k = model.hidden_size
    act = cfg.dtype_bytes
    fp8 = (settings.quantization or model.quant_method or "").lower() == "fp8"
    local = cfg.max_num_batched_tokens
    gathered = cfg.dp * local
    buffers = gathered * (k + model.num_experts) * act
    ws_all = _fused_moe_workspace(gathered, topk, n, k, act, fp8)
    ws_own = _fused_moe_workspace(local, topk, n, k, act, fp8)
    return int(buffers + max(0, ws_all - ws_own))


#: ``--quantization`` / ``quant_method`` values whose vLLM fused-MoE method never builds a modular kernel of its own
#: in 0.16.0 - 0.19.0 (``self.moe_kernel``, 0.16.0 ``self.moe_mk``, is set only in ``quantization/fp8.py``,
#: ``modelopt.py``'s FP8 and NVFP4 methods, ``mxfp4.py`` and ``compressed_tensors/compressed_tensors_moe.py``'s FP8,
#: NVFP4 and MXFP4 methods; read in the 0.16.0, 0.17.0, 0.18.0 and 0.19.0 wheels): GPTQ / AWQ (Marlin or not),
#: bitsandbytes, ``moe_wna16`` and ``experts_int8`` keep the runner's naive dispatch
_MOE_RUNNER_DISPATCH_QUANT = frozenset(
    {"gptq", "gptq_marlin", "awq", "awq_marlin", "bitsandbytes", "moe_wna16", "experts_int8"}
)


def moe_runner_dispatches_dp(settings: VllmSettings, model: ModelSpec, v: Version) -> bool:
    """Whether vLLM release ``v``'s MoE layer at DP > 1 (no all-to-all kernels) gathers every DP rank's hidden
    states and router logits itself before the experts (:func:`dp_moe_gather_bytes`' buffers), rather than leaving
    the dispatch to the quantization method's own modular kernel.

    0.14.0 / 0.15.0: always (``FusedMoE.forward_impl``: ``do_naive_dispatch_combine = dp_size > 1 and not
    isinstance(quant_method, FusedMoEModularMethod)``, and without all-to-all kernels ``maybe_init_modular_kernel``
    wraps none). From 0.16.0 ``dp_size > 1 and not quant_method.supports_internal_mk`` (``layer.py``, 0.17.0 on
    ``runner/default_moe_runner.py``), true only for a method that built its kernel through
    ``maybe_make_prepare_finalize(..., allow_new_interface=True)``, whose naive DP prepare dispatches instead: the
    FP8 methods (:func:`fp8_moe_experts`) and NVFP4 (ModelOpt ``NVFP4``, compressed-tensors 4-bit float weights)
    from 0.16.0, MXFP4 in every backend from 0.19.0 (0.17.0 / 0.18.0 only in its Marlin and FlashInfer branches,
    not the Hopper Triton default: taken as dispatching). Unquantized experts and
    :data:`_MOE_RUNNER_DISPATCH_QUANT` (and compressed-tensors integer-weight schemes, ``WNA16`` / ``W8A8`` int8 /
    ``W4A8``) always dispatch in the runner. Other methods: as before 0.16.0 up to 0.18.x, not from 0.19.0
    (not read)."""
    quant = (settings.quantization or model.quant_method or "").lower()
    if not quant or v < (0, 16, 0) or quant in _MOE_RUNNER_DISPATCH_QUANT:
        return True
    qc = model.quant_config if isinstance(model.quant_config, dict) else {}
    if fp8_moe_experts(quant, model):
        return False
    if quant == "modelopt_fp4":
        return False
    if quant == "modelopt":
        nested = qc.get("quantization")
        algo = qc.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, dict) else None)
        if str(algo or "").upper() == "NVFP4":
            return False
    if quant == "compressed-tensors":
        groups = qc.get("config_groups")
        kinds = {
            str((g.get("weights") or {}).get("type") or "").lower()
            for g in (groups.values() if isinstance(groups, dict) else ())
            if isinstance(g, dict) and isinstance(g.get("weights"), dict)
        }
        if kinds == {"int"}:
            return True  # WNA16 / W8A8 int8 / W4A8 MoE methods: no kernel of their own
        if "float" in kinds:
            return False  # 4-bit float (NVFP4, MXFP4 from 0.19.0) weights build their own kernel
    return v < (0, 19, 0)  # MXFP4, and the methods not read


def dp_moe_combine_nvls_bytes(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> int:
    """NCCL's NVLink SHARP buffer of the data-parallel group (bytes per GPU) that an MoE model's profile run sets up
    when its MoE layers combine the gathered batch with an all-reduce on that group, else 0.

    Where :func:`dp_moe_gather_bytes` applies and the all-to-all is the ``naive`` one (the default before 0.11.0;
    ``VLLM_ALL2ALL_BACKEND`` unset or ``naive``), ``NaiveAll2AllManager.combine`` all-reduces every rank's rows on
    the DP group (``self.dp_group.all_reduce`` -> ``CudaCommunicator.all_reduce``: a tensor above the custom
    all-reduce's 8 MiB goes to the group's ``PyNcclCommunicator``; ``vllm@0.10.1:vllm/distributed/
    device_communicators/all2all.py``, ``cuda_communicator.py``). Before 0.11.0 that communicator is created after
    the init snapshot (:func:`kvlint.memory.calibration.profiled_peer_world`), and NCCL connects NVLS at the first
    all-reduce that runs it, inside the profile. Its size is :func:`kvlint.memory.calibration.nvls_buffer_bytes` for
    a communicator of ``dp`` ranks (one per DP replica at this TP rank; none at 2 ranks or fewer, nor where the GPU
    has no NVLS or ``NCCL_NVLS_ENABLE=0``). [shapes from source; assumed: NCCL's tuner picks NVLS for the
    ``dp x max_num_batched_tokens x hidden`` all-reduce, as kvlint assumes for the TP group's]"""
    if cfg.version >= (0, 11, 0) or (settings.all2all_backend or "naive") != "naive":
        return 0
    if settings.nccl_nvls_off or cfg.vendor != "nvidia" or not dp_moe_gather_bytes(settings, model, cfg):
        return 0
    return cal.nvls_buffer_bytes(cfg.dp, cfg.nvls, cfg.nvls_domain, cfg.compute_capability, cfg.version)


#: vLLM releases read in which the all-reduce + RMSNorm fusion is on by default at ``-O2`` (``vllm/config/vllm.py::
#: enable_allreduce_rms_fusion`` in the 0.17.0, 0.19.0 - 0.26.0 wheels; off at every level in 0.14.0 and
#: 0.16.0, vllm-project/vllm#34299); releases from 0.27.0 were not read
AR_FUSION_DEFAULT = ((0, 17, 0), (0, 27, 0))
#: ``FI_ALLREDUCE_FUSION_MAX_SIZE_MB`` (``vllm/compilation/passes/fusion/allreduce_rms_fusion.py``, the same in the
#: 0.17.0 - 0.26.0 wheels; 0.17.0 has no 10.3 entry; 0.25.0 and 0.26.0 add TP 16 on 10.x for multi-node MNNVL,
#: not modelled): the fused all-reduce's largest input per TP size, MiB, by compute capability
AR_FUSION_MAX_MB: dict[int, dict[int, float]] = {
    90: {2: 64, 4: 2, 8: 0.5},
    100: {2: 64, 4: 32, 8: 1},
    103: {2: 64, 4: 64, 8: 2},
}
_TWO_MIB = 1 << 21
#: What FlashInfer rounds each of the fusion workspace's three buffers up to, by compute capability. vLLM 0.17.0 -
#: 0.26.0 create the workspace with ``flashinfer.comm.create_allreduce_fusion_workspace`` (``vllm/distributed/
#: device_communicators/flashinfer_all_reduce.py``; 0.17.0 - 0.18.x through the fusion pass), whose
#: ``TRTLLMAllReduceFusionWorkspace`` passes ``use_symm_dev_mem=True`` to ``trtllm_create_ipc_workspace_for_all_reduce_
#: fusion``: each buffer is a ``SymmDeviceMemory`` (``flashinfer/comm/mnnvl.py``) whose ``_get_allocation_prop``
#: rounds ``size + 2,048`` B of signal pad up to the allocation granularity and then, multicast or not
#: (``enable_multicast=False`` here), to ``cuMulticastGetGranularity(..., CU_MULTICAST_GRANULARITY_RECOMMENDED)``
#: before ``cuMemCreate`` (read in the flashinfer-python 0.6.4, 0.6.6, 0.6.8.post1, 0.6.11.post2, 0.6.12, 0.6.13 and
#: 0.6.14 wheels, the pins of vLLM 0.17.0 - 0.26.0; flashinfer-ai/flashinfer#3745, July 2026, moves that rounding
#: under ``enable_multicast``). The multicast granularity is 512 MiB on Hopper and on Blackwell: the driver's
#: multicast object takes a 512 MiB page unless asked otherwise (NVIDIA/open-gpu-kernel-modules@595.45.04:src/nvidia/
#: src/kernel/mem_mgr/mem_multicast_fabric.c::_memMulticastfabricResolvePageSize, "Treat 0 as default page size" ->
#: ``NV_MEMORY_MULTICAST_FABRIC_PAGE_SIZE_512M``) and refuses 2 MiB pages for multicast on every chip that has it
#: (``memmgrIsValidFlaPageSize_GA100``, the HAL of GH100 - H100, H200, H20, H800 -: 2 MiB only ``!bIsMulticast``,
#: 512 MiB; ``memmgrIsValidFlaPageSize_GB100``, the HAL of GB100 - GB20x: the same, plus 256 GiB), which is also
#: microsoft/mscclpp@3f9c653a:include/mscclpp/nvls.hpp's ``DefaultNvlsBufferSize = (1 << 29)``, "the recommended
#: buffer size for NVLS, returned by cuMulticastGetGranularity". Where the GPU has no multicast (PCIe, NVLink-bridge
#: pairs, a MIG slice) the call fails and vLLM runs without the workspace (``_create_workspace``: "Failed to
#: initialize FlashInfer All Reduce workspace ... expected on GPUs without NVSwitch").
AR_FUSION_MULTICAST_GRANULARITY: dict[tuple[int, int], int] = {
    (9, 0): 1 << 29,
    (10, 0): 1 << 29,
    (10, 3): 1 << 29,
}


def allreduce_fusion_granularity(cfg: StartupConfig) -> int:
    """What each buffer of the fusion workspace is rounded up to on this GPU: the multicast granularity of
    :data:`AR_FUSION_MULTICAST_GRANULARITY` (512 MiB on Hopper and Blackwell) where the GPU has multicast
    (``cfg.nvls`` True), else 2 MiB (the buffers' own alignment: a GPU whose NVSwitch is not known, GH200)."""
    if not cfg.nvls:
        return _TWO_MIB
    return AR_FUSION_MULTICAST_GRANULARITY.get(parse_cc(cfg.compute_capability) or (0, 0), _TWO_MIB)


def allreduce_fusion_workspace_bytes(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> int:
    """Device memory per GPU of FlashInfer's all-reduce fusion workspace, which vLLM's ``AllReduceFusionPass``
    allocates while ``torch.compile`` runs inside the memory profile, so the engine counts it as non-torch memory
    (0.19.0 logs: "Enabled custom fusions: allreduce_rms", "Initialized FlashInfer All Reduce workspace:
    backend=trtllm, world_size=2, …, max_token_num=8192, hidden_dim=4096"). 0 where the fusion is off.

    On when ``enable_allreduce_rms_fusion`` holds: :data:`AR_FUSION_DEFAULT` releases, TP > 1 (with the PP and DP
    sizes :func:`allreduce_fusion_parallel_ok` allows: PP = DP = 1 only before 0.21.0) on
    compute capability 9.0 or 10.x (10.0 only in 0.17.0, the 10.x family from 0.19.0), FlashInfer installed (a
    dependency of those wheels), and ``torch.compile`` running (``--enforce-eager`` sets ``mode=NONE``), not turned
    off by the optimization level or the compilation config (:func:`allreduce_fusion_switched_off`). Size
    (``vllm@0.19.0:…/allreduce_rms_fusion.py``: ``max_token_num = min(max_size // (hidden x dtype bytes),
    max_num_batched_tokens)`` with ``max_size`` from :data:`AR_FUSION_MAX_MB`; ``flashinfer@0.6.6:flashinfer/comm/
    trtllm_ar.py::trtllm_create_ipc_workspace_for_all_reduce_fusion``): a buffer of ``tp x max_token_num x hidden x
    2 B``, a flag buffer of ``tp x 256 x 4 B`` and a Lamport buffer of 3 x the first (4 B elements in fp32), each
    rounded up to 2 MiB; one workspace per process (the quant fusion reuses it). TP sizes without an entry (FlashInfer
    supports 2, 4 and 8) get none. Each of the three buffers is then a FlashInfer ``SymmDeviceMemory``, rounded up
    to :func:`allreduce_fusion_granularity` (512 MiB on an NVSwitch H100, H200 or B200: 1.5 GiB whatever the TP size); on a GPU
    without multicast (:func:`kvlint.memory.calibration.nvls_capable` False: PCIe and NVLink-bridge cards) FlashInfer
    refuses to build them ("Device does not support multicasting") and vLLM runs without the workspace: 0.
    [shapes from source; FlashInfer 0.6.6's sizing assumed for the other pins]"""
    tokens = allreduce_fusion_tokens(settings, model, cfg)
    if tokens <= 0:
        return 0
    if cfg.nvls is False:
        return 0  # no multicast: the workspace is not created (AR_FUSION_MULTICAST_GRANULARITY)
    hidden, elem = model.hidden_size, (4 if cfg.dtype_bytes == 4 else 2)
    gran = allreduce_fusion_granularity(cfg)

    def up(n: int) -> int:
        n = -(-n // _TWO_MIB) * _TWO_MIB
        return -(-n // gran) * gran

    buf = cfg.tp * tokens * hidden * elem
    return (
        up(cfg.tp * tokens * hidden * 2)
        + up(cfg.tp * 256 * 4)
        + up(3 * min(buf, (2**31 - 1) & ~(_TWO_MIB - 1)))
    )


#: ``CompilationMode`` (``vllm/config/compilation.py``, 0.17.0 - 0.26.0): only ``VLLM_COMPILE`` runs vLLM's passes
_VLLM_COMPILE_MODE = {"3", "vllm_compile"}
_PYDANTIC_FALSE = {"0", "false", "f", "no", "n", "off"}


def allreduce_fusion_switched_off(level: Any, compilation_config: Any) -> bool:
    """Whether the container's settings turn the all-reduce + RMSNorm fusion off where it is on by default
    (``vllm@0.19.0:vllm/config/vllm.py``: ``OPTIMIZATION_LEVEL_00`` and ``_01`` set ``pass_config.
    fuse_allreduce_rms`` False, ``_02`` and ``_03`` to :func:`enable_allreduce_rms_fusion`, applied by
    ``_apply_optimization_level_defaults`` only where the user left the field unset; the pass runs only in
    ``CompilationMode.VLLM_COMPILE``, which ``-O0`` or a ``mode``/``level`` other than 3 or ``backend: eager``
    leave): ``-O0``/``-O1`` (``--optimization-level``), ``--compilation-config '{"pass_config":
    {"fuse_allreduce_rms": false}}'`` (or ``-cc.pass_config.fuse_allreduce_rms=false``), a compilation ``mode``
    (``level`` before) other than ``VLLM_COMPILE``, or ``backend: eager``. An explicit ``true`` is not read as
    turning it on outside the releases and GPUs of :func:`allreduce_fusion_tokens` (its sizes there not read)."""
    lv = as_int(level)
    if lv is None and isinstance(level, str) and level.strip()[:1] in ("O", "o"):
        lv = as_int(level.strip()[1:])
    if lv is not None and lv < 2:
        return True
    if not isinstance(compilation_config, dict):
        return False
    pc = compilation_config.get("pass_config")
    if isinstance(pc, dict):
        flag = pc.get("fuse_allreduce_rms")
        # pydantic's lax bool, as PassConfig reads it
        if flag is False or flag == 0 or (isinstance(flag, str) and flag.strip().lower() in _PYDANTIC_FALSE):
            return True
    mode = compilation_config.get("mode", compilation_config.get("level"))
    if (
        mode is not None
        and str(mode).strip().lower().removeprefix("compilationmode.") not in _VLLM_COMPILE_MODE
    ):
        return True
    return str(compilation_config.get("backend", "")).strip().lower() == "eager"


def allreduce_fusion_parallel_ok(version: tuple[int, ...], pp: int, dp: int) -> bool:
    """Whether ``enable_allreduce_rms_fusion`` lets the fusion on with these pipeline and data parallel sizes
    (``vllm/config/vllm.py`` of each wheel read): 0.17.0 - 0.20.0 require PP = DP = 1 (vllm-project/vllm#34458,
    #35426); 0.21.0 and 0.22.0 drop both conditions; 0.23.0 requires PP = 1 again (the fused op's peer spin-wait
    deadlocks when TP subgroups warm up independently); 0.24.0 - 0.26.0 have neither."""
    if version < (0, 21, 0):
        return pp == 1 and dp == 1
    if (0, 23, 0) <= version < (0, 24, 0):
        return pp == 1
    return True


def allreduce_fusion_tokens(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> int:
    """The fusion's ``max_token_num`` (the tokens its workspace is sized for, which the 0.19.0 log prints as
    "Maximal number of tokens used by Flashinfer Allreduce Fusion: N"), or 0 where the fusion is off
    (:func:`allreduce_fusion_workspace_bytes` says when)."""
    lo, hi = AR_FUSION_DEFAULT
    v = cfg.version
    if cfg.era != "v1" or not lo <= v < hi or settings.enforce_eager or cfg.vendor != "nvidia":
        return 0
    if settings.allreduce_fusion_off:
        return 0
    if not allreduce_fusion_parallel_ok(v, cfg.pp, cfg.dp):
        return 0
    cc = parse_cc(cfg.compute_capability)
    if cc is None:
        return 0
    if cc == (9, 0):
        key = 90
    elif cc == (10, 0) or (cc[0] == 10 and v >= (0, 19, 0)):
        key = 103 if cc == (10, 3) else 100
    else:
        return 0
    max_mib = AR_FUSION_MAX_MB[key].get(cfg.tp)
    hidden = model.hidden_size
    if max_mib is None or not hidden:
        return 0
    return max(0, min(int(max_mib * (1 << 20)) // (hidden * cfg.dtype_bytes), cfg.max_num_batched_tokens))


#: vLLM releases read whose unquantized MoE layers run ``TritonExperts`` through ``FusedMoEModularKernel`` with their
#: buffers from the persistent ``WorkspaceManager`` (``vllm/v1/worker/workspace.py``): the 0.14.0, 0.17.0 and 0.19.0
#: wheels (``unquantized_fused_moe_method.py``; 0.19.0 logs "Using TRITON backend for Unquantized MoE"). 0.13.0 calls
#: ``fused_experts`` directly, whose buffers are freed after the layer; releases from 0.20.0 were not read.
MOE_WORKSPACE_KEPT = ((0, 14, 0), (0, 20, 0))
#: ``VLLM_FUSED_MOE_CHUNK_SIZE`` default (``vllm/envs.py`` of 0.14.0 and 0.17.0), by which the modular kernel chunks
#: ``M`` before 0.19.0; 0.19.0's ``_allocate_buffers`` takes ``M_chunk = M_full``
MOE_MK_CHUNK_TOKENS = 16 * 1024


def _vllm_env_bool(raw: str | None, default: str) -> bool:
    """A vLLM boolean environment switch read as ``vllm/envs.py`` reads the ROCm AITER ones: ``os.getenv(name,
    default).lower() in ("true", "1")``, so ``yes``, ``on`` or a padded `` 1`` are off (unlike :func:`truthy`)."""
    return (default if raw is None else str(raw)).lower() in ("true", "1")


def rocm_aiter_moe_enabled(use_aiter: str | None, use_aiter_moe: str | None) -> bool:
    """Whether vLLM runs AITER's fused MoE experts on ROCm: ``rocm_aiter_ops.is_fused_moe_enabled()`` is
    ``VLLM_ROCM_USE_AITER`` (default off) and ``VLLM_ROCM_USE_AITER_MOE`` (default on), each read as
    ``.lower() in ("true", "1")`` (``vllm@0.14.0``/``0.15.0``/``0.19.0:vllm/envs.py``, ``vllm/_aiter_ops.py``);
    both the unquantized and the FP8 MoE oracles ask it (``fused_moe/oracle/unquantized.py``, ``oracle/fp8.py``
    through ``AiterExperts._supports_current_device``). ``use_aiter``/``use_aiter_moe``: the variables' raw
    values, None when unset. [from source]"""
    return _vllm_env_bool(use_aiter, "False") and _vllm_env_bool(use_aiter_moe, "True")


def unquantized_moe_takes_triton(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> bool:
    """Whether vLLM's unquantized MoE oracle picks ``TritonExperts`` (``vllm@0.17.0``/``vllm@0.19.0:vllm/
    model_executor/layers/fused_moe/oracle/unquantized.py::select_unquantized_moe_backend``): an explicit
    ``--moe-backend`` (0.17.0 on) wins (``triton`` yes, any other no); on ROCm, AITER's experts when its fused MoE is on
    (:func:`rocm_aiter_moe_enabled`: ``VLLM_ROCM_USE_AITER`` and ``VLLM_ROCM_USE_AITER_MOE``), else Triton; on CUDA, ``VLLM_USE_FLASHINFER_MOE_FP16`` takes FlashInfer's TRTLLM experts (0.17.0 on;
    0.14.0's ``UnquantizedFusedMoEMethod`` has only the CUTLASS branch; 0.15, 0.16 not read) only on the Blackwell family (``flashinfer_trtllm_moe.py::_supports_current_device``) with a SiLU gated MLP and
    ``VLLM_FLASHINFER_MOE_BACKEND`` left at ``latency``, and FlashInfer's CUTLASS experts only with expert
    parallelism (``--enable-expert-parallel`` over more than one rank) without data parallelism on compute
    capability >= 9.0; otherwise Triton, also with the variable set (an H100 without expert parallelism).
    [from source; the TRTLLM kernel's routing-method and EPLB conditions not read]"""
    if settings.moe_backend and settings.moe_backend != "auto":
        return settings.moe_backend == "triton"
    if cfg.vendor == "amd":
        return not settings.rocm_aiter
    if not settings.flashinfer_moe_fp16:
        return True
    cc = parse_cc(cfg.compute_capability)
    c = model.text_config or model.config or {}
    act = str(c.get("hidden_act") or c.get("hidden_activation") or "silu").lower()
    fi_backend = (settings.flashinfer_moe_backend_env or "latency").strip().lower()
    if (
        cfg.version >= (0, 17, 0)
        and cc is not None
        and cc[0] == 10
        and act == "silu"
        and fi_backend == "latency"
    ):
        return False  # FLASHINFER_TRTLLM
    use_ep = settings.enable_expert_parallel and cfg.tp * cfg.dp > 1
    return not (use_ep and cfg.dp == 1 and cc is not None and cc >= (9, 0))  # else FLASHINFER_CUTLASS


def fp8_moe_experts(quant: str, model: ModelSpec) -> bool:
    """Whether vLLM places the MoE experts of a checkpoint quantized by ``quant`` (the lower-case ``--quantization``
    or ``quant_method``) with its FP8 MoE oracle, ``select_fp8_moe_backend`` + ``make_fp8_moe_kernel``
    (``vllm@0.14.0``/``0.15.0``/``0.19.0``): ``fp8`` (``Fp8MoEMethod``), a ModelOpt export of ``quant_algo`` ``FP8``
    (``modelopt.py::ModelOptFp8MoEMethod``), and a compressed-tensors checkpoint whose every config group is FP8
    weights with FP8 input activations (``compressed_tensors_moe.py::CompressedTensorsMoEMethod.get_moe_method``
    takes ``CompressedTensorsW8A8Fp8MoEMethod`` for ``_is_fp8_w8a8``; RedHatAI's ``FP8-dynamic`` builds) and whose
    ``ignore`` list names no routed experts. **[assumed]** a group's scales (per tensor, channel or block, static or
    dynamic) are ones ``_is_fp8_w8a8`` takes; mixed or other schemes are not decided here: False."""
    if quant == "fp8":
        return True
    qc = model.quant_config if isinstance(model.quant_config, dict) else {}
    if quant == "modelopt":
        nested = qc.get("quantization")
        algo = qc.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, dict) else None)
        return str(algo or "").upper() == "FP8"
    if quant != "compressed-tensors":
        return False
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        return False
    for group in groups.values():
        w = group.get("weights") if isinstance(group, dict) else None
        a = group.get("input_activations") if isinstance(group, dict) else None
        if not isinstance(w, dict) or not isinstance(a, dict):
            return False
        if (str(w.get("type") or "").lower(), w.get("num_bits")) != ("float", 8):
            return False
        if (str(a.get("type") or "").lower(), a.get("num_bits")) != ("float", 8):
            return False
    ignore = qc.get("ignore")
    for entry in ignore if isinstance(ignore, list) else []:
        text = str(entry).lower()
        if "experts" in text and "shared_expert" not in text:
            return False  # the routed experts left unquantized: the unquantized oracle (not decided here)
    return True


def fp8_moe_takes_marlin(settings: VllmSettings, cfg: StartupConfig) -> bool:
    """Whether vLLM's FP8 MoE oracle runs FP8 experts (``fp8`` checkpoints or ``--quantization fp8``) on
    ``MarlinExperts``, weight-only W8A16, in the releases of :data:`MOE_WORKSPACE_KEPT`: an explicit
    ``--moe-backend marlin`` (0.17.0 on), else a CUDA GPU below compute capability 8.9, where no other FP8 experts
    run. ``vllm@0.14.0:vllm/model_executor/layers/fused_moe/oracle/fp8.py::select_fp8_moe_backend`` returns
    ``MARLIN`` for ``is_cuda() and not has_device_capability(89)``; 0.15.0, 0.17.0 and 0.19.0 walk a ranked list
    whose other members refuse such a GPU (``TritonExperts._supports_quant_scheme`` takes FP8 only from 8.9 on CUDA,
    FlashInfer's CUTLASS experts need 9.0 or 10.x, DeepGEMM 9.0 or 10.x, vLLM's CUTLASS group GEMM 9.0 on, AITER is
    ROCm) and ``MarlinExpertsBase._supports_current_device`` takes 7.5 on. On 8.9 and above the list (FlashInfer,
    DeepGEMM, CUTLASS, Triton) depends on the packages installed and the scale layout, not read here: False.
    ``VLLM_TEST_FORCE_FP8_MARLIN`` is not read. [from source]"""
    if settings.moe_backend and settings.moe_backend != "auto":
        return settings.moe_backend == "marlin"
    if cfg.vendor != "nvidia":
        return False
    cc = parse_cc(cfg.compute_capability)
    return cc is not None and (7, 5) <= cc < (8, 9)


def _vllm_env_int_bool(raw: str | None, default: str) -> bool | None:
    """A vLLM switch read as ``bool(int(os.getenv(name, default)))`` (``vllm@0.19.0:vllm/envs.py``); None for a
    value ``int`` refuses (vLLM stops on it)."""
    try:
        return bool(int(default if raw is None else str(raw)))
    except ValueError:
        return None


def fp8_moe_env_steers_from_triton(
    flashinfer_fp8: str | None, use_deep_gemm: str | None, moe_use_deep_gemm: str | None
) -> bool:
    """Whether the container's environment makes vLLM 0.19.0's FP8 MoE oracle pick experts other than its ranked
    list's first (``vllm@0.19.0:vllm/model_executor/layers/fused_moe/oracle/fp8.py::select_fp8_moe_backend``):
    ``VLLM_USE_FLASHINFER_MOE_FP8`` set to a true value takes FlashInfer's experts (set to 0 it only drops them from
    the list); ``VLLM_USE_DEEP_GEMM`` or ``VLLM_MOE_USE_DEEP_GEMM`` set, with both true (each defaults to 1), takes
    DeepGEMM's (one of them 0 only drops DeepGEMM). Raw values, None when unset; a value vLLM cannot read counts as
    steering (not decided here). [from source]"""
    if flashinfer_fp8 is not None and _vllm_env_int_bool(flashinfer_fp8, "0") is not False:
        return True
    if use_deep_gemm is not None or moe_use_deep_gemm is not None:
        dg, moe_dg = _vllm_env_int_bool(use_deep_gemm, "1"), _vllm_env_int_bool(moe_use_deep_gemm, "1")
        if dg is None or moe_dg is None or (dg and moe_dg):
            return True
    return False


def fp8_block128_moe(quant: str, model: ModelSpec) -> bool:
    """Whether the checkpoint's FP8 experts are block-quantized with 128 x 128 weight blocks and dynamic 128-wide
    activation groups, vLLM's ``kFp8Static128BlockSym`` / ``kFp8Dynamic128Sym``: an ``fp8`` config with
    ``weight_block_size`` [128, 128] (``Fp8MoEMethod``), or a compressed-tensors config whose every group has
    ``block`` weights of ``block_structure`` [128, 128] and dynamic ``group`` activations of ``group_size`` 128
    (RedHatAI's ``FP8-block``). ``--quantization fp8`` on an unquantized checkpoint quantizes per tensor: False."""
    qc = model.quant_config if isinstance(model.quant_config, dict) else {}
    if quant == "fp8":
        bs = qc.get("weight_block_size") if str(qc.get("quant_method") or "").lower() == "fp8" else None
        return isinstance(bs, list) and len(bs) == 2 and [lax_int(x) for x in bs] == [128, 128]
    if quant != "compressed-tensors" or not fp8_moe_experts(quant, model):
        return False
    for group in (qc.get("config_groups") or {}).values():
        w, a = group.get("weights") or {}, group.get("input_activations") or {}
        blocks = w.get("block_structure")
        if str(w.get("strategy") or "").lower() != "block" or not isinstance(blocks, list):
            return False
        if len(blocks) != 2 or [lax_int(x) for x in blocks] != [128, 128]:
            return False
        if str(a.get("strategy") or "").lower() != "group" or lax_int(a.get("group_size")) != 128:
            return False
        if not a.get("dynamic"):
            return False
    return True


#: The vLLM releases read whose FP8 MoE oracle ranks Triton's experts first for block FP8 on compute capability 9.0
#: without expert parallelism (``vllm@0.19.0:.../oracle/fp8.py::_get_priority_backends``: "On Hopper for Block
#: Fp8, prefer Triton for TP and FI CUTLASS for EP"); 0.14.0 asks DeepGEMM first when it is installed, and 0.15.0 -
#: 0.18.x and 0.20.0 on were not read for it
FP8_HOPPER_TRITON = ((0, 19, 0), (0, 20, 0))


def fp8_moe_takes_hopper_triton(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> bool:
    """Whether vLLM runs block-FP8 experts (:func:`fp8_block128_moe`) on ``TritonExperts`` on a compute capability
    9.0 GPU (H100, H200, H20, H800) in :data:`FP8_HOPPER_TRITON`: ``_get_priority_backends`` moves ``TRITON`` to the
    front of the ranked list for that scheme on ``is_device_capability(90)`` when the MoE's ``ep_size`` is 1 (no
    expert parallelism; with it FlashInfer's CUTLASS experts go first), and ``TritonExperts._supports_quant_scheme``
    takes ``(kFp8Static128BlockSym, kFp8Dynamic128Sym)`` from 8.9 (``fused_moe.py``), so the package set does not
    matter. Not when ``--moe-backend`` names other experts (``triton`` names these), nor when the environment
    steers the oracle (:func:`fp8_moe_env_steers_from_triton`). LoRA takes Triton whatever the GPU
    (``select_fp8_moe_backend``: ``is_lora_enabled``), not modelled apart. [from source]"""
    lo, hi = FP8_HOPPER_TRITON
    if not lo <= cfg.version < hi or cfg.vendor != "nvidia":
        return False
    if settings.moe_backend and settings.moe_backend != "auto":
        return settings.moe_backend == "triton"
    if parse_cc(cfg.compute_capability) != (9, 0) or settings.fp8_moe_env_steers:
        return False
    if settings.enable_expert_parallel and cfg.tp * max(1, cfg.dp) > 1:
        return False
    quant = (settings.quantization or model.quant_method or "").lower()
    return fp8_block128_moe(quant, model)


def fp8_moe_takes_rocm_triton(settings: VllmSettings, cfg: StartupConfig) -> bool:
    """Whether vLLM's FP8 MoE oracle runs FP8 experts on ``TritonExperts`` on an AMD GPU in the releases of
    :data:`MOE_WORKSPACE_KEPT`: without AITER's fused MoE (``settings.rocm_aiter``, :func:`rocm_aiter_moe_enabled`;
    ``AiterExperts._supports_current_device`` is ``rocm_aiter_ops.is_fused_moe_enabled()``; 0.14.0's ``select_fp8_moe_backend`` asks ``VLLM_ROCM_USE_AITER and
    VLLM_ROCM_USE_AITER_MOE``) and without a ``--moe-backend`` other than ``triton``, the CUDA-only FlashInfer,
    DeepGEMM, CUTLASS and Marlin experts refuse the GPU and ``TritonExperts._supports_quant_scheme`` takes FP8 block,
    channel and tensor scales on gfx9 (``on_gfx9``) (``vllm@0.14.0``/``0.15.0``/``0.17.0``/``0.19.0:vllm/
    model_executor/layers/fused_moe/oracle/fp8.py``, ``fused_moe.py``). **[assumed]** the GPU is a gfx9 Instinct
    (MI200 / MI300 / MI350 class), where FP8 MoE runs at all. [from source]"""
    if cfg.vendor != "amd" or settings.rocm_aiter:
        return False
    return not settings.moe_backend or settings.moe_backend in ("auto", "triton")


def _mk_buffer_elems(m_full: int, chunk: int, ws13: int, ws2: int, out: int) -> int:
    """Elements ``FusedMoEModularKernel._allocate_buffers`` takes from the workspace manager for ``m_full`` tokens
    (``vllm@0.14.0``/``0.15.0``/``0.17.0``/``0.19.0:vllm/model_executor/layers/fused_moe/modular_kernel.py``):
    ``ws13``, ``ws2`` the experts' two workspaces per token of a chunk, ``out`` the output per token. One chunk
    (``m_full <= chunk``): one buffer shared by ``workspace13`` and the output, ``max(M ws13, M out)``, beside
    ``workspace2``; more chunks (before 0.19.0, :data:`MOE_MK_CHUNK_TOKENS`): both workspaces for a chunk and the
    output for every token."""
    if m_full <= chunk:
        return max(m_full * ws13, m_full * out) + m_full * ws2
    return chunk * (ws13 + ws2) + m_full * out


def moe_workspace_bytes(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig, tokens: int) -> int:
    """Bytes of the MoE experts' workspace that stay allocated after the profile's forward pass, so that they sit
    beside the dummy sampler's tensors, for the unquantized experts on Triton and the FP8 experts on Marlin or, on
    AMD GPUs, Triton (0
    outside :data:`MOE_WORKSPACE_KEPT`, for dense models, other quantized experts or data-parallel expert
    parallelism, whose kernels size their buffers otherwise and were not read).

    ``FusedMoEModularKernel._allocate_buffers`` takes one shared buffer for ``workspace13`` and the output and one
    for ``workspace2`` from ``current_workspace_manager().get_simultaneous`` (``vllm@0.17.0``/``vllm@0.19.0:
    vllm/model_executor/layers/fused_moe/modular_kernel.py``), and the manager keeps its largest buffers for the
    process's life (:func:`_mk_buffer_elems`). ``TritonExperts.workspace_shapes`` (``fused_moe.py``, same wheels):
    ``workspace1 = (M, topk, max(N/2, K))``, ``workspace2 = (M, topk, max(N, K))``, ``output = (M, K)`` in the
    activation dtype, with ``N`` the rank's ``w13`` rows (2 x the expert width, divided by TP without expert
    parallelism), ``K`` the hidden size and ``M`` the profile's ``tokens`` (chunked by :data:`MOE_MK_CHUNK_TOKENS`
    before 0.19.0). So ``(max(M x topk x max(N/2, K), M x K) + M x topk x max(N, K)) x dtype bytes``. Triton is the
    unquantized oracle's default on CUDA and ROCm in those releases; ``VLLM_USE_FLASHINFER_MOE_FP16`` (on Blackwell,
    or with expert parallelism), ``--moe-backend`` or, on ROCm, ``VLLM_ROCM_USE_AITER`` choose other experts (0
    here; :func:`unquantized_moe_takes_triton`). From 0.20.0 the oracle ranks FlashInfer's experts first on some
    GPUs (0.26.0: all CUDA GPUs but Hopper), which is one reason those releases are left out.

    FP8 experts (:func:`fp8_moe_experts`: ``fp8``, ModelOpt FP8, compressed-tensors FP8 W8A8) on Marlin
    (:func:`fp8_moe_takes_marlin`: below compute capability 8.9, an A100 or an A10) run the
    same modular kernel with ``MarlinExperts.workspace_shapes`` (``fused_marlin_moe.py``, the 0.14.0, 0.15.0,
    0.17.0 and 0.19.0 wheels): ``workspace1 = (M x topk, max(N, K))``, ``workspace2 = (M x topk x max(2N, K),)``,
    ``output = (M, K)``, where Marlin's ``N`` is the rank's expert width itself (``moe_problem_size`` ->
    ``marlin_moe_intermediate_size``), in the activation dtype (``workspace_dtype`` is not overridden); 0.13.0's
    ``Fp8MoEMethod`` calls ``fused_marlin_moe`` itself, whose caches are freed after the layer. FP8 experts on an
    AMD GPU run ``TritonExperts`` (:func:`fp8_moe_takes_rocm_triton`): the Triton shapes above; so do block-FP8
    experts on compute capability 9.0 in 0.19.0 without expert parallelism (:func:`fp8_moe_takes_hopper_triton`). Other
    quantized experts (FP8 on CUDA 8.9 and above, MXFP4, NVFP4, INT4 / INT8 Marlin MoE methods) return 0: their kernels
    or their call path (a direct ``fused_marlin_moe`` or ``triton_kernel_moe_forward`` call frees its caches) were
    not read for these releases.

    At ``--data-parallel-size`` > 1 without expert parallelism the experts run every DP rank's rows, so ``M`` is
    ``dp x tokens``: the layer dispatches the ranks' hidden states before the experts (``vllm@0.14.0:vllm/
    model_executor/layers/fused_moe/layer.py::FusedMoE.forward_impl``, ``do_naive_dispatch_combine`` when
    ``dp_size > 1`` and the method is not a ``FusedMoEModularMethod``; ``vllm@0.19.0:.../fused_moe/runner/
    default_moe_runner.py::_maybe_dispatch``, or the kernel's own naive DP prepare step), the default
    ``allgather_reducescatter`` all-to-all gathering them (``AgRsAll2AllManager.dispatch``), and every rank
    profiles the same ``tokens``; ``FusedMoEParallelConfig.make`` flattens TP across DP, so ``N`` is divided by
    ``tp x dp``. [shapes from source]"""
    lo, hi = MOE_WORKSPACE_KEPT
    if cfg.era != "v1" or not model.num_experts or not lo <= cfg.version < hi:
        return 0
    if cfg.dp > 1 and settings.enable_expert_parallel:
        return 0  # DP + EP: batched experts and the all-to-all kernels' own buffers (not read)
    quant = (settings.quantization or model.quant_method or "").lower()
    marlin = False
    if quant:
        if not fp8_moe_experts(quant, model):
            return 0  # other quantized experts: the MXFP4, NVFP4, INT4 / INT8 kernels (not read)
        marlin = fp8_moe_takes_marlin(settings, cfg)
        if not (
            marlin
            or fp8_moe_takes_rocm_triton(settings, cfg)
            or fp8_moe_takes_hopper_triton(settings, model, cfg)
        ):
            return 0  # FP8 on CUDA 8.9 and above: FlashInfer, DeepGEMM, CUTLASS or Triton (not decided here)
    elif not unquantized_moe_takes_triton(settings, model, cfg):
        return 0
    c = model.text_config or model.config or {}
    inter = model.moe_intermediate_size or model.intermediate_size
    if not inter or tokens <= 0:
        return 0
    topk = moe_top_k(c)
    k = model.hidden_size
    # at DP > 1 (no expert parallelism here) the layer runs every DP rank's rows and each rank holds 1/(tp x dp) of
    # every expert (dp_moe_gather_bytes)
    rows, tp_moe = tokens * max(1, cfg.dp), cfg.tp * max(1, cfg.dp)
    chunk = rows if cfg.version >= (0, 19, 0) else MOE_MK_CHUNK_TOKENS
    if marlin:  # MarlinExperts: N is the rank's expert width
        n = inter if settings.enable_expert_parallel else inter // max(1, tp_moe)
        ws13, ws2 = topk * max(n, k), topk * max(2 * n, k)
    else:  # TritonExperts: N is the rank's w13 rows, 2 x the expert width
        n = 2 * inter if settings.enable_expert_parallel else 2 * inter // max(1, tp_moe)
        ws13, ws2 = topk * max(n // 2, k), topk * max(n, k)
    return int(_mk_buffer_elems(rows, chunk, ws13, ws2, k) * cfg.dtype_bytes)


def moe_forward_excess(workspace: int, tokens: int, inter_eff: int, tp: int, dtype_bytes: int) -> int:
    """Bytes by which the MoE experts' kept workspace (``workspace``, :func:`moe_workspace_bytes`) exceeds the
    ``3 x I_eff / tp`` MLP intermediates that :func:`kvlint.memory.calibration.activation_bytes` counts for each of
    the profile's ``tokens`` in the forward pass (``inter_eff`` elements per token, ``dtype_bytes`` each), else 0.
    In the releases where the modular kernel takes its buffers from the workspace manager those buffers are the
    experts' intermediates, live while the MoE layer runs, and each shape is ``max(expert width, hidden size)``
    (``TritonExperts`` / ``MarlinExperts.workspace_shapes``), so with experts narrower than the hidden size (GLM-4.x,
    Qwen3 MoE: 1,536 or 768 against 5,120 or 2,048) the layer holds more than ``3 x I_eff``. The excess is added to
    the forward pass (``forward_extra``), whose other terms (``4 x hidden`` per token) stay as they are."""
    if workspace <= 0 or tokens <= 0:
        return 0
    counted = tokens * 3 * inter_eff / max(1, tp) * dtype_bytes
    return max(0, int(workspace - counted))


@per_model
def _expert_fraction(model: ModelSpec) -> float:
    """Share of the per-layer weights that are routed experts (split over EP ranks instead of TP), from
    :func:`kvlint.models.weights.param_breakdown`."""
    parts = param_breakdown(model)
    lin, exp = int(parts.get("linear", 0)), int(parts.get("experts", 0))
    return exp / (lin + exp) if lin + exp else 0.0


_MTP_KEYS = ("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules")

#: How a :class:`PlanError` for a ``--speculative-config`` vLLM refuses with this model begins (its
#: :attr:`~kvlint.memory.refusal.PlanRefusal.VLLM_MTP_COUNT`, which KV502 reports at the flag)
SPEC_REFUSED = "--speculative-config"


def mtp_count_refusal(settings: VllmSettings, facts: ModelFacts) -> str | None:
    """vLLM's refusal of an MTP ``num_speculative_tokens`` that the target's MTP layers cannot reuse, or None.

    Without a draft ``model`` an MTP method drafts from the target checkpoint, whose config vLLM rewrites with
    ``n_predict`` = its MTP layer count (``SpeculativeConfig.hf_config_override``: ``num_nextn_predict_layers`` for
    DeepSeek / GLM / MiMo / Step 3.5-3.7, ``mtp_num_hidden_layers`` for Qwen3-Next / 3.5, ``num_mtp_modules`` for
    MiniMax M3; kvlint's :attr:`ModelFacts.mtp_config_layers`), and then refuses a count above ``n_predict`` that is
    not a multiple of it: ``ValueError(f"num_speculative_tokens:{k} must be divisible by {n_predict=}")`` ("Ensure
    divisibility for MTP module reuse"; ``SpeculativeConfig.__post_init__`` in 0.9.2, 0.10.1, 0.11.0, 0.12.0, 0.13.0
    and 0.26.0, ``SpeculatorConfig.resolve_num_speculative_tokens`` in 0.34.0). The message starts with
    :data:`SPEC_REFUSED`; the plan raises it as a :class:`PlanError` of
    :attr:`~kvlint.memory.refusal.PlanRefusal.VLLM_MTP_COUNT`."""
    k = settings.num_speculative_tokens
    if not k or settings.speculative_model is not None or settings.speculative_model_id:
        return None
    if "mtp" not in (settings.speculative_method or "").lower():
        return None
    n = facts.mtp_config_layers
    if n <= 0 or k <= n or k % n == 0:
        return None
    return (
        f"{SPEC_REFUSED} asks for {k} speculative tokens from the model's {n} MTP layers: vLLM's SpeculativeConfig "
        f"raises ValueError('num_speculative_tokens:{k} must be divisible by n_predict={n}') at start-up (a count "
        f"above n_predict reuses the MTP modules in whole rounds)"
    )


def _mtp_layers(model: ModelSpec, settings: VllmSettings, facts: ModelFacts | None = None) -> int:
    """MTP draft layers vLLM adds to the KV pool when speculative decoding runs without a separate draft model:
    ``num_nextn_predict_layers`` (DeepSeek-V3/GLM), ``mtp_num_hidden_layers`` (Qwen3-Next/Qwen3.5) from the
    config, else 1 for an explicit ``method`` containing ``mtp``; 0 without ``num_speculative_tokens`` or for
    n-gram/EAGLE-without-model methods (``facts``: the model's :class:`ModelFacts`, derived when None). Each MTP layer is an attention layer of the target's shape
    (``vllm/model_executor/models/deepseek_mtp.py``, ``vllm/v1/spec_decode/eagle.py`` draft KV specs). [§6 item 10]"""
    if not settings.num_speculative_tokens or settings.speculative_model is not None:
        return 0
    method = (settings.speculative_method or "").lower()
    if method in ("ngram", "suffix", "medusa"):
        return 0
    n = (facts or model_facts(model)).mtp_config_layers
    if n:
        return n
    return 1 if "mtp" in method else 0


#: Architectures whose vLLM module builds its rotary embedding in float32 whatever the model dtype:
#: ``vllm@0.10.1.1`` - ``vllm@0.34.0:vllm/model_executor/models/gpt_oss.py::OAIAttention`` calls
#: ``get_rope(..., dtype=torch.float32)``, and ``RotaryEmbedding.__init__`` casts the cos/sin cache to that dtype.
_FP32_ROPE_ARCHITECTURES = frozenset({"GptOssForCausalLM"})

#: MiniMax-Text-01 / MiniMax-M1 (``vllm/model_executor/models/minimax_text_01.py``, registered as these three names):
#: one float32 cos/sin cache of ``min(max_position_embeddings, max_model_len)`` positions x the config's
#: ``rotary_dim`` (64 of MiniMax-M1's 128-wide heads). ``MiniMaxText01ForCausalLM.__init__`` copies the engine's
#: ``max_model_len`` into the config and ``MiniMaxText01DecoderLayer`` caps ``max_position`` with it; the cache is
#: ``MiniMaxText01RotaryEmbedding(..., cache_dtype=torch.float32)`` on the model up to 0.10.1.1 and
#: ``get_rope(..., rotary_dim, dtype=torch.float32)`` (one shared instance) in 0.10.2 - 0.23.x, whose
#: ``partial_rotary_factor = rotary_dim / head_dim`` from 0.14.0 is the same width (read in vllm@0.9.2, 0.10.0,
#: 0.10.1.1, 0.10.2, 0.11.0, 0.14.0, 0.20.0, 0.23.0; the file is gone from 0.24.0).
_MINIMAX_TEXT01_ARCHITECTURES = frozenset(
    {"MiniMaxForCausalLM", "MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM"}
)


@per_model
def _rotary_cache_bytes(model: ModelSpec, dbytes: int, max_model_len: int | None = None) -> int:
    """RoPE cos/sin cache held with the weights: max_position_embeddings x rotary_dim x dtype bytes
    (``vllm/model_executor/layers/rotary_embedding.py::RotaryEmbedding._compute_cos_sin_cache``; one shared
    instance), rotary_dim = head_size x ``partial_rotary_factor`` (GPT-NeoX's ``rotary_pct``, vllm
    ``gpt_neox.py::GPTNeoXAttention``). Explains vLLM's 14.99 GiB vs 14.96 GiB of Llama-3.1-8B parameters (gt-056).
    4 bytes for the architectures of :data:`_FP32_ROPE_ARCHITECTURES` (gpt-oss: 131,072 x 64 x 4 B = 32 MiB).
    MiniMax-Text-01/M1 (:data:`_MINIMAX_TEXT01_ARCHITECTURES`): float32, ``rotary_dim`` wide, positions capped
    by ``max_model_len`` when given (MiniMax-M1-80k at 65,536 tokens: 16 MiB, where the uncapped bf16 count of
    10,240,000 x 128 x 2 B was 2.44 GiB)."""
    archs = set(model.architectures or ())
    c = model.text_config or model.config or {}
    mp = model.max_position_embeddings or 0
    if archs & _MINIMAX_TEXT01_ARCHITECTURES:
        rot = as_int(c.get("rotary_dim")) or model.head_size
        if max_model_len and max_model_len > 0:
            mp = min(mp, max_model_len) if mp else max_model_len
        size = mp * rot * 4
        return int(size) if 0 <= size <= MAX_INT_SETTING else 0
    if archs & _FP32_ROPE_ARCHITECTURES:
        dbytes = 4
    rs = dfl.rope_scaling_of(c)
    # config numbers read as finite numbers (NaN, a string or a list raised here on every plan of the model: "can't
    # multiply sequence by non-int"); a cache past 2^63 - 1 bytes is not one
    orig = finite_number(rs.get("original_max_position_embeddings")) if rs else None
    if rs and rs.get("rope_type") == "yarn" and orig:
        factor = finite_number(rs.get("factor")) or 1.0
        mp = int(orig * factor) if abs(orig * factor) <= MAX_INT_SETTING else mp
    # GPT-NeoX names the fraction rotary_pct (vllm gpt_neox.py GPTNeoXAttention: rotary_dim = head_size x rotary_pct)
    part = finite_number(c.get("partial_rotary_factor") or c.get("rotary_pct")) or 1.0
    rot = int(model.head_size * part) if abs(model.head_size * part) <= MAX_INT_SETTING else model.head_size
    if model.is_mla:
        rot = as_int(c.get("qk_rope_head_dim")) or 64
    size = mp * rot * dbytes
    return int(size) if 0 <= size <= MAX_INT_SETTING else 0


@dataclass(frozen=True)
class ModelFacts:
    """What every vLLM plan of one model reads from its config and layers, derived once per model
    (:func:`model_facts`) instead of once per plan.

    Attributes:
        counts: the model's distinct layer specs with their counts (:func:`kvlint.memory.kv.layer_counts`).
        stateful: some layer holds KV or state (a kind other than ``none``); without one there is no plan.
        sliding: some layer is sliding-window or chunked attention (bounded by window + in-flight tokens).
        chunked: some layer is chunked local attention (the hybrid KV-cache manager is then off).
        multimodal: the config declares a vision or audio tower (:func:`kvlint.memory.multimodal.is_multimodal`).
        vision: the config has a ``vision_config`` dict, so the profile run may pass images through an encoder
            (:func:`kvlint.memory.multimodal.encoder_profile` answers None without one).
        inter_eff: the MLP width one token meets (elements): ``top-k x moe_intermediate_size`` for MoE models,
            else ``intermediate_size`` (:func:`_inter_eff`).
        expert_fraction: share of the per-layer weights in routed experts (:func:`_expert_fraction`).
        mtp_config_layers: MTP layers the config declares (``num_nextn_predict_layers``,
            ``mtp_num_hidden_layers``, ``num_mtp_modules``; 0 when none, see :func:`_mtp_layers`).
        last_state_layer: the last layer of a kind other than ``none`` (the shape of an MTP layer), or None.
        embed_elements: ``vocab_size x hidden_size``, elements of the embedding (and of an untied lm_head).
    """

    counts: LayerCounts
    stateful: bool
    sliding: bool
    chunked: bool
    multimodal: bool
    vision: bool
    inter_eff: int
    expert_fraction: float
    mtp_config_layers: int
    last_state_layer: LayerSpec | None
    embed_elements: int


def _vision_config(model: ModelSpec) -> dict[str, Any]:
    """The config's ``vision_config`` dict (the thinker's for Qwen2.5-Omni), else {} (what
    :func:`kvlint.memory.multimodal.encoder_profile` reads)."""
    return tower_config(model.config or {}, "vision_config")


@per_model
def model_facts(model: ModelSpec) -> ModelFacts:
    """The :class:`ModelFacts` of ``model`` (memoised per model, :func:`kvlint.memory.memo.per_model`: a
    ModelSpec is frozen and nothing edits its config, so the facts stay the model's)."""
    counts = layer_counts(model.layers)
    kinds = {lay.kind for lay, _ in counts}
    c = model.text_config or model.config or {}
    mtp = 0
    for k in _MTP_KEYS:
        n = c.get(k)
        if isinstance(n, int) and n > 0:
            mtp = n
            break
    return ModelFacts(
        counts=counts,
        stateful=bool(kinds - {"none"}),
        sliding=bool(kinds & {"sliding", "chunked"}),
        chunked="chunked" in kinds,
        multimodal=is_multimodal(model),
        vision=bool(_vision_config(model)),
        inter_eff=_inter_eff(model),
        expert_fraction=_expert_fraction(model),
        mtp_config_layers=mtp,
        # an MTP layer is shaped like the last layer but holds its own KV (not a Gemma KV-sharing layer's None)
        last_state_layer=next(
            (
                replaced(lay, kv_shared=False) if lay.kv_shared else lay
                for lay in reversed(model.layers)
                if lay.kind != "none"
            ),
            None,
        ),
        embed_elements=model.vocab_size * model.hidden_size,
    )


@dataclass(frozen=True)
class ReleaseSwitches:
    """The release-keyed switches every vLLM plan reads, evaluated once per version (:func:`release_switches`)
    instead of compared again in each plan. Each is the function of :mod:`kvlint.memory.versions` it names.

    Attributes:
        text: the version as printed (:func:`~kvlint.memory.versions.fmt_version`).
        default_utilization: ``--gpu-memory-utilization`` default (``default_gpu_memory_utilization``).
        budget_ceil: the budget is ``ceil(total x util)`` (>= 0.27.0), else ``int(total x util)`` (§1.2).
        hybrid_allocator: the hybrid KV-cache manager exists (``hybrid_allocator_available``).
        in_flight_doubled: >= 0.33.0, a sliding layer keeps twice ``max_num_batched_tokens`` in flight without PP.
        cudagraph_env: ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` is read (``cudagraph_env_exists``).
        cudagraph_default: the CUDA-graph estimate is deducted by default (``cudagraph_subtracted_by_default``).
        kv_cache_memory_bytes: ``--kv-cache-memory-bytes`` exists (``has_kv_cache_memory_bytes``).
        null_block: the fit check subtracts the null block (``has_null_block_in_fit_check``).
        capacity_concurrency: capacity = concurrency x length (``capacity_is_concurrency_times_len``).
        groups_min_block: >= 0.9.0, capacity counts blocks per group times the smallest group block (§1.4).
        extensible_kv_cache: the extensible KV cache exists (``has_extensible_kv_cache``, §1.2.5).
        whole_model_fit: with pipeline parallelism the fit check takes every stage's layers against the smallest
            stage's memory (``fit_check_whole_model_under_pp``, 0.14.0 - 0.16.x).
    """

    text: str
    default_utilization: float
    budget_ceil: bool
    hybrid_allocator: bool
    in_flight_doubled: bool
    cudagraph_env: bool
    cudagraph_default: bool
    kv_cache_memory_bytes: bool
    null_block: bool
    capacity_concurrency: bool
    groups_min_block: bool
    extensible_kv_cache: bool = False
    whole_model_fit: bool = False


@per_object
def release_switches(v: Version) -> ReleaseSwitches:
    """The :class:`ReleaseSwitches` of release ``v``, memoised by the identity of ``v`` (:func:`per_object`;
    :func:`~kvlint.memory.versions.resolve_version` hands out one object per version text, so the plans of a
    run share a handful of entries)."""
    return ReleaseSwitches(
        text=fmt_version(v),
        default_utilization=default_gpu_memory_utilization(v),
        budget_ceil=v >= (0, 27, 0),
        hybrid_allocator=hybrid_allocator_available(v),
        in_flight_doubled=v >= (0, 33, 0),
        cudagraph_env=cudagraph_env_exists(v),
        cudagraph_default=cudagraph_subtracted_by_default(v),
        kv_cache_memory_bytes=has_kv_cache_memory_bytes(v),
        null_block=has_null_block_in_fit_check(v),
        capacity_concurrency=capacity_is_concurrency_times_len(v),
        groups_min_block=v >= (0, 9, 0),
        extensible_kv_cache=has_extensible_kv_cache(v),
        whole_model_fit=fit_check_whole_model_under_pp(v),
    )


def plan_vllm(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
) -> MemoryPlan:
    """vLLM's memory arithmetic for the limiting rank (bytes per GPU). See :func:`plan_vllm_detailed`.

    Raises :class:`PlanError` when no plan is possible (no KV-holding layers, non-positive memory total).
    """
    return plan_vllm_detailed(
        settings, model, total_bytes, gpu_name=gpu_name, compute_capability=compute_capability
    ).plan


def plan_vllm_detailed(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
    prelude: PlanPrelude | None = None,
) -> VllmPlanDetail:
    """Full vLLM start-up prediction per GPU, in vLLM's own order of steps (docs/engine-memory-model.md §1):

    1. :func:`resolve_startup` -- what vLLM settles before loading anything: era (§1.1), dtype (§1.7),
       max_model_len (§1.8), batch defaults (§1.9), block size, pipeline stages (§1.4, §1.10), the budget
       ``ceil(total x util)`` (default util 0.90, 0.92 from 0.20.0) and whether CUDA graphs are deducted (§1.2.2);
    2. :func:`split_weights` -- the checkpoint's bytes per rank under TP/PP/EP with ``--cpu-offload-gb`` (§1.13);
    3. :func:`stage_memory` per pipeline stage -- weights, the calibrated activation, non-torch and CUDA-graph
       terms, the KV pool, its groups and ``num_blocks = floor(kv / bytes_per_block)`` (§1.2, §1.5); the stage
       with the fewest blocks limits capacity (min over ranks);
    4. :func:`fit_check` -- capacity and concurrency in the version's formula, the fit check (null block from
       0.29) and vLLM's estimated maximum model length (§1.11).

    Args:
        settings: resolved flags. model: the ModelSpec. total_bytes: CUDA-reported total per GPU.
        gpu_name: device name (batch defaults look for ``h100``/``a100``). compute_capability: ``"9.0"``.
        prelude: :func:`plan_prelude` of these ``settings`` and ``model``, when the caller plans them on several
            GPUs (computed here when None; the plan is the same either way).

    Raises:
        PlanError: total_bytes <= 0, or the model has no attention or state layers.
    """
    if total_bytes <= 0:
        raise PlanError("GPU memory total must be positive")
    if not (prelude.facts if prelude is not None else model_facts(model)).stateful:
        raise PlanError(f"model {model.id or '?'} has no attention layers and no state: nothing to cache")
    cfg = resolve_startup(
        settings,
        model,
        total_bytes,
        gpu_name=gpu_name,
        compute_capability=compute_capability,
        prelude=prelude,
    )
    return _assemble(settings, model, total_bytes, cfg, split_weights(settings, model, cfg))


def _assemble(
    settings: VllmSettings, model: ModelSpec, total_bytes: int, cfg: StartupConfig, weights: WeightSplit
) -> VllmPlanDetail:
    """Steps 3 and 4 of :func:`plan_vllm_detailed` after its start-up ``cfg`` and weight split ``weights``: every
    stage's memory, the limiting stage's fit check, and the plan. Raises :class:`PlanError` when no stage holds
    KV."""
    if len(cfg.stage_layers) == 1:  # one pipeline stage (the common case): it limits
        only = stage_memory(settings, model, cfg, weights, 0)
        usable = [only] if only is not None else []
    else:
        stages = [stage_memory(settings, model, cfg, weights, i) for i in range(len(cfg.stage_layers))]
        usable = [st for st in stages if st is not None]
    if not usable:
        raise PlanError(f"model {model.id or '?'} has no KV-holding layers on any rank")
    # the first stage with the fewest blocks
    limit = usable[0] if len(usable) == 1 else min(usable, key=lambda st: st.num_blocks)
    fit = fit_check(settings, cfg, limit)
    if len(usable) > 1 and cfg.era == "v1" and (cfg.release or release_switches(cfg.version)).whole_model_fit:
        fit = _whole_model_fit(settings, cfg, usable, limit, fit)
    # the notes are written when first read (PlanNotes): a fleet's or a remedy's plan is never printed
    notes = PlanNotes((*cfg.notes, *limit.notes, *fit.notes))
    plan = MemoryPlan(  # positional, in the field order: see resolve_startup's StartupConfig
        "vllm",  # engine
        (cfg.release or release_switches(cfg.version)).text,  # engine_version
        cfg.era,  # era
        int(total_bytes),  # total_bytes
        float(cfg.gpu_memory_utilization),  # gpu_memory_utilization
        # with --kv-cache-memory-bytes the process holds weights + reserve + exactly that KV: report that sum
        limit.held_bytes if limit.bypass else int(cfg.budget_bytes),  # budget_bytes
        int(limit.weights),  # weights_bytes
        int(limit.activation),  # activation_bytes
        int(limit.non_torch),  # non_torch_bytes
        int(limit.cudagraph),  # cudagraph_bytes
        int(limit.kv),  # kv_cache_bytes
        int(limit.kv_low),  # kv_cache_bytes_low
        int(limit.kv_high),  # kv_cache_bytes_high
        int(limit.kv_bytes_per_token),  # kv_bytes_per_token
        int(limit.block_size),  # block_size
        int(limit.bytes_per_block),  # bytes_per_block
        int(fit.num_blocks),  # num_blocks
        int(limit.num_blocks_low),  # num_blocks_low
        int(limit.num_blocks_high),  # num_blocks_high
        int(fit.capacity_tokens),  # capacity_tokens
        int(fit.max_model_len),  # max_model_len
        fit.max_model_len_source,  # max_model_len_source
        int(cfg.derived_max_model_len),  # derived_max_model_len
        int(fit.needed_bytes),  # per_request_bytes
        float(fit.max_concurrency),  # max_concurrency
        float(fit.max_concurrency_low),  # max_concurrency_low
        float(fit.max_concurrency_high),  # max_concurrency_high
        int(cfg.max_num_seqs),  # max_num_seqs
        int(cfg.max_num_batched_tokens),  # max_num_batched_tokens
        cfg.tp,  # tensor_parallel_size
        cfg.pp,  # pipeline_parallel_size
        cfg.dp,  # data_parallel_size
        cfg.dtype,  # dtype
        cfg.kv_cache_dtype,  # kv_cache_dtype
        weights.source
        + (
            f"; + {weights.rotary_bytes / 2**20:.0f} MiB RoPE cos/sin cache per GPU"
            if weights.rotary_bytes
            else ""
        )
        + (f"; {weights.replicated_source}" if weights.replicated else ""),  # weights_source
        notes,  # assumptions
    )
    return VllmPlanDetail(
        plan,
        fit.fits,
        int(fit.needed_bytes),
        int(fit.available_bytes),
        int(fit.estimated_max_model_len),
        fit.error,
        limit.groups,
        cfg.stage_layers,
        int(fit.per_request_blocks),
        *mamba_block_count(settings, cfg, limit, int(fit.num_blocks), any(_has_state(st) for st in usable)),
        length_refused=cfg.length_refused,
        v0_fallback=cfg.v0_fallback,
        v2_runner=cfg.v2_runner,
        speculative_method=settings.speculative_method,
        override_blocks=max(0, int(settings.num_gpu_blocks_override or 0)),
    )


def override_over_device(plan: MemoryPlan, blocks: int) -> tuple[int, int] | None:
    """``(kv_bytes, other_bytes)`` per GPU when a ``--num-gpu-blocks-override`` of ``blocks`` sizes a KV cache that
    does not fit the device beside the rest, else None (also for ``blocks`` of 0, no override).

    ``kv_bytes`` = ``blocks`` x ``plan.bytes_per_block``, what vLLM allocates; ``other_bytes`` the activation peak,
    non-torch memory and CUDA graphs at the optimistic end of kvlint's band (``budget - weights -
    kv_cache_bytes_high``, at least 0: the band's fixed part can take them all). The override does not fit when
    ``kv_bytes + weights + other_bytes`` exceeds ``plan.total_bytes``.

    How vLLM applies the override (read in the 0.10.1, 0.11.0, 0.14.0 and 0.19.0 sources): the worker profiles its
    memory as without it, and the V1 start-up fit check compares one max-model-len request with that *measured*
    memory (``vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs`` -> ``check_enough_kv_cache_memory``); then
    ``may_override_num_blocks`` replaces the block count it derived, and every KV cache tensor is sized
    ``page_size x num_blocks`` from it (``get_kv_cache_config_from_groups``), with no look at the memory left or at
    ``gpu_memory_utilization``. ``GPUModelRunner._allocate_kv_cache_tensors`` (``vllm/v1/worker/gpu_model_runner.py``)
    allocates them with ``torch.zeros`` (V0: ``LLMEngine._initialize_kv_caches``, then ``CacheEngine`` the same
    way): past the device that raises ``torch.OutOfMemoryError`` and the engine never starts; a KV cache that
    allocates but leaves less than the activation peak and the CUDA graphs need runs out of memory at graph capture
    (after the allocation, ``Worker.compile_or_warm_up_model``) or at the first full batch. The bytes are those of
    the stage ``plan`` describes (the limiting pipeline stage)."""
    if blocks <= 0:
        return None
    kv = blocks * plan.bytes_per_block
    other = max(0, plan.budget_bytes - plan.weights_bytes - plan.kv_cache_bytes_high)
    if kv + plan.weights_bytes + other <= plan.total_bytes:
        return None
    return kv, other


def _has_state(st: StageMemory) -> bool:
    """The stage holds a Mamba-style state group (vLLM's ``KVCacheConfig.has_mamba_layers`` on its workers)."""
    return any(g.kind == "mamba" for g in st.groups)


def mamba_block_count(
    settings: VllmSettings,
    cfg: StartupConfig,
    st: StageMemory,
    num_blocks: int,
    has_state: bool | None = None,
) -> tuple[int, int, int]:
    """The KV-cache blocks vLLM compares ``max_num_seqs`` with before capturing CUDA graphs for a model with
    Mamba-style state layers, ``(predicted, low, high)`` over kvlint's band; ``(0, 0, 0)`` when the engine makes
    no such check.

    vLLM (``vllm@0.34.0:vllm/config/compilation.py::CompilationConfig.resolve_cudagraph_mode_and_sizes``, from
    ``GPUModelRunner.initialize_kv_cache``; 0.22.0 the same from ``GPUModelRunner._check_and_update_cudagraph_mode``)
    raises "max_num_seqs (N) exceeds available Mamba cache blocks (M)" when the CUDA-graph mode keeps FULL decode
    graphs, the worker's ``KVCacheConfig.has_mamba_layers`` (a ``MambaSpec`` layer: Mamba-1/2, gated DeltaNet, KDA,
    linear attention) and ``max_num_seqs > kv_cache_config.num_blocks``. ``num_blocks`` is the pool's block count
    after the hybrid page-size unification (§1.5: one block costs every group's page, the attention block size
    grown until its page covers the padded state page), ``available // bytes_per_block``, the smallest over the
    workers (``vllm/v1/core/kv_cache_planning.py::get_kv_cache_configs``), i.e. ``num_blocks`` here (the limiting
    stage's ``kv // bytes_per_block``; ``--num-gpu-blocks-override`` replaces it). ``has_state``: some pipeline
    stage holds state layers (every worker's config has the smallest stage's block count; None: ``st``'s own
    groups decide). With the extensible KV cache (>= 0.34.0, §1.2.5) the config the runner
    checks holds the pool *reserved* from the profile (``vllm/v1/engine/core.py``: "num_blocks is the reserved
    capacity until the post-warmup measurement"), ``budget - weights - activation - non-torch`` with no CUDA-graph
    estimate, so M is counted from it. No check: releases before
    :func:`~kvlint.memory.versions.refuses_max_num_seqs_over_mamba_blocks`, the V0 engine, ``--enforce-eager`` (no
    graphs), a model without state layers, and ``--kv-cache-memory-bytes``'s fixed pool is counted like the
    profiled one. **[assumed]** the default ``cudagraph_mode`` (FULL_AND_PIECEWISE; kvlint does not read
    ``--compilation-config``) and the Mamba backends' CUDA-graph support keep FULL decode graphs, also with
    speculative decoding (``UNIFORM_BATCH`` for Mamba and GDN in 0.34.0, ``vllm/v1/attention/backends/mamba_attn.py``,
    ``gdn_attn.py``). ``--mamba-cache-mode`` (``all``/``align`` with prefix caching) is not modelled: it changes
    the state page and the blocks a request holds, not this comparison.
    """
    if has_state is None:
        has_state = _has_state(st)
    if cfg.era != "v1" or settings.enforce_eager or not has_state:
        return 0, 0, 0
    if not refuses_max_num_seqs_over_mamba_blocks(cfg.version):
        return 0, 0, 0
    if settings.num_gpu_blocks_override:
        o = int(settings.num_gpu_blocks_override)
        return o, o, o
    bpb = max(1, st.bytes_per_block)
    if cfg.extensible and not st.bypass:
        reserved = cfg.budget_bytes - st.weights - st.activation - st.non_torch
        return (
            max(0, reserved // bpb),
            max(0, (reserved - (st.kv - st.kv_low)) // bpb),
            max(0, (reserved + (st.kv_high - st.kv)) // bpb),
        )
    return max(0, num_blocks), max(0, st.num_blocks_low), max(0, st.num_blocks_high)


def _whole_model_fit(
    settings: VllmSettings, cfg: StartupConfig, stages: list[StageMemory], limit: StageMemory, fit: FitCheck
) -> FitCheck:
    """The fit check of vLLM 0.14.0 - 0.16.x under pipeline parallelism (§1.11): one max-model-len request of the
    *whole* model (the KV groups of every stage merged) against the smallest stage's KV memory, and the estimated
    maximum length (or ``--max-model-len auto``) from the same pair (``vllm@0.15.0:vllm/v1/core/kv_cache_utils.py::
    get_kv_cache_configs``: ``_check_enough_kv_cache_memory(min(available_memory), _max_memory_usage_bytes_from_groups
    (global groups))``). The stage's own capacity and concurrency (``fit``, from the limiting stage ``limit``) are
    kept; the check's figures, verdict and error come from the whole model. Stages whose groups pack on one block
    axis (``stride_bytes``, DeepSeek V4) are left to the per-stage check."""
    merged: dict[tuple[str, int, int, int | None], KVGroup] = {}
    for st in stages:
        for g in st.groups:
            if g.stride_bytes:
                return fit
            key = (g.kind, g.block_size, g.page_bytes, g.window)
            prev = merged.get(key)
            merged[key] = g if prev is None else replace(prev, layers=prev.layers + g.layers)
    groups = list(merged.values())
    bpb = sum(g.page_bytes * g.layers for g in groups)
    kv = min(st.kv for st in stages)
    whole = replace(
        limit,
        kv=kv,
        kv_low=min(st.kv_low for st in stages),
        kv_high=min(st.kv_high for st in stages),
        groups=tuple(groups),
        bytes_per_block=bpb,
        num_blocks=max(0, kv) // max(1, bpb),
    )
    check = fit_check(settings, cfg, whole)
    if cfg.auto_fit and check.max_model_len != fit.max_model_len:
        # --max-model-len auto fits the whole model's request, then every stage plans with that length
        fit = fit_check(settings, replace(cfg, max_model_len=check.max_model_len, auto_fit=False), limit)
        fit = replace(fit, max_model_len_source=check.max_model_len_source)
    note = (
        f"pipeline parallel {len(cfg.stage_layers)}: vLLM {fmt_version(cfg.version)} checks one request of the whole "
        f"model ({sum(g.layers for g in groups)} layers, {check.needed_bytes / GiB:.2f} GiB) against the smallest "
        f"stage's KV memory ({check.available_bytes / GiB:.2f} GiB), not each stage's own layers (0.14.0 - 0.16.x)"
    )
    return replace(
        fit,
        needed_bytes=check.needed_bytes,
        available_bytes=check.available_bytes,
        estimated_max_model_len=check.estimated_max_model_len,
        fits=check.fits and fit.fits,
        error=check.error if not check.fits else fit.error,
        notes=(*fit.notes, *check.notes, note),
    )


# The step records StartupConfig, WeightSplit, StageMemory and FitCheck exist within one plan: each is built once
# by its step and read by the next ones, never kept or changed. They are plain dataclasses, not frozen: a frozen
# dataclass's __init__ sets each field through object.__setattr__, about five times the cost of a plain one, and
# a fleet builds the four of them on every GPU. (The plan itself, VllmPlanDetail and its MemoryPlan, is frozen.)


@dataclass
class StartupConfig:
    """Step 1: what vLLM settles from its arguments, the model and the GPU before it loads anything.

    Attributes:
        version, era (``v0``/``v1``); tp, pp, dp; dtype and its bytes; kv_cache_dtype and its bytes per element;
        max_model_len (tokens) with its source (``user``/``derived``/``auto``), the derived length, and whether
        ``--max-model-len auto`` lets vLLM fit it (``auto_fit``); chunked_prefill, max_num_batched_tokens,
        max_num_seqs (the version's defaults for this GPU unless set); layers: the target's layers plus draft
        or MTP layers sharing the pool; block_size (tokens); stage_layers: layers per pipeline stage; hybrid:
        the hybrid KV-cache manager is on; in_flight_tokens: tokens a sliding/chunked layer keeps beyond its
        window; gpu_memory_utilization and budget_bytes (per GPU); cudagraphs_deducted: the CUDA-graph estimate
        comes off the KV budget; notes: the assumptions, in the order vLLM meets them; compute_capability and
        vendor (``nvidia``/``amd``) of the GPU; sampled_rows: the dummy sampler's rows (V1 ``min(max_num_seqs,
        max_num_batched_tokens)``, V0 the dummy sequences); encoder: the multimodal encoder profile or None;
        facts: the model's :class:`ModelFacts` (None: the later steps derive them, :func:`model_facts`);
        release: the version's :class:`ReleaseSwitches` (None: derived, :func:`release_switches`);
        decode_query_len: tokens per request of a uniform decode step that sizes the CUDA-graph captures
        (:func:`decode_query_len`); capture_model_max: the largest capture size the model's config sets in place
        of vLLM's default (:func:`model_capture_size`), else None; length_refused: why vLLM refuses the max_model_len (the prelude's);
        v0_fallback: why vLLM 0.8 - 0.10 falls back to V0 here (:func:`_era`), else None; pooling: the
        model runs on the pooling runner (:attr:`PlanPrelude.pooling`): no sampler in the profile, no LM head.
        nvls: the GPU can run NCCL's NVLink SHARP, whose buffer grows with the TP group's heads (None: not known;
        :func:`kvlint.memory.calibration.nvls_capable`), which sizes its part of the non-torch term
        (:func:`kvlint.memory.calibration.nvls_buffer_bytes`); nvls_domain: the GPUs one NVLS communicator spans
        (8 on HGX, 72 on GB200/GB300 NVL72), which caps the heads.
    """

    version: Version
    era: str
    tp: int
    pp: int
    dp: int
    dtype: str
    dtype_bytes: int
    kv_cache_dtype: str
    kv_bytes_per_element: int
    max_model_len: int
    max_model_len_source: str
    derived_max_model_len: int
    auto_fit: bool
    chunked_prefill: bool
    max_num_batched_tokens: int
    max_num_seqs: int
    layers: tuple[LayerSpec, ...]
    block_size: int
    stage_layers: tuple[int, ...]
    hybrid: bool
    in_flight_tokens: int
    gpu_memory_utilization: float
    budget_bytes: int
    cudagraphs_deducted: bool
    notes: tuple[str, ...]
    compute_capability: str | None = None
    vendor: str = "nvidia"
    sampled_rows: int = 0
    encoder: EncoderProfile | None = None
    facts: ModelFacts | None = None
    release: ReleaseSwitches | None = None
    extensible: bool = False
    headroom_bytes: int = 0
    decode_query_len: int = 1
    capture_model_max: int | None = None
    cudagraph_user: cal.CudagraphUser | None = None
    length_refused: str | None = None
    v0_fallback: str | None = None
    pooling: bool = False
    v2_runner: bool = False
    nvls: bool | None = None
    nvls_domain: int | None = None


@dataclass  # a step record of one container's plans: see StartupConfig
class PlanPrelude:
    """What :func:`resolve_startup` settles from the arguments and the model alone, before the GPU enters: the
    same on every GPU, so :func:`kvlint.memory.stage.plan_fleet` computes it once per container
    (:func:`plan_prelude`) and passes it to each GPU's :func:`plan_vllm_detailed`.

    Attributes:
        version (the release modelled), release (its :class:`ReleaseSwitches`), facts (the model's
        :class:`ModelFacts`); max_model_len (tokens), max_model_len_source, derived_max_model_len and auto_fit
        (§1.8); layers: the layers sharing the KV pool (the target's plus a draft model's or MTP layers);
        chunked_layers: one of them is chunked local attention; pp and stage_layers: pipeline stages and the
        layers of each (§1.10); gpu_memory_utilization: the user's, else the release default (§1.2). The notes
        of these steps, each kept apart so that :func:`resolve_startup` puts them where vLLM meets them:
        version_notes (the version assumed), length_notes (max_model_len, the KV connector), layer_notes,
        pp_notes, utilization_notes. compressed_layers: one of the pool's layers is a DeepSeek V4 compressed layer
        (:attr:`kvlint.types.LayerSpec.compress_ratio` set), which picks V4's block size. length_refused: why
        vLLM refuses the user's max_model_len (above the length it derives from config.json, without
        ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``: the note that ends with :data:`ABOVE_DERIVED_REFUSED`, less that end),
        else None. pooling: why vLLM runs the model with its pooling runner (an embedding, reranking or reward
        model: :func:`kvlint.memory.pooling.vllm_pooling`), None for the generate runner. features: what the V2 model
        runner's and the DBO unsupported-features checks read of the settings and the model
        (:func:`_runner_features`), read by :func:`_era` and :func:`_v2_runner` on every GPU.
    """

    version: Version
    release: ReleaseSwitches
    facts: ModelFacts
    max_model_len: int
    max_model_len_source: str
    derived_max_model_len: int
    auto_fit: bool
    layers: tuple[LayerSpec, ...]
    chunked_layers: bool
    pp: int
    stage_layers: tuple[int, ...]
    gpu_memory_utilization: float
    version_notes: tuple[str, ...]
    length_notes: tuple[str, ...]
    layer_notes: tuple[str, ...]
    pp_notes: tuple[str, ...]
    utilization_notes: tuple[str, ...]
    extensible: bool = False
    compressed_layers: bool = False
    length_refused: str | None = None
    features: vllm_runner.RunnerFeatures = vllm_runner.NO_FEATURES
    pooling: str | None = None


def extensible_kv_cache(settings: VllmSettings, rel: ReleaseSwitches, vendor: str | None = None) -> bool:
    """Whether vLLM sizes the pool with the extensible KV cache (§1.2.5), as
    ``vllm@0.34.0:vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache`` settles it: from 0.34.0, off with
    ``--no-enable-extensible-kv-cache``, and off where unsupported (:func:`extensible_kv_cache_unsupported`:
    ``--kv-cache-memory-bytes``, ``--num-gpu-blocks-override``, ``--enable-elastic-ep``, a KV connector sharing
    the cache through legacy CUDA IPC or its own memory pool, on ROCm one that registers it for RDMA). Unset, it is
    also off for a connector exporting FABRIC handles (NIXL) **[assumed]** without an IMEX channel (the
    ``/dev/nvidia-caps-imex-channels`` device a pod gets only on IMEX-enabled NVLink systems), as vLLM logs
    "Extensible KV cache off: without an IMEX channel, …"; ``--enable-extensible-kv-cache`` keeps it on there.
    ``vendor`` (``nvidia``/``amd``; None: not known yet, the ROCm case not decided). kvlint plans CUDA and ROCm
    devices only, both supported. **[assumed]** the driver supports virtual memory management (else vLLM turns it
    off at start-up, ``vllm/v1/engine/core.py``, "Disabling the extensible KV cache: …")."""
    if not rel.extensible_kv_cache or settings.enable_extensible_kv_cache is False:
        return False
    if extensible_kv_cache_unsupported(settings, vendor) is not None:
        return False
    return not ("exports_fabric" in settings.kv_cache_access and settings.enable_extensible_kv_cache is None)


def extensible_kv_cache_unsupported(settings: VllmSettings, vendor: str | None = None) -> str | None:
    """Why vLLM 0.34.0 cannot use its extensible KV cache with these settings, in its own words, or None
    (``vllm@0.34.0:vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache``, the ``unsupported`` reasons in
    its order; vLLM raises ``enable_extensible_kv_cache: REASON.`` when ``--enable-extensible-kv-cache`` was
    given). The ROCm reason only when ``vendor`` is ``amd``."""
    acc = frozenset(settings.kv_cache_access)
    if settings.kv_cache_memory_bytes is not None:
        return "it sizes the KV cache from measured memory, which kv_cache_memory_bytes overrides"
    if settings.num_gpu_blocks_override is not None:
        return "it sizes the KV cache from measured memory, which num_gpu_blocks_override overrides"
    if settings.enable_elastic_ep:
        return (
            "elastic EP scale-up skips warmup and reuses the profiled KV cache size, so no measurement would size "
            "the cache"
        )
    if "legacy_ipc" in acc:
        return (
            "a KV connector (e.g. LMCacheMPConnector) shares the KV cache through legacy CUDA IPC, which cannot "
            "export driver-mapped memory"
        )
    if "custom_mem_pool" in acc:
        return (
            "custom_mem_pool allocates the KV cache from a connector's memory pool, which a driver-mapped cache "
            "cannot use"
        )
    if vendor == "amd" and acc & {"registers", "exports_fabric"}:
        return (
            "on ROCm, UCX and RDMA cannot yet register driver-mapped memory, which connectors that register the KV "
            "cache (e.g. NIXL, Mooncake, MoRIIO, UMBP) require"
        )
    return None


def plan_prelude(settings: VllmSettings, model: ModelSpec) -> PlanPrelude:
    """The GPU-independent steps of :func:`resolve_startup` for ``settings`` and ``model`` (see
    :class:`PlanPrelude`): the release, max_model_len (§1.8), the layers sharing the pool, the pipeline split
    (§1.10) and the utilization (§1.2). Raises what those steps raise (:class:`PlanError` for MTP layers of a
    model with no attention or state layer)."""
    v, assumed = resolve_version(settings.version)
    assumed = assumed or settings.version_assumed
    rel = release_switches(v)
    facts = model_facts(model)
    version_notes: tuple[str, ...] = ()
    if assumed:
        version_notes = (f"vLLM version unknown: assumed the newest modelled release {fmt_version(v)}",)
    length_notes: list[str] = []
    max_len, src, derived, auto_fit, length_refused = _max_model_len(v, settings, model, length_notes)
    if settings.kv_connector:
        connector = "" if settings.kv_connector == "?" else f" ({settings.kv_connector})"
        length_notes.append(
            f"not modelled: the KV connector of --kv-transfer-config{connector}; a connector can hold GPU memory of its "
            "own before the KV cache is sized (LMCache's GPU staging buffer), so the engine can print a smaller KV "
            "cache than predicted here"
        )
    layer_notes: list[str] = []
    layers = _pool_layers(model, settings, layer_notes, facts)
    layers = release_state_layers(layers, v, layer_notes, facts.counts if layers is model.layers else None)
    layers = speculative_state_layers(
        layers, settings.num_speculative_tokens, layer_notes, facts.counts if layers is model.layers else None
    )
    pp = max(1, settings.pipeline_parallel_size)
    # get_pp_indices checks the partition first, then builds the stages (an empty stage past the layers)
    refused = pp_partition_refused(model.num_layers, pp, settings)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_PP_PARTITION)
    refused = pp_exceeds_layers(model.num_layers, pp)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_PP_EXCEEDS_LAYERS)
    refused = mtp_count_refusal(settings, facts)
    if refused:
        raise PlanError(refused, PlanRefusal.VLLM_MTP_COUNT)
    split = pp_layer_split(model.num_layers, pp, settings.pp_layer_partition, v)
    pp_notes: tuple[str, ...] = ()
    if pp > 1:
        pp_notes = (
            f"pipeline stages hold {split} layers (get_pp_indices); the fullest stage limits capacity",
        )
    extensible = extensible_kv_cache(settings, rel)
    util, util_notes = _utilization(settings, rel, extensible)
    is_pooling, pooling_why = vllm_pooling(
        v, model.architectures, runner=settings.runner, task=settings.task, convert=settings.convert
    )
    return PlanPrelude(  # positional, in the field order: see resolve_startup's StartupConfig
        v,  # version
        rel,  # release
        facts,  # facts
        max_len,  # max_model_len
        src,  # max_model_len_source
        derived,  # derived_max_model_len
        auto_fit,  # auto_fit
        layers,  # layers
        (
            facts.chunked
            if layers is model.layers
            else any(lay.kind == "chunked" for lay, _ in layer_counts(layers))
        ),  # chunked_layers
        pp,  # pp
        tuple(split),  # stage_layers
        util,  # gpu_memory_utilization
        version_notes,  # version_notes
        tuple(length_notes),  # length_notes
        tuple(layer_notes),  # layer_notes
        pp_notes,  # pp_notes
        util_notes,  # utilization_notes
        extensible,  # extensible
        # asked of every plan (its block size), answered once over the distinct layer specs
        any(
            lay.compress_ratio
            for lay, _ in (facts.counts if layers is model.layers else layer_counts(layers))
        ),  # compressed_layers
        length_refused,  # length_refused
        _runner_features(settings, model, (pooling_why if is_pooling else None) is None),  # features
        pooling_why if is_pooling else None,  # pooling
    )


def _utilization(
    settings: VllmSettings, rel: ReleaseSwitches, extensible: bool, vendor: str | None = None
) -> tuple[float, tuple[str, ...]]:
    """The ``--gpu-memory-utilization`` vLLM uses and the plan notes saying where it comes from
    (``vllm@0.34.0:vllm/config/cache.py::CacheConfig.resolved_gpu_memory_utilization``: 1.0 with the extensible KV
    cache, else the release default), with a note when the extensible KV cache is off for a reason other than
    ``--no-enable-extensible-kv-cache`` (:func:`extensible_kv_cache`)."""
    notes: list[str] = []
    if rel.extensible_kv_cache and not extensible and settings.enable_extensible_kv_cache is not False:
        why = extensible_kv_cache_unsupported(settings, vendor) or (
            "a KV connector exports the cache through FABRIC handles (NIXL) and [assumed] the pod has no IMEX "
            "channel; --enable-extensible-kv-cache keeps it on"
        )
        notes.append(f"extensible KV cache off: {why} (VllmConfig._resolve_extensible_kv_cache)")
    util = settings.gpu_memory_utilization
    if util is None and extensible:
        util = 1.0
        notes.append(
            f"gpu_memory_utilization=1.0: vLLM {rel.text} default with the extensible KV cache "
            "(CacheConfig.resolved_gpu_memory_utilization)"
        )
    elif util is None:
        util = rel.default_utilization
        notes.append(f"gpu_memory_utilization={util}: vLLM {rel.text} default (CacheConfig)")
    return util, tuple(notes)


def resolve_startup(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
    prelude: PlanPrelude | None = None,
) -> StartupConfig:
    """Step 1 of :func:`plan_vllm_detailed` (§1.1, §1.2, §1.4, §1.7-§1.10); see :class:`StartupConfig`.
    ``prelude``: :func:`plan_prelude` of ``settings`` and ``model`` (computed here when None): the steps that do
    not depend on the GPU, whose notes are put in their places among the GPU's."""
    pre = prelude if prelude is not None else plan_prelude(settings, model)
    v, rel, facts = pre.version, pre.release, pre.facts
    notes: list[str] = list(pre.version_notes)
    vendor = gpu_vendor(gpu_name, compute_capability)
    if pre.extensible and not extensible_kv_cache(settings, rel, vendor):
        # on ROCm a connector that registers the cache for RDMA turns it off: only now is the vendor known
        util, util_notes = _utilization(settings, rel, False, vendor)
        pre = replaced(pre, extensible=False, gpu_memory_utilization=util, utilization_notes=util_notes)
    cc = compute_capability
    tp = max(1, settings.tensor_parallel_size)

    dtype, why = dfl.resolve_dtype(v, model.torch_dtype, settings.dtype, cc)
    dbytes = dtype_bytes(dtype)
    notes.append(why)
    era, why, v0_fallback = _era(v, settings, cc, dtype, model, pre.pooling, pre.features)
    notes.append(why)
    if pre.pooling is not None:
        notes.append(pre.pooling)
    kvd = settings.kv_cache_dtype or "auto"
    kvb = kv_dtype_bytes(kvd, dtype)
    notes.append(f"KV cache dtype {kvd} -> {kvb} byte(s)/element")

    max_len = pre.max_model_len
    notes.extend(pre.length_notes)
    # scheduler defaults (§1.9)
    has_sw = facts.sliding
    if (
        era == "v1"
        and settings.enable_chunked_prefill is False
        and dfl.v1_chunked_prefill_forced(v)
        and pre.pooling is None  # a pooling runner's flag is kept (EngineArgs._set_default_args_v1, 0.10.2)
    ):
        chunked = True
        notes.append(
            f"--no-enable-chunked-prefill is ignored by vLLM {fmt_version(v)}'s V1 engine, which forces chunked prefill on"
            " for generative models before 0.11.1 (EngineArgs._set_default_args)"
        )
    elif settings.enable_chunked_prefill is not None:
        chunked = bool(settings.enable_chunked_prefill)
    elif era == "v0" and pre.pooling is not None:
        # _set_default_args_v0 turns it on only for runner_type != "pooling" (0.8.5; docs §1.9)
        chunked = False
        notes.append("chunked prefill off: V0 does not turn it on by default for a pooling model")
    elif era == "v0":
        # V0's long-context default and its exclusions by release (defaults.v0_chunked_prefill_default)
        chunked = dfl.v0_chunked_prefill_default(
            v,
            max_len,
            has_sw,
            multimodal=facts.multimodal,
            rocm=vendor == "amd",
            speculative=bool(
                settings.speculative_model or settings.speculative_model_id or settings.speculative_method
            ),
            lora=settings.enable_lora,
        )
        if chunked:
            notes.append("V0 enables chunked prefill by default for max_model_len > 32768")
    elif pre.pooling is not None:
        # V1 pooling runner: on only for the pooling types that can pool a prompt in chunks (§1.15)
        chunked, pooled = vllm_pooling_chunked_prefill(
            v,
            tuple(model.architectures or ()),
            model.config or {},
            pooler_config=settings.pooler_config,
            task=settings.task,
            convert=settings.convert,
        )
        notes.append(
            f"chunked prefill and prefix caching {'on' if chunked else 'off'} by default for a pooling model with "
            f"{pooled} (ModelConfig.is_chunked_prefill_supported; EngineArgs defaults before 0.12.0)"
        )
    else:
        chunked = True
    mbt, seqs = _scheduler_limits(v, era, settings, total_bytes, gpu_name, cc, max_len, chunked, notes)
    encoder: EncoderProfile | None = None
    enotes: list[str] = []
    if facts.multimodal:  # a model with only an audio tower gets (None, [its note]) from encoder_profile
        encoder, enotes = encoder_profile(
            model,
            era=era,
            version=v,
            max_num_seqs=seqs,
            max_num_batched_tokens=mbt,
            max_model_len=max_len,
            chunked_prefill=chunked,
            tp=tp,
            dtype_bytes=dbytes,
            limit_mm_per_prompt=settings.limit_mm_per_prompt,
            mm_processor_kwargs=settings.mm_processor_kwargs,
            skip_mm_profiling=settings.skip_mm_profiling,
            mm_encoder_tp_mode=settings.mm_encoder_tp_mode,
        )
        notes.extend(enotes)
    rows = min(seqs, mbt)
    if era == "v0" and encoder is not None and encoder.arch != "mllama":
        rows = max(1, min(seqs, mbt // max(1, encoder.tokens_per_item)))  # V0 profile_run's multimodal seqs
    if pre.pooling is not None:
        rows = 0  # the profile runs the pooler, not the sampler (kvlint.memory.pooling)
        notes.append(
            "pooling model: the profile run ends with the pooler, not the sampler (no logits sampled), and the "
            "LM head is not loaded ("
            + (
                "GPUModelRunner.profile_run, models/adapters.py); CUDA graphs are piecewise only (no full graphs "
                "for pooling models)"
                if era == "v1"
                else "PoolingModelRunner.execute_model, models/adapters.py)"
            )
        )

    # block size, layers per stage (§1.4, §1.10)
    layers = pre.layers
    notes.extend(pre.layer_notes)
    bs, why = dfl.default_block_size(v, model.is_mla, cc, settings.block_size)
    if not settings.block_size and era == "v1" and pre.compressed_layers:
        bs = V4_DEFAULT_BLOCK_SIZE
        why = f"block_size={bs}: DeepSeek V4's backend preference (DeepseekSparseSWABackend.get_preferred_block_size)"
    notes.append(why)
    pp = pre.pp
    notes.extend(pre.pp_notes)
    hybrid = (
        era == "v1"
        and rel.hybrid_allocator
        and not settings.disable_hybrid_kv_cache_manager
        and not pre.chunked_layers
    )
    if has_sw:
        notes.append(
            "sliding-window layers bounded by window + in-flight tokens (hybrid KV-cache manager)"
            if hybrid
            else "sliding-window/chunked layers allocated as full attention (no hybrid KV-cache manager)"
        )

    util = pre.gpu_memory_utilization
    notes.extend(pre.utilization_notes)
    budget = _budget(total_bytes, util, rel)
    v2 = era == "v1" and _v2_runner(settings, model, v, vendor, pre.features)
    # positional, in the field order (the comments name the fields; tests/test_plan_records.py checks them): a
    # call with more than 15 keywords is compiled to build a dict of them first, ~20,000 instructions a plan here
    return StartupConfig(
        v,  # version
        era,  # era
        tp,  # tp
        pp,  # pp
        max(1, settings.data_parallel_size),  # dp
        dtype,  # dtype
        dbytes,  # dtype_bytes
        kvd,  # kv_cache_dtype
        kvb,  # kv_bytes_per_element
        max_len,  # max_model_len
        pre.max_model_len_source,  # max_model_len_source
        pre.derived_max_model_len,  # derived_max_model_len
        pre.auto_fit,  # auto_fit
        chunked,  # chunked_prefill
        mbt,  # max_num_batched_tokens
        seqs,  # max_num_seqs
        layers,  # layers
        bs,  # block_size
        pre.stage_layers,  # stage_layers
        hybrid,  # hybrid
        mbt * (2 if rel.in_flight_doubled and pp == 1 else 1),  # in_flight_tokens
        float(util),  # gpu_memory_utilization
        int(budget),  # budget_bytes
        _cudagraphs_deducted(v, era, settings, notes, rel, pre.extensible, v2, vendor),  # cudagraphs_deducted
        tuple(notes + _capture_notes(settings, v, era, seqs, mbt)),  # notes
        cc,  # compute_capability
        vendor,  # vendor
        int(rows),  # sampled_rows
        encoder,  # encoder
        facts,  # facts
        rel,  # release
        pre.extensible,  # extensible
        # the memory free when the worker takes its start snapshot: the device less the CUDA context (§1.2.5)
        int(total_bytes) - cal.CUDA_CONTEXT_BYTES if pre.extensible else 0,  # headroom_bytes
        decode_query_len(settings, v),  # decode_query_len
        model_capture_size(model.architectures, v),  # capture_model_max
        effective_cudagraph_user(
            settings.cudagraph_user, v, chunked=pre.chunked_layers, pooling=pre.pooling is not None
        ),  # cudagraph_user
        pre.length_refused,  # length_refused
        v0_fallback,  # v0_fallback
        pre.pooling is not None,  # pooling
        v2,  # v2_runner
        cal.nvls_capable(gpu_name, cc) if vendor == "nvidia" else None,  # nvls
        cal.nvls_domain(gpu_name) if vendor == "nvidia" else None,  # nvls_domain
    )


def _v2_runner(
    settings: VllmSettings,
    model: ModelSpec,
    v: Version,
    vendor: str,
    features: vllm_runner.RunnerFeatures,
) -> bool:
    """Whether this V1-engine start-up runs vLLM's V2 GPU model runner (:func:`kvlint.memory.vllm_runner.
    uses_v2_runner` with the model's architectures, ``VLLM_USE_V2_MODEL_RUNNER``, the speculative method and
    ``--enable-elastic-ep``). The variable is read as the release reads it (:func:`kvlint.memory.vllm_runner.
    v2_env_value`) when its string is known, else :attr:`VllmSettings.v2_model_runner`. ``features``: the
    container's :attr:`PlanPrelude.features` (required: never recomputed per GPU)."""
    raw = settings.v2_model_runner_env
    return vllm_runner.uses_v2_runner(
        v,
        tuple(model.architectures or ()),
        vendor,
        vllm_runner.v2_env_value(v, raw) if raw is not None else settings.v2_model_runner,
        _spec_method(settings),
        settings.enable_elastic_ep,
        features,
    )


def _runner_features(
    settings: VllmSettings, model: ModelSpec | None, generate: bool = True
) -> vllm_runner.RunnerFeatures:
    """What the V2 model runner's unsupported-features list reads of these settings and ``model``
    (:class:`kvlint.memory.vllm_runner.RunnerFeatures`): the model keeps per-request state when a layer is a
    Mamba/linear-attention one or carries such state beside its attention (Falcon-H1), as the model classes that
    declare ``HasInnerState`` do; it is hybrid when it has attention layers too (``IsHybrid``). ``generate``: vLLM
    runs the model with its generative runner (not a pooling one). Both model facts are read over the model's
    distinct layer specs (:attr:`ModelFacts.counts`, memoised per model), not its every layer; nothing here depends
    on the GPU, so :func:`plan_prelude` settles the whole once per container (:attr:`PlanPrelude.features`) for
    every GPU it is planned on."""
    layers = [ly for ly, _ in model_facts(model).counts] if model is not None else ()
    stateful = any(ly.kind == "mamba" or ly.state_bytes for ly in layers)
    attention = any(ly.kind not in ("mamba", "none") for ly in layers)
    return vllm_runner.RunnerFeatures(
        inner_state=stateful,
        hybrid=stateful and attention,
        is_mla=bool(model is not None and model.is_mla),
        pcp=settings.prefill_context_parallel_size,
        dcp=settings.decode_context_parallel_size,
        pp=settings.pipeline_parallel_size,
        enable_dbo=settings.enable_dbo,
        ubatch_size=settings.ubatch_size,
        mamba_cache_mode=settings.mamba_cache_mode,
        lora=settings.enable_lora,
        external_launcher=settings.distributed_executor_backend == "external_launcher",
        routed_experts=settings.enable_return_routed_experts,
        logits_processors=settings.logits_processors,
        prompt_embeds=settings.enable_prompt_embeds,
        logprobs_mode=settings.logprobs_mode,
        generate=generate,
        kv_sharing_fast_prefill=settings.kv_sharing_fast_prefill,
        ec_transfer=settings.ec_transfer,
    )


def _spec_method(settings: VllmSettings) -> str | None:
    """The speculative method as ``SpeculativeConfig`` names it (:func:`kvlint.memory.vllm_runner.
    spec_method_name`), None without speculative decoding."""
    drafted = bool(settings.speculative_model is not None or settings.speculative_model_id)
    return (
        vllm_runner.spec_method_name(settings.speculative_method, drafted)
        if settings.num_speculative_tokens or settings.speculative_method or drafted
        else None
    )


def effective_cudagraph_user(
    user: cal.CudagraphUser, v: Version, chunked: bool = False, pooling: bool = False
) -> cal.CudagraphUser:
    """The command line's CUDA-graph settings (:func:`cudagraph_user`) as the model runner leaves them. A model with
    chunked local attention (Llama 4's ``attention_chunk_size``: ``ChunkedLocalAttention``, whose metadata builder
    declares ``AttentionCGSupport.NEVER`` in every wheel read, 0.11.0 - 0.34.0,
    ``vllm/model_executor/layers/attention/chunked_local_attention.py``; ``vllm/attention/layers/`` before 0.14) gets
    no FULL graph: the default ``FULL_AND_PIECEWISE`` becomes ``PIECEWISE`` ("setting cudagraph_mode=PIECEWISE
    because attention is compiled piecewise", ``GPUModelRunner._check_and_update_cudagraph_mode``, 0.11.0 and
    0.19.0; gt-356, Llama 4 Scout at 0.19.0, printed "Profiling CUDA graph memory: PIECEWISE=51 (largest=512)").
    A user's FULL or FULL_DECODE_ONLY there is refused or dropped by vLLM, not modelled. A pooling model
    (``pooling``) captures no FULL graph either: "Pooling models do not support full cudagraphs. Overriding
    cudagraph_mode to PIECEWISE." for any mode with full graphs from 0.11.1 (``vllm@0.11.1``/``vllm@0.19.0:
    vllm/config/vllm.py::VllmConfig.__post_init__``), for the default only in 0.11.0 (``vllm@0.11.0:vllm/config/
    __init__.py``: "pooling models and encoder-decoder models do not support full cudagraphs")."""
    full = ("FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
    if pooling and v >= (0, 11, 0) and (user.mode is None or (v >= (0, 11, 1) and user.mode in full)):
        return replace(user, mode="PIECEWISE")
    if chunked and v >= (0, 11, 0) and user.mode in (None, "FULL_AND_PIECEWISE"):
        return replace(user, mode="PIECEWISE")
    return user


def model_capture_size(architectures: Sequence[str] | None, v: Version) -> int | None:
    """The largest CUDA-graph capture size a model's config sets in place of vLLM's default
    ``min(2 x max_num_seqs x decode_query_len, 512)``, else None.

    gpt-oss (``GptOssForCausalLM``): ``GptOssForCausalLMConfig.verify_and_update_config`` in
    ``vllm/model_executor/models/config.py`` raises it "for performance" when the user gave no capture sizes:
    to 1,024 in the 0.10.1.1 and 0.10.2 wheels (a new ``cuda_graph_sizes`` list up to 1,024, when the one-element
    default is below it), 992 in 0.11.0 ("When using full cuda graph with FA3, the max supported size is 992"),
    1,024 again from 0.11.1 (``max_cudagraph_capture_size = 1024`` when neither ``cudagraph_capture_sizes`` nor
    ``max_cudagraph_capture_size`` is set; read in the 0.11.1, 0.12.0, 0.14.0, 0.17.0, 0.18.0 and 0.19.0 wheels,
    whose start-up logs print "Overriding max cuda graph capture size to 1024 for performance."). The engine
    still drops the sizes above ``max_num_batched_tokens`` (:func:`kvlint.memory.calibration.
    cudagraph_capture_tokens`). kvlint reads no capture-size flag, so a user's own sizes are not modelled.
    gpt-oss is served from 0.10.1; earlier releases do not know the architecture."""
    if "GptOssForCausalLM" not in tuple(architectures or ()) or v < (0, 10, 1):
        return None
    return 992 if (0, 11, 0) <= v < (0, 11, 1) else 1024


def decode_query_len(settings: VllmSettings, v: Version) -> int:
    """Tokens per request of the uniform decode step whose width sizes vLLM's default CUDA-graph captures:
    ``1 + num_speculative_tokens`` from 0.13.0 (a speculative step verifies the drafted tokens with the next one;
    ``vllm@0.13.0:vllm/config/vllm.py::VllmConfig._set_cudagraph_sizes``, ``decode_query_len``; 0.34.0's
    ``VllmConfig.uniform_decode_query_len``), else 1 (:func:`cudagraph_capture_follows_speculation`).
    ``num_speculative_tokens`` is the ``--speculative-config`` count (or the pre-0.10 ``--num-speculative-tokens``);
    without one (an MTP config whose count vLLM takes from the model, ``n_predict``) kvlint counts 1."""
    k = settings.num_speculative_tokens
    if k > 0 and cudagraph_capture_follows_speculation(v):
        return 1 + k
    return 1


def _capture_notes(
    settings: VllmSettings, v: Version, era: str, max_num_seqs: int, max_num_batched_tokens: int | None = None
) -> list[str]:
    """The note that speculative decoding widens the CUDA-graph captures (:func:`decode_query_len`), with the
    largest capture size in tokens (no more than ``max_num_batched_tokens``,
    :func:`kvlint.memory.calibration.cudagraph_capture_tokens`), or that this release does not; none without
    speculative tokens, graphs or V1."""
    k = settings.num_speculative_tokens
    if k <= 0 or era != "v1" or settings.enforce_eager:
        return []
    q = decode_query_len(settings, v)
    if q == 1:
        return [
            f"CUDA graphs: vLLM {fmt_version(v)} captures up to min(2 x max_num_seqs, 512) tokens whatever the "
            f"{k} speculative token(s) (the capture sizes follow them from 0.13.0)"
        ]
    top = cal.cudagraph_capture_tokens(max_num_seqs, q, max_num_batched_tokens)
    capped = top < cal.cudagraph_capture_tokens(max_num_seqs, q)  # max_num_batched_tokens lowered it
    cap = f", {max_num_batched_tokens}" if capped else ""
    return [
        f"CUDA graphs: {k} speculative token(s) widen each decode step to {q} tokens per request, so vLLM captures "
        f"up to min(2 x {max_num_seqs} x {q}, 512{cap}) = {top} tokens"
        + (" (no more than max_num_batched_tokens)" if capped else "")
        + " (VllmConfig._set_cudagraph_sizes)"
        + (
            ""
            if (settings.speculative_method or "").lower() in _MODEL_FREE_METHODS
            else "; the drafter's own graphs are not counted"
        )
    ]


def _budget(total_bytes: int, util: float, rel: ReleaseSwitches) -> int:
    """The memory budget per GPU (bytes): ``ceil(total x util)`` from 0.27.0, ``int(total x util)`` before
    (``vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory``'s ``requested_memory``, §1.2)."""
    return math.ceil(total_bytes * util) if rel.budget_ceil else int(total_bytes * util)


def gpu_vendor(gpu_name: str, compute_capability: str | None) -> str:
    """``amd`` for AMD Instinct/Radeon devices (named so by ROCm, no CUDA compute capability), else ``nvidia``."""
    n = (gpu_name or "").lower()
    if compute_capability is None and any(
        k in n for k in ("amd", "instinct", "radeon", "mi300", "mi250", "mi355")
    ):
        return "amd"
    return "nvidia"


def _max_model_len(
    v: Version, settings: VllmSettings, model: ModelSpec, notes: list[str]
) -> tuple[int, str, int, bool, str | None]:
    """``(max_model_len, source, derived length, auto_fit, refused)`` as vLLM settles them (§1.8), ``refused``
    saying why vLLM refuses the user's length (else None); appends its notes. With a positive ``--max-model-len``
    the note says the length was taken from the flag, the model's derived length only as the bound it is checked
    against (``_get_and_verify_max_len`` returns the user's length after comparing it with the derived one): "derived
    max_model_len from max_position_embeddings=131072" beside ``--max-model-len 512`` read as a contradiction."""
    refused = None
    if settings.hf_overrides:
        derived, key, mml_key, why = dfl.derive_max_model_len(v, model, settings.hf_overrides)
        default_len = dfl.default_max_model_len(v, model, derived, settings.hf_overrides)
    else:
        derived, key, mml_key, why, default_len = _lengths(model, v)
    user = settings.max_model_len
    if user is not None and user > 0:
        bound = (
            f"{int(derived)}, vLLM's default with no length key in config.json"
            if key == "default"
            else why.removeprefix("derived max_model_len from ")
        )
        why = f"max_model_len={int(user)} from --max-model-len (the model's maximum it is checked against: {bound})"
    notes.append(why)
    auto_fit = False
    if user is not None and user < 0:
        if supports_auto_max_model_len(v):
            auto_fit = True
            max_len, src = default_len, "auto"
        else:
            max_len, src = default_len, "derived"
            notes.append(
                f"--max-model-len auto/-1 is not accepted before vLLM 0.14.0; planned with the derived {default_len}"
            )
    elif user:
        max_len, src = int(user), "user"
        if user > derived and not (mml_key and user <= mml_key):
            above = f"--max-model-len {user} exceeds the derived {key}={derived:g}"
            if not settings.allow_long_max_model_len:
                refused = above
            notes.append(
                above
                + (
                    ": vLLM refuses to start (allowed by VLLM_ALLOW_LONG_MAX_MODEL_LEN)"
                    if settings.allow_long_max_model_len
                    else ABOVE_DERIVED_REFUSED
                )
            )
    else:
        max_len, src = default_len, "derived"
    if (
        settings.disable_sliding_window
        and model.sliding_window
        and model.sliding_window < max_len
        and src != "user"
    ):
        max_len = model.sliding_window
        notes.append(f"--disable-sliding-window caps max_model_len at the window {max_len}")
    return max_len, src, int(derived), auto_fit, refused


@per_model
def _lengths(model: ModelSpec, v: Version) -> tuple[float, str, int | None, str, int]:
    """``(derived, key, model_max_length, why, default max_model_len)`` of ``model`` under release ``v`` without
    ``--hf-overrides``: :func:`kvlint.memory.defaults.derive_max_model_len` and
    :func:`~kvlint.memory.defaults.default_max_model_len` in one memo entry (per model and release)."""
    derived, key, mml, why = dfl.derive_max_model_len(v, model)
    return derived, key, mml, why, dfl.default_max_model_len(v, model, derived)


def _scheduler_limits(
    v: Version,
    era: str,
    settings: VllmSettings,
    total_bytes: int,
    gpu_name: str,
    cc: str | None,
    max_len: int,
    chunked: bool,
    notes: list[str],
) -> tuple[int, int]:
    """``(max_num_batched_tokens, max_num_seqs)``: the user's, else the release's defaults for this GPU
    (``EngineArgs.get_batch_defaults``, §1.9); appends its note. Memoised (:data:`_SCHEDULER`) by every input
    it reads, numbers with their types: the release by identity (held), the user's two limits and
    ``--performance-mode``, the GPU's memory total, name and capability, the length and chunked prefill."""
    user_mbt, user_seqs = settings.max_num_batched_tokens, settings.max_num_seqs
    key = (
        id(v), era, type(user_mbt), user_mbt, type(user_seqs), user_seqs, settings.performance_mode,
        type(total_bytes), total_bytes, gpu_name, cc, type(max_len), max_len, chunked,
    )  # fmt: skip
    hit = _SCHEDULER.get(key)
    if hit is not None and hit[0] is v:
        if hit[3] is not None:
            notes.append(hit[3])
        return hit[1], hit[2]
    mine: list[str] = []
    mbt, seqs = _scheduler_limits_of(v, era, settings, total_bytes, gpu_name, cc, max_len, chunked, mine)
    if len(_SCHEDULER) >= _SCHEDULER_MAX:
        _SCHEDULER.clear()
    _SCHEDULER[key] = (v, mbt, seqs, mine[0] if mine else None)
    notes.extend(mine)
    return mbt, seqs


#: :func:`_scheduler_limits` answers: key -> (release, max_num_batched_tokens, max_num_seqs, note or None)
_SCHEDULER: dict[tuple[Any, ...], tuple[Version, int, int, str | None]] = {}
_SCHEDULER_MAX = 1024
_scheduler_limits.cache_clear = _SCHEDULER.clear  # type: ignore[attr-defined]


def _scheduler_limits_of(
    v: Version,
    era: str,
    settings: VllmSettings,
    total_bytes: int,
    gpu_name: str,
    cc: str | None,
    max_len: int,
    chunked: bool,
    notes: list[str],
) -> tuple[int, int]:
    """:func:`_scheduler_limits` itself (appends at most one note)."""
    d_mbt, d_seqs, why = dfl.batch_defaults(
        v, era, total_bytes, gpu_name, cc, settings.performance_mode, max_len, chunked
    )
    mbt = settings.max_num_batched_tokens
    seqs = settings.max_num_seqs or d_seqs
    if mbt is None:
        mbt = d_mbt
        if era == "v1" and not chunked:
            mbt = min(seqs * max_len, max(max_len, d_mbt))
            why += f"; chunked prefill off -> max_num_batched_tokens={mbt} (EngineArgs post-processing)"
        if settings.max_num_seqs is not None:  # the note is about the default; max_num_seqs is the user's
            why = re.sub(r", max_num_seqs=\d+", "", why, count=1)
        notes.append(why)
    elif settings.max_num_seqs is None:
        notes.append(f"max_num_seqs={d_seqs}: {why.split(': ', 1)[-1]}")
    if settings.max_num_seqs is None:
        # Only the default max_num_seqs is lowered to max_num_batched_tokens (EngineArgs: `if
        # orig_max_num_seqs is None: max_num_seqs = min(max_num_seqs, max_num_batched_tokens)`, 0.10.2-0.33.0);
        # a larger explicit value is rejected by SchedulerConfig._verify_args (KV204).
        seqs = min(seqs, mbt)
    return int(mbt), int(seqs)


def _pool_layers(
    model: ModelSpec, settings: VllmSettings, notes: list[str], facts: ModelFacts | None = None
) -> tuple[LayerSpec, ...]:
    """The layers whose KV shares the pool: the target's, plus a speculative draft model's or MTP layers (the
    model's own ``layers`` tuple when nothing is added, so its layer counts are computed once per model).
    ``facts``: the model's :class:`ModelFacts` (derived when None)."""
    layers = tuple(model.layers)
    draft = settings.speculative_model
    if draft is not None:
        layers += tuple(draft.layers)
        notes.append(
            f"speculative draft {draft.id or '?'}: its {len(draft.layers)} layer(s) share the KV pool"
        )
        return layers
    facts = facts or model_facts(model)
    n_mtp = _mtp_layers(model, settings, facts)
    if n_mtp:
        last_layer = facts.last_state_layer
        if last_layer is None:
            raise PlanError(f"model {model.id or '?'} has no attention layers and no state: nothing to cache")
        layers += (last_layer,) * n_mtp
        notes.append(
            f"speculative decoding with {n_mtp} MTP layer(s) (num_speculative_tokens="
            f"{settings.num_speculative_tokens}): their KV shares the pool like the target's last layer"
        )
    elif _names_no_drafter(settings):
        notes.append(
            f"speculative method '{settings.speculative_method}' drafts with a separate model that "
            "--speculative-config does not name: the drafter's weights, KV layers and CUDA graphs are not counted "
            "(give its 'model' to have them planned)"
        )
    return layers


#: ``--speculative-config`` methods that draft without a model of their own (vLLM sets ``model`` to the method,
#: ``vllm@0.13.0:vllm/config/speculative.py::SpeculativeConfig.__post_init__``), and the MTP family, whose layers
#: come from the target's config (:func:`_mtp_layers`)
_MODEL_FREE_METHODS = frozenset({"ngram", "[ngram]", "suffix", "ngram_gpu"})


def _names_no_drafter(settings: VllmSettings) -> bool:
    """Whether speculative decoding runs with a drafter model kvlint was not given: a ``method`` other than the
    model-free ones (:data:`_MODEL_FREE_METHODS`) and the MTP family (``mtp`` in its name), with speculative tokens
    and neither a resolved draft nor a ``model`` id (an id that could not be read is noted where it is resolved,
    :func:`kvlint.memory.stage._vllm_settings`)."""
    method = (settings.speculative_method or "").lower()
    return bool(
        method
        and settings.num_speculative_tokens
        and settings.speculative_model is None
        and not settings.speculative_model_id
        and method not in _MODEL_FREE_METHODS
        and "mtp" not in method
    )


def release_state_layers(
    layers: tuple[LayerSpec, ...], v: Version, notes: list[str], counts: LayerCounts | None = None
) -> tuple[LayerSpec, ...]:
    """``layers`` with the SSM state of every Mamba layer whose dtype vLLM's model hook picks by release
    (``LayerSpec.ssm_default``, Nemotron-H without ``mamba_ssm_cache_dtype`` in its config) counted at release
    ``v``'s dtype (:func:`~kvlint.memory.versions.nemotron_h_ssm_cache_dtype`: float16 in 0.13.0-0.19.x, float32
    from 0.20.0, the model dtype before): ``state_bytes - elements x element_bytes + elements x release bytes``
    per request (bytes). ``layers`` itself (the same tuple) when no layer has such a default; ``counts``: its
    distinct specs when known (:func:`kvlint.memory.kv.layer_counts`), to answer that without a pass over every
    layer. Appends one note per hook that changed a state.
    Source: ``vllm@0.20.0:vllm/model_executor/models/config.py::NemotronHForCausalLMConfig``.
    """
    distinct = counts if counts is not None else layer_counts(layers)
    if not any(lay.ssm_default for lay, _ in distinct):
        return layers
    new: dict[LayerSpec, LayerSpec] = {}
    for lay, _ in distinct:
        if not lay.ssm_default:
            continue
        hook, elements, element_bytes, model_bytes = lay.ssm_default
        dtype = nemotron_h_ssm_cache_dtype(v, hook)
        if dtype == "config":
            continue
        rel_bytes = model_bytes if dtype is None else dtype_bytes_of(dtype, element_bytes)
        if rel_bytes == element_bytes:
            continue
        state = lay.state_bytes + elements * (rel_bytes - element_bytes)
        new[lay] = replaced(lay, state_bytes=state)
        if dtype is None:
            why = (
                "the config's mamba_ssm_cache_dtype is not read before the NemotronH hook "
                f"({'0.13.0' if hook.startswith('nemotron_h+') else '0.20.0'}): --mamba-ssm-cache-dtype auto = the "
                "model dtype"
            )
        else:
            why = (
                f"--mamba-ssm-cache-dtype auto -> {dtype} for Nemotron-H (the config sets no mamba_ssm_cache_dtype; "
                "NemotronHForCausalLMConfig)"
            )
        notes.append(
            f"vLLM {fmt_version(v)}: {why}: Mamba state {state:,} B per request per layer ({elements:,} SSM elements "
            f"x {rel_bytes} B)"
        )
    if not new:
        return layers
    return tuple(new.get(lay, lay) for lay in layers)


def speculative_state_layers(
    layers: tuple[LayerSpec, ...], num_spec: int, notes: list[str], counts: LayerCounts | None = None
) -> tuple[LayerSpec, ...]:
    """``layers`` with the conv state of every Gated-DeltaNet layer (``LayerSpec.spec_conv_bytes`` set: Qwen3-Next,
    Qwen3.5) widened by ``num_spec`` rows: ``state_bytes + num_spec x spec_conv_bytes`` per request (bytes, the
    whole layer; the TP split comes later, :func:`mamba_state_bytes_per_rank`). vLLM sizes that conv state
    ``(conv_kernel_size - 1 + num_spec) x conv_dim / TP`` with ``num_spec`` the ``--speculative-config``
    ``num_speculative_tokens`` (any method), so the Mamba page, and with it the attention block size that must
    cover it (§1.5), grow with speculation. ``layers`` itself (the same tuple) without speculative tokens or
    such layers; ``counts``: its distinct specs when known. Appends one note when a state changed.
    Sources: ``vllm@0.10.2`` and ``vllm@0.34.0``: ``vllm/model_executor/layers/mamba/mamba_utils.py::
    MambaStateShapeCalculator.gated_delta_net_state_shape``; ``vllm/model_executor/models/qwen3_next.py::
    Qwen3NextForCausalLM.get_mamba_state_shape_from_config`` (0.34.0 also ``qwen3_5.py``). Example (vllm-project/
    vllm#25760, Qwen3-Next FP8 at TP 4, fp8 KV, 2 speculative tokens, 0.10.2): 262,144 + 5 x 2,048 x 2 =
    282,624 B of state per rank, attention block 560 tokens at 512 B per token, not 544.
    """
    if num_spec <= 0:
        return layers
    distinct = counts if counts is not None else layer_counts(layers)
    new = {
        lay: replaced(lay, state_bytes=lay.state_bytes + num_spec * lay.spec_conv_bytes)
        for lay, _ in distinct
        if lay.kind == "mamba" and lay.spec_conv_bytes
    }
    if not new:
        return layers
    after = max(n.state_bytes for n in new.values())
    notes.append(
        f"{num_spec} speculative token(s): the linear-attention conv state keeps conv_kernel_size - 1 + {num_spec} rows "
        f"(gated_delta_net_state_shape): {after:,} B of state per request per layer before the TP split"
    )
    return tuple(new.get(lay, lay) for lay in layers)


def _cudagraphs_deducted(
    v: Version,
    era: str,
    settings: VllmSettings,
    notes: list[str],
    rel: ReleaseSwitches | None = None,
    extensible: bool = False,
    v2_runner: bool = False,
    vendor: str = "nvidia",
) -> bool:
    """Whether the CUDA-graph estimate comes off the KV budget (§1.2.2): V1 without ``--enforce-eager``, by
    ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` where the release reads it, else the release's default
    (``rel``: the switches of ``v``, derived when None). With the extensible KV cache (``extensible``, §1.2.5)
    no estimate is taken (``vllm@0.34.0:vllm/v1/worker/gpu/model_runner.py::GPUModelRunner.profile_cudagraph_memory``
    returns 0) and the note says so; the pool then counts the captured graphs (:func:`_extensible_kv`). Nor on the
    V2 model runner (``v2_runner``) before :data:`~kvlint.memory.vllm_runner.V2_CUDAGRAPH_PROFILED_FROM`, whose
    ``profile_cudagraph_memory`` returns 0 whatever the variable says (§1.2.6), nor on an AMD GPU (``vendor``
    ``amd``) before 0.26.0, where the worker takes no estimate on ROCm (:func:`~kvlint.memory.versions.
    cudagraph_estimated_on_rocm`)."""
    cg_sub = False
    if era == "v1" and not settings.enforce_eager:
        rel = rel or release_switches(v)
        if settings.estimate_cudagraphs is not None and rel.cudagraph_env:
            cg_sub = settings.estimate_cudagraphs
        else:
            cg_sub = rel.cudagraph_default
    v2_zero = v2_runner and v < vllm_runner.V2_CUDAGRAPH_PROFILED_FROM and not extensible
    rocm_zero = vendor == "amd" and not cudagraph_estimated_on_rocm(v)
    if settings.enforce_eager:
        notes.append("--enforce-eager: no CUDA graphs, nothing deducted for them")
    elif rocm_zero and cg_sub:
        cg_sub = False
        notes.append(
            "CUDA-graph memory not deducted from the KV budget: vLLM before 0.26.0 takes no CUDA-graph estimate on "
            "ROCm (vllm/v1/worker/gpu_worker.py Worker.determine_available_memory profiles it on CUDA only), so the "
            "graphs captured after the KV cache come out of the memory beyond --gpu-memory-utilization"
        )
    elif v2_zero and cg_sub:
        cg_sub = False
        notes.append(
            "CUDA-graph memory not deducted from the KV budget: the V2 model runner of vLLM 0.22.0 - 0.28.x estimates "
            "none (vllm/v1/worker/gpu/model_runner.py GPUModelRunner.profile_cudagraph_memory returns 0), so the "
            "graphs captured after the KV cache come out of the memory beyond --gpu-memory-utilization"
        )
    elif extensible and era == "v1":
        notes.append(
            "CUDA graphs: no estimate is taken with the extensible KV cache; the captured graph pool is measured "
            "after capture (GPUModelRunner.profile_cudagraph_memory, vLLM >= 0.34.0)"
        )
    elif era == "v1" and not cg_sub:
        notes.append("CUDA-graph memory not deducted from the KV budget in this version (measured at most)")
    elif cg_sub:
        notes.append(
            "CUDA-graph estimate deducted from the KV budget (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, >= 0.20)"
        )
    return bool(cg_sub)


@dataclass  # a step record of one plan: see StartupConfig
class WeightSplit:
    """Step 2: how the checkpoint's bytes fall on the ranks (bytes).

    ``total`` the whole model (plus a draft model) and its ``source``; ``embed``/``lm_head`` the embedding and
    output matrices (``lm_head`` 0 when tied); ``per_layers`` the rest; ``expert_fraction`` the share of it in
    routed experts (split over ``ep`` ranks, the rest over TP); ``rotary`` the RoPE cos/sin cache every rank
    holds; ``replicated`` what every TP rank holds beyond its even share of ``per_layers``, summed over the layers
    (:func:`kvlint.models.weights.tp_replicated_bytes`: MLA/indexer projections, routers, K/V heads fewer than TP),
    and ``replicated_source`` its description ("" when 0); ``layers`` each decoder layer's ``(linear, expert)``
    bytes (:func:`kvlint.models.weights.decoder_layer_bytes`), which share of ``per_layers`` a pipeline stage holds
    (:meth:`stage_shares`; empty: every layer alike). Under pipeline parallelism the towers a stage builds whole
    (:func:`pipeline_towers`): ``towers`` their bytes per rank (the vision tower split over TP, the audio encoder
    whole), ``towers_whole`` their bytes in ``per_layers``, ``towers_replicated`` the audio encoder's part of
    ``replicated``, ``towers_first_stage_only`` whether only the first stage builds them (0 each without PP).
    """

    total: int
    source: str
    embed: int
    lm_head: int
    per_layers: int
    expert_fraction: float
    ep: int
    rotary: int
    replicated: int = 0
    replicated_source: str = ""
    layers: tuple[tuple[int, int], ...] = ()
    towers: int = 0
    towers_whole: int = 0
    towers_replicated: int = 0
    towers_first_stage_only: bool = False

    @property
    def rotary_bytes(self) -> int:
        return self.rotary

    def stage_shares(self, start: int, n: int, num_layers: int) -> tuple[float, float]:
        """The shares of the model's non-expert and routed-expert layer bytes that layers ``start`` to ``start + n``
        hold: vLLM builds a stage's own layers only (``vllm/model_executor/models/utils.py::make_layers``), and a
        MoE model's dense layers (``first_k_dense_replace``...) hold no experts and fewer bytes
        (:func:`kvlint.models.weights.decoder_layer_bytes`). ``n / num_layers`` for both when the layers are not
        known (a part without bytes, or a layer list that is not the model's)."""
        even = n / max(1, num_layers)
        if len(self.layers) != num_layers:
            return even, even
        lin_all = sum(a for a, _ in self.layers)
        exp_all = sum(b for _, b in self.layers)
        part = self.layers[start : start + n]
        lin = sum(a for a, _ in part) / lin_all if lin_all else even
        exp = sum(b for _, b in part) / exp_all if exp_all else even
        return lin, exp


def mxfp4_moe_backend(settings: VllmSettings, version: Version, compute_capability: str | None) -> str | None:
    """The MXFP4 MoE backend whose weight layout the plan prices (:func:`kvlint.models.weights.weight_bytes`).

    ``settings.mxfp4_backend`` when the caller knows the install's. Otherwise the engine's choice, read per release
    (``vllm/model_executor/layers/quantization/mxfp4.py::get_mxfp4_backend`` 0.11.1 - 0.18.x,
    ``fused_moe/oracle/mxfp4.py::select_mxfp4_moe_backend`` 0.19.0 - 0.20.x and, rewritten around
    ``_get_priority_backends_for_gpt_oss`` and each kernel's ``is_supported_config``, 0.21.0 - 0.34.0). Every wheel
    from 0.11.1 requires ``flashinfer-python`` (their METADATA) and from 0.12.0 bundles ``triton_kernels``; 0.10.1 -
    0.11.0, whose wheels list FlashInfer as an extra that the release image installs: :func:`_mxfp4_backend_in_image`.

    * ``--enable-lora``: before 0.21.0 the LoRA branch comes first and takes Marlin unless
      ``VLLM_MXFP4_USE_MARLIN`` is set *false* (``envs.VLLM_MXFP4_USE_MARLIN is False``: unset is None, so Marlin)
      and triton_kernels runs (9.0 <= capability < 11.0, from 0.12.0): Triton's layout, priced on Hopper only. From
      0.21.0 only LoRA-aware experts pass ``is_supported_config`` (``LoRAExpertsMixin``: Marlin's and the unfused
      Triton's, the latter not in the list): Marlin. ``"marlin"``.
    * ``--moe-backend`` other than ``auto`` (from 0.19.0; after the LoRA branch before 0.21.0): ``triton`` the
      Triton layout on Hopper, ``marlin`` Marlin's, ``flashinfer_trtllm[_afp8]`` TRT-LLM's padding,
      ``flashinfer_cutlass[_afp8]`` CUTLASS's (``map_mxfp4_backend``); any other: not priced apart (None).
    * ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1``: FlashInfer's SM90 CUTLASS backend on capability 9.0 (its 128
      padding), TRT-LLM on SM100; set to 0 from 0.19.0 it drops FlashInfer's BF16 backends, so SM100 falls to
      Triton's Blackwell layout (not read: None).
    * ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS=1`` on Blackwell SM100 (0.10.2 - 0.23.x; 0.24.0 no longer reads
      it): FlashInfer's MXFP4 x MXFP8 CUTLASS backend, hidden and the intermediate size per partition rounded to
      128 (``quantization/mxfp4.py::Mxfp4MoEMethod.create_weights`` 0.10.2 - 0.18.x, ``SM100_FI_MXFP4_MXFP8_CUTLASS``;
      ``oracle/mxfp4.py::mxfp4_round_up_hidden_size_and_intermediate_size`` 0.19.0 - 0.23.x,
      ``FLASHINFER_CUTLASS_MXFP4_MXFP8``), ``"flashinfer-cutlass"``. Up to 0.18.x ``get_mxfp4_backend`` asks it
      before ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8`` (TRT-LLM's MXFP8 backend, TRT-LLM's padding); from 0.19.0
      ``select_mxfp4_moe_backend`` asks it after that switch and after an explicit ``VLLM_USE_FLASHINFER_MOE_MXFP4_
      BF16=1``, and on any GPU (where the kernel refuses the GPU the engine raises: not priced, None).
    * Blackwell SM100 (capability 10.0 from 0.11.1, any 10.x from 0.13.0 — ``is_device_capability_family(100)``):
      FlashInfer's TRT-LLM BF16 backend, first in every release's order (before 0.19.0 ahead of the
      ``VLLM_MXFP4_USE_MARLIN`` test, after it from 0.19.0): ``"flashinfer-trtllm"``, ``"flashinfer-trtllm-i128"``
      from 0.27.0 (:data:`kvlint.models.weights._MXFP4_FLASHINFER_PADDING`).
    * ``VLLM_MXFP4_USE_MARLIN=1``: Marlin.
    * Hopper (9.x): the Triton layout for the releases of :data:`kvlint.models.weights.MXFP4_TRITON_RELEASES`.
    * Capability 11.x/12.x (Thor, consumer Blackwell): Triton needs capability < 11.0, so from 0.19.0 FlashInfer's
      CUTLASS BF16 backend (``FlashInferExperts._supports_current_device``: 9.0 and families 100, 110 (not from
      0.21.0), 120), ``"flashinfer-cutlass"``; before 0.19.0, or with that backend dropped, Marlin.

    None: the padding by compute capability (:func:`kvlint.models.weights._mxfp4_expert_padding`), as for older
    releases, other GPUs and the layouts not read."""
    if settings.mxfp4_backend:
        return settings.mxfp4_backend
    if not compute_capability or version < MXFP4_FLASHINFER_IMAGE_FROM:
        return None
    try:
        major, minor = (int(x) for x in str(compute_capability).split(".")[:2])
    except ValueError:
        return None
    if version < MXFP4_FLASHINFER_DEP_FROM:
        return _mxfp4_backend_in_image(settings, version, (major, minor))
    hopper = major == 9
    sm100 = major == 10 and (minor == 0 or version >= MXFP4_SM100_FAMILY_FROM)
    triton_layout = next((b for lo, hi, b in MXFP4_TRITON_RELEASES if lo <= version < hi), None)
    trtllm = "flashinfer-trtllm-i128" if version >= MXFP4_TRTLLM_I128_FROM else "flashinfer-trtllm"
    rewritten = version >= MXFP4_ORACLE_REWRITE_FROM
    flag = version >= MXFP4_MOE_BACKEND_FLAG_FROM
    moe_backend = settings.moe_backend if flag and settings.moe_backend not in (None, "auto") else None
    if settings.enable_lora and not (rewritten and moe_backend):
        if rewritten or settings.mxfp4_use_marlin is not False or not (9 <= major < 11) or not triton_layout:
            return "marlin"
        return triton_layout if hopper else None
    if moe_backend:
        if moe_backend == "triton":
            return triton_layout if hopper else None
        if moe_backend in ("flashinfer_trtllm", "flashinfer_trtllm_afp8"):
            return trtllm
        if moe_backend in ("flashinfer_cutlass", "flashinfer_cutlass_afp8"):
            return "flashinfer-cutlass"
        return "marlin" if moe_backend == "marlin" else None
    mxfp8_cutlass = settings.flashinfer_mxfp4_mxfp8_cutlass and version < MXFP4_MXFP8_CUTLASS_ENV_UNTIL
    if not flag:
        # 0.11.1 - 0.18.x get_mxfp4_backend: SM90 + BF16 switch, then SM100 + MXFP8 CUTLASS, MXFP8 TRT-LLM, BF16
        if settings.flashinfer_mxfp4_bf16 and (major, minor) == (9, 0):
            return "flashinfer-cutlass"
        if sm100:
            return "flashinfer-cutlass" if mxfp8_cutlass else trtllm
    if settings.flashinfer_mxfp4_bf16:
        return "flashinfer-cutlass" if (major, minor) == (9, 0) else trtllm if sm100 else None
    if flag and settings.flashinfer_mxfp4_mxfp8 and version < MXFP4_MXFP8_CUTLASS_ENV_UNTIL:
        return trtllm if sm100 else None  # TRT-LLM's MXFP8 backend (raises off SM100: not priced)
    if flag and mxfp8_cutlass:
        return "flashinfer-cutlass" if sm100 else None
    # VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=0 drops FlashInfer's BF16 backends from the order (from 0.19.0)
    fi_off = settings.flashinfer_mxfp4_bf16 is False and flag
    if settings.mxfp4_use_marlin:
        return "marlin"
    if sm100:
        return None if fi_off else trtllm
    if hopper:
        return triton_layout
    if major in (11, 12):
        # Triton needs capability < 11.0; FlashInfer's CUTLASS takes families 110 (0.19.0 - 0.20.x) and 120, else
        # Marlin (before 0.19.0 ``get_mxfp4_backend`` goes straight to Marlin there)
        cutlass = flag and (major == 12 or not rewritten) and not fi_off
        return "flashinfer-cutlass" if cutlass else "marlin"
    return None


#: The first release whose MXFP4 backend choice no longer reads ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8`` and
#: ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS`` (0.23.0's ``oracle/mxfp4.py`` and ``envs.py`` still do, 0.24.0's
#: neither; ``--moe-backend flashinfer_cutlass_afp8`` names the backend there)
MXFP4_MXFP8_CUTLASS_ENV_UNTIL = (0, 24, 0)

#: From this release the MXFP4 backend choice honours ``--moe-backend`` (``vllm@0.19.0:vllm/model_executor/layers/
#: fused_moe/oracle/mxfp4.py::select_mxfp4_moe_backend``: ``config.moe_backend != "auto"``); 0.17.0 and 0.18.0's
#: ``quantization/mxfp4.py::get_mxfp4_backend`` do not read it.
MXFP4_MOE_BACKEND_FLAG_FROM = (0, 19, 0)

#: From this release the wheel requires ``flashinfer-python`` (0.11.1's METADATA; 0.11.0 lists it only under the
#: ``flashinfer`` extra), so ``has_flashinfer()`` holds in a plain install and SM100 takes FlashInfer's MXFP4 MoE.
MXFP4_FLASHINFER_DEP_FROM = (0, 11, 1)

#: The first release with MXFP4 MoE (gpt-oss) and a FlashInfer branch in it (``vllm@0.10.1.1:vllm/model_executor/
#: layers/quantization/mxfp4.py``); before :data:`MXFP4_FLASHINFER_DEP_FROM` the wheel lists FlashInfer as an extra
#: (``flashinfer-python==0.2.11; extra == "flashinfer"`` in 0.10.1.1, ``==0.3.1`` in 0.11.0) and the release image
#: builds it in (the ``vllm-base`` stage's ``FLASHINFER_GIT_REF``: v0.3.1 in the 0.11.0 image's layer history), as
#: :func:`kvlint.memory.calibration.sampler_path` assumes for the same releases.
MXFP4_FLASHINFER_IMAGE_FROM = (0, 10, 1)

#: From this release ``quantization/mxfp4.py::get_mxfp4_backend`` picks the backend (0.10.2, 0.11.0); 0.10.1.x's
#: ``Mxfp4MoEMethod`` asks ``_should_use_marlin`` then ``should_use_flashinfer_mxfp4``.
MXFP4_GET_BACKEND_FROM = (0, 10, 2)


def _mxfp4_backend_in_image(settings: VllmSettings, version: Version, cc: tuple[int, int]) -> str | None:
    """:func:`mxfp4_moe_backend` for 0.10.1 - 0.11.0, with FlashInfer installed as the release image installs it
    (:data:`MXFP4_FLASHINFER_IMAGE_FROM`; a pip install without the ``flashinfer`` extra pads by compute capability
    instead, less memory). Read in the 0.10.1.1, 0.10.2 and 0.11.0 wheels:

    * 0.10.1.x (``Mxfp4MoEMethod.create_weights``): ``VLLM_MXFP4_USE_MARLIN`` set true first (Marlin's padding);
      then ``should_use_flashinfer_mxfp4``, which on capability 10.0 with FlashInfer holds unless
      ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16`` is set false (``_should_use_flashinfer_mxfp4_bf16``): hidden and the
      intermediate size per partition to 256, ``"flashinfer-trtllm"``.
    * 0.10.2 - 0.11.0 (``get_mxfp4_backend``, no LoRA branch, ``VLLM_MXFP4_USE_MARLIN`` not read): capability 9.0
      with ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1`` takes the SM90 CUTLASS backend (``"flashinfer-cutlass"``,
      128/128); capability 10.0 a FlashInfer SM100 backend whatever the switches, all TRT-LLM's 256/256 but
      ``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS=1`` (CUTLASS 128/128, ``"flashinfer-cutlass"``).

    None otherwise (the padding by compute capability)."""
    if version < MXFP4_GET_BACKEND_FROM:
        if settings.mxfp4_use_marlin:
            return "marlin"
        return "flashinfer-trtllm" if cc == (10, 0) and settings.flashinfer_mxfp4_bf16 is not False else None
    if cc == (9, 0) and settings.flashinfer_mxfp4_bf16:
        return "flashinfer-cutlass"
    if cc == (10, 0) and settings.flashinfer_mxfp4_mxfp8_cutlass:
        return "flashinfer-cutlass"
    return "flashinfer-trtllm" if cc == (10, 0) else None


#: ``get_mxfp4_backend`` tests ``is_device_capability(100)`` (10.0 only) up to 0.12.x and
#: ``is_device_capability_family(100)`` (any 10.x: B300's 10.3 too) from 0.13.0 (the release wheels).
MXFP4_SM100_FAMILY_FROM = (0, 13, 0)

#: From this release the MXFP4 oracle picks by ``_get_priority_backends_for_gpt_oss`` and the kernels'
#: ``is_supported_config`` (LoRA included: ``modular_kernel.py``, ``moe_config.is_lora_enabled and not
#: cls.supports_lora()``), without 0.19.0 - 0.20.x's LoRA branch (``vllm@0.21.0`` ``oracle/mxfp4.py``).
MXFP4_ORACLE_REWRITE_FROM = (0, 21, 0)

#: From this release ``mxfp4_round_up_hidden_size_and_intermediate_size`` rounds TRT-LLM's intermediate size per
#: partition to 128 instead of 256 (``vllm@0.27.0`` ``oracle/mxfp4.py``; 0.26.0 still 256).
MXFP4_TRTLLM_I128_FROM = (0, 27, 0)


def moe_tp_size(settings: VllmSettings, cfg: StartupConfig) -> int:
    """The tensor-parallel size of vLLM's fused MoE layers (ranks each routed expert is split over by width), from
    which ``FusedMoE`` sizes ``intermediate_size_per_partition = intermediate_size // tp_size`` and the quantized
    methods pad that partition (MXFP4: :func:`kvlint.models.weights.weight_bytes`' ``tp``).
    ``FusedMoEParallelConfig.make`` flattens TP across DP (``tp x dp``, :func:`moe_shards_experts_across_dp`) and,
    with ``--enable-expert-parallel`` over more than one rank, gives the experts to the ranks whole (``tp_size`` 1,
    ``ep_size = tp x dp``; ``vllm@0.9.2``/``0.19.0:vllm/model_executor/layers/fused_moe/config.py``, ``layer.py``;
    0.8.x inline in ``FusedMoE.__init__``). Otherwise ``cfg.tp``."""
    dp = max(1, cfg.dp)
    if settings.enable_expert_parallel and cfg.tp * dp > 1:
        return 1
    if dp > 1 and moe_shards_experts_across_dp(cfg.version):
        return cfg.tp * dp
    return cfg.tp


def split_weights(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig) -> WeightSplit:
    """Step 2 of :func:`plan_vllm_detailed` (§1.13); see :class:`WeightSplit`."""
    dbytes = cfg.dtype_bytes
    w_total, w_src = _weights_total(
        model,
        dbytes,
        settings.quantization,
        moe_tp_size(settings, cfg),
        cfg.compute_capability,
        mxfp4_moe_backend(settings, cfg.version, cfg.compute_capability),
    )
    if settings.speculative_model is not None:
        dw, _ = _weights_total(settings.speculative_model, dbytes, None)
        w_total += dw
    facts = cfg.facts or model_facts(model)
    embed = facts.embed_elements * dbytes
    lm = 0 if model.tie_word_embeddings else embed
    if cfg.pooling and lm and model.weight_bytes is None and not settings.quantization:
        # a pooling model holds no LM head (models/adapters.py::_create_pooling_model_cls deletes it and skips
        # lm_head.* on load): the architecture estimate counted one. A checkpoint size is kept as it is (the
        # checkpoint may not have one: E5-Mistral's MistralModel, Qwen3-Embedding).
        w_total, w_src = max(0, w_total - lm), f"{w_src}, less the LM head a pooling model does not load"
        lm = 0
    skipped = towers_not_loaded(model, cfg.version, settings.limit_mm_per_prompt)
    if skipped:
        # the towers vLLM does not build at a limit of 0 (multimodal.towers_not_loaded), kept at the activation
        # dtype in the count (param_breakdown's "vision": towers are not quantized)
        cfg_ = model.config or {}
        gone = sum(
            (vision_params if kind == "vision" else audio_params)(cfg_, model.hidden_size)
            for kind, _ in skipped
        )
        if gone > 0:
            names = " and ".join(f"{kind} tower ({'/'.join(m)} limited to 0)" for kind, m in skipped)
            w_total = max(0, w_total - gone * dbytes)
            w_src = f"{w_src}, less the {names} vLLM does not load: {gone * dbytes / GiB:.2f} GiB"
    repl, repl_src = tp_replicated_bytes(
        model, dtype_bytes=dbytes, quantization=settings.quantization, tp=cfg.tp
    )
    not_built = {kind for kind, _ in skipped}
    vis_repl = vision_replicated_bytes(settings, model, cfg, not_built)
    if vis_repl:
        repl += vis_repl
        what = (
            f"vision tower whole on every rank (--mm-encoder-tp-mode data) +{vis_repl / GiB:.2f} GiB per rank over "
            f"1/{cfg.tp}"
        )
        repl_src = f"{repl_src}; {what}" if repl_src else f"replicated on every TP rank: {what}"
    towers = pipeline_towers(model, cfg, not_built, settings) if cfg.pp > 1 else (0, 0, 0, False)
    return WeightSplit(
        total=w_total,
        source=w_src,
        embed=embed,
        lm_head=lm,
        per_layers=max(0, w_total - embed - lm),
        expert_fraction=facts.expert_fraction,
        # expert parallelism splits the experts whole over TP x DP; without it they are split by width over the
        # same ranks (FusedMoEParallelConfig flattens TP across DP)
        ep=cfg.tp * cfg.dp
        if settings.enable_expert_parallel or moe_shards_experts_across_dp(cfg.version)
        else cfg.tp,
        rotary=_rotary_cache_bytes(
            model, dbytes, cfg.derived_max_model_len if cfg.auto_fit else cfg.max_model_len
        ),
        replicated=repl,
        replicated_source=repl_src,
        layers=decoder_layer_bytes(model, dtype_bytes=dbytes, quantization=settings.quantization)
        if cfg.pp > 1
        else (),
        towers=towers[0],
        towers_whole=towers[1],
        towers_replicated=towers[2],
        towers_first_stage_only=towers[3],
    )


#: First vLLM release that builds the multimodal towers on the first pipeline stage only on either model runner
#: (``SupportsMultiModal._mark_tower_model``: ``StageMissingLayer`` where ``not get_pp_group().is_first_rank``,
#: read in the 0.34.0 wheel); 0.33.0 does so on the V2 model runner only (``vllm_config.use_v2_model_runner and not
#: get_pp_group().is_first_rank``), and 0.15.1 - 0.32.0 build them on every stage (the context skips a tower only
#: at a ``--limit-mm-per-prompt`` of 0; read in the 0.15.1, 0.19.0, 0.25.0, 0.29.0 and 0.32.0 wheels), as the
#: models did before it (``vllm@0.11.0:qwen2_5_vl.py``: ``self.visual`` built whenever images are allowed)
TOWERS_FIRST_STAGE_ONLY_FROM: Version = (0, 34, 0)
#: The release whose V2 model runner alone builds the towers on the first stage only (see above)
TOWERS_FIRST_STAGE_ONLY_V2_RUNNER: Version = (0, 33, 0)


def encoder_tp_data(settings: VllmSettings, model: ModelSpec) -> bool:
    """Whether vLLM builds this model's vision tower whole on every tensor-parallel rank: ``--mm-encoder-tp-mode
    data`` at a release and for a class in :data:`kvlint.memory.multimodal.ENCODER_TP_DATA_FROM` (the one list the
    encoder's profile reads too; :func:`kvlint.memory.multimodal.encoder_tp_data_applies`). The tower's linear
    layers then take ``disable_tp=True`` (``vllm@002d181a:vllm/model_executor/models/qwen2_5_vl.py``:
    ``self.use_data_parallel = multimodal_config.mm_encoder_tp_mode == "data"``, passed to
    ``Qwen2_5_VisionAttention``'s ``QKVParallelLinear`` and ``RowParallelLinear``, the MLP and the patch merger),
    and each rank encodes its share of the images with the whole tower (``run_dp_sharded_mrope_vision_model``)."""
    return encoder_tp_data_applies(
        settings.mm_encoder_tp_mode, model.architectures, resolve_version(settings.version)[0]
    )


def vision_replicated_bytes(
    settings: VllmSettings, model: ModelSpec, cfg: StartupConfig, skipped: set[str]
) -> int:
    """Bytes per tensor-parallel rank the vision tower holds beyond its even ``1/tp`` share under
    ``--mm-encoder-tp-mode data`` (:func:`encoder_tp_data`): the tower and projector of
    :func:`kvlint.models.weights.vision_params` at the activation dtype (towers are not quantized, as
    :func:`split_weights` prices them), ``x (1 - 1/tp)``. 0 at TP 1, in ``weights`` mode, for a model that falls back
    to it, and when the tower is not built (``skipped`` holds ``"vision"`` at a ``--limit-mm-per-prompt`` of 0)."""
    if cfg.tp <= 1 or "vision" in skipped or not encoder_tp_data(settings, model):
        return 0
    vision = vision_params(model.config or {}, model.hidden_size) * cfg.dtype_bytes
    return int(vision * (1 - 1 / cfg.tp)) if vision > 0 else 0


def pipeline_towers(
    model: ModelSpec, cfg: StartupConfig, skipped: set[str], settings: VllmSettings | None = None
) -> tuple[int, int, int, bool]:
    """``(per-rank bytes, bytes in per_layers, bytes in replicated, first stage only)`` of the multimodal towers
    (vision, audio) a pipeline stage builds whole rather than by its layers: every stage before
    :data:`TOWERS_FIRST_STAGE_ONLY_FROM` (0.33.0 on the V1 runner too), the first stage only from it. The vision
    tower is priced split over TP as :func:`split_weights` prices it, the audio encoder whole on every TP rank
    (:func:`kvlint.models.weights.tp_replicated_bytes`), the vision tower whole too under ``--mm-encoder-tp-mode
    data`` (:func:`vision_replicated_bytes`, from ``settings``); a tower not built at a ``--limit-mm-per-prompt`` of 0
    (``skipped``: ``vision``/``audio``) holds nothing, and is taken out of ``per_layers`` already."""
    cfg_ = model.config or {}
    dbytes = cfg.dtype_bytes
    vision = vision_params(cfg_, model.hidden_size) * dbytes
    audio = audio_params(cfg_, model.hidden_size) * dbytes
    repl = int(audio * (1 - 1 / cfg.tp)) if cfg.tp > 1 else 0
    vision = 0 if "vision" in skipped else vision
    audio = 0 if "audio" in skipped else audio
    vis_repl = vision_replicated_bytes(settings, model, cfg, skipped) if settings is not None else 0
    repl += vis_repl
    if not vision and not audio and not repl:
        return 0, 0, 0, False
    first_only = cfg.version >= TOWERS_FIRST_STAGE_ONLY_FROM or (
        cfg.version >= TOWERS_FIRST_STAGE_ONLY_V2_RUNNER and cfg.v2_runner
    )
    per_rank = vision if vis_repl else int(vision / cfg.tp)
    return per_rank + audio, vision + audio, repl, first_only


@dataclass  # a step record of one plan: see StartupConfig
class StageMemory:
    """Step 3: one pipeline stage's rank, in bytes per GPU.

    ``weights`` (with the RoPE cache, minus ``--cpu-offload-gb``), ``activation``, ``non_torch``, ``cudagraph``
    (0 unless deducted), the KV pool ``kv`` with its band ``kv_low``/``kv_high``, the pool's ``groups``,
    ``bytes_per_block``, ``block_size`` (tokens, after Mamba alignment), ``num_blocks`` and its band,
    ``kv_bytes_per_token`` of the stage's layers, ``bypass`` (``--kv-cache-memory-bytes`` fixed the pool) and
    the stage's ``notes``, some deferred (:data:`kvlint.types.NoteItem`: written when the plan's
    :class:`~kvlint.types.PlanNotes` are first read).
    """

    stage: int
    weights: int
    activation: int
    non_torch: int
    cudagraph: int
    kv: int
    kv_low: int
    kv_high: int
    groups: tuple[KVGroup, ...]
    bytes_per_block: int
    block_size: int
    num_blocks: int
    num_blocks_low: int
    num_blocks_high: int
    kv_bytes_per_token: int
    bypass: bool
    notes: tuple[NoteItem, ...]

    @property
    def held_bytes(self) -> int:
        """What the process holds with a fixed pool: weights + reserve terms + the pool."""
        return int(self.weights + self.activation + self.non_torch + self.cudagraph + self.kv)


def stage_memory(
    settings: VllmSettings, model: ModelSpec, cfg: StartupConfig, weights: WeightSplit, stage: int
) -> StageMemory | None:
    """Step 3 of :func:`plan_vllm_detailed` for pipeline stage ``stage`` (§1.2, §1.4, §1.5, §1.13): None when
    the stage holds no KV-holding layer."""
    split = cfg.stage_layers
    n = split[stage]
    start = sum(split[:stage])
    last = stage == cfg.pp - 1
    counts = _stage_layer_counts(cfg, model.num_layers, start, n, last)
    tp, ep = cfg.tp, weights.ep
    efrac = weights.expert_fraction
    lin_share, exp_share = weights.stage_shares(start, n, model.num_layers)
    # the towers a stage builds whole (pipeline_towers), not by its layers
    w = max(0, weights.per_layers - weights.towers_whole) * (
        (1 - efrac) * lin_share / tp + efrac * exp_share / ep
    )
    w += max(0, weights.replicated - weights.towers_replicated) * n / max(1, model.num_layers)
    w += weights.towers if stage == 0 or not weights.towers_first_stage_only else 0
    w += (weights.embed / tp if stage == 0 else 0) + (weights.lm_head / tp if last and weights.lm_head else 0)
    if last and not weights.lm_head and cfg.pp > 1 and not cfg.pooling:  # a pooling model has no (tied) head
        w += weights.embed / tp
    w = int(w) + weights.rotary
    lora = _lora_stage(settings, model, cfg, start, n, stage == 0, last)
    w += lora[0]
    if settings.cpu_offload_gb:
        off = int(settings.cpu_offload_gb * GiB)
        w = max(int(weights.embed / tp) if stage == 0 else 0, w - off)
    penalty = _v2_penalty_state(model, cfg, last)
    path, alt_path = _sampler_paths(cfg, settings.flashinfer_sampler)
    inter = (cfg.facts or model_facts(model)).inter_eff
    enc = cfg.encoder
    gather = dp_moe_gather_bytes(settings, model, cfg)
    moe_ws = moe_workspace_bytes(settings, model, cfg, cfg.max_num_batched_tokens)
    # what the kept workspace exceeds the forward's MLP term by: forward activation too, but not the DP gather
    ws_excess = moe_forward_excess(moe_ws, cfg.max_num_batched_tokens, inter, tp, cfg.dtype_bytes)
    act = cal.activation_bytes(
        path,
        cfg.sampled_rows,
        cfg.max_num_batched_tokens,
        model.vocab_size,
        model.hidden_size,
        inter,
        tp,
        cfg.dtype_bytes,
        last,
        encoder_peak=enc.peak_bytes if enc and stage == 0 else 0,
        encoder_cache=enc.cache_bytes if enc and stage == 0 else 0,
        forward_extra=gather + ws_excess,
        triton_all_rows=cfg.version >= cal.TRITON_ALL_ROWS_FROM,
        sampler_extra=moe_ws,
    )
    # the V2 sampler's penalty state: not in "Model loading took", in the consumed memory vLLM prints as
    # "weights + non-torch" (>= 0.27.0)
    nt = (
        cal.non_torch_bytes(
            cfg.era,
            tp
            * cfg.pp
            * max(1, cfg.dp),  # the DP group's communicators too (profiled_peer_world: before 0.11.0)
            cfg.vendor,
            False if settings.nccl_nvls_off else cfg.nvls,  # NCCL_NVLS_ENABLE=0: no NVLS buffer
            cfg.nvls_domain,
            tp,
            cfg.compute_capability,
            cfg.version,
        )
        + penalty[0]
    )
    fusion = allreduce_fusion_workspace_bytes(settings, model, cfg)
    dp_nvls = dp_moe_combine_nvls_bytes(settings, model, cfg)
    nt += fusion + dp_nvls
    act_alt = act
    if alt_path is not None:
        act_alt = cal.activation_bytes(
            alt_path, cfg.sampled_rows, cfg.max_num_batched_tokens, model.vocab_size, model.hidden_size,
            inter, tp, cfg.dtype_bytes, last,
            encoder_peak=enc.peak_bytes if enc and stage == 0 else 0,
            encoder_cache=enc.cache_bytes if enc and stage == 0 else 0, forward_extra=gather + ws_excess,
            triton_all_rows=cfg.version >= cal.TRITON_ALL_ROWS_FROM, sampler_extra=moe_ws,
        )  # fmt: skip
    cg = (
        cal.cudagraph_bytes(
            n,
            cfg.max_num_seqs,
            cfg.decode_query_len,
            cfg.max_num_batched_tokens,
            cfg.capture_model_max,
            cfg.version,
            cfg.cudagraph_user or settings.cudagraph_user,
        )
        if cfg.era == "v1" and not settings.enforce_eager
        else 0
    )
    cg_deducted = cg if cfg.cudagraphs_deducted else 0
    over = act + nt + cg_deducted
    bypass = (
        settings.kv_cache_memory_bytes is not None
        and (cfg.release or release_switches(cfg.version)).kv_cache_memory_bytes
    )
    ext_notes: tuple[NoteItem, ...] = ()
    if bypass:
        kv, band = int(settings.kv_cache_memory_bytes or 0), 0
    elif cfg.extensible:
        kv, band, cg_deducted, ext_notes = _extensible_kv(cfg, w, act, nt, cg, exact=penalty[0])
    else:
        # the penalty state is counted from the source: it does not widen the band
        kv, band = cfg.budget_bytes - w - over, cal.band_bytes(over - penalty[0])
    # the sampler path the installed FlashInfer would pick instead (before 0.11.1) widens the band on its side
    kv_lo, kv_hi = kv - band - max(0, act_alt - act), kv + band + max(0, act - act_alt)
    if bypass:
        kv_lo, kv_hi = kv, kv
    tok, groups, bpb, bsz, gnotes = _pool_shape(
        counts, tp, cfg.kv_bytes_per_element, cfg.kv_cache_dtype, cfg.block_size, cfg.hybrid, cfg.era == "v1"
    )
    if not groups or bpb <= 0:
        return None
    return StageMemory(  # positional, in the field order: see resolve_startup's StartupConfig
        stage,  # stage
        w,  # weights
        act,  # activation
        nt,  # non_torch
        cg_deducted,  # cudagraph
        kv,  # kv
        kv_lo,  # kv_low
        kv_hi,  # kv_high
        groups,  # groups
        bpb,  # bytes_per_block
        bsz,  # block_size
        max(0, kv // bpb),  # num_blocks
        max(0, kv_lo // bpb),  # num_blocks_low
        max(0, kv_hi // bpb),  # num_blocks_high
        tok,  # kv_bytes_per_token
        bypass,  # bypass
        # written when the plan's notes are first read (kvlint.types.PlanNotes): the tuples below are deferred
        gnotes
        + lora[1]
        + penalty[1]
        + (((_gather_note, cfg.dp, cfg.max_num_batched_tokens, gather),) if gather else ())
        + (((_moe_workspace_note, cfg.max_num_batched_tokens, moe_ws, ws_excess),) if ws_excess else ())
        + (((_fusion_note, settings, model, cfg, fusion),) if fusion else ())
        + (((_dp_nvls_note, cfg.dp, dp_nvls),) if dp_nvls else ())
        + ((_stage_notes, settings, cfg, act, nt, cg_deducted, bypass, path, alt_path, act_alt),)
        + ext_notes
        + ((_large_defaults_note, settings, model, cfg, path, inter, last, act, kv, bypass),),  # notes
    )


def _gather_note(dp: int, tokens: int, gather: int) -> tuple[str]:
    """The plan note of :func:`dp_moe_gather_bytes` (``gather`` bytes), written when read."""
    return (
        f"MoE layers see all {dp} data-parallel ranks' {tokens:,}-token profile "
        f"batches (the default all-to-all gathers them): +{gather / GiB:.2f} GiB of activation",
    )


def _dp_nvls_note(dp: int, size: int) -> tuple[str]:
    """The plan note of :func:`dp_moe_combine_nvls_bytes` (``size`` bytes for ``dp`` ranks), written when read."""
    return (
        f"the MoE layers' combine all-reduces on the {dp}-rank data-parallel group, whose NCCL NVLink SHARP buffer "
        f"is set up in the profile run: +{size / GiB:.2f} GiB of non-torch memory",
    )


def _moe_workspace_note(tokens: int, workspace: int, excess: int) -> tuple[str]:
    """The plan note of :func:`moe_forward_excess` (``excess`` bytes of the ``workspace`` bytes that
    :func:`moe_workspace_bytes` keeps for ``tokens`` profile tokens), written when read."""
    return (
        f"the MoE experts' buffers for the {tokens:,}-token profile ({workspace / GiB:.2f} GiB, kept by vLLM's "
        f"workspace manager) are wider than the MLP term of the forward pass (experts narrower than the hidden "
        f"size), which holds +{excess / GiB:.2f} GiB more",
    )


def _fusion_note(settings: VllmSettings, model: ModelSpec, cfg: StartupConfig, fusion: int) -> tuple[str]:
    """The plan note of :func:`allreduce_fusion_workspace_bytes` (``fusion`` bytes), written when read."""
    gran = allreduce_fusion_granularity(cfg)
    rounded = (
        f"; three buffers, each rounded up to the {gran >> 20:,} MiB multicast granularity FlashInfer takes on "
        "this GPU"
        if gran > _TWO_MIB
        else ""
    )
    return (
        f"non-torch includes {fusion / GiB:.2f} GiB of FlashInfer's all-reduce + RMSNorm fusion workspace "
        f"({allreduce_fusion_tokens(settings, model, cfg):,} tokens at TP {cfg.tp}{rounded}), which vLLM "
        f"{fmt_version(cfg.version)} builds by default at -O2/-O3 on this GPU; -O1 or --compilation-config "
        '\'{"pass_config": {"fuse_allreduce_rms": false}}\' leaves it out',
    )


#: ``KV_CACHE_MARGIN_FLOOR_BYTES`` by vendor and ``KV_CACHE_MARGIN_FRACTION``
#: (``vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py``): the extensible KV cache keeps
#: ``max(floor, fraction x transient peak)`` of the device headroom free (§1.2.5)
_EXT_MARGIN_FLOOR = {"nvidia": 1 << 30, "amd": 3 << 30}
_EXT_MARGIN_FRACTION = 0.75


def _extensible_kv(
    cfg: StartupConfig, w: int, act: int, nt: int, cg: int, exact: int = 0
) -> tuple[int, int, int, tuple[NoteItem, ...]]:
    """The pool the extensible KV cache (>= 0.34.0) commits on one rank, bytes: ``(kv, band, graph bytes, notes)``,
    the notes deferred (:data:`kvlint.types.NoteItem`, :func:`_extensible_notes`).

    Restates ``vllm@0.34.0:vllm/v1/worker/extensible_kv_cache.py::measure_kv_cache_bytes``, called after warm-up
    and CUDA-graph capture (``vllm/v1/worker/gpu_worker.py::Worker.compile_or_warm_up_model``)::

        non_kv_used = weights + non-torch + captured graph pool                  (resident after capture)
        peak        = activation                                                 (reserved_headroom_bytes)
        margin      = max(1 GiB (3 GiB on ROCm), 0.75 x peak)
        kv          = min(budget - non_kv_used, init_free - non_kv_used - margin) - peak

    with ``budget = ceil(total x util)`` (util 1.0 by default) and ``init_free`` the free memory of the worker's
    start snapshot, which kvlint takes as the device less the CUDA context (``cfg.headroom_bytes``,
    **[calibrated]** ``calibration.CUDA_CONTEXT_BYTES``). The CUDA graphs count once, as the captured pool: with
    the cache on ``GPUModelRunner.profile_cudagraph_memory`` returns 0 (``vllm/v1/worker/gpu/model_runner.py``),
    so ``Worker.determine_available_memory``'s ``peak_activation_memory``, which
    ``Worker.initialize_from_config`` copies into ``reserved_headroom_bytes``, is the profiled activation alone
    (the estimate the cache-off path deducts is not taken). **[assumed]** the peak of the sizing
    warm-up (``ExtensibleKVCache.record_transient_peak``, taken before capture) and the torch reservation growth
    (``torch_reserve_growth_bytes``) do not exceed the profiled activation. vLLM commits ``min`` of this and the
    pool it reserved from the profile (``vllm/v1/core/kv_cache_planning.py::finalize_extensible_kv_cache``), which
    is never smaller. The graph bytes returned (the plan's CUDA-graph row) are the captured pool. ``exact``: bytes of
    ``nt`` counted from the source (the V2 penalty state), left out of the band.
    docs/engine-memory-model.md §1.2.5.
    """
    peak = act
    resident = w + nt + cg
    margin = max(_EXT_MARGIN_FLOOR.get(cfg.vendor, 1 << 30), int(peak * _EXT_MARGIN_FRACTION))
    by_budget = cfg.budget_bytes - resident
    by_device = cfg.headroom_bytes - resident - margin
    kv = min(by_budget, by_device) - peak
    notes = ((_extensible_notes, cg, margin if by_device < by_budget else None, cfg.vendor, peak),)
    return kv, cal.band_bytes(act + nt + cg - exact), cg, notes


def _extensible_notes(cg: int, margin: int | None, vendor: str, peak: int) -> tuple[str, ...]:
    """The plan notes of :func:`_extensible_kv`, written when read: with the captured graph pool ``cg`` bytes, and
    the ``margin`` bytes it keeps free when the device's headroom limits the pool rather than the budget (else
    None) for the ``peak`` bytes of activation."""
    first = (
        "extensible KV cache (vLLM >= 0.34.0): the pool is sized after CUDA-graph capture; the captured graph pool "
        "is resident and the activation peak stays free (no CUDA-graph estimate is taken)"
        if cg
        else "extensible KV cache (vLLM >= 0.34.0): the pool is sized from the memory measured after warm-up"
    )
    if margin is None:
        return (first,)
    return (
        first,
        f"extensible KV cache keeps {margin / GiB:.2f} GiB free (max({_EXT_MARGIN_FLOOR.get(vendor, 1 << 30) >> 30} "
        f"GiB, 0.75 x the {peak / GiB:.2f} GiB transient peak)) besides the "
        f"[calibrated] {cal.CUDA_CONTEXT_BYTES / GiB:.1f} GiB CUDA context, below the budget",
    )


def _v2_penalty_state(model: ModelSpec, cfg: StartupConfig, last: bool) -> tuple[int, tuple[NoteItem, ...]]:
    """The V2 model runner's penalty state on the last pipeline stage (bytes, resident from the model load on; the
    plan counts it with the non-torch memory, as vLLM's "consumed memory (weights + non-torch)" does) and the plan
    line saying so: :func:`kvlint.memory.vllm_runner.penalty_state_bytes` for ``max_num_seqs`` rows, from the
    release whose ``memory_profiling`` counts it (:data:`~kvlint.memory.vllm_runner.PENALTY_STATE_COUNTED_FROM`);
    ``(0, ())`` otherwise, and for a pooling model (its runner builds a pooler, no sampler). The line is deferred
    (:data:`kvlint.types.NoteItem`, :func:`_penalty_note`). docs/engine-memory-model.md §1.2.6."""
    # a pooling model's runner builds no sampler (0.34.0 GPUModelRunner.__init__: is_pooling_model)
    if not (
        last and cfg.v2_runner and not cfg.pooling and cfg.version >= vllm_runner.PENALTY_STATE_COUNTED_FROM
    ):
        return 0, ()
    b = vllm_runner.penalty_state_bytes(cfg.max_num_seqs, model.vocab_size)
    return b, ((_penalty_note, cfg.max_num_seqs, model.vocab_size, b),)


def _penalty_note(rows: int, vocab: int, b: int) -> tuple[str]:
    """The plan line of :func:`_v2_penalty_state` (``b`` bytes for ``rows`` x ``vocab``), written when read."""
    return (
        f"V2 model runner: its sampler's penalty state ({rows} x {vocab:,} int32 counts "
        f"and prompt bit masks, {b / GiB:.2f} GiB, counted with the non-torch memory) is allocated after the "
        "weights are measured and leaves the KV budget (vllm/v1/worker/gpu/sample/penalties.py PenaltiesState)",
    )


def _lora_stage(
    settings: VllmSettings, model: ModelSpec, cfg: StartupConfig, start: int, n: int, first: bool, last: bool
) -> tuple[int, tuple[str, ...]]:
    """With ``--enable-lora``: the bytes of the LoRA slot stacks on one rank of the pipeline stage holding layers
    ``start .. start + n - 1`` (the embedding's on the first stage, the LM head's on the last) and the plan line
    saying so; ``(0, ())`` without LoRA. vLLM allocates them while loading the model, before the profile run, so
    they leave the KV budget like the weights (:mod:`kvlint.memory.lora`, docs/engine-memory-model.md §1.14)."""
    if not settings.enable_lora:
        return 0, ()
    eb = lora_dtype_bytes(settings.lora_dtype, cfg.dtype_bytes)
    st = lora_stacks(
        model,
        model.layers[start : start + n],
        tp=cfg.tp,
        max_loras=settings.max_loras,
        max_lora_rank=settings.max_lora_rank,
        fully_sharded=settings.fully_sharded_loras,
        element_bytes=eb,
        model_bytes=cfg.dtype_bytes,
    )
    total = st.layers + (st.embedding if first else 0) + (st.lm_head if last else 0)
    loras = settings.max_loras or DEFAULT_MAX_LORAS
    rank = settings.max_lora_rank or DEFAULT_MAX_LORA_RANK
    given = " (vLLM's defaults)" if settings.max_loras is None and settings.max_lora_rank is None else ""
    counted = stacks_in_kv_budget(cfg.era, cfg.version)
    note = (
        f"--enable-lora: {loras} LoRA slot(s) x rank {rank}{given} reserve {total / GiB:.2f} GiB per GPU of "
        f"adapter stacks ({eb} B/element, {'fully sharded' if settings.fully_sharded_loras else 'A unsharded'}), "
        + (
            "allocated with the weights before the profile run (vllm/lora/layers/*.py create_lora_weights)"
            if counted
            else "which this release's V0 profile leaves out of the KV budget (vllm-project/vllm#14450): the "
            "process holds them beyond --gpu-memory-utilization"
        )
    )
    if st.unpriced:
        note += "; not priced: " + ", ".join(st.unpriced) + " [assumed 0]"
    return (int(total) if counted else 0), (note,)


#: a larger-default activation is explained when it costs at least this much KV cache per GPU (bytes) ...
_LARGE_DEFAULTS_MIN_BYTES = GiB // 4
#: ... and at least this share of the predicted KV cache
_LARGE_DEFAULTS_MIN_SHARE = 0.1


def _large_defaults_note(
    settings: VllmSettings,
    model: ModelSpec,
    cfg: StartupConfig,
    path: str,
    inter: int,
    last: bool,
    act: int,
    kv: int,
    bypass: bool,
) -> tuple[str, ...]:
    """A note when the release's larger scheduler defaults on this GPU (``EngineArgs.get_batch_defaults``:
    >= 70 GiB and not A100, §1.9) raise the profile run's activation (:func:`kvlint.memory.calibration.
    activation_bytes`: the dummy sampler's ``min(max_num_seqs, max_num_batched_tokens)`` rows and the forward
    pass's tokens, ``gpu_model_runner.profile_run``) enough that a bigger GPU plans fewer KV tokens than a
    smaller one would: by at least :data:`_LARGE_DEFAULTS_MIN_BYTES` and :data:`_LARGE_DEFAULTS_MIN_SHARE` of
    the predicted KV cache. Only for V1 defaults the user left alone, without an encoder profile."""
    if (
        bypass
        or cfg.era != "v1"
        or cfg.encoder is not None
        or not cfg.chunked_prefill
        or settings.max_num_seqs is not None
        or settings.max_num_batched_tokens is not None
    ):
        return ()
    s_mbt, s_seqs, why = dfl.batch_defaults(
        cfg.version, "v1", 0, "", None, settings.performance_mode, cfg.max_model_len, True
    )
    if cfg.max_num_batched_tokens <= s_mbt and cfg.max_num_seqs <= s_seqs:
        return ()
    small = cal.activation_bytes(
        path,
        0 if cfg.pooling else min(s_mbt, s_seqs),  # a pooling model samples no rows
        s_mbt,
        model.vocab_size,
        model.hidden_size,
        inter,
        cfg.tp,
        cfg.dtype_bytes,
        last,
        triton_all_rows=cfg.version >= cal.TRITON_ALL_ROWS_FROM,
    )
    delta = act - small
    if delta < _LARGE_DEFAULTS_MIN_BYTES or (kv > 0 and delta < _LARGE_DEFAULTS_MIN_SHARE * kv):
        return ()
    tier = why.split(": ", 1)[1].removesuffix(" (EngineArgs.get_batch_defaults)")
    return (
        f"this GPU's larger scheduler defaults (max_num_batched_tokens={cfg.max_num_batched_tokens}, "
        f"max_num_seqs={cfg.max_num_seqs}) raise the profile run's activation to {act / GiB:.2f} GiB from "
        f"{small / GiB:.2f} GiB at {s_mbt}/{s_seqs} ({tier}), so it plans {delta / GiB:.2f} GiB/GPU less KV "
        f"cache than those would (it may hold fewer KV tokens than a smaller GPU); --max-num-batched-tokens "
        f"{s_mbt} --max-num-seqs {s_seqs} gives it back (EngineArgs.get_batch_defaults; the dummy sampler "
        f"samples min(max_num_seqs, max_num_batched_tokens) rows in {_runner_file(cfg)}.profile_run)",
    )


def _runner_file(cfg: StartupConfig) -> str:
    """The GPU model runner file the start-up runs: ``gpu/model_runner`` (V2) or ``gpu_model_runner`` (V1)."""
    return "gpu/model_runner" if cfg.v2_runner else "gpu_model_runner"


def _sampler_paths(cfg: StartupConfig, flashinfer_env: bool | None) -> tuple[str, str | None]:
    """``(path, alternative)``: :func:`kvlint.memory.calibration.sampler_path` and
    :func:`~kvlint.memory.calibration.sampler_path_alternative` for this start-up (era, release, chunked
    prefill, GPU capability and vendor) and ``VLLM_USE_FLASHINFER_SAMPLER``; memoised by those inputs
    (:func:`_sampler_paths_of`)."""
    return _sampler_paths_of(
        cfg.version,
        cfg.era,
        cfg.chunked_prefill,
        cfg.compute_capability,
        cfg.vendor,
        flashinfer_env,
        cfg.v2_runner,
    )


@per_object
def _sampler_paths_of(
    v: Version,
    era: str,
    chunked: bool,
    cc: str | None,
    vendor: str,
    flashinfer_env: bool | None,
    v2_runner: bool = False,
) -> tuple[str, str | None]:
    """:func:`_sampler_paths` itself, memoised by the release's identity and the other inputs
    (:func:`per_object`); ``v2_runner``: the start-up runs the V2 model runner (:attr:`StartupConfig.v2_runner`)."""
    path = cal.sampler_path(era, v, chunked, parse_cc(cc), vendor, flashinfer_env, v2_runner)
    return path, cal.sampler_path_alternative(era, v, vendor, flashinfer_env)


PoolShape = tuple[int, tuple[KVGroup, ...], int, int, tuple[str, ...]]
"""``(kv_bytes_per_token, groups, bytes_per_block, block_size, notes)`` of one rank's KV pool (:func:`_pool_shape`)."""


@per_object
def _pool_shape(
    counts: LayerCounts, tp: int, kv_bytes: int, kv_cache_dtype: str, block_size: int, hybrid: bool, v1: bool
) -> PoolShape:
    """The KV pool's shape on one rank of a stage holding ``counts``: its KV bytes per token (Σ
    :func:`~kvlint.memory.kv.layer_bytes_per_token` x count), and under V1 the groups of
    :func:`build_groups_counted`, under V0 one full-attention group of every KV-holding layer with a page of
    ``bytes/token x block_size``. Memoised on the identity of ``counts`` (:func:`per_object`; :func:`layer_counts`
    hands out one tuple per model) and the other arguments with their types."""
    tok = sum(layer_bytes_per_token(lay, tp, kv_bytes, kv_cache_dtype) * c for lay, c in counts)
    if v1 and is_deepseek_v4(counts):
        tok = v4_pool(counts, block_size)[2]
    if v1:
        groups, bpb, bsz, gnotes = build_groups_counted(
            counts, tp, kv_bytes, kv_cache_dtype, block_size, hybrid
        )
    else:
        held = sum(c for lay, c in counts if lay.kind not in ("none", "mamba") and not lay.kv_shared)
        bs = block_size
        groups, bpb, bsz, gnotes = [KVGroup("full", held, bs, tok * bs)], tok * bs, bs, []
    return (tok, tuple(groups), bpb, bsz, tuple(gnotes))


def _stage_layer_counts(cfg: StartupConfig, num_layers: int, start: int, n: int, last: bool) -> LayerCounts:
    """The distinct layers of one pipeline stage with their counts (:func:`kvlint.memory.kv.layer_counts`): its
    slice ``[start, start + n)`` of the pool's layers plus, on the last stage, the draft/MTP layers after the
    target's ``num_layers``. A single stage holds the whole pool (``cfg.layers``, the model's own tuple when
    nothing is added: counted once per model)."""
    if start == 0 and last and n == num_layers:  # one stage: [0, n) + [num_layers, end) is the whole pool
        return layer_counts(cfg.layers)
    own = layer_counts(cfg.layers, start, start + n)
    return _merge_counts(own, layer_counts(cfg.layers, num_layers)) if last else own


def _merge_counts(a: LayerCounts, b: LayerCounts) -> LayerCounts:
    if not b:
        return a
    merged = dict(a)
    for lay, c in b:
        merged[lay] = merged.get(lay, 0) + c
    return tuple(merged.items())


_PATH_TEXT = {
    "v0_sort": "V0 sampler",
    "v0_chunked": "V0 sampler with chunked prefill",
    "v1_flashinfer": "FlashInfer top-k/top-p sampler",
    "v1_native": "PyTorch top-k/top-p sampler",
    "v1_triton": "Triton top-k/top-p sampler",
    "v2_logits": "V2 model runner's default sampler pass",
    "v2_flashinfer": "V2 model runner's warm-up sampler pass, FlashInfer top-k/top-p",
    "v2_triton": "V2 model runner's warm-up sampler pass, Triton top-k/top-p",
}


def _stage_notes(
    settings: VllmSettings,
    cfg: StartupConfig,
    act: int,
    nt: int,
    cg: int,
    bypass: bool,
    path: str = "",
    alt_path: str | None = None,
    act_alt: int = 0,
) -> list[str]:
    notes = []
    if bypass:
        notes.append(
            f"--kv-cache-memory-bytes={settings.kv_cache_memory_bytes}: KV size fixed, utilization ignored"
        )
    elif settings.kv_cache_memory_bytes is not None:
        notes.append("--kv-cache-memory-bytes does not exist before vLLM 0.10.2; ignored")
    how = f"profile with the {_PATH_TEXT.get(path, path)}" if path else ""
    if cfg.pooling:
        how = "profile with the pooler, no sampler"
    elif alt_path and act_alt != act:
        how += (
            f" ({_PATH_TEXT.get(alt_path, alt_path)} if the image's FlashInfer package says so: "
            f"{act_alt / GiB:.2f} GiB, inside the band)"
        )
    if cfg.encoder is not None:
        how += f"; {cfg.encoder.items} dummy {cfg.encoder.modality}(s) through the encoder"
    notes.append(
        f"activation {act / GiB:.2f} GiB{' (' + how + ')' if how else ''}, non-torch {nt / GiB:.2f} GiB"
        + (f", CUDA graphs {cg / GiB:.2f} GiB" if cg else "")
        + " [shapes from the engine source, factors calibrated on ground truth; see kvlint.memory.calibration]"
    )
    return notes


@dataclass  # a step record of one plan: see StartupConfig
class FitCheck:
    """Step 4: vLLM's check that one max-model-len request fits, and the capacity figures it prints.

    ``max_model_len`` (after ``--max-model-len auto`` fitting) and its source; ``num_blocks`` (or the
    ``--num-gpu-blocks-override``); ``capacity_tokens`` ("GPU KV cache size"); ``max_concurrency`` and its band;
    ``needed_bytes``/``available_bytes`` (the two numbers of the E1 message); ``estimated_max_model_len``;
    ``fits``; ``error`` (the start-up error vLLM prints, or None); ``per_request_blocks``; ``notes``.
    """

    max_model_len: int
    max_model_len_source: str
    num_blocks: int
    capacity_tokens: int
    max_concurrency: float
    max_concurrency_low: float
    max_concurrency_high: float
    needed_bytes: int
    available_bytes: int
    estimated_max_model_len: int
    fits: bool
    error: str | None
    per_request_blocks: int
    notes: tuple[str, ...]


#: :func:`_request_terms`: the groups' terms, whether every term's blocks grow with the length, and the uniform
#: block size with the terms' total count and weight (None unless one block size and no Mamba or windowed group)
RequestTerms = tuple[tuple[tuple[KVGroup, int, int], ...], bool, tuple[int, int, int] | None]


def _request_terms_of(groups: Sequence[KVGroup]) -> RequestTerms:
    """What :func:`fit_check` needs of a pool's KV-cache ``groups`` besides the lengths it tries. ``_request_terms``
    is this function memoised by the identity of the groups tuple (:func:`per_object`): :func:`_pool_shape` hands
    out one tuple per pool shape, so the plans of a fleet's GPUs and a container's re-plans derive it once.

    A request's blocks in a group depend on the group's kind, window and block size only: groups sharing them
    are summed once, as ``(first group, count, sum of page_bytes x layers)`` (the first group of each such set
    stands for the set in :meth:`KVGroup.blocks_per_request`; the count multiplies its blocks per request, the
    sum its bytes). ``monotone``: every term's block size is positive and no weight is negative, so its blocks
    never decrease with the length. ``uniform``: ``(block size, total count, total weight)`` when every group
    holds ``cdiv(L, block_size)`` blocks (no Mamba state, no window) with one block size, else None."""
    shared: dict[tuple[str, int | None, int], tuple[KVGroup, int, int]] = {}
    for g in groups:
        key = (g.kind, g.window, g.block_size)
        first, n, weight = shared.get(key, (g, 0, 0))
        shared[key] = (first, n + 1, weight + (g.stride_bytes or g.page_bytes * g.layers))
    terms = tuple(shared.values())
    monotone = all(g.block_size > 0 and w >= 0 for g, _, w in terms)
    sizes = {g.block_size for g, _, _ in terms}
    uniform = None
    if len(sizes) == 1 and not any(
        g.kind == "mamba" or (g.kind in ("sliding", "chunked") and g.window) for g, _, _ in terms
    ):
        uniform = (sizes.pop(), sum(n for _, n, _ in terms), sum(w for _, _, w in terms))
    return terms, monotone, uniform


_request_terms = per_object(_request_terms_of)


def _request_blocks(
    length: int, terms: tuple[tuple[KVGroup, int, int], ...], in_flight: int, spec_blocks: int
) -> int:
    """Blocks one request of ``length`` tokens holds across the groups (:func:`_request_terms`' ``terms``: each
    term's :meth:`KVGroup.blocks_per_request` times its count)."""
    total = 0
    for g, n, _ in terms:
        total += g.blocks_per_request(length, in_flight, spec_blocks) * n
    return total


def _needed_bytes(
    length: int,
    terms: tuple[tuple[KVGroup, int, int], ...],
    in_flight: int,
    spec_blocks: int,
    v0: bool,
    null_block: bool,
    bpb: int,
    bsz: int,
) -> int:
    """Bytes of KV cache one request of ``length`` tokens needs in vLLM's fit check (§1.11): V0 ``cdiv(L,
    block_size) x bytes_per_block``; V1 with the null block (>= 0.29) ``bytes_per_block x`` its blocks
    (:func:`_request_blocks`); before, each term's blocks times its page bytes x layers."""
    if v0:
        return cdiv(length, bsz) * bpb
    if null_block:
        return bpb * _request_blocks(length, terms, in_flight, spec_blocks)
    total = 0
    for g, _, weight in terms:
        total += g.blocks_per_request(length, in_flight, spec_blocks) * weight
    return total


def fit_check(settings: VllmSettings, cfg: StartupConfig, st: StageMemory) -> FitCheck:
    """Step 4 of :func:`plan_vllm_detailed` on the limiting stage (§1.6, §1.11; ``kv_cache_utils.py`` /
    ``kv_cache_planning.py::_check_enough_kv_cache_memory``, ``get_max_concurrency_for_kv_cache_config``)."""
    v, era, groups = cfg.version, cfg.era, st.groups
    bpb, bsz = st.bytes_per_block, st.block_size
    notes: list[str] = []
    nb = st.num_blocks
    if settings.num_gpu_blocks_override:
        notes.append(
            f"num_gpu_blocks overridden to {settings.num_gpu_blocks_override} (--num-gpu-blocks-override)"
        )
        nb = settings.num_gpu_blocks_override
    spec_blocks = cdiv(settings.num_speculative_tokens, bsz) if settings.num_speculative_tokens else 0
    rel = cfg.release or release_switches(v)
    null_block = era == "v1" and rel.null_block
    in_flight = cfg.in_flight_tokens

    terms, terms_monotone, uniform = (
        _request_terms(groups) if type(groups) is tuple else _request_terms_of(groups)
    )

    avail_fit = st.kv - (bpb if null_block else 0)
    if settings.num_gpu_blocks_override:
        avail_fit = nb * bpb - (bpb if null_block else 0)
    max_len, src = cfg.max_model_len, cfg.max_model_len_source
    # needed() never decreases with the length when every block size is positive and no page is negative (each
    # group's blocks are cdiv(min(cap, length), block_size) plus a constant): then a max_model_len that fits is
    # itself the largest fitting length the search below would find
    monotone = bsz > 0 and bpb > 0 and terms_monotone
    # needed(L), the bytes one request of L tokens holds, is _needed_bytes(L, *shape)
    shape = (terms, in_flight, spec_blocks, era == "v0", null_block, bpb, bsz)

    # vLLM's estimated maximum model length: the largest L with needed(L) <= avail_fit (0 when not even one token
    # fits), and needed(max_model_len) when the search computes it
    need_at_max: int | None = None
    est: int | None = None
    if _needed_bytes(1, *shape) > avail_fit:
        est = 0
    else:
        lo, hi = 1, max_len
        if monotone and hi > lo:
            need_at_max = _needed_bytes(hi, *shape)
            if need_at_max <= avail_fit:
                est = hi
            elif type(avail_fit) is int:
                # (bytes, tokens) when needed(L) = bytes x cdiv(L, tokens) exactly: V0, or V1 groups that all hold
                # cdiv(L, block_size) blocks (no Mamba state, no window) with one block size (_request_terms)
                step: tuple[int, int] | None = None
                if era == "v0":
                    step = bpb, bsz
                elif uniform is not None:
                    size, count, weight = uniform
                    step = (bpb * count if null_block else weight), size
                if step is not None and step[0] > 0:
                    # needed(L) <= avail  <=>  cdiv(L, tokens) <= avail // bytes  <=>  L <= tokens x (avail // bytes)
                    est = min(hi, avail_fit // step[0] * step[1])
        if est is None:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if _needed_bytes(mid, *shape) <= avail_fit:
                    lo = mid
                else:
                    hi = mid - 1
            est = lo
    planned_len = max_len
    if cfg.auto_fit:
        if est < max_len:
            notes.append(f"Auto-fit max_model_len: reduced from {max_len} to {est} to fit the KV cache")
            max_len = max(est, 0)
        src = "auto"
    # one request's blocks across the groups (with the null block, needed(max_len) is exactly bpb x these)
    if not max_len:
        blocks = 0
    elif null_block and need_at_max is not None and max_len == planned_len:
        blocks = need_at_max // bpb
    else:
        blocks = _request_blocks(max_len, terms, in_flight, spec_blocks)
    if era == "v0":
        tokens = nb * bsz
        conc = tokens / max_len if max_len else 0.0
        conc_lo = st.num_blocks_low * bsz / max_len if max_len else 0.0
        conc_hi = st.num_blocks_high * bsz / max_len if max_len else 0.0
    else:
        prb = max(1, blocks) if max_len else 1
        conc = nb / prb
        conc_lo, conc_hi = st.num_blocks_low / prb, st.num_blocks_high / prb
        if rel.capacity_concurrency:
            tokens = int(conc * max_len)
        elif rel.groups_min_block:
            tokens = (nb // len(groups)) * min(g.block_size for g in groups)
        else:
            tokens = nb * bsz
    if not max_len:
        need = 0
    elif need_at_max is not None and max_len == planned_len:
        need = need_at_max
    else:
        need = _needed_bytes(max_len, *shape)
    fits = max_len > 0 and need <= avail_fit and nb > 0
    error = None
    if st.kv <= 0 or nb <= 0:
        error = _e2_text(v, era, _hint_034(cfg))
    elif not fits:
        error = _e1_text(v, era, max_len, need, avail_fit, est, tokens, _hint_034(cfg))
    return FitCheck(
        max_model_len=int(max_len),
        max_model_len_source=src,
        num_blocks=int(nb),
        capacity_tokens=int(tokens),
        max_concurrency=float(conc),
        max_concurrency_low=float(conc_lo),
        max_concurrency_high=float(conc_hi),
        needed_bytes=int(need),
        available_bytes=int(avail_fit),
        estimated_max_model_len=int(est),
        fits=fits,
        error=error,
        per_request_blocks=int(max(1, blocks) if max_len else 1),
        notes=tuple(notes),
    )


def _fmt_gib(v: Version, x: int) -> str:
    val = x / GiB
    if v >= (0, 14, 0):
        return f"{round(val, 2)}"
    return f"{val:.2f}"


def _hint_034(cfg: StartupConfig) -> str | None:
    """From 0.34.0, the remedy E1 and E2 name (``vllm@0.34.0:vllm/v1/core/kv_cache_planning.py::
    _more_kv_cache_memory_hint``), in the wording of the check after warm-up when the extensible KV cache is on
    (**[assumed]**: kvlint's pool is the measured one, so the shortfall it predicts is the one
    ``shrink_kv_cache_configs`` reports); None before 0.34.0."""
    if cfg.version < (0, 34, 0):
        return None
    if not cfg.extensible:
        return (
            "Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls CPU "
            "memory reservation on the CPU backend, despite its name)."
        )
    graphs = " CUDA graphs take less with fewer or smaller capture sizes in the compilation config."
    used_by = "the model, its activations, CUDA graphs and warmup"
    if cfg.gpu_memory_utilization < 1.0:
        return (
            f"The KV cache gets what is left after {used_by} within `gpu_memory_utilization`="
            f"{cfg.gpu_memory_utilization}; increase it (with the extensible KV cache it defaults to 1.0) or "
            f"decrease `max_model_len` or `max_num_seqs`.{graphs}"
        )
    return (
        f"The extensible KV cache already takes all device memory left after {used_by}; decrease `max_model_len` "
        f"or `max_num_seqs`, or the model needs a device with more memory.{graphs}"
    )


def _e1_text(
    v: Version, era: str, max_len: int, need: int, avail: int, est: int, tokens: int, hint: str | None = None
) -> str:
    """E1 (V1) / V0 length-check error text of that version (§1.11); ``hint``: the 0.34.0 remedy (:func:`_hint_034`)."""
    if hint is not None:
        estimated = (
            f"Based on the available memory, the estimated maximum model length is {est}. " if est > 0 else ""
        )
        return (
            f"To serve at least one request with the model's max seq len ({max_len}), ({_fmt_gib(v, need)} GiB KV "
            f"cache is needed, which is larger than the available KV cache memory ({_fmt_gib(v, avail)} GiB). "
            f"{estimated}{hint} Decreasing `max_model_len` also reduces what is needed. "
            "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
    if era == "v0":
        return (
            f"The model's max seq len ({max_len}) is larger than the maximum number of tokens that can be stored in "
            f"KV cache ({tokens}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine."
        )
    apos = "model's" if v >= (0, 22, 0) else "models's"
    unit = "GiB"
    msg = (
        f"To serve at least one request with the {apos} max seq len ({max_len}), ({_fmt_gib(v, need)} {unit} KV cache "
        f"is needed, which is larger than the available KV cache memory ({_fmt_gib(v, avail)} {unit})."
    )
    if v >= (0, 9, 0):
        msg += f" Based on the available memory, the estimated maximum model length is {est}."
    elif v >= (0, 8, 5) and est > 0:
        msg += " Based on the available memory, "
    if v >= (0, 22, 0):
        msg += (
            " Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
            "decreasing `max_model_len` when initializing the engine."
        )
    else:
        msg += " Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
    if v >= (0, 13, 0):
        msg += " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return msg


def _e2_text(v: Version, era: str, hint: str | None = None) -> str:
    """E2 "No available memory for the cache blocks" of that version (§1.11); ``hint``: the 0.34.0 remedy."""
    if hint is not None:
        return (
            f"No available memory for the cache blocks. {hint} "
            "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
    msg = "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
    if era == "v1" and v >= (0, 22, 0):
        msg = (
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` (this flag also "
            "controls CPU memory reservation on the CPU backend, despite its name) when initializing the engine."
        )
    if era == "v1" and v >= (0, 13, 0):
        msg += " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    return msg


# ------------------------------------------------------------------------------------------------
# fixes


def replan(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
    **changes: Any,
) -> MemoryPlan:
    """:func:`plan_vllm` with some settings changed (``dataclasses.replace(settings, **changes)``).
    Raises TypeError for unknown setting names, PlanError as plan_vllm."""
    return plan_vllm(
        settings.changed(**changes),
        model,
        total_bytes,
        gpu_name=gpu_name,
        compute_capability=compute_capability,
    )


def largest_fitting_max_model_len(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
    plan: Callable[[VllmSettings], VllmPlanDetail] | None = None,
) -> int:
    """The largest max_model_len that fits (tokens; 0 if not even one token fits).

    When these settings do not fit, this is vLLM's own "estimated maximum model length" (the figure its
    E1 error prints, ``kv_cache_planning.py::_check_enough_kv_cache_memory``). When they fit, the plan is
    redone with max_model_len unset, so the answer can reach the length vLLM derives from config.json
    (never above what vLLM accepts): the derived length itself if it fits, else vLLM's estimate there.
    Under V0 without chunked prefill the batch size follows max_model_len, so this is then slightly
    conservative for lengths below the derived one.

    ``plan`` plans a variant of the settings on this model and GPU (default: :func:`plan_vllm_detailed` with these
    arguments); the plan stage passes its memoised planner (:func:`kvlint.memory.stage.plan_settings`).
    """
    if plan is None:

        def plan(s: VllmSettings) -> VllmPlanDetail:
            return plan_vllm_detailed(
                s, model, total_bytes, gpu_name=gpu_name, compute_capability=compute_capability
            )

    d = plan(settings)
    if not d.fits:
        return d.estimated_max_model_len
    if settings.max_model_len is None:
        return d.plan.max_model_len
    full = plan(settings.changed(max_model_len=None))
    best = full.plan.max_model_len if full.fits else full.estimated_max_model_len
    return max(best, d.plan.max_model_len)


def plan_at_utilization(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
) -> Callable[[float], VllmPlanDetail]:
    """A planner of ``settings`` at any ``--gpu-memory-utilization``: ``plan(u)`` is
    ``plan_vllm_detailed(settings.changed(gpu_memory_utilization=u), model, total_bytes, ...)``, computed without
    settling the start-up again. Nothing vLLM decides before the budget reads the utilization (era, dtype, lengths,
    batch defaults, block size, layers: :func:`resolve_startup`), nor does the weight split, so both are resolved
    once; each call recomputes the budget (:func:`_budget`), the stages and the fit check. For a remedy's search
    over utilizations (:func:`smallest_fitting_utilization`, KV102/KV103/KV105), whose answer is then re-planned
    in full.

    Raises :class:`PlanError` as :func:`plan_vllm_detailed` does: here for a non-positive total or a model with
    nothing to cache, in ``plan(u)`` when no stage holds KV.
    """
    if total_bytes <= 0:
        raise PlanError("GPU memory total must be positive")
    if not model_facts(model).stateful:
        raise PlanError(f"model {model.id or '?'} has no attention layers and no state: nothing to cache")
    # any set value: the start-up then carries no note about the default utilization, as with every u below
    first = settings.changed(gpu_memory_utilization=1.0)
    cfg = resolve_startup(first, model, total_bytes, gpu_name=gpu_name, compute_capability=compute_capability)
    weights = split_weights(first, model, cfg)
    rel = cfg.release or release_switches(cfg.version)

    def plan(u: float) -> VllmPlanDetail:
        # the start-up with the utilization and budget changed (a copy of the step record's fields, without
        # running the 31-field __init__ again for each candidate)
        at = replaced(cfg, gpu_memory_utilization=float(u), budget_bytes=int(_budget(total_bytes, u, rel)))
        return _assemble(settings.changed(gpu_memory_utilization=u), model, total_bytes, at, weights)

    return plan


def smallest_fitting_utilization(
    settings: VllmSettings,
    model: ModelSpec,
    total_bytes: int,
    *,
    gpu_name: str = "",
    compute_capability: str | None = None,
) -> float | None:
    """Smallest ``--gpu-memory-utilization`` (<= 1.0, in hundredths, at least 0.01) at which one max-model-len
    request fits, verified by re-planning with :func:`plan_vllm_detailed`; None if even 1.0 does not fit.

    Nothing but the KV budget changes with the utilization, and the budget grows with it, so fitting is monotone in
    it and the answer is bracketed rather than scanned: the first candidate is where the current plan's shortfall
    (E1's needed minus available bytes) says the budget suffices, the candidate and its neighbour bracket the
    answer when the estimate holds, and bisection finishes otherwise; each candidate is planned by
    :func:`plan_at_utilization` (the start-up settled once). The answer equals the smallest fitting hundredth a
    scan in 0.01 steps finds.
    """
    kw: dict[str, Any] = {"gpu_name": gpu_name, "compute_capability": compute_capability}
    d = plan_vllm_detailed(settings, model, total_bytes, **kw)
    at = plan_at_utilization(settings, model, total_bytes, **kw)
    short = d.needed_bytes - d.fit_available_bytes
    guess = math.ceil(max(0.01, d.plan.gpu_memory_utilization + max(0, short) / total_bytes) * 100)
    found = _smallest_fitting_hundredth(lambda h: at(h / 100).fits, min(100, guess))
    if found is None:
        return None
    u = found / 100
    if not plan_vllm_detailed(settings.changed(gpu_memory_utilization=u), model, total_bytes, **kw).fits:
        return None  # the remedy is offered only when the full re-plan fits
    return u


def _smallest_fitting_hundredth(fits: Callable[[int], bool], guess: int) -> int | None:
    """The smallest ``h`` in 1..100 with ``fits(h)``, for ``fits`` monotone increasing; None when ``fits(100)`` is
    false. ``guess`` is tried first and then its neighbour, so a right guess costs three calls; bisection on the
    bracket otherwise."""
    if not fits(100):
        return None
    lo, hi = 0, 100  # fits(lo) false (0: below the range), fits(hi) true
    g = min(max(guess, 1), 100)
    if g < hi:
        if fits(g):
            hi = g
            if g - 1 > lo and not fits(g - 1):
                lo = g - 1
        else:
            lo = g
            if g + 1 < hi and fits(g + 1):
                hi = g + 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi
