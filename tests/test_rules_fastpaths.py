"""The rule runner's and the text report's fast paths (issue 19) against the general code they replace.

Each fast path must answer exactly what the general path answers; these tests run both on the real inputs
(the shared corpus and the project's fixtures) and on generated ones:

* :func:`kvlint.rules.runner.check_container`: the checks filtered once per (engine, selection, joined
  worker, available inputs) and the ``before_loading`` gate tested on each rule's own findings, against the
  per-container loop it replaced (written out below), on every serving container of the corpus and fixtures
  and on variants of them with inputs taken away (no plan, no model, no GPU...).
* :class:`kvlint.rules.context.RuleContext`: its own ``__init__`` against the frozen dataclass's.
* :func:`kvlint.rules.catalog.get_rule` reading the shared catalogue.
* KV409's memoised closest GPU resource name against :func:`difflib.get_close_matches`.
* KV501's "configured fleet" against :meth:`Site.fleet_accelerators`.
* KV406's read of the memory limit after the pinned sum (the limit it would compare is never 0 or less).
* :func:`kvlint.rules.families.capacity.fitting_max_model_len` planning vLLM's estimate only where it can lower
  the start or is quoted, against the search that planned it first.
* :func:`kvlint.statement.split_clauses` stopping at the last ``"; "``, :func:`kvlint.statement.split_message`
  finding the first clause's asides in the same scan, and :func:`kvlint.report.escape.printable` returning
  printable ASCII as it is, against the full scans.
"""

from __future__ import annotations

import dataclasses
import difflib
import random
import re
import weakref
from pathlib import Path
from typing import Any

import pytest

from kvlint.engines.layout import parallelism
from kvlint.options import Options
from kvlint.rules import runner
from kvlint.rules.catalog import get_rule, load_catalog
from kvlint.rules.context import RuleContext
from kvlint.rules.registry import registry
from kvlint.types import CheckResult, ContainerResult, Diagnostic

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------------------
# the runner


def _reference_check_container(
    cr: ContainerResult, options: Options, rules: frozenset[str] | None = None
) -> list[Diagnostic]:
    """check_container as it was before issue 19: every scheduled check's ``consumes`` tested per container,
    the gate tested after every check."""
    diags = [d for d in runner._parser_findings(cr, None) if rules is None or d.rule in rules]
    withdrawn = False
    if diags:
        catalog = load_catalog()
        withdrawn = any(runner._gates(catalog[d.rule], diags) for d in diags if d.rule in catalog)
    have = runner.available_inputs(cr)
    joins = cr.serving.joins
    layout = parallelism(
        joins.leader if joins is not None and joins.leader is not None else cr.serving,
        gpus=cr.placement.gpus if cr.placement else None,
        ray_kind=cr.workload.kind.lower().startswith("ray"),
    )
    engine = cr.serving.engine
    reg = registry()
    follower = joins is not None and joins.follower
    for rule_id, info, needs, uses_plan in runner._schedule(
        engine, rules, joins is not None, follower=follower
    ):
        if uses_plan and withdrawn:
            continue
        if not needs <= have:
            continue
        ctx = RuleContext(info, cr, options, layout, plan_withdrawn=withdrawn)
        found = list(reg[rule_id][engine].function(ctx))
        diags.extend(found)
        if runner._gates(info, found):
            withdrawn = True
    return diags


@pytest.fixture(scope="module")
def real_containers(fixtures_and_corpus_check: CheckResult) -> list[tuple[ContainerResult, Options]]:
    """Every serving container of the session's run of the shared corpus (when present) and every fixture
    directory, with the options it was checked with (``Options(allow_hub=False)``)."""
    found = [(cr, Options(allow_hub=False)) for cr in fixtures_and_corpus_check.containers]
    assert len(found) > 50
    return found


