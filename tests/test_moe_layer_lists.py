"""Which decoder layers of a MoE model hold experts when the config lists them per layer, and how wide the others'
dense MLP is (``kvlint.models.weights._param_breakdown``'s ``is_moe_layer``; the same choice sizes each pipeline
stage through ``decoder_layer_bytes``).

- MiMo-V2-Flash lists ``moe_layer_freq`` per layer, ``[0, 1, 1, ...]``: vLLM builds layer 0 with a dense MLP of
  ``intermediate_size`` (vllm@0.34.0 ``vllm/model_executor/models/mimo_v2.py::MiMoV2DecoderLayer.is_moe_layer``:
  ``moe_layer_freq[layer_idx]``). kvlint read the list as a frequency of 1 and priced 48 MoE layers.
- MiniMax-M3's config class makes ``mlp_layer_types`` of that list (transformers 5.25.0
  ``configuration_minimax_m3.py``), and its dense layers' MLP is ``dense_intermediate_size`` wide (vllm@0.34.0
  ``vllm/models/minimax_m3/nvidia/model.py``: ``MiniMaxM3MLP(intermediate_size=config.dense_intermediate_size)``);
  kvlint gave them ``intermediate_size`` (the experts' width).
- Laguna-XS.2 names its dense layer only in ``mlp_layer_types`` (vllm@0.34.0 ``laguna.py::LagunaDecoderLayer``:
  ``get_mlp_layer_types(config)[layer_idx] == "sparse"``); kvlint priced every layer MoE.

The expected counts are the configs' own shapes (the bundled catalogue's config.json), not any engine output.
"""

from __future__ import annotations

import pathlib

import pytest

from kvlint.models import resolve_model
from kvlint.models.weights import decoder_layer_bytes, param_breakdown


def _cfg(ref: str) -> dict:
    m = resolve_model(ref, allow_hub=False)
    return m, (m.text_config or m.config)


def test_mimo_v2_flash_first_layer_is_dense() -> None:
    m, t = _cfg("XiaomiMiMo/MiMo-V2-Flash")
    freq = t["moe_layer_freq"]
    assert isinstance(freq, list) and not freq[0] and all(freq[1:])
    per_layer = m.num_experts * 3 * m.hidden_size * m.moe_intermediate_size
    assert param_breakdown(m)["experts"] == (len(freq) - 1) * per_layer
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    assert [i for i, (_, e) in enumerate(layers) if e == 0] == [0]


def test_minimax_m3_dense_layers_use_dense_intermediate_size() -> None:
    m, t = _cfg("MiniMaxAI/MiniMax-M3")
    dense = [i for i, f in enumerate(t["moe_layer_freq"]) if not f]
    assert dense == [0, 1, 2]
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    assert [i for i, (_, e) in enumerate(layers) if e == 0] == dense
    # layer 0 and layer 3 share their attention; layer 3's MLP is the shared expert (moe_intermediate_size wide,
    # n_shared_experts 1), layer 0's the dense MLP of dense_intermediate_size
    h, rate = m.hidden_size, 2
    extra = 3 * h * (t["dense_intermediate_size"] - t["shared_intermediate_size"]) * rate
    assert t["dense_intermediate_size"] != t["intermediate_size"]
    assert layers[0][0] - layers[3][0] == extra


def test_laguna_mlp_layer_types_name_the_dense_layer() -> None:
    m, t = _cfg("poolside/Laguna-XS.2-FP8")
    sparse = [x == "sparse" for x in t["mlp_layer_types"]]
    assert not sparse[0] and all(sparse[1:]) and "mlp_only_layers" not in t
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    assert [i for i, (_, e) in enumerate(layers) if e == 0] == [0]
    per_layer = m.num_experts * 3 * m.hidden_size * m.moe_intermediate_size
    assert param_breakdown(m)["experts"] == sum(sparse) * per_layer


def _jamba(**over: object) -> dict:
    """A Jamba config of the shapes ``JambaConfig`` documents (transformers 5.25.0 ``configuration_jamba.py``),
    written for the test, 32 layers: attention every 8th from 4, the rest Mamba."""
    cfg = {
        "architectures": ["JambaForCausalLM"],
        "model_type": "jamba",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 65536,
        "attn_layer_period": 8,
        "attn_layer_offset": 4,
        "expert_layer_period": 2,
        "expert_layer_offset": 1,
        "num_experts": 16,
        "num_experts_per_tok": 2,
        "mamba_d_state": 16,
        "mamba_d_conv": 4,
        "mamba_expand": 2,
        "mamba_dt_rank": 256,
        "torch_dtype": "bfloat16",
    }
    cfg.update(over)
    return {k: v for k, v in cfg.items() if v is not None}


