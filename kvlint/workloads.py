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

import math
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
    found: list[Workload] = _crd_workloads(doc)
    if found:
        return found
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
            hf = _kserve_hf_runtime(doc, key, model)
            ps = _synthetic(pred, hf[0] if hf else model, _KSERVE_MODEL_KEYS)
            if hf:
                _add_memory_shm(ps, hf[0])
            w = _make(
                doc,
                ps,
                chain,
                path=f"spec.predictor.{key}",
                replicas=_int(pred.get("replicas")),
                extra_meta=pred,
            )
            for k, v in (hf[1] if hf else {}).items():
                w.annotations.setdefault(k, v)
            return [w]
    if _is_pod_spec(pred):
        return [
            _make(
                doc, pred, chain, path="spec.predictor", replicas=_int(pred.get("replicas")), extra_meta=pred
            )
        ]
    return []


#: The container KServe's Hugging Face ClusterServingRuntime (``kserve-huggingfaceserver``, selected for
#: ``modelFormat: huggingface``) contributes when the InferenceService names no image: the
#: ``kserve/huggingfaceserver`` image, whose ENTRYPOINT is ``python -m huggingfaceserver``, args
#: ``--model_name={{.Name}}`` and a memory-backed ``/dev/shm``. Source: kserve/kserve
#: config/runtimes/kserve-huggingfaceserver.yaml@6362f1f08a20d3022758276285aa95544a8aba73 (the image tag is
#: set by the KServe release) and python/huggingfaceserver/Dockerfile.
KSERVE_HF_IMAGE = "kserve/huggingfaceserver"
KSERVE_HF_COMMAND = ("python", "-m", "huggingfaceserver")


def _kserve_hf_runtime(doc: Document, key: str, model: dict) -> tuple[LDict, dict[str, str]] | None:
    """For an InferenceService predictor ``model`` of ``modelFormat: huggingface`` (or the ``huggingface``
    shorthand) without its own image or command: the container the runtime and the model spec make
    together (KServe appends the model's ``args`` to the runtime's), plus annotations: the image source
    (KV208) and, for an ``hf://ORG/NAME`` ``storageUri`` that the server reads from ``/mnt/models``, the
    model (``kvlint.io/model``). None for other shapes, and for ``--backend=huggingface`` (transformers, not
    vLLM)."""
    fmt = model.get("modelFormat")
    fmt_name = fmt.get("name") if isinstance(fmt, dict) else None
    if not (key == "huggingface" or str(fmt_name or "").lower() == "huggingface"):
        return None
    if model.get("image") or model.get("command") or not isinstance(model, LDict):
        return None
    runtime = str(model.get("runtime") or "")
    if runtime and not runtime.startswith("kserve-huggingfaceserver"):
        return None  # a ServingRuntime of the cluster's own: its container is not known here
    from kvlint.engines.kserve import huggingface_backend, model_id_given

    user_args = model.get("args")
    words = [str(a) for a in user_args] if isinstance(user_args, list) else []
    if huggingface_backend(words) not in ("auto", "vllm"):
        return None  # transformers backend: not an engine kvlint sizes; keep the spec as written
    anchor = loc_of(model, "modelFormat") or loc_of(model) or doc.loc
    c = LDict(loc=model.loc)
    for k, v in model.items():
        c[k] = v
        if k in model.locs:
            c.locs[k] = model.locs[k]
        if k in model.key_locs:
            c.key_locs[k] = model.key_locs[k]
    c.setdefault("name", "kserve-container")
    c.locs.setdefault("name", anchor)
    c["image"] = KSERVE_HF_IMAGE
    c.locs["image"] = anchor
    c["command"] = _ll(anchor, [(w, anchor) for w in KSERVE_HF_COMMAND])
    c.locs["command"] = anchor
    items: list[tuple[Any, Loc | None]] = [
        (f"--model_name={doc.name}", loc_of(_get(doc.data, "metadata"), "name"))
    ]
    if isinstance(user_args, list):
        items += [(str(a), loc_of(user_args, i)) for i, a in enumerate(user_args)]
    c["args"] = _ll(loc_of(model, "args") or anchor, items)
    c.locs["args"] = loc_of(model, "args") or anchor
    ann = {
        IMAGE_SOURCE_ANNOTATION: "the KServe ClusterServingRuntime kserve-huggingfaceserver (its image tag is set by "
        "the KServe release), not this InferenceService"
    }
    uri = str(model.get("storageUri") or "")
    has_id = any(model_id_given(w) for w in words)
    if uri.startswith("hf://") and uri[5:].count("/") >= 1 and not has_id:
        # hf://ORG/NAME[:REVISION] (KServe's Hugging Face storage URI)
        ann["kvlint.io/model"] = "/".join(uri[5:].split("/")[:2]).split(":", 1)[0]
    return c, ann


