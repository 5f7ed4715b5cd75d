"""Machine-readable report (``kvlint check --format json``).

Shape (``schema_version`` 1)::

    {"schema_version": 1, "kvlint_version": "0.1.0",
     "summary": {"error": 1, "warning": 2, "info": 0, "files": 3, "documents": 5, "workloads": 4},
     "diagnostics": [{"rule", "severity", "message", "fix", "file", "line", "column", "object", "container"}],
     "workloads": [{"file", "line", "column", "kind", "name", "namespace", "role", "container", "engine",
                    "engine_version", "image", "model", "model_source", "model_error", "accelerator",
                    "accelerator_how", "gpus", "plan": {... MemoryPlan.as_dict() ...} | null, "plan_error"}]}
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from kvlint import __version__

if TYPE_CHECKING:
    from kvlint.pipeline import CheckResult

SCHEMA_VERSION = 1


def to_json_dict(result: CheckResult) -> dict[str, Any]:
    """The JSON report as a dict (see the module docstring for the shape)."""
    summary: dict[str, Any] = dict(result.counts())
    summary.update(files=result.files, documents=result.documents, workloads=result.workloads)
    return {
        "schema_version": SCHEMA_VERSION,
        "kvlint_version": __version__,
        "summary": summary,
        "diagnostics": [d.as_dict() for d in result.diagnostics],
        "workloads": [c.as_dict() for c in result.containers],
    }


def render_json(result: CheckResult) -> str:
    """The JSON report as text (2-space indent, trailing newline)."""
    return json.dumps(to_json_dict(result), indent=2) + "\n"
