"""TGI: parsing, defaults and texts by version, warmup arithmetic, KV601-KV604 (engine-memory-model.md §2, §4)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.engines import parse_command_line
from kvlint.memory.tgi import (
    FLASHINFER_WORKSPACE_BYTES,
    default_dtype,
    find_num_shards,
    plan_tgi,
    plan_tgi_detailed,
    resolve_attention,
    tgi_version,
    wiggle_room,
)
from kvlint.memory.vllm import PlanError
from kvlint.models import resolve_model
from kvlint.pipeline import Options, run_check
from kvlint.rules.runner import check_container

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

#: The rules the TGI checks used to report together (engine-specific and resolution rules).
TGI_RULES = {
    "KV101",
    "KV107",
    "KV401",
    "KV402",
    "KV501",
    "KV502",
    "KV503",
    "KV601",
    "KV602",
    "KV603",
    "KV604",
}


def check_tgi(cr, opts):
    """The TGI container's diagnostics of :data:`TGI_RULES`, from the rule runner."""
    return [d for d in check_container(cr, opts) if d.rule in TGI_RULES]


FIX = Path(__file__).resolve().parent.parent / "fixtures"
MODEL_DIRS = (str(FIX / "tgi" / "models"), str(FIX / "plan" / "models"))


def _model(ref: str):
    return resolve_model(ref, model_dirs=MODEL_DIRS, allow_hub=False)


def _cmd(*args: str, version: str = "3.3.0"):
    s = parse_command_line(["text-generation-launcher", *args], version)
    s.version = version
    return s


def test_parse_command_line_complete() -> None:
    s = _cmd(
        "--model-id", "m/x", "--num-shard", "2", "--max-input-length", "100", "--cuda-memory-fraction", "0.8"
    )
    assert s.engine == "tgi" and s.model is not None and s.model.value == "m/x"
    assert (
        s.get("num_shard") == 2 and s.get("max_input_tokens") == 100 and s.get("cuda_memory_fraction") == 0.8
    )


@pytest.mark.parametrize(
    "version,wiggle,subtractive,era",
    [
        ("3.3.7", 0.90, True, "tgi-3.3"),
        ("3.2.0", 0.93, True, "tgi-3.1"),
        ("3.0.1", 0.95, True, "tgi-3.0"),
        ("2.4.1", 0.90, False, "tgi-2.4"),
        ("2.4.0", 0.90, False, "tgi-2.4"),
        ("2.3", 0.95, False, "tgi-2.3"),
        ("2.2.0", 0.95, False, "tgi-2.0"),
        ("2.0.2", 0.95, False, "tgi-2.0"),
        ("1.4.1", 0.95, False, "tgi-1.x"),
        ("1.4.0", 1.0, False, "tgi-1.x"),
    ],
)
def test_wiggle_room_by_version(version: str, wiggle: float, subtractive: bool, era: str) -> None:
    # §2.3: none before v1.4.1, 0.95 hard-coded in FlashCausalLM.warmup from v1.4.1 (0d794af6, #1428) to v2.2.0
    # (multiplies free), 0.95 (v2.3.0-v2.3.1, the TGI_WIGGLE_ROOM default, multiplies free), 0.90 (v2.4,
    # multiplies free), 0.95 (v3.0), 0.93 (v3.1-3.2), 0.90 (>= v3.3)
    assert wiggle_room(tgi_version(version)[0]) == (wiggle, subtractive, era)


def test_v2_4_0_launcher_still_sets_the_token_limits() -> None:
    # tgi@v2.4.0:launcher/src/main.rs::main defaults max_input_tokens = min(max_position_embeddings, 4096) - 1,
    # max_total_tokens = that + 1 and max_batch_prefill_tokens = max_input_tokens + 50, as v2.0-v2.3 did; from
    # v2.4.1 (commit 0c9b6cdd, #2673) the limits are inferred at warmup and the prefill default is
    # min(4096, max_position_embeddings). The printed "Default `max_batch_prefill_tokens` to 10049" of gt-234 is
    # the v2.4.0 rule for --max-input-tokens 9999.
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("a100-80gb").memory_bytes
    cap = min(m.max_position_embeddings, 4096)
    old = plan_tgi_detailed(_cmd("--model-id", "x", version="2.4.0"), m, total, gpus=1)
    assert (old.max_input_tokens, old.max_total_tokens, old.max_batch_prefill_tokens) == (
        cap - 1,
        cap,
        cap - 1 + 50,
    )
    new = plan_tgi_detailed(_cmd("--model-id", "x", version="2.4.1"), m, total, gpus=1)
    assert new.max_batch_prefill_tokens == min(4096, m.max_position_embeddings)
    user = plan_tgi_detailed(
        _cmd("--model-id", "x", "--max-input-tokens", "9999", version="2.4.0"), m, total, gpus=1
    )
    assert user.max_batch_prefill_tokens == 9999 + 50


