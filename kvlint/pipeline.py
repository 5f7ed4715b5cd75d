"""The one pipeline behind ``kvlint check``, the GitHub Action and the admission webhook.

load -> workloads -> engine config -> model + accelerator -> memory plan -> rules -> report

:func:`run_check` takes paths; :func:`run_documents` takes already-loaded documents (the webhook's entry).
Both return a :class:`CheckResult` holding every diagnostic and, per serving container, what kvlint
resolved and planned, so reporters and tests see the same facts.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO, TextIO

import kvlint.accelerators as _accelerators
import kvlint.accelerators.site as _site
import kvlint.engines as _engines
import kvlint.engines.images as _images
import kvlint.engines.layout as _layout
import kvlint.engines.options as _options
import kvlint.memory.stage as _stage
import kvlint.models as _models
import kvlint.rules.runner as _runner
import kvlint.workloads as _workloads
from kvlint.accelerators.placement import candidate_placement
from kvlint.engines.command import mounted_script_budget, request_proxy_note
from kvlint.engines.others import other_engine_note
from kvlint.engines.shell import MAX_ARG_STRLEN, REVIEW_COMMAND_CHARS, ReviewTooLarge, review_budget
from kvlint.fastinit import replaced
from kvlint.findcap import FileCap, cap_per_rule
from kvlint.options import Options
from kvlint.source import LDict, Loc, loc_of
from kvlint.statement import clip_words
from kvlint.suppress import (
    IGNORE_ANNOTATION,
    Exemption,
    apply_comment_suppressions,
    apply_suppressions,
    comment_suppresses,
    parse_ignore_annotation,
)
from kvlint.template_params import unresolved_parameters
from kvlint.types import (
    COULD_NOT_FINISH,
    COULD_NOT_READ_COMMAND,
    CheckResult,
    ConfigRefusal,
    ContainerResult,
    Diagnostic,
    Document,
    Finding,
    LoadResult,
    Mark,
    ModelSpec,
    ModelUnavailable,
    OptionFinding,
    Placement,
    ServingConfig,
    SuppressedDiagnostic,
    Value,
    ValuesTerm,
    Workload,
    object_ref,
    ref_part,
)
from kvlint.workloads.base import MODEL_ANNOTATION, RAY_OVERWRITE_CMD_ANNOTATION, engine_containers
from kvlint.workloads.configmaps import scoped as _scoped_cms
from kvlint.workloads.configmaps import with_configmaps as _with_cms
from kvlint.workloads.init_download import init_download


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
        helm_set_file=options.helm_set_file,
    )
    return run_documents(loaded, options)


def run_documents(loaded: LoadResult, options: Options | None = None) -> CheckResult:
    """Run every stage after ``load`` on documents already read. Never raises on user input.

    Rule selection (``select``/``ignore``/``severity: off``) and severity overrides from ``options``
    are applied here, then each workload's ``kvlint.io/ignore`` annotation (unless
    ``options.exemptions_allowed`` is False), so every report format and the admission webhook see the
    same diagnostics. The result's ``suppressed`` counts what annotations removed.
    """
    from kvlint.kustomize_patch import listed_patch_files
    from kvlint.rules.runner import finding_to_diagnostic

    options = options or Options()
    result = CheckResult(
        files=loaded.files,
        documents=len(loaded.documents),
        exemptions_allowed=options.exemptions_allowed,
        engine_named=loaded.engine_named,
    )
    comment_suppressed = comment_suppresses(loaded, options)
    # the loader's findings of a rule in a file past the first MAX_PER_RULE as one (kvlint.findcap.FileCap)
    file_cap = FileCap(comment_suppressed)
    diags = file_cap.take(configure([finding_to_diagnostic(f) for f in loaded.findings], options))
    diags.extend(file_cap.rest())
    documents = loaded.documents
    patches = listed_patch_files(loaded.findings)
    if patches:
        # a kustomization's patch file (its KV002): part of what that kustomization builds, not objects of its own
        documents = [d for d in documents if d.path not in patches]
    cms = _workloads.configmaps(documents, loaded.unparsed_configmaps)
    part = analyse_documents(documents, options, cms=cms, comment_suppressed=comment_suppressed)
    result.workloads = part.workloads
    result.containers.extend(part.containers)
    diags.extend(part.diagnostics)
    result.suppressed_diagnostics.extend(part.suppressed)

    kept, suppressed, notes = apply_comment_suppressions(diags, loaded, options)
    result.suppressed_diagnostics.extend(suppressed)
    result.diagnostics = _dedupe_sorted(kept + configure(notes, options))
    result.suppressed = len(result.suppressed_diagnostics)
    return result


@dataclass
class DocumentsAnalysis:
    """What :func:`analyse_documents` found in some documents: the workloads' diagnostics (configured and
    after ``kvlint.io/ignore`` annotations, in workload order), the suppressed ones, the serving containers
    and the number of workloads."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    suppressed: list[SuppressedDiagnostic] = field(default_factory=list)
    containers: list[ContainerResult] = field(default_factory=list)
    workloads: int = 0


def analyse_documents(
    docs: Sequence[Document],
    options: Options,
    *,
    cms: dict[tuple[str | None, str], LDict] | None = None,
    joined: Any = None,
    comment_suppressed: Callable[[Diagnostic], bool] | None = None,
) -> DocumentsAnalysis:
    """The workloads stage onwards for ``docs``: every workload found, its containers parsed, resolved,
    planned and checked, then its ``kvlint.io/ignore`` annotation applied. Never raises on user input.

    ``cms`` (ConfigMap data by namespace and name) and ``joined`` (services joined with their runtimes and
    presets, :func:`kvlint.workloads.find.join_documents`) default to those of ``docs``; the streaming run
    (:mod:`kvlint.stream`) passes those of every input, so a group of documents is analysed as it would be
    among all the others. ``comment_suppressed`` says which diagnostics a ``# kvlint: ignore`` comment will
    suppress after this stage (:func:`kvlint.suppress.comment_suppresses`): the findings cap
    (:func:`kvlint.findcap.cap_per_rule`) does not count them.
    """
    out = DocumentsAnalysis()
    if cms is None:
        cms = _workloads.configmaps(docs)
    cap = options.max_review_size
    workloads = _workloads.find_workloads(
        docs, joined=joined, limit=cap, max_file_bytes=options.max_file_bytes
    )
    out.workloads = len(workloads)
    if cap is not None:
        too_large = _too_large(workloads, cap)
        if too_large is not None:
            out.diagnostics.append(too_large)
            return out
        # a review: the expansions of all its scripts share one budget (kvlint.engines.shell.review_budget)
        try:
            # the pairing pass reads the few candidates' commands under a budget of its own: past it, no pairing
            with review_budget(), mounted_script_budget():
                workloads = _paired(workloads, cms, options)
        except ReviewTooLarge:
            pass
        with review_budget(), mounted_script_budget():
            _analyse_workloads(workloads, cms, options, out, comment_suppressed)
        return out
    _analyse_workloads(_paired(workloads, cms, options), cms, options, out, comment_suppressed)
    return out


def _paired(
    workloads: Sequence[Workload], cms: dict[tuple[str | None, str], LDict], options: Options
) -> list[Workload]:
    """``workloads`` with the nodes of a hand-rolled multi-node engine, one object each, joined as a leader and
    its workers (:func:`kvlint.engines.multinode.pair_node_objects`)."""
    from kvlint.engines.multinode import pair_node_objects

    return pair_node_objects(workloads, cms, options.engine_version)


