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


@pytest.mark.parametrize("argv", [["-g", "30"], ["-g30"], ["-g=30"]])
def test_tgi_graceful_termination_timeout_short_option(argv: list[str]) -> None:
    """TGI 3.2.2 added ``graceful_termination_timeout`` declared ``#[clap(default_value = "90", long, short, env)]``
    (launcher/src/main.rs at v3.2.2 .. v3.3.7): clap's ``-g``. (3.3.0's ``prometheus_port`` is ``short`` too, also
    ``-p``; clap's parser takes the first argument declared with a short, ``port``, so ``-p`` stays the port.)"""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv])
    assert [f.rule for f in cfg.findings] == [], [f.message for f in cfg.findings]
    assert cfg.get("graceful_termination_timeout") == 30


@pytest.mark.parametrize("argv", [["--max_total_tokens", "4096"], ["--max_total_tokens=4096"]])
def test_tgi_underscore_long_option_is_refused_as_clap_refuses_it(argv: list[str]) -> None:
    """clap matches a long option by the name it derives (kebab-case: ``--max-total-tokens``) and has no
    underscore spelling (unlike vLLM's argparse, which takes ``--max_model_len``): the launcher stops with
    "unexpected argument '--max_total_tokens' found". kvlint read it as ``--max-total-tokens``."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv])
    kv205 = [f.message for f in cfg.findings if f.rule == "KV205"]
    assert len(kv205) == 1 and "--max_total_tokens" in kv205[0] and "--max-total-tokens" in kv205[0], kv205
    assert cfg.get("max_total_tokens") is None


@pytest.mark.parametrize("argv", [["-g", "30"], ["-g30"], ["-g=30"]])
def test_tgi_short_g_is_refused_before_3_2_2(argv: list[str]) -> None:
    """``-g`` is clap's short of ``graceful_termination_timeout``, which the launcher declares from v3.2.2 on (not in
    v3.2.1's launcher/src/main.rs): TGI 3.0.0 stops at "unexpected argument '-g' found". One KV205, its value not
    a second one."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv], version="3.0.0")
    kv205 = [f.message for f in cfg.findings if f.rule == "KV205"]
    assert len(kv205) == 1 and "3.2.2" in kv205[0] and f"option {argv[0]}" in kv205[0], kv205
    assert [f.rule for f in cfg.findings] == ["KV205"], [f.message for f in cfg.findings]
    assert cfg.get("graceful_termination_timeout") is None


@pytest.mark.parametrize("version", ["3.2.2", "3.3.0", None, "latest"])
def test_tgi_short_g_is_read_from_3_2_2_and_on_an_unknown_release(version: str | None) -> None:
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", "-g", "30"], version=version)
    assert [f.rule for f in cfg.findings] == [], [f.message for f in cfg.findings]
    assert cfg.get("graceful_termination_timeout") == 30


@pytest.mark.parametrize(
    ("argv", "version", "want"),
    [
        (["-ep", "80"], None, {"env": True, "port": 80}),
        (["-ep80"], None, {"env": True, "port": 80}),
        (["-ep=80"], "2.4.1", {"env": True, "port": 80}),
        (["-eg", "30"], "3.3.4", {"env": True, "graceful_termination_timeout": 30}),
    ],
)
def test_tgi_combined_short_options_read_as_clap_reads_a_cluster(
    argv: list[str], version: str | None, want: dict[str, object]
) -> None:
    """clap (4.4, the launcher's) reads ``-ep 80`` letter by letter: ``-e`` (``env``, a flag) then ``-p`` (``port``),
    whose value is the rest of the word or the next one (launcher/src/main.rs at v3.3.7: ``port`` ``long, short,
    env``, ``env`` ``long, short, action``). It was KV205 "unknown TGI option -ep (unexpected positional
    argument)"."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv], version=version)
    assert [f.rule for f in cfg.findings] == [], [f.message for f in cfg.findings]
    assert {k: cfg.get(k) for k in want} == want


@pytest.mark.parametrize(
    ("argv", "version"), [(["-eg", "30"], "3.2.1"), (["-ex"], None), (["-pe"], None), (["-eep", "80"], None)]
)
def test_tgi_a_cluster_clap_refuses_is_still_reported(argv: list[str], version: str | None) -> None:
    """``-g`` is not in 3.2.1, ``-x`` in no release (clap: "unexpected argument"); ``-pe`` gives ``--port`` the value
    ``e`` (clap: "invalid value 'e' for '--port'")."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv], version=version)
    assert {f.rule for f in cfg.findings} & {"KV205", "KV206"}, [f.message for f in cfg.findings]


@pytest.mark.parametrize("argv", [["--$(EXTRA_OPT)"], ["--$(EXTRA_OPT)", "5"], ["--${EXTRA}=5"]])
def test_tgi_an_option_named_by_an_unresolved_variable_is_no_unknown_option(argv: list[str]) -> None:
    """``--$(EXTRA_OPT)`` with EXTRA_OPT from a Secret: Kubernetes leaves the reference, and which option the launcher
    gets kvlint cannot know; it was a KV205 error "unknown TGI option --$(EXTRA_OPT)". An info note says so (as
    vLLM's reader does), and a word after it is not a second finding."""
    from kvlint.engines.tgi import parse_tgi_argv

    cfg = parse_tgi_argv(["--model-id", "m", *argv])
    assert [(f.rule, f.severity) for f in cfg.findings] == [("KV503", "info")], [
        f.message for f in cfg.findings
    ]
    assert "cannot resolve" in cfg.findings[0].message
