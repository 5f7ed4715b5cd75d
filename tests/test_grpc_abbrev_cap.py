"""An abbreviation of the gRPC server's own ``--disable-log-stats-server`` (vLLM 0.14 - 0.17, argparse's unique-prefix
matching) is a KV205 warning; repeated, each was its own finding outside the command line's KV205 bound
(:data:`kvlint.engines.options.MAX_UNKNOWN_OPTIONS` one by one, then one finding counting the rest): 40,000 repeats
were 40,000 findings. Now they count toward the bound like the other option words the engine's parser lacks."""

from __future__ import annotations

import json

from kvlint.engines.options import MAX_UNKNOWN_OPTIONS
from kvlint.pipeline import Options, run_check


def _kv205(tmp_path, words: list[str]) -> list:
    args = ["-m", "vllm.entrypoints.grpc_server", "--model", "Qwen/Qwen2.5-7B-Instruct", *words]
    c = {"name": "c", "image": "vllm/vllm-openai:v0.14.0", "command": ["python3"], "args": args}
    c["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c]}}
    f = tmp_path / "pod.json"
    f.write_text(json.dumps(pod))
    return [
        d
        for d in run_check([str(f)], Options(allow_hub=False, accelerator="h100")).diagnostics
        if d.rule == "KV205"
    ]


def test_repeated_abbreviations_are_bounded(tmp_path):
    n = 4 * MAX_UNKNOWN_OPTIONS
    found = _kv205(tmp_path, ["--disable-log-stats-ser"] * n)
    assert len(found) == MAX_UNKNOWN_OPTIONS + 1, len(found)
    assert f"{n - MAX_UNKNOWN_OPTIONS:,} more" in found[-1].message


def test_one_abbreviation_is_still_said_as_such(tmp_path):
    (found,) = _kv205(tmp_path, ["--disable-log-stats-ser"])
    assert "abbreviation of --disable-log-stats-server" in found.message and found.severity == "warning"


def test_the_bound_counts_abbreviations_and_unknown_options_together(tmp_path):
    found = _kv205(tmp_path, ["--disable-log-stats-ser", "--api-key", "x"] * MAX_UNKNOWN_OPTIONS)
    assert len(found) == MAX_UNKNOWN_OPTIONS + 1
