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
