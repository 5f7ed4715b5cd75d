"""The vision tower vLLM builds whole on every tensor-parallel rank under ``--mm-encoder-tp-mode data``.

``vllm/model_executor/models/qwen2_5_vl.py`` (vllm-project/vllm@002d181a) sets ``use_data_parallel =
multimodal_config.mm_encoder_tp_mode == "data"`` and passes it to every linear layer of the vision tower as
``disable_tp``, so each rank holds the whole tower and encodes its share of the images with it; a model whose class
does not declare ``supports_encoder_tp_data`` falls back to ``weights`` (``vllm/config/model.py``, "This model does
not support `--mm-encoder-tp-mode data`"). Until branch memory54 kvlint read the flag for the encoder's activation
only and split the tower's weights over TP in both modes. The expected figures come from the tower's own size
(:func:`kvlint.models.weights.vision_params`), not from any engine output.
"""

from __future__ import annotations

import pytest

import kvlint.memory.vllm as V
from kvlint.models import resolve_model
from kvlint.models.weights import vision_params

GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
H100_TOTAL = int(79.19 * GiB)


def _weights(model_id: str, mode: str | None, tp: int, pp: int = 1, **kw: object) -> int:
    model = resolve_model(model_id, allow_hub=False)
    s = V.VllmSettings(  # type: ignore[arg-type]
        version="0.19.0",
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        max_model_len=8192,
        mm_encoder_tp_mode=mode,
        **kw,
    )
    return V.plan_vllm_detailed(s, model, H100_TOTAL, **H100).plan.weights_bytes


@pytest.mark.parametrize("tp", [2, 4])
def test_data_mode_holds_the_whole_vision_tower_on_each_rank(tp: int) -> None:
    model = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    tower = vision_params(model.config or {}, model.hidden_size) * 2  # bf16, towers are not quantized
    assert tower > GiB
    split = _weights("Qwen/Qwen2.5-VL-7B-Instruct", None, tp)
    whole = _weights("Qwen/Qwen2.5-VL-7B-Instruct", "data", tp)
    assert whole - split == pytest.approx(tower * (1 - 1 / tp), abs=8)
    # "weights" (the default) splits it as no flag does
    assert _weights("Qwen/Qwen2.5-VL-7B-Instruct", "weights", tp) == split


@pytest.mark.parametrize("model_id", ["Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct"])
def test_data_mode_read_by_the_class_not_the_text_model_type(model_id: str) -> None:
    # Qwen3-VL's config nests its text model (text_config.model_type qwen3_vl_text / qwen3_vl_moe_text), which is the
    # ModelSpec's model_type; vLLM picks the class from architectures (Qwen3VLForConditionalGeneration,
    # Qwen3VLMoeForConditionalGeneration, both declaring supports_encoder_tp_data). Until branch review54A kvlint
    # compared the text model_type with "qwen3_vl" and split the tower in data mode.
    model = resolve_model(model_id, allow_hub=False)
    assert model.model_type != (model.config or {}).get("model_type")  # the nested shape this test is about
    assert V.encoder_tp_data(V.VllmSettings(mm_encoder_tp_mode="data"), model)
    tower = vision_params(model.config or {}, model.hidden_size) * 2
    assert tower > 0
    split = _weights(model_id, None, 2)
    whole = _weights(model_id, "data", 2)
    assert whole - split == pytest.approx(tower / 2, abs=8)


def test_data_mode_under_pipeline_parallelism_puts_the_whole_tower_on_the_stage() -> None:
    model = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    tower = vision_params(model.config or {}, model.hidden_size) * 2
    split = _weights("Qwen/Qwen2.5-VL-7B-Instruct", None, 2, pp=2)
    whole = _weights("Qwen/Qwen2.5-VL-7B-Instruct", "data", 2, pp=2)
    assert whole - split == pytest.approx(tower / 2, abs=8)


