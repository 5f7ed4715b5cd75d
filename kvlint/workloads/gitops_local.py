"""Argo CD Applications and Flux HelmReleases whose chart is a directory of the same checkout: the chart is
rendered with kvlint's own ``helm template`` (:func:`kvlint.render.render_helm`: nothing fetched, output capped,
memory limited, links out of the chart refused), passed the values the way Argo CD or Flux passes them, and the
rendered pods are linted with findings mapped to the templates as for any chart named on the command line.

What counts as "the same checkout": the repository root is the nearest directory above the
Application/HelmRelease file holding ``.git``; the chart directory is the source's path joined to it, refused
when the path is absolute, climbs with ``..``, crosses a symbolic link or resolves outside the root. Nothing is
fetched: a chart of a Helm repository, an OCI registry or another repository stays "not read".

How the values are passed (later wins, as ``helm template`` applies ``-f`` files in order, then ``--set``):

* Argo CD (a source with ``path`` and no ``chart``): ``helm.valueFiles`` (relative to the chart directory;
  ``$ref/...`` files of another source are not read), then the inline ``helm.values`` string or
  ``helm.valuesObject`` (``valuesObject`` alone when both are set), then ``helm.parameters`` as ``--set``
  (``--set-string`` with ``forceString``). Argo CD user guide, "Helm"
  (https://argo-cd.readthedocs.io/en/stable/user-guide/helm/): "parameters > valuesObject > values >
  valueFiles > helm repository values.yaml"; argo-cd ``reposerver/repository/repository.go`` ``helmTemplate``
  writes the inline values to a file passed after the value files and adds the parameters as ``--set``.
* Flux (``chart.spec.chart`` a path such as ``./charts/x`` with a ``GitRepository`` source):
  ``chart.spec.valuesFiles`` (relative to the source's root; helm-controller documentation, "Chart
  template": they replace the chart's values.yaml unless it is listed), then ``spec.values``; ``valuesFrom``
  ConfigMaps and Secrets are not among the inputs and are said to be assumed empty.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kvlint import filecache
from kvlint.load import repository_root as _repository_root
from kvlint.paths import real_path_inside
from kvlint.source import LDict, LList, Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.workloads.base import get_in

__all__ = [
    "LocalChart",
    "chart_names_engine",
    "contained",
    "local_charts",
    "not_rendered",
    "render_local_chart",
    "render_scope",
    "repository_root",
]

#: The most value files and parameters passed to helm for one source. [assumed] hand-written sources set few.
MAX_VALUE_FILES = 64
MAX_PARAMETERS = 1024
#: The longest inline values passed (characters of YAML/JSON text). [assumed], as
#: :data:`kvlint.workloads.gitops.MAX_VALUES_CHARS`.
MAX_INLINE_CHARS = 1 << 20
#: The most charts of the checkout rendered for the GitOps objects of one file in a run. [assumed] a file
#: deploys a few; without a bound, a 15 KB file of 100 Applications with 10 sources each ran helm 1,000 times
#: (47 s), and each render may take up to :data:`kvlint.render.RENDER_TIMEOUT_S`. Counted per file, not per
#: run, so that ``--jobs`` does not change which are rendered; a file over ``kvlint.stream.SEGMENT_BYTES`` is
#: analysed in batches (about ``kvlint.stream.BATCH_BYTES`` each), which several jobs may take apart, so its
#: renders are counted per batch, each its share of the 64 (:func:`render_scope`), whatever ``--jobs`` (a 6 MB
#: file of 300 Applications rendered 64 charts with ``--jobs 1`` and 128 with ``--jobs 2``).
MAX_LOCAL_RENDERS = 64
_RENDERS: dict[tuple[str, int | None], int] = {}
#: (the batch being analysed, its share of the renders), or (None, MAX_LOCAL_RENDERS) for a whole file
_SCOPE: list[tuple[int | None, int]] = [(None, MAX_LOCAL_RENDERS)]


def render_scope(batch: int | None, batch_bytes: int = 0, file_bytes: int = 0) -> None:
    """Count the renders of the documents analysed next per ``batch`` of their file (the batch's first byte,
    :mod:`kvlint.stream`; about ``batch_bytes`` of a file of ``file_bytes``), each batch allowed its share of
    :data:`MAX_LOCAL_RENDERS` (at least one); None: per file, as a whole."""
    if batch is None or file_bytes <= 0:
        _SCOPE[0] = (None, MAX_LOCAL_RENDERS)
    else:
        _SCOPE[0] = (batch, max(1, MAX_LOCAL_RENDERS * batch_bytes // file_bytes))


@filecache.register
def _reset_renders() -> None:
    """A new run may render :data:`MAX_LOCAL_RENDERS` charts of each file again."""
    _RENDERS.clear()


@dataclass(frozen=True)
class LocalChart:
    """A chart directory of this checkout that a GitOps source deploys, with what helm is passed.

    ``chart`` the chart directory (the repository root joined to the source's path, as a path kvlint can
    print); ``label`` the path as written in the source; ``value_files`` the value files found in the tree, in
    the order passed; ``inline`` the inline values as YAML/JSON text (None when none); ``set_values``/
    ``set_strings`` the ``--set``/``--set-string`` words; ``unseen`` what kvlint cannot read (value files
    elsewhere, ConfigMaps, Secrets); ``at`` where the source names the chart."""

    chart: str
    label: str
    release: str
    value_files: tuple[str, ...]
    inline: str | None
    set_values: tuple[str, ...]
    set_strings: tuple[str, ...]
    unseen: tuple[str, ...]
    at: Loc | None


def repository_root(path: str) -> str | None:
    """The nearest directory at or above the directory of the file ``path`` that holds ``.git`` (a directory or
    a worktree's ``.git`` file), as written (:func:`kvlint.load.repository_root`), or None (standard input, a file
    outside any repository)."""
    if path == "-" or not os.path.isfile(path):
        return None
    return _repository_root(os.path.dirname(os.path.abspath(path)))


_MISSING = "no such path in this checkout"


def contained(root: str, rel: str, base: str = "") -> tuple[str | None, str | None]:
    """``(path, None)``: ``rel`` (relative to ``base``, itself relative to ``root``) names an existing entry
    inside ``root`` reached without a symbolic link; else ``(None, why)``. Refused: an absolute path, a ``..``
    component, a ``.git`` component (git's metadata, where a CI checkout keeps its credentials: not a file of the
    checkout), a NUL, a link on the way, a path resolving outside ``root``."""
    if not rel or "\x00" in rel or os.path.isabs(rel) or rel.startswith(("/", "\\")):
        return None, "an absolute or empty path"
    parts = [p for p in os.path.join(base, rel).replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None, "a path that climbs with '..'"
    if any(p.casefold() == ".git" for p in parts):
        return None, "a path into git's .git metadata, not the checkout's files"
    here = root
    for p in parts:
        here = os.path.join(here, p)
        if os.path.islink(here):
            return None, "a path through a symbolic link"
        if not os.path.lexists(here):
            return None, _MISSING
    if not real_path_inside(here, root):
        return None, "a path outside this checkout"  # pragma: no cover - links are refused above
    return here, None


def _text(v: Any) -> str | None:
    return str(v) if isinstance(v, (str, int, float)) and not isinstance(v, bool) and str(v) else None


def _plain(node: Any, depth: int = 0) -> Any:
    """``node`` as plain JSON-able data (keys as text; depth capped)."""
    if depth > 200:
        return None
    if isinstance(node, dict):
        return {str(k): _plain(v, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v, depth + 1) for v in node]
    if isinstance(node, (str, int, float, bool)) or node is None:
        return node
    return str(node)


def _set_word(name: str, value: Any) -> str:
    """``name=value`` for ``--set``, commas in the value escaped as Argo CD does (``cleanSetParameters``)."""
    text = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    out = []
    for i, ch in enumerate(text):
        out.append("\\," if ch == "," and (i == 0 or text[i - 1] != "\\") else ch)
    return f"{name}={''.join(out)}"


def _argo_local(doc: Document, src: Any, root: str) -> tuple[LocalChart | None, str | None]:
    if not isinstance(src, dict) or src.get("chart") or not isinstance(src.get("path"), str):
        return None, None
    rel = src["path"]
    chart, why = contained(root, rel)
    if chart is None:
        return None, None if why == _MISSING else f"its path {rel!r} is {why}"
    if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
        return None, None  # a directory of manifests or a kustomization: not a chart
    helm = src.get("helm") if isinstance(src.get("helm"), dict) else {}
    assert isinstance(helm, dict)
    unseen: list[str] = []
    files: list[str] = []
    vfs = helm.get("valueFiles")
    for f in (vfs if isinstance(vfs, list) else [])[:MAX_VALUE_FILES]:
        name = _text(f)
        if name is None:
            continue
        if name.startswith("$"):
            unseen.append(f"value file {name} (of another source)")
            continue
        found, why = contained(root, name, base=os.path.relpath(chart, root))
        if found is None or not os.path.isfile(found):
            unseen.append(f"value file {name} ({why or 'not a file'})")
            continue
        files.append(found)
    inline: str | None = None
    vo, vs = helm.get("valuesObject"), helm.get("values")
    if isinstance(vo, dict) and vo:
        inline = json.dumps(_plain(vo))
    elif isinstance(vs, str) and vs.strip():
        inline = vs
    sets: list[str] = []
    strings: list[str] = []
    params = helm.get("parameters")
    for p in (params if isinstance(params, list) else [])[:MAX_PARAMETERS]:
        name = p.get("name") if isinstance(p, dict) else None
        if not isinstance(name, str) or not name or "=" in name or "\x00" in name:
            continue
        (strings if p.get("forceString") is True else sets).append(_set_word(name, p.get("value")))
    release = _text(helm.get("releaseName")) or doc.name or "release"
    return LocalChart(
        chart,
        rel,
        release,
        tuple(files),
        inline,
        tuple(sets),
        tuple(strings),
        tuple(unseen),
        loc_of(src, "path"),
    ), None


def _flux_local(doc: Document, root: str) -> tuple[LocalChart | None, str | None]:
    spec = get_in(doc.data, "spec")
    cspec = get_in(spec, "chart", "spec")
    if not isinstance(spec, dict) or not isinstance(cspec, dict):
        return None, None
    rel = cspec.get("chart")
    source = cspec.get("sourceRef")
    if not isinstance(rel, str) or "/" not in rel:
        return None, None
    if not isinstance(source, dict) or source.get("kind") not in ("GitRepository", "Bucket"):
        return None, None
    chart, why = contained(root, rel)
    if chart is None:
        return None, None if why == _MISSING else f"its chart path {rel!r} is {why}"
    if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
        return None, None
    unseen: list[str] = []
    files: list[str] = []
    vfs = cspec.get("valuesFiles")
    for f in (vfs if isinstance(vfs, list) else [])[:MAX_VALUE_FILES]:
        name = _text(f)
        if name is None:
            continue
        found, why = contained(root, name)
        if found is None or not os.path.isfile(found):
            unseen.append(f"value file {name} ({why or 'not a file'})")
            continue
        files.append(found)
    refs = spec.get("valuesFrom")
    for r in refs if isinstance(refs, list) else []:
        if isinstance(r, dict):
            unseen.append(f"{_text(r.get('kind')) or 'ConfigMap'}/{_text(r.get('name')) or '?'}")
    v = spec.get("values")
    inline = json.dumps(_plain(v)) if isinstance(v, dict) and v else None
    release = _text(spec.get("releaseName"))
    if release is None:
        ns = _text(spec.get("targetNamespace"))
        release = f"{ns}-{doc.name}" if ns else doc.name or "release"
    return LocalChart(
        chart, rel, release, tuple(files), inline, (), (), tuple(unseen), loc_of(cspec, "chart")
    ), None


def local_charts(doc: Document) -> tuple[list[LocalChart], list[str]]:
    """The charts of this checkout the GitOps object ``doc`` deploys (:class:`LocalChart`), and why others
    that name a path were refused (a path out of the tree, a link). Empty when ``doc``'s file is in no
    repository (:func:`repository_root`)."""
    root = repository_root(doc.path)
    if root is None:
        return [], []
    found: list[LocalChart] = []
    refused: list[str] = []
    if doc.kind == "HelmRelease":
        lc, why = _flux_local(doc, root)
        if lc is not None:
            found.append(lc)
        if why:
            refused.append(why)
        return found, refused
    spec = get_in(doc.data, "spec")
    if doc.kind == "ApplicationSet":
        spec = get_in(spec, "template", "spec")
    if not isinstance(spec, dict):
        return [], []
    sources = spec.get("sources")
    for s in (sources if isinstance(sources, list) else [spec.get("source")])[:64]:
        lc, why = _argo_local(doc, s, root)
        if lc is not None:
            found.append(lc)
        if why:
            refused.append(why)
    return found, refused


#: What :func:`chart_names_engine` reads of each file, in bytes. [assumed] a chart's values.yaml names its image
#: near the top.
_ENGINE_SCAN_BYTES = 1 << 20


def chart_names_engine(chart: str, names_engine: Callable[[Any], bool]) -> bool:
    """The chart directory's ``Chart.yaml`` or ``values.yaml`` (regular files, the first
    :data:`_ENGINE_SCAN_BYTES` of each) names a serving engine (``vllm``, ``sglang``, ``text-generation``), in any
    case (``names_engine``, the workload finder's test): a chart worth rendering although the object deploying it
    names none."""
    for name in ("Chart.yaml", "values.yaml"):
        path = os.path.join(chart, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as fh:
                text = fh.read(_ENGINE_SCAN_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        if names_engine(text):
            return True
    return False


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def render_local_chart(
    doc: Document, lc: LocalChart, max_bytes: int, find: Callable[[Sequence[Document]], list[Workload]]
) -> list[Workload]:
    """The workloads of what ``helm template`` renders from the chart ``lc`` with its values (see the module
    docstring), each mapped to the chart's templates; the first carries a KV504 note at the source saying what
    was rendered and with what. When helm is not on PATH, refuses the chart, or renders no pod, one empty
    workload with a KV503 note saying so (and helm's own findings)."""
    from kvlint.render import (
        WALK_RENDER_BUDGET_S,
        WALK_RENDER_BYTES,
        gitops_render_budget,
        render_helm,
    )
    from kvlint.wording import shell_word

    passed = [f"value file {_shown(f)}" for f in lc.value_files]
    if lc.inline is not None:
        passed.append("the inline values")
    if lc.set_values or lc.set_strings:
        n = len(lc.set_values) + len(lc.set_strings)
        passed.append(f"{n} parameter{'s' if n != 1 else ''}")
    what = f"the chart {lc.label} of this checkout"
    unseen = (
        f"; kvlint cannot see {', '.join(lc.unseen)}: the result assumes {'it sets' if len(lc.unseen) == 1 else 'they set'} "
        "nothing"
        if lc.unseen
        else ""
    )
    at = lc.at or doc.loc
    if shutil.which("helm") is None:
        return [_empty(doc, at, f"{what} is not rendered: the helm binary is not on PATH{unseen}", ())]
    if lc.inline is not None and len(lc.inline) > MAX_INLINE_CHARS:
        return [
            _empty(doc, at, f"{what} is not rendered: its inline values are larger than kvlint passes", ())
        ]
    batch, allowed = _SCOPE[0]
    key = (doc.path, batch)
    done = _RENDERS.get(key, 0)
    if done >= allowed:
        share = (
            ""
            if batch is None
            else f" ({allowed} for each part of a file this large, as it is read in parts)"
        )
        return [
            _empty(
                doc,
                at,
                f"{what} is not rendered: kvlint renders at most {MAX_LOCAL_RENDERS} charts of this checkout for "
                f"the Argo CD/Flux objects of one file{share}",
                (),
            )
        ]
    timeout, sizes = gitops_render_budget(max_bytes)
    # (a str: the run's renders of what kvlint met, walks and these charts, spent their budget)
    if isinstance(timeout, str):
        spent = (
            f"had rendered for {WALK_RENDER_BUDGET_S} s together"
            if timeout == "time"
            else f"had printed {WALK_RENDER_BYTES * max_bytes} bytes together ({WALK_RENDER_BYTES} times the "
            f"{max_bytes}-byte limit, --max-file-bytes)"
        )
        why = (
            f"{what} is not rendered: the charts and overlays kvlint rendered on its own in this run (met in "
            f"directory walks, deployed from this checkout by Argo CD/Flux objects) {spent}, the most it spends on them"
        )
        stop = Finding(
            "KV001",
            why,
            at,
            fix=f"render the chart with the values it is deployed with and pipe it: helm template RELEASE "
            f"{shell_word(lc.chart)} -f VALUES | kvlint check -",
        )
        return [_empty(doc, at, why, (stop,))]
    _RENDERS[key] = done + 1
    tmp = tempfile.mkdtemp(prefix="kvlint-values-")
    try:
        values = list(lc.value_files)
        if lc.inline is not None:
            inline_file = os.path.join(tmp, "values.yaml")
            with open(inline_file, "w", encoding="utf-8") as fh:
                fh.write(lc.inline)
            values.append(inline_file)
        loaded = render_helm(
            lc.chart,
            values=values,
            set_values=lc.set_values,
            set_strings=lc.set_strings,
            release=lc.release,
            max_bytes=max_bytes,
            timeout=timeout,
            sizes=sizes,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if lc.inline is not None:
        loaded.findings[:] = [_inline_named(f, tmp) for f in loaded.findings]
    ws = find(loaded.documents)
    if not ws:
        why = (
            f"{what} was not rendered: {loaded.findings[0].message.splitlines()[0]}"
            if loaded.findings
            else f"{what} was rendered with helm template, and it renders no pod"
        )
        return [_empty(doc, at, f"{why}{unseen}", tuple(loaded.findings))]
    note = Finding(
        "KV504",
        f"rendered from this checkout: kvlint ran helm template on {what}"
        f"{' with ' + ', '.join(passed) if passed else ''} (in the order Argo CD/Flux passes them) as release "
        f"{lc.release}, and linted the {len(ws)} pod template{'s' if len(ws) != 1 else ''} it renders; this "
        f"assumes the source's repository and revision are this checkout{unseen}",
        at,
        fix="nothing to change if this checkout is what is deployed",
        severity="info",
    )
    ws[0] = replace(ws[0], findings=(note, *loaded.findings, *ws[0].findings))
    return ws


#: What the findings of a render call the file kvlint writes a source's inline values to for helm
INLINE_VALUES = "INLINE-VALUES.yaml"


def _inline_named(finding: Finding, tmp: str) -> Finding:
    """``finding`` of a render with the path of the temporary directory ``tmp`` (where the inline values were
    written, removed since) replaced by :data:`INLINE_VALUES`: helm quotes it when it cannot parse the values, and
    the fix's command passes it; a random, deleted path made each run's report differ and named no file."""
    spellings = sorted({os.path.join(tmp, "values.yaml"), os.path.join(os.path.realpath(tmp), "values.yaml")})
    message, fix = finding.message, finding.fix or ""
    for s in spellings[::-1]:
        message, fix = message.replace(s, INLINE_VALUES), fix.replace(s, INLINE_VALUES)
    if message == finding.message and fix == (finding.fix or ""):
        return finding
    if INLINE_VALUES in fix:
        fix += f" ({INLINE_VALUES}: the source's inline values, written to a file)"
    return replace(finding, message=message, fix=fix or finding.fix)


def not_rendered(doc: Document, why: str) -> Workload:
    """An empty workload of ``doc`` with a KV503 note: ``why`` its chart was not rendered."""
    at = loc_of(get_in(doc.data, "spec"), "source") or loc_of(doc.data, "spec") or doc.loc
    return _empty(doc, at, why, ())


def _empty(doc: Document, at: Loc, why: str, extra: tuple[Finding, ...]) -> Workload:
    """An empty workload of ``doc`` carrying the KV503 'not read' note ``why`` (and ``extra`` findings)."""
    ps = LDict(loc=at)
    ps["containers"] = LList([], loc=at)
    sub = Document(doc.path, doc.index, LDict(loc=at), at)
    return Workload(
        sub,
        doc.kind,
        doc.name,
        doc.namespace,
        ps,
        "spec",
        findings=(
            Finding(
                "KV503",
                f"kvlint does not read this {doc.kind}'s engine settings: {why}",
                at,
                fix="lint what it deploys: helm template RELEASE CHART -f VALUES | kvlint check -",
                severity="info",
                mark=Mark.SETTINGS_NOT_READ,
            ),
            *extra,
        ),
    )
