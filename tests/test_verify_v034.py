"""``kvlint verify`` on vLLM 0.34.0 start-up lines with the extensible KV cache.

No real 0.33.x/0.34.x start-up log was found (docs/engine-memory-model.md §5), so the log is written from the
0.34.0 wheel's format strings (fixtures/logs/verify/vllm-0.34-extensible.template, each line's file and function
named there) and filled with kvlint's own plan of the same settings: the numbers come from the model of the engine,
printed as vLLM prints them. With the cache on, "Available KV cache memory" is the pool *reserved* from the profile
(``Worker.determine_available_memory``), the committed one is printed after warm-up by
``extensible_kv_cache.py::measure_kv_cache_blocks`` (per worker; the minimum is kept, as
``kv_cache_planning.py::finalize_extensible_kv_cache`` keeps it)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from kvlint.options import Options
from kvlint.verify import parse_log, record_case, verify_log

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "fixtures" / "logs" / "verify" / "vllm-0.34-extensible.template"
GiB = 1 << 30
OPTS = Options(allow_hub=False, accelerator="h100")


def _gib(b: float) -> str:
    """``vllm/utils/mem_utils.py::format_gib``: ``str(round(bytes / GiB, 2))``."""
    return str(round(b / GiB, 2))


def _render(values: dict[str, Any]) -> str:
    text = "\n".join(ln for ln in TEMPLATE.read_text(encoding="utf-8").splitlines() if not ln.startswith("#"))
    return text.format(**values) + "\n"


def _zeros() -> dict[str, Any]:
    fields = set(re.findall(r"\{(\w+)\}", TEMPLATE.read_text(encoding="utf-8")))
    return dict.fromkeys(fields, 0)


def _printed() -> tuple[str, dict[str, Any]]:
    """The log vLLM 0.34.0 would print if it behaved as kvlint's plan says, and the values written in it. The
    GPU total printed 0 in the first pass, so the plan takes the H100's from the catalogue."""
    first = verify_log(parse_log(_render(_zeros())), OPTS)
    d = first.plan
    assert d is not None
    p = d.plan
    total = float(first.gpu_total_gib or 0) * GiB
    consumed = p.weights_bytes + p.non_torch_bytes
    reserved = p.budget_bytes - consumed - p.activation_bytes  # determine_available_memory: no graph estimate
    bpb = p.bytes_per_block
    blocks = p.kv_cache_bytes // bpb
    pool = blocks * bpb
    values = {
        "weights": _gib(p.weights_bytes),
        "reserved": _gib(reserved),
        "cudagraph": _gib(p.cudagraph_bytes),
        "cudagraph_2f": f"{p.cudagraph_bytes / GiB:.2f}",
        "free": _gib(total - 0.5 * GiB),
        "total": _gib(total),
        "budget": _gib(p.budget_bytes),
        "consumed": _gib(consumed),
        "activation": _gib(p.activation_bytes),
        "suggest_requested": int(reserved),
        "suggest_requested_gib": _gib(reserved),
        "suggest_full": int(reserved),
        "suggest_full_gib": _gib(reserved),
        "free_after": _gib(pool + p.activation_bytes + GiB),
        "committed": _gib(bpb),
        "torch_limit": _gib(p.activation_bytes + GiB),
        "blocks0": blocks + 100,  # the other worker measured more free memory
        "kv0": _gib(pool + 100 * bpb),
        "blocks1": blocks,
        "kv1": _gib(pool),
        "kv1_2f": f"{pool / GiB:.2f}",
        "tokens": f"{d.capacity_tokens_for(pool):,}",
        "max_len": f"{p.max_model_len:,}",
        "concurrency": f"{d.capacity_tokens_for(pool) / p.max_model_len:.2f}",
    }
    return _render(values), {"reserved": reserved, "pool": pool, "blocks": blocks}


def test_parser_takes_the_pool_committed_after_warmup() -> None:
    text, v = _printed()
    log = parse_log(text)
    assert log.version == "0.34.0" and log.extensible_kv_cache is True
    # the smaller of the two workers' "N KV cache blocks (B GiB) fit" lines, not the reservation
    assert log.figures["kv_cache_gib"] == round(v["pool"] / GiB, 2)
    assert log.figures["kv_measured_blocks"] == v["blocks"]
    assert log.figures["kv_reserved_gib"] == round(v["reserved"] / GiB, 2)
    lines = text.splitlines()
    assert "Memory after warmup" in lines[log.lines["kv_cache_gib"] - 1]
    assert "(Worker_TP1" in lines[log.lines["kv_cache_gib"] - 1]
    assert "Available KV cache memory" in lines[log.lines["kv_reserved_gib"] - 1]
    # an excerpt with only the "Extended KV cache to" lines reads the committed pool from them
    only_extended = parse_log("\n".join(ln for ln in lines if "Memory after warmup" not in ln))
    assert only_extended.figures["kv_cache_gib"] == float(f"{v['pool'] / GiB:.2f}")
    assert only_extended.figures["kv_reserved_gib"] == round(v["reserved"] / GiB, 2)


