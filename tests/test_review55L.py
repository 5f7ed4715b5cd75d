"""Review of pass loader55 (merge a04a07df): a kustomize patch's KV002 when the kustomization that lists it fails
to build, and a configuration's ``exclude`` globs that start with ``**/``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

_BASE_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  replicas: 1\n"
    "  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata: {labels: {app: vllm}}\n    spec:\n"
    "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n        - name: vllm\n"
    "          image: vllm/vllm-openai:v0.10.0\n"
    '          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
    "          resources: {limits: {nvidia.com/gpu: 1}}\n"
)
_PATCH = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  template:\n    spec:\n"
    "      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
)


@pytest.mark.parametrize("jobs", [0, 1, 2])
@pytest.mark.parametrize("broken", ["missing resource", "base outside the repository"])
def test_a_patch_of_a_kustomization_that_failed_to_build_is_not_said_linted_through_it(
    tmp_path: Path, jobs: int, broken: str
) -> None:
    """``kvlint check overlay overlay/patch.yaml`` where kustomize fails on the overlay (a resource that does not
    exist) or kvlint refuses to build it (its base lies outside the repository): the overlay's KV001 says it was not
    built, yet the patch's KV002 was the info "that kustomization is built in this run, so kvlint linted the patch
    through what it builds": the kustomizations the run planned to build were recorded, not those that built. The
    patch was linted through nothing; it is the warning a patch linted alone gets, counted as not read."""
    from kvlint.pipeline import run_check
    from kvlint.sizing import unread
    from kvlint.stream import stream_check
    from kvlint.types import Mark

    if shutil.which("kubectl") is None and shutil.which("kustomize") is None:
        pytest.skip("kubectl or kustomize is needed to build the overlay")
    repo = tmp_path / "repo"
    base = (tmp_path if broken == "base outside the repository" else repo) / "base"
    base.mkdir(parents=True)
    (repo / ".git").mkdir(parents=True)
    (base / "deploy.yaml").write_text(_BASE_DEPLOYMENT)
    (base / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    overlay = repo / "overlay"
    overlay.mkdir()
    resources = (
        "  - ../../base\n" if broken == "base outside the repository" else "  - ../base\n  - gone.yaml\n"
    )
    (overlay / "kustomization.yaml").write_text(f"resources:\n{resources}patches:\n  - path: patch.yaml\n")
    (overlay / "patch.yaml").write_text(_PATCH)
    paths = [str(overlay), str(overlay / "patch.yaml")]
    result = run_check(paths) if jobs == 0 else stream_check(paths, jobs=jobs)
    assert any(d.rule == "KV001" and d.severity == "error" for d in result.diagnostics), result.diagnostics
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert kv002.mark is Mark.KUSTOMIZE_PATCH and kv002.severity == "warning", kv002
    assert "built in this run" not in kv002.message
    assert not result.containers  # the overlay built nothing, and the patch is still no workload
    assert any(d.loc is not None and d.loc.file.endswith("patch.yaml") for d, _ in unread(result))


def test_a_patch_of_a_kustomization_that_built_is_still_linted_through_it(tmp_path: Path) -> None:
    """The other side: after a run whose overlay failed, a run whose overlay builds says its patch was linted
    through that build (what a run records is its own builds, not the previous run's)."""
    from kvlint.pipeline import run_check
    from kvlint.types import Mark

    if shutil.which("kubectl") is None and shutil.which("kustomize") is None:
        pytest.skip("kubectl or kustomize is needed to build the overlay")
    (tmp_path / ".git").mkdir()
    base = tmp_path / "base"
    base.mkdir()
    (base / "deploy.yaml").write_text(_BASE_DEPLOYMENT)
    (base / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "patch.yaml").write_text(_PATCH)
    paths = [str(overlay), str(overlay / "patch.yaml")]
    marks = []
    for resources in ("  - ../base\n  - gone.yaml\n", "  - ../base\n"):
        (overlay / "kustomization.yaml").write_text(
            f"resources:\n{resources}patches:\n  - path: patch.yaml\n"
        )
        (kv002,) = [d for d in run_check(paths).diagnostics if d.rule == "KV002"]
        marks.append(kv002.mark)
    assert marks == [Mark.KUSTOMIZE_PATCH, Mark.KUSTOMIZE_PATCH_BUILT]


@pytest.mark.parametrize("where", ["in the repository", "beside it"])
def test_a_configuration_glob_with_a_globstar_matches_at_the_configurations_directory_too(
    tmp_path: Path, monkeypatch: Any, where: str
) -> None:
    """``exclude: ["**/generated/*"]`` in repo/.kvlint.yaml: anchored at the file's directory it became
    ``REPO/**/generated/*``, which fnmatch reads as ``REPO/`` + anything + ``/generated/`` and so never matched
    ``REPO/generated/a.yaml`` (before the glob was anchored it did, and so does ruff, whose globs read ``/**/`` as zero
    or more directories: ruff_linter ``FilePattern::User``, globset). ``apps/**/tmp.yaml`` likewise left
    ``apps/tmp.yaml`` linted."""
    from click.testing import CliRunner

    from kvlint.cli import main

    bad = "kind: ConfigMap\nmetadata: {name: a}\n"  # no apiVersion: one KV001 error where it is linted
    repo = tmp_path / "repo"
    for rel in (
        "generated/a.yaml",
        "apps/generated/b.yaml",
        "apps/tmp.yaml",
        "apps/x/tmp.yaml",
        "other/c.yaml",
    ):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(bad)
    (repo / ".kvlint.yaml").write_text('exclude: ["**/generated/*", "apps/**/tmp.yaml"]\n')
    monkeypatch.chdir(repo if where == "in the repository" else tmp_path)
    r = CliRunner().invoke(
        main, ["check", "--offline", "--format", "json", "." if where == "in the repository" else "repo"]
    )
    assert r.exit_code == 1, r.output
    linted = {os.path.relpath(os.path.abspath(d["file"]), repo) for d in json.loads(r.stdout)["diagnostics"]}
    assert linted == {os.path.join("other", "c.yaml")}


def test_file_columns_after_escapes_match_the_escaped_text_character_by_character() -> None:
    """:func:`kvlint.load._file_column` against the escaped line itself: each character of a line whose DELs were
    written as 6-character ``\\u007f`` escapes stands at the file column of the character it came from (an escape's
    six at its DEL's)."""
    import random

    from kvlint.load import _escape_starts, _file_column

    rng = random.Random(55)
    for _ in range(200):
        line = "".join(rng.choice("ab\x7f") for _ in range(rng.randint(1, 40)))
        cols = [i + 1 for i, ch in enumerate(line) if ch == "\x7f"]
        if not cols:
            continue
        want: list[int] = []  # want[j]: the file column of the escaped line's column j + 1
        for i, ch in enumerate(line):
            want.extend([i + 1] * (6 if ch == "\x7f" else 1))
        want.append(len(line) + 1)  # the column just past the line's end
        starts = _escape_starts(cols)
        assert [_file_column(j + 1, cols, starts) for j in range(len(want))] == want, line


def _load_steps(path: Path) -> int:
    """Lines of ``kvlint/load.py`` executed by one ``load_paths`` of ``path``: a count of work, not a time, so a
    loaded machine does not move it (the brief keeps performance targets in bench/, never in timed tests)."""
    import sys
    from types import FrameType

    import kvlint.load
    from kvlint.load import load_paths

    load_paths([str(path)])  # warm: lazy imports
    source = kvlint.load.__file__
    steps = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal steps
        if frame.f_code.co_filename != source:
            return None  # no line events for other modules' frames
        if event == "line":
            steps += 1
        return trace

    sys.settrace(trace)
    try:
        load_paths([str(path)])
    finally:
        sys.settrace(None)
    return steps


def _escapes_then_values(path: Path, n: int) -> Path:
    """A one-line JSON ConfigMap of ``n`` DEL characters (each written as a 6-character ``\\u007f`` escape) then
    ``n`` keys, written to ``path``."""
    doc = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "annotations": {"a": "\x7f" * n}},
        "data": {f"k{i}": "v" for i in range(n)},
    }
    path.write_text(json.dumps(doc, ensure_ascii=False) + "\n")
    return path


