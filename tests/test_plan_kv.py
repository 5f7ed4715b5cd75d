"""Pure KV arithmetic (kvlint.memory.kv) and version parsing. Seeds from the capacity-planning literature."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory.kv import kv_bytes_per_token, kv_cache_bytes, kv_dtype_bytes, sequences_memory_bytes
from kvlint.memory.versions import NEWEST_VLLM, fmt_version, parse_version, resolve_version
from kvlint.models import resolve_model

GiB = 1 << 30
MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "plan" / "models"


def test_seed_70b_class_one_sequence_is_10_gib():
    assert kv_cache_bytes(32768, 80, 8, 128, 2) == 10 * GiB


def test_seed_8b_class_16_sequences_with_overhead_is_18_4_gib():
    b = sequences_memory_bytes(8192, 16, 32, 8, 128, 2, overhead=1.15)
    assert b / GiB == pytest.approx(18.4)


def test_kv_dtype_bytes():
    assert kv_dtype_bytes("auto", "bfloat16") == 2
    assert kv_dtype_bytes("auto", "float32") == 4
    assert kv_dtype_bytes("fp8", "bfloat16") == 1
    assert kv_dtype_bytes("fp8_e5m2", "float16") == 1
    assert kv_dtype_bytes("bfloat16", "float32") == 2


def test_llama_8b_bytes_per_token_and_fp8_half():
    m = resolve_model(str(MODELS / "meta-llama--Llama-3.1-8B"), allow_hub=False)
    assert kv_bytes_per_token(m, 1, "auto") == 131072  # 2 x 8 x 128 x 2 x 32 (W1)
    assert kv_bytes_per_token(m, 1, "fp8") == 65536


def test_kv_heads_replicated_when_tp_exceeds_kv_heads():
    m = resolve_model(str(MODELS / "meta-llama--Llama-3.1-70B"), allow_hub=False)
    assert kv_bytes_per_token(m, 4) == 81920  # W3: 2 heads/rank
    assert kv_bytes_per_token(m, 8) == 40960  # 1 head/rank
    assert kv_bytes_per_token(m, 16) == 40960  # replicated: still 1 head/rank, not 0.5


def test_mla_not_split_by_tp():
    m = resolve_model(str(MODELS / "deepseek-ai--DeepSeek-V3"), allow_hub=False)
    assert kv_bytes_per_token(m, 1) == 70272  # W4: 576 x 2 x 61
    assert kv_bytes_per_token(m, 8) == 70272
    assert kv_bytes_per_token(m, 8, "fp8") == 35136
    assert kv_bytes_per_token(m, 8, "fp8_ds_mla") == 656 * 61


def test_qwen25_7b_bytes_per_token():
    assert (
        kv_bytes_per_token(resolve_model(str(MODELS / "Qwen--Qwen2.5-7B"), allow_hub=False), 1) == 57344
    )  # W5


@pytest.mark.parametrize(
    "text,expected,assumed",
    [
        ("0.11.0", (0, 11, 0), False),
        ("v0.8.5.post1", (0, 8, 5), False),
        ("0.15.2rc1.dev93", (0, 15, 2), False),
        ("~0.7", (0, 7, 0), False),
        ("0.10.1.1", (0, 10, 1), False),
        ("0.11.0+cu130", (0, 11, 0), False),
        ("0.10.1.1+nv25.11", (0, 10, 1), False),
        ("0.1.dev8168", (0, 34, 0), True),  # setuptools-scm fallback of an untagged source build
        (None, (0, 34, 0), True),
        ("latest", (0, 34, 0), True),
        ("sha256:abc", (0, 34, 0), True),
    ],
)
def test_versions(text, expected, assumed):
    v, a = resolve_version(text)
    assert (tuple(v), a) == (expected, assumed)
    assert tuple(parse_version(text)) == expected
    assert NEWEST_VLLM == "0.34.0"


@pytest.mark.parametrize(
    "text,lower,higher",
    [
        ("0.15.2rc1.dev93", (0, 15, 1), (0, 15, 2)),  # a dev build before 0.15.2, not 0.15.2 itself
        ("0.10.1.1", (0, 10, 1), (0, 10, 2)),  # fourth component: after 0.10.1, before 0.10.2
        ("v0.8.5.post1", (0, 8, 5), (0, 8, 6)),
        ("0.11.0+cu130", (0, 10, 2), (0, 11, 1)),  # local label ignored: equals 0.11.0
    ],
)
def test_versions_order_pep440(text, lower, higher):
    v = parse_version(text)
    assert lower <= v < higher
    assert not (v >= higher) and v != higher
    assert fmt_version(v) == text.lstrip("v")
