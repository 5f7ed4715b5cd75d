"""Facts about a container and its PodSpec that several rule families read.

Pure functions over the manifest's mappings (:class:`~kvlint.source.LDict`): the image's platform, the GPU
resource as written, the memory limit, whether ``/dev/shm`` is memory-backed, whether the object is a
serving-runtime template, and the model's whole weight bytes.
"""

from __future__ import annotations

import re
from typing import Any

from kvlint.accelerators.quantity import parse_quantity
from kvlint.engines.images import Unsized, image_platform, unsized_whatever_model
from kvlint.source import LDict, Loc, loc_of
from kvlint.types import ContainerResult, Placement, ServingConfig, Workload

__all__ = [
    "has_memory_shm",
    "image_platform",
    "is_runtime_template",
    "memory_limit",
    "runtime_names_model",
    "model_weight_bytes",
    "unsized_before_model",
    "resource_value",
    "to_int",
]

#: KServe kinds whose containers are templates: the InferenceService (or LLMInferenceService) that uses
#: them supplies the resources, GPUs included.
_RUNTIME_TEMPLATE_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime", "LLMInferenceServiceConfig"})


def to_int(v: Any, default: int) -> int:
    """``int(v)``, or ``default`` when ``v`` is not a number (or an infinite one: YAML's ``.inf``)."""
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return default


def is_runtime_template(w: Workload) -> bool:
    """A KServe serving-runtime template (also inside an OpenShift ``Template``'s ``objects``)."""
    if w.kind in _RUNTIME_TEMPLATE_KINDS:
        return True
    if w.kind == "Template" and w.path.startswith("objects["):
        objects = w.doc.data.get("objects") if isinstance(w.doc.data, dict) else None
        try:
            index = int(w.path[len("objects[") : w.path.index("]")])
        except ValueError:
            return False
        if isinstance(objects, list) and 0 <= index < len(objects) and isinstance(objects[index], dict):
            kind = objects[index].get("kind")
            return isinstance(kind, str) and kind in _RUNTIME_TEMPLATE_KINDS
    return False


#: A Hugging Face hub id written as is (``org/name``): no path (``/mnt/models``), no placeholder (``$(MODEL_PATH)``,
#: ``{{.Name}}``, ``${MODEL_DIR}``), the shape :mod:`kvlint.models.resolve` looks up as a hub id.
_LITERAL_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")


def runtime_names_model(w: Workload, serving: ServingConfig | None = None) -> str | None:
    """The model a serving-runtime template names for itself, to be sized on it rather than left to the service
    that uses it: the user's ``kvlint.io/model`` annotation on the runtime, else the model the operator object
    names in its own fields (:attr:`~kvlint.types.Workload.derived_model`: an OME runtime's
    ``--served-model-name`` with the GPUs it declares, :func:`kvlint.workloads.find._ome_named`), else (given the
    container's ``serving``) a hub id its engine command names literally (``--model org/name``: KServe merges the
    predictor's container over the runtime's and replaces ``args`` only when the predictor sets them,
    kserve/kserve pkg/utils/container_merge.go ``MergeContainerWithPatch``, so the engine loads that model;
    kvlint sizes the runtime on it when it has its config); None for a runtime that names none (its model is the
    InferenceService's: ``/mnt/models``, ``$(MODEL_PATH)``) and for any other workload."""
    if not is_runtime_template(w):
        return None
    from kvlint.workloads.base import MODEL_ANNOTATION

    named = w.annotations.get(MODEL_ANNOTATION) or w.derived_model
    if named:
        return str(named)
    literal = serving.model.value if serving is not None and serving.model is not None else None
    if isinstance(literal, str) and _LITERAL_HUB_ID.fullmatch(literal):
        return literal
    return None


def unsized_before_model(w: Workload, serving: ServingConfig, placement: Placement | None) -> Unsized | None:
    """Why a container of ``w`` is not sized whatever its model (:func:`kvlint.engines.images.unsized_whatever_model`:
    ``not a CUDA/ROCm GPU``, ``no GPU requested``), the reason said before an unknown model (KV501 says it, KV502
    adds no "no config.json", :func:`kvlint.sizing.sizing_of` counts it); None for a serving-runtime template that
    names no model of its own, whose model and resources both come from the InferenceService that uses it (the
    template's reason, KV502 info). A runtime that names its model (:func:`runtime_names_model`) is sized like any
    container, so the same reason comes first whether or not kvlint has that model's config."""
    if is_runtime_template(w) and runtime_names_model(w, serving) is None:
        return None
    return unsized_whatever_model(serving, placement)


