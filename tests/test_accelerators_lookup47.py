"""``kvlint.accelerators.lookup``: a short alias after its vendor's prefix (``--accelerator nvidia-h100``, the
spelling of the GKE/KubeAI names without their part suffix) resolved to nothing, so ``--accelerator nvidia-h100``
was refused while ``h100`` and ``nvidia-h100-80gb`` were taken."""

from __future__ import annotations

import pytest

from kvlint.accelerators import lookup


@pytest.mark.parametrize(
    ("ref", "same_as"),
    [
        ("nvidia-h100", "h100"),
        ("NVIDIA-H100", "h100"),
        ("nvidia-rtx-4090", "rtx-4090"),
        ("amd-mi300x", "mi300x"),
    ],
)
def test_vendor_prefix_before_an_alias(ref: str, same_as: str) -> None:
    want = lookup(same_as)
    assert want is not None
    got = lookup(ref)
    assert got is not None and got.id == want.id


@pytest.mark.parametrize("ref", ["nvidia-mi300x", "amd-h100", "intel-h100", "nvidia-"])
def test_vendor_prefix_must_be_the_parts_vendor(ref: str) -> None:
    assert lookup(ref) is None


def test_cli_accepts_the_prefixed_alias() -> None:
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(
        main,
        [
            "plan",
            "--offline",
            "--accelerator",
            "nvidia-h100",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen2.5-7B-Instruct",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "H100" in r.output
