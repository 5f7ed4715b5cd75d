"""SARIF 2.1.0 report (``kvlint check --format sarif``), for GitHub code scanning and other viewers.

Shape (OASIS SARIF 2.1.0, https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html):
one ``run`` whose ``tool.driver`` lists every catalogue rule (``id``, ``name``, ``shortDescription``,
``fullDescription``, ``help`` text and markdown, ``helpUri``, ``defaultConfiguration.level``,
``properties.tags``/``precision``); ``results`` hold one entry per reported diagnostic with ``ruleId``,
``ruleIndex``, ``level`` (error/warning/note), ``message.text`` (the message, then ``Fix:`` and the
remedy), ``partialFingerprints["kvlint/v1"]`` (:mod:`kvlint.fingerprint`: rule, workload, container,
setting; never the line), and a ``physicalLocation`` whose ``region`` has the 1-based
``startLine``/``startColumn`` kvlint read from the YAML and an ``endLine``/``endColumn`` after the value
written there; its ``properties`` hold the ``object`` and ``container`` and, for a finding that stands for
several (the finding for the rest past :data:`kvlint.findcap.MAX_PER_RULE` of a rule in a container), ``stands_for``,
as the JSON report's. The run's ``properties.summary`` counts findings as the JSON report's ``summary`` does
(:func:`kvlint.report.jsonout.counts_dict`: ``listed`` when the results are fewer). What GitHub code scanning requires is met: ``fullDescription`` at most 1,024 characters
(the whole rationale is in ``help``), ``helpUri`` at the rule's section of docs/rules.md (see
:func:`rule_doc_uri`), and a real artifact name for piped input (``--stdin-filename``). Diagnostics suppressed by ``kvlint.io/ignore`` appear with
``suppressions: [{"kind": "inSource", "justification": reason}]`` so viewers show them as dismissed.
A clean run has ``"results": []``. File paths are relative URIs (``uriBaseId`` ``%SRCROOT%``, the root of the git
work tree the run starts in, else its directory: :func:`source_root`) when the path is relative, ``file://`` URIs
when absolute or outside that root; standard input is ``stdin``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kvlint import __version__
from kvlint.fingerprint import FINGERPRINT_KEY, fingerprints
from kvlint.report.jsontext import dumps_indented
from kvlint.types import Diagnostic, findings_stood_for

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/kvlint/kvlint"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
#: GitHub code scanning rejects rule descriptions longer than this many characters.
FULL_DESCRIPTION_LIMIT = 1024


def source_root(cwd: str | None = None) -> str:
    """The directory ``%SRCROOT%`` stands for: the root of the git work tree holding ``cwd`` (default: the current
    directory; :func:`kvlint.load.repository_root`), else ``cwd``. GitHub code scanning reads a relative
    ``artifactLocation.uri`` from the repository's root, so a run started in a subdirectory (``working-directory:
    deploy``) or naming ``../charts`` writes its paths from there, as the ``github`` format places annotations."""
    from kvlint.load import repository_root

    here = os.path.realpath(os.getcwd() if cwd is None else cwd)
    return repository_root(here, resolve=True) or here


def artifact_uri(path: str, cwd: str | None = None, root: str | None = None) -> tuple[str, str | None]:
    """(uri, uriBaseId) of a diagnostic's file: relative POSIX URI under ``%SRCROOT%`` (``root``, default
    :func:`source_root`; a relative ``path`` is read from ``cwd``, default the current directory), or ``file://``
    for an absolute path or one outside the root."""
    if path in ("-", "<stdin>", ""):
        return "stdin", None
    if os.path.isabs(path):
        return Path(path).as_uri(), None
    from kvlint.report.github import repository_path

    here = os.getcwd() if cwd is None else cwd
    base = root or source_root(here)
    shown = repository_path(path, here, base)
    if shown == path and (shown == ".." or shown.startswith(".." + os.sep)):
        # outside the repository: no relative URI code scanning could place; the file's own URI
        return Path(os.path.normpath(os.path.join(os.path.realpath(here), path))).as_uri(), None
    rel = Path(os.path.normpath(shown)).as_posix()
    # the file name's bytes, percent-encoded (a name that is not UTF-8 stays exact and never fails to encode)
    return quote(os.fsencode(rel), safe="/"), "%SRCROOT%"


def rule_doc_uri(info: Any, env: Mapping[str, str] | None = None) -> str:
    """Where rule ``info`` is documented: its section of docs/rules.md in kvlint's repository.

    ``KVLINT_RULES_DOC_URL`` (the GitHub Action sets it to ``<server>/<action repository>/blob/<action
    ref>/docs/rules.md``, the copy of the documentation that matches the running code) + ``#kv103``;
    else the catalogue's ``help_uri`` (:func:`kvlint.rules.catalog.rule_help_uri`). The anchor is the
    rule id in lower case, the heading ``## KV103`` of docs/rules.md."""
    env = os.environ if env is None else env
    base = env.get("KVLINT_RULES_DOC_URL", "").strip()
    return f"{base}#{info.id.lower()}" if base else str(info.help_uri)


