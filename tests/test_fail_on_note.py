"""The text report says which fail_on below error failed the run (the JSON report's ``fails``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml"  # KV103 error + KV202 warning


def _check(*args: str) -> tuple[int, list[str]]:
    r = CliRunner().invoke(main, ["check", "--offline", *args])
    return r.exit_code, r.stdout.splitlines()


def test_fail_on_warning_from_the_flag_is_named_in_the_text_summary() -> None:
    code, lines = _check("--no-config", "--select", "KV202", "--fail-on", "warning", str(CHAT))
    assert code == 1
    assert lines[-2].startswith("0 errors, 1 warning in 1 file")
    assert lines[-1] == "exit status 1: warnings at or above fail_on warning (--fail-on)"


def test_fail_on_from_the_configuration_names_the_file(tmp_path: Path) -> None:
    shutil.copy(CHAT, tmp_path / "chat.yaml")
    (tmp_path / ".kvlint.yaml").write_text("fail_on: info\nselect: [KV202]\n", encoding="utf-8")
    code, lines = _check(str(tmp_path))
    assert code == 1
    assert lines[-1].startswith("exit status 1: warnings at or above fail_on info (")
    assert lines[-1].endswith(".kvlint.yaml)")


def test_no_line_when_errors_alone_fail_or_nothing_fails() -> None:
    code, lines = _check("--no-config", str(CHAT))  # the default: the error fails the run
    assert code == 1 and lines[-1].startswith("1 error, 1 warning in 1 file")
    code, lines = _check("--no-config", "--select", "KV202", str(CHAT))  # a warning, below the default
    assert code == 0 and lines[-1].startswith("0 errors, 1 warning in 1 file")
    code, lines = _check("--no-config", "--select", "KV202", "--fail-on", "warning", "--exit-zero", str(CHAT))
    assert code == 0 and lines[-1].startswith("0 errors, 1 warning in 1 file")
