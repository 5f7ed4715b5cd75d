"""`kvlint plan` / `simulate` / `diff` edges a capacity planner trips on: GiB figures past 1,000 with separators,
band ends at or below zero in words for every engine, what the vLLM-only options say to a TGI or SGLang command,
`--plot` for any engine, KV501 in a plan without a GPU, and `kvlint diff` without git, with a configuration
file only one revision has, and its JSON capacity figures as numbers. Offline (bundled model catalogue)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runs import checks_in_process
from click.testing import CliRunner

from kvlint.cli import main

GiB = 2**30
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
TGI_8B = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
TGI_70B = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-70B-Instruct"]
SGLANG_8B = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
VLLM_8B = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]


def _plan(*args: str) -> Any:
    return CliRunner().invoke(main, ["plan", "--offline", *args])


def _plan_json(*args: str) -> dict[str, Any]:
    r = _plan("--format", "json", *args)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------- (a) GiB past 1,000


def test_kv103_writes_a_huge_per_request_figure_with_thousands_separators() -> None:
    """One request of 100M tokens needs over 10,000 GiB of KV cache: the figure read '12207.03 GiB' next to
    '100,000,000 tokens'; GiB figures now group thousands as token counts do, in the text and Markdown plans."""
    argv = [
        *VLLM_8B,
        "--max-model-len",
        "100000000",
        "--hf-overrides",
        '{"max_position_embeddings": 100000000}',
    ]
    doc = _plan_json("--accelerator", "h100", "--", *argv)
    need = doc["kv"]["per_request_bytes"] / GiB
    assert need >= 1000  # the case the separators are for
    (kv103,) = [d for d in doc["diagnostics"] if d["rule"] == "KV103"]
    assert f"needs {need:,.2f} GiB of KV cache per GPU" in kv103["message"]
    assert f"{need:.2f} GiB" not in kv103["message"]


def test_gib_figures_stay_plain_below_1000() -> None:
    """The separators change nothing below 1,000 GiB (every figure of the shared corpus)."""
    from kvlint.capacity.render import gib as table_gib
    from kvlint.rules.context import gib

    assert gib(14.99 * GiB) == "14.99 GiB" and table_gib(999.5 * GiB) == "999.50"
    assert gib(1234.5 * GiB) == "1,234.50 GiB" and table_gib(-1234.5 * GiB) == "-1,234.50"
    assert re.fullmatch(r"-?\d{1,3}(,\d{3})*\.\d\d GiB", gib(123456.78 * GiB))


# --------------------------------------------------------------------------- (b) band ends at or below zero


def _band_line(text: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith("band: KV "))


def test_a_band_end_at_or_below_zero_is_said_in_words_for_tgi_and_sglang() -> None:
    """A failing TGI or SGLang plan printed 'band: KV -0.48 to 0.18 GiB': a negative KV cache with no word on
    what it means. The signed figure stays (the budget equation's), followed by what it means."""
    for argv in (SGLANG_8B, TGI_70B, [*VLLM_8B[:2], "meta-llama/Llama-3.1-70B-Instruct"]):
        doc = _plan_json("--accelerator", "l4", "--", *argv)
        low, high = doc["memory"]["kv_cache_bytes_low"], doc["memory"]["kv_cache_bytes_high"]
        assert low <= 0, (argv, low)  # the cases this is about: the band's low end leaves no KV cache
        text = _plan("--accelerator", "l4", "--", *argv).stdout
        band = _band_line(text)
        assert f"{low / GiB:,.2f}" in band and "no KV cache at all" in band, band
        if high > 0:
            assert band.index("no KV cache at all") < band.index(f"to {high / GiB:,.2f} GiB"), band
        else:
            assert "across the whole band" in band
        md = _plan("--accelerator", "l4", "--format", "markdown", "--", *argv).stdout
        row = next(ln for ln in md.splitlines() if ln.startswith("| KV cache band |"))
        assert "no KV cache at all" in row
    # a band above zero reads as before
    doc = _plan_json("--accelerator", "l4", "--", *TGI_8B)
    assert doc["memory"]["kv_cache_bytes_low"] > 0
    band = _band_line(_plan("--accelerator", "l4", "--", *TGI_8B).stdout)
    lo, hi = doc["memory"]["kv_cache_bytes_low"] / GiB, doc["memory"]["kv_cache_bytes_high"] / GiB
    assert band.startswith(f"band: KV {lo:,.2f} to {hi:,.2f} GiB, blocks") and "no KV cache" not in band


# ------------------------------------------------------------------ (c) vLLM-only options, other engines


def test_simulate_tells_a_tgi_or_sglang_user_why_and_what_to_run() -> None:
    """It said 'capacity planning models vLLM only (got tgi)': now the engine by name, why (the simulation is vLLM
    V1's scheduler) and the command that plans it, --compare and --sweep included, which plan TGI and SGLang
    commands since planner26 (tests/test_planner_engine_tables.py); exit 2, no traceback."""
    from kvlint.capacity.cli import simulate

    for argv, name in ((TGI_8B, "TGI"), (SGLANG_8B, "SGLang")):
        r = CliRunner().invoke(simulate, ["--accelerator", "l4", "--offline", "--", *argv])
        assert r.exit_code == 2 and "Traceback" not in r.output
        flat = " ".join(r.output.split())
        article = "an" if name == "SGLang" else "a"
        assert (
            f"kvlint simulate (vLLM's V1 scheduler) models vLLM only, and this is {article} {name} command"
            in flat
        )
        assert f"which {name} does not share" in flat, flat
        assert "`kvlint plan --accelerator ID -- <the same command>`" in flat and "--compare" in flat
        # and that command does plan it, its --compare too
        plain = _plan("--accelerator", "l4", "--format", "json", "--", *argv)
        assert json.loads(plain.stdout)["engine"] in ("tgi", "sglang")
        table = _plan("--compare", "--accelerators", "l4", "--format", "json", "--", *argv)
        assert table.exit_code == 0 and json.loads(table.stdout)["compare"]["rows"], table.output


def test_plot_alone_prints_the_plan_for_any_engine(tmp_path: Any) -> None:
    """`--plot` alone printed only a note (and refused TGI and SGLang, although it draws the memory breakdown
    every engine's plan has): now the plan as without --plot, its exit status, then the plot line."""
    out = tmp_path / "plan.svg"
    for argv in (TGI_8B, SGLANG_8B):
        plain = _plan("--accelerator", "l4", "--", *argv)
        r = _plan("--accelerator", "l4", "--plot", str(out), "--", *argv)
        assert r.exit_code == plain.exit_code and "Traceback" not in r.output, r.output
        assert r.stdout.startswith(plain.stdout)
        last = r.stdout[len(plain.stdout) :].strip()
        assert last == f"plot written to {out}" or last.startswith("note: --plot needs matplotlib"), last
    # JSON stays JSON: the plot line goes to stderr
    r = _plan("--accelerator", "l4", "--format", "json", "--plot", str(out), "--", *TGI_8B)
    assert json.loads(r.stdout)["engine"] == "tgi"


def test_kv501_in_a_plan_without_a_gpu_names_the_plan_options() -> None:
    """`kvlint plan` without --accelerator said to request GPUs in resources.limits and add a nodeSelector:
    there is no pod; the GPU comes from --accelerator or --gpu-memory."""
    for argv in (VLLM_8B, TGI_8B):
        r = _plan("--format", "json", "--", *argv)
        assert r.exit_code == 2, r.output  # verdict unknown
        doc = json.loads(r.stdout)
        (kv501,) = [d for d in doc["diagnostics"] if d["rule"] == "KV501"]
        assert "--accelerator ID" in kv501["fix"] and "--gpu-memory" in kv501["fix"]
        assert "resources.limits" not in kv501["fix"] and "nodeSelector" not in kv501["fix"]
        assert "requests no GPU" not in kv501["message"]
        # the option it names plans the command
        sized = _plan_json("--accelerator", "l4", "--", *argv)
        assert sized["verdict"] != "unknown" and not [d for d in sized["diagnostics"] if d["rule"] == "KV501"]


def test_compare_and_sweep_say_where_vllm_falls_back_to_v0() -> None:
    """vLLM 0.10 on an A100 runs --kv-cache-dtype fp8 for Gemma 3 on its V0 engine: that row showed less KV
    cache and a third of the concurrency of the auto row with an empty note. Every cell planned on V0 (and only
    those) now says so, from the plan's own engine choice."""
    from kvlint.accelerators import lookup
    from kvlint.capacity.compare import compare
    from kvlint.capacity.context import plan_detail, resolve
    from kvlint.capacity.sweep import sweep
    from kvlint.options import Options

    argv = ["vllm", "serve", "google/gemma-3-27b-it", "--max-model-len", "32768"]
    ctx = resolve(argv, Options(accelerator="a100-80gb", engine_version="0.10.0", allow_hub=False))
    rows = compare(ctx, ["a100-80gb", "h100"], tp_sizes=(1, 2))
    eras = {}
    for r in rows:
        acc = lookup(r.accelerator)
        assert acc is not None
        eras[r] = plan_detail(ctx, acc, tensor_parallel_size=r.tp, kv_cache_dtype=r.kv_cache_dtype).plan.era
    assert "v0" in eras.values() and "v1" in eras.values()  # the case: both engines in one table
    for r, era in eras.items():
        assert ("vLLM runs its V0 engine here" in r.reason) == (era == "v0"), (r, era)
    _, pts = sweep(ctx, ctx.accelerator, "kv-cache-dtype=auto,fp8")  # type: ignore[arg-type]
    by = {p.value: p for p in pts}
    assert "V0 engine" in by["fp8"].reason and "V0 engine" not in by["auto"].reason


def test_simulate_runs_a_hybrid_model_on_one_groups_share_of_the_blocks() -> None:
    """Gemma 3 has 7 KV-cache groups (sliding window and full attention) sharing the planned blocks, and every
    request holds blocks in each: the simulator, which has one group, ran on all of them, 7x the cache vLLM has
    for short requests ('GPU KV cache size: 43,952 tokens', simulated as 307,680). It now runs on one group's
    share and the report says why; a one-group model keeps every block."""
    from kvlint.capacity.context import plan_detail, resolve, usable_blocks
    from kvlint.capacity.report import build_report
    from kvlint.capacity.workload import WorkloadSpec
    from kvlint.options import Options

    opts = Options(accelerator="a100-80gb", engine_version="0.10.0", allow_hub=False)
    spec = WorkloadSpec(requests=50, seed=1)
    for model, hybrid in (("google/gemma-3-27b-it", True), ("meta-llama/Llama-3.1-8B-Instruct", False)):
        ctx = resolve(["vllm", "serve", model, "--max-model-len", "32768"], opts)
        assert ctx.plan is not None and ctx.accelerator is not None
        groups = plan_detail(ctx, ctx.accelerator, ctx.total_bytes).groups
        assert (len(groups) > 1) == hybrid
        rep = build_report(ctx, spec, sensitivity=False)
        assert rep.config.num_blocks == usable_blocks(ctx.plan) // len(groups)
        text = rep.render()
        assert (f"KV-cache groups: {len(groups)} (" in text) == hybrid
        if hybrid:
            assert f"run on a pool of {rep.config.num_blocks:,} blocks" in " ".join(text.split())
            # vLLM's own token count for short requests (one block per group per block_size tokens, 0.9 - 0.27)
            assert rep.config.num_blocks * ctx.plan.block_size <= ctx.plan.capacity_tokens


def test_kv403_offers_fewer_workers_only_when_they_start() -> None:
    """KV403 offered 'set NUM_SHARD (--num-shard) to 2' for Gemma 2 27B on two L4s, where the weights alone
    exceed a GPU (KV101 then). The fewer-workers remedy is re-planned: offered when that plan has no error,
    replaced by why not otherwise (the figures are the re-plan's, as `kvlint plan` gives them)."""
    tgi = ["text-generation-launcher", "--model-id", "google/gemma-2-27b-it", "--max-total-tokens", "2048"]
    tgi += ["--max-input-length", "1562", "--max-batch-prefill-tokens", "2048"]
    vllm = [*VLLM_8B, "--max-model-len", "8192"]
    seen = []
    for argv, acc, flag, need, have in ((tgi, "l4", "--num-shard", 4, 2), (vllm, "h100", "-tp", 2, 1)):
        doc = _plan_json("--accelerator", acc, "--gpus", str(have), "--", *argv, flag, str(need))
        (kv403,) = [d for d in doc["diagnostics"] if d["rule"] == "KV403"]
        lower = _plan_json("--accelerator", acc, "--gpus", str(have), "--", *argv, flag, str(have))
        starts = not [d for d in lower["diagnostics"] if d["severity"] == "error"]
        assert kv403["fix"].startswith(f"request {need} GPUs per pod")
        offered = "NUM_SHARD (--num-shard) to" in kv403["fix"] or "product is" in kv403["fix"]
        assert offered == starts, (argv, kv403["fix"])
        if not starts:
            w, total = lower["memory"]["weights_bytes"] / GiB, lower["memory"]["total_bytes"] / GiB
            assert (
                f"fewer GPUs would not start: kvlint's re-plan on {have} GPU{'' if have == 1 else 's'} has {w:,.2f} GiB"
                in kv403["fix"]
            )
            assert f"of {total:,.2f} GiB" in kv403["fix"]
        seen.append(starts)
    assert seen == [False, True]  # the cases: two L4s cannot hold Gemma 2 27B; one H100 holds Llama 8B


def test_compare_and_sweep_in_json_are_json() -> None:
    """`kvlint plan --format json --compare/--sweep` printed the text tables; it is JSON with the rows of the
    same comparison and sweep (the functions the tables are made from)."""
    from dataclasses import asdict

    from kvlint.capacity.compare import compare
    from kvlint.capacity.context import resolve
    from kvlint.capacity.sweep import sweep
    from kvlint.options import Options

    argv = [*VLLM_8B, "--max-model-len", "8192"]
    r = _plan("--format", "json", "--accelerator", "h100", "--engine-version", "0.11.0", "--compare",
              "--accelerators", "h100,l4", "--sweep", "max-num-seqs=64,128", "--", *argv)  # fmt: skip
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    ctx = resolve(argv, Options(accelerator="h100", engine_version="0.11.0", allow_hub=False))
    assert (doc["engine"], doc["engine_version"], doc["model"]) == ("vllm", "0.11.0", VLLM_8B[2])
    assert doc["compare"]["rows"] == [asdict(x) for x in compare(ctx, ["h100", "l4"])]
    (sw,) = doc["sweeps"]
    assert sw["setting"] == "max-num-seqs" and sw["accelerator"] == ctx.accelerator.id  # type: ignore[union-attr]
    assert sw["points"] == [asdict(p) for p in sweep(ctx, ctx.accelerator, "max-num-seqs=64,128")[1]]  # type: ignore[arg-type]
    text = _plan(
        "--accelerator", "h100", "--engine-version", "0.11.0", "--sweep", "max-num-seqs=64,128", "--", *argv
    )
    assert text.stdout.startswith("Sweep of max-num-seqs")


def test_tp_remedy_stays_within_one_node(tmp_path: Path) -> None:
    """KubeAI's Llama-3.1-70B FP8 at PP 4 x TP 2 on eight L4s was told '--tensor-parallel-size 4 (and 16 GPUs
    per pod) fits': no common node has 16 GPUs. A one-pod engine is offered a larger TP only within 8 GPUs; past
    that the fallback says more nodes. The recipe's own 32,768-token context and batch fit since NCCL's share
    stopped growing per peer on PCIe L4s (branch accuracy46); at 40,960 tokens it is the same case (KV105)."""
    text = (FIXTURES / "parallelism" / "kubeai-llama-3.1-70b-fp8-l4.yaml").read_text()
    assert text.count("=32768") == 2  # --max-model-len and --max-num-batched-token
    manifest = tmp_path / "kubeai-llama-3.1-70b-fp8-l4-40k.yaml"
    manifest.write_text(text.replace("=32768", "=40960"))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--format", "json", "--fail-on", "never", str(manifest)]
    )
    doc = json.loads(r.stdout)
    (w,) = doc["workloads"]
    par = w["plan"]["parallel"]
    assert par["tensor_parallel_size"] * par["pipeline_parallel_size"] == w["gpus"] == 8
    fixes = [d["fix"] for d in doc["diagnostics"] if d["rule"] in ("KV103", "KV104", "KV105")]
    assert fixes, doc["diagnostics"]
    for fix in fixes:
        m = re.search(r"--tensor-parallel-size (\d+) \(and (\d+) GPUs per pod", fix)
        assert m is None or int(m.group(2)) <= 8, fix
    # past 8 GPUs the fallback says more nodes, unless another remedy fits: here (its args turn chunked prefill
    # off) chunked prefill on with a smaller batch does (planner25)
    assert any(
        "more nodes" in f or "chunked prefill on (remove --enable-chunked-prefill=false)" in f for f in fixes
    )
    # in a pod of 4 GPUs (PP 2 x TP 2) a TP remedy, if any, stays within 8 GPUs too
    argv = ["vllm", "serve", "neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8", "--max-model-len", "32768"]
    argv += ["--pipeline-parallel-size", "2", "-tp", "2", "--max-num-batched-tokens", "32768"]
    small = _plan_json("--accelerator", "l4", "--gpus", "4", "--", *argv)
    for d in small["diagnostics"]:
        m = re.search(
            r"--tensor-parallel-size (\d+) \(and (\d+) GPUs[,)]", d["fix"] or ""
        )  # a command: no pod
        assert m is None or int(m.group(2)) <= 8, d["fix"]


