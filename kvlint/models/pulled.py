"""A pulled model catalogue: the directory ``kvlint models pull`` writes into the user's repository.

kvlint reads it offline, like the bundled catalogue but before it (a pulled entry wins over a bundled one),
so that CI jobs and the admission webhook size models without the Hugging Face Hub, reproducibly: the
directory is a lock file of the model facts a repository's manifests need.

Where it is (:func:`find_catalogue`): the ``model_catalogue`` key of the ``.kvlint.yaml`` in force (relative
to that file), else ``.kvlint/models/`` beside that ``.kvlint.yaml``, else, with no ``.kvlint.yaml``, the
first ``.kvlint/models/`` directory found from the linted path upward. ``--model-dir DIR`` pointing at such a
directory reads it the same way.

Layout (one directory per model and requested revision; the file names are the Hub's)::

    .kvlint/models/
      meta-llama--Llama-3.1-8B-Instruct/          # no revision requested: the default branch
        config.json                               # byte for byte as on the Hub at `commit`
        hf_quant_config.json                      # when the repository has one (also quant_config.json,
                                                  # quantize_config.json)
        provenance.json                           # written by kvlint (see below)
      Qwen--Qwen2.5-7B-Instruct@v1.0/             # --revision v1.0 (or a manifest's --revision)

``provenance.json`` (:data:`FORMAT`): ``id`` as requested, ``hub_id`` as the Hub names it, ``revision``
requested (null = default branch), ``commit`` (the 40-hex sha every file was read at), ``endpoint``,
``pulled_at`` (UTC), ``files`` (name -> sha256 and size of each stored file), ``read`` (files read but not
stored, e.g. ``model.safetensors.index.json``, with their sha256, size and what was taken from them) and
``checkpoint``: the exact tensor bytes summed over the ``data_offsets`` spans of every safetensors header of
the checkpoint (the weights themselves are never downloaded), the parameter count per dtype and the files;
null with ``checkpoint_note`` when the repository has no safetensors.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kvlint.paths import real_path_inside

__all__ = [
    "DEFAULT_DIR",
    "FORMAT",
    "PROVENANCE",
    "PulledEntry",
    "clear",
    "entry_dir_name",
    "find_catalogue",
    "inside",
    "is_catalogue",
    "load_entries",
    "checkpoint_source",
    "lookup",
    "verify",
]

#: the catalogue directory beside a ``.kvlint.yaml`` when its ``model_catalogue`` key does not name one.
DEFAULT_DIR = os.path.join(".kvlint", "models")
#: the provenance file of each entry and the value of its ``format`` key.
PROVENANCE = "provenance.json"
FORMAT = "kvlint-pulled-model/1"

_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_memo: dict[str, tuple[PulledEntry, ...]] = {}


@dataclass(frozen=True)
class PulledEntry:
    """One pulled model at one revision.

    Attributes:
        path: the entry's directory.
        id: the model id as requested (``org/name``).
        revision: the revision requested (branch, tag or commit), None for the default branch.
        commit: the commit sha the files were read at.
        pulled_at: UTC date and time of the pull (ISO 8601).
        files: stored file name -> ``{"sha256": hex, "size": bytes}``.
        checkpoint: ``{"bytes", "parameters", "parameters_by_dtype", "files", "tensors", "method"}`` or None.
        raw: the whole ``provenance.json``.
    """

    path: Path
    id: str
    revision: str | None
    commit: str
    pulled_at: str
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    checkpoint: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``org/name@revision (commit 0123456789ab)``, for messages."""
        rev = f"@{self.revision}" if self.revision else ""
        return f"{self.id}{rev} (commit {self.commit[:12]})"

    def matches(self, ref: str, revision: str | None) -> bool:
        """Whether this entry answers ``ref`` (case-insensitive, as the Hub) at ``revision``: the same requested
        revision, or a commit sha (7 to 40 hex digits) this entry was read at."""
        if ref.strip().strip("/").lower() != self.id.lower():
            return False
        if revision is None:
            return self.revision is None
        if revision == self.revision:
            return True
        rev = revision.lower()
        return bool(_HEX.match(rev)) and self.commit.lower().startswith(rev)


def entry_dir_name(model_id: str, revision: str | None) -> str:
    """Directory name of an entry: ``org--name`` for the default branch, ``org--name@rev`` for a revision
    (characters other than ``[A-Za-z0-9._-]`` become ``_``, and then 8 hex digits of the revision's sha256
    keep two revisions apart)."""
    base = model_id.strip().strip("/").replace("/", "--", 1)
    if not revision:
        return base
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", revision)[:80]
    if safe != revision:
        import hashlib  # here, not at the top: every kvlint check imports this module (find_catalogue)

        safe += "-" + hashlib.sha256(revision.encode()).hexdigest()[:8]
    return f"{base}@{safe}"


def clear() -> None:
    """Forget the entries read per directory (after a pull, in tests)."""
    _memo.clear()


