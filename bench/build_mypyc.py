#!/usr/bin/env python3
"""Opt-in compiled build of kvlint's hot modules with mypyc (issue 19), in place in this checkout.

kvlint is pure Python and stays so by default: ``pip install .`` and every command of the README run the
``.py`` files. This script compiles the modules where ``kvlint check`` spends its CPU time (listed in
:data:`MODULES`, chosen by profiling ``bench/check_corpus.py``) into C extensions written beside their
sources (``kvlint/load.cpython-311-x86_64-linux-gnu.so`` next to ``kvlint/load.py``, plus one shared
``*__mypyc*.so`` at the top of the checkout); Python imports an extension module in preference to the
``.py`` of the same name, so the compiled build is whatever this checkout imports until ``--clean``
removes the extensions again. ``bench/check_corpus.py`` prints which build it measured.

Needs mypy (whose ``mypyc`` does the compiling; the dev extras install it), a C compiler and the Python
headers. The compiled modules behave as the pure ones (the test suite and the corpus outputs are the
same); they are a measurement of what compiling buys, see docs/performance.md.

Usage: python bench/build_mypyc.py [--clean] [MODULE.py ...]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The modules compiled by default (paths from the checkout's root).
MODULES = [
    "kvlint/load.py",
    "kvlint/engines/shell.py",
    "kvlint/engines/command.py",
    "kvlint/engines/vllm.py",
    "kvlint/memory/vllm.py",
    "kvlint/rules/runner.py",
    "kvlint/report/text.py",
    "kvlint/statement.py",
    "kvlint/pipeline.py",
    "kvlint/workloads/base.py",
    "kvlint/workloads/find.py",
    "kvlint/workloads/stack_values.py",
    "kvlint/diagstore.py",
    "kvlint/rules/context.py",
    "kvlint/rules/families/parallelism.py",
    "kvlint/accelerators/placement.py",
    "kvlint/memory/stage.py",
]


def compiled_files(root: Path = REPO) -> list[Path]:
    """The mypyc extensions present in the checkout ``root`` (in ``kvlint/`` and the shared library at the
    top)."""
    found = [p for p in (root / "kvlint").rglob("*.so")]
    found += [p for p in root.glob("*__mypyc*.so")]
    return sorted(found)


def clean(root: Path = REPO) -> list[Path]:
    """Remove the compiled extensions from ``root`` (the pure build is imported again); the removed paths."""
    gone = compiled_files(root)
    for p in gone:
        p.unlink()
    return gone


def build(modules: list[str]) -> None:
    """Compile ``modules`` (paths relative to the checkout) with mypyc and place the extensions in place."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    os.chdir(REPO)
    exts = mypycify(modules, opt_level="3", target_dir="build/mypyc")
    # a bare Distribution: setuptools' setup() would also read pyproject.toml's [project], which is the pure
    # package's metadata and irrelevant here
    dist = Distribution({"name": "kvlint-mypyc", "ext_modules": exts})
    dist.script_args = ["build_ext", "--inplace", "--build-temp", "build/mypyc/temp"]
    dist.parse_command_line()
    dist.run_commands()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clean", action="store_true", help="remove the compiled extensions and stop")
    ap.add_argument("modules", nargs="*", help=f"modules to compile (default: {len(MODULES)} hot modules)")
    args = ap.parse_args()
    removed = clean()
    if removed:
        print(f"removed {len(removed)} compiled extension(s)")
    if args.clean:
        return 0
    build(args.modules or MODULES)
    print(f"compiled {len(compiled_files())} extension(s); `python bench/build_mypyc.py --clean` removes them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
