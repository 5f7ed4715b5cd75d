"""``kvlint verify`` on every real start-up excerpt in fixtures/logs (sources: fixtures/logs/SOURCE.md; each file is
named after its case in bench/groundtruth/cases.yaml): the parser reproduces the figures each log printed, and the
replay reproduces kvlint's own prediction for the case (bench/accuracy.py's replay of the same settings)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.verify import VerifyError, parse_log, record_case, verify_log

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import accuracy  # noqa: E402

GiB = 1 << 30
LOGS = sorted((ROOT / "fixtures" / "logs").glob("*.log"))
CASES = {c["id"]: c for c in accuracy.load_cases(ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml")}
SHARED_CASE = accuracy.load_cases(ROOT / "fixtures" / "plan" / "groundtruth_cases.yaml")[0]

# Case figures the excerpt does not contain (quoted in the report's prose, or in lines left out of the excerpt).
NOT_IN_EXCERPT = {
    "gt-221": {"non_torch_gib", "activation_gib", "kv_cache_gib"},  # the reporter quotes them; not in the log
    "gt-232": {"mem_fraction_static"},  # stated in the PR text
    "gt-303": {
        "concurrency_for_len"
    },  # the "Maximum concurrency for 10,000 tokens" line is cut in the excerpt
    # the scheduler's "Chunked prefill is enabled with max_num_batched_tokens=8192" line is read as the setting
    # (figures["max_num_batched_tokens"]), not under the case's name for the engine's default
    "gt-332": {"max_num_batched_tokens_default"},
    "gt-359": {"max_num_batched_tokens_default"},
}


def test_every_log_fixture_is_a_case():
    assert len(LOGS) >= 18
    assert all(p.stem in CASES for p in LOGS)


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_parser_reproduces_the_printed_figures(path: Path) -> None:
    case = CASES[path.stem]
    log = parse_log(path.read_text(encoding="utf-8"))
    assert log.engine == str(case["engine"]).split()[0]
    figures = case.get("figures") or {}
    missing = NOT_IN_EXCERPT.get(path.stem, set())
    for key, value in figures.items():
        if key in missing:
            assert key not in log.figures
            continue
        assert log.figures.get(key) == value, (key, log.figures.get(key), value)
    if case["outcome"] == "fail":
        assert log.outcome == "fail"
        for key, value in (case.get("failure") or {}).items():
            if key == "kind":  # the case's kind may add words: "tgi_warmup_failed (shard transport error)"
                assert str(value).startswith(log.failure["kind"]), value
            elif key in log.failure:
                assert log.failure[key] == value, key
    else:
        assert log.outcome == "ok"
    if case.get("engine_version") and log.version:
        assert str(case["engine_version"]).startswith(log.version.lstrip("v"))
    total = (case.get("gpu") or {}).get("total_gib_reported")
    if log.gpu_total_gib is not None and total is not None:
        assert log.gpu_total_gib == total


def _replay_inputs(gid: str) -> tuple[Options, str, tuple[str, ...]]:
    """The verify options for a fixture, from bench/accuracy.py's replay table: the model config, GPU, version the
    bench assumes where the log prints none, and the case's flags the excerpt does not show."""
    case, r = CASES[gid], accuracy.REPLAY[gid]
    ref = next(
        (
            str(b / r.model_dir)
            for b in (accuracy.FIXTURE_MODELS, accuracy.LOCAL_MODELS)
            if (b / r.model_dir).is_dir()
        ),
        r.model_dir.replace("--", "/", 1),
    )
    s = accuracy.case_settings(case, r)
    extra: list[str] = []
    for flag, val in (
        ("--max-model-len", case.get("max_model_len")),
        ("--max-num-seqs", case.get("max_num_seqs")),
        ("--max-num-batched-tokens", case.get("max_num_batched_tokens")),
        ("--gpu-memory-utilization", case.get("gpu_memory_utilization")),
        ("--tensor-parallel-size", (case.get("parallelism") or {}).get("tensor_parallel")),
        ("--pipeline-parallel-size", (case.get("parallelism") or {}).get("pipeline_parallel")),
        ("--quantization", r.quantization),  # the checkpoint's method when the config is the bf16 one
        ("--data-parallel-size", (case.get("parallelism") or {}).get("data_parallel")),
    ):
        if val:
            extra += [flag, str(val)]
    if (case.get("parallelism") or {}).get("expert_parallel") is True:
        extra.append("--enable-expert-parallel")
    if s.kv_cache_dtype != "auto":
        extra += ["--kv-cache-dtype", s.kv_cache_dtype]
    if s.enforce_eager:
        extra.append("--enforce-eager")
    opts = Options(allow_hub=False, accelerator=r.gpu, engine_version=r.version)
    total = (case.get("gpu") or {}).get("total_gib_reported")
    if total:
        opts = dataclasses.replace(opts, gpu_memory_bytes=int(total * GiB))
    return opts, ref, tuple(extra)


