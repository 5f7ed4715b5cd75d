"""An MoE model at ``--data-parallel-size`` > 1 profiles every DP rank's batch in its MoE layers (vLLM 0.9.2 - 0.11.0,
the default all-to-all: ``NaiveAll2AllManager.dispatch`` / ``AgRsAll2AllManager.dispatch`` gather the ranks' hidden
states and router logits before the fused MoE; kvlint.memory.vllm.dp_moe_gather_bytes).

gt-283 / gt-284 (vllm-project/recipes#12, Qwen3-Coder-480B-A35B FP8 at DP 8 with expert parallelism, vLLM 0.10.1
dev) printed less KV memory than kvlint planned with one rank's batch (+16.0 % / +14.0 %); the test reads the
printed figures from the case file and the plan from the bench's replay.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.memory.versions import moe_gathers_dp_batch, resolve_version
from kvlint.memory.vllm import (
    FUSED_MOE_CHUNK_TOKENS,
    VllmSettings,
    dp_moe_gather_bytes,
    plan_vllm_detailed,
    resolve_startup,
)
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

GiB = 1 << 30
H200 = lookup("h200")
CODER = "Qwen/Qwen3-Coder-480B-A35B-Instruct"


def _act(version: str, dp: int, ep: bool = True, model: str = CODER, quant: str | None = "fp8") -> int:
    assert H200 is not None
    s = VllmSettings(
        version=version,
        data_parallel_size=dp,
        enable_expert_parallel=ep,
        quantization=quant,
        max_model_len=32768,
    )
    m = resolve_model(model, allow_hub=False)
    d = plan_vllm_detailed(s, m, H200.memory_bytes, gpu_name=H200.name, compute_capability="9.0")
    return d.plan.activation_bytes


def test_release_range_read_in_the_wheels() -> None:
    v = lambda s: resolve_version(s)[0]  # noqa: E731
    # vllm@0.9.0 fused_moe/layer.py::FusedMoE.forward_impl dispatches at dp_size > 1 through the same
    # NaiveAll2AllManager (distributed/device_communicators/all2all.py) as 0.9.2; 0.8.x was not read
    assert moe_gathers_dp_batch(v("0.9.0")) and moe_gathers_dp_batch(v("0.9.1"))
    assert not moe_gathers_dp_batch(v("0.8.5"))
    assert moe_gathers_dp_batch(v("0.9.2")) and moe_gathers_dp_batch(v("0.10.1.dev101+gbda9d0535"))
    assert moe_gathers_dp_batch(v("0.11.0"))
    assert not moe_gathers_dp_batch(v("0.11.1"))  # not read: not applied


def test_gathered_batch_adds_buffers_and_the_workspace_difference() -> None:
    """The extra activation at DP 8 is the gathered hidden states and router logits of 8 x T tokens plus the fused
    MoE's chunk workspace at min(8T, chunk) instead of T (fused_moe.py::fused_experts_impl; FP8 W8A8 adds the 1-byte
    copies of the chunk's input and intermediate)."""
    m = resolve_model(CODER, allow_hub=False)
    s = VllmSettings(version="0.10.1", data_parallel_size=8, enable_expert_parallel=True, quantization="fp8")
    assert H200 is not None
    cfg = resolve_startup(s, m, H200.memory_bytes, gpu_name=H200.name, compute_capability="9.0")
    t, dp = cfg.max_num_batched_tokens, cfg.dp
    c = m.text_config or m.config or {}
    topk, k, e = int(c["num_experts_per_tok"]), m.hidden_size, m.num_experts
    n = 2 * m.moe_intermediate_size  # expert parallelism: each rank holds whole experts

    def ws(tokens: int) -> int:
        mm = min(tokens, FUSED_MOE_CHUNK_TOKENS)
        return mm * topk * max(n, k) * 2 + mm * topk * n // 2 * 2 + _quantized_peak(tokens, topk, n, k)

    assert dp * t > FUSED_MOE_CHUNK_TOKENS  # the gathered batch runs in two chunks
    expected = dp * t * (k + e) * 2 + ws(dp * t) - ws(t)
    assert dp_moe_gather_bytes(s, m, cfg) == expected
    # it is part of the forward pass: the profile's peak grows by it (the sampler peak is smaller here)
    assert _act("0.10.1", 8) > _act("0.10.1", 1)
    # without expert parallelism every rank holds 1/(tp x dp) of each expert's intermediate (flattened TP)
    assert _act("0.10.1", 8, ep=False) < _act("0.10.1", 8)