def _analyse_workloads(
    workloads: Sequence[Workload],
    cms: dict[tuple[str | None, str], LDict],
    options: Options,
    out: DocumentsAnalysis,
    comment_suppressed: Callable[[Diagnostic], bool] | None = None,
) -> None:
    """Each workload's containers analysed and checked, its ``kvlint.io/ignore`` applied, then each rule's
    findings in a container capped (:func:`kvlint.findcap.cap_per_rule`, not counting those
    ``comment_suppressed`` says a ``# kvlint: ignore`` comment will suppress), into ``out``."""
    # (the stages' modules are imported with this one and their functions looked up when called, so that a
    # test's stand-in for one of them is what runs; a function-level import costs a microsecond per container)
    check_container, finding_to_diagnostic = _runner.check_container, _runner.finding_to_diagnostic
    # (the workload, its request proxy's note) when it serves nothing; the files with a container running an
    # engine kvlint does not model (its KV503 note)
    proxies: list[tuple[Workload, Finding]] = []
    others: set[str] = set()
    for w in workloads:
        diags: list[Diagnostic] = [finding_to_diagnostic(f, _object(w)) for f in w.findings]
        served, proxy, other_seen = False, None, False
        try:
            # the ConfigMaps a chart renders beside a workload built from its values (production-stack configs)
            # of a name several files define, the ConfigMap the workload is deployed with (configmaps.scoped)
            w_cms = _with_cms(
                _scoped_cms(cms, w.doc.path, w.namespace, w.pod_spec, w.doc.render), w.configmaps
            )
            containers = _containers(w.pod_spec)
            # a pod's containers share their vLLM plans where every input is the same (stage.shared_plans)
            with _stage.shared_plans(w.pod_spec) if len(containers) > 1 else _NO_SHARING:
                for container in containers:
                    cr = analyse_container(w, container, w_cms, options)
                    if cr is None:
                        # not vLLM, SGLang or TGI: another LLM engine on a GPU is said so, not passed in silence
                        other = other_engine_note(w, container)
                        if other is not None:
                            other_seen = True
                            diags.append(finding_to_diagnostic(other, _object(w)))
                        elif proxy is None:
                            proxy = request_proxy_note(container, w.kind)
                        continue
                    served = True
                    out.containers.append(cr)
                    found = _on_assumed_env(cr, _with_candidates(cr, check_container(cr, options), options))
                    diags.extend(in_values_terms(found, w.values_terms) if w.values_terms else found)
                    _restate_runtime_note(w, cr, diags)
        except ReviewTooLarge as exc:
            # past the review's command-line budget (kvlint.engines.shell.review_budget): nothing is answered but
            # that the object is too large, as for one over the cap
            out.diagnostics[:] = [_too_large_at(w, _command_text(exc.chars), f"{exc.limit:,}")]
            out.suppressed.clear()
            out.containers.clear()
            return
        except Exception as exc:  # a shape no check expected must not hide the other workloads' findings
            diags.append(_internal_error(w, exc))
        if other_seen:
            others.add(w.doc.path)
        elif proxy is not None and not served:
            proxies.append((w, proxy))
        diags = _pod_findings_once(diags)
        kept, suppressed, notes = apply_suppressions(w, configure(diags, options), options)
        out.diagnostics.extend(cap_per_rule(kept, comment_suppressed))
        out.diagnostics.extend(configure(notes, options))
        out.suppressed.extend(suppressed)
    _proxies_only(proxies, others, out, options)
    _joined_unsized(out, options, comment_suppressed)


def _proxies_only(
    proxies: list[tuple[Workload, Finding]], others: set[str], out: DocumentsAnalysis, options: Options
) -> None:
    """The request-proxy note (:func:`kvlint.engines.command.request_proxy_note`, KV506 info) of each workload in
    ``proxies`` (whose pod runs no serving container while one of its containers is a request proxy, router,
    frontend or planner that requests no GPU), once per file, when nothing else in its file serves a model: no
    serving container (a Dynamo deployment's frontend beside its workers, a router Deployment beside the
    LeaderWorkerSets it balances, is said nothing of: the file's engines are sized) and no container running an
    engine kvlint does not model (``others``, files with its KV503 note). Such a file was passed in silence. The
    workload's ``kvlint.io/ignore`` applies as to its other findings."""
    if not proxies:
        return
    quiet = {cr.workload.doc.path for cr in out.containers} | others
    for w, note in proxies:
        if w.doc.path in quiet or not options.rule_enabled(note.rule):
            continue
        quiet.add(w.doc.path)
        d = _runner.finding_to_diagnostic(note, _object(w))
        kept, suppressed, _ = apply_suppressions(w, configure([d], options), options)
        out.diagnostics.extend(kept)
        out.suppressed.extend(suppressed)


def _joined_unsized(
    out: DocumentsAnalysis, options: Options, comment_suppressed: Callable[[Diagnostic], bool] | None = None
) -> None:
    """A multi-node worker that joins its leader's engine and is not sized for the leader's reason is said to be
    so at its own line (:func:`kvlint.sizing.joined_unsized_notes`), once every workload's containers are known
    (the leader may come after it), with the worker's ``kvlint.io/ignore`` applied as to its other findings; none
    when the leader's own finding of why is suppressed (by a comment: ``comment_suppressed``; by its annotation).
    The note stays an info whatever the rule's severity override: it counts nothing the leader's finding does not."""
    from kvlint.sizing import joined_unsized_notes

    set_aside = [s.diagnostic for s in out.suppressed]
    for cr, f in joined_unsized_notes(out.containers, out.diagnostics, comment_suppressed, set_aside):
        w = cr.workload
        d = _runner.finding_to_diagnostic(f, _object(w), cr.container_name)
        # the rule's selection applies, not its severity override: the note restates the leader's finding, which
        # the override already raised ("severity: {KV502: error}" counted one unsized engine as 2 errors, and
        # a webhook denied it twice)
        if not options.rule_enabled(d.rule):
            continue
        kept, suppressed, _ = apply_suppressions(w, [d], options)
        out.diagnostics.extend(kept)  # (its annotation's KV003 notes were made with its other findings)
        out.suppressed.extend(suppressed)


#: Rules a serving container's check also says of its pod as a whole (KV005 on a pod spec key or an init
#: container's, KV410 on the pod's GPU request summed over its containers): said once, at the pod's first serving
#: container, not once per serving container.
_POD_WIDE_RULES = frozenset({"KV005", "KV410"})


def _pod_findings_once(diags: list[Diagnostic]) -> list[Diagnostic]:
    """``diags`` of one workload without the repeats of a :data:`_POD_WIDE_RULES` finding that another serving
    container of the pod already made (same rule, position, message and fix: a container's own key is named with
    its container, so only what is said of the pod repeats). Keeps order."""
    seen: set[tuple[str, object, str, str]] = set()
    out = []
    for d in diags:
        if d.rule in _POD_WIDE_RULES:
            key = (d.rule, d.loc, d.message, d.fix)
            if key in seen:
                continue
            seen.add(key)
        out.append(d)
    return out


def _restate_runtime_note(w: Workload, cr: ContainerResult, diags: list[Diagnostic]) -> None:
    """The runtime template's KV502 note (``diags``' first ones are ``w.findings``) restated in place when ``cr``'s
    engine command names its model literally (``--model org/name``) and the runtime has no ``kvlint.io/model``:
    the note made before the command was parsed says the model comes from the service
    (:func:`kvlint.workloads.find.restate_runtime_note`)."""
    from kvlint.rules.facts import runtime_names_model
    from kvlint.workloads.find import restate_runtime_note

    for i, f in enumerate(w.findings):
        if f.mark is not Mark.RUNTIME_TEMPLATE or w.annotations.get(MODEL_ANNOTATION) or w.derived_model:
            continue
        named = runtime_names_model(w, cr.serving)
        if named is not None and i < len(diags) and diags[i].mark is Mark.RUNTIME_TEMPLATE:
            diags[i] = _runner.finding_to_diagnostic(restate_runtime_note(w, named), _object(w))
        return


#: Findings that already speak of what the user wrote: the engine parsers' (restated for chart values by
#: :func:`kvlint.engines.options.chart_provenance`) and the notes on how the workload was read.
_OWN_TERMS = frozenset({"KV205", "KV206", "KV207", "KV503", "KV504", "KV505"})


def in_values_terms(diags: Sequence[Diagnostic], terms: Sequence[ValuesTerm]) -> list[Diagnostic]:
    """``diags`` of a workload built from chart values with each fix that names a flag or a PodSpec field
    followed by what that is in the values (``terms``: :attr:`kvlint.types.Workload.values_terms`; the first
    term to match a span of the fix wins it): ``--max-model-len 2048 pins ... (in these values:
    --max-model-len is vllmConfig.maxModelLen)``. The user edits the values, not the pod the chart renders.
    Message, position and severity are kept; the parsers' own findings (:data:`_OWN_TERMS`) are left as they
    are. Pure."""
    out: list[Diagnostic] = []
    for d in diags:
        if d.rule in _OWN_TERMS or not d.fix:
            out.append(d)
            continue
        taken: list[tuple[int, int]] = []
        said: list[str] = []
        heading = ""
        for term in terms:
            for m in term.pattern.finditer(d.fix):
                if term.only is not None and m.group() not in term.only:
                    continue
                if any(a < m.end() and m.start() < b for a, b in taken):
                    continue
                taken.append(m.span())
                heading = heading or term.heading
                if term.phrase not in said:
                    said.append(term.phrase)
        out.append(replaced(d, fix=f"{d.fix} ({heading}: {'; '.join(said)})") if said else d)
    return out


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


