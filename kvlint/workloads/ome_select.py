"""OME runtime auto-selection: the ServingRuntime/ClusterServingRuntime OME picks for an InferenceService.

An OME ``InferenceService`` names a BaseModel (``spec.model.name``: a namespaced ``BaseModel`` first, else a
``ClusterBaseModel``, sgl-project/ome@17b77eda ``pkg/controller/v1beta1/inferenceservice/utils/
reconciliation.go`` ``GetBaseModel``, ``ReconcileBaseModel`` refusing a disabled one) and either a runtime
(``spec.runtime.name``) or none, in which case OME selects one (``controller.go`` step 2,
``pkg/runtimeselector`` ``SelectRuntime``). Restated here from that package at the same commit:

* candidates: every ServingRuntime of the service's namespace and every ClusterServingRuntime, disabled ones
  skipped (``selector.go`` ``evaluateRuntime``);
* compatible: some ``supportedModelFormats`` entry matches the model (``matcher.go``
  ``compareSupportedModelFormats``: ``modelArchitecture`` and ``quantization`` equal, or both absent; the
  format name equal, its version equal or both absent; the framework the same way, both absent allowed) and
  the model's ``modelParameterSize`` lies in the runtime's ``modelSizeRange`` when both are given
  (``checkModelSize``; sizes in T/B/M, ``parseModelSize``); an accelerator class the service requires must be
  among the runtime's ``acceleratorRequirements.acceleratorClasses`` (``compareAcceleratorClass``);
* selectable: some format has ``autoSelect: true`` and the score is positive (``evaluateRuntime``); the score
  is the best, over the formats not marked ``autoSelect: false``, of weight x priority for the matching
  format name (weight default 10) plus the same for the framework (default 5), priority default 1
  (``scorer.go`` ``CalculateScore``, ``CalculateFormatScore``; ``types.go`` ``NewConfig``);
* order: namespaced matches before cluster ones, each sorted by score (higher first), then by how close the
  size range is to the model's size (``|min - size| + |max - size|``, smaller first), then by name
  (``selector.go`` ``GetCompatibleRuntimes``, ``scorer.go`` ``CompareRuntimes``); the first wins, and none is
  a ``NoRuntimeFoundError`` (the service is not deployed).

Version operators (``Equal`` by default, ``GreaterThan``, ``GreaterThanOrEqual``) follow ``matcher.go``
``compareModelFormatVersions`` and ``pkg/modelver``: a version ``Parse`` refuses (a leading zero, a character
other than an ASCII digit in a number) matches nothing; ``Equal``, or a pre-release/build/dev suffix on either
side, compares numbers and suffixes only; otherwise the ``v`` prefix and the number of parts must agree and the
runtime's version is compared to the model's (``GreaterThan``: the runtime's is higher, as OME writes it).

kvlint only sees the runtimes among its inputs, so what it picks is what OME would pick if those were all the
cluster has; the note says so.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kvlint.types import Document
from kvlint.values import as_list
from kvlint.workloads.base import get_in, int_or_none

__all__ = [
    "MAX_COMPARISONS",
    "Candidate",
    "OmeCatalog",
    "Selection",
    "is_ome",
    "model_size",
    "runtime_refusal",
    "select_runtime",
]

#: OME's scoring defaults (``pkg/runtimeselector/types.go`` ``NewConfig``).
_DEFAULT_PRIORITY = 1
_FORMAT_WEIGHT = 10
_FRAMEWORK_WEIGHT = 5

_NO_AUTO_SELECT = "no supported format has autoSelect: true"
_NO_SCORE = "its score is not positive"

#: A decimal number as Go's ``strconv.ParseFloat`` reads it (sign, digits with an optional point, exponent; or
#: ``inf``/``infinity``/``nan``); no spaces, no underscores. (Go's hexadecimal floats are read as 0 here.)
_GO_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf|infinity|nan))")
_MULT = (("T", 1e12), ("B", 1e9), ("M", 1e6))


def is_ome(doc: Document) -> bool:
    """An ``ome.io/*`` object."""
    api = doc.data.get("apiVersion") if isinstance(doc.data, dict) else None
    return isinstance(api, str) and api.startswith("ome.io/")


def model_size(text: Any) -> float:
    """A ``modelParameterSize`` or size bound in parameters (``355B`` -> 3.55e11), as OME's ``parseModelSize``
    (``pkg/runtimeselector/matcher.go``) reads it: one ``T``/``B``/``M`` suffix (1e12/1e9/1e6) taken off, the
    rest read by ``strconv.ParseFloat`` (``1.5e2B`` is 1.5e11), 0 when that fails, out of range included
    (``1e400B``, a 400-digit number), and 0 for an absent bound."""
    if text is None:
        return 0.0
    body, mult = str(text), 1.0
    for suffix, factor in _MULT:
        if body.endswith(suffix):
            body, mult = body[: -len(suffix)], factor
            break
    if _GO_FLOAT.fullmatch(body) is None:
        return 0.0
    value = float(body)
    if math.isinf(value) and "n" not in body.lower():  # overflow: ParseFloat's ErrRange
        return 0.0
    return value * mult


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


#: A number of an OME model version: ASCII digits, no leading zero (``pkg/modelver`` ``parseNumeric``).
_VERSION_NUMBER = re.compile(r"0|[1-9][0-9]*")
_UINT64_MAX = 2**64 - 1


def _version_number(text: str) -> int | None:
    if len(text) > 20 or _VERSION_NUMBER.fullmatch(text) is None:  # (2**64 - 1 has 20 digits)
        return None
    n = int(text)
    return n if n <= _UINT64_MAX else None


#: At most this many runtime formats are compared with models in one run (each service's selection compares its
#: model with every supported format of every runtime it may use; :meth:`OmeCatalog.select`): sgl-project/ome's
#: own config directory (about 150 runtimes of 1 or 2 formats, 100 models) needs under 40,000. Past it a service
#: is not planned (a KV503 warning says so): thousands of services naming distinct models among thousands of
#: runtimes took a time quadratic in the input.
MAX_COMPARISONS = 500_000


@dataclass(frozen=True)
class _Version:
    """An OME model version (``pkg/modelver`` ``Version``): ``v`` prefix, (major, minor, patch), number of parts
    given, and the pre-release, build and dev suffixes (OME's "unofficial" parts)."""

    prefix: str
    numbers: tuple[int, int, int]
    precision: int
    suffixes: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

    @property
    def unofficial(self) -> bool:
        return any(self.suffixes)


@functools.lru_cache(maxsize=4096)
def _version(text: str) -> _Version | None:
    """An OME model version as ``pkg/modelver`` ``Parse`` reads it (``major[.minor[.patch[+build][-pre][.dev]]]``,
    an optional lowercase ``v`` before the major number); None where ``Parse`` returns an error (empty, a number
    with other characters than ASCII digits or with a leading zero, above 2**64 - 1, or an empty suffix part)."""
    parts = text.split(".", 2)
    major = parts[0]
    prefix = ""
    if major.startswith("v"):
        prefix, major = "v", major[1:]
    patch = parts[2] if len(parts) > 2 else "0"
    build: list[str] = []
    pre: list[str] = []
    dev: list[str] = []
    if "+" in patch:
        patch, rest = patch.split("+", 1)
        build = rest.split(".")
    if "-" in patch:
        patch, rest = patch.split("-", 1)
        pre = rest.split(".")
    if "." in patch:
        patch, rest = patch.split(".", 1)
        dev = rest.split(".")
    numbers = (
        _version_number(major),
        _version_number(parts[1] if len(parts) > 1 else "0"),
        _version_number(patch),
    )
    if any(n is None for n in numbers) or any(not s for s in (*pre, *build, *dev)):
        return None
    a, b, c = (n or 0 for n in numbers)
    return _Version(prefix, (a, b, c), len(parts), (tuple(pre), tuple(build), tuple(dev)))


def _versions_match(runtime_side: dict, model_side: dict) -> bool:
    """``compareModelFormatVersions``/``compareModelFrameworkVersions`` (``matcher.go``): both versions given.
    ``Equal`` (and any version with a suffix) compares the numbers and suffixes, not the prefix or the number
    of parts (``modelver.CompareVersion``); ``GreaterThan``/``GreaterThanOrEqual`` need the same prefix and number
    of parts and compare the runtime's version to the model's (runtime > model, as OME writes it)."""
    rv, mv = _version(str(runtime_side["version"])), _version(str(model_side["version"]))
    if rv is None or mv is None:
        return False
    op = str(runtime_side.get("operator") or "Equal")
    if rv.unofficial or mv.unofficial or op == "Equal":
        return (rv.numbers, rv.suffixes) == (mv.numbers, mv.suffixes)
    if rv.precision != mv.precision or rv.prefix != mv.prefix:
        return False
    if op == "GreaterThan":
        return rv.numbers > mv.numbers
    if op == "GreaterThanOrEqual":
        return rv.numbers >= mv.numbers
    return rv.numbers == mv.numbers


def _named_match(runtime_side: Any, model_side: Any) -> bool:
    """A format or framework of the runtime against the model's: the same name, and equal versions or both
    absent (``compareSupportedModelFormats``)."""
    if not isinstance(runtime_side, dict) or not isinstance(model_side, dict):
        return False
    if _text(runtime_side.get("name")) != _text(model_side.get("name")):
        return False
    rv, mv = runtime_side.get("version"), model_side.get("version")
    if rv is not None and mv is not None:
        return _versions_match(runtime_side, model_side)
    return (rv is None) == (mv is None)


def _format_matches(model: dict, fmt: dict) -> str | None:
    """None when the supported format ``fmt`` matches the BaseModel spec ``model``, else why not
    (``matcher.go`` ``compareSupportedModelFormats``, ``getFormatMismatchReason``)."""
    if fmt.get("diffusionPipeline") is not None:
        return "the runtime requires a diffusion pipeline (not compared by kvlint)"
    for key in ("modelArchitecture", "quantization"):
        have, want = _text(model.get(key)), _text(fmt.get(key))
        if have != want:
            return f"{key} {have or 'unset'} (runtime: {want or 'unset'})"
    if not _named_match(fmt.get("modelFormat"), model.get("modelFormat")):
        return "modelFormat differs"
    rf, mf = fmt.get("modelFramework"), model.get("modelFramework")
    if (rf is None) != (mf is None) or (rf is not None and not _named_match(rf, mf)):
        return "modelFramework differs"
    return None


def _format_score(model: dict, fmt: dict, priority: int) -> int:
    """``scorer.go`` ``CalculateFormatScore``: weight x priority for the matching format, plus the same for the
    framework; 0 when a name or version given on both sides differs."""
    rf, mf = fmt.get("modelFormat"), model.get("modelFormat")
    format_ok = False
    if isinstance(rf, dict):
        if not isinstance(mf, dict) or _text(rf.get("name")) != _text(mf.get("name")):
            return 0
        if rf.get("version") is not None and mf.get("version") is not None:
            if not _versions_match(rf, mf):
                return 0
        format_ok = True
    rw, mw = fmt.get("modelFramework"), model.get("modelFramework")
    framework_ok = False
    if isinstance(rw, dict) and isinstance(mw, dict):
        if _text(rw.get("name")) != _text(mw.get("name")):
            return 0
        if rw.get("version") is not None and mw.get("version") is not None:
            if not _versions_match(rw, mw):
                return 0
        framework_ok = True
    if not (format_ok or rf is None) or not (framework_ok or (rw is None and mw is None)):
        return 0
    score = 0
    if format_ok and isinstance(rf, dict):
        score += (int_or_none(rf.get("weight")) or _FORMAT_WEIGHT) * priority
    if framework_ok and isinstance(rw, dict):
        score += (int_or_none(rw.get("weight")) or _FRAMEWORK_WEIGHT) * priority
    return score


def _accelerator_classes(isvc: Document) -> set[str]:
    """The accelerator classes the service requires (``matcher.go`` ``compareAcceleratorClass``)."""
    out: set[str] = set()
    ann = get_in(isvc.data, "metadata", "annotations")
    if isinstance(ann, dict) and ann.get("ome.io/accelerator-class"):
        out.add(str(ann["ome.io/accelerator-class"]))
    for path in (
        ("spec", "acceleratorSelector", "acceleratorClass"),
        ("spec", "engine", "acceleratorOverride", "acceleratorClass"),
        ("spec", "decoder", "acceleratorOverride", "acceleratorClass"),
    ):
        v = get_in(isvc.data, *path)
        if v:
            out.add(str(v))
    return out


@dataclass(frozen=True)
class Candidate:
    """A runtime among the inputs as OME's selector sees it for one model.

    Attributes:
        doc: the runtime.
        score: ``CalculateScore`` (0 when not selectable).
        size_distance: ``|min - size| + |max - size|`` in parameters (0 without a range or a model size).
        why_not: why OME would not select it (disabled, incompatible, no autoSelect), None when selectable.
        other_format: none of its supported model formats matches the model (a runtime made for other models;
            ``why_not`` says which format it looked at).
    """

    doc: Document
    score: int
    size_distance: float
    why_not: str | None
    other_format: bool = False

    @property
    def cluster(self) -> bool:
        return self.doc.kind == "ClusterServingRuntime"

    @property
    def label(self) -> str:
        return f"{self.doc.kind} '{self.doc.name}'"


@dataclass(frozen=True)
class Selection:
    """What OME's selector does for a service among the inputs.

    Attributes:
        picked: the runtime OME picks, None when none of the inputs' runtimes is selectable.
        candidates: every runtime considered, selectable ones first in OME's order.
        tied: the selectable runtimes that differ from ``picked`` only by name (OME then takes the first name
            in alphabetical order).
        over_budget: nothing was compared: the run's :data:`MAX_COMPARISONS` ran out (:meth:`OmeCatalog.select`).
    """

    picked: Candidate | None
    candidates: list[Candidate] = field(default_factory=list)
    tied: list[Candidate] = field(default_factory=list)
    over_budget: bool = False


def _evaluate(runtime: Document, model: dict, isvc: Document) -> Candidate:
    spec = runtime.data.get("spec") if isinstance(runtime.data, dict) else None
    spec = spec if isinstance(spec, dict) else {}
    size = model.get("modelParameterSize")
    rng = spec.get("modelSizeRange")
    distance = 0.0
    if size is not None and isinstance(rng, dict):
        s = model_size(size)
        distance = abs(model_size(rng.get("min")) - s) + abs(model_size(rng.get("max")) - s)

    def out(why: str | None, score: int = 0, other_format: bool = False) -> Candidate:
        return Candidate(runtime, score, distance, why, other_format)

    if spec.get("disabled") is True:
        return out("it is disabled")
    required = _accelerator_classes(isvc)
    if required:
        supported = {str(c) for c in as_list(get_in(spec, "acceleratorRequirements", "acceleratorClasses"))}
        if not required <= supported:
            return out(f"it does not support the accelerator class {', '.join(sorted(required - supported))}")
    formats = [f for f in as_list(spec.get("supportedModelFormats")) if isinstance(f, dict)]
    reasons = [_format_matches(model, f) for f in formats]
    if not formats or all(r is not None for r in reasons):
        first = next((r for r in reasons if r), "no supportedModelFormats")
        return out(f"no supported model format matches ({first})", other_format=True)
    if size is not None and isinstance(rng, dict):
        s = model_size(size)
        if s < model_size(rng.get("min")) or s > model_size(rng.get("max")):
            return out(
                f"the model size {size} is outside its modelSizeRange [{rng.get('min')}, {rng.get('max')}]"
            )
    if not any(f.get("autoSelect") is True for f in formats):
        return out(_NO_AUTO_SELECT)
    score = 0
    for f in formats:
        if f.get("autoSelect") is False:
            continue
        priority = int_or_none(f.get("priority"))
        score = max(score, _format_score(model, f, _DEFAULT_PRIORITY if priority is None else priority))
    if score <= 0:
        return out(_NO_SCORE)
    return out(None, score)


def runtime_refusal(runtime: Document, model: dict, isvc: Document) -> str | None:
    """Why OME refuses the runtime an InferenceService names for the BaseModel spec ``model`` (disabled, or no
    supported format or size range matching: ``selector.go`` ``ValidateRuntime``, which does not ask for
    ``autoSelect`` or a positive score), None when it accepts it."""
    why = _evaluate(runtime, model, isvc).why_not
    if why is None or why in (_NO_AUTO_SELECT, _NO_SCORE):
        return None
    return why


def select_runtime(runtimes: Sequence[Document], model: dict, isvc: Document) -> Selection:
    """The runtime OME auto-selects among ``runtimes`` for the BaseModel spec ``model`` of the OME
    InferenceService ``isvc`` (module docstring: sgl-project/ome@17b77eda ``pkg/runtimeselector``
    ``SelectRuntime``); only ServingRuntimes of the service's namespace and ClusterServingRuntimes count."""
    ns = isvc.namespace or "default"
    seen: list[Candidate] = []
    for rt in runtimes:
        if rt.kind == "ServingRuntime" and (rt.namespace or "default") != ns:
            continue
        seen.append(_evaluate(rt, model, isvc))
    ok = [c for c in seen if c.why_not is None]
    ok.sort(key=lambda c: (c.cluster, -c.score, c.size_distance, c.doc.name))
    rest = [c for c in seen if c.why_not is not None]
    if not ok:
        return Selection(None, rest)
    best = ok[0]
    tied = [
        c
        for c in ok[1:]
        if (c.cluster, c.score, c.size_distance) == (best.cluster, best.score, best.size_distance)
    ]
    return Selection(best, ok + rest, tied)


def _formats(runtime: Document) -> int:
    """How many supported formats :func:`select_runtime` compares for ``runtime`` (at least 1: the runtime)."""
    spec = get_in(runtime.data, "spec")
    return 1 + len(as_list(spec.get("supportedModelFormats"))) if isinstance(spec, dict) else 1


class OmeCatalog:
    """The OME runtimes and base models among the inputs, and the selections made for the services (each model,
    namespace and accelerator classes selected for once per run, :meth:`select`)."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.runtimes = [
            d for d in docs if d.kind in ("ServingRuntime", "ClusterServingRuntime") and is_ome(d)
        ]
        self.models: dict[tuple[str, str | None, str], Document] = {}
        for d in docs:
            if d.kind in ("BaseModel", "ClusterBaseModel") and is_ome(d) and d.name:
                ns = (d.namespace or "default") if d.kind == "BaseModel" else None
                self.models.setdefault((d.kind, ns, d.name), d)
        #: the runtimes by (kind, namespace or None for cluster ones, name), the first in input order
        self._by_name: dict[tuple[str, str | None, str], Document] = {}
        #: formats a selection compares: those of the cluster runtimes, and of the namespaced ones by namespace;
        #: and the runtimes it considers, by their place in :attr:`runtimes` (a service's namespace's runtimes
        #: and the cluster ones: going over every runtime of every namespace for each service was services x
        #: runtimes, whatever the budget said)
        self._cluster_cost = 0
        self._ns_cost: dict[str, int] = {}
        self._cluster_at: list[int] = []
        self._ns_at: dict[str, list[int]] = {}
        for i, rt in enumerate(self.runtimes):
            if rt.kind == "ServingRuntime":
                ns = rt.namespace or "default"
                self._ns_cost[ns] = self._ns_cost.get(ns, 0) + _formats(rt)
                self._ns_at.setdefault(ns, []).append(i)
                self._by_name.setdefault((rt.kind, ns, rt.name), rt)
            else:
                self._cluster_cost += _formats(rt)
                self._cluster_at.append(i)
                self._by_name.setdefault((rt.kind, None, rt.name), rt)
        self._selected: dict[tuple[str, int, frozenset[str]], Selection] = {}
        #: what a selection note says of each selection kept in ``_selected`` (by its id), written by
        #: :func:`kvlint.workloads.find.ome_isvc_workloads` once per selection
        self.described: dict[int, tuple[str, str]] = {}
        #: formats compared so far in this run (:data:`MAX_COMPARISONS`)
        self.compared = 0

    def select(self, isvc: Document, model_doc: Document) -> Selection:
        """:func:`select_runtime` among :attr:`runtimes` for the service ``isvc`` of the model ``model_doc``, once
        per (namespace, model, accelerator classes) of a run; ``over_budget`` and nothing compared once
        :data:`MAX_COMPARISONS` formats were (the services' order decides which are not planned: the input's)."""
        ns = isvc.namespace or "default"
        key = (ns, id(model_doc), frozenset(_accelerator_classes(isvc)))
        found = self._selected.get(key)
        if found is None:
            cost = self._cluster_cost + self._ns_cost.get(ns, 0)
            if self.compared + cost > MAX_COMPARISONS:
                found = Selection(None, over_budget=True)
            else:
                self.compared += cost
                mspec = get_in(model_doc.data, "spec")
                scope = [self.runtimes[i] for i in heapq.merge(self._cluster_at, self._ns_at.get(ns, []))]
                found = select_runtime(scope, mspec if isinstance(mspec, dict) else {}, isvc)
            self._selected[key] = found
        return found

    def base_model(self, isvc: Document) -> Document | None:
        """The BaseModel of the service's namespace named by ``spec.model.name``, else the ClusterBaseModel
        (``GetBaseModel``); None when neither is among the inputs."""
        name = get_in(isvc.data, "spec", "model", "name")
        if not isinstance(name, str) or not name:
            return None
        return self.models.get(("BaseModel", isvc.namespace or "default", name)) or self.models.get(
            ("ClusterBaseModel", None, name)
        )

    def named_runtime(self, isvc: Document, name: str) -> Document | None:
        """The runtime ``name``: the namespaced one first, then the cluster one (``fetcher.go`` ``GetRuntime``)."""
        return self._by_name.get(("ServingRuntime", isvc.namespace or "default", name)) or self._by_name.get(
            ("ClusterServingRuntime", None, name)
        )
