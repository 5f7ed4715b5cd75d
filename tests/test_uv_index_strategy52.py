"""uv takes vLLM's main-branch build from an extra index only under its default ``--index-strategy first-index``
(astral-sh/uv docs/concepts/indexes.md, "Searching across multiple indexes"): ``unsafe-best-match`` (and
``unsafe-first-match``), set by the option or ``UV_INDEX_STRATEGY``, weigh PyPI's releases too, and uv allows the
index's development versions only when pre-releases are allowed (``--prerelease allow``, ``--pre``,
``UV_PRERELEASE=allow``): else PyPI's newest release, which the plain upgrade text says
(kvlint.engines.command._vllm_main_index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

NIGHTLY = "https://wheels.vllm.ai/nightly"


def _kv208(tmp_path: Path, install: str, env: str = "") -> str:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.11.0\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        f"      {install}\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        + (f"    env:\n    - {{name: {env.split('=')[0]}, value: {env.split('=')[1]}}}\n" if env else "")
        + "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (msg,) = [d.message for d in r.diagnostics if d.rule == "KV208"]
    return msg


@pytest.mark.parametrize(
    ("install", "env"),
    [
        (f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy unsafe-best-match", ""),
        (f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy=unsafe-first-match", ""),
        (
            f"export UV_INDEX_STRATEGY=unsafe-best-match; uv pip install -U vllm --extra-index-url {NIGHTLY}",
            "",
        ),
        (f"uv pip install -U vllm --extra-index-url {NIGHTLY}", "UV_INDEX_STRATEGY=unsafe-best-match"),
        # --prerelease disallow does not let the development versions in
        (
            f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy unsafe-best-match "
            "--prerelease disallow",
            "",
        ),
    ],
)
def test_uv_weighing_every_index_takes_the_newest_release(tmp_path: Path, install: str, env: str) -> None:
    msg = _kv208(tmp_path, install, env)
    assert "upgrades vLLM without pinning a release" in msg and "nightly build" not in msg, msg


@pytest.mark.parametrize(
    ("install", "env"),
    [
        (f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy first-index", ""),
        (
            f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy unsafe-best-match "
            "--prerelease allow",
            "",
        ),
        (f"uv pip install -U vllm --extra-index-url {NIGHTLY} --index-strategy unsafe-best-match --pre", ""),
        (
            f"uv pip install -U vllm --extra-index-url {NIGHTLY}",
            "UV_INDEX_STRATEGY=first-index",
        ),
    ],
)
def test_uv_first_index_or_prereleases_take_the_nightly(tmp_path: Path, install: str, env: str) -> None:
    msg = _kv208(tmp_path, install, env)
    assert "installs the nightly build of vLLM" in msg, msg
