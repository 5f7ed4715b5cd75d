"""Kthena ``ModelServing`` (workload.serving.volcano.sh, the volcano-sh/kthena operator): the pods of each role.

A ModelServing runs ``spec.replicas`` serving groups of ``spec.template.roles``; a role runs ``replicas``
instances, each an entry pod (``entryTemplate``) and ``workerReplicas`` worker pods (``workerTemplate``), so an
instance is a group of ``workerReplicas + 1`` pods. The controller puts ``GROUP_SIZE`` (that count),
``ENTRY_ADDRESS`` (the entry pod's address) and ``WORKER_INDEX`` (0 for the entry pod) in every container's
environment (volcano-sh/kthena ``pkg/model-serving-controller/utils/utils.go`` ``createCommonEnvVars``,
``pkg/apis/workload/v1alpha1`` ``servinggroup_types.go``, @3cc057284c34469fcb0ed22a12dac84b1d120719); kvlint adds
``GROUP_SIZE`` and ``WORKER_INDEX`` (the address is only known in the cluster). Entry and worker pods are
paired as a leader and its workers, as for a LeaderWorkerSet.
"""

from __future__ import annotations

from dataclasses import replace

from kvlint.source import LDict, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import get_in, int_or_none, make_workload, with_injected_env

__all__ = ["model_serving_workloads"]


def model_serving_workloads(doc: Document) -> list[Workload]:
    """One workload per pod template of each role of a ModelServing: the entry pod (``role="leader"`` when the
    role has workers) and the worker pod (``role="worker"``, its ``leader`` the entry workload), each with the
    group size; empty when the object has no ``spec.template.roles`` list (the structural search then reads it).
    """
    roles = get_in(doc.data, "spec", "template", "roles")
    if not isinstance(roles, list):
        return []
    out: list[Workload] = []
    for i, role in enumerate(roles):
        if not isinstance(role, dict):
            continue
        base = f"spec.template.roles[{i}]"
        replicas = int_or_none(role.get("replicas"))
        workers = int_or_none(role.get("workerReplicas")) or 0
        worker_tmpl = role.get("workerTemplate")
        has_workers = workers > 0 and isinstance(worker_tmpl, dict)
        size = workers + 1 if has_workers else None
        size_loc = loc_of(role, "workerReplicas")
        leader: Workload | None = None
        for key, role_name, index in (("entryTemplate", "leader", "0"), ("workerTemplate", "worker", None)):
            tmpl = role.get(key)
            ps = get_in(tmpl, "spec")
            if not isinstance(ps, LDict) or (role_name == "worker" and not has_workers):
                continue
            env = [("GROUP_SIZE", str(workers + 1), size_loc)]
            if index is not None:
                env.append(("WORKER_INDEX", index, loc_of(role, key)))
            ps = with_injected_env(ps, env)
            w = make_workload(
                doc,
                ps,
                [],
                path=f"{base}.{key}",
                replicas=replicas,
                role=role_name if has_workers else None,
                group_size=size,
                extra_meta=tmpl.get("metadata") if isinstance(tmpl, dict) else None,
            )
            if role_name == "leader":
                leader = w
            elif leader is not None:
                w = replace(w, leader=leader)
            out.append(w)
    return out
