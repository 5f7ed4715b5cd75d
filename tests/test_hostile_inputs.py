"""Hostile inputs to the CLI path (issue 14): each reproduction of the issue, as a test.

Every manifest is attacker-controlled in CI (pull requests from anyone): the loader, the pipeline and the
report writers must finish in bounded time, never raise, never run a command an argument can smuggle
in, and never let quoted text forge report lines. The expected results are stated independently of the
code: the engine error a manifest must still get (KV401 for 32 heads and TP 3), the exit codes of
``kvlint check`` (0 clean, 1 findings, 2 usage), well-formed XML, one report line per finding.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import time
import weakref
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.load import load_text, template_actions

ROOT = Path(__file__).resolve().parent.parent
CLEAN = ROOT / "fixtures" / "webhook" / "b09-clean.yaml"  # Llama 3.1 8B on one H100: no findings


def _manifest(extra_args: str = "", memory: str = "48Gi") -> str:
    """The clean fixture with ``extra_args`` appended to the vLLM args and the given memory limit."""
    text = CLEAN.read_text()
    text = text.replace('"--max-num-seqs", "64"]', f'"--max-num-seqs", "64"{extra_args}]')
    return text.replace("memory: 48Gi", f"memory: {memory}")


def _check(tmp_path: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["check", *args], catch_exceptions=False)
    return res.exit_code, res.output


def _timed(fn, limit_s: float):  # type: ignore[no-untyped-def]
    # CPU seconds of this process (the command runs in it): a busy runner's other jobs do not count
    t = time.process_time()
    out = fn()
    dt = time.process_time() - t
    assert dt < limit_s, f"took {dt:.2f} s (limit {limit_s} s)"
    return out


# ------------------------------------------------------------------------------------------ the loader


def test_garbage_cycles_are_collected_between_loads() -> None:
    """The loader's GC pause must not move objects into the oldest generation (``gc.freeze(); gc.unfreeze()``
    did): garbage cycles created between loads were then never collected and the webhook grew ~11 KB per
    review. Here no explicit ``gc.collect()`` runs: the ordinary young collections must free the cycles."""

    class Cycle:
        pass

    alive: weakref.WeakSet[Cycle] = weakref.WeakSet()
    gc.collect()
    for _ in range(3000):
        c = Cycle()
        c.self = c  # type: ignore[attr-defined]
        alive.add(c)
        del c
        load_text("a: 1\n", "x.yaml")
    assert gc.get_freeze_count() == 0
    assert len(alive) < 1500, f"{len(alive)} of 3000 garbage cycles still alive"


def test_template_action_scan_is_linear() -> None:
    """60 KB of ``{{ .`` without a closing ``}}`` held the event loop for seconds (quadratic regex)."""
    assert _timed(lambda: template_actions("x: " + "{{ ." * 15_000), 0.5) == []
    assert _timed(lambda: template_actions("{{- if " * 10_000 + "\n"), 0.5) == []
    long = "a: " + "{{ .Values.x }} " * 20_000
    assert len(_timed(lambda: template_actions(long), 1.0)) == 20_000


def test_tag_with_impossible_value_is_a_located_kv001(tmp_path: Path) -> None:
    """``!!bool maybe`` raised KeyError out of the loader; kubectl rejects such a document, and so does
    kvlint now: KV001 at the value, the next document still linted."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a: !!bool maybe\n---\nb: !!int 7\n"
    r = load_text(text, "t.yaml")
    assert [(f.rule, f.loc.line, f.loc.column) for f in r.findings if f.loc] == [("KV001", 5, 6)]
    assert "!!bool 'maybe'" in r.findings[0].message
    assert [d.data for d in r.documents] == [{"b": 7}]
    p = tmp_path / "t.yaml"
    p.write_text(text)
    code, out = _check(tmp_path, str(p))
    assert code == 1 and "KV001" in out