def test_no_change_at_tp1_without_a_tower_or_for_a_model_that_falls_back() -> None:
    vl = "Qwen/Qwen2.5-VL-7B-Instruct"
    assert _weights(vl, "data", 1) == _weights(vl, None, 1)
    # no image or video built: nothing to replicate
    off = {"limit_mm_per_prompt": {"image": 0, "video": 0}}
    assert _weights(vl, "data", 2, **off) == _weights(vl, None, 2, **off)
    # Gemma 3 does not declare supports_encoder_tp_data: vLLM falls back to "weights"
    g = "google/gemma-3-12b-it"
    assert not V.encoder_tp_data(V.VllmSettings(mm_encoder_tp_mode="data"), resolve_model(g, allow_hub=False))
    assert _weights(g, "data", 2) == _weights(g, None, 2)


def _sglang_weights(
    *args: str, version: str = "0.5.23", model_id: str = "Qwen/Qwen2.5-VL-7B-Instruct"
) -> int:
    from kvlint.engines import parse_command_line
    from kvlint.memory.sglang import sglang_prelude

    s = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x", *args], version)
    s.version = version
    return sglang_prelude(s, resolve_model(model_id, allow_hub=False)).weights_bytes


def test_sglang_dp_encoder_holds_the_whole_vision_tower_on_each_rank() -> None:
    # SGLang's --mm-enable-dp-encoder: sglang/srt/models/qwen2_5_vl.py reads get_global_server_args().
    # mm_enable_dp_encoder into use_data_parallel and builds the vision blocks with tp_size 1
    model = resolve_model("Qwen/Qwen2.5-VL-7B-Instruct", allow_hub=False)
    tower = vision_params(model.config or {}, model.hidden_size) * 2
    split = _sglang_weights("--tp-size", "4")
    whole = _sglang_weights("--tp-size", "4", "--mm-enable-dp-encoder")
    assert whole - split == pytest.approx(tower * (1 - 1 / 4), abs=8)
    # one rank: nothing to replicate
    assert _sglang_weights("--mm-enable-dp-encoder") == _sglang_weights()


@pytest.mark.parametrize("version", ["0.5.8", "0.5.23"])
@pytest.mark.parametrize("model_id", ["Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct"])
def test_sglang_dp_encoder_holds_qwen3_vl_tower_whole(model_id: str, version: str) -> None:
    # sglang/srt/models/qwen3_vl.py (0.5.8 and 0.5.23 wheels): Qwen3VLForConditionalGeneration.__init__ reads
    # mm_enable_dp_encoder into use_data_parallel and passes it to Qwen3VLMoeVisionModel, whose blocks, merger and
    # deepstack mergers then take tp_size 1; Qwen3VLMoeForConditionalGeneration (qwen3_vl_moe.py) runs that __init__.
    # Until branch review54A kvlint listed Qwen2.5-VL, GLM-4.5V and InternVL only and split Qwen3-VL's tower.
    model = resolve_model(model_id, allow_hub=False)
    tower = vision_params(model.config or {}, model.hidden_size) * 2
    assert tower > 0
    split = _sglang_weights("--tp-size", "4", version=version, model_id=model_id)
    whole = _sglang_weights("--tp-size", "4", "--mm-enable-dp-encoder", version=version, model_id=model_id)
    assert whole - split == pytest.approx(tower * (1 - 1 / 4), abs=8)


def _profile_peak(model_id: str, mode: str | None, tp: int, version: str) -> int:
    model = resolve_model(model_id, allow_hub=False)
    s = V.VllmSettings(version=version, tensor_parallel_size=tp, max_model_len=8192, mm_encoder_tp_mode=mode)
    cfg = V.resolve_startup(s, model, H100_TOTAL, **H100)
    return cfg.encoder.peak_bytes if cfg.encoder is not None else 0  # 0: a release kvlint has no profile for


