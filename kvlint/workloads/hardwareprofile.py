"""OpenShift AI (Open Data Hub) hardware profiles: what the admission webhook writes into a serving object
that names one.

Read from opendatahub-io/odh-model-controller ``internal/webhook/serving/hardwareprofile/injector.go`` and
``resolver.go``, ``internal/webhook/serving/v1beta1/inferenceservice_webhook.go`` (``applyHardwareProfile``)
and ``internal/webhook/serving/v1alpha2/llminferenceservice_webhook.go`` (``applyHardwareProfileLLMISVC``) at
commit 57b43aad41aea718861b6c70b38a16794fc4ac8e: OpenShift AI moved the profile webhook of InferenceServices
and LLMInferenceServices there from opendatahub-operator (``internal/webhook/hardwareprofile/mutating.go``,
deactivated for them by #3777; the same kinds, ``isExpectedKind``). Those are the only serving kinds it
handles (Notebooks are the workbenches operator's; a Deployment or a StatefulSet naming a profile is not
changed by any webhook).

The object names the profile with the annotation ``opendatahub.io/hardware-profile-name``; the profile is the
``HardwareProfile`` (``infrastructure.opendatahub.io``) of that name in the namespace of
``opendatahub.io/hardware-profile-namespace``, else the object's own (``ProfileRef``). On CREATE (what a
manifest becomes) the webhook:

1. for each ``spec.identifiers`` entry, on the resources of the target container, sets
   ``requests[identifier] = defaultCount`` where requests do not hold that key, then
   ``limits[identifier] = requests[identifier]`` where limits do not hold it (``ApplyToIsvcResources``,
   ``ApplyToLLMIsvcResources``; ``maxCount`` is the dashboard's ceiling and is not written, opendatahub-operator
   #3498). The target is an InferenceService's ``spec.predictor.model`` (none without a model), an
   LLMInferenceService's ``spec.template`` container named ``main`` (created when the template has no
   containers; a template with containers but none named ``main`` gets nothing from the profile at all);
2. ``spec.scheduling.kueue.localQueueName`` set: the Kueue queue label only; else ``spec.scheduling.node``
   is merged into the pod's scheduling (``MergeNodeScheduling``): its ``nodeSelector`` entries over the
   object's, its ``tolerations`` first, then the object's that are not the same toleration (key, operator,
   value, effect, tolerationSeconds: ``TolerationKey``). The pod is ``spec.predictor``, or an
   LLMInferenceService's ``spec.template``.

The webhook first parses the whole profile (``resolver.go`` ``parseProfile``): an identifier whose ``defaultCount``
it cannot read (missing, null, a boolean, a string that is not a quantity) makes it refuse the service at admission,
and a count with a fraction is refused earlier by the API server (the CRD types it an integer or a string), so no
service naming that profile is created: a KV206 error at the count, and the service is not sized
(:func:`profile_refusal`).

A profile that is not among the inputs is not guessed: the GPU rules say that a profile names the resources
(:func:`profile_reference`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kvlint.k8s_quantity import K8S_QUANTITY
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding
from kvlint.values import as_list, yaml_text
from kvlint.workloads.base import located_copy

__all__ = [
    "PROFILE_NAME",
    "PROFILE_NAMESPACE",
    "HardwareProfiles",
    "PROFILED_KINDS",
    "PROFILE_FIX",
    "MAX_PROFILE_IDENTIFIERS",
    "profile_clause",
    "apply_profile",
    "apply_llmisvc_profile",
    "llmisvc_profile_skipped",
    "profile_reference",
    "profile_refusal",
]

PROFILE_NAME = "opendatahub.io/hardware-profile-name"
PROFILE_NAMESPACE = "opendatahub.io/hardware-profile-namespace"

#: The API group of the HardwareProfile the webhook reads (infrav1; the older dashboard.opendatahub.io
#: profiles are the dashboard's own and are not applied by the webhook).
_GROUP = "infrastructure.opendatahub.io/"

#: The container of an LLMInferenceService's ``spec.template`` the profile's resources go to
#: (``LLMIsvcMainContainerName``).
MAIN_CONTAINER = "main"


#: The kinds the webhook applies profiles to that kvlint lints as serving workloads (``isExpectedKind``;
#: Notebooks are not serving engines).
PROFILED_KINDS = frozenset({"InferenceService", "LLMInferenceService"})


def profile_clause(kind: str, annotations: Any, namespace: str | None) -> str | None:
    """For KV405 and KV501 on a container that requests no GPU: the sentence saying that the object names an
    OpenShift AI hardware profile, whose identifiers the webhook writes into its resources at admission (so
    the manifest alone does not show them); None when it names none."""
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
        self._refusals: dict[int, Finding | None] = {}
        for d in docs:
            api = d.data.get("apiVersion") if isinstance(d.data, dict) else None
            if d.kind == "HardwareProfile" and isinstance(api, str) and api.startswith(_GROUP) and d.name:
                self._named.setdefault(d.name, []).append(d)

    def __bool__(self) -> bool:
        return bool(self._named)

    def refusal(self, profile: Document) -> Finding | None:
        """:func:`profile_refusal` of ``profile``, worked out once per profile however many services name it."""
        key = id(profile)
        if key not in self._refusals:
            self._refusals[key] = profile_refusal(profile)
        return self._refusals[key]

    def find(self, name: str, namespace: str | None) -> Document | None:
        """The profile ``name`` of ``namespace`` (the first in input order); a profile or a service whose
        namespace the manifest leaves to ``kubectl -n`` matches any namespace."""
        cands = self._named.get(name, [])
        exact = [d for d in cands if d.namespace == namespace]
        loose = [d for d in cands if d.namespace is None or namespace is None]
        found = exact or loose
        return found[0] if found else None

    def named_by(self, doc: Document) -> Document | None:
        """The profile the annotations of ``doc`` name, when it is among the inputs and ``doc`` is of a kind
        the webhook handles (:data:`PROFILED_KINDS`); else None."""
        if not self._named or doc.kind not in PROFILED_KINDS or not isinstance(doc.data, dict):
            return None
        meta = doc.data.get("metadata")
        ref = profile_reference(meta.get("annotations") if isinstance(meta, dict) else None, doc.namespace)
        return self.find(*ref) if ref is not None else None


#: The identifiers of a profile kvlint applies: the first ones, in the order written. [assumed] a profile lists a few
#: (CPU, memory, an accelerator or two; the CRD sets no maximum). Every InferenceService that names a profile gets
#: all its identifiers, so a profile of 4,000 identifiers named by 400 services (390 KB of YAML) made 1.6 million
#: resource entries to apply and check (77 s of CPU); past this bound the rest are not applied.
MAX_PROFILE_IDENTIFIERS = 64


def _copy(d: Any, loc: Loc | None = None) -> LDict:
    """A shallow copy of a mapping that keeps its positions (:func:`kvlint.workloads.base.located_copy`; at
    ``loc`` when it has none), or an empty mapping at ``loc`` for anything else."""
    if isinstance(d, LDict):
        return located_copy(d, loc)
    return LDict(d, loc=loc) if isinstance(d, dict) else LDict(loc=loc)


def _quantity(value: Any) -> str | None:
    """A ``defaultCount`` as odh-model-controller's ``parseQuantity`` (resolver.go) reads it from the profile's JSON:
    an integer as it is, a number with a fraction truncated toward zero (``int64(v)``: 1.9 -> 1; the CRD refuses
    such a profile, :func:`_refused_count`), a string when it is a Kubernetes quantity (``resource.ParseQuantity``,
    kept as written); None for what the webhook cannot parse (no value, a boolean, anything else), for which it
    refuses the service."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if math.isfinite(value) else None
    if isinstance(value, str) and len(value) <= 64 and K8S_QUANTITY.fullmatch(value):
        return value
    return None


