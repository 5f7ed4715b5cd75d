"""SGLang DP attention (``--enable-dp-attention``): the attention layers run over the attention-TP group
(``attn_tp_size = tp_size / dp_size``), so each rank keeps more KV heads per token and more attention weights, and the
default mem_fraction_static reserves more for the decode graphs. Read in the SGLang wheels 0.5.5, 0.5.13, 0.5.16 and
0.5.23 (kvlint/memory/sglang.py, kvlint/models/weights.py::tp_replicated_bytes).

The expected figures come from kvlint's own model functions (cell_size, gpu_tier, the per-module parameter list of
_param_breakdown) on real configs, never from hard-coded engine numbers.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.sglang import cell_size, default_mem_fraction_static, gpu_tier, plan_sglang_detailed
from kvlint.models import resolve_model
from kvlint.models.weights import _param_breakdown

FIX = Path(__file__).resolve().parent.parent / "fixtures"
QWEN_MOE = "Qwen/Qwen3-30B-A3B"  # 4 KV heads: at tp 4 one head per rank, at attn_tp 2 two
DSV3 = "deepseek-ai/DeepSeek-V3"


def _model(ref: str):
    return resolve_model(ref, model_dirs=(str(FIX / "plan" / "models"),), allow_hub=False)


def _cmd(mid: str, *args: str, version: str = "0.5.23"):
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", mid, *args], version)
    s.version = version
    return s


def test_default_fraction_reserves_for_dp_attention_graphs() -> None:
    """From 0.5.5 the default reserve adds ``max_bs × dp_size × 3`` MiB with DP attention, and ``max_bs × dp_size ×
    1.5`` more above a graph batch of 300 (``reserve_for_graph_mb``); kvlint's default ignored it."""
    h200 = lookup("h200").memory_bytes / (1 << 20) + 512
    for v in ((0, 5, 5), (0, 5, 23)):
        for tp, dp in ((2, 2), (8, 8)):
            bs = gpu_tier(h200, tp, v)[1]
            plain = default_mem_fraction_static(v, h200, tp=tp)[0]
            dpa = default_mem_fraction_static(v, h200, tp=tp, dp_attention=True, dp=dp)[0]
            extra = bs * dp * 3 + (bs * dp * 1.5 if bs > 300 else 0)
            # the fractions are rounded to 3 places: the difference is the extra reserve over the GPU within that
            assert abs((plain - dpa) - extra / h200) <= 0.0011, (v, tp, dp)
            assert dpa < plain
    # 0.4.10's GiB reserve already had its own + 2 GiB
    assert (
        default_mem_fraction_static((0, 4, 10), h200, tp=8, dp_attention=True)[0]
        < default_mem_fraction_static((0, 4, 10), h200, tp=8)[0]
    )


def test_kv_heads_and_attention_weights_over_the_attention_tp_group() -> None:
    """Qwen3-30B-A3B at tp 4 with dp 2 and DP attention: each rank keeps the KV heads of attn_tp 2 (two of four, not
    one), and the attention projections over 2 ranks: ``B × (1/2 - 1/4)`` more bytes for each of its q/k/v/o of B
    bytes (unquantized bf16), and from 0.5.9 its input embedding (``Qwen2MoeModel``'s ``use_attn_tp_group=
    is_dp_attention_enabled()``) likewise; the experts stay over all 4."""
    m = _model(QWEN_MOE)
    total = lookup("h200").memory_bytes
    plain = plan_sglang_detailed(_cmd(QWEN_MOE, "--tp", "4", "--dp", "2"), m, total, gpus=4)
    dpa = plan_sglang_detailed(
        _cmd(QWEN_MOE, "--tp", "4", "--dp", "2", "--enable-dp-attention"), m, total, gpus=4
    )
    assert plain.plan.kv_bytes_per_token == cell_size(m, 4, 2)[0]
    assert dpa.plan.kv_bytes_per_token == cell_size(m, 2, 2)[0] > plain.plan.kv_bytes_per_token
    sink: list[tuple[str, int, str]] = []
    _param_breakdown(m, sink)
    attn = sum(n for name, n, part in sink if part == "linear" and ".self_attn." in name) * 2
    assert attn > 0
    embed = m.vocab_size * m.hidden_size * 2
    assert abs((dpa.plan.weights_bytes - plain.plan.weights_bytes) - (attn + embed) * (1 / 2 - 1 / 4)) <= 2
    assert any("DP attention" in n for n in dpa.plan.assumptions)
    assert not any("DP attention" in n for n in plain.plan.assumptions)


