"""The vLLM plan's per-model, per-release and per-key memos answer what the general path answers.

* :func:`kvlint.memory.vllm.model_facts` restates the model's layers and config as the functions it replaces read
  them; :func:`~kvlint.memory.vllm.release_switches` the release predicates of :mod:`kvlint.memory.versions`.
* The scheduler limits, pool shapes and sampler paths memoised inside a plan equal the undecorated computation.
* Every vLLM plan of the fixtures' containers, on their own GPU and on every catalogue accelerator, computed with
  all memos full of the other plans' entries equals the same plan computed with every memo cleared (a memo key
  that confused two inputs would show here).
* :func:`kvlint.memory.stage.settings_delta`: settings with the same delta from the engine defaults plan the
  same, and values equal in Python but not to the models (``1`` and ``1.0``) stay apart.

Inputs: ../shared/corpus/manifests when present (sources in its INDEX.csv) and every fixtures/ subdirectory
(sources in their SOURCE.md files).
"""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Callable
from dataclasses import replace

import pytest

from kvlint.accelerators import registry as cat
from kvlint.memory import calibration as cal
from kvlint.memory import stage, vllm
from kvlint.memory import versions as ver
from kvlint.memory.kv import layer_bytes_per_token, layer_counts
from kvlint.memory.multimodal import encoder_profile, is_multimodal
from kvlint.memory.versions import ReleaseVersion, resolve_version
from kvlint.types import CheckResult, ContainerResult, LayerSpec, ModelSpec
from kvlint.values import parse_cc


@pytest.fixture(scope="module")
def containers(fixtures_and_corpus_check: CheckResult) -> list[ContainerResult]:
    """Every vLLM container with settings, a resolved model and a placement."""
    res = fixtures_and_corpus_check
    out = [
        cr
        for cr in res.containers
        if cr.serving.engine == "vllm"
        and isinstance(cr.settings, vllm.VllmSettings)
        and cr.model is not None
        and cr.placement is not None
    ]
    assert len(out) >= 30
    return out


@pytest.fixture(scope="module")
def one_per_model(containers: list[ContainerResult]) -> list[ContainerResult]:
    """The first container of each distinct model, in input order. The equivalence scans below make tens to
    hundreds of plans per container and GPU; the fixtures' ~500 vLLM containers serve ~180 models, and the
    containers of one model differ mostly in the flags those scans vary themselves (utilization, lengths),
    so one each keeps every model's shape at a third of the cost (the scans had grown with fixtures/collected
    to minutes of the suite)."""
    first: dict[int, ContainerResult] = {}
    for cr in containers:
        first.setdefault(id(cr.model), cr)
    out = list(first.values())
    assert len(out) >= 30
    return out


def _models(containers: list[ContainerResult]) -> list[ModelSpec]:
    return list({id(cr.model): cr.model for cr in containers if cr.model is not None}.values())


def _gpus() -> list[tuple[str, str | None, int]]:
    """(name, compute capability, memory total) of every CUDA/ROCm catalogue accelerator."""
    out = []
    for acc in cat.catalogue().values():
        if acc.vendor in ("nvidia", "amd") and acc.memory_bytes:
            out.append((acc.name, acc.compute_capability, int(acc.memory_bytes)))
    assert len(out) >= 10
    return out


def _memo_clears() -> list[Callable[[], None]]:
    """The ``cache_clear`` of every memo in the modules of kvlint.memory and kvlint.models imported now."""
    clears = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(("kvlint.memory", "kvlint.models")):
            continue
        for obj in list(vars(mod).values()):
            clear = getattr(obj, "cache_clear", None)
            if callable(clear) and getattr(obj, "__module__", "").startswith("kvlint"):
                clears.append(clear)
    return clears