def resource_value(container: LDict, resource: str) -> Any:
    """The raw ``resources.limits`` (else ``requests``) value of ``resource``, or None."""
    res = container.get("resources")
    if not isinstance(res, dict):
        return None
    for section in ("limits", "requests"):
        block = res.get(section)
        if isinstance(block, dict) and resource in block:
            return block[resource]
    return None


def memory_limit(container: LDict) -> tuple[int, Loc | None] | None:
    """``(bytes, position)`` of the container's ``resources.limits.memory``; None when unset or unreadable."""
    res = container.get("resources")
    limits = res.get("limits") if isinstance(res, dict) else None
    if not isinstance(limits, dict) or limits.get("memory") is None:
        return None
    try:
        value = parse_quantity(limits["memory"])
    except (ValueError, TypeError):
        return None
    return (value, loc_of(limits, "memory")) if value > 0 else None


def has_memory_shm(pod_spec: LDict, container: LDict) -> bool:
    """Whether ``/dev/shm`` in the container is memory-backed: ``hostIPC``, an ``emptyDir`` with
    ``medium: Memory`` or the host's ``/dev/shm`` mounted there."""
    if pod_spec.get("hostIPC") is True:
        return True
    volumes = {}
    raw_volumes = pod_spec.get("volumes")
    for v in raw_volumes if isinstance(raw_volumes, list) else []:
        if isinstance(v, dict) and isinstance(v.get("name"), str):
            volumes[v["name"]] = v
    raw_mounts = container.get("volumeMounts")
    for m in raw_mounts if isinstance(raw_mounts, list) else []:
        if not isinstance(m, dict):
            continue
        if str(m.get("mountPath", "")).rstrip("/") != "/dev/shm":
            continue
        name = m.get("name")
        vol = volumes.get(name) if isinstance(name, str) else None
        if not isinstance(vol, dict):
            continue
        ed = vol.get("emptyDir")
        if isinstance(ed, dict) and str(ed.get("medium", "")).lower() == "memory":
            return True
        hp = vol.get("hostPath")
        if isinstance(hp, dict) and str(hp.get("path", "")).rstrip("/") == "/dev/shm":
            return True
    return False


def undefined_shm_volume(pod_spec: LDict, container: LDict) -> tuple[str, Loc | None] | None:
    """The volume name (and the mount's position) of a ``volumeMounts`` entry at ``/dev/shm`` that names no
    volume of the pod's ``volumes``, or None. The API server rejects such a pod ("spec.containers[].volumeMounts
    [].name: Not found", ``ValidatePodSpec`` in kube-apiserver ``pkg/apis/core/validation/validation.go``) unless
    something (an operator, a mutating admission webhook) adds the volume before it is created."""
    raw_volumes = pod_spec.get("volumes")
    names = {
        v["name"]
        for v in (raw_volumes if isinstance(raw_volumes, list) else [])
        if isinstance(v, dict) and isinstance(v.get("name"), str)
    }
    raw_mounts = container.get("volumeMounts")
    for i, m in enumerate(raw_mounts if isinstance(raw_mounts, list) else []):
        if not isinstance(m, dict) or str(m.get("mountPath", "")).rstrip("/") != "/dev/shm":
            continue
        name = m.get("name")
        if isinstance(name, str) and name not in names:
            return name, loc_of(raw_mounts, i)
    return None


def model_weight_bytes(cr: ContainerResult, dtype_bytes: int | None = None) -> int | None:
    """Whole-model weight bytes from :func:`kvlint.models.weights.weight_bytes` (the checkpoint size when
    known, else kvlint's estimate from config.json) at ``dtype_bytes`` (default: the planned dtype, 4 for
    float32 else 2) with the engine's ``quantization``; None without a model."""
    if cr.model is None:
        return None
    from kvlint.models.weights import weight_bytes

    if dtype_bytes is None:
        dtype_bytes = 4 if cr.plan is not None and cr.plan.dtype in ("float32", "float") else 2
    try:
        quant = cr.serving.get("quantization")
        return int(
            weight_bytes(cr.model, dtype_bytes=dtype_bytes, quantization=str(quant) if quant else None)[0]
        )
    except Exception:  # an estimate only; never let it break the check
        return None
