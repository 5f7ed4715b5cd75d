"""What README.md, CONTRIBUTING.md and docs/ say a command, a file or a setting is, checked against kvlint itself.

Each test derives the documented statement from the running code or the shipped data (the CLI's commands, the
JSON report of a real run, action.yml, the webhook chart's values.yaml, the rule catalogue), so a change to
either side that leaves the other behind fails here. The README's sample outputs are checked in
tests/test_readme.py.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
    *sorted((ROOT / "docs").glob("*.md")),
]


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


@pytest.fixture(autouse=True)
def _plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("COLUMNS", "FORCE_COLOR", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)


# --- commands and files the documentation names ----------------------------------------------------------


def _code_spans(text: str) -> list[tuple[int, str]]:
    """(offset, code) of every inline code span and every line of a fenced block."""
    spans: list[tuple[int, str]] = []
    for m in re.finditer(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M):
        offset = m.start(1)
        for line in m.group(1).split("\n"):
            spans.append((offset, line))
            offset += len(line) + 1
    prose = re.sub(r"^```[^\n]*\n.*?^```", lambda m: " " * len(m.group(0)), text, flags=re.S | re.M)
    spans += [(m.start(1), m.group(1)) for m in re.finditer(r"`([^`\n]+)`", prose)]
    return spans


def test_every_kvlint_command_the_docs_show_exists() -> None:
    """`kvlint WORD` in code (inline or a fenced block, after `$ `, a pipe or at the start) names a command of
    the CLI, `kvlint GROUP WORD` a subcommand of that group (e.g. `kvlint simulate`, not a module path), and
    `python -m kvlint.MODULE` a module of the package."""
    ctx = click.Context(main)
    wrong = []
    for doc in DOCS:
        text = _text(doc)
        for offset, code in _code_spans(text):
            for m in re.finditer(
                r"(?:^|\$ |\| |&& |\()kvlint ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?=[\s`)]|$)", code
            ):
                cmd = main.get_command(ctx, m.group(1))
                if cmd is None:
                    wrong.append(f"{doc.name}:{_line(text, offset)}: kvlint {m.group(1)}")
                elif isinstance(cmd, click.Group) and m.group(2):
                    if cmd.get_command(ctx, m.group(2)) is None:
                        wrong.append(f"{doc.name}:{_line(text, offset)}: kvlint {m.group(1)} {m.group(2)}")
            for m in re.finditer(r"python -m (kvlint[\w.]*)", code):
                if importlib.util.find_spec(m.group(1)) is None:
                    wrong.append(f"{doc.name}:{_line(text, offset)}: python -m {m.group(1)}")
    assert wrong == []


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation other than '-' and '_' dropped, spaces as '-'."""
    text = _text(path)
    out = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+\s+(.*)$", text, re.M)
    }
    return out | set(re.findall(r'<a (?:id|name)="([^"]+)"', text))


def test_relative_links_reach_a_file_and_heading() -> None:
    broken = []
    for doc in DOCS:
        text = _text(doc)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path) if path else doc
            if not dest.exists():
                broken.append(f"{doc.name}:{_line(text, m.start())}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{doc.name}:{_line(text, m.start())}: {target} (no such heading)")
    assert broken == []


#: paths the documentation names on purpose although they are not in the tree
NOT_IN_TREE = {
    "bench/build_mypyc.py": "docs/performance.md: the mypyc build of commit 96e2a68, reverted after measuring",
}


def test_repository_paths_in_code_spans_exist() -> None:
    """A `kvlint/...`, `tests/...`, `tools/...`, `bench/...` or `fixtures/...` path in code names a file or
    directory of this repository (placeholders such as `rules/KVnnn.yaml` and globs aside)."""
    missing = []
    for doc in DOCS:
        if doc.name == "CHANGELOG.md":  # history: it may name what was removed since
            continue
        text = _text(doc)
        for offset, code in _code_spans(text):
            for m in re.finditer(r'(?<![\w./"-])((?:kvlint|tests|tools|bench|fixtures)/[\w./-]*)', code):
                path = m.group(1).rstrip(".")
                if "KVnnn" in path or "NNN" in path or path in NOT_IN_TREE:
                    continue
                if not (ROOT / path).exists():
                    missing.append(f"{doc.name}:{_line(text, offset)}: {path}")
    assert missing == []


