"""Arithmetic of a dozen ground-truth start-ups pinned case by case (fixtures/plan/groundtruth_cases.yaml = copy of
../shared/groundtruth/cases.yaml; cite ``gt-NNN``). Each case is planned from its config, flags and GPU only,
through bench/accuracy.py's replay table (fixtures/plan/models configs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

GiB = 1 << 30
MODELS = ROOT / "fixtures" / "plan" / "models"
CASES = {
    c["id"]: c for c in yaml.safe_load((ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml").read_text())
}


def plan(gid: str):
    return accuracy.plan_case(CASES[gid], accuracy.REPLAY[gid], MODELS)


# (case, printed budget GiB or None, verdict expected from the outcome: started -> ok, capacity failure -> fail/risky)
PINNED = [
    ("gt-003", None, {"ok"}),  # V0 0.6.x, RTX 3090, max_model_len 35000 (chunked prefill on by default)
    ("gt-007", None, {"fail", "risky"}),  # gpt-oss-120b, util 0.95, E1 at 131072
    ("gt-008", None, {"fail", "risky"}),  # gpt-oss-120b on 0.14.1: 64.38 GiB of weights leave no KV
    ("gt-009", 37.41, {"fail", "risky"}),  # Qwen2.5-VL-72B TP4 on A100-40GB: 39.38 x 0.95
    ("gt-010", 5.60, {"fail"}),  # V0, RTX 4060 8.0 GiB x 0.7: negative KV
    ("gt-052", None, {"ok"}),
    ("gt-054", None, {"ok"}),
    ("gt-056", 71.26, {"ok"}),  # 79.18 x 0.90 = 71.26 (the case's own arithmetic)
    ("gt-058", None, {"ok"}),
    ("gt-062", 14.39, {"ok"}),  # 15.99 x 0.90
    ("gt-071", None, {"fail"}),  # V0 L4, 131072 > 37,696-token pool
]


@pytest.mark.parametrize("gid,budget,verdicts", PINNED)
def test_case_arithmetic(gid, budget, verdicts):
    c = CASES[gid]
    d = plan(gid)
    p = d.plan
    util = c.get("gpu_memory_utilization") or p.gpu_memory_utilization
    assert p.budget_bytes in (int(p.total_bytes * util), int(p.total_bytes * util) + 1)
    if budget is not None:
        assert p.budget_bytes / GiB == pytest.approx(budget, abs=0.01), gid
    assert p.kv_cache_bytes == (
        p.budget_bytes - p.weights_bytes - p.activation_bytes - p.non_torch_bytes - p.cudagraph_bytes
    )
    assert d.verdict in verdicts, (gid, d.verdict)
    rep = accuracy.reported(c)
    if rep["weights"]:
        assert p.weights_bytes / GiB == pytest.approx(rep["weights"], rel=0.02), gid
    if rep["kv"] is not None and c["outcome"] == "ok":
        assert p.kv_cache_bytes_low / GiB <= rep["kv"] <= p.kv_cache_bytes_high / GiB, gid


def test_gt007_pip_install_native_sampler_band_covers_the_print():
    """gt-007 ran a pip-installed vLLM 0.11.0 (conda site-packages in the traceback), where FlashInfer is an extra
    and the profile's dummy sampler is the PyTorch-native one: the printed 'Available KV cache memory: 1.71 GiB'
    must lie inside the plan's band, and one 131,072-token request (4.54 GiB, the error's own figure) must not fit
    the point estimate (the start failed)."""
    c = CASES["gt-007"]
    p = plan("gt-007").plan
    printed = c["failure"]["kv_available_gib"]
    assert p.kv_cache_bytes_low / GiB <= printed <= p.kv_cache_bytes_high / GiB
    assert p.kv_cache_bytes / GiB < c["failure"]["kv_needed_gib"]


def test_gt007_marlin_backend_pads_like_pre_hopper_and_closes_the_kv_gap():
    """Without FlashInfer and the optional ``triton_kernels`` module, vLLM 0.11.0 runs gpt-oss's MXFP4 MoE on Hopper
    with Marlin (``mxfp4.py::get_mxfp4_backend``), padded as on an A100 (intermediate to 128): the replay of
    gt-007's pip install (``mxfp4_backend`` marlin) loads on its H100 what kvlint loads on an A100, within 0.5 % of
    the 65.97 GiB vLLM printed for gpt-oss-120b on an H100 under Marlin (vllm-project/vllm#23278), and its KV
    estimate comes within 10 % of the printed 1.71 GiB at those weights (+94 % with the Hopper padding)."""
    import dataclasses

    from kvlint.models import resolve_model
    from kvlint.models.weights import weight_bytes

    c = CASES["gt-007"]
    r = accuracy.REPLAY["gt-007"]
    assert r.settings.get("mxfp4_backend") == "marlin"
    m = resolve_model(str(MODELS / r.model_dir), allow_hub=False)
    on_h100 = weight_bytes(m, dtype_bytes=2, compute_capability="9.0", mxfp4_backend="marlin")[0]
    on_a100 = weight_bytes(m, dtype_bytes=2, compute_capability="8.0")[0]
    hopper = weight_bytes(m, dtype_bytes=2, compute_capability="9.0")[0]
    assert on_h100 == on_a100 > hopper
    assert on_h100 / GiB == pytest.approx(65.97, rel=0.005)
    p = plan("gt-007").plan
    printed = c["failure"]["kv_available_gib"]
    # The Marlin weights close the gap: with them the KV estimate is within 10 % of the print once kvlint's weights
    # are the 65.97 GiB vLLM printed under Marlin. Raw it is within 20 %, not 10 %: the native sampler, counted from
    # the source, matches gt-052's printed activation (same vocabulary, 1,024 rows) within 1 % and sits 0.16 GiB below
    # the fitted factor that hid the rest; what is left (0.26 GiB of a 75 GiB budget) is in inputs gt-007 does not
    # print: its weights (kvlint's count is 0.13 GiB below #23278's 0.10.1 print) and its non-torch memory (a conda
    # Python 3.13 install). The release is 0.11.0 (core.py:699/708 and gpu_worker.py:298 of its traceback) and its
    # profile samples min(1024 seqs, 1024 tokens) rows, as replayed.
    err = p.kv_cache_bytes / GiB - printed
    assert abs(err) / printed < 0.20
    assert abs(err - (65.97 - p.weights_bytes / GiB)) / printed < 0.10
    settings = {k: v for k, v in r.settings.items() if k != "mxfp4_backend"}
    default = accuracy.plan_case(c, dataclasses.replace(r, settings=settings), MODELS).plan
    assert p.weights_bytes - default.weights_bytes == on_h100 - hopper
    assert default.kv_cache_bytes - p.kv_cache_bytes == on_h100 - hopper
    assert (default.kv_cache_bytes / GiB - printed) / printed > 0.5


def test_gt056_terms_close_without_cudagraph():
    """gt-056 (0.14.x, the :latest image of the run): 71.26 - 14.99 - 4.76 - 0.13 = 51.38 exactly; no graph term
    before 0.20."""
    p = plan("gt-056").plan
    assert p.cudagraph_bytes == 0
    assert p.weights_bytes / GiB == pytest.approx(14.99, abs=0.01)
    assert p.activation_bytes / GiB == pytest.approx(4.76, abs=0.05)
    assert p.non_torch_bytes / GiB == pytest.approx(0.13, abs=0.005)
    assert p.kv_cache_bytes / GiB == pytest.approx(51.38, abs=0.06)


def test_llmd_replays_run_the_sampler_their_observations_record():
    """The llm-d-benchmark runs (gt-052 - gt-058) are replayed at the release of their ``:latest`` image (0.14.x,
    bench/accuracy.py LATEST_SERIES), whose profile samples with the PyTorch-native top-k/top-p path
    (``calibration.sampler_path``: native from 0.11.1), the path their calibration observations are filed under.
    At 0.11.0, the release the document's later revision names, the sampler is FlashInfer's and the printed 4.76 GiB
    activation of gt-056 is not reproduced: kvlint's activation falls by more than 3 GiB."""
    from kvlint.memory import calibration as cal
    from kvlint.memory.versions import resolve_version

    for o in cal.OBSERVATIONS:
        if o.gt in ("gt-052", "gt-054", "gt-056", "gt-058"):
            v = resolve_version(accuracy.REPLAY[o.gt].version or "")[0]
            assert cal.sampler_path("v1", v, False) == o.path, o.gt
    import dataclasses

    at_0110 = accuracy.plan_case(
        CASES["gt-056"], dataclasses.replace(accuracy.REPLAY["gt-056"], version="0.11.0"), MODELS
    )
    assert (plan("gt-056").plan.activation_bytes - at_0110.plan.activation_bytes) / GiB > 3.0


def test_gt062_tokens_from_reported_kv():
    """gt-062 (0.26.0): 8.00 GiB at 57,344 B/token -> 149,792 tokens in whole blocks; vLLM printed 149,712
    (its 8.00 is rounded) -> within 0.06%; max concurrency 4.57 for 32,768."""
    d = plan("gt-062")
    tok = d.capacity_tokens_for(int(8.0 * GiB))
    assert tok == int(8.0 * GiB) // (57344 * 16) * 16 * 32768 // 32768
    assert abs(tok - 149712) / 149712 < 0.005
    assert d.plan.kv_bytes_per_token == 57344


def test_gt071_v0_blocks_and_error():
    """gt-071 (V0 ~0.7, L4 22.07 GiB): 4.60 GiB / 2 MiB per block = 2355 blocks x 16 = 37,680 (printed 37,696);
    the V0 max-seq-len error names the pool size."""
    d = plan("gt-071")
    assert d.capacity_tokens_for(int(4.6 * GiB)) == int(4.6 * GiB) // (2 << 20) * 16
    assert abs(d.capacity_tokens_for(int(4.6 * GiB)) - 37696) / 37696 < 0.005
    assert d.error and "larger than the maximum number of tokens that can be stored in KV cache" in d.error


def test_gt008_mxfp4_weights():
    """gt-008: vLLM 0.14.1 printed 64.38 GiB for gpt-oss-120b (MXFP4 experts padded to hidden 3072)."""
    p = plan("gt-008").plan
    assert p.weights_bytes / GiB == pytest.approx(64.38, rel=0.01)


def test_gt253_marlin_mxfp4_padding_reproduces_the_hopper_marlin_load():
    """gt-253 (vllm-project/vllm#23278): gpt-oss-120b on an H100 under the Marlin MXFP4 backend (the log's
    marlin_utils_fp4 warning) loaded 65.9651 GiB. kvlint's Marlin padding (hidden to 256, intermediate per partition
    to 128, :func:`kvlint.models.weights._mxfp4_expert_padding`, taken below compute capability 9.0) must give that
    figure within 1 %, and the Hopper/Triton padding (64.38 GiB printed in gt-008) must stay below it."""
    from kvlint.models.weights import weight_bytes

    local = yaml.safe_load((ROOT / "bench" / "groundtruth" / "cases.yaml").read_text())
    printed = next(c for c in local if c["id"] == "gt-253")["figures"]["weights_gib"]
    model = accuracy._model(accuracy.REPLAY["gt-008"], MODELS)
    marlin, _ = weight_bytes(model, dtype_bytes=2, tp=1, compute_capability="8.0")
    hopper, _ = weight_bytes(model, dtype_bytes=2, tp=1, compute_capability="9.0")
    assert marlin / GiB == pytest.approx(printed, rel=0.01)
    assert hopper < marlin
