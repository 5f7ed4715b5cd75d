"""Hostile and odd input against what session 54 merged (pass break54): each attack that broke a promise of the
brief (bounded time, no traceback, the right position, no false finding), checked on the input itself."""

from __future__ import annotations

import time
from pathlib import Path

from test_hostile_shapes import LIMIT_S

from kvlint.load import load_paths


def test_a_json_line_of_escaped_quotes_after_an_open_quote_is_read_in_linear_time(tmp_path: Path) -> None:
    """ux54's pass over a JSON manifest holding a DEL (kvlint/load.py ``_json_raw_escaped``) found each string with
    a pattern that needed the closing quote: after a quote left open, each ``\\"`` of the line started a new try
    that rescanned the rest of the line (quadratic; a 40 KB file took 20 s, an 8 MB one would take days). 100,000
    of them now take bounded CPU, and the DEL in the well-formed string before them is still read as JSON means
    it."""
    f = tmp_path / "quotes.json"
    f.write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},\n'
        ' "data": {"k": "x\x7fy", "b": x' + '\\"' * 100_000 + "\n}}\n",
        encoding="utf-8",
    )
    t = time.process_time()
    res = load_paths([str(f)])
    assert time.process_time() - t < LIMIT_S
    assert all("U+007F" not in x.message for x in res.findings), res.findings
