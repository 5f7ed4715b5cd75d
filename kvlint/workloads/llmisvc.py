"""KServe ``LLMInferenceService`` (serving.kserve.io/v1alpha1, v1alpha2): the pods the controller builds from
the service and the ``LLMInferenceServiceConfig`` presets under it.

What the controller does (kserve/kserve ``pkg/controller/v1alpha2/llmisvc/config_merge.go``
``combineBaseRefsConfig`` and ``ReplaceVariables``, ``workload_single_node.go``, ``workload_multi_node.go``,
``pkg/apis/serving/v1alpha2/llm_inference_service_types_func.go``), restated:

1. It picks the well-known workload presets from the shape of the service (with its ``baseRefs`` merged
   in): with ``prefill``, ``kserve-config-llm-prefill-template`` (or ``...-prefill-worker-data-parallel``
   when ``prefill.worker`` is set with data parallelism) and ``kserve-config-llm-decode-template`` (or
   ``...-decode-worker-data-parallel``); without, ``kserve-config-llm-template`` (or
   ``...-worker-data-parallel``). Pipeline-parallel presets are not shipped.
2. It merges, in order, those presets, then the service's ``baseRefs``, then the service itself (strategic
   merge patch: containers by name, env by name; :mod:`kvlint.workloads.merge`).
3. It renders every string of the result as a Go template with the service as data (``{{ .Spec.Model.Name
   }}``, ``{{ or .Spec.Parallelism.Data 1 }}``; :mod:`kvlint.workloads.gotemplate`); ``spec.model.name``
   defaults to the service's name.
4. It mounts the model of ``spec.model.uri`` at ``/mnt/models`` (the presets run ``vllm serve /mnt/models``).
5. ``template`` (and ``prefill.template``) is a Deployment's pod, or, with ``worker``, the leader of a
   LeaderWorkerSet whose workers run ``worker``; the group size is ``parallelism.data / dataLocal`` (data
   parallel) or ``parallelism.pipeline``.

kvlint takes the presets from its inputs when a ``LLMInferenceServiceConfig`` of that name is among them
(by exact name, else by the ``config-llm-...`` suffix an installation prefixes), else from its copies of
KServe's presets (``kvlint/data/kserve``, SOURCE.md there), and says so for a ``baseRefs`` entry that is
not among the inputs. The model is ``hf://ORG/NAME`` of ``spec.model.uri``; for other URIs (``pvc://``,
``oci://``, ``s3://``) ``spec.model.name`` is taken as the hub id when it has that shape, and the
assumption is stated (KV504).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.resources
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, Workload
from kvlint.values import yaml_text
from kvlint.workloads.base import (
    MODEL_ANNOTATION,
    get_in,
    int_or_none,
    ldict,
    llist,
    make_workload,
    str_map,
    synthetic_workload,
)
from kvlint.workloads.gotemplate import UNKNOWN, render
from kvlint.workloads.hardwareprofile import (
    MAIN_CONTAINER,
    PROFILE_NAME,
    HardwareProfiles,
    apply_llmisvc_profile,
    llmisvc_profile_skipped,
)
from kvlint.workloads.merge import relocate, strategic_merge

__all__ = ["PRESETS", "llmisvc_workloads", "model_from_uri", "preset_names"]

_KINDS = ("LLMInferenceService", "LLMInferenceServiceConfig")

#: The well-known workload presets kvlint ships (kvlint/data/kserve/<suffix>.yaml).
PRESETS = (
    "config-llm-template",
    "config-llm-worker-data-parallel",
    "config-llm-decode-template",
    "config-llm-decode-worker-data-parallel",
    "config-llm-prefill-template",
    "config-llm-prefill-worker-data-parallel",
)
_PREFIX = "kserve-"
#: Where KServe mounts the model of ``spec.model.uri`` (``constants.DefaultModelLocalMountPath``).
MODEL_MOUNT = "/mnt/models"


@functools.cache
def _builtin(suffix: str) -> LDict | None:
    """The shipped copy of KServe's preset ``suffix`` (positions in the copy; relocated when used)."""
    from kvlint.load import load_text

    try:
        text = importlib.resources.files("kvlint.data").joinpath(f"kserve/{suffix}.yaml").read_text("utf-8")
    except (OSError, FileNotFoundError):
        return None
    docs = load_text(text, f"kvlint/data/kserve/{suffix}.yaml").documents
    return docs[0].data if docs and isinstance(docs[0].data, LDict) else None


