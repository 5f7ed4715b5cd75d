"""Limits family (KV201-KV204, KV209): the context and batch limits against the model and against each other.

Sources: vLLM ``vllm/config/model.py::_get_and_verify_max_len`` (0.11.0; 0.33.0 via
``model_arch_config_convertor.derive_max_model_len_and_key``, docs/engine-memory-model.md §1.8, §1.11 E6) and
``vllm/config/scheduler.py::SchedulerConfig.verify_max_model_len`` (§1.9, §1.11 E7); SGLang
``sglang/srt/configs/model_config.py::ModelConfig._derive_context_length`` (0.4.6-0.5.23).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kvlint.engines.options import MAX_INT_SETTING
from kvlint.memory import defaults
from kvlint.memory.kv import dtype_bytes
from kvlint.memory.sglang import (
    SglangPlanDetail,
    check_context_length,
    context_length_raises,
    derive_context_length,
    pool_starts,
    sglang_version,
    warns_pool_below_context,
)
from kvlint.memory.versions import parse_version, release_shown, resolve_version
from kvlint.rules.context import RuleContext, gib
from kvlint.rules.facts import memory_limit
from kvlint.rules.families.capacity import proposed_max_model_len
from kvlint.rules.families.sglang import fitting_context_length
from kvlint.rules.registry import check
from kvlint.rules.remedies import MIN_USEFUL_MAX_MODEL_LEN
from kvlint.types import Diagnostic, ModelSpec, OptionFinding, Severity


def _derived_len(ctx: RuleContext) -> tuple[int | None, int | None, str]:
    """(derived max_model_len, model_max_length key or None, why) as vLLM derives them for this release.

    An exception from the derivation is kvlint's own failure and is not caught: it reaches the per-workload net
    (:data:`kvlint.pipeline.INTERNAL_ERROR`, KV503) rather than skip KV201, an error, in silence."""
    if ctx.model is None:
        return None, None, ""
    overrides = getattr(ctx.cr.settings, "hf_overrides", None) or None
    derived, _key, mml_key, why = defaults.derive_max_model_len(
        parse_version(ctx.serving.version), ctx.model, overrides
    )
    return int(derived), mml_key, why


def _unreadable(ctx: RuleContext, flag: str) -> bool:
    """The parser already reported ``flag`` (``max-model-len``) as given but unreadable: "unset" would contradict
    it. Read from what the parser recorded, not from its messages (which quote the manifest's own words: an
    unresolved ``--gpu-memory-utilization $(max_model_len)`` named the flag): the setting is among
    :attr:`~kvlint.types.ServingConfig.unresolved` (a value from a variable kvlint cannot resolve, KV503; an
    implausibly large number, KV206), or a KV206 :class:`~kvlint.types.OptionFinding` is about that option (a value
    the engine rejects)."""
    s = ctx.serving
    if flag.replace("-", "_") in s.unresolved:
        return True
    return any(
        f.rule == "KV206" and isinstance(f, OptionFinding) and f.option.lstrip("-").replace("_", "-") == flag
        for f in s.findings
    )


@check("KV201", engine="vllm")
def max_len_above_model_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV201 (vLLM): ``--max-model-len`` above the length vLLM derives from config.json, without
    ``VLLM_ALLOW_LONG_MAX_MODEL_LEN``."""
    s = ctx.serving
    mml = s.get("max_model_len")
    if not isinstance(mml, int) or mml <= 0 or ctx.model is None:
        return  # (before vLLM's derivation, which only a set --max-model-len is compared with)
    derived, mml_key, why = _derived_len(ctx)
    if not derived:
        return
    allow = str(s.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "")).lower() in ("1", "true")
    if mml <= derived or allow or (mml_key and mml <= mml_key):
        return
    yield ctx.finding(
        f"--max-model-len {mml} is greater than the {derived} tokens vLLM {release_shown(s.version)} derives "
        f"from {ctx.model.id}'s config.json ({why}); start-up fails ('User-specified max_model_len ({mml}) is "
        "greater than the derived max_model_len')",
        s.loc("max_model_len"),
        fix=f"use --max-model-len {derived} or less (or set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only if the "
        "model really supports the longer context, e.g. through rope scaling)",
    )


def _sglang_context_raise(ctx: RuleContext) -> Diagnostic | None:
    """The error SGLang stops with when its ``get_context_length`` raises on the model's RoPE factor
    (:func:`kvlint.memory.sglang.context_length_raises`): with or without ``--context-length``
    (``ModelConfig._derive_context_length`` derives the length first, 0.4.6 - 0.5.23). None when it does not, or when
    ``--json-model-override-args`` may change the config (kvlint does not apply it)."""
    s = ctx.serving
    if ctx.model is None or s.get("json_model_override_args") is not None:
        return None
    v = sglang_version(s.version)[0]
    raised = context_length_raises(ctx.model, v)
    if raised is None:
        return None
    what, exc = raised
    given = s.get("context_length") is not None
    return ctx.finding(
        f"SGLang {v[0]}.{v[1]}.{v[2]} derives the context length from {ctx.model.id}'s config.json "
        + ("before it reads --context-length " if given else "")
        + f"(get_context_length: int({what})) and stops at start-up with {exc}",
        s.loc("context_length") if given else s.command_loc,
        fix="correct rope_scaling's factor in config.json (a finite number, e.g. 1.0), or override it with "
        "--json-model-override-args '{\"rope_scaling\": {...}}'"
        + ("" if given else "; --context-length alone does not help"),
        severity="error",
    )