def test_model_facts_restate_the_model(containers):
    models = _models(containers)
    assert any(model_has(m, "sliding") for m in models) and any(is_multimodal(m) for m in models)
    for m in models:
        f = vllm.model_facts(m)
        kinds = [lay.kind for lay in m.layers]
        assert f.counts == layer_counts(m.layers)
        assert f.stateful == any(k != "none" for k in kinds)
        assert f.sliding == any(k in ("sliding", "chunked") for k in kinds)
        assert f.chunked == ("chunked" in kinds)
        assert f.multimodal == is_multimodal(m)
        assert f.inter_eff == vllm._inter_eff(m)
        assert f.expert_fraction == vllm._expert_fraction.__wrapped__(m)  # type: ignore[attr-defined]
        assert f.embed_elements == m.vocab_size * m.hidden_size
        last = [lay for lay in m.layers if lay.kind != "none"]
        # an MTP layer copies the last layer's shape but holds its own KV even where that layer shares another's
        # (Gemma 4 / Gemma 3n KV sharing, LayerSpec.kv_shared)
        assert f.last_state_layer == (replace(last[-1], kv_shared=False) if last else None)
        cfg = m.text_config or m.config or {}
        declared = [cfg[k] for k in vllm._MTP_KEYS if isinstance(cfg.get(k), int) and cfg[k] > 0]
        assert f.mtp_config_layers == (declared[0] if declared else 0)
        if not f.vision:  # the profile the plan skips is the one encoder_profile does not make
            for era in ("v0", "v1"):
                prof, notes = encoder_profile(
                    m, era=era, max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=4096,
                    chunked_prefill=True, tp=1, dtype_bytes=2, limit_mm_per_prompt={"image": 4},
                )  # fmt: skip
                assert prof is None and notes == []
        assert vllm.model_facts(m) is f


def model_has(m: ModelSpec, kind: str) -> bool:
    return any(lay.kind == kind for lay in m.layers)


@pytest.mark.parametrize(
    "text",
    ["0.6.3", "0.8.4", "0.8.5", "0.9.0", "0.9.2", "0.10.2", "0.11.0+cu130", "0.15.2rc1.dev93", "0.18.0",
     "0.20.0", "0.21.0", "0.27.0", "0.29.0", "0.33.0", "0.34.0.post1", "latest"],
)  # fmt: skip
def test_release_switches_are_the_version_predicates(text):
    v, _ = resolve_version(text)
    r = vllm.release_switches(v)
    assert r.text == ver.fmt_version(v)
    assert r.default_utilization == ver.default_gpu_memory_utilization(v)
    assert r.budget_ceil == (v >= (0, 27, 0))
    assert r.hybrid_allocator == ver.hybrid_allocator_available(v)
    assert r.in_flight_doubled == (v >= (0, 33, 0))
    assert r.cudagraph_env == ver.cudagraph_env_exists(v)
    assert r.cudagraph_default == ver.cudagraph_subtracted_by_default(v)
    assert r.kv_cache_memory_bytes == ver.has_kv_cache_memory_bytes(v)
    assert r.null_block == ver.has_null_block_in_fit_check(v)
    assert r.capacity_concurrency == ver.capacity_is_concurrency_times_len(v)
    assert r.groups_min_block == (v >= (0, 9, 0))
    # an equal version of another text keeps its own text
    other = ReleaseVersion(v.pep440.public + "+local" if isinstance(v, ReleaseVersion) else "0.1")
    assert vllm.release_switches(other).text == str(other) != r.text


@pytest.mark.parametrize("cc", ["8.9", "9.0", "10.0", "7", "12.1", "x.y", "", None, "8.x"])
def test_parse_cc_memo_answers_as_the_parse(cc):
    def fresh(c):
        if not c:
            return None
        major, _, minor = str(c).partition(".")
        try:
            return int(major), int(minor or 0)
        except ValueError:
            return None

    assert parse_cc(cc) == fresh(cc)
    assert parse_cc(cc) == fresh(cc)  # the memo's answer


