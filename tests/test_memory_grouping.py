"""The memory models count identical layers once (kvlint.memory.kv.layer_counts): the per-layer figures they sum
(KV bytes per token, KV-cache groups) must come out as if every layer were visited. Models are the bundled
catalogue's config.json files (sources in their entry.json)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kvlint.memory.kv import kv_bytes_per_token, kv_dtype_bytes, layer_bytes_per_token, layer_counts
from kvlint.memory.vllm import (
    VllmSettings,
    _stage_layer_counts,
    build_groups,
    resolve_startup,
)
from kvlint.models import resolve_model
from kvlint.types import LayerSpec

GiB = 1 << 30

#: one model per layer shape the planners meet: dense, sliding/full, chunked/full, full/cross, MLA, NAS no-op
#: layers, Mamba hybrids with and without no-op layers
SHAPES = [
    "meta-llama/Llama-3.1-8B",
    "google/gemma-3-12b-it",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "meta-llama/Llama-3.2-11B-Vision-Instruct",
    "deepseek-ai/DeepSeek-V3",
    "nvidia/Llama-3_3-Nemotron-Super-49B-v1",
    "nvidia/Nemotron-H-56B-Base-8K",
    "Qwen/Qwen3-Next-80B-A3B-Thinking",
]


def _m(ref: str):
    return resolve_model(ref, allow_hub=False)


def test_layer_counts_keeps_first_occurrence_order_and_multiplicity():
    full = LayerSpec("full", 8, 128, 128)
    sliding = LayerSpec("sliding", 8, 128, 128, window=4096)
    layers = (sliding, full, LayerSpec("sliding", 8, 128, 128, window=4096), sliding, full)
    assert layer_counts(layers) == ((sliding, 3), (full, 2))
    assert layer_counts(list(layers)) == ((sliding, 3), (full, 2))
    assert layer_counts(()) == ()


def test_layer_counts_memo_is_per_tuple_object():
    a = tuple(LayerSpec("full", 8, 128, 128) for _ in range(4))
    b = tuple(LayerSpec("full", 8, 128, 128) for _ in range(2))
    assert layer_counts(a) is layer_counts(a)  # the model's own tuple: counted once
    assert layer_counts(b)[0][1] == 2  # another tuple (even of equal specs) is counted on its own


@pytest.mark.parametrize("ref", SHAPES)
@pytest.mark.parametrize("tp", [1, 2, 8])
@pytest.mark.parametrize("kvd", ["auto", "fp8", "fp8_ds_mla"])
def test_kv_bytes_per_token_equals_the_per_layer_sum(ref, tp, kvd):
    m = _m(ref)
    kb = kv_dtype_bytes(kvd, m.torch_dtype)
    assert kv_bytes_per_token(m, tp, kvd) == sum(layer_bytes_per_token(lay, tp, kb, kvd) for lay in m.layers)


@pytest.mark.parametrize("ref", SHAPES)
@pytest.mark.parametrize("hybrid", [True, False])
def test_groups_do_not_depend_on_layer_order(ref, hybrid):
    """vLLM buckets layers by spec (``get_kv_cache_groups``); the groups of a rank depend on which specs it holds and
    how many, not on their order."""
    m = _m(ref)
    layers = list(m.layers)
    shuffled = layers[:]
    random.Random(7).shuffle(shuffled)
    for tp in (1, 4):
        want = build_groups(layers, tp, 2, "auto", 16, hybrid)
        assert build_groups(shuffled, tp, 2, "auto", 16, hybrid) == want
        assert build_groups(layers[::-1], tp, 2, "auto", 16, hybrid) == want


@pytest.mark.parametrize(
    "ref", ["deepseek-ai/DeepSeek-V3", "google/gemma-3-12b-it", "nvidia/Nemotron-H-56B-Base-8K"]
)
@pytest.mark.parametrize("pp", [1, 2, 3])
@pytest.mark.parametrize("mtp", [0, 2])
def test_stage_counts_are_the_stage_slice_plus_draft_layers_on_the_last_stage(ref, pp, mtp):
    """Each pipeline stage holds its slice of the layers (``get_pp_indices``); MTP layers join the last stage."""
    m = _m(ref)
    s = VllmSettings(
        version="0.11.0",
        pipeline_parallel_size=pp,
        num_speculative_tokens=mtp,
        speculative_method="mtp" if mtp else None,
    )
    cfg = resolve_startup(s, m, 80 * GiB, gpu_name="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    start = 0
    total = Counter[LayerSpec]()
    for stage, n in enumerate(cfg.stage_layers):
        last = stage == pp - 1
        want = Counter(cfg.layers[start : start + n])
        if last:
            want.update(cfg.layers[m.num_layers :])
        assert Counter(dict(_stage_layer_counts(cfg, m.num_layers, start, n, last))) == want
        total.update(want)
        start += n
    assert sum(total.values()) == len(cfg.layers)
    assert (len(cfg.layers) > m.num_layers) == bool(mtp)  # the MTP layers were there to be placed
