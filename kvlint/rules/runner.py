"""The rule runner: which checks run for a serving container, decided by the catalogue.

For a container of engine E, :func:`check_container` reports the engine parser's findings (KV205-KV207 and
any KV503), then runs every registered check whose rule declares E (``engines:``, ``any`` = all three) and
whose ``consumes:`` are all available for the container:

* ``pod`` -- the container comes from a Kubernetes object (not ``kvlint plan``'s bare command line);
* ``command`` -- the engine's command was read (it names a model or sets at least one option);
* ``gpus`` -- its GPU count is known (a GPU limit, or ``kvlint plan --gpus``);
* ``model`` -- the model's config.json was resolved;
* ``gpu`` -- the accelerator it lands on is known;
* ``plan`` -- the engine's memory plan exists.

Checks that consume the plan run last, those marked ``before_loading: true`` first among them (KV209 prices the
model runner's buffers with the plan and stops the engine before the capacity rules' start-up). Once a rule
marked ``before_loading: true`` has reported an error (the engine refuses the configuration before loading any
weights), the plan is withdrawn for the container: the capacity rules would describe a start-up that never
happens. Rule selection and severity overrides are
applied later, by the pipeline, to every rule alike.
"""

from __future__ import annotations

from kvlint.engines.layout import parallelism
from kvlint.fastinit import replaced
from kvlint.options import Options
from kvlint.rules.catalog import RuleInfo, load_catalog, severity_of
from kvlint.rules.context import RuleContext, context_state, withdraw_plan
from kvlint.rules.registry import Check, checks_for, registry
from kvlint.statement import clip_words
from kvlint.types import ContainerResult, Diagnostic, Finding, OptionFinding

__all__ = ["available_inputs", "check_container", "finding_to_diagnostic", "plan_rules"]


def finding_to_diagnostic(f: Finding, obj: str = "", container: str = "") -> Diagnostic:
    """A stage's :class:`~kvlint.types.Finding` as a :class:`~kvlint.types.Diagnostic` with the rule's
    catalogue severity (unless the finding sets its own); a manifest value its message or fix quotes whole
    is cut to :data:`~kvlint.statement.QUOTED_CHARS` (:func:`~kvlint.statement.clip_words`)."""
    return Diagnostic(
        rule=f.rule,
        severity=f.severity or severity_of(f.rule),
        message=clip_words(f.message),
        loc=f.loc,
        fix=clip_words(f.fix),
        object=obj,
        container=container,
        mark=f.mark,
        stands_for=f.stands_for,
    )


def available_inputs(cr: ContainerResult) -> frozenset[str]:
    """What the pipeline resolved for ``cr``, in the catalogue's ``consumes`` vocabulary."""
    have = set()
    if cr.workload.kind:
        have.add("pod")
    joins = cr.serving.joins
    if cr.serving.model is not None or cr.serving.flags or (joins is not None and joins.leader is not None):
        have.add("command")
    p = cr.placement
    if p is not None and p.gpus is not None:
        have.add("gpus")
    if cr.model is not None:
        have.add("model")
    if p is not None and p.accelerator is not None:
        have.add("gpu")
    if cr.plan is not None:
        have.add("plan")
    return frozenset(have)


def unknown_option_set(cr: ContainerResult) -> str | None:
    """The build a container runs when kvlint knows neither its memory nor its option set, as messages name it
    (``Intel Gaudi``), else None: the container is not sized because it is not on, or not built for, an NVIDIA
    or AMD GPU (:func:`kvlint.engines.images.unsized_whatever_model`), and its image is not one of an engine's own
    release images (:func:`kvlint.engines.images.engine_of_image`: ``vllm/vllm-tpu``, TGI's ``-gaudi`` tags are).
    Such a build may carry a vendor's fork of the engine whose command line has options of its own, which
    kvlint's tables (read from the upstream engine's releases) do not hold: HabanaAI/vllm-fork's
    ``--weights-load-device`` (``EngineArgs.add_cli_args`` in ``vllm/engine/arg_utils.py``@00aacb0967cb), which
    HabanaAI's Gaudi tutorial Deployment gives the fork it clones (``-b v0.7.2+Gaudi-1.21.0``) into a
    ``vault.habana.ai/gaudi-docker`` PyTorch image."""
    from kvlint.engines.images import Unsized, engine_of_image, platform_of, unsized_whatever_model
    from kvlint.wording import platform_name

    s = cr.serving
    if (s.image and engine_of_image(s.image) is not None) or unsized_whatever_model(
        s, cr.placement
    ) is not Unsized.NOT_A_GPU:
        return None
    p = cr.placement
    acc = p.accelerator if p is not None else None
    if acc is not None and acc.vendor not in ("nvidia", "amd"):
        return acc.name
    platform = platform_of(s, p.resource if p is not None else None)
    return platform_name(platform) if platform not in ("cuda", "rocm") else None


