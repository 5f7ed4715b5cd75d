"""SGLang speculative decoding (EAGLE / EAGLE3 / NEXTN / STANDALONE): the draft's KV layers in the pool, the default
fraction's reserve, 0.5.5's token padding and the reset --max-running-requests, by release
(kvlint/memory/sglang_spec.py; read in the SGLang wheels 0.5.5, 0.5.13, 0.5.15, 0.5.16, 0.5.18 – 0.5.23).

Every expected figure comes from kvlint's own model functions (cell_size, default_mem_fraction_static, the
release rules of sglang_spec) on real configs (fixtures/plan/models, the bundled catalogue), never from hard-coded
engine numbers.
"""

from __future__ import annotations

from pathlib import Path

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory import sglang_spec
from kvlint.memory.sglang import cell_size, plan_sglang_detailed, sglang_prelude
from kvlint.models import resolve_model

FIX = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_DIRS = (str(FIX / "plan" / "models"),)
DSV3 = "deepseek-ai/DeepSeek-V3"


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str = "0.5.23", model: str = DSV3):
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", model, *args], version)
    s.version = version
    return s


def _nextn(m) -> int:
    return int((m.text_config or m.config)["num_nextn_predict_layers"])


def test_nextn_draft_layers_join_the_cell_from_0_5_15() -> None:
    """DeepSeek-V3 with NEXTN and no draft path: SGLang takes the target checkpoint's MTP head as the draft and, from
    0.5.15, sizes one cell over the target's 61 layers and the num_nextn_predict_layers draft layer at the target's
    per-layer size, so the pool holds fewer tokens than the target alone; before 0.5.15 the cell is the target's."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    base_cell = cell_size(m, 8, 2)[0]
    d = _nextn(m)
    for version in ("0.5.16", "0.5.21", "0.5.23"):
        v = tuple(int(x) for x in version.split("."))
        plain = plan_sglang_detailed(_cmd("--tp-size", "8", version=version), m, total, gpus=8)
        spec = plan_sglang_detailed(
            _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version=version), m, total, gpus=8
        )
        want = sglang_spec.scale_cell(base_cell, m.num_layers, d, v)  # type: ignore[arg-type]
        assert plain.plan.kv_bytes_per_token == base_cell
        assert spec.plan.kv_bytes_per_token == want > base_cell, version
        # the same memory (no reserve from 0.5.15) over the larger cell
        assert spec.mem_fraction_static == plain.mem_fraction_static
        assert spec.rest_bytes == plain.rest_bytes
        assert spec.max_total_num_tokens == spec.rest_bytes // want < plain.max_total_num_tokens
        assert any("share each token's cell" in n for n in spec.plan.assumptions)
        assert any("the draft's weights" in n for n in spec.plan.assumptions)


def test_the_draft_share_is_added_or_multiplied_as_the_release_does() -> None:
    """0.5.15 – 0.5.21 scale the cell, ``int(cell × (1 + d / n))``; 0.5.22 and 0.5.23 add ``int(cell × d / n)``
    (a DSA model from 0.5.18). On a cell where the two differ by a float rounding, each release keeps its own."""
    cell, n, d = 7, 3, 1  # 7 × (1 + 1/3) = 9.33..., 7 + int(7/3) = 9
    assert sglang_spec.scale_cell(cell, n, d, (0, 5, 13)) == cell  # before 0.5.15: the target's cell
    assert sglang_spec.scale_cell(cell, n, d, (0, 5, 16)) == int(cell * (1 + d / n))
    assert sglang_spec.scale_cell(cell, n, d, (0, 5, 23)) == cell + int(cell * d / n)
    # a case where they differ: int(10 × (1 + 1/3)) = 13 = 10 + int(3.33); int(5 × 1.2) = 6 = 5 + 1; search one
    diff = next(
        (c, k) for c in range(1, 500) for k in range(1, 80) if int(c * (1 + 1 / k)) != c + int(c * 1 / k)
    )
    c, k = diff
    assert sglang_spec.scale_cell(c, k, 1, (0, 5, 21)) == int(c * (1 + 1 / k))
    assert sglang_spec.scale_cell(c, k, 1, (0, 5, 22)) == c + int(c / k)
    assert sglang_spec.scale_cell(c, k, 1, (0, 5, 18), dsa=True) == c + int(c / k)


def test_before_0_5_15_the_default_fraction_reserves_for_the_draft() -> None:
    """0.5.5 (2 GiB) and 0.5.13 (4 GiB) add a reserve for "eagle draft models and cuda graphs" to the default
    mem_fraction_static; 0.5.15 and later do not. A user's --mem-fraction-static is kept."""
    from kvlint.memory.sglang import default_mem_fraction_static, gpu_tier, sglang_prelude

    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    for version, v in (("0.5.5", (0, 5, 5)), ("0.5.13", (0, 5, 13)), ("0.5.16", (0, 5, 16))):
        plain = plan_sglang_detailed(_cmd("--tp-size", "8", version=version), m, total, gpus=8)
        spec = plan_sglang_detailed(
            _cmd("--tp-size", "8", "--speculative-algorithm", "EAGLE", version=version), m, total, gpus=8
        )
        reserve = sglang_spec.default_reserve_mib(v, "EAGLE")
        gpu_mib = total / (1 << 20) + 512
        # the prefill CUDA graphs' reserve, the same with and without the draft in these releases (sglang_graphs)
        pg = sglang_prelude(_cmd("--tp-size", "8", version=version), m).prefill_graphs
        graphs = pg.reserve_mib(gpu_tier(gpu_mib, 8, v)[0], amd=False)[0] if pg is not None else 0.0
        want = default_mem_fraction_static(
            v, gpu_mib, tp=8, is_mla=True, speculative_reserve_mib=reserve, prefill_graph_mib=graphs
        )[0]
        assert spec.mem_fraction_static == want, version
        if v < sglang_spec.ONE_CELL_FROM:
            assert reserve > 0 and spec.mem_fraction_static < plain.mem_fraction_static
        else:
            assert reserve == 0 and spec.mem_fraction_static == plain.mem_fraction_static
    user = plan_sglang_detailed(
        _cmd(
            "--tp-size",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--mem-fraction-static",
            "0.8",
            version="0.5.5",
        ),
        m,
        total,
        gpus=8,
    )
    assert user.mem_fraction_static == 0.8
    assert sglang_spec.default_reserve_mib((0, 5, 5), "STANDALONE") > sglang_spec.default_reserve_mib(
        (0, 5, 5), "EAGLE"
    )
    assert sglang_spec.default_reserve_mib((0, 5, 5), "NGRAM") == 0
    # 0.5.13 reserves for every algorithm but NGRAM ("!= NGRAM"), DFLASH included, which is otherwise not sized
    dflash = (0, 5, 13)
    assert (
        sglang_spec.default_reserve_mib(dflash, "DFLASH")
        == sglang_spec.default_reserve_mib(dflash, "EAGLE")
        > 0
    )
    pre = sglang_prelude(_cmd("--tp-size", "8", "--speculative-algorithm", "DFLASH", version="0.5.13"), m)
    assert pre.spec is not None and pre.spec.reserve_mib > 0 and pre.spec.draft_layers == 0


