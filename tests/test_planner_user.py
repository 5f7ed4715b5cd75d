"""What a capacity planner trips on in `kvlint plan`, `--sweep`, `simulate` and `diff` (planner24): simulate
with --gpu-memory alone, memory fractions written one way everywhere, concurrency never rounded up to a whole
request that does not fit, SGLang's KV702 making the plan `risky`, and `kvlint diff` paths as `kvlint check`
prints them. Offline (bundled model catalogue); every expected figure comes from kvlint's own plan."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runs import checks_in_process, plan_json, run_kvlint

from kvlint.numbers import fraction, times

VLLM_8B = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_8B = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_L4 = [
    "--accelerator",
    "l4",
    "--engine-version",
    "0.5.2",
    "--",
    *SGLANG_8B,
    "--mem-fraction-static",
    "0.85",
]


# ------------------------------------------------------------------ simulate: --gpu-memory names the GPU too


def test_simulate_takes_gpu_memory_alone_as_plan_and_sweep_do() -> None:
    """`kvlint plan --gpu-memory 79.19GiB` and `--sweep` plan on a GPU of that size; simulate refused the same
    option with "Missing option '--accelerator'". Now it simulates on that GPU, on the very plan `kvlint plan`
    prints, and says what it needs when given neither."""
    argv = [*VLLM_8B, "--max-model-len", "8192"]
    r = run_kvlint(
        "simulate",
        "--offline",
        "--gpu-memory",
        "79.19GiB",
        "--requests",
        "40",
        "--no-sensitivity",
        "--",
        *argv,
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Capacity plan: meta-llama/Llama-3.1-8B-Instruct on GPU with 79.19 GiB"), (
        r.output
    )
    plan = plan_json("--gpu-memory", "79.19GiB", "--", *argv)
    assert f"{plan['kv']['num_blocks']:,} blocks" in r.stdout
    none = run_kvlint("simulate", "--offline", "--requests", "40", "--", *argv)
    assert none.exit_code == 2
    assert none.exception is None or isinstance(none.exception, SystemExit), repr(none.exception)
    assert "--accelerator ID" in none.output and "--gpu-memory QTY" in none.output, none.output
    assert "Missing option" not in none.output


# ------------------------------------------------------------------ fractions and concurrency, one way


@pytest.mark.parametrize(
    ("value", "text"), [(0.9, "0.90"), (0.85, "0.85"), (1.0, "1.00"), (0.925, "0.925"), (0.9975, "0.9975")]
)
def test_fraction_keeps_two_decimals_and_never_rounds_a_value_away(value: float, text: str) -> None:
    assert fraction(value) == text


@pytest.mark.parametrize(
    ("value", "limit", "text"),
    [
        (0.9975, 1.0, "0.99"),
        (0.994, 1.0, "0.99"),
        (1.0, 1.0, "1.00"),
        (1.999, 2.0, "1.99"),
        (1.999, 1.0, "2.00"),  # only the limit asked for is guarded: 7.996 stays 8.00 as before
        (3.8249, 1.0, "3.82"),
        (1028.875, 1.0, "1028.88"),
    ],
)
def test_times_never_rounds_up_to_the_limit_it_is_below(value: float, limit: float, text: str) -> None:
    assert times(value, limit) == text


def test_utilization_sweep_writes_every_fraction_with_the_same_decimals() -> None:
    """The sweep printed 0.8, 0.85, 0.9, 0.95 in one column (Python's str of each float) where the plan writes
    0.90 and simulate wrote 0.9: every point now as the plan writes it, 0.925 included."""
    r = run_kvlint(
        "plan", "--offline", "--accelerator", "h100", "--sweep", "gpu-memory-utilization=0.8,0.85,0.9,0.925",
        "--", *VLLM_8B, "--max-model-len", "8192",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    rows = [ln.split()[0] for ln in r.stdout.splitlines() if re.match(r"\s+0\.\d+\s+\d", ln)]
    assert rows == ["0.80", "0.85", "0.90", "0.925"], r.stdout
    bars = [ln.split()[0] for ln in r.stdout.splitlines() if " |" in ln and "concurrent" in ln]
    assert bars == rows
    sim = run_kvlint(
        "simulate", "--offline", "--accelerator", "h100", "--requests", "20", "--no-sensitivity",
        "--", *VLLM_8B, "--max-model-len", "8192", "--gpu-memory-utilization", "0.9",
    )  # fmt: skip
    assert sim.exit_code == 0, sim.output
    assert "budget (gpu_memory_utilization 0.90)" in sim.stdout
    plan = run_kvlint(
        "plan", "--offline", "--accelerator", "h100", "--", *VLLM_8B, "--gpu-memory-utilization", "0.925"
    )
    assert "(gpu_memory_utilization 0.925)" in plan.stdout, plan.stdout  # was rounded to 0.93


def _sglang_len_at_low_end(fraction_static: str) -> tuple[int, int]:
    """(context length whose low-end concurrency is just under 1, low-end pool tokens) from kvlint's own
    plan of SGLang on an L4."""
    doc = plan_json(
        "--accelerator", "l4", "--engine-version", "0.5.2", "--",
        *SGLANG_8B, "--mem-fraction-static", fraction_static, "--context-length", "4096",
    )  # fmt: skip
    low_tokens = round(doc["kv"]["max_concurrency_low"] * 4096)
    return int(low_tokens / 0.9975) + 1, low_tokens


def test_sglang_band_concurrency_just_under_one_is_not_written_one() -> None:
    """The band line read 'concurrency 1.00 to 1.27x' next to a KV105 saying the low end of the band does not
    hold one context_length request (0.9975 rounded up)."""
    ctx_len, low_tokens = _sglang_len_at_low_end("0.85")
    argv = SGLANG_L4
    doc = plan_json(*argv, "--context-length", str(ctx_len))
    low = doc["kv"]["max_concurrency_low"]
    assert low == 0.99, low  # JSON rounded it to 1.0 too
    # the case: one request fits the predicted pool, not the band's low end
    assert doc["kv"]["capacity_tokens"] >= ctx_len > low_tokens
    assert "KV105" in {d["rule"] for d in doc["diagnostics"]}
    text = run_kvlint("plan", "--offline", *argv, "--context-length", str(ctx_len)).stdout
    (band,) = [ln for ln in text.splitlines() if ln.startswith("band: ")]
    assert re.search(r"concurrency 0\.99 to \d+\.\d\dx$", band), band
    md = run_kvlint(
        "plan", "--offline", "--format", "markdown", *argv, "--context-length", str(ctx_len)
    ).stdout
    assert "(0.99–" in md and "(1.00–" not in md


# ------------------------------------------------------------------ KV702: the plan is not "ok"


def test_sglang_pool_below_the_context_makes_the_plan_risky_not_ok() -> None:
    """KV702 (the pool holds fewer tokens than context_length: SGLang caps every request below it) left the
    verdict 'ok' beside a band concurrency of 0.17-0.21x; it is 'risky', exit 0 as documented, and a context
    that fits is 'ok' again."""
    argv = SGLANG_L4
    doc = plan_json(*argv)
    assert "KV702" in {d["rule"] for d in doc["diagnostics"]}
    assert doc["kv"]["max_concurrency_high"] < 1.0
    assert doc["verdict"] == "risky"
    r = run_kvlint("plan", "--offline", *argv)
    assert r.exit_code == 0 and r.stdout.rstrip().endswith("verdict: risky"), r.output
    fixed = plan_json(*argv, "--context-length", "4096")
    assert not {d["rule"] for d in fixed["diagnostics"]} & {"KV702", "KV105"}
    assert fixed["verdict"] == "ok"


# ------------------------------------------------------------------ kvlint diff: paths as check prints them


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_without_p_names_files_as_check_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without -p the diff lints '.', and every finding and workload read './deploy/chat.yaml' while
    `kvlint check deploy/chat.yaml` and `kvlint diff -p deploy` print 'deploy/chat.yaml'."""
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.count("- --model\n") == 1
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(text, encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    changed = text.replace("- --model\n", "- --max-model-len=65536\n            - --model\n")
    (tmp_path / "deploy" / "chat.yaml").write_text(changed, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the diffs' 12 checks in this process: the paths are the test
    check = run_kvlint("check", "--offline", "--fail-on", "never", "deploy/chat.yaml")
    assert check.stdout.startswith("deploy/chat.yaml:"), check.output
    for extra in ([], ["-p", "deploy"], ["-p", "./deploy"]):
        r = run_kvlint("diff", "HEAD", *extra, "--offline")
        assert r.exit_code in (0, 1), r.output
        assert "./deploy" not in r.stdout and "  deploy/chat.yaml:" in r.stdout, (extra, r.stdout)
        assert "(deploy/chat.yaml)" in r.stdout
        doc = json.loads(run_kvlint("diff", "HEAD", *extra, "--offline", "--format", "json").stdout)
        files = {d["file"] for key in ("new", "pre_existing", "fixed") for d in doc[key]}
        files |= {row["file"] for row in doc["capacity"]}
        assert files == {"deploy/chat.yaml"}, (extra, files)


# ------------------------------------------------------------------ a smaller chunked-prefill budget as a remedy

# KubeAI's Llama-3.1-70B FP8 recipe on 8 L4s (corpus: substratusai/kubeai models/llama-3.1-70b-instruct-fp8-l4):
# a 32,768-token profiling batch is the largest term after the weights
KUBEAI_70B = [
    "vllm", "serve", "meta-llama/Meta-Llama-3.1-70B-Instruct", "--quantization", "fp8",
    "--max-model-len", "32768", "--max-num-batched-tokens", "32768", "--max-num-seqs", "512",
    "--pipeline-parallel-size", "4", "--tensor-parallel-size", "2", "--kv-cache-dtype", "fp8", "--enforce-eager",
]  # fmt: skip


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    out = list(argv)
    out[out.index(flag) + 1] = value
    return out


# The recipe's own 32,768-token budget fits since NCCL's share stopped growing per peer on PCIe L4s (one share, branch
# accuracy46); a 40,960-token profiling batch is the same case: the band's low end gives no KV cache (KV105).
TIGHT_BUDGET = 40960
KUBEAI_70B_TIGHT = _with(KUBEAI_70B, "--max-num-batched-tokens", str(TIGHT_BUDGET))


def test_a_smaller_batched_token_budget_is_offered_when_the_profiling_batch_leaves_too_little_kv() -> None:
    """vLLM sizes the KV cache after a dummy forward of max_num_batched_tokens tokens (GPUModelRunner.profile_run
    -> _dummy_run(self.max_num_tokens, is_profile=True)), and kvlint's activation term grows with it; yet no remedy
    proposed a smaller --max-num-batched-tokens, so this recipe was told 'use a larger GPU or more nodes'. The
    remedy is the largest halving that fits, re-planned: applied, the plan is 'ok'."""
    doc = plan_json("--accelerator", "l4", "--", *KUBEAI_70B_TIGHT)
    (kv105,) = [d for d in doc["diagnostics"] if d["rule"] == "KV105"]
    m = re.search(
        r"--max-num-batched-tokens (\d+) fits: .* activation peak is about ([\d.]+) GiB", kv105["fix"]
    )
    assert m, kv105["fix"]
    value = int(m.group(1))
    assert 2048 <= value < TIGHT_BUDGET and value >= 512  # not below --max-num-seqs (KV204)
    fixed = plan_json(
        "--accelerator", "l4", "--", *_with(KUBEAI_70B_TIGHT, "--max-num-batched-tokens", str(value))
    )
    assert fixed["verdict"] == "ok", fixed["diagnostics"]
    assert f"{fixed['memory']['activation_bytes'] / 2**30:.2f}" == m.group(2)
    assert fixed["memory"]["activation_bytes"] < doc["memory"]["activation_bytes"]
    # the largest that fits: twice the value is the current one or does not fit
    if value * 2 < TIGHT_BUDGET:
        twice = plan_json(
            "--accelerator", "l4", "--", *_with(KUBEAI_70B_TIGHT, "--max-num-batched-tokens", str(value * 2))
        )
        assert twice["verdict"] != "ok"


def test_no_batched_token_remedy_below_max_model_len_without_chunked_prefill() -> None:
    """With chunked prefill off vLLM refuses max_num_batched_tokens below max_model_len (KV203): no remedy
    proposes one while chunking stays off; one that lowers it turns chunked prefill on in the same remedy
    (planner25: one re-planned remedy instead of none)."""
    argv = [*KUBEAI_70B_TIGHT, "--no-enable-chunked-prefill"]
    doc = plan_json("--accelerator", "l4", "--engine-version", "0.34.0", "--", *argv)
    assert doc["verdict"] != "ok"
    for d in doc["diagnostics"]:
        for fix in (d["fix"] or "").split("; or "):
            assert "--max-num-batched-tokens" not in fix or "remove --no-enable-chunked-prefill" in fix, fix
    # the same release with chunked prefill on is offered one
    on = plan_json("--accelerator", "l4", "--engine-version", "0.34.0", "--", *KUBEAI_70B_TIGHT)
    assert "--max-num-batched-tokens" in " ".join(d["fix"] or "" for d in on["diagnostics"]), on[
        "diagnostics"
    ]


# ------------------------------------------------------------------ simulate: what kvlint plan says of the command


def _simulate(*argv: str) -> str:
    r = run_kvlint(
        "simulate", "--offline", "--accelerator", "l4", "--requests", "30", "--no-sensitivity", "--", *argv
    )
    assert r.exit_code == 0, r.output
    return r.stdout  # type: ignore[no-any-return]


def test_simulate_says_when_vllm_would_not_start_with_the_command() -> None:
    """A max-model-len that does not fit (KV103: vLLM refuses to start) was simulated without a word; the report
    now lists the plan's findings first and says the simulation is not a deployment that would serve."""
    argv = [*VLLM_8B, "--max-model-len", "131072"]
    plan = plan_json("--accelerator", "l4", "--", *argv)
    assert plan["verdict"] == "fail" and "KV103" in {d["rule"] for d in plan["diagnostics"]}
    text = _simulate(*argv)
    head = text.split("Reserved memory per GPU")[0]
    assert "Findings on this command (as kvlint plan reports them)" in head
    assert "vLLM does not start with this command on this GPU" in head
    assert "- error KV103: one request of max-model-len 131,072 tokens" in head
    fine = _simulate(*VLLM_8B, "--max-model-len", "8192")
    assert "Findings on this command" not in fine and "does not start" not in fine


def _rows(text: str, names: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for ln in text.splitlines():
        m = re.match(r"^(\S.*?)\s{2,}([\d,]+\.\d\d)\s+[\d.]+%", ln)
        if m and m.group(1).split(" (")[0] in names:
            out[m.group(1).split(" (")[0]] = float(m.group(2).replace(",", ""))
    return out


def test_memory_rows_add_up_to_the_budget_with_the_extensible_kv_cache() -> None:
    """vLLM >= 0.34.0 keeps a margin free beside the extensible KV cache; simulate's table said 'left outside the
    budget 0.00' and the plan's table had no row for it, so neither added up (1.40 GiB of an L4 unaccounted).
    Both now show it as 'kept free', and the rows add up to the budget (to rounding)."""
    argv = [*VLLM_8B, "--max-model-len", "8192"]
    doc = plan_json("--accelerator", "l4", "--", *argv)
    mem = doc["memory"]
    parts = ("weights_bytes", "activation_bytes", "non_torch_bytes", "cudagraph_bytes", "kv_cache_bytes")
    kept = (mem["budget_bytes"] - sum(mem[k] for k in parts)) / 2**30
    assert kept > 0.1  # the case: the extensible KV cache's margin
    sim = _rows(
        _simulate(*argv),
        ("budget", "weights", "activation peak", "non-torch", "CUDA graphs", "KV cache", "kept free"),
    )
    assert sim["kept free"] == pytest.approx(kept, abs=0.006)
    assert sum(v for k, v in sim.items() if k != "budget") == pytest.approx(sim["budget"], abs=0.03)
    text = run_kvlint("plan", "--offline", "--accelerator", "l4", "--", *argv).stdout
    plan = _rows(
        text, ("budget", "weights", "activation", "non-torch", "CUDA graphs", "KV cache", "kept free")
    )
    assert plan["kept free"] == sim["kept free"]
    assert sum(v for k, v in plan.items() if k != "budget") == pytest.approx(plan["budget"], abs=0.03)
    md = run_kvlint("plan", "--offline", "--format", "markdown", "--accelerator", "l4", "--", *argv).stdout
    assert f"| kept free (extensible KV cache margin, CUDA context) | {sim['kept free']:.2f} |" in md
    # a release without the extensible KV cache has no such row: its terms add up already
    old = run_kvlint(
        "plan", "--offline", "--accelerator", "l4", "--engine-version", "0.11.0", "--", *argv
    ).stdout
    assert "kept free" not in old


def test_simulate_explains_vllms_maximum_concurrency_next_to_its_own_count() -> None:
    """simulate's 'fit at once' for a max_model_len request (usable blocks // blocks per request) and vLLM's
    'Maximum concurrency' line (all blocks / blocks per request) differ by the null block: the report now states
    vLLM's figure, as kvlint plan prints it, and why its own count is the whole number below it."""
    argv = [*VLLM_8B, "--max-model-len", "16384"]
    doc = plan_json("--accelerator", "l4", "--", *argv)
    kv = doc["kv"]
    text = _simulate(*argv)
    line = (
        f"'Maximum concurrency for {kv['max_model_len']:,} tokens per request: {kv['max_concurrency']:.2f}x'"
    )
    assert line in text
    per = -(-kv["max_model_len"] // kv["block_size"])
    assert f"so {(kv['num_blocks'] - 1) // per:,} such requests fit at once" in text
    assert f"all {kv['num_blocks']:,} blocks" in text


def test_sweep_note_says_a_band_end_without_kv_cache_in_words() -> None:
    """A 'risky' sweep point or compare cell read 'the band gives 0.00 GiB to 5.09 GiB': the low end was clamped
    to zero where the other terms exceed the budget. It is said in words, as the plan's band line says it."""
    argv = KUBEAI_70B_TIGHT
    doc = plan_json("--accelerator", "l4", "--", *argv)
    assert doc["memory"]["kv_cache_bytes_low"] <= 0 < doc["memory"]["kv_cache_bytes"]  # the case
    r = run_kvlint(
        "plan",
        "--offline",
        "--accelerator",
        "l4",
        "--sweep",
        f"max-num-batched-tokens={TIGHT_BUDGET}",
        "--",
        *argv,
    )
    assert r.exit_code == 0, r.output
    (row,) = [
        ln for ln in r.stdout.splitlines() if ln.lstrip().startswith(f"{TIGHT_BUDGET:,} ") and "|" not in ln
    ]
    high = f"{(doc['memory']['kv_cache_bytes_high']) / 2**30:.2f}"
    assert "the band gives no KV cache at all (the other terms exceed the budget) to " in row, row
    assert "0.00 GiB" not in row and high in row


def test_simulate_with_data_parallelism_says_it_simulates_one_engine() -> None:
    """With --data-parallel-size 8 the header read 'one replica = 1 GPU(s)' (the manifest's replica has 8) and
    sent the whole --rate to that one engine without a word; it now says the replica runs 8 engines, each with its
    own KV cache, and that the arrivals are one engine's share."""
    argv = [*VLLM_8B, "--max-model-len", "8192", "--data-parallel-size", "4"]
    plan = plan_json("--accelerator", "l4", "--", *argv)
    assert plan["parallel"]["data_parallel_size"] == 4, plan["parallel"]
    text = _simulate(*argv)
    head = text.split("Reserved memory per GPU")[0]
    assert "one replica = 1 GPU." not in head
    assert "DP=4: the replica runs 4 data-parallel engines of 1 GPU (4 GPUs)" in head
    assert "about 1/4 of the replica's" in head
    assert "one replica = 1 GPU." in _simulate(*VLLM_8B, "--max-model-len", "8192")


@pytest.mark.parametrize("qty", ["80", "0.5GiB", "100TiB"])
def test_simulate_refuses_a_gpu_memory_total_check_and_plan_refuse(qty: str) -> None:
    """simulate read --gpu-memory with no check: '80' (80 bytes) and '100TiB' were simulated ('GPU with
    102400.00 GiB'); it now refuses what kvlint check and kvlint plan refuse, naming the option."""
    argv = [*VLLM_8B, "--max-model-len", "8192"]
    r = run_kvlint(
        "simulate", "--offline", "--gpu-memory", qty, "--requests", "10", "--no-sensitivity", "--", *argv
    )
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "--gpu-memory" in r.output and f"'{qty}'" in r.output
    assert run_kvlint("plan", "--offline", "--gpu-memory", qty, "--", *argv).exit_code == 2


def test_a_decimal_gpu_memory_unit_gets_a_note_in_gib() -> None:
    """'--gpu-memory 80GB' is 80 x 10^9 bytes, 74.51 GiB, not the 79.19 GiB CUDA reports for an H100 80GB: taken as
    written, with a note on stderr saying so in GiB (stdout, JSON included, is unchanged)."""
    argv = [*VLLM_8B, "--max-model-len", "8192"]
    r = run_kvlint("plan", "--offline", "--format", "json", "--gpu-memory", "80GB", "--", *argv)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["memory"]["total_bytes"] == 80 * 10**9
    assert "note: --gpu-memory 80GB is 80,000,000,000 bytes = 74.51 GiB (decimal units)" in r.stderr
    exact = run_kvlint("plan", "--offline", "--format", "json", "--gpu-memory", "79.19GiB", "--", *argv)
    assert exact.exit_code == 0 and "note:" not in exact.stderr


def test_a_swept_max_model_len_above_the_models_is_refused_not_fitting() -> None:
    """`--sweep max-model-len=64k..1000000` said 256,000 'fits: yes' (largest max_model_len 256,000) where
    `kvlint plan` reports KV201 and vLLM refuses to start; such points are 'refused' with KV201's reason, unless
    VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lifts the check (then the memory decides)."""
    argv = [*VLLM_8B]
    plan = plan_json("--accelerator", "h100", "--", *argv, "--max-model-len", "256000")
    assert plan["verdict"] == "fail" and "KV201" in {d["rule"] for d in plan["diagnostics"]}
    derived = plan["kv"]["derived_max_model_len"]
    assert derived < 256000
    r = run_kvlint(
        "plan", "--offline", "--format", "json", "--accelerator", "h100",
        "--sweep", "max-model-len=64k..256000", "--", *argv,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    points = json.loads(r.stdout)["sweeps"][0]["points"]
    for p in points:
        if p["value"] > derived:
            assert (p["verdict"], p["refused_by"], p["fits"]) == ("refused", "KV201", False), p
            assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in p["reason"]
        else:
            assert p["verdict"] != "refused", p
    allowed = run_kvlint(
        "plan", "--offline", "--format", "json", "--accelerator", "h100",
        "--sweep", "max-model-len=256000", "--", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", *argv,
    )  # fmt: skip
    (p,) = json.loads(allowed.stdout)["sweeps"][0]["points"]
    assert p["verdict"] != "refused" and not p["refused_by"], p


def test_kv201_without_a_version_has_no_double_space() -> None:
    """A typed command with no release read 'the 131072 tokens vLLM  derives' (an empty version); it names the
    release kvlint assumed, as KV208 does (limits.release_shown)."""
    from kvlint.memory.versions import release_shown

    doc = plan_json("--accelerator", "h100", "--", *VLLM_8B, "--max-model-len", "256000")
    (kv201,) = [d for d in doc["diagnostics"] if d["rule"] == "KV201"]
    msg = kv201["message"]
    assert "  " not in msg and f"tokens vLLM {release_shown(None)} derives from" in msg, msg


@pytest.mark.parametrize("spec", ["max-num-seqs=0,64", "max-num-batched-tokens=-2048", "max-model-len=0"])
def test_a_sweep_of_counts_refuses_values_below_one(spec: str) -> None:
    """`--sweep max-num-seqs=0,64` planned a scheduler that runs no sequence ('3.79x'); a list of counts takes
    whole numbers of at least 1, as a range already did."""
    r = run_kvlint("plan", "--offline", "--accelerator", "h100", "--sweep", spec, "--", *VLLM_8B)
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert f"--sweep '{spec}'" in r.output and "at least 1" in r.output, r.output


def test_a_kv_cache_dtype_sweep_refuses_what_vllm_does_not_accept() -> None:
    """`--sweep kv-cache-dtype=auto,fp8,bogus` planned 'bogus' as the model dtype ('fits: yes') where `kvlint
    plan` reports KV206 and vLLM's argparse exits; values the release does not accept are a usage error naming
    them and the release's choices."""
    from kvlint.engines.vllm import option_choices

    plan = plan_json("--accelerator", "h100", "--", *VLLM_8B, "--kv-cache-dtype", "bogus")
    assert "KV206" in {d["rule"] for d in plan["diagnostics"]}
    r = run_kvlint(
        "plan",
        "--offline",
        "--accelerator",
        "h100",
        "--sweep",
        "kv-cache-dtype=auto,fp8,bogus",
        "--",
        *VLLM_8B,
    )
    assert r.exit_code == 2, r.output
    assert "does not accept --kv-cache-dtype bogus" in r.output
    old = option_choices("kv_cache_dtype", "0.6.0")
    assert old is not None and "fp8_e4m3" in old and "fp8_ds_mla" not in old
    r = run_kvlint(
        "plan", "--offline", "--accelerator", "h100", "--engine-version", "0.6.0",
        "--sweep", "kv-cache-dtype=auto,fp8_ds_mla", "--", *VLLM_8B,
    )  # fmt: skip
    assert r.exit_code == 2 and "vLLM 0.6.0 does not accept --kv-cache-dtype fp8_ds_mla" in r.output, r.output
    ok = run_kvlint(
        "plan", "--offline", "--accelerator", "h100", "--sweep", "kv-cache-dtype=auto,fp8", "--", *VLLM_8B
    )
    assert ok.exit_code == 0, ok.output
