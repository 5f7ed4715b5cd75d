"""Absurd sizes, engine by engine: each row is one setting at a value far beyond any deployment and the rule that
reports what the engine itself does with it, from its source (the rule's docstring and catalogue entry cite it).
No row may leave the plan's capacity rules to price the value (a KV102 / KV103 / KV701 of astronomical figures where
the engine stops earlier), and every finding names the setting's position in the manifest.

| engine | setting | what the engine does | rule |
|---|---|---|---|
| vLLM V1 | --max-num-batched-tokens 10^9 | model-runner input buffers exceed the GPU in GPUModelRunner.__init__ | KV209 |
| vLLM V2 runner (0.34.0) | --max-num-batched-tokens 10^10 | InputBuffers exceed the GPU | KV209 |
| vLLM V1 | --max-num-batched-tokens 10^7 | buffers fit, the profile's forward does not: OOM in profile_run | KV102 |
| vLLM | --max-model-len 10^9 | above the derived length: ValueError in _get_and_verify_max_len | KV201 |
| vLLM V1 0.19.0 | --max-model-len 10^9 with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 | InputBatch's host token tables (4,768 GiB), then its GPU block table (238 GiB), in GPUModelRunner.__init__ | KV209 |
| vLLM | --max-num-seqs 10^9 | SchedulerConfig: max_num_batched_tokens must be >= max_num_seqs | KV204 |
| vLLM | --max-num-seqs and --max-num-batched-tokens 10^9 | the batched tokens' buffers | KV209 |
| vLLM | --max-num-batched-tokens 2^63 | beyond int64: not read at all | KV206 |
| SGLang 0.5.5 | --max-running-requests 10^9 | request-to-token table OOM in init_memory_pool | KV703 |
| SGLang 0.5.12 | --max-running-requests 10^9 | capped at the engine's estimate, at most 4,096 rows | none |
| SGLang 0.5.23 | --max-running-requests 10^9 | capped at half the pool's tokens: a 100 GiB table at 131,072 tokens | KV703 |
| SGLang 0.5.5 | --chunked-prefill-size 10^9 | default mem_fraction_static goes negative: "Not enough memory" | KV701 |
| SGLang 0.5.5 | --mem-fraction-static 1.5 | outside (0, 1] | KV107 |
| SGLang 0.5.5 | --max-total-tokens 10^9 | min'd with the profiled pool, a warning only | none |
| TGI 3.0.1 | --max-batch-prefill-tokens 10^9 | warmup prefill OOM: "Not enough memory to handle N prefill tokens" | KV604 |
| TGI 3.0.1 | --max-batch-prefill-tokens 5 x 10^9 | beyond the launcher's u32: clap refuses it | KV206 |
| TGI 3.0.1 | --max-total-tokens 10^9 | "Not enough memory to handle max_total_tokens" | KV603 |
| TGI 3.0.1 | --cuda-memory-fraction 5 | outside (0, 1] | KV107 |
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
_VLLM, _SGLANG, _TGI = "vllm", "sglang", "tgi"
_CAPACITY = {"KV101", "KV102", "KV103", "KV104", "KV105", "KV701", "KV702", "KV603", "KV604"}

ROWS = [
    (_VLLM, "v0.11.0", ["--max-num-batched-tokens", str(10**9)], "KV209"),
    (_VLLM, "v0.34.0", ["--max-num-batched-tokens", str(10**10)], "KV209"),
    (_VLLM, "v0.11.0", ["--max-num-batched-tokens", str(10**7)], "KV102"),
    (_VLLM, "v0.11.0", ["--max-model-len", str(10**9)], "KV201"),
    (_VLLM, "v0.11.0", ["--max-num-seqs", str(10**9)], "KV204"),
    (_VLLM, "v0.11.0", ["--max-num-seqs", str(10**9), "--max-num-batched-tokens", str(10**9)], "KV209"),
    (_VLLM, "v0.11.0", ["--max-num-batched-tokens", str(2**63)], "KV206"),
    (_SGLANG, "v0.5.5", ["--max-running-requests", str(10**9)], "KV703"),
    (_SGLANG, "v0.5.12", ["--max-running-requests", str(10**9)], None),
    (_SGLANG, "v0.5.23", ["--max-running-requests", str(10**9)], "KV703"),
    (_SGLANG, "v0.5.5", ["--chunked-prefill-size", str(10**9)], "KV701"),
    (_SGLANG, "v0.5.5", ["--mem-fraction-static", "1.5"], "KV107"),
    (_SGLANG, "v0.5.5", ["--max-total-tokens", str(10**9)], None),
    (_TGI, "3.0.1", ["--max-batch-prefill-tokens", str(10**9)], "KV604"),
    (_TGI, "3.0.1", ["--max-batch-prefill-tokens", str(5 * 10**9)], "KV206"),
    (_TGI, "3.0.1", ["--max-total-tokens", str(10**9)], "KV603"),
    (_TGI, "3.0.1", ["--cuda-memory-fraction", "5"], "KV107"),
]


def _manifest(tmp_path: Path, engine: str, tag: str, flags: list[str]) -> Path:
    if engine == _VLLM:
        image, key, cmd = f"vllm/vllm-openai:{tag}", "args", ["--model", _MODEL, *flags]
    elif engine == _SGLANG:
        image, key = f"lmsysorg/sglang:{tag}", "command"
        cmd = ["python3", "-m", "sglang.launch_server", "--model-path", _MODEL, *flags]
    else:
        image, key, cmd = (
            f"ghcr.io/huggingface/text-generation-inference:{tag}",
            "args",
            ["--model-id", _MODEL, *flags],
        )
    argv = ", ".join(f'"{a}"' for a in cmd)
    p = tmp_path / f"{engine}-{tag}-{'-'.join(flags)}.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
        f"  containers:\n  - name: srv\n    image: {image}\n    {key}: [{argv}]\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return p


@pytest.mark.parametrize(
    ("engine", "tag", "flags", "rule"), ROWS, ids=[f"{r[0]}-{r[1]}-{r[2][-2]}" for r in ROWS]
)
def test_an_absurd_value_gets_the_engines_own_verdict(
    tmp_path: Path, engine: str, tag: str, flags: list[str], rule: str | None
) -> None:
    path = _manifest(tmp_path, engine, tag, flags)
    r = run_check([str(path)], Options(allow_hub=False))
    errors = [d for d in r.diagnostics if d.severity == "error"]
    if rule is None:
        assert not errors, [d.message for d in errors]
        return
    found = [d for d in errors if d.rule == rule]
    assert found, [(d.rule, d.message) for d in r.diagnostics]
    # reported where the value is written (the line of the args)
    lines = path.read_text().splitlines()
    assert all(d.loc is not None and flags[-2] in lines[d.loc.line - 1] for d in found)
    # nothing else prices the value as a capacity figure beside the engine's own stop
    assert not ({d.rule for d in errors} - {rule}) & _CAPACITY, [(d.rule, d.message) for d in errors]


def test_a_max_model_len_past_the_models_own_with_the_override_stops_in_the_runners_request_tables(
    tmp_path: Path,
) -> None:
    """VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 lifts KV201's test; vLLM then builds InputBatch in GPUModelRunner.__init__,
    host token tables of max_num_seqs x max_model_len and a GPU block table of max_num_seqs x max_model_len / 16,
    before the weights: KV209 at the value, not a KV103 of 122,070 GiB of KV cache."""
    flags = ["--max-model-len", str(10**9)]
    path = _manifest(tmp_path, _VLLM, "v0.19.0", flags)
    path.write_text(
        path.read_text().replace(
            "    args:", '    env: [{name: VLLM_ALLOW_LONG_MAX_MODEL_LEN, value: "1"}]\n    args:', 1
        )
    )
    r = run_check([str(path)], Options(allow_hub=False))
    errors = [d for d in r.diagnostics if d.severity == "error"]
    (d,) = [d for d in errors if d.rule == "KV209"]
    assert "token_ids" in d.message and "block table" in d.message and "InputBatch" in d.message
    lines = path.read_text().splitlines()
    assert d.loc is not None and str(10**9) in lines[d.loc.line - 1]
    assert not {e.rule for e in errors} - {"KV209"}, [(e.rule, e.message) for e in errors]
