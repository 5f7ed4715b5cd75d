"""Which GPU model runner a vLLM V1 engine starts, and what the V2 runner holds that the V1 runner does not.

vLLM has two GPU model runners for its V1 engine: the original ``vllm/v1/worker/gpu_model_runner.py`` and the V2
runner ``vllm/v1/worker/gpu/model_runner.py``. ``VllmConfig.use_v2_model_runner`` (``vllm/config/vllm.py``) picks
one, read release by release in the wheels (:func:`uses_v2_runner`); the V1 runner is gone from the 0.34.0 wheel.
The two profile differently (docs/engine-memory-model.md §1.2.6):

* the V2 dummy sampler (``GPUModelRunner._dummy_sampler_run``) runs one default pass over the model-dtype logits
  before 0.33.0, plus from 0.33.0 a second pass with ``SamplingParams.for_sampler_warmup()`` for every row
  (:func:`kvlint.memory.calibration.v2_sampler_bytes`);
* the V2 sampler's penalty state (``vllm/v1/worker/gpu/sample/penalties.py::PenaltiesState``) is allocated when the
  model loads, after the weights are measured and before the profile: from 0.27.0 vLLM's ``memory_profiling``
  counts it (``total_consumed``, the free-memory drop since the worker started), before it the profile's
  before/after difference cancels it out (:func:`penalty_state_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kvlint.memory.versions import Version

#: ``DEFAULT_V2_MODEL_RUNNER_ARCHITECTURES`` by first release (``vllm@0.22.0`` … ``vllm@0.28.0:vllm/config/vllm.py``):
#: before 0.29.0 only these architectures start the V2 runner without ``VLLM_USE_V2_MODEL_RUNNER``
#: (``VllmConfig._is_default_v2_model_runner_model``, generative runner only).
V2_DEFAULT_ARCHITECTURES: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 22, 0), frozenset({"Qwen3ForCausalLM"})),
    ((0, 23, 0), frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"})),
    (
        (0, 24, 0),
        frozenset(
            {
                "Qwen3ForCausalLM",
                "DeepseekV2ForCausalLM",
                "Qwen2MoeForCausalLM",
                "GraniteMoeForCausalLM",
                "LlamaForCausalLM",
                "MistralForCausalLM",
            }
        ),
    ),
    ((0, 25, 0), frozenset({"DeepseekV2ForCausalLM", "Qwen2MoeForCausalLM", "GraniteMoeForCausalLM"})),
    (
        (0, 26, 0),
        frozenset(
            {
                "DeepseekV2ForCausalLM",
                "GraniteMoeForCausalLM",
                "InklingForCausalLM",
                "InklingForConditionalGeneration",
                "LongcatFlashNgramForCausalLM",
                "Qwen2MoeForCausalLM",
            }
        ),
    ),
    (
        (0, 27, 0),
        frozenset(
            {
                "DeepseekV2ForCausalLM",
                "GraniteMoeForCausalLM",
                "InklingForCausalLM",
                "InklingForConditionalGeneration",
                "KimiK3ForConditionalGeneration",
                "LongcatFlashNgramForCausalLM",
                "Qwen2MoeForCausalLM",
            }
        ),
    ),
    (
        (0, 28, 0),
        frozenset(
            {
                "DeepseekV2ForCausalLM",
                "DeepseekV4ForCausalLM",
                "GraniteMoeForCausalLM",
                "InklingForCausalLM",
                "InklingForConditionalGeneration",
                "KimiK3ForConditionalGeneration",
                "LongcatFlashNgramForCausalLM",
                "Qwen2MoeForCausalLM",
            }
        ),
    ),
)
V2_ENV_FROM: Version = (0, 22, 0)
"""``VLLM_USE_V2_MODEL_RUNNER`` unset means "the release decides" from 0.22.0 (``maybe_convert_bool``, default None);
before it the variable defaults to 0 (``vllm@0.21.0:vllm/envs.py``) and kvlint keeps the V1 runner."""
V2_ALL_MODELS_FROM: Version = (0, 29, 0)
"""First release whose ``use_v2_model_runner`` takes the V2 runner for every model unless a feature is unsupported
(``vllm@0.29.0:vllm/config/vllm.py``: no architecture list)."""
V2_ONLY_FROM: Version = (0, 34, 0)
"""The 0.34.0 wheel has no ``gpu_model_runner.py``; ``VLLM_USE_V2_MODEL_RUNNER=0`` is refused
(``vllm@0.34.0:vllm/platforms/interface.py``)."""


V2_ENV_INT_FROM: Version = (0, 21, 0)
"""First release read whose ``VllmConfig.__post_init__`` reads ``VLLM_USE_V2_MODEL_RUNNER`` at every start-up
(``vllm@0.21.0:vllm/config/vllm.py``); up to 0.33.x ``vllm/envs.py`` parses it with ``bool(int(value))``
(``maybe_convert_bool`` from 0.22.0), so a value ``int`` cannot read raises ``ValueError``. The 0.16.0 - 0.20.0
``envs.py`` parse it alike; where those releases read it was not checked, so kvlint refuses nothing before 0.21.0."""


def _as_int(raw: str) -> int | None:
    """``raw`` as Python's ``int()`` reads it (surrounding whitespace, a sign and digit underscores allowed, as
    in vLLM's ``bool(int(value))``), else None."""
    try:
        return int(raw)
    except ValueError:
        return None


