"""uv's ``pip install`` options that make it pass over the installed vLLM (astral-sh/uv
crates/uv-resolver/src/candidate_selector.rs ``CandidateSelector::select``: an installed distribution is skipped
when the package is to be reinstalled, and not preferred when it is to be upgraded; crates/uv-cli/src/lib.rs
``ReinstallArgs``, ``ResolverInstallerArgs``): ``--reinstall`` (alias ``--force-reinstall``), ``--reinstall-package
vllm``, ``--upgrade-package vllm``/``-P vllm`` are upgrades of an unpinned vllm, as ``-U`` is; ``--no-reinstall`` /
``--no-upgrade`` after them undo them, and another package's name leaves vLLM alone
(kvlint.engines.command._pip_install)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check


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
        "uv pip install --system --reinstall vllm",
        "uv pip install --system --force-reinstall vllm",
        "uv pip install --system --reinstall-package vllm vllm",
        "uv pip install --system --reinstall-package=VLLM vllm",
        "uv pip install --system --upgrade-package vllm vllm",
        "uv pip install --system -P vllm vllm",
        "uv pip install --system --upgrade-package 'vllm<1' vllm",
        "uv pip install --system --no-upgrade -U vllm",
    ],
)
def test_uv_options_that_pass_over_the_installed_vllm_are_upgrades(tmp_path: Path, install: str) -> None:
    version, (msg,) = _run(tmp_path, install)
    assert version is None, install
    assert "upgrades vLLM without pinning a release" in msg, msg


@pytest.mark.parametrize(
    "install",
    [
        "uv pip install --system vllm",
        "uv pip install --system --reinstall-package torch vllm",
        "uv pip install --system --upgrade-package torch vllm",
        "uv pip install --system -P torch vllm",
        "uv pip install --system --reinstall --no-reinstall vllm",
        "uv pip install --system -U --no-upgrade vllm",
        # pip has no --reinstall-package nor --upgrade-package: pip refuses the command ("no such option")
        "pip install --upgrade-package vllm vllm",
        # the value of --upgrade-package is no requirement: vllm is not installed by this command
        "uv pip install --system -U --upgrade-package vllm torch",
    ],
)
def test_other_installs_keep_the_images_release(tmp_path: Path, install: str) -> None:
    version, kv208 = _run(tmp_path, install)
    assert version == "0.11.0", install
    assert not kv208, kv208
