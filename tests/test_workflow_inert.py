"""No line of kvlint's plain output is a GitHub Actions workflow command, whatever a pull request names its files
or writes in its manifests.

The runner (actions/runner, ``ActionCommand.TryParseV2``) takes a log line whose first non-blank characters are
``::`` for a command, and (``ActionCommand.TryParse``, the legacy form) one holding ``##[`` anywhere. Users run
``kvlint check deploy/`` directly in a workflow step, outside the Action's stop-commands markers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.report.escape import inert_line, inert_path
from kvlint.report.text import format_diagnostic
from kvlint.source import Loc
from kvlint.types import Diagnostic

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ROOT / "fixtures" / "webhook" / "b09-clean.yaml"  # Llama 3.1 8B on one H100: no findings


def _with_args(extra: str) -> str:
    """The clean fixture with ``extra`` (JSON list items) appended to the vLLM args."""
    return CLEAN.read_text().replace('"--max-num-seqs", "64"]', f'"--max-num-seqs", "64"{extra}]')


TP3 = ', "--tensor-parallel-size", "3"'  # KV401-KV404: four findings at the file


def _commands(out: str) -> list[str]:
    """The lines of ``out`` the runner would act on."""
    return [line for line in out.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def _check(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["check", "--offline", *args], catch_exceptions=False)
    return res.exit_code, res.output


@pytest.fixture
def in_tmp(tmp_path: Path) -> Path:
    """``tmp_path`` as the working directory, so the report shows relative paths as a CI checkout does."""
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


@pytest.mark.parametrize("name", ["::warning title=x::y.yaml", " ::add-mask::z.yaml", "::error::e.yaml"])
def test_a_file_named_as_a_workflow_command_is_shown_not_run(in_tmp: Path, name: str) -> None:
    (in_tmp / name).write_text(_with_args(TP3))
    code, out = _check(name)
    assert code == 1
    assert not _commands(out), out
    # the same file, as a path that still names it
    findings = [line for line in out.splitlines() if ": error KV40" in line]
    assert len(findings) == 4 and all(line.startswith("./" + name + ":") for line in findings), out


def test_a_directory_named_as_a_workflow_command_is_shown_not_run(in_tmp: Path) -> None:
    d = in_tmp / "::add-mask::secret"
    d.mkdir()
    (d / "a.yaml").write_text(_with_args(TP3))
    code, out = _check(d.name)
    assert code == 1
    assert not _commands(out), out
    assert out.count("./::add-mask::secret/a.yaml:") == 4, out


def test_a_manifest_value_holding_a_legacy_command_is_shown_not_run(in_tmp: Path) -> None:
    (in_tmp / "v.yaml").write_text(_with_args(', "--kv-cache-dtype", "x ##[add-mask]y"'))
    code, out = _check("v.yaml")
    assert code == 1
    assert "KV206" in out and not _commands(out), out
    assert "##\\[add-mask]y" in out


def test_github_format_lines_are_only_kvlints_annotations(in_tmp: Path) -> None:
    (in_tmp / "::add-mask::z.yaml").write_text(_with_args(TP3))
    code, out = _check("--format", "github", "::add-mask::z.yaml")
    assert code == 1
    lines = out.splitlines()
    commands = [line for line in lines if line.lstrip().startswith("::")]
    assert len(commands) == 5  # four findings and the sizing notice
    assert all(line.split(" ", 1)[0] in ("::error", "::warning", "::notice") for line in commands), out
    assert all("file=%3A%3Aadd-mask%3A%3Az.yaml," in line for line in commands[:4]), out
    assert not any("##[" in line for line in lines)


def test_wrapped_detail_and_fix_lines_cannot_start_a_command() -> None:
    word = "::add-mask::secret"
    d = Diagnostic(
        rule="KV206",
        severity="error",
        message=f"bad value; the detail names {word} and ends",
        summary="bad value",
        loc=Loc("m.yaml", 3, 5),
        fix=f"give a value other than {word} and {word}",
        object=word,
    )
    for width in range(40, 80):
        text = format_diagnostic(d, width=width)
        assert not _commands(text), text
        assert text.count(word) == 4  # shown, not dropped
    # the first wrapped line of the fix starts with the value at this width: a backslash is put before it
    text = format_diagnostic(d, width=len("  fix: give a value other than ") + 1)
    assert "       \\::add-mask::secret" in text.splitlines()


@pytest.mark.parametrize(
    "line",
    ["m.yaml:1:1: error KV101 x", "    detail with a: colon", "  fix: set a::b", "", "# heading ##"],
)
def test_ordinary_lines_and_paths_are_unchanged(line: str) -> None:
    assert inert_line(line) == line
    assert inert_path("deploy/a.yaml") == "deploy/a.yaml"
    assert inert_path("/abs/::x.yaml") == "/abs/::x.yaml"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("::warning::x", "\\::warning::x"),
        ("   ::add-mask::x", "   \\::add-mask::x"),
        ("\u3000::stop-commands::t", "\u3000\\::stop-commands::t"),  # the runner trims Unicode blanks too
        ("ok ##[warning]x ##[error]y", "ok ##\\[warning]x ##\\[error]y"),
    ],
)
def test_command_lines_get_a_visible_escape(line: str, shown: str) -> None:
    assert inert_line(line) == shown
    assert not _commands(inert_line(line))


def test_plan_text_shows_a_legacy_command_in_a_flag_value_escaped() -> None:
    res = CliRunner().invoke(
        main,
        ["plan", "--offline", "--accelerator", "h100", "--", "vllm", "serve", "::add-mask::m"]
        + ["--kv-cache-dtype", "##[warning]q"],
        catch_exceptions=False,
    )
    assert "KV206" in res.output and "::add-mask::m" in res.output
    assert not _commands(res.output), res.output
    assert "'##\\[warning]q'" in res.output


def test_models_pull_check_shows_a_legacy_command_in_a_model_id_escaped(in_tmp: Path) -> None:
    text = CLEAN.read_text().replace("meta-llama/Llama-3.1-8B-Instruct", "org/x##[add-mask]y")
    (in_tmp / "h.yaml").write_text(text)
    res = CliRunner().invoke(main, ["models", "pull", "--check", "h.yaml"], catch_exceptions=False)
    assert res.exit_code == 1
    assert "org/x##\\[add-mask]y" in res.output and not _commands(res.output), res.output
