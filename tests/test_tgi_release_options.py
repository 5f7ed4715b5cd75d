"""TGI launcher options per release (kvlint.engines.tgi_flags_data, generated from ``struct Args`` of
``launcher/src/main.rs`` at every release tag by tools/flag_tables/extract_tgi.py). Only ``--kv-cache-dtype`` was
gated by release before: ``--max-input-tokens`` on a TGI 1.4.3 image (the launcher has it from 2.0.0; 1.4.x has
``--max-input-length``) was read and planned, though clap stops that launcher with "unexpected argument", and
``MAX_INPUT_TOKENS`` in its env was planned as the input limit, though no field of 1.4.3 reads it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from kvlint.engines import tgi_flags_data as data
from kvlint.engines.tgi import (
    KV_CACHE_DTYPE_FROM,
    TGI_OPTIONS,
    field_releases,
    parse_tgi_argv,
    release_fields,
)
from kvlint.source import Loc


def _kv205(argv: list[str], version: str | None, **kw: object) -> list[str]:
    cfg = parse_tgi_argv(["--model-id", "m", *argv], version=version, **kw)  # type: ignore[arg-type]
    return [f.message for f in cfg.findings if f.rule == "KV205"]


def test_table_agrees_with_the_releases_read_by_hand() -> None:
    """Independent readings of the launcher (engines/tgi.py: ``--kv-cache-dtype`` from 2.4.0; the short ``-g`` of
    ``graceful_termination_timeout`` from 3.2.2) are what the generated table says."""
    first = {f: data.VERSIONS[(m & -m).bit_length() - 1] for f, m in data.FIELD_MASKS.items()}
    assert first["kv_cache_dtype"] == ".".join(map(str, KV_CACHE_DTYPE_FROM))
    assert first["graceful_termination_timeout"] == "3.2.2"
    assert set(TGI_OPTIONS) == set(data.FIELD_MASKS)
    assert data.NO_ENV == {"env"}


@pytest.mark.parametrize(
    ("argv", "version", "since"),
    [
        (["--max-input-tokens", "100"], "1.4.3", "from 2.0.0"),
        (["--payload-limit", "100"], "2.4.0", "from 2.4.1"),
        (["--enable-cuda-graphs"], "2.3.1", "1.4.1 to 1.4.5"),
        (["--max-batch-size", "4"], "1.4.0", "0.2.0 to 0.8.2 and from 1.4.1"),
        (["--prometheus-port=9000"], "3.2.3", "from 3.3.0"),
    ],
)
def test_option_of_another_release_is_kv205(argv: list[str], version: str, since: str) -> None:
    found = _kv205(argv, version)
    assert len(found) == 1, found
    assert (
        f"TGI {version} option {argv[0].split('=')[0]}" in found[0] and f"(TGI accepts it {since}" in found[0]
    )
    cfg = parse_tgi_argv(["--model-id", "m", *argv], version=version)
    dest = argv[0].split("=")[0][2:].replace("-", "_")
    assert cfg.get(dest) is None  # not planned with
    assert field_releases(dest) == since


@pytest.mark.parametrize(
    ("argv", "version"),
    [
        (["--max-input-tokens", "100"], "2.0.0"),
        (["--enable-cuda-graphs"], "1.4.3"),
        (["--max-batch-size", "4"], "3.3.6"),
        (["--payload-limit", "100"], "2.4.1-rocm"),
        (["--kv-cache-dtype", "fp8_e5m2"], "2.4"),  # the 2.4 line: 2.4.0 and 2.4.1 have it
        (["--enable-cuda-graphs"], "4.0.0"),  # a release kvlint has not read
    ],
)
def test_option_of_the_release_is_read(argv: list[str], version: str | None) -> None:
    assert _kv205(argv, version) == []


def test_an_option_no_release_has_is_kv205() -> None:
    """``--log-level``, ``--router-log-level`` and ``--max-input-tokens-per-request`` were in the hand-written table
    but no release's ``Args`` (nor main at db931fcf) declares them."""
    for opt in ("--log-level", "--router-log-level", "--max-input-tokens-per-request"):
        assert len(_kv205([opt, "1"], "3.3.6")) == 1
        assert len(_kv205([opt, "1"], None)) == 1


