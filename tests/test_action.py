"""The GitHub Action (action.yml + kvlint/action.py) run locally with the runner's environment variables."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest
import yaml

from kvlint.action import ENV_INPUTS, parse_unified_diff, run_action
from kvlint.pipeline import Options, run_check
from kvlint.report import render
from kvlint.report.markdown import finding_row

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "fixtures", "examples")


def _env(tmp: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for k in ENV_INPUTS + ("GITHUB_BASE_REF",):
        env.pop(k, None)
    env.update(
        GITHUB_STEP_SUMMARY=os.path.join(tmp, "summary.md"),
        GITHUB_OUTPUT=os.path.join(tmp, "output.txt"),
        RUNNER_TEMP=tmp,
        KVLINT_OFFLINE="true",
        KVLINT_SARIF=os.path.join(tmp, "kvlint.sarif"),
    )
    env.update(extra)
    return env


def _outputs(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as fh:
        return dict(line.rstrip("\n").split("=", 1) for line in fh if "=" in line)


def _annotations(text: str) -> list[tuple[str, str, int]]:
    """(command, file, line) of each annotation with a file."""
    return [
        (m.group(1), m.group(2), int(m.group(3)))
        for m in re.finditer(r"^::(error|warning|notice) file=([^,]+),line=(\d+),", text, re.M)
    ]


def test_action_writes_summary_outputs_sarif_and_annotations(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp = str(tmp_path)
    out = io.StringIO()
    code = run_action(_env(tmp, KVLINT_PATHS="fixtures/examples", KVLINT_ANNOTATE="all"), cwd=ROOT, out=out)
    monkeypatch.chdir(ROOT)
    expected = run_check(["fixtures/examples"], Options(allow_hub=False))
    counts = expected.counts()
    assert code == (1 if counts["error"] else 0)
    outputs = _outputs(os.path.join(tmp, "output.txt"))
    assert outputs["errors"] == str(counts["error"]) and int(outputs["errors"]) > 0
    assert outputs["warnings"] == str(counts["warning"])
    assert outputs["findings"] == str(len(expected.diagnostics))
    assert outputs["annotated"] == outputs["findings"]
    assert outputs["sarif"] == os.path.join(tmp, "kvlint.sarif") and outputs["exit-code"] == str(code)
    # one annotation per diagnostic, at its file and line, with the right command
    cmd = {"error": "error", "warning": "warning", "info": "notice"}
    assert sorted(_annotations(out.getvalue())) == sorted(
        (cmd[d.severity], d.loc.file, d.loc.line) for d in expected.diagnostics if d.loc
    )
    # the step summary: the reason for the exit status, every finding as kvlint's Markdown table row
    # (short statement, arithmetic folded), then kvlint's per-workload memory sections
    with open(os.path.join(tmp, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    assert summary.startswith("## kvlint\n\n❌ kvlint fails this step: 3 findings at or above fail-on=error")
    for d in expected.diagnostics:
        assert finding_row(d) in summary
    full = render("markdown", expected)
    assert summary.endswith(full[full.index("## Workloads") :])
    # the log holds the text report, folded in a group, and the reason
    log = out.getvalue()
    group = log[log.index("::group::kvlint report") : log.index("::endgroup::")]
    assert render("text", expected).rstrip("\n") in group
    assert "kvlint fails this step: 3 findings at or above fail-on=error" in log[log.index("::endgroup::") :]
    with open(outputs["sarif"], encoding="utf-8") as fh:
        sarif = json.load(fh)
    assert len(sarif["runs"][0]["results"]) == len(expected.diagnostics)


def _git(cwd: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_annotations_limited_to_changed_lines(tmp_path: pytest.TempPathFactory) -> None:
    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "deploy"))
    for name in ("chat-8b-l4.yaml", "qwen-7b-tp2.yaml"):
        shutil.copy(os.path.join(EXAMPLES, name), os.path.join(repo, "deploy", name))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    # the change: a comment on the args: line of chat-8b-l4.yaml (the line its findings point at)
    path = os.path.join(repo, "deploy", "chat-8b-l4.yaml")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "args:")
    lines[i] += "  # reviewed"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    _git(repo, "commit", "-q", "-am", "change")

    out = io.StringIO()
    code = run_action(_env(tmp, KVLINT_PATHS="deploy", KVLINT_BASE_REF=base), cwd=repo, out=out)
    annotated = _annotations(out.getvalue())
    assert annotated and {(f, ln) for _, f, ln in annotated} == {("deploy/chat-8b-l4.yaml", i + 1)}
    outputs = _outputs(os.path.join(tmp, "output.txt"))
    assert int(outputs["findings"]) > len(annotated)  # qwen-7b-tp2.yaml's findings: summary only
    # the base had every finding: all pre-existing, marked so on the changed line, and the step passes
    assert outputs["new"] == "0" and outputs["pre-existing"] == outputs["findings"]
    marked = [ln for ln in out.getvalue().splitlines() if _annotations(ln)]
    assert marked and all("::pre-existing (also on the base)" in ln for ln in marked)
    assert outputs["annotated"] == str(len(annotated)) and code == 0

    # an unknown base ref: a notice, then every finding is annotated
    out2 = io.StringIO()
    run_action(_env(tmp, KVLINT_PATHS="deploy", KVLINT_BASE_REF="no-such-ref"), cwd=repo, out=out2)
    assert "::notice title=kvlint::cannot diff against no-such-ref" in out2.getvalue()
    assert len(_annotations(out2.getvalue())) == int(outputs["findings"])


def test_usage_error_is_an_error_annotation_and_exit_2(tmp_path: pytest.TempPathFactory) -> None:
    tmp = str(tmp_path)
    out = io.StringIO()
    code = run_action(_env(tmp, KVLINT_PATHS="no/such/dir"), cwd=ROOT, out=out)
    assert code == 2
    assert re.search(r"^::error title=kvlint::.*no/such/dir", out.getvalue(), re.M)
    assert _outputs(os.path.join(tmp, "output.txt"))["exit-code"] == "2"


def test_fail_on_never_exits_zero_with_findings(tmp_path: pytest.TempPathFactory) -> None:
    tmp = str(tmp_path)
    code = run_action(
        _env(
            tmp,
            KVLINT_PATHS="fixtures/examples",
            KVLINT_FAIL_ON="never",
            KVLINT_ANNOTATE="none",
            KVLINT_SARIF="",
        ),
        cwd=ROOT,
        out=io.StringIO(),
    )
    outputs = _outputs(os.path.join(tmp, "output.txt"))
    assert code == 0 and int(outputs["errors"]) > 0
    assert outputs["annotated"] == "0" and outputs["sarif"] == ""


def test_fail_on_unset_leaves_the_config_fail_on_in_charge(tmp_path: pytest.TempPathFactory) -> None:
    """docs/ci.md: the `fail-on` input has no default (action.yml), and unset, the nearest `.kvlint.yaml`'s
    `fail_on` decides, as `kvlint check` without --fail-on does: `fail_on: warning` fails the step on a warning.
    Set, the input replaces it (ux50: the input's default `error` replaced every configuration's)."""
    tmp = str(tmp_path)
    with open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8") as fh:
        row = next(line for line in fh if line.startswith("| `fail-on` |"))
    assert "Unset, each file's `.kvlint.yaml` decides" in row
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        default = yaml.safe_load(fh)["inputs"]["fail-on"]["default"]
    assert default == ""
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    shutil.copy(os.path.join(ROOT, "fixtures", "config", "suppress", "noreason.yaml"), repo)
    with open(os.path.join(repo, ".kvlint.yaml"), "w", encoding="utf-8") as fh:
        fh.write("fail_on: warning\n")
    found = run_check([os.path.join(repo, "noreason.yaml")], Options(allow_hub=False)).diagnostics
    assert {d.severity for d in found} == {"warning", "info"}
    codes, logs = {}, {}
    for fail_on in (default, "error", "warning"):
        out = io.StringIO()
        codes[fail_on] = run_action(
            _env(tmp, KVLINT_PATHS=".", KVLINT_FAIL_ON=fail_on, KVLINT_ANNOTATE="none", KVLINT_SARIF=""),
            cwd=repo,
            out=out,
        )
        logs[fail_on] = out.getvalue()
    assert codes == {default: 1, "error": 0, "warning": 1}
    assert "at or above fail_on=warning of .kvlint.yaml" in logs[default], logs[default][-600:]
    assert "kvlint passes: no finding at or above fail-on=error" in logs["error"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_new_findings_fail_on_their_own_files_config(tmp_path: pytest.TempPathFactory) -> None:
    """On a pull request (new findings only), the threshold of each new finding is its own file's `.kvlint.yaml`
    `fail_on` when the input is unset: a new warning under `strict/` (fail_on: warning) fails the step, the same
    warning under `lax/` (no configuration: error) does not. The JSON report's `fails` carries that choice."""
    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    for d in ("strict", "lax"):
        os.makedirs(os.path.join(repo, d))
    with open(os.path.join(repo, "strict", ".kvlint.yaml"), "w", encoding="utf-8") as fh:
        fh.write("fail_on: warning\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    _git(repo, "branch", "base")
    codes, logs = {}, {}
    for d in ("lax", "strict"):
        _git(repo, "checkout", "-q", "-B", f"pr-{d}", "base")
        shutil.copy(
            os.path.join(ROOT, "fixtures", "config", "suppress", "noreason.yaml"), os.path.join(repo, d)
        )
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", "pr")
        out = io.StringIO()
        codes[d] = run_action(
            _env(tmp, KVLINT_PATHS=".", KVLINT_BASE_REF="base", KVLINT_ANNOTATE="none", KVLINT_SARIF=""),
            cwd=repo,
            out=out,
        )
        logs[d] = out.getvalue()
        assert _outputs(os.path.join(tmp, "output.txt"))["new"] != "0"
    assert codes == {"lax": 0, "strict": 1}, logs
    assert "new finding" in logs["strict"] and "strict/.kvlint.yaml" in logs["strict"]


def test_parse_unified_diff() -> None:
    diff = (
        "diff --git a/x.yaml b/x.yaml\n--- a/x.yaml\n+++ b/x.yaml\n@@ -3 +3 @@\n-a\n+b\n"
        "@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,2 +22,0 @@\n-e\n-f\n"
        "diff --git a/gone.yaml b/gone.yaml\n--- a/gone.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    assert parse_unified_diff(diff) == {"x.yaml": {3, 11, 12}}


def test_action_yml_wires_every_input_to_the_script() -> None:
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        action = yaml.safe_load(fh)
    assert action["runs"]["using"] == "composite"
    text = json.dumps(action)
    used = set(re.findall(r"inputs\.([a-z-]+)", text))
    assert used == set(action["inputs"]), "every input is used and every used input is declared"
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "kvlint")
    assert run_step["run"].strip() == "python -m kvlint.action"
    assert set(run_step["env"]) <= set(ENV_INPUTS)
    outputs = {k: v["value"] for k, v in action["outputs"].items()}
    for name, value in outputs.items():
        assert value == "${{ steps.kvlint.outputs." + name + " }}"
    for name in ("paths", "config", "formats", "fail-on", "version", "python-version", "offline", "sarif"):
        assert name in action["inputs"]


def test_pre_commit_hook_and_workflow() -> None:
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as fh:
        files_hook, dirs_hook = yaml.safe_load(fh)
    assert files_hook["id"] == "kvlint" and files_hook["entry"] == "kvlint check --offline --skip-rendered"
    assert files_hook["types_or"] == ["yaml", "json"] and re.search(
        files_hook["exclude"], "chart/templates/d.yaml"
    )
    assert dirs_hook["id"] == "kvlint-dirs" and dirs_hook["pass_filenames"] is False
    assert dirs_hook["entry"].startswith("kvlint check --offline") and dirs_hook["types_or"] == [
        "yaml",
        "json",
    ]
    with open(os.path.join(ROOT, ".github", "workflows", "ci.yml"), encoding="utf-8") as fh:
        ci = yaml.safe_load(fh)
    jobs = ci["jobs"]
    assert {"3.10", "3.13"} <= set(jobs["test"]["strategy"]["matrix"]["python"])
    assert jobs["bench"]["continue-on-error"] is True
    assert any(s.get("uses") == "./" for s in jobs["dogfood"]["steps"])


# ---- every input validated up front: one-line ::error::, exit 2, never a traceback ----------------------------


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"KVLINT_ARGS": '--select "KV1'}, "KVLINT_ARGS: cannot split"),
        ({"KVLINT_COMMAND": "python -m 'kvlint"}, "KVLINT_COMMAND: cannot split"),
        ({"GITHUB_OUTPUT": "/nonexistent-dir/out"}, "GITHUB_OUTPUT: directory /nonexistent-dir"),
        ({"GITHUB_STEP_SUMMARY": "/nonexistent-dir/s.md"}, "GITHUB_STEP_SUMMARY: directory /nonexistent-dir"),
        ({"KVLINT_SARIF": "/nonexistent-dir/k.sarif"}, "KVLINT_SARIF: directory /nonexistent-dir"),
        (
            {"KVLINT_FAIL_ON": "bogus"},
            "KVLINT_FAIL_ON: 'bogus' is not one of error, warning, info, never, none",
        ),
        ({"KVLINT_ANNOTATE": "sometimes"}, "KVLINT_ANNOTATE: 'sometimes' is not one of changed, all, none"),
        ({"KVLINT_OFFLINE": "maybe"}, "KVLINT_OFFLINE: 'maybe' is not a boolean"),
        (
            {"KVLINT_PATHS": "/tmp/does-not-exist-kvlint"},
            "KVLINT_PATHS: /tmp/does-not-exist-kvlint: no such file",
        ),
        ({"KVLINT_CONFIG": "nope.yaml"}, "KVLINT_CONFIG: nope.yaml: no such file"),
        ({"KVLINT_FORMATS": "xml=out.xml"}, "KVLINT_FORMATS: 'xml=out.xml': unknown format 'xml'"),
        ({"RUNNER_TEMP": "/nonexistent-dir"}, "RUNNER_TEMP: /nonexistent-dir is not a directory"),
    ],
)
def test_bad_input_is_one_error_line_and_exit_2(
    tmp_path: pytest.TempPathFactory, extra: dict[str, str], words: str
) -> None:
    tmp = str(tmp_path)
    out = io.StringIO()
    env = _env(tmp, **{"KVLINT_PATHS": "fixtures/examples/chat-8b-l4.yaml", **extra})
    code = run_action(env, cwd=ROOT, out=out)
    assert code == 2
    errors = [ln for ln in out.getvalue().splitlines() if ln.startswith("::error")]
    assert len(errors) == 1 and words in errors[0], out.getvalue()
    assert not re.search(r"^kvlint: ", out.getvalue(), re.M)  # kvlint was never started
    if "GITHUB_OUTPUT" not in extra:
        assert _outputs(os.path.join(tmp, "output.txt"))["exit-code"] == "2"


