"""SGLang's DeepSeek sparse-attention (DSA / "NSA") server defaults and data-parallel attention, against the two
start-ups of sgl-project/sglang#11309 (gt-297: main of 2025-10-07 = the 0.5.3 wheel's sizing; gt-298: the pull
request = the 0.5.4 wheel's), DeepSeek-V3.2-Exp on eight B200 with ``--tp 8 --dp 8 --enable-dp-attention``.

What the engine does (read in the 0.5.3 – 0.5.23 wheels, kvlint/memory/sglang.py): on a GPU of compute capability
10 or more it sizes the KV cache in fp8_e4m3 (forced in 0.5.3 / 0.5.4, in place of ``auto`` later), it splits the MLA
attention projections and the input embedding over the attention-TP group (tp / dp ranks) with DP attention, its
default ``mem_fraction_static`` reserves ``3 x max_bs x dp`` (+ ``1.5 x max_bs x dp`` above 300) MiB more with DP
attention, and 0.5.3 fixes the fraction at 0.8 and leaves the indexer's keys out of the cell. The expected figures
are the logs' own (bench/groundtruth/cases.yaml), never typed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.kv import dsa_indexer_bytes
from kvlint.memory.sglang import is_sglang_dsa, plan_sglang_detailed, preload_bytes
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
GiB = 1 << 30
CASES: dict[str, dict[str, Any]] = {
    c["id"]: c
    for c in yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text(encoding="utf-8"))
}
#: the replays of bench/accuracy_engines.py: gt-297 as the 0.5.3 wheel, gt-298 as the 0.5.4 wheel
RELEASE = {"gt-297": "0.5.3", "gt-298": "0.5.4"}
ARGS = ("--tp", "8", "--dp", "8", "--enable-dp-attention")


def _model():
    # the catalogue's DeepSeek-V3.2 config stands in for V3.2-Exp (the same shapes)
    return resolve_model("deepseek-ai/DeepSeek-V3.2", allow_hub=False)


def _plan(version: str, *args: str, gpu: str = "b200"):
    acc = lookup(gpu)
    assert acc is not None
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x", *args], version)
    s.version = version
    return plan_sglang_detailed(
        s, _model(), acc.memory_bytes, gpus=8, gpu_name=acc.name, compute_capability=acc.compute_capability
    )


def _latent_and_indexer() -> tuple[int, int, int]:
    """(layers, MLA latent elements, indexer key bytes) per token from the config."""
    m = _model()
    c = m.text_config or m.config or {}
    latent = int(c["kv_lora_rank"]) + int(c["qk_rope_head_dim"])
    return m.num_layers, latent, dsa_indexer_bytes(int(c["index_head_dim"]))


def test_the_model_is_what_sglang_calls_deepseek_nsa() -> None:
    assert is_sglang_dsa(_model())


@pytest.mark.parametrize("gid", ["gt-297", "gt-298"])
def test_dsa_on_blackwell_matches_the_logged_pool(gid: str) -> None:
    """Before: a bf16 cell, the attention projections split over 8 ranks and no DP-attention reserve put the pool at
    790,400 / 733,504 tokens (-46 % / -25 %); then +8.1 % / +9.6 % without the MLA ``w_kc`` / ``w_vc`` copies
    (:func:`test_mla_absorbed_copies_are_counted_per_rank`); now within 5 % of the log (+4.1 % / +4.8 %)."""
    want = CASES[gid]["figures"]["kv_tokens"]
    got = _plan(RELEASE[gid], *ARGS).max_total_num_tokens
    assert abs(got - want) / want < 0.05, (gid, got, want)


def test_mla_absorbed_copies_are_counted_per_rank() -> None:
    """SGLang's DeepSeek-V2 family keeps ``w_kc`` / ``w_vc`` beside ``kv_b_proj`` after loading (post_load_weights,
    the 0.5.3 – 0.5.23 wheels): kv_lora x local heads x (nope + v) elements a layer, bf16 for the fp8-block
    checkpoint. With DP attention the heads are over the attention-TP group (1 rank here), else over TP 8; the
    term is in the plan's weights (the pool shrinks by it) and only for that family."""
    from dataclasses import replace

    from kvlint.memory.sglang import mla_absorbed_copy_bytes

    m = _model()
    c = m.text_config or m.config or {}
    per_head = int(c["kv_lora_rank"]) * (int(c["qk_nope_head_dim"]) + int(c["v_head_dim"]))
    whole = m.num_layers * m.num_attention_heads * per_head
    assert m.quant_method == "fp8" and (m.quant_config or {}).get("weight_block_size")
    assert mla_absorbed_copy_bytes(m, 1, 2)[0] == whole * 2  # dequantized to bfloat16
    assert mla_absorbed_copy_bytes(m, 8, 2)[0] == whole * 2 // 8
    # an fp8 checkpoint without blocks is requantized per tensor (1 B); an unquantized one keeps its dtype
    no_blocks = replace(m, quant_config={"quant_method": "fp8"})
    assert mla_absorbed_copy_bytes(no_blocks, 8, 2)[0] == whole // 8
    bf16 = replace(m, quant_method=None, quant_config=None)
    assert mla_absorbed_copy_bytes(bf16, 8, 2)[0] == whole * 2 // 8
    # not the family: no copies
    assert mla_absorbed_copy_bytes(replace(m, architectures=("LlamaForCausalLM",)), 8, 2) == (0, "")
    assert mla_absorbed_copy_bytes(resolve_model("Qwen/Qwen3-8B", allow_hub=False), 1, 2) == (0, "")
    d = _plan("0.5.4", *ARGS)
    assert any(a.startswith("MLA w_kc / w_vc") for a in d.plan.assumptions)


