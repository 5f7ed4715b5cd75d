"""Replay the ground-truth vLLM start-ups through ``kvlint plan`` as a user would type them, next to the benchmark.

Usage: ``python bench/plan_cli.py [--cases PATH] [--models DIR]``

For every case :mod:`accuracy` replays (``accuracy.REPLAY``), the case's settings (:func:`accuracy.case_settings`)
are written back as the command line a user types after ``kvlint plan --``: environment switches first
(``VLLM_USE_V1=0``), then ``vllm serve MODEL`` and its flags, with ``--accelerator``, ``--gpu-memory`` (the total the
engine printed, when it did) and ``--engine-version`` as plan options. The command runs in-process
(:class:`click.testing.CliRunner`, ``--format json``) and its KV GiB and token capacity are printed beside the
benchmark's direct replay (:func:`accuracy.plan_case`) and what the engine printed (:func:`accuracy.reported`,
cite the ``gt-NNN`` id). A difference between the CLI and the direct replay is a difference between what a user
gets and what the accuracy figures describe. Benchmark figures, not tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy  # noqa: E402

from kvlint.cli import main as kvlint_main  # noqa: E402
from kvlint.memory.vllm import VllmSettings  # noqa: E402

GiB = 1 << 30

#: VllmSettings field -> vLLM flag, for the fields a replay sets (value flags; booleans below).
_FLAGS = (
    ("tensor_parallel_size", "--tensor-parallel-size", 1),
    ("pipeline_parallel_size", "--pipeline-parallel-size", 1),
    ("data_parallel_size", "--data-parallel-size", 1),
    ("max_model_len", "--max-model-len", None),
    ("gpu_memory_utilization", "--gpu-memory-utilization", None),
    ("kv_cache_dtype", "--kv-cache-dtype", "auto"),
    ("dtype", "--dtype", "auto"),
    ("quantization", "--quantization", None),
    ("max_num_seqs", "--max-num-seqs", None),
    ("max_num_batched_tokens", "--max-num-batched-tokens", None),
    ("block_size", "--block-size", None),
)


#: Replay settings no command line expresses, left out of the typed command: ``mxfp4_backend`` is what an install
#: lacks (gt-007: a pip install of vLLM 0.11.0 without FlashInfer and ``triton_kernels`` runs MXFP4 MoE with Marlin;
#: 0.11.0 reads no variable for it). :func:`typed_replay` is the replay such a command describes.
UNTYPED = ("mxfp4_backend",)


def typed_replay(r: accuracy.Replay) -> accuracy.Replay:
    """The replay without its :data:`UNTYPED` settings: what the typed command of the case plans."""
    import dataclasses

    return dataclasses.replace(r, settings={k: v for k, v in r.settings.items() if k not in UNTYPED})


def typed_command(case: dict[str, Any], r: accuracy.Replay) -> tuple[list[str], list[str]]:
    """``(plan options, command after --)`` a user would type for one replayed case."""
    s: VllmSettings = accuracy.case_settings(case, r)
    opts = ["--offline"]
    for base in (accuracy.FIXTURE_MODELS, accuracy.LOCAL_MODELS):
        opts += ["--model-dir", str(base)]
    total = (case.get("gpu") or {}).get("total_gib_reported")
    if r.gpu in accuracy.EXTRA_GPUS:
        total = total or accuracy.EXTRA_GPUS[r.gpu][1]
    else:
        opts += ["--accelerator", r.gpu]
    if total:
        opts += ["--gpu-memory", f"{total}GiB"]
    if not s.version_assumed:
        opts += ["--engine-version", s.version]
    env = [] if s.use_v1 is None else [f"VLLM_USE_V1={int(s.use_v1)}"]
    if (
        s.flashinfer_sampler is not None
    ):  # the sampler the case's install runs (gt-007: no FlashInfer package)
        env.append(f"VLLM_USE_FLASHINFER_SAMPLER={int(s.flashinfer_sampler)}")
    model = r.model_dir if "/" in r.model_dir else r.model_dir.replace("--", "/", 1)  # a path, or org--name
    cmd = [*env, "vllm", "serve", model]
    for name, flag, default in _FLAGS:
        value = getattr(s, name)
        if value is not None and value != default:
            cmd += [flag, str(value)]
    if s.enforce_eager:
        cmd.append("--enforce-eager")
    if s.enable_expert_parallel:
        cmd.append("--enable-expert-parallel")
    return opts, cmd


def run_cli(opts: list[str], cmd: list[str]) -> dict[str, Any] | str:
    """The JSON plan of ``kvlint plan OPTS --format json -- CMD``, or the error text."""
    r = CliRunner().invoke(kvlint_main, ["plan", *opts, "--format", "json", "--", *cmd])
    try:
        return dict(json.loads(r.output))
    except ValueError:
        return r.output.strip().splitlines()[-1] if r.output.strip() else f"exit {r.exit_code}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    default_cases = (
        accuracy.SHARED_CASES
        if accuracy.SHARED_CASES.is_file()
        else accuracy.ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml"
    )
    ap.add_argument("--cases", type=Path, default=default_cases)
    ap.add_argument("--models", type=Path, default=None)
    a = ap.parse_args(argv)
    mdir = accuracy.models_dir(a.models)
    cases = {c["id"]: c for c in accuracy.load_cases(a.cases)}
    print(
        f"{'case':7} {'KV cli':>7} {'KV bench':>8} {'KV rep':>7} {'err%':>6} {'tok cli':>9} {'tok rep':>9} "
        f"{'verdict':>7} {'outcome':>7}  command"
    )
    differ = 0
    print("(a replay's settings no command expresses are left out of both: " + ", ".join(UNTYPED) + ")")
    for gid, r in accuracy.REPLAY.items():
        case = cases.get(gid)
        if case is None:
            continue
        opts, cmd = typed_command(case, r)
        if a.models:
            opts = ["--model-dir", str(a.models), *opts]
        out = run_cli(opts, cmd)
        d = accuracy.plan_case(case, typed_replay(r), mdir)
        rep = accuracy.reported(case, d)
        if isinstance(out, str):
            differ += 1
            print(f"{gid:7} CLI error: {out}")
            continue
        kv = out["memory"]["kv_cache_bytes"] / GiB
        bench = d.plan.kv_cache_bytes / GiB
        same = abs(kv - bench) < 0.005
        differ += not same
        err = f"{(kv - rep['kv']) / rep['kv'] * 100:+6.1f}" if rep["kv"] else "     -"
        print(
            f"{gid:7} {kv:7.2f} {bench:8.2f}{' ' if same else '*'}{rep['kv'] or 0:7.2f} {err} "
            f"{out['kv']['capacity_tokens']:9d} {rep['tok'] or 0:9d} {out['verdict']:>7} {case['outcome']:>7}  "
            f"{' '.join(cmd)}"
        )
    print(f"\n{differ} case(s) where the CLI differs from the direct replay (* marks a KV difference)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