# --- README: configuration --------------------------------------------------------------------------------


def _readme_config_example() -> str:
    readme = _text(ROOT / "README.md")
    start = readme.index("## Configuration: `.kvlint.yaml`")
    m = re.search(r"```yaml\n(.*?)```", readme[start:], re.S)
    assert m is not None
    return m.group(1)


def test_readme_configuration_example_is_valid_and_shows_every_key(tmp_path: Path) -> None:
    import json

    from kvlint.config import parse_config

    example = _readme_config_example()
    (tmp_path / "models").mkdir()
    parse_config(example, str(tmp_path / ".kvlint.yaml"))  # raises ConfigError when the example is invalid
    schema = json.loads(_text(ROOT / "kvlint" / "data" / "kvlint-config.schema.json"))
    assert set(yaml.safe_load(example)) == set(schema["properties"])


def test_readme_configuration_error_example_is_what_check_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The README quotes the error for `rules: {KV104: {severity: fatal}}` at line 3, column 15:
    fixtures/config/bad/severity.yaml is that file."""
    monkeypatch.chdir(ROOT)
    readme = " ".join(_text(ROOT / "README.md").split())
    m = re.search(r"stops the run with exit code 2 and names the place, e\.g\. `([^`]+)`", readme)
    assert m is not None
    prefix, _, tail = m.group(1).partition(".kvlint.yaml")
    bad = "fixtures/config/bad/severity.yaml"
    r = CliRunner().invoke(main, ["check", "--offline", "--config", bad, "fixtures/examples/"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.strip() == f"{prefix}{bad}{tail}"


# --- docs/formats.md: the JSON report's fields ------------------------------------------------------------


def _json_report(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A JSON report with a finding, a suppressed one, a planned container and one planned on the fleet."""
    import json

    monkeypatch.chdir(ROOT)
    paths = ["fixtures/examples/", "fixtures/config/suppress/noreason.yaml", "fixtures/rules/KV501/vllm.yaml"]
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", *paths])
    assert r.exit_code == 1, r.stderr
    report: dict[str, Any] = json.loads(r.stdout)
    assert report["diagnostics"] and report["suppressed"]
    assert {w["sizing"] for w in report["workloads"]} >= {"plan", "fleet"}
    return report


def _names(fragment: str) -> set[str]:
    return set(re.findall(r'"(\w+)"', fragment))


