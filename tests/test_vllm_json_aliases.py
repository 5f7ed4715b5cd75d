"""One reader for vLLM's JSON option text. kvlint read ``--speculative-config`` with its own ``json.loads`` before
consulting :data:`kvlint.engines.vllm_json_data.JSON_PARSERS` (``loads`` in 0.8.5 - 0.9.2, ``parse_type`` from 0.10.1),
so the table's entry was dead and the message was not the release's; and a short alias (``-O``, ``-cc``, ``-sc``) was
not looked up in the table at all: ``-O '{"level": 3,}'`` on 0.9.2 - 0.11.x, which vLLM refuses, was silent."""

from __future__ import annotations

import pytest

from kvlint.engines.vllm import parse_vllm_argv


def _findings(version: str | None, *words: str) -> list[tuple[str, str]]:
    cfg = parse_vllm_argv(["m", *words], version=version)
    return [(f.rule, f.message) for f in cfg.findings]


# -- one reader for --speculative-config, and the short aliases of JSON options ----------------------------------
# kvlint read --speculative-config with its own json.loads before consulting vllm_json_data's table (which lists it
# as ``loads`` in 0.8.5 - 0.9.2 and ``parse_type`` from 0.10.1); the table now owns the text, the shape check
# (a JSON object or null) stays. Short aliases are the same argparse action as their long option
# (``add_argument("--compilation-config", "-O", ...)`` in vllm@0.9.2 - 0.11.0:vllm/engine/arg_utils.py, ``"-cc"``
# from 0.12.0, ``"--speculative-config", "-sc"`` from 0.20.0): their text is read by the long option's parser.


@pytest.mark.parametrize(
    ("version", "words", "engine_says"),
    [
        ("0.9.2", ["--speculative-config", "{bad"], "argument --speculative-config: invalid loads value"),
        (
            "0.9.2",
            ["--speculative-config", ""],
            "invalid loads value: ''",
        ),  # json.loads refuses "": no optional
        (
            "0.34.0",
            ["--speculative-config", "{bad"],
            "argument --speculative-config/-sc: Value {bad cannot be",
        ),
        ("0.34.0", ["-sc", "{bad"], "argument --speculative-config/-sc: Value {bad cannot be"),
        ("0.9.2", ["-O", '{"level": 3,}'], "argument --compilation-config/-O: 1 validation error"),
        ("0.11.0", ["-O", "{'level': 3}"], "argument --compilation-config/-O: 1 validation error"),
        ("0.12.0", ["-cc", '{"level": 3,}'], "argument --compilation-config/-cc: 1 validation error"),
    ],
)
def test_json_text_is_read_by_the_release_parser_under_any_option_string(version, words, engine_says):
    got = _findings(version, *words)
    assert [r for r, _ in got] == ["KV206"], got
    assert engine_says in got[0][1] and "stops before start-up" in got[0][1]


@pytest.mark.parametrize(
    ("version", "words", "kind"),
    [
        ("0.34.0", ["--speculative-config", "[4]"], "list"),
        ("0.9.2", ["-O", "3"], None),
        ("0.34.0", ["-sc", "4"], "number"),
    ],
)
def test_speculative_config_shape_is_still_checked(version, words, kind):
    got = _findings(version, *words)
    if kind is None:  # -O 3 is a compilation level, read by CompilationConfig: not speculative
        assert not got, got
        return
    assert [r for r, _ in got] == ["KV206"] and f"a JSON {kind} fails" in got[0][1], got


@pytest.mark.parametrize("version", ["0.10.1.1", "0.34.0", None])
@pytest.mark.parametrize("value", ["", "None", "null"])
def test_unset_speculative_config_is_unset(version, value):
    cfg = parse_vllm_argv(["m", "--speculative-config", value], version=version)
    assert not cfg.findings and cfg.get("speculative_config") is None


def test_argparse_name_from_the_alias_table_is_the_scan_of_every_option():
    """perfB49: the action's name in an argparse error (``--compilation-config/-O``) comes from the short options
    of each dest, gathered once from the generated table; it was the whole table scanned for each candidate
    release of each JSON option's value. Same name for every option in every sampled release."""
    from kvlint.engines import vllm
    from kvlint.engines import vllm_flags_data as data

    def scanned(long: str, i: int) -> str:
        dest = data.OPTIONS[long][0]
        aliases = [
            o for o, (d, _, m) in data.OPTIONS.items() if d == dest and not o.startswith("--") and m >> i & 1
        ]
        return "/".join([long, *aliases])

    named = 0
    for long in data.OPTIONS:
        for i in range(len(data.VERSIONS)):
            got = vllm._argparse_name(long, i)
            assert got == scanned(long, i), (long, data.VERSIONS[i])
            named += "/" in got
    assert named > 0  # some options do have short aliases in some releases