@check("KV201", engine="sglang")
def context_above_model_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV201 (SGLang): ``--context-length`` above the derived context length without
    ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN``; SGLang raises ValueError (text of 0.4.6-0.5.23). Also a RoPE
    factor that makes the derivation itself raise, which SGLang computes before it reads ``--context-length``
    (:func:`_sglang_context_raise`)."""
    s = ctx.serving
    if s.get("context_length") is not None:
        raised = _sglang_context_raise(ctx)
        if raised is not None:
            yield raised
            return
    user = s.get("context_length")
    if not isinstance(user, int) or user <= 0 or ctx.model is None:
        return
    derived, _key, text = check_context_length(ctx.model, user, s.env, sglang_version(s.version)[0])
    if text is None:
        return
    yield ctx.finding(
        f"SGLang raises ValueError: '{text}' (sglang ModelConfig._derive_context_length, 0.4.6-0.5.23)",
        s.loc("context_length"),
        fix=f"set --context-length to at most {derived}, or set "
        "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 if the model really supports more",
    )


@check("KV202", engine="vllm")
def max_len_unset_vllm(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV202 (vLLM): no ``--max-model-len``; vLLM uses the model's full context. An error when the RoPE factor is
    not a number vLLM can multiply into a length (NaN, an infinity, not a number: ``int()`` of the product raises at
    start-up)."""
    s = ctx.serving
    if s.get("max_model_len") is not None or _unreadable(ctx, "max-model-len"):
        return
    derived, _, why = _derived_len(ctx)
    if why.endswith(defaults.ROPE_NOT_APPLIED):
        # vllm@0.11.0 and @0.33.0 vllm/config/model.py::_get_and_verify_max_len: derived_max_model_len *=
        # scaling_factor, then max_model_len = int(derived_max_model_len) when none is given: int() of NaN or an
        # infinity raises (ValueError, OverflowError), as does a factor that is not a number (TypeError, ValueError);
        # a finite product past 2^63 - 1 is a length the start-up KV cache check refuses
        yield ctx.finding(
            f"no --max-model-len: vLLM {release_shown(s.version)} multiplies the length it derives from "
            f"{ctx.model.id if ctx.model else 'the model'}'s config.json by the RoPE scaling factor: "
            + (
                "a length past 2^63 - 1 tokens, which no KV cache holds"
                if "2^63" in why
                else "int() of the product raises at start-up"
            )
            + f" ({why.removeprefix('derived max_model_len from ')})",
            s.command_loc,
            fix="correct rope_scaling's factor (config.json or --hf-overrides), or give --max-model-len (vLLM "
            "then only compares it with the derived length)",
            severity="error",
        )
        return
    plan = ctx.plan
    if plan is not None and plan.max_model_len_source == "derived":
        used: int | None = plan.max_model_len
    elif derived and ctx.model is not None:
        # no plan (no GPU known: the fleet verdict): the length vLLM uses is still the planner's default, which for
        # LongRoPE is original_max_position_embeddings, not the extended length KV202 would otherwise quote
        overrides = getattr(ctx.cr.settings, "hf_overrides", None) or None
        used = defaults.default_max_model_len(parse_version(s.version), ctx.model, derived, overrides)
    else:
        used = derived
    need = ""
    if plan is not None and used:
        need = f"; one such request needs {gib(plan.per_request_bytes)} of KV cache per GPU"
    what, longer = "the model's full context from config.json", ""
    if used and derived and used != derived:
        # LongRoPE (Phi-3/Phi-4): vLLM defaults to original_max_position_embeddings, not the extended length
        # (vllm@0.33.0:vllm/config/model.py::_get_and_verify_max_len; kvlint.memory.defaults.default_max_model_len)
        what = "the model's original_max_position_embeddings from config.json"
        longer = f", of the {derived:,} its LongRoPE scaling allows"
    # the length in the statement, what one request of it needs a clause of its own: inside the parenthesis it
    # made an aside longer than the statement keeps (kvlint.statement.ASIDE_CHARS), and the text report's statement
    # lost the length while its detail line began "131072 tokens; one such request needs ..."
    where = f" ({used} tokens{longer})" if used else ""
    verdict, severity = _full_context_verdict(ctx)
    yield ctx.finding(
        f"no --max-model-len: vLLM uses {what}{where}, which sizes "
        f"admission and the start-up fit check{need}{verdict}",
        s.command_loc,
        fix=_example_fix("--max-model-len", "vLLM", used, _example_len(ctx, used)),
        severity=severity,
    )