def test_mla_attention_weights_grow_but_the_latent_cell_does_not() -> None:
    """DeepSeek-V3 at tp 8, dp 8 with DP attention: the MLA latent is one head, kept whole either way (the cell is
    unchanged), while q_b / kv_b / o_proj are whole on every rank (attn_tp 1); the fewer KV tokens follow from the
    larger weights and the larger reserve."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    plain = plan_sglang_detailed(_cmd(DSV3, "--tp", "8", "--dp", "8"), m, total, gpus=8)
    dpa = plan_sglang_detailed(
        _cmd(DSV3, "--tp", "8", "--dp", "8", "--enable-dp-attention"), m, total, gpus=8
    )
    assert dpa.plan.kv_bytes_per_token == plain.plan.kv_bytes_per_token == cell_size(m, 8, 2)[0]
    assert dpa.plan.weights_bytes > plain.plan.weights_bytes
    assert dpa.mem_fraction_static < plain.mem_fraction_static
    assert dpa.max_total_num_tokens < plain.max_total_num_tokens


LLAMA = "meta-llama/Llama-3.1-70B"  # 8 KV heads: at tp 8 one per rank, at attn_tp 4 two


def test_llama_attention_stays_over_all_tp_ranks_but_its_cell_follows_attn_tp() -> None:
    """Llama (models/llama.py in the 0.5.3 - 0.5.23 wheels) builds ``QKVParallelLinear`` / ``RowParallelLinear`` over
    the whole TP group even with DP attention, so its weights per rank do not grow; the pool still sizes the KV heads
    of the attention-TP group (``get_attention_tp_size()`` / ``attn_tp_size`` for every model). kvlint split every
    architecture's attention over attn_tp."""
    m = _model(LLAMA)
    total = lookup("h200").memory_bytes
    for version in ("0.5.5", "0.5.23"):
        plain = plan_sglang_detailed(_cmd(LLAMA, "--tp", "8", "--dp", "2", version=version), m, total, gpus=8)
        dpa = plan_sglang_detailed(
            _cmd(LLAMA, "--tp", "8", "--dp", "2", "--enable-dp-attention", version=version), m, total, gpus=8
        )
        assert dpa.plan.weights_bytes == plain.plan.weights_bytes, version
        assert dpa.plan.kv_bytes_per_token == cell_size(m, 4, 2)[0] > plain.plan.kv_bytes_per_token, version
        assert any("stay over all 8 ranks" in n for n in dpa.plan.assumptions), version


def test_deepseek_input_embedding_whole_before_058_then_over_attn_tp() -> None:
    """DeepSeek-V3 at tp 8, dp 2 with DP attention: 0.5.3 - 0.5.7 build the input embedding whole on every rank
    (``enable_tp=not is_dp_attention_enabled()``), 0.5.8 over the attention-TP group of 4 (``use_attn_tp_group``);
    kvlint took the attention-TP group at every release. The two plans differ by the embedding's ``1 - 1/4`` share."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    args = ("--tp", "8", "--dp", "2", "--enable-dp-attention")
    old = plan_sglang_detailed(_cmd(DSV3, *args, version="0.5.7"), m, total, gpus=8)
    new = plan_sglang_detailed(_cmd(DSV3, *args, version="0.5.8"), m, total, gpus=8)
    table = m.vocab_size * m.hidden_size * 2  # bf16 embedding (DeepSeek-V3 keeps it unquantized)
    assert abs((old.plan.weights_bytes - new.plan.weights_bytes) - table * (1 - 1 / 4)) <= 2
    assert any("whole on every rank" in n for n in old.plan.assumptions)
    assert any("over the attention-TP group (+" in n for n in new.plan.assumptions)


def test_dp_attention_embedding_share_stays_on_the_first_pipeline_stage() -> None:
    """With pipeline stages the input embedding is built on the first stage only (``PPMissingLayer`` elsewhere), so
    the DeepSeek-V2 family's DP-attention embedding share (whole before 0.5.8, over the attention-TP group from 0.5.8)
    weighs on that stage alone; the merge spread it over the stages by layer count."""
    from kvlint.memory.sglang import sglang_prelude

    m = _model(DSV3)
    args = ("--tp", "8", "--dp", "2", "--pp-size", "2", "--enable-dp-attention")
    old = sglang_prelude(_cmd(DSV3, *args, version="0.5.7"), m)
    new = sglang_prelude(_cmd(DSV3, *args, version="0.5.8"), m)
    assert len(old.stage_weights) == len(new.stage_weights) == 2
    table = m.vocab_size * m.hidden_size * 2
    assert old.stage_weights[1] == new.stage_weights[1]
    assert abs((old.stage_weights[0] - new.stage_weights[0]) - table * (1 - 1 / 4)) <= 2


def _weights(mid: str, *args: str, version: str, env: dict[str, str] | None = None) -> int:
    m = _model(mid)
    s = _cmd(mid, *args, version=version)
    if env:
        s.env.update(env)
    return plan_sglang_detailed(s, m, lookup("h200").memory_bytes, gpus=4).plan.weights_bytes


def test_input_embedding_under_dp_attention_by_release_outside_deepseek() -> None:
    """Qwen2Model (Qwen2.5-7B at tp 4, dp 2): with DP attention its input embedding is whole on every rank in
    0.5.3 - 0.5.8 (``enable_tp=not is_dp_attention_enabled()``) and over the attention-TP group from 0.5.9
    (``use_attn_tp_group=is_dp_attention_enabled()``); Qwen2's attention and head stay over all TP ranks, so the
    difference is the embedding's alone. Llama keeps its embedding over the whole TP group."""
    mid = "Qwen/Qwen2.5-7B"
    m = _model(mid)
    table = m.vocab_size * m.hidden_size * 2
    dp = ("--tp", "4", "--dp", "2", "--enable-dp-attention")
    for version, ranks in (("0.5.5", 1), ("0.5.8", 1), ("0.5.9", 2), ("0.5.13", 2), ("0.5.23", 2)):
        grown = _weights(mid, *dp, version=version) - _weights(mid, "--tp", "4", "--dp", "2", version=version)
        assert abs(grown - table * (1 / ranks - 1 / 4)) <= 2, version
    llama = "meta-llama/Llama-3.1-70B"
    assert _weights(llama, *dp, version="0.5.23") == _weights(
        llama, "--tp", "4", "--dp", "2", version="0.5.23"
    )