def test_env_of_another_release_is_ignored_with_a_warning() -> None:
    loc = Loc("d.yaml", 12, 5)
    cfg = parse_tgi_argv(
        ["--model-id", "m"],
        version="1.4.3",
        env={"MAX_INPUT_TOKENS": "100"},
        env_locs={"MAX_INPUT_TOKENS": loc},
    )
    (f,) = [f for f in cfg.findings if f.rule == "KV205"]
    assert f.severity == "warning" and f.loc == loc
    assert "TGI 1.4.3 does not read MAX_INPUT_TOKENS" in f.message and "from 2.0.0" in f.message
    assert cfg.get("max_input_tokens") is None
    cfg = parse_tgi_argv(["--model-id", "m"], version="2.0.0", env={"MAX_INPUT_TOKENS": "100"})
    assert cfg.get("max_input_tokens") == 100 and not cfg.findings


def test_env_has_no_environment_variable() -> None:
    """``env`` is ``#[clap(long, short, action)]``, no ``env``: ``ENV=true`` sets nothing."""
    cfg = parse_tgi_argv(["--model-id", "m"], version="3.3.6", env={"ENV": "true"})
    assert cfg.get("env") is None


def test_forked_launcher_is_not_gated() -> None:
    """Habana's tgi-gaudi versions its own launcher, which kvlint has not read."""
    assert release_fields("2.0.6", "ghcr.io/huggingface/tgi-gaudi:2.0.6") is None
    assert release_fields("2.0.6", "ghcr.io/huggingface/text-generation-inference:2.0.6") is not None


