"""Benchmark: the paged KV-cache scheduler simulation (kvlint.capacity) and the whole `kvlint simulate` report.

1. One simulation: a 100,000-request Poisson workload (prompt lognormal p50 512 / p95 2048, output lognormal p50
   128 / p95 512, 40 requests/s, 30 ms steps, seed 0) on 27,540 usable blocks of 16 tokens, max_num_seqs 1024,
   max_num_batched_tokens 8192, max_model_len 32000; prints the wall time and requests per second.
2. The report: ``build_report`` as ``kvlint simulate --requests 100000 --accelerator h100 -- vllm serve
   meta-llama/Llama-3.1-8B-Instruct --max-model-len 32000`` runs it (default workload at 10 requests/s, the
   paged and contiguous simulations and the three further p95-output sensitivity runs, with the bundled model
   config, no Hub), then the text rendering; prints both times against the aim of under 10 s for the whole
   command on one core (the command's own start-up, imports and planning, come on top: about 0.7 s here).

Figures only; nothing is asserted.

    .venv/bin/python bench/simulate.py [--requests N] [--rate R]
"""

from __future__ import annotations

import argparse
import time

from kvlint.capacity.context import resolve
from kvlint.capacity.report import build_report
from kvlint.capacity.simulate import SimConfig, simulate
from kvlint.capacity.workload import WorkloadSpec, generate
from kvlint.options import Options

#: the whole `kvlint simulate` command, sensitivity runs included, at 100,000 requests on one core (issue 19)
AIM_S = 10.0


def main() -> None:
    """Run the benchmarks and print the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--rate", type=float, default=40.0, help="arrival rate of the single simulation")
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

    argv = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32000"]
    ctx = resolve(argv, Options(accelerator="h100", allow_hub=False))
    t3, c3 = time.perf_counter(), time.process_time()
    rep = build_report(ctx, WorkloadSpec(requests=args.requests))
    t4, c4 = time.perf_counter(), time.process_time()
    rep.render("text")
    t5 = time.perf_counter()
    runs = 2 + sum(1 for s in rep.sensitivity if s.factor != 1.0)
    print(
        f"build_report, {args.requests:,} requests at {rep.workload.rate:g} requests/s on "
        f"{rep.config.num_blocks:,} blocks ({runs} simulations, sensitivity included): {t4 - t3:.2f} s wall, "
        f"{c4 - c3:.2f} s CPU; rendering {t5 - t4:.2f} s"
    )
    print(f"report total {t5 - t3:.2f} s against the aim of {AIM_S:g} s for the whole command")


if __name__ == "__main__":
    main()
