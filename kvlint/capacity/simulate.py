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
* Prefix caching for shared-prefix groups: the full blocks of a group's prefix are computed once and form a chain of
  cached blocks. A request that hits the chain holds only the blocks it hit (its first ``h`` blocks, ``h`` at most
  its own prefix's full blocks; a hit never covers the whole prompt: the last prompt token is always recomputed), as
  vLLM's block pool reference-counts each block (``vllm@0.33.0:vllm/v1/core/block_pool.py::BlockPool.touch`` and
  ``free_blocks``: a hit raises the hit blocks' ``ref_cnt`` and takes them out of the free queue; a block whose
  ``ref_cnt`` drops to 0 goes back to the free queue, still cached). So the chain's blocks beyond the longest hit
  of its running users are evictable and counted as free, and reviving evictable hit blocks costs free blocks
  (``kv_cache_manager.py::KVCacheManager.allocate_slots``, ``num_evictable_computed_blocks``). When free blocks
  run out, the evictable part of a chain is evicted whole, least recently released first (the chain stays cached
  up to the blocks its running users hold).
* Requests with ``prompt + output > max_model_len`` are rejected at arrival (the OpenAI frontend's 400 error).
* ``contiguous`` mode instead reserves ``cdiv(max_model_len, block_size)`` blocks per request at admission (no growth,
  no preemption, no sharing): the pre-paging allocation whose fragmentation paging avoids.

Simplifications (stated in reports): one step = one forward pass of fixed wall time; decoding tokens are taken from
the budget before prefill chunks regardless of running order; the V1 null block is subtracted from ``num_blocks`` by
the caller; prefix-cache hits are only modelled for shared-prefix groups (a preempted request's own blocks are not
re-hit on recompute); a chain is not lengthened by a later request with a longer prefix of the same group; eviction
takes a chain's whole evictable part, not block by block, and only once the free blocks run out (vLLM's free queue
reuses the least recently freed block first even while never-used blocks remain); speculative decoding, LoRA, encoder caches, sliding-window/hybrid groups and async scheduling
are not modelled; a prefix is registered when its first request's prefill passes it (vLLM registers blocks as they
fill, so it can be shared a few steps earlier).

Implementation (the same results as a plain step-by-step loop over every running request, which
``tests/test_capacity_simulate_reference.py`` keeps as the reference and compares field by field):

* Decode progress is lazy. A decoding request's computed tokens at the start of step ``s`` are ``base + s``, and it
  holds ``cdiv(base + s, block_size)`` blocks (less its shared prefix blocks); nothing is updated per token.
* A decoding request needs a new block exactly at the steps ``s`` with ``(base + s) % block_size == 0``, so the
  decoders sit in ``block_size`` phase buckets and a step takes ``len(bucket[s % block_size])`` blocks at once.
  Only when the free (plus evictable cached) blocks do not cover them are the bucket's requests served one by one
  in admission order, preempting as the scheduler would. Finishes are a heap of ints keyed by step, then
  admission number.
* Stretches of steps in which only decoding happens (no prefill in progress, no finish, no arrival that could be
  admitted: nobody waits, the last admission attempt found too few blocks for the head of the queue, or the
  token budget or max_num_seqs is used up; and enough free blocks without evicting cached prefixes) are advanced in one go: their block counts repeat with
  period ``block_size`` and the occupancy record of the stretch is a running sum. Short decode-only stretches
  with nobody waiting (finishes allowed) go through a lighter per-step loop, which also admits the requests
  arriving at a step when all of them get their whole prompt scheduled in it without evicting, preempting or a
  prefix hit (most arrivals of a lightly loaded server), instead of a full scheduling pass.
* Requests are read as columns (:class:`~kvlint.capacity.workload.RequestColumns`); rejections and per-request
  totals are counted once at the end.