@dataclass(frozen=True)
class _Example:
    """KV202's example length: ``tokens``; ``fits`` True when re-planned to fit robustly on this GPU, False when
    no length of at least :data:`MIN_USEFUL_MAX_MODEL_LEN` does, None when kvlint has no plan to tell;
    ``lowered`` when it is below the 32,768-token (or model-limit) example because that does not fit; ``held``
    the clause saying it holds KV104's ``min_concurrency`` (empty when it does not, or for SGLang)."""

    tokens: int
    fits: bool | None = None
    lowered: bool = False
    held: str = ""


#: KV202's example length when the model allows more and the GPU holds it (tokens).
_EXAMPLE_TOKENS = 32768


def _example_len(ctx: RuleContext, derived: int | None) -> _Example:
    """KV202's example length (vLLM): 32,768 (or the model's own limit when smaller), lowered to the largest length
    that fits robustly on this GPU when the plan says 32,768 does not (the same search as KV103's remedy,
    :func:`kvlint.rules.families.capacity.proposed_max_model_len`, aimed at KV104's ``min_concurrency``), so the
    two findings never disagree."""
    example = min(derived or _EXAMPLE_TOKENS, _EXAMPLE_TOKENS)
    plan = ctx.plan
    if plan is None or plan.kv_bytes_per_token <= 0:
        return _Example(example)
    want = float(ctx.param("min_concurrency", "KV104"))
    low_tokens = plan.num_blocks_low * plan.block_size
    if low_tokens >= 1.25 * example and plan.capacity_tokens >= want * example:  # plainly fits: no search
        return _Example(example, fits=True)
    fit = proposed_max_model_len(ctx, below=example + 1)
    if fit is None:
        return _Example(example, fits=False)
    held = f", {want:g} such requests at once: KV104" if fit.detail.plan.max_concurrency >= want else ""
    return _Example(fit.tokens, fits=True, lowered=fit.tokens < example, held=held)


def _example_len_sglang(ctx: RuleContext, derived: int) -> _Example:
    """KV202's example length (SGLang): 32,768 (or the model's own limit when smaller) when the predicted KV pool
    holds one request of it also at the low end of kvlint's band, else the longest length it holds, re-planned
    (:func:`kvlint.rules.families.sglang.fitting_context_length`, the length KV702 proposes)."""
    example = min(derived, _EXAMPLE_TOKENS)
    if not isinstance(ctx.detail, SglangPlanDetail):
        return _Example(example)
    found = fitting_context_length(ctx, at_most=example)
    if found is None:
        return _Example(example, fits=False)
    return _Example(found[0], fits=True, lowered=found[0] < example)


def _example_fix(flag: str, engine: str, used: int | None, ex: _Example) -> str:
    """KV202's fix, one wording for every engine: an example length that fits (or the note that none does), and,
    when the example is the length the engine already uses, a fix worded as pinning it (stating the value keeps
    it from following config.json; it changes nothing today), never as a change."""
    if ex.fits is False:
        return (
            f"set {flag} to the longest prompt + output you serve; on this GPU no length of at least "
            f"{MIN_USEFUL_MAX_MODEL_LEN:,} tokens fits robustly (see the capacity findings)"
        )
    if used and ex.tokens == used:
        return (
            f"state the limit explicitly: {flag} {used} pins the {used:,} tokens {engine} already uses (nothing "
            "changes today, but the limit no longer follows config.json); set it lower if your prompt + output "
            "are shorter"
        )
    note = f" (the largest that fits robustly on this GPU{ex.held})" if ex.lowered else ""
    return f"set {flag} to the longest prompt + output you serve, e.g. {flag} {ex.tokens}{note}"


def _full_context_verdict(ctx: RuleContext) -> tuple[str, Severity | None]:
    """What the full default context does on this GPU, and KV202's severity for it: info when the KV cache
    holds at least KV104's ``min_concurrency`` full-length requests even at the low end of the plan's range
    (nothing to act on), the catalogue's warning when it decides start-up (not even one fits: vLLM refuses,
    KV103) or concurrency (fewer than that), and the plain warning when kvlint has no plan to tell."""
    plan = ctx.plan
    if plan is None:
        return "", None
    low = plan.max_concurrency_low
    want = float(ctx.param("min_concurrency", "KV104"))
    if plan.max_concurrency < 1:
        return "; on this GPU not even one such request fits in the KV cache, so this decides start-up", None
    if low < want:
        return (
            f"; on this GPU about {plan.max_concurrency:.1f} such requests fit at once (as few as {low:.1f}), so it "
            "decides concurrency",
            None,
        )
    return f"; on this GPU at least {low:.1f} such requests fit at once, so the default leaves room", "info"


