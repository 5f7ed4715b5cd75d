"""The fast scheduler simulation (kvlint.capacity.simulate) against a plain step-by-step restatement of the same
scheduler model, kept here as the reference: one loop per step over every running request, explicit token and block
counts per request, no lazy counters, phase buckets, skipped stretches or columns. Random small workloads
(preemption, chunked prefill, prefix caching, cancellation, contiguous mode, max_steps cut-offs) must give every
SimResult field identical. Also: the shared-draw sensitivity workloads equal separately generated ones, and the
occupancy chart equals a per-step loop."""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import replace

import pytest

from kvlint.capacity import render
from kvlint.capacity.simulate import SimConfig, SimResult, simulate, simulate_columns
from kvlint.capacity.workload import (
    LengthDist,
    Request,
    RequestColumns,
    WorkloadSpec,
    generate,
    generate_columns,
    generate_output_variants,
)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


class _Req:
    """Reference per-request state: tokens computed (``c``) and generated (``g``), blocks held."""

    def __init__(self, r: Request, eff_out: int) -> None:
        self.r = r
        self.eff_out = eff_out
        self.state = "waiting"
        self.c = 0
        self.g = 0
        self.target = r.prompt
        self.own = 0
        self.shared = 0
        self.preempted = 0
        self.admitted = False


