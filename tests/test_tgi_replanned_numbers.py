"""TGI's re-planned remedies print ``max_batch_total_tokens`` with the thousands separator every other kvlint
count has (``133,376``, not ``133376``): the KV101, KV104, KV105 and KV603 remedies that re-plan more shards or a
lighter checkpoint (kvlint.rules.families.capacity, kvlint.rules.families.tgi)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.options import Options
from kvlint.pipeline import run_documents

ROOT = Path(__file__).resolve().parent.parent
_REPLANNED = re.compile(r"re-planned: max_batch_total_tokens ([0-9,]+)")


@pytest.mark.parametrize("rule", ["KV101", "KV104", "KV105", "KV603"])
def test_replanned_max_batch_total_tokens_has_thousands_separators(rule: str) -> None:
    path = ROOT / "fixtures" / "rules" / rule / "tgi.yaml"
    res = run_documents(load_text(path.read_text(), str(path)), Options(allow_hub=False))
    numbers = [
        m.group(1)
        for d in res.diagnostics
        for text in (d.message, d.fix or "")
        for m in _REPLANNED.finditer(text)
    ]
    assert numbers, [(d.rule, d.fix) for d in res.diagnostics]
    for n in numbers:
        assert n == f"{int(n.replace(',', '')):,}", numbers
