"""Where a finding's value was set before rendering: the Helm values line, the kustomize patch.

Rendering moves the cause of a finding away from the line kvlint reports: in a chart, the template line
``- --max-model-len={{ .Values.maxModelLen }}`` stays the same while a pull request edits ``values.yaml``;
in a kustomization, a JSON 6902 patch in the overlay replaces a value kvlint locates on the base
resource. :func:`attach_sources` fills :attr:`Diagnostic.sources <kvlint.types.Diagnostic.sources>` with
those places, so the GitHub Action can annotate the line a pull request changed:

* **Helm** (a finding on a template file ``CHART/templates/...`` of a chart with ``Chart.yaml``): the
  ``.Values.a.b`` references of that template line and of the ``with``/``range`` blocks around it are
  looked up in the chart's ``values.yaml`` and in every ``--helm-values`` file; each reference gives the
  line of its key and of every scalar below it (``args:`` and each of its items).
* **Kustomize** (a kustomization directory among the paths): every JSON 6902 patch of the tree
  (``patchesJson6902`` entries and ``patches`` entries whose file or inline text is a list of
  operations) whose ``target`` names the finding's object (same kind; name equal to the object's name
  or to it without the overlay's ``namePrefix``/``nameSuffix``) gives the line of each operation.
  Strategic-merge patches need nothing here: kvlint already locates their values in the patch
  (:mod:`kvlint.render`).

The sources are candidates, not a proof of causation: the Action annotates the first one the pull
request changed (:mod:`kvlint.action`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from kvlint import filecache
from kvlint.options import Options
from kvlint.paths import real_path_inside
from kvlint.source import LDict, LList, Loc
from kvlint.types import CheckResult, Diagnostic

__all__ = [
    "MAX_SOURCES",
    "attach_sources",
    "clear_file_cache",
    "helm_sources",
    "json6902_patches",
    "read_yaml_tree",
    "values_refs",
]

_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z_][\w-]*)+)")
# The opening of a with/range/if action; its end is the first ``}}`` on the line where the keyword ends (found by
# :func:`_block_opens` with str.find: the lazy regex ``{{-?\s*(with|range|if)\b(.*?)-?}}`` rescanned the rest of
# the line from every ``{{ if`` when no ``}}`` followed, quadratic on a long line of them).
_BLOCK_OPEN = re.compile(r"{{-?\s*(with|range|if)\b")
_BLOCK_END = re.compile(r"{{-?\s*end\b")


def _block_opens(text: str) -> list[tuple[str, str]]:
    """``(keyword, expression)`` of each ``{{ with|range|if EXPRESSION }}`` action of ``text`` (a ``-`` before
    the ``}}`` is not part of the expression): ``re.findall(r"{{-?\\s*(with|range|if)\\b(.*?)-?}}", text)``, in
    linear time."""
    out: list[tuple[str, str]] = []
    pos = 0
    eol = -1  # end of the line where the last keyword ended
    dead = -1  # no ``}}`` from here to eol
    while True:
        i = text.find("{{", pos)
        if i < 0:
            return out
        m = _BLOCK_OPEN.match(text, i)
        if m is None:
            pos = i + 1
            continue
        lo = m.end()
        if lo > eol:
            eol = text.find("\n", lo)
            eol = len(text) if eol < 0 else eol
            dead = -1
        close = -1 if 0 <= dead <= lo else text.find("}}", lo, eol)
        if close < 0:
            dead = lo if dead < 0 else min(dead, lo)
            pos = i + 1
            continue
        hi = close - 1 if close > lo and text[close - 1] == "-" else close
        out.append((m.group(1), text[lo:hi]))
        pos = close + 2


def values_refs(template_lines: Sequence[str], line: int) -> list[tuple[str, ...]]:
    """Key paths (``("image", "tag")``) of the ``.Values`` references on 1-based ``line`` of a template and
    of the ``with``/``range``/``if`` blocks enclosing it, innermost first. Never raises."""
    if not 1 <= line <= len(template_lines):
        return []
    refs = [tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(template_lines[line - 1])]
    depth = 0
    for text in reversed(template_lines[: line - 1]):
        ends = len(_BLOCK_END.findall(text))
        opens = _block_opens(text)
        depth += ends
        for kind, expr in reversed(opens):
            if depth:
                depth -= 1
                continue
            if kind in ("with", "range"):
                refs += [tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(expr)]
    return list(dict.fromkeys(refs))


class ValuesRefTable:
    """:func:`values_refs` for every line of one template, from one pass over its lines (``values_refs`` reads
    the lines above its line again at each call: a template of 10^4 ``include`` lines was read 10^4 times over).

    Equal to ``values_refs(template_lines, line)`` for every line: the ``with``/``range``/``if`` blocks still open
    before a line are kept as a linked stack, a line's openings pushed and then its ``end`` actions popping the
    latest first (the backward scan's matching of ends to openings), each entry pointing at the nearest entry
    below it that names a ``.Values`` path, so a query walks only the blocks that name one."""

    def __init__(self, template_lines: Sequence[str]) -> None:
        self._lines = template_lines
        # per 0-based line index: the innermost open block naming a .Values path before that line, as a node
        # (refs of its expression, the next such node below, for a ``range`` the separators above its line, else -1)
        # or None
        heads: list[tuple[tuple[tuple[str, ...], ...], Any, int] | None] = []
        # per 0-based line index: how many ``---`` document separator lines are above it
        seps: list[int] = []
        # the whole stack: (node naming a path at or below this entry, entry below)
        stack: tuple[Any, Any] | None = None
        count = 0
        for text in template_lines:
            heads.append(stack[0] if stack is not None else None)
            seps.append(count)
            count += text.strip() == "---"
            for kind, expr in _block_opens(text):
                below = stack[0] if stack is not None else None
                refs = (
                    tuple(tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(expr))
                    if kind in ("with", "range")
                    else ()
                )
                stack = ((refs, below, seps[-1] if kind == "range" else -1) if refs else below, stack)
            for _ in range(len(_BLOCK_END.findall(text))):
                if stack is None:
                    break
                stack = stack[1]
        self._heads = heads
        self._seps = seps

    def refs(self, line: int, limit: int | None = None) -> list[tuple[str, ...]] | None:
        """``values_refs(template_lines, line)``; None when the enclosing blocks name more than ``limit`` paths
        (a caller bounding its work)."""
        if not 1 <= line <= len(self._lines):
            return []
        refs = [tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(self._lines[line - 1])]
        node = self._heads[line - 1]
        while node is not None:
            refs += node[0]
            if limit is not None and len(refs) > limit:
                return None
            node = node[1]
        return list(dict.fromkeys(refs))

    def ranged(self, line: int) -> frozenset[tuple[str, ...]]:
        """The paths of :meth:`refs` that a ``range`` block enclosing ``line`` iterates over writing a document per
        item (``{{ range $name, $m := .Values.catalog }}``: ``("catalog",)``, when a ``---`` line lies between the
        ``range`` and ``line``) and that ``line`` itself does not name. A ``range`` inside one document (a list of
        ``env`` entries) is not one: the document's object does not tell its item."""
        if not 1 <= line <= len(self._lines):
            return frozenset()
        out: set[tuple[str, ...]] = set()
        node = self._heads[line - 1]
        while node is not None:
            if 0 <= node[2] < self._seps[line - 1]:
                out.update(node[0])
            node = node[1]
        if out:
            out.difference_update(
                tuple(m.group(1)[1:].split(".")) for m in _VALUES_REF.finditer(self._lines[line - 1])
            )
        return frozenset(out)


@lru_cache(maxsize=64)
def _load_yaml(path: str, mtime: float) -> Any:
    """The first document of the YAML file at ``path``, or None: a regular file of at most
    :data:`kvlint.load.DEFAULT_MAX_FILE_BYTES` only (a patch path is written in a kustomization: ``/dev/zero``
    was read until memory ran out, a named pipe blocked the run for ever)."""
    from kvlint.load import DEFAULT_MAX_FILE_BYTES, load_text, read_file

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > DEFAULT_MAX_FILE_BYTES:
            return None
        data = read_file(path, st.st_size, DEFAULT_MAX_FILE_BYTES)
    except OSError:
        return None
    if len(data) > DEFAULT_MAX_FILE_BYTES:
        return None
    loaded = load_text(data, path)
    return loaded.documents[0].data if loaded.documents else None


def read_yaml_tree(path: str) -> Any:
    """The first document of the YAML file at ``path`` with its positions (:class:`~kvlint.source.LDict`,
    :class:`~kvlint.source.LList`), as :func:`_load_yaml` reads it (a regular file of at most
    :data:`kvlint.load.DEFAULT_MAX_FILE_BYTES`; kept while its modification time is the same): a chart's values
    file, a kustomization or one of its patches. None when it cannot be read or holds no document."""
    try:
        return _load_yaml(path, os.path.getmtime(path))
    except OSError:
        return None


def _leaf_locs(node: Any) -> list[Loc]:
    out: list[Loc] = []
    if isinstance(node, LDict):
        for k, v in node.items():
            if k in node.key_locs:
                out.append(node.key_locs[k])
            if isinstance(v, (LDict, LList)):
                out += _leaf_locs(v)
            elif k in node.locs:
                out.append(node.locs[k])
    elif isinstance(node, LList):
        for i, v in enumerate(node):
            if isinstance(v, (LDict, LList)):
                out += _leaf_locs(v)
            elif i < len(node.locs):
                out.append(node.locs[i])
    return out


def _lookup(data: Any, keys: tuple[str, ...]) -> list[Loc]:
    """Locations of ``keys`` in a values tree: the key's line and every scalar below it."""
    node = data
    for i, k in enumerate(keys):
        if not isinstance(node, LDict) or k not in node:
            return []
        if i == len(keys) - 1:
            locs = [node.key_locs[k]] if k in node.key_locs else []
            v = node[k]
            if isinstance(v, (LDict, LList)):
                return locs + _leaf_locs(v)
            return locs + ([node.locs[k]] if k in node.locs else [])
        node = node[k]
    return []


#: Most sources one finding lists; past it the diagnostic keeps the first ones and counts the rest
#: (:attr:`Diagnostic.sources_more <kvlint.types.Diagnostic.sources_more>`, "and N more"). One item of a serving
#: chart's model list (production-stack's ``modelSpec`` entry, a KubeAI catalogue model) has fewer scalars.
MAX_SOURCES = 64
#: Longest object name whose word runs :func:`_items_of` looks up (Kubernetes names are at most 253 characters).
_MAX_NAME = 253
_NAME_SEPARATORS = re.compile(r"[-._]")


def _node(data: Any, keys: tuple[str, ...]) -> Any:
    """The value at ``keys`` in a values tree, or None."""
    node = data
    for k in keys:
        if not isinstance(node, LDict) or k not in node:
            return None
        node = node[k]
    return node


def _item_locs(node: Any, item: str | int) -> list[Loc]:
    """Locations of one item of a ``range``'d values node: a map entry's key line and every scalar below it, a
    list item's scalars (or the item itself when it is a scalar)."""
    if isinstance(node, LDict):
        if item not in node:
            return []
        locs = [node.key_locs[item]] if item in node.key_locs else []
        v = node[item]
        if isinstance(v, (LDict, LList)):
            return locs + _leaf_locs(v)
        return locs + ([node.locs[item]] if item in node.locs else [])
    if not isinstance(node, LList) or not isinstance(item, int) or not 0 <= item < len(node):
        return []
    v = node[item]
    if isinstance(v, (LDict, LList)):
        return _leaf_locs(v)
    return [node.locs[item]] if item < len(node.locs) else []


@lru_cache(maxsize=256)
def _item_labels(values_file: str, keys: tuple[str, ...]) -> tuple[dict[str, str | int], int]:
    """The names that tell the items of the values node at ``keys`` apart, lower-cased, each to its item: a map's
    keys (what ``{{ range $name, $m := ... }}`` binds to ``$name``), a list item's ``name`` (production-stack's
    ``modelSpec``), a list's scalar items. A name two items share is dropped: it tells neither. With the length
    of the longest name. Built once a run per values file and path (:func:`clear_file_cache`)."""
    node = _node(read_yaml_tree(values_file), keys)
    found: dict[str, str | int] = {}
    shared: set[str] = set()

    def add(label: Any, item: str | int) -> None:
        if not isinstance(label, (str, int)) or isinstance(label, bool):
            return
        text = str(label).lower()
        if not text:
            return
        if text in found and found[text] != item:
            shared.add(text)
        found[text] = item

    if isinstance(node, LDict):
        for k in node:
            add(k, k)
    elif isinstance(node, LList):
        for i, v in enumerate(node):
            add(v.get("name") if isinstance(v, LDict) else v, i)
    for text in shared:
        del found[text]
    return found, max(map(len, found), default=0)


#: In a choice of items (:func:`_ranged_sources`): the item was told, and this values file does not have it.
_NOT_HERE: tuple[()] = ()


def _items_of(files: Sequence[str], keys: tuple[str, ...], name: str) -> tuple[Any, ...] | None:
    """Which item of the values node at ``keys`` wrote the object named ``name``, in each of the values ``files``
    (the item's map key or list index, or :data:`_NOT_HERE` when that file has no such item), told by the name:
    the item's label (:func:`_item_labels`) is the longest run of ``name``'s ``-``/``.``/``_``-separated words
    (``rel-llama3-deployment-vllm``: the model named ``llama3``; ``llama-2-engine``: ``llama-2``, not ``llama``),
    looked for in every file's labels (helm merges a map's keys across the values files). None when no label is
    such a run, or two different labels are equally long runs, or ``name`` is longer than a Kubernetes name.

    Helm's ``range`` records nothing in what it writes, and by the time sources are attached (after the analysis,
    in the process that collects every file's findings) a finding keeps only its template line and its object:
    the object's name is what is left of the iteration. Charts name each document after its item (KubeAI's
    ``name: {{ $name }}``; production-stack's ``"{{ .Release.Name }}-{{$modelSpec.name}}-deployment-vllm"``).
    The ordinal of the document would not do: those charts skip items (``{{ if $model.enabled }}``)."""
    if not name or len(name) > _MAX_NAME:
        return None
    labelled = [_item_labels(f, keys) for f in files]
    tables = [t for t, _ in labelled]
    longest = max(n for _, n in labelled)
    if not longest:
        return None
    text = name.lower()
    bounds = [0] + [m.end() for m in _NAME_SEPARATORS.finditer(text)]
    ends = [m.start() for m in _NAME_SEPARATORS.finditer(text)] + [len(text)]
    best = ""
    tie = False
    for a in (
        bounds
    ):  # runs no longer than the longest label: a name of 253 one-letter words is not 8,000 look-ups
        for b in ends:
            if b - a > longest:
                break
            if b <= a or b - a < len(best):
                continue
            run = text[a:b]
            if run == best or not any(run in t for t in tables):
                continue
            tie = b - a == len(best)
            best = run
    if not best or tie:
        return None
    return tuple(t.get(best, _NOT_HERE) for t in tables)


def _chart_of(template: str) -> str | None:
    parts = os.path.normpath(template).split(os.sep)
    if "templates" not in parts:
        return None
    i = len(parts) - 1 - parts[::-1].index("templates")
    chart = os.sep.join(parts[:i]) or "."
    return chart if os.path.isfile(os.path.join(chart, "Chart.yaml")) else None


@lru_cache(maxsize=256)
def _template_lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read().split("\n"))
    except OSError:
        return ()


