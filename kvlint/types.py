"""Typed data passed between the pipeline stages.

load -> workloads -> engine config -> model + accelerator -> memory plan -> rules -> report

Each stage is a module that takes and returns these (mostly frozen) dataclasses; the arithmetic lives in
pure functions. Units are in the field names or docstrings: ``*_bytes`` are bytes, ``*_tokens`` are
tokens; "per GPU" means per worker process / rank, as vLLM itself accounts.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from kvlint.fastinit import direct_init
from kvlint.numbers import times_value
from kvlint.source import LDict, Loc
from kvlint.statement import clip_words

if TYPE_CHECKING:
    from kvlint.accelerators.sharing import GpuSlice
    from kvlint.memory.refusal import PlanRefusal

Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

# --------------------------------------------------------------------------------------------------
# load


#: The path of the :class:`Document` ``kvlint plan`` builds for a command typed after ``--``
#: (:func:`kvlint.capacity.plan_command.plan_command`): no file, no manifest; rules that would point at one say so.
TYPED_COMMAND = "<command line>"


@direct_init
@dataclass(frozen=True)
class Document:
    """One YAML/JSON document (or one item of a ``kind: List``) read from a file.

    ``data`` is usually an :class:`~kvlint.source.LDict`; ``index`` counts documents in the file from 0
    (items of a List share their List's index). ``loc`` is where the document starts.
    """

    path: str
    index: int
    data: Any
    loc: Loc
    #: the chart or kustomization directory whose ``helm template`` or ``kustomize build`` output the document is
    #: (:func:`kvlint.render.render_inputs`), whose objects are applied together; None for a document read from
    #: a file as it is (``path`` is then where it is, and for a rendered one the source file it maps back to)
    render: str | None = None

    @cached_property
    def kind(self) -> str:
        """``kind`` as text (empty when missing or null), read once: every stage dispatches on it, several
        times a document (the document's data is not modified after loading)."""
        kind = self.data.get("kind") if isinstance(self.data, dict) else None
        return "" if kind is None else str(kind)

    @property
    def name(self) -> str:
        """``metadata.name`` as text; empty when missing or null (``name:`` with no value); ``<not a
        string>`` when it is a mapping or list (an unrendered ``{{ .Release.Name }}`` parses as one)."""
        meta = self.data.get("metadata") if isinstance(self.data, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        return "" if name is None else _scalar_text(name)

    @property
    def namespace(self) -> str | None:
        meta = self.data.get("metadata") if isinstance(self.data, dict) else None
        ns = meta.get("namespace") if isinstance(meta, dict) else None
        return _scalar_text(ns) if ns is not None else None


def _scalar_text(value: object) -> str:
    """A metadata scalar as text; a mapping or list (template syntax read as YAML) as ``<not a string>``."""
    return "<not a string>" if isinstance(value, (dict, list)) else str(value)


class Mark(enum.Enum):
    """What a finding says, for the code that acts on it without reading its message (:func:`kvlint.sizing.unread`
    counts the serving files and objects kvlint saw but did not read): a message is worded for the user, and may
    quote a file's own keys and values. Set where the finding is made (:attr:`Finding.mark`), carried to its
    :attr:`Diagnostic.mark`; never part of a report."""

    #: KV002: a document of raw Helm chart values (:func:`kvlint.render.values_file_finding`, production-stack's
    #: and KubeAI's models chart values kvlint builds nothing from)
    HELM_VALUES = "helm-values"
    #: KV002: chart values that name a serving chart's GPU limit, the llm-d chart's model URI, or leave the engine
    #: for ``helm install --set`` (counted as not read even when the file names no engine)
    SERVING_VALUES = "serving-values"
    #: KV002: a kustomize strategic-merge patch linted alone (:func:`kvlint.kustomize_patch.strategic_merge_patch_finding`)
    KUSTOMIZE_PATCH = "kustomize-patch"
    #: KV002 info: a file a kustomization built in the same run lists as a patch, linted through that build
    #: (:func:`kvlint.kustomize_patch.strategic_merge_patch_finding`; not counted as not read)
    KUSTOMIZE_PATCH_BUILT = "kustomize-patch-built"
    #: KV002: a kustomization file linted as a plain file (:func:`kvlint.render.kustomization_file_finding`)
    KUSTOMIZATION = "kustomization"
    #: KV002: a chart whose ``helm template`` output holds no object (:func:`kvlint.render.empty_render_finding`)
    EMPTY_RENDER = "empty-render"
    #: KV001: ``helm template`` failed on a chart (:func:`kvlint.render.render_helm`), at ``Chart.yaml`` or at the
    #: template line helm names (a failure a chart met in a directory walk may owe to values it lacks: the walk's
    #: fix then adds ``--helm-values``, :func:`kvlint.render.walk_values_hint`)
    HELM_FAILED = "helm-failed"
    #: KV001: ``helm template`` refused a chart for dependencies missing from its ``charts/``, at the
    #: ``dependencies`` entry (:func:`kvlint.render.render_helm`): no values would render it
    HELM_MISSING_DEPS = "helm-missing-deps"
    #: KV002: a note on the charts and kustomizations a directory walk met (:func:`kvlint.render.walk_notes`: a
    #: missing tool, the render limit, values not applied, a base linted through its overlays); the files it names
    #: are counted on their own, not as this note
    WALK_NOTE = "walk-note"
    #: KV002: the manifest is a template for envsubst: its containers (image, command/args, resource quantities,
    #: env values) or the model's storage location hold ``${VAR}`` placeholders, or its image is an envsubst-style
    #: ``$VAR`` (:func:`kvlint.workloads.placeholders.template_findings`); KV502 then takes a ``${VAR}`` model as
    #: the template's placeholder, not a shell variable
    ENVSUBST_TEMPLATE = "envsubst-template"
    #: KV503: the vLLM command was read whole and names no model (``kvlint.engines.command._dispatch``):
    #: such a container is not one whose command kvlint could not read (:attr:`ServingConfig.unreadable`)
    NO_MODEL = "no-model"
    #: KV503: the engine command gets words kvlint cannot see (:func:`kvlint.engines.options.arguments_not_all_read`:
    #: ``xargs``, a bare ``$ARGS`` whose value is not known): a command naming no model among the words read may name
    #: one among those, so it is not said to start the engine's default model
    ARGUMENTS_UNSEEN = "arguments-unseen"
    #: KV503: a word or an option's value is a variable reference kvlint left unresolved (a bare ``${ARGS}`` the
    #: container's env does not set, :func:`kvlint.engines.options.bare_expansion_unread`; ``--tp-size ${TP}``,
    #: :meth:`kvlint.engines.options.Collector.unresolved_value`), its message starting with the word or the option
    #: and value: in an OpenShift Template whose parameter it names, restated as the parameter's
    #: (:func:`kvlint.engines.options.template_words`)
    VARIABLE_UNRESOLVED = "variable-unresolved"
    #: KV503: kvlint does not read this object's engine settings (an operator, a runtime, ...)
    SETTINGS_NOT_READ = "settings-not-read"
    #: KV503: the same for a container running NVIDIA's NIM launcher (:func:`kvlint.workloads.nim.nim_note`)
    NIM_NOT_READ = "nim-not-read"
    #: KV503: a GPU container running an engine kvlint does not model (:func:`kvlint.engines.others.other_engine_note`)
    OTHER_ENGINE = "other-engine"
    #: KV504: the workloads were built from chart values by restating the chart's template
    #: (:func:`kvlint.workloads.stack_values.stack_values_workloads`); a GitOps source's note replaces it
    BUILT_FROM_VALUES = "built-from-values"
    #: KV001: a path a kustomization names that does not exist, at its entry (:func:`kvlint.render.missing_paths`),
    #: said beside the failed build's own KV001: not a build of its own (:func:`kvlint.sizing.unread` counts the
    #: build's)
    KUSTOMIZE_MISSING = "kustomize-missing"
    #: KV502 (info): a serving runtime linted without the service that uses it
    #: (:func:`kvlint.workloads.find.runtime_note`); restated once its containers are parsed when one names its
    #: model in its engine command (:func:`kvlint.workloads.find.restate_runtime_note`)
    RUNTIME_TEMPLATE = "runtime-template"
    #: KV001: a document that is a scalar or a list of scalars (:func:`kvlint.load._not_an_object`): in a directory
    #: walk, dropped when no document of its file is a Kubernetes object (:func:`kvlint.load.skip_walked_non_objects`)
    NOT_AN_OBJECT = "not-an-object"


def findings_stood_for(d: Any) -> int:
    """How many findings ``d`` counts as: a :class:`Finding`, a :class:`Diagnostic`, the admission webhook
    worker's reply row, or a JSON diagnostic (a mapping). Its ``stands_for`` when that is an integer above 1 (the
    finding for the rest past :data:`kvlint.findcap.MAX_PER_RULE` of a rule in a container or a file,
    :func:`kvlint.findcap.cap_per_rule`; KV205's "N more unknown options" of
    :func:`kvlint.engines.options.cap_unknown_options`), else 1 (absent, a bool, anything else read from a JSON
    report). Never read out of the message. Every count of findings uses this one rule: the summary line,
    ``--statistics``, the JSON, SARIF and Markdown reports, the JUnit totals, the Action's outputs, ``kvlint diff``,
    the webhook's deny message, its UPDATE matching (an old object's 40 unknown options and the new one's 50 are 33
    findings each, and a count of findings would admit the 10 new ones as pre-existing) and its
    ``kvlint_webhook_findings_total``."""
    n = d.get("stands_for") if isinstance(d, Mapping) else getattr(d, "stands_for", 1)
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


@direct_init
@dataclass(frozen=True)
class Finding:
    """A diagnostic raised before any workload exists (KV001, KV002) or by a later stage.

    ``rule`` is a catalogue id (``KV103``); ``loc`` the exact position; ``fix`` an actionable remedy
    (may be empty). ``severity`` None means "the catalogue default for this rule". ``mark`` says what the finding
    is for code that acts on it (:class:`Mark`; None for most). ``stands_for``: how many findings this one stands
    for (the KV205 of :func:`kvlint.engines.options.cap_unknown_options` for a command line's unknown options past
    the first ones: their number; 1 for any other), carried to :attr:`Diagnostic.stands_for`.
    """

    rule: str
    message: str
    loc: Loc | None
    fix: str = ""
    severity: Severity | None = None
    mark: Mark | None = None
    stands_for: int = 1


@dataclass
class LoadResult:
    """All documents read from the inputs, plus problems (KV001 parse errors, KV002 templates).

    ``source_texts`` keeps, by path, the text of the files that contain ``# Source:`` comments (rendered
    Helm output) or a ``kvlint:`` comment (inline suppressions), so the Helm stage and the suppression
    pass need not read those files again; ``read_paths`` names every file (``-`` for stdin) whose text
    was read, so a path that is there but not in ``source_texts`` is known to hold no such comment.
    ``engine_named`` says, for a file with unrendered template syntax (KV002), whether its text names a
    serving engine, as :func:`kvlint.sizing.unread` would find reading it again (see :func:`kvlint.load.load_text`).
    ``unparsed_configmaps`` names the ConfigMaps of documents that failed to parse (KV001), as
    ``(namespace or None, name, where the KV001 is)``, read from their text (:func:`kvlint.load.unparsed_configmap`),
    so a workload that refers to one is told so rather than that it is not among the inputs.
    """

    documents: list[Document] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    source_texts: dict[str, str] = field(default_factory=dict)
    read_paths: set[str] = field(default_factory=set)
    engine_named: dict[str, bool] = field(default_factory=dict)
    unparsed_configmaps: list[tuple[str | None, str, Loc]] = field(default_factory=list)


# --------------------------------------------------------------------------------------------------
# workloads


@dataclass(frozen=True)
class DerivedAccelerator:
    """The accelerator an operator object's own fields name (:attr:`Workload.derived_accelerator`).

    Attributes:
        accelerator: a catalogue id (``kvlint/data/accelerators``), e.g. ``nvidia-l4``.
        source: what in the object decided it, in words (the placement's ``how``), e.g. ``KubeAI
            spec.resourceProfile=nvidia-gpu-l4:1 (chart profile nvidia-gpu-l4 -> nvidia-l4)``.
        loc: where that field stands (the placement's ``loc``).
        candidates: every catalogue id the object's nodes may carry, smallest memory first, when more than one
            (a GKE ComputeClass's ``machineFamily: a2``: the A100 40GB of ``a2-highgpu`` and the A100 80GB of
            ``a2-ultragpu``); ``accelerator`` is then the smallest and the placement keeps the others as its
            :attr:`Placement.candidates`. Empty when the choice is unique.
    """

    accelerator: str
    source: str
    loc: Loc | None = None
    candidates: tuple[str, ...] = ()


@direct_init
@dataclass(frozen=True)
class Workload:
    """A PodSpec found in a document, with what the enclosing object says about it.

    Attributes:
        doc: the document holding it.
        kind, name, namespace: of the top-level object (e.g. ``Deployment``/``llama``/``serving``).
        pod_spec: the PodSpec mapping (``containers``, ``volumes``, ``nodeSelector``, ...).
        path: dotted path of the PodSpec inside the document (``spec.template.spec``).
        annotations, labels: of the pod template merged over the object's (template wins).
        replicas: ``spec.replicas`` when declared (None otherwise).
        role: ``leader``/``worker`` for LeaderWorkerSet (and other group) templates, ``head`` for a Ray head, and
            ``leader``/``worker`` for one-pod objects paired as the nodes of one multi-node engine
            (:func:`kvlint.engines.multinode.pair_node_objects`), else None.
        group_size: LeaderWorkerSet ``leaderWorkerTemplate.size`` (pods per group), else None.
        findings: what the workload stage found about the object itself (a template to render, a runtime or
            preset that is not among the inputs, an operator kind whose engine kvlint does not read); reported
            once per workload, whatever its containers are.
        leader: for a worker template (``role="worker"``), the leader/head workload of the same engine
            instance (LeaderWorkerSet leader, Ray head, KServe leader), when the object has one.
        chart_args: for a workload built from Helm chart values, the engine command words the chart's template
            writes from its values (:class:`ChartArg`), so findings on them can name the values key rather than
            a flag the user never typed; ``values_terms`` the :class:`ValuesTerm` that say in the values'
            terms what a rule's fix names (``--max-model-len is vllmConfig.maxModelLen``); ``configmaps`` the
            ConfigMaps the same chart renders beside the workload (``(namespace, name)`` -> ``data``), which
            its containers read as those among the inputs (and before them).

    The facts below are set by the workload reader that knows them (an operator's CRD reader,
    :mod:`kvlint.workloads`) and read by a later stage. They are never read from the manifest's annotations:
    ``kvlint.io/*`` annotations are the user's inputs (``kvlint.io/model``, ``kvlint.io/accelerator``,
    ``kvlint.io/ignore``; README.md, Annotations), which win over these facts where both speak.

    Attributes:
        derived_model: the model the operator object names in its own fields (a KServe ``hf://`` or ``oci://``
            ``storageUri``, an LLMInferenceService ``spec.model.uri``, a HyperPod ``modelSourceConfig``, the
            model an OME runtime names), as a hub id or catalogue reference; the models stage reads it when no
            ``kvlint.io/model`` annotation names the model (:func:`kvlint.pipeline.model_reference`).
        model_storage: where KServe's storage initializer (or Kthena's downloader) downloads the model from,
            when kvlint cannot read that place (an object-store or PVC ``storageUri``, a ``storage.path``, a
            ModelBooster ``modelURI``); the models stage takes the
            model's name from it when the container's model directory holds no config it can read
            (:func:`kvlint.models.resolve.resolve_stored_model`).
        model_downloader: who downloads the model from ``model_storage`` when it is not the operator (an init
            container of the pod, :func:`kvlint.workloads.init_download.init_download`), in words for the note.
        model_container: the name of the one container ``derived_model`` and ``model_storage`` are for ("" for an
            unnamed one), when the reader knows only it loads that model (a KServe custom predictor's
            ``kserve-container``, into which the storage initializer mounts ``/mnt/models``); None: every
            container of the pod (:func:`kvlint.pipeline.reader_model_applies`).
        derived_accelerator: the accelerator the operator object's own fields name (KubeAI ``resourceProfile``,
            Ray Serve LLM ``accelerator_type``), with what decided it in words; read by
            :func:`kvlint.accelerators.resolve_placement` after a ``kvlint.io/accelerator`` annotation.
        accelerator_why: why the operator object cannot say which GPU its pods land on (a KAITO Workspace
            with a ``labelSelector`` only, a NIMService without ``nodeSelector``); added first to the
            placement's reasons when nothing names the accelerator.
        image_source: who chooses the engine image when the object does not (the operator's installation, a
            shipped preset, a Ray image's Python environment), in words; the KV208 check then asks for
            ``--engine-version`` instead of an image tag.
        gpu_source: who requests the GPUs of a pod whose containers, as the reader built them, request none,
            in words: an operator that adds the GPU count of the nodes it picks (a KAITO Workspace on
            bring-your-own nodes), KServe's managed Dynamic Resource Allocation; read by
            :func:`kvlint.accelerators.placement.workload_placement` as the placement's
            :attr:`Placement.gpus_elsewhere`.
        kaito_sku: for a KAITO preset on an Azure VM size of KAITO's SKU table, ``(GPUs per node, the node's GPU
            memory in GiB as that table gives it)``: the pipeline estimates, as KAITO's node estimator does, how
            many such nodes KAITO spreads the preset over (:func:`kvlint.workloads.kaito.kaito_node_count`).
        node_class: the accelerator of the GKE ComputeClass or Karpenter NodePool among the inputs that the pod
            selects by name (``cloud.google.com/compute-class``, ``karpenter.sh/nodepool``), set by
            :func:`kvlint.workloads.find.find_workloads`; decides when the pod's own node labels name no GPU
            (:func:`kvlint.accelerators.placement.node_class_accelerator`).
        node_class_why: when the ComputeClass or NodePool the pod selects is among the inputs but names no GPU
            kvlint reads, ``(the node label that selects it, why in words)``
            (:func:`kvlint.accelerators.placement.node_class_unread`): KV501 says so in place of asking for the
            object's file.
        dra_claims: the pod's ``spec.resourceClaims`` entries whose ResourceClaim or ResourceClaimTemplate is among
            the inputs, with the GPUs each of its requests asks for (:func:`kvlint.workloads.dra.pod_claim_gpus`),
            set by :func:`kvlint.workloads.find.find_workloads`; a container that takes its GPUs through
            ``resources.claims`` naming them is counted by :func:`kvlint.accelerators.placement.resolve_placement`.
        engine_kwargs_refusal: for engine options that are an operator's keyword arguments checked before
            the engine starts (Ray Serve LLM ``engine_kwargs``), what refuses an option the engine lacks, in
            words, ``KEY`` standing for the option's key; appended to that option's KV205
            (:func:`kvlint.pipeline.analyse_container`).
        engine_release: the vLLM release the object itself installs over its image's Python environment (a Ray
            application's ``runtime_env`` ``pip: ["vllm==0.4.3"]``), validated as a release number; the engine
            stage reads the container with it in place of the image's tag and ``--engine-version``
            (:func:`kvlint.engines.command.parse_container` ``installed_release``).
        engine_release_from: where :attr:`engine_release` is written: the field (``runtime_env.pip``) and the
            requirement's position, which KV208 names for a release outside those kvlint models.
    """

    doc: Document
    kind: str
    name: str
    namespace: str | None
    pod_spec: LDict
    path: str
    annotations: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    replicas: int | None = None
    role: str | None = None
    group_size: int | None = None
    findings: tuple[Finding, ...] = ()
    leader: Workload | None = None
    chart_args: tuple[ChartArg, ...] = ()
    values_terms: tuple[ValuesTerm, ...] = ()
    configmaps: Mapping[tuple[str | None, str], LDict] = field(default_factory=dict)
    derived_model: str | None = None
    model_storage: str | None = None
    model_container: str | None = None
    model_downloader: str | None = None
    derived_accelerator: DerivedAccelerator | None = None
    accelerator_why: str | None = None
    image_source: str | None = None
    gpu_source: str | None = None
    engine_kwargs_refusal: str | None = None
    kaito_sku: tuple[int, int] | None = None
    node_class: DerivedAccelerator | None = None
    node_class_why: tuple[str, str] | None = None
    dra_claims: Mapping[str, Any] = field(default_factory=dict)
    engine_release: str | None = None
    engine_release_from: tuple[str, Loc | None] | None = None

    @property
    def loc(self) -> Loc | None:
        return self.pod_spec.loc or self.doc.loc


# --------------------------------------------------------------------------------------------------
# engine config

EngineName = Literal["vllm", "tgi", "sglang"]
#: How messages and reports name each engine (:data:`EngineName`): the projects' own spelling.
ENGINE_NAMES: dict[str, str] = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}


@direct_init
@dataclass(frozen=True)
class Value:
    """A setting's value and where it came from.

    ``source`` is ``arg`` (command/args), ``env`` (container env, incl. ``$(VAR)`` expansion),
    ``config`` (a ``--config`` file, e.g. from a ConfigMap), or ``default``. ``raw`` is the text as
    written (``32k``), ``value`` the parsed Python value (``32000``).
    """

    value: Any
    loc: Loc | None = None
    raw: str | None = None
    source: str = "arg"


@direct_init
@dataclass(frozen=True)
class OptionFinding(Finding):
    """A finding of an engine parser about one option of the command line (KV205 unknown, KV206 invalid value:
    :class:`kvlint.engines.options.Collector`), with the ``option`` it is about, so a later stage can say who
    wrote it (:class:`ChartArg`). ``unknown``: a KV205 for an option the engine does not have
    (:meth:`kvlint.engines.options.Collector.unknown`), of which a command line's first
    :data:`kvlint.engines.options.MAX_UNKNOWN_OPTIONS` are reported one by one
    (:func:`kvlint.engines.options.cap_unknown_options`)."""

    option: str = ""
    unknown: bool = False


@direct_init
@dataclass(frozen=True)
class RepeatedSetting(OptionFinding):
    """KV207 (:class:`kvlint.engines.options.Collector`): a setting given twice with different values. The
    engine uses the later occurrence: ``option`` as written and its ``last`` value; ``first_option`` and
    ``first`` are the earlier one's; ``engine`` names the engine as its messages do (``vLLM``). The fields let
    a later stage restate the message with where each occurrence came from (:class:`ChartArg`)."""

    first_option: str = ""
    first: Value | None = None
    last: Value | None = None
    engine: str = ""


@dataclass(frozen=True)
class ValuesTerm:
    """What a rule's fix names (an engine flag, a PodSpec field), said in the terms of the chart values a
    workload was built from: where ``pattern`` matches the fix (and the matched text is one of ``only``, when
    given), ``phrase`` is added (:func:`kvlint.pipeline.in_values_terms`) after ``heading``. Also used for an
    operator object whose pod kvlint builds (a KubeAI Model): the fix names a PodSpec field the user does not
    write."""

    pattern: re.Pattern[str]
    phrase: str
    only: frozenset[str] | None = None
    #: what the phrases are introduced with in the fix: chart values' "in these values", an operator
    #: object's own ("for this KubeAI Model"); the first matching term's is used
    heading: str = "in these values"


@direct_init
@dataclass(frozen=True)
class ChartArg:
    """Words of an engine command line that a Helm chart's template writes from its values (not the values'
    own list of extra arguments), for the workloads kvlint builds from chart values
    (:mod:`kvlint.workloads.stack_values`).

    ``loc`` is where kvlint located the words (the values key's value, or the nearest values line for a chart
    default); ``key`` the values key that decides them (``vllmConfig.maxModelLen``), None when the template
    writes them whatever the values say (``--host 0.0.0.0``); ``given`` whether the values set ``key`` (False:
    the words are the chart's default for the unset key). ``writer`` names who writes them in messages (``the
    chart``; ``KubeAI`` for the flags its operator writes from a Model), ``extra`` the list where the user's own
    arguments go (``extraArgs``; a Model's ``args``); ``as_written`` the key's value as the values write it when
    the chart prints it otherwise (``1000000``, which Helm prints ``1e+06``). ``why`` and ``fix``, when set,
    replace what a KV205/KV206 on the words says about who wrote them and the remedy (an operator's command,
    such as KAITO's, has no template or values key to change). ``from_env``, when set, names the environment
    variable the operator sets and the command expands into the words (KServe's ``TENSOR_PARALLEL_SIZE`` in
    its multi-node runtime's ``--tensor-parallel-size=${TENSOR_PARALLEL_SIZE}``): the words are then matched
    wherever an expansion produced them (``Value.source == "env"``), not by ``loc``."""

    loc: Loc | None
    words: tuple[str, ...]
    key: str | None
    given: bool
    writer: str = "the chart"
    extra: str = "extraArgs"
    as_written: str | None = None
    why: str | None = None
    fix: str | None = None
    from_env: str | None = None


@dataclass
class JoinedEngine:
    """A multi-node worker container that runs no engine of its own but joins its leader's: ``ray start
    --address ... --block``, vLLM's ``multi-node-serving.sh worker``, a Ray worker group's generated start
    command.

    Attributes:
        how: the command that joins, as written (for messages).
        loc: where it is written.
        leader: the leader's engine command, parsed (None when the object has no readable leader).
        leader_container: the leader container's name.
        follower: the worker runs the engine itself, as a follower node of the leader's (vLLM ``--headless`` with
            a node rank past its data-parallel group's first node, or a data-parallel start rank past 0; SGLang
            ``--node-rank`` 1 or more of ``--nnodes``), with the same settings as the leader: the group is sized
            once, at the leader (:func:`kvlint.engines.multinode.join_follower`).
    """

    how: str
    loc: Loc | None = None
    leader: ServingConfig | None = None
    leader_container: str = ""
    follower: bool = False


@dataclass
class ServingConfig:
    """One serving engine as a container declares it.

    Attributes:
        engine: ``vllm`` | ``tgi`` | ``sglang``.
        container: the container mapping; ``container_name`` its name.
        image: the image reference; ``version`` the engine release the container is read, checked and planned
            with (``0.11.0``), decided from the image and ``--engine-version`` by
            :func:`kvlint.engines.images.engine_release`; None when neither says (``latest``, digests, custom
            images, without the option).
        model: the model id or path (hub id, local dir, ``/models/x``) with its location.
        flags: canonical setting name (argparse dest: ``max_model_len``, ``tensor_parallel_size``...)
            -> :class:`Value`. Only what the user set; defaults are applied by the plan.
        env: the container's literal env (name -> value), for engine env switches
            (``VLLM_ALLOW_LONG_MAX_MODEL_LEN``...); ``env_locs`` where each value is set (the ``env`` entry the
            kubelet keeps, or the key of a ConfigMap among the inputs:
            :func:`kvlint.engines.command.container_env`), empty when the reader did not keep them.
        findings: problems found while parsing (KV205 unknown flag, KV206 bad value, KV207 duplicate).
        unresolved: settings given with a value kvlint cannot resolve (``--tp-size $(TP)``) -> where: set,
            but neither the written value nor the engine default is known.
        written: setting -> the option word the command line spelled it with, where the parser records it
            (SGLang: ``tp_size`` -> ``--tensor-parallel-size``), for findings to quote the manifest's spelling.
        command_loc: where the engine's command is: the program that starts it (its first word in ``command``,
            ``args`` or a shell script), or the ``args:`` key when the image's ENTRYPOINT is the program.
        joins: set for a multi-node worker that joins its leader's engine (it has no command of its own to
            read; its GPUs are checked against the leader's layout).
        apart_from: the join of a follower node that is sized on its own because its pod lands on another GPU
            than its leader's (``joins`` is then None; KV403 still compares the two GPUs).
        release_noted: the parser's KV504 (an image kvlint does not know read as vLLM, a Dynamo worker) already
            says which engine release kvlint assumed for an image tag that names none, so KV208 does not
            repeat it.
        env_unread: ``(variable, why)`` for each ConfigMap reference of the container's env that gave no value
            (:func:`kvlint.workloads.configmaps.env_problems`: the ConfigMap is not among the inputs, its data
            or the key is unreadable, the key is missing; ``variable`` None for an ``envFrom``); the KV502/KV503
            "no model" findings say it.
        draft_model: SGLang's separate draft checkpoint (``--speculative-draft-model-path`` naming another model than
            the target), resolved as the target is by the plan stage (:func:`kvlint.memory.stage.plan_container`);
            None when unset, the target's own path, or not resolved (the plan says so).
        exec_form: the engine's command line reaches it without a shell (the container's ``command``/``args`` run
            directly, or through an image ENTRYPOINT that passes them on): a ``$VAR`` or ``${VAR}`` in it is
            the engine's literal text, as the kubelet expands only ``$(VAR)`` (Kubernetes docs, "Define a Command
            and Arguments for a Container"). False for a ``sh -c`` script's words, and when not known.
        quoted_model: the model word is a shell script's reference quoted so that the shell does not expand it
            (``vllm serve '$MODEL'``, :data:`kvlint.engines.options.QUOTED_SOURCE`): the engine receives the text
            as written, as in :attr:`exec_form` (bash(1) "QUOTING"; dash the same).
    """

    engine: EngineName
    container: LDict
    container_name: str
    image: str
    version: str | None
    model: Value | None
    flags: dict[str, Value] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    unresolved: dict[str, Loc | None] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)
    command_loc: Loc | None = None
    env_locs: dict[str, Loc | None] = field(default_factory=dict)
    version_loc: Loc | None = None
    #: the ``sh -c`` script's pip command that installs the engine before starting it (``pip install
    #: vllm==0.6.6``, shortened), where it is, and whether it upgrades without pinning (``pip install -U vllm``:
    #: the release is then unknown); "" when the script installs none
    installed_by: str = ""
    installed_loc: Loc | None = None
    install_upgrades: bool = False
    #: the version range the pip install admits (``<0.10,>=0.9``) when the release is not pinned but taken as the
    #: newest release kvlint models in it (pip installs the newest its index holds in the range), else ""
    install_range: str = ""
    #: the version range a uv tool runner installs the engine within when kvlint places none of the releases it
    #: models in it (``uvx --from "vllm<0.1"``; or the range admits the newest), else "": the release is unknown,
    #: but not unpinned
    install_runner_range: str = ""
    #: the unpinned install builds the engine from its source repository at a branch or commit (``pip install
    #: git+https://github.com/vllm-project/vllm.git``): the newest code on the day, not a release
    install_from_source: bool = False
    #: the unpinned upgrade takes vLLM's nightly (or one commit's) build from vLLM's main-branch wheel index
    #: (``uv pip install -U vllm --extra-index-url https://wheels.vllm.ai/nightly``): that index's URL, else ""
    install_main_index: str = ""
    #: the uv tool runner that installs the engine in an environment of its own instead of a pip command, as
    #: written (``uvx``, ``uv tool run``; ``kvlint.engines.command._uv_tool_runner``); "" when none
    install_runner: str = ""
    #: the ``sh -c`` script's last pip command (``pip``, ``uv pip``, ``python3 -m pip``) that installs the engine
    #: before starting it, pinned or not (``pip install vllm`` too, which :attr:`installed_by` leaves out: over an
    #: image that carries the engine it changes nothing): its words after ``install``, its text (shortened) and
    #: where it is; ``()`` when the script installs none. Where it installs from is read by
    #: :func:`kvlint.engines.images.pypi_cuda_wheel` (KV304).
    pip_args: tuple[str, ...] = ()
    pip_text: str = ""
    pip_loc: Loc | None = None
    #: another command of that script may install the engine from elsewhere than :attr:`pip_args` says, or set
    #: pip's source for it: a pip install naming another source (:func:`kvlint.engines.images.pip_names_source`)
    #: or a local path, URL or VCS requirement, ``pip config``, a pip/uv configuration file named, a pip/uv source
    #: variable set before a pip command (``PIP_INDEX_URL=... pip install vllm``), a ``setup.py`` build
    #: (:func:`kvlint.engines.command._pip_elsewhere`)
    pip_elsewhere: bool = False
    joins: JoinedEngine | None = None
    apart_from: JoinedEngine | None = None
    release_noted: bool = False
    env_unread: tuple[tuple[str | None, str], ...] = ()
    draft_model: ModelSpec | None = None
    exec_form: bool = False
    quoted_model: bool = False
    #: the values of the env variables that :func:`kvlint.engines.command.env_launch` passed to the engine as the
    #: options they are named after, on an assumption (a custom image's entrypoint started from its env: the engine
    #: reads no such variable): where each is -> its name; empty for a command the manifest holds
    env_assumed: dict[Loc, str] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        """The parsed value of setting ``name`` (canonical dest name), or ``default`` when not set."""
        v = self.flags.get(name)
        return default if v is None else v.value

    def loc(self, name: str) -> Loc | None:
        """Where setting ``name`` was written; the command's position when it was not set."""
        v = self.flags.get(name)
        return (v.loc if v else None) or self.command_loc

    @property
    def unreadable(self) -> bool:
        """The engine command could not be read at all: no model, no flag, and the parser's KV503 says why (a
        wrapper script, Ray Serve application code, a launcher kvlint does not know). A command read whole that
        names no model (the KV503 marked :attr:`Mark.NO_MODEL`, a container that runs only the image's ENTRYPOINT)
        is not unreadable. kvlint applied none of the release's rules to such a container."""
        return (
            self.model is None
            and not self.flags
            and any(
                f.rule == "KV503" and f.severity != "info" and f.mark is not Mark.NO_MODEL
                for f in self.findings
            )
        )


# --------------------------------------------------------------------------------------------------
# model


@dataclass(frozen=True)
class LayerSpec:
    """KV-relevant description of one decoder layer.

    ``kind``: ``full`` (full attention), ``sliding`` (window ``window`` tokens), ``chunked``
    (chunked local attention, chunk ``window``), ``mla`` (latent attention), ``mamba`` (constant
    per-request state, ``state_bytes`` per request at the state dtype), ``cross`` (cross-attention),
    ``none`` (no KV cache, e.g. NAS no-op attention, MLP-only layers).
    ``kv_heads`` total KV heads of this layer (before TP split); ``head_size`` K head size and
    ``head_size_v`` V head size (0 for MLA, which stores one latent of ``head_size`` values).
    ``kv_shared``: the layer reads the KV cache of an earlier layer of its kind and allocates none of its own
    (Gemma 3n / Gemma 4 ``num_kv_shared_layers``: vLLM gives it a ``kv_sharing_target_layer_name`` and
    ``GPUModelRunner.get_kv_cache_spec`` creates no KV-cache spec for it); its projections still hold weights.
    ``compress_ratio``: DeepSeek V4 layers only (0 elsewhere): the layer's ``compress_ratios`` entry, 1 for a
    sliding-window-only layer (the config's 0), 4 (compressed attention with the lightning indexer, whose key
    width is ``index_head_dim``) or 128; vLLM gives such a layer several KV-cache specs
    (:mod:`kvlint.memory.deepseek_v4`). Engines without that model keep reading it as a sliding-window layer.
    ``state_bytes`` on a ``full`` layer: a parallel-hybrid layer (Falcon-H1) whose Mamba-2 mixer runs beside the
    attention and keeps that per-request state as well as the layer's KV cache.
    On an ``mla`` layer, ``index_head_dim`` > 0 says the layer also keeps a DeepSeek sparse attention (DSA)
    lightning-indexer key cache of that width (DeepSeek V3.2, GLM-5; :func:`kvlint.memory.kv.dsa_indexer_bytes`).
    ``ssm_default`` on a ``mamba`` layer: ``(hook, elements, element_bytes, model_bytes)`` when an engine's model
    hook picks the SSM-state dtype release by release (``hook`` ``"nemotron_h"`` or ``"nemotron_h_vl"`` when the
    config does not name it, with ``"+config"`` when it does and only releases with the hook read it;
    :func:`kvlint.memory.versions.nemotron_h_ssm_cache_dtype`): ``state_bytes`` counts those ``elements`` of SSM
    state at ``element_bytes`` (the config's dtype, else the model dtype's ``model_bytes``), which vLLM's plan
    replaces by its release's dtype (:func:`kvlint.memory.vllm.release_state_layers`). Empty elsewhere.
    ``spec_conv_bytes`` on a Gated-DeltaNet ``mamba`` layer (Qwen3-Next, Qwen3.5): bytes per request of one more
    row of its conv state, the whole layer before the TP split (``conv_dim x`` the model dtype's bytes); vLLM
    widens the conv state by one row per speculative token (``conv_kernel_size - 1 + num_spec``), which
    ``state_bytes`` (taken without speculation) leaves out and vLLM's plan adds
    (:func:`kvlint.memory.vllm.speculative_state_layers`). 0 elsewhere.
    """

    kind: str
    kv_heads: int = 0
    head_size: int = 0
    head_size_v: int = 0
    window: int | None = None
    state_bytes: int = 0
    kv_shared: bool = False
    compress_ratio: int = 0
    index_head_dim: int = 0
    ssm_default: tuple[str, int, int, int] | tuple[()] = ()
    spec_conv_bytes: int = 0


@dataclass(frozen=True)
class ModelSpec:
    """Architecture facts kvlint needs, read from a model's ``config.json`` (text config for VLMs).

    Sizes are element counts, not bytes. ``weight_bytes`` is the exact checkpoint size (sum of
    safetensors) when known (``weight_bytes_source`` says from where), else None and the plan
    estimates from ``param_count``/architecture. ``config`` is the raw top-level config.json dict.
    ``assumption``: the first of ``notes`` when it states an assumption kvlint made from the model's name or path
    (an ``ASSUMPTION (...)`` note of :mod:`kvlint.models.resolve` / :mod:`kvlint.models.catalogue`: a re-upload, a
    quantized build, a path or image named after a catalogued model), else empty; KV505 quotes it
    (:func:`kvlint.rules.families.resolution.model_assumed_from_name`). Set where that note is put first, and
    emptied where another note is put before it.
    """

    id: str
    source: str
    config: dict[str, Any]
    model_type: str
    architectures: tuple[str, ...]
    num_layers: int
    num_attention_heads: int
    num_kv_heads: int
    head_size: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    layers: tuple[LayerSpec, ...]
    max_position_embeddings: int | None
    max_len_key: str | None
    rope_scaling: dict[str, Any] | None
    torch_dtype: str | None
    quant_method: str | None
    quant_config: dict[str, Any] | None
    tie_word_embeddings: bool
    is_mla: bool = False
    num_experts: int = 0
    moe_intermediate_size: int = 0
    param_count: int | None = None
    weight_bytes: int | None = None
    weight_bytes_source: str | None = None
    sliding_window: int | None = None
    notes: tuple[str, ...] = ()
    text_config: dict[str, Any] = field(default_factory=dict)
    assumption: str = ""


@dataclass(frozen=True)
class ConfigRefusal:
    """A model's config file that was found and read but refused (``kvlint.models.resolve._refused``): ``path``
    where it is (with ``:line:col`` for malformed JSON), ``why`` what is wrong with it; ``model_type`` the config's
    type when it is not a decoder LLM (:class:`kvlint.models.config.NotDecoderLLM`), with ``encoder_decoder`` set
    for an encoder-decoder such as T5. KV502 says which (:func:`kvlint.rules.families.resolution.
    model_config_unavailable`) from this, not from the wording of the resolution's message."""

    path: str
    why: str
    model_type: str | None = None
    encoder_decoder: bool = False


class ModelUnavailable(Exception):
    """Raised by model resolution when no ``config.json`` can be found; the message says how to
    provide one (``--model-dir``, ``.kvlint.yaml model_paths``, ``kvlint.io/model``, network/HF_TOKEN).
    ``refusal``: the config found but refused (:class:`ConfigRefusal`), None when none was found."""

    def __init__(self, message: str, refusal: ConfigRefusal | None = None) -> None:
        super().__init__(message)
        self.refusal = refusal

    def __reduce__(self) -> tuple[type[ModelUnavailable], tuple[str, ConfigRefusal | None]]:
        # an exception pickles its args only: keep the refusal across processes
        return (ModelUnavailable, (str(self), self.refusal))


# --------------------------------------------------------------------------------------------------
# accelerator


@dataclass(frozen=True)
class Accelerator:
    """A GPU (or other accelerator) model from the catalogue.

    ``memory_bytes`` is the device total as CUDA reports it (``cudaMemGetInfo`` total, what vLLM
    multiplies by ``gpu_memory_utilization``); ``memory_source`` says whether it was measured or
    derived (e.g. NVML MiB minus the typical driver reserve). ``compute_capability`` like ``"8.9"``.
    """

    id: str
    name: str
    vendor: str
    memory_bytes: int
    memory_source: str
    compute_capability: str | None
    bf16: bool
    fp8: bool
    source: str = ""

    @property
    def cc(self) -> tuple[int, int] | None:
        if not self.compute_capability:
            return None
        major, _, minor = self.compute_capability.partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            return None


@direct_init
@dataclass(frozen=True)
class AnnotationConflict:
    """A ``kvlint.io/accelerator`` annotation naming a GPU the pod's own facts exclude (KV005).

    Attributes:
        value: the annotation's text as written.
        annotated: the accelerator it names.
        own: the accelerator the pod's own facts decide without it (its ``nodeName`` in the site's table, its
            ``nodeSelector`` or required node affinity, its operator object's fields, the node class it selects).
        own_how: what decided ``own``, in words (as :attr:`Placement.how`).
        applied: whether the annotation was applied anyway (exemptions allowed) or the pod's facts won
            (``--no-exemptions``, ``exemptions: false``, the webhook's admin switch).
        within: the annotated GPU is one of several the pod's constraints allow (``own`` then the smallest of
            them): no contradiction, recorded only when the annotation is not applied.
    """

    value: str
    annotated: Accelerator
    own: Accelerator
    own_how: str
    applied: bool
    within: bool = False


@direct_init
@dataclass(frozen=True)
class Placement:
    """Which accelerator a pod lands on and how many the container gets.

    Attributes:
        accelerator: the resolved GPU, or None when nothing says (KV501).
        how: what decided it (``nodeSelector cloud.google.com/gke-accelerator=nvidia-l4``,
            ``--accelerator``, ``annotation kvlint.io/accelerator`` ...); ``loc`` where.
        gpus: GPUs requested by the container (``nvidia.com/gpu`` limit, ``.shared``, MIG resource),
            None if no GPU resource; ``gpus_loc`` its position; ``resource`` the resource name.
        shared: the GPU is time-sliced/MPS-shared (``-SHARED`` product, ``nvidia.com/gpu.shared``,
            GKE sharing labels); ``max_sharers`` how many pods may share one GPU when known;
            ``sharing_strategy`` ``time-slicing`` or ``mps`` when a node label names it (GFD's
            ``nvidia.com/gpu.sharing-strategy``, GKE's ``cloud.google.com/gke-gpu-sharing-strategy``, whose
            ``time-sharing`` is time-slicing), else None. Under MPS NVIDIA's device plugin limits each of the N
            replicas to 1/N of the GPU's memory (k8s-device-plugin README, "With CUDA MPS"); time-slicing isolates
            nothing.
        memory_bytes_override: MIG slice or ``--gpu-memory`` total replacing the catalogue figure.
        candidates: every accelerator the scheduling constraints still allow, smallest memory first,
            when more than one remains (``accelerator`` is then the worst case, the smallest); empty
            when the choice is unique.
        gpu_slice: the HAMi memory slice per vGPU (``nvidia.com/gpumem`` or ``gpumem-percentage``), which
            HAMi-core reports to the engine as the device total (:mod:`kvlint.accelerators.sharing`): applied
            by :attr:`memory_bytes` to whichever accelerator the placement names; None when the container sets
            neither.
        gpus_elsewhere: who requests the container's GPUs when its ``resources`` name none, in words: a
            Dynamic Resource Allocation claim (``resources.claims``), an operator that adds them to the pod it
            builds (:attr:`Workload.gpu_source`); None otherwise. The count is then unknown: the container is
            planned with its engine's own GPU workers (tensor x pipeline parallel size) and is not a container
            that requests no GPU (:attr:`requests_no_gpu`, KV405).
        annotation_conflict: the ``kvlint.io/accelerator`` annotation contradicting the pod's own facts
            (:class:`AnnotationConflict`), None when it does not (or is absent).
        annotation_unknown: the value of a ``kvlint.io/accelerator`` annotation that names no accelerator kvlint
            knows (catalogue, alias, ``accelerators.custom``), which is therefore not applied (KV005 says so at the
            annotation); None when the annotation is absent, known, or ``--accelerator`` decided.
        undecided: when no accelerator is known, why the pod's facts did not name one, in words (a label kvlint
            does not read, a GPU model or instance type not in the catalogue, a resource that names only the
            vendor, an operator's own reason): the notes of the decision that named none, for KV501
            (:func:`kvlint.accelerators.placement.undecided_reasons`); empty otherwise.
        mig_profile: the MIG profile (``3g.40gb``) whose slice memory :attr:`memory_bytes_override` holds (a
            ``nvidia.com/mig-<profile>`` resource, GFD's MIG product label, GKE's partition label); None when the
            memory is not a MIG slice's. :attr:`device_name` names the device with it.
        mig_slices: the MIG profile the pod's GPUs are slices of by its scheduling facts (a
            ``nvidia.com/mig-<profile>`` resource, GFD's MIG product label, GKE's partition label), whether or not
            kvlint knows the slice's memory and whatever ``--gpu-memory`` says of it (which replaces the memory, not
            the device: KV403 still counts slices); None on whole GPUs.
        mig_unoffered: the container requests a ``nvidia.com/mig-<profile>`` slice that none of the GPUs its
            scheduling facts allow offers (an L4 has no MIG): ``accelerator`` is None, :attr:`undecided` says why,
            and it is not planned on a fleet either (the pod cannot land on another board).
        amd_partition: the AMD compute-memory partition mode (``cpx_nps4``) of the device the container gets: the one
            its ``mixed``-naming resource names (``amd.com/cpx_nps4``), or for ``amd.com/gpu`` the node labeller's
            ``amd.com/compute-memory-partition`` its scheduling selects; None otherwise (and for ``spx``, a whole
            GPU). A fleet plan sizes one partition of each board on it.
        amd_partition_label: the node label that gave :attr:`amd_partition`, as written (``<key>=<value>``: the GPU
            Operator's ``amd.com/compute-memory-partition`` or the device plugin labeller's
            ``amd.com/gpu.compute-memory-partition``); None when the resource named the mode or there is none.
        device_share: the part of the board the engine's device is, in a few words (``CPX partition``, ``1/2 vGPU``),
            when :attr:`memory_bytes_override` holds that part's memory and it is not a MIG slice; None otherwise.
            :attr:`device_name` names the device with it.
        assumed: why the accelerator is kvlint's guess, in words: a label whose values no documentation lists
            (Volcengine VKE's ``gpu-name`` read with GFD's spelling of the NVML name), or one label value that stands
            for one board kvlint cannot tell among several (GFD's ``NVIDIA-GeForce-RTX-3080``, 10GB or 12GB, without a
            memory label; a memory label alone), the smallest taken; None when a documented label named one board,
            or the annotation or ``--accelerator`` named it. A capacity error on such a placement whose
            :attr:`candidates` disagree (one fits) is a warning (``kvlint.pipeline._with_candidates``).
        mps_limit_bytes: the device memory in bytes one MPS client may allocate on a GPU shared through MPS with a
            replica count (``nvidia.com/gpu.replicas`` or GKE's ``gke-max-shared-clients-per-gpu`` beside an
            ``mps`` sharing strategy): NVIDIA's device plugin caps each client at 1/N of the GPU's NVML total
            (:func:`kvlint.accelerators.placement._mps_cap`), while the engine still reads the whole GPU as its
            total, so :attr:`memory_bytes` stays the GPU's and KV106 holds the engine's claim to the cap; None when no
            cap applies (time-slicing, MPS without a replica count, ``--gpu-memory``).
    """

    accelerator: Accelerator | None
    how: str = ""
    loc: Loc | None = None
    gpus: int | None = None
    gpus_loc: Loc | None = None
    resource: str | None = None
    shared: bool = False
    max_sharers: int | None = None
    sharing_strategy: str | None = None
    memory_bytes_override: int | None = None
    candidates: tuple[Accelerator, ...] = ()
    gpu_slice: GpuSlice | None = None
    gpus_elsewhere: str | None = None
    annotation_conflict: AnnotationConflict | None = None
    annotation_unknown: str | None = None
    undecided: tuple[str, ...] = ()
    mig_profile: str | None = None
    mig_unoffered: bool = False
    mig_slices: str | None = None
    amd_partition: str | None = None
    amd_partition_label: str | None = None
    device_share: str | None = None
    assumed: str | None = None
    mps_limit_bytes: int | None = None

    @property
    def device_name(self) -> str | None:
        """The device the engine runs on, in words: the accelerator's name, followed by ``MIG <profile>`` on a MIG
        slice (as NVML names a MIG device, ``NVIDIA A100-SXM4-80GB MIG 3g.40gb``), or by its :attr:`device_share`
        on an AMD compute partition or a vGPU share (``AMD Instinct MI300X CPX partition``), so a plan sized on the
        part's memory is not shown under the whole board's name; None when no accelerator is known."""
        if self.accelerator is None:
            return None
        if self.mig_profile and self.memory_bytes_override:
            return f"{self.accelerator.name} MIG {self.mig_profile}"
        if self.device_share and self.memory_bytes_override:
            return f"{self.accelerator.name} {self.device_share}"
        return self.accelerator.name

    @property
    def requests_no_gpu(self) -> bool:
        """The container requests no GPU resource at all (no count, no accelerator resource name, none through a
        DRA claim or its operator, :attr:`gpus_elsewhere`): there is no GPU to size the engine on (KV405, KV501's
        info, sizing's "no GPU requested")."""
        return self.gpus is None and self.resource is None and self.gpus_elsewhere is None

    @property
    def memory_bytes(self) -> int | None:
        """Device total per GPU as the engine sees it, in bytes: the override (MIG slice, ``--gpu-memory``),
        else the HAMi slice on this accelerator (an NVIDIA GPU: HAMi-core reports ``min(slice, card)``,
        :meth:`kvlint.accelerators.sharing.GpuSlice.total_bytes`), else the catalogue total; None when unknown."""
        if self.memory_bytes_override:
            return self.memory_bytes_override
        acc = self.accelerator
        if acc is None:
            return None
        if self.gpu_slice is not None and acc.vendor == "nvidia":
            return self.gpu_slice.total_bytes(acc.memory_bytes) or acc.memory_bytes
        return acc.memory_bytes


# --------------------------------------------------------------------------------------------------
# plan

#: One item of a plan's notes as the memory model collects them: a note, or a note not yet written, as the tuple
#: ``(fn, *args)`` whose ``fn(*args)`` returns the notes it stands for (none, one or more), in their order.
NoteItem = str | tuple[Any, ...]


class PlanNotes(Sequence[str]):
    """A plan's notes (:attr:`MemoryPlan.assumptions`), written when first read.

    The vLLM model collects some of its notes as :data:`NoteItem` tuples, which this sequence writes, in their
    order, the first time anything reads it (iterating, indexing, ``len``, ``bool``, equality, hashing, ``repr``,
    pickling): a check or a webhook review plans every container on the fleet's GPUs and on its remedies'
    settings, and reads none of those plans' notes (docs/performance.md, ``perfA49``). A deferred note reads only
    its arguments (numbers, strings and the plan's own step records, which nothing edits), so it is written as it
    would have been when the plan was made. Reads as the tuple of its notes: equal to that tuple and to any other
    PlanNotes of the same notes, with the same hash and ``repr``, and pickled as that tuple."""

    __slots__ = ("_items", "_text")

    def __init__(self, items: Sequence[NoteItem] = ()) -> None:
        self._items: Sequence[NoteItem] | None = items
        self._text: tuple[str, ...] | None = None

    def text(self) -> tuple[str, ...]:
        """The notes, written on the first call."""
        text = self._text
        if text is None:
            out: list[str] = []
            for item in self._items or ():
                if isinstance(item, str):
                    out.append(item)
                else:
                    out.extend(item[0](*item[1:]))
            text = self._text = tuple(out)
            self._items = None
        return text

    def __iter__(self) -> Iterator[str]:
        return iter(self.text())

    def __len__(self) -> int:
        return len(self.text())

    def __getitem__(self, i: Any) -> Any:
        return self.text()[i]

    def __contains__(self, x: object) -> bool:
        return x in self.text()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlanNotes):
            return self.text() == other.text()
        if isinstance(other, tuple):
            return self.text() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text())

    def __repr__(self) -> str:
        return repr(self.text())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.text(),))


