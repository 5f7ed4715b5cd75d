"""Values of the bjw-s ``app-template`` Helm chart (a thin chart over the bjw-s ``common`` library, much used in
Flux GitOps repositories for homelab and small-cluster serving): the pods it renders from ``controllers``, built as
kvlint builds the pods of operator objects, every value located at the values' own lines.

Source: bjw-s-labs/helm-charts, ``charts/library/common`` at commit :data:`LIBRARY_COMMIT`:
``templates/lib/container/_spec.tpl`` (``bjw-s.common.lib.container.spec``: the container's ``image``
``repository:tag``, ``command``, ``args``, ``env``, ``resources``, ``volumeMounts``), the pod options read from
``controllers.<id>.pod`` over ``defaultPodOptions`` (``nodeSelector``, ``affinity``, ``tolerations``,
``runtimeClassName``, ``hostIPC``; ``lib/pod/_getOption.tpl``: the default ``defaultPodOptionsStrategy:
overwrite`` takes the controller's mapping whole, ``merge`` merges it over the default; see :func:`_pod_option`), and ``persistence.<id>`` items (``type`` ``emptyDir`` with ``medium``/``sizeLimit``,
``hostPath``, ``persistentVolumeClaim`` with ``existingClaim``; mounted at every container through
``globalMounts`` or at named controllers/containers through ``advancedMounts``).

A controller's ``defaultContainerOptions`` are applied to each of its containers first
(``lib/container/_valuesToObject.tpl``, see :func:`_with_defaults`).

Only what decides what an engine runs and on what is built; services, routes, probes, security contexts and the
chart's labels are not. Values passed through ``tpl`` by the chart (a ``{{ .Release.Name }}`` in a string) are
kept as written.
"""

from __future__ import annotations

from typing import Any

from kvlint.fastinit import replaced
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.wording import shell_word
from kvlint.workloads.base import MAX_COPIED_VALUES, count_values, ldict, llist, synthetic_workload

__all__ = [
    "LIBRARY_COMMIT",
    "MAX_CONTAINERS",
    "app_template_finding",
    "app_template_workloads",
    "is_app_template_values",
    "resource_name",
]

#: The bjw-s-labs/helm-charts commit whose ``charts/library/common`` templates this module restates.
LIBRARY_COMMIT = "6d80fc5f60a496920a42dee9f47a81aa2690e0cf"
#: The Helm release name the built objects carry (the real one is chosen at install; a GitOps object names it).
RELEASE = "RELEASE"
#: The most containers (over all controllers) read; beyond, no pod is built and the file is reported as not
#: read. [assumed] an app-template release runs a handful of controllers of a few containers each.
MAX_CONTAINERS = 256
#: Controller types the chart renders a pod template for (``controllers.<id>.type``, default ``deployment``).
_TYPES = {
    "deployment": "Deployment",
    "statefulset": "StatefulSet",
    "daemonset": "DaemonSet",
    "job": "Job",
    "cronjob": "CronJob",
}
#: Pod options read from ``controllers.<id>.pod`` over ``defaultPodOptions``.
_POD_OPTIONS = ("nodeSelector", "affinity", "tolerations", "runtimeClassName", "hostIPC", "priorityClassName")


def _key_loc(data: Any, key: str) -> Loc | None:
    """The position of ``key`` itself in the mapping ``data`` (its value's when the key's is unknown)."""
    if isinstance(data, LDict) and key in data.key_locs:
        return data.key_locs[key]
    return loc_of(data, key)


def _false(v: Any) -> bool:
    return v is False or (isinstance(v, str) and v.strip().lower() == "false")


def _controllers(data: Any) -> list[tuple[str, LDict]]:
    """``(identifier, controller)`` of the enabled controllers of app-template values ``data``, in order."""
    ctrls = data.get("controllers") if isinstance(data, dict) else None
    if not isinstance(ctrls, dict):
        return []
    return [(str(k), c) for k, c in ctrls.items() if isinstance(c, LDict) and not _false(c.get("enabled"))]


def _containers(ctrl: dict[str, Any]) -> list[tuple[str, LDict]]:
    cs = ctrl.get("containers")
    if not isinstance(cs, dict):
        return []
    return [(str(k), c) for k, c in cs.items() if isinstance(c, LDict) and not _false(c.get("enabled"))]


