"""Replay the ground-truth vLLM start-ups through kvlint's memory model and report the error.

Usage: ``python bench/accuracy.py [--cases PATH] [--models DIR]``

Every case of ``../shared/groundtruth/cases.yaml`` (copy: ``fixtures/plan/groundtruth_cases.yaml``) is
classified: replayed (:data:`REPLAY`: model config from ``../shared/corpus/models`` or
``fixtures/plan/models``, parsed by :func:`kvlint.models.resolve_model`; GPU from the case or
:func:`kvlint.accelerators.lookup`; version from the case or its log family) or skipped with the reason
(:data:`SKIP`; non-vLLM engines are skipped as such). For each replayed case it prints predicted vs reported
weights, KV GiB and KV tokens, the tokens kvlint derives from the engine's *own* reported KV GiB, and the
verdict (ok/risky/fail: :attr:`kvlint.memory.vllm.VllmPlanDetail.verdict`) against the outcome. Then the median
and p90 absolute KV error over the started cases (outcome ``ok``) and the verdict confusion matrix, both
in-sample and leave-one-out (calibration refitted without the case, :func:`kvlint.memory.calibration.refit`).
These are benchmark figures, not tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kvlint.accelerators import lookup  # noqa: E402
from kvlint.memory import calibration as cal  # noqa: E402
from kvlint.memory.vllm import VllmPlanDetail, VllmSettings, plan_vllm_detailed  # noqa: E402
from kvlint.models import resolve_model  # noqa: E402

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

GiB = 1 << 30
CORPUS_MODELS = SHARED / "corpus/models"
FIXTURE_MODELS = ROOT / "fixtures" / "plan" / "models"
SHARED_CASES = SHARED / "groundtruth/cases.yaml"


@dataclass(frozen=True)
class Replay:
    """How to replay one case.

    ``model_dir``: ``<org>--<name>`` directory holding config.json. ``version``: engine version when the case gives
    none (read from its log family/date). ``gpu``: accelerator reference for :func:`lookup` (its CUDA total is used
    when the case prints none). ``quantization``: the checkpoint's method when config.json is the bf16 base model.
    ``settings``: extra :class:`VllmSettings` fields. ``why``: the reasoning, shown with ``--why``.
    """

    model_dir: str
    gpu: str
    version: str | None = None
    quantization: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    why: str = ""


LATEST_SERIES = (
    "'vllm/vllm-openai:latest'; the log has the per-term 'Actual usage' line and the CUDA-graph estimate is not "
    "subtracted (gt-056 closes without it) -> 0.18-0.19 family"
)

REPLAY: dict[str, Replay] = {
    "gt-003": Replay(
        "meta-llama--Llama-3.1-8B", "rtx-3090", "0.6.4", why="V0 'Memory profiling results' (~0.6.4)"
    ),
    "gt-007": Replay(
        "openai--gpt-oss-120b", "h100", "0.11.0", why="2025-10 report (~0.11), MXFP4 checkpoint, H100 80GB"
    ),
    "gt-008": Replay("openai--gpt-oss-120b", "h100", why="0.14.1 as stated; H100 80GB"),
    "gt-009": Replay(
        "Qwen--Qwen2.5-72B",
        "a100-40gb",
        settings={"tensor_parallel_size": 4, "use_v1": False, "max_model_len": 128000},
        why="Qwen2.5-VL-72B's text decoder = Qwen2.5-72B config (vision tower not counted); 34.43 GiB/rank "
        "weights -> TP4; V0 log family; VL config's max_position_embeddings 128000",
    ),
    "gt-010": Replay(
        "Qwen--Qwen2.5-7B",
        "rtx-4060",
        "0.6.6",
        "awq",
        why="V0 0.6.x log family; 5.2 GB weights = 4-bit checkpoint",
    ),
    "gt-015": Replay(
        "meta-llama--Llama-3.1-405B",
        "h100",
        "0.5.3",
        "fp8",
        why="2024-07-24 report, V0 'Loading model weights took' -> 0.5.3 (released the day before); FP8 checkpoint",
    ),
    "gt-052": Replay("openai--gpt-oss-20b", "h100", "0.19.0", why=LATEST_SERIES),
    "gt-054": Replay(
        "meta-llama--Llama-3.3-70B-Instruct",
        "h100",
        "0.19.0",
        "fp8",
        why=LATEST_SERIES + "; FP8-dynamic checkpoint of the bf16 config",
    ),
    "gt-056": Replay("meta-llama--Llama-3.1-8B", "h100", "0.19.0", why=LATEST_SERIES),
    "gt-058": Replay("Qwen--Qwen3-0.6B", "h100", "0.19.0", why=LATEST_SERIES),
    "gt-062": Replay(
        "Qwen--Qwen2.5-7B", "rtx-4080", None, "awq", why="AWQ checkpoint of the Qwen2.5-7B config"
    ),
    "gt-071": Replay(
        "meta-llama--Llama-3.1-8B", "l4", "0.7.0", why="V0 MQLLMEngine log (~0.7); 14.99 GB = 8B bf16"
    ),
    "gt-074": Replay("openai--gpt-oss-20b", "l4", why="version not stated: newest rules assumed"),
    # Configs below are catalogue extras (kvlint/models/extra_sources.yaml), not in the shared corpus: the
    # fixtures copy is addressed by absolute path (``mdir / abs`` is ``abs``).
    "gt-066": Replay(
        str(FIXTURE_MODELS / "Qwen--Qwen2.5-1.5B"),
        "t4",
        "0.7.2",
        settings={"dtype": "float16"},
        why="0.7.2 V0 as stated; T4 (CC 7.5, no bf16) so the bf16 checkpoint is cast to float16 as the case "
        "says; Qwen2.5-1.5B base config = the Instruct architecture (only max_position_embeddings/eos "
        "differ; max_model_len 32768 is set explicitly)",
    ),
}

# GPUs the accelerator catalogue lacks: (name, CUDA total GiB as the case prints it, compute capability).
EXTRA_GPUS = {
    "rtx-4080": ("NVIDIA GeForce RTX 4080", 15.99, "8.9"),
    "rtx-4060": ("NVIDIA GeForce RTX 4060", 8.0, "8.9"),
}

_NOCFG = "model config not in ../shared/corpus/models and the report does not state the architecture"
_NOGPU = "GPU (or its memory) not stated"
SKIP: dict[str, str] = {
    "gt-064": "GPU not named and shared with ~11.9 GiB of other tenants (shared/groundtruth/README.md: do not "
    "score cases without a GPU); its token arithmetic (48 layers x 4 KV heads x 128, catalogue config "
    "Qwen/Qwen3-VL-30B-A3B-Instruct) is checked in tests instead",
    "gt-012": "mixed GPUs (16 GB + 32 GB) per pipeline stage; " + _NOCFG + " (Qwen3-Coder-30B-A3B-FP8)",
    "gt-013": "no model and no GPU in the report (figures only)",
    "gt-014": "no model and no GPU in the report",
    "gt-016": _NOGPU + " (pre-release V1 main of Jan 2025)",
    "gt-018": _NOCFG + " (DeepSeek-V4-Flash)",
    "gt-019": _NOCFG + " (Kimi-Linear-48B)",
    "gt-020": _NOCFG + " (DeepSeek-Coder-V2 236B; corpus has only V2-Lite)",
    "gt-021": "DeepSeek-V2 variant and GPU not stated",
    "gt-022": "local model and GPU not stated",
    "gt-023": _NOGPU + " (OpenRLHF actor, Llama-3-70B)",
    "gt-024": "model not stated",
    "gt-025": _NOGPU + "; " + _NOCFG + " (Qwen1.5-7B)",
    "gt-026": "model size and GPU not stated",
    "gt-027": _NOCFG + " (Mistral-Small-4-119B); GPU count not stated",
    "gt-028": _NOCFG + " (MiniMax-M2.7 AWQ); GB10 unified memory",
    "gt-029": _NOCFG + " (MiniMax-M2.7 AWQ); GB10 unified memory",
    "gt-031": _NOCFG + " (Qwen2.5-VL-3B)",
    "gt-032": "bus error (shared memory), not a GPU-memory outcome; GPU not stated",
    "gt-033": "ROCm fork on MI300X (kvlint models CUDA vLLM); numbers at failure not reported",
    "gt-035": _NOGPU + " (vLLM ~0.2)",
    "gt-036": "static validation (max_model_len capped by sliding window), model size and GPU not stated",
    "gt-037": "static validation (heads % TP), not a memory outcome; " + _NOCFG + " (LLaMA-33B)",
    "gt-040": "static validation (heads % TP), not a memory outcome; GPU not stated",
    "gt-042": "static validation (bf16 on CC 7.0), not a memory outcome; model not stated",
    "gt-043": _NOCFG + " (local qwen3.6-27b)",
    "gt-045": _NOCFG + " (local qwen3.6-35b-a3b)",
    "gt-046": _NOCFG + " (Qwen3.8-27B)",
    "gt-047": _NOCFG + " (Qwen3.8-27B)",
    "gt-048": "custom image and EXL3 quantization; " + _NOCFG + " (GLM-5.3-Flash)",
    "gt-049": "custom image and EXL3 quantization; " + _NOCFG + " (GLM-5.3-Flash)",
    "gt-050": "composed engine without config.json; GPU not stated",
    "gt-067": _NOCFG + " (qwen2.5-0.5b bnb-4bit); GPU not named",
    "gt-068": _NOCFG + " (qwen2.5-0.5b bnb-4bit)",
    "gt-070": _NOCFG + " (Qwen2.5-Math-1.5B); GPU not named",
    "gt-073": _NOCFG + " (gemma-4-26B-A4B); A100 size not stated",
    "gt-075": _NOGPU + "; non-torch memory of other processes (8.29 GiB) dominates",
}


def models_dir(override: Path | None = None) -> Path:
    """Where config.json directories are read: ``--models``, else the shared corpus, else the fixtures copy."""
    if override:
        return override
    return CORPUS_MODELS if CORPUS_MODELS.is_dir() else FIXTURE_MODELS


def _gpu(r: Replay, case: dict[str, Any]) -> tuple[str, float, str | None]:
    gpu = case.get("gpu") or {}
    total = gpu.get("total_gib_reported")
    if r.gpu in EXTRA_GPUS:
        name, t, cc = EXTRA_GPUS[r.gpu]
        return name, float(total or t), cc
    acc = lookup(r.gpu)
    if acc is None:
        raise SystemExit(f"bench: accelerator '{r.gpu}' not in the catalogue")
    return acc.name, float(total or acc.memory_bytes / GiB), acc.compute_capability


def case_settings(case: dict[str, Any], r: Replay) -> VllmSettings:
    """:class:`VllmSettings` for a case: its flags, the replay's version/quantization/extra settings."""
    p = case.get("parallelism") or {}
    version = r.version or case.get("engine_version")
    kw: dict[str, Any] = dict(
        version=str(version or "latest"),
        version_assumed=not version,
        tensor_parallel_size=int(p.get("tensor_parallel") or 1),
        pipeline_parallel_size=int(p.get("pipeline_parallel") or 1),
        max_model_len=case.get("max_model_len"),
        gpu_memory_utilization=case.get("gpu_memory_utilization"),
        kv_cache_dtype=str(case.get("kv_cache_dtype") or "auto"),
        max_num_seqs=case.get("max_num_seqs"),
        max_num_batched_tokens=case.get("max_num_batched_tokens"),
        enforce_eager=bool(case.get("enforce_eager")),
        quantization=r.quantization,
    )
    kw.update(r.settings)
    return VllmSettings(**kw)


