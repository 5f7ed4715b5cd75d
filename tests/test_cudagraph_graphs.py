"""The CUDA-graph term follows the graphs vLLM captures (kvlint.memory.calibration.cudagraph_count), and gpt-oss's
own largest capture size (kvlint.memory.vllm.model_capture_size). gt-359 (vLLM 0.19.0, gpt-oss-20b on an H100,
fixtures/logs/gt-359.log) printed 'Profiling CUDA graph memory: PIECEWISE=83 (largest=1024), FULL=83 (largest=1024)'
and a 1.84 GiB pool, where kvlint priced 512 tokens of capture width (0.39 GiB)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kvlint.memory import calibration as cal
from kvlint.memory.versions import parse_version
from kvlint.memory.vllm import VllmSettings, model_capture_size, plan_vllm_detailed
from kvlint.models import resolve_model

ROOT = Path(__file__).resolve().parent.parent
LOG = (ROOT / "fixtures" / "logs" / "gt-359.log").read_text(encoding="utf-8")
CASE = next(
    c
    for c in yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text())
    if c["id"] == "gt-359"
)
GiB = 1 << 30


def _printed_counts(log: str) -> dict[str, tuple[int, int]]:
    m = re.search(r"Profiling CUDA graph memory: (.*)", log)
    assert m
    return {k: (int(n), int(top)) for k, n, top in re.findall(r"(\w+)=(\d+) \(largest=(\d+)\)", m.group(1))}


def test_gpt_oss_raises_the_largest_capture_size_by_release() -> None:
    """GptOssForCausalLMConfig.verify_and_update_config: 1,024 (0.10.1.1, 0.10.2), 992 (0.11.0), 1,024 from 0.11.1;
    no other architecture, and no release before gpt-oss was served."""
    oss = ["GptOssForCausalLM"]
    assert model_capture_size(oss, parse_version("0.19.0")) == 1024
    assert model_capture_size(oss, parse_version("0.10.1.1")) == 1024
    assert model_capture_size(oss, parse_version("0.11.0")) == 992
    assert model_capture_size(oss, parse_version("0.11.1")) == 1024
    assert model_capture_size(oss, parse_version("0.10.0")) is None
    assert model_capture_size(["LlamaForCausalLM"], parse_version("0.19.0")) is None


def test_graph_count_is_the_one_the_log_printed() -> None:
    """The capture list and FULL_AND_PIECEWISE give gt-359's printed counts for its flags (max_num_seqs 1,024 by
    default on an H100, 8,192 batched tokens), and the stepped list's 51 sizes at 512."""
    printed = _printed_counts(LOG)
    v = parse_version("0.19.0")
    top = cal.cudagraph_capture_tokens(1024, 1, 8192, model_capture_size(["GptOssForCausalLM"], v))
    assert top == printed["PIECEWISE"][1] == printed["FULL"][1]
    assert (
        cal.cudagraph_count(top, 1024, 1, v, model_list=True) == printed["PIECEWISE"][0] + printed["FULL"][0]
    )
    assert len(cal.capture_sizes(512)) == 51  # "PIECEWISE=51 (largest=512), FULL=51" in the same sweep's logs
    assert len(cal.capture_sizes(512, stepped=False)) == 67  # 0.10.x - 0.11.0's list: "from 67 to 83"
    # before 0.11.0 the default mode was PIECEWISE: one graph per size
    assert cal.cudagraph_count(512, 1024, 1, parse_version("0.10.2")) == 67
    # FULL decode graphs only up to max_num_seqs x decode_query_len
    assert cal.cudagraph_count(512, 100, 1, v) == 51 + len([s for s in cal.capture_sizes(512) if s <= 100])


def test_gt359_plan_prices_the_graphs_vllm_captured() -> None:
    """kvlint's plan for gt-359 counts 166 graphs of 24 layers; its graph term grows with the graph count over the
    same model at the 512 default (51 + 51 graphs), and is no longer below a third of the printed pool."""
    model = resolve_model(str(ROOT / "fixtures" / "plan" / "models" / "openai--gpt-oss-20b"), allow_hub=False)
    settings = VllmSettings(
        version="0.19.0",
        max_model_len=CASE["max_model_len"],
        gpu_memory_utilization=CASE["gpu_memory_utilization"],
    )
    total = int(CASE["gpu"]["total_gib_reported"] * GiB)
    d = plan_vllm_detailed(settings, model, total, gpu_name="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    # 0.19.0 does not deduct the estimate; the plan's config still carries the capture the term is priced at
    cg = cal.cudagraph_bytes(max(d.stage_layers), d.plan.max_num_seqs, 1, d.plan.max_num_batched_tokens,
                             model_capture_size(model.architectures, parse_version("0.19.0")),
                             parse_version("0.19.0"))  # fmt: skip
    default = cal.cudagraph_bytes(max(d.stage_layers), d.plan.max_num_seqs, 1, d.plan.max_num_batched_tokens)
    base = cal.CG_BASE_GIB * GiB
    assert (cg - base) / (default - base) == pytest.approx(166 / 102, rel=1e-6)
    printed = CASE["figures"]["cudagraph_gib"]
    assert cg / GiB > printed / 3


def test_sampler_warmup_oom_says_whether_the_kv_cache_was_sized() -> None:
    """_dummy_sampler_run runs in profile_run (before the KV cache is sized) and after the CUDA-graph capture; its
    OOM line is the same. gt-359's came after 'Available KV cache memory'; the line alone is the profile's."""
    from kvlint.verify.logparse import parse_log

    after = parse_log(LOG).failure
    assert after["kind"] == "oom_during_sampler_warmup" and after["after_kv_sizing"] is True
    line = next(x for x in LOG.splitlines() if "warming up sampler" in x)
    before = parse_log(line + "\n").failure
    assert before["kind"] == "oom_during_sampler_warmup" and before["after_kv_sizing"] is False
