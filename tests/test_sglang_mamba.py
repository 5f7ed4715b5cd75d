"""SGLang's hybrid state pool (Mamba / linear attention): its size, the KV pool left and the request cap.

The expected figures are SGLang's formulas restated here from the wheels' sources (``configs/mamba_utils.py``
``Mamba2StateShape.create`` / ``mamba_cache_per_req``; ``kv_cache_configurator.py::_handle_max_mamba_cache``,
``::_calculate_mamba_ratio`` in 0.5.23, ``model_runner_kv_cache_mixin.py`` in 0.5.13), applied to the models'
configs, never copied from a log.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kvlint.accelerators import lookup
from kvlint.memory.sglang import cell_size, plan_sglang_detailed, sglang_prelude
from kvlint.memory.sglang_mamba import pool_slots, request_ratio, state_shape

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_sglang import _cmd, _model  # noqa: E402

QWEN3_NEXT = "Qwen/Qwen3-Next-80B-A3B-Thinking"
NEMOTRON_NANO = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
H100 = lookup("h100")


def _gdn_per_req(cfg: dict, tp: int, ssm_bytes: int = 4) -> int:
    """``mamba_cache_per_req`` of a Gated DeltaNet model on one rank: ``Mamba2StateShape.create`` with inter = value
    heads x value dim, groups = key heads, state = key dim; conv bf16, SSM float32 (SGLang's default); x the linear
    layers (every layer but each ``full_attention_interval``-th)."""
    kh, vh = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    kd, vd, k = cfg["linear_key_head_dim"], cfg["linear_value_head_dim"], cfg["linear_conv_kernel_dim"]
    conv = (vh * vd + 2 * kh * kd) // tp * (k - 1)
    ssm = vh // tp * vd * kd
    n = cfg["num_hidden_layers"]
    layers = n - n // cfg["full_attention_interval"]
    return (conv * 2 + ssm * ssm_bytes) * layers


def _plan(mid: str, *args: str, version: str = "0.5.23"):
    return plan_sglang_detailed(
        _cmd("--model-path", mid, *args, version=version), _model(mid), H100.memory_bytes, gpus=1
    )


def test_qwen3_next_state_per_request_is_sglangs() -> None:
    m = _model(QWEN3_NEXT)
    for tp in (1, 2, 4):
        st = state_shape(m, tp, 1, (0, 5, 23), None, {})
        assert st is not None and st.per_request == _gdn_per_req(m.config, tp)


def test_state_pool_comes_out_of_the_kv_pool() -> None:
    """``--max-mamba-cache-size N`` allocates N + 1 slots (0.5.23: the padding slot) before the KV pool: two sizes
    leave KV pools that differ by the state bytes of the slots between them."""
    m = _model(QWEN3_NEXT)
    per_req = _gdn_per_req(m.config, 4)
    a = _plan(QWEN3_NEXT, "--tp", "4", "--max-mamba-cache-size", "100")
    b = _plan(QWEN3_NEXT, "--tp", "4", "--max-mamba-cache-size", "300")
    assert a.mamba_state_bytes == 101 * per_req and b.mamba_state_bytes == 301 * per_req
    assert a.rest_bytes - b.rest_bytes == 200 * per_req
    cell = a.plan.kv_bytes_per_token
    assert a.max_total_num_tokens == a.rest_bytes // cell and b.max_total_num_tokens == b.rest_bytes // cell


def test_ratio_split_and_request_cap_0_5_23() -> None:
    """Default: state : KV = 0.9 : 1 of the profiled rest; slots ``(budget - per_req) // per_req``; the extra_buffer
    strategy (overlap schedule on) keeps 3 + 2 slots per running request."""
    m = _model(QWEN3_NEXT)
    per_req = _gdn_per_req(m.config, 4)
    d = _plan(QWEN3_NEXT, "--tp", "4")
    rest = d.rest_bytes + d.mamba_state_bytes  # SGLang's rest before the state pool
    k = int((rest * 0.9 / 1.9 - per_req) // per_req)
    assert d.max_mamba_cache_size == k > 0 and d.mamba_state_bytes == (k + 1) * per_req
    est = min(4096, max(2048, int(d.max_total_num_tokens / d.context_length * 512)))
    assert d.max_running_requests == min(est, d.max_total_num_tokens // 2, k // 5)


def test_ratio_split_and_request_cap_0_5_13() -> None:
    """0.5.13: no padding slot (``budget // per_req``), ``auto`` is no_buffer: 3 slots per running request."""
    m = _model(QWEN3_NEXT)
    per_req = _gdn_per_req(m.config, 4)
    d = _plan(QWEN3_NEXT, "--tp", "4", version="0.5.13")
    rest = d.rest_bytes + d.mamba_state_bytes
    k = int(rest * 0.9 / 1.9 // per_req)
    assert d.max_mamba_cache_size == k and d.mamba_state_bytes == k * per_req
    assert d.max_running_requests <= k // 3


def test_full_memory_ratio_flag_and_ssm_dtype_flag() -> None:
    m = _model(QWEN3_NEXT)
    lo = _plan(QWEN3_NEXT, "--tp", "4", "--mamba-full-memory-ratio", "0.2")
    hi = _plan(QWEN3_NEXT, "--tp", "4")
    assert lo.mamba_state_bytes < hi.mamba_state_bytes and lo.max_total_num_tokens > hi.max_total_num_tokens
    st = state_shape(m, 4, 1, (0, 5, 23), "bfloat16", {})
    assert st is not None and st.per_request == _gdn_per_req(m.config, 4, ssm_bytes=2)


def test_radix_cache_off_sizes_the_pool_from_max_running_requests() -> None:
    per_req = _gdn_per_req(_model(QWEN3_NEXT).config, 4)
    d = _plan(QWEN3_NEXT, "--tp", "4", "--disable-radix-cache", "--max-running-requests", "64")
    assert (
        d.max_mamba_cache_size == 64 and d.mamba_state_bytes == 65 * per_req and d.max_running_requests == 64
    )


def test_nemotron_h_groups_extended_to_tp() -> None:
    """``extra_groups_for_head_shards``: 8 groups on 16 ranks become 16 before the conv width is computed."""
    m = _model(NEMOTRON_NANO)
    c = m.config
    st = state_shape(m, 16, 1, (0, 5, 23), None, {})
    inter = c["mamba_num_heads"] * c["mamba_head_dim"]
    conv = (inter + 2 * 16 * c["ssm_state_size"]) // 16 * (c["conv_kernel"] - 1)
    ssm = c["mamba_num_heads"] // 16 * c["mamba_head_dim"] * c["ssm_state_size"]
    mamba_layers = c["hybrid_override_pattern"].count("M")
    assert st is not None and st.per_request == (conv * 2 + ssm * 4) * mamba_layers


def test_request_ratio_by_release_and_strategy() -> None:
    archs = ("Qwen3NextForCausalLM",)
    kw = {"disable_radix_cache": False, "disable_overlap_schedule": False, "page_size": 1, "strategy": None}
    assert request_ratio((0, 5, 13), archs, **kw)[0] == 3
    assert request_ratio((0, 5, 23), archs, **kw)[0] == 5
    assert request_ratio((0, 5, 23), archs, **{**kw, "disable_overlap_schedule": True})[0] == 3
    assert request_ratio((0, 5, 23), archs, **{**kw, "disable_radix_cache": True})[0] == 1
    assert request_ratio((0, 5, 23), ("SomethingElse",), **kw)[0] == 3


def test_pool_slots_non_positive_when_nothing_is_left() -> None:
    k, b = pool_slots(
        -(1 << 30),
        1 << 20,
        (0, 5, 23),
        full_memory_ratio=0.9,
        max_mamba_cache_size=None,
        disable_radix_cache=False,
        max_running_requests=None,
    )
    assert k <= 0 and b == 0


def test_model_without_state_has_no_pool() -> None:
    d = _plan("Qwen/Qwen3-32B", "--tp", "2")
    assert d.max_mamba_cache_size == 0 and d.mamba_state_bytes == 0 and not d.mamba_family


@pytest.mark.parametrize("mid", [QWEN3_NEXT, NEMOTRON_NANO])
def test_cell_size_counts_attention_layers_only(mid: str) -> None:
    m = _model(mid)
    pre = sglang_prelude(_cmd("--model-path", mid), m)
    assert pre.kv_bytes_per_token == cell_size(m, 1, 2)[0]
    assert any("hybrid state pool" in n for n in pre.model_notes)


def test_kv701_quotes_the_state_pool_error_for_a_hybrid_model(tmp_path: Path) -> None:
    """0.5.13+: the state pool is sized first, so a rest of no memory stops at its check, not the KV pool's."""
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    manifest = tmp_path / "nano.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nano}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
        '          command: ["python3", "-m", "sglang.launch_server"]\n'
        f'          args: ["--model-path={NEMOTRON_NANO}", "--mem-fraction-static=0.7"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    opts = Options(allow_hub=False, accelerator="h100")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "sglang")
    d = next(x for x in check_container(cr, opts) if x.rule == "KV701")
    assert "Not enough GPU memory for hybrid (mamba/linear-attention) state cache" in d.message


def test_multimodal_reservation_from_0_5_18() -> None:
    """0.5.18+ ``mm_runtime_reservation_gb``: SGLANG_VLM_CACHE_SIZE_MB (100 MiB) leaves the KV budget of a multimodal
    model; none before, none for a text model, none for Gemma 3 unless --enable-multimodal (mm_disabled_models)."""
    from kvlint.memory.sglang import multimodal_reservation

    vl = "Qwen/Qwen2.5-VL-7B-Instruct"
    base = _plan(vl, "--tp", "1")
    s = _cmd("--model-path", vl, "--tp", "1")
    s.env = {**s.env, "SGLANG_VLM_CACHE_SIZE_MB": "0"}
    none = plan_sglang_detailed(s, _model(vl), H100.memory_bytes, gpus=1)
    assert none.rest_bytes - base.rest_bytes == 100 * (1 << 20)
    kw = {"enable_multimodal": False, "language_only": False, "feature_transport": None}
    assert multimodal_reservation(_model(vl), (0, 5, 16), {}, **kw) == 0
    assert (
        multimodal_reservation(_model(vl), (0, 5, 18), {}, **{**kw, "feature_transport": "cuda_ipc"})
        == 1124 << 20
    )
    assert multimodal_reservation(_model(vl), (0, 5, 23), {}, **{**kw, "language_only": True}) == 0
    assert multimodal_reservation(_model("Qwen/Qwen3-32B"), (0, 5, 23), {}, **kw) == 0
    gemma = _model("google/gemma-3-12b-it")
    assert multimodal_reservation(gemma, (0, 5, 23), {}, **kw) == 0
    assert multimodal_reservation(gemma, (0, 5, 23), {}, **{**kw, "enable_multimodal": True}) == 100 << 20


def test_kv702_names_the_state_pool(tmp_path: Path) -> None:
    """A hybrid model's KV pool is what the state pool leaves: KV702 says so."""
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    manifest = tmp_path / "q35.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q35}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
        '          command: ["python3", "-m", "sglang.launch_server"]\n'
        '          args: ["--model-path=Qwen/Qwen3.5-9B", "--mem-fraction-static=0.9"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    opts = Options(allow_hub=False, accelerator="l4")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "sglang")
    d = next(x for x in check_container(cr, opts) if x.rule == "KV702")
    assert "hybrid state pool of" in d.message


def test_state_pool_is_shown_beside_the_kv_cache() -> None:
    from kvlint.report.plan_text import render_plan_text

    d = _plan(QWEN3_NEXT, "--tp", "4")
    p = d.plan
    assert p.state_pool_bytes == d.mamba_state_bytes > 0
    assert p.as_dict()["memory"]["state_pool_bytes"] == d.mamba_state_bytes
    assert "state pool" in render_plan_text(p)
    text = _plan("Qwen/Qwen3-32B", "--tp", "2").plan
    assert "state_pool_bytes" not in text.as_dict()["memory"] and "state pool" not in render_plan_text(text)


def _nano(tmp_path: Path, *args: str) -> Path:
    """A one-container SGLang 0.5.23 Deployment of Nemotron Nano with ``args`` (one GPU), written in ``tmp_path``."""
    flags = ", ".join(f'"{a}"' for a in (f"--model-path={NEMOTRON_NANO}", *args))
    manifest = tmp_path / "nano.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nano}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
        '          command: ["python3", "-m", "sglang.launch_server"]\n'
        f"          args: [{flags}]\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return manifest


def _kv701(tmp_path: Path, *args: str) -> list:
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    opts = Options(allow_hub=False, accelerator="h100")
    cr = next(
        c for c in run_check([str(_nano(tmp_path, *args))], opts).containers if c.serving.engine == "sglang"
    )
    return [x for x in check_container(cr, opts) if x.rule == "KV701"]


def test_kv701_state_pool_too_small_to_serve_a_request(tmp_path: Path) -> None:
    """0.5.13+: ``resolve_max_num_reqs`` caps max_running_requests at ``max_mamba_cache_size // ratio`` and raises
    "Hybrid (mamba/linear-attention) state cache is too small to serve any requests" when that leaves none: fewer
    slots than one running request takes (3 with the radix cache on) stop SGLang though the KV pool is fine."""
    d = _plan(NEMOTRON_NANO, "--max-mamba-cache-size", "2")
    assert d.max_total_num_tokens > 0 and d.max_mamba_cache_size == 2 and d.mamba_ratio > 2
    (found,) = _kv701(tmp_path, "--max-mamba-cache-size=2")
    assert "too small to serve any requests" in found.message and "max_mamba_cache_size=2" in found.message
    assert f"--max-mamba-cache-size {d.mamba_ratio}" in (found.fix or "")
    # one request's worth of slots starts
    assert _kv701(tmp_path, f"--max-mamba-cache-size={d.mamba_ratio}") == []


#: Falcon-H1- and Granite-4-shaped configs (field names of SGLang's ``configs/falcon_h1.py`` and
#: ``configs/granitemoehybrid.py``; sizes of the small models, written out here: no such config is stored)
FALCON_H1 = {
    "architectures": ["FalconH1ForCausalLM"],
    "model_type": "falcon_h1",
    "hidden_size": 1024,
    "num_hidden_layers": 36,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": 2048,
    "vocab_size": 32784,
    "mamba_d_ssm": 1536,
    "mamba_n_heads": 24,
    "mamba_d_head": 64,
    "mamba_n_groups": 1,
    "mamba_d_state": 128,
    "mamba_d_conv": 4,
    "mamba_expand": 2,
    "max_position_embeddings": 16384,
    "torch_dtype": "bfloat16",
}
GRANITE_4 = {
    "architectures": ["GraniteMoeHybridForCausalLM"],
    "model_type": "granitemoehybrid",
    "hidden_size": 1536,
    "num_hidden_layers": 4,
    "layer_types": ["mamba", "mamba", "attention", "mamba"],
    "num_attention_heads": 12,
    "num_key_value_heads": 4,
    "intermediate_size": 512,
    "vocab_size": 100352,
    "mamba_expand": 2,
    "mamba_n_heads": 48,
    "mamba_d_head": 64,
    "mamba_n_groups": 1,
    "mamba_d_state": 128,
    "mamba_d_conv": 4,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


@pytest.mark.parametrize(
    ("cfg", "inter", "layers"),
    [
        (FALCON_H1, FALCON_H1["mamba_d_ssm"], FALCON_H1["num_hidden_layers"]),  # mamba_d_ssm; every layer
        # no mamba_d_ssm: mamba_expand x hidden; no mamba_d_head (FalconH1Config's "auto"): inter / heads
        ({**FALCON_H1, "mamba_d_ssm": None, "mamba_n_heads": 32, "mamba_d_head": None}, 2 * 1024, 36),
        (GRANITE_4, 2 * GRANITE_4["hidden_size"], 3),  # mamba_expand x hidden; the mamba layers
    ],
)
def test_falcon_h1_and_granite_4_state_per_request(cfg: dict, inter: int, layers: int) -> None:
    """``Mamba2StateShape.create`` (0.5.23 ``configs/mamba_utils.py``): groups not divisible by TP extended to TP,
    conv ``(inter + 2 x groups x state) / tp x (kernel - 1)`` at bf16, SSM ``heads / tp x head_dim x state`` at float32
    (Granite 4 passes no dtype; Falcon-H1's config sets none)."""
    from kvlint.models import parse_config

    m = parse_config(cfg, model_id="test", source="test")
    for tp in (1, 2, 4):
        groups = cfg["mamba_n_groups"] if cfg["mamba_n_groups"] % tp == 0 else tp
        conv = (inter + 2 * groups * cfg["mamba_d_state"]) // tp * (cfg["mamba_d_conv"] - 1)
        heads = cfg["mamba_n_heads"]
        head_dim = cfg["mamba_d_head"] if isinstance(cfg["mamba_d_head"], int) else inter // heads
        ssm = heads // tp * head_dim * cfg["mamba_d_state"]
        st = state_shape(m, tp, 1, (0, 5, 23), None, {})
        assert st is not None and (st.conv, st.ssm, st.layers) == (conv, ssm, layers)
        assert st.per_request == (conv * 2 + ssm * 4) * layers


@pytest.mark.parametrize("ratio", ["0", "-0.5", "-1", "nan", "inf"])
def test_a_full_memory_ratio_sglang_cannot_size_the_pool_with_is_refused(ratio: str) -> None:
    """``budget = rest x r / (1 + r)`` (``_handle_max_mamba_cache``): at 0 or below SGLang's slot count is not
    positive ("Not enough GPU memory for hybrid ... state cache"), at -1 the division fails, and nan / inf make it
    not a number: SGLang does not start. kvlint planned 0 and negatives at the default 0.9 (a pass), and failed on
    nan / inf with "ValueError: cannot convert float NaN to integer"; it now says which flag and why."""
    from kvlint.memory.vllm import PlanError

    with pytest.raises(PlanError, match=r"--mamba-full-memory-ratio .*positive finite"):
        _plan(NEMOTRON_NANO, "--mamba-full-memory-ratio", ratio)
    # the ratio is not read when the slot count is given, nor for a model without a state pool
    assert _plan(
        NEMOTRON_NANO, "--mamba-full-memory-ratio", ratio, "--max-mamba-cache-size", "64"
    ).max_mamba_cache_size
    assert _plan("Qwen/Qwen3-32B", "--tp", "2", "--mamba-full-memory-ratio", ratio).max_total_num_tokens > 0


def test_kv502_reports_the_refused_full_memory_ratio_at_the_flag(tmp_path: Path) -> None:
    """The refusal above is an error at ``--mamba-full-memory-ratio`` with a fix, not "kvlint could not size" with
    advice about config.json."""
    from kvlint.pipeline import Options, run_check
    from kvlint.rules.runner import check_container

    manifest = tmp_path / "nano.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nano}\nspec:\n  template:\n    spec:\n"
        "      containers:\n        - name: sglang\n          image: lmsysorg/sglang:v0.5.23\n"
        '          command: ["python3", "-m", "sglang.launch_server"]\n'
        f'          args: ["--model-path={NEMOTRON_NANO}", "--mamba-full-memory-ratio=-1"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    opts = Options(allow_hub=False, accelerator="h100")
    cr = next(c for c in run_check([str(manifest)], opts).containers if c.serving.engine == "sglang")
    (d,) = [x for x in check_container(cr, opts) if x.rule == "KV502"]
    assert (
        d.severity == "error" and "--mamba-full-memory-ratio -1 is not a positive finite number" in d.message
    )
    assert d.loc.line == 11 and d.loc.column > manifest.read_text().splitlines()[10].index("--model-path") + 1
    assert "config.json" not in (d.fix or "") and "--mamba-full-memory-ratio" in (d.fix or "")


def test_multimodal_reservation_reads_env_values_as_bounded_digits() -> None:
    """SGLANG_VLM_CACHE_SIZE_MB from a manifest's env of 5,000 digits made the plan fail with Python's int-conversion
    ValueError quoted in KV502; values that are not 1 to 19 ASCII digits (kvlint.values.digits) keep SGLang's
    default, as an unreadable value does."""
    from kvlint.memory.sglang import multimodal_reservation

    vl = _model("Qwen/Qwen2.5-VL-7B-Instruct")
    kw = {"enable_multimodal": False, "language_only": False, "feature_transport": None}
    for raw in ("9" * 5000, "²", "12.5"):
        assert multimodal_reservation(vl, (0, 5, 23), {"SGLANG_VLM_CACHE_SIZE_MB": raw}, **kw) == 100 << 20
    assert multimodal_reservation(vl, (0, 5, 23), {"SGLANG_VLM_CACHE_SIZE_MB": " 200 "}, **kw) == 200 << 20


def _findings(tmp_path: Path, *args: str) -> list:
    """Every finding of kvlint on a one-container SGLang Deployment of Nemotron Nano with ``args``, on an H100."""
    from kvlint.pipeline import Options, run_check

    manifest = _nano(tmp_path, *args)
    return list(run_check([str(manifest)], Options(allow_hub=False, accelerator="h100")).diagnostics)


@pytest.mark.parametrize(
    ("flag", "value", "why"),
    [
        ("--max-mamba-cache-size", "2.5", "an integer is required"),
        ("--max-mamba-cache-size", "nan", "an integer is required"),
        ("--max-mamba-cache-size", "1e9", "an integer is required"),
        ("--max-mamba-cache-size", "9" * 24, "implausibly large"),
        ("--mamba-full-memory-ratio", "abc", "a number is required"),
    ],
)
def test_state_pool_flags_sglang_cannot_parse_are_kv206(
    tmp_path: Path, flag: str, value: str, why: str
) -> None:
    """SGLang's argparse reads ``--max-mamba-cache-size`` as an int and ``--mamba-full-memory-ratio`` as a float
    (``ServerArgs`` annotations) and refuses anything else. kvlint kept them as strings: "2.5", "nan" or "abc" were
    silently planned as if the flag were absent (a pass), and a 24-digit slot count as 10^23 slots."""
    found = _findings(tmp_path, f"{flag}={value}")
    (d,) = [x for x in found if x.rule == "KV206"]
    assert d.severity == "error" and f"'{value}' for {flag}: {why}" in d.message and d.loc.line == 11
    # the plan goes on without the value (SGLang does not start: KV206 says so), not with it
    assert not [x for x in found if x.rule in ("KV502", "KV503")]


def test_kv701_names_an_explicit_state_pool_that_takes_all_the_memory(tmp_path: Path) -> None:
    """``--max-mamba-cache-size`` slots whose states take more than the weights leave: SGLang takes the count as
    is and finds no memory for the KV pool. KV701 said "the weights take N GiB" (less than the budget it named) and
    "the weights do not fit: use more GPUs"; it now names the state pool at the flag, and its fix re-plans."""
    import re

    big = _plan(NEMOTRON_NANO, "--max-mamba-cache-size", "1000000")
    assert big.max_total_num_tokens <= 0 < big.rest_bytes + big.mamba_state_bytes
    (d,) = [x for x in _findings(tmp_path, "--max-mamba-cache-size=1000000") if x.rule == "KV701"]
    assert (
        d.message.startswith("--max-mamba-cache-size 1,000,000 state slots")
        and "weights take" not in d.message
    )
    assert d.loc.line == 11 and "'Loaded weights leave no GPU memory for the KV cache" in d.message
    m = re.search(r"set --max-mamba-cache-size (\d+) \(re-planned", d.fix or "")
    assert m, d.fix
    fixed = _plan(NEMOTRON_NANO, "--max-mamba-cache-size", m.group(1))
    assert fixed.max_total_num_tokens >= fixed.context_length and fixed.max_running_requests > 0


def test_pipeline_state_pool_follows_the_stage_split_sglang_uses() -> None:
    """From 0.5.18 each rank charges the state layers of the largest pipeline stage, over the stages
    ``get_pp_indices`` gives, which reads ``SGLANG_PP_LAYER_PARTITION`` (``_handle_max_mamba_cache``). Qwen3-Next's
    48 layers split 40 + 8 put more linear-attention layers on the first stage than the even split does: the state
    per request follows that stage's count, not the even split's."""
    from kvlint.memory.sglang import pp_stage_layers
    from kvlint.memory.sglang_mamba import state_layer_indices

    m = _model(QWEN3_NEXT)
    idx = state_layer_indices(m)
    env = {"SGLANG_PP_LAYER_PARTITION": "40,8"}

    def most(split: tuple[int, ...]) -> int:
        bounds = [sum(split[:r]) for r in range(len(split) + 1)]
        return max(sum(1 for i in idx if bounds[r] <= i < bounds[r + 1]) for r in range(len(split)))

    skewed = pp_stage_layers(m.num_layers, 2, (0, 5, 23), env)
    even = pp_stage_layers(m.num_layers, 2, (0, 5, 23), {})
    assert most(skewed) > most(even)
    s = _cmd("--model-path", QWEN3_NEXT, "--tp", "4", "--pp-size", "2", version="0.5.23")
    s.env.update(env)
    pre = sglang_prelude(s, m)
    assert pre.mamba is not None and pre.mamba.layers == most(skewed)
    plain = sglang_prelude(
        _cmd("--model-path", QWEN3_NEXT, "--tp", "4", "--pp-size", "2", version="0.5.23"), m
    )
    assert plain.mamba is not None and plain.mamba.layers == most(even)
    # before 0.5.18 every rank charges every state layer, whatever the split
    s16 = _cmd("--model-path", QWEN3_NEXT, "--tp", "4", "--pp-size", "2", version="0.5.16")
    s16.env.update(env)
    old = sglang_prelude(s16, m)
    assert old.mamba is not None and old.mamba.layers == len(idx)
    # the plan's state pool is sized from that share
    d = plan_sglang_detailed(s, m, lookup("h200").memory_bytes, gpus=8)
    assert d.mamba_state_bytes == (d.max_mamba_cache_size + 1) * pre.mamba.per_request


@pytest.mark.parametrize(
    ("arch", "first"),
    [
        # the first wheel whose list (_support_mamba_cache_extra_buffer / _MAMBA_EXTRA_BUFFER_ARCHS) names it
        ("BailingMoeV2_5ForCausalLM", (0, 5, 14)),
        ("MiniCPMV4_6ForConditionalGeneration", (0, 5, 14)),
        ("KimiK3ForConditionalGeneration", (0, 5, 17)),
        ("Qwen3_5ForCausalLM", (0, 5, 19)),
        ("Qwen3_5MoeForCausalLM", (0, 5, 19)),
        ("NemotronH_Omni_Reasoning_V3", (0, 5, 20)),
        ("Glm5NextForConditionalGeneration", (0, 5, 20)),
        ("InklingForConditionalGeneration", (0, 5, 21)),
        ("MiniCPMV4_7ForConditionalGeneration", (0, 5, 23)),
    ],
)
def test_extra_buffer_architectures_by_release(arch: str, first: tuple[int, int, int]) -> None:
    from kvlint.memory import sglang_mamba

    kw = {"disable_radix_cache": False, "disable_overlap_schedule": False, "page_size": 1, "strategy": None}
    before = (*first[:2], first[2] - 1)
    assert sglang_mamba.request_ratio(first, (arch,), **kw)[1] == "extra_buffer"
    assert sglang_mamba.request_ratio(before, (arch,), **kw)[1] == "no_buffer"
    # SGLang reads architectures[0] only
    assert sglang_mamba.request_ratio(first, ("LlamaForCausalLM", arch), **kw)[1] == "no_buffer"