def _variants(cr: ContainerResult, rng: random.Random) -> list[ContainerResult]:
    """``cr`` with inputs taken away, so other sets of available inputs (and gates) are met."""
    out = [
        dataclasses.replace(cr, plan=None, plan_detail=None),
        dataclasses.replace(cr, model=None, plan=None, plan_detail=None),
    ]
    if cr.placement is not None:
        out.append(dataclasses.replace(cr, placement=None, plan=None, plan_detail=None))
        out.append(
            dataclasses.replace(
                cr,
                placement=dataclasses.replace(cr.placement, accelerator=None, candidates=()),
                plan=None,
                plan_detail=None,
            )
        )
        out.append(dataclasses.replace(cr, placement=dataclasses.replace(cr.placement, gpus=None)))
    return rng.sample(out, k=min(2, len(out)))


def _same(a: list[Diagnostic], b: list[Diagnostic]) -> bool:
    return [d.as_dict() for d in a] == [d.as_dict() for d in b]


def test_check_container_matches_the_per_container_loop(
    real_containers: list[tuple[ContainerResult, Options]],
) -> None:
    rng = random.Random(19)
    plan = runner.plan_rules()
    seen_inputs = set()
    for cr, options in real_containers:
        for case in [cr, *_variants(cr, rng)]:
            seen_inputs.add(runner.available_inputs(case))
            try:
                expected = _reference_check_container(case, options)
            except Exception as exc:  # a variant a check does not expect: both paths must raise alike
                with pytest.raises(type(exc)):
                    runner.check_container(case, options)
                continue
            assert _same(runner.check_container(case, options), expected), case.object_ref
            assert _same(
                runner.check_container(case, options, rules=plan),
                _reference_check_container(case, options, plan),
            )
    assert len(seen_inputs) >= 5  # the variants reached several sets of available inputs


def test_runnable_is_the_schedule_filtered_by_the_inputs() -> None:
    import itertools

    vocabulary = ["pod", "command", "gpus", "model", "gpu", "plan"]
    for engine in ("vllm", "tgi", "sglang"):
        for joined in (False, True):
            for rules in (None, runner.plan_rules(), frozenset({"KV005", "KV403", "KV104"})):
                schedule = runner._schedule(engine, rules, joined)
                for n in range(len(vocabulary) + 1):
                    for have in map(frozenset, itertools.combinations(vocabulary, n)):
                        expected = tuple((r, i, p) for r, i, needs, p in schedule if needs <= have)
                        assert runner._runnable(engine, rules, joined, have) == expected
                        assert runner._runnable(engine, rules, joined, have) is runner._runnable(
                            engine, rules, joined, have
                        )


def test_rule_context_init_is_the_dataclass_one(
    real_containers: list[tuple[ContainerResult, Options]],
) -> None:
    cr, options = real_containers[0]
    info = get_rule("KV403")
    layout = parallelism(cr.serving)
    ctx = RuleContext(info, cr, options, layout, plan_withdrawn=True)
    names = [f.name for f in dataclasses.fields(RuleContext)]
    assert list(vars(ctx)) == names
    assert [getattr(ctx, n) for n in names] == [info, cr, options, layout, True] + [
        cr.serving,
        cr.serving.engine,
        cr.model,
        cr.placement,
        cr.workload,
        cr.container,
        None,  # plan and detail: withdrawn
        None,
    ]
    built = RuleContext(info, cr, options, layout)
    assert (built.plan, built.detail) == (cr.plan, cr.plan_detail)
    assert RuleContext(info, cr, options, layout).plan_withdrawn is False
    assert ctx == RuleContext(info, cr, options, layout, True)
    assert ctx != RuleContext(info, cr, options, layout, False)
    assert repr(ctx).startswith("RuleContext(rule=RuleInfo(")
    for name in names:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ctx, name, None)
    assert dataclasses.replace(ctx, plan_withdrawn=False) == RuleContext(info, cr, options, layout)
    assert ctx.plan is None and ctx.detail is None  # withdrawn


