"""LeaderWorkerSet (leaderworkerset.x-k8s.io): the leader and worker templates, with the group size.

LWS adds ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX`` to the environment of every container
(and init container) of a group's pods (kubernetes-sigs/lws ``pkg/utils/pod/pod_utils.go`` ``AddLWSVariables``,
@060ab4da), at the head of its env, in place of any entry of the container's own of the same name
(``addEnvVarsIfNotExists`` keeps only the container's entries of other names, from v0.4.0; v0.3.0 kept the container's
own value), so the container's env may build on them (``$(LWS_LEADER_ADDRESS):6379``): the group size (``leaderWorkerTemplate.size``), the pod's index in its group (0
for the leader, 1 to size - 1 for the workers) and ``<lws name>-<group index>.<subdomain>.<namespace>`` (the
subdomain is the LeaderWorkerSet's name unless ``networkConfig.subdomainPolicy`` is ``UniquePerReplica``).
kvlint adds all three to the templates it checks (:func:`lws_env`), so ``--nnodes $(LWS_GROUP_SIZE)``,
``$((LWS_GROUP_SIZE * N))``, ``--node-rank $(LWS_WORKER_INDEX)`` and ``--dist-init-addr $(LWS_LEADER_ADDRESS):N``
read. A template stands for several pods: the worker template gets the first worker's index, 1, and the address
is group 0's; the index and address change no memory figure.

A group size the LeaderWorkerSet's API refuses is reported (KV206, error) and nothing is sized on it
(:func:`size_findings`); so is a size beyond the node count kvlint sizes a plan with
(:data:`~kvlint.engines.options.MAX_PARALLEL_SIZE`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kvlint.engines.images import envsubst_placeholders
from kvlint.engines.options import MAX_PARALLEL_SIZE
from kvlint.source import Loc, loc_of
from kvlint.types import Document, Finding, Workload
from kvlint.workloads.base import (
    Chain,
    get_in,
    int_or_none,
    is_pod_spec,
    ldict,
    llist,
    make_workload,
    synthetic_workload,
    with_injected_env,
)

#: The largest ``leaderWorkerTemplate.size`` (and ``replicas`` x ``size``) LWS takes: the fields are ``*int32``
#: (kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``, ``LeaderWorkerTemplate.Size``), and
#: its webhook refuses a product of replicas and size above ``math.MaxInt32``.
MAX_INT32 = 2**31 - 1


def lws_env(
    size: int | None, role: str | None, *, size_loc: Loc | None = None, leader_address: str | None = None
) -> list[tuple[str, str, Loc | None]]:
    """The ``(name, value, position)`` env entries LWS injects into a template's pods (see the module docstring):
    ``LWS_GROUP_SIZE`` when the size is known, ``LWS_WORKER_INDEX`` ``"0"`` for the leader template and ``"1"``
    (the first worker) for the worker template, ``LWS_LEADER_ADDRESS`` when the caller can name it."""
    out: list[tuple[str, str, Loc | None]] = []
    if size is not None:
        out.append(("LWS_GROUP_SIZE", str(size), size_loc))
    if role in ("leader", "worker"):
        out.append(("LWS_WORKER_INDEX", "0" if role == "leader" else "1", size_loc))
    if leader_address is not None:
        out.append(("LWS_LEADER_ADDRESS", leader_address, size_loc))
    return out


#: The pod label and annotation LWS sets on a group's pods, as a container's env reads them through the downward
#: API (``valueFrom.fieldRef.fieldPath``): kubernetes-sigs/lws ``api/leaderworkerset/v1/leaderworkerset_types.go``
#: (@47a6181f) ``WorkerIndexLabelKey`` (the pod's index in its group: "0" on the leader, which
#: ``pkg/controllers/leaderworkerset_controller.go`` puts in the leader StatefulSet's template, 1 to size - 1 on
#: the workers), ``GroupIndexLabelKey`` (the group's index) and ``SizeAnnotationKey`` (``leaderWorkerTemplate.size``).
WORKER_INDEX_FIELD = "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']"
GROUP_INDEX_FIELD = "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"
SIZE_FIELD = "metadata.annotations['leaderworkerset.sigs.k8s.io/size']"


def lws_fields(size: int | None, role: str | None) -> dict[str, str]:
    """The downward-API field paths LWS gives a value in a template's pods (see :data:`WORKER_INDEX_FIELD`) ->
    that value, for the same pod :func:`lws_env` describes: worker index "0" for the leader template and "1" (the
    first worker) for the worker template, group index "0" (the first group), the group size when known. A
    container that sets ``LWS_WORKER_INDEX`` itself from the worker-index label (llmaz's multi-node Service does)
    then reads the same index as one that leaves it to LWS."""
    out: dict[str, str] = {}
    if role in ("leader", "worker"):
        out[WORKER_INDEX_FIELD] = "0" if role == "leader" else "1"
        out[GROUP_INDEX_FIELD] = "0"
    if size is not None:
        out[SIZE_FIELD] = str(size)
    return out


def _shown(v: Any) -> str:
    text = (
        str(v).lower()
        if isinstance(v, bool)
        else str(v)
        if not isinstance(v, int) or v.bit_length() < 200
        else ""
    )
    text = text or "<huge number>"
    return text if len(text) <= 60 else text[:57] + "..."


def size_findings(lwt: dict, replicas: Any) -> tuple[Finding, ...]:
    """KV206 (error) at ``leaderWorkerTemplate.size`` (``lwt['size']``) when the LeaderWorkerSet is refused for it,
    or when it is beyond what kvlint sizes; empty when the size is absent (LWS defaults it to 1) or fine.

    Refused (kubernetes-sigs/lws, ``api/leaderworkerset/v1/leaderworkerset_types.go`` ``LeaderWorkerTemplate.Size``
    ``*int32``, and ``pkg/webhooks/leaderworkerset_webhook.go`` ``generalValidate``, main @6263137f):

    * not an integer: the CRD's schema types the field ``integer`` and the API server rejects anything else;
    * below 1: the LWS validating webhook, "size must be equal or greater than 1";
    * above 2,147,483,647 (int32): the webhooks cannot decode the object into the Go type;
    * ``replicas`` x ``size`` above 2,147,483,647: the webhook, "the product of replicas and worker replicas must
      not exceed 2147483647".

    Beyond :data:`~kvlint.engines.options.MAX_PARALLEL_SIZE` (65,536 pods, one GPU node each at least): an
    implausible group kvlint does not size, as a ``--nnodes`` or parallel size that large. A string holding an
    envsubst placeholder (``${NODES}``) is a template parameter, not a size: left to KV002."""
    if "size" not in lwt or lwt.get("size") is None:
        return ()
    v = lwt.get("size")
    at = loc_of(lwt, "size") or loc_of(lwt)
    n = int_or_none(v)
    fix = "set leaderWorkerTemplate.size to the number of pods of one group (the leader and its workers), 1 or more"
    if n is None:
        if isinstance(v, str) and next(envsubst_placeholders(v), None) is not None:
            return ()
        why = (
            "the LeaderWorkerSet CRD's schema takes an integer (int32), so the API server rejects the object"
        )
    elif n < 1:
        why = "LWS's validating webhook rejects it ('size must be equal or greater than 1'), so the object is not created"
    elif n > MAX_INT32:
        why = (
            f"the field is a 32-bit integer (at most {MAX_INT32:,}): LWS's webhooks cannot decode the object, so it "
            "is not created"
        )
    elif n > MAX_PARALLEL_SIZE:
        why = f"implausibly large (kvlint sizes groups of up to {MAX_PARALLEL_SIZE:,} pods); the group is not sized"
        fix = (
            "give leaderWorkerTemplate.size a realistic value: the number of nodes one engine instance spans"
        )
    else:
        r = int_or_none(replicas)
        if r is None or r * n <= MAX_INT32:
            return ()
        why = (
            f"replicas {r:,} x size {n:,} pods exceeds {MAX_INT32:,}: LWS's validating webhook rejects it ('the "
            "product of replicas and worker replicas must not exceed 2147483647')"
        )
        fix = "lower spec.replicas or leaderWorkerTemplate.size"
    return (
        Finding(
            "KV206", f"invalid value {_shown(v)!r} for leaderWorkerTemplate.size: {why}", at, fix, "error"
        ),
    )


def lws_workloads(doc: Document) -> list[Workload]:
    """LeaderWorkerSet: leader and worker templates. Without a ``leaderTemplate`` the ``workerTemplate`` is the
    leader pod's template too (LWS API, ``LeaderWorkerTemplate.LeaderTemplate`` is optional and the controller's
    ``constructLeaderStatefulSetApplyConfiguration`` falls back to ``WorkerTemplate``): it is read as the leader
    (``LWS_WORKER_INDEX`` 0) and, when ``size`` is above 1, as the workers (index 1). A group of size 1 (the
    default when ``size`` is absent, ``LWS_GROUP_SIZE`` then 1) has no workers, so its ``workerTemplate`` is not
    read as one even beside a ``leaderTemplate`` (``pod_controller.go`` creates no worker StatefulSet). A group
    size LWS refuses, or beyond what kvlint sizes (:func:`size_findings`), gives one workload without containers
    carrying the KV206 finding: no engine is sized on a number no group runs with."""
    spec = get_in(doc.data, "spec")
    lwt = get_in(spec, "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return []
    refused = size_findings(lwt, get_in(spec, "replicas"))
    if refused:
        at = refused[0].loc or doc.loc
        ps = ldict(at, [("containers", llist(at, []), at)])
        w = synthetic_workload(doc, ps, "spec.leaderWorkerTemplate", replicas=None)
        return [replace(w, findings=refused)]
    size = int_or_none(lwt.get("size"))
    replicas = int_or_none(get_in(spec, "replicas"))
    name = doc.name if isinstance(doc.name, str) and doc.name else None
    subdomain = name
    if get_in(spec, "networkConfig", "subdomainPolicy") == "UniquePerReplica" and name:
        subdomain = f"{name}-0"
    address = f"{name}-0.{subdomain}.{doc.namespace or 'default'}" if name else None
    out = []
    # without a leaderTemplate LWS builds the leader pod from the workerTemplate (kubernetes-sigs/lws
    # pkg/controllers/leaderworkerset_controller.go constructLeaderStatefulSetApplyConfiguration, @060ab4da), so
    # that template is read as the leader (worker index 0) and, when the group has workers (size above 1, the
    # default being 1), as the workers too. A group of size 1 has no worker pods, whatever its templates: LWS's pod
    # controller creates no worker StatefulSet then (pkg/controllers/pod_controller.go, "Once size = 1, no need
    # to create worker statefulSets"); an absent size is 1 (the API's default), a placeholder is unknown
    absent = lwt.get("size") is None
    has_workers = size > 1 if size is not None else not absent
    leader_key = "leaderTemplate" if lwt.get("leaderTemplate") is not None else "workerTemplate"
    roles = ((leader_key, "leader"),) + ((("workerTemplate", "worker"),) if has_workers else ())
    env_size = 1 if absent else size
    for key, role in roles:
        tmpl = lwt.get(key)
        ps = get_in(tmpl, "spec")
        if is_pod_spec(ps):
            chain: Chain = [(doc.data, "spec"), (spec, "leaderWorkerTemplate"), (lwt, key), (tmpl, "spec")]
            # LWS puts the group size, the pod's index and the leader's address in every pod's environment
            injected = lws_env(
                env_size, role, size_loc=loc_of(lwt, "size") or loc_of(lwt), leader_address=address
            )
            ps = with_injected_env(
                ps, injected, lws_fields(env_size, role), init_containers=True, operator_first=True
            )
            out.append(make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=size))
    return out
