"""Benchmark: simulated requests per second of the paged KV-cache scheduler simulation (kvlint.capacity).

Generates a 100,000-request Poisson workload (prompt lognormal p50 512 / p95 2048, output lognormal p50 128 /
p95 512, 40 requests/s, 30 ms steps, seed 0) and simulates it on the cache vLLM 0.33.0 would allocate for
Llama-3.1-8B on one H100 80GB at max_model_len 32000 (27,540 usable blocks of 16 tokens, max_num_seqs 1024,
max_num_batched_tokens 8192), then prints the wall time and requests per second. Aim: under 10 s on one core.

    .venv/bin/python bench/simulate.py [--requests N]
"""

from __future__ import annotations

import argparse
import time

from kvlint.capacity.simulate import SimConfig, simulate
from kvlint.capacity.workload import WorkloadSpec, generate


def main() -> None:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--rate", type=float, default=40.0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    reqs = generate(WorkloadSpec(requests=args.requests, rate=args.rate, seed=0))
    t1 = time.perf_counter()
    cfg = SimConfig(
        num_blocks=27_540, block_size=16, max_num_seqs=1024, max_num_batched_tokens=8192, max_model_len=32_000
    )
    res = simulate(reqs, cfg)
    t2 = time.perf_counter()
    print(f"generated {len(reqs):,} requests in {t1 - t0:.2f} s")
    print(
        f"simulated {len(reqs):,} requests ({res.steps:,} steps, peak {res.peak_blocks:,} blocks, "
        f"{res.preemptions:,} preemptions) in {t2 - t1:.2f} s: {len(reqs) / (t2 - t1):,.0f} requests/s"
    )
    print(f"total {t2 - t0:.2f} s: {len(reqs) / (t2 - t0):,.0f} requests/s including generation")


if __name__ == "__main__":
    main()
