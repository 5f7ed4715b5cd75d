"""KV202 (no explicit context limit) states what each engine does with the full default context, and its
example length changes something and fits: SGLang agrees with KV702 (it starts with a pool smaller than the
context, warning only from 0.5.23, ``kvlint.memory.sglang.pool_starts`` / ``warns_pool_below_context``), its
example ``--context-length`` fits the predicted pool (re-planned, the same length KV702 proposes), and a fix
never proposes the length the engine already uses as if it changed anything. Real pipeline runs on models of
the bundled catalogue; every threshold is read from the run's own plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.memory.sglang import SglangPlanDetail, pool_starts, warns_pool_below_context
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.rules.remedies import MIN_USEFUL_MAX_MODEL_LEN
from kvlint.types import CheckResult

_FLAG = {"vllm": "--max-model-len", "sglang": "--context-length"}


def _manifest(tmp_path: Path, engine: str, model: str, gpu: str, *extra: str, tag: str = "") -> CheckResult:
    """One Pod running ``engine`` for ``model`` on one ``gpu`` (an nvidia.com/gpu.product label)."""
    if engine == "vllm":
        image = f"vllm/vllm-openai:{tag or 'v0.11.0'}"
        cmd = ["--model", model, *extra]
        key = "args"
    else:
        image = f"lmsysorg/sglang:{tag or 'v0.5.5'}"
        cmd = ["python3", "-m", "sglang.launch_server", "--model-path", model, *extra]
        key = "command"
    argv = ", ".join(f'"{a}"' for a in cmd)
    p = tmp_path / f"{engine}-{model.replace('/', '-')}-{gpu}-{tag}-{'-'.join(extra)}.yaml"
    p.write_text(
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: x}}\nspec:\n  nodeSelector: {{nvidia.com/gpu.product: {gpu}}}\n"
        f"  containers:\n  - name: {engine}\n    image: {image}\n    {key}: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return run_check([str(p)], Options(allow_hub=False))


def _by_rule(r: CheckResult, rule: str) -> list:
    return [d for d in r.diagnostics if d.rule == rule]


# Llama-3.1-8B (131,072 tokens) on an L4: SGLang's pool holds fewer tokens than the context once
# mem_fraction_static leaves a pool at all (0.85 on every release read).
_SGLANG_TAGS = ["v0.4.6.post1-cu124", "v0.5.5", "v0.5.23"]


@pytest.mark.parametrize("tag", _SGLANG_TAGS)
def test_sglang_kv202_agrees_with_kv702_that_sglang_starts(tmp_path: Path, tag: str) -> None:
    r = _manifest(
        tmp_path,
        "sglang",
        "meta-llama/Llama-3.1-8B-Instruct",
        "NVIDIA-L4",
        "--mem-fraction-static",
        "0.85",
        tag=tag,
    )
    (cr,) = r.containers
    d = cr.plan_detail
    assert isinstance(d, SglangPlanDetail)
    assert 0 < d.max_total_num_tokens < d.context_length  # the case both rules are about
    assert pool_starts(d.version, d.max_total_num_tokens, d.context_length)
    (kv702,) = _by_rule(r, "KV702")
    (kv202,) = _by_rule(r, "KV202")
    assert "starts" in kv702.message
    # KV202 must not claim a refusal where SGLang starts: it says it starts, and warns only where it does
    assert "decides start-up" not in kv202.message and "refuse" not in kv202.message
    assert "starts" in kv202.message
    assert ("warns" in kv202.message) == warns_pool_below_context(d.version), kv202.message
    assert f"{d.max_total_num_tokens - 1:,}" in kv202.message  # the cap it starts with, as KV702 says


@pytest.mark.parametrize("tag", _SGLANG_TAGS)
def test_sglang_kv202_example_fits_the_pool_and_is_kv702s_length(tmp_path: Path, tag: str) -> None:
    r = _manifest(
        tmp_path,
        "sglang",
        "meta-llama/Llama-3.1-8B-Instruct",
        "NVIDIA-L4",
        "--mem-fraction-static",
        "0.85",
        tag=tag,
    )
    (cr,) = r.containers
    d = cr.plan_detail
    low = d.plan.num_blocks_low * d.plan.block_size
    (kv202,) = _by_rule(r, "KV202")
    m = re.search(r"--context-length (\d+)", kv202.fix)
    assert m, kv202.fix
    n = int(m.group(1))
    assert MIN_USEFUL_MAX_MODEL_LEN <= n <= low, (n, low)
    (kv702,) = _by_rule(r, "KV702")
    assert f"--context-length {n} " in kv702.fix  # the two findings propose one length
    applied = _manifest(
        tmp_path,
        "sglang",
        "meta-llama/Llama-3.1-8B-Instruct",
        "NVIDIA-L4",
        "--mem-fraction-static",
        "0.85",
        "--context-length",
        str(n),
        tag=tag,
    )
    assert not {"KV702", "KV701", "KV105"} & {x.rule for x in applied.diagnostics}


def test_sglang_kv202_keeps_32768_where_the_pool_plainly_holds_it(tmp_path: Path) -> None:
    r = _manifest(tmp_path, "sglang", "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA-H100-80GB-HBM3")
    (cr,) = r.containers
    low = cr.plan.num_blocks_low * cr.plan.block_size
    assert low >= 32768
    (kv202,) = _by_rule(r, "KV202")
    assert "e.g. --context-length 32768" in kv202.fix


# Models whose derived length is at most KV202's 32,768-token example: Mistral-7B-Instruct-v0.3 (32,768),
# Qwen2-7B-Instruct (32,768), gemma-2-2b (8,192), on an H100 where that length fits.
@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize(
    "model", ["mistralai/Mistral-7B-Instruct-v0.3", "Qwen/Qwen2-7B-Instruct", "google/gemma-2-2b"]
)
def test_kv202_never_proposes_the_current_length_as_a_change(tmp_path: Path, engine: str, model: str) -> None:
    r = _manifest(tmp_path, engine, model, "NVIDIA-H100-80GB-HBM3")
    (cr,) = r.containers
    used = cr.plan.max_model_len
    assert used <= 32768
    (kv202,) = _by_rule(r, "KV202")
    flag = _FLAG[engine]
    proposed = [int(n) for n in re.findall(rf"{flag} (\d+)", kv202.fix)]
    assert proposed, kv202.fix
    for n in proposed:
        if n == used:  # the same number: only as pinning what the engine already uses
            assert "already uses" in kv202.fix and not kv202.fix.startswith(f"set {flag} to"), kv202.fix
    # and a shorter length (the plan says the current one fits here) is never offered as "the largest that fits"
    assert "the largest that fits" not in kv202.fix


def test_vllm_kv202_pins_the_longrope_default_it_already_uses(tmp_path: Path) -> None:
    """Phi-4-mini (LongRoPE): vLLM uses original_max_position_embeddings (below 32,768) without a flag; the fix
    pins that length rather than offering it as a change."""
    r = _manifest(tmp_path, "vllm", "microsoft/Phi-4-mini-instruct", "NVIDIA-H100-80GB-HBM3")
    (cr,) = r.containers
    (kv202,) = _by_rule(r, "KV202")
    used = cr.plan.max_model_len
    assert used < 32768
    assert f"--max-model-len {used}" in kv202.fix and "already uses" in kv202.fix


def test_kv202_catalogue_text_says_what_each_engine_does() -> None:
    """rules/KV202.yaml names, for each engine, the rule that reports what that engine does with a context the
    KV cache cannot hold (vLLM refuses: KV103; SGLang starts and caps: KV702), and explains why TGI, which sets
    its own limit, is not among the rule's engines (docs/engine-memory-model.md §1.11 E1, §2.3, §3.3)."""
    from kvlint.rules.catalog import load_catalog

    rule = load_catalog()["KV202"]
    text = rule.rationale
    paragraphs = {
        eng: p for p in text.split("\n- ") for eng in ("vLLM", "SGLang", "TGI") if p.startswith(eng)
    }
    assert set(paragraphs) == {"vLLM", "SGLang", "TGI"}, text
    assert "refuses" in paragraphs["vLLM"] and "KV103" in paragraphs["vLLM"]
    assert "does not refuse" in paragraphs["SGLang"] and "KV702" in paragraphs["SGLang"]
    assert "0.5.23" in paragraphs["SGLang"]  # the release from which it warns (warns_pool_below_context)
    assert "tgi" not in rule.engines and "not checked by this rule" in paragraphs["TGI"]
