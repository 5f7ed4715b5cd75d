""":func:`find_workloads`: the built-in kinds at their fixed PodSpec paths, LeaderWorkerSet, KServe and the
operator kinds through their own modules, and every other kind searched structurally (see the package
docstring).
"""

from __future__ import annotations

import bisect
import functools
import json
import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from kvlint.accelerators.placement import (
    NODE_CLASS_KINDS,
    node_class_accelerator,
    node_class_unread,
    selected_node_class,
)
from kvlint.chart_values import reader_of
from kvlint.engines.images import image_mentions_engine
from kvlint.fastinit import replaced
from kvlint.gpu_resources import GPU_RESOURCES, is_gpu_resource
from kvlint.load import template_chart
from kvlint.render import chart_name, helm_values_reason
from kvlint.source import LDict, LList, loc_of
from kvlint.types import DerivedAccelerator, Document, Finding, Mark, Workload
from kvlint.values import as_list, digits
from kvlint.workloads.base import (
    LWS_TEMPLATE_KEYS,
    MODEL_ANNOTATION,
    Chain,
    enclosing_context,
    get_in,
    int_or_none,
    is_pod_spec,
    ldict,
    llist,
    make_workload,
    path_str,
    synthetic_pod_spec,
    with_injected_env,
)
from kvlint.workloads.dra import CLAIM_KINDS, ClaimGpus, ClaimIndex, is_claim, pod_claim_gpus
from kvlint.workloads.gitops import gitops_names_engine, gitops_workloads
from kvlint.workloads.kaito import workspace_workloads
from kvlint.workloads.kserve import Runtimes, predictor_workloads, runtime_worker_size_findings
from kvlint.workloads.kthena import model_booster_workloads, model_serving_workloads
from kvlint.workloads.kubeai import model_workloads
from kvlint.workloads.llmaz import open_model_index, playground_workloads
from kvlint.workloads.llmisvc import config_index, llmisvc_consumed, llmisvc_workloads, model_from_uri
from kvlint.workloads.lws import lws_env, lws_fields, lws_workloads, size_findings
from kvlint.workloads.merge import strategic_merge
from kvlint.workloads.nim import nim_container_notes, nim_pipeline_workloads, nim_service_workloads
from kvlint.workloads.ome import (
    bad_worker_size,
    injected_env,
    is_ome_runtime,
    named_model,
    with_ome_env,
    worker_size_finding,
)
from kvlint.workloads.ome_select import MAX_COMPARISONS, OmeCatalog, Selection, is_ome, runtime_refusal
from kvlint.workloads.operators import (
    GITOPS_KINDS,
    dynamo_component_deployment_workloads,
    dynamo_component_pods,
    dynamo_workloads,
    embedded_container_note,
    hyperpod_workloads,
    is_gitops,
    unknown_kind_note,
    unread_kind_note,
)
from kvlint.workloads.placeholders import template_findings
from kvlint.workloads.production_stack import vllm_runtime_workloads
from kvlint.workloads.rayserve import rayservice_workloads, serve_llm_reads
from kvlint.workloads.rbg import rbg_set_workloads, rbg_workloads

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


#: The keys :func:`_walk` does not descend into: :data:`_NO_DESCEND` and ``runner`` (read where it is found).
_NOT_WALKED = _NO_DESCEND | {"runner"}

_MAX_DEPTH = 256


def find_workloads(
    docs: Sequence[Document],
    *,
    joined: _Joined | None = None,
    limit: int | None = None,
    max_file_bytes: int | None = None,
) -> list[Workload]:
    """Every PodSpec in ``docs``, in document order (see the module docstring for where they are found).

    Args:
        docs: loaded documents; non-mapping documents and documents without PodSpecs contribute nothing.

    Returns:
        One :class:`~kvlint.types.Workload` per PodSpec, with ``kind``/``name``/``namespace`` of the
        top-level object, ``path`` the dotted path of the PodSpec (list items as ``[i]``), merged labels
        and annotations, ``replicas``, ``role`` and ``group_size`` when the object declares them.
        Never raises on odd shapes.

    ``joined``: the services joined with their runtimes and presets (:func:`join_documents`) when they were
    read from more documents than ``docs`` (the streaming run); by default those of ``docs``.

    ``limit`` (the webhook's review cap, :attr:`kvlint.options.Options.max_review_size`): an object found by
    the structural walk to hold more than ``limit`` pod templates is only counted past its first ``limit + 1``
    (the rest of its list repeats the last one built, so the count and the first ``limit + 1`` are what they
    would be) and its workloads are not completed (leaders, operator additions, notes): nothing in it will
    be analysed. A 3 MiB object of 16,000 pod templates took about 0.9 s to build before being refused.

    ``max_file_bytes`` (``--max-file-bytes``): the cap on what helm renders from a chart of this checkout that
    an Argo CD or Flux object deploys (:mod:`kvlint.workloads.gitops_local`); default the loader's.
    """
    out: list[Workload] = []
    if joined is None:
        joined = _joined(docs)
    for doc in docs:
        if isinstance(doc.data, dict):
            if doc.kind in PROVIDER_KINDS and doc_key(doc) in joined.consumed:
                continue  # a runtime or preset merged into the service that uses it
            try:
                found = joined.workloads_of(doc)
                ws = found if found is not None else _doc_workloads(doc, joined, limit, max_file_bytes)
                if limit is not None and len(ws) > limit:
                    out.extend(ws)  # too large to review: counted, not completed
                    continue
                if joined.node_classes:
                    ws = [joined.with_node_class(w) for w in ws]
                if joined.claims:
                    ws = [joined.with_claims(w) for w in ws]
                out.extend(_template_notes(doc, link_leaders(ws)))
            except RecursionError:  # pragma: no cover - loader caps nesting at 200
                continue
    return out


#: Kinds whose pods are templates another object fills (KServe, OME serving runtimes).
_RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


#: The name of the KubeAI chart that renders Models from its ``catalog`` values, and its template
#: (:data:`kvlint.workloads.kubeai.MODELS_CHART_TEMPLATE`).
_MODELS_CHART = ("models", "models.yaml")


def rendered_by_models_chart(doc: Document) -> bool:
    """Whether ``doc`` is a Model that helm rendered from the KubeAI ``models`` chart: its position is that chart's
    ``templates/models.yaml``, in a chart directory whose ``Chart.yaml`` names it ``models`` (the chart kvlint
    rendered, or helm's output saved beside the chart, whose ``# Source:`` lines map it there). The user edits the
    chart's ``catalog`` entry, so the fixes name it (:func:`kvlint.workloads.kubeai.kubeai_terms` ``catalog``), as
    for the values read directly. A Model file of its own (kubectl apply) or an admission review is not."""
    if os.path.basename(doc.path) != _MODELS_CHART[1]:
        return False
    chart = template_chart(doc.path)
    return chart is not None and chart_name(chart) == _MODELS_CHART[0]


