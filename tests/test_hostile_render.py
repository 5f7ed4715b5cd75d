"""Hostile charts and kustomizations on the CLI: what ``kvlint check CHART|KUSTOMIZATION`` runs, reads and fetches.

A chart or kustomization in a pull request is written by whoever opened it; kvlint renders it (``helm
template``, ``kubectl kustomize``) on the CI runner. Nothing in it may make kvlint read files outside its tree,
fetch anything, run anything, hang or exhaust memory, or end in a traceback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
HAS_KUSTOMIZE = shutil.which("kubectl") is not None or shutil.which("kustomize") is not None


def _run_isolated(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with this tree's kvlint, memory capped at 1 GiB (a read of ``/dev/zero``
    ends in MemoryError there, not in the test runner)."""
    prelude = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=timeout, env=env
    )


# ------------------------------------------------------------------------------------------ kustomize: origins


def test_kustomization_fields_of_the_wrong_type_are_not_a_traceback(tmp_path: Path) -> None:
    """The JSON 6902 source pass (:func:`kvlint.origins.json6902_patches`) runs on every kustomization named,
    built or not: ``patchesJson6902: 7`` raised TypeError out of ``kvlint check`` (a traceback, exit 1)."""
    from kvlint.origins import json6902_patches

    k = tmp_path / "k"
    k.mkdir()
    bodies = [
        "resources: 5\npatchesJson6902: 7\n",
        "patches: {a: 1}\nnamePrefix: [x]\nresources: [1, {a: b}]\n",
        "patches:\n- target: {kind: [D], name: x}\n  path: [a]\n- target: 3\n- 4\n",
    ]
    for body in bodies:
        (k / "kustomization.yaml").write_text(body)
        assert json6902_patches(str(k)) == []


@pytest.mark.skipif(not HAS_KUSTOMIZE, reason="no kustomize")
def test_kustomization_of_the_wrong_types_is_a_finding_in_every_format(tmp_path: Path) -> None:
    k = tmp_path / "k"
    k.mkdir()
    (k / "kustomization.yaml").write_text("resources: 5\npatchesJson6902: 7\n")
    for fmt in ("text", "sarif", "json"):
        res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(k)])
        assert res.exception is None or isinstance(res.exception, SystemExit), res.output
        assert res.exit_code == 1 and "KV001" in res.output, res.output


@pytest.mark.parametrize("target", ["/dev/zero", "FIFO"])
def test_a_patch_path_that_never_ends_is_not_read(tmp_path: Path, target: str) -> None:
    """``path: /dev/zero`` in a kustomization was read whole (memory until the process was killed); a named
    pipe blocked the run for ever. Only regular files inside the kustomization's directory are read."""
    k = tmp_path / "k"
    k.mkdir()
    if target == "FIFO":
        os.mkfifo(k / "fifo.yaml")
        target = "fifo.yaml"
    (k / "kustomization.yaml").write_text(
        f"patchesJson6902:\n- target: {{kind: Deployment, name: x}}\n  path: {target}\n"
    )
    proc = _run_isolated(
        f"from kvlint.origins import json6902_patches; print(json6902_patches({str(k)!r}))", 30
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stderr


def test_a_patch_file_outside_the_kustomization_is_not_read(tmp_path: Path) -> None:
    """kustomize refuses a patch file outside the kustomization's directory (its default load restrictor):
    kvlint does not read one either, through ``..`` or a symbolic link."""
    from kvlint.origins import json6902_patches

    ops = "- op: add\n  path: /spec/replicas\n  value: 2\n"
    (tmp_path / "outside.yaml").write_text(ops)
    k = tmp_path / "k"
    k.mkdir()
    (k / "inside.yaml").write_text(ops)
    os.symlink(tmp_path / "outside.yaml", k / "link.yaml")
    entries = "".join(
        f"- target: {{kind: Deployment, name: {n}}}\n  path: {p}\n"
        for n, p in (
            ("a", "../outside.yaml"),
            ("b", "link.yaml"),
            ("c", str(tmp_path / "outside.yaml")),
            ("d", "inside.yaml"),
        )
    )
    (k / "kustomization.yaml").write_text("patchesJson6902:\n" + entries)
    assert [p[1] for p in json6902_patches(str(k))] == ["d"]


def test_a_deep_chain_of_bases_is_not_a_recursion_error(tmp_path: Path) -> None:
    from kvlint.origins import json6902_patches

    d = tmp_path / "k"
    depth = 1200
    cur = d
    for i in range(depth):
        cur.mkdir()
        last = i == depth - 1
        (cur / "kustomization.yaml").write_text(
            "patchesJson6902:\n- target: {kind: Deployment, name: x}\n  patch: |\n    - op: add\n      path: /a\n      value: 1\n"
            if last
            else "resources: [s]\n"
        )
        cur = cur / "s"
    try:
        assert [p[1] for p in json6902_patches(str(d))] == ["x"]
    finally:  # bottom up: pytest's own clean-up (shutil.rmtree) recurses once per level
        dirs = [d]
        while (dirs[-1] / "s").is_dir():
            dirs.append(dirs[-1] / "s")
        for sub in reversed(dirs):
            (sub / "kustomization.yaml").unlink()
            sub.rmdir()
