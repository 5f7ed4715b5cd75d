"""Follow-ups of the session's reviews (pass follow55): a directory walk skips files that are not Kubernetes
objects, as kube-linter and kubeconform do, while a file named on the command line keeps its KV001."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

#: (file name, text): files of an application a walk meets beside its manifests, none a Kubernetes object
_APP_FILES = [
    ("data.json", "[1, 2]\n"),
    ("names.json", '["alpha", "beta"]\n'),
    ("words.yaml", "- alpha\n- beta\n"),
    ("notes.yaml", "just a sentence\n"),
    ("package.json", '{"name": "app", "version": "1.0.0"}\n'),
]
_MIXED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nstray text\n"


def _not_object_kv001(diagnostics: list) -> list[tuple[str, int]]:
    """(file name, line) of each "this document is ... not an object" KV001."""
    return sorted(
        (Path(d.loc.file).name, d.loc.line)
        for d in diagnostics
        if d.rule == "KV001" and d.loc is not None and "not an object" in d.message
    )


@pytest.mark.parametrize("jobs", [0, 1, 2])
def test_a_walk_skips_files_that_are_not_kubernetes_objects_but_not_a_stray_document(
    tmp_path: Path, jobs: int
) -> None:
    """``kvlint check deploy/`` over an app's ``data.json`` (a JSON array) and a word list failed the run with a
    KV001 each, while ``package.json`` (a mapping without ``kind``) stayed silent. Now each is skipped; a manifest
    with a stray scalar document still gets its KV001 (kubectl refuses that document)."""
    from kvlint.pipeline import run_check
    from kvlint.stream import stream_check

    deploy = tmp_path / "deploy"
    deploy.mkdir()
    for name, text in _APP_FILES:
        (deploy / name).write_text(text)
    (deploy / "mixed.yaml").write_text(_MIXED)
    paths = [str(deploy)]
    result = run_check(paths) if jobs == 0 else stream_check(paths, jobs=jobs)
    assert _not_object_kv001(result.diagnostics) == [("mixed.yaml", 5)], result.diagnostics


@pytest.mark.parametrize("name, text", _APP_FILES[:4])
def test_a_file_named_explicitly_or_on_stdin_keeps_its_kv001(tmp_path: Path, name: str, text: str) -> None:
    """What a walk skips, a file the user named (or piped in) is still refused as kubectl refuses it."""
    from kvlint.pipeline import run_check

    path = tmp_path / name
    path.write_text(text)
    assert _not_object_kv001(run_check([str(path)]).diagnostics) == [(name, 1)]
    piped = run_check(["-"], stdin=io.StringIO(text)).diagnostics
    assert _not_object_kv001(piped) == [("-", 1)], piped