def kubeai_models(doc: Document) -> list[Workload]:
    """:func:`kvlint.workloads.kubeai.model_workloads` of a KubeAI Model, said in the terms of the models chart's
    catalog entry when helm rendered it from that chart (:func:`rendered_by_models_chart`)."""
    return model_workloads(doc, catalog=rendered_by_models_chart(doc))


def _template_kind(doc: Document, w: Workload) -> str:
    """The kind of the object ``w`` was built from: the document's, or the kind of an OpenShift ``Template``'s
    object (``objects[i]``) that holds it."""
    if doc.kind == "Template" and w.path.startswith("objects["):
        objects = get_in(doc.data, "objects")
        try:
            obj = objects[int(w.path[8 : w.path.index("]")])] if isinstance(objects, list) else None
        except (ValueError, IndexError):
            obj = None
        return str(obj.get("kind", "")) if isinstance(obj, dict) else ""
    return doc.kind


def _template_notes(doc: Document, ws: list[Workload]) -> list[Workload]:
    """A serving runtime linted without the InferenceService that uses it: a note on each of its pods saying that
    the model and the resources (GPUs) come from that service (KServe ``ServingRuntime``/``ClusterServingRuntime``,
    OME runtimes, and the same inside an OpenShift ``Template``); not on an OME runtime's router, which serves no
    model. A KServe runtime whose ``workerSpec`` sizes KServe refuses gets KV206 on its first pod
    (:func:`kvlint.workloads.kserve.runtime_worker_size_findings`)."""
    out = []
    refused = runtime_worker_size_findings(doc, used=False)
    for i, w in enumerate(ws):
        kind = _template_kind(doc, w)
        # an OME worker.size that is not a positive integer: said at its line, and the runtime is not sized on
        # the model it names (its pods' parallel size would be made up)
        size = worker_size_finding(doc, w)
        # an OME runtime's router (spec.routerConfig) serves no model and takes no GPU: no note of its own
        if kind in _RUNTIME_KINDS and not w.findings and ".routerConfig." not in f".{w.path}.":
            named = None if bad_worker_size(doc, w) else _ome_named(doc, kind, w)
            w = named or replaced(w, findings=(runtime_note(doc, kind, w),))
        placeholders = template_findings(w, doc)
        if placeholders:
            w = replaced(w, findings=(*w.findings, *placeholders))
        if size is not None:
            w = replaced(w, findings=(*w.findings, size))
        if refused and i == 0:
            w = replaced(w, findings=(*w.findings, *refused))
        nim = nim_container_notes(w)
        if nim:
            w = replaced(w, findings=(*w.findings, *nim))
        out.append(w)
    return _unread_notes(doc, out)


def _unread_notes(doc: Document, ws: list[Workload]) -> list[Workload]:
    """Objects of kinds whose engine settings kvlint does not read get a finding saying where they are
    (:func:`kvlint.workloads.operators.unread_kind_note`): on an empty workload when the object holds no
    PodSpec, else on its first workload when none of its containers names an engine in its image."""
    if ws and ws[0].doc is not doc and is_gitops(doc):
        return ws  # built from a GitOps object's inline chart values: its own KV504 says so
    if ws and serve_llm_reads(ws[0]):
        return ws  # built from a RayService's Ray Serve LLM configs: what was not read has its own KV503
    if ws and doc.kind == "ModelBooster":
        return ws  # its engine pods were read (kthena.model_booster_workloads), whatever the image is called
    if (
        ws
        and doc.kind == "Playground"
        and ws[0].doc is doc
        and (ws[0].pod_spec.get("containers") or any(f.rule == "KV503" for f in ws[0].findings))
    ):
        # its model-runner pod was read, or its note says why not (kvlint.workloads.llmaz.playground_workloads)
        return ws
    note = unread_kind_note(doc)
    if note is None and not ws:
        note = unknown_kind_note(doc, _known_kinds())
    if note is None and not _runs_engine(ws):
        note = embedded_container_note(doc)  # a serving container held as text (a Crossplane template)
    if note is None:
        return ws
    if (doc.kind.startswith("Ray") and not _names_engine(doc.data)) or (
        is_gitops(doc) and not gitops_names_engine(doc, _names_engine)
    ):
        return ws  # a Ray application or GitOps object that serves no LLM is none of kvlint's business
    if not ws:
        ps = LDict(loc=loc_of(doc.data, "spec") or doc.loc)
        ps["containers"] = LList([], loc=ps.loc)
        return [Workload(doc, doc.kind, doc.name, doc.namespace, ps, "spec", findings=(note,))]
    if _runs_engine(ws):
        return ws
    return [replaced(ws[0], findings=(*ws[0].findings, note)), *ws[1:]]


def _runs_engine(ws: Sequence[Workload]) -> bool:
    """A container of ``ws`` names a serving engine in its image."""
    return any(
        image_mentions_engine(str(c.get("image") or ""))
        for w in ws
        for c in as_list(w.pod_spec.get("containers"))
        if isinstance(c, dict)
    )


@functools.lru_cache(maxsize=1)
def _known_kinds() -> frozenset[tuple[str, str]]:
    """``(API group, kind)`` of the operator kinds this module has a reader or a note for (:data:`CRD_READERS`,
    the services, runtimes and presets joined across documents, NVIDIA Dynamo, LeaderWorkerSet, the OpenShift
    Template), ``("", kind)`` for those matched by kind alone; read by :func:`kvlint.workloads.operators.
    unknown_kind_note` (not :data:`kvlint.kinds.WORKLOAD_KINDS`, which imports this module)."""
    by_kind = {*JOINED_KINDS, *POD_TEMPLATE_PATHS, "LeaderWorkerSet", "DynamoGraphDeployment", "Template"}
    return frozenset({*CRD_READERS, *(("", k) for k in by_kind)})


#: The words :func:`_names_engine` looks for, in lower case: searched in lower-cased ASCII text, the same as
#: searching the original with ``re.IGNORECASE`` (which, in ASCII text, pairs each letter with its other case
#: only), without the case-insensitive scan's cost (~7x on the Ray objects of the corpus).
_ENGINE_WORDS = re.compile(r"vllm|sglang|text-generation|ray\.serve\.llm|backendname|preset")


def _names_engine(data: Any) -> bool:
    """The object mentions an engine somewhere (an LLM serving object, not any Ray job): one of
    :data:`_ENGINE_WORDS`, in any case, in its JSON text (ASCII: ``json.dumps`` escapes every other
    character)."""
    try:
        return bool(_ENGINE_WORDS.search(json.dumps(data, default=str).lower()))
    except (TypeError, ValueError):
        return False


