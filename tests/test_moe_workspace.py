"""The unquantized MoE experts' workspace that vLLM 0.14 - 0.19 keeps through the profile's dummy sampler pass
(kvlint.memory.vllm.moe_workspace_bytes, docs/engine-memory-model.md §5)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kvlint.memory.vllm import VllmSettings, moe_workspace_bytes, plan_vllm_detailed, resolve_startup
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
TOTAL = int(79.19 * GiB)  # the llm-d-planner sweep's printed H100 total (gt-345 - gt-357)


def _moe():
    return resolve_model(str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen3-30B-A3B"), allow_hub=False)


def _settings(version: str, **kw) -> VllmSettings:
    return VllmSettings(version=version, max_model_len=8192, gpu_memory_utilization=0.95, **kw)


def test_printed_moe_activation_is_met_at_0_19() -> None:
    """gt-351 (vLLM 0.19.0, Qwen3-30B-A3B on an H100, 8,192 profile tokens, 1,024 sampler rows) printed 2.68 GiB
    of peak activation: the Triton sampler's tensors (2.10 GiB) and the experts' 0.50 GiB workspace that the
    WorkspaceManager keeps. Without the workspace kvlint was 21.5 % low."""
    d = plan_vllm_detailed(_settings("0.19.0"), _moe(), TOTAL, **H100)
    assert d.plan.activation_bytes / GiB == pytest.approx(2.68, rel=0.05)


def test_workspace_follows_the_releases_and_shapes_read() -> None:
    m = _moe()

    def ws(version: str, tokens: int = 8192, **kw) -> int:
        s = _settings(version, **kw)
        cfg = resolve_startup(s, m, TOTAL, **H100)
        return moe_workspace_bytes(s, m, cfg, tokens)

    assert ws("0.19.0") > 0 and ws("0.14.0") == ws("0.19.0")
    assert ws("0.13.0") == 0 and ws("0.20.0") == 0  # fused_experts frees its buffers / not read
    # a dense model has none; quantized experts take other kernels (not read)
    dense = resolve_model(str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen2.5-7B"), allow_hub=False)
    s = _settings("0.19.0")
    assert moe_workspace_bytes(s, dense, resolve_startup(s, dense, TOTAL, **H100), 8192) == 0
    fp8 = dataclasses.replace(m, quant_method="fp8", quant_config={"quant_method": "fp8"}, weight_bytes=None)
    s = _settings("0.19.0")
    assert moe_workspace_bytes(s, fp8, resolve_startup(s, fp8, TOTAL, **H100), 8192) == 0
    # FlashInfer's experts, opted into with VLLM_USE_FLASHINFER_MOE_FP16, size their buffers otherwise: CUTLASS only
    # with expert parallelism (no DP) on compute capability >= 9.0; on an H100 without it the oracle keeps Triton
    assert ws("0.19.0", flashinfer_moe_fp16=True) == ws("0.19.0") > 0
    assert ws("0.19.0", flashinfer_moe_fp16=True, enable_expert_parallel=True, tensor_parallel_size=2) == 0
    assert ws("0.19.0", enable_expert_parallel=True, tensor_parallel_size=2) > 0
    from kvlint.memory.vllm import settings_from_flags

    assert settings_from_flags({}, {"VLLM_USE_FLASHINFER_MOE_FP16": "1"}, "0.19.0").flashinfer_moe_fp16
    assert not settings_from_flags({}, {}, "0.19.0").flashinfer_moe_fp16
    # linear in the profile's tokens; before 0.19.0 the modular kernel chunks them by VLLM_FUSED_MOE_CHUNK_SIZE
    # (16,384): the two workspaces for one chunk, and then the output (M_full x K) in a buffer of its own
    # (vllm@0.17.0 modular_kernel.py::_allocate_buffers, num_chunks > 1)
    assert ws("0.19.0", 16384) == 2 * ws("0.19.0", 8192) and ws("0.19.0", 32768) == 4 * ws("0.19.0", 8192)
    assert ws("0.17.0", 32768) - ws("0.17.0", 16384) == 32768 * m.hidden_size * 2
    # TP splits the experts' width (N), not the hidden size (K), and every shape takes max(N or N/2, K): with
    # Qwen3-30B-A3B's N = 2 x 768 below K = 2,048 the workspace is the same at TP 2
    assert ws("0.19.0", tensor_parallel_size=2) == ws("0.19.0")
    # with the experts wider than the hidden size, as Mixtral's (2 x 14,336 against 4,096), TP 2 shrinks it
    wide = dataclasses.replace(m, moe_intermediate_size=14336)
    s2, s1 = _settings("0.19.0", tensor_parallel_size=2), _settings("0.19.0")
    w2 = moe_workspace_bytes(s2, wide, resolve_startup(s2, wide, TOTAL, **H100), 8192)
    w1 = moe_workspace_bytes(s1, wide, resolve_startup(s1, wide, TOTAL, **H100), 8192)
    assert 0 < w2 < w1


def test_flashinfer_opt_in_follows_the_oracle() -> None:
    """vllm@0.19.0 ``select_unquantized_moe_backend``: VLLM_USE_FLASHINFER_MOE_FP16 takes FlashInfer's TRTLLM experts
    on the Blackwell family (from 0.17.0; 0.14.0 has only the CUTLASS branch) unless VLLM_FLASHINFER_MOE_BACKEND moves
    off ``latency``; an explicit ``--moe-backend`` (0.17.0 on) wins over both."""
    from kvlint.engines.vllm import parse_vllm_argv
    from kvlint.memory.vllm import settings_from_config

    m = _moe()
    b200 = {"gpu_name": "NVIDIA B200", "compute_capability": "10.0"}

    def ws(version: str, gpu: dict, argv: list[str], env: dict[str, str]) -> int:
        s = settings_from_config(parse_vllm_argv(["Qwen/Qwen3-30B-A3B", *argv], version=version, env=env))
        s = dataclasses.replace(s, max_model_len=8192)
        return moe_workspace_bytes(s, m, resolve_startup(s, m, int(178 * GiB), **gpu), 8192)

    fi = {"VLLM_USE_FLASHINFER_MOE_FP16": "1"}
    assert ws("0.19.0", b200, [], {}) > 0
    assert ws("0.19.0", b200, [], fi) == 0
    assert ws("0.19.0", b200, [], {**fi, "VLLM_FLASHINFER_MOE_BACKEND": "throughput"}) > 0
    assert ws("0.14.0", b200, [], fi) > 0
    assert ws("0.19.0", H100, [], fi) > 0
    assert ws("0.19.0", H100, ["--moe-backend", "flashinfer_cutlass"], {}) == 0
    assert ws("0.19.0", b200, ["--moe-backend", "triton"], fi) > 0


A100 = {"gpu_name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}


def _glm_fp8():
    return resolve_model("zai-org/GLM-4.7-FP8", allow_hub=False)


def _marlin_elems(m: int, topk: int, n: int, k: int) -> int:
    """MarlinExperts.workspace_shapes (vllm@0.15.0 fused_marlin_moe.py) in one modular-kernel chunk: workspace1
    (M x topk, max(N, K)) shares its buffer with the (M, K) output, beside workspace2 (M x topk x max(2N, K))."""
    return max(m * topk * max(n, k), m * k) + m * topk * max(2 * n, k)


def test_fp8_experts_on_marlin_keep_their_workspace() -> None:
    """GLM-4.7-FP8 at PP 8 on A100s (gt-282's layout, vLLM 0.15.0): below compute capability 8.9 the FP8 oracle's
    only backend is MarlinExperts, run through FusedMoEModularKernel with the workspace manager's buffers, with
    Marlin's N the expert width (1,536) against K = 5,120 (both from the model's config)."""
    m = _glm_fp8()
    s = VllmSettings(
        version="0.15.0", max_model_len=8192, pipeline_parallel_size=8, gpu_memory_utilization=0.925
    )
    cfg = resolve_startup(s, m, int(79.25 * GiB), **A100)
    topk = int((m.config or {})["num_experts_per_tok"])
    n, k = m.moe_intermediate_size, m.hidden_size
    assert moe_workspace_bytes(s, m, cfg, 2048) == _marlin_elems(2048, topk, n, k) * 2
    # at TP 2 (no expert parallelism) Marlin's N is the rank's half of the width; K stays
    s2 = dataclasses.replace(s, pipeline_parallel_size=4, tensor_parallel_size=2)
    cfg2 = resolve_startup(s2, m, int(79.25 * GiB), **A100)
    assert moe_workspace_bytes(s2, m, cfg2, 2048) == _marlin_elems(2048, topk, n // 2, k) * 2
    # not the releases whose FP8 MoE calls the kernels directly (0.13.0) or was not read (0.20.0)
    for version in ("0.13.0", "0.20.0"):
        sv = dataclasses.replace(s, version=version)
        assert moe_workspace_bytes(sv, m, resolve_startup(sv, m, int(79.25 * GiB), **A100), 2048) == 0
    # on Hopper the oracle ranks FlashInfer, DeepGEMM, CUTLASS and Triton first (packages and scales not read): 0,
    # unless --moe-backend marlin (0.17.0 on) asks for Marlin
    sh = dataclasses.replace(s, version="0.17.0")
    assert moe_workspace_bytes(sh, m, resolve_startup(sh, m, int(79.19 * GiB), **H100), 2048) == 0
    sm = dataclasses.replace(sh, moe_backend="marlin")
    assert moe_workspace_bytes(sm, m, resolve_startup(sm, m, int(79.19 * GiB), **H100), 2048) > 0


def test_marlin_workspace_sets_the_forward_peak() -> None:
    """The kept buffers are the MoE layer's intermediates: where they exceed the forward pass's 3 x I_eff term
    (experts narrower than the hidden size) the stage's activation holds at least the buffers. GLM-4.7-FP8 at PP 8
    on A100s with 2,048 profile tokens: Marlin's buffers are 0.31 GiB, kvlint's forward term was 0.22 GiB."""
    m = _glm_fp8()
    s = VllmSettings(
        version="0.15.0",
        max_model_len=8192,
        pipeline_parallel_size=8,
        gpu_memory_utilization=0.925,
        max_num_batched_tokens=2048,
    )
    cfg = resolve_startup(s, m, int(79.25 * GiB), **A100)
    d = plan_vllm_detailed(s, m, int(79.25 * GiB), **A100)
    assert d.plan.activation_bytes > moe_workspace_bytes(s, m, cfg, cfg.max_num_batched_tokens) > 0
    from kvlint.memory.vllm import moe_forward_excess

    # Mixtral-like experts at TP 2 (width 14,336 / 2 above K = 4,096): the workspace equals 3 x I_eff, no excess
    assert moe_forward_excess((8192 * 2 * 7168 + 8192 * 2 * 14336) * 2, 8192, 2 * 14336, 2, 2) == 0


def _triton_elems(m: int, topk: int, n: int, k: int) -> int:
    """TritonExperts.workspace_shapes (vllm@0.17.0 fused_moe.py) in one chunk, N the rank's w13 rows: workspace1
    (M, topk, max(N/2, K)) shares its buffer with the (M, K) output, beside workspace2 (M, topk, max(N, K))."""
    return max(m * topk * max(n // 2, k), m * k) + m * topk * max(n, k)


def test_fp8_experts_on_rocm_run_triton() -> None:
    """MiniMax-M2.5 (FP8 block weights) at TP 2 on MI300X, vLLM 0.17.1 (gt-269's layout): without
    VLLM_ROCM_USE_AITER the FP8 oracle's AITER experts refuse the device, the CUDA-only FlashInfer, DeepGEMM, CUTLASS
    and Marlin experts too, and TritonExperts takes FP8 on gfx9: its modular-kernel buffers stay in the workspace
    manager. N = 2 x 1,536 / 2 per rank, K = 3,072, both from the config."""
    m = resolve_model("MiniMaxAI/MiniMax-M2.5", allow_hub=False)
    mi300x = {"gpu_name": "AMD Instinct MI300X"}
    s = VllmSettings(version="0.17.1", max_model_len=8192, tensor_parallel_size=2, gpu_memory_utilization=0.9)
    total = int(191.98 * GiB)
    cfg = resolve_startup(s, m, total, **mi300x)
    assert cfg.vendor == "amd"
    topk = int((m.config or {})["num_experts_per_tok"])
    inter = m.moe_intermediate_size or m.intermediate_size
    assert (
        moe_workspace_bytes(s, m, cfg, 8192) == _triton_elems(8192, topk, 2 * inter // 2, m.hidden_size) * 2
    )
    # VLLM_ROCM_USE_AITER takes AITER's experts (not read): none
    sa = dataclasses.replace(s, rocm_aiter=True)
    assert moe_workspace_bytes(sa, m, resolve_startup(sa, m, total, **mi300x), 8192) == 0


def test_rocm_aiter_moe_switches_as_vllm_reads_them() -> None:
    """vLLM runs AITER's experts only when ``rocm_aiter_ops.is_fused_moe_enabled()``: ``VLLM_ROCM_USE_AITER`` and
    ``VLLM_ROCM_USE_AITER_MOE`` (default on), each ``.lower() in ("true", "1")`` (vllm@0.15.0 / 0.19.0 envs.py,
    _aiter_ops.py). AITER on with its MoE switched off leaves the FP8 (and unquantized) experts on TritonExperts, and
    ``yes``/``on``, which vLLM does not take as true, leave AITER off."""
    from kvlint.memory.vllm import settings_from_flags

    m = resolve_model("MiniMaxAI/MiniMax-M2.5", allow_hub=False)
    mi300x = {"gpu_name": "AMD Instinct MI300X"}
    total = int(191.98 * GiB)

    def ws(env: dict[str, str]) -> int:
        s = dataclasses.replace(
            settings_from_flags({}, env, "0.17.1"), tensor_parallel_size=2, max_model_len=8192
        )
        return moe_workspace_bytes(s, m, resolve_startup(s, m, total, **mi300x), 8192)

    triton = ws({})
    assert triton > 0
    assert ws({"VLLM_ROCM_USE_AITER": "1"}) == 0 and ws({"VLLM_ROCM_USE_AITER": "True"}) == 0
    assert ws({"VLLM_ROCM_USE_AITER": "1", "VLLM_ROCM_USE_AITER_MOE": "0"}) == triton
    assert ws({"VLLM_ROCM_USE_AITER": "true", "VLLM_ROCM_USE_AITER_MOE": "false"}) == triton
    assert ws({"VLLM_ROCM_USE_AITER": "yes"}) == triton and ws({"VLLM_ROCM_USE_AITER": "on"}) == triton


def test_workspace_excess_is_not_reported_as_a_data_parallel_gather() -> None:
    """The kept buffers' excess over the forward pass's MLP term (moe_forward_excess) is added to the forward pass,
    as the DP gather is, but at DP 1 nothing is gathered: the plan's note names the workspace, not "all 1
    data-parallel ranks' batches". GLM-4.7-FP8 at PP 8 on A100s (Marlin, vLLM 0.15.0) and Qwen3-30B-A3B on an
    H100 (Triton, 0.19.0)."""
    from kvlint.memory.vllm import moe_forward_excess

    glm = _glm_fp8()
    sg = VllmSettings(
        version="0.15.0", max_model_len=8192, pipeline_parallel_size=8, gpu_memory_utilization=0.925,
        max_num_batched_tokens=2048,
    )  # fmt: skip
    for s, m, total, gpu in ((sg, glm, int(79.25 * GiB), A100), (_settings("0.19.0"), _moe(), TOTAL, H100)):
        cfg = resolve_startup(s, m, total, **gpu)
        tokens = cfg.max_num_batched_tokens
        ws = moe_workspace_bytes(s, m, cfg, tokens)
        from kvlint.memory.vllm import model_facts

        excess = moe_forward_excess(
            ws, tokens, (cfg.facts or model_facts(m)).inter_eff, cfg.tp, cfg.dtype_bytes
        )
        assert excess > 0
        notes = plan_vllm_detailed(s, m, total, **gpu).plan.assumptions
        assert not any("data-parallel" in n for n in notes), notes
        assert any(f"({ws / GiB:.2f} GiB" in n and f"+{excess / GiB:.2f} GiB" in n for n in notes), notes


def test_compressed_tensors_and_modelopt_fp8_experts_take_the_fp8_oracle() -> None:
    """CompressedTensorsW8A8Fp8MoEMethod (an FP8-weight, FP8-activation config group: RedHatAI's FP8-dynamic builds)
    and ModelOptFp8MoEMethod (quant_algo FP8) call the same select_fp8_moe_backend / make_fp8_moe_kernel as
    Fp8MoEMethod (vllm@0.14.0 / 0.15.0 / 0.19.0 compressed_tensors_moe.py, modelopt.py): on an A100 their experts run
    MarlinExperts and keep the same workspace as an fp8 checkpoint's."""
    m = _moe()
    a100_total = int(79.25 * GiB)

    def ws(model) -> int:
        s = _settings("0.15.0")
        return moe_workspace_bytes(s, model, resolve_startup(s, model, a100_total, **A100), 8192)

    def variant(method: str, qc: dict):
        return dataclasses.replace(m, quant_method=method, quant_config=qc, weight_bytes=None)

    fp8 = ws(variant("fp8", {"quant_method": "fp8"}))
    assert fp8 > 0
    fp8_dynamic = {
        "weights": {"type": "float", "num_bits": 8, "strategy": "channel", "dynamic": False},
        "input_activations": {"type": "float", "num_bits": 8, "strategy": "token", "dynamic": True},
        "targets": ["Linear"],
    }
    ct = {
        "quant_method": "compressed-tensors",
        "config_groups": {"group_0": fp8_dynamic},
        "ignore": ["lm_head"],
    }
    assert ws(variant("compressed-tensors", ct)) == fp8
    assert ws(variant("modelopt", {"quant_method": "modelopt", "quant_algo": "FP8"})) == fp8
    # INT4 weight-only groups and routed experts left out of the quantization take other kernels: not counted here
    w4a16 = {
        "weights": {"type": "int", "num_bits": 4, "strategy": "group", "group_size": 128},
        "targets": ["Linear"],
    }
    assert ws(variant("compressed-tensors", dict(ct, config_groups={"group_0": w4a16}))) == 0
    assert ws(variant("compressed-tensors", dict(ct, ignore=["lm_head", "re:.*mlp.experts.*"]))) == 0
    assert ws(variant("modelopt", {"quant_method": "modelopt", "quant_algo": "W4A8_AWQ"})) == 0


@pytest.mark.parametrize("version", ["0.14.0", "0.17.0", "0.19.0"])
def test_data_parallel_without_ep_sizes_the_workspace_for_every_ranks_rows(version: str) -> None:
    """At --data-parallel-size 4 without expert parallelism the MoE layer runs the four ranks' gathered rows
    (vllm@0.14.0 FusedMoE.forward_impl / vllm@0.19.0 DefaultMoERunner._maybe_dispatch: naive dispatch at dp_size > 1,
    AgRsAll2AllManager.dispatch all_gathers hidden states and router logits), and FusedMoEParallelConfig.make
    flattens TP across DP (each rank holds 1/(tp x dp) of every expert). TritonExperts.workspace_shapes for M rows:
    workspace13 (M, topk, max(N/2, K)) sharing a buffer with the (M, K) output, workspace2 (M, topk, max(N, K));
    before 0.19.0 the modular kernel chunks M by 16,384 and keeps the output apart."""
    from kvlint.memory.vllm import dp_moe_gather_bytes

    m = _moe()
    dp, tokens = 4, 8192
    s = _settings(version, data_parallel_size=dp)
    cfg = resolve_startup(s, m, TOTAL, **H100)
    topk, k, e = int(m.config["num_experts_per_tok"]), m.hidden_size, m.num_experts
    n = 2 * m.moe_intermediate_size // dp  # TP 1 flattened across DP 4
    rows = dp * tokens
    ws13, ws2 = topk * max(n // 2, k), topk * max(n, k)
    if version >= "0.19.0":
        elems = max(rows * ws13, rows * k) + rows * ws2
    else:
        chunk = 16384
        elems = chunk * (ws13 + ws2) + rows * k
    assert moe_workspace_bytes(s, m, cfg, tokens) == elems * 2
    # the gathered hidden states and router logits are in the forward pass beside it
    assert dp_moe_gather_bytes(s, m, cfg) == rows * (k + e) * 2
    one = _settings(version)
    assert moe_workspace_bytes(s, m, cfg, tokens) > moe_workspace_bytes(
        one, m, resolve_startup(one, m, TOTAL, **H100), tokens
    )
    d4 = plan_vllm_detailed(s, m, TOTAL, **H100)
    d1 = plan_vllm_detailed(one, m, TOTAL, **H100)
    assert d4.plan.activation_bytes > d1.plan.activation_bytes
    # with expert parallelism (batched experts and other all-to-all paths, not read) neither term is added
    ep = _settings(version, data_parallel_size=dp, enable_expert_parallel=True)
    cfg_ep = resolve_startup(ep, m, TOTAL, **H100)
    assert moe_workspace_bytes(ep, m, cfg_ep, tokens) == 0 and dp_moe_gather_bytes(ep, m, cfg_ep) == 0


def test_data_parallel_without_ep_splits_every_expert_over_tp_x_dp() -> None:
    """FusedMoEParallelConfig.make flattens TP across DP without --enable-expert-parallel (tp_size = dp x tp), and
    FusedMoE builds intermediate_size // tp_size of each expert (vLLM 0.10.1 - 0.19.0 wheels, main at 002d6073): at
    DP 4 each rank holds a quarter of every expert, as many bytes as expert parallelism's whole quarter of them.
    Qwen3-30B-A3B's experts: 48 layers x 128 experts x 3 matrices x 2,048 x 768 x 2 B (bf16)."""
    m = _moe()

    def weights(dp: int, ep: bool = False, version: str = "0.19.0") -> int:
        s = _settings(version, data_parallel_size=dp, enable_expert_parallel=ep)
        return plan_vllm_detailed(s, m, TOTAL, **H100).plan.weights_bytes

    experts = 48 * 128 * 3 * 2048 * 768 * 2
    # within the routers' 24 MiB (48 x 128 x 2,048 x 2 B), which kvlint's expert share (a parameter-count fraction,
    # _expert_fraction) does not tell apart from the experts
    assert weights(1) - weights(4) == pytest.approx(experts * 3 / 4, abs=48 * 128 * 2048 * 2)
    assert weights(4) == pytest.approx(weights(4, ep=True), abs=1 << 20)
    assert weights(4, version="0.10.1") == pytest.approx(weights(4, version="0.19.0"), abs=64 << 20)


def _fp8_ws(
    model_id: str = "Qwen/Qwen3-30B-A3B-FP8",
    version: str = "0.19.0",
    gpu: dict | None = None,
    env: dict[str, str] | None = None,
    flags: tuple[str, ...] = (),
) -> int:
    from kvlint.engines import parse_command_line
    from kvlint.memory.vllm import settings_from_config

    m = resolve_model(model_id, allow_hub=False)
    serving = parse_command_line(["vllm", "serve", model_id, *flags], version)
    serving.env.update(env or {})
    s = settings_from_config(serving)
    cfg = resolve_startup(s, m, TOTAL, **(gpu or H100))
    return moe_workspace_bytes(s, m, cfg, 8192)


def test_block_fp8_experts_on_hopper_run_triton_at_0_19() -> None:
    """vllm@0.19.0 oracle/fp8.py::_get_priority_backends moves TRITON to the front for block FP8
    (kFp8Static128BlockSym weights, kFp8Dynamic128Sym activations) on compute capability 9.0 when ep_size is 1,
    and TritonExperts supports that scheme from 8.9 (fused_moe.py::TritonExperts._supports_quant_scheme): the
    experts take the modular kernel's Triton workspace, whose shapes do not depend on the quantization
    (TritonExperts.workspace_shapes), so Qwen3-30B-A3B-FP8 (weight_block_size [128, 128]) keeps the workspace of
    the bf16 Qwen3-30B-A3B: (max(M topk max(N/2, K), M K) + M topk max(N, K)) x 2 B at M = 8,192."""
    m = _moe()
    topk, k, n = int(m.config["num_experts_per_tok"]), m.hidden_size, 2 * m.moe_intermediate_size
    rows = 8192
    expected = (max(rows * topk * max(n // 2, k), rows * k) + rows * topk * max(n, k)) * 2
    assert _fp8_ws() == expected
    assert _fp8_ws("RedHatAI/Qwen3-30B-A3B-FP8-block") == expected  # compressed-tensors block 128 x 128
    h200 = {"gpu_name": "NVIDIA H200", "compute_capability": "9.0"}
    assert _fp8_ws(gpu=h200) == expected
    # not decided (FlashInfer, DeepGEMM or CUTLASS by the packages installed, or releases not read): 0
    assert _fp8_ws(version="0.17.0") == 0 and _fp8_ws(version="0.20.0") == 0
    assert _fp8_ws(gpu={"gpu_name": "NVIDIA B200", "compute_capability": "10.0"}) == 0
    assert _fp8_ws(flags=("--tensor-parallel-size", "2", "--enable-expert-parallel")) == 0  # FI CUTLASS first
    assert _fp8_ws(env={"VLLM_USE_FLASHINFER_MOE_FP8": "1"}) == 0
    assert _fp8_ws(env={"VLLM_USE_DEEP_GEMM": "1"}) == 0  # with VLLM_MOE_USE_DEEP_GEMM's default 1: DeepGEMM
    # a switch at 0 only drops those experts from the list: Triton stays first
    assert _fp8_ws(env={"VLLM_USE_FLASHINFER_MOE_FP8": "0"}) == expected
    assert _fp8_ws(env={"VLLM_MOE_USE_DEEP_GEMM": "0"}) == expected
    # an unquantized checkpoint served with --quantization fp8 is per-tensor FP8, not block: not decided
    assert _fp8_ws("Qwen/Qwen3-30B-A3B", flags=("--quantization", "fp8")) == 0
    # the A100's Marlin rule is unchanged
    assert _fp8_ws(gpu={"gpu_name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}) > 0


def test_dp_gather_at_0_19_only_for_methods_that_dispatch_outside_their_kernel() -> None:
    """vllm@0.19.0 DefaultMoERunner.do_naive_dispatch_combine is False for a method with its own modular kernel
    (supports_internal_mk: FP8, MXFP4, NVFP4 build self.moe_kernel), whose naive DP prepare step quantizes the input
    before dispatching it with the top-k tensors (prepare_finalize/naive_dp_ep.py): not the bf16 hidden states and
    router logits kvlint prices, so no term there; 0.14.0 dispatches outside for any method but a
    FusedMoEModularMethod (FusedMoE.forward_impl)."""
    from kvlint.memory.vllm import dp_moe_gather_bytes

    m = resolve_model("Qwen/Qwen3-30B-A3B-FP8", allow_hub=False)

    def gather(version: str) -> int:
        s = _settings(version, data_parallel_size=4)
        return dp_moe_gather_bytes(s, m, resolve_startup(s, m, TOTAL, **H100))

    assert gather("0.19.0") == 0
    assert gather("0.14.0") == 4 * 8192 * (m.hidden_size + m.num_experts) * 2


@pytest.mark.parametrize("version", ["0.8.5", "0.9.0", "0.9.1"])
def test_data_parallel_experts_split_before_0_9_2(version: str) -> None:
    """The releases before FusedMoEParallelConfig flatten TP across DP as well: vllm@0.8.0 / 0.8.5
    fused_moe/layer.py::FusedMoE.__init__ sets ``self.tp_size = self.tp_size * self.dp_size`` without expert
    parallelism, and vllm@0.9.0 fused_moe/layer.py::FusedMoEParallelConfig.make has flatten_tp_across_dp. At DP 4
    each rank holds a quarter of every expert, as many bytes as with --enable-expert-parallel."""
    from kvlint.memory.versions import moe_shards_experts_across_dp, resolve_version

    assert moe_shards_experts_across_dp(resolve_version(version)[0])
    m = _moe()

    def weights(dp: int, ep: bool = False) -> int:
        s = _settings(version, data_parallel_size=dp, enable_expert_parallel=ep)
        return plan_vllm_detailed(s, m, TOTAL, **H100).plan.weights_bytes

    experts = 48 * 128 * 3 * 2048 * 768 * 2
    assert weights(1) - weights(4) == pytest.approx(experts * 3 / 4, abs=48 * 128 * 2048 * 2)
    assert weights(4) == pytest.approx(weights(4, ep=True), abs=1 << 20)


@pytest.mark.parametrize("version", ["0.10.1", "0.19.0"])
def test_mxfp4_padding_follows_the_moe_layers_partition(version: str) -> None:
    """Mxfp4MoEMethod.create_weights pads ``intermediate_size_per_partition`` (vllm@0.10.1 quantization/mxfp4.py;
    0.19.0 oracle/mxfp4.py), which FusedMoE takes as intermediate_size // its own tp_size: tp x dp at DP > 1
    without expert parallelism (TP flattened across DP), 1 with expert parallelism (whole experts per rank). So
    gpt-oss-120b at DP 4 pads its experts as at TP 4 (2,880 / 4 = 720 -> 768 on Hopper), and at TP 4 with expert
    parallelism as at TP 1 (2,880 is already a multiple of 64)."""
    from kvlint.memory.vllm import VllmSettings, split_weights

    m = resolve_model("openai/gpt-oss-120b", allow_hub=False)

    def total(tp: int = 1, dp: int = 1, ep: bool = False) -> int:
        s = VllmSettings(
            version=version,
            tensor_parallel_size=tp,
            data_parallel_size=dp,
            enable_expert_parallel=ep,
            max_model_len=8192,
        )
        cfg = resolve_startup(s, m, TOTAL, **H100)
        return split_weights(s, m, cfg).total

    assert total(tp=4) > total(tp=1)  # the 720-wide partition is padded, the 2,880-wide one is not
    assert total(dp=4) == total(tp=4)
    assert total(tp=2, dp=2) == total(tp=4)
    assert total(tp=4, ep=True) == total(tp=1)
    assert total(dp=4, ep=True) == total(tp=1)


@pytest.mark.parametrize("version", ["0.16.0", "0.17.0", "0.18.0", "0.19.0"])
def test_dp_gather_follows_whether_the_method_builds_its_own_kernel(version: str) -> None:
    """From 0.16.0 the runner's naive dispatch is skipped only for a method with its own modular kernel
    (``do_naive_dispatch_combine = dp_size > 1 and not quant_method.supports_internal_mk``; vllm@0.16.0
    fused_moe/layer.py, 0.17.0 - 0.19.0 runner/default_moe_runner.py): quantization/fp8.py sets it from 0.16.0,
    but GPTQ / AWQ / bitsandbytes / experts_int8 / moe_wna16 and compressed-tensors' integer-weight MoE methods
    (Kimi-K2.5's W4A16 experts: CompressedTensorsWNA16MarlinMoEMethod) never do, so their layers gather every DP
    rank's hidden states and router logits as unquantized ones do."""
    from kvlint.memory.vllm import dp_moe_gather_bytes

    def gather(m, **kw) -> int:
        s = _settings(version, data_parallel_size=4, **kw)
        return dp_moe_gather_bytes(s, m, resolve_startup(s, m, TOTAL, **H100))

    def gathered(m) -> int:
        return 4 * 8192 * (m.hidden_size + m.num_experts) * 2

    fp8 = resolve_model("Qwen/Qwen3-30B-A3B-FP8", allow_hub=False)
    assert gather(fp8) == 0
    bf16 = _moe()
    assert gather(bf16) == gathered(bf16)
    assert gather(bf16, quantization="experts_int8") == gathered(bf16)
    kimi = resolve_model("moonshotai/Kimi-K2.5", allow_hub=False)
    assert kimi.num_experts and gather(kimi) == gathered(kimi)
