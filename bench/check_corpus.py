#!/usr/bin/env python3
"""Throughput and start-up benchmark for ``kvlint check``.

Prints:
  * documents per second for the shared manifest corpus replicated to about --target documents
    (written into a temporary directory, linted offline through the real pipeline);
  * cold-start wall time of ``kvlint --help`` (best of --runs), the target being < 0.3 s.

Also prints the load stage alone (``kvlint.load.load_paths`` over the same files), best of --repeat.

Usage: python bench/check_corpus.py [--corpus ../shared/corpus/manifests] [--target 5000] [--runs 5]
       [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def count_docs(text: str) -> int:
    return max(1, sum(1 for line in text.splitlines() if line.strip() == "---") + 1)


def replicate(corpus: Path, target: int, dest: Path) -> int:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        raise SystemExit(f"no manifests under {corpus}")
    per_round = sum(count_docs(p.read_text(errors="replace")) for p in files)
    rounds = max(1, round(target / per_round))
    for r in range(rounds):
        d = dest / f"copy{r:03d}"
        d.mkdir()
        for p in files:
            shutil.copyfile(p, d / p.name)
    return rounds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus" / "manifests"))
    ap.add_argument("--target", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=1, help="time the check this many times, report the best")
    args = ap.parse_args()

    sys.path.insert(0, str(REPO))
    from kvlint.load import load_paths
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    with tempfile.TemporaryDirectory() as tmp:
        rounds = replicate(Path(args.corpus), args.target, Path(tmp))
        # warm the catalogues once (they are loaded lazily and cached per process)
        run_check([str(Path(tmp) / "copy000")], Options(allow_hub=False))
        dt = load_dt = float("inf")
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            loaded = load_paths([tmp])
            load_dt = min(load_dt, time.perf_counter() - t0)
            del loaded
            t0 = time.perf_counter()
            result = run_check([tmp], Options(allow_hub=False))
            dt = min(dt, time.perf_counter() - t0)
    print(
        f"corpus x{rounds}: {result.files} files, {result.documents} documents, {result.workloads} workloads, "
        f"{len(result.containers)} serving containers, {len(result.diagnostics)} diagnostics"
    )
    print(f"check: {dt:.2f} s, {result.documents / dt:,.0f} documents/s")
    print(f"  load stage alone: {load_dt:.2f} s, {result.documents / load_dt:,.0f} documents/s")

    exe = shutil.which("kvlint", path=str(Path(sys.executable).parent)) or shutil.which("kvlint")
    cmd = [exe, "--help"] if exe else [sys.executable, "-m", "kvlint", "--help"]
    best = float("inf")
    env = dict(os.environ)
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True, env=env)
        best = min(best, time.perf_counter() - t0)
    print(
        f"cold start `{' '.join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))}`: best of {args.runs} = {best:.3f} s (target < 0.3 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
