"""KV604's fix when no smaller ``--max-batch-prefill-tokens`` can start: before chunked prefill (TGI < 3.0) the
prefill budget must hold one whole prompt (``max_batch_prefill_tokens >= max_input_tokens``), so the search over
smaller budgets finds none, and the fix said "use more shards, a larger GPU or a quantized model" -- even at eight
shards, and although more shards make the warmup's full-vocabulary logits larger per GPU (gathered, three copies:
``kvlint.memory.tgi.prefill_logits_bytes``). It now names the prompt limit that starts, re-planned, and names more
shards only when a shard count does start. Applying the fix clears the error; one token more does not fit."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kvlint.cli import main

CMD = [
    "text-generation-launcher",
    "--model-id",
    "meta-llama/Llama-3.1-8B-Instruct",
    "--max-total-tokens",
    "32768",
]


def _plan(*flags: str) -> dict:
    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--format",
            "json",
            "--engine-version",
            "2.4.0",
            "--accelerator",
            "l4",
            "--",
            *CMD,
            *flags,
        ],
    )
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def _rules(d: dict) -> dict[str, dict]:
    return {x["rule"]: x for x in d["diagnostics"]}


@pytest.mark.parametrize("shards", ["1", "8"])
def test_kv604_fix_lowers_the_prompt_limit_and_the_fix_starts(shards: str) -> None:
    before = _plan("--max-input-tokens", "32000", "--num-shard", shards)
    kv604 = _rules(before)["KV604"]
    assert before["verdict"] == "fail"
    m = re.search(r"lower --max-input-tokens to (\d+)", kv604["fix"])
    assert m, kv604["fix"]
    assert "more shards" not in kv604["fix"]  # none starts: more_shards re-planned them
    n = int(m.group(1))
    after = _plan("--max-input-tokens", str(n), "--num-shard", shards)
    assert "KV604" not in _rules(after) and after["verdict"] != "fail", after["diagnostics"]
    assert after["verdict"] == "ok"  # held to the low end of kvlint's band: no KV105
    over = _plan("--max-input-tokens", str(n + 1), "--num-shard", shards)
    assert over["verdict"] != "ok"  # the largest that fits


def test_a_prefill_budget_the_user_set_is_lowered_with_the_prompt_limit() -> None:
    before = _plan("--max-input-tokens", "32000", "--max-batch-prefill-tokens", "32000")
    fix = _rules(before)["KV604"]["fix"]
    m = re.search(r"lower --max-input-tokens to (\d+) and --max-batch-prefill-tokens to (\d+)", fix)
    assert m and m.group(1) == m.group(2), fix
    after = _plan("--max-input-tokens", m.group(1), "--max-batch-prefill-tokens", m.group(2))
    assert after["verdict"] == "ok", after["diagnostics"]


def test_sweep_and_compare_show_no_kv_cache_where_the_warmup_runs_out_of_memory() -> None:
    """A TGI warmup that runs out of memory allocates no KV block: the sweep row showed the memory the plan left
    beside the warmup's activation (1.02 GiB on an L4 at --max-input-tokens 16000) with 0 blocks and 0 tokens,
    where ``--compare`` showed 0.00 GiB for a cell whose left memory was negative. Both now show 0 bytes."""
    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--format",
            "json",
            "--engine-version",
            "2.4.0",
            "--accelerator",
            "l4",
            "--sweep",
            "max-input-tokens=2k..32k",
            "--",
            *CMD,
        ],
    )
    assert r.exit_code == 0, r.output
    points = json.loads(r.stdout)["sweeps"][0]["points"]
    oom = [p for p in points if "warmup prefill batch runs out of memory" in p["reason"]]
    assert oom and any(p["num_blocks"] > 0 for p in points)
    for p in points:
        assert (p["kv_cache_bytes"] > 0) == (p["num_blocks"] > 0), p
    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--format",
            "json",
            "--engine-version",
            "2.4.0",
            "--compare",
            "--accelerators",
            "l4",
        ]
        + ["--", *CMD, "--max-input-tokens", "16000"],
    )
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["compare"]["rows"]
    assert any(row["kv_tokens"] == 0 for row in rows)
    for row in rows:
        assert (row["kv_cache_bytes"] > 0) == (row["kv_tokens"] > 0), row