def test_0_5_5_pads_the_target_pool_for_tokens_in_flight() -> None:
    """0.5.5's init_memory_pool adds max_num_reqs × (num_steps × topk + num_draft_tokens) + 100 tokens to the
    profiled pool (max_num_reqs: the --max-running-requests that speculative decoding resets to 48), with the
    auto-chosen (steps, topk, draft tokens) for DeepSeek, or the user's; 0.5.13 does not pad."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    spec = plan_sglang_detailed(
        _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version="0.5.5"), m, total, gpus=8
    )
    steps, topk, tokens = sglang_spec.auto_params_055(m, "EAGLE")
    pad = sglang_spec.pad_tokens_055(sglang_spec.SPEC_MAX_RUNNING_REQUESTS, steps, topk, tokens)
    assert spec.max_total_num_tokens == spec.rest_bytes // spec.plan.kv_bytes_per_token + pad
    assert spec.plan.kv_bytes_per_token == cell_size(m, 8, 2)[0]  # the draft pool is allocated apart
    assert any(
        "allocated after the target's, outside mem_fraction_static" in n for n in spec.plan.assumptions
    )
    user = plan_sglang_detailed(
        _cmd(
            "--tp-size",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "2",
            "--speculative-eagle-topk",
            "2",
            "--speculative-num-draft-tokens",
            "5",
            "--max-running-requests",
            "16",
            version="0.5.5",
        ),
        m,
        total,
        gpus=8,
    )
    assert (
        user.max_total_num_tokens
        == user.rest_bytes // user.plan.kv_bytes_per_token + sglang_spec.pad_tokens_055(16, 2, 2, 5)
    )
    later = plan_sglang_detailed(
        _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version="0.5.13"), m, total, gpus=8
    )
    assert later.max_total_num_tokens == later.rest_bytes // later.plan.kv_bytes_per_token


def test_max_running_requests_is_reset_to_48_unless_set() -> None:
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    for version in ("0.5.5", "0.5.23"):
        spec = plan_sglang_detailed(
            _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version=version), m, total, gpus=8
        )
        assert spec.max_running_requests == sglang_spec.SPEC_MAX_RUNNING_REQUESTS
        own = plan_sglang_detailed(
            _cmd(
                "--tp-size",
                "8",
                "--speculative-algorithm",
                "NEXTN",
                "--max-running-requests",
                "64",
                version=version,
            ),
            m,
            total,
            gpus=8,
        )
        assert own.max_running_requests == 64


def test_which_targets_draft_from_their_own_mtp_head_by_release() -> None:
    """A path-less MTP target outside SGLang's self-draft list (MiMo-7B, num_nextn_predict_layers 1) is sized with
    its draft layer from 0.5.20 only; a DeepSeek target at every release; a separate draft path never (its config is
    not read), while the target's own path given as the draft counts as path-less."""
    mimo = resolve_model("XiaomiMiMo/MiMo-7B-Base", allow_hub=False)
    assert mimo.architectures[0] not in sglang_spec.self_draft_architectures((0, 5, 23))
    assert sglang_spec.draft_kv_layers(mimo, (0, 5, 19), "EAGLE", None, "XiaomiMiMo/MiMo-7B-Base")[0] is None
    assert sglang_spec.draft_kv_layers(mimo, (0, 5, 20), "EAGLE", None, "XiaomiMiMo/MiMo-7B-Base")[
        0
    ] == _nextn(mimo)
    dsv3 = _model(DSV3)
    for v in ((0, 5, 5), (0, 5, 16), (0, 5, 23)):
        assert sglang_spec.draft_kv_layers(dsv3, v, "EAGLE", None, DSV3)[0] == _nextn(dsv3)
        assert sglang_spec.draft_kv_layers(dsv3, v, "EAGLE", DSV3, DSV3)[0] == _nextn(dsv3)
        layers, why = sglang_spec.draft_kv_layers(dsv3, v, "EAGLE", "someone/draft", DSV3)
        assert layers is None and "separate draft model" in why
    # the prelude of a MiMo plan at 0.5.19 keeps the target's cell and says why
    pre = sglang_prelude(
        _cmd("--speculative-algorithm", "NEXTN", version="0.5.19", model="XiaomiMiMo/MiMo-7B-Base"), mimo
    )
    assert pre.kv_bytes_per_token == cell_size(mimo, 1, 2)[0]
    assert any("not one SGLang drafts from itself" in n for n in pre.model_notes)
    pre20 = sglang_prelude(
        _cmd("--speculative-algorithm", "NEXTN", version="0.5.20", model="XiaomiMiMo/MiMo-7B-Base"), mimo
    )
    assert pre20.kv_bytes_per_token == sglang_spec.scale_cell(
        cell_size(mimo, 1, 2)[0], mimo.num_layers, 1, (0, 5, 20)
    )


