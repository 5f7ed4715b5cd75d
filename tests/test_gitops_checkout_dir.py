"""An Argo CD Application whose ``source.path`` is a directory of manifests in the checkout holding the
Application's own file: the KV503 note's fix names that directory (``kvlint check k8s``), as a shell word, instead
of the generic "kvlint check DIR". The manifests are the real ones of ryannix123/nvidia-mig-ocp (fixtures/collected,
new-user pass 26): its ``argocd/application.yaml`` deploys ``path: k8s``, where its vLLM Pod is."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

REPO = Path(__file__).resolve().parents[1]
COLLECTED = REPO / "fixtures" / "collected"
APPLICATION = COLLECTED / "ryannix123__nvidia-mig-ocp__argocd__application.yaml"
POD = COLLECTED / "ryannix123__nvidia-mig-ocp__k8s__vllm__vllm-deployment.yaml"


def _checkout(root: Path, k8s: str = "k8s", application: str | None = None) -> Path:
    """The repository's layout: ``.git``, ``argocd/application.yaml`` and the Pod under ``<k8s>/vllm/``."""
    (root / ".git").mkdir(parents=True)
    (root / "argocd").mkdir()
    app = root / "argocd" / "application.yaml"
    app.write_text(application if application is not None else APPLICATION.read_text())
    (root / k8s / "vllm").mkdir(parents=True)
    (root / k8s / "vllm" / "vllm-deployment.yaml").write_text(POD.read_text())
    return app


def _note(path: Path):  # type: ignore[no-untyped-def]
    res = run_check([str(path)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    return d


def test_the_fix_names_the_checkout_directory_the_application_deploys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, the fix read "a chart or directory in this checkout with kvlint check DIR ..."; now it is the command
    to run from where kvlint ran, and running it reads the Pod."""
    assert "    path: k8s\n" in APPLICATION.read_text()
    app = _checkout(tmp_path / "repo")
    monkeypatch.chdir(tmp_path)
    d = _note(app)
    assert d.fix == "lint what it deploys: kvlint check repo/k8s"
    words = shlex.split(d.fix.split(": ", 1)[1])
    assert words[:2] == ["kvlint", "check"]
    res = run_check(words[2:], Options(allow_hub=False))
    assert [cr.container_name for cr in res.containers] == ["vllm"]


def test_a_directory_name_the_shell_would_split_is_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = "k8s manifests;$(id)"
    app = _checkout(tmp_path, odd, APPLICATION.read_text().replace("path: k8s", f"path: '{odd}'"))
    monkeypatch.chdir(tmp_path)
    d = _note(app)
    assert d.fix == "lint what it deploys: kvlint check " + shlex.quote(odd)
    assert shlex.split(d.fix.split(": ", 1)[1])[2:] == [odd]


def test_no_directory_is_named_outside_a_checkout_or_when_the_path_is_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a ``.git`` above the file, or with a path the checkout does not have, the generic fix stays."""
    monkeypatch.chdir(tmp_path)
    loose = tmp_path / "loose" / "application.yaml"
    loose.parent.mkdir()
    loose.write_text(APPLICATION.read_text())
    assert "kvlint check DIR" in _note(loose).fix
    app = _checkout(tmp_path / "repo", "deploy")
    assert "kvlint check DIR" in _note(app).fix
