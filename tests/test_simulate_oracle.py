"""The optimised simulation (:func:`kvlint.capacity.simulate.simulate` and ``simulate_columns``, which
``kvlint simulate`` runs) against the straightforward implementation it replaced (``tests/sim_reference.py``,
kvlint at c745b0f): every field of the result equal, over random workloads and configurations chosen to
exercise preemption (few blocks), chunked prefill, max_num_seqs limits, prefix caching, cancellation lag,
rejection (too long, never fits), contiguous reservation and bursty arrivals."""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import pytest

from kvlint.capacity.simulate import SimConfig, simulate, simulate_columns
from kvlint.capacity.workload import LengthDist, WorkloadSpec, generate, generate_columns

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sim_reference  # noqa: E402


def _fields(result: object) -> dict[str, object]:
    out = {}
    for f in dataclasses.fields(result):  # type: ignore[arg-type]
        if f.name == "config":
            continue
        v = getattr(result, f.name)
        out[f.name] = list(v) if not isinstance(v, (int, float, str)) else v
    return out


def _case(seed: int) -> tuple[WorkloadSpec, dict[str, object]]:
    rng = random.Random(seed)
    block = rng.choice((1, 8, 16, 32))
    max_len = rng.choice((1024, 4096, 32768))
    spec = WorkloadSpec(
        requests=rng.randint(50, 400),
        prompt=LengthDist("lognormal", rng.choice((64, 256, 700)), rng.choice((1024, 3000))),
        output=LengthDist("lognormal", rng.choice((16, 128)), rng.choice((256, 900))),
        arrivals=rng.choice(("poisson", "poisson", "burst")),
        rate=rng.choice((2.0, 20.0, 200.0)),
        burst_size=rng.randint(5, 80),
        burst_every=rng.randint(10, 200),
        cancel_prob=rng.choice((0.0, 0.0, 0.3)),
        cancel_lag_steps=rng.choice((0, 3)),
        prefix_groups=rng.choice((0, 3, 3)),
        prefix_tokens=rng.choice((100, 400)),
        prefix_share=rng.choice((0.0, 0.6, 0.9)),
        seed=seed,
    )
    cfg = {
        "num_blocks": rng.choice((8, 60, 200, 5000)),
        "block_size": block,
        "max_num_seqs": rng.choice((1, 4, 64, 256)),
        "max_num_batched_tokens": rng.choice((256, 2048, 8192)),
        "max_model_len": max_len,
        "mode": rng.choice(("paged", "paged", "contiguous")),
        "enable_prefix_caching": rng.random() < 0.5,
        "cancel_lag_steps": spec.cancel_lag_steps,
    }
    return spec, cfg


@pytest.mark.parametrize("seed", range(150))
def test_simulation_equals_the_reference(seed: int) -> None:
    spec, cfg = _case(seed)
    requests = generate(spec)
    want = sim_reference.simulate(requests, sim_reference.SimConfig(**cfg))  # type: ignore[arg-type]
    got = simulate(requests, SimConfig(**cfg))  # type: ignore[arg-type]
    assert _fields(got) == _fields(want)
    assert _fields(simulate_columns(generate_columns(spec), SimConfig(**cfg))) == _fields(want)  # type: ignore[arg-type]
