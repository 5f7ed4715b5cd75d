"""OME serving runtimes that name the model they are for (sgl-project/ome ``config/runtimes``).

An OME ``ClusterServingRuntime``/``ServingRuntime`` is a template: the InferenceService that uses it names a
BaseModel, whose ``storage.path`` OME puts in the engine container as ``MODEL_PATH``
(``pkg/controller/v1beta1/inferenceservice/components/base.go`` ``UpdateEnvVariables``), and its ``engine``
/ ``decoder`` are merged over the runtime's ``engineConfig``/``decoderConfig``, the service's fields winning
(``pkg/controller/v1beta1/inferenceservice/utils/merging.go`` ``MergeEngineSpec``, ``MergeDecoderSpec``).
OME selects a runtime for a model by its ``supportedModelFormats`` (``modelArchitecture``, format, framework)
and ``modelSizeRange`` (``pkg/runtimeselector/matcher.go``).

Most of OME's own runtimes are per-model: they state the GPUs (the runner's ``resources``), the parallelism
(``--tp-size``, ``--tensor-parallel-size``) and the model (``--served-model-name Qwen/Qwen2.5-72B-Instruct``). :func:`named_model` reads that model so the
runtime is sized on it and on the GPUs it declares, with a KV505 note saying the model was read from the
runtime on an assumption; a runtime that names no model stays a template (KV502).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, Workload
from kvlint.values import as_list, yaml_text
from kvlint.workloads.base import get_in, int_or_none, with_injected_env
from kvlint.workloads.lws import lws_env

__all__ = [
    "NamedModel",
    "bad_worker_size",
    "injected_env",
    "is_ome_runtime",
    "named_model",
    "with_ome_env",
    "worker_size_finding",
]

#: A Hugging Face Hub id ``org/name`` (no variable, no path): what ``--served-model-name`` holds when it names
#: the model rather than an alias such as ``vllm-model``.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True)
class NamedModel:
    """The model an OME runtime names.

    Attributes:
        model_id: the hub id (``org/name``).
        source: where it was read, for the message (``its --served-model-name``, ``its name 'srt-...'``).
        loc: the position of that value in the runtime (the command item, or ``metadata.name``).
    """

    model_id: str
    source: str
    loc: Loc | None


def is_ome_runtime(doc: Document) -> bool:
    """An OME (``ome.io/*``) ``ClusterServingRuntime`` or ``ServingRuntime``."""
    api = doc.data.get("apiVersion") if isinstance(doc.data, dict) else None
    return (
        isinstance(api, str)
        and api.startswith("ome.io/")
        and doc.kind in ("ClusterServingRuntime", "ServingRuntime")
    )


def _served_model_name(container: Any) -> tuple[str, Loc | None] | None:
    """The first value of ``--served-model-name`` (``NAME`` or ``=NAME``) in the container's command and args,
    with its position; None when absent."""
    for key in ("command", "args"):
        items = container.get(key) if isinstance(container, dict) else None
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if not isinstance(item, str):
                continue
            if item.startswith("--served-model-name="):
                return item.split("=", 1)[1].strip(), loc_of(items, i) if isinstance(items, LList) else None
            if item == "--served-model-name" and i + 1 < len(items) and isinstance(items[i + 1], str):
                return items[i + 1].strip(), loc_of(items, i + 1) if isinstance(items, LList) else None
    return None


def _architectures(spec: Any) -> set[str]:
    """The ``modelArchitecture`` of each of the runtime's ``supportedModelFormats``."""
    return {
        str(f["modelArchitecture"])
        for f in as_list(spec.get("supportedModelFormats") if isinstance(spec, dict) else None)
        if isinstance(f, dict) and f.get("modelArchitecture")
    }


def _fits_architecture(model_id: str, wanted: set[str]) -> bool:
    """Whether the catalogued config.json of ``model_id`` has one of the runtime's architectures (OME only
    selects the runtime for a BaseModel of such an architecture); True when either is unknown."""
    from kvlint.models.catalogue import architectures

    have = architectures(model_id)
    return not wanted or have is None or bool(wanted & set(have))


def named_model(doc: Document, w: Workload) -> NamedModel | None:
    """The model the OME runtime ``doc`` names for its pod ``w``, or None.

    The runner's ``--served-model-name`` when it is a hub id (``Qwen/Qwen2.5-72B-Instruct``), not an alias
    (``vllm-model``). A catalogued model whose config.json has none of the runtime's
    ``supportedModelFormats[].modelArchitecture`` is not taken (OME would not select the runtime for it)."""
    spec = doc.data.get("spec") if isinstance(doc.data, dict) else None
    wanted = _architectures(spec)
    runner = next((c for c in as_list(w.pod_spec.get("containers")) if isinstance(c, dict)), None)
    served = _served_model_name(runner) if runner is not None else None
    if served is not None and _HUB_ID.fullmatch(served[0]) and _fits_architecture(served[0], wanted):
        return NamedModel(served[0], "its --served-model-name", served[1])
    return None


def injected_env(doc: Document, w: Workload, gpus: int) -> list[tuple[str, str, Loc | None]]:
    """The ``(name, value, position)`` env entries OME adds to the runner of the runtime's pod ``w`` (an
    ``engineConfig``/``decoderConfig`` runner, its ``leader`` or its ``worker``) that declares ``gpus`` GPUs.

    ``PARALLELISM_SIZE`` = GPUs per pod x (1 leader + the component's ``worker.size``, default 0):
    ``pkg/controller/v1beta1/inferenceservice/components/engine.go`` ``setParallelismEnvVarForEngine`` and
    ``getWorkerSize`` (``decoder.go`` the same for the decoder), set when no AcceleratorClass is given. A
    multi-node component (a ``leader`` or ``worker``) runs as a LeaderWorkerSet of ``worker.size + 1`` pods
    (``reconcilers/lws/lws_reconciler.go``), so LWS's ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX`` too
    (:func:`kvlint.workloads.lws.lws_env`)."""
    parts = w.path.split(".")
    if len(parts) < 2 or parts[0] != "spec" or parts[1] not in ("engineConfig", "decoderConfig"):
        return []
    component = get_in(doc.data, "spec", parts[1])
    if _bad_worker_size(component) is not None:
        return []  # no pod of such a component runs as sized (worker_size_finding says so): nothing made up
    size_loc = loc_of(get_in(component, "worker"), "size") if isinstance(component, dict) else None
    workers = int_or_none(get_in(component, "worker", "size")) or 0
    out: list[tuple[str, str, Loc | None]] = [
        ("PARALLELISM_SIZE", str(gpus * (1 + workers)), size_loc or w.loc)
    ]
    if w.role in ("leader", "worker"):
        out += lws_env(1 + workers, w.role, size_loc=size_loc or w.loc)
    return out


#: The env names LeaderWorkerSet injects (:func:`kvlint.workloads.lws.lws_env`).
_LWS_NAMES = frozenset({"LWS_GROUP_SIZE", "LWS_WORKER_INDEX", "LWS_LEADER_ADDRESS"})


def with_ome_env(pod_spec: LDict, env: list[tuple[str, str, Loc | None]]) -> LDict:
    """``pod_spec`` with the env :func:`injected_env` names (and ``MODEL_PATH``) put where OME and LWS put them,
    in their order: OME edits the engine container's env first (sgl-project/ome
    ``pkg/controller/v1beta1/inferenceservice/utils/container.go``: ``UpdateEnvVars`` for ``PARALLELISM_SIZE``,
    which replaces the value of the container's own entry of that name in its place, else appends;
    ``AppendEnvVarsIfNotExist`` for ``MODEL_PATH``, which keeps the container's own), then LWS (v0.5.1 in OME's
    go.mod) creates the pods, heading every container's and init container's env with its variables in place of
    the container's own of the same names (:func:`kvlint.workloads.lws.lws_workloads`, as for a LeaderWorkerSet
    itself); kvlint appended all of them and kept the container's own values."""
    ome = [e for e in env if e[0] not in _LWS_NAMES]
    lws = [e for e in env if e[0] in _LWS_NAMES]
    ps = with_injected_env(pod_spec, ome, overwrite=("PARALLELISM_SIZE",)) if ome else pod_spec
    if lws:
        ps = with_injected_env(ps, lws, init_containers=True, operator_first=True)
    return ps


#: The components of an OME object that run engine pods, by kind: an InferenceService's ``engine`` and
#: ``decoder``, a runtime's ``engineConfig`` and ``decoderConfig``.
_COMPONENTS = ("engine", "decoder", "engineConfig", "decoderConfig")


def _bad_worker_size(component: Any) -> Any:
    """The component's ``worker.size`` when it is given and is not a positive integer (the value as written),
    else None (absent or null, which OME reads as unset, or 1 and more)."""
    worker = component.get("worker") if isinstance(component, dict) else None
    size = worker.get("size") if isinstance(worker, dict) else None
    if size is None:
        return None
    n = int_or_none(size)
    return None if n is not None and n > 0 else size


def bad_worker_size(doc: Document, w: Workload) -> bool:
    """Whether the pod ``w`` belongs to a component of the OME object ``doc`` whose ``worker.size`` is given
    and is not a positive integer (:func:`worker_size_finding` says so, on the component's leader)."""
    parts = w.path.split(".")
    if len(parts) < 2 or parts[0] != "spec" or parts[1] not in _COMPONENTS:
        return False
    return _bad_worker_size(get_in(doc.data, "spec", parts[1])) is not None


def worker_size_finding(doc: Document, w: Workload) -> Finding | None:
    """KV206 at ``worker.size`` when the OME component that the pod ``w`` belongs to (an InferenceService's
    ``engine``/``decoder``, a runtime's ``engineConfig``/``decoderConfig``) gives a worker size that is not a
    positive integer; reported on the component's leader (or its only) pod, None for any other pod.

    OME runs a component with a ``leader`` or a ``worker`` as a LeaderWorkerSet of ``worker.size + 1`` pods
    and sets ``PARALLELISM_SIZE`` to the GPUs per pod x (1 + ``worker.size``)
    (sgl-project/ome@17b77eda ``pkg/controller/v1beta1/inferenceservice/components/engine.go``
    ``getWorkerSize``, ``setParallelismEnvVarForEngine``; ``reconcilers/lws/lws_reconciler.go``), without
    checking the size: a negative size gives a group of fewer than the one pod a LeaderWorkerSet needs
    (kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``, ``size``: "The minimum is 1")
    and a parallel size of zero or less, which no engine accepts (error); 0 gives a group of the leader alone,
    the worker template never running (warning; OME's own runtime webhook refuses a ``workers.size`` of 0 or
    less for a multi-node runtime, ``pkg/webhook/admission/servingruntime/servingruntime_webhook.go``
    ``MultiNodeConfigurationError``). :func:`injected_env` then adds nothing and a runtime is not sized on
    the model it names (:func:`bad_worker_size`), rather than on a made-up parallel size."""
    api = doc.data.get("apiVersion") if isinstance(doc.data, dict) else None
    if not (isinstance(api, str) and api.startswith("ome.io/")):
        return None
    parts = w.path.split(".")
    if len(parts) < 3 or parts[0] != "spec" or parts[1] not in _COMPONENTS or parts[2] == "worker":
        return None
    component = get_in(doc.data, "spec", parts[1])
    bad = _bad_worker_size(component)
    if bad is None:
        return None
    where = f"spec.{parts[1]}.worker.size"
    loc = loc_of(component["worker"], "size") or w.loc or doc.loc
    n = int_or_none(bad)
    if n == 0:
        return Finding(
            "KV206",
            f"{where} is 0: OME runs this component as a LeaderWorkerSet of the leader alone (worker.size + 1 = 1 "
            "pod), so the worker template never runs, and sets PARALLELISM_SIZE to the leader's GPUs only; "
            "kvlint does not size the engine on that",
            loc,
            fix="set worker.size to the number of worker pods (1 or more), or remove the worker and run the "
            "engine on one pod",
            severity="warning",
        )
    if n is not None:
        what = (
            f"{where} is {n}: OME would run a LeaderWorkerSet of worker.size + 1 = {n + 1} pods, below the "
            "one pod (the leader) a LeaderWorkerSet needs, and set PARALLELISM_SIZE to the GPUs per pod x "
            f"{n + 1}, a parallel size no engine accepts"
        )
    else:
        what = f"{where} is {yaml_text(bad)}, not an integer: the API server refuses the object (size is an integer)"
    return Finding(
        "KV206",
        f"{what}; kvlint does not size the engine on it",
        loc,
        fix="set worker.size to the number of worker pods (1 or more)",
        severity="error",
    )
