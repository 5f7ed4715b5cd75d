"""ConfigMaps among the inputs, and files a container mounts from them (``--config`` files, KAITO's
inference config).
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from kvlint.source import LDict, Loc, loc_of
from kvlint.types import Document
from kvlint.workloads.base import get_in


class UnreadData(LDict):
    """The place of a ConfigMap among the inputs whose ``data`` the API server refuses (a string, a list: the
    field is ``map[string]string``): empty, so it provides no value, and ``why`` says what is wrong in words;
    ``loc`` is where ``data`` is written (:func:`configmap_problem` tells the user)."""

    __slots__ = ("why",)

    def __init__(self, why: str, loc: Loc | None) -> None:
        super().__init__(loc=loc)
        self.why = why


#: What :func:`configmap_problem` says of a ConfigMap whose document failed to parse (its file and line follow),
#: and what to do about it.
UNPARSED = "is in a file kvlint could not parse"
UNPARSED_FIX = (
    "fix the YAML error kvlint reports (KV001) in the ConfigMap's file: kubectl cannot apply it either, so the "
    "pod has no such ConfigMap"
)


#: A ConfigMap document of a name: ``(namespace, file, data, unit)``, ``unit`` the set of documents deployed together
#: it belongs to: the chart or kustomization directory whose render it is (:attr:`kvlint.types.Document.render`),
#: else its file.
Site = tuple[str | None, str, LDict, str]
#: :meth:`ConfigMaps.index`: the sites of a name by unit, under each directory prefix, and in each directory.
_Index = tuple[dict[str, list[Site]], dict[tuple[str, ...], list[Site]], dict[tuple[str, ...], list[Site]]]


class ConfigMaps(dict):  # type: ignore[type-arg]
    """The ConfigMaps of a run, ``(namespace, name) -> data`` as :func:`configmaps` describes (a later one of a
    key replacing an earlier one), and ``sites``: for each name, every ConfigMap document of that name as
    ``(namespace, file, data, unit)`` (:data:`Site`) in input order, so that a workload can be read against the one beside it
    (:func:`scoped`) when several files of a directory run define one name."""

    __slots__ = ("sites", "_clash", "_index")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.sites: dict[str, list[Site]] = {}
        self._clash: frozenset[str] | None = None
        # (name, the workload's namespace) -> (unit -> its sites, directory prefix -> the sites below it,
        # directory -> the sites in it)
        self._index: dict[tuple[str, str | None], _Index]
        self._index = {}

    def add_site(
        self, namespace: str | None, name: str, path: str, data: LDict, render: str | None = None
    ) -> None:
        """Record the ConfigMap ``name`` of ``namespace`` written in the file ``path`` with ``data``; ``render``:
        the chart or kustomization directory whose render it is (:attr:`kvlint.types.Document.render`), None
        for a file read as it is."""
        self.sites.setdefault(name, []).append((namespace, path, data, render or path))
        self._clash = None
        self._index.clear()

    def absorb(self, other: Mapping[tuple[str | None, str], LDict]) -> None:
        """``other``'s ConfigMaps added as a later file's (``dict.update``, and its sites appended): the
        streaming run's context pass gathers a run's ConfigMaps file by file."""
        self.update(other)
        for name, more in getattr(other, "sites", {}).items():
            for namespace, path, data, unit in more:
                self.add_site(namespace, name, path, data, unit)

    def clashing(self) -> frozenset[str]:
        """The names defined in more than one unit (file, or render of a chart or kustomization) with different
        ``data`` (computed once, again after a site is added)."""
        if self._clash is None:
            names = set()
            for name, sites in self.sites.items():
                if len({u for *_f, u in sites}) > 1 and any(s[2] != sites[0][2] for s in sites):
                    names.add(name)
            self._clash = frozenset(names)
        return self._clash

    def index(self, name: str, namespace: str | None) -> _Index:
        """The sites of ``name`` a workload of ``namespace`` may read (their namespace unset or the same; all of
        them when none is, or the workload's is unset), by unit (:data:`Site`), under each directory prefix (every
        ancestor of a site's directory, as a tuple of components, lists it) and in each directory, built once per name and
        namespace: a workload's nearest sites are found in as many steps as its own directory has components,
        not by comparing it with every site (1,500 files each defining one name, each read by a workload of
        its own: 2.25 million comparisons)."""
        key = (name, namespace)
        hit = self._index.get(key)
        if hit is None:
            sites = self.sites.get(name, [])
            allowed = [s for s in sites if s[0] is None or namespace is None or s[0] == namespace] or sites
            by_file: dict[str, list[Site]] = {}
            under: dict[tuple[str, ...], list[Site]] = {}
            at_dir: dict[tuple[str, ...], list[Site]] = {}
            for site in allowed:
                by_file.setdefault(site[3], []).append(site)
                parts = tuple(posixpath.dirname(site[1]).split("/"))
                at_dir.setdefault(parts, []).append(site)
                for depth in range(len(parts) + 1):
                    under.setdefault(parts[:depth], []).append(site)
            hit = self._index[key] = (by_file, under, at_dir)
        return hit


class Scoped(dict):  # type: ignore[type-arg]
    """The ConfigMaps one workload is read against (:func:`scoped`): its own entries (the ConfigMap of a name
    several files define that the workload is deployed with, or an :class:`UnreadData` saying why none is, and
    the ConfigMaps a chart renders beside a workload built from its values) over those of ``base``, whose
    entries of the names in ``hidden`` it does not see. Looked up by :func:`_find_cm`, never copied."""

    __slots__ = ("base", "hidden")

    def __init__(self, base: Mapping[tuple[str | None, str], LDict], hidden: frozenset[str]) -> None:
        super().__init__()
        self.base = base
        self.hidden = hidden

    def __bool__(self) -> bool:
        return bool(len(self) or self.base)


def with_configmaps(
    cms: dict[tuple[str | None, str], LDict], more: Mapping[tuple[str | None, str], LDict]
) -> dict[tuple[str | None, str], LDict]:
    """``cms`` with ``more`` over it (a later ConfigMap of a key replacing an earlier one): a :class:`Scoped`
    view when ``cms`` is one or a :class:`ConfigMaps` (its sites kept for :func:`scoped`), else a merged copy."""
    if not more:
        return cms
    if isinstance(cms, Scoped):
        out = Scoped(cms.base, cms.hidden)
        out.update(cms)
    elif isinstance(cms, ConfigMaps):
        out = Scoped(cms, frozenset())
    else:
        return {**cms, **more}
    out.update(more)
    return out


def configmaps(docs: Sequence[Document], unparsed: Sequence[tuple[str | None, str, Loc]] = ()) -> ConfigMaps:
    """ConfigMap ``data`` of every ConfigMap document, keyed by ``(namespace, name)``.

    ``namespace`` is None when the manifest does not set one. ConfigMaps without a name or without ``data``
    are left out; one whose ``data`` is not a mapping is kept as an empty :class:`UnreadData` saying so (it
    provides nothing, but a container referring to it is told what is wrong with it, not that it is missing),
    unless a readable one has the same key. A later ConfigMap with the same key replaces an earlier one (as
    ``kubectl apply`` of the files in order would; the API server refuses an unreadable one, which replaces
    nothing).

    ``unparsed``: the ConfigMaps of documents that failed to parse (:attr:`kvlint.types.LoadResult.
    unparsed_configmaps`), kept as :class:`UnreadData` saying so and where (:data:`UNPARSED`) unless a
    readable or unreadable one among ``docs`` has the same key.

    Returns a :class:`ConfigMaps`, which also records the file of each readable ConfigMap (for
    :func:`scoped`).
    """
    out = ConfigMaps()
    for doc in docs:
        if doc.kind != "ConfigMap":
            continue
        data = doc.data.get("data")
        name = doc.name
        if not name or data is None:
            continue
        if not isinstance(data, dict):
            if (doc.namespace, name) not in out or isinstance(out[(doc.namespace, name)], UnreadData):
                shape = "a list" if isinstance(data, list) else f"a {_scalar_word(data)}"
                out[(doc.namespace, name)] = UnreadData(
                    f"has data that is {shape}, not a mapping of keys to strings (the API server refuses it)",
                    loc_of(doc.data, "data") or doc.loc,
                )
            continue
        if not isinstance(data, LDict):
            data = LDict(data, loc=doc.loc)
        out[(doc.namespace, name)] = data
        out.add_site(doc.namespace, name, doc.path, data, doc.render)
    add_unparsed(out, unparsed)
    return out


#: What :func:`scoped` says of a ConfigMap that several files equally near the workload define differently (the
#: files follow), and what to do about it.
AMBIGUOUS = "is defined differently in"
AMBIGUOUS_FIX = (
    "lint the workload with the ConfigMap it is deployed with (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml), or "
    "give the ConfigMaps of different applications different names"
)

#: What :func:`configmap_problem` says of a ConfigMap among the inputs in another namespace than the pod's (the
#: namespace follows), and what to do about it.
OTHER_NAMESPACE = "is in namespace"
OTHER_NAMESPACE_FIX = (
    "put the ConfigMap in the pod's namespace (its metadata.namespace), or the workload in the ConfigMap's; or "
    "pass the pod's namespace's own ConfigMap with the workload (kvlint check DEPLOYMENT.yaml CONFIGMAP.yaml)"
)

#: Files of a name's ConfigMaps listed when kvlint cannot tell which one a workload reads. [assumed] enough to
#: find them; the count says how many there are.
_SITES_SHOWN = 4


def scoped(
    cms: dict[tuple[str | None, str], LDict],
    path: str,
    namespace: str | None,
    pod_spec: Any,
    render: str | None = None,
) -> dict[tuple[str | None, str], LDict]:
    """The ConfigMaps a workload written in the file ``path`` (its ``namespace``, its PodSpec ``pod_spec``; the
    chart or kustomization directory whose render it is, ``render``, :attr:`kvlint.types.Document.render`) is
    read against: ``cms`` itself, except for a name the pod refers to (a ``configMap`` volume or projected
    source, an ``envFrom`` ``configMapRef``, an ``env`` ``configMapKeyRef``, of any container or init
    container) that several files define with different ``data`` (:meth:`ConfigMaps.clashing`). Of those, the
    one the workload can be deployed with is the nearest: one of the workload's own render (what ``helm
    template`` or ``kustomize build`` prints is applied together; the overlays of one base render ConfigMaps
    that all map back to the base's file), else of its own file when it is not rendered, else those of its own
    directory, else of the nearest directory enclosing it (a repository's shared ConfigMap, which applying any
    directory above the workload's applies with it, rather than a sibling application's), else those of the
    files whose directory shares the most of the workload's (a chart's templates, a kustomization's
    resources, an application's directory), among those whose namespace the workload's allows (either unset,
    or both the same; all of them when none does). When the nearest are in more than one file and differ, no
    ConfigMap of that name is read: an :class:`UnreadData` stands for it, saying which files define it, so
    the workload is not read against another application's ConfigMap that a directory run happens to hold
    (``kubectl apply -f DIR`` of such files would keep the last of them only). Returns ``cms`` itself, or a
    :class:`Scoped` view over it holding the chosen ones (no copy of ``cms``). ``cms`` without
    :attr:`ConfigMaps.sites` (a hand-made mapping) is returned as it is. Never raises."""
    if not isinstance(cms, ConfigMaps) or not cms.sites:
        return cms
    clash = cms.clashing()
    names = sorted(_referenced(pod_spec) & clash) if clash else []
    if not names:
        return cms
    out = Scoped(cms, frozenset(names))
    for name in names:
        chosen = _nearest(cms, name, path, namespace, render or path)
        if isinstance(chosen, str):
            out[(namespace, name)] = UnreadData(chosen, None)
        else:
            for ns, _p, data, _u in chosen:
                out[(ns, name)] = data
    return out


def _nearest(cms: ConfigMaps, name: str, path: str, namespace: str | None, unit: str) -> list[Site] | str:
    """The ConfigMaps ``name`` a workload of the file ``path``, ``namespace`` and ``unit`` (:data:`Site`) is read
    against (see :func:`scoped`), or why there is none to read (a phrase following ``ConfigMap NAME``)."""
    by_unit, under, at_dir = cms.index(name, namespace)
    near = by_unit.get(unit)
    parts = tuple(posixpath.dirname(path).split("/"))
    # the workload's own directory, else the nearest directory enclosing it (a repository's shared ConfigMap,
    # which applying any directory above the workload's applies with it) ...
    for depth in range(len(parts), -1, -1):
        if near:
            break
        near = at_dir.get(parts[:depth])
    # ... else the sites that share the most of the workload's directory (another application's, beside it)
    for depth in range(len(parts), -1, -1):
        if near:
            break
        near = under.get(parts[:depth])
    if not near:
        return []
    files = list(dict.fromkeys(u for *_f, u in near))
    if len(files) == 1 or all(s[2] == near[0][2] for s in near):
        return near
    shown = [_where_file(d.loc, p, u) for _n, p, d, u in near[:_SITES_SHOWN]]
    more = f" and {len(near) - _SITES_SHOWN} more" if len(near) > _SITES_SHOWN else ""
    return (
        f"{AMBIGUOUS} {len(files)} files among the inputs ({', '.join(shown)}{more}), none of "
        "them this workload's own file nor nearer to it than the others, so kvlint cannot tell which one the "
        "workload is deployed with (applied together, the last one would replace the others)"
    )


def _where_file(loc: Loc | None, path: str, unit: str) -> str:
    where = f"{loc.file}:{loc.line}" if loc is not None else path
    return where if unit == path else f"{where} as {unit} renders it"


def _referenced(pod_spec: Any) -> set[str]:
    """The names of the ConfigMaps ``pod_spec`` refers to: its ``configMap`` volumes and projected sources,
    each container's and init container's ``envFrom`` ``configMapRef`` and ``env`` ``configMapKeyRef``."""
    out: set[str] = set()
    if not isinstance(pod_spec, Mapping):
        return out
    volumes = pod_spec.get("volumes")
    for v in volumes if isinstance(volumes, list) else ():
        if isinstance(v, dict):
            out.update(src["name"] for src in _cm_sources(v) if isinstance(src.get("name"), str))
    for group in ("containers", "initContainers"):
        cs = pod_spec.get(group)
        for c in cs if isinstance(cs, list) else ():
            if not isinstance(c, Mapping):
                continue
            sources = c.get("envFrom")
            for src in sources if isinstance(sources, list) else ():
                ref = src.get("configMapRef") if isinstance(src, Mapping) else None
                if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                    out.add(ref["name"])
            entries = c.get("env")
            for e in entries if isinstance(entries, list) else ():
                ref = get_in(e, "valueFrom", "configMapKeyRef") if isinstance(e, Mapping) else None
                if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
                    out.add(ref["name"])
    return out


def add_unparsed(
    cms: dict[tuple[str | None, str], LDict], unparsed: Sequence[tuple[str | None, str, Loc]]
) -> None:
    """Record in ``cms`` the ConfigMaps whose documents failed to parse (see :func:`configmaps`): each as an
    :class:`UnreadData` saying :data:`UNPARSED` with its file and line, where ``cms`` has none of that key."""
    for namespace, name, where in unparsed:
        if (namespace, name) not in cms:
            cms[(namespace, name)] = UnreadData(f"{UNPARSED} ({where.file}:{where.line})", None)


def _scalar_word(v: Any) -> str:
    return "string" if isinstance(v, str) else "boolean" if isinstance(v, bool) else "number"


#: Keys listed when a ConfigMap lacks the one referred to. [assumed] enough to spot a misspelt key.
_KEYS_SHOWN = 8


def _where(loc: Loc | None) -> str:
    return f" ({loc.file}:{loc.line})" if loc is not None else ""


def configmap_problem(
    cms: Mapping[tuple[str | None, str], LDict],
    name: str,
    namespace: str | None = None,
    key: str | None = None,
) -> str | None:
    """Why the ConfigMap ``name`` (its ``key``, when given) gives kvlint no value, in words starting with
    ``ConfigMap NAME``: not among the inputs; among them with ``data`` the API server refuses
    (:class:`UnreadData`), without ``key`` (its keys listed), or with ``key`` holding a mapping or a list
    instead of a string (the API server refuses the ConfigMap). The ConfigMap's place in its file is named.
    None when it provides the key (or, without ``key``, when it is among the inputs and readable). Looked up
    as :func:`configmap_value` does. Never raises."""
    found = _problem(cms, name, namespace, key)
    return None if found is None else f"ConfigMap {name}{_where(found[0])} {found[1]}"


def _problem(
    cms: Mapping[tuple[str | None, str], LDict], name: str, namespace: str | None, key: str | None
) -> tuple[Loc | None, str] | None:
    """``(where the ConfigMap's data is, what is wrong)`` for :func:`configmap_problem`, the second a phrase
    starting with a verb (``is not among the inputs``, ``has no key K ...``); None when nothing is."""
    data = _find_cm(cms, name, namespace)
    if data is None:
        elsewhere = _other_namespaces(cms, name, namespace)
        if elsewhere:
            ns, loc = elsewhere[0]
            more = f" (and {len(elsewhere) - 1} other)" if len(elsewhere) > 1 else ""
            return loc, (
                f"{OTHER_NAMESPACE} {ns}{more}, not the pod's namespace {namespace}: the kubelet reads a pod's "
                f"ConfigMaps in its own namespace only, and none of namespace {namespace} is among the inputs "
                "(where the cluster has none either, the pod does not start, CreateContainerConfigError, unless "
                "the reference is optional)"
            )
        return None, "is not among the inputs"
    if isinstance(data, UnreadData):
        return data.loc, data.why
    if key is None:
        return None
    if key not in data:
        keys = [
            str(k) for k in itertools.islice(data, _KEYS_SHOWN)
        ]  # (not the whole list: once per reference)
        more = ", ..." if len(data) > _KEYS_SHOWN else ""
        return data.loc, f"has no key {key}" + (
            f" (its keys: {', '.join(keys)}{more})" if keys else " (no keys)"
        )
    value = data[key]
    if isinstance(value, (dict, list)):
        shape = "a list" if isinstance(value, list) else "a mapping"
        return loc_of(data, key), f"holds {shape} at key {key}, not a string (the API server refuses it)"
    return None


def env_problems(
    container: Mapping, cms: Mapping[tuple[str | None, str], LDict], namespace: str | None = None
) -> tuple[tuple[str | None, str], ...]:
    """``(variable, why)`` for each ConfigMap reference of ``container``'s env that gives kvlint nothing
    (:func:`configmap_problem`): an ``envFrom`` ``configMapRef`` (variable None) and an ``env`` entry's
    ``valueFrom.configMapKeyRef`` (its variable), in the container's order; a ConfigMap several ``envFrom``
    entries name once. Empty when every reference is read. Never raises."""
    out: list[tuple[str | None, str]] = []
    if not isinstance(container, Mapping):
        return ()
    sources = container.get("envFrom")
    # each ConfigMap once, however many entries name it (its keys are scanned for one the API server refuses:
    # once per entry, 4,000 entries naming a ConfigMap of 4,000 keys scanned 16 million)
    whys: dict[str, str | None] = {}
    for src in sources if isinstance(sources, list) else []:
        ref = src.get("configMapRef") if isinstance(src, Mapping) else None
        if isinstance(ref, Mapping) and isinstance(ref.get("name"), str):
            if ref["name"] in whys:
                continue  # said at its first entry
            why = whys[ref["name"]] = _envfrom_problem(cms, ref["name"], namespace)
            if why is not None:
                out.append((None, f"envFrom: {why}"))
    entries = container.get("env")
    for e in entries if isinstance(entries, list) else []:
        ref = get_in(e, "valueFrom", "configMapKeyRef") if isinstance(e, Mapping) else None
        var = e.get("name") if isinstance(e, Mapping) else None
        if isinstance(ref, Mapping) and isinstance(var, str) and isinstance(ref.get("name"), str):
            key = ref.get("key")
            why = configmap_problem(cms, ref["name"], namespace, key if isinstance(key, str) else None)
            if why is not None:
                out.append((var, f"env {var}: {why}"))
    return tuple(out)


def _envfrom_problem(
    cms: Mapping[tuple[str | None, str], LDict], name: str, namespace: str | None
) -> str | None:
    """:func:`configmap_problem` of the ConfigMap ``name`` an ``envFrom`` entry imports whole: also a key the API
    server refuses (a mapping or a list), which makes the whole of it so."""
    why = configmap_problem(cms, name, namespace)
    if why is None:
        data: Mapping[Any, Any] = _find_cm(cms, name, namespace) or {}
        bad = next((str(k) for k, v in data.items() if isinstance(v, (dict, list))), None)
        why = None if bad is None else configmap_problem(cms, name, namespace, bad)
    return why


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
    alone when exactly one ConfigMap has it (not when it is of another namespace and ``namespace`` is set: the
    kubelet reads a pod's ConfigMaps in its own namespace).

    Returns:
        ``(text, loc)`` where ``loc`` is the position of the ``data`` value (for a block scalar, the
        ``|`` indicator line; the text starts on the next line), or None when the path is not mounted
        from a known ConfigMap. Never raises.
    """
    got = _resolve_guarded(pod_spec, container, path, cms, namespace)
    return None if got is None else (got[0], got[1])


def mounted_file_mode(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: dict[tuple[str | None, str], LDict],
    *,
    namespace: str | None = None,
) -> int | None:
    """Permission bits of the file :func:`mounted_file` reads at ``path``: its ``items`` entry's ``mode``, else
    the volume's ``defaultMode`` (a ``configMap`` volume's, or a ``projected`` volume's for its sources), else
    0o644, the API's default for both (k8s.io/api core/v1 ``ConfigMapVolumeSourceDefaultMode``,
    ``ProjectedVolumeSourceDefaultMode``). None when the path is not such a file or a mode there is not a whole
    number in 0-0o777 (the API server rejects the pod). Never raises."""
    got = _resolve_guarded(pod_spec, container, path, cms, namespace)
    return None if got is None else got[2]


def _resolve_guarded(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: dict[tuple[str | None, str], LDict],
    namespace: str | None,
) -> tuple[str, Loc | None, int | None] | None:
    try:
        return _mounted_file(pod_spec, container, path, cms, namespace)
    except (TypeError, AttributeError, ValueError):
        return None


def configmap_value(
    cms: Mapping[tuple[str | None, str], LDict], name: str, key: str, namespace: str | None = None
) -> tuple[str, Loc | None] | None:
    """``(value, loc)`` of ``data[key]`` of the ConfigMap ``name`` among ``cms`` (:func:`configmaps`; looked up as :func:`mounted_file`
    does: same namespace, then unspecified, then the only one of that name unless its namespace and the pod's are
    both set and differ), for ``env.valueFrom.configMapKeyRef``;
    None when the ConfigMap or key is not among the inputs or the value is not a scalar."""
    data = _find_cm(cms, name, namespace)  # the ConfigMap's data (see configmaps)
    if not isinstance(data, Mapping) or key not in data:
        return None
    value = data[key]
    if value is None or isinstance(value, (dict, list)):
        return None
    return (str(value).lower() if isinstance(value, bool) else str(value)), loc_of(data, key)


def configmap_env(
    cms: Mapping[tuple[str | None, str], LDict], name: str, prefix: str = "", namespace: str | None = None
) -> list[tuple[str, str, Loc | None]]:
    """``(variable, value, loc)`` for every scalar ``data`` key of the ConfigMap ``name`` (``envFrom.configMapRef``,
    names prefixed with ``prefix``), in the ConfigMap's key order; empty when it is not among the inputs."""
    data = _find_cm(cms, name, namespace)  # the ConfigMap's data (see configmaps)
    if not isinstance(data, Mapping):
        return []
    out = []
    for k, v in data.items():
        if isinstance(k, str) and v is not None and not isinstance(v, (dict, list)):
            out.append((prefix + k, str(v).lower() if isinstance(v, bool) else str(v), loc_of(data, k)))
    return out


#: The ConfigMaps of the last ``cms`` mapping :func:`_find_cm` looked a name up in by name alone: ``(that mapping,
#: its size then, name -> its keys)``. The mappings only grow (a later ConfigMap of a key replaces the earlier
#: one; none is removed), so the same mapping of the same size has the same keys.
_BY_NAME: tuple[Any, int, dict[str, list[tuple[str | None, str]]]] | None = None


def _named(cms: Mapping[tuple[str | None, str], LDict], name: str) -> list[tuple[str | None, str]]:
    """The keys of ``cms`` whose name is ``name``, from an index built once per mapping (and again when it has
    grown) instead of a scan of every ConfigMap per lookup: 6,000 references to names in another namespace
    among 6,000 ConfigMaps compared 72 million keys."""
    global _BY_NAME
    cached = _BY_NAME
    if cached is None or cached[0] is not cms or cached[1] != len(cms):
        index: dict[str, list[tuple[str | None, str]]] = {}
        for key in cms:
            index.setdefault(key[1], []).append(key)
        cached = _BY_NAME = (cms, len(cms), index)
    return [k for k in cached[2].get(name, ()) if k in cms]


def _other_namespaces(
    cms: Mapping[tuple[str | None, str], LDict], name: str, namespace: str | None
) -> list[tuple[str, Loc | None]]:
    """``(namespace, where its data is)`` of each ConfigMap ``name`` among ``cms`` in a namespace that is set and
    not ``namespace`` (set too): ones a pod of ``namespace`` cannot read."""
    if namespace is None:
        return []
    base = cms
    while isinstance(base, Scoped) and name not in base.hidden:
        base = base.base
    return [
        (str(k[0]), getattr(base[k], "loc", None))
        for k in _named(base, name)
        if k[0] is not None and k[0] != namespace
    ]


def _find_cm(cms: Mapping[tuple[str | None, str], LDict], name: str, namespace: str | None) -> LDict | None:
    if isinstance(cms, Scoped):
        # a workload's own view (scoped): its entries, then those of the run it does not hide
        hit = _find_in(cms, name, namespace, [k for k in cms if k[1] == name])
        if hit is None and name not in cms.hidden:
            hit = _find_cm(cms.base, name, namespace)
        return hit
    return _find_in(cms, name, namespace, None)


def _find_in(
    cms: Mapping[tuple[str | None, str], LDict],
    name: str,
    namespace: str | None,
    same: list[tuple[str | None, str]] | None,
) -> LDict | None:
    """The ConfigMap ``name`` among ``cms``: of ``namespace``, else of none, else the only one of that name (not
    one of another namespace when ``namespace`` is set; ``same``: the keys of that name, when known, else
    :func:`_named`)."""
    hit = cms.get((namespace, name))
    if hit is None:
        hit = cms.get((None, name))
    if hit is None:
        if same is None:
            same = _named(cms, name)
        # the only one of the name, unless the pod's namespace is set and it is another's (the kubelet reads a pod's
        # ConfigMaps in the pod's namespace: kubernetes pkg/kubelet/kubelet_pods.go makeEnvironmentVariables)
        hit = cms[same[0]] if len(same) == 1 and (namespace is None or same[0][0] is None) else None
    return hit


def _cm_sources(volume: dict) -> list[dict]:
    """``configMap`` sources of a volume (plain or projected)."""
    out = []
    cm = volume.get("configMap")
    if isinstance(cm, dict):
        out.append(cm)
    sources = get_in(volume, "projected", "sources")
    if isinstance(sources, list):
        for s in sources:
            cm = get_in(s, "configMap")
            if isinstance(cm, dict):
                out.append(cm)
    return out


def _mounted_file(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: dict[tuple[str | None, str], LDict],
    namespace: str | None,
) -> tuple[str, Loc | None, int | None] | None:
    """``(text, loc, mode)`` of the ConfigMap key mounted at ``path`` (see :func:`mounted_file`,
    :func:`mounted_file_mode`), or None."""
    found = _mount_of(pod_spec, container, path)
    if found is None:
        return None
    volume, rel = found
    for src in _cm_sources(volume):
        key, mode = _key_and_mode(volume, src, rel)
        if key is None:
            continue
        data = _find_cm(cms, str(src.get("name")), namespace)
        if data is None or key not in data or isinstance(data[key], (dict, list)):
            continue  # (a mapping or a list: the API server refuses the ConfigMap, which then mounts nothing)
        value = data[key]
        text = value if isinstance(value, str) else ("" if value is None else str(value))
        if mode is None:
            mode = _DEFAULT_MODE
        ok = type(mode) is int and 0 <= mode <= 0o777
        return text, loc_of(data, key), mode if ok else None
    return None


def _key_and_mode(volume: dict, src: dict, rel: str) -> tuple[Any, Any]:
    """``(key, mode)``: the ConfigMap key the file ``rel`` of a ``configMap`` source ``src`` of ``volume`` holds
    (through ``items``, else the file name itself; None when the source does not hold it) and its mode as
    written (None when neither the item nor the volume sets one)."""
    if not isinstance(src.get("name"), str):
        return None, None
    items = src.get("items")
    key: Any = None
    # the volume's default mode: a configMap volume's own, or the projected volume's for its sources
    plain = src is volume.get("configMap")
    mode: Any = src.get("defaultMode") if plain else get_in(volume, "projected", "defaultMode")
    if isinstance(items, list) and items:
        for it in items:
            if isinstance(it, dict) and posixpath.normpath(str(it.get("path", ""))) == rel:
                key = it.get("key")
                if it.get("mode") is not None:
                    mode = it.get("mode")
                break
    elif "/" not in rel:
        key = rel
    return key, mode


def mount_problem(
    pod_spec: LDict,
    container: LDict,
    path: str,
    cms: Mapping[tuple[str | None, str], LDict],
    *,
    namespace: str | None = None,
) -> str | None:
    """Why the file at ``path``, inside a directory ``container`` mounts from a ConfigMap (a ``configMap``
    volume or a ``projected`` volume's ``configMap`` sources, as :func:`mounted_file` follows them), gives
    kvlint no text, in words that follow ``PATH is``: ``mounted from ConfigMap NAME, which ...`` (:func:`configmap_problem`: not
    among the inputs, unreadable ``data``, no such key, a key that is not a string) or ``... whose items do not
    list it``. None when the path is not mounted from a ConfigMap, or the ConfigMap provides it. Never
    raises."""
    try:
        found = _mount_of(pod_spec, container, path)
        if found is None:
            return None
        volume, rel = found
        whys = []
        for src in _cm_sources(volume):
            name = src.get("name")
            if not isinstance(name, str):
                continue
            key, _mode = _key_and_mode(volume, src, rel)
            if key is None:
                whys.append(f"ConfigMap {name}, whose volume items do not list {rel}")
                continue
            problem = _problem(cms, name, namespace, str(key))
            if problem is None:
                return None
            whys.append(f"ConfigMap {name}{_where(problem[0])}, which {problem[1]}")
        return "mounted from " + "; or from ".join(whys) if whys else None
    except (TypeError, AttributeError, ValueError):
        return None


def _mount_of(pod_spec: LDict, container: LDict, path: str) -> tuple[dict, str] | None:
    """``(volume, relative path)``: the volume of the deepest ``volumeMounts`` entry of ``container`` holding
    ``path`` and the path inside it (``subPath`` applied), or None when no mount holds it as a file."""
    if not isinstance(path, str) or not path:
        return None
    target = _clean(path)
    mounts = container.get("volumeMounts") if isinstance(container, dict) else None
    volumes = pod_spec.get("volumes") if isinstance(pod_spec, dict) else None
    if not isinstance(mounts, list) or not isinstance(volumes, list):
        return None
    by_name = {v.get("name"): v for v in volumes if isinstance(v, dict)}
    # The deepest mount holding ``target`` is the one the container sees: the runtime mounts the volumes
    # in order of path depth, so a deeper one shadows what a shallower one holds there (containerd
    # internal/cri/opts/spec_linux_opts.go withMounts, orderedMounts: "so that high level mounts don't
    # shadow other mounts"). A file found in a shallower ConfigMap mount is not the file the path names.
    best: tuple[int, dict, str] | None = None
    for mount in mounts:
        if not isinstance(mount, dict):
            continue
        mpath = mount.get("mountPath")
        if not isinstance(mpath, str) or not mpath:
            continue
        mpath = _clean(mpath)
        sub = mount.get("subPath")
        sub = posixpath.normpath(sub) if isinstance(sub, str) and sub else None
        if target == mpath:
            if sub is None:
                return None  # a directory mount at the path itself: the path is a directory, not a file
            rel = sub
        elif target.startswith(mpath.rstrip("/") + "/"):
            rel = target[len(mpath.rstrip("/")) + 1 :]
            if sub is not None:
                rel = posixpath.join(sub, rel)
        else:
            continue
        depth = mpath.rstrip("/").count("/")
        if best is None or depth >= best[0]:
            best = (depth, mount, rel)
    if best is None:
        return None
    _depth, mount, rel = best
    volume = by_name.get(mount.get("name"))
    if not isinstance(volume, dict):
        return None
    return volume, rel


#: the mode of a file a ConfigMap or projected volume holds when neither the item nor the volume sets one
#: (k8s.io/api core/v1 types.go: ConfigMapVolumeSourceDefaultMode, ProjectedVolumeSourceDefaultMode, 0644)
_DEFAULT_MODE = 0o644


def _clean(path: str) -> str:
    """``path`` normalized as the kernel resolves it lexically: ``.``, ``..`` and repeated slashes folded
    (``posixpath.normpath`` keeps two leading slashes, which POSIX leaves implementation-defined and Linux
    reads as one)."""
    path = posixpath.normpath(path)
    return "/" + path.lstrip("/") if path.startswith("//") else path