def short_text(text: str, limit: int = FULL_DESCRIPTION_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters at the end of a sentence (else a word), with `` ...``
    when cut; GitHub code scanning rejects a ``fullDescription`` over 1,024 characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    room = text[: limit - 4]
    cut = max(room.rfind(". "), room.rfind("; "))
    if cut < limit // 2:
        cut = room.rfind(" ")
    return room[: cut + 1].rstrip() + " ..."


def _rule_descriptor(info: Any) -> dict[str, Any]:
    uri = rule_doc_uri(info)
    help_md = (
        f"**{info.id} {info.name}**\n\n{info.summary}\n\n## Why it matters\n\n{info.rationale}\n\n"
        f"## How to fix\n\n{info.fix}\n\n[Full documentation]({uri})"
    )
    return {
        "id": info.id,
        "name": info.name,
        "shortDescription": {"text": short_text(info.summary)},
        "fullDescription": {"text": short_text(info.rationale)},
        "help": {
            "text": f"{info.summary}\n\nWhy it matters: {info.rationale}\n\nHow to fix: {info.fix}",
            "markdown": help_md,
        },
        "helpUri": uri,
        "defaultConfiguration": {"level": _LEVEL.get(info.severity, "warning")},
        "properties": {
            "tags": list(dict.fromkeys([info.category, *info.engines])),
            "precision": "high" if info.category != "capacity" else "medium",
        },
    }


def _line_text(path: str, line: int) -> str | None:
    """Line ``line`` (1-based) of file ``path``, or None when it cannot be read."""
    lines = _file_lines(path)
    return lines[line - 1] if lines is not None and 1 <= line <= len(lines) else None


@lru_cache(maxsize=512)
def _file_lines(path: str) -> tuple[str, ...] | None:
    """The lines of the file at ``path`` (UTF-8, undecodable bytes replaced), or None when it cannot be read.
    Read as bytes and decoded at once: the lines of the text-mode read (whose newline translation changes
    no line that ``splitlines`` gives) without a text stream's decoder per file."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return tuple(data.decode("utf-8", "replace").splitlines())


def region(d: Diagnostic) -> dict[str, int]:
    """SARIF region of a diagnostic: its start, and an end on the same line after the value that starts
    there (to the end of the line, without a trailing ``# comment``); one character when the file
    cannot be read (standard input)."""
    assert d.loc is not None
    line, col = max(1, d.loc.line), max(1, d.loc.column)
    end = col + 1
    text = _line_text(d.loc.file, line)
    if text is not None and col <= len(text):
        rest = text[col - 1 :]
        hash_at = rest.find(" #")
        value = (rest[:hash_at] if hash_at >= 0 else rest).rstrip()
        end = col + max(1, len(value))
    return {"startLine": line, "startColumn": col, "endLine": line, "endColumn": end}


def _result(
    d: Diagnostic,
    index: dict[str, int],
    reason: str | None = None,
    fingerprint: str = "",
    uris: dict[str, tuple[str, str | None]] | None = None,
    root: str | None = None,
) -> dict[str, Any]:
    """One entry of ``results``; ``uris``: the :func:`artifact_uri` of the files met so far in this log (the
    findings of one file share it)."""
    text = d.message + (f"\nFix: {d.fix}" if d.fix else "")
    res: dict[str, Any] = {
        "ruleId": d.rule,
        "level": _LEVEL.get(d.severity, "warning"),
        "message": {"text": text},
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint or fingerprints([d])[0]},
    }
    if d.rule in index:
        res["ruleIndex"] = index[d.rule]
    if d.loc is not None:
        found = uris.get(d.loc.file) if uris is not None else None
        if found is None:
            found = artifact_uri(d.loc.file, root=root)
            if uris is not None:
                uris[d.loc.file] = found
        uri, base = found
        art: dict[str, Any] = {"uri": uri}
        if base:
            art["uriBaseId"] = base
        res["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": art,
                    "region": region(d),
                },
                **(
                    {"logicalLocations": [{"fullyQualifiedName": d.object, "kind": "object"}]}
                    if d.object
                    else {}
                ),
            }
        ]
    props: dict[str, Any] = {}
    if d.object:
        props["object"] = d.object
    if d.container:
        props["container"] = d.container
    if (n := findings_stood_for(d)) > 1:
        props["stands_for"] = n  # as the JSON report's: the findings this one counts for
    if props:
        res["properties"] = props
    if reason is not None:
        res["suppressions"] = [{"kind": "inSource", "justification": reason}]
    return res


def to_sarif_dict(result: CheckResult, sizing: SizingSummary | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (see the module docstring); ``sizing``: the run's :func:`kvlint.sizing.summarise`,
    computed here when not given."""
    from kvlint.report.jsonout import counts_dict
    from kvlint.rules.catalog import load_catalog
    from kvlint.sizing import summarise

    if sizing is None:
        sizing = summarise(result)
    catalog = load_catalog()
    rules = [_rule_descriptor(info) for info in catalog.values()]
    index = {r["id"]: i for i, r in enumerate(rules)}
    sup = [s.diagnostic for s in result.suppressed_diagnostics]
    prints = fingerprints([*result.diagnostics, *sup])
    uris: dict[str, tuple[str, str | None]] = {}
    root = source_root()
    results = [
        _result(d, index, fingerprint=fp, uris=uris, root=root)
        for d, fp in zip(result.diagnostics, prints, strict=False)
    ]
    results += [
        _result(s.diagnostic, index, s.reason, fp, uris, root)
        for s, fp in zip(result.suppressed_diagnostics, prints[len(result.diagnostics) :], strict=True)
    ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "kvlint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "summary": {**counts_dict(result), "suppressed": result.suppressed, "files": result.files},
            "sizing": sizing.as_dict(),
        },
    }
    if sizing.serving or sizing.not_read:
        # "not sized" is said where code scanning shows tool notices (SARIF 2.1.0 invocation.toolExecutionNotifications)
        run["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "warning" if sizing.unsized else "note", "message": {"text": sizing.line()}}
                ],
            }
        ]
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(result: CheckResult, sizing: SizingSummary | None = None) -> str:
    """The SARIF log as JSON text (2-space indent, trailing newline)."""
    return dumps_indented(to_sarif_dict(result, sizing)) + "\n"  # the text of json.dumps(..., indent=2)