def reported(case: dict[str, Any]) -> dict[str, Any]:
    """The figures a case reports: weights GiB, KV GiB (min over ranks), KV tokens (or blocks x 16)."""
    f = case.get("figures") or {}
    fail = case.get("failure") or {}
    kv = f.get("kv_cache_gib", fail.get("kv_available_gib"))
    if kv is None and f.get("kv_cache_gib_per_rank"):
        kv = min(f["kv_cache_gib_per_rank"])
    tok = f.get("kv_tokens", fail.get("kv_capacity_tokens"))
    if tok is None and f.get("gpu_blocks"):
        tok = int(f["gpu_blocks"]) * int(case.get("block_size") or 16)
    return {"weights": f.get("weights_gib"), "kv": kv, "tok": tok, "conc": f.get("max_concurrency")}


def plan_case(case: dict[str, Any], r: Replay, mdir: Path) -> VllmPlanDetail:
    """Plan one case from its config, flags and GPU only."""
    model = resolve_model(str(mdir / r.model_dir), allow_hub=False)
    name, total, cc = _gpu(r, case)
    return plan_vllm_detailed(
        case_settings(case, r), model, int(total * GiB), gpu_name=name, compute_capability=cc
    )


def replay(cases_path: Path, mdir: Path) -> list[dict[str, Any]]:
    """One row per replayed case (GiB and tokens), in-sample and leave-one-out."""
    cases = {c["id"]: c for c in yaml.safe_load(cases_path.read_text())}
    rows = []
    for gid, r in REPLAY.items():
        c = cases.get(gid)
        if c is None:
            continue
        d = plan_case(c, r, mdir)
        with cal.using(cal.refit(cal.without(gid))):
            d_loo = plan_case(c, r, mdir)
        rep = reported(c)
        p = d.plan
        rows.append(
            {
                "id": gid,
                "model": r.model_dir,
                "version": p.engine_version + ("?" if "assumed" in " ".join(p.assumptions) else ""),
                "era": p.era,
                "pred_w": p.weights_bytes / GiB,
                "rep_w": rep["weights"],
                "pred_kv": p.kv_cache_bytes / GiB,
                "loo_kv": d_loo.plan.kv_cache_bytes / GiB,
                "low": p.kv_cache_bytes_low / GiB,
                "high": p.kv_cache_bytes_high / GiB,
                "rep_kv": rep["kv"],
                "pred_tok": p.capacity_tokens,
                "tok_from_rep_kv": d.capacity_tokens_for(int(rep["kv"] * GiB)) if rep["kv"] else None,
                "rep_tok": rep["tok"],
                "verdict": d.verdict,
                "loo_verdict": d_loo.verdict,
                "outcome": c.get("outcome"),
                "dense": all(g.kind == "full" for g in d.groups) and not p.kv_cache_dtype.startswith("fp8"),
            }
        )
    return rows


