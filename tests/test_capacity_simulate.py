"""Known-answer and determinism tests of the paged KV-cache scheduler simulation (kvlint.capacity.simulate)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.capacity.simulate import SimConfig, simulate
from kvlint.capacity.workload import (
    LengthDist,
    Request,
    WorkloadError,
    WorkloadSpec,
    generate,
    load_trace,
    parse_length_dist,
)

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "capacity"


def test_one_request_no_contention() -> None:
    # prompt 100, output 29, block 16: prefill in step 0 holds cdiv(100,16)=7 blocks; decode steps 1..28 compute
    # tokens 100..127, the 8th block is taken at step 13 (token index 112); KV at the end = 100+29-1 = 128 tokens.
    r = simulate([Request(0, 0, 100, 29)], SimConfig(num_blocks=100, block_size=16, max_model_len=4096))
    occ = list(r.occupancy)
    assert occ[:13] == [7] * 13
    assert occ[13:29] == [8] * 16
    assert r.peak_blocks == 8 and r.peak_step == 13
    assert r.tokens_at_peak == 113
    assert r.completed == 1 and r.preemptions == 0 and r.queue_delay == [0]
    assert r.steps == 30  # finish handled at the start of step 29


def test_fixed_lengths_block_counts_by_hand() -> None:
    # 6 requests of prompt 40 + output 25 arriving together: each ends at cdiv(40+25-1, 16) = 4 blocks.
    # Prefill: cdiv(40,16)=3 blocks each -> 18 in step 0; all grow to 4 blocks at step 9 (token 48) -> 24.
    reqs = [Request(i, 0, 40, 25) for i in range(6)]
    r = simulate(reqs, SimConfig(num_blocks=1000, block_size=16, max_model_len=4096))
    assert r.occupancy[0] == 18
    assert r.peak_blocks == 24
    assert r.occupancy[8] == 18 and r.occupancy[9] == 24
    assert r.completed == 6 and r.preemptions == 0
    # contiguous reservation of max_model_len: cdiv(4096,16) = 256 blocks each
    c = simulate(reqs, SimConfig(num_blocks=1000, block_size=16, max_model_len=4096, mode="contiguous"))
    assert c.peak_blocks == 3 * 256  # only 3 seats of 256 fit in 1000 blocks
    assert c.peak_running == 3 and max(c.queue_delay) > 0


def test_max_num_batched_tokens_chunks_prefill_and_max_num_seqs_limits() -> None:
    # one prompt of 1000 tokens with a 256-token budget: 4 prefill steps (256*3 + 232)
    r = simulate(
        [Request(0, 0, 1000, 2)], SimConfig(num_blocks=500, max_num_batched_tokens=256, max_model_len=4096)
    )
    assert list(r.occupancy[:4]) == [16, 32, 48, 63]
    r2 = simulate(
        [Request(i, 0, 16, 10) for i in range(5)],
        SimConfig(num_blocks=500, max_num_seqs=2, max_model_len=4096),
    )
    assert r2.peak_running == 2 and r2.completed == 5


def test_burst_must_preempt() -> None:
    # 10 requests of 64+64: 4 blocks each after prefill (40 = the whole cache); every one needs a 5th block at
    # step 1, so the newest running requests are preempted (recompute) and re-admitted later.
    reqs = [Request(i, 0, 64, 64) for i in range(10)]
    r = simulate(reqs, SimConfig(num_blocks=40, block_size=16, max_model_len=4096))
    assert r.occupancy[0] == 40 and r.peak_blocks == 40
    assert r.preemptions >= 2 and r.preempted_requests >= 2 and r.recomputed_tokens > 0
    assert r.completed == 10
    # with room for the final 8 blocks each there is no preemption
    ok = simulate(reqs, SimConfig(num_blocks=80, block_size=16, max_model_len=4096))
    assert ok.preemptions == 0 and ok.peak_blocks == 80


def test_too_long_rejected_and_never_fits() -> None:
    reqs = [Request(0, 0, 3000, 2000), Request(1, 0, 100, 10), Request(2, 0, 900, 100)]
    r = simulate(reqs, SimConfig(num_blocks=20, block_size=16, max_model_len=4096))
    assert r.rejected_too_long == 1  # 5000 > 4096
    assert r.rejected_no_fit == 1  # 999 tokens need 63 blocks > 20
    assert r.completed == 1


def test_prefix_sharing_saves_blocks() -> None:
    # two requests with the same 256-token prefix (16 full blocks), second arrives after the first's prefill
    a = Request(0, 0, 300, 50, group=0, prefix=256)
    b = Request(1, 5, 300, 50, group=0, prefix=256)
    shared = simulate([a, b], SimConfig(num_blocks=200, max_model_len=4096))
    plain = simulate([a, b], SimConfig(num_blocks=200, max_model_len=4096, enable_prefix_caching=False))
    assert shared.prefix_hit_tokens == 256
    assert plain.peak_blocks - shared.peak_blocks == 16


def test_cancel_lag_holds_blocks_longer() -> None:
    base = Request(0, 0, 100, 200, cancel_at=10)
    quick = simulate([base], SimConfig(num_blocks=100, max_model_len=4096, cancel_lag_steps=0))
    slow = simulate([base], SimConfig(num_blocks=100, max_model_len=4096, cancel_lag_steps=50))
    assert quick.cancelled == 1 and slow.cancelled == 1
    assert slow.steps - quick.steps == 50
    assert slow.cancel_lag_tokens == 50 and slow.peak_blocks > quick.peak_blocks


def test_deterministic_under_seed() -> None:
    spec = WorkloadSpec(
        requests=3000,
        rate=200,
        seed=7,
        cancel_prob=0.1,
        cancel_lag_steps=5,
        prefix_groups=3,
        prefix_tokens=300,
        prefix_share=0.4,
    )
    cfg = SimConfig(num_blocks=3000, max_num_seqs=128, max_num_batched_tokens=2048, max_model_len=8192)
    r1, r2 = simulate(generate(spec), cfg), simulate(generate(spec), cfg)
    assert list(r1.occupancy) == list(r2.occupancy)
    assert (r1.preemptions, r1.queue_delay, r1.prefix_hit_tokens) == (
        r2.preemptions,
        r2.queue_delay,
        r2.prefix_hit_tokens,
    )
    assert r1.preemptions > 0  # the workload is tight enough to exercise preemption
    other = simulate(generate(WorkloadSpec(**{**spec.__dict__, "seed": 8})), cfg)
    assert list(other.occupancy) != list(r1.occupancy)


def test_length_distributions() -> None:
    d = parse_length_dist("lognormal:512,2k")
    assert (d.a, d.b) == (512, 2000)
    assert d.quantile(0.5) == 512 and d.quantile(0.95) == 2000
    assert parse_length_dist("uniform:10..20").quantile(0.5) == 15
    assert parse_length_dist("fixed:2K").sample(__import__("random").Random(0)) == 2048
    assert d.with_p95(4000).quantile(0.95) == 4000
    with pytest.raises(WorkloadError):
        parse_length_dist("normal:3")
    reqs = generate(WorkloadSpec(requests=4000, prompt=d, seed=1))
    lens = sorted(r.prompt for r in reqs)
    assert 430 < lens[2000] < 600 and 1600 < lens[3800] < 2500  # sample p50/p95 near the targets
    assert isinstance(LengthDist("fixed", 3).describe(), str)


def test_trace_files() -> None:
    csv_rows, jsonl_rows = load_trace(FIX / "trace.csv"), load_trace(FIX / "trace.jsonl")
    assert csv_rows == jsonl_rows and len(csv_rows) == 8
    assert csv_rows[1].prefix_group == "sys" and csv_rows[1].prefix_tokens == 256
    with pytest.raises(WorkloadError, match=r"bad_trace\.csv:3"):
        load_trace(FIX / "bad_trace.csv")


# ---- `kvlint simulate` numeric options validated by click; only applied assumptions listed -----------------

_CMD = ["--", "vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--rate", "nan"], "'nan' is not a finite number"),
        (["--rate", "inf"], "'inf' is not a finite number"),
        (["--rate", "-inf"], "is not a finite number"),
        (["--rate", "0"], "must be > 0"),
        (["--rate", "abc"], "'abc' is not a number"),
        (["--step-ms", "0"], "must be > 0"),
        (["--requests", "0"], "0 is not in the range 1<=x<=1000000"),
        (["--requests", "-5"], "-5 is not in the range 1<=x<=1000000"),
        (["--burst-size", "0"], "0 is not in the range x>=1"),
        (["--burst-every", "0"], "0 is not in the range x>=1"),
        (["--cancel-prob", "1.5"], "must be <= 1"),
        (["--cancel-prob", "nan"], "is not a finite number"),
        (["--prefix-share", "-0.1"], "must be >= 0"),
        (["--cancel-lag", "-1"], "-1 is not in the range x>=0"),
        (["--prefix-tokens", "-1"], "-1 is not in the range x>=0"),
    ],
)
def test_simulate_rejects_bad_numbers(args: list[str], words: str) -> None:
    from click.testing import CliRunner

    from kvlint.capacity.cli import simulate as simulate_cmd

    res = CliRunner().invoke(simulate_cmd, ["--accelerator", "h100", "--offline", *args, *_CMD])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    assert words in res.output and f"'{args[0]}'" in res.output


def test_simulate_lists_only_applied_max_model_len_assumption() -> None:
    from kvlint.capacity.context import resolve
    from kvlint.capacity.report import build_report
    from kvlint.capacity.workload import WorkloadSpec
    from kvlint.pipeline import Options

    spec = WorkloadSpec(requests=30, rate=10, seed=1)
    opts = Options(accelerator="h100", allow_hub=False)
    model = "meta-llama/Llama-3.1-8B-Instruct"
    user = build_report(
        resolve(["vllm", "serve", model, "--max-model-len", "8192"], opts), spec, sensitivity=False
    )
    text = user.render("text")
    assert user.plan.max_model_len_source == "user" and "derived max_model_len" not in text
    derived = build_report(resolve(["vllm", "serve", model], opts), spec, sensitivity=False)
    assert "derived max_model_len from max_position_embeddings=131072" in derived.render("text")


def test_assumptions_state_the_prefixes_a_trace_gives(tmp_path: Path) -> None:
    """A trace's prefix_group/prefix_tokens columns make shared prefixes (the simulation hits them); the
    request-shape assumptions said "no shared prompt prefixes" because they only read --prefix-*."""
    from kvlint.capacity.workload import empirical_from_trace, generate_columns

    path = tmp_path / "t.csv"
    path.write_text(
        "prompt_tokens,output_tokens,arrival_s,prefix_group,prefix_tokens\n"
        "1000,10,0,sys,800\n1200,10,0.1,sys,800\n500,10,0.2,other,600\n40,10,0.3,,\n"
    )
    rows = load_trace(path)
    prompt, output = empirical_from_trace(rows)
    spec = WorkloadSpec(requests=len(rows), prompt=prompt, output=output, arrivals="trace", trace=tuple(rows))
    cols = generate_columns(spec)
    assert sum(g >= 0 for g in cols.group) == 3  # what the simulation shares
    text = "\n".join(spec.assumptions())
    assert "no shared prompt prefixes" not in text
    assert "3 of 4 rows" in text and "2 prefix groups" in text and "500 to 800 tokens" in text


def test_assumptions_state_that_short_prompts_are_lengthened_to_the_prefix() -> None:
    """--prefix-tokens longer than a drawn prompt lengthens that prompt to prefix + 1 tokens (the generated
    prompts move well above the stated distribution); the assumptions say so."""
    spec = WorkloadSpec(requests=300, seed=1, prefix_groups=2, prefix_tokens=1024, prefix_share=1.0)
    prompts = [r.prompt for r in generate(spec)]
    assert min(prompts) == 1025
    assert "lengthened to 1,025 tokens" in "\n".join(spec.assumptions())


@pytest.mark.parametrize(
    ("version", "flag", "caching"),
    [
        ("0.11.0", None, True),  # V1: on by default
        ("0.11.0", "--no-enable-prefix-caching", False),
        ("0.6.3", None, False),  # V0: off by default
        ("0.6.3", "--enable-prefix-caching", True),
    ],
)
def test_simulate_follows_the_commands_prefix_caching(version: str, flag: str | None, caching: bool) -> None:
    """kvlint simulate modelled prefix-cache hits whatever the command said: --no-enable-prefix-caching and a
    V0 release (prefix caching off by default) still shared the prefixes' blocks."""
    from kvlint.capacity.context import resolve
    from kvlint.capacity.report import build_report
    from kvlint.pipeline import Options

    spec = WorkloadSpec(requests=60, rate=20, seed=1, prefix_groups=2, prefix_tokens=512, prefix_share=1.0)
    opts = Options(accelerator="nvidia-l4", engine_version=version, allow_hub=False)
    argv = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"]
    rep = build_report(resolve(argv + ([flag] if flag else []), opts), spec, sensitivity=False)
    assert rep.config.enable_prefix_caching is caching
    assert (rep.paged.prefix_hit_tokens > 0) is caching
    assert ("Prefix-cache hits" in rep.render("text")) is caching


