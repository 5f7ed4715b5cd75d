"""GitHub Actions workflow commands (``kvlint check --format github``).

One line per diagnostic, which the Actions runner turns into an annotation on the pull request's diff:
``::error file=PATH,line=L,col=C,title=KV103 max-model-len-exceeds-kv-capacity::MESSAGE%0Afix: ...``
(``warning`` for warnings, ``notice`` for info). Values are escaped as the runner expects
(``%`` -> ``%25``, CR -> ``%0D``, LF -> ``%0A``; in properties also ``:`` -> ``%3A`` and ``,`` -> ``%2C``).
Then one annotation gives the sizing line, with the serving objects not read below it (the first ten, as the
text report lists them); a last plain line gives the summary (with the suppressed count). Reference: GitHub
Docs, "Workflow commands for GitHub Actions" (setting an error/warning/notice message).

GitHub places an annotation by a path relative to the repository root (``apps/x.yaml``, not ``./apps/x.yaml``
nor one relative to a subdirectory the run started in): :func:`repository_path` writes each file so, for this
format and for the Action (:mod:`kvlint.action`) alike.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kvlint.report.escape import printable
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    """Escape a workflow-command message; other control characters, bidi overrides and the bytes of
    non-UTF-8 file names become visible escapes (:func:`kvlint.report.escape.printable`)."""
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(s)


def escape_property(s: str) -> str:
    """Escape a workflow-command property value (``file=``, ``title=``)."""
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def repository_path(path: str, cwd: str, root: str | None) -> str:
    """``path`` (relative to ``cwd``, as kvlint prints it: ``./apps/x.yaml``) as GitHub places an annotation:
    relative to the repository root ``root`` (else ``cwd``), ``/``-separated, without ``./``. A path outside it,
    and standard input (``-``), stay as printed."""
    if not path or path == "-":
        return path
    here = os.path.realpath(cwd)  # the root is compared with links resolved (git prints it so)
    full = os.path.normpath(os.path.join(here, path))
    base = root or here
    rel = os.path.relpath(full, base)
    if rel == ".." or rel.startswith(".." + os.sep):
        # given through a link to the checkout (an absolute path under a linked workspace): its directory with
        # links resolved, its own name kept (a link committed in the repository is annotated where it sits)
        head, name = os.path.split(full)
        rel = os.path.relpath(os.path.join(os.path.realpath(head), name), base)
        if rel == ".." or rel.startswith(".." + os.sep):
            return path
    return rel.replace(os.sep, "/")


def format_command(d: Diagnostic, rule_name: str = "", *, cwd: str = ".", root: str | None = None) -> str:
    """One diagnostic as a ``::error file=..,line=..,col=..,title=..::message`` line, its file as
    :func:`repository_path` writes it."""
    props = []
    if d.loc is not None:
        file = repository_path(d.loc.file, cwd, root)
        props += [f"file={escape_property(file)}", f"line={d.loc.line}", f"col={d.loc.column}"]
    title = f"{d.rule} {rule_name}".strip()
    props.append(f"title={escape_property(title)}")
    where = f" [{d.object}" + (f" container {d.container}" if d.container else "") + "]" if d.object else ""
    body = d.message + where + (f"\nfix: {d.fix}" if d.fix else "")
    return f"::{_COMMAND.get(d.severity, 'warning')} {','.join(props)}::{escape_data(body)}"


def render_github(result: CheckResult, cwd: str | None = None, *, sizing: SizingSummary | None = None) -> str:
    """All diagnostics as workflow commands, then the summary line. Files are written relative to the root of
    the git work tree holding ``cwd`` (default: the current directory; :func:`kvlint.load.repository_root`),
    else to ``cwd``: as GitHub places annotations when the run starts in a subdirectory or names ``./x.yaml``."""
    from kvlint.load import repository_root
    from kvlint.report.text import summary_line
    from kvlint.rules.catalog import load_catalog

    here = os.getcwd() if cwd is None else cwd
    root = repository_root(here, resolve=True)
    names = {k: v.name for k, v in load_catalog().items()}
    lines = [format_command(d, names.get(d.rule, ""), cwd=here, root=root) for d in result.diagnostics]
    from kvlint.sizing import summarise

    if sizing is None:
        sizing = summarise(result)
    if sizing.serving or sizing.not_read:
        # the objects not read below the line that counts them, as the text report lists them (its files placed
        # as the annotations' are): the annotations of the findings that count them may be past GitHub's ten
        listed = sizing.unread_lines(path=lambda p: repository_path(p, here, root))
        message = "\n".join([sizing.line(), *(ln.strip() for ln in listed)])
        lines.append(
            f"::{'warning' if sizing.unsized else 'notice'} title=kvlint sizing::{escape_data(message)}"
        )
    lines.append(summary_line(result, suppressed=result.suppressed))
    return "\n".join(lines) + "\n"