def test_generator_reads_struct_args() -> None:
    path = Path(__file__).resolve().parents[1] / "tools" / "flag_tables" / "extract_tgi.py"
    spec = importlib.util.spec_from_file_location("extract_tgi", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    src = (
        'struct Args {\n    /// doc\n    #[clap(default_value = "3000", long, short, env)]\n    port: u16,\n\n'
        "    #[clap(long, env, value_enum)]\n    quantize: Option<Quantization>,\n"
        "    #[clap(long, short, action)]\n    env: bool,\n}\n"
    )
    fields = mod.args_fields(src)
    assert fields == {
        "port": {"type": "u16", "env": True, "short": True},
        "quantize": {"type": "Option<Quantization>", "env": True, "short": False},
        "env": {"type": "bool", "env": False, "short": True},
    }
    assert [mod.kind(str(d["type"]), False) for d in fields.values()] == ["int", "str", "switch"]


def test_unpinned_release_warns_of_an_option_newer_releases_refuse() -> None:
    """``latest`` (no release read, 3.3.7 assumed): an option or variable only older launchers have is accepted
    but a warning names the releases, as vLLM's options of older releases are (engines/vllm.py)."""
    cfg = parse_tgi_argv(["--model-id", "m", "--enable-cuda-graphs"], version=None)
    (f,) = cfg.findings
    assert f.rule == "KV205" and f.severity == "warning" and "TGI 1.4.1 to 1.4.5" in f.message
    cfg = parse_tgi_argv(["--model-id", "m"], version=None, env={"ENABLE_CUDA_GRAPHS": "true"})
    (f,) = cfg.findings
    assert f.severity == "warning" and "ENABLE_CUDA_GRAPHS is read only by TGI 1.4.1 to 1.4.5" in f.message
    # an option the newest release has, and a forked launcher's image: nothing
    assert not parse_tgi_argv(["--model-id", "m", "--cuda-graphs", "1"], version=None).findings
    assert not parse_tgi_argv(
        ["--model-id", "m", "--enable-cuda-graphs"],
        version="2.0.6",
        image="ghcr.io/huggingface/tgi-gaudi:2.0.6",
    ).findings


def _kv207(argv: list[str], version: str | None, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    cfg = parse_tgi_argv(["--model-id", "m", *argv], version=version, env=env or {})
    return [(f.severity or "", f.message) for f in cfg.findings if f.rule == "KV207"]


@pytest.mark.parametrize(
    ("argv", "env", "version"),
    [
        (["--max-input-tokens", "1024", "--max-input-length", "1024"], {}, "3.0.1"),
        (["--max-input-tokens", "1024", "--max-input-length", "512"], {}, "2.0.0"),
        # clap's env fallback is per field: MAX_INPUT_LENGTH fills max_input_length beside --max-input-tokens
        (["--max-input-tokens", "1024"], {"MAX_INPUT_LENGTH": "1000"}, "3.3.7"),
        ([], {"MAX_INPUT_TOKENS": "1000", "MAX_INPUT_LENGTH": "1000"}, "2.4.1"),
        (["--max-input-tokens", "1024"], {"MAX_INPUT_LENGTH": "1000"}, None),  # unpinned: the newest has both
    ],
)
def test_max_input_tokens_with_its_legacy_name_stops_the_launcher(
    argv: list[str], env: dict[str, str], version: str | None
) -> None:
    """launcher/src/main.rs::main (v2.0.0 - v3.3.7): "Both `max_input_tokens` (A) and `max_input_length` (B) are
    set" (was nothing, or a KV207 warning saying TGI uses the last one)."""
    (got,) = _kv207(argv, version, env)
    assert got[0] == "error" and "Both `max_input_tokens`" in got[1], got


def test_max_input_length_alone_or_before_2_0_is_fine() -> None:
    assert _kv207(["--max-input-length", "1024"], "3.0.1") == []
    assert _kv207(["--max-input-length", "1024"], "1.4.3", {"MAX_INPUT_TOKENS": "1000"}) == []


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (
            ["--max-total-tokens", "2048", "--max-total-tokens", "2048"],
            "'--max-total-tokens <MAX_TOTAL_TOKENS>'",
        ),
        (
            ["--max-total-tokens", "2048", "--max-total-tokens=4096"],
            "'--max-total-tokens <MAX_TOTAL_TOKENS>'",
        ),
        (["--trust-remote-code", "--trust-remote-code"], "'--trust-remote-code'"),
    ],
)
def test_a_repeated_option_stops_the_launcher(argv: list[str], shown: str) -> None:
    """clap 4 (every TGI release) refuses a second occurrence of a non-Vec option: "error: the argument '--X <X>'
    cannot be used multiple times" (was nothing for equal values, else a warning that the last one wins)."""
    (got,) = _kv207(argv, "3.0.1")
    assert got[0] == "error" and f"{shown} cannot be used multiple times" in got[1], got


@pytest.mark.parametrize(
    ("argv", "dest", "value"),
    [
        (["--cuda-graphs", "1,2", "--cuda-graphs", "4"], "cuda_graphs", "1,2,4"),
        (["--cuda-graphs=8", "--cuda-graphs", "16,32", "--cuda-graphs=64"], "cuda_graphs", "8,16,32,64"),
        (
            ["--cors-allow-origin", "https://a", "--cors-allow-origin=https://b"],
            "cors_allow_origin",
            "https://a,https://b",
        ),
    ],
)
def test_a_vec_option_given_again_appends_its_values(argv: list[str], dest: str, value: str) -> None:
    """shell51: clap appends each use of a ``Vec`` field of the launcher's ``Args`` (``cuda_graphs:
    Option<Vec<usize>>`` with ``value_delimiter = ','``, ``cors_allow_origin: Vec<String>``; launcher/src/main.rs at
    v2.0.0 - v3.3.7, the only ``Vec`` fields): no finding, and the value is every one given (was a KV207 warning
    that the last one wins, and the last value)."""
    assert _kv207(argv, "3.0.1") == []
    cfg = parse_tgi_argv(["--model-id", "m", *argv], version="3.0.1")
    assert cfg.flags[dest].value == value
