"""Parse family (KV001-KV005): what is wrong with the manifest as written.

KV001-KV004 have ``phase: load`` in the catalogue and no registered check: the loader reports KV001
(unreadable files, YAML/JSON syntax), KV002 (unrendered templates) and KV004 (duplicate keys) as findings
(:mod:`kvlint.load`, :mod:`kvlint.render`), and the suppression pass reports KV003 (a ``kvlint.io/ignore``
annotation or ``# kvlint: ignore`` comment without a reason, :mod:`kvlint.suppress`). The pipeline turns
those findings into diagnostics with the catalogue's severity. KV005 (a key that is not a Kubernetes field in
a serving pod, or a ``kvlint.io/`` annotation kvlint does not read) is a container check, below.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kvlint.rules.context import RuleContext
from kvlint.rules.registry import check
from kvlint.source import LDict, loc_of
from kvlint.types import Diagnostic, Workload, ref_part
from kvlint.values import go_kind, non_string_env, non_string_items, schema_kind
from kvlint.workloads.base import engine_containers
from kvlint.workloads.fields import known_fields, unknown_field_paths, unknown_fields

#: Kinds whose PodSpec templates kvlint reads as written (KServe and operator objects whose pods kvlint
#: assembles from their own fields are not checked: their keys are the operator's, not a PodSpec's).
_POD_KINDS = frozenset(
    {
        "Pod",
        "PodTemplate",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
        "LeaderWorkerSet",
        "LLMInferenceService",
        "LLMInferenceServiceConfig",
        "RayService",
        "RayCluster",
        "RayJob",
        "RoleBasedGroup",
        "JobSet",
    }
)


def _literal_pod_spec(w: Workload) -> bool:
    """The workload's PodSpec is written as one in the manifest (not assembled by kvlint from an operator's
    own fields)."""
    if w.kind in ("LLMInferenceService", "LLMInferenceServiceConfig"):
        return True
    return w.kind in _POD_KINDS and (w.path.endswith("spec") or w.path == "")


#: The annotations kvlint reads, all of them the user's inputs (README.md, Annotations): the model, the GPU and
#: the accepted findings (:data:`kvlint.suppress.IGNORE_ANNOTATION`).
KVLINT_ANNOTATIONS = ("kvlint.io/accelerator", "kvlint.io/ignore", "kvlint.io/model")


def _edits(a: str, b: str) -> int:
    """Levenshtein distance between ``a`` and ``b`` (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _near(name: str, known: str, most: int = 2) -> bool:
    """Whether ``name`` is at most ``most`` edits from ``known``. Names whose lengths differ by more are not
    compared (no ``most`` edits bridge them), so a key of a million characters, which a manifest on the command
    line may hold, costs a length test, not a million-row :func:`_edits` (2,000 keys of 2,000 characters took
    60 s of KV005 before)."""
    return abs(len(name) - len(known)) <= most and _edits(name, known) <= most


#: Most unread ``kvlint.io/`` annotations of one workload that KV005 names one by one; one more info counts the
#: rest. A custom resource's pod template may hold any number of annotations (the API server's 256 KiB total
#: applies to an object's own metadata only): 110,000 such keys in a 3 MiB LeaderWorkerSet cost 2.6 s of webhook
#: worker CPU in KV005 alone (a finding, a location and an edit distance each), past the 2 s review budget, so
#: the object was admitted unchecked (failure mode open).
MAX_UNKNOWN_ANNOTATIONS = 20


def _unknown_annotations(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV005 (info) for each ``kvlint.io/`` annotation of the workload that kvlint does not read (a typo such
    as ``kvlint.io/acelerator``, which leaves the pod's GPU to the node labels; the prefix in any case:
    ``KVLINT.IO/IGNORE``), naming the one it reads that
    is at most two edits away (a misspelling, not another word: ``kvlint.io/accelerator-source`` gets no
    guess), as ruff names an unknown ``noqa`` code; the first :data:`MAX_UNKNOWN_ANNOTATIONS` of them, then one
    info counting the others."""
    from kvlint.suppress import annotation_loc

    w = ctx.workload
    # the prefix in any case: Kubernetes keys are case-sensitive and kvlint reads kvlint.io/ignore only, so
    # KVLINT.IO/IGNORE suppressed nothing without a word (it gets "did you mean 'kvlint.io/ignore'?")
    unread = (k for k in w.annotations if k[:10].lower() == "kvlint.io/" and k not in KVLINT_ANNOTATIONS)
    for count, key in enumerate(unread):
        if count == MAX_UNKNOWN_ANNOTATIONS:
            rest = 1 + sum(1 for _ in unread)
            yield ctx.finding(
                f"{rest:,} more kvlint.io/ annotations from '{key}' on are not ones kvlint reads either (not "
                f"listed one by one; kvlint reads {', '.join(KVLINT_ANNOTATIONS)})",
                annotation_loc(w, key),
                fix="remove the kvlint.io/ annotations kvlint does not read",
                severity="info",
            )
            return
        name = key[len("kvlint.io/") :].lower()
        guess = [k for k in KVLINT_ANNOTATIONS if _near(name, k[len("kvlint.io/") :])][:1]
        hint = f"; did you mean '{guess[0]}'?" if guess else ""
        yield ctx.finding(
            f"annotation '{key}' is not one kvlint reads, so it changes nothing (kvlint reads "
            f"{', '.join(KVLINT_ANNOTATIONS)}){hint}",
            annotation_loc(w, key),
            fix=f"rename '{key}' to '{guess[0]}'" if guess else f"remove '{key}'",
            severity="info",
        )


def _contradicting_annotations(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV005 (warning) for a ``kvlint.io/accelerator`` annotation naming a GPU the pod's own facts exclude
    (:attr:`kvlint.types.Placement.annotation_conflict`: its nodeSelector, required node affinity, node name,
    node class or operator fields decide another), applied or not, and for a ``kvlint.io/model`` annotation the
    models stage did not apply (:attr:`kvlint.types.ContainerResult.model_annotation_overruled`). With exemptions
    disabled (``--no-exemptions``, the webhook's admin switch) the pod's own facts decide, so these annotations
    cannot silence a finding as ``kvlint.io/ignore`` can no longer; with exemptions allowed the accelerator
    annotation still decides, and this says that the scheduler does not follow it."""
    from kvlint.accelerators.placement import ANNOTATION as ACCELERATOR
    from kvlint.pipeline import own_model_reference
    from kvlint.suppress import annotation_loc
    from kvlint.workloads.base import MODEL_ANNOTATION

    w, cr = ctx.workload, ctx.cr
    conflict = cr.placement.annotation_conflict if cr.placement is not None else None
    if conflict is not None:
        named = f"{ACCELERATOR}: {conflict.value} ({conflict.annotated.name})"
        own = f"{conflict.own_how} places the pod on {conflict.own.name}"
        if conflict.applied:
            yield ctx.finding(
                f"{named} contradicts the pod's own scheduling: {own}, and the scheduler follows that, not the "
                f"annotation; kvlint sizes the pod on {conflict.annotated.name} as the annotation says, so its "
                "verdicts are not those of the GPU the pod runs on",
                annotation_loc(w, ACCELERATOR),
                fix=f"remove the annotation (the pod's own constraints name its GPU) or correct the constraints "
                f"if the pod is meant to run on {conflict.annotated.name}",
            )
        elif conflict.within:
            yield ctx.finding(
                f"{named} is not applied: {conflict.own_how} allows several GPUs, and with exemptions disabled "
                f"the pod's own scheduling decides: kvlint sizes it on the smallest, {conflict.own.name}, and "
                "checks each",
                annotation_loc(w, ACCELERATOR),
                fix=f"pin the pod to {conflict.annotated.name} in its nodeSelector or node affinity if it must "
                "run there",
            )
        else:
            yield ctx.finding(
                f"{named} is not applied: {own}, and with exemptions disabled the pod's own scheduling "
                "decides the GPU kvlint sizes it on",
                annotation_loc(w, ACCELERATOR),
                fix=f"remove the annotation, or change the pod's scheduling constraints if it is meant to run on "
                f"{conflict.annotated.name}",
            )
    unknown = cr.placement.annotation_unknown if cr.placement is not None else None
    if unknown is not None and cr.placement is not None:
        from kvlint.accelerators import close_names

        shown = unknown if len(unknown) <= 64 else unknown[:61] + "..."
        close = close_names(unknown)
        guess = f" (did you mean {', '.join(close)}?)" if close else ""
        placed = cr.placement
        outcome = (
            f"kvlint sizes the pod on {placed.accelerator.name}, the GPU its own scheduling names"
            if placed.accelerator is not None
            else "the pod's GPU stays unknown (KV501)"
        )
        yield ctx.finding(
            f"{ACCELERATOR}: {shown} is not an accelerator kvlint knows{guess}, so the annotation is not applied: "
            f"{outcome}",
            annotation_loc(w, ACCELERATOR),
            fix="write an id or alias that `kvlint accelerators` lists, or declare the GPU under "
            "accelerators.custom in .kvlint.yaml (its memory as CUDA reports it)",
        )
    overruled = cr.model_annotation_overruled
    if overruled is not None and cr.serving.model is not None:
        own_model = own_model_reference(cr.serving, w)
        yield ctx.finding(
            f"{MODEL_ANNOTATION}: {overruled} is not applied: the pod serves {own_model}, which kvlint can read, "
            "and with exemptions disabled the pod's own model decides what kvlint sizes",
            annotation_loc(w, MODEL_ANNOTATION),
            fix=f"remove the annotation, or serve {overruled} in the engine's command if that is the model",
        )
    replaced = cr.model_annotation_replaced
    if replaced is not None and overruled is None and cr.model is None:
        ann = w.annotations.get(MODEL_ANNOTATION)
        yield ctx.finding(
            f"{MODEL_ANNOTATION}: {ann} replaces the model the pod serves, {replaced}, which kvlint can read, but "
            f"kvlint cannot read {ann} (KV502): the pod is not sized, so none of the capacity findings of the model "
            "the engine loads is made (exemptions are allowed, so the annotation decides)",
            annotation_loc(w, MODEL_ANNOTATION),
            fix="remove the annotation (the pod names its model), or correct it to the model the engine serves",
        )
    elif replaced is not None and overruled is None:
        ann = w.annotations.get(MODEL_ANNOTATION)
        yield ctx.finding(
            f"{MODEL_ANNOTATION}: {ann} replaces the model the pod serves, {replaced}, which kvlint can read: "
            f"kvlint sizes {ann} as the annotation says (exemptions are allowed), so its verdicts are not those of "
            "the model the engine loads",
            annotation_loc(w, MODEL_ANNOTATION),
            fix=f"remove the annotation (the pod names its model), or serve {ann} in the engine's command if "
            "that is the model",
            severity="info",
        )


#: Most keys of a serving container and its pod spec that KV005 names as not Kubernetes fields, one by one; one
#: more finding counts the others (a finding, a location and a guess each: 60,000 such keys in a 1.4 MB pod
#: template took 4.9 s of webhook worker CPU, past the 2 s review budget, admitted unchecked).
MAX_UNKNOWN_FIELDS = 20


_Unknown = tuple[str, str, str, str | None, Any]

#: The last pod spec :func:`_pod_wide_unknown_fields` walked and its answer. Each serving container of a pod runs
#: KV005 and the pipeline keeps its pod-wide findings once (``pipeline._pod_findings_once``); walked again for each
#: serving container, 32 of them beside 20,000 init containers with a misspelt key each took 5.8 s of webhook
#: worker CPU. The entry holds the pod spec itself, so no other object takes its identity while it is kept.
_POD_WIDE_LAST: tuple[LDict, list[_Unknown]] | None = None


def _pod_wide_unknown_fields(pod: LDict) -> list[_Unknown]:
    """``(owner, holder path, key, closest field, position)`` of each key of ``pod`` (a PodSpec) and of its init
    containers that is not a Kubernetes field, worked out once for the pod's serving containers (see
    :data:`_POD_WIDE_LAST`). The init containers share one budget of closest-field guesses
    (``fields.MAX_GUESSED_KEYS``): a guess per init container, 60,000 of them, took 2.7 s of CPU, for findings
    past the first :data:`MAX_UNKNOWN_FIELDS`, which are counted, not shown."""
    global _POD_WIDE_LAST
    last = _POD_WIDE_LAST
    if last is not None and last[0] is pod:
        return last[1]
    found: list[_Unknown] = []
    # (the pod's containers are PodSpec fields like the others: a PodSpec whose keys are all fields, nearly
    # every one, is passed by one keys-subset test, without a copy of it or a lookup per key)
    if not pod.keys() <= known_fields("V1PodSpec").keys():
        found += [
            ("the pod spec", "", k, g, pod.key_locs.get(k) or pod.locs.get(k))
            for k, g in unknown_fields(pod, "V1PodSpec")
        ]
    # the pod's init containers are Containers too: an unknown key there (a misspelt `comand:`, a pod-level
    # `nodeSelector:` written inside one) makes kubectl apply reject the whole object, the serving container's
    # with it; a sidecar kvlint reads as an engine container (engine_containers) is checked as one instead
    read = [id(c) for c in engine_containers(pod)]
    inits = pod.get("initContainers")
    guessed = [0]
    for i, c in enumerate(inits if isinstance(inits, list) else ()):
        if isinstance(c, LDict) and id(c) not in read:
            # (an init container without a name, which the API server refuses too, by its place in the list)
            name = c.get("name")
            owner = f"init container {ref_part(str(name))!r}" if name else f"initContainers[{i}]"
            found += [
                (owner, p, k, g, loc) for p, k, g, loc in unknown_field_paths(c, "V1Container", "", guessed)
            ]
    _POD_WIDE_LAST = (pod, found)
    return found


@check("KV005")
def unknown_manifest_field(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV005: keys of the serving container (and of its pod's PodSpec) that are not fields of the Kubernetes
    ``core/v1`` types (:mod:`kvlint.workloads.fields`), and (info) ``kvlint.io/`` annotations of the workload
    that kvlint does not read (:data:`KVLINT_ANNOTATIONS`)."""
    w = ctx.workload
    if w.annotations:
        yield from _unknown_annotations(ctx)
        yield from _contradicting_annotations(ctx)
    if not _literal_pod_spec(w):
        return
    found = [
        ("container " + repr(ctx.cr.container_name), p, k, g, loc)
        for p, k, g, loc in unknown_field_paths(ctx.container, "V1Container")
    ]
    yield from _not_strings(ctx)
    pod = w.pod_spec
    yield from _node_selector_not_strings(ctx, pod)
    found += _pod_wide_unknown_fields(pod)
    if len(found) > MAX_UNKNOWN_FIELDS:
        rest = found[MAX_UNKNOWN_FIELDS:]
        found = found[:MAX_UNKNOWN_FIELDS]
        owner, path, key, _guess, loc = rest[0]
        where = f"{owner}{'.' + path if path else ''}"
        yield ctx.finding(
            f"{len(rest):,} more keys from '{key}' in {where} on are not Kubernetes fields either (not listed one "
            "by one); their values are never used",
            loc,
            fix="remove the keys that are not Kubernetes fields",
        )
    for owner, path, key, guess, loc in found:
        where = f"{owner}{'.' + path if path else ''}"
        moved = _misplaced(owner, path, key, ctx.cr.container_name, _container_count(pod))
        if moved is not None:
            belongs, fix = moved
            yield ctx.finding(
                f"'{key}' in {where} is not a Kubernetes field there: it is a field of {belongs}. kubectl apply "
                "(strict validation, its default) rejects the object with 'unknown field'; tools that do not "
                "validate drop the key, so its value is never used",
                loc,
                fix=fix,
            )
            continue
        # the statement ends at "field"; kubectl's refusal follows as a detail, after the guess when there is one
        hint = f"; did you mean '{guess}'?" if guess else ";"
        yield ctx.finding(
            f"'{key}' in {where} is not a Kubernetes field{hint} kubectl apply (strict validation, its default) "
            "rejects the object with 'unknown field'; tools that do not validate drop the key, so its value "
            "is never used",
            loc,
            fix=f"rename '{key}' to '{guess}'" if guess else f"remove '{key}' or move it where it belongs",
        )


#: Kinds whose pod template the API server decodes into its own Go types (core/v1 ``Container``), with Go's
#: encoding/json error; a custom resource is checked against its CRD's structural schema instead
#: (apiextensions-apiserver: ``spec.env[1].value in body must be of type string: "integer"``), or, where the
#: schema has ``x-kubernetes-preserve-unknown-fields``, stored and refused by its operator's decoder
#: (knative/serving#449: a non-string env value, no error from kubectl, no pod).
_BUILTIN_POD_KINDS = frozenset(
    {
        "Pod",
        "PodTemplate",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
    }
)


def _not_strings(ctx: RuleContext) -> Iterator[Diagnostic]:
    """KV005 (error) for items of the serving container's ``command`` and ``args`` and ``env`` names and values
    that are not strings (``args: [--max-model-len, 4096]``, ``value: 1``, ``value: true``): the API server
    decodes the object into ``core/v1`` ``Container`` (``Command``/``Args []string``, ``EnvVar.Name``/``Value
    string``) and refuses it, "json: cannot unmarshal number into Go struct field ... of type string", whatever
    ``--validate`` says; a custom resource's structural schema refuses it as well. kvlint read such a value as
    its text and planned a container that is never created. One finding per field, at its first such item,
    counting the others."""
    c = ctx.container
    name = ctx.cr.container_name
    fields: list[tuple[str, list[tuple[str, str, Any, Any, str]]]] = []
    for key in ("command", "args"):
        items = c.get(key)
        if isinstance(items, list):
            bad = [
                (f"{key}[{i}]", k, loc_of(items, i), items[i], key)
                for i, k in non_string_items(items, go_kind)
            ]
            fields.append((key, bad))
    env = c.get("env")
    if isinstance(env, list):
        bad = []
        for i, part, k in non_string_env(env, go_kind):
            e = env[i]
            # named by the entry's name: an operator's injected variables (LeaderWorkerSet puts its own first)
            # shift the index from the one written
            en = e.get("name")
            where = (
                f"the {part} of env {en!r}" if part == "value" and isinstance(en, str) else f"an env {part}"
            )
            bad.append((where, k, loc_of(e, part) or loc_of(env, i), e.get(part), part))
        fields.append(("env", bad))
    for key, bad in fields:
        if not bad:
            continue
        where, kind, loc, value, go_field = bad[0]
        more = f" (and {len(bad) - 1:,} more in its {key})" if len(bad) > 1 else ""
        field = "EnvVar" if key == "env" else "Container"
        if ctx.workload.kind in _BUILTIN_POD_KINDS:
            why = (
                f'API server refuses the object ("json: cannot unmarshal {kind} into Go struct field {field}...'
                f'{go_field} of type string"), whatever '
                "kubectl's --validate says, so no pod is created"
            )
        else:
            why = (
                f"API server refuses the {ctx.workload.kind} where its CRD's schema types the field (\"... in body "
                f'must be of type string: "{schema_kind(value)}""), and where the schema keeps unknown '
                "fields its operator cannot decode the object into its Go types, so no pod is created"
            )
        yield ctx.finding(
            f"{where} of container {name!r} is a{'n' if kind[0] in 'ao' else ''} {kind}, not a string{more}: the "
            + why,
            loc,
            fix='quote the value ("4096", "true") so that YAML reads it as a string; in a Helm template, '
            "pipe it through quote",
            severity="error",
        )


def _node_selector_not_strings(ctx: RuleContext, pod: Any) -> Iterator[Diagnostic]:
    """KV005 (error) for ``nodeSelector`` values that are not strings (``nvidia.com/gpu.present: true``,
    ``gpu-count: 8``): ``core/v1`` ``PodSpec.NodeSelector`` is a ``map[string]string``, and the API server refuses
    the object, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go
    struct field PodSpec.spec.template.spec.nodeSelector of type string' (reported in
    GoogleCloudPlatform/gke-autoneg-controller#100); a custom resource's structural schema refuses it too. kvlint
    read the value as its text. Said of the pod, once (the pipeline keeps pod-wide KV005 findings once); one
    finding at the first such value, counting the others."""
    sel = pod.get("nodeSelector") if isinstance(pod, dict) else None
    if not isinstance(sel, dict):
        return
    bad = [(k, kind) for k, v in sel.items() if (kind := go_kind(v))]
    if not bad:
        return
    key, kind = bad[0]
    more = f" (and {len(bad) - 1:,} more)" if len(bad) > 1 else ""
    path = ".".join(p for p in (ctx.workload.path, "nodeSelector") if p)
    if ctx.workload.kind in _BUILTIN_POD_KINDS:
        why = (
            f'API server refuses the object ("json: cannot unmarshal {kind} into Go struct field PodSpec.{path} of '
            "type string\"), whatever kubectl's --validate says, so no pod is created"
        )
    else:
        why = (
            f"API server refuses the {ctx.workload.kind} where its CRD's schema types the field (\"... in body must "
            f'be of type string: "{schema_kind(sel[key])}""), and where the schema keeps unknown fields its '
            "operator cannot decode the object into its Go types, so no pod is created"
        )
    yield ctx.finding(
        f"nodeSelector {str(key)!r} of the pod is a{'n' if kind[0] in 'ao' else ''} {kind}, not a string{more}: the "
        + why,
        loc_of(sel, key) or loc_of(pod, "nodeSelector"),
        fix='quote the value ("true", "8") so that YAML reads it as a string; in a Helm template, pipe it through '
        "quote",
        severity="error",
    )


def _container_count(pod: Any) -> int:
    """How many containers the pod spec ``pod`` lists under ``containers:`` (0 when it lists none)."""
    containers = pod.get("containers") if isinstance(pod, dict) else None
    return len(containers) if isinstance(containers, list) else 0


def _misplaced(
    owner: str, path: str, key: str, container: str | None, containers: int = 1
) -> tuple[str, str] | None:
    """``(what the key is a field of, the fix)`` for an unknown key of the pod spec that is a field of a container
    (``readinessProbe``, ``resources``, ``args`` written one level too far out), or of a container's top level
    that is a field of the pod spec (``nodeSelector``, ``tolerations``, ``volumes`` written one level too far in);
    None for any other key. The field lists are those of ``core/v1`` (:mod:`kvlint.workloads.fields`): a key
    that is exactly a field name of the other type is moved rather than renamed to the nearest field of its own
    type (``readinessProbe`` at pod level is not a misspelt ``readinessGates``). A pod-level key is moved into
    the serving container by name only when the pod has that one container (``containers``); a pod-level key in
    an init container (``init container 'fetch'``) is moved up as from a container's top level. In a pod of
    several, the key may be meant for any of them, and KV005 runs once per serving container, so naming each
    would give one fix per container, at the same key, each naming a different one."""
    if path:
        return None
    if owner == "the pod spec" and key in known_fields("V1Container"):
        into = f"the container '{container}'" if container and containers == 1 else "the container it is for"
        return "a container", f"move '{key}' into {into} (under containers:, beside its image)"
    if owner.startswith(("container ", "init container ", "initContainers[")) and key in known_fields(
        "V1PodSpec"
    ):
        return "the pod spec", f"move '{key}' out of {owner}, up to the pod spec (beside containers:)"
    return None
