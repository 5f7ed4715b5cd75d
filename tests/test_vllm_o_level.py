"""``-O`` as vLLM reads it in each release. Up to 0.11.x it is ``--compilation-config``'s alias
(``add_argument("--compilation-config", "-O", ...)``, vllm@0.9.2:vllm/engine/arg_utils.py), and
``FlexibleArgumentParser.parse_args`` leaves ``-O.KEY=VALUE`` (``arg[2] != '.'``) to its dotted-key reader: a key of
the compilation config, which kvlint read as the JSON text ".backend=eager" (a false KV206). From 0.12.0 ``-O`` is no
argparse option: parse_args turns ``-O3``/``-O=3`` and ``-O`` followed by the word 0-3 into
``--optimization-level`` (vllm@0.12.0, 0.20.0:vllm/utils/argparse_utils.py) and passes any other ``-O`` on, which
argparse refuses ("unrecognized arguments"); kvlint read ``-O '{"mode": 3}'`` there as an optimisation level and
said nothing."""

from __future__ import annotations

import pytest

from kvlint.engines.vllm import parse_vllm_argv


@pytest.mark.parametrize("version", ["0.9.2", "0.11.0"])
@pytest.mark.parametrize(
    ("word", "key", "value"), [("-O.backend=eager", "backend", "eager"), ("-O.mode=3", "mode", 3)]
)
def test_dotted_o_is_a_compilation_config_key(version, word, key, value):
    cfg = parse_vllm_argv(["m", word], version=version)
    assert not cfg.findings, [f.message for f in cfg.findings]
    assert cfg.get("compilation_config") == {key: value}


@pytest.mark.parametrize("version", ["0.12.0", "0.20.0"])
@pytest.mark.parametrize(
    ("words", "fix"), [(["-O", '{"mode": 3}'], "-cc '{\"mode\": 3}'"), (["-O", "5"], "0-3")]
)
def test_o_with_a_separate_word_other_than_a_level_is_unrecognised(version, words, fix):
    cfg = parse_vllm_argv(["m", *words, "--max-model-len", "4096"], version=version)
    got = [(f.rule, f.severity, f.message, f.fix) for f in cfg.findings]
    assert [(r, s) for r, s, _, _ in got] == [("KV205", "error")], got
    assert f'"unrecognized arguments: {" ".join(words)}"' in got[0][2] and fix in (got[0][3] or ""), got
    assert cfg.get("optimization_level") is None and cfg.get("max_model_len") == 4096


@pytest.mark.parametrize("version", ["0.12.0", "0.20.0"])
@pytest.mark.parametrize("words", [["-O", "3"], ["-O3"], ["-O=2"], ["--optimization-level", "1"]])
def test_o_levels_still_read(version, words):
    cfg = parse_vllm_argv(["m", *words], version=version)
    assert not cfg.findings and cfg.get("optimization_level") in ("1", "2", "3", 1, 2, 3)


def test_compilation_config_json_under_o_still_read_up_to_0_11():
    cfg = parse_vllm_argv(["m", "-O", '{"level": 3}'], version="0.11.0")
    assert not cfg.findings and cfg.get("compilation_config") == {"level": 3}


def test_unknown_release_keeps_the_span_warning_only():
    cfg = parse_vllm_argv(["m", "-O", '{"level": 3}'], version=None)
    assert [(f.rule, f.severity) for f in cfg.findings] == [("KV205", "warning")]


# An attached value, -OVALUE / -O=VALUE, is rewritten as -O.level=VALUE from 0.9.2 to 0.11.x
# (vllm@0.9.2, 0.11.0:vllm/utils/__init__.py::FlexibleArgumentParser.parse_args, ``arg[2] != '.'``): the value is the
# compilation level, which CompilationConfig types ``int`` (0.9.2) / ``Optional[int]`` (0.11.0). kvlint read
# -O'{"level": 3}' as the whole config (silent), and -Odecode as invalid JSON.


@pytest.mark.parametrize("version", ["0.9.2", "0.11.0"])
@pytest.mark.parametrize("word", ['-O{"level": 3}', '-O={"level":3}', "-Odecode"])
def test_attached_o_value_is_the_level(version, word):
    cfg = parse_vllm_argv(["m", word], version=version)
    got = [(f.rule, f.message) for f in cfg.findings]
    assert [r for r, _ in got] == ["KV206"], got
    assert "-O.level=" in got[0][1] and "not an integer" in got[0][1], got


@pytest.mark.parametrize("version", ["0.9.2", "0.11.0"])
@pytest.mark.parametrize(
    ("words", "want"),
    [(["-O3"], {"level": 3}), (["-O=2", "-O.backend=eager"], {"level": 2, "backend": "eager"})],
)
def test_attached_o_level_read(version, words, want):
    cfg = parse_vllm_argv(["m", *words], version=version)
    assert not cfg.findings and cfg.get("compilation_config") == want


def test_attached_o_json_is_the_config_on_0_8_5():
    """0.8.5's rewrite never matched (``len(arg) == 2``): argparse reads ``-O{...}`` as the config itself."""
    cfg = parse_vllm_argv(["m", '-O{"level": 3}'], version="0.8.5")
    assert not cfg.findings and cfg.get("compilation_config") == {"level": 3}
