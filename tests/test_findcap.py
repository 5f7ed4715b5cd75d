"""Findings of one rule in one container are reported one by one up to a bound, the rest as one finding
(kvlint.findcap, issue 19): a finding per ~10 bytes of input (``--$(X)`` arguments) made a report, and a webhook
worker's reply, grow with the input."""

from __future__ import annotations

import copy
import ssl
from pathlib import Path
from typing import Any

import pytest

from kvlint.findcap import MAX_PER_RULE, cap_per_rule
from kvlint.load import load_text
from kvlint.pipeline import run_documents
from kvlint.types import Diagnostic, Loc
from kvlint.webhook.review import webhook_options
from kvlint.webhook.worker import WARM_UP_OBJECT


def _with_args(n: int, env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    obj = copy.deepcopy(WARM_UP_OBJECT)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--model", "meta-llama/Llama-3.1-8B-Instruct"] + ["--$(X)"] * n
    if env is not None:
        container["env"] = env
    return obj


def _lint(obj: dict[str, Any]) -> list[Diagnostic]:
    import json

    return run_documents(load_text(json.dumps(obj, indent=1), "many.json"), webhook_options()).diagnostics


def test_a_rules_findings_in_a_container_past_the_bound_are_one_finding() -> None:
    """2,000 ``--$(X)`` arguments of an undefined X made 2,000 KV503 infos; with X=max-model-len 2,000 KV206
    errors. Now the first MAX_PER_RULE of each, by position, then one finding of the same rule and the most
    severe severity standing for the rest, at the first of them; the other rules' findings as they were."""
    n = 2000
    infos = [d for d in _lint(_with_args(n)) if d.rule == "KV503"]
    assert len(infos) == MAX_PER_RULE + 1
    last = infos[-1]
    assert last.message.startswith(f"{n - MAX_PER_RULE:,} more KV503 findings in container vllm, the first: ")
    assert last.stands_for == n - MAX_PER_RULE and last.severity == "info"
    assert [d.loc.line for d in infos] == sorted(d.loc.line for d in infos)  # type: ignore[union-attr]
    assert all(d.stands_for == 1 for d in infos[:-1])
    errors = _lint(_with_args(n, [{"name": "X", "value": "max-model-len"}]))
    kv206 = [d for d in errors if d.rule == "KV206"]
    assert len(kv206) == MAX_PER_RULE + 1 and kv206[-1].severity == "error"
    assert kv206[-1].stands_for == n - MAX_PER_RULE
    few = [d for d in _lint(_with_args(MAX_PER_RULE)) if d.rule == "KV503"]
    assert len(few) == MAX_PER_RULE and all(d.stands_for == 1 for d in few)


def test_the_cap_counts_per_container_and_rule_and_per_severity() -> None:
    """Two containers' findings are counted apart, a capped finding that stands for several counts them all, and
    the rest of each severity has its own finding for the rest (one at the most severe counted a warning as an
    error)."""

    def diag(i: int, container: str, severity: Any = "warning", stands_for: int = 1) -> Diagnostic:
        return Diagnostic(
            "KV503", severity, f"m{i}", Loc("f", i, 1), container=container, stands_for=stands_for
        )

    diags = [diag(i, "a") for i in range(MAX_PER_RULE)] + [diag(i, "b") for i in range(MAX_PER_RULE)]
    assert cap_per_rule(diags) == diags
    diags.append(diag(1000, "a", "error", stands_for=3))
    diags.append(diag(1001, "a"))
    diags.append(diag(1002, "a", "error"))
    out = cap_per_rule(diags)
    assert len(out) == 2 * MAX_PER_RULE + 2
    rest = [d for d in out if d.message.startswith(("2 more", "1 more"))]
    assert [(d.severity, d.stands_for, d.loc) for d in rest] == [
        ("error", 4, Loc("f", 1000, 1)),
        ("warning", 1, Loc("f", 1001, 1)),
    ]
    assert [d.message.split(" in ")[0] for d in rest] == ["2 more KV503 errors", "1 more KV503 warning"]
    assert all(d.container == "a" for d in rest)
    # counted at their own severities: 4 errors (one standing for 3, one more), 1 warning
    from kvlint.types import CheckResult

    assert CheckResult(diagnostics=out).finding_counts() == {
        "error": 4,
        "warning": 2 * MAX_PER_RULE + 1,
        "info": 0,
    }


def test_the_webhook_counts_the_capped_findings_over_tls(tls: dict[str, Any]) -> None:
    """The webhook's review of 2,000 KV206 errors sent 2,000 findings from the worker to the server: now
    MAX_PER_RULE and the one for the rest, which ``kvlint_webhook_findings_total`` counts as the findings it stands
    for (it counted MAX_PER_RULE + 1, where the deny message said 2,000 errors)."""
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    pytest.importorskip("prometheus_client")
    httpx = pytest.importorskip("httpx")
    from test_webhook import review

    from kvlint.webhook.app import create_app
    from kvlint.webhook.review import WebhookSettings
    from kvlint.webhook.server import ServerThread, make_reloader

    app = create_app(WebhookSettings(workers=1, timeout_seconds=20.0))
    registry = app.state.webhook.metrics.registry
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader).start()
    obj = _with_args(2000, [{"name": "X", "value": "max-model-len"}])
    try:
        verify = ssl.create_default_context(cafile=tls["ca.crt"])
        with httpx.Client(base_url=srv.url, verify=verify, timeout=60) as client:
            answer = client.post("/validate", json=review(obj, uid="u-many")).json()["response"]
    finally:
        srv.stop()
    assert answer["uid"] == "u-many" and answer["allowed"] is False
    labels = {"rule": "KV206", "severity": "error"}
    assert registry.get_sample_value("kvlint_webhook_findings_total", labels) == 2000