def test_sweep_without_a_gpu_names_both_ways_to_give_one() -> None:
    """--sweep said it needs --accelerator, but --gpu-memory (a GPU of that size) serves as well."""
    argv = [*VLLM_8B, "--max-model-len", "8192"]
    r = _plan("--sweep", "max-num-seqs=64,128", "--", *argv)
    assert r.exit_code == 2 and "--accelerator ID" in r.output and "--gpu-memory QTY" in r.output, r.output
    ok = _plan("--gpu-memory", "79.19GiB", "--sweep", "max-num-seqs=64,128", "--", *argv)
    assert ok.exit_code == 0 and ok.stdout.startswith("Sweep of max-num-seqs on GPU with 79.19 GiB"), (
        ok.output
    )


# --------------------------------------------------------------------------------------------- kvlint diff

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "examples" / "chat-8b-l4.yaml"


def _chat(max_model_len: int) -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    assert text.count("- --model\n") == 1
    return text.replace("- --model\n", f"- --max-model-len={max_model_len}\n            - --model\n")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _diff(*args: str) -> Any:
    return CliRunner().invoke(main, ["diff", *args, "--offline"])


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_with_a_config_file_only_one_revision_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A change that adds its --config file failed the whole diff ('kvlint check failed on HEAD: ... no such
    configuration file'); the revision without it is linted without the option, and the diff says so."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "chat.yaml").write_text(_chat(65536), encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "kvlint.yaml").write_text("ignore: [KV103]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the diffs' checks in this process: what each side is given is the test
    args = ["HEAD", "-p", "deploy", "--config", "ci/kvlint.yaml"]
    r = _diff(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    (note,) = doc["notes"]
    assert note.startswith("ci/kvlint.yaml is not in HEAD: that side is linted without --config")
    # the head reads the file (KV103 ignored), the base does not: KV103 is gone, nothing new
    assert "KV103" in {d["rule"] for d in doc["fixed"]} and not doc["new"]
    text = _diff(*args).stdout
    assert f"note: {note}" in text.splitlines()[:3]
    assert f"> Note: {note}" in _diff(*args, "--format", "markdown").stdout
    # the other way round: the base has it, the working tree deleted it
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "config")
    (tmp_path / "ci" / "kvlint.yaml").unlink()
    r = _diff(*args, "--format", "json")
    assert r.exit_code == 1, r.output  # KV103 is new: the head no longer ignores it
    doc = json.loads(r.stdout)
    assert doc["notes"] == [
        "ci/kvlint.yaml is not in the working tree: that side is linted without --config "
        "(its nearest .kvlint.yaml, if any, as kvlint check finds it)"
    ]
    assert "KV103" in {d["rule"] for d in doc["new"]}
    # in neither revision: a usage error naming it
    r = _diff("HEAD", "-p", "deploy", "--config", "ci/nowhere.yaml")
    assert r.exit_code == 2 and "--config ci/nowhere.yaml: no such file or directory" in r.output


def test_diff_without_git_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no git on PATH, `kvlint diff` (with -p, --config or neither) raised FileNotFoundError."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["-p", "deploy"], ["--config", ".kvlint.yaml", "--helm-values", "v.yaml"]):
        r = _diff("HEAD", *extra)
        assert r.exit_code == 2, (extra, r.output)
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert "cannot run git" in r.output and "install it or put it on PATH" in r.output


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_json_capacity_figures_are_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON capacity cells were the table's strings ('8,192', '14.99 GiB', '1.20×'): now numbers, with
    their unit in the key, equal to each side's own plan in kvlint check's JSON report."""
    (tmp_path / "chat.yaml").write_text(_chat(8192), encoding="utf-8")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (tmp_path / "chat.yaml").write_text(_chat(16384), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    checks_in_process(monkeypatch)  # the diff's checks in this process: the figures are the test
    r = _diff("HEAD", "-p", "chat.yaml", "--format", "json")
    assert r.exit_code in (0, 1), r.output
    (row,) = json.loads(r.stdout)["capacity"]
    check = CliRunner().invoke(
        main, ["check", "--offline", "--format", "json", "--fail-on", "never", "chat.yaml"]
    )
    (w,) = json.loads(check.stdout)["workloads"]
    mem, kv = w["plan"]["memory"], w["plan"]["kv"]
    after = row["after"]
    assert after["max_model_len"] == kv["max_model_len"] == 16384
    assert (
        after["kv_tokens"] == kv["capacity_tokens"] and after["weights_bytes_per_gpu"] == mem["weights_bytes"]
    )
    assert after["kv_headroom_bytes_per_gpu"] == mem["kv_cache_bytes"] - kv["per_request_bytes"]
    assert after["concurrency_at_max_model_len"] == pytest.approx(kv["max_concurrency"], abs=1e-4)
    assert (after["engine"], after["engine_version"], after["accelerator"], after["gpus"]) == (
        w["engine"],
        w["engine_version"],
        w["accelerator"],
        w["gpus"],
    )
    assert after["replicas"] == w["replicas"] and after["kv_cache_dtype"] == kv["kv_cache_dtype"]
    for side in (row["before"], after):
        for key in ("weights_bytes_per_gpu", "kv_tokens", "max_model_len", "kv_headroom_bytes_per_gpu"):
            assert isinstance(side[key], int) and not isinstance(side[key], bool), (key, side[key])
        assert isinstance(side["concurrency_at_max_model_len"], float)
        assert side["verdict"] in ("fits", "risky", "fails", "unknown") and isinstance(
            side["verdict_rules"], list
        )
    assert row["before"]["max_model_len"] == 8192
    assert row["before"]["concurrency_at_max_model_len"] > after["concurrency_at_max_model_len"]
