"""KV101 (vLLM) offers a lighter checkpoint only after re-planning it, like its other remedies: vLLM's online
``--quantization fp8`` on a GPU with FP8, else a 4-bit AWQ/GPTQ build, each with its figures, and nothing when
even the 4-bit weights leave no room (before, 'a quantized checkpoint (FP8/AWQ/GPTQ) of the model' was appended
to every KV101, also for Qwen2.5-72B on one L40S, where no quantized build fits). Each offered remedy is then
planned again as a user would apply it and must pass."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kvlint.cli import main


def _plan(accelerator: str, version: str, *command: str) -> dict:
    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--accelerator",
            accelerator,
            "--engine-version",
            version,
            "--format",
            "json",
            "--",
        ]
        + ["vllm", "serve", *command],
    )
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _kv101_fix(d: dict) -> str:
    (fix,) = [x["fix"] for x in d["diagnostics"] if x["rule"] == "KV101"]
    return str(fix)


def _fails_capacity(d: dict) -> bool:
    return d["verdict"] == "fail" or any(x["rule"] in ("KV101", "KV102", "KV103") for x in d["diagnostics"])


def test_online_fp8_offered_on_an_fp8_gpu_and_it_fits() -> None:
    fix = _kv101_fix(_plan("l4", "0.11.0", "Qwen/Qwen2.5-14B-Instruct", "--max-model-len", "8192"))
    assert "--quantization fp8 (vLLM quantizes this checkpoint's weights to FP8 at load) fits" in fix
    assert "FP8/AWQ/GPTQ" not in fix
    applied = _plan(
        "l4", "0.11.0", "Qwen/Qwen2.5-14B-Instruct", "--max-model-len", "8192", "--quantization", "fp8"
    )
    assert not _fails_capacity(applied)


def test_four_bit_build_offered_where_it_fits_and_it_does() -> None:
    fix = _kv101_fix(_plan("l40s", "0.11.2", "Qwen/Qwen2.5-32B-Instruct"))
    assert "a 4-bit AWQ/GPTQ checkpoint of the model fits: about" in fix
    applied = _plan("l40s", "0.11.2", "Qwen/Qwen2.5-32B-Instruct-AWQ")
    assert not _fails_capacity(applied)


def test_no_quantized_remedy_where_none_fits() -> None:
    fix = _kv101_fix(_plan("l40s", "0.11.2", "Qwen/Qwen2.5-72B-Instruct"))
    assert "quantiz" not in fix and "AWQ" not in fix  # even 4-bit weights (~39 GiB) leave no KV on 40 GiB
    assert "--tensor-parallel-size" in fix
    # and the 4-bit build itself indeed does not fit there
    assert _fails_capacity(_plan("l40s", "0.11.2", "Qwen/Qwen2.5-72B-Instruct-AWQ"))


def _plan_cmd(accelerator: str, version: str, *command: str) -> dict:
    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--accelerator",
            accelerator,
            "--engine-version",
            version,
            "--format",
            "json",
            "--",
        ]
        + list(command),
    )
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def test_tgi_and_sglang_offer_a_lighter_checkpoint_only_when_it_fits() -> None:
    tgi = (
        "text-generation-launcher",
        "--model-id",
        "Qwen/Qwen2.5-32B-Instruct",
        "--max-total-tokens",
        "8192",
    )
    tgi += ("--max-input-tokens", "4096")
    fix = _kv101_fix(_plan_cmd("l40s", "3.3.6", *tgi))
    assert "--quantize fp8 (TGI quantizes the weights to FP8 at load) fits" in fix
    assert not _fails_capacity(_plan_cmd("l40s", "3.3.6", *tgi, "--quantize", "fp8"))
    sgl = ("python3", "-m", "sglang.launch_server", "--context-length", "8192", "--model-path")
    fix = _kv101_fix(_plan_cmd("l40s", "0.5.23", *sgl, "Qwen/Qwen2.5-32B-Instruct"))
    assert "--quantization fp8 (SGLang quantizes the weights to FP8 at load) fits" in fix
    applied = _plan_cmd("l40s", "0.5.23", *sgl, "Qwen/Qwen2.5-32B-Instruct", "--quantization", "fp8")
    assert not _fails_capacity(applied) and not any(x["rule"] == "KV701" for x in applied["diagnostics"])
    fix = _kv101_fix(_plan_cmd("l40s", "0.5.23", *sgl, "Qwen/Qwen2.5-72B-Instruct"))
    assert "quantiz" not in fix and "AWQ" not in fix
