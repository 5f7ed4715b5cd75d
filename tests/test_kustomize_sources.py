"""The source files of a kustomization tree (kvlint.render._kustomize_sources), which place what ``kubectl
kustomize`` builds back at the lines of its tree: read with kvlint's bounded loader, each directory once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kvlint import render

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"


def _tree(tmp_path: Path, resources: list[str], comments: int = 0) -> Path:
    base = tmp_path / "base"
    base.mkdir()
    (base / "kustomization.yaml").write_text("resources:\n- cm.yaml\n")
    (base / "cm.yaml").write_text(CONFIGMAP)
    top = tmp_path / "overlay"
    top.mkdir()
    text = "resources:\n" + "".join(f"- {r}\n" for r in resources)
    text += "".join(f"# note {i} of a long kustomization\n" for i in range(comments))
    (top / "kustomization.yaml").write_text(text)
    return top


def test_kustomization_files_are_read_with_the_bounded_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """They were read with yaml.safe_load, PyYAML's pure-Python loader (2.6 CPU s for 12 MB of comments, which
    kubectl kustomize builds in 0.3 s, against 0.1 s for kvlint's loader, which remote_references has used on the
    same files); no node is composed by PyYAML now."""
    top = _tree(tmp_path, ["../base"], comments=2000)
    composed: list[int] = []
    real = yaml.composer.Composer.compose_node

    def counting(self, parent, index):  # type: ignore[no-untyped-def]
        composed.append(1)
        return real(self, parent, index)

    monkeypatch.setattr(yaml.composer.Composer, "compose_node", counting)
    sources = render._kustomize_sources(str(top), 1 << 20)
    assert not composed
    assert [(d.kind, os.path.basename(d.path)) for d, _ in sources] == [("ConfigMap", "cm.yaml")]


def test_each_directory_is_read_once_by_its_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Directories were told apart by the path written, so two links to one base loaded it twice, and a link to
    the overlay itself (``self -> .``), which kustomize refuses as a cycle, made ever longer paths of the same
    directory (``self/self/self/...``) up to the system's path limit, each loaded again."""
    top = _tree(tmp_path, ["a", "b", "self"])
    os.symlink("../base", top / "a")
    os.symlink("../base", top / "b")
    os.symlink(".", top / "self")
    loaded: list[str] = []
    real = render.load_paths

    def recording(paths, **kw):  # type: ignore[no-untyped-def]
        loaded.extend(paths)
        return real(paths, **kw)

    monkeypatch.setattr(render, "load_paths", recording)
    sources = render._kustomize_sources(str(top), 1 << 20)
    assert [(d.kind, d.name) for d, _ in sources] == [("ConfigMap", "cm")]
    assert sorted(os.path.realpath(p) for p in loaded) == sorted(
        map(os.path.realpath, (top, tmp_path / "base"))
    )


def test_the_walk_stops_at_the_tree_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most MAX_KUSTOMIZATIONS directories are read (remote_references refuses a larger tree before the build)."""
    monkeypatch.setattr(render, "MAX_KUSTOMIZATIONS", 3)
    chain = tmp_path / "d0"
    for i in range(6):
        d = tmp_path / f"d{i}"
        d.mkdir()
        (d / "kustomization.yaml").write_text(f"resources:\n- ../d{i + 1}\n- cm.yaml\n")
        (d / "cm.yaml").write_text(CONFIGMAP.replace("name: cm", f"name: cm{i}"))
    sources = render._kustomize_sources(str(chain), 1 << 20)
    assert sorted(d.name for d, _ in sources) == ["cm0", "cm1", "cm2"]


def _linked_chain(tmp_path: Path, dirs: int, entries: int) -> Path:
    """``dirs`` directories whose kustomization is a link to one shared file naming ``entries`` bases ``../dN``
    (every directory), and a top one naming each: a small tree whose kustomizations name dirs x entries paths."""
    tmp_path.mkdir(exist_ok=True)
    shared = tmp_path / "shared.yaml"
    shared.write_text("resources:\n" + "".join(f"- ../d{i % dirs}\n" for i in range(entries)))
    for i in range(dirs):
        (tmp_path / f"d{i}").mkdir()
        (tmp_path / f"d{i}" / "kustomization.yaml").symlink_to(shared)
    top = tmp_path / "top"
    top.mkdir()
    (top / "kustomization.yaml").write_text("resources:\n" + "".join(f"- ../d{i}\n" for i in range(dirs)))
    return top


def test_the_remote_reference_walk_resolves_short_paths_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """remote_references resolved each base as the walk spelled it (``top/../d0/../d1/../d2...``, growing with the
    depth of the chain) and again for each of its entries: a thousand directories linking one 30 KB
    kustomization took minutes of CPU. Each path is now resolved once, from its base's real directory."""
    dirs, entries = 40, 120
    top = _linked_chain(tmp_path, dirs, entries)
    calls: list[str] = []
    real = os.path.realpath

    def counting(path: str) -> str:
        calls.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os.path, "realpath", counting)
    assert render.remote_references(str(top), top=str(tmp_path)) == []
    paths = dirs + dirs * entries  # the top's entries and each directory's
    # (+ each linked kustomization file, whose target must be in the repository, + the tree's own directory and the
    # root its paths are confined to)
    assert len(calls) <= paths + dirs + 2
    longest = max(
        len(os.path.join(str(tmp_path), "top", "..", f"d{dirs}")),
        len(str(top)),
        len(
            os.path.join(str(tmp_path), f"d{dirs}", "kustomization.yaml")
        ),  # (a linked file, from its real directory)
    )
    assert max(map(len, calls)) <= longest


