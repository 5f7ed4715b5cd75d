"""Hostile inputs found by the break29 adversarial pass: ``kvlint plan --sweep`` fraction ranges, ... Expected
figures come from kvlint's own functions, never from engine numbers; work is counted, never timed."""

from __future__ import annotations

import builtins

import pytest
from click.testing import CliRunner

import kvlint.capacity.sweep as sweep_mod
from kvlint.capacity.sweep import SweepError, parse_sweep
from kvlint.cli import main


@pytest.mark.parametrize("spec", ["1..1e400", "-inf..1", "0.5..inf", "nan..1", "0.5..nan"])
def test_sweep_fraction_range_with_an_infinite_or_nan_end_is_refused(spec: str) -> None:
    with pytest.raises(SweepError, match=r"must be in \(0, 1\]"):
        parse_sweep(f"gpu-memory-utilization={spec}")


def test_sweep_fraction_range_far_outside_0_1_is_refused_before_its_points_are_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = [0]

    def counting_round(*args: object) -> object:
        calls[0] += 1
        return builtins.round(*args)  # type: ignore[call-overload]

    # each point of a fraction range is made by one round(); the module's name shadows the builtin
    monkeypatch.setattr(sweep_mod, "round", counting_round, raising=False)
    with pytest.raises(SweepError):
        parse_sweep("gpu-memory-utilization=-1e4..1")
    assert calls[0] <= 2  # the step count at most; -1e4..1 made 200,021 points before it was refused
    calls[0] = 0
    assert parse_sweep("gpu-memory-utilization=0.05..1")[1][-1] == 1.0
    assert calls[0] == 1 + 20


@pytest.mark.parametrize(
    "engine",
    [
        ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"],
        ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"],
    ],
)
def test_plan_sweep_with_an_infinite_fraction_is_a_usage_error(engine: list[str]) -> None:
    name = "gpu-memory-utilization" if engine[0] == "vllm" else "mem-fraction-static"
    r = CliRunner().invoke(
        main, ["plan", "--offline", "--accelerator", "h100", "--sweep", f"{name}=1..1e400", "--", *engine]
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2 and "(0, 1]" in r.output