def test_module_entry_point_bad_quoting_and_output_dir_no_traceback(tmp_path: pytest.TempPathFactory) -> None:
    import sys

    env = _env(str(tmp_path), KVLINT_ARGS='--select "KV1', GITHUB_OUTPUT="/nonexistent-dir/out")
    proc = subprocess.run(
        [sys.executable, "-m", "kvlint.action"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    errors = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error title=kvlint::")]
    assert len(errors) == 2 and "KVLINT_ARGS" in errors[0] and "GITHUB_OUTPUT" in errors[1]


def test_kvlint_usage_error_shows_its_stderr(tmp_path: pytest.TempPathFactory) -> None:
    tmp = str(tmp_path)
    out = io.StringIO()
    env = _env(tmp, KVLINT_PATHS="fixtures/examples/chat-8b-l4.yaml", KVLINT_ARGS="--no-such-flag")
    code = run_action(env, cwd=ROOT, out=out)
    text = out.getvalue()
    assert code == 2
    assert re.search(r"^Usage: .*check", text, re.M)  # kvlint's own stderr, unescaped
    errors = [ln for ln in text.splitlines() if ln.startswith("::error")]
    assert len(errors) == 1 and "No such option" in errors[0] and "%0A" not in errors[0]


@pytest.mark.parametrize("base", [None, "no-such-branch"])
def test_pull_request_without_usable_base_ref_says_so(
    tmp_path: pytest.TempPathFactory, base: str | None
) -> None:
    tmp = str(tmp_path)
    out = io.StringIO()
    extra = {"GITHUB_EVENT_NAME": "pull_request", "KVLINT_SARIF": ""}
    if base:
        extra["GITHUB_BASE_REF"] = base
    env = _env(tmp, KVLINT_PATHS="fixtures/examples/chat-8b-l4.yaml", **extra)
    run_action(env, cwd=ROOT, out=out)
    notices = [ln for ln in out.getvalue().splitlines() if ln.startswith("::notice title=kvlint::")]
    assert len(notices) == 1 and "annotating every finding" in notices[0]
    assert ("without a base ref" in notices[0]) if base is None else (f"origin/{base}" in notices[0])
    findings = int(_outputs(os.path.join(tmp, "output.txt"))["findings"])
    assert findings > 0 and len(_annotations(out.getvalue())) == findings


# ---- what kvlint quotes in the log cannot become a workflow command --------------------------------------


def _runner_commands(log: str) -> list[str]:
    """The workflow commands the Actions runner acts on in ``log``, as actions/runner reads them: a line
    that starts with ``::`` once leading whitespace is removed, except between ``::stop-commands::TOKEN``
    and ``::TOKEN::`` (GitHub Docs, "Stopping and starting workflow commands")."""
    commands: list[str] = []
    stopped: str | None = None
    for line in log.splitlines():
        s = line.lstrip()
        if stopped is not None:
            if s == f"::{stopped}::":
                stopped = None
        elif s.startswith("::stop-commands::"):
            stopped = s[len("::stop-commands::") :]
        elif s.startswith("::"):
            commands.append(s)
    assert stopped is None, "every ::stop-commands:: block is closed"
    return commands


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_file_names_and_values_in_the_log_never_act_as_workflow_commands(
    tmp_path: pytest.TempPathFactory,
) -> None:
    # a pull request adds a manifest whose name is a workflow command, and a changed-files step passes the
    # names the pull request touched as `paths`: the text report's lines start with that name
    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    _git(repo, "init", "-q")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    _git(repo, "branch", "base")
    hostile = "::warning::injected.yaml"
    shutil.copy(os.path.join(EXAMPLES, "chat-8b-l4.yaml"), os.path.join(repo, hostile))
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "pr")
    out = io.StringIO()
    env = _env(tmp, KVLINT_PATHS=hostile, KVLINT_ANNOTATE="all", KVLINT_BASE_REF="base")
    code = run_action(env, cwd=repo, out=out)
    log = out.getvalue()
    assert code == 1
    # the report names it as ./NAME (the same file), so the line does not start with `::` even without the markers
    assert re.search(r"^\./::warning::injected\.yaml:\d+:\d+: error KV103", log, re.M), "the report names it"
    commands = _runner_commands(log)
    own = ("::group::kvlint report: ", "::endgroup::", "::error title=kvlint::")
    annotation = re.compile(
        r"::(error|warning|notice) file=%3A%3Awarning%3A%3Ainjected\.yaml,line=\d+,col=\d+,"
    )
    stray = [c for c in commands if not (c.startswith(own) or annotation.match(c))]
    assert stray == []
    assert any(annotation.match(c) for c in commands)
    # the step summary names the file as a code span: text, not Markdown
    with open(os.path.join(tmp, "summary.md"), encoding="utf-8") as fh:
        result = fh.read().split("\n")[2]
    assert re.fullmatch(
        r"❌ kvlint fails this step: .*; first: KV\d+ at `::warning::injected\.yaml:\d+`", result
    )


def test_log_shows_the_command_as_typed_and_an_argument_cannot_act_as_a_workflow_command(
    tmp_path: pytest.TempPathFactory,
) -> None:
    # the log names the kvlint command it runs: as a user types it (`kvlint check ...`), not as the Python
    # `-c` program that runs the installed kvlint; and an `args` word holding a line break (a workflow that
    # passes text it did not write) starts no workflow command in that line
    tmp = str(tmp_path)
    hostile = "x\n::warning title=pwned::injected"
    out = io.StringIO()
    env = _env(
        tmp,
        KVLINT_PATHS="fixtures/examples/chat-8b-l4.yaml",
        KVLINT_ARGS=f"--stdin-filename {shlex.quote(hostile)}",
    )
    code = run_action(env, cwd=ROOT, out=out)
    log = out.getvalue()
    assert code == 1
    shown = re.search(r"^kvlint: (.*)$", log, re.M)
    assert shown is not None and shown.group(1).startswith("kvlint check --format json="), log[:400]
    assert "sys.path" not in log
    assert not [c for c in _runner_commands(log) if "pwned" in c]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_base_tree_with_links_out_of_the_repository_is_compared(tmp_path: pytest.TempPathFactory) -> None:
    # a base branch holding symbolic links to an absolute path and out of the repository: the base revision
    # is written as a checkout holds it (tarfile's "data" filter, used on Python 3.12+, refused such a link
    # and the Action ended in a traceback) and the head's findings are compared with it
    from kvlint.prdiff import export_tree

    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "deploy"))
    shutil.copy(os.path.join(EXAMPLES, "chat-8b-l4.yaml"), os.path.join(repo, "deploy", "chat.yaml"))
    os.symlink("/etc/hostname", os.path.join(repo, "abs-link"))
    os.symlink("../outside.yaml", os.path.join(repo, "rel-link"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "branch", "base")
    tree = export_tree("base", repo, os.path.join(tmp, "tree"))
    assert os.readlink(os.path.join(tree, "abs-link")) == "/etc/hostname"
    assert os.readlink(os.path.join(tree, "rel-link")) == "../outside.yaml"
    with open(os.path.join(repo, "deploy", "chat.yaml"), "a", encoding="utf-8") as fh:
        fh.write("# reviewed\n")
    _git(repo, "commit", "-q", "-am", "pr")
    out = io.StringIO()
    code = run_action(_env(tmp, KVLINT_PATHS="deploy", KVLINT_BASE_REF="base"), cwd=repo, out=out)
    log = out.getvalue()
    assert "cannot read the base revision" not in log
    assert code == 0 and "kvlint passes: no new finding at or above fail-on=error" in log
    outputs = _outputs(os.path.join(tmp, "output.txt"))
    assert outputs["new"] == "0" and int(outputs["pre-existing"]) > 0


def test_reports_are_not_written_through_a_link_the_pull_request_added(
    tmp_path: pytest.TempPathFactory,
) -> None:
    # the pull request's checkout holds kvlint.sarif as a link to a file of the runner, and a reports/
    # directory linked elsewhere: kvlint would overwrite the targets; the Action refuses before running
    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "deploy"))
    os.makedirs(os.path.join(tmp, "elsewhere"))
    shutil.copy(os.path.join(EXAMPLES, "chat-8b-l4.yaml"), os.path.join(repo, "deploy", "chat.yaml"))
    victim = os.path.join(tmp, "victim.txt")
    with open(victim, "w", encoding="utf-8") as fh:
        fh.write("the runner's file\n")
    os.symlink(victim, os.path.join(repo, "kvlint.sarif"))
    os.symlink(os.path.join(tmp, "elsewhere"), os.path.join(repo, "reports"))
    for extra, link in (
        ({"KVLINT_SARIF": "kvlint.sarif"}, "kvlint.sarif"),
        ({"KVLINT_SARIF": "", "KVLINT_FORMATS": "junit=reports/kvlint.xml"}, "reports"),
    ):
        out = io.StringIO()
        code = run_action(_env(tmp, KVLINT_PATHS="deploy", **extra), cwd=repo, out=out)
        assert code == 2
        assert f"would be written through the symbolic link {link} " in out.getvalue()
        assert "Traceback" not in out.getvalue()
    with open(victim, encoding="utf-8") as fh:
        assert fh.read() == "the runner's file\n"
    assert os.listdir(os.path.join(tmp, "elsewhere")) == []
    # a real file of the same name is written as before
    os.remove(os.path.join(repo, "kvlint.sarif"))
    code = run_action(
        _env(tmp, KVLINT_PATHS="deploy", KVLINT_SARIF="kvlint.sarif"), cwd=repo, out=io.StringIO()
    )
    assert code == 1 and os.path.getsize(os.path.join(repo, "kvlint.sarif")) > 0


