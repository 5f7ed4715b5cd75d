"""The Kubernetes resource quantity, written once for every module that reads one in a manifest.

A quantity as ``resource.ParseQuantity`` accepts it (k8s.io/apimachinery ``pkg/api/resource/quantity.go``): a
signed decimal number, then a binary suffix (``Ki`` .. ``Ei``, powers of 1024), an exponent (``e3``, ``E-2``)
or a decimal suffix (``n``, ``u``, ``m``, ``k``, ``M``, ``G``, ``T``, ``P``, ``E``, powers of 1000); no
blanks. Byte amounts a user types (``79.19GiB``, ``80GB``) are another grammar:
:func:`kvlint.accelerators.quantity.parse_quantity`. Importing nothing of kvlint: the workload readers and the
accelerator modules share it without importing each other.
"""

from __future__ import annotations

import re

__all__ = ["BINARY_SUFFIX_BITS", "DECIMAL_SUFFIX_EXPONENTS", "K8S_QUANTITY"]

#: A Kubernetes quantity; its groups are the sign (``""`` when none), the number, then at most one of the
#: binary suffix, the exponent's digits (with their sign) and the decimal suffix. ``fullmatch`` tells whether
#: a text is a quantity; ``match`` reads the number a longer text starts with.
K8S_QUANTITY = re.compile(r"([+-]?)(\d+\.?\d*|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\d+)|([numkMGTPE]))?")
#: A binary suffix's power of two (``Ki`` is 2^10).
BINARY_SUFFIX_BITS = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
#: A decimal suffix's power of ten (``m``, milli, is 10^-3; ``k`` 10^3).
DECIMAL_SUFFIX_EXPONENTS = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