def _sglang_verdict(ctx: RuleContext) -> tuple[str, Severity | None]:
    """:func:`_full_context_verdict` for SGLang, which does not refuse a context longer than its KV pool: it starts,
    caps every request at ``max_req_len = min(context_len, max_total_num_tokens) - 1`` and, from 0.5.23 only,
    warns (:func:`kvlint.memory.sglang.pool_starts`, :func:`~kvlint.memory.sglang.warns_pool_below_context`;
    docs/engine-memory-model.md §3.3; KV702). A pool too small to start with is KV701's, whatever the context, and
    weights larger than the free memory KV101's (the rule named is the one the report holds)."""
    d = ctx.detail
    if not isinstance(d, SglangPlanDetail):
        return _full_context_verdict(ctx)
    pool, version = d.max_total_num_tokens, d.plan.engine_version
    if d.plan.weights_bytes > d.pre_free_bytes:
        # loading the weights fails before any pool is sized: KV101 says so, not KV701 (which then stays quiet)
        return ("; on this GPU the weights alone do not fit, whatever the context length (KV101)", None)
    if d.rest_bytes <= 0 or pool <= 0 or not pool_starts(d.version, pool, d.context_length):
        return (
            f"; on this GPU SGLang {version} has no usable KV pool whatever the context length (KV701)",
            None,
        )
    if pool < d.context_length:
        says = (
            "starts anyway, warns and caps"
            if warns_pool_below_context(d.version)
            else "starts anyway and silently caps"
        )
        return (
            f"; on this GPU the KV pool holds {pool:,} tokens, less than one such request: SGLang {version} {says} "
            f"every request at {pool - 1:,} tokens (KV702)",
            None,
        )
    return _full_context_verdict(ctx)