def _add_memory_shm(pod_spec: LDict, container: LDict) -> None:
    """Add the runtime's memory-backed ``/dev/shm`` (``devshm`` emptyDir) unless the pod already mounts one."""
    mounts = container.get("volumeMounts")
    if isinstance(mounts, list) and any(
        isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" for m in mounts
    ):
        return
    anchor = loc_of(container, "image") or container.loc
    mount = _ld(anchor, [("name", "devshm", anchor), ("mountPath", "/dev/shm", anchor)])
    container["volumeMounts"] = _ll(anchor, [*((m, None) for m in (mounts or [])), (mount, anchor)])
    vols = pod_spec.get("volumes")
    vol = _ld(
        anchor,
        [("name", "devshm", anchor), ("emptyDir", _ld(anchor, [("medium", "Memory", anchor)]), anchor)],
    )
    pod_spec["volumes"] = _ll(
        anchor, [*((v, None) for v in (vols if isinstance(vols, list) else [])), (vol, anchor)]
    )


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


# --------------------------------------------------------------------------------------------------
# operator CRDs without a PodSpec: KubeAI Model, KAITO Workspace/InferenceSet, production-stack
# VLLMRuntime, NVIDIA NIMService -> the pod their operator would create

#: Annotation a synthetic workload carries to say, in words, what decided its accelerator (read by
#: :func:`kvlint.accelerators.resolve_placement` when ``kvlint.io/accelerator`` decides).
ACCELERATOR_SOURCE_ANNOTATION = "kvlint.io/accelerator-source"
#: Annotation a synthetic workload carries when its operator, not the object, chooses the engine image
#: (read by the KV208 check, which then asks for --engine-version instead of an image tag).
IMAGE_SOURCE_ANNOTATION = "kvlint.io/image-source"

#: Annotation a synthetic workload carries to say why its accelerator cannot be known (appended to the
#: placement's "nothing names the accelerator" reason).
ACCELERATOR_WHY_ANNOTATION = "kvlint.io/accelerator-why"
#: Model reference given to a KAITO preset (``kaito-preset:<name>``); model resolution explains why it
#: cannot be resolved (:mod:`kvlint.models.resolve`).
KAITO_PRESET_PREFIX = "kaito-preset:"

