"""The Action's entry point run as a runner runs it on a pull request: GitHub's variables, a temporary git
repository with a base commit (``origin/main``) and a head commit, the step summary, outputs and log.

Scenarios of issue 17: a docs-only pull request on a base that already has errors, a pull request that
raises ``--max-model-len`` past what fits, a values-only Helm pull request, an oversized summary.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kvlint.action import ENV_INPUTS, SUMMARY_LIMIT, run_action, truncate_summary
from kvlint.pipeline import Options, run_check
from kvlint.report import render

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml"
CHART = ROOT / "fixtures" / "helm" / "chat-chart"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _pull_request(tmp: Path, base_files: dict[str, str], head_files: dict[str, str]) -> Path:
    """A repository whose ``origin/main`` is the base commit and whose HEAD is the pull request's head."""
    repo = tmp / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "pr")
    for name, text in base_files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    for name, text in head_files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "head")
    return repo


def _runner_env(tmp: Path, **inputs: str) -> dict[str, str]:
    """The environment of the Action's step on a pull_request event, as the runner and action.yml set it."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_INPUTS and not k.startswith("GITHUB_")}
    env.update(
        GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME="pull_request",
        GITHUB_BASE_REF="main",
        GITHUB_HEAD_REF="pr",
        GITHUB_REPOSITORY="acme/infra",
        GITHUB_RUN_ID="4242",
        GITHUB_SERVER_URL="https://github.com",
        GITHUB_STEP_SUMMARY=str(tmp / "summary.md"),
        GITHUB_OUTPUT=str(tmp / "output.txt"),
        RUNNER_TEMP=str(tmp / "runner"),
        KVLINT_OFFLINE="true",
        KVLINT_SARIF="",
        KVLINT_FAIL_ON="error",
        KVLINT_ANNOTATE="changed",
    )
    (tmp / "runner").mkdir(exist_ok=True)
    env.update(inputs)
    return env


def _outputs(tmp: Path) -> dict[str, str]:
    text = (tmp / "output.txt").read_text(encoding="utf-8")
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _annotations(log: str) -> list[tuple[str, str, int, str]]:
    return [
        (m.group(1), m.group(2), int(m.group(3)), m.group(4))
        for m in re.finditer(
            r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=\d+,[^:]*::(.*)$", log, re.M
        )
    ]


def _with_max_model_len(text: str, value: int) -> tuple[str, int]:
    """The example manifest with ``--max-model-len VALUE`` added after its model; and the flag's line."""
    lines = text.split("\n")
    i = next(k for k, line in enumerate(lines) if line.strip() == "- --model")
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines[i + 2 : i + 2] = [f"{indent}- --max-model-len", f"{indent}- '{value}'"]
    return "\n".join(lines), i + 4  # 1-based line of the value


def test_docs_only_pull_request_on_a_base_with_errors_passes(tmp_path: Path) -> None:
    manifest = EXAMPLE.read_text(encoding="utf-8")
    repo = _pull_request(
        tmp_path,
        {"deploy/chat.yaml": manifest, "README.md": "# infra\n"},
        {"README.md": "# infra\n\nHow to deploy.\n"},
    )
    out = io.StringIO()
    code = run_action(_runner_env(tmp_path, KVLINT_PATHS="deploy"), cwd=str(repo), out=out)
    log = out.getvalue()
    outputs = _outputs(tmp_path)
    assert code == 0 and outputs["exit-code"] == "0"
    assert int(outputs["errors"]) > 0 and outputs["new"] == "0"
    assert outputs["pre-existing"] == outputs["findings"]
    # the log: the text report in a group, the pre-existing findings marked, the reason
    assert "::group::kvlint report:" in log and "::endgroup::" in log
    pre = [ln for ln in log.splitlines() if ln.endswith("[pre-existing]")]
    assert len(pre) == int(outputs["findings"]) and any(" error KV103 " in ln for ln in pre)
    assert re.search(
        r"^kvlint passes: no new finding at or above fail-on=error \(\d+ pre-existing.*listed above\)$",
        log,
        re.M,
    )
    assert _annotations(log) == []  # nothing the pull request changed is connected to a finding
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "✅ kvlint passes" in summary and "Pre-existing findings (" in summary
    # the summary's result line comes first and its folded block of pre-existing findings after it
    assert "not counted; they are listed below)" in summary and "listed above" not in summary
    assert summary.index("✅ kvlint passes") < summary.index("Pre-existing findings (")
    assert "No serving workload's capacity changed." in summary


