"""An image a kustomization's ``images`` entry rewrote is located at that entry (kvlint.render._image_entry_loc):
findings on the image (its tag, the engine release it pins) point at the overlay line to edit, not at the base's
``image:`` that no longer says what runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kvlint import render
from kvlint.pipeline import Options, run_documents
from kvlint.render import load_inputs
from kvlint.source import LDict

ROOT = Path(__file__).resolve().parents[1]
AIBRIX = ROOT / "fixtures" / "kustomize" / "aibrix-vllm-dev"
BASE_DEPLOYMENT = ROOT / "fixtures" / "kustomize" / "base" / "deployment.yaml"
OFFLINE = Options(allow_hub=False)

needs_kustomize = pytest.mark.skipif(
    render.kustomize_command(".") is None, reason="neither kustomize nor kubectl is installed"
)


def _line_of(path: Path, text: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if text in t)


def _engine_container(loaded) -> LDict:
    (doc,) = [d for d in loaded.documents if d.kind == "Deployment"]
    return doc.data["spec"]["template"]["spec"]["containers"][0]


@needs_kustomize
def test_aibrix_linux_overlay_tag_points_at_the_overlay() -> None:
    """AIBrix's development/vllm/linux overlay sets ``newTag: linux-amd64`` on the macos base's image: the KV208
    about that tag is at the overlay's ``newTag`` line; the engine's flags stay in the base."""
    loaded = load_inputs([str(AIBRIX / "linux")])
    container = _engine_container(loaded)
    kfile = AIBRIX / "linux" / "kustomization.yaml"
    spec = yaml.safe_load(kfile.read_text())
    (entry,) = spec["images"]
    assert container["image"].endswith(":" + entry["newTag"])
    loc = container.locs["image"]
    assert loc.file == str(kfile) and loc.line == _line_of(kfile, "newTag:")
    result = run_documents(loaded, OFFLINE)
    (kv208,) = [d for d in result.diagnostics if d.rule == "KV208"]
    assert kv208.loc.file == str(kfile) and kv208.loc.line == loc.line
    others = [d for d in result.diagnostics if d.rule != "KV208"]
    assert others and all(d.loc.file == str(AIBRIX / "macos" / "deployment.yaml") for d in others)


@needs_kustomize
def test_macos_base_alone_keeps_its_own_image_line() -> None:
    loaded = load_inputs([str(AIBRIX / "macos")])
    loc = _engine_container(loaded).locs["image"]
    deployment = AIBRIX / "macos" / "deployment.yaml"
    assert loc.file == str(deployment) and loc.line == _line_of(deployment, "image: aibrix/vllm-cpu-env")


def _tree(tmp_path: Path, base_images: str, overlay_images: str) -> Path:
    base, over = tmp_path / "base", tmp_path / "prod"
    (tmp_path / ".git").mkdir(exist_ok=True)  # a repository: the overlay's ../base is inside it
    base.mkdir()
    over.mkdir()
    (base / "deployment.yaml").write_text(BASE_DEPLOYMENT.read_text())
    (base / "kustomization.yaml").write_text("resources:\n  - deployment.yaml\n" + base_images)
    (over / "kustomization.yaml").write_text("resources:\n  - ../base\n" + overlay_images)
    return over


@needs_kustomize
@pytest.mark.parametrize(
    ("overlay", "key"),
    [
        ("images:\n  - name: vllm/vllm-openai\n    newTag: v0.10.2\n", "newTag"),
        ("images:\n  - name: vllm/vllm-openai\n    newName: registry.example/vllm-openai\n", "newName"),
        ("images:\n  - name: vllm/vllm-openai\n    digest: sha256:" + "a" * 64 + "\n", "digest"),
        # another image's entry first: the one that matches is taken
        (
            "images:\n  - name: nginx\n    newTag: '1.27'\n  - name: vllm/vllm-openai\n"
            "    newName: registry.example/vllm\n    newTag: v0.10.2\n",
            "newTag: v0.10.2",
        ),
    ],
)
def test_overlay_images_entry_locates_the_image(tmp_path: Path, overlay: str, key: str) -> None:
    over = _tree(tmp_path, "", overlay)
    loc = _engine_container(load_inputs([str(over)])).locs["image"]
    kfile = over / "kustomization.yaml"
    assert loc.file == str(kfile) and loc.line == _line_of(kfile, key)


@needs_kustomize
def test_base_entry_overridden_by_the_overlay(tmp_path: Path) -> None:
    """The base pins v0.10.2, the overlay v0.11.1 over it: the overlay's entry made the rendered image. Under an
    overlay whose only entry is for another image, the base's entry made it."""
    over = _tree(
        tmp_path,
        "images:\n  - name: vllm/vllm-openai\n    newTag: v0.10.2\n",
        "images:\n  - name: vllm/vllm-openai\n    newTag: v0.11.1\n",
    )
    loaded = load_inputs([str(over)])
    container = _engine_container(loaded)
    assert container["image"] == "vllm/vllm-openai:v0.11.1"
    kfile = over / "kustomization.yaml"
    assert container.locs["image"].file == str(kfile)

    other = tmp_path / "other"
    os.makedirs(other)
    (other / "kustomization.yaml").write_text(
        "resources:\n  - ../base\nimages:\n  - name: nginx\n    newTag: '1'\n"
    )
    base_only = _engine_container(load_inputs([str(other)])).locs["image"]
    assert base_only.file == str(tmp_path / "base" / "kustomization.yaml")


