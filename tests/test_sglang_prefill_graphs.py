"""SGLang's prefill (piecewise / breakable) CUDA graphs in the default mem_fraction_static, by release
(docs/engine-memory-model.md §3.2, kvlint/memory/sglang_graphs.py). Every expected fraction is computed with the
model's own functions (default_mem_fraction_static, capture_sizes, gpu_tier): the tests check when the reserve
applies, what sizes it, and that it enters before the 10 GiB floor."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory import sglang_graphs
from kvlint.memory.sglang import (
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


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str, model_path: str = "x"):
    s = parse_command_line(
        ["python", "-m", "sglang.launch_server", "--model-path", model_path, *args], version
    )
    s.version = version
    return s


def _plan(model: str, *args: str, version: str, gpu: str = "h100-80gb", tp: int = 1, model_path: str = "x"):
    acc = lookup(gpu)
    s = _cmd("--tp-size", str(tp), *args, version=version, model_path=model_path)
    return plan_sglang_detailed(s, _model(model), acc.memory_bytes, gpus=tp, gpu_name=acc.name)


def _graphs(model: str, *args: str, version: str, tp: int = 1, model_path: str = "x"):
    s = _cmd("--tp-size", str(tp), *args, version=version, model_path=model_path)
    return sglang_prelude(s, _model(model)).prefill_graphs


def _gpu_mib(gpu: str) -> float:
    return lookup(gpu).memory_bytes / (1 << 20) + 512


def _no_graph_fraction(version: str, gpu: str = "h100-80gb", tp: int = 1, **kw) -> float:
    return default_mem_fraction_static(sglang_version(version)[0], _gpu_mib(gpu), tp=tp, **kw)[0]


def test_capture_sizes_follow_the_release_grid() -> None:
    """Sizes are increasing, never above the maximum, and end at the last grid point under it; 0.5.8's 576 – 1024
    segment starts at 640 (``range(640, 1025, 64)``), 0.5.9's at 576."""
    for v in ((0, 5, 8), (0, 5, 9), (0, 5, 23)):
        for top in (1, 4, 100, 2048, 8192, 16384, 16000):
            sizes = sglang_graphs.capture_sizes(top, v)
            assert sizes == sorted(set(sizes)) and all(0 < s <= top for s in sizes)
            if top >= 4:
                assert sizes and top - sizes[-1] < 512
    assert 576 in sglang_graphs.capture_sizes(2048, (0, 5, 9))
    assert 576 not in sglang_graphs.capture_sizes(2048, (0, 5, 8))
    assert sglang_graphs.capture_sizes(-1, (0, 5, 23)) == []  # chunked prefill off (-1): nothing captured


def test_the_reserve_by_release_for_a_dense_model() -> None:
    """Llama-3.1-8B on one H100: no term up to 0.5.7, opt-in in 0.5.8, on by default from 0.5.10 (tc_piecewise) and
    from 0.5.15 (breakable); the plan's fraction is the heuristic's with the graphs' 8 MiB per captured size."""
    cps = gpu_tier(_gpu_mib("h100-80gb"), 1, (0, 5, 23))[0]
    assert _graphs(LLAMA, version="0.5.7") is None
    assert _plan(LLAMA, version="0.5.7").mem_fraction_static == _no_graph_fraction("0.5.7")
    off = _graphs(LLAMA, version="0.5.8")
    assert off is not None and not off.on
    assert _plan(LLAMA, version="0.5.8").mem_fraction_static == _no_graph_fraction("0.5.8")
    for version, args in (
        ("0.5.8", ("--enable-piecewise-cuda-graph",)),
        ("0.5.10", ()),
        ("0.5.13", ()),
        ("0.5.16", ()),
        ("0.5.23", ()),
    ):
        pg = _graphs(LLAMA, *args, version=version)
        assert pg is not None and pg.on, version
        mib = len(sglang_graphs.capture_sizes(cps, sglang_version(version)[0])) * sglang_graphs.PER_SIZE_MIB
        assert pg.reserve_mib(cps, amd=False)[0] == mib
        got = _plan(LLAMA, *args, version=version)
        assert (
            got.mem_fraction_static
            == _no_graph_fraction(version, prefill_graph_mib=mib)
            < _no_graph_fraction(version)
        ), version
        assert "prefill CUDA graphs" in got.plan.assumptions[0], got.plan.assumptions