def test_a_series_tag_is_read_as_the_series_newest_release() -> None:
    """TGI's image workflow tags every release MAJOR.MINOR too (build.yaml, ``pattern={{major}}.{{minor}}``), so
    ``text-generation-inference:2.4`` pulls 2.4.1, whose launcher infers the token limits at warmup; 2.4.0's
    fixed defaults are not what that image runs. A patch release stays itself."""
    from kvlint.memory.tgi import SERIES_NEWEST, series_release

    assert series_release("2.4") == (2, 4, 1) and series_release("2.3") == (2, 3, 1)
    assert series_release("2.4.0") is None and series_release("latest") is None
    assert series_release("9.9") is None  # a series the table does not know: read as written
    assert all(k == v[:2] for k, v in SERIES_NEWEST.items())
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("a100-80gb").memory_bytes
    series = plan_tgi_detailed(_cmd("--model-id", "x", version="2.4"), m, total, gpus=1)
    newest = plan_tgi_detailed(_cmd("--model-id", "x", version="2.4.1"), m, total, gpus=1)
    first = plan_tgi_detailed(_cmd("--model-id", "x", version="2.4.0"), m, total, gpus=1)
    assert series.version == (2, 4, 1)
    assert (
        series.max_batch_prefill_tokens == newest.max_batch_prefill_tokens != first.max_batch_prefill_tokens
    )
    assert series.plan.kv_cache_bytes == newest.plan.kv_cache_bytes
    assert any("names a release series" in a and "2.4.1" in a for a in series.plan.assumptions)
    assert not any("names a release series" in a for a in newest.plan.assumptions)


def test_version_assumed_for_latest() -> None:
    assert tgi_version("latest")[1] is True and tgi_version("sha-293b8125-rocm")[1] is True


def test_default_dtype_per_model() -> None:
    llama = _model("meta-llama/Llama-3.1-8B")  # config says bfloat16, TGI default float16 (get_model)
    assert llama.torch_dtype == "bfloat16" and default_dtype(llama, None, None)[0] == "float16"
    assert default_dtype(llama, "gptq", None)[0] == "float16"
    assert default_dtype(llama, None, "bfloat16")[0] == "bfloat16"


def test_default_dtype_reason_says_whether_config_agrees() -> None:
    """The float16 default is worded as agreeing with config.json when it says float16 (Llama-2), as
    overriding it when it says another dtype (Llama-3.1: bfloat16), and as a default when it says none."""
    llama2 = _model("meta-llama/Llama-2-7b-hf")
    assert llama2.torch_dtype == "float16"
    dtype, why = default_dtype(llama2, None, None)
    assert dtype == "float16"
    assert "even though" not in why and "not config.json" not in why
    assert "same as config.json's float16" in why
    llama31 = _model("meta-llama/Llama-3.1-8B")
    dtype, why = default_dtype(llama31, None, None)
    assert dtype == "float16" and "not config.json's bfloat16" in why
    dtype, why = default_dtype(dataclasses.replace(llama31, torch_dtype=None), None, None)
    assert dtype == "float16" and "config.json names no torch_dtype" in why


def test_attention_and_block_size() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    assert resolve_attention((3, 3, 0), m, "9.0", {})[0] == "flashinfer"
    assert resolve_attention((3, 3, 0), m, "9.0", {"ATTENTION": "paged"})[0] == "paged"
    d = plan_tgi_detailed(
        _cmd("--model-id", "x"), m, lookup("h100-80gb").memory_bytes, gpus=1, gpu_name="H100"
    )
    assert d.plan.block_size == 1 and d.plan.kv_bytes_per_token == 131072  # §7 W7


@pytest.mark.parametrize(
    "version,cc,env,backend",
    [
        # launcher/src/main.rs::resolve_attention and models/globals.py at each tag (§2.2)
        ((2, 2, 0), "9.0", {}, "paged"),  # no launcher choice before v2.3
        ((2, 2, 0), "9.0", {"ATTENTION": "flashinfer"}, "paged"),  # not read before v2.3
        ((2, 2, 0), "9.0", {"FLASH_DECODING": "1"}, "flashdecoding"),  # v2.1.1-v2.2 switch
        ((2, 3, 0), "9.0", {}, "flashinfer"),  # the launcher's default from v2.3.0
        ((2, 3, 1), "8.9", {}, "flashinfer"),
        ((2, 4, 0), "9.0", {"ATTENTION": "paged"}, "paged"),
    ],
)
def test_attention_default_by_release(version, cc, env, backend) -> None:
    m = _model("meta-llama/Llama-3.1-8B")  # head_dim 128, llama: flashinfer unless forced
    assert resolve_attention(version, m, cc, env)[0] == backend


def test_attention_gemma2_forced_until_2_4() -> None:
    # v2.3.0/v2.3.1 force gemma2 off flashinfer (v2.3.0: flashdecoding; v2.3.1: by compute capability), v2.4.0 not
    import dataclasses as dc

    m = dc.replace(_model("meta-llama/Llama-3.1-8B"), model_type="gemma2")
    assert resolve_attention((2, 3, 0), m, "7.5", {})[0] == "flashdecoding"
    assert resolve_attention((2, 3, 1), m, "7.5", {})[0] == "paged"
    assert resolve_attention((2, 4, 0), m, "7.5", {})[0] == "flashinfer"