def test_the_cell_is_fp8_with_the_indexer_from_0_5_4_and_without_it_in_0_5_3() -> None:
    layers, latent, indexer = _latent_and_indexer()
    p4 = _plan("0.5.4", *ARGS).plan
    assert p4.kv_cache_dtype == "fp8_e4m3"
    assert p4.kv_bytes_per_token == layers * (latent + indexer)
    assert _plan("0.5.3", *ARGS).plan.kv_bytes_per_token == layers * latent
    # on Hopper (capability 9.0) the latent stays bf16
    assert _plan("0.5.23", "--tp", "8", gpu="h200").plan.kv_bytes_per_token == layers * (2 * latent + indexer)


def test_the_logged_pool_bytes_are_the_fp8_layout_of_the_cell_sglang_counts() -> None:
    """The printed KV size is the pool SGLang allocates (656 B of fp8 latent, scales and bf16 rope a layer) while the
    token count comes from the cell of :func:`test_the_cell_is_fp8_with_the_indexer_from_0_5_4_and_without_it_in_0_5_3`:
    the log's bytes a token exceed the fp8 latent (1 B an element) of that cell, and the indexer is in gt-298's."""
    layers, latent, indexer = _latent_and_indexer()
    for gid in ("gt-297", "gt-298"):
        f = CASES[gid]["figures"]
        per_tok = f["kv_size_gb"] * GiB / f["kv_tokens"] / layers
        assert latent < per_tok < 2 * latent, (gid, per_tok)
    diff = (
        CASES["gt-298"]["figures"]["kv_size_gb"] * GiB / CASES["gt-298"]["figures"]["kv_tokens"]
        - CASES["gt-297"]["figures"]["kv_size_gb"] * GiB / CASES["gt-297"]["figures"]["kv_tokens"]
    )
    assert abs(diff / layers - indexer) < 1.0


def test_dp_attention_weights_match_what_the_log_leaves() -> None:
    """gt-298: weights + other = total - pre-load - allocated pool - free after the pool (the log's two figures).
    kvlint's weights per rank are within 10 % of it (-4.4 % with the MLA w_kc / w_vc copies, -6.5 % before); with the
    attention split over 8 ranks they were 17 % short."""
    f = CASES["gt-298"]["figures"]
    acc = lookup("b200")
    assert acc is not None
    used = preload_bytes(8)[0]
    implied = acc.memory_bytes - used - (f["kv_size_gb"] + f["free_after_kv_pool_gb"]) * GiB
    got = _plan("0.5.4", *ARGS).plan.weights_bytes
    assert abs(got - implied) / implied < 0.10, (got / GiB, implied / GiB)
    # from 0.5.8 SGLang no longer turns DP attention on for the model: asked for, it holds more on each rank
    assert _plan("0.5.8", *ARGS).plan.weights_bytes > _plan("0.5.8", "--tp", "8").plan.weights_bytes


def test_default_fraction_reserves_for_dp_attention() -> None:
    """gt-298 leaves the default mem_fraction_static: (weights + other + the pool's budget) / pre-load free, from the
    log, is 0.763; kvlint 0.751 (0.81 before the DP-attention reserve and the 0.5.3 boundary)."""
    f = CASES["gt-298"]["figures"]
    acc = lookup("b200")
    assert acc is not None
    pre_free = acc.memory_bytes - preload_bytes(8)[0]
    layers, latent, indexer = _latent_and_indexer()
    rest = f["kv_tokens"] * layers * (latent + indexer)
    implied = (pre_free - (f["kv_size_gb"] + f["free_after_kv_pool_gb"]) * GiB + rest) / pre_free
    got = _plan("0.5.4", *ARGS).mem_fraction_static
    assert abs(got - implied) < 0.02, (got, implied)