def _image(c: dict[str, Any]) -> str:
    """``repository:tag`` (``@digest`` when set), as ``bjw-s.common.lib.container.field.image`` writes it."""
    img = c.get("image")
    if not isinstance(img, dict):
        return ""
    repo = img.get("repository")
    if not isinstance(repo, str):
        return ""
    tag = img.get("tag")
    out = repo if tag in (None, "") or isinstance(tag, (dict, list)) else f"{repo}:{tag}"
    digest = img.get("digest")
    if isinstance(digest, str) and digest:
        out += f"@{digest}"
    return out


def is_app_template_values(data: Any) -> bool:
    """app-template values that run a serving engine: a ``controllers`` mapping with a controller whose
    ``containers`` mapping holds a container with an ``image.repository`` that names vLLM, TGI or SGLang
    (:func:`kvlint.engines.images.image_mentions_engine`). Values of other apps (a media server, a database) are
    not read."""
    from kvlint.engines.images import image_mentions_engine

    ctrls = data.get("controllers") if isinstance(data, dict) else None
    if not isinstance(ctrls, dict):
        return False
    seen = 0
    for ctrl in ctrls.values():
        cs = ctrl.get("containers") if isinstance(ctrl, dict) else None
        if not isinstance(cs, dict):
            continue
        for c in cs.values():
            seen += 1
            if seen > MAX_CONTAINERS:  # bounded: the rest are not looked at
                return False
            if not isinstance(c, dict):
                continue
            dflt = ctrl.get("defaultContainerOptions")
            if image_mentions_engine(_image(c)) or (
                isinstance(dflt, dict)
                and image_mentions_engine(_image(dflt))  # the containers' default image
            ):
                return True
    return False


def _with_defaults(ctrl: dict[str, Any], c: LDict) -> LDict:
    """Container ``c`` of controller ``ctrl`` with the controller's ``defaultContainerOptions``, as
    ``bjw-s.common.lib.container.valuesToObject`` applies them: under ``defaultContainerOptionsStrategy:
    overwrite`` (the default) each default key the container leaves empty (unset, ``""``, ``[]``, ``{}``) takes
    the default's value whole; under ``merge`` the container is merged deeply over the defaults; under any other
    strategy the defaults are not applied. Each value keeps its own position."""
    dflt = ctrl.get("defaultContainerOptions")
    if not isinstance(dflt, dict) or not dflt:
        return c
    strategy = ctrl.get("defaultContainerOptionsStrategy", "overwrite")
    if strategy == "merge":
        out = _merged(c, dflt)
        return out if isinstance(out, LDict) else c
    if strategy != "overwrite":
        return c
    items = [(k, v, loc_of(c, k)) for k, v in c.items()]
    for k, v in dflt.items():
        if not isinstance(c.get(k), bool) and _empty(c.get(k)):
            items = [it for it in items if it[0] != k] + [(k, v, loc_of(dflt, k))]
    return ldict(c.loc, items)


def _unbuilt(data: Any) -> tuple[str, Loc | None] | None:
    """Why no pod is built from the values (too many containers, or too much shared to copy into each), else
    None."""
    ctrls = _controllers(data)
    total = sum(len(_containers(c)) for _, c in ctrls[: MAX_CONTAINERS + 1])
    if len(ctrls) > MAX_CONTAINERS or total > MAX_CONTAINERS:
        return (
            f"controllers hold more than the {MAX_CONTAINERS} containers kvlint builds pods for",
            _key_loc(data, "controllers"),
        )
    shared = count_values([data.get("defaultPodOptions"), data.get("persistence")], MAX_COPIED_VALUES)
    copied = (
        0  # a controller's defaultContainerOptions are copied into each of its containers (all controllers)
    )
    for _, ctrl in ctrls:
        n = len(_containers(ctrl))
        if n and ctrl.get("defaultContainerOptions") is not None:
            copied += n * count_values(ctrl["defaultContainerOptions"], MAX_COPIED_VALUES - copied)
        if copied > MAX_COPIED_VALUES:
            return (
                "the containers would copy their controllers' defaultContainerOptions, more than the "
                f"{MAX_COPIED_VALUES:,} values kvlint copies",
                _key_loc(data, "controllers"),
            )
    if max(total, 1) * shared > MAX_COPIED_VALUES:  # persistence is walked for every container
        return (
            f"{total} containers would each copy the shared defaultPodOptions and persistence "
            f"({shared:,} values), more than the {MAX_COPIED_VALUES:,} values kvlint copies",
            _key_loc(data, "controllers"),
        )
    return None


