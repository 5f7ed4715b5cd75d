"""Stage 2 of the pipeline: find the PodSpecs (workloads) in loaded documents.

``find_workloads`` returns one :class:`~kvlint.types.Workload` per PodSpec:

* Known kinds, at their fixed paths: ``Pod`` (``spec``), ``PodTemplate`` (``template.spec``),
  ``Deployment``/``StatefulSet``/``DaemonSet``/``ReplicaSet``/``ReplicationController``/``Job``
  (``spec.template.spec``), ``CronJob`` (``spec.jobTemplate.spec.template.spec``) and ``LeaderWorkerSet``
  (``spec.leaderWorkerTemplate.leaderTemplate.spec`` with ``role="leader"`` and
  ``...workerTemplate.spec`` with ``role="worker"``; ``group_size`` from ``leaderWorkerTemplate.size``,
  ``replicas`` = ``spec.replicas``, the number of groups). When ``leaderTemplate`` is absent LWS runs the
  worker template for the leader too; that template is then reported once, as ``role="worker"``.
* Every other kind (KServe ``ServingRuntime``/``LLMInferenceService``, Ray ``RayService``/``RayCluster``,
  ``JobSet``, OpenShift ``Template``, operator CRDs...), and known kinds whose fixed path holds nothing, are
  searched structurally: a mapping with a ``containers`` list holding a mapping with ``image`` or ``name``
  is a PodSpec. The search does not look inside ``containers``/``initContainers``/``volumes`` of a PodSpec
  it found, but does look at its other keys, so a nested PodSpec (KServe ``workerSpec``) is its own
  workload and nothing is counted twice.
* Container-like objects that are not in a ``containers`` list become a Workload whose ``pod_spec`` is a
  *synthetic* :class:`~kvlint.source.LDict`: the enclosing mapping's other keys (``nodeSelector``,
  ``tolerations``, ``volumes``... with their locations) plus ``containers: [that mapping]``. The container
  mapping itself is the loaded object, so every position inside it is real; the synthetic ``containers``
  list is located at the container mapping and ``pod_spec.loc`` at the enclosing mapping. Two cases:
  KServe ``InferenceService`` ``spec.predictor.model`` (and the older per-framework keys such as
  ``spec.predictor.huggingface``; path ``spec.predictor.model``) and OME ``runner`` mappings
  (``spec.engineConfig.runner``, ``...leader.runner``; path ``spec.engineConfig.runner``).

For structurally found PodSpecs: ``replicas`` is the nearest enclosing int ``replicas`` (a Ray worker
group's, a DisaggregatedSet role's, the object's ``spec.replicas``); ``group_size`` the nearest enclosing
``leaderWorkerTemplate.size``; ``role`` the nearest enclosing ``leaderTemplate``/``leader`` (leader),
``workerTemplate``/``workerSpec``/``workerGroupSpecs``/``worker`` (worker) or ``headGroupSpec`` (head)
— kvlint's extension of the LeaderWorkerSet roles to the other multi-pod shapes.

Labels and annotations are the object's ``metadata`` merged with the pod template's (the ``metadata``
next to the PodSpec's ``spec`` key; KServe predictor ``labels``/``annotations``), template winning.
Odd shapes (``containers`` not a list, ``metadata`` a string, ...) are skipped; nothing here raises.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from typing import Any

from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Workload

__all__ = ["configmaps", "find_workloads", "mounted_file", "object_ref", "POD_TEMPLATE_PATHS"]

#: Fixed PodSpec paths of the built-in workload kinds.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}

# KServe v1beta1 predictor keys that hold a container-like model spec (``model`` and the older
# per-framework shorthands).
_KSERVE_MODEL_KEYS = (
    "model",
    "huggingface",
    "pytorch",
    "triton",
    "tensorflow",
    "sklearn",
    "xgboost",
    "onnx",
    "lightgbm",
    "paddle",
    "pmml",
)
_ROLE_KEYS = {
    "leaderTemplate": "leader",
    "leader": "leader",
    "workerTemplate": "worker",
    "workerSpec": "worker",
    "workerGroupSpecs": "worker",
    "worker": "worker",
    "headGroupSpec": "head",
}
# Keys of a PodSpec (or of anything) that never hold another PodSpec.
_NO_DESCEND = frozenset(
    {"containers", "initContainers", "ephemeralContainers", "volumes", "metadata", "status", "env"}
)
_MAX_DEPTH = 256

# a chain entry: (mapping or list, key or index inside it)
_Chain = list[tuple[Any, Any]]


# --------------------------------------------------------------------------------------------------
# public API


def find_workloads(docs: Sequence[Document]) -> list[Workload]:
    """Every PodSpec in ``docs``, in document order (see the module docstring for where they are found).

    Args:
        docs: loaded documents; non-mapping documents and documents without PodSpecs contribute nothing.

    Returns:
        One :class:`~kvlint.types.Workload` per PodSpec, with ``kind``/``name``/``namespace`` of the
        top-level object, ``path`` the dotted path of the PodSpec (list items as ``[i]``), merged labels
        and annotations, ``replicas``, ``role`` and ``group_size`` when the object declares them.
        Never raises on odd shapes.
    """
    out: list[Workload] = []
    for doc in docs:
        if isinstance(doc.data, dict):
            try:
                out.extend(_doc_workloads(doc))
            except RecursionError:  # pragma: no cover - loader caps nesting at 200
                continue
    return out


def object_ref(w: Workload) -> str:
    """``Kind/namespace/name`` of a workload's object (``Kind/name`` when it has no namespace)."""
    kind = w.kind or "Object"
    if w.namespace:
        return f"{kind}/{w.namespace}/{w.name}"
    return f"{kind}/{w.name}"