def _declared_gpus(w: Workload) -> str | None:
    """``nvidia.com/gpu: 2``: the first accelerator limit (else request) a container of ``w`` declares, or None.
    :data:`kvlint.gpu_resources.GPU_RESOURCES` first in their order, then any other resource that carries
    accelerators (a MIG slice, an AMD partition ``amd.com/cpx_nps4``: :func:`kvlint.gpu_resources.is_gpu_resource`),
    as the rest of kvlint counts them."""
    for c in as_list(w.pod_spec.get("containers")):
        res = c.get("resources") if isinstance(c, dict) else None
        if not isinstance(res, dict):
            continue
        for part in ("limits", "requests"):
            amounts = res.get(part)
            if not isinstance(amounts, dict):
                continue
            names = [*GPU_RESOURCES, *(k for k in amounts if k not in GPU_RESOURCES and is_gpu_resource(k))]
            for name in names:
                if amounts.get(name) not in (None, "", 0, "0"):
                    return f"{name}: {amounts[name]}"
    return None


def _ome_named(doc: Document, kind: str, w: Workload) -> Workload | None:
    """An OME runtime's pod that names its model and declares its GPUs (:func:`kvlint.workloads.ome.named_model`,
    :func:`_declared_gpus`), to be sized on them: with that model as its ``derived_model``, the env OME adds
    (``PARALLELISM_SIZE``, and LWS's for a multi-node runtime: :func:`kvlint.workloads.ome.injected_env`) and a
    KV505 note at the place that names it; None for any other pod (a KServe runtime, an OME runtime naming no model or no GPUs:
    the template note, KV502). A ``kvlint.io/model`` annotation on the runtime is the model, with no note."""
    if doc.kind == "Template" or not is_ome_runtime(doc):
        return None
    gpus = _declared_gpus(w)
    if gpus is None:
        return None
    if w.annotations.get(MODEL_ANNOTATION):
        return w
    named = named_model(doc, w)
    if named is None:
        return None
    note = Finding(
        "KV505",
        f"kvlint sizes this {kind} on the model it names, '{named.model_id}' ({named.source}), and the {gpus} "
        "it declares: OME runs it with the BaseModel of the OME InferenceService that selects it ($(MODEL_PATH)), "
        "assumed to be that model, and that service's engine/decoder may override the resources",
        named.loc or w.loc or doc.loc,
        fix="nothing to change if this runtime serves only that model; otherwise set kvlint.io/model on the "
        "runtime, or lint the OME InferenceServices that use it together with it",
        severity="info",
    )
    raw = gpus.split(": ", 1)[1].strip()
    # a quantity as written: 8 or "8" (digits(): bounded, a 5,000-digit string made int() raise, and the check of
    # the whole file, or the review, fail)
    count = digits(raw)
    env = injected_env(doc, w, count) if count else []
    pod_spec = with_ome_env(w.pod_spec, env) if env else w.pod_spec
    return replaced(
        w,
        pod_spec=pod_spec,
        derived_model=named.model_id,
        findings=(note,),
    )


def runtime_note(
    doc: Document,
    kind: str,
    w: Workload,
    named: str | None = None,
    source: str = "its kvlint.io/model annotation",
) -> Finding:
    """KV502 (info) on a serving runtime linted without the service that uses it. The model comes from the
    service (KServe ``storageUri``/``modelFormat``, OME's BaseModel) unless the runtime names its own (``named``,
    said by ``source``; default its ``kvlint.io/model`` annotation: kvlint sizes the runtime on it,
    :func:`kvlint.rules.facts.runtime_names_model`); the resources only where the service sets them: a runtime
    container's own GPU limits are the default (KServe merges the predictor's container over the runtime's; OME's
    InferenceService ``engine`` overrides the runtime's ``engineConfig``)."""
    api = str(get_in(doc.data, "apiVersion") or "")
    user = "OME InferenceService" if api.startswith("ome.io/") else "InferenceService"
    gpus = _declared_gpus(w)
    if named is None and w.annotations.get(MODEL_ANNOTATION):
        named = str(w.annotations[MODEL_ANNOTATION])
    fix = f"lint the {user}s that use this runtime together with it"
    if named is not None and gpus:
        message = (
            f"this {kind} is a template that names its own model, '{named}' ({source}): kvlint sizes it on that "
            f"model and the runtime's own {gpus}, which apply unless the {user} that uses it sets others"
        )
        fix = f"nothing to change if the {user}s that use this runtime serve that model on those GPUs; otherwise {fix}"
    elif named is not None:
        message = (
            f"this {kind} is a template that names its own model, '{named}' ({source}), but the container "
            f"resources (GPUs) come from the {user} that uses it, and none among the inputs does, so the GPU count "
            "is not known here"
        )
        fix += ", or set the GPUs the engine uses in the runtime's resources.limits (the default for those services)"
    elif gpus:
        message = (
            f"this {kind} is a template: the model comes from the {user} that uses it, and none among the inputs "
            f"does, so the model is not known here (the runtime's own {gpus} applies unless that service sets "
            "the resources)"
        )
    else:
        message = (
            f"this {kind} is a template: the model and the container resources (GPUs) come from the {user} that "
            "uses it, and none among the inputs does, so the model and the GPU count are not known here"
        )
    return Finding("KV502", message, w.loc or doc.loc, fix=fix, severity="info", mark=Mark.RUNTIME_TEMPLATE)


def restate_runtime_note(w: Workload, named: str) -> Finding:
    """:func:`runtime_note` of ``w`` (a serving runtime with no ``kvlint.io/model``) for the model ``named``
    literally in its engine command (``--model org/name``, :func:`kvlint.rules.facts.runtime_names_model`), which
    the pipeline reads only once the containers are parsed."""
    return runtime_note(w.doc, _template_kind(w.doc, w), w, named, "its engine command")


DocKey = tuple[str, int, int, int]


def doc_key(doc: Document) -> DocKey:
    """A document's place in the inputs (path, index in its file, line, column): the same for the document
    read again later in a run (a streaming run reads a file once for its context and again in its turn)."""
    return (doc.path, doc.index, doc.loc.line, doc.loc.column)


