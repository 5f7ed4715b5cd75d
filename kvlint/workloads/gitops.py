"""Argo CD Applications and Flux HelmReleases that deploy a chart kvlint reads from its values (a chart values
reader of :data:`kvlint.chart_values.READERS`: vLLM production-stack's ``vllm-stack``, KubeAI's ``models``, bjw-s
``app-template``):
the inline values are read as that chart's values, so the pods are built and sized with every finding located at
the values' own lines in the Application/HelmRelease file.

Where the values come from, in the order each tool applies them (later wins):

* Argo CD (``spec.source`` or each of ``spec.sources``; an ApplicationSet's ``spec.template.spec``):
  ``helm.valueFiles``, then ``helm.values`` (a string of YAML) or ``helm.valuesObject`` (an object; when both
  are set Argo CD uses ``valuesObject`` alone), then ``helm.parameters`` (``--set``). Argo CD's user guide,
  "Helm" (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/, "Values" and "Helm Parameters": "the order
  of precedence is parameters > valuesObject > values > valueFiles > helm repository values.yaml"); the string
  or object is written to a values file passed after the value files
  (argo-cd ``reposerver/repository/repository.go``, ``helmTemplate``; ``ApplicationSourceHelm.ValuesYAML``).
* Flux (``helm.toolkit.fluxcd.io`` ``HelmRelease``): ``spec.valuesFrom`` (ConfigMaps and Secrets, in order),
  then ``spec.values`` merged over them (Flux helm-controller documentation, "Values references": "the values
  are merged in the order given, with the later values overwriting earlier ... spec.values are merged last").

The ``kvlint.io/`` annotations of the Application or HelmRelease (the object the user writes) are passed on to
every workload built from it, under the workload's own (:func:`_with_object_annotations`): ``kvlint.io/ignore``
suppresses their findings, ``kvlint.io/accelerator`` or ``kvlint.io/model`` speak for their pods.

Value files, ConfigMaps and Secrets are not among the inputs (kvlint never fetches anything): the note names
them and says the result assumes they set nothing. A chart kvlint has no reader for, a chart rendered from a
directory, or values of the wrong type keep the "not read" note of
:func:`kvlint.workloads.operators.unread_kind_note`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kvlint import filecache
from kvlint.chart_values import READERS, ChartValuesReader
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, LoadResult, Mark, Workload
from kvlint.wording import shell_word
from kvlint.workloads.base import ACCELERATOR_ANNOTATION, MODEL_ANNOTATION, get_in, located_copy

__all__ = [
    "MAX_VALUES_CHARS",
    "MAX_PARAMETERS",
    "ChartSource",
    "chart_sources",
    "gitops_names_engine",
    "gitops_workloads",
]

#: The longest ``helm.values`` string read, in characters. [assumed] inline values are hand-written, a few KiB;
#: the file itself is already capped by the loader (``max_file_bytes``), this bounds the second parse.
MAX_VALUES_CHARS = 1 << 20
#: The most ``helm.parameters`` applied. [assumed] a hand-written Application sets a few dozen.
MAX_PARAMETERS = 1024
#: The largest list index a parameter may name (``a[3].b``): Helm pads a list up to the index with nulls; an
#: index beyond the list's end is not applied (said in the note). [assumed]
_PARAM_NAME = re.compile(r"^[A-Za-z0-9_-]+(?:\[\d{1,4}\])*(?:\.[A-Za-z0-9_-]+(?:\[\d{1,4}\])*)*$")
_PARAM_PART = re.compile(r"([A-Za-z0-9_-]+)|\[(\d+)\]")
_INT = re.compile(r"^[-+]?\d{1,18}$")

#: The chart names read, with the reader that reads their values (its ``name`` in :data:`READERS`) and the chart
#: version that reader restates (None: the reader restates a commit of the chart, not a release).
_CHARTS: dict[str, tuple[str, str]] = {
    "vllm-stack": ("vLLM production-stack chart", "production-stack"),
    "models": ("KubeAI models chart", "kubeai"),
    "app-template": ("bjw-s app-template chart", "app-template"),
}


@dataclass(frozen=True)
class ChartSource:
    """One chart an Argo CD source or a Flux HelmRelease deploys with a values reader kvlint has.

    ``chart`` the chart name, ``version`` the version pinned (Argo ``targetRevision``, Flux
    ``chart.spec.version``; None when none), ``at`` where the chart is named, ``values`` the inline values (a
    mapping located in the file; empty when none), ``unseen`` the value files/ConfigMaps/Secrets kvlint cannot
    read (as written), ``skipped`` what of the inline values was not applied and why."""

    chart: str
    version: str | None
    at: Loc | None
    values: LDict
    unseen: tuple[str, ...]
    skipped: tuple[str, ...]
    release: str


def _text(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) else None


def _reader(name: str) -> ChartValuesReader:
    return next(r for r in READERS if r.name == name)


def _copy(node: Any) -> Any:
    """A shallow copy of a located container (positions kept: :func:`kvlint.workloads.base.located_copy` for a
    mapping), else ``node``."""
    if isinstance(node, LDict):
        return located_copy(node)
    if isinstance(node, LList):
        out = LList(node, loc=node.loc)
        out.locs = list(node.locs)
        return out
    return node


def _param_value(raw: Any, force_string: bool) -> Any:
    """A ``--set`` value as Helm types it (helm ``pkg/strvals/parser.go``, ``typedVal``): ``true``/``false``,
    ``null``, a 64-bit integer without leading zero; anything else a string; ``forceString`` keeps the string."""
    text = _text(raw) if not isinstance(raw, bool) else str(raw).lower()
    if text is None:
        text = ""
    if force_string:
        return text
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "null":
        return None
    if _INT.match(text) and not (len(text.lstrip("+-")) > 1 and text.lstrip("+-").startswith("0")):
        n = int(text)
        if -(2**63) <= n < 2**63:
            return n
    return text


def _set_param(
    values: LDict, name: str, value: Any, loc: Loc | None, owned: set[int] | None = None
) -> str | None:
    """Apply one ``helm.parameters`` item to ``values`` (copying the containers on its path, so the
    Application's own mappings are not changed); returns why it was not applied, or None. ``owned``: the ids of
    the containers earlier parameters of the same source copied or made (changed in place, not copied again:
    1,024 parameters under a mapping of 10^5 keys copied it 1,024 times, 7.4 s of CPU); filled here."""
    owned = set() if owned is None else owned
    if not _PARAM_NAME.match(name):
        return f"{name} (a name kvlint does not parse: escaped dots, commas or braces)"
    parts: list[str | int] = [
        m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _PARAM_PART.finditer(name)
    ]
    node: Any = values
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt = None if last else parts[i + 1]
        if isinstance(part, str):
            if not isinstance(node, dict):
                return f"{name} (sets a key inside a value that is not a mapping)"
            if last:
                node[part] = value
                if isinstance(node, LDict) and loc is not None:
                    node.locs[part] = loc
                    node.key_locs[part] = loc
                return None
            child = node.get(part)
            if isinstance(nxt, int):
                if not (isinstance(child, LList) and id(child) in owned):
                    child = _copy(child) if isinstance(child, list) else LList([], loc=loc)
                    if not isinstance(child, LList):
                        child = LList(child, loc=loc)
                        child.locs = [loc or Loc("-")] * len(child)
                    owned.add(id(child))
            elif not (isinstance(child, LDict) and id(child) in owned):
                child = _copy(child) if isinstance(child, dict) else LDict(loc=loc)
                if not isinstance(child, LDict):
                    child = LDict(child, loc=loc)
                owned.add(id(child))
            node[part] = child
            if isinstance(node, LDict) and loc is not None and part not in node.locs:
                node.locs[part] = loc
                node.key_locs[part] = loc
            node = child
        else:
            if not isinstance(node, LList):
                return f"{name} (sets an item of a value that is not a list)"
            if part > len(node):
                return f"{name} (index beyond the end of the list)"
            if last:
                if part == len(node):
                    node.append(value)
                    node.locs.append(loc or Loc("-"))
                else:
                    node[part] = value
                    if loc is not None:
                        node.locs[part] = loc
                return None
            child = node[part] if part < len(node) else None
            if not (isinstance(child, (LDict, LList)) and id(child) in owned):
                child = _copy(child) if isinstance(child, (dict, list)) else None
                if child is None:
                    child = LList([], loc=loc) if isinstance(nxt, int) else LDict(loc=loc)
                owned.add(id(child))
            if part == len(node):
                node.append(child)
                node.locs.append(loc or Loc("-"))
            else:
                node[part] = child
            node = child
    return None  # pragma: no cover - the loop returns


@functools.lru_cache(maxsize=8)
def _block_text(path: str) -> tuple[str, ...] | None:
    """The lines of ``path``, or None when the file cannot be read again (stdin, gone, not UTF-8, larger than
    :data:`MAX_VALUES_CHARS` times 16). Kept by path for the run (emptied where each run starts,
    :func:`_forget_lines`): every ``helm.values`` string of a file is placed in it, and reading the file again
    for each made a 0.9 MB file of 2,000 Applications take 9.2 s of CPU (quadratic)."""
    if path == "-" or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_VALUES_CHARS * 16 + 1)
    except OSError:
        return None
    if len(data) > MAX_VALUES_CHARS * 16:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return tuple(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


@filecache.register
def _forget_lines() -> None:
    """Forget the file lines :func:`_block_text` kept (a file edited between two runs is read again)."""
    _block_text.cache_clear()


def _positioned_text(s: str, at: Loc | None) -> tuple[str, int] | None:
    """``s`` (a ``helm.values`` string) laid out as it stands in its file: each line indented as in the block
    scalar, and the number of lines before it, so every parsed position is the file's own; ``(text, lines
    before)`` (not blank lines before the text: the loader read them all for each string, 1.4 s of CPU for a
    file of 2,000 Applications). None when ``s``
    is not the file's literal block scalar at ``at`` line for line (a quoted or folded scalar, standard input):
    then positions are those of ``at`` itself."""
    if at is None:
        return None
    lines = s.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    all_lines = _block_text(at.file)
    if all_lines is None:
        return None
    file_lines = all_lines[at.line : at.line + len(lines)]  # from the line after the key's
    if len(file_lines) < len(lines):
        return None
    first = next((fl for fl, sl in zip(file_lines, lines, strict=False) if sl), None)
    if first is None:
        return None
    indent = len(first) - len(first.lstrip(" "))
    pad = " " * indent
    for fl, sl in zip(file_lines, lines, strict=False):
        if (sl and fl != pad + sl) or (not sl and fl.strip()):
            return None
    return "\n".join(pad + sl if sl else "" for sl in lines) + "\n", at.line


def _relocated(node: Any, loc: Loc, depth: int = 0) -> Any:
    """``node`` with every container and position at ``loc`` (values whose own positions are not known)."""
    if depth > 256:
        return None
    if isinstance(node, dict):
        d = LDict(loc=loc)
        for k, v in node.items():
            d[k] = _relocated(v, loc, depth + 1)
            d.locs[k] = loc
            d.key_locs[k] = loc
        return d
    if isinstance(node, list):
        out = LList([_relocated(v, loc, depth + 1) for v in node], loc=loc)
        out.locs = [loc] * len(out)
        return out
    return node


def load_block_scalar(s: str, at: Loc | None, path: str) -> tuple[LoadResult, bool]:
    """The YAML string ``s`` that stands in a literal block scalar of ``path`` (the key's position ``at``)
    loaded with the loader's safe reader and limits, every position the file's own where ``s`` is that block
    scalar line for line (:func:`_positioned_text`) unless it holds a directive; and whether it is (else positions are the parse's own and
    the caller relocates them to ``at``, :func:`_relocated`). Argo CD's ``helm.values`` and a RayService's
    ``serveConfigV2`` are read through it."""
    from kvlint.load import load_text

    # a directive (``%TAG``, ``%YAML``) is read only at a line's start: indented as in the file, it is a syntax error
    placed = None if s.startswith("%") or "\n%" in s else _positioned_text(s, at)
    if placed is None:
        return load_text(s, path), False
    return load_text(placed[0], path, line_offset=placed[1]), True


def _parse_values(s: str, at: Loc | None, path: str) -> tuple[LDict | None, str | None]:
    """The ``helm.values`` string ``s`` parsed with the loader's safe reader and limits (its first document, as
    Helm reads a values file), positions mapped into the file's block scalar (:func:`_positioned_text`), or
    ``(None, why)``."""
    if len(s) > MAX_VALUES_CHARS:
        return None, f"helm.values ({len(s)} characters, more than kvlint reads: {MAX_VALUES_CHARS})"
    result, placed = load_block_scalar(s, at, path)
    if result.findings and not result.documents:
        problem = result.findings[0]
        return None, f"helm.values (it does not parse as YAML: {problem.message})"
    if not result.documents:
        return LDict(loc=at), None
    data = result.documents[0].data
    if data is None:
        return LDict(loc=at), None
    if not isinstance(data, dict):
        return None, "helm.values (its YAML is not a mapping)"
    if not placed and at is not None:
        data = _relocated(data, at)
    if result.findings and any(f.rule in ("KV001", "KV002") for f in result.findings):
        return None, "helm.values (template syntax or a YAML problem in it)"
    return data if isinstance(data, LDict) else _relocated(data, at or Loc(path)), None


def _argo_source(doc: Document, src: Any, release: str) -> ChartSource | None:
    """The :class:`ChartSource` of one Argo CD ``ApplicationSource`` deploying a chart kvlint reads, else None."""
    if not isinstance(src, dict):
        return None
    chart = src.get("chart")
    if not isinstance(chart, str) or chart not in _CHARTS:
        return None
    helm = src.get("helm")
    helm = helm if isinstance(helm, dict) else {}
    skipped: list[str] = []
    values: LDict | None = None
    vo = helm.get("valuesObject")
    vs = helm.get("values")
    if isinstance(vo, dict) and vo:
        values = (
            _copy(vo) if isinstance(vo, LDict) else _relocated(vo, loc_of(helm, "valuesObject") or doc.loc)
        )
        if vs:
            skipped.append("helm.values (Argo CD uses helm.valuesObject alone when both are set)")
    elif vo is not None and not isinstance(vo, dict):
        skipped.append("helm.valuesObject (not a mapping)")
    if values is None and isinstance(vs, str) and vs.strip():
        values, why = _parse_values(vs, loc_of(helm, "values"), doc.path)
        if why:
            skipped.append(why)
    elif values is None and vs is not None and not isinstance(vs, str):
        skipped.append("helm.values (not a string of YAML)")
    if values is None:
        values = LDict(loc=loc_of(src, "chart") or doc.loc)
    params = helm.get("parameters")
    if isinstance(params, list):
        owned: set[int] = set()
        for i, p in enumerate(params[:MAX_PARAMETERS]):
            name = p.get("name") if isinstance(p, dict) else None
            if not isinstance(name, str) or not name:
                skipped.append(f"helm.parameters[{i}] (no name)")
                continue
            why = _set_param(
                values,
                name,
                _param_value(p.get("value"), p.get("forceString") is True),
                loc_of(p, "value") or loc_of(params, i),
                owned,
            )
            if why:
                skipped.append(why)
        if len(params) > MAX_PARAMETERS:
            skipped.append(f"helm.parameters beyond the first {MAX_PARAMETERS}")
    elif params is not None:
        skipped.append("helm.parameters (not a list)")
    unseen: list[str] = []
    files = helm.get("valueFiles")
    if isinstance(files, list):
        unseen += [f"value file {f}" for f in files if isinstance(f, str) and f]
    if helm.get("fileParameters"):
        unseen.append("helm.fileParameters")
    rel = _text(helm.get("releaseName")) or release
    return ChartSource(
        chart,
        _text(src.get("targetRevision")),
        loc_of(src, "chart"),
        values,
        tuple(unseen),
        tuple(skipped),
        rel,
    )


def _flux_source(doc: Document) -> ChartSource | None:
    """The :class:`ChartSource` of a Flux HelmRelease whose ``chart.spec.chart`` names a chart kvlint reads, or
    whose ``chartRef`` (an ``OCIRepository`` or ``HelmChart`` object, helm.toolkit.fluxcd.io/v2) is named as the
    chart is (``chartRef.name: app-template``, the OCIRepository of ``oci://ghcr.io/bjw-s-labs/helm/app-template``
    as home-ops repositories name it; the object itself is usually in another file)."""
    spec = get_in(doc.data, "spec")
    if not isinstance(spec, dict):
        return None
    cspec = get_in(spec, "chart", "spec")
    chart = cspec.get("chart") if isinstance(cspec, dict) else None
    if chart is None and isinstance(spec.get("chartRef"), dict):
        cspec = spec["chartRef"]
        chart = cspec.get("name") if cspec.get("kind") in ("OCIRepository", "HelmChart", None) else None
        if chart not in (
            "app-template",
        ):  # a chartRef names an object, not a chart: only this convention is read
            return None
        at = loc_of(cspec, "name")
    else:
        at = loc_of(cspec, "chart") if isinstance(cspec, dict) else None
    if not isinstance(chart, str) or chart not in _CHARTS or not isinstance(cspec, dict):
        return None
    skipped: list[str] = []
    v = spec.get("values")
    if isinstance(v, LDict):
        values = _copy(v)
    else:
        values = LDict(loc=at or doc.loc)
        if v is not None and not isinstance(v, dict):
            skipped.append("spec.values (not a mapping)")
        elif isinstance(v, dict):
            values = _relocated(v, loc_of(spec, "values") or doc.loc)
    unseen: list[str] = []
    refs = spec.get("valuesFrom")
    if isinstance(refs, list):
        for r in refs:
            if isinstance(r, dict):
                kind, name = _text(r.get("kind")) or "ConfigMap", _text(r.get("name")) or "?"
                key = _text(r.get("valuesKey")) or "values.yaml"
                target = _text(r.get("targetPath"))
                unseen.append(f"{kind}/{name} ({key}{' at ' + target if target else ''})")
    elif refs is not None:
        skipped.append("spec.valuesFrom (not a list)")
    release = _text(spec.get("releaseName"))
    if release is None:
        target_ns = _text(spec.get("targetNamespace"))
        release = f"{target_ns}-{doc.name}" if target_ns else doc.name
    return ChartSource(
        chart,
        _text(cspec.get("version")),
        at,
        values,
        tuple(unseen),
        tuple(skipped),
        release,
    )


def chart_sources(doc: Document) -> list[ChartSource]:
    """The charts with a values reader that the GitOps object ``doc`` deploys (Argo CD Application or
    ApplicationSet, Flux HelmRelease of helm.toolkit.fluxcd.io), in the order written."""
    if doc.kind == "HelmRelease":
        if not str(get_in(doc.data, "apiVersion") or "").startswith("helm.toolkit.fluxcd.io/"):
            return []
        found = _flux_source(doc)
        return [found] if found else []
    spec = get_in(doc.data, "spec")
    if doc.kind == "ApplicationSet":
        spec = get_in(spec, "template", "spec")
    if not isinstance(spec, dict):
        return []
    release = doc.name or "RELEASE"
    sources = spec.get("sources")
    srcs = sources if isinstance(sources, list) else [spec.get("source")]
    out = []
    for s in srcs[:64]:
        found = _argo_source(doc, s, release)
        if found is not None:
            out.append(found)
    return out


def _chart_words(src: ChartSource) -> str:
    reader, _ = _CHARTS[src.chart]
    if src.chart == "app-template":
        return "the bjw-s app-template chart"
    return (
        "vLLM production-stack's vllm-stack chart" if reader.startswith("vLLM") else "KubeAI's models chart"
    )


def _restated(src: ChartSource) -> str:
    """The chart release (or commit) the reader restates, and whether the pinned version is it."""
    if src.chart == "vllm-stack":
        from kvlint.workloads.stack_values import CHART_COMMIT, CHART_VERSION

        pinned = src.version
        if pinned is None:
            return (
                f"no chart version is pinned here; kvlint restates vllm-stack {CHART_VERSION} (commit "
                f"{CHART_COMMIT[:12]})"
            )
        if pinned.lstrip("v") == CHART_VERSION:
            return (
                f"the pinned chart version {pinned} is the one kvlint restates (commit {CHART_COMMIT[:12]})"
            )
        return (
            f"the chart version pinned here is {pinned}, kvlint restates vllm-stack {CHART_VERSION} (commit "
            f"{CHART_COMMIT[:12]}): {pinned} may render the values differently"
        )
    if src.chart == "app-template":
        from kvlint.workloads.app_template import LIBRARY_COMMIT

        pinned = (
            f"the chart version pinned here is {src.version}"
            if src.version
            else "no chart version is pinned here"
        )
        return f"{pinned}; kvlint restates the bjw-s common library at bjw-s-labs/helm-charts {LIBRARY_COMMIT[:12]}"
    from kvlint.workloads.kubeai import MODELS_CHART_TEMPLATE

    repo_commit = MODELS_CHART_TEMPLATE.split(":", 1)[0]
    pinned = (
        f"the chart version pinned here is {src.version}"
        if src.version
        else "no chart version is pinned here"
    )
    return f"{pinned}; kvlint restates the models chart at {repo_commit}"


def _note(doc: Document, src: ChartSource, n: int) -> Finding:
    """KV504 (info): the pods were built from the inline values as the named chart renders them, on the
    assumptions that the restated chart version renders them and that what kvlint cannot see sets nothing."""
    what = "Argo CD source" if doc.kind != "HelmRelease" else "HelmRelease"
    message = (
        f"built from the inline Helm values of this {doc.kind}: kvlint read them as the values of "
        f"{_chart_words(src)} and linted the {n} pod template{'s' if n != 1 else ''} it renders from them; "
        f"{_restated(src)}"
    )
    if src.unseen:
        message += (
            f"; kvlint cannot see {', '.join(src.unseen)} (not among the inputs): the result assumes "
            f"{'it sets' if len(src.unseen) == 1 else 'they set'} nothing"
        )
    if src.skipped:
        message += f"; not applied: {', '.join(src.skipped)}"
    return Finding(
        "KV504",
        message,
        src.at or doc.loc,
        fix=f"for certainty, lint what this {what} deploys: helm template {src.release} CHART --version VERSION "
        "-f VALUES | kvlint check -",
        severity="info",
    )


#: How the workload finder reads rendered documents, and tells whether data names a serving engine: passed in by
#: :mod:`kvlint.workloads.find` (which imports this module).
FindWorkloads = Callable[[Sequence[Document]], list[Workload]]
NamesEngine = Callable[[Any], bool]


#: Keys of a GitOps object whose values say where its pods go, not what they run: Argo CD's ``destination``
#: (``server``, ``name``, ``namespace``), Flux's ``targetNamespace`` / ``storageNamespace``, and any
#: ``namespace`` (the object's own, an ApplicationSet generator's, a chart value's). A namespace called ``vllm``
#: holds whatever is deployed into it: Open WebUI, an exporter, a router.
_WHERE_KEYS = frozenset({"destination", "namespace", "targetNamespace", "storageNamespace"})
#: A URL with a scheme (``http://vllm-router.vllm.svc:8000/v1``): in a chart's values it is the address of a
#: server the pods talk to (Open WebUI's ``openaiBaseApiUrl``), not what they run. An Argo CD source's
#: ``repoURL`` is kept: it names the chart or repository deployed.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: Deeper structures are not pruned further (kept as they are). [assumed] a hand-written object is a few levels.
_PRUNE_DEPTH = 64


def _what_runs(node: Any, key: str = "", depth: int = 0) -> Any:
    """``node`` without :data:`_WHERE_KEYS` and URL strings other than a ``repoURL`` (:data:`_URL`)."""
    if depth > _PRUNE_DEPTH:
        return node
    if isinstance(node, dict):
        return {k: _what_runs(v, str(k), depth + 1) for k, v in node.items() if str(k) not in _WHERE_KEYS}
    if isinstance(node, list):
        return [_what_runs(x, key, depth + 1) for x in node]
    if isinstance(node, str) and key != "repoURL" and _URL.match(node):
        return ""
    return node


def gitops_names_engine(doc: Document, names_engine: NamesEngine) -> bool:
    """The GitOps object ``doc`` (:data:`kvlint.workloads.operators.GITOPS_KINDS`) names a serving engine
    (``names_engine``, the workload finder's test) in what it deploys: its name, labels, sources, chart values
    and parameters, not where it deploys them (:data:`_WHERE_KEYS`) nor the addresses its values point at
    (:data:`_URL`). An Application of Open WebUI or of a GPU exporter whose destination namespace is ``vllm``,
    or whose values reach ``http://vllm.vllm.svc``, deploys no engine; one of the chart ``vllm``, the directory
    ``helm/vllm`` or with a ``vllm`` value key does."""
    return names_engine(_what_runs(doc.data))


def gitops_workloads(
    doc: Document, find: FindWorkloads, names_engine: NamesEngine, max_bytes: int | None = None
) -> list[Workload]:
    """The workloads of the pods the GitOps object ``doc`` deploys: the charts of this checkout it names, rendered
    (:mod:`kvlint.workloads.gitops_local`; ``find`` reads the rendered documents, ``names_engine`` tells whether
    the object names an engine), then those of a chart kvlint reads from its values
    (:func:`chart_sources`), each source's values read by its chart values reader as a values file located in
    ``doc``'s file. The first workload of each source carries a KV504 note (:func:`_note`) in place of the
    reader's own; a source whose values the reader builds no pod from gets an empty workload with a KV503 note
    saying why. Empty when ``doc`` deploys no such chart or sets no inline values for it (value files alone:
    its "not read" note stays). ``max_bytes`` caps what helm renders (``--max-file-bytes``; default
    :data:`kvlint.load.DEFAULT_MAX_FILE_BYTES`)."""
    return [_with_object_annotations(w, doc) for w in _built(doc, find, names_engine, max_bytes)]


#: The annotations of kvlint's own vocabulary (``kvlint.io/ignore``, ``kvlint.io/accelerator``,
#: ``kvlint.io/model`` ...), the ones an Argo CD or Flux object passes on to the workloads built from it.
KVLINT_ANNOTATION_PREFIX = "kvlint.io/"


def object_annotations(doc: Document) -> list[tuple[str, str, Loc | None]]:
    """``(key, value, loc)`` of the kvlint annotations (:data:`KVLINT_ANNOTATION_PREFIX`) on the GitOps object
    ``doc``: its ``metadata.annotations``, and for an ApplicationSet those of ``spec.template.metadata`` over
    them (the Applications it generates carry the template's)."""
    found: dict[str, tuple[str, str, Loc | None]] = {}
    holders = [get_in(doc.data, "metadata", "annotations")]
    if doc.kind == "ApplicationSet":
        holders.append(get_in(doc.data, "spec", "template", "metadata", "annotations"))
    for ann in holders:
        if not isinstance(ann, dict):
            continue
        for k, v in ann.items():
            key = str(k)
            if key.startswith(KVLINT_ANNOTATION_PREFIX) and v is not None and not isinstance(v, (dict, list)):
                found[key] = (key, str(v).lower() if isinstance(v, bool) else str(v), loc_of(ann, k))
    return list(found.values())


def _with_object_annotations(w: Workload, doc: Document) -> Workload:
    """``w`` (built from what the GitOps object ``doc`` deploys) with ``doc``'s kvlint annotations
    (:func:`object_annotations`) under its own: the object the user wrote is where a ``kvlint.io/ignore`` or a
    ``kvlint.io/accelerator`` for the pods it deploys is written, as on a Deployment's metadata for its pod
    template. A key the built workload sets itself (a values entry's ``podAnnotations``) wins. A user's
    annotation beats what the builder derived from the values (as :func:`kvlint.workloads.base.synthetic_workload`
    lets it): a ``kvlint.io/accelerator`` the object passes on drops the workload's ``derived_accelerator`` and
    ``accelerator_why``, a ``kvlint.io/model`` its ``derived_model``. Each key keeps its position in the object,
    so a KV003 on a malformed ``kvlint.io/ignore`` points there."""
    given = object_annotations(doc)
    if not given:
        return w
    ann = LDict(loc=getattr(w.annotations, "loc", None) or doc.loc)
    own_locs = getattr(w.annotations, "locs", {})
    for k, v in w.annotations.items():
        ann[k] = v
        if k in own_locs:
            ann.locs[k] = own_locs[k]
    for k, v, loc in given:
        if k in ann:
            continue
        ann[k] = v
        if loc is not None:
            ann.locs[k] = loc
    facts: dict[str, Any] = {}
    if any(k == ACCELERATOR_ANNOTATION for k, _, _ in given) and ACCELERATOR_ANNOTATION not in w.annotations:
        facts.update(derived_accelerator=None, accelerator_why=None)  # the object names the GPU
    if MODEL_ANNOTATION in ann:
        facts["derived_model"] = None
    return replace(w, annotations=ann, **facts)


def _built(
    doc: Document, find: FindWorkloads, names_engine: NamesEngine, max_bytes: int | None
) -> list[Workload]:
    """:func:`gitops_workloads` before the object's annotations are passed on."""
    out: list[Workload] = list(_local_workloads(doc, find, names_engine, max_bytes))
    for src in chart_sources(doc):
        reader = _reader(_CHARTS[src.chart][0])
        sub = Document(doc.path, doc.index, src.values, src.values.loc or src.at or doc.loc)
        if not src.values or (src.chart in ("models", "app-template") and not reader.recognise(src.values)):
            continue  # a chart named models that is not KubeAI's, no catalogue, or an app that serves no LLM
        try:
            if src.chart == "app-template":  # named by the chart from the release name (see resource_name)
                from kvlint.workloads.app_template import app_template_workloads

                ws = app_template_workloads(sub, release=src.release)
            else:
                ws = reader.workloads(sub)
        except RecursionError:  # pragma: no cover - the loader caps nesting
            ws = []
        namespace = _namespace(doc)
        if not ws:
            why = reader.note(sub)
            reason = why.message.split(": ", 1)[-1] if why is not None else "it names no model"
            empty = LDict(loc=src.at or doc.loc)
            empty["containers"] = LList([], loc=empty.loc)
            out.append(
                Workload(
                    sub,
                    doc.kind,
                    doc.name,
                    doc.namespace,
                    empty,
                    "spec",
                    findings=(
                        Finding(
                            "KV503",
                            f"kvlint does not read this {doc.kind}'s engine settings: its inline Helm values, read as the "
                            f"values of {_chart_words(src)}, build no pod: {reason}"
                            + (
                                f" (kvlint cannot see {', '.join(src.unseen)}, which may set it)"
                                if src.unseen
                                else ""
                            ),
                            (why.loc if why is not None else None) or src.at or doc.loc,
                            fix=f"lint what it deploys: helm template {shell_word(src.release)} CHART -f VALUES | kvlint check -",
                            severity="info",
                            mark=Mark.SETTINGS_NOT_READ,
                        ),
                    ),
                )
            )
            continue
        ws = [
            replace(
                w,
                name=(src.release + w.name[len("RELEASE") :])
                if src.chart != "app-template" and (w.name.startswith("RELEASE-") or w.name == "RELEASE")
                else w.name,
                namespace=w.namespace or namespace,
                findings=tuple(f for f in w.findings if f.mark is not Mark.BUILT_FROM_VALUES),
            )
            for w in ws
        ]
        ws[0] = replace(ws[0], findings=(_note(doc, src, len(ws)), *ws[0].findings))
        out.extend(ws)
    return out


def _local_workloads(
    doc: Document, find: FindWorkloads, names_engine: NamesEngine, max_bytes: int | None
) -> list[Workload]:
    """The workloads of the charts of this checkout ``doc`` deploys, rendered with helm
    (:mod:`kvlint.workloads.gitops_local`, output capped at ``max_bytes``, default
    :data:`kvlint.load.DEFAULT_MAX_FILE_BYTES`), and one note per source whose path was refused."""
    from kvlint.load import DEFAULT_MAX_FILE_BYTES
    from kvlint.workloads.gitops_local import (
        chart_names_engine,
        local_charts,
        not_rendered,
        render_local_chart,
    )

    charts, refused = local_charts(doc)
    if not charts and not refused:
        return []
    named = gitops_names_engine(doc, names_engine)
    out: list[Workload] = []
    for lc in charts:
        if named or chart_names_engine(
            lc.chart, names_engine
        ):  # a chart serving no LLM is none of kvlint's business
            out.extend(render_local_chart(doc, lc, max_bytes or DEFAULT_MAX_FILE_BYTES, find))
    if named:
        out.extend(not_rendered(doc, f"the chart it names is not rendered: {why}") for why in refused)
    return out


def _namespace(doc: Document) -> str | None:
    """The namespace the chart is installed in: Argo CD ``destination.namespace``, Flux ``targetNamespace``,
    else the object's own."""
    spec = get_in(doc.data, "spec")
    if doc.kind == "ApplicationSet":
        spec = get_in(spec, "template", "spec")
    ns = (
        get_in(spec, "targetNamespace")
        if doc.kind == "HelmRelease"
        else get_in(spec, "destination", "namespace")
    )
    return _text(ns) or doc.namespace
