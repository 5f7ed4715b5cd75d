"""The memory plans' memos and the fleet's fast path answer what the general path answers.

* :func:`kvlint.memory.stage.plan_fleet` plans each accelerator from its memory total and the container's GPU
  count directly; every entry must equal :func:`kvlint.memory.stage.replan` of the container on a placement on
  that accelerator alone (the MIG slice's memory when the container requests one), for every container of the
  corpus and the fixtures with a model, on every catalogue accelerator.
* The per-model and by-value memos (:mod:`kvlint.memory.memo`) answer what the undecorated functions answer,
  for every model of those containers, on repeated calls and with arguments that are equal in Python but not to
  the models (``2`` and ``2.0``, ``0.11.0`` and ``0.11.0+cu130``).

Inputs: ../shared/corpus/manifests when present (sources in its INDEX.csv) and every fixtures/ subdirectory
(sources in their SOURCE.md files).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvlint.accelerators import registry as cat
from kvlint.engines.layout import unresolved_sizes
from kvlint.memory import defaults as dfl
from kvlint.memory import vllm
from kvlint.memory.kv import layer_counts
from kvlint.memory.stage import mig_fleet, mig_profile_of, plan_fleet, replan
from kvlint.memory.versions import ReleaseVersion, parse_pep440
from kvlint.models import weights
from kvlint.types import CheckResult, ContainerResult, ModelSpec


@pytest.fixture(scope="module")
def containers(fixtures_and_corpus_check: CheckResult) -> list[ContainerResult]:
    """Every container with a resolved model and a placement, one per distinct configuration."""
    res = fixtures_and_corpus_check
    seen: set[tuple[object, ...]] = set()
    out = []
    for cr in res.containers:
        if cr.model is None or cr.placement is None:
            continue
        s = cr.serving
        key = (
            id(cr.model),
            s.engine,
            s.image,
            s.version,
            repr(sorted((k, v.value) for k, v in s.flags.items())),
            repr(sorted(s.env.items())),
            cr.placement.gpus,
            cr.placement.resource,
        )
        if key not in seen:
            seen.add(key)
            out.append(cr)
    assert len(out) >= 50
    return out


def _models(containers: list[ContainerResult]) -> list[ModelSpec]:
    by_id = {id(cr.model): cr.model for cr in containers if cr.model is not None}
    return list(by_id.values())


def test_every_fleet_entry_is_the_plan_on_that_accelerator_alone(containers):
    accelerators = tuple(cat.catalogue().values())
    planned = 0
    for cr in containers:
        assert cr.model is not None and cr.placement is not None
        if cr.serving.engine == "vllm" and cr.settings is None:
            continue
        if unresolved_sizes(cr.serving):
            # never planned on a fleet (kvlint.pipeline._fleet: no plan on a guessed GPU layout), nor re-planned
            # (replan: None); a kustomization a walk builds (kserve-llmisvc-e2e-gpt-oss's LLMInferenceServiceConfig,
            # --tensor-parallel-size from a template variable) is such a container
            continue
        gpus = cr.placement.gpus or 1
        profile = mig_profile_of(cr.placement)
        fleet = mig_fleet(profile, accelerators)[0] if profile else accelerators
        entries = plan_fleet(cr.serving, cr.settings, cr.model, cr.placement, fleet, gpus)
        assert [e.accelerator for e in entries] == list(fleet)
        for e in entries:
            if e.refused_by == "KV304" and e.detail is None:
                continue  # the image does not run there: not planned
            mig_bytes = None
            if profile is not None:
                prof, _ = cat.mig_profile(e.accelerator.id, profile)
                mig_bytes = prof.memory_bytes if prof is not None else None
            there = replace(
                cr.placement, accelerator=e.accelerator, gpus=gpus, memory_bytes_override=mig_bytes
            )
            alone = replan(cr, placement=there)
            assert e.detail == alone, (cr.container_name, e.accelerator.id)
            assert (e.detail is None) == (e.verdict == "unknown")
            planned += e.detail is not None
    assert planned > 1000


def test_weight_bytes_memo_answers_as_the_function(containers):
    raw = weights._weight_bytes.__wrapped__  # type: ignore[attr-defined]
    for m in _models(containers):
        for quant in (None, "fp8", "awq", "bitsandbytes"):
            for dbytes in (1, 2, 4):
                for tp in (1, 2, 8):
                    for cc in (None, "8.0", "9.0"):
                        for _ in range(2):  # the second call answers from the memo
                            got = weights.weight_bytes(
                                m, dtype_bytes=dbytes, quantization=quant, tp=tp, compute_capability=cc
                            )
                            assert got == raw(m, dbytes, quant, tp, cc)
        # a float width prints differently: not the int's answer
        assert weights.weight_bytes(m, dtype_bytes=2.0) == raw(m, 2.0, None, 1, None)  # type: ignore[arg-type]


def test_per_model_figures_answer_as_the_functions(containers):
    for m in _models(containers):
        for _ in range(2):
            assert vllm._expert_fraction(m) == vllm._expert_fraction.__wrapped__(m)  # type: ignore[attr-defined]
            for dbytes in (1, 2, 4):
                assert vllm._rotary_cache_bytes(m, dbytes) == vllm._rotary_cache_bytes.__wrapped__(m, dbytes)  # type: ignore[attr-defined]


VERSIONS = ["0.8.5", "0.11.0", "0.11.0+cu130", "0.29.0", "0.30.0", "0.33.0"]


def test_derived_max_model_len_memo_answers_as_the_function(containers):
    for m in _models(containers):
        for text in VERSIONS:
            v = ReleaseVersion(text)
            for _ in range(2):
                got = dfl.derive_max_model_len(v, m)
                assert got == dfl._derive_max_model_len(m, v)
                assert got == dfl.derive_max_model_len(v, m, {})
                derived = got[0]
                assert dfl.default_max_model_len(v, m, derived) == dfl._default_max_model_len(m, derived)
        # with overrides: not memoised, and the overrides apply
        over = {"max_position_embeddings": 1234}
        assert dfl.derive_max_model_len(ReleaseVersion("0.33.0"), m, over) == dfl._derive_max_model_len(
            m, ReleaseVersion("0.33.0"), over
        )


def test_a_version_with_a_local_label_keeps_its_own_text():
    m = ModelSpec(
        id="m",
        source="test",
        config={"max_position_embeddings": 8192, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
        model_type="llama",
        architectures=("LlamaForCausalLM",),
        num_layers=1,
        num_attention_heads=1,
        num_kv_heads=1,
        head_size=64,
        hidden_size=64,
        intermediate_size=128,
        vocab_size=100,
        layers=(),
        max_position_embeddings=8192,
        max_len_key="max_position_embeddings",
        rope_scaling={"rope_type": "linear", "factor": 2.0},
        torch_dtype="bfloat16",
        quant_method=None,
        quant_config=None,
        tie_word_embeddings=False,
    )
    plain = dfl.derive_max_model_len(ReleaseVersion("0.11.0"), m)
    local = dfl.derive_max_model_len(ReleaseVersion("0.11.0+cu130"), m)
    assert plain[0] == local[0] == 16384
    assert "vLLM 0.11.0)" in plain[3] and "vLLM 0.11.0+cu130)" in local[3]


def test_kv_cache_groups_memo_answers_as_the_function_with_new_lists(containers):
    raw = vllm._build_groups_counted.__wrapped__  # type: ignore[attr-defined]
    for m in _models(containers):
        counts = layer_counts(m.layers)
        for tp in (1, 2, 8):
            for kvb, kvd in ((2, "auto"), (1, "fp8"), (1, "fp8_ds_mla")):
                for bs in (16, 64):
                    for hybrid in (False, True):
                        first = vllm.build_groups_counted(counts, tp, kvb, kvd, bs, hybrid)
                        expected = raw(counts, tp, kvb, kvd, bs, hybrid)
                        assert first == expected
                        first[0].clear()
                        first[3].append("edited by a caller")
                        assert vllm.build_groups_counted(counts, tp, kvb, kvd, bs, hybrid) == expected


@pytest.mark.parametrize(
    "text", ["0.5.5.post3", "v0.5.5.post3-cu129", "3.0.1", "2.4.1-rocm", "sha-293b8125", "x"]
)
def test_parse_pep440_memo_answers_as_the_function(text):
    from kvlint.memory.versions import _parse_pep440

    first = parse_pep440(text)
    fresh = _parse_pep440(text)
    assert parse_pep440(text) is first  # one object per text: its comparison memo is shared
    if fresh is None:
        assert first is None
    else:
        assert first is not None and (str(first), tuple(first)) == (str(fresh), tuple(fresh))


def test_rule_engines_memo_answers_as_the_catalogue():
    from kvlint.memory.compat import _applies
    from kvlint.rules.catalog import load_catalog

    for rule in load_catalog():
        for engine in ("vllm", "tgi", "sglang", "other"):
            for _ in range(2):
                assert _applies(rule, engine) == _applies.__wrapped__(rule, engine)


def test_settings_from_config_builds_what_the_dataclass_builds(containers):
    import dataclasses

    from kvlint.memory.vllm import VllmSettings, settings_from_config

    defaults = VllmSettings()
    factories = [
        f.name for f in dataclasses.fields(VllmSettings) if f.default_factory is not dataclasses.MISSING
    ]
    assert factories
    n = 0
    for cr in containers:
        if cr.serving.engine != "vllm":
            continue
        s = settings_from_config(cr.serving)
        assert type(s) is VllmSettings and s.__dict__.keys() == VllmSettings.__dataclass_fields__.keys()
        assert s == dataclasses.replace(s) == VllmSettings(**s.__dict__)  # the generated __init__ on the same
        for name in factories:  # no container shares the defaults' dicts
            assert getattr(s, name) is not getattr(defaults, name)
        n += 1
    assert n >= 20


def test_fleet_prelude_notes_stay_in_vllm_order(containers):
    """plan_fleet settles a vLLM container's GPU-independent steps once (kvlint.memory.vllm.plan_prelude); each
    GPU's plan is then the one planned alone, and the once-settled notes sit where resolve_startup meets them:
    the assumed version first, the KV connector after the max_model_len and KV-dtype notes and before the batch
    defaults, the pipeline split right after the block size, the default utilization after it and before the
    CUDA-graph note."""
    accelerators = tuple(a for a in cat.catalogue().values() if a.vendor in ("nvidia", "amd"))[:6]
    done = 0
    for cr in containers:
        if cr.serving.engine != "vllm" or not isinstance(cr.settings, vllm.VllmSettings):
            continue
        s = cr.settings.changed(
            version_assumed=True,
            kv_connector="LMCacheConnectorV1",
            pipeline_parallel_size=2,
            gpu_memory_utilization=None,
        )
        cr2 = replace(cr, settings=s)
        entries = plan_fleet(cr.serving, s, cr.model, cr.placement, accelerators, 2)
        for e in entries:
            if e.detail is None:
                continue
            alone = replan(cr2, placement=replace(cr.placement, accelerator=e.accelerator, gpus=2))
            assert e.detail == alone
            notes = list(e.detail.plan.assumptions)
            assert notes[0].startswith("vLLM version unknown")
            i_kvd = next(i for i, n in enumerate(notes) if n.startswith("KV cache dtype"))
            i_conn = next(i for i, n in enumerate(notes) if "--kv-transfer-config (LMCacheConnectorV1)" in n)
            i_batch = next(
                (i for i, n in enumerate(notes) if "max_num_seqs=" in n or "max_num_batched_tokens" in n),
                None,
            )
            if i_batch is None:  # both set on the command line (HAMi's example): no batch default to place
                assert s.max_num_seqs is not None and s.max_num_batched_tokens is not None
            else:
                assert i_kvd < i_conn < i_batch
            i_block = next(i for i, n in enumerate(notes) if n.startswith("block_size="))
            assert notes[i_block + 1].startswith("pipeline stages hold")
            i_util = next(i for i, n in enumerate(notes) if n.startswith("gpu_memory_utilization="))
            assert i_block + 1 < i_util
            assert not any("CUDA-graph" in n or "--enforce-eager" in n for n in notes[:i_util])
            done += 1
        if done > 60:
            break
    assert done > 20


def test_fleet_platform_read_once_refuses_as_per_gpu(containers):
    """plan_fleet reads the image's platform once and tests it against each GPU (KV304): the same refusals as
    platform_refusal reading it for every GPU, on every catalogue accelerator (ROCm, TPU and Gaudi ones too)."""
    from kvlint.engines.images import platform_of
    from kvlint.memory.compat import platform_refusal

    refused = 0
    for cr in containers:
        platform = platform_of(cr.serving)
        for acc in cat.catalogue().values():
            got = platform_refusal(cr.serving, acc, platform=platform)
            assert got == platform_refusal(cr.serving, acc), (cr.container_name, acc.id)
            refused += got is not None
    assert refused > 50


def test_request_terms_memo_answers_as_the_groups_say(containers):
    """fit_check's per-groups terms (:func:`kvlint.memory.vllm._request_terms`, memoised by the groups tuple)
    restate the groups: one term per (kind, window, block size) with its count and page bytes x layers, in
    first-seen order; monotone when every block size is positive and no weight negative; uniform (block size,
    count, weight) only for one block size without Mamba or windowed groups. Checked against that reading of
    every model's groups, and the memo against the plain function on repeated calls."""
    seen = 0
    for m in _models(containers):
        counts = layer_counts(m.layers)
        for tp in (1, 4):
            for bs in (16, 64):
                for hybrid in (False, True):
                    groups = tuple(vllm.build_groups_counted(counts, tp, 2, "auto", bs, hybrid)[0])
                    if not groups:
                        continue
                    seen += 1
                    keys = list(dict.fromkeys((g.kind, g.window, g.block_size) for g in groups))
                    expected_terms = []
                    for key in keys:
                        members = [g for g in groups if (g.kind, g.window, g.block_size) == key]
                        weight = sum(g.page_bytes * g.layers for g in members)
                        expected_terms.append((members[0], len(members), weight))
                    windowed = any(
                        g.kind == "mamba" or (g.kind in ("sliding", "chunked") and g.window) for g in groups
                    )
                    sizes = {g.block_size for g in groups}
                    uniform = (
                        (sizes.pop(), len(groups), sum(g.page_bytes * g.layers for g in groups))
                        if len(sizes) == 1 and not windowed
                        else None
                    )
                    monotone = all(g.block_size > 0 for g in groups) and all(
                        w >= 0 for _, _, w in expected_terms
                    )
                    got = vllm._request_terms(groups)
                    assert got == (tuple(expected_terms), monotone, uniform), (m.id, tp, bs, hybrid)
                    assert vllm._request_terms(groups) is got  # memoised by the tuple
                    assert vllm._request_terms_of(list(groups)) == got  # a list is read, not memoised
    assert seen >= 50
