"""Escaping of text that comes from the inputs (file names, manifest values) before a report quotes it.

Diagnostics quote what kvlint read: file names, object and container names, flag values, model ids. All of
it is attacker-controlled in CI (a pull request from anyone) and on the admission path, so a report must
show it without letting it act:

* :func:`printable`: one line of plain text for the text report, terminals, workflow commands and admission
  warnings. Control characters (C0, DEL, C1), the Unicode line and paragraph separators, bidirectional
  overrides (the "Trojan Source" characters, CVE-2021-42574) and lone surrogates (the bytes of a file name
  that is not UTF-8, as Python's ``surrogateescape`` presents them) become visible escapes: ``\\n``,
  ``\\x1b``, ``\\u202e``, ``\\xff``. A newline in a file name cannot forge a ``file:1:1: error ...`` line and
  an escape sequence cannot recolour or rewrite the terminal.
* :func:`xml_text`: the same for XML attribute and element text, so the document stays well-formed
  (XML 1.0 allows no C0 controls other than tab, LF and CR, no lone surrogates and no U+FFFE/U+FFFF).

Tab is kept in both (harmless and common in messages); LF and CR are kept by :func:`xml_text`, whose
serializer escapes them in attributes.
"""

from __future__ import annotations

import re

__all__ = ["printable", "xml_text"]

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

# C0 except tab, DEL, C1, line/paragraph separators, bidi embeddings/overrides/isolates, lone surrogates,
# and the two XML non-characters.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte of a non-UTF-8 file name
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` as one line of inert plain text (see the module docstring); unchanged when it is clean."""
    if text.isascii() and text.isprintable():
        # printable ASCII (no C0 control, no DEL) holds none of the characters escaped here: most messages
        return text
    return _UNPRINTABLE.sub(_escape_match, text)


def _escape_match(m: re.Match[str]) -> str:
    return _escape(m.group(0))


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a visible escape (``\\x00``...)."""
    return _XML_BAD.sub(_escape_match, text)