def test_num_shard_from_gpus_and_errors() -> None:
    assert find_num_shards(_cmd("--model-id", "x"), 4)[0] == 4
    assert find_num_shards(_cmd("--model-id", "x", "--num-shard", "2"), 4)[0] == 2
    with pytest.raises(PlanError, match="cannot be < 1"):
        find_num_shards(_cmd("--model-id", "x", "--num-shard", "0"), 1)


def test_w7_compute_optimal_prefill_default() -> None:
    # §7 W7: H100 × 1, Llama-3.1-8B -> "Default `max_batch_prefill_tokens` to 59870" (±1% for the param count)
    m = _model("meta-llama/Llama-3.1-8B")
    acc = lookup("h100-80gb")
    d = plan_tgi_detailed(_cmd("--model-id", "x"), m, acc.memory_bytes, gpus=1, gpu_name=acc.name)
    assert abs(d.max_batch_prefill_tokens - 59870) / 59870 < 0.01
    assert (
        d.max_total_tokens == 131072 and d.max_input_tokens == 131071
    )  # min(blocks, max_position_embeddings)


def test_token_defaults_v2_0_and_v1() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    d2 = plan_tgi_detailed(_cmd("--model-id", "x", version="2.3.0"), m, total, gpus=1)
    assert (d2.max_input_tokens, d2.max_total_tokens, d2.max_batch_prefill_tokens) == (4095, 4096, 4145)
    d1 = plan_tgi_detailed(_cmd("--model-id", "x", version="1.4.5"), m, total, gpus=1)
    assert (d1.max_input_tokens, d1.max_total_tokens, d1.max_batch_prefill_tokens) == (1024, 2048, 4096)


def test_gt077_max_batch_total_tokens_within_10pct() -> None:
    # gt-077: Llama-2-7b-hf on 1×A10G, prefill 4096 -> "Setting max batch total tokens to 16224"
    m = _model("meta-llama/Llama-2-7b-hf")
    acc = lookup("a10g")
    s = _cmd(
        "--model-id", "x", "--max-batch-prefill-tokens", "4096", "--max-total-tokens", "4096", version="0.9.4"
    )
    p = plan_tgi(s, m, acc.memory_bytes, gpus=1, gpu_name=acc.name, compute_capability=acc.compute_capability)
    assert p.engine == "tgi" and abs(p.capacity_tokens - 16224) / 16224 < 0.10


def test_fraction_lowers_capacity() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    a = plan_tgi(_cmd("--model-id", "x"), m, total, gpus=1)
    b = plan_tgi(_cmd("--model-id", "x", "--cuda-memory-fraction", "0.5"), m, total, gpus=1)
    assert b.capacity_tokens < a.capacity_tokens and b.budget_bytes == int(0.5 * 0.9 * total)


def _container_results(path: Path):
    opts = Options(model_dirs=MODEL_DIRS + ("/nonexistent",), allow_hub=False)
    return [c for c in run_check([str(path)], opts).containers if c.serving.engine == "tgi"], opts


def _replanned(cr, opts):
    """The container analysed again after a test changed its settings (the plan stage runs once per analysis)."""
    from kvlint.pipeline import analyse_serving

    return analyse_serving(cr.workload, cr.container, cr.serving, opts, placement=cr.placement)


def test_b06_reports_exactly_kv601() -> None:
    crs, opts = _container_results(FIX / "tgi" / "b06-tgi-input-total.yaml")
    diags = check_tgi(crs[0], opts)
    assert [d.rule for d in diags] == ["KV601"]
    assert "`max_input_tokens`(8192) must be < `max_total_tokens`(8192)" in diags[0].message  # v2.4.1+ text
    assert diags[0].loc is not None and diags[0].loc.line == 21  # the MAX_INPUT_TOKENS env entry


def test_kv601_text_v2_0() -> None:
    crs, opts = _container_results(FIX / "tgi" / "b06-tgi-input-total.yaml")
    crs[0].serving.version = "2.0.4"
    msg = check_tgi(_replanned(crs[0], opts), opts)[0].message
    assert "`max_input_tokens must be < `max_total_tokens`" in msg


def test_kv602_on_v2_without_chunking() -> None:
    crs, opts = _container_results(FIX / "tgi" / "b06-tgi-input-total.yaml")
    s = crs[0].serving
    s.version = "2.3.0"
    from kvlint.types import Value

    s.flags["max_total_tokens"] = Value(8193, s.flags["max_total_tokens"].loc)
    s.flags["max_batch_prefill_tokens"] = Value(4096, None)
    rules = [d.rule for d in check_tgi(_replanned(crs[0], opts), opts)]
    assert "KV602" in rules and "KV601" not in rules


def test_kv603_with_verified_remedy() -> None:
    crs, opts = _container_results(FIX / "tgi" / "b06-tgi-input-total.yaml")
    from kvlint.types import Value

    s = crs[0].serving
    s.flags["max_input_tokens"] = Value(199999, None)
    s.flags["max_total_tokens"] = Value(200000, None)
    diags = check_tgi(_replanned(crs[0], opts), opts)
    d = next(x for x in diags if x.rule == "KV603")
    assert "Not enough memory to handle `max_total_tokens=200000`" in d.message
    assert "re-planned: fits" in d.fix


