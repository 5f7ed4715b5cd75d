"""One manifest cannot produce unbounded findings from unknown options (KV205).

100 KAITO Workspaces sharing an inference ConfigMap of 1,000 unknown options (a 41 KB manifest) gave 100,000
KV205 findings. A command line's first :data:`~kvlint.engines.options.MAX_UNKNOWN_OPTIONS` unknown options are
reported one by one (each still restated with what wrote it), the others as one finding "N more unknown
options: ..." at the line of the first of them; the same in every report format and in the admission webhook's
message. The bound is checked by counting findings and the work done per finding (calls of the stages that
restate and suggest), never by time. The manifests are made up for these tests, in the shape of KAITO's
``examples/inference/arc-examples`` Workspace with a customized config (fixtures/collected).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kvlint.engines.options as options_mod
from kvlint.cli import main
from kvlint.engines.options import MAX_NAMED_UNKNOWN, MAX_UNKNOWN_OPTIONS
from kvlint.engines.vllm import KAITO_CONFIG
from kvlint.options import Options
from kvlint.pipeline import run_check

MORE = "more unknown options: "


def _kaito(workspaces: int, entries: int) -> str:
    """``workspaces`` KAITO Workspaces naming one inference ConfigMap whose ``vllm:`` section has ``entries``
    options vLLM does not have (``made-up-0: 1`` ...); the entry ``made-up-J`` is on line ``first + J``."""
    docs = [
        f"""apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: ws-{i}
resource:
  instanceType: Standard_NC24ads_A100_v4
inference:
  preset:
    name: "deepseek-r1-distill-llama-8b"
  config: "params"
"""
        for i in range(workspaces)
    ]
    docs.append(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: params\ndata:\n  inference_config.yaml: |\n    vllm:\n"
        + "".join(f"      made-up-{j}: 1\n" for j in range(entries))
    )
    return "---\n".join(docs)


def _entry_line(text: str, j: int) -> int:
    return text.splitlines().index(f"      made-up-{j}: 1") + 1


def _unknown(result) -> list:
    return [d for d in result.diagnostics if d.rule == "KV205"]


def test_kaito_workspaces_sharing_a_config_of_many_unknown_options(tmp_path: Path) -> None:
    entries = MAX_UNKNOWN_OPTIONS + MAX_NAMED_UNKNOWN + 20
    text = _kaito(3, entries)
    path = tmp_path / "kaito.yaml"
    path.write_text(text)
    result = run_check([str(path)], Options(allow_hub=False))
    found = _unknown(result)
    assert len(found) == 3 * (MAX_UNKNOWN_OPTIONS + 1)
    for ws in ("ws-0", "ws-1", "ws-2"):
        mine = [d for d in found if d.object == f"Workspace/{ws}"]
        shown, more = [d for d in mine if MORE not in d.message], [d for d in mine if MORE in d.message]
        assert len(shown) == MAX_UNKNOWN_OPTIONS and len(more) == 1
        # the ones shown keep their rewording: KAITO's config entry, and a fix that edits the ConfigMap
        for j, d in enumerate(sorted(shown, key=lambda d: d.loc.line)):
            assert d.message.startswith(f"{KAITO_CONFIG} sets made-up-{j} in its vllm: section"), d.message
            assert d.loc.line == _entry_line(text, j)
            assert "from the vllm: section of that ConfigMap" in d.fix
        (m,) = more
        extra = entries - MAX_UNKNOWN_OPTIONS
        assert m.message.startswith(f"{extra} {MORE}--made-up-{MAX_UNKNOWN_OPTIONS}, ")
        named = [f"--made-up-{MAX_UNKNOWN_OPTIONS + k}" for k in range(MAX_NAMED_UNKNOWN)]
        assert ", ".join(named) + f" and {extra - MAX_NAMED_UNKNOWN} more" in m.message
        assert f"--made-up-{MAX_UNKNOWN_OPTIONS + MAX_NAMED_UNKNOWN}," not in m.message
        assert m.loc.line == _entry_line(text, MAX_UNKNOWN_OPTIONS)
        assert m.severity == "error"


def test_findings_and_work_do_not_grow_with_the_unknown_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten times the unknown options: the same findings, the same restatements and suggestions (counted)."""
    calls = {"restated": 0, "suggested": 0}
    restate, suggest = options_mod._chart_option, options_mod.suggest

    def counted_restate(*args, **kwargs):
        calls["restated"] += 1
        return restate(*args, **kwargs)

    def counted_suggest(*args, **kwargs):
        calls["suggested"] += 1
        return suggest(*args, **kwargs)

    monkeypatch.setattr(options_mod, "_chart_option", counted_restate)
    monkeypatch.setattr(options_mod, "suggest", counted_suggest)
    seen = []
    for entries in (100, 1000):
        calls.update(restated=0, suggested=0)
        path = tmp_path / f"kaito-{entries}.yaml"
        path.write_text(_kaito(2, entries))
        result = run_check([str(path)], Options(allow_hub=False))
        seen.append((len(result.diagnostics), len(_unknown(result)), dict(calls)))
    assert seen[0] == seen[1]
    _total, unknown, work = seen[1]
    assert unknown == 2 * (MAX_UNKNOWN_OPTIONS + 1)
    # KAITO writes options of its own into the command (restated too): those are few, and not unknown
    assert MAX_UNKNOWN_OPTIONS * 2 <= work["restated"] <= (MAX_UNKNOWN_OPTIONS + 8) * 2
    assert 0 < work["suggested"] <= MAX_UNKNOWN_OPTIONS * 2