def test_raising_max_model_len_past_what_fits_fails_on_the_changed_line(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    base_text, _ = _with_max_model_len(text, 8192)
    head_text, line = _with_max_model_len(text, 131072)
    repo = _pull_request(tmp_path, {"deploy/chat.yaml": base_text}, {"deploy/chat.yaml": head_text})
    out = io.StringIO()
    code = run_action(_runner_env(tmp_path, KVLINT_PATHS="deploy"), cwd=str(repo), out=out)
    log = out.getvalue()
    outputs = _outputs(tmp_path)
    assert code == 1 and outputs["exit-code"] == "1" and int(outputs["new"]) >= 1

    # what kvlint itself says about each revision
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "chat.yaml").write_text(base_text, encoding="utf-8")
    before = run_check([str(tmp_path / "b")], Options(allow_hub=False))
    after = run_check([str(repo / "deploy")], Options(allow_hub=False))
    assert not any(d.rule == "KV103" for d in before.diagnostics)
    kv103 = next(d for d in after.diagnostics if d.rule == "KV103")
    assert kv103.loc is not None and kv103.loc.line == line

    # log: the new finding marked, the reason; annotation on the changed line, marked new
    assert re.search(r"deploy/chat\.yaml:\d+:\d+: error KV103 .*\[new\]$", log, re.M)
    assert re.search(
        r"^kvlint fails this step: 1 new finding at or above fail-on=error introduced", log, re.M
    )
    errors = [a for a in _annotations(log) if a[0] == "error"]
    assert [(f, n) for _, f, n, _ in errors] == [("deploy/chat.yaml", line)]
    assert errors[0][3].startswith("new: one request of max-model-len 131,072 tokens")

    # summary: capacity before and after, from each run's own plan
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    p0, p1 = before.containers[0].plan, after.containers[0].plan
    assert p0 is not None and p1 is not None
    row = next(ln for ln in summary.splitlines() if ln.startswith("| `Deployment/serving/chat-8b [vllm]`"))
    assert f"{p0.max_model_len:,} → {p1.max_model_len:,}" in row
    assert f"{p0.max_concurrency:.2f}× → {p1.max_concurrency:.2f}×" in row
    assert "fails (KV103)" in row and "1 × nvidia-l4" in row
    assert "### New findings" in summary and "🆕" in summary


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_values_only_helm_pull_request_is_annotated_on_the_values_line(tmp_path: Path) -> None:
    files = {
        f"charts/chat/{p.relative_to(CHART).as_posix()}": p.read_text(encoding="utf-8")
        for p in CHART.rglob("*")
        if p.is_file()
    }
    base_values = files["charts/chat/values.yaml"].replace("maxModelLen: null", "maxModelLen: 8192")
    head_values = base_values.replace("maxModelLen: 8192", "maxModelLen: 131072")
    assert base_values != head_values
    repo = _pull_request(
        tmp_path,
        {**files, "charts/chat/values.yaml": base_values},
        {"charts/chat/values.yaml": head_values},
    )
    out = io.StringIO()
    code = run_action(_runner_env(tmp_path, KVLINT_PATHS="charts/chat"), cwd=str(repo), out=out)
    log = out.getvalue()
    values_line = 1 + head_values.split("\n").index("maxModelLen: 131072")
    annotated = _annotations(log)
    assert code == 1
    new_errors = [a for a in annotated if a[0] == "error"]
    assert new_errors and {(f, n) for _, f, n, _ in new_errors} == {("charts/chat/values.yaml", values_line)}
    # the finding itself names the template line, and the annotation says so
    assert "(reported at charts/chat/templates/deployment.yaml:" in new_errors[0][3]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "8,192 → 131,072" in summary


