""":func:`find_workloads`: the built-in kinds at their fixed PodSpec paths, LeaderWorkerSet, KServe and the
operator kinds through their own modules, and every other kind searched structurally (see the package
docstring).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kvlint.types import Document, Workload
from kvlint.workloads.base import (
    Chain,
    enclosing_context,
    get_in,
    int_or_none,
    is_pod_spec,
    make_workload,
    path_str,
    synthetic_pod_spec,
)
from kvlint.workloads.kaito import workspace_workloads
from kvlint.workloads.kserve import predictor_workloads
from kvlint.workloads.kubeai import model_workloads
from kvlint.workloads.lws import lws_workloads
from kvlint.workloads.nim import nim_service_workloads
from kvlint.workloads.production_stack import vllm_runtime_workloads

#: Fixed PodSpec paths of the built-in workload kinds.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


# Keys of a PodSpec (or of anything) that never hold another PodSpec.
_NO_DESCEND = frozenset(
    {"containers", "initContainers", "ephemeralContainers", "volumes", "metadata", "status", "env"}
)


_MAX_DEPTH = 256


def find_workloads(docs: Sequence[Document]) -> list[Workload]:
    """Every PodSpec in ``docs``, in document order (see the module docstring for where they are found).

    Args:
        docs: loaded documents; non-mapping documents and documents without PodSpecs contribute nothing.

    Returns:
        One :class:`~kvlint.types.Workload` per PodSpec, with ``kind``/``name``/``namespace`` of the
        top-level object, ``path`` the dotted path of the PodSpec (list items as ``[i]``), merged labels
        and annotations, ``replicas``, ``role`` and ``group_size`` when the object declares them.
        Never raises on odd shapes.
    """
    out: list[Workload] = []
    for doc in docs:
        if isinstance(doc.data, dict):
            try:
                out.extend(_doc_workloads(doc))
            except RecursionError:  # pragma: no cover - loader caps nesting at 200
                continue
    return out


def _doc_workloads(doc: Document) -> list[Workload]:
    data = doc.data
    kind = doc.kind
    found: list[Workload] = _crd_workloads(doc)
    if found:
        return found
    if kind == "LeaderWorkerSet":
        found = lws_workloads(doc)
    elif kind in POD_TEMPLATE_PATHS:
        keys = POD_TEMPLATE_PATHS[kind]
        chain: Chain = []
        node: Any = data
        for k in keys:
            if not isinstance(node, dict):
                node = None
                break
            chain.append((node, k))
            node = node.get(k)
        if is_pod_spec(node):
            found = [make_workload(doc, node, chain, replicas=int_or_none(get_in(data, "spec", "replicas")))]
    elif kind == "InferenceService":
        # the predictor's model first, then anything else (transformer, explainer, workerSpec)
        found = predictor_workloads(doc)
        taken = {id(w.pod_spec) for w in found}
        for w in _structural(doc):
            if id(w.pod_spec) in taken or (found and w.path == "spec.predictor"):
                continue
            found.append(w)
        return found
    if found:
        return found
    return list(_structural(doc))


def _structural(doc: Document) -> Iterator[Workload]:
    """PodSpecs (and OME ``runner`` containers) anywhere in the document."""
    chain: Chain = []

    def walk(node: Any, depth: int) -> Iterator[Workload]:
        if depth > _MAX_DEPTH:
            return
        if isinstance(node, dict):
            if is_pod_spec(node):
                replicas, role, group_size = enclosing_context(chain)
                yield make_workload(doc, node, chain, replicas=replicas, role=role, group_size=group_size)
            else:
                runner = node.get("runner")
                if isinstance(runner, dict) and "image" in runner:
                    replicas, role, group_size = enclosing_context(chain)
                    ps = synthetic_pod_spec(node, runner, ("runner",))
                    path = path_str([k for _, k in chain] + ["runner"])
                    yield make_workload(
                        doc, ps, chain, path=path, replicas=replicas, role=role, group_size=group_size
                    )
            for k, v in node.items():
                if k in _NO_DESCEND or k == "runner" or not isinstance(v, (dict, list)):
                    continue
                chain.append((node, k))
                yield from walk(v, depth + 1)
                chain.pop()
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    chain.append((node, i))
                    yield from walk(v, depth + 1)
                    chain.pop()

    yield from walk(doc.data, 0)


def _crd_workloads(doc: Document) -> list[Workload]:
    """Synthetic workloads for the operator CRDs kvlint understands (empty for other kinds)."""
    api = str(doc.data.get("apiVersion", ""))
    kind = doc.kind
    if kind == "Model" and api.startswith("kubeai.org/"):
        return model_workloads(doc)
    if kind in ("Workspace", "InferenceSet") and api.startswith("kaito.sh/"):
        return workspace_workloads(doc)
    if kind == "VLLMRuntime" and api.startswith("production-stack.vllm.ai/"):
        return vllm_runtime_workloads(doc)
    if kind == "NIMService" and api.startswith("apps.nvidia.com/"):
        return nim_service_workloads(doc)
    return []
