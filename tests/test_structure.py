"""The package's shape: no import cycles, every module importable on its own, every package shipped.

The cycle test reads every ``import`` statement of every module under ``kvlint/`` (module level, inside
functions and under ``if TYPE_CHECKING:`` alike) and fails on any strongly connected component of more than
one module, naming the modules and the imports that close the cycle.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "kvlint"


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def import_graph() -> dict[str, dict[str, int]]:
    """module -> imported kvlint module -> line of the first such import (every import statement counts)."""
    mods = _modules()
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}
    for m, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = m.split(".") if is_pkg else m.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    name = ".".join(base + ([node.module] if node.module else []))
                else:
                    name = node.module or ""
                for a in node.names:
                    targets.append(f"{name}.{a.name}" if f"{name}.{a.name}" in mods else name)
            for t in targets:
                if t in mods and t != m:
                    graph[m].setdefault(t, node.lineno)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    graph = import_graph()
    problems = []
    for comp in _cycles(graph):
        edges = [f"{a} imports {b} (line {graph[a][b]})" for a in comp for b in graph[a] if b in comp]
        problems.append("; ".join(edges))
    assert problems == [], "import cycles:\n" + "\n".join(problems)


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_module_imports_on_its_own() -> None:
    """Importing any single module first (as a user's ``from kvlint.x import y`` does) must work: package
    ``__init__`` files must not pull in modules that import back into a half-initialised package."""
    names = sorted(m for m in _modules() if m != "kvlint.__main__")
    code = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {names!r}:\n"
        "    for k in [k for k in sys.modules if k == 'kvlint' or k.startswith('kvlint.')]:\n"
        "        del sys.modules[k]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
        "print('\\n'.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_every_package_is_shipped() -> None:
    """Each directory of ``kvlint/`` with an ``__init__.py`` is listed in pyproject.toml's packages (an
    unlisted one is missing from the wheel: an installed kvlint would then run without it)."""
    tomllib = pytest.importorskip("tomllib")
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in PKG.rglob("__init__.py")}
    assert found - listed == set()


def test_no_path_of_the_build_machine_in_the_repository() -> None:
    """Sources are cited upstream (repository, path, commit) or as ``../shared/...`` relative to the checkout,
    never by an absolute path of the machine they were read on."""
    import re

    files = subprocess.run(
        ["git", "ls-files"], capture_output=True, text=True, cwd=ROOT, check=False
    ).stdout.split()
    if not files:
        pytest.skip("not a git checkout")
    pattern = re.compile(r"/work/(shared|main|wt|\.mirror)\b")
    hits = []
    for name in files:
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 4_000_000:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line) and name != "tests/test_structure.py":
                hits.append(f"{name}:{number}")
    assert hits == []
