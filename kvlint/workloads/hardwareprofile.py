"""OpenShift AI (Open Data Hub) hardware profiles: what the operator's admission webhook writes into an
InferenceService that names one.

Read from opendatahub-io/opendatahub-operator ``internal/webhook/hardwareprofile/mutating.go`` and
``api/infrastructure/v1/hardwareprofile_types.go`` at commit ba932ed93525b9d54a63576f22518d3b7a4a534f. The
webhook acts on an InferenceService (serving.kserve.io/v1beta1) with the annotation
``opendatahub.io/hardware-profile-name``; the profile is the ``HardwareProfile``
(``infrastructure.opendatahub.io``) of that name in the namespace of ``opendatahub.io/hardware-profile-namespace``,
else the InferenceService's own (``performHardwareProfileInjection``). Then (``applyHardwareProfileToWorkload``):

1. ``spec.predictor.nodeSelector`` and ``spec.predictor.tolerations`` are removed;
2. for each ``spec.identifiers`` entry, on ``spec.predictor.model.resources`` (only when the predictor has a
   ``model``): ``requests[identifier] = defaultCount`` and, when the profile gives a ``maxCount``,
   ``limits[identifier] = maxCount``, each only where the model does not already set that key
   (``applyIdentifiersToContainer``, ``applyIdentifiersToRequests``);
3. ``spec.scheduling.kueue.localQueueName`` set: the Kueue queue label only; else ``spec.scheduling.node``'s
   ``nodeSelector`` and ``tolerations`` replace the predictor's (``applyNodeSchedulingConfiguration``).

A profile that is not among the inputs is not guessed: the GPU rules say that a profile names the resources
(:func:`profile_reference`).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from kvlint.source import LDict, LList, loc_of
from kvlint.types import Document
from kvlint.values import as_list

__all__ = [
    "PROFILE_NAME",
    "PROFILE_NAMESPACE",
    "HardwareProfiles",
    "PROFILED_KINDS",
    "PROFILE_FIX",
    "MAX_PROFILE_IDENTIFIERS",
    "profile_clause",
    "apply_profile",
    "profile_reference",
]

PROFILE_NAME = "opendatahub.io/hardware-profile-name"
PROFILE_NAMESPACE = "opendatahub.io/hardware-profile-namespace"

#: The API group of the HardwareProfile the operator's webhook reads (infrav1; the older
#: dashboard.opendatahub.io profiles are the dashboard's own and are not applied by the webhook).
_GROUP = "infrastructure.opendatahub.io/"


#: The kinds the webhook applies profiles to that kvlint lints as serving workloads (mutating.go
#: ``isExpectedKind``; Notebooks are not serving engines).
PROFILED_KINDS = frozenset({"InferenceService", "LLMInferenceService"})


def profile_clause(kind: str, annotations: Any, namespace: str | None) -> str | None:
    """For KV405 and KV501 on a container that requests no GPU: the sentence saying that the object names an
    OpenShift AI hardware profile, whose identifiers the operator's webhook writes into its resources at
    admission (so the manifest alone does not show them); None when it names none."""
    ref = profile_reference(annotations, namespace) if kind in PROFILED_KINDS else None
    if ref is None:
        return None
    where = f" in namespace {ref[1]}" if ref[1] else ""
    return (
        f"its {PROFILE_NAME} annotation names hardware profile '{ref[0]}'{where}: OpenShift AI's webhook writes "
        "that profile's identifiers (such as nvidia.com/gpu) into its resources at admission, so the GPUs may "
        "come from the profile"
    )


PROFILE_FIX = (
    "lint the HardwareProfile with this object (kvlint applies it as the webhook does), or set the GPUs in "
    "resources.limits"
)


def profile_reference(annotations: Any, namespace: str | None) -> tuple[str, str | None] | None:
    """``(profile name, namespace or None)`` an object's annotations name for the webhook: the namespace
    annotation, else the object's own namespace; None without a name annotation."""
    if not isinstance(annotations, dict):
        return None
    name = annotations.get(PROFILE_NAME)
    if not isinstance(name, str) or not name.strip():
        return None
    ns = annotations.get(PROFILE_NAMESPACE)
    return name.strip(), (ns.strip() if isinstance(ns, str) and ns.strip() else namespace)


