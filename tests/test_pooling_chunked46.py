"""vLLM turns chunked prefill and prefix caching off by default for a pooling model whose pooling type cannot pool
a prompt in chunks (engine46; docs/engine-memory-model.md §1.15), which raises ``max_num_batched_tokens`` to
``max_model_len`` (``EngineArgs`` post-processing) and with it the profile's activation peak.

Source: ``ModelConfig.is_chunked_prefill_supported`` (``vllm@0.12.0`` … ``0.34.0:vllm/config/model.py``; off for
MEAN/CLS sequence pooling or STEP token pooling from 0.14.0, for anything but LAST before), before 0.12.0
``EngineArgs._set_default_args_v1`` (0.10.2, 0.11.0) / ``get_chunked_prefill_prefix_caching_defaults`` (0.11.1);
the pooling type from ``--pooler-config`` or the class's ``@default_pooling_type``. kvlint took every pooling
model as chunked (last-token pooling).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvlint.engines import parse_command_line
from kvlint.memory.pooling import vllm_pooling_chunked_prefill
from kvlint.memory.versions import parse_version as v
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed, resolve_startup, settings_from_config
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "fixtures" / "plan" / "models"
GiB = 1 << 30
H100 = {"gpu_name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
H100_TOTAL = int(79.18 * GiB)
E5 = "intfloat/e5-mistral-7b-instruct"
LONG = 32768


def _startup(settings: VllmSettings, model):  # type: ignore[no-untyped-def]
    return resolve_startup(settings, model, H100_TOTAL, **H100)


@pytest.mark.parametrize("version", ["0.11.0", "0.12.0", "0.20.0", "0.34.0"])
def test_mean_pooling_turns_chunked_prefill_off(version: str) -> None:
    model = resolve_model(E5, allow_hub=False)
    last = VllmSettings(version=version, max_model_len=LONG)
    mean = last.changed(pooler_config='{"pooling_type": "MEAN"}')
    lc, mc = _startup(last, model), _startup(mean, model)
    assert lc.chunked_prefill and not mc.chunked_prefill
    assert lc.max_num_batched_tokens < LONG
    assert mc.max_num_batched_tokens == max(LONG, lc.max_num_batched_tokens)
    lp = plan_vllm_detailed(last, model, H100_TOTAL, **H100).plan
    mp = plan_vllm_detailed(mean, model, H100_TOTAL, **H100).plan
    assert mp.activation_bytes > lp.activation_bytes and mp.kv_cache_bytes < lp.kv_cache_bytes
    assert any(
        "chunked prefill and prefix caching off by default" in n and "MEAN pooling" in n
        for n in mp.assumptions
    )
    assert any(
        "chunked prefill and prefix caching on by default" in n and "LAST pooling" in n
        for n in lp.assumptions
    )
    # the flag given wins over the default
    forced = _startup(mean.changed(enable_chunked_prefill=True), model)
    assert forced.chunked_prefill and forced.max_num_batched_tokens == lc.max_num_batched_tokens


@pytest.mark.parametrize(
    ("arch", "version", "chunked"),
    [
        ("Qwen2ForRewardModel", "0.12.0", False),  # ALL: not LAST
        ("Qwen2ForRewardModel", "0.14.0", True),  # ALL is a token pooling type, which chunks
        ("Qwen2ForProcessRewardModel", "0.14.0", False),  # STEP
        ("GritLM", "0.20.0", False),  # MEAN
        ("MistralModel", "0.20.0", True),
    ],
)
def test_class_default_pooling_type(arch: str, version: str, chunked: bool) -> None:
    assert vllm_pooling_chunked_prefill(v(version), (arch,), {})[0] is chunked


def test_cls_and_step_and_sequence_keys() -> None:
    assert not vllm_pooling_chunked_prefill(
        v("0.20.0"), ("MistralModel",), {}, pooler_config={"pooling_type": "CLS"}
    )[0]
    assert not vllm_pooling_chunked_prefill(
        v("0.20.0"), ("MistralModel",), {}, pooler_config='{"seq_pooling_type": "MEAN"}'
    )[0]
    # 0.12.0 - 0.13.x: ALL is refused too; from 0.14.0 only STEP among the token types
    assert not vllm_pooling_chunked_prefill(
        v("0.13.0"), ("MistralModel",), {}, pooler_config='{"pooling_type": "ALL"}'
    )[0]
    assert vllm_pooling_chunked_prefill(
        v("0.14.0"), ("MistralModel",), {}, pooler_config='{"pooling_type": "ALL"}'
    )[0]
    assert vllm_pooling_chunked_prefill(v("0.14.0"), ("MistralModel",), {}, pooler_config="not json")[0]


def test_bidirectional_config_is_not_chunked() -> None:
    chunked, why = vllm_pooling_chunked_prefill(v("0.20.0"), ("Qwen2Model",), {"is_causal": False})
    assert not chunked and "is_causal" in why


def test_no_chunked_prefill_is_kept_for_a_pooling_model_before_0_11_1() -> None:
    """Up to 0.11.0 V1 forces chunked prefill on for generative models only; a pooling runner keeps the flag
    (``vllm@0.10.2:vllm/engine/arg_utils.py::EngineArgs._set_default_args_v1``)."""
    model = resolve_model(E5, allow_hub=False)
    s = VllmSettings(version="0.10.2", max_model_len=LONG, enable_chunked_prefill=False)
    sc = _startup(s, model)
    assert not sc.chunked_prefill and sc.max_num_batched_tokens >= LONG


def test_flags_are_read_from_the_command() -> None:
    sc = parse_command_line(
        ["vllm", "serve", E5, "--pooler-config", '{"pooling_type": "MEAN", "normalize": true}'], "0.20.0"
    )
    assert json.loads(settings_from_config(sc).pooler_config or "{}")["pooling_type"] == "MEAN"
    old = parse_command_line(
        ["vllm", "serve", E5, "--override-pooler-config", '{"pooling_type": "CLS"}'], "0.10.2"
    )
    assert json.loads(settings_from_config(old).pooler_config or "{}")["pooling_type"] == "CLS"


def test_reward_model_plan_follows_the_release() -> None:
    """Qwen2ForRewardModel (``ALL``): chunked off at 0.12.0, on at 0.14.0, so its batch is the long one at 0.12.0."""
    model = replace(
        resolve_model(str(MODELS / "Qwen--Qwen2.5-7B"), allow_hub=False),
        architectures=("Qwen2ForRewardModel",),
    )
    a = _startup(VllmSettings(version="0.12.0", max_model_len=LONG), model)
    b = _startup(VllmSettings(version="0.14.0", max_model_len=LONG), model)
    assert not a.chunked_prefill and b.chunked_prefill
    assert a.max_num_batched_tokens == max(LONG, b.max_num_batched_tokens)
