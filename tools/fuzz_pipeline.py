#!/usr/bin/env python3
"""Seeded mutation fuzzing of the loader and the pipeline with hostile versions of real manifests.

Each case takes one manifest file (the shared corpus and the fixtures) and mutates it, either its parsed data
(then written back as YAML or JSON) or its text:

* data: values replaced by odd shapes and types (None, lists, mappings, booleans, template text), huge and
  negative numbers (``10**30``, ``1e308``, 5,000-digit strings), absurd engine flags appended to container
  args (``--tensor-parallel-size 1000000000000``), retyped keys (ints, booleans, null as mapping keys),
  deep nesting, long strings with control characters;
* text: CR-only and CRLF line endings, U+2028 line separators, UTF-16 with a BOM, YAML tags with impossible
  values (``!!bool maybe``, ``!!int x``, custom tags), alias bombs (billion laughs), deep flow nesting,
  NUL bytes and invalid UTF-8, truncation mid-document, megabyte lines of ``{{ .`` template text.

For each case :func:`run_case` loads the bytes with :func:`kvlint.load.load_text`, runs
:func:`kvlint.pipeline.run_documents` and renders every report format, then checks: no exception escapes, the
pipeline did not have to turn an exception into its KV503 "could not finish checking this workload" note (a
bug it hid), the JUnit XML parses, the text report holds no raw control characters, and the case took less
than ``limit_s`` seconds of CPU (its thread's: a loaded machine's other jobs do not count). ``tests/test_fuzz.py`` runs a small seeded budget of cases in the suite.

Usage: python tools/fuzz_pipeline.py [--seed N] [--cases N] [--limit S] [PATH ...]
(default paths: ../shared/corpus/manifests and fixtures/). Exit status 1 when any case failed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from kvlint.load import load_text  # noqa: E402
from kvlint.options import Options  # noqa: E402
from kvlint.pipeline import INTERNAL_ERROR, run_documents  # noqa: E402

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
    10**30,
    -(10**20),
    1e308,
    -1e308,
    "nan",
    "inf",
    "1e999999",
    "1e999999Gi",
    "9" * 5000,
    "$(X)",
    "{{ .V }}",
    "{{ ." * 2000,
    "a\x00b\x1b[31m\u202e\nforged.yaml:1:1: error KV101",
]

HOSTILE_ARGS: list[list[str]] = [
    ["--tensor-parallel-size", "1000000000000"],
    ["--pipeline-parallel-size", "1000000000000"],
    ["--data-parallel-size", "1000000000000"],
    ["--max-model-len", "9" * 5000],
    ["--max-model-len", "1e12"],
    ["--max-num-seqs", "99999999999999999999999"],
    ["--max-num-batched-tokens", "-1"],
    ["--gpu-memory-utilization", "1e308"],
    ["--kv-cache-dtype", "\x00"],
    ["--model", "/etc/passwd"],
    ["--model", "../../../../etc"],
    ["--block-size", "0"],
]


@dataclass
class Failure:
    """One failed case: what was done, and the traceback or reason."""

    case: str
    detail: str


class CaseTimeout(Exception):
    """A case ran past its CPU time limit (raised from SIGPROF in the main thread)."""


# ------------------------------------------------------------------------------------------ mutations


def _nested(depth: int, leaf: Any) -> Any:
    out = leaf
    for i in range(depth):
        out = [out] if i % 2 else {"k": out}
    return out


def mutate_data(node: Any, rng: random.Random, rate: float) -> None:
    """Replace, in place, values of ``node`` by odd ones (probability ``rate`` each), retype some keys, and
    append hostile flags to any ``args``/``command`` list met."""
    if isinstance(node, dict):
        for k in list(node.keys()):
            v = node[k]
            if k in ("args", "command") and isinstance(v, list) and rng.random() < 0.5:
                v.extend(rng.choice(HOSTILE_ARGS))
            r = rng.random()
            if r < rate:
                node[k] = rng.choice(ODD)
            elif r < rate * 1.2:
                node[k] = _nested(rng.choice((30, 90, 250)), v)
            elif r < rate * 1.5:
                new_key = rng.choice((1, True, None, 1.5, "k\x00", "a" * 300))
                node[new_key] = node.pop(k)
            else:
                mutate_data(v, rng, rate)
    elif isinstance(node, list):
        for i in range(len(node)):
            if rng.random() < rate:
                node[i] = rng.choice(ODD)
            else:
                mutate_data(node[i], rng, rate)


def _dump(data: Any, as_json: bool) -> str:
    if as_json:
        return json.dumps(data, default=str)
    try:
        return yaml.safe_dump_all(data, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError, TypeError):
        return json.dumps(data, default=str)


_BOMB = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def _text_mutations() -> list[tuple[str, Callable[[str, random.Random], str | bytes]]]:
    def insert(text: str, rng: random.Random, what: str) -> str:
        """``what`` as a top-level key of a random document (first line, or right after a ``---``)."""
        lines = text.split("\n")
        starts = [0] + [i + 1 for i, line in enumerate(lines) if line.startswith("---")]
        i = rng.choice(starts)
        return "\n".join(lines[:i] + [what] + lines[i:])

    return [
        ("cr-only", lambda t, r: t.replace("\n", "\r")),
        ("crlf", lambda t, r: t.replace("\n", "\r\n")),
        ("line-separators", lambda t, r: t.replace("\n", "\u2028")),
        ("utf16-bom", lambda t, r: t.encode("utf-16")),
        ("bad-bool-tag", lambda t, r: insert(t, r, "zz: !!bool maybe")),
        ("bad-int-tag", lambda t, r: insert(t, r, "zz: !!int x")),
        ("custom-tag", lambda t, r: insert(t, r, "zz: !Ref {a: [1, 2]}")),
        ("alias-bomb", lambda t, r: t + "\n---\n" + _BOMB),
        ("deep-flow", lambda t, r: t + "\n---\nz: " + "[" * 5000 + "]" * 5000 + "\n"),
        ("nul", lambda t, r: t[: len(t) // 2] + "\x00" + t[len(t) // 2 :]),
        (
            "bad-utf8",
            lambda t, r: t.encode("utf-8")[: len(t) // 2] + b"\xff\xfe" + t.encode("utf-8")[len(t) // 2 :],
        ),
        ("truncated", lambda t, r: t[: r.randrange(max(1, len(t)))]),
        ("template-line", lambda t, r: insert(t, r, "zz: " + "{{ ." * 250_000)),
        ("controls", lambda t, r: insert(t, r, 'zz: "\\x1b[2K\\u202e\\x07\\x00"')),
        ("sexagesimal", lambda t, r: insert(t, r, "zz: " + "1:" * 50_000 + "1")),
        ("huge-int", lambda t, r: insert(t, r, "zz: " + "9" * 5000)),
        ("long-quantity", lambda t, r: t.replace("memory: ", "memory: 1" + " " * 60_000 + "Gi!", 1)),
    ]


TEXT_MUTATIONS = _text_mutations()


def cases(paths: list[str], seed: int, count: int) -> Iterator[tuple[str, str, bytes | str]]:
    """``count`` seeded cases ``(description, file label, content)`` from the manifests under ``paths``."""
    files: list[Path] = []
    for p in paths:
        pp = Path(p)
        if pp.is_dir():
            files += sorted(
                f for f in pp.rglob("*") if f.suffix in (".yaml", ".yml", ".json") and f.is_file()
            )
        elif pp.is_file():
            files.append(pp)
    rng = random.Random(seed)
    for n in range(count):
        f = rng.choice(files)
        text = f.read_text(encoding="utf-8", errors="replace")
        if rng.random() < 0.5:
            try:
                docs = [d for d in yaml.safe_load_all(text) if d is not None]
            except yaml.YAMLError:
                docs = []
            if docs:
                docs = copy.deepcopy(docs)
                for d in docs:
                    mutate_data(d, rng, rng.choice((0.02, 0.05, 0.15)))
                as_json = rng.random() < 0.3
                content: str | bytes = _dump(docs[0] if as_json else docs, as_json)
                yield f"#{n} data mutation of {f.name}", f.name + (".json" if as_json else ""), content
                continue
        name, fn = rng.choice(TEXT_MUTATIONS)
        yield f"#{n} {name} of {f.name}", f.name, fn(text, rng)


# ------------------------------------------------------------------------------------------ running


def _alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout()


def run_case(label: str, content: bytes | str, limit_s: float) -> str | None:
    """Load and lint one case; the failure (traceback, KV503 internal error, time) or None. Time is CPU time
    (this thread's, ``time.thread_time``; a case that spins is stopped after ``5 x limit_s`` CPU seconds of the
    process), never wall time: a loaded machine only makes the wall time longer."""
    use_alarm = hasattr(signal, "setitimer") and _main_thread()
    if use_alarm:
        old = signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, limit_s * 5)
    t = time.thread_time()
    try:
        loaded = load_text(content, label)
        result = run_documents(loaded, Options(allow_hub=False, allow_local_paths=False))
    except CaseTimeout:
        return f"did not finish within {limit_s * 5:g} CPU s"
    except Exception:
        return traceback.format_exc(limit=-8)
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
    try:  # every report renders, and the XML one is well-formed
        from xml.etree import ElementTree

        from kvlint.report import FORMATS, render

        for fmt in FORMATS:
            out = render(fmt, result)
            if fmt == "junit":
                ElementTree.fromstring(out.encode("utf-8"))
            elif fmt == "text" and any(c in out for c in "\x00\x1b\u202e"):
                return "text report holds raw control characters"
    except Exception:
        return traceback.format_exc(limit=-8)
    dt = time.thread_time() - t
    internal = [
        d.message for d in result.diagnostics if d.rule == "KV503" and d.message.startswith(INTERNAL_ERROR)
    ]
    if internal:
        return "pipeline hid an exception: " + internal[0][:500]
    if dt > limit_s:
        return f"took {dt:.2f} CPU s (limit {limit_s:g} s)"
    return None


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def fuzz(
    paths: list[str], seed: int = 0, count: int = 200, limit_s: float = 3.0
) -> tuple[list[Failure], int]:
    """Run ``count`` seeded cases; returns the failures and the number of cases run."""
    failures: list[Failure] = []
    n = 0
    for desc, label, content in cases(paths, seed, count):
        n += 1
        why = run_case(label, content, limit_s)
        if why is not None:
            failures.append(Failure(desc, why))
    return failures, n


def default_paths() -> list[str]:
    """The shared corpus (when present) and this repository's fixtures."""
    return [
        p
        for p in (str(REPO.parent / "shared" / "corpus" / "manifests"), str(REPO / "fixtures"))
        if os.path.exists(p)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--limit", type=float, default=3.0, help="CPU seconds one case may take")
    args = ap.parse_args()
    t = time.perf_counter()
    failures, n = fuzz(args.paths or default_paths(), args.seed, args.cases, args.limit)
    for f in failures:
        print(f"== {f.case}\n{f.detail}\n")
    print(f"{len(failures)} failing case(s) of {n} (seed {args.seed}) in {time.perf_counter() - t:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