def _words(v: Any, at: Loc | None) -> LList | None:
    """``command``/``args`` as the chart writes them: a list as is, a string as a list of one."""
    if isinstance(v, LList):
        return llist(
            v.loc or at,
            [(str(x) if not isinstance(x, (dict, list)) else x, v.locs[i]) for i, x in enumerate(v)],
        )
    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
        return llist(at, [(str(v), at)])
    return None


def _env(v: Any, at: Loc | None) -> LList | None:
    """``env`` as a container list: a list as written; a mapping ``NAME: value`` (a scalar, or a mapping with
    ``value`` or ``valueFrom``, or the ``valueFrom`` keys themselves) as ``{name, value}``/``{name, valueFrom}``
    items in the mapping's order."""
    if isinstance(v, LList):
        return v
    if not isinstance(v, dict):
        return None
    items: list[tuple[Any, Loc | None]] = []
    for k, val in v.items():
        eloc = loc_of(v, k) or at
        if isinstance(val, dict):
            if "value" in val:
                item = ldict(
                    eloc, [("name", str(k), eloc), ("value", _scalar(val["value"]), loc_of(val, "value"))]
                )
            else:
                src = val.get("valueFrom", val)
                item = ldict(eloc, [("name", str(k), eloc), ("valueFrom", src, eloc)])
        else:
            item = ldict(eloc, [("name", str(k), eloc), ("value", _scalar(val), eloc)])
        items.append((item, eloc))
    return llist(loc_of(v) or at, items)


