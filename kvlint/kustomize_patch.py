"""A kustomize strategic-merge patch linted alone: the one test, :func:`strategic_merge_patch_finding`, that the
renderer (its KV002) and the loader (no missing-apiVersion KV001 on a patch) both ask, kept apart from
:mod:`kvlint.render` so that :mod:`kvlint.load` need not import the renderer, which imports it."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterable

from kvlint import filecache
from kvlint.types import Document, Finding, LoadResult, Mark

#: the workload kinds whose pod template a kustomize strategic-merge patch typically overrides
_PATCHED_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet"})


#: The kustomization file names kustomize looks for in a directory (:data:`kvlint.load.KUSTOMIZATION_FILES`).
_KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: Directories above a file's own that are searched for a kustomization naming it as a patch (``patches/gpu.yaml``
#: beside ``kustomization.yaml`` is one level down; overlays keep their patches close).
_LEVELS_UP = 3
#: A kustomization larger than this is not read for its patches (kvlint's own kustomization files are a few
#: hundred bytes; ``--max-file-bytes`` bounds the one kvlint builds).
_MAX_KUSTOMIZATION_BYTES = 1 << 20
#: Fields of a kustomization that name patch files (kustomize ``api/types/kustomization.go``: ``Patches``, each a
#: ``Patch`` whose ``path`` is a file; ``PatchesStrategicMerge``, each a path or inline YAML; ``PatchesJson6902``).
_PATCH_FIELDS = ("patches", "patchesStrategicMerge", "patchesJson6902")


#: The real paths of the kustomization directories the current run built (:func:`kustomizations_built`,
#: :func:`kustomization_built`).
_BUILT: set[str] = set()

#: How a kustomization file is read: :func:`kvlint.load.read_file` and :func:`kvlint.load.load_text`, handed over
#: by :mod:`kvlint.load` when it is imported (:func:`use_loader`). The loader asks this module whether a document
#: is a patch (no missing-apiVersion KV001 on one), so this module must not import the loader back.
_READ: Callable[[str, int, int], bytes] | None = None
_LOAD: Callable[[bytes, str], LoadResult] | None = None


def use_loader(
    read_file: Callable[[str, int, int], bytes], load_text: Callable[[bytes, str], LoadResult]
) -> None:
    """Set the functions kustomization files are read and parsed with (:mod:`kvlint.load` calls this once, when
    it is imported): the same bounded, position-keeping loader every manifest goes through."""
    global _READ, _LOAD
    _READ, _LOAD = read_file, load_text
    _patches_of.cache_clear()
    _patching.cache_clear()
    _kustomizations_above.cache_clear()


def kustomizations_built(directories: Iterable[str]) -> None:
    """Record ``directories`` as the kustomization directories this run built, replacing the previous run's (
    :func:`kvlint.render.render_inputs` starts each run with none and adds each one as its build succeeds,
    :func:`kustomization_built`): a patch one of them lists is linted through that build, and its own KV002 is then
    an info. Known before the run's documents are analysed: the renders run in the main process, before the
    streaming run's workers are forked and before :func:`kvlint.render.load_inputs` reads its plain files'
    KV002s."""
    _BUILT.clear()
    for d in directories:
        kustomization_built(d)


def kustomization_built(directory: str) -> None:
    """Record that this run built the kustomization in ``directory`` (its build printed the objects kvlint lints;
    a build kustomize failed, kvlint refused or the walk's budget left out is not recorded: a patch it lists was
    linted through nothing, and keeps the warning a patch linted alone gets)."""
    try:
        _BUILT.add(os.path.realpath(directory))
    except (OSError, ValueError):
        return


def patching_kustomization(path: str) -> tuple[str, str] | None:
    """``(kustomization file, field)`` when a kustomization in the directory of ``path`` or up to
    :data:`_LEVELS_UP` directories above it (not above a repository's top, a directory holding ``.git``) lists the
    file ``path`` as a patch (:data:`_PATCH_FIELDS`, an entry whose path, joined to the kustomization's directory,
    is ``path`` by real path): kustomize reads it as a patch of the objects that kustomization builds, never as an
    object of its own. None otherwise, and for a path that is no regular file (``-``, a ``<label>`` such as the
    admission webhook's, which never looks at its own disk). Each kustomization is read once per content (by
    real path, size and modification time), up to :data:`_MAX_KUSTOMIZATION_BYTES`; never raises."""
    if not path or path == "-" or path.startswith("<"):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return _patching(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=1024)
def _patching(path: str, size: int, mtime_ns: int) -> tuple[str, str] | None:
    """:func:`patching_kustomization` of the regular file ``path`` (its ``size`` and ``mtime_ns`` key the memo:
    the streaming run asks it for each document of a file, a 20,000-document file 20,000 times; the kustomization
    it found is not in the key, so the memo is emptied where each run starts reading its inputs,
    :func:`_forget_patches` registered with :mod:`kvlint.filecache`: a kustomization edited between two runs of one
    process is read as it now is)."""
    try:
        real = os.path.realpath(path)
        shown = os.path.dirname(path) or "."  # the directory as the user spelt the path, for the message
        for level, name, kfile, ksize, kmtime in _kustomizations_above(
            os.path.dirname(os.path.abspath(path))
        ):
            field = _patches_of(kfile, ksize, kmtime).get(real)
            if field is not None:
                for _ in range(level):
                    shown = os.path.normpath(os.path.join(shown, os.pardir))
                return os.path.join(shown, name) if shown != "." else name, field
    except (OSError, ValueError):
        return None
    return None


@functools.lru_cache(maxsize=1024)
def _kustomizations_above(directory: str) -> tuple[tuple[int, str, str, int, int], ...]:
    """The kustomization files kustomize would read in the absolute ``directory`` and up to :data:`_LEVELS_UP`
    directories above it, nearest first, stopping at a repository's top (a directory holding ``.git``) or the
    root: ``(levels up, file name, real path, size, mtime_ns)`` each, one a directory (the first of its names that
    exists, as kustomize reads it), skipped when it is no regular file or larger than
    :data:`_MAX_KUSTOMIZATION_BYTES`. The same for every file of a directory, so asked once a directory a run
    (emptied with :func:`_patching`'s memo): a directory of a hundred manifests made twelve ``stat`` calls for each.
    Raises OSError or ValueError as the path functions do."""
    found: list[tuple[int, str, str, int, int]] = []
    for level in range(_LEVELS_UP + 1):
        for name in _KUSTOMIZATION_NAMES:
            kfile = os.path.join(directory, name)
            try:
                st = os.stat(kfile)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_size <= _MAX_KUSTOMIZATION_BYTES:
                found.append((level, name, os.path.realpath(kfile), st.st_size, st.st_mtime_ns))
            break  # kustomize reads the first of its names that exists
        if os.path.exists(os.path.join(directory, ".git")):
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return tuple(found)


@filecache.register
def _forget_patches() -> None:
    """Forget which files the previous run found a kustomization listing as patches (:func:`_patching`) and the
    kustomizations it found above each directory (:func:`_kustomizations_above`)."""
    _patching.cache_clear()
    _kustomizations_above.cache_clear()


@functools.lru_cache(maxsize=256)
def _patches_of(kfile: str, size: int, mtime_ns: int) -> dict[str, str]:
    """Real path -> field of each patch file the kustomization ``kfile`` (a real path) lists; ``size`` and
    ``mtime_ns`` key the memo to the file's content."""
    if _READ is None or _LOAD is None:  # kvlint.load not imported: nothing in this process loads manifests
        return {}
    try:
        data = _READ(kfile, size, _MAX_KUSTOMIZATION_BYTES)
    except OSError:
        return {}
    if len(data) > _MAX_KUSTOMIZATION_BYTES:
        return {}
    docs = _LOAD(data, kfile).documents
    spec = docs[0].data if docs else None
    if not isinstance(spec, dict):
        return {}
    here = os.path.dirname(kfile)
    out: dict[str, str] = {}
    for field in _PATCH_FIELDS:
        entries = spec.get(field)
        for entry in entries if isinstance(entries, list) else ():
            rel = entry.get("path") if isinstance(entry, dict) else entry
            if isinstance(rel, str) and rel.strip() and "\n" not in rel and "://" not in rel:
                try:
                    out.setdefault(os.path.realpath(os.path.join(here, rel.strip())), field)
                except (OSError, ValueError):
                    continue
    return out


def listed_patch_files(findings: Iterable[Finding]) -> set[str]:
    """The files of ``findings``' KV002s that a kustomization near them lists as a patch
    (:func:`patching_kustomization`): their documents are parts of the objects that kustomization builds, not
    objects, and are not analysed (a patch that sets a container's ``image`` was a workload with no model: KV503,
    and KV001 for the ``apiVersion`` a patch need not have)."""
    return {
        f.loc.file
        for f in findings
        if f.mark in (Mark.KUSTOMIZE_PATCH, Mark.KUSTOMIZE_PATCH_BUILT)
        and f.loc is not None
        and patching_kustomization(f.loc.file) is not None
    }


def strategic_merge_patch_finding(doc: Document) -> Finding | None:
    """KV002 for a Deployment, StatefulSet or DaemonSet that is a strategic-merge patch, not an object: it has no
    ``spec.selector`` and none of its pod template's containers has an ``image`` (the API server requires both;
    kustomize takes them from the base the patch applies to). Linted alone it showed no serving container and
    no finding -- a clean pass on a file that sets an engine's flags; what its kustomization builds is what runs.
    Also KV002 for any document of a file a kustomization near it lists as a patch (:func:`patching_kustomization`),
    with an ``image`` or an ``apiVersion`` or not: that kustomization names it. None for anything else."""
    data = doc.data
    listed = patching_kustomization(doc.path)
    if listed is not None:
        kfile, field = listed
        directory = os.path.dirname(kfile) or "."
        if os.path.realpath(directory) in _BUILT:
            return Finding(
                "KV002",
                f"this file is a kustomize patch that {kfile} applies ({field}); that kustomization is built in "
                "this run, so kvlint linted the patch through what it builds, not alone",
                doc.loc,
                severity="info",
                mark=Mark.KUSTOMIZE_PATCH_BUILT,
            )
        return Finding(
            "KV002",
            f"this file is a kustomize patch: {kfile} lists it under {field}, and kustomize applies it to the "
            "objects that kustomization builds; it is not an object of its own (linted alone, its fields would be "
            "read as a whole workload's), so kvlint lints what the kustomization builds, not the patch alone",
            doc.loc,
            fix=f"lint the kustomization directory that applies it: kvlint check {directory} (built with kubectl "
            f"kustomize), or kubectl kustomize {directory} | kvlint check -",
            mark=Mark.KUSTOMIZE_PATCH,
        )
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in _PATCHED_KINDS:  # a mapping or list kind is unhashable
        return None
    spec = data.get("spec")
    if not isinstance(spec, dict) or "selector" in spec:
        return None
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    containers = pod.get("containers") if isinstance(pod, dict) else None
    if not isinstance(containers, list) or not containers:
        return None
    if not all(isinstance(c, dict) and "image" not in c for c in containers):
        return None
    return Finding(
        "KV002",
        f"this {data['kind']} has no spec.selector and its containers no image, which the API server requires: it "
        "is a kustomize strategic-merge patch, and kvlint lints what a kustomization builds from it, not the patch "
        "alone",
        doc.loc,
        fix="name the kustomization directory that applies it: kvlint check DIR (built with kubectl kustomize), "
        "or kubectl kustomize DIR | kvlint check -",
        mark=Mark.KUSTOMIZE_PATCH,
    )