def test_pipeline_stages_size_the_draft_over_their_own_layers() -> None:
    """With --pp-size 2 each stage's cell adds the draft's layers over that stage's layer count (SGLang's
    num_layers is the stage's num_effective_layers)."""
    m = _model(DSV3)
    # 0.5.21 - 0.5.23 accept pp > 1 with EAGLE / NEXTN on a PD prefill node (check_pipeline_parallel_compat)
    pd = ("--disaggregation-mode", "prefill")
    pre = sglang_prelude(_cmd("--tp-size", "4", "--pp-size", "2", "--speculative-algorithm", "NEXTN", *pd), m)
    plain = sglang_prelude(_cmd("--tp-size", "4", "--pp-size", "2", *pd), m)
    d = _nextn(m)
    assert pre.stage_cells == tuple(
        sglang_spec.scale_cell(c, n, d, (0, 5, 23))
        for c, n in zip(plain.stage_cells, plain.stage_layers, strict=True)
    )
    assert all(a > b for a, b in zip(pre.stage_cells, plain.stage_cells, strict=True))


def test_other_algorithms_and_0_4_stay_notes() -> None:
    """DFLASH (0.5.23) and the 0.4.x releases are not sized: the target's cell, and a note."""
    m = _model(DSV3)
    for args, version in (
        (("--speculative-algorithm", "DFLASH"), "0.5.23"),
        (("--speculative-algorithm", "EAGLE"), "0.4.10"),
    ):
        pre = sglang_prelude(_cmd("--tp-size", "8", *args, version=version), m)
        assert pre.spec is None and pre.kv_bytes_per_token == cell_size(m, 8, 2)[0]
        assert any(n.startswith("not modelled: speculative decoding") for n in pre.model_notes)