def _refused_count(ident: dict[str, Any]) -> str | None:
    """Why the ``defaultCount`` of the identifier entry ``ident`` stops the profile from being applied, or None.

    * missing, null, a boolean, a string that is not a quantity: odh-model-controller's ``parseProfile`` fails
      (``failed parsing defaultCount for identifier ...``: ``parseQuantity`` takes an integer, a number or a quantity
      string), ``Resolve`` returns the error and the webhook refuses the service at admission
      (``applyHardwareProfile``: "failed fetching hardware profile"). The HardwareProfile CRD requires the field too
      (opendatahub-operator api/infrastructure/v1 ``HardwareIdentifier.DefaultCount``, no ``omitempty``).
    * a number with a fraction (``1.5``): the CRD types ``defaultCount`` an integer or a string
      (``x-kubernetes-int-or-string``), so the API server refuses the profile as written, and the webhook, finding
      no such profile, refuses the services that name it ("hardware profile ... not found"); a stored one would be
      truncated by ``parseQuantity`` (``int64(1.5)`` = 1)."""
    raw = ident.get("defaultCount")
    if isinstance(raw, float) and math.isfinite(raw) and not raw.is_integer():
        return (
            f"its defaultCount {raw!r} is not a whole number: the HardwareProfile CRD takes an integer or a quantity "
            "string, so the API server refuses the profile as written and the webhook finds no profile of that name "
            f"(were it stored, odh-model-controller would truncate it to {int(raw)})"
        )
    if _quantity(raw) is not None:
        return None
    if raw is None:
        what = "has no defaultCount" if "defaultCount" not in ident else "has a null defaultCount"
    else:
        what = f"has defaultCount {yaml_text(raw)}, not an integer or a Kubernetes quantity"
    return (
        f"{what}: odh-model-controller's webhook cannot parse the profile ('failed parsing defaultCount for identifier "
        f"{yaml_text(ident.get('identifier'))}') and refuses the service at admission (the HardwareProfile CRD requires "
        "an integer or a quantity string there too)"
    )