@needs_kustomize
def test_an_entry_for_another_image_changes_nothing(tmp_path: Path) -> None:
    over = _tree(tmp_path, "", "images:\n  - name: nginx\n    newTag: '1'\n")
    loc = _engine_container(load_inputs([str(over)])).locs["image"]
    deployment = tmp_path / "base" / "deployment.yaml"
    assert loc.file == str(deployment) and loc.line == _line_of(deployment, "image: vllm/vllm-openai")


def test_the_source_walk_reads_kustomizations_with_the_bounded_loader(tmp_path: Path) -> None:
    """The walk that finds the files rendered objects come from reads each kustomization with kvlint's bounded
    loader, as the other walks do: a file over ``max_bytes`` is not read (it parsed it whole), and a file of two
    documents is read as its first (it dropped the file, so none of its resources were sources)."""
    over = _tree(tmp_path, "", "")
    (over / "dep.yaml").write_text(BASE_DEPLOYMENT.read_text())
    kfile = over / "kustomization.yaml"
    # a comment takes the kustomization over 64 KiB; the deployments are under it
    kfile.write_text("resources:\n  - ../base\n# " + "x" * (64 << 10) + "\n")
    everything = render._kustomize_sources(str(over), 1 << 20)
    assert any(d.path == str(tmp_path / "base" / "deployment.yaml") for d, _patch in everything)
    assert render._kustomize_sources(str(over), 64 << 10) == [
        (d, p) for d, p in everything if os.path.dirname(d.path) == str(over)
    ]
    kfile.write_text("resources:\n  - ../base\n---\nkind: Other\n")
    two = render._kustomize_sources(str(over), 1 << 20)
    assert any(d.path == str(tmp_path / "base" / "deployment.yaml") for d, _patch in two)


def test_one_build_reads_each_kustomization_once(tmp_path: Path) -> None:
    """remote_references, the source walk and the image walk of one build share the files they read (``reads``):
    the tree's kustomization is read once, so all three see the same text."""
    over = _tree(tmp_path, "", "images:\n  - name: vllm/vllm-openai\n    newTag: v0.10.2\n")
    reads: dict = {}
    assert render.remote_references(str(over), reads=reads) == []
    (over / "kustomization.yaml").write_text("resources:\n  - ../base\n")  # changed after the first read
    (entry,) = render._kustomize_images(str(over), 1 << 20, reads)
    assert entry["newTag"] == "v0.10.2"
    assert render._kustomize_images(str(over), 1 << 20) == []  # a fresh read sees the change
    assert any(
        d.path.endswith("deployment.yaml") for d, _ in render._kustomize_sources(str(over), 1 << 20, reads)
    )