#: The context of a pod whose containers do not share a memo scope (one container: nothing to share).
_NO_SHARING = contextlib.nullcontext()


def _containers(pod_spec: LDict) -> list[LDict]:
    """The containers of ``pod_spec`` kvlint reads (:func:`kvlint.workloads.base.engine_containers`)."""
    return engine_containers(pod_spec)


def _refused_kwarg(f: Finding, refusal: str) -> Finding:
    """``f``, when it is a KV205 for an unknown option of a workload whose options are an operator's keyword
    arguments (:attr:`~kvlint.types.Workload.engine_kwargs_refusal`), with what refuses that option
    (``refusal``, ``KEY`` standing for the option's key) and a fix naming the key; else ``f`` unchanged."""
    if not isinstance(f, OptionFinding) or f.rule != "KV205" or not f.option.startswith("--"):
        return f
    key = f.option[2:]
    return replace(
        f,
        message=f"{f.message}; {refusal.replace('KEY', key)}",
        fix=f.fix.replace(f"remove --{key}", f"remove {key} from engine_kwargs") if f.fix else f.fix,
    )


#: The kinds whose head and worker pods KubeRay's operator builds from a RayClusterSpec: ray.io's RayCluster,
#: RayService (spec.rayClusterConfig) and RayJob (spec.rayClusterSpec), and AIBrix's RayClusterFleet and
#: RayClusterReplicaSet, whose controllers create RayClusters from their template
_KUBERAY_KINDS = frozenset({"RayCluster", "RayService", "RayJob", "RayClusterFleet", "RayClusterReplicaSet"})


def kuberay_writes_command(w: Workload, container: LDict) -> bool:
    """KubeRay's operator, not ``container``'s image, decides what it runs: it is the Ray container (the first
    one, ``utils.RayContainerIndex`` 0) of a head or worker pod template (``headGroupSpec``, ``workerGroupSpecs``)
    of a kind of :data:`_KUBERAY_KINDS`, and the ``ray.io/overwrite-container-cmd`` annotation is not "true".
    ray-project/kuberay v1.7.0 ray-operator/controllers/ray/common/pod.go BuildPod sets that container's command to
    ``/bin/bash -lc --`` and its args to ``ulimit -n ...; ray start ...``, after the user's command and args when
    it has some that do not say ``ray start``."""
    if w.kind not in _KUBERAY_KINDS:
        return False
    path = f".{w.path}"
    if ".headGroupSpec." not in path and ".workerGroupSpecs[" not in path:
        return False
    if str((w.annotations or {}).get(RAY_OVERWRITE_CMD_ANNOTATION, "")).strip().lower() == "true":
        return False
    first = w.pod_spec.get("containers")
    return isinstance(first, list) and bool(first) and first[0] is container


def _serves_derived_model(w: Workload, container: LDict) -> bool:
    """Whether ``container``, naming no model, serves its workload's ``derived_model``: only a Dell Enterprise Hub
    model image, whose baked-in model the pod's ``hf.co/model`` label names (:func:`kvlint.engines.images.
    dell_hub_model`). Not a stock TGI or vLLM container beside it, nor a container of an operator's pod that
    names no model (a sidecar in an LLMInferenceService's ``template``: the operator gives the model it names to
    its own ``main`` container only); those start their engine's default model or none (KV503), as before."""
    return _images.dell_hub_model(w.labels or {}, (container.get("image"),)) == w.derived_model


def analyse_container(
    w: Workload, container: LDict, cms: dict[tuple[str | None, str], LDict], options: Options
) -> ContainerResult | None:
    """Parse, resolve and plan one container; None when it is not a serving engine."""
    from kvlint.rules.facts import is_runtime_template

    try:
        serving = _engines.parse_container(
            container,
            pod_spec=w.pod_spec,
            namespace=w.namespace,
            configmaps=cms,
            path=w.path,
            # a release the object installs itself (a Ray runtime_env pip pin) is this container's: it wins over the
            # image's tag (installed_release) and, where the engine command is not read, over --engine-version
            engine_version_option=w.engine_release or options.engine_version,
            installed_release=w.engine_release,
            # a runtime template's ${TENSOR_PARALLEL_SIZE} is the using service's workerSpec size (KServe sets the
            # variable): it is not sized on its own anyway ("runtime template"), so the parser's note is an info
            runtime_template=is_runtime_template(w),
            kuberay=kuberay_writes_command(w, container),
            # a worker node's script joins its leader's engine: not an engine started from its env
            from_env=w.role not in ("worker", "head") and not w.kind.lower().startswith("ray"),
            # a leader's engine may span its group's pods (a LeaderWorkerSet of size 2: 2 pods' GPUs)
            group_pods=w.group_size if w.group_size is not None and w.group_size > 1 else 1,
            # envsubst replaces $TP as well as ${TP} before the manifest is applied: not the engine's literal text
            envsubst_template=any(f.mark is Mark.ENVSUBST_TEMPLATE for f in w.findings),
        )
    except ReviewTooLarge:  # the review's budget of command lines ran out: the review answers it
        raise
    except Exception as exc:  # a parser bug must not hide the other workloads' diagnostics
        name = ref_part(str(container.get("name", "?")))
        serving = ServingConfig(
            engine="vllm",
            container=container,
            container_name=name,
            image=str(container.get("image", "")),
            # the release as the main path decides it: a pin the object installs over the image wins
            version=w.engine_release
            or _images.engine_release(str(container.get("image", "")), "vllm", options.engine_version),
            model=None,
            findings=[
                Finding(
                    "KV503",
                    f"{COULD_NOT_READ_COMMAND}{type(exc).__name__}: {exc})",
                    container.loc,
                )
            ],
            command_loc=container.loc,
        )
    if serving is None:
        return None
    if (
        serving.model is None
        and w.derived_model
        and serving.joins is None
        and _serves_derived_model(w, container)
    ):
        # a container that names no model serves the one its workload's reader derived (a Dell Enterprise Hub
        # model image's hf.co/model label, kvlint.engines.images.dell_hub_model), said at its image
        at = loc_of(container, "image") or container.loc
        serving.model = Value(w.derived_model, at, raw=w.derived_model, source="derived")
    if serving.findings and any(f.mark is Mark.ENVSUBST_TEMPLATE for f in w.findings):
        # a word wholly a ${VAR} of a template KV002 reported: the renderer's, unseen, not an unknown option
        serving.findings = _options.template_words(serving.findings, serving.engine)
    elif serving.findings and w.doc is not None and w.doc.kind == "Template":
        # an OpenShift Template's parameter with no value (required, generated): oc process fills it in
        unset = unresolved_parameters(w.doc.data)
        if unset:
            serving.findings = _options.template_words(serving.findings, serving.engine, unset)
    # past the first unknown options of the command line, one finding names the others (before they are restated)
    serving.findings = _options.cap_unknown_options(serving.findings)
    if isinstance(container.get("env"), list) or isinstance(container.get("envFrom"), list):
        from kvlint.workloads.configmaps import env_problems

        serving.env_unread = env_problems(container, cms, w.namespace)
    if w.chart_args and serving.findings:
        # KV205-KV207 on a flag the chart wrote name the values key that made it write the flag
        serving.findings = _options.chart_provenance(serving.findings, w.chart_args)
    refusal = w.engine_kwargs_refusal
    if refusal:
        serving.findings = [_refused_kwarg(f, refusal) for f in serving.findings]
    if serving.joins is not None:
        from kvlint.engines.multinode import find_leader

        find_leader(serving, w, cms, options.engine_version)
    elif w.role == "worker" and w.leader is not None:
        from kvlint.engines.multinode import join_follower

        # a worker that runs the engine as a follower node of its leader's (vLLM --headless, SGLang --node-rank):
        # the group is one engine, sized once at the leader
        join_follower(serving, w, cms, options.engine_version)
    if w.kaito_sku is not None:
        nodes = _kaito_nodes(w, serving, options)
        if nodes > 1:
            # KAITO runs the preset over several nodes with pipeline parallelism: read the command it writes
            from kvlint.workloads.kaito import spread_over_nodes

            spread, spread_container = spread_over_nodes(w, container, nodes)
            return analyse_container(spread, spread_container, cms, options)
        if nodes == 0:
            # a preset under half a GPU on a multi-GPU node: KAITO runs it data-parallel, one replica a GPU
            from kvlint.workloads.kaito import run_data_parallel

            dp, dp_container = run_data_parallel(w, container)
            return analyse_container(dp, dp_container, cms, options)
    return analyse_serving(_with_init_download(w, serving, cms), container, serving, options)


