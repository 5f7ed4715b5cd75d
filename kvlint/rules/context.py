"""What a check sees: one serving container's results, read-only, bound to the rule being checked.

A :class:`RuleContext` is built by the runner (:mod:`kvlint.rules.runner`) once per container, its ``rule``
(and ``plan_withdrawn``) set before each check, so a check uses it only while it runs and keeps nothing that
holds it (a generator of findings is consumed before the next check). It
exposes what the pipeline resolved (the parsed command, model, placement, memory plan), the engine's GPU
layout (:class:`~kvlint.engines.layout.Parallelism`), the rule's parameters from the catalogue and the
run's options, and builds the rule's diagnostics (:meth:`RuleContext.finding`). Checks never modify it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kvlint.engines.layout import Parallelism
from kvlint.options import Options
from kvlint.rules.catalog import RuleInfo
from kvlint.source import LDict, Loc
from kvlint.statement import clip_words
from kvlint.types import (
    ContainerResult,
    Diagnostic,
    MemoryPlan,
    ModelSpec,
    Placement,
    ServingConfig,
    Severity,
    Workload,
)

__all__ = ["GiB", "RuleContext", "context_state", "gib", "setting_at", "withdraw_plan"]

#: ``(?<![\w-])--([a-z][a-z0-9_-]*)``, with the lookbehind after the dashes (a pattern that starts with a literal is
#: searched by skipping to it; the assertion holds at the same places, the start of the text included)
_FLAG = re.compile(r"--(?<![\w-]--)([a-z][a-z0-9_-]*)")

GiB = 2**30


def gib(n: float) -> str:
    """``n`` bytes as GiB with two decimals (GiB = 2**30 bytes, as vLLM prints) and thousands separators
    (``12,207.03 GiB``: one request of 100M tokens), as kvlint writes token counts."""
    return f"{n / GiB:,.2f} GiB"


@dataclass(frozen=True)
class RuleContext:
    """One rule checking one serving container.

    Attributes:
        rule: the rule's catalogue entry (id, severity, parameters...).
        cr: everything the pipeline resolved about the container.
        options: the run's options (rule parameters set in ``.kvlint.yaml``, ``--min-concurrency``...).
        layout: the engine's GPU workers as its flags declare them.
        plan_withdrawn: an earlier check found that the engine refuses this configuration before loading any
            weights (a rule with ``before_loading: true`` reported an error), so the memory plan describes a
            start-up that never happens: :attr:`plan` and :attr:`detail` are then None.
        serving: the parsed engine command (flags keyed by the engine's setting names), ``cr.serving``.
        engine: ``cr.serving.engine``.
        model, placement, workload, container: ``cr``'s.
        plan: the engine-neutral per-GPU memory plan, ``cr.plan`` (None when unknown or withdrawn).
        detail: the engine's own plan result (``VllmPlanDetail``, ``TgiPlanDetail``, ``SglangPlanDetail``),
            ``cr.plan_detail``, or None (unknown or withdrawn).

    The last eight are read from ``cr`` when the context is built (:func:`context_state`), not on each read: the
    checks read them about a hundred times a webhook review, and an attribute of the instance is read in C where a
    property was a Python call. They take no part in ``__init__``, equality or ``repr``.
    """

    rule: RuleInfo
    cr: ContainerResult
    options: Options
    layout: Parallelism
    plan_withdrawn: bool = False
    serving: ServingConfig = field(init=False, repr=False, compare=False)
    engine: str = field(init=False, repr=False, compare=False)
    model: ModelSpec | None = field(init=False, repr=False, compare=False)
    placement: Placement | None = field(init=False, repr=False, compare=False)
    workload: Workload = field(init=False, repr=False, compare=False)
    container: LDict = field(init=False, repr=False, compare=False)
    plan: MemoryPlan | None = field(init=False, repr=False, compare=False)
    detail: Any = field(init=False, repr=False, compare=False)

    def __init__(
        self,
        rule: RuleInfo,
        cr: ContainerResult,
        options: Options,
        layout: Parallelism,
        plan_withdrawn: bool = False,
    ) -> None:
        # The fields are stored in the instance's __dict__ at once (context_state, as the runner builds its one
        # context per container) instead of through the frozen dataclass's generated __init__ (one
        # object.__setattr__ per field, about twice the cost). Assigning an attribute afterwards still raises
        # FrozenInstanceError; equality, repr and fields() are the dataclass's.
        self.__dict__.update(context_state(rule, cr, options, layout, plan_withdrawn))

    # ---- what the pipeline resolved -------------------------------------------------------------

    @property
    def where(self) -> str:
        """The GPU the pod lands on and what decided it, for messages (``NVIDIA L4 (nodeSelector ...)``)."""
        p = self.placement
        if p is None or p.accelerator is None:
            return "the GPU"
        return f"{p.accelerator.name} ({p.how})"

    # ---- parameters ------------------------------------------------------------------------------

    def param(self, name: str, rule: str | None = None) -> Any:
        """Parameter ``name`` of this rule (or of ``rule``): ``.kvlint.yaml``/command line, else the catalogue
        default. Raises KeyError when the rule has no such parameter (a programming error)."""
        return self.options.param(rule or self.rule.id, name)

    # ---- diagnostics -----------------------------------------------------------------------------

    def finding(
        self,
        message: str,
        loc: Loc | None = None,
        fix: str = "",
        severity: Severity | None = None,
        *,
        summary: str = "",
        setting: str = "",
    ) -> Diagnostic:
        """A diagnostic of this rule on this container; ``loc`` defaults to the engine command's position
        (else the container's, else the workload's); ``severity`` to the rule's catalogue severity.

        ``summary`` is the short statement reports lead with (default: the message's first clause, see
        :mod:`kvlint.statement`); ``setting`` the engine setting the finding is about (default: the flag
        written at ``loc``, else the first ``--flag`` the message names), part of the finding's fingerprint.
        A manifest value the message, fix or summary quotes whole is cut to
        :data:`~kvlint.statement.QUOTED_CHARS` characters (:func:`~kvlint.statement.clip_words`).
        """
        cr = self.cr
        return Diagnostic(
            rule=self.rule.id,
            severity=severity or self.rule.severity,
            message=clip_words(message),
            loc=loc or cr.serving.command_loc or cr.container.loc or cr.workload.loc,
            fix=clip_words(fix),
            object=cr.object_ref,
            container=cr.container_name,
            summary=clip_words(summary),
            setting=setting or setting_at(cr.serving, loc, message),
        )


def context_state(
    rule: RuleInfo | None, cr: ContainerResult, options: Options, layout: Parallelism, plan_withdrawn: bool
) -> dict[str, Any]:
    """The instance dict of ``RuleContext(rule, cr, options, layout, plan_withdrawn)``, every field in order
    (:class:`RuleContext` and the runner's one context per container build it from this). A plan withdrawn later
    sets ``plan_withdrawn`` True and ``plan`` and ``detail`` None (:func:`withdraw_plan`)."""
    serving = cr.serving
    return {
        "rule": rule,
        "cr": cr,
        "options": options,
        "layout": layout,
        "plan_withdrawn": plan_withdrawn,
        "serving": serving,
        "engine": serving.engine,
        "model": cr.model,
        "placement": cr.placement,
        "workload": cr.workload,
        "container": cr.container,
        "plan": None if plan_withdrawn else cr.plan,
        "detail": None if plan_withdrawn else cr.plan_detail,
    }


def withdraw_plan(state: dict[str, Any]) -> None:
    """Withdraw the plan in a :func:`context_state` dict: what ``plan_withdrawn=True`` builds."""
    state["plan_withdrawn"] = True
    state["plan"] = state["detail"] = None


def setting_at(serving: ServingConfig, loc: Loc | None, message: str) -> str:
    """The engine setting a finding at ``loc`` is about: the canonical name of the one flag written at ``loc``
    (``max_model_len``), else the first ``--flag`` named in ``message`` (as written, dashes turned to
    underscores), else ``""``."""
    if loc is not None:
        # a position several settings share (the words of a script kvlint could not place one by one) names
        # none of them
        here = [name for name, value in serving.flags.items() if value.loc == loc]
        if serving.model is not None and serving.model.loc == loc:
            here.append("model")
        if len(here) == 1:
            return here[0]
    m = _FLAG.search(message) if "--" in message else None  # (no flag without its two dashes)
    return m.group(1).replace("-", "_") if m else ""