def test_formats_doc_lists_exactly_the_json_report_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _text(ROOT / "docs" / "formats.md")
    section = doc[doc.index("## json") : doc.index("## jsonl")]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block is not None
    shape = block.group(1)

    def part(key: str, closer: str) -> str:
        m = re.search(rf'"{key}":\s*[\[{{]+(.*?){closer}', shape, re.S)
        assert m is not None, key
        return m.group(1)

    report = _json_report(monkeypatch)
    assert _names(shape.split('"summary"')[0]) | {"summary", "diagnostics", "suppressed", "workloads"} == set(
        report
    )
    # the summary's keys before "sizing", "sizing", then "fail_on" (a list of {"threshold", "source"})
    sizing = part("sizing", r'\},\s*"fail_on"')
    # "listed" only when a finding stands for more than one (none in this report)
    assert "listed" in _names(part("summary", '"sizing"'))
    assert (_names(part("summary", '"sizing"')) - {"listed"}) | {"sizing", "fail_on"} == set(
        report["summary"]
    )
    # "not_read_items" is a list of objects: its fields are compared with one item's (none in this report)
    items = re.search(r'"not_read_items":\s*\[\{(.*?)\}\]', sizing, re.S)
    assert items is not None
    top = sizing[: items.start(1)] + sizing[items.end(1) :]
    assert _names(top) - {"reason"} == set(report["summary"]["sizing"])
    from kvlint.sizing import SizingSummary
    from kvlint.source import Loc
    from kvlint.types import Diagnostic

    one = Diagnostic("KV002", "warning", "m", Loc("t.yaml", 4, 9))
    (item,) = SizingSummary(0, 0, 0, not_read=1, unread_items=((one, "template not rendered"),)).as_dict()[
        "not_read_items"
    ]
    assert _names(items.group(1)) == set(item)
    assert _names(part("fail_on", r"\]")) == set(report["summary"]["fail_on"][0])
    # up to the list's end (not the "sources" list's: the fields after it, "fails", were never compared)
    diag = part("diagnostics", r'\}\],\s*"suppressed"')
    # present only when sources were left out, and when a finding stands for more than one
    assert {"sources_more", "stands_for"} <= _names(diag)
    assert _names(diag) - {"sources_more", "stands_for"} == set(report["diagnostics"][0])
    assert set(report["suppressed"][0]) == set(report["diagnostics"][0]) | {"reason"}
    workloads = {k for w in report["workloads"] for k in w}
    assert _names(part("workloads", r"\}\]\}")) == workloads
    fleet_doc = re.search(
        r"`fleet` \(null unless the GPU is unknown\).*?`(\{.*?\})`", " ".join(section.split())
    )
    assert fleet_doc is not None
    fleet = next(w["fleet"] for w in report["workloads"] if w["fleet"])
    assert _names(fleet_doc.group(1)) == set(fleet[0])
    jsonl = " ".join(doc[doc.index("## jsonl") : doc.index("## sarif")].split())
    listed = re.search(r"diagnostics` list \(([^)]*)\)", jsonl)
    assert listed is not None and set(re.findall(r"`(\w+)`", listed.group(1))) == set(
        report["diagnostics"][0]
    )


# --- docs/ci.md: the Action's inputs and outputs ----------------------------------------------------------


def test_ci_doc_tables_the_inputs_defaults_and_outputs_of_action_yml() -> None:
    action = yaml.safe_load(_text(ROOT / "action.yml"))
    doc = _text(ROOT / "docs" / "ci.md")
    table = doc[doc.index("| input | default | meaning |") :].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \|([^|]*)\|", table, re.M)
    assert [name for name, _ in rows] == list(action["inputs"])
    for name, default in rows:
        assert default.strip().strip("`") == str(action["inputs"][name]["default"]), name
    outputs = " ".join(doc[doc.index("sets **outputs**") :].split("\n\n", 1)[0].split())
    assert re.findall(r"`([a-z-]+)`", outputs) == list(action["outputs"])


# --- docs/webhook.md: the chart's values -------------------------------------------------------------------


def _lookup(values: dict[str, Any], dotted: str) -> Any:
    node: Any = values
    for key in dotted.split("."):
        assert isinstance(node, dict) and key in node, dotted
        node = node[key]
    return node


def test_webhook_doc_values_table_names_values_of_the_chart_with_their_defaults() -> None:
    values = yaml.safe_load(_text(ROOT / "deploy" / "helm" / "kvlint-webhook" / "values.yaml"))
    doc = _text(ROOT / "docs" / "webhook.md")
    table = doc[doc.index("| value | default | what |") :].split("\n\n", 1)[0]
    checked = 0
    for names_cell, default_cell in re.findall(r"^\| ([^|]+) \| ([^|]*) \|", table, re.M)[1:]:
        names = re.findall(r"`([\w.*]+)`", names_cell)
        assert names, names_cell
        for name in names:
            _lookup(values, name.removesuffix(".*"))
        defaults = [d.strip() for d in default_cell.split(", ")]
        if len(defaults) != len(names):
            continue  # a default in words ("requests 500m CPU / 256Mi, limit 1536Mi", "none")
        for name, default in zip(names, defaults, strict=True):
            if re.fullmatch(r"`?[\w./\[\]-]+`?", default) and default not in ("none", "on"):
                assert yaml.safe_load(default.strip("`")) == _lookup(values, name), name
                checked += 1
    assert checked >= 15


