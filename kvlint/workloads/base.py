"""Building blocks the workload finders share: metadata merge, the Workload record of a PodSpec, synthetic
PodSpecs for operator objects that have none (located :class:`~kvlint.source.LDict`/``LList`` values), and
the facts a synthetic workload carries (its :class:`~kvlint.types.Workload` fields, never annotations).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kvlint.engines.images import dell_hub_model
from kvlint.gpu_resources import is_gpu_resource
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import DerivedAccelerator, Document, Workload

ROLE_KEYS = {
    "leaderTemplate": "leader",
    "leader": "leader",
    "workerTemplate": "worker",
    "workerSpec": "worker",
    "workerGroupSpecs": "worker",
    "worker": "worker",
    "headGroupSpec": "head",
}


# a chain entry: (mapping or list, key or index inside it)
Chain = list[tuple[Any, Any]]


def object_ref(w: Workload) -> str:
    """``Kind/namespace/name`` of a workload's object (``Kind/name`` when it has no namespace)."""
    kind = w.kind or "Object"
    if w.namespace:
        return f"{kind}/{w.namespace}/{w.name}"
    return f"{kind}/{w.name}"


def get_in(m: Any, *keys: Any) -> Any:
    for k in keys:
        if not isinstance(m, dict):
            return None
        m = m.get(k)
    return m


def int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def str_map(m: Any) -> dict[str, str]:
    if not isinstance(m, dict):
        return {}
    return {str(k): ("" if v is None else str(v)) for k, v in m.items()}


def meta(m: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(annotations, labels) of a ``metadata`` mapping."""
    if not isinstance(m, dict):
        return {}, {}
    return str_map(m.get("annotations")), str_map(m.get("labels"))


def is_pod_spec(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    c = m.get("containers")
    return isinstance(c, list) and any(isinstance(x, dict) and ("image" in x or "name" in x) for x in c)


def path_str(keys: Sequence[Any]) -> str:
    out = ""
    for k in keys:
        if isinstance(k, int):
            out += f"[{k}]"
        else:
            out += ("." if out else "") + str(k)
    return out


def make_workload(
    doc: Document,
    pod_spec: dict,
    chain: Chain,
    *,
    path: str | None = None,
    replicas: int | None = None,
    role: str | None = None,
    group_size: int | None = None,
    extra_meta: Any = None,
) -> Workload:
    """A Workload for ``pod_spec`` reached through ``chain`` (parents from the document root)."""
    ann, lab = meta(get_in(doc.data, "metadata"))
    if chain and chain[-1][1] == "spec" and isinstance(chain[-1][0], dict) and chain[-1][0] is not doc.data:
        t_ann, t_lab = meta(chain[-1][0].get("metadata"))
        ann.update(t_ann)
        lab.update(t_lab)
    if isinstance(extra_meta, dict):
        ann.update(str_map(extra_meta.get("annotations")))
        lab.update(str_map(extra_meta.get("labels")))
    if not isinstance(pod_spec, LDict):
        pod_spec = LDict(pod_spec, loc=doc.loc)
    assert isinstance(pod_spec, LDict)
    containers = pod_spec.get("containers")
    return Workload(
        doc=doc,
        kind=doc.kind,
        name=doc.name,
        namespace=doc.namespace,
        pod_spec=pod_spec,
        path=path if path is not None else path_str([k for _, k in chain]),
        annotations=ann,
        labels=lab,
        replicas=replicas,
        role=role,
        group_size=group_size,
        # the model a Dell Enterprise Hub model image serves, named by the pod's hf.co/model label
        derived_model=dell_hub_model(
            lab,
            (c.get("image") for c in containers if isinstance(c, dict))
            if isinstance(containers, list)
            else (),
        ),
    )


def synthetic_pod_spec(holder: dict, container: dict, drop: Sequence[str]) -> LDict:
    """A PodSpec-shaped LDict: ``holder``'s other keys plus ``containers: [container, *holder's]``."""
    ps = LDict(loc=loc_of(holder))
    for k, v in holder.items():
        if k in drop or k == "containers":
            continue
        ps[k] = v
        if isinstance(holder, LDict):
            if k in holder.locs:
                ps.locs[k] = holder.locs[k]
            if k in holder.key_locs:
                ps.key_locs[k] = holder.key_locs[k]
    cloc = loc_of(container) or loc_of(holder)
    containers = LList([container], loc=cloc)
    containers.locs.append(cloc or Loc("-"))
    extra = holder.get("containers")
    if isinstance(extra, list):
        for i, c in enumerate(extra):
            containers.append(c)
            containers.locs.append(loc_of(extra, i) or cloc or Loc("-"))
    ps["containers"] = containers
    if cloc is not None:
        ps.locs["containers"] = cloc
    return ps


def add_memory_shm(pod_spec: LDict, container: LDict) -> None:
    """Add the runtime's memory-backed ``/dev/shm`` (``devshm`` emptyDir) unless the pod already mounts one."""
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list) and any(
        isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" for m in mounts
    ):
        return
    anchor = loc_of(container, "image") or container.loc
    mount = ldict(anchor, [("name", "devshm", anchor), ("mountPath", "/dev/shm", anchor)])
    container["volumeMounts"] = llist(anchor, [*((m, None) for m in (mounts or [])), (mount, anchor)])
    vols = pod_spec.get("volumes")
    vol = ldict(
        anchor,
        [("name", "devshm", anchor), ("emptyDir", ldict(anchor, [("medium", "Memory", anchor)]), anchor)],
    )
    pod_spec["volumes"] = llist(
        anchor, [*((v, None) for v in (vols if isinstance(vols, list) else [])), (vol, anchor)]
    )