def test_jamba_experts_only_on_its_expert_layers() -> None:
    """vLLM builds ``JambaMoE`` where ``config.layers_num_experts[i] > 1`` (vllm@0.34.0 ``jamba.py``), which
    ``JambaConfig`` sets on layers with ``i % expert_layer_period == expert_layer_offset`` (defaults 2 and 1), and
    a ``JambaMLP`` of ``intermediate_size`` elsewhere. kvlint priced 32 MoE layers: 93.8 B parameters for
    Jamba-v0.1's shapes, where 16 MoE and 16 dense layers are 51.6 B."""
    from kvlint.models.config import parse_config

    for over, moe in (({}, [i for i in range(32) if i % 2 == 1]), ({"expert_layer_period": 4,
                      "expert_layer_offset": 3}, [3, 7, 11, 15, 19, 23, 27, 31]),
                      ({"expert_layer_period": None, "expert_layer_offset": None}, list(range(1, 32, 2)))):  # fmt: skip
        m = parse_config(_jamba(**over), model_id="test/jamba-like", source="test")
        layers = decoder_layer_bytes(m, dtype_bytes=2)
        assert [i for i, (_, e) in enumerate(layers) if e] == moe
        h, inter = 4096, 14336
        assert param_breakdown(m)["experts"] == len(moe) * 16 * 3 * h * inter
        dense = [i for i in range(32) if i not in moe]
        # a dense layer holds one MLP of intermediate_size more than a MoE layer of the same mixer
        a, b = next(i for i in dense if i % 8 != 4), next(i for i in moe if i % 8 != 4)
        assert layers[a][0] - layers[b][0] == 3 * h * inter * 2


def test_ernie_moe_layers_shared_experts_and_top_k_from_its_own_keys() -> None:
    # ERNIE 4.5 names its MoE fields moe_num_experts / moe_k / moe_num_shared_experts and routes only layers
    # moe_layer_start_index .. moe_layer_end_index every moe_layer_interval: vLLM builds Ernie4_5_MoeMoE (FusedMoE of
    # moe_intermediate_size, top_k=moe_k, plus shared_experts of moe_intermediate_size x moe_num_shared_experts) there
    # and a dense MLP of intermediate_size elsewhere (vllm@0028a751 vllm/model_executor/models/ernie45_moe.py).
    # kvlint priced every layer as MoE, no shared experts, and routed 2 experts per token.
    from pathlib import Path

    from kvlint.memory.vllm import _inter_eff, moe_top_k

    dirs = (str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "moe"),)
    m = resolve_model("baidu/ERNIE-4.5-21B-A3B-Thinking", model_dirs=dirs, allow_hub=False)
    t = m.text_config or m.config
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    assert [i for i, (_, e) in enumerate(layers) if e == 0] == [0]  # start index 1: layer 0 is dense
    h, L = m.hidden_size, m.num_layers
    moe_layers = L - 1
    shared = 3 * h * t["moe_intermediate_size"] * t["moe_num_shared_experts"]
    dense = 3 * h * t["intermediate_size"]
    attn = 2 * h * t["num_attention_heads"] * 128 + 2 * h * t["num_key_value_heads"] * 128
    parts = param_breakdown(m)
    assert parts["experts"] == moe_layers * t["moe_num_experts"] * 3 * h * t["moe_intermediate_size"]
    assert parts["linear"] == L * attn + moe_layers * shared + dense
    # the repository's published total (safetensors parameters, F32 + BF16: fixtures/models/SOURCE.md), less the
    # 64 fp32 e_score_correction_bias entries of each MoE layer, which kvlint does not count
    published = 21_825_437_888
    assert sum(parts.values()) == published - moe_layers * t["moe_num_experts"]
    assert moe_top_k(t) == t["moe_k"] == 6
    assert _inter_eff(m) == 6 * t["moe_intermediate_size"]


