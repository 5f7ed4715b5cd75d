"""vLLM >= 0.17.0 masks top-k/top-p with a Triton kernel in the profile's dummy sampler (the ``v1_triton`` path).

Source: ``vllm@0.17.0`` and ``vllm@0.20.0:vllm/v1/sample/ops/topk_topp_sampler.py::apply_top_k_top_p`` (Triton from
8 rows, in place; the 0.16.0 wheel has no ``topk_topp_triton.py``), vllm-project/vllm#33538. Ground truth: gt-326
(vLLM 0.17.0, Qwen2.5-3B-Instruct in fp16, 256 dummy requests), which kvlint planned 5.5 % short of the printed KV
cache while it priced the sampler as the PyTorch sort.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvlint.accelerators import lookup
from kvlint.memory import calibration as cal
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model

GiB = 1 << 30
ROOT = Path(__file__).resolve().parents[1]
QWEN_VOCAB = 151936


def test_the_native_path_is_triton_from_0_17_0() -> None:
    v = parse_version
    assert cal.sampler_path("v1", v("0.16.0"), True, (8, 6)) == "v1_native"
    assert cal.sampler_path("v1", v("0.17.0"), True, (8, 6)) == "v1_triton"
    assert cal.sampler_path("v1", v("0.20.2"), True, (9, 0)) == "v1_triton"
    # 0.21.0 on: FlashInfer where its backend runs, the Triton path elsewhere or when the env turns FlashInfer off
    assert cal.sampler_path("v1", v("0.24.0"), True, (9, 0)) == "v1_flashinfer"
    assert cal.sampler_path("v1", v("0.24.0"), True, (7, 5)) == "v1_triton"
    assert cal.sampler_path("v1", v("0.22.0"), True, (9, 0), flashinfer_env=False) == "v1_triton"
    assert cal.sampler_path("v1", v("0.16.0"), True, (9, 0), flashinfer_env=False) == "v1_native"
    # ROCm: is_cuda() is false, so forward_native (forward_hip falls back to it through 0.20.x), and HAS_TRITON
    assert cal.sampler_path("v1", v("0.16.0"), True, None, vendor="amd") == "v1_native"
    assert cal.sampler_path("v1", v("0.20.0"), True, (9, 0), vendor="amd") == "v1_triton"
    assert cal.sampler_path("v1", v("0.24.0"), True, None, vendor="amd") == "v1_triton"
    assert cal.sampler_path("v1", v("0.24.0"), True, None, vendor="amd", flashinfer_env=True) == "v1_triton"
    # TPU / Gaudi samplers are not read: no price is taken for them (kvlint plans no such start-up, KV501)
    for vendor in ("google", "intel"):
        with pytest.raises(ValueError, match="no dummy sampler read"):
            cal.sampler_path("v1", v("0.20.0"), True, None, vendor=vendor)


def test_triton_sampler_keeps_four_logit_sized_tensors_not_a_sort() -> None:
    rows = 256
    native = cal.activation_bytes("v1_native", rows, 2048, QWEN_VOCAB, 2048, 11008, 1, 2)
    triton = cal.activation_bytes("v1_triton", rows, 2048, QWEN_VOCAB, 2048, 11008, 1, 2)
    logits_fp32 = rows * QWEN_VOCAB * 4
    # the forward output and the sampled rows' hidden states, both paths alike
    held = (2048 + 2 * rows) * 2048 * 2
    # model-dtype logits + fp32 copy + probs + noise = 3.5 fp32 copies, and the scratch buffer of <= 132 rows
    assert 3.5 * logits_fp32 <= triton - held <= 3.5 * logits_fp32 + cal.TRITON_SAMPLER_SMS * QWEN_VOCAB * 4
    assert triton < native / 2
    # an fp32 model's logits need no fp32 copy
    assert cal.triton_sampler_bytes(rows, QWEN_VOCAB, 2) - cal.triton_sampler_bytes(rows, QWEN_VOCAB, 4) == (
        rows * QWEN_VOCAB * 2
    )


def test_fewer_than_eight_rows_still_sort() -> None:
    """Below 8 rows 0.17.0 - 0.29.x call ``apply_top_k_top_p_pytorch``, the 0.16.0 sort unchanged: its bytes are the
    native path's, counted from the source (2 - 7 rows: PyTorch's full-sort path, 50 B a logit for fp16; one row:
    the segmented sort, 38 B), not the fitted ``K_SAMPLER["v1_native"]`` (38.9 B a logit at every row count)."""
    tokens, hidden = 16, 2048
    for rows in (1, 2, 7):
        got = cal.activation_bytes("v1_triton", rows, tokens, QWEN_VOCAB, hidden, 11008, 1, 2)
        assert got == cal.activation_bytes("v1_native", rows, tokens, QWEN_VOCAB, hidden, 11008, 1, 2), rows
        per_logit = 2 + 4 + 12 + (20 if rows == 1 else 32)
        assert got == rows * QWEN_VOCAB * per_logit + (tokens + 2 * rows) * hidden * 2, rows
    # the full sort's scratch makes 7 sorted rows dearer than 8 masked by the Triton kernel
    assert cal.triton_sampler_bytes(8, QWEN_VOCAB, 2) < cal.triton_sampler_bytes(7, QWEN_VOCAB, 2)


def test_triton_path_keeps_the_forward_output_and_sampled_hidden_states() -> None:
    """``profile_run`` holds the forward pass's ``tokens x hidden`` output until after ``_dummy_sampler_run``, which
    holds the sampled rows' hidden states and their ``rand_like`` copy (``vllm@0.17.0``/``vllm@0.29.0:
    vllm/v1/worker/gpu_model_runner.py``): the Triton path counts them as the native path does."""
    rows, tokens, hidden = 256, 8192, 4096
    bare = cal.triton_sampler_bytes(rows, QWEN_VOCAB, 2)
    held = cal.triton_sampler_bytes(rows, QWEN_VOCAB, 2, tokens=tokens, hidden=hidden)
    assert held - bare == (tokens + 2 * rows) * hidden * 2
    assert cal.activation_bytes("v1_triton", rows, tokens, QWEN_VOCAB, hidden, 0, 1, 2) == held
    # from 0.30.0 the kernel runs below 8 rows too, with the same tensors held
    small = cal.triton_sampler_bytes(4, QWEN_VOCAB, 2, all_rows=True, tokens=tokens, hidden=hidden)
    assert small - cal.triton_sampler_bytes(4, QWEN_VOCAB, 2, all_rows=True) == (tokens + 8) * hidden * 2


def _plan_gt326(version: str) -> tuple[int, int]:
    case = {c["id"]: c for c in yaml.safe_load((ROOT / "bench/groundtruth/cases.yaml").read_text())}["gt-326"]
    model = resolve_model("Qwen/Qwen2.5-3B", allow_hub=False)
    gpu = lookup("rtx-3090")
    assert gpu is not None
    settings = VllmSettings(version=version, max_model_len=case["max_model_len"], dtype="float16")
    d = plan_vllm_detailed(
        settings, model, gpu.memory_bytes, gpu_name=gpu.name, compute_capability=gpu.compute_capability
    )
    return d.plan.kv_cache_bytes, d.plan.activation_bytes


def test_gt326_kv_within_three_percent_of_the_printed_pool() -> None:
    """gt-326 printed 14.74 GiB of KV cache at 0.17.0 on a 24 GB GeForce (our reading of the GPU); the PyTorch sort's
    factor put the sampler at 1.41 GiB and the pool 5.5 % short."""
    case = {c["id"]: c for c in yaml.safe_load((ROOT / "bench/groundtruth/cases.yaml").read_text())}["gt-326"]
    printed = case["figures"]["kv_cache_gib"] * GiB
    kv17, act17 = _plan_gt326("0.17.0")
    kv16, act16 = _plan_gt326("0.16.0")
    assert abs(kv17 - printed) / printed < 0.03, kv17 / GiB
    # the same start-up one release earlier sorts: more activation, less KV, by the same bytes
    assert act16 - act17 == kv17 - kv16 > 0.5 * GiB


def test_rocm_plan_prices_the_triton_sampler_from_0_17_0() -> None:
    """An MI300X start-up at 0.20.0 runs the same Triton masking as an H100 with FlashInfer's sampler off: the same
    activation, below 0.16.0's sort on the same MI300X."""
    model = resolve_model("meta-llama/Llama-3.1-8B", allow_hub=False)
    mi300x, h100 = lookup("mi300x"), lookup("h100")
    assert mi300x is not None and mi300x.vendor == "amd" and h100 is not None

    def act(version: str, gpu, flashinfer: bool | None = None) -> int:
        settings = VllmSettings(
            version=version, max_model_len=8192, max_num_seqs=256, flashinfer_sampler=flashinfer
        )
        d = plan_vllm_detailed(
            settings, model, gpu.memory_bytes, gpu_name=gpu.name, compute_capability=gpu.compute_capability
        )
        return d.plan.activation_bytes

    assert act("0.20.0", mi300x) == act("0.20.0", h100, flashinfer=False)
    assert act("0.16.0", mi300x) == act("0.16.0", h100, flashinfer=False) > act("0.20.0", mi300x)