@pytest.mark.parametrize(
    ("model_id", "first"),
    [("Qwen/Qwen2.5-VL-7B-Instruct", "0.10.2"), ("Qwen/Qwen3-VL-8B-Instruct", "0.11.0")],
)
def test_data_mode_from_the_release_whose_class_declares_it(model_id: str, first: str) -> None:
    """``--mm-encoder-tp-mode`` is new in vLLM 0.10.2 (not in the 0.10.1 wheel's config); the 0.10.2 wheel declares
    ``supports_encoder_tp_data`` for Qwen2.5-VL (and Kimi-VL) but not for Qwen3-VL, whose module arrives in 0.11.0
    declaring it. Before its release a class falls back to ``weights``, for the weights and for the encoder's
    profile alike (one list, :data:`kvlint.memory.multimodal.ENCODER_TP_DATA_FROM`)."""
    before = {"0.10.2": "0.10.1", "0.11.0": "0.10.2"}[first]
    for version, changes in ((before, False), (first, True), ("0.19.0", True)):
        split_w = _weights_at(model_id, None, version)
        data_w = _weights_at(model_id, "data", version)
        split_p = _profile_peak(model_id, None, 2, version)
        data_p = _profile_peak(model_id, "data", 2, version)
        assert (data_w > split_w) is changes, version
        # kvlint profiles Qwen2.5-VL's encoder (Qwen3-VL's needs its processor files: 0 either way)
        if "Qwen2.5" in model_id:
            assert split_p > 0 and (data_p > split_p) is changes, version
        if not changes:
            assert data_w == split_w and data_p == split_p


def _weights_at(model_id: str, mode: str | None, version: str) -> int:
    model = resolve_model(model_id, allow_hub=False)
    s = V.VllmSettings(version=version, tensor_parallel_size=2, max_model_len=8192, mm_encoder_tp_mode=mode)
    return V.plan_vllm_detailed(s, model, H100_TOTAL, **H100).plan.weights_bytes


def test_kimi_k25_declares_data_mode_from_0_15() -> None:
    # kimi_k25.py is not in the 0.14.0 wheel and declares supports_encoder_tp_data in 0.15.0 and 0.19.0
    model = resolve_model("moonshotai/Kimi-K2.5", allow_hub=False)
    assert not V.encoder_tp_data(V.VllmSettings(version="0.14.0", mm_encoder_tp_mode="data"), model)
    assert V.encoder_tp_data(V.VllmSettings(version="0.15.0", mm_encoder_tp_mode="data"), model)


def test_kimi_k25_moonvit_counted_and_whole_per_rank_in_data_mode() -> None:
    """Kimi-K2.5's tower as vllm@0.19.0 kimi_k25_vit.py builds it from KimiK25VisionConfig's names (hidden_size
    1152, intermediate_size 4304, 27 layers, patch 14, a 64 x 64 position table; the checkpoint's vt_* keys are
    other names, so these class defaults apply), the projector of kimi_k25.py to the text hidden size 7168. Until
    branch memory55 kvlint counted no tower for it (vision_params 0), in either --mm-encoder-tp-mode."""
    model = resolve_model("moonshotai/Kimi-K2.5", allow_hub=False)
    h, i, layers, text = 1152, 4304, 27, 7168
    conv = 3 * 14 * 14 * h + h
    pos = 64 * 64 * h
    block = 2 * (2 * h) + (h * 3 * h + 3 * h) + (h * h + h) + (h * i + i) + (i * h + h)
    merged = 4 * h  # 2 x 2 patch merge
    projector = 2 * h + (merged * merged + merged) + (merged * text + text)
    expected = conv + pos + layers * block + 2 * h + projector
    assert vision_params(model.config or {}, model.hidden_size) == expected
    tower = expected * 2  # bf16: compressed-tensors leaves the tower unquantized (_maybe_ignore_quant_config)

    def weights(mode: str | None, version: str) -> int:
        s = V.VllmSettings(
            version=version, tensor_parallel_size=8, max_model_len=8192, mm_encoder_tp_mode=mode
        )
        return V.plan_vllm_detailed(s, model, H100_TOTAL * 2, **H100).plan.weights_bytes

    assert weights("data", "0.19.0") - weights(None, "0.19.0") == pytest.approx(tower * (1 - 1 / 8), abs=8)
    assert weights("data", "0.14.0") == weights(None, "0.14.0")  # no kimi_k25.py before 0.15.0