def test_a_tree_naming_too_many_paths_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_KUSTOMIZATION_PATHS paths in its kustomization files together, a tree is refused with one finding
    (each path costs file-system lookups) and the walk stops there."""
    monkeypatch.setattr(render, "MAX_KUSTOMIZATION_PATHS", 100)
    big, small = _linked_chain(tmp_path / "big", 10, 10), _linked_chain(tmp_path / "small", 9, 10)
    (finding,) = render.remote_references(str(big), top=str(tmp_path))  # 110 paths
    assert finding.rule == "KV001" and "more than 100 paths" in finding.message
    assert render.remote_references(str(small), top=str(tmp_path)) == []  # 99 paths


@pytest.mark.parametrize("walk", ["sources", "images"])
def test_the_source_and_image_walks_stop_at_the_path_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walk: str
) -> None:
    """The walks after a build (the source files, the ``images`` entries) walk the tree again as spelled, and
    had no bound on the paths they look at (each a few file-system lookups): they stop at
    MAX_KUSTOMIZATION_PATHS paths, as remote_references does, and queue a base once by its real path."""
    monkeypatch.setattr(render, "MAX_KUSTOMIZATION_PATHS", 100)
    top = _linked_chain(tmp_path, 20, 100)  # 2,020 paths
    calls: list[str] = []
    realpath, isdir = os.path.realpath, os.path.isdir

    def counting(real):  # type: ignore[no-untyped-def]
        def call(path):  # type: ignore[no-untyped-def]
            calls.append(os.fspath(path))
            return real(path)

        return call

    monkeypatch.setattr(os.path, "realpath", counting(realpath))
    monkeypatch.setattr(os.path, "isdir", counting(isdir))
    reads: dict = {}
    if walk == "sources":
        render._kustomize_sources(str(top), 1 << 20, reads)
    else:
        render._kustomize_images(str(top), 1 << 20, reads)
    # at most the bound's paths (a lookup or two each), and the lookups of the directories read (at most 21)
    assert len(calls) <= 3 * 100 + 4 * 21, len(calls)
    assert len(reads) <= 21 * len(render.KUSTOMIZATION_FILES)


def test_the_image_walk_stops_at_the_tree_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``images`` walk read every directory of a chain of bases, however long (the source walk stopped at
    MAX_KUSTOMIZATIONS): it reads at most MAX_KUSTOMIZATIONS directories now, the first ones breadth first."""
    monkeypatch.setattr(render, "MAX_KUSTOMIZATIONS", 3)
    for i in range(6):
        d = tmp_path / f"d{i}"
        d.mkdir()
        (d / "kustomization.yaml").write_text(
            f"resources:\n- ../d{i + 1}\nimages:\n- name: img{i}\n  newTag: v{i}\n"
        )
    reads: dict = {}
    images = render._kustomize_images(str(tmp_path / "d0"), 1 << 20, reads)
    assert [e["name"] for e in images] == ["img0", "img1", "img2"]
    assert {os.path.dirname(p) for p in reads} == {str(tmp_path / f"d{i}") for i in range(3)}


def test_a_tree_naming_too_long_paths_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The paths are bounded by their length too, not only by their count: resolving one costs a lookup a
    component, and a 12 MB kustomization of a few deep paths (far under MAX_KUSTOMIZATION_PATHS) took about 15
    CPU s a walk. Three paths of 600 characters pass a bound of 2,000 characters and not one of 1,000."""
    deep = "/".join(["a"] * 297) + "/x.yaml"
    assert len(deep) == 600
    top = tmp_path / "overlay"
    top.mkdir()
    (top / "kustomization.yaml").write_text("resources:\n" + "".join(f"  - {deep}{i}\n" for i in range(3)))
    monkeypatch.setattr(render, "MAX_KUSTOMIZATION_PATH_CHARS", 2000)
    assert render.remote_references(str(top), top=str(tmp_path)) == []
    monkeypatch.setattr(render, "MAX_KUSTOMIZATION_PATH_CHARS", 1000)
    (finding,) = render.remote_references(str(top), top=str(tmp_path))
    assert finding.rule == "KV001" and "more than 1,000 characters of paths" in finding.message, (
        finding.message
    )
