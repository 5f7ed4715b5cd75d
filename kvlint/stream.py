"""``kvlint check`` as a stream: each input analysed and released before the next, on one or more cores.

:func:`kvlint.pipeline.run_check` loads every document, then analyses them all: memory grows with the
input (about 55 KB per document, documents and results held to the end). :func:`stream_check` gives the
same :class:`~kvlint.types.CheckResult` diagnostics, in the same order, in memory that grows only with the
findings:

1. **Context pass.** Some documents change how others are read: ConfigMaps (a ``--config`` file, an
   ``envFrom``), serving runtimes and LLMInferenceService presets (the pods of the services that use
   them, and whether the runtime is linted on its own). Every input is scanned for the words that can
   start such a document (``ConfigMap``, ``ServingRuntime``, ``InferenceService``: bytes, no parsing) and
   for the other ways to spell its kind (an escape in a double-quoted scalar, a file not in UTF-8:
   :func:`_file_may_hold_context`); only the files (or, in a large file, the ``---`` segments) that may
   hold one are loaded now. What stays for
   the whole run is small: the ConfigMaps' data (a later one of the same name replaces an earlier one), one
   copy of each runtime or preset (a repeat with the same kind, namespace, name and content is dropped:
   services select the first), and the places (path, document, line, column) of those the services
   consume (found without joining the services' pods). The services themselves are dropped after the pass
   and joined with the runtimes and presets in their turn (in the workers, with more than one job). A whole
   file loaded here is kept for its turn while the files kept stay under :data:`HELD_BYTES`, and the bytes of
   a file read here but not loaded (it holds no context word) while they stay under :data:`HELD_FILE_BYTES`,
   so that its turn does not read it again; a segment of a large file is read again in its turn. With more
   than one job the pass runs before the workers start, so it loads as little as it can: of a small file
   that may hold one, only the segments that may hold a context document (:func:`may_hold_context`, a
   line-based reading of the top-level ``kind`` that says "no" only when that is sure), kept for the file's
   turn, which loads the other segments
   (:func:`_load_split`); a file that must be read whole (:func:`_whole_only`, ``# Source:`` comments, JSON)
   is loaded whole as with one job. Charts, kustomizations and standard input are loaded here too (they are
   read once). The garbage collector is paused from the pass until its result is frozen (the documents hold
   no reference cycles; a collection over them only rescanned them).
2. **Units.** Each file, rendered chart or kustomization is one unit; a file above
   :data:`SEGMENT_BYTES` is read in ``---`` segments (see :func:`iter_segments`) and analysed in batches of
   about :data:`BATCH_BYTES`, so a 20,000-document file is never held whole. A unit's documents are loaded,
   analysed against the context (:func:`kvlint.pipeline.analyse_documents`) and reduced to diagnostics and
   compact container records (:class:`ContainerRecord`); then they are dropped.
3. **Jobs.** With ``jobs > 1`` the units are analysed by worker processes forked after the context pass
   (they share it, and the catalogues and modules the analysis loads, loaded once before the fork:
   :func:`_warm_up`; nothing is pickled but a range of unit numbers and the range's compact result, merged in
   the worker: :func:`_analyse_range`), the ranges shrinking towards the end of the run (:func:`_tasks`), and
   the results are taken in input order, so the output is byte for byte that of one process.

Diagnostics are then put in the order :func:`kvlint.pipeline.run_documents` gives them (every load finding
first, then the workloads' diagnostics), comment suppressions applied, duplicates dropped and the list
sorted, exactly as there.
"""

from __future__ import annotations

import codecs
import functools
import gc
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from kvlint.load import (
    _DOC_START,
    _expand,
    _gc_paused,
    _load_file,
    _load_segment,
    _load_stream,
    _realpath_stat,
    _segments,
    holds_suppression_marker,
    load_text,
    outside_finding,
    read_file,
    read_head,
    skip_walked_non_objects,
    template_actions,
)
from kvlint.options import Options
from kvlint.paths import missing_path
from kvlint.source import Loc
from kvlint.types import (
    CheckResult,
    ContainerRecord,
    ContainerResult,
    Diagnostic,
    Document,
    Finding,
    LoadResult,
    SuppressedDiagnostic,
)

if TYPE_CHECKING:
    from kvlint.diagstore import DiagnosticStore
    from kvlint.findcap import FileCap

__all__ = [
    "BATCH_BYTES",
    "SEGMENT_BYTES",
    "ContainerRecord",
    "WorkerLost",
    "default_jobs",
    "iter_segments",
    "stream_check",
]

#: Files larger than this are read in ``---`` segments rather than whole (bytes).
SEGMENT_BYTES = 4 * 2**20
#: Text analysed together when a large file is read in segments (bytes; a segment is never split).
BATCH_BYTES = 512 * 2**10
#: Words that a context document's text must hold: its kind (ConfigMap, ServingRuntime,
#: ClusterServingRuntime, InferenceService, LLMInferenceService, LLMInferenceServiceConfig, GKE's ComputeClass,
#: Karpenter's NodePool, OpenShift AI's HardwareProfile, :mod:`kvlint.workloads.hardwareprofile`, and the NIM
#: Operator's NIMCache, :func:`kvlint.workloads.nim.nim_cache_clause`, DRA's ResourceClaim and
#: ResourceClaimTemplate, :mod:`kvlint.workloads.dra`, and OME's BaseModel and ClusterBaseModel, which an OME
#: InferenceService's runtime is selected by, :mod:`kvlint.workloads.ome_select`, and llmaz's OpenModel, which a
#: Playground claims, :mod:`kvlint.workloads.llmaz`).
_WORDS_TEXT = (
    "ConfigMap",
    "ServingRuntime",
    "InferenceService",
    "ComputeClass",
    "NodePool",
    "HardwareProfile",
    "NIMCache",
    "ResourceClaim",
    "BaseModel",
    "OpenModel",
)
_WORDS_BYTES = tuple(w.encode() for w in _WORDS_TEXT)
#: Line breaks other than LF that make a file be read whole (see :func:`_whole_only`).
_WHOLE_ONLY_CHARS = "\r\x85\u2028\u2029\x0b\x0c\x1c\x1d\x1e"


def _whole_only(text: str) -> bool:
    """Whether a file of this text must be read whole, not in ``---`` segments: it holds a line break other
    than LF/CRLF's LF (normalised on a whole text; and the other breaks ``str.splitlines`` knows, so a line is
    what ends at LF), a directive or document-end marker at a line start (``%YAML``, ``...``: they belong to the
    next or last document, which the segment split does not know), or an inline suppression (the whole text is
    kept). Found with ``in`` scans (a regex has no literal to skip ahead with and is tried at every character:
    about 100x slower)."""
    return (
        any(c in text for c in _WHOLE_ONLY_CHARS)
        or text.startswith(("%", "..."))
        or "\n%" in text
        or "\n..." in text
        or holds_suppression_marker(text)
    )


def _has_context_word(data: str | bytes) -> bool:
    """Whether ``data`` holds one of the words a context document's kind holds (:data:`_WORDS_TEXT`).
    (Nine ``in`` tests, not a generator over the words: asked of every file, whose scans cost a few us.)"""
    if isinstance(data, str):
        first, second, third, fourth, fifth, sixth, seventh, eighth, ninth, tenth = _WORDS_TEXT
        return (
            first in data
            or second in data
            or third in data
            or fourth in data
            or fifth in data
            or sixth in data
            or seventh in data
            or eighth in data
            or ninth in data
            or tenth in data
        )
    bfirst, bsecond, bthird, bfourth, bfifth, bsixth, bseventh, beighth, bninth, btenth = _WORDS_BYTES
    return (
        bfirst in data
        or bsecond in data
        or bthird in data
        or bfourth in data
        or bfifth in data
        or bsixth in data
        or bseventh in data
        or beighth in data
        or bninth in data
        or btenth in data
    )


#: An escape inside a double-quoted scalar (from its opening quote to a backslash, lines included).
_QUOTED_ESCAPE = re.compile(rb'"[^"]*\\')


def _file_may_hold_context(data: bytes) -> bool:
    """Whether a file of these bytes may hold a context document, for the context pass to load it: False only
    when no kind in it can name one. A kind names one with its word (:func:`_has_context_word`), or without it
    when spelt with an escape, which only a double-quoted scalar has (``kind: "Config\\x4dap"``), or when the
    file is not UTF-8 (the loader reads UTF-16 by its byte-order mark: the words are not there as UTF-8 bytes;
    a NUL byte stands for any such text)."""
    if _has_context_word(data):
        return True
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE) or b"\x00" in data:
        return True
    return b"\\" in data and _QUOTED_ESCAPE.search(data) is not None


def _segment_may_hold_context(seg: str) -> bool:
    """:func:`_file_may_hold_context` for a segment of a large UTF-8 file (:func:`iter_segments`): its word,
    or a backslash and the kind reading of :func:`may_hold_context`."""
    return _has_context_word(seg) or ("\\" in seg and may_hold_context(seg))