def _yaml_with_args(n: int, ignore_at: int) -> str:
    """The object as YAML, ``n`` ``--$(X)`` arguments one a line, a ``# kvlint: ignore KV503=...`` comment above
    the ``ignore_at``-th of them."""
    import yaml

    lines = yaml.safe_dump(_with_args(n), sort_keys=False, width=1000).splitlines()
    at = [i for i, line in enumerate(lines) if line.strip() == "- --$(X)"]
    assert len(at) == n
    i = at[ignore_at]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines.insert(i, f"{indent}# kvlint: ignore KV503=X is set by the entrypoint")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("jobs", [0, 1, 2])
def test_the_cap_counts_what_comments_leave(tmp_path: Any, jobs: int) -> None:
    """A ``# kvlint: ignore`` comment on one of the first MAX_PER_RULE findings suppresses that one: the report
    still shows MAX_PER_RULE one by one (the cap applies to what suppressions leave), not MAX_PER_RULE - 1 and
    the next one lost in the finding for the rest. The same in one run (jobs 0: :func:`run_check`) and the
    streaming run of one process or two (``--jobs``)."""
    from kvlint.pipeline import run_check
    from kvlint.stream import stream_check

    n = MAX_PER_RULE + 10
    path = tmp_path / "many.yaml"
    path.write_text(_yaml_with_args(n, ignore_at=3))
    result = run_check([str(path)]) if jobs == 0 else stream_check([str(path)], jobs=jobs)
    infos = [d for d in result.diagnostics if d.rule == "KV503"]
    assert [s.diagnostic.rule for s in result.suppressed_diagnostics] == ["KV503"]
    assert len(infos) == MAX_PER_RULE + 1
    assert all(d.stands_for == 1 for d in infos[:-1])
    assert infos[-1].stands_for == n - 1 - MAX_PER_RULE
    assert infos[-1].message.startswith(f"{n - 1 - MAX_PER_RULE:,} more KV503 findings")