def configmaps(docs: Sequence[Document]) -> dict[tuple[str | None, str], LDict]:
    """ConfigMap ``data`` of every ConfigMap document, keyed by ``(namespace, name)``.

    ``namespace`` is None when the manifest does not set one. ConfigMaps without a name or without a
    ``data`` mapping are left out; a later ConfigMap with the same key replaces an earlier one (as
    ``kubectl apply`` of the files in order would).
    """
    out: dict[tuple[str | None, str], LDict] = {}
    for doc in docs:
        if doc.kind != "ConfigMap":
            continue
        data = doc.data.get("data")
        name = doc.name
        if not name or not isinstance(data, dict):
            continue
        if not isinstance(data, LDict):
            data = LDict(data, loc=doc.loc)
        out[(doc.namespace, name)] = data
    return out


def mounted_file(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: dict[tuple[str | None, str], LDict],
    *,
    namespace: str | None = None,
) -> tuple[str, Loc | None] | None:
    """Text of the file at ``path`` inside ``container`` when it comes from a ConfigMap in ``cms``.

    Follows the container's ``volumeMounts`` (``mountPath``, with ``subPath`` either naming the file
    mounted at exactly ``mountPath`` or a directory under the volume) to a ``configMap`` volume (or a
    ``projected`` volume's ``configMap`` sources) of ``pod_spec``, maps the file name through the
    volume's ``items`` (``key`` -> ``path``) when present, and looks the key up in the ConfigMap's
    ``data``. The ConfigMap is looked up as ``(namespace, name)``, then ``(None, name)``, then by name
    alone when exactly one ConfigMap has it.

    Returns:
        ``(text, loc)`` where ``loc`` is the position of the ``data`` value (for a block scalar, the
        ``|`` indicator line; the text starts on the next line), or None when the path is not mounted
        from a known ConfigMap. Never raises.
    """
    try:
        return _mounted_file(pod_spec, container, path, cms, namespace)
    except (TypeError, AttributeError, ValueError):
        return None


# --------------------------------------------------------------------------------------------------
# workloads


def _get(m: Any, *keys: Any) -> Any:
    for k in keys:
        if not isinstance(m, dict):
            return None
        m = m.get(k)
    return m


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_map(m: Any) -> dict[str, str]:
    if not isinstance(m, dict):
        return {}
    return {str(k): ("" if v is None else str(v)) for k, v in m.items()}


def _meta(m: Any) -> tuple[dict[str, str], dict[str, str]]:
    """(annotations, labels) of a ``metadata`` mapping."""
    if not isinstance(m, dict):
        return {}, {}
    return _str_map(m.get("annotations")), _str_map(m.get("labels"))


