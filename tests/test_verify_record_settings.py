"""``kvlint verify --record``: the case holds the settings the replay planned with, every figure the log printed,
whole-number predictions in its notes, and no case is written for a log that ends before the KV cache was sized.

Before: the setting fields came from the log's non-default args and the flags typed after ``--`` only, so a vLLM
log whose engine-config line showed ``enforce_eager=True`` or ``kv_cache_dtype=fp8`` (which the replay planned with)
went in as ``enforce_eager: null``, ``kv_cache_dtype: null``; vLLM 0.34's "Memory after warmup" / "Extended KV cache
to" figures, 0.6.4's ``initial_memory_usage``/``peak_torch_memory`` and the ``--kv-cache-memory`` suggestions were
read but not recorded; the notes wrote token counts as ``4.803e+05``; a TGI log cut before its warmup was written
with ``figures: null`` and ``outcome: ok`` although README says nothing is written on exit status 2.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.verify import parse_log, record_case, verify_log
from kvlint.verify.record import _CASE_NAMES

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "fixtures" / "logs"
MODELS = ROOT / "fixtures" / "plan" / "models"
TGI_20 = LOGS / "verify" / "tgi-2.0-rocm-mi300x-llama3-8b.log"

#: figures the parser reads that the case holds in its setting fields (``max_model_len``, ...), not in ``figures``
SETTINGS = {"max_model_len": "max_model_len", "gpu_memory_utilization": "gpu_memory_utilization"}


def _gt213_with(**config: str) -> str:
    """gt-213's log (vLLM 0.10.1.1, TP 2) with fields of its engine-config line changed."""
    text = (LOGS / "gt-213.log").read_text(encoding="utf-8")
    for key, val in config.items():
        text, n = re.subn(rf"\b{key}=[^,]*,", f"{key}={val},", text, count=1)
        assert n == 1, key
    return text


def test_record_holds_the_settings_the_replay_planned_with() -> None:
    """The engine-config line's enforce_eager / kv_cache_dtype are replayed (compare.build_command) and now
    recorded; the log's non-default args (TP 2, max_model_len) stay."""
    log = parse_log(_gt213_with(enforce_eager="True", kv_cache_dtype="fp8"))
    opts = Options(allow_hub=False, accelerator="h100")
    res = verify_log(log, opts, model=str(MODELS / "Qwen--Qwen2.5-7B"))
    assert "--enforce-eager" in res.command and "fp8" in res.command
    case = record_case(res, log)
    assert case["enforce_eager"] is True
    assert case["kv_cache_dtype"] == "fp8"
    assert case["parallelism"]["tensor_parallel"] == log.args["tensor_parallel_size"] == 2
    assert case["max_model_len"] == log.args["max_model_len"]
    # nothing the replay did not plan with: the unchanged log records neither
    plain = parse_log((LOGS / "gt-213.log").read_text(encoding="utf-8"))
    case = record_case(verify_log(plain, opts, model=str(MODELS / "Qwen--Qwen2.5-7B")), plain)
    assert case["enforce_eager"] is None and case["kv_cache_dtype"] is None


LOG_FILES = sorted([*LOGS.glob("*.log"), *(LOGS / "verify").glob("*.log")])


@pytest.mark.parametrize("path", LOG_FILES, ids=[p.stem for p in LOG_FILES])
def test_record_holds_every_figure_the_log_printed(path: Path) -> None:
    log = parse_log(path.read_text(encoding="utf-8", errors="replace"))
    if log.engine is None:
        pytest.skip("no engine lines")
    case = record_case(None, log)
    figures = case["figures"] or {}
    for key, value in log.figures.items():
        if key in SETTINGS:
            assert case[SETTINGS[key]] == value, key
        elif key == "max_num_batched_tokens":
            assert case["max_num_batched_tokens"] in (value, log.args.get("max_num_batched_tokens")), key
        else:
            assert figures.get(_CASE_NAMES.get(key, key)) == value, (key, sorted(figures))


def test_v064_profiling_line_figures_are_recorded() -> None:
    """vLLM 0.6.4's V0 key=value profiling line (logparse: ``_V0_KEYVALUE``), as gt-001 records it."""
    text = (
        "INFO 12-01 10:00:00 worker.py:232] Memory profiling results: total_gpu_memory=79.15GiB "
        "initial_memory_usage=15.34GiB peak_torch_memory=15.05GiB memory_usage_post_profile=15.47GiB "
        "non_torch_memory=0.39GiB kv_cache_size=55.80GiB gpu_memory_utilization=0.90\n"
    )
    log = parse_log(text)
    figures = record_case(None, log)["figures"]
    assert figures["initial_memory_usage_gib"] == 15.34
    assert figures["peak_torch_memory_gib"] == 15.05


def test_notes_write_counts_as_integers() -> None:
    """TGI's max batch total tokens (801,568 in the log) was predicted as e.g. ``8.016e+05`` in the notes."""
    log = parse_log(TGI_20.read_text(encoding="utf-8"))
    res = verify_log(log, Options(allow_hub=False, accelerator="mi300x"))
    tokens = next(f for f in res.figures if f.key == "max_batch_total_tokens")
    assert tokens.predicted is not None and tokens.predicted >= 1e5  # wide enough for %.4g to use an exponent
    notes = record_case(res, log)["notes"]
    assert f"max_batch_total_tokens {int(round(tokens.predicted))}" in notes
    assert not re.search(r"tokens \d(\.\d+)?e\+", notes), notes


def test_log_cut_before_kv_sizing_writes_no_case(tmp_path: Path) -> None:
    """README: ``--record`` writes nothing when the status is 2; a TGI log that ends at "Warming up model" shows no
    KV figure and no failure (status 2), and was written with no KV figure and ``outcome: ok``."""
    lines = TGI_20.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, ln in enumerate(lines) if "Warming up model" in ln)
    log = tmp_path / "cut.log"
    log.write_text("".join(lines[: cut + 1]), encoding="utf-8")
    out = tmp_path / "case.yaml"
    r = CliRunner().invoke(
        main, ["verify", "--offline", str(log), "--accelerator", "mi300x", "--record", str(out)]
    )
    assert r.exit_code == 2, r.output
    assert not out.exists()
    assert "no case written" in r.stderr and "ends before the engine sized its KV cache" in r.stderr
    # the whole log is recorded
    r = CliRunner().invoke(
        main, ["verify", "--offline", str(TGI_20), "--accelerator", "mi300x", "--record", str(out)]
    )
    assert r.exit_code in (0, 1), r.output
    (case,) = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert case["outcome"] == "ok" and case["figures"]["max_batch_total_tokens"] == 801568
