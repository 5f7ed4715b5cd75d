"""The Qwen2-VL family's multimodal encoder profile on vLLM (kvlint.memory.multimodal._qwen2_vl_profile).

Expected numbers come from the engine's formulas restated in the helpers below (vllm/model_executor/models/
qwen2_vl.py::Qwen2VLProcessingInfo, read in the 0.8.0 - 0.34.0 wheels) or from a ground-truth log (gt-288,
QwenLM/Qwen3-VL#983: vLLM 0.8.1 "Encoder cache will be initialized with a budget of 98304 tokens, and profiled with
1 video items"), and the processor settings from the bundled preprocessor_config.json.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml

from kvlint.memory.multimodal import QWEN_VL_MAX_PIXELS, encoder_profile
from kvlint.models import resolve_model
from kvlint.models.catalogue import DATA_DIR, processor_config

ROOT = Path(__file__).resolve().parents[1]
CASES = {c["id"]: c for c in yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text())}
QWEN25 = "Qwen/Qwen2.5-VL-7B-Instruct"


def _m(ref: str):
    return resolve_model(ref, allow_hub=False)


def _proc(ref: str) -> dict:
    found = processor_config(ref)
    assert found is not None
    return found[0]


def engine_image_patches(max_pixels: int, patch: int, merge: int, version: tuple[int, int, int]) -> int:
    """Patches of vLLM's largest dummy image: a 9,999,999-pixel square through transformers' smart_resize up to
    0.12.x (floor of the side scaled to max_pixels, in steps of patch x merge), from 0.13.0 the closest factor pair
    of max_pixels // (patch x merge)^2 merged patches with a ratio <= 200."""
    unit = patch * merge
    if version >= (0, 13, 0):
        for n in range(max_pixels // unit**2, 0, -1):
            d = max(x for x in range(1, math.isqrt(n) + 1) if n % x == 0)
            if (n // d) / d <= 200:
                return n * merge * merge
    side = math.floor(9_999_999 / math.sqrt(9_999_999 * 9_999_999 / max_pixels) / unit) * unit
    return (side // patch) ** 2


def engine_video_frames(
    seq_len: int, image_tokens: int, frame_tokens: int, version: tuple[int, int, int], temporal: int = 2
) -> int:
    """Qwen2VLProcessingInfo.get_num_frames_with_most_features with one video: frames while the video's tokens fit
    seq_len (less one image's tokens before 0.10.2), at most 16 (14 from 0.11.0), at least 1."""
    budget = seq_len - image_tokens if version < (0, 10, 2) else seq_len
    frames = 0
    while ((frames + 1 + (frames + 1) % temporal) // temporal) * frame_tokens <= budget:
        frames += 1
    return max(1, min(frames, 16 if version < (0, 11, 0) else 14))


def _profile(version: tuple[int, int, int], max_model_len: int, **kw):
    args = dict(
        era="v1", version=version, max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=max_model_len,
        chunked_prefill=True, tp=1, dtype_bytes=2,
    )  # fmt: skip
    args.update(kw)
    return encoder_profile(_m(QWEN25), **args)


def test_bundled_processor_configs_name_their_source():
    """Every bundled preprocessor_config.json sits beside a config.json with its provenance (repository, path, a pinned
    commit); processor_config() answers with it for the id, a variant spelling and a derived quantized build."""
    found = sorted(DATA_DIR.glob("*/preprocessor_config.json"))
    assert found, "no processor file bundled"
    for f in found:
        src = json.loads((f.parent / "preprocessor_config.source.json").read_text())
        assert src["repo"] and src["path"] and src["fidelity"], f
        assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]), f
        assert (f.parent / "config.json").is_file()
        model_id = json.loads((f.parent / "entry.json").read_text())["id"]
        data, cite = processor_config(model_id)  # type: ignore[misc]
        assert data == json.loads(f.read_text()) and src["repo"] in cite
    assert _proc(QWEN25)["max_pixels"] == _proc("qwen/qwen2.5-vl-7b-instruct-awq")["max_pixels"]
    assert processor_config("no-such/model") is None


def test_gt288_v081_profiles_one_video_of_the_printed_budget():
    """gt-288 (vLLM 0.8.1, default max_model_len 128,000 = max_position_embeddings): one dummy video whose budget the
    log prints."""
    case = CASES["gt-288"]
    m = _m(QWEN25)
    p, notes = _profile((0, 8, 1), m.max_position_embeddings or 0)
    assert p is not None
    assert p.modality == case["figures"]["encoder_profile_modality"] == "video"
    assert max(8192, p.tokens_per_item) == case["figures"]["encoder_budget_tokens"]
    assert p.items == 1
    assert any("remodlai/qwen-2.5-vl-7b-instruct-lexiq" in n for n in notes)


@pytest.mark.parametrize("version", [(0, 8, 5), (0, 10, 2), (0, 11, 0), (0, 12, 0), (0, 13, 0), (0, 34, 0)])
@pytest.mark.parametrize("max_model_len", [8192, 16384, 32768, 65536, 128000])
def test_image_or_video_as_the_engine_picks(version, max_model_len):
    """The item vLLM profiles: the largest image, or a video of that frame size when its tokens are more."""
    proc = _proc(QWEN25)
    vis = _m(QWEN25).config["vision_config"]
    patch, merge = vis["patch_size"], vis["spatial_merge_size"]
    img_patches = engine_image_patches(proc["max_pixels"], patch, merge, version)
    img_tokens = img_patches // merge**2
    frames = engine_video_frames(max_model_len, img_tokens, img_tokens, version)
    vid_tokens = ((frames + frames % 2) // 2) * img_tokens
    p, _ = _profile(version, max_model_len)
    assert p is not None
    if vid_tokens > img_tokens:
        assert (p.modality, p.tokens_per_item) == ("video", vid_tokens)
        assert p.encoder_tokens_per_item == (frames + frames % 2) // 2 * img_patches
    else:
        assert (p.modality, p.tokens_per_item, p.encoder_tokens_per_item) == (
            "image",
            img_tokens,
            img_patches,
        )
    assert p.items == max(1, max(8192, p.tokens_per_item) // p.tokens_per_item)


def test_limits_choose_the_modality():
    """--limit-mm-per-prompt: video 0 leaves the image; image 0 leaves the video; both 0 profile nothing."""
    img, _ = _profile((0, 12, 0), 128000, limit_mm_per_prompt={"video": 0})
    assert img is not None and img.modality == "image"
    vid, _ = _profile((0, 12, 0), 8192, limit_mm_per_prompt={"image": 0})
    assert vid is not None and vid.modality == "video"
    none, notes = _profile((0, 12, 0), 128000, limit_mm_per_prompt={"image": 0, "video": 0})
    assert none is None and "disables images and videos" in notes[0]
    v0, notes = _profile((0, 8, 3), 8192, era="v0", limit_mm_per_prompt={"image": 0})
    assert v0 is None and "V0's dummy sequences carry videos" in notes[0]


def test_max_pixels_kwarg_and_the_013_factor_pair():
    """--mm-processor-kwargs max_pixels 1,003,520 (1,280 merged patches of 28 px): a 980 px square up to 0.12.x, the
    32 x 40 factor pair from 0.13.0."""
    kw = {"mm_processor_kwargs": {"max_pixels": 1003520}, "limit_mm_per_prompt": {"video": 0}}
    old, _ = _profile((0, 12, 0), 32768, **kw)
    new, _ = _profile((0, 13, 0), 32768, **kw)
    assert old is not None and new is not None
    assert old.encoder_tokens_per_item == engine_image_patches(1003520, 14, 2, (0, 12, 0))
    assert new.encoder_tokens_per_item == engine_image_patches(1003520, 14, 2, (0, 13, 0))
    assert old.tokens_per_item < new.tokens_per_item == 1003520 // 28**2


def test_skip_mm_profiling_and_data_parallel_tower():
    """--skip-mm-profiling drops the profile from 0.10.1 (absent before); --mm-encoder-tp-mode data keeps the whole
    tower's activations on each GPU."""
    skipped, notes = _profile((0, 11, 0), 32768, skip_mm_profiling=True)
    assert skipped is None and "--skip-mm-profiling" in notes[0]
    kept, _ = _profile((0, 10, 0), 32768, skip_mm_profiling=True)
    assert kept is not None
    tp2, _ = _profile((0, 12, 0), 32768, tp=2)
    data, _ = _profile((0, 12, 0), 32768, tp=2, mm_encoder_tp_mode="data")
    assert tp2 is not None and data is not None and data.peak_bytes > tp2.peak_bytes


def test_qwen25_vl_peak_counts_the_gated_mlp_and_fp32_pixels():
    """Qwen2_5_VisionMLP keeps gate_up (2 x intermediate) through the activation and down_proj: 3 x intermediate +
    3 x hidden per patch in the model dtype, plus float32 pixel_values of 3 x temporal x patch^2 per patch."""
    vis = _m(QWEN25).config["vision_config"]
    p, _ = _profile((0, 12, 0), 16384, limit_mm_per_prompt={"video": 0})
    assert p is not None
    per_patch = (3 * vis["intermediate_size"] + 3 * vis["hidden_size"]) * 2 + 3 * 2 * vis[
        "patch_size"
    ] ** 2 * 4
    assert p.peak_bytes == p.items * p.encoder_tokens_per_item * per_patch


def test_qwen3_vl_says_why_it_is_not_modelled():
    p, notes = encoder_profile(
        _m("Qwen/Qwen3-VL-8B-Instruct"), era="v1", version=(0, 12, 0), max_num_seqs=256,
        max_num_batched_tokens=8192, max_model_len=32768, chunked_prefill=True, tp=1, dtype_bytes=2,
    )  # fmt: skip
    assert p is None and "video_preprocessor_config.json" in notes[0] and "12.5" in notes[0]


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"max_pixels": 10**15}, "max_pixels 1,000,000,000,000,000"),
        ({"max_pixels": -5}, "max_pixels -5"),
        ({"size": {"longest_edge": 10**15}}, "max_pixels 1,000,000,000,000,000"),
        ({"min_pixels": 10**15}, "min_pixels 1,000,000,000,000,000"),
        ({"min_pixels": -1}, "min_pixels -1"),
    ],
)
def test_absurd_pixel_counts_are_refused(kwargs, name):
    """A max_pixels/min_pixels outside 1 .. QWEN_VL_MAX_PIXELS is not profiled (10^15 max_pixels sized a video at
    millions of GiB; a negative one failed in smart_resize's square root; a 10^15 min_pixels scales vLLM's dummy
    image up): the note names the value and its source, as for Llama 4's max_patches."""
    for version in ((0, 12, 0), (0, 13, 0)):
        p, notes = _profile(version, 32768, mm_processor_kwargs=kwargs)
        assert p is None, version
        assert any(f"{name} (from --mm-processor-kwargs) is not a pixel count" in n for n in notes), notes
    at_bound, _ = _profile((0, 12, 0), 32768, mm_processor_kwargs={"max_pixels": QWEN_VL_MAX_PIXELS})
    assert at_bound is not None
    assert at_bound.encoder_tokens_per_item == engine_image_patches(QWEN_VL_MAX_PIXELS, 14, 2, (0, 12, 0))


