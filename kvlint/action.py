"""The logic of kvlint's GitHub Action (``action.yml``), runnable and testable on its own.

``python -m kvlint.action`` runs ``kvlint check`` once with JSON, Markdown and (optionally) SARIF reports,
then does what a workflow needs:

1. prints GitHub workflow commands (``::error file=F,line=L,col=C,title=...::message``) for the findings,
   limited to the lines the change touches when a base ref is known (``git diff --unified=0`` against
   the merge base of that ref and ``HEAD``; every finding when it is not, or when the diff fails);
2. appends the Markdown report to ``$GITHUB_STEP_SUMMARY``;
3. writes outputs to ``$GITHUB_OUTPUT``: ``errors``, ``warnings``, ``infos``, ``findings`` (reported
   findings), ``suppressed``, ``annotated`` (annotations printed), ``sarif`` (path, empty when off) and
   ``exit-code``;
4. exits with kvlint's status: 0 clean, 1 findings at or above ``fail-on``, 2 usage/configuration error.

Inputs come from environment variables (``action.yml`` maps the Action's inputs to them):
``KVLINT_PATHS`` (whitespace-separated, default ``.``), ``KVLINT_CONFIG``, ``KVLINT_FORMATS`` (extra
``NAME=FILE`` reports, whitespace-separated), ``KVLINT_FAIL_ON`` (default ``error``), ``KVLINT_OFFLINE``
(``true``: never ask the Hugging Face Hub), ``KVLINT_SARIF`` (SARIF file, default ``kvlint.sarif``; empty:
none), ``KVLINT_ANNOTATE`` (``changed`` default, ``all``, ``none``), ``KVLINT_BASE_REF`` (else
``origin/$GITHUB_BASE_REF`` on pull requests), ``KVLINT_ARGS`` (more ``kvlint check`` arguments, shell
words, e.g. ``--helm-values prod.yaml``) and ``KVLINT_COMMAND`` (how to run kvlint; default
``python -m kvlint``). GitHub's own ``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``, ``GITHUB_BASE_REF`` and
``RUNNER_TEMP`` and ``GITHUB_EVENT_NAME`` are read as the runner sets them. Every input is validated before
kvlint runs (:func:`validate_inputs`): a bad one is a one-line ``::error::`` and exit 2. Reference: GitHub Docs, "Workflow commands for GitHub
Actions" (annotations, step summary, output parameters).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ENV_INPUTS",
    "build_command",
    "changed_lines",
    "main",
    "parse_unified_diff",
    "run_action",
    "validate_inputs",
]

#: Environment variables the Action's steps set from its inputs (``action.yml`` ``env:``).
ENV_INPUTS = (
    "KVLINT_PATHS",
    "KVLINT_CONFIG",
    "KVLINT_FORMATS",
    "KVLINT_FAIL_ON",
    "KVLINT_OFFLINE",
    "KVLINT_SARIF",
    "KVLINT_ANNOTATE",
    "KVLINT_BASE_REF",
    "KVLINT_ARGS",
    "KVLINT_COMMAND",
)

_FAIL_ON = ("error", "warning", "info", "never", "none")
_ANNOTATE = ("changed", "all", "none")
_BOOL_WORDS = ("", "1", "0", "true", "false", "yes", "no", "on", "off")
_PR_EVENTS = ("pull_request", "pull_request_target")

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def build_command(env: Mapping[str, str], json_path: str, markdown_path: str) -> list[str]:
    """The ``kvlint check`` command line for the Action's inputs in ``env``.

    Always writes JSON to ``json_path`` and Markdown to ``markdown_path`` (read back by
    :func:`run_action`), plus SARIF to ``KVLINT_SARIF`` unless it is empty, then the extra reports.
    Raises:
        ValueError: ``KVLINT_COMMAND`` or ``KVLINT_ARGS`` cannot be split into shell words (call
            :func:`validate_inputs` first for a one-line message).
    """
    cmd = shlex.split(env.get("KVLINT_COMMAND", "")) or [sys.executable, "-m", "kvlint"]
    cmd += ["check", "--format", f"json={json_path}", "--format", f"markdown={markdown_path}"]
    sarif = env.get("KVLINT_SARIF", "kvlint.sarif").strip()
    if sarif:
        cmd += ["--format", f"sarif={sarif}"]
    for extra in env.get("KVLINT_FORMATS", "").split():
        cmd += ["--format", extra]
    if env.get("KVLINT_CONFIG", "").strip():
        cmd += ["--config", env["KVLINT_CONFIG"].strip()]
    if env.get("KVLINT_FAIL_ON", "").strip():
        cmd += ["--fail-on", env["KVLINT_FAIL_ON"].strip().lower()]
    if env.get("KVLINT_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        cmd.append("--offline")
    cmd += shlex.split(env.get("KVLINT_ARGS", ""))
    # ``--`` ends the options: a path named like an option (``--format=...``) stays a path
    cmd += ["--", *(env.get("KVLINT_PATHS", "").split() or ["."])]
    return cmd


def _words(env: Mapping[str, str], name: str) -> tuple[list[str], str | None]:
    """``env[name]`` split into shell words, or ``([], error message)`` when it cannot be split."""
    try:
        return shlex.split(env.get(name, "")), None
    except ValueError as exc:
        return [], f"{name}: cannot split {env.get(name, '')!r} into shell words ({exc}); check the quoting"


def _writable_file(name: str, path: str, cwd: str) -> str | None:
    """Error message when ``path`` (set by ``name``) cannot be created or appended to, else None."""
    full = os.path.join(cwd, path)
    if os.path.isdir(full):
        return f"{name}: {path} is a directory, not a file"
    parent = os.path.dirname(full) or "."
    if not os.path.isdir(parent):
        return f"{name}: directory {os.path.dirname(path) or '.'} of {path} does not exist"
    if not os.access(parent, os.W_OK) or (os.path.exists(full) and not os.access(full, os.W_OK)):
        return f"{name}: {path} is not writable"
    return None


def validate_inputs(env: Mapping[str, str], cwd: str = ".") -> list[str]:
    """Check every Action input in ``env`` before kvlint runs; returns one-line error messages ([] = fine).

    Checked: ``KVLINT_COMMAND``/``KVLINT_ARGS`` split into shell words (``shlex``); ``KVLINT_FAIL_ON`` is
    one of error/warning/info/never/none; ``KVLINT_ANNOTATE`` one of changed/all/none; ``KVLINT_OFFLINE`` a
    boolean word; every ``KVLINT_PATHS`` entry (other than ``-``) and ``KVLINT_CONFIG`` exist relative to
    ``cwd``; ``KVLINT_FORMATS`` entries are ``NAME`` or ``NAME=FILE`` with a known report format; the files
    ``KVLINT_SARIF``, ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` can be written (their directory exists);
    ``RUNNER_TEMP`` is a directory. Never raises.
    """
    from kvlint.report import FORMATS

    errors: list[str] = []
    for name in ("KVLINT_COMMAND", "KVLINT_ARGS"):
        err = _words(env, name)[1]
        if err:
            errors.append(err)
    fail_on = env.get("KVLINT_FAIL_ON", "").strip()
    if fail_on and fail_on.lower() not in _FAIL_ON:
        errors.append(f"KVLINT_FAIL_ON: {fail_on!r} is not one of {', '.join(_FAIL_ON)}")
    annotate = env.get("KVLINT_ANNOTATE", "").strip()
    if annotate and annotate.lower() not in _ANNOTATE:
        errors.append(f"KVLINT_ANNOTATE: {annotate!r} is not one of {', '.join(_ANNOTATE)}")
    offline = env.get("KVLINT_OFFLINE", "").strip()
    if offline.lower() not in _BOOL_WORDS:
        errors.append(f"KVLINT_OFFLINE: {offline!r} is not a boolean (true or false)")
    for path in env.get("KVLINT_PATHS", "").split():
        if path != "-" and not os.path.exists(os.path.join(cwd, path)):
            errors.append(f"KVLINT_PATHS: {path}: no such file or directory")
    config = env.get("KVLINT_CONFIG", "").strip()
    if config and not os.path.isfile(os.path.join(cwd, config)):
        errors.append(f"KVLINT_CONFIG: {config}: no such file")
    for extra in env.get("KVLINT_FORMATS", "").split():
        fmt, sep, target = extra.partition("=")
        if fmt not in FORMATS:
            errors.append(
                f"KVLINT_FORMATS: {extra!r}: unknown format {fmt!r} (choose from {', '.join(FORMATS)})"
            )
        elif sep and not target:
            errors.append(f"KVLINT_FORMATS: {extra!r}: missing file name after '='")
        elif target:
            err = _writable_file("KVLINT_FORMATS", target, cwd)
            if err:
                errors.append(err)
    for name, default in (
        ("KVLINT_SARIF", "kvlint.sarif"),
        ("GITHUB_OUTPUT", ""),
        ("GITHUB_STEP_SUMMARY", ""),
    ):
        target = env.get(name, default).strip()
        if target:
            err = _writable_file(name, target, cwd)
            if err:
                errors.append(err)
    base_ref = env.get("KVLINT_BASE_REF", "").strip()
    if base_ref.startswith("-"):
        errors.append(f"KVLINT_BASE_REF: {base_ref!r} is not a git ref (it starts with '-')")
    temp = env.get("RUNNER_TEMP", "").strip()
    if temp and not os.path.isdir(temp):
        errors.append(f"RUNNER_TEMP: {temp} is not a directory")
    return errors


def parse_unified_diff(text: str) -> dict[str, set[int]]:
    """Added/changed line numbers (1-based, new side) per file from ``git diff --unified=0`` output.

    File names are as git prints them after ``+++ b/`` (relative to the repository root); deleted files
    (``+++ /dev/null``) and pure deletions (``+c,0``) contribute nothing.
    """
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            if name.startswith('"') and name.endswith('"'):
                name = name[1:-1]
            current = None if name == "/dev/null" else (name[2:] if name.startswith("b/") else name)
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start = int(m.group(1))
            count = int(m.group(2)) if m.group(2) is not None else 1
            out.setdefault(current, set()).update(range(start, start + count))
    return out


def changed_lines(base_ref: str, cwd: str = ".") -> tuple[str, dict[str, set[int]]] | None:
    """``(repository root, {path relative to root: changed lines})`` of the working tree against the
    merge base of ``base_ref`` and ``HEAD`` (``base_ref`` itself when there is no merge base, e.g. in a
    shallow clone), or None when git cannot tell (not a repository, unknown ref)."""

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
        except OSError:
            return None
        return proc.stdout if proc.returncode == 0 else None

    if base_ref.startswith("-"):
        return None  # not a ref (git refuses names starting with "-"); never let it reach git as an option
    root = git("rev-parse", "--show-toplevel")
    if root is None or git("rev-parse", "--verify", "--quiet", base_ref + "^{commit}") is None:
        return None
    base = (git("merge-base", base_ref, "HEAD") or base_ref).strip()
    diff = git("diff", "--unified=0", "--no-color", "--no-ext-diff", base, "--")
    if diff is None:
        return None
    return root.strip(), parse_unified_diff(diff)


def _write_outputs(path: str | None, values: Mapping[str, Any]) -> str | None:
    """Append ``key=value`` lines to ``path`` (``$GITHUB_OUTPUT``); returns an error message on failure."""
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as fh:
            for k, v in values.items():
                fh.write(f"{k}={v}\n")
    except OSError as exc:
        return f"GITHUB_OUTPUT: cannot write {path}: {exc.strerror or exc}"
    return None


def _diagnostic(d: Mapping[str, Any]) -> Any:
    from kvlint.source import Loc
    from kvlint.types import Diagnostic

    loc = Loc(str(d["file"]), int(d.get("line") or 1), int(d.get("column") or 1)) if d.get("file") else None
    return Diagnostic(
        rule=str(d.get("rule", "")),
        severity=d.get("severity", "warning"),
        message=str(d.get("message", "")),
        loc=loc,
        fix=str(d.get("fix") or ""),
        object=str(d.get("object") or ""),
        container=str(d.get("container") or ""),
    )


def run_action(env: Mapping[str, str] | None = None, *, cwd: str = ".", out: Any = None) -> int:
    """Run the Action once; returns the exit status (0, 1 or 2). See the module docstring for inputs.

    Annotations and messages go to ``out`` (default ``sys.stdout``), which the Actions runner reads.
    Every input is checked first by :func:`validate_inputs`; each problem is one ``::error::`` line and the
    status is 2. A kvlint usage error (exit 2) prints kvlint's own stderr and an ``::error::`` command with
    its ``Error:`` line. On a pull request (``GITHUB_EVENT_NAME``) without a base ref, or when the base ref
    cannot be diffed, a ``::notice::`` says that every finding is annotated. Never raises for bad input.
    """
    env = dict(os.environ if env is None else env)
    out = out or sys.stdout
    from kvlint.report.github import escape_data, format_command
    from kvlint.rules.catalog import load_catalog

    def fail(messages: list[str], code: int = 2) -> int:
        for m in messages:
            print(f"::error title=kvlint::{escape_data(m)}", file=out)
        output = env.get("GITHUB_OUTPUT", "").strip()
        if output and _writable_file("GITHUB_OUTPUT", output, cwd) is None:
            err = _write_outputs(output, {"exit-code": code})
            if err:
                print(f"::error title=kvlint::{escape_data(err)}", file=out)
        return code

    problems = validate_inputs(env, cwd)
    if problems:
        return fail(problems)
    try:
        tmp = tempfile.mkdtemp(prefix="kvlint-action-", dir=env.get("RUNNER_TEMP") or None)
    except OSError as exc:
        return fail([f"cannot create a temporary directory: {exc.strerror or exc}"])
    json_path = os.path.join(tmp, "kvlint.json")
    md_path = os.path.join(tmp, "kvlint.md")
    cmd = build_command(env, json_path, md_path)
    sarif = env.get("KVLINT_SARIF", "kvlint.sarif").strip()
    print(f"kvlint: {shlex.join(cmd)}", file=out)
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    except OSError as exc:
        return fail([f"cannot run {cmd[0]}: {exc.strerror or exc} (check KVLINT_COMMAND)"])
    if proc.stdout:
        print(proc.stdout.rstrip("\n"), file=out)
    code = proc.returncode
    if code not in (0, 1) or not os.path.isfile(json_path):
        # show kvlint's own message in full, then one annotation with its last "Error: ..." line
        stderr = proc.stderr.strip()
        if stderr:
            print(stderr, file=out)
        err_lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        headline = next(
            (ln for ln in reversed(err_lines) if ln.lower().startswith("error")),
            err_lines[-1] if err_lines else "",
        )
        return fail([headline or f"kvlint exited with status {code}"], code if code not in (0, 1) else 2)
    if proc.stderr:
        print(proc.stderr.rstrip("\n"), file=sys.stderr)
    with open(json_path, encoding="utf-8") as fh:
        report = json.load(fh)
    diags = [_diagnostic(d) for d in report.get("diagnostics", [])]

    mode = env.get("KVLINT_ANNOTATE", "changed").strip().lower() or "changed"
    base_ref = env.get("KVLINT_BASE_REF", "").strip()
    if not base_ref and env.get("GITHUB_BASE_REF", "").strip():
        base_ref = "origin/" + env["GITHUB_BASE_REF"].strip()
    changed: tuple[str, dict[str, set[int]]] | None = None
    if mode == "changed" and not base_ref and env.get("GITHUB_EVENT_NAME", "") in _PR_EVENTS:
        print(
            "::notice title=kvlint::pull request without a base ref (neither KVLINT_BASE_REF nor "
            "GITHUB_BASE_REF is set); annotating every finding",
            file=out,
        )
    if mode == "changed" and base_ref:
        changed = changed_lines(base_ref, cwd)
        if changed is None:
            print(
                f"::notice title=kvlint::cannot diff against {escape_data(base_ref)} (fetch it, e.g. "
                f"actions/checkout with fetch-depth: 0); annotating every finding",
                file=out,
            )
    names = {k: v.name for k, v in load_catalog().items()}
    annotated = 0
    if mode != "none":
        for d in diags:
            if changed is not None and d.loc is not None:
                root, lines = changed
                rel = os.path.relpath(os.path.abspath(os.path.join(cwd, d.loc.file)), root).replace(
                    os.sep, "/"
                )
                if d.loc.line not in lines.get(rel, ()):
                    continue
            print(format_command(d, names.get(d.rule, "")), file=out)
            annotated += 1

    summary_path = env.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(md_path, encoding="utf-8") as fh:
                markdown = fh.read()
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(markdown if markdown.endswith("\n") else markdown + "\n")
        except OSError as exc:
            print(f"::warning title=kvlint::cannot write the step summary: {escape_data(str(exc))}", file=out)
    summary = report.get("summary", {})
    counts = {
        "errors": int(summary.get("error", 0)),
        "warnings": int(summary.get("warning", 0)),
        "infos": int(summary.get("info", 0)),
    }
    err = _write_outputs(
        env.get("GITHUB_OUTPUT"),
        {
            **counts,
            "findings": len(diags),
            "suppressed": int(summary.get("suppressed", 0)),
            "annotated": annotated,
            "sarif": sarif,
            "exit-code": code,
        },
    )
    if err:
        print(f"::error title=kvlint::{escape_data(err)}", file=out)
        return 2
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m kvlint.action`` (takes no arguments; reads the environment)."""
    if argv:
        print("usage: python -m kvlint.action   (inputs come from KVLINT_* environment variables)")
        return 2
    return run_action()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
