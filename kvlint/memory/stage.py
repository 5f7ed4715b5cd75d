"""The plan stage: each serving container's engine memory model, computed once per container.

:func:`plan_container` runs after the models and accelerators stages: given the parsed engine settings, the
model's config and the GPU the pod lands on, it builds the engine's per-GPU memory plan
(:func:`kvlint.memory.vllm.plan_vllm_detailed`, :func:`kvlint.memory.tgi.plan_tgi_detailed`,
:func:`kvlint.memory.sglang.plan_sglang_detailed`) and returns it as a :class:`PlanOutcome`. The rules only
read that outcome; when a rule's remedy needs "the same container with one setting changed", it calls
:func:`replan`, the one way to re-plan (used by :mod:`kvlint.rules.remedies`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from typing import Any

import kvlint.accelerators.registry as _catalogue
import kvlint.engines.images as _images
import kvlint.memory.compat as _compat
import kvlint.models as _models
from kvlint.engines.layout import unresolved_sizes
from kvlint.fastinit import direct_init
from kvlint.gpu_resources import MIG_RESOURCE_PREFIX
from kvlint.memory.calibration import CudagraphUser
from kvlint.memory.refusal import PlanRefusal
from kvlint.memory.sglang import (
    SglangPlanDetail,
    SglangPrelude,
    plan_sglang_detailed,
    pool_below_context_behaviour,
    pool_starts,
    sglang_prelude,
)
from kvlint.memory.tgi import TgiPlanDetail, plan_tgi_detailed
from kvlint.memory.vllm import (
    PlanError,
    PlanPrelude,
    VllmPlanDetail,
    VllmSettings,
    plan_at_utilization,
    plan_prelude,
    plan_vllm_detailed,
    settings_from_config,
)
from kvlint.options import Options
from kvlint.types import Accelerator, ContainerResult, MemoryPlan, ModelSpec, Placement, ServingConfig
from kvlint.wording import platform_name, with_article

__all__ = [
    "FleetEntry",
    "PlanDetail",
    "PlanOutcome",
    "fit_assessment",
    "fit_verdict",
    "keep_plans",
    "mig_fleet",
    "mig_profile_of",
    "plan_container",
    "plan_fleet",
    "plan_settings",
    "plannable_gpu",
    "replan",
    "shared_plans",
    "utilization_planner",
]

#: The engine-specific result of a memory model; each carries the engine-neutral ``plan`` (a MemoryPlan).
PlanDetail = VllmPlanDetail | TgiPlanDetail | SglangPlanDetail

#: Exceptions a memory model raises on a configuration it cannot size (never a traceback for the user).
# OverflowError: absurd but finite inputs (gpu-memory-utilization 1e308) overflow the float arithmetic
_PLAN_ERRORS = (PlanError, ValueError, ZeroDivisionError, KeyError, TypeError, OverflowError)


@dataclass(frozen=True)
class PlanOutcome:
    """What the plan stage found for one container.

    Attributes:
        settings: the engine's resolved settings (:class:`~kvlint.memory.vllm.VllmSettings` for vLLM; None for
            TGI and SGLang, whose models read the parsed :class:`~kvlint.types.ServingConfig` directly).
        detail: the engine's full plan (``plan`` plus the engine's own figures: fit check, warmup, pool), or
            None when the model or GPU is unknown or the memory model cannot size this configuration.
        error: why there is no plan although model and GPU are known (shown by KV501/KV502/KV503).
        refusal: the engine's start-up refusal ``error`` states (:class:`~kvlint.memory.refusal.PlanRefusal`, from the
            memory model's :class:`~kvlint.memory.refusal.PlanError`), or None; KV502 reports it by this kind.
        model_note: a note about the model to show beside it (a speculative draft that could not be
            resolved and was planned without).
    """

    settings: Any = None
    detail: PlanDetail | None = None
    error: str | None = None
    model_note: str | None = None
    refusal: PlanRefusal | None = None

    @property
    def plan(self) -> MemoryPlan | None:
        """The engine-neutral per-GPU memory plan, or None."""
        return self.detail.plan if self.detail is not None else None


def plannable_gpu(placement: Placement | None, engine: str) -> tuple[Accelerator, int] | None | str:
    """``(accelerator, device total in bytes)`` when the GPU memory models apply to ``placement``;
    None when the GPU is unknown; a reason (str) when it is known but not a CUDA/ROCm GPU."""
    if placement is None:
        return None
    return _plannable(placement.accelerator, placement.memory_bytes, engine)


def _plannable(
    acc: Accelerator | None, memory_bytes: int | None, engine: str
) -> tuple[Accelerator, int] | None | str:
    """:func:`plannable_gpu` of a placement on ``acc`` with ``memory_bytes`` (:attr:`Placement.memory_bytes`)."""
    if acc is None or not memory_bytes:
        return None
    why = not_a_cuda_rocm_gpu(acc, engine)
    if why is not None:
        return why
    return acc, int(memory_bytes)


def not_a_cuda_rocm_gpu(acc: Accelerator, engine: str) -> str | None:
    """Why the ``engine``'s GPU memory model does not apply to ``acc`` (a TPU, Gaudi or other accelerator that is
    not an NVIDIA or AMD GPU: KV501), else None. Every shell that plans on an accelerator asks this first: the
    plans price CUDA/ROCm start-ups only (:func:`kvlint.memory.calibration.sampler_path`)."""
    if acc.vendor not in ("nvidia", "amd"):
        return f"{acc.name} is not a CUDA/ROCm GPU; the {engine} GPU memory model does not apply"
    return None


def _vllm_settings(serving: ServingConfig, options: Options) -> tuple[VllmSettings, str | None]:
    """vLLM settings with a ``--speculative-config`` draft model resolved (models stage, offline rules of
    ``options``); returns the settings and a note when the draft could not be resolved."""
    settings = settings_from_config(serving)
    draft_id = settings.speculative_model_id
    if not draft_id or settings.speculative_model is not None:
        return settings, None
    try:
        from kvlint.models.resolve import manifest_root

        # a draft path on this machine only inside the repository of the manifest naming it (as the model's)
        where = serving.command_loc.file if serving.command_loc is not None else ""
        draft = _models.resolve_model(
            str(draft_id),
            model_dirs=options.model_dirs,
            model_paths=options.model_paths,
            allow_hub=options.allow_hub,
            allow_local_paths=options.allow_local_paths,
            catalogues=options.model_catalogues,
            local_root=manifest_root(where) if options.allow_local_paths else None,
        )
    except Exception as exc:  # the draft is second-order: plan without it and say so
        return settings, f"speculative draft model '{draft_id}' not resolved ({exc}); planned without it"
    return replace(settings, speculative_model=draft), None


def _sglang_draft(serving: ServingConfig, options: Options) -> str | None:
    """Resolve SGLang's separate draft checkpoint (``--speculative-draft-model-path`` naming another model than
    ``--model-path``, at ``--speculative-draft-model-revision``) as the target is (models stage, offline rules of
    ``options``) into ``serving.draft_model``, which the plan sizes the draft's KV layers from
    (:func:`kvlint.memory.sglang_spec.draft_kv_layers`). Returns a note when it could not be resolved."""
    from kvlint.memory.sglang_spec import EAGLE_FAMILY, normalize_algorithm

    path = str(serving.get("speculative_draft_model_path") or "").strip()
    target = str(serving.model.value).strip() if serving.model is not None else ""
    if (
        not path
        or path == target
        or serving.draft_model is not None
        or normalize_algorithm(serving.get("speculative_algorithm")) not in EAGLE_FAMILY
    ):
        return None
    revision = serving.get("speculative_draft_model_revision")
    try:
        from kvlint.models.resolve import manifest_root

        # a draft path on this machine only inside the repository of the manifest naming it (as the model's)
        where = serving.command_loc.file if serving.command_loc is not None else ""
        serving.draft_model = _models.resolve_model(
            path,
            model_dirs=options.model_dirs,
            model_paths=options.model_paths,
            revision=str(revision) if revision else None,
            allow_hub=options.allow_hub,
            allow_local_paths=options.allow_local_paths,
            catalogues=options.model_catalogues,
            local_root=manifest_root(where) if options.allow_local_paths else None,
        )
    except Exception as exc:  # the draft is second-order: plan without it and say so
        return f"speculative draft model '{path[:120]}' not resolved ({exc}); planned without its KV layers"
    return None


def _detail(
    serving: ServingConfig,
    settings: Any,
    model: ModelSpec,
    gpus: int | None,
    gpu: tuple[Accelerator, int],
    changes: dict[str, Any] | None = None,
    *,
    memo: bool = True,
    prelude: PlanPrelude | SglangPrelude | None = None,
) -> PlanDetail:
    """One run of the engine's memory model, or for vLLM its earlier answer for the same inputs within this
    container's analysis (see :class:`_Scope`; ``memo`` False for plans nothing asks for twice, the fleet's).
    ``gpus`` is the placement's GPU count (:attr:`Placement.gpus`, read by TGI and SGLang), ``gpu`` the GPU and its
    memory total (:func:`plannable_gpu`); ``changes`` settings to change (vLLM: :class:`VllmSettings` fields; TGI and
    SGLang: the planners' overrides); ``prelude`` the plans' GPU-independent steps for ``settings`` (vLLM,
    :func:`kvlint.memory.vllm.plan_prelude`) or ``serving`` and ``changes`` (SGLang,
    :func:`kvlint.memory.sglang.sglang_prelude`) and ``model``, when the caller has them. Raises what the model raises
    (see ``_PLAN_ERRORS``; failures are not kept)."""
    if serving.engine != "vllm":
        return _run(serving, settings, model, gpus, gpu, changes, prelude)
    if (
        not memo
        or type(settings) is not VllmSettings
        or (changes and not changes.keys() <= _FIELD_INDEX.keys())
    ):
        if changes:  # (a name that is not a field raises TypeError here, as dataclasses.replace does)
            settings = (
                settings.changed(**changes)
                if isinstance(settings, VllmSettings)
                else replace(settings, **changes)
            )
        return _run(serving, settings, model, gpus, gpu, None, prelude)
    scope = _scope(serving)
    kept = _KEPT if _KEPT.limit else None
    if scope.first is not None:
        scope.settle()
    elif kept is None and not scope.plans and not scope.deltas:
        # the scope's first plan (the plan stage's, as a rule): kept unkeyed until a second plan is asked for,
        # since most containers never re-plan and keying is most of the memo's cost
        if changes:
            settings = settings.changed(**changes)
        detail = _run(serving, settings, model, gpus, gpu, None, prelude)
        with _MEMO_LOCK:
            scope.first = (settings, model, gpu, detail)
        return detail
    key = scope.key(settings, model, gpu, changes)
    if key is not None:
        hit = scope.plans.get(key)
        if hit is not None and hit[0] is model:
            return hit[2]  # type: ignore[no-any-return]
        if kept is not None:
            detail = kept.get(key, model)
            if detail is not None:
                with _MEMO_LOCK:
                    if len(scope.plans) >= _SCOPE_PLANS:
                        scope.plans.clear()
                    scope.plans[key] = (model, settings, detail)
                return detail
    base = settings
    if changes:  # the changed settings are built only for a plan not already made
        settings = settings.changed(**changes)
    detail = _run(serving, settings, model, gpus, gpu, None, prelude)
    if key is not None:
        with _MEMO_LOCK:
            if len(scope.plans) >= _SCOPE_PLANS:
                scope.plans.clear()
            scope.plans[key] = (model, settings, detail)
        if kept is not None:
            kept.put(key, model, detail, scope.delta(base))
    return detail


def _run(
    serving: ServingConfig,
    settings: Any,
    model: ModelSpec,
    gpus: int | None,
    gpu: tuple[Accelerator, int],
    changes: dict[str, Any] | None,
    prelude: PlanPrelude | SglangPrelude | None = None,
) -> PlanDetail:
    """The engine's memory model itself (vLLM ``changes`` already applied to ``settings``; ``prelude`` as
    :func:`_detail`)."""
    acc, total = gpu
    kw: dict[str, Any] = {"gpu_name": acc.name, "compute_capability": acc.compute_capability}
    if serving.engine == "vllm":
        assert prelude is None or isinstance(prelude, PlanPrelude)
        return plan_vllm_detailed(settings, model, total, prelude=prelude, **kw)
    if serving.engine == "tgi":
        return plan_tgi_detailed(serving, model, total, gpus=gpus, overrides=changes, **kw)
    if serving.engine == "sglang":
        assert prelude is None or isinstance(prelude, SglangPrelude)
        return plan_sglang_detailed(
            serving, model, total, gpus=gpus, overrides=changes, prelude=prelude, **kw
        )
    raise PlanError(f"no memory model for engine {serving.engine!r}")


# --------------------------------------------------------------------------------------------------
# one container's vLLM plans, each computed once
#
# A container's analysis plans the same configuration several times: the plan stage, then remedies that search
# (the fitting max-model-len is sought for KV104's concurrency and again for one request, KV202 and KV103 share
# it, the fp8 and utilization remedies are tried for each aim). The memo below answers a repeated vLLM plan from
# the first run. It is scoped to the ServingConfig object of the container being analysed (a new object for
# every container of every run or review, held by the memo so its id is not reused), keeps the few most recent
# scopes only, and keys each plan on every input of plan_vllm_detailed: the model object (held, so its identity
# is safe; ModelSpec is frozen and nothing edits its config), the GPU's name, compute capability and memory
# total, and the settings by value -- every VllmSettings field, dicts and lists included, floats by repr (so -0.0
# and 0.0, 1 and 1.0 stay apart), a draft ModelSpec by identity (held through the settings), written as the
# settings' delta from the engine defaults (settings_delta: the few fields a container sets, not all 41; a
# remedy's changed settings are keyed by changed_delta from the container's delta, computed once per settings
# object, so a repeated re-plan neither copies the settings nor walks their fields again). Plan
# results are frozen dataclasses, shared read-only. A scope's first plan (the plan stage's) is kept without its key
# until a second plan is asked for (_Scope.settle): most containers are planned once, and keying is most of
# the memo's cost. The containers of a pod with several are analysed with one scope, the pod spec's
# (shared_plans): their keys are the same by value where their inputs are, so a twin container's plans are
# answered from the first's (its first plan then keyed, as a second plan of one container is). TGI and SGLang
# plans read the container's ServingConfig, which
# callers may edit and re-plan (tests do), so they are not memoised; neither is a plan whose settings cannot be
# keyed.

_MEMO_LOCK = threading.Lock()
_MEMO_SCOPES = 8


class _Scope:
    """One container's memo (see above), or its pod's (:func:`shared_plans`): the ServingConfig or pod spec it
    belongs to (``serving``, held, so its id is not reused), its
    vLLM plans by key (``plans``: key -> (model, settings, detail), the model and settings held so that the ids in
    the key stay theirs), the :func:`settings_delta` of each settings object it was asked about (``deltas``: id ->
    (settings, delta)) and its utilization planners (``planners``, :func:`utilization_planner`: key -> (model,
    settings, planner or None)). ``first``: the scope's first plan, ``(settings, model, gpu, detail)``, not yet
    keyed (most containers are planned once: :meth:`settle` keys it when another plan is asked for)."""

    __slots__ = ("deltas", "first", "planners", "plans", "serving")

    def __init__(self, serving: Any) -> None:
        self.serving = serving
        self.plans: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.deltas: dict[int, tuple[VllmSettings, tuple[tuple[int, Any], ...]]] = {}
        self.planners: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.first: tuple[VllmSettings, ModelSpec, tuple[Accelerator, int], Any] | None = None

    def settle(self) -> None:
        """Key the scope's first plan (:attr:`first`) into :attr:`plans`, as :func:`_detail` would have on making
        it (dropped when its inputs cannot be keyed)."""
        first = self.first
        if first is None:
            return
        settings, model, gpu, detail = first
        key = self.key(settings, model, gpu)
        with _MEMO_LOCK:
            if key is not None:
                self.plans.setdefault(key, (model, settings, detail))
            self.first = None

    def delta(self, settings: VllmSettings) -> tuple[tuple[int, Any], ...]:
        """:func:`settings_delta` of ``settings``, computed once per settings object within the scope. Raises
        :class:`_Unkeyable` as it does."""
        held = self.deltas.get(id(settings))
        if held is not None and held[0] is settings:
            return held[1]
        d = settings_delta(settings)
        if len(self.deltas) >= 64:
            self.deltas.clear()
        self.deltas[id(settings)] = (settings, d)
        return d

    def key(
        self,
        settings: VllmSettings,
        model: ModelSpec,
        gpu: tuple[Accelerator, int],
        changes: dict[str, Any] | None = None,
    ) -> tuple[Any, ...] | None:
        """The memo key of ``settings.changed(**changes)`` planned for ``model`` on ``gpu``, or None when an
        input cannot be keyed by value (or is nested deeper than Python recurses, RecursionError): the GPU and the
        model as above, and the changed settings' delta
        (:func:`changed_delta`, from this settings object's delta without building the changed settings)."""
        acc, total = gpu
        try:
            base = self.delta(settings)
            return (
                id(model),
                _frozen(acc.name),
                _frozen(acc.compute_capability),
                _frozen(total),
                changed_delta(base, changes) if changes else base,
            )
        except (
            _Unkeyable,
            RecursionError,
        ):  # (a value nested deeper than Python recurses: planned, not memoised)
            return None


#: the scopes by id of their ServingConfig (or of the pod spec whose containers share one, :func:`shared_plans`),
#: in the order they were made
_MEMO: dict[int, _Scope] = {}

#: The pod spec whose containers share one memo scope while the pipeline analyses them (:func:`shared_plans`),
#: else None.
_SHARED: ContextVar[Any] = ContextVar("kvlint_shared_plans", default=None)

#: Plans one scope keeps before it starts again (a container makes a few; a pod's shared scope one set per
#: distinct container: a review's 256 containers of distinct settings are not all held).
_SCOPE_PLANS = 256


def _scope(serving: ServingConfig) -> _Scope:
    """The memo scope of ``serving``: its pod's while :func:`shared_plans` is in effect, else its own (made on
    first use; the oldest of :data:`_MEMO_SCOPES` is dropped)."""
    owner = _SHARED.get()
    if owner is None:
        owner = serving
    with _MEMO_LOCK:
        scope = _MEMO.get(id(owner))
        if scope is None or scope.serving is not owner:
            if len(_MEMO) >= _MEMO_SCOPES:
                del _MEMO[next(iter(_MEMO))]
            scope = _MEMO[id(owner)] = _Scope(owner)
        return scope


@contextmanager
def shared_plans(pod_spec: Any) -> Iterator[None]:
    """The vLLM plans of the containers analysed inside this block share one memo scope, the pod's: a container
    planned with every input of an earlier container's plan (the same settings by value, the same model object,
    the same GPU name, compute capability and memory total: :meth:`_Scope.key`) gets that plan, and so do its
    remedies' re-plans and utilization searches, instead of planning them again. The memo's answers are the
    memory model's for those inputs whatever the container (:func:`_detail`), so only the work changes: a pod of
    N identical serving containers was planned N times over (a Deployment of 300 of them: 6 re-plans and 11
    plans each, 44% of its analysis). The pipeline enters it for a pod with more than one container; the scope
    is dropped on leaving."""
    token = _SHARED.set(pod_spec)
    try:
        yield
    finally:
        _SHARED.reset(token)
        with _MEMO_LOCK:
            scope = _MEMO.get(id(pod_spec))
            if scope is not None and scope.serving is pod_spec:
                del _MEMO[id(pod_spec)]


#: The longest settings delta (:func:`settings_delta`, as ``repr`` writes it) whose plan :class:`_Kept` keeps, in
#: characters: a manifest's flags set a few short values (the fleet's plans of the webhook bench's objects write
#: 200 to 400); a plan of settings holding more (a long ``--hf-overrides`` or ``--compilation-config``) is
#: planned, not kept.
KEPT_KEY_CHARS = 4096

#: The plans a review worker of the admission webhook keeps across its reviews (:func:`keep_plans`).
KEPT_PLANS = 256


class _Kept:
    """vLLM plans kept across analyses, for a process that analyses one object after another (the admission
    webhook's review workers, :func:`keep_plans`; off, ``limit`` 0, everywhere else). Keyed as a scope's plans
    (:meth:`_Scope.key`: every input of ``plan_vllm_detailed`` by value, the model object by identity), so a
    plan found here is the memory model's answer for the inputs of the plan asked for, whichever object first
    asked: nothing of that object but what the key holds by value is in it. Bounded: at most ``limit`` plans
    (``plans``: key -> (model, detail), the model held so that its id in the key stays its own, as the per-model
    memos of :mod:`kvlint.memory.memo` hold theirs), the least recently used dropped first; a plan whose
    settings delta is longer than :data:`KEPT_KEY_CHARS`, or whose settings hold a draft model (keyed by
    identity, and not held here), is not kept. ``last``: the settings delta :meth:`admits` last answered for,
    and its answer."""

    __slots__ = ("last", "limit", "plans")

    def __init__(self) -> None:
        self.limit = 0
        self.plans: OrderedDict[tuple[Any, ...], tuple[ModelSpec, Any]] = OrderedDict()
        self.last: tuple[tuple[tuple[int, Any], ...], bool] | None = None

    def clear(self) -> None:
        """Drop every plan kept."""
        self.plans.clear()
        self.last = None

    def admits(self, delta: tuple[tuple[int, Any], ...]) -> bool:
        """Whether plans of settings whose :func:`settings_delta` is ``delta`` may be kept: written out
        (``repr``) in at most :data:`KEPT_KEY_CHARS` characters (False where ``repr`` cannot write it, nested
        deeper than it recurses), and holding no draft model. Asked of the
        settings a container was read with (a scope's delta, one object per settings object), not of a
        remedy's changed settings, whose changes are kvlint's own values; the last answer is kept."""
        last = self.last
        if last is not None and last[0] is delta:
            return last[1]
        try:
            written = repr(delta)
        except RecursionError:  # nested deeper than repr writes (a hostile --hf-overrides): over the limit
            ok = False
        else:
            ok = len(written) <= KEPT_KEY_CHARS and _MODEL_TAG not in written
        self.last = (delta, ok)
        return ok

    def get(self, key: tuple[Any, ...], model: ModelSpec) -> Any:
        """The plan kept for ``key`` when it was made for this very ``model`` object, else None."""
        with _MEMO_LOCK:
            hit = self.plans.get(key)
            if hit is None or hit[0] is not model:
                return None
            self.plans.move_to_end(key)
            return hit[1]

    def put(
        self, key: tuple[Any, ...], model: ModelSpec, detail: Any, base: tuple[tuple[int, Any], ...]
    ) -> None:
        """Keep ``detail`` as the plan of ``key`` made for ``model``, unless the settings it was derived from
        (their delta ``base``, :meth:`admits`) are too long or hold a draft model; the least recently used plan
        goes when ``limit`` are kept."""
        if not self.admits(base):
            return
        with _MEMO_LOCK:
            self.plans[key] = (model, detail)
            self.plans.move_to_end(key)
            while len(self.plans) > self.limit:
                self.plans.popitem(last=False)


#: How :func:`repr` writes the type tag of a draft model in a settings delta (:func:`_frozen`).
_MODEL_TAG = repr(ModelSpec)


_KEPT = _Kept()


def keep_plans(limit: int) -> None:
    """Keep up to ``limit`` vLLM plans across analyses in this process (0: none, the default), each answered again
    for the same inputs by value (:class:`_Kept`: bounded in count and key size, nothing of one object's
    manifest in another's answer but the plan of equal inputs). For a long-lived process that analyses object
    after object, where the same settings, model and GPU recur (the admission webhook's review workers: an object
    re-applied, scaled up or restarted, the same model and flags in another namespace, each GPU of the default
    fleet for every pod that names none); ``kvlint check`` plans each container once per run and does not use it.
    Turning it off or changing the limit drops what was kept. Raises ValueError for a negative ``limit``."""
    if limit < 0:
        raise ValueError(f"keep_plans: limit must be >= 0, not {limit}")
    with _MEMO_LOCK:
        _KEPT.limit = int(limit)
        _KEPT.clear()


class _Unkeyable(Exception):
    """An input the memo cannot key by value."""


_EXACT = frozenset((str, int, bool, type(None)))


def _frozen(x: Any) -> Any:
    """A hashable value that is equal for two inputs only when the memory models cannot tell them apart: each
    value tagged with its type; floats by ``repr``; lists, tuples and dicts (in order) element by element; a
    ModelSpec (a draft model) by identity. Raises :class:`_Unkeyable` for anything else."""
    t = type(x)
    if t in _EXACT:
        return (t, x)
    if t is float:
        return (t, repr(x))
    if t is tuple or t is list:
        return (t, tuple(_frozen(i) for i in x))
    if t is dict:
        return (t, tuple((_frozen(k), _frozen(v)) for k, v in x.items()))
    if t is ModelSpec:
        return (t, id(x))
    if t is CudagraphUser:  # frozen: its fields by value
        return (t, tuple(_frozen(getattr(x, f.name)) for f in fields(x)))
    raise _Unkeyable(t.__name__)


#: the engine defaults (``VllmSettings()``), each field with its _frozen value, in field order
_VLLM_DEFAULTS = tuple(
    (i, name, value, _frozen(value)) for i, (name, value) in enumerate(vars(VllmSettings()).items())
)
#: field name -> (field index, default, _frozen(default))
_FIELD_INDEX = {name: (i, value, frozen) for i, name, value, frozen in _VLLM_DEFAULTS}


def settings_delta(settings: VllmSettings) -> tuple[tuple[int, Any], ...]:
    """The fields of ``settings`` that differ from the engine defaults (``VllmSettings()``), as
    ``(field index, _frozen(value))`` pairs in field order: two settings with the same delta have every field
    equal in the :func:`_frozen` sense (each is either the default's or the delta's value), so the memory model
    cannot tell them apart. A field holding the default's own object is skipped without freezing it. Raises
    :class:`_Unkeyable` for a value :func:`_frozen` cannot key."""
    state = settings.__dict__
    out = []
    for i, name, default, frozen_default in _VLLM_DEFAULTS:
        value = state[name]
        if value is default:
            continue
        t = type(value)
        frozen = (t, value) if t in _EXACT else _frozen(value)
        if frozen != frozen_default:
            out.append((i, frozen))
    return tuple(out)


def changed_delta(delta: tuple[tuple[int, Any], ...], changes: dict[str, Any]) -> tuple[tuple[int, Any], ...]:
    """``settings_delta(settings.changed(**changes))`` from ``delta``, the :func:`settings_delta` of ``settings``,
    without building the changed settings: the changed fields' pairs replaced by their new values' (dropped
    where a new value equals the default, in the same sense), in field order. ``changes`` name
    :class:`VllmSettings` fields (KeyError otherwise). Raises :class:`_Unkeyable` as :func:`settings_delta`."""
    out = dict(delta)
    for name, value in changes.items():
        i, default, frozen_default = _FIELD_INDEX[name]
        if value is default:
            out.pop(i, None)
            continue
        t = type(value)
        frozen = (t, value) if t in _EXACT else _frozen(value)
        if frozen != frozen_default:
            out[i] = frozen
        else:
            out.pop(i, None)
    return tuple(sorted(out.items()))  # (indices are unique: only they are compared)


def plan_container(
    serving: ServingConfig, model: ModelSpec | None, placement: Placement | None, options: Options
) -> PlanOutcome:
    """Plan one serving container on the GPU it lands on.

    Returns a :class:`PlanOutcome`: settings always for vLLM when they can be read; ``detail`` when model,
    GPU and parallel sizes (:func:`kvlint.engines.layout.unresolved_sizes`) are known and the memory model
    sizes the configuration; ``error`` otherwise (None when simply the model
    or GPU is unknown, which the resolution rules report). Never raises on user input.
    """
    settings: Any = None
    note: str | None = None
    if serving.engine == "vllm" and model is not None:
        try:
            settings, note = _vllm_settings(serving, options)
        except Exception as exc:
            return PlanOutcome(error=f"settings: {exc}")
    elif serving.engine == "sglang" and model is not None:
        note = _sglang_draft(serving, options)
    if model is None or unresolved_sizes(serving):
        # a parallel size the manifest sets to a value kvlint cannot resolve: no plan on a guessed layout
        return PlanOutcome(settings=settings, model_note=note)
    gpu = plannable_gpu(placement, serving.engine)
    if gpu is None or isinstance(gpu, str):
        return PlanOutcome(settings=settings, error=gpu, model_note=note)
    assert placement is not None
    build = _images.accelerator_build(serving)
    if build is not None:
        # an Ascend, TPU, Gaudi ... build does not run on this NVIDIA or AMD GPU (KV304): not sized on it
        return PlanOutcome(
            settings=settings,
            error=f"the image is {with_article(platform_name(build))} build of {serving.engine}, not sized on "
            f"{gpu[0].name}",
            model_note=note,
        )
    try:
        detail = _detail(serving, settings, model, placement.gpus, gpu)
    except PlanError as exc:
        return PlanOutcome(settings=settings, error=str(exc), model_note=note, refusal=exc.refusal)
    except _PLAN_ERRORS as exc:
        return PlanOutcome(settings=settings, error=f"{type(exc).__name__}: {exc}", model_note=note)
    return PlanOutcome(settings=settings, detail=detail, model_note=note)


def replan(cr: ContainerResult, placement: Placement | None = None, **changes: Any) -> PlanDetail | None:
    """The container's plan again with ``changes`` applied, or on another ``placement`` (a candidate GPU).

    ``changes`` name engine settings: :class:`~kvlint.memory.vllm.VllmSettings` fields for vLLM
    (``max_model_len=16384``, ``tensor_parallel_size=2``), launcher field names for TGI (``num_shard``,
    ``max_total_tokens``...) and SGLang (``tp_size``, ``mem_fraction_static``...). Returns None when the
    container has no model or GPU, or the changed configuration cannot be sized (so a remedy that does not
    plan is never offered). Pure: ``cr`` is not modified.
    """
    placement = placement or cr.placement
    if cr.model is None or placement is None or unresolved_sizes(cr.serving):
        return None
    if cr.serving.engine == "vllm" and cr.settings is None:
        return None
    gpu = plannable_gpu(placement, cr.serving.engine)
    if gpu is None or isinstance(gpu, str):
        return None
    try:
        return _detail(cr.serving, cr.settings, cr.model, placement.gpus, gpu, changes or None)
    except _PLAN_ERRORS:
        return None


def utilization_planner(cr: ContainerResult) -> Callable[[float], VllmPlanDetail | None] | None:
    """For a vLLM container with settings, a model and a plannable GPU: a function of a
    ``--gpu-memory-utilization`` value answering what ``replan(cr, gpu_memory_utilization=u)`` answers (None
    where that plan raises), computed by :func:`kvlint.memory.vllm.plan_at_utilization` with the start-up
    settled once: for a remedy's search over candidate values, whose answer is then re-planned with
    :func:`replan`. None for another engine or when the container cannot be planned.

    Within the container's analysis (the memo scope of :func:`_detail`) the planner is made once per model, GPU
    and settings, and it plans each candidate value once: the remedies of KV102/KV103/KV105 search for two aims
    (KV104's concurrency, then one request) over the same candidates."""
    p = cr.placement
    settings, model = cr.settings, cr.model
    if cr.serving.engine != "vllm" or not isinstance(settings, VllmSettings) or model is None:
        return None
    gpu = plannable_gpu(p, "vllm")
    if not isinstance(gpu, tuple):
        return None
    scope = key = None
    if type(settings) is VllmSettings:
        scope = _scope(cr.serving)
        key = scope.key(settings, model, gpu)
        if key is not None:
            hit = scope.planners.get(key)
            if hit is not None and hit[0] is model:
                return hit[2]  # type: ignore[no-any-return]
    planner = _utilization_planner(settings, model, gpu)
    if scope is not None and key is not None:
        with _MEMO_LOCK:
            if len(scope.planners) >= _SCOPE_PLANS:
                scope.planners.clear()
            scope.planners[key] = (model, settings, planner)
    return planner


def _utilization_planner(
    settings: VllmSettings, model: ModelSpec, gpu: tuple[Accelerator, int]
) -> Callable[[float], VllmPlanDetail | None] | None:
    """:func:`utilization_planner` itself: the planner of ``settings`` and ``model`` on ``gpu``, each candidate
    value's plan (or None where it raises) kept by the value's :func:`_frozen` key; None when the start-up
    cannot be settled."""
    acc, total = gpu
    try:
        at = plan_at_utilization(
            settings, model, total, gpu_name=acc.name, compute_capability=acc.compute_capability
        )
    except _PLAN_ERRORS:
        return None
    planned: dict[Any, VllmPlanDetail | None] = {}

    def plan(u: float) -> VllmPlanDetail | None:
        try:
            key = _frozen(u)
        except _Unkeyable:
            key = None
        if key is not None and key in planned:
            return planned[key]
        try:
            detail: VllmPlanDetail | None = at(u)
        except _PLAN_ERRORS:
            detail = None
        if key is not None:
            planned[key] = detail
        return detail

    return plan


def plan_settings(cr: ContainerResult, settings: VllmSettings) -> VllmPlanDetail:
    """The vLLM container's plan on its own GPU with ``settings`` in place of its own (memoised with the
    container's other plans, like :func:`replan`): what
    ``plan_vllm_detailed(settings, cr.model, cr.placement.memory_bytes or 0, gpu_name=..., compute_capability=...)``
    answers, raising what it raises (PlanError for no model, GPU or memory total)."""
    p = cr.placement
    if cr.model is None or p is None:
        raise PlanError("no model or GPU to plan on")
    gpu = plannable_gpu(p, "vllm")
    if isinstance(gpu, tuple) and cr.serving.engine == "vllm":
        detail = _detail(cr.serving, settings, cr.model, p.gpus, gpu)
        assert isinstance(detail, VllmPlanDetail)
        return detail
    acc = p.accelerator
    return plan_vllm_detailed(
        settings,
        cr.model,
        p.memory_bytes or 0,
        gpu_name=acc.name if acc else "",
        compute_capability=acc.compute_capability if acc else None,
    )


# --------------------------------------------------------------------------------------------------
# the fleet verdict: where a workload that names no GPU fits


def _gib(x: float) -> str:
    """``x`` bytes as ``1,234.57 GiB`` (two decimals, thousands separators)."""
    return f"{x / 2**30:,.2f} GiB"


#: VllmPlanDetail.verdict -> the fleet's verdict
_VLLM_VERDICTS = {"ok": "fits", "risky": "risky", "fail": "fails"}


def fit_assessment(detail: PlanDetail) -> tuple[str, str | None]:
    """``(verdict, reason)``: whether the engine starts and serves one request of its full context limit on this
    GPU, across kvlint's prediction band, by the engine's memory model alone (the dtype and build tests are
    :func:`kvlint.memory.compat.startup_refusal`, applied by :func:`plan_fleet`).

    ``verdict`` is ``fits`` | ``risky`` | ``fails``; ``reason`` one short clause for ``risky`` and ``fails``
    (None for ``fits``), in the plan's own figures.

    * vLLM: :attr:`kvlint.memory.vllm.VllmPlanDetail.verdict`, the start-up fit check (E1/E2) at both ends of
      the band: ``fails`` when even the band's high end cannot hold one ``max_model_len`` request (vLLM refuses
      to start) or ``--num-gpu-blocks-override`` sizes a KV cache the GPU cannot hold beside the rest
      (:func:`kvlint.memory.vllm.override_over_device`), ``risky`` when only its upper part can.
    * TGI: ``fails`` when the shard does not load (weights over ``cuda_memory_fraction``), the warmup prefill
      runs out of memory, or ``max_total_tokens`` exceeds the ``max_batch_total_tokens`` the warmup finds (the
      launcher exits); ``risky`` when the user's ``max_total_tokens`` fits only the band's upper part.
    * SGLang: ``fails`` only where SGLang refuses to start: the weights do not load, no KV pool is left
      ("Not enough memory" / "Loaded weights leave no GPU memory for the KV cache"), the pool is below the
      minimum the release accepts (:func:`kvlint.memory.sglang.pool_starts`), or ``--context-length`` exceeds
      the derived length without the override. A pool smaller than one ``context_length`` request does not
      stop SGLang: it caps requests at ``pool - 1`` tokens (with a warning from 0.5.23,
      :func:`kvlint.memory.sglang.pool_below_context_behaviour`), so that is ``risky``, as is a pool that holds
      one such request only in the band's upper part.
    """
    p = detail.plan
    if isinstance(detail, VllmPlanDetail):
        verdict = _VLLM_VERDICTS[detail.verdict]
        if verdict == "fits":
            return verdict, None
        if detail.override_over_device:
            kv = detail.override_blocks * p.bytes_per_block
            return verdict, (
                f"--num-gpu-blocks-override {detail.override_blocks:,} sizes {_gib(kv)} of KV cache per GPU, with "
                f"{_gib(p.weights_bytes)} of weights more than the GPU's {_gib(p.total_bytes)}: vLLM runs out of memory"
            )
        if detail.override_blocks:
            # the override's blocks are the KV cache (VllmPlanDetail.verdict): "fails" is one request not fitting them
            outcome = (
                "vLLM refuses to start"
                if p.era == "v0"
                else "vLLM starts (its fit check reads the measured memory) but can never hold such a request"
            )
            return verdict, (
                f"one max_model_len {p.max_model_len:,} request needs {_gib(detail.needed_bytes)} of KV cache, "
                f"--num-gpu-blocks-override {detail.override_blocks:,} gives {_gib(detail.fit_available_bytes)}; "
                + outcome
            )
        null = p.kv_cache_bytes - detail.fit_available_bytes
        need = f"one max_model_len {p.max_model_len:,} request needs {_gib(detail.needed_bytes)} of KV cache"
        if verdict == "fails":
            if p.kv_cache_bytes_high - null <= 0:
                return verdict, (
                    f"no memory left for the KV cache after {_gib(p.weights_bytes)}/GPU of weights; vLLM refuses to start"
                )
            return (
                verdict,
                f"{need}, at most {_gib(p.kv_cache_bytes_high - null)} is left; vLLM refuses to start",
            )
        low = p.kv_cache_bytes_low - null
        # an end at or below zero is said in words, as the plan's band line says it (plan_text.kv_band_text)
        low_text = _gib(low) if low > 0 else "no KV cache at all (the other terms exceed the budget)"
        return verdict, (
            f"fits only in the upper part of kvlint's band: {need}, the band gives "
            f"{low_text} to {_gib(p.kv_cache_bytes_high - null)}"
        )
    if isinstance(detail, TgiPlanDetail):
        if p.weights_bytes + p.non_torch_bytes > int(detail.cuda_memory_fraction * p.total_bytes):
            return "fails", (
                f"the shard's weights, {_gib(p.weights_bytes)}, do not fit cuda_memory_fraction "
                f"{detail.cuda_memory_fraction} of the GPU"
            )
        if detail.warmup_oom:
            return "fails", "the warmup prefill batch runs out of memory; TGI exits"
        if detail.max_batch_total_tokens <= 0:
            return "fails", "no KV cache left after the warmup; TGI exits"
        if detail.max_input_tokens >= detail.max_total_tokens:
            return "fails", (
                f"max_input_tokens {detail.max_input_tokens:,} is not below max_total_tokens "
                f"{detail.max_total_tokens:,}; the launcher refuses"
            )
        if detail.max_total_tokens > detail.max_batch_total_tokens:
            return "fails", (
                f"max_total_tokens {detail.max_total_tokens:,} exceeds the {detail.max_batch_total_tokens:,} tokens "
                "of KV cache the warmup finds; the launcher refuses"
            )
        low = p.num_blocks_low * p.block_size
        if detail.user_max_total_tokens is not None and low < detail.max_total_tokens:
            return "risky", (
                f"max_total_tokens {detail.max_total_tokens:,} fits only in the upper part of kvlint's band "
                f"(low end {low:,} tokens)"
            )
        return "fits", None
    v = detail.version
    name = f"SGLang {p.engine_version}"
    if detail.context_error:
        return "fails", f"--context-length exceeds the derived context length; {name} refuses to start"
    if p.weights_bytes > detail.pre_free_bytes:
        return (
            "fails",
            f"the weights, {_gib(p.weights_bytes)}/GPU, exceed the free memory; {name} cannot load them",
        )
    if detail.rest_bytes <= 0 or detail.max_total_num_tokens <= 0:
        return "fails", (
            f"mem_fraction_static {detail.mem_fraction_static} leaves no KV pool after the weights; {name} exits"
        )
    if not pool_starts(v, detail.max_total_num_tokens, detail.context_length):
        return "fails", (
            f"a KV pool of {detail.max_total_num_tokens} tokens is too small to start "
            f"('Memory pool size is too small', {name})"
        )
    if detail.max_total_num_tokens < detail.context_length:
        return "risky", (
            f"the KV pool holds {detail.max_total_num_tokens:,} tokens, fewer than context_length "
            f"{detail.context_length:,}: {name} {pool_below_context_behaviour(v)}"
        )
    low = p.num_blocks_low * p.block_size
    if p.max_concurrency_low < 1.0:
        return "risky", (
            f"one context_length {detail.context_length:,} request fits only in the upper part of kvlint's band "
            f"(pool at the low end: {low:,} tokens)"
        )
    return "fits", None


def fit_verdict(detail: PlanDetail) -> str:
    """``fits`` | ``risky`` | ``fails``: the verdict of :func:`fit_assessment` (the memory model alone)."""
    return fit_assessment(detail)[0]


@direct_init
@dataclass(frozen=True)
class FleetEntry:
    """The container planned on one accelerator of a fleet.

    ``gpus`` is the count per pod it was planned with (the container's GPU limit, else the engine's workers);
    ``detail`` the engine's plan there (None with ``error`` when it cannot be sized, or when the image cannot
    run there at all); ``verdict`` ``fits`` | ``risky`` | ``fails`` | ``unknown``: :func:`fit_assessment`, made
    ``fails`` when :func:`kvlint.memory.compat.startup_refusal` says the engine refuses to start on this
    accelerator (``refused_by`` names the rule, KV301/KV302/KV304/KV305) and ``risky`` when it most likely does.
    ``reason`` says why a verdict is not ``fits``. ``mig_profile``: the MIG slice it was planned on (the
    container requests ``nvidia.com/mig-<profile>``), whose memory replaces the whole GPU's.
    """

    accelerator: Accelerator
    gpus: int
    detail: PlanDetail | None
    verdict: str
    error: str | None = None
    reason: str | None = None
    refused_by: str | None = None
    mig_profile: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of one entry of a workload's ``fleet`` list (``kvlint check --format json``)."""
        p = self.detail.plan if self.detail is not None else None
        return {
            "accelerator": self.accelerator.id,
            "name": self.accelerator.name,
            "gpus": self.gpus,
            "verdict": self.verdict,
            "kv_cache_bytes": p.kv_cache_bytes if p else None,
            "kv_tokens": p.capacity_tokens if p else None,
            "max_model_len": p.max_model_len if p else None,
            "max_concurrency": round(p.max_concurrency, 2) if p else None,
            "error": self.error,
            "reason": self.reason,
            "refused_by": self.refused_by,
            "mig_profile": self.mig_profile,
            "memory_bytes": p.total_bytes if p else None,
        }


def _kept_fleet_plan(
    scope: _Scope,
    serving: ServingConfig,
    settings: VllmSettings,
    model: ModelSpec,
    gpus: int,
    gpu: tuple[Accelerator, int],
    lazy: list[Any],
) -> PlanDetail:
    """A fleet's vLLM plan on ``gpu`` with plans kept across analyses (:func:`keep_plans`): the kept plan of these
    inputs, else planned and kept. ``lazy`` holds the plans' prelude (:func:`kvlint.memory.vllm.plan_prelude`, None
    where it raised: each plan then raises it again) once a GPU's plan had to be made, empty before: a fleet whose
    plans are all kept makes none; ``scope`` is the container's memo scope (:func:`_scope`), which keys the
    plans. Raises what the memory model raises."""
    key = scope.key(settings, model, gpu)
    if key is not None:
        detail = _KEPT.get(key, model)
        if detail is not None:
            return detail  # type: ignore[no-any-return]
    if not lazy:
        try:
            lazy.append(plan_prelude(settings, model))
        except Exception:  # left to each GPU's plan, which raises it where the engine's order does
            lazy.append(None)
    detail = _run(serving, settings, model, gpus, gpu, None, lazy[0])
    if key is not None:
        _KEPT.put(key, model, detail, scope.delta(settings))
    return detail


def mig_profile_of(placement: Placement) -> str | None:
    """The MIG profile a container requests through a ``nvidia.com/mig-<profile>`` resource (mixed strategy;
    KAITO's ``resource.partition`` ``mode: mig`` becomes one), canonical (``3g.40gb``); None otherwise."""
    prefix = MIG_RESOURCE_PREFIX
    res = placement.resource or ""
    if not res.startswith(prefix):
        return None
    return _catalogue.mig_profile_name(res[len(prefix) :])


def mig_fleet(profile: str, fleet: tuple[Accelerator, ...]) -> tuple[tuple[Accelerator, ...], bool]:
    """Where a pod requesting MIG ``profile`` can land: ``(accelerators, from_fleet)``, the GPUs of ``fleet``
    that offer the profile (catalogue ``mig_profiles``), else every catalogue GPU that does (``from_fleet``
    False); empty when the catalogue knows the profile on no GPU."""
    offering = set(_catalogue.mig_gpus(profile))
    mine = tuple(a for a in fleet if a.id in offering)
    if mine:
        return mine, True
    return tuple(_catalogue.require(g, "MIG fleet") for g in sorted(offering)), False


def plan_fleet(
    serving: ServingConfig,
    settings: Any,
    model: ModelSpec,
    placement: Placement,
    fleet: tuple[Accelerator, ...],
    gpus: int,
) -> tuple[FleetEntry, ...]:
    """Plan the container on every accelerator of ``fleet`` (used when nothing says which GPU it lands on),
    ``gpus`` per pod. Never raises on user input: an accelerator the model cannot be sized on gets verdict
    ``unknown`` and the error.

    Each entry's verdict is the memory model's (:func:`fit_assessment`) unless the engine does not start there
    at all, by the same tests as rules KV301/KV302/KV304/KV305 (:func:`kvlint.memory.compat.startup_refusal`): then
    ``fails`` (``risky`` for a start-up failure that is only likely) with the reason. When the container
    requests a MIG slice (:func:`mig_profile_of`), the fleet narrows to the GPUs offering that profile
    (:func:`mig_fleet`) and each is planned with the slice's memory (catalogue ``mig_profiles``). A HAMi memory
    slice (``placement.gpu_slice``, ``nvidia.com/gpumem`` or ``gpumem-percentage``) is planned as the total
    HAMi-core reports on each NVIDIA card (:meth:`kvlint.accelerators.sharing.GpuSlice.total_bytes`). An AMD
    compute partition (``placement.amd_partition``: requested by its ``mixed``-naming resource, ``amd.com/cpx_nps4``,
    or as ``amd.com/gpu`` on nodes the partition label selects) narrows the fleet to the boards whose partition
    counts kvlint knows, each planned on one partition's memory
    (:func:`kvlint.accelerators.placement.amd_partition_fleet`).
    """
    platform_refusal, startup_refusal = _compat.platform_refusal, _compat.startup_refusal
    profile = mig_profile_of(placement)
    if profile is not None:
        fleet, _ = mig_fleet(profile, fleet)
    amd_parts = None
    amd_part = placement.amd_partition
    if profile is None and amd_part is not None:
        from kvlint.accelerators.placement import amd_partition_fleet

        fleet, amd_parts = amd_partition_fleet(amd_part, fleet)
    # a vLLM or SGLang plan's steps that do not depend on the GPU, once for the whole fleet (the same plans: when
    # they raise, each GPU planned raises it again, in its own order of steps, and gets its entry or ends the call)
    prelude: PlanPrelude | SglangPrelude | None = None
    # with plans kept across analyses (keep_plans), the vLLM prelude only once a GPU's plan is not kept
    kept = serving.engine == "vllm" and type(settings) is VllmSettings and _KEPT.limit > 0
    lazy: list[Any] = []  # [prelude or None] once made
    scope = _scope(serving) if kept else None
    try:
        if serving.engine == "vllm" and type(settings) is VllmSettings and not kept:
            prelude = plan_prelude(settings, model)
        elif serving.engine == "sglang":
            prelude = sglang_prelude(serving, model)
    except Exception:  # left to each GPU's plan, which raises it where the engine's order does
        prelude = None
    platform = _images.platform_of(serving)  # the image's build, tested against each GPU's vendor (KV304)
    build: object = _compat.UNSET  # a TPU, Gaudi, Ascend... build (KV304 on every NVIDIA or AMD GPU)
    try:
        build = _images.accelerator_build(serving)
    except Exception:  # left to each GPU's test, which raises it again
        build = _compat.UNSET
    # KV305's quantization method and its minimum compute capability do not depend on the GPU: once for the fleet,
    # each GPU's test only comparing its compute capability (when it raises, each GPU's test raises it again)
    quant_need: object = _compat.UNSET
    if _compat.rule_applies("KV305", serving.engine):
        try:
            quant_need = _compat.quantization_need(serving, model)
        except Exception:
            quant_need = _compat.UNSET
    out = []
    for acc in fleet:
        mig_bytes = None
        if profile is not None:
            prof, _note = _catalogue.mig_profile(acc.id, profile)
            mig_bytes = prof.memory_bytes if prof is not None else None
        elif amd_parts is not None:
            from kvlint.accelerators.placement import amd_partition_memory

            mig_bytes = amd_partition_memory(acc, amd_parts)
        # the image does not run there: not planned
        refusal = platform_refusal(serving, acc, platform=platform, build=build)
        if refusal is not None:
            out.append(FleetEntry(acc, gpus, None, "fails", None, refusal.reason, refusal.rule, profile))
            continue
        # what plannable_gpu answers for the placement on acc (its memory total: the MIG slice's, else the GPU's)
        total = mig_bytes
        if total is None and placement.gpu_slice is not None and acc.vendor == "nvidia":
            # a HAMi slice: what HAMi-core reports on this card (kvlint.accelerators.sharing)
            total = placement.gpu_slice.total_bytes(acc.memory_bytes)
        gpu = _plannable(acc, total or acc.memory_bytes, serving.engine)
        if gpu is None or isinstance(gpu, str):
            out.append(FleetEntry(acc, gpus, None, "unknown", gpu or "no memory total", mig_profile=profile))
            continue
        try:
            # each GPU once, and no remedy re-plans a fleet entry: not memoised (but kept, with keep_plans)
            if scope is not None:
                detail = _kept_fleet_plan(scope, serving, settings, model, gpus, gpu, lazy)
            else:
                detail = _detail(serving, settings, model, gpus, gpu, memo=False, prelude=prelude)
        except _PLAN_ERRORS as exc:
            out.append(FleetEntry(acc, gpus, None, "unknown", str(exc), mig_profile=profile))
            continue
        verdict, reason = fit_assessment(detail)
        refused_by = None
        # KV305/KV301/KV302; KV304 (platform_refusal) was tested above
        refusal = startup_refusal(
            serving, model, acc, dtype=detail.plan.dtype, has_pod=False, quant_need=quant_need
        )
        if refusal is not None and refusal.certain:
            verdict, reason, refused_by = "fails", refusal.reason, refusal.rule
        elif refusal is not None and verdict != "fails":
            verdict, reason, refused_by = (
                "risky",
                f"most likely fails at start-up: {refusal.reason}",
                refusal.rule,
            )
        out.append(FleetEntry(acc, gpus, detail, verdict, None, reason, refused_by, profile))
    return tuple(out)