@direct_init
@dataclass(frozen=True)
class MemoryPlan:
    """vLLM's memory arithmetic for one rank (the rank that limits capacity), in bytes per GPU.

    ``budget_bytes`` = gpu_memory_utilization x total (or ``--kv-cache-memory-bytes`` bypass);
    ``kv_cache_bytes`` = budget - weights - activation - non_torch - cudagraph (what vLLM prints as
    "Available KV cache memory"), with ``_low``/``_high`` the uncertainty band of the heuristic terms.
    ``capacity_tokens`` is what vLLM prints as "GPU KV cache size: N tokens"; ``max_concurrency``
    its "Maximum concurrency for L tokens per request". ``assumptions`` lists every assumption made (a tuple, or for
    vLLM a :class:`PlanNotes`, written when first read).
    ``state_pool_bytes``: a pool of per-request recurrent states the engine allocates beside the KV cache, out of
    the same budget (SGLang's hybrid Mamba / linear-attention state pool; 0 elsewhere: vLLM keeps such states inside
    its KV cache).
    ``setting_names``: the engine's own names of the settings behind ``max_model_len``, ``max_num_seqs`` and
    ``max_num_batched_tokens``, for the text a planner reads (:func:`kvlint.report.plan_text.render_plan_text`,
    the Markdown plan): vLLM's by default; TGI's ``max_total_tokens``, ``max_concurrent_requests`` (or
    ``max_batch_size`` when set) and ``max_batch_prefill_tokens`` (launcher ``Args``); SGLang's
    ``context_length``, ``max_running_requests`` and ``chunked_prefill_size`` (``max_prefill_tokens`` with
    chunked prefill off) (``ServerArgs``). The JSON keeps the design's field names.
    """

    engine: str
    engine_version: str
    era: str
    total_bytes: int
    gpu_memory_utilization: float
    budget_bytes: int
    weights_bytes: int
    activation_bytes: int
    non_torch_bytes: int
    cudagraph_bytes: int
    kv_cache_bytes: int
    kv_cache_bytes_low: int
    kv_cache_bytes_high: int
    kv_bytes_per_token: int
    block_size: int
    bytes_per_block: int
    num_blocks: int
    num_blocks_low: int
    num_blocks_high: int
    capacity_tokens: int
    max_model_len: int
    max_model_len_source: str
    derived_max_model_len: int | None
    per_request_bytes: int
    max_concurrency: float
    max_concurrency_low: float
    max_concurrency_high: float
    max_num_seqs: int
    max_num_batched_tokens: int
    tensor_parallel_size: int
    pipeline_parallel_size: int
    data_parallel_size: int
    dtype: str
    kv_cache_dtype: str
    weights_source: str
    assumptions: Sequence[str] = ()
    state_pool_bytes: int = 0
    setting_names: tuple[str, str, str] = ("max_model_len", "max_num_seqs", "max_num_batched_tokens")

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of DESIGN.md (``memory.*``, ``kv.*``); ``memory.state_pool_bytes`` only when there is a
        state pool."""
        memory: dict[str, Any] = {
            "total_bytes": self.total_bytes,
            "gpu_memory_utilization": self.gpu_memory_utilization,
            "budget_bytes": self.budget_bytes,
            "weights_bytes": self.weights_bytes,
            "activation_bytes": self.activation_bytes,
            "non_torch_bytes": self.non_torch_bytes,
            "cudagraph_bytes": self.cudagraph_bytes,
            "kv_cache_bytes": self.kv_cache_bytes,
            "kv_cache_bytes_low": self.kv_cache_bytes_low,
            "kv_cache_bytes_high": self.kv_cache_bytes_high,
        }
        if self.state_pool_bytes:
            memory["state_pool_bytes"] = self.state_pool_bytes
        return {
            "engine": self.engine,
            "engine_version": self.engine_version,
            "era": self.era,
            "memory": memory,
            "kv": {
                "bytes_per_token": self.kv_bytes_per_token,
                "block_size": self.block_size,
                "bytes_per_block": self.bytes_per_block,
                "num_blocks": self.num_blocks,
                "capacity_tokens": self.capacity_tokens,
                "max_model_len": self.max_model_len,
                "max_model_len_source": self.max_model_len_source,
                "derived_max_model_len": self.derived_max_model_len,
                "per_request_bytes": self.per_request_bytes,
                "max_concurrency": times_value(self.max_concurrency),
                "max_concurrency_low": times_value(self.max_concurrency_low),
                "max_concurrency_high": times_value(self.max_concurrency_high),
                "kv_cache_dtype": self.kv_cache_dtype,
            },
            "scheduler": {
                "max_num_seqs": self.max_num_seqs,
                "max_num_batched_tokens": self.max_num_batched_tokens,
            },
            "parallel": {
                "tensor_parallel_size": self.tensor_parallel_size,
                "pipeline_parallel_size": self.pipeline_parallel_size,
                "data_parallel_size": self.data_parallel_size,
            },
            "dtype": self.dtype,
            "weights_source": self.weights_source,
            "assumptions": list(self.assumptions),
        }


#: Longest kind, namespace, name or container name a finding carries, in characters: Kubernetes names are
#: at most 253 (a DNS subdomain). Every finding of an object repeats them in the report, so a longer one is cut
#: (:func:`ref_part`): a 0.8 MB LeaderWorkerSet named with 200,000 characters and 20,000 findings made a 4 GB
#: report (16 s of CPU, 4 GB of memory).
MAX_REF_PART = 253


def ref_part(text: str) -> str:
    """``text`` (a kind, namespace or name) as findings carry it: cut to :data:`MAX_REF_PART` characters with
    ``...`` when longer (no such name reaches a cluster)."""
    return text if len(text) <= MAX_REF_PART else text[: MAX_REF_PART - 3] + "..."


def object_ref(kind: str, namespace: str | None, name: str) -> str:
    """``Kind/namespace/name`` of a workload (empty parts left out, each cut by :func:`ref_part`)."""
    return "/".join(ref_part(x) for x in (kind, namespace, name) if x)


# --------------------------------------------------------------------------------------------------
# rules / report

#: The start of the KV503 kvlint gives when its own code raised on an input it did not expect: a workload's
#: (:data:`kvlint.pipeline.INTERNAL_ERROR`), a document's or a file's (:func:`kvlint.render.internal_error_finding`)
COULD_NOT_FINISH = "kvlint could not finish checking"
#: The start of the KV503 when the command parser raised on a container's command
#: (:func:`kvlint.pipeline.analyse_container`)
COULD_NOT_READ_COMMAND = "kvlint could not read this container's command ("
#: How the KV503 kvlint gives when its own code raised on an input begins (each message above is written from
#: these constants, so the two cannot drift apart)
INTERNAL_ERROR_PREFIXES = (COULD_NOT_FINISH, COULD_NOT_READ_COMMAND)


def is_internal_error(rule: str, message: str) -> bool:
    """Whether a finding (``rule``, ``message``) is kvlint's own failure (:data:`INTERNAL_ERROR_PREFIXES`): it says
    that part of the input was not checked, nothing of what it holds. A ``kvlint.io/ignore`` annotation or a
    ``# kvlint: ignore`` comment never suppresses one (the manifest's author would choose what goes unchecked), and
    the admission webhook answers it per its failure mode (:func:`kvlint.webhook.review.unfinished_check`)."""
    return rule == "KV503" and message.startswith(INTERNAL_ERROR_PREFIXES)


@direct_init
@dataclass(frozen=True)
class Diagnostic:
    """A rule's finding, located and explained.

    ``message`` carries the arithmetic; ``fix`` a computed remedy. ``object`` is
    ``Kind/namespace/name`` of the workload (empty for file-level findings), ``container`` the
    container name. ``summary`` is an explicit short statement (empty: the first clause of ``message``,
    see :mod:`kvlint.statement`); :attr:`statement` and :attr:`details` give the two parts reports show.
    ``setting`` names the engine setting the finding is about (the canonical flag name such as
    ``max_model_len``; empty when none), part of its :func:`~kvlint.fingerprint.fingerprint`.
    ``sources`` are where the value at ``loc`` was set before rendering (the Helm values file line, the
    kustomize patch), filled by :mod:`kvlint.origins`; ``sources_more`` counts those left out past
    :data:`kvlint.origins.MAX_SOURCES` ("and N more"; 0: none). ``mark`` is the :class:`Mark` of the finding it
    comes from (:attr:`Finding.mark`), for code that acts on it without reading its message; no report shows it.
    ``stands_for`` is the finding's :attr:`Finding.stands_for` (the admission webhook counts a capped KV205 as the
    unknown options it stands for, :func:`findings_stood_for`); no report shows it.
    """

    rule: str
    severity: Severity
    message: str
    loc: Loc | None
    fix: str = ""
    object: str = ""
    container: str = ""
    summary: str = ""
    setting: str = ""
    sources: tuple[Loc, ...] = ()
    sources_more: int = 0
    mark: Mark | None = None
    stands_for: int = 1

    @property
    def statement(self) -> str:
        """The short statement: what fails and by how much (about one line)."""
        from kvlint.statement import statement_of

        return statement_of(self.message, self.summary)

    @property
    def details(self) -> list[str]:
        """The rest of the message (per-GPU arithmetic, the engine's error text), one part per line."""
        from kvlint.statement import split_message

        return split_message(self.message, self.summary)[1]

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of one diagnostic (``kvlint check --format json``); ``sources_more`` only when sources were
        left out, ``stands_for`` only when the finding stands for more than one (the cap's finding for the rest,
        :mod:`kvlint.findcap`; KV205's for the unknown options past its bound)."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "file": self.loc.file if self.loc else None,
            "line": self.loc.line if self.loc else None,
            "column": self.loc.column if self.loc else None,
            "object": self.object,
            "container": self.container,
            "summary": self.statement,
            "setting": self.setting,
            "sources": [{"file": s.file, "line": s.line, "column": s.column} for s in self.sources],
        }
        if self.sources_more:
            out["sources_more"] = self.sources_more
        if (n := findings_stood_for(self)) > 1:
            out["stands_for"] = n
        return out


# --------------------------------------------------------------------------------------------------
# pipeline results


@dataclass
class ContainerResult:
    """Everything kvlint learnt about one serving container.

    ``settings`` is the engine-specific resolved settings object (``VllmSettings`` for vLLM), ``plan``
    the per-GPU memory plan (None when model or GPU is unknown, or the configuration cannot start) and
    ``plan_detail`` the engine's full result it comes from (``VllmPlanDetail``, ``TgiPlanDetail``,
    ``SglangPlanDetail``: fit check, warmup, pool figures), both set once by the plan stage
    (:mod:`kvlint.memory.stage`). ``fleet`` holds the container planned on each accelerator of the fleet
    (:class:`kvlint.memory.stage.FleetEntry`) when nothing says which GPU it lands on. ``plan_error`` says why
    there is no plan although model and GPU are known, and ``plan_refusal`` which start-up refusal of the engine
    it is (:class:`kvlint.memory.refusal.PlanRefusal`; None when kvlint merely cannot size it), which KV502 reports by
    kind (never by the message's wording). ``model_refusal`` is the model's config that was found but refused
    (:class:`ConfigRefusal`) when ``model_error`` says so.
    ``model_annotation_overruled`` is the ``kvlint.io/model`` annotation the models stage did not apply because
    exemptions are disabled and the pod's own model, another one, could be read (KV005 reports it);
    ``model_annotation_replaced`` the pod's own model, one kvlint can read, that the annotation (naming another)
    replaced because exemptions are allowed (KV005 says so, info). ``model_looked_up`` is the reference the models
    stage resolved (the annotation, the model an operator object names, else the engine's model argument; None for a
    runtime template whose model the service names, or a container that names none): the JSON report's
    ``model_id`` when kvlint has no config for it.
    """

    workload: Workload
    container: LDict
    container_name: str
    serving: ServingConfig
    model: ModelSpec | None = None
    model_error: str | None = None
    placement: Placement | None = None
    settings: Any = None
    plan: MemoryPlan | None = None
    plan_detail: Any = None
    plan_error: str | None = None
    fleet: tuple[Any, ...] = ()
    model_annotation_overruled: str | None = None
    model_annotation_replaced: str | None = None
    plan_refusal: PlanRefusal | None = None
    model_looked_up: str | None = None
    model_refusal: ConfigRefusal | None = None

    @property
    def object_ref(self) -> str:
        w = self.workload
        return object_ref(w.kind, w.namespace, w.name)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape of one workload entry of ``kvlint check --format json``. The strings quoted from the
        manifest or built around its values (names, image, model, how the accelerator was found, why no model or
        plan) are clipped as findings are (:func:`kvlint.statement.clip_words`: each word at most 256
        characters), so that a 200 KB label value or image is not echoed whole; no real value is that long (a
        Kubernetes label value is at most 63 characters, an image reference a few hundred)."""
        loc = self.serving.command_loc or self.workload.loc
        acc = self.placement.accelerator if self.placement else None
        return _clipped_strings(self._unclipped_dict(loc, acc))

    def _unclipped_dict(self, loc: Loc | None, acc: Any) -> dict[str, Any]:
        return {
            "file": loc.file if loc else self.workload.doc.path,
            "line": loc.line if loc else None,
            "column": loc.column if loc else None,
            "kind": self.workload.kind,
            "name": self.workload.name,
            "namespace": self.workload.namespace,
            "role": self.workload.role,
            "container": self.container_name,
            "engine": self.serving.engine,
            "engine_version": self.serving.version,
            "image": self.serving.image,
            "model": self.serving.model.value if self.serving.model else None,
            "model_id": self.model.id if self.model else self.model_looked_up,
            "model_source": self.model.source if self.model else None,
            "model_error": self.model_error,
            "accelerator": acc.id if acc else None,
            "accelerator_how": self.placement.how if self.placement else None,
            "mig_profile": self.placement.mig_profile if self.placement else None,
            **_device_dict(self.placement),
            "gpus": self.placement.gpus if self.placement else None,
            "replicas": self.workload.replicas,
            "plan": self.plan.as_dict() if self.plan else None,
            "plan_error": self.plan_error,
            "fleet": [e.as_dict() for e in self.fleet] or None,
        }


@dataclass(frozen=True)
class SuppressedDiagnostic:
    """A diagnostic that a ``kvlint.io/ignore`` annotation (or a ``# kvlint: ignore`` comment, ``by``) suppressed,
    with the reason given and where the annotation or comment stands (``annotation``)."""

    diagnostic: Diagnostic
    reason: str
    annotation: Loc | None = None
    by: str = "kvlint.io/ignore"

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: the diagnostic's fields plus ``reason``."""
        return {**self.diagnostic.as_dict(), "reason": self.reason}


@dataclass
class ContainerRecord:
    """What the reports read of one serving container (:class:`ContainerResult`), kept by a streaming run
    (:mod:`kvlint.stream`) when the container's documents are dropped: its name, workload, sizing outcome
    (:func:`kvlint.sizing.outcomes`), the JSON report's entry (when a JSON report is written), the
    fields of the Markdown and JUnit sections and the container's position (``container.loc``: where
    ``--require-sizing`` names a container without its engine command's position,
    :func:`kvlint.sizing.explained_at`)."""

    object_ref: str
    container_name: str
    sizing: str
    json: dict[str, Any] | None
    serving: Any
    placement: Any
    model: Any
    plan: Any
    plan_error: str | None
    model_error: str | None
    workload: Any
    container: Any

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's entry (:meth:`kvlint.types.ContainerResult.as_dict`)."""
        if self.json is None:  # pragma: no cover - only asked for when kept
            raise ValueError("this run kept no JSON entry for its containers")
        return self.json


@dataclass
class CheckResult:
    """Output of the pipeline: sorted diagnostics plus per-container results and input counts.

    ``diagnostics`` are what is reported, after ``select``/``ignore``, severity overrides and
    suppressions; ``suppressed`` counts the findings that ``kvlint.io/ignore`` annotations removed
    (kept, with their reasons, in ``suppressed_diagnostics``).
    """

    diagnostics: Sequence[Diagnostic] = field(default_factory=list)
    containers: list[ContainerResult | ContainerRecord] = field(default_factory=list)
    files: int = 0
    documents: int = 0
    workloads: int = 0
    suppressed: int = 0
    suppressed_diagnostics: list[SuppressedDiagnostic] = field(default_factory=list)
    exemptions_allowed: bool = True
    #: Set by the streaming run (:mod:`kvlint.stream`) when ``containers`` keeps only some containers'
    #: records: the number of serving containers, and how many had each sizing outcome (in first-met order).
    serving_count: int | None = None
    sizing_counts: dict[str, int] | None = None
    #: paths of the files whose serving containers were read (kept also when ``containers`` is not): a
    #: template that parsed anyway is then not counted as "not read" (:func:`kvlint.sizing.unread`)
    serving_paths: set[str] = field(default_factory=set)
    #: whether files name a serving engine (path -> answer), so :func:`kvlint.sizing.unread` need not read them
    #: again: the loader's :attr:`LoadResult.engine_named` (templated files) and, in a streaming run, the files
    #: with a file-level KV002, from the bytes the run analysed
    engine_named: dict[str, bool] = field(default_factory=dict)
    #: Set by a streaming run with several jobs asked for text in one style: ``((color, width), texts)``, the text
    #: report's block of each of (some of) the diagnostics (:func:`kvlint.report.text.format_diagnostic` of that
    #: diagnostic in that style, formatted in the worker that found it), which the report takes instead of
    #: formatting it again; keyed by the diagnostic's value, so a diagnostic changed since is formatted anew
    text_cache: tuple[tuple[bool, int], dict[Diagnostic, str]] | None = field(
        default=None, repr=False, compare=False
    )
    #: Set by ``kvlint check`` for the JSON and JSON Lines reports: the diagnostics at or above the ``fail_on`` that
    #: applies to each (``--fail-on``, else the nearest ``.kvlint.yaml``'s, else ``error``:
    #: :meth:`kvlint.checkrun.CheckRun.failing`), by value; None when not computed (then no ``fails`` field)
    failing: frozenset[Diagnostic] | None = field(default=None, repr=False, compare=False)
    #: Set with :attr:`failing`: where the run's thresholds came from, ``[{"threshold", "source"}]`` with
    #: ``source`` ``--fail-on``, a configuration file's path, or ``default`` (:meth:`kvlint.checkrun.CheckRun.thresholds`)
    fail_on: list[dict[str, str]] | None = field(default=None, repr=False, compare=False)
    #: Set by ``kvlint check`` when the run exits 1 on findings that are not errors because a ``fail_on`` below
    #: ``error`` applies (:func:`kvlint.report.text.fail_on_note`): the text report's last line, saying which
    #: threshold failed the run; None otherwise
    fail_on_note: str | None = field(default=None, repr=False, compare=False)

    @property
    def serving(self) -> int:
        """Number of serving containers analysed."""
        return len(self.containers) if self.serving_count is None else self.serving_count

    def counts(self) -> dict[str, int]:
        """Number of diagnostics per severity: ``{"error": n, "warning": n, "info": n}``."""
        out = {"error": 0, "warning": 0, "info": 0}
        counted = getattr(self.diagnostics, "severity_counts", None)
        if counted is not None:  # a streaming run's DiagnosticView counts them without decoding them
            for severity, n in counted().items():
                out[severity] = out.get(severity, 0) + n
            return out
        for d in self.diagnostics:
            out[d.severity] = out.get(d.severity, 0) + 1
        return out

    def standing(self) -> list[tuple[str, int]]:
        """``(severity, stands_for)`` of each reported diagnostic that stands for more than one finding (the
        finding for the rest past :data:`kvlint.findcap.MAX_PER_RULE` of a rule in a container; KV205's for the
        unknown options past its bound), in order."""
        listed = getattr(self.diagnostics, "standing", None)
        if listed is not None:  # a streaming run's DiagnosticView: only those are decoded
            return list(listed())
        return [(d.severity, n) for d in self.diagnostics if (n := findings_stood_for(d)) > 1]

    def finding_counts(self) -> dict[str, int]:
        """Findings per severity, as the reports' summaries count them: :meth:`counts` with each diagnostic that
        stands for several findings (:meth:`standing`) counted as those, at its severity (the rest of one
        severity, :func:`kvlint.findcap.cap_per_rule`): a container with 120 findings of one rule lists 51 and counts
        120, as linters count what they found, not what they print."""
        out = self.counts()
        for severity, n in self.standing():
            out[severity] = out.get(severity, 0) + n - 1
        return out


#: the top-level string fields of :meth:`ContainerResult.as_dict` that quote the manifest (``device`` names a GPU
#: outside the catalogue by its node label's text)
_QUOTING_FIELDS = (
    "kind", "name", "namespace", "role", "container", "image", "model", "model_id", "model_error",
    "accelerator_how", "device", "plan_error",
)  # fmt: skip


def _device_dict(placement: Placement | None) -> dict[str, Any]:
    """The JSON report's fields for the part of a GPU a container's plan is sized on (docs/formats.md): ``device``
    (:attr:`Placement.device_name`: the board, its MIG slice or its share, in words), ``device_share`` (an AMD
    compute partition or a vGPU share whose memory the plan uses, :attr:`Placement.device_share`), ``amd_partition``
    (the AMD partition mode, ``cpx_nps4``), ``shared``, ``sharing_strategy`` and ``max_sharers`` (time-sliced or MPS
    replicas of one GPU: several engines on one device, KV106) and ``gpu_slice`` (HAMi's memory slice per vGPU, ``{"resource", "mib",
    "percent"}``, which HAMi-core reports to the engine as the device total); null or false when not so."""
    if placement is None:
        return {
            "device": None,
            "device_share": None,
            "amd_partition": None,
            "shared": False,
            "sharing_strategy": None,
            "max_sharers": None,
            "gpu_slice": None,
        }
    gs = placement.gpu_slice
    return {
        "device": placement.device_name,
        "device_share": placement.device_share,
        "amd_partition": placement.amd_partition,
        "shared": placement.shared,
        "sharing_strategy": placement.sharing_strategy,
        "max_sharers": placement.max_sharers,
        "gpu_slice": {"resource": gs.key, "mib": gs.mib, "percent": gs.percent} if gs is not None else None,
    }


def _clipped_strings(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with each of :data:`_QUOTING_FIELDS` that is a string passed through
    :func:`kvlint.statement.clip_words` (the same string when it has no word over 256 characters)."""
    for key in _QUOTING_FIELDS:
        value = entry.get(key)
        if isinstance(value, str):
            entry[key] = clip_words(value)
    return entry
