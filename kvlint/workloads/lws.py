"""LeaderWorkerSet (leaderworkerset.x-k8s.io): the leader and worker templates, with the group size.

LWS adds ``LWS_LEADER_ADDRESS``, ``LWS_GROUP_SIZE`` and ``LWS_WORKER_INDEX`` to the environment of every pod of a
group (kubernetes-sigs/lws ``pkg/utils/pod``); kvlint adds ``LWS_GROUP_SIZE`` (= ``leaderWorkerTemplate.size``), the
one of them that is the same in every pod, so ``--nnodes $(LWS_GROUP_SIZE)`` and ``$((LWS_GROUP_SIZE * N))`` read.
"""

from __future__ import annotations

from kvlint.source import loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import Chain, get_in, int_or_none, is_pod_spec, make_workload, with_injected_env


def lws_workloads(doc: Document) -> list[Workload]:
    """LeaderWorkerSet: leader and worker templates (leader only when declared)."""
    spec = get_in(doc.data, "spec")
    lwt = get_in(spec, "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return []
    size = int_or_none(lwt.get("size"))
    replicas = int_or_none(get_in(spec, "replicas"))
    out = []
    for key, role in (("leaderTemplate", "leader"), ("workerTemplate", "worker")):
        tmpl = lwt.get(key)
        ps = get_in(tmpl, "spec")
        if is_pod_spec(ps):
            chain: Chain = [(doc.data, "spec"), (spec, "leaderWorkerTemplate"), (lwt, key), (tmpl, "spec")]
            if size is not None:
                # LWS puts LWS_GROUP_SIZE (the group's pod count) in every pod's environment
                ps = with_injected_env(ps, [("LWS_GROUP_SIZE", str(size), loc_of(lwt, "size"))])
            out.append(make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=size))
    return out