def test_absurd_bundled_processor_pixels_are_refused(monkeypatch):
    """The bound holds for a checkpoint's preprocessor_config.json too (here a copy of the bundled one with max_pixels
    raised to 10^15), and the note cites the file."""
    import kvlint.models.catalogue as catalogue

    data, cite = processor_config(QWEN25)  # type: ignore[misc]
    monkeypatch.setattr(catalogue, "processor_config", lambda ref: ({**data, "max_pixels": 10**15}, cite))
    p, notes = _profile((0, 12, 0), 32768)
    assert p is None
    assert any(f"max_pixels 1,000,000,000,000,000 (from preprocessor_config.json {cite})" in n for n in notes)


def test_qwen3_vl_refuses_absurd_max_pixels():
    """Qwen3-VL's image profile from --mm-processor-kwargs max_pixels takes the same bound (a negative value failed
    in the square root of the image side, 10^15 gave an absurd profile)."""
    for bad in (10**15, -5):
        p, notes = encoder_profile(
            _m("Qwen/Qwen3-VL-8B-Instruct"), era="v1", version=(0, 12, 0), max_num_seqs=256,
            max_num_batched_tokens=8192, max_model_len=32768, chunked_prefill=True, tp=1, dtype_bytes=2,
            mm_processor_kwargs={"max_pixels": bad},
        )  # fmt: skip
        assert p is None and any("is not a pixel count" in n for n in notes), notes