class _Joined:
    """Objects built from several documents of the run: LLMInferenceServices with their presets,
    InferenceServices with their runtimes.

    ``providers`` are the runtimes, presets and hardware profiles (:data:`CONTEXT_KINDS`; other kinds are
    ignored); the
    services are read with :meth:`add_services`, which records in ``consumed`` the places (:func:`doc_key`)
    of the providers merged into a service, and with ``keep`` holds the joined workloads by document id (the
    whole-input run, whose documents outlive this object). A streaming run keeps only the providers: each
    service is joined again when its file's turn comes (:meth:`workloads_of`)."""

    def __init__(self, providers: Sequence[Document]) -> None:
        self.providers = [d for d in providers if d.kind in CONTEXT_KINDS]
        self.runtimes = Runtimes(self.providers)
        self.ome = OmeCatalog(self.providers)
        #: llmaz OpenModels by name (:func:`kvlint.workloads.llmaz.open_model_index`)
        self.open_models = open_model_index(self.providers)
        self.configs = config_index(self.providers)
        self._keys = {id(d): doc_key(d) for d in self.providers}
        self.workloads: dict[int, tuple[Document, list[Workload]]] = {}
        self.consumed: set[DocKey] = set()
        # GKE ComputeClasses and Karpenter NodePools by the node label that selects them and their name
        self.node_classes: dict[tuple[str, str], Document] = {}
        for d in providers:
            group_key = NODE_CLASS_KINDS.get(d.kind)
            api = d.data.get("apiVersion") if isinstance(d.data, dict) else None
            if group_key and isinstance(api, str) and api.startswith(group_key[0]) and d.name:
                self.node_classes.setdefault((group_key[1], d.name), d)
        self._node_accs: dict[tuple[str, str], DerivedAccelerator | None] = {}
        #: NIMCaches (apps.nvidia.com) by (namespace, name), the first in input order
        self.nim_caches: dict[tuple[str | None, str], Document] = {}
        for d in self.providers:
            if d.kind == "NIMCache" and str(get_in(d.data, "apiVersion") or "").startswith(
                "apps.nvidia.com/"
            ):
                self.nim_caches.setdefault((d.namespace, d.name), d)
        #: DRA ResourceClaims and ResourceClaimTemplates (resource.k8s.io) by (namespace, kind, name), the first
        #: in input order (:mod:`kvlint.workloads.dra`)
        self.claims = ClaimIndex()
        self._claims_read: dict[int, ClaimGpus] = {}
        for d in self.providers:
            if is_claim(d) and d.name:
                self.claims.setdefault((d.namespace, d.kind, d.name), d)

    def with_claims(self, w: Workload) -> Workload:
        """``w`` with :attr:`~kvlint.types.Workload.dra_claims`: its pod's ``resourceClaims`` whose claim or
        template is among the inputs (:func:`kvlint.workloads.dra.pod_claim_gpus`)."""
        if not self.claims or w.dra_claims:
            return w
        found = pod_claim_gpus(w.pod_spec, self.claims, w.namespace, self._claims_read)
        return replaced(w, dra_claims=found) if found else w

    def with_node_class(self, w: Workload) -> Workload:
        """``w`` with :attr:`~kvlint.types.Workload.node_class` when its pod's ``nodeSelector`` or required
        node affinity selects a ComputeClass or NodePool among the inputs by name (:func:`kvlint.accelerators.
        placement.selected_node_class`, :func:`~kvlint.accelerators.placement.node_class_accelerator`) that
        names a GPU."""
        if w.node_class is not None or not self.node_classes:
            return w
        unread: tuple[str, str] | None = None
        for _prefix, key in NODE_CLASS_KINDS.values():
            picked = selected_node_class(w.pod_spec, key)
            if picked is None or (key, picked[0]) not in self.node_classes:
                continue
            name, how = picked
            d = self.node_classes[(key, name)]
            if (key, how) not in self._node_accs:
                self._node_accs[(key, how)] = node_class_accelerator(d.kind, name, d.data, how)
            acc = self._node_accs[(key, how)]
            if acc is not None:
                return replaced(w, node_class=acc)
            # read, and naming no GPU: KV501 says so, not "name its file" (the pod's own labels may still decide)
            unread = unread or (key, node_class_unread(d.kind, name, d.data))
        return replaced(w, node_class_why=unread) if unread is not None else w

    def add_services(self, docs: Sequence[Document], *, keep: bool | Sequence[bool] = False) -> None:
        """Record what the services among ``docs`` consume, and keep the joined workloads of those that
        ``keep`` says (one flag for all, or one per document) with the document itself, which is the one
        analysed later."""
        for i, doc in enumerate(docs):
            if doc.kind not in _SERVICE_KINDS or not isinstance(doc.data, dict):
                continue
            try:
                ws, used = self._join(doc)
            except RecursionError:  # pragma: no cover
                continue
            self.consumed |= used
            if keep if isinstance(keep, bool) else keep[i]:
                self.workloads[id(doc)] = (doc, ws)

    def add_consumers(self, docs: Sequence[Document]) -> None:
        """Record what the services among ``docs`` consume (as :meth:`add_services`), without joining their
        workloads: each is joined when its document is analysed (:meth:`workloads_of`)."""
        for doc in docs:
            if doc.kind not in _SERVICE_KINDS or not isinstance(doc.data, dict):
                continue
            try:
                self.consumed |= self._used(doc)
            except RecursionError:  # pragma: no cover
                continue

    def _join(self, doc: Document) -> tuple[list[Workload], set[DocKey]]:
        if doc.kind == "LLMInferenceService":
            ws, used = llmisvc_workloads(doc, (), configs=self.configs, profiles=self.runtimes.profiles)
            return ws, {self._keys[i] for i in used if i in self._keys}
        if is_ome(doc):
            ome = ome_isvc_workloads(doc, self.ome)
            if ome is not None:
                return ome[0], {doc_key(ome[1])} if ome[1] is not None else set()
        return _with_rest(doc, predictor_workloads(doc, self.runtimes)), self._used(doc)

    def _used(self, doc: Document) -> set[DocKey]:
        """The places of the providers the service ``doc`` consumes (what :meth:`_join` returns with its
        workloads)."""
        if doc.kind == "LLMInferenceService":
            used = llmisvc_consumed(doc, self.configs)
            return {self._keys[i] for i in used if i in self._keys}
        if is_ome(doc):
            ome = ome_isvc_workloads(doc, self.ome)
            return {doc_key(ome[1])} if ome is not None and ome[1] is not None else set()
        consumed: set[DocKey] = set()
        model = get_in(doc.data, "spec", "predictor", "model")
        if isinstance(model, dict):  # (with or without its own image: KServe merges it over the runtime's)
            multinode = isinstance(get_in(doc.data, "spec", "predictor", "workerSpec"), dict)
            rt = self.runtimes.select(model, doc.namespace, multinode=multinode)
            if rt is not None:
                consumed.add(doc_key(rt))
        return consumed

    def workloads_of(self, doc: Document) -> list[Workload] | None:
        """The joined workloads of a service (or of a preset no service uses, read on its own), or None for
        any other document."""
        found = self.workloads.get(id(doc))
        if found is not None and found[0] is doc:
            return found[1]
        if doc.kind in _SERVICE_KINDS:
            return self._join(doc)[0]
        if doc.kind == "LLMInferenceServiceConfig" and doc_key(doc) not in self.consumed:
            return llmisvc_workloads(doc, (), standalone=True, configs=self.configs)[0]
        return None


