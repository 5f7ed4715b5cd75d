"""SGLang's ``prepare_server_args`` parses the launcher's arguments with ``parser.parse_args(argv)`` and
``ServerArgs`` declares no positional (sglang ``srt/server_args.py``, 0.3.6 - 0.5.23), so a word argparse has no
place for stops the server: "unrecognized arguments: WORD". kvlint said nothing of it; it is KV205 now, as for vLLM
and TGI (clap: "unexpected argument"), where it is certain: before any option, after a switch, after
``--opt=value``, a number option's value, a capture list or the model path; not after an option whose value count
kvlint does not know (several take ``nargs="*"``/``"+"``: ``--lora-paths``), nor for a variable's word."""

from __future__ import annotations

import pytest

from kvlint.engines.sglang import parse_sglang_argv

MODEL = ["--model-path", "Qwen/Qwen2.5-7B-Instruct"]


def _kv205(argv: list[str], version: str = "0.5.5") -> list[str]:
    return [f.message for f in parse_sglang_argv(argv, version=version).findings if f.rule == "KV205"]


@pytest.mark.parametrize(
    ("argv", "word"),
    [
        ([*MODEL, "serve"], "serve"),
        (["Qwen/Qwen2.5-7B-Instruct", "--tp", "2"], "Qwen/Qwen2.5-7B-Instruct"),
        ([*MODEL, "--tp", "2", "4"], "4"),
        ([*MODEL, "--mem-fraction-static", "0.8", "0.9"], "0.9"),
        (["--model-path=Qwen/Qwen2.5-7B-Instruct", "extra"], "extra"),
        ([*MODEL, "--cuda-graph-bs", "1", "2", "--port", "30000", "x"], "x"),
    ],
)
def test_a_word_the_parser_has_no_place_for_is_kv205(argv: list[str], word: str) -> None:
    (msg,) = _kv205(argv)
    assert msg == f"unknown SGLang 0.5.5 option {word} (unexpected positional argument)", msg


@pytest.mark.parametrize(
    "argv",
    [
        [*MODEL, "--lora-paths", "a=/l/a", "b=/l/b"],  # nargs="*"
        [*MODEL, "--served-model-name", "qwen", "--tp", "2"],
        [*MODEL, "--cuda-graph-bs", "1", "2", "4"],
        [*MODEL, "--unknown-option", "a", "b"],  # an unknown option: its value count is not known (one KV205)
        [*MODEL, "$EXTRA_ARGS"],  # a variable's words: unseen
    ],
)
def test_words_an_option_may_take_are_not_reported(argv: list[str]) -> None:
    assert len(_kv205(argv)) == (1 if "--unknown-option" in argv else 0), _kv205(argv)