def test_oversized_summary_is_truncated_with_a_note(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    many = "\n---\n".join(text.replace("name: chat-8b", f"name: chat-8b-{i}") for i in range(12))
    repo = _pull_request(tmp_path, {"deploy/many.yaml": many, "README.md": "a\n"}, {"README.md": "b\n"})
    limit = 16 * 1024
    out = io.StringIO()
    env = _runner_env(tmp_path, KVLINT_PATHS="deploy", KVLINT_SUMMARY_LIMIT=str(limit))
    code = run_action(env, cwd=str(repo), out=out)
    outputs = _outputs(tmp_path)
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    full = (Path(outputs["report-dir"]) / "summary.md").read_text(encoding="utf-8")
    assert code == 0 and outputs["summary-truncated"] == "true"
    assert len(full.encode()) > limit >= len(summary.encode())
    assert "**Summary truncated**" in summary
    assert "https://github.com/acme/infra/actions/runs/4242#artifacts" in summary
    assert full.startswith(summary[: summary.index("\n> [!WARNING]")].rsplit("</details>\n", 1)[0][:1000])
    assert summary.count("<details>") == summary.count("</details>")


def test_truncation_at_githubs_limit_on_a_real_report() -> None:
    """kvlint's own Markdown report of 700 workloads (the example repeated) cut to fit 1 MiB."""
    res = run_check([str(EXAMPLE)], Options(allow_hub=False))
    res.containers = res.containers * 700
    res.diagnostics = res.diagnostics * 700
    markdown = render("markdown", res)
    assert len(markdown.encode()) > SUMMARY_LIMIT
    cut, truncated = truncate_summary(markdown, link="https://github.com/o/r/actions/runs/1#artifacts")
    assert truncated and len(cut.encode()) <= SUMMARY_LIMIT
    assert markdown.startswith(cut[: cut.index("\n> [!WARNING]")].rstrip("\n").removesuffix("</details>"))
    same, untouched = truncate_summary(markdown[:5000])
    assert same == markdown[:5000] and not untouched


def test_annotation_cap_is_said_in_the_summary(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    many = "\n---\n".join(text.replace("name: chat-8b", f"name: chat-8b-{i}") for i in range(11))
    repo = _pull_request(tmp_path, {"README.md": "a\n"}, {"deploy/many.yaml": many})
    out = io.StringIO()
    code = run_action(_runner_env(tmp_path, KVLINT_PATHS="deploy"), cwd=str(repo), out=out)
    errors = [a for a in _annotations(out.getvalue()) if a[0] == "error"]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert code == 1 and len(errors) == 11
    assert "GitHub shows at most 10 annotations of each kind per step: 11 errors were emitted" in summary


def test_non_ascii_path_keeps_its_annotation(tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    base_text, _ = _with_max_model_len(text, 8192)
    head_text, line = _with_max_model_len(text, 131072)
    name = "déploiement/chat.yaml"
    repo = _pull_request(tmp_path, {name: base_text}, {name: head_text})
    # git quotes this path in diffs unless told otherwise
    raw = subprocess.run(
        ["git", "-c", "core.quotePath=true", "diff", "origin/main", "--"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert '+++ "b/d\\303\\251ploiement/chat.yaml"' in raw
    out = io.StringIO()
    run_action(_runner_env(tmp_path, KVLINT_PATHS="déploiement"), cwd=str(repo), out=out)
    errors = [a for a in _annotations(out.getvalue()) if a[0] == "error"]
    assert [(f, n) for _, f, n, _ in errors] == [(name, line)]


def test_a_node_selector_change_is_annotated_where_it_was_made(tmp_path: Path) -> None:
    """The finding stands on the unchanged engine command; the change that caused it is the GPU."""
    text = EXAMPLE.read_text(encoding="utf-8")
    base_text = text.replace("gke-accelerator: nvidia-l4", "gke-accelerator: nvidia-h100-80gb")
    assert base_text != text
    repo = _pull_request(tmp_path, {"deploy/chat.yaml": base_text}, {"deploy/chat.yaml": text})
    out = io.StringIO()
    code = run_action(_runner_env(tmp_path, KVLINT_PATHS="deploy"), cwd=str(repo), out=out)
    selector_line = 1 + text.split("\n").index(
        next(ln for ln in text.split("\n") if "gke-accelerator: nvidia-l4" in ln)
    )
    errors = [a for a in _annotations(out.getvalue()) if a[0] == "error"]
    assert code == 1 and errors
    assert {(f, n) for _, f, n, _ in errors} == {("deploy/chat.yaml", selector_line)}
    assert all("(reported at deploy/chat.yaml:" in body for *_, body in errors)


def test_names_from_the_pull_request_stay_inside_their_code_spans_in_the_summary(tmp_path: Path) -> None:
    # a container name holding a backtick and Markdown: the capacity row shows it as text, it does not close
    # the code span and render a link in the job summary (the fence is one backtick longer than the name's
    # longest run of backticks, so the name is shown as written)
    text = EXAMPLE.read_text(encoding="utf-8")
    hostile = "vllm`[approve](https://attacker.example/)`"
    assert "- name: vllm\n" in text
    text = text.replace("- name: vllm\n", f"- name: '{hostile}'\n", 1)
    base_text, _ = _with_max_model_len(text, 8192)
    head_text, _ = _with_max_model_len(text, 16384)
    repo = _pull_request(tmp_path, {"deploy/chat.yaml": base_text}, {"deploy/chat.yaml": head_text})
    run_action(_runner_env(tmp_path, KVLINT_PATHS="deploy"), cwd=str(repo), out=io.StringIO())
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    row = next(ln for ln in summary.splitlines() if ln.startswith("| ``Deployment/serving/chat-8b "))
    workload = row.split(" | ", 1)[0][2:]
    assert workload == "``Deployment/serving/chat-8b [vllm`[approve](https://attacker.example/)`]``"
    assert "8,192 → 16,384" in row