def _joined(docs: Sequence[Document]) -> _Joined:
    j = _Joined(docs)
    j.add_services(docs, keep=True)
    return j


def join_documents(docs: Sequence[Document]) -> _Joined:
    """LLMInferenceServices with their presets and InferenceServices with their runtimes, read from ``docs``
    (only documents of :data:`JOINED_KINDS` matter), for :func:`find_workloads` ``joined``."""
    return _joined(docs)


def join_services(providers: Sequence[Document], services: Sequence[Document]) -> _Joined:
    """The runtimes and presets among ``providers`` and what the ``services`` consume of them; no workload
    is joined here: a streaming run joins each service when its document is analysed
    (:meth:`_Joined.workloads_of`), which a run with several jobs does in its workers."""
    j = _Joined(providers)
    j.add_consumers(services)
    return j


#: The services that take pods from runtimes or presets.
_SERVICE_KINDS = frozenset({"LLMInferenceService", "InferenceService"})
#: What services take pods from: KServe/OME serving runtimes and LLMInferenceService presets.
PROVIDER_KINDS = frozenset({"LLMInferenceServiceConfig", *_RUNTIME_KINDS})
#: Kinds the pods of other objects select their nodes by (GKE ComputeClass, Karpenter NodePool): kept with the
#: providers of a run (:class:`_Joined` ``node_classes``), not workloads themselves.
CONTEXT_NODE_KINDS = frozenset(NODE_CLASS_KINDS)
#: What the services are joined with: the providers, the OpenShift AI hardware profiles whose resources and
#: node scheduling its webhook writes into an InferenceService or an LLMInferenceService
#: (:mod:`kvlint.workloads.hardwareprofile`; not a workload: no pod of its own), and the NVIDIA NIM Operator's
#: NIMCaches a NIMService's ``storage.nimCache.name`` names (what they cache is said in its note:
#: :func:`kvlint.workloads.nim.nim_cache_clause`), the DRA ResourceClaims and ResourceClaimTemplates whose GPUs a
#: pod's containers take through ``resources.claims`` (:mod:`kvlint.workloads.dra`), and OME's BaseModels and
#: ClusterBaseModels an InferenceService's runtime is selected by (:mod:`kvlint.workloads.ome_select`), and llmaz's
#: OpenModels a Playground claims (:mod:`kvlint.workloads.llmaz`).
CONTEXT_KINDS = PROVIDER_KINDS | {
    "HardwareProfile",
    "NIMCache",
    *CLAIM_KINDS,
    "BaseModel",
    "ClusterBaseModel",
    "OpenModel",
}


#: Kinds :func:`join_documents` reads: the services, and the runtimes and presets they take pods from.
JOINED_KINDS = frozenset(
    {"LLMInferenceService", "LLMInferenceServiceConfig", "InferenceService", *_RUNTIME_KINDS}
)


def link_leaders(ws: list[Workload]) -> list[Workload]:
    """Give each worker template of an object the leader/head template of the same engine instance: the one
    whose PodSpec path shares the longest prefix with the worker's (LeaderWorkerSet leader and worker, a Ray
    head and its worker groups, KServe's head and ``workerSpec``), the first in document order among equals.

    In O((heads + workers) log heads) path comparisons (:class:`_Heads`): comparing every worker with every
    head made a DisaggregatedSet of 2,000 leader/worker roles (0.5 MB) take 4.6 s before the webhook's review
    cap refused it (past the review budget: admitted unchecked), and one of 8,000 roles 86 s."""
    # a KServe multi-node runtime (ServingRuntimeSpec) declares no role: its own containers are the Ray head
    # that the pods of its workerSpec join, as in the InferenceService it serves (kserve.py)
    runtime_heads = {
        w.path[: -len(".workerSpec")] for w in ws if w.role == "worker" and w.path.endswith(".workerSpec")
    }
    if runtime_heads:
        ws = [replaced(w, role="head") if w.role is None and w.path in runtime_heads else w for w in ws]
    heads = [w for w in ws if w.role in ("leader", "head")]
    if not heads:
        return ws
    nearest = _Heads(heads)
    out = []
    for w in ws:
        if w.role == "worker" and w.leader is None:
            w = replaced(w, leader=nearest.of(w.path))
        out.append(w)
    return out


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class _Heads:
    """The heads of an object, for :func:`link_leaders`: :meth:`of` a path is the head whose path shares the
    longest prefix with it, the first in ``heads``' order among equals (what ``max(heads, key=shared)`` gives,
    found without comparing every head). The heads sharing the most with a path are those next to it in sorted
    order and every head beside them that starts with the same prefix: a contiguous run of the sorted paths,
    whose first head in document order is a range-minimum query (a sparse table of positions)."""

    def __init__(self, heads: list[Workload]) -> None:
        self.heads = heads
        order = sorted(range(len(heads)), key=lambda i: heads[i].path)
        self.paths = [heads[i].path for i in order]
        # table[k][j]: the smallest original position among the sorted heads j .. j + 2^k - 1
        table = [order]
        k = 1
        while 1 << k <= len(order):
            prev, half = table[-1], 1 << (k - 1)
            table.append([min(prev[j], prev[j + half]) for j in range(len(order) - (1 << k) + 1)])
            k += 1
        self.table = table

    def _first(self, lo: int, hi: int) -> int:
        """The smallest original position among sorted heads ``lo`` .. ``hi - 1`` (``lo < hi``)."""
        k = (hi - lo).bit_length() - 1
        row = self.table[k]
        return min(row[lo], row[hi - (1 << k)])

    def of(self, path: str) -> Workload:
        paths = self.paths
        at = bisect.bisect_left(paths, path)
        best = max(_common(path, paths[i]) for i in (at - 1, at) if 0 <= i < len(paths))
        prefix = path[:best]
        lo = bisect.bisect_left(paths, prefix, key=lambda p: p[:best])
        hi = bisect.bisect_right(paths, prefix, key=lambda p: p[:best])
        return self.heads[self._first(lo, hi)]


def _with_rest(doc: Document, found: list[Workload]) -> list[Workload]:
    """The predictor workloads, then every other PodSpec of the InferenceService (transformer, explainer,
    a plain ``workerSpec``)."""
    taken = {id(w.pod_spec) for w in found}
    paths = {w.path for w in found}
    out = list(found)
    for w in _structural(doc):
        if id(w.pod_spec) in taken or (found and w.path == "spec.predictor"):
            continue
        if w.path == "spec.predictor.workerSpec" and w.path in paths:
            continue
        out.append(w)
    return out


