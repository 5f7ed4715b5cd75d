"""vLLM 0.14.0 - 0.16.x check one max-model-len request of the *whole* model against the smallest pipeline stage's KV
memory (``vllm@0.15.0:vllm/v1/core/kv_cache_utils.py::get_kv_cache_configs``, global groups and
``min(available_memory)``); 0.13.0 and 0.17.0 check each stage's own layers against its own memory
(kvlint.memory.versions.fit_check_whole_model_under_pp, docs/engine-memory-model.md §1.11).

Ground truth: gt-282 (vllm-project/vllm#32105, a January 2026 nightly): GLM-4.7-FP8 at pipeline-parallel size 8 on
A100-80GB refused a 202,752-token context because "71.16 GiB KV cache is needed" -- every one of the 92 layers'
KV -- against 28.57 GiB available. The model is the bundled catalogue's config (its entry.json gives the source);
the expected figures are kvlint's own per-stage figures scaled by the layer counts, not the engine's numbers.
"""

from __future__ import annotations

import pytest

from kvlint.memory.versions import fit_check_whole_model_under_pp, resolve_version
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model

GiB = 1 << 30
A100_80 = int(79.255615234375 * GiB)  # the catalogue's A100-SXM4-80GB CUDA total
LEN = 202_752


def _plan(version: str, pp: int = 8, max_model_len: int | str = LEN):
    model = resolve_model("zai-org/GLM-4.7-FP8", allow_hub=False)
    s = VllmSettings(
        version=version,
        pipeline_parallel_size=pp,
        max_model_len=max_model_len,
        gpu_memory_utilization=0.925,
        max_num_seqs=128,
        quantization="fp8",  # as the command gives it (the abridged stored config takes FP8 from its name too)
    )
    return plan_vllm_detailed(s, model, A100_80, gpu_name="NVIDIA A100-SXM4-80GB", compute_capability="8.0")


@pytest.mark.parametrize(
    ("version", "whole"),
    [("0.13.0", False), ("0.14.0", True), ("0.15.0", True), ("0.16.0", True), ("0.17.0", False)],
)
def test_release_window(version: str, whole: bool) -> None:
    assert fit_check_whole_model_under_pp(resolve_version(version)[0]) is whole


def test_whole_model_need_against_the_smallest_stage() -> None:
    per_stage, whole = _plan("0.17.0"), _plan("0.15.0")
    # the same memory per stage either way: only the check differs
    assert whole.plan.kv_cache_bytes == per_stage.plan.kv_cache_bytes
    assert whole.plan.capacity_tokens == per_stage.plan.capacity_tokens
    layers = sum(whole.stage_layers)
    largest = max(whole.stage_layers)  # the limiting stage holds the most layers
    assert layers == 92 and largest == 12
    # needed bytes scale from the limiting stage's layers to all of them (cdiv(L, 16) blocks x page x layers)
    assert whole.needed_bytes * largest == per_stage.needed_bytes * layers
    assert per_stage.fits and not whole.fits
    assert whole.verdict == "fail" and per_stage.verdict == "ok"
    assert whole.error is not None and "KV cache is needed" in whole.error
    # the estimated length is what the whole model's blocks allow in the smallest stage's memory
    bytes_per_token_whole = whole.needed_bytes // LEN
    assert whole.estimated_max_model_len // 16 == whole.fit_available_bytes // (bytes_per_token_whole * 16)
    assert whole.estimated_max_model_len < LEN


def test_no_pipeline_parallelism_is_the_same_check() -> None:
    # 0.13.0, not 0.17.0, on the other side of the window: 0.17.0's Triton top-k/top-p sampler changes the memory
    # and the memory differs only by the FP8 experts' Marlin workspace, which 0.14.0 on keep in the workspace
    # manager (0.13.0 calls fused_marlin_moe, whose caches are freed): the check is each run's own memory
    from kvlint.memory.vllm import moe_workspace_bytes, resolve_startup

    a, b = _plan("0.15.0", pp=1, max_model_len=8192), _plan("0.13.0", pp=1, max_model_len=8192)
    assert (a.needed_bytes, a.fits) == (b.needed_bytes, b.fits)
    for d in (a, b):
        assert d.fit_available_bytes == d.plan.kv_cache_bytes
    assert b.plan.activation_bytes < a.plan.activation_bytes
    model = resolve_model("zai-org/GLM-4.7-FP8", allow_hub=False)
    s = VllmSettings(version="0.15.0", max_model_len=8192, gpu_memory_utilization=0.925, quantization="fp8")
    cfg = resolve_startup(s, model, A100_80, gpu_name="NVIDIA A100-SXM4-80GB", compute_capability="8.0")
    assert a.plan.activation_bytes - b.plan.activation_bytes <= moe_workspace_bytes(s, model, cfg, 8192)


def test_a_stage_holds_its_own_layers_bytes() -> None:
    """vLLM builds only a stage's own layers (``make_layers`` over ``get_pp_indices``), and GLM-4.7's first three
    layers (``first_k_dense_replace``) hold a dense MLP where the other 89 hold 160 experts
    (``Glm4MoeDecoderLayer``): a 12-layer stage of MoE layers holds 12 MoE layers' bytes, not 12/92 of the whole.
    kvlint split the layer bytes evenly by layer count and put 42.73 GiB on that stage (a KV pool 5.8 % above the
    28.57 GiB gt-282 printed); the layers' own bytes give 44.04 GiB (+1.2 %). Expected figures from
    ``decoder_layer_bytes``, not the engine's."""
    from kvlint.models.weights import decoder_layer_bytes

    d = _plan("0.15.0")
    model = resolve_model("zai-org/GLM-4.7-FP8", allow_hub=False)
    layers = decoder_layer_bytes(model, dtype_bytes=2, quantization="fp8")
    assert [i for i, (_, e) in enumerate(layers) if e == 0] == [0, 1, 2]  # the dense layers
    moe, dense = sum(layers[5]), sum(layers[0])
    assert dense < moe / 10
    one = _plan("0.15.0", pp=1)
    # the fullest stage (12 MoE layers, neither embedding nor LM head) against the whole model's layer bytes
    # the RoPE cache every rank holds at this length (the plan's weights_source), on both plans
    rot = 50 << 20
    embed = model.vocab_size * model.hidden_size * 2  # bf16 embedding and (untied) LM head
    assert not model.tie_word_embeddings
    per_layers = one.plan.weights_bytes - rot - 2 * embed
    start = sum(d.stage_layers[:3])  # stage 3: layers 33 - 44, all MoE
    share = sum(sum(x) for x in layers[start : start + 12]) / sum(sum(x) for x in layers)
    assert share == pytest.approx(12 * moe / sum(sum(x) for x in layers))
    assert d.plan.weights_bytes == pytest.approx(per_layers * share + rot, rel=1e-4)
    assert d.plan.weights_bytes > per_layers * 12 / 92 + rot + GiB  # over a GiB above an even split
    # the first stage: three dense layers, eight MoE layers and the embedding, lighter than the fullest
    assert sum(sum(x) for x in layers[:11]) < 11 * moe