def test_kv604_prefill_warmup_oom_and_remedy() -> None:
    crs, opts = _container_results(FIX / "tgi" / "b06-tgi-input-total.yaml")
    from kvlint.types import Value

    s = crs[0].serving
    s.flags["max_input_tokens"] = Value(4000, None)
    s.flags["max_batch_prefill_tokens"] = Value(60000, None)
    diags = check_tgi(_replanned(crs[0], opts), opts)
    d = next(x for x in diags if x.rule == "KV604")
    assert "Not enough memory to handle 60000 prefill tokens" in d.message
    # the settings were given as options here (Value's source "arg"), so the remedy names the option
    assert "--max-batch-prefill-tokens" in d.fix


def test_gemma2_27b_corpus_plan() -> None:
    crs, opts = _container_results(next((FIX / "tgi").glob("GoogleCloudPlatform*27b-it.yaml")))
    crs[0].model = (
        resolve_model(str(SHARED / "corpus/models/google--gemma-2-27b"), allow_hub=False)
        if (SHARED / "corpus/models/google--gemma-2-27b").exists()
        else crs[0].model
    )
    if crs[0].model is None:
        pytest.skip("gemma-2-27b config not available offline")
    diags = check_tgi(crs[0], opts)
    assert not [d for d in diags if d.severity == "error"]
    assert (
        crs[0].plan is not None and crs[0].plan.dtype == "bfloat16" and crs[0].plan.tensor_parallel_size == 4
    )


def test_sharded_warmup_before_1_4_1_keeps_the_all_reduce_inputs() -> None:
    """TGI < 1.4.1 does not set TORCH_NCCL_AVOID_RECORD_STREAMS=1 for its shards (the launcher does from 1.4.1), so
    the warmup prefill's all-reduce inputs, recordStream-ed on NCCL's stream, stay reserved: (2 x layers + 1) x
    prefill tokens x hidden x dtype bytes per shard, taken from the KV cache. One shard, 1.4.1 and a container that
    sets the variable itself keep none. gt-235 (bench/groundtruth/cases.yaml, Llama-2-70B on 4 x A100-80GB, TGI
    1.0): the printed max batch total tokens falls inside the plan's band with the term and outside without it."""
    import yaml

    from kvlint.memory.tgi import recorded_allreduce_bytes

    m = _model("meta-llama/Llama-2-70b-hf")
    acc = lookup("a100-80gb")
    shape = (2 * m.num_layers + 1) * 4096 * m.hidden_size * 2
    assert recorded_allreduce_bytes(m, 4096, 4, 2, (1, 0, 0), {}) == shape
    assert recorded_allreduce_bytes(m, 4096, 1, 2, (1, 0, 0), {}) == 0
    assert recorded_allreduce_bytes(m, 4096, 4, 2, (1, 4, 1), {}) == 0
    assert recorded_allreduce_bytes(m, 4096, 4, 2, (1, 0, 0), {"TORCH_NCCL_AVOID_RECORD_STREAMS": "1"}) == 0

    def plan(version: str, *extra: str):
        s = _cmd("--model-id", "x", "--num-shard", "4", *extra, version=version)
        return plan_tgi_detailed(
            s, m, acc.memory_bytes, gpus=4, gpu_name=acc.name, compute_capability=acc.compute_capability
        ).plan

    falcon = _model("tiiuae/falcon-40b-instruct")  # attention and MLP in parallel: one all-reduce per layer
    assert falcon.config.get("new_decoder_architecture") or falcon.config.get("parallel_attn")
    assert recorded_allreduce_bytes(falcon, 4096, 2, 2, (1, 4, 0), {}) == (
        (falcon.num_layers + 1) * 4096 * falcon.hidden_size * 2
    )

    old, new = plan("1.0.0"), plan("1.4.1")
    assert old.activation_bytes - new.activation_bytes == shape
    assert any("recordStream" in a for a in old.assumptions)
    assert not any("recordStream" in a for a in new.assumptions)
    # a series tag (the image says 1.4, not which patch): the point estimate of 1.4.1, the low end 1.4.0's term lower
    # (inside what the 0.95 wiggle room of 1.4.1 on multiplies)
    series = plan("1.4")
    assert series.kv_cache_bytes == new.kv_cache_bytes
    assert abs((new.kv_cache_bytes_low - series.kv_cache_bytes_low) - shape * 0.95) <= 2
    assert any("names no patch release" in a for a in series.assumptions)
    cases = yaml.safe_load((FIX.parent / "bench" / "groundtruth" / "cases.yaml").read_text())
    printed = next(c for c in cases if c["id"] == "gt-235")["figures"]["max_batch_total_tokens"]
    assert old.num_blocks_low * old.block_size <= printed <= old.num_blocks_high * old.block_size
    assert new.num_blocks_low * new.block_size > printed  # the same flags without the term: outside the band


