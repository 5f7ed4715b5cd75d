"""``kvlint verify --record`` for TGI and SGLang start-ups, and ``--record`` beside ``--format json``.

The case a TGI or SGLang log records holds every figure verify read from it (before, only the vLLM-era keys went
in: a TGI 3.x log's "KV-cache blocks: N, size: S" and SGLang's scheduler limits were compared but not recorded), named
as the shared ground truth names them (TGI's launcher defaults are ``*_default``, as in gt-082), and the release the
user named with ``--engine-version`` when the log prints none. ``--format json`` keeps stdout one JSON document: a
replay error is said in it (not again on stderr), and ``--record -`` beside it is a usage error (the YAML case and the
JSON report went to stdout one after the other).
"""

from __future__ import annotations

import json
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

# (log, --accelerator, --engine-version, stand-in model: the excerpts name none, as in tests/test_verify.py)
STARTUPS = [
    (LOGS / "gt-293.log", "h100", "3.0.0", MODELS / "Qwen--Qwen2.5-1.5B"),  # TGI 3.x warmup blocks
    (LOGS / "verify" / "tgi-2.0-rocm-mi300x-llama3-8b.log", "mi300x", None, None),  # TGI launcher defaults
    (LOGS / "gt-286.log", "h100", "0.5.5", MODELS / "Qwen--Qwen2.5-7B"),  # SGLang scheduler limits
    (LOGS / "gt-232.log", "mi355x", None, "Qwen/Qwen3-30B-A3B"),  # SGLang pool and weights
]


def _cli(*args: str):
    return CliRunner().invoke(main, ["verify", "--offline", *args])


@pytest.mark.parametrize(("path", "acc", "version", "model"), STARTUPS, ids=[s[0].stem for s in STARTUPS])
def test_record_holds_every_figure_verify_compared(path: Path, acc: str, version: str | None, model) -> None:
    log = parse_log(path.read_text(encoding="utf-8"))
    assert log.engine in ("tgi", "sglang")
    opts = Options(allow_hub=False, accelerator=acc, engine_version=version)
    res = verify_log(log, opts, model=str(model) if model else None)
    assert res.figures
    case = record_case(res, log, source=path.name, engine_version=version)
    recorded = case["figures"] or {}
    for f in res.figures:
        key = _CASE_NAMES.get(f.key, f.key)
        assert recorded.get(key) == log.figures[f.key], (f.key, recorded)
    # nothing is recorded that the log did not print
    printed = {_CASE_NAMES.get(k, k): v for k, v in log.figures.items()}
    assert all(printed[k] == v for k, v in recorded.items())
    assert case["engine_version"] == (log.version or version)


def test_tgi_launcher_defaults_are_recorded_under_the_ground_truth_names() -> None:
    """gt-082 (shared ground truth) records "Default `max_total_tokens` to 4096" as max_total_tokens_default;
    max_total_tokens there is a value the user set (gt-077)."""
    log = parse_log((LOGS / "verify" / "tgi-2.0-rocm-mi300x-llama3-8b.log").read_text(encoding="utf-8"))
    case = record_case(None, log)
    assert "max_total_tokens" in log.figures
    assert case["figures"]["max_total_tokens_default"] == log.figures["max_total_tokens"]
    assert "max_total_tokens" not in case["figures"]


def test_cli_records_the_given_engine_version_and_the_tgi_blocks(tmp_path: Path) -> None:
    out = tmp_path / "case.yaml"
    model = str(MODELS / "Qwen--Qwen2.5-1.5B")
    log = str(LOGS / "gt-293.log")
    r = _cli(
        log, "--model", model, "--accelerator", "h100", "--engine-version", "v3.0.0", "--record", str(out)
    )
    assert r.exit_code in (0, 1), r.output
    (case,) = yaml.safe_load(out.read_text())
    assert case["engine"] == "tgi" and case["engine_version"] == "3.0.0"
    printed = parse_log(Path(log).read_text(encoding="utf-8")).figures
    assert case["figures"]["kv_cache_blocks"] == printed["kv_cache_blocks"]
    assert case["figures"]["kv_block_size"] == printed["kv_block_size"]


