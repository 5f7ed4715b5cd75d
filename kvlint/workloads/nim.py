"""NVIDIA NIM Operator ``NIMService`` (apps.nvidia.com): the pod the operator creates."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.source import LDict, Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.values import digits
from kvlint.wording import count, idle
from kvlint.workloads.base import (
    get_in,
    int_or_none,
    ldict,
    llist,
    located_copy,
    synthetic_workload,
)
from kvlint.workloads.dra import GPU_DEVICE_CLASS, Claims

#: NIMCaches among the inputs by (namespace, name) (:class:`kvlint.workloads.find._Joined`)
NimCaches = Mapping[tuple[str | None, str], Document]


def nim_service_workloads(
    doc: Document, caches: NimCaches | None = None, claims: Claims | None = None
) -> list[Workload]:
    """NVIDIA NIM operator ``NIMService`` (apps.nvidia.com) -> its pod: one container of
    ``spec.image.repository:tag`` with ``spec.resources``, and the object's ``nodeSelector``,
    ``tolerations`` and ``affinity`` (k8s-nim-operator api/apps/v1alpha1 nimservice_types.go
    ``NIMServiceSpec``). NIM images start their own launcher (not a vLLM command line), so the engine
    settings stay unread; placement works as for any PodSpec. ``caches``: the NIMCaches among the inputs, the
    one ``storage.nimCache.name`` names (in the same namespace) said in the note (:func:`nim_cache_clause`);
    ``claims``: the DRA ResourceClaims and ResourceClaimTemplates among the inputs, whose GPUs the
    ``draResources`` naming them give the pod (:func:`dra_gpu_count`)."""
    return _nim_workloads(doc, get_in(doc.data, "spec"), "spec", caches, claims)


def nim_pipeline_workloads(
    doc: Document, caches: NimCaches | None = None, claims: Claims | None = None
) -> list[Workload]:
    """NVIDIA NIM operator ``NIMPipeline`` (apps.nvidia.com): each ``spec.services[i].spec`` is the spec of a
    NIMService the pipeline's controller creates, the pipeline as controlling owner (k8s-nim-operator
    api/apps/v1alpha1 nimpipeline_types.go ``NIMServicePipelineSpec``; internal/controller
    nimpipeline_controller.go ``reconcileNIMService``), read as :func:`nim_service_workloads` reads a
    NIMService's ``spec``; only a service with ``enabled: true`` is created and read (``reconcileNIMPipeline``:
    ``enabled := service.Enabled != nil && *service.Enabled``, and the CRD gives ``enabled`` no default; the
    others are deleted if they exist)."""
    services = get_in(doc.data, "spec", "services")
    out: list[Workload] = []
    for i, svc in enumerate(services if isinstance(services, list) else []):
        if isinstance(svc, dict) and svc.get("enabled") is True:
            out.extend(_nim_workloads(doc, svc.get("spec"), f"spec.services[{i}].spec", caches, claims))
    return out


def _nim_workloads(
    doc: Document, spec: Any, at: str, caches: NimCaches | None = None, claims: Claims | None = None
) -> list[Workload]:
    """The pod of the NIMService spec ``spec``, found at path ``at`` of ``doc`` (see
    :func:`nim_service_workloads`): one container of ``spec.image``, ``spec.resources`` and ``spec.env``, with
    ``spec.command``/``spec.args`` when a ``command`` replaces the NIM launcher (k8s-nim-operator
    api/apps/v1alpha1 nimservice_types.go ``GetCommand``, ``GetArgs``, ``GetEnv``: the operator passes them to
    the container as they are; ``args`` alone go to the launcher, which kvlint does not read). A container whose
    ``command`` replaces the launcher is read as any container is; otherwise the workload carries the NIM note
    (:func:`nim_note`) with what kvlint read of the object (:func:`_nim_facts`)."""
    img = get_in(spec, "image")
    if not isinstance(spec, dict) or not isinstance(img, dict) or not img.get("repository"):
        return []
    rloc = loc_of(img, "repository")
    image = str(img["repository"]) + (f":{img['tag']}" if img.get("tag") else "")
    items: list[tuple[str, Any, Loc | None]] = [("name", "nim", rloc), ("image", image, rloc)]
    own_command = isinstance(spec.get("command"), list) and bool(spec["command"])
    keys = ("command", "args", "env", "resources") if own_command else ("env", "resources")
    cache = _named_cache(doc, spec, caches)
    added = _operator_gpus(spec, cache) if own_command and cache is not None else None
    for key in keys:
        if key == "resources" and added is not None and added[0] is not None:
            items.append((key, _with_gpus(spec.get(key), added[0], added[2]), loc_of(spec, key) or added[2]))
        elif isinstance(spec.get(key), list if key != "resources" else dict):
            items.append((key, spec[key], loc_of(spec, key)))
    container = ldict(loc_of(spec, "image") or rloc, items)
    pod_items: list[tuple[str, Any, Loc | None]] = [
        ("containers", llist(container.loc, [(container, container.loc)]), container.loc)
    ]
    for key in ("nodeSelector", "tolerations", "affinity"):
        if spec.get(key) is not None:
            pod_items.append((key, spec[key], loc_of(spec, key)))
    ps = ldict(loc_of(spec) or doc.loc, pod_items)
    why = None
    if spec.get("nodeSelector") is None and spec.get("affinity") is None:
        why = "NIMService sets no spec.nodeSelector or spec.affinity naming the GPU"
    w = synthetic_workload(doc, ps, at, replicas=int_or_none(spec.get("replicas")), accelerator_why=why)
    dra = _dra_devices(spec.get("draResources"))
    if dra is not None:
        w = replace(w, gpu_source=f"spec.draResources ({dra})")
    if own_command:
        if added is not None and added[0] is None:
            w = replace(w, gpu_source=added[1])  # the operator requests them, how many is not said
        return [w]
    gpu_check = nim_gpu_count(w, spec, claims)
    if dra is not None and "ResourceClaim" in dra:
        named = dra_gpu_count(spec.get("draResources"), claims, w.namespace)
        if named is not None:
            dra += f" ({named} {GPU_DEVICE_CLASS} device{'s' if named > 1 else ''} in all, from those among the inputs)"
    facts = _nim_facts(w, spec, image, dra)
    cache_check = None
    if cache is not None:
        facts += (
            f", {nim_cache_clause(cache, _gpus_per_pod(w), profile_named=_named_profile(spec) is not None)}"
        )
        if gpu_check is None:
            cache_check = nim_cache_gpu_check(cache, w)
    note = nim_note(
        "NIMService", image, rloc, facts, profile_unsaid(_named_profile(spec), image, spec.get("env"))
    )
    checks = tuple(f for f in (gpu_check, cache_check) if f is not None)
    return [replace(w, findings=(*checks, note))]


def _tp_number(raw: Any) -> int | None:
    """A tensor parallel size as the NIM operator's fields hold it (a string, ``"2"``, or a number), or None: a
    string of ASCII digits only (:func:`kvlint.values.digits`; ``str.isdigit`` also takes ``"²"``, which ``int()``
    refuses), of at most six; else :func:`~kvlint.workloads.base.int_or_none`."""
    return digits(raw) if isinstance(raw, str) and len(raw) < 7 else int_or_none(raw)


def _named_cache(doc: Document, spec: dict, caches: NimCaches | None) -> Document | None:
    """The NIMCache among the inputs that ``storage.nimCache.name`` names: of the NIMService's namespace (the
    operator looks it up there), or of any namespace when the NIMService names none; None when not among them."""
    name = get_in(spec, "storage", "nimCache", "name")
    if not caches or not isinstance(name, str):
        return None
    cache = caches.get((doc.namespace, name))
    if cache is None and doc.namespace is None:
        cache = next((d for (_ns, n), d in caches.items() if n == name), None)
    return cache


def _cached_profile(cache: Document, profile: str) -> tuple[bool, int | None, str]:
    """Whether the NIMCache ``cache`` holds the profile named ``profile``, the tensor parallel size the operator
    reads of it, and where kvlint found it, in words.

    The operator looks the profile up in the NIMCache's ``status.profiles`` (k8s-nim-operator internal/controller/
    platform/standalone/nimservice.go ``getNIMCacheProfile``: an entry of that ``name``) and takes its GPUs from
    that entry's ``config`` tags ``tensorParallelism``, else ``tp`` (internal/utils/utils.go
    ``GetTensorParallelismByProfileTags``), 1 when neither is there (``addGPUResources``). A manifest seldom
    holds the status (when it does, a profile it does not list is not cached, whatever the spec says); without
    it, a profile ``spec.source.ngc.model.profiles`` lists is the one the NIMCache's job caches
    (nimcache_types.go ``ModelSpec.Profiles``), its tensor parallel size then read from its name's ``tp<N>``
    (:data:`_PROFILE_TP`; unknown, None, for a profile named by its id)."""
    statuses = get_in(cache.data, "status", "profiles")
    for entry in statuses if isinstance(statuses, list) else ():
        if isinstance(entry, dict) and entry.get("name") == profile:
            config = entry.get("config")
            raw = None
            for key in ("tensorParallelism", "tp"):
                if isinstance(config, dict) and key in config:
                    raw = config[key]
                    break
            if raw is None:
                return True, 1, f"NIMCache {cache.name} status.profiles (no tp tag: 1)"
            tp = _tp_number(raw)
            return True, tp, f"NIMCache {cache.name} status.profiles"
    if isinstance(statuses, list) and statuses:
        return False, None, ""  # the operator reads only the status: a profile it does not list is not cached
    listed = get_in(cache.data, "spec", "source", "ngc", "model", "profiles")
    if isinstance(listed, list) and profile in listed:
        m = _PROFILE_TP.search(profile.lower()) if len(profile) <= 200 else None
        return True, int(m.group(1)) if m else None, f"NIMCache {cache.name} spec.source.ngc.model.profiles"
    return False, None, ""


def _operator_gpus(spec: dict, cache: Document) -> tuple[int | None, str, Loc | None] | None:
    """The ``nvidia.com/gpu`` the NIM operator adds to the pod of a NIMService, as ``(count, why, where)``; None
    when it adds none. The count is None when the operator adds some but kvlint cannot tell how many.

    The operator adds them (k8s-nim-operator internal/controller/platform/standalone/nimservice.go, the
    reconcile's NIMCache branch and ``addGPUResources``, main of 2026-08) whatever the container's command, when
    all hold: ``storage.nimCache.profile`` names a profile (it also becomes ``NIM_MODEL_PROFILE``); the NIMCache
    is an NGC one without ``modelEndpoint`` (nimcache_types.go ``IsOptimizedNIM``); that profile is cached
    (:func:`_cached_profile`); ``spec.draResources`` is empty; ``spec.resources`` requests and limits name no
    ``nvidia.com/gpu``. The count is ``multiNode.parallelism.tensor`` on a multi-node NIMService, else the
    cached profile's tensor parallel size."""
    store = get_in(spec, "storage", "nimCache")
    profile = get_in(store, "profile")
    if not isinstance(profile, str) or not profile or not isinstance(store, dict):
        return None
    ngc = get_in(cache.data, "spec", "source", "ngc")
    if not isinstance(ngc, dict) or ngc.get("modelEndpoint") is not None:
        return None
    dra = spec.get("draResources")
    if isinstance(dra, list) and dra:
        return None
    res = spec.get("resources")
    for section in ("requests", "limits"):
        block = get_in(res, section)
        if isinstance(block, dict) and NVIDIA_GPU in block:
            return None
    cached, tp, where = _cached_profile(cache, profile)
    if not cached:
        return None
    if spec.get("multiNode") is not None:
        tp = int_or_none(get_in(spec, "multiNode", "parallelism", "tensor"))
        where += ", multiNode.parallelism.tensor"
    from kvlint.engines.options import MAX_PARALLEL_SIZE

    count = tp if tp is not None and 0 < tp <= MAX_PARALLEL_SIZE else None
    said = f"{count}" if count is not None else "the profile's tensor parallel size"
    why = (
        f"the NIM operator: storage.nimCache.profile {profile} is cached ({where}), so it sets the pod's "
        f"{NVIDIA_GPU} to {said} (k8s-nim-operator nimservice.go addGPUResources)"
    )
    return count, why, loc_of(store, "profile")


def _with_gpus(resources: Any, count: int, loc: Loc | None) -> LDict:
    """``spec.resources`` with ``nvidia.com/gpu: count`` in its requests and limits, as the NIM operator writes
    them (``addGPUResources``), located at ``loc`` (the ``storage.nimCache.profile`` that decides them); the
    object's own mappings are copied, never changed."""
    out = located_copy(resources, loc) if isinstance(resources, LDict) else ldict(loc, [])
    for section in ("requests", "limits"):
        block = out.get(section)
        sec = located_copy(block, loc) if isinstance(block, LDict) else ldict(loc, [])
        sec[NVIDIA_GPU] = count
        sec.locs[NVIDIA_GPU] = sec.key_locs[NVIDIA_GPU] = loc  # type: ignore[assignment]
        out[section] = sec
        if loc is not None:
            out.locs.setdefault(section, loc)
    return out


def _cache_tp(cache: Document) -> tuple[int | None, Loc | None]:
    """The ``spec.source.ngc.model.tensorParallelism`` of the NIMCache ``cache`` ("the minimum GPUs required" of
    the profiles it caches; k8s-nim-operator nimcache_types.go ``ModelSpec.TensorParallelism``, a string) and where
    it is; ``(None, None)`` when it names none or not one kvlint reads (ASCII digits, as :func:`nim_cache_clause`
    reads it). A cache naming its ``profiles`` caches those, whatever its other fields say (nimcache_types.go: "When
    these are provided, rest of the model parameters for profile selection are ignored"; the NIMCache controller's
    ``getSelectedProfiles`` returns them as given, and later releases' validation refuses the other fields beside
    them): ``(None, None)`` then."""
    model = get_in(cache.data, "spec", "source", "ngc", "model")
    profiles = get_in(model, "profiles")
    if isinstance(profiles, list) and profiles:
        return None, None
    raw = get_in(model, "tensorParallelism")
    tp = _tp_number(raw)
    if tp is None or tp < 1 or get_in(cache.data, "spec", "source", "ngc", "modelEndpoint"):
        return None, None
    return tp, loc_of(model, "tensorParallelism")


def nim_cache_gpu_check(cache: Document, w: Workload) -> Finding | None:
    """KV403 (warning) for a NIMService whose NIMCache, among the inputs, caches only profiles of more GPUs
    (:func:`_cache_tp`) than the service's pod requests (``spec.resources`` ``nvidia.com/gpu``): NIM does not run
    a profile of more GPUs than it sees (NIM LLM docs, Model Profiles and Selection: "Incompatible with system"),
    so none of the cached profiles is used; NIM selects one for the pod's GPUs and, not finding it in the cache,
    downloads it from NGC at start-up, which needs the network and the NGC key and fails air-gapped (NIM LLM 2.0
    docs, Air-Gap Deployment: "NIM loads the model from cache if present, or downloads it when the system has
    network and credentials"). None when either count is unknown or the cache's profiles fit."""
    tp, tp_loc = _cache_tp(cache)
    if tp is None:
        return None
    from kvlint.accelerators.placement import workload_placement

    placement = workload_placement(w, w.pod_spec["containers"][0])
    have = placement.gpus
    if have is None or placement.resource is None or tp <= have:
        return None
    return Finding(
        "KV403",
        f"NIMCache {cache.name} caches only profiles of tensor parallel size {tp} (spec.source.ngc.model."
        f"tensorParallelism), but the pod requests {have} GPU{'s' if have > 1 else ''} ({placement.resource}: "
        f"{have}): NIM does not run a profile of more GPUs than it sees, so no cached profile is used; it selects "
        "one for the pod's GPUs and downloads it from NGC at start-up, which needs the network and the NGC key "
        "(an air-gapped cluster does not start it)",
        placement.gpus_loc or tp_loc,
        fix=f"request {tp} GPUs per pod ({placement.resource}) or cache profiles of {have} GPU"
        f'{"s" if have > 1 else ""} (the NIMCache\'s tensorParallelism: "{have}")',
        severity="warning",
    )


def _named_profile(spec: dict) -> str | None:
    """The NIM profile a NIMService names: ``NIM_MODEL_PROFILE`` in ``spec.env`` (the user's env wins), else the
    ``storage.nimCache.profile`` the operator sets it to (as :func:`_nim_facts` reads them); None when neither
    names one (or the variable comes from ``valueFrom``)."""
    profile, profile_set = _env_value(spec.get("env"), "NIM_MODEL_PROFILE")
    if profile_set:
        return profile
    cache = get_in(spec, "storage", "nimCache")
    chosen = get_in(cache, "profile")
    return chosen if get_in(cache, "name") and isinstance(chosen, str) and chosen else None


def _gpus_per_pod(w: Workload) -> int | None:
    """The ``nvidia.com/gpu`` count of the NIMService's pod (``spec.resources``), or None."""
    from kvlint.accelerators.placement import workload_placement

    return workload_placement(w, w.pod_spec["containers"][0]).gpus


#: A NIM profile name's parallel sizes: its ``tp<N>`` and ``pp<M>`` components (NIM LLM docs, "Model Profiles and
#: Selection": ``vllm-<precision>-tp<N>-pp1[-lora]``; ``tensorrt_llm-A100-fp16-tp2-latency``,
#: ``sglang-h100-bf16-tp8-pp2``). A profile named by its 64-hex id says neither.
_PROFILE_TP = re.compile(r"(?:^|-)tp(\d{1,5})(?=-|$)")
_PROFILE_PP = re.compile(r"(?:^|-)pp(\d{1,5})(?=-|$)")


def _env_entry(env: Any, name: str) -> dict | None:
    """The last entry of ``env`` that sets ``name`` (the one the kubelet keeps), or None."""
    found = None
    for e in env if isinstance(env, list) else ():
        if isinstance(e, dict) and e.get("name") == name:
            found = e
    return found


def _nim_need(spec: dict) -> tuple[int, str, str, Loc | None] | None:
    """The GPUs each pod of a NIMService's NIM needs, as ``(need, what, why, loc)``: ``what`` names the setting,
    ``why`` what fewer GPUs do, ``loc`` where the setting is; None when the object does not say.

    * multi-node (``multiNode.parallelism.pipeline`` above 1, nimservice_types.go ``IsMultiNode``): the operator
      starts NIM on each pod of the LeaderWorkerSet with ``NIM_TENSOR_PARALLEL_SIZE`` and ``GPUS_PER_NODE`` both
      ``multiNode.parallelism.tensor`` and an MPI hostfile of that many slots per pod (``getLWSCommonEnv``,
      ``GetLWSLeaderEnv``, ``GetLWSSize``'s hostfile; k8s-nim-operator main, 2026-08), and gives each pod that
      many GPUs itself when ``spec.resources`` names none (standalone/nimservice.go ``addGPUResources``: "use the
      GPU per worker value"). Not read when ``spec.env`` sets ``NIM_TENSOR_PARALLEL_SIZE`` or ``GPUS_PER_NODE``
      (the user's env wins, ``utils.MergeEnvVars``).
    * one pod: ``NIM_TENSOR_PARALLEL_SIZE`` x ``NIM_PIPELINE_PARALLEL_SIZE`` (default 1) of ``spec.env``, which
      NIM maps to the engine's parallel sizes (NIM LLM docs, "Advanced Configuration": NIM_* variables above the
      profile's tags); else the ``tp``/``pp`` of the profile ``NIM_MODEL_PROFILE`` or ``storage.nimCache.profile``
      names (:data:`_PROFILE_TP`), which NIM lists as "Incompatible with system" on fewer GPUs and does not run.
    """
    from kvlint.engines.options import MAX_PARALLEL_SIZE

    env = spec.get("env")
    par = get_in(spec, "multiNode", "parallelism")
    nodes = int_or_none(get_in(par, "pipeline"))
    if nodes is not None and nodes > 1:
        tp = int_or_none(get_in(par, "tensor"))
        if (
            tp is None
            or not 0 < tp <= MAX_PARALLEL_SIZE
            or any(_env_entry(env, n) is not None for n in ("NIM_TENSOR_PARALLEL_SIZE", "GPUS_PER_NODE"))
        ):
            return None
        why = (
            f"the operator starts NIM on each of the {nodes} pods of the LeaderWorkerSet with "
            f"NIM_TENSOR_PARALLEL_SIZE={tp} and GPUS_PER_NODE={tp}, {tp} MPI slots per pod "
            "(k8s-nim-operator nimservice_types.go getLWSCommonEnv, GetLWSLeaderEnv), so the ranks beyond the "
            "pod's GPUs find no GPU and NIM does not start"
        )
        return tp, f"multiNode.parallelism.tensor {tp}", why, loc_of(par, "tensor")
    tp_e = _env_entry(env, "NIM_TENSOR_PARALLEL_SIZE")
    if tp_e is not None:
        tp = digits(tp_e.get("value")) if "valueFrom" not in tp_e else None
        pp_e = _env_entry(env, "NIM_PIPELINE_PARALLEL_SIZE")
        pp = 1 if pp_e is None else (digits(pp_e.get("value")) if "valueFrom" not in pp_e else None)
        if tp is None or pp is None or not 0 < tp * pp <= MAX_PARALLEL_SIZE:
            return None
        what = f"NIM_TENSOR_PARALLEL_SIZE {tp}" + (f" x NIM_PIPELINE_PARALLEL_SIZE {pp}" if pp_e else "")
        why = (
            "NIM starts the engine with those parallel sizes (NIM LLM docs, Advanced Configuration: the NIM_* "
            "variables override the profile's tp and pp), which needs TP x PP GPUs in the pod (NIM for LLMs 1.12, "
            "Configuration: 'How many GPUs do I need?')"
        )
        return tp * pp, what, why, loc_of(tp_e, "value") or loc_of(tp_e)
    prof_e = _env_entry(env, "NIM_MODEL_PROFILE")
    if prof_e is not None:
        name, loc = prof_e.get("value"), loc_of(prof_e, "value") or loc_of(prof_e)
        if "valueFrom" in prof_e:
            return None
    else:
        cache = get_in(spec, "storage", "nimCache")
        name, loc = get_in(cache, "profile"), loc_of(cache, "profile") if isinstance(cache, dict) else None
        if not get_in(cache, "name"):
            return None
    if not isinstance(name, str) or len(name) > 200:
        return None
    tp_m, pp_m = _PROFILE_TP.search(name.lower()), _PROFILE_PP.search(name.lower())
    if tp_m is None:
        return None
    need = int(tp_m.group(1)) * (int(pp_m.group(1)) if pp_m else 1)
    if not 0 < need <= MAX_PARALLEL_SIZE:
        return None
    why = (
        "a profile runs on TP x PP GPUs (NIM for LLMs 1.12, Configuration: 'How many GPUs do I need?'), and NIM "
        "lists one of more GPUs than the container sees as incompatible with the system (NIM LLM docs, Model "
        "Profiles and Selection)"
    )
    return need, f"profile {name}", why, loc


def _fewer(what: str, have: int) -> str:
    """KV403's other remedy for the NIM setting ``what`` (:func:`_nim_need`): NIM on the ``have`` GPUs."""
    if what.startswith("profile "):
        return f"name a profile of {have} GPUs (list-model-profiles in the NIM container)"
    if what.startswith("multiNode"):
        return f"set multiNode.parallelism.tensor to {have}"
    return f"lower the parallel sizes so that their product is {have}"


def nim_gpu_count(w: Workload, spec: dict, claims: Claims | None = None) -> Finding | None:
    """KV403 for a NIMService whose pod starts the NIM launcher: the GPUs NIM needs per pod (:func:`_nim_need`)
    against those the pod requests (``spec.resources`` ``nvidia.com/gpu``, else the GPU devices of the claims
    ``spec.draResources`` creates or names among ``claims``, :func:`dra_gpu_count`). Fewer is an error (NIM does not start), more a
    warning (the extra GPUs are reserved and idle), as KV403 says of a vLLM command line. None when either count
    is unknown; the operator's own GPU assignment (no GPU in ``spec.resources`` and no ``draResources``) gives
    the pod what NIM needs."""
    from kvlint.accelerators.placement import workload_placement

    found = _nim_need(spec)
    if found is None:
        return None
    placement = workload_placement(w, w.pod_spec["containers"][0])
    nodes = int_or_none(get_in(spec, "multiNode", "parallelism", "pipeline"))
    pods = f" x {nodes} pods" if nodes is not None and nodes > 1 else ""
    if placement.gpus is not None and placement.resource is not None:
        have, where, resource = (
            placement.gpus,
            f"{placement.resource}: {placement.gpus}{pods}",
            placement.resource,
        )
        have_loc = placement.gpus_loc
    else:
        have_dra = dra_gpu_count(spec.get("draResources"), claims, w.namespace)
        if have_dra is None:
            return None
        have, where = have_dra, f"spec.draResources: {have_dra} {GPU_DEVICE_CLASS} devices{pods}"
        resource, have_loc = f"{GPU_DEVICE_CLASS} devices in spec.draResources", loc_of(spec, "draResources")
    return _compared(found, have, where, resource, have_loc)


def _compared(
    found: tuple[int, str, str, Loc | None], have: int, where: str, resource: str, have_loc: Loc | None
) -> Finding | None:
    """KV403 for the GPUs NIM needs per pod (``found``, :func:`_nim_need`) against the ``have`` the pod requests
    (``where``: how, in words; ``resource`` what to raise; ``have_loc`` where)."""
    need, what, why, loc = found
    if need > have:
        return Finding(
            "KV403",
            f"{what} needs {need} GPUs per pod but the pod requests {have} ({where}); {why}",
            loc or have_loc,
            fix=f"request {need} GPUs per pod ({resource}) or {_fewer(what, have)}",
        )
    if need < have:
        return Finding(
            "KV403",
            f"the pod requests {have} GPUs ({where}) but {what} uses only {need}; {idle(have - need, 'GPU')}",
            have_loc or loc,
            fix=f"request {count(need, 'GPU')} per pod ({resource})",
            severity="warning",
        )
    return None


def nim_container_gpu_count(w: Workload, container: Mapping[str, Any]) -> Finding | None:
    """KV403 for a container of an ordinary workload that starts a NIM image's launcher (:func:`nim_container_notes`):
    ``NIM_TENSOR_PARALLEL_SIZE`` x ``NIM_PIPELINE_PARALLEL_SIZE`` or the profile ``NIM_MODEL_PROFILE`` names in its
    ``env`` (:func:`_nim_need`, one pod) against its GPUs. Not for a multi-node NIM (``NIM_MULTI_NODE`` or
    ``NIM_NUM_COMPUTE_NODES`` set, or a LeaderWorkerSet or other group pod), whose parallel sizes span pods."""
    from kvlint.accelerators.placement import workload_placement

    env = container.get("env")
    if w.role is not None or (w.group_size or 0) > 1:
        return None
    if any(_env_entry(env, n) is not None for n in ("NIM_MULTI_NODE", "NIM_NUM_COMPUTE_NODES")):
        return None
    found = _nim_need({"env": env})
    if found is None:
        return None
    placement = workload_placement(w, container)
    if placement.gpus is None or placement.resource is None:
        return None
    where = f"{placement.resource}: {placement.gpus}"
    return _compared(found, placement.gpus, where, placement.resource, placement.gpus_loc)


def nim_cache_clause(cache: Document, gpus: int | None = None, *, profile_named: bool = False) -> str:
    """What the NIMCache ``cache`` holds, in words, for the note of a NIMService that names it: the profiles its
    ``spec.source.ngc.model`` selects (``profiles``, else the ``engine``, ``precision``, ``tensorParallelism``,
    ``qosProfile`` and ``gpus`` filters; none: every profile of the model puller's image), or the model of a
    Hugging Face or NeMo DataStore source (k8s-nim-operator api/apps/v1alpha1 nimcache_types.go ``ModelSpec``,
    ``NGCSource``, ``DSHFCommonFields``). ``tensorParallelism`` is "the minimum GPUs required" of the cached
    profiles: above ``gpus`` (the NIMService's GPUs per pod) no cached profile fits the pod, and the clause says
    so.

    Below ``gpus``, when the NIMService names no profile (``profile_named`` False; a named one is compared with
    the pod's GPUs by KV403, :func:`nim_gpu_count`), the clause says what may follow, as information only: the
    NIMCache's job caches only profiles whose ``tp`` tag equals ``tensorParallelism`` (k8s-nim-operator
    internal/nimparser ``v1``/``v2`` profile matching), the operator neither checks the pod's GPUs against them
    nor adds any when ``spec.resources`` names some (``addGPUResources``), and NIM picks its profile at start-up
    from the model's whole manifest for the GPUs it sees (NIM LLM docs, Model Profiles and Selection: "NIM
    selects exactly one profile from the manifest. The selected profile determines which model files are
    downloaded"), so it either downloads a profile of more GPUs that is not cached, or runs a cached one with the
    other GPUs idle; which, kvlint cannot tell without the manifest."""
    src = get_in(cache.data, "spec", "source")
    head = f"NIMCache {cache.name}"
    ngc = get_in(src, "ngc")
    if isinstance(ngc, dict):
        if ngc.get("modelEndpoint"):
            return f"{head} caches the model of {ngc['modelEndpoint']} (spec.source.ngc.modelEndpoint)"
        model = ngc.get("model")
        if not isinstance(model, dict) or not model:
            return f"{head} caches every profile of {ngc.get('modelPuller') or 'its model puller'}"
        profiles = model.get("profiles")
        if isinstance(profiles, list) and profiles:
            shown = ", ".join(str(p) for p in profiles[:4]) + (
                f" and {len(profiles) - 4:,} more" if len(profiles) > 4 else ""
            )
            return f"{head} caches profiles {shown}"
        said = [
            f"{label} {model[key]}"
            for key, label in (
                ("engine", "engine"),
                ("precision", "precision"),
                ("tensorParallelism", "tensor parallel size"),
                ("qosProfile", "QoS profile"),
            )
            if model.get(key) not in (None, "")
        ]
        gpu_specs = model.get("gpus")
        products = [
            g.get("product")
            for g in (gpu_specs if isinstance(gpu_specs, list) else [])
            if isinstance(g, dict) and g.get("product")
        ]
        if products:
            said.append(f"GPU {', '.join(str(p) for p in products[:4])}")
        clause = f"{head} caches the profiles of " + (", ".join(said) if said else "every kind")
        raw_tp = model.get("tensorParallelism")
        tp = _tp_number(raw_tp)
        if tp is not None and gpus is not None and tp > gpus:
            clause += f" (they need {tp} GPUs, the pod has {gpus}: no cached profile fits it)"
        elif tp is not None and gpus is not None and tp < gpus and not profile_named:
            clause += (
                f" (they run on {tp} GPU{'s' if tp > 1 else ''}, the pod has {gpus}: NIM picks its profile for "
                f"{gpus} GPUs from the model's whole manifest, so it may download one that is not cached, or run a "
                f"cached one with {gpus - tp} GPU{'s' if gpus - tp > 1 else ''} idle)"
            )
        return clause
    for key in ("hf", "dataStore"):
        named = get_in(src, key, "modelName")
        if named:
            return f"{head} caches {named} (spec.source.{key}.modelName)"
    return f"{head} (its source is not one kvlint reads)"


#: The NVIDIA GPU device-plugin resource the NIM operator assigns (``addGPUResources``: ``nvidia.com/gpu``)
_GPU_RESOURCE = NVIDIA_GPU


def _env_value(env: Any, name: str) -> tuple[str | None, bool]:
    """``(value, set)`` of the variable ``name`` in a container ``env`` list: its last entry wins, as the
    kubelet builds the environment; ``value`` None when that entry takes it from ``valueFrom`` (a Secret,
    ConfigMap or field kvlint does not read) or sets no string."""
    found: tuple[str | None, bool] = (None, False)
    for e in env if isinstance(env, list) else ():
        if isinstance(e, dict) and e.get("name") == name:
            v = e.get("value")
            found = (v if isinstance(v, str) and "valueFrom" not in e else None, True)
    return found


def _image_model(image: str) -> str | None:
    """The model an NGC NIM image is named after: the repository path after its ``nim`` (or ``nim-...``)
    component (``nvcr.io/nim/meta/llama-3.2-1b-instruct:1.12.0`` -> ``meta/llama-3.2-1b-instruct``); None for
    the multi-LLM NIM (``nvcr.io/nim/nvidia/llm-nim``), which serves the model its NIMCache or
    ``NIM_MODEL_NAME`` names (k8s-nim-operator config/samples/nim/serving/kserve/standard/multi-llm.yaml)."""
    from kvlint.engines.images import split_image

    parts = split_image(image)[0].split("/")
    for i, p in enumerate(parts[1:-1], start=1):
        if p.lower() == "nim" or p.lower().startswith("nim-"):
            rest = parts[i + 1 :]
            return None if rest[-1].lower() == "llm-nim" else "/".join(rest)
    return None


def _dra_devices(dra: Any) -> str | None:
    """``spec.draResources`` in words: the GPUs the claims the operator creates request (``claimCreationSpec``
    devices: ``count``, default 1, and the attribute and capacity selectors) or the claims and templates named;
    None when there are none (k8s-nim-operator api/apps/v1alpha1 dra_types.go ``DRAResource``,
    ``DRADeviceSpec``)."""
    if not isinstance(dra, list) or not dra:
        return None
    said: list[str] = []
    for r in dra[:4]:
        if not isinstance(r, dict):
            continue
        devices = get_in(r, "claimCreationSpec", "devices")
        if isinstance(devices, list):
            for d in devices[:4]:
                if not isinstance(d, dict):
                    continue
                count, bad = _device_count(d)
                sel = [
                    f"{s.get('key')} {s.get('op', 'Equal')} {_selector_value(s.get('value'))}"
                    for s in [*_listed(d.get("attributeSelectors")), *_listed(d.get("capacitySelectors"))][:4]
                    if isinstance(s, dict)
                ]
                cls = d.get("deviceClassName") or "gpu.nvidia.com"
                noun = "device" if count == 1 else "devices"
                said.append(
                    (f"{count} {cls} {noun}" if bad is None else f"{cls} devices of {bad}")
                    + (f" with {', '.join(sel)}" if sel else "")
                )
        elif r.get("resourceClaimName"):
            said.append(f"ResourceClaim {r['resourceClaimName']}")
        elif r.get("resourceClaimTemplateName"):
            said.append(f"ResourceClaimTemplate {r['resourceClaimTemplateName']}")
    return ", ".join(said) if said else "claims kvlint does not read"


def _device_count(d: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """``(count, None)``: the devices a NIMService ``claimCreationSpec`` device asks for (``count``, default 1;
    dra_types.go ``DRADeviceSpec.Count``, a ``uint32``); ``(None, why)`` for a count the API server refuses (not
    a whole number: ``.inf``, ``1.5``, ``"2"``, ``true``, or negative) or one beyond
    :data:`~kvlint.engines.options.MAX_PARALLEL_SIZE` (implausible for one pod), in words."""
    from kvlint.engines.options import MAX_PARALLEL_SIZE
    from kvlint.values import yaml_text

    raw = d.get("count", 1)
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 0:
        return (
            None,
            f"count {yaml_text(raw)}, not a whole number (the CRD types it uint32: the API server refuses it)",
        )
    if raw > MAX_PARALLEL_SIZE:
        return None, f"count {raw:,}, implausibly many for one pod (kvlint reads up to {MAX_PARALLEL_SIZE:,})"
    return raw, None


def dra_gpu_count(dra: Any, claims: Claims | None = None, namespace: str | None = None) -> int | None:
    """The GPUs per pod that a NIMService's ``spec.draResources`` request: the sum of the ``count`` of the
    ``claimCreationSpec`` devices of device class :data:`~kvlint.workloads.dra.GPU_DEVICE_CLASS` (the claims the
    operator creates; k8s-nim-operator api/apps/v1alpha1 dra_types.go ``DRAClaimCreationSpec``,
    ``DRADeviceSpec``) and the GPUs of the ResourceClaim or ResourceClaimTemplate an entry names when it is among
    ``claims`` (those of its ``requests``, else all: ``DRAResource.Requests``;
    :func:`kvlint.workloads.dra.claim_gpus`); None when that is not known: a claim or template not among the
    inputs, a count refused (:func:`_device_count`) or only the node knows, or no device is a GPU."""
    from kvlint.workloads.dra import claim_gpus, find_claim

    if not isinstance(dra, list) or not dra:
        return None
    total = 0
    for r in dra:
        devices = get_in(r, "claimCreationSpec", "devices")
        if not isinstance(devices, list):
            named = [
                (kind, str(r.get(key)))
                for key, kind in (
                    ("resourceClaimName", "ResourceClaim"),
                    ("resourceClaimTemplateName", "ResourceClaimTemplate"),
                )
                if isinstance(r, dict) and isinstance(r.get(key), str) and r.get(key)
            ]
            doc = find_claim(claims, namespace, *named[0]) if claims and len(named) == 1 else None
            if doc is None:
                return None
            requests = claim_gpus(doc)
            wanted = r.get("requests")
            chosen = (
                [requests.get(q) for q in wanted]
                if isinstance(wanted, list) and wanted
                else list(requests.values())
            )
            if not chosen or any(c is None or c[0] is None for c in chosen):
                return None
            total += sum(c[0] for c in chosen if c is not None and c[0] is not None)
            continue
        for d in devices:
            if not isinstance(d, dict):
                return None
            count, bad = _device_count(d)
            if count is None:
                return None
            if (d.get("deviceClassName") or GPU_DEVICE_CLASS) == GPU_DEVICE_CLASS:
                total += count
    return total or None


def _listed(v: Any) -> list[Any]:
    """``v`` when it is a list, else an empty one (a shape the API server refuses reads as nothing)."""
    return v if isinstance(v, list) else []


def _selector_value(v: Any) -> str:
    """A DRA selector value: the one typed member of an attribute value (``stringValue``, ``intValue`` ...) or a
    capacity quantity."""
    if isinstance(v, dict) and len(v) == 1:
        return str(next(iter(v.values())))
    return str(v)


def _nim_facts(w: Workload, spec: dict, image: str, dra: str | None) -> str:
    """What kvlint reads of a NIMService with the NIM launcher, in words: the model, the GPUs of each pod and
    of each instance, the GPU type and the profile, with where each comes from.

    * GPUs per pod: ``spec.resources`` ``nvidia.com/gpu`` (limits, then requests); else the DRA claims of
      ``spec.draResources``; else none, which the operator makes the profile's tensor parallel size (or
      ``multiNode.parallelism.tensor``) only for a profile ``storage.nimCache.profile`` names that an NGC NIMCache
      has cached (internal/controller/platform/standalone/nimservice.go ``addGPUResources``, called only then).
    * pods per instance: ``multiNode.parallelism.pipeline`` when above 1, the size of the LeaderWorkerSet the
      operator creates (nimservice_types.go ``IsMultiNode``, ``GetLWSSize``), each pod with those resources.
    * profile: ``NIM_MODEL_PROFILE`` in ``spec.env``, which wins over the one the operator sets from
      ``storage.nimCache.profile`` (``utils.MergeEnvVars``: the second list wins); else the launcher picks one
      for the GPUs it finds.
    """
    from kvlint.accelerators.placement import workload_placement

    env = spec.get("env")
    name, name_set = _env_value(env, "NIM_MODEL_NAME")
    cache = get_in(spec, "storage", "nimCache", "name")
    cache_name = str(cache) if isinstance(cache, str) and cache else None
    from_image = _image_model(image)
    if name_set:
        model = f"model {name} (NIM_MODEL_NAME)" if name else "model from NIM_MODEL_NAME's valueFrom"
    elif from_image:
        model = f"model {from_image} (the image's name)"
    else:
        model = "model named by " + (f"NIMCache {cache_name}" if cache_name else "no field of the object")
    container = w.pod_spec["containers"][0]
    placement = workload_placement(w, container)
    multi = get_in(spec, "multiNode", "parallelism")
    pp = int_or_none(get_in(multi, "pipeline"))
    tp = int_or_none(get_in(multi, "tensor"))
    if placement.gpus is not None:
        noun = "GPU" if placement.gpus == 1 else "GPUs"
        gpus = f"{placement.gpus} {noun} per pod ({placement.resource} in spec.resources)"
    elif dra is not None:
        gpus = f"GPUs per pod from spec.draResources: {dra}"
    else:
        gpus = (
            f"no {_GPU_RESOURCE} in spec.resources (the operator assigns GPUs only for a profile named in "
            "storage.nimCache.profile that its NIMCache has cached)"
        )
    if pp is not None and pp > 1:
        gpus += f", {pp} pods per instance (the LeaderWorkerSet of multiNode.parallelism.pipeline)"
        if tp is not None:
            gpus += f", tensor parallel size {tp} (multiNode.parallelism.tensor)"
    if placement.accelerator is not None:
        gpu = f"GPU {placement.accelerator.id} ({placement.how})"
    else:
        gpu = "GPU not named by spec.nodeSelector or spec.affinity"
    profile, profile_set = _env_value(env, "NIM_MODEL_PROFILE")
    chosen = get_in(spec, "storage", "nimCache", "profile")
    if profile_set:
        prof = (
            f"profile {profile} (NIM_MODEL_PROFILE)"
            if profile
            else "profile from NIM_MODEL_PROFILE's valueFrom"
        )
    elif cache_name and isinstance(chosen, str) and chosen:
        prof = f"profile {chosen} (storage.nimCache.profile)"
    else:
        prof = "no profile named (the launcher picks one for the GPUs it finds)"
    return f"read from the NIMService spec: {model}, {gpus}, {gpu}, {prof}"


#: The engines a NIM profile name starts with (NIM LLM docs, "Model Profiles": ``vllm-bf16-tp1-pp1``,
#: ``sglang-h100-bf16-tp8-pp2``, ``tensorrt_llm-A100-fp16-tp2-latency``), as kvlint names them
_PROFILE_ENGINES = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "tensorrt_llm": "TensorRT-LLM",
    "trtllm": "TensorRT-LLM",
}
#: Precision components of a NIM profile name
_PROFILE_PRECISIONS = ("bf16", "fp16", "fp8", "nvfp4", "mxfp4", "int4_awq", "int8_wo", "int4", "int8")


def profile_unsaid(profile: str | None, image: str, env: Any = None) -> str | None:
    """What the name of the NIM profile ``profile`` says of the engine NIM starts (its engine, precision, tensor x
    pipeline size: :data:`_PROFILE_ENGINES`, :data:`_PROFILE_PRECISIONS`, :data:`_PROFILE_TP`) and what a memory
    plan would still lack, in words, for :func:`nim_note`; None when the name does not start with an engine (a
    64-hex profile id, none named). Still lacking, whatever the name: the engine release the NIM image bundles
    (NIM's release notes map it, the image does not say it) and the memory fraction NIM gives the engine; and the
    context length unless ``env`` sets ``NIM_MAX_MODEL_LEN``. TensorRT-LLM has no memory model in kvlint."""
    if not isinstance(profile, str) or len(profile) > 200:
        return None
    low = profile.lower()
    engine = next((name for key, name in _PROFILE_ENGINES.items() if low.startswith(key + "-")), None)
    if engine is None:
        return None
    parts = low.split("-")
    said = [f"engine {engine}"]
    precision = next((p for p in _PROFILE_PRECISIONS if p in parts), None)
    if precision:
        said.append(f"precision {precision}")
    tp, pp = _PROFILE_TP.search(low), _PROFILE_PP.search(low)
    if tp:
        said.append(
            f"tensor parallel size {int(tp.group(1))}" + (f" x pipeline {int(pp.group(1))}" if pp else "")
        )
    from kvlint.engines.images import split_image

    tag = split_image(image)[1]
    lacking = [f"the {engine} release NIM {tag or 'this image'} bundles"]
    ctx, ctx_set = _env_value(env, "NIM_MAX_MODEL_LEN")
    if not ctx_set:
        lacking.append("the context length (no NIM_MAX_MODEL_LEN)")
    lacking.append("the memory fraction NIM gives it")
    unsaid = (
        f"the profile's name says {', '.join(said)}; not said: {', '.join(lacking[:-1])} and {lacking[-1]}"
    )
    if engine == "TensorRT-LLM":
        unsaid += ", and kvlint has no TensorRT-LLM memory model"
    return unsaid + ", so no memory plan is made"


def nim_note(
    kind: str, image: str, loc: Loc | None, facts: str | None = None, unsaid: str | None = None
) -> Finding:
    """The KV503 note on a container running the NIM image ``image`` (:func:`kvlint.engines.images.is_nim_image`)
    in an object of ``kind``: its launcher picks the engine and its settings from a model profile kvlint does not
    read, so nothing is sized; ``facts`` (:func:`_nim_facts`) what kvlint read of the object.

    No memory plan is made even when the image names a model kvlint knows and the profile names vLLM: the
    profile fixes the engine release the image bundles, the precision (a profile may be FP8 or another
    quantisation of the model) and the engine's memory settings (context length, memory fraction), none of which
    the object or the image name says, so a plan with the engine's defaults would not be the one that runs; a
    TensorRT-LLM profile's engine has no memory model in kvlint at all. A NIMService or container whose own
    ``command`` replaces the launcher is read as any command is and gets no note. ``unsaid``
    (:func:`profile_unsaid`): what the profile named says and what a plan would still lack, which replaces the
    general closing."""
    read = f"; {facts}" if facts else ""
    closing = unsaid or (
        "kvlint does not read NIM profiles, so the engine's memory settings are not checked and no memory plan is "
        "made (the profile decides the engine's release, precision and memory settings)"
    )
    return Finding(
        "KV503",
        f"kvlint does not read this {kind}'s engine settings: the NIM image {image} starts NVIDIA's NIM "
        "launcher, which chooses the engine (TensorRT-LLM, vLLM or SGLang) and its settings from the model profile "
        f"it selects for the GPU{read}; {closing}",
        loc,
        fix="check the profile NIM selects (list-model-profiles in the NIM container) and its engine settings",
        severity="info",
        mark=Mark.NIM_NOT_READ,
    )


def nim_container_notes(w: Workload) -> tuple[Finding, ...]:
    """KV503 notes (and KV403, :func:`nim_container_gpu_count`) for the containers of an ordinary workload (a
    Deployment, StatefulSet, LeaderWorkerSet ... rendered from NVIDIA's ``nim-llm`` Helm chart, say) that run a NIM
    image with no ``command`` of their own, so the image's NIM launcher starts (as a NIMService's pod does,
    :func:`nim_service_workloads`); none when the workload already has a NIM note."""
    from kvlint.engines.images import is_nim_image

    if any(f.mark is Mark.NIM_NOT_READ for f in w.findings):
        return ()
    containers = w.pod_spec.get("containers") if isinstance(w.pod_spec, dict) else None
    out = []
    for c in containers if isinstance(containers, list) else ():
        image = c.get("image") if isinstance(c, dict) else None
        if isinstance(image, str) and is_nim_image(image) and not c.get("command"):
            env = c.get("env")
            unsaid = profile_unsaid(_env_value(env, "NIM_MODEL_PROFILE")[0], image, env)
            out.append(nim_note(w.kind, image, loc_of(c, "image") or loc_of(c), unsaid=unsaid))
            counted = nim_container_gpu_count(w, c)
            if counted is not None:
                out.append(counted)
    return tuple(out)