# --- the rule catalogue in CONTRIBUTING.md and the family table --------------------------------------------


def _catalogue_by_category() -> dict[str, list[str]]:
    from kvlint.rules.catalog import load_catalog

    out: dict[str, list[str]] = {}
    for rule in sorted(load_catalog().values(), key=lambda r: r.id):
        out.setdefault(rule.category, []).append(rule.id)
    return out


def test_rule_family_table_spans_each_category_s_rules() -> None:
    import kvlint.rules.families as families

    table = re.findall(r"^\| :mod:`\.(\w+)` \| (\w+) \| (KV\d{3})-(KV\d{3})", families.__doc__ or "", re.M)
    by_category = _catalogue_by_category()
    assert {category: (first, last) for _, category, first, last in table} == {
        c: (ids[0], ids[-1]) for c, ids in by_category.items()
    }
    assert all(module == category for module, category, _, _ in table)


def test_contributing_scaffold_example_takes_a_free_id_of_its_family() -> None:
    """tools/new_rule.py refuses an id in use, so the example must name a free one, of its category's family;
    the rest of "Adding a rule" names that id or rules of the catalogue."""
    text = " ".join(_text(ROOT / "CONTRIBUTING.md").split())
    m = re.search(r"tools/new_rule\.py (KV\d{3}) --name \S+ --category (\w+)", text)
    assert m is not None
    rule_id, category = m.groups()
    by_category = _catalogue_by_category()
    in_use = {i for ids in by_category.values() for i in ids}
    assert rule_id not in in_use
    assert rule_id[2] == by_category[category][0][2], "ids are numbered by family"
    section = text[text.index("## Adding a rule") : text.index("## Sources")]
    assert set(re.findall(r"KV\d{3}", section)) <= {rule_id, *in_use}


# --- docs/webhook.md: what kubectl prints -----------------------------------------------------------------


def _pattern(shown: str) -> re.Pattern[str]:
    """A line as the documentation shows it, where `...` stands for text left out."""
    return re.compile(".*?".join(re.escape(part) for part in shown.split("...")))


def test_webhook_doc_shows_what_a_review_of_the_example_answers() -> None:
    """ "What users see" is the answer of the webhook that the chart sends Deployments to, for the README's
    example manifest: kubectl prints its warnings as `Warning:` lines and the denial's message after
    `denied the request: `."""
    import json

    from kvlint.load import load_text
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import WebhookSettings, build_response, lint_review, parse_review
    from kvlint.workloads import find_workloads

    doc = _text(ROOT / "docs" / "webhook.md")
    m = re.search(r"## What users see\n\n```console\n(.*?)```", doc, re.S)
    assert m is not None
    first, *lines = m.group(1).rstrip("\n").split("\n")
    path = first.removeprefix("$ kubectl apply -f ")
    data = (ROOT / path).read_bytes()
    obj = json.loads(json.dumps(find_workloads(load_text(data, path).documents)[0].doc.data))
    meta = obj["metadata"]
    request = {
        "uid": "1",
        "kind": {"group": "apps", "version": "v1", "kind": obj["kind"]},
        "resource": {"group": "apps", "version": "v1", "resource": obj["kind"].lower() + "s"},
        "name": meta["name"],
        "namespace": meta["namespace"],
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": obj,
    }
    review = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    answer = build_response(review, WebhookSettings(), lint_review(review, webhook_options()))[0]["response"]
    warnings = [line.removeprefix("Warning: ") for line in lines if line.startswith("Warning: ")]
    assert len(warnings) == len(answer["warnings"])
    assert all(_pattern(w).fullmatch(a) for w, a in zip(warnings, answer["warnings"], strict=True))
    shown = "\n".join(line for line in lines if not line.startswith("Warning: "))
    head = re.match(
        rf'Error from server \(Forbidden\): error when creating "{re.escape(path)}": admission webhook\n'
        r'"([\w.-]+)" denied the request: ',
        shown,
    )
    assert head is not None and not answer["allowed"]
    message = shown[head.end() :].split("\n")
    real = answer["status"]["message"].split("\n")
    assert len(message) == len(real) and all(
        _pattern(s).fullmatch(r) for s, r in zip(message, real, strict=True)
    )
    # the webhook named is the one of the chart's configuration that matches this kind
    config = next(
        d
        for d in yaml.safe_load_all(_text(ROOT / "deploy" / "webhook" / "kvlint-webhook.yaml"))
        if d and d["kind"] == "ValidatingWebhookConfiguration"
    )
    by_name = {w["name"]: {r for rule in w["rules"] for r in rule["resources"]} for w in config["webhooks"]}
    assert request["resource"]["resource"] in by_name[head.group(1)]


