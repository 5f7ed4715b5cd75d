"""vLLM ``--enable-lora``: the LoRA slot stacks vLLM allocates at start-up (kvlint.memory.lora, docs §1.14).

Expected sizes are computed here from the model's config.json and the stack shapes of
``vllm@0.11.0:vllm/lora/layers/*.py::create_lora_weights``, written out per module, not read from kvlint.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kvlint.engines import parse_command_line
from kvlint.memory.lora import lora_dtype_bytes, lora_stacks
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed, settings_from_config
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "plan" / "models"
GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
H100_TOTAL = int(79.18 * GiB)


def _config(name: str) -> dict:
    return json.loads((MODELS / name / "config.json").read_text())


def _expected_layer_elements(c: dict, rank: int, tp: int) -> int:
    """One decoder layer's A and B stacks for one adapter slot, module by module (0.11.0 shapes)."""
    h, inter = c["hidden_size"], c["intermediate_size"]
    hd = c.get("head_dim") or h // c["num_attention_heads"]
    q = c["num_attention_heads"] * hd // tp
    kv = max(1, c["num_key_value_heads"] // tp) * hd
    qkv = 3 * rank * h + (q + kv + kv) * rank  # MergedQKVParallelLinearWithLoRA: 3 slices, A unsharded
    o_proj = rank * q + h * rank  # RowParallelLinearWithLoRA: A over the input shard, B full output
    gate_up = 2 * rank * h + 2 * (inter // tp) * rank  # MergedColumnParallelLinearWithLoRA: 2 slices
    down = rank * (inter // tp) + h * rank
    return qkv + o_proj + gate_up + down


def test_llama_stacks_follow_the_layer_shapes() -> None:
    """Llama-3.1-8B at TP 1 and TP 2: every decoder layer's stacks, plus the embedding and LM head Llama wraps
    (``LlamaForCausalLM.embedding_modules``), each with the 256 added-vocabulary rows."""
    c = _config("meta-llama--Llama-3.1-8B")
    model = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    for tp in (1, 2):
        st = lora_stacks(
            model, model.layers, tp=tp, max_loras=4, max_lora_rank=64, element_bytes=2, model_bytes=2
        )
        assert st.layers == 4 * 2 * c["num_hidden_layers"] * _expected_layer_elements(c, 64, tp)
        v, h = c["vocab_size"], c["hidden_size"]
        assert st.embedding == 4 * 2 * ((v + 256) * 64 + h * 64 + 256 * h)
        assert st.lm_head == 4 * 2 * (64 * h + math.ceil(v / 256) * 256 * 64 + 256 * h)
        assert st.unpriced == ()
    # vLLM's defaults (1 slot, rank 16): 80 MiB of layer stacks for this model
    assert lora_stacks(model, model.layers).layers == 80 * (1 << 20)


def test_qwen2_wraps_no_embedding_and_fully_sharded_splits_the_rank() -> None:
    """Qwen2 lists no embedding modules in vLLM 0.11.0, so only its linear layers get stacks; with
    ``--fully-sharded-loras`` the column layers' A stacks hold rank / tp rows and the row layers' B stacks output / tp."""
    c = _config("Qwen--Qwen2.5-7B")
    model = resolve_model(str(MODELS / "Qwen--Qwen2.5-7B"), allow_hub=False)
    st = lora_stacks(model, model.layers, tp=2, max_lora_rank=32)
    assert (st.embedding, st.lm_head) == (0, 0)
    assert st.layers == 2 * c["num_hidden_layers"] * _expected_layer_elements(c, 32, 2)
    sharded = lora_stacks(model, model.layers, tp=2, max_lora_rank=32, fully_sharded=True)
    h, inter, hd = c["hidden_size"], c["intermediate_size"], c["hidden_size"] // c["num_attention_heads"]
    q, kv = c["num_attention_heads"] * hd // 2, max(1, c["num_key_value_heads"] // 2) * hd
    per_layer = (3 * 16 * h + (q + 2 * kv) * 32) + (32 * q + (h // 2) * 32)
    per_layer += (2 * 16 * h + 2 * (inter // 2) * 32) + (32 * (inter // 2) + (h // 2) * 32)
    assert sharded.layers == 2 * c["num_hidden_layers"] * per_layer < st.layers


def test_moe_experts_are_named_as_not_priced() -> None:
    model = resolve_model(str(MODELS / "Qwen--Qwen3-30B-A3B"), allow_hub=False)
    st = lora_stacks(model, model.layers, tp=1)
    assert st.layers > 0 and any("experts" in u for u in st.unpriced)


def test_lora_dtype() -> None:
    assert lora_dtype_bytes(None, 2) == 2 and lora_dtype_bytes("auto", 2) == 2
    assert lora_dtype_bytes("float32", 2) == 4 and lora_dtype_bytes("bfloat16", 4) == 2


@pytest.mark.parametrize("version", ["0.8.0", "0.11.0", "0.19.0"])
def test_enable_lora_takes_its_stacks_from_the_kv_cache(version: str) -> None:
    """The same start-up with ``--enable-lora --max-loras 4 --max-lora-rank 64``: the weights grow and the KV
    cache shrinks by exactly the stacks (vLLM allocates them before the profile run), and the plan says so."""
    model = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    base = VllmSettings(version=version, max_model_len=8192)
    lora = base.changed(enable_lora=True, max_loras=4, max_lora_rank=64)
    a = plan_vllm_detailed(base, model, H100_TOTAL, **H100).plan
    b = plan_vllm_detailed(lora, model, H100_TOTAL, **H100).plan
    st = lora_stacks(model, model.layers, max_loras=4, max_lora_rank=64)
    stacks = st.layers + st.embedding + st.lm_head
    assert stacks > GiB  # 1.39 GiB: a setting that matters
    assert b.weights_bytes - a.weights_bytes == stacks
    assert a.kv_cache_bytes - b.kv_cache_bytes == stacks
    assert any("--enable-lora: 4 LoRA slot(s) x rank 64" in n for n in b.assumptions)
    assert not any("--enable-lora" in n for n in a.assumptions)


def test_settings_read_the_lora_flags() -> None:
    cfg = parse_command_line(
        "vllm serve m --enable-lora --max-loras 4 --max-lora-rank 64 --fully-sharded-loras --lora-dtype float32".split()
    )
    s = settings_from_config(cfg)
    assert (s.enable_lora, s.max_loras, s.max_lora_rank, s.fully_sharded_loras, s.lora_dtype) == (
        True, 4, 64, True, "float32",
    )  # fmt: skip
    plain = settings_from_config(parse_command_line("vllm serve m".split()))
    assert (plain.enable_lora, plain.max_loras, plain.max_lora_rank) == (False, None, None)


def test_pipeline_stages_hold_their_own_layers_embedding_first_lm_head_last() -> None:
    model = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    s = VllmSettings(version="0.11.0", max_model_len=8192, pipeline_parallel_size=2, enable_lora=True)
    d = plan_vllm_detailed(s, model, H100_TOTAL, **H100)
    full = lora_stacks(model, model.layers)
    half = lora_stacks(model, model.layers[:16])
    # the limiting stage is one of the two; its LoRA note states its own share
    assert full.layers == 2 * half.layers
    notes = [n for n in d.plan.assumptions if n.startswith("--enable-lora")]
    assert notes and all("0.04 GiB" in n or "0.05 GiB" in n for n in notes)


@pytest.mark.parametrize(
    "version,use_v1,counted",
    [
        ("0.6.5", False, True),  # memory_profiling: current - baseline - weights - torch diff holds them
        ("0.7.0", False, False),  # created after the load profiler, non-torch since start-up misses them
        ("0.7.3", False, False),
        ("0.8.0", False, True),  # created inside the load profiler
        ("0.8.0", True, True),
    ],
)
def test_v0_07x_leaves_the_stacks_out_of_the_kv_budget(version: str, use_v1: bool, counted: bool) -> None:
    """vllm-project/vllm#14450: V0 of 0.7.x computes the same KV blocks whatever the LoRA rank and slots (read in
    the 0.7.0 and 0.7.3 wheels); the plan says the stacks are held beyond the budget instead of subtracting them."""
    model = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    base = VllmSettings(version=version, max_model_len=8192, use_v1=use_v1)
    lora = base.changed(enable_lora=True, max_loras=4, max_lora_rank=64)
    a = plan_vllm_detailed(base, model, H100_TOTAL, **H100).plan
    b = plan_vllm_detailed(lora, model, H100_TOTAL, **H100).plan
    assert b.era == ("v1" if use_v1 else "v0")
    st = lora_stacks(model, model.layers, max_loras=4, max_lora_rank=64)
    assert a.kv_cache_bytes - b.kv_cache_bytes == (st.layers + st.embedding + st.lm_head if counted else 0)
    note = next(n for n in b.assumptions if n.startswith("--enable-lora"))
    assert ("vllm-project/vllm#14450" in note) != counted


@pytest.mark.parametrize(
    "flags,option,raw",
    [
        ("--max-loras -5", "--max-loras", "-5"),
        ("--max-loras 0", "--max-loras", "0"),
        ("--max-lora-rank 7", "--max-lora-rank", "7"),
        ("--max-lora-rank 1024", "--max-lora-rank", "1024"),
        ("--max-loras 4 --max-cpu-loras 2", "--max-cpu-loras", "2"),
        ("--max-cpu-loras 0", "--max-cpu-loras", "0"),
    ],
)
def test_lora_sizes_vllm_refuses_are_kv206_and_not_priced(flags: str, option: str, raw: str) -> None:
    """vLLM's LoRAConfig refuses max_loras < 1, a rank outside MaxLoRARanks and max_cpu_loras < max_loras when
    --enable-lora is set (vllm/config/lora.py). Before, kvlint printed no finding and its plan said '-5 LoRA
    slot(s)' while pricing one. Now each is a KV206 error at the value, and the refused value is not priced."""
    cfg = parse_command_line(f"vllm serve m --enable-lora {flags}".split())
    found = [f for f in cfg.findings if f.rule == "KV206"]
    assert [(getattr(f, "option", ""), f.severity) for f in found] == [(option, "error")]
    assert repr(raw) in found[0].message
    dest = option.lstrip("-").replace("-", "_")
    assert dest not in cfg.flags
    # the same values without --enable-lora build no LoRAConfig in vLLM: nothing to refuse
    plain = parse_command_line(f"vllm serve m {flags}".split())
    assert not [f for f in plain.findings if f.rule == "KV206"]


def test_lora_sizes_vllm_accepts_are_not_findings() -> None:
    for flags in (
        "--max-loras 1 --max-lora-rank 1",
        "--max-loras 8 --max-lora-rank 320 --max-cpu-loras 8",
        "",
    ):
        cfg = parse_command_line(f"vllm serve m --enable-lora {flags}".split())
        assert not [f for f in cfg.findings if f.rule == "KV206"], flags
