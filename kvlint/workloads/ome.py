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

from kvlint.source import LList, Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.values import as_list
from kvlint.workloads.base import get_in, int_or_none
from kvlint.workloads.lws import lws_env

__all__ = ["NamedModel", "injected_env", "is_ome_runtime", "named_model"]

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
    size_loc = loc_of(get_in(component, "worker"), "size") if isinstance(component, dict) else None
    workers = int_or_none(get_in(component, "worker", "size")) or 0
    out: list[tuple[str, str, Loc | None]] = [
        ("PARALLELISM_SIZE", str(gpus * (1 + workers)), size_loc or w.loc)
    ]
    if w.role in ("leader", "worker"):
        out += lws_env(1 + workers, w.role, size_loc=size_loc or w.loc)
    return out
