#!/usr/bin/env python3
"""Throughput, memory and start-up benchmark for ``kvlint check`` against the libyaml floor (issue 19).

One run prints, on the shared manifest corpus replicated to about --target documents (copied into a
temporary directory, linted offline):

  * the **floor**: CPU seconds for PyYAML's libyaml full load (``yaml.load_all(..., CSafeLoader)``) of the same
    files, read from disk the same way, with what the process held before it frozen (as kvlint's run freezes
    it), and how many files end at a YAML error (libyaml reads no further in them);
  * ``kvlint check`` with one job: its CPU seconds and **ratio = floor CPU / kvlint CPU** (1.0 would be
    linting at the speed of parsing alone);
  * ``kvlint check`` with --jobs (default: all cores): wall seconds and **ratio = floor CPU / kvlint wall**
    (what the cores buy), plus the CPU seconds of all its processes; the reports of the two runs are
    compared byte for byte;
  * the load stage alone (``kvlint.load.load_paths``) as a ratio to the floor;
  * **peak RSS** of a ``kvlint check`` process on one file of --small and of --large documents (the corpus
    documents repeated), and their quotient (the streaming run keeps memory flat);
  * the cold start of ``kvlint --help`` and of ``kvlint check`` on one bundled example manifest (best of --runs,
    wall and CPU seconds).

The kvlint runs go through the command's own code (:func:`kvlint.checkrun.run_paths` and the text report),
after one warm-up run that loads the catalogues. CPU time is measured with ``time.process_time`` and, for
worker processes, ``RUSAGE_CHILDREN``; on a machine shared with other work, CPU seconds are steadier than wall
seconds, which is why the one-job figure is a CPU-time ratio.

Usage: python bench/check_corpus.py [--corpus ../shared/corpus/manifests] [--target 5000] [--jobs N]
       [--small 2000] [--large 20000] [--runs 3] [--skip-rss]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# this checkout's kvlint, imported before any other on the path (an installed one, editable or not, would
# otherwise be measured when the bench runs from another checkout)
sys.path.insert(0, str(REPO))


def count_docs(text: str) -> int:
    return max(1, sum(1 for line in text.splitlines() if line.strip() == "---") + 1)


def corpus_files(corpus: Path) -> list[Path]:
    files = sorted(p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        raise SystemExit(f"no manifests under {corpus}")
    return files


def replicate(corpus: Path, target: int, dest: Path) -> int:
    files = corpus_files(corpus)
    per_round = sum(count_docs(p.read_text(errors="replace")) for p in files)
    rounds = max(1, round(target / per_round))
    for r in range(rounds):
        d = dest / f"copy{r:03d}"
        d.mkdir()
        for p in files:
            shutil.copyfile(p, d / p.name)
    return rounds


def one_file(corpus: Path, docs: int, dest: Path) -> tuple[Path, int]:
    """The corpus's YAML documents (``---`` segments) repeated into one file of about ``docs`` documents."""
    segments: list[str] = []
    for p in corpus_files(corpus):
        if p.suffix == ".json":
            continue
        text = p.read_text(errors="replace")
        for seg in text.split("\n---"):
            if seg.strip():
                segments.append(seg.strip("\n-") + "\n")
    out = dest / f"one-{docs}.yaml"
    n = 0
    with open(out, "w") as fh:
        while n < docs:
            for seg in segments:
                fh.write("---\n" + seg)
                n += 1
                if n >= docs:
                    break
    return out, n


def cpu() -> float:
    """CPU seconds of this process and of its terminated, waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def floor(files: list[Path]) -> tuple[float, int, int]:
    """(CPU s, documents loaded, files that end at a YAML error) of libyaml's full load of ``files``.

    The objects already alive in this process (kvlint's warm-up run: catalogues, memos, modules) are frozen
    (:func:`gc.freeze`) while the floor runs, and thawed after: unfrozen, every full collection of the
    floor's own run scanned them too, which made the floor about 5-8% slower than in a process holding only
    PyYAML (``docs/performance.md``, issue 19) and flattered the ratio. kvlint's run freezes what it finds
    alive in the same way (:func:`kvlint.stream.run_paths`). A file libyaml cannot parse ends its load at
    the first error; those files are counted so the report can say how much of the input the floor read.
    """
    import gc

    import yaml

    n = errors = 0
    gc.freeze()
    try:
        t0 = cpu()
        for f in files:
            with open(f, "rb") as fh:
                data = fh.read()
            try:
                for _ in yaml.load_all(data, Loader=yaml.CSafeLoader):
                    n += 1
            except yaml.YAMLError:
                errors += 1
        secs = cpu() - t0
    finally:
        gc.unfreeze()
    return secs, n, errors


def check(path: str, jobs: int) -> tuple[float, float, str, object]:
    """(CPU s, wall s, text report, result) of the check command's run on ``path``."""
    from kvlint.checkrun import run_paths
    from kvlint.options import Options
    from kvlint.report import render
    from kvlint.report.text import DEFAULT_WIDTH

    c0, w0 = cpu(), time.perf_counter()
    # the style of the text report rendered below, as the command passes that of the report it writes
    run = run_paths(
        [path],
        Options(allow_hub=False),
        jobs=jobs,
        keep_records=False,
        keep_json=False,
        text_style=(False, DEFAULT_WIDTH),
    )
    text = render("text", run.result)
    return cpu() - c0, time.perf_counter() - w0, text, run.result


_RSS_CHILD = """
import atexit, sys
def _hwm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                sys.stderr.write("VMHWM " + line.split()[1] + "\\n")
atexit.register(_hwm)
sys.argv = ["kvlint"] + sys.argv[1:]
from kvlint.cli import main
main()
"""


def peak_rss(path: Path, jobs: int) -> tuple[float, float]:
    """(peak RSS MiB, CPU s) of ``kvlint check`` on ``path`` in a process of its own. The peak is the
    process's own high-water mark (``VmHWM``, Linux): ``ru_maxrss`` of a child also counts the memory of
    the parent it was forked from."""
    cmd = [
        sys.executable,
        "-c",
        _RSS_CHILD,
        "check",
        "--offline",
        "--no-config",
        "--exit-zero",
        "-j",
        str(jobs),
    ]
    cmd += ["--max-file-bytes", str(max(2**24, 2 * path.stat().st_size)), "-o", os.devnull, str(path)]
    t0 = cpu()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(REPO), text=True)
    secs = cpu() - t0
    hwm = [line.split()[1] for line in proc.stderr.splitlines() if line.startswith("VMHWM ")]
    if proc.returncode != 0 or not hwm:
        raise SystemExit(f"kvlint check failed on {path}: {proc.stderr}")
    return int(hwm[-1]) / 1024, secs


