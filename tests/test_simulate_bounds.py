"""Absurd numeric options of ``kvlint simulate`` (found by an adversarial probe): ``--rate 1e-10`` put the first
arrival near step 10^11 and the simulator's 32-bit step arrays ended in an OverflowError traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kvlint.capacity.cli import simulate as simulate_cmd
from kvlint.capacity.workload import MAX_ARRIVAL_STEP, WorkloadError, WorkloadSpec, generate_columns

_CMD = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]


@pytest.mark.parametrize(
    "args",
    [
        ["--rate", "1e-10"],
        ["--rate", "1e-300"],
        ["--step-ms", "1e-300"],
        # the arrival time in steps is inf: int() raised OverflowError
        ["--rate", "1e-300", "--step-ms", "1e-300"],
        ["--step-ms", "1e-320"],
        ["--burst-size", "1", "--burst-every", str(10**20)],
        ["--burst-size", "1", "--burst-every", "9" * 400],  # past any float: the message's float() raised
    ],
)
def test_absurd_options_are_usage_errors(args):
    res = CliRunner().invoke(simulate_cmd, ["--accelerator", "h100", "--offline", *args, *_CMD])
    assert res.exit_code == 2, res.output
    assert f"beyond the {MAX_ARRIVAL_STEP:,} steps" in res.output
    assert "Traceback" not in res.output and not isinstance(res.exception, OverflowError)


def test_the_first_request_past_the_bound_stops_the_draw():
    with pytest.raises(WorkloadError, match=r"request 1 would arrive"):
        generate_columns(WorkloadSpec(requests=1000, rate=1e-10))


def test_arrivals_up_to_the_bound_are_drawn():
    # 10 requests, one burst every MAX_ARRIVAL_STEP // 9 steps: the last arrives at or below the bound
    every = MAX_ARRIVAL_STEP // 9
    cols = generate_columns(WorkloadSpec(requests=10, arrivals="burst", burst_size=1, burst_every=every))
    assert max(cols.arrival) == 9 * every <= MAX_ARRIVAL_STEP
    with pytest.raises(WorkloadError, match=r"request 11 would arrive"):
        generate_columns(WorkloadSpec(requests=11, arrivals="burst", burst_size=1, burst_every=every))


def test_a_trace_arrival_over_a_subnormal_step_is_refused_not_an_overflow(tmp_path):
    """A trace's arrival (at most 1e9 s) over a step of 1e-320 ms is infinitely many steps: refused as any arrival
    past the bound, where ``int(inf)`` raised OverflowError."""
    trace = tmp_path / "t.jsonl"
    trace.write_text('{"prompt_tokens": 10, "output_tokens": 5, "arrival_s": 1000}\n')
    res = CliRunner().invoke(
        simulate_cmd,
        ["--accelerator", "h100", "--offline", "--trace", str(trace), "--step-ms", "1e-320", *_CMD],
    )
    assert res.exit_code == 2, res.output
    assert f"beyond the {MAX_ARRIVAL_STEP:,} steps" in res.output and not isinstance(
        res.exception, OverflowError
    )
