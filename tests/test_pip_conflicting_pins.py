"""``pip install vllm==0.8.5 vllm==0.9.0`` installs nothing: pip's resolver refuses two different pinned releases of
one project, "ERROR: Cannot install vllm==0.8.5 and vllm==0.9.0 because these package versions have conflicting
dependencies" (ResolutionImpossible, exit 1; the same wording checked with pip 26.3 on two pins of ``six``).
kvlint took the last pin (0.9.0) as the release the container runs; the image's release stays."""

from __future__ import annotations

import pytest

from kvlint.engines.command import _pip_install, _pip_pinned, parse_container
from kvlint.source import LDict


@pytest.mark.parametrize(
    "words",
    [
        ["pip", "install", "vllm==0.8.5", "vllm==0.9.0"],
        [
            "uv",
            "pip",
            "install",
            "vllm[audio]==0.8.5",
            "vllm==0.8.5.post1",
        ],  # ==0.8.5 excludes the post release
    ],
)
def test_conflicting_pins_install_nothing(words):
    assert _pip_pinned(words, "vllm") is None
    assert _pip_install(words, "vllm") is None


@pytest.mark.parametrize(
    ("words", "release"),
    [
        (["pip", "install", "vllm==0.9.0", "vllm==0.9"], "0.9"),  # one version, written twice
        (["pip", "install", "vllm==0.9.0", "vllm==0.9.0"], "0.9.0"),
    ],
)
def test_the_same_release_twice_is_one(words, release):
    assert _pip_pinned(words, "vllm") == release


def test_a_pin_beside_an_unpinned_requirement_is_installed():
    """``vllm==0.8.5 vllm``: the pin satisfies both requirements; pip installs 0.8.5."""
    assert _pip_install(["pip", "install", "-U", "vllm==0.8.5", "vllm"], "vllm") == "0.8.5"


def test_the_image_release_runs_after_a_refused_install():
    """``pip install ... ; vllm serve``: the image's vLLM (0.7.3) starts, not 0.9.0."""
    container = LDict(
        {
            "name": "vllm",
            "image": "vllm/vllm-openai:v0.7.3",
            "command": ["sh", "-c"],
            "args": ["pip install vllm==0.8.5 vllm==0.9.0; vllm serve Qwen/Qwen2.5-7B-Instruct"],
        }
    )
    cfg = parse_container(container)
    assert cfg is not None and cfg.version == "0.7.3", cfg.version if cfg else None
