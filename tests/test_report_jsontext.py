"""kvlint.report.jsontext.dumps_indented against ``json.dumps(obj, indent=2)``, whose text the JSON and SARIF
reports were written with: the same text for the reports of the fixtures (and the shared corpus when it is
present) and for generated values of every JSON type, including the ones the reports do not hold today (float
specials, non-string keys, tuples, deep nesting); what is not JSON is left to ``json.dumps``. Also the SARIF
report's reading of a file's lines (bytes decoded at once) against the text-mode read it replaced."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.report.jsonout import to_json_dict
from kvlint.report.jsontext import dumps_indented
from kvlint.report.sarif import to_sarif_dict

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"


def _inputs() -> list[str]:
    paths = [str(ROOT / "fixtures" / "rules"), str(ROOT / "fixtures" / "cases")]
    return paths + ([str(CORPUS)] if CORPUS.is_dir() else [])


@pytest.mark.parametrize("build", [to_json_dict, to_sarif_dict])
def test_reports_are_the_text_json_dumps_writes(build: Any) -> None:
    result = run_check(_inputs(), Options(allow_hub=False))
    assert len(result.diagnostics) > 50
    obj = build(result)
    assert dumps_indented(obj) == json.dumps(obj, indent=2)


_STRINGS = [
    "",
    "a",
    'quote " and \\ backslash',
    "line\nbreak\ttab",
    "\x00\x1f\x7f",
    "é€",
    "\U0001f600",
    "\udcff",
]


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(10 if depth < 5 else 6)
    if kind == 0:
        return rng.choice(_STRINGS) + str(rng.random())
    if kind == 1:
        return rng.choice([0, -1, 2**70, True, False, None])
    if kind == 2:
        return rng.choice([0.0, -0.0, 1.5, 1e-300, 1e300, 0.1 + 0.2, math.inf, -math.inf, math.nan])
    if kind == 3:
        return rng.choice(_STRINGS)
    if kind == 4:
        return rng.choice([{}, [], ()])
    if kind == 5:
        return rng.randint(-(10**6), 10**6)
    if kind in (6, 7):
        keys = [rng.choice(_STRINGS) + str(i) for i in range(rng.randrange(5))]
        keys += rng.sample([1, 2.5, True, False, None, math.inf], rng.randrange(3))
        return {k: _value(rng, depth + 1) for k in keys}
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return items if kind != 8 else tuple(items)


def test_generated_values_are_written_as_json_dumps_writes_them() -> None:
    rng = random.Random(19)
    for _ in range(3000):
        obj = _value(rng, 0)
        assert dumps_indented(obj) == json.dumps(obj, indent=2), repr(obj)


def test_what_is_not_json_is_left_to_json_dumps() -> None:
    class Sub(int):
        def __repr__(self) -> str:  # json.dumps writes int.__repr__, not the subclass's
            return "sub"

    assert dumps_indented({"n": Sub(3), "b": [True]}) == json.dumps({"n": Sub(3), "b": [True]}, indent=2)
    with pytest.raises(TypeError):
        dumps_indented({"a": {1, 2}})  # a set: json.dumps raises
    with pytest.raises(TypeError):
        dumps_indented({(1, 2): "tuple key"})
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(RecursionError):
        dumps_indented(deep)  # too deep for json.dumps as well


def test_sarif_reads_a_file_s_lines_as_the_text_stream_did(tmp_path: Path) -> None:
    # the SARIF regions read each file's lines from its bytes decoded at once: the same lines as the text-mode
    # read with universal newlines, whatever the line ends and undecodable bytes
    from kvlint.report.sarif import _file_lines

    rng = random.Random(7)
    pieces = [
        b"a",
        b"key: value",
        b"\r\n",
        b"\n",
        b"\r",
        b"\xff",
        b"\xc3",
        b"\xc3\xa9",
        b"\xef\xbb\xbf",
        b"\x0b",
    ]
    pieces += ["\x85 \u2028 \u2029".encode(), b"\x1c", b" # c", b"\t"]
    for i in range(400):
        data = b"".join(rng.choice(pieces) for _ in range(rng.randrange(60)))
        p = tmp_path / f"f{i}.yaml"
        p.write_bytes(data)
        with open(p, encoding="utf-8", errors="replace") as fh:
            expected = tuple(fh.read().splitlines())
        assert _file_lines(str(p)) == expected, data
    assert _file_lines(str(tmp_path / "missing.yaml")) is None