REPLAYED = [p for p in LOGS if p.stem in accuracy.REPLAY]


@pytest.mark.parametrize("path", REPLAYED, ids=[p.stem for p in REPLAYED])
def test_replay_reproduces_kvlints_own_prediction(path: Path) -> None:
    gid = path.stem
    log = parse_log(path.read_text(encoding="utf-8"))
    opts, ref, extra = _replay_inputs(gid)
    if log.version:
        opts = dataclasses.replace(opts, engine_version=None)
    res = verify_log(log, opts, model=ref, extra_args=extra)
    bench = accuracy.plan_case(CASES[gid], accuracy.REPLAY[gid], accuracy.FIXTURE_MODELS)
    p, b = res.plan.plan, bench.plan
    assert (p.kv_cache_bytes, p.capacity_tokens, p.num_blocks, p.weights_bytes) == (
        b.kv_cache_bytes,
        b.capacity_tokens,
        b.num_blocks,
        b.weights_bytes,
    )
    assert res.verdict == bench.verdict
    by = {f.key: f for f in res.figures}
    if "kv_cache_gib" in by:
        f = by["kv_cache_gib"]
        assert f.predicted == pytest.approx(b.kv_cache_bytes / GiB)
        assert f.inside == (b.kv_cache_bytes_low / GiB <= f.reported <= b.kv_cache_bytes_high / GiB)
    # the exit status says whether a KV figure fell outside the band (or a failure was missed)
    assert res.exit_code == (1 if res.outside or res.failures_missed else 0)
    # gt-217: 1.79 GiB non-torch; gt-220: LoRA buffers (see README); gt-221: the refusal's 81,536 tokens are the
    # smaller rank's pool (7.46 GiB), 1.2 GiB below the rank the reporter quotes and kvlint's band (the case's notes);
    # gt-283: 7.8 GiB of non-KV memory per DP rank kvlint does not plan (the naive all-to-all's gathered MoE batch,
    # docs/engine-memory-model.md §5); gt-282: PP 8 on A100s, 1.3 GiB of non-KV memory on the smallest stage kvlint
    # does not plan since NCCL's share grows with the ranks only where NVLink SHARP can run (the weights are not
    # printed; docs/engine-memory-model.md §5)
    assert res.exit_code == 0 or gid in ("gt-217", "gt-220", "gt-221", "gt-282", "gt-283")