def test_config_input_is_held_to_the_repository(tmp_path: pytest.TempPathFactory) -> None:
    # `config: .kvlint.yaml` names a file of the checked-out pull request: its model directories must lie in
    # the repository, as for a configuration kvlint finds itself
    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, ".git"))
    os.makedirs(os.path.join(tmp, "runner-files"))
    shutil.copy(os.path.join(EXAMPLES, "chat-8b-l4.yaml"), os.path.join(repo, "chat.yaml"))
    with open(os.path.join(repo, "ci.kvlint.yaml"), "w", encoding="utf-8") as fh:
        fh.write("model_dirs: [../runner-files]\n")
    out = io.StringIO()
    code = run_action(_env(tmp, KVLINT_PATHS="chat.yaml", KVLINT_CONFIG="ci.kvlint.yaml"), cwd=repo, out=out)
    assert code == 2
    assert re.search(
        r"^::error title=kvlint::KVLINT_CONFIG: .*ci\.kvlint\.yaml: model_dirs: ", out.getvalue(), re.M
    )
    assert "is outside the repository" in out.getvalue()


# ---- the Action and the documented workflow, read as zizmor/actionlint would ---------------------------------


def _run_scripts(steps: list[dict[str, object]]) -> list[str]:
    return [str(s["run"]) for s in steps if "run" in s]


