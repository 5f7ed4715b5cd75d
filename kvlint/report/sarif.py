"""SARIF 2.1.0 report (``kvlint check --format sarif``), for GitHub code scanning and other viewers.

Shape (OASIS SARIF 2.1.0, https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html):
one ``run`` whose ``tool.driver`` lists every catalogue rule (``id``, ``name``, ``shortDescription``,
``fullDescription``, ``help`` text and markdown, ``helpUri``, ``defaultConfiguration.level``,
``properties.tags``/``precision``); ``results`` hold one entry per reported diagnostic with ``ruleId``,
``ruleIndex``, ``level`` (error/warning/note), ``message.text`` (the message, then ``Fix:`` and the
remedy), and a ``physicalLocation`` whose ``region`` has the 1-based ``startLine``/``startColumn``
kvlint read from the YAML. Diagnostics suppressed by ``kvlint.io/ignore`` appear with
``suppressions: [{"kind": "inSource", "justification": reason}]`` so viewers show them as dismissed.
A clean run has ``"results": []``. File paths are relative URIs (``uriBaseId`` ``%SRCROOT%``) when the
path is relative, ``file://`` URIs when absolute; standard input is ``stdin``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kvlint import __version__
from kvlint.types import Diagnostic

if TYPE_CHECKING:
    from kvlint.types import CheckResult

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/kvlint/kvlint"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId) of a diagnostic's file: relative POSIX URI under ``%SRCROOT%``, or ``file://``."""
    if path in ("-", "<stdin>", ""):
        return "stdin", None
    if os.path.isabs(path):
        return Path(path).as_uri(), None
    rel = Path(os.path.normpath(path)).as_posix()
    # the file name's bytes, percent-encoded (a name that is not UTF-8 stays exact and never fails to encode)
    return quote(os.fsencode(rel), safe="/"), "%SRCROOT%"


def _rule_descriptor(info: Any) -> dict[str, Any]:
    help_md = (
        f"**{info.id} {info.name}**\n\n{info.summary}\n\n## Why it matters\n\n{info.rationale}\n\n"
        f"## How to fix\n\n{info.fix}\n\n[Full documentation]({info.help_uri})"
    )
    return {
        "id": info.id,
        "name": info.name,
        "shortDescription": {"text": info.summary},
        "fullDescription": {"text": info.rationale},
        "help": {"text": f"{info.summary}\n\nHow to fix: {info.fix}", "markdown": help_md},
        "helpUri": info.help_uri,
        "defaultConfiguration": {"level": _LEVEL.get(info.severity, "warning")},
        "properties": {
            "tags": list(dict.fromkeys([info.category, *info.engines])),
            "precision": "high" if info.category != "capacity" else "medium",
        },
    }


def _result(d: Diagnostic, index: dict[str, int], reason: str | None = None) -> dict[str, Any]:
    text = d.message + (f"\nFix: {d.fix}" if d.fix else "")
    res: dict[str, Any] = {
        "ruleId": d.rule,
        "level": _LEVEL.get(d.severity, "warning"),
        "message": {"text": text},
    }
    if d.rule in index:
        res["ruleIndex"] = index[d.rule]
    if d.loc is not None:
        uri, base = artifact_uri(d.loc.file)
        art: dict[str, Any] = {"uri": uri}
        if base:
            art["uriBaseId"] = base
        res["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": art,
                    "region": {"startLine": max(1, d.loc.line), "startColumn": max(1, d.loc.column)},
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
    if props:
        res["properties"] = props
    if reason is not None:
        res["suppressions"] = [{"kind": "inSource", "justification": reason}]
    return res


def to_sarif_dict(result: CheckResult) -> dict[str, Any]:
    """The SARIF log as a dict (see the module docstring)."""
    from kvlint.rules.catalog import load_catalog

    catalog = load_catalog()
    rules = [_rule_descriptor(info) for info in catalog.values()]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = [_result(d, index) for d in result.diagnostics]
    results += [_result(s.diagnostic, index, s.reason) for s in result.suppressed_diagnostics]
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
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": {
            "summary": {**result.counts(), "suppressed": result.suppressed, "files": result.files},
        },
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(result: CheckResult) -> str:
    """The SARIF log as JSON text (2-space indent, trailing newline)."""
    return json.dumps(to_sarif_dict(result), indent=2) + "\n"
