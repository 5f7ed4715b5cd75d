"""End-to-end capacity planning: the seeds' exercise, --compare and --sweep tables from the memory model, the
simulate command. Offline (bundled model catalogue)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kvlint.capacity.cli import run_plan_extras, simulate
from kvlint.capacity.compare import compare
from kvlint.capacity.context import CapacityError, resolve, usable_blocks
from kvlint.capacity.report import build_report
from kvlint.capacity.sweep import SweepError, parse_sweep, sweep
from kvlint.capacity.workload import WorkloadSpec
from kvlint.memory.vllm import plan_vllm_detailed
from kvlint.pipeline import Options

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "capacity"
LLAMA = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32k"]
PHI = ["vllm", "serve", "microsoft/Phi-3.5-mini-instruct", "--max-model-len", "16k"]


def _opts(acc: str | None = "h100") -> Options:
    return Options(accelerator=acc, allow_hub=False)


@pytest.mark.parametrize("argv", [LLAMA, PHI], ids=["llama-8b-gqa", "phi-3.5-mha"])
def test_seed_exercise_two_model_shapes_on_80gib(argv: list[str]) -> None:
    ctx = resolve(argv, _opts("h100"))
    assert ctx.accelerator is not None and 79 * 2**30 < ctx.accelerator.memory_bytes < 80 * 2**30
    spec = WorkloadSpec(requests=600, rate=60, seed=2, cancel_prob=0.1, cancel_lag_steps=20)
    rep = build_report(ctx, spec)
    text = rep.render("text")
    p = rep.plan
    # every reserved-memory term and request-shape assumption is stated
    for s in ("weights", "activation peak", "non-torch", "CUDA graphs", "KV cache", "gpu_memory_utilization"):
        assert s in text
    from kvlint.capacity.report import applied_assumptions

    for a in [*applied_assumptions(p), *spec.assumptions()]:
        assert a in text
    # --max-model-len 32k was given: the derived-length default did not apply and is not listed
    assert p.max_model_len_source == "user" and "derived max_model_len" not in text
    assert f"{p.num_blocks:,} blocks ({p.num_blocks - 1:,} usable" in text
    # the simulator runs on the planned cache
    assert rep.config.num_blocks == usable_blocks(p) and rep.config.block_size == p.block_size
    assert rep.paged.peak_blocks <= rep.config.num_blocks
    # sensitivity to p95 output length: four runs, occupancy grows with the p95
    sens = rep.sensitivity
    assert [round(s.factor, 1) for s in sens] == [0.5, 1.0, 2.0, 4.0]
    assert "Sensitivity to p95 output length" in text
    peaks = [s.result.peak_blocks for s in sens]
    pressure = [(s.result.peak_blocks, s.result.preemptions, s.result.delay_percentile(0.95)) for s in sens]
    assert peaks[0] <= peaks[1] <= peaks[3] <= rep.config.num_blocks
    assert pressure[3] > pressure[0]  # more blocks, or (cache full) more preemptions / queueing
    # paging beats the contiguous reservation
    assert rep.paged.peak_running > rep.contiguous.peak_running
    assert rep.contiguous.delay_percentile(0.95) >= rep.paged.delay_percentile(0.95)


def test_two_shapes_differ_in_kv_per_token() -> None:
    a, b = resolve(LLAMA, _opts()), resolve(PHI, _opts())
    assert a.plan and b.plan
    # Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 x 2 B; Phi-3.5-mini: 32 layers x 32 KV heads x 96 x 2 x 2 B
    assert a.plan.kv_bytes_per_token == 32 * 8 * 128 * 2 * 2
    assert b.plan.kv_bytes_per_token == 32 * 32 * 96 * 2 * 2


def test_compare_rows_come_from_the_memory_model() -> None:
    ctx = resolve(LLAMA, _opts(None))
    rows = compare(ctx, ["h100", "l4", "a100"])
    assert {(r.accelerator, r.tp, r.kv_cache_dtype) for r in rows} >= {
        ("nvidia-h100-sxm5-80gb", 1, "auto"),
        ("nvidia-h100-sxm5-80gb", 8, "fp8"),
        ("nvidia-l4", 2, "auto"),
    }
    # vLLM 0.33 runs an fp8 KV cache on the A100 (FlashInfer): the row is there and not refused
    assert any(
        r.kv_cache_dtype == "fp8" and r.accelerator.startswith("nvidia-a100") and r.verdict != "refused"
        for r in rows
    )
    from kvlint.accelerators import lookup

    block = {}
    for r in rows:
        acc = lookup(r.accelerator)
        assert acc is not None
        d = plan_vllm_detailed(
            dataclasses.replace(ctx.settings, tensor_parallel_size=r.tp, kv_cache_dtype=r.kv_cache_dtype),
            ctx.model,
            acc.memory_bytes,
            gpu_name=acc.name,
            compute_capability=acc.compute_capability,
        )
        assert (
            r.verdict != "refused"
        )  # no dtype these GPUs refuse (tests/test_fleet_compat.py covers refusals)
        assert (r.fits, r.verdict, r.weights_bytes, r.kv_cache_bytes, r.kv_tokens) == (
            d.fits,
            {"ok": "fits", "risky": "risky", "fail": "fails"}[d.verdict],
            d.plan.weights_bytes,
            d.plan.kv_cache_bytes,
            d.plan.capacity_tokens,
        )
        block[(r.accelerator, r.tp, r.kv_cache_dtype)] = d.plan.block_size
    by = {(r.accelerator, r.tp, r.kv_cache_dtype): r for r in rows}
    # fp8 halves KV bytes per token: twice the tokens in the same bytes; TP=2 halves weights per GPU
    h1, h1f = by[("nvidia-h100-sxm5-80gb", 1, "auto")], by[("nvidia-h100-sxm5-80gb", 1, "fp8")]
    # vLLM prints int(concurrency x max_model_len) of whole blocks: the fp8 pool floors to one block of the doubled
    # count (64 tokens from 0.34.0)
    assert abs(h1f.kv_tokens - 2 * h1.kv_tokens) <= block[("nvidia-h100-sxm5-80gb", 1, "fp8")]
    assert abs(by[("nvidia-h100-sxm5-80gb", 2, "auto")].weights_bytes * 2 - h1.weights_bytes) < 2**28
    # L4 (22 GiB) barely holds one 32000-token request of the 8B model on one GPU (0.33: FlashInfer sampler, ~4 GiB
    # of KV left), and its largest max_model_len is close to that length
    l4 = by[("nvidia-l4", 1, "auto")]
    assert l4.concurrency < 1.2 and 28000 < l4.largest_max_model_len < 40000


def test_compare_plans_no_tpu_or_gaudi_as_a_cuda_gpu() -> None:
    """``kvlint plan --compare --accelerators h100,google-tpu-v5e,intel-gaudi2`` priced the TPU and the Gaudi as
    NVIDIA GPUs (``gpu_vendor`` knows NVIDIA and AMD only): their rows said ``yes`` with KV figures, while
    ``kvlint plan --accelerator google-tpu-v5e`` and the TGI/SGLang tables say no GPU memory model applies."""
    ctx = resolve(LLAMA, _opts(None))
    rows = compare(ctx, ["h100", "google-tpu-v5e", "intel-gaudi2"], tp_sizes=(1,))
    by = {(r.accelerator, r.kv_cache_dtype): r for r in rows}
    assert by[("nvidia-h100-sxm5-80gb", "auto")].verdict == "fits"
    for acc, name in (("google-tpu-v5e", "Google TPU v5e"), ("intel-gaudi2", "Intel Gaudi 2")):
        for kvd in ("auto", "fp8"):
            r = by[(acc, kvd)]
            assert (r.verdict, r.fits, r.kv_cache_bytes, r.kv_tokens) == ("error", False, 0, 0), (acc, kvd)
            assert r.error == f"{name} is not a CUDA/ROCm GPU; the vllm GPU memory model does not apply"


def test_compare_plans_an_accelerator_named_twice_once() -> None:
    """``--accelerators h100,h100,...`` (or an id and its alias) planned every repetition: 200 names gave a
    1,600-row table and seconds of planning, growing with the argument. Each accelerator is one set of rows."""
    ctx = resolve(LLAMA, _opts(None))
    once = compare(ctx, ["h100"], tp_sizes=(1,))
    rows = compare(ctx, ["h100", "H100", "nvidia-h100-sxm5-80gb"] + ["h100"] * 50, tp_sizes=(1,))
    assert [(r.accelerator, r.tp, r.kv_cache_dtype) for r in rows] == [
        (r.accelerator, r.tp, r.kv_cache_dtype) for r in once
    ]
    both = compare(ctx, ["l4", "h100", "l4"], tp_sizes=(1,))
    assert [r.accelerator for r in both if r.kv_cache_dtype == "auto"] == [
        "nvidia-l4",
        "nvidia-h100-sxm5-80gb",
    ]


def test_sweep_max_model_len_and_kv_dtype() -> None:
    assert parse_sweep("max-model-len=8k..128k") == ("max_model_len", [8000, 16000, 32000, 64000, 128000])
    assert parse_sweep("gpu-memory-utilization=0.8..0.9")[1] == [0.8, 0.85, 0.9]
    with pytest.raises(SweepError):
        parse_sweep("block-size=16")
    ctx = resolve(LLAMA, _opts())
    assert ctx.accelerator is not None and ctx.plan is not None
    dest, pts = sweep(ctx, ctx.accelerator, "max-model-len=8k..128k")
    assert dest == "max_model_len" and [p.max_model_len for p in pts] == [8000, 16000, 32000, 64000, 128000]
    # same cache, concurrency inversely proportional to max_model_len
    assert len({p.num_blocks for p in pts}) == 1
    assert pts[0].concurrency == pytest.approx(ctx.plan.num_blocks * ctx.plan.block_size / 8000)
    assert pts[2].concurrency == pytest.approx(ctx.plan.max_concurrency)
    _, util = sweep(ctx, ctx.accelerator, "gpu-memory-utilization=0.8,0.9")
    assert util[0].kv_cache_bytes < util[1].kv_cache_bytes
    diff = util[1].kv_cache_bytes - util[0].kv_cache_bytes
    assert abs(diff - 0.1 * ctx.accelerator.memory_bytes) < 2**26


def test_sweep_cells_with_more_seqs_than_batched_tokens_are_refused_like_kv204() -> None:
    """vLLM's SchedulerConfig refuses max_num_batched_tokens below an explicit max_num_seqs before sizing anything
    (KV204): a sweep point of max-num-seqs above the command's --max-num-batched-tokens, or of max-num-batched-tokens
    below its --max-num-seqs, is refused with KV204, not a fit; points at or below the limit are planned."""
    ctx = resolve([*LLAMA, "--max-num-batched-tokens", "2048", "--engine-version", "0.11.0"], _opts())
    assert ctx.accelerator is not None
    _, pts = sweep(ctx, ctx.accelerator, "max-num-seqs=256,2048,4096")
    assert [p.verdict == "refused" for p in pts] == [False, False, True]
    assert pts[2].refused_by == "KV204" and not pts[2].fits
    assert (
        "max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096)" in pts[2].reason
    )
    ctx2 = resolve([*LLAMA, "--max-num-seqs", "512"], _opts())
    assert ctx2.accelerator is not None
    _, pts2 = sweep(ctx2, ctx2.accelerator, "max-num-batched-tokens=256,512,8192")
    assert [p.refused_by for p in pts2] == ["KV204", "", ""]
    # a default max_num_seqs is not judged (releases lower it to the batched tokens), as KV204 does not
    _, pts3 = sweep(resolve(LLAMA, _opts()), ctx2.accelerator, "max-num-batched-tokens=256")
    assert pts3[0].refused_by != "KV204"


def test_run_plan_extras_markdown_and_errors(tmp_path: Path) -> None:
    text = run_plan_extras(
        LLAMA,
        _opts(),
        compare=True,
        accelerators=["h100"],
        sweep=["kv-cache-dtype=auto,fp8"],
        fmt="markdown",
        plot=None,
    )
    assert "| accelerator | TP |" in text and "## Sweep of kv-cache-dtype" in text
    with pytest.raises(CapacityError):
        run_plan_extras(
            LLAMA,
            _opts(None),
            compare=False,
            accelerators=None,
            sweep=["max-num-seqs=64,128"],
            fmt="text",
            plot=None,
        )
    with pytest.raises(ValueError):
        run_plan_extras(
            LLAMA, _opts(), compare=True, accelerators=["no-such-gpu"], sweep=[], fmt="text", plot=None
        )


def test_simulate_cli_end_to_end() -> None:
    runner = CliRunner()
    args = [
        "--accelerator",
        "h100",
        "--offline",
        "--requests",
        "300",
        "--rate",
        "50",
        "--seed",
        "4",
        "--prefix-groups",
        "2",
        "--prefix-tokens",
        "512",
        "--prefix-share",
        "0.5",
        "--",
        *LLAMA,
    ]
    a = runner.invoke(simulate, args)
    assert a.exit_code == 0, a.output
    assert "Scheduler simulation" in a.output and "Occupancy over time" in a.output
    b = runner.invoke(simulate, args)
    assert a.output == b.output  # deterministic for a seed
    md = runner.invoke(simulate, ["--format", "markdown", "--no-sensitivity", *args])
    assert md.exit_code == 0 and "| metric | paged (vLLM) | contiguous |" in md.output


def test_simulate_cli_trace_and_bad_input() -> None:
    runner = CliRunner()
    r = runner.invoke(
        simulate, ["--accelerator", "h100", "--offline", "--trace", str(FIX / "trace.csv"), "--", *LLAMA]
    )
    assert r.exit_code == 0, r.output
    assert "8 requests" in r.output and "empirical from 8 trace rows" in r.output
    # the 40000-token prompt row exceeds max_model_len 32000
    assert re.search(r"rejected: prompt\+output > max_model_len\s+1\s+1\n", r.output)
    bad = runner.invoke(
        simulate, ["--accelerator", "h100", "--offline", "--trace", str(FIX / "bad_trace.csv"), "--", *LLAMA]
    )
    assert bad.exit_code == 2 and "bad_trace.csv:3" in bad.output and "Traceback" not in bad.output
    bad2 = runner.invoke(simulate, ["--accelerator", "nope", "--", *LLAMA])
    assert bad2.exit_code == 2 and "unknown accelerator" in bad2.output
    bad3 = runner.invoke(
        simulate, ["--accelerator", "h100", "--offline", "--output", "gauss:3", "--", *LLAMA]
    )
    assert bad3.exit_code == 2 and "gauss:3" in bad3.output


def test_plot_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "cap.svg"
    r = CliRunner().invoke(
        simulate,
        [
            "--accelerator",
            "h100",
            "--offline",
            "--requests",
            "100",
            "--no-sensitivity",
            "--plot",
            str(out),
            "--",
            *LLAMA,
        ],
    )
    assert r.exit_code == 0, r.output
    assert out.exists() and out.read_text().lstrip().startswith("<?xml")


# ---- kvlint/report/plan_text.py: bar width and per-engine/per-version log lines -------------------------------

_PT_FIX = Path(__file__).resolve().parent.parent / "fixtures"
_PT_MODELS = (str(_PT_FIX / "tgi" / "models"), str(_PT_FIX / "plan" / "models"))


def _pt_vllm(version: str, total_gib: float = 79.19, **kw: object):
    from kvlint.memory.vllm import VllmSettings, plan_vllm
    from kvlint.models import resolve_model

    m = resolve_model("meta-llama/Llama-3.1-8B", model_dirs=_PT_MODELS, allow_hub=False)
    s = VllmSettings(version=version, **kw)  # type: ignore[arg-type]
    return plan_vllm(s, m, int(total_gib * 2**30), gpu_name="H100", compute_capability="9.0")


def _bar_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("["))


@pytest.mark.parametrize("width", [10, 40, 60])
def test_plan_text_bar_is_exactly_width_when_parts_exceed_total(width: int) -> None:
    from kvlint.report.plan_text import render_plan_text

    p = _pt_vllm("0.11.0")
    # weights 1000x the device: the old code drew ~width*1000 'W' characters
    big = dataclasses.replace(p, weights_bytes=p.total_bytes * 1000, kv_cache_bytes=-p.total_bytes)
    t = render_plan_text(big, width=width)
    bar = _bar_line(t)
    assert len(bar) == width + 2 and set(bar[1:-1]) == {"W"}
    assert "over the device total" in t
    colored = render_plan_text(big, width=width, color=True)
    assert re.sub(r"\x1b\[[0-9;]*m", "", _bar_line(colored)) == bar
    # a normal plan fills exactly width too and does not claim to be over the total
    ok = render_plan_text(p, width=width)
    assert len(_bar_line(ok)) == width + 2 and "over the device total" not in ok


@pytest.mark.parametrize(
    ("version", "two_lines"),
    [
        ("0.8.5", True),
        ("0.11.0", True),
        ("0.27.0", True),
        ("0.28.0", False),
        ("0.29.0", False),
        ("0.33.0", False),
    ],
)
def test_plan_text_v1_capacity_lines_follow_version(version: str, two_lines: bool) -> None:
    from kvlint.report.plan_text import render_plan_text

    p = _pt_vllm(version)
    assert p.era == "v1"
    lines = render_plan_text(p).splitlines()
    size = f"GPU KV cache size: {p.capacity_tokens:,} tokens"
    conc = f"Maximum concurrency for {p.max_model_len:,} tokens per request: {p.max_concurrency:.2f}x"
    if two_lines:
        assert size in lines and conc in lines
    else:
        assert f"{size}, {conc}" in lines and size not in lines and conc not in lines
    assert lines[0].startswith(f"vLLM {version} (V1)")


def test_plan_text_v0_prints_gpu_blocks() -> None:
    from kvlint.report.plan_text import render_plan_text

    p = _pt_vllm("0.6.3")
    assert p.era == "v0"
    lines = render_plan_text(p).splitlines()
    assert f"# GPU blocks: {p.num_blocks}" in lines
    assert (
        f"Maximum concurrency for {p.max_model_len:,} tokens per request: {p.max_concurrency:.2f}x" in lines
    )
    assert not any("KV cache size" in line for line in lines)


def test_plan_text_tgi_and_sglang_use_their_own_terms() -> None:
    from kvlint.accelerators import lookup
    from kvlint.engines import parse_command_line
    from kvlint.memory.sglang import plan_sglang
    from kvlint.memory.tgi import plan_tgi
    from kvlint.models import resolve_model
    from kvlint.numbers import fraction
    from kvlint.report.plan_text import render_plan_text

    acc = lookup("h100-80gb")
    m = resolve_model("meta-llama/Llama-3.1-8B", model_dirs=_PT_MODELS, allow_hub=False)
    ts = parse_command_line(["text-generation-launcher", "--model-id", "x"], "3.3.0")
    ts.version = "3.3.0"
    tp = plan_tgi(
        ts, m, acc.memory_bytes, gpus=1, gpu_name=acc.name, compute_capability=acc.compute_capability
    )
    t = render_plan_text(tp)
    assert "vLLM" not in t and "gpu_memory_utilization" not in t and t.startswith("TGI 3.3.0")
    assert "cuda_memory_fraction 1.00 x wiggle room 0.90" in t
    assert f"Setting max batch total tokens to {tp.capacity_tokens}" in t.splitlines()
    assert "GPU KV cache size" not in t

    ss = parse_command_line(["python", "-m", "sglang.launch_server", "--model-path", "x"], "0.5.23")
    ss.version = "0.5.23"
    sp = plan_sglang(ss, m, acc.memory_bytes, gpus=1)
    s = render_plan_text(sp)
    assert "vLLM" not in s and "gpu_memory_utilization" not in s and s.startswith("SGLang 0.5.23")
    assert f"mem_fraction_static {fraction(sp.gpu_memory_utilization)}" in s  # 0.83: two decimals when exact
    assert f"KV Cache is allocated. #tokens: {sp.capacity_tokens}" in s.splitlines()


def _plan_cli(*args: str) -> Any:
    from kvlint.cli import main

    return CliRunner().invoke(main, ["plan", "--offline", *args])


def test_plan_format_markdown_is_the_plan_with_its_exit_status() -> None:
    """`kvlint plan --format markdown` without --compare/--sweep printed an empty line and exited 0, even for a
    plan that fails; it is the same plan as --format json, as Markdown, with the same exit status."""
    import json

    for argv, code in (
        (["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "32768"], 0),
        (["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct"], 1),
    ):
        common = ["--accelerator", "h100", "--engine-version", "0.11.0"]
        doc = json.loads(_plan_cli(*common, "--format", "json", "--", *argv).stdout)
        r = _plan_cli(*common, "--format", "markdown", "--", *argv)
        assert r.exit_code == code, r.output
        assert r.stdout.startswith("## kvlint plan: vllm 0.11.0 · model `" + argv[2] + "`")
        assert f"KV cache: {doc['kv']['capacity_tokens']:,} tokens" in r.stdout
        assert f"| KV cache | {doc['memory']['kv_cache_bytes'] / 2**30:.2f} |" in r.stdout
        assert f"**verdict: {doc['verdict']}**" in r.stdout
        assert {d["rule"] for d in doc["diagnostics"]} == set(
            re.findall(r"^\| \w+ \| (KV\d+) \|", r.stdout, re.M)
        )


def test_plan_with_data_parallel_engines_says_what_the_replica_holds() -> None:
    """vLLM's --data-parallel-size runs that many engines, each with the KV cache the plan shows: the text says
    the replica's total, and a TP remedy counts the GPUs of every data-parallel engine in the pod (it said 4
    GPUs for TP 4 x DP 2)."""
    import json

    argv = ["vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "--data-parallel-size", "2"]
    common = ["--accelerator", "h100", "--engine-version", "0.11.0", "--gpus", "4"]
    doc = json.loads(_plan_cli(*common, "--format", "json", "--", *argv, "-tp", "2").stdout)
    dp, tp = doc["parallel"]["data_parallel_size"], doc["parallel"]["tensor_parallel_size"]
    assert (dp, tp) == (2, 2)
    text = _plan_cli(*common, "--", *argv, "-tp", "2").stdout
    assert f"{dp * doc['kv']['capacity_tokens']:,} KV tokens on the replica's {dp * tp} GPUs" in text
    fix = next(d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV103")
    # a bare command has no pod: "GPUs", not "GPUs per pod" (tests/test_plan_bare_command.py)
    m = re.search(r"--tensor-parallel-size (\d+) \(and (\d+) GPUs,", fix)
    assert m is not None, fix
    assert int(m.group(2)) == int(m.group(1)) * dp
    single = _plan_cli(*common, "--", "vllm", "serve", "meta-llama/Llama-3.3-70B-Instruct", "-tp", "2").stdout
    assert "data parallel" not in single


def test_kv104_names_the_data_parallel_engine_not_the_replica() -> None:
    """KV104 says whose KV cache holds the tokens: with --data-parallel-size 2 the replica has two engines, each
    with the capacity the plan shows, so "tokens per replica" was half the replica's tokens."""
    import json

    argv = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "20480"]
    common = ["--accelerator", "l4", "--engine-version", "0.11.0", "--format", "json", "--"]
    for extra, dp in (([], 1), (["--data-parallel-size", "2"], 2)):
        doc = json.loads(_plan_cli(*common, *argv, *extra).stdout)
        assert doc["parallel"]["data_parallel_size"] == dp
        (msg,) = [d["message"] for d in doc["diagnostics"] if d["rule"] == "KV104"]
        tokens = f"{doc['kv']['capacity_tokens']:,} tokens per "
        if dp == 1:
            assert tokens + "replica on" in msg
        else:
            assert tokens + f"data-parallel engine ({dp} per replica" in msg and "per replica on" not in msg
