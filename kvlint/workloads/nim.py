"""NVIDIA NIM Operator ``NIMService`` (apps.nvidia.com): the pod the operator creates."""

from __future__ import annotations

from typing import Any

from kvlint.fastinit import replaced
from kvlint.source import Loc, loc_of
from kvlint.types import Document, Finding, Workload
from kvlint.workloads.base import (
    get_in,
    int_or_none,
    ldict,
    llist,
    synthetic_workload,
)


def nim_service_workloads(doc: Document) -> list[Workload]:
    """NVIDIA NIM operator ``NIMService`` (apps.nvidia.com) -> its pod: one container of
    ``spec.image.repository:tag`` with ``spec.resources``, and the object's ``nodeSelector``,
    ``tolerations`` and ``affinity`` (k8s-nim-operator api/apps/v1alpha1 nimservice_types.go
    ``NIMServiceSpec``). NIM images start their own launcher (not a vLLM command line), so the engine
    settings stay unread; placement works as for any PodSpec."""
    return _nim_workloads(doc, get_in(doc.data, "spec"), "spec")


def nim_pipeline_workloads(doc: Document) -> list[Workload]:
    """NVIDIA NIM operator ``NIMPipeline`` (apps.nvidia.com): each ``spec.services[i].spec`` is the spec of a
    NIMService the pipeline's controller creates, the pipeline as controlling owner (k8s-nim-operator
    api/apps/v1alpha1 nimpipeline_types.go ``NIMServicePipelineSpec``; internal/controller
    nimpipeline_controller.go ``reconcileNIMService``), read as :func:`nim_service_workloads` reads a
    NIMService's ``spec``; only a service with ``enabled: true`` is created and read (``reconcileNIMPipeline``:
    ``enabled := service.Enabled != nil && *service.Enabled``, and the CRD gives ``enabled`` no default; the
    others are deleted if they exist)."""
    services = get_in(doc.data, "spec", "services")
    out: list[Workload] = []
    for i, svc in enumerate(services if isinstance(services, list) else []):
        if isinstance(svc, dict) and svc.get("enabled") is True:
            out.extend(_nim_workloads(doc, svc.get("spec"), f"spec.services[{i}].spec"))
    return out


def _nim_workloads(doc: Document, spec: Any, at: str) -> list[Workload]:
    """The pod of the NIMService spec ``spec``, found at path ``at`` of ``doc`` (see
    :func:`nim_service_workloads`)."""
    img = get_in(spec, "image")
    if not isinstance(spec, dict) or not isinstance(img, dict) or not img.get("repository"):
        return []
    rloc = loc_of(img, "repository")
    image = str(img["repository"]) + (f":{img['tag']}" if img.get("tag") else "")
    items: list[tuple[str, Any, Loc | None]] = [("name", "nim", rloc), ("image", image, rloc)]
    if isinstance(spec.get("resources"), dict):
        items.append(("resources", spec["resources"], loc_of(spec, "resources")))
    container = ldict(loc_of(spec, "image") or rloc, items)
    pod_items: list[tuple[str, Any, Loc | None]] = [
        ("containers", llist(container.loc, [(container, container.loc)]), container.loc)
    ]
    for key in ("nodeSelector", "tolerations", "affinity"):
        if spec.get(key) is not None:
            pod_items.append((key, spec[key], loc_of(spec, key)))
    ps = ldict(loc_of(spec) or doc.loc, pod_items)
    why = None
    if spec.get("nodeSelector") is None and spec.get("affinity") is None:
        why = "NIMService sets no spec.nodeSelector or spec.affinity naming the GPU"
    w = synthetic_workload(doc, ps, at, replicas=int_or_none(spec.get("replicas")), accelerator_why=why)
    return [replaced(w, findings=(nim_note("NIMService", image, rloc),))]


def nim_note(kind: str, image: str, loc: Loc | None) -> Finding:
    """The KV503 note on a container running the NIM image ``image`` (:func:`kvlint.engines.images.is_nim_image`)
    in an object of ``kind``: its launcher picks the engine and its settings from a model profile kvlint does not
    read."""
    return Finding(
        "KV503",
        f"kvlint does not read this {kind}'s engine settings: the NIM image {image} starts NVIDIA's NIM "
        "launcher, which chooses the engine (TensorRT-LLM, vLLM or SGLang) and its settings from the model profile "
        "it selects for the GPU; kvlint does not read NIM profiles, so the engine's memory settings are not checked",
        loc,
        fix="check the profile NIM selects (list-model-profiles in the NIM container) and its engine settings",
        severity="info",
    )


def nim_container_notes(w: Workload) -> tuple[Finding, ...]:
    """KV503 notes for the containers of an ordinary workload (a Deployment, StatefulSet, LeaderWorkerSet ...
    rendered from NVIDIA's ``nim-llm`` Helm chart, say) that run a NIM image with no ``command`` of their own, so
    the image's NIM launcher starts (as a NIMService's pod does, :func:`nim_service_workloads`); none when the
    workload already has a NIM note."""
    from kvlint.engines.images import is_nim_image

    if any(f.rule == "KV503" and "the NIM image" in f.message for f in w.findings):
        return ()
    containers = w.pod_spec.get("containers") if isinstance(w.pod_spec, dict) else None
    out = []
    for c in containers if isinstance(containers, list) else ():
        image = c.get("image") if isinstance(c, dict) else None
        if isinstance(image, str) and is_nim_image(image) and not c.get("command"):
            out.append(nim_note(w.kind, image, loc_of(c, "image") or loc_of(c)))
    return tuple(out)