def test_json_replay_error_is_said_once(tmp_path: Path) -> None:
    """gt-293's excerpt names no model: exit 2. With --format json the error is the JSON's ``error`` and stderr does
    not repeat it; --record's own note (no case written) is still said, once."""
    out = tmp_path / "case.yaml"
    r = _cli(str(LOGS / "gt-293.log"), "--accelerator", "h100", "--format", "json", "--record", str(out))
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert "names no model" in doc["error"]
    assert "names no model" not in r.stderr
    assert r.stderr.count("--record: no case written") == 1 and not out.exists()
    # the text report says the error on stderr, once
    r = _cli(str(LOGS / "gt-293.log"), "--accelerator", "h100")
    assert r.exit_code == 2 and r.stderr.count("names no model") == 1


def test_json_and_record_to_stdout_is_a_usage_error() -> None:
    """Both wrote to stdout: a YAML case followed by a JSON report, which neither reader takes."""
    model = str(MODELS / "Qwen--Qwen2.5-1.5B")
    args = (str(LOGS / "gt-293.log"), "--model", model, "--accelerator", "h100", "--engine-version", "3.0.0")
    r = _cli(*args, "--format", "json", "--record", "-")
    assert r.exit_code == 2 and "--record - and --format json" in r.output and not r.stdout.strip()
    r = _cli(*args, "--format", "json")
    json.loads(r.stdout)  # one document
    r = _cli(*args, "--record", "-")
    assert yaml.safe_load(r.stdout)[0]["engine"] == "tgi"


# (log, --accelerator, --engine-version, model, flags typed after --, what the case holds for them)
TYPED = [
    (
        LOGS / "gt-293.log",
        "h100",
        "3.0.0",
        MODELS / "Qwen--Qwen2.5-1.5B",
        ["--num-shard", "2", "--quantize", "fp8"],
        {("parallelism", "tensor_parallel"): 2, ("gpu", "count"): 2, ("quantization",): "fp8"},
    ),
    (
        LOGS / "gt-286.log",
        "h100",
        "0.5.5",
        MODELS / "Qwen--Qwen2.5-7B",
        ["--tp", "2", "--dp", "2", "--enable-dp-attention", "--context-length", "8192"],
        {
            ("parallelism", "tensor_parallel"): 2,
            ("parallelism", "data_parallel"): 2,
            ("max_model_len",): 8192,
            ("other_flags",): ["enable_dp_attention=True"],
        },
    ),
]


@pytest.mark.parametrize(
    ("path", "acc", "version", "model", "flags", "want"), TYPED, ids=[t[0].stem for t in TYPED]
)
def test_record_holds_the_flags_typed_after_the_log(
    tmp_path: Path, path: Path, acc: str, version: str, model: Path, flags: list[str], want: dict
) -> None:
    """README: ``kvlint verify startup.log ... -- --max-num-seqs 8`` gives the flags the log omits, and the replay
    plans with them; the recorded case left them out (a TGI start-up at two shards went in as ``tensor_parallel:
    null``, ``gpu.count: null``, ``quantization: null``), so replaying the contributed case sized another start-up."""
    out = tmp_path / "case.yaml"
    args = (str(path), "--model", str(model), "--accelerator", acc, "--engine-version", version)
    r = _cli(*args, "--record", str(out), "--", *flags)
    assert r.exit_code in (0, 1), r.output
    (case,) = yaml.safe_load(out.read_text())
    for keys, value in want.items():
        got = case
        for k in keys:
            got = got[k]
        assert got == value, (keys, got)
    # the replay used the same flags
    assert all(f in r.stdout for f in flags if f.startswith("--")), r.stdout
    # without them, the case holds none of them (the excerpts print no launcher arguments)
    r = _cli(*args, "--record", str(out))
    (case,) = yaml.safe_load(out.read_text())
    assert case["parallelism"]["tensor_parallel"] is None and case["other_flags"] is None


def test_record_holds_every_figure_the_log_printed_mla_kv_size() -> None:
    """SGLang's MLA pool line "KV Cache is allocated. #tokens: N, KV size: X GB" is read (``kv_size_gb``, as gt-297
    records it) but was left out of the case: every figure the parser read goes in, under the ground truth's name."""
    log = parse_log((LOGS / "gt-297.log").read_text(encoding="utf-8"))
    assert "kv_size_gb" in log.figures
    case = record_case(None, log, engine_version="0.5.3")
    printed = {_CASE_NAMES.get(k, k): v for k, v in log.figures.items()}
    assert case["figures"] == printed