def test_exact_part_tokens_from_the_printed_kv():
    """At the engine's own KV GiB, kvlint's blocks and groups give the printed token count (gt-213, TP2)."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-213.log").read_text())
    opts, ref, extra = _replay_inputs("gt-213")
    res = verify_log(log, dataclasses.replace(opts, engine_version=None), model=ref, extra_args=extra)
    f = next(f for f in res.figures if f.key == "kv_tokens_from_printed_kv")
    assert f.inside and abs(f.error_pct or 0) < 0.05


def _cli(*args: str, stdin: str | None = None):
    return CliRunner().invoke(main, ["verify", "--offline", *args], input=stdin)


def test_cli_text_json_and_exit_codes(tmp_path: Path) -> None:
    log = str(ROOT / "fixtures" / "logs" / "gt-210.log")
    r = _cli(log, "--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb")
    assert r.exit_code == 0, r.output
    assert "KV cache memory" in r.output and "5.01 GiB" in r.output and "replayed: vllm serve" in r.output
    r = _cli(log, "--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb", "--format", "json")
    data = json.loads(r.output)
    kv = next(f for f in data["figures"] if f["figure"] == "kv_cache_gib")
    assert kv["reported"] == 5.01 and kv["inside_band"] is True and data["exit_code"] == 0
    assert data["engine_version"] == "0.10.1.1" and data["printed_args"]["gpu_memory_utilization"] == 0.25
    # a model path the log names cannot be resolved: usage error, the printed figures still shown
    r = _cli(log, "--accelerator", "a100-80gb")
    assert r.exit_code == 2 and "give --model" in r.output
    # wrong settings: the engine's KV falls outside kvlint's band -> exit 1
    r = _cli(
        log,
        "--model",
        "Qwen/Qwen2-7B-Instruct",
        "--accelerator",
        "h100",
        "--",
        "--gpu-memory-utilization",
        "0.5",
    )
    assert r.exit_code == 1 and "outside the band" in r.output
    assert _cli(str(tmp_path / "nothing.log")).exit_code == 2


def test_cli_reads_stdin_and_kubectl_prefixed_logs() -> None:
    """`kubectl logs --prefix --timestamps` output (pod prefix and RFC 3339 time on every line) parses the same."""
    text = (ROOT / "fixtures" / "logs" / "gt-209.log").read_text()
    kubectl = "".join(
        f"[pod/vllm-0/vllm] 2025-02-11T10:17:54.123456789Z {line}\n" for line in text.splitlines()
    )
    assert parse_log(kubectl).figures == parse_log(text).figures
    r = _cli(
        "--model", "Qwen/Qwen3-0.6B", "--accelerator", "h100", "--engine-version", "0.9.2", "-",
        "--", "--max-num-seqs", "8", "--max-model-len", "8192", stdin=kubectl,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "VLLM_USE_V1=0" in r.output and "61.84 GiB" in r.output


def test_cli_record_writes_a_ground_truth_case(tmp_path: Path) -> None:
    out = tmp_path / "case.yaml"
    r = _cli(
        str(ROOT / "fixtures" / "logs" / "gt-215.log"),
        "--model", "openai/gpt-oss-120b", "--accelerator", "a100-80gb", "--record", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    (case,) = yaml.safe_load(out.read_text())
    assert set(case) == set(SHARED_CASE)  # exactly the fields of the shared format
    assert case["engine"] == "vllm" and case["engine_version"] == "0.10.1.1"
    assert case["parallelism"]["tensor_parallel"] == 4 and case["gpu_memory_utilization"] == 0.8
    assert case["figures"]["kv_cache_gib"] == 45.32 and case["figures"]["weights_gib"] == 17.2217
    assert case["outcome"] == "ok" and case["gpu"]["model"] == "NVIDIA A100-SXM4-80GB"


def test_record_without_a_replay_keeps_the_printed_figures() -> None:
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-237.log").read_text())
    case = record_case(None, log, source="gt-237.log")
    assert case["engine"] == "tgi" and case["outcome"] == "fail"
    assert case["failure"] == {
        "kind": "tgi_warmup_failed",
        "max_prefill_tokens": 8192,
        "max_total_tokens": 4096,
    }


def test_tgi_and_sglang_logs_replay() -> None:
    """TGI: 'Setting max batch total tokens' vs the warmup model; SGLang: the pool's #tokens vs its plan."""
    tgi = parse_log((ROOT / "fixtures" / "logs" / "gt-234.log").read_text())
    res = verify_log(
        tgi, Options(allow_hub=False, accelerator="a100-80gb"), model="meta-llama/Llama-3.1-70B",
        extra_args=("--num-shard", "2"),
    )  # fmt: skip
    f = next(f for f in res.figures if f.key == "max_batch_total_tokens")
    assert f.reported == 30816 and f.predicted == res.plan.max_batch_total_tokens
    sg = parse_log((ROOT / "fixtures" / "logs" / "gt-232.log").read_text())
    res = verify_log(sg, Options(allow_hub=False, accelerator="mi355x"), model="Qwen/Qwen3-30B-A3B")
    f = next(f for f in res.figures if f.key == "kv_tokens")
    assert f.reported == 1669816 and f.predicted == res.plan.max_total_num_tokens
    with pytest.raises(VerifyError):
        verify_log(sg, Options(allow_hub=False), model="Qwen/Qwen3-30B-A3B")  # no GPU total in an SGLang log


# real excerpts that are not ground-truth cases (fixtures/logs/SOURCE.md)
VERIFY_LOGS = ROOT / "fixtures" / "logs" / "verify"


def test_tgi_2_0_log_names_model_shards_and_release_family() -> None:
    """A TGI 2.0 log with no ``Args`` line (huggingface/ms-build-mi300): the router's 'no pipeline tag found for
    model M' names the model, 'Sharding model on 2 processes' the shard count, and the launcher's token-default
    lines (printed by 2.0.0 - 2.4.0 only) pin the release family, whose defaults the replay then reproduces."""
    log = parse_log((VERIFY_LOGS / "tgi-2.0-rocm-mi300x-llama3-8b.log").read_text(encoding="utf-8"))
    assert log.engine == "tgi" and log.version is None
    assert log.model == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert log.args["num_shard"] == 2
    assert log.releases == "2.0.0 - 2.4.0"
    res = verify_log(log, Options(allow_hub=False, accelerator="mi300x"))
    assert res.command[-2:] == ["--num-shard", "2"]
    assert res.sources["num_shard"] == "the log's 'Sharding model on N processes' line"
    assert res.sources["engine version"].startswith("2.4.0 (assumed")
    by_key = {f.key: f for f in res.figures}
    for key in ("max_total_tokens", "max_batch_prefill_tokens_default"):
        assert by_key[key].predicted == by_key[key].reported, key  # the 2.0 - 2.4.0 launcher defaults
    assert any("TGI 2.0.0 - 2.4.0" in n for n in res.notes)
    # --engine-version wins over the family's assumption
    res = verify_log(log, Options(allow_hub=False, accelerator="mi300x", engine_version="3.0.0"))
    assert res.sources["engine version"] == "3.0.0 (--engine-version)"


