"""Directory walks of kustomize trees, as a user reads what they print (vllm-project/aibrix's ``config/``,
fetched from its repository: ``config/overlays/vke/dependency`` builds on ``../../../dependency``, whose
``envoy-gateway`` names the remote release manifest of Envoy Gateway).

* An overlay kvlint does not build (its tree names a remote reference: KV001) lints none of its bases; the walk's
  note listed them as "linted only through what the overlays build" all the same. They are named apart now.
* kustomize's error on a path a kustomization names that does not exist is placed at that entry's line, not at
  the kustomization file's first line.
"""

from __future__ import annotations

import os
from pathlib import Path

from walk_trees import CONFIGMAP, needs_kustomize, offline_diags, write_kustomization

from kvlint import render


def _aibrix_like(repo: Path) -> None:
    """aibrix's layout, cut down: config/dependency (envoy-gateway with a remote resource, kuberay with a local
    one), the vke overlay building on config/dependency, and the release overlay building on kuberay alone."""
    (repo / ".git").mkdir(parents=True)
    config = repo / "config"
    write_kustomization(config / "dependency", "resources:\n- envoy-gateway\n- kuberay-operator\n")
    write_kustomization(
        config / "dependency" / "envoy-gateway",
        "resources:\n- https://github.com/envoyproxy/gateway/releases/download/v1.2.8/install.yaml\n",
    )
    write_kustomization(config / "dependency" / "kuberay-operator", "resources:\n- cm.yaml\n")
    (config / "dependency" / "kuberay-operator" / "cm.yaml").write_text(CONFIGMAP % "kuberay")
    write_kustomization(config / "overlays" / "vke" / "dependency", "resources:\n- ../../../dependency\n")
    write_kustomization(config / "overlays" / "release", "resources:\n- ../../dependency/kuberay-operator\n")


@needs_kustomize
def test_the_bases_of_an_overlay_kvlint_does_not_build_are_not_said_linted_through_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    _aibrix_like(repo)
    diags = offline_diags([str(repo)])
    (kv001,) = [d for d in diags if d.rule == "KV001"]
    assert kv001.loc is not None and kv001.loc.file.endswith(
        "config/dependency/envoy-gateway/kustomization.yaml"
    )
    notes = [d for d in diags if d.rule == "KV002"]
    # kuberay-operator is built through the release overlay (the walk's one base so: its own note); dependency and
    # envoy-gateway through nothing
    (linted,) = [d for d in notes if "only through" in d.message]
    assert linted.loc is not None
    assert linted.loc.file == str(repo / "config" / "dependency" / "kuberay-operator" / "kustomization.yaml")
    assert linted.message.startswith(
        f"this kustomization is a base of {repo / 'config' / 'overlays' / 'release'}"
    )
    assert "vke" not in linted.message, linted.message
    (unlinted,) = [d for d in notes if "did not lint" in d.message]
    assert unlinted.message.startswith(
        "2 kustomizations met in this walk are bases only of overlays kvlint does not build"
    ), unlinted.message
    for line in (
        "config/dependency is a base of config/overlays/vke/dependency",
        "config/dependency/envoy-gateway is a base of config/overlays/vke/dependency",
    ):
        assert line in unlinted.message, unlinted.message
    assert unlinted.loc is not None and unlinted.loc.file == str(
        repo / "config" / "dependency" / "kustomization.yaml"
    )
    assert unlinted.severity == "info"


