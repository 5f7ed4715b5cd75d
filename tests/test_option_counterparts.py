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
CASES = [(engine, option) for engine, table in sorted(COUNTERPARTS.items()) for option in sorted(table)]


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