def v2_env_value(version: Version, raw: str | None) -> bool | None:
    """``VLLM_USE_V2_MODEL_RUNNER`` as vLLM ``version`` reads the string ``raw`` (None: unset): from 0.21.0 to
    0.33.x ``bool(int(raw))`` (``vllm/envs.py``; ``2`` is on, ``true`` is refused by :func:`v2_env_refused`);
    None when unset, unparseable or from 0.34.0 (which no longer reads it to pick a runner)."""
    if raw is None or not V2_ENV_INT_FROM <= version < V2_ONLY_FROM:
        return None
    n = _as_int(raw)
    return None if n is None else bool(n)


def v2_env_refused(version: Version, raw: str | None) -> str | None:
    """Why vLLM ``version`` refuses to start with ``VLLM_USE_V2_MODEL_RUNNER`` set to ``raw`` (the variable's
    string as the container sets it; None: unset), else None. From 0.34.0 ``Platform.validate_environ``
    (``vllm@0.34.0:vllm/platforms/interface.py``, called by ``EngineArgs.create_engine_config`` whatever
    ``fail_on_environ_validation`` says) raises ``ValueError`` for any value other than the exact string ``1``
    (``0``, ``true``, an empty value alike); ``1`` only logs that it is redundant. From 0.21.0 to 0.33.x
    (:data:`V2_ENV_INT_FROM`) ``bool(int(raw))`` raises ``ValueError`` for a value that is not an integer
    (``true``, ``yes``, an empty value)."""
    if raw is None:
        return None
    if V2_ENV_INT_FROM <= version < V2_ONLY_FROM:
        if _as_int(raw) is not None:
            return None
        return (
            f"vLLM {'.'.join(map(str, version))} refuses to start: VLLM_USE_V2_MODEL_RUNNER={raw} raises ValueError "
            "in vllm/envs.py, which reads the variable with bool(int(value)) (invalid literal for int())"
        )
    if version < V2_ONLY_FROM or raw == "1":
        return None
    return (
        f"vLLM {'.'.join(map(str, version))} refuses to start: VLLM_USE_V2_MODEL_RUNNER={raw} raises ValueError "
        'in validate_environ ("is no longer supported: Model Runner V1 has been removed. Unset this variable."); '
        "0.34.0 has only the V2 model runner"
    )


