"""Diagnostics held compactly between the analysis and the report (issue 19: memory flat in the input).

A streaming check (:mod:`kvlint.stream`) releases every document once it is analysed, but its findings must
be kept until the end: suppression comments, de-duplication and the report's order (file, line, column,
rule) are decided over all of them. A :class:`~kvlint.types.Diagnostic` costs about 0.9 KB as Python objects
(its message with the arithmetic, the remedy, the location tuple), so on a 20,000-document input the
findings were nearly all of the memory growth. Here they are kept as:

* past the first :data:`PLAIN` (kept as objects: encoding costs CPU that a small run does not repay), the
  fields of each :data:`CHUNK` consecutive diagnostics pickled together and compressed with ``zlib``
  (about 0.2 KB a diagnostic: remedies and messages repeat their wording across findings);
* per diagnostic, in ``array`` columns, only what the end of the run decides on without decoding: where it
  is (an index into the file names seen, line, column), its rule, severity, and a hash of its
  de-duplication key (32 bytes).

:func:`finish` applies what :func:`kvlint.pipeline._dedupe_sorted` and the comment suppressions do to a
list, with the same result, and returns a :class:`DiagnosticView`: a read-only sequence that decodes the
chunks as the report reads them (a few decoded chunks are kept for sequential reads).
"""

from __future__ import annotations

import pickle
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from dataclasses import fields
from typing import Any, overload

from kvlint.types import Diagnostic, findings_stood_for

#: diagnostics per compressed chunk
CHUNK = 256
#: the first diagnostics of a store are kept as objects (about 0.9 KB each): encoding costs ~30 µs a
#: diagnostic, which only a run with more findings than this repays in memory
PLAIN = 4096
#: decoded chunks kept for reading (sequential reads in report order decode each chunk about once)
_CACHED_CHUNKS = 16
#: diagnostics a view reads at a time in its order (:meth:`DiagnosticView._read`): as many as the cache holds
_WINDOW = CHUNK * _CACHED_CHUNKS

_FIELDS = tuple(f.name for f in fields(Diagnostic))


def _encode(items: Sequence[Diagnostic]) -> bytes:
    rows = [tuple(getattr(d, f) for f in _FIELDS) for d in items]
    return zlib.compress(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL), 1)


def _decode(blob: bytes) -> list[Diagnostic]:
    return [Diagnostic(*row) for row in pickle.loads(zlib.decompress(blob))]


def dedupe_key(d: Diagnostic) -> tuple[Any, ...]:
    """What makes two diagnostics the same finding (the first one is reported); the key of
    :func:`kvlint.pipeline._dedupe_sorted` too."""
    return (d.rule, d.loc, d.message, d.object, d.container)


class DiagnosticStore:
    """An append-only, compact list of diagnostics (see the module docstring)."""

    def __init__(self) -> None:
        self._chunks: list[bytes | list[Diagnostic]] = []
        self._tail: list[Diagnostic] = []
        self._cache: OrderedDict[int, list[Diagnostic]] = OrderedDict()
        self.files: list[str] = []
        self._file_index: dict[str, int] = {}
        self.file_of = array("I")  # index into files; 0 is "" (no location)
        self.line = array("q")
        self.column = array("q")
        self.rules: list[str] = []
        self._rule_index: dict[str, int] = {}
        self.rule_of = array("H")
        self.severity = array("B")  # 0 info, 1 warning, 2 error, 3 anything else
        self.key_hash = array("q")
        self.has_loc = array("B")
        #: index -> stands_for of the few diagnostics that stand for more than one (:mod:`kvlint.findcap`)
        self.stood_for: dict[int, int] = {}
        self._intern_file("")

    def _intern_file(self, name: str) -> int:
        i = self._file_index.get(name)
        if i is None:
            i = self._file_index[name] = len(self.files)
            self.files.append(name)
        return i

    def append(self, d: Diagnostic) -> None:
        """Add ``d`` at the end."""
        loc = d.loc
        self.file_of.append(self._intern_file(loc.file if loc is not None else ""))
        self.line.append(loc.line if loc is not None else 0)
        self.column.append(loc.column if loc is not None else 0)
        self.has_loc.append(loc is not None)
        r = self._rule_index.get(d.rule)
        if r is None:
            r = self._rule_index[d.rule] = len(self.rules)
            self.rules.append(d.rule)
        self.rule_of.append(r)
        self.severity.append(_SEVERITY_CODE.get(d.severity, 3))
        self.key_hash.append(hash(dedupe_key(d)))
        n = findings_stood_for(d)
        if n > 1:
            self.stood_for[len(self.file_of) - 1] = n
        self._tail.append(d)
        if len(self._tail) == CHUNK:
            self._chunks.append(_encode(self._tail) if len(self) > PLAIN else self._tail)
            self._tail = []

    def extend(self, ds: Iterable[Diagnostic]) -> None:
        """Add each of ``ds`` at the end, in order."""
        for d in ds:
            self.append(d)

    def __len__(self) -> int:
        return len(self.file_of)

    def get(self, i: int) -> Diagnostic:
        """The ``i``-th diagnostic added (0-based; ``IndexError`` when out of range)."""
        if not 0 <= i < len(self):
            raise IndexError(i)
        c, k = divmod(i, CHUNK)
        if c == len(self._chunks):
            return self._tail[k]
        held = self._chunks[c]
        if isinstance(held, list):
            return held[k]
        chunk = self._cache.get(c)
        if chunk is None:
            chunk = self._cache[c] = _decode(held)
            if len(self._cache) > _CACHED_CHUNKS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(c)
        return chunk[k]

    def chunk(self, c: int) -> list[Diagnostic]:
        """The diagnostics of the ``c``-th chunk (the unfilled tail after the last), decoded as :meth:`get`
        decodes them (through the same cache)."""
        if c == len(self._chunks):
            return self._tail
        held = self._chunks[c]
        if isinstance(held, list):
            return held
        rows = self._cache.get(c)
        if rows is None:
            rows = self._cache[c] = _decode(held)
            if len(self._cache) > _CACHED_CHUNKS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(c)
        return rows

    def __iter__(self) -> Iterator[Diagnostic]:
        for c, held in enumerate(self._chunks):
            yield from held if isinstance(held, list) else self._cache.get(c) or _decode(held)
        yield from self._tail

    def rule_at(self, i: int) -> str:
        """The rule id of the ``i``-th diagnostic (without decoding it)."""
        return self.rules[self.rule_of[i]]


