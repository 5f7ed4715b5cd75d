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


def test_one_kubernetes_quantity_pattern() -> None:
    """The Kubernetes quantity grammar (``Ki``..``Ei``, an exponent, ``n``..``E``) is written once
    (:mod:`kvlint.k8s_quantity`); three modules wrote their own (HAMi's memory, the Dynamo operator's /dev/shm
    size, the OpenShift AI hardware profile's count). The byte quantities users type are another grammar."""
    root = Path(render.__file__).parent
    writers = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "Ki|Mi|Gi|Ti|Pi|Ei" in p.read_text(encoding="utf-8")
    )
    assert writers == ["k8s_quantity.py"]


@pytest.mark.parametrize(
    "text,whole,zero,written",
    [
        ("16k", 16000, False, True),
        ("1Ki", 1024, False, True),
        ("2e3", 2000, False, True),
        ("2000m", 2, False, True),
        ("1500m", None, False, True),  # not a whole number
        ("0Gi", 0, True, True),
        ("0e5", 0, True, True),
        ("-0.0", 0, True, True),
        ("1e12345", None, False, True),  # an exponent of five digits: not read as a whole int64
        ("1 Gi", None, False, False),  # no blanks in a quantity
        ("1GiB", None, False, False),
        ("Gi", None, False, False),
    ],
)
def test_the_quantity_readers_read_as_before(text: str, whole: int | None, zero: bool, written: bool) -> None:
    from kvlint.accelerators.sharing import _as_int64
    from kvlint.workloads.hardwareprofile import _quantity
    from kvlint.workloads.operators import _zero_quantity

    assert _as_int64(text) == whole
    assert _zero_quantity(text) is zero
    assert (_quantity(text) == text) is written
