"""SGLang's user-given CUDA-graph settings in the default mem_fraction_static (docs/engine-memory-model.md §3.2,
kvlint/memory/sglang_graphs.py, kvlint/engines/sglang.py): capture lists (``--cuda-graph-bs``,
``--piecewise-cuda-graph-tokens``, ``--cuda-graph-bs-decode`` / ``-prefill``, ``--cuda-graph-config`` JSON), the
options that share one argparse dest from 0.5.14 (the last one written wins), absurd sizes refused before they size
anything, and the 0.5.11, 0.5.12 and 0.5.14 switches read in their wheels. Expected fractions come from the model's
own functions (default_mem_fraction_static, gpu_tier, capture_sizes)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.engines.sglang import parse_sglang_argv
from kvlint.memory import sglang_graphs, sglang_spec
from kvlint.memory.sglang import (
    cell_size,
    default_mem_fraction_static,
    gpu_tier,
    plan_sglang_detailed,
    sglang_prelude,
    sglang_version,
)
from kvlint.models import resolve_model

FIX = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_DIRS = (str(FIX / "sglang" / "models"), str(FIX / "plan" / "models"))
LLAMA = "meta-llama/Llama-3.1-8B"
DSV3 = "deepseek-ai/DeepSeek-V3"
VL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
PER = sglang_graphs.PER_SIZE_MIB


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str, model_path: str = "x"):
    s = parse_command_line(
        ["python", "-m", "sglang.launch_server", "--model-path", model_path, *args], version
    )
    s.version = version
    return s


def _graphs(model: str, *args: str, version: str, tp: int = 1):
    return sglang_prelude(_cmd("--tp-size", str(tp), *args, version=version), _model(model)).prefill_graphs


def _plan(model: str, *args: str, version: str, gpu: str = "h100-80gb", tp: int = 1):
    acc = lookup(gpu)
    s = _cmd("--tp-size", str(tp), *args, version=version)
    return plan_sglang_detailed(s, _model(model), acc.memory_bytes, gpus=tp, gpu_name=acc.name)


def _gpu_mib(gpu: str = "h100-80gb") -> float:
    return lookup(gpu).memory_bytes / (1 << 20) + 512


def _fraction(version: str, **kw) -> float:
    return default_mem_fraction_static(sglang_version(version)[0], _gpu_mib(), tp=1, **kw)[0]


def _rules(s, rule: str) -> list[str]:
    return [f.message for f in s.findings if f.rule == rule]


def test_a_prefill_capture_list_replaces_the_generated_sizes() -> None:
    """SGLang reserves ``len(bs) * 8`` MiB for a user's prefill list (duplicates counted), whatever the maximum:
    ``--piecewise-cuda-graph-tokens`` in 0.5.13, ``--cuda-graph-bs-prefill`` and ``--cuda-graph-config``'s
    ``prefill.bs`` (which wins) in 0.5.23; DeepEP's alignment rounds the list up to multiples of 8 and deduplicates
    it. kvlint counted the generated list before."""
    cps = gpu_tier(_gpu_mib(), 1, (0, 5, 23))[0]
    generated = len(sglang_graphs.capture_sizes(cps, (0, 5, 23))) * PER
    for version, args, n in (
        ("0.5.13", ("--piecewise-cuda-graph-tokens", "256", "512", "1024", "1024"), 4),
        ("0.5.23", ("--cuda-graph-bs-prefill", "512", "1024"), 2),
        ("0.5.16", ("--piecewise-cuda-graph-tokens", "64", "128", "256"), 3),  # the alias of 0.5.14 - 0.5.19
        (
            "0.5.23",
            (
                "--cuda-graph-bs-prefill",
                "512",
                "--cuda-graph-config",
                json.dumps({"prefill": {"bs": [1, 2, 3]}}),
            ),
            3,
        ),
    ):
        pg = _graphs(LLAMA, *args, version=version)
        assert pg is not None and pg.on and pg.sizes is not None, (version, args)
        assert pg.reserve_mib(cps, amd=False)[0] == n * PER != generated, (version, args)
        got = _plan(LLAMA, *args, version=version)
        assert got.mem_fraction_static == _fraction(version, prefill_graph_mib=n * PER), (version, args)
    deepep = _graphs(
        LLAMA, "--moe-a2a-backend", "deepep", "--cuda-graph-bs-prefill", "4", "8", "12", version="0.5.23"
    )
    assert deepep.reserve_mib(cps, amd=False)[0] == 2 * PER + 1024  # {8, 16} + DeepEP's 1 GiB


def test_a_decode_capture_list_sets_the_graph_batch() -> None:
    """``cuda_graph_max_bs = max(cuda_graph_bs)`` after the GPU tier's default (every release read, 0.5.3 on): the
    list's largest entry sizes the decode-graph term, over ``--cuda-graph-max-bs`` too; from 0.5.14
    ``--cuda-graph-bs-decode`` and ``--cuda-graph-config``'s ``decode.bs`` / ``decode.max_bs``."""
    off = ("--disable-prefill-cuda-graph",)  # keep the prefill reserve out of the 0.5.23 comparison
    for version, args, bs in (
        ("0.5.5", ("--cuda-graph-bs", "1", "2", "4", "8"), 8),
        ("0.5.5", ("--cuda-graph-max-bs", "256", "--cuda-graph-bs", "1", "64"), 64),
        ("0.5.23", (*off, "--cuda-graph-bs-decode", "16", "32"), 32),
        ("0.5.23", (*off, "--cuda-graph-config", json.dumps({"decode": {"max_bs": 48}})), 48),
        (
            "0.5.23",
            (*off, "--cuda-graph-max-bs-decode", "300", "--cuda-graph-config", '{"decode": {"bs": [4, 24]}}'),
            24,
        ),
    ):
        got = _plan(LLAMA, *args, version=version)
        assert got.mem_fraction_static == _fraction(version, cuda_graph_max_bs=bs), (version, args)
        assert got.mem_fraction_static != _fraction(version), (version, args)