def test_scheduler_limits_pool_shapes_and_samplers_answer_as_the_functions(containers):
    gpus = _gpus()
    for cr in containers:
        s, m = cr.settings, cr.model
        assert m is not None
        for name, cc, total in gpus[::3]:
            try:
                cfg = vllm.resolve_startup(s, m, total, gpu_name=name, compute_capability=cc)
            except vllm.PlanError:
                continue
            v = cfg.version
            for chunked in (True, False):
                a: list[str] = []
                b: list[str] = []
                got = vllm._scheduler_limits(v, cfg.era, s, total, name, cc, cfg.max_model_len, chunked, a)
                want = vllm._scheduler_limits_of(
                    v, cfg.era, s, total, name, cc, cfg.max_model_len, chunked, b
                )
                assert got == want and a == b
            counts = layer_counts(cfg.layers)
            tp, kvb, kvd, bs = cfg.tp, cfg.kv_bytes_per_element, cfg.kv_cache_dtype, cfg.block_size
            for v1 in (True, False):
                tok, groups, bpb, bsz, notes = vllm._pool_shape(counts, tp, kvb, kvd, bs, cfg.hybrid, v1)
                assert tok == sum(layer_bytes_per_token(lay, tp, kvb, kvd) for lay in cfg.layers)
                if v1:
                    g, b2, bs2, n2 = vllm.build_groups(list(cfg.layers), tp, kvb, kvd, bs, cfg.hybrid)
                    assert (list(groups), bpb, bsz, list(notes)) == (g, b2, bs2, n2)
                else:
                    held = sum(
                        1 for lay in cfg.layers if lay.kind not in ("none", "mamba") and not lay.kv_shared
                    )
                    assert groups == (vllm.KVGroup("full", held, bs, tok * bs),) and bpb == tok * bs
            path, alt = vllm._sampler_paths(cfg, s.flashinfer_sampler)
            cp = parse_cc(cc)
            assert path == cal.sampler_path(
                cfg.era, v, cfg.chunked_prefill, cp, cfg.vendor, s.flashinfer_sampler, cfg.v2_runner
            )
            assert alt == cal.sampler_path_alternative(cfg.era, v, cfg.vendor, s.flashinfer_sampler)


def _direct_pool(counts, tp, kvb, kvd, bs, hybrid, v1):
    layers = [lay for lay, c in counts for _ in range(c)]
    tok = sum(layer_bytes_per_token(lay, tp, kvb, kvd) for lay in layers)
    if not v1:
        held = sum(1 for lay in layers if lay.kind not in ("none", "mamba"))
        return tok, (vllm.KVGroup("full", held, bs, tok * bs),), tok * bs, bs, ()
    g, bpb, bsz, notes = vllm.build_groups(layers, tp, kvb, kvd, bs, hybrid)
    return tok, tuple(g), bpb, bsz, tuple(notes)


@pytest.mark.parametrize("position", range(7))
def test_pool_shape_memo_keys_every_argument(position):
    full, sliding = LayerSpec("full", 8, 128, 128), LayerSpec("sliding", 8, 128, 128, window=4096)
    base = [((full, 6), (sliding, 18)), 1, 2, "auto", 16, True, True]
    other = [((full, 12), (sliding, 12)), 2, 1, "fp8", 32, False, False]
    a = list(base)
    b = list(base)
    b[position] = other[position]
    for args in (a, b, a, b):  # each answer once computed and once from the memo
        assert vllm._pool_shape(*args) == _direct_pool(*args)
    if position != 3:  # the KV dtype's name alone changes only an fp8_ds_mla MLA layer
        assert vllm._pool_shape(*a) != vllm._pool_shape(*b)


def test_pool_shape_tells_apart_counts_and_types():
    full = LayerSpec("full", 8, 128, 128)
    a = ((full, 32),)
    b = ((full, 16),)
    assert vllm._pool_shape(a, 1, 2, "auto", 16, True, True) != vllm._pool_shape(
        b, 1, 2, "auto", 16, True, True
    )
    as_int = vllm._pool_shape(a, 2, 2, "auto", 16, True, False)
    as_float = vllm._pool_shape(a, 2.0, 2, "auto", 16, True, False)  # type: ignore[arg-type]
    assert type(as_int[0]) is int and type(as_float[0]) is float


