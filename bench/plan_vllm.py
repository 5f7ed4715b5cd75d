#!/usr/bin/env python3
"""CPU time of the vLLM memory model (``plan_vllm_detailed``) on every vLLM plan of the corpus, A/B (issue 19).

The inputs are what ``kvlint check --offline`` plans on the shared corpus: each vLLM container on its own GPU
and on each GPU of the fleet when its GPU is unknown (settings, model, memory total, GPU name and compute
capability, read from the check's results). Each pass clears the memory models' memos (every ``cache_clear``
of a ``kvlint.memory``/``kvlint.models`` function, and the layer-count memo), then plans every input once
(``cold``: the first plan of each model in a run) and ``--repeat`` more times (``warm``: what a re-plan of a
known model costs). CPU seconds by ``time.process_time``.

With ``--base DIR``, the passes alternate between a process on this tree and one on DIR (another checkout,
e.g. ``git worktree add --detach ../base main``), so both see the same machine load; it prints each tree's
median CPU seconds per pass and the ratio, and checks that both trees compute the same plans (a digest of
every plan's ``repr``).

Usage: python bench/plan_vllm.py [--corpus ../shared/corpus/manifests] [--passes 5] [--repeat 4]
       [--base DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _inputs(corpus: str) -> list[tuple[Any, Any, int, str, str | None]]:
    """``(settings, model, total_bytes, gpu_name, compute_capability)`` of every vLLM plan of a check run."""
    from kvlint.memory.stage import plannable_gpu
    from kvlint.memory.vllm import VllmSettings
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    result = run_check([corpus], Options(allow_hub=False))
    out = []
    for cr in result.containers:
        if cr.serving.engine != "vllm" or not isinstance(cr.settings, VllmSettings) or cr.model is None:
            continue
        gpu = plannable_gpu(cr.placement, "vllm")
        if isinstance(gpu, tuple):
            acc, total = gpu
            out.append((cr.settings, cr.model, total, acc.name, acc.compute_capability))
        for fe in cr.fleet:
            if fe.detail is not None:
                acc = fe.accelerator
                out.append(
                    (cr.settings, cr.model, fe.detail.plan.total_bytes, acc.name, acc.compute_capability)
                )
    return out


def _clear_memos() -> None:
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("kvlint.memory", "kvlint.models")) or mod is None:
            continue
        for obj in list(vars(mod).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear) and getattr(obj, "__module__", "").startswith("kvlint"):
                clear()
    from kvlint.memory import kv

    getattr(kv, "_COUNTS", {}).clear()


def worker(corpus: str, repeat: int) -> dict[str, Any]:
    from kvlint.memory.vllm import PlanError, plan_vllm_detailed

    inputs = _inputs(corpus)

    def once() -> list[str]:
        out = []
        for s, m, total, name, cc in inputs:
            try:
                out.append(repr(plan_vllm_detailed(s, m, total, gpu_name=name, compute_capability=cc)))
            except (PlanError, ValueError, ZeroDivisionError, KeyError, TypeError, OverflowError) as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        return out

    _clear_memos()
    t0 = time.process_time()
    reprs = once()
    cold = time.process_time() - t0
    t0 = time.process_time()
    for _ in range(repeat):
        once()
    warm = (time.process_time() - t0) / max(1, repeat)
    digest = hashlib.sha256("\n".join(reprs).encode()).hexdigest()[:16]
    return {"plans": len(inputs), "cold": cold, "warm": warm, "digest": digest}


def _run(tree: Path, corpus: str, repeat: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [
        sys.executable,
        str(HERE / "plan_vllm.py"),
        "--worker",
        "--corpus",
        corpus,
        "--repeat",
        str(repeat),
    ]
    # the worker imports kvlint from `tree`: run the script from this tree, the code from that one
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=str(tree))
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus" / "manifests"))
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=4)
    ap.add_argument("--base", default=None, help="another checkout to compare with (A/B, interleaved)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        print(json.dumps(worker(a.corpus, a.repeat)))
        return 0
    trees = {"this": REPO} | ({"base": Path(a.base).resolve()} if a.base else {})
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in trees}
    for i in range(a.passes):
        order = list(trees.items()) if i % 2 == 0 else list(reversed(trees.items()))
        for label, tree in order:
            r = _run(tree, a.corpus, a.repeat)
            runs[label].append(r)
            print(f"pass {i + 1} {label}: {r}", flush=True)
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("cold", "warm")} for k, v in runs.items()}
    for k, v in med.items():
        print(
            f"{k}: {runs[k][0]['plans']} plans, median cold {v['cold']:.3f} s, warm {v['warm']:.3f} s per pass"
        )
    if "base" in med:
        for m in ("cold", "warm"):
            print(f"{m}: this / base = {med['this'][m] / med['base'][m]:.3f}")
        same = {r["digest"] for rs in runs.values() for r in rs}
        print("plans identical" if len(same) == 1 else f"PLANS DIFFER: {sorted(same)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
