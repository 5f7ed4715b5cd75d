"""A kustomize base that leaves the GPUs to its overlays (GoogleCloudPlatform/accelerated-platforms' online
inference tree: ``vllm/base`` has no GPU limit, each ``vllm/<gpu>-<model>`` overlay patches ``resources`` and the
node selector; fixtures/collected/trees) linted alone, built (``kvlint check base/``, as kube-linter lints what it
is given) or read in a walk, gets KV405: the base as built requests no GPU. The finding's fix says so and names
the overlays beside it that build on it, with the command that lints one; the overlay itself gets no KV405.
The tree below is made up in that shape (the collected tree cannot be built: its env files are generated)."""

from __future__ import annotations

from pathlib import Path

import pytest
from walk_trees import DEPLOYMENT, GPU_PATCH, ROOT, needs_kustomize

from kvlint import render
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import Diagnostic

COLLECTED_BASE = (
    ROOT
    / "fixtures"
    / "collected"
    / "trees"
    / "gcp-accelerated-platforms-online-inference-gpu"
    / "vllm"
    / "base"
)


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "deployment.yaml").write_text(DEPLOYMENT)
    (tmp_path / "base" / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    for gpu in ("l4-llama", "h100-llama"):
        d = tmp_path / gpu
        d.mkdir()
        (d / "kustomization.yaml").write_text("resources:\n- ../base\npatches:\n- path: patch.yaml\n")
        (d / "patch.yaml").write_text(GPU_PATCH)
    return tmp_path


def _kv405(paths: list[str]) -> list[Diagnostic]:
    return [d for d in run_check(paths, Options(allow_hub=False)).diagnostics if d.rule == "KV405"]


@needs_kustomize
def test_the_base_built_alone_names_its_overlays(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (d,) = _kv405([str(root / "base")])
    assert "requests no GPU resource" in d.message
    assert f"in the kustomize base {root / 'base'}" in d.fix
    assert "overlays beside it that build on it: h100-llama, l4-llama" in d.fix
    assert f"lint that overlay: kvlint check {root / 'h100-llama'}" in d.fix


@needs_kustomize
def test_the_overlay_has_its_gpu(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert not _kv405([str(root / "l4-llama")])


def test_a_walk_without_kubectl_reads_the_base_as_written_and_says_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tree").mkdir()
    root = _tree(tmp_path / "tree")
    monkeypatch.setenv("PATH", str(tmp_path))  # neither kustomize nor kubectl: the walk reads plain files
    (d,) = _kv405([str(root)])
    assert "overlays beside it that build on it: h100-llama, l4-llama" in d.fix


@needs_kustomize
def test_a_walk_builds_the_overlays_and_lints_the_base_only_through_them(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert not _kv405([str(root)])


def test_a_file_of_no_kustomization_keeps_the_plain_fix(tmp_path: Path) -> None:
    f = tmp_path / "deployment.yaml"
    f.write_text(DEPLOYMENT)
    (d,) = _kv405([str(f)])
    # (no tensor- or pipeline-parallel size in its args: vLLM's default layout, one GPU)
    assert d.fix == (
        "set resources.limits['nvidia.com/gpu']: 1, the GPUs the engine uses (vLLM's default tensor-parallel-size 1)"
    )


def test_the_collected_base_names_the_gpu_overlays_of_its_tree() -> None:
    (d,) = _kv405([str(COLLECTED_BASE / "deployment.yaml")])
    assert "h100-llama-3-3-70b-instruct, l4-gemma-3-1b-it, l4-gemma-4-31b-it" in d.fix


def test_the_overlay_search_resolves_a_bounded_number_of_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Directories beside the base whose kustomizations list thousands of entries (a pull request can add them):
    the search for overlays resolves at most MAX_OVERLAY_ENTRIES of them to real paths, each distinct entry of a
    directory once (every entry was resolved: 63 directories of 8,000 made 500,000 paths, 9 s, for each base). The
    overlays listed before the budget runs out are still named."""
    import os

    root = _tree(tmp_path)
    for i in range(40):
        d = root / f"z{i:02d}"
        d.mkdir()
        entries = "".join(f"- ../x{j}\n" for j in range(3000)) + "- ../x1\n" * 3000
        (d / "kustomization.yaml").write_text("resources:\n" + entries)
    real = os.path.realpath
    calls = 0

    def counting(path: object, *args: object, **kwargs: object) -> str:
        nonlocal calls
        calls += 1
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os.path, "realpath", counting)
    render._OVERLAYS.clear()
    found = render.kustomize_overlays_of(str(root / "base" / "deployment.yaml"))
    assert found is not None and found[1] == (str(root / "h100-llama"), str(root / "l4-llama"))
    assert calls <= 5_000, (
        calls
    )  # MAX_OVERLAY_ENTRIES (4,096) and a few per directory searched; 240,000 before


def test_each_kustomization_beside_bases_is_read_once_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Several bases side by side search the same directories for overlays: each kustomization among them is read
    once, not once per base (a pull request's tree of bases beside large kustomizations parsed each for each)."""
    from collections import Counter

    for i in range(6):
        d = tmp_path / f"base{i}"
        d.mkdir()
        (d / "deployment.yaml").write_text(DEPLOYMENT)
        (d / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n")
    for i in range(6):
        d = tmp_path / f"overlay{i}"
        d.mkdir()
        (d / "kustomization.yaml").write_text(f"resources:\n- ../base{i}\n")
    reads: Counter[str] = Counter()
    read = render._read_kustomization

    def counting(path: str, max_bytes: int) -> object:
        reads[path] += 1
        return read(path, max_bytes)

    monkeypatch.setattr(render, "_read_kustomization", counting)
    found = _kv405([str(tmp_path / f"base{i}" / "deployment.yaml") for i in range(6)])
    assert len(found) == 6 and all(
        f"overlays beside it that build on it: overlay{i}" in d.fix for i, d in enumerate(found)
    )
    assert reads and max(reads.values()) == 1, reads