#: Architectures that keep the V1 runner on ROCm by default, by first release (``vllm@0.27.0``:
#: ``ROCM_EXCLUDED_V2_MODEL_RUNNER_ARCHITECTURES``; ``vllm@0.29.0``/``vllm@0.30.0``/``vllm@0.31.0``:
#: ``ROCM_DEFAULT_MRV1_ARCHITECTURES``; none from 0.32.0)
_ROCM_V1_ARCHITECTURES: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 27, 0), frozenset({"KimiK3ForConditionalGeneration"})),
    ((0, 29, 0), frozenset({"DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM"})),
    ((0, 30, 0), frozenset({"DeepseekV32ForCausalLM", "DeepseekV4ForCausalLM", "GlmMoeDsaForCausalLM"})),
    ((0, 32, 0), frozenset()),
)

#: Speculative methods the V2 runner does not run, by first release
#: (``VllmConfig._get_v2_model_runner_unsupported_features``); before 0.30.0 the V2 runner runs only the methods
#: of :data:`_V2_SPEC_METHODS_BEFORE_030`
_V1_ONLY_SPEC_METHODS: tuple[tuple[Version, frozenset[str]], ...] = (
    (
        (0, 30, 0),
        frozenset(
            {"ngram", "ngram_gpu", "draft_model", "suffix", "medusa", "mlp_speculator", "custom_class"}
        ),
    ),
    ((0, 31, 0), frozenset({"ngram", "ngram_gpu", "suffix", "medusa", "mlp_speculator", "custom_class"})),
    ((0, 32, 0), frozenset({"suffix", "medusa", "mlp_speculator", "custom_class"})),
    ((0, 33, 0), frozenset({"suffix", "custom_class"})),
)
#: Speculative methods the V2 runner runs before 0.30.0, by first release (``VllmConfig.
#: _get_v2_model_runner_unsupported_features``, read in the 0.22.0 - 0.29.0 wheels, and 0.21.0's
#: ``_validate_v2_model_runner``: every other method is unsupported): eagle, eagle3, mtp; dflash from 0.24.0, dspark
#: from 0.25.0, extract_hidden_states from 0.29.0
_V2_SPEC_METHODS_BEFORE_030: tuple[tuple[Version, frozenset[str]], ...] = (
    ((0, 21, 0), frozenset({"eagle", "eagle3", "mtp"})),
    ((0, 24, 0), frozenset({"eagle", "eagle3", "mtp", "dflash"})),
    ((0, 25, 0), frozenset({"eagle", "eagle3", "mtp", "dflash", "dspark"})),
    ((0, 29, 0), frozenset({"eagle", "eagle3", "mtp", "dflash", "dspark", "extract_hidden_states"})),
)


def _at(table: tuple[tuple[Version, frozenset[str]], ...], v: Version) -> frozenset[str]:
    """The entry of ``table`` in force at release ``v`` (the last whose first release is <= ``v``), else empty."""
    out: frozenset[str] = frozenset()
    for first, names in table:
        if v >= first:
            out = names
    return out


def spec_method_name(method: str | None, draft_model: bool) -> str | None:
    """The speculative method as ``SpeculativeConfig`` names it after its own normalisation: ``[ngram]`` is
    ``ngram``, every ``*_mtp`` method ``mtp``, no method with a draft model ``draft_model``; None without
    speculative decoding."""
    m = (method or "").strip().lower()
    if not m:
        return "draft_model" if draft_model else None
    if m == "[ngram]":
        return "ngram"
    if "mtp" in m:
        return "mtp"
    return m


