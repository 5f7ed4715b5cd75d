"""Schema-level checks of the second ground-truth set, bench/groundtruth/cases.yaml (cite ``gt-2NN`` and ``gt-3NN``).

The file follows the format of the shared ground truth (shared/groundtruth/cases.yaml and its README). These tests
check the facts against each other, not against kvlint: required fields, unique ids and URLs, positive numbers,
units, the identities that hold between figures the engine printed (blocks x block size = tokens, tokens /
max_model_len = concurrency for full-attention models, the V0 budget sentence), and that every log excerpt in
fixtures/logs/ agrees with its case. When ../shared is present, the field set and the ids/URLs are also compared
with the shared file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CASES_FILE = REPO / "bench" / "groundtruth" / "cases.yaml"
LOGS = REPO / "fixtures" / "logs"
SHARED_CASES = REPO.parent / "shared" / "groundtruth" / "cases.yaml"

CASES: list[dict[str, Any]] = yaml.safe_load(CASES_FILE.read_text())
BY_ID = {c["id"]: c for c in CASES}

# Field order of the shared format (shared/groundtruth/README.md, "Fields").
FIELDS = [
    "id", "source", "engine", "engine_version", "model_id", "model_notes", "user_stated_model_config", "gpu",
    "parallelism", "dtype", "quantization", "kv_cache_dtype", "gpu_memory_utilization", "max_model_len",
    "max_num_seqs", "max_num_batched_tokens", "enforce_eager", "block_size", "other_flags", "outcome", "failure",
    "figures", "log_format", "notes", "reliability",
]  # fmt: skip
SOURCE_KEYS = {"repo", "kind", "number", "url", "date", "locator", "reporter_role"}
GPU_KEYS = {"model", "count", "total_gib_reported", "notes"}
PARALLEL_KEYS = ["tensor_parallel", "pipeline_parallel", "expert_parallel", "data_parallel"]
V0_DEFAULT_BLOCK = 16  # vLLM's default --block-size on CUDA/ROCm for the releases in this set


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cases]


def _numbers(obj: Any, path: str = "") -> list[tuple[str, float]]:
    """Every int/float leaf under ``obj`` (bools excluded) with its dotted path."""
    if isinstance(obj, bool):
        return []
    if isinstance(obj, (int, float)):
        return [(path, obj)]
    if isinstance(obj, dict):
        return [item for k, v in obj.items() for item in _numbers(v, f"{path}.{k}" if path else str(k))]
    if isinstance(obj, list):
        return [item for i, v in enumerate(obj) for item in _numbers(v, f"{path}[{i}]")]
    return []


def _fig(case: dict[str, Any], key: str) -> Any:
    return (case.get("figures") or {}).get(key)


def test_at_least_thirty_cases_with_local_ids() -> None:
    assert len(CASES) >= 30
    assert len(set(_ids(CASES))) == len(CASES), "duplicate ids"
    for cid in _ids(CASES):
        assert re.fullmatch(r"gt-[2-9]\d\d", cid), cid  # 201 on: never a shared gt-0NN id


@pytest.mark.parametrize("cid", sorted(BY_ID))
def test_case_has_the_shared_fields(cid: str) -> None:
    c = BY_ID[cid]
    assert list(c) == FIELDS, cid
    assert set(c["source"]) <= SOURCE_KEYS and {"url", "kind", "date", "reporter_role"} <= set(c["source"])
    if c["gpu"] is not None:
        assert {"model", "count", "total_gib_reported"} <= set(c["gpu"]) <= GPU_KEYS, cid
    assert c["parallelism"] is None or list(c["parallelism"]) == PARALLEL_KEYS
    assert c["outcome"] in {"ok", "fail"}
    assert c["reliability"] in {"high", "medium", "low"}
    assert re.match(r"(vllm|tgi|sglang)\b", c["engine"]), c["engine"]
    if c["outcome"] == "fail":
        assert c["failure"] and c["failure"].get("kind"), cid
    else:
        assert c["failure"] is None, cid
    assert c["figures"] or c["failure"], f"{cid}: neither figures nor a failure"


@pytest.mark.parametrize("cid", sorted(BY_ID))
def test_source_url_and_date(cid: str) -> None:
    s = BY_ID[cid]["source"]
    assert re.fullmatch(r"https://\S+", s["url"] or ""), cid
    if s["repo"] and s["url"].startswith("https://github.com/"):
        assert s["url"].startswith(f"https://github.com/{s['repo']}/"), cid
    if s["number"] is not None:
        assert re.search(rf"/(issues|pull)/{s['number']}$", s["url"]), cid
    elif not s["url"].startswith("https://github.com/"):  # a rendered page: no commit to pin, so a date
        assert s["kind"] == "documentation page" and s["repo"] is None and s["date"], cid
    else:
        assert "/blob/" in s["url"] and re.search(r"/blob/[0-9a-f]{40}/", s["url"]), f"{cid}: pin the commit"
    date = s["date"]
    assert date is None or re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", date), cid
    if date is None:
        assert s.get("locator"), f"{cid}: no date and no locator"


@pytest.mark.parametrize("cid", sorted(BY_ID))
def test_numbers_are_positive(cid: str) -> None:
    c = BY_ID[cid]
    leaves = _numbers(c["figures"]) + _numbers(c["failure"]) + _numbers(c["gpu"]) + _numbers(c["parallelism"])
    leaves += [(k, c[k]) for k in ("gpu_memory_utilization", "max_model_len", "max_num_seqs",
                                   "max_num_batched_tokens", "block_size") if c[k] is not None]  # fmt: skip
    assert leaves or c["outcome"] == "fail", cid
    for path, value in leaves:
        if path == "cudagraph_gib":  # a memory change during capture, negative when freed (shared gt-054)
            continue
        assert value > 0, f"{cid}: {path} = {value}"
    util = c["gpu_memory_utilization"]
    assert util is None or 0 < util <= 1, cid


@pytest.mark.parametrize("cid", sorted(BY_ID))
def test_units_are_consistent(cid: str) -> None:
    c = BY_ID[cid]
    fig = c["figures"] or {}
    ints = ("kv_tokens", "gpu_blocks", "cpu_blocks", "max_batch_total_tokens", "concurrency_for_len")
    for key in ints:
        assert key not in fig or isinstance(fig[key], int), f"{cid}: {key} must be a whole number"
    if "weights_unit_printed" in fig:
        assert fig["weights_unit_printed"] in {"GB", "GiB"} and "weights_gib" in fig, cid
    # "GB" keys are SGLang's own printout; vLLM figures are in GiB.
    gb_keys = [k for k in fig if k.endswith("_gb")]
    assert not gb_keys or c["engine"].startswith("sglang"), f"{cid}: {gb_keys}"
    total = (c["gpu"] or {}).get("total_gib_reported")
    if total:
        for key, value in fig.items():
            if key.endswith("_gib") and isinstance(value, (int, float)):
                assert value < total, f"{cid}: {key} {value} GiB exceeds the {total} GiB card"
    if "k_size_gb" in fig and "v_size_gb" in fig:
        assert fig["k_size_gb"] == fig["v_size_gb"], cid
    if c["max_model_len"] and "concurrency_for_len" in fig:
        assert fig["concurrency_for_len"] == c["max_model_len"], cid
    if "max_batch_total_tokens" in fig and "max_total_tokens" in fig:
        assert fig["max_batch_total_tokens"] >= fig["max_total_tokens"], cid  # TGI refuses otherwise


def _block_size(c: dict[str, Any]) -> int:
    return int(c["block_size"] or _fig(c, "block_size_implied") or V0_DEFAULT_BLOCK)


@pytest.mark.parametrize("cid", sorted(cid for cid, c in BY_ID.items() if _fig(c, "gpu_blocks")))
def test_blocks_match_tokens_and_concurrency(cid: str) -> None:
    """Where the engine printed blocks: tokens = blocks x block size, concurrency = that / max_model_len."""
    c = BY_ID[cid]
    tokens = _fig(c, "gpu_blocks") * _block_size(c)
    if _fig(c, "kv_tokens") is not None:
        assert _fig(c, "kv_tokens") == tokens, cid
    if _fig(c, "max_concurrency") is not None:
        per_request = tokens / _fig(c, "concurrency_for_len")
        assert per_request == pytest.approx(_fig(c, "max_concurrency"), abs=0.006), cid


def _full_attention(c: dict[str, Any]) -> bool:
    """False when the case says the model mixes attention kinds (its concurrency is not tokens / length)."""
    text = f"{c['model_notes'] or ''} {c['notes'] or ''}"
    return not re.search(r"hybrid|sliding", text, re.IGNORECASE)


CONCURRENCY = sorted(
    cid
    for cid, c in BY_ID.items()
    if _fig(c, "kv_tokens") and _fig(c, "max_concurrency") and _fig(c, "concurrency_for_len")
)


@pytest.mark.parametrize("cid", CONCURRENCY)
def test_tokens_over_length_is_concurrency_for_full_attention(cid: str) -> None:
    c = BY_ID[cid]
    ratio = _fig(c, "kv_tokens") / _fig(c, "concurrency_for_len")
    if _full_attention(c):
        assert ratio == pytest.approx(_fig(c, "max_concurrency"), abs=0.006), cid
    else:  # say why the printed concurrency differs, or confirm it does not
        # a sliding-window request costs at most one block more than a full-attention one when its window plus the
        # batched tokens reach max_model_len (vllm/v1/kv_cache_interface.py::SlidingWindowSpec.max_memory_usage_bytes:
        # cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block) + 1; gt-316)
        blocks = -(-_fig(c, "concurrency_for_len") // _block_size(c))
        assert ratio * blocks / (blocks + 1) <= _fig(c, "max_concurrency") + 0.006, cid


def test_concurrency_identity_is_exercised() -> None:
    assert sum(_full_attention(BY_ID[cid]) for cid in CONCURRENCY) >= 5


BUDGET = sorted(
    cid
    for cid, c in BY_ID.items()
    if all(_fig(c, k) is not None for k in ("budget_gib", "weights_gib", "non_torch_gib", "activation_gib"))
)


@pytest.mark.parametrize("cid", BUDGET)
def test_v0_budget_sentence_closes(cid: str) -> None:
    """budget = utilisation x total, and KV = budget - weights - non-torch - activation (shared README)."""
    c = BY_ID[cid]
    total = (c["gpu"] or {}).get("total_gib_reported")
    if total and c["gpu_memory_utilization"]:
        assert c["gpu_memory_utilization"] * total == pytest.approx(_fig(c, "budget_gib"), abs=0.02), cid
    if _fig(c, "kv_cache_gib") is not None:
        terms = sum(_fig(c, k) for k in ("weights_gib", "non_torch_gib", "activation_gib"))
        # V1 from 0.21 (and 0.20 with the env) also takes the CUDA-graph estimate off the budget (gt-290, 0.26.0)
        terms += _fig(c, "cudagraph_estimated_gib") or 0
        rest = _fig(c, "budget_gib") - terms
        assert rest == pytest.approx(_fig(c, "kv_cache_gib"), abs=0.02), cid


def test_budget_identity_is_exercised() -> None:
    assert len(BUDGET) >= 4


@pytest.mark.parametrize("cid", sorted(c["id"] for c in CASES if c["failure"]))
def test_failure_numbers_describe_a_shortfall(cid: str) -> None:
    f = BY_ID[cid]["failure"]
    if "kv_capacity_tokens" in f:
        assert f["kv_capacity_tokens"] < f["max_model_len"], cid
    if "kv_needed_gib" in f and "kv_available_gib" in f:
        assert f["kv_needed_gib"] > f["kv_available_gib"], cid
    if f.get("max_model_len") and BY_ID[cid]["max_model_len"]:
        assert f["max_model_len"] == BY_ID[cid]["max_model_len"], cid


# ------------------------------------------------------------------------------------------ log excerpts
LOG_FILES = sorted(LOGS.glob("*.log"))

# figure key -> a phrase that marks the log line printing it (several engine families per key)
FAMILY = {
    "kv_tokens": r"GPU KV cache size|#tokens:|max_total_num_tokens=",
    "gpu_blocks": r"# (GPU|cuda|CUDA) blocks",
    "cpu_blocks": r"# CPU blocks",
    "kv_cache_gib": r"Available KV cache memory|reserved for KV Cache|available_kv_cache_memory|kv cache memory in use"
    r"|kv_cache_size=",
    "max_concurrency": r"Maximum concurrency",
    "weights_gib": r"Model loading took|Loading model weights took|model weights take",
    "max_batch_total_tokens": r"Setting max batch total tokens",
    "kv_cache_blocks": r"KV-cache blocks:",
    "kv_size_gb": r"KV size:",
    "non_torch_gib": r"non_torch_memory=",
    "budget_gib": r"the current vLLM instance can use|Desired GPU memory utilization",
    "cudagraph_gib": r"Graph capturing finished",
    "weights_gb": r"Load weight end",
    "k_size_gb": r"K size:",
    "free_after_kv_pool_gb": r"Memory pool end",
    "max_batch_prefill_tokens_default": r"Default `max_batch_prefill_tokens`",
}


def _spellings(value: float) -> set[str]:
    if isinstance(value, int):
        return {str(value), f"{value:,}"}
    return {repr(value), f"{value:.2f}", f"{value:.4f}"}


def test_enough_log_excerpts() -> None:
    assert len(LOG_FILES) >= 12


@pytest.mark.parametrize("path", LOG_FILES, ids=[p.stem for p in LOG_FILES])
def test_log_excerpt_is_short_and_belongs_to_a_case(path: Path) -> None:
    assert path.stem in BY_ID, f"{path.name}: no case with that id"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert 1 <= len(lines) <= 60, path.name
    assert all(line == line.rstrip() for line in lines), f"{path.name}: trailing whitespace"


@pytest.mark.parametrize("path", LOG_FILES, ids=[p.stem for p in LOG_FILES])
def test_log_excerpt_agrees_with_its_case(path: Path) -> None:
    """Each figure whose log line is in the excerpt must be printed there with the recorded value."""
    case = BY_ID[path.stem]
    text = path.read_text(encoding="utf-8")
    checked = 0
    for key, phrase in FAMILY.items():
        value = _fig(case, key)
        if value is None or not re.search(phrase, text):
            continue
        assert any(s in text for s in _spellings(value)), f"{path.name}: {key}={value} not in the excerpt"
        checked += 1
    failure = case["failure"] or {}
    for key in (
        "kv_capacity_tokens",
        "max_prefill_tokens",
        "kv_needed_gib",
        "kv_available_gib",
        "mamba_blocks",
    ):
        if key in failure and str(failure[key]) in text:
            checked += 1
    assert checked, f"{path.name}: no recorded figure found in the excerpt"


def test_source_md_lists_every_excerpt_with_its_case_url() -> None:
    rows = {}
    for line in (LOGS / "SOURCE.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*(gt-\d+)\.log\s*\|\s*(gt-\d+)\s*\|.*\|\s*(https://\S+)\s*\|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    assert sorted(rows) == sorted(p.stem for p in LOG_FILES)
    for stem, (cid, url) in rows.items():
        assert cid == stem and url == BY_ID[cid]["source"]["url"], stem


# ------------------------------------------------------------------------------------------ against the shared set
@pytest.mark.skipif(not SHARED_CASES.is_file(), reason="../shared/groundtruth not present")
def test_same_format_as_shared_and_no_overlap() -> None:
    shared = yaml.safe_load(SHARED_CASES.read_text())
    assert {tuple(c) for c in shared} == {tuple(FIELDS)}, "shared field set changed: update FIELDS"
    assert not set(_ids(shared)) & set(BY_ID), "id clash with the shared set"
    shared_urls = {c["source"]["url"] for c in shared if c["source"]["url"]}
    overlap = {c["id"]: c["source"]["url"] for c in CASES if c["source"]["url"] in shared_urls}
    assert not overlap, f"already in the shared set: {overlap}"