def test_absurd_draft_settings_are_not_priced() -> None:
    """A --speculative-num-steps SGLang never chooses (above MAX_SPEC_PARAM) does not pad 0.5.5's pool by billions
    of tokens, and a config claiming more MTP layers than decoder layers adds none to the cell."""
    import copy

    from kvlint.models.config import parse_config

    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    big = str(sglang_spec.MAX_SPEC_PARAM + 1)
    d = plan_sglang_detailed(
        _cmd(
            "--tp-size",
            "8",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            big,
            "--speculative-eagle-topk",
            "2",
            "--speculative-num-draft-tokens",
            "4",
            version="0.5.5",
        ),
        m,
        total,
        gpus=8,
    )
    assert d.max_total_num_tokens == d.rest_bytes // d.plan.kv_bytes_per_token
    assert any("absurd" in n for n in d.plan.assumptions)
    cfg = copy.deepcopy(m.config)
    cfg["num_nextn_predict_layers"] = m.num_layers + 1
    odd = parse_config(cfg, model_id=DSV3, source="test: DeepSeek-V3 with more MTP layers than layers")
    assert sglang_spec.draft_kv_layers(odd, (0, 5, 23), "EAGLE", None, DSV3)[0] is None
    pre = sglang_prelude(_cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN"), odd)
    assert pre.kv_bytes_per_token == cell_size(odd, 8, 2)[0]


def test_padding_ends_at_0_5_7_and_sizing_starts_at_0_5_3() -> None:
    """The target's token padding for the draft is in ``ModelRunner.init_memory_pool`` of the 0.5.3 - 0.5.6 wheels
    and gone from 0.5.7 (``model_runner_kv_cache_mixin.py``: ``draft_runner_cache_size = max_total_num_tokens``);
    the 2 GiB "eagle draft models and cuda graphs" reserve, the reset to 48 requests and the padding are already in
    0.5.3 and 0.5.4. kvlint padded to 0.5.12 and sized nothing before 0.5.5."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    steps, topk, tokens = sglang_spec.auto_params_055(m, "NEXTN")
    pad = sglang_spec.pad_tokens_055(sglang_spec.SPEC_MAX_RUNNING_REQUESTS, steps, topk, tokens)
    runs = {
        version: plan_sglang_detailed(
            _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", version=version), m, total, gpus=8
        )
        for version in ("0.5.3", "0.5.4", "0.5.6", "0.5.7")
    }
    plain = {
        version: plan_sglang_detailed(_cmd("--tp-size", "8", version=version), m, total, gpus=8)
        for version in ("0.5.3", "0.5.7")
    }
    for version, r in runs.items():
        padded = version != "0.5.7"
        assert any("padded by" in n for n in r.plan.assumptions) is padded, version
        assert r.max_running_requests == sglang_spec.SPEC_MAX_RUNNING_REQUESTS, version
        assert r.mem_fraction_static < plain["0.5.3"].mem_fraction_static, version
    # 0.5.6 and 0.5.7 share the reserve and the cell: the token counts differ by the padding alone
    assert runs["0.5.6"].max_total_num_tokens - runs["0.5.7"].max_total_num_tokens == pad
    assert runs["0.5.7"].mem_fraction_static < plain["0.5.7"].mem_fraction_static


def _resolved_plan(*args: str, version: str = "0.5.23", target: str = "Qwen/Qwen2.5-7B"):
    """The plan stage of a container on one H100 (kvlint.memory.stage.plan_container): the draft checkpoint is
    resolved as the target is, offline, from the fixtures' model directories."""
    from kvlint.accelerators import lookup as _lookup
    from kvlint.memory.stage import plan_container
    from kvlint.options import Options
    from kvlint.types import Placement

    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", target, *args], version)
    s.version = version
    acc = _lookup("h100-80gb")
    placement = Placement(accelerator=acc, gpus=1)
    out = plan_container(s, _model(target), placement, Options(model_dirs=MODEL_DIRS, allow_hub=False))
    return s, out


def test_a_separate_draft_checkpoint_is_resolved_and_its_layers_sized() -> None:
    """``--speculative-draft-model-path`` naming another model: from 0.5.15 SGLang reads the draft's config and adds
    its layers (``num_nextn_predict_layers``, else ``num_hidden_layers``) to each token's cell at the target's
    per-layer size; kvlint resolves the draft as it resolves the target (here Qwen2.5-1.5B drafting for Qwen2.5-7B
    with STANDALONE)."""
    base_s, base = _resolved_plan()
    s, out = _resolved_plan(
        "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "Qwen/Qwen2.5-1.5B"
    )
    draft = _model("Qwen/Qwen2.5-1.5B")
    assert s.draft_model is not None and s.draft_model.num_layers == draft.num_layers > 0
    assert base.detail is not None and out.detail is not None and out.model_note is None
    target = _model("Qwen/Qwen2.5-7B")
    want = sglang_spec.scale_cell(
        base.detail.plan.kv_bytes_per_token, target.num_layers, draft.num_layers, (0, 5, 23)
    )
    assert out.detail.plan.kv_bytes_per_token == want > base.detail.plan.kv_bytes_per_token
    assert out.detail.max_total_num_tokens < base.detail.max_total_num_tokens
    notes = out.detail.plan.assumptions
    assert any(
        f"num_hidden_layers {draft.num_layers} of the draft checkpoint Qwen/Qwen2.5-1.5B" in n for n in notes
    )
    assert any("draft checkpoint's weights" in n for n in notes)
    # before 0.5.15 the draft's pool comes after the target's, outside the fraction: the target's cell alone
    s13, out13 = _resolved_plan(
        "--speculative-algorithm",
        "STANDALONE",
        "--speculative-draft-model-path",
        "Qwen/Qwen2.5-1.5B",
        version="0.5.13",
    )
    _, base13 = _resolved_plan(version="0.5.13")
    assert s13.draft_model is not None and out13.detail is not None and base13.detail is not None
    assert out13.detail.plan.kv_bytes_per_token == base13.detail.plan.kv_bytes_per_token
    assert any(f"the draft's {draft.num_layers} layer(s)" in n for n in out13.detail.plan.assumptions)


def test_an_unresolved_draft_checkpoint_is_said_and_planned_without() -> None:
    s, out = _resolved_plan(
        "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "nobody/no-such-draft"
    )
    _, base = _resolved_plan()
    assert s.draft_model is None and out.model_note is not None
    assert "speculative draft model 'nobody/no-such-draft' not resolved" in out.model_note
    assert out.detail is not None and base.detail is not None
    assert out.detail.plan.kv_bytes_per_token == base.detail.plan.kv_bytes_per_token
    assert any("whose config was not resolved" in n for n in out.detail.plan.assumptions)


def test_a_draft_path_equal_to_the_model_path_is_the_mtp_head() -> None:
    """``--speculative-draft-model-path`` set to the target's own ``--model-path`` is the target checkpoint's MTP
    head, as a path-less NEXTN target is (the plan compared the draft path with a ``model_path`` flag the parser never
    sets, so it took the target's own path for a separate, uncounted draft)."""
    m = _model(DSV3)
    total = lookup("h200").memory_bytes
    own = plan_sglang_detailed(
        _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN", "--speculative-draft-model-path", DSV3),
        m,
        total,
        gpus=8,
    )
    pathless = plan_sglang_detailed(
        _cmd("--tp-size", "8", "--speculative-algorithm", "NEXTN"), m, total, gpus=8
    )
    plain = plan_sglang_detailed(_cmd("--tp-size", "8"), m, total, gpus=8)
    assert own.plan.kv_bytes_per_token == pathless.plan.kv_bytes_per_token > plain.plan.kv_bytes_per_token


def test_mtp_draft_weights_under_dp_attention_hold_their_attention_over_the_attention_tp_group() -> None:
    """DeepSeek-V3's MTP head at tp 8: with DP attention (dp 8, attention-TP group of 1) its attention projections are
    whole on every rank as the target's are, so the draft's weight estimate per rank grows; its experts stay over all
    8 ranks, so it stays below the whole layer."""
    m = _model(DSV3)
    plain = sglang_prelude(
        _cmd("--tp-size", "8", "--dp-size", "8", "--speculative-algorithm", "NEXTN"), m
    ).spec
    dpa = sglang_prelude(
        _cmd("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", "--speculative-algorithm", "NEXTN"),
        m,
    ).spec
    assert plain is not None and dpa is not None and plain.draft_layers == dpa.draft_layers > 0
    assert plain.draft_weight_bytes < dpa.draft_weight_bytes < plain.draft_weight_bytes * 8


def test_the_draft_reserve_is_4_gib_from_0_5_10() -> None:
    """The 0.5.9 wheel's default fraction adds 2 GiB for "eagle draft models and cuda graphs", the 0.5.10 wheel's
    already 4 GiB, as 0.5.13's (server_args.py::ServerArgs._handle_gpu_memory_settings)."""
    r = sglang_spec.default_reserve_mib
    assert (
        r((0, 5, 10), "EAGLE") == r((0, 5, 13), "EAGLE") > r((0, 5, 9), "EAGLE") == r((0, 5, 5), "EAGLE") > 0
    )
    assert r((0, 5, 10), "STANDALONE") == r((0, 5, 9), "STANDALONE")


def test_a_draft_stating_zero_nextn_layers_adds_no_layers_from_0_5_15() -> None:
    """A separate draft whose config states ``num_nextn_predict_layers: 0`` (an EAGLE3 draft carrying the DeepSeek-V3
    schema; here moonshotai/Kimi-K2-Instruct's config, that schema with the field 0, from the bundled catalogue):
    SGLang 0.5.15 - 0.5.23 take the stated 0 as the draft's count (``is not None``) and the pool configurator adds
    the draft's share only for a count above 0, so the cell stays the target's. kvlint took 0 as absent and sized the
    draft's num_hidden_layers into the cell. Before 0.5.15 the draft's own pool worker takes its num_hidden_layers."""
    kimi = "moonshotai/Kimi-K2-Instruct"
    m, draft = _model(DSV3), resolve_model(kimi, allow_hub=False)
    assert _nextn(draft) == 0 and draft.num_layers > 0
    total = lookup("h200").memory_bytes
    base_cell = cell_size(m, 8, 2)[0]
    for version in ("0.5.15", "0.5.16", "0.5.21", "0.5.23"):
        v = tuple(int(x) for x in version.split("."))
        layers, why = sglang_spec.draft_kv_layers(m, v, "EAGLE3", kimi, DSV3, draft)  # type: ignore[arg-type]
        assert layers == 0 and "num_nextn_predict_layers 0" in why, (version, why)
        s = _cmd("--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", kimi,
                 version=version)  # fmt: skip
        s.draft_model = draft
        spec = plan_sglang_detailed(s, m, total, gpus=8)
        assert spec.plan.kv_bytes_per_token == base_cell, version
        assert any("sizes no draft KV layers" in n for n in spec.plan.assumptions), spec.plan.assumptions
        assert any("draft checkpoint's weights" in n for n in spec.plan.assumptions)
    layers, _ = sglang_spec.draft_kv_layers(m, (0, 5, 13), "EAGLE3", kimi, DSV3, draft)
    assert layers == draft.num_layers
    # the same stated 0 on a path-less target SGLang drafts from itself (DeepseekV3ForCausalLM): no draft layers
    layers, why = sglang_spec.draft_kv_layers(draft, (0, 5, 23), "EAGLE", None, kimi)
    assert layers == 0 and "num_nextn_predict_layers 0 of the target" in why