@dataclass(frozen=True, slots=True)
class RunnerFeatures:
    """What a start-up uses that the V2 runner's ``_get_v2_model_runner_unsupported_features`` looks at, beside the
    speculative method and ``--enable-elastic-ep``: ``inner_state`` (the model keeps per-request state: Mamba or
    linear-attention layers, vLLM's ``ModelConfig.has_inner_state``), ``hybrid`` (such layers beside attention
    ones, ``ModelConfig.is_hybrid``), ``is_mla``, ``--prefill-context-parallel-size`` (``pcp``),
    ``--decode-context-parallel-size`` (``dcp``), ``--pipeline-parallel-size`` (``pp``), ``--enable-dbo``,
    ``--ubatch-size``, ``--mamba-cache-mode`` as given (None: not given) and ``--enable-lora``; and the settings of
    :func:`_launcher_list` and :func:`_late_list`: ``--distributed-executor-backend external_launcher``
    (``external_launcher``), ``--enable-return-routed-experts``, ``--logits-processors``, ``--enable-prompt-embeds``,
    ``--logprobs-mode`` (as given; ``generate``: vLLM runs the model with the generative runner),
    ``--kv-sharing-fast-prefill`` and ``--ec-transfer-config``."""

    inner_state: bool = False
    hybrid: bool = False
    is_mla: bool = False
    pcp: int = 1
    dcp: int = 1
    pp: int = 1
    enable_dbo: bool = False
    ubatch_size: int = 1
    mamba_cache_mode: str | None = None
    lora: bool = False
    external_launcher: bool = False
    routed_experts: bool = False
    logits_processors: bool = False
    prompt_embeds: bool = False
    logprobs_mode: str | None = None
    generate: bool = True
    kv_sharing_fast_prefill: bool = False
    ec_transfer: bool = False


NO_FEATURES = RunnerFeatures()

#: First release whose DBO check is ``_get_dbo_unsupported_features`` (``vllm@0.30.0`` - ``0.33.0``:
#: ``vllm/config/vllm.py``, the same body in the four wheels): ``ParallelConfig.use_ubatching`` (``--enable-dbo`` or
#: ``--ubatch-size`` > 1) is unsupported while ``VLLM_USE_V2_MODEL_RUNNER`` is unset, and with it set only beside
#: LoRA, speculative decoding, pipeline parallelism, context parallelism, multimodal or hybrid models, PIECEWISE
#: CUDA graphs or an encoder-only model. Before it (0.21.0 - 0.29.0) ``--enable-dbo`` alone is "dual batch overlap".
DBO_COMBOS_FROM: Version = (0, 30, 0)


def _feature_list(version: Version, f: RunnerFeatures) -> list[str]:
    """The entries of ``_get_v2_model_runner_unsupported_features`` (0.22.0 - 0.33.0; 0.21.0's
    ``_validate_v2_model_runner``) for the features of ``f``, in the source's order, with the wording of release
    ``version`` (dual batch overlap: :func:`_dbo_list`). Read in the 0.21.0 - 0.33.0 wheels:

    * ``has_inner_state``: "hybrid/mamba models" 0.21.0 - 0.22.x; 0.23.0 - 0.24.x only with ``mamba_cache_mode``
      ``align`` (read when ``--mamba-cache-mode align`` is given; vLLM's own switch to ``align`` when prefix caching
      is on is not modelled); gone from 0.25.0;
    * ``prefill_context_parallel_size > 1``: 0.21.0 - 0.25.x; 0.26.0 - 0.28.x unless the model uses MLA; gone from
      0.29.0;
    * ``mamba_cache_mode == "all"``: 0.30.0 - 0.31.x (read when ``--mamba-cache-mode all`` is given,
      :func:`_mamba_all`)."""
    out: list[str] = []
    if f.inner_state:
        if V2_ENV_INT_FROM <= version < (0, 23, 0):
            out.append("hybrid/mamba models")
        elif (0, 23, 0) <= version < (0, 25, 0) and f.mamba_cache_mode == "align":
            out.append("hybrid/mamba models with align cache mode")
    if f.pcp > 1 and (version < (0, 26, 0) or (version < (0, 29, 0) and not f.is_mla)):
        out.append("prefill context parallelism")
    return out


