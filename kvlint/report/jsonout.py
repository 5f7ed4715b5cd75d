"""Machine-readable report (``kvlint check --format json``).

Shape (``schema_version`` 2)::

    {"schema_version": 2, "kvlint_version": "0.1.0",
     "summary": {"error": 1, "warning": 2, "info": 0, "listed" (only when a finding stands for several),
                 "suppressed": 1, "exemptions_allowed": true,
                 "files": 3, "documents": 5, "workloads": 4, "sizing": {... SizingSummary.as_dict() ...},
                 "fail_on": [{"threshold": "warning", "source": ".kvlint.yaml"}]},
     "diagnostics": [{"rule", "severity", "message", "fix", "file", "line", "column", "object", "container",
                      "summary", "setting", "sources", "sources_more" (only when sources were left out),
                      "stands_for" (only when the finding stands for more than one),
                      "fails" (at or above the fail_on that applies to it)}],
     "suppressed": [{... same fields as a diagnostic ("fails" false) ..., "reason"}],
     "workloads": [{"file", "line", "column", "kind", "name", "namespace", "role", "container", "engine",
                    "engine_version", "image", "model", "model_id", "model_source", "model_error", "accelerator",
                    "accelerator_how", "mig_profile", "device", "device_share", "amd_partition", "shared",
                    "sharing_strategy", "max_sharers", "gpu_slice": {"resource", "mib", "percent"} | null, "gpus",
                    "replicas", "plan": {... MemoryPlan.as_dict() ...} | null, "plan_error", "fleet", "sizing"}]}

Versions: 1 (kvlint 0.1.0 first cut) had no ``suppressed`` entries; 2 adds ``summary.suppressed``,
``summary.exemptions_allowed`` and the ``suppressed`` list. Fields are only ever added within a version;
a removal or change of meaning bumps ``schema_version``. docs/formats.md documents every field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kvlint import __version__
from kvlint.report.jsontext import dumps_indented

if TYPE_CHECKING:
    from kvlint.sizing import SizingSummary
    from kvlint.types import CheckResult, Diagnostic

SCHEMA_VERSION = 2

#: ``summary.fail_on`` of a run that set no threshold (no ``--fail-on``, no configuration's ``fail_on``).
DEFAULT_FAIL_ON = {"threshold": "error", "source": "default"}


def counts_dict(result: CheckResult) -> dict[str, Any]:
    """Findings per severity (``error``, ``warning``, ``info``: :meth:`~kvlint.types.CheckResult.finding_counts`, a
    finding that stands for several counted as those, as the text summary counts them) and, only when some finding
    stands for more than one (:mod:`kvlint.findcap`), ``listed``: the diagnostics per severity the report lists.
    The JSON, JSON Lines and SARIF reports' summary."""
    out: dict[str, Any] = dict(result.finding_counts())
    if result.standing():
        out["listed"] = result.counts()
    return out


def summary_dict(result: CheckResult, sizing: SizingSummary | None = None) -> dict[str, Any]:
    """The JSON report's ``summary`` object: findings per severity (``error``, ``warning``, ``info``, and
    ``listed`` when the report lists fewer: :func:`counts_dict`),
    ``suppressed`` (findings removed by ``kvlint.io/ignore``), ``exemptions_allowed``, input counts
    (``files``, ``documents``, ``workloads``) and ``sizing`` (:meth:`kvlint.sizing.SizingSummary.as_dict`:
    serving containers and how many were sized, by outcome). Shared by the ``json`` and ``jsonl`` reports."""
    from kvlint.sizing import summarise

    summary: dict[str, Any] = counts_dict(result)
    summary.update(
        suppressed=result.suppressed,
        exemptions_allowed=result.exemptions_allowed,
        files=result.files,
        documents=result.documents,
        workloads=result.workloads,
        sizing=(sizing if sizing is not None else summarise(result)).as_dict(),
    )
    summary["fail_on"] = result.fail_on if result.fail_on is not None else [DEFAULT_FAIL_ON]
    return summary


def diagnostic_dict(d: Diagnostic, result: CheckResult) -> dict[str, Any]:
    """One entry of the report's ``diagnostics``: :meth:`~kvlint.types.Diagnostic.as_dict`, and ``fails``: whether
    the finding is at or above the ``fail_on`` that applies to it (:attr:`~kvlint.types.CheckResult.failing`, which
    ``kvlint check`` sets; a result without it, a library caller's, is read with the default threshold, ``error``,
    as a run without ``--fail-on`` or configuration). Shared by the ``json`` and ``jsonl`` reports."""
    out = d.as_dict()
    out["fails"] = d in result.failing if result.failing is not None else d.severity == "error"
    return out


def to_json_dict(result: CheckResult, sizing: SizingSummary | None = None) -> dict[str, Any]:
    """The JSON report as a dict (see the module docstring for the shape); ``sizing``: the run's
    :func:`kvlint.sizing.summarise`, computed here when not given."""
    from kvlint.sizing import outcomes

    return {
        "schema_version": SCHEMA_VERSION,
        "kvlint_version": __version__,
        "summary": summary_dict(result, sizing),
        "diagnostics": [diagnostic_dict(d, result) for d in result.diagnostics],
        # a suppressed finding never fails the run: "fails" false, so that both lists have a diagnostic's fields
        "suppressed": [
            {**s.diagnostic.as_dict(), "fails": False, "reason": s.reason}
            for s in result.suppressed_diagnostics
        ],
        "workloads": [
            {**c.as_dict(), "sizing": o}
            for c, o in zip(result.containers, outcomes(result.containers), strict=True)
        ],
    }


def render_json(result: CheckResult, sizing: SizingSummary | None = None) -> str:
    """The JSON report as text (2-space indent, trailing newline)."""
    return dumps_indented(to_json_dict(result, sizing)) + "\n"  # the text of json.dumps(..., indent=2)
