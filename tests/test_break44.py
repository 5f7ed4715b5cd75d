"""Adversarial pass on the last stop's code (break44): directory walks that render what they meet, the GitOps
scan of a walk, typed marks, NIMCache profiles, AMD DRA partitions, SGLang --cuda-graph-config/--config. Each test
fails before its fix. Real helm and kubectl (kustomize) where a walk renders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint import render
from kvlint.cli import main

needs_kustomize = pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)


def _check(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-color", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exc_info
    return r.exit_code, r.output


def test_a_walked_kustomization_naming_a_path_with_a_nul_is_a_kv001_not_a_traceback(tmp_path: Path) -> None:
    """``resources: ["../base\\0x"]`` (a YAML escape) in an overlay of a walk: the walk's plan looked the path up with
    os.path.realpath, which raises ValueError on a NUL: the run ended in a traceback. Now the overlay's own check
    says the path names no file (remote_references), whether or not kustomize is installed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "app" / "base").mkdir(parents=True)
    (tmp_path / "app" / "overlay").mkdir()
    (tmp_path / "app" / "base" / "kustomization.yaml").write_text("resources: []\n")
    (tmp_path / "app" / "overlay" / "kustomization.yaml").write_text('resources:\n- "../base\\0x"\n')
    code, out = _check(str(tmp_path))
    assert code in (0, 1), out
    assert "Traceback" not in out


@needs_kustomize
def test_the_nul_path_of_a_walked_overlay_is_reported_where_it_is(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text('resources:\n- "base\\0x"\n')
    code, out = _check(str(tmp_path))
    assert code == 1, out
    assert "overlay/kustomization.yaml:2:3: error KV001 resources names a path holding a NUL" in out
