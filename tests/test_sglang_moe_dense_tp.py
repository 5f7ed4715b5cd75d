"""SGLang ``--moe-dense-tp-size 1``: the dense MLP of a MoE model's non-MoE layers is built whole on every TP rank
(sglang@0.4.6 ``srt/models/deepseek_v2.py::DeepseekV2DecoderLayer``: ``DeepseekV2MLP(..., tp_rank=0, tp_size=1)``
when ``_enable_moe_dense_fully_dp()``; 0.5.23 ``parallel_group="replicated"`` behind ``is_dense_ffn_fully_dp()``),
and SGLang asserts the value is 1 or unset (or, from 0.5.13, the TP size). docs/engine-memory-model.md §3.3.

Expected figures are derived from the model's config.json (hidden_size, intermediate_size, first_k_dense_replace),
not from kvlint's output.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.sglang import plan_sglang_detailed, sglang_prelude
from kvlint.models import resolve_model

FIX = Path(__file__).resolve().parent.parent / "fixtures"
V2_LITE = "deepseek-ai/DeepSeek-V2-Lite"  # bf16, first_k_dense_replace 1
QWEN_MOE = "Qwen/Qwen3-30B-A3B"  # Qwen3MoeForCausalLM: never reads the flag


def _model(ref: str):
    return resolve_model(ref, model_dirs=(str(FIX / "plan" / "models"),), allow_hub=False)


def _cmd(mid: str, *args: str, version: str = "0.5.23"):
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", mid, *args], version)
    s.version = version
    return s


def _dense_mlp_bytes(m) -> int:
    """Bytes of the dense MLPs (gate, up, down: 3 × h × I each) of the first ``first_k_dense_replace`` layers, bf16."""
    c = m.text_config or m.config
    assert c["torch_dtype"] == "bfloat16" and c.get("moe_layer_freq", 1) == 1
    return c["first_k_dense_replace"] * 3 * c["hidden_size"] * c["intermediate_size"] * 2


def test_dense_mlp_whole_on_every_rank() -> None:
    m = _model(V2_LITE)
    total = lookup("h100").memory_bytes
    for version in ("0.4.6", "0.5.5", "0.5.23"):
        for tp in (2, 8):
            plain = plan_sglang_detailed(_cmd(V2_LITE, "--tp", str(tp), version=version), m, total, gpus=tp)
            whole = plan_sglang_detailed(
                _cmd(V2_LITE, "--tp", str(tp), "--moe-dense-tp-size", "1", version=version), m, total, gpus=tp
            )
            grown = whole.plan.weights_bytes - plain.plan.weights_bytes
            assert abs(grown - _dense_mlp_bytes(m) * (1 - 1 / tp)) <= 2, (version, tp)
            assert whole.plan.capacity_tokens < plain.plan.capacity_tokens
            assert any("--moe-dense-tp-size 1" in n for n in whole.plan.assumptions)


def test_flag_changes_nothing_where_sglang_does_not_read_it() -> None:
    """tp 1, ``--moe-dense-tp-size`` equal to the TP size, a model whose SGLang file never reads the flag (Qwen3-MoE,
    every layer MoE), and a release before the flag (0.4.4: KV205 elsewhere)."""
    lite, qwen = _model(V2_LITE), _model(QWEN_MOE)
    cases = [
        (lite, ("--tp", "1"), "0.5.23"),
        (lite, ("--tp", "4"), "0.4.4"),
        (qwen, ("--tp", "4"), "0.5.23"),
    ]
    for m, args, version in cases:
        mid = V2_LITE if m is lite else QWEN_MOE
        a = sglang_prelude(_cmd(mid, *args, version=version), m)
        b = sglang_prelude(_cmd(mid, *args, "--moe-dense-tp-size", "1", version=version), m)
        assert a.weights_bytes == b.weights_bytes, (mid, args, version)
    a = sglang_prelude(_cmd(V2_LITE, "--tp", "4"), lite)
    b = sglang_prelude(_cmd(V2_LITE, "--tp", "4", "--moe-dense-tp-size", "4"), lite)
    assert a.weights_bytes == b.weights_bytes


def test_pipeline_stage_of_the_dense_layers_holds_them() -> None:
    """With ``--pp-size 2`` the whole dense MLP of layer 0 is on the first stage only, not spread by layer count."""
    m = _model(V2_LITE)
    plain = sglang_prelude(_cmd(V2_LITE, "--tp", "2", "--pp-size", "2"), m)
    whole = sglang_prelude(_cmd(V2_LITE, "--tp", "2", "--pp-size", "2", "--moe-dense-tp-size", "1"), m)
    assert len(whole.stage_weights) == 2
    assert abs((whole.stage_weights[0] - plain.stage_weights[0]) - _dense_mlp_bytes(m) / 2) <= 2
    assert whole.stage_weights[1] == plain.stage_weights[1]


def _kv206(version: str, *args: str) -> list[str]:
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", V2_LITE, *args], version)
    return [f.message for f in s.findings if f.rule == "KV206"]


def test_values_sglang_asserts_against() -> None:
    assert _kv206("0.5.5", "--tp", "8", "--moe-dense-tp-size", "2")
    assert _kv206("0.5.23", "--tp", "8", "--moe-dense-tp-size", "2")
    # equal to tp_size: refused up to 0.5.12, accepted from 0.5.13
    assert "only support 1 and None" in _kv206("0.5.12", "--tp", "8", "--moe-dense-tp-size", "8")[0]
    assert not _kv206("0.5.13", "--tp", "8", "--moe-dense-tp-size", "8")
    assert not _kv206("0.4.6", "--tp", "8", "--moe-dense-tp-size", "1")
    assert "integer" in _kv206("0.5.23", "--moe-dense-tp-size", "one")[0]
    # a TP size kvlint cannot read: no guess
    assert not _kv206("0.5.23", "--tp", "$(TP)", "--moe-dense-tp-size", "8")


V3 = "deepseek-ai/DeepSeek-V3"  # DeepseekV3ForCausalLM, MLA without DSA, first_k_dense_replace 3
V32 = "nvidia/DeepSeek-V3.2-NVFP4"  # DeepseekV32ForCausalLM: MLA with a DSA indexer


def _weights(ref: str, m, version: str, *args: str) -> int:
    return sglang_prelude(_cmd(ref, "--tp", "8", *args, version=version), m).weights_bytes


def test_prefill_context_parallel_sets_the_dense_tp_itself() -> None:
    """Prefill context parallelism makes SGLang set ``moe_dense_tp_size = 1`` for the DeepSeek family
    (sglang@0.5.23 ``arg_groups/model_overrides/deepseek_v2.py::_deepseek_family_overrides``, MLA block: "For MLA CP,
    we have the following restrictions: moe_dense_tp_size == 1 ..."; 0.5.13 ``server_args.py``), so the dense MLP
    of DeepSeek-V3's first three layers is whole on every rank though the command does not say so; 0.5.10 has the
    option and leaves it alone."""
    m = _model(V3)
    for version, opt in (
        ("0.5.23", "--enable-prefill-cp"),
        ("0.5.16", "--enable-prefill-context-parallel"),
        ("0.5.13", "--enable-prefill-context-parallel"),
    ):
        plain = _weights(V3, m, version)
        cp = (
            _weights(V3, m, version, opt, "--cp-strategy", "zigzag")
            if version != "0.5.13"
            else _weights(V3, m, version, opt)
        )
        explicit = _weights(V3, m, version, "--moe-dense-tp-size", "1")
        # the same plan as the flag given by hand (whose bytes the tests above check against config.json)
        assert cp == explicit > plain, version
    assert _weights(V3, m, "0.5.10", "--enable-prefill-context-parallel") == _weights(V3, m, "0.5.10")
    total = lookup("h100").memory_bytes
    p = plan_sglang_detailed(
        _cmd(V3, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag"), m, total, gpus=8
    )
    assert any("SGLang sets it under --enable-prefill-cp" in n for n in p.plan.assumptions), (
        p.plan.assumptions
    )


def test_dsa_context_parallel_sets_it_only_with_zigzag_from_0_5_23() -> None:
    """DeepSeek V3.2 (DSA): the DSA block sets it under any prefill CP up to 0.5.20 (``--enable-prefill-cp``;
    0.5.13's ``--enable-dsa-prefill-context-parallel``), with ``--cp-strategy zigzag`` only in 0.5.23."""
    m = resolve_model(V32, model_dirs=(str(FIX / "models" / "catalogue"),), allow_hub=False)
    base = {v: _weights(V32, m, v) for v in ("0.5.13", "0.5.20", "0.5.23")}
    assert _weights(V32, m, "0.5.13", "--enable-dsa-prefill-context-parallel") > base["0.5.13"]
    assert (
        _weights(V32, m, "0.5.13", "--enable-prefill-context-parallel") == base["0.5.13"]
    )  # the MLA block's
    assert _weights(V32, m, "0.5.20", "--enable-prefill-cp", "--cp-strategy", "interleave") > base["0.5.20"]
    assert _weights(V32, m, "0.5.23", "--enable-prefill-cp", "--cp-strategy", "interleave") == base["0.5.23"]
    assert _weights(V32, m, "0.5.23", "--enable-prefill-cp", "--cp-strategy", "zigzag") > base["0.5.23"]