def test_webhook_doc_local_walkthrough_serves_and_reviews_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ "Try it on your machine": the `kvlint webhook serve` line parses as that command's options, the curl
    lines ask the ports it serves, and the AdmissionReview the embedded script writes for the manifest is
    answered as the prose says: denied with the error rules `kvlint check` reports on that file, its warning
    rules in `warnings`."""
    import shlex
    import sys

    from kvlint.pipeline import Options, run_check
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import WebhookSettings, build_response, lint_review, parse_review

    doc = _text(ROOT / "docs" / "webhook.md")
    section = doc[doc.index("## Try it on your machine") :].split("\n## ", 1)[0]
    m = re.search(r"```sh\n(.*?)```", section, re.S)
    assert m is not None
    block = m.group(1).replace("\\\n", " ")
    serve_line = next(line for line in block.splitlines() if line.startswith("kvlint webhook serve "))
    args = shlex.split(serve_line.split("#")[0].rstrip(" &"))[3:]
    for name in ("--tls-cert", "--tls-key"):
        (tmp_path / args[args.index(name) + 1]).write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    serve = _command(["webhook", "serve"])
    params = serve.make_context("serve", list(args)).params
    assert f"http://{params['host']}:{params['probe_port']}/readyz" in block
    assert re.search(rf"https://localhost:{params['port']}/validate\b", block)
    # the certificate names the host the client asks for
    assert "subjectAltName=DNS:localhost" in block

    script = re.search(r"python3 - (\S+) > (\S+) <<'EOF'\n(.*?)\nEOF\n", block, re.S)
    assert script is not None
    manifest, out, code = script.groups()
    assert f"@{out}" in block
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", ["-", manifest])
    exec(compile(code, "docs/webhook.md", "exec"), {})
    review = parse_review(capsys.readouterr().out)
    answer = build_response(review, WebhookSettings(), lint_review(review, webhook_options()))[0]["response"]

    found = run_check([manifest], Options(allow_hub=False)).diagnostics
    errors = {d.rule for d in found if d.severity == "error"}
    warnings = {d.rule for d in found if d.severity == "warning"}
    assert errors and not answer["allowed"]
    assert set(re.findall(r"^- (KV\d{3})", answer["status"]["message"], re.M)) == errors
    assert {w.split()[0] for w in answer["warnings"]} == warnings
    prose = " ".join(section.split("```")[-1].split())
    assert set(re.findall(r"KV\d{3}", prose)) <= errors


# --- README: suppressing findings ---------------------------------------------------------------------------


def _readme_yaml_after(marker: str) -> str:
    readme = _text(ROOT / "README.md")
    m = re.search(r"```yaml\n(.*?)```", readme[readme.index(marker) :], re.S)
    assert m is not None, marker
    return m.group(1)


def _suppressions(text: str, tmp_path: Path) -> tuple[set[str], dict[str, str]]:
    """(reported rule ids, suppressed rule id -> reason) of `kvlint check` on ``text``."""
    from kvlint.pipeline import Options, run_check

    path = tmp_path / "chat.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_check([str(path)], Options(allow_hub=False))
    return {d.rule for d in result.diagnostics}, {
        s.diagnostic.rule: s.reason for s in result.suppressed_diagnostics
    }


def test_readme_suppression_examples_suppress_on_the_example_manifest(tmp_path: Path) -> None:
    """The annotation and the comment README.md shows, written into fixtures/examples/chat-8b-l4.yaml where
    they go, suppress its KV202 with the reason given (and nothing is reported as KV003)."""
    example = _text(ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml")
    reported, suppressed = _suppressions(example, tmp_path)
    assert "KV202" in reported and not suppressed

    annotation = _readme_yaml_after("Annotate the workload (or its pod template)")
    value = yaml.safe_load(annotation)["metadata"]["annotations"]["kvlint.io/ignore"]
    lines = example.split("\n")
    top = lines.index("metadata:")
    annotated = "\n".join(
        [*lines[: top + 1], "  annotations:", f"    kvlint.io/ignore: {value!r}", *lines[top + 1 :]]
    )
    reported, suppressed = _suppressions(annotated, tmp_path)
    assert "KV202" not in reported and "KV003" not in reported
    assert suppressed == {"KV202": dict(e.split("=", 1) for e in value.split(", "))["KV202"]}

    comment, *shown = (
        _readme_yaml_after("Or put a comment on the line a finding points at").rstrip("\n").split("\n")
    )
    at = next(i for i in range(len(lines)) if lines[i : i + len(shown)] == shown)
    commented = "\n".join([*lines[:at], comment, *lines[at:]])
    reported, suppressed = _suppressions(commented, tmp_path)
    assert "KV202" not in reported and "KV003" not in reported
    assert suppressed == {"KV202": comment.split("=", 1)[1]}
    # --no-exemptions (README, `kvlint check --help`): neither the annotation nor the comment applies
    for text in (annotated, commented):
        (tmp_path / "chat.yaml").write_text(text, encoding="utf-8")
        r = CliRunner().invoke(main, ["check", "--offline", "--no-exemptions", str(tmp_path / "chat.yaml")])
        assert " KV202 " in r.stdout and r.stdout.rstrip().endswith("0 suppressed (exemptions disabled)")


def test_readme_plan_json_fields_are_in_the_plan_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """The `kvlint plan --format json` fields README.md names exist in the report of its plan example."""
    import json
    import shlex

    monkeypatch.chdir(ROOT)
    readme = _text(ROOT / "README.md")
    command = re.search(r"^\$ kvlint (plan .*)$", readme, re.M)
    assert command is not None
    args = shlex.split(command.group(1))
    r = CliRunner().invoke(main, [args[0], "--offline", "--format", "json", *args[1:]])
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    text = " ".join(readme.split())
    named = re.search(
        r"`--format json` gives the same figures with the field names of the design \((.*?)\)\.", text
    )
    assert named is not None
    # `memory.kv_cache_bytes` and its `_low`/`_high` band: the suffixes name two more fields
    fields = [f for f in re.findall(r"`([\w.]+)`", named.group(1)) if not f.startswith("_")]
    assert "memory.kv_cache_bytes" in fields and "its `_low`/`_high` band" in named.group(1)
    fields += ["memory.kv_cache_bytes_low", "memory.kv_cache_bytes_high"]
    for field in fields:
        node = report
        for key in field.split("."):
            assert isinstance(node, dict) and key in node, field
            node = node[key]


# --- README: the flags of each command ----------------------------------------------------------------------


def _command(words: list[str]) -> click.Command:
    """The click command ``kvlint WORDS...`` names (a group's subcommand when the next word is one)."""
    ctx = click.Context(main)
    cmd: click.Command | None = main.get_command(ctx, words[0])
    assert cmd is not None, words
    for word in words[1:]:
        if not isinstance(cmd, click.Group) or cmd.get_command(ctx, word) is None:
            break
        cmd = cmd.get_command(ctx, word)
    assert cmd is not None
    return cmd


def _flags(cmd: click.Command) -> set[str]:
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}