#: KubeAI resource profiles of the Helm chart's default values -> (GPU resource name, catalogue id or
#: None when the GPU is not in the catalogue). Source: substratusai/kubeai
#: charts/kubeai/values.yaml@00218190ccce0c96ccc7324c947e1bad57f91e3a ``resourceProfiles`` (each
#: ``nvidia-gpu-*`` profile sets ``limits: nvidia.com/gpu: "1"``; the H100/A100 names are taken as the
#: parts charts/kubeai/values-gke.yaml selects: ``nvidia-h100-80gb`` = H100 SXM 80GB,
#: ``nvidia-a100-80gb``, ``nvidia-tesla-a100`` = A100 40GB) and values-amd-gpu-device-plugin.yaml@bfd91eb9
#: (``amd-gpu-mi300x``: ``amd.com/gpu.device-id: 74a1``, 192G VRAM = MI300X).
KUBEAI_PROFILES: dict[str, tuple[str, str | None]] = {
    "nvidia-gpu-t4": ("nvidia.com/gpu", "nvidia-t4"),
    "nvidia-gpu-l4": ("nvidia.com/gpu", "nvidia-l4"),
    "nvidia-gpu-l40s": ("nvidia.com/gpu", "nvidia-l40s"),
    "nvidia-gpu-h100": ("nvidia.com/gpu", "nvidia-h100-sxm5-80gb"),
    "nvidia-gpu-gh200": ("nvidia.com/gpu", "nvidia-gh200-96gb"),
    "nvidia-gpu-a100-80gb": ("nvidia.com/gpu", "nvidia-a100-sxm4-80gb"),
    "nvidia-gpu-a100-40gb": ("nvidia.com/gpu", "nvidia-a100-sxm4-40gb"),
    "nvidia-gpu-a16": ("nvidia.com/gpu", None),
    "nvidia-gpu-rtx4070-8gb": ("nvidia.com/gpu", None),
    "amd-gpu-mi300x": ("amd.com/gpu", "amd-instinct-mi300x"),
}
#: KubeAI profiles that are not GPUs -> (resource name or None, catalogue id or None, the chart's default
#: vLLM image for the profile's ``imageName``). Source: substratusai/kubeai@2f32ef498da629f96fd417ddfaaf22c28d40787e
#: charts/kubeai/values.yaml (``resourceProfiles.cpu.imageName: cpu``; ``modelServers.VLLM.images.cpu:
#: substratusai/vllm:v0.6.3.post1-cpu``, ``google-tpu: substratusai/vllm:v0.6.4.post1-tpu``) and
#: charts/kubeai/values-gke.yaml (``google-tpu-v5e-{1x1,2x2,2x4}``: ``imageName: google-tpu``,
#: ``limits: google.com/tpu: 1``, nodeSelector ``cloud.google.com/gke-tpu-accelerator:
#: tpu-v5-lite-podslice`` = TPU v5e). The image is the chart default, tag included, because the tag is where
#: the platform is named (``-cpu``/``-tpu``); a Model's ``spec.image`` overrides it.
KUBEAI_NON_GPU_PROFILES: dict[str, tuple[str | None, str | None, str]] = {
    "cpu": (None, None, "substratusai/vllm:v0.6.3.post1-cpu"),
    "google-tpu-v5e-1x1": ("google.com/tpu", "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
    "google-tpu-v5e-2x2": ("google.com/tpu", "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
    "google-tpu-v5e-2x4": ("google.com/tpu", "google-tpu-v5e", "substratusai/vllm:v0.6.4.post1-tpu"),
}
# KubeAI's vLLM image is chosen by the install (Helm ``modelServers.VLLM.images``), not the Model: the
# tag (and so the vLLM version) is unknown from the manifest.
_KUBEAI_VLLM_IMAGE = "vllm/vllm-openai"
# AMD profiles run a ROCm build of vLLM (vLLM docs, "Installation > GPU > AMD ROCm": rocm/vllm images).
_KUBEAI_ROCM_IMAGE = "rocm/vllm"
#: KAITO's Azure SKU table: VM size -> (GPUCount, GPUMemGB, the total GPU memory of the VM in GiB as KAITO
#: reads it). Source: kaito-project/kaito pkg/sku/azure_sku_handler.go@46dea37dec11c6610e25591a5cb8b1744a1e2655
#: (``NewAzureSKUHandler``; the NVIDIA and AMD Instinct sizes).
KAITO_AZURE_SKUS: dict[str, tuple[int, int]] = {
    "Standard_NC6s_v3": (1, 16),
    "Standard_NC12s_v3": (2, 32),
    "Standard_NC24s_v3": (4, 64),
    "Standard_NC24rs_v3": (4, 64),
    "Standard_NC4as_T4_v3": (1, 16),
    "Standard_NC8as_T4_v3": (1, 16),
    "Standard_NC16as_T4_v3": (1, 16),
    "Standard_NC64as_T4_v3": (4, 64),
    "Standard_NC24ads_A100_v4": (1, 80),
    "Standard_NC48ads_A100_v4": (2, 160),
    "Standard_NC96ads_A100_v4": (4, 320),
    "Standard_ND96asr_A100_v4": (8, 320),
    "Standard_ND96amsr_A100_v4": (8, 640),
    "Standard_NC40ads_H100_v5": (1, 94),
    "Standard_NC80adis_H100_v5": (2, 188),
    "Standard_ND96isr_H100_v5": (8, 640),
    "Standard_NCC40ads_H100_v5": (1, 94),
    "Standard_ND96isr_H200_v5": (8, 1128),
}


#: Where KAITO mounts the inference config ConfigMap (``DefaultConfigMapMountPath``); kvlint only needs the
#: mount and the ``--kaito-config-file`` argument to agree.
KAITO_CONFIG_DIR = "/mnt/config"


def kaito_gpu_memory_utilization(gpu_count: int, gpu_mem_gib: int) -> float:
    """KAITO's ``--gpu-memory-utilization`` for a node with ``gpu_count`` GPUs and ``gpu_mem_gib`` GiB of GPU
    memory in all: ``floor((1 - 1.5 GiB / per-GPU GiB) x 100) / 100``, at most 0.95 (0.9 when the per-GPU
    memory is 1.5 GiB or less). Source: kaito-project/kaito pkg/model/interface.go
    @9e0ac34d4a8a81b57cde5c166a6ec4e0eaf13d19 ``getGPUMemoryUtilForVLLM`` (``ReservedNonKVCacheMemory`` 1.5Gi,
    ``UpperMemoryUtilVLLM`` 0.95, ``DefaultMemoryUtilVLLM`` 0.9)."""
    if gpu_count <= 0 or gpu_mem_gib <= 0:
        return 0.9
    per_gpu = gpu_mem_gib / gpu_count
    if per_gpu <= 1.5:
        return 0.9
    return min(math.floor((1.0 - 1.5 / per_gpu) * 100) / 100, 0.95)


# KAITO's vLLM presets run the kaito-base image's inference_api.py (a vLLM-argument-compatible wrapper);
# its tag is chosen by the KAITO release.
_KAITO_IMAGE = "mcr.microsoft.com/aks/kaito/kaito-base"


def _crd_workloads(doc: Document) -> list[Workload]:
    """Synthetic workloads for the operator CRDs kvlint understands (empty for other kinds)."""
    api = str(doc.data.get("apiVersion", ""))
    kind = doc.kind
    if kind == "Model" and api.startswith("kubeai.org/"):
        return _kubeai_model(doc)
    if kind in ("Workspace", "InferenceSet") and api.startswith("kaito.sh/"):
        return _kaito(doc)
    if kind == "VLLMRuntime" and api.startswith("production-stack.vllm.ai/"):
        return _vllm_runtime(doc)
    if kind == "NIMService" and api.startswith("apps.nvidia.com/"):
        return _nim_service(doc)
    return []


def _ld(loc: Loc | None, items: Sequence[tuple[str, Any, Loc | None]]) -> LDict:
    """An LDict located at ``loc`` whose values (and keys) are located at their given positions."""
    d = LDict(loc=loc)
    for k, v, vloc in items:
        d[k] = v
        if vloc is not None or loc is not None:
            d.locs[k] = vloc or loc  # type: ignore[assignment]
            d.key_locs[k] = vloc or loc  # type: ignore[assignment]
    return d


def _ll(loc: Loc | None, items: Sequence[tuple[Any, Loc | None]]) -> LList:
    """An LList located at ``loc`` whose items are located at their given positions."""
    out = LList([v for v, _ in items], loc=loc)
    out.locs = [il or loc or Loc("-") for _, il in items]
    return out


def _synthetic_workload(
    doc: Document,
    pod_spec: LDict,
    path: str,
    *,
    replicas: int | None,
    extra: Sequence[tuple[str, str, Loc | None]] = (),
) -> Workload:
    """A Workload for a synthetic PodSpec; ``extra`` annotations (key, value, loc) are added under the
    object's own (which win: a user's ``kvlint.io/accelerator`` beats a derived one)."""
    ann_src, labels = _meta(_get(doc.data, "metadata"))
    ann = LDict(loc=doc.loc)
    own = _get(doc.data, "metadata", "annotations")
    user_acc = "kvlint.io/accelerator" in ann_src
    for k, v, vloc in extra:
        if k in ann_src or (user_acc and k.startswith("kvlint.io/accelerator")):
            continue
        ann[k] = v
        if vloc is not None:
            ann.locs[k] = vloc
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
    )


def _env_list(env: Any) -> LList | None:
    """A container ``env`` list from a ``{NAME: value}`` mapping (KubeAI ``spec.env``), sorted by name as
    KubeAI's vLLMPodForModel does; positions are the mapping's values."""
    if not isinstance(env, dict):
        return None
    items = []
    for k in sorted(env, key=str):
        eloc = loc_of(env, k)
        items.append(
            (
                _ld(eloc, [("name", str(k), eloc), ("value", "" if env[k] is None else str(env[k]), eloc)]),
                eloc,
            )
        )
    return _ll(loc_of(env), items)


def _kubeai_model(doc: Document) -> list[Workload]:
    """KubeAI ``Model`` (kubeai.org/v1) with ``spec.engine: VLLM`` -> the pod KubeAI's model controller
    creates.

    Source: substratusai/kubeai internal/modelcontroller/engine_vllm.go ``vLLMPodForModel``
    (@07722ae0342f16897af606cb7a7c2fc99fa36efd): container ``server`` running
    ``python3 -m vllm.entrypoints.openai.api_server`` with args ``--model=<hf repo of spec.url>``,
    ``--served-model-name=<metadata.name>`` then ``spec.args``; ``spec.env`` as env sorted by name; the
    resource profile's nodeSelector/limits. ``spec.resourceProfile: <profile>:<count>`` requests
    ``count`` x the profile's resources (docs/concepts/resource-profiles.md: ``nvidia-gpu-l4:2`` = 2x L4).
    The profile's nodeSelector depends on the install, so the GPU is taken from the profile name
    (:data:`KUBEAI_PROFILES`) and recorded as ``kvlint.io/accelerator`` located at
    ``spec.resourceProfile``. Other engines (OLlama, FasterWhisper, Infinity) give no workload.
    """
    spec = _get(doc.data, "spec")
    if not isinstance(spec, dict) or str(spec.get("engine", "")).upper() != "VLLM":
        return []
    sloc = loc_of(spec) or doc.loc
    url = spec.get("url")
    url_s = str(url) if url is not None else ""
    model = url_s[len("hf://") :] if url_s.startswith("hf://") else url_s
    name_loc = loc_of(_get(doc.data, "metadata"), "name")
    args_items: list[tuple[Any, Loc | None]] = [
        (f"--model={model}", loc_of(spec, "url")),
        (f"--served-model-name={doc.name}", name_loc),
    ]
    user_args = spec.get("args")
    if isinstance(user_args, list):
        for i, a in enumerate(user_args):
            args_items.append((str(a), loc_of(user_args, i)))
    engine_loc = loc_of(spec, "engine")
    image = spec.get("image")
    profile_name = str(spec.get("resourceProfile") or "").partition(":")[0]
    non_gpu = KUBEAI_NON_GPU_PROFILES.get(profile_name)
    default_image = _KUBEAI_ROCM_IMAGE if profile_name.startswith("amd-") else _KUBEAI_VLLM_IMAGE
    if non_gpu is not None:
        default_image = non_gpu[2]
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", "server", engine_loc),
        (
            "image",
            str(image) if image else default_image,
            loc_of(spec, "image") if image else engine_loc,
        ),
        (
            "command",
            _ll(
                engine_loc, [(w, engine_loc) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")]
            ),
            engine_loc,
        ),
        ("args", _ll(loc_of(spec, "args") if isinstance(user_args, list) else engine_loc, args_items), None),
    ]
    env = _env_list(spec.get("env"))
    if env is not None:
        container_items.append(("env", env, env.loc))
    extra: list[tuple[str, str, Loc | None]] = []
    profile = spec.get("resourceProfile")
    ploc = loc_of(spec, "resourceProfile")
    if isinstance(profile, str) and profile:
        pname, _, count_s = profile.partition(":")
        count = int(count_s) if count_s.strip().isdigit() else 1
        resource, acc = KUBEAI_PROFILES.get(pname, (None, None))
        if non_gpu is not None:
            resource, acc = non_gpu[0], non_gpu[1]
        if resource is not None:
            limits = _ld(ploc, [(resource, count, ploc)])
            container_items.append(("resources", _ld(ploc, [("limits", limits, ploc)]), ploc))
        if acc is not None:
            extra.append(("kvlint.io/accelerator", acc, ploc))
            extra.append(
                (
                    ACCELERATOR_SOURCE_ANNOTATION,
                    f"KubeAI spec.resourceProfile={profile} (chart profile {pname} -> {acc})",
                    ploc,
                )
            )
        elif non_gpu is not None:
            extra.append(
                (
                    ACCELERATOR_WHY_ANNOTATION,
                    f"KubeAI resource profile {pname} runs vLLM's CPU build on CPU nodes (chart image "
                    f"{non_gpu[2]}); kvlint's memory model is for GPUs",
                    ploc,
                )
            )
        elif resource is not None:
            extra.append(
                (
                    ACCELERATOR_WHY_ANNOTATION,
                    f"KubeAI resource profile {pname} names a GPU that is not in kvlint's catalogue",
                    ploc,
                )
            )
        else:
            extra.append(
                (
                    ACCELERATOR_WHY_ANNOTATION,
                    f"KubeAI resource profile {pname} is not one of the chart's default profiles; its "
                    "nodeSelector lives in the KubeAI install's config",
                    ploc,
                )
            )
    if not image and non_gpu is None:
        extra.append(
            (
                IMAGE_SOURCE_ANNOTATION,
                "the KubeAI installation (its Helm values modelServers.VLLM.images), not this Model",
                engine_loc,
            )
        )
    # vLLMPodForModel always mounts a memory-backed emptyDir "dshm" at /dev/shm.
    shm = _ld(engine_loc, [("name", "dshm", engine_loc), ("mountPath", "/dev/shm", engine_loc)])
    container_items.append(("volumeMounts", _ll(engine_loc, [(shm, engine_loc)]), engine_loc))
    container = _ld(loc_of(spec, "engine") or sloc, container_items)
    empty = _ld(engine_loc, [("medium", "Memory", engine_loc)])
    vol = _ld(engine_loc, [("name", "dshm", engine_loc), ("emptyDir", empty, engine_loc)])
    ps = _ld(
        sloc,
        [
            ("containers", _ll(container.loc, [(container, container.loc)]), container.loc),
            ("volumes", _ll(engine_loc, [(vol, engine_loc)]), engine_loc),
        ],
    )
    replicas = _int(spec.get("replicas"))
    if replicas is None:
        replicas = _int(spec.get("minReplicas"))
    return [_synthetic_workload(doc, ps, "spec", replicas=replicas, extra=extra)]


def _kaito(doc: Document) -> list[Workload]:
    """KAITO ``Workspace`` (``resource``/``inference`` at the top level) or ``InferenceSet``
    (``spec.template.resource``/``.inference``) with an ``inference.preset`` -> the vLLM pod KAITO runs.

    KAITO runs its presets through ``python3 /workspace/vllm/inference_api.py`` in the kaito-base image
    (kaito-project/kaito presets/workspace/inference/vllm/inference_api.py, which parses vLLM's own
    arguments); which hub model a preset name means is fixed inside KAITO's preset registry, not in the
    manifest, so the model is the reference ``kaito-preset:<name>`` that model resolution explains (KV502)
    and that a ``kvlint.io/model`` annotation replaces. Placement: ``resource.instanceType`` (an AKS VM size;
    KAITO provisions nodes of it, which carry ``node.kubernetes.io/instance-type``) becomes that nodeSelector
    with the VM's GPU count as ``nvidia.com/gpu``, and KAITO's own additions to the vLLM command
    (``buildVLLMInferenceCommand``): ``--tensor-parallel-size`` = that GPU count (presets that disable tensor
    parallelism are not known to kvlint) and ``--gpu-memory-utilization`` from the SKU's GPU memory
    (:func:`kaito_gpu_memory_utilization`, :data:`KAITO_AZURE_SKUS`); ``resource.partition`` ``mode: mig`` with ``profile``
    becomes ``nvidia.com/mig-<profile>: 1``; ``mode: accelerator`` with ``count`` becomes
    ``nvidia.com/gpu: count`` (and tensor-parallel-size ``count``) on bring-your-own nodes (GPU unknown, said so).
    """
    data = doc.data
    if doc.kind == "InferenceSet":
        holder = _get(data, "spec", "template")
        path = "spec.template"
    else:
        holder = data
        path = ""
    if not isinstance(holder, dict):
        return []
    inference = holder.get("inference")
    resource = holder.get("resource")
    preset = _get(inference, "preset")
    if not isinstance(preset, dict) or not preset.get("name"):
        return []
    ploc = loc_of(preset, "name")
    pname = str(preset.get("name"))
    extra: list[tuple[str, str, Loc | None]] = []
    pod_items: list[tuple[str, Any, Loc | None]] = []
    res_items: list[tuple[str, Any, Loc | None]] = []
    kaito_args: list[tuple[Any, Loc | None]] = []
    rloc = loc_of(holder, "resource") if isinstance(resource, dict) else None
    if isinstance(resource, dict):
        it_name = resource.get("instanceType")
        part = resource.get("partition")
        if isinstance(it_name, str) and it_name:
            iloc = loc_of(resource, "instanceType")
            pod_items.append(
                ("nodeSelector", _ld(iloc, [("node.kubernetes.io/instance-type", it_name, iloc)]), iloc)
            )
            from kvlint.accelerators import instance_type

            it = instance_type(it_name)
            sku = next((v for k, v in KAITO_AZURE_SKUS.items() if k.lower() == it_name.lower()), None)
            gpus = sku[0] if sku else (it.gpus if it is not None and it.gpus else 1)
            res_items.append(("nvidia.com/gpu", gpus, iloc))
            # KAITO's command: --tensor-parallel-size = the SKU's GPU count, --gpu-memory-utilization from
            # its GPU memory (pkg/model/interface.go buildVLLMInferenceCommand)
            kaito_args.append((f"--tensor-parallel-size={gpus}", iloc))
            if sku:
                util = kaito_gpu_memory_utilization(sku[0], sku[1])
                kaito_args.append((f"--gpu-memory-utilization={util:.2f}", iloc))
        elif isinstance(part, dict):
            mode = str(part.get("mode", ""))
            if mode == "mig" and part.get("profile"):
                res_items.append((f"nvidia.com/mig-{part.get('profile')}", 1, loc_of(part, "profile")))
                extra.append(
                    (
                        ACCELERATOR_WHY_ANNOTATION,
                        f"KAITO resource.partition mode mig runs on existing MIG nodes chosen by "
                        f"resource.labelSelector; profile {part.get('profile')} alone does not name the GPU",
                        loc_of(part, "profile"),
                    )
                )
            else:
                cnt = _int(part.get("count")) or 1
                res_items.append(("nvidia.com/gpu", cnt, loc_of(part, "count") or loc_of(part)))
                kaito_args.append((f"--tensor-parallel-size={cnt}", loc_of(part, "count") or loc_of(part)))
                extra.append(
                    (
                        ACCELERATOR_WHY_ANNOTATION,
                        f"KAITO resource.partition mode {mode or '?'} runs on existing nodes chosen by "
                        "resource.labelSelector, whose GPU the manifest does not name",
                        loc_of(resource, "partition"),
                    )
                )
        else:
            extra.append(
                (
                    ACCELERATOR_WHY_ANNOTATION,
                    "KAITO resource has no instanceType; the nodes are chosen by resource.labelSelector",
                    rloc,
                )
            )
    name_loc = loc_of(_get(data, "metadata"), "name")
    args = _ll(
        ploc,
        [
            (f"--model={KAITO_PRESET_PREFIX}{pname}", ploc),
            (f"--served-model-name={pname}", name_loc or ploc),
            *kaito_args,
        ],
    )
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", doc.name or "kaito", name_loc),
        ("image", _KAITO_IMAGE, ploc),
        (
            "command",
            _ll(ploc, [(w, ploc) for w in ("python3", "-m", "vllm.entrypoints.openai.api_server")]),
            ploc,
        ),
        ("args", args, ploc),
    ]
    if res_items:
        first = res_items[0][2]
        container_items.append(("resources", _ld(first, [("limits", _ld(first, res_items), first)]), first))
    container = _ld(loc_of(inference) or ploc, container_items)
    pod_items.append(("containers", _ll(container.loc, [(container, container.loc)]), container.loc))
    ps = _ld(loc_of(holder) or doc.loc, pod_items)
    # KAITO mounts a memory-backed /dev/shm in every inference pod ("share memory for cross process
    # communication": pkg/workspace/inference/preset_inferences.go GenerateInferencePodSpec, ConfigSHMVolume)
    _add_memory_shm(ps, container)
    cfg_name = inference.get("config") if isinstance(inference, dict) else None
    if isinstance(cfg_name, str) and cfg_name:
        # ... and its inference.config ConfigMap (ConfigCMVolume), passed as --kaito-config-file; KAITO's
        # inference_api.py appends the file's `vllm:` settings after the command line, so they win
        cloc = loc_of(inference, "config")
        vol = _ld(
            cloc,
            [("name", "config-volume", cloc), ("configMap", _ld(cloc, [("name", cfg_name, cloc)]), cloc)],
        )
        mount = _ld(cloc, [("name", "config-volume", cloc), ("mountPath", KAITO_CONFIG_DIR, cloc)])
        ps["volumes"] = _ll(cloc, [*((v, None) for v in ps.get("volumes") or []), (vol, cloc)])
        container["volumeMounts"] = _ll(
            cloc, [*((m, None) for m in container.get("volumeMounts") or []), (mount, cloc)]
        )
        args.append(f"--kaito-config-file={KAITO_CONFIG_DIR}/inference_config.yaml")
        args.locs.append(cloc or ploc or Loc("-"))
    replicas = _int(_get(data, "spec", "replicas")) if doc.kind == "InferenceSet" else None
    return [_synthetic_workload(doc, ps, path or "inference", replicas=replicas, extra=extra)]