@pytest.mark.parametrize("version", ["0.10.2", "0.11.0", "0.12.0"])
def test_deprecated_encoder_data_parallel_flag_sets_data_mode(version: str) -> None:
    """vllm@0.10.2 / 0.11.0 / 0.12.0 EngineArgs.create_model_config: ``if self.enable_multimodal_encoder_data_parallel:
    ... self.mm_encoder_tp_mode = "data"`` (deprecated, "will be removed in v0.13"), so the old flag holds
    Qwen2.5-VL's tower whole on every rank as ``--mm-encoder-tp-mode data`` does, whatever that flag says."""
    from kvlint.engines import parse_command_line

    model_id = "Qwen/Qwen2.5-VL-7B-Instruct"
    model = resolve_model(model_id, allow_hub=False)

    def weights(*flags: str) -> int:
        serving = parse_command_line(
            ["vllm", "serve", model_id, "--tensor-parallel-size", "4", "--max-model-len", "8192", *flags],
            version,
        )
        s = V.settings_from_config(serving)
        return V.plan_vllm_detailed(s, model, H100_TOTAL, **H100).plan.weights_bytes

    data = weights("--mm-encoder-tp-mode", "data")
    assert data > weights()
    assert weights("--enable-multimodal-encoder-data-parallel") == data
    assert weights("--enable-multimodal-encoder-data-parallel", "--mm-encoder-tp-mode", "weights") == data


@pytest.mark.parametrize(
    ("version", "flag"),
    [
        ("0.9.2", ("--enable-multimodal-encoder-data-parallel",)),
        ("0.10.1", ("--enable-multimodal-encoder-data-parallel",)),
        ("0.11.0", ("--mm-encoder-tp-mode", "data")),
        ("0.19.0", ("--mm-encoder-tp-mode", "data")),
    ],
)
def test_llama4_tower_whole_on_each_rank_in_data_mode(version: str, flag: tuple[str, ...]) -> None:
    """vllm@0.9.2 / 0.10.1 mllama4.py: ``use_data_parallel = parallel_config.enable_multimodal_encoder_data_parallel``
    (the deprecated flag, read by Llama 4's module itself before --mm-encoder-tp-mode existed); 0.10.2 - 0.19.0
    declare ``supports_encoder_tp_data`` and read ``mm_encoder_tp_mode == "data"``. The vision model and its
    pixel-shuffle adapter then take ``disable_tp`` (tp_size 1): each of the 4 ranks holds the whole tower where TP
    holds a quarter of it (the tower's size from :func:`vision_params`). Qwen2.5-VL's module does not read the old
    flag in 0.10.1."""
    from kvlint.engines import parse_command_line

    def weights(model_id: str, *flags: str, ver: str = version) -> int:
        model = resolve_model(model_id, allow_hub=False)
        serving = parse_command_line(
            ["vllm", "serve", model_id, "--tensor-parallel-size", "4", "--max-model-len", "8192", *flags], ver
        )
        s = V.settings_from_config(serving)
        return V.plan_vllm_detailed(s, model, H100_TOTAL, **H100).plan.weights_bytes

    scout = "meta-llama/Llama-4-Scout-17B-16E-Instruct"
    m = resolve_model(scout, allow_hub=False)
    tower = vision_params(m.config, m.hidden_size) * 2  # bf16
    assert weights(scout, *flag) - weights(scout) == pytest.approx(tower * 3 / 4, rel=0.01)
    qwen = "Qwen/Qwen2.5-VL-7B-Instruct"
    assert weights(qwen, "--enable-multimodal-encoder-data-parallel", ver="0.10.1") == weights(
        qwen, ver="0.10.1"
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"merge_kernel_size": [-2, 2]},
        {"merge_kernel_size": [0, 2]},
        {"hidden_size": -1152},
        {"intermediate_size": 0, "init_pos_emb_height": -64},
    ],
)
def test_kimi_k25_tower_sizes_that_are_not_positive_read_as_absent(bad: dict) -> None:
    """A config.json may be pull-request input: a non-positive size in Kimi-K2.5's vision_config (which the config
    check does not bound, merge_kernel_size a list) is read as absent, so KimiK25VisionConfig's default applies and
    the tower is counted as with the defaults (a merge kernel of [-2, 2] made the projector's count
    negative)."""
    model = resolve_model("moonshotai/Kimi-K2.5", allow_hub=False)
    config = dict(model.config or {})
    config["vision_config"] = {**config["vision_config"], **bad}
    assert vision_params(config, model.hidden_size) == vision_params(model.config or {}, model.hidden_size)
