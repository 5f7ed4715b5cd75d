"""RoleBasedGroup (workloads.x-k8s.io, the sgl-project/rbg operator): the pods of each role.

A role (``spec.roles[i]``) runs either one pod per instance (``standalonePattern``), a leader and workers
per instance (``leaderWorkerPattern``, ``size`` pods per group), or pods of named components per instance
(``customComponentsPattern``, each component its own pod template). Its pod template is ``template``, or
``templateRef: {name, patch}``: the ``spec.roleTemplates`` entry of that name with ``patch`` (a partial pod
template) strategically merged over it; a leader/worker group applies ``leaderTemplatePatch`` /
``workerTemplatePatch`` over the role's template (rbg ``api/workloads/v1alpha2`` types, examples
``examples/inference/ecosystem/dynamo/agg.yaml``, ``examples/inference/agg-leader-worker.yaml``). The operator
puts ``RBG_LWP_GROUP_SIZE`` (the group size) and ``RBG_LWP_WORKER_INDEX`` (the pod's index in its group, 0 for
the leader) in the environment of a group's pods (rbg ``api/workloads/constants/env.go`` ``EnvRBGSize``,
``EnvRBGIndex``, @2100087), as the examples' ``--nnodes $(RBG_LWP_GROUP_SIZE) --node-rank $(RBG_LWP_WORKER_INDEX)``
rely on; kvlint adds both, the worker template with the first worker's index, 1 (as for a LeaderWorkerSet).
"""

from __future__ import annotations

from typing import Any

from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Workload
from kvlint.workloads.base import get_in, int_or_none, llist, located_copy, make_workload, with_injected_env
from kvlint.workloads.fields import as_go_decodes
from kvlint.workloads.merge import strategic_merge

__all__ = ["rbg_set_workloads", "rbg_workloads"]


def _patched(tmpl: Any, patch: dict) -> Any:
    """Pod template ``tmpl`` with ``patch`` applied as RBG applies it (``api/workloads/v1alpha2/helper.go``
    ``applyStrategicMergePatch``): a strategic merge patch, directives obeyed
    (:func:`kvlint.workloads.merge.patch_with_directives`), written to JSON and decoded with Go's
    ``encoding/json``, which matches keys to fields case-insensitively (:func:`kvlint.workloads.fields.as_go_decodes`)."""
    return as_go_decodes(strategic_merge(tmpl, patch, directives=True), "V1PodTemplateSpec")


def _template(role: dict, pattern: dict, templates: dict[str, Any]) -> Any:
    """The role's pod template (``metadata`` + ``spec``): its own, or the named role template patched."""
    tmpl = pattern.get("template")
    if isinstance(tmpl, dict):
        return tmpl
    ref = pattern.get("templateRef") or role.get("templateRef")
    name = ref.get("name") if isinstance(ref, dict) else None
    if isinstance(name, str) and name in templates:
        assert isinstance(ref, dict)
        base = templates[name]
        patch = ref.get("patch")
        return _patched(base, patch) if isinstance(patch, dict) else base
    return None


#: The RBG API version whose roles are written without patterns (``api/workloads/v1alpha1``), still served.
V1ALPHA1 = "workloads.x-k8s.io/v1alpha1"


def _v1alpha1(doc: Document) -> bool:
    return get_in(doc.data, "apiVersion") == V1ALPHA1


def _as_v1alpha2_role(role: dict) -> dict:
    """A v1alpha1 role in the v1alpha2 form, as RBG's conversion webhook writes it
    (``api/workloads/v1alpha1/rolebasedgroup_conversion.go`` ``convertRoleV1alpha1ToV2``): ``leaderWorkerSet``
    -> ``leaderWorkerPattern`` (its ``patchLeaderTemplate``/``patchWorkerTemplate`` as the leader/worker
    patches), else ``components`` -> ``customComponentsPattern`` (``name``, ``size``, ``serviceName``,
    ``template``), else ``standalonePattern``; the ``template``, or ``templateRef`` with the role's
    ``templatePatch`` as its patch, is the pattern's template. A role already in the v1alpha2 form is
    returned as it is."""
    if any(k in role for k in ("standalonePattern", "leaderWorkerPattern", "customComponentsPattern")):
        return role
    source: dict[str, Any] = {}
    if isinstance(role.get("template"), dict):
        source["template"] = role["template"]
    elif isinstance(role.get("templateRef"), dict):
        ref = {"name": role["templateRef"].get("name")}
        if isinstance(role.get("templatePatch"), dict) and role["templatePatch"]:
            ref["patch"] = role["templatePatch"]
        source["templateRef"] = ref
    out = {k: v for k, v in role.items() if k not in ("template", "templateRef", "templatePatch")}
    lws, comps = role.get("leaderWorkerSet"), role.get("components")
    if isinstance(lws, dict):
        lwp = {**source, "size": lws.get("size")}
        for old, new in (
            ("patchLeaderTemplate", "leaderTemplatePatch"),
            ("patchWorkerTemplate", "workerTemplatePatch"),
        ):
            if lws.get(old) is not None:
                lwp[new] = lws[old]
        out["leaderWorkerPattern"] = lwp
    elif isinstance(comps, list) and comps:
        keep = ("name", "size", "serviceName", "template")
        out["customComponentsPattern"] = {
            "components": [{k: c[k] for k in keep if k in c} if isinstance(c, dict) else c for c in comps]
        }
    else:
        out["standalonePattern"] = source
    return out


