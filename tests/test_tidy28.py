"""Mends of stop 28 (tidy28): checks made once and in one place, behaviour kept."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

import kvlint.render as render
from kvlint.pipeline import Options
from kvlint.stream import stream_check

ARGS = "tensor-parallel-size: 8\n"


def _fake_helm(tmp_path: Path) -> tuple[Path, Path]:
    """A ``helm`` on PATH that appends each argument it gets, a line each, to a log, and renders nothing."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.txt"
    helm = bindir / "helm"
    helm.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> {log}\n')
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    return bindir, log


def _chart(directory: Path) -> Path:
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {directory.name}\nversion: 0.1.0\n")
    return directory


@pytest.mark.parametrize("streaming", [False, True])
def test_set_files_are_checked_once_per_run_whatever_the_charts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    """``--helm-set-file`` was checked before anything was read and again for each chart rendered (three
    checks for two charts); now once, and each chart's helm gets the words of that one check."""
    bindir, log = _fake_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    one, two = _chart(tmp_path / "one"), _chart(tmp_path / "two")
    args = tmp_path / "args.yaml"
    args.write_text(ARGS)
    real = render.set_file_args
    calls: list[Sequence[str]] = []

    def counted(set_files: Sequence[str], max_bytes: int = render.DEFAULT_MAX_FILE_BYTES):  # type: ignore[no-untyped-def]
        calls.append(tuple(set_files))
        return real(set_files, max_bytes)

    monkeypatch.setattr(render, "set_file_args", counted)
    words = (f"serving_config={args}",)
    if streaming:
        stream_check([str(one), str(two)], Options(allow_hub=False, helm_set_file=words))
    else:
        render.load_inputs([str(one), str(two)], helm_set_file=words)
    assert calls == [words]
    argv = log.read_text().splitlines()
    assert argv.count(f"--set-file=serving_config={args.resolve()}") == 2


def test_render_helm_checks_words_it_is_given_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller of :func:`render_helm` that has not checked its words still gets them checked."""
    bindir, log = _fake_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    chart = _chart(tmp_path / "chart")
    with pytest.raises(render.RenderError, match="one KEY=PATH pair"):
        render.render_helm(str(chart), set_files=("a=x,b=y",))
    assert not log.exists()  # refused before helm ran