def _pct(pred: float, rep: float | None) -> float | None:
    if rep is None or rep <= 0:
        return None
    return (pred - rep) / rep * 100


def _p90(xs: list[float]) -> float:
    q = sorted(xs)
    return q[min(len(q) - 1, int(round(0.9 * (len(q) - 1))))] if q else 0.0


def summary(rows: list[dict[str, Any]], key: str = "pred_kv", verdict_key: str = "verdict") -> dict[str, Any]:
    """KV error over started cases (outcome ok, KV reported): median/p90 |%|; verdict confusion matrix."""
    errs = [abs(e) for r in rows if r["outcome"] == "ok" and (e := _pct(r[key], r["rep_kv"])) is not None]
    conf = {(v, o): 0 for v in ("ok", "risky", "fail") for o in ("ok", "fail")}
    for r in rows:
        conf[(r[verdict_key], r["outcome"])] += 1
    started = sum(1 for r in rows if r["outcome"] == "ok")
    return {
        "kv_cases": len(errs),
        "median": statistics.median(errs) if errs else 0.0,
        "p90": _p90(errs),
        "confusion": conf,
        "fail_missed": conf[("ok", "fail")],
        "started": started,
        "started_pred_fail": conf[("fail", "ok")],
    }


def _fmt(x: Any, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default_cases = (
        SHARED_CASES if SHARED_CASES.is_file() else ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml"
    )
    ap.add_argument("--cases", type=Path, default=default_cases)
    ap.add_argument("--models", type=Path, default=None)
    ap.add_argument("--why", action="store_true", help="print why each replay uses its version/GPU/config")
    a = ap.parse_args(argv)
    mdir = models_dir(a.models)
    cases = yaml.safe_load(a.cases.read_text())
    rows = replay(a.cases, mdir)
    print(f"cases: {a.cases}\nconfigs: {mdir}\n")
    print(
        f"{'case':7} {'model':27} {'ver':8} {'era':3} {'W pred':>6} {'W rep':>6} {'KV pred':>7} {'band':>13} "
        f"{'KV LOO':>7} {'KV rep':>6} {'err%':>6} {'tok pred':>9} {'tok|repKV':>9} {'tok rep':>9} "
        f"{'verdict':>7} {'LOO':>5} {'outcome':>7}"
    )
    for r in rows:
        e = _pct(r["pred_kv"], r["rep_kv"])
        print(
            f"{r['id']:7} {r['model'][:27]:27} {r['version']:8} {r['era']:3} {r['pred_w']:6.2f} "
            f"{_fmt(r['rep_w'], '6.2f'):>6} {r['pred_kv']:7.2f} [{r['low']:5.2f},{r['high']:6.2f}] "
            f"{r['loo_kv']:7.2f} {_fmt(r['rep_kv'], '6.2f'):>6} {_fmt(e, '+6.1f'):>6} {r['pred_tok']:9d} "
            f"{_fmt(r['tok_from_rep_kv'], '9d'):>9} {_fmt(r['rep_tok'], '9d'):>9} {r['verdict']:>7} "
            f"{r['loo_verdict']:>5} {r['outcome']:>7}"
        )
        if a.why:
            print(f"        why: {REPLAY[r['id']].why}")
    wt = [abs(e) for r in rows if (e := _pct(r["pred_w"], r["rep_w"])) is not None]
    print(f"\nweights: median |err| {statistics.median(wt):.1f}%, max {max(wt):.1f}% over {len(wt)} cases")
    tk = [
        (r["id"], (r["tok_from_rep_kv"] - r["rep_tok"]) / r["rep_tok"] * 100)
        for r in rows
        if r["tok_from_rep_kv"] and r["rep_tok"] and r["dense"]
    ]
    print(
        "tokens from the engine's own KV GiB (dense cases): "
        + ", ".join(f"{i} {e:+.2f}%" for i, e in tk)
        + (f"; max |err| {max(abs(e) for _, e in tk):.2f}%" if tk else "")
    )
    for label, key, vkey in (("in-sample", "pred_kv", "verdict"), ("leave-one-out", "loo_kv", "loo_verdict")):
        s = summary(rows, key, vkey)
        print(
            f"\n{label}: KV GiB |err| over {s['kv_cases']} started cases: median {s['median']:.1f}%, "
            f"p90 {s['p90']:.1f}%; capacity failures predicted ok: {s['fail_missed']}; "
            f"started cases predicted fail: {s['started_pred_fail']}/{s['started']}"
        )
        print(f"  verdict \\ outcome {'ok':>5} {'fail':>5}")
        for v in ("ok", "risky", "fail"):
            print(f"  {v:17} {s['confusion'][(v, 'ok')]:5d} {s['confusion'][(v, 'fail')]:5d}")
    print("\nnot replayed:")
    for c in cases:
        gid = c["id"]
        if gid in REPLAY:
            continue
        why = SKIP.get(gid) or (
            f"engine {c.get('engine')}: not vLLM" if c.get("engine") != "vllm" else "UNCLASSIFIED"
        )
        print(f"  {gid}: {why}")
    # TGI and SGLang cases of the same file (bench/accuracy_engines.py, runnable on its own too)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import accuracy_engines

    print("\nTGI / SGLang (max_batch_total_tokens / max_total_num_tokens):")
    accuracy_engines.main([str(a.cases)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