def test_warmup_logits_follow_the_lm_head_and_the_log_softmax_of_the_release() -> None:
    """The warmup's prefill logits (every prompt token before TGI 3.0) as TGI computes them: a sharded LM head
    all-gathers the full vocabulary on every shard and returns the transposed view, whose log-softmax holds three
    ``tokens × vocab`` copies (the gathered logits, PyTorch's contiguous copy of the input, the result or its
    ``out=`` temporary); one shard holds the logits and the result (two) before v2.4.0 and the logits alone once
    the log-softmax is taken in place (v2.4.0, #2661). Before this was read kvlint took ``vocab / shards`` in fp16
    plus an fp32 copy on every release (tgi@v1.0.0 utils/layers.py::TensorParallelHead.forward, tgi@v2.4.0
    flash_causal_lm.py::FlashCausalLM.generate_token; PyTorch SoftMax.cpp::log_softmax_out)."""
    from kvlint.memory.tgi import lm_head_gathered, prefill_activation_bytes, prefill_logits_bytes

    m = _model("meta-llama/Llama-2-70b-hf")
    tokens, fp16 = 4096, 2

    def logits(shards: int, v: tuple[int, int, int]) -> int:
        with_logits = prefill_activation_bytes(m, tokens, shards, fp16, True, v)
        return with_logits - prefill_activation_bytes(m, tokens, shards, fp16, False, v)

    full = tokens * m.vocab_size * fp16  # one copy of the gathered logits, bytes per shard
    assert lm_head_gathered(m, 4) and not lm_head_gathered(m, 1)
    assert logits(4, (1, 0, 0)) == logits(4, (2, 4, 0)) == 3 * full  # not a quarter of the vocabulary
    assert logits(1, (1, 0, 0)) == logits(1, (2, 3, 1)) == 2 * full
    assert logits(1, (2, 4, 0)) == full == prefill_logits_bytes(m, tokens, 1, fp16, (3, 3, 0))
    # a vocabulary the shards cannot split: loaded whole on every shard, no gather
    odd = dataclasses.replace(m, vocab_size=32001)
    assert not lm_head_gathered(odd, 4)
    assert prefill_logits_bytes(odd, tokens, 4, fp16, (1, 0, 0)) == 2 * tokens * 32001 * fp16
    # in a whole plan: one shard of Llama-3.1-8B on an H100, the same launcher defaults (4145 prefill tokens) in
    # v2.3.1 and v2.4.0; only the in-place log-softmax differs, by one copy of the logits
    m8, h100 = _model("meta-llama/Llama-3.1-8B"), lookup("h100-80gb")
    d231, d240 = (
        plan_tgi_detailed(_cmd("--model-id", "x", version=ver), m8, h100.memory_bytes, gpus=1)
        for ver in ("2.3.1", "2.4.0")
    )
    assert d231.max_batch_prefill_tokens == d240.max_batch_prefill_tokens == 4145
    assert d231.plan.activation_bytes - d240.plan.activation_bytes == 4145 * m8.vocab_size * 2


def test_gt234_prefill_default_is_tgi_2_4_0_with_max_input_tokens_9999():
    """gt-234 (bench/groundtruth/cases.yaml) printed "Default `max_batch_prefill_tokens` to 10049": TGI 2.4.0's
    launcher default, max_input_tokens + 50 (launcher/src/main.rs::main at v2.4.0), with max_input_tokens 9999 —
    the release its log names (the Triton indexing-kernels line first appears in v2.4.0; the report predates
    v2.4.1), not the newest release's launcher, which bench/accuracy_engines.py assumed before."""
    import yaml

    cases = yaml.safe_load((FIX.parent / "bench" / "groundtruth" / "cases.yaml").read_text())
    printed = next(c for c in cases if c["id"] == "gt-234")["figures"]["max_batch_prefill_tokens_default"]
    m, acc = _model("meta-llama/Llama-3.1-70B"), lookup("a100-80gb")

    def prefill(version: str, *extra: str) -> int:
        s = _cmd("--model-id", "x", "--num-shard", "2", *extra, version=version)
        d = plan_tgi_detailed(
            s, m, acc.memory_bytes, gpus=2, gpu_name=acc.name, compute_capability=acc.compute_capability
        )
        return int(d.max_batch_prefill_tokens)

    assert prefill("2.4.0", "--max-input-tokens", str(printed - 50)) == printed
    assert prefill("2.4.0") != printed and prefill("3.3.7") != printed


#: TGI's Linear4bit is ``Params4bit(compress_statistics=True)``: 4-bit values, an 8-bit absmax per 64 values and an
#: fp32 absmax per 256 absmax blocks (tgi@v2.3.1:server/text_generation_server/layers/bnb.py::Linear4bit).
NF4_RATE = 0.5 + 1 / 64 + 4 / (64 * 256)


def _dense_llama_like_params(m) -> tuple[int, int, int]:
    """(linear, embedding, lm_head) parameter counts of a dense gated-MLP decoder, from its config.json."""
    h, L, H, K = m.hidden_size, m.num_layers, m.num_attention_heads, m.num_kv_heads
    d, inter, vocab = m.head_size, m.intermediate_size, m.vocab_size
    linear = L * (h * H * d + 2 * h * K * d + H * d * h + 3 * h * inter)
    head = 0 if m.tie_word_embeddings else vocab * h
    return linear, vocab * h, head


