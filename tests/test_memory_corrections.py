"""The memory-model corrections of kvlint issue 18, each against the source rule it restates and, where a start-up
log printed the figure, against that figure (cases cited by id: ../shared/groundtruth/cases.yaml,
bench/groundtruth/cases.yaml). Configs: fixtures/plan/models, bench/groundtruth/models, the bundled catalogue."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory import calibration as cal
from kvlint.memory.multimodal import encoder_profile, parse_mm_limits
from kvlint.memory.versions import (
    cudagraph_subtracted_by_default,
    parse_version,
    printed_activation_includes_cudagraph,
)
from kvlint.memory.vllm import VllmSettings, build_groups, mamba_state_bytes_per_rank, plan_vllm_detailed
from kvlint.models import resolve_model
from kvlint.models.weights import weight_bytes

GiB = 1 << 30
ROOT = Path(__file__).resolve().parents[1]


def _m(ref: str):
    return resolve_model(ref, allow_hub=False)


@pytest.mark.parametrize(
    "version,cc,path",
    [
        ("0.8.4", (8, 9), "v1_native"),  # FlashInfer >= 0.2.3 refused (vllm-project/vllm#14815)
        ("0.10.1.1", (8, 0), "v1_flashinfer"),  # default when installed
        ("0.11.0", (9, 0), "v1_flashinfer"),
        ("0.11.1", (9, 0), "v1_native"),  # opt-in from 0.11.1 (#26859)
        ("0.16.0", (9, 0), "v1_native"),
        ("0.19.0", (9, 0), "v1_triton"),  # the PyTorch path masks with a Triton kernel from 0.17.0 (#33538)
        ("0.21.0", (7, 5), "v1_flashinfer"),  # back by default; 0.21-0.23 accept SM75
        ("0.24.0", (7, 5), "v1_triton"),  # from 0.24 the floor is SM80
        ("0.26.0", (8, 9), "v1_flashinfer"),
        ("0.33.0", (10, 0), "v1_flashinfer"),
    ],
)
def test_sampler_path_by_release(version, cc, path):
    assert cal.sampler_path("v1", parse_version(version), True, cc) == path
    # ROCm never takes FlashInfer; its forward_native masks with the same Triton kernel from 0.17.0
    amd = "v1_triton" if parse_version(version) >= (0, 17, 0) else "v1_native"
    assert cal.sampler_path("v1", parse_version(version), True, cc, vendor="amd") == amd
    assert cal.sampler_path("v0", parse_version(version), False, cc) == "v0_sort"


def test_sampler_path_uncertain_only_where_the_package_decides():
    assert cal.sampler_path_alternative("v1", parse_version("0.10.1.1")) == "v1_native"
    assert cal.sampler_path_alternative("v1", parse_version("0.8.5")) == "v1_flashinfer"
    assert cal.sampler_path_alternative("v1", parse_version("0.11.1")) is None
    assert cal.sampler_path_alternative("v1", parse_version("0.10.1.1"), flashinfer_env=False) is None


def test_activation_follows_the_shapes():
    """The three profile phases: the forward term scales with T and intermediate/tp, the sampler with R x vocab;
    the larger one is the peak."""
    fwd_only = cal.activation_bytes("v0_sort", 8, 8192, 151936, 1024, 3072, 1, 2)  # gt-209: 8 sampled rows
    assert fwd_only == 8192 * (3 * 3072 + 4 * 1024) * 2  # 0.203 GiB; the log printed 0.23
    samp = cal.activation_bytes("v1_native", 1024, 8192, 128256, 4096, 14336, 1, 2)  # gt-056
    assert samp == cal.native_sampler_bytes(1024, 128256, 2, 8192, 4096)
    assert samp / GiB == pytest.approx(4.76, abs=0.05)  # printed 4.76 GiB
    assert cal.activation_bytes("v1_native", 1024, 8192, 128256, 4096, 14336, 1, 2, last_stage=False) < samp


def test_non_torch_grows_with_ranks_and_on_rocm():
    one = cal.non_torch_bytes("v1", 1)
    assert abs(cal.non_torch_bytes("v1", 2) - one - cal.NON_TORCH_GIB["per_peer"] * GiB) <= 1
    assert cal.non_torch_bytes("v1", 4) > cal.non_torch_bytes("v1", 2) > one
    assert (
        abs(
            cal.non_torch_bytes("v0", 1, "amd")
            - cal.non_torch_bytes("v0", 1)
            - cal.NON_TORCH_GIB["rocm"] * GiB
        )
        <= 1
    )


def test_cudagraph_default_and_print_by_release():
    assert [
        cudagraph_subtracted_by_default(parse_version(v)) for v in ("0.18.0", "0.19.0", "0.20.0", "0.26.0")
    ] == [
        False,
        False,
        True,
        True,
    ]
    printed = [
        printed_activation_includes_cudagraph(parse_version(v))
        for v in ("0.18.0", "0.19.0", "0.26.0", "0.27.0")
    ]
    assert printed == [True, False, False, True]


def test_mamba_state_is_divided_by_tensor_parallelism():
    """Qwen3-Next: vLLM shards the Gated-DeltaNet state with its heads, so at TP 2 the attention block that covers the
    state page stays 544 tokens (state and attention both halve), not 1,072."""
    m = _m("Qwen/Qwen3-Next-80B-A3B-Thinking")
    blocks = {tp: build_groups(list(m.layers), tp, 2, "auto", 16, True)[2] for tp in (1, 2)}
    assert blocks == {1: 544, 2: 544}
    state = next(lay.state_bytes for lay in m.layers if lay.kind == "mamba")
    assert mamba_state_bytes_per_rank(state, 2) == state // 2


def test_mxfp4_weights_on_a100_follow_the_marlin_padding():
    """gpt-oss-120b at TP 4 on A100 (no native MXFP4: Marlin pads hidden to 256 and the per-rank intermediate to 128)
    loads 17.22 GiB per rank (gt-215); on Hopper at TP 1 64.38 GiB (gt-008)."""
    m = _m("openai/gpt-oss-120b")
    a100, _ = weight_bytes(m, dtype_bytes=2, tp=4, compute_capability="8.0")
    h100, _ = weight_bytes(m, dtype_bytes=2, tp=1, compute_capability="9.0")
    d = plan_vllm_detailed(
        VllmSettings(
            version="0.10.1.1", tensor_parallel_size=4, max_model_len=16384, gpu_memory_utilization=0.8
        ),
        m,
        int(79.26 * GiB),
        gpu_name="NVIDIA A100-SXM4-80GB",
        compute_capability="8.0",
    )
    assert d.plan.weights_bytes / GiB == pytest.approx(17.22, rel=0.01)
    assert h100 / GiB == pytest.approx(64.38, rel=0.01)
    assert a100 > h100  # the per-rank padding to 768 of 720 adds storage


def test_encoder_profile_items_as_the_logs_print():
    """gt-203 (0.11.2, Gemma 3, budget 16,384): 'profiled with 63 image items'; its cache holds the whole budget per
    item in 0.11-0.12. gt-225 (0.6.3, mllama, 256 sequences): pixel_values [256, 1, 1, 4, 3, 560, 560]."""
    g = _m("google/medgemma-27b-it")
    p, _ = encoder_profile(
        g, era="v1", version=(0, 11, 2), max_num_seqs=1024, max_num_batched_tokens=16384, max_model_len=32768,
        chunked_prefill=True, tp=1, dtype_bytes=2,
    )  # fmt: skip
    assert p is not None and p.items == 63 and p.encoder_tokens_per_item == 4096
    assert p.cache_bytes == 63 * 16384 * 5376 * 2
    p13, _ = encoder_profile(
        g, era="v1", version=(0, 13, 0), max_num_seqs=1024, max_num_batched_tokens=16384, max_model_len=32768,
        chunked_prefill=True, tp=1, dtype_bytes=2,
    )  # fmt: skip
    assert p13 is not None and p13.cache_bytes == 63 * 260 * 5376 * 2
    none, notes = encoder_profile(
        g, era="v1", max_num_seqs=256, max_num_batched_tokens=2048, max_model_len=8192, chunked_prefill=True, tp=1,
        dtype_bytes=2, limit_mm_per_prompt=parse_mm_limits('{"image": 0}'),
    )  # fmt: skip
    assert none is None and "disables images" in notes[0]
    ml = _m("meta-llama/Llama-3.2-11B-Vision-Instruct")
    q, _ = encoder_profile(
        ml, era="v0", max_num_seqs=256, max_num_batched_tokens=131072, max_model_len=131072, chunked_prefill=False,
        tp=1, dtype_bytes=2,
    )  # fmt: skip
    assert q is not None and q.items == 256 and q.encoder_tokens_per_item == 4 * 1608


def test_encoder_profile_llama4_counts_every_tile():
    """Llama 4 (vllm@0.12.0 mllama4.py): the dummy image is max_patches (16) tiles of 336 px stacked 16:1, so 16 tiles
    + a global one, each 24 x 24 patches + a class token through the vision model and 576 // 4 = 144 tokens after the
    pixel shuffle; the budget counts the whole placeholder (Llama4Processor._prompt_split_image: start, 16 rows of
    144 patch tokens + a y separator, <|image|>, 144 global-tile tokens, end)."""
    m = _m("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    vis = m.config["vision_config"]
    patches = (vis["image_size"] // vis["patch_size"]) ** 2
    per_chunk = patches // round(1 / vis["pixel_shuffle_ratio"] ** 2)
    per_item = 1 + 16 * (per_chunk + 1) + 1 + per_chunk + 1
    p, _ = encoder_profile(
        m, era="v1", version=(0, 12, 0), max_num_seqs=1024, max_num_batched_tokens=8192, max_model_len=32768,
        chunked_prefill=True, tp=1, dtype_bytes=2,
    )  # fmt: skip
    assert p is not None and p.tokens_per_item == per_item
    assert p.encoder_tokens_per_item == 17 * (patches + 1)
    assert p.items == 8192 // per_item


@pytest.mark.parametrize("max_patches", [0, -5, 10**12])
def test_encoder_profile_llama4_refuses_an_absurd_tile_count(max_patches):
    """A ``max_patches`` that is no tile count (0, negative) or absurdly many (10^12 tiles made a 4.7 billion GiB
    activation) is not profiled: the notes say so, as for an unknown Qwen-VL max_pixels."""
    m = _m("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    p, notes = encoder_profile(
        m, era="v1", version=(0, 12, 0), max_num_seqs=1024, max_num_batched_tokens=8192, max_model_len=32768,
        chunked_prefill=True, tp=1, dtype_bytes=2, mm_processor_kwargs={"max_patches": max_patches},
    )  # fmt: skip
    assert p is None and any(f"max_patches {max_patches!r} is not a tile count" in n for n in notes)
    ok, _ = encoder_profile(
        m, era="v1", version=(0, 12, 0), max_num_seqs=1024, max_num_batched_tokens=8192, max_model_len=32768,
        chunked_prefill=True, tp=1, dtype_bytes=2, mm_processor_kwargs={"max_patches": 4},
    )  # fmt: skip
    vis = m.config["vision_config"]
    assert ok is not None and ok.encoder_tokens_per_item == 5 * (
        (vis["image_size"] // vis["patch_size"]) ** 2 + 1
    )


def test_multimodal_v0_keeps_chunked_prefill_off_and_profiles_the_encoder():
    """gt-219 (V0 ~0.6.6, Llama-3.2-11B-Vision, max_model_len 65,536, 128 sequences): the activation the log printed
    (36.63 GiB) is the vision encoder over 128 dummy images, not the text forward."""
    m = _m("meta-llama/Llama-3.2-11B-Vision-Instruct")
    d = plan_vllm_detailed(
        VllmSettings(version="0.6.6", max_model_len=65536, max_num_seqs=128, enforce_eager=True),
        m,
        int(79.22 * GiB),
        gpu_name="NVIDIA H100 80GB HBM3",
        compute_capability="9.0",
    )
    assert d.plan.max_num_batched_tokens == 65536  # chunked prefill off for multimodal V0
    assert d.plan.activation_bytes / GiB == pytest.approx(36.63, rel=0.05)
    assert any("128 image(s)" in a for a in d.plan.assumptions)


@pytest.mark.parametrize(
    "text,expected",
    [
        ('{"image": 2, "audio": 0}', {"image": 2, "audio": 0}),
        ("image=2,audio=0", {"image": 2, "audio": 0}),
        ("", {}),
    ],
)
def test_limit_mm_per_prompt_forms(text, expected):
    assert parse_mm_limits(text) == expected


def test_tgi_24_token_defaults_come_from_the_warmup_batch():
    """TGI 2.4 without PREFILL_CHUNKING: max_total_tokens is the warmup batch (max_batch_prefill_tokens = min(4096,
    max_position_embeddings)) and max_input_tokens one less -- no '`max_input_tokens`(131072) must be <
    `max_total_tokens`(131072)' false alarm for Llama-3.1-8B; with PREFILL_CHUNKING=1 the chunking formula applies."""
    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.engines import parse_command_line
    from kvlint.memory.tgi import plan_tgi_detailed

    m = _m("meta-llama/Llama-3.1-8B")
    argv = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B"]
    s = parse_command_line(argv, "2.4.1")
    s.version = "2.4.1"
    d = plan_tgi_detailed(
        s, m, int(79.26 * GiB), gpus=1, gpu_name="NVIDIA A100-SXM4-80GB", compute_capability="8.0"
    )
    assert (d.max_batch_prefill_tokens, d.max_total_tokens, d.max_input_tokens) == (4096, 4096, 4095)
    s.env["PREFILL_CHUNKING"] = "1"
    dc = plan_tgi_detailed(
        s, m, int(79.26 * GiB), gpus=1, gpu_name="NVIDIA A100-SXM4-80GB", compute_capability="8.0"
    )
    assert dc.max_total_tokens > 4096
    r = CliRunner().invoke(
        main, ["plan", "--offline", "--accelerator", "a100-80gb", "--engine-version", "2.4.1", "--", *argv]
    )
    assert "KV601" not in r.output and "KV602" not in r.output, r.output


