"""bench/accuracy_engines.py's exit status: 1 when a scored TGI/SGLang case is more than 10 % off, or a documented
miss (KNOWN_MISSES: gt-235, gt-299, docs/engine-memory-model.md §5) more than one point beyond its documented
error; the documented misses alone no longer fail it (it exited 1 on every run)."""

from __future__ import annotations

import copy
import functools
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import accuracy_engines as ae  # noqa: E402

LOCAL = ROOT / "bench" / "groundtruth" / "cases.yaml"


@functools.cache
def _parsed(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


class _ParsedOnce:
    """The ``yaml`` module as bench/accuracy_engines.py uses it, but parsing each text once for this module's
    runs of main() (the 340 kB cases file, in pure-Python PyYAML, was most of their time); a deep copy each
    call, as main() extends the list it gets."""

    @staticmethod
    def safe_load(text: str) -> Any:
        return copy.deepcopy(_parsed(text))


@pytest.fixture(autouse=True)
def _cases_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ae, "yaml", _ParsedOnce)


def _run(monkeypatch: pytest.MonkeyPatch, off: dict[str, float]) -> int:
    """main() over the local cases with every scored prediction exact except ``off`` (case -> relative error)."""
    printed = {c["id"]: ae._reported(c) for c in _ParsedOnce.safe_load(LOCAL.read_text())}

    def predict(cid: str) -> tuple[int | None, str]:
        rep = printed.get(cid)
        if not rep:
            return None, ""
        return round(rep * (1 + off.get(cid, 0.0))), ""

    monkeypatch.setattr(ae, "predict", predict)
    return ae.main([str(LOCAL)])


def test_documented_misses_pass_and_a_regression_fails(monkeypatch, capsys) -> None:
    assert set(ae.KNOWN_MISSES) <= set(ae.REPLAY)
    assert _run(monkeypatch, {}) == 0
    known = {cid: err / 100 for cid, (err, _) in ae.KNOWN_MISSES.items()}
    assert _run(monkeypatch, known) == 0
    assert "known miss" in capsys.readouterr().out
    assert _run(monkeypatch, {**known, "gt-299": known["gt-299"] + 0.03}) == 1  # 3 points further off
    assert _run(monkeypatch, {"gt-358": 0.12}) == 1  # an SGLang case not listed, 12 % off


def test_a_documented_miss_that_swings_or_stops_replaying_fails(monkeypatch) -> None:
    """review47A: the limit was max(10, documented + 1) on the absolute error, so gt-235 at -14 % (a 28-point swing
    from its +13.8 %) passed; and a scored case whose replay raised was skipped, not failed."""
    known = {cid: err / 100 for cid, (err, _) in ae.KNOWN_MISSES.items()}
    assert _run(monkeypatch, {**known, "gt-235": -known["gt-235"]}) == 1
    assert _run(monkeypatch, {**known, "gt-299": 0.05}) == 0  # an improvement within 10 % passes

    printed = {c["id"]: ae._reported(c) for c in _ParsedOnce.safe_load(LOCAL.read_text())}
    broken = next(iter(sorted(c for c in ae.REPLAY if c not in ae.NOT_REPLAYABLE and printed.get(c))))

    def predict(cid: str) -> tuple[int | None, str]:
        if cid == broken:
            raise ValueError("the planner broke")
        rep = printed.get(cid)
        return (round(rep * (1 + known.get(cid, 0.0))), "") if rep else (None, "")

    monkeypatch.setattr(ae, "predict", predict)
    assert ae.main([str(LOCAL)]) == 1
