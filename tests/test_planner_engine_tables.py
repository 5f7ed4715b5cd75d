"""``kvlint plan --compare`` and ``--sweep`` for TGI and SGLang commands (planner26; they refused both engines
before, exit 2). Every row and point must be ``kvlint plan`` of the same command with the engine's own setting
typed (TGI's --num-shard / --max-total-tokens..., SGLang's --tp-size / --mem-fraction-static...): the figures are
compared with that plan's JSON, the verdicts with its verdict. Offline (bundled model catalogue); no expected
figure is written here, each comes from kvlint's own plan of the command."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from kvlint.cli import main

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
TGI = ["text-generation-launcher", "--model-id", MODEL]
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL]
ENGINES = {
    "tgi": (TGI, "--num-shard", "3.3.6"),
    "sglang": (SGLANG, "--tp-size", "0.5.5"),
}
#: the fits column of a cell for each ``kvlint plan`` verdict of the command
PLAN_VERDICTS = {"fits": {"ok"}, "risky": {"risky"}, "fails": {"fail"}, "refused": {"fail"}}


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, ["plan", "--offline", *args])


def _plan(acc: str, version: str, argv: list[str]) -> dict[str, Any]:
    r = _run("--format", "json", "--accelerator", acc, "--engine-version", version, "--", *argv)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _table(*args: str) -> dict[str, Any]:
    r = _run("--format", "json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_compare_rows_are_kvlint_plan_of_the_command_with_that_tp_and_kv_dtype(engine: str) -> None:
    argv, tp_flag, version = ENGINES[engine]
    cmd = [*argv, "--max-total-tokens" if engine == "tgi" else "--context-length", "16384"]
    doc = _table("--compare", "--accelerators", "l4,h100", "--engine-version", version, "--", *cmd)
    assert doc["engine"] == engine and doc["engine_version"] == version and not doc["engine_version_assumed"]
    rows = doc["compare"]["rows"]
    assert {r["accelerator"] for r in rows} == {"nvidia-l4", "nvidia-h100-sxm5-80gb"}
    assert {r["tp"] for r in rows} == {1, 2, 4, 8} and len({r["kv_cache_dtype"] for r in rows}) == 2
    verdicts = set()
    for r in rows:
        typed = [*cmd, tp_flag, str(r["tp"])]
        if r["kv_cache_dtype"] != "auto":
            typed += ["--kv-cache-dtype", r["kv_cache_dtype"]]
        plan = _plan(r["accelerator"], version, typed)
        assert plan["verdict"] in PLAN_VERDICTS[r["verdict"]], (r, plan["verdict"], plan["diagnostics"])
        verdicts.add(r["verdict"])
        if r["verdict"] == "refused":
            continue
        mem, kv = plan["memory"], plan["kv"]
        assert r["weights_bytes"] == mem["weights_bytes"]
        assert r["kv_cache_bytes"] == mem["kv_cache_bytes"]
        assert r["kv_tokens"] == (kv["capacity_tokens"] if kv["num_blocks"] > 0 else 0)
        assert r["concurrency"] == pytest.approx(kv["max_concurrency"], abs=0.006)
        assert r["max_model_len"] == kv["max_model_len"] == 16384
        assert (
            r["gpus"] == plan["parallel"]["tensor_parallel_size"] * plan["parallel"]["pipeline_parallel_size"]
        )
    # the table is not one verdict everywhere: an 8B model in bf16 does not fit an L4 at TP 1 under SGLang's
    # default fraction, and fits an H100 (the exact cells are the plans', checked above)
    assert "fits" in verdicts


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_largest_length_is_the_edge_kvlint_plan_draws(engine: str) -> None:
    """The ``largest`` column: at that length ``kvlint plan`` of the command starts (ok or risky in the band),
    one token more and it does not hold one request (TGI refuses at warmup; SGLang's pool caps requests: KV702)."""
    argv, tp_flag, version = ENGINES[engine]
    length_flag = "--max-total-tokens" if engine == "tgi" else "--context-length"
    # the model's whole context typed (TGI's default max_total_tokens follows the KV cache it finds)
    doc = _table(
        "--compare", "--accelerators", "l4", "--engine-version", version, "--", *argv, length_flag, "131072"
    )
    edges = [r for r in doc["compare"]["rows"] if 0 < r["largest_max_model_len"] < r["max_model_len"] or (
        r["verdict"] != "fits" and r["largest_max_model_len"] > 0)]  # fmt: skip
    assert edges, doc["compare"]["rows"]
    r = edges[0]
    typed = [*argv, tp_flag, str(r["tp"])]
    if r["kv_cache_dtype"] != "auto":
        typed += ["--kv-cache-dtype", r["kv_cache_dtype"]]
    largest = r["largest_max_model_len"]
    extra = ["--max-input-tokens", str(largest - 1)] if engine == "tgi" else []
    at = _plan("l4", version, [*typed, length_flag, str(largest), *extra])
    assert at["verdict"] in ("ok", "risky"), at["diagnostics"]
    extra = ["--max-input-tokens", str(largest)] if engine == "tgi" else []
    past = _plan("l4", version, [*typed, length_flag, str(largest + 1), *extra])
    rules_at = {d["rule"] for d in at["diagnostics"]}
    rules_past = {d["rule"] for d in past["diagnostics"] if d["severity"] != "info"}
    if engine == "tgi":  # the warmup finds fewer tokens than one request: the launcher exits
        assert past["verdict"] == "fail" and "KV603" in rules_past, past["diagnostics"]
    else:  # the pool no longer holds one request: SGLang caps requests below the context it advertises
        assert "KV702" not in rules_at and "KV702" in rules_past, (rules_at, rules_past)


@pytest.mark.parametrize(
    ("engine", "spec", "flag"),
    [
        ("tgi", "cuda-memory-fraction=0.7,0.85,1.0", "--cuda-memory-fraction"),
        ("tgi", "max-total-tokens=4k..32k", "--max-total-tokens"),
        ("sglang", "mem-fraction-static=0.7..0.9", "--mem-fraction-static"),
        ("sglang", "context-length=8k,32k", "--context-length"),
    ],
)
def test_sweep_points_are_kvlint_plan_with_the_setting_typed(engine: str, spec: str, flag: str) -> None:
    argv, tp_flag, version = ENGINES[engine]
    cmd = [*argv, tp_flag, "2"]
    doc = _table("--accelerator", "l4", "--engine-version", version, "--sweep", spec, "--", *cmd)
    (sw,) = doc["sweeps"]
    assert sw["setting"] == flag.lstrip("-") and sw["accelerator"] == "nvidia-l4"
    assert len(sw["points"]) >= 2
    for p in sw["points"]:
        plan = _plan("l4", version, [*cmd, flag, str(p["value"])])
        assert plan["verdict"] in PLAN_VERDICTS[p["verdict"]], (p, plan["diagnostics"])
        assert p["kv_cache_bytes"] == plan["memory"]["kv_cache_bytes"]
        assert p["num_blocks"] == plan["kv"]["num_blocks"]
        assert p["max_model_len"] == plan["kv"]["max_model_len"]
        assert p["concurrency"] == pytest.approx(plan["kv"]["max_concurrency"], abs=0.006)
    # the swept setting moves the figures (a sweep that printed one plan five times would pass the above)
    assert (
        len({p["kv_cache_bytes"] for p in sw["points"]}) > 1
        or len({p["max_model_len"] for p in sw["points"]}) > 1
    )


def test_text_tables_speak_the_engines_terms() -> None:
    r = _run("--accelerator", "l4", "--sweep", "context-length=8k,16k", "--compare", "--accelerators", "l4", "--",
             *SGLANG)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "largest context_length" in r.output and "SGLang" in r.output and "max_model_len" not in r.output
    assert "--tp-size" in r.output and "max_total_num_tokens" in r.output
    r = _run("--compare", "--accelerators", "l4", "--", *TGI)
    assert r.exit_code == 0, r.output
    assert "largest max_total_tokens" in r.output and "--num-shard" in r.output
    assert "vLLM" not in r.output and "max_model_len" not in r.output


@pytest.mark.parametrize(
    ("argv", "spec", "own"),
    [
        (TGI, "max-model-len=8k..32k", "max-total-tokens"),
        (SGLANG, "gpu-memory-utilization=0.8", "mem-fraction-static"),
    ],
)
def test_sweep_of_a_vllm_setting_names_the_engines_own(argv: list[str], spec: str, own: str) -> None:
    r = _run("--accelerator", "l4", "--sweep", spec, "--", *argv)
    assert r.exit_code == 2 and "Traceback" not in r.output
    flat = " ".join(r.output.split())
    assert f"calls it {own}" in flat, flat


@pytest.mark.parametrize(
    ("argv", "version"),
    [(TGI, "2.3.0"), (TGI, "3.3.6"), (SGLANG, "0.5.5"), (SGLANG, "0.5.23")],
    ids=["tgi-2.3.0", "tgi-3.3.6", "sglang-0.5.5", "sglang-0.5.23"],
)
def test_a_fitting_row_has_room_for_its_own_length(argv: list[str], version: str) -> None:
    """A row whose command fits holds at least its own length, so the largest length is never below it (TGI 2.x's
    fixed default max_input_tokens of 4095 refused every shorter max_total_tokens tried: the column read 0)."""
    doc = _table("--compare", "--accelerators", "l4,h100", "--engine-version", version, "--", *argv)
    rows = [r for r in doc["compare"]["rows"] if r["verdict"] == "fits"]
    assert rows
    for r in rows:
        assert r["largest_max_model_len"] >= r["max_model_len"] > 0, r


@pytest.mark.parametrize("argv", [TGI, [*SGLANG, "--tp-size", "2"]], ids=["tgi", "sglang"])
def test_kv_dtype_sweep_refuses_a_value_the_engine_refuses(argv: list[str]) -> None:
    """A made-up KV dtype was planned (SGLang's model reads any non-16-bit name as one byte): now a usage error
    naming what the engine accepts, as vLLM's sweep does."""
    r = _run("--accelerator", "l4", "--sweep", "kv-cache-dtype=auto,bogus", "--", *argv)
    assert r.exit_code == 2 and "does not accept --kv-cache-dtype bogus" in " ".join(r.output.split()), (
        r.output
    )
    fp8 = "fp8_e5m2"
    doc = _table("--accelerator", "l4", "--sweep", f"kv-cache-dtype=auto,{fp8}", "--", *argv)
    auto, low = doc["sweeps"][0]["points"]
    assert low["kv_tokens"] > auto["kv_tokens"]


def test_a_value_the_launcher_refuses_is_a_refused_point_naming_the_rule() -> None:
    """TGI's launcher refuses max_total_tokens at or below max_input_tokens (KV601) before sizing anything: that
    point is ``refused`` with the rule, as ``kvlint plan`` of the same command fails with it; the next point plans."""
    cmd = [*TGI, "--max-input-tokens", "2048"]
    doc = _table("--accelerator", "h100", "--sweep", "max-total-tokens=1k,4k", "--", *cmd)
    low, high = doc["sweeps"][0]["points"]
    assert (low["verdict"], low["refused_by"]) == ("refused", "KV601") and not low["fits"]
    plan = _plan("h100", "3.3.7", [*cmd, "--max-total-tokens", "1000"])
    assert plan["verdict"] == "fail" and "KV601" in {d["rule"] for d in plan["diagnostics"]}
    assert high["verdict"] in ("fits", "risky") and high["kv_tokens"] > 0


def test_tgi_before_2_4_has_no_fp8_kv_rows() -> None:
    """TGI's launcher has --kv-cache-dtype from 2.4.0 (``Args::kv_cache_dtype``, absent from tgi@v2.3.1's
    launcher/src/main.rs): a 2.3 comparison offered fp8 rows the launcher refuses (clap: unexpected argument), a
    KV-dtype sweep planned them, and ``kvlint plan`` of such a command sized an fp8 cache."""
    doc = _table("--compare", "--accelerators", "l4", "--engine-version", "2.3.0", "--", *TGI)
    assert {r["kv_cache_dtype"] for r in doc["compare"]["rows"]} == {"auto"}
    doc = _table("--compare", "--accelerators", "l4", "--engine-version", "2.4.0", "--", *TGI)
    assert {r["kv_cache_dtype"] for r in doc["compare"]["rows"]} == {"auto", "fp8_e4m3fn"}
    r = _run("--accelerator", "l4", "--engine-version", "2.3.0", "--sweep", "kv-cache-dtype=auto,fp8_e5m2", "--",
             *TGI)  # fmt: skip
    assert r.exit_code == 2 and "has no --kv-cache-dtype" in " ".join(r.output.split()), r.output
    plan = _plan("l4", "2.3.0", [*TGI, "--kv-cache-dtype", "fp8_e5m2"])
    (f,) = [d for d in plan["diagnostics"] if d["rule"] == "KV205"]
    assert "--kv-cache-dtype" in f["message"] and "from 2.4.0" in f["message"]
    assert not [d for d in _plan("l4", "2.4.0", [*TGI, "--kv-cache-dtype", "fp8_e5m2"])["diagnostics"]
                if d["rule"] == "KV205"]  # fmt: skip


def test_tgi2_largest_max_total_tokens_keeps_the_launchers_input_default() -> None:
    """Before 2.4.1 the launcher defaults max_input_tokens to min(max_position_embeddings, 4096) - 1 whatever
    max_total_tokens is, and the prefill budget to that + 50 (tgi@v2.3.0:launcher/src/main.rs::main). The largest
    max_total_tokens was searched with --max-input-tokens one below each length (a prefill budget of the length +
    49), so a command that fits at the model's whole context showed a far shorter largest length. Now: at the
    largest length the command as typed (no --max-input-tokens) starts, one token more and it does not."""
    doc = _table("--compare", "--accelerators", "l4", "--engine-version", "2.3.0", "--", *TGI,
                 "--max-total-tokens", "131072")  # fmt: skip
    rows = doc["compare"]["rows"]
    for r in rows:
        if r["verdict"] == "fits":
            assert r["largest_max_model_len"] == r["max_model_len"] == 131072, r
    edge = next(r for r in rows if 0 < r["largest_max_model_len"] < r["max_model_len"])
    largest = edge["largest_max_model_len"]
    assert largest > 4096  # above the launcher's input default: none typed
    typed = [*TGI, "--num-shard", str(edge["tp"])]
    at = _plan("l4", "2.3.0", [*typed, "--max-total-tokens", str(largest)])
    assert at["verdict"] in ("ok", "risky"), at["diagnostics"]
    past = _plan("l4", "2.3.0", [*typed, "--max-total-tokens", str(largest + 1)])
    assert past["verdict"] == "fail", past["diagnostics"]