def test_release_specific_overrides() -> None:
    # 0.5.3 fixes the fraction (the branch's "hardcoded mem-fraction-static=0.8") and turns DP attention on itself
    d3 = _plan("0.5.3", "--tp", "8", "--mem-fraction-static", "0.85")
    assert d3.mem_fraction_static != 0.85 and d3.dp == 8
    assert any("DeepSeek sparse-attention" in a for a in d3.plan.assumptions)
    # 0.5.4 keeps the user's fraction; 0.5.8 no longer turns DP attention on
    assert _plan("0.5.4", "--tp", "8", "--mem-fraction-static", "0.85").mem_fraction_static == 0.85
    assert _plan("0.5.8", "--tp", "8").dp == 1
    # a bf16 KV cache asked for on a B200: forced to fp8 in 0.5.4, kept from 0.5.5
    assert _plan("0.5.4", "--tp", "8", "--kv-cache-dtype", "bfloat16").plan.kv_cache_dtype == "fp8_e4m3"
    assert _plan("0.5.5", "--tp", "8", "--kv-cache-dtype", "bfloat16").plan.kv_cache_dtype != "fp8_e4m3"
    # an AMD GPU (capability major 9) keeps the model dtype
    assert _plan("0.5.23", "--tp", "8", gpu="mi300x").plan.kv_cache_dtype != "fp8_e4m3"


def test_fp8_dsa_cell_keeps_the_mtp_draft_layers() -> None:
    """On a B200 (fp8 cell for DeepSeek V3.2) with ``--speculative-algorithm EAGLE`` at 0.5.23 the draft's MTP layer
    shares each token's cell (``DefaultPoolConfigurator``'s EAGLE branch) as it does on an H200's bf16 cell: the
    fp8 recomputation for the GPU kept the target's layers only (the draft layer was dropped)."""
    from kvlint.memory import sglang_spec

    m = _model()
    nextn = int((m.text_config or m.config or {})["num_nextn_predict_layers"])
    for gpu in ("b200", "h200"):
        plain = _plan("0.5.23", "--tp", "8", gpu=gpu)
        spec = _plan("0.5.23", "--tp", "8", "--speculative-algorithm", "EAGLE", gpu=gpu)
        want = sglang_spec.scale_cell(
            plain.plan.kv_bytes_per_token, m.num_layers, nextn, (0, 5, 23), dsa=True
        )
        assert spec.plan.kv_bytes_per_token == want > plain.plan.kv_bytes_per_token, gpu
        assert any("draft layer(s)" in n and n.startswith("cell_size ") for n in spec.plan.assumptions), gpu


def test_mla_copies_are_fp8_on_rocm_and_for_other_blocks() -> None:
    """SGLang dequantizes the fp8 ``kv_b_proj`` blocks to bfloat16 only on CUDA and only for 128 x 128 blocks
    (``post_load_weights``: ``_is_cuda and weight_block_size[0] == 128 and weight_block_size[1] == 128``); otherwise
    ``block_quant_to_tensor_quant`` keeps fp8 copies (1 B an element). The copies were counted at 2 B on an AMD GPU
    and for any block size: on an MI300X the weights per rank now hold half of them, and the plan says fp8."""
    from dataclasses import replace

    from kvlint.memory.sglang import mla_absorbed_copy_bytes, sglang_prelude

    m = _model()
    cuda = mla_absorbed_copy_bytes(m, 8, 2)[0]
    assert mla_absorbed_copy_bytes(m, 8, 2, hip=True)[0] * 2 == cuda
    other_blocks = replace(m, quant_config={**(m.quant_config or {}), "weight_block_size": [64, 64]})
    assert mla_absorbed_copy_bytes(other_blocks, 8, 2)[0] * 2 == cuda
    # the same plan on an MI300X and on an H200-sized CUDA GPU of the same memory: weights differ by the half
    mi = lookup("mi300x")
    assert mi is not None
    s = parse_command_line(
        ["python", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "8"], "0.5.4"
    )
    s.version = "0.5.4"
    split = sglang_prelude(s, m).mla_copies  # (this layout's heads per rank)
    assert split is not None
    copies, hip_copies, _, _ = split
    assert hip_copies * 2 == copies > 0
    on_amd = plan_sglang_detailed(s, m, mi.memory_bytes, gpus=8, gpu_name=mi.name)
    on_cuda = plan_sglang_detailed(s, m, mi.memory_bytes, gpus=8, gpu_name="NVIDIA H200")
    assert on_cuda.plan.weights_bytes - on_amd.plan.weights_bytes == copies - hip_copies
    assert any("fp8, requantized per tensor (ROCm)" in a for a in on_amd.plan.assumptions)
    assert not any("ROCm" in a for a in on_cuda.plan.assumptions)
