"""Prefix caching in the scheduler simulation: a request holds only the cached prefix blocks it hit, not the whole
chain its group cached (vLLM's block pool counts references per block: ``vllm/v1/core/block_pool.py::
BlockPool.touch`` raises the ref_cnt of the hit blocks only, ``free_blocks`` returns a block to the free queue when
its ref_cnt reaches 0, still cached and evictable).

The workloads: request 0 caches a chain of 60 prefix blocks (its prompt is the prefix and one more token) in a
100-block cache, then finishes, leaving 60 cached blocks and 40 free ones. Later requests of the same group share
only the first block of that prefix (a trace may give requests of one group different prefix lengths), so each
hits one block, and needs blocks that fit only if the other 59 cached blocks can be evicted.

When a hit pinned the whole 60-block chain, the chunked-prefill case never finished: the request took the 40 free
blocks chunk by chunk, found no block for its next chunk, preempted itself, was re-admitted and started over, until
``max_steps``; without chunking it was rejected as never fitting; two such requests were both rejected. The
figures asserted below follow from the model, not from a captured run.
"""

from __future__ import annotations

import pytest

from kvlint.capacity.simulate import SimConfig, simulate, simulate_columns
from kvlint.capacity.workload import Request, RequestColumns

BS = 16
NUM_BLOCKS = 100
CHAIN = 60  # blocks of the prefix request 0 caches
LATER = 100  # arrival step of the later requests, long after request 0 finished
MAX_STEPS = 20_000


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _chain_request() -> Request:
    """Caches a CHAIN-block prefix and finishes after one output token."""
    return Request(0, 0, CHAIN * BS + 1, 1, -1, 0, CHAIN * BS)


def _config(max_num_batched_tokens: int) -> SimConfig:
    return SimConfig(
        num_blocks=NUM_BLOCKS,
        block_size=BS,
        max_num_seqs=4,
        max_num_batched_tokens=max_num_batched_tokens,
        max_model_len=4096,
        max_steps=MAX_STEPS,
    )


@pytest.mark.parametrize("budget", [256, 8192], ids=["chunked-prefill", "one-step-prefill"])
def test_request_hitting_one_block_of_a_long_chain_completes(budget: int) -> None:
    prompt, output = 80 * BS, 16
    reqs = [_chain_request(), Request(1, LATER, prompt, output, -1, 0, BS)]
    # the request fits the cache alone: its last token is computed with prompt + output - 1 tokens in blocks
    final_blocks = _cdiv(prompt + output - 1, BS)
    assert final_blocks <= NUM_BLOCKS < final_blocks + (CHAIN - 1)  # ... but not beside the rest of the chain
    cfg = _config(budget)
    res = simulate(reqs, cfg)

    assert res.completed == 2 and res.rejected_no_fit == 0 and res.rejected_too_long == 0
    assert res.preemptions == 0 and res.recomputed_tokens == 0
    # the hit is the first block: min(chain, (prompt - 1) // BS, own prefix // BS) = 1 block
    assert res.prefix_hit_tokens == BS
    assert res.generated_tokens == 1 + output
    # at its last step it holds every block of its tokens (the hit one included); the evicted chain blocks are free
    assert res.peak_blocks == max(final_blocks, CHAIN + 1)
    # done within its prefill steps (the hit tokens are not computed) and its decode steps, far from max_steps
    prefill_steps = _cdiv(prompt - BS, budget)
    assert res.steps <= LATER + prefill_steps + output + 1 < MAX_STEPS
    assert res == simulate_columns(RequestColumns.of(reqs), cfg)


def test_two_requests_hitting_part_of_a_chain_run_side_by_side() -> None:
    prompt, output = 44 * BS, 16
    reqs = [_chain_request(), *(Request(i, LATER, prompt, output, -1, 0, BS) for i in (1, 2))]
    own_blocks = _cdiv(prompt + output - 1, BS) - 1  # each one's blocks beyond the shared hit block
    assert 1 + 2 * own_blocks <= NUM_BLOCKS < CHAIN + 2 * own_blocks
    res = simulate(reqs, _config(8192))

    assert res.completed == 3 and res.rejected_no_fit == 0
    assert res.preemptions == 0
    assert res.prefix_hit_tokens == 2 * BS
    assert res.peak_running == 2
    # both hold the one shared block and their own blocks at their last step, in the same step
    assert res.peak_blocks == 1 + 2 * own_blocks
