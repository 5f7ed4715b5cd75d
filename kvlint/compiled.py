"""Support for the optional compiled build (``bench/build_mypyc.py``, docs/performance.md).

kvlint is pure Python; that script can compile its hot modules with mypyc. mypyc turns the classes of a
compiled module into *native* classes, whose instances have no ``__dict__`` and take no attributes beyond
their declared ones, which kvlint relies on in places (``vars(settings)``, a frozen dataclass's ``__dict__``
filled at once). :func:`python_class` keeps a class a regular Python class there, so the compiled build
behaves as the pure one; only the functions are compiled.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")

__all__ = ["python_class"]


def python_class(cls: type[T]) -> type[T]:
    """``cls`` itself. As a class decorator (the outermost) it keeps the class a regular Python class when
    mypyc compiles its module: mypyc makes a class with a decorator it does not know a Python class. No effect
    in the pure build."""
    return cls
