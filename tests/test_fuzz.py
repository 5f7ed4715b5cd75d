"""Seeded mutation fuzzing of the loader and pipeline over real manifests (issue 14).

``tools/fuzz_pipeline.py`` mutates the shared corpus and the fixtures (retyped keys, huge numbers, deep
nesting, alias bombs, tags, control characters, encodings, CR line endings, megabyte template lines...).
Here a fixed budget of seeded cases must load and lint with no exception escaping, no exception hidden in a
KV503 "could not finish checking" note, and each case within its time limit. The same cases found the
issue's bugs in the code before the fix (quadratic template scan, ``!!bool maybe``, 5,000-digit numbers).
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fuzz_pipeline", ROOT / "tools" / "fuzz_pipeline.py")
assert _spec is not None and _spec.loader is not None
F = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_pipeline"] = F
_spec.loader.exec_module(F)

SEED = 20250614
CASES = 300
LIMIT_S = 2.0


@pytest.fixture(scope="module")
def cases() -> list[tuple[str, str, bytes | str]]:
    return list(F.cases(F.default_paths(), SEED, CASES))


def test_seeded_mutations_cover_every_kind_of_mutation(cases: list[tuple[str, str, bytes | str]]) -> None:
    kinds = Counter(desc.split(" ")[1] for desc, _, _ in cases)
    names = {name for name, _ in F.TEXT_MUTATIONS}
    assert names <= set(kinds), names - set(kinds)
    assert kinds["data"] >= CASES // 4


def test_fuzzed_manifests_load_and_lint_without_errors_in_bounded_time(
    cases: list[tuple[str, str, bytes | str]],
) -> None:
    t = time.thread_time()  # CPU seconds of this thread: a loaded machine's other jobs do not count
    failures = []
    for desc, label, content in cases:
        why = F.run_case(label, content, LIMIT_S)
        if why is not None:
            failures.append(f"{desc}\n{why}")
    assert len(cases) == CASES
    assert not failures, "\n\n".join(failures[:5])
    assert time.thread_time() - t < CASES * 0.25  # 300 cases take a few CPU seconds