def main() -> int:
    from kvlint.stream import default_jobs

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus" / "manifests"))
    ap.add_argument("--target", type=int, default=5000)
    ap.add_argument("--jobs", type=int, default=default_jobs(), help="jobs of the parallel run (all cores)")
    ap.add_argument("--small", type=int, default=2000, help="documents in the small one-file input")
    ap.add_argument("--large", type=int, default=20000, help="documents in the large one-file input")
    ap.add_argument("--runs", type=int, default=3, help="cold starts timed (best is printed)")
    ap.add_argument("--skip-rss", action="store_true", help="skip the one-file peak-RSS runs")
    args = ap.parse_args()

    from kvlint.load import load_paths

    corpus = Path(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        root.mkdir()
        rounds = replicate(corpus, args.target, root)
        files = sorted(p for p in root.rglob("*") if p.is_file())
        check(str(root / "copy000"), 1)  # warm the catalogues (loaded lazily, once per process)
        floor(files[:50])
        floor_cpu, floor_docs, floor_errors = floor(files)
        c0 = cpu()
        loaded = load_paths([str(root)])
        load_cpu = cpu() - c0
        del loaded
        cpu1, wall1, text1, result = check(str(root), 1)
        cpuN, wallN, textN, _ = check(str(root), args.jobs)
        same = text1 == textN
        print(
            f"corpus x{rounds}: {result.files} files, {result.documents} documents, {result.workloads} "  # type: ignore[attr-defined]
            f"workloads, {result.serving} serving containers, {len(result.diagnostics)} diagnostics"  # type: ignore[attr-defined]
        )
        docs = result.documents  # type: ignore[attr-defined]
        print(
            f"floor (libyaml full load): {floor_cpu:.2f} CPU s, {floor_docs / floor_cpu:,.0f} documents/CPU-s "
            f"({floor_docs} documents; {floor_errors} of {len(files)} files stop at a YAML error, read no further)"
        )
        print(f"load stage alone:          {load_cpu:.2f} CPU s, ratio {floor_cpu / load_cpu:.2f}x the floor")
        print(
            f"check, 1 job:              {cpu1:.2f} CPU s ({wall1:.2f} s wall), {docs / cpu1:,.0f} documents/CPU-s, "
            f"ratio {floor_cpu / cpu1:.2f}x the floor (CPU time; aim >= 0.7x)"
        )
        print(
            f"check, {args.jobs} jobs:             {wallN:.2f} s wall ({cpuN:.2f} CPU s in all processes), "
            f"ratio {floor_cpu / wallN:.2f}x the floor (floor CPU / wall; aim >= 1.2x with 2 jobs); "
            f"report {'identical to' if same else 'DIFFERENT from'} the 1-job run"
        )
        if not args.skip_rss:
            rss = {}
            for n in (args.small, args.large):
                path, got = one_file(corpus, n, Path(tmp))
                mib, secs = peak_rss(path, 1)
                rss[n] = mib
                size = path.stat().st_size / 2**20
                print(
                    f"one file of {got:,} documents ({size:.1f} MiB): peak RSS {mib:.0f} MiB ({secs:.1f} CPU s)"
                )
                path.unlink()
            print(
                f"peak RSS {args.large:,} / {args.small:,} documents: {rss[args.large] / rss[args.small]:.2f} "
                f"(aim <= 1.5)"
            )

    # this checkout's kvlint (``-m`` from its root), not whichever ``kvlint`` command is installed
    base = [sys.executable, "-m", "kvlint"]
    example = REPO / "fixtures" / "examples" / "chat-8b-l4.yaml"
    for argv, target in (
        (["--help"], "; target < 0.3 s"),
        # what a pre-commit hook or a pull request touching one manifest pays: imports, catalogues, one plan
        (
            ["check", "--offline", "--no-config", "--exit-zero", "--jobs", "1", str(example)],
            "",
        ),
    ):
        best, best_cpu = float("inf"), float("inf")
        for _ in range(args.runs):
            t0, c0 = time.perf_counter(), cpu()
            subprocess.run(base + argv, stdout=subprocess.DEVNULL, check=True, cwd=str(REPO))
            best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, cpu() - c0)
        shown = " ".join(["kvlint", *argv]).replace(str(REPO) + os.sep, "")
        print(f"cold start `{shown}`: best of {args.runs} = {best:.3f} s wall, {best_cpu:.3f} CPU s{target}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