def _with_init_download(
    w: Workload, serving: ServingConfig, cms: dict[tuple[str | None, str], LDict]
) -> Workload:
    """``w`` with where its init container fetches the model the engine serves from a path
    (:func:`kvlint.workloads.init_download.init_download`) as its ``model_storage``, for this container only,
    when nothing else names the model (no ``kvlint.io/model``, no model or storage the operator object names);
    else ``w`` itself."""
    if (
        serving.model is None
        or w.model_storage
        or w.derived_model
        or w.annotations.get(MODEL_ANNOTATION)
        or not isinstance(w.pod_spec, dict)
        or not w.pod_spec.get("initContainers")
    ):
        return w
    got = init_download(w.pod_spec, str(serving.model.value), cms, w.namespace, serving.container)
    if got is None:
        return w
    name = serving.container.get("name") if isinstance(serving.container, dict) else None
    return replace(w, model_storage=got[0], model_downloader=got[1], model_container=str(name or ""))


def _kaito_nodes(w: Workload, serving: ServingConfig, options: Options) -> int:
    """The nodes KAITO spreads ``w``'s vLLM preset over (:func:`kvlint.workloads.kaito.kaito_node_count`), from
    kvlint's figures for its model: the whole-model weight bytes (the checkpoint size when known, else kvlint's
    estimate; :func:`kvlint.models.weights.weight_bytes`) for KAITO's safetensors size, and the KV bytes a token
    of the whole model (:func:`kvlint.memory.kv.kv_bytes_per_token` at TP 1) for KAITO's ``BytesPerToken``; the
    inference config's explicit ``max-model-len``, if any. 0 when the preset stays on one node and KAITO runs it
    data-parallel over the node's GPUs instead (:func:`kvlint.workloads.kaito.kaito_data_parallel`, on the same
    weight bytes). 1 (no change) when the model is unknown, the command already sets a pipeline-parallel size,
    or anything fails."""
    assert w.kaito_sku is not None
    if serving.engine != "vllm" or serving.model is None or serving.get("pipeline_parallel_size") is not None:
        return 1
    try:
        from kvlint.memory.kv import kv_bytes_per_token
        from kvlint.models.weights import weight_bytes
        from kvlint.workloads.kaito import kaito_data_parallel, kaito_node_count

        model, _ = resolve_container_model(serving, w, options)
        if model is None:
            return 1
        quant = serving.get("quantization")
        size = weight_bytes(model, dtype_bytes=2, quantization=str(quant) if quant else None)[0]
        mml = serving.get("max_model_len")
        gpus, gib = w.kaito_sku
        nodes = kaito_node_count(
            gpus, gib, int(size), kv_bytes_per_token(model), mml if isinstance(mml, int) and mml > 0 else None
        )
        # KAITO's tier 1 is decided on one node only (configureParallelism: !multiNode)
        return 0 if nodes == 1 and kaito_data_parallel(gpus, gib, int(size)) else nodes
    except Exception:  # an estimate: never let it take the container's analysis down
        return 1


def analyse_serving(
    w: Workload,
    container: LDict,
    serving: ServingConfig,
    options: Options,
    *,
    placement: Placement | None = None,
) -> ContainerResult:
    """The stages after the engine parser for one serving container: accelerator (``placement``, resolved
    from the PodSpec unless given), model, then the engine memory model (:func:`kvlint.memory.stage.plan_container`).

    This is also the entry point of ``kvlint plan``, which builds ``serving`` from a command line and
    ``placement`` from its flags. ``serving.version`` is the engine release as the parser decided it with
    ``options.engine_version`` (:func:`kvlint.engines.images.engine_release`, the one rule): it is planned as
    is, so the plan, the rules and the option parser agree on it. Never raises on user input: what could not be
    resolved is recorded on the result (``model_error``, ``plan_error`` with its ``plan_refusal``) for the resolution
    rules to report.
    """
    cr = ContainerResult(
        workload=w, container=container, container_name=serving.container_name, serving=serving
    )
    cr.placement = placement if placement is not None else _placement(w, container, options)
    if (
        serving.joins is not None
        and serving.joins.follower
        and _other_gpu_than_leader(w, serving, cr.placement, options)
    ):
        # a follower on another GPU than its leader's: sized on its own, on its own GPU (KV403 compares the two)
        serving.apart_from, serving.joins = serving.joins, None
    if serving.model is None or serving.joins is not None:
        return cr  # no model, or a follower node of its leader's engine, which is sized at the leader
    cr.model, cr.model_error, cr.model_annotation_overruled, cr.model_refusal = _resolve_model(
        serving, w, options
    )
    cr.model_looked_up = _looked_up(serving, w, cr)
    cr.model_annotation_replaced = _replaced_model(serving, w, options, cr)
    outcome = _stage.plan_container(serving, cr.model, cr.placement, options)
    cr.settings = outcome.settings
    cr.plan_detail = outcome.detail
    cr.plan = outcome.plan
    cr.plan_error = outcome.error
    cr.plan_refusal = outcome.refusal
    if outcome.model_note:
        cr.model_error = outcome.model_note
    if cr.placement is not None and cr.placement.accelerator is None and cr.model is not None:
        cr.fleet = _fleet(cr, options)
    return cr


def _other_gpu_than_leader(
    w: Workload, serving: ServingConfig, placement: Placement, options: Options
) -> bool:
    """Whether the follower node ``serving`` of ``w`` (:func:`kvlint.engines.multinode.join_follower`) is placed on
    another GPU type than its leader, both named. The group is sized once, at the leader, only while every node has
    the leader's GPU: each node loads its own share of the weights and profiles its KV memory on its own GPUs (vLLM
    sets every rank's blocks to the smallest rank's, ``vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs``;
    SGLang the smallest over all ranks, ``get_available_gpu_memory(distributed=True)``), so a LeaderWorkerSet whose
    leader names H100s and whose workers name L4s passed with no finding, its workers' share of a 405B model never
    sized on the L4s they run on. Such a follower is sized on its own, as a worker whose settings differ is, and so
    is one whose pod names no GPU while its leader's does (it may land on any: sized against the fleet, KV501)."""
    joins = serving.joins
    if joins is None or joins.leader is None or w.leader is None or placement.requests_no_gpu:
        return False
    lead = _placement(w.leader, joins.leader.container, options)
    if lead.accelerator is None:
        return False
    if placement.accelerator is None:  # the leader's GPU named, the follower's not: it may land on any
        return True
    return lead.accelerator.id != placement.accelerator.id or lead.memory_bytes != placement.memory_bytes


def _fleet(cr: ContainerResult, options: Options) -> tuple[Any, ...]:
    """The container planned on each GPU of the fleet (``.kvlint.yaml`` ``fleet``, else the default one) when
    its own GPU is unknown: a CUDA/ROCm image only (a ROCm one, or any image requesting ``amd.com/gpu``, on the
    default ROCm fleet unless a fleet is configured), ``gpus`` per pod from its GPU limit, else the engine's workers (TP x PP x local DP). None for
    a container that requests no GPU at all (KV405; KV501 says there is no GPU to size it on)."""
    if cr.model is None or cr.placement is None or _layout.unresolved_sizes(cr.serving):
        return ()  # no plan on a guessed GPU layout (kvlint.engines.layout.unresolved_sizes)
    if cr.placement.requests_no_gpu or cr.placement.mig_unoffered:
        return ()  # no GPU to size on, or only GPUs without the MIG slice requested (Placement.mig_unoffered)
    platform = _images.platform_of(cr.serving, cr.placement.resource)
    if platform not in ("cuda", "rocm") or _images.gpu_build_on_other_accelerator(cr.serving, cr.placement):
        return ()  # not a GPU build, or a GPU build on a TPU, Gaudi, Neuron or Ascend node (KV304)
    if cr.serving.engine == "vllm" and cr.settings is None:
        return ()
    if _images.gpu_vendor_of_resource(cr.placement.resource) == "amd":
        # amd.com/gpu is advertised by AMD's device plugin on AMD nodes only: an image whose build kvlint cannot
        # read (an engine's CUDA image there is KV304, above) is planned on AMD GPUs, not the CUDA fleet
        platform = "rocm"
    elif _images.gpu_vendor_of_resource(cr.placement.resource) == "nvidia":
        # likewise nvidia.com/gpu (and its shared and MIG forms) on NVIDIA nodes only: a custom image whose name
        # merely holds a ROCm word (harbor.transwarp.io/aip-amd/xpu-nvidia/vllm-openai; a vendor's published
        # ROCm build there is KV304, above) is planned on the GPUs the pod can land on, not the AMD Instinct fleet
        platform = "cuda"
    fleet, configured = (options.site or _site.Site()).fleet_accelerators(platform)
    if platform == "rocm" and not configured:
        # an image built for one AMD architecture (SGLang's -mi30x tags) runs only on its GPUs
        fleet = _build_target_fleet(fleet, cr.serving.image) or fleet
    gpus = cr.placement.gpus or _layout.parallelism(cr.serving, gpus=None).workers
    return _stage.plan_fleet(cr.serving, cr.settings, cr.model, cr.placement, fleet, max(1, gpus))


