"""Whether each serving workload was sized, and why not: "not sized" is never a silent pass.

A serving container is **sized** when kvlint built its memory plan on the GPU it lands on (``plan``) or,
with its GPU unknown, on each GPU of a fleet (``fleet``, KV501's verdict); a multi-node worker that runs no
engine of its own but joins its leader's (``ray start --address ... --block``) is sized with its leader
(``leader``) when the leader is. Otherwise it has exactly one
reason, named in every report (text, JSON, SARIF notification, Markdown, GitHub notice) and counted by
``--require-sizing`` / ``require_sizing: true``:

* ``command unreadable`` -- the engine command could not be read (KV503 from the parser); a custom image's
  entrypoint (or a script of the image) whose env names the model is read from that env instead
  (:func:`kvlint.engines.command.env_launch`, KV503 warning), and is then sized, or counted under the reason its
  model or layout gives (``model unknown``, ``parallel size unknown``);
* ``no model in the command`` -- an engine was found but its command names no model (KV503);
* ``runtime template`` -- a KServe serving-runtime template: the InferenceService that uses it names the
  model (KV502, info); also a multi-node runtime's worker, whose command names no model of its own;
* ``template not rendered`` -- the model is a ``{{ .Values.x }}`` or ``${VAR}`` placeholder, or a path holding an
  upper-case token a script replaces (``/gcs/V_MODEL_NAME``) or a ``<...>`` to fill in (KV502, KV002);
* ``model unknown`` -- the model's config.json could not be resolved (KV502); also a serving-runtime template that
  names its own model (``kvlint.io/model``, an OME runtime's ``--served-model-name``, a literal ``--model org/name``:
  :func:`kvlint.rules.facts.runtime_names_model`) when kvlint has no config for that model and the template
  requests a CUDA/ROCm GPU (one that requests none is ``no GPU requested``, as it is with the config:
  :func:`kvlint.rules.facts.unsized_before_model`);
* ``not a CUDA/ROCm GPU`` -- the GPU (or the image) is a TPU, Trainium, Gaudi or CPU build (KV501); this comes
  before ``command unreadable`` and ``no model in the command`` too (a Ray worker on a TPU, a Neuron build that
  runs a script of its image), since reading the command would not let kvlint size the container either;
* ``no GPU requested`` -- the container requests no GPU resource, so there is none to size it on (KV405,
  KV501 info);
* ``parallel size unknown`` -- a tensor/pipeline/data-parallel size or shard count is set to a value kvlint
  cannot resolve (``--tensor-parallel-size $(TP)`` with ``TP`` from a Secret or a fieldRef): each GPU's share of
  the model depends on it, and the engine default of 1 is not assumed (KV503 warning at the flag); in a
  serving-runtime template or LLMInferenceServiceConfig preset the service sets it, and the reason is
  ``runtime template`` (KV503 info), even when the template names its model;
* ``GPU unknown`` -- nothing names the GPU and the fleet could not be planned either (KV501);
* ``memory model could not size it`` -- model and GPU are known, the engine's memory model refused (KV502).

Serving objects kvlint saw but could not read at all are counted apart, as **not read** (:func:`unread`): a
Helm template or values file that was not rendered (KV002) whose text names a serving engine, a Helm chart
that ``helm template`` failed to render (or a kustomization ``kustomize build`` failed on: KV001 at its
``Chart.yaml`` / ``kustomization.yaml``) whose files name one, and an
operator object whose engine settings live where kvlint does not look (KV503 info: Ray Serve's
``serveConfigV2`` application in Python, llmaz's BackendRuntime, KAITO's MultiRoleInference and Transformers
runtime, a KServe InferenceService on the Hugging Face server's ``--backend=huggingface``, the NIM launcher's
profile of a NIMService). ``--require-sizing`` fails on them too.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvlint.engines.images import Unsized, path_placeholder, unsized_whatever_model
from kvlint.engines.layout import unresolved_sizes
from kvlint.load import _mentions_engine, outermost_chart, template_chart, values_chart
from kvlint.paths import real_path_inside, walk_tree
from kvlint.types import CheckResult, ContainerRecord, ContainerResult, Diagnostic, Finding, Loc, Mark

__all__ = [
    "REASONS",
    "SIZED",
    "SizingSummary",
    "explained_at",
    "outcomes",
    "sizing_of",
    "summarise",
    "unread",
]

SIZED = ("plan", "fleet", "leader")

#: how many of the serving objects not read the text report names below its sizing line (the rest are counted;
#: the JSON report lists them all). [assumed] a screenful, as ruff's per-file listing stays short
UNREAD_SHOWN = 10


def _is_runtime_template(cr: ContainerResult) -> bool:
    from kvlint.rules.facts import is_runtime_template

    return is_runtime_template(cr.workload)


def _not_a_gpu(cr: ContainerResult) -> bool:
    """Whether the container runs on something kvlint's memory model is not for (a TPU, Trainium/Inferentia,
    Gaudi ... accelerator or a CPU build: :func:`kvlint.engines.images.unsized_whatever_model`), outside a
    serving-runtime template (whose resources come from the InferenceService that uses it)."""
    return (
        not _is_runtime_template(cr) and unsized_whatever_model(cr.serving, cr.placement) is Unsized.NOT_A_GPU
    )


def sizing_of(cr: ContainerResult) -> str:
    """``plan`` | ``fleet`` | the reason the container was not sized (see the module docstring), on the
    container alone (:func:`outcomes` also credits workers sized with their leader)."""
    if cr.plan is not None:
        return "plan"
    if cr.fleet:
        return "fleet"
    s = cr.serving
    if s.model is None:
        if _is_runtime_template(cr) and not s.unreadable:
            # a multi-node runtime's worker (`ray start --address ... --block`) joins the head, whose model the
            # InferenceService that uses the template names: the template's reason, not the worker's command's
            return "runtime template"
        # a container on a TPU, Trainium, Gaudi ... (or a CPU build) is not sized whatever its command says:
        # reading the command would not size it, so that is the reason (KV501 says so next to KV503)
        if _not_a_gpu(cr):
            return Unsized.NOT_A_GPU.value
        # a command read whole that names no model (KV503 "... command names no model", as a container that
        # only runs the image's ENTRYPOINT) is not an unreadable one
        if s.unreadable:
            return "command unreadable"
        return "no model in the command"
    # imported when called, as _is_runtime_template's
    from kvlint.rules.facts import runtime_names_model

    if cr.model is None and _is_runtime_template(cr) and runtime_names_model(cr.workload, s) is None:
        return "runtime template"  # its model and resources come from the InferenceService that uses it
    # a container no model would let kvlint size (a CPU build, a TPU, no GPU requested) says so first; so does a
    # runtime template that names its own model (KV505, kvlint.io/model, a literal --model org/name), whether or
    # not kvlint has that model's config (else "model unknown" below), as KV501/KV502 do
    # (kvlint.rules.facts.unsized_before_model)
    why = unsized_whatever_model(s, cr.placement)
    if why is not None:
        return why.value
    if cr.model is None:
        # (a shell script's quoted '${MODEL}' is no placeholder: the engine is given that text, KV502)
        placeholder = (
            "{{" in s.model.value
            or ("${" in s.model.value and not s.quoted_model)
            or path_placeholder(s.model.value)
        )
        return "template not rendered" if placeholder else "model unknown"
    if unresolved_sizes(s):
        # a serving-runtime template (or LLMInferenceServiceConfig preset) that names its model still takes its
        # parallel sizes from the service that uses it: KServe fills them in (KV503 info: "the service that uses
        # this runtime template sets it"), so the template's reason, not a size the user left unresolved
        return "runtime template" if _is_runtime_template(cr) else "parallel size unknown"
    acc = cr.placement.accelerator if cr.placement else None
    if acc is None:
        return "GPU unknown"
    return "memory model could not size it"


#: the rules that say why a serving container was not sized (GPU, model config, command)
WHY_RULES = ("KV501", "KV502", "KV503")

#: Each reason :func:`sizing_of` gives (as the sizing line and the JSON report's ``sizing`` spell it) -> the rule whose
#: finding says why, at the container, with the remedy, and what the reason means (the module docstring's list, one
#: line each): ``kvlint explain "model unknown"`` prints it, then the rule. A serving object not read (:func:`unread`)
#: -> the rule of the finding :func:`unread` counts.
REASONS: dict[str, tuple[str, str]] = {
    "command unreadable": (
        "KV503",
        "the engine command could not be read (a script of the image, a wrapper, a Ray container its operator "
        "starts): kvlint cannot see the engine's flags",
    ),
    "no model in the command": ("KV503", "an engine was found, but its command names no model"),
    "runtime template": (
        "KV502",
        "a serving-runtime template (KServe or OME ServingRuntime, LLMInferenceServiceConfig preset): the model, the "
        "GPUs and the parallel sizes come from the InferenceService that uses it",
    ),
    "template not rendered": (
        "KV502",
        "the model is a placeholder ({{ .Values.x }}, ${VAR}, a token a script replaces) filled in before the "
        "manifest is applied",
    ),
    "model unknown": (
        "KV502",
        "the model's config.json could not be found (a path inside the container or on a volume, a model not "
        "pulled and no Hugging Face Hub access)",
    ),
    Unsized.NOT_A_GPU.value: (
        "KV501",
        "the container runs on a TPU, Trainium/Inferentia, Gaudi or Ascend device or is a CPU build: kvlint's "
        "memory model is for NVIDIA and AMD GPUs",
    ),
    Unsized.OTHER_GPU_BUILD.value: (
        "KV304",
        "the engine's image is built for another GPU than the one the pod requests (a ROCm build on an NVIDIA node)",
    ),
    Unsized.NO_GPU_REQUESTED.value: (
        "KV501",
        "the container requests no GPU resource (KV405), so there is no GPU to size the engine on",
    ),
    "parallel size unknown": (
        "KV503",
        "a tensor, pipeline or data-parallel size is a variable kvlint cannot resolve; the engine default of 1 is "
        "not assumed",
    ),
    "GPU unknown": (
        "KV501",
        "nothing names the GPU, and the container could not be planned on the fleet either",
    ),
    "memory model could not size it": (
        "KV502",
        "the model and the GPU are known, but the engine's memory model could not plan this configuration",
    ),
}


def explained_at(cr: ContainerResult | ContainerRecord, diagnostics: Sequence[Diagnostic]) -> Loc | None:
    """Where the report says why ``cr`` was not sized: the location of its KV501/KV502/KV503 finding (in
    ``cr``'s file; else such a finding on its whole object, e.g. KV502 on a serving-runtime template), so ``--require-sizing`` names the same line and column as that finding; without one (the
    rule ignored), the position a rule finding on the container defaults to (the engine command's, else the
    container's)."""
    path = cr.workload.doc.path
    mine = [
        d
        for d in diagnostics
        if d.rule in WHY_RULES and d.object == cr.object_ref and d.loc is not None and d.loc.file == path
    ]
    # the container's own finding, else one on the whole object (KV502 on a serving-runtime template)
    for d in [d for d in mine if d.container == cr.container_name] + [d for d in mine if not d.container]:
        return d.loc
    return cr.serving.command_loc or cr.container.loc or cr.workload.loc


def outcomes(containers: Sequence[ContainerResult | ContainerRecord]) -> list[str]:
    """:func:`sizing_of` of each container, in order, with ``leader`` for a worker that joins a leader sized in
    the same run (matched by the leader workload and container name the worker's parse recorded), and the
    leader's own reason for one that joins a leader not sized (its command names no model: it runs none); a streaming
    run's record (:class:`kvlint.types.ContainerRecord`) carries its outcome, worked out so when it was made."""
    records = [cr.sizing for cr in containers if not isinstance(cr, ContainerResult)]
    if len(records) == len(containers):
        return records
    plain = [sizing_of(cr) if isinstance(cr, ContainerResult) else cr.sizing for cr in containers]
    by_key = {(id(cr.workload), cr.container_name): out for cr, out in zip(containers, plain, strict=True)}
    # the first container of each PodSpec and name (a leader's Workload object is rebuilt per find): looked up,
    # not searched, per worker (a search per worker was workers x containers)
    by_spec: dict[tuple[int, str], str] = {}
    for c, o in zip(containers, plain, strict=True):
        by_spec.setdefault((id(c.workload.pod_spec), c.container_name), o)
    out = []
    for cr, own in zip(containers, plain, strict=True):
        if not isinstance(cr, ContainerResult):  # a record's outcome is final
            out.append(own)
            continue
        joins = cr.serving.joins
        leader = cr.workload.leader
        if own not in SIZED and joins is not None and leader is not None:
            led = by_key.get((id(leader), joins.leader_container))
            if (
                led is None
            ):  # the leader's Workload object is rebuilt per find; match by identity of its PodSpec
                led = by_spec.get((id(leader.pod_spec), joins.leader_container))
            if led in ("plan", "fleet"):
                own = "leader"
            elif led is not None and (own == "no model in the command" or joins.follower):
                # it runs no engine of its own (it joins the leader's), so it is not sized for the leader's reason
                # (a TPU, a runtime template, an unknown model), not for a model its command never names; a
                # follower node runs the leader's engine, sized at the leader only: the leader's reason too
                own = led
        out.append(own)
    return out


def joined_unsized_notes(
    containers: Sequence[ContainerResult | ContainerRecord],
    diagnostics: Sequence[Diagnostic],
    suppressed: Callable[[Diagnostic], bool] | None = None,
    set_aside: Sequence[Diagnostic] = (),
) -> list[tuple[ContainerResult, Finding]]:
    """A note for each multi-node worker that joins its leader's engine (``ServingConfig.joins``), is not sized
    (:func:`outcomes`) and has no KV501/KV502/KV503 finding of its own (nor one on its whole object) among
    ``diagnostics``: only :data:`kvlint.rules.runner.JOINED_WORKER_RULES` are checked for it, so its line showed
    nothing while the sizing line counted it ("not sized: model unknown 2" for one KV502, the leader's). The note
    is an info of the rule that says why (:data:`REASONS`), at the command that joins, naming the leader container
    and the rule of the leader's finding (in which file, when another; not its line, which moves with each edit
    above it); ``(container, finding)`` pairs, in order.

    No note for a worker whose leader's finding of why is suppressed: by a ``# kvlint: ignore`` comment
    (``suppressed``, :func:`kvlint.suppress.comment_suppresses`, applied after this stage) or by the leader's
    ``kvlint.io/ignore`` annotation (``set_aside``, the diagnostics it suppressed). The user's reason holds for the
    engine the worker joins, and the note said "whose KV502 finding says why" of a finding not shown."""
    out: list[tuple[ContainerResult, Finding]] = []
    results = [cr for cr in containers if isinstance(cr, ContainerResult)]
    if not any(cr.serving.joins is not None for cr in results):
        return out
    # read once, then looked up per worker: a scan of every diagnostic (and every container, for the leader) per
    # worker was workers x diagnostics
    why_by = _why_index(diagnostics)
    aside_by = _why_index(set_aside)
    leaders = _leader_index(results)
    said_of: dict[tuple[str, str, str], tuple[bool, str, Diagnostic | None]] = {}
    for cr, why in zip(containers, outcomes(containers), strict=True):
        joins = cr.serving.joins if isinstance(cr, ContainerResult) else None
        if joins is None or why in SIZED or why not in REASONS:
            continue
        assert isinstance(cr, ContainerResult)
        path = cr.workload.doc.path
        if _says_why(cr, why_by):
            continue  # it says why itself (a Ray worker's unreadable command, a runtime template's note)
        leader = _leader_result(cr, leaders)
        if leader is None:
            continue
        # what the leader says, worked out once per leader (many workers may join one, or objects of one name)
        key = (leader.object_ref, leader.workload.doc.path, leader.container_name)
        told = said_of.get(key)
        if told is None:
            told = said_of[key] = (
                _why_suppressed(leader, why_by, suppressed, aside_by),
                outcomes([leader])[0],
                # the leader's finding named by its rule, not its line: a line moves with every edit above it (the
                # webhook's message then changed with an annotation it does not read), and in a review it is a line
                # of kvlint's own JSON text of the object, not one the user wrote
                next(
                    (d for d in _why_findings(leader, why_by) if suppressed is None or not suppressed(d)),
                    None,
                ),
            )
        hidden, led, said = told
        if hidden:
            continue
        elsewhere = f" in {said.loc.file}" if said is not None and said.loc and said.loc.file != path else ""
        name = joins.leader_container or leader.container_name
        if led == why:
            message = (
                f"not sized, as its leader ({why}): this worker joins the engine of container {name}, whose "
                + (f"{said.rule} finding{elsewhere} says why" if said is not None else "findings say why")
            )
        else:
            message = (
                f"not sized ({why}): this worker joins the engine of container {name}, which is not sized "
                f"either ({led}" + (f": its {said.rule} finding{elsewhere}" if said is not None else "") + ")"
            )
        rule = REASONS[why][0]
        out.append(
            (
                cr,
                Finding(
                    rule=rule,
                    message=message,
                    loc=joins.loc or cr.serving.command_loc or cr.container.loc or cr.workload.loc,
                    fix="what the leader's finding asks applies to this worker too: kvlint sizes a multi-node engine "
                    "at its leader, and the workers that join it with it",
                    severity="info",
                ),
            )
        )
    return out


#: KV501/KV502/KV503 findings by (object, file, container), as :func:`_why_index` groups them
_WhyIndex = dict[tuple[str, str, str], list[Diagnostic]]


def _why_index(diagnostics: Sequence[Diagnostic]) -> _WhyIndex:
    """The KV501/KV502/KV503 findings among ``diagnostics`` (those with a position) by ``(object, file,
    container)`` (container ``""``: on the whole object), in order: what :func:`_why_findings` looks a
    container's up in."""
    out: _WhyIndex = {}
    for d in diagnostics:
        if d.rule in WHY_RULES and d.loc is not None:
            out.setdefault((d.object, d.loc.file, d.container), []).append(d)
    return out


def _why_suppressed(
    leader: ContainerResult,
    why_by: _WhyIndex,
    suppressed: Callable[[Diagnostic], bool] | None,
    aside_by: _WhyIndex,
) -> bool:
    """Whether the finding that says why ``leader`` was not sized (its KV501/KV502/KV503, as :func:`explained_at`
    finds it) is suppressed: every such finding among the diagnostics (``why_by``) one a comment suppresses
    (``suppressed``), or none among them and one among those its ``kvlint.io/ignore`` annotation suppressed
    (``aside_by``)."""

    shown = _why_findings(leader, why_by)
    if shown:
        return suppressed is not None and all(suppressed(d) for d in shown)
    return bool(_why_findings(leader, aside_by))


def _why_findings(cr: ContainerResult, why_by: _WhyIndex) -> list[Diagnostic]:
    """The findings that say why ``cr`` was not sized (its KV501/KV502/KV503 in its file, the container's own
    first, then one on its whole object, as :func:`explained_at` finds them), looked up in ``why_by``
    (:func:`_why_index`)."""
    at = (cr.object_ref, cr.workload.doc.path)
    return [*why_by.get((*at, cr.container_name), ()), *why_by.get((*at, ""), ())]


def _says_why(cr: ContainerResult, why_by: _WhyIndex) -> bool:
    """Whether ``cr`` has a KV501/KV502/KV503 finding of its own or on its whole object (:func:`_why_findings`),
    looked up."""
    at = (cr.object_ref, cr.workload.doc.path)
    return (*at, cr.container_name) in why_by or (*at, "") in why_by


def _leader_index(results: Sequence[ContainerResult]) -> dict[tuple[int, str], ContainerResult]:
    """Each container of ``results`` by ``(id(workload), name)`` and ``(id(pod_spec), name)``, the first of each
    key: what :func:`_leader_result` looks a leader up in."""
    out: dict[tuple[int, str], ContainerResult] = {}
    for c in results:
        out.setdefault((id(c.workload), c.container_name), c)
        out.setdefault((id(c.workload.pod_spec), c.container_name), c)
    return out


def _leader_result(
    cr: ContainerResult, leaders: dict[tuple[int, str], ContainerResult]
) -> ContainerResult | None:
    """The leader container whose engine ``cr`` joins (its workload's ``leader`` and the container name ``cr``'s
    parse recorded; the leader's Workload object is rebuilt per find, so matched by identity of its PodSpec too),
    looked up in ``leaders`` (:func:`_leader_index`), else None."""
    joins, leader = cr.serving.joins, cr.workload.leader
    if joins is None or leader is None:
        return None
    return leaders.get((id(leader), joins.leader_container)) or leaders.get(
        (id(leader.pod_spec), joins.leader_container)
    )


@dataclass(frozen=True)
class SizingSummary:
    """Counts over a run's serving containers: ``serving`` in all, ``plan`` and ``fleet`` sized, and
    ``not_sized`` reason -> count (ordered by count); ``not_read`` the serving objects seen but not read
    (:func:`unread`)."""

    serving: int
    plan: int
    fleet: int
    not_sized: dict[str, int] = field(default_factory=dict)
    leader: int = 0
    not_read: int = 0
    #: what :func:`unread` found, in report order: each entry's file, line, object and reason
    unread_items: tuple[tuple[Diagnostic, str], ...] = ()

    @property
    def sized(self) -> int:
        return self.plan + self.fleet + self.leader

    @property
    def unsized(self) -> int:
        """Serving containers not sized plus serving objects not read."""
        return self.serving - self.sized + self.not_read

    def line(self) -> str:
        """``sized 20 of 85 serving containers (9 on the GPU they name, 11 against the fleet); not sized:
        model unknown 40, ...``: the parenthesis says how the sized ones were sized, each way that sized at
        least one (``sized 0 of 1 serving container; not sized: ...`` has none, ``sized 1 of 2 serving
        containers (1 against the fleet)`` no "0 on the GPU they name")."""
        text = f"sized {self.sized} of {self.serving} serving container{'' if self.serving == 1 else 's'}"
        parts = []
        if self.plan:
            parts.append(f"{self.plan} on the GPU {'it names' if self.plan == 1 else 'they name'}")
        if self.fleet:
            parts.append(f"{self.fleet} against the fleet")
        if self.leader:
            parts.append(f"{self.leader} with {'its' if self.leader == 1 else 'their'} leader")
        if parts:
            text += " (" + ", ".join(parts) + ")"
        if self.not_sized:
            text += "; not sized: " + ", ".join(f"{reason} {n}" for reason, n in self.not_sized.items())
        if self.not_read:
            one = self.not_read == 1
            text += (
                f"; not read: {self.not_read} template{'' if one else 's'}, Helm chart{'' if one else 's'} or "
                f"operator object{'' if one else 's'} naming a serving engine"
            )
        return text

    def unread_listing(
        self, limit: int | None = None, path: Callable[[str], str] | None = None
    ) -> tuple[list[tuple[str, str, str]], int]:
        """What the reports list of the serving objects not read: the first ``limit`` (default
        :data:`UNREAD_SHOWN`) as ``(where, object, reason)`` (``FILE:LINE``, the file as ``path`` writes it, or
        ``""`` without a location; ``Kind/namespace/name`` or ``""`` for a whole file), and how many more there are.
        The text, GitHub (:meth:`unread_lines`) and Markdown reports list these, each in its own markup. The file
        name and object come from the input: the caller escapes them."""
        shown = self.unread_items[: max(0, UNREAD_SHOWN if limit is None else limit)]
        entries = [
            (f"{path(d.loc.file) if path else d.loc.file}:{d.loc.line}" if d.loc else "", d.object, why)
            for d, why in shown
        ]
        return entries, len(self.unread_items) - len(entries)

    def unread_lines(self, limit: int | None = None, path: Callable[[str], str] | None = None) -> list[str]:
        """What was not read, one line each (``  FILE:LINE: [KIND/NAME: ]REASON``), the first ``limit`` of them
        (:meth:`unread_listing`), then ``  and N more ...`` when there are more: the text report prints them below
        :meth:`line`, as ruff lists files, so that "not read: 3 ..." names the three; the GitHub format in its
        sizing annotation, each file as ``path`` writes it (there, relative to the repository root, as its
        annotations). The file name and object come from the input: the caller escapes them
        (:func:`kvlint.report.escape.printable`)."""
        entries, more = self.unread_listing(limit, path)
        lines = ["  not read: " + ": ".join(part for part in entry if part) for entry in entries]
        if more > 0:
            lines.append(
                f"  and {more} more not read (--format json lists all: summary.sizing.not_read_items)"
            )
        return lines

    def as_dict(self) -> dict[str, Any]:
        """JSON shape: ``{"serving", "sized", "plan", "fleet", "leader", "not_sized": {reason: n}, "not_read",
        "not_read_items": [{"file", "line", "column", "object", "rule", "reason"}]}`` (``not_read_items``: each
        serving object :func:`unread` counted, with the finding that says so; ``object`` empty for a file)."""
        return {
            "serving": self.serving,
            "sized": self.sized,
            "plan": self.plan,
            "fleet": self.fleet,
            "leader": self.leader,
            "not_sized": dict(self.not_sized),
            "not_read": self.not_read,
            "not_read_items": [
                {
                    "file": d.loc.file if d.loc else None,
                    "line": d.loc.line if d.loc else None,
                    "column": d.loc.column if d.loc else None,
                    "object": d.object,
                    "rule": d.rule,
                    "reason": why,
                }
                for d, why in self.unread_items
            ],
        }


def summarise(result: CheckResult) -> SizingSummary:
    """The :class:`SizingSummary` of ``result``'s serving containers."""
    if result.sizing_counts is not None:
        counts = Counter(result.sizing_counts)
    else:
        counts = Counter(outcomes(result.containers))
    reasons = {k: n for k, n in counts.most_common() if k not in SIZED}
    items = tuple(unread(result))
    return SizingSummary(
        result.serving,
        counts.get("plan", 0),
        counts.get("fleet", 0),
        reasons,
        counts.get("leader", 0),
        len(items),
        items,
    )


#: Each reason :func:`unread` gives for a serving object not read -> the rule of the finding it counts (at the
#: file:line the text report lists) and what the reason means; ``kvlint explain "Helm values file not rendered"``
#: prints it, then the rule.
UNREAD_REASONS: dict[str, tuple[str, str]] = {
    "template not rendered": (
        "KV002",
        "a Helm template that names a serving engine, linted as it is: its {{ ... }} actions are not rendered, so "
        "its workloads are not read (lint the chart directory, or helm template ... | kvlint check -)",
    ),
    "Helm values file not rendered": (
        "KV002",
        "a Helm values file of a serving chart (an engine or a GPU limit in it), linted as a plain file: the chart "
        "that renders it was not among the inputs (lint the chart directory with --helm-values FILE)",
    ),
    "Helm chart not rendered (its files linted as they are)": (
        "KV002",
        "the templates and values of one chart, found by a directory walk and linted as plain files: the chart "
        "is not rendered (lint its directory by name, with --helm-values for the values you deploy)",
    ),
    "Helm chart not rendered (helm template failed)": (
        "KV001",
        "helm template failed on a chart whose files name a serving engine (a missing dependency, a required "
        "value): nothing of it was read",
    ),
    "Helm chart rendered nothing": (
        "KV002",
        "helm template rendered no object from a chart whose files name a serving engine (the values you lint "
        "with turn its workloads off)",
    ),
    "kustomization not built": (
        "KV002",
        "a kustomization whose files name a serving engine was not built (kustomize build failed, KV001, or it "
        "was linted as a plain file)",
    ),
    "kustomize patch not applied": (
        "KV002",
        "a kustomize patch naming a serving engine, linted alone: lint the overlay directory that applies it",
    ),
    "operator settings not read": (
        "KV503",
        "an operator object (RayService, NIMService, KAITO MultiRoleInference, llmaz, an InferenceService on a "
        "non-vLLM backend) whose engine settings live where kvlint does not read them",
    ),
    "engine kvlint does not model": (
        "KV503",
        "a GPU container running an engine kvlint has no memory model for (TensorRT-LLM, llama.cpp)",
    ),
}


#: the most of a file :func:`unread` reads to look for an engine (bytes)
_MAX_SCAN_BYTES = 1 << 20


def _names_engine(path: str, cache: dict[str, bool]) -> bool:
    """Whether the file at ``path`` (a regular local file, at most :data:`_MAX_SCAN_BYTES` read) names a
    serving engine; False for stdin and anything unreadable. ``cache`` may hold the answer already (the run's
    :attr:`~kvlint.types.CheckResult.engine_named`, from the text the loader read)."""
    if path not in cache:
        found = False
        try:
            if path != "-" and os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found = _mentions_engine(fh.read(_MAX_SCAN_BYTES))
        except OSError:
            found = False
        cache[path] = found
    return cache[path]


def engine_named_in(data: bytes) -> bool | None:
    """What :func:`unread` finds reading a regular file of these bytes (whether it names a serving engine), or
    None when it would read only a part of it (more than :data:`_MAX_SCAN_BYTES`). The read is of UTF-8 text
    with errors replaced and line breaks translated, as here but for the breaks: a match holds no break."""
    if len(data) > _MAX_SCAN_BYTES:
        return None
    return _mentions_engine(data.decode("utf-8", errors="replace"))


#: the files a failed render (``helm template``, ``kustomize build``) reports its KV001 at, by base name
_RENDER_ROOTS = {
    "Chart.yaml": "Helm chart not rendered (helm template failed)",
    "kustomization.yaml": "kustomization not built",
    "kustomization.yml": "kustomization not built",
    "Kustomization": "kustomization not built",
}
#: files of a chart or kustomization :func:`_dir_names_engine` reads, by extension
_RENDER_INPUTS = (".yaml", ".yml", ".tpl", ".json")


def _dir_names_engine(directory: str, cache: dict[str, bool]) -> bool:
    """Whether the YAML, JSON and template files under ``directory`` (a chart or kustomization that failed to
    render; at most :data:`_MAX_SCAN_BYTES` read in all, ``values*.yaml`` first) name a serving engine. Only
    regular files inside ``directory`` are read: not a named pipe or device (opening a pipe waits for a writer for
    ever), nor a symbolic link out of the directory (a pull request's link to the runner's files)."""
    key = os.path.join(directory, "")
    if key not in cache:
        files: list[str] = []
        real_dir = os.path.realpath(directory)
        for root, dirs, names in walk_tree(directory):
            dirs.sort()
            for n in sorted(names):
                f = os.path.join(root, n)
                if not n.endswith(_RENDER_INPUTS) or not os.path.isfile(f):
                    continue
                try:
                    if os.path.islink(f) and not real_path_inside(f, real_dir, below=True, resolved=True):
                        continue
                except ValueError:  # pragma: no cover - no file name holds a NUL
                    continue
                files.append(f)
        files.sort(key=lambda f: not os.path.basename(f).startswith("values"))
        budget, found = _MAX_SCAN_BYTES, False
        for f in files:
            if budget <= 0 or found:
                break
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    text = fh.read(budget)
            except OSError:
                continue
            budget -= len(text)
            found = _mentions_engine(text)
        cache[key] = found
    return cache[key]


#: the rules of the findings :func:`unread` reads
_UNREAD_RULES = frozenset({"KV001", "KV002", "KV503"})


def unread(result: CheckResult) -> list[tuple[Diagnostic, str]]:
    """Serving objects seen but not read, one per file or object, with why: ``template not rendered``
    (a file-level KV002 -- Helm template or values file -- whose text names vLLM, SGLang or TGI, or a values
    file whose KV002 reason is a GPU limit (:attr:`kvlint.types.Mark.SERVING_VALUES`), and whose serving containers, if it
    parsed anyway, were not read; the templates and values files of one chart, linted as plain files, are one
    ``Helm chart not rendered (its files linted as they are)``: :func:`kvlint.load.template_chart`, its subcharts
    counted with the outermost chart (:func:`kvlint.load.outermost_chart`),
    :func:`kvlint.load.values_chart`), ``kustomization not built`` (KV002 on a
    kustomization file linted as a plain file, whose directory's files name one), ``Helm chart not rendered (helm template failed)``
    / ``kustomization not built`` (a KV001 at a chart's ``Chart.yaml`` or a ``kustomization.yaml`` -- the
    renderer failed, so nothing of it was read -- whose directory's files name one), ``Helm chart rendered
    nothing`` (the KV002 at a chart's ``Chart.yaml`` whose ``helm template`` output held no object, when the chart's
    files name one) and
    ``engine kvlint does not model`` (KV503's note on a GPU container running TensorRT-LLM or llama.cpp,
    :mod:`kvlint.engines.others`), ``operator settings not read`` (KV503's note on a RayService, RayJob, llmaz Playground/Service, KAITO
    MultiRoleInference, NIMService, or a KServe InferenceService on a non-vLLM ``--backend``). Only reported diagnostics count: a rule turned off with ``ignore`` hides them.
    Reads (at most 1 MiB per file or directory of) the local files those KV002/KV001 findings name, except
    the files whose answer ``result.engine_named`` holds (the loader's, for a templated file of at most
    1 MiB in UTF-8 read whole, and a streaming run's, from the bytes it analysed): a command-line helper,
    never called by the admission webhook. Each finding is told apart by its :class:`~kvlint.types.Mark`, set where
    it is made, not by its message's wording."""
    out: list[tuple[Diagnostic, str]] = []
    # a template that parsed anyway and whose serving containers were read is counted with them (sized or not)
    seen: set[str] = {cr.workload.doc.path for cr in result.containers} | result.serving_paths
    cache: dict[str, bool] = dict(result.engine_named)
    diagnostics = result.diagnostics
    # a streaming run's DiagnosticView decodes only the diagnostics of these rules
    of_rules = getattr(diagnostics, "of_rules", None)
    for d in diagnostics if of_rules is None else of_rules(_UNREAD_RULES):
        # told apart by what the finding is (its Mark, set where it is made), never by its message's wording
        mark = d.mark
        if d.rule == "KV503" and mark in (Mark.SETTINGS_NOT_READ, Mark.NIM_NOT_READ, Mark.OTHER_ENGINE):
            other = mark is Mark.OTHER_ENGINE
            out.append((d, "engine kvlint does not model" if other else "operator settings not read"))
        elif d.rule == "KV002" and not d.object and d.loc is not None and d.loc.file not in seen:
            if mark in (Mark.WALK_NOTE, Mark.KUSTOMIZE_PATCH_BUILT):
                # a note on what a walk rendered (or could not): the files it names count themselves; a patch of a
                # kustomization the run built is read through that build
                continue
            if mark is Mark.KUSTOMIZE_PATCH:
                if _names_engine(d.loc.file, cache):
                    seen.add(d.loc.file)
                    out.append((d, "kustomize patch not applied"))
            elif mark is Mark.EMPTY_RENDER:
                if _dir_names_engine(os.path.dirname(d.loc.file) or ".", cache):
                    seen.add(d.loc.file)
                    out.append((d, "Helm chart rendered nothing"))
            elif mark is Mark.KUSTOMIZATION:
                if _dir_names_engine(os.path.dirname(d.loc.file) or ".", cache):
                    seen.add(d.loc.file)
                    out.append((d, "kustomization not built"))
            # values whose reason is a GPU limit (a serving chart's values that name no engine, such as
            # substratusai/helm's vllm chart's ``model`` + ``resources.limits nvidia.com/gpu``), the llm-d chart's
            # model URI or keys left for --set are counted as not read too
            elif _names_engine(d.loc.file, cache) or mark is Mark.SERVING_VALUES:
                seen.add(d.loc.file)
                values = mark in (Mark.HELM_VALUES, Mark.SERVING_VALUES)
                # the templates and values of one chart, linted as plain files by a directory walk: one chart
                # not rendered, not one entry per file (a chart of five templates was five); a subchart unpacked
                # in its parent's charts/ is rendered through the parent (the chart its KV002 names), so its
                # files are that chart's too (an umbrella with one subchart was two charts not rendered)
                chart = values_chart(d.loc.file) if values else template_chart(d.loc.file)
                chart = outermost_chart(chart) if chart is not None else None
                if chart is None:
                    out.append((d, "Helm values file not rendered" if values else "template not rendered"))
                elif os.path.join(chart, "Chart.yaml") not in seen:
                    seen.add(os.path.join(chart, "Chart.yaml"))
                    out.append((d, "Helm chart not rendered (its files linted as they are)"))
        elif d.rule == "KV001" and not d.object and d.loc is not None:
            root = _render_root(d)
            if (
                root is not None
                and root not in seen
                and _dir_names_engine(os.path.dirname(root) or ".", cache)
            ):
                seen.add(root)
                out.append((d, _RENDER_ROOTS[os.path.basename(root)]))
    return out


def _render_root(d: Diagnostic) -> str | None:
    """The ``Chart.yaml``/kustomization file of the chart or kustomization whose failed render ``d`` (a KV001)
    reports: its own file, or, for a ``helm template`` failure placed at a template line
    (:func:`kvlint.render._helm_failure`: ``CHART/templates/x.yaml``, ``CHART/charts/SUB/templates/x.yaml``), the
    ``Chart.yaml`` of the chart holding that file (the outermost, for a subchart unpacked in ``charts/``). None for
    any other KV001."""
    assert d.loc is not None
    if d.mark is Mark.KUSTOMIZE_MISSING:
        return None  # a missing path said beside the failed build's own KV001, which is counted
    if os.path.basename(d.loc.file) in _RENDER_ROOTS:
        return d.loc.file
    if d.mark is not Mark.HELM_FAILED and d.mark is not Mark.HELM_MISSING_DEPS:
        return None
    here = os.path.dirname(os.path.abspath(d.loc.file))
    # the template's own chart: templates/ is one level below it, a folder in templates/ a few more
    for _ in range(8):
        if os.path.isfile(os.path.join(here, "Chart.yaml")):
            break
        here = os.path.dirname(here)
    else:
        return None
    # a subchart unpacked in its parent's charts/: the chart named on the command line is the outermost one
    while os.path.basename(os.path.dirname(here)) == "charts" and os.path.isfile(
        os.path.join(os.path.dirname(os.path.dirname(here)), "Chart.yaml")
    ):
        here = os.path.dirname(os.path.dirname(here))
    chart = os.path.join(here, "Chart.yaml")
    rel = os.path.relpath(chart)
    return chart if rel.startswith("..") else rel