def test_action_and_documented_workflow_follow_githubs_hardening_guide() -> None:
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        action = yaml.safe_load(fh)
    steps = action["runs"]["steps"]
    # script injection: no expression expanded inside a run: script (inputs reach it through env:)
    for script in _run_scripts(steps):
        assert "${{" not in script
    # only GitHub's own actions, each pinned to a commit (a user who pins this Action pins what it runs)
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        text = fh.read()
    for s in steps:
        if "uses" in s:
            assert re.fullmatch(r"actions/[a-z-]+@[0-9a-f]{40}", s["uses"]), s["uses"]
            assert re.search(re.escape(s["uses"]) + r" # v\d+\.\d+\.\d+\n", text), (
                "the release named beside it"
            )
    with open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8") as fh:
        doc = fh.read()
    block = doc[
        doc.index("# .github/workflows/kvlint.yml") : doc.index(
            "```", doc.index("# .github/workflows/kvlint.yml")
        )
    ]
    workflow = yaml.safe_load(block)
    events = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert "pull_request" in events and "pull_request_target" not in events
    assert workflow["permissions"] == {}  # nothing at the workflow level
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read", "security-events": "write"}
    assert any(s.get("uses", "").startswith("github/codeql-action/upload-sarif@") for s in job["steps"])
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False and checkout["with"]["fetch-depth"] == 0
    assert "path" not in checkout["with"]  # the Action asks git in the workspace root
    for script in _run_scripts(job["steps"]):
        assert "${{" not in script