def test_the_json_report_says_how_many_findings_one_stands_for() -> None:
    """The finding for the rest stood for 1,950 findings in the webhook's count and nowhere in ``--format json``:
    a consumer summing findings counted it once. Its ``stands_for`` is in the JSON diagnostic (present only when
    it stands for more than one, as ``sources_more``)."""
    import json

    from kvlint.report.jsonout import render_json

    n = 2000
    result = run_documents(load_text(json.dumps(_with_args(n), indent=1), "many.json"), webhook_options())
    report = json.loads(render_json(result))
    kv503 = [d for d in report["diagnostics"] if d["rule"] == "KV503"]
    assert [d.get("stands_for") for d in kv503] == [None] * MAX_PER_RULE + [n - MAX_PER_RULE]


def test_a_files_kvlint_comment_notes_past_the_bound_are_one_finding() -> None:
    """2,000 ``# kvlint: ignore KV999=x`` lines (no such rule) made 2,000 KV003 findings, as 100,000 made 100,000:
    now the first MAX_PER_RULE of a file, then one KV003 standing for the rest, at the first of them, per file."""
    from kvlint.options import Options

    n = 2000
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    lines = "".join(f"# kvlint: ignore KV999=reason {i}\n" for i in range(n))
    loaded = load_text(manifest + lines, "many.yaml")
    notes = [d for d in run_documents(loaded, Options()).diagnostics if d.rule == "KV003"]
    assert len(notes) == MAX_PER_RULE + 1
    last = notes[-1]
    assert last.message.startswith(f"{n - MAX_PER_RULE:,} more KV003 findings in file many.yaml, the first: ")
    assert f"the first {MAX_PER_RULE} findings of a rule in a file one by one" in last.message
    assert last.stands_for == n - MAX_PER_RULE
    assert last.loc is not None and last.loc.line == 4 + MAX_PER_RULE
    assert [d.loc.line for d in notes[:-1]] == list(range(4, 4 + MAX_PER_RULE))  # type: ignore[union-attr]
    assert all(d.stands_for == 1 for d in notes[:-1])
    few = load_text(
        manifest + "".join(f"# kvlint: ignore KV999=r{i}\n" for i in range(MAX_PER_RULE)), "few.yaml"
    )
    kept = [d for d in run_documents(few, Options()).diagnostics if d.rule == "KV003"]
    assert len(kept) == MAX_PER_RULE and all(d.stands_for == 1 for d in kept)


def test_kvlint_comment_notes_of_a_file_read_from_disk_are_capped_too(tmp_path: Path) -> None:
    """A file the loader did not read (a Helm template a finding was mapped to) is read from disk for the comments
    beside its findings, and a bad comment there is a KV003 note as in any file: those notes were made after the
    per-file cap, so 60 such comments beside 60 findings were 60 KV003 findings, not the first MAX_PER_RULE and one
    standing for the rest."""
    from kvlint.options import Options
    from kvlint.suppress import apply_comment_suppressions
    from kvlint.types import LoadResult

    n = MAX_PER_RULE + 10
    template = tmp_path / "templates" / "deployment.yaml"
    template.parent.mkdir()
    template.write_text("".join(f"k{i}: v  # kvlint: ignore KV999=x\n" for i in range(n)), encoding="utf-8")
    diags = [
        Diagnostic("KV101", "error", f"finding {i}", Loc(str(template), i + 1, 1), object="Deployment/d")
        for i in range(n)
    ]
    kept, suppressed, notes = apply_comment_suppressions(diags, LoadResult(), Options())
    assert kept == diags and not suppressed
    assert len(notes) == MAX_PER_RULE + 1
    assert [d.loc.line for d in notes if d.loc] == list(range(1, MAX_PER_RULE + 2))
    assert notes[-1].stands_for == n - MAX_PER_RULE
    assert notes[-1].message.startswith(
        f"{n - MAX_PER_RULE} more KV003 findings in file {template}, the first: "
    )