def test_switches_that_turn_them_off_by_release() -> None:
    for version, args in (
        ("0.5.10", ("--disable-piecewise-cuda-graph",)),
        ("0.5.13", ("--disable-piecewise-cuda-graph",)),
        ("0.5.16", ("--disable-piecewise-cuda-graph",)),
        ("0.5.16", ("--disable-cuda-graph",)),
        ("0.5.23", ("--disable-prefill-cuda-graph",)),
        ("0.5.23", ("--cuda-graph-backend-prefill", "disabled")),
        ("0.5.23", ("--disable-cuda-graph",)),
    ):
        assert not _graphs(LLAMA, *args, version=version).on, (version, args)
        # --disable-cuda-graph also drops the decode graphs' term from 0.5.15 (test_pd_roles_decode_graphs_...)
        no_decode = "--disable-cuda-graph" in args
        assert _plan(LLAMA, *args, version=version).mem_fraction_static == _no_graph_fraction(
            version, decode_graphs=not no_decode
        )
    # --disable-cuda-graph does not reach the piecewise switch before 0.5.15 (the reserve reads only that switch)
    assert _graphs(LLAMA, "--disable-cuda-graph", version="0.5.13").on


def test_automatic_rules_by_release() -> None:
    """DP attention turns them off in the tc_piecewise (0.5.10 – 0.5.14) and 0.5.15 – 0.5.17 breakable rules, not
    from 0.5.18; pp > 1 up to 0.5.14 and from 0.5.19 (not 0.5.15 – 0.5.18); speculative decoding only in 0.5.10 –
    0.5.12; LoRA up to 0.5.17; --enforce-piecewise-cuda-graph (0.5.10 – 0.5.14) and an explicit prefill backend
    (0.5.15 on) skip the rules."""
    dp = ("--dp-size", "2", "--enable-dp-attention")
    for version, on in (
        ("0.5.10", False),
        ("0.5.13", False),
        ("0.5.16", False),
        ("0.5.18", True),
        ("0.5.23", True),
    ):
        assert _graphs(LLAMA, *dp, version=version, tp=2).on == on, version
    for version, on in (
        ("0.5.13", False),
        ("0.5.16", True),
        ("0.5.18", True),
        ("0.5.19", False),
        ("0.5.23", False),
    ):
        assert _graphs(LLAMA, "--pp-size", "2", version=version).on == on, version
    spec = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")
    assert not _graphs(LLAMA, *spec, version="0.5.10").on
    assert _graphs(LLAMA, *spec, version="0.5.13").on
    for version, on in (("0.5.13", False), ("0.5.16", False), ("0.5.23", True)):
        assert _graphs(LLAMA, "--enable-lora", version=version).on == on, version
    assert _graphs(LLAMA, *dp, "--enforce-piecewise-cuda-graph", version="0.5.13", tp=2).on
    assert _graphs(LLAMA, "--pp-size", "2", "--cuda-graph-backend-prefill", "breakable", version="0.5.23").on


def test_mla_reserve_is_flat_and_breakable_skips_mla_only_in_0_5_15_to_0_5_17() -> None:
    """An MLA model reserves 1.5 GiB whatever its chunked-prefill size (0.5.10 on); 0.5.8 counts its sizes up to
    2048 like any model; the 0.5.15 – 0.5.17 breakable rules turn the graphs off for MLA."""
    for version in ("0.5.13", "0.5.23"):
        pg = _graphs(DSV3, version=version, tp=8)
        assert pg.on
        assert (
            pg.reserve_mib(8192, amd=False)[0]
            == pg.reserve_mib(16384, amd=False)[0]
            == sglang_graphs.MLA_RESERVE_MIB
        )
        got = _plan(DSV3, version=version, gpu="h200", tp=8)
        want = _no_graph_fraction(version, gpu="h200", tp=8, prefill_graph_mib=sglang_graphs.MLA_RESERVE_MIB)
        assert got.mem_fraction_static == want
    assert not _graphs(DSV3, version="0.5.16", tp=8).on
    old = _graphs(DSV3, "--enable-piecewise-cuda-graph", version="0.5.8", tp=8)
    assert old.reserve_mib(16384, amd=False)[0] == len(sglang_graphs.capture_sizes(2048, (0, 5, 8))) * 8


