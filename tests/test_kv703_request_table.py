"""KV703: SGLang before 0.5.10 sizes its request-to-token table (``ReqToTokenPool``, ``context_len + 4`` int32 columns)
by an explicit ``--max-running-requests`` as given, after the KV pool was sized from the memory left
(``sglang@0.5.5``/``0.5.9`` ``init_memory_pool``); from 0.5.10 the engine caps the value
(``_resolve_max_num_reqs``). The threshold is the run's own plan: table + weights + KV pool against the GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.memory.sglang import SglangPlanDetail
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.families.sglang import REQUEST_TABLE_EXTRA_COLUMNS
from kvlint.types import CheckResult, ContainerResult


def _run(tmp_path: Path, tag: str, requests: int) -> CheckResult:
    cmd = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-running-requests",
        str(requests),
    ]
    argv = ", ".join(f'"{a}"' for a in cmd)
    p = tmp_path / f"{tag}-{requests}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        f"  containers:\n  - name: sglang\n    image: lmsysorg/sglang:{tag}\n    command: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
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
    return (cr.plan.total_bytes - cr.plan.weights_bytes - cr.plan.kv_cache_bytes) // row


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


@pytest.mark.parametrize("tag", ["v0.5.10", "v0.5.23"])
def test_sglang_caps_the_value_from_0_5_10(tmp_path: Path, tag: str) -> None:
    assert not _kv703(_run(tmp_path, tag, 10**9))
