"""What a run keeps from files by path (lines, positions, file-system answers), forgotten where each run starts.

A module that keeps such a cache registers a function that empties it (:func:`register`, at import);
:func:`kvlint.render.clear_file_cache` calls :func:`clear` where a run starts reading its inputs, so a file
edited between two runs of one process (a library caller, the benchmark) is read again. Modules never
imported in the process have nothing to clear.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["clear", "register"]

_CLEARERS: list[Callable[[], None]] = []


def register(clear_fn: Callable[[], None]) -> Callable[[], None]:
    """Add ``clear_fn`` to what :func:`clear` calls; returns it (usable as a decorator)."""
    _CLEARERS.append(clear_fn)
    return clear_fn


def clear() -> None:
    """Empty every registered cache."""
    for clear_fn in _CLEARERS:
        clear_fn()
