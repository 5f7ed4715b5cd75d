"""Issue 17's command-line side: nearest configuration per file, CLI habits, findings in one glance,
fingerprints, code-scanning SARIF, `kvlint diff`, the sources of values behind a finding, the name."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from cli_runs import checks_in_process
from click.testing import CliRunner

from kvlint import DISTRIBUTION
from kvlint.cli import main
from kvlint.fingerprint import fingerprints, identity
from kvlint.origins import helm_sources, json6902_patches, values_refs
from kvlint.pipeline import Options, run_check
from kvlint.prdiff import repository_file
from kvlint.report import render
from kvlint.report.sarif import FULL_DESCRIPTION_LIMIT, rule_doc_uri, to_sarif_dict
from kvlint.rules.catalog import load_catalog
from kvlint.statement import split_message

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml"
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
SCHEMA = ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
OFF = Options(allow_hub=False)


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("COLUMNS", "FORCE_COLOR", "NO_COLOR", "GITHUB_ACTIONS", "TERM"):
        monkeypatch.delenv(name, raising=False)


def _check(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["check", "--offline", *args], env=env)
    return r.exit_code, r.stdout


# ------------------------------------------------------------------------- one configuration per directory


def test_nearest_config_per_file_whatever_the_argument_order(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    text = EXAMPLE.read_text(encoding="utf-8")
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "chat.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b" / ".kvlint.yaml").write_text("ignore: [KV202]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    one = _check("--format", "json", "a", "b")
    two = _check("--format", "json", "b", "a")
    rules = {(d["file"], d["rule"]) for d in json.loads(one[1])["diagnostics"]}  # a keeps KV202, b does not
    assert ("a/chat.yaml", "KV202") in rules and ("b/chat.yaml", "KV202") not in rules
    assert rules == {(d["file"], d["rule"]) for d in json.loads(two[1])["diagnostics"]}
    # a directory holding a configuration further down is split by it
    nested = _check("--format", "json", ".")
    assert {(os.path.normpath(d["file"]), d["rule"]) for d in json.loads(nested[1])["diagnostics"]} == rules
    # fail_on of each configuration applies to its own files
    (tmp_path / "b" / ".kvlint.yaml").write_text("fail_on: never\n", encoding="utf-8")
    assert _check("b")[0] == 0 and _check("a")[0] == 1 and _check("b", "a")[0] == 1


# ---------------------------------------------------------------------------------------------- CLI habits


def test_output_file_quiet_statistics_exit_zero(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    code, out = _check("-o", str(target), str(EXAMPLE))
    assert code == 1 and out == ""
    full = target.read_text(encoding="utf-8")
    assert full == render("text", run_check([str(EXAMPLE)], OFF)).replace(str(EXAMPLE), str(EXAMPLE))
    code, quiet = _check("-q", str(EXAMPLE))
    assert quiet == full[: full.rindex("\n\n") + 1] and "suppressed" not in quiet
    code, stats = _check("--statistics", str(EXAMPLE))
    names = {k: v.name for k, v in load_catalog().items()}
    res = run_check([str(EXAMPLE)], OFF)
    for d in res.diagnostics:
        assert re.search(rf"^1  {d.rule}  {d.severity}\s+{names[d.rule]}$", stats, re.M)
    assert _check("--exit-zero", str(EXAMPLE))[0] == 0
    assert CliRunner().invoke(main, ["check", "--exit-zero", "--no-such"]).exit_code == 2


def test_github_format_under_github_actions_and_colour_switches() -> None:
    code, out = _check(str(EXAMPLE), env={"GITHUB_ACTIONS": "true"})
    assert out.startswith("::error file=") and code == 1
    assert _check("--format", "text", str(EXAMPLE), env={"GITHUB_ACTIONS": "true"})[1].startswith(
        str(EXAMPLE)
    )
    assert "\x1b[" in _check(str(EXAMPLE), env={"FORCE_COLOR": "1"})[1]
    assert "\x1b[" not in _check(str(EXAMPLE), env={"FORCE_COLOR": "0"})[1]
    from kvlint.report.text import use_color

    class Tty:
        def isatty(self) -> bool:
            return True

    os.environ["TERM"] = "dumb"
    try:
        assert use_color(Tty()) is False  # type: ignore[arg-type]
    finally:
        del os.environ["TERM"]
    assert use_color(Tty()) is True  # type: ignore[arg-type]


def test_version_names_catalogue_and_engine_releases() -> None:
    from kvlint.memory.sglang import NEWEST_SGLANG
    from kvlint.memory.tgi import NEWEST_TGI
    from kvlint.memory.versions import NEWEST_VLLM

    out = CliRunner().invoke(main, ["--version"]).stdout
    assert f"{DISTRIBUTION} on PyPI" in out and f"{len(load_catalog())} rules" in out
    assert f"vLLM {NEWEST_VLLM}" in out and f"TGI {NEWEST_TGI}" in out and f"SGLang {NEWEST_SGLANG}" in out


def test_shell_completion_is_clicks_and_documented() -> None:
    r = subprocess.run(
        [shutil.which("kvlint") or "kvlint"],
        env={**os.environ, "_KVLINT_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "_kvlint_completion" in r.stdout
    assert "_KVLINT_COMPLETE=bash_source kvlint" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")


def test_stdin_filename_names_the_artifact(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    data = EXAMPLE.read_text(encoding="utf-8")
    r = CliRunner().invoke(
        main,
        ["check", "--offline", "--stdin-filename", "deploy/chat.yaml", "--format", "sarif", "-"],
        input=data,
    )
    doc = json.loads(r.stdout)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for x in doc["runs"][0]["results"]
        for loc in x["locations"]
    }
    assert uris == {"deploy/chat.yaml"}
    # named as every file is (ux50): ./deploy/chat.yaml is deploy/chat.yaml in the reports
    r = CliRunner().invoke(
        main, ["check", "--offline", "--stdin-filename", "./deploy/chat.yaml", "-q", "-"], input=data
    )
    assert r.stdout.startswith("deploy/chat.yaml:"), r.stdout[:200]


# ------------------------------------------------------------------------------- findings in one glance


def test_statement_and_details_keep_every_part_of_the_message() -> None:
    res = run_check([str(ROOT / "fixtures" / "examples")], OFF)
    for d in res.diagnostics:
        statement, details = split_message(d.message)
        assert statement and len(statement) < len(d.message) or not details
        words = set(re.findall(r"\w+", d.message))
        assert words == set(re.findall(r"\w+", " ".join([statement, *details])))
    kv103 = next(d for d in res.diagnostics if d.rule == "KV103")
    assert "per GPU:" not in kv103.statement and any(x.startswith("per GPU:") for x in kv103.details)
    cr = next(c for c in res.containers if c.plan is not None and c.plan.max_model_len == 131072)
    assert cr.plan is not None
    has = f"has about {cr.plan.kv_cache_bytes / 2**30:.2f} GiB"
    assert "needs 16.00 GiB" in kv103.statement and has in kv103.statement
    # JSON and SARIF keep the full message
    doc = json.loads(render("json", res))
    assert [x["message"] for x in doc["diagnostics"]] == [d.message for d in res.diagnostics]
    assert [x["summary"] for x in doc["diagnostics"]] == [d.statement for d in res.diagnostics]


def test_text_wraps_details_to_the_width() -> None:
    res = run_check([str(EXAMPLE)], OFF)
    for width in (60, 100):
        text = render("text", res, width=width)
        body = [ln for ln in text.splitlines() if ln.startswith("  ")]
        assert body and all(len(ln) <= width for ln in body)
        head = [ln for ln in text.splitlines() if ln.startswith(str(EXAMPLE))]
        assert len(head) == len(res.diagnostics)


# ------------------------------------------------------------------------------------------ fingerprints


def test_fingerprint_ignores_lines_and_figures_but_not_identity(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    (tmp_path / "a.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        "# a comment that moves every line\n\n" + text.replace("nvidia-l4", "nvidia-l4"), encoding="utf-8"
    )
    a = run_check([str(tmp_path / "a.yaml")], OFF).diagnostics
    b = run_check([str(tmp_path / "b.yaml")], OFF).diagnostics
    assert [d.loc.line + 2 for d in a if d.loc] == [d.loc.line for d in b if d.loc]
    # file-level identity aside (none here: every finding belongs to the workload), the same fingerprints
    assert fingerprints(a) == fingerprints(b)
    renamed = run_check([str(tmp_path / "a.yaml")], OFF).diagnostics
    assert identity(renamed[0]).startswith(f"{renamed[0].rule}|Deployment/serving/chat-8b|vllm|")
    assert len(set(fingerprints(a))) == len(a)


# ---------------------------------------------------------------------------------- SARIF for code scanning


@pytest.mark.skipif(
    not (CORPUS.is_dir() and SCHEMA.is_file()), reason="../shared corpus or SARIF schema absent"
)
def test_corpus_sarif_meets_code_scanning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS.parent)
    res = run_check(["manifests"], OFF)
    doc = to_sarif_dict(res)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    assert [e.message for e in validator.iter_errors(doc)] == []
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert rules and all(len(r["fullDescription"]["text"]) <= FULL_DESCRIPTION_LIMIT for r in rules)
    catalog = load_catalog()
    assert any(len(c.rationale) > FULL_DESCRIPTION_LIMIT for c in catalog.values())  # the cut is exercised
    for r in rules:
        assert catalog[r["id"]].rationale in r["help"]["text"]  # the long text is kept in help
    anchors = set(re.findall(r"^## (KV\d+)$", (ROOT / "docs" / "rules.md").read_text(encoding="utf-8"), re.M))
    for r in rules:
        uri = r["helpUri"]
        assert uri.split("#")[0].endswith("/docs/rules.md") and uri.split("#")[1].upper() in anchors
    results = run["results"]
    assert len(results) > 50
    prints = [x["partialFingerprints"]["kvlint/v1"] for x in results]
    assert all(prints) and len(set(prints)) == len(prints)
    for x in results:
        region = x["locations"][0]["physicalLocation"]["region"]
        assert region["endLine"] >= region["startLine"] and region["endColumn"] > region["startColumn"]
        uri = x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("manifests/") and (CORPUS.parent / uri).is_file()


def test_help_uri_follows_the_actions_own_repository() -> None:
    info = load_catalog()["KV103"]
    base = "https://github.com/acme/kvlint-fork/blob/v1/docs/rules.md"
    assert rule_doc_uri(info, {"KVLINT_RULES_DOC_URL": base}) == base + "#kv103"
    assert rule_doc_uri(info, {}) == info.help_uri


# ------------------------------------------------------------------------------------------- kvlint diff


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_shows_capacity_before_and_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _commit_base(git)
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(65536), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline", "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert [d["rule"] for d in doc["new"] if d["severity"] == "error"] == ["KV103"]
    (row,) = doc["capacity"]
    assert row["before"]["max_model_len"] == 8192 and row["after"]["max_model_len"] == 65536
    assert row["before"]["verdict"] == "fits" and row["after"]["verdict"] == "fails"
    assert row["before"]["verdict_rules"] == [] and row["after"]["verdict_rules"] == ["KV103"]
    text_out = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline"]).stdout
    assert "max-model-len:                 8,192 → 65,536" in text_out
    assert CliRunner().invoke(main, ["diff", "no-such-rev", "--offline"]).exit_code == 2


def _git_repo(root: Path) -> Any:
    def git(*args: str) -> None:
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            cwd=root,
            check=True,
            capture_output=True,
        )

    return git


def _commit_base(git: Any) -> None:
    """``git init`` of the repository ``git`` runs in, and a first commit of everything in it."""
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "base")


def _chat(max_model_len: int, name: str = "chat-8b") -> str:
    text = EXAMPLE.read_text(encoding="utf-8").replace("name: chat-8b", f"name: {name}")
    return text.replace("- --model\n", f"- --max-model-len={max_model_len}\n            - --model\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_reads_an_absolute_path_from_each_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absolute -p path used to name the working tree on both sides: the diff showed no change."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _commit_base(git)
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(65536), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the checks in this process: what each side reads is the test
    absolute = str(tmp_path / "deploy")
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", absolute, "--offline", "--format", "json"])
    relative = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline", "--format", "json"])
    assert r.exit_code == relative.exit_code == 1, r.output
    doc, rel = json.loads(r.stdout), json.loads(relative.stdout)
    assert doc["capacity"] == rel["capacity"] and len(doc["capacity"]) == 1
    row = doc["capacity"][0]
    assert row["before"]["max_model_len"] == 8192 and row["after"]["max_model_len"] == 65536
    assert [d["rule"] for d in doc["new"]] == [d["rule"] for d in rel["new"]] and doc["new"]
    # a path outside the repository is refused, naming it, instead of being read from the disk twice
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside.mkdir()
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", str(outside), "--offline"])
    assert r.exit_code == 2 and "outside the git repository" in r.output and str(outside) in r.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_reads_an_absolute_config_from_each_revision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absolute --config inside the repository named the working tree's file on both sides: a change that
    stops ignoring a rule showed no new finding."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(65536), encoding="utf-8")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "kvlint.yaml").write_text("ignore: [KV103]\n", encoding="utf-8")
    _commit_base(git)
    (tmp_path / "conf" / "kvlint.yaml").write_text("ignore: [KV208]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "deploy")
    checks_in_process(monkeypatch)  # the checks in this process: what each side reads is the test
    docs = []
    for config in (str(tmp_path / "conf" / "kvlint.yaml"), "../conf/kvlint.yaml"):
        r = CliRunner().invoke(main, ["diff", "HEAD", "--config", config, "--offline", "--format", "json"])
        assert r.exit_code == 1, r.output
        docs.append(json.loads(r.stdout))
    absolute, relative = docs
    assert "KV103" in {d["rule"] for d in absolute["new"]}
    assert absolute["new"] == relative["new"] and absolute["fixed"] == relative["fixed"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_holds_an_exported_revision_to_its_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint diff BASE HEAD`` writes each revision under a temporary directory with no ``.git`` (git archive):
    a discovered ``.kvlint.yaml`` of the pull request could name any directory of the runner, and a manifest's
    ``--model /path`` was read, its config quoted; ``kvlint check`` of the working tree refuses both."""
    secret = tmp_path / "runner" / ".docker"
    secret.mkdir(parents=True)
    (secret / "config.json").write_text(json.dumps({"model_type": "SECRET_model_type"}), encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    git = _git_repo(repo)
    (repo / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _commit_base(git)
    (repo / "deploy" / "leak.yaml").write_text(
        _chat(8192, "leak").replace("meta-llama/Llama-3.1-8B-Instruct", str(secret)), encoding="utf-8"
    )
    git("add", ".")
    git("commit", "-q", "-m", "pr")
    monkeypatch.chdir(repo)
    r = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--offline", "--format", "json"])
    assert "meta-llama/Llama-3.1-8B-Instruct" in _chat(8192) and r.exit_code == 0, r.output
    assert "SECRET" not in r.output
    # the workload is linted, its model taken as a path inside the container (KV502: no config read)
    new = json.loads(r.stdout)["new"]
    assert any(d["rule"] == "KV502" and d["file"].endswith("leak.yaml") for d in new), new
    (repo / ".kvlint.yaml").write_text(f"model_paths:\n  /models/x: {secret}\n", encoding="utf-8")
    git("add", ".")
    git("commit", "-q", "-m", "config")
    r = CliRunner().invoke(main, ["diff", "HEAD~1", "HEAD", "--offline"])
    assert r.exit_code == 2 and "is outside the repository" in r.output, r.output


def test_diff_option_files_name_each_revisions_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--config/--helm-values: inside the repository relative to the current directory (each revision's
    copy), outside it absolute (the same file on both sides)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "charts" / "chat").mkdir(parents=True)
    _git_repo(repo)("init", "-q")
    monkeypatch.chdir(repo / "charts")
    assert repository_file(str(repo / "charts" / "chat" / "values.yaml")) == os.path.join(
        "chat", "values.yaml"
    )
    assert repository_file(str(repo / "values.yaml")) == os.path.join("..", "values.yaml")
    assert repository_file("chat/values.yaml") == "chat/values.yaml"
    outside = os.path.realpath(tmp_path / "shared.yaml")
    assert repository_file("../../shared.yaml") == outside
    assert repository_file(str(tmp_path / "shared.yaml")) == outside


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_with_a_directory_only_one_revision_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change that adds a directory: the base lacks the path, so its workloads are new, not an error."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _commit_base(git)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "long.yaml").write_text(_chat(65536, name="chat-long"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the checks in this process: what each side reads is the test
    r = CliRunner().invoke(
        main, ["diff", "HEAD", "-p", "deploy", "-p", "new", "--offline", "--format", "json"]
    )
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert {d["file"] for d in doc["new"]} == {"new/long.yaml"} and "KV103" in {d["rule"] for d in doc["new"]}
    (row,) = doc["capacity"]
    assert row["before"] is None and row["after"]["max_model_len"] == 65536
    # the other way round: the base has the directory, the head deleted it
    git("add", ".")
    git("commit", "-q", "-m", "add new/")
    shutil.rmtree(tmp_path / "new")
    r = CliRunner().invoke(
        main, ["diff", "HEAD", "-p", "deploy", "-p", "new", "--offline", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert not doc["new"] and "KV103" in {d["rule"] for d in doc["fixed"]}
    (row,) = doc["capacity"]
    assert row["after"] is None and row["before"]["max_model_len"] == 65536
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "-p", "nowhere", "--offline"])
    assert r.exit_code == 2 and "nowhere: no such file or directory" in r.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_leaves_out_of_the_working_tree_what_git_ignores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base is read from git archive, tracked files only; the working tree used to be linted whole, so a
    git-ignored directory (the build/ that the README's `pip install .` writes) came out as new findings."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    (tmp_path / ".gitignore").write_text("/build/\n*.gen.yaml\n", encoding="utf-8")
    _commit_base(git)
    for ignored in ("build/lib/chat.yaml", "deploy/long.gen.yaml"):
        (tmp_path / ignored).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / ignored).write_text(_chat(65536, name="chat-long"), encoding="utf-8")
    # an untracked file git does not ignore is part of the change, and a tracked directory that shares an ignored
    # directory's name elsewhere is not left out with it
    (tmp_path / "deploy" / "build").mkdir()
    (tmp_path / "deploy" / "build" / "new.yaml").write_text(_chat(65536, name="chat-new"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the checks in this process: what each side reads is the test
    r = CliRunner().invoke(main, ["diff", "HEAD", "--offline", "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    assert {d["file"] for d in doc["new"]} == {"deploy/build/new.yaml"}
    assert [row["workload"] for row in doc["capacity"] if row["before"] is None] == [
        "Deployment/serving/chat-new [vllm]"
    ]
    # kvlint check itself still reads whatever it is pointed at
    assert "build/lib/chat.yaml" in _check("build/", "--offline", "--format", "json")[1]


def _reports(tmp_path: Path, revisions: list[dict[str, str]]) -> list[dict[str, Any]]:
    """kvlint's JSON report on each revision (file name -> text), linted from its own directory."""
    from kvlint.report.jsonout import to_json_dict

    out = []
    for n, files in enumerate(revisions):
        root = tmp_path / f"rev{n}"
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text, encoding="utf-8")
        cwd = os.getcwd()
        os.chdir(root)
        try:
            out.append(to_json_dict(run_check(sorted(files), OFF)))
        finally:
            os.chdir(cwd)
    return out


def test_capacity_diff_says_when_the_engine_release_or_kv_dtype_changed(tmp_path: Path) -> None:
    """A change of image tag and --kv-cache-dtype moves the KV tokens; the row says which release and dtype
    each side was planned with (from each side's own plan)."""
    from kvlint.prdiff import capacity_diff, render_capacity_text

    base = _chat(32768)
    head = base.replace("vllm-openai:v0.11.0", "vllm-openai:v0.12.0").replace(
        "- --max-model-len=32768\n", "- --max-model-len=32768\n            - --kv-cache-dtype=fp8\n"
    )
    assert head.count("v0.12.0") == 1 and "fp8" in head
    reports = _reports(tmp_path, [{"chat.yaml": base}, {"chat.yaml": head}])
    plans = [r["workloads"][0]["plan"] for r in reports]
    (row,) = capacity_diff(*reports)
    assert row.before is not None and row.after is not None
    for fig, plan in ((row.before, plans[0]), (row.after, plans[1])):
        assert fig["engine"] == f"vllm {plan['engine_version']}, KV cache {plan['kv']['kv_cache_dtype']}"
    assert row.before["engine"] != row.after["engine"] and "fp8" in row.after["engine"]
    assert "engine:" in render_capacity_text([row])


def test_capacity_diff_shows_a_change_of_replicas(tmp_path: Path) -> None:
    """Scaling a Deployment changes the replica's capacity nowhere but in how many replicas serve: the JSON
    report carries spec.replicas, and the diff shows it (before, a scale-up was a touched row with no change)."""
    from kvlint.prdiff import capacity_diff

    base = _chat(8192)
    assert base.count("replicas: 1\n") == 1
    head = base.replace("replicas: 1\n", "replicas: 3\n")
    reports = _reports(tmp_path, [{"chat.yaml": base}, {"chat.yaml": head}])
    assert [r["workloads"][0]["replicas"] for r in reports] == [1, 3]
    (row,) = capacity_diff(*reports)
    assert row.before is not None and row.after is not None
    assert (row.before["replicas"], row.after["replicas"]) == ("1", "3")
    assert {k for k in row.after if row.after[k] != row.before[k]} == {"replicas"}
    # a manifest that declares no replica count says so, not a made-up 1
    bare = _reports(tmp_path / "bare", [{"chat.yaml": base.replace("  replicas: 1\n", "")}])[0]
    assert bare["workloads"][0]["replicas"] is None
    assert capacity_diff({"workloads": [], "diagnostics": []}, bare)[0].after["replicas"] == "-"  # type: ignore[index]


def test_capacity_diff_keeps_the_same_workload_in_two_files_apart(tmp_path: Path) -> None:
    """One Deployment per cluster directory (same kind, namespace and name): a change in the first file
    used to be hidden by the unchanged second one."""
    from kvlint.prdiff import capacity_diff

    base = {"eu/chat.yaml": _chat(8192), "us/chat.yaml": _chat(8192)}
    head = {"eu/chat.yaml": _chat(65536), "us/chat.yaml": _chat(8192)}
    reports = _reports(tmp_path, [base, head])
    assert [w["name"] for w in reports[1]["workloads"]] == ["chat-8b", "chat-8b"]
    (row,) = capacity_diff(*reports)
    assert row.file == "eu/chat.yaml" and row.before is not None and row.after is not None
    assert (row.before["max_model_len"], row.after["max_model_len"]) == ("8,192", "65,536")
    rows = capacity_diff(*reports, changed_files=["us/chat.yaml"])
    assert sorted(r.file for r in rows) == ["eu/chat.yaml", "us/chat.yaml"]
    us = next(r for r in rows if r.file == "us/chat.yaml")
    assert us.changed() is False and us.after is not None and us.after["verdict"] == "fits"


# ------------------------------------------------------------------------------ sources behind a finding


def test_values_refs_follow_with_and_range_blocks() -> None:
    lines = (
        (ROOT / "fixtures" / "helm" / "chat-chart" / "templates" / "deployment.yaml").read_text().split("\n")
    )
    line = 1 + next(i for i, t in enumerate(lines) if "--max-model-len={{ . }}" in t)
    assert values_refs(lines, line) == [("maxModelLen",)]
    acc = 1 + next(i for i, t in enumerate(lines) if ".Values.accelerator" in t)
    assert values_refs(lines, acc) == [("accelerator",)]


def test_helm_sources_point_at_the_values_line(tmp_path: Path) -> None:
    from kvlint.source import Loc

    chart = tmp_path / "chart"
    shutil.copytree(ROOT / "fixtures" / "helm" / "chat-chart", chart)
    tpl = (chart / "templates" / "deployment.yaml").read_text().split("\n")
    line = 1 + next(i for i, t in enumerate(tpl) if ".Values.accelerator" in t)
    values = (chart / "values.yaml").read_text().split("\n")
    want = 1 + next(i for i, t in enumerate(values) if t.startswith("accelerator:"))
    found = helm_sources(Loc(str(chart / "templates" / "deployment.yaml"), line, 1))
    assert {(loc.file, loc.line) for loc in found} == {(str(chart / "values.yaml"), want)}
    prod = tmp_path / "prod.yaml"
    prod.write_text("# prod\naccelerator: nvidia-h100-80gb\n", encoding="utf-8")
    found = helm_sources(Loc(str(chart / "templates" / "deployment.yaml"), line, 1), [str(prod)])
    assert (str(prod), 2) in {(loc.file, loc.line) for loc in found}


@pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None, reason="no kustomize"
)
def test_json6902_overlay_patch_is_a_source(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a repository: the overlay's ../base is inside it
    base = tmp_path / "base"
    shutil.copytree(ROOT / "fixtures" / "kustomize" / "base", base)
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n  - ../base\npatches:\n  - target: {kind: Deployment, name: chat-8b}\n    path: mml.yaml\n",
        encoding="utf-8",
    )
    (overlay / "mml.yaml").write_text(
        "- op: add\n  path: /spec/template/spec/containers/0/args/-\n  value: --max-model-len=65536\n",
        encoding="utf-8",
    )
    (patch,) = json6902_patches(str(overlay))
    assert patch[:2] == ("Deployment", "chat-8b") and [loc.line for loc in patch[2]] == [1]
    res = run_check([str(overlay)], OFF)
    from kvlint.origins import attach_sources

    attach_sources(res, [str(overlay)], OFF)
    sources = {(s.file, s.line) for d in res.diagnostics for s in d.sources}
    assert (str(overlay / "mml.yaml"), 1) in sources


# ------------------------------------------------------------------------------------------- the name


def test_every_install_line_uses_the_distribution_name() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^name = "(.*)"$', pyproject, re.M).group(1) == DISTRIBUTION == "kvlint-k8s"  # type: ignore[union-attr]
    assert 'kvlint = "kvlint.cli:main"' in pyproject  # the command keeps its name
    files = ["README.md", "docs/ci.md", "docs/webhook.md", "Dockerfile", "action.yml", "CHANGELOG.md"]
    installs = []
    for f in files:
        for line in (ROOT / f).read_text(encoding="utf-8").splitlines():
            for m in re.finditer(r"pip install ([^\s;&|)`]+(?: [^\s;&|)`]+)*)", line):
                installs.append((f, m.group(1)))
    assert installs
    for f, words in installs:
        targets = [w.strip("'\"") for w in words.split() if not w.startswith("-")]
        for t in targets:
            assert not re.match(r"^kvlint(\[|==|$)", t), (f, words)  # never the unrelated PyPI project
    assert any("kvlint-k8s" in w for _, w in installs)
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    install = next(s for s in action["runs"]["steps"] if s.get("name") == "Install kvlint")["run"]
    assert '"kvlint-k8s==$KVLINT_VERSION"' in install and '"$GITHUB_ACTION_PATH"' in install


# ------------------------------------------------------------------------------------------- pre-commit


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_pre_commit_hooks_as_pre_commit_runs_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each hook's entry + args (+ the staged files pre-commit selects by types_or and exclude)."""
    hooks = {
        h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    }
    shutil.copytree(ROOT / "fixtures" / "helm" / "chat-chart", tmp_path / "charts" / "chat")
    (tmp_path / "deploy").mkdir()
    manifest = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    (tmp_path / "deploy" / "chat.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    # a kustomization with a base manifest that leaves the GPUs to its overlays (in the files hook's part only)
    (tmp_path / "kust").mkdir()
    (tmp_path / "kust" / "kustomization.yaml").write_text("resources:\n- deployment.yaml\n", encoding="utf-8")
    (tmp_path / "kust" / "deployment.yaml").write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    staged = [
        "charts/chat/templates/deployment.yaml",
        "charts/chat/values.yaml",
        "deploy/chat.json",
        "kust/deployment.yaml",
        "kust/kustomization.yaml",
    ]

    files_hook = hooks["kvlint"]
    selected = [f for f in staged if not re.search(files_hook["exclude"], f)]
    assert selected == staged[1:]
    argv = files_hook["entry"].split()[1:] + files_hook.get("args", []) + selected
    r = CliRunner().invoke(main, argv)
    found = {
        (d["file"], d["rule"])
        for d in json.loads(CliRunner().invoke(main, [*argv, "--format", "json"]).stdout)["diagnostics"]
    }
    assert r.exit_code == 1 and ("deploy/chat.json", "KV103") in found  # the JSON manifest is linted
    # the files of a chart or a kustomization are the kvlint-dirs hook's, which renders them: not warned about
    # one by one as files that are not manifests (KV002, ux50), nor a base linted without its overlays
    assert {f for f, _ in found} == {"deploy/chat.json"}, found
    # staged files that are all a chart's or a kustomization's: nothing failed, and the files left out are named
    # on stderr with the command that lints them (without the kvlint-dirs hook nothing else would check them)
    r = CliRunner().invoke(
        main, files_hook["entry"].split()[1:] + ["charts/chat/values.yaml", "kust/kustomization.yaml"]
    )
    assert r.exit_code == 0 and r.stdout == "", r.output
    said = r.stderr.splitlines()
    assert len(said) == 2, said
    assert "charts/chat/values.yaml (it belongs to the Helm chart in charts/chat)" in said[0]
    assert said[0].endswith("kvlint check charts/chat (the kvlint-dirs pre-commit hook)")
    assert "kust/kustomization.yaml (it belongs to the kustomization in kust)" in said[1]
    assert "kvlint check kust " in said[1]
    shutil.rmtree(tmp_path / "kust")

    dirs_hook = hooks["kvlint-dirs"]
    assert dirs_hook["pass_filenames"] is False
    argv = dirs_hook["entry"].split()[1:] + ["charts/chat", "deploy"]  # the args a chart repository gives
    doc = json.loads(CliRunner().invoke(main, [*argv, "--format", "json"]).stdout)
    files = {d["file"] for d in doc["diagnostics"]}
    assert "charts/chat/templates/deployment.yaml" in files and "deploy/chat.json" in files
    assert not any(d["rule"] == "KV002" for d in doc["diagnostics"])
    # the default args walk the repository: the chart met in it is rendered (its findings on the rendered
    # Deployment, at the template's lines), no raw template is read
    default = dirs_hook["entry"].split()[1:] + dirs_hook["args"]
    doc = json.loads(CliRunner().invoke(main, [*default, "--format", "json"]).stdout)
    on_templates = [d for d in doc["diagnostics"] if "templates/" in (d["file"] or "")]
    assert on_templates and all(d["object"].startswith("Deployment/chat-chat") for d in on_templates)
    assert not any(d["rule"] == "KV002" and d["severity"] != "info" for d in doc["diagnostics"])


# ---------------------------------------------------------------------------------------------- release


def test_release_workflow_builds_publishes_and_tags_the_action() -> None:
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    on = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads the key `on` as True
    assert on["push"]["tags"]
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "python -m build --sdist --wheel" in runs
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish") for s in steps)
    assert wf["jobs"]["publish"]["permissions"]["id-token"] == "write"
    assert wf["env"]["ACTION_MAJOR"] == "v1" and 'git push --force origin "refs/tags/$ACTION_MAJOR"' in runs
    # the version check passes for this version and refuses another
    from kvlint import __version__

    script = ROOT / ".github" / "scripts" / "check-release-version.sh"
    ok = subprocess.run(["bash", str(script), f"v{__version__}"], capture_output=True, text=True, check=False)
    bad = subprocess.run(["bash", str(script), "v99.0.0"], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and bad.returncode == 1 and "99.0.0" in bad.stderr
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_json_holds_no_legacy_workflow_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest value holding "##[error]" (here a flag a pull request adds) reached `kvlint diff --format json`'s
    output as written, a legacy workflow command the Actions runner honours anywhere in a line; check's JSON report
    writes it "#\\u0023[", the same string to a JSON reader (kvlint.report.escape.inert_json)."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _commit_base(git)
    flagged = _chat(8192).replace("- --model\n", "- --x-##[error]y\n            - --model\n")
    (tmp_path / "deploy" / "chat.yaml").write_text(flagged, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the checks in this process: what each side reads is the test
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline", "--format", "json"])
    assert "##[" not in r.stdout, r.stdout
    doc = json.loads(r.stdout)
    assert any("--x-##[error]y" in d["message"] for d in doc["new"])


def test_diff_and_action_word_a_finding_as_check_does() -> None:
    """`kvlint diff` and the Action's log list each finding on one line; worded from the message's first clause,
    a finding whose rule gives an explicit short statement read differently there than in `kvlint check` (KV105:
    "one max-model-len request (32,768 tokens, 4.00 GiB of KV per GPU) does not fit the predicted KV cache" in
    the diff, "one max-model-len request needs 4.00 GiB of KV per GPU against a predicted 3.46 GiB ..." in check,
    ux50). Both now take the report's ``summary``; a finding without an explicit one is unchanged."""
    from kvlint.action import _diagnostic
    from kvlint.prdiff import _finding_line
    from kvlint.report.text import format_diagnostic
    from kvlint.source import Loc
    from kvlint.types import Diagnostic

    explicit = Diagnostic(
        rule="KV105",
        severity="warning",
        message="one max-model-len request (32,768 tokens, 4.00 GiB of KV per GPU) does not fit the predicted KV "
        "cache (3.46 GiB); only the upper end of kvlint's prediction band holds it",
        loc=Loc("deploy/a.yaml", 55, 11),
        object="Deployment/x",
        container="c",
        summary="one max-model-len request needs 4.00 GiB of KV per GPU against a predicted 3.46 GiB",
    )
    plain = Diagnostic(
        rule="KV202",
        severity="warning",
        message="no --max-model-len: vLLM uses the model's full context (131072 tokens), which sizes admission",
        loc=Loc("deploy/a.yaml", 22, 11),
        object="Deployment/x",
        container="c",
    )
    for d in (explicit, plain):
        line = format_diagnostic(d, color=False).split("\n", 1)[0]
        assert _finding_line(d.as_dict()) == line
        back = _diagnostic(d.as_dict())
        assert format_diagnostic(back, color=False).split("\n", 1)[0] == line
        assert back.details == d.details  # (the plain one's first clause is not repeated as a detail)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_kvlint_diff_fails_on_what_the_configuration_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --fail-on, `kvlint diff` fails on a new finding at or above its file's `.kvlint.yaml` `fail_on`,
    as `kvlint check` and the Action do (ux50: it failed on errors only, whatever the configuration said);
    --fail-on still replaces it."""
    git = _git_repo(tmp_path)
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / ".kvlint.yaml").write_text("fail_on: warning\n", encoding="utf-8")
    _commit_base(git)
    shutil.copy(ROOT / "fixtures" / "config" / "suppress" / "noreason.yaml", tmp_path / "deploy")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline", "--format", "json"])
    doc = json.loads(r.stdout)
    assert {d["severity"] for d in doc["new"]} == {"warning", "info"}, doc["new"]
    assert [d["fails"] for d in doc["new"] if d["severity"] == "warning"] == [True]
    assert r.exit_code == 1, r.output
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline", "--fail-on", "error"])
    assert r.exit_code == 0, r.output
    (tmp_path / "deploy" / ".kvlint.yaml").write_text("fail_on: error\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["diff", "HEAD", "-p", "deploy", "--offline"])
    assert r.exit_code == 0, r.output


def test_a_rule_is_found_by_the_name_reports_show(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The GitHub annotation's title and SARIF name a rule by its name (``KV202 max-model-len-unset``): `kvlint
    explain` takes the name (and the bare number) as it takes the id, and --select/--ignore and `.kvlint.yaml`, which
    take ids and prefixes as ruff's --select takes codes, say which id a name is instead of only that it is not one
    (ux50)."""
    catalog = load_catalog()
    by_id = CliRunner().invoke(main, ["explain", "KV202"])
    assert by_id.exit_code == 0
    name = catalog["KV202"].name
    for word in (name, name.upper().replace("-", "_"), "202"):
        r = CliRunner().invoke(main, ["explain", word])
        assert r.exit_code == 0 and r.output == by_id.output, word
    assert CliRunner().invoke(main, ["explain", "no-such-rule"]).exit_code == 2
    r = CliRunner().invoke(main, ["check", "--offline", "--select", name, str(EXAMPLE)])
    assert r.exit_code == 2 and f"'{name}' is not a rule id or prefix" in r.output
    assert "it is the name of KV202: write KV202" in r.output
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".kvlint.yaml").write_text(f"ignore: [{catalog['KV105'].name}]\n", encoding="utf-8")
    shutil.copy(EXAMPLE, tmp_path / "d.yaml")
    r = CliRunner().invoke(main, ["check", "--offline", "d.yaml"])
    assert r.exit_code == 2 and "it is the name of KV105: write KV105" in r.output, r.output


def test_check_without_a_path_says_what_to_type() -> None:
    """``kvlint check`` alone was click's "Missing argument 'PATHS...'"; it names the two things to type (ux50)."""
    r = CliRunner().invoke(main, ["check"], input="")
    assert r.exit_code == 2
    assert "no path given" in r.output and "kvlint check ." in r.output and "kvlint check -" in r.output, (
        r.output
    )
    assert "Usage: main check [OPTIONS] PATHS..." in r.output or "check [OPTIONS] PATHS..." in r.output