def test_every_plan_with_full_memos_equals_the_plan_with_none(one_per_model):
    gpus = _gpus()
    inputs = [(cr.settings, cr.model, g) for cr in one_per_model for g in gpus[::2]]
    warm = []
    for s, m, (name, cc, total) in inputs:
        try:
            warm.append(vllm.plan_vllm_detailed(s, m, total, gpu_name=name, compute_capability=cc))
        except vllm.PlanError as exc:
            warm.append(str(exc))
    assert sum(not isinstance(w, str) for w in warm) >= 100
    # every memo a plan reads is in a module the warm plans imported: found once, not once per plan (the search
    # of sys.modules was a third of this test)
    clears = _memo_clears()
    assert len(clears) >= 10
    for (s, m, (name, cc, total)), w in zip(inputs, warm, strict=True):
        for clear in clears:
            clear()
        try:
            fresh: object = vllm.plan_vllm_detailed(s, m, total, gpu_name=name, compute_capability=cc)
        except vllm.PlanError as exc:
            fresh = str(exc)
        assert fresh == w


def test_settings_with_the_same_delta_plan_the_same(containers):
    assert stage.settings_delta(vllm.VllmSettings()) == ()
    planned = 0
    for cr in containers:
        s = cr.settings
        # the same values in other objects (a new dict, an equal string): same delta, same plan
        same = replace(s, hf_overrides=dict(s.hf_overrides), version="".join(s.version))
        assert same.hf_overrides is not s.hf_overrides
        assert stage.settings_delta(same) == stage.settings_delta(s)
        p = cr.placement
        if p is None or p.accelerator is None or cr.model is None:
            continue
        kw = {"gpu_name": p.accelerator.name, "compute_capability": p.accelerator.compute_capability}
        total = p.memory_bytes or 0
        try:
            a = vllm.plan_vllm_detailed(s, cr.model, total, **kw)
        except vllm.PlanError:
            continue
        assert vllm.plan_vllm_detailed(same, cr.model, total, **kw) == a
        planned += 1
        # a field set to its default's value is no delta at all
        assert stage.settings_delta(replace(s, cpu_offload_gb=0.0)) == stage.settings_delta(
            replace(s, cpu_offload_gb=vllm.VllmSettings().cpu_offload_gb)
        )
    assert planned >= 10


def test_settings_delta_keeps_apart_what_the_models_keep_apart():
    base = vllm.VllmSettings()
    d = stage.settings_delta
    assert d(replace(base, gpu_memory_utilization=1)) != d(replace(base, gpu_memory_utilization=1.0))
    assert d(replace(base, cpu_offload_gb=-0.0)) != d(base)  # -0.0 is not the default 0.0 by repr
    assert d(replace(base, cpu_offload_gb=0)) != d(base)  # int 0 is not the default float 0.0
    assert d(replace(base, hf_overrides={"a": 1, "b": 2})) != d(replace(base, hf_overrides={"b": 2, "a": 1}))
    assert d(replace(base, max_model_len=4096)) != d(replace(base, max_num_seqs=4096))  # the field counts


# --------------------------------------------------------------------------------------------------
# the utilization remedy: plans at candidate utilizations, bracketed search


def _scan_utilization(settings, model, total, **kw):
    """The 0.01-step scan smallest_fitting_utilization used to be (reference): from the shortfall's guess, up
    until it fits, then down while it still fits."""
    d = vllm.plan_vllm_detailed(settings, model, total, **kw)
    short = d.needed_bytes - d.fit_available_bytes
    guess = d.plan.gpu_memory_utilization + max(0, short) / total
    u = min(1.0, math.ceil(max(0.01, guess) * 100) / 100)
    for _ in range(200):
        if vllm.plan_vllm_detailed(replace(settings, gpu_memory_utilization=u), model, total, **kw).fits:
            while u > 0.01:
                lower = round(u - 0.01, 2)
                if not vllm.plan_vllm_detailed(
                    replace(settings, gpu_memory_utilization=lower), model, total, **kw
                ).fits:
                    break
                u = lower
            return u
        if u >= 1.0:
            return None
        u = min(1.0, round(u + 0.01, 2))
    return None