@lru_cache(maxsize=256)
def _ref_table(path: str) -> ValuesRefTable:
    """:class:`ValuesRefTable` of the template at ``path``, built once a run (:func:`clear_file_cache`)."""
    return ValuesRefTable(_template_lines(path))


@filecache.register
def clear_file_cache() -> None:
    """Forget the template lines :func:`_template_lines` kept by path, their :func:`_ref_table` and the
    :func:`_line_sources` found from them (registered with :mod:`kvlint.filecache`: emptied where a run starts): a
    template or values file edited between two runs of one process is read again."""
    _template_lines.cache_clear()
    _ref_table.cache_clear()
    _line_sources.cache_clear()
    _item_labels.cache_clear()
    _ranged_sources.cache_clear()


def helm_sources(loc: Loc, values_files: Sequence[str] = (), object_name: str = "") -> list[Loc]:
    """Values-file locations feeding the template line at ``loc`` (see the module docstring); [] when
    ``loc`` is not in a chart's ``templates/`` or references no value.

    Below a ``{{ range }}`` over a ``.Values`` list or map, the path ranged over gives its key line and the
    locations of the one item that wrote the object named ``object_name`` (the object's ``metadata.name``, told
    by :func:`_items_of`), not of every item; when no item can be told, every item's (the list is then cut at
    :data:`MAX_SOURCES` where a finding is reported, :func:`attach_sources`)."""
    return list(_sources_of(loc.file, loc.line, tuple(values_files), object_name))


