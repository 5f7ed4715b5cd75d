"""A script that upgrades vLLM from vLLM's main-branch wheel index (``https://wheels.vllm.ai/nightly``, or
``https://wheels.vllm.ai/<commit>``) runs a development build, not the newest release nor the image's
(kvlint.engines.command._vllm_main_index; vllm-project/vllm docs/getting_started/installation/gpu.cuda.inc.md,
"Install the latest code"): uv takes the first index that has vllm, pip the highest version and a development one
only with --pre. pip's --force-reinstall ignores the installed release as -U does (pip's resolver,
Factory._iter_found_candidates)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

NIGHTLY = "https://wheels.vllm.ai/nightly"
COMMIT = "72d9c316d3f6ede485146fe5aabd4e61dbc59069"


def _run(tmp_path: Path, install: str) -> tuple[str | None, list[str]]:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.11.0\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        f"      {install}\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (cr,) = r.containers
    return cr.serving.version, [d.message for d in r.diagnostics if d.rule == "KV208"]


@pytest.mark.parametrize(
    "install",
    [
        f"uv pip install -U vllm --torch-backend=auto --extra-index-url {NIGHTLY}",
        f"uv pip install --system -U vllm --extra-index-url {NIGHTLY}/cu130",
        f"pip install -U vllm --pre --extra-index-url {NIGHTLY}",
        f"pip install --pre --force-reinstall vllm --extra-index-url={NIGHTLY}",
        f"pip install -U vllm --index-url {NIGHTLY}",
    ],
)
def test_an_upgrade_from_the_nightly_index_is_the_nightly_build(tmp_path: Path, install: str) -> None:
    version, kv208 = _run(tmp_path, install)
    assert version is None, install
    (msg,) = kv208
    assert (
        "installs the nightly build of vLLM (its main branch's last commit) from https://wheels.vllm.ai/"
        in msg
    )
    assert "a development version, no release" in msg and "newest vLLM release" not in msg, msg


def test_a_commit_index_names_the_commit(tmp_path: Path) -> None:
    version, (msg,) = _run(
        tmp_path, f"uv pip install -U vllm --extra-index-url https://wheels.vllm.ai/{COMMIT}"
    )
    assert version is None
    assert f"the build of vLLM's commit {COMMIT[:12]}" in msg, msg


@pytest.mark.parametrize(
    ("install", "version", "said"),
    [
        # pip without --pre leaves the development versions out: PyPI's newest release, as the upgrade text says
        (f"pip install -U vllm --extra-index-url {NIGHTLY}", None, "upgrades vLLM without pinning a release"),
        # pip's --force-reinstall pretends nothing is installed: the newest release (no --pre), not the image's
        ("pip install --force-reinstall vllm", None, "upgrades vLLM without pinning a release"),
        # no upgrade: pip and uv leave the image's vLLM ("Requirement already satisfied")
        (f"uv pip install vllm --extra-index-url {NIGHTLY}", "0.11.0", None),
        (f"pip install --pre vllm --extra-index-url {NIGHTLY}", "0.11.0", None),
        # a pin wins over the index
        (f"uv pip install -U vllm==0.11.1 --extra-index-url {NIGHTLY}", "0.11.1", None),
    ],
)
def test_other_installs_keep_their_reading(
    tmp_path: Path, install: str, version: str | None, said: str | None
) -> None:
    got, kv208 = _run(tmp_path, install)
    assert got == version, install
    if said is None:
        assert not kv208, kv208
    else:
        (msg,) = kv208
        assert said in msg and "nightly" not in msg.split("(")[0], msg