def _secrets_named(node: object) -> set[str]:
    """The secrets an expression anywhere in ``node`` (a parsed workflow or part of one) reads."""
    text = json.dumps(node)
    return set(re.findall(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)", text)) | set(
        re.findall(r"secrets\[['\"]([^'\"]+)['\"]\]", text)
    )


def _workflow_events(workflow: dict[object, object]) -> set[str]:
    events = workflow.get(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as true
    if isinstance(events, str):
        return {events}
    return set(events or ())  # type: ignore[call-overload]


def _documented_workflows() -> list[tuple[str, dict[object, object]]]:
    out = []
    for doc in ("docs/ci.md", "README.md"):
        with open(os.path.join(ROOT, doc), encoding="utf-8") as fh:
            text = fh.read()
        for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.S):
            parsed = yaml.safe_load(block)
            if isinstance(parsed, dict) and "jobs" in parsed:
                out.append((doc, parsed))
    return out


def test_the_repositorys_workflows_pin_every_action_and_give_pull_requests_no_secret() -> None:
    """GitHub's security hardening guide for this repository's own workflows: every action they use, GitHub's
    included, is pinned to a full commit SHA with its release beside it (``pypa/gh-action-pypi-publish`` ran
    as ``@release/v1``, a branch, in the job that holds PyPI's trusted-publishing token; the docker actions of
    the image job, which can push packages, as ``@v3``-style tags); no workflow runs on
    ``pull_request_target``; a workflow a pull request triggers reads no secret but ``GITHUB_TOKEN``."""
    workflows = sorted(os.listdir(os.path.join(ROOT, ".github", "workflows")))
    assert {"ci.yml", "release.yml", "webhook-image.yml"} <= set(workflows)
    for name in workflows:
        path = os.path.join(ROOT, ".github", "workflows", name)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        workflow = yaml.safe_load(text)
        for job_name, job in workflow["jobs"].items():
            for step in job.get("steps", []):
                uses = step.get("uses")
                if uses is None or uses.startswith("./"):
                    continue
                assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}", uses), (name, job_name, uses)
                assert re.search(re.escape(uses) + r" # v\d+\.\d+\.\d+\n", text), (
                    name,
                    uses,
                    "release beside it",
                )
        events = _workflow_events(workflow)
        assert "pull_request_target" not in events, name
        if "pull_request" in events:
            assert _secrets_named(workflow) <= {"GITHUB_TOKEN"}, name


