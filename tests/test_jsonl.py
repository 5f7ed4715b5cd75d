"""`kvlint check --format jsonl`: JSON Lines through the real command line on real fixtures.

Every line parses; the finding lines are the JSON report's diagnostics of the same run (same order, same
content) and in the order the text report lists them; the last line holds the JSON report's summary;
``jsonl=FILE`` next to other formats writes both; the streaming writer writes a line per call."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.pipeline import Options, run_check
from kvlint.report import FORMATS, render, write_report
from kvlint.report.jsonl import SUMMARY_KEY

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "fixtures" / "examples"
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
# real manifests with errors, warnings, CRDs (KAITO, KubeAI, KServe...) and kvlint.io/ignore suppressions
INPUTS = [str(EX), str(ROOT / "fixtures" / "crds"), str(ROOT / "fixtures" / "config" / "suppress")]


def _check(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--exit-zero", *args])
    return r.exit_code, r.stdout, r.stderr


def _lines(text: str) -> list[dict]:
    assert text.endswith("\n")
    return [json.loads(line) for line in text.split("\n")[:-1]]


def _split(objs: list[dict]) -> tuple[list[dict], dict]:
    *diags, last = objs
    assert all("rule" in d and SUMMARY_KEY not in d for d in diags)
    assert "rule" not in last
    return diags, last


def test_jsonl_file_next_to_json_and_text_is_the_json_reports_content(tmp_path: Path) -> None:
    jl, js = tmp_path / "out.jsonl", tmp_path / "out.json"
    code, out, _ = _check("--format", f"jsonl={jl}", "--format", f"json={js}", "--format", "text", *INPUTS)
    assert code == 0
    doc = json.loads(js.read_text(encoding="utf-8"))
    diags, last = _split(_lines(jl.read_text(encoding="utf-8")))
    assert diags == doc["diagnostics"] and len(diags) > 10
    assert {d["severity"] for d in diags} >= {"error", "warning"}
    assert last == {
        SUMMARY_KEY: doc["summary"],
        "schema_version": doc["schema_version"],
        "kvlint_version": doc["kvlint_version"],
    }
    assert last[SUMMARY_KEY]["suppressed"] > 0  # the suppress fixtures' kvlint.io/ignore findings: counted...
    suppressed = {(s["file"], s["line"], s["rule"]) for s in doc["suppressed"]}
    assert suppressed and not suppressed & {(d["file"], d["line"], d["rule"]) for d in diags}  # ...not listed
    # the text report on stdout lists the same findings in the same order (its first line of each finding)
    heads = re.findall(r"^(.+?):(\d+):(\d+): (error|warning|info) (KV\d+) ", out, re.M)
    assert heads == [(d["file"], str(d["line"]), str(d["column"]), d["severity"], d["rule"]) for d in diags]


def test_jsonl_alone_on_stdout_matches_json_alone() -> None:
    """Without a json, junit or markdown report the run keeps no per-container records (the summary
    comes from the streamed counts): the jsonl summary must still be the JSON report's."""
    paths = [*INPUTS, *([str(CORPUS)] if CORPUS.is_dir() else [])]
    code, out, _ = _check("--format", "jsonl", *paths)
    assert code == 0
    code, js, _ = _check("--format", "json", *paths)
    doc = json.loads(js)
    diags, last = _split(_lines(out))
    assert diags == doc["diagnostics"]
    assert last[SUMMARY_KEY] == doc["summary"]
    assert last[SUMMARY_KEY]["sizing"]["serving"] > 0


def test_lines_are_compact_ascii_and_render_gives_the_same_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    jl = tmp_path / "r.jsonl"
    assert _check("--format", f"jsonl={jl}", "fixtures/examples/")[0] == 0
    text = jl.read_text(encoding="utf-8")
    assert text.isascii()
    for line in text.splitlines():
        assert line == json.dumps(json.loads(line), separators=(",", ":"))
    # the in-memory rendering (tests, library callers) is the same report
    assert render("jsonl", run_check(["fixtures/examples/"], Options(allow_hub=False))) == text


def test_a_file_name_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    name = tmp_path / "chat\nerror KV999 \u202eé.yaml"
    shutil.copyfile(EX / "chat-8b-l4.yaml", name)
    code, out, _ = _check("--format", "jsonl", str(name))
    assert code == 0 and out.isascii()
    diags, last = _split(_lines(out))
    assert (
        len(out.splitlines())
        == len(diags) + 1
        == last[SUMMARY_KEY]["error"] + last[SUMMARY_KEY]["warning"] + 1
    )
    assert diags and {d["file"] for d in diags} == {str(name)}


def test_clean_run_is_the_summary_line_alone() -> None:
    code, out, _ = _check("--format", "jsonl", str(EX / "llama-8b-h100-ok.yaml"))
    assert code == 0
    (only,) = _lines(out)
    assert only[SUMMARY_KEY]["error"] == only[SUMMARY_KEY]["warning"] == 0
    assert only[SUMMARY_KEY]["files"] == 1


def test_exit_codes_and_unwritable_file(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "jsonl", str(EX)])
    assert r.exit_code == 1  # findings at error: the format does not change the exit status
    code = _check("--format", f"jsonl={tmp_path}/no/such/dir/x.jsonl", str(EX))[0]
    assert code == 2
    code, _, err = _check("--format", "jsonl", "--format", "json", str(EX))
    assert code == 2 and "jsonl and json would both be written to standard output" in err


def test_writer_writes_one_line_per_call() -> None:
    class Lines(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def write(self, s: str) -> int:
            self.calls.append(s)
            return super().write(s)

    result = run_check([str(EX)], Options(allow_hub=False))
    stream = Lines()
    write_report("jsonl", result, stream)
    assert len(stream.calls) == len(result.diagnostics) + 1
    assert all(c.endswith("\n") and c.count("\n") == 1 for c in stream.calls)
    assert stream.getvalue() == render("jsonl", result)


def test_jsonl_is_a_check_format() -> None:
    assert "jsonl" in FORMATS
    r = CliRunner().invoke(main, ["check", "--help"])
    assert "jsonl" in r.stdout