def test_dp_lm_head_and_embedding_replication() -> None:
    """``--enable-dp-lm-head`` puts an untied output head over the attention-TP group for the architectures whose
    ``ParallelLMHead`` reads it (Qwen3-MoE; not Qwen2); ``SGLANG_ENABLE_EMBED_REPLICATION`` (0.5.13 on) keeps the
    DeepSeek-V2 family's whole input embedding on every rank, with or without DP attention."""
    moe = _model(QWEN_MOE)
    table = moe.vocab_size * moe.hidden_size * 2
    dp = ("--tp", "4", "--dp", "2", "--enable-dp-attention")
    head = _weights(QWEN_MOE, *dp, "--enable-dp-lm-head", version="0.5.23") - _weights(
        QWEN_MOE, *dp, version="0.5.23"
    )
    assert abs(head - table * (1 / 2 - 1 / 4)) <= 2
    qwen2 = "Qwen/Qwen2.5-7B"
    assert _weights(qwen2, *dp, "--enable-dp-lm-head", version="0.5.23") == _weights(
        qwen2, *dp, version="0.5.23"
    )
    ds = _model(DSV3)
    ds_table = ds.vocab_size * ds.hidden_size * 2  # the embedding in the config's torch_dtype (bfloat16)
    on = {"SGLANG_ENABLE_EMBED_REPLICATION": "1"}
    for version, applies in (("0.5.10", False), ("0.5.13", True), ("0.5.23", True)):
        grown = _weights(DSV3, "--tp", "4", version=version, env=on) - _weights(
            DSV3, "--tp", "4", version=version
        )
        assert (grown > 0) == applies, version
        if applies:
            assert abs(grown - ds_table * (1 - 1 / 4)) <= 2, version


def test_embedding_replication_switch_read_as_envbool() -> None:
    """``SGLANG_ENABLE_EMBED_REPLICATION`` is read as SGLang's ``EnvBool.parse`` reads it (``sglang/srt/environ.py``,
    0.5.10 - 0.5.23 wheels): ``y``/``Yes``/``TRUE`` turn it on; ``on`` and a value with a space are invalid there
    (``EnvField.get`` warns and keeps the default, off), so the embedding stays split."""
    base = _weights(DSV3, "--tp", "4", version="0.5.23")
    for value, applies in (
        ("y", True),
        ("Yes", True),
        ("TRUE", True),
        ("on", False),
        (" 1", False),
        ("0", False),
    ):
        grown = (
            _weights(DSV3, "--tp", "4", version="0.5.23", env={"SGLANG_ENABLE_EMBED_REPLICATION": value})
            - base
        )
        assert (grown > 0) == applies, value