def _planned(containers, gpus):
    for cr in containers:
        for name, cc, total in gpus:
            try:
                vllm.plan_vllm_detailed(cr.settings, cr.model, total, gpu_name=name, compute_capability=cc)
            except vllm.PlanError:
                continue
            yield cr.settings, cr.model, total, {"gpu_name": name, "compute_capability": cc}


def test_plan_at_utilization_is_the_plan_with_that_utilization(one_per_model):
    n = 0
    gpus = _gpus()
    # each model on three or four GPUs, every step-th from a different start for the next model, so that every GPU
    # is some model's (the same every-fourth GPUs for all models, 16 of the catalogue's 61, left 45 out)
    step = -(-len(gpus) // 4)
    assert len(one_per_model) >= step
    cases = (c for i, cr in enumerate(one_per_model) for c in _planned([cr], gpus[i % step :: step]))
    for s, m, total, kw in cases:
        at = vllm.plan_at_utilization(s, m, total, **kw)
        for u in (0.05, 0.5, 0.73, 0.9, 0.92, 0.98, 1.0, 1):
            want = vllm.plan_vllm_detailed(replace(s, gpu_memory_utilization=u), m, total, **kw)
            assert at(u) == want
            n += 1
    assert n >= 200


def test_bracketed_utilization_equals_the_fine_scan(one_per_model):
    answers = set()
    gpus = _gpus()
    # each model on two or three GPUs, every step-th from a different start for the next model: every GPU is
    # scanned, by several models (a fixed every-fifth GPU for all models scanned a fifth of the GPUs twice as
    # often; a fixed step of 10 had become six or seven GPUs per model as the catalogue grew to 61)
    step = -(-len(gpus) // 3)
    assert len(one_per_model) >= step  # every GPU is some model's first
    cases = (c for i, cr in enumerate(one_per_model) for c in _planned([cr], gpus[i % step :: step]))
    for s, m, total, kw in cases:
        for variant in (s, replace(s, max_model_len=32768), replace(s, max_model_len=2048)):
            got = vllm.smallest_fitting_utilization(variant, m, total, **kw)
            assert got == _scan_utilization(variant, m, total, **kw)
            answers.add(got)
    assert None in answers and len(answers) >= 10  # the cases cover both outcomes and many values


@pytest.mark.parametrize("threshold", [1, 2, 3, 37, 50, 97, 98, 99, 100, 101])
def test_smallest_fitting_with_any_guess_is_the_bisection(threshold):
    from kvlint.rules.remedies import smallest_fitting

    calls: list[int] = []

    def plan_for(h):
        calls.append(h)
        return h  # a stand-in for a plan: fits from the threshold up

    want = None if threshold > 98 else threshold
    for lo in (lo for lo in (0, 1, 20) if lo < threshold):  # lo does not fit, as the search assumes
        plain = smallest_fitting(lo, 98, plan_for, lambda h: h >= threshold)
        assert plain == (None if want is None else (want, want))
        for guess in (None, *range(lo - 1, 101)):
            assert smallest_fitting(lo, 98, plan_for, lambda h: h >= threshold, guess=guess) == plain
    calls.clear()
    if want is not None and 1 < want < 98:
        smallest_fitting(0, 98, plan_for, lambda h: h >= threshold, guess=want)
        assert len(calls) == 3  # a right guess: hi, the guess, its neighbour


def test_vllm_hundredth_search_with_any_guess(threshold_values=(1, 2, 50, 99, 100, 101)):
    for t in threshold_values:
        for guess in range(-2, 103):
            got = vllm._smallest_fitting_hundredth(lambda h, t=t: h >= t, guess)
            assert got == (None if t > 100 else t)


@pytest.mark.parametrize("text", ["0.8.5", "0.11.0+cu130", "0.29.0", "0.30.0", "0.33.0"])
def test_lengths_memo_answers_as_the_defaults(containers, text):
    from kvlint.memory import defaults as dfl

    v, _ = resolve_version(text)
    for m in _models(containers):
        derived, key, mml, why = dfl._derive_max_model_len(m, v)
        want = (derived, key, mml, why, dfl._default_max_model_len(m, derived))
        assert vllm._lengths(m, v) == want
        assert vllm._lengths(m, v) == want  # the memo's answer


#: settings changes the remedies make, plus values equal to the defaults and values Python calls equal
_CHANGES = (
    {"max_model_len": 4096},
    {"max_model_len": None},
    {"max_model_len": -1},
    {"kv_cache_dtype": "fp8"},
    {"kv_cache_dtype": "auto"},
    {"tensor_parallel_size": 2},
    {"tensor_parallel_size": 1},
    {"tensor_parallel_size": True},
    {"gpu_memory_utilization": 0.95},
    {"gpu_memory_utilization": 1},
    {"cpu_offload_gb": 0.0},
    {"cpu_offload_gb": -0.0},
    {"hf_overrides": {}},
    {"max_model_len": 8192, "kv_cache_dtype": "fp8", "enforce_eager": True},
)


def test_changed_delta_is_the_delta_of_the_changed_settings(containers):
    seen = set()
    for cr in containers:
        s = cr.settings
        base = stage.settings_delta(s)
        for changes in _CHANGES:
            want = stage.settings_delta(s.changed(**changes))
            assert stage.changed_delta(base, changes) == want
            seen.add(want != base)
    assert seen == {True, False}  # some changes change the delta, some (to the same value) do not


def test_a_replan_through_the_memo_equals_a_fresh_plan_of_the_changed_settings(containers):
    planned = 0
    for cr in containers[:40]:
        p = cr.placement
        if p is None or p.accelerator is None or cr.model is None:
            continue
        # a GPU the vLLM model does not plan (a TPU): replan answers None
        if not isinstance(stage.plannable_gpu(p, "vllm"), tuple):
            assert all(stage.replan(cr, **changes) is None for changes in _CHANGES)
            continue
        kw = {"gpu_name": p.accelerator.name, "compute_capability": p.accelerator.compute_capability}
        for changes in _CHANGES:
            try:
                want: object = vllm.plan_vllm_detailed(
                    replace(cr.settings, **changes), cr.model, p.memory_bytes or 0, **kw
                )
            except (vllm.PlanError, ValueError, ZeroDivisionError, KeyError, TypeError, OverflowError):
                want = None
            assert stage.replan(cr, **changes) == want
            assert stage.replan(cr, **changes) == want  # the memo's answer
            planned += want is not None
    assert planned >= 100
    with pytest.raises(TypeError):  # a name that is not a setting, as dataclasses.replace
        stage._detail(
            containers[0].serving,
            containers[0].settings,
            containers[0].model,
            1,
            (cat.catalogue()["nvidia-h100-sxm5-80gb"], 2**30),
            {"no_such_setting": 1},
        )


def test_the_container_s_utilization_planner_is_made_once_and_plans_each_value_once(containers):
    checked = 0
    for cr in containers[:40]:
        planner = stage.utilization_planner(cr)
        if planner is None:
            continue
        assert stage.utilization_planner(cr) is planner
        for u in (0.5, 0.9, 0.98, 0.5):
            first = planner(u)
            assert planner(u) is first
            assert first == stage.replan(cr, gpu_memory_utilization=u)
            checked += 1
        other = replace(cr, serving=copy.copy(cr.serving))  # another container: its own planner
        assert stage.utilization_planner(other) is not planner
    assert checked >= 40