def _entry(d: Path) -> PulledEntry | None:
    try:
        raw = json.loads((d / PROVENANCE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not raw.get("id") or not raw.get("commit"):
        return None
    files: dict[str, dict[str, Any]] = raw["files"] if isinstance(raw.get("files"), dict) else {}
    ckpt = raw.get("checkpoint") if isinstance(raw.get("checkpoint"), dict) else None
    return PulledEntry(
        path=d,
        id=str(raw["id"]),
        revision=str(raw["revision"]) if raw.get("revision") else None,
        commit=str(raw["commit"]),
        pulled_at=str(raw.get("pulled_at") or ""),
        files=dict(files),
        checkpoint=ckpt,
        raw=raw,
    )


def load_entries(catalogue: str | os.PathLike[str]) -> tuple[PulledEntry, ...]:
    """Every entry of a pulled catalogue directory (subdirectories with a valid ``provenance.json``), by id;
    () when the directory does not exist. Memoised per directory until :func:`clear`."""
    key = os.path.abspath(os.path.expanduser(str(catalogue)))
    hit = _memo.get(key)
    if hit is not None:
        return hit
    root = Path(key)
    found: list[PulledEntry] = []
    try:
        subdirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        subdirs = []
    for d in subdirs:
        e = _entry(d)
        if e is not None:
            found.append(e)
    out = tuple(sorted(found, key=lambda e: (e.id.lower(), e.revision or "")))
    _memo[key] = out
    return out


def is_catalogue(directory: str | os.PathLike[str]) -> bool:
    """Whether ``directory`` holds at least one pulled entry (a ``--model-dir`` is then read as a catalogue)."""
    return bool(load_entries(directory))


def lookup(catalogue: str | os.PathLike[str], ref: str, revision: str | None) -> PulledEntry | None:
    """The entry of ``catalogue`` for ``ref`` at ``revision`` (see :meth:`PulledEntry.matches`), or None."""
    for e in load_entries(catalogue):
        if e.matches(ref, revision):
            return e
    return None


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def inside(path: Path, directory: Path, *, below: bool = False) -> bool:
    """Whether ``path`` (symlinks resolved) lies in ``directory`` (symlinks resolved): is it or is below it, or
    only below it when ``below`` (a file of the directory, as :func:`verify` asks of an entry's recorded names).
    False for a path that cannot be resolved (a NUL in it): :func:`kvlint.paths.real_path_inside` as the model
    readers ask it (here, below :mod:`kvlint.models.resolve`, which imports this module, it serves both)."""
    try:
        return real_path_inside(path, directory, below=below)
    except (OSError, ValueError):
        return False


def verify(entry: PulledEntry) -> list[str]:
    """What is wrong with an entry on disk: a recorded file missing or whose sha256 differs, or no
    ``config.json``; a recorded name whose real path is not below the entry's directory (``../x``, a link out of
    it, :func:`inside`) or that cannot be resolved (a NUL in it) is not read and is
    reported as no file of the entry. [] when it is intact."""
    problems: list[str] = []
    if "config.json" not in entry.files:
        problems.append("provenance.json records no config.json")
    for name, meta in sorted(entry.files.items()):
        p = entry.path / name
        if not inside(p, entry.path, below=True):  # ("../x", a link, a NUL): not the entry's file, not read
            problems.append(f"{name} is not a file of the entry")
            continue
        if not p.is_file():
            problems.append(f"{name} is missing")
            continue
        if meta.get("sha256") and _sha256(p) != meta["sha256"]:
            problems.append(f"{name} differs from the sha256 recorded when it was pulled (edited by hand?)")
    return problems


def checkpoint_source(entry: PulledEntry) -> tuple[int | None, str | None, int | None]:
    """``(tensor bytes, how they are known, parameter count)`` recorded for an entry's checkpoint (exact: summed
    from its safetensors headers when it was pulled), or ``(None, None, None)`` when none was recorded."""
    ck = entry.checkpoint
    if not ck or not isinstance(ck.get("bytes"), int) or ck["bytes"] <= 0:
        return None, None, None
    files = ck.get("files") or []
    by_dtype = ck.get("parameters_by_dtype") or {}
    dtypes = ", ".join(f"{dt} {int(n):,}" for dt, n in sorted(by_dtype.items()))
    how = ck.get("method") or "safetensors headers"
    src = (
        f"checkpoint size (pulled {entry.label}: {how} of {len(files)} file{'s' if len(files) != 1 else ''}"
        + (f": parameters {dtypes}" if dtypes else "")
        + ")"
    )
    params = int(ck["parameters"]) if isinstance(ck.get("parameters"), int) and ck["parameters"] > 0 else None
    return int(ck["bytes"]), src, params


def find_catalogue(paths: list[str] | tuple[str, ...] = ()) -> str | None:
    """The ``.kvlint/models`` directory that applies when no ``.kvlint.yaml`` does, or None.

    Looks in the directory of the first path that is not ``-`` (the current directory when there is none)
    and upward, like :func:`kvlint.config.find_config`. With a ``.kvlint.yaml``, the catalogue is the one
    :func:`kvlint.config.apply_config` names instead (its ``model_catalogue``, else ``.kvlint/models`` beside
    it). Never raises.
    """
    start = next((p for p in paths if p != "-"), None)
    try:
        here = Path(start).resolve() if start else Path.cwd()
        if not here.is_dir():
            here = here.parent
    except OSError:
        return None
    for d in (here, *here.parents):
        cand = d / DEFAULT_DIR
        try:
            if cand.is_dir():
                return str(cand)
        except OSError:
            continue
    return None
