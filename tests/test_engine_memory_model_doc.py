"""docs/engine-memory-model.md: every section, numbered item, error label and worked example that kvlint's
docstrings and comments cite exists; nothing in kvlint/ cites the research notes outside the repository; the
§7 worked examples are the figures kvlint computes now (tools/gen_memory_examples.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "engine-memory-model.md"

_HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? ", re.M)
#: ``§1.8``, ``§1.8 item 5``, ``§2.3 steps 4-5``, ``§1.11 E1/E2``, ``§7 W8``.
_CITATION = re.compile(
    r"§(?P<sec>\d+(?:\.\d+)*)"
    r"(?:\s+(?:items?|steps?)\s+(?P<item>\d+)(?:-(?P<item_to>\d+))?)?"
    r"(?:\s+(?P<labels>[EW]\d+(?:/[EW]\d+)*))?"
)


def sections(text: str) -> dict[str, str]:
    """Section number -> its own text (up to the next heading of any level)."""
    marks = list(_HEADING.finditer(text))
    out: dict[str, str] = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        assert m.group(1) not in out, f"section {m.group(1)} appears twice"
        out[m.group(1)] = text[m.end() : end]
    return out


def unresolved(citing_text: str, secs: dict[str, str]) -> list[str]:
    """The citations in ``citing_text`` that name a section, numbered item or label the document lacks."""
    bad = []
    for m in _CITATION.finditer(citing_text):
        sec = m.group("sec")
        body = secs.get(sec)
        if body is None:
            bad.append(f"{m.group(0)}: no section {sec}")
            continue
        if m.group("item"):
            first, last = int(m.group("item")), int(m.group("item_to") or m.group("item"))
            for n in range(first, last + 1):
                if not re.search(rf"^{n}\. ", body, re.M):
                    bad.append(f"{m.group(0)}: §{sec} has no numbered item {n}")
        for label in (m.group("labels") or "").split("/"):
            if label and not re.search(rf"\*\*{label}[.\s]", body):
                bad.append(f"{m.group(0)}: §{sec} has no {label}")
    return bad


def _citing_files() -> list[Path]:
    """kvlint's sources and data: every § there refers to this document."""
    return sorted(p for p in (ROOT / "kvlint").rglob("*") if p.suffix in {".py", ".yaml", ".md"})


def test_sections_are_unique_and_numbered_in_order() -> None:
    text = DOC.read_text(encoding="utf-8")
    numbers = [tuple(int(x) for x in m.group(1).split(".")) for m in _HEADING.finditer(text)]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)
    # the top-level layout docstrings rely on
    assert {n[0] for n in numbers if len(n) == 1} == set(range(8))


def test_every_citation_in_kvlint_resolves() -> None:
    secs = sections(DOC.read_text(encoding="utf-8"))
    bad = []
    count = 0
    for path in _citing_files():
        text = path.read_text(encoding="utf-8")
        count += len(_CITATION.findall(text))
        bad += [f"{path.relative_to(ROOT)}: {b}" for b in unresolved(text, secs)]
    assert count > 50  # the check reads the citations it is meant to read
    assert bad == []


def test_the_document_resolves_its_own_citations() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert unresolved(text, sections(text)) == []


def test_the_checker_reports_what_does_not_exist() -> None:
    secs = sections(DOC.read_text(encoding="utf-8"))
    assert unresolved("see §1.8 item 5 and §1.11 E6 and §7 W3", secs) == []
    bad = unresolved("§9.9, §1.8 item 99, §1.11 E9, §7 W42, §2.3 steps 6-12", secs)
    assert {b.split(":")[0] for b in bad} == {"§9.9", "§1.8 item 99", "§1.11 E9", "§7 W42", "§2.3 steps 6-12"}


def test_nothing_in_kvlint_cites_the_notes_outside_the_repository() -> None:
    offenders = []
    for path in _citing_files():
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"(?<!docs/)engine-memory-model", line) or "shared/engine-memory-model" in line:
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []


def _generator():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_memory_examples
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return gen_memory_examples


def test_worked_examples_are_what_kvlint_computes(tmp_path: Path) -> None:
    gen = _generator()
    assert gen.main(["--check"]) == 0, "run: python tools/gen_memory_examples.py"
    stale = tmp_path / "doc.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("131,072 B", "131,073 B", 1), encoding="utf-8")
    assert gen.main(["--check", "--doc", str(stale)]) == 1
    assert gen.main(["--doc", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")


def test_worked_examples_block_cites_sections_that_exist() -> None:
    gen = _generator()
    secs = sections(DOC.read_text(encoding="utf-8"))
    block = gen.render()
    assert "W8." in block and unresolved(block, secs) == []
    with pytest.raises(ValueError):
        gen.splice("no markers here", block)