@pytest.mark.parametrize(
    "value",
    ["9" * 5000, "!!int " + "9" * 5000, "1:" * 100_000 + "1", "0x" + "f" * 100_000, "!!float " + "1" * 5000],
)
def test_absurd_numbers_load_quickly_as_text(value: str) -> None:
    r = _timed(lambda: load_text(f"a: {value}\n", "n.yaml"), 0.5)
    assert r.findings == [] and isinstance(r.documents[0].data["a"], str)


def test_cr_only_line_endings_do_not_hide_later_documents(tmp_path: Path) -> None:
    """A broken first document in a CR-only file hid the findings of every later document."""
    broken = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [\n---\n"
    tp3 = _manifest(', "--tensor-parallel-size", "3"')
    for sep in ("\r", "\u2028"):
        p = tmp_path / f"cr{ord(sep)}.yaml"
        p.write_text((broken + tp3).replace("\n", sep), newline="")
        code, out = _check(tmp_path, str(p))
        assert code == 1 and "KV001" in out and "KV401" in out, out


# ------------------------------------------------------------------------------------------ numbers


def test_gpu_memory_flag_of_absurd_size_is_a_usage_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["check", "--gpu-memory", "1e999999GiB", str(CLEAN)])
    assert res.exit_code == 2 and "implausibly large" in res.output, res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit)


def test_absurd_memory_limit_leaves_the_workload_checked(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(_manifest(', "--tensor-parallel-size", "3"', memory="1e999999Gi"))
    code, out = _check(tmp_path, str(p))
    assert code == 1 and "KV401" in out and "KV503" not in out, out


@pytest.mark.parametrize(
    "flag", ["--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size"]
)
def test_absurd_parallel_sizes_are_reported_quickly(tmp_path: Path, flag: str) -> None:
    p = tmp_path / "tp.yaml"
    p.write_text(_manifest(f', "{flag}", "1000000000000"'))
    code, out = _timed(lambda: _check(tmp_path, str(p)), 10.0)
    assert code == 1 and "KV206" in out and "implausibly large" in out and "KV503" not in out, out


def test_valid_tp_values_is_bounded_by_the_heads() -> None:
    from kvlint.rules.families.parallelism import valid_tp_values

    assert _timed(lambda: valid_tp_values(32, 10**12), 0.1) == [1, 2, 4, 8, 16, 32]


def test_five_thousand_digit_flag_value(tmp_path: Path) -> None:
    p = tmp_path / "d.yaml"
    p.write_text(_manifest(f', "--max-model-len", "{"9" * 5000}"'))
    code, out = _timed(lambda: _check(tmp_path, str(p)), 10.0)
    assert code == 1 and "KV206" in out and "KV503" not in out, out
    assert all(len(line) < 1000 for line in out.splitlines())


def test_model_config_with_absurd_layer_count_is_refused(tmp_path: Path) -> None:
    cfg = json.loads((ROOT / "kvlint/data/models/meta-llama--Llama-3.1-8B/config.json").read_text())
    cfg["num_hidden_layers"] = 10**9
    d = tmp_path / "models" / "evil--model"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg))
    p = tmp_path / "e.yaml"
    p.write_text(_manifest().replace("meta-llama/Llama-3.1-8B-Instruct", "evil/model"))
    code, out = _timed(lambda: _check(tmp_path, "--model-dir", str(tmp_path / "models"), str(p)), 10.0)
    assert "KV502" in out and "at most 4096 layers" in out and "KV503" not in out, out


def test_a_checkpoint_index_nested_too_deep_leaves_the_model_read(tmp_path: Path) -> None:
    """A local checkpoint's ``model.safetensors.index.json`` only gives the weight size: one nested past the JSON
    decoder's depth made the whole model unreadable (KV502 "RecursionError")."""
    d = tmp_path / "models" / "evil--model"
    d.mkdir(parents=True)
    shutil.copy(ROOT / "kvlint/data/models/meta-llama--Llama-3.1-8B/config.json", d / "config.json")
    (d / "model.safetensors.index.json").write_text("[" * 200_000)
    p = tmp_path / "e.yaml"
    p.write_text(_manifest().replace("meta-llama/Llama-3.1-8B-Instruct", "evil/model"))
    code, out = _check(tmp_path, "--offline", "--model-dir", str(tmp_path / "models"), str(p))
    assert "KV502" not in out and "RecursionError" not in out, out