def enclosing_context(chain: Chain) -> tuple[int | None, str | None, int | None]:
    """(replicas, role, group_size) from the nearest enclosing declarations."""
    replicas = role = group_size = None
    for parent, key in reversed(chain):
        if isinstance(parent, dict):
            if replicas is None:
                replicas = int_or_none(parent.get("replicas"))
            if role is None and isinstance(key, str):
                role = ROLE_KEYS.get(key)
                if key in ("leaderTemplate", "workerTemplate") and group_size is None:
                    # an embedded LeaderWorkerTemplate (llmaz Service ``spec.workloadTemplate``): its ``size``
                    group_size = int_or_none(parent.get("size"))
            if group_size is None and key == "leaderWorkerTemplate":
                group_size = int_or_none(get_in(parent, "leaderWorkerTemplate", "size"))
    return replicas, role, group_size


#: Keys under which operators embed a LeaderWorkerSet ``leaderWorkerTemplate`` (its pods get ``LWS_GROUP_SIZE``).
LWS_TEMPLATE_KEYS = ("leaderWorkerTemplate", "workloadTemplate")


#: The user's annotations that name a workload's accelerator and model (:func:`synthetic_workload` lets them
#: beat what a reader derives from the object's own fields).
ACCELERATOR_ANNOTATION = "kvlint.io/accelerator"
MODEL_ANNOTATION = "kvlint.io/model"
#: KubeRay's annotation (on the RayCluster or its pod template) that keeps the Ray container's own command: "true"
#: and the operator no longer writes ``ray start`` into it (:func:`kvlint.pipeline.kuberay_writes_command`)
RAY_OVERWRITE_CMD_ANNOTATION = "ray.io/overwrite-container-cmd"