_CHUNK = 2**20
#: Inputs smaller than this (bytes of plain files) are analysed in this process whatever ``jobs`` says.
PARALLEL_MIN_BYTES = 2 * 2**20
#: Most units sent to a worker at once (see :func:`_tasks`).
_MAX_CHUNK = 64
#: Tasks per job that :func:`_tasks` aims at (by bytes), so that uneven units still balance.
_TASKS_PER_JOB = 16
#: :func:`_tasks` cuts each range at the bytes left over ``n_jobs`` times this (and the smallest ranges at the
#: run's bytes over ``n_jobs * _TASKS_PER_JOB`` times this).
_GUIDE = 4
#: Characters of text-report blocks the workers format for the run's process (:func:`stream_check`'s
#: ``text_style``), shared out between them; past it the report formats the rest itself. The blocks, and the
#: diagnostics they are keyed by (kept as objects, not compacted: :mod:`kvlint.diagstore`), are held until the
#: report: this bounds what they take, about 20 MB at most (8 Mi characters of mostly ASCII text, ~630 a block,
#: and ~0.9 KB a diagnostic); the corpus x30 (11,108 diagnostics) takes about 7 M characters.
PRETEXT_CHARS = 8 * 2**20
#: Process ids that analysed units in the last :func:`stream_check` (tests check that workers ran).
LAST_PIDS: set[int] = set()
#: This process's id, which each unit's result carries: taken once and again in a forked child, not asked of
#: the system per unit (``os.getpid`` is a system call, 1.3-3.8 us a call measured during a run).
_PID = os.getpid()


def _forked() -> None:
    global _PID
    _PID = os.getpid()


os.register_at_fork(after_in_child=_forked)


def default_jobs() -> int:
    """Processes ``--jobs`` uses by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


#: Different contents of one runtime or preset (kind, namespace, name) that a new copy is compared with.
_MAX_VARIANTS = 8
#: Bytes of whole files loaded by the context pass that are kept for their turn; above it a file is read
#: again in its turn (the memory held between the passes stays bounded).
HELD_BYTES = 64 * 2**20
#: Bytes of the files the context pass read but did not load (no context document in them) kept for their turn,
#: which loads them from these bytes instead of opening, stat-ing and reading the file again (~8 us a small
#: file); above it a file is read again in its turn.
HELD_FILE_BYTES = 32 * 2**20


# --------------------------------------------------------------------------------------------------
# compact results


class _Ns:
    """Attributes of a dropped object that the reports still read (a few strings and numbers)."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def _record(cr: ContainerResult, sizing: str, keep_json: bool) -> ContainerRecord:
    from kvlint.engines.tgi import tgi_option

    s = cr.serving
    model_arg = s.model
    acc = cr.placement.accelerator if cr.placement is not None else None
    return ContainerRecord(
        object_ref=cr.object_ref,
        container_name=cr.container_name,
        sizing=sizing,
        json=cr.as_dict() if keep_json else None,
        serving=_Ns(
            engine=s.engine,
            version=s.version,
            model=_Ns(value=model_arg.value, loc=model_arg.loc) if model_arg is not None else None,
            command_loc=s.command_loc,
            joins=None,
            # the leader container a multi-node worker joins, for the Markdown section of a worker sized with it
            leader_container=s.joins.leader_container if s.joins is not None else None,
            # how the container spells TGI's memory fraction, for the Markdown budget row
            # (kvlint.report.markdown.budget_setting)
            tgi_fraction_option=tgi_option(s, "cuda_memory_fraction") if s.engine == "tgi" else None,
        ),
        placement=_Ns(
            accelerator=_Ns(name=acc.name) if acc is not None else None,
            gpus=cr.placement.gpus,
            device_name=cr.placement.device_name,
        )
        if cr.placement is not None
        else None,
        model=_Ns(id=cr.model.id) if cr.model is not None else None,
        plan=cr.plan,
        plan_error=cr.plan_error,
        model_error=cr.model_error,
        workload=_Ns(loc=cr.workload.loc, path=cr.workload.path, doc=_Ns(path=cr.workload.doc.path)),
        container=_Ns(loc=cr.container.loc),
    )


@dataclass
class _UnitResult:
    """The compact outcome of one unit (picklable: sent back by worker processes)."""

    files: int = 0
    documents: int = 0
    workloads: int = 0
    load_diags: list[Diagnostic] = field(default_factory=list)
    diags: list[Diagnostic] = field(default_factory=list)
    suppressed: list[SuppressedDiagnostic] = field(default_factory=list)
    records: list[ContainerRecord] = field(default_factory=list)
    containers: int = 0
    #: how many of the unit's serving containers had each sizing outcome (:func:`kvlint.sizing.outcomes`), in
    #: the order first met (a plain dict, empty for the many units without one: a Counter costs ~2 us to make
    #: and as much again to add, for each unit)
    sizing: dict[str, int] = field(default_factory=dict)
    #: first document per path that reads as Helm chart values: (path, reason, loc)
    values_docs: list[Finding] = field(default_factory=list)
    kv002_files: set[str] = field(default_factory=set)
    serving_paths: set[str] = field(default_factory=set)
    source_texts: dict[str, str] = field(default_factory=dict)
    read_paths: set[str] = field(default_factory=set)
    #: whether files of the unit name a serving engine (:attr:`kvlint.types.CheckResult.engine_named`)
    engine_named: dict[str, bool] = field(default_factory=dict)
    #: with several jobs and a text style (:func:`stream_check`'s ``text_style``): the text report's block of each of
    #: ``diags`` (None where not formatted), formatted here so that the run's process does not
    texts: list[str | None] = field(default_factory=list)
    pid: int = 0


# --------------------------------------------------------------------------------------------------
# reading large files in segments


def iter_segments(
    path: str, *, sources: list[tuple[int, str]] | None = None, info: dict[str, int] | None = None
) -> Iterator[tuple[int, str]] | None:
    """``(line offset, text)`` of each ``---`` segment of the UTF-8 file ``path``, read in 1 MiB chunks, or
    None when the file must be read whole (see :func:`_whole_only`; also a BOM other than UTF-8's, a NUL
    byte, invalid UTF-8, a ``.json`` file). The check reads the file once before the first segment is
    given; ``sources`` (when given) receives the ``# Source:`` comment lines, as :func:`kvlint.render.find_sources`,
    and ``info["lines"]`` the file's number of lines (as ``str.splitlines`` counts them).
    """
    if path.endswith(".json"):
        return None
    from kvlint.render import _SOURCE_PREFIX

    dec = codecs.getincrementaldecoder("utf-8-sig")()
    line = 0
    carry = ""
    last = ""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
                return None
            fh.seek(0)
            while True:
                raw = fh.read(_CHUNK)
                if b"\x00" in raw:
                    return None
                text = dec.decode(raw, final=not raw)
                block = carry + text
                # a marker or a Source comment cut by the chunk edge is found in the next block
                cut = block.rfind("\n") + 1 if raw else len(block)
                whole, carry = block[:cut], block[cut:]
                if _whole_only(whole):
                    return None
                if sources is not None and _SOURCE_PREFIX in whole:
                    for i, ln in enumerate(whole.split("\n")):
                        if ln.startswith(_SOURCE_PREFIX):
                            sources.append((line + i + 1, ln[len(_SOURCE_PREFIX) :].strip()))
                line += whole.count("\n")
                last = whole[-1:] or last
                if not raw:
                    break
    except (OSError, UnicodeDecodeError):
        return None
    if info is not None:
        info["lines"] = line + (1 if last and last != "\n" else 0)
    return _segments_of(path)


def _segments_of(path: str) -> Iterator[tuple[int, str]]:
    """The segments of a file :func:`iter_segments` accepted."""
    dec = codecs.getincrementaldecoder("utf-8-sig")()
    buf = ""
    start = 0  # where the current segment starts in ``buf`` (the text before it was yielded)
    line = 0
    with open(path, "rb") as fh:
        while True:
            raw = fh.read(_CHUNK)
            # the yielded text is dropped once per chunk, not once per segment: re-slicing the buffer per
            # segment copied the rest of the chunk for each (1.8M tiny documents in 16 MB took 145 s)
            buf = buf[start:] + dec.decode(raw, final=not raw)
            start = 0
            while True:
                # the marker that starts the current segment (at ``start``) is not searched again; the regex
                # sees the same characters around each position as in the segment's own text
                m = _DOC_START.search(buf, start + 1)
                # a marker at the very end of the buffer is only one when the next character says so
                if m is None or (raw and m.end() >= len(buf)):
                    break
                seg = buf[start : m.start()]
                yield line, seg
                line += seg.count("\n")
                start = m.start()
            if not raw:
                break
    if buf[start:]:
        yield line, buf[start:]


def _load_segments(path: str, segments: Sequence[tuple[int, str]], result: LoadResult) -> None:
    """Load ``segments`` of ``path`` into ``result`` as the loader's per-segment path does."""
    counter = [0]
    with _gc_paused():
        for offset, seg in segments:
            if not seg.strip():
                continue
            _load_segment(seg, path, offset, result, template_actions(seg), counter, whole_file=False)


# --------------------------------------------------------------------------------------------------
# small files read in segments (runs with more than one job)

