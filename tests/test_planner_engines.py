"""The planner for TGI and SGLang users (planner25): every setting a plan, a finding or a remedy names is spelled as
the workload's engine spells it (TGI's launcher options or their environment variables, as the container writes
them; SGLang's server arguments), and a remedy offered for a command is the command re-planned with it, which
fits. Offline (bundled model catalogue); every expected figure comes from kvlint's own plan."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cli_runs import plan_json, run_kvlint

TGI_8B = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_8B = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]

#: vLLM's names of the settings TGI and SGLang call otherwise (flag and field spellings)
VLLM_NAMES = re.compile(
    r"max[-_]model[-_]len|max[-_]num[-_]seqs|max[-_]num[-_]batched[-_]tokens|gpu[-_]memory[-_]utilization|"
    r"tensor[-_]parallel[-_]size"
)
#: TGI's environment-variable spellings of the launcher options the remedies name
TGI_ENV = re.compile(
    r"\b(?:NUM_SHARD|MAX_TOTAL_TOKENS|MAX_INPUT_TOKENS|MAX_BATCH_PREFILL_TOKENS|CUDA_MEMORY_FRACTION)\b"
)


def _fixes(doc: dict[str, Any]) -> list[str]:
    return [str(d.get("fix") or "") for d in doc["diagnostics"] if d.get("fix")]


def _tgi_deployment(tag: str, settings: str) -> str:
    """A Deployment of TGI's release image ``tag`` on one L4, whose container's settings are the lines
    ``settings`` (its env or args)."""
    return f"""apiVersion: apps/v1
kind: Deployment
metadata: {{name: tgi-8b}}
spec:
  selector: {{matchLabels: {{app: tgi-8b}}}}
  template:
    metadata: {{labels: {{app: tgi-8b}}}}
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
        - name: tgi
          image: ghcr.io/huggingface/text-generation-inference:{tag}
{settings}
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


# ------------------------------------------------------------------ TGI: options as the command line types them


def test_tgi_command_line_remedies_name_launcher_options_and_fit_when_applied() -> None:
    """`kvlint plan -- text-generation-launcher --max-total-tokens 32768 ...` on an L4 was told "set
    MAX_TOTAL_TOKENS to N and MAX_INPUT_TOKENS to M" and "NUM_SHARD=2": environment variables the typed command
    does not use. Each remedy now names the launcher's options, and the command with the remedy's values typed
    in plans without the finding."""
    cmd = [*TGI_8B, "--max-total-tokens", "32768", "--max-input-tokens", "30000"]
    doc = plan_json("--accelerator", "l4", "--engine-version", "3.3.6", "--", *cmd)
    assert doc["verdict"] == "fail"
    fixes = _fixes(doc)
    assert fixes and not any(TGI_ENV.search(f) for f in fixes), fixes
    m = next(
        m
        for f in fixes
        if (m := re.search(r"--max-total-tokens (?:to )?(\d+) and --max-input-tokens (?:to )?(\d+)", f))
    )
    assert "--num-shard 2" in " ".join(fixes)
    applied = [*TGI_8B, "--max-total-tokens", m.group(1), "--max-input-tokens", m.group(2)]
    after = plan_json("--accelerator", "l4", "--engine-version", "3.3.6", "--", *applied)
    assert after["verdict"] == "ok", after["diagnostics"]


