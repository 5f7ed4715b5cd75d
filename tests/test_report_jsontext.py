"""kvlint.report.jsontext.dumps_indented against ``json.dumps(obj, indent=2)``, whose text the JSON and SARIF
reports were written with: the same text for the reports of the fixtures (and the shared corpus when it is
present) and for generated values of every JSON type, including the ones the reports do not hold today (float
specials, non-string keys, tuples, deep nesting); what is not JSON is left to ``json.dumps``."""

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