def _doc_workloads(
    doc: Document, joined: _Joined | None = None, limit: int | None = None, max_file_bytes: int | None = None
) -> list[Workload]:
    data = doc.data
    kind = doc.kind
    if not kind:
        values = reader_of(doc)  # Helm chart values kvlint reads as what the chart renders
        if values is not None:
            return values.workloads(doc)
        if helm_values_reason(doc) is not None:
            # values of a chart kvlint does not read (KV002 says to render it): containers in them are inputs to
            # the chart's templates, which add what they lack (llm-d-modelservice's `modelCommand: vllmServe`
            # becomes `vllm serve` with the model of `modelArtifacts`), not pods to check as written
            return []
    if joined is not None and (joined.nim_caches or joined.claims) and kind in ("NIMService", "NIMPipeline"):
        caches, claims = joined.nim_caches, joined.claims
        reader = nim_service_workloads if kind == "NIMService" else nim_pipeline_workloads
        return reader(doc, caches=caches, claims=claims)
    if kind == "Playground" and str(data.get("apiVersion", "")).startswith("inference.llmaz.io/"):
        # read also with no OpenModel among the inputs (a Playground alone, as an admission review holds it): the
        # reader's note names the OpenModel it claims, where the kind's generic note did not
        found_pg = playground_workloads(doc, joined.open_models if joined is not None else {})
        if found_pg:
            return found_pg
    found: list[Workload] = _crd_workloads(doc)
    if found:
        return found
    if kind in GITOPS_KINDS and is_gitops(doc):
        # inline values of a chart kvlint reads, and charts of this checkout rendered (kvlint.workloads.gitops)
        find = functools.partial(find_workloads, max_file_bytes=max_file_bytes)
        found = gitops_workloads(doc, find, _names_engine, max_file_bytes)
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
        return _with_rest(doc, predictor_workloads(doc, joined.runtimes if joined else None))
    if found:
        return found
    found = _structural(doc, limit)
    if limit is not None and len(found) > limit:
        return found
    if kind in _DYNAMO_KINDS and str(data.get("apiVersion", "")).startswith("nvidia.com/"):
        return dynamo_component_pods(doc, found)
    return found


#: NVIDIA Dynamo kinds whose v1beta1 form holds pod templates the operator completes (:func:`dynamo_component_pods`).
_DYNAMO_KINDS = frozenset({"DynamoGraphDeployment", "DynamoComponentDeployment"})


def _structural(doc: Document, limit: int | None = None) -> list[Workload]:
    """PodSpecs (and OME ``runner`` containers) anywhere in the document, in document order; past ``limit + 1``
    of them only counted, the list padded with the last one built (see :func:`find_workloads`).

    A plain recursion appending to one list (was a generator per mapping and list, each workload passed up
    through every ``yield from`` above it: about 5-10 % more CPU on the corpus documents)."""
    out: list[Workload] = []
    cap = None if limit is None else [limit, 0]
    _walk(doc, doc.data, 0, [], out, cap)
    if cap is not None and cap[1]:
        out.extend([out[-1]] * cap[1])
    return out


def _walk(
    doc: Document, node: Any, depth: int, chain: Chain, out: list[Workload], cap: list[int] | None = None
) -> None:
    """:func:`_structural`'s recursion: the workloads under ``node`` (at ``depth``, reached through ``chain``)
    appended to ``out`` (a module function: a nested one refers to itself through its closure cell, a reference
    cycle per document that only a garbage collection frees); with ``cap`` (``[limit, counted]``), once ``out``
    holds more than ``limit`` the further ones are only counted in ``cap[1]``."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, dict):
        # (is_pod_spec called only where a containers list makes it possible)
        if isinstance(node.get("containers"), list) and is_pod_spec(node):
            if cap is not None and len(out) > cap[0]:
                cap[1] += 1
            else:
                refused = _embedded_lws_refusal(chain, doc.kind)
                if refused:
                    # an operator's embedded LeaderWorkerTemplate whose size LWS refuses (lws_workloads does the
                    # same for a LeaderWorkerSet): one containerless workload says so, nothing is sized on it
                    if not any(w.findings == refused for w in out):
                        at = refused[0].loc or doc.loc
                        empty = ldict(at, [("containers", llist(at, []), at)])
                        path = path_str([k for _, k in chain])
                        out.append(replaced(make_workload(doc, empty, chain, path=path), findings=refused))
                    return
                replicas, role, group_size = enclosing_context(chain)
                ps = node
                if (
                    group_size is not None
                    and isinstance(node, LDict)
                    and any(k in LWS_TEMPLATE_KEYS for _, k in chain)
                ):
                    # an operator's embedded LeaderWorkerTemplate: LWS sets LWS_GROUP_SIZE and the pod's index in
                    # the group, LWS_WORKER_INDEX, in its pods (kvlint.workloads.lws.lws_env)
                    ps = with_injected_env(
                        node,
                        lws_env(group_size, role),
                        lws_fields(group_size, role),
                        init_containers=True,
                        operator_first=True,
                    )
                out.append(make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=group_size))
        else:
            runner = node.get("runner")
            if isinstance(runner, dict) and "image" in runner and cap is not None and len(out) > cap[0]:
                cap[1] += 1
            elif isinstance(runner, dict) and "image" in runner:
                replicas, role, group_size = enclosing_context(chain)
                ps = synthetic_pod_spec(node, runner, ("runner",))
                path = path_str([k for _, k in chain] + ["runner"])
                out.append(
                    make_workload(
                        doc, ps, chain, path=path, replicas=replicas, role=role, group_size=group_size
                    )
                )
        for k, v in node.items():
            if isinstance(v, (dict, list)) and k not in _NOT_WALKED:
                chain.append((node, k))
                _walk(doc, v, depth + 1, chain, out, cap)
                chain.pop()
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (dict, list)):
                chain.append((node, i))
                _walk(doc, v, depth + 1, chain, out, cap)
                chain.pop()


def _embedded_lws_refusal(chain: Chain, kind: str) -> tuple[Finding, ...]:
    """KV206 (:func:`kvlint.workloads.lws.size_findings`) when the nearest LeaderWorkerTemplate enclosing a pod
    template the structural walk found has a size LWS refuses or kvlint does not size: an operator object that
    embeds one (llm-d's DisaggregatedSet ``roles[].spec.leaderWorkerTemplate``, llmaz's Service
    ``spec.workloadTemplate``) creates a LeaderWorkerSet from it, which the API server or LWS's webhook rejects.
    The template is the mapping holding the ``leaderTemplate``/``workerTemplate`` key on the way, with a
    ``size``, or the value of a ``leaderWorkerTemplate`` key; the replicas are those of the mapping holding it.
    Empty when there is none or its size is fine. The message says the LeaderWorkerSet is the ``kind``'s."""
    found: tuple[Finding, ...] = ()
    for i in range(len(chain) - 1, -1, -1):
        parent, key = chain[i]
        if not isinstance(parent, dict):
            continue
        if key in ("leaderTemplate", "workerTemplate") and "size" in parent:
            outer = chain[i - 1][0] if i > 0 else None
            found = size_findings(parent, outer.get("replicas") if isinstance(outer, dict) else None)
            break
        if key == "leaderWorkerTemplate" and isinstance(parent.get(key), dict):
            found = size_findings(parent[key], parent.get("replicas"))
            break
    whose = f" (the LeaderWorkerSet the {kind} makes from this template)"
    return tuple(replaced(f, message=f.message + whose) for f in found)


