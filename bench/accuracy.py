"""Replay the ground-truth vLLM start-ups through kvlint's memory model and report the error.

Usage: ``python bench/accuracy.py [--cases fixtures/plan/groundtruth_cases.yaml]``

For every vLLM case of ``groundtruth_cases.yaml`` (copy of /work/shared/groundtruth/cases.yaml) whose model
config is in ``fixtures/plan/models`` and whose GPU total is known, prints predicted vs reported KV GiB, tokens and
concurrency, the error, and whether the report lies inside the predicted band; then the median/p90 absolute
error and the share inside the band. :data:`REPLAY` lists, per case, what the case says that the planner needs
(model directory, version read from the log family when the case gives none), with the reason.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvlint.plan._specs import load_spec  # noqa: E402
from kvlint.plan.vllm import VllmSettings, plan_vllm_detailed  # noqa: E402

GiB = 1 << 30
MODELS = ROOT / "fixtures" / "plan" / "models"


@dataclass(frozen=True)
class Replay:
    """How to replay one case: model fixture dir, version (when the case gives none: inferred from its log family),
    GPU total GiB (when the case gives none), GPU name and compute capability, quantization, and why."""

    model_dir: str
    version: str | None = None
    total_gib: float | None = None
    gpu_name: str = ""
    cc: str | None = None
    quantization: str | None = None
    why: str = ""


REPLAY: dict[str, Replay] = {
    "gt-056": Replay(
        "meta-llama--Llama-3.1-8B",
        "0.19.0",
        None,
        "NVIDIA H100 80GB HBM3",
        "9.0",
        why="'latest' image; log has the per-term 'Actual usage' line and the graph estimate is not subtracted -> 0.18-0.19 family",
    ),
    "gt-058": Replay(
        "Qwen--Qwen3-0.6B", "0.19.0", None, "NVIDIA H100 80GB HBM3", "9.0", why="as gt-056 (same run series)"
    ),
    "gt-052": Replay(
        "openai--gpt-oss-20b",
        "0.19.0",
        None,
        "NVIDIA H100 80GB HBM3",
        "9.0",
        why="as gt-056 (same run series)",
    ),
    "gt-054": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "0.19.0",
        None,
        "NVIDIA H100 80GB HBM3",
        "9.0",
        "fp8",
        why="as gt-056; FP8-dynamic checkpoint of the bf16 config",
    ),
    "gt-062": Replay(
        "Qwen--Qwen2.5-7B",
        None,
        None,
        "NVIDIA GeForce RTX 4080",
        "8.9",
        "awq",
        why="AWQ checkpoint of the Qwen2.5-7B architecture",
    ),
    "gt-010": Replay(
        "Qwen--Qwen2.5-7B",
        "0.6.6",
        None,
        "NVIDIA GeForce RTX 4060",
        "8.9",
        "awq",
        why="V0 'Memory profiling' log family (0.6.x); 5.2 GB of weights = a 4-bit checkpoint",
    ),
    "gt-071": Replay(
        "meta-llama--Llama-3.1-8B", "0.7.0", None, "NVIDIA L4", "8.9", why="V0 MQLLMEngine log (~0.7)"
    ),
    "gt-007": Replay(
        "openai--gpt-oss-120b",
        "0.11.0",
        79.18,
        "NVIDIA H100 80GB HBM3",
        "9.0",
        why="2025-10 report (~0.11); H100 total as printed in gt-052",
    ),
}


def _case_settings(c: dict[str, Any], r: Replay) -> VllmSettings:
    p = c.get("parallelism") or {}
    s = VllmSettings(
        version=r.version or str(c.get("engine_version") or "latest"),
        version_assumed=not (r.version or c.get("engine_version")),
        tensor_parallel_size=int(p.get("tensor_parallel") or 1),
        pipeline_parallel_size=int(p.get("pipeline_parallel") or 1),
        max_model_len=c.get("max_model_len"),
        gpu_memory_utilization=c.get("gpu_memory_utilization"),
        kv_cache_dtype=str(c.get("kv_cache_dtype") or "auto"),
        max_num_seqs=c.get("max_num_seqs"),
        max_num_batched_tokens=c.get("max_num_batched_tokens"),
        enforce_eager=bool(c.get("enforce_eager")),
        quantization=r.quantization,
    )
    return s


def replay(cases_path: Path) -> list[dict[str, Any]]:
    """Predicted vs reported figures for every replayable case (list of dicts, GiB and tokens)."""
    cases = {c["id"]: c for c in yaml.safe_load(cases_path.read_text())}
    rows = []
    for gid, r in REPLAY.items():
        c = cases.get(gid)
        if not c:
            continue
        total = (c.get("gpu") or {}).get("total_gib_reported") or r.total_gib
        if not total:
            continue
        model = load_spec(MODELS / r.model_dir)
        s = _case_settings(c, r)
        d = plan_vllm_detailed(s, model, int(total * GiB), gpu_name=r.gpu_name, compute_capability=r.cc)
        p = d.plan
        f = c.get("figures") or {}
        fail = c.get("failure") or {}
        rep_kv = f.get("kv_cache_gib", fail.get("kv_available_gib"))
        rep_tok = f.get("kv_tokens", fail.get("kv_capacity_tokens"))
        rows.append(
            {
                "id": gid,
                "model": r.model_dir,
                "version": p.engine_version,
                "era": p.era,
                "pred_weights": p.weights_bytes / GiB,
                "rep_weights": f.get("weights_gib"),
                "pred_kv": p.kv_cache_bytes / GiB,
                "low": p.kv_cache_bytes_low / GiB,
                "high": p.kv_cache_bytes_high / GiB,
                "rep_kv": rep_kv,
                "pred_tok": p.capacity_tokens,
                "rep_tok": rep_tok,
                "pred_conc": p.max_concurrency,
                "rep_conc": f.get("max_concurrency"),
                "budget": p.budget_bytes / GiB,
                "fits": d.fits,
                "outcome": c.get("outcome"),
            }
        )
    return rows


def _err(pred: float, rep: float | None) -> float | None:
    if rep is None or rep == 0:
        return None
    return (pred - rep) / abs(rep) * 100


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median/p90 absolute KV error (% of reported KV and GiB) and the share of reports inside the band."""
    errs = [abs(x) for x in (_err(r["pred_kv"], r["rep_kv"]) for r in rows) if x is not None]
    gib = [abs(r["pred_kv"] - r["rep_kv"]) for r in rows if r["rep_kv"] is not None]
    inside = [r["low"] <= r["rep_kv"] <= r["high"] for r in rows if r["rep_kv"] is not None]
    q = sorted(errs)
    return {
        "cases": len(rows),
        "median_abs_err_pct": statistics.median(q) if q else 0.0,
        "p90_abs_err_pct": q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))] if q else 0.0,
        "median_abs_err_gib": statistics.median(gib) if gib else 0.0,
        "max_abs_err_gib": max(gib) if gib else 0.0,
        "inside_band": sum(inside) / len(inside) if inside else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=Path, default=ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml")
    a = ap.parse_args(argv)
    rows = replay(a.cases)
    print(
        f"{'case':8} {'model':32} {'ver':7} {'era':3} {'KV pred':>8} {'band':>13} {'KV rep':>7} {'err%':>6} "
        f"{'tok pred':>9} {'tok rep':>9} {'conc p':>7} {'conc r':>7}"
    )
    for r in rows:
        e = _err(r["pred_kv"], r["rep_kv"])
        print(
            f"{r['id']:8} {r['model'][:32]:32} {r['version']:7} {r['era']:3} {r['pred_kv']:8.2f} "
            f"[{r['low']:5.2f},{r['high']:6.2f}] {r['rep_kv'] if r['rep_kv'] is not None else '-':>7} "
            f"{f'{e:+.1f}' if e is not None else '-':>6} {r['pred_tok']:9d} {r['rep_tok'] or '-':>9} "
            f"{r['pred_conc']:7.2f} {r['rep_conc'] or '-':>7}"
        )
    s = summary(rows)
    print(
        f"\n{s['cases']} cases: median |KV err| {s['median_abs_err_pct']:.1f}% ({s['median_abs_err_gib']:.2f} GiB), "
        f"p90 {s['p90_abs_err_pct']:.1f}%, max {s['max_abs_err_gib']:.2f} GiB, inside band {s['inside_band']:.0%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