#: The most values of a shared part of an object (a Ray worker pod, production-stack's ``servingEngineSpec``)
#: copied into the engines built from its entries, beyond the first engine: each copy is analysed once per
#: engine, so entries x shared values is the work of a read. Past it the readers stop (see
#: :mod:`kvlint.workloads.rayserve`, :mod:`kvlint.workloads.stack_values`). [measured] about 0.7 us of CPU a
#: copied value: 255 llm_configs entries of a RayService whose Ray worker holds 4,000 env variables (3 M copied
#: values, a 190 KB object) took 2 s, the webhook's whole review budget, and were admitted unchecked; 256
#: production-stack modelSpecs beside 40,000 servingEngineSpec.env variables (a 1.4 MB values file) took 28 s
#: and 0.5 GB in the CLI. 131,072 copied values take about 0.1 s; a real object copies a few hundred values a
#: handful of times.
MAX_COPIED_VALUES = 1 << 17


def count_values(obj: Any, limit: int) -> int:
    """The values in ``obj`` (every mapping, list and scalar, an aliased one each time it appears), counted up
    to ``limit + 1`` (the walk stops there: its cost is bounded by ``limit``). Pure."""
    n = 0
    stack = [obj]
    while stack and n <= limit:
        v = stack.pop()
        n += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return n


def located_copy(d: LDict, loc: Loc | None = None) -> LDict:
    """A shallow copy of ``d`` with its own position (``loc`` when ``d`` has none) and copies of its value and
    key positions (the values are shared: replace one in the copy, never edit it in place)."""
    out = LDict(d, loc=d.loc or loc)
    out.locs, out.key_locs = dict(d.locs), dict(d.key_locs)
    return out


def ldict(loc: Loc | None, items: Sequence[tuple[str, Any, Loc | None]]) -> LDict:
    """An LDict located at ``loc`` whose values (and keys) are located at their given positions."""
    d = LDict(loc=loc)
    for k, v, vloc in items:
        d[k] = v
        if vloc is not None or loc is not None:
            d.locs[k] = vloc or loc  # type: ignore[assignment]
            d.key_locs[k] = vloc or loc  # type: ignore[assignment]
    return d


def llist(loc: Loc | None, items: Sequence[tuple[Any, Loc | None]]) -> LList:
    """An LList located at ``loc`` whose items are located at their given positions."""
    out = LList([v for v, _ in items], loc=loc)
    out.locs = [il or loc or Loc("-") for _, il in items]
    return out


def synthetic_workload(
    doc: Document,
    pod_spec: LDict,
    path: str,
    *,
    replicas: int | None,
    derived_model: str | None = None,
    derived_accelerator: DerivedAccelerator | None = None,
    accelerator_why: str | None = None,
    image_source: str | None = None,
    engine_kwargs_refusal: str | None = None,
) -> Workload:
    """A Workload for a synthetic PodSpec, with the object's annotations and labels and the facts its reader
    derived (the :class:`~kvlint.types.Workload` fields of the same names). A user's annotation beats a derived
    fact: with ``kvlint.io/accelerator`` on the object, ``derived_accelerator`` and ``accelerator_why`` are
    dropped; with ``kvlint.io/model``, ``derived_model``."""
    ann_src, labels = meta(get_in(doc.data, "metadata"))
    ann = LDict(loc=doc.loc)
    own = get_in(doc.data, "metadata", "annotations")
    if ACCELERATOR_ANNOTATION in ann_src:
        derived_accelerator = accelerator_why = None
    if MODEL_ANNOTATION in ann_src:
        derived_model = None
    for k, v in ann_src.items():
        ann[k] = v
        loc = loc_of(own, k)
        if loc is not None:
            ann.locs[k] = loc
    return Workload(
        doc=doc,
        kind=doc.kind,
        name=doc.name,
        namespace=doc.namespace,
        pod_spec=pod_spec,
        path=path,
        annotations=ann,
        labels=labels,
        replicas=replicas,
        derived_model=derived_model,
        derived_accelerator=derived_accelerator,
        accelerator_why=accelerator_why,
        image_source=image_source,
        engine_kwargs_refusal=engine_kwargs_refusal,
    )


