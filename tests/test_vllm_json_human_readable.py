"""A config-dataclass option (``--kv-transfer-config``, ``--compilation-config`` ...) with a bare human-readable
number (``{"cpu_bytes_to_use": 80G}``, the example of vLLM's own docstring) is not KV206 where vLLM reads it:
``parse_dataclass`` runs ``_expand_json_human_readable_numbers`` before ``TypeAdapter.validate_json`` (vllm@0.20.0 -
0.34.0 ``vllm/engine/arg_utils.py``; not in 0.17.0), which turns each bare ``\\d+(\\.\\d+)?[kKmMgGtT]`` outside JSON
strings into ``human_readable_int`` of it. kvlint called the value invalid JSON (an error) on those releases. A
decimal with a binary suffix (``1.5G``) is refused there with human_readable_int's own message."""

from __future__ import annotations

import pytest

from kvlint.engines.vllm import parse_vllm_argv
from kvlint.engines.vllm_json import refusal

OFFLOAD = '{"kv_connector":"OffloadingConnector","kv_role":"kv_both","kv_connector_extra_config":{"cpu_bytes_to_use": %s}}'


def _kv206(version: str | None, *words: str) -> list[str]:
    cfg = parse_vllm_argv(["m", *words], version=version)
    return [f.message for f in cfg.findings if f.rule == "KV206"]


@pytest.mark.parametrize("version", ["0.20.0", "0.24.0", "0.34.0", "0.22.0", None])
@pytest.mark.parametrize(
    "words",
    [
        ["--kv-transfer-config", OFFLOAD % "80G"],
        ["--kv-transfer-config", OFFLOAD % "25.6k"],
        ["--compilation-config", '{"max_cudagraph_capture_size": 1k}'],
    ],
)
def test_human_readable_number_in_a_dataclass_option_is_read(version: str | None, words: list[str]) -> None:
    assert _kv206(version, *words) == []


def test_before_the_expansion_it_is_invalid_json() -> None:
    (msg,) = _kv206("0.17.0", "--kv-transfer-config", OFFLOAD % "80G")
    assert "1 validation error for KVTransferConfig" in msg, msg


def test_decimal_with_a_binary_suffix_is_refused_in_vllms_words() -> None:
    (msg,) = _kv206("0.34.0", "--kv-transfer-config", OFFLOAD % "1.5G")
    assert "Decimals are not allowed with binary suffixes like G. Did you mean to use 1.5g instead?" in msg, (
        msg
    )


def test_quoted_strings_are_not_expanded() -> None:
    # "80G" inside a JSON string stays text; a bare 80G beside an unclosed brace is still invalid JSON
    assert refusal("dataclass_hr:KVTransferConfig", "--kv-transfer-config", '{"name": "80G"}') is None
    got = refusal("dataclass_hr:KVTransferConfig", "--kv-transfer-config", '{"cpu_bytes_to_use": 80G')
    assert got is not None and "Invalid JSON" in got[0]
