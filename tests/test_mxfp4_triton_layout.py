"""MXFP4 experts in vLLM's Triton backend on Hopper (docs/engine-memory-model.md §1.13): the swizzled layout of the
bundled ``triton_kernels``, the loaded scales kept beside the swizzled ones and the float32 biases, for the
releases that take that backend by default (0.12.0 - 0.24.x), and gpt-oss's float32 RoPE cache; the backend vLLM
picks per release and GPU (FlashInfer's TRT-LLM on SM100, its CUTLASS on SM90 when asked and on SM120, Marlin with
LoRA) and the padding each holds."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from kvlint.memory.versions import ReleaseVersion
from kvlint.memory.vllm import VllmSettings, mxfp4_moe_backend
from kvlint.models import resolve_model
from kvlint.models.weights import _mxfp4_triton_hopper_rate, param_breakdown, weight_bytes

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

GiB = 1 << 30
MODELS = ROOT / "fixtures" / "plan" / "models"


def _oss20b():
    return resolve_model(str(MODELS / "openai--gpt-oss-20b"), allow_hub=False)


def test_gt369_weights_within_one_percent_of_the_print():
    """gpt-oss-20b at TP 2 on vLLM 0.19.0, H100: "Actual usage is 7.01 GiB for weight". One padded MXFP4 copy (the
    rule before this layout was read) gave 6.85 GiB, 2.3 % short."""
    cases = {c["id"]: c for c in yaml.safe_load((ROOT / "bench/groundtruth/cases.yaml").read_text())}
    case = cases["gt-369"]
    p = accuracy.plan_case(case, accuracy.REPLAY["gt-369"], MODELS).plan
    printed = case["figures"]["weights_gib"]
    assert abs(p.weights_bytes / GiB - printed) / printed < 0.01


def test_layout_bytes_restate_the_swizzle_shapes():
    """gpt-oss-20b, TP 2, 0.19.0's pre-pad to 64: per layer and rank, 32 experts of w13 [2,944, 1,440 -> 1,472] and
    w2 [2,880, 736 -> 768] bytes, swizzled scales [2,944 -> 3,072, 90] and [2,880 -> 3,072, 46], the loaded scales
    [2,944, 90] and [2,880, 46], fp32 biases [2,944] and [2,880]; without the pre-pad (0.12 - 0.16) w13 keeps
    1,440 bytes a row and w2 736."""
    m = _oss20b()
    experts = param_breakdown(m)["experts"]
    per_rank = {
        True: 32
        * (2944 * 1472 + 2880 * 768 + 3072 * 90 + 3072 * 46 + 2944 * 90 + 2880 * 46 + (2944 + 2880) * 4),
        False: 32
        * (2944 * 1440 + 2880 * 736 + 3072 * 90 + 3072 * 46 + 2944 * 90 + 2880 * 46 + (2944 + 2880) * 4),
    }
    for pad, rank_layer in per_rank.items():
        rate = _mxfp4_triton_hopper_rate(m, 2, pad)
        assert rate is not None
        assert rate * experts / 2 == pytest.approx(24 * rank_layer, rel=1e-12)


@pytest.mark.parametrize(
    ("version", "cc", "lora", "expected"),
    [
        ("0.11.1", "9.0", False, None),  # no bundled triton_kernels: not this layout
        ("0.12.0", "9.0", False, "triton"),
        ("0.16.0", "9.0", False, "triton"),
        ("0.17.0", "9.0", False, "triton-pad64"),
        ("0.19.0", "9.0", False, "triton-pad64"),
        # 0.21.0's rewritten oracle still takes Triton on Hopper (TRT-LLM needs SM100), with 0.20.x's triton_kernels;
        # 0.22.0 - 0.24.x bundle a HopperMXValueLayout without the pre-pad; 0.25.0's conversion is not read
        ("0.21.0", "9.0", False, "triton-pad64"),
        ("0.22.0", "9.0", False, "triton"),
        ("0.24.0", "9.0", False, "triton"),
        ("0.25.0", "9.0", False, None),
        ("0.19.0", "8.0", False, None),  # A100: Marlin, by compute capability
        # Blackwell SM100: FlashInfer's TRT-LLM backend (flashinfer-python required from 0.11.1, built into the release
        # image before: 0.10.1 - 0.11.0 take it too, as the sampler's FlashInfer is assumed there); 10.3 from 0.13.0
        ("0.10.0", "10.0", False, None),  # no MXFP4 MoE yet
        ("0.10.1.1", "10.0", False, "flashinfer-trtllm"),
        ("0.10.2", "10.0", False, "flashinfer-trtllm"),
        ("0.11.0", "10.0", False, "flashinfer-trtllm"),
        ("0.11.0", "10.3", False, None),  # is_device_capability(100): 10.0 only
        ("0.11.0", "9.0", False, None),  # Hopper: Triton or Marlin, by compute capability as before
        ("0.11.1", "10.0", False, "flashinfer-trtllm"),
        ("0.12.0", "10.3", False, None),
        ("0.13.0", "10.3", False, "flashinfer-trtllm"),
        ("0.19.0", "10.0", False, "flashinfer-trtllm"),
        ("0.26.0", "10.0", False, "flashinfer-trtllm"),
        ("0.27.0", "10.0", False, "flashinfer-trtllm-i128"),
        ("0.34.0", "10.0", False, "flashinfer-trtllm-i128"),
        # consumer Blackwell: Marlin before 0.19.0, FlashInfer's CUTLASS from 0.19.0 (Triton needs < 11.0)
        ("0.14.0", "12.0", False, "marlin"),
        ("0.19.0", "12.0", False, "flashinfer-cutlass"),
        ("0.34.0", "12.0", False, "flashinfer-cutlass"),
        # LoRA: Marlin unless VLLM_MXFP4_USE_MARLIN is set false (unset is None, not False) before 0.21.0; from
        # 0.21.0 only LoRA-aware experts pass is_supported_config, and Marlin's is the one in the list
        ("0.14.0", "9.0", True, "marlin"),
        ("0.19.0", "9.0", True, "marlin"),
        ("0.21.0", "9.0", True, "marlin"),
        ("0.34.0", "10.0", True, "marlin"),
    ],
)
def test_backend_by_release_and_gpu(version, cc, lora, expected):
    s = VllmSettings(enable_lora=lora)
    assert mxfp4_moe_backend(s, ReleaseVersion(version), cc) == expected


def test_named_backend_wins():
    s = VllmSettings(mxfp4_backend="marlin")
    assert mxfp4_moe_backend(s, ReleaseVersion("0.19.0"), "9.0") == "marlin"


def test_triton_layout_holds_more_than_one_padded_copy():
    m = _oss20b()
    one_copy = weight_bytes(m, dtype_bytes=2, tp=2, compute_capability="9.0")[0]
    triton = weight_bytes(m, dtype_bytes=2, tp=2, compute_capability="9.0", mxfp4_backend="triton-pad64")
    assert triton[0] > one_copy
    assert "Triton" in triton[1]


def test_gpt_oss_rope_cache_is_float32():
    """gpt_oss.py builds its RoPE in float32: 131,072 positions (YaRN 4,096 x 32) x 64 x 4 B = 32 MiB."""
    from kvlint.memory.vllm import _rotary_cache_bytes

    assert _rotary_cache_bytes(_oss20b(), 2) == 131072 * 64 * 4


@pytest.mark.parametrize(
    ("version", "env", "moe_backend", "expected"),
    [
        # VLLM_MXFP4_USE_MARLIN=1 takes Marlin on Hopper before the Triton test (0.12.0 - 0.18.x:
        # quantization/mxfp4.py::get_mxfp4_backend; 0.19.0 - 0.20.x: oracle/mxfp4.py, "Handle explicit Marlin")
        ("0.12.0", {"VLLM_MXFP4_USE_MARLIN": "1"}, None, "marlin"),
        ("0.19.0", {"VLLM_MXFP4_USE_MARLIN": "1"}, None, "marlin"),
        ("0.19.0", {"VLLM_MXFP4_USE_MARLIN": "0"}, None, "triton-pad64"),
        # VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1 takes FlashInfer's SM90 backend, checked first: its own padding
        ("0.14.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, None, "flashinfer-cutlass"),
        (
            "0.20.0",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1", "VLLM_MXFP4_USE_MARLIN": "1"},
            None,
            "flashinfer-cutlass",
        ),
        # --moe-backend (read by the MXFP4 oracle from 0.19.0) before either env
        ("0.19.0", {"VLLM_MXFP4_USE_MARLIN": "1"}, "triton", "triton-pad64"),
        ("0.19.0", {}, "marlin", "marlin"),
        ("0.20.0", {}, "flashinfer_cutlass", "flashinfer-cutlass"),
        ("0.19.0", {}, "deep_gemm", None),
        # the SM90 FlashInfer backend's own padding (128, 128) from 0.11.1, whose wheel requires FlashInfer
        ("0.21.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, None, "flashinfer-cutlass"),
        ("0.11.1", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, None, "flashinfer-cutlass"),
        # 0.10.2 - 0.11.0's get_mxfp4_backend: the same SM90 branch with the image's FlashInfer, no Marlin switch;
        # 0.10.1.x: VLLM_MXFP4_USE_MARLIN first, and no SM90 FlashInfer backend
        ("0.11.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, None, "flashinfer-cutlass"),
        ("0.11.0", {"VLLM_MXFP4_USE_MARLIN": "1"}, None, None),
        ("0.10.1.1", {"VLLM_MXFP4_USE_MARLIN": "1"}, None, "marlin"),
        ("0.10.1.1", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, None, None),
        # LoRA with VLLM_MXFP4_USE_MARLIN=0: Triton before 0.21.0 (get_mxfp4_backend_with_lora's `is False`)
        ("0.19.0", {"VLLM_MXFP4_USE_MARLIN": "0", "__lora": "1"}, None, "triton-pad64"),
        ("0.21.0", {"VLLM_MXFP4_USE_MARLIN": "0", "__lora": "1"}, None, "marlin"),
    ],
)
def test_backend_env_and_flag_on_hopper(version, env, moe_backend, expected):
    """The container's MXFP4 switches, read from its env as the manifest sets them, decide the backend whose layout
    is priced."""
    import dataclasses

    from kvlint.memory.vllm import settings_from_flags

    lora = env.pop("__lora", None) is not None
    s = dataclasses.replace(settings_from_flags({}, env, version), enable_lora=lora)
    if moe_backend:
        s = dataclasses.replace(s, moe_backend=moe_backend)
    assert mxfp4_moe_backend(s, ReleaseVersion(version), "9.0") == expected


@pytest.mark.parametrize(
    ("version", "cc", "env", "tp", "hidden", "part"),
    [
        # B200, TRT-LLM: hidden and intermediate per partition to 256 (0.19.0 - 0.26.x), intermediate to 128 from
        # 0.27.0: gpt-oss-120b at TP 8 holds 360 -> 512 rows per rank; at TP 1 2,880 -> 3,072, then 2,944
        ("0.21.0", "10.0", {}, 1, 3072, 3072),
        # the vllm/vllm-openai:v0.11.0 image on a B200 (FlashInfer built in): the same 256/256 (was 2,880 x 2,880 -> 64)
        ("0.11.0", "10.0", {}, 1, 3072, 3072),
        ("0.21.0", "10.0", {}, 8, 3072, 512),
        ("0.27.0", "10.0", {}, 1, 3072, 2944),
        # H100 with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=1: FlashInfer's SM90 CUTLASS, both to 128
        ("0.20.0", "9.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"}, 1, 2944, 2944),
        # RTX PRO 6000 (12.0): CUTLASS from 0.19.0
        ("0.21.0", "12.0", {}, 1, 2944, 2944),
        # LoRA on an H100 from 0.21.0: Marlin (hidden 256, intermediate 128)
        ("0.21.0", "9.0", {"__lora": "1"}, 1, 3072, 2944),
        # B200 with VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS=1: FlashInfer's MXFP4 x MXFP8 CUTLASS, both to 128
        ("0.19.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, 1, 2944, 2944),
        ("0.17.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, 8, 2944, 384),
        ("0.11.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, 1, 2944, 2944),
        # 0.24.0 no longer reads the switch: TRT-LLM's 256
        ("0.24.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, 1, 3072, 3072),
    ],
)
def test_flashinfer_and_marlin_padding_in_the_plan(version, cc, env, tp, hidden, part):
    """The expert bytes the plan holds are one MXFP4 copy (0.5 + 1/32 B a parameter) of the padded shape, the
    padding of the backend vLLM picks for that release and GPU (gpt-oss-120b: hidden 2,880, intermediate 2,880)."""
    import dataclasses

    from kvlint.memory.vllm import settings_from_flags

    m = resolve_model(str(ROOT / "kvlint/data/models/openai--gpt-oss-120b"), allow_hub=False)
    lora = env.pop("__lora", None) is not None
    s = dataclasses.replace(settings_from_flags({}, env, version), enable_lora=lora)
    backend = mxfp4_moe_backend(s, ReleaseVersion(version), cc)
    got = weight_bytes(m, dtype_bytes=2, tp=tp, compute_capability=cc, mxfp4_backend=backend)[0]
    parts = param_breakdown(m)
    kept = parts["linear"] + parts["embed"] + parts["other"] + parts["vision"]
    padded_experts = parts["experts"] * (hidden * part) / (2880 * (2880 // tp))
    assert got == pytest.approx(padded_experts * (0.5 + 1 / 32) + kept * 2, rel=1e-9)


def test_sm100_before_flashinfer_was_required():
    """0.10.1 - 0.11.0 list FlashInfer as a wheel extra that the release image builds in, so a B200 takes FlashInfer's
    SM100 backend there as from 0.11.1 (review50E: kvlint priced 0.11.0 on a B200 at the capability padding,
    4 GiB less for gpt-oss-120b at TP 1 than 0.11.1). 0.10.1.x asks ``_should_use_flashinfer_mxfp4_bf16``, which an
    explicit ``VLLM_USE_FLASHINFER_MOE_MXFP4_BF16=0`` turns off; 0.10.2 - 0.11.0's ``get_mxfp4_backend`` does not
    read it on SM100."""
    import dataclasses

    from kvlint.memory.vllm import settings_from_flags

    off = {"VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "0"}
    assert (
        mxfp4_moe_backend(settings_from_flags({}, off, "0.10.1.1"), ReleaseVersion("0.10.1.1"), "10.0")
        is None
    )
    assert mxfp4_moe_backend(settings_from_flags({}, off, "0.11.0"), ReleaseVersion("0.11.0"), "10.0") == (
        "flashinfer-trtllm"
    )
    # no LoRA branch before 0.11.1: the same backend with --enable-lora
    lora = dataclasses.replace(settings_from_flags({}, {}, "0.11.0"), enable_lora=True)
    assert mxfp4_moe_backend(lora, ReleaseVersion("0.11.0"), "10.0") == "flashinfer-trtllm"
    m = resolve_model(str(ROOT / "kvlint/data/models/openai--gpt-oss-120b"), allow_hub=False)
    b011 = mxfp4_moe_backend(settings_from_flags({}, {}, "0.11.0"), ReleaseVersion("0.11.0"), "10.0")
    b0111 = mxfp4_moe_backend(settings_from_flags({}, {}, "0.11.1"), ReleaseVersion("0.11.1"), "10.0")
    w = [
        weight_bytes(m, dtype_bytes=2, tp=1, compute_capability="10.0", mxfp4_backend=b)[0]
        for b in (b011, b0111)
    ]
    assert w[0] == w[1]


@pytest.mark.parametrize(
    ("version", "cc", "env", "expected"),
    [
        # 0.10.2 - 0.18.x get_mxfp4_backend: SM100 + the MXFP8 CUTLASS switch before the MXFP8 TRT-LLM one
        ("0.17.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-cutlass"),
        (
            "0.17.0",
            "10.0",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1", "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8": "1"},
            "flashinfer-cutlass",
        ),
        (
            "0.12.0",
            "10.3",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"},
            None,
        ),  # 10.0 only before 0.13.0
        ("0.13.0", "10.3", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-cutlass"),
        ("0.17.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "0"}, "flashinfer-trtllm"),
        # 0.19.0 - 0.23.x select_mxfp4_moe_backend: after an explicit BF16=1 and the MXFP8 TRT-LLM switch
        ("0.19.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-cutlass"),
        ("0.23.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-cutlass"),
        (
            "0.19.0",
            "10.0",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1", "VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8": "1"},
            "flashinfer-trtllm",
        ),
        (
            "0.19.0",
            "10.0",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1", "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "1"},
            "flashinfer-trtllm",
        ),
        (
            "0.19.0",
            "10.0",
            {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1", "VLLM_USE_FLASHINFER_MOE_MXFP4_BF16": "0"},
            "flashinfer-cutlass",
        ),
        ("0.19.0", "9.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, None),  # refused off SM100
        ("0.24.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-trtllm"),
        ("0.11.0", "10.0", {"VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS": "1"}, "flashinfer-cutlass"),
    ],
)
def test_mxfp8_cutlass_switch_on_blackwell(version, cc, env, expected):
    """``VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS=1`` picks FlashInfer's MXFP4 x MXFP8 CUTLASS backend on
    SM100 (its 128/128 padding) in 0.10.2 - 0.23.x, in each release's order of switches."""
    from kvlint.memory.vllm import settings_from_flags

    s = settings_from_flags({}, env, version)
    assert mxfp4_moe_backend(s, ReleaseVersion(version), cc) == expected