def _quantized_peak(tokens: int, topk: int, n: int, k: int) -> int:
    """The largest sum of the live 1-byte FP8 copies while ``fused_experts_impl`` (vLLM 0.10.1 / 0.11.0
    ``fused_moe.py``) walks its chunks, replayed step by step: each chunk binds ``qcurr_hidden_states`` (rows x K)
    and then ``qintermediate_cache2`` (rows x topk x N/2), and a name lets go of the previous chunk's tensor only
    once the new one exists."""
    q_in = q_mid = peak = 0
    for begin in range(0, tokens, FUSED_MOE_CHUNK_TOKENS):
        rows = min(FUSED_MOE_CHUNK_TOKENS, tokens - begin)
        peak = max(peak, q_in + q_mid + rows * k)  # the new input copy beside the previous chunk's two
        q_in = rows * k
        peak = max(peak, q_in + q_mid + rows * topk * (n // 2))  # the new cache2 copy
        q_mid = rows * topk * (n // 2)
    return peak


@pytest.mark.parametrize("chunks", [1, 2, 3])
def test_fp8_chunks_hold_the_previous_chunks_quantized_copies(chunks: int) -> None:
    """Past one chunk (VLLM_FUSED_MOE_CHUNK_SIZE) the FP8 workspace holds one chunk's quantized copies more than
    the single-chunk sum; the caches themselves are sized once for the first chunk."""
    from kvlint.memory.vllm import _fused_moe_workspace

    # Qwen3-Coder-480B-A35B with expert parallelism: whole experts on each rank
    topk, n, k = 8, 2 * 2560, 6144
    tokens = chunks * FUSED_MOE_CHUNK_TOKENS - 1000
    m = min(tokens, FUSED_MOE_CHUNK_TOKENS)
    caches = m * topk * max(n, k) * 2 + m * topk * (n // 2) * 2
    assert _fused_moe_workspace(tokens, topk, n, k, 2, True) == caches + _quantized_peak(tokens, topk, n, k)
    assert _fused_moe_workspace(tokens, topk, n, k, 2, False) == caches  # bf16: the input is not copied


def test_not_applied_outside_the_read_releases_nor_to_dense_models() -> None:
    assert _act("0.14.1", 8) == _act("0.14.1", 1)
    assert _act("0.10.1", 1) == _act("0.10.1", 1)
    assert _act("0.10.1", 4, model="meta-llama/Llama-3.1-8B", quant=None) == _act(
        "0.10.1", 1, model="meta-llama/Llama-3.1-8B", quant=None
    )


@pytest.mark.parametrize("gid", ["gt-283", "gt-284"])
def test_recipes_12_refusals_move_towards_the_printed_kv(gid: str) -> None:
    cases = {c["id"]: c for c in accuracy.load_cases(ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml")}
    case, r = cases[gid], accuracy.REPLAY[gid]
    printed = case["failure"]["kv_available_gib"]
    with_gather = accuracy.plan_case(case, r, accuracy.FIXTURE_MODELS).plan.kv_cache_bytes / GiB
    one_rank = dataclasses.replace(r, settings={**r.settings, "data_parallel_size": 1})
    without = accuracy.plan_case(case, one_rank, accuracy.FIXTURE_MODELS).plan.kv_cache_bytes / GiB
    assert abs(with_gather - printed) < abs(without - printed)
    assert with_gather > printed  # the rest of the gap is not attributed (docs/engine-memory-model.md §5)


def test_pplx_and_deepep_backends_with_expert_parallelism_skip_the_naive_gather() -> None:
    """``VLLM_ALL2ALL_BACKEND`` pplx / deepep_low_latency take ``forward_impl_chunked`` and deepep_high_throughput
    turns ``do_naive_dispatch_combine`` off, both only with expert parallelism (``use_all2all_kernels`` is
    ``dp_size > 1 and use_ep``; 0.9.2 and 0.11.0 ``fused_moe/layer.py``, ``fused_moe/config.py``)."""
    from kvlint.engines import parse_command_line
    from kvlint.memory.vllm import settings_from_config

    m = resolve_model(CODER, allow_hub=False)
    assert H200 is not None

    def gather(*flags: str, env: dict[str, str] | None = None) -> int:
        serving = parse_command_line(["vllm", "serve", CODER, "--data-parallel-size", "8", *flags], "0.10.1")
        serving.env.update(env or {})
        s = settings_from_config(serving)
        cfg = resolve_startup(s, m, H200.memory_bytes, gpu_name=H200.name, compute_capability="9.0")
        return dp_moe_gather_bytes(s, m, cfg)

    ep = "--enable-expert-parallel"
    assert gather(ep) > 0 and gather(ep, env={"VLLM_ALL2ALL_BACKEND": "naive"}) == gather(ep)
    for backend in ("pplx", "deepep_high_throughput", "deepep_low_latency"):
        assert gather(ep, env={"VLLM_ALL2ALL_BACKEND": backend}) == 0
        # without expert parallelism the kernels are not used and the naive dispatch gathers
        assert gather(env={"VLLM_ALL2ALL_BACKEND": backend}) == gather()


def _non_torch(version: str, dp: int) -> int:
    assert H200 is not None
    s = VllmSettings(
        version=version, max_model_len=8192, data_parallel_size=dp, enable_expert_parallel=dp > 1,
        quantization="fp8",
    )  # fmt: skip
    model = resolve_model(CODER, allow_hub=False)
    d = plan_vllm_detailed(s, model, H200.memory_bytes, gpu_name=H200.name, compute_capability="9.0")
    return d.plan.non_torch_bytes


def test_dp_group_nccl_share_before_0_11():
    """vllm@0.10.1 gpu_worker.py takes the init snapshot before init_worker_distributed_environment, and the DP
    group gets a PyNcclCommunicator (CudaCommunicator: pynccl for every group but "ep") that the MoE layers' naive
    dispatch and combine use in the profile: a DP rank counts one NCCL share, as a TP group does (calibration.
    profiled_peer_world). From 0.11.0 the groups' communicators are in the snapshot and only a TP group's lazy torch
    communicator is counted: DP changes nothing."""
    from kvlint.memory.calibration import NON_TORCH_GIB

    share = int(NON_TORCH_GIB["per_peer"] * GiB)
    # the combine's all-reduce also sets up the DP group's NVLS buffer on the 8-GPU NVSwitch node (below)
    nvls = 16 * 2 * (128 << 10) * 8 * 8
    assert _non_torch("0.10.1", 8) - _non_torch("0.10.1", 1) == pytest.approx(share + nvls, abs=2)
    assert _non_torch("0.11.0", 8) == _non_torch("0.11.0", 1)


def test_naive_combine_sets_up_the_dp_groups_nvls_buffer():
    """vllm@0.10.1 NaiveAll2AllManager.combine all-reduces every rank's rows on the DP group (pynccl above the custom
    all-reduce's 8 MiB); NCCL 2.26 (torch 2.7.1) sizes NVLS per rank as nChannels 16 (Hopper) x 2 x (chunk 128 KiB x
    NCCL_STEPS 8) x the communicator's local ranks (NVIDIA/nccl src/transport/nvls.cc::ncclNvlsBufferSetup)."""
    from kvlint.engines import parse_command_line
    from kvlint.memory.vllm import dp_moe_combine_nvls_bytes, settings_from_config

    m = resolve_model(CODER, allow_hub=False)

    def nvls(
        *flags: str,
        gpu: str = "h200",
        cc: str = "9.0",
        env: dict[str, str] | None = None,
        ver: str = "0.10.1",
    ):
        acc = lookup(gpu)
        assert acc is not None
        serving = parse_command_line(["vllm", "serve", CODER, "--quantization", "fp8", *flags], ver)
        serving.env.update(env or {})
        s = settings_from_config(serving)
        cfg = resolve_startup(s, m, acc.memory_bytes, gpu_name=acc.name, compute_capability=cc)
        return dp_moe_combine_nvls_bytes(s, m, cfg)

    per_rank = 16 * 2 * (128 << 10) * 8
    assert nvls("--data-parallel-size", "8", "--enable-expert-parallel") == per_rank * 8
    assert nvls("--data-parallel-size", "4") == per_rank * 4  # without EP the dispatch is the same
    assert nvls("--data-parallel-size", "2") == 0  # NCCL sets up no NVLS for two ranks
    assert nvls("--data-parallel-size", "8", env={"NCCL_NVLS_ENABLE": "0"}) == 0
    assert nvls("--data-parallel-size", "8", gpu="a100-80gb", cc="8.0") == 0  # no NVLink SHARP before Hopper
    ep_pplx = {"VLLM_ALL2ALL_BACKEND": "pplx"}
    assert nvls("--data-parallel-size", "8", "--enable-expert-parallel", env=ep_pplx) == 0  # no naive combine
    assert nvls("--data-parallel-size", "8", ver="0.11.0") == 0  # all-gather / reduce-scatter from 0.11.0