def env_list(env: Any) -> LList | None:
    """A container ``env`` list from a ``{NAME: value}`` mapping (KubeAI ``spec.env``), sorted by name as
    KubeAI's vLLMPodForModel does; positions are the mapping's values."""
    if not isinstance(env, dict):
        return None
    items = []
    for k in sorted(env, key=str):
        eloc = loc_of(env, k)
        items.append(
            (
                ldict(eloc, [("name", str(k), eloc), ("value", "" if env[k] is None else str(env[k]), eloc)]),
                eloc,
            )
        )
    return llist(loc_of(env), items)


def _env_names(env: Any) -> set[str]:
    """The names a container's ``env`` list defines (entries whose ``name`` is not a string define none)."""
    if not isinstance(env, list):
        return set()
    return {e["name"] for e in env if isinstance(e, dict) and isinstance(e.get("name"), str)}


def _field_path(e: Any) -> tuple[str | None, Loc | None]:
    """The ``valueFrom.fieldRef.fieldPath`` of an env entry (spaces stripped) and its position; ``(None, None)``
    when it has none."""
    ref = get_in(e, "valueFrom", "fieldRef")
    path = ref.get("fieldPath") if isinstance(ref, dict) else None
    return (path.strip(), loc_of(ref, "fieldPath")) if isinstance(path, str) else (None, None)


def with_injected_env(
    pod_spec: LDict,
    items: Sequence[tuple[str, str, Loc | None]],
    fields: Mapping[str, str] | None = None,
    *,
    init_containers: bool = False,
    operator_first: bool = False,
    overwrite: Collection[str] = (),
) -> LDict:
    """A copy of ``pod_spec`` whose containers also have the env variables an operator injects into every pod
    (``(name, value, position of what sets it)``), unless a container defines that name itself; with
    ``operator_first`` the injected variables come first in every container's env and replace the container's own
    entries of the same names (LeaderWorkerSet from v0.4.0: kubernetes-sigs/lws ``pkg/utils/pod/pod_utils.go``
    ``addEnvVarsIfNotExists``, which despite its name builds the list from the injected variables and then adds
    only the container's entries of other names), so the container's own entries may refer to them with
    ``$(NAME)``, as the kubelet expands references to earlier entries only. ``fields`` maps
    downward-API field paths of the pods the operator creates to the value it gives them (a label it sets,
    ``metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']`` -> ``"1"``): a container's env entry taking
    its value from one (``valueFrom.fieldRef.fieldPath``) gets that value, at the entry's own position, as the
    kubelet would resolve it in those pods. ``init_containers``: the ``initContainers`` get them too (LWS injects
    into both lists, kubernetes-sigs/lws ``pkg/utils/pod/pod_utils.go`` ``AddLWSVariables``; a sidecar init
    container can run the engine). ``overwrite``: names whose entry of the container's own, where there is one,
    takes the injected value in its place (OME's ``UpdateEnvVars``), the others being appended unless the container
    sets them. The loaded objects are not changed."""
    if not (items or fields):
        return pod_spec
    keys = ("containers", "initContainers") if init_containers else ("containers",)
    ps: LDict | None = None
    for key in keys:
        containers = pod_spec.get(key)
        if not isinstance(containers, list):
            continue
        if ps is None:
            ps = located_copy(pod_spec)
        ps[key] = _with_env(pod_spec, containers, items, fields, operator_first, overwrite)
    return ps if ps is not None else pod_spec