def _scalar(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def _mounts_and_volumes(
    data: Any, ctrl_id: str, cont_id: str
) -> tuple[list[tuple[Any, Loc | None]], list[tuple[str, LDict, Loc | None]]]:
    """The volume mounts of container ``cont_id`` of controller ``ctrl_id`` and the volumes they need, from
    ``persistence`` (enabled items; ``globalMounts`` for every container, ``advancedMounts.<ctrl>.<cont>``).

    As ``bjw-s.common.lib.container.field.volumeMounts`` writes them: an item with neither a non-empty
    ``globalMounts`` nor a non-empty ``advancedMounts`` is mounted once in every container at its default path;
    the default path is ``/<identifier>``, or the ``hostPath`` itself for a ``type: hostPath`` item; a mount
    without a (non-empty) ``path`` takes the path of the mount before it in the item's list, else the default."""
    pers = data.get("persistence") if isinstance(data, dict) else None
    if not isinstance(pers, dict):
        return [], []
    mounts: list[tuple[Any, Loc | None]] = []
    vols: list[tuple[str, LDict, Loc | None]] = []
    for name, p in pers.items():
        if not isinstance(p, LDict) or _false(p.get("enabled")):
            continue
        at = loc_of(pers, name)
        default: Any = f"/{name}"
        default_loc = at
        if p.get("type", "persistentVolumeClaim") == "hostPath":
            default, default_loc = p.get("hostPath"), loc_of(p, "hostPath") or at
        paths: list[tuple[Any, Loc | None]] = []
        g = p.get("globalMounts")
        adv = p.get("advancedMounts")
        if isinstance(g, list):
            paths += [(m, loc_of(g, i)) for i, m in enumerate(g) if isinstance(m, dict)]
        if isinstance(adv, dict):
            per = adv.get(ctrl_id)
            lst = per.get(cont_id) if isinstance(per, dict) else None
            if isinstance(lst, list):
                paths += [(m, loc_of(lst, i)) for i, m in enumerate(lst) if isinstance(m, dict)]
        if not g and not adv:  # neither set (or both empty): mounted at the default path in every container
            paths = [({}, at)]
        if not paths:
            continue
        path, path_loc = default, default_loc
        for m, mloc in paths:
            if m.get("path") not in (None, ""):  # the chart's `with .path`: the last path set carries on
                path, path_loc = m["path"], loc_of(m, "path") or mloc
            mounts.append(
                (
                    ldict(mloc, [("name", str(name), mloc), ("mountPath", _scalar(path), path_loc or mloc)]),
                    mloc,
                )
            )
        vols.append((str(name), p, at))
    return mounts, vols


def _volume(name: str, p: LDict, at: Loc | None) -> LDict:
    """The pod volume of a ``persistence`` item, as ``lib/pod/fields/_volumes.tpl`` writes it for each ``type``:
    ``persistentVolumeClaim`` (the default), ``emptyDir``, ``hostPath``, ``nfs``, ``configMap``/``secret`` (by
    ``name``, else the chart's object ``identifier``), ``custom`` (its ``volumeSpec``, named)."""
    kind = p.get("type", "persistentVolumeClaim")
    if kind == "emptyDir":
        ed: list[tuple[str, Any, Loc | None]] = []
        for key in ("medium", "sizeLimit"):
            if p.get(key) not in (None, ""):
                ed.append((key, p[key], loc_of(p, key)))
        return ldict(at, [("name", name, at), ("emptyDir", ldict(loc_of(p, "type") or at, ed), at)])
    if kind == "hostPath":
        hp = ldict(at, [("path", _scalar(p.get("hostPath")), loc_of(p, "hostPath") or at)])
        return ldict(at, [("name", name, at), ("hostPath", hp, at)])
    claim = p.get("existingClaim") or f"{RELEASE}-{name}"
    pvc = ldict(at, [("claimName", _scalar(claim), loc_of(p, "existingClaim") or at)])
    if kind in ("persistentVolumeClaim", None):
        return ldict(at, [("name", name, at), ("persistentVolumeClaim", pvc, at)])
    if kind == "custom" and isinstance(p.get("volumeSpec"), dict):  # the volumeSpec as written, named
        spec = p["volumeSpec"]
        items = [(str(k), v, loc_of(spec, k)) for k, v in spec.items() if k != "name"]
        return ldict(loc_of(p, "volumeSpec") or at, [("name", name, at), *items])
    if kind == "nfs":
        nfs = ldict(at, [(k, p.get(k), loc_of(p, k) or at) for k in ("server", "path")])
        return ldict(at, [("name", name, at), ("nfs", nfs, at)])
    if kind in ("configMap", "secret"):  # named by `name`, else by the chart's object `identifier`
        key = "name" if kind == "configMap" else "secretName"
        ref = p.get("name") or p.get("identifier") or ""
        obj = ldict(at, [(key, _scalar(ref), loc_of(p, "name") or loc_of(p, "identifier") or at)])
        return ldict(at, [("name", name, at), (kind, obj, at)])
    return ldict(at, [("name", name, at), (str(kind), LDict(loc=at), at)])


def _empty(v: Any) -> bool:
    """Go template ``empty`` for a non-boolean value: nil, ``""``, 0, an empty list or mapping."""
    return v is None or (not isinstance(v, bool) and not v)


def _merged(over: Any, under: Any) -> Any:
    """Sprig ``merge over under``: ``over`` with the keys it lacks taken from ``under``, mappings merged deeply
    (``over`` wins, lists are not merged); each value keeps its own position."""
    if not (isinstance(over, dict) and isinstance(under, dict)):
        return over
    items: list[tuple[str, Any, Loc | None]] = []
    for k, v in over.items():
        items.append((k, _merged(v, under.get(k)), loc_of(over, k)))
    for k, v in under.items():
        if k not in over:
            items.append((k, v, loc_of(under, k)))
    return ldict(loc_of(over), items)


def _pod_option(data: Any, ctrl: dict[str, Any], key: str) -> tuple[Any, Loc | None]:
    """Pod option ``key`` as ``bjw-s.common.lib.pod.getOption`` chooses it: ``defaultPodOptions.<key>`` when it
    is a boolean or not empty; then ``controllers.<id>.pod.<key>`` when it is a boolean, or a mapping (taken
    whole under ``defaultPodOptionsStrategy: overwrite``, the default; merged over the default under
    ``merge``; the default kept under any other strategy), or another non-empty value: an empty list
    (``tolerations: []``) keeps the default, an empty mapping (``nodeSelector: {}``) clears it under
    ``overwrite``. (None, None) when the option comes out empty."""
    strategy = data.get("defaultPodOptionsStrategy", "overwrite") if isinstance(data, dict) else "overwrite"
    value: Any = None
    vloc: Loc | None = None
    dflt = data.get("defaultPodOptions") if isinstance(data, dict) else None
    if isinstance(dflt, dict) and key in dflt and (isinstance(dflt[key], bool) or not _empty(dflt[key])):
        value, vloc = dflt[key], loc_of(dflt, key)
    pod = ctrl.get("pod")
    mine = pod.get(key) if isinstance(pod, dict) else None
    if isinstance(mine, bool):
        value, vloc = mine, loc_of(pod, key)
    elif isinstance(mine, dict):  # a mapping, even an empty one, under the strategy
        if strategy == "merge":
            value, vloc = _merged(mine, value), loc_of(pod, key)
        elif strategy == "overwrite":
            value, vloc = mine, loc_of(pod, key)
    elif not _empty(mine):
        value, vloc = mine, loc_of(pod, key)
    if not isinstance(value, bool) and _empty(value):
        return None, None
    return value, vloc


def _text_value(v: Any) -> str:
    return v if isinstance(v, str) else ""


def resource_name(data: Any, release: str, ctrl_id: str, ctrl: dict[str, Any], count: int) -> str:
    """The name the chart gives controller ``ctrl_id``'s object in release ``release`` (``count`` enabled
    controllers), as bjw-s common ``lib/chart/_names.tpl`` (``fullname``) and
    ``lib/common/_determineResourceNameFromValues.tpl`` write it, with app-template's ``templates/common.yaml``
    setting ``global.nameOverride`` to the release name when unset: the fullname is ``global.fullnameOverride``
    or ``fullnameOverride``, else the release name when it contains the chart name (``global.nameOverride``),
    else ``<release>-<name>`` (63 characters at most, no trailing ``-``); ``forceRename`` replaces it; a
    ``prefix`` is put before it (unless equal), ``-<ctrl_id>`` after it when there are several controllers or
    ``global.alwaysAppendIdentifierToResourceName`` (unless it already ends so or is the identifier), then a
    ``suffix``; lower-cased. Values passed through ``tpl`` are taken as written. The placeholder release
    :data:`RELEASE` is kept upper-case."""
    g = data.get("global") if isinstance(data, dict) else None
    g = g if isinstance(g, dict) else {}
    name = _text_value(g.get("nameOverride")) or release
    full = _text_value(g.get("fullnameOverride")) or _text_value(data.get("fullnameOverride"))
    if not full:
        full = release if name in release else f"{release}-{name}"
    out = full[:63].rstrip("-") if len(full) > 63 else full
    if _text_value(ctrl.get("forceRename")):
        out = ctrl["forceRename"]
    else:
        prefix = _text_value(ctrl.get("prefix"))
        if prefix and prefix != out:
            out = f"{prefix}-{out}"
        if (count > 1 or g.get("alwaysAppendIdentifierToResourceName") is True) and not (
            out.endswith(f"-{ctrl_id}") or out == ctrl_id
        ):
            out = f"{out}-{ctrl_id}"
        suffix = _text_value(ctrl.get("suffix"))
        if suffix and not out.endswith(f"-{suffix}"):
            out = f"{out}-{suffix}"
    if release == RELEASE:
        return out.replace(RELEASE, "\0").lower().replace("\0", RELEASE)
    return out.lower()


def _image_refused(c: dict[str, Any], ctrl_id: str, cont_id: str, at: Loc | None) -> Finding | None:
    """KV002 when the chart refuses to render container ``cont_id``: ``bjw-s.common.lib.container.validate``
    fails when ``image`` is not a mapping or its ``repository`` or ``tag`` is empty ("No image tag specified for
    container"), so ``helm template``/``install`` stops; None when both are set."""
    img = c.get("image")
    missing = (
        "image"
        if not isinstance(img, dict)
        else next((k for k in ("repository", "tag") if img.get(k) is None or img.get(k) == ""), None)
    )
    if missing is None:
        return None
    what, says = (
        ("an image mapping", "Image required to be a dictionary with repository and tag fields")
        if missing == "image"
        else (f"image.{missing}", f"No image {missing} specified for container")
    )
    return Finding(
        "KV002",
        f"controllers.{ctrl_id}.containers.{cont_id} has no {what}: the bjw-s common library refuses to render "
        f"it (container validation: '{says}'), so helm stops before any pod is created",
        at,
        fix=f"set controllers.{ctrl_id}.containers.{cont_id}.image.repository and .tag (e.g. vllm/vllm-openai and "
        "the release you run)",
        severity="warning",
    )


def _workload(doc: Document, data: Any, ctrl_id: str, ctrl: LDict, count: int, release: str) -> Workload:
    at = loc_of(data.get("controllers"), ctrl_id) or doc.loc
    containers: list[tuple[Any, Loc | None]] = []
    findings: list[Finding] = []
    volumes: dict[str, tuple[LDict, Loc | None]] = {}
    for cont_id, c0 in _containers(ctrl):
        c = _with_defaults(ctrl, c0)
        cat = loc_of(ctrl.get("containers"), cont_id) or at
        items: list[tuple[str, Any, Loc | None]] = [("name", cont_id, cat)]
        items.append(("image", _image(c), loc_of(c, "image") or cat))
        refused = _image_refused(c, ctrl_id, cont_id, loc_of(c, "image") or cat)
        if refused is not None:
            findings.append(refused)
        for key in ("command", "args"):
            words = _words(c.get(key), loc_of(c, key))
            if words is not None:
                items.append((key, words, loc_of(c, key)))
        env = _env(c.get("env"), loc_of(c, "env"))
        if env is not None:
            items.append(("env", env, loc_of(c, "env")))
        for key in ("envFrom", "resources", "workingDir"):
            if c.get(key) is not None:
                items.append((key, c[key], loc_of(c, key)))
        mounts, vols = _mounts_and_volumes(data, ctrl_id, cont_id)
        if mounts:
            items.append(("volumeMounts", llist(cat, mounts), cat))
        for name, p, vat in vols:
            volumes.setdefault(name, (p, vat))
        containers.append((ldict(cat, items), cat))
    pod: list[tuple[str, Any, Loc | None]] = [
        ("containers", llist(loc_of(ctrl, "containers") or at, containers), at)
    ]
    for key in _POD_OPTIONS:
        v, vloc = _pod_option(data, ctrl, key)
        if v is not None:
            pod.append((key, v, vloc))
    if volumes:
        pod.append(("volumes", llist(at, [(_volume(n, p, vat), vat) for n, (p, vat) in volumes.items()]), at))
    ps = ldict(at, pod)
    kind = _TYPES.get(str(ctrl.get("type", "deployment")).lower(), "Deployment")
    replicas = ctrl.get("replicas", 1)
    w = synthetic_workload(
        doc,
        ps,
        f"controllers.{ctrl_id}",
        replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
    )
    return replaced(
        w,
        kind=kind,
        name=resource_name(data, release, ctrl_id, ctrl, count),
        findings=(*w.findings, *findings),
    )


def app_template_workloads(doc: Document, release: str = RELEASE) -> list[Workload]:
    """The pods the bjw-s app-template chart renders from the values ``doc``: one workload per enabled
    ``controllers.<id>`` (kind from ``type``, default Deployment; named ``RELEASE`` when it is the only
    controller, else ``RELEASE-<id>``, as :func:`resource_name` gives it for ``release``; ``replicas``, default 1), its enabled containers with ``image``
    ``repository:tag[@digest]``, ``command``/``args`` (a string is a list of one), ``env`` (list or mapping),
    ``envFrom``, ``resources`` and the ``persistence`` mounts (see :func:`_mounts_and_volumes`), the pod options
    of ``controllers.<id>.pod`` over ``defaultPodOptions``. Empty when the values run no serving engine or
    exceed :data:`MAX_CONTAINERS` / :data:`kvlint.workloads.base.MAX_COPIED_VALUES` (then
    :func:`app_template_finding` says why). The first workload carries a KV504 note (built from Helm values)."""
    data = doc.data
    if not is_app_template_values(data) or _unbuilt(data) is not None:
        return []
    ctrls = _controllers(data)
    out = [_workload(doc, data, cid, c, len(ctrls), release) for cid, c in ctrls if _containers(c)]
    if not out:
        return []
    n = len(out)
    note = Finding(
        "KV504",
        f"built from Helm values: kvlint linted the {n} pod template{'s' if n != 1 else ''} that the bjw-s "
        f"app-template chart renders from these controllers, restating the bjw-s common library's templates "
        f"(bjw-s-labs/helm-charts commit {LIBRARY_COMMIT[:12]}); another chart version may render "
        f"{'it' if n == 1 else 'them'} differently",
        _key_loc(data, "controllers") or doc.loc,
        fix="for certainty, lint what the chart renders: helm template RELEASE "
        f"oci://ghcr.io/bjw-s-labs/helm/app-template --version VERSION -f {shell_word(doc.path)} | kvlint check -",
        severity="info",
        mark=Mark.BUILT_FROM_VALUES,
    )
    out[0] = replaced(out[0], findings=(note, *out[0].findings))
    return out


def app_template_finding(doc: Document) -> Finding | None:
    """KV002 when kvlint builds no pod from app-template values that run an engine (why, at ``controllers``);
    None when it builds them (the first workload carries the KV504 note)."""
    data = doc.data
    if not is_app_template_values(data):
        return None
    why = _unbuilt(data)
    if why is None:
        return None
    return Finding(
        "KV002",
        f"this is a Helm values file for the bjw-s app-template chart, and kvlint builds no pod from it: {why[0]}",
        why[1] or doc.loc,
        fix="helm template RELEASE oci://ghcr.io/bjw-s-labs/helm/app-template -f "
        f"{shell_word(doc.path)} | kvlint check -",
        mark=Mark.HELM_VALUES,
    )