def rbg_workloads(doc: Document) -> list[Workload]:
    """One workload per pod template of each role (leader and worker for a leader/worker pattern); a v1alpha1
    object's roles read in their v1alpha2 form (:func:`_as_v1alpha2_role`); empty when the object does not
    have the role patterns (then the structural search reads it)."""
    return _roles_workloads(doc, get_in(doc.data, "spec"), "spec", v1alpha1=_v1alpha1(doc))


def rbg_set_workloads(doc: Document) -> list[Workload]:
    """A ``RoleBasedGroupSet`` (workloads.x-k8s.io): its ``spec.groupTemplate.spec`` is the spec of the
    RoleBasedGroups its controller creates (``RoleBasedGroupSetSpec.GroupTemplate``, rbg
    ``api/workloads/v1alpha2/rolebasedgroupset_types.go``; ``RoleBasedGroupSetReconciler.scaleUp`` creates
    them, the set as controlling owner), read as :func:`rbg_workloads` reads a RoleBasedGroup's ``spec``;
    empty without the role patterns (then the structural search reads it). In v1alpha1 the group's spec is
    ``spec.template`` (``api/workloads/v1alpha1/rolebasedgroupset_types.go``), its roles read in the v1alpha2
    form as a v1alpha1 RoleBasedGroup's are."""
    if _v1alpha1(doc):
        return _roles_workloads(doc, get_in(doc.data, "spec", "template"), "spec.template", v1alpha1=True)
    return _roles_workloads(doc, get_in(doc.data, "spec", "groupTemplate", "spec"), "spec.groupTemplate.spec")


def _with_engine_runtimes(ps: Any, role: dict) -> Any:
    """``ps`` (a role's PodSpec) as RBG completes it from the role's ``engineRuntimes``: each
    ``engineRuntimes[].containers[]`` entry's ``env`` and ``args`` are appended to the container of the same
    name (rbg ``pkg/discovery/sidecar_builder.go`` ``SidecarBuilder.injectRuntime``, "override container based
    on rbg cr"; RBG does so when the runtime's ClusterEngineRuntimeProfile, a cluster object kvlint does not
    have, lists that container name, and kvlint assumes it does: otherwise a role could change its engine's
    arguments where kvlint did not read them). A leader/worker role's workers get none (``pkg/reconciler``
    ``lws_reconciler.go``, ``roleinstanceset_reconciler.go``: the worker's pod reconciler has no ``sidecar``
    injector). The containers the profile itself injects are not known here.
    ``ps`` is returned unchanged when nothing applies; the loaded objects are never changed."""
    runtimes = role.get("engineRuntimes")
    containers = ps.get("containers") if isinstance(ps, LDict) else None
    if not isinstance(runtimes, list) or not runtimes or not isinstance(containers, LList):
        return ps
    overrides: dict[str, list[dict]] = {}
    for rt in runtimes:
        cs = rt.get("containers") if isinstance(rt, dict) else None
        for c in cs if isinstance(cs, list) else []:
            if isinstance(c, dict) and isinstance(c.get("name"), str):
                overrides.setdefault(c["name"], []).append(c)
    new = list(containers)
    for i, c in enumerate(containers):
        name = c.get("name") if isinstance(c, LDict) else None
        if not isinstance(name, str) or name not in overrides:
            continue
        mine = overrides.pop(name)  # RBG changes the first container of that name only
        assert isinstance(c, LDict)
        c2 = located_copy(c)
        for key in ("env", "args"):
            extra = [
                (v, loc_of(o[key], j) or loc_of(o, key))
                for o in mine
                if isinstance(o.get(key), list)
                for j, v in enumerate(o[key])
            ]
            if not extra:
                continue
            old = c.get(key)
            old_items = [(v, loc_of(old, j)) for j, v in enumerate(old)] if isinstance(old, list) else []
            c2[key] = llist(loc_of(c, key) or extra[0][1] or c.loc, [*old_items, *extra])
        new[i] = c2
    out = located_copy(ps)
    out["containers"] = llist(containers.loc, list(zip(new, containers.locs, strict=False)))
    return out


