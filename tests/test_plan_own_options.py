"""`kvlint plan` reads its own options only before the engine command (click's ``allow_interspersed_args`` off): one
typed after it (``kvlint plan --accelerator l4 -- vllm serve M --gpus 2``, ``... text-generation-launcher ...
--engine-version 1.4.3``, as a new user of pass 47 did) goes to the engine's parser, which does not know it. KV205
said "unknown vLLM option --gpus; did you mean --gpu-memory-utilization?" and "fix: remove --gpus": the option was
the user's to kvlint, not a typo of an engine option. It now says so and how to move it; the verdict stays the
engine's (vLLM refuses the word as typed)."""

from __future__ import annotations

from click.testing import CliRunner

from kvlint.cli import main


def _plan(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, ["plan", "--offline", "--accelerator", "l4", "--", *args])


def test_kvlint_option_after_the_command_is_named_as_kvlints() -> None:
    r = _plan("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--gpus", "2", "--max-model-len", "8192")
    assert "--gpus is an option of kvlint plan" in r.output, r.output
    assert "did you mean" not in r.output.split("--gpus is an option")[0].rsplit("KV205", 1)[-1], r.output
    assert (
        "move --gpus 2 before the command: kvlint plan --gpus 2 -- vllm serve Qwen/Qwen2.5-7B-Instruct "
        "--max-model-len 8192" in r.output
    ), r.output
    assert r.exit_code == 1  # vLLM refuses --gpus as typed


def test_option_with_equals_and_flag_forms() -> None:
    r = _plan("text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B", "--engine-version=1.4.3")
    assert "move --engine-version=1.4.3 before the command" in r.output, r.output
    r = _plan("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--offline")
    assert "move --offline before the command" in r.output, r.output


def test_an_engine_typo_is_still_a_typo() -> None:
    r = _plan("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-lenn", "8192")
    assert "did you mean --max-model-len" in r.output and "option of kvlint plan" not in r.output, r.output
