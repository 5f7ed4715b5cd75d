"""RoleBasedGroup (workloads.x-k8s.io, the sgl-project/rbg operator): the pods of each role.

A role (``spec.roles[i]``) runs either one pod per instance (``standalonePattern``) or a leader and workers
per instance (``leaderWorkerPattern``, ``size`` pods per group). Its pod template is ``template``, or
``templateRef: {name, patch}``: the ``spec.roleTemplates`` entry of that name with ``patch`` (a partial pod
template) strategically merged over it; a leader/worker group applies ``leaderTemplatePatch`` /
``workerTemplatePatch`` over the role's template (rbg ``api/workloads/v1alpha2`` types, examples
``examples/inference/ecosystem/dynamo/agg.yaml``, ``examples/inference/agg-leader-worker.yaml``). The operator
puts ``RBG_LWP_GROUP_SIZE`` (the group size) in the environment of a group's pods, as the examples'
``--nnodes $(RBG_LWP_GROUP_SIZE)`` rely on; kvlint adds it.
"""

from __future__ import annotations

from typing import Any

from kvlint.source import LDict, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import get_in, int_or_none, make_workload, with_injected_env
from kvlint.workloads.merge import strategic_merge

__all__ = ["rbg_set_workloads", "rbg_workloads"]


def _template(role: dict, pattern: dict, templates: dict[str, Any]) -> Any:
    """The role's pod template (``metadata`` + ``spec``): its own, or the named role template patched."""
    tmpl = pattern.get("template")
    if isinstance(tmpl, dict):
        return tmpl
    ref = pattern.get("templateRef") or role.get("templateRef")
    if isinstance(ref, dict) and isinstance(ref.get("name"), str) and ref["name"] in templates:
        base = templates[str(ref["name"])]
        patch = ref.get("patch")
        return strategic_merge(base, patch) if isinstance(patch, dict) else base
    return None


def rbg_workloads(doc: Document) -> list[Workload]:
    """One workload per pod template of each role (leader and worker for a leader/worker pattern); empty when
    the object does not have the v1alpha2 role patterns (then the structural search reads it)."""
    return _roles_workloads(doc, get_in(doc.data, "spec"), "spec")


def rbg_set_workloads(doc: Document) -> list[Workload]:
    """A ``RoleBasedGroupSet`` (workloads.x-k8s.io): its ``spec.groupTemplate.spec`` is the spec of the
    RoleBasedGroups its controller creates (``RoleBasedGroupSetSpec.GroupTemplate``, rbg
    ``api/workloads/v1alpha2/rolebasedgroupset_types.go``; ``RoleBasedGroupSetReconciler.scaleUp`` creates
    them, the set as controlling owner), read as :func:`rbg_workloads` reads a RoleBasedGroup's ``spec``;
    empty without the v1alpha2 role patterns (then the structural search reads it)."""
    return _roles_workloads(doc, get_in(doc.data, "spec", "groupTemplate", "spec"), "spec.groupTemplate.spec")


def _roles_workloads(doc: Document, spec: Any, at: str) -> list[Workload]:
    """The workloads of the roles of the RoleBasedGroup spec ``spec``, found at path ``at`` of ``doc``."""
    roles = get_in(spec, "roles")
    if not isinstance(roles, list):
        return []
    templates: dict[str, Any] = {}
    given = get_in(spec, "roleTemplates")
    for t in given if isinstance(given, list) else []:  # a scalar here is refused by the API server, not read
        if isinstance(t, dict) and t.get("name") and isinstance(t.get("template"), dict):
            templates[str(t["name"])] = t["template"]
    out: list[Workload] = []
    for i, role in enumerate(roles):
        if not isinstance(role, dict):
            continue
        replicas = int_or_none(role.get("replicas"))
        base = f"{at}.roles[{i}]"
        sp, lwp = role.get("standalonePattern"), role.get("leaderWorkerPattern")
        if isinstance(sp, dict):
            tmpl = _template(role, sp, templates)
            ps = get_in(tmpl, "spec")
            if isinstance(ps, LDict):
                out.append(
                    make_workload(
                        doc,
                        ps,
                        [],
                        path=f"{base}.standalonePattern",
                        replicas=replicas,
                        extra_meta=tmpl.get("metadata"),
                    )
                )
        elif isinstance(lwp, dict):
            tmpl = _template(role, lwp, templates)
            if not isinstance(tmpl, dict):
                continue
            size = int_or_none(lwp.get("size"))
            leader: Workload | None = None
            for key, role_name in (("leaderTemplatePatch", "leader"), ("workerTemplatePatch", "worker")):
                patch = lwp.get(key)
                merged = strategic_merge(tmpl, patch) if isinstance(patch, dict) else tmpl
                ps = get_in(merged, "spec")
                if not isinstance(ps, LDict):
                    continue
                if size is not None:
                    ps = with_injected_env(ps, [("RBG_LWP_GROUP_SIZE", str(size), loc_of(lwp, "size"))])
                w = make_workload(
                    doc,
                    ps,
                    [],
                    path=f"{base}.leaderWorkerPattern.{role_name}",
                    replicas=replicas,
                    role=role_name,
                    group_size=size,
                    extra_meta=merged.get("metadata") if isinstance(merged, dict) else None,
                )
                if role_name == "leader":
                    leader = w
                elif leader is not None:
                    from dataclasses import replace

                    w = replace(w, leader=leader)
                out.append(w)
    return out