def _spec(profile: Document) -> dict[str, Any]:
    spec = profile.data.get("spec") if isinstance(profile.data, dict) else None
    return spec if isinstance(spec, dict) else {}


def _identifiers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The profile's identifiers kvlint applies: the first :data:`MAX_PROFILE_IDENTIFIERS`, in the order written, of
    those with a non-empty string ``identifier`` (``parseProfile`` skips the others: ``NestedString`` reads nothing
    else)."""
    listed = as_list(spec.get("identifiers"))[:MAX_PROFILE_IDENTIFIERS]
    return [i for i in listed if _named(i)]


def _named(ident: Any) -> bool:
    return isinstance(ident, dict) and isinstance(ident.get("identifier"), str) and ident["identifier"] != ""


def profile_refusal(profile: Document) -> Finding | None:
    """KV206 (error) when OpenShift AI's webhook refuses every service that names ``profile``: the first identifier
    (of all of them, as ``parseProfile`` reads them all) whose ``defaultCount`` :func:`_refused_count` refuses,
    placed at that ``defaultCount`` (or the entry); None when the profile parses. The service is then not sized:
    no pod of it is created."""
    spec = _spec(profile)
    for ident in as_list(spec.get("identifiers")):
        if not _named(ident):
            continue
        why = _refused_count(ident)
        if why is not None:
            return Finding(
                "KV206",
                f"hardware profile '{profile.name}': identifier {yaml_text(ident['identifier'])} {why}; so no "
                "InferenceService or LLMInferenceService that names this profile is created, and kvlint does not "
                "size it",
                loc_of(ident, "defaultCount") or loc_of(ident) or profile.loc,
                fix='give every identifier a whole-number defaultCount (an integer, or a quantity such as "2")',
            )
    return None


def _with_identifiers(container: Any, identifiers: list[dict[str, Any]], loc: Loc | None) -> LDict:
    """A copy of ``container`` with the profile's identifiers in its resources (step 1 of the module
    docstring): ``requests`` gets ``defaultCount`` where it lacks the key, ``limits`` the request where it
    lacks the key. What the profile adds carries the profile's positions."""
    out = _copy(container, loc)
    resources = out["resources"] = _copy(out.get("resources"), loc)
    requests = resources["requests"] = _copy(resources.get("requests"), loc)
    limits = resources["limits"] = _copy(resources.get("limits"), loc)
    for ident in identifiers:
        key = str(ident["identifier"])
        if key not in requests:
            value = _quantity(ident.get("defaultCount"))
            if value is None:
                continue
            requests[key] = value
            where = loc_of(ident, "defaultCount") or loc_of(ident)
            if where is not None:
                requests.locs[key] = requests.key_locs[key] = where
        if key not in limits and key in requests:
            limits[key] = requests[key]
            where = loc_of(requests, key)
            if where is not None:
                limits.locs[key] = limits.key_locs[key] = where
    return out


def _toleration_key(t: Any) -> str:
    """``TolerationKey``: key, operator, value, effect and tolerationSeconds of a toleration."""
    t = t if isinstance(t, dict) else {}
    parts = [t.get(k) for k in ("key", "operator", "value", "effect")]
    seconds = t.get("tolerationSeconds")
    text = [p if isinstance(p, str) else "" for p in parts]
    text.append(str(seconds) if isinstance(seconds, int) and not isinstance(seconds, bool) else "")
    return ":".join(text)