def test_no_job_a_pull_request_runs_can_write_packages_contents_or_tokens() -> None:
    """A job a pull request runs gets no ``packages``, ``contents`` or ``id-token`` write (a same-repository pull
    request's GITHUB_TOKEN carries what the job asks for): webhook-image.yml's one job built pull requests with
    ``packages: write``; publishing is now a job only a push runs. ``security-events: write`` stays allowed (the
    SARIF upload of code scanning, GitHub's documented pattern; a fork's token is read-only anyway)."""
    for name in sorted(os.listdir(os.path.join(ROOT, ".github", "workflows"))):
        with open(os.path.join(ROOT, ".github", "workflows", name), encoding="utf-8") as fh:
            workflow = yaml.safe_load(fh)
        if "pull_request" not in _workflow_events(workflow):
            continue
        for job_name, job in workflow["jobs"].items():
            condition = str(job.get("if", ""))
            if re.search(r"github\.event_name\s*==\s*'(push|release|workflow_dispatch|schedule)'", condition):
                continue  # a pull request does not run it
            for perms in (workflow.get("permissions") or {}, job.get("permissions") or {}):
                assert isinstance(perms, dict), (name, job_name, perms)  # never write-all
                written = {scope for scope, level in perms.items() if level == "write"}
                assert not written & {"packages", "contents", "id-token"}, (name, job_name, written)