def _sources_of(file: str, line: int, values_files: tuple[str, ...], object_name: str) -> tuple[Loc, ...]:
    """:func:`helm_sources`: :func:`_line_sources` for a line no ``range`` over a ``.Values`` path encloses, else
    :func:`_ranged_sources` of the items told by the object's name (resolved per finding by dictionary look-ups
    of the name's word runs, the sources themselves built once per line and choice of items)."""
    chart = _chart_of(file)
    if chart is None:
        return ()
    table = _ref_table(file)
    ranged = table.ranged(line)
    if not ranged:
        return _line_sources(file, line, values_files)
    refs = table.refs(line) or []
    files = _values_paths(chart, values_files)
    items = {ref: _items_of(files, ref, object_name) for ref in refs if ref in ranged}
    choice = tuple(
        None if found is None else found[k]
        for k in range(len(files))
        for found in (items.get(ref) for ref in refs)
    )
    return _ranged_sources(file, line, values_files, choice)


def _values_paths(chart: str, values_files: tuple[str, ...]) -> list[str]:
    return [os.path.join(chart, "values.yaml"), *values_files]


@lru_cache(maxsize=4096)
def _ranged_sources(
    file: str, line: int, values_files: tuple[str, ...], choice: tuple[str | int | None, ...]
) -> tuple[Loc, ...]:
    """:func:`_line_sources` of a line below a ``range``, where ``choice`` gives, for each values file and each
    path of the line in :func:`_line_sources`'s order, the item of the ranged path that wrote the finding's
    object (None: not ranged over, or no item told; :data:`_NOT_HERE`: told, and not in this file): such a path
    gives its key line and that item's locations (nothing for :data:`_NOT_HERE`), the others their key and every
    scalar below it as before. Found once a run per line and choice, so the findings of one item share one
    tuple."""
    chart = _chart_of(file)
    if chart is None:
        return ()
    refs = _ref_table(file).refs(line) or []
    out: list[Loc] = []
    k = 0
    for f in _values_paths(chart, values_files):
        data = read_yaml_tree(f) if os.path.isfile(f) else None
        for ref in refs:
            item = choice[k] if k < len(choice) else None
            k += 1
            if data is None or item == _NOT_HERE:
                continue
            node = _node(data, ref) if item is not None else None
            if isinstance(node, (LDict, LList)):
                parent = _node(data, ref[:-1])
                if isinstance(parent, LDict) and ref[-1] in parent.key_locs:
                    out.append(parent.key_locs[ref[-1]])
                out += _item_locs(node, item)  # type: ignore[arg-type]
            else:
                out += _lookup(data, ref)
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=4096)
def _line_sources(file: str, line: int, values_files: tuple[str, ...]) -> tuple[Loc, ...]:
    """:func:`helm_sources` of line ``line`` of template ``file``, found once a run for all the findings on that
    line: the findings on the documents one ``range`` wrote share their template lines, and each finding looked up
    the ``.Values`` paths of its line again (below a ``range`` over a list of N models, every value of the N
    models: N x N locations for N documents), after reading every template line above it for the enclosing blocks
    (:func:`values_refs`; :class:`ValuesRefTable` reads them once)."""
    chart = _chart_of(file)
    if chart is None:
        return ()
    refs = _ref_table(file).refs(line)
    if not refs:
        return ()
    out: list[Loc] = []
    for f in _values_paths(chart, values_files):
        data = read_yaml_tree(f) if os.path.isfile(f) else None
        if data is None:
            continue
        for ref in refs:
            out += _lookup(data, ref)
    return tuple(dict.fromkeys(out))


