"""The logic of kvlint's GitHub Action (``action.yml``), runnable and testable on its own.

``python -m kvlint.action`` runs ``kvlint check`` on the checked-out revision (JSON, text, Markdown and,
optionally, SARIF reports) and, when a base is known (a pull request's base branch, or ``KVLINT_BASE_REF``),
once more on the base revision (materialised with ``git archive``: the work tree is left alone), then:

1. prints the **text report** in the log, folded in a group, then the findings the change **introduces**
   and those **pre-existing** on the base (compared by :mod:`kvlint.fingerprint`: rule, workload,
   container, setting, never the line), the **capacity diff** of the workloads the change touches
   (:mod:`kvlint.prdiff`) and one line giving the **reason for the exit status**;
2. prints GitHub workflow commands (annotations) for the findings, at their **cause**: the first of the
   finding's line and its sources (:mod:`kvlint.origins`: the Helm values line, the kustomize patch) that
   the change touched, else a changed line of the same YAML document or of the chart's values files.
   In ``changed`` mode (default) new findings are annotated (at their own line when no changed line is
   connected to them) and pre-existing ones only when the change touched their line; without a base,
   findings on changed lines (every finding when git cannot diff). GitHub shows at most
   :data:`ANNOTATION_CAP` annotations of each kind per step: errors are printed first, and the summary
   says when the cap is passed;
3. appends the Markdown summary to ``$GITHUB_STEP_SUMMARY`` (result, capacity diff, findings marked new
   or pre-existing with the arithmetic folded, per-workload memory); above :data:`SUMMARY_LIMIT` bytes
   (GitHub drops a larger step summary whole) it is truncated with a note pointing at the full report,
   which is always written to ``KVLINT_REPORT_DIR`` for ``actions/upload-artifact``;
4. writes outputs to ``$GITHUB_OUTPUT``: ``errors``, ``warnings``, ``infos``, ``findings`` (reported
   findings), ``new``, ``pre-existing``, ``suppressed``, ``annotated``, ``sarif``, ``report-dir``,
   ``summary-truncated`` and ``exit-code``;
5. exits 0 or 1, or 2 on a usage/configuration error. With a base and ``KVLINT_NEW_ONLY`` (default
   true), the step fails only when a *new* finding is at or above ``fail-on``; otherwise on any.

Inputs come from environment variables (``action.yml`` maps the Action's inputs to them):
``KVLINT_PATHS`` (whitespace-separated, default ``.``), ``KVLINT_CONFIG``, ``KVLINT_FORMATS`` (extra
``NAME=FILE`` reports, whitespace-separated), ``KVLINT_FAIL_ON`` (unset: each file's ``.kvlint.yaml``
``fail_on``, else ``error``, as ``kvlint check`` without ``--fail-on``; the JSON report's ``fails`` says which
findings are at or above it; a ``--fail-on`` in ``KVLINT_ARGS`` stands for it when it is unset, and it wins over one
there when set, with a ``::warning::``: :func:`fail_on_of`), ``KVLINT_OFFLINE``
(``true``: never ask the Hugging Face Hub), ``KVLINT_SARIF`` (SARIF file, default ``kvlint.sarif``; empty:
none), ``KVLINT_ANNOTATE`` (``changed`` default, ``all``, ``none``), ``KVLINT_BASE_REF`` (else
``origin/$GITHUB_BASE_REF`` on pull requests), ``KVLINT_NEW_ONLY`` (default ``true``), ``KVLINT_ARGS``
(more ``kvlint check`` arguments, shell words, e.g. ``--helm-values prod.yaml``), ``KVLINT_REPORT_DIR``
(default ``$RUNNER_TEMP/kvlint-report``), ``KVLINT_SUMMARY_LIMIT`` (bytes, default 1 MiB) and
``KVLINT_COMMAND`` (how to run kvlint; default this Python with the installed ``kvlint``),
``KVLINT_ARTIFACT`` (the full report's artifact name, for the note of a truncated summary) and
``KVLINT_RULES_DOC_URL`` (passed to kvlint: rule links in SARIF, see :func:`kvlint.report.sarif.rule_doc_uri`). GitHub's own
``GITHUB_STEP_SUMMARY``, ``GITHUB_OUTPUT``, ``GITHUB_BASE_REF``, ``GITHUB_EVENT_NAME``, ``RUNNER_TEMP``
and, for the link to the full report, ``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY`` and ``GITHUB_RUN_ID``
are read as the runner sets them. Every input is validated before kvlint runs (:func:`validate_inputs`):
a bad one is a one-line ``::error::`` and exit 2. References: GitHub Docs, "Workflow commands for GitHub
Actions" (annotations, step summary, output parameters); actions/toolkit docs/problem-matchers.md
("Limitations": 10 warning, 10 error and 10 notice annotations per step, 50 per job).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvlint.prdiff import default_command
from kvlint.values import digits

__all__ = [
    "ANNOTATION_CAP",
    "ENV_INPUTS",
    "SUMMARY_LIMIT",
    "build_command",
    "changed_lines",
    "default_command",
    "main",
    "parse_unified_diff",
    "print_inert",
    "run_action",
    "shown_command",
    "truncate_summary",
    "unquote_git_path",
    "validate_inputs",
]

#: GitHub shows at most this many annotations of each kind (error, warning, notice) per step.
ANNOTATION_CAP = 10
#: GitHub drops a step summary larger than this many bytes (1 MiB) whole.
SUMMARY_LIMIT = 1024 * 1024

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
    "KVLINT_NEW_ONLY",
    "KVLINT_ARGS",
    "KVLINT_REPORT_DIR",
    "KVLINT_SUMMARY_LIMIT",
    "KVLINT_COMMAND",
    "KVLINT_RULES_DOC_URL",
    "KVLINT_ARTIFACT",
)

_FAIL_ON = ("error", "warning", "info", "never", "none")
_ANNOTATE = ("changed", "all", "none")
_BOOL_WORDS = ("", "1", "0", "true", "false", "yes", "no", "on", "off")
_PR_EVENTS = ("pull_request", "pull_request_target")

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def _truthy(value: str, default: bool) -> bool:
    v = value.strip().lower()
    return default if not v else v in ("1", "true", "yes", "on")


def print_inert(text: str, out: Any) -> None:
    """Print ``text`` (kvlint's reports, its stderr: file names and manifest values a pull request chose) to
    ``out`` between ``::stop-commands::TOKEN`` and ``::TOKEN::``, so the runner takes no line of it for a
    workflow command (an annotation, ``::add-mask::``, ``::set-output``, ``::stop-commands::``), whatever it
    holds. The runner reads a command on any line that starts with ``::`` after leading whitespace; kvlint
    escapes line breaks in what it quotes, and this holds also for what it does not foresee (a wrapped line, a
    path given by a changed-files step, helm's own messages). ``TOKEN`` is random per block, so the text
    cannot end the block. Reference: GitHub Docs, "Workflow commands for GitHub Actions", "Stopping and
    starting workflow commands" (actions/runner, ``ActionCommandManager``); empty text prints nothing."""
    text = text.rstrip("\n")
    if not text:
        return
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", file=out)
    print(text, file=out)
    print(f"::{token}::", file=out)


def build_command(
    env: Mapping[str, str], json_path: str, markdown_path: str, text_path: str = ""
) -> list[str]:
    """The ``kvlint check`` command line for the Action's inputs in ``env``.

    Always writes JSON to ``json_path`` and Markdown to ``markdown_path`` (read back by
    :func:`run_action`), text to ``text_path`` when given, SARIF to ``KVLINT_SARIF`` unless it is empty,
    then the extra reports.
    Raises:
        ValueError: ``KVLINT_COMMAND`` or ``KVLINT_ARGS`` cannot be split into shell words (call
            :func:`validate_inputs` first for a one-line message).
    """
    cmd = shlex.split(env.get("KVLINT_COMMAND", "")) or default_command()
    cmd += ["check", "--format", f"json={json_path}", "--format", f"markdown={markdown_path}"]
    if text_path:
        cmd += ["--format", f"text={text_path}"]
    sarif = env.get("KVLINT_SARIF", "kvlint.sarif").strip()
    if sarif:
        cmd += ["--format", f"sarif={sarif}"]
    for extra in env.get("KVLINT_FORMATS", "").split():
        cmd += ["--format", extra]
    cmd += _shared_args(env)
    return cmd


def shown_command(cmd: Sequence[str]) -> str:
    """``cmd`` as the log shows it: the default way of running the installed kvlint (this Python, a ``-c``
    program that takes the current directory off ``sys.path``) is shown as ``kvlint``, so the line can be
    pasted into a shell where kvlint-k8s is installed; a ``KVLINT_COMMAND`` is shown as given. Shell
    quoting (``shlex.join``) keeps each argument one word; :func:`run_action` prints the line between
    stop-commands markers (:func:`print_inert`), since an argument of ``KVLINT_ARGS`` may hold a line break."""
    default = default_command()
    if list(cmd[: len(default)]) == default:
        return shlex.join(["kvlint", *cmd[len(default) :]])
    return shlex.join(cmd)


def _split_fail_on(words: Sequence[str]) -> tuple[str | None, list[str], str | None]:
    """``(value, the other words, error)``: the ``--fail-on`` of ``KVLINT_ARGS`` words (``--fail-on X`` or
    ``--fail-on=X``; the last one when repeated, as ``kvlint check`` takes it), lower-cased, else None; the words
    without it; an error message when one has no value. Words after ``--`` are paths, left alone."""
    value: str | None = None
    rest: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            rest += words[i:]
            break
        if w == "--fail-on":
            if i + 1 >= len(words) or words[i + 1] == "--":
                return value, rest + list(words[i + 1 :]), "KVLINT_ARGS: --fail-on needs a value"
            value = words[i + 1].strip().lower()
            i += 2
            continue
        if w.startswith("--fail-on="):
            value = w.split("=", 1)[1].strip().lower()
        else:
            rest.append(w)
        i += 1
    return value, rest, None


def fail_on_of(env: Mapping[str, str]) -> tuple[str, str]:
    """``(threshold, where it comes from)`` of the step: the ``fail-on`` input (``KVLINT_FAIL_ON``) when set,
    ``"input"``; else a ``--fail-on`` in the ``args`` input (``KVLINT_ARGS``), ``"args"``; else ``("", "")``, each
    file's ``.kvlint.yaml`` ``fail_on`` (else ``error``) deciding, as ``kvlint check`` without ``--fail-on``. The input
    wins over ``args``: it is the Action's own setting, and the step's pass/fail and its reason line read one
    threshold (docs/ci.md). ``KVLINT_ARGS`` that cannot be split count as holding none (:func:`validate_inputs`
    reports them)."""
    given = env.get("KVLINT_FAIL_ON", "").strip().lower()
    if given:
        return given, "input"
    words, err = _words(env, "KVLINT_ARGS")
    value = None if err else _split_fail_on(words)[0]
    return (value, "args") if value else ("", "")


def _shared_args(env: Mapping[str, str], cwd: str | None = None) -> list[str]:
    """Arguments the head and the base runs share (config, fail-on, offline, extra args, paths); with
    ``cwd`` (the base tree), paths and the config file that do not exist there are left out. The threshold is
    :func:`fail_on_of`'s, given once: a ``--fail-on`` of ``KVLINT_ARGS`` is taken out of the extra args (with the
    ``fail-on`` input set, it would have been the one kvlint read, the last, while the step read the input's). Paths
    after a ``--`` in ``KVLINT_ARGS`` are given with the ``paths`` input's, after one ``--``."""
    args: list[str] = []
    config = env.get("KVLINT_CONFIG", "").strip()
    if config and (cwd is None or os.path.isfile(os.path.join(cwd, config))):
        args += ["--config", config]
    fail_on = fail_on_of(env)[0]
    if fail_on:
        args += ["--fail-on", fail_on]
    if env.get("KVLINT_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        args.append("--offline")
    extra = _split_fail_on(shlex.split(env.get("KVLINT_ARGS", "")))[1]
    # paths after a "--" of KVLINT_ARGS join the paths input's, after the one "--" below (a second "--" would be
    # read as a path named "--": "--: no such file or directory")
    after = extra.index("--") if "--" in extra else len(extra)
    args += extra[:after]
    paths = env.get("KVLINT_PATHS", "").split() or ["."]
    paths += extra[after + 1 :]
    if cwd is not None:
        paths = [p for p in paths if p == "-" or os.path.exists(os.path.join(cwd, p))]
    # ``--`` ends the options: a path named like an option (``--format=...``) stays a path
    return [*args, "--", *paths]


def _words(env: Mapping[str, str], name: str) -> tuple[list[str], str | None]:
    """``env[name]`` split into shell words, or ``([], error message)`` when it cannot be split."""
    try:
        return shlex.split(env.get(name, "")), None
    except ValueError as exc:
        return [], f"{name}: cannot split {env.get(name, '')!r} into shell words ({exc}); check the quoting"


def _through_link(path: str, cwd: str) -> str | None:
    """The symbolic link (as a path) that writing ``path`` would go through, else None: in the workspace
    ``cwd`` (the checked-out pull request) any component below ``cwd``, outside it the file itself."""
    root = os.path.abspath(cwd)
    full = os.path.normpath(os.path.join(root, path))
    if os.path.commonpath([full, root]) != root:
        return full if os.path.islink(full) else None
    current = root
    for part in os.path.relpath(full, root).split(os.sep):
        current = os.path.join(current, part)
        if part not in ("", ".") and os.path.islink(current):
            return os.path.relpath(current, root)
    return None


def _writable_file(name: str, path: str, cwd: str) -> str | None:
    """Error message when ``path`` (set by ``name``) cannot be created or appended to, or would be written
    through a symbolic link (a pull request that adds ``kvlint.sarif`` as a link to a file of the runner
    would have kvlint overwrite that file), else None."""
    full = os.path.join(cwd, path)
    link = _through_link(path, cwd)
    if link is not None:
        return (
            f"{name}: {path} would be written through the symbolic link {link} (a pull request can add one "
            "to point anywhere the runner can write); kvlint does not follow it: remove the link or choose "
            "another file"
        )
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
    ``cwd``, and ``KVLINT_CONFIG`` is read as kvlint reads a discovered configuration (it is the checked-out
    pull request's file: :func:`kvlint.config.load_config`); ``KVLINT_FORMATS`` entries are ``NAME`` or
    ``NAME=FILE`` with a known report format; the files
    ``KVLINT_SARIF``, ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` can be written (their directory exists)
    and none of them, nor a ``KVLINT_FORMATS`` file, is reached through a symbolic link in the workspace;
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
    words, split_err = _words(env, "KVLINT_ARGS")
    if not split_err:
        in_args, _, err = _split_fail_on(words)
        if err:
            errors.append(err)
        elif in_args is not None and in_args not in _FAIL_ON:
            errors.append(f"KVLINT_ARGS: --fail-on {in_args!r} is not one of {', '.join(_FAIL_ON)}")
    annotate = env.get("KVLINT_ANNOTATE", "").strip()
    if annotate and annotate.lower() not in _ANNOTATE:
        errors.append(f"KVLINT_ANNOTATE: {annotate!r} is not one of {', '.join(_ANNOTATE)}")
    for name in ("KVLINT_OFFLINE", "KVLINT_NEW_ONLY"):
        flag = env.get(name, "").strip()
        if flag.lower() not in _BOOL_WORDS:
            errors.append(f"{name}: {flag!r} is not a boolean (true or false)")
    limit = env.get("KVLINT_SUMMARY_LIMIT", "").strip()
    if limit and not ((digits(limit) or 0) >= 4096):  # ASCII digits: int() refuses "²" and 5,000 digits
        errors.append(f"KVLINT_SUMMARY_LIMIT: {limit!r} is not a number of bytes (4096 or more)")
    for path in env.get("KVLINT_PATHS", "").split():
        if path != "-" and not os.path.exists(os.path.join(cwd, path)):
            errors.append(f"KVLINT_PATHS: {path}: no such file or directory")
    config = env.get("KVLINT_CONFIG", "").strip()
    if config and not os.path.isfile(os.path.join(cwd, config)):
        errors.append(f"KVLINT_CONFIG: {config}: no such file")
    elif config:
        # the file is the checked-out pull request's: held to its repository as a discovered one is (no
        # symlink out of its directory, no model directory outside the repository)
        from kvlint.config import ConfigError, load_config

        try:
            load_config(os.path.join(cwd, config), discovered=True)
        except ConfigError as exc:
            errors.append(f"KVLINT_CONFIG: {exc}")
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


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def unquote_git_path(name: str) -> str:
    """A path as git prints it in a diff header, unquoted: ``"b/d\\303\\251ploy.yaml"`` (git's C-style
    quoting of paths with non-ASCII bytes or special characters, ``core.quotePath``) -> ``b/déploy.yaml``.
    Unquoted names are returned as they are."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    body = name[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
        out += ch.encode("utf-8")
        i += 1
    return out.decode("utf-8", errors="replace")


def parse_unified_diff(text: str) -> dict[str, set[int]]:
    """Added/changed line numbers (1-based, new side) per file from ``git diff --unified=0`` output.

    File names are as git prints them after ``+++ b/`` (relative to the repository root), unquoted when
    git quoted them (:func:`unquote_git_path`: non-ASCII paths keep their annotations); deleted files
    (``+++ /dev/null``) and pure deletions (``+c,0``) contribute nothing.
    """
    out: dict[str, set[int]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            name = unquote_git_path(line[4:].rstrip("\t").strip())
            current = None if name == "/dev/null" else (name[2:] if name.startswith("b/") else name)
            continue
        m = _HUNK.match(line)
        if m and current is not None:
            start = int(m.group(1))
            count = int(m.group(2)) if m.group(2) is not None else 1
            out.setdefault(current, set()).update(range(start, start + count))
    return out


def _git(cwd: str, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=cwd, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def changed_lines(base_ref: str, cwd: str = ".") -> tuple[str, dict[str, set[int]]] | None:
    """``(repository root, {path relative to root: changed lines})`` of the working tree against the
    merge base of ``base_ref`` and ``HEAD`` (``base_ref`` itself when there is no merge base, e.g. in a
    shallow clone), or None when git cannot tell (not a repository, unknown ref)."""
    found = _diff_base(base_ref, cwd)
    if found is None:
        return None
    root, base = found
    diff = _git(cwd, "diff", "--unified=0", "--no-color", "--no-ext-diff", base, "--")
    if diff is None:
        return None
    return root, parse_unified_diff(diff)


def _diff_base(base_ref: str, cwd: str) -> tuple[str, str] | None:
    """``(repository root, commit to compare with)``: the merge base of ``base_ref`` and ``HEAD``, else
    ``base_ref``'s commit; None when git cannot tell, or ``base_ref`` is not a ref (git refuses names starting
    with "-": it never reaches git as an option)."""
    if base_ref.startswith("-"):
        return None
    root = _git(cwd, "rev-parse", "--show-toplevel")
    commit = _git(cwd, "rev-parse", "--verify", "--quiet", base_ref + "^{commit}")
    if root is None or commit is None:
        return None
    base = (_git(cwd, "merge-base", base_ref, "HEAD") or commit).strip()
    return root.strip(), base


def _write_outputs(path: str | None, values: Mapping[str, Any]) -> str | None:
    """Append ``key=value`` lines to ``path`` (``$GITHUB_OUTPUT``); returns an error message on failure.

    A value holding a line break (a ``sarif`` file name the workflow passed) is written in the runner's multiline
    form, ``key<<DELIMITER``, its lines, ``DELIMITER``, with a random delimiter it cannot hold, so no line of it is
    read as another output (GitHub Docs, "Workflow commands for GitHub Actions", "Multiline strings")."""
    if not path:
        return None
    try:
        with open(path, "a", encoding="utf-8") as fh:
            for k, v in values.items():
                text = str(v)
                if "\n" in text or "\r" in text:
                    delimiter = f"kvlint_{secrets.token_hex(16)}"
                    fh.write(f"{k}<<{delimiter}\n{text}\n{delimiter}\n")
                else:
                    fh.write(f"{k}={text}\n")
    except OSError as exc:
        return f"GITHUB_OUTPUT: cannot write {path}: {exc.strerror or exc}"
    return None


def _diagnostic(d: Mapping[str, Any]) -> Any:
    """A JSON diagnostic dict back as a :class:`~kvlint.types.Diagnostic` (with its sources, and its explicit short
    statement: the JSON ``summary`` when it is not the message's own first clause, so the log words the finding as
    ``kvlint check`` does)."""
    from kvlint.source import Loc
    from kvlint.statement import statement_of
    from kvlint.types import Diagnostic, findings_stood_for

    loc = Loc(str(d["file"]), int(d.get("line") or 1), int(d.get("column") or 1)) if d.get("file") else None
    sources = tuple(
        Loc(str(s["file"]), int(s.get("line") or 1), int(s.get("column") or 1))
        for s in d.get("sources") or []
        if s.get("file")
    )
    message = str(d.get("message", ""))
    summary = d.get("summary")
    explicit = summary if isinstance(summary, str) and summary and summary != statement_of(message) else ""
    return Diagnostic(
        rule=str(d.get("rule", "")),
        severity=d.get("severity", "warning"),
        message=message,
        summary=explicit,
        loc=loc,
        fix=str(d.get("fix") or ""),
        object=str(d.get("object") or ""),
        container=str(d.get("container") or ""),
        setting=str(d.get("setting") or ""),
        sources=sources,
        sources_more=int(d.get("sources_more") or 0),
        stands_for=findings_stood_for(d),
    )


def _counted(diags: Sequence[Any]) -> int:
    """How many findings ``diags`` are, each counting the findings it stands for (the finding for the rest past the
    first 50 of a rule in a container, :mod:`kvlint.findcap`), as the report's summary counts them: the step's
    ``errors`` output counted 120 where ``findings`` counted 51."""
    from kvlint.types import findings_stood_for

    return sum(findings_stood_for(d) for d in diags)


# ---------------------------------------------------------------------------------------------------------
# where to annotate


@dataclass
class _Changes:
    """The change under review: repository root, changed lines per root-relative path, the cwd."""

    root: str
    lines: dict[str, set[int]]
    cwd: str

    def rel(self, path: str) -> str:
        """``path`` (relative to the cwd, as kvlint prints it) relative to the repository root."""
        full = os.path.abspath(os.path.join(self.cwd, path))
        return os.path.relpath(full, self.root).replace(os.sep, "/")

    def touched(self, path: str, line: int) -> bool:
        return line in self.lines.get(self.rel(path), ())

    def in_file(self, path: str, first: int, last: int) -> list[int]:
        return sorted(n for n in self.lines.get(self.rel(path), ()) if first <= n <= last)


def _document_span(path: str, line: int) -> tuple[int, int]:
    """First and last line of the YAML document (between ``---`` separators) holding ``line``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read().split("\n")
    except OSError:
        return line, line
    first, last = 1, len(text)
    for i, t in enumerate(text, 1):
        if t.rstrip() == "---" or t.startswith("--- "):
            if i < line:
                first = i + 1
            elif i > line:
                last = i - 1
                break
    return first, last


def _chart_values(path: str, values_files: Sequence[str]) -> list[str]:
    """The values files of the chart whose ``templates/`` hold ``path`` (``values.yaml``, then
    ``--helm-values`` files), relative to the cwd; [] outside a chart."""
    parts = os.path.normpath(path).split(os.sep)
    if "templates" not in parts:
        return []
    i = len(parts) - 1 - parts[::-1].index("templates")
    chart = os.sep.join(parts[:i]) or "."
    if not os.path.isfile(os.path.join(chart, "Chart.yaml")):
        return []
    return [os.path.join(chart, "values.yaml"), *values_files]


def annotation_site(
    d: Any, changes: _Changes | None, cwd: str, values_files: Sequence[str] = ()
) -> tuple[str, int, int] | None:
    """Where the change under review caused finding ``d``: ``(path, line, column)`` of the first of its
    line and its sources the change touched, else of a changed line in its YAML document, else of a
    changed line of its chart's values files; None when no changed line is connected to it."""
    if changes is None or d.loc is None:
        return None
    for loc in (d.loc, *d.sources):
        if changes.touched(loc.file, loc.line):
            return loc.file, loc.line, loc.column
    first, last = _document_span(os.path.join(cwd, d.loc.file), d.loc.line)
    near = changes.in_file(d.loc.file, first, last)
    if near:
        return d.loc.file, near[0], 1
    for values in _chart_values(d.loc.file, values_files):
        lines = changes.in_file(values, 1, 10**9)
        if lines:
            return values, lines[0], 1
    return None


def _helm_values_args(env: Mapping[str, str]) -> list[str]:
    words = shlex.split(env.get("KVLINT_ARGS", ""))
    out = []
    for i, w in enumerate(words):
        if w == "--helm-values" and i + 1 < len(words):
            out.append(words[i + 1])
        elif w.startswith("--helm-values="):
            out.append(w.split("=", 1)[1])
    return out


def _annotation(
    d: Any,
    site: tuple[str, int, int] | None,
    title: str,
    status: str,
    changes: _Changes | None,
    cwd: str = ".",
    root: str | None = None,
) -> tuple[str, str]:
    """``(command, line)``: one workflow command for ``d`` at ``site`` (else its own location); without a
    diff, ``root`` (the repository root of ``cwd``, when in one) anchors the file names as the diff's do."""
    from kvlint.report.github import _COMMAND, escape_data, escape_property, repository_path

    file, line, col = site or ((d.loc.file, d.loc.line, d.loc.column) if d.loc else ("", 0, 0))
    if changes is not None and file:
        file = changes.rel(file)
    elif file:
        file = repository_path(file, cwd, root)
    props = [f"file={escape_property(file)}", f"line={line}", f"col={col}"] if file else []
    props.append(f"title={escape_property(title)}")
    where = f" [{d.object}" + (f" container {d.container}" if d.container else "") + "]" if d.object else ""
    moved = ""
    if site is not None and d.loc is not None and (site[0], site[1]) != (d.loc.file, d.loc.line):
        moved = f" (reported at {d.loc.file}:{d.loc.line}; this line of the change is its cause)"
    body = f"{status}{d.statement}{where}{moved}"
    body += "".join(f"\n  {x}" for x in d.details) + (f"\nfix: {d.fix}" if d.fix else "")
    kind = _COMMAND.get(d.severity, "warning")
    return kind, f"::{kind} {','.join(props)}::{escape_data(body)}"


# ---------------------------------------------------------------------------------------------------------
# the step summary


def truncate_summary(
    markdown: str, limit: int = SUMMARY_LIMIT, link: str = "", artifact: str = "kvlint-report"
) -> tuple[str, bool]:
    """``(summary, truncated)``: ``markdown`` unchanged when it fits ``limit`` bytes (UTF-8), else cut at a
    line boundary, open ``<details>`` closed, and a note appended saying how much is shown and where the
    full report is (the ``artifact`` of the run at ``link``), all within ``limit``."""
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown, False
    where = f"the `{artifact}` artifact of [this run]({link})" if link else f"the `{artifact}` artifact"
    note_room = 1024
    cut = data[: limit - note_room].decode("utf-8", errors="ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    opened = cut.count("<details>") - cut.count("</details>")
    shown = len(cut.encode("utf-8"))
    note = (
        "\n" + "</details>\n" * max(0, opened) + "\n> [!WARNING]\n"
        f"> **Summary truncated**: {shown / 1024:,.0f} KiB of {len(data) / 1024:,.0f} KiB shown; GitHub drops a "
        f"step summary above {limit / 1024 / 1024:g} MiB. The full report (Markdown, JSON, text) is in {where}.\n"
    )
    return cut + note, True


@dataclass
class _Summary:
    result_line: str = ""
    capacity: str = ""
    base_label: str = ""
    findings: list[tuple[Any, str]] = field(default_factory=list)  # (diagnostic, "new" | "pre-existing" | "")
    fixed: int = 0
    workloads: str = ""
    notes: list[str] = field(default_factory=list)
    counts_line: str = ""


def _render_summary(s: _Summary) -> str:
    from kvlint.report.markdown import finding_row

    lines = ["## kvlint", "", s.result_line, "", s.counts_line]
    for note in s.notes:
        lines += ["", f"> {note}"]
    if s.capacity:
        lines += ["", f"### Capacity of the workloads this change touches ({s.base_label})", "", s.capacity]
    marked = [(d, m) for d, m in s.findings if m != "pre-existing"]
    existing = [d for d, m in s.findings if m == "pre-existing"]
    if marked:
        new_col = any(m for _, m in marked)
        lines += ["", "### New findings" if new_col else "### Findings", ""]
        lines += ["| severity | rule | location | finding | fix |", "|---|---|---|---|---|"]
        lines += [finding_row(d, "🆕 " if m == "new" else "") for d, m in marked]
    if existing:
        lines += [
            "",
            f"<details><summary>Pre-existing findings ({len(existing)}, also on the base)</summary>",
            "",
        ]
        lines += ["| severity | rule | location | finding | fix |", "|---|---|---|---|---|"]
        lines += [finding_row(d) for d in existing]
        lines += ["", "</details>"]
    if s.fixed:
        gone = "1 finding of the base is" if s.fixed == 1 else f"{s.fixed} findings of the base are"
        lines += ["", f"{gone} gone in this change."]
    if s.workloads:
        lines += ["", s.workloads.rstrip("\n")]
    return "\n".join(lines) + "\n"


def _md_code(text: str) -> str:
    """``text`` as a code span in a paragraph (:func:`kvlint.report.escape.markdown_code`: one line, a fence
    no backtick in ``text`` closes)."""
    from kvlint.report.escape import markdown_code

    return markdown_code(text, table=False)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _threshold_words(fail_on: str, summary: Mapping[str, Any]) -> str:
    """The threshold the step fails on, for its reason line: ``fail-on=X`` (the input), else what the report's
    ``summary.fail_on`` says applied: ``fail_on=warning of .kvlint.yaml``, ``fail-on=error`` (the default: the
    reason reads as it did before configurations counted), or each configuration's when they differ (``fail_on of each file's .kvlint.yaml: a/.kvlint.yaml warning, default
    error``)."""
    if fail_on:
        return f"fail-on={fail_on}"
    entries = [
        e
        for e in summary.get("fail_on") or []
        if isinstance(e, Mapping) and isinstance(e.get("threshold"), str) and isinstance(e.get("source"), str)
    ]

    def one(e: Mapping[str, Any]) -> str:
        if e["source"] == "default":
            return f"fail-on={e['threshold']}"
        return f"fail_on={e['threshold']} of {e['source']}"

    if not entries:
        return "fail-on=error"
    if len(entries) == 1:
        return one(entries[0])
    return "fail_on of each file's .kvlint.yaml: " + ", ".join(
        f"{'default' if e['source'] == 'default' else e['source']} {e['threshold']}" for e in entries
    )


def _severity_at_least(d: Any, threshold: str) -> bool:
    from kvlint.types import SEVERITY_ORDER

    if threshold in ("never", "none"):
        return False
    return SEVERITY_ORDER.get(d.severity, 0) >= SEVERITY_ORDER[threshold]


# ---------------------------------------------------------------------------------------------------------
# the run


def _base_report(
    env: Mapping[str, str], base_ref: str, cwd: str, tmp: str, out: Any
) -> tuple[dict[str, Any], str] | None:
    """kvlint's JSON report on the base revision and a label for it, or None (with a notice) when the
    base cannot be linted."""
    from kvlint.prdiff import export_tree, run_check_json
    from kvlint.report.github import escape_data

    found = _diff_base(base_ref, cwd)
    if found is None:
        return None
    _, commit = found
    try:
        base_cwd = export_tree(commit, cwd, os.path.join(tmp, "base"))
    except ValueError as exc:
        print(f"::notice title=kvlint::cannot read the base revision: {escape_data(str(exc))}", file=out)
        return None
    os.makedirs(base_cwd, exist_ok=True)
    command = shlex.split(env.get("KVLINT_COMMAND", "")) or default_command()
    args = _shared_args(env, base_cwd)
    if not any(
        p for p in env.get("KVLINT_PATHS", ".").split() or ["."] if os.path.exists(os.path.join(base_cwd, p))
    ):
        return {"diagnostics": [], "workloads": []}, f"base {commit[:12]}: the paths did not exist"
    try:
        code, report, _, stderr = run_check_json(
            command,
            ["--fail-on", "never", *_drop_fail_on(args)],
            base_cwd,
            os.path.join(tmp, "base.json"),
            env,
        )
    except ValueError as exc:  # the command could not be started
        code, report, stderr = 2, None, str(exc)
    if report is None:
        last = (stderr.strip().splitlines() or [f"exit status {code}"])[-1]
        print(
            f"::notice title=kvlint::cannot lint the base revision {commit[:12]} ({escape_data(last)}); "
            "every finding counts as new",
            file=out,
        )
        return None
    return report, f"base {commit[:12]}"


def _drop_fail_on(args: list[str]) -> list[str]:
    """``args`` without its ``--fail-on`` options (:func:`_split_fail_on`; the paths after ``--`` kept whole)."""
    return _split_fail_on(args)[1]


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
    from kvlint.prdiff import capacity_diff, compare_findings, render_capacity_markdown, render_capacity_text
    from kvlint.report.escape import markdown_text
    from kvlint.report.github import escape_data
    from kvlint.report.text import format_diagnostic
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
    text_path = os.path.join(tmp, "kvlint.txt")
    cmd = build_command(env, json_path, md_path, text_path)
    sarif = env.get("KVLINT_SARIF", "kvlint.sarif").strip()
    print_inert(f"kvlint: {shown_command(cmd)}", out)
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    except OSError as exc:
        return fail([f"cannot run {cmd[0]}: {exc.strerror or exc} (check KVLINT_COMMAND)"])
    print_inert(proc.stdout, out)
    code = proc.returncode
    if code not in (0, 1) or not os.path.isfile(json_path):
        # show kvlint's own message in full, then one annotation with its last "Error: ..." line
        stderr = proc.stderr.strip()
        print_inert(stderr, out)
        err_lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
        headline = next(
            (ln for ln in reversed(err_lines) if ln.lower().startswith("error")),
            err_lines[-1] if err_lines else "",
        )
        return fail([headline or f"kvlint exited with status {code}"], code if code not in (0, 1) else 2)
    print_inert(proc.stderr, out)  # kvlint's warnings (helm's messages among them), in order with the rest
    with open(json_path, encoding="utf-8") as fh:
        report = json.load(fh)
    head_dicts = report.get("diagnostics", [])
    diags = [_diagnostic(d) for d in head_dicts]
    summary = report.get("summary", {})
    fail_on, fail_on_from = fail_on_of(env)
    if fail_on_from == "input":
        in_args = _split_fail_on(_words(env, "KVLINT_ARGS")[0])[0]
        if in_args is not None and in_args != fail_on:
            print(
                f"::warning title=kvlint::the fail-on input ({escape_data(fail_on)}) wins over --fail-on "
                f"{escape_data(in_args)} in args; the step fails on findings at or above {escape_data(fail_on)}",
                file=out,
            )
    # without a threshold (the fail-on input, else a --fail-on in args), each finding's own threshold decides (its file's .kvlint.yaml fail_on, else
    # error), as `kvlint check` without --fail-on decides: the report's "fails" (a kvlint without it: error)
    fails = [
        bool(h["fails"])
        if not fail_on and isinstance(h.get("fails"), bool)
        else _severity_at_least(d, fail_on or "error")
        for h, d in zip(head_dicts, diags, strict=True)
    ]
    threshold = _threshold_words(fail_on, summary)

    # ---- the base: what the change introduced ----
    mode = env.get("KVLINT_ANNOTATE", "changed").strip().lower() or "changed"
    base_ref = env.get("KVLINT_BASE_REF", "").strip()
    if not base_ref and env.get("GITHUB_BASE_REF", "").strip():
        base_ref = "origin/" + env["GITHUB_BASE_REF"].strip()
    if not base_ref and env.get("GITHUB_EVENT_NAME", "") in _PR_EVENTS:
        print(
            "::notice title=kvlint::pull request without a base ref (neither KVLINT_BASE_REF nor "
            "GITHUB_BASE_REF is set); annotating every finding",
            file=out,
        )
    changes: _Changes | None = None
    base: tuple[dict[str, Any], str] | None = None
    if base_ref:
        found = changed_lines(base_ref, cwd)
        if found is None:
            print(
                f"::notice title=kvlint::cannot diff against {escape_data(base_ref)} (fetch it, e.g. "
                f"actions/checkout with fetch-depth: 0); annotating every finding",
                file=out,
            )
        else:
            changes = _Changes(found[0], found[1], cwd)
            base = _base_report(env, base_ref, cwd, tmp, out)
    status: list[str] = [""] * len(diags)
    comparison = None
    if base is not None:
        comparison = compare_findings(base[0].get("diagnostics", []), head_dicts)
        status = comparison.status

    # ---- the log: the text report, new and pre-existing findings, capacity, the reason ----
    with open(text_path, encoding="utf-8") as fh:
        text_report = fh.read()
    counts_line = text_report.rstrip("\n").rsplit("\n", 1)[-1]
    print(f"::group::kvlint report: {escape_data(counts_line)}", file=out)
    print_inert(text_report, out)
    print("::endgroup::", file=out)
    log: list[str] = []  # what follows quotes the findings too: printed inert, after the exit reason
    capacity_rows = []
    if comparison is not None and base is not None:
        changed_files = (
            {os.path.relpath(os.path.join(changes.root, f), cwd) for f in changes.lines} if changes else set()
        )
        capacity_rows = capacity_diff(base[0], report, changed_files)
        new = [d for d, s in zip(diags, status, strict=True) if s == "new"]
        old = [d for d, s in zip(diags, status, strict=True) if s == "pre-existing"]
        log.append(f"New findings (introduced by this change, against {base[1]}): {comparison.new_count}")
        log += [format_diagnostic(d).split("\n", 1)[0] + "  [new]" for d in new]
        log.append(f"Pre-existing findings (also on {base[1]}): {comparison.existing_count}")
        log += [format_diagnostic(d).split("\n", 1)[0] + "  [pre-existing]" for d in old]
        log.append("Capacity of the workloads this change touches:")
        log.append(render_capacity_text(capacity_rows).rstrip("\n"))

    new_only = _truthy(env.get("KVLINT_NEW_ONLY", ""), True)
    failing = [
        d
        for d, s, f in zip(diags, status, fails, strict=True)
        if f and not (comparison is not None and new_only and s != "new")
    ]
    if comparison is not None and new_only:
        exit_code = 1 if failing else 0
        scope = "new "
        # a capped finding the base had fewer of counts the findings it adds (kvlint.prdiff.Comparison.new_units)
        failing_count = sum(
            n for n, s, f in zip(comparison.new_units, status, fails, strict=True) if f and s == "new"
        )
    else:
        exit_code = code
        scope = ""
        failing_count = _counted(failing)
    if exit_code:
        first = failing[0] if failing else None
        where = f"{first.loc.file}:{first.loc.line}" if first and first.loc else ""
        at = f"; first: {first.rule} at " if first and where else ""
        reason = (
            f"kvlint fails this step: {_plural(failing_count, scope + 'finding')} at or above {threshold}"
            + (" introduced by this change" if scope else "")
        )
        # the summary shows the file name (the pull request's) as a code span: text, never Markdown
        reason_md = reason + (f"{at}{_md_code(where)}" if at else "")
        reason += at + where
    else:
        pre = comparison.existing_count if comparison is not None else 0
        # the log lists the pre-existing findings before this line, the summary after it (a folded block)
        passes = f"kvlint passes: no {scope}finding at or above {threshold}"
        aside = f" ({_plural(pre, 'pre-existing finding')} on the base not counted; they are listed {{}})"
        reason = passes + (aside.format("above") if scope and pre else "")
        reason_md = passes + (aside.format("below") if scope and pre else "")
    print_inert("\n".join([*log, reason]), out)
    if exit_code:
        print(f"::error title=kvlint::{escape_data(reason)}", file=out)

    # ---- annotations ----
    names = {k: v.name for k, v in load_catalog().items()}
    values_files = _helm_values_args(env)
    planned: list[tuple[str, str]] = []
    top = None if changes is not None or mode == "none" else _git(cwd, "rev-parse", "--show-toplevel")
    root = top.strip() if top and top.strip() else None
    if mode != "none":
        order = sorted(range(len(diags)), key=lambda i: {"error": 0, "warning": 1}.get(diags[i].severity, 2))
        for i in order:
            d, s = diags[i], status[i]
            site = annotation_site(d, changes, cwd, values_files)
            on_own_line = (
                changes is not None and d.loc is not None and changes.touched(d.loc.file, d.loc.line)
            )
            if mode == "changed" and changes is not None:
                if s == "new":
                    pass  # at its cause when one is found, else at its own line
                elif s == "pre-existing":
                    if not on_own_line:
                        continue
                    site = None
                elif site is None:
                    continue  # no base run: findings on changed lines only
            label = {"new": "new: ", "pre-existing": "pre-existing (also on the base): "}.get(s, "")
            title = f"{d.rule} {names.get(d.rule, '')}".strip()
            planned.append(_annotation(d, site, title, label, changes, cwd, root))
    for _, line in planned:
        print(line, file=out)
    annotated = len(planned)
    over = {
        k: n
        for k in ("error", "warning", "notice")
        if (n := sum(1 for c, _ in planned if c == k)) > ANNOTATION_CAP
    }
    notes = []
    if over:
        notes.append(
            "GitHub shows at most "
            f"{ANNOTATION_CAP} annotations of each kind per step: "
            + ", ".join(f"{n} {k}s were emitted" for k, n in over.items())
            + ", so some are not on the diff; every finding is in this summary, the log and the SARIF report."
        )

    # ---- the step summary and the full report ----
    with open(md_path, encoding="utf-8") as fh:
        kvlint_md = fh.read()
    # the heading on its own line: a finding's cell can hold the words "## Workloads" but never a line break
    at_workloads = kvlint_md.find("\n## Workloads\n")
    workloads_md = kvlint_md[at_workloads + 1 :] if at_workloads >= 0 else ""
    icon = "❌" if exit_code else "✅"
    summ = _Summary(
        result_line=f"{icon} {reason_md}",
        counts_line=markdown_text(counts_line),
        capacity=render_capacity_markdown(capacity_rows) if comparison is not None else "",
        base_label=base[1] if base else "",
        findings=list(zip(diags, status, strict=True)),
        fixed=comparison.fixed_count if comparison else 0,
        workloads=workloads_md,
        notes=notes,
    )
    markdown = _render_summary(summ)
    report_dir = env.get("KVLINT_REPORT_DIR", "").strip() or os.path.join(
        env.get("RUNNER_TEMP") or tmp, "kvlint-report"
    )
    try:
        os.makedirs(report_dir, exist_ok=True)
        for name, content in (("summary.md", markdown), ("kvlint.txt", text_report)):
            with open(os.path.join(report_dir, name), "w", encoding="utf-8") as fh:
                fh.write(content)
        with open(os.path.join(report_dir, "kvlint.json"), "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=2)
    except OSError as exc:
        print(f"::warning title=kvlint::cannot write the full report: {escape_data(str(exc))}", file=out)
        report_dir = ""
    link = ""
    if env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/")
        link = f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}#artifacts"
    limit = int(env.get("KVLINT_SUMMARY_LIMIT", "").strip() or SUMMARY_LIMIT)
    markdown, truncated = truncate_summary(
        markdown, limit, link, env.get("KVLINT_ARTIFACT", "").strip() or "kvlint-report"
    )
    if truncated:
        print(
            f"kvlint: the job summary is above {limit} bytes; truncated (full report: {report_dir})", file=out
        )
    summary_path = env.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(markdown)
        except OSError as exc:
            print(f"::warning title=kvlint::cannot write the step summary: {escape_data(str(exc))}", file=out)
    counts = {
        "errors": int(summary.get("error", 0)),
        "warnings": int(summary.get("warning", 0)),
        "infos": int(summary.get("info", 0)),
    }
    err = _write_outputs(
        env.get("GITHUB_OUTPUT"),
        {
            **counts,
            # findings as the summary counts them (a capped finding counts the findings it stands for)
            "findings": _counted(diags),
            "new": comparison.new_count if comparison is not None else _counted(diags),
            "pre-existing": comparison.existing_count if comparison is not None else 0,
            "suppressed": int(summary.get("suppressed", 0)),
            "annotated": annotated,
            "sarif": sarif,
            "report-dir": report_dir,
            "summary-truncated": str(truncated).lower(),
            "exit-code": exit_code,
        },
    )
    if err:
        print(f"::error title=kvlint::{escape_data(err)}", file=out)
        return 2
    return exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m kvlint.action`` (takes no arguments; reads the environment)."""
    if argv:
        print("usage: python -m kvlint.action   (inputs come from KVLINT_* environment variables)")
        return 2
    return run_action()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