def test_get_rule_reads_the_catalogue() -> None:
    catalog = load_catalog()
    for rule_id, info in catalog.items():
        assert get_rule(rule_id) is info
        assert get_rule(f" {rule_id.lower()} ") is info
    with pytest.raises(KeyError, match="unknown rule id"):
        get_rule("KV999")
    catalog.clear()  # load_catalog still hands out copies: clearing one leaves get_rule's alone
    assert get_rule("KV104").id == "KV104"


# ---------------------------------------------------------------------------------------------------------
# rule bodies


def test_kv409_closest_gpu_resource_is_difflib() -> None:
    from kvlint.accelerators.placement import GPU_RESOURCES
    from kvlint.gpu_resources import ASCEND_NPU_RESOURCES
    from kvlint.rules.families.parallelism import _close_gpu_resource

    # the Ascend NPUs' names are not candidates: their plugins advertise many close names that are not typos
    candidates = [r for r in GPU_RESOURCES if r not in ASCEND_NPU_RESOURCES]

    rng = random.Random(409)
    names = [
        "vke.volcengine.com/rdma",
        "vpc.amazonaws.com/efa",
        "rdma/roce_gdr",
        "nvidia.com/gpus",
        "nvidia/gpu",
        "amd.com/gpus",
        "gpu",
        "",
        "google.com/tpus",
        "habana.ai/gaudi2",
    ]
    names += [r.upper().lower() for r in GPU_RESOURCES]
    for _ in range(3000):
        base = rng.choice(list(GPU_RESOURCES)) if rng.random() < 0.6 else ""
        chars = list(base)
        for _ in range(rng.randint(0, 4)):  # typos: drop, add, swap letters
            k = rng.randint(0, max(0, len(chars) - 1))
            op = rng.random()
            if op < 0.4 and chars:
                del chars[k]
            elif op < 0.8:
                chars.insert(k, rng.choice("abcdefgimnortuv./-_0123"))
            elif len(chars) > 1:
                chars[k - 1], chars[k] = chars[k], chars[k - 1]
        names.append("".join(chars))
    for name in names:
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.8)
        assert _close_gpu_resource(name) == (close[0] if close else None), name
        assert _close_gpu_resource(name) == (close[0] if close else None), name  # memoised answer


def test_kv501_configured_fleet_is_fleet_accelerators() -> None:
    from kvlint.accelerators.site import Site

    for fleet in [(), ("nvidia-l4",), ("no-such-gpu",), ("nvidia-l4", "nvidia-h100-sxm5-80gb"), ("",)]:
        site = Site(fleet=fleet)
        assert bool(site.fleet) is site.fleet_accelerators()[1], fleet


def test_kv501_without_a_site_reads_the_shared_empty_site(real_containers) -> None:
    """KV501 reads :data:`kvlint.accelerators.site.NO_SITE` when the run has no site: it equals ``Site()``, and
    every serving container's KV501 findings are those of a run given ``Site()`` itself."""
    from kvlint.accelerators.site import NO_SITE, Site

    assert (
        NO_SITE == Site() and not NO_SITE.accelerators and not NO_SITE.node_labels and not NO_SITE.node_names
    )
    fleet_verdicts = 0
    for cr, options in real_containers:
        assert options.site is None
        with_site = dataclasses.replace(options, site=Site())
        mine = [d for d in runner.check_container(cr, options) if d.rule == "KV501"]
        assert mine == [d for d in runner.check_container(cr, with_site) if d.rule == "KV501"]
        fleet_verdicts += any("planned on" in d.message for d in mine)
    assert fleet_verdicts > 0


