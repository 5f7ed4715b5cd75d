"""LeaderWorkerSet (leaderworkerset.x-k8s.io): the leader and worker templates, with the group size.

LWS adds ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX`` to the environment of every container
of a group's pods, unless the container sets the name itself (kubernetes-sigs/lws ``pkg/utils/pod/pod_utils.go``
``AddLWSVariables``, @060ab4da): the group size (``leaderWorkerTemplate.size``), the pod's index in its group (0
for the leader, 1 to size - 1 for the workers) and ``<lws name>-<group index>.<subdomain>.<namespace>`` (the
subdomain is the LeaderWorkerSet's name unless ``networkConfig.subdomainPolicy`` is ``UniquePerReplica``).
kvlint adds all three to the templates it checks (:func:`lws_env`), so ``--nnodes $(LWS_GROUP_SIZE)``,
``$((LWS_GROUP_SIZE * N))``, ``--node-rank $(LWS_WORKER_INDEX)`` and ``--dist-init-addr $(LWS_LEADER_ADDRESS):N``
read. A template stands for several pods: the worker template gets the first worker's index, 1, and the address
is group 0's; the index and address change no memory figure.
"""

from __future__ import annotations

from kvlint.source import Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import Chain, get_in, int_or_none, is_pod_spec, make_workload, with_injected_env


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


def lws_workloads(doc: Document) -> list[Workload]:
    """LeaderWorkerSet: leader and worker templates (leader only when declared)."""
    spec = get_in(doc.data, "spec")
    lwt = get_in(spec, "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return []
    size = int_or_none(lwt.get("size"))
    replicas = int_or_none(get_in(spec, "replicas"))
    name = doc.name if isinstance(doc.name, str) and doc.name else None
    subdomain = name
    if get_in(spec, "networkConfig", "subdomainPolicy") == "UniquePerReplica" and name:
        subdomain = f"{name}-0"
    address = f"{name}-0.{subdomain}.{doc.namespace or 'default'}" if name else None
    out = []
    for key, role in (("leaderTemplate", "leader"), ("workerTemplate", "worker")):
        tmpl = lwt.get(key)
        ps = get_in(tmpl, "spec")
        if is_pod_spec(ps):
            chain: Chain = [(doc.data, "spec"), (spec, "leaderWorkerTemplate"), (lwt, key), (tmpl, "spec")]
            # LWS puts the group size, the pod's index and the leader's address in every pod's environment
            injected = lws_env(
                size, role, size_loc=loc_of(lwt, "size") or loc_of(lwt), leader_address=address
            )
            ps = with_injected_env(ps, injected)
            out.append(make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=size))
    return out