def test_tgi_manifest_configured_through_env_keeps_the_variables(tmp_path: Path) -> None:
    """A Deployment that sets TGI's limits through env keeps being told the variables it uses."""
    f = tmp_path / "tgi.yaml"
    settings = """\
          env:
            - {name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}
            - {name: MAX_INPUT_TOKENS, value: "30000"}
            - {name: MAX_TOTAL_TOKENS, value: "32768"}"""
    f.write_text(_tgi_deployment("3.3.6", settings), encoding="utf-8")
    r = run_kvlint("check", "--offline", "--format", "json", str(f))
    doc = json.loads(r.stdout)
    fixes = [d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV603"]
    assert fixes and "MAX_TOTAL_TOKENS to" in fixes[0] and "NUM_SHARD=2" in fixes[0], fixes
    assert "--max-total-tokens" not in fixes[0] and "--num-shard" not in fixes[0]


def test_tgi_args_manifest_is_told_the_options_it_writes(tmp_path: Path) -> None:
    """The same limits written as container args are told the options (KV104's remedy said MAX_TOTAL_TOKENS=N
    to a container whose args set --max-total-tokens)."""
    src = Path(__file__).parent.parent / "fixtures" / "rules" / "KV104" / "tgi.yaml"
    r = run_kvlint("check", "--offline", "--format", "json", str(src))
    doc = json.loads(r.stdout)
    fixes = [d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV104"]
    assert fixes and all("--max-total-tokens " in f and not TGI_ENV.search(f) for f in fixes), fixes


# ------------------------------------------------------------------ kvlint diff: risky for what the change makes worse


def _report(tmp_path: Path, total: int, tag: str = "latest") -> dict[str, Any]:
    f = tmp_path / "deploy" / "tgi.yaml"
    f.parent.mkdir(exist_ok=True)
    settings = f"""\
          args: ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--max-input-tokens", "4096",
                 "--max-total-tokens", "{total}"]"""
    f.write_text(_tgi_deployment(tag, settings), encoding="utf-8")
    r = run_kvlint("check", "--offline", "--fail-on", "never", "--format", "json", str(f))
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _warnings(report: dict[str, Any]) -> set[str]:
    return {d["rule"] for d in report["diagnostics"] if d["severity"] == "warning"}


def test_diff_a_warning_both_revisions_have_does_not_make_the_change_risky(tmp_path: Path) -> None:
    """An image on `latest` (KV208) on both sides made every capacity change of the workload read `risky (KV208)`,
    as if the change brought that risk. The warning is named unchanged, and the verdict is the change's: `fits`."""
    from kvlint.prdiff import capacity_diff, render_capacity_markdown, render_capacity_text

    base, head = _report(tmp_path, 8192), _report(tmp_path, 12288)
    assert _warnings(base) == _warnings(head) == {"KV208"}  # the change adds no warning
    (row,) = capacity_diff(base, head, [])
    assert row.before_values and row.after_values
    for side in (row.before_values, row.after_values):
        assert (
            side["verdict"] == "fits" and side["verdict_rules"] == [] and side["unchanged_rules"] == ["KV208"]
        )
    assert row.after and row.after["verdict"] == "fits (KV208 unchanged)"
    # the headings name TGI's request length
    assert "max-total-tokens" in render_capacity_markdown(
        [row]
    ) and "max-model-len" not in render_capacity_markdown([row])
    assert "concurrency at max-total-tokens: " in render_capacity_text([row])


def test_diff_a_capacity_warning_the_change_worsens_is_risky_and_says_so(tmp_path: Path) -> None:
    """KV104 on both sides, with fewer requests at once after the change: the change made it worse, so the head
    is `risky (KV104 worse)`; the same warning with more room after the change is not the change's risk."""
    from kvlint.prdiff import capacity_diff

    a, b = _report(tmp_path, 16384, "3.3.6"), _report(tmp_path, 20480, "3.3.6")
    assert _warnings(a) == _warnings(b) == {"KV104"}
    (worse,) = capacity_diff(a, b, [])
    assert worse.before_values and worse.after_values
    assert (
        worse.after_values["concurrency_at_max_model_len"]
        < worse.before_values["concurrency_at_max_model_len"]
    )
    assert worse.after_values["verdict"] == "risky" and worse.after_values["verdict_rules"] == ["KV104"]
    assert worse.after and worse.after["verdict"] == "risky (KV104 worse)"
    (better,) = capacity_diff(b, a, [])
    assert better.after_values and better.after_values["verdict"] == "fits"
    assert better.after_values["unchanged_rules"] == ["KV104"]
    # a warning the change introduces is the change's risk, as before
    (new,) = capacity_diff(_report(tmp_path, 8192, "3.3.6"), a, [])
    assert new.after_values and new.after_values["verdict_rules"] == ["KV104"]
    assert new.after_values["unchanged_rules"] == []


# ------------------------------------------------------------------ the plan speaks the engine's setting names


def test_tgi_and_sglang_plans_name_their_own_settings() -> None:
    """The plan's settings line read "max_model_len 32,768 (max_total_tokens; ...), max_num_seqs 128,
    max_num_batched_tokens 8,061" for TGI and the same vLLM names for SGLang, and the Markdown plan said
    "max-model-len". Each now names the engine's settings, with the figures of the JSON plan."""
    cases = [
        (
            [*TGI_8B, "--max-total-tokens", "8192", "--max-input-tokens", "4096"],
            ("max_total_tokens", "max_concurrent_requests", "max_batch_prefill_tokens"),
        ),
        (
            [*TGI_8B, "--max-total-tokens", "8192", "--max-input-tokens", "4096", "--max-batch-size", "16"],
            ("max_total_tokens", "max_batch_size", "max_batch_prefill_tokens"),
        ),
        (
            [*SGLANG_8B, "--context-length", "8192", "--mem-fraction-static", "0.85"],
            ("context_length", "max_running_requests", "chunked_prefill_size"),
        ),
        (
            [
                *SGLANG_8B,
                "--context-length",
                "8192",
                "--mem-fraction-static",
                "0.85",
                "--chunked-prefill-size",
                "-1",
            ],
            ("context_length", "max_running_requests", "max_prefill_tokens"),
        ),
    ]
    for argv, (length, seqs, batched) in cases:
        doc = plan_json("--accelerator", "l4", "--", *argv)
        kv, sched = doc["kv"], doc["scheduler"]
        text = run_kvlint("plan", "--offline", "--accelerator", "l4", "--", *argv).stdout
        line = (
            f"{length} {kv['max_model_len']:,} (user; derived {kv['derived_max_model_len']:,}), "
            f"{seqs} {sched['max_num_seqs']:,}, {batched} {sched['max_num_batched_tokens']:,}"
        )
        assert line in text.splitlines(), (argv, text)
        md = run_kvlint(
            "plan", "--offline", "--accelerator", "l4", "--format", "markdown", "--", *argv
        ).stdout
        assert f"; {length.replace('_', '-')} {kv['max_model_len']:,} (user);" in md
        for out in (text, md):
            assert not VLLM_NAMES.search(out), (argv, VLLM_NAMES.search(out))


# ------------------------------------------------------------------ one remedy for chunked prefill + a shorter context

VLLM_8B = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]


def _without(argv: list[str], flag: str) -> list[str]:
    return [a for a in argv if a != flag]


def _set(argv: list[str], flag: str, value: str) -> list[str]:
    out = list(argv)
    if flag in out:
        out[out.index(flag) + 1] = value
    else:
        out += [flag, value]
    return out


def test_chunked_prefill_and_a_shorter_max_model_len_are_one_remedy_that_fits() -> None:
    """vLLM 0.12 with --no-enable-chunked-prefill and a 32,768-token batch on an L4: the profiling batch leaves too
    little KV cache. A shorter --max-model-len alone keeps the batch (its prompts must fit one), a smaller batch
    alone is refused without chunking (KV203), and chunked prefill with a smaller batch alone still does not hold
    one 32k request: only all three together fit, and only TP 2 was offered. The remedy now names all three, and
    the command changed so plans `ok`."""
    pre = ["--accelerator", "l4", "--engine-version", "0.12.0", "--"]
    argv = [
        *VLLM_8B,
        "--max-model-len",
        "32768",
        "--max-num-batched-tokens",
        "32768",
        "--no-enable-chunked-prefill",
    ]
    doc = plan_json(*pre, *argv)
    assert doc["verdict"] == "fail"
    m = None
    for f in _fixes(doc):
        m = m or re.search(
            r"--max-model-len (\d+) and --max-num-batched-tokens (\d+) with chunked prefill on "
            r"\(remove --no-enable-chunked-prefill\) fits",
            f,
        )
    assert m, _fixes(doc)
    length, batch = m.group(1), m.group(2)
    fixed = _set(_set(_without(argv, "--no-enable-chunked-prefill"), "--max-model-len", length),
                 "--max-num-batched-tokens", batch)  # fmt: skip
    assert plan_json(*pre, *fixed)["verdict"] == "ok"
    # neither part alone: the shorter context with chunking off, or chunking with the smaller batch at 32k
    assert plan_json(*pre, *_set(argv, "--max-model-len", length))["verdict"] != "ok"
    alone = _set(_without(argv, "--no-enable-chunked-prefill"), "--max-num-batched-tokens", batch)
    assert plan_json(*pre, *alone)["verdict"] != "ok"


# ------------------------------------------------------------------ SGLang: a fraction and a context as one remedy


def test_sglang_fraction_remedy_that_needs_a_shorter_context_says_both_and_fits() -> None:
    """SGLang on an L4 at --context-length 65536: the default fraction leaves no KV pool (KV701). The remedy was
    "set --mem-fraction-static F to start (... fewer than context_length 65536: lower --context-length too)":
    applied, SGLang starts with every request capped (KV702). It now names the fraction and the context, and
    the command with both applied plans `ok`; the fraction alone does not."""
    pre = ["--accelerator", "l4", "--engine-version", "0.5.23", "--"]
    argv = [*SGLANG_8B, "--context-length", "65536"]
    doc = plan_json(*pre, *argv)
    assert [d["rule"] for d in doc["diagnostics"] if d["severity"] == "error"] == ["KV701"]
    fix = next(f for d in doc["diagnostics"] if d["rule"] == "KV701" for f in [d["fix"]])
    assert "to start" not in fix and "lower --context-length too" not in fix, fix
    m = re.search(r"--mem-fraction-static (\d\.\d+) and --context-length (\d+) \(re-planned", fix)
    assert m, fix
    both = [*SGLANG_8B, "--context-length", m.group(2), "--mem-fraction-static", m.group(1)]
    assert plan_json(*pre, *both)["verdict"] == "ok"
    assert plan_json(*pre, *argv, "--mem-fraction-static", m.group(1))["verdict"] != "ok"
    assert not VLLM_NAMES.search(fix)


def test_sglang_larger_tp_that_needs_a_higher_fraction_is_offered_with_it() -> None:
    """Llama-3-70B at --tp-size 2 on L4s does not load (KV101), and the fix said no TP size fits: TP 8 at SGLang's
    own fraction for that GPU leaves the weights no pool, but TP 8 with a higher --mem-fraction-static serves.
    The remedy names both; applied, the plan is `ok`, and TP alone is not."""
    pre = ["--accelerator", "l4", "--engine-version", "0.5.23", "--"]
    model = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Meta-Llama-3-70B-Instruct"]
    doc = plan_json(*pre, *model, "--tp-size", "2")
    fix = next(d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV101")
    m = re.search(r"--tp-size (\d+) and --mem-fraction-static (\d\.\d+) with \1 GPUs", fix)
    assert m, fix
    assert (
        plan_json(*pre, *model, "--tp-size", m.group(1), "--mem-fraction-static", m.group(2))["verdict"]
        == "ok"
    )
    assert plan_json(*pre, *model, "--tp-size", m.group(1))["verdict"] != "ok"


def test_sglang_kv105_remedies_are_replanned_and_fit() -> None:
    """SGLang's KV105 said "--context-length N or less, or more GPUs (--tp-size)": the length was the band's low
    end, not re-planned, and the TP size unnamed. Both are now re-planned values that plan `ok` when applied."""
    pre = ["--accelerator", "l4", "--engine-version", "0.5.23", "--"]
    argv = [*SGLANG_8B, "--context-length", "30000", "--mem-fraction-static", "0.88"]
    doc = plan_json(*pre, *argv)
    assert [d["rule"] for d in doc["diagnostics"] if d["severity"] != "info"] == ["KV105"]
    fix = next(d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV105")
    length = re.search(r"--context-length (\d+) or less \(re-planned", fix)
    tp = re.search(r"--tp-size (\d+) with \1 GPUs", fix)
    assert length and tp, fix
    assert plan_json(*pre, *_set(argv, "--context-length", length.group(1)))["verdict"] == "ok"
    assert plan_json(*pre, *argv, "--tp-size", tp.group(1))["verdict"] == "ok"


def test_tgi_kv105_prefill_remedy_has_a_replanned_value() -> None:
    """TGI's KV105 with no shorter limit or more shards to offer said "lower MAX_BATCH_PREFILL_TOKENS (the warmup
    batch takes memory the KV cache then lacks)": no value, not re-planned, and an environment variable to a
    command line. It now names the option with the largest value that, re-planned, holds max_total_tokens at the
    low end of kvlint's band, and the command with it plans `ok`."""
    pre = ["--accelerator", "l4", "--engine-version", "3.3.6", "--"]
    argv = [
        "text-generation-launcher", "--model-id", "meta-llama/Meta-Llama-3-70B-Instruct", "--num-shard", "8",
        "--cuda-memory-fraction", "0.90", "--max-total-tokens", "2048", "--max-input-tokens", "1024",
    ]  # fmt: skip
    doc = plan_json(*pre, *argv)
    assert [d["rule"] for d in doc["diagnostics"] if d["severity"] != "info"] == ["KV105"]
    fix = next(d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV105")
    m = re.search(r"--max-batch-prefill-tokens (\d+) \(re-planned", fix)
    assert m, fix
    assert plan_json(*pre, *argv, "--max-batch-prefill-tokens", m.group(1))["verdict"] == "ok"