def test_kv406_memory_limit_is_positive_when_read() -> None:
    # KV406 returns without reading the limit when nothing is pinned: memory_limit() never answers a limit
    # of 0 bytes or less, which "0 <= limit" would have kept quiet about anyway.
    from kvlint.rules.facts import memory_limit
    from kvlint.source import LDict

    values: list[Any] = [
        "0",
        "0Gi",
        "-1Gi",
        "1",
        "1Ki",
        "16Gi",
        "1.5G",
        "500m",
        "abc",
        0,
        -5,
        3.5,
        None,
        "",
        "1e3",
    ]
    for v in values:
        found = memory_limit(LDict({"resources": LDict({"limits": LDict({"memory": v})})}))
        assert found is None or found[0] > 0, v


# ---------------------------------------------------------------------------------------------------------
# the text report


_REFERENCE_DELIMITER = re.compile(r"[()\[\]']|; ")
_REFERENCE_PAREN_OR_QUOTE = re.compile(r"[()']")


def _reference_split_clauses(message: str) -> list[str]:
    """split_clauses scanning the whole message (as before issue 19)."""
    if "; " not in message:
        return [message.strip()] if message.strip() else []
    parts: list[str] = []
    depth = 0
    quote = False
    cur = 0
    for m in _REFERENCE_DELIMITER.finditer(message):
        ch, i = m.group(), m.start()
        if quote:
            quote = ch != "'"
        elif ch == "'":
            quote = i == 0 or not message[i - 1].isalnum()
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            if depth:
                depth -= 1
        elif depth == 0:
            parts.append(message[cur:i].strip())
            cur = i + 2
    parts.append(message[cur:].strip())
    return [p for p in parts if p]


def _reference_top_level_spans(text: str) -> list[tuple[int, int]]:
    """Every top-level ``(...)`` group of ``text``, outside quotes (the scan split_message made of its first
    clause before issue 19, in a pass of its own)."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    quote = False
    for m in _REFERENCE_PAREN_OR_QUOTE.finditer(text):
        ch, i = m.group(), m.start()
        if quote:
            quote = ch != "'"
            continue
        if ch == "'":
            quote = i == 0 or not text[i - 1].isalnum()
        elif ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


def _reference_split_message(message: str, summary: str = "") -> tuple[str, list[str]]:
    """split_message as before issue 19: the clauses, then a second scan of the first one for its groups,
    and the statement's whitespace always joined again."""
    from kvlint.statement import ASIDE_CHARS

    clauses = _reference_split_clauses(message) or [message]
    if summary:
        return summary, clauses
    first, rest = clauses[0], clauses[1:]
    asides: list[str] = []
    kept: list[str] = []
    pos = 0
    for a, b in _reference_top_level_spans(first):
        if b - a > ASIDE_CHARS:
            kept.append(first[pos:a])
            asides.append(first[a + 1 : b - 1].strip())
            pos = b
    kept.append(first[pos:])
    statement = " ".join("".join(kept).split())
    statement = statement.replace(" ,", ",").replace(" :", ":").replace(" ;", ";")
    return statement, asides + rest


@pytest.fixture(scope="module")
def corpus_messages(fixtures_and_corpus_check: CheckResult) -> list[str]:
    """The messages, remedies and object names of the session's run of the shared corpus (when present) and
    every fixture directory."""
    return [t for d in fixtures_and_corpus_check.diagnostics for t in (d.message, d.fix, d.object) if t]


def _generated_texts(rng: random.Random, n: int) -> list[str]:
    pieces = [
        "; ",
        ";",
        " ",
        "(",
        ")",
        "[",
        "]",
        "'",
        "a",
        "model's",
        "x'",
        "--max-model-len",
        "7.5",
        "\t",
        ",",
        "é",
    ]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def test_split_clauses_matches_the_full_scan(corpus_messages: list[str]) -> None:
    from kvlint.statement import split_clauses

    texts = corpus_messages + _generated_texts(random.Random(56), 20000)
    for text in texts:
        assert split_clauses(text) == _reference_split_clauses(text), text