@check("KV202", engine="sglang")
def context_unset_sglang(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV202 (SGLang): no ``--context-length``; SGLang uses the length derived from config.json, which caps
    every request and, beside the pool size, decides how many full-length requests run at once. A pool smaller
    than that length does not stop SGLang (:func:`_sglang_verdict`). An error when the RoPE factor makes SGLang's
    derivation raise (:func:`_sglang_context_raise`)."""
    s = ctx.serving
    if s.get("context_length") is not None or _unreadable(ctx, "context-length") or ctx.model is None:
        return
    raised = _sglang_context_raise(ctx)
    if raised is not None:
        yield raised
        return
    derived, key = derive_context_length(ctx.model, sglang_version(s.version)[0])
    need = ""
    if ctx.plan is not None:
        need = f"; one such request needs {gib(ctx.plan.per_request_bytes)} of KV cache per GPU"
    verdict, severity = _sglang_verdict(ctx)
    yield ctx.finding(
        f"no --context-length: SGLang uses the model's full context from config.json ({derived} tokens, "
        f"{key}), which caps requests and sizes how many fit in the KV pool{need}{verdict}",
        s.command_loc,
        fix=_example_fix("--context-length", "SGLang", derived, _example_len_sglang(ctx, derived)),
        severity=severity,
    )


@check("KV203")
def batched_tokens_below_len(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV203 (vLLM): chunked prefill disabled and ``max_num_batched_tokens`` < ``max_model_len`` (E7)."""
    s = ctx.serving
    mbt, mml, chunked = (
        s.get("max_num_batched_tokens"),
        s.get("max_model_len"),
        s.get("enable_chunked_prefill"),
    )
    if not (isinstance(mbt, int) and isinstance(mml, int) and mml > 0 and chunked is False and mbt < mml):
        return
    if _chunked_prefill_forced(ctx):
        return  # the flag is ignored: chunked prefill stays on and nothing is refused (the plan notes it)
    yield ctx.finding(
        f"chunked prefill is disabled and max_num_batched_tokens ({mbt}) is smaller than max_model_len "
        f"({mml}); vLLM refuses: 'max_num_batched_tokens ({mbt}) is smaller than max_model_len ({mml})'",
        s.loc("max_num_batched_tokens"),
        fix=f"raise --max-num-batched-tokens to at least {mml}, or enable chunked prefill",
    )


def _chunked_prefill_forced(ctx: RuleContext) -> bool:
    """Whether this vLLM runs the V1 engine of a release that ignores ``--no-enable-chunked-prefill`` (0.8.0 to
    0.11.0, :func:`kvlint.memory.defaults.v1_chunked_prefill_forced`). The engine era is the plan's when there
    is one, else V1 from 0.8.0 unless ``VLLM_USE_V1=0``."""
    v, _ = resolve_version(ctx.serving.version)
    if ctx.plan is not None:
        era = ctx.plan.era
    else:
        era = "v1" if v >= (0, 8, 0) and str(ctx.serving.env.get("VLLM_USE_V1", "")).strip() != "0" else "v0"
    return era == "v1" and defaults.v1_chunked_prefill_forced(v)


@check("KV204")
def batched_tokens_below_seqs(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV204 (vLLM): ``max_num_batched_tokens`` (set, or the release's default for this GPU) below an explicit
    ``max_num_seqs``; ``SchedulerConfig`` validation refuses it (only the *default* max_num_seqs is lowered,
    ``EngineArgs``, 0.10.2-0.33.0)."""
    s = ctx.serving
    mbt, mns = s.get("max_num_batched_tokens"), s.get("max_num_seqs")
    default_mbt = False
    if not isinstance(mbt, int) and isinstance(mns, int) and ctx.plan is not None:
        mbt, default_mbt = ctx.plan.max_num_batched_tokens, True  # the version's default for this GPU
    if not (isinstance(mbt, int) and isinstance(mns, int) and mbt < mns):
        return
    yield ctx.finding(
        f"max_num_batched_tokens ({mbt}{', the vLLM default here' if default_mbt else ''}) must be greater "
        f"than or equal to max_num_seqs ({mns}); vLLM refuses to start (SchedulerConfig validation)",
        s.loc("max_num_seqs") if default_mbt else s.loc("max_num_batched_tokens"),
        fix=f"{'set' if default_mbt else 'raise'} --max-num-batched-tokens to at least {mns} or lower "
        f"--max-num-seqs to {mbt}",
    )


#: Bytes per scheduled token of the persistent input buffers vLLM's V1 model runner allocates when it is built, before
#: the weights are loaded, besides ``inputs_embeds`` (hidden size x model dtype): ``input_ids`` (int32) and
#: ``positions`` (int64) (``vllm@0.8.5``, ``@0.11.0``, ``@0.19.0:vllm/v1/worker/gpu_model_runner.py::
#: GPUModelRunner.__init__``, "Persistent buffers for CUDA graphs"; only the GPU copies are counted, not the pinned
#: CPU ones nor the later releases' further int64/bool rows, so the sum is a lower bound).
V1_RUNNER_TOKEN_BYTES = 4 + 8
#: The V2 model runner's (``vllm@0.34.0:vllm/v1/worker/gpu/input_batch.py::InputBuffers.__init__``, built in
#: ``gpu/model_runner.py::GPUModelRunner.__init__``): ``input_ids`` (int32), ``positions`` (int64), ``is_padding``
#: (bool); its ``inputs_embeds`` is only kept for multimodal and prompt-embedding models, and not counted.
V2_RUNNER_TOKEN_BYTES = 4 + 8 + 1


#: From this release the V1 runner's per-token buffers are ``CpuGpuBuffer``s: a pinned host tensor of the same shape
#: is allocated first and its GPU twin after it (``vllm@0.10.2``, ``@0.11.0``, ``@0.19.0``, ``@0.33.0:vllm/v1/utils.py::
#: CpuGpuBuffer.__init__``, ``gpu_model_runner.py::GPUModelRunner._make_buffer``: ``input_ids`` and ``inputs_embeds``
#: among them; ``positions`` too up to 0.18). Up to 0.10.1 the runner allocates them on the GPU (``torch.zeros(...,
#: device=self.device)``) before any pinned copy, and the V2 runner's ``InputBuffers`` are GPU tensors only.
V1_HOST_TWIN_FROM = (0, 10, 2)
#: Host bytes per token of the pinned twins counted (``input_ids``, int32, besides ``inputs_embeds``): a lower bound.
V1_HOST_TWIN_TOKEN_BYTES = 4


#: From this release the V1 runner sizes ``inputs_embeds`` by ``ModelConfig.get_inputs_embeds_size()``
#: (``vllm@0.12.0`` - ``@0.33.0:vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.__init__``:
#: ``self.inputs_embeds_size = model_config.get_inputs_embeds_size()``); up to 0.11.x by ``get_hidden_size()``
#: (``vllm@0.10.1.1``, ``@0.11.0``, ``@0.11.1``: ``self.hidden_size``).
INPUTS_EMBEDS_SIZE_FROM = (0, 12, 0)
#: ``get_inputs_embeds_size`` (``vllm/config/model.py::ModelConfig``) takes the first of these keys the text config
#: has, else the hidden size: ``projection_dim``, ``projection_size`` (0.12.0 - 0.32.0; CLIP/SigLIP-style embedding
#: models) and, first, ``word_embed_proj_dim`` from 0.33.0 (OPT's projected token embeddings).
INPUTS_EMBEDS_KEYS = ("projection_dim", "projection_size")
WORD_EMBED_PROJ_DIM_FROM = (0, 33, 0)


def inputs_embeds_size(model: ModelSpec, version: tuple[int, int, int]) -> tuple[int, str]:
    """Elements per token of the V1 runner's ``inputs_embeds`` buffer in vLLM ``version``, and the key it comes from
    (``"hidden_size"`` when none of :data:`INPUTS_EMBEDS_KEYS` applies): ``ModelConfig.get_inputs_embeds_size``
    over the text config (``hf_text_config``) from :data:`INPUTS_EMBEDS_SIZE_FROM`, the hidden size before.
    A key set to something other than a positive integer is passed over (vLLM would fail on it elsewhere)."""
    hidden = int(model.hidden_size or 0)
    if version < INPUTS_EMBEDS_SIZE_FROM:
        return hidden, "hidden_size"
    text = model.text_config or model.config or {}
    keys = (("word_embed_proj_dim",) if version >= WORD_EMBED_PROJ_DIM_FROM else ()) + INPUTS_EMBEDS_KEYS
    for key in keys:
        v = text.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= MAX_INT_SETTING:
            return v, key
    return hidden, "hidden_size"


def runner_buffer_bytes(
    max_num_batched_tokens: int, embeds_size: int, dtype_bytes: int, v2_runner: bool
) -> int:
    """The GPU bytes of the persistent input buffers vLLM's model runner allocates for ``max_num_batched_tokens``
    tokens before it loads the weights (:data:`V1_RUNNER_TOKEN_BYTES` plus ``inputs_embeds`` of ``embeds_size``
    elements, :func:`inputs_embeds_size`, or :data:`V2_RUNNER_TOKEN_BYTES`): a lower bound,
    docs/engine-memory-model.md §1.9."""
    per_token = V2_RUNNER_TOKEN_BYTES if v2_runner else V1_RUNNER_TOKEN_BYTES + embeds_size * dtype_bytes
    return max_num_batched_tokens * per_token


#: The V1 model runner builds its ``InputBatch`` in ``GPUModelRunner.__init__`` before the per-token buffers and the
#: weights (``vllm@0.8.5``, ``@0.10.1.1``, ``@0.11.0``, ``@0.14.0``, ``@0.19.0``, ``@0.25.0``, ``@0.33.0:vllm/v1/worker/
#: gpu_model_runner.py::GPUModelRunner.__init__``, ``gpu_input_batch.py::InputBatch.__init__``): first, on the host and
#: not pinned, ``token_ids_cpu_tensor`` (int32) of ``max_num_reqs x max_model_len`` and, from 0.11.1,
#: ``is_token_ids_tensor`` (bool) of the same shape; then the block table (``block_table.py::BlockTable``) of
#: ``max_num_reqs x cdiv(max_model_len, block_size)`` int32 on the GPU. Host bytes per (request, position):
V1_TOKEN_TABLE_BYTES = 4
#: plus ``is_token_ids`` (one byte) from this release, which added V1's prompt embeddings (absent in 0.10.1.1, 0.10.2
#: and 0.11.0; present in ``vllm@0.11.1:vllm/v1/worker/gpu_input_batch.py::InputBatch.__init__`` and 0.12.0).
V1_IS_TOKEN_IDS_FROM = (0, 11, 1)


def request_tables(
    version: tuple[int, int, int], rows: int, max_model_len: int, block_size: int
) -> tuple[int, int]:
    """``(host bytes, GPU bytes)`` of the V1 runner's request tables (:data:`V1_TOKEN_TABLE_BYTES`): the host token
    table(s) of ``rows x max_model_len`` and the GPU block table of ``rows x cdiv(max_model_len, block_size)`` int32."""
    per = V1_TOKEN_TABLE_BYTES + (1 if version >= V1_IS_TOKEN_IDS_FROM else 0)
    blocks = -(-max_model_len // max(1, block_size))
    return rows * max_model_len * per, rows * blocks * 4


#: The V2 model runner (``vllm/v1/worker/gpu/``, 0.21.0 - 0.34.0) builds ``RequestState`` first in
#: ``GPUModelRunner.__init__``, before its ``InputBuffers`` and the weights: ``all_token_ids``, int32 of
#: ``max_num_reqs x max_model_len`` (``states.py``), a ``StagedWriteTensor`` with ``uva_instead_of_gpu``, i.e. a pinned
#: host tensor zero-filled by ``torch.zeros(..., pin_memory=True)`` that the GPU reads through UVA
#: (``buffer_utils.py::UvaBuffer``); no block table until ``initialize_kv_cache``. From 0.32.0 an n-gram
#: speculator keeps the table on the GPU instead (``use_dense_all_token_ids``: ``SpeculativeConfig.use_ngram()``,
#: ``ngram``/``ngram_gpu``, in 0.32.0 and 0.33.0; the speculator configs' ``prefer_dense_token_history``, which
#: ``suffix`` sets too, in 0.34.0). Read in the 0.21.0 - 0.34.0 wheels.
V2_TOKEN_TABLE_BYTES = 4
V2_DENSE_TABLE_FROM = (0, 32, 0)
V2_DENSE_SUFFIX_FROM = (0, 34, 0)


def v2_request_table(
    version: tuple[int, int, int], rows: int, max_model_len: int, spec_method: str | None
) -> tuple[int, int]:
    """``(host bytes, GPU bytes)`` of the V2 runner's ``all_token_ids`` (:data:`V2_TOKEN_TABLE_BYTES`): pinned on the
    host, or on the GPU with the n-gram/suffix speculators of the releases that keep it dense."""
    size = rows * max_model_len * V2_TOKEN_TABLE_BYTES
    m = (spec_method or "").strip().lower()
    dense = (version >= V2_DENSE_TABLE_FROM and m in ("ngram", "ngram_gpu")) or (
        version >= V2_DENSE_SUFFIX_FROM and m == "suffix"
    )
    return (0, size) if dense else (size, 0)


def _v2_request_table_finding(ctx: RuleContext) -> Diagnostic | None:
    """KV209's first test under the V2 model runner: its ``all_token_ids`` (:func:`v2_request_table`) beyond the
    container's memory limit (pinned, zero-filled: OOMKilled) or, kept on the GPU, beyond the GPU
    (``torch.OutOfMemoryError``)."""
    plan = ctx.plan
    assert plan is not None
    version = parse_version(plan.engine_version)
    rows, mml = plan.max_num_seqs, plan.max_model_len
    host, gpu = v2_request_table(version, rows, mml, getattr(ctx.detail, "speculative_method", None))
    found = memory_limit(ctx.cr.container)
    if host and found is not None and host > found[0]:
        where = (
            f"pinned on the host (UVA), {rows:,} x {mml:,} x {V2_TOKEN_TABLE_BYTES} B = {gib(host)}, beyond the "
            f"container's memory limit of {gib(found[0])}: zero-filling the pinned pages, the container is OOMKilled "
            "(exit code 137)"
        )
    elif gpu and gpu > plan.total_bytes:
        where = (
            f"on the GPU for the n-gram/suffix speculator, {rows:,} x {mml:,} x {V2_TOKEN_TABLE_BYTES} B = "
            f"{gib(gpu)}, more than the {gib(plan.total_bytes)} of the GPU: torch.OutOfMemoryError ('CUDA out of "
            "memory')"
        )
    else:
        return None
    s = ctx.serving
    loc = s.loc("max_model_len") if "max_model_len" in s.flags else s.command_loc
    return ctx.finding(
        f"--max-model-len {mml:,} makes vLLM {plan.engine_version}'s V2 model runner build its token table "
        f"all_token_ids (int32) for max_num_seqs {rows:,} before loading the weights (GPUModelRunner.__init__, "
        f"RequestState): {where}",
        loc,
        fix="lower --max-model-len to the longest prompt + output you serve (the table grows with max_num_seqs x "
        "max_model_len), or lower --max-num-seqs",
    )


def _request_tables_finding(ctx: RuleContext) -> Diagnostic | None:
    """KV209's first test: the request tables of a huge ``max_model_len`` (:func:`request_tables`), which the V1
    runner allocates before anything else of KV209's. Reported when the host tables exceed the container's memory
    limit (the zero-fill of an unpinned tensor touches every page: OOMKilled) or the GPU block table exceeds the GPU
    (``torch.OutOfMemoryError``, on a host that held the host tables first); a host table larger than an unknown
    host's memory is named in the message, not judged alone."""
    plan, acc = ctx.plan, ctx.placement.accelerator if ctx.placement else None
    if plan is None or acc is None or plan.era != "v1":
        return None
    version = parse_version(plan.engine_version)
    rows, mml = plan.max_num_seqs, plan.max_model_len
    if rows <= 0 or mml <= 0 or version < (0, 8, 0):
        return None
    if getattr(ctx.detail, "v2_runner", False):
        return _v2_request_table_finding(ctx)
    host, gpu = request_tables(version, rows, mml, plan.block_size)
    found = memory_limit(ctx.cr.container)
    over_limit = found is not None and host > found[0]
    if not over_limit and gpu <= plan.total_bytes:
        return None
    s = ctx.serving
    release = f"vLLM {plan.engine_version}"
    tables = "token_ids (int32)" + (" and is_token_ids (bool)" if version >= V1_IS_TOKEN_IDS_FROM else "")
    per = host // (rows * mml)
    first = f"first {tables} on the host, {rows:,} x {mml:,} x {per} B = {gib(host)}, " + (
        f"beyond the container's memory limit of {gib(found[0])}: filling them with zeros, the container is "
        "OOMKilled (exit code 137)"
        if over_limit and found is not None
        else "which a host with less memory refuses at once (RuntimeError 'DefaultCPUAllocator: can't allocate "
        "memory')"
    )
    blocks = -(-mml // max(1, plan.block_size))
    then = (
        f"; then the block table on the GPU, {rows:,} x {blocks:,} blocks of {plan.block_size} tokens x 4 B = "
        f"{gib(gpu)}, more than the {gib(plan.total_bytes)} of the {acc.name}: torch.OutOfMemoryError ('CUDA out of "
        "memory')"
        if gpu > plan.total_bytes
        else ""
    )
    allow = (
        " (VLLM_ALLOW_LONG_MAX_MODEL_LEN lifts the check against the model's length)"
        if str(s.env.get("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "")).strip().lower() in ("1", "true")
        else ""
    )
    loc = s.loc("max_model_len") if "max_model_len" in s.flags else s.command_loc
    return ctx.finding(
        f"--max-model-len {mml:,}{allow} makes {release}'s model runner build its request tables for "
        f"max_num_seqs {rows:,} before loading the weights (GPUModelRunner.__init__, InputBatch): {first}{then}",
        loc,
        fix="lower --max-model-len to the longest prompt + output you serve (the tables grow with max_num_seqs x "
        "max_model_len), or lower --max-num-seqs",
    )


@check("KV209")
def batch_buffers_exceed_gpu(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV209 (vLLM, V1 engine): an explicit ``--max-num-batched-tokens`` whose persistent input buffers alone are
    larger than the GPU. ``SchedulerConfig`` accepts any value of at least ``max_num_seqs`` (above
    ``max_num_seqs x max_model_len`` it only warns, ``vllm@0.19.0:vllm/config/scheduler.py::SchedulerConfig.
    verify_max_model_len``), and the model runner then allocates ``max_num_batched_tokens`` rows of token ids,
    positions and (V1 runner) input embeddings of the hidden size on the GPU in its constructor, before loading the
    weights (:func:`runner_buffer_bytes`), so the worker stops with ``torch.OutOfMemoryError``; from
    :data:`V1_HOST_TWIN_FROM` each is a pinned host copy first, and a container memory limit below those copies is an
    OOMKill (exit code 137) before the GPU copies, which the message then says. Reported at the value
    instead of pricing a profile of that many tokens (KV102's activation); the V0 engine allocates no such buffers
    and is not judged."""
    tables = _request_tables_finding(ctx)
    if tables is not None:
        yield tables
        return
    s = ctx.serving
    mbt = s.get("max_num_batched_tokens")
    plan, model, acc = ctx.plan, ctx.model, ctx.placement.accelerator if ctx.placement else None
    if not isinstance(mbt, int) or isinstance(mbt, bool) or mbt <= 0 or plan is None or plan.era != "v1":
        return
    if model is None or acc is None or not model.hidden_size:
        return
    v2 = bool(getattr(ctx.detail, "v2_runner", False))
    dbytes = dtype_bytes(plan.dtype)
    embeds, embeds_key = inputs_embeds_size(model, parse_version(plan.engine_version))
    need = runner_buffer_bytes(mbt, embeds, dbytes, v2)
    total = plan.total_bytes
    if need <= total:
        return
    release = f"vLLM {plan.engine_version}"
    per_token = need // mbt
    if v2:
        terms = "input_ids, positions and is_padding of the V2 model runner"
    else:
        width = f"{embeds:,}" if embeds_key == "hidden_size" else f"{embeds:,} (the config's {embeds_key})"
        terms = f"input_ids and positions, {V1_RUNNER_TOKEN_BYTES} B, and inputs_embeds, {width} x {dbytes} B"
    fits = total // (need // mbt)
    stop = "the worker stops with torch.OutOfMemoryError ('CUDA out of memory') in GPUModelRunner.__init__"
    if not v2 and parse_version(plan.engine_version) >= V1_HOST_TWIN_FROM:
        host = mbt * (V1_HOST_TWIN_TOKEN_BYTES + embeds * dbytes)
        found = memory_limit(ctx.cr.container)
        if found is not None and found[0] < host:
            stop = (
                f"GPUModelRunner.__init__ allocates each as a pinned host copy first ({gib(host)} for input_ids and "
                f"inputs_embeds), beyond the container's memory limit of {gib(found[0])}: the container is "
                "OOMKilled (exit code 137) before the GPU copies"
            )
        else:
            stop = (
                f"GPUModelRunner.__init__ allocates each as a pinned host copy first ({gib(host)} for input_ids and "
                "inputs_embeds), then on the GPU, where the worker stops with torch.OutOfMemoryError ('CUDA out of "
                "memory'), unless the host's pinned allocation fails first"
            )
    d_mbt, _seqs, _why = defaults.batch_defaults(
        parse_version(plan.engine_version),
        "v1",
        total,
        acc.name,
        acc.compute_capability,
        s.get("performance_mode"),
        plan.max_model_len,
    )
    yield ctx.finding(
        f"--max-num-batched-tokens {mbt:,} makes {release}'s model runner allocate {gib(need)} of input buffers "
        f"per GPU before loading the weights, more than the {gib(total)} of the {acc.name}: {mbt:,} tokens x "
        f"{per_token:,} B ({terms}); {stop}",
        s.loc("max_num_batched_tokens"),
        fix=f"remove --max-num-batched-tokens ({release}'s default here is {d_mbt:,} tokens per step, long prompts "
        f"are prefilled in chunks) or lower it: these buffers alone hold at most {fits:,} tokens on this GPU, and "
        "the profile's forward pass of that many tokens must fit beside the weights as well",
    )
