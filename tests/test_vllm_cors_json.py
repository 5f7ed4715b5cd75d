"""vLLM's CORS options ``--allowed-origins``, ``--allowed-methods`` and ``--allowed-headers`` take one argument read
with ``type=json.loads`` in every sampled release (``vllm@0.4.3`` - ``0.9.2:vllm/entrypoints/openai/cli_args.py::
make_arg_parser``; from 0.10.1 ``FrontendArgs.add_cli_args`` sets ``type = json.loads`` and deletes the ``nargs``
get_kwargs gave the ``list[str]`` field; ``vllm@0.34.0:vllm/entrypoints/common/cli_args.py``). kvlint read them as
``nargs="+"`` lists and never checked the text: ``--allowed-origins https://chat.example.com`` stops vLLM with
"argument --allowed-origins: invalid loads value" and was silent here. Now KV206, like the other JSON options."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.engines import vllm_flags_data as data
from kvlint.engines.vllm import known_options, parse_vllm_argv
from kvlint.engines.vllm_json_data import JSON_PARSERS

CORS = ("--allowed-origins", "--allowed-methods", "--allowed-headers")


def _findings(version: str | None, *words: str) -> list[tuple[str, str]]:
    cfg = parse_vllm_argv(["m", *words], version=version)
    return [(f.rule, f.message) for f in cfg.findings]


@pytest.mark.parametrize("version", ["0.4.3", "0.9.2", "0.10.1.1", "0.34.0", None])
@pytest.mark.parametrize("option", CORS)
def test_bare_word_is_refused_by_json_loads(version, option):
    got = _findings(version, option, "https://chat.example.com")
    assert [r for r, _ in got] == ["KV206"], got
    assert f"argument {option}: invalid loads value" in got[0][1]


@pytest.mark.parametrize("version", ["0.4.3", "0.10.1.1", "0.34.0"])
def test_a_json_list_is_read(version):
    cfg = parse_vllm_argv(["m", "--allowed-origins", '["https://chat.example.com"]'], version=version)
    assert not cfg.findings
    assert cfg.get("allowed_origins") is not None


def test_a_second_word_is_a_stray_positional_not_a_list_item():
    """One argument (no ``nargs``): argparse leaves ``POST`` as a positional, and ``vllm serve`` with its model
    already given stops with "unrecognized arguments"."""
    got = _findings("0.34.0", "--allowed-methods", '["GET"]', "POST")
    assert [r for r, _ in got] == ["KV205"], got
    assert "POST" in got[0][1]


def test_the_option_table_reads_them_as_one_value():
    for option in CORS:
        assert known_options("0.34.0")[option][1] == "value"
        assert all(
            kind == "loads" for i, kind in enumerate(JSON_PARSERS[option]) if data.OPTIONS[option][2] >> i & 1
        )


def test_manifest_reports_at_the_value_with_a_json_list_remedy(tmp_path):
    args = ["--model", "Qwen/Qwen2.5-7B-Instruct", "--allowed-origins", "https://chat.example.com"]
    c = {
        "name": "c",
        "image": "vllm/vllm-openai:v0.9.2",
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
    assert len(diags) == 1, r.output
    assert "chat.example.com" in p.read_text().splitlines()[diags[0]["line"] - 1]
    # the remedy is itself a value json.loads reads, as the list vLLM's CORS middleware takes
    fix = diags[0]["fix"]
    suggested = fix[fix.index("('") + 2 : fix.rindex("')")]
    assert json.loads(suggested) == ["https://chat.example.com"]