def _long_aside_texts(rng: random.Random, n: int) -> list[str]:
    """Texts with groups on both sides of :data:`~kvlint.statement.ASIDE_CHARS` (nested, quoted, unclosed,
    in the first clause or after empty ones) and the whitespace the statement's join normalises."""
    pieces = [
        "; ",
        ";",
        " ",
        "  ",
        "(",
        ")",
        "[",
        "]",
        "'",
        "x'",
        "model's",
        "word",
        "a" * 17,
        "b" * 39,
        " ,",
        " :",
        " ;",
        "\t",
        "\n",
        "\u00a0",
        "\u2003",
        "é",
    ]
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_split_message_matches_the_two_scans(corpus_messages: list[str]) -> None:
    # split_message finds the first clause's long groups in the scan that cuts the clauses, and returns a
    # printable statement without splitting and joining it again; the answer must be the reference's
    from kvlint.statement import split_message, statement_of

    rng = random.Random(19)
    texts = corpus_messages + _generated_texts(rng, 10000) + _long_aside_texts(rng, 30000)
    texts += [
        " ",
        "; ",
        " ; ; ",
        "(" + "x" * 45 + "); y",
        "; (" + "x" * 45 + ") z; w",
        "a ; (b" + "c" * 50 + ")",
    ]
    for text in texts:
        reference = _reference_split_message(text)
        assert split_message(text) == reference, text
        assert statement_of(text) == reference[0], text  # the first clause read alone
        assert split_message(text, "short") == _reference_split_message(text, "short"), text
        assert statement_of(text, "short") == "short"
    # the generated texts do reach the asides: many have a long group moved out of the first clause
    asides = [t for t in texts if len(_reference_split_message(t)[1]) > len(_reference_split_clauses(t)) - 1]
    assert len(asides) > 1000


_UNPRINTABLE_REFERENCE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)