def _vllm_runtime(doc: Document) -> list[Workload]:
    """production-stack ``VLLMRuntime`` (production-stack.vllm.ai/v1alpha1) -> the Deployment's pod.

    Source: vllm-project/production-stack operator/internal/controller/vllmruntime_controller.go
    ``deploymentForVLLMRuntime`` (@0f1e82954972d01e57f4c7293bec6c39b517eb79): container ``vllm``, image
    ``deploymentConfig.image.registry + "/" + .name``, command ``/opt/venv/bin/vllm serve``, args
    ``<model.modelURL> --host 0.0.0.0 --port <vllmConfig.port>``, then ``--enable-lora`` (model.enableLoRA),
    ``--enable-chunked-prefill``/``--no-enable-chunked-prefill`` and the prefix-caching pair (always one of
    each), ``--max-model-len`` (model.maxModelLen > 0), ``--dtype``, ``--tensor-parallel-size`` (> 0),
    ``--max-num-seqs``, ``--gpu_memory_utilization`` (string), ``--max_loras``, ``vllmConfig.extraArgs``;
    ``deploymentConfig.resources.gpu`` as requests and limits of ``gpuType`` (default ``nvidia.com/gpu``);
    ``deploymentConfig.nodeSelectorTerms`` as required node affinity. Each generated arg is located at the
    CRD field it comes from.
    """
    spec = _get(doc.data, "spec")
    model = _get(spec, "model")
    vcfg = _get(spec, "vllmConfig")
    dcfg = _get(spec, "deploymentConfig")
    if not isinstance(model, dict) or not model.get("modelURL"):
        return []
    vcfg = vcfg if isinstance(vcfg, dict) else {}
    dcfg = dcfg if isinstance(dcfg, dict) else {}
    args: list[tuple[Any, Loc | None]] = [(str(model["modelURL"]), loc_of(model, "modelURL"))]
    port = vcfg.get("port", 8000)
    args += [("--host", loc_of(model, "modelURL")), ("0.0.0.0", loc_of(model, "modelURL"))]
    args += [("--port", loc_of(vcfg, "port")), (str(port), loc_of(vcfg, "port"))]
    if model.get("enableLoRA") is True:
        args.append(("--enable-lora", loc_of(model, "enableLoRA")))
    if model.get("enableTool") is True:
        args.append(("--enable-auto-tool-choice", loc_of(model, "enableTool")))
    if model.get("toolCallParser"):
        tl = loc_of(model, "toolCallParser")
        args += [("--tool-call-parser", tl), (str(model["toolCallParser"]), tl)]
    for key, flag in (("enableChunkedPrefill", "chunked-prefill"), ("enablePrefixCaching", "prefix-caching")):
        on = vcfg.get(key) is True
        args.append((f"--enable-{flag}" if on else f"--no-enable-{flag}", loc_of(vcfg, key) or loc_of(vcfg)))
    numeric = (
        (model, "maxModelLen", "--max-model-len"),
        (vcfg, "tensorParallelSize", "--tensor-parallel-size"),
        (model, "maxNumSeqs", "--max-num-seqs"),
    )
    if _int(model.get("maxModelLen")):
        ml = loc_of(model, "maxModelLen")
        args += [("--max-model-len", ml), (str(model["maxModelLen"]), ml)]
    if model.get("dtype"):
        dl = loc_of(model, "dtype")
        args += [("--dtype", dl), (str(model["dtype"]), dl)]
    for holder, key, flag in numeric[1:]:
        v = _int(holder.get(key))
        if v and v > 0:
            fl = loc_of(holder, key)
            args += [(flag, fl), (str(v), fl)]
    if vcfg.get("gpuMemoryUtilization") not in (None, ""):
        gl = loc_of(vcfg, "gpuMemoryUtilization")
        args += [("--gpu_memory_utilization", gl), (str(vcfg["gpuMemoryUtilization"]), gl)]
    if _int(vcfg.get("maxLoras")):
        ll = loc_of(vcfg, "maxLoras")
        args += [("--max_loras", ll), (str(vcfg["maxLoras"]), ll)]
    extra_args = vcfg.get("extraArgs")
    if isinstance(extra_args, list):
        args += [(str(a), loc_of(extra_args, i)) for i, a in enumerate(extra_args)]
    img = _get(dcfg, "image")
    iloc = loc_of(img, "name") if isinstance(img, dict) else loc_of(dcfg)
    image = f"{_get(img, 'registry') or ''}/{_get(img, 'name') or ''}" if isinstance(img, dict) else ""
    mloc = loc_of(model, "modelURL")
    container_items: list[tuple[str, Any, Loc | None]] = [
        ("name", "vllm", mloc),
        ("image", image.lstrip("/"), iloc),
        ("command", _ll(mloc, [("/opt/venv/bin/vllm", mloc), ("serve", mloc)]), mloc),
        ("args", _ll(mloc, args), mloc),
    ]
    env = vcfg.get("env")
    if isinstance(env, list):
        container_items.append(("env", env, loc_of(vcfg, "env")))
    res = _get(dcfg, "resources")
    if isinstance(res, dict) and res.get("gpu") not in (None, ""):
        gtype = str(res.get("gpuType") or "nvidia.com/gpu")
        gl = loc_of(res, "gpu")
        gpu = res.get("gpu")
        gval = int(gpu) if isinstance(gpu, str) and gpu.strip().isdigit() else gpu
        container_items.append(
            (
                "resources",
                _ld(
                    gl,
                    [
                        ("limits", _ld(gl, [(gtype, gval, gl)]), gl),
                        ("requests", _ld(gl, [(gtype, gval, gl)]), gl),
                    ],
                ),
                gl,
            )
        )
    container = _ld(mloc, container_items)
    pod_items: list[tuple[str, Any, Loc | None]] = [
        ("containers", _ll(mloc, [(container, mloc)]), mloc),
    ]
    terms = dcfg.get("nodeSelectorTerms")
    if isinstance(terms, list):
        tl = loc_of(dcfg, "nodeSelectorTerms")
        req = _ld(tl, [("nodeSelectorTerms", terms, tl)])
        na = _ld(tl, [("requiredDuringSchedulingIgnoredDuringExecution", req, tl)])
        pod_items.append(("affinity", _ld(tl, [("nodeAffinity", na, tl)]), tl))
    if isinstance(dcfg.get("toleration"), list):
        pod_items.append(("tolerations", dcfg["toleration"], loc_of(dcfg, "toleration")))
    ps = _ld(loc_of(spec) or doc.loc, pod_items)
    why = (
        "VLLMRuntime has no deploymentConfig.nodeSelectorTerms, and deploymentConfig.resources.gpuType names "
        "the device-plugin resource, not the GPU model"
    )
    extra = (
        [] if isinstance(terms, list) else [(ACCELERATOR_WHY_ANNOTATION, why, loc_of(res) or loc_of(dcfg))]
    )
    return [_synthetic_workload(doc, ps, "spec", replicas=_int(dcfg.get("replicas")), extra=extra)]


