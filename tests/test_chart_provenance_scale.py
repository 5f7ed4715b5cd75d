"""Findings on options an operator or chart wrote are restated per finding through an index of the written
arguments (kvlint.engines.options.chart_provenance), in work linear in the findings and the arguments."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines import options as options_module
from kvlint.engines.options import MAX_UNKNOWN_OPTIONS
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
#: Kthena's ModelBooster example (fixtures/collected, volcano-sh/kthena; source in its INDEX.csv)
BOOSTER = (
    ROOT
    / "fixtures"
    / "collected"
    / "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Deepseek-R1-Distill-llama-8B.yaml"
)


def test_thousands_of_unknown_config_keys_are_restated_in_linear_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ModelBooster config of N keys vLLM does not know gave N KV205 findings, each restated to name its key.
    Each finding scanned all N written arguments: N x N visits (20,000 keys, a 500 kB file, took 26 CPU s;
    200,000, a 5 MB file, most of an hour). The first MAX_UNKNOWN_OPTIONS are now reported one by one (the rest
    in one finding, rules/KV205.yaml), each still restated: were each to scan the N arguments, that is
    MAX_UNKNOWN_OPTIONS x N visits. Counted here: the arguments visited stay within a small multiple of N, and
    every finding shown names the key Kthena wrote it from."""
    n = 2000
    text = BOOSTER.read_text()
    assert "maxModelLen: 12288\n" in text
    keys = "".join(f"          unknownKey{i}: {i}\n" for i in range(n))
    path = tmp_path / "booster.yaml"
    path.write_text(text.replace("maxModelLen: 12288\n", f"maxModelLen: 12288\n{keys}"))
    visits = []
    real = options_module.chart_provenance

    class Counted(tuple):  # the workload's arguments, counting each one handed out
        def __iter__(self):  # type: ignore[no-untyped-def]
            for a in super().__iter__():
                visits.append(1)
                yield a

    def counted(findings, chart_args):  # type: ignore[no-untyped-def]
        return real(findings, Counted(chart_args))

    monkeypatch.setattr(options_module, "chart_provenance", counted)
    result = run_check([str(path)], Options(allow_hub=False))
    kv205 = [d for d in result.diagnostics if d.rule == "KV205" and "--unknownKey" in d.message]
    more = [d for d in kv205 if "more unknown options" in d.message]
    kv205 = [d for d in kv205 if d not in more]
    # (the example's own maxModelLen, which vLLM 0.7.1 does not have either, is the first of them)
    assert len(kv205) == MAX_UNKNOWN_OPTIONS - 1
    assert len(more) == 1 and more[0].message.startswith(
        f"{n + 1 - MAX_UNKNOWN_OPTIONS:,} more unknown options"
    )
    for d in kv205:
        i = d.message.split("--unknownKey", 1)[1].split()[0].strip("',:;()")
        assert f"spec.backend.workers[0].config.unknownKey{i}" in d.message, d.message
        assert f"unknownKey{i}: {i}" in path.read_text().splitlines()[d.loc.line - 1]
    assert len(visits) < 20 * n, len(visits)  # (one scan per finding shown: MAX_UNKNOWN_OPTIONS x n)