The cost is O(steps with scheduling work + requests x log), not O(running requests x steps): about 1.3 s of one
core for 100,000 requests at 10 requests/s on the 28,518 blocks of Llama-3.1-8B on an H100 at max_model_len
32000 (``bench/simulate.py``).
"""

from __future__ import annotations

import heapq
import operator
from array import array
from bisect import bisect_left
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from itertools import accumulate

from kvlint.capacity.workload import Request, RequestColumns

_WAITING, _PREFILL, _DECODE, _DONE, _FINISHED = 0, 1, 2, 3, 4
#: bits of a finish-heap entry below the finish step (the admission number)
_SHIFT = 40
#: an arrival step after every other
_NEVER = 1 << 62
_MASK = (1 << _SHIFT) - 1


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
    """Run the scheduler over ``requests`` (sorted by arrival step, distinct ``rid``) until all finish or are
    rejected.

    Deterministic: no randomness inside (all draws happen in :func:`kvlint.capacity.workload.generate`).
    Raises ValueError for a non-positive ``num_blocks``, ``block_size``, ``max_num_seqs``,
    ``max_num_batched_tokens`` or ``max_model_len``, or an unknown ``mode``.
    """
    return simulate_columns(RequestColumns.of(requests), config)


def simulate_columns(requests: RequestColumns, config: SimConfig) -> SimResult:
    """:func:`simulate` of requests given as columns (:func:`kvlint.capacity.workload.generate_columns`), which
    saves building an object per request. Raises ValueError as :func:`simulate` does."""
    cfg = config
    bs = cfg.block_size
    if min(cfg.num_blocks, bs, cfg.max_num_seqs, cfg.max_num_batched_tokens, cfg.max_model_len) <= 0:
        raise ValueError(
            "num_blocks, block_size, max_num_seqs, max_num_batched_tokens, max_model_len must be > 0"
        )
    if cfg.mode not in ("paged", "contiguous"):
        raise ValueError(f"unknown mode {cfg.mode!r} (paged | contiguous)")
    contiguous = cfg.mode == "contiguous"
    paged = not contiguous
    reserve = _cdiv(cfg.max_model_len, bs)
    prefix_on = cfg.enable_prefix_caching and paged
    num_blocks = cfg.num_blocks
    max_seqs = cfg.max_num_seqs
    max_batched = cfg.max_num_batched_tokens
    max_len = cfg.max_model_len
    max_steps = cfg.max_steps
    lag = max(0, cfg.cancel_lag_steps)
    res = SimResult(config=cfg)
    n = len(requests)
    # Per-request state in lists indexed by the request's position in ``requests``.
    arrival = [*requests.arrival, _NEVER]  # sentinel: no more arrivals
    prompt = requests.prompt
    output = requests.output
    cancel_at = requests.cancel_at
    group = requests.group
    prefix = requests.prefix
    any_cancel = n > 0 and max(cancel_at) >= 0
    # tokens generated before the engine drops the request (cancelled: cancel_at + 1 + the release lag)
    eff_out = (
        [o if ca < 0 or ca + 1 + lag >= o else ca + 1 + lag for o, ca in zip(output, cancel_at, strict=True)]
        if any_cancel
        else output
    )
    # Rejected at arrival: prompt + output > max_model_len, or more blocks at the end than the cache has
    # (cdiv(prompt + output - 1, block_size) > num_blocks; contiguous: the max_model_len reservation). So a
    # request is admissible iff prompt + output <= cap.
    totals = list(map(operator.add, prompt, output))
    if contiguous:
        cap = max_len if reserve <= num_blocks else -1
    else:
        cap = min(max_len, num_blocks * bs + 1)
    admissible = None if n == 0 or max(totals) <= cap else list(map(cap.__ge__, totals))
    state = [_WAITING] * n
    # _PREFILL/_WAITING: computed and generated tokens; _DECODE: their bases (value at step s = base + s)
    c = [0] * n
    g = [0] * n
    target = list(prompt)  # prefill target tokens
    # privately held blocks while _PREFILL (a decoder's follow from its tokens; contiguous: the reservation)
    own = [0] * n
    shared = [0] * n  # blocks referenced from the prefix group
    phase = [0] * n  # a decoder's bucket: it needs a block at the steps s with s % bs == phase
    cur_order = [0] * n  # admission number of the request's current admission
    preempted_n = [0] * n
    order_idx: list[int] = []  # admission number -> request index
    order_append = order_idx.append

    free = num_blocks
    # a cached prefix chain: its length in blocks, the hits its running users hold (blocks -> users), the longest
    group_blocks: dict[int, int] = {}
    group_holds: dict[int, dict[int, int]] = {}
    group_max: dict[int, int] = {}
    # evictable blocks of each chain (beyond its longest held hit), least recently released first
    lru: OrderedDict[int, int] = OrderedDict()
    cached_total = 0

    running: dict[int, None] = {}  # in admission order
    prefilling: list[int] = []
    waiting: deque[int] = deque()
    waiting_append = waiting.append
    popleft = waiting.popleft
    nb_buckets = bs if paged else 1
    buckets: list[set[int]] = [set() for _ in range(nb_buckets)]
    bucket_n = [0] * nb_buckets  # len() of each bucket
    # finish heap: one int per decoder, (finish step << _SHIFT) | admission number, so ties go in admission order
    fin_heap: list[int] = []
    order_ctr = 0
    n_dec = 0
    generated = 0  # output tokens of the finished requests
    rejected_late = 0  # rejected at admission: could never get its blocks
    head_blocked = False  # the last admission attempt found too few blocks for the head of the queue
    tokens = 0  # logical KV tokens of running requests at the end of the last step
    dec_sched = -1  # decoders scheduled in the current step (-1 while the decode stage runs)
    arr_i = 0
    step = 0
    occ = res.occupancy
    occ_steps = res.occ_steps
    occ_append = occ.append
    steps_append = occ_steps.append
    queue_delay = res.queue_delay
    idle_steps = 0
    steps_run = 0
    peak_blocks = peak_step = tokens_at_peak = peak_running = 0
    heappush, heappop = heapq.heappush, heapq.heappop

    def take(k: int) -> bool:
        """Allocate k blocks, evicting cached prefixes LRU first; False if impossible."""
        nonlocal free, cached_total
        if k <= free:
            if k > 0:
                free -= k
            return True
        if free + cached_total < k:
            return False
        while free < k:
            grp, nb = lru.popitem(last=False)
            cached_total -= nb
            free += nb
            held = group_max[grp]
            if held:
                group_blocks[grp] = held
            else:
                del group_blocks[grp], group_holds[grp], group_max[grp]
        free -= k
        return True

    def unshare(i: int) -> None:
        """Drop i's reference to the blocks it hit in its prefix group's chain; blocks no running request holds
        any more become evictable (cached, counted as free)."""
        nonlocal cached_total
        grp = group[i]
        h = shared[i]
        shared[i] = 0
        holds = group_holds[grp]
        left = holds[h] - 1
        if left:
            holds[h] = left
            return
        del holds[h]
        top = group_max[grp]
        if h != top:
            return
        top2 = max(holds) if holds else 0
        group_max[grp] = top2
        cached_total += top - top2
        lru[grp] = group_blocks[grp] - top2
        lru.move_to_end(grp)

    def preempt_tail(s: int) -> int:
        """Preempt the newest running request at step s (recompute mode); returns its index."""
        nonlocal n_dec, tokens, dec_sched, free
        victim, _ = running.popitem()
        if state[victim] == _DECODE:
            cv, gv = c[victim] + s, g[victim] + s
            after_decode = dec_sched >= 0
            n_dec -= 1
            if after_decode:
                dec_sched -= 1
            if paged:
                p = phase[victim]
                buckets[p].discard(victim)
                bucket_n[p] -= 1
                # (victims of the prefill stage are in practice prefilling requests, which are newer than every
                # decoder; a decoder preempted after the decode stage would also hold this step's new block)
                held = _cdiv(cv + (1 if after_decode and cv % bs == 0 else 0), bs) - shared[victim]
            else:
                held = reserve
        else:
            cv, gv = c[victim], g[victim]
            prefilling.remove(victim)
            held = own[victim]
        tokens -= cv
        free += held
        if shared[victim]:
            unshare(victim)
        res.preemptions += 1
        res.recomputed_tokens += cv
        state[victim] = _WAITING
        c[victim] = 0
        g[victim] = gv
        target[victim] = prompt[victim] + gv
        preempted_n[victim] += 1
        cur_order[victim] = -1  # its finish entry, if any, is stale
        waiting.appendleft(victim)
        return victim

    def finish_due(s: int) -> None:
        """Release the decoders whose last token was computed before step s (finish entries < s + 1), in
        admission order."""
        nonlocal n_dec, tokens, free, generated
        limit = (s + 1) << _SHIFT
        while fin_heap and fin_heap[0] < limit:
            o = heappop(fin_heap) & _MASK
            i = order_idx[o]
            if cur_order[i] != o:
                continue  # preempted since
            cv = c[i] + s
            n_dec -= 1
            del running[i]
            tokens -= cv
            if paged:
                p = phase[i]
                buckets[p].discard(i)
                bucket_n[p] -= 1
                free += -(-cv // bs) - shared[i]
            else:
                free += reserve
            if shared[i]:
                unshare(i)
            state[i] = _FINISHED
            generated += eff_out[i]

    def start_decode(i: int, s: int) -> None:
        """i computed its prefill target in step s: one output token produced; it decodes from step s + 1 (or
        finishes at the start of step s + 1 when that token was its last)."""
        nonlocal n_dec
        cv, gv = c[i], g[i] + 1
        state[i] = _DECODE
        s1 = s + 1
        c[i] = cv - s1
        g[i] = gv - s1
        n_dec += 1
        heappush(fin_heap, ((s1 + eff_out[i] - gv) << _SHIFT) | cur_order[i])
        if paged:
            p = (s1 - cv) % bs
            phase[i] = p
            buckets[p].add(i)
            bucket_n[p] += 1

    def maybe_register(i: int) -> None:
        """Register i's prefix blocks as its group's shared prefix once its prefill has passed them."""
        grp = group[i]
        if grp < 0 or shared[i]:
            return
        nb = prefix[i] // bs
        if nb and grp not in group_blocks and c[i] >= nb * bs:
            own[i] -= nb
            shared[i] = nb
            group_blocks[grp] = nb
            group_holds[grp] = {nb: 1}
            group_max[grp] = nb

    while True:
        # arrivals up to this step (those that can never run are counted at the end)
        while arrival[arr_i] <= step:
            if admissible is None or admissible[arr_i]:
                waiting_append(arr_i)
            arr_i += 1
        if not running and not waiting:
            if arr_i >= n:
                break
            nxt = arrival[arr_i]
            idle_steps += nxt - step
            step = nxt
            continue
        # Fast path: a stretch of decode-only steps (see the module docstring), advanced at once. Nobody may be
        # admitted meanwhile: nobody waits, or the last admission attempt found too few blocks for the head of
        # the queue (and it stays so while blocks are only taken), or the budget or the seats are used up.
        if (
            running
            and not prefilling
            and (not waiting or head_blocked or max_batched - n_dec <= 0 or len(running) >= max_seqs)
        ):
            # every running request decodes and has a finish entry; the top may be stale (a preempted
            # request's), which only makes the stretch shorter
            end = fin_heap[0] >> _SHIFT
            if not waiting and arrival[arr_i] < end:
                end = arrival[arr_i]
            if end - step > max_steps - steps_run:
                end = step + max_steps - steps_run
            length = end - step
            if length >= 4:
                if paged:
                    p = step % bs
                    pattern = bucket_n[p:] + bucket_n[:p]
                    first = pattern[0]
                    per_cycle = sum(pattern)
                else:
                    pattern = []
                    first = per_cycle = 0
                if first <= free:
                    in_use = num_blocks - free - cached_total
                    if per_cycle == 0:
                        occ.extend(array("i", [in_use]) * length)
                        top = in_use
                        first_top = 0
                    else:
                        full, rest = divmod(length, bs)
                        if per_cycle * full + sum(pattern[:rest]) > free:
                            # stop where the free blocks run out (the next step evicts or preempts)
                            full = free // per_cycle
                            left = free - full * per_cycle
                            rest = 0
                            while pattern[rest] <= left:
                                left -= pattern[rest]
                                rest += 1
                            length = full * bs + rest
                        vals = list(accumulate(pattern * full + pattern[:rest], initial=in_use))
                        del vals[0]
                        occ.fromlist(vals)
                        top = vals[-1]
                        first_top = bisect_left(vals, top)
                        free -= top - in_use
                    occ_steps.extend(range(step, step + length))
                    if top > peak_blocks:
                        peak_blocks, peak_step = top, step + first_top
                        tokens_at_peak = tokens + n_dec * (first_top + 1)
                    if len(running) > peak_running:
                        peak_running = len(running)
                    tokens += n_dec * length
                    steps_run += length
                    step += length
                    continue
        # Decode-only steps with nobody waiting, one by one with less bookkeeping, until a step that must evict or
        # preempt or whose arrivals cannot all be admitted whole at once (the full step below does it), the next
        # arrival after such a step, or a long stretch (the bulk path above).
        if running and not prefilling and not waiting and steps_run < max_steps:
            # every step of this loop is counted: steps_run is run0 + step throughout, and last_step the last
            # step max_steps allows
            run0 = steps_run - step
            last_step = max_steps - run0
            stop = arrival[arr_i] if arrival[arr_i] < last_step else last_step
            to_full_step = False
            nf = fin_heap[0] >> _SHIFT  # the next finish step (or a stale entry's, which is earlier)
            while running:
                if step < stop:
                    if nf <= step:
                        finish_due(step)
                        nf = fin_heap[0] >> _SHIFT if fin_heap else _NEVER
                    if paged:
                        k = bucket_n[step % bs]
                        if k > free:
                            to_full_step = True
                            break
                        free -= k
                    tokens += n_dec
                else:
                    # Requests arrive at this step: when the full step would admit every one of them whole
                    # (prefill done in this step) without evicting, preempting or a prefix hit, the step is
                    # done here with the same effect: decoders' blocks, then each admission in arrival order.
                    if step != arrival[arr_i] or step >= last_step:
                        break
                    if nf <= step:
                        finish_due(step)
                    k = bucket_n[step % bs] if paged else 0
                    budget = max_batched - n_dec
                    room = free - k
                    seats = max_seqs - len(running)
                    j = arr_i
                    while arrival[j] == step:
                        t = prompt[j]
                        need = reserve if contiguous else -(-t // bs)
                        if (
                            t > budget
                            or need > room
                            or seats <= 0
                            or (prefix_on and group[j] >= 0)
                            or (admissible is not None and not admissible[j])
                        ):
                            break
                        budget -= t
                        room -= need
                        seats -= 1
                        j += 1
                    if arrival[j] == step or not running:
                        # the full step does this step (its finishes are done): the arrivals wait for it
                        while arrival[arr_i] <= step:
                            if admissible is None or admissible[arr_i]:
                                waiting_append(arr_i)
                            arr_i += 1
                        to_full_step = True
                        break
                    tokens += n_dec
                    free = room
                    s1 = step + 1
                    while arr_i < j:
                        i = arr_i
                        arr_i += 1
                        t = prompt[i]
                        tokens += t
                        cur_order[i] = order_ctr
                        order_append(i)
                        running[i] = None
                        queue_delay.append(0)
                        # decodes from the next step with one token generated (as start_decode)
                        state[i] = _DECODE
                        c[i] = t - s1
                        g[i] = g[i] + 1 - s1
                        n_dec += 1
                        heappush(fin_heap, ((s1 + eff_out[i] - 1) << _SHIFT) | order_ctr)
                        order_ctr += 1
                        if paged:
                            p = (s1 - t) % bs
                            phase[i] = p
                            buckets[p].add(i)
                            bucket_n[p] += 1
                    head_blocked = False
                    nf = fin_heap[0] >> _SHIFT
                    if len(running) > peak_running:
                        peak_running = len(running)
                    stop = arrival[arr_i] if arrival[arr_i] < last_step else last_step
                in_use = num_blocks - free - cached_total
                occ_append(in_use)
                steps_append(step)
                if in_use > peak_blocks:
                    peak_blocks, peak_step, tokens_at_peak = in_use, step, tokens
                step += 1
                if stop - step >= 4 and nf - step >= 4 and running:
                    break
            steps_run = run0 + step
            if not to_full_step:
                continue
        steps_run += 1
        if steps_run > max_steps:
            break
        preempted = head_blocked = False
        dec_sched = -1
        # 1. finishes at this step, in admission order
        if fin_heap and fin_heap[0] < (step + 1) << _SHIFT:
            finish_due(step)
        # 2. decoders whose last block is full take a new one
        if paged:
            p = step % bs
            k = bucket_n[p]
            if k:
                if k <= free:
                    free -= k
                elif not take(k):
                    # Not enough blocks: served in admission order, each preempting the newest running requests
                    # until a block is free (or it is the newest itself). As many of them as there are free +
                    # cached blocks are served at once. The ones still pending are newer than the served ones,
                    # so a victim of this bucket is always the newest pending one: only their count matters.
                    bucket = buckets[p]
                    pending = k
                    while pending:
                        avail = free + cached_total
                        if avail:
                            served = avail if avail < pending else pending
                            take(served)
                            pending -= served
                            continue
                        preempted = True
                        if next(reversed(running)) in bucket:
                            pending -= 1
                        preempt_tail(step)
        budget = max_batched - n_dec
        dec_sched = n_dec
        # 3. prefill chunks of running requests
        if prefilling:
            for i in list(prefilling):
                if budget <= 0:
                    break
                if state[i] != _PREFILL:
                    continue
                chunk = min(target[i] - c[i], budget)
                need = 0 if contiguous else _cdiv(c[i] + chunk, bs) - own[i] - shared[i]
                ok = True
                while not take(need):
                    preempted = True
                    if preempt_tail(step) == i:
                        ok = False
                        break
                if not ok:
                    continue
                if need > 0:
                    own[i] += need
                c[i] += chunk
                tokens += chunk
                budget -= chunk
                if prefix_on:
                    maybe_register(i)
                if c[i] >= target[i]:
                    prefilling.remove(i)
                    start_decode(i, step)
        # 4. admit waiting requests (FCFS) unless this step preempted
        while not preempted and waiting and budget > 0 and len(running) < max_seqs:
            if contiguous and reserve > free:
                head_blocked = True  # every request needs the same reservation: the head waits (see below)
                break
            i = waiting[0]
            t = target[i]
            grp = group[i]
            if prefix_on and grp >= 0 and grp in group_blocks:
                hit_blocks = min(group_blocks[grp], (t - 1) // bs, prefix[i] // bs)
            else:
                hit_blocks = 0
            if hit_blocks:
                hit = hit_blocks * bs
                chunk = t - hit if t - hit < budget else budget
                need = -(-(hit + chunk) // bs) - hit_blocks
                # hit blocks beyond the chain's longest held hit are evictable: reviving them costs free blocks
                revive = hit_blocks - group_max[grp]
                if revive < 0:
                    revive = 0
                spare = free + cached_total - revive
            else:
                hit = 0
                chunk = t if t < budget else budget
                need = reserve if contiguous else -(-chunk // bs)
                spare = free + cached_total
            if need > spare:
                if not running:
                    # nothing can ever free enough blocks for this request
                    popleft()
                    state[i] = _DONE
                    rejected_late += 1
                    continue
                # it waits; it stays blocked while blocks are only taken (see the fast path above)
                head_blocked = True
                break
            popleft()
            if hit_blocks:
                if revive:
                    cached_total -= revive
                    evictable = lru[grp] - revive
                    if evictable:
                        lru[grp] = evictable
                    else:
                        del lru[grp]
                    group_max[grp] = hit_blocks
                holds = group_holds[grp]
                holds[hit_blocks] = holds.get(hit_blocks, 0) + 1
                shared[i] = hit_blocks
                res.prefix_hit_tokens += hit
            if need <= free:
                free -= need
            else:
                take(need)
            cv = hit + chunk
            tokens += cv
            budget -= chunk
            cur_order[i] = order_ctr
            order_append(i)
            order_ctr += 1
            running[i] = None
            if not preempted_n[i]:  # first admission
                queue_delay.append(step - arrival[i])
            if cv < t or (prefix_on and grp >= 0):
                own[i] = need
                c[i] = cv
                if prefix_on and grp >= 0:
                    maybe_register(i)
            if cv < t:
                state[i] = _PREFILL
                prefilling.append(i)
            else:  # prefill done in this step: decodes from the next (see start_decode)
                gv = g[i] + 1
                state[i] = _DECODE
                s1 = step + 1
                c[i] = cv - s1
                g[i] = gv - s1
                n_dec += 1
                heappush(fin_heap, ((s1 + eff_out[i] - gv) << _SHIFT) | order_ctr - 1)
                if paged:
                    p = (s1 - cv) % bs
                    phase[i] = p
                    buckets[p].add(i)
                    bucket_n[p] += 1
        tokens += dec_sched
        in_use = num_blocks - free - cached_total
        occ_append(in_use)
        steps_append(step)
        if in_use > peak_blocks:
            peak_blocks, peak_step, tokens_at_peak = in_use, step, tokens
        if len(running) > peak_running:
            peak_running = len(running)
        step += 1
    res.steps = step
    res.peak_blocks, res.peak_step, res.tokens_at_peak = peak_blocks, peak_step, tokens_at_peak
    res.peak_running = peak_running
    res.preempted_requests = n - preempted_n.count(0)
    # per-request outcomes of the requests that arrived (all of them unless max_steps stopped the run)
    res.prompt_tokens = sum(prompt[:arr_i])
    if admissible is not None:
        arrived = totals[:arr_i]
        res.rejected_too_long = sum(map(max_len.__lt__, arrived))
        res.rejected_no_fit = sum(map(cap.__lt__, arrived)) - res.rejected_too_long  # cap <= max_len
    res.rejected_no_fit += rejected_late
    finished = state.count(_FINISHED)
    res.generated_tokens = generated
    if any_cancel:
        res.cancelled = sum(
            1 for e, o, st in zip(eff_out, output, state, strict=True) if st == _FINISHED and e < o
        )
        res.cancel_lag_tokens = sum(
            e - ca - 1
            for e, o, ca, t in zip(eff_out[:arr_i], output, cancel_at, totals, strict=False)
            if e < o and t <= cap
        )
    res.completed = finished - res.cancelled
    total_steps = len(occ) + idle_steps
    if total_steps:
        vals = sorted(occ)
        k = int(0.95 * total_steps)
        res.p95_blocks = 0 if k < idle_steps else vals[min(len(vals) - 1, k - idle_steps)]
        res.mean_blocks = sum(vals) / total_steps
    return res