@pytest.mark.parametrize(
    ("ref", "version", "head_quantized"),
    [
        ("meta-llama/Llama-2-70b-hf", "2.3.1", False),  # embeddings 1 % of the model
        ("meta-llama/Llama-2-70b-hf", "2.1.1", True),  # lm_head still built through get_linear(quantize=...)
        ("google/gemma-7b", "2.3.1", False),  # tied 256k-vocabulary embedding, 9 % of the model
    ],
)
def test_bitsandbytes_nf4_weights_follow_the_linear_layers(
    ref: str, version: str, head_quantized: bool
) -> None:
    # The weights TGI holds per shard after --quantize bitsandbytes-nf4: the linear layers at NF4_RATE bytes, the
    # embedding (and, from v2.2.0, an untied lm_head) and the norms at 2 bytes. Before, kvlint took 0.3 of the
    # bf16 size for any model: 19.3 GiB per shard for Llama-2-70B on 2 GPUs, where the layers hold 16.9 GiB, and
    # the GKE tutorial's 2 x L4 deployment (fixtures/collected) got a KV105 it does not deserve.
    m = _model(ref)
    linear, embed, head = _dense_llama_like_params(m)
    norms = (2 * m.num_layers + 1) * m.hidden_size
    quantized = linear + (head if head_quantized else 0)
    kept = embed + norms + (0 if head_quantized else head)
    expected = (quantized * NF4_RATE + kept * 2) / 2
    acc = lookup("l4")
    s = _cmd("--model-id", "x", "--quantize", "bitsandbytes-nf4", "--num-shard", "2", version=version)
    p = plan_tgi(s, m, acc.memory_bytes, gpus=2, gpu_name=acc.name, compute_capability=acc.compute_capability)
    assert abs(p.weights_bytes - expected) / expected < 0.01, (p.weights_bytes / 2**30, expected / 2**30)


def test_gke_llama2_70b_nf4_on_two_l4_is_not_flagged() -> None:
    # GoogleCloudPlatform/kubernetes-engine-samples ai-ml/llm-multiple-gpus/llama2-70b (fixtures/collected): TGI 2.3
    # with NUM_SHARD=2 and QUANTIZE=bitsandbytes-nf4 on two L4s, the setup Google's tutorial serves.
    path = (
        FIX
        / "collected"
        / "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-multiple-gpus__llama2-70b__text-generation-inference.yaml"
    )
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.serving.engine == "tgi"]
    assert cr.plan is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-l4"
    assert not [d for d in res.diagnostics if d.rule.startswith("KV1")], [d.message for d in res.diagnostics]


#: A made-up TGI 2.3.1 Deployment (for the tests below): Llama-2-70B in-flight NF4 over two L4s, asked for more
#: total tokens than its KV cache holds.
_TGI_23_TOO_LONG = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: llm
        image: ghcr.io/huggingface/text-generation-inference:2.3.1
        env:
        - {name: MODEL_ID, value: meta-llama/Llama-2-70b-chat-hf}
        - {name: NUM_SHARD, value: "2"}
        - {name: QUANTIZE, value: bitsandbytes-nf4}
        - {name: MAX_TOTAL_TOKENS, value: "32000"}
        - {name: MAX_INPUT_TOKENS, value: "3000"}
        resources: {limits: {nvidia.com/gpu: "2"}}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def test_kv603_arithmetic_on_2_3_multiplies_what_is_left_by_the_wiggle_room(tmp_path: Path) -> None:
    # TGI 2.3 - 2.4: num_blocks = free_memory x TGI_WIGGLE_ROOM // block bytes, free_memory = what the warmup left
    # of fraction x total (tgi@v2.3.0:server/text_generation_server/models/flash_causal_lm.py::warmup). The message
    # used to print "fraction x wiggle x total - weights - ...", which recomputes to 0.9 GiB less than the KV
    # figure it stood for on this 70B pod.
    p = tmp_path / "tgi23.yaml"
    p.write_text(_TGI_23_TOO_LONG)
    r = run_check([str(p)], Options(allow_hub=False))
    (d,) = [d for d in r.diagnostics if d.rule == "KV603"]
    plan = r.containers[0].plan
    gib = 2**30
    used = plan.weights_bytes + plan.activation_bytes + plan.non_torch_bytes
    assert abs((plan.total_bytes - used) * 0.95 - plan.kv_cache_bytes) < 0.01 * gib
    shown = (
        f"(cuda_memory_fraction 1 × total {plan.total_bytes / gib:.2f} GiB − weights {plan.weights_bytes / gib:.2f} "
        f"GiB − activation {plan.activation_bytes / gib:.2f} GiB − non-torch {plan.non_torch_bytes / gib:.2f} GiB) "
        "× wiggle room 0.95"
    )
    assert shown in d.message and f"leaves {plan.kv_cache_bytes / gib:.2f} GiB" in d.message


def test_plan_text_on_2_3_says_the_wiggle_room_applies_to_what_is_left() -> None:
    from kvlint.report.plan_text import render_plan_text

    m = _model("meta-llama/Llama-2-70b-hf")
    acc = lookup("l4")
    s = _cmd("--model-id", "x", "--quantize", "bitsandbytes-nf4", "--num-shard", "2", version="2.3.1")
    p = plan_tgi(s, m, acc.memory_bytes, gpus=2, gpu_name=acc.name, compute_capability=acc.compute_capability)
    t = render_plan_text(p)
    # the budget row is fraction x total; before, it said "wiggle room 1.00" while the KV row was 0.95 of the rest
    assert "cuda_memory_fraction 1.00; KV cache = wiggle room 0.95 x what is left" in t
    assert "wiggle room 1.00" not in t


