"""``-O`` and ``--compilation-config`` as each vLLM release reads them, where kvlint read them as another release does.

* 0.12.0 on: ``FlexibleArgumentParser.parse_args`` rewrites any attached ``-OVALUE`` as ``--optimization-level VALUE``
  (vllm@0.19.0 ``vllm/utils/argparse_utils.py``), whose field is an ``OptimizationLevel`` IntEnum that argparse takes
  as text and pydantic checks: ``-Odecode`` stops vLLM, and from 0.13.0 ``-O.mode=3`` too (a compilation-config key
  up to 0.12.x, where ``-O.KEY`` is rewritten to ``-cc.KEY``).
* 0.6.6 - 0.8.5: ``CompilationConfig.from_cli`` reads the value with ``ast.literal_eval`` (vllm@0.6.6.post1, 0.8.5
  ``vllm/config.py``), a Python literal: ``{'level': 3}`` is read, JSON's ``true`` is refused, a number other than
  0 - 3 is no dict; and those releases have no dotted keys (``-O.level=3``).
* A quoted ``"1k"`` for an integer field of the compilation config: pydantic refuses the string.
"""

from __future__ import annotations

import pytest

from kvlint.engines.vllm import parse_vllm_argv


def _kv206(version: str | None, *words: str) -> list[str]:
    cfg = parse_vllm_argv(["m", *words], version=version)
    return [f.message for f in cfg.findings if f.rule == "KV206"]


@pytest.mark.parametrize("version", ["0.12.0", "0.13.0", "0.19.0", "0.34.0"])
@pytest.mark.parametrize("word", ["-O.mode=3", "-O.level=3", "-Odecode", "-O=5"])
def test_attached_o_that_is_no_level_stops_vllm_from_0_12(version: str, word: str) -> None:
    if version == "0.12.0" and word.startswith("-O."):
        return  # 0.12.x still reads -O.KEY as -cc.KEY (test_dotted_o_is_cc_in_0_12)
    (msg,) = _kv206(version, word)
    assert "Input should be 0, 1, 2 or 3" in msg


@pytest.mark.parametrize("version", ["0.12.0", "0.12.1"])
def test_dotted_o_is_cc_in_0_12(version: str) -> None:
    # vllm@0.12.0 vllm/utils/argparse_utils.py: `elif arg.startswith("-O.")`: -O.KEY becomes -cc.KEY with a
    # deprecation warning ("will be removed in v0.13.0"); the attached-level branch skips `arg[2] == "."`
    cfg = parse_vllm_argv(["m", "-O.mode=3", "-O.cudagraph_mode=FULL_DECODE_ONLY"], version=version)
    assert not cfg.findings
    assert cfg.get("compilation_config") == {"mode": 3, "cudagraph_mode": "FULL_DECODE_ONLY"}
    assert cfg.get("optimization_level") is None


@pytest.mark.parametrize(
    "words", [["-O3"], ["-O=2"], ["-O", "1"], ["--optimization-level", "3"], ["--optimization-level", "3.0"]]
)
def test_levels_still_read(words: list[str]) -> None:
    # "3.0": argparse keeps the text, pydantic's lax mode reads it as 3
    cfg = parse_vllm_argv(["m", *words], version="0.19.0")
    assert not cfg.findings and cfg.get("optimization_level") is not None


def test_dotted_o_fix_names_cc() -> None:
    cfg = parse_vllm_argv(["m", "-O.mode=3"], version="0.19.0")
    assert [f.fix for f in cfg.findings] == ["write -cc.mode=3 (--compilation-config.mode=3)"]


@pytest.mark.parametrize("version", ["0.6.6.post1", "0.7.3", "0.8.5"])
def test_compilation_config_is_a_python_literal_up_to_0_8_5(version: str) -> None:
    # a Python dict literal is what vLLM reads (kvlint kept the text, unread)
    cfg = parse_vllm_argv(["m", "-O", "{'level': 3, 'cudagraph_capture_sizes': [1, 2, 4]}"], version=version)
    assert not cfg.findings
    assert cfg.get("compilation_config") == {"level": 3, "cudagraph_capture_sizes": [1, 2, 4]}
    # JSON's true is a name ast.literal_eval refuses; 4 is no dict; decode no literal
    assert "invalid from_cli value" in _kv206(version, "-O", '{"level": 3, "use_cudagraph": true}')[0]
    assert "invalid from_cli value" in _kv206(version, "-O", "4")[0]
    assert "invalid from_cli value" in _kv206(version, "-Odecode")[0]
    # no dotted keys before 0.9.2
    assert "no dotted keys" in _kv206(version, "-O.level=3")[0]
    assert "unrecognized arguments" in _kv206(version, "--compilation-config.level=3")[0]
    # the levels and plain JSON objects are read as before
    assert parse_vllm_argv(["m", "-O3"], version=version).get("compilation_config") == {"level": 3}


def test_json_and_dotted_keys_from_0_9_2_unchanged() -> None:
    assert not _kv206("0.9.2", "-O", '{"level": 3, "use_cudagraph": true}')
    assert parse_vllm_argv(["m", "-O.level=3"], version="0.11.0").get("compilation_config") == {"level": 3}


@pytest.mark.parametrize("version", ["0.8.5", "0.11.0", "0.19.0", "0.20.0"])
@pytest.mark.parametrize(
    "text", ['{"max_cudagraph_capture_size": "1k"}', '{"cudagraph_capture_sizes": [1, 2, "8K"]}']
)
def test_a_quoted_human_readable_number_in_an_integer_field_is_refused(version: str, text: str) -> None:
    (msg,) = _kv206(version, "--compilation-config", text)
    assert "valid integer" in msg


def test_digits_as_strings_and_bare_suffixes_are_read() -> None:
    # pydantic's lax mode reads "512"; 0.20.0 expands a bare 1k outside strings
    assert not _kv206("0.19.0", "--compilation-config", '{"max_cudagraph_capture_size": "512"}')
    cfg = parse_vllm_argv(
        ["m", "--compilation-config", '{"max_cudagraph_capture_size": 1k}'], version="0.20.0"
    )
    assert not cfg.findings and cfg.get("compilation_config") == {"max_cudagraph_capture_size": 1000}
