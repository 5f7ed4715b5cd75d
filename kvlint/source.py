"""Source positions for values read from YAML/JSON.

Every mapping and sequence kvlint loads is an :class:`LDict` or :class:`LList`: a plain ``dict`` /
``list`` that also remembers where each of its values (and keys) stood in the file, so a diagnostic can
point at the flag that is wrong rather than at line 1. Scalars stay plain Python values; their
position is looked up on the container that holds them (:func:`loc_of`).
"""

from __future__ import annotations

from typing import Any, NamedTuple


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


class LDict(dict):
    """A ``dict`` loaded from YAML that knows where it and its entries came from.

    Attributes:
        loc: position of the mapping itself (its first key).
        locs: key -> position of that key's *value*.
        key_locs: key -> position of the key.
    """

    __slots__ = ("loc", "locs", "key_locs")

    def __init__(self, *args: Any, loc: Loc | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loc: Loc | None = loc
        self.locs: dict[Any, Loc] = {}
        self.key_locs: dict[Any, Loc] = {}


class LList(list):
    """A ``list`` loaded from YAML that knows where it and each item came from.

    Attributes:
        loc: position of the sequence itself.
        locs: index -> position of that item (same length as the list).
    """

    __slots__ = ("loc", "locs")

    def __init__(self, *args: Any, loc: Loc | None = None) -> None:
        super().__init__(*args)
        self.loc: Loc | None = loc
        self.locs: list[Loc] = []


def loc_of(container: Any, key: Any = None, default: Loc | None = None) -> Loc | None:
    """Position of ``container[key]`` (or of the container itself when ``key`` is None).

    Works for :class:`LDict` (key) and :class:`LList` (integer index); returns ``default`` for plain
    containers or unknown keys. Never raises.
    """
    if key is None:
        return getattr(container, "loc", None) or default
    if isinstance(container, LDict):
        return container.locs.get(key) or container.loc or default
    if isinstance(container, LList):
        if isinstance(key, int) and 0 <= key < len(container.locs):
            return container.locs[key]
        return container.loc or default
    return default