#: The operator kinds with their own readers, ``(API group, kind) -> reader`` (each in
#: :data:`kvlint.kinds.WORKLOAD_KINDS`, as tests check).
CRD_READERS: dict[tuple[str, str], Callable[[Document], list[Workload]]] = {
    ("kubeai.org", "Model"): kubeai_models,
    ("kaito.sh", "Workspace"): workspace_workloads,
    ("kaito.sh", "InferenceSet"): workspace_workloads,
    ("production-stack.vllm.ai", "VLLMRuntime"): vllm_runtime_workloads,
    ("apps.nvidia.com", "NIMService"): nim_service_workloads,
    ("apps.nvidia.com", "NIMPipeline"): nim_pipeline_workloads,
    ("workloads.x-k8s.io", "RoleBasedGroup"): rbg_workloads,
    ("workloads.x-k8s.io", "RoleBasedGroupSet"): rbg_set_workloads,
    ("workload.serving.volcano.sh", "ModelServing"): model_serving_workloads,
    ("workload.serving.volcano.sh", "ModelBooster"): model_booster_workloads,
    ("nvidia.com", "DynamoGraphDeployment"): dynamo_workloads,
    ("nvidia.com", "DynamoComponentDeployment"): dynamo_component_deployment_workloads,
    ("inference.sagemaker.aws.amazon.com", "InferenceEndpointConfig"): hyperpod_workloads,
    ("ray.io", "RayService"): rayservice_workloads,
}
_CRD_KINDS = frozenset(kind for _, kind in CRD_READERS)


def _crd_workloads(doc: Document) -> list[Workload]:
    """Synthetic workloads for the operator CRDs kvlint understands (:data:`CRD_READERS`; empty for other
    kinds)."""
    kind = doc.kind
    if kind not in _CRD_KINDS:
        return []
    api = str(doc.data.get("apiVersion", ""))
    # the group is what precedes the first "/" (an apiVersion that starts with "kaito.sh/", say)
    reader = CRD_READERS.get((api.split("/", 1)[0], kind)) if "/" in api else None
    return reader(doc) if reader is not None else []


#: At most this many refused runtimes are named with their reason in an OME selection note (a directory of
#: OME's per-model runtimes holds dozens, each refused for its architecture), and at most this many of the
#: runtimes that match too (ranked after the pick, or tied with it); the others are counted.
_NAMED_REFUSALS = 5


def _named_few(labels: Sequence[str]) -> str:
    """The first :data:`_NAMED_REFUSALS` of ``labels``, and how many more."""
    more = len(labels) - _NAMED_REFUSALS
    return ", ".join(labels[:_NAMED_REFUSALS]) + (f" and {more} more" if more > 0 else "")


def _selection_text(sel: Selection, model_doc: Document) -> str:
    """Why OME picks ``sel.picked`` (or nothing): the model's matching fields, the runtimes that matched too
    (with their score), and why others were refused, at most :data:`_NAMED_REFUSALS` of them named, the rest
    counted: with a pick, those whose formats are for other models only counted; without, those refused for
    another reason than their formats named first."""
    spec = get_in(model_doc.data, "spec")
    fields = []
    for key in ("modelArchitecture", "quantization", "modelParameterSize"):
        v = get_in(spec, key)
        if v is not None:
            fields.append(f"{key} {v}")
    for key, label in (("modelFormat", "format"), ("modelFramework", "framework")):
        named = get_in(spec, key)
        if isinstance(named, dict):
            fields.append(f"{label} {named.get('name')} {named.get('version') or ''}".rstrip())
    model = f"{model_doc.kind} '{model_doc.name}'" + (f" ({', '.join(fields)})" if fields else "")
    losers = [
        f"{c.label} (score {c.score})"
        for c in sel.candidates
        if c.why_not is None and (sel.picked is None or c.doc is not sel.picked.doc)
    ]
    refused = sorted(
        (c for c in sel.candidates if c.why_not is not None),
        key=lambda c: c.other_format,
    )
    parts = []
    if losers:
        parts.append(f"also matching, ranked after it: {_named_few(losers)}")
    other_formats = [c for c in refused if c.other_format]
    if sel.picked is not None:
        # with a pick, the runtimes made for other models are only counted
        refused = [c for c in refused if c not in other_formats]
    if refused:
        named_ones = "; ".join(f"{c.label}: {c.why_not}" for c in refused[:_NAMED_REFUSALS])
        more = len(refused) - _NAMED_REFUSALS
        tail = f"; and {more} more" if more > 0 else ""
        parts.append(f"refused among the inputs: {named_ones}{tail}")
    if sel.picked is not None and other_formats:
        n = len(other_formats)
        parts.append(
            f"{n} other runtime{'s' if n > 1 else ''} among the inputs support{'' if n > 1 else 's'} other model formats"
        )
    return model + ("; " + "; ".join(parts) if parts else "")


def _described(catalog: OmeCatalog, sel: Selection, model_doc: Document) -> tuple[str, str]:
    """``(_selection_text(sel, model_doc), the tied runtimes named)``, made once per selection of a run
    (:attr:`OmeCatalog.described`): the services of one model share their selection, and its text made for each
    of them labelled every runtime once per service (1,500 services among 1,500 runtimes: 4.5 million labels,
    23 s)."""
    found = catalog.described.get(id(sel))
    if found is None:
        found = (_selection_text(sel, model_doc), _named_few([c.label for c in sel.tied]))
        catalog.described[id(sel)] = found
    return found


