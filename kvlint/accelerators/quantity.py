"""Byte quantities as users write them: ``79.19GiB``, ``80GB``, ``81559MiB``, ``24Gi``, ``1e9``."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

# Kubernetes resource.Quantity suffixes (k8s.io/apimachinery/pkg/api/resource, quantity.go): binary
# Ki..Ei = 2^10.., decimal k, M, G, T, P, E = 10^3..; they are case-sensitive ("m" would be milli).
_K8S = {
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
    "Ei": 1 << 60,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
}
# Byte spellings (IEC "GiB" = 2^30, SI "GB" = 10^9), accepted in any letter case.
_BYTES = {
    "b": 1,
    "kib": 1 << 10,
    "mib": 1 << 20,
    "gib": 1 << 30,
    "tib": 1 << 40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_RE = re.compile(r"^\s*([+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*$")


def parse_quantity(text: str | int | float) -> int:
    """Parse a byte quantity and return whole bytes (rounded half-up).

    Accepted: a plain number (``85045477376``, ``1e9``), Kubernetes suffixes ``Ki Mi Gi Ti Pi Ei``
    (powers of 1024) and ``k M G T P E`` (powers of 1000), and the byte spellings ``KiB MiB GiB TiB``
    (powers of 1024) / ``B KB MB GB TB`` (powers of 1000) in any case. ``GiB`` and ``GB`` stay distinct:
    ``80GB`` is 80 x 10^9 bytes, ``80GiB`` is 80 x 2^30. Whitespace between number and unit is allowed.

    Raises:
        ValueError: empty/unparsable text, an unknown unit (including Kubernetes ``m`` = milli, which
            makes no sense for bytes), or a negative value. The message quotes the text.
    """
    if isinstance(text, bool):
        raise ValueError(f"invalid quantity {text!r}: expected a number of bytes such as 79.19GiB or 80GB")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"invalid quantity {text!r}: negative")
        return text
    if isinstance(text, float):
        text = repr(text)
    if not isinstance(text, str):
        raise ValueError(f"invalid quantity {text!r}: expected a string such as 79.19GiB")
    m = _RE.match(text)
    if not m and text.strip().startswith("-") and _RE.match(text.strip()[1:]):
        raise ValueError(f"invalid quantity {text!r}: negative")
    if not m:
        raise ValueError(
            f"invalid quantity {text!r}: expected a number with an optional unit, e.g. 79.19GiB, 80GB, 24Gi, 1e9"
        )
    number, unit = m.groups()
    if unit in _K8S:
        factor = _K8S[unit]
    elif unit.lower() in _BYTES:
        factor = _BYTES[unit.lower()]
    elif unit == "":
        factor = 1
    else:
        raise ValueError(
            f"invalid quantity {text!r}: unknown unit {unit!r} (use Ki/Mi/Gi/Ti, k/M/G/T, KiB/MiB/GiB, KB/MB/GB)"
        )
    try:
        value = Decimal(number) * factor
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"invalid quantity {text!r}") from exc
    return int(value.to_integral_value(rounding=ROUND_HALF_UP))