def _qwen3(tp: int, max_pixels: int, mode: str | None = None):
    p, _ = encoder_profile(
        _m("Qwen/Qwen3-VL-8B-Instruct"), era="v1", version=(0, 19, 0), max_num_seqs=256,
        max_num_batched_tokens=8192, max_model_len=32768, chunked_prefill=True, tp=tp, dtype_bytes=2,
        mm_processor_kwargs={"max_pixels": max_pixels}, mm_encoder_tp_mode=mode,
    )  # fmt: skip
    assert p is not None
    return p


def _per_tower_token(model_ref: str) -> int:
    """_vit_peak per token at TP 1: 2 x intermediate + 2 x hidden in bf16."""
    vis = _m(model_ref).config["vision_config"]
    return (2 * vis["intermediate_size"] + 2 * vis["hidden_size"]) * 2


def test_qwen3_vl_data_mode_runs_the_whole_tower_on_each_rank():
    """vllm@0.11.0 / 0.19.0 qwen3_vl.py: under --mm-encoder-tp-mode data the vision tower's linear layers take
    disable_tp and the profile's items go through run_dp_sharded_mrope_vision_model (vision.py), which gives the
    equal dummy items round the TP ranks (get_load_balance_assignment): the busiest rank encodes ceil(items / tp)
    of them with the whole tower. kvlint had divided the tower by TP over all the items."""
    ref = "Qwen/Qwen3-VL-8B-Instruct"
    # one large item: the rank that gets it runs it at full width, as TP 1 does
    one_tp1, one_data = _qwen3(1, 8_000_000), _qwen3(4, 8_000_000, "data")
    assert one_tp1.items == one_data.items == 1
    assert one_data.peak_bytes == one_tp1.peak_bytes > _qwen3(4, 8_000_000).peak_bytes
    # many small items: each rank's tower sees ceil(items / 4) of them; the pixels and the cache stay whole
    many_tp1, many_data = _qwen3(1, 200_000), _qwen3(4, 200_000, "data")
    n = many_data.items
    assert n > 4 and n % 4
    fewer = (n - -(-n // 4)) * many_data.encoder_tokens_per_item
    assert many_data.peak_bytes == many_tp1.peak_bytes - fewer * _per_tower_token(ref)
    assert many_data.cache_bytes == many_tp1.cache_bytes


def test_qwen25_vl_data_mode_shares_the_items_over_the_ranks():
    """Qwen2.5-VL runs the same run_dp_sharded_mrope_vision_model (vllm@0.11.0 / 0.19.0 qwen2_5_vl.py): with many
    profile items each rank's whole tower encodes ceil(items / tp), not all of them."""
    kw = {"mm_processor_kwargs": {"max_pixels": 200_000}, "limit_mm_per_prompt": {"video": 0}}
    tp1, _ = _profile((0, 19, 0), 32768, **kw)
    data, _ = _profile((0, 19, 0), 32768, tp=4, mm_encoder_tp_mode="data", **kw)
    assert tp1 is not None and data is not None
    n = data.items
    assert n > 4
    vis = _m(QWEN25).config["vision_config"]
    per_tok = (3 * vis["intermediate_size"] + 3 * vis["hidden_size"]) * 2
    fewer = (n - -(-n // 4)) * data.encoder_tokens_per_item
    assert data.peak_bytes == tp1.peak_bytes - fewer * per_tok


def test_qwen2_vl_falls_back_to_weights_mode_before_0_11():
    """Qwen2VLForConditionalGeneration declares supports_encoder_tp_data from 0.11.0 (the 0.11.0, 0.14.0, 0.15.0
    and 0.19.0 wheels' qwen2_vl.py; not in 0.10.2's, where ModelConfig falls back to --mm-encoder-tp-mode weights
    with "This model does not support `--mm-encoder-tp-mode data`"): at 0.10.2 its tower stays split by TP, the
    profile the same as without the flag; from 0.11.0 each rank encodes its share of the items with the whole tower,
    as Qwen2.5-VL's does (declared from 0.10.2). Until branch memory55 kvlint kept Qwen2-VL split in every release."""
    import dataclasses

    base = _m(QWEN25)
    vis = {
        "depth": 32, "embed_dim": 1280, "mlp_ratio": 4, "num_heads": 16, "in_chans": 3, "hidden_size": 3584,
        "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
    }  # fmt: skip
    cfg = dict(base.config or {}, model_type="qwen2_vl", vision_config=vis)
    cfg["architectures"] = ["Qwen2VLForConditionalGeneration"]
    qwen2 = dataclasses.replace(base, config=cfg, architectures=["Qwen2VLForConditionalGeneration"])
    args = dict(
        era="v1", max_num_seqs=256, max_num_batched_tokens=8192, max_model_len=32768,
        chunked_prefill=True, tp=4, dtype_bytes=2, mm_processor_kwargs={"max_pixels": 1_000_000},
    )  # fmt: skip
    old = dict(args, version=(0, 10, 2))
    weights, _ = encoder_profile(qwen2, **old)
    data, _ = encoder_profile(qwen2, mm_encoder_tp_mode="data", **old)
    assert weights is not None and data is not None
    assert data.peak_bytes == weights.peak_bytes
    new = dict(args, version=(0, 19, 0))
    weights, _ = encoder_profile(qwen2, **new)
    data, _ = encoder_profile(qwen2, mm_encoder_tp_mode="data", **new)
    assert weights is not None and data is not None and data.peak_bytes > weights.peak_bytes
    w25, _ = encoder_profile(base, **new)
    d25, _ = encoder_profile(base, mm_encoder_tp_mode="data", **new)
    assert w25 is not None and d25 is not None and d25.peak_bytes != w25.peak_bytes
