"""vLLM options whose argparse type reads JSON (``--hf-overrides``, ``--compilation-config``, ``--kv-transfer-config``,
``--limit-mm-per-prompt`` ...): text the release's parser cannot read is KV206 at the value, with the engine's
message. kvlint kept such a value as a string and planned the container as if the flag were unset, although
vLLM exits with an argparse error. Parsers per release: :mod:`kvlint.engines.vllm_json` (table generated from the
wheels, ``tools/flag_tables/extract_json.py``)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.engines import vllm_flags_data as data
from kvlint.engines.vllm import parse_vllm_argv
from kvlint.engines.vllm_json_data import JSON_PARSERS


def _kv206(version: str | None, *words: str) -> list[str]:
    cfg = parse_vllm_argv(["m", *words], version=version)
    return [f.message for f in cfg.findings if f.rule == "KV206"]


@pytest.mark.parametrize(
    ("version", "words", "engine_says"),
    [
        # type=json.loads (0.6.6 - 0.8.5): argparse names the function
        ("0.8.5", ["--hf-overrides", '{"rope_scaling": {"type": "yarn"}'], "invalid loads value"),
        ("0.6.3", ["--rope-scaling", "{'type': 'dynamic', 'factor': 2.0}"], "invalid loads value"),
        # union_dict_and_str (0.9.2 on): a {...} value is read with json.loads
        ("0.11.0", ["--hf-overrides", '{"max_position_embeddings": 65536,}'], "cannot be converted to"),
        (
            "0.34.0",
            ["--model-loader-extra-config", '{"enable_multithread_load": True}'],
            "cannot be converted to",
        ),
        # parse_type(json.loads) (0.10.1 on)
        ("0.11.0", ["--override-generation-config={'temperature': 0.6}"], "cannot be converted to"),
        ("0.14.0", ["--mm-processor-kwargs", '{"max_pixels": 1003520'], "cannot be converted to"),
        # the KEY=VALUE form ended with 0.9.2's nullable_kvs fallback
        ("0.11.0", ["--limit-mm-per-prompt", "image=2"], "cannot be converted to"),
        # parse_dataclass: TypeAdapter(Cls).validate_json
        (
            "0.11.0",
            ["--compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4,]}'],
            "for CompilationConfig",
        ),
        (
            "0.34.0",
            ["--kv-transfer-config", '{"kv_connector": "NixlConnector", kv_role: "kv_both"}'],
            "KVTransfer",
        ),
        ("0.20.0", ["--pooler-config", "{pooling_type: MEAN}"], "for PoolerConfig"),
        # KVTransferConfig.from_cli (0.6.6 - 0.8.5)
        ("0.7.3", ["--kv-transfer-config", "{'kv_connector': 'PyNcclConnector'}"], "invalid from_cli value"),
        # nullable_kvs: KEY=VALUE only (0.5.5 - 0.7.3), with a JSON fallback only for {...} (0.8.5, 0.9.2)
        ("0.6.3", ["--limit-mm-per-prompt", '{"image": 2}'], "Each item should be in the form KEY=VALUE"),
        ("0.9.2", ["--limit-mm-per-prompt", "image=two"], "Failed to parse value of item image=two"),
        # between two sampled releases: both refuse
        ("0.12.1", ["--hf-overrides", '{"a": 1,}'], "cannot be converted to"),
    ],
)
def test_unreadable_json_is_kv206(version, words, engine_says):
    got = _kv206(version, *words)
    assert len(got) == 1, got
    assert engine_says in got[0] and "stops before start-up" in got[0]


@pytest.mark.parametrize(
    ("version", "words"),
    [
        ("0.11.0", ["--hf-overrides", '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}']),
        ("0.11.0", ["--hf-overrides.rope_scaling.factor", "4.0"]),  # FlexibleArgumentParser writes the JSON
        ("0.11.0", ["--hf-overrides", "not-braced"]),  # union_dict_and_str keeps it a string
        ("0.9.2", ["--hf-overrides", '{"a": 1']),  # 0.9.2's regex ^{.*}$ does not match: kept as a string
        # optional_type: unset (an Optional field; override_generation_config is a plain dict, which refuses it)
        ("0.11.0", ["--mm-processor-kwargs", "None"]),
        ("0.9.2", ["--limit-mm-per-prompt", "image=2,video=1"]),  # nullable_kvs fallback
        ("0.6.3", ["--limit-mm-per-prompt", "image=2"]),
        (
            "0.6.6.post1",
            ["--compilation-config", "{'level': 3}"],
        ),  # from_cli reads ast.literal_eval, not JSON
        ("0.8.5", ["-O3"]),
        ("0.11.0", ["--compilation-config", "3"]),  # valid JSON (a number): left to the checks of the value
        ("0.11.0", ["--max-model-len", "{not json}"]),  # not a JSON option (its own KV206 is the int's)
    ],
)
def test_readable_values_are_not_reported(version, words):
    got = [m for m in _kv206(version, *words) if "stops before start-up" in m]
    assert got == []


def test_unknown_release_reports_only_what_every_release_refuses():
    """With no release known, a value is reported only when every sampled release with the option refuses it:
    ``{"a": 1`` is a string to 0.9.2's union_dict_and_str, ``{"a": 1,}`` is refused by all."""
    assert [m for m in _kv206(None, "--hf-overrides", '{"a": 1') if "stops" in m] == []
    got = _kv206(None, "--hf-overrides", '{"a": 1,}')
    assert len(got) == 1 and "every sampled vLLM release" in got[0]


def test_reported_value_is_not_planned_as_set():
    cfg = parse_vllm_argv(["m", "--hf-overrides", '{"max_position_embeddings": 1024,}'], version="0.11.0")
    assert cfg.get("hf_overrides") is None


def test_table_matches_the_option_table():
    """Every release that reads an option as JSON has that option in :mod:`kvlint.engines.vllm_flags_data`."""
    for option, kinds in JSON_PARSERS.items():
        assert len(kinds) == len(data.VERSIONS), option
        mask = data.OPTIONS[option][2]
        for i, kind in enumerate(kinds):
            if kind is not None:
                assert mask >> i & 1, (option, data.VERSIONS[i])


def test_manifest_reports_at_the_value(tmp_path):
    args = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--hf-overrides", '{"rope_scaling": {"rope_type": "yarn"}']
    c = {
        "name": "c",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": args,
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c]}}
    p = tmp_path / "pod.yaml"
    p.write_text(json.dumps(pod, indent=1))
    r = CliRunner().invoke(
        main, ["check", "--offline", "--no-config", "--accelerator", "h100", "--format", "json", str(p)]
    )
    diags = [d for d in json.loads(r.output)["diagnostics"] if d["rule"] == "KV206"]
    assert len(diags) == 1
    line = p.read_text().splitlines()[diags[0]["line"] - 1]
    assert "rope_scaling" in line