def test_the_sensitivity_note_says_which_rows_replay_a_trace() -> None:
    """With a trace, only the x1 row of the sensitivity table replays it (the others are drawn: Poisson arrivals,
    no prefix groups); the note under the table said "same seed and arrivals" for every workload."""
    from kvlint.capacity.context import resolve
    from kvlint.capacity.report import build_report
    from kvlint.capacity.workload import empirical_from_trace
    from kvlint.options import Options

    rows = load_trace(FIX / "trace.csv")
    prompt, output = empirical_from_trace(rows)
    spec = WorkloadSpec(requests=len(rows), prompt=prompt, output=output, arrivals="trace", trace=tuple(rows))
    opts = Options(allow_hub=False, accelerator="nvidia-l4")
    ctx = resolve(["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"], opts)
    rep = build_report(ctx, spec, sensitivity=True)
    x1 = [s.result for s in rep.sensitivity if s.factor == 1.0]
    assert x1 == [rep.paged]  # the x1 row is the trace's own run
    text = rep.render("text")
    assert "x1 replays the trace" in text and "without the trace's arrival times or prefix groups" in text
    assert "same seed and arrivals" not in text
    drawn = build_report(ctx, WorkloadSpec(requests=50), sensitivity=True).render("text")
    assert "same seed and arrivals" in drawn and "replays the trace" not in drawn