class HardwareProfiles:
    """The ``HardwareProfile`` documents (``infrastructure.opendatahub.io``) among the inputs, by name."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self._named: dict[str, list[Document]] = {}
        for d in docs:
            api = d.data.get("apiVersion") if isinstance(d.data, dict) else None
            if d.kind == "HardwareProfile" and isinstance(api, str) and api.startswith(_GROUP) and d.name:
                self._named.setdefault(d.name, []).append(d)

    def __bool__(self) -> bool:
        return bool(self._named)

    def find(self, name: str, namespace: str | None) -> Document | None:
        """The profile ``name`` of ``namespace`` (the first in input order); a profile or a service whose
        namespace the manifest leaves to ``kubectl -n`` matches any namespace."""
        cands = self._named.get(name, [])
        exact = [d for d in cands if d.namespace == namespace]
        loose = [d for d in cands if d.namespace is None or namespace is None]
        found = exact or loose
        return found[0] if found else None


#: The identifiers of a profile kvlint applies: the first ones, in the order written. [assumed] a profile lists a few
#: (CPU, memory, an accelerator or two; the CRD sets no maximum). Every InferenceService that names a profile gets
#: all its identifiers, so a profile of 4,000 identifiers named by 400 services (390 KB of YAML) made 1.6 million
#: resource entries to apply and check (77 s of CPU); past this bound the rest are not applied.
MAX_PROFILE_IDENTIFIERS = 64


def _copy(d: Any) -> LDict:
    """A shallow copy of a mapping that keeps its positions."""
    out = LDict(d, loc=loc_of(d))
    if isinstance(d, LDict):
        out.locs = dict(d.locs)
        out.key_locs = dict(d.key_locs)
    return out


def _quantity(value: Any) -> str | None:
    """An IntOrString count as the quantity string the webhook writes (``resource.Quantity.String``)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    return str(value).strip() or None


def apply_profile(pred: Any, profile: Document) -> LDict:
    """``spec.predictor`` as the webhook leaves it with ``profile`` applied (steps 1-3 of the module
    docstring; the first :data:`MAX_PROFILE_IDENTIFIERS` identifiers); what the profile adds carries the profile's
    positions. ``pred`` itself is not changed."""
    spec = profile.data.get("spec") if isinstance(profile.data, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    out = _copy(pred)
    for key in ("nodeSelector", "tolerations"):
        out.pop(key, None)
        out.locs.pop(key, None)
        out.key_locs.pop(key, None)
    listed = as_list(spec.get("identifiers"))[:MAX_PROFILE_IDENTIFIERS]
    identifiers = [i for i in listed if isinstance(i, dict) and i.get("identifier")]
    model = out.get("model")
    if identifiers and isinstance(model, dict):
        model = out["model"] = _copy(model)
        resources = model["resources"] = _copy(model.get("resources") or {})
        for section, field in (("requests", "defaultCount"), ("limits", "maxCount")):
            block = resources[section] = _copy(resources.get(section) or {})
            for ident in identifiers:
                key = str(ident["identifier"])
                value = _quantity(ident.get(field))
                if key in block or value is None:
                    continue
                block[key] = value
                where = loc_of(ident, field) or loc_of(ident)
                if where is not None:
                    block.locs[key] = where
                    block.key_locs[key] = where
    scheduling = spec.get("scheduling")
    scheduling = scheduling if isinstance(scheduling, dict) else {}
    kueue = scheduling.get("kueue")
    node = scheduling.get("node")
    if not (isinstance(kueue, dict) and kueue.get("localQueueName")) and isinstance(node, dict):
        for key in ("nodeSelector", "tolerations"):
            value = node.get(key)
            if value:
                out[key] = copy.copy(value) if not isinstance(value, (LDict, LList)) else value
                where = loc_of(node, key)
                if where is not None:
                    out.locs[key] = where
    return out