def test_a_json_line_of_many_escapes_and_values_is_read_in_linear_time(tmp_path: Path) -> None:
    """A one-line JSON manifest of 20,000 DEL characters then 20,000 keys (300 KB, a pull request's file): every
    position after the DELs was moved back by a walk over all the escapes before it, 20,000 x 20,000 steps, about a
    minute of CPU where reading the file takes a tenth of a second (the same file with 80,000 of each held a CI run
    for a quarter of an hour). Now a binary search on the line's escapes. Counted, not timed: doubling the escapes
    and values at most about doubles the lines of the loader run (the walk quadrupled them)."""
    from kvlint.load import load_paths

    small = _load_steps(_escapes_then_values(tmp_path / "small.json", 400))
    large = _load_steps(_escapes_then_values(tmp_path / "large.json", 800))
    assert large < 2.5 * small, (small, large)
    path = _escapes_then_values(tmp_path / "odd.json", 20_000)
    (d,) = load_paths([str(path)]).documents
    line = path.read_text()
    assert d.data["data"].locs["k19999"].column == line.index('"v"', line.index('"k19999"')) + 1


@pytest.mark.parametrize("separator", ["--- # the second", "---\t# the second", "---   "])
def test_a_bom_after_a_separator_line_with_a_comment_is_dropped_too(separator: str) -> None:
    """kubectl's YAMLReader (k8s.io/apimachinery pkg/util/yaml/decoder.go, ``YAMLReader.Read``) splits a stream at a
    line that starts with ``---`` followed by nothing but spaces or a ``#`` comment, and each part's BOM is dropped
    by its YAML decoder. A BOM after ``--- # the second`` was still read as content: "did not find expected
    <document start>", which hid the document and its missing apiVersion."""
    from kvlint.load import load_text

    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a}}\n{separator}\n\ufeffkind: ConfigMap\nmetadata: {{name: b}}\n"
    for data in (text, text.encode()):
        loaded = load_text(data, "two.yaml")
        assert [(d.data or {}).get("metadata", {}).get("name") for d in loaded.documents] == ["a", "b"], (
            loaded.findings
        )
        (kv001,) = [f for f in loaded.findings if f.rule == "KV001"]
        assert "no apiVersion" in kv001.message and kv001.loc is not None and kv001.loc.line == 5, kv001


def test_a_second_run_in_one_process_reads_the_kustomization_as_it_now_is(tmp_path: Path) -> None:
    """The answer "a kustomization lists this file as a patch" was kept for the life of the process, keyed by the
    patch file's own size and time only: a process that lints twice (a library caller, an editor integration)
    went on calling a file a patch after its kustomization stopped listing it, and read no workload in it."""
    from kvlint.pipeline import run_check

    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (tmp_path / ".git").mkdir()
    patch = overlay / "deploy.yaml"
    patch.write_text(_BASE_DEPLOYMENT)
    (overlay / "kustomization.yaml").write_text("patches:\n  - path: deploy.yaml\n")
    first = run_check([str(patch)])
    assert [d.rule for d in first.diagnostics if d.rule == "KV002"] == ["KV002"] and not first.containers
    (overlay / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    second = run_check([str(patch)])
    assert not [d for d in second.diagnostics if d.rule == "KV002"], second.diagnostics
    assert len(second.containers) == 1
