#!/usr/bin/env python3
"""Mutation fuzzing of the pipeline: replace random values of real manifests with odd shapes and types
(None, lists, mappings, negative or huge numbers, template text) and report any stage that raises.

The pipeline turns such failures into a located KV503 ("kvlint could not finish checking this workload");
this script records each one with its traceback so the check can be made robust.

Usage: python tools/fuzz_pipeline.py [--seed N] [--rounds N] [--rate P] [PATH ...]
(default paths: ../shared/corpus/manifests and fixtures/). Exit status 1 when anything raised.
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kvlint import pipeline  # noqa: E402
from kvlint.load import load_paths  # noqa: E402
from kvlint.types import LoadResult  # noqa: E402

ODD: list[Any] = [
    None,
    0,
    -1,
    1.5,
    "",
    "abc",
    [],
    {},
    [1, 2],
    {"a": 1},
    True,
    10**20,
    "nan",
    "$(X)",
    "{{ .V }}",
]


def mutate(node: Any, rng: random.Random, rate: float) -> None:
    """Replace, in place, each value of ``node`` with an odd one with probability ``rate``."""
    if isinstance(node, dict):
        keys: list[Any] = list(node.keys())
    elif isinstance(node, list):
        keys = list(range(len(node)))
    else:
        return
    for k in keys:
        if rng.random() < rate:
            node[k] = rng.choice(ODD)
        else:
            mutate(node[k], rng, rate)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--rate", type=float, default=0.02)
    args = ap.parse_args()
    paths = args.paths or [str(REPO.parent / "shared" / "corpus" / "manifests"), str(REPO / "fixtures")]
    base = load_paths([p for p in paths if Path(p).exists()])
    rng = random.Random(args.seed)
    failures: dict[str, str] = {}
    original = pipeline._internal_error

    def record(w: Any, exc: Exception) -> Any:
        lines = traceback.format_exc().splitlines()
        failures.setdefault(lines[-3] if len(lines) > 2 else repr(exc), "\n".join(lines[-10:]))
        return original(w, exc)

    pipeline._internal_error = record  # type: ignore[assignment]
    for _ in range(args.rounds):
        docs = []
        for d in base.documents:
            nd = copy.deepcopy(d)
            mutate(nd.data, rng, args.rate)
            docs.append(nd)
        try:
            pipeline.run_documents(
                LoadResult(documents=docs, files=base.files), pipeline.Options(allow_hub=False)
            )
        except Exception:  # outside the per-workload guard
            lines = traceback.format_exc().splitlines()
            failures.setdefault(lines[-3], "\n".join(lines[-10:]))
    for tb in failures.values():
        print(tb, end="\n\n")
    print(f"{len(failures)} distinct failure(s) in {args.rounds} rounds over {len(base.documents)} documents")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
