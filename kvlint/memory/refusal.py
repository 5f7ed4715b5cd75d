"""Typed plan refusals: why a memory model found no plan, by kind, not by the wording of its message.

A memory model raises :class:`PlanError` when it cannot size a configuration. Some of those are start-up refusals
of the engine itself (a pipeline with more stages than layers, an ``ATTENTION`` value TGI's shards assert against),
which rule KV502 reports as errors at the setting that causes them, with a fix of their own
(:func:`kvlint.rules.families.resolution.model_config_unavailable`). The error carries its :class:`PlanRefusal` from
where the engine model makes it (:mod:`kvlint.memory.vllm`, :mod:`kvlint.memory.sglang`,
:mod:`kvlint.memory.sglang_mamba`, :mod:`kvlint.memory.tgi`) through the plan stage
(:attr:`kvlint.memory.stage.PlanOutcome.refusal`) to the container's result
(:attr:`kvlint.types.ContainerResult.plan_refusal`), so that no caller tells refusals apart by a prefix of the
message (the messages are unchanged: they quote the engine).
"""

from __future__ import annotations

import enum

__all__ = ["PlanError", "PlanRefusal"]


class PlanRefusal(enum.Enum):
    """A start-up refusal of an engine that a memory model recognised (the engine stops before its KV cache is
    sized). Each member names the engine; the message of its :class:`PlanError` quotes the engine's own check."""

    #: vLLM: more pipeline stages than the model has layers (``get_pp_indices`` gives a stage no layer:
    #: :func:`kvlint.memory.vllm.pp_exceeds_layers`)
    VLLM_PP_EXCEEDS_LAYERS = "vllm-pp-exceeds-layers"
    #: vLLM: a ``VLLM_PP_LAYER_PARTITION`` ``get_pp_indices`` refuses (:func:`kvlint.memory.vllm.pp_partition_refused`)
    VLLM_PP_PARTITION = "vllm-pp-partition"
    #: vLLM: an MTP ``num_speculative_tokens`` the model's MTP layers cannot reuse
    #: (:func:`kvlint.memory.vllm.mtp_count_refusal`)
    VLLM_MTP_COUNT = "vllm-mtp-count"
    #: vLLM before 0.9.2: a pooling model with ``VLLM_USE_V1=1`` (0.8 - 0.9.1: the V1 oracle raises instead of
    #: falling back to V0; 0.6.6 - 0.7.x: V1's ``EngineCore`` asserts the runner is not pooling:
    #: :func:`kvlint.memory.vllm.v1_pooling_refused`)
    VLLM_V1_POOLING = "vllm-v1-pooling"
    #: vLLM 0.34.0 and later: ``VLLM_USE_V2_MODEL_RUNNER`` set to anything but ``1`` (``validate_environ`` raises,
    #: the V1 model runner is gone); 0.21.0 - 0.33.x: set to a value ``int()`` cannot read (``vllm/envs.py``
    #: raises): :func:`kvlint.memory.vllm_runner.v2_env_refused`
    VLLM_V2_RUNNER_ENV = "vllm-v2-runner-env"
    #: vLLM 0.21.0 - 0.33.x: ``VLLM_USE_V2_MODEL_RUNNER`` turns the V2 runner on for a feature it does not run
    #: (``_validate_v2_model_runner`` raises: :func:`kvlint.memory.vllm_runner.v2_unsupported`)
    VLLM_V2_RUNNER_UNSUPPORTED = "vllm-v2-runner-unsupported"
    #: vLLM 0.34.0 and later: dual batch overlap (``--enable-dbo``, ``--ubatch-size`` > 1) beside LoRA, pipeline or
    #: prefill context parallelism or a hybrid model (``_validate_model_runner`` raises:
    #: :func:`kvlint.memory.vllm_runner.runner_unsupported`)
    VLLM_DBO_UNSUPPORTED = "vllm-dbo-unsupported"
    #: SGLang: more pipeline stages than the model has layers (``make_layers`` asserts:
    #: :func:`kvlint.memory.sglang.pp_stage_layers`)
    SGLANG_PP_EXCEEDS_LAYERS = "sglang-pp-exceeds-layers"
    #: SGLang: a ``SGLANG_PP_LAYER_PARTITION`` ``get_pp_indices`` refuses (:func:`kvlint.memory.sglang.pp_stage_layers`)
    SGLANG_PP_PARTITION = "sglang-pp-partition"
    #: SGLang before 0.5.0: an MLA model over several pipeline stages (``profile_max_num_token`` asserts)
    SGLANG_PP_MLA = "sglang-pp-mla"
    #: SGLang 0.5.3 - 0.5.20: pipeline parallelism with speculative decoding, refused by the argument check
    #: (:data:`kvlint.memory.sglang.PP_SPEC_REFUSED`)
    SGLANG_PP_SPECULATIVE = "sglang-pp-speculative"
    #: SGLang 0.5.21 and later: pipeline parallelism with a speculative setup ``check_pipeline_parallel_compat``
    #: refuses (:func:`kvlint.memory.sglang.pp_spec_refusal`)
    SGLANG_PP_SPECULATIVE_SETUP = "sglang-pp-speculative-setup"
    #: SGLang 0.5.3 - 0.5.10: pipeline parallelism with ``--enable-mixed-chunk``, refused by the same check
    #: (:data:`kvlint.memory.sglang.PP_MIXED_CHUNK_REFUSED_UNTIL`)
    SGLANG_PP_MIXED_CHUNK = "sglang-pp-mixed-chunk"
    #: SGLang: a ``--mamba-full-memory-ratio`` the hybrid state pool cannot be sized with
    #: (:func:`kvlint.memory.sglang_mamba.pool_slots`)
    SGLANG_MAMBA_RATIO = "sglang-mamba-ratio"
    #: TGI: an ``ATTENTION`` value the shards assert against (:func:`kvlint.memory.tgi.resolve_attention`)
    TGI_ATTENTION = "tgi-attention"


class PlanError(ValueError):
    """A plan is impossible (e.g. the model has no KV-holding layers and no state, or no GPU memory total).

    ``refusal`` is the engine's start-up refusal this is (:class:`PlanRefusal`), or None when kvlint merely cannot size
    the configuration."""

    def __init__(self, message: str, refusal: PlanRefusal | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal

    def __reduce__(self) -> tuple[type[PlanError], tuple[str, PlanRefusal | None]]:
        # an exception pickles its args only: keep the refusal across processes
        return (PlanError, (str(self), self.refusal))