def test_readme_flags_are_options_of_their_command() -> None:
    """Each `--flag` (and `-x`) README.md's Commands table gives a command, and the flags its paragraphs say
    `check` and `plan` share and `check` also takes, is an option of that command (`kvlint CMD --help`)."""
    readme = _text(ROOT / "README.md")
    table = readme[readme.index("## Commands") :].split("\n\n", 2)[1]
    wrong: list[str] = []
    rows = 0
    for row in table.splitlines()[2:]:
        for code in re.findall(r"`(kvlint [^`]+)`", row.split(" | ")[0]):
            words = re.findall(r"(?<=\s)[a-z][a-z-]*(?=\s|$)", " " + code.split("[")[0].split(" --")[0])
            cmd = _command(words[1:])
            rows += 1
            named = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])(?=[\s\]=|]|$)", code))
            wrong += [f"{code}: {flag}" for flag in sorted(named - _flags(cmd))]
    assert rows >= 12, table  # every command of the table was read
    text = " ".join(readme.split())
    shared = re.search(
        r"Options shared by `check` and `plan`: (.*?)`check` also takes (.*?)`kvlint --version`", text
    )
    assert shared is not None
    for name, part in (("check", shared.group(1)), ("plan", shared.group(1)), ("check", shared.group(2))):
        named = set(re.findall(r"`(--[a-z][a-z-]*|-[a-z])(?=[\s`/=])", part))
        named |= set(re.findall(r"`-[a-z]/(--[a-z][a-z-]*)", part))
        assert named, part
        wrong += [f"kvlint {name}: {flag}" for flag in sorted(named - _flags(_command([name])))]
    assert wrong == []