def test_tgi_wiggle_room_env_is_not_read_before_2_3() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    plans = {}
    for version in ("2.2.0", "2.3.1"):
        for env in ({}, {"TGI_WIGGLE_ROOM": "0.5"}):
            s = _cmd("--model-id", "x", version=version)
            s.env = dict(env)
            plans[version, bool(env)] = plan_tgi(s, m, total, gpus=1)
    # TGI 2.2.0 has no TGI_WIGGLE_ROOM (added in 2.3.0, models/globals.py): the variable changes nothing there
    assert plans["2.2.0", True].kv_cache_bytes == plans["2.2.0", False].kv_cache_bytes
    assert plans["2.3.1", True].kv_cache_bytes < plans["2.3.1", False].kv_cache_bytes


def _case(cid: str) -> dict:
    import yaml

    cases = yaml.safe_load((FIX / "plan" / "groundtruth_cases.yaml").read_text())
    cases += yaml.safe_load((FIX.parent / "bench" / "groundtruth" / "cases.yaml").read_text())
    return next(c for c in cases if c["id"] == cid)


def test_gt082_log_is_two_shards_of_a_64gib_device_not_one_mi300x() -> None:
    """gt-082 (huggingface/ms-build-mi300): the README's command says ``--num-shard 1`` on an MI300X, but the pasted
    log shards on 2 processes, and TGI 2.0's warmup sizes the cache with the same ``mem_get_info`` formula on ROCm as
    on CUDA. kvlint's plan of the printed 801,568 tokens: far off on one 192 GB MI300X whether on 1 or 2 shards,
    within a few percent on 2 shards of a 64 GiB AMD device (MI210, an MI250/MI250X GCD), the reading
    bench/accuracy_engines.py replays."""
    printed = _case("gt-082")["figures"]["max_batch_total_tokens"]
    m = _model("meta-llama/Llama-3.1-8B")

    def tokens(acc_id: str, shards: int) -> int:
        acc = lookup(acc_id)
        assert acc is not None
        s = _cmd("--model-id", "x", "--num-shard", str(shards), version="2.0.4")
        d = plan_tgi_detailed(s, m, acc.memory_bytes, gpus=shards, gpu_name=acc.name)
        return int(d.max_batch_total_tokens)

    for shards in (1, 2):
        assert abs(tokens("mi300x", shards) - printed) / printed > 0.5, shards
    for acc_id in ("mi250", "mi210"):
        assert abs(tokens(acc_id, 2) - printed) / printed < 0.05, acc_id
        assert abs(tokens(acc_id, 1) - printed) / printed > 0.5, acc_id


def test_memory_held_by_other_processes_comes_off_the_tgi_cache() -> None:
    """TGI sizes its cache from the device's free memory (``torch.cuda.mem_get_info``, tgi@v1.4.5
    ``FlashCausalLM.warmup``): at fraction 1.0 and the 0.95 wiggle of 1.4.1 - 2.2, X bytes another process holds
    cost 0.95 X of KV cache. gt-257 (RTX 3090, TGI 1.4, nvidia-smi 0.7 GB in use before the start): with that memory
    taken off the device, as bench/accuracy_engines.py replays it, kvlint's figure is within 5 % of the printed
    max batch total tokens; on the whole device it is more than 10 % above."""
    import sys

    sys.path.insert(0, str(FIX.parent / "bench"))
    import accuracy_engines as ae

    printed = _case("gt-257")["figures"]["max_batch_total_tokens"]
    args, model_id, acc_id, version, gpus = ae.REPLAY["gt-257"]
    m, acc = _model(model_id), lookup(acc_id)
    s = _cmd("--model-id", model_id, *args, version=version)
    other = int(ae.OTHER_PROCESS_GIB["gt-257"] * (1 << 30))

    def plan(total: int):
        return plan_tgi_detailed(
            s, m, total, gpus=gpus, gpu_name=acc.name, compute_capability=acc.compute_capability
        )

    whole, shared = plan(acc.memory_bytes), plan(acc.memory_bytes - other)
    assert whole.wiggle == 0.95 and whole.cuda_memory_fraction == 1.0
    assert abs((whole.plan.kv_cache_bytes - shared.plan.kv_cache_bytes) - 0.95 * other) <= 2
    assert abs(shared.max_batch_total_tokens - printed) / printed < 0.05
    assert (whole.max_batch_total_tokens - printed) / printed > 0.10
    assert ae.predict("gt-257")[0] == shared.max_batch_total_tokens


