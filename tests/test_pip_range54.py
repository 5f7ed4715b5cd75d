"""A vLLM version range a container's script installs (``pip install "vllm>=0.9.0,<0.10"``) is read with
``packaging.specifiers.SpecifierSet``: pip installs the newest release its index holds in the range, planned here
as the newest release kvlint models in it (kvlint.engines.command._ranged), and KV208 says so as an assumption.
The install lines are real shapes found in public repositories' setup scripts and Makefiles (the library's
``find_string``): ``pip install "vllm>=0.9.0,<0.10"`` (a setup script pinning vLLM to 0.9.x),
``pip install -U "vllm>=0.9.0,<0.11.0" --no-deps`` (a Makefile), ``uv pip install vllm~=0.9.2
--extra-index-url https://download.pytorch.org/whl/cu128`` (an install guide), here run in a container's script."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.requirements import MAX_SPECIFIER_CHARS, newest_admitted, range_admits, read_requirement
from kvlint.engines.vllm_flags_data import VERSIONS
from kvlint.memory.versions import NEWEST_VLLM
from kvlint.options import Options
from kvlint.pipeline import run_check


def _run(tmp_path: Path, install: str, image: str = "python:3.12") -> tuple[str | None, list[str]]:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        f"    image: {image}\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        f"      {install}\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    return cr.serving.version, [d.message for d in r.diagnostics if d.rule == "KV208"]


def _newest_in(lo: str, hi: str) -> str:
    """The newest modelled release in [lo, hi), computed from the modelled releases (not written down here)."""
    from packaging.version import Version

    return max((v for v in VERSIONS if Version(lo) <= Version(v) < Version(hi)), key=Version)


@pytest.mark.parametrize(
    ("install", "lo", "hi"),
    [
        ('pip install "vllm>=0.9.0,<0.10"', "0.9.0", "0.10"),
        ('pip install -U "vllm>=0.9.0,<0.11.0" --no-deps', "0.9.0", "0.11.0"),
        (
            "uv pip install --system vllm~=0.9.2 --extra-index-url https://download.pytorch.org/whl/cu128",
            "0.9.2",
            "0.10",
        ),
        ("pip install 'vllm<0.10'", "0.0", "0.10"),
        ("uv pip install --system 'vllm>=0.8.5,<0.9'", "0.8.5", "0.9"),
    ],
)
def test_a_range_is_planned_on_the_newest_modelled_release_it_admits(
    tmp_path: Path, install: str, lo: str, hi: str
) -> None:
    version, (msg,) = _run(tmp_path, install)
    expected = _newest_in(lo, hi)
    assert version == expected, (install, version)
    assert version != NEWEST_VLLM
    assert "within the range" in msg and f"later than {expected}" in msg, msg


def test_a_range_the_image_release_satisfies_keeps_it_without_upgrade(tmp_path: Path) -> None:
    # pip: "Requirement already satisfied" -- the image's vLLM 0.9.1 is in the range and stays
    version, msgs = _run(tmp_path, 'pip install "vllm>=0.9.0,<0.10"', image="vllm/vllm-openai:v0.9.1")
    assert version == "0.9.1" and msgs == []
    # -U upgrades within the range; an image release outside it is replaced
    version, _ = _run(tmp_path, 'pip install -U "vllm>=0.9.0,<0.10"', image="vllm/vllm-openai:v0.9.1")
    assert version == _newest_in("0.9.0", "0.10")
    version, _ = _run(tmp_path, 'pip install "vllm>=0.9.0,<0.10"', image="vllm/vllm-openai:v0.8.5")
    assert version == _newest_in("0.9.0", "0.10")


def test_a_range_open_above_the_newest_modelled_release_stays_unknown(tmp_path: Path) -> None:
    # pip install "vllm>=0.11.0" may install a release newer than kvlint models: today's behaviour
    assert newest_admitted(">=0.11.0", VERSIONS) is None
    version, _ = _run(tmp_path, 'pip install "vllm>=0.11.0"')
    assert version is None


@pytest.mark.parametrize(
    "spec",
    ["<0.10," * 1000 + ">=0.9", ">=0.9,<<0.10", "~=0", "<" + "9" * 5000, ">=0.9,<0.10,==(0.9)"],
)
def test_a_huge_or_malformed_range_is_refused_without_a_traceback(tmp_path: Path, spec: str) -> None:
    assert newest_admitted(spec, VERSIONS) is None
    assert not range_admits(spec, "0.9.1")
    pin = read_requirement("vllm" + spec)
    assert pin is None or len(pin.spec) <= MAX_SPECIFIER_CHARS
    _run(tmp_path, f"pip install 'vllm{spec[:3000]}'")


def test_an_engine_version_outside_the_range_is_replaced_and_the_assumption_said(tmp_path: Path) -> None:
    # --engine-version names the release the image carries; pip replaces it with one the range admits
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        "    image: python:3.12\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        "      pip install 'vllm>=0.9.0,<0.10'\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False, engine_version=NEWEST_VLLM))
    (cr,) = r.containers
    assert cr.serving.version == _newest_in("0.9.0", "0.10")
    (msg,) = [d.message for d in r.diagnostics if d.rule == "KV208"]
    assert "within the range" in msg, msg