def model_from_uri(uri: str, *, oci: bool = False) -> str | None:
    """The hub id of a KServe ``hf://ORG/NAME[:REVISION]`` storage URI; with ``oci``, an ``oci://`` model image
    (a modelcar) as it is, which model resolution reads by the model name the image carries
    (:func:`kvlint.models.resolve.oci_named_model`); else None."""
    if uri.startswith("hf://"):
        parts = uri[5:].split("/")
        if len(parts) >= 2 and parts[0] and parts[1]:
            return f"{parts[0]}/{parts[1]}".split(":", 1)[0]
    if oci and uri.startswith("oci://") and len(uri) > len("oci://"):
        return uri
    return None


def _parallelism(spec: Any) -> tuple[bool, bool, int | None]:
    """(data parallel, pipeline parallel, LeaderWorkerSet size) of a ``parallelism`` block (``GetSize``)."""
    p = spec.get("parallelism") if isinstance(spec, Mapping) else None
    if not isinstance(p, Mapping):
        return False, False, None
    data, local, pipe = (int_or_none(p.get(k)) or 0 for k in ("data", "dataLocal", "pipeline"))
    dp = data > 0 or local > 0
    pp = pipe > 0
    if dp:
        return True, pp, max(max(data, 1) // max(local, 1), 1)
    return False, pp, pipe if pp else None


def preset_names(spec: Mapping[str, Any]) -> list[str]:
    """The well-known workload presets (suffixes) the controller applies to a service of this shape."""
    out: list[str] = []
    prefill = spec.get("prefill")
    if isinstance(prefill, Mapping):
        if prefill.get("worker") is None:
            out.append("config-llm-prefill-template")
        else:
            dp, pp, _ = _parallelism(prefill)
            if dp:
                out.append("config-llm-prefill-worker-data-parallel")
            elif pp:
                out.append("config-llm-prefill-worker-pipeline-parallel")
        base = "config-llm-decode"
    else:
        base = "config-llm"
    if spec.get("worker") is None:
        out.append(f"{base}-template")
    else:
        dp, pp, _ = _parallelism(spec)
        if dp:
            out.append(f"{base}-worker-data-parallel")
        elif pp:
            out.append(f"{base}-worker-pipeline-parallel")
    return out


class _Configs:
    """The ``LLMInferenceServiceConfig`` documents among the inputs, by name."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.by_name: dict[str, list[Document]] = {}
        for d in docs:
            if d.kind == "LLMInferenceServiceConfig" and isinstance(d.data, dict) and d.name:
                self.by_name.setdefault(d.name, []).append(d)

    def find(self, name: str, namespace: str | None, *, suffix: bool = False) -> Document | None:
        cands = self.by_name.get(name, [])
        if not cands and suffix:
            tail = name[len(_PREFIX) :] if name.startswith(_PREFIX) else name
            cands = [d for n, ds in self.by_name.items() if n.endswith(tail) for d in ds]
        same = [d for d in cands if d.namespace == namespace] or [d for d in cands if d.namespace is None]
        pick = same or cands
        return pick[0] if pick else None


def config_index(docs: Sequence[Document]) -> _Configs:
    """The ``LLMInferenceServiceConfig`` documents of ``docs`` by name, for :func:`llmisvc_workloads`."""
    return _Configs(docs)


def _refs(doc: Document, spec: LDict, configs: _Configs, standalone: bool) -> list[tuple[str, bool]]:
    """The configs merged under a service, in order: (name, from ``baseRefs``): the well-known presets of
    the service's shape with its baseRefs resolved (config_merge.go ``resolvedSpec``), then the baseRefs."""
    base_refs = spec.get("baseRefs")
    user_refs = (
        [str(r.get("name")) for r in base_refs if isinstance(r, dict) and r.get("name")]
        if isinstance(base_refs, list)
        else []
    )
    # what is "enabled": the service with its baseRefs (config_merge.go resolvedSpec)
    resolved: Any = spec
    for name in user_refs:
        cdoc = configs.find(name, doc.namespace)
        cspec = get_in(cdoc.data, "spec") if cdoc else None
        if isinstance(cspec, dict):
            resolved = strategic_merge(resolved, cspec)
    refs: list[tuple[str, bool]] = []
    for suffix in preset_names(resolved):
        if standalone and doc.name.endswith(suffix):
            continue  # a well-known preset linted on its own: not merged under itself
        refs.append((_PREFIX + suffix, False))
    return refs + [(n, True) for n in user_refs]


def llmisvc_consumed(doc: Document, configs: _Configs) -> set[int]:
    """The ids of the config documents the ``LLMInferenceService`` ``doc`` consumes: those
    :func:`llmisvc_workloads` returns (``standalone`` False), without building its workloads."""
    svc = doc.data
    spec = svc.get("spec") if isinstance(svc, dict) else None
    if not isinstance(spec, LDict):
        return set()
    consumed: set[int] = set()
    for name, is_user in _refs(doc, spec, configs, False):
        cdoc = configs.find(name, doc.namespace, suffix=not is_user)
        if cdoc is not None:
            consumed.add(id(cdoc))
    return consumed


def llmisvc_workloads(
    doc: Document,
    docs: Sequence[Document],
    *,
    standalone: bool = False,
    configs: _Configs | None = None,
    profiles: HardwareProfiles | None = None,
) -> tuple[list[Workload], set[int]]:
    """The pods of one ``LLMInferenceService``, and the ids of the config documents it consumed.

    Returns one workload per pod template the controller creates: ``spec.template`` (decode / main; the
    leader when ``spec.worker`` is set), ``spec.worker``, ``spec.prefill.template``, ``spec.prefill.worker``,
    each with the model of the model URI as its ``derived_model`` when it names a hub model (a ``kvlint.io/model``
    annotation wins), the image source when a shipped preset chose the image, the LeaderWorkerSet group
    size from ``parallelism``, and findings for what could not be followed. Never raises.

    ``standalone``: ``doc`` is an ``LLMInferenceServiceConfig`` that no service among the inputs uses; it is
    read as KServe would merge it under a service of the same shape (the well-known presets below it), its
    ``{{ ... }}`` values rendered from itself where it sets them, and a finding says it is a preset.

    ``configs``: the config documents of ``docs`` indexed once (:func:`config_index`), when the caller reads
    many services of the same inputs (indexing them per service was quadratic in the number of documents).

    ``profiles``: the OpenShift AI hardware profiles among the inputs; the one the service's annotation names
    is applied to its ``spec`` as the admission webhook does, before the controller merges the presets under
    it (:func:`kvlint.workloads.hardwareprofile.apply_llmisvc_profile`).
    """
    svc = doc.data
    spec = svc.get("spec") if isinstance(svc, dict) else None
    if not isinstance(spec, LDict):
        return [], set()
    if configs is None:
        configs = _Configs(docs)
    findings: list[Finding] = []
    consumed: set[int] = set()
    anchor = loc_of(spec, "template") or loc_of(svc, "spec") or doc.loc
    profile = profiles.named_by(doc) if profiles and not standalone else None
    refusal = profiles.refusal(profile) if profiles is not None and profile is not None else None
    if refusal is not None:
        # the webhook resolves the profile first and refuses the service when it cannot parse it: no pod runs
        empty = ldict(anchor, [("containers", llist(anchor, []), anchor)])
        refused = synthetic_workload(doc, empty, "spec.template", replicas=None)
        return [dataclasses.replace(refused, findings=(refusal,))], set()
    unprofiled = False  # the profile named is among the inputs, and the webhook skips it
    if profile is not None and llmisvc_profile_skipped(spec):
        unprofiled = True
        findings.append(_profile_skipped(doc, spec, profile, anchor))
    elif profile is not None:
        # OpenShift AI's webhook writes a named hardware profile into the service at admission
        spec = apply_llmisvc_profile(spec, profile)
    refs = _refs(doc, spec, configs, standalone)
    if standalone:
        findings.append(_preset_note(doc))

    merged: Any = LDict(loc=anchor)
    builtin_used: list[str] = []
    imaged: set[tuple[str, str]] = set()  # (role, template key) whose image a user-written layer sets
    for name, is_user in refs:
        cdoc = configs.find(name, doc.namespace, suffix=not is_user)
        fresh = False  # cspec is a copy made here (a relocated built-in preset), given away to the merge
        if cdoc is not None:
            consumed.add(id(cdoc))
            cspec = get_in(cdoc.data, "spec")
            imaged |= _images_set(cspec)
        elif not is_user and name[len(_PREFIX) :] in PRESETS:
            raw = _builtin(name[len(_PREFIX) :])
            cspec = relocate(raw.get("spec"), anchor) if raw is not None else None
            fresh = True
            builtin_used.append(name)
        else:
            cspec = None
            where = loc_of(spec, "baseRefs") or anchor
            if is_user:
                findings.append(
                    Finding(
                        "KV503",
                        f"baseRefs names the LLMInferenceServiceConfig '{name}', which is not among the inputs: "
                        "what it sets (image, command, engine arguments, resources) is not known to kvlint",
                        where,
                        fix=f"lint the LLMInferenceServiceConfig '{name}' together with this service "
                        "(name both files, or the directory holding them)",
                        severity="warning",
                    )
                )
            else:
                findings.append(
                    Finding(
                        "KV503",
                        f"KServe would apply its preset '{name}', which kvlint does not ship and which is not "
                        "among the inputs: the engine command of these pods is not known",
                        where,
                        fix=f"lint the installation's LLMInferenceServiceConfig '{name}' together with this service",
                        severity="warning",
                    )
                )
        # merged is always this function's own tree: each merge reuses it, and copies only what it takes
        # from the inputs (a built-in preset is copied once, by relocate; a merge copied it again at each
        # layer above it)
        if isinstance(cspec, dict):
            merged = strategic_merge(merged, cspec, reuse_base=True, reuse_patch=fresh)
    merged = strategic_merge(merged, spec, reuse_base=True)
    imaged |= _images_set(spec)

    # Go-template values, with the service as data (spec.model.name defaults to the service's name)
    data = _template_data(svc, doc, default_name=not standalone)
    merged = _render_all(merged, data, missing_unknown=standalone)

    model_id, model_note = _model(spec, doc)
    if model_note is not None:
        findings.append(model_note)
    image_source = (
        f"KServe's LLMInferenceServiceConfig preset{'' if len(builtin_used) == 1 else 's'} "
        + ", ".join(builtin_used)
        + " (kvlint ships the copy "
        "of kserve@282da78; the image an installation runs is set by its KServe release)"
        if builtin_used
        else None
    )

    out: list[Workload] = []
    managed_dra = _managed_dra(doc)
    for prefix, role_spec in (("spec", merged), ("spec.prefill", merged.get("prefill"))):
        if not isinstance(role_spec, LDict):
            continue
        replicas = int_or_none(role_spec.get("replicas"))
        _, _, size = _parallelism(role_spec)
        tmpl, worker = role_spec.get("template"), role_spec.get("worker")
        leader_w: Workload | None = None
        for key, ps in (("template", tmpl), ("worker", worker)):
            if not isinstance(ps, LDict):
                continue
            role = None
            if isinstance(worker, LDict):
                role = "leader" if key == "template" else "worker"
            w = make_workload(
                doc,
                ps,
                [],
                path=f"{prefix}.{key}",
                replicas=replicas,
                role=role,
                group_size=size if isinstance(worker, LDict) else None,
            )
            if unprofiled:  # (so the GPU rules do not say that the GPUs may come from the profile)
                w = _with(w, annotations={k: v for k, v in w.annotations.items() if k != PROFILE_NAME})
            w = _with(
                w,
                findings=tuple(findings),
                leader=leader_w if key == "worker" else None,
                derived_model=None if MODEL_ANNOTATION in w.annotations else model_id or None,
                image_source=None if (prefix, key) in imaged else image_source,
                gpu_source=managed_dra,
            )
            if key == "template":
                leader_w = w
            out.append(w)
    if not out:
        why = "it declares no pod template and no preset supplies one"
        out.append(_empty(doc, anchor, tuple(findings), why))
    return out, consumed


#: The annotations of KServe's managed Dynamic Resource Allocation on an LLMInferenceService
#: (kserve/kserve pkg/constants/constants.go ``ManagedDRADeviceClassAnnotationKey`` and
#: ``ManagedDRADeviceCountAnnotationKey``, @0c5166a2dba2b4c731f9893fb9c484587890b33f).
MANAGED_DRA_CLASS = "serving.kserve.io/exp-dra-device-class"
MANAGED_DRA_COUNT = "serving.kserve.io/exp-dra-device-count"


def _managed_dra(doc: Document) -> str | None:
    """What KServe's managed DRA requests for the pods of an LLMInferenceService, in words, or None without it.

    With ``serving.kserve.io/exp-dra-device-class`` set, the controller creates a ResourceClaimTemplate with one
    device request of that class (``exp-dra-device-count`` devices, default 1) and adds its claim to the pod and
    to its first container, or the one ``exp-dra-container-name`` names (kserve/kserve
    pkg/controller/v1alpha2/llmisvc/managed_dra.go ``expectedManagedDRATemplate``, ``injectManagedDRA``,
    ``targetContainerForDRA`` @0c5166a2dba2b4c731f9893fb9c484587890b33f): the container requests its GPUs through
    that claim, not ``resources.limits`` (:attr:`kvlint.types.Workload.gpu_source`). The count is read as KServe's
    ``ManagedDRADeviceCount`` reads it (``strconv.Atoi`` of the trimmed value, at least 1; its validation refuses
    anything else, which the words then say)."""
    annotations = get_in(doc.data, "metadata", "annotations")
    if not isinstance(annotations, Mapping):
        return None
    device_class = str(annotations.get(MANAGED_DRA_CLASS) or "").strip()
    if not device_class:
        return None
    raw = str(annotations.get(MANAGED_DRA_COUNT) or "").strip()
    # beyond 19 significant digits Atoi's int64 is out of range (an error KServe refuses); Python's int() refuses
    # strings of over 4,300 digits with a ValueError, which took the whole file's (the review's) check down
    atoi = _GO_ATOI.fullmatch(raw) is not None and len(raw.lstrip("+-").lstrip("0")) <= 19
    count = int(raw) if atoi else 0
    if not raw:
        count = 1
    if not 1 <= count < 2**63:
        return (
            f"KServe's managed Dynamic Resource Allocation ({MANAGED_DRA_CLASS}: {device_class}; "
            f"{MANAGED_DRA_COUNT} {yaml_text(raw)} is not a whole number from 1, which KServe refuses)"
        )
    devices = "1 device" if count == 1 else f"{count} devices"
    return f"KServe's managed Dynamic Resource Allocation ({MANAGED_DRA_CLASS}: {device_class}, {devices})"


#: What Go's ``strconv.Atoi`` reads (KServe's ``ManagedDRADeviceCount``): an optional sign and decimal digits
_GO_ATOI = re.compile(r"[+-]?[0-9]+")


def _images_set(spec: Any) -> set[tuple[str, str]]:
    """The (role prefix, template key) pairs whose containers an object written by the user gives an image."""
    out: set[tuple[str, str]] = set()
    for prefix, part in (("spec", spec), ("spec.prefill", get_in(spec, "prefill"))):
        for key in ("template", "worker"):
            cs = get_in(part, key, "containers")
            if isinstance(cs, list) and any(isinstance(c, dict) and c.get("image") for c in cs):
                out.add((prefix, key))
    return out


def _with(w: Workload, **changes: Any) -> Workload:
    from kvlint.fastinit import replaced

    return replaced(w, **changes)


def _empty(doc: Document, loc: Loc | None, findings: tuple[Finding, ...], why: str) -> Workload:
    ps = LDict(loc=loc)
    ps["containers"] = LList([], loc=loc)
    f = Finding(
        "KV503",
        f"kvlint found no engine container for this {doc.kind}: {why}",
        loc,
        fix="lint the LLMInferenceServiceConfig presets it uses together with it",
        severity="warning",
    )
    return Workload(doc, doc.kind, doc.name, doc.namespace, ps, "spec", findings=(*findings, f))


def _profile_skipped(doc: Document, spec: Any, profile: Document, anchor: Loc | None) -> Finding:
    """KV405's note on an LLMInferenceService whose hardware profile (among the inputs) the webhook does not
    apply: its ``spec.template`` has containers and none is named ``main``
    (:func:`kvlint.workloads.hardwareprofile.llmisvc_profile_skipped`)."""
    template = spec.get("template") if isinstance(spec, dict) else None
    containers = template.get("containers") if isinstance(template, dict) else None
    names = [str(c.get("name")) for c in containers or [] if isinstance(c, dict)]
    return Finding(
        "KV405",
        f"its {PROFILE_NAME} annotation names hardware profile '{profile.name}', but OpenShift AI's webhook "
        f"applies nothing of it: spec.template's containers ({', '.join(names)}) have none named '{MAIN_CONTAINER}', "
        "the one the profile's resources go to (odh-model-controller applyHardwareProfileLLMISVC skips the "
        "profile with a warning event), so the pods get neither its GPUs nor its node scheduling",
        loc_of(template, "containers") or anchor,
        fix=f"name the engine container '{MAIN_CONTAINER}' (the name KServe's presets give it), or request the GPUs "
        "in its resources.limits",
        severity="warning",
    )


def _preset_note(doc: Document) -> Finding:
    """The finding of an ``LLMInferenceServiceConfig`` linted without a service that uses it."""
    return Finding(
        "KV502",
        f"LLMInferenceServiceConfig '{doc.name}' is a preset: KServe merges it under the LLMInferenceServices "
        "that name it and fills its {{ ... }} values (model, parallelism) from them; none among the inputs "
        "does, so it was read as merged over KServe's presets for its shape, and what the service sets "
        "(model, GPUs) is not known here",
        loc_of(doc.data, "spec") or doc.loc,
        fix="lint the LLMInferenceServices that use this preset together with it",
        severity="info",
    )


def _template_data(svc: Any, doc: Document, *, default_name: bool = True) -> dict[str, Any]:
    data = {k: v for k, v in svc.items()} if isinstance(svc, dict) else {}
    spec = dict(data.get("spec") or {}) if isinstance(data.get("spec"), dict) else {}
    model = dict(spec.get("model") or {}) if isinstance(spec.get("model"), dict) else {}
    if not model.get("name") and default_name:
        model["name"] = doc.name  # the defaulting webhook sets spec.model.name to the service's name
    spec["model"] = model
    data["spec"] = spec
    meta = dict(data.get("metadata") or {}) if isinstance(data.get("metadata"), dict) else {}
    if default_name:
        meta.setdefault("namespace", doc.namespace or "default")
    data["metadata"] = meta
    return data


def _kv_transfer_config(spec: Any) -> Any:
    """KServe's ``kvTransferConfig``: "" when the service sets no ``kvCacheOffloading`` (otherwise a JSON
    argument kvlint does not rebuild)."""
    return "" if spec is None else UNKNOWN


def _shutdown_timeout(spec: Any, pre_stop: Any) -> Any:
    """KServe's ``shutdownTimeout``: max(0, grace - preStop - min(5, grace)), grace =
    ``terminationGracePeriodSeconds`` of the pod template, 60 when unset."""
    grace = int_or_none(spec.get("terminationGracePeriodSeconds")) if isinstance(spec, Mapping) else None
    grace = 60 if grace is None else grace
    if not isinstance(pre_stop, int):
        return UNKNOWN
    return max(0, grace - pre_stop - min(5, grace))


def _child_name(name: Any, suffix: Any) -> Any:
    """knative ``kmeta.ChildName`` for names that fit 63 characters (longer ones are hashed: not rebuilt)."""
    out = f"{name}{suffix}"
    return out if len(out) <= 63 else UNKNOWN


#: KServe's template functions (config_merge.go ``ReplaceVariables``).
_FUNCS: dict[str, Callable[..., Any]] = {
    "kvTransferConfig": _kv_transfer_config,
    "shutdownTimeout": _shutdown_timeout,
    "ChildName": _child_name,
}


def _render_all(node: Any, data: Any, *, missing_unknown: bool = False) -> Any:
    """Every string of ``node`` rendered as a Go template (positions kept): the mappings and lists in place,
    each string that holds ``{{`` replaced by its rendering (the others, and every other value, left as they
    are, not stored again)."""
    if isinstance(node, str):
        return render(node, data, funcs=_FUNCS, missing_unknown=missing_unknown)[0] if "{{" in node else node
    if isinstance(node, LDict):
        for k, v in node.items():  # (storing at a key that is there already: the mapping keeps its size)
            if isinstance(v, str):
                if "{{" in v:
                    node[k] = render(v, data, funcs=_FUNCS, missing_unknown=missing_unknown)[0]
            elif isinstance(v, (LDict, LList)):
                _render_all(v, data, missing_unknown=missing_unknown)
    elif isinstance(node, LList):
        for i, v in enumerate(node):
            if isinstance(v, str):
                if "{{" in v:
                    node[i] = render(v, data, funcs=_FUNCS, missing_unknown=missing_unknown)[0]
            elif isinstance(v, (LDict, LList)):
                _render_all(v, data, missing_unknown=missing_unknown)
    return node


def _model(spec: LDict, doc: Document) -> tuple[str | None, Finding | None]:
    model = spec.get("model")
    if not isinstance(model, dict):
        return None, None
    uri = str(model.get("uri") or "")
    name = str(model.get("name") or "")
    found = model_from_uri(uri)
    if found:
        return found, None
    if name.count("/") == 1 and " " not in name and not name.startswith(("/", ".")):
        where = loc_of(model, "name") or loc_of(spec, "model")
        scheme = uri.split("://", 1)[0] + "://" if "://" in uri else (uri or "no uri")
        return name, Finding(
            "KV504",
            f"the model is loaded from {uri or 'spec.model.uri'} ({scheme} storage kvlint cannot open); kvlint "
            f"assumed spec.model.name '{name}' is the Hugging Face id of the model stored there",
            where,
            fix="if the stored model is another one, set the kvlint.io/model annotation to its hub id",
            severity="info",
        )
    return model_from_uri(uri, oci=True), None


def labels_of(doc: Document) -> dict[str, str]:
    """The object's labels (for callers building related objects)."""
    return str_map(get_in(doc.data, "metadata", "labels"))
