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
# Matched against the stripped text, so only one whitespace run (between number and unit) is left to the
# regex: with ``\s*`` on both sides of an optional unit, a run of n spaces can be split n ways and a
# failing match costs O(n^2) (a 60 KB value took seconds).
_RE = re.compile(r"([+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)[ \t]*([A-Za-z]*)")
#: Longest quantity text read (longer text is rejected unread). Real ones are short: ``81559MiB``,
#: ``85045477376``, ``79.19GiB``.
MAX_QUANTITY_CHARS = 64
#: Largest quantity accepted, in bytes: 2^63 - 1, the largest value a Kubernetes ``resource.Quantity`` holds
#: as an int64 (k8s.io/apimachinery/pkg/api/resource, ``Quantity.Value``), far above any device or pod.
MAX_QUANTITY_BYTES = 2**63 - 1


def parse_quantity(text: str | int | float) -> int:
    """Parse a byte quantity and return whole bytes (rounded half-up).

    Accepted: a plain number (``85045477376``, ``1e9``), Kubernetes suffixes ``Ki Mi Gi Ti Pi Ei``
    (powers of 1024) and ``k M G T P E`` (powers of 1000), and the byte spellings ``KiB MiB GiB TiB``
    (powers of 1024) / ``B KB MB GB TB`` (powers of 1000) in any case. ``GiB`` and ``GB`` stay distinct:
    ``80GB`` is 80 x 10^9 bytes, ``80GiB`` is 80 x 2^30. Whitespace between number and unit is allowed.

    Raises:
        ValueError: empty/unparsable text, an unknown unit (including Kubernetes ``m`` = milli, which
            makes no sense for bytes), a negative value, text longer than :data:`MAX_QUANTITY_CHARS` or a
            value above :data:`MAX_QUANTITY_BYTES`. The message quotes the text (cut when long).
    """
    if isinstance(text, bool):
        raise ValueError(f"invalid quantity {text!r}: expected a number of bytes such as 79.19GiB or 80GB")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"invalid quantity {text!r}: negative")
        if text > MAX_QUANTITY_BYTES:
            raise ValueError(f"invalid quantity: {text.bit_length()}-bit number, more than 2^63 bytes")
        return text
    if isinstance(text, float):
        text = repr(text)
    if not isinstance(text, str):
        raise ValueError(f"invalid quantity {text!r}: expected a string such as 79.19GiB")
    stripped = text.strip()
    if len(stripped) > MAX_QUANTITY_CHARS:
        raise ValueError(
            f"invalid quantity {stripped[:20]!r}... ({len(stripped)} characters): a byte quantity is at most "
            f"{MAX_QUANTITY_CHARS} characters, e.g. 79.19GiB"
        )
    m = _RE.fullmatch(stripped)
    if not m and stripped.startswith("-") and _RE.fullmatch(stripped[1:]):
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
        number_value = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"invalid quantity {text!r}") from exc
    # 2^63 < 10^19 and the largest factor is 2^60 < 10^19: a number below 10^19 cannot overflow the
    # arithmetic below; the exponent of one above it (``1e999999``) would overflow Decimal's context.
    if number_value and number_value.adjusted() > 18:
        raise ValueError(f"invalid quantity {text!r}: implausibly large (more than 2^63 bytes)")
    value = int((number_value * factor).to_integral_value(rounding=ROUND_HALF_UP))
    if value > MAX_QUANTITY_BYTES:
        raise ValueError(f"invalid quantity {text!r}: implausibly large (more than 2^63 bytes)")
    return value


def parse_gpu_memory(value: str) -> tuple[int, str | None]:
    """``--gpu-memory`` (``kvlint check``, ``plan``, ``simulate``): a GPU's memory total, in bytes, and a note to
    show the user, or None. The total needs a unit and lies between 1 GiB and 16 TiB; a decimal unit (``80GB``
    = 80 x 10^9 bytes = 74.51 GiB) is taken as written, with a note giving it in GiB, since CUDA reports totals
    in GiB (an H100 80GB: 79.19 GiB).

    Raises:
        ValueError: unparsable (:func:`parse_quantity`), not positive, no unit, or not a plausible total; the
            message quotes ``value``.
    """
    n = parse_quantity(value)
    if n <= 0:
        raise ValueError(f"'{value}': the GPU memory total must be positive, e.g. 79.19GiB")
    if not any(ch.isalpha() for ch in value):
        raise ValueError(
            f"'{value}' has no unit; give the device total with one, e.g. {value}GiB (as CUDA reports it) or {value}GB"
        )
    if n < 2**30 or n > 16 * 2**40:
        raise ValueError(f"'{value}' is not a plausible GPU memory total (1 GiB to 16 TiB)")
    note = None
    unit = value.strip().lstrip("0123456789.eE+- ").lower()
    if unit and "i" not in unit:
        note = (
            f"--gpu-memory {value.strip()} is {n:,} bytes = {n / 2**30:,.2f} GiB (decimal units); CUDA reports a "
            "device's total in GiB (an H100 80GB has 79.19GiB): kvlint accelerators lists them"
        )
    return n, note