def _build_target_fleet(fleet: tuple[Any, ...], image: str) -> tuple[Any, ...]:
    """The accelerators of ``fleet`` an image built for one AMD architecture runs on
    (:func:`kvlint.engines.images.rocm_build_target`, the catalogue's ``llvm_target``), or for the GPU family a ROCm
    build of vLLM's tag names (:func:`kvlint.engines.images.rocm_family_target`: ``rocm/vllm:..._mi300_...``); empty
    when the image is neither or none of them has its architecture."""
    from kvlint.accelerators.registry import llvm_target

    target = _images.rocm_build_target(image) or _images.rocm_family_target(image)
    if target is None:
        return ()
    return tuple(a for a in fleet if llvm_target(a.id) == target[0])


def _placement(w: Workload, container: LDict, options: Options) -> Placement:
    """The GPU ``container`` of ``w`` is placed on: from the live cluster's nodes (``options.cluster_inventory``,
    :func:`kvlint.cluster.placement_from_cluster`) unless ``--accelerator`` names one, else from the PodSpec
    (:func:`kvlint.accelerators.workload_placement`). Both never raise on a malformed manifest; an exception
    from them is kvlint's own failure and is not caught here: it reaches the per-workload net of
    :func:`_analyse_workloads` (:data:`INTERNAL_ERROR`, KV503). Caught and returned as a placement with no
    accelerator it read as "no GPU requested" (KV405, a warning) and skipped the capacity rules, so a crash
    there turned a KV101 error into a warning the admission webhook admits."""
    if options.cluster_inventory is not None and not options.accelerator:
        from kvlint.cluster import placement_from_cluster

        placement = placement_from_cluster(w.pod_spec, container, options.cluster_inventory)
        annotated = _cluster_annotation(w, container, placement, options)
        if annotated is not None:
            return annotated
        if options.gpu_memory_bytes:
            placement = replace(placement, memory_bytes_override=options.gpu_memory_bytes, mig_profile=None)
        return placement
    return _accelerators.workload_placement(
        w,
        container,
        override=options.accelerator,
        gpu_memory_bytes=options.gpu_memory_bytes,
        default=options.default_accelerator,
        site=options.site,
        annotation_decides=options.exemptions_allowed,
    )


def _cluster_annotation(
    w: Workload, container: LDict, cluster: Placement, options: Options
) -> Placement | None:
    """Under ``--cluster``, the placement the user's ``kvlint.io/accelerator`` annotation gives, or None when the
    live nodes' placement ``cluster`` stands. The nodes the pod can schedule on are its own facts, read as the
    pod's nodeSelector and affinity are without ``--cluster`` (:func:`kvlint.accelerators.placement.
    resolve_placement`, ``annotation_decides``): where no fitting node names a GPU kvlint knows the annotation
    names it; a GPU the nodes do not carry, or one among several they do, is applied only with exemptions
    allowed, and the contradiction is recorded either way (:class:`~kvlint.types.AnnotationConflict`, KV005);
    the nodes' own GPU named again changes nothing."""
    from kvlint.accelerators.placement import ANNOTATION
    from kvlint.types import AnnotationConflict

    ann = w.annotations.get(ANNOTATION)
    if ann is None or not str(ann).strip():
        return None
    lookup = options.site.lookup if options.site is not None else _accelerators.lookup
    acc = lookup(str(ann))
    if acc is None:
        return None  # not a GPU kvlint knows: the nodes decide (resolve_placement notes it without --cluster)
    own = cluster.accelerator
    allowed = ({own.id} | {a.id for a in cluster.candidates}) if own is not None else set()
    within = acc.id in allowed and len(allowed) > 1
    if own is not None and acc.id in allowed and not within:
        return None  # the nodes' GPU
    annotated = _accelerators.workload_placement(
        w, container, override=acc.id, gpu_memory_bytes=options.gpu_memory_bytes, site=options.site
    )
    annotated = replace(
        annotated,
        how=f"annotation {ANNOTATION}={ann}" + annotated.how[len(f"--accelerator {acc.id}") :],
        loc=loc_of(w.annotations, ANNOTATION),
    )
    if own is None:
        return annotated  # no fitting node names a GPU kvlint knows: the annotation says which
    conflict = AnnotationConflict(str(ann), acc, own, cluster.how, options.exemptions_allowed, within)
    if options.exemptions_allowed:
        return replace(annotated, annotation_conflict=None if within else conflict)
    if options.gpu_memory_bytes:
        cluster = replace(cluster, memory_bytes_override=options.gpu_memory_bytes, mig_profile=None)
    return replace(cluster, annotation_conflict=conflict)


def resolve_container_model(
    serving: ServingConfig, w: Workload, options: Options
) -> tuple[ModelSpec | None, str | None]:
    """The models stage for one container: ``(ModelSpec, None)`` or ``(None, why not)``.

    The reference is the engine's model argument unless the workload names another (:func:`model_reference`);
    the engine's ``revision`` setting is passed on. Never raises on user input (a model it cannot resolve is
    the second item; kvlint's own failure in the stored-model fallback is not caught, :func:`_stored_model`).
    """
    model, error, _overruled, _refusal = _resolve_model(serving, w, options)
    return model, error


def _resolve_model(
    serving: ServingConfig, w: Workload, options: Options
) -> tuple[ModelSpec | None, str | None, str | None, ConfigRefusal | None]:
    """:func:`resolve_container_model`, with the ``kvlint.io/model`` annotation it did not apply as the third
    item (None when it applied it, or there is none) and the config found but refused as the fourth
    (:class:`~kvlint.types.ConfigRefusal`, what the error says of it; None without one): with exemptions disabled (``--no-exemptions``, the
    webhook's admin switch) the pod's own model (:func:`own_model_reference`) wins over an annotation naming
    another (not one kvlint reads as the same model, :func:`_reads_as`) when kvlint can read it, as an annotation
    that swaps the model sized for a smaller one works as an exemption; the annotation still names the model when
    the pod's own names none kvlint can read (a path on a volume)."""
    ref, revision = model_reference(serving, w)
    own = own_model_reference(serving, w)
    ann = w.annotations.get(MODEL_ANNOTATION)
    if ann and not options.exemptions_allowed and own.strip().casefold() != str(ann).strip().casefold():
        try:
            spec = _models.resolve_model(own, revision=revision, **_model_sources(options, w.doc.path))
            same = _reads_as(str(ann), spec, revision, options, w)  # the same model spelt otherwise: applied
            return (*_hide_server_paths(spec, None, own, options), None if same else str(ann), None)
        except ModelUnavailable:
            pass  # the pod names no model kvlint can read: the annotation speaks for it
        except Exception as exc:  # malformed configs etc.
            failed = f"{own}: {type(exc).__name__}: {exc}"
            return (*_hide_server_paths(None, failed, own, options), str(ann), None)
    container = serving.container if ref == own and not ann else None
    model, error, refusal = _resolve_ref(ref, revision, w, options, container)
    hide = _path_hider(ref, options)
    if hide is not None and refusal is not None:
        refusal = replace(
            refusal, path=hide(refusal.path) or refusal.path, why=hide(refusal.why) or refusal.why
        )
    return (*_hide_server_paths(model, error, ref, options), None, refusal)