@needs_kustomize
def test_a_missing_file_is_said_at_its_own_entry(tmp_path: Path) -> None:
    """kustomize's error on the first missing file it meets is placed at the entry naming that file; the other
    missing file, which kustomize would name on the next run, gets its own KV001 at its entry."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    text = "resources:\n- cm.yaml\n- missing-service.yaml\npatches:\n- path: missing-patch.yaml\n"
    write_kustomization(repo / "overlay", text)
    (repo / "overlay" / "cm.yaml").write_text(CONFIGMAP % "cm")
    found = sorted(
        (d.loc.line, d.loc.column, d.message)
        for d in offline_diags([str(repo / "overlay")])
        if d.rule == "KV001" and d.loc
    )
    assert [(line, col) for line, col, _ in found] == [(3, 3), (5, 9)], found
    assert "kustomize failed" in found[0][2] and "missing-service.yaml" in found[0][2], found[0][2]
    assert found[1][2].startswith("patches path names missing-patch.yaml, which does not exist"), found[1][2]


def test_a_generators_key_and_path_item_is_looked_up_by_its_path(tmp_path: Path) -> None:
    """``configMapGenerator`` ``files: [config.json=settings.json]`` names the file settings.json: the whole item
    is not a missing path (read without kustomize: render.missing_paths)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    overlay = repo / "overlay"
    write_kustomization(
        overlay,
        "configMapGenerator:\n- name: app\n  files:\n  - config.json=settings.json\n  - absent.json\n",
    )
    (overlay / "settings.json").write_text("{}")
    found = render.missing_paths(str(overlay))
    assert [f.message.split(",")[0] for f in found] == ["configMapGenerator files names absent.json"], found
    assert found[0].loc is not None and found[0].loc.line == 5


GCP = (
    Path(__file__).resolve().parents[1]
    / "fixtures/collected/trees/gcp-accelerated-platforms-online-inference-gpu"
)


@needs_kustomize
def test_a_missing_file_of_a_base_is_said_at_the_bases_entry() -> None:
    """GoogleCloudPlatform/accelerated-platforms' inference overlays (fixtures/collected, source in its INDEX.csv)
    build on bases whose configMapGenerator ``envs`` name files a script writes (deployment.env, vllm.env): each
    overlay's build fails (its KV001 stays at the overlay, naming the base); the entries naming the missing files get
    a KV001 each, once for all overlays, and the two bases are said not linted (not "linted through" the overlays)."""
    diags = offline_diags([str(GCP)])
    kv001 = sorted(
        (os.path.relpath(d.loc.file, GCP), d.loc.line, d.loc.column)
        for d in diags
        if d.rule == "KV001" and d.loc
    )
    assert kv001 == [
        ("base/kustomization.yaml", 20, 9),
        ("vllm/base/kustomization.yaml", 20, 9),
        ("vllm/h100-llama-3-3-70b-instruct/kustomization.yaml", 1, 1),
        ("vllm/l4-gemma-3-1b-it/kustomization.yaml", 1, 1),
        ("vllm/l4-gemma-4-31b-it/kustomization.yaml", 1, 1),
    ], kv001
    (note,) = [d for d in diags if d.rule == "KV002" and "bases only of overlays" in d.message]
    assert "base is a base of vllm/h100-llama-3-3-70b-instruct" in note.message, note.message
    assert not any("linted only through" in d.message for d in diags if d.rule == "KV002")


@needs_kustomize
def test_the_note_on_bases_not_linted_names_no_base_that_fails_alone(tmp_path: Path) -> None:
    """The note's fix offered to lint a base alone (``kvlint check .../base``) when that base fails alone too: GCP's
    bases name the env files a script writes (the KV001 at their entries), aibrix's config/dependency names a remote
    release. It names a base only when that base builds alone; otherwise it says that none does."""
    (note,) = [
        d for d in offline_diags([str(GCP)]) if d.rule == "KV002" and "bases only of overlays" in d.message
    ]
    assert "kvlint check" not in note.fix, note.fix
    assert "none of these bases builds alone either" in note.fix, note.fix
    repo = tmp_path / "repo"
    _aibrix_like(repo)
    (note,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV002" and "did not lint" in d.message]
    assert "kvlint check" not in note.fix, note.fix
    # a third base of the vke overlay that builds alone (a ConfigMap of its own) is the one the fix names
    extra = repo / "config" / "extra"
    write_kustomization(extra, "resources:\n- cm.yaml\n")
    (extra / "cm.yaml").write_text(CONFIGMAP % "extra")
    write_kustomization(
        repo / "config" / "overlays" / "vke" / "dependency",
        "resources:\n- ../../../dependency\n- ../../../extra\n",
    )
    (note,) = [d for d in offline_diags([str(repo)]) if d.rule == "KV002" and "did not lint" in d.message]
    assert note.fix.endswith(f"lint a base as it builds alone: kvlint check {extra}"), note.fix