def _kustomization(directory: str) -> str | None:
    from kvlint.load import KUSTOMIZATION_FILES

    for name in KUSTOMIZATION_FILES:
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            return p
    return None


def json6902_patches(directory: str) -> list[tuple[str, str, list[Loc], str, str]]:
    """``(kind, name, operation locations, namePrefix, nameSuffix)`` of every JSON 6902 patch in the
    kustomization tree rooted at ``directory`` (resources that are directories are followed). Never raises:
    a field of the wrong type is skipped (the build itself reports it), and a patch file is read only when it
    lies inside its kustomization's directory, as kustomize's default load restrictor requires
    (``LoadRestrictionsRootOnly``), and is a regular file of bounded size (:func:`_load_yaml`)."""
    out: list[tuple[str, str, list[Loc], str, str]] = []
    seen: set[str] = set()
    todo: list[tuple[str, str, str]] = [(directory, "", "")]
    while todo:  # a work list, not recursion: a chain of a thousand nested bases is not a RecursionError
        d, prefix, suffix = todo.pop()
        kfile = _kustomization(d)
        real = os.path.realpath(d)
        if kfile is None or real in seen:
            continue
        seen.add(real)
        data = read_yaml_tree(kfile)
        if not isinstance(data, dict):
            continue
        prefix = _text(data.get("namePrefix")) + prefix
        suffix = suffix + _text(data.get("nameSuffix"))
        entries = [
            e for key in ("patchesJson6902", "patches") for e in _items(data.get(key)) if isinstance(e, dict)
        ]
        for e in entries:
            target = e.get("target")
            if not isinstance(target, dict) or not target.get("name"):
                continue
            ops: Any = None
            path = e.get("path")
            if isinstance(path, str) and path:
                full = os.path.join(d, path)
                try:
                    inside = real_path_inside(full, real, below=True, resolved=True)
                except ValueError:  # a NUL in the path: no file (the build reports the kustomization)
                    inside = False
                if inside:
                    ops = read_yaml_tree(full)
            elif isinstance(e.get("patch"), str):
                ops = _inline_ops(e, kfile)
            if isinstance(ops, LList) and ops and all(isinstance(o, dict) and "op" in o for o in ops):
                locs = [ops.locs[i] for i in range(len(ops)) if i < len(ops.locs)]
                out.append((_text(target.get("kind")), str(target["name"]), locs, prefix, suffix))
        subs = [os.path.join(d, r) for r in _items(data.get("resources")) if isinstance(r, str)]
        todo.extend((sub, prefix, suffix) for sub in reversed(subs) if os.path.isdir(sub))
    return out


