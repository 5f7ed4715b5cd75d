"""KV208 on ``pip install git+https://github.com/vllm-project/vllm.git@<commit>``: pip builds that commit's code
(fixed, a development version), not "that branch's newest code on the day the pod starts", which holds for a branch
or no ref (kvlint.rules.families.flags.version_unpinned)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

COMMIT = "72d9c316d3f6ede485146fe5aabd4e61dbc59069"


def _kv208(tmp_path: Path, url: str) -> str:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        "    image: vllm/vllm-openai:v0.10.0\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
        f"      pip install {url}\n      vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192\n"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    r = run_check([str(p)], Options(allow_hub=False))
    (msg,) = [d.message for d in r.diagnostics if d.rule == "KV208"]
    return msg


@pytest.mark.parametrize("ref", [COMMIT, COMMIT[:9]])
def test_a_commit_is_that_commits_code(tmp_path: Path, ref: str) -> None:
    msg = _kv208(tmp_path, f"git+https://github.com/vllm-project/vllm.git@{ref}")
    assert f"pip builds the code of commit {ref[:12]}, a development version" in msg, msg
    assert "newest code" not in msg, msg


@pytest.mark.parametrize("ref", ["@main", ""])
def test_a_branch_is_its_newest_code(tmp_path: Path, ref: str) -> None:
    msg = _kv208(tmp_path, f"git+https://github.com/vllm-project/vllm.git{ref}")
    assert "pip builds that branch's newest code on the day the pod starts" in msg, msg
