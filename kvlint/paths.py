"""Whether a path, its symbolic links resolved, lies in a directory: the one such test of every reader that
must not follow a link out of the tree it was given (a chart, a kustomization, a walked directory, a checkout,
a pulled model's directory). Importing nothing of kvlint, so the loader, the renderer and the model readers
share it without importing each other.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

__all__ = ["missing_path", "real_inside", "real_path_inside", "shown_path", "walk_tree"]

#: A URL's scheme and ``://`` (RFC 3986 section 3.1): ``https://``, ``oci://``, ``git+ssh://``.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,31}://")


def missing_path(path: str) -> str:
    """What ``kvlint check`` says of an input ``path`` that does not exist (a usage error, exit status 2):
    ``PATH: no such file or directory``, and for a URL (``https://...``, a Helm chart's ``oci://...``) that kvlint
    reads local files only, with the commands that fetch it first. kvlint never fetches a manifest: what it lints
    is what the user has, and a URL would make every run depend on the network."""
    said = f"{path}: no such file or directory"
    if not _URL.match(path):
        return said
    import shlex

    if path[:6].lower() == "oci://":
        how = f"render the chart and pipe it: helm template RELEASE {shlex.quote(path)} | kvlint check -"
    else:
        how = (
            f"download it and pipe it: curl -fsSL {shlex.quote(path)} | kvlint check --stdin-filename NAME.yaml - (or, for a "
            "chart, helm template RELEASE CHART | kvlint check -)"
        )
    return f"{said}: kvlint check reads local files and directories, not URLs; {how}"


def shown_path(path: str) -> str:
    """``path`` as every report names a file: without ``.`` components or doubled separators, as ruff prints the
    files of ``ruff check .`` (``apps/x.yaml``, not ``./apps/x.yaml``) and as rendered files were already named
    (``os.path.normpath`` of the chart's or kustomization's directory joined with the file). ``..`` components
    are kept, unlike ``os.path.normpath``: ``link/../x.yaml`` through a symbolic link ``link`` is not ``x.yaml``.
    ``.`` itself, ``-`` (standard input) and an empty path are returned unchanged."""
    if path in ("", ".", "-") or ("." not in path and os.sep * 2 not in path):
        return path
    kept = [p for p in path.split(os.sep) if p not in ("", ".")]
    out = os.sep.join(kept)
    if path.startswith(os.sep):
        return os.sep + out
    return out or "."


def real_path_inside(
    path: str | os.PathLike[str],
    directory: str | os.PathLike[str],
    *,
    below: bool = False,
    resolved: bool = False,
) -> bool:
    """Whether the real path of ``path`` (``os.path.realpath``: every symbolic link on it resolved) is the real
    path of ``directory`` or below it; only below it when ``below`` (a file of the directory: a link that
    resolves to the directory itself is not one of its files). ``resolved``: ``directory`` is a real path
    already (a walk resolves it once, not once a file); a relative ``directory`` is resolved from the working
    directory all the same, and a trailing separator is not part of it. The test is by whole components:
    ``/srv/chart-x`` is not in ``/srv/chart``; everything is in ``/``.

    Raises:
        ValueError: a path holding a NUL (as ``os.path.realpath``); callers that take such a path as outside
            catch it.
    """
    real = os.path.realpath(path)
    root = os.fspath(directory) if resolved else os.path.realpath(directory)
    if not os.path.isabs(root):
        # a relative root is resolved from the working directory, ``resolved`` or not: read as it is, ``""`` was
        # the prefix ``/`` (every path inside) and ``chart`` held not even itself
        root = os.path.realpath(root)
    return real_inside(real, root, below=below)


def real_inside(real: str, root: str, *, below: bool = False) -> bool:
    """The test of :func:`real_path_inside` on two absolute real paths, as text (no lookup on disk: a walk that
    resolved a path for its own use does not resolve it again, a lookup a component): ``real`` is ``root``
    (unless ``below``) or below it by whole components."""
    stem = root.rstrip(os.sep)  # ``/srv/chart/`` is ``/srv/chart``; ``/`` is the empty stem
    if real == (stem or os.sep):
        return not below
    return real.startswith(stem + os.sep)


def walk_tree(
    top: str, onerror: Callable[[OSError], object] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top, onerror=onerror)`` (top-down, links to directories not followed, ``dirs`` pruned or
    reordered in place by the caller), without recursion: Python 3.11's ``os.walk`` recurses once a directory
    level, so a tree 1,000 directories deep (one-letter names: a 2 KB path, which git checks out) raised
    RecursionError out of every walk. The order and the errors handed to ``onerror`` are os.walk's
    (CPython 3.12 ``Lib/os.py`` ``walk``, which is iterative so)."""
    stack = [top]
    while stack:
        here = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        try:
            entries = os.scandir(here)
        except OSError as error:
            if onerror is not None:
                onerror(error)
            continue
        failed = False
        with entries:
            while True:
                try:
                    entry = next(entries)
                except StopIteration:
                    break
                except OSError as error:
                    if onerror is not None:
                        onerror(error)
                    failed = True
                    break
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                (dirs if is_dir else files).append(entry.name)
        if failed:
            continue
        yield here, dirs, files
        for name in reversed(dirs):
            path = os.path.join(here, name)
            if not os.path.islink(path):
                stack.append(path)
