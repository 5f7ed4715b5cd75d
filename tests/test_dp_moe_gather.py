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
    assert not moe_gathers_dp_batch(v("0.9.1"))
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
        return mm * topk * max(n, k) * 2 + mm * topk * n // 2 * 2 + mm * k + mm * topk * n // 2

    expected = dp * t * (k + e) * 2 + ws(dp * t) - ws(t)
    assert dp_moe_gather_bytes(s, m, cfg) == expected
    # it is part of the forward pass: the profile's peak grows by it (the sampler peak is smaller here)
    assert _act("0.10.1", 8) > _act("0.10.1", 1)
    # without expert parallelism every rank holds 1/(tp x dp) of each expert's intermediate (flattened TP)
    assert _act("0.10.1", 8, ep=False) < _act("0.10.1", 8)


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
    assert _non_torch("0.10.1", 8) - _non_torch("0.10.1", 1) == pytest.approx(share, abs=2)
    assert _non_torch("0.11.0", 8) == _non_torch("0.11.0", 1)