def _merge_scheduling(pod: LDict, spec: dict[str, Any], at: Loc) -> None:
    """Step 2 of the module docstring on ``pod`` (a copy the caller owns): the profile's node scheduling
    merged into the pod's, unless the profile queues through Kueue (``at``: the profile's position, for what
    has none of its own)."""
    scheduling = spec.get("scheduling")
    scheduling = scheduling if isinstance(scheduling, dict) else {}
    kueue = scheduling.get("kueue")
    node = scheduling.get("node")
    if (isinstance(kueue, dict) and kueue.get("localQueueName")) or not isinstance(node, dict):
        return
    selector = node.get("nodeSelector")
    if isinstance(selector, dict) and selector and all(isinstance(v, str) for v in selector.values()):
        merged = _copy(pod.get("nodeSelector"), loc_of(node, "nodeSelector"))
        for key, value in selector.items():
            merged[key] = value
            where = loc_of(selector, key)
            if where is not None:
                merged.locs[key] = where
        pod["nodeSelector"] = merged
        where = loc_of(node, "nodeSelector")
        if where is not None:
            pod.locs["nodeSelector"] = where
    tolerations = [t for t in as_list(node.get("tolerations")) if isinstance(t, dict)]
    if tolerations:
        own = pod.get("tolerations")
        theirs = {_toleration_key(t) for t in tolerations}
        out = LList(loc=loc_of(node, "tolerations"))
        for i, t in enumerate(as_list(node.get("tolerations"))):
            if isinstance(t, dict):
                out.append(t)
                out.locs.append(loc_of(node["tolerations"], i) or loc_of(node, "tolerations") or at)
        for i, t in enumerate(own if isinstance(own, list) else []):
            if _toleration_key(t) not in theirs:
                out.append(t)
                out.locs.append(loc_of(own, i) or loc_of(pod, "tolerations") or at)
        pod["tolerations"] = out
        where = loc_of(node, "tolerations")
        if where is not None:
            pod.locs["tolerations"] = where


def apply_profile(pred: Any, profile: Document) -> LDict:
    """An InferenceService's ``spec.predictor`` as the webhook leaves it with ``profile`` applied (the module
    docstring): the identifiers on ``spec.predictor.model``, the node scheduling on the predictor. What the
    profile adds carries the profile's positions. ``pred`` itself is not changed."""
    spec = _spec(profile)
    out = _copy(pred)
    identifiers = _identifiers(spec)
    model = out.get("model")
    if identifiers and isinstance(model, dict):
        out["model"] = _with_identifiers(model, identifiers, loc_of(spec, "identifiers"))
    _merge_scheduling(out, spec, profile.loc)
    return out


def llmisvc_profile_skipped(spec: Any) -> bool:
    """True when the webhook applies nothing of a profile to an LLMInferenceService with this ``spec``: its
    ``spec.template`` has containers and none is named ``main`` (``applyHardwareProfileLLMISVC`` then emits a
    warning event and skips the profile)."""
    template = spec.get("template") if isinstance(spec, dict) else None
    containers = template.get("containers") if isinstance(template, dict) else None
    if not isinstance(containers, list) or not containers:
        return False
    return not any(isinstance(c, dict) and c.get("name") == MAIN_CONTAINER for c in containers)


def apply_llmisvc_profile(spec: Any, profile: Document) -> Any:
    """An LLMInferenceService's ``spec`` as the webhook leaves it with ``profile`` applied (the module
    docstring): the identifiers on the ``main`` container of ``spec.template`` (created when the template has
    no containers), the node scheduling on ``spec.template``; ``spec`` unchanged when the template has
    containers but none named ``main`` (the webhook then applies nothing of the profile). What the profile
    adds carries the profile's positions; the controller merges its presets under the result. ``spec`` itself
    is not changed."""
    if not isinstance(spec, dict):
        return spec
    pspec = _spec(profile)
    at = loc_of(pspec, "identifiers") or profile.loc
    if llmisvc_profile_skipped(spec):
        return spec
    template = spec.get("template")
    containers = template.get("containers") if isinstance(template, dict) else None
    containers = containers if isinstance(containers, list) else []
    out = _copy(spec)
    tmpl = _copy(template, loc_of(pspec, "scheduling") or at)
    identifiers = _identifiers(pspec)
    if identifiers:
        new = LList(containers, loc=loc_of(containers) or at)
        new.locs = [loc_of(containers, i) or at for i in range(len(containers))]
        if not new:
            new.append(LDict({"name": MAIN_CONTAINER}, loc=at))
            new.locs.append(at)
        main = next(i for i, c in enumerate(new) if isinstance(c, dict) and c.get("name") == MAIN_CONTAINER)
        new[main] = _with_identifiers(new[main], identifiers, at)
        tmpl["containers"] = new
    _merge_scheduling(tmpl, pspec, profile.loc)
    if tmpl or isinstance(template, dict):
        out["template"] = tmpl
        if "template" not in out.locs and tmpl.loc is not None:
            out.locs["template"] = tmpl.loc
    return out
