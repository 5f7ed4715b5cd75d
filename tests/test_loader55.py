"""Loader and report items of pass loader55: positions on a JSON line after an escaped character, the bound on the
loader's findings per file, kustomize patches, and the KV001 hints a BOM or a list of non-objects lost."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kvlint.load import load_paths, load_text
from kvlint.pipeline import Options, run_documents
from kvlint.source import LDict, LList


def _one_line_vllm(odd: str) -> str:
    """A one-line JSON Deployment of vLLM whose annotation and a flag value before the misspelt flag hold ``odd``
    (one character each time)."""
    doc = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "x", "annotations": {"a": f"p{odd}q"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
                    "containers": [
                        {
                            "name": "vllm",
                            "image": "vllm/vllm-openai:v0.11.0",
                            "args": [
                                "--served-model-name",
                                f"a{odd}b{odd}",
                                "--model",
                                "meta-llama/Llama-3.1-8B-Instruct",
                                "--gpu-memory-utilisation",
                                "0.85",
                            ],
                            "resources": {"limits": {"nvidia.com/gpu": 1}},
                        }
                    ],
                },
            },
        },
    }
    return json.dumps(doc, ensure_ascii=False) + "\n"


def _positions(value: Any, out: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Every position a loaded document holds, in a fixed order: each container's own, its keys' and values'."""
    if isinstance(value, LDict):
        out.append(("map", value.loc))
        for k in value:
            out.append((k, value.key_locs.get(k), value.locs.get(k)))
            _positions(value[k], out)
    elif isinstance(value, LList):
        out.append(("list", value.loc))
        for i, item in enumerate(value):
            out.append((i, value.locs[i]))
            _positions(item, out)
    return out