def test_accuracy_engines_bench_says_which_cases_file_is_missing(tmp_path, capsys):
    """bench/accuracy_engines.py run from a checkout without ../shared beside it (a worktree) stopped with a
    FileNotFoundError traceback; it now names the missing file and exits 2."""
    import sys

    sys.path.insert(0, str(FIX.parent / "bench"))
    import accuracy_engines as ae

    assert ae.main([str(tmp_path / "absent.yaml")]) == 2
    assert "absent.yaml" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("version", "value"),
    [
        ((3, 3, 0), "FlashInfer"),  # the shard compares the value as written
        ((3, 3, 0), " paged"),
        ((3, 3, 0), "flash"),
        ((3, 0, 0), "flashdecoding-ipex"),  # in _expected from v3.1.0
        ((2, 3, 0), ""),
    ],
)
def test_an_attention_value_the_shards_refuse_is_a_plan_error(version, value) -> None:
    """A set ATTENTION goes to the shards as written (launcher/src/main.rs::resolve_attention) and
    models/globals.py asserts it is in `_expected` (v2.3.0 - v3.3.6): kvlint lower-cased and stripped it, and
    planned any other spelling as the launcher's default, for a TGI that does not start."""
    m = _model("meta-llama/Llama-3.1-8B")
    with pytest.raises(PlanError, match=r"ATTENTION=.* is refused by TGI .*Attention is not valid"):
        resolve_attention(version, m, "9.0", {"ATTENTION": value})


def test_attention_values_the_shards_accept() -> None:
    m = _model("meta-llama/Llama-3.1-8B")
    assert (
        resolve_attention((3, 1, 0), m, "9.0", {"ATTENTION": "flashdecoding-ipex"})[0] == "flashdecoding-ipex"
    )
    assert resolve_attention((3, 0, 0), m, "9.0", {"ATTENTION": "flashdecoding"})[0] == "flashdecoding"
    # a value kvlint cannot resolve is not judged: the launcher's choice is planned
    assert resolve_attention((3, 3, 0), m, "9.0", {"ATTENTION": "$(ATT)"})[0] == "flashinfer"


_TGI_ATTENTION = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: tgi}
spec:
  template:
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-h100-80gb}
      containers:
        - name: tgi
          image: ghcr.io/huggingface/text-generation-inference:3.0.0
          args: ["--model-id", "meta-llama/Llama-3.1-8B"]
          env:
            - name: ATTENTION
              value: flashdecoding-ipex
          resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_kv502_error_at_a_refused_attention_value(tmp_path: Path) -> None:
    """TGI 3.0.0's shards refuse ATTENTION=flashdecoding-ipex (added in v3.1.0): an error at the variable's value
    with a fix naming ATTENTION, not the generic "could not size" warning about config.json."""
    p = tmp_path / "tgi.yaml"
    p.write_text(_TGI_ATTENTION)
    (cr,), opts = _container_results(p)
    assert cr.plan is None
    found = [d for d in run_check([str(p)], opts).diagnostics if d.rule == "KV502"]
    assert [(f.severity, f.loc.line if f.loc else None) for f in found] == [("error", 14)]
    assert "Attention is not valid flashdecoding-ipex" in found[0].message
    assert "ATTENTION" in (found[0].fix or "") and "config.json" not in (found[0].fix or "")
    p.write_text(_TGI_ATTENTION.replace(":3.0.0", ":3.1.0"))
    (cr,), _ = _container_results(p)
    assert cr.plan is not None and cr.plan.block_size == 64


@pytest.mark.parametrize("version", ["2.4.1", "3.0.1", "3.3.6"])
def test_the_flashinfer_workspace_is_taken_before_the_warmup(version) -> None:
    """With ATTENTION=flashinfer every shard holds FlashInfer's shared 128 MiB workspace from FlashCausalLM.__init__,
    before the warmup reads free memory (layers/attention/flashinfer.py::get_workspace at v2.3.0 - v3.3.6): the
    KV figure is that much lower than with flashdecoding, whose plan has no workspace, all else equal."""
    m = _model("meta-llama/Llama-3.1-8B")
    total = lookup("h100-80gb").memory_bytes
    fi = _cmd("--model-id", "x", "--max-batch-prefill-tokens", "4096", version=version)
    fd = _cmd("--model-id", "x", "--max-batch-prefill-tokens", "4096", version=version)
    fd.env = {**fd.env, "ATTENTION": "flashdecoding"}
    d_fi = plan_tgi_detailed(fi, m, total, gpus=1, compute_capability="9.0")
    d_fd = plan_tgi_detailed(fd, m, total, gpus=1, compute_capability="9.0")
    assert d_fi.attention == "flashinfer" and d_fd.attention == "flashdecoding"
    assert d_fi.plan.non_torch_bytes - d_fd.plan.non_torch_bytes == FLASHINFER_WORKSPACE_BYTES
    # v3.x takes the wiggle room off the total; v2.4 multiplies what is left by it
    _, subtractive, _ = wiggle_room(d_fi.version)
    lost = FLASHINFER_WORKSPACE_BYTES * (1.0 if subtractive else d_fi.wiggle)
    assert abs(d_fd.plan.kv_cache_bytes - d_fi.plan.kv_cache_bytes - lost) <= 1
    # outside the heuristic band: the band's width is the same with and without it
    width = lambda p: p.kv_cache_bytes_high - p.kv_cache_bytes_low  # noqa: E731
    assert width(d_fi.plan) == width(d_fd.plan)
    assert any("FlashInfer workspace" in a for a in d_fi.assumptions)