def _replaced_model(serving: ServingConfig, w: Workload, options: Options, cr: ContainerResult) -> str | None:
    """The model the pod names itself (:func:`own_model_reference`) when the ``kvlint.io/model`` annotation, naming
    another, was applied in its place (exemptions allowed) and kvlint can read that model too, so the annotation
    changed what is sized rather than filling in what the pod does not say (KV005 says so: info when the annotation's
    model was read and sized instead, a warning when it could not be read, so nothing was sized); None otherwise
    (no annotation, the same model, spelt alike or read as the same model (``hf://org/name``, its Hub URL), the
    annotation not applied, or the pod's own model a path or alias kvlint cannot read, which is what the annotation
    is for). An annotation naming a model kvlint cannot read used to return None here too: a typo in it (or
    ``kvlint.io/model: nothing``) silently took every capacity finding of the model the engine loads away, the
    admission webhook's denials included.

    Whether kvlint reads the pod's own model is judged from what it holds offline (catalogues, model directories
    and paths, files beside the manifest), never from the Hub: that model is not sized, and asking the Hub for it
    cost a request per such pod (the admission webhook's too) and gave a run with the Hub another verdict than
    one without."""
    ann = w.annotations.get(MODEL_ANNOTATION)
    if not ann or cr.model_annotation_overruled is not None:
        return None
    own = own_model_reference(serving, w)
    if own.strip().casefold() == str(ann).strip().casefold():
        return None
    revision = serving.get("revision")
    offline = {**_model_sources(options, w.doc.path), "allow_hub": False}
    try:
        spec = _models.resolve_model(own, revision=str(revision) if revision else None, **offline)
    except Exception:  # ModelUnavailable, or a config kvlint cannot read: the annotation speaks for the pod
        return None
    if cr.model is not None and cr.model.id.casefold() == spec.id.casefold():
        return None  # the annotation names the pod's own model, spelt otherwise (hf://org/name, its Hub URL)
    return own


def _reads_as(ref: str, spec: ModelSpec, revision: str | None, options: Options, w: Workload) -> bool:
    """Whether kvlint reads ``ref`` (a ``kvlint.io/model`` annotation) offline (catalogues, model directories and
    paths, never the Hub) as the model ``spec`` (the one the pod's command names): the same model spelt otherwise,
    as KServe and the Hub spell it (``hf://org/name``, ``https://huggingface.co/org/name``, a trailing slash),
    which the text of the two references does not show. False when ``ref`` cannot be read; never raises on user
    input."""
    offline = {**_model_sources(options, w.doc.path), "allow_hub": False}
    try:
        other = _models.resolve_model(ref, revision=revision, **offline)
    except Exception:  # ModelUnavailable, or a config kvlint cannot read: not shown to be the same model
        return False
    return bool(other.id.casefold() == spec.id.casefold())


def _hide_server_paths(
    model: ModelSpec | None, error: str | None, ref: str, options: Options
) -> tuple[ModelSpec | None, str | None]:
    """``(model, error)`` with the paths of this machine's model directories (``--model-dir``, the pulled
    catalogues, ``model_paths`` targets) replaced by what they hold for ``ref`` (``the config.json of 'org/name'``)
    when the manifest is not the machine's user's (``options.allow_local_paths`` False: the admission webhook),
    so a review's findings do not reveal the admin's directory layout; unchanged otherwise."""
    if not (error or model is not None):
        return model, error
    hide = _path_hider(ref, options)
    if hide is None:
        return model, error
    if model is not None:
        model = replace(
            model,
            source=hide(model.source) or model.source,
            weight_bytes_source=hide(model.weight_bytes_source),
            notes=tuple(hide(n) or n for n in model.notes),
            assumption=hide(model.assumption) or model.assumption,
        )
    return model, hide(error)


def _path_hider(ref: str, options: Options) -> Callable[[str | None], str | None] | None:
    """What :func:`_hide_server_paths` does to a text naming ``ref``'s files, or None when it leaves texts as they
    are (the machine's own user: ``options.allow_local_paths``, or no model directories)."""
    if options.allow_local_paths:
        return None
    pattern = _server_path_pattern(options)
    if pattern is None:
        return None

    def named(m: re.Match[str]) -> str:
        text = m.group(0)
        base = os.path.basename(text.rstrip("/"))
        if base.endswith(".json") or base.endswith(".safetensors"):
            return f"the {base} of '{ref}'"
        return f"the model directory holding '{ref}'"

    def hide(text: str | None) -> str | None:
        return pattern.sub(named, text) if text else text

    return hide


