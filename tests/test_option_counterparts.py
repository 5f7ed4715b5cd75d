"""KV205 on another engine's option in a TGI or SGLang command line (a vLLM flag carried over, a TGI flag given to
SGLang...): it names the engine's own counterpart (kvlint.engines.options.COUNTERPARTS) instead of "remove X", and
every counterpart it names is an option the engine's parser accepts (parsing a command that uses it gives no
KV205)."""

from __future__ import annotations

import pytest

from kvlint.engines.options import COUNTERPARTS
from kvlint.engines.sglang import parse_sglang_argv
from kvlint.engines.tgi import parse_tgi_argv
from kvlint.source import LDict

PARSE = {
    "TGI": lambda argv: parse_tgi_argv(
        ["--model-id", "m", *argv], version="3.3.6", env={}, container=LDict()
    ),
    "SGLang": lambda argv: parse_sglang_argv(
        ["--model-path", "m", *argv], version="0.5.5", env={}, container=LDict()
    ),
}
CASES = [(engine, option) for engine in PARSE for option in sorted(COUNTERPARTS[engine])]


def _kv205(cfg) -> list:
    return [f for f in cfg.findings if f.rule == "KV205"]


@pytest.mark.parametrize(("engine", "option"), CASES, ids=[f"{e}{o}" for e, o in CASES])
def test_foreign_option_names_the_engines_own(engine: str, option: str) -> None:
    theirs, owner = COUNTERPARTS[engine][option]
    value = [] if option == "--enforce-eager" else ["1"]
    (f,) = _kv205(PARSE[engine]([option, *value]))
    assert f"{owner}'s option; {engine}'s counterpart is {theirs}" in f.message
    assert f.fix.startswith(f"use {theirs}"), f.fix
    # the counterpart is the engine's own option: no KV205 for it
    ours = theirs.split() if " " in theirs else [theirs, *([] if theirs.startswith("--disable") else ["1"])]
    assert not _kv205(PARSE[engine](ours)), theirs


def test_a_typo_still_gets_the_closest_spelling() -> None:
    (f,) = _kv205(PARSE["TGI"](["--max-total-token", "8"]))
    assert "did you mean --max-total-tokens?" in f.message and "counterpart" not in f.message


# vLLM given TGI's or SGLang's options (kvlint.engines.options.COUNTERPARTS["vLLM"]): the reverse direction of the
# tables above. Each foreign option is one its owner's parser accepts, and each counterpart one vLLM's accepts.
def _parse_vllm(argv: list[str], version: str = "0.11.0"):
    from kvlint.engines import parse_command_line

    return parse_command_line(["vllm", "serve", "m", *argv], version)


_FLAGS = {"--disable-cuda-graph", "--enforce-eager"}  # options that take no value
VLLM_CASES = sorted(COUNTERPARTS["vLLM"])


def _with_value(option: str) -> list[str]:
    if option in _FLAGS:
        return [option]
    return [option, "0" if option == "--cuda-graphs" else "1"]


@pytest.mark.parametrize("option", VLLM_CASES)
def test_vllm_given_another_engines_option_names_its_own(option: str) -> None:
    ours, owner = COUNTERPARTS["vLLM"][option]
    (f,) = _kv205(_parse_vllm(_with_value(option)))
    said = (
        f"{owner}'s and SGLang's option; vLLM's counterpart of {owner}'s is {ours}"
        if option == "--max-total-tokens"
        else f"{owner}'s option; vLLM's counterpart is {ours}"
    )
    assert said in f.message and f.severity == "error"
    assert f.fix.startswith(f"use {ours}"), f.fix
    # the owner's parser takes the option (it is that engine's), and vLLM's takes the counterpart
    assert not _kv205(PARSE[owner](_with_value(option))), (owner, option)
    assert not _kv205(_parse_vllm(_with_value(ours))), ours


