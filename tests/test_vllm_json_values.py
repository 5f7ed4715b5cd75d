"""What vLLM reads from a JSON option's text is what the plan reads.

* ``""`` and ``"None"``: from 0.9.2 get_kwargs wraps the parser of an ``Optional`` config field in ``optional_type``
  (``if val == "" or val == "None": return None``, ``vllm@0.9.2`` - ``0.34.0:vllm/engine/arg_utils.py``), so the
  option is unset; kvlint kept the text ``"None"`` as the option's value.
* Human-readable numbers: from 0.20.0 ``parse_dataclass`` runs ``_expand_json_human_readable_numbers`` before
  ``validate_json`` (``vllm@0.20.0`` - ``0.34.0:vllm/engine/arg_utils.py``), so ``{"max_cudagraph_capture_size": 1k}``
  is read as 1000 (``human_readable_int``: ``k`` is 10^3, ``G`` is 2^30). KV206 accepted the text but the plan
  read the unexpanded string, which is not JSON: the setting was ignored.
"""

from __future__ import annotations

import json

import pytest

from kvlint.engines.vllm import parse_vllm_argv
from kvlint.memory.vllm import settings_from_config


def _cfg(version: str | None, *words: str):
    cfg = parse_vllm_argv(["m", *words], version=version)
    assert not [f for f in cfg.findings if f.rule == "KV206"], cfg.findings
    return cfg


@pytest.mark.parametrize("version", ["0.20.0", "0.34.0", None])
def test_human_readable_capture_size_is_read_as_vllm_expands_it(version):
    short = settings_from_config(_cfg(version, "--compilation-config", '{"max_cudagraph_capture_size": 1k}'))
    plain = settings_from_config(
        _cfg(version, "--compilation-config", '{"max_cudagraph_capture_size": 1000}')
    )
    assert short.cudagraph_user == plain.cudagraph_user
    assert short.cudagraph_user.max_size == 1000


@pytest.mark.parametrize("version", ["0.20.0", "0.34.0"])
def test_human_readable_number_in_kv_transfer_config_is_read(version):
    def kvt(size: str) -> str:
        return (
            '{"kv_connector": "NixlConnector", "kv_role": "kv_both", '
            '"kv_connector_extra_config": {"cpu_bytes_to_use": ' + size + "}}"
        )

    cfg = _cfg(version, "--kv-transfer-config", kvt("80G"))
    got = cfg.get("kv_transfer_config")
    assert isinstance(got, dict), got
    assert got["kv_connector_extra_config"]["cpu_bytes_to_use"] == 80 * 2**30  # binary G, human_readable_int
    assert got == json.loads(kvt(str(80 * 2**30)))
    s = settings_from_config(cfg)
    assert s.kv_connector is not None and "registers" in s.kv_cache_access


def test_before_the_expansion_the_same_text_is_refused():
    cfg = parse_vllm_argv(
        ["m", "--compilation-config", '{"max_cudagraph_capture_size": 1k}'], version="0.17.0"
    )
    assert [f.rule for f in cfg.findings] == ["KV206"]


@pytest.mark.parametrize(
    ("version", "option", "dest"),
    [
        ("0.9.2", "--kv-transfer-config", "kv_transfer_config"),  # Optional[KVTransferConfig]: dataclass
        ("0.34.0", "--kv-transfer-config", "kv_transfer_config"),
        ("0.34.0", "--kv-events-config", "kv_events_config"),
        (
            "0.11.0",
            "--mm-processor-kwargs",
            "mm_processor_kwargs",
        ),  # Optional[dict]: optional_type(parse_type)
        ("0.34.0", "--pooler-config", "pooler_config"),
    ],
)
@pytest.mark.parametrize("value", ["", "None"])
def test_empty_or_none_leaves_an_optional_json_option_unset(version, option, dest, value):
    cfg = _cfg(version, option, value)
    assert cfg.get(dest) is None


@pytest.mark.parametrize(
    ("version", "option", "engine_says"),
    [
        # type=json.loads (0.8.5's --speculative-config): no optional_type
        ("0.8.5", "--speculative-config", "invalid loads value"),
        # a field that does not admit None gets parse_dataclass / parse_type(json.loads) unwrapped:
        # compilation_config: CompilationConfig = Field(default_factory=CompilationConfig) (vllm@0.34.0 VllmConfig)
        ("0.34.0", "--compilation-config", "1 validation error for CompilationConfig"),
        ("0.11.0", "--compilation-config", "1 validation error for CompilationConfig"),
        # override_generation_config: dict[str, Any] = field(default_factory=dict) (vllm@0.11.0 ModelConfig)
        ("0.11.0", "--override-generation-config", "cannot be converted to"),
        # limit_mm_per_prompt: dict[str, int] (0.9.2): parse_type's nullable_kvs fallback refuses ""
        ("0.9.2", "--limit-mm-per-prompt", "Each item should be in the form KEY=VALUE"),
    ],
)
@pytest.mark.parametrize("value", ["", "None"])
def test_empty_or_none_is_refused_without_optional_type(version, option, engine_says, value):
    if value == "None" and option == "--limit-mm-per-prompt":
        engine_says = "Each item should be in the form KEY=VALUE"  # nullable_kvs("None"): no "="
    cfg = parse_vllm_argv(["m", option, value], version=version)
    found = [f.message for f in cfg.findings if f.rule == "KV206"]
    assert len(found) == 1 and engine_says in found[0], found


def test_the_generated_table_marks_optional_fields_only():
    """Read in the wheels: ``kv_transfer_config: KVTransferConfig | None = None`` (0.9.2 - 0.34.0) is wrapped,
    ``compilation_config`` never is, ``--speculative-config`` from 0.10.1 (get_kwargs) and not as 0.9.2's
    ``type=json.loads``."""
    from kvlint.engines.vllm_flags_data import VERSIONS
    from kvlint.engines.vllm_json_data import OPTIONAL_TYPE

    def opt(option: str, version: str) -> bool:
        return OPTIONAL_TYPE.get(option, (False,) * len(VERSIONS))[VERSIONS.index(version)]

    assert opt("--kv-transfer-config", "0.9.2") and opt("--kv-transfer-config", "0.34.0")
    assert not any(opt("--compilation-config", v) for v in VERSIONS)
    assert not opt("--speculative-config", "0.9.2") and opt("--speculative-config", "0.10.1.1")