# ------------------------------------------------------------------------------------------ simulate


def _simulate(*args: str) -> object:
    return CliRunner().invoke(
        main,
        ["simulate", "--accelerator", "h100", "--no-sensitivity", *args, "--"]
        + ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
    )


def test_simulate_requests_are_bounded() -> None:
    res = _simulate("--requests", "10000000")
    assert res.exit_code == 2 and "1000000" in res.output.replace(",", ""), res.output  # type: ignore[attr-defined]


def test_simulate_trace_read_is_bounded() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    res = _timed(lambda: _simulate("--trace", "/dev/zero"), 10.0)
    assert res.exit_code == 2 and "larger than" in res.output, res.output  # type: ignore[attr-defined]


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_simulate_trace_with_a_five_thousand_digit_number(tmp_path: Path, suffix: str) -> None:
    big = "9" * 5000
    p = tmp_path / f"t.{suffix}"
    if suffix == "csv":
        p.write_text(f"prompt_tokens,output_tokens\n{big},10\n")
    else:
        p.write_text(f'{{"prompt_tokens": 100, "output_tokens": "{big}"}}\n')
    res = _simulate("--trace", str(p))
    assert res.exit_code == 2 and "t." + suffix in res.output, res.output  # type: ignore[attr-defined]
    assert res.exception is None or isinstance(res.exception, SystemExit)  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------ subprocesses


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm not installed")
def test_a_chart_directory_cannot_become_a_helm_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kvlint check -- *`` in a tree holding a directory named ``--post-renderer=sh``: helm took it as its
    ``--post-renderer`` option and piped the rendered chart through ``sh``, which ran ``$(touch PWNED)``."""
    chart = tmp_path / "post-renderer-sh"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: "$(touch PWNED)"\n'
    )
    shutil.copytree(chart, tmp_path / "--post-renderer=sh")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["check", "--", "--post-renderer=sh", "post-renderer-sh"])
    assert not (tmp_path / "PWNED").exists()
    assert res.exit_code == 0, res.output  # both charts render and lint clean (a ConfigMap each)


def test_action_paths_and_base_ref_cannot_become_options() -> None:
    from kvlint.action import build_command, changed_lines, validate_inputs

    cmd = build_command({"KVLINT_PATHS": "--format=json=x.json deploy"}, "/tmp/j", "/tmp/m")
    assert cmd[-3:] == ["--", "--format=json=x.json", "deploy"]
    assert changed_lines("--output=/tmp/x", str(ROOT)) is None
    assert any("KVLINT_BASE_REF" in e for e in validate_inputs({"KVLINT_BASE_REF": "--exec=sh"}, str(ROOT)))


# ------------------------------------------------------------------------------------------ reports


def _forging_tree(tmp_path: Path) -> Path:
    d = tmp_path / "in"
    d.mkdir()
    name = "x\nforged.yaml:1:1: error KV101 forged\x1b[2K\u202ey.yaml"
    (d / name).write_text(_manifest(', "--tensor-parallel-size", "3"'))
    return d


def test_text_report_one_finding_per_line(tmp_path: Path) -> None:
    code, out = _check(tmp_path, str(_forging_tree(tmp_path)))
    assert code == 1
    assert not any(line.startswith("forged.yaml") for line in out.splitlines()), out
    assert "\x1b" not in out and "\u202e" not in out
    # each finding starts one unindented line; its detail and fix lines are indented below it
    lines = [line for line in out.splitlines() if line and not line.startswith(" ")]
    findings = lines[:-2]  # then the sizing line and the summary
    assert len(findings) == 4 and lines[-1].startswith("4 errors")  # KV401-KV404
    assert lines[-2].startswith("sized ")
    assert all(line.startswith(str(tmp_path)) for line in findings), findings


def test_reports_survive_nul_bytes_and_non_utf8_names(tmp_path: Path) -> None:
    obj = json.loads(json.dumps(__import__("yaml").safe_load(_manifest(', "--tensor-parallel-size", "3"'))))
    obj["metadata"]["name"] = "a\x00b\x1b[31m"
    obj["spec"]["template"]["spec"]["containers"][0]["name"] = "vllm\x00\x0b"
    d = tmp_path / "in"
    d.mkdir()
    (d / "nul.json").write_text(json.dumps(obj))
    bad = os.fsencode(str(d)) + b"/caf\xe9.yaml"
    with open(bad, "w") as fh:
        fh.write(_manifest(', "--tensor-parallel-size", "3"'))
    outs = {f: tmp_path / f"r.{f}" for f in ("junit", "sarif", "json", "markdown", "github")}
    code, out = _check(tmp_path, *[a for f, p in outs.items() for a in ("--format", f"{f}={p}")], str(d))
    assert code == 1, out
    root = ET.parse(outs["junit"]).getroot()  # well-formed
    assert int(root.get("failures", "0")) >= 8
    for f in ("sarif", "json"):
        json.loads(outs[f].read_text(encoding="utf-8"))
    for f in ("markdown", "github"):
        text = outs[f].read_text(encoding="utf-8")
        assert "\x00" not in text and "\x1b" not in text


def test_report_never_overwrites_an_input(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(_manifest())
    before = p.read_text()
    for target, paths in ((p, [str(p)]), (p, [str(tmp_path)])):
        res = CliRunner().invoke(main, ["check", "--format", f"json={target}", *paths])
        assert res.exit_code == 2 and "being linted" in res.output, res.output
        assert p.read_text() == before


@pytest.mark.parametrize(
    ("port", "reported"), [("'" + "9" * 5000 + "'", 0), ("70000", 0), ("0", 0), ("'000008080'", 1)]
)
def test_probe_port_outside_what_kubernetes_accepts_is_not_checked(
    tmp_path: Path, port: str, reported: int
) -> None:
    """KV408 compares a probe's port with the engine's; a port Kubernetes rejects (outside 1-65535) is not a
    port at all -- a 5,000-digit one raised ValueError from int() and hid the workload's other findings behind
    KV503 'could not finish checking' (the seeded fuzz case of sgl-project/rbg's pd-disagg example). A
    zero-padded valid one is still read."""
    from kvlint.options import Options
    from kvlint.pipeline import INTERNAL_ERROR, run_check

    src = (Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "KV408" / "vllm.yaml").read_text()
    assert "httpGet: {path: /health, port: 8080}" in src
    p = tmp_path / "probe.yaml"
    p.write_text(
        src.replace("httpGet: {path: /health, port: 8080}", f"httpGet: {{path: /health, port: {port}}}")
    )
    result = run_check([str(p)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if INTERNAL_ERROR in d.message]
    kv408 = [d for d in result.diagnostics if d.rule == "KV408" and "8000" in d.message]
    assert len(kv408) == reported


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("vocab_size", -8),  # priced 2.1 GB less weight before (a false fit)
        ("intermediate_size", "x"),  # priced no MLP before
        ("intermediate_size", 2**60),  # past 2^53: read as absent before
        ("num_key_value_heads", -8),  # one KV head and less weight before, verdict ok
        ("head_dim", 0),  # hidden // heads before; transformers keeps 0
        ("hidden_size", -4096),  # 'no KV-holding layers' before
        ("max_position_embeddings", 1.5),
        ("num_experts", -1),
        ("kv_lora_rank", [512]),
    ],
)
def test_model_config_size_that_is_not_a_whole_number_in_range_is_refused(
    tmp_path: Path, key: str, value: object
) -> None:
    """A size in a pull request's config.json that transformers and vLLM cannot build a tensor from is refused
    (KV502 naming the key), not read as absent or priced as a negative size."""
    cfg = json.loads((ROOT / "kvlint/data/models/meta-llama--Llama-3.1-8B/config.json").read_text())
    cfg[key] = value
    d = tmp_path / "models" / "evil--model"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg))
    p = tmp_path / "e.yaml"
    p.write_text(_manifest().replace("meta-llama/Llama-3.1-8B-Instruct", "evil/model"))
    code, out = _check(tmp_path, "--offline", "--model-dir", str(tmp_path / "models"), str(p))
    assert "KV502" in out and f"config.json {key} is" in out and "whole number" in out, out
    assert "sized 1 of 1" not in out, out
    # the config was found: KV502 says it was refused and what to correct, not "config.json not found"
    assert "not found" not in out and "no config.json" not in out, out
    assert "was found but refused" in out and f"correct {d / 'config.json'}" in out.replace(
        "\n       ", " "
    ), out


def test_model_config_null_and_zero_counts_are_read_as_before(tmp_path: Path) -> None:
    """Guard for the refusal above: a null size and a zero count (a dense model's num_experts, no MTP layer) are
    what real configs hold, and stay readable."""
    cfg = json.loads((ROOT / "kvlint/data/models/meta-llama--Llama-3.1-8B/config.json").read_text())
    cfg.update(head_dim=None, num_experts=0, num_nextn_predict_layers=0, sliding_window=None)
    d = tmp_path / "models" / "evil--model"
    d.mkdir(parents=True)
    (d / "config.json").write_text(json.dumps(cfg))
    p = tmp_path / "e.yaml"
    p.write_text(_manifest().replace("meta-llama/Llama-3.1-8B-Instruct", "evil/model"))
    code, out = _check(tmp_path, "--offline", "--model-dir", str(tmp_path / "models"), str(p))
    assert code == 0 and "KV502" not in out and "sized 1 of 1" in out, out


@pytest.mark.parametrize(
    ("model", "key", "value", "said"),
    [
        # a short list was filled with full-attention layers (gpt-oss-20b: 24 layers)
        (
            "openai--gpt-oss-20b",
            "layer_types",
            ["sliding_attention", "full_attention"],
            "has 2 entries for 24",
        ),
        # a kind that is not a name was read as a layer without KV cache
        ("openai--gpt-oss-20b", "layer_types", [0] * 24, "is [0, 0"),
        # a short list sized V4 as plain sliding-window layers
        ("deepseek-ai--DeepSeek-V4-Flash", "compress_ratios", [4, 128], "has 2 entries for 43"),
        # a string was a raw Python error ("invalid literal for int()")
        ("deepseek-ai--DeepSeek-V4-Flash", "compress_ratios", ["x"] * 44, 'is ["x"'),
        ("deepseek-ai--DeepSeek-V4-Flash", "compress_ratios", 4, "is 4;"),
    ],
)
def test_per_layer_lists_vllm_cannot_index_are_refused(
    model: str, key: str, value: object, said: str
) -> None:
    """Per-layer lists of a pull request's config.json that the model classes cannot index per decoder layer are
    refused with the key and what is wrong, not sized as another layout."""
    from kvlint.models import parse_config

    cfg = json.loads((ROOT / "kvlint/data/models" / model / "config.json").read_text())
    cfg[key] = value
    with pytest.raises(ValueError) as e:
        parse_config(cfg, model_id="evil/model", source="test")
    assert f"config.json {key} {said}" in str(e.value), str(e.value)
    # the stored config itself reads as before
    parse_config(
        json.loads((ROOT / "kvlint/data/models" / model / "config.json").read_text()),
        model_id="m",
        source="t",
    )
