"""Version strings as images, wheels and start-up logs print them (kvlint issue 18): PEP 440 ordering for the
era switches, and ``--engine-version`` accepting four-component, local-label and development versions."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.memory.sglang import sglang_version
from kvlint.memory.tgi import tgi_version
from kvlint.memory.versions import cudagraph_subtracted_by_default, has_kv_cache_memory_bytes, parse_version


@pytest.mark.parametrize(
    "text,printed",
    [
        ("0.10.1.1", "vLLM 0.10.1.1 (V1)"),
        ("0.11.0+cu130", "vLLM 0.11.0+cu130 (V1)"),
        ("0.10.1.1+nv25.11", "vLLM 0.10.1.1+nv25.11 (V1)"),
        ("0.15.2rc1.dev93", "vLLM 0.15.2rc1.dev93 (V1)"),
        ("0.1.dev8168", "vLLM version unknown: assumed the newest"),
    ],
)
def test_engine_version_option_accepts_what_images_print(text, printed):
    r = CliRunner().invoke(
        main,
        ["plan", "--offline", "--accelerator", "h100", "--engine-version", text, "--", "vllm", "serve",
         "meta-llama/Llama-3.1-8B"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert printed in r.output


def test_engine_version_option_refuses_non_versions():
    r = CliRunner().invoke(
        main, ["plan", "--offline", "--engine-version", "fast", "--", "vllm", "serve", "m"]
    )
    assert r.exit_code == 2 and "not a release number" in r.output


def test_switches_follow_pep440():
    # 0.10.1.1 has no --kv-cache-memory-bytes (from 0.10.2); a 0.20.1 dev build is past 0.20.0
    assert not has_kv_cache_memory_bytes(parse_version("0.10.1.1"))
    assert has_kv_cache_memory_bytes(parse_version("0.10.2"))
    assert cudagraph_subtracted_by_default(parse_version("0.20.1rc1.dev16+g7a1eb8ac2"))


def test_tgi_and_sglang_versions_use_the_same_rules():
    assert tgi_version("2.4.1-rocm") == ((2, 4, 1), False)
    assert tgi_version("latest")[1] is True
    v, assumed = sglang_version("v0.5.5.post3-cu129")
    assert not assumed and (0, 5, 5) < v < (0, 5, 6)


def test_sglang_flags_are_checked_per_release():
    """The SGLang option table is per release (wheels 0.3.6 … 0.5.23): an option of a later release is an unknown
    flag for an older image, a retired one for a newer image; a release newer than the table is not judged."""
    from kvlint.engines import parse_command_line
    from kvlint.engines.sglang import sglang_options

    def unknown(opt: str, version: str | None) -> bool:
        s = parse_command_line(
            ["python", "-m", "sglang.launch_server", "--model-path", "m", opt, "1"], version
        )
        return any(f.rule == "KV205" for f in s.findings)

    old, _ = sglang_options("0.4.6")
    new, _ = sglang_options("0.5.23")
    assert (
        "--cuda-graph-max-bs" in old and "--cuda-graph-max-bs" not in new
    )  # replaced by --cuda-graph-max-bs-decode
    assert "--cuda-graph-max-bs-decode" in new and "--cuda-graph-max-bs-decode" not in old
    assert unknown("--cuda-graph-max-bs-decode", "0.4.6") and not unknown(
        "--cuda-graph-max-bs-decode", "0.5.23"
    )
    assert not unknown("--cuda-graph-max-bs", "0.4.6.post1")
    assert not unknown("--mem-fraction-static", "0.5.5") and not unknown("--mem-fraction-static", "0.3.6")
    assert sglang_options("0.6.0")[1] is False  # newer than the newest sampled wheel
