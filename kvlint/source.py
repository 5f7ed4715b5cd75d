"""Source positions for values read from YAML/JSON.

Every mapping and sequence kvlint loads is an :class:`LDict` or :class:`LList`: a plain ``dict`` /
``list`` that also remembers where each of its values (and keys) stood in the file, so a diagnostic can
point at the flag that is wrong rather than at line 1. Scalars stay plain Python values; their
position is looked up on the container that holds them (:func:`loc_of`).

The loader (:mod:`kvlint.load`) records the positions of a container's entries *packed*: one ``int`` per
position (:class:`Packing`), in a plain dict or list that holds no object the garbage collector tracks. The
``locs`` / ``key_locs`` a reader sees are built from them the first time they are read (most containers'
positions never are: labels, Services, resources...). Creating a :class:`Loc` per value cost the loader
about as much as building the value, and the first garbage collection after loading scanned every one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

_new_tuple = tuple.__new__


class Loc(NamedTuple):
    """A position in an input file.

    ``line`` and ``column`` are 1-based (as editors, SARIF and GitHub annotations count).
    ``file`` is the path as the user gave it (``-`` for standard input). A named tuple rather than a
    dataclass: the loader creates one per YAML value, and tuple construction is several times cheaper;
    it is immutable, hashable and ordered (file, line, column) all the same.
    """

    file: str
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Packing(NamedTuple):
    """How the positions of one parsed text are packed: position ``(line, column)`` (0-based, as libyaml's
    marks count) is the int ``line << shift | column``, and stands for ``Loc(path, line + line_base,
    column + 1)``.

    ``shift`` is wide enough for every column of the text (a column is less than the text's length), so
    unpacking is exact; for a text of less than ``2**shift`` characters and ``2**(30 - shift)`` lines the
    packed int is a one-digit int, which CPython adds and multiplies in its fast path.
    """

    path: str
    line_base: int
    shift: int

    @classmethod
    def for_text(cls, path: str, line_base: int, length: int) -> Packing:
        """The packing of a text of ``length`` characters read from ``path``, its first line being line
        ``line_base`` (1-based) of the file."""
        return cls(path, line_base, (length + 1).bit_length())

    def pack(self, line: int, column: int) -> int:
        """The packed form of the 0-based ``line`` and ``column`` (``column`` at most the text's length)."""
        return line * (1 << self.shift) + column

    def pack_loc(self, loc: Loc) -> int:
        """The packed form of ``loc`` (a position in this text)."""
        return self.pack(loc.line - self.line_base, loc.column - 1)

    def unpack(self, pos: int) -> Loc:
        """The :class:`Loc` of the packed position ``pos``."""
        shift = self.shift
        return _new_tuple(Loc, (self.path, (pos >> shift) + self.line_base, (pos & ((1 << shift) - 1)) + 1))

    def unpack_dict(self, packed: dict[Any, int]) -> dict[Any, Loc]:
        """``{k: self.unpack(p) for k, p in packed.items()}``."""
        path, base, shift = self
        mask = (1 << shift) - 1
        return {k: _new_tuple(Loc, (path, (p >> shift) + base, (p & mask) + 1)) for k, p in packed.items()}

    def unpack_list(self, packed: list[int]) -> list[Loc]:
        """``[self.unpack(p) for p in packed]``."""
        path, base, shift = self
        mask = (1 << shift) - 1
        return [_new_tuple(Loc, (path, (p >> shift) + base, (p & mask) + 1)) for p in packed]


class LDict(dict):
    """A ``dict`` loaded from YAML that knows where it and its entries came from.

    Attributes:
        loc: position of the mapping itself (its first key).
        locs: key -> position of that key's *value*.
        key_locs: key -> position of the key.

    ``locs`` and ``key_locs`` are built on first reading from the packed positions the loader stored
    (``_plocs``, ``_pkey_locs``: key -> position packed by the :class:`Packing` ``_packing``, while
    ``_locs``/``_key_locs`` are None); assigning either replaces it. ``loc`` likewise: the loader stores
    the mapping's own position packed (an int in ``_loc``), made a :class:`Loc` when first read.
    """

    # ``__weakref__``: a pod spec's node affinity is read once per pod, memoised while the spec lives
    # (:func:`kvlint.accelerators.placement._per_pod_spec`); 8 bytes a mapping
    __slots__ = ("_loc", "_locs", "_key_locs", "_plocs", "_pkey_locs", "_packing", "__weakref__")
    _plocs: dict[Any, int]
    _pkey_locs: dict[Any, int]
    _packing: Packing

    def __init__(self, *args: Any, loc: Loc | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loc: Loc | int | None = loc
        self._locs: dict[Any, Loc] | None = {}
        self._key_locs: dict[Any, Loc] | None = {}

    @property
    def loc(self) -> Loc | None:
        return _container_loc(self)

    @loc.setter
    def loc(self, value: Loc | None) -> None:
        self._loc = value

    @property
    def locs(self) -> dict[Any, Loc]:
        locs = self._locs
        if locs is None:
            locs = self._locs = self._packing.unpack_dict(self._plocs)
            del self._plocs
        return locs

    @locs.setter
    def locs(self, value: dict[Any, Loc]) -> None:
        self._locs = value

    @property
    def key_locs(self) -> dict[Any, Loc]:
        key_locs = self._key_locs
        if key_locs is None:
            key_locs = self._key_locs = self._packing.unpack_dict(self._pkey_locs)
            del self._pkey_locs
        return key_locs

    @key_locs.setter
    def key_locs(self, value: dict[Any, Loc]) -> None:
        self._key_locs = value


class LList(list):
    """A ``list`` loaded from YAML that knows where it and each item came from.

    Attributes:
        loc: position of the sequence itself.
        locs: index -> position of that item (same length as the list).

    ``locs`` is built on first reading from the packed positions the loader stored (``_plocs``, packed by
    the :class:`Packing` ``_packing``, while ``_locs`` is None); assigning it replaces it. ``loc`` likewise
    (packed in ``_loc`` by the loader, made a :class:`Loc` when first read).
    """

    __slots__ = ("_loc", "_locs", "_plocs", "_packing")
    _plocs: list[int]
    _packing: Packing

    def __init__(self, *args: Any, loc: Loc | None = None) -> None:
        super().__init__(*args)
        self._loc: Loc | int | None = loc
        self._locs: list[Loc] | None = []

    @property
    def loc(self) -> Loc | None:
        return _container_loc(self)

    @loc.setter
    def loc(self, value: Loc | None) -> None:
        self._loc = value

    @property
    def locs(self) -> list[Loc]:
        locs = self._locs
        if locs is None:
            locs = self._locs = self._packing.unpack_list(self._plocs)
            del self._plocs
        return locs

    @locs.setter
    def locs(self, value: list[Loc]) -> None:
        self._locs = value


def _container_loc(container: LDict | LList) -> Loc | None:
    """A loaded container's own position: its ``_loc``, made a :class:`Loc` (and kept) when the loader stored
    it packed. Most containers' own positions are never read (a Loc made for each of them cost the loader
    about 4% of its instructions); the few that are read are made here."""
    loc = container._loc
    if isinstance(loc, int):
        loc = container._loc = container._packing.unpack(loc)
    return loc


def loc_of(container: Any, key: Any = None, default: Loc | None = None) -> Loc | None:
    """Position of ``container[key]`` (or of the container itself when ``key`` is None).

    Works for :class:`LDict` (key) and :class:`LList` (integer index); returns ``default`` for plain
    containers or unknown keys. Never raises.

    A container whose positions are still packed (as the loader stored them) has only the one asked for
    unpacked: its ``locs`` are not built (most containers are asked for one or two positions, such as an env
    entry's ``value``, and building them made a :class:`Loc` for every entry); the same :class:`Loc` value as
    ``container.locs[key]``.
    """
    if key is None:
        return getattr(container, "loc", None) or default
    if isinstance(container, LDict):
        locs = container._locs
        if locs is None:
            packed = container._plocs.get(key)
            loc = None if packed is None else container._packing.unpack(packed)
        else:
            loc = locs.get(key)
        return loc or container.loc or default
    if isinstance(container, LList):
        if isinstance(key, int):
            items = container._locs
            if items is None:
                plocs = container._plocs
                if 0 <= key < len(plocs):
                    return container._packing.unpack(plocs[key])
            elif 0 <= key < len(items):
                return items[key]
        return container.loc or default
    return default
