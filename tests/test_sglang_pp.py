"""SGLang pipeline parallelism: which layers each stage builds (``get_pp_indices``, ``SGLANG_PP_LAYER_PARTITION``),
the KV pool each stage sizes from its own layers and weights, the stages' MIN, and the pipelines SGLang refuses to
build (``make_layers``' assert). Read in the SGLang wheels 0.4.10, 0.5.5, 0.5.13 – 0.5.23 (kvlint/memory/sglang.py).

The expected figures come from kvlint's own model functions (cell_size over a layer range, the stage weights), on
real configs (fixtures/plan/models, the catalogue), never from hard-coded engine numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.sglang import (
    PP_PARTITION_REFUSED,
    PP_REFUSED,
    _layer_params,
    cell_size,
    plan_sglang_detailed,
    pp_stage_layers,
    sglang_prelude,
)
from kvlint.memory.vllm import PlanError
from kvlint.models import resolve_model

FIX = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_DIRS = (str(FIX / "plan" / "models"),)


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str = "0.5.23", env: dict[str, str] | None = None):
    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x", *args], version)
    s.version = version
    s.env.update(env or {})
    return s


def test_default_split_moves_the_remainder_from_the_last_stage_to_the_last_stages_at_0_5_13() -> None:
    # 30 layers over 4 stages: 7 each and a remainder of 2. 0.4.10 / 0.5.5 give it all to the last stage,
    # 0.5.13 – 0.5.23 one each to the last two stages.
    for v in ((0, 4, 10), (0, 5, 5)):
        old = pp_stage_layers(30, 4, v, {})
        assert sum(old) == 30 and old[:-1] == (30 // 4,) * 3 and old[-1] == 30 // 4 + 30 % 4
    for v in ((0, 5, 13), (0, 5, 23)):
        new = pp_stage_layers(30, 4, v, {})
        assert sum(new) == 30 and new[:2] == (30 // 4,) * 2 and new[2:] == (30 // 4 + 1,) * 2
    assert pp_stage_layers(32, 1, (0, 5, 23), {}) == (32,)


def test_partition_env_sets_the_stages_and_its_errors_quote_sglang() -> None:
    v = (0, 5, 23)
    assert pp_stage_layers(32, 2, v, {PP_PARTITION_REFUSED: "8,24"}) == (8, 24)
    for raw, words in (
        ("8;24", "Invalid partition string: 8;24"),
        ("", "Invalid partition string: "),
        ("8,8,16", "len(partitions)=3 does not match pp_size=2."),
        ("8,20", "sum(partitions)=28 does not match num_hidden_layers=32."),
    ):
        with pytest.raises(PlanError) as err:
            pp_stage_layers(32, 2, v, {PP_PARTITION_REFUSED: raw})
        assert str(err.value).startswith(PP_PARTITION_REFUSED + "=") and words in str(err.value)
    with pytest.raises(PlanError):
        pp_stage_layers(32, 2, v, {PP_PARTITION_REFUSED: "-8,40"})
    # one stage: from 0.5.19 get_pp_indices ignores the variable ("A singleton draft PP group ... must ignore"; in
    # the 0.5.19 - 0.5.23 wheels), 0.5.18 still checks it
    for alone in ((0, 5, 19), (0, 5, 22), v):
        assert pp_stage_layers(32, 1, alone, {PP_PARTITION_REFUSED: "8,24"}) == (32,)
    with pytest.raises(PlanError):
        pp_stage_layers(32, 1, (0, 5, 18), {PP_PARTITION_REFUSED: "8,24"})


def test_more_stages_than_layers_is_refused() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    with pytest.raises(PlanError) as err:
        sglang_prelude(_cmd("--pp-size", str(m.num_layers + 1)), m)
    assert str(err.value).startswith(f"{PP_REFUSED} {m.num_layers + 1} ") and "make_layers" in str(err.value)
    sglang_prelude(_cmd("--pp-size", str(m.num_layers)), m)  # one layer a stage builds


def test_each_stage_sizes_its_pool_from_its_own_layers() -> None:
    # Llama-3.1-8B over 2 stages of 16 layers: each stage's cell holds 16 layers, half the whole model's; kvlint
    # used the whole model's cell on every stage, which halved max_total_num_tokens.
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("l4").memory_bytes
    one = plan_sglang_detailed(_cmd("--mem-fraction-static", "0.85"), m, total, gpus=1)
    two = plan_sglang_detailed(_cmd("--mem-fraction-static", "0.85", "--pp-size", "2"), m, total, gpus=2)
    half = m.num_layers // 2
    assert two.plan.kv_bytes_per_token == cell_size(m, 1, 2, layer_range=(0, half))[0]
    assert two.plan.kv_bytes_per_token * 2 == one.plan.kv_bytes_per_token
    # each stage holds half the decoder layers plus the embedding (first) or the output head (last), not half of all
    assert two.plan.weights_bytes < one.plan.weights_bytes
    pre = sglang_prelude(_cmd("--mem-fraction-static", "0.85", "--pp-size", "2"), m)
    assert two.plan.weights_bytes == max(pre.stage_weights)
    assert two.max_total_num_tokens == (two.rest_bytes // two.plan.kv_bytes_per_token)


def test_uneven_partition_takes_the_smallest_stage_from_0_5_and_stage_0_before() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("l4").memory_bytes
    env = {PP_PARTITION_REFUSED: "8,24"}
    args = ("--mem-fraction-static", "0.85", "--pp-size", "2")
    small, big = (
        cell_size(m, 1, 2, layer_range=(0, 8))[0],
        cell_size(m, 1, 2, layer_range=(8, m.num_layers))[0],
    )
    # 0.5.x: the stages agree on the smallest count (all_reduce MIN): the 24-layer stage binds
    new = plan_sglang_detailed(_cmd(*args, version="0.5.5", env=env), m, total, gpus=2)
    assert new.plan.kv_bytes_per_token == big
    # 0.4.10: no MIN; pp rank 0 (8 layers) prints its own, larger pool
    old = plan_sglang_detailed(_cmd(*args, version="0.4.10", env=env), m, total, gpus=2)
    assert old.plan.kv_bytes_per_token == small
    assert old.max_total_num_tokens > new.max_total_num_tokens
    # Llama-3.1-8B's untied embedding and head weigh the same, so the mirrored split binds the same way
    mirrored = plan_sglang_detailed(
        _cmd(*args, version="0.5.5", env={PP_PARTITION_REFUSED: "24,8"}), m, total, gpus=2
    )
    assert mirrored.max_total_num_tokens == new.max_total_num_tokens


def test_mla_pipeline_refused_before_0_5() -> None:
    m = _model("deepseek-ai/DeepSeek-V3")
    assert m.is_mla
    with pytest.raises(PlanError) as err:
        sglang_prelude(_cmd("--pp-size", "2", "--tp-size", "8", version="0.4.10"), m)
    assert str(err.value).startswith(PP_REFUSED + " 2 with an MLA model")
    sglang_prelude(_cmd("--pp-size", "2", "--tp-size", "8", version="0.5.5"), m)


def test_kv502_error_for_a_pipeline_sglang_refuses(tmp_path: Path) -> None:
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    def kv502(args: str, env: str = "") -> list:
        manifest = tmp_path / "sg.yaml"
        manifest.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: sg}\nspec:\n  template:\n    spec:\n"
            "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
            '          command: ["python3", "-m", "sglang.launch_server"]\n'
            f"          args: [--model-path=meta-llama/Llama-3.2-1B-Instruct, --context-length=8192, {args}]\n"
            + (f"          env: [{{name: SGLANG_PP_LAYER_PARTITION, value: '{env}'}}]\n" if env else "")
            + "          resources: {limits: {nvidia.com/gpu: 20}}\n",
            encoding="utf-8",
        )
        opts = Options(allow_hub=False, accelerator="l4")
        cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "sglang")
        return [d for d in check_container(cr, opts) if d.rule == "KV502"]

    found = kv502("--pp-size=20")
    assert len(found) == 1 and found[0].severity == "error"
    assert "--pp-size 20 is more pipeline stages than the model's 16 layers" in found[0].message
    found = kv502("--pp-size=2", env="1,1")
    assert len(found) == 1 and found[0].severity == "error"
    assert "sum(partitions)=2 does not match num_hidden_layers=16." in found[0].message
    assert "SGLANG_PP_LAYER_PARTITION one non-negative layer count per pipeline stage" in (found[0].fix or "")
    assert kv502("--pp-size=2") == []


def test_every_stage_sizes_from_the_heaviest_stages_free_memory() -> None:
    # SGLang reads the free memory after loading as a MIN over the world group (get_available_gpu_memory(...,
    # distributed=True): 0.4.10 / 0.5.5 profile_max_num_token, 0.5.16 _profile_available_bytes), so each stage's rest
    # is what the heaviest stage has left. "15,16,1" on Llama-3.1-8B: stage 0 (embedding + 15 layers) is the
    # heaviest, stage 1 (16 layers, no embedding) has the largest cell; kvlint took stage 1's own, larger rest.
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("l4").memory_bytes
    args = ("--mem-fraction-static", "0.85", "--pp-size", "3")
    env = {PP_PARTITION_REFUSED: "15,16,1"}
    for version in ("0.4.10", "0.5.5", "0.5.23"):
        pre = sglang_prelude(_cmd(*args, version=version, env=env), m)
        heaviest = max(pre.stage_weights)
        assert pre.stage_weights.index(heaviest) == 0 and max(pre.stage_cells) == pre.stage_cells[1]
        d = plan_sglang_detailed(_cmd(*args, version=version, env=env), m, total, gpus=3)
        assert d.plan.weights_bytes == heaviest
        # 0.5: the largest cell (stage 1) binds; 0.4.10: pp rank 0 prints its own, over its own cell
        cell = pre.stage_cells[0] if version == "0.4.10" else pre.stage_cells[1]
        assert d.plan.kv_bytes_per_token == cell
        assert d.max_total_num_tokens == d.rest_bytes // cell
    # 0.4.10 with "8,24": stage 1 is the heaviest, so rank 0's 8-layer pool has the 24-layer stage's rest
    env = {PP_PARTITION_REFUSED: "8,24"}
    old = plan_sglang_detailed(_cmd(*args[:3], "2", version="0.4.10", env=env), m, total, gpus=2)
    new = plan_sglang_detailed(_cmd(*args[:3], "2", version="0.5.5", env=env), m, total, gpus=2)
    assert old.rest_bytes == new.rest_bytes and old.plan.weights_bytes == new.plan.weights_bytes


def test_stage_weights_follow_the_layers_parameters_not_their_count() -> None:
    # DeepSeek-V3's first three layers are dense (first_k_dense_replace), a twentieth of an MoE layer's parameters:
    # the first of two stages (layers 0-29) holds much less than 30/61 of the decoder's bytes, the last (30-60) more.
    m = _model("deepseek-ai/DeepSeek-V3")
    tp = 8
    pre = sglang_prelude(_cmd("--pp-size", "2", "--tp-size", str(tp), version="0.5.23"), m)
    assert pre.stage_layers == (30, 31)
    per = _layer_params(m)
    assert len(per) == m.num_layers and per[0] * 10 < per[m.num_layers - 1]
    # the two stages still hold the whole model between them (within rounding), but not split by layer count
    embed = m.vocab_size * m.hidden_size * 2  # bf16 embedding and (untied) head
    first, last = pre.stage_weights
    assert first < last
    count_share = 30 / m.num_layers
    param_share = sum(per[:30]) / sum(per)
    assert param_share < count_share - 0.01
    body = (first + last) * tp - 2 * embed  # replicated weights are small next to the difference checked
    assert abs((first * tp - embed) / body - param_share) < abs((first * tp - embed) / body - count_share)


def test_pipeline_with_speculative_decoding_refused_up_to_0_5_20() -> None:
    """0.5.3 - 0.5.20 assert ``speculative_algorithm is None`` with pp > 1 ("Pipeline parallelism is not compatible
    with overlap schedule, speculative decoding"; up to 0.5.10 also ``--enable-mixed-chunk``), before the model
    runner's "PP is not compatible with MTP models"; 0.5.21 accepts EAGLE on a PD prefill node
    (check_pipeline_parallel_compat; the other cases in test_pipeline_with_speculative_decoding_from_0_5_21)."""
    m = _model("meta-llama/Llama-3.1-8B")
    spec = ("--pp-size", "2", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")
    for version in ("0.5.5", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.17", "0.5.20"):
        with pytest.raises(PlanError) as err:
            sglang_prelude(_cmd(*spec, "--disaggregation-mode", "prefill", version=version), m)
        assert str(err.value).startswith(PP_REFUSED + " 2 with --speculative-algorithm EAGLE"), version
        assert "not compatible with overlap schedule, speculative decoding" in str(err.value)
    sglang_prelude(_cmd(*spec, "--disaggregation-mode", "prefill", version="0.5.21"), m)
    sglang_prelude(
        _cmd("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d", version="0.5.13"), m
    )
    with pytest.raises(PlanError) as err:
        sglang_prelude(_cmd("--pp-size", "2", "--enable-mixed-chunk", version="0.5.10"), m)
    assert "mixed chunked prefill" in str(err.value)
    sglang_prelude(_cmd("--pp-size", "2", "--enable-mixed-chunk", version="0.5.13"), m)


def test_pipeline_with_speculative_decoding_from_0_5_21() -> None:
    """0.5.21 - 0.5.23's check_pipeline_parallel_compat (arg_groups/validation_hook.py): with pp > 1 only EAGLE
    (NEXTN normalised to it), not multi-layer, and only on a PD prefill node unless SGLANG_ENABLE_PP_SPEC is set,
    which in turn refuses PD, --speculative-adaptive and DP attention; DSPARK needs a PD prefill node without it.
    kvlint used to accept every algorithm from 0.5.21 (a plain EAGLE deployment SGLang refuses)."""
    m = _model("meta-llama/Llama-3.1-8B")
    base = ("--pp-size", "2", "--speculative-draft-model-path", "d")
    refused = (
        (("--speculative-algorithm", "EAGLE"), {}, "only supported on prefill nodes"),
        (("--speculative-algorithm", "NEXTN"), {}, "only supported on prefill nodes"),
        (
            ("--speculative-algorithm", "EAGLE3", "--disaggregation-mode", "prefill"),
            {},
            "only supports EAGLE",
        ),
        (("--speculative-algorithm", "STANDALONE"), {"SGLANG_ENABLE_PP_SPEC": "1"}, "only supports EAGLE"),
        (
            (
                "--speculative-algorithm",
                "EAGLE",
                "--enable-multi-layer-eagle",
                "--disaggregation-mode",
                "prefill",
            ),
            {},
            "only supports EAGLE",
        ),
        (
            ("--speculative-algorithm", "EAGLE", "--disaggregation-mode", "prefill"),
            {"SGLANG_ENABLE_PP_SPEC": "true"},
            "not compatible with --disaggregation-mode",
        ),
        (
            ("--speculative-algorithm", "EAGLE", "--speculative-adaptive"),
            {"SGLANG_ENABLE_PP_SPEC": "yes"},
            "--speculative-adaptive",
        ),
        (("--speculative-algorithm", "DSPARK"), {}, "requires disaggregation-mode=prefill"),
    )
    for version in ("0.5.21", "0.5.23"):
        for args, env, said in refused:
            with pytest.raises(PlanError) as err:
                sglang_prelude(_cmd(*base, *args, version=version, env=env), m)
            assert str(err.value).startswith(PP_REFUSED + " 2 with --speculative-algorithm"), (version, args)
            assert said in str(err.value), (version, args, str(err.value))
        accepted = (
            (("--speculative-algorithm", "EAGLE", "--disaggregation-mode", "prefill"), {}),
            (("--speculative-algorithm", "NEXTN"), {"SGLANG_ENABLE_PP_SPEC": "1"}),
            (("--speculative-algorithm", "EAGLE"), {"SGLANG_ENABLE_PP_SPEC": "Y"}),
            (("--speculative-algorithm", "DSPARK", "--disaggregation-mode", "prefill"), {}),
        )
        for args, env in accepted:
            sglang_prelude(_cmd(*base, *args, version=version, env=env), m)
    # "on" is not one of EnvBool's true words: the env var does not lift the refusal
    with pytest.raises(PlanError):
        sglang_prelude(
            _cmd(*base, "--speculative-algorithm", "EAGLE", env={"SGLANG_ENABLE_PP_SPEC": "on"}), m
        )


def test_kv502_fix_for_a_speculative_pipeline_refused_from_0_5_21(tmp_path: Path) -> None:
    """From 0.5.21 the refusal of a speculative pipeline (check_pipeline_parallel_compat) is its own kind, and
    KV502's fix says what SGLang accepts there (EAGLE on a PD prefill node or with SGLANG_ENABLE_PP_SPEC), not the
    MLA refusal's fix (which it got when refusals were told apart by the message's first word) nor the 0.5.3 -
    0.5.20 fix that calls 0.5.21 accepting."""
    from kvlint.memory.refusal import PlanRefusal
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    m = _model("meta-llama/Llama-3.1-8B")
    spec = ("--pp-size", "2", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")
    with pytest.raises(PlanError) as err:
        sglang_prelude(_cmd(*spec, version="0.5.23"), m)
    assert getattr(err.value, "refusal", None) is PlanRefusal.SGLANG_PP_SPECULATIVE_SETUP
    with pytest.raises(PlanError) as err:
        sglang_prelude(_cmd(*spec, version="0.5.20"), m)
    assert getattr(err.value, "refusal", None) is PlanRefusal.SGLANG_PP_SPECULATIVE

    manifest = tmp_path / "sg.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: sg}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
        '          command: ["python3", "-m", "sglang.launch_server"]\n'
        "          args: [--model-path=meta-llama/Llama-3.2-1B-Instruct, --context-length=8192, --pp-size=2,\n"
        "                 --speculative-algorithm=EAGLE, --speculative-draft-model-path=meta-llama/Llama-3.2-1B-Instruct]\n"
        "          resources: {limits: {nvidia.com/gpu: 2}}\n",
        encoding="utf-8",
    )
    opts = Options(allow_hub=False, accelerator="l4")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "sglang")
    found = [d for d in check_container(cr, opts) if d.rule == "KV502"]
    assert len(found) == 1 and found[0].severity == "error", found
    assert "only supported on prefill nodes" in found[0].message
    fix = found[0].fix or ""
    assert "SGLANG_ENABLE_PP_SPEC" in fix and "PD prefill node" in fix and "MLA" not in fix, fix


def test_stage_weights_follow_the_layers_bytes_where_the_checkpoint_keeps_dense_layers_wider() -> None:
    # nvidia/GLM-5.1-NVFP4 stores its routed experts in NVFP4 (0.56 B per element) and keeps the first three
    # layers' dense MLP in bf16 (its exclude list): those layers weigh 2 B per element, the experts a quarter of that,
    # so the first stage's share of the decoder's bytes is above its share of the parameters. SGLang builds only a
    # stage's own layers (make_layers over get_pp_indices), so the stage holds its layers' bytes. At TP 1 no module
    # is replicated and the stages split the decoder's bytes exactly.
    from kvlint.models.weights import decoder_layer_bytes, dense_mlp_layer_bytes

    m = _model("nvidia/GLM-5.1-NVFP4")
    first_k = int((m.text_config or m.config or {})["first_k_dense_replace"])
    # the dense MLPs are priced whole in bf16: gate, up and down projections of hidden x intermediate, 2 B each
    dense = dense_mlp_layer_bytes(m, dtype_bytes=2)
    assert dense[:first_k] == (3 * m.hidden_size * m.intermediate_size * 2,) * first_k and dense[first_k] == 0
    pre = sglang_prelude(_cmd("--pp-size", "4", version="0.5.23"), m)
    n0 = pre.stage_layers[0]
    embed = m.vocab_size * m.hidden_size * 2  # bf16 embedding (first stage) and untied head (last)
    body = sum(pre.stage_weights) - 2 * embed
    got = (pre.stage_weights[0] - embed) / body
    per = _layer_params(m)
    param_share = sum(per[:n0]) / sum(per)
    # the dense layers' bf16 MLPs move the first stage's share above its parameter share (until branch memory54 the
    # stages were split by parameter count, got == param_share)
    assert got > param_share + 0.0015
    layer_bytes = [a + b for a, b in decoder_layer_bytes(m, dtype_bytes=2)]
    assert got == pytest.approx(sum(layer_bytes[:n0]) / sum(layer_bytes), rel=1e-6)


def test_layer_bytes_price_packed_experts_at_their_own_rate() -> None:
    # gpt-oss stores its routed experts in MXFP4 (4-bit values and one e8m0 scale per 32: 0.5 + 1/32 B per element)
    # beside bf16 attention; a stage's share of the layers' bytes must weigh its experts at that rate, not at the
    # attention's 2 B (as decoder_layer_bytes did until branch memory54)
    from kvlint.models.weights import decoder_layer_bytes, param_breakdown

    m = _model("openai/gpt-oss-20b")
    experts = sum(b for _a, b in decoder_layer_bytes(m, dtype_bytes=2))
    assert experts == pytest.approx(param_breakdown(m)["experts"] * (0.5 + 1 / 32), rel=1e-6)


@pytest.mark.parametrize("version", ["0.5.8", "0.5.23"])
def test_each_stage_holds_the_vision_tower_it_builds(tmp_path: Path, version: str) -> None:
    # sglang/srt/models/qwen2_5_vl.py (0.5.8 and 0.5.23 wheels) builds self.visual outside any pp_group.is_first_rank
    # test, so every pipeline stage holds the vision tower: its 1/tp share, or all of it per rank under
    # --mm-enable-dp-encoder. Until branch review54A the tower's bytes were spread over the stages with the layers'
    # (half a tower per stage at pp 2) and the dp-encoder copy by layer count.
    import json

    from kvlint.models.weights import vision_params

    vl = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    tower = vision_params(vl.config or {}, vl.hidden_size) * 2
    # the same decoder without the tower: Qwen2.5-VL's text model as a Qwen2 checkpoint
    cfg = {k: v for k, v in (vl.config or {}).items() if k not in ("vision_config", "text_config")}
    cfg.update(architectures=["Qwen2ForCausalLM"], model_type="qwen2")
    d = tmp_path / "x--qwen2-text"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(cfg))
    text = resolve_model("x/qwen2-text", model_dirs=(str(tmp_path),), allow_hub=False)
    assert text.num_layers == vl.num_layers and text.hidden_size == vl.hidden_size
    args = ("--tp-size", "2", "--pp-size", "2")
    t = sglang_prelude(_cmd(*args, version=version), text).stage_weights
    split = sglang_prelude(_cmd(*args, version=version), vl).stage_weights
    whole = sglang_prelude(_cmd(*args, "--mm-enable-dp-encoder", version=version), vl).stage_weights
    for r in range(2):
        assert split[r] - t[r] == pytest.approx(tower / 2, abs=8)
        assert whole[r] - t[r] == pytest.approx(tower, abs=8)
