"""The reports count findings, not the lines they list: past :data:`kvlint.findcap.MAX_PER_RULE` findings of a rule
in a container, one finding stands for the rest, and every format's summary counts what it stands for (the text,
Markdown and GitHub summary line, the JSON and SARIF ``summary``, ``--statistics``) and says how many are listed.
Before, 120 KV206 errors in one container were summed as "51 errors" in every format."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kvlint.findcap import MAX_PER_RULE
from kvlint.pipeline import Options, run_check
from kvlint.report import render
from kvlint.types import CheckResult
from kvlint.webhook.worker import WARM_UP_OBJECT

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_PATHS = (
    ROOT / "fixtures" / "sarif" / "sarif-schema-2.1.0.json",
    ROOT.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json",
)
N = MAX_PER_RULE + 70  # KV206 errors in one container: MAX_PER_RULE listed, one for the other 70


def _many(tmp_path: Path, n: int = N) -> Path:
    """A vLLM Deployment with ``n`` ``--$(X)`` arguments, X=max-model-len: ``n`` KV206 errors (a value missing)."""
    obj = copy.deepcopy(WARM_UP_OBJECT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--model", "meta-llama/Llama-3.1-8B-Instruct"] + ["--$(X)"] * n
    container["env"] = [{"name": "X", "value": "max-model-len"}]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(obj, sort_keys=False), encoding="utf-8")
    return path


def _result(path: Path, jobs: int) -> CheckResult:
    from kvlint.stream import stream_check

    options = Options(allow_hub=False)
    return run_check([str(path)], options) if jobs == 0 else stream_check([str(path)], options, jobs=jobs)


@pytest.mark.parametrize("jobs", [0, 1])
def test_every_summary_counts_the_findings_a_capped_one_stands_for(tmp_path: Path, jobs: int) -> None:
    """One run (jobs 0) and the streaming run (its DiagnosticView counts without decoding every finding)."""
    result = _result(_many(tmp_path), jobs)
    kv206 = [d for d in result.diagnostics if d.rule == "KV206"]
    assert len(kv206) == MAX_PER_RULE + 1 and kv206[-1].stands_for == N - MAX_PER_RULE
    listed = result.counts()
    found = result.finding_counts()
    assert found["error"] == listed["error"] + N - MAX_PER_RULE - 1
    assert result.standing() == [("error", N - MAX_PER_RULE)]

    text = render("text", result).splitlines()[-1]
    assert text.startswith(f"{found['error']} errors, ")
    assert text.endswith(
        f"; {len(result.diagnostics)} listed: 1 of them stands for {N - MAX_PER_RULE} findings not listed one by one"
    )
    # the Markdown and GitHub formats print the same line; the Markdown container section counts them too
    markdown = render("markdown", result)
    assert text in markdown.splitlines()
    assert (
        f"{sum(1 for d in result.diagnostics if d.container == 'vllm') + N - MAX_PER_RULE - 1} findings"
        in markdown
    )
    assert render("github", result).splitlines()[-1] == text

    summary = json.loads(render("json", result))["summary"]
    assert {k: summary[k] for k in ("error", "warning", "info")} == found
    assert summary["listed"] == listed
    sarif = json.loads(render("sarif", result))["runs"][0]
    assert {k: sarif["properties"]["summary"][k] for k in ("error", "warning", "info", "listed")} == {
        **found,
        "listed": listed,
    }


def test_sarif_says_what_a_capped_finding_stands_for(tmp_path: Path) -> None:
    """The JSON diagnostic had ``stands_for``, the SARIF result nothing: now its ``properties`` say it, and the
    log is still valid SARIF 2.1.0 (the official OASIS schema)."""
    path = next((p for p in SCHEMA_PATHS if p.is_file()), None)
    if path is None:
        pytest.skip("official SARIF 2.1.0 schema not found")
    validator = jsonschema.Draft4Validator(json.loads(path.read_text(encoding="utf-8")))
    result = _result(_many(tmp_path), 0)
    doc = json.loads(render("sarif", result))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)] == []
    results = doc["runs"][0]["results"]
    stood = [r["properties"].get("stands_for") for r in results if r["ruleId"] == "KV206"]
    assert stood == [None] * MAX_PER_RULE + [N - MAX_PER_RULE]


def test_statistics_count_the_findings_a_capped_one_stands_for(tmp_path: Path) -> None:
    from kvlint.cli import statistics_text

    result = _result(_many(tmp_path), 0)
    assert statistics_text(result).splitlines()[0].split() == [
        str(N),
        "KV206",
        "error",
        "invalid-engine-flag-value",
    ]


def test_a_run_without_capped_findings_lists_what_it_counts(tmp_path: Path) -> None:
    """Below the bound nothing changes: no ``listed`` in the JSON summary, no "listed" clause."""
    result = _result(_many(tmp_path, MAX_PER_RULE), 0)
    assert result.standing() == [] and result.finding_counts() == result.counts()
    assert "listed" not in json.loads(render("json", result))["summary"]
    assert "listed" not in render("text", result).splitlines()[-1]


def test_a_run_writing_every_report_summarises_its_sizing_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint.sizing.summarise`` (the sizing line, the objects not read: it may read files again) ran once per
    report format: six times for text and five more reports in one run, four in the GitHub Action's. Now once, and
    every report says the same."""
    from click.testing import CliRunner

    import kvlint.sizing
    from kvlint.cli import main

    calls = []
    real = kvlint.sizing.summarise

    def counted(result: CheckResult) -> Any:
        calls.append(result)
        return real(result)

    monkeypatch.setattr(kvlint.sizing, "summarise", counted)
    path = _many(tmp_path, 2)
    formats = ["json", "jsonl", "sarif", "markdown", "github", "junit"]
    args = ["check", "--offline", "--exit-zero", str(path), "--format", "text"]
    for f in formats:
        args += ["--format", f"{f}={tmp_path / ('out.' + f)}"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert len(calls) == 1
    line = real(calls[0]).line()
    assert line in r.stdout.splitlines()
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["sizing"] == real(calls[0]).as_dict()
    for f in ("markdown", "github"):
        assert line in (tmp_path / ("out." + f)).read_text()


def test_the_actions_outputs_and_reason_count_what_the_summary_counts(tmp_path: Path) -> None:
    """The Action's ``errors`` output comes from the JSON summary (120 KV206 errors), its ``findings`` output and
    its "kvlint fails this step: N findings" counted the diagnostics listed (51): now both count findings."""
    import os

    from kvlint.action import ENV_INPUTS, run_action

    io_dir = tmp_path / "io"
    io_dir.mkdir()
    manifests = tmp_path / "m"
    manifests.mkdir()
    _many(manifests)
    env = {k: v for k, v in os.environ.items() if k not in ENV_INPUTS and k != "GITHUB_BASE_REF"}
    env.update(
        GITHUB_STEP_SUMMARY=str(io_dir / "summary.md"),
        GITHUB_OUTPUT=str(io_dir / "output.txt"),
        RUNNER_TEMP=str(io_dir),
        KVLINT_OFFLINE="true",
        KVLINT_SARIF=str(io_dir / "kvlint.sarif"),
        KVLINT_PATHS=str(manifests),
    )
    import io

    out = io.StringIO()
    assert run_action(env, cwd=str(tmp_path), out=out) == 1
    outputs = dict(
        line.split("=", 1) for line in (io_dir / "output.txt").read_text().splitlines() if "=" in line
    )
    result = _result(manifests / "many.yaml", 0)
    found = result.finding_counts()
    assert int(outputs["errors"]) == found["error"]
    assert int(outputs["findings"]) == sum(found.values())
    assert f"kvlint fails this step: {found['error']} findings at or above" in out.getvalue()


def test_the_webhooks_deny_message_counts_the_findings_a_capped_one_stands_for(tmp_path: Path) -> None:
    """The AdmissionReview's ``status.message`` said "has 51 errors" of the object ``kvlint check`` counts 120
    errors in (and its "... N more" counted the diagnostics left, not the findings): now it counts findings."""
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import WebhookSettings, build_response, lint_review, parse_review

    obj = yaml.safe_load(_many(tmp_path).read_text(encoding="utf-8"))
    request = {
        "uid": "7c9d1f2e-0000-4000-8000-000000000052",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": obj["metadata"]["name"],
        "namespace": "default",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": obj,
        "dryRun": False,
    }
    rev = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    result = lint_review(rev, webhook_options())
    errors = result.finding_counts()["error"]
    assert errors == N + sum(1 for d in result.diagnostics if d.severity == "error" and d.rule != "KV206")
    out, _ = build_response(rev, WebhookSettings(mode="enforce"), result)
    message = out["response"]["status"]["message"]
    assert message.startswith(f"kvlint: Deployment/default/{obj['metadata']['name']} has {errors} errors:\n")
    assert f"- KV206 [container vllm]: {N - MAX_PER_RULE} more KV206 findings in container vllm" in message


def test_the_deny_messages_more_counts_the_findings_left_out() -> None:
    """The "... N more" line of a deny message cut at its limit counted the diagnostics left out: a capped finding
    among them counts the findings it stands for."""
    from kvlint.source import Loc
    from kvlint.types import Diagnostic
    from kvlint.webhook.review import Review, deny_message

    review = Review("admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, {}, None)
    long = [
        Diagnostic("KV103", "error", f"{i} " + "x" * 1300, Loc("f.json", i, 1), container="vllm")
        for i in range(5)
    ]
    rest = Diagnostic(
        "KV206", "error", "70 more KV206 findings", Loc("f.json", 9, 1), container="vllm", stands_for=70
    )
    text = deny_message(review, [*long, rest])
    assert text.startswith("kvlint: Deployment/ns/n has 75 errors:\n")
    listed = text.count("\n- KV103")
    assert 0 < listed < 5 and f"- ... {5 - listed + 70} more; run `kvlint check`" in text


def test_a_change_adding_findings_past_the_bound_counts_them_new(tmp_path: Path) -> None:
    """``kvlint diff`` and the Action's ``new`` compare findings by fingerprint: 60 KV206 errors on the base (50 and
    one for 10) against 120 on the head (50 and one for 70) gave the one for the rest one fingerprint on both, so
    the 60 the change added were "pre-existing" and ``fail-on`` of new findings passed. Now each diagnostic counts
    the findings it stands for: 60 new, the base's 60 pre-existing; the other way round 60 gone."""
    from kvlint.prdiff import compare_findings, render_diff_text

    def report(n: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = json.loads(render("json", _result(_many(tmp_path, n), 0)))["diagnostics"]
        return out

    base, head = report(60), report(N)
    others = sum(1 for d in head if d["rule"] != "KV206")
    c = compare_findings(base, head)
    # the capped finding is new (the head has 60 more of it); its fingerprint alone said pre-existing
    assert c.status.count("new") == 1
    text = render_diff_text("main..HEAD", c, [])
    assert f"New findings: {N - 60}\n" in text and f"Pre-existing findings: {60 + others}\n" in text
    assert (c.new_count, c.existing_count, c.fixed_count) == (N - 60, 60 + others, 0)
    assert sorted(c.new_units) == [0] * (len(head) - 1) + [N - 60]
    back = compare_findings(head, base)
    assert (back.new_count, back.existing_count, back.fixed_count) == (0, 60 + others, N - 60)
    # unchanged: all pre-existing, nothing gone
    same = compare_findings(head, head)
    assert (same.new_count, same.existing_count, same.fixed_count) == (0, N + others, 0)


def test_the_webhooks_warnings_count_the_findings_left_out() -> None:
    """The admission warnings end "kvlint: N more findings not shown" past their room: N counted the diagnostics
    left out, a capped finding among them as one of the 70 it stands for."""
    from kvlint.source import Loc
    from kvlint.types import Diagnostic
    from kvlint.webhook.review import Review, WebhookSettings, build_response

    review = Review("admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, {}, None)
    distinct = [
        Diagnostic("KV202", "warning", f"{i} " + "word " * 40, Loc("f.json", i, 1), container="vllm")
        for i in range(12)
    ]
    rest = Diagnostic("KV202", "warning", "70 more", Loc("f.json", 99, 1), container="vllm", stands_for=70)

    class Result:
        diagnostics = [*distinct, rest]

    for mode in ("enforce", "warn"):
        warns = build_response(review, WebhookSettings(mode=mode), Result())[0]["response"]["warnings"]
        shown = len(warns) - 1
        assert 0 < shown < len(distinct)
        assert warns[-1].startswith(f"kvlint: {len(distinct) - shown + 70} more findings not shown")


def test_one_rule_says_how_many_findings_a_diagnostic_stands_for() -> None:
    """The rule "a capped finding stands for its ``stands_for``, else 1" was written out in the summary, ``--statistics``,
    the Markdown workloads, SARIF, JSON, the diagnostic store, the cap itself, ``kvlint diff`` and the Action (some
    refusing a bool, some not). Now :func:`kvlint.types.findings_stood_for` is that rule, for an object or a JSON
    diagnostic, and nothing else in kvlint reads ``stands_for`` but to copy it along."""
    import ast

    from kvlint.types import Diagnostic, findings_stood_for

    d = Diagnostic("KV206", "error", "m", None)
    assert [findings_stood_for(x) for x in (d, {}, {"stands_for": 70}, {"stands_for": True})] == [1, 1, 70, 1]
    assert findings_stood_for({"stands_for": "70"}) == 1 and findings_stood_for(object()) == 1
    reads = []
    for path in sorted((ROOT / "kvlint").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "findings_stood_for":
                node.body = []  # the rule itself
        for node in ast.walk(tree):
            read = (
                isinstance(node, ast.Attribute)
                and node.attr == "stands_for"
                and isinstance(node.ctx, ast.Load)
            ) or (
                isinstance(node, ast.Call)
                and any(isinstance(a, ast.Constant) and a.value == "stands_for" for a in node.args)
            )
            if read:
                reads.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    # copied along: a Finding's to its Diagnostic, a Diagnostic's to the webhook worker's reply row
    # (by file: the lines move with any edit above them)
    assert [r.rsplit(":", 1)[0] for r in reads] == ["kvlint/rules/runner.py", "kvlint/webhook/worker.py"], (
        reads
    )


def test_junit_counts_its_testcases_and_names_what_a_capped_one_stands_for(tmp_path: Path) -> None:
    """JUnit's ``tests``/``failures`` count ``<testcase>`` elements (its consumers recount them): the findings the
    summary says are listed. The testcase for the rest was named as one finding ("KV206 ... 61:5") for 70: now its
    name says how many it is, and the failing testcases' findings add up to the summary's errors and warnings."""
    import re
    import xml.etree.ElementTree as ET

    result = _result(_many(tmp_path), 0)
    root = ET.fromstring(render("junit", result))
    cases = root.findall("testsuite/testcase")
    failing = [tc for tc in cases if tc.find("failure") is not None]
    listed, found = result.counts(), result.finding_counts()
    assert int(root.get("tests", "")) == len(cases)
    assert int(root.get("failures", "")) == len(failing) == listed["error"] + listed["warning"]
    weights = [re.search(r" \((\d+) findings\)$", tc.get("name", "")) for tc in failing]
    assert [m.group(1) for m in weights if m] == [str(N - MAX_PER_RULE)]
    assert sum(int(m.group(1)) if m else 1 for m in weights) == found["error"] + found["warning"]


def test_the_findings_metric_counts_what_a_capped_finding_stands_for() -> None:
    """``kvlint_webhook_findings_total`` added 1 for the finding that stands for the rest of 70 (and the KV205 for
    unknown options past its bound): the deny message said 120 errors, the metric 51."""
    pytest.importorskip("prometheus_client")
    from types import SimpleNamespace

    from kvlint.webhook.metrics import WebhookMetrics
    from kvlint.webhook.worker import ReplyDiagnostic

    rows = [ReplyDiagnostic("KV206", "error", "m", "", "vllm") for _ in range(MAX_PER_RULE)]
    rows.append(ReplyDiagnostic("KV206", "error", "70 more", "", "vllm", stands_for=70))
    metrics = WebhookMetrics()
    metrics.observe(SimpleNamespace(allowed=False, outcome="findings", errors=rows, warnings=[]), False, 0.01)
    labels = {"rule": "KV206", "severity": "error"}
    assert metrics.registry.get_sample_value("kvlint_webhook_findings_total", labels) == MAX_PER_RULE + 70