def _with_env(
    pod_spec: LDict,
    containers: list[Any],
    items: Sequence[tuple[str, str, Loc | None]],
    fields: Mapping[str, str] | None,
    operator_first: bool = False,
    overwrite: Collection[str] = (),
) -> LList:
    """:func:`with_injected_env` of one container list."""
    new_list = LList(loc=loc_of(containers))
    for i, c in enumerate(containers):
        if isinstance(c, LDict):
            env = c.get("env")
            old = list(env) if isinstance(env, list) else []
            old_locs = [loc_of(env, j) for j in range(len(old))]
            resolved = False
            if fields:
                for j, e in enumerate(old):
                    path, at = _field_path(e)
                    if path is not None and path in fields and isinstance(e.get("name"), str):
                        at = at or old_locs[j]
                        old[j] = ldict(
                            at, [("name", e["name"], loc_of(e, "name")), ("value", fields[path], at)]
                        )
                        resolved = True
            names = _env_names(env)
            for n, v, vl in items:
                if n in overwrite and n in names and not operator_first:
                    for j, e in enumerate(old):
                        if isinstance(e, dict) and e.get("name") == n:
                            old[j] = ldict(
                                vl or old_locs[j], [("name", n, loc_of(e, "name")), ("value", v, vl)]
                            )
                            resolved = True
                            break  # the first entry of that name (UpdateEnvVars stops there)
            add = [(n, v, vl) for n, v, vl in items if operator_first or n not in names]
            if add or resolved:
                c2 = located_copy(c)
                extra = [(ldict(vl, [("name", n, vl), ("value", v, vl)]), vl) for n, v, vl in add]
                own = list(zip(old, old_locs, strict=True))
                if operator_first:
                    injected = {n: v for n, v, _vl in add}
                    # an entry of the container's own that reads the same value from the pod's labels stands at
                    # its fieldPath (where the user reads it) in the operator's place
                    same = {
                        e["name"]: (e, el)
                        for e, el in own
                        if isinstance(e, dict)
                        and isinstance(e.get("name"), str)
                        and e.get("value") == injected.get(e["name"])
                    }
                    head = [same.get(n, item) for (n, _v, _vl), item in zip(add, extra, strict=True)]
                    # a ``name`` that is not a string (a list is unhashable) names no injected variable
                    kept = [
                        (e, el)
                        for e, el in own
                        if not (
                            isinstance(e, dict) and isinstance(e.get("name"), str) and e["name"] in injected
                        )
                    ]
                    entries = [*head, *kept]
                else:
                    entries = [*own, *extra]
                c2["env"] = llist(loc_of(c, "env") or c.loc, entries)
                c = c2
        new_list.append(c)
        new_list.locs.append(loc_of(containers, i) or pod_spec.loc or Loc("-"))
    return new_list


def engine_containers(pod_spec: LDict) -> list[LDict]:
    """The containers of ``pod_spec`` kvlint reads: its ``containers``, then its sidecar ``initContainers`` that request
    an accelerator (``restartPolicy: Always``: started before the others and kept running beside them, Kubernetes API
    ``core/v1`` ``Container.restartPolicy``, "sidecar containers", beta and on by default since 1.29, GA in 1.33). A
    vLLM engine on a GPU run as such a sidecar of an application container passed as "0 serving containers". Other
    init containers run to completion before the pod starts: no server runs in one; and a sidecar without an
    accelerator (a routing proxy such as llm-d's, which KServe injects) serves no model kvlint sizes."""
    out: list[LDict] = []
    for key in ("containers", "initContainers"):
        items = pod_spec.get(key)
        for c in items if isinstance(items, list) else ():
            if isinstance(c, LDict) and (key == "containers" or _accelerated_sidecar(c)):
                out.append(c)
    return out


def _accelerated_sidecar(c: LDict) -> bool:
    """Whether the init container ``c`` is a sidecar (``restartPolicy: Always``) requesting an accelerator: a resource
    of :data:`kvlint.gpu_resources.GPU_RESOURCES`, a MIG slice or an AMD partition
    (:func:`kvlint.gpu_resources.is_gpu_resource`; limits or requests), or a DRA claim."""
    if c.get("restartPolicy") != "Always":
        return False
    res = c.get("resources")
    if not isinstance(res, dict):
        return False
    if res.get("claims"):
        return True
    for part in ("limits", "requests"):
        amounts = res.get(part)
        for name in amounts if isinstance(amounts, dict) else ():
            if is_gpu_resource(name):
                return True
    return False
