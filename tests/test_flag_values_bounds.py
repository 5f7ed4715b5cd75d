"""Flag values that made kvlint's own arithmetic or JSON reading fail (found by an adversarial probe): TGI's
``--cuda-memory-fraction nan`` surfaced as KV502 "ValueError: cannot convert float NaN to integer", and a
deeply nested ``--hf-overrides`` as KV503 "RecursionError ...". Both are now KV206 findings for the flag."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint.cli import main

_TGI = "ghcr.io/huggingface/text-generation-inference:3.0.0"


def _pod(image: str, args: list[str], env: dict[str, str] | None = None) -> str:
    c: dict = {"name": "c", "image": image, "args": args, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c]}}
    )


def _check(tmp_path, text: str) -> list[dict]:
    p = tmp_path / "pod.yaml"
    p.write_text(text)
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--accelerator", "h100", "--format", "json", str(p)]
    )
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return json.loads(r.output)["diagnostics"]


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf"])
def test_tgi_non_finite_memory_fraction_is_kv206(tmp_path, value):
    args = ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--cuda-memory-fraction", value]
    diags = _check(tmp_path, _pod(_TGI, args))
    kv206 = [d for d in diags if d["rule"] == "KV206"]
    assert kv206 and "--cuda-memory-fraction" in kv206[0]["message"] and "finite" in kv206[0]["message"]
    assert not any("Error" in d["message"] for d in diags)


def test_tgi_non_finite_memory_fraction_from_env_is_kv206(tmp_path):
    diags = _check(
        tmp_path,
        _pod(_TGI, ["--model-id", "meta-llama/Llama-3.1-8B-Instruct"], {"CUDA_MEMORY_FRACTION": "nan"}),
    )
    assert any(d["rule"] == "KV206" and "finite" in d["message"] for d in diags)
    assert not any("Error" in d["message"] for d in diags)


def test_deeply_nested_hf_overrides_is_kv206(tmp_path):
    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    args = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--hf-overrides", deep]
    diags = _check(tmp_path, _pod("vllm/vllm-openai:v0.11.0", args))
    kv206 = [d for d in diags if d["rule"] == "KV206"]
    assert kv206 and "--hf-overrides" in kv206[0]["message"] and "nested too deeply" in kv206[0]["message"]
    assert not any(d["rule"] == "KV503" for d in diags)
    assert not any("RecursionError" in d["message"] for d in diags)
    assert len(kv206[0]["message"]) < 300  # the value is shown cut


def test_shallow_hf_overrides_still_read(tmp_path):
    args = [
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--hf-overrides",
        '{"max_position_embeddings": 4096}',
    ]
    diags = _check(tmp_path, _pod("vllm/vllm-openai:v0.11.0", args))
    assert not any(d["rule"] in ("KV206", "KV503") for d in diags)


@pytest.mark.parametrize("flag", ["--cpu-offload-gb", "--swap-space", "--kv-offloading-size"])
@pytest.mark.parametrize("value", ["1e308", "1" + "0" * 300])
def test_a_gib_size_beyond_64_bit_bytes_is_kv206(tmp_path, flag, value):
    """``--cpu-offload-gb 1e308`` (found by tools/hostile_shapes.py): finite, but 1e308 GiB in bytes is not,
    and KV406's arithmetic raised OverflowError, hidden in KV503 "kvlint could not finish checking"."""
    args = ["--model", "meta-llama/Llama-3.1-8B-Instruct", flag, value]
    release = "v0.12.0" if flag == "--kv-offloading-size" else "v0.11.0"  # (the first a release accepts it)
    diags = _check(tmp_path, _pod(f"vllm/vllm-openai:{release}", args))
    assert not any(d["rule"] == "KV503" for d in diags), diags
    kv206 = [d for d in diags if d["rule"] == "KV206"]
    assert len(kv206) == 1 and flag in kv206[0]["message"], diags


def test_a_large_finite_gib_size_is_still_read(tmp_path):
    args = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--cpu-offload-gb", "100000"]
    diags = _check(tmp_path, _pod("vllm/vllm-openai:v0.11.0", args))
    assert not any(d["rule"] in ("KV206", "KV503") for d in diags), diags


@pytest.mark.parametrize(
    ("image", "args"),
    [
        ("vllm/vllm-openai:v0.11.0", ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization"]),
        (_TGI, ["--model-id", "meta-llama/Llama-3.1-8B-Instruct", "--cuda-memory-fraction"]),
        ("lmsysorg/sglang:v0.4.6", ["python3", "-m", "sglang.launch_server", "--model-path",
                                    "meta-llama/Llama-3.1-8B-Instruct", "--mem-fraction-static"]),
    ],
)  # fmt: skip
def test_a_huge_memory_fraction_is_kv107_alone(tmp_path, image, args):
    """A memory fraction of 1e308: KV107 says it is outside (0, 1]; the plan built on it overflowed and KV502
    added "could not size ...: OverflowError: cannot convert float infinity to integer" (found by an
    adversarial probe)."""
    diags = _check(tmp_path, _pod(image, [*args, "1e308"]))
    assert [d["rule"] for d in diags if d["rule"] in ("KV107", "KV502")] == ["KV107"]
    assert not any("Error" in d["message"] for d in diags)


@pytest.mark.parametrize(
    ("flag", "extra"),
    [
        ("--pooler-config", ["--runner", "pooling"]),
        ("--compilation-config", ["--tensor-parallel-size", "2"]),
        ("--hf-overrides", []),
        ("--speculative-config", []),
        ("--kv-transfer-config", []),
        ("--limit-mm-per-prompt", []),
    ],
)
def test_deeply_nested_json_objects_do_not_stop_the_plan(tmp_path, flag, extra):
    """Nested JSON objects end in ``}}``, which the command parser keeps as text like a template it cannot resolve
    (``engines.shell.UNRESOLVED_RE``), so the memory model's own JSON readers get it: they took only ValueError,
    and the plan stopped with KV503 "RecursionError" (``--pooler-config``, read since engine46) or a KV502 whose
    fix is about config.json (review rr46A). They now read it as unreadable JSON, as they read malformed JSON."""
    deep = '{"a": ' * 5000 + "1" + "}" * 5000
    args = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192", *extra, flag, deep]
    diags = _check(tmp_path, _pod("vllm/vllm-openai:v0.14.0", args))
    assert not any("RecursionError" in d["message"] or "recursion" in d["message"] for d in diags), diags
    assert not any(d["rule"] == "KV503" for d in diags)