def test_a_model_without_config_is_an_error_not_an_empty_table() -> None:
    """Offline, a model kvlint has no config.json for gives no plan: verify says so and exits 2 (before: an empty
    figure table, 'verdict: unknown' and exit 0). The model id is made up for this test."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-243.log").read_text(encoding="utf-8"))
    with pytest.raises(VerifyError, match=r"no plan to compare: .*config\.json not found") as exc:
        verify_log(log, Options(allow_hub=False, accelerator="h100"), model="kvlint-test/no-such-model")
    assert "kvlint models pull kvlint-test/no-such-model" in str(exc.value)
    r = _cli(str(ROOT / "fixtures" / "logs" / "gt-243.log"), "--accelerator", "h100",
             "--model", "kvlint-test/no-such-model")  # fmt: skip
    assert r.exit_code == 2 and "no plan to compare" in r.output


def test_a_local_model_path_is_resolved_as_kvlint_plan_does() -> None:
    """A log that prints only a local model path (gt-226: ~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4) is replayed
    on that path, which kvlint plan resolves to the catalogued model its last component names, saying so (KV505);
    before, verify refused it ("names no resolvable model") although `kvlint plan` with the same path sized it.
    A path that names nothing kvlint knows (gt-203's /data/... checkpoint) still ends in a clear error."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-226.log").read_text(encoding="utf-8"))
    res = verify_log(log, Options(allow_hub=False, accelerator="h100"))
    assert res.command[2] == log.model and res.sources["model"] == "the log"
    assert res.plan is not None and any(n.startswith("KV505:") for n in res.notes)
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-203.log").read_text(encoding="utf-8"))
    with pytest.raises(VerifyError, match="not a hub id .*give --model"):
        verify_log(log, Options(allow_hub=False, accelerator="h100"))


def test_vllm_banner_names_the_release_and_model() -> None:
    """Recent vLLM prints its release and model in a block-letter banner (vllm-project/vllm#39734's log), not in
    'vLLM API server version X'; verify read no version there and replayed the newest release modelled. The
    logo-less form (VLLM_DISABLE_LOG_LOGO) is one line, written here as log_version_and_model formats it."""
    log = parse_log((VERIFY_LOGS / "vllm-0.19-banner-gemma4.log").read_text(encoding="utf-8"))
    assert (log.engine, log.version, log.model) == (
        "vllm",
        "0.19.1rc1.dev301+g60995c05b",
        "google/gemma-4-31B-it",
    )
    res = verify_log(log, Options(allow_hub=False, accelerator="h100"), model="google/gemma-4-26B-A4B")
    assert res.sources["engine version"] == "0.19.1rc1.dev301+g60995c05b (the log)"
    plain = parse_log(
        "INFO 05-01 12:48:00 [utils.py:299] vLLM server version 0.20.0, serving model Qwen/Qwen3-8B\n"
    )
    assert (plain.engine, plain.version, plain.model) == ("vllm", "0.20.0", "Qwen/Qwen3-8B")


def test_max_model_len_from_the_using_max_model_len_line() -> None:
    """An excerpt that starts after the non-default args (as `kubectl logs --tail` gives it; here gt-215 without
    that line) still prints "Using max model len 16384": the replay uses it instead of the model's full context."""
    text = (ROOT / "fixtures" / "logs" / "gt-215.log").read_text(encoding="utf-8")
    log = parse_log("\n".join(ln for ln in text.splitlines() if "non-default args" not in ln))
    assert "max_model_len" not in log.args and not log.config.get("max_seq_len")
    opts, ref, extra = _replay_inputs("gt-215")
    i = extra.index("--max-model-len") if "--max-model-len" in extra else None
    extra = extra if i is None else extra[:i] + extra[i + 2 :]
    res = verify_log(log, opts, model=ref, extra_args=extra)
    assert res.sources["max_model_len"] == "the log's 'Using max model len' line"
    assert res.command[res.command.index("--max-model-len") + 1] == "16384"


def test_unbalanced_brackets_on_many_lines_join_a_bounded_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each 'non-default args: {' line that never closes joined the next 200 lines, so N such lines handed the
    dict reader N x 200 lines (and recounted the growing text's brackets at every step): a 12 MB log of 200 such
    lines took 41 s of CPU. The work is counted as the characters handed to the dict reader: at most the log
    itself (each line read alone) plus the 4 MiB the joins may add over a whole log."""
    from kvlint.verify import logparse

    handed: list[int] = []
    real = logparse._literal
    monkeypatch.setattr(logparse, "_literal", lambda text: handed.append(len(text)) or real(text))
    # a prefix the continuation test does not stop at (it stops at lines opening with INFO, WARNING, '(' ...)
    line = "api-1  | non-default args: {'model': 'm', 'x': [" + "7, " * 320
    text = "\n".join([line] * 300)
    log = parse_log(text)
    assert len(handed) == 300
    assert sum(handed) <= len(text) + (4 << 20), sum(handed)
    assert log.args == {}


def test_a_wrapped_non_default_args_line_is_still_joined() -> None:
    """Guard for the bound above: a terminal-wrapped args dict (continuation lines without a prefix) is joined."""
    text = (
        "INFO 01-01 00:00:00 [utils.py:1] non-default args: {'model': 'Qwen/Qwen3-0.6B', 'max_model_len':\n"
        " 4096, 'gpu_memory_utilization': 0.8}\n"
    )
    log = parse_log(text)
    assert log.args == {"model": "Qwen/Qwen3-0.6B", "max_model_len": 4096, "gpu_memory_utilization": 0.8}
    assert log.model == "Qwen/Qwen3-0.6B"


def test_a_long_log_is_read_up_to_its_first_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line costs the parser the same dozens of searches (10 MB of one-letter lines took 85 s of CPU before,
    a 100 MB binary file 55 s), so a log is read up to its first 100,000 lines, counted here as the lines handed
    to the vLLM line parser. A start-up log followed by 150,000 request lines gives the start-up's figures, and
    the CLI says the rest was not read."""
    from kvlint.verify import logparse

    startup = (ROOT / "fixtures" / "logs" / "gt-210.log").read_text()
    path = tmp_path / "long.log"
    path.write_text(startup + "a\n" * 150_000)
    calls = [0]
    real = logparse._parse_vllm

    def counted(*args: object) -> None:
        calls[0] += 1
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(logparse, "_parse_vllm", counted)
    r = _cli(str(path), "--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb", "--format", "json")
    assert calls[0] <= 100_000, calls[0]
    assert "read the first 100,000 lines" in r.stderr and "rest was not read" in r.stderr
    assert r.exit_code == 0, r.output
    kv = next(f for f in json.loads(r.stdout)["figures"] if f["figure"] == "kv_cache_gib")
    assert kv["reported"] == 5.01 and kv["inside_band"] is True


def test_record_never_overwrites_the_log_being_read(tmp_path: Path) -> None:
    """``--record`` naming the log itself (or a link to it) wrote the case over the log, destroying it; now a usage
    error (exit 2) and the log is as it was. Another file is written as before."""
    log = tmp_path / "vllm.log"
    text = (ROOT / "fixtures" / "logs" / "gt-210.log").read_text()
    log.write_text(text)
    (tmp_path / "link.log").symlink_to(log)
    args = ("--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb")
    for target in (log, tmp_path / "link.log", tmp_path / "." / "vllm.log"):
        r = _cli(str(log), *args, "--record", str(target))
        assert r.exit_code == 2 and "is the log being read" in r.output, r.output
        assert log.read_text() == text
    r = _cli(str(log), *args, "--record", str(tmp_path / "case.yaml"))
    assert r.exit_code == 0 and (tmp_path / "case.yaml").read_text().startswith("- id: ")


def test_a_log_cut_before_the_kv_cache_verifies_nothing(tmp_path: Path) -> None:
    """A log that stops before the KV-cache lines (a pod still loading, `kubectl logs` taken early) has nothing to
    compare: it used to say "the engine started" and exit 0, a pass in CI. Cut from a real start-up (gt-210) just
    before its first KV figure, it exits 2 and says so; the whole log still exits 0."""
    full = (ROOT / "fixtures" / "logs" / "gt-210.log").read_text(encoding="utf-8").splitlines(keepends=True)
    parsed = parse_log("".join(full))
    first_kv = min(
        parsed.lines[k] for k in parsed.figures if k in ("kv_cache_gib", "kv_tokens", "gpu_blocks")
    )
    cut = tmp_path / "cut.log"
    cut.write_text("".join(full[: first_kv - 1]), encoding="utf-8")
    assert not set(parse_log(cut.read_text()).figures) & {"kv_cache_gib", "kv_tokens", "gpu_blocks"}
    args = ("--model", "Qwen/Qwen2-7B-Instruct", "--accelerator", "a100-80gb")
    assert _cli(str(ROOT / "fixtures" / "logs" / "gt-210.log"), *args).exit_code == 0
    r = _cli(str(cut), *args)
    assert r.exit_code == 2, r.output
    assert "the engine started" not in r.output and "nothing to verify" in r.output
    data = json.loads(_cli(str(cut), *args, "--format", "json").output)
    assert data["incomplete"] is True and data["exit_code"] == 2


@pytest.mark.parametrize("existing", [False, True])
def test_record_writes_nothing_when_the_log_cannot_be_replayed(tmp_path: Path, existing: bool) -> None:
    """Exit 2 (gt-201's log names no model and none is given): no case is "ready to contribute", so ``--record``
    writes no file and leaves one that exists as it was; the same log with ``--model`` records one."""
    log = str(ROOT / "fixtures" / "logs" / "gt-201.log")
    out = tmp_path / "case.yaml"
    if existing:
        out.write_text("- keep: me\n")
    r = _cli(log, "--accelerator", "a100-80gb", "--record", str(out))
    assert r.exit_code == 2, r.output
    assert "names no model" in r.stderr and "--record: no case written" in r.stderr
    assert out.read_text() == "- keep: me\n" if existing else not out.exists()
    r = _cli(log, "--accelerator", "a100-80gb", "--record", "-")
    assert r.exit_code == 2 and "gt-user-" not in r.stdout, r.output


def test_kv_cache_memory_bytes_start_up_is_read() -> None:
    """With --kv-cache-memory-bytes vLLM skips the memory profile and prints "Initial free memory F GiB, reserved K
    GiB memory for KV Cache as specified by kv_cache_memory_bytes config" instead of "Available KV cache memory"
    (vllm@0.34.0:vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory). vllm-project/vllm#49878's log
    then says "EngineCore failed to start." Before, verify read neither: no engine, no KV figure, no failure (exit 2,
    "nothing to verify") for a start-up that reserved 49 GiB and then failed."""
    log = parse_log((VERIFY_LOGS / "vllm-kv-cache-memory-bytes-gemma4.log").read_text(encoding="utf-8"))
    assert log.engine == "vllm" and log.era == "v1"
    assert log.figures["kv_cache_gib"] == 49.0 and log.figures["free_at_startup_gib"] == 93.88
    assert log.outcome == "fail" and log.failure == {"kind": "engine_core_failed"}
    opts = Options(allow_hub=False, accelerator="rtx-pro-6000-blackwell", engine_version="0.26.0")
    res = verify_log(
        log,
        opts,
        model="nvidia/Gemma-4-31B-IT-NVFP4",
        extra_args=("--kv-cache-memory-bytes", "52613349376", "--max-model-len", "262144"),
    )
    kv = next(f for f in res.figures if f.key == "kv_cache_gib")
    assert kv.reported == 49.0 and kv.predicted == pytest.approx(52613349376 / GiB) and kv.inside
    assert not res.incomplete and res.log.failure["kind"] == "engine_core_failed"


def test_engine_core_failure_takes_the_cause_a_later_line_names() -> None:
    """The line "EngineCore failed to start." precedes the traceback (vllm@0.34.0:vllm/v1/engine/core.py::run_engine_core);
    the error the traceback ends with names the cause and replaces the generic kind. Lines as printed in
    vllm-project/vllm#27508 (the shared gt-007) and #25350, put in one log for the test."""
    generic = (
        "(EngineCore_DP0 pid=6880) INFO 10-31 15:07:49 [gpu_worker.py:298] Available KV cache memory: 1.71 GiB\n"
        "(EngineCore_DP0 pid=6880) ERROR 10-31 15:07:50 [core.py:708] EngineCore failed to start.\n"
    )
    assert parse_log(generic).failure == {"kind": "engine_core_failed"}
    cause = (
        "(EngineCore_DP0 pid=6880) ERROR 10-31 15:07:50 [core.py:708] ValueError: To serve at least one request "
        "with the models's max seq len (221000), (10.12 GiB KV cache is needed, which is larger than the available "
        "KV cache memory (5.59 GiB). Based on the available memory, the estimated maximum model length is 122080.\n"
    )
    assert parse_log(generic + cause).failure["kind"] == "kv_needed_exceeds_available"
    no_memory = (
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`\n"
    )
    assert parse_log(generic + no_memory).failure == {"kind": "no_memory_for_cache_blocks"}


def test_utilization_from_the_cudagraph_profiling_note() -> None:
    """From 0.21.0 the worker prints "The current --gpu-memory-utilization=U is equivalent to …" next to the CUDA
    graph estimate (vllm@0.34.0:vllm/v1/worker/gpu_worker.py::Worker.determine_available_memory); in
    noonghunna/club-3090#617's log it is the only place the 0.85 appears. Before, the replay took vLLM's default 0.9."""
    log = parse_log((VERIFY_LOGS / "vllm-cudagraph-profiling-note-5090.log").read_text(encoding="utf-8"))
    assert log.figures["gpu_memory_utilization"] == 0.85 and log.figures["kv_cache_gib"] == 3.93
    res = verify_log(
        log,
        Options(allow_hub=False, accelerator="rtx-5090", engine_version="0.25.0"),
        model="nvidia/Qwen3.6-27B-NVFP4",
    )
    assert res.command[res.command.index("--gpu-memory-utilization") + 1] == "0.85"


def test_sglang_no_kv_memory_failure_is_read() -> None:
    """SGLang stops when the weights leave nothing for the KV pool. SemiAnalysisAI/InferenceX#2128's log (gt-277:
    DeepSeek-V4-Pro FP8 on 8x H200 at --mem-fraction-static 0.88) printed the later builds' message; verify read the
    weights line but called the start-up ok. The 0.5.23 wording (sglang@0.5.23:python/sglang/srt/model_executor/
    pool_configurator.py, MemoryPoolConfig.__post_init__) and the full later one are written here from their format
    strings, not copied from a log."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-277.log").read_text(encoding="utf-8"))
    assert log.engine == "sglang" and log.outcome == "fail"
    assert log.failure == {"kind": "no_kv_memory", "mem_fraction_static": 0.88}
    assert log.figures["weights_gb"] == 125.65
    full = parse_log(
        "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.95. Raise "
        "--mem-fraction-static above 0.923 (minimum viable = 1 - available/pre = 0.9224). If using speculative "
        "decoding, draft weights are now counted.\n"
    )
    assert full.failure == {
        "kind": "no_kv_memory",
        "mem_fraction_static": 0.95,
        "suggested_mem_fraction_static": 0.923,
        "minimum_mem_fraction_static": 0.9224,
    }
    old = parse_log(
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
        "Current value: mem_fraction_static=0.7\n"
    )
    assert (old.engine, old.failure) == ("sglang", {"kind": "no_kv_memory", "mem_fraction_static": 0.7})


def test_v0_refusal_capacity_is_compared() -> None:
    """V0's "The model's max seq len (L) is larger than the maximum number of tokens that can be stored in KV cache
    (N)" prints the pool as N = block_size x num_gpu_blocks (vllm@0.4.3:vllm/worker/worker.py::
    raise_if_cache_size_invalid). verify compared nothing for such a log (gpustack/gpustack#1800, gt-275): the table
    was empty. The pool is now set against kvlint's token capacity for the same settings."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-275.log").read_text(encoding="utf-8"))
    opts = Options(allow_hub=False, accelerator="rtx-3090", engine_version="0.8.4")
    res = verify_log(log, opts, model="Qwen/Qwen2.5-VL-7B-Instruct", extra_args=("--max-model-len", "8192"))
    tok = next(f for f in res.figures if f.key == "kv_tokens")
    assert tok.reported == 2400 and tok.predicted == res.plan.plan.capacity_tokens
    assert res.exit_code == 1  # kvlint plans a pool 8,192 tokens fit in; the engine's did not


def test_a_log_printing_only_the_graph_estimate_is_compared_with_it() -> None:
    """gt-291 (vLLM 0.20.2) prints "Estimated CUDA graph memory: 6.24 GiB total" and no actual pool: the estimate is
    what the KV budget lost, so kvlint's graph term is set against it (it was not read before)."""
    log = parse_log((ROOT / "fixtures" / "logs" / "gt-291.log").read_text(encoding="utf-8"))
    case = CASES["gt-291"]
    assert log.figures["cudagraph_estimated_gib"] == case["figures"]["cudagraph_estimated_gib"]
    opts = Options(allow_hub=False, accelerator="a100-80gb", engine_version="0.20.2")
    res = verify_log(log, opts, model="Qwen/Qwen3.6-35B-A3B-FP8", extra_args=("--max-model-len", "8192"))
    by = {f.key: f for f in res.figures}
    assert by["cudagraph_gib"].reported == case["figures"]["cudagraph_estimated_gib"]


def test_tgi_3_kv_cache_blocks_line_is_compared() -> None:
    """TGI 3.x's shard prints "KV-cache blocks: N, size: S" at warmup (N the blocks allocated, S the attention
    backend's BLOCK_SIZE; tgi@v3.0.0:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup):
    verify reads both and sets them against kvlint's TGI model, quoting the engine's line beside each figure (before,
    the line was ignored). The model is a stand-in: gt-293's excerpt does not name its model or GPU."""
    path = ROOT / "fixtures" / "logs" / "gt-293.log"
    log = parse_log(path.read_text(encoding="utf-8"))
    printed = next(
        line for line in path.read_text(encoding="utf-8").splitlines() if "KV-cache blocks:" in line
    )
    blocks, size = (int(x) for x in printed.split("KV-cache blocks: ")[1].split(", size: "))
    assert log.engine == "tgi"
    assert log.figures["kv_cache_blocks"] == blocks and log.figures["kv_block_size"] == size
    model = str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen2.5-1.5B")
    res = verify_log(log, Options(allow_hub=False, accelerator="h100", engine_version="3.0.0"), model=model)
    by_key = {f.key: f for f in res.figures}
    p = res.plan.plan
    assert (
        by_key["kv_cache_blocks"].reported == blocks and by_key["kv_cache_blocks"].predicted == p.num_blocks
    )
    assert by_key["kv_block_size"].predicted == p.block_size
    assert (
        by_key["kv_cache_blocks"].quote is not None and "KV-cache blocks:" in by_key["kv_cache_blocks"].quote
    )
    text = res.render_text()
    assert f'"KV-cache blocks: {blocks}, size: {size}"' in text
    assert "KV-cache blocks" in text and "max batch total tokens" in text
    assert res.as_dict()["figures"][0]["log_text"]
    # a release whose attention has another BLOCK_SIZE (paged, before 2.3): the block count is not comparable
    old = verify_log(log, Options(allow_hub=False, accelerator="h100", engine_version="2.2.0"), model=model)
    assert old.plan.plan.block_size != size
    assert any("not comparable" in n for n in old.notes)
    assert {f.key: f for f in old.figures}["kv_block_size"].inside is False


def test_sglang_scheduler_limits_are_compared_and_quoted() -> None:
    """SGLang's scheduler line goes on past max_total_num_tokens with the limits it resolved (context_len,
    chunked_prefill_size, max_running_requests): verify sets each against the one kvlint resolved and quotes the
    part of the line that prints it (the line is long: the quote is cut around the figure's name). The model is a
    stand-in (gt-286's report names none)."""
    path = ROOT / "fixtures" / "logs" / "gt-286.log"
    log = parse_log(path.read_text(encoding="utf-8"))
    model = str(ROOT / "fixtures" / "plan" / "models" / "Qwen--Qwen2.5-7B")
    res = verify_log(log, Options(allow_hub=False, accelerator="h100", engine_version="0.5.5"), model=model)
    by_key = {f.key: f for f in res.figures}
    d = res.plan
    for key, pred in (
        ("context_len", d.context_length),
        ("chunked_prefill_size", d.chunked_prefill_size),
        ("max_running_requests", d.max_running_requests),
    ):
        assert by_key[key].reported == log.figures[key] and by_key[key].predicted == pred, key
    assert by_key["context_len"].inside is (d.context_length == log.figures["context_len"])
    text = res.render_text()
    assert f"context_len={log.figures['context_len']}" in text  # past the first 110 characters of the line


def test_sglang_replays_the_free_memory_its_log_found_before_loading() -> None:
    """SGLang sizes its pool from the free memory it measures before loading ("Load weight begin. avail mem=X GB":
    sglang@0.4.2.post2 model_runner.py::ModelRunner.init_torch_distributed returns it as total_gpu_memory). gt-358
    (SGLang 0.4.2, an RTX 3090 under WSL2) found 22.76 GiB free, 0.43 GiB below what kvlint leaves after the CUDA
    context on a 23.59 GiB card: the replay takes the log's figure, and its pool lands within 2 % of the printed
    105,531 tokens (+5.0 % from the card's total). The 0.4.2 forms of 'Load weight end' (free memory only) and
    'KV Cache is allocated' (no token count) are read too. A figure inside kvlint's band, or a total given with
    --gpu-memory, leaves the total alone."""
    from kvlint.memory.sglang import preload_bytes

    text = (ROOT / "fixtures" / "logs" / "gt-358.log").read_text(encoding="utf-8")
    log = parse_log(text)
    assert log.figures["free_before_weights_gb"] == 22.76
    assert (log.figures["free_after_weights_gb"], log.figures["k_size_gb"]) == (8.37, 2.82)
    model = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    res = verify_log(log, Options(allow_hub=False, accelerator="rtx-3090"), model=model)
    f = next(f for f in res.figures if f.key == "kv_tokens")
    assert f.reported == 105531 and abs(f.predicted - f.reported) / f.reported < 0.02
    assert res.plan.pre_free_bytes == int(22.76 * GiB)
    assert res.gpu_total_gib == pytest.approx((int(22.76 * GiB) + preload_bytes(1)[0]) / GiB)
    assert any("22.76 GiB free before loading" in n for n in res.notes)
    # the card's total, as given: no shift, and the pool is kvlint's for the whole card (5 % high here)
    given = verify_log(log, Options(allow_hub=False, accelerator="rtx-3090", gpu_memory_bytes=int(23.59 * GiB)),
                       model=model)  # fmt: skip
    g = next(f for f in given.figures if f.key == "kv_tokens")
    assert g.predicted > f.predicted and not any("free before loading" in n for n in given.notes)
    # a pre-load figure inside kvlint's band (the context alone): the catalogue total stands
    inside = parse_log(text.replace("avail mem=22.76 GB", "avail mem=23.10 GB"))
    res2 = verify_log(inside, Options(allow_hub=False, accelerator="rtx-3090"), model=model)
    assert res2.gpu_total_gib == pytest.approx(23.588, abs=0.01)
    assert next(f for f in res2.figures if f.key == "free_before_weights_gb").inside