def test_the_documented_workflows_keep_hf_token_out_of_pull_requests() -> None:
    """docs/ci.md told users to give the kvlint job ``HF_TOKEN`` in the workflow it shows for ``on:
    pull_request``; a documented workflow a pull request triggers now reads no secret, and the one that asks
    the Hub with the token runs on trusted events only, the token given to the kvlint step alone."""
    documented = _documented_workflows()
    assert len(documented) >= 2
    hub = None
    for doc, workflow in documented:
        events = _workflow_events(workflow)
        assert "pull_request_target" not in events, doc
        if "pull_request" in events:
            assert _secrets_named(workflow) <= {"GITHUB_TOKEN"}, doc
        if "HF_TOKEN" in _secrets_named(workflow):
            hub = workflow
    assert hub is not None, "docs/ci.md shows where the token goes"
    assert _workflow_events(hub) <= {"push", "workflow_dispatch", "schedule"}
    (job,) = hub["jobs"].values()
    assert "HF_TOKEN" not in _secrets_named(job.get("env", {}))  # not the whole job's environment
    (step,) = [s for s in job["steps"] if "HF_TOKEN" in _secrets_named(s)]
    assert step["uses"].startswith("OWNER/kvlint@") and job.get("environment")
    with open(os.path.join(ROOT, "docs", "ci.md"), encoding="utf-8") as fh:
        assert "env: {HF_TOKEN: ${{ secrets.HF_TOKEN }}}" not in fh.read()


def _install_step(tmp: str, version: str) -> tuple[int, str, list[list[str]]]:
    """Run action.yml's "Install kvlint" script with bash, ``KVLINT_VERSION=version``, and a ``python`` on PATH
    that records its arguments (one JSON list per call) and exits 0: ``(status, stdout, calls)``."""
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        action = yaml.safe_load(fh)
    script = next(s for s in action["runs"]["steps"] if s.get("name") == "Install kvlint")["run"]
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    calls = os.path.join(tmp, "calls.jsonl")
    stub = os.path.join(bindir, "python")
    with open(stub, "w", encoding="utf-8") as fh:
        fh.write(
            f"#!{shutil.which('python3') or 'python3'}\nimport json, sys\n"
            f"open({calls!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        )
    os.chmod(stub, 0o755)
    env = {
        "PATH": bindir + os.pathsep + os.environ.get("PATH", ""),
        "KVLINT_VERSION": version,
        "GITHUB_ACTION_PATH": os.path.join(tmp, "action"),
    }
    proc = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, check=False)
    recorded = []
    if os.path.exists(calls):
        with open(calls, encoding="utf-8") as fh:
            recorded = [json.loads(line) for line in fh]
    os.remove(calls) if os.path.exists(calls) else None
    return proc.returncode, proc.stdout + proc.stderr, recorded


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_install_step_version_input_starts_no_workflow_command(tmp_path: pytest.TempPathFactory) -> None:
    # the Install step echoed a bad `version` input as is inside its ::error:: line, so a line break in it
    # started a workflow command of its own; and a value starting with a digit and a dot went to pip whatever
    # followed (a line break, a space, a second requirement)
    tmp = str(tmp_path)
    code, _, calls = _install_step(tmp, "source")
    assert (
        code == 0 and calls[0][:3] == ["-m", "pip", "install"] and calls[0][-1] == os.path.join(tmp, "action")
    )
    code, _, calls = _install_step(tmp, "0.2.0rc1")
    assert code == 0 and calls[0][-1] == "kvlint-k8s==0.2.0rc1"
    for bad in ("latest\n::warning title=pwned::injected 100%", "1.0\n::warning title=pwned::injected"):
        code, log, calls = _install_step(tmp, bad)
        assert code == 2 and calls == [], (bad, calls)
        commands = _runner_commands(log)
        assert not [c for c in commands if "pwned" in c and not c.startswith("::error title=kvlint::")], log
        (error,) = [c for c in commands if c.startswith("::error")]
        assert "%0A::warning title=pwned::injected" in error, error
    assert "100%25" in _install_step(tmp, "latest 100%")[1]


