"""TGI launcher short options (``-p``, ``-e``): Intel's TGI chart (fixtures/collected/trees/intel-ai-containers-tgi,
new-user pass 49) passes ``-p 80``, which kvlint read as two unexpected positional arguments (KV205 errors)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("argv", "port", "env_switch"),
    [
        (["-p", "80", "--cuda-graphs=0"], 80, False),
        (["-p8080"], 8080, False),
        (["-p=8080", "-e"], 8080, True),
        (["--port", "8080"], 8080, False),
    ],
)
def test_tgi_short_options_are_the_launchers(argv: list[str], port: int, env_switch: bool) -> None:
    """Intel's TGI chart passes ``args: ['-p', '80', '--cuda-graphs=0']``: kvlint said two KV205 errors, "unknown TGI
    option -p (unexpected positional argument)" and the same for "80". The launcher's ``port`` is declared ``long,
    short`` (clap's ``-p``), as is ``env`` (``-e``)."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "Qwen/Qwen2.5-0.5B-Instruct", *argv])
    assert [f.rule for f in cfg.findings] == [], [f.message for f in cfg.findings]
    assert cfg.get("port") == port
    assert bool(cfg.get("env")) is env_switch


def test_tgi_other_short_options_stay_unknown() -> None:
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", "-m", "x", "-ex"])
    assert [f.rule for f in cfg.findings].count("KV205") >= 2, [f.message for f in cfg.findings]
