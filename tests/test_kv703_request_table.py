"""KV703: SGLang before 0.5.10 sizes its request-to-token table (``ReqToTokenPool``, ``context_len + 4`` int32 columns)
by an explicit ``--max-running-requests`` as given, after the KV pool was sized from the memory left
(``sglang@0.5.5``/``0.5.9`` ``init_memory_pool``); 0.5.10 - 0.5.13 cap the value at the engine's estimate (at most
4,096 rows, ``_resolve_max_num_reqs``), and from 0.5.14 at half the pool's tokens, which a long context still makes
larger than the GPU. The threshold is the run's own plan: table + weights + KV pool against the GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory.sglang import SglangPlanDetail
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.families.sglang import REQUEST_TABLE_EXTRA_COLUMNS, request_table_pool_bytes
from kvlint.types import CheckResult, ContainerResult


def _run(tmp_path: Path, tag: str, requests: int, *extra: str, env: str = "") -> CheckResult:
    cmd = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-running-requests",
        str(requests),
        *extra,
    ]
    argv = ", ".join(f'"{a}"' for a in cmd)
    p = tmp_path / f"{tag}-{requests}-{'-'.join(extra)}-{env}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        f"  containers:\n  - name: sglang\n    image: lmsysorg/sglang:{tag}\n    command: [{argv}]\n"
        + (f"    env: [{{name: {env}, value: '1'}}]\n" if env else "")
        + "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _kv703(r: CheckResult) -> list:
    return [d for d in r.diagnostics if d.rule == "KV703"]


def _rows_that_fit(r: CheckResult) -> int:
    (cr,) = r.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None
    d = cr.plan_detail
    assert isinstance(d, SglangPlanDetail)
    row = (d.context_length + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    return (cr.plan.total_bytes - cr.plan.weights_bytes - request_table_pool_bytes(cr.plan)) // row


@pytest.mark.parametrize("tag", ["v0.5.5", "v0.5.9"])
def test_the_table_beyond_the_gpu_is_kv703_up_to_0_5_9(tmp_path: Path, tag: str) -> None:
    fits = _rows_that_fit(_run(tmp_path, tag, 2048))
    assert fits > 2048
    assert not _kv703(_run(tmp_path, tag, fits))
    (d,) = _kv703(_run(tmp_path, tag, fits + 1))
    assert (
        d.severity == "error" and "torch.OutOfMemoryError" in d.message and f"{fits + 1:,} rows" in d.message
    )
    assert f"well below {fits:,}" in d.fix
    (huge,) = _kv703(_run(tmp_path, tag, 10**9))
    assert "1,000,000,000 rows" in huge.message


@pytest.mark.parametrize("tag", ["v0.5.10", "v0.5.13"])
def test_sglang_caps_the_value_at_its_estimate_in_0_5_10_to_0_5_13(tmp_path: Path, tag: str) -> None:
    assert not _kv703(_run(tmp_path, tag, 10**9))


@pytest.mark.parametrize("tag", ["v0.5.14", "v0.5.23"])
def test_from_0_5_14_the_cap_is_half_the_pool_and_the_table_can_exceed_the_gpu(
    tmp_path: Path, tag: str
) -> None:
    # resolve_max_num_reqs: min(requested per DP worker, token_capacity // 2) rows of context_len + 4 int32
    r = _run(tmp_path, tag, 10**9)
    (cr,) = r.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None
    d = cr.plan_detail
    assert isinstance(d, SglangPlanDetail)
    assert d.max_running_requests == cr.plan.capacity_tokens // 2
    rows = d.max_running_requests + 1  # ReqToTokenPool._alloc_size = size + 1 (0.5.23 memory_pool.py)
    assert d.request_table_rows == rows
    table = rows * (d.context_length + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    assert table + cr.plan.weights_bytes + request_table_pool_bytes(cr.plan) > cr.plan.total_bytes
    (f,) = _kv703(r)
    assert f"table at {rows:,} rows" in f.message and f"{table / 2**30:,.2f} GiB" in f.message
    assert "KVCacheConfigurator.configure" in f.message or tag < "v0.5.16"
    # a short context: the same rows fit beside the pool
    short = _run(tmp_path, tag, 10**9, "--context-length", "4096")
    (cs,) = short.containers
    assert (
        isinstance(cs, ContainerResult)
        and cs.plan is not None
        and isinstance(cs.plan_detail, SglangPlanDetail)
    )
    small = cs.plan_detail.request_table_rows * (4096 + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    assert small + cs.plan.weights_bytes + request_table_pool_bytes(cs.plan) <= cs.plan.total_bytes
    assert not _kv703(short)


def test_a_max_total_tokens_cap_shrinks_the_pool_beside_the_table(tmp_path: Path) -> None:
    # --max-total-tokens caps the KV pool SGLang allocates (min with the profiled tokens, 0.5.5 init_memory_pool), so
    # the table has the rest of the GPU: judged against the capped pool, not the profiled one (which took 50 GiB here)
    tag, cap = "v0.5.5", "10000"
    r = _run(tmp_path, tag, 2048, "--max-total-tokens", cap)
    (cr,) = r.containers
    assert (
        isinstance(cr, ContainerResult)
        and cr.plan is not None
        and isinstance(cr.plan_detail, SglangPlanDetail)
    )
    plan = cr.plan
    assert plan.capacity_tokens == int(cap)
    pool = plan.capacity_tokens * plan.kv_bytes_per_token
    assert pool < plan.kv_cache_bytes // 10 and request_table_pool_bytes(plan) == pool
    row = (cr.plan_detail.context_length + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    fits = (plan.total_bytes - plan.weights_bytes - pool) // row
    # more rows than fit beside the profiled pool, fewer than beside the capped one
    assert fits > _rows_that_fit(_run(tmp_path, tag, 2048)) + 1
    assert not _kv703(_run(tmp_path, tag, fits, "--max-total-tokens", cap))
    (d,) = _kv703(_run(tmp_path, tag, fits + 1, "--max-total-tokens", cap))
    assert f"the KV pool, {pool / 2**30:,.2f} GiB" in d.message


def test_post_capture_kv_sizing_fits_the_pool_after_the_table(tmp_path: Path) -> None:
    # SGLANG_ENABLE_POST_CAPTURE_KV_SIZING (0.5.16 on, no MLA): the KV pool is a reservation resized after CUDA-graph
    # capture to the free memory then (kv_pool_runtime.py::compute_post_capture_kv_resize, 0.5.23), so a table that
    # fits beside the weights shrinks the pool instead of failing; one beside the weights alone does not fit
    env = "SGLANG_ENABLE_POST_CAPTURE_KV_SIZING"
    (cr,) = _run(tmp_path, "v0.5.23", 2048).containers
    assert (
        isinstance(cr, ContainerResult)
        and cr.plan is not None
        and isinstance(cr.plan_detail, SglangPlanDetail)
    )
    row = (cr.plan_detail.context_length + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    # the requests whose table (plus 0.5.14+'s padding row, ReqToTokenPool._alloc_size = size + 1) fits beside the weights
    beside_weights = (cr.plan.total_bytes - cr.plan.weights_bytes) // row - 1
    between = _rows_that_fit(_run(tmp_path, "v0.5.23", 2048)) + 1
    assert between < beside_weights < cr.plan.capacity_tokens // 2
    assert _kv703(_run(tmp_path, "v0.5.23", between))
    assert not _kv703(_run(tmp_path, "v0.5.23", beside_weights, env=env))
    (d,) = _kv703(_run(tmp_path, "v0.5.23", beside_weights + 1, env=env))
    assert env in d.message


def _run_default(tmp_path: Path, tag: str, *extra: str) -> CheckResult:
    # Llama-4-Scout's config.json gives a 10,485,760-token context (max_position_embeddings), which SGLang takes
    # when --context-length is not set; eight H100s, TP 8, SGLang's own default max_running_requests
    cmd = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    ]
    argv = ", ".join(f'"{a}"' for a in [*cmd, "--tp", "8", *extra])
    p = tmp_path / f"scout-{tag}-{'-'.join(extra)}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        f"  containers:\n  - name: sglang\n    image: lmsysorg/sglang:{tag}\n    command: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 8}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


@pytest.mark.parametrize("tag", ["v0.5.5", "v0.5.12", "v0.5.23"])
def test_the_default_table_of_a_ten_million_token_context_is_counted(tmp_path: Path, tag: str) -> None:
    """Without --max-running-requests SGLang still builds the table, 2,048 - 4,096 rows of context_len + 4 int32
    per GPU outside mem_fraction_static: at Llama-4-Scout's 10,485,760 tokens that is 80 GiB a GPU, more than the
    H100 beside the weights and the KV pool. Before, KV703 judged only an explicit value."""
    r = _run_default(tmp_path, tag)
    (cr,) = r.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None
    d = cr.plan_detail
    assert isinstance(d, SglangPlanDetail) and d.context_length == 10_485_760
    assert 2048 <= d.request_table_rows <= 4097
    table = d.request_table_rows * (d.context_length + REQUEST_TABLE_EXTRA_COLUMNS) * 4
    assert d.request_table_bytes == table
    assert any("request-to-token table" in a for a in cr.plan.assumptions)
    (f,) = _kv703(r)
    assert "default request-to-token table" in f.message and f"{table / 2**30:,.2f} GiB" in f.message
    # a context the deployment serves: the default table is small and no finding
    assert not _kv703(_run_default(tmp_path, tag, "--context-length", "131072"))


def test_request_table_rows_per_release() -> None:
    from kvlint.memory.sglang import request_table_rows

    # 0.4.x: the user's value or the clamp of the profiled tokens, one more row before 0.4.7
    assert request_table_rows((0, 4, 6), None, 100, 10**6, 1000) == 4097
    assert request_table_rows((0, 4, 7), None, 100, 10**6, 1000) == 4096
    # 0.5.5: the clamp of the profiled tokens, not the scheduler's tokens // 2
    assert request_table_rows((0, 5, 5), None, 100, 400, 10**6) == 2048
    assert request_table_rows((0, 5, 5), 10**9, 100, 400, 10**6) == 10**9
    # 0.5.10 - 0.5.13: the user's value capped at the estimate (and a padding row from 0.5.12)
    assert request_table_rows((0, 5, 11), 10**9, 100, 400, 10**6) == 2048
    assert request_table_rows((0, 5, 12), 10**9, 100, 400, 10**6) == 2049
    # 0.5.14+: the scheduler's max_running_requests and a padding row
    assert request_table_rows((0, 5, 23), None, 100, 400, 10**6) == 101


def test_request_table_rows_0_5_10_to_0_5_13() -> None:
    """0.5.10 - 0.5.13 (``model_runner_kv_cache_mixin.py::_resolve_max_num_reqs``): the user's value per DP worker
    capped at the estimate, else ``min(estimate, token_capacity // 2)``; the table has one padding row more from
    0.5.12 (``memory_pool.py::ReqToTokenPool``: ``self._alloc_size = size + 1``, absent in 0.5.10 and 0.5.11)."""
    from kvlint.memory.sglang import request_table_rows

    # a pool of 3,000 tokens: the default is half of it, not the 2,048-row floor
    assert request_table_rows((0, 5, 10), None, 100, 3000, 10**6) == 1500
    assert request_table_rows((0, 5, 12), None, 100, 3000, 10**6) == 1501
    # an explicit value capped at the estimate, plus the padding row from 0.5.12
    assert request_table_rows((0, 5, 11), 10**9, 100, 10**6, 10**6) == 2048
    assert request_table_rows((0, 5, 12), 10**9, 100, 10**6, 10**6) == 2049
    assert request_table_rows((0, 5, 13), 10**9, 100, 10**6, 10**6, dp=2) == 2049


def test_from_0_5_10_the_estimate_reads_the_capped_pool(tmp_path: Path) -> None:
    """From 0.5.10 the estimate is taken of the token capacity after --max-total-tokens
    (``_resolve_memory_pool_config``: ``_resolve_token_capacity`` then ``_resolve_max_num_reqs(token_capacity)``);
    0.5.5 - 0.5.9 took it of the profiled pool before the cap (``init_memory_pool``)."""
    r = _run(tmp_path, "v0.5.12", 10000, "--context-length", "65536", "--max-total-tokens", "300000")
    (cr,) = r.containers
    assert isinstance(cr, ContainerResult) and cr.plan is not None
    d = cr.plan_detail
    assert isinstance(d, SglangPlanDetail)
    cap = cr.plan.capacity_tokens
    assert cap == 300000
    est = min(4096, max(2048, int(cap / 65536 * 512)))
    assert d.request_table_rows == min(10000, est) + 1