def _runner_outputs(path: str) -> list[tuple[str, str]]:
    """The ``(name, value)`` pairs the Actions runner reads from a ``$GITHUB_OUTPUT`` file, in order: a line
    ``name=value``, or ``name<<DELIMITER`` then the value's lines up to a line ``DELIMITER`` (GitHub Docs,
    "Workflow commands for GitHub Actions", "Setting an output parameter" and "Multiline strings")."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    pairs: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        eq, heredoc = line.find("="), line.find("<<")
        if heredoc >= 0 and (eq < 0 or heredoc < eq):
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            end = lines.index(delimiter, i + 1)
            pairs.append((name, "\n".join(lines[i + 1 : end])))
            i = end + 1
            continue
        if eq >= 0:
            pairs.append((line[:eq], line[eq + 1 :]))
        i += 1
    return pairs


def test_an_output_value_with_a_line_break_sets_no_other_output(tmp_path: pytest.TempPathFactory) -> None:
    # the `sarif` input is written back as the `sarif` output; a file name holding a line break (a workflow that
    # passes a name it did not write) was written as two `name=value` lines, the second setting `errors`
    tmp = str(tmp_path)
    sarif = os.path.join(tmp, "k\nerrors=0.sarif")
    env = _env(tmp, KVLINT_PATHS="fixtures/examples/chat-8b-l4.yaml", KVLINT_SARIF=sarif)
    assert run_action(env, cwd=ROOT, out=io.StringIO()) == 1
    pairs = _runner_outputs(os.path.join(tmp, "output.txt"))
    names = [n for n, _ in pairs]
    assert len(names) == len(set(names)), names
    outputs = dict(pairs)
    assert outputs["sarif"] == sarif and os.path.isfile(sarif)
    assert int(outputs["errors"]) >= 1, outputs


def test_annotations_name_files_from_the_repository_root_without_a_diff(
    tmp_path: pytest.TempPathFactory,
) -> None:
    # a fresh user's push run (no base ref) with `paths: .` annotated `file=./apps/x.yaml`, and one with a
    # working-directory below the root named files relative to it: GitHub places an annotation by the path from
    # the repository root, which the pull-request runs already gave
    repo = tmp_path / "infra"
    (repo / "deploy").mkdir(parents=True)
    shutil.copy(os.path.join(EXAMPLES, "chat-8b-l4.yaml"), repo / "deploy" / "chat.yaml")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for cwd, paths in ((repo, "."), (repo, "./deploy"), (repo / "deploy", ".")):
        out = io.StringIO()
        code = run_action(
            _env(str(tmp_path), KVLINT_PATHS=paths, KVLINT_ANNOTATE="all", GITHUB_EVENT_NAME="push"),
            cwd=str(cwd),
            out=out,
        )
        assert code == 1, out.getvalue()
        files = {f for _, f, _ in _annotations(out.getvalue())}
        assert files == {"deploy/chat.yaml"}, (cwd, paths, files)


# ---- the fail-on input and a --fail-on in args: one threshold, the input's when set (docs/ci.md) --------------


@pytest.mark.parametrize(
    ("fail_on", "args", "code", "reason", "warned"),
    [
        # args alone: read as the input (the reason line names it as it names the input)
        ("", "--fail-on warning", 1, "1 finding at or above fail-on=warning", False),
        ("", "--fail-on=warning --select KV0", 1, "1 finding at or above fail-on=warning", False),
        # both: the input wins, and the log says so; before, kvlint took args' (the last --fail-on) and the step
        # the input's: "fails this step: 0 findings at or above fail-on=error", or a pass with a warning found
        ("error", "--fail-on warning", 0, "no finding at or above fail-on=error", True),
        ("warning", "--fail-on never", 1, "1 finding at or above fail-on=warning", True),
        ("warning", "--fail-on=warning", 1, "1 finding at or above fail-on=warning", False),
    ],
)
def test_the_fail_on_input_wins_over_fail_on_in_args_through_the_entry_point(
    tmp_path: pytest.TempPathFactory, fail_on: str, args: str, code: int, reason: str, warned: bool
) -> None:
    """``python -m kvlint.action`` as action.yml's step runs it, on fixtures/config/suppress/noreason.yaml (one
    warning, KV003, and one info): the exit status, the reason line and the exit-code output read one threshold."""
    import sys

    tmp = str(tmp_path)
    repo = os.path.join(tmp, "repo")
    os.makedirs(repo)
    shutil.copy(os.path.join(ROOT, "fixtures", "config", "suppress", "noreason.yaml"), repo)
    env = _env(
        tmp,
        KVLINT_PATHS=".",
        KVLINT_FAIL_ON=fail_on,
        KVLINT_ARGS=args,
        KVLINT_ANNOTATE="none",
        KVLINT_SARIF="",
    )
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "kvlint.action"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == code, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert reason in proc.stdout, proc.stdout[-2000:]
    assert _outputs(os.path.join(tmp, "output.txt"))["exit-code"] == str(code)
    # kvlint itself was given one --fail-on, the step's
    (shown,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("kvlint: kvlint check ")]
    assert shown.count("--fail-on") == 1 and f"--fail-on {fail_on or 'warning'}" in shown, shown
    warnings = [
        ln for ln in proc.stdout.splitlines() if ln.startswith("::warning title=kvlint::the fail-on input")
    ]
    assert bool(warnings) == warned, warnings


def test_a_bad_fail_on_in_args_is_one_error_line(tmp_path: pytest.TempPathFactory) -> None:
    for args, words in (
        (
            "--fail-on sometimes",
            "KVLINT_ARGS: --fail-on 'sometimes' is not one of error, warning, info, never, none",
        ),
        ("--select KV1 --fail-on", "KVLINT_ARGS: --fail-on needs a value"),
    ):
        out = io.StringIO()
        env = _env(str(tmp_path), KVLINT_PATHS="fixtures/examples/chat-8b-l4.yaml", KVLINT_ARGS=args)
        assert run_action(env, cwd=ROOT, out=out) == 2
        errors = [ln for ln in out.getvalue().splitlines() if ln.startswith("::error")]
        assert len(errors) == 1 and words in errors[0], out.getvalue()


def test_paths_after_a_double_dash_in_args_join_the_paths_input() -> None:
    """``args: "--select KV5 -- extra.yaml"``: kvlint gets one ``--`` with both inputs' paths after it; before, the
    command ended ``-- extra.yaml -- .`` and kvlint read the second ``--`` as a path ("--: no such file")."""
    from kvlint.action import _shared_args

    env = {"KVLINT_PATHS": "no-such-dir", "KVLINT_ARGS": "--select KV5 --fail-on=warning -- extra.yaml"}
    assert _shared_args(env) == ["--fail-on", "warning", "--select", "KV5", "--", "no-such-dir", "extra.yaml"]
    # in the base tree, a path that is not there is left out as the paths input's are
    assert _shared_args(env, cwd=ROOT) == ["--fail-on", "warning", "--select", "KV5", "--"]