def test_printable_matches_the_full_substitution(corpus_messages: list[str]) -> None:
    from kvlint.report.escape import _escape, printable

    rng = random.Random(46)
    alphabet = [chr(c) for c in range(0x00, 0x100)] + [
        "\u2028",
        "\u202e",
        "\u2066",
        "\udcff",
        "\ufffe",
        "é",
        "€",
    ]
    texts = corpus_messages + ["", "plain text", "tab\there", "nl\nhere", "\x1b[31m", "del\x7f"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    texts += ["".join(chr(rng.randint(0x20, 0x7E)) for _ in range(rng.randint(0, 40))) for _ in range(5000)]
    for text in texts:
        assert printable(text) == _UNPRINTABLE_REFERENCE.sub(lambda m: _escape(m.group(0)), text), repr(text)


def test_runner_contexts_are_the_ones_rulecontext_builds(real_containers, monkeypatch) -> None:
    """check_container gives a container's checks one RuleContext, its rule (and plan_withdrawn) set before each
    check: during its call every check must see what ``RuleContext(info, cr, options, layout, plan_withdrawn)``
    builds in the reference loop (the same fields, the plan withdrawn after a gating error and not before), still
    frozen; and nothing the checks return keeps it (it is freed when the runner returns)."""
    from kvlint.rules.registry import Check

    seen: list[tuple[str, RuleContext]] = []
    live: list[weakref.ref[RuleContext]] = []
    for rule_id, by_engine in list(registry().items()):
        for engine, chk in list(by_engine.items()):

            def spy(ctx: RuleContext, _fn: Any = chk.function, _id: str = rule_id) -> Any:
                rule, withdrawn = ctx.rule, ctx.plan_withdrawn
                seen.append((_id, dataclasses.replace(ctx)))  # the context as the check sees it
                if not live or live[-1]() is not ctx:
                    live.append(weakref.ref(ctx))
                found = list(_fn(ctx))
                assert (ctx.rule, ctx.plan_withdrawn) == (rule, withdrawn)  # unchanged while the check runs
                # every field, those read from cr included, as RuleContext(...) builds it
                assert type(ctx) is RuleContext and vars(ctx) == vars(dataclasses.replace(ctx))
                with pytest.raises(dataclasses.FrozenInstanceError):
                    ctx.plan_withdrawn = False  # type: ignore[misc]
                return found

            monkeypatch.setitem(by_engine, engine, Check(chk.rule, chk.engine, spy))
    withdrawn = 0
    for cr, options in real_containers:
        seen.clear()
        live.clear()
        got = runner.check_container(cr, options)
        mine = list(seen)
        assert len(live) <= 1 and all(ref() is None for ref in live)  # one context, kept by no finding
        seen.clear()
        assert got == _reference_check_container(cr, options)
        assert [(r, c) for r, c in mine] == seen
        withdrawn += any(c.plan_withdrawn for _, c in mine)
    assert withdrawn > 0


# ---------------------------------------------------------------------------------------------------------
# the capacity remedies' max-model-len search


def _reference_fitting_max_model_len(ctx: RuleContext, min_concurrency: float, below: int | None) -> Any:
    """fitting_max_model_len as it was before issue 19's lazy estimate: vLLM's estimate planned first, always
    (written out; the search itself is capacity's)."""
    from kvlint.memory.stage import plan_settings
    from kvlint.memory.vllm import VllmPlanDetail, largest_fitting_max_model_len
    from kvlint.rules.families import capacity as cap
    from kvlint.rules.remedies import MIN_USEFUL_MAX_MODEL_LEN, descending_fitting, replanned

    cr, plan = ctx.cr, ctx.plan
    if plan is None or plan.kv_bytes_per_token <= 0 or plan.num_blocks <= 0:
        return None
    engine_estimate = 0
    acc = cr.placement.accelerator if cr.placement else None
    if cr.settings is not None and cr.model is not None and acc is not None and cr.placement is not None:
        try:
            engine_estimate = int(
                largest_fitting_max_model_len(
                    cr.settings,
                    cr.model,
                    cr.placement.memory_bytes or 0,
                    gpu_name=acc.name,
                    compute_capability=acc.compute_capability,
                    plan=lambda s: plan_settings(cr, s),
                )
            )
        except Exception:
            engine_estimate = 0
    low_tokens = plan.num_blocks_low * plan.block_size if plan.block_size else plan.capacity_tokens
    start = int(min(low_tokens, plan.capacity_tokens / max(min_concurrency, 1e-9)))
    if engine_estimate > 0:
        start = min(start, engine_estimate)
    start = min(start, (below if below is not None else plan.max_model_len) - 1)
    if start >= 2048:
        start = start // 1024 * 1024
    elif plan.block_size:
        start = start // plan.block_size * plan.block_size
    if start < MIN_USEFUL_MAX_MODEL_LEN:
        return None

    def step_down(cand: int) -> int:
        cand -= max(plan.block_size or 16, cand // 16)
        return cand // 1024 * 1024 if cand >= 2048 else cand

    band = cap._band(ctx)
    found = descending_fitting(
        start,
        step_down,
        lambda n: replanned(cr, max_model_len=n) if n >= MIN_USEFUL_MAX_MODEL_LEN else None,
        lambda d: cap._fits(d.plan, min_concurrency, band),
    )
    if found is None or not isinstance(found[1], VllmPlanDetail):
        return None
    return found[0], found[1], engine_estimate


def test_fitting_max_model_len_plans_the_estimate_only_where_it_counts(
    real_containers: list[tuple[ContainerResult, Options]], monkeypatch
) -> None:
    """The search answers what it answered with vLLM's estimate planned first (the same length, plan and quoted
    estimate), for both aims and for lengths below the current one and above it; and when the container's
    settings fit at the start, the estimate's full-length plan is not made unless read."""
    from kvlint.memory import vllm
    from kvlint.rules.families import capacity as cap

    info = get_rule("KV104")
    calls: list[int] = []
    real = vllm.largest_fitting_max_model_len

    def counting(*a: Any, **k: Any) -> int:
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(cap, "largest_fitting_max_model_len", counting)
    compared = found = skipped = 0
    for cr, options in real_containers:
        if cr.serving.engine != "vllm" or cr.plan is None:
            continue
        ctx = RuleContext(info, cr, options, parallelism(cr.serving))
        for min_c in (1.0, 2.0, 8.0):
            for below in (None, 2049, 4097, 32769, 10**7):
                want = _reference_fitting_max_model_len(ctx, min_c, below)
                calls.clear()
                got = cap.fitting_max_model_len(ctx, min_c, below)
                planned_estimate = bool(calls)
                compared += 1
                if want is None:
                    assert got is None
                    skipped += not planned_estimate
                    continue
                assert got is not None
                assert (got.tokens, got.detail) == want[:2]
                assert got.engine_estimate == want[2]
                found += 1
    assert compared >= 100 and found >= 10 and skipped >= 1


def test_gpu_request_problem_for_equal_and_unequal_requests() -> None:
    """KV405's request/limit test: a request written as its limit (same value, or an equal quantity of another
    type) is accepted, an unreadable pair is left to the other branch, a request without a limit warns and one
    differing from its limit is an error."""
    from kvlint.rules.families.parallelism import _gpu_request_problem
    from kvlint.source import LDict

    def res(req: object, lim: object | None) -> LDict:
        r = LDict({"requests": LDict({"nvidia.com/gpu": req})})
        if lim is not None:
            r["limits"] = LDict({"nvidia.com/gpu": lim})
        return LDict({"resources": r})

    for req, lim in ((1, 1), ("1", "1"), ("1", 1), (2, "2"), ("x", "x"), ("x", "y"), ("1.5", "1.5")):
        assert _gpu_request_problem(res(req, lim), "nvidia.com/gpu") is None, (req, lim)
    warn = _gpu_request_problem(res(1, None), "nvidia.com/gpu")
    assert warn is not None and warn[2] == "warning"
    for req, lim in ((2, 1), ("2", "1"), ("1", 2)):
        err = _gpu_request_problem(res(req, lim), "nvidia.com/gpu")
        assert err is not None and err[2] == "error" and "differs from its limit" in err[0], (req, lim)


def test_kv005_pod_spec_keys_against_the_per_key_lookup(tmp_path: Path) -> None:
    """KV005's pod spec part passes a PodSpec whose keys are all fields with one keys-subset test: the keys it
    reports are those the per-key lookup (:func:`kvlint.workloads.fields.unknown_fields`) finds in the PodSpec
    without its container lists, with the same guess, and none for a PodSpec of fields only."""
    from kvlint.pipeline import run_check
    from kvlint.workloads.fields import unknown_fields

    container = (
        "      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n"
        "        args: [--model, Qwen/Qwen2.5-7B-Instruct]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    cases = {
        "fields": "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      initContainers: [{name: init, image: busybox}]\n",
        "typos": "      nodeSelectr: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      restartPolcy: Always\n      $patch: replace\n      hostIPC: true\n      zzz: 1\n",
    }
    for name, pod_keys in cases.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
            f"{pod_keys}      containers:\n{container}"
        )
        result = run_check([str(path)], Options(allow_hub=False))
        got = [d.message.split("'")[1] for d in result.diagnostics if d.rule == "KV005"]
        (cr,) = result.containers
        pod = cr.workload.pod_spec
        pod_only = {k: v for k, v in pod.items() if k not in ("containers", "initContainers")}
        want = [k for k, _ in unknown_fields(pod_only, "V1PodSpec")]
        assert got == want == ([] if name == "fields" else ["nodeSelectr", "restartPolcy", "zzz"])
        guesses = [d.fix for d in result.diagnostics if d.rule == "KV005"]
        assert (
            guesses[:2]
            == ["rename 'nodeSelectr' to 'nodeSelector'", "rename 'restartPolcy' to 'restartPolicy'"][
                : len(guesses)
            ]
        )