def _items(value: Any) -> list[Any]:
    """``value`` when it is a list (a kustomization's list field), else [] (a field of another type)."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    """A kustomization's string field (``namePrefix``, a target's ``kind``): '' when missing or not a string."""
    return value if isinstance(value, str) else ""


def _inline_ops(entry: Any, kfile: str) -> Any:
    """An inline ``patch: |`` JSON 6902 list, with locations shifted to the kustomization file's lines."""
    from kvlint.load import load_text

    text = entry["patch"]
    loaded = load_text(text, kfile)
    if not loaded.documents:
        return None
    ops = loaded.documents[0].data
    base = entry.locs.get("patch") if isinstance(entry, LDict) else None
    if isinstance(ops, LList) and base is not None:
        shift = base.line  # a block scalar's text starts on the line after its key
        ops.locs = [Loc(kfile, loc.line + shift, loc.column) for loc in ops.locs]
    return ops


def _object_matches(obj: str, kind: str, name: str, prefix: str, suffix: str) -> bool:
    parts = obj.split("/")
    if len(parts) < 2 or (kind and parts[0] != kind):
        return False
    real = parts[-1]
    return real in (name, f"{prefix}{name}{suffix}")


def attach_sources(
    result: CheckResult, paths: Iterable[str], options: Options, walked: Iterable[str] = ()
) -> None:
    """Fill ``sources`` of the diagnostics in ``result`` (in place) for the inputs ``paths`` were; ``walked``: the
    kustomizations the run built that it met walking a directory of ``paths`` (:func:`kvlint.render.plan_walk`)."""
    from kvlint.load import is_kustomize_dir

    built = [path for path in paths if path != "-" and is_kustomize_dir(path)]
    patches = [p for path in dict.fromkeys([*built, *walked]) for p in json6902_patches(path)]
    values_files = tuple(options.helm_values)

    def with_sources(d: Diagnostic) -> Diagnostic:
        if d.loc is None:
            return d
        # distinct already: shared, not copied
        found = _sources_of(
            d.loc.file, d.loc.line, values_files, d.object.rsplit("/", 1)[-1] if d.object else ""
        )
        extra = [
            loc
            for kind, name, locs, prefix, suffix in patches
            if d.object and _object_matches(d.object, kind, name, prefix, suffix)
            for loc in locs
        ]
        if extra:
            found = tuple(dict.fromkeys((*found, *extra)))
        if len(found) > MAX_SOURCES:  # every item of a range no name told apart, a toYaml of a whole tree
            return replace(d, sources=found[:MAX_SOURCES], sources_more=len(found) - MAX_SOURCES)
        return replace(d, sources=found) if found else d

    from kvlint.diagstore import DiagnosticView

    if isinstance(result.diagnostics, DiagnosticView):  # a streamed run's findings: attached as they are read
        if patches or any(f and _chart_of(f) is not None for f in result.diagnostics.files()):
            result.diagnostics = result.diagnostics.mapped(with_sources)
        return
    result.diagnostics = [with_sources(d) for d in result.diagnostics]