def _components_workloads(
    doc: Document, pattern: dict, at: str, replicas: int | None, role: dict
) -> list[Workload]:
    """The pods of a role's ``customComponentsPattern`` (found at path ``at``): one workload per
    ``components[j]``, its ``template`` (a pod template) with the component's ``labels`` and ``annotations``,
    which RBG merges into every pod of the component over the template's (rbg ``api/workloads/v1alpha2``
    ``CustomComponentsPattern``, ``InstanceComponent``: RBG runs the role as a RoleInstanceSet whose
    RoleInstances create those pods)."""
    comps = pattern.get("components")
    out: list[Workload] = []
    for j, comp in enumerate(comps if isinstance(comps, list) else []):
        tmpl = comp.get("template") if isinstance(comp, dict) else None
        ps = _with_engine_runtimes(tmpl.get("spec"), role) if isinstance(tmpl, dict) else None
        if not isinstance(ps, LDict):
            continue
        assert isinstance(comp, dict) and isinstance(tmpl, dict)
        tmeta = tmpl.get("metadata")
        extra: dict[str, Any] = {}
        for key in ("annotations", "labels"):
            merged: dict[Any, Any] = {}
            for src in (tmeta.get(key) if isinstance(tmeta, dict) else None, comp.get(key)):
                if isinstance(src, dict):
                    merged.update(src)
            extra[key] = merged
        out.append(
            make_workload(doc, ps, [], path=f"{at}.components[{j}]", replicas=replicas, extra_meta=extra)
        )
    return out


def _roles_workloads(doc: Document, spec: Any, at: str, *, v1alpha1: bool = False) -> list[Workload]:
    """The workloads of the roles of the RoleBasedGroup spec ``spec``, found at path ``at`` of ``doc``
    (``v1alpha1``: its roles in the v1alpha1 form)."""
    roles = get_in(spec, "roles")
    if not isinstance(roles, list):
        return []
    templates: dict[str, Any] = {}
    declared = get_in(spec, "roleTemplates")
    for t in declared if isinstance(declared, list) else []:
        if (
            isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and t["name"]
            and isinstance(t.get("template"), dict)
        ):
            templates[str(t["name"])] = t["template"]
    out: list[Workload] = []
    for i, role in enumerate(roles):
        if not isinstance(role, dict):
            continue
        if v1alpha1:
            role = _as_v1alpha2_role(role)
        replicas = int_or_none(role.get("replicas"))
        base = f"{at}.roles[{i}]"
        sp, lwp = role.get("standalonePattern"), role.get("leaderWorkerPattern")
        ccp = role.get("customComponentsPattern")
        if isinstance(ccp, dict):
            out.extend(_components_workloads(doc, ccp, f"{base}.customComponentsPattern", replicas, role))
        if isinstance(sp, dict):
            tmpl = _template(role, sp, templates)
            ps = _with_engine_runtimes(get_in(tmpl, "spec"), role)
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
                merged = _patched(tmpl, patch) if isinstance(patch, dict) else tmpl
                ps = get_in(merged, "spec")
                if role_name == "leader":  # RBG injects the engine runtimes into the leader's pods only
                    ps = _with_engine_runtimes(ps, role)
                if not isinstance(ps, LDict):
                    continue
                size_at = loc_of(lwp, "size") or loc_of(role, "leaderWorkerPattern")
                injected: list[tuple[str, str, Loc | None]] = []
                if size is not None:
                    injected.append(("RBG_LWP_GROUP_SIZE", str(size), size_at))
                # the pod's index in its group, 0 for the leader: the first worker's, 1, for the worker template
                injected.append(("RBG_LWP_WORKER_INDEX", "0" if role_name == "leader" else "1", size_at))
                ps = with_injected_env(ps, injected)
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
