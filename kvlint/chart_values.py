"""Helm chart values kvlint reads as the objects the chart renders from them (a "chart values reader").

A values file is not a Kubernetes manifest (render.py gives such files one KV002, "render the chart
first"), but for a few charts the template is a plain restatement of the values, and kvlint builds the
objects it would render instead, locating everything at the values' own lines:

* the KubeAI ``models`` chart (``catalog.<name>`` entries -> one KubeAI ``Model`` each,
  :func:`kvlint.workloads.kubeai.catalog_workloads`);
* vLLM production-stack's ``vllm-stack`` chart (``servingEngineSpec.modelSpec[]`` -> one engine Deployment
  each, :func:`kvlint.workloads.stack_values.stack_values_workloads`);
* the bjw-s ``app-template`` chart (``controllers.<id>`` running a serving engine's image -> one pod each,
  :func:`kvlint.workloads.app_template.app_template_workloads`).

:data:`READERS` is the one dispatch point: :func:`reader_of` picks the reader of a document (a mapping without
``apiVersion`` and ``kind`` of the shape the reader recognises), the workload finder asks it for the
workloads (:func:`kvlint.workloads.find.find_workloads`) and the loader for its one note per file in place
of the KV002 (:func:`kvlint.render.unrendered_file_finding`). The recognisers read the document only; the
builders are imported when a document is read (the loader does not import the workload finders).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kvlint.source import LDict, Loc, loc_of
from kvlint.types import Document, Finding, Mark, Workload
from kvlint.wording import shell_word

__all__ = ["READERS", "ChartValuesReader", "reader_of"]


@dataclass(frozen=True)
class ChartValuesReader:
    """One chart whose values kvlint reads: ``recognise(data)`` tells its values from anything else
    (``data`` a mapping without apiVersion/kind), ``workloads(doc)`` builds the workloads of the objects the
    chart renders, ``note(doc)`` is the one file-level finding in place of the values file's KV002 (None: the
    reader says what it did on the workloads it builds)."""

    name: str
    recognise: Callable[[dict[Any, Any]], bool]
    workloads: Callable[[Document], list[Workload]]
    note: Callable[[Document], Finding | None]


def _is_kubeai_catalog(data: dict[Any, Any]) -> bool:
    """KubeAI ``models`` chart values: a ``catalog`` mapping with at least one entry that is a mapping with a
    ``url`` string naming a source (``hf://``, ``ollama://``, ``s3://``, ...) and an ``engine`` or a
    ``resourceProfile`` (the keys charts/models/templates/models.yaml writes into every Model)."""
    catalog = data.get("catalog")
    if not isinstance(catalog, dict):
        return False
    for entry in catalog.values():
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("url"), str)
            and "://" in entry["url"]
            and ("engine" in entry or "resourceProfile" in entry)
        ):
            return True
    return False


def _kubeai_workloads(doc: Document) -> list[Workload]:
    from kvlint.workloads.kubeai import catalog_workloads

    return catalog_workloads(doc)


def _kubeai_note(doc: Document) -> Finding:
    """KV504 (info) at ``catalog``: the entries were read as the Models the chart renders; how many are
    disabled and how many run engines kvlint does not read. A KV002 instead when the catalogue has more entries
    than :data:`kvlint.workloads.kubeai.MAX_CATALOG_ENTRIES` (no Model is built)."""
    from kvlint.workloads.kubeai import (
        MAX_CATALOG_ENTRIES,
        MODELS_CHART_TEMPLATE,
        catalog_engine,
        catalog_entries,
    )

    catalog = doc.data.get("catalog") if isinstance(doc.data, dict) else None
    if isinstance(catalog, dict) and len(catalog) > MAX_CATALOG_ENTRIES:
        return Finding(
            "KV002",
            "this is a Helm values file for KubeAI's models chart (catalog), and kvlint builds no Model from it: "
            f"catalog has {len(catalog):,} entries, more than the {MAX_CATALOG_ENTRIES:,} kvlint builds Models for",
            _key_loc(doc.data, "catalog") or doc.loc,
            fix=f"helm template RELEASE kubeai/models -f {shell_word(doc.path)} | kvlint check -",
            mark=Mark.HELM_VALUES,
        )
    # counted from the entries: the workload finder builds the Models (catalog_models), once
    entries = catalog_entries(doc)
    disabled = sum(1 for _, _, enabled in entries if not enabled)
    engines = [catalog_engine(entry) for _, entry, _ in entries]
    other = sorted({str(e) for e in engines if str(e if e is not None else "").upper() != "VLLM"})
    n = len(entries)
    message = (
        f"kvlint read this as the values of KubeAI's models chart: each of the {n} catalog "
        f"entr{'y' if n == 1 else 'ies'} is checked as the Model {MODELS_CHART_TEMPLATE} renders from it"
    )
    if disabled:
        message += (
            f"; {disabled} of them {'is' if disabled == 1 else 'are'} not enabled (neither enabled nor all.enabled "
            "is true), so the chart does not render them: they are checked as if enabled, named '<name> (enabled: "
            "false)'"
        )
    if other:
        message += f"; Models of {', '.join(other)} run engines kvlint does not size"
    return Finding(
        "KV504",
        message,
        _key_loc(doc.data, "catalog") or doc.loc,
        fix="nothing to change if that chart renders it; to lint exactly what is deployed: helm template RELEASE "
        f"kubeai/models -f {shell_word(doc.path)} | kvlint check -",
        severity="info",
    )


def _key_loc(data: Any, key: str) -> Loc | None:
    """The position of ``key`` itself in the mapping ``data`` (its value's when the key's is unknown)."""
    if isinstance(data, LDict) and key in data.key_locs:
        return data.key_locs[key]
    return loc_of(data, key)


def _is_stack_values(data: dict[Any, Any]) -> bool:
    """vLLM production-stack chart values: a ``servingEngineSpec`` mapping with a ``modelSpec`` key (the test
    of :func:`kvlint.workloads.stack_values.is_stack_values`, kept here so the loader imports no workload
    builder)."""
    spec = data.get("servingEngineSpec")
    return isinstance(spec, dict) and "modelSpec" in spec


def _stack_workloads(doc: Document) -> list[Workload]:
    from kvlint.workloads.stack_values import stack_values_workloads

    return stack_values_workloads(doc)


def _stack_note(doc: Document) -> Finding | None:
    """KV002 when kvlint builds no engine pod from production-stack values (why, at the deciding value); None
    when it builds them (the first workload carries the note naming the chart template followed)."""
    from kvlint.workloads.stack_values import stack_values_finding

    return stack_values_finding(doc)


def _is_app_template(data: dict[Any, Any]) -> bool:
    from kvlint.workloads.app_template import is_app_template_values

    return is_app_template_values(data)


def _app_template_workloads(doc: Document) -> list[Workload]:
    from kvlint.workloads.app_template import app_template_workloads

    return app_template_workloads(doc)


def _app_template_note(doc: Document) -> Finding | None:
    """KV002 when kvlint builds no pod from bjw-s app-template values that run an engine; None when it builds
    them (the first workload carries the note)."""
    from kvlint.workloads.app_template import app_template_finding

    return app_template_finding(doc)


#: The chart values readers, tried in order.
READERS: tuple[ChartValuesReader, ...] = (
    ChartValuesReader("KubeAI models chart", _is_kubeai_catalog, _kubeai_workloads, _kubeai_note),
    ChartValuesReader("vLLM production-stack chart", _is_stack_values, _stack_workloads, _stack_note),
    ChartValuesReader(
        "bjw-s app-template chart", _is_app_template, _app_template_workloads, _app_template_note
    ),
)


def reader_of(doc: Document) -> ChartValuesReader | None:
    """The reader of ``doc`` when it is chart values one of :data:`READERS` reads (a mapping without
    ``apiVersion`` and ``kind``), else None."""
    data = doc.data
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    for reader in READERS:
        if reader.recognise(data):
            return reader
    return None