# --- versions the documentation states ---------------------------------------------------------------------


def _constant(dotted: str) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _version(value: Any) -> str:
    return ".".join(str(v) for v in value) if isinstance(value, tuple) else str(value)


def test_engine_memory_model_doc_states_the_releases_the_constants_hold() -> None:
    """docs/engine-memory-model.md's table of sources names each engine's newest (and vLLM's oldest) release
    with the constant that holds it; `kvlint --version` prints the same constants."""
    doc = _text(ROOT / "docs" / "engine-memory-model.md")
    table = doc[doc.index("| engine | read | newest release modelled (constant) |") :].split("\n\n", 1)[0]
    stated = re.findall(r"(\d+(?:\.\d+)+) \(`(kvlint\.[\w.]+)`\)", table)
    assert {name.rsplit(".", 1)[1] for _, name in stated} == {
        "NEWEST_VLLM",
        "OLDEST_VLLM",
        "NEWEST_TGI",
        "NEWEST_SGLANG",
    }
    for version, name in stated:
        assert version == _version(_constant(name)), name
    newest = {name.rsplit(".", 1)[1]: version for version, name in stated}
    assert f"from {newest['OLDEST_VLLM']} to {newest['NEWEST_VLLM']} for the memory arithmetic" in table
    from kvlint.engines.vllm_flags_data import VERSIONS

    assert f"{len(VERSIONS)} releases {VERSIONS[0]} … {VERSIONS[-1]} for the option tables" in table
    r = CliRunner().invoke(main, ["--version"])
    line = f"vLLM {newest['NEWEST_VLLM']}, TGI {newest['NEWEST_TGI']}, SGLang {newest['NEWEST_SGLANG']}"
    assert r.exit_code == 0 and line in r.stdout