def test_absurd_graph_sizes_are_refused_before_they_size_anything() -> None:
    """A maximum of 10^11 tokens made kvlint build a list of 2 × 10^8 sizes (MemoryError); such values, lists with an
    entry below 1 or above MAX_GRAPH_SIZE, longer than MAX_GRAPH_SIZES, not integers, or a --cuda-graph-config that
    is not a JSON object of phases, are KV206 and the plan goes on without them. The count of generated sizes is
    arithmetic above 4096."""
    huge = str(sglang_graphs.MAX_GRAPH_SIZE + 1)
    s = _cmd("--piecewise-cuda-graph-max-tokens", huge, version="0.5.13")
    assert any("implausibly large" in m for m in _rules(s, "KV206"))
    assert "piecewise_cuda_graph_max_tokens" not in s.flags
    assert _plan(LLAMA, "--piecewise-cuda-graph-max-tokens", huge, version="0.5.13").mem_fraction_static == (
        _plan(LLAMA, version="0.5.13").mem_fraction_static
    )
    long_list = [str(4 + i) for i in range(sglang_graphs.MAX_GRAPH_SIZES + 1)]
    for version, args in (
        ("0.5.23", ("--cuda-graph-bs-prefill", "0", "4")),
        ("0.5.23", ("--cuda-graph-bs-decode", "8", huge)),
        ("0.5.5", ("--cuda-graph-bs", "abc")),
        ("0.5.23", ("--cuda-graph-bs-prefill", *long_list)),
        ("0.5.23", ("--cuda-graph-max-bs-prefill", "1e9")),
        ("0.5.23", ("--cuda-graph-config", "[1, 2]")),
        ("0.5.23", ("--cuda-graph-config", '{"prefill": {"bs": "x"}}')),
        ("0.5.23", ("--cuda-graph-config", '{"prefill": {"max_bs": ' + huge + "}}")),
        ("0.5.23", ("--cuda-graph-config", '{"verify": {}}')),
    ):
        s = _cmd(*args, version=version)
        assert _rules(s, "KV206"), (version, args)
        pg = sglang_prelude(s, _model(LLAMA)).prefill_graphs
        assert pg is None or pg.sizes is None, (version, args)
    for top in (-1, 0, 4, 100, 2048, 4096, 4607, 4608, 5000, 16384, 100_000):
        for v in ((0, 5, 8), (0, 5, 23)):
            sizes = sglang_graphs.capture_sizes(top, v)
            assert sglang_graphs.capture_count(top, v) == len(sizes), (top, v)
            aligned = {(x + 7) // 8 * 8 for x in sizes}
            assert sglang_graphs.capture_count(top, v, aligned=True) == len(aligned), (top, v)
    assert sglang_graphs.capture_count(10**15, (0, 5, 23)) == sglang_graphs.capture_count(
        4096, (0, 5, 23)
    ) + ((10**15 - 4608) // 512 + 1)


def test_options_sharing_a_dest_from_0_5_14_take_the_last_written() -> None:
    """From 0.5.14 the deprecated options are aliases with their replacement's dest (DeprecatedAliasStoreAction,
    DeprecatedStoreConstAction): argparse keeps the last value written, whichever spelling wrote it. kvlint gave
    ``--cuda-graph-backend-prefill`` / ``--cuda-graph-max-bs-prefill`` / ``--cuda-graph-max-bs`` priority whatever
    the order. In 0.5.13 they are separate fields (``--enforce-piecewise-cuda-graph`` wins in any order)."""
    on_off = ("--cuda-graph-backend-prefill", "breakable", "--disable-piecewise-cuda-graph")
    off_on = ("--disable-piecewise-cuda-graph", "--cuda-graph-backend-prefill", "breakable")
    assert not _graphs(LLAMA, *on_off, version="0.5.16").on
    assert _graphs(LLAMA, *off_on, version="0.5.16").on
    assert _rules(_cmd(*on_off, version="0.5.16"), "KV207")
    assert (
        _graphs(LLAMA, "--enable-breakable-cuda-graph", "--disable-piecewise-cuda-graph", version="0.5.14").on
        is False
    )
    assert _graphs(
        LLAMA, "--disable-piecewise-cuda-graph", "--enforce-piecewise-cuda-graph", version="0.5.16"
    ).on
    tokens = ("--cuda-graph-max-bs-prefill", "1024", "--piecewise-cuda-graph-max-tokens", "512")
    assert _graphs(LLAMA, *tokens, version="0.5.16").max_tokens == 512
    assert _graphs(LLAMA, *tokens[2:], *tokens[:2], version="0.5.16").max_tokens == 1024
    off = ("--disable-prefill-cuda-graph",)
    for args, bs in (
        (("--cuda-graph-max-bs", "32", "--cuda-graph-max-bs-decode", "64"), 64),
        (("--cuda-graph-max-bs-decode", "64", "--cuda-graph-max-bs", "32"), 32),
    ):
        got = _plan(LLAMA, *off, *args, version="0.5.16")
        assert got.mem_fraction_static == _fraction("0.5.16", cuda_graph_max_bs=bs), args
    # 0.5.13: separate switches, enforce first or last
    for args in (
        ("--disable-piecewise-cuda-graph", "--enforce-piecewise-cuda-graph"),
        ("--enforce-piecewise-cuda-graph", "--disable-piecewise-cuda-graph"),
    ):
        assert _graphs(LLAMA, *args, version="0.5.13").on, args
        assert not _rules(_cmd(*args, version="0.5.13"), "KV207")


def test_0_5_14_decides_the_prefill_graphs_with_cuda_graph_config() -> None:
    """0.5.14 (read; kvlint took it as 0.5.13) has 0.5.15's cuda_graph_config with a tc_piecewise default: the
    0.5.13 rules apply to the default, --disable-cuda-graph turns the prefill graphs off (it does not in 0.5.13),
    an explicit backend skips the rules, MLA keeps the flat reserve (the breakable MLA rule is 0.5.15's default's)."""
    cps = gpu_tier(_gpu_mib(), 1, (0, 5, 14))[0]
    pg = _graphs(LLAMA, version="0.5.14")
    assert pg.on and "tc_piecewise" in pg.why
    assert pg.reserve_mib(cps, amd=False)[0] == len(sglang_graphs.capture_sizes(cps, (0, 5, 14))) * PER
    assert _graphs(LLAMA, "--disable-cuda-graph", version="0.5.13").on
    assert not _graphs(LLAMA, "--disable-cuda-graph", version="0.5.14").on
    assert not _graphs(LLAMA, "--dp-size", "2", "--enable-dp-attention", version="0.5.14", tp=2).on
    assert _graphs(
        LLAMA,
        "--dp-size",
        "2",
        "--enable-dp-attention",
        "--cuda-graph-backend-prefill",
        "breakable",
        version="0.5.14",
        tp=2,
    ).on
    assert not _graphs(VL, version="0.5.14").on
    mla = _graphs(DSV3, version="0.5.14", tp=8)
    assert mla.on and mla.reserve_mib(8192, amd=False)[0] == sglang_graphs.MLA_RESERVE_MIB
    assert not _graphs(DSV3, version="0.5.15", tp=8).on
    # a PD decode node: 0.5.14's reserve has no role term; the tc_piecewise PD rule turns the default off
    assert not _graphs(LLAMA, "--disaggregation-mode", "decode", version="0.5.14").on


def test_0_5_11_and_0_5_12_rules_as_their_wheels() -> None:
    """0.5.11 and 0.5.12 (read; kvlint took them as 0.5.10) have no speculative-decoding rule and already turn the
    graphs off for --debug-cuda-graph; 0.5.12's architecture list adds DeepSeek V4."""
    spec = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")
    assert not _graphs(LLAMA, *spec, version="0.5.10").on
    for version in ("0.5.11", "0.5.12"):
        assert _graphs(LLAMA, *spec, version=version).on, version
    assert _graphs(LLAMA, "--debug-cuda-graph", version="0.5.10").on
    assert not _graphs(LLAMA, "--debug-cuda-graph", version="0.5.11").on
    base = _model(LLAMA)
    v4 = dataclasses.replace(base, architectures=["DeepseekV4ForCausalLM"])
    for version, on in (("0.5.11", True), ("0.5.12", False), ("0.5.13", False)):
        pg = sglang_prelude(_cmd(version=version), v4).prefill_graphs
        assert pg.on == on, version


def test_the_draft_shares_the_cell_from_0_5_14() -> None:
    """0.5.14's pool configurator already adds the draft's layers to the target's cell, and its default fraction has
    no draft reserve (kvlint took 0.5.14 as 0.5.13: a 4 GiB reserve and a separate pool)."""
    m = _model(DSV3)
    pre = sglang_prelude(_cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version="0.5.14"), m)
    nextn = int((m.text_config or m.config)["num_nextn_predict_layers"])
    assert pre.spec is not None and pre.spec.reserve_mib == 0
    assert pre.kv_bytes_per_token == sglang_spec.scale_cell(
        cell_size(m, 8, 2)[0], m.num_layers, nextn, (0, 5, 14)
    )
    assert sglang_spec.default_reserve_mib((0, 5, 13), "EAGLE") == 4096


def test_draft_mode_rewrites_the_mtp_layer_count_to_one() -> None:
    """SGLang reads a draft path's config in draft mode, where _config_draft_model sets num_nextn_predict_layers = 1
    for some architectures (HYV3 from 0.5.11, MiMo-V2 from 0.5.18, ...) before it is counted. A self-drafting
    architecture (SGLang sets the path) or a path equal to the model's is rewritten; a path-less target (0.5.20 on)
    is sized off its own config."""
    base = _model(DSV3)
    hy = dataclasses.replace(
        base,
        architectures=["HYV3ForCausalLM"],
        config={**base.config, "architectures": ["HYV3ForCausalLM"], "num_nextn_predict_layers": 3},
    )
    hy = dataclasses.replace(hy, text_config=hy.config)
    layers, why = sglang_spec.draft_kv_layers(hy, (0, 5, 23), "EAGLE", "", "m")
    assert layers == 1 and "draft mode" in why
    mimo = dataclasses.replace(hy, architectures=["MiMoV2FlashForCausalLM"])
    assert (
        sglang_spec.draft_kv_layers(mimo, (0, 5, 23), "EAGLE", "", "m")[0] == 3
    )  # path-less: its own config
    assert sglang_spec.draft_kv_layers(mimo, (0, 5, 23), "EAGLE", "m", "m")[0] == 1  # its path: draft mode
    assert (
        sglang_spec.draft_kv_layers(mimo, (0, 5, 17), "EAGLE", "m", "m")[0] == 3
    )  # no rewrite before 0.5.18
    # a separate draft checkpoint of a rewritten architecture
    assert sglang_spec.draft_kv_layers(base, (0, 5, 23), "EAGLE", "d", "m", draft=mimo)[0] == 1


def test_a_switch_with_a_value_stops_sglang() -> None:
    """A store_true option takes no value: ``--enable-dp-attention true`` leaves 'true' over and SGLang's
    parse_args refuses to start; a --config file writes a quoted "true" or a number that way
    (ConfigArgumentMerger._add_scalar_arg). kvlint read such a word as the switch's value (on, or off for "false")."""
    s = _cmd("--enable-dp-attention", "true", version="0.5.23")
    assert any("takes no value" in m for m in _rules(s, "KV206"))
    text = 'disable-radix-cache: "false"\nenable-metrics: true\n'
    cfg = parse_sglang_argv(
        ["--model-path", "x", "--config", "/c.yaml"],
        version="0.5.8",
        config_loader=lambda path: (text, None),
    )
    msgs = _rules(cfg, "KV206")
    assert len(msgs) == 1 and "--disable-radix-cache" in msgs[0], msgs
    assert cfg.get("enable_metrics") is True


def test_a_value_glued_to_a_switch_stops_sglang() -> None:
    """argparse refuses ``--switch=value`` for an option of nargs=0 ("ignored explicit argument 'false'"), a
    store_true switch or 0.5.14 - 0.5.19's store-const aliases of ``--cuda-graph-backend-prefill``; such an alias
    followed by a word leaves it over as a switch does. kvlint read ``--enable-dp-attention=false`` as the string
    "false" (DP attention on) and said nothing of either."""
    s = _cmd("--enable-dp-attention=false", version="0.5.16")
    (msg,) = _rules(s, "KV206")
    assert "ignored explicit argument 'false'" in msg
    assert s.get("enable_dp_attention") is True
    alias = _cmd("--disable-piecewise-cuda-graph=1", version="0.5.16")
    assert len(_rules(alias, "KV206")) == 1 and alias.get("cuda_graph_backend_prefill") == "disabled"
    word = _cmd("--enable-breakable-cuda-graph", "true", version="0.5.17")
    assert any("takes no value" in m for m in _rules(word, "KV206"))
    assert word.get("cuda_graph_backend_prefill") == "breakable"
    assert _rules(_cmd("--enable-metrics", "--disable-piecewise-cuda-graph", version="0.5.16"), "KV206") == []


def test_attention_dp_is_attn_dp_size_from_0_5_22() -> None:
    """0.5.22 and 0.5.23 resolve ``--dp-size N --enable-dp-attention`` to ``--attn-dp-size N`` before any handler
    reads the layout (handle_deprecated_dp_attention), and attention DP is ``attn_dp_size > 1``: the new spelling
    sizes as the old one (kvlint ignored it), and ``--enable-dp-attention`` alone (dp_size 1) adds no DP-attention
    reserve term, which 0.5.21 still adds (its dp_size == 1 reset runs after the memory settings)."""
    old = _plan(LLAMA, "--dp-size", "2", "--enable-dp-attention", version="0.5.23", tp=2)
    new = _plan(LLAMA, "--attn-dp-size", "2", version="0.5.23", tp=2)
    plain = _plan(LLAMA, version="0.5.23", tp=2)
    assert new.mem_fraction_static == old.mem_fraction_static < plain.mem_fraction_static
    assert new.plan.kv_bytes_per_token == old.plan.kv_bytes_per_token
    alone = _plan(LLAMA, "--enable-dp-attention", version="0.5.23")
    assert alone.mem_fraction_static == _plan(LLAMA, version="0.5.23").mem_fraction_static
    assert any("attention DP is off" in n for n in alone.plan.assumptions)
    before = _plan(LLAMA, "--enable-dp-attention", version="0.5.21")
    assert before.mem_fraction_static < _plan(LLAMA, version="0.5.21").mem_fraction_static


def test_0_5_17_breakable_rules_as_its_wheel() -> None:
    """0.5.17 (read; kvlint took it as 0.5.16) already has 0.5.18's breakable rules (no DP-attention, LoRA or DeepEP
    rule, DeepEP's aligned sizes and 1 GiB, no --context-length clamp), plus MLA outside DeepSeek sparse attention
    and Nemotron-H."""
    dp = ("--dp-size", "2", "--enable-dp-attention")
    assert not _graphs(LLAMA, *dp, version="0.5.16", tp=2).on
    assert _graphs(LLAMA, *dp, version="0.5.17", tp=2).on
    assert not _graphs(LLAMA, "--enable-lora", version="0.5.16").on
    assert _graphs(LLAMA, "--enable-lora", version="0.5.17").on
    pg = _graphs(LLAMA, "--moe-a2a-backend", "deepep", version="0.5.17")
    aligned = {(s + 7) // 8 * 8 for s in sglang_graphs.capture_sizes(2048, (0, 5, 17))}
    assert pg.on and pg.reserve_mib(8192, amd=False)[0] == len(aligned) * PER + 1024
    assert _graphs(LLAMA, "--context-length", "1000", version="0.5.16").clamp == 1000
    assert _graphs(LLAMA, "--context-length", "1000", version="0.5.17").clamp is None
    assert not _graphs(DSV3, version="0.5.17", tp=8).on  # MLA, no index_topk
    assert _graphs(DSV3, version="0.5.18", tp=8).on
    base = _model(DSV3)
    config = {**base.config, "index_topk": 2048}
    dsa = dataclasses.replace(base, config=config, text_config=config)
    assert sglang_prelude(_cmd("--tp-size", "8", version="0.5.17"), dsa).prefill_graphs.on
    nemo = dataclasses.replace(_model(LLAMA), architectures=["NemotronHForCausalLM"])
    assert not sglang_prelude(_cmd(version="0.5.17"), nemo).prefill_graphs.on
    assert sglang_prelude(_cmd(version="0.5.18"), nemo).prefill_graphs.on


def test_hybrid_state_pool_switches_of_0_5_14_and_0_5_17() -> None:
    """0.5.14 already resolves ``--mamba-radix-cache-strategy auto`` to extra_buffer for the listed hybrids
    (ServerArgs._handle_mamba_radix_cache), and 0.5.17 already keeps the ratio split's padding slot and charges the
    largest pipeline stage's state layers (kv_cache_configurator.py): kvlint took 0.5.14 as 0.5.13 and 0.5.17 as
    0.5.16."""
    from kvlint.memory import sglang_mamba

    kw = {"disable_radix_cache": False, "disable_overlap_schedule": False, "page_size": 1, "strategy": None}
    archs = ("Qwen3NextForCausalLM",)
    assert sglang_mamba.request_ratio((0, 5, 13), archs, **kw)[1] == "no_buffer"
    assert sglang_mamba.request_ratio((0, 5, 14), archs, **kw)[1] == "extra_buffer"
    per_req, rest = 1 << 20, 10 << 30
    args = {"full_memory_ratio": 0.9, "max_mamba_cache_size": None, "disable_radix_cache": False}
    k16, _ = sglang_mamba.pool_slots(rest, per_req, (0, 5, 16), max_running_requests=None, **args)
    k17, b17 = sglang_mamba.pool_slots(rest, per_req, (0, 5, 17), max_running_requests=None, **args)
    assert k17 == k16 - 1 and b17 == (k17 + 1) * per_req
    layers = list(range(0, 48, 4))  # 12 state layers over 48
    assert sglang_mamba.stage_layers(layers, 48, 2, (0, 5, 16)) == 12
    assert sglang_mamba.stage_layers(layers, 48, 2, (0, 5, 17)) == 6


def test_a_config_file_mapping_is_json_for_cuda_graph_config() -> None:
    """A --config file's mapping value is written as its JSON text (ConfigArgumentMerger._convert_config_to_args,
    ``json.dumps``, 0.5.14 on), so ``cuda-graph-config: {prefill: {bs: [...]}}`` sizes the prefill reserve; kvlint
    wrote Python's repr of it, which is not JSON."""
    text = "cuda-graph-config:\n  prefill:\n    bs: [8, 16, 32]\n"
    s = parse_sglang_argv(
        ["--model-path", "x", "--config", "/c.yaml"],
        version="0.5.23",
        config_loader=lambda path: (text, None),
    )
    s.version = "0.5.23"
    assert not _rules(s, "KV206")
    pg = sglang_prelude(s, _model(LLAMA)).prefill_graphs
    assert pg.sizes == (8, 16, 32) and pg.reserve_mib(8192, amd=False)[0] == 3 * PER


def test_a_cuda_graph_config_setting_the_release_does_not_take_is_kv206() -> None:
    """``parse_cuda_graph_config_arg`` refuses a key outside the release's ``ALLOWED_KEYS_PER_PHASE`` ("unknown
    key"), so SGLang does not start: a misspelt ``max_batch_size``, ``max_seq_len`` before 0.5.21 (the prefill phase
    takes it from 0.5.21), ``tc_compiler`` from 0.5.22 (dropped). kvlint read such a JSON silently; an unknown
    release is not judged."""

    def refused(version: str | None, config: dict) -> list[str]:
        s = _cmd("--cuda-graph-config", json.dumps(config), version=version or "")
        return [m for m in _rules(s, "KV206") if "does not take the setting" in m]

    (msg,) = refused("0.5.16", {"decode": {"max_batch_size": 64}})
    assert "'max_batch_size' in the decode phase" in msg
    assert refused("0.5.16", {"prefill": {"max_seq_len": 4096}}) != []
    assert refused("0.5.23", {"prefill": {"max_seq_len": 4096}}) == []
    assert refused("0.5.23", {"decode": {"tc_compiler": "inductor"}}) != []
    assert refused("0.5.19", {"decode": {"tc_compiler": "inductor", "max_bs": 64}}) == []
    assert refused(None, {"decode": {"max_batch_size": 64}}) == []
    s = _cmd("--cuda-graph-config", json.dumps({"decode": {"max_batch_size": 64}}), version="0.5.16")
    assert s.get("cuda_graph_config") is None  # refused: the plan's graph reserve is made without it