#: A line that starts in column 0 with neither blank nor comment.
_COLUMN0_LINE = re.compile(r"^[^ \t\n#].*", re.M)
#: Such a line after a line break (the break is a literal to search for in C: the ``^`` of the multi-line
#: pattern is tried at every character, about 5x slower over a large segment).
_COLUMN0_AFTER_BREAK = re.compile(r"\n([^ \t\n#].*)")
#: The first line that holds more than blanks or a comment.
_CONTENT_LINE = re.compile(r"^[ \t]*[^ \t\n#]", re.M)
#: A plain mapping key at column 0 followed by its colon (``name: ...``, ``kind:``).
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*:(?:[ \t]|$)")
#: ``kind: Word`` with a plain one-word value, then only blanks or a comment.
_PLAIN_KIND = re.compile(r"kind:[ \t]+([A-Za-z][A-Za-z0-9]*)(?:[ \t]+#.*|[ \t]*)$")


def may_hold_context(seg: str) -> bool:
    """Whether the ``---`` segment ``seg`` (of a text without the breaks and markers :func:`_whole_only`
    finds) may hold a document the context pass takes (a ConfigMap, runtime, preset or service, or a
    ``*List`` of them); False only when that is sure from the text alone.

    It is sure when the segment holds none of the context words and no backslash (a double-quoted escape
    spells a kind without its word: ``kind: "Config\\x4dap"`` is a ConfigMap), or when the document is a plain block mapping
    at column 0 whose top-level ``kind`` is a one-word plain value naming another kind: every
    line in column 0 (blank and comment lines aside) is a plain ``key:`` (so no quoted, explicit,
    anchored, tagged or merge key, no flow or sequence root, and no template action stands there), the
    first such line is the document's first content (the root is not indented), exactly one of them is
    ``kind: Word`` (a top-level key of a mapping at column 0 starts its line in column 0; a second ``kind``
    line could be text inside a quoted value and is not judged), and the line after it is not indented (a
    plain value would go on there). Anything else counts as "may hold": the segment is then loaded.
    """
    if not _has_context_word(seg) and "\\" not in seg:
        return False
    pos = 0
    if seg.startswith("---"):
        eol = seg.find("\n")
        rest = seg[3:] if eol < 0 else seg[3:eol]
        if rest.strip() and not rest.lstrip().startswith("#"):
            return True  # content on the marker line (a tag, a flow or block scalar root)
        if eol < 0:
            return False
        pos = eol + 1
    first = _CONTENT_LINE.search(seg, pos)
    if first is None:
        return False  # comments only: no document, or a null one
    if first.end() - first.start() != 1:
        return True  # an indented root
    kind: str | None = None
    kinds = 0
    for line, end in _column0_lines(seg, pos):
        if not _PLAIN_KEY.match(line):
            return True
        if line.startswith("kind:"):
            kinds += 1
            k = _PLAIN_KIND.match(line)
            if k is None:
                return True
            after = _CONTENT_LINE.search(seg, end)
            if after is not None and after.end() - after.start() != 1:
                return True  # the value may go on on an indented line
            kind = k.group(1)
    if kinds == 0:
        return False  # no top-level kind
    if kinds > 1 or kind is None:
        return True
    return _has_context_word(kind) or kind.endswith("List")


def _column0_lines(seg: str, pos: int) -> Iterator[tuple[str, int]]:
    """``(line, end)`` of each line of ``seg`` from ``pos`` (a line start) that starts in column 0 with neither
    blank nor comment, in order: what ``_COLUMN0_LINE.finditer(seg, pos)`` finds."""
    first = _COLUMN0_LINE.match(seg, pos)
    if first is not None:
        yield first.group(), first.end()
    for m in _COLUMN0_AFTER_BREAK.finditer(seg, pos):
        yield m.group(1), m.end()


def _split_text(path: str, data: bytes) -> str | None:
    """The text of a file's bytes when it can be read in ``---`` segments with the same documents and
    findings as whole (see :func:`_whole_only`; not a ``.json`` file, UTF-8, no NUL byte, and no ``# Source:``
    comment: rendered Helm output has its locations mapped on the whole text), else None."""
    from kvlint.render import _SOURCE_PREFIX

    if path.endswith(".json") or b"\x00" in data:
        return None
    try:
        text = (data[3:] if data[:3] == codecs.BOM_UTF8 else data).decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _whole_only(text) or _SOURCE_PREFIX in text:
        return None
    return text


#: Segments loaded by the context pass for a file's turn: segment number -> (its text, what it loaded).
_Held = dict[int, tuple[str, LoadResult]]


def _context_segments(path: str, text: str) -> _Held:
    """Load the segments of ``text`` (the file ``path``, :func:`_split_text`) that may hold a context
    document (:func:`may_hold_context`); each counts its documents from 0, as in its turn."""
    out: _Held = {}
    with _gc_paused():
        for i, (offset, seg) in enumerate(_segments(text)):
            if may_hold_context(seg):
                part = LoadResult()
                _load_segments(path, [(offset, seg)], part)
                out[i] = (seg, part)
    return out


def _load_split(path: str, held: _Held, limit: int) -> LoadResult:
    """The file ``path`` loaded segment by segment, taking the segments the context pass loaded (the same
    text at the same place) from ``held``: the documents and findings of the file loaded whole, but each
    segment counts its documents from 0 (as the context pass did: :func:`kvlint.workloads.find.doc_key`
    then names the same document in both). A file that changed so that it can no longer be read so is
    loaded whole."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return _load_file(path, limit)
        data = read_file(path, st.st_size, limit)
    except OSError:
        return _load_file(path, limit)
    text = _split_text(path, data) if len(data) <= limit else None
    if text is None:
        return _load_file(path, limit)
    loaded = LoadResult(files=1)
    loaded.read_paths.add(path)
    with _gc_paused():
        for i, (offset, seg) in enumerate(_segments(text)):
            got = held.get(i)
            if got is not None and got[0] == seg:
                loaded.documents.extend(got[1].documents)
                loaded.findings.extend(got[1].findings)
            else:
                _load_segments(path, [(offset, seg)], loaded)
    return loaded


# --------------------------------------------------------------------------------------------------
# units


@dataclass
class _Unit:
    """One input to analyse: ``loaded`` (already read), or a file ``path`` to read (or to load from ``data``, its
    bytes read by the context pass), or a batch of segments of
    a large file (``span``: start and end byte, first line), or a file to read in segments taking those the
    context pass loaded (``held``, :func:`_load_split`)."""

    path: str | None = None
    loaded: LoadResult | None = None
    #: the whole file ``path`` as the context pass read it (the bytes its turn would read), to load in its turn
    data: bytes | None = None
    span: tuple[int, int, int] | None = None
    held: _Held | None = None
    files: int = 0
    lines: int = 0
    #: bytes to read in its turn (the file's size, or the batch's span); None when not known (stdin, a
    #: rendered chart or kustomization, findings only), see :func:`_tasks`
    size: int | None = None
    #: met in a directory walk, not named on the command line: its "not an object" KV001s are dropped when it holds
    #: no Kubernetes object (:func:`kvlint.load.skip_walked_non_objects`; a batch of a large file is judged alone)
    walked: bool = False


def _no_configmaps() -> Any:
    """An empty :class:`kvlint.workloads.configmaps.ConfigMaps` (imported on first use, as :meth:`_Context.keep`
    imports the workloads stage)."""
    from kvlint.workloads.configmaps import ConfigMaps

    return ConfigMaps()


@dataclass
class _Context:
    """What every unit is read against: the ConfigMaps' data by (namespace, name) (a later one replaces an
    earlier one, :func:`kvlint.workloads.configmaps`), the runtimes and presets (one copy of identical
    repeats: the same kind, namespace, name and content), and which of them the services consume."""

    providers: list[Document] = field(default_factory=list)
    services: list[Document] = field(default_factory=list)  # until the pass ends
    cms: Any = field(default_factory=_no_configmaps)  # a kvlint.workloads.configmaps.ConfigMaps
    joined: Any = None
    _ids: dict[tuple[str, str | None, str], list[Any]] = field(default_factory=dict)

    def keep(self, docs: Sequence[Document], unparsed: Sequence[tuple[str | None, str, Loc]] = ()) -> None:
        """Take the context of ``docs``, and the ConfigMaps of documents that failed to parse (``unparsed``,
        :attr:`kvlint.types.LoadResult.unparsed_configmaps`)."""
        from kvlint.workloads import configmaps
        from kvlint.workloads.configmaps import add_unparsed
        from kvlint.workloads.find import CONTEXT_KINDS, CONTEXT_NODE_KINDS

        if unparsed:
            add_unparsed(self.cms, unparsed)

        for d in docs:
            kind = d.kind
            if kind == "ConfigMap":
                self.cms.absorb(configmaps([d]))
            elif kind in CONTEXT_KINDS or kind in CONTEXT_NODE_KINDS:
                same = self._ids.setdefault((kind, d.namespace, d.name), [])
                if any(d.data == data for data in same):
                    continue  # a repeat: the first copy is the one a service selects
                if len(same) < _MAX_VARIANTS:  # (compared with a few variants only: never quadratic)
                    same.append(d.data)
                self.providers.append(d)
            elif kind in ("InferenceService", "LLMInferenceService"):
                self.services.append(d)


class _Plan:
    """The units of a run, found by the context pass (see the module docstring)."""

    def __init__(self) -> None:
        self.context = _Context()
        self.units: list[_Unit] = []
        self.trailing: list[Finding] = []  # unreachable paths (after every unit, as load_inputs)
        self.total_bytes = 0


def _plan(
    paths: Sequence[str],
    stdin: TextIO | BinaryIO | None,
    options: Options,
    split: bool = False,
) -> _Plan:
    """The context pass: what :func:`kvlint.render.load_inputs` checks first, then every input named.

    ``split``: a file holding a context word is loaded only in the segments that may hold a context
    document (:func:`may_hold_context`) and the rest is left to its turn, which may run in a worker process
    (runs with more than one job: the pass runs before the workers start); otherwise it is loaded whole and
    kept for its turn."""
    import kvlint.workloads.gitops_walk  # noqa: F401 (registers render.GITOPS_DEPLOYED before a walk is planned)
    from kvlint.render import (
        _map_loaded_sources,
        clear_file_cache,
        render_inputs,
        sort_inputs,
        unreachable_finding,
    )

    clear_file_cache()
    plan = _Plan()
    inputs = sort_inputs(
        paths,
        options.helm_values,
        options.helm_set,
        options.helm_set_file,
        options.max_file_bytes,
        options.exclude,
    )
    plain = inputs.plain
    for p in plain:
        if p != "-" and not os.path.exists(p):
            raise FileNotFoundError(missing_path(p))

    keep = plan.context.keep
    held = [0]

    def hold(size: int) -> bool:
        """Keep a file loaded now for its turn while the held bytes stay under :data:`HELD_BYTES`."""
        held[0] += size
        return held[0] <= HELD_BYTES

    held_files = [0]

    def hold_file(size: int) -> bool:
        """Keep a file's bytes read now for its turn while they stay under :data:`HELD_FILE_BYTES`."""
        held_files[0] += size
        return held_files[0] <= HELD_FILE_BYTES

    limit = options.max_file_bytes
    seen: set[str] = set()
    real_dirs: dict[str, str] = {}
    # the documents built here hold no reference cycles: collecting while they pile up only rescans them
    # (stream_check collects once when the pass is over)
    with _gc_paused():
        for p in plain:
            if p == "-":
                if "-" in seen:
                    continue
                seen.add("-")
                loaded = _load_stream(stdin if stdin is not None else _sys_stdin(), limit)
                loaded.files = 1
                _map_loaded_sources(loaded)
                keep(loaded.documents, loaded.unparsed_configmaps)
                plan.units.append(_Unit(loaded=loaded))
                continue
            unreadable: list[OSError] = []
            outside: list[tuple[str, str]] = []
            walked = os.path.isdir(p)
            for f in _expand(p, options.exclude, unreadable, outside, inputs.skip):
                key, st = _realpath_stat(f, real_dirs)
                if key in seen:
                    continue
                seen.add(key)
                before = plan.total_bytes
                file_units = _plan_file(f, limit, keep, plan, hold, split, st, hold_file)
                for u in file_units:
                    u.size = u.span[1] - u.span[0] if u.span is not None else plan.total_bytes - before
                    u.walked = walked
                plan.units.extend(file_units)
            if outside:  # symbolic links out of the directory, not read (as load_paths)
                notes = [outside_finding(link, target, p) for link, target in outside]
                plan.units.append(_Unit(loaded=LoadResult(findings=notes)))
            if unreadable:
                findings = [
                    Finding(
                        "KV001",
                        f"cannot read directory: {e.strerror or e}; the manifests in it were not linted",
                        Loc(str(e.filename or p), 1, 1),
                        fix="give the user running kvlint read and execute permission on the directory, or leave it out",
                    )
                    for e in unreadable
                ]
                plan.units.append(_Unit(loaded=LoadResult(findings=findings)))
    for loaded in render_inputs(inputs, options.helm_values, options.helm_set, limit):
        keep(loaded.documents, loaded.unparsed_configmaps)
        plan.units.append(_Unit(loaded=loaded))
    plan.trailing.extend(unreachable_finding(p) for p in inputs.unreachable)
    return plan