def test_vllm_counterpart_caution_and_spellings() -> None:
    """SGLang's --mem-fraction-static is not vLLM's budget (the fix says what it leaves out); an underscore spelling
    (vLLM's argparse reads --max_model_len as --max-model-len) finds the counterpart too; a counterpart the release
    lacks falls back to the closest spelling (vLLM 0.4.3 has no --data-parallel-size)."""
    (f,) = _kv205(_parse_vllm(["--mem-fraction-static", "0.85"]))
    assert "weights and the KV pool only" in f.fix
    (f,) = _kv205(_parse_vllm(["--mem_fraction_static", "0.85"]))
    assert "vLLM's counterpart is --gpu-memory-utilization" in f.message
    (f,) = _kv205(_parse_vllm(["--dp-size", "2"], "0.4.3"))
    assert "counterpart" not in f.message
    (f,) = _kv205(_parse_vllm(["--dp-size", "2"], "0.11.0"))
    assert "vLLM's counterpart is --data-parallel-size" in f.message


# The fix carries the value given to another engine's option over to the counterpart when it means the same there.
# Before: "use --tensor-parallel-size" for `--num-shard 4`, and the reader had to find the 4 in the command.
VALUES = [
    ("vLLM", ["--num-shard", "4"], "use --tensor-parallel-size 4"),
    ("vLLM", ["--max-batch-prefill-tokens=8192"], "use --max-num-batched-tokens 8192"),
    ("vLLM", ["--max-total-tokens", "4096"], "use --max-model-len 4096 "),
    ("TGI", ["--tensor-parallel-size", "2"], "use --num-shard 2"),
    ("TGI", ["--max-model-len", "8192"], "use --max-total-tokens 8192"),
    ("SGLang", ["--max-num-seqs", "64"], "use --max-running-requests 64"),
    ("SGLang", ["--num-shard=2"], "use --tp-size 2"),
]


def _kv205_of(engine: str, argv: list[str]) -> list:
    return _kv205(_parse_vllm(argv) if engine == "vLLM" else PARSE[engine](argv))


@pytest.mark.parametrize(("engine", "argv", "fix"), VALUES, ids=[f"{e}{a[0]}" for e, a, _ in VALUES])
def test_fix_names_the_counterpart_with_the_value(engine: str, argv: list[str], fix: str) -> None:
    (f,) = _kv205_of(engine, argv)
    assert f.fix.startswith(fix), f.fix
    # the counterpart with that value is accepted
    ours = fix.removeprefix("use ").split()
    assert not _kv205_of(engine, ours), ours


# a value whose meaning differs (SGLang's fraction is the weights and KV pool's share; vLLM's and TGI's the whole
# budget's), a switch counterpart, a counterpart written with its value, a value that is not a plain word: bare
BARE = [
    ("vLLM", ["--mem-fraction-static", "0.85"], "use --gpu-memory-utilization ("),
    ("SGLang", ["--gpu-memory-utilization", "0.9"], "use --mem-fraction-static ("),
    ("TGI", ["--mem-fraction-static", "0.8"], "use --cuda-memory-fraction"),
    ("vLLM", ["--cuda-graphs", "0"], "use --enforce-eager for TGI's --cuda-graphs 0"),
    ("vLLM", ["--disable-cuda-graph"], "use --enforce-eager"),
    ("TGI", ["--enforce-eager"], "use --cuda-graphs 0"),
    ("vLLM", ["--num-shard", "$(NUM_SHARD) "], "use --tensor-parallel-size"),
]


@pytest.mark.parametrize(("engine", "argv", "fix"), BARE, ids=[f"{e}{a[0]}" for e, a, _ in BARE])
def test_fix_leaves_out_a_value_that_does_not_carry_over(engine: str, argv: list[str], fix: str) -> None:
    (f,) = _kv205_of(engine, argv)
    assert f.fix.startswith(fix), f.fix
    assert argv[-1] not in f.fix.removeprefix(fix) or argv[-1] == "0", f.fix


def test_max_total_tokens_in_a_vllm_command_is_tgis_and_sglangs() -> None:
    """SGLang has --max-total-tokens too (the KV pool's size in tokens, ServerArgs.max_total_tokens): the message
    called it "TGI's option" only."""
    (f,) = _kv205(_parse_vllm(["--max-total-tokens", "4096"]))
    assert "(TGI's and SGLang's option; vLLM's counterpart of TGI's is --max-model-len)" in f.message
    assert not _kv205(PARSE["SGLang"](["--max-total-tokens", "4096"]))