_SEVERITY_CODE = {"info": 0, "warning": 1, "error": 2}
_SEVERITY_NAME = {v: k for k, v in _SEVERITY_CODE.items()}


class DiagnosticView(Sequence[Diagnostic]):
    """A read-only sequence of the diagnostics of ``stores`` in ``order``; reads decode on demand, and
    ``attach`` (when given) is applied to each diagnostic read."""

    def __init__(
        self,
        stores: Sequence[DiagnosticStore],
        order: Iterable[int],
        attach: Callable[[Diagnostic], Diagnostic] | None = None,
    ) -> None:
        """``order``: entries as ``(store number << 32) | index in that store``."""
        self._stores = list(stores)
        self._attach = attach
        codes = array("Q", order)
        self._which = array("H", (e >> 32 for e in codes))
        self._index = array("I", (e & _LOW for e in codes))

    def __len__(self) -> int:
        return len(self._index)

    @overload
    def __getitem__(self, i: int) -> Diagnostic: ...

    @overload
    def __getitem__(self, i: slice) -> list[Diagnostic]: ...

    def __getitem__(self, i: int | slice) -> Diagnostic | list[Diagnostic]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        d = self._stores[self._which[i]].get(self._index[i])
        return d if self._attach is None else self._attach(d)

    def __iter__(self) -> Iterator[Diagnostic]:
        yield from self._read(range(len(self)))

    def _read(self, positions: Sequence[int]) -> Iterator[Diagnostic]:
        """The diagnostics at ``positions`` of this view, in that order, read :data:`_WINDOW` at a time: the
        chunks a window needs are each decoded once for it, whatever order the window visits them in. Read
        one by one (:meth:`DiagnosticStore.get`), a report whose order jumps between chunks decoded a chunk of
        256 for nearly every diagnostic: 100 KAITO Workspaces sharing one inference ConfigMap of 1,000 unknown
        options (100,000 KV205 located at the ConfigMap's 1,000 lines, reported line by line) took 60 s."""
        stores, attach, which, index = self._stores, self._attach, self._which, self._index
        for lo in range(0, len(positions), _WINDOW):
            window = positions[lo : lo + _WINDOW]
            by_chunk: dict[tuple[int, int], list[int]] = {}
            for k, p in enumerate(window):
                by_chunk.setdefault((which[p], index[p] // CHUNK), []).append(k)
            out: list[Diagnostic | None] = [None] * len(window)
            for (s, c), ks in by_chunk.items():
                rows = stores[s].chunk(c)
                for k in ks:
                    out[k] = rows[index[window[k]] % CHUNK]
            for d in out:
                assert d is not None
                yield d if attach is None else attach(d)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, DiagnosticView)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DiagnosticView({len(self)} diagnostics)"

    def files(self) -> set[str]:
        """The files the diagnostics are located in (``""`` for those without a location)."""
        return {f for st in self._stores for f in st.files}

    def mapped(self, fn: Callable[[Diagnostic], Diagnostic]) -> DiagnosticView:
        """The same diagnostics, each read through ``fn`` (after this view's own function, if any)."""
        inner = self._attach
        view = DiagnosticView.__new__(DiagnosticView)
        view._stores, view._which, view._index = self._stores, self._which, self._index
        view._attach = fn if inner is None else (lambda d: fn(inner(d)))
        return view

    def of_rules(self, rules: Container[str]) -> Iterator[Diagnostic]:
        """The diagnostics whose rule is one of ``rules``, in order, as iterating the view gives them; the
        others are not decoded (a view's function, :meth:`mapped`, never changes a rule id)."""
        stores = self._stores
        yield from self._read(
            [
                p
                for p, (s, i) in enumerate(zip(self._which, self._index, strict=True))
                if stores[s].rule_at(i) in rules
            ]
        )

    def severity_counts(self) -> dict[str, int]:
        """Number of diagnostics per severity name, without decoding them."""
        out: dict[str, int] = {}
        for s, i in zip(self._which, self._index, strict=True):
            code = self._stores[s].severity[i]
            name = _SEVERITY_NAME.get(code)
            if name is None:  # not one of the three: read it
                name = self._stores[s].get(i).severity
            out[name] = out.get(name, 0) + 1
        return out

    def standing(self) -> list[tuple[str, int]]:
        """``(severity, stands_for)`` of each diagnostic that stands for more than one finding (the cap's finding
        for the rest, :mod:`kvlint.findcap`), in order, decoding only those."""
        out: list[tuple[str, int]] = []
        for s, i in zip(self._which, self._index, strict=True):
            n = self._stores[s].stood_for.get(i)
            if n is not None:
                code = self._stores[s].severity[i]
                name = _SEVERITY_NAME.get(code)
                out.append((name if name is not None else self._stores[s].get(i).severity, n))
        return out


def finish(
    stores: Sequence[DiagnosticStore],
    suppress: Callable[[list[Diagnostic]], tuple[list[Diagnostic], list[Any], list[Diagnostic]]],
    may_be_suppressed: Callable[[str], bool],
) -> tuple[DiagnosticView, list[Any]]:
    """The reported diagnostics of ``stores`` (read as one list, in order) and the suppressed ones.

    Equivalent to ``kept, suppressed, notes = suppress(all)``, then ``_dedupe_sorted(kept + notes)``
    (:func:`kvlint.pipeline._dedupe_sorted`: the first of equal :func:`dedupe_key` wins; a stable sort on
    file, line, column, rule), where ``suppress`` is
    :func:`kvlint.suppress.apply_comment_suppressions` bound to the run's texts. Only the diagnostics in a
    file for which ``may_be_suppressed(file)`` is true (a file with ``kvlint:`` comments, or one the
    suppression may read from disk), with a location and not KV003, are decoded and passed to ``suppress``
    (in their order); the others are kept as they are, which is what ``suppress`` does with them. The
    notes ``suppress`` returns (KV003 on a malformed comment) are added in a store of their own.
    """
    candidates: list[int] = []  # entries as (store << 32) | index
    for s, store in enumerate(stores):
        maybe = [bool(f) and may_be_suppressed(f) for f in store.files]
        for i in range(len(store)):
            if maybe[store.file_of[i]] and store.has_loc[i] and store.rule_at(i) != "KV003":
                candidates.append(s << 32 | i)
    checked = [stores[e >> 32].get(e & _LOW) for e in candidates]
    kept, suppressed, notes = suppress(checked)
    # suppress returns the diagnostics it keeps as the same objects, in order
    kept_ids = {id(d) for d in kept}
    dropped = {e for e, d in zip(candidates, checked, strict=True) if id(d) not in kept_ids}
    del checked, kept, kept_ids, candidates
    note_store = DiagnosticStore()
    note_store.extend(notes)
    every = [*stores, note_store]
    # the first of equal keys wins, in the order of the stores read one after another
    seen: dict[int, int] = {}
    collided: dict[int, list[int]] = {}
    entries: list[int] = []
    for s, store in enumerate(every):
        for i in range(len(store)):
            e = s << 32 | i
            if e in dropped:
                continue
            h = store.key_hash[i]
            first = seen.get(h)
            if first is None:
                seen[h] = e
            else:
                key = dedupe_key(store.get(i))
                same = [first, *collided.get(h, [])]
                if any(dedupe_key(every[t >> 32].get(t & _LOW)) == key for t in same):
                    continue
                collided.setdefault(h, []).append(e)
            entries.append(e)
    del seen, collided, dropped
    # the report's order: file, line, column, rule (a stable sort: equal places keep their order)
    names = sorted({f for st in every for f in st.files})
    file_rank = {f: n for n, f in enumerate(names)}
    ranks = [[file_rank[f] for f in st.files] for st in every]
    rule_rank = {r: n for n, r in enumerate(sorted({r for st in every for r in st.rules}))}
    rules = [[rule_rank[r] for r in st.rules] for st in every]

    def order_key(e: int) -> tuple[int, int, int, int]:
        s, i = e >> 32, e & _LOW
        st = every[s]
        return (ranks[s][st.file_of[i]], st.line[i], st.column[i], rules[s][st.rule_of[i]])

    entries.sort(key=order_key)
    return DiagnosticView(every, entries), suppressed


_LOW = (1 << 32) - 1


__all__ = ["CHUNK", "DiagnosticStore", "DiagnosticView", "dedupe_key", "finish"]