def test_ernie_moe_keys_from_a_hostile_config_refused_or_read_within_bounds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a config.json may be pull-request input: the counts are refused with the key named, the layer range is read
    # within the model's layers whatever it holds (a list, a string, an infinity, a huge index)
    import json
    from pathlib import Path

    import pytest

    from kvlint.types import ModelUnavailable

    src = (
        Path(__file__).resolve().parent.parent
        / "fixtures"
        / "models"
        / "moe"
        / "baidu--ERNIE-4.5-21B-A3B-Thinking"
    )
    base = json.loads((src / "config.json").read_text())

    seen = iter(range(100))

    def load(**over: object):  # type: ignore[no-untyped-def]
        d = tmp_path / str(next(seen)) / "x--e"  # a directory each: resolution is memoised per path
        d.mkdir(parents=True)
        (d / "config.json").write_text(json.dumps({**base, **over}))
        return resolve_model("x/e", model_dirs=(str(d.parent),), allow_hub=False)

    for key in ("moe_k", "moe_top_k", "moe_num_shared_experts", "moe_layer_interval"):
        with pytest.raises(ModelUnavailable, match=f"config.json {key} is"):
            load(**{key: "abc"})
        with pytest.raises(ModelUnavailable, match=f"config.json {key} is"):
            load(**{key: -3})
    for start, end in (([1, "x"], [27, None]), ("x", 1e300), (10**30, -5), (-4, 10**30)):
        m = load(moe_layer_start_index=start, moe_layer_end_index=end)
        layers = decoder_layer_bytes(m, dtype_bytes=2)
        assert len(layers) == m.num_layers


def test_arctic_residual_mlp_and_moe_layer_frequency() -> None:
    # Snowflake Arctic: every MoE layer (moe_layer_frequency) also runs a residual MLP of the hidden width beside its
    # experts when use_residual (vllm@00db0119 vllm/model_executor/models/arctic.py::ArcticDecoderLayer,
    # ArcticMLP(is_residual_mlp=True): ffn_dim = hidden_size). The model card: "a 10B dense transformer model with a
    # residual 128x3.66B MoE MLP resulting in 480B total". kvlint left the residual MLPs out: 5.4 B parameters.
    from pathlib import Path

    from kvlint.memory.vllm import _inter_eff

    dirs = (str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "moe"),)
    m = resolve_model("Snowflake/snowflake-arctic-instruct", model_dirs=dirs, allow_hub=False)
    t = m.text_config or m.config
    parts = param_breakdown(m)
    per_expert = parts["experts"] / t["num_local_experts"]
    assert abs(per_expert / 1e9 - 3.66) < 0.005  # "128x3.66B"
    dense = sum(parts.values()) - parts["experts"]
    assert abs(dense / 1e9 - 10) < 0.1  # "a 10B dense transformer model" (4.6 B without the residual MLPs)
    # the card's two parts add up to 478.5 B ("480B total" is that sum rounded)
    assert abs(sum(parts.values()) / 1e9 - (10 + 128 * 3.66)) < 0.2
    h = m.hidden_size
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    attn = 2 * h * h + 2 * h * t["num_key_value_heads"] * (h // t["num_attention_heads"])
    assert all(lin == 2 * (attn + 3 * h * h) for lin, _e in layers)
    assert _inter_eff(m) == t["num_experts_per_tok"] * t["intermediate_size"] + h


def test_experts_per_token_from_a_list_or_a_bad_value() -> None:
    # Hunyuan-MoE gives moe_topk per layer; a hand-written or hostile config.json may hold anything: int() of a list
    # or a word raised out of the plan
    from kvlint.memory.vllm import moe_top_k

    assert moe_top_k({"moe_topk": [8, 8, 8]}) == 8
    assert moe_top_k({"num_experts_per_tok": "many", "moe_k": 6}) == 6
    assert moe_top_k({"num_experts_per_tok": 10**30}) == 2
    assert moe_top_k({"moe_topk": []}) == 2


def test_step3_moe_layers_share_expert_and_low_rank_query() -> None:
    # Step 3 (vllm@0169d396 vllm/model_executor/models/step3_text.py): MoE only on the layers of moe_layers_enum
    # (4 - 59 of 61) with a share_expert MLP of share_expert_dim beside the experts, a dense MLP of intermediate_size
    # elsewhere; attention projects to a shared low-rank query (qkv_proj, a ReplicatedLinear: h -> share_q_dim + 2 x
    # one KV head) expanded by wq (share_q_dim -> heads x head_dim); top-k from moe_top_k. kvlint priced every layer
    # MoE, no shared expert, a full-width q_proj and 2 experts per token: 340 B parameters for a 321 B model.
    from pathlib import Path

    from kvlint.memory.vllm import moe_top_k
    from kvlint.models.weights import tp_replicated_bytes

    dirs = (str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "moe"),)
    m = resolve_model("stepfun-ai/step3", model_dirs=dirs, allow_hub=False)
    t = m.text_config or m.config
    h, H, d, sq = m.hidden_size, t["num_attention_heads"], t["head_dim"], t["share_q_dim"]
    moe = {int(x) for x in t["moe_layers_enum"].split(",")}
    layers = decoder_layer_bytes(m, dtype_bytes=2)
    assert {i for i, (_, e) in enumerate(layers) if e} == moe
    attn = h * (sq + 2 * d) + sq * H * d + H * d * h
    for i, (lin, exp) in enumerate(layers):
        mlp = 3 * h * (t["share_expert_dim"] if i in moe else t["intermediate_size"])
        assert lin == 2 * (attn + mlp)
        assert exp == (2 * t["moe_num_experts"] * 3 * h * t["moe_intermediate_size"] if i in moe else 0)
    assert moe_top_k(t) == 3
    # the qkv_proj's low-rank query is whole on every TP rank (its one KV head too, as any head fewer than TP)
    repl, _why = tp_replicated_bytes(m, dtype_bytes=2, tp=8)
    assert repl >= m.num_layers * (h * sq + 2 * h * d) * 2 * (1 - 1 / 8)
    # the model card's "Total Parameters (LLM) | 316B" (stepfun-ai/Step3@b0c05a81 README.md), to the billion: the
    # language model alone, without the vision tower, whose fixture config holds configuration_step3.py's defaults
    # (1.5 B parameters against the card's 321B - 316B; fixtures/models/SOURCE.md). Until branch review54A the test
    # compared the whole with 321B within 1.5 %, which the tower's 3 B shortfall passed.
    parts = param_breakdown(m)
    assert abs(sum(parts.values()) - parts["vision"] - 316e9) < 0.5e9


