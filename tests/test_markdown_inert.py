"""Text from manifests reaches the Markdown reports (``kvlint check --format markdown``, ``kvlint plan --format
markdown``, ``kvlint diff --format markdown``, the Action's job summary) as text: a pull request that puts a
link, a tracking image, raw HTML, a ``|`` or a newline in a container name, a model id or a suppression reason
must not get a live link, an image, HTML or a new table cell into a comment that posts the report.

The checks read the Markdown as GitHub does (CommonMark 0.31.2 backslash escapes and code spans, GFM 0.29
tables, which split a row at every ``|`` not escaped by a backslash, inside a code span too)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from kvlint.capacity.plan_command import plan_command
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.prdiff import (
    CAPACITY_COLUMNS,
    CapacityRow,
    compare_findings,
    render_capacity_markdown,
    render_diff_markdown,
)
from kvlint.report import render
from kvlint.report.escape import markdown_code, markdown_text

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"

#: what a pull request can write: a fake link, a tracking image, raw HTML, emphasis, math, a cell boundary
#: (plain and after a backslash, which would cancel a naive ``\|``), a code span and a line break
PAYLOAD = (
    "approved](https://evil.example/) ![t](https://evil.example/t.png) <img src=https://evil.example/p.png> "
    "<details open> **ok** $x$ ~~s~~ a | b \\| c `d` ``e\nnext line"
)
SHOWN = " ".join(PAYLOAD.split())  # one line: newlines and runs of spaces are one space

#: kvlint's own HTML in the reports (folded details, line breaks, lists)
_OWN_HTML = re.compile(r"</?(details|summary|br|ul|li)>")


def _spans(line: str) -> list[tuple[int, int, str]]:
    """The code spans of one line as CommonMark 0.31.2 6.1 reads them: ``(start, end, content)``. A backtick
    run that a backslash escapes opens none; a run opens a span when a run of as many backticks follows."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] != "`":
            i += 1
            continue
        n = len(line[i:]) - len(line[i:].lstrip("`"))
        close = next(
            (m for m in re.finditer("`+", line[i + n :]) if len(m.group(0)) == n),
            None,
        )
        if close is None:
            i += n
            continue
        body = line[i + n : i + n + close.start()]
        if body.startswith(" ") and body.endswith(" ") and body.strip():
            body = body[1:-1]
        out.append((i, i + n + close.end(), body))
        i += n + close.end()
    return out


def _outside_spans(line: str) -> str:
    at, parts = 0, []
    for a, b, _ in _spans(line):
        parts.append(line[at:a])
        at = b
    return "".join(parts) + line[at:]


def _unescaped(text: str, chars: str) -> list[int]:
    """Offsets of the characters of ``chars`` in ``text`` that no backslash escapes."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] in chars:
            out.append(i)
        i += 1
    return out


def _live(line: str) -> list[str]:
    """What in one line of Markdown GitHub would render as markup from the payload: HTML tags other than
    kvlint's own, and unescaped link, image, emphasis, math or code characters outside code spans."""
    found = []
    rest = _OWN_HTML.sub("", _outside_spans(line))
    found += re.findall(r"<[A-Za-z/!?]", rest)
    found += [rest[i] for i in _unescaped(rest, "[]`*~$")]
    return found


def _shown(cell: str) -> str:
    """The text GitHub shows for one table cell or line: code spans' content as is, the rest with its
    backslash escapes and entities read."""
    parts, at = [], 0
    for a, b, body in _spans(cell):
        parts.append(html.unescape(re.sub(r"\\(.)", r"\1", cell[at:a])))
        parts.append(body)
        at = b
    parts.append(html.unescape(re.sub(r"\\(.)", r"\1", cell[at:])))
    return "".join(parts)


def _cells(row: str) -> list[str]:
    """A GFM table row split at its unescaped ``|``, each cell with ``\\|`` read as ``|`` (GFM 0.29 4.10)."""
    cuts = _unescaped(row, "|")
    return [row[a + 1 : b].strip().replace("\\|", "|") for a, b in zip(cuts, cuts[1:], strict=False)]