def _dbo_list(version: Version, f: RunnerFeatures, env_set: bool, speculative: bool) -> list[str]:
    """The dual-batch-overlap entries (after the speculative ones in the source): ``enable_dbo`` is "dual batch
    overlap" 0.21.0 - 0.29.x; from :data:`DBO_COMBOS_FROM` ``--enable-dbo`` or ``--ubatch-size`` > 1 is that entry
    while ``VLLM_USE_V2_MODEL_RUNNER`` is unset (``env_set`` False), else the combinations kvlint reads (multimodal
    models, the CUDA graph mode and encoder-only models not read). ``speculative``: a speculative method is set."""
    if version < DBO_COMBOS_FROM:
        return ["dual batch overlap"] if f.enable_dbo else []
    if not (f.enable_dbo or f.ubatch_size > 1):
        return []
    if not env_set:
        return ["dual batch overlap"]
    out = []
    if f.lora:
        out.append("dual batch overlap with LoRA")
    if speculative:
        out.append("dual batch overlap with speculative decoding")
    if f.pp > 1:
        out.append("dual batch overlap with pipeline parallelism")
    if f.dcp > 1 or f.pcp > 1:
        out.append("dual batch overlap with context parallelism")
    if f.hybrid:
        out.append("dual batch overlap with hybrid models")
    return out


def _launcher_list(version: Version, f: RunnerFeatures) -> list[str]:
    """ "pipeline parallelism with external_launcher" (``--distributed-executor-backend external_launcher`` with
    ``--pipeline-parallel-size`` > 1): listed by ``_get_v2_model_runner_unsupported_features`` from 0.24.0 to 0.33.x
    (after sequence parallelism, before the speculative entries) and by 0.34.0's
    ``_get_model_runner_unsupported_features`` (first), read in the 0.24.0 - 0.34.0 wheels: the runner does not
    broadcast the pipeline's outputs to keep torchrun's ranks in step."""
    return (
        ["pipeline parallelism with external_launcher"]
        if f.external_launcher and f.pp > 1 and version >= (0, 24, 0)
        else []
    )


def _eagle3_pp(version: Version, f: RunnerFeatures, spec_method: str | None) -> list[str]:
    """ "EAGLE3 with pipeline parallelism": ``method == "eagle3"`` with ``--pipeline-parallel-size`` > 1, the last
    speculative entry of ``_get_v2_model_runner_unsupported_features`` from 0.22.0 to 0.29.x (read in the
    0.22.0 - 0.30.0 wheels; gone from 0.30.0)."""
    return (
        ["EAGLE3 with pipeline parallelism"]
        if spec_method == "eagle3" and f.pp > 1 and (0, 22, 0) <= version < (0, 30, 0)
        else []
    )


#: ``(entry, first release listing it, first release without it)`` of the entries of
#: ``_get_v2_model_runner_unsupported_features`` after elastic expert parallelism (0.21.0: ``_validate_v2_model_runner``),
#: in the source's order, read in the 0.21.0 - 0.33.0 wheels (``vllm/config/vllm.py``, every minor release).
_LATE_ENTRIES: tuple[tuple[str, Version, Version], ...] = (
    ("routed experts capture", (0, 21, 0), (0, 28, 0)),
    ("custom logits processors", (0, 21, 0), (0, 31, 0)),
    ("prompt embeds", (0, 22, 0), (0, 29, 0)),
    ("logprobs mode", (0, 22, 0), (0, 26, 0)),
    ("KV sharing fast prefill", (0, 21, 0), (0, 30, 0)),
    ("EC transfer", (0, 21, 0), (0, 28, 0)),
)
#: ``--logprobs-mode`` values the V2 runner refuses for a generative model (0.22.0 - 0.25.x)
_V1_ONLY_LOGPROBS_MODES = frozenset({"raw_logits", "processed_logits"})


