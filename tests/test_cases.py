"""The shared failing cases: kvlint reports exactly the rule ids listed in expected.yaml.

Fixtures: fixtures/cases/ (copied from shared/cases/, see SOURCE.md). The same check runs against
../shared/cases when that directory is present, so a new shared case is picked up without a copy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.pipeline import Options, run_check

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "fixtures" / "cases"
SHARED_CASES = REPO.parent / "shared" / "cases"
EXPECTED = yaml.safe_load((CASES / "expected.yaml").read_text())


def _rules(path: Path) -> list[str]:
    result = run_check([str(path)], Options(allow_hub=False))
    return sorted({d.rule for d in result.diagnostics})


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_case_reports_exactly_expected_rules(name: str) -> None:
    assert _rules(CASES / name) == sorted(EXPECTED[name].get("must", []))


@pytest.mark.skipif(not SHARED_CASES.is_dir(), reason="../shared/cases not present")
def test_shared_cases_match() -> None:
    expected = yaml.safe_load((SHARED_CASES / "expected.yaml").read_text())
    mismatches = {}
    for name, spec in expected.items():
        got = _rules(SHARED_CASES / name)
        if got != sorted(spec.get("must", [])):
            mismatches[name] = got
    assert not mismatches


def test_b01_names_largest_fitting_max_model_len() -> None:
    """KV103's fix gives the largest max-model-len that fits, on the order of 25k tokens (expected.yaml)."""
    result = run_check([str(CASES / "b01-llama8b-l4-default-context.yaml")], Options(allow_hub=False))
    kv103 = [d for d in result.diagnostics if d.rule == "KV103"]
    assert len(kv103) == 1
    import re

    m = re.search(r"--max-model-len (\d+) fits", kv103[0].fix)
    assert m, kv103[0].fix
    assert 15_000 <= int(m.group(1)) <= 40_000
    plan = result.containers[0].plan
    assert plan is not None and plan.max_model_len == 131072
    assert (
        plan.per_request_bytes == 16 * 2**30
    )  # 131072 tokens x 128 KiB (32 layers x 8 KV heads x 128 x 2 x 2 B)


def test_b04_lists_valid_tp_values() -> None:
    result = run_check([str(CASES / "b04-heads-not-divisible.yaml")], Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV401"]
    assert "1, 2, 4, 7" in d.fix
    assert d.loc is not None and d.loc.line == 18  # the line of `args:` holding "-tp", "8"


def test_cli_json_output_and_exit_code() -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["check", "--offline", "--format", "json", str(CASES / "b03-tp4-one-gpu.yaml")])
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    assert [d["rule"] for d in data["diagnostics"]] == ["KV403"]
    d = data["diagnostics"][0]
    assert d["file"].endswith("b03-tp4-one-gpu.yaml") and d["line"] > 1
    assert data["workloads"][0]["plan"]["kv"]["block_size"] == 16
    clean = runner.invoke(main, ["check", "--offline", str(CASES / "b09-clean.yaml")])
    assert clean.exit_code == 0, clean.output
    assert clean.output.strip().splitlines()[-1].startswith("0 errors, 0 warnings")
    assert clean.output.strip().splitlines()[-2] == "sized 1 of 1 serving container (1 on the GPU it names)"
