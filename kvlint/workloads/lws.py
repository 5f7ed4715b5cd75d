"""LeaderWorkerSet (leaderworkerset.x-k8s.io): the leader and worker templates, with the group size."""

from __future__ import annotations

from kvlint.types import Document, Workload
from kvlint.workloads.base import Chain, get_in, int_or_none, is_pod_spec, make_workload


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
            out.append(make_workload(doc, ps, chain, replicas=replicas, role=role, group_size=size))
    return out
