"""Engine config stage, TGI and SGLang: detection, main settings, env equivalents, positions.

Fixture: fixtures/engines/tgi_sglang.yaml (written for these tests; see its SOURCE comment).
"""

from __future__ import annotations

import os

import pytest

from kvlint.engines import parse_container
from kvlint.engines.sglang import parse_sglang_argv
from kvlint.engines.tgi import parse_tgi_argv
from kvlint.load import load_text
from kvlint.source import LDict, LList

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "engines", "tgi_sglang.yaml")


@pytest.fixture(scope="module")
def cfgs():
    with open(FIX, encoding="utf-8") as fh:
        res = load_text(fh.read(), FIX)
    pod = res.documents[0].data["spec"]["template"]["spec"]
    return {c["name"]: parse_container(c, pod_spec=pod) for c in pod["containers"]}


def _rules(cfg):
    return [f.rule for f in cfg.findings]


def test_tgi_env_equivalents_args_win(cfgs):
    cfg = cfgs["tgi-env"]
    assert cfg.engine == "tgi" and cfg.version == "2.3"
    assert cfg.model.value == "google/gemma-2-27b-it" and cfg.model.source == "env"
    assert (cfg.model.loc.line, cfg.model.loc.column) == (19, 18)
    assert cfg.get("num_shard") == 2 and cfg.flags["num_shard"].source == "arg"  # args beat NUM_SHARD=4
    assert (cfg.flags["num_shard"].loc.line, cfg.flags["num_shard"].loc.column) == (14, 11)
    assert cfg.get("max_input_tokens") == 4000  # legacy --max-input-length
    assert cfg.get("max_total_tokens") == 8192 and cfg.flags["max_total_tokens"].source == "env"
    assert cfg.get("cuda_memory_fraction") == pytest.approx(0.9)
    assert cfg.findings == []


def test_tgi_findings(cfgs):
    cfg = cfgs["tgi-launcher"]
    assert cfg.version == "3.0.1" and cfg.model.value == "meta-llama/Llama-3.1-8B"
    assert sorted(_rules(cfg)) == ["KV205", "KV206", "KV206"]
    unknown = next(f for f in cfg.findings if f.rule == "KV205")
    assert "--max-totl-tokens" in unknown.message and "--max-total-tokens" in unknown.message


def test_tgi_args_only_via_image_entrypoint():
    c = LDict(name="t", image="ghcr.io/huggingface/text-generation-inference:2.4.1-rocm")
    c["args"] = LList(
        ["--model-id", "X/y", "--max-batch-total-tokens", "20000", "--kv-cache-dtype", "fp8_e5m2"]
    )
    cfg = parse_container(c)
    assert cfg.engine == "tgi" and cfg.version == "2.4.1"
    assert cfg.get("max_batch_total_tokens") == 20000 and cfg.get("kv_cache_dtype") == "fp8_e5m2"


def test_tgi_argv_direct():
    cfg = parse_tgi_argv(
        ["--model-id=X", "--trust-remote-code", "--max-input-tokens", "1024"], env={"MAX_INPUT_TOKENS": "9"}
    )
    assert (
        cfg.model.value == "X"
        and cfg.get("trust_remote_code") is True
        and cfg.get("max_input_tokens") == 1024
    )


def test_sglang_main_settings(cfgs):
    cfg = cfgs["sglang"]
    assert cfg.engine == "sglang" and cfg.version == "0.5.5.post3"
    assert cfg.model.value == "Qwen/Qwen3-32B"
    assert cfg.get("tp_size") == 2  # --tp: argparse prefix of --tp-size
    assert cfg.get("mem_fraction_static") == pytest.approx(0.85)
    assert cfg.get("context_length") == 32768
    assert (cfg.flags["context_length"].loc.line, cfg.flags["context_length"].loc.column) == (38, 11)
    assert cfg.get("max_running_requests") == 128 and cfg.get("chunked_prefill_size") == 8192
    assert cfg.get("kv_cache_dtype") == "fp8_e5m2" and cfg.get("page_size") == 16
    assert sorted(_rules(cfg)) == ["KV205", "KV206"]


def test_sglang_serve_in_script_with_aliases(cfgs):
    cfg = cfgs["sglang-script"]
    assert cfg.version == "0.4.9.post3"
    assert cfg.model.value == "/models/Qwen3-8B"
    assert (cfg.model.loc.line, cfg.model.loc.column) == (51, 21)
    assert cfg.get("ep_size") == 2 and cfg.get("dp_size") == 2 and cfg.get("pp_size") == 2
    # SGLang 0.4.9.post3 has no `sglang` program (it comes with 0.5.5): KV206; $POD_GROUP_INDEX is not in the env: KV503
    assert [f.rule for f in cfg.findings] == ["KV206", "KV503"]
    assert "has no `sglang serve`" in cfg.findings[0].message


def test_router_is_not_an_engine(cfgs):
    assert cfgs["router"] is None


def test_sglang_argv_direct_duplicate():
    cfg = parse_sglang_argv(["--model", "m", "--tp-size", "2", "--tensor-parallel-size", "4"])
    assert cfg.get("tp_size") == 4 and "KV207" in _rules(cfg)


@pytest.mark.parametrize(
    ("image", "typo", "meant"),
    [
        ("vllm/vllm-openai:v0.8.5", "--max-model-lenn", "--max-model-len"),
        ("ghcr.io/huggingface/text-generation-inference:3.0.1", "--max-totl-tokens", "--max-total-tokens"),
        ("lmsysorg/sglang:v0.4.6", "--mem-fractionn-static", "--mem-fraction-static"),
    ],
)
def test_only_the_first_unknown_options_get_a_suggestion(image: str, typo: str, meant: str) -> None:
    """Each unknown option was compared with every option of the engine (difflib, 0.9 ms): 20,000 made-up
    flags in a 0.34 MB Deployment took 2 s, the webhook's whole budget. The first MAX_SUGGESTIONS get a
    "did you mean"; every one is still reported."""
    from kvlint.engines.options import MAX_SUGGESTIONS

    n = MAX_SUGGESTIONS + 50
    model = ["--model-id", "X/y"] if "text-generation" in image else ["--model-path", "X/y"]
    if "vllm" in image:
        model = ["--model", "X/y"]
    c = LDict(name="e", image=image)
    if "sglang" in image:
        c["command"] = LList(["python3", "-m", "sglang.launch_server"])
    c["args"] = LList(model + [f"{typo}{'=1' if i % 2 else ''}" for i in range(n)])
    cfg = parse_container(c)
    unknown = [f for f in cfg.findings if f.rule == "KV205"]
    assert len(unknown) == n
    hinted = [f for f in unknown if f"did you mean {meant}?" in f.message]
    assert len(hinted) == MAX_SUGGESTIONS
    assert unknown[:MAX_SUGGESTIONS] == hinted
