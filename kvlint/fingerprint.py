"""Stable fingerprints of findings, to tell a pull request's new findings from those already on its base.

A finding is identified by what it is about, not by where the text stands: the rule, the workload
(``Kind/namespace/name``), the container and the engine setting involved (``max_model_len``), so moving
a line, re-indenting a file or changing the figures in the message keeps the fingerprint. File-level
findings (no workload: a YAML syntax error, an unrendered template) add the file path. Two findings with
the same identity in one run are told apart by their order (``#2``, ``#3``...), as GitHub code scanning
does with its own line hashes.

The fingerprint is the SARIF ``partialFingerprints["kvlint/v1"]`` value and what ``kvlint diff`` and the
GitHub Action compare.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

__all__ = ["FINGERPRINT_KEY", "fingerprint", "fingerprints", "identity"]

#: Key of kvlint's entry in SARIF ``partialFingerprints`` (versioned: a change of recipe bumps it).
FINGERPRINT_KEY = "kvlint/v1"


def _get(d: Any, name: str) -> str:
    value = d.get(name) if isinstance(d, dict) else getattr(d, name, "")
    return "" if value is None else str(value)


def identity(d: Any) -> str:
    """The readable identity of a finding (a :class:`~kvlint.types.Diagnostic` or its JSON dict):
    ``RULE|object|container|setting``, plus ``|file`` for file-level findings."""
    parts = [_get(d, "rule"), _get(d, "object"), _get(d, "container"), _get(d, "setting")]
    if not parts[1]:
        loc = getattr(d, "loc", None)
        parts.append(loc.file if loc is not None else _get(d, "file"))
    return "|".join(parts)


def fingerprint(d: Any, occurrence: int = 1) -> str:
    """SHA-256 (hex, 32 characters) of :func:`identity`, with ``#occurrence`` when above 1."""
    key = identity(d) + (f"#{occurrence}" if occurrence > 1 else "")
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def fingerprints(diags: Iterable[Any]) -> list[str]:
    """:func:`fingerprint` of each finding in order, numbering findings that share an identity."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for d in diags:
        key = identity(d)
        seen[key] = seen.get(key, 0) + 1
        out.append(fingerprint(d, seen[key]))
    return out