def _server_path_pattern(options: Options) -> re.Pattern[str] | None:
    """A regular expression matching a path in one of the run's model directories (as written, with ``~``
    expanded, absolute and real), up to the next blank, quote, colon or parenthesis; None without any."""
    roots: set[str] = set()
    targets = [str(t) for t in (options.model_paths or {}).values() if isinstance(t, str) and "/" in t]
    for d in (*options.model_dirs, *options.model_catalogues, *targets):
        written = str(d).rstrip("/")
        for variant in (written, os.path.expanduser(written), os.path.abspath(os.path.expanduser(written))):
            roots.add(variant.rstrip("/"))
        roots.add(os.path.realpath(os.path.expanduser(written)))
    roots.discard("")
    if not roots:
        return None
    alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})(?:/[^\\s:;,()'\"]*)?")


def _resolve_ref(
    ref: str, revision: str | None, w: Workload, options: Options, container: Any = None
) -> tuple[ModelSpec | None, str | None, ConfigRefusal | None]:
    """The model ``ref`` (at ``revision``) of a container of ``w``, or why not (:func:`resolve_container_model`)
    with the config found but refused, if any (its ``why`` ends as the error does). ``container``, when ``ref`` is
    that container's own model argument: a path in it on a volume is looked up by the volume's own path too
    (:func:`_mounted_model`)."""
    try:
        spec = _models.resolve_model(ref, revision=revision, **_model_sources(options, w.doc.path))
        if spec.assumption and _hub_downloaded(w, container):
            # a path kvlint took to hold the model it is named after, which an init container fills from the Hub
            # (kvlint.workloads.init_download): the download's id is the model, not the path's name (a quantized
            # build under the base model's name)
            spec = _stored_model(ref, revision, w, options) or spec
        return spec, None, None
    except ModelUnavailable as exc:
        if container is not None and not reader_model_applies(w, container):
            # another container than the one the reader's model is for: its own path alone
            w = replace(w, derived_model=None, model_storage=None, model_container=None)
        stored = _stored_model(ref, revision, w, options)
        if stored is None and container is not None:
            stored = _mounted_model(ref, revision, w, container, options)
        if stored is not None:
            return stored, None, None
        hint = _storage_hint(w)
        refusal = replace(exc.refusal, why=exc.refusal.why + hint) if exc.refusal is not None else None
        return None, str(exc) + hint, refusal
    except Exception as exc:  # malformed configs etc.
        return None, f"{ref}: {type(exc).__name__}: {exc}", None


def _hub_downloaded(w: Workload, container: Any) -> bool:
    """An init container of ``w`` downloads ``container``'s model from the Hub by its id
    (:func:`_with_init_download`), which :func:`_stored_model` then resolves exactly."""
    return (
        bool(w.model_downloader)
        and (w.model_storage or "").startswith("hf://")
        and (container is None or reader_model_applies(w, container))
    )


def _model_sources(options: Options, manifest: str) -> dict[str, Any]:
    """Where :func:`kvlint.models.resolve_model` may look, as the run's options say (keyword arguments), for a
    model the file ``manifest`` names: a path on this machine only inside the git repository holding it
    (:func:`kvlint.models.resolve.manifest_root`)."""
    from kvlint.models.resolve import manifest_root

    return {
        "model_dirs": options.model_dirs,
        "model_paths": options.model_paths,
        "allow_hub": options.allow_hub,
        "allow_local_paths": options.allow_local_paths,
        "catalogues": options.model_catalogues,
        "local_root": manifest_root(manifest) if options.allow_local_paths else None,
    }


def _storage_hint(w: Workload) -> str:
    """For a model kvlint could not resolve whose download location (:attr:`~kvlint.types.Workload.model_storage`)
    is named after a catalogued model with its dots dropped: the "did you mean" clause
    (:func:`kvlint.models.resolve.dots_dropped_hint`), else ""."""
    location = w.model_storage
    if not location or w.annotations.get(MODEL_ANNOTATION) or w.derived_model:
        return ""
    from kvlint.models.resolve import dots_dropped_hint

    guess = dots_dropped_hint(location)
    if guess is None:
        return ""
    return f"; the model is downloaded from {location}{guess[1]}: map it in model_paths or annotate kvlint.io/model: {guess[0]}"


def _stored_model(ref: str, revision: str | None, w: Workload, options: Options) -> ModelSpec | None:
    """When the engine's model path holds no config kvlint can read and the workload's reader recorded where
    KServe's storage initializer downloads the model from (:attr:`~kvlint.types.Workload.model_storage`; not when
    the user's ``kvlint.io/model`` or the object's own fields name the model): the catalogued model that location
    is named after (:func:`kvlint.models.resolve.resolve_stored_model`), else None."""
    location = w.model_storage
    if not location or w.annotations.get(MODEL_ANNOTATION) or w.derived_model:
        return None
    from kvlint.models.resolve import resolve_stored_model

    # (a model it cannot resolve is None there; any other exception is kvlint's own failure and reaches the
    # per-workload net, KV503, rather than pass as "model not found", which skips the capacity rules)
    # a Kthena ModelBooster's model is fetched by the downloader init container of the ModelServing it makes
    downloader = w.model_downloader or (
        "Kthena's model downloader" if w.doc.kind == "ModelBooster" else "KServe's storage initializer"
    )
    if location.startswith("hf://"):
        # an init container's download from the Hub names the model exactly, at the revision it downloads (the
        # engine's own --revision does not apply to the directory it is given)
        return _hub_download(location[len("hf://") :], ref, downloader, w, options)
    return resolve_stored_model(
        location, ref, revision=revision, downloader=downloader, **_model_sources(options, w.doc.path)
    )


def _hub_download(
    location: str, ref: str, downloader: str, w: Workload, options: Options
) -> ModelSpec | None:
    """The model ``location`` (``ORG/NAME`` or ``ORG/NAME@REVISION``, :func:`kvlint.workloads.init_download.
    init_download`) that ``downloader`` (an init container) downloads from the Hub to the engine's path ``ref``,
    with a note saying so; None when kvlint cannot resolve it either. The revision is the download's: the engine
    given a directory loads what is in it (transformers reads a local directory as it is, whatever its
    ``revision``)."""
    hub_id, _, revision = location.partition("@")
    if "/" in revision:  # a directory below the download's: ORG/NAME/DIR, which is no Hub id
        hub_id, revision = f"{hub_id}/{revision.split('/', 1)[1]}", revision.split("/", 1)[0]
    try:
        spec = _models.resolve_model(hub_id, revision=revision or None, **_model_sources(options, w.doc.path))
    except ModelUnavailable:
        return None
    note = f"{downloader} downloads {hub_id} from the Hugging Face Hub to {ref}, the path the engine serves"
    return replace(spec, notes=(note, *spec.notes))


def volume_location(ref: str, container: Any, pod_spec: Any) -> tuple[str, str] | None:
    """Where the container path ``ref`` lies on the volume mounted over it: ``(location, what)``, the volume's own
    path for ``ref`` (a ``hostPath`` or ``nfs`` volume's ``path``, a PersistentVolumeClaim as ``pvc://CLAIM``,
    then the mount's ``subPath`` and the rest of ``ref`` below the mount) and that in words; None when no mount of
    the container holds ``ref``, the volume is of another kind or not in the pod, the mount uses ``subPathExpr``
    (expanded by the kubelet from the pod's environment), or the location adds nothing to ``ref`` but a claim's
    name (a Kubernetes object name says less of the model than a path the user wrote).

    The deepest mount holding ``ref`` is the one the container sees there (the kubelet mounts them in order of
    their paths: a mount inside another's path covers that part of it)."""
    if not ref.startswith("/") or not isinstance(container, dict) or not isinstance(pod_spec, dict):
        return None
    path = "/" + ref.strip("/")
    best: tuple[int, dict[str, Any]] | None = None
    mounts = container.get("volumeMounts")
    for m in mounts if isinstance(mounts, list) else []:
        if not isinstance(m, dict) or not isinstance(m.get("mountPath"), str):
            continue
        at = "/" + m["mountPath"].strip("/")
        if (path == at or path.startswith(at.rstrip("/") + "/")) and (best is None or len(at) > best[0]):
            best = (len(at), m)
    if best is None or best[1].get("subPathExpr"):
        return None
    mount = best[1]
    at = "/" + str(mount["mountPath"]).strip("/")
    rest = path[len(at) :].strip("/")
    sub = str(mount.get("subPath") or "").strip("/")
    volumes = pod_spec.get("volumes")
    volume = next(
        (
            v
            for v in (volumes if isinstance(volumes, list) else [])
            if isinstance(v, dict) and v.get("name") == mount.get("name")
        ),
        None,
    )
    if volume is None:
        return None
    host, nfs, pvc = volume.get("hostPath"), volume.get("nfs"), volume.get("persistentVolumeClaim")
    if isinstance(host, dict) and isinstance(host.get("path"), str):
        base, kind = "/" + host["path"].strip("/"), "hostPath"
    elif isinstance(nfs, dict) and isinstance(nfs.get("path"), str):
        base, kind = "/" + nfs["path"].strip("/"), "nfs"
    elif isinstance(pvc, dict) and isinstance(pvc.get("claimName"), str) and (sub or rest):
        base, kind = f"pvc://{pvc['claimName']}", "persistentVolumeClaim"
    else:
        return None
    location = "/".join(p for p in (base.rstrip("/"), sub, rest) if p)
    if base.startswith("/") and not location.startswith("/"):
        location = "/" + location  # (a volume of the host's root, hostPath /: the join dropped its slash)
    what = f"the {kind} {base}" + (f" with subPath {sub}" if sub else "")
    return location, f"the volume '{mount.get('name')}' mounted at {at} is {what}, so {path} is {location}"


def _mounted_model(
    ref: str, revision: str | None, w: Workload, container: Any, options: Options
) -> ModelSpec | None:
    """When the container's own model argument ``ref`` is a path on a volume (:func:`volume_location`) whose own
    path -- the host directory, the claim's subPath -- is named after a catalogued model while ``ref`` is not
    (``/data/model`` on the hostPath ``/data0/Qwen/Qwen3-32B``): that model, with an ASSUMPTION note (KV505);
    else None. Not for a model the workload's reader recorded elsewhere (:attr:`Workload.model_storage`,
    ``derived_model``)."""
    if w.model_storage or w.derived_model:
        return None
    found = volume_location(ref, container, w.pod_spec)
    if found is None:
        return None
    location, how = found
    from kvlint.models.resolve import resolve_stored_model

    return resolve_stored_model(
        location, ref, revision=revision, how=how, **_model_sources(options, w.doc.path)
    )


def _looked_up(serving: ServingConfig, w: Workload, cr: ContainerResult) -> str | None:
    """The model reference :func:`_resolve_model` resolved for ``cr`` (:attr:`ContainerResult.model_looked_up`):
    the pod's own when the annotation was overruled, else :func:`model_reference`'s; None for a serving-runtime
    template that names no model of its own (``$(MODEL_PATH)``, ``/mnt/models``: the InferenceService's,
    :func:`kvlint.rules.facts.runtime_names_model`). A KAITO preset reference (``kaito-preset:NAME``,
    ``kaito-image:NAME``) is given as the hub id it stands for (:func:`kvlint.models.resolve.kaito_hub_id`), the
    model kvlint looked up and the one to pull, also when no config for it was found."""
    from kvlint.models.resolve import kaito_hub_id
    from kvlint.rules.facts import is_runtime_template, runtime_names_model

    if is_runtime_template(w) and runtime_names_model(w, serving) is None:
        return None
    if cr.model_annotation_overruled is not None:
        ref = own_model_reference(serving, w)
    else:
        ref = model_reference(serving, w)[0]
    return kaito_hub_id(ref) or ref


def model_reference(serving: ServingConfig, w: Workload) -> tuple[str, str | None]:
    """``(model reference, revision)`` of a serving container: the workload's ``kvlint.io/model`` annotation (the
    user's), else the model its operator object names (:attr:`~kvlint.types.Workload.derived_model`), else the
    engine's model argument; the engine's ``revision`` setting (None when not set)."""
    assert serving.model is not None
    ref = w.annotations.get(MODEL_ANNOTATION) or own_model_reference(serving, w)
    revision = serving.get("revision")
    return ref, (str(revision) if revision else None)


def own_model_reference(serving: ServingConfig, w: Workload) -> str:
    """The model a serving container names itself, without the user's ``kvlint.io/model``: the model its operator
    object names (:attr:`~kvlint.types.Workload.derived_model`, when it is this container's:
    :func:`reader_model_applies`), else the engine's model argument."""
    assert serving.model is not None
    if w.derived_model and reader_model_applies(w, serving.container):
        return w.derived_model
    return str(serving.model.value)


def reader_model_applies(w: Workload, container: Any) -> bool:
    """Whether the model facts the workload's reader recorded (``derived_model``, ``model_storage``) are
    ``container``'s: every container's unless the reader named the one they are for
    (:attr:`~kvlint.types.Workload.model_container`: a KServe custom predictor's ``kserve-container``)."""
    if w.model_container is None or not isinstance(container, dict):
        return True
    return str(container.get("name") or "") == w.model_container


def _dedupe_sorted(diags: list[Diagnostic]) -> list[Diagnostic]:
    from kvlint.diagstore import dedupe_key

    seen: set[tuple[Any, ...]] = set()
    out: list[Diagnostic] = []
    for d in diags:
        key = dedupe_key(d)
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
    "analyse_serving",
    "apply_suppressions",
    "configure",
    "in_values_terms",
    "parse_ignore_annotation",
    "model_reference",
    "resolve_container_model",
    "run_check",
    "run_documents",
]


def _capacity_rules() -> frozenset[str]:
    """Rules whose verdict depends on the GPU's memory: those whose catalogue entry consumes the plan."""
    from kvlint.rules.catalog import load_catalog

    return frozenset(r.id for r in load_catalog().values() if "plan" in r.consumes)


def _with_candidates(cr: ContainerResult, diags: list[Diagnostic], options: Options) -> list[Diagnostic]:
    """When the scheduling constraints leave several GPU types (``Placement.candidates``), the worst case
    (smallest memory) decides the diagnostics; each capacity finding then names, per candidate, whether
    the workload fits there (re-planned on that GPU: its own MIG slice, AMD compute partition or MPS cap,
    :func:`kvlint.accelerators.placement.candidate_placement`). When the GPU was only assumed
    (:attr:`~kvlint.types.Placement.assumed`: a label whose values no documentation lists, VKE's ``gpu-name``; a
    label value of several boards it does not tell apart, GFD's ``NVIDIA-GeForce-RTX-3080`` without a memory label) and
    one of the candidates fits, each capacity error is made a warning that says so and names the boards that fit:
    the failure rests on kvlint's choice of the smallest board, not on a fact of the manifest (as
    :func:`_on_assumed_env` does for an engine option read from the env). A placement read from a documented label
    (GFD's product, GKE's accelerator, an EC2 instance type) keeps its errors."""
    p = cr.placement
    if p is None or len(p.candidates) < 2 or cr.model is None:
        return diags
    capacity = _capacity_rules()
    if not any(d.rule in capacity for d in diags):
        return diags
    replan, check_container = _stage.replan, _runner.check_container
    verdicts: list[str] = []
    fits: list[str] = []
    names = [a.name for a in p.candidates]
    for acc in p.candidates:
        # the candidate's own slice, partition or MPS cap, not the smallest board's
        placement = candidate_placement(p, acc, gpu_memory_bytes=options.gpu_memory_bytes)
        detail = replan(cr, placement)
        sub = replace(cr, placement=placement, plan_detail=detail, plan=detail.plan if detail else None)
        found = sorted({d.rule for d in check_container(sub, options) if d.rule in capacity})
        # boards of one NVML name (the RTX 3080's 10GB and 12GB) are told apart by their catalogue ids
        name = acc.name if names.count(acc.name) == 1 else f"{acc.name} ({acc.id})"
        verdicts.append(f"{name} {'fails (' + ', '.join(found) + ')' if found else 'fits'}")
        if not found:
            fits.append(name)
    note = "; the scheduling constraints allow several GPU types, checked on each: " + ", ".join(verdicts)
    demote = bool(p.assumed and fits and len(fits) < len(p.candidates))
    assumed = (
        f"; a warning, not an error: the GPU is assumed ({p.assumed}) and the workload fits on {', '.join(fits)}"
        if demote
        else ""
    )
    return [
        replace(
            d,
            message=d.message + note + (assumed if d.severity == "error" else ""),
            severity="warning" if demote and d.severity == "error" else d.severity,
        )
        if d.rule in capacity
        else d
        for d in diags
    ]


def _on_assumed_env(cr: ContainerResult, diags: list[Diagnostic]) -> list[Diagnostic]:
    """``diags`` of a container whose engine command was read from its env (a custom image's entrypoint:
    :attr:`~kvlint.types.ServingConfig.env_assumed`), with each error at the value of one of those variables (KV206
    "invalid value 'fp16' for --dtype" at ``DTYPE``, KV301 "--dtype bfloat16 on Tesla T4") made a warning that says
    the engine reads no such variable and kvlint passed it as the option on an assumption (its KV503 warning; the
    entrypoint may translate or drop it): an assumption of kvlint's alone never fails a check or denies an
    admission. Other findings, and every finding of a command the manifest holds, are returned as they are."""
    assumed = cr.serving.env_assumed
    if not assumed:
        return diags
    out = []
    for d in diags:
        name = assumed.get(d.loc) if d.loc is not None and d.severity == "error" else None
        out.append(
            d
            if name is None
            else replace(
                d,
                severity="warning",
                message=f"{d.message}; the engine does not read {name}: kvlint passed it as that option assuming the "
                "entrypoint does so (KV503), which may translate or drop it",
            )
        )
    return out


#: Prefix of the message kvlint gives when a check fails on an unexpected shape (tests search for it).
INTERNAL_ERROR = f"{COULD_NOT_FINISH} this workload"


def _object(w: Workload) -> str:
    return object_ref(w.kind, w.namespace, w.name)


def _command_chars(container: LDict) -> int:
    """Characters of the container's ``command`` and ``args`` strings, each counted up to ``MAX_ARG_STRLEN``."""
    total = 0
    for key in ("command", "args"):
        seq = container.get(key)
        for item in [seq] if isinstance(seq, str) else seq if isinstance(seq, list) else ():
            if isinstance(item, str):
                total += min(len(item), MAX_ARG_STRLEN)
    return total


def _too_large(workloads: Sequence[Workload], cap: int) -> Diagnostic | None:
    """A KV001 error when ``workloads`` hold more than ``cap`` pod templates, or more than ``cap`` containers
    in their pod specs (:attr:`Options.max_review_size`, the webhook's cap per object: the cost of a review
    grows with them, about 0.8 ms of CPU a serving container), or their containers' commands and args more than
    :data:`kvlint.engines.shell.REVIEW_COMMAND_CHARS` characters (512 KiB; a word longer than ``execve(2)`` passes
    counts :data:`~kvlint.engines.shell.MAX_ARG_STRLEN`, as it is refused unread, KV503: counted here as written,
    before any container is read, and after ``$(VAR)`` expansion as each is read, ``review_budget``; a pod's
    commands are a few kilobytes), located at the first pod template beyond the cap (or the one whose containers
    pass it); None within it. Never configured away (``select``/``ignore``
    do not apply): an object kvlint did not read must not pass as a clean one."""
    where: Workload | None = None
    what, limit = "", str(cap)
    if len(workloads) > cap:
        where, what = workloads[cap], f"{len(workloads)} pod templates"
    else:
        total = 0
        for w in workloads:
            total += len(_containers(w.pod_spec))
            if total > cap and where is None:
                where = w
        if where is not None:
            what = f"{total} containers in its pod templates"
    if where is None:
        chars = 0
        for w in workloads:
            chars += sum(_command_chars(c) for c in _containers(w.pod_spec))
            if chars > REVIEW_COMMAND_CHARS and where is None:
                where = w
        if where is not None:
            what, limit = _command_text(chars), f"{REVIEW_COMMAND_CHARS:,}"
    if where is None:
        return None
    return _too_large_at(where, what, limit)


def _command_text(chars: int) -> str:
    """What KV001 says an object holds too much of: ``chars`` characters of command-line text."""
    return f"{chars:,} characters in its containers' commands and args"


def _too_large_at(where: Workload, what: str, limit: str) -> Diagnostic:
    """The KV001 'too large to review' error of :func:`_too_large`, at the workload ``where``."""
    return Diagnostic(
        rule="KV001",
        severity="error",
        message=f"too large to review: {what}, kvlint reviews at most {limit} per object; nothing in it was "
        "checked",
        loc=where.loc,
        fix="split the object, or lint it with kvlint check before applying it (the CLI has no such cap)",
        object=_object(where),
    )


def _internal_error(w: Workload, exc: Exception) -> Diagnostic:
    """A KV503 located at the workload when a stage raised on input it did not expect (never a traceback)."""
    from kvlint.rules.catalog import severity_of

    return Diagnostic(
        rule="KV503",
        severity=severity_of("KV503"),
        message=clip_words(f"{INTERNAL_ERROR} ({type(exc).__name__}: {exc}); other workloads are unaffected"),
        loc=w.loc,
        fix="check that the PodSpec fields have the types Kubernetes expects (lists, mappings, numbers); "
        "if they do, please report this manifest",
        object=_object(w),
    )