def reference(requests: list[Request], cfg: SimConfig) -> SimResult:
    """The scheduler model of kvlint.capacity.simulate's docstring, one step at a time."""
    bs = cfg.block_size
    contiguous = cfg.mode == "contiguous"
    reserve = _cdiv(cfg.max_model_len, bs)
    prefix_on = cfg.enable_prefix_caching and not contiguous
    res = SimResult(config=cfg)
    lag = max(0, cfg.cancel_lag_steps)
    free = cfg.num_blocks
    # evictable blocks of each prefix chain (those no running request hit), least recently released first
    cached: OrderedDict[int, int] = OrderedDict()
    group_blocks: dict[int, int] = {}  # length of each cached prefix chain
    running: list[_Req] = []  # admission order
    waiting: list[_Req] = []
    all_reqs: list[_Req] = []
    step = arr = steps_run = idle = 0
    peak = peak_running = 0

    def cached_total() -> int:
        return sum(cached.values())

    def held(grp: int) -> int:
        """The longest hit on ``grp``'s chain among running requests (blocks)."""
        return max((q.shared for q in running if q.r.group == grp), default=0)

    def take(k: int) -> bool:
        nonlocal free
        if k <= 0:
            return True
        if free + cached_total() < k:
            return False
        while free < k:
            grp, nb = cached.popitem(last=False)
            free += nb
            if held(grp):
                group_blocks[grp] = held(grp)
            else:
                del group_blocks[grp]
        free -= k
        return True

    def release(q: _Req) -> None:
        """q (no longer running) frees its blocks; the chain blocks only it held become evictable."""
        nonlocal free
        free += q.own
        q.own = 0
        if q.shared:
            grp = q.r.group
            if held(grp) < q.shared:
                cached[grp] = group_blocks[grp] - held(grp)
                cached.move_to_end(grp)
            q.shared = 0

    def preempt_newest() -> _Req:
        victim = running.pop()
        release(victim)
        res.preemptions += 1
        res.recomputed_tokens += victim.c
        victim.state = "waiting"
        victim.target = victim.r.prompt + victim.g
        victim.c = 0
        victim.preempted += 1
        waiting.insert(0, victim)
        return victim

    def register_prefix(q: _Req) -> None:
        grp = q.r.group
        nb = q.r.prefix // bs
        if prefix_on and grp >= 0 and not q.shared and nb and grp not in group_blocks and q.c >= nb * bs:
            q.own -= nb
            q.shared = nb
            group_blocks[grp] = nb

    def prefill_done(q: _Req) -> None:
        q.g += 1  # the prefill's forward pass samples one output token
        q.state = "decode"

    while True:
        while arr < len(requests) and requests[arr].arrival <= step:
            r = requests[arr]
            arr += 1
            res.prompt_tokens += r.prompt
            if r.prompt + r.output > cfg.max_model_len:
                res.rejected_too_long += 1
                continue
            if (reserve if contiguous else _cdiv(r.prompt + r.output - 1, bs)) > cfg.num_blocks:
                res.rejected_no_fit += 1
                continue
            e = r.output if r.cancel_at < 0 else min(r.output, r.cancel_at + 1 + lag)
            if e < r.output:
                res.cancel_lag_tokens += e - (r.cancel_at + 1)
            q = _Req(r, e)
            all_reqs.append(q)
            waiting.append(q)
        if not running and not waiting:
            if arr >= len(requests):
                break
            idle += requests[arr].arrival - step
            step = requests[arr].arrival
            continue
        steps_run += 1
        if steps_run > cfg.max_steps:
            break
        preempted = False
        # decoders that generated their last token leave at the start of the step
        for q in [q for q in running if q.state == "decode" and q.g >= q.eff_out]:
            running.remove(q)
            release(q)
            q.state = "done"
            res.generated_tokens += q.eff_out
            if q.eff_out < q.r.output:
                res.cancelled += 1
            else:
                res.completed += 1
        # every decoder computes one token; one whose blocks are full takes a new block first
        decoding = [q for q in running if q.state == "decode"]
        for q in decoding:
            if q.state != "decode" or contiguous or q.c % bs:
                continue
            while not take(1):
                preempted = True
                if preempt_newest() is q:
                    break
            if q.state == "decode":
                q.own += 1
        scheduled = [q for q in decoding if q.state == "decode"]
        budget = cfg.max_num_batched_tokens - len(scheduled)
        # prefill chunks of running requests, oldest first
        for q in [q for q in running if q.state == "prefill"]:
            if budget <= 0:
                break
            if q.state != "prefill":
                continue
            chunk = min(q.target - q.c, budget)
            need = 0 if contiguous else _cdiv(q.c + chunk, bs) - q.own - q.shared
            while not take(need):
                preempted = True
                if preempt_newest() is q:
                    break
            if q.state != "prefill":
                continue
            q.own += max(need, 0)
            q.c += chunk
            budget -= chunk
            register_prefix(q)
            if q.c >= q.target:
                prefill_done(q)
        # admission, first come first served, none in a step that preempted
        while not preempted and waiting and budget > 0 and len(running) < cfg.max_num_seqs:
            q = waiting[0]
            grp = q.r.group
            hit_blocks = 0
            if prefix_on and grp >= 0 and grp in group_blocks:
                hit_blocks = min(group_blocks[grp], (q.target - 1) // bs, q.r.prefix // bs)
            chunk = min(q.target - hit_blocks * bs, budget)
            need = reserve if contiguous else _cdiv(hit_blocks * bs + chunk, bs) - hit_blocks
            revive = max(0, hit_blocks - held(grp))  # hit blocks no running request holds: evictable ones
            if need > free + cached_total() - revive:
                if not running:
                    waiting.pop(0)
                    q.state = "done"
                    res.rejected_no_fit += 1
                    continue
                break
            waiting.pop(0)
            if hit_blocks:
                if revive:
                    cached[grp] -= revive
                    if not cached[grp]:
                        del cached[grp]
                q.shared = hit_blocks
                res.prefix_hit_tokens += hit_blocks * bs
            running.append(q)  # before taking blocks: an eviction leaves the blocks q hit
            take(need)
            q.own = need
            q.c = hit_blocks * bs + chunk
            budget -= chunk
            q.state = "prefill"
            if not q.admitted:
                q.admitted = True
                res.queue_delay.append(step - q.r.arrival)
            register_prefix(q)
            if q.c >= q.target:
                prefill_done(q)
        for q in scheduled:
            if q.state == "decode":
                q.c += 1
                q.g += 1
        in_use = cfg.num_blocks - free - cached_total()
        res.occupancy.append(in_use)
        res.occ_steps.append(step)
        if in_use > peak:
            peak = in_use
            res.peak_blocks, res.peak_step = in_use, step
            res.tokens_at_peak = sum(q.c for q in running)
        peak_running = max(peak_running, len(running))
        step += 1
    res.steps = step
    res.peak_running = peak_running
    res.preempted_requests = sum(1 for q in all_reqs if q.preempted)
    vals = sorted(res.occupancy)
    total = len(vals) + idle
    if total:
        k = int(0.95 * total)
        res.p95_blocks = 0 if k < idle else vals[min(len(vals) - 1, k - idle)]
        res.mean_blocks = sum(vals) / total
    return res


def _fields(r: SimResult) -> dict[str, object]:
    out = {}
    for name in r.__dataclass_fields__:
        value = getattr(r, name)
        out[name] = value.tolist() if name in ("occupancy", "occ_steps") else value
    return out


def _random_case(seed: int, tight: bool) -> tuple[list[Request], SimConfig]:
    rng = random.Random(seed)
    bs = rng.choice([1, 2, 3, 4, 7, 16])
    reqs = []
    t = 0
    for i in range(rng.randint(1, 40)):
        t += rng.choice([0, 0, 1, 2, 5, 30])
        p = rng.randint(1, rng.choice([10, 80, 400]))
        o = rng.randint(1, rng.choice([3, 30, 200]))
        cancel = rng.randrange(o) if rng.random() < 0.2 else -1
        grp, pre = -1, 0
        if rng.random() < 0.4:
            grp, pre = rng.randrange(3), min(p, rng.choice([bs, 2 * bs, 40]))
        reqs.append(Request(i, t, p, o, cancel, grp, pre))
    cfg = SimConfig(
        num_blocks=rng.randint(5, 60) if tight else rng.randint(1, 400),
        block_size=bs,
        max_num_seqs=rng.choice([1, 2, 4, 16, 256]),
        max_num_batched_tokens=rng.choice([1, 5, 16, 64, 512, 8192]),
        max_model_len=rng.choice([64, 200, 1000, 4096]),
        mode="paged" if tight or rng.random() < 0.7 else "contiguous",
        enable_prefix_caching=rng.random() < 0.7,
        cancel_lag_steps=rng.choice([0, 0, 3, 50]),
        max_steps=rng.choice([20_000, 20_000, 7, 100, 1000]),
    )
    return reqs, cfg


@pytest.mark.parametrize("tight", [False, True], ids=["any", "few-blocks"])
def test_fast_simulation_equals_step_by_step_reference(tight: bool) -> None:
    preempting = 0
    for seed in range(400):
        reqs, cfg = _random_case(seed, tight)
        want = _fields(reference(reqs, cfg))
        got = _fields(simulate(reqs, cfg))
        assert got == want, (seed, cfg, [k for k in want if got[k] != want[k]])
        preempting += bool(want["preemptions"])
    assert preempting >= (60 if tight else 15)  # the cases do exercise preemption


def test_generated_workload_matches_reference_on_a_contended_cache() -> None:
    spec = WorkloadSpec(
        requests=300,
        rate=300,
        seed=3,
        cancel_prob=0.1,
        cancel_lag_steps=4,
        prefix_groups=3,
        prefix_tokens=200,
        prefix_share=0.5,
    )
    reqs = generate(spec)
    for mode in ("paged", "contiguous"):
        cfg = SimConfig(
            num_blocks=400, max_num_seqs=32, max_num_batched_tokens=1024, max_model_len=8192, mode=mode
        )
        want, got = reference(reqs, cfg), simulate(reqs, cfg)
        assert _fields(got) == _fields(want)
        assert got.completed + got.cancelled + got.rejected_no_fit + got.rejected_too_long == len(reqs)
    assert want.preemptions == 0 and got.peak_running <= 32


def test_columns_give_the_same_requests_and_results() -> None:
    spec = WorkloadSpec(requests=500, rate=80, seed=5, prefix_groups=2, prefix_tokens=64, prefix_share=0.3)
    reqs = generate(spec)
    cols = generate_columns(spec)
    assert cols.requests() == reqs and RequestColumns.of(reqs) == cols
    cfg = SimConfig(num_blocks=300, max_num_seqs=64, max_num_batched_tokens=512, max_model_len=8192)
    assert _fields(simulate_columns(cols, cfg)) == _fields(simulate(reqs, cfg))


@pytest.mark.parametrize(
    "spec",
    [
        WorkloadSpec(requests=2000, rate=20, seed=1),
        WorkloadSpec(
            requests=1500, arrivals="burst", burst_size=9, seed=2, prefix_groups=3, prefix_tokens=90
        ),
        WorkloadSpec(requests=1000, seed=4, prompt=LengthDist("uniform", 1, 500), cancel_prob=0.2),
        WorkloadSpec(requests=800, seed=6, output=LengthDist("fixed", 40)),
    ],
)
def test_sensitivity_variants_equal_separately_generated_workloads(spec: WorkloadSpec) -> None:
    base = spec.output.quantile(0.95)
    variants = [spec.with_output_p95(max(1, round(base * f))) for f in (0.5, 2.0, 4.0)]
    outputs = [spec.output] + [v.output for v in variants]
    got = list(generate_output_variants(spec, outputs))
    assert got == [generate(replace(spec, output=d)) for d in outputs]
    assert got[1:] == [generate(v) for v in variants]
    assert got[0] == generate(spec)


def test_timeline_equals_per_step_maximum() -> None:
    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 400)
        steps = sorted(rng.sample(range(5 * n), n))
        values = [rng.randint(0, 1000) for _ in range(n)]
        width = rng.choice([1, 7, 60])
        first, span = steps[0], steps[-1] - steps[0] + 1
        cols = [0] * width
        for s, v in zip(steps, values, strict=True):
            i = (s - first) * width // span
            cols[i] = max(cols[i], v)
        rows = render.timeline(steps, values, capacity=1000, width=width, height=4).splitlines()
        for row in range(4, 0, -1):
            marks = rows[4 - row].split("|", 1)[1]
            assert marks == "".join("#" if v >= 1000 * (row - 0.5) / 4 else " " for v in cols)
