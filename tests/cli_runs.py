"""``kvlint`` run in-process through click's test runner, for the tests of ``kvlint plan`` and the commands around
it (tests/test_planner_engines.py, tests/test_planner_user.py)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from kvlint.cli import main


def run_kvlint(*args: str) -> Result:
    """``kvlint ARGS...``: the result (exit code, stdout, stderr) as click's runner gives it."""
    return CliRunner().invoke(main, list(args))


def plan_json(*args: str) -> dict[str, Any]:
    """``kvlint plan --offline --format json ARGS...``, parsed; the plan must have been made (exit code 0, or 1
    for a plan with errors)."""
    r = run_kvlint("plan", "--offline", "--format", "json", *args)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def checks_in_process(monkeypatch: Any) -> None:
    """``kvlint diff``'s ``kvlint check`` of each revision (:func:`kvlint.prdiff.run_check_json`, a process of
    :func:`kvlint.prdiff.default_command` started in the revision's directory) run in this process instead:
    click's runner in that directory, with the same arguments, the JSON report read back from the same file,
    and the exit code and both streams returned as the process's. For the tests of what the diff compares and
    prints, not of the process it starts (a ``kvlint check`` process costs a second of interpreter start and
    imports; tests/test_ci_cli.py's diff tests of the process keep it). An exception inside the check is
    raised, not turned into an exit code."""
    import os

    from kvlint import prdiff

    def run(
        command: Any, args: Any, cwd: str, json_path: str, env: Any = None
    ) -> tuple[int, dict[str, Any] | None, str, str]:
        assert list(command) == prdiff.default_command(), command  # only the installed kvlint is replaced
        before = os.getcwd()
        os.chdir(cwd)
        try:
            r = CliRunner().invoke(main, ["check", "--format", f"json={json_path}", *args], env=env)
        finally:
            os.chdir(before)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            raise r.exception
        report = None
        if os.path.isfile(json_path):
            with open(json_path, encoding="utf-8") as fh:
                report = json.load(fh)
        return r.exit_code, report, r.stdout, r.stderr

    monkeypatch.setattr(prdiff, "run_check_json", run)
