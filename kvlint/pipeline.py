"""The one pipeline behind ``kvlint check``, the GitHub Action and the admission webhook.

load -> workloads -> engine config -> model + accelerator -> memory plan -> rules -> report

:func:`run_check` takes paths; :func:`run_documents` takes already-loaded documents (the webhook's entry).
Both return a :class:`CheckResult` holding every diagnostic and, per serving container, what kvlint
resolved and planned, so reporters and tests see the same facts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, BinaryIO, TextIO

from kvlint.options import Options
from kvlint.source import LDict, Loc
from kvlint.types import (
    Accelerator,
    CheckResult,
    ContainerResult,
    Diagnostic,
    Finding,
    LoadResult,
    ModelSpec,
    ModelUnavailable,
    Placement,
    ServingConfig,
    SuppressedDiagnostic,
    Workload,
)


def run_check(
    paths: Sequence[str], options: Options | None = None, *, stdin: TextIO | BinaryIO | None = None
) -> CheckResult:
    """Lint files/directories (``-`` = stdin).

    Chart directories (``Chart.yaml``) are rendered with ``helm template`` and kustomizations with
    ``kustomize build``/``kubectl kustomize`` (:mod:`kvlint.render`); ``# Source:`` comments map findings
    back to template files.

    Raises:
        FileNotFoundError: a named path does not exist (the CLI maps it to exit code 2).
        kvlint.render.RenderError: a chart/kustomization cannot be rendered (no helm/kustomize binary).
    """
    from kvlint.render import load_inputs

    options = options or Options()
    loaded = load_inputs(
        paths,
        stdin=stdin,
        helm_values=options.helm_values,
        helm_set=options.helm_set,
        max_file_bytes=options.max_file_bytes,
        exclude=options.exclude,
    )
    return run_documents(loaded, options)


def run_documents(loaded: LoadResult, options: Options | None = None) -> CheckResult:
    """Run every stage after ``load`` on documents already read. Never raises on user input.

    Rule selection (``select``/``ignore``/``severity: off``) and severity overrides from ``options``
    are applied here, then each workload's ``kvlint.io/ignore`` annotation (unless
    ``options.exemptions_allowed`` is False), so every report format and the admission webhook see the
    same diagnostics. The result's ``suppressed`` counts what annotations removed.
    """
    from kvlint.rules import check_container, check_workload_group, finding_to_diagnostic
    from kvlint.workloads import configmaps, find_workloads

    options = options or Options()
    result = CheckResult(
        files=loaded.files, documents=len(loaded.documents), exemptions_allowed=options.exemptions_allowed
    )
    result.diagnostics.extend(configure([finding_to_diagnostic(f) for f in loaded.findings], options))

    cms = configmaps(loaded.documents)
    workloads = find_workloads(loaded.documents)
    result.workloads = len(workloads)
    for w in workloads:
        group: list[ContainerResult] = []
        diags: list[Diagnostic] = []
        try:
            for container in _containers(w.pod_spec):
                cr = analyse_container(w, container, cms, options)
                if cr is None:
                    continue
                group.append(cr)
                result.containers.append(cr)
                diags.extend(_with_candidates(cr, check_container(cr, options), options))
            diags.extend(check_workload_group(w, group, options))
        except Exception as exc:  # a shape no check expected must not hide the other workloads' findings
            diags.append(_internal_error(w, exc))
        kept, suppressed, notes = apply_suppressions(w, configure(diags, options), options)
        result.diagnostics.extend(kept)
        result.diagnostics.extend(configure(notes, options))
        result.suppressed_diagnostics.extend(suppressed)

    kept, suppressed, notes = apply_comment_suppressions(result.diagnostics, loaded, options)
    result.diagnostics = kept + configure(notes, options)
    result.suppressed_diagnostics.extend(suppressed)
    result.diagnostics = _dedupe_sorted(result.diagnostics)
    result.suppressed = len(result.suppressed_diagnostics)
    return result


def configure(diags: Iterable[Diagnostic], options: Options) -> list[Diagnostic]:
    """Drop diagnostics of rules not selected (``select``/``ignore``/``severity: off``) and apply
    severity overrides from ``options.severity``. Pure; keeps order."""
    out: list[Diagnostic] = []
    for d in diags:
        if not options.rule_enabled(d.rule):
            continue
        sev = options.severity.get(d.rule)
        if sev in ("error", "warning", "info") and sev != d.severity:
            d = replace(d, severity=sev)  # type: ignore[arg-type]
        out.append(d)
    return out


# --------------------------------------------------------------------------------------------------
# suppressions: kvlint.io/ignore annotations

IGNORE_ANNOTATION = "kvlint.io/ignore"


@dataclass(frozen=True)
class Exemption:
    """One entry of a ``kvlint.io/ignore`` annotation: ``rule`` (id or prefix, upper-case) and ``reason``
    (empty when none was given)."""

    rule: str
    reason: str


def parse_ignore_annotation(value: str) -> tuple[list[Exemption], list[str]]:
    """Parse ``"KV104=short reason, KV202=other reason"`` (or ``"KV104=a; KV202=b"``).

    Entries are separated by a comma or a semicolon that is followed by a rule selector (``KV``, optional
    digits, then ``=``, ``,``, ``;``, ``:`` or the end), so a reason may itself contain commas and
    semicolons. An entry is ``SEL`` or ``SEL=reason`` where ``SEL`` is a full rule id (``KV103``) or a
    prefix with at least one digit (``KV1``, ``KV10``); a bare ``KV`` would silence every rule and is
    rejected. Returns the exemptions (rule upper-cased, reason stripped) and the entries that are not of
    that form, as written. Never raises.
    """
    split = re.compile(r"[,;]\s*(?=KV[0-9]{0,3}\s*(?:[=,;:]|$))", re.I)
    entry = re.compile(r"^\s*(KV[0-9]{1,3})\s*(?:=(.*))?$", re.S | re.I)
    exemptions: list[Exemption] = []
    bad: list[str] = []
    for part in split.split(value or ""):
        if not part.strip():
            continue
        m = entry.match(part)
        if not m:
            bad.append(part.strip())
            continue
        exemptions.append(Exemption(m.group(1).upper(), (m.group(2) or "").strip()))
    return exemptions, bad


def _annotation_loc(w: Workload) -> Loc | None:
    """Where the ``kvlint.io/ignore`` value stands: the pod template's metadata, else the object's."""
    parts = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", w.path)]
    candidates: list[Any] = []
    if len(parts) >= 2:
        node: Any = w.doc.data
        for p in parts[:-1]:
            node = node[p] if isinstance(node, (dict, list)) and _has(node, p) else None
            if node is None:
                break
        if isinstance(node, dict):
            candidates.append(node.get("metadata"))
    if isinstance(w.doc.data, dict):
        candidates.append(w.doc.data.get("metadata"))
    for meta in candidates:
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        if isinstance(ann, LDict) and IGNORE_ANNOTATION in ann:
            return ann.locs.get(IGNORE_ANNOTATION) or ann.loc
    return w.loc


def _has(node: Any, key: Any) -> bool:
    if isinstance(node, dict):
        return key in node
    return isinstance(key, int) and 0 <= key < len(node)


def apply_suppressions(
    w: Workload, diags: list[Diagnostic], options: Options
) -> tuple[list[Diagnostic], list[SuppressedDiagnostic], list[Diagnostic]]:
    """Apply the workload's ``kvlint.io/ignore`` annotation to its diagnostics.

    Returns ``(kept, suppressed, notes)``: ``notes`` are KV003 warnings, located at the annotation, for
    entries without a reason (such an entry suppresses nothing), for unknown rule ids, for malformed
    entries (including a bare ``KV`` selector, which would match every rule), and for an empty annotation
    value. Entries are parsed by :func:`parse_ignore_annotation` (comma- or semicolon-separated). KV003
    itself cannot be suppressed by the annotation. With ``options.exemptions_allowed`` False the
    annotation is not read at all and every diagnostic is kept.
    """
    value = w.annotations.get(IGNORE_ANNOTATION)
    if value is None or not options.exemptions_allowed:
        return diags, [], []
    value = str(value)
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.checks import severity_of

    loc = _annotation_loc(w)
    obj = "/".join(x for x in (w.kind, w.namespace, w.name) if x)
    ids = set(load_catalog())
    notes: list[Diagnostic] = []

    def note(message: str, fix: str) -> None:
        notes.append(Diagnostic("KV003", severity_of("KV003"), message, loc, fix=fix, object=obj))

    exemptions, bad = parse_ignore_annotation(value)
    if not value.strip():
        note(
            f"{IGNORE_ANNOTATION} is empty; it suppresses nothing",
            'remove the annotation or write "KV104=why this is acceptable, KV202=..."',
        )
    for entry in bad:
        if re.match(r"^\s*KV\s*(?:[=:]|$)", entry, re.I):
            note(
                f"{IGNORE_ANNOTATION} entry {entry!r} has no rule number; a selector must be a rule id or a"
                " prefix with at least one digit (KV1, KV10, KV103); it suppresses nothing",
                "name the rule(s) being accepted, e.g. KV202=why this is acceptable",
            )
            continue
        note(
            f"{IGNORE_ANNOTATION} entry {entry!r} is not of the form RULE=reason; it suppresses nothing",
            'write entries as "KV104=why this is acceptable, KV202=..." (separated by "," or ";")',
        )
    active: list[Exemption] = []
    for e in exemptions:
        if not any(i.startswith(e.rule) for i in ids):
            note(
                f"{IGNORE_ANNOTATION} names unknown rule {e.rule}; it suppresses nothing",
                "use an id listed by `kvlint rules` (e.g. KV104)",
            )
        elif not e.reason:
            note(
                f"{IGNORE_ANNOTATION} suppresses {e.rule} without a reason; the suppression is not applied",
                f'give the reason after "=": {e.rule}=why this finding is acceptable here',
            )
        else:
            active.append(e)
    kept: list[Diagnostic] = []
    suppressed: list[SuppressedDiagnostic] = []
    for d in diags:
        hit = None if d.rule == "KV003" else next((e for e in active if d.rule.startswith(e.rule)), None)
        if hit is None:
            kept.append(d)
        else:
            suppressed.append(SuppressedDiagnostic(d, hit.reason, loc))
    return kept, suppressed, notes


# --------------------------------------------------------------------------------------------------
# suppressions: inline comments

#: ``# kvlint: ignore KV202=reason, KV104=reason`` (a trailing comment on the finding's line, or a comment
#: line directly above it).
_COMMENT_RE = re.compile(r"#\s*kvlint:\s*ignore\b[ \t=:]*(.*)$")
#: Largest file read from disk to look for inline suppressions (a template the Helm mapping named).
_MAX_COMMENT_FILE_BYTES = 1 << 20


def apply_comment_suppressions(
    diags: list[Diagnostic], loaded: LoadResult, options: Options
) -> tuple[list[Diagnostic], list[SuppressedDiagnostic], list[Diagnostic]]:
    """Apply inline ``# kvlint: ignore RULE=reason`` comments to ``diags``.

    A comment suppresses the diagnostics located on its own line (a trailing comment) or, when it is the
    whole line, on the line directly below it; entries are written as in the ``kvlint.io/ignore``
    annotation (:func:`parse_ignore_annotation`), a reason is required, and a comment without one (or
    with an unknown rule or a malformed entry) is reported as KV003 at the comment and suppresses nothing
    (every comment of the files kvlint read is checked, wherever it stands).
    This is where YAML comments are the natural place (a Helm template line, one flag of a long ``args``
    list); comments are not in the object the API server stores, so the admission webhook sees none.

    Texts come from ``loaded.source_texts`` (the loader keeps every file with a ``kvlint:`` comment);
    a location in a file the loader did not read (a Helm template a finding was mapped to) is read from
    disk, up to 1 MiB. Returns ``(kept, suppressed, notes)``. With ``options.exemptions_allowed`` False
    nothing is read and everything is kept.
    """
    if not options.exemptions_allowed:
        return diags, [], []
    from kvlint.rules.catalog import load_catalog
    from kvlint.rules.checks import severity_of

    lines_of: dict[str, list[str] | None] = {}

    def lines(path: str) -> list[str] | None:
        if path.endswith(".json"):
            return None  # JSON has no comments (an AdmissionReview, a .json manifest)
        if path not in lines_of:
            text = loaded.source_texts.get(path)
            if text is None and path not in loaded.read_paths and path != "-":
                try:
                    if os.path.isfile(path) and os.path.getsize(path) <= _MAX_COMMENT_FILE_BYTES:
                        with open(path, encoding="utf-8", errors="replace") as fh:
                            text = fh.read()
                except OSError:
                    text = None
            lines_of[path] = text.splitlines() if text is not None and "kvlint:" in text else None
        return lines_of[path]

    ids = set(load_catalog())
    parsed: dict[tuple[str, int], tuple[list[Exemption], Loc]] = {}
    notes: list[Diagnostic] = []

    def comment(path: str, number: int, whole_line: bool) -> tuple[list[Exemption], Loc] | None:
        text = lines(path)
        if text is None or not 1 <= number <= len(text):
            return None
        line = text[number - 1]
        m = _COMMENT_RE.search(line)
        if m is None or (whole_line and not line.lstrip().startswith("#")):
            return None
        key = (path, number)
        if key not in parsed:
            loc = Loc(path, number, m.start() + 1)
            exemptions, bad = parse_ignore_annotation(m.group(1).strip())
            active: list[Exemption] = []
            problems = [f"entry {b!r} is not of the form RULE=reason" for b in bad]
            for e in exemptions:
                if not any(i.startswith(e.rule) for i in ids):
                    problems.append(f"{e.rule} is not a rule id")
                elif not e.reason:
                    problems.append(f"{e.rule} has no reason")
                else:
                    active.append(e)
            if not exemptions and not bad:
                problems.append("it names no rule")
            if problems:
                notes.append(
                    Diagnostic(
                        "KV003",
                        severity_of("KV003"),
                        f"kvlint: ignore comment: {'; '.join(problems)}; those entries suppress nothing",
                        loc,
                        fix='write "# kvlint: ignore KV104=why this is acceptable" (a reason after "=", '
                        "entries separated by commas)",
                    )
                )
            parsed[key] = (active, loc)
        return parsed[key]

    # every comment of the files read is checked, not only those next to a finding (a broken comment
    # should say so before the finding it is meant for appears)
    for path, text in loaded.source_texts.items():
        if path.endswith(".json") or "kvlint:" not in text:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            m = _COMMENT_RE.search(line)
            if m is not None:
                comment(path, number, line.lstrip().startswith("#"))
    kept: list[Diagnostic] = []
    suppressed: list[SuppressedDiagnostic] = []
    for d in diags:
        hit = None
        if d.loc is not None and d.loc.file and d.rule != "KV003":
            for number, whole in ((d.loc.line, False), (d.loc.line - 1, True)):
                found = comment(d.loc.file, number, whole)
                if found is None:
                    continue
                e = next((x for x in found[0] if d.rule.startswith(x.rule)), None)
                if e is not None:
                    hit = (e, found[1])
                    break
        if hit is None:
            kept.append(d)
        else:
            suppressed.append(SuppressedDiagnostic(d, hit[0].reason, hit[1]))
    return kept, suppressed, notes


def _containers(pod_spec: LDict) -> list[LDict]:
    items = pod_spec.get("containers")
    if not isinstance(items, list):
        return []
    return [c for c in items if isinstance(c, LDict)]


def analyse_container(
    w: Workload, container: LDict, cms: dict[tuple[str | None, str], LDict], options: Options
) -> ContainerResult | None:
    """Parse, resolve and plan one container; None when it is not a serving engine."""
    from kvlint.engines import parse_container

    try:
        serving = parse_container(
            container, pod_spec=w.pod_spec, namespace=w.namespace, configmaps=cms, path=w.path
        )
    except Exception as exc:  # a parser bug must not hide the other workloads' diagnostics
        name = str(container.get("name", "?"))
        serving = ServingConfig(
            engine="vllm",
            container=container,
            container_name=name,
            image=str(container.get("image", "")),
            version=None,
            model=None,
            findings=[
                Finding(
                    "KV503",
                    f"kvlint could not read this container's command ({type(exc).__name__}: {exc})",
                    container.loc,
                )
            ],
            command_loc=container.loc,
        )
    if serving is None:
        return None
    if serving.version is None and options.engine_version:
        serving.version = options.engine_version
    cr = ContainerResult(
        workload=w, container=container, container_name=serving.container_name, serving=serving
    )
    cr.placement = _placement(w, container, options)
    if serving.model is None:
        return cr
    cr.model, cr.model_error = _model(serving, w, options)
    if serving.engine == "vllm" and cr.model is not None:
        _plan_vllm(cr, options)
    elif cr.model is not None:
        _plan_other(cr)
    return cr


def _placement(w: Workload, container: LDict, options: Options) -> Placement:
    from kvlint.accelerators import resolve_placement

    if options.cluster_inventory is not None and not options.accelerator:
        from dataclasses import replace

        from kvlint.cluster import placement_from_cluster

        try:
            placement = placement_from_cluster(w.pod_spec, container, options.cluster_inventory)
        except Exception as exc:
            return Placement(accelerator=None, how=f"cluster resolution failed: {exc}")
        if options.gpu_memory_bytes:
            placement = replace(placement, memory_bytes_override=options.gpu_memory_bytes)
        return placement
    try:
        return resolve_placement(
            w.pod_spec,
            container,
            w.annotations,
            override=options.accelerator,
            gpu_memory_bytes=options.gpu_memory_bytes,
            default=options.default_accelerator,
        )
    except Exception as exc:  # defensive: resolution must never take the run down
        return Placement(accelerator=None, how=f"resolution failed: {exc}")


def _model(serving: ServingConfig, w: Workload, options: Options) -> tuple[ModelSpec | None, str | None]:
    from kvlint.models import resolve_model

    assert serving.model is not None
    ref = str(serving.model.value)
    annotated = w.annotations.get("kvlint.io/model")
    if annotated:
        ref = annotated
    revision = serving.get("revision")
    try:
        return (
            resolve_model(
                ref,
                model_dirs=options.model_dirs,
                model_paths=options.model_paths,
                revision=str(revision) if revision else None,
                allow_hub=options.allow_hub,
            ),
            None,
        )
    except ModelUnavailable as exc:
        return None, str(exc)
    except Exception as exc:  # malformed configs etc.
        return None, f"{ref}: {type(exc).__name__}: {exc}"


def _plan_vllm(cr: ContainerResult, options: Options | None = None) -> None:
    """Resolve vLLM settings (incl. a ``--speculative-config`` draft model) and plan the limiting rank."""
    from dataclasses import replace

    from kvlint.plan.vllm import PlanError, plan_vllm, settings_from_config

    assert cr.model is not None
    try:
        cr.settings = settings_from_config(cr.serving)
    except Exception as exc:
        cr.plan_error = f"settings: {exc}"
        return
    draft_id = getattr(cr.settings, "speculative_model_id", None)
    if draft_id and getattr(cr.settings, "speculative_model", None) is None:
        from kvlint.models import resolve_model

        opts = options or Options()
        try:
            draft = resolve_model(
                str(draft_id),
                model_dirs=opts.model_dirs,
                model_paths=opts.model_paths,
                allow_hub=opts.allow_hub,
            )
            cr.settings = replace(cr.settings, speculative_model=draft)
        except Exception as exc:  # the draft is second-order: plan without it and say so
            cr.plan_error = None
            cr.model_error = f"speculative draft model '{draft_id}' not resolved ({exc}); planned without it"
    gpu = _plannable_gpu(cr)
    if gpu is None:
        return
    acc, total = gpu
    try:
        cr.plan = plan_vllm(
            cr.settings, cr.model, total, gpu_name=acc.name, compute_capability=acc.compute_capability
        )
    except PlanError as exc:
        cr.plan_error = str(exc)
    except (ValueError, ZeroDivisionError, KeyError, TypeError) as exc:
        cr.plan_error = f"{type(exc).__name__}: {exc}"


def _plannable_gpu(cr: ContainerResult) -> tuple[Accelerator, int] | None:
    """(accelerator, device total in bytes) when the container's GPU can be sized by the GPU memory models;
    None when it is unknown, or a non-CUDA/ROCm accelerator (then ``plan_error`` says so)."""
    p = cr.placement
    if p is None or p.accelerator is None or not p.memory_bytes:
        return None
    if p.accelerator.vendor not in ("nvidia", "amd"):
        cr.plan_error = f"{p.accelerator.name} is not a CUDA/ROCm GPU; the {cr.serving.engine} GPU memory model does not apply"
        return None
    return p.accelerator, p.memory_bytes


def _dedupe_sorted(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    out: list[Diagnostic] = []
    for d in diags:
        key = (d.rule, d.loc, d.message, d.object, d.container)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)

    def sort_key(d: Diagnostic) -> tuple[Any, ...]:
        loc = d.loc or Loc("", 0, 0)
        return (loc.file, loc.line, loc.column, d.rule)

    out.sort(key=sort_key)
    return out


__all__ = [
    "IGNORE_ANNOTATION",
    "CheckResult",
    "ContainerResult",
    "Exemption",
    "Options",
    "SuppressedDiagnostic",
    "analyse_container",
    "apply_suppressions",
    "configure",
    "parse_ignore_annotation",
    "run_check",
    "run_documents",
]


def _plan_other(cr: ContainerResult) -> None:
    """TGI / SGLang plans (:func:`kvlint.plan.tgi.plan_tgi`, :func:`kvlint.plan.sglang.plan_sglang`)."""
    from kvlint.plan.vllm import PlanError

    gpu = _plannable_gpu(cr) if cr.model is not None else None
    if gpu is None or cr.model is None or cr.placement is None:
        return
    acc, total = gpu
    try:
        if cr.serving.engine == "tgi":
            from kvlint.plan.tgi import plan_tgi as plan_engine
        elif cr.serving.engine == "sglang":
            from kvlint.plan.sglang import plan_sglang as plan_engine
        else:
            return
        cr.plan = plan_engine(
            cr.serving,
            cr.model,
            total,
            gpus=cr.placement.gpus,
            gpu_name=acc.name,
            compute_capability=acc.compute_capability,
        )
    except PlanError as exc:
        cr.plan_error = str(exc)
    except (ValueError, ZeroDivisionError, KeyError, TypeError) as exc:
        cr.plan_error = f"{type(exc).__name__}: {exc}"


_CAPACITY_RULES = frozenset({"KV101", "KV102", "KV103", "KV104", "KV105"})


def _with_candidates(cr: ContainerResult, diags: list[Diagnostic], options: Options) -> list[Diagnostic]:
    """When the scheduling constraints leave several GPU types (``Placement.candidates``), the worst case
    (smallest memory) decides the diagnostics; each capacity finding then names, per candidate, whether
    the workload fits there (re-planned on that GPU)."""
    from dataclasses import replace

    from kvlint.rules import check_container

    p = cr.placement
    if p is None or len(p.candidates) < 2 or cr.model is None or cr.serving.engine != "vllm":
        return diags
    if not any(d.rule in _CAPACITY_RULES for d in diags):
        return diags
    verdicts: list[str] = []
    for acc in p.candidates:
        sub = ContainerResult(
            workload=cr.workload,
            container=cr.container,
            container_name=cr.container_name,
            serving=cr.serving,
            model=cr.model,
            placement=replace(p, accelerator=acc, candidates=()),
        )
        _plan_vllm(sub, options)
        found = sorted({d.rule for d in check_container(sub, options) if d.rule in _CAPACITY_RULES})
        verdicts.append(f"{acc.name} {'fails (' + ', '.join(found) + ')' if found else 'fits'}")
    note = "; the scheduling constraints allow several GPU types, checked on each: " + ", ".join(verdicts)
    return [replace(d, message=d.message + note) if d.rule in _CAPACITY_RULES else d for d in diags]


#: Prefix of the message kvlint gives when a check fails on an unexpected shape (tests search for it).
INTERNAL_ERROR = "kvlint could not finish checking this workload"


def _internal_error(w: Workload, exc: Exception) -> Diagnostic:
    """A KV503 located at the workload when a stage raised on input it did not expect (never a traceback)."""
    from kvlint.rules import severity_of

    return Diagnostic(
        rule="KV503",
        severity=severity_of("KV503"),
        message=f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); other workloads are unaffected",
        loc=w.loc,
        fix="check that the PodSpec fields have the types Kubernetes expects (lists, mappings, numbers); "
        "if they do, please report this manifest",
        object="/".join(x for x in (w.kind, w.namespace, w.name) if x),
    )