def _parser_findings(cr: ContainerResult, rules: frozenset[str] | None) -> list[Diagnostic]:
    """The engine parser's findings as diagnostics (only ``rules`` when given). An unknown option (KV205) of a
    build whose option set kvlint does not know (:func:`unknown_option_set`) is a warning, not an error: it may
    be the vendor fork's own option."""
    findings = cr.serving.findings
    if not findings:
        return []
    worker = cr.workload.role in ("worker", "head") or cr.workload.kind.lower().startswith("ray")
    out = []
    fork: str | None | bool = False  # (not looked up yet)
    for f in findings:
        if rules is not None and f.rule not in rules:
            continue
        d = finding_to_diagnostic(f, cr.object_ref, cr.container_name)
        if f.rule == "KV503" and worker and cr.serving.model is None and d.severity == "warning":
            # Ray / LeaderWorkerSet workers run `ray start`; the engine command lives in the leader/head.
            d = replaced(d, severity="info")
        elif f.rule == "KV205" and d.severity == "error" and _unknown_option(f):
            if fork is False:
                fork = unknown_option_set(cr)
            if fork:
                d = replaced(
                    d,
                    severity="warning",
                    message=clip_words(
                        f"{f.message} (on this {fork} build, which kvlint does not size, the engine may be a "
                        "vendor's fork with options of its own; kvlint knows the upstream engine's)"
                    ),
                    fix=clip_words(
                        f"nothing to change if the build's engine has it (check its --help); otherwise {f.fix}"
                        if f.fix
                        else "nothing to change if the build's engine has it (check its --help)"
                    ),
                )
        out.append(d)
    return out


def _unknown_option(f: Finding) -> bool:
    """Whether a KV205 finding is about options the engine's parser does not have: one
    (:attr:`~kvlint.types.OptionFinding.unknown`), or those past the command line's bound that one finding
    stands for (:func:`kvlint.engines.options.cap_unknown_options`, a plain Finding)."""
    return bool(getattr(f, "unknown", False)) or (
        # "N more unknown options: ...", "1 more unknown option: ..."
        not isinstance(f, OptionFinding)
        and (" more unknown options: " in f.message or " more unknown option: " in f.message)
    )


def _gates(rule: RuleInfo, diags: list[Diagnostic]) -> bool:
    return rule.before_loading and any(d.rule == rule.id and d.severity == "error" for d in diags)


def check_container(
    cr: ContainerResult, options: Options, *, rules: frozenset[str] | None = None
) -> list[Diagnostic]:
    """Every rule for one serving container: its diagnostics, unsorted, before rule selection.

    Args:
        cr: what the pipeline resolved for the container (parsed command, model, placement, plan).
        options: the run's options (rule parameters).
        rules: when given, only these rule ids are checked (``kvlint plan`` passes :func:`plan_rules`).

    Raises :class:`~kvlint.rules.registry.RegistryError` or :class:`~kvlint.rules.catalog.CatalogError` only
    for a broken installation; a check that raises on an unexpected input shape propagates to the pipeline,
    which reports it as KV503 for this workload.
    """
    diags = _parser_findings(cr, rules)
    withdrawn = False
    if diags:
        catalog = load_catalog()
        withdrawn = any(_gates(catalog[d.rule], diags) for d in diags if d.rule in catalog)
    joins = cr.serving.joins
    layout = parallelism(
        joins.leader if joins is not None and joins.leader is not None else cr.serving,
        gpus=cr.placement.gpus if cr.placement else None,
        ray_kind=cr.workload.kind.lower().startswith("ray"),
    )
    engine = cr.serving.engine
    reg = registry()
    # One RuleContext for the container's checks, built as RuleContext(info, cr, options, layout, withdrawn)
    # builds it (its fields set in its __dict__, no __init__ call), its rule set before each check and its
    # plan_withdrawn after a gating error: during its call each check sees the context RuleContext(...) would
    # build for it. A check uses its context only while it runs (its findings are made, and a generator of them
    # consumed, before the next check), so no finding keeps the rule of another (tests/test_rules_fastpaths.py).
    ctx = object.__new__(RuleContext)
    state = ctx.__dict__
    state.update(context_state(None, cr, options, layout, withdrawn))
    follower = joins is not None and joins.follower
    for rule_id, info, uses_plan in _runnable(
        engine, rules, joins is not None, available_inputs(cr), follower=follower
    ):
        if uses_plan and withdrawn:
            continue
        state["rule"] = info
        # the registered check is looked up now, not kept in the schedule (a test may swap it); its findings go
        # straight onto the container's list (most checks find nothing: no list of their own to build)
        n = len(diags)
        diags.extend(reg[rule_id][engine].function(ctx))
        if len(diags) > n and not withdrawn and _gates(info, diags[n:]):
            withdrawn = True
            withdraw_plan(state)
    return diags