def _late_list(version: Version, f: RunnerFeatures) -> list[str]:
    """The entries of :data:`_LATE_ENTRIES` in force at ``version`` for the settings of ``f``, each as the release
    words it: ``ModelConfig.enable_return_routed_experts`` (``--enable-return-routed-experts``),
    ``ModelConfig.logits_processors`` (``--logits-processors``; the ``vllm.logits_processors`` entry-point plugins
    installed in the image are not read), ``ModelConfig.enable_prompt_embeds`` (``--enable-prompt-embeds``),
    ``ModelConfig.logprobs_mode`` ``raw_logits``/``processed_logits`` with ``runner_type == "generate"`` ("logprobs
    mode 'raw_logits'"), ``CacheConfig.kv_sharing_fast_prefill`` (``--kv-sharing-fast-prefill``) and
    ``ec_transfer_config`` (``--ec-transfer-config``)."""
    given = {
        "routed experts capture": f.routed_experts,
        "custom logits processors": f.logits_processors,
        "prompt embeds": f.prompt_embeds,
        "logprobs mode": f.generate and f.logprobs_mode in _V1_ONLY_LOGPROBS_MODES,
        "KV sharing fast prefill": f.kv_sharing_fast_prefill,
        "EC transfer": f.ec_transfer,
    }
    out = []
    for entry, first, gone in _LATE_ENTRIES:
        if given[entry] and first <= version < gone:
            out.append(f"logprobs mode '{f.logprobs_mode}'" if entry == "logprobs mode" else entry)
    return out


def _mamba_all(version: Version, f: RunnerFeatures) -> list[str]:
    return (
        ["mamba cache mode 'all'"]
        if (0, 30, 0) <= version < (0, 32, 0) and f.mamba_cache_mode == "all"
        else []
    )


def v2_unsupported(
    version: Version,
    raw: str | None,
    spec_method: str | None = None,
    elastic_ep: bool = False,
    features: RunnerFeatures = NO_FEATURES,
) -> str | None:
    """Why vLLM ``version`` refuses to start when ``VLLM_USE_V2_MODEL_RUNNER`` (the string ``raw``) turns the V2
    runner on for a feature it does not run, else None. From 0.22.0 to 0.33.x an explicit on skips the fallback
    of ``VllmConfig.use_v2_model_runner`` and ``_validate_v2_model_runner`` raises ``ValueError`` listing
    ``_get_v2_model_runner_unsupported_features`` (``vllm/config/vllm.py``, read in the 0.22.0 - 0.33.0 wheels;
    0.21.0's ``VllmConfig.__post_init__`` validates alike when the variable is on, any method but eagle, eagle3
    and mtp refused, although kvlint plans 0.21.0 on the V1 runner);
    restated here for the features kvlint reads from a manifest: the speculative method (``spec_method``,
    :func:`spec_method_name`; the lists of :func:`uses_v2_runner`; 0.22.0 - 0.29.x name ngram/ngram_gpu
    "ngram/ngram_gpu speculative decoding"), ``--enable-elastic-ep`` (listed 0.24.0 - 0.31.x) and the model and
    parallelism ``features`` of :func:`_feature_list` (hybrid/Mamba models, prefill context parallelism, dual batch
    overlap, ``--mamba-cache-mode all``), :func:`_launcher_list` (pipeline parallelism under ``external_launcher``),
    :func:`_eagle3_pp` (EAGLE3 with pipeline parallelism) and :func:`_late_list` (routed experts capture, custom
    logits processors, prompt embeds, logprobs mode ``raw_logits``/``processed_logits``, KV sharing fast prefill,
    EC transfer), in the source's order."""
    if not v2_env_value(version, raw):
        return None
    listed = _feature_list(version, features) + _launcher_list(version, features)
    if spec_method is not None:
        if version < (0, 30, 0):
            if spec_method in ("ngram", "ngram_gpu") and version >= V2_ENV_FROM:
                listed.append("ngram/ngram_gpu speculative decoding")
            elif spec_method not in _at(_V2_SPEC_METHODS_BEFORE_030, version):
                listed.append(f"speculative method '{spec_method}'")
        elif spec_method in _at(_V1_ONLY_SPEC_METHODS, version):
            listed.append(f"speculative method '{spec_method}'")
    listed += _eagle3_pp(version, features, spec_method)
    listed += _dbo_list(version, features, True, spec_method is not None)
    if elastic_ep and (0, 24, 0) <= version < (0, 32, 0):
        listed.append("elastic expert parallelism")
    listed += _late_list(version, features)
    listed += _mamba_all(version, features)
    if not listed:
        return None
    prefix = "VLLM_USE_V2_MODEL_RUNNER" if version < (0, 23, 0) else "Model Runner V2"
    return (
        f"vLLM {'.'.join(map(str, version))} refuses to start: VLLM_USE_V2_MODEL_RUNNER={raw} turns the V2 model "
        f'runner on and _validate_v2_model_runner raises ValueError ("{prefix} does not yet support: '
        f'{", ".join(listed)}"); unset, vLLM falls back to the V1 runner for it'
    )