def _unplanned(isvc: Document, note: Finding) -> Workload:
    """The OME InferenceService ``isvc`` with no engine container, carrying ``note`` (why no runtime was read)."""
    ps = LDict(loc=note.loc)
    ps["containers"] = LList([], loc=note.loc)
    return Workload(isvc, isvc.kind, isvc.name, isvc.namespace, ps, "spec.engine", findings=(note,))


def ome_isvc_workloads(isvc: Document, catalog: OmeCatalog) -> tuple[list[Workload], Document | None] | None:
    """The engine pods of an OME InferenceService whose BaseModel and runtime are among the inputs: the runtime
    it names (``spec.runtime.name``) or, naming none, the one OME auto-selects
    (:func:`kvlint.workloads.ome_select.select_runtime`), with the runtime's ``engineConfig``/``decoderConfig``
    under the service's ``engine``/``decoder`` (the service's fields winning, sgl-project/ome@17b77eda
    ``pkg/controller/v1beta1/inferenceservice/utils/merging.go`` ``MergeEngineSpec``, ``MergeDecoderSpec``),
    ``MODEL_PATH`` from the model's ``storage.path`` (``components/base.go`` ``UpdateEnvVariables``) and
    ``PARALLELISM_SIZE`` (:func:`kvlint.workloads.ome.injected_env`); the model is the ``hf://`` hub id of its
    ``storage.storageUri``. A note says which runtime and why; when no runtime among the inputs is selectable a
    single warning says OME would refuse the service unless the cluster has another runtime.

    Returns ``(workloads, runtime)`` (runtime None when nothing was picked), or None when the BaseModel is not
    among the inputs, or the runtime the service names is not (read as before)."""
    model_doc = catalog.base_model(isvc)
    if model_doc is None or not catalog.runtimes:
        return None
    mspec = get_in(model_doc.data, "spec")
    mspec = mspec if isinstance(mspec, dict) else {}
    named = get_in(isvc.data, "spec", "runtime", "name")
    anchor = loc_of(get_in(isvc.data, "spec"), "model") or isvc.loc
    if isinstance(named, str) and named:
        rt = catalog.named_runtime(isvc, named)
        if rt is None:
            return None
        why = f"the runtime this InferenceService names (spec.runtime.name) for {model_doc.kind} '{model_doc.name}'"
        severity: Literal["info", "warning"] = "info"
        refused = runtime_refusal(rt, mspec, isvc)
        if refused is not None:
            # OME validates a named runtime without autoSelect or score (selector.go ValidateRuntime)
            why += f"; but OME refuses it (RuntimeValidationError, the service is not deployed): {refused}"
            severity = "warning"
    else:
        sel = catalog.select(isvc, model_doc)
        if sel.over_budget:
            note = Finding(
                "KV503",
                f"kvlint did not select this OME InferenceService's runtime for {model_doc.kind} "
                f"'{model_doc.name}': the inputs' services and runtimes make more than {MAX_COMPARISONS:,} "
                "comparisons of a model with a runtime's supported formats, kvlint's limit per run, so its engine "
                "was not read",
                anchor,
                fix="lint fewer InferenceServices or runtimes together, or name the runtime in spec.runtime.name",
                severity="warning",
            )
            return [_unplanned(isvc, note)], None
        if sel.picked is None:
            note = Finding(
                "KV503",
                f"no ServingRuntime or ClusterServingRuntime among the inputs is one OME would select for "
                f"{_described(catalog, sel, model_doc)[0]}: OME refuses to deploy this InferenceService "
                "(RuntimeSelectionError) unless the cluster has another runtime that matches, so kvlint "
                "cannot read its engine",
                anchor,
                fix="add a runtime whose supportedModelFormats (modelArchitecture, quantization, format, framework), "
                "modelSizeRange and autoSelect match the model, or name one in spec.runtime.name",
                severity="warning",
            )
            return [_unplanned(isvc, note)], None
        rt = sel.picked.doc
        scope = "a namespaced runtime, preferred over cluster ones, " if not sel.picked.cluster else ""
        why = (
            f"the runtime OME auto-selects ({scope}score {sel.picked.score}) for "
            f"{_described(catalog, sel, model_doc)[0]}; kvlint compared only the runtimes among the inputs"
        )
        severity = "info"
        if sel.tied:
            names = _described(catalog, sel, model_doc)[1]
            why += (
                f". Ambiguous: {names} match as well, with the same score and size range, and OME picks by name "
                "alone (alphabetical order)"
            )
            severity = "warning"
    rspec = get_in(rt.data, "spec")
    rspec = rspec if isinstance(rspec, dict) else {}
    ispec = get_in(isvc.data, "spec")
    ispec = ispec if isinstance(ispec, dict) else {}
    spec = LDict(loc=loc_of(rt.data, "spec") or rt.loc)
    for src, dst in (("engine", "engineConfig"), ("decoder", "decoderConfig")):
        base, over = rspec.get(dst), ispec.get(src)
        if isinstance(base, dict) or isinstance(over, dict):
            spec[dst] = strategic_merge(
                base if isinstance(base, dict) else {}, over if isinstance(over, dict) else {}
            )
    data = LDict(loc=isvc.loc)
    for k in ("apiVersion", "kind", "metadata"):
        if k in isvc.data:
            data[k] = isvc.data[k]
    data["spec"] = spec
    merged = Document(isvc.path, isvc.index, data, isvc.loc)
    uri = str(get_in(mspec, "storage", "storageUri") or "")
    path = get_in(mspec, "storage", "path")
    hub = model_from_uri(uri)
    note = Finding(
        "KV504",
        f"kvlint sized this OME InferenceService on {rt.kind} '{rt.name}', {why}",
        anchor,
        fix="nothing to change if that is the runtime meant; otherwise name it in spec.runtime.name",
        severity=severity,
    )
    out: list[Workload] = []
    for w in _structural(merged):
        if ".routerConfig." in f".{w.path}." or not w.path.startswith(
            ("spec.engineConfig", "spec.decoderConfig")
        ):
            continue
        gpus = _declared_gpus(w)
        count = digits(gpus.split(": ", 1)[1].strip()) if gpus else None
        env = injected_env(merged, w, count) if count else []
        if isinstance(path, str) and path:
            env = [("MODEL_PATH", path, loc_of(get_in(mspec, "storage"), "path") or model_doc.loc), *env]
        pod_spec = with_ome_env(w.pod_spec, env) if env else w.pod_spec
        replicas = int_or_none(get_in(spec, w.path.split(".")[1], "minReplicas"))
        w = replaced(
            w,
            doc=isvc,
            pod_spec=pod_spec,
            derived_model=hub,
            model_storage=str(path) if path and not hub else None,
            replicas=w.replicas if w.replicas is not None else replicas,
            findings=(note,) if not out else (),
        )
        out.append(w)
    if not out:
        return None
    return link_leaders(out), rt
