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
* :func:`markdown_text` and :func:`markdown_code`: one line of GitHub-flavoured Markdown (a table cell, a
  heading, a paragraph of the job summary or a pull-request comment) that shows the text as written: no link
  (``[text](url)``), no image (``![img](url)``, a tracking pixel), no raw HTML (``<img>``, ``<details>``), no
  emphasis, no new table cell (``|``) and no new line or block.

Tab is kept in both (harmless and common in messages); LF and CR are kept by :func:`xml_text`, whose
serializer escapes them in attributes.
"""

from __future__ import annotations

import re

__all__ = [
    "inert_json",
    "inert_line",
    "inert_path",
    "inert_xml",
    "markdown_code",
    "markdown_message",
    "markdown_text",
    "printable",
    "xml_text",
]

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


def inert_path(path: str) -> str:
    """A relative file name shown at the start of a report line, as :func:`printable` text that no GitHub
    Actions runner reads as a workflow command: a name that starts with ``:`` or with whitespace (a pull
    request's ``::warning title=x::y.yaml``) is shown as ``./`` then the name (the same file); any other
    name is unchanged. (``##[`` is left to :func:`inert_line`, which sees the whole line.)"""
    shown = printable(path)
    if shown[:1] == ":" or shown[:1].isspace():
        return "./" + shown
    return shown


def inert_line(line: str) -> str:
    """One line of plain output (already :func:`printable`) that the GitHub Actions runner cannot take for a
    workflow command when it reaches a job's log (``kvlint check deploy/`` run directly in a step, outside
    the Action's stop-commands markers): a line whose first non-blank characters are ``::`` gets a backslash
    before them (``\\::add-mask::x``), and every ``##[`` in it becomes ``##\\[``; any other line is
    returned unchanged.

    Source: actions/runner, ``src/Runner.Common/ActionCommand.cs`` (``TryParseV2``: the line, leading
    whitespace trimmed, must start with ``::``; ``TryParse``, the legacy form, finds ``##[`` anywhere in the
    line) and ``src/Runner.Worker/ActionCommandManager.cs`` (``TryProcessCommand`` tries both)."""
    if "::" not in line and "##[" not in line:
        return line
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped)
        line = line[:at] + "\\" + stripped
    return line.replace("##[", "##\\[")


def inert_json(text: str) -> str:
    """JSON text (the JSON, JSON Lines and SARIF reports) with no GitHub workflow command in it when it is printed
    to a job's log (``kvlint check --format json`` in a step): the runner's legacy form ``##[`` is honoured anywhere
    in a line (:func:`inert_line`), and in JSON text it can only stand inside a string, where ``#\\u0023[`` is the
    same characters to every JSON reader. A line of JSON cannot start with ``::`` (a string starts with ``"``,
    and a line break inside one is escaped)."""
    return text.replace("##[", "#\\u0023[") if "##[" in text else text


def inert_xml(text: str) -> str:
    """XML text (the JUnit report) with no legacy ``##[`` workflow command (:func:`inert_json`): ``##&#91;`` is the
    same characters to every XML reader, in element text and in attribute values alike."""
    return text.replace("##[", "##&#91;") if "##[" in text else text


def _escape_match(m: re.Match[str]) -> str:
    return _escape(m.group(0))


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a visible escape (``\\x00``...)."""
    return _XML_BAD.sub(_escape_match, text)


# Markdown-active ASCII punctuation backslash-escaped in text (CommonMark 0.31 section 2.4: any ASCII
# punctuation may be escaped, and the escape shows the character as text). The backslash too, so a
# backslash in the value cannot cancel an escape added here (one pass, each character once); brackets for
# links and images (an image is ``!`` then a link, so no ``[`` no image); backtick for code spans; ``*``,
# ``_``, ``~`` for emphasis and strikethrough (``_`` inside a word is left as is: it cannot open or close
# emphasis); ``$`` for GitHub's math; ``|`` for table cells (GFM tables split a row at every unescaped
# ``|``, inside a code span too). ``<``, ``>``, ``&`` become entities (no raw HTML, no ``<url>`` autolink,
# no entity written by the value).
_MD_ESCAPE = {c: "\\" + c for c in "\\`*_~[]$|"}
_MD_ESCAPE.update({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_MD_ACTIVE = re.compile("[\\\\`*_~\\[\\]$|&<>]")
_BACKTICKS = re.compile("`+")


def _one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) one space, then :func:`printable`."""
    return printable(" ".join(str(text).split()))


def _escaped(one: str) -> str:
    """One line (already :func:`_one_line`) with its Markdown-active punctuation escaped (:func:`markdown_text`)."""

    def escape(m: re.Match[str]) -> str:
        c, at = m.group(0), m.start()
        if c == "_" and 0 < at < len(one) - 1 and one[at - 1].isalnum() and one[at + 1].isalnum():
            return c  # inside a word (max_num_seqs): never an emphasis delimiter (CommonMark 6.2, rule 2)
        return _MD_ESCAPE[c]

    return _MD_ACTIVE.sub(escape, one)


def markdown_text(text: str) -> str:
    """``text`` (a manifest value, a file name, a finding's statement) as one line of inert GitHub-flavoured
    Markdown, for a table cell, a heading or a paragraph: whitespace runs (newlines) one space, control and
    bidirectional characters visible (:func:`printable`), ``&``/``<``/``>`` as entities and the other
    Markdown-active punctuation (``\\ ` * _ ~ [ ] $ |``) backslash-escaped (``_`` not inside a word, as in
    ``max_num_seqs``, where it is never emphasis). GitHub renders the result as
    the characters of ``text``; no link, image, HTML, emphasis or cell boundary comes out of it.

    Source: the CommonMark spec 0.31.2 (backslash escapes, section 2.4; entity references, 2.5) and the GFM
    spec 0.29 (tables: ``\\|`` in a cell, section 4.10)."""
    return _escaped(_one_line(text))


#: A code span as kvlint writes one in its messages: a single backtick, not after a letter, digit or backtick,
#: then text that neither starts nor ends with a space and holds no backtick, then a single backtick not
#: followed by a letter, digit or backtick (`` `helm template` ``, `` `kvlint models pull ID` ``).
_OWN_SPAN = re.compile(r"(?<![A-Za-z0-9`])`([^`\s](?:[^`]*[^`\s])?)`(?![A-Za-z0-9`])")


def markdown_message(text: str, *, table: bool = True) -> str:
    """A finding's message or fix as one line of GitHub-flavoured Markdown: the code spans kvlint writes in
    its texts (``render with `helm template` first``) shown as code (:func:`markdown_code`), the rest as
    :func:`markdown_text`. A manifest value quoted in the message stays inert either way: outside a span
    every active character is escaped, and inside one nothing is Markdown (no link, image, HTML, entity or,
    in a ``table``, new cell); a backtick that pairs with no other in that shape is shown as a backtick. (A
    value holding backticks may still make part of the message show in code font: the message does not
    record which words came from the manifest.)"""
    one = _one_line(text)
    if "`" not in one:
        return _escaped(one)
    out: list[str] = []
    at = 0
    for m in _OWN_SPAN.finditer(one):
        out.append(_escaped(one[at : m.start()]))
        out.append(markdown_code(m.group(1), table=table))
        at = m.end()
    out.append(_escaped(one[at:]))
    return "".join(out)


def markdown_code(text: str, *, table: bool = True) -> str:
    """``text`` as one inline code span (e.g. ``file.yaml:3:5`` in backticks): the fence is one backtick
    longer than the longest run of backticks in ``text``, so no backtick in it closes the span early, and a
    space pads each side when ``text`` starts or ends with a backtick (CommonMark 0.31.2 section 6.1: one
    space on each side is stripped). Nothing inside a code span is Markdown: no link, image, HTML or entity.

    ``table``: the span is in a table row, where GFM splits cells at ``|`` before it reads code spans; ``|``
    is written ``\\|`` (the table drops the backslash, GFM 0.29 example 200). A ``\\`` right before a
    ``|`` cannot be written inside a code span there (``\\\\|`` would end the cell), so such a value is
    given as :func:`markdown_text` instead. Outside a table (a heading, a paragraph) ``|`` is left as is."""
    one = _one_line(text)
    if table:
        if "\\|" in one:
            return markdown_text(one)
        one = one.replace("|", "\\|")
    runs = _BACKTICKS.findall(one)
    fence = "`" * (max((len(r) for r in runs), default=0) + 1)
    if not one or one.startswith("`") or one.endswith("`"):
        one = f" {one} "
    return f"{fence}{one}{fence}"