def runner_unsupported(version: Version, features: RunnerFeatures = NO_FEATURES) -> str | None:
    """Why vLLM ``version`` (0.34.0 and later, :data:`V2_ONLY_FROM`: one model runner) refuses to start with dual
    batch overlap beside a feature it cannot combine it with, else None. ``VllmConfig.__post_init__`` calls
    ``_validate_model_runner`` on every start-up, and ``_get_model_runner_unsupported_features`` lists, when
    ``ParallelConfig.use_ubatching`` (``--enable-dbo`` or ``--ubatch-size`` > 1), the entries of
    ``_get_dbo_unsupported_features`` (``vllm@0.34.0:vllm/config/vllm.py``): LoRA, pipeline parallelism, prefill
    context parallelism, hybrid models, in that order, restated here (multimodal and encoder-only models and
    PIECEWISE CUDA graphs are not read). Unlike 0.30.0 - 0.33.x's list (:func:`_dbo_list`) it no longer names
    speculative decoding nor decode context parallelism, and no variable turns it off. Before them it lists
    "pipeline parallelism with external_launcher" (:func:`_launcher_list`), whatever the microbatching."""
    if version < V2_ONLY_FROM:
        return None
    listed = _launcher_list(version, features)
    if features.enable_dbo or features.ubatch_size > 1:
        if features.lora:
            listed.append("dual batch overlap with LoRA")
        if features.pp > 1:
            listed.append("dual batch overlap with pipeline parallelism")
        if features.pcp > 1:
            listed.append("dual batch overlap with prefill context parallelism")
        if features.hybrid:
            listed.append("dual batch overlap with hybrid models")
    if not listed:
        return None
    return (
        f'vLLM {".".join(map(str, version))} refuses to start: _validate_model_runner raises ValueError ("The GPU '
        f'model runner does not support: {", ".join(listed)}")'
    )