def test_verify_compares_the_committed_pool_not_the_reservation() -> None:
    text, v = _printed()
    res = verify_log(parse_log(text), OPTS)
    assert res.exit_code == 0, res.render_text()
    kv = next(f for f in res.figures if f.key == "kv_cache_gib")
    assert kv.reported == round(v["pool"] / GiB, 2) and kv.inside
    assert "reserved from the profile" in kv.note
    # the reservation would have been outside kvlint's band: this test fails when the reservation is compared
    assert kv.high is not None and v["reserved"] / GiB > kv.high
    tok = next(f for f in res.figures if f.key == "kv_tokens_from_printed_kv")
    assert tok.inside  # at the printed GiB (2 decimals) kvlint's blocks give the printed tokens
    # with the cache on, the printed peak activation holds no CUDA-graph estimate
    assert res.plan is not None
    act = next(f for f in res.figures if f.key == "activation_gib")
    assert act.predicted == pytest.approx(res.plan.plan.activation_bytes / GiB)
    assert act.inside
    assert not any("not comparable" in n for n in res.notes)


@pytest.mark.parametrize(
    "line, reason",
    [
        (
            "(EngineCore pid=50) WARNING 12-05 10:00:30 [abstract.py:175] Disabling the extensible KV cache: the "
            "CUDA driver does not support virtual memory management. The KV cache will be sized from profiling "
            "estimates instead of measured memory.",
            "the CUDA driver does not support virtual memory management",
        ),
        (
            "(EngineCore pid=50) INFO 12-05 10:00:05 [vllm.py:3250] Extensible KV cache off: without an IMEX "
            "channel, KV transfers within a host (e.g. NIXL) would lose NVLink and fall back to RDMA or TCP. If "
            "transfers only cross hosts, pass --enable-extensible-kv-cache.",
            # the reason is vLLM's whole first sentence, "e.g." and all (the next sentence ends it)
            "without an IMEX channel, KV transfers within a host (e.g. NIXL) would lose NVLink and fall back to "
            "RDMA or TCP",
        ),
        (
            # vllm@0.34.0:vllm/utils/vmm_driver.py::VmmDriver._load_library's error as the reason: a '.' in the
            # library name and a sentence of its own before vLLM's ". The KV cache will be sized ..."
            "(EngineCore pid=50) WARNING 12-05 10:00:30 [abstract.py:175] Disabling the extensible KV cache: Could "
            "not load libcuda.so.1. The GPU driver library is required for VMM-backed tensors.. The KV cache will "
            "be sized from profiling estimates instead of measured memory.",
            "Could not load libcuda.so.1. The GPU driver library is required for VMM-backed tensors.",
        ),
        (
            # HipVmmDriver.unusable_runtime_reason: version numbers in the reason
            "(EngineCore pid=50) WARNING 12-05 10:00:30 [abstract.py:175] Disabling the extensible KV cache: the "
            "HIP runtime (6.4) rejects hipMemSetAccess for an allocation that is not the first in its "
            "virtual-address reservation (ROCm/rocm-systems#2516, fixed by ROCm/rocm-systems#2451 in TheRock 7.12 "
            "and later). The KV cache will be sized from profiling estimates instead of measured memory.",
            "the HIP runtime (6.4) rejects hipMemSetAccess for an allocation that is not the first in its "
            "virtual-address reservation (ROCm/rocm-systems#2516, fixed by ROCm/rocm-systems#2451 in TheRock 7.12 "
            "and later)",
        ),
    ],
)
def test_a_log_with_the_cache_turned_off_is_replayed_off(line: str, reason: str) -> None:
    """vllm@0.34.0:vllm/v1/executor/abstract.py::Executor.disable_extensible_kv_cache (a rank without VMM, at
    start-up) and vllm/config/vllm.py::VllmConfig._resolve_extensible_kv_cache (a FABRIC-exporting connector
    without an IMEX channel) turn it off for reasons kvlint cannot see: the replay passes the flag."""
    text, _ = _printed()
    kept = [
        ln for ln in text.splitlines() if "Memory after warmup" not in ln and "Extended KV cache" not in ln
    ]
    log = parse_log("\n".join([kept[0], line, *kept[1:]]))
    assert log.extensible_kv_cache is False and log.extensible_off_reason == reason
    assert "kv_reserved_gib" not in log.figures
    res = verify_log(log, OPTS)
    assert "--no-enable-extensible-kv-cache" in res.command
    assert reason in res.sources["enable_extensible_kv_cache"]
    act = next(f for f in res.figures if f.key == "activation_gib")
    assert (
        act.note
        != "the profiled activation alone: no CUDA-graph estimate is taken with the extensible KV cache"
    )


def test_a_log_of_the_cache_against_a_plan_without_it_is_flagged() -> None:
    """Replayed as 0.33.0 (--engine-version when the log printed none), kvlint plans no extensible KV cache; the
    log's lines show one: verify says the KV figures are not comparable."""
    text, _ = _printed()
    log = parse_log("\n".join(ln for ln in text.splitlines() if "server version" not in ln))
    assert log.version is None
    res = verify_log(log, dataclasses.replace(OPTS, engine_version="0.33.0"))
    assert any("not comparable" in n for n in res.notes)


def test_record_keeps_the_committed_pool_and_the_reservation() -> None:
    """`kvlint verify --record` of such a start-up: kv_cache_gib is the committed pool (what bench/accuracy.py
    scores), kv_reserved_gib the reservation."""
    text, v = _printed()
    log = parse_log(text)
    case = record_case(verify_log(log, OPTS), log)
    assert case["figures"]["kv_cache_gib"] == round(v["pool"] / GiB, 2)
    assert case["figures"]["kv_reserved_gib"] == round(v["reserved"] / GiB, 2)
