"""`kvlint check` command line: formats (several in one run, to files), --fail-on thresholds and exit
codes 0/1/2, --config/--select/--ignore, and `kvlint rules`/`explain` for every catalogued rule."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.rules.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "fixtures" / "examples"
CHAT = str(EX / "chat-8b-l4.yaml")  # KV103 error + KV202 warning
OK = str(EX / "llama-8b-h100-ok.yaml")  # clean
CFG = ROOT / "fixtures" / "config"


def _check(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["check", "--offline", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(
    ("path", "fail_on", "code"),
    [
        (CHAT, None, 1),
        (CHAT, "error", 1),
        (CHAT, "never", 0),
        (CHAT, "none", 0),
        (OK, "info", 0),
        (OK, None, 0),
    ],
)
def test_exit_codes(path: str, fail_on: str | None, code: int) -> None:
    args = ["--no-config", *(["--fail-on", fail_on] if fail_on else []), path]
    assert _check(*args)[0] == code


def test_fail_on_warning_vs_error() -> None:
    # only KV202 (a warning) left: error threshold passes, warning threshold fails
    assert _check("--no-config", "--select", "KV202", CHAT)[0] == 0
    assert _check("--no-config", "--select", "KV202", "--fail-on", "warning", CHAT)[0] == 1
    # a severity override in the pipeline changes the exit code too
    assert _check("--no-config", "--ignore", "KV103,KV208", CHAT)[0] == 0


def test_usage_and_config_errors_exit_2(tmp_path: Path) -> None:
    assert _check("--no-config", str(tmp_path / "missing.yaml"))[0] == 2
    assert _check("--no-config", "--format", "pdf", CHAT)[0] == 2
    code, _, err = _check("--no-config", "--select", "KV99", CHAT)
    assert code == 2 and "--select: 'KV99' matches no rule" in err
    code, _, err = _check("--config", str(CFG / "bad" / "severity.yaml"), CHAT)
    assert code == 2
    assert f"{CFG / 'bad' / 'severity.yaml'}:3:15: rules.KV104.severity" in err
    assert _check("--config", str(tmp_path / "nope.yaml"), CHAT)[0] == 2
    assert _check("--no-config", "--format", f"json={tmp_path}/no/such/dir/x.json", CHAT)[0] == 2


def test_several_formats_in_one_run(tmp_path: Path) -> None:
    sarif, md = tmp_path / "out.sarif", tmp_path / "summary.md"
    code, out, _ = _check(
        "--no-config", "--format", f"sarif={sarif}", "--format", "text", "--format", f"markdown={md}", CHAT
    )
    assert code == 1
    assert out.splitlines()[-1].startswith("1 error, 1 warning in 1 file")
    doc = json.loads(sarif.read_text())
    assert sorted(r["ruleId"] for r in doc["runs"][0]["results"]) == ["KV103", "KV202"]
    assert md.read_text().startswith("## kvlint")
    assert "\x1b[" not in out  # not a terminal: no colour


def test_config_found_upward_and_flags_override(tmp_path: Path) -> None:
    project = CFG / "project"
    code, out, _ = _check(str(project / "deploy"))
    assert code == 1  # KV104 raised to error by the project's .kvlint.yaml
    assert "error KV104" in out and "(minimum 4)" in out
    code, out, _ = _check("--min-concurrency", "1", str(project / "deploy"))
    assert code == 0 and "KV104" not in out
    code, out, _ = _check(
        "--no-config", "--engine-version", "0.11.0", "--accelerator", "l4", str(project / "deploy")
    )
    assert "KV502" in out  # without model_paths the mounted /models/llama cannot be resolved
    # fail_on: warning from the file, overridden by the flag
    code, _, _ = _check("--select", "KV104", "--fail-on", "never", str(project / "deploy"))
    assert code == 0


def test_color_forced_and_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "\x1b[31m" in _check("--no-config", "--color", CHAT)[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in _check("--no-config", CHAT)[1]


def test_quick_start_command() -> None:
    r = CliRunner().invoke(main, ["check", str(EX) + os.sep])
    assert r.exit_code == 1
    assert "error KV103" in r.stdout and "suppressed" in r.stdout.splitlines()[-1]


def test_rules_and_explain_every_rule() -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["rules"]).stdout
    cat = load_catalog()
    assert "KV003" in cat
    for rid, info in cat.items():
        assert f"{rid}  {info.severity:<7}  {info.name}" in listing
        r = runner.invoke(main, ["explain", rid.lower()])
        assert r.exit_code == 0 and r.stdout.startswith(info.title)
    assert runner.invoke(main, ["explain", "KV999"]).exit_code == 2


def test_two_reports_on_stdout_or_in_one_file_are_a_usage_error(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "json", "--format", "text", str(EX)])
    assert r.exit_code == 2 and "json and text would both be written to standard output" in r.output
    same = str(tmp_path / "out")
    r = CliRunner().invoke(
        main, ["check", "--offline", "--format", f"json={same}", "--format", f"sarif={same}", str(EX)]
    )
    assert r.exit_code == 2 and f"two reports would be written to {same}" in r.output
    assert not os.path.exists(same)


def test_exclude_option_skips_matching_files(tmp_path: Path) -> None:
    (tmp_path / "keep.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (tmp_path / "skip.yaml").write_text("{ not yaml")
    r = CliRunner().invoke(main, ["check", "--offline", str(tmp_path)])
    assert r.exit_code == 1 and "KV001" in r.output
    r = CliRunner().invoke(main, ["check", "--offline", "--exclude", "skip.yaml", str(tmp_path)])
    assert r.exit_code == 0 and "in 1 file" in r.output, r.output


@pytest.mark.parametrize(
    ("value", "message"),
    [("0", "must be positive"), ("-5GiB", "negative"), ("80", "has no unit")],
)
def test_gpu_memory_messages_name_the_real_problem(value: str, message: str) -> None:
    r = CliRunner().invoke(main, ["plan", "--offline", "--gpu-memory", value, "--", "vllm", "serve", "x/y"])
    assert r.exit_code == 2 and message in r.output, r.output


def test_format_destinations_are_compared_as_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "o.json"
    other = f"{tmp_path}/../{tmp_path.name}/o.json"
    r = CliRunner().invoke(
        main, ["check", "--offline", "--format", f"json={out}", "--format", f"sarif={other}", str(EX)]
    )
    assert r.exit_code == 2 and "two reports would be written" in r.output
    r = CliRunner().invoke(main, ["check", "--offline", "--format", "json=-", OK])  # stdout, not a file "-"
    assert r.exit_code == 0 and json.loads(r.stdout)["schema_version"] == 2 and not os.path.exists("-")


def test_exclude_matches_however_the_path_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "keep.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (tmp_path / "charts").mkdir()
    (tmp_path / "charts" / "bad.yaml").write_text("{ not yaml")
    monkeypatch.chdir(tmp_path)
    for glob in ("charts/", str(tmp_path / "charts"), "charts"):
        r = CliRunner().invoke(main, ["check", "--offline", "--exclude", glob, str(tmp_path)])
        assert r.exit_code == 0 and "in 1 file" in r.output, (glob, r.output)


def test_text_report_written_in_chunks_is_the_rendered_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # check writes the text report in chunks of whole findings (cli.joined_pieces), not a write per finding:
    # the same text as render_text, also when the chunks are small enough that there are many
    from kvlint import cli
    from kvlint.options import Options
    from kvlint.pipeline import run_check
    from kvlint.report.text import render_text

    monkeypatch.delenv("COLUMNS", raising=False)  # the default width, as render_text's
    fixtures = str(ROOT / "fixtures" / "rules")
    result = run_check([fixtures], Options(allow_hub=False))
    expected = render_text(result)
    assert len(result.diagnostics) > 20
    for size in (cli.ECHO_CHUNK, 1000, 1):
        monkeypatch.setattr(cli, "ECHO_CHUNK", size)
        r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--exit-zero", fixtures])
        assert r.exit_code == 0, r.output
        assert r.stdout == expected


def test_joined_pieces_keeps_the_text_in_bounded_chunks() -> None:
    from kvlint.cli import joined_pieces

    pieces = [f"piece {i}\n" * (i % 7) for i in range(500)]
    for size in (1, 10, 100, 10_000):
        chunks = list(joined_pieces(pieces, size))
        assert "".join(chunks) == "".join(pieces)
        assert all(len(c) >= size for c in chunks[:-1])
        assert all(len(c) < size + max(map(len, pieces)) for c in chunks)
    assert list(joined_pieces([])) == []