def _is_pod_spec(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    c = m.get("containers")
    return isinstance(c, list) and any(isinstance(x, dict) and ("image" in x or "name" in x) for x in c)


def _path_str(keys: Sequence[Any]) -> str:
    out = ""
    for k in keys:
        if isinstance(k, int):
            out += f"[{k}]"
        else:
            out += ("." if out else "") + str(k)
    return out


def _doc_workloads(doc: Document) -> list[Workload]:
    data = doc.data
    kind = doc.kind
    found: list[Workload] = []
    if kind == "LeaderWorkerSet":
        found = _lws(doc)
    elif kind in POD_TEMPLATE_PATHS:
        keys = POD_TEMPLATE_PATHS[kind]
        chain: _Chain = []
        node: Any = data
        for k in keys:
            if not isinstance(node, dict):
                node = None
                break
            chain.append((node, k))
            node = node.get(k)
        if _is_pod_spec(node):
            found = [_make(doc, node, chain, replicas=_int(_get(data, "spec", "replicas")))]
    elif kind == "InferenceService":
        # the predictor's model first, then anything else (transformer, explainer, workerSpec)
        found = _kserve_predictor(doc)
        taken = {id(w.pod_spec) for w in found}
        for w in _structural(doc):
            if id(w.pod_spec) in taken or (found and w.path == "spec.predictor"):
                continue
            found.append(w)
        return found
    if found:
        return found
    return list(_structural(doc))


def _make(
    doc: Document,
    pod_spec: dict,
    chain: _Chain,
    *,
    path: str | None = None,
    replicas: int | None = None,
    role: str | None = None,
    group_size: int | None = None,
    extra_meta: Any = None,
) -> Workload:
    """A Workload for ``pod_spec`` reached through ``chain`` (parents from the document root)."""
    ann, lab = _meta(_get(doc.data, "metadata"))
    if chain and chain[-1][1] == "spec" and isinstance(chain[-1][0], dict) and chain[-1][0] is not doc.data:
        t_ann, t_lab = _meta(chain[-1][0].get("metadata"))
        ann.update(t_ann)
        lab.update(t_lab)
    if isinstance(extra_meta, dict):
        ann.update(_str_map(extra_meta.get("annotations")))
        lab.update(_str_map(extra_meta.get("labels")))
    if not isinstance(pod_spec, LDict):
        pod_spec = LDict(pod_spec, loc=doc.loc)
    assert isinstance(pod_spec, LDict)
    return Workload(
        doc=doc,
        kind=doc.kind,
        name=doc.name,
        namespace=doc.namespace,
        pod_spec=pod_spec,
        path=path if path is not None else _path_str([k for _, k in chain]),
        annotations=ann,
        labels=lab,
        replicas=replicas,
        role=role,
        group_size=group_size,
    )


def _lws(doc: Document) -> list[Workload]:
    """LeaderWorkerSet: leader and worker templates (leader only when declared)."""
    spec = _get(doc.data, "spec")
    lwt = _get(spec, "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return []
    size = _int(lwt.get("size"))
    replicas = _int(_get(spec, "replicas"))
    out = []
    for key, role in (("leaderTemplate", "leader"), ("workerTemplate", "worker")):
        tmpl = lwt.get(key)
        ps = _get(tmpl, "spec")
        if _is_pod_spec(ps):
            chain: _Chain = [(doc.data, "spec"), (spec, "leaderWorkerTemplate"), (lwt, key), (tmpl, "spec")]
            out.append(_make(doc, ps, chain, replicas=replicas, role=role, group_size=size))
    return out


def _synthetic(holder: dict, container: dict, drop: Sequence[str]) -> LDict:
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


def _kserve_predictor(doc: Document) -> list[Workload]:
    """InferenceService ``spec.predictor``: its ``model`` (or framework shorthand) as a synthetic PodSpec,
    or the predictor itself when it is a plain PodSpec."""
    spec = _get(doc.data, "spec")
    pred = _get(spec, "predictor")
    if not isinstance(pred, dict):
        return []
    chain: _Chain = [(doc.data, "spec"), (spec, "predictor")]
    for key in _KSERVE_MODEL_KEYS:
        model = pred.get(key)
        if isinstance(model, dict):
            ps = _synthetic(pred, model, _KSERVE_MODEL_KEYS)
            return [
                _make(
                    doc,
                    ps,
                    chain,
                    path=f"spec.predictor.{key}",
                    replicas=_int(pred.get("replicas")),
                    extra_meta=pred,
                )
            ]
    if _is_pod_spec(pred):
        return [
            _make(
                doc, pred, chain, path="spec.predictor", replicas=_int(pred.get("replicas")), extra_meta=pred
            )
        ]
    return []


def _context(chain: _Chain) -> tuple[int | None, str | None, int | None]:
    """(replicas, role, group_size) from the nearest enclosing declarations."""
    replicas = role = group_size = None
    for parent, key in reversed(chain):
        if isinstance(parent, dict):
            if replicas is None:
                replicas = _int(parent.get("replicas"))
            if role is None and isinstance(key, str):
                role = _ROLE_KEYS.get(key)
            if group_size is None and key == "leaderWorkerTemplate":
                group_size = _int(_get(parent, "leaderWorkerTemplate", "size"))
    return replicas, role, group_size


def _structural(doc: Document) -> Iterator[Workload]:
    """PodSpecs (and OME ``runner`` containers) anywhere in the document."""
    chain: _Chain = []

    def walk(node: Any, depth: int) -> Iterator[Workload]:
        if depth > _MAX_DEPTH:
            return
        if isinstance(node, dict):
            if _is_pod_spec(node):
                replicas, role, group_size = _context(chain)
                yield _make(doc, node, chain, replicas=replicas, role=role, group_size=group_size)
            else:
                runner = node.get("runner")
                if isinstance(runner, dict) and "image" in runner:
                    replicas, role, group_size = _context(chain)
                    ps = _synthetic(node, runner, ("runner",))
                    path = _path_str([k for _, k in chain] + ["runner"])
                    yield _make(
                        doc, ps, chain, path=path, replicas=replicas, role=role, group_size=group_size
                    )
            for k, v in node.items():
                if k in _NO_DESCEND or k == "runner" or not isinstance(v, (dict, list)):
                    continue
                chain.append((node, k))
                yield from walk(v, depth + 1)
                chain.pop()
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, (dict, list)):
                    chain.append((node, i))
                    yield from walk(v, depth + 1)
                    chain.pop()

    yield from walk(doc.data, 0)


# --------------------------------------------------------------------------------------------------
# ConfigMap-mounted files


def _find_cm(cms: dict[tuple[str | None, str], LDict], name: str, namespace: str | None) -> LDict | None:
    hit = cms.get((namespace, name))
    if hit is None:
        hit = cms.get((None, name))
    if hit is None:
        same = [v for (_, n), v in cms.items() if n == name]
        hit = same[0] if len(same) == 1 else None
    return hit


def _cm_sources(volume: dict) -> list[dict]:
    """``configMap`` sources of a volume (plain or projected)."""
    out = []
    cm = volume.get("configMap")
    if isinstance(cm, dict):
        out.append(cm)
    sources = _get(volume, "projected", "sources")
    if isinstance(sources, list):
        for s in sources:
            cm = _get(s, "configMap")
            if isinstance(cm, dict):
                out.append(cm)
    return out


def _mounted_file(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: dict[tuple[str | None, str], LDict],
    namespace: str | None,
) -> tuple[str, Loc | None] | None:
    if not isinstance(path, str) or not path:
        return None
    target = posixpath.normpath(path)
    mounts = container.get("volumeMounts") if isinstance(container, dict) else None
    volumes = pod_spec.get("volumes") if isinstance(pod_spec, dict) else None
    if not isinstance(mounts, list) or not isinstance(volumes, list):
        return None
    by_name = {v.get("name"): v for v in volumes if isinstance(v, dict)}
    for mount in mounts:
        if not isinstance(mount, dict):
            continue
        mpath = mount.get("mountPath")
        if not isinstance(mpath, str) or not mpath:
            continue
        mpath = posixpath.normpath(mpath)
        sub = mount.get("subPath")
        sub = posixpath.normpath(sub) if isinstance(sub, str) and sub else None
        if target == mpath:
            if sub is None:
                continue  # a directory mount, not a file
            rel = sub
        elif target.startswith(mpath.rstrip("/") + "/"):
            rel = target[len(mpath.rstrip("/")) + 1 :]
            if sub is not None:
                rel = posixpath.join(sub, rel)
        else:
            continue
        volume = by_name.get(mount.get("name"))
        if not isinstance(volume, dict):
            continue
        for src in _cm_sources(volume):
            name = src.get("name")
            if not isinstance(name, str):
                continue
            items = src.get("items")
            key: Any = None
            if isinstance(items, list) and items:
                for it in items:
                    if isinstance(it, dict) and posixpath.normpath(str(it.get("path", ""))) == rel:
                        key = it.get("key")
                        break
            elif "/" not in rel:
                key = rel
            if key is None:
                continue
            data = _find_cm(cms, name, namespace)
            if data is None or key not in data:
                continue
            value = data[key]
            text = value if isinstance(value, str) else ("" if value is None else str(value))
            return text, loc_of(data, key)
    return None