#: A Deployment of vLLM with made-up flags in its args (the webhook reviews one object: no ConfigMap).
_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm, namespace: serving}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--max-model-len", "4096"{flags}]
        resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _deployment(n: int) -> str:
    return _DEPLOYMENT.format(flags="".join(f', "--made-up-{i}"' for i in range(n)))


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sarif", "github", "junit", "markdown", "text"])
def test_every_report_format_has_the_bounded_findings(tmp_path: Path, fmt: str) -> None:
    n = MAX_UNKNOWN_OPTIONS + 5
    path = tmp_path / "deploy.yaml"
    path.write_text(_deployment(n))
    res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(path)], catch_exceptions=False)
    assert res.exit_code == 1, res.output
    out = res.output
    assert f"5 {MORE}--made-up-{MAX_UNKNOWN_OPTIONS}, " in out
    assert "--made-up-0" in out and f"--made-up-{MAX_UNKNOWN_OPTIONS - 1}" in out
    # an option past the first ones is named only in the finding that stands for them, not one of its own
    assert f"option --made-up-{MAX_UNKNOWN_OPTIONS - 1}" in out
    assert f"option --made-up-{MAX_UNKNOWN_OPTIONS}" not in out and f"option --made-up-{n - 1}" not in out
    assert f"--made-up-{n - 1}" in out
    if fmt == "json":
        found = [d for d in json.loads(out)["diagnostics"] if d["rule"] == "KV205"]
        assert len(found) == MAX_UNKNOWN_OPTIONS + 1
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        assert len([r for r in results if r["ruleId"] == "KV205"]) == MAX_UNKNOWN_OPTIONS + 1


def test_the_webhook_message_has_the_bounded_findings() -> None:
    from kvlint.webhook.review import WebhookSettings, build_response

    rev, result = _webhook_result(MAX_UNKNOWN_OPTIONS + 3, "CREATE")
    out, verdict = build_response(rev, WebhookSettings(mode="enforce"), result)
    assert out["response"]["allowed"] is False
    assert len([d for d in verdict.errors if d.rule == "KV205"]) == MAX_UNKNOWN_OPTIONS + 1
    message = out["response"]["status"]["message"]
    assert f"3 {MORE}--made-up-{MAX_UNKNOWN_OPTIONS}, " in message