def _sys_stdin() -> Any:
    import sys

    return sys.stdin


def _plan_file(
    path: str,
    limit: int,
    keep: Any,
    plan: _Plan,
    hold: Any,
    split: bool = False,
    st: os.stat_result | None = None,
    hold_file: Callable[[int], bool] | None = None,
) -> list[_Unit]:
    """The units of one file: the file itself (loaded now when it may hold a context document, and kept for
    its turn while ``hold`` allows; with ``split``, only its segments that may hold one, see :func:`_plan`;
    else its bytes, read now, kept for its turn while ``hold_file`` allows), or its segments in batches when
    it is large (a segment holding a context document is loaded now for the context and again in its turn).
    ``st``: the file's ``os.stat`` when the caller has it."""
    from kvlint.render import _map_loaded_sources

    try:
        if st is None:
            st = os.stat(path)
        size, regular = st.st_size, stat.S_ISREG(st.st_mode)
    except OSError:
        size, regular = 0, True
    plan.total_bytes += size
    if not regular:
        return [_Unit(path=path, files=1)]  # a FIFO or device is never opened (its turn says so: KV001)
    if size <= SEGMENT_BYTES or size > limit:
        read = True
        try:
            data = read_head(path, min(size, limit) + 1)
        except OSError:
            data, read = b"", False
        if not _file_may_hold_context(data):
            # the whole file as its turn would read it (the size stat said, within the limit) is kept for it
            if read and hold_file is not None and len(data) == size <= limit and hold_file(size):
                return [_Unit(path=path, data=data, files=1)]
            return [_Unit(path=path, files=1)]
        # read to its end and within the limit: these bytes are the file, as _load_file would read it
        whole = len(data) <= min(size, limit)
        text = _split_text(path, data) if split and whole else None
        if text is not None:
            parts = _context_segments(path, text)
            if not parts:
                return [_Unit(path=path, files=1)]  # no context document: read whole in its turn
            held = hold(sum(len(seg) for seg, _ in parts.values()))
            for _, part in parts.values():
                keep(part.documents, part.unparsed_configmaps)
            return [_Unit(path=path, held=parts if held else {}, files=1)]
        loaded = load_text(data, path) if whole else _load_file(path, limit)
        _map_loaded_sources(loaded)
        held = hold(len(data))
        keep(loaded.documents, loaded.unparsed_configmaps)
        return [_Unit(loaded=loaded, files=1)] if held else [_Unit(path=path, files=1)]
    sources: list[tuple[int, str]] = []
    info: dict[str, int] = {}
    segs = iter_segments(path, sources=sources, info=info)
    if segs is not None and sources:
        from kvlint.render import _template_root

        if _template_root(path, sources, lambda: _read_text(path)) is not None:
            segs = None  # a rendered chart whose templates are here: mapped on the whole text
    if segs is None:
        loaded = _load_file(path, limit)
        _map_loaded_sources(loaded)
        keep(loaded.documents, loaded.unparsed_configmaps)
        return [_Unit(loaded=loaded, files=1)]
    units: list[_Unit] = []
    # a batch is kept as its byte span and first line, not its text: the file is never held whole
    with open(path, "rb") as fh:
        pos = len(codecs.BOM_UTF8) if fh.read(3) == codecs.BOM_UTF8 else 0
    start, first, size_now = pos, 0, 0
    for offset, seg in segs:
        if size_now == 0:
            start, first = pos, offset
        if _segment_may_hold_context(seg):
            part = LoadResult()
            _load_segments(path, [(offset, seg)], part)
            keep(part.documents, part.unparsed_configmaps)
        nbytes = len(seg.encode("utf-8"))
        pos += nbytes
        size_now += nbytes
        if size_now >= BATCH_BYTES:
            units.append(_Unit(path=path, span=(start, pos, first), lines=info.get("lines", 0)))
            size_now = 0
    if size_now or not units:
        units.append(_Unit(path=path, span=(start, pos, first), lines=info.get("lines", 0)))
    units[0].files = 1
    return units


def batch_first_lines(path: str) -> list[int] | None:
    """The line (0-based: the number of lines before it) each batch starts at that a file of more than
    :data:`SEGMENT_BYTES` is analysed in (:func:`_plan_file`: its ``---`` segments gathered until a batch holds
    :data:`BATCH_BYTES`), or None when such a file is read whole (:func:`iter_segments` refuses it, or it is a
    rendered chart whose templates are here); the GitOps scan of a directory walk
    (:func:`kvlint.workloads.gitops_walk.gitops_deployed`) counts a file's chart renders per batch as the run
    does (:func:`kvlint.workloads.gitops_local.render_scope`). Never raises (None when the file cannot be read)."""
    sources: list[tuple[int, str]] = []
    try:
        segs = iter_segments(path, sources=sources)
        if segs is not None and sources:
            from kvlint.render import _template_root

            if _template_root(path, sources, lambda: _read_text(path)) is not None:
                return None
        if segs is None:
            return None
        out: list[int] = []
        first, size_now = 0, 0
        for offset, seg in segs:
            if size_now == 0:
                first = offset
            size_now += len(seg.encode("utf-8"))
            if size_now >= BATCH_BYTES:
                out.append(first)
                size_now = 0
        if size_now or not out:
            out.append(first)
        return out
    except (OSError, UnicodeDecodeError):
        return None