def _nim_service(doc: Document) -> list[Workload]:
    """NVIDIA NIM operator ``NIMService`` (apps.nvidia.com) -> its pod: one container of
    ``spec.image.repository:tag`` with ``spec.resources``, and the object's ``nodeSelector``,
    ``tolerations`` and ``affinity`` (k8s-nim-operator api/apps/v1alpha1 nimservice_types.go
    ``NIMServiceSpec``). NIM images start their own launcher (not a vLLM command line), so the engine
    settings stay unread; placement works as for any PodSpec."""
    spec = _get(doc.data, "spec")
    img = _get(spec, "image")
    if not isinstance(spec, dict) or not isinstance(img, dict) or not img.get("repository"):
        return []
    rloc = loc_of(img, "repository")
    image = str(img["repository"]) + (f":{img['tag']}" if img.get("tag") else "")
    items: list[tuple[str, Any, Loc | None]] = [("name", "nim", rloc), ("image", image, rloc)]
    if isinstance(spec.get("resources"), dict):
        items.append(("resources", spec["resources"], loc_of(spec, "resources")))
    container = _ld(loc_of(spec, "image") or rloc, items)
    pod_items: list[tuple[str, Any, Loc | None]] = [
        ("containers", _ll(container.loc, [(container, container.loc)]), container.loc)
    ]
    for key in ("nodeSelector", "tolerations", "affinity"):
        if spec.get(key) is not None:
            pod_items.append((key, spec[key], loc_of(spec, key)))
    ps = _ld(loc_of(spec) or doc.loc, pod_items)
    extra: list[tuple[str, str, Loc | None]] = []
    if spec.get("nodeSelector") is None and spec.get("affinity") is None:
        why = "NIMService sets no spec.nodeSelector or spec.affinity naming the GPU"
        extra.append((ACCELERATOR_WHY_ANNOTATION, why, loc_of(spec, "resources") or rloc))
    return [_synthetic_workload(doc, ps, "spec", replicas=_int(spec.get("replicas")), extra=extra)]
