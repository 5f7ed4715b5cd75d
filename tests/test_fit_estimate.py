"""vLLM's "estimated maximum model length" (kvlint.memory.vllm.fit_check): the largest length whose one request
fits the available KV memory. A max_model_len that fits is its own estimate (no search); one that does not
gets the length where the next token no longer fits. Checked by re-planning at the estimate and one above it,
on the bundled catalogue's models (sources in their entry.json)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kvlint.accelerators import registry
from kvlint.memory.vllm import VllmSettings, plan_vllm_detailed
from kvlint.models import resolve_model

H100 = registry.require("h100-80gb", "test")
KW = {"gpu_name": H100.name, "compute_capability": H100.compute_capability}


@pytest.mark.parametrize(
    "ref",
    [
        "meta-llama/Llama-3.1-8B",  # one full-attention group
        "google/gemma-3-12b-it",  # sliding + full groups
        "deepseek-ai/DeepSeek-V2-Lite",  # MLA
        "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",  # Mamba hybrid
    ],
)
@pytest.mark.parametrize("version", ["0.6.6", "0.11.0", "0.33.0"])  # V0; V1 without and with the null block
@pytest.mark.parametrize("util", [0.9, 0.42, 0.3])
def test_estimate_is_the_longest_request_that_fits(ref, version, util):
    m = resolve_model(ref, allow_hub=False)
    base = VllmSettings(
        version=version, max_num_batched_tokens=2048, gpu_memory_utilization=util, enforce_eager=True
    )
    derived = plan_vllm_detailed(base, m, H100.memory_bytes, **KW)
    if derived.plan.num_blocks <= 0:
        pytest.skip("no KV cache at all on one H100")
    est = derived.estimated_max_model_len
    if derived.fits:
        assert est == derived.plan.max_model_len
        return
    assert 0 < est < derived.plan.max_model_len
    at = plan_vllm_detailed(replace(base, max_model_len=est), m, H100.memory_bytes, **KW)
    above = plan_vllm_detailed(replace(base, max_model_len=est + 1), m, H100.memory_bytes, **KW)
    assert at.fits and at.estimated_max_model_len == est
    assert not above.fits and above.estimated_max_model_len == est
