"""Review of the verify28/chartmap28/tidy28 merges: the defects found, each with the test that failed before its
fix (review42)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kvlint.origins import json6902_patches
from kvlint.paths import real_path_inside
from kvlint.render import remote_references

_NUL_KUSTOMIZATION = """\
resources:
  - dep.yaml
patchesJson6902:
  - target: {group: apps, version: v1, kind: Deployment, name: vllm}
    path: "ops\\0.yaml"
"""


def test_a_resolved_root_that_is_relative_is_not_read_against_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``resolved=True`` says the root is a real path already; an empty one stripped of its separators was the
    prefix ``/``, so every path was inside it, and a relative one (``chart``) held not even itself. A relative
    root is resolved from the working directory, as without ``resolved``."""
    assert not real_path_inside("/etc/passwd", "", resolved=True)
    assert not real_path_inside("/etc/passwd", "", below=True, resolved=True)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert real_path_inside(chart / "templates", "chart", below=True, resolved=True)
    assert real_path_inside("chart", "chart", resolved=True)
    assert not real_path_inside(tmp_path, "chart", resolved=True)


def test_a_resolved_root_written_with_a_trailing_separator_holds_itself(tmp_path: Path) -> None:
    """The directory itself is in it (``below`` False) however its real path is written."""
    root = os.path.realpath(tmp_path)
    assert real_path_inside(root, root + os.sep, resolved=True)
    assert not real_path_inside(root, root + os.sep, below=True, resolved=True)
    assert real_path_inside(os.sep, os.sep, resolved=True)
    assert real_path_inside(os.path.join(root, "x"), os.sep, below=True, resolved=True)


def test_a_kustomization_path_holding_a_nul_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    """A kustomization may write a NUL in a path (YAML's ``"\\0"``); ``os.path.realpath`` raises ValueError on it,
    which went up through ``kvlint check DIR`` as a traceback. It is a KV001 at that line: kustomize cannot read
    such a path (no file has one), so the tree is not built."""
    (tmp_path / "kustomization.yaml").write_text(_NUL_KUSTOMIZATION)
    (tmp_path / "dep.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\n")
    found = remote_references(str(tmp_path))
    assert [f.rule for f in found] == ["KV001"]
    assert "NUL" in found[0].message and found[0].loc is not None and found[0].loc.line == 5


def test_json6902_patches_never_raises_on_a_path_holding_a_nul(tmp_path: Path) -> None:
    """``json6902_patches`` says it never raises: a patch path with a NUL is skipped (the build reports it), as one
    out of the kustomization's directory is; it raised ValueError from ``real_path_inside``."""
    (tmp_path / "kustomization.yaml").write_text(_NUL_KUSTOMIZATION)
    assert json6902_patches(str(tmp_path)) == []


# KV205's fix carries another engine's quantization method over only when the counterpart names the same method so:
# TGI's --quantize takes eetq, exl2, bitsandbytes-nf4/-fp4 (tgi@v3.3.7 launcher/src/main.rs `Quantization`), which no
# vLLM release takes (vllm/model_executor/layers/quantization/__init__.py QUANTIZATION_METHODS), and vLLM's awq_marlin,
# gptq_marlin, modelopt or gguf are no TGI --quantize choice: "use --quantization eetq" named a command vLLM refuses.
QUANT = [
    ("vLLM", ["--quantize", "eetq"], "use --quantization", False),
    ("vLLM", ["--quantize", "bitsandbytes-nf4"], "use --quantization", False),
    ("vLLM", ["--quantize", "awq"], "use --quantization awq", True),
    ("TGI", ["--quantization", "awq_marlin"], "use --quantize", False),
    ("TGI", ["--quantization", "gguf"], "use --quantize", False),
    ("TGI", ["--quantization", "gptq"], "use --quantize gptq", True),
]


@pytest.mark.parametrize(
    ("engine", "argv", "fix", "carried"), QUANT, ids=[f"{e}-{a[1]}" for e, a, _, _ in QUANT]
)
def test_a_quantization_method_is_carried_only_where_the_counterpart_takes_it(
    engine: str, argv: list[str], fix: str, carried: bool
) -> None:
    from kvlint.engines.command import parse_command_line

    program = {"vLLM": ["vllm", "serve", "m"], "TGI": ["text-generation-launcher", "--model-id", "m"]}[engine]
    cfg = parse_command_line([*program, *argv], "0.11.0" if engine == "vLLM" else "3.3.6")
    (f,) = [f for f in cfg.findings if f.rule == "KV205"]
    assert f.fix is not None and f.fix.startswith(fix), f.fix
    assert (argv[1] in f.fix) is carried, f.fix
