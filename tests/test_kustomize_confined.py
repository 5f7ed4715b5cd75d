"""A kustomization builds only what the repository holds (``kvlint.render.confinement_root``).

In the pre-merge Action the tree is a pull request's checkout: ``resources: [../../../../outside]`` made kustomize
build a kustomization of the runner's disk, whose values (``replacements`` into ``--model``) surfaced in findings.
Each test builds with the real ``kubectl kustomize`` (or ``kustomize``) through ``kvlint check``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main

needs_kustomize = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None, reason="no kustomize/kubectl"
)

SECRET = "runner-secret-model-7f3a"

_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.0
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""

_REPLACE = """replacements:
- source: {kind: ConfigMap, name: leak, fieldPath: data.model}
  targets:
  - select: {kind: Deployment, name: vllm}
    fieldPaths: [spec.template.spec.containers.0.args.1]
"""


def _tree(tmp_path: Path, *, git: bool = True) -> tuple[Path, Path]:
    """``(repo, outside)``: a repository with ``base/`` (a vLLM Deployment) and an ``outside/`` kustomization
    beside it (the runner's disk) holding a ConfigMap whose value is :data:`SECRET`."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / "base").mkdir(parents=True)
    outside.mkdir()
    if git:
        (repo / ".git").mkdir()
    (repo / "base" / "deployment.yaml").write_text(_DEPLOYMENT)
    (repo / "base" / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (outside / "cm.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: leak}}\ndata: {{model: {SECRET}}}\n"
    )
    (outside / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    return repo, outside


def _overlay(repo: Path, body: str, name: str = "prod") -> Path:
    over = repo / "overlays" / name
    over.mkdir(parents=True)
    (over / "kustomization.yaml").write_text(body)
    return over


def _check(*paths: Path) -> tuple[int, dict]:
    res = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--format", "json", *map(str, paths)]
    )
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, json.loads(res.stdout)


def _outside_findings(report: dict) -> list[dict]:
    return [
        d for d in report["diagnostics"] if d["rule"] == "KV001" and "outside the repository" in d["message"]
    ]


@needs_kustomize
@pytest.mark.parametrize("field", ["resources", "bases", "components"])
def test_a_base_outside_the_repository_is_not_built(tmp_path: Path, field: str) -> None:
    repo, _ = _tree(tmp_path)
    head = "" if field == "resources" else f"{field}:\n"
    over = _overlay(repo, f"resources:\n- ../../base\n{head}- ../../../outside\n" + _REPLACE)
    for named in (over, repo):  # named, and met in a walk of the repository
        _, report = _check(named)
        (found,) = _outside_findings(report)
        assert found["file"] == str(over / "kustomization.yaml") and found["line"] == (3 if not head else 4)
        assert SECRET not in json.dumps(report)
        assert not report["workloads"]  # the overlay was not built (its base is linted only through it)


@needs_kustomize
def test_a_link_out_of_the_repository_and_a_base_naming_one_are_refused(tmp_path: Path) -> None:
    """By real path, symbolic links resolved, and transitively: a base inside the repository whose own
    ``resources`` climbs out is the finding, at the base's line."""
    repo, outside = _tree(tmp_path)
    os.symlink(outside, repo / "vendored")
    over = _overlay(repo, "resources:\n- ../../base\n- ../../vendored\n" + _REPLACE)
    (found,) = _outside_findings(_check(over)[1])
    assert (found["file"], found["line"]) == (str(over / "kustomization.yaml"), 3)
    mid = repo / "mid"
    mid.mkdir()
    (mid / "kustomization.yaml").write_text("resources:\n- ../base\n- ../../outside\n")
    over2 = _overlay(repo, "resources:\n- ../../mid\n" + _REPLACE, "two")
    _, report = _check(over2)
    (found,) = _outside_findings(report)
    assert found["file"].endswith(os.path.join("mid", "kustomization.yaml")) and found["line"] == 3
    assert SECRET not in json.dumps(report)


@needs_kustomize
def test_bases_inside_the_repository_still_build(tmp_path: Path) -> None:
    repo, _ = _tree(tmp_path)
    over = _overlay(repo, "resources:\n- ../../base\nnamePrefix: prod-\n")
    _, report = _check(over)
    assert not _outside_findings(report)
    assert [w["name"] for w in report["workloads"]] == ["prod-vllm"]


@needs_kustomize
def test_outside_any_repository_the_directory_named_is_the_limit(tmp_path: Path) -> None:
    """No ``.git`` above: a walk confines its overlays to the directory walked, a named overlay to itself."""
    repo, _ = _tree(tmp_path, git=False)
    over = _overlay(repo, "resources:\n- ../../base\n")
    _, walked = _check(repo)
    assert not _outside_findings(walked) and [w["name"] for w in walked["workloads"]] == ["vllm"]
    (found,) = _outside_findings(_check(over)[1])
    assert found["line"] == 2
    _, escaping = _check(_overlay(repo, "resources:\n- ../../../outside\n" + _REPLACE, "esc"))
    assert _outside_findings(escaping) and SECRET not in json.dumps(escaping)


@needs_kustomize
def test_kustomize_errors_quote_paths_relative_to_the_repository(tmp_path: Path) -> None:
    """kubectl's error quotes absolute paths and whether they exist (``lstat /x/missing.yaml: no such file``): the
    KV001 shows them relative to the repository, and no absolute path of the machine."""
    repo, _ = _tree(tmp_path)
    over = _overlay(repo, "resources:\n- ../../base\n- missing.yaml\n")
    _, report = _check(over)
    (failed,) = [d for d in report["diagnostics"] if d["rule"] == "KV001"]
    assert "overlays/prod/missing.yaml" in failed["message"] and "no such file" in failed["message"]
    assert str(tmp_path) not in failed["message"] and os.path.realpath(tmp_path) not in failed["message"]


def test_paths_outside_the_repository_read_as_a_neutral_word() -> None:
    from kvlint.render import OUTSIDE_PATH_WORD, _neutral_paths

    line = (
        "accumulating resources from '/srv/repo/base': evalsymlink failure on '/tmp/probe': lstat /tmp/probe: "
        "no such file or directory; apps/v1 https://example.com/x /srv/repo"
    )
    shown = _neutral_paths(line, ("/srv/repo", "/real/srv/repo"))
    assert "'base'" in shown and "/tmp/probe" not in shown and shown.count(OUTSIDE_PATH_WORD) == 2
    assert "apps/v1 https://example.com/x ." in shown
    assert _neutral_paths("lstat /real/srv/repo/a/b: x", ("/srv/repo", "/real/srv/repo")) == "lstat a/b: x"
    assert _neutral_paths("/srv/repository/x", ("/srv/repo",)) == OUTSIDE_PATH_WORD


@needs_kustomize
def test_helm_charts_of_a_kustomization_are_said_not_inflated(tmp_path: Path) -> None:
    """kubectl kustomize fails on ``helmCharts`` without ``--enable-helm`` (a multi-line quote of the YAML, "must
    specify --enable-helm"): the KV001 says up front that kvlint does not inflate them, at the field, and how to lint
    it; in a base too."""
    repo, _ = _tree(tmp_path)
    charts = "helmCharts:\n- name: vllm\n  repo: https://example.com/charts\n  version: 1.0.0\n"
    over = _overlay(repo, "resources:\n- ../../base\n" + charts)
    (found,) = [d for d in _check(over)[1]["diagnostics"] if d["rule"] == "KV001"]
    assert found["message"].startswith("kvlint does not inflate a kustomization's helmCharts")
    assert (found["file"], found["line"]) == (str(over / "kustomization.yaml"), 3)
    assert "\n" not in found["message"] and "kustomize build --enable-helm" in found["fix"]
    (repo / "base" / "kustomization.yaml").write_text("resources: [deployment.yaml]\n" + charts)
    (found,) = [d for d in _check(_overlay(repo, "resources:\n- ../../base\n", "two"))[1]["diagnostics"]]
    assert found["rule"] == "KV001" and os.path.normpath(found["file"]) == str(
        repo / "base" / "kustomization.yaml"
    )
    assert found["line"] == 2 and "helmCharts" in found["message"]


def test_the_overlay_search_of_a_base_at_the_top_of_a_repository_stays_in_it(tmp_path: Path) -> None:
    """A base linted alone names the overlays beside it (its parent's kustomizations): for a base at the top of a
    git repository that parent is the runner's disk, whose kustomizations were read and named in the fix."""
    from kvlint import filecache
    from kvlint.render import kustomize_overlays_of

    repo, outside = _tree(tmp_path)
    (repo / "kustomization.yaml").write_text("resources: [deployment.yaml]\n")
    (repo / "deployment.yaml").write_text(_DEPLOYMENT)
    (outside / "kustomization.yaml").write_text("resources: [../repo]\n")
    inner = repo / "prod"
    inner.mkdir()
    (inner / "kustomization.yaml").write_text("resources: [..]\n")
    filecache.clear()
    found = kustomize_overlays_of(str(repo / "deployment.yaml"))
    assert found is not None and found[1] == (str(inner),)
    shutil.rmtree(repo / ".git")  # outside any repository (your own disk): the parent is searched as before
    filecache.clear()
    found = kustomize_overlays_of(str(repo / "deployment.yaml"))
    assert found is not None and str(outside) in found[1]