def test_kvlint_plan_bounds_them_too() -> None:
    flags = [f"--made-up-{i}" for i in range(MAX_UNKNOWN_OPTIONS + 4)]
    args = [
        "plan",
        "--offline",
        "--accelerator",
        "L4",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen2.5-0.5B-Instruct",
        *flags,
    ]
    res = CliRunner().invoke(main, args, catch_exceptions=False)
    lines = [line for line in res.output.splitlines() if " KV205 " in line]
    assert len(lines) == MAX_UNKNOWN_OPTIONS + 1, res.output
    assert f"4 {MORE}--made-up-{MAX_UNKNOWN_OPTIONS}, " in lines[-1]


def test_the_cap_keeps_the_other_findings_in_their_order() -> None:
    """Through the real parser: the other findings of the command line (KV206 on a bad value, KV207 on a
    repeated setting, among the unknown options) stay where they were; the finding that stands for the extra
    unknown options takes the place of the first of them."""
    from kvlint.engines import parse_container
    from kvlint.source import LDict, LList

    n = MAX_UNKNOWN_OPTIONS + 10
    words = ["--model", "X/y"]
    for i in range(n):
        words.append(f"--made-up-{i}")
        if i == MAX_UNKNOWN_OPTIONS + 2:
            words += ["--max-num-seqs", "lots", "--max-model-len", "1024", "--max-model-len", "2048"]
    c = LDict(name="e", image="vllm/vllm-openai:v0.11.0")
    c["args"] = LList(words)
    parsed = parse_container(c).findings
    capped = options_mod.cap_unknown_options(parsed)
    others = [f for f in parsed if not getattr(f, "unknown", False)]
    assert {f.rule for f in others} >= {"KV206", "KV207"}
    assert [f for f in capped if not getattr(f, "unknown", False) and MORE not in f.message] == others
    (more,) = [k for k, f in enumerate(capped) if MORE in f.message]
    assert [getattr(f, "unknown", False) for f in capped[:more]].count(True) == MAX_UNKNOWN_OPTIONS
    assert capped[more].message.startswith(f"10 {MORE}--made-up-{MAX_UNKNOWN_OPTIONS}, ")
    assert options_mod.cap_unknown_options(parsed[:5]) == parsed[:5]  # within the bound: as the parser said


def _webhook_result(n: int, operation: str = "UPDATE"):
    """The admission review of :func:`_deployment` with ``n`` unknown options (an UPDATE from the same object, or a
    CREATE) and the webhook's lint of it."""
    pytest.importorskip("starlette")
    from kvlint.load import load_text
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import lint_review, parse_review

    obj = json.loads(json.dumps(load_text(_deployment(n), "d.yaml").documents[0].data))
    request = {
        "uid": "7c9d1f2e-0000-4000-8000-0000000000" + ("27" if operation == "UPDATE" else "26"),
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": "vllm",
        "namespace": "serving",
        "operation": operation,
        "userInfo": {"username": "alice"},
        "object": obj,
    }
    if operation == "UPDATE":
        request["oldObject"] = obj
    rev = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    return rev, lint_review(rev, webhook_options())


@pytest.mark.parametrize(("before", "after", "allowed"), [(40, 40, True), (40, 35, True), (40, 50, False)])
def test_an_update_adding_unknown_options_past_the_first_ones_is_denied(
    before: int, after: int, allowed: bool
) -> None:
    """Under allowExistingViolations an UPDATE is denied for the errors its old object did not have, matched by
    identity and counted. The options past the first ones are one finding: it counts as the options it stands
    for, so an UPDATE that adds unknown options is still denied (it was, one finding per option, before the
    bound), and one that changes nothing of them, or removes some, is admitted as before."""
    from kvlint.webhook.review import WebhookSettings, build_response, existing_errors

    _rev, old = _webhook_result(before)
    rev, new = _webhook_result(after)
    out, _verdict = build_response(rev, WebhookSettings(mode="enforce"), new, existing_errors(old))
    assert out["response"]["allowed"] is allowed, out["response"].get("status")