def _check_tables(md: str) -> None:
    """Every row of every table has as many cells as its header."""
    width = 0
    for line in md.splitlines():
        if not line.startswith("|"):
            width = 0
            continue
        n = len(_cells(line))
        width = width or n
        assert n == width, line


def _hostile_manifest() -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    quoted = PAYLOAD.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    assert "- name: vllm\n" in text and "  name: chat-8b\n  namespace" in text
    text = text.replace("- name: vllm\n", f'- name: "vllm {quoted}"\n', 1)
    return text.replace(
        "  name: chat-8b\n",
        f'  name: chat-8b\n  annotations:\n    kvlint.io/ignore: "KV202={quoted}"\n',
        1,
    )


def test_the_escapes_show_the_text_as_written() -> None:
    text = markdown_text(PAYLOAD)
    assert "\n" not in text and not _live(text) and _shown(text) == SHOWN
    for table in (True, False):
        span = markdown_code(PAYLOAD, table=table)
        assert not _live(span), span
        assert _shown(span.replace("\\|", "|") if table else span) == SHOWN
    # a value with ``\|`` cannot be a code span in a table (``\\|`` ends the cell): it is escaped text
    span = markdown_code("a\\|b")
    assert span == "a\\\\\\|b" and [_shown(c) for c in _cells(f"| {span} |")] == ["a\\|b"]


def test_check_markdown_shows_manifest_values_as_text() -> None:
    result = run_documents(load_text(_hostile_manifest(), "deploy/chat.yaml"), Options(allow_hub=False))
    assert result.containers and result.suppressed_diagnostics
    md = render("markdown", result)
    _check_tables(md)
    hostile = [ln for ln in md.splitlines() if "evil.example" in ln]
    assert len(hostile) >= 2  # the suppression reason's row, the container's heading
    for line in hostile:
        assert not _live(line), (line, _live(line))
    (reason_row,) = [ln for ln in hostile if ln.startswith("| KV202 |")]
    assert _shown(_cells(reason_row)[2]) == SHOWN
    (heading,) = [ln for ln in hostile if ln.startswith("### ")]
    assert _shown(heading).endswith(f"container vllm {SHOWN}")


def test_plan_markdown_shows_a_model_id_as_text() -> None:
    model = "org/" + PAYLOAD
    out = plan_command(["vllm", "serve", model, "--max-model-len", "4096"], Options(allow_hub=False))
    md = out.render_markdown()
    _check_tables(md)
    hostile = [ln for ln in md.splitlines() if "evil.example" in ln]
    assert hostile
    for line in hostile:
        assert not _live(line), (line, _live(line))
    assert f"model {' '.join(model.split())} ·" in _shown(hostile[0])


@pytest.mark.parametrize("column", ["workload", "figure"])
def test_diff_markdown_shows_workload_names_and_notes_as_text(column: str) -> None:
    figures = {k: "1" for k, _ in CAPACITY_COLUMNS}
    figures["max_model_len"] = PAYLOAD if column == "figure" else "8,192"
    name = (
        f"Deployment/serving/chat-8b [{PAYLOAD}]"
        if column == "workload"
        else "Deployment/serving/chat-8b [vllm]"
    )
    row = CapacityRow(workload=name, file="deploy/chat.yaml", before=None, after=figures)
    md = render_diff_markdown("main..HEAD", compare_findings([], []), [row], notes=[PAYLOAD])
    _check_tables(md)
    table = render_capacity_markdown([row])
    assert table in md
    hostile = [ln for ln in md.splitlines() if "evil.example" in ln]
    assert len(hostile) == 2  # the note and the table row
    for line in hostile:
        assert not _live(line), (line, _live(line))
    (body,) = [ln for ln in hostile if ln.startswith("| ")]
    cells = [_shown(c) for c in _cells(body)]
    assert SHOWN in cells[0] if column == "workload" else any(SHOWN in c for c in cells[1:])
