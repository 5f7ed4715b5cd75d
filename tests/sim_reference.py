# The paged KV-cache scheduler simulation as it was before the issue-19 optimisation (kvlint at c745b0f,
# kvlint/capacity/simulate.py), kept unchanged as the test oracle of tests/test_simulate_oracle.py: a
# straightforward step-by-step implementation (one heap event per block, every running request visited each
# step). Not part of the package; do not optimise it.
# Its prefix caching still pins a group's whole cached chain for every hit (simulate.py now holds only the hit
# blocks, as vLLM's block pool does); the oracle's generated workloads give all requests of a group the same
# prefix, so every hit is the whole chain and its cases do not reach the difference.
# ruff: noqa
"""Deterministic step-by-step simulation of a paged KV cache under vLLM's V1 scheduler.

What is modelled (restating ``vllm@0.33.0:vllm/v1/core/sched/scheduler.py::Scheduler.schedule`` and
``vllm/v1/core/kv_cache_manager.py::KVCacheManager.allocate_slots``, docs/engine-memory-model.md §1.4/§1.9):

* The cache is ``num_blocks`` blocks of ``block_size`` tokens. A request holds ``cdiv(computed_tokens, block_size)``
  blocks; blocks are allocated as its tokens are scheduled (prefill chunk by chunk, then one token per decode step),
  never for the whole ``max_model_len`` up front.
* Each step has a token budget of ``max_num_batched_tokens`` and at most ``max_num_seqs`` running requests. Running
  requests are served first (one token per decoding request, then prefill chunks in running order, i.e. chunked
  prefill), then waiting requests are admitted first-come-first-served while the budget, the seat limit and free
  blocks allow; a waiting request that does not get blocks blocks the queue (no skipping).
* When a running request cannot get a block, the newest running request is preempted (recompute mode): its blocks are
  freed, it goes to the front of the waiting queue, and on re-admission recomputes prompt + generated tokens. No new
  request is admitted in a step that preempted.
* Prefix caching for shared-prefix groups: the full blocks of a group's prefix are computed once, shared by reference
  count, kept (evictable, counted as free) after the last user finishes, and evicted least-recently-used first when
  free blocks run out. A hit never covers the whole prompt (the last prompt token is always recomputed).
* Requests with ``prompt + output > max_model_len`` are rejected at arrival (the OpenAI frontend's 400 error).
* ``contiguous`` mode instead reserves ``cdiv(max_model_len, block_size)`` blocks per request at admission (no growth,
  no preemption, no sharing): the pre-paging allocation whose fragmentation paging avoids.

Simplifications (stated in reports): one step = one forward pass of fixed wall time; decoding tokens are taken from
the budget before prefill chunks regardless of running order; the V1 null block is subtracted from ``num_blocks`` by
the caller; prefix-cache hits are only modelled for shared-prefix groups (a preempted request's own blocks are not
re-hit on recompute); speculative decoding, LoRA, encoder caches, sliding-window/hybrid groups and async scheduling
are not modelled; a prefix is registered when its first request's prefill passes it (vLLM registers blocks as they
fill, so it can be shared a few steps earlier).

Implementation: decode progress is lazy. A decoding request's token count is ``c_ref + (step - s_ref)``; only the
steps at which it needs a new block or finishes are events on a heap, so the cost is O(events), about
``tokens / block_size``, not O(running requests x steps).
"""

from __future__ import annotations

import heapq
from array import array
from collections import OrderedDict, deque
from dataclasses import dataclass, field

from kvlint.capacity.workload import Request

_WAITING, _PREFILL, _DECODE, _DONE = 0, 1, 2, 3


@dataclass(frozen=True)
class SimConfig:
    """Scheduler and cache settings for one simulation.

    ``num_blocks``: usable KV blocks per replica (vLLM's ``num_gpu_blocks`` minus its null block); ``block_size``
    tokens per block; ``max_num_seqs``, ``max_num_batched_tokens``, ``max_model_len`` as vLLM spells them;
    ``mode`` ``paged`` or ``contiguous``; ``enable_prefix_caching`` (V1 default on); ``cancel_lag_steps``: a
    cancelled request keeps generating (and holding blocks) this many steps after its client disconnected before the
    engine notices the abort; ``max_steps`` a safety stop.
    Raises ValueError from :func:`simulate` when a value is not positive.
    """

    num_blocks: int
    block_size: int = 16
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    max_model_len: int = 8192
    mode: str = "paged"
    enable_prefix_caching: bool = True
    cancel_lag_steps: int = 0
    max_steps: int = 50_000_000