def test_the_reserve_enters_before_the_10_gib_floor() -> None:
    """SGLang adds the graphs' reserve before ``max(reserved, 10 GiB)``: where the rest of the reserve is far under
    the floor the graphs do not move the fraction; above it they lower it."""
    small = ("--chunked-prefill-size", "2048", "--cuda-graph-max-bs", "8")
    pg = _graphs(LLAMA, *small, version="0.5.13")
    assert pg.on and pg.reserve_mib(2048, amd=False)[0] > 0
    assert _plan(LLAMA, *small, version="0.5.13").mem_fraction_static == _no_graph_fraction(
        "0.5.13", chunked_prefill_size=2048, cuda_graph_max_bs=8
    )
    # a 40 GiB GPU has no floor: the same flags lower the fraction there
    got = _plan(LLAMA, *small, version="0.5.13", gpu="a100-40gb").mem_fraction_static
    assert got < _no_graph_fraction("0.5.13", gpu="a100-40gb", chunked_prefill_size=2048, cuda_graph_max_bs=8)


def test_caps_on_the_captured_maximum() -> None:
    """--max-total-tokens and a llama-2 model path cap the default maximum (0.5.10 on); --context-length clamps it
    in 0.5.13 – 0.5.17 only; a user maximum replaces the chunked-prefill size."""
    cps = 8192

    def n(pg) -> float:
        return pg.reserve_mib(cps, amd=False)[0] / sglang_graphs.PER_SIZE_MIB

    v = (0, 5, 13)
    full = len(sglang_graphs.capture_sizes(cps, v))
    assert n(_graphs(LLAMA, version="0.5.13")) == full
    assert n(_graphs(LLAMA, "--max-total-tokens", "1000", version="0.5.13")) == len(
        sglang_graphs.capture_sizes(1000, v)
    )
    assert n(_graphs(LLAMA, version="0.5.13", model_path="meta-llama/Llama-2-7b-hf")) == len(
        sglang_graphs.capture_sizes(4096, v)
    )
    assert n(_graphs(LLAMA, "--context-length", "3000", version="0.5.13")) == len(
        sglang_graphs.capture_sizes(3000, v)
    )
    assert n(_graphs(LLAMA, "--context-length", "3000", version="0.5.23")) == len(
        sglang_graphs.capture_sizes(cps, (0, 5, 23))
    )
    assert n(_graphs(LLAMA, "--piecewise-cuda-graph-max-tokens", "1024", version="0.5.10")) == len(
        sglang_graphs.capture_sizes(1024, (0, 5, 10))
    )
    assert n(_graphs(LLAMA, "--cuda-graph-max-bs-prefill", "1024", version="0.5.23")) == len(
        sglang_graphs.capture_sizes(1024, (0, 5, 23))
    )


