"""The CUDA-graph term reads what the command line sets of vLLM's capture (kvlint.memory.vllm.cudagraph_user):
``cudagraph_mode``, ``cudagraph_capture_sizes``, ``max_cudagraph_capture_size``, ``--cuda-graph-sizes``, ``-O0``/
``-O1``, a compilation level other than 3 and ``--performance-mode interactivity`` (vllm@0.19.0:vllm/config/vllm.py::
VllmConfig._set_cudagraph_sizes, vllm/v1/worker/gpu_model_runner.py::GPUModelRunner.capture_model). memory47 counted
the default FULL_AND_PIECEWISE graphs whatever these said."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines import parse_command_line
from kvlint.memory import calibration as cal
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import (
    VllmSettings,
    effective_cudagraph_user,
    plan_vllm,
    plan_vllm_detailed,
    settings_from_config,
)
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "plan" / "models"
GiB = 1 << 30
H100 = int(79.19 * GiB)
KW = dict(gpu_name="NVIDIA H100", compute_capability="9.0")
V19 = parse_version("0.19.0")


def _graphs(*flags: str, version: str = "0.19.0") -> float:
    """The CUDA-graph term of a 32-layer stage for the command line ``flags`` on ``version``, in graphs (0 when it
    prices none), with the settings kvlint reads from it; 256 sequences, max_num_batched_tokens 8,192 unless set."""
    cfg = parse_command_line(["vllm", "serve", "m", "--max-num-seqs", "256", *flags], version)
    assert not [f for f in cfg.findings if f.severity == "error"], [f.message for f in cfg.findings]
    s = settings_from_config(cfg)
    v = parse_version(version)
    b = cal.cudagraph_bytes(32, 256, 1, s.max_num_batched_tokens or 8192, None, v, s.cudagraph_user)
    return 0 if b == 0 else (b - cal.CG_BASE_GIB * GiB) / (cal.K_CUDAGRAPH * (1 << 20) * 32)


DEC = len([s for s in cal.capture_sizes(512) if s <= 256])  # 35 FULL decode sizes at 256 sequences


def test_modes_count_the_graphs_capture_model_captures() -> None:
    """At 512 (51 sizes) and 256 sequences (35 decode sizes up to 256): PIECEWISE and FULL one graph a size,
    FULL_DECODE_ONLY the decode sizes, FULL_AND_PIECEWISE both, NONE none."""
    dec = DEC
    counts = {m: cal.cudagraph_count(512, 256, 1, V19, mode=m) for m in cal.CUDAGRAPH_MODES}
    assert counts == {
        "NONE": 0,
        "PIECEWISE": 51,
        "FULL": 51,
        "FULL_DECODE_ONLY": dec,
        "FULL_AND_PIECEWISE": 51 + dec,
    }
    assert cal.cudagraph_count(512, 256, 1, V19) == counts["FULL_AND_PIECEWISE"]  # the default


def test_the_command_lines_mode_and_sizes_are_read() -> None:
    default = _graphs()
    assert round(default) == 51 + DEC
    assert round(_graphs("--compilation-config", '{"cudagraph_mode": "PIECEWISE"}')) == 51
    assert round(_graphs("--compilation-config", '{"cudagraph_mode": "full_decode_only"}')) == DEC
    assert _graphs("--compilation-config", '{"cudagraph_mode": "NONE"}') == 0
    assert _graphs("-O0") == 0  # OPTIMIZATION_LEVEL_00: cudagraph_mode NONE
    assert round(_graphs("-O1")) == 51  # OPTIMIZATION_LEVEL_01: PIECEWISE
    assert _graphs("--compilation-config", '{"level": 0}') == 0  # no piecewise compilation: NONE
    # listed sizes: 4 piecewise + 4 FULL decode graphs; the sizes above max_num_batched_tokens are dropped
    assert round(_graphs("--compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8, 8]}')) == 8
    big = _graphs(
        "--max-num-batched-tokens", "2048", "--compilation-config", '{"cudagraph_capture_sizes": [8, 4096]}'
    )
    assert round(big) == 2
    # max_cudagraph_capture_size: the stepped list up to it (83 sizes at 1,024), decode sizes still up to 256
    assert round(_graphs("--max-cudagraph-capture-size", "1024")) == 83 + DEC
    # performance_mode interactivity: every size from 1 to 32 first (76 sizes at 512; 1 - 32 and 40 - 256 decode)
    assert round(_graphs("--performance-mode", "interactivity")) == 76 + 32 + 28
    # the plan carries it: 0.20.0 deducts the estimate by default
    m = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    plans = {}
    for mode in ("PIECEWISE", "FULL_AND_PIECEWISE"):
        cfg = parse_command_line(
            ["vllm", "serve", "m", "--compilation-config", f'{{"cudagraph_mode": "{mode}"}}']
        )
        plans[mode] = plan_vllm(settings_from_config(cfg).changed(version="0.20.0"), m, H100, **KW)
    assert 0 < plans["PIECEWISE"].cudagraph_bytes < plans["FULL_AND_PIECEWISE"].cudagraph_bytes


def test_cuda_graph_sizes_by_release() -> None:
    """--cuda-graph-sizes 256 (sgl-project/ome's Llama-3.1-405B runtime on vLLM 0.9.0.1): before 0.11.1 the
    scheduler's list [1, 2, 4] + multiples of 8 up to 256 (35 piecewise graphs, 0.9 captures no FULL ones); from
    0.11.1 the capture list itself, one size (1 piecewise + 1 FULL decode graph)."""
    assert round(_graphs("--cuda-graph-sizes", "256", version="0.9.0.1")) == 35
    assert round(_graphs("--cuda-graph-sizes", "256", version="0.11.1")) == 2


def test_a_users_sizes_replace_gpt_oss_own_capture() -> None:
    """GptOssForCausalLMConfig raises the largest size to 1,024 only when the user set no capture sizes."""
    oss = "openai--gpt-oss-20b"
    cfg = parse_command_line(["vllm", "serve", "m", "--max-cudagraph-capture-size", "512"], "0.19.0")
    s = settings_from_config(cfg).changed(estimate_cudagraphs=True)
    m = resolve_model(str(MODELS / oss), allow_hub=False)
    p = plan_vllm(s, m, H100, **KW)
    layers = 24
    graphs = (p.cudagraph_bytes - cal.CG_BASE_GIB * GiB) / (cal.K_CUDAGRAPH * (1 << 20) * layers)
    assert round(graphs) == cal.cudagraph_count(512, p.max_num_seqs, 1, V19)


def test_hostile_sizes_size_no_loop() -> None:
    """A largest size of 10^15 and 10^9 sequences are counted, not enumerated; a list past 65,536 entries is not
    read (the default prices the graphs)."""
    assert cal._sizes_le(10**15, 10**15, True) == 3 + 31 + (10**15 - 256) // 16 + 1
    assert cal.cudagraph_count(10**15, 10**9, 1, V19, mode="PIECEWISE") == cal._sizes_le(10**15, 10**15, True)
    huge = "[" + ",".join(["8"] * 70000) + "]"
    assert round(_graphs("--compilation-config", '{"cudagraph_capture_sizes": ' + huge + "}")) == 51 + DEC
    assert _graphs("--compilation-config", '{"max_cudagraph_capture_size": 1000000000000000}') > 0


def test_cudagraph_capture_sizes_flag_takes_several_values() -> None:
    """--cudagraph-capture-sizes is list[int] in EngineArgs, nargs="+" (vllm@0.19.0:vllm/engine/arg_utils.py,
    get_kwargs of CompilationConfig.cudagraph_capture_sizes): its values were reported as KV205 positional
    arguments, and only the first was read."""
    assert round(_graphs("--cudagraph-capture-sizes", "1", "2", "4", "8")) == 8


def test_chunked_local_attention_captures_no_full_graph() -> None:
    """Llama 4 (attention_chunk_size: ChunkedLocalAttention, AttentionCGSupport.NEVER): vLLM sets
    cudagraph_mode=PIECEWISE, so the plan prices the 51 piecewise graphs only (gt-356, Llama 4 Scout at 0.19.0,
    printed 'PIECEWISE=51 (largest=512)'), and the fit counts gt-356 so; Llama 3 keeps its FULL decode graphs."""
    scout = resolve_model(str(MODELS / "meta-llama--Llama-4-Scout-17B-16E-Instruct"), allow_hub=False)
    s = VllmSettings(version="0.20.0", tensor_parallel_size=4, max_model_len=8192)
    d = plan_vllm_detailed(s, scout, H100, **KW)
    layers = max(d.stage_layers)
    graphs = (d.plan.cudagraph_bytes - cal.CG_BASE_GIB * GiB) / (cal.K_CUDAGRAPH * (1 << 20) * layers)
    assert round(graphs) == 51
    obs = next(o for o in cal.OBSERVATIONS if o.gt == "gt-356")
    assert obs.graphs == 51
    llama = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    p = plan_vllm(VllmSettings(version="0.20.0", max_model_len=8192), llama, H100, **KW)
    assert round((p.cudagraph_bytes - cal.CG_BASE_GIB * GiB) / (cal.K_CUDAGRAPH * (1 << 20) * 32)) > 51


def test_a_pooling_model_captures_no_full_graph() -> None:
    """'Pooling models do not support full cudagraphs. Overriding cudagraph_mode to PIECEWISE.' (VllmConfig, from
    0.11.1 for any mode with full graphs; 0.11.0 for the default): E5-Mistral (MistralModel, the pooling runner) at
    0.20.0 prices its 51 piecewise graphs, the same model on the generate runner 51 + the FULL decode ones."""
    model = resolve_model("intfloat/e5-mistral-7b-instruct", allow_hub=False)
    pooled = VllmSettings(version="0.20.0", max_model_len=8192)
    p = plan_vllm_detailed(pooled, model, H100, **KW)
    g = plan_vllm_detailed(pooled.changed(runner="generate"), model, H100, **KW)
    unit = cal.K_CUDAGRAPH * (1 << 20) * max(p.stage_layers)
    assert round((p.plan.cudagraph_bytes - cal.CG_BASE_GIB * GiB) / unit) == 51
    assert round((g.plan.cudagraph_bytes - cal.CG_BASE_GIB * GiB) / unit) > 51
    full = cal.CudagraphUser(mode="FULL")
    assert effective_cudagraph_user(full, parse_version("0.19.0"), pooling=True).mode == "PIECEWISE"
    assert (
        effective_cudagraph_user(full, parse_version("0.11.0"), pooling=True).mode == "FULL"
    )  # the default only


def test_gpt_oss_overrides_a_one_value_cuda_graph_sizes_before_0_11_1() -> None:
    """vLLM 0.11.0's GptOssForCausalLMConfig replaces a one-value scheduler list below 992 (--cuda-graph-sizes 256
    included) with its stepped list up to 992 (81 sizes); from 0.11.1 a user's sizes win (the override runs only
    when neither cudagraph_capture_sizes nor max_cudagraph_capture_size is set)."""
    v11 = parse_version("0.11.0")
    u = cal.CudagraphUser(stepped_to=256)
    unit = cal.K_CUDAGRAPH * (1 << 20) * 24
    b = cal.cudagraph_bytes(24, 256, 1, 8192, 992, v11, u)
    assert round((b - cal.CG_BASE_GIB * GiB) / unit) == cal.cudagraph_count(992, 256, 1, v11, model_list=True)
    assert len(cal.capture_sizes(992)) == 81
    own = cal.cudagraph_bytes(24, 256, 1, 8192, 1024, V19, cal.CudagraphUser(sizes=(256,)))
    assert round((own - cal.CG_BASE_GIB * GiB) / unit) == 2


def test_verify_prices_the_graphs_the_plan_prices() -> None:
    """kvlint verify recomputes the graph term beside the plan: for a pooling model it counted the FULL decode
    graphs the plan drops (0.72 against the plan's 0.45 GiB for E5-Mistral with gt-291's log at 0.20.2)."""
    from kvlint.pipeline import Options
    from kvlint.verify.compare import verify_log
    from kvlint.verify.logparse import parse_log

    log = parse_log((ROOT / "fixtures" / "logs" / "gt-291.log").read_text(encoding="utf-8"))
    opts = Options(allow_hub=False, accelerator="a100-80gb", engine_version="0.20.2")
    for extra in ((), ("--runner", "generate")):
        res = verify_log(
            log, opts, model="intfloat/e5-mistral-7b-instruct", extra_args=("--max-model-len", "8192", *extra)
        )
        by = {f.key: f for f in res.figures}
        assert res.plan is not None and res.plan.plan.cudagraph_bytes > 0
        assert by["cudagraph_gib"].predicted == pytest.approx(res.plan.plan.cudagraph_bytes / GiB)