def test_step3_keys_from_a_hostile_config_stay_within_the_layers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json
    from pathlib import Path

    src = Path(__file__).resolve().parent.parent / "fixtures" / "models" / "moe" / "stepfun-ai--step3"
    base = json.loads((src / "config.json").read_text())
    for n, over in enumerate(
        (
            {"moe_layers_enum": "x," * 100_000 + "-7,99999999999999999999,4"},
            {"moe_layers_enum": [4, "5", None, 1e300, -1]},
            {"moe_layers_enum": 17},
        )
    ):
        d = tmp_path / str(n) / "stepfun-ai--step3"
        d.mkdir(parents=True)
        (d / "config.json").write_text(json.dumps({**base, "text_config": {**base["text_config"], **over}}))
        m = resolve_model("stepfun-ai/step3", model_dirs=(str(d.parent),), allow_hub=False)
        parts = param_breakdown(m)
        assert all(v >= 0 for v in parts.values())
        moe = [i for i, (_, e) in enumerate(decoder_layer_bytes(m, dtype_bytes=2)) if e]
        assert all(0 <= i < m.num_layers for i in moe)


@pytest.mark.parametrize("value", [-4096, 1e300, 2**60, "wide", True])
@pytest.mark.parametrize("key", ["share_q_dim", "share_expert_dim"])
def test_step3_widths_from_a_hostile_config_refused_with_the_key_named(
    tmp_path: pathlib.Path, key: str, value: object
) -> None:
    # share_q_dim and share_expert_dim size Step 3's q_proj / wq and its share_expert MLP as hidden_size sizes the
    # others (vllm step3_text.py): a width that is not a whole number from 0 to 2^53 is refused naming the key, as
    # hidden_size or moe_k is. Until branch review54A a negative or unreadable one was read as 0 (share_q_dim 1e300:
    # the full-width q_proj, 4 B parameters more, with no word) and 2^60 priced 1.7e15 parameters.
    import json
    from pathlib import Path

    from kvlint.types import ModelUnavailable

    src = Path(__file__).resolve().parent.parent / "fixtures" / "models" / "moe" / "stepfun-ai--step3"
    base = json.loads((src / "config.json").read_text())
    d = tmp_path / "stepfun-ai--step3"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps({**base, "text_config": {**base["text_config"], key: value}}))
    with pytest.raises(ModelUnavailable, match=f"config.json {key} is"):
        resolve_model("stepfun-ai/step3", model_dirs=(str(tmp_path),), allow_hub=False)