def test_a_rule_finding_after_an_escaped_del_on_a_json_line_is_at_the_values_column() -> None:
    """A DEL (or C1 control, U+2028) inside a JSON string is written as a 6-character ``\\u`` escape before the
    YAML reader sees it; the loader's own findings were moved back to the file's columns, the rules' were not:
    KV205 on ``--gpu-memory-utilisation`` after three DELs on the line stood 15 columns right of the flag."""
    for odd in ("\x7f", "\x85", "\u2028", "\x9b"):
        text = _one_line_vllm(odd)
        res = run_documents(load_text(text, "d.json"), Options(allow_hub=False))
        (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
        # the scalar's opening quote, as an editor counts
        column = text.index('"--gpu-memory-utilisation"') + 1
        assert kv205.loc is not None and (kv205.loc.line, kv205.loc.column) == (1, column), (odd, kv205.loc)


def test_every_position_of_a_json_document_with_escaped_characters_is_the_files() -> None:
    """Every key, value and container position of the document equals that of the same text with each odd
    character replaced by an ordinary one (same length, nothing escaped), also for values after several escapes
    on the line and for the items of a ``kind: List``."""
    for odd in ("\x7f", "\u2029"):
        deployment = json.loads(_one_line_vllm("x"))
        listed = {"apiVersion": "v1", "kind": "List", "items": [deployment, deployment]}
        for shape in (_one_line_vllm("\ue000"), json.dumps(listed, ensure_ascii=False) + "\n"):
            odd_text = shape.replace("\ue000", odd).replace("pxq", f"p{odd}q")
            plain_text = odd_text.replace(odd, "y")
            assert odd_text != plain_text
            got, want = load_text(odd_text, "d.json"), load_text(plain_text, "d.json")
            assert not got.findings and not want.findings, (got.findings, want.findings)
            assert [d.loc for d in got.documents] == [d.loc for d in want.documents]
            assert len(got.documents) == len(want.documents) >= 1
            for g, w in zip(got.documents, want.documents, strict=True):
                assert _positions(g.data, []) == _positions(w.data, [])


def test_positions_after_escapes_are_right_in_a_json_file_read_from_disk(tmp_path: Path) -> None:
    """The same through the file loader (bytes decoded, the escaped text read whole)."""
    f = tmp_path / "d.json"
    text = _one_line_vllm("\x7f")
    f.write_text(text, encoding="utf-8")
    (doc,) = load_paths([str(f)]).documents
    args = doc.data["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args.locs[4].column == text.index('"--gpu-memory-utilisation"') + 1
    assert args.locs[5].column == text.index('"0.85"') + 1


def _no_api_version(n: int, pad: int = 0, comment_first: int = 0) -> str:
    """``n`` ConfigMap documents without apiVersion (kubectl refuses each), the first ``comment_first`` with a
    ``# kvlint: ignore KV001`` comment, each padded with ``pad`` bytes of data."""
    docs = []
    for i in range(n):
        note = " # kvlint: ignore KV001=known" if i < comment_first else ""
        data = f"data:\n  pad: {'x' * pad}\n" if pad else ""
        docs.append(f"---\nkind: ConfigMap{note}\nmetadata:\n  name: c{i}\n{data}")
    return "".join(docs)


def _kv001_counts(result: Any) -> tuple[int, int, list[int]]:
    from kvlint.types import findings_stood_for

    kv001 = [d for d in result.diagnostics if d.rule == "KV001"]
    return (
        len(kv001),
        sum(findings_stood_for(d) for d in kv001),
        [d.stands_for for d in kv001 if d.stands_for > 1],
    )


@pytest.mark.parametrize("jobs", [0, 1, 2])
def test_the_loaders_findings_of_a_rule_in_a_file_past_the_bound_are_one_finding(
    tmp_path: Path, jobs: int
) -> None:
    """120 documents without apiVersion made 120 KV001 errors one by one (20,000 made 20,000, 60,000 lines of
    report): the first MAX_PER_RULE of a file are listed, the rest are one error standing for them, so the count
    of errors (and the exit status) is what it was; another file's findings are its own. The same in one run
    (jobs 0) and the streaming run of one process or two."""
    from kvlint.findcap import MAX_PER_RULE
    from kvlint.pipeline import run_check
    from kvlint.stream import stream_check

    n = MAX_PER_RULE + 70
    many, few = tmp_path / "many.yaml", tmp_path / "few.yaml"
    many.write_text(_no_api_version(n))
    few.write_text(_no_api_version(3))
    paths = [str(many), str(few)]
    result = run_check(paths) if jobs == 0 else stream_check(paths, jobs=jobs)
    assert _kv001_counts(result) == (MAX_PER_RULE + 1 + 3, n + 3, [n - MAX_PER_RULE])
    (rest,) = [d for d in result.diagnostics if d.stands_for > 1]
    assert rest.loc is not None and rest.loc.file == str(many)
    assert rest.loc.line == 2 + 4 * MAX_PER_RULE  # the first document past the bound: its kind line
    assert rest.message.startswith(f"{n - MAX_PER_RULE:,} more KV001 findings in file {many}")
    assert rest.severity == "error"


def test_the_bound_holds_across_the_batches_of_a_large_file(tmp_path: Path) -> None:
    """A file above the streaming run's segment size is analysed in batches, each a unit of its own: the bound
    is per file, not per batch (one finding for the rest, not one per batch), and the count is exact."""
    from kvlint.findcap import MAX_PER_RULE
    from kvlint.stream import SEGMENT_BYTES, stream_check

    n = 700
    big = tmp_path / "big.yaml"
    big.write_text(_no_api_version(n, pad=SEGMENT_BYTES // 600))
    assert big.stat().st_size > SEGMENT_BYTES
    result = stream_check([str(big)], jobs=1)
    assert _kv001_counts(result) == (MAX_PER_RULE + 1, n, [n - MAX_PER_RULE])


@pytest.mark.parametrize("jobs", [0, 1])
def test_the_loaders_cap_counts_what_comments_leave(tmp_path: Path, jobs: int) -> None:
    """Findings a ``# kvlint: ignore KV001=...`` comment suppresses are not counted towards the bound: the report
    still lists MAX_PER_RULE one by one."""
    from kvlint.findcap import MAX_PER_RULE
    from kvlint.pipeline import run_check
    from kvlint.stream import stream_check

    n = MAX_PER_RULE + 10
    f = tmp_path / "many.yaml"
    f.write_text(_no_api_version(n + 3, comment_first=3))
    result = run_check([str(f)]) if jobs == 0 else stream_check([str(f)], jobs=jobs)
    assert len(result.suppressed_diagnostics) == 3
    assert _kv001_counts(result) == (MAX_PER_RULE + 1, n, [n - MAX_PER_RULE])


def test_the_cli_exit_status_and_summary_count_every_capped_finding(tmp_path: Path) -> None:
    """``kvlint check`` on a file of 20,000 documents without apiVersion: the summary line still counts 20,000
    errors and the run exits 1, with 51 errors listed."""
    from click.testing import CliRunner

    from kvlint.cli import main

    f = tmp_path / "many.yaml"
    f.write_text(_no_api_version(20_000))
    r = CliRunner().invoke(main, ["check", str(f)])
    assert r.exit_code == 1, r.output
    assert r.output.count("error KV001") == 51
    assert "20000 errors" in r.output.splitlines()[-1] or "20,000 errors" in r.output.splitlines()[-1]


def test_a_configuration_files_exclude_globs_are_relative_to_its_directory(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``exclude: ["charts/*"]`` in repo/.kvlint.yaml matched paths as typed, relative to the working directory:
    ``kvlint check .`` in the repository left charts/ out, ``kvlint check repo`` beside it and ``kvlint check ..``
    below it linted it, and ``kvlint check .`` in repo/app left out repo/app/charts/, which the glob does not name.
    As ruff reads its ``exclude``, a glob with a ``/`` is relative to the configuration file's directory; a glob of
    one name (``*.tmpl.yaml``) matches that name anywhere below."""
    from click.testing import CliRunner

    from kvlint.cli import main

    bad = "kind: ConfigMap\nmetadata: {name: a}\n"  # no apiVersion: one KV001 error where it is linted
    repo = tmp_path / "repo"
    for rel in ("charts/a.yaml", "app/charts/b.yaml", "app/c.tmpl.yaml", "app/d.yaml"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(bad)
    (repo / ".kvlint.yaml").write_text('exclude: ["charts/*", "*.tmpl.yaml"]\n')
    runner = CliRunner()

    def linted(cwd: Path, arg: str) -> set[str]:
        monkeypatch.chdir(cwd)
        r = runner.invoke(main, ["check", "--offline", "--format", "json", arg])
        assert r.exit_code == 1, r.output
        report = json.loads(r.stdout)
        return {os.path.basename(d["file"]) for d in report["diagnostics"]}

    want = {"b.yaml", "d.yaml"}
    assert linted(repo, ".") == want
    assert linted(tmp_path, "repo") == want
    assert linted(repo / "app", "..") == want
    assert linted(repo / "app", ".") == want  # app/charts/b.yaml is not the repository's charts/


def test_a_list_of_values_is_refused_as_kubectl_refuses_it() -> None:
    """A YAML or JSON document that is a list of strings, numbers or lists is no object: kubectl refuses it
    ("cannot unmarshal array into Go value of type unstructured.detector") and kvlint said nothing ("1 document,
    0 workloads"). Now KV001 at the document's first line; a list of mappings that are not objects (an Ansible
    playbook) stays silent, as does a list beside other documents only for itself."""
    for text, path, line in (
        ("[1, 2, 3]\n", "l.yaml", 1),
        ("- a\n- b\n", "l.yaml", 1),
        ('["a", ["b"]]', "l.json", 1),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# words\n- a\n- b\n", "two.yaml", 6),
    ):
        res = load_text(text, path)
        (kv001,) = res.findings
        assert kv001.rule == "KV001" and "a list, not an object" in kv001.message, kv001
        assert text.split("\n")[line - 1][:1] in "-["  # the list's first line
        assert kv001.loc is not None and (kv001.loc.file, kv001.loc.line) == (path, line)
    playbook = "- hosts: all\n  tasks:\n    - name: x\n      ping: {}\n"
    assert not load_text(playbook, "site.yaml").findings


def test_a_bom_before_the_text_keeps_the_kv001_hint_on_line_one() -> None:
    """Text given as a string with a byte-order mark (bytes drop it when decoded) lost the hint of a syntax error
    on line 1: libyaml does not count the BOM in a column, and the early-closing-quote hint read the text one
    character short of the quote. With the BOM dropped as the bytes path drops it, the hint and the column are
    those of the same text without it."""
    text = 'metadata: {name: "a"b"}\n'
    (plain,) = load_text(text, "f.yaml").findings
    (bom,) = load_text("\ufeff" + text, "f.yaml").findings
    (raw,) = load_text(("\ufeff" + text).encode(), "f.yaml").findings
    assert 'right after the " at column' in plain.message
    assert bom.message == plain.message == raw.message
    assert bom.loc == plain.loc == raw.loc


_PATCH = """kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
"""


def _overlay(tmp_path: Path) -> Path:
    """An overlay directory whose kustomization lists patch.yaml (``patches``) and patches/gpu.yaml
    (``patchesStrategicMerge``), with other.yaml beside them that it does not list."""
    overlay = tmp_path / "overlay"
    (overlay / "patches").mkdir(parents=True)
    (overlay / "kustomization.yaml").write_text(
        "resources:\n  - ../base\npatches:\n  - path: patch.yaml\npatchesStrategicMerge:\n  - patches/gpu.yaml\n"
    )
    (overlay / "patch.yaml").write_text(_PATCH)
    (overlay / "patches" / "gpu.yaml").write_text(_PATCH)
    (overlay / "other.yaml").write_text(_PATCH)
    return overlay


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_file_a_kustomization_lists_as_a_patch_is_read_as_a_patch(tmp_path: Path, jobs: int) -> None:
    """A kustomize patch that sets a container's ``image`` (and, as patches often do, no ``apiVersion``), linted
    alone (a pre-commit hook passes the files changed), got KV001 ("no apiVersion") and KV503 ("the vLLM command
    names no model"): it was read as a whole Deployment. A file the kustomization beside or above it lists under
    ``patches`` or ``patchesStrategicMerge`` is now one KV002 saying what it is and which kustomization applies it,
    and no workload; a file beside it that no kustomization lists is linted as before."""
    from kvlint.pipeline import run_check
    from kvlint.stream import stream_check
    from kvlint.types import Mark

    overlay = _overlay(tmp_path)
    for name, field in (("patch.yaml", "patches"), ("patches/gpu.yaml", "patchesStrategicMerge")):
        path = str(overlay / name)
        result = run_check([path]) if jobs == 0 else stream_check([path], jobs=jobs)
        (kv002,) = result.diagnostics
        assert kv002.rule == "KV002" and kv002.mark is Mark.KUSTOMIZE_PATCH, result.diagnostics
        assert f"{overlay / 'kustomization.yaml'} lists it under {field}" in kv002.message
        assert f"kvlint check {overlay}" in kv002.fix
        assert result.workloads == 0
    other = str(overlay / "other.yaml")
    result = run_check([other]) if jobs == 0 else stream_check([other], jobs=jobs)
    rules = sorted(d.rule for d in result.diagnostics)
    assert "KV001" in rules and "KV503" in rules, rules


def test_a_real_overlays_patch_linted_alone_is_no_workload() -> None:
    """fixtures/collected's krmayankk-gpu-inference overlay patch (apiVersion, image, no model knobs: those live in
    the GPU profiles that build on it) was a vLLM workload "whose command names no model" (KV503)."""
    from kvlint.pipeline import run_check

    patch = (
        Path(__file__).resolve().parents[1]
        / "fixtures/collected/trees/krmayankk-gpu-inference/platform/serving/overlays/vllm/patch.yaml"
    )
    result = run_check([str(patch)])
    assert [d.rule for d in result.diagnostics] == ["KV002"]
    assert "lists it under patches" in result.diagnostics[0].message


def test_no_kustomization_is_looked_for_above_a_repository_or_for_a_label(tmp_path: Path) -> None:
    """The search stops at a repository's top (a directory holding .git) and never looks at the disk for a path
    that is no regular file (``-``, the admission webhook's ``<admission ...>`` labels)."""
    from kvlint.kustomize_patch import patching_kustomization

    overlay = _overlay(tmp_path)
    with (overlay / "kustomization.yaml").open("a") as fh:
        fh.write("  - patches/gpu2.yaml\n")
    assert patching_kustomization(str(overlay / "patches" / "gpu.yaml")) is not None
    (overlay / "patches" / ".git").mkdir()  # patches/ is a repository of its own: the overlay is not in it
    (overlay / "patches" / "gpu2.yaml").write_text(_PATCH)
    from kvlint import filecache

    filecache.clear()  # a new run (the disk changed): the kustomizations above a directory are found once a run
    assert patching_kustomization(str(overlay / "patches" / "gpu2.yaml")) is None
    assert patching_kustomization("-") is None
    assert patching_kustomization("<admission Deployment/default/x>.json") is None


def test_the_proxy_only_note_is_its_own_rule_in_every_report() -> None:
    """The note on a file whose only serving-looking container is a request proxy that loads no model was a KV503,
    "engine-command-unparsed" in SARIF and the rules docs, for a command that is no engine's: now KV506
    ``serves-no-model``, and nothing in the file is a KV503."""
    from kvlint.pipeline import run_check
    from kvlint.report.sarif import render_sarif
    from kvlint.rules.catalog import load_catalog

    proxy = Path(__file__).resolve().parents[1] / "fixtures/rules/KV506/any.yaml"
    result = run_check([str(proxy)])
    assert [d.rule for d in result.diagnostics] == ["KV506"]
    assert "loads no model and requests no GPU" in result.diagnostics[0].message
    assert load_catalog()["KV506"].name == "serves-no-model"
    sarif = json.loads(render_sarif(result))
    run = sarif["runs"][0]
    (res,) = run["results"]
    names = {r["id"]: r["name"] for r in run["tool"]["driver"]["rules"]}
    assert res["ruleId"] == "KV506" and names[res["ruleId"]] == "serves-no-model"


@pytest.mark.parametrize("large", [False, True])
def test_a_bom_that_starts_a_document_after_its_separator_is_read_as_kubectl_reads_it(
    tmp_path: Path, large: bool
) -> None:
    """Two files saved with a BOM and joined with cat hold one after a ``---`` line. kubectl splits at the ``---``
    and reads the document after it with the BOM dropped; kvlint's YAML reader took the BOM as content and said
    "YAML syntax error: did not find expected <document start>", which hid the document's own finding (its
    missing apiVersion). Also in a file the streaming run reads in segments (above SEGMENT_BYTES)."""
    from kvlint.pipeline import run_check
    from kvlint.stream import SEGMENT_BYTES, stream_check

    first = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n"
    if large:
        first += "data:\n  pad: " + "x" * (SEGMENT_BYTES + 10) + "\n"
    f = tmp_path / "joined.yaml"
    f.write_bytes((first + "---\n").encode() + b"\xef\xbb\xbf" + b"kind: ConfigMap\nmetadata: {name: a}\n")
    line = first.count("\n") + 2  # the line after the separator
    for result in (run_check([str(f)]), stream_check([str(f)], jobs=1)):
        kv001 = [d for d in result.diagnostics if d.rule == "KV001"]
        assert [(d.loc.line if d.loc else 0, "has no apiVersion" in d.message) for d in kv001] == [
            (line, True)
        ], kv001
        assert result.documents == 2


@pytest.mark.parametrize("jobs", [0, 1])
def test_a_patch_named_beside_the_kustomization_the_run_builds_is_linted_through_it(
    tmp_path: Path, jobs: int
) -> None:
    """``kvlint check overlay overlay/patch.yaml`` (a hook passing the directory and the changed file): the overlay
    is built with its patch applied, so the patch named too is a KV002 info saying so, not a warning asking to lint
    the overlay that this very run lints, and it is not counted as a serving object left unread."""
    import shutil

    from kvlint.pipeline import run_check
    from kvlint.sizing import unread
    from kvlint.stream import stream_check
    from kvlint.types import Mark

    if shutil.which("kubectl") is None and shutil.which("kustomize") is None:
        pytest.skip("kubectl or kustomize is needed to build the overlay")
    (tmp_path / ".git").mkdir()  # the repository the overlay's base lies in
    base = tmp_path / "base"
    base.mkdir()
    (base / "deploy.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\nspec:\n  replicas: 1\n"
        "  selector: {matchLabels: {app: vllm}}\n  template:\n    metadata: {labels: {app: vllm}}\n    spec:\n"
        "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n      containers:\n        - name: vllm\n"
        "          image: vllm/vllm-openai:v0.10.0\n"
        '          args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (base / "kustomization.yaml").write_text("resources:\n  - deploy.yaml\n")
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text("resources:\n  - ../base\npatches:\n  - path: patch.yaml\n")
    (overlay / "patch.yaml").write_text("apiVersion: apps/v1\n" + _PATCH)
    paths = [str(overlay), str(overlay / "patch.yaml")]
    result = run_check(paths) if jobs == 0 else stream_check(paths, jobs=jobs)
    (kv002,) = [d for d in result.diagnostics if d.rule == "KV002"]
    assert kv002.severity == "info" and kv002.mark is Mark.KUSTOMIZE_PATCH_BUILT, kv002
    assert "built in this run" in kv002.message
    assert len(result.containers) == 1  # the Deployment the overlay builds, not the patch read as one
    assert not unread(result)