@dataclass
class SimResult:
    """What happened, per replica. Units: blocks, tokens, steps.

    ``occupancy`` blocks in use after scheduling each processed step (``occ_steps`` the step numbers; idle stretches
    with nothing running are skipped and count as zero in ``p95_blocks``/``mean_blocks``). ``tokens_at_peak``: KV
    tokens (logical, per request) cached at the peak step. ``queue_delay`` per admitted request: steps from arrival
    to first scheduling. ``rejected_too_long``: prompt + output > max_model_len. ``rejected_no_fit``: a single
    request that could never get enough blocks even with an empty cache.
    """

    config: SimConfig
    steps: int = 0
    occupancy: array = field(default_factory=lambda: array("i"))
    occ_steps: array = field(default_factory=lambda: array("i"))
    peak_blocks: int = 0
    peak_step: int = 0
    tokens_at_peak: int = 0
    p95_blocks: int = 0
    mean_blocks: float = 0.0
    peak_running: int = 0
    preemptions: int = 0
    preempted_requests: int = 0
    recomputed_tokens: int = 0
    completed: int = 0
    cancelled: int = 0
    cancel_lag_tokens: int = 0
    rejected_too_long: int = 0
    rejected_no_fit: int = 0
    prefix_hit_tokens: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    queue_delay: list[int] = field(default_factory=list)

    def delay_percentile(self, q: float) -> int:
        """The q-quantile (0..1) of queueing delay in steps (0 if nothing was admitted)."""
        if not self.queue_delay:
            return 0
        d = sorted(self.queue_delay)
        return d[min(len(d) - 1, int(q * len(d)))]

    @property
    def utilisation(self) -> float:
        """Peak blocks in use / usable blocks."""
        return self.peak_blocks / self.config.num_blocks if self.config.num_blocks else 0.0


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def simulate(requests: list[Request], config: SimConfig) -> SimResult:
    """Run the scheduler over ``requests`` (sorted by arrival step) until all finish or are rejected.

    Deterministic: no randomness inside (all draws happen in :func:`kvlint.capacity.workload.generate`).
    Raises ValueError for a non-positive ``num_blocks``, ``block_size``, ``max_num_seqs``,
    ``max_num_batched_tokens`` or ``max_model_len``, or an unknown ``mode``.
    """
    cfg = config
    bs = cfg.block_size
    if min(cfg.num_blocks, bs, cfg.max_num_seqs, cfg.max_num_batched_tokens, cfg.max_model_len) <= 0:
        raise ValueError(
            "num_blocks, block_size, max_num_seqs, max_num_batched_tokens, max_model_len must be > 0"
        )
    if cfg.mode not in ("paged", "contiguous"):
        raise ValueError(f"unknown mode {cfg.mode!r} (paged | contiguous)")
    contiguous = cfg.mode == "contiguous"
    reserve = _cdiv(cfg.max_model_len, bs)
    prefix_on = cfg.enable_prefix_caching and not contiguous
    res = SimResult(config=cfg)
    n = len(requests)
    by_id = {r.rid: r for r in requests}
    # per-request state, keyed by rid
    state: dict[int, int] = {}
    c: dict[int, int] = {}  # computed tokens (at s_ref for decoders)
    g: dict[int, int] = {}  # generated tokens (at s_ref for decoders)
    s_ref: dict[int, int] = {}
    target: dict[int, int] = {}  # prefill target tokens
    own: dict[int, int] = {}  # privately held blocks
    shared: dict[int, int] = {}  # blocks referenced from the prefix group
    eff_out: dict[int, int] = {}
    ver: dict[int, int] = {}
    first_sched: dict[int, int] = {}

    free = cfg.num_blocks
    group_blocks: dict[int, int] = {}
    group_ref: dict[int, int] = {}
    lru: OrderedDict[int, int] = OrderedDict()
    cached_total = 0

    running: dict[int, None] = {}
    prefilling: list[int] = []
    waiting: deque[int] = deque()
    heap: list[tuple[int, int, int, int, int]] = []  # (step, kind 0 finish / 1 block, order, rid, version)
    order: dict[int, int] = {}
    order_ctr = 0
    n_dec = 0
    tokens = 0  # logical KV tokens of running requests (decoders counted at step start via lazy sums)
    dec_sched = -1  # decoders scheduled in the current step (-1 while their events are still being processed)
    arr_i = 0
    step = 0
    occ = res.occupancy
    occ_steps = res.occ_steps
    idle_steps = 0

    def avail() -> int:
        return free + cached_total

    def take(k: int) -> bool:
        """Allocate k blocks, evicting cached prefixes LRU first; False if impossible."""
        nonlocal free, cached_total
        if k <= 0:
            return True
        if free + cached_total < k:
            return False
        while free < k:
            grp, nb = lru.popitem(last=False)
            cached_total -= nb
            free += nb
            del group_blocks[grp]
        free -= k
        return True

    def release(rid: int) -> None:
        nonlocal free, cached_total
        free += own[rid]
        own[rid] = 0
        if shared[rid]:
            grp = by_id[rid].group
            group_ref[grp] -= 1
            if group_ref[grp] == 0:
                lru[grp] = group_blocks[grp]
                cached_total += group_blocks[grp]
            shared[rid] = 0

    def cur(rid: int, s: int) -> tuple[int, int]:
        if state[rid] == _DECODE:
            d = s - s_ref[rid]
            return c[rid] + d, g[rid] + d
        return c[rid], g[rid]

    def push_decode(rid: int, s: int) -> None:
        """rid decodes from step s with c[rid], g[rid] at the start of s: push its next event."""
        fin = s + eff_out[rid] - g[rid]
        if contiguous:
            heapq.heappush(heap, (fin, 0, order[rid], rid, ver[rid]))
            return
        need = s + ((-c[rid]) % bs)
        if need < fin:
            heapq.heappush(heap, (need, 1, order[rid], rid, ver[rid]))
        else:
            heapq.heappush(heap, (fin, 0, order[rid], rid, ver[rid]))

    def preempt_tail(s: int) -> int:
        nonlocal n_dec, tokens, dec_sched
        victim, _ = running.popitem()
        cv, gv = cur(victim, s)
        if state[victim] == _DECODE:
            n_dec -= 1
            if dec_sched >= 0:
                dec_sched -= 1
        else:
            prefilling.remove(victim)
        tokens -= cv
        release(victim)
        res.preemptions += 1
        res.recomputed_tokens += cv
        state[victim] = _WAITING
        c[victim] = 0
        g[victim] = gv
        target[victim] = by_id[victim].prompt + gv
        ver[victim] += 1
        waiting.appendleft(victim)
        return victim

    def finish(rid: int, s: int) -> None:
        nonlocal n_dec, tokens
        cv, _ = cur(rid, s)
        if state[rid] == _DECODE:
            n_dec -= 1
        del running[rid]
        tokens -= cv
        release(rid)
        state[rid] = _DONE
        r = by_id[rid]
        if eff_out[rid] < r.output:
            res.cancelled += 1
        else:
            res.completed += 1
        res.generated_tokens += eff_out[rid]

    def prefill_done(rid: int, s: int) -> None:
        """rid computed its prefill target in step s: one output token produced."""
        nonlocal n_dec
        prefilling.remove(rid)
        g[rid] += 1
        if g[rid] >= eff_out[rid]:
            state[rid] = _DECODE  # finishes at the end of this step
            c[rid] -= 1  # cur() at s+1 adds 1 back
            s_ref[rid] = s
            n_dec += 1
            g[rid] -= 1
            heapq.heappush(heap, (s + 1, 0, order[rid], rid, ver[rid]))
            return
        state[rid] = _DECODE
        s_ref[rid] = s + 1
        n_dec += 1
        push_decode(rid, s + 1)

    def maybe_register(rid: int) -> None:
        r = by_id[rid]
        if not prefix_on or r.group < 0 or shared[rid]:
            return
        nb = r.prefix // bs
        if nb and r.group not in group_blocks and c[rid] >= nb * bs:
            own[rid] -= nb
            shared[rid] = nb
            group_blocks[r.group] = nb
            group_ref[r.group] = 1

    steps_run = 0
    while True:
        # arrivals up to this step
        while arr_i < n and requests[arr_i].arrival <= step:
            r = requests[arr_i]
            arr_i += 1
            rid = r.rid
            res.prompt_tokens += r.prompt
            if r.prompt + r.output > cfg.max_model_len:
                res.rejected_too_long += 1
                state[rid] = _DONE
                continue
            worst = reserve if contiguous else _cdiv(r.prompt + r.output - 1, bs)
            if worst > cfg.num_blocks:
                res.rejected_no_fit += 1
                state[rid] = _DONE
                continue
            state[rid] = _WAITING
            c[rid] = g[rid] = own[rid] = shared[rid] = ver[rid] = 0
            s_ref[rid] = 0
            target[rid] = r.prompt
            e = r.output if r.cancel_at < 0 else min(r.output, r.cancel_at + 1 + max(0, cfg.cancel_lag_steps))
            eff_out[rid] = e
            if e < r.output:
                res.cancel_lag_tokens += e - (r.cancel_at + 1)
            waiting.append(rid)
        if not running and not waiting:
            if arr_i >= n:
                break
            nxt = requests[arr_i].arrival
            idle_steps += nxt - step
            step = nxt
            continue
        steps_run += 1
        if steps_run > cfg.max_steps:
            break
        preempted = False
        dec_sched = -1
        # 1. decode events (finishes first, then block needs) in running order
        while heap and heap[0][0] <= step:
            _, kind, _, rid, v = heapq.heappop(heap)
            if v != ver[rid] or state[rid] != _DECODE:
                continue
            if kind == 0:
                finish(rid, step)
                continue
            cv, gv = cur(rid, step)
            while not take(1):
                preempted = True
                if preempt_tail(step) == rid:
                    break
            if state[rid] != _DECODE:
                continue
            own[rid] += 1
            # the new block takes this step's token: re-base the lazy counters at the start of the next step
            c[rid], g[rid], s_ref[rid] = cv + 1, gv + 1, step + 1
            push_decode(rid, step + 1)
        budget = cfg.max_num_batched_tokens - n_dec
        dec_sched = n_dec
        # 2. prefill chunks of running requests
        for rid in list(prefilling):
            if budget <= 0:
                break
            if state[rid] != _PREFILL:
                continue
            chunk = min(target[rid] - c[rid], budget)
            need = 0 if contiguous else _cdiv(c[rid] + chunk, bs) - own[rid] - shared[rid]
            ok = True
            while not take(need):
                preempted = True
                if preempt_tail(step) == rid:
                    ok = False
                    break
            if not ok:
                continue
            own[rid] += max(need, 0)
            c[rid] += chunk
            tokens += chunk
            budget -= chunk
            maybe_register(rid)
            if c[rid] >= target[rid]:
                prefill_done(rid, step)
        # 3. admit waiting requests (FCFS) unless this step preempted
        while not preempted and waiting and budget > 0 and len(running) < cfg.max_num_seqs:
            rid = waiting[0]
            r = by_id[rid]
            hit_blocks = 0
            if prefix_on and r.group >= 0 and r.group in group_blocks:
                hit_blocks = min(group_blocks[r.group], (target[rid] - 1) // bs, r.prefix // bs)
            hit = hit_blocks * bs
            chunk = min(target[rid] - hit, budget)
            if contiguous:
                need = reserve
            else:
                need = _cdiv(hit + chunk, bs) - hit_blocks
            reactivating = hit_blocks and group_ref.get(r.group, 0) == 0
            spare = avail() - (group_blocks[r.group] if reactivating else 0)
            if need > spare:
                if not running:
                    # nothing can ever free enough blocks for this request
                    waiting.popleft()
                    state[rid] = _DONE
                    res.rejected_no_fit += 1
                    continue
                break
            waiting.popleft()
            if hit_blocks:
                if reactivating:
                    nb = lru.pop(r.group)
                    cached_total -= nb
                group_ref[r.group] = group_ref.get(r.group, 0) + 1
                shared[rid] = hit_blocks
                res.prefix_hit_tokens += hit
            take(need)
            own[rid] = need
            c[rid] = hit + chunk
            tokens += hit + chunk
            budget -= chunk
            state[rid] = _PREFILL
            order[rid] = order_ctr
            order_ctr += 1
            running[rid] = None
            prefilling.append(rid)
            if rid not in first_sched:
                first_sched[rid] = step
                res.queue_delay.append(step - r.arrival)
            maybe_register(rid)
            if c[rid] >= target[rid]:
                prefill_done(rid, step)
        tokens += dec_sched
        in_use = cfg.num_blocks - free - cached_total
        occ.append(in_use)
        occ_steps.append(step)
        if in_use > res.peak_blocks:
            res.peak_blocks, res.peak_step, res.tokens_at_peak = in_use, step, tokens
        if len(running) > res.peak_running:
            res.peak_running = len(running)
        step += 1
    res.steps = step
    res.preempted_requests = sum(1 for rid in first_sched if ver.get(rid, 0) > 0)
    vals = sorted(occ)
    total_steps = len(vals) + idle_steps
    if total_steps:
        k = int(0.95 * total_steps)
        res.p95_blocks = 0 if k < idle_steps else vals[min(len(vals) - 1, k - idle_steps)]
        res.mean_blocks = sum(vals) / total_steps
    return res