def test_deepep_from_0_5_18_aligns_sizes_and_adds_a_gibibyte() -> None:
    """DeepEP's all-to-all turns the graphs off up to 0.5.17; from 0.5.18 the breakable graphs stay on, their sizes
    rounded up to multiples of 8 from a 2048 maximum before the memory settings, plus 1 GiB."""
    args = ("--moe-a2a-backend", "deepep")
    assert not _graphs(LLAMA, *args, version="0.5.16").on
    pg = _graphs(LLAMA, *args, version="0.5.23")
    aligned = {(s + 7) // 8 * 8 for s in sglang_graphs.capture_sizes(2048, (0, 5, 23))}
    for cps in (8192, 16384):
        assert pg.reserve_mib(cps, amd=False)[0] == len(aligned) * sglang_graphs.PER_SIZE_MIB + 1024


def test_amd_and_multimodal_turn_them_off() -> None:
    """A non-CUDA GPU (SGLang's is_hip) and a multimodal model (ModelConfig.is_multimodal) keep the fraction without
    the graphs' reserve."""
    pg = _graphs(LLAMA, version="0.5.23")
    assert pg.on and pg.reserve_mib(16384, amd=True)[0] == 0.0
    got = _plan(LLAMA, version="0.5.23", gpu="mi300x")
    assert got.mem_fraction_static == _no_graph_fraction("0.5.23", gpu="mi300x")
    for version in ("0.5.13", "0.5.23"):
        assert not _graphs(VL, version=version).on, version


def test_pd_roles_decode_graphs_and_deepep_terms_from_0_5_15() -> None:
    """From 0.5.15 the reserve knows the PD role and the decode graphs: a prefill node has no decode-graph term, a
    decode node sizes its activation term from its running requests and reserves nothing for prefill graphs, and
    --disable-cuda-graph drops both graph terms. DeepEP's 2 GiB exists from 0.5.15 only (no such term in the 0.5.3 -
    0.5.13 wheels)."""
    gpu = _gpu_mib("h100-80gb")
    v23 = (0, 5, 23)
    base = _plan(LLAMA, version="0.5.23").mem_fraction_static
    prefill = _plan(LLAMA, "--disaggregation-mode", "prefill", version="0.5.23").mem_fraction_static
    pg = _graphs(LLAMA, "--disaggregation-mode", "prefill", version="0.5.23")
    graphs = pg.reserve_mib(gpu_tier(gpu, 1, v23)[0], amd=False)[0]
    assert (
        prefill
        == default_mem_fraction_static(
            v23, gpu, tp=1, prefill_graph_mib=graphs, disaggregation_mode="prefill"
        )[0]
    )
    assert prefill > base
    decode = _plan(LLAMA, "--disaggregation-mode", "decode", "--max-running-requests", "64", version="0.5.23")
    assert not _graphs(LLAMA, "--disaggregation-mode", "decode", version="0.5.23").on
    want = default_mem_fraction_static(v23, gpu, tp=1, disaggregation_mode="decode", max_running_requests=64)[
        0
    ]
    assert decode.mem_fraction_static == want > base
    off = _plan(LLAMA, "--disable-cuda-graph", version="0.5.23").mem_fraction_static
    assert off == default_mem_fraction_static(v23, gpu, tp=1, decode_graphs=False)[0] > base
    # before 0.5.15 none of this applies: the disaggregation mode only turns the piecewise graphs off (0.5.13)
    assert _plan(LLAMA, "--disaggregation-mode", "prefill", version="0.5.13").mem_fraction_static == (
        _no_graph_fraction("0.5.13")
    )
    for version in ("0.5.5", "0.5.13"):
        v = sglang_version(version)[0]
        assert default_mem_fraction_static(v, gpu, tp=8, deepep=True) == default_mem_fraction_static(
            v, gpu, tp=8
        )
    assert (
        default_mem_fraction_static(v23, gpu, tp=8, deepep=True)[0]
        < default_mem_fraction_static(v23, gpu, tp=8)[0]
    )


def test_enable_breakable_cuda_graph_is_an_explicit_prefill_backend_in_0_5_15_to_0_5_19() -> None:
    """``--enable-breakable-cuda-graph`` stores ``cuda_graph_backend_prefill = breakable`` (a deprecated alias in the
    0.5.15 – 0.5.19 wheels), so the automatic rules are skipped: an MLA model in 0.5.16 (which the rules turn off)
    keeps its graphs and the flat MLA reserve. In 0.5.13 it is a separate runner switch, not the reserve's."""
    flag = "--enable-breakable-cuda-graph"
    assert not _graphs(DSV3, version="0.5.16", tp=8).on
    pg = _graphs(DSV3, flag, version="0.5.16", tp=8)
    assert pg.on and pg.explicit
    assert pg.reserve_mib(8192, amd=False)[0] == sglang_graphs.MLA_RESERVE_MIB
    got = _plan(DSV3, flag, version="0.5.16", gpu="h200", tp=8)
    want = _no_graph_fraction("0.5.16", gpu="h200", tp=8, prefill_graph_mib=sglang_graphs.MLA_RESERVE_MIB)
    assert got.mem_fraction_static == want
    # 0.5.13: no effect on the piecewise switch (DP attention still turns the graphs off)
    dp = ("--dp-size", "2", "--enable-dp-attention")
    assert not _graphs(LLAMA, *dp, flag, version="0.5.13", tp=2).on


def test_deepseek_sparse_attention_config_turns_them_off_in_0_5_10_only() -> None:
    """0.5.10's architecture rule also holds ``is_deepseek_nsa`` (a DeepseekV3ForCausalLM config with
    ``index_topk``); 0.5.13 dropped it. Without ``index_topk`` the same model keeps its graphs."""
    base = _model(DSV3)
    assert base.architectures[0] == "DeepseekV3ForCausalLM" and "index_topk" not in base.config
    config = {**base.config, "index_topk": 2048}  # (a text-only model's text config is its config)
    nsa = dataclasses.replace(base, config=config, text_config=config)

    def graphs(model, version: str):
        s = _cmd("--tp-size", "8", version=version)
        return sglang_prelude(s, model).prefill_graphs

    assert graphs(base, "0.5.10").on
    off = graphs(nsa, "0.5.10")
    assert not off.on and "index_topk" in off.why
    assert graphs(nsa, "0.5.13").on