#: A rule with a check, in run order: its id, catalogue entry, ``consumes`` and whether it consumes the plan.
_Scheduled = tuple[str, RuleInfo, frozenset[str], bool]
#: The schedules built so far, by (engine, rule selection, joined worker), with the registry they were
#: built from (a rebuilt registry rebuilds them).
_SCHEDULES: dict[tuple[str, frozenset[str] | None, bool, bool], tuple[object, tuple[_Scheduled, ...]]] = {}


def _schedule(
    engine: str, rules: frozenset[str] | None, joined: bool, *, follower: bool = False
) -> tuple[_Scheduled, ...]:
    """The rules whose checks :func:`check_container` runs, in order, for a container of ``engine`` (only
    ``rules`` when given; only :data:`JOINED_WORKER_RULES` for a worker that joins its leader's engine, only
    :data:`FOLLOWER_RULES` for a follower node that runs it, ``follower``): the
    checks that do not consume the plan, then those that do (those marked ``before_loading`` first: an error of
    theirs withdraws the plan from the others). This depends on the catalogue and the registry only, so it is
    decided once per (engine, selection, joined) and not again for every container; whether each check runs
    is still decided per container (its ``consumes`` against :func:`available_inputs`, the plan withdrawn)."""
    reg = registry()
    key = (engine, rules, joined, follower)
    built = _SCHEDULES.get(key)
    if built is not None and built[0] is reg:
        return built[1]
    catalog = load_catalog()
    checks: list[Check] = [c for c in checks_for(engine) if rules is None or c.rule in rules]
    if joined:
        # a multi-node worker that joins its leader's engine: only its GPUs (against the leader's layout) and
        # what is wrong with the pod itself are checked (kvlint.engines.multinode)
        keep = FOLLOWER_RULES if follower else JOINED_WORKER_RULES
        checks = [c for c in checks if c.rule in keep]
    ordered = [c for c in checks if "plan" not in catalog[c.rule].consumes]
    ordered += [c for c in checks if "plan" in catalog[c.rule].consumes and catalog[c.rule].before_loading]
    ordered += [
        c for c in checks if "plan" in catalog[c.rule].consumes and not catalog[c.rule].before_loading
    ]
    schedule = tuple(
        (c.rule, catalog[c.rule], frozenset(catalog[c.rule].consumes), "plan" in catalog[c.rule].consumes)
        for c in ordered
    )
    if len(_SCHEDULES) > 64:
        _SCHEDULES.clear()
    _SCHEDULES[key] = (reg, schedule)
    return schedule


#: The checks of a schedule whose ``consumes`` a container has: ``(rule id, catalogue entry, consumes the
#: plan)``, in run order.
_Runnable = tuple[tuple[str, RuleInfo, bool], ...]
#: The runnable checks by (engine, rule selection, joined worker, available inputs), with the schedule they
#: were filtered from (a rebuilt schedule refilters them). Keyed on what the ``consumes`` vocabulary says about
#: a container (at most 2**6 input sets per schedule), never on the container itself.
_RUNNABLE: dict[tuple[str, frozenset[str] | None, bool, bool, frozenset[str]], tuple[object, _Runnable]] = {}


def _runnable(
    engine: str, rules: frozenset[str] | None, joined: bool, have: frozenset[str], *, follower: bool = False
) -> _Runnable:
    """The checks of :func:`_schedule` whose ``consumes`` are all in ``have`` (:func:`available_inputs`), in
    run order: what :func:`check_container` runs for a container with those inputs until the plan is
    withdrawn (the one decision left per container)."""
    schedule = _schedule(engine, rules, joined, follower=follower)
    key = (engine, rules, joined, follower, have)
    built = _RUNNABLE.get(key)
    if built is not None and built[0] is schedule:
        return built[1]
    runnable = tuple(
        (rule_id, info, uses_plan) for rule_id, info, needs, uses_plan in schedule if needs <= have
    )
    if len(_RUNNABLE) > 512:
        _RUNNABLE.clear()
    _RUNNABLE[key] = (schedule, runnable)
    return runnable


#: The rules checked for a worker container that joins its leader's engine (``ServingConfig.joins``).
JOINED_WORKER_RULES = frozenset({"KV005", "KV403", "KV409"})

#: The rules checked for a follower node that runs the leader's engine itself (``JoinedEngine.follower``: vLLM
#: ``--headless``, SGLang ``--node-rank``): what is its own, its pod (manifest fields, GPU resource name and
#: limit, /dev/shm for its GPU workers, host memory, its probes' ports: KV408), its image and its GPUs against its
#: share of the group. The engine's settings, model and memory are the leader's and are reported there once.
FOLLOWER_RULES = JOINED_WORKER_RULES | frozenset({"KV208", "KV304", "KV404", "KV405", "KV406", "KV408"})


def plan_rules() -> frozenset[str]:
    """The rules that apply to a bare engine command line (``kvlint plan``): every rule with a check that does
    not consume a Kubernetes object, plus the parser's."""
    return frozenset(
        r.id
        for r in load_catalog().values()
        if r.phase == "parse" or (r.phase == "container" and "pod" not in r.consumes)
    )