def render_batches(path: str, size: int) -> tuple[list[int], int] | None:
    """For a file of ``size`` bytes a streaming run analyses in batches (over :data:`SEGMENT_BYTES`), the line
    each batch starts at (:func:`batch_first_lines`) and how many charts the GitOps objects of each batch may
    render (its share of :data:`kvlint.workloads.gitops_local.MAX_LOCAL_RENDERS`, as
    :func:`kvlint.workloads.gitops_local.render_scope` gives it); None when the run reads the file whole (then
    it renders that many for the whole file). Registered as :data:`kvlint.render.STREAM_BATCHES` when this module
    is imported, for the GitOps scan of a directory walk (:func:`kvlint.workloads.gitops_walk.gitops_deployed`),
    which :mod:`kvlint.workloads` cannot import from here."""
    if size <= SEGMENT_BYTES:
        return None
    firsts = batch_first_lines(path)
    if firsts is None:
        return None
    from kvlint.workloads.gitops_local import MAX_LOCAL_RENDERS

    return firsts, max(1, MAX_LOCAL_RENDERS * BATCH_BYTES // size)


def _read_span(path: str, span: tuple[int, int, int]) -> list[tuple[int, str]]:
    """The segments (line offset, text) of a batch: bytes ``span[0]:span[1]`` of ``path``, whose first line is
    line ``span[2]`` of the file; split at the markers :func:`_segments_of` split it at."""
    start, end, line = span
    with open(path, "rb") as fh:
        fh.seek(start)
        text = fh.read(end - start).decode("utf-8")
    out: list[tuple[int, str]] = []
    prev = 0
    for m in _DOC_START.finditer(text, 1):
        seg = text[prev : m.start()]
        out.append((line, seg))
        line += seg.count("\n")
        prev = m.start()
    out.append((line, text[prev:]))
    return out


def _read_text(path: str) -> str:
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8-sig")


# --------------------------------------------------------------------------------------------------
# analysis of one unit


_RUN: dict[str, Any] = {}  # the run's options, context and what to keep (set before workers fork)


@functools.cache
def _unit_functions() -> tuple[Callable[..., Any], ...]:
    """The functions :func:`_analyse_unit` calls from modules that import this one (imported in the function,
    not at the top), imported on the first unit of a process: four ``from ... import`` statements cost ~15-30
    us, paid for each of the ~1,400 units of a corpus-x12 pass when they were in the unit's function."""
    from kvlint.kustomize_patch import listed_patch_files
    from kvlint.pipeline import analyse_documents, configure
    from kvlint.render import _map_loaded_sources, internal_error_finding, unrendered_or_error
    from kvlint.rules.runner import finding_to_diagnostic
    from kvlint.sizing import engine_named_in, outcomes
    from kvlint.suppress import comment_suppresses

    return (
        analyse_documents,
        configure,
        _map_loaded_sources,
        unrendered_or_error,
        finding_to_diagnostic,
        outcomes,
        engine_named_in,
        internal_error_finding,
        comment_suppresses,
        listed_patch_files,
    )


def _warm_up() -> None:
    """Load what the analysis of units loads on first use (the modules of the memory models, rules and model
    resolution, the accelerator, model and rule catalogues) in this process, before the workers are forked:
    each worker would load them again on its first units (about 0.17 CPU s a worker when nothing is
    compiled yet, measured on corpus x30: the first 113 units 0.28 s, the next 113 0.11 s). The loaders are
    cached and read only kvlint's own data: the reports are the same."""
    _unit_functions()
    import kvlint.config  # noqa: F401  (the repository a manifest's model path is held to: manifest_root)
    import kvlint.engines.multinode  # noqa: F401
    import kvlint.memory.stage  # noqa: F401  (the engines' memory models)
    import kvlint.workloads.app_template  # noqa: F401  (chart values readers import their builders lazily)
    import kvlint.workloads.gitops_local  # noqa: F401  (each unit sets its render scope)
    import kvlint.workloads.stack_values  # noqa: F401
    from kvlint.accelerators.registry import catalogue
    from kvlint.models.catalogue import _by_name, _index
    from kvlint.models.resolve import _kaito_presets
    from kvlint.rules.registry import registry

    catalogue()
    _index()
    _by_name()
    _kaito_presets()
    registry()


def _analyse_unit(unit: _Unit) -> _UnitResult:
    """The findings of one unit; when kvlint raises on it outside the nets of the documents
    (:func:`kvlint.render.unrendered_or_error`) and workloads (:func:`kvlint.pipeline._analyse_workloads`), a
    KV503 at its file's first line instead (:func:`kvlint.render.internal_error_finding`): a future bug in one
    file's reading must not end the run and hide every other file's findings."""
    try:
        return _analyse_unit_unguarded(unit)
    except Exception as exc:
        return _failed_unit(unit, exc)


def _failed_unit(unit: _Unit, exc: Exception) -> _UnitResult:
    """The result of ``unit`` when its analysis raised ``exc``: a KV503 at its file's first line (the first
    document's, for input already loaded: stdin, a rendered chart)."""
    from kvlint.engines.command import HELD_LINES
    from kvlint.workloads.gitops_local import render_scope

    render_scope(None)
    HELD_LINES.clear()
    functions = _unit_functions()
    configure, finding_to_diagnostic, internal_error_finding = functions[1], functions[4], functions[7]
    loc: Loc | None = None
    if unit.path is not None:
        loc = Loc(unit.path, unit.span[2] if unit.span is not None else 1, 1)
    elif unit.loaded is not None and unit.loaded.documents:
        loc = unit.loaded.documents[0].loc
    # counted as the unit would have counted them (a batch of a large file after its first counts none)
    if unit.files or unit.span is not None:
        files = unit.files
    else:
        files = unit.loaded.files if unit.loaded is not None else 1
    out = _UnitResult(files=files, pid=_PID)
    if unit.path is not None:
        out.read_paths = {unit.path}
    out.load_diags = configure(
        [finding_to_diagnostic(internal_error_finding(loc, exc, "file"))], _RUN["options"]
    )
    return out


def _analyse_unit_unguarded(unit: _Unit) -> _UnitResult:
    (
        analyse_documents,
        configure,
        _map_loaded_sources,
        unrendered_or_error,
        finding_to_diagnostic,
        outcomes,
        engine_named_in,
        _,
        comment_suppresses,
        listed_patch_files,
    ) = _unit_functions()
    options: Options = _RUN["options"]
    ctx: _Context = _RUN["context"]
    keep_json: bool = _RUN["keep_json"]
    keep_records: bool = _RUN["keep_records"]
    data: bytes | None = None  # the file's bytes, when the context pass kept them for this turn
    if unit.loaded is not None:
        loaded = unit.loaded
    elif unit.span is not None:
        assert unit.path is not None
        segments = _read_span(unit.path, unit.span)
        from kvlint.engines.command import HELD_LINES, SegmentLines

        HELD_LINES.clear()
        # sh -c scripts are mapped to file positions from these lines, not from the file re-read whole
        HELD_LINES[unit.path] = SegmentLines(unit.path, segments, unit.lines)
        loaded = LoadResult()
        loaded.read_paths.add(unit.path)
        for offset, seg in segments:  # one at a time: each counts its documents from 0, as the context pass
            _load_segments(unit.path, [(offset, seg)], loaded)
    elif unit.held is not None:
        assert unit.path is not None
        loaded = _load_split(unit.path, unit.held, options.max_file_bytes)
        _map_loaded_sources(loaded)
    elif unit.data is not None:
        assert unit.path is not None
        # what _load_file reads of a regular file within the limit: load_text of its bytes (dropped before the
        # documents are analysed, as _load_file drops what it read)
        data, unit.data = unit.data, None
        loaded = load_text(data, unit.path)
        _map_loaded_sources(loaded)
    else:
        assert unit.path is not None
        loaded = _load_file(unit.path, options.max_file_bytes)
        _map_loaded_sources(loaded)
    if unit.walked:
        skip_walked_non_objects(loaded)
    out = _UnitResult(files=unit.files or loaded.files, documents=len(loaded.documents), pid=_PID)
    out.read_paths = set(loaded.read_paths)
    out.engine_named = loaded.engine_named
    out.source_texts = {p: t for p, t in loaded.source_texts.items() if holds_suppression_marker(t)}
    out.load_diags = configure([finding_to_diagnostic(f) for f in loaded.findings], options)
    out.kv002_files = {f.loc.file for f in loaded.findings if f.rule == "KV002" and f.loc is not None}
    seen_values: set[str] = set()
    for doc in loaded.documents:
        if doc.path in seen_values:
            continue
        unrendered = unrendered_or_error(doc)  # a KV503 at the document when it raised
        if unrendered is not None:
            seen_values.add(doc.path)
            out.values_docs.append(unrendered)
    patches = listed_patch_files(out.values_docs)
    if patches:
        # a kustomization's patch file: part of what that kustomization builds, not objects of its own
        loaded.documents = [d for d in loaded.documents if d.path not in patches]
    if data is not None:
        assert unit.path is not None
        if (unit.path in out.kv002_files or out.values_docs) and unit.path not in out.engine_named:
            # whether the file names a serving engine (the summary's "not read" count asks it of files with a
            # file-level KV002), answered from the bytes read here instead of the report reading the file again
            # (the loader answers it for a templated file it decoded as UTF-8)
            named = engine_named_in(data)
            if named is not None:
                out.engine_named[unit.path] = named
        del data
    from kvlint.workloads.gitops_local import render_scope

    # a file analysed in batches counts its chart renders per batch: which batches a process analyses depends
    # on --jobs, the batches themselves do not
    if unit.span is not None and unit.path is not None:
        try:
            file_bytes = os.stat(unit.path).st_size
        except OSError:
            file_bytes = 0
        render_scope(unit.span[0], BATCH_BYTES, file_bytes)
    else:
        render_scope(None)
    try:
        found = analyse_documents(
            loaded.documents,
            options,
            cms=ctx.cms,
            joined=ctx.joined,
            comment_suppressed=comment_suppresses(loaded, options),
        )
    finally:
        render_scope(None)
        if unit.span is not None:
            from kvlint.engines.command import HELD_LINES

            HELD_LINES.clear()
    out.workloads = found.workloads
    out.diags = found.diagnostics
    style = _RUN.get("text_style")
    if style is not None:
        out.texts = _texts(out.diags, style)
    out.suppressed = found.suppressed
    out.containers = len(found.containers)
    out.serving_paths = {cr.workload.doc.path for cr in found.containers}
    if found.containers:
        sizing = outcomes(found.containers)
        counts = out.sizing
        for why in sizing:
            counts[why] = counts.get(why, 0) + 1
        for cr, why in zip(found.containers, sizing, strict=True):
            if keep_records or (_RUN["keep_unsized"] and why not in _sized()):
                out.records.append(_record(cr, why, keep_json))
    return out


def _texts(diags: Sequence[Diagnostic], style: tuple[bool, int]) -> list[str | None]:
    """The text report's block of each of ``diags`` in ``style`` (color, width), while this process's share of
    :data:`PRETEXT_CHARS` lasts (then None: the report formats those)."""
    from kvlint.report.text import format_diagnostic

    left: int = _RUN["text_left"]
    if left <= 0:
        return [None] * len(diags)
    color, width = style
    texts: list[str | None] = [format_diagnostic(d, color, width) for d in diags]
    _RUN["text_left"] = left - sum(len(t) for t in texts if t is not None)
    return texts


@functools.cache
def _sized() -> frozenset[str]:
    from kvlint.sizing import SIZED

    return frozenset(SIZED)


def _analyse_index(i: int) -> _UnitResult:
    """Analyse unit ``i`` of the run and release it (its documents are dropped with it).

    The cyclic collector is paused from the unit's load to its release (issue 19, branch ``perf53``): the
    documents and what the pipeline builds of them are tracked containers that live exactly as long as the
    unit and make almost no reference cycles, yet with the collector on, the young collections moved them
    into the oldest generation and every growth of it by a quarter made a full collection over them and the
    run's results (one 8 MB file of 2,900 documents: 1,024 young, 93 middle and 8 full collections, about
    10% of the check's CPU). Back on once the unit is released, the next young collection takes what
    cycles it left (a unit is one file or one batch of :data:`BATCH_BYTES`: bounded as in the webhook's
    worker, :data:`kvlint.webhook.worker.COLLECT_DURING_REVIEW`)."""
    units: list[_Unit | None] = _RUN["units"]
    unit = units[i]
    units[i] = None
    assert unit is not None
    with _gc_paused():
        out = _analyse_unit(unit)
        del unit  # released while the collector is still paused
    return out


def _analyse_range(task: tuple[int, int]) -> _UnitResult:
    """Analyse units ``task[0]`` to ``task[1]`` (excluded) of the run, in order (:func:`_analyse_index`), and
    merge their results into one (:func:`_merge`): what the run takes of it is what it took of each in turn.

    One result a range rather than one a unit: the worker pickles, and the run's process unpickles and takes,
    one object with one list of each kind instead of ~60 objects with ~16 fields each, most of them empty
    (callgrind, corpus x5 with two jobs: unpickling took 61 M of the run's 125 M instructions while the
    workers ran, pickling ~30 M a worker)."""
    start, end = task
    out = _analyse_index(start)
    for i in range(start + 1, end):
        _merge(out, _analyse_index(i))
    return out


def _merge(out: _UnitResult, part: _UnitResult) -> None:
    """Add ``part`` (the next unit's result) to ``out`` as :func:`_take` adds both to a run in turn: counts
    summed, lists concatenated and dicts updated in order (a later key wins, a count keeps the place of its
    first unit), sets joined."""
    out.files += part.files
    out.documents += part.documents
    out.workloads += part.workloads
    out.load_diags.extend(part.load_diags)
    out.diags.extend(part.diags)
    out.texts.extend(part.texts)
    out.suppressed.extend(part.suppressed)
    out.records.extend(part.records)
    out.containers += part.containers
    if part.sizing:
        counts = out.sizing
        for why, n in part.sizing.items():
            counts[why] = counts.get(why, 0) + n
    out.values_docs.extend(part.values_docs)
    out.kv002_files |= part.kv002_files
    out.serving_paths |= part.serving_paths
    out.source_texts.update(part.source_texts)
    out.read_paths |= part.read_paths
    if part.engine_named:
        out.engine_named.update(part.engine_named)


def _tasks(units: Sequence[_Unit | None], n_jobs: int) -> list[tuple[int, int]]:
    """The units cut into consecutive ranges ``(start, end)`` for the workers, each range ending once its units'
    bytes (:attr:`_Unit.size`) reach a target, or at :data:`_MAX_CHUNK` units; a unit of unknown size is a range of
    its own. The target shrinks as the ranges go (guided self-scheduling): the bytes still to cut over
    ``n_jobs * _GUIDE``, but not below the run's bytes over ``n_jobs * _TASKS_PER_JOB * _GUIDE``.

    Every range is one message each way between the pool and a worker, which costs the collecting process
    about 1 ms (measured on the replicated corpus: with 8 units a message, half of the parent's CPU while the
    workers ran went to the pool's messages); ranges cut by bytes rather than by count keep a few large files
    from landing in one range. The last ranges are the small ones: the workers end within a small range of each
    other. With one target for the whole run (the run's bytes over ``n_jobs * _TASKS_PER_JOB``), the last range
    a worker took was up to 3.6% of the run's bytes (corpus x5, 31 ranges) and the two workers of a corpus x5 run
    ended 86 M instructions (2.3% of their work) apart (callgrind)."""
    sizes = [u.size if u is not None else 0 for u in units]
    total = sum(s for s in sizes if s is not None)
    least = max(1, total // max(1, n_jobs * _TASKS_PER_JOB * _GUIDE))
    share = max(1, n_jobs * _GUIDE)
    out: list[tuple[int, int]] = []
    start, acc, left = 0, 0, total
    target = max(least, left // share)
    for i, size in enumerate(sizes):
        if size is None:
            if start < i:
                out.append((start, i))
            out.append((i, i + 1))
            start, left, acc = i + 1, left - acc, 0
            continue
        acc += size
        if acc >= target or i + 1 - start >= _MAX_CHUNK:
            out.append((start, i + 1))
            start, left, acc = i + 1, left - acc, 0
            target = max(least, left // share)
    if start < len(sizes):
        out.append((start, len(sizes)))
    return out


def _worker_init() -> None:
    """A worker process (it inherited the run, frozen out of the collector's way) ignores SIGINT: Ctrl-C in a
    terminal sends it to the whole process group, and the run's process, which gets it too, ends the pool; a
    worker interrupted printed its KeyboardInterrupt traceback ("Process ForkPoolWorker-1: Traceback ...")."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # forked with SIGINT blocked (see _pool): now ignored, unblocked
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _pool(n_jobs: int) -> Any:
    """A pool of ``n_jobs`` processes forked from this one (:func:`_worker_init`), whose worker handler
    wakes only when a worker exits or the pool's state changes, not for every result waiting in the pipe.

    ``multiprocessing.pool.Pool``'s worker handler thread also waits on the results pipe
    (``Pool._get_sentinels``, CPython 3.8 onwards: bpo-35493 replaced its 0.1 s polling by a wait); it wakes
    as soon as a worker sends a result and, until the result handler thread has read it, finds the pipe
    readable again at once: it spun, taking 0.12-0.14 CPU s of this process (about half of its CPU while the
    workers ran) on corpus x30 with two jobs. It needs no result to do its work: a worker that exits is seen
    by its sentinel, and a drained cache or a closed pool is signalled on the change notifier, which stays
    among the sentinels. A Pool without the change notifier (another CPython) keeps its own sentinels."""
    import multiprocessing
    import multiprocessing.pool

    class Pool(multiprocessing.pool.Pool):
        def _get_sentinels(self) -> list[Any]:
            notifier = getattr(self, "_change_notifier", None)
            if notifier is None:  # another CPython's Pool: its own sentinels (spinning, never wrong)
                return super()._get_sentinels()  # type: ignore[misc,no-any-return]
            return [notifier._reader]

    # SIGINT is blocked in this thread while the pool is made, so that a worker is forked with it blocked: a
    # Ctrl-C that reached a worker between its fork and _worker_init (CPython's at-fork hooks,
    # threading._after_fork, run there) raised KeyboardInterrupt and printed its traceback. The pool's
    # threads, started here, keep the mask, so workers they fork to replace one are forked so too; this
    # thread's Ctrl-C, held meanwhile, is delivered when the mask is restored.
    import signal

    blocked = None
    if hasattr(signal, "pthread_sigmask"):
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return Pool(n_jobs, initializer=_worker_init, context=multiprocessing.get_context("fork"))
    finally:
        if blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


#: Seconds the run waits for the workers' next result before it looks whether a worker ended (:func:`_collect`).
WORKER_CHECK_SECONDS = 1.0


class WorkerLost(RuntimeError):
    """A worker process of a run with several jobs ended before the run did (killed: the kernel's
    out-of-memory killer sends SIGKILL); the results of the units it held are lost, so the run cannot finish."""


def _analyse_task(arg: tuple[int, tuple[int, int]]) -> _UnitResult:
    """In a worker: mark task ``arg[0]`` as held by this process (:func:`_collect`), then analyse its range of
    units ``arg[1]`` (:func:`_analyse_range`)."""
    index, task = arg
    _RUN["held_by"][index] = _PID
    return _analyse_range(task)


def _lost_tasks(held_by: Sequence[int], done: set[int], n_tasks: int, live: set[int]) -> bool:
    """Whether a task's result can no longer come: a task not ``done`` (its result not received) is held by a
    process not in ``live`` (it took the task and ended), or tasks remain and none of them is held by a live
    process (a worker that ended between taking a task and marking it, with the others idle)."""
    outstanding = [i for i in range(n_tasks) if i not in done]
    if not outstanding:
        return False
    running = False
    for i in outstanding:
        pid = held_by[i]
        if pid == 0:
            continue
        if pid not in live:
            return True
        running = True
    return not running


def _collect(pool: Any, tasks: Sequence[tuple[int, int]]) -> Iterator[_UnitResult]:
    """The results of ``tasks`` (ranges of units, :func:`_analyse_range`) run on ``pool``, in order, raising
    :class:`WorkerLost` when a worker ended with a task in hand. ``multiprocessing.pool.Pool`` starts a new
    process for one that ended, but the task that process was running is never run again nor failed: waiting
    on its result would wait forever. The pool's workers end only when it is terminated, so any of them that
    ended during the run died (a signal, or an exit from the analysis).

    Each worker marks the task it takes with its process id in shared memory (:func:`_analyse_task`) and each
    result is noted as it arrives (whatever the order); when no result came for :data:`WORKER_CHECK_SECONDS`
    and a worker has ended, the run is lost only if a task whose result has not arrived is held by a process
    that ended, or no live process holds any of the tasks left (:func:`_lost_tasks`), at two checks in a row
    (a result the ended worker sent may still be in the pipe at the first). A worker that ended idle, after
    its last result, loses nothing: the run completes with every result (:class:`ResultLockProbe` frees
    the result pipe's lock if it ended holding it)."""
    import threading

    n_tasks = len(tasks)
    held_by = _RUN["held_by"]
    cond = threading.Condition()
    received: set[int] = set()  # the tasks whose result arrived
    ready: dict[int, tuple[bool, Any]] = {}  # those not yet given: (ok, result or exception)

    def arrived(index: int, ok: bool, value: Any) -> None:
        with cond:
            received.add(index)
            ready[index] = (ok, value)
            cond.notify()

    for i, task in enumerate(tasks):
        pool.apply_async(
            _analyse_task,
            ((i, task),),
            callback=functools.partial(arrived, i, True),
            error_callback=functools.partial(arrived, i, False),
        )
    seen = {w.pid: w for w in pool._pool}  # every worker process the pool had, by process id
    suspect = False
    probe = ResultLockProbe(getattr(pool._outqueue, "_wlock", None))
    for i in range(n_tasks):
        while True:
            with cond:
                timed_out = False
                if i not in ready:
                    timed_out = not cond.wait(WORKER_CHECK_SECONDS)
                item = ready.pop(i, None)
            if item is not None:
                break
            if not timed_out:  # another task's result came: wait on for this one
                continue
            for w in list(pool._pool):
                seen.setdefault(w.pid, w)
            ended = [w for w in seen.values() if w.exitcode is not None]
            if not ended:
                suspect = False
                continue
            live = {pid for pid, w in seen.items() if w.exitcode is None}
            with cond:
                lost = _lost_tasks(held_by, set(received), n_tasks, live)
                results = len(received)
            if lost and suspect:
                raise WorkerLost(_ended_message(ended[0].exitcode))
            suspect = lost
            if not lost:
                probe.check(results)
        ok, value = item
        if not ok:
            raise value
        yield value


#: Seconds :class:`ResultLockProbe` waits for the result pipe's write lock at one check.
_RESULT_LOCK_WAIT = 0.2


class ResultLockProbe:
    """Frees the result pipe's write lock when a worker ended holding it, while the run goes on (:func:`_collect`).

    A worker sends a result under that lock and releases it just after; killed in between, once the run has
    read its result (it died "idle", with nothing lost), it never releases it and no other worker can send
    a result: the run waited forever. :meth:`check` is called at each check that found a worker ended and no
    task lost, with the number of results received so far. A lock found taken at two checks in a row with no
    result received between them (a second apart at least, while the run reads the pipe as fast as results
    come) is held by the ended worker, whose last message was sent whole (the run has every result it took),
    and is released for the live ones. A result received between two checks shows the lock was released and
    taken again since the first: it was not held for good, and the count starts again (a live worker's turn
    at the lock seen at one check, and another's at a check much later, were taken for one hold, and the
    second worker's lock was released under it). No thread of this process takes the lock while the run
    goes on (the pool's task thread takes it only once the pool is ending, :func:`_end_pool`)."""

    def __init__(self, lock: Any) -> None:
        self.lock = lock  # None on a platform whose queue has no write lock: nothing to free
        self.taken_at: int | None = None  # the results received when the last check found it taken

    def check(self, results: int) -> bool:
        """Look at the lock once, ``results`` being the number of results received so far; True when it was
        taken at this check and the last with no result received between them, and so released now."""
        if self.lock is None:  # pragma: no cover - a platform whose queue has no write lock
            return False
        if self.lock.acquire(timeout=_RESULT_LOCK_WAIT):
            self.lock.release()
            self.taken_at = None
            return False
        if self.taken_at == results:
            self.lock.release()
            self.taken_at = None
            return True
        self.taken_at = results
        return False


class _ResultPipeClosed:
    """What stands for the result pipe's write lock in this process once its pool is ending (:func:`_end_pool`):
    taking it fails as a send on the closed pipe does (``OSError``, which the pool's task thread and
    ``Pool.terminate``'s caller expect of their last message, an end sentinel the run does not need), so no
    thread of this process takes or waits for the lock itself, which a worker killed holding it never
    releases."""

    def __enter__(self) -> None:
        raise OSError("the pool is ending: its result pipe takes no more messages")

    def __exit__(self, *exc: object) -> None:  # pragma: no cover - __enter__ always raises
        return None


def _end_pool(pool: Any) -> None:
    """Terminate ``pool`` (as ``with pool:`` does), also when a worker died. An idle worker waits for its next
    task holding the task pipe's read lock, and a worker sending a result holds the result pipe's write lock;
    killed there, it never releases it, and ``Pool.terminate`` waits for those locks forever (it drains the task
    pipe and writes to the result pipe under them). Killed while writing a result larger than the pipe holds,
    it also left part of a message in the pipe, and the pool's result thread waits for the rest forever
    (``Pool.terminate`` joins it).

    Whether a worker has ended cannot be known before the workers are ended: a SIGKILL takes effect after
    ``os.kill`` returns (the process still runs, without its exit status, until the kernel ends it), and a
    worker can be killed while the pool is terminated. ``Pool.terminate``, chosen when no worker showed an exit
    status, waited forever for the lock that an idle worker killed an instant before held (the run had every
    result; test_a_worker_killed_while_idle_does_not_fail_a_run_that_has_every_result hung so in 2 of 24 runs
    on a loaded machine). So in every case: the pool's worker thread is stopped first (it replaces a worker that
    ends, and one started after the others are killed would hold the pipes), the remaining workers are killed,
    stopped ones too, and joined (the run needs nothing more of them; ``Pool.terminate`` sends SIGTERM, which a
    stopped process does not take, and joins it), this process's write end of the result pipe, the last one
    left, is closed (the result thread's read ends: it returns on the end of the pipe, with or without a message
    cut short), and the task pipe's read lock, which only workers take, is freed. The result pipe's write lock
    is left as it is, free or held by a killed worker: from the start, this process's threads no longer take it
    (:class:`_ResultPipeClosed` stands for it), the pool's task thread for its last message and
    ``Pool.terminate`` for its own, which would only fail on the closed pipe. (It was freed after waiting up to
    1 s for it, whoever held it then: on a loaded machine that could be the task thread's own hold, which the
    thread's release then found released, "semaphore or lock released too many times".)"""
    import multiprocessing.pool

    # before the task thread can reach its last message (once the worker thread has stopped), and
    # Pool.terminate its own: neither takes the result pipe's lock from now on
    pool._outqueue._wlock = _ResultPipeClosed()
    handler = pool._worker_handler
    handler._state = multiprocessing.pool.TERMINATE  # no replacement for those killed now
    pool._change_notifier.put(None)  # wakes it: it ends, and sends the task thread its end
    handler.join()
    for w in list(pool._pool):
        w.kill()
    for w in list(pool._pool):
        w.join()
    pool._cache.clear()  # the results still awaited will not come (Pool.terminate asserts none with no result thread)
    pool._outqueue._writer.close()
    rlock = pool._inqueue._rlock  # only workers take it, and none is left
    rlock.acquire(False)  # free, or taken by a worker that was killed holding it
    rlock.release()
    try:
        pool.terminate()
    except OSError:  # its end message to the result thread, on the pipe closed above (the thread has ended)
        pool._task_handler.join()
        pool._result_handler.join()


def _ended_message(code: int) -> str:
    """The :class:`WorkerLost` message for a worker that ended with ``code`` (its ``exitcode``)."""
    if code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "an unknown signal"
        how = f"killed by signal {-code}, {name}"
        if -code == signal.SIGKILL:
            how += ", which the kernel's out-of-memory killer sends"
    else:
        how = f"exit status {code}"
    return (
        f"a worker process ended before the run did ({how}); the results of the files it was "
        "checking are lost: run again with more memory, fewer jobs (--jobs), or --jobs 1"
    )


# --------------------------------------------------------------------------------------------------
# the run


def stream_check(
    paths: Sequence[str],
    options: Options | None = None,
    *,
    stdin: TextIO | BinaryIO | None = None,
    jobs: int = 1,
    keep_records: bool = True,
    keep_json: bool = True,
    keep_unsized: bool = True,
    text_style: tuple[bool, int] | None = None,
) -> CheckResult:
    """Lint ``paths`` as :func:`kvlint.pipeline.run_check` does, streaming (see the module docstring).

    Args:
        jobs: worker processes (1: this process only). The diagnostics are the same for every value.
        keep_records: keep a :class:`ContainerRecord` per serving container in ``containers`` (the JSON,
            SARIF, JUnit and Markdown reports read them); when False only the count and sizing outcomes
            are kept (``CheckResult.serving_count``/``sizing_counts``), plus, with ``keep_unsized``, a record
            per container that was not sized (``--require-sizing``).
        keep_json: records carry the JSON report's entry.
        text_style: ``(color, width)`` of the text report to be written, when there is one: with several jobs,
            each worker formats the blocks of the diagnostics it found (up to :data:`PRETEXT_CHARS` in all) and
            the report takes them from ``CheckResult.text_cache`` instead of formatting them after the run, in
            one process (about 5% of a one-job run's instructions on the corpus). The report is the same.

    The diagnostics are held compactly until the end (:mod:`kvlint.diagstore`): ``diagnostics`` of the
    result is a read-only :class:`~kvlint.diagstore.DiagnosticView` that decodes them as they are read.

    Raises:
        FileNotFoundError, kvlint.render.RenderError: as :func:`kvlint.pipeline.run_check`.
        WorkerLost: with several jobs, a worker process ended (killed) before the run did.
    """
    from kvlint.workloads.find import join_services

    options = options or Options()
    # the collector stays paused from the context pass until what it built is frozen: the documents hold no
    # reference cycles, and a collection over them (the first one after the pass, or a full one before
    # freezing) cost ~0.1 CPU s a corpus pass in the serial part; what freeze keeps (garbage too) goes back
    # to the collector at the end of the run
    with _gc_paused():
        plan = _plan(paths, stdin, options, split=jobs > 1)
        ctx = plan.context
        ctx.joined = join_services(ctx.providers, ctx.services)
        ctx.services = []  # each service is joined in its turn (in a worker with several jobs)
        if _jobs_for(plan, jobs) > 1:
            _warm_up()  # once here, not in every worker (frozen with the context)
        gc.freeze()  # the catalogues and the context live for the whole run: no collection scans them again
    try:
        return _run_units(
            plan,
            options,
            jobs,
            keep_json=keep_json,
            keep_records=keep_records,
            keep_unsized=keep_unsized,
            text_style=text_style,
        )
    finally:
        gc.unfreeze()
        _RUN.clear()


def _jobs_for(plan: _Plan, jobs: int) -> int:
    """The processes that analyse the units of ``plan`` when ``jobs`` are asked for: no more than the units,
    and one for an input under :data:`PARALLEL_MIN_BYTES` (forking costs more than it saves)."""
    if plan.total_bytes < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(jobs, len(plan.units)))


def _run_units(
    plan: _Plan,
    options: Options,
    jobs: int,
    *,
    keep_json: bool,
    keep_records: bool,
    keep_unsized: bool,
    text_style: tuple[bool, int] | None = None,
) -> CheckResult:
    """The units of ``plan`` analysed (in ``jobs`` processes) and their results put together (see
    :func:`stream_check`)."""
    from kvlint.diagstore import DiagnosticStore, finish
    from kvlint.findcap import FileCap
    from kvlint.pipeline import configure
    from kvlint.rules.runner import finding_to_diagnostic
    from kvlint.suppress import apply_comment_suppressions, comment_suppresses, may_have_comments

    ctx = plan.context
    _RUN.update(
        options=options,
        context=ctx,
        keep_json=keep_json and keep_records,
        keep_records=keep_records,
        keep_unsized=keep_unsized,
    )
    result = CheckResult(exemptions_allowed=options.exemptions_allowed)
    load_diags = DiagnosticStore()
    loaded = LoadResult()
    # the loader's findings of a rule in a file past the first MAX_PER_RULE counted, not kept: a file's batches are
    # units of their own, so the bound is kept across them (kvlint.findcap.FileCap)
    file_cap = FileCap(comment_suppresses(loaded, options))
    diags = DiagnosticStore()
    values: list[Finding] = []
    kv002: set[str] = set()
    sizing: Counter[str] = Counter()
    serving = 0
    units = plan.units
    n_jobs = _jobs_for(plan, jobs)
    _RUN["units"] = units
    LAST_PIDS.clear()
    texts: dict[Diagnostic, str] = {}
    if n_jobs > 1:
        import multiprocessing

        if text_style is not None:
            # each worker formats its share (it inherits this budget with the run)
            _RUN.update(text_style=text_style, text_left=PRETEXT_CHARS // n_jobs)
            result.text_cache = (text_style, texts)
        tasks = _tasks(units, n_jobs)
        # which process took each task (shared with the workers forked below; see _collect)
        _RUN["held_by"] = multiprocessing.RawArray("q", max(1, len(tasks)))
        pool = _pool(n_jobs)
        try:
            # workers find the units (and the context they were read against) in the memory they
            # inherited; only a range of indices goes to them and compact results come back, in input
            # order (see _tasks), one merged result a range (_analyse_range)
            for part in _collect(pool, tasks):
                _take(part, result, load_diags, diags, values, kv002, loaded, file_cap)
                if part.texts:
                    for d, text in zip(part.diags, part.texts, strict=True):
                        if text is not None:
                            texts[d] = text
                if part.sizing:
                    sizing.update(part.sizing)
                serving += part.containers
                result.serving_paths |= part.serving_paths
        finally:
            _end_pool(pool)
    else:
        for i in range(len(units)):
            part = _analyse_index(i)
            _take(part, result, load_diags, diags, values, kv002, loaded, file_cap)
            if part.sizing:
                sizing.update(part.sizing)
            serving += part.containers
            result.serving_paths |= part.serving_paths
    load_diags.extend(file_cap.rest())
    # the load findings of load_inputs: files, then the Helm values files, then unreachable paths
    flagged = set(kv002)
    for unrendered in values:
        path = unrendered.loc.file if unrendered.loc is not None else ""
        if path in flagged:
            continue
        flagged.add(path)
        load_diags.extend(configure([finding_to_diagnostic(unrendered)], options))
    result.files += len(plan.trailing)
    load_diags.extend(configure([finding_to_diagnostic(f) for f in plan.trailing], options))

    def suppress(
        ds: list[Diagnostic],
    ) -> tuple[list[Diagnostic], list[SuppressedDiagnostic], list[Diagnostic]]:
        kept, suppressed, notes = apply_comment_suppressions(ds, loaded, options)
        return kept, suppressed, configure(notes, options)

    result.diagnostics, suppressed = finish(
        [load_diags, diags], suppress, lambda path: may_have_comments(path, loaded, options)
    )
    result.suppressed_diagnostics.extend(suppressed)
    result.suppressed = len(result.suppressed_diagnostics)
    result.serving_count = serving
    result.sizing_counts = dict(sizing)
    return result


def _take(
    part: _UnitResult,
    result: CheckResult,
    load_diags: DiagnosticStore,
    diags: DiagnosticStore,
    values: list[Finding],
    kv002: set[str],
    loaded: LoadResult,
    file_cap: FileCap,
) -> None:
    LAST_PIDS.add(part.pid)
    result.files += part.files
    result.documents += part.documents
    result.workloads += part.workloads
    result.containers.extend(part.records)
    result.suppressed_diagnostics.extend(part.suppressed)
    loaded.source_texts.update(part.source_texts)
    loaded.read_paths |= part.read_paths
    # (after the unit's texts are known: the cap does not count what their comments suppress)
    load_diags.extend(file_cap.take(part.load_diags))
    diags.extend(part.diags)
    values.extend(part.values_docs)
    kv002 |= part.kv002_files
    if part.engine_named:
        result.engine_named.update(part.engine_named)


def _register() -> None:
    """Hand :func:`render_batches` to :mod:`kvlint.render` (:data:`kvlint.render.STREAM_BATCHES`)."""
    from kvlint import render

    render.STREAM_BATCHES = render_batches


_register()