def uses_v2_runner(
    version: Version,
    architectures: tuple[str, ...],
    vendor: str = "nvidia",
    env: bool | None = None,
    spec_method: str | None = None,
    elastic_ep: bool = False,
    features: RunnerFeatures = NO_FEATURES,
) -> bool:
    """Whether vLLM ``version`` (V1 engine, generative model) starts the V2 GPU model runner, restating
    ``VllmConfig.use_v2_model_runner`` (``vllm/config/vllm.py``, read in the 0.21.0 - 0.34.0 wheels):

    * >= 0.34.0: always (the V1 runner is gone);
    * ``env``: ``VLLM_USE_V2_MODEL_RUNNER`` set (from 0.22.0; before it only an explicit 1 would take V2, which
      kvlint does not model);
    * 0.22.0 - 0.28.x: only the architectures of :data:`V2_DEFAULT_ARCHITECTURES`; from 0.29.0 every model;
    * the V1 runner all the same on ROCm for the architectures of :data:`_ROCM_V1_ARCHITECTURES`, with a
      speculative method the V2 runner does not run (``spec_method``, :func:`spec_method_name`), and with
      ``--enable-elastic-ep`` before 0.32.0, and with the ``features`` :func:`_feature_list` lists for an unset
      variable (prefill context parallelism before 0.29.0, dual batch overlap, ``--mamba-cache-mode all``).

    and with the settings of :func:`_launcher_list`, :func:`_eagle3_pp` and :func:`_late_list` (``--logits-processors``,
    ``--enable-prompt-embeds``, ``--logprobs-mode raw_logits`` ...) in the releases that list them.

    The other V1-only features (stock torch.compile, sequence parallelism, parallel drafting, logits-processor
    plugins installed in the image) are not read from a manifest."""
    if version >= V2_ONLY_FROM:
        return True
    if version < V2_ENV_FROM:
        return False
    if env is not None:
        return env
    if version < V2_ALL_MODELS_FROM and not set(architectures) & _at(V2_DEFAULT_ARCHITECTURES, version):
        return False
    if vendor == "amd" and set(architectures) & _at(_ROCM_V1_ARCHITECTURES, version):
        return False
    if spec_method is not None:
        if version < (0, 30, 0):
            if spec_method not in _at(_V2_SPEC_METHODS_BEFORE_030, version):
                return False
        elif spec_method in _at(_V1_ONLY_SPEC_METHODS, version):
            return False
    if elastic_ep and version < (0, 32, 0):
        return False
    if _feature_list(version, features) or _dbo_list(version, features, False, spec_method is not None):
        return False
    if _launcher_list(version, features) or _eagle3_pp(version, features, spec_method):
        return False
    return not (_late_list(version, features) or _mamba_all(version, features))


V2_CUDAGRAPH_PROFILED_FROM: Version = (0, 29, 0)
"""First release whose V2 ``GPUModelRunner.profile_cudagraph_memory`` estimates the CUDA graphs (a throwaway capture
against a minimal KV cache, ``vllm@0.29.0``/``vllm@0.31.0``/``vllm@0.33.0:vllm/v1/worker/gpu/cudagraph_utils.py::
profile_cudagraph_memory``); in every wheel from 0.22.0 to 0.28.0 (0.22.0, 0.22.1, 0.23.0, 0.24.0, 0.25.0, 0.25.1,
0.26.0, 0.27.0, 0.27.1, 0.28.0 read) it returns 0 ("It is TBD whether we keep this API or not";
vllm-project/vllm#36520), while ``vllm/v1/worker/gpu_worker.py`` calls it for either runner, so ``Worker.determine_available_memory`` deducts
nothing for the graphs that ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` (on by default) would have it deduct."""


PENALTY_STATE_COUNTED_FROM: Version = (0, 27, 0)
"""First release whose ``memory_profiling`` (``vllm/utils/mem_utils.py``) counts the memory allocated between the
weight measurement and the profile (``total_consumed``); ``vllm@0.26.0`` still sums weights, the profile's torch
peak increase and the non-torch increase, which leaves it out."""


def penalty_state_bytes(max_num_seqs: int, vocab: int) -> int:
    """Bytes of the V2 sampler's penalty state on the last pipeline stage: ``output_bin_counts`` (``max_num_seqs x
    vocab`` int32) and ``prompt_bin_mask`` (``max_num_seqs x ceil(vocab / 32)`` int32), allocated by
    ``PenaltiesState.__init__`` whether or not a request uses penalties (``vllm@0.24.0``/``vllm@0.34.0:
    vllm/v1/worker/gpu/sample/penalties.py``; the Sampler is built in ``GPUModelRunner.load_model`` after
    ``model_memory_usage`` is taken)."""
    return max(0, max_num_seqs) * (max(0, vocab) + -(-max(0, vocab) // 32)) * 4