def test_larger_scheduler_defaults_note_explains_fewer_kv_tokens_on_h100():
    """Nemotron-3 Ultra FP8-block at TP 8 (the KServe llmisvc sample): vLLM's defaults on an H100 (8192/1024,
    ``EngineArgs.get_batch_defaults``) sample 1024 dummy rows in the profile run against 256 on an A100-80GB, so
    the H100 plans fewer KV tokens; the plan says so, by the activation difference, and not once the user sets
    the limits."""
    m = _m("RedHatAI/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8-block")

    def plan(total: float, name: str, cc: str, **kw):
        s = VllmSettings(version="0.24.0", tensor_parallel_size=8, kv_cache_dtype="fp8", **kw)
        return plan_vllm_detailed(s, m, int(total * GiB), gpu_name=name, compute_capability=cc)

    h100 = plan(79.19, "NVIDIA H100 80GB HBM3", "9.0")
    a100 = plan(79.25, "NVIDIA A100-SXM4-80GB", "8.0")
    small = plan(79.19, "NVIDIA H100 80GB HBM3", "9.0", max_num_batched_tokens=2048, max_num_seqs=256)
    assert h100.plan.capacity_tokens < a100.plan.capacity_tokens  # the surprise the note explains
    notes = [n for n in h100.plan.assumptions if "larger scheduler defaults" in n]
    assert len(notes) == 1
    delta = h100.plan.activation_bytes - small.plan.activation_bytes
    assert delta > 0 and f"{delta / GiB:.2f} GiB/GPU less KV" in notes[0]
    assert "--max-num-batched-tokens 2048 --max-num-seqs 256" in notes[0]
    assert small.plan.capacity_tokens > h100.plan.capacity_tokens
    assert not any("larger scheduler defaults" in n for n in small.plan.assumptions)
    assert not any("larger scheduler defaults" in n for n in a100.plan.assumptions)
