"""uv under ``--index-strategy unsafe-best-match`` "select[s] the best version from the combined set of candidate
versions", pip's behaviour (astral-sh/uv docs/concepts/indexes.md): PyPI's later vLLM outranks the one release of
vLLM's per-release ROCm index, so an unpinned ``uv pip install vllm`` beside that index installs PyPI's CUDA wheel
and KV304 says so, as for pip (kvlint.engines.images.rocm_index_outbid, uv_best_match). uv's default first-index
and unsafe-first-match take the ROCm index's wheel: not reported."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

ROCM = "https://wheels.vllm.ai/rocm/0.18.0/rocm700"
POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: t}}
spec:
  containers:
  - name: vllm
    image: python:3.12
    command: ["sh", "-c"]
    args: ["{install} && vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"]
    resources: {{limits: {{amd.com/gpu: 1}}}}
"""


def _kv304(install: str) -> list[str]:
    res = run_documents(load_text(POD.format(install=install), "d.yaml"), Options(allow_hub=False))
    return [d.message for d in res.diagnostics if d.rule == "KV304"]


@pytest.mark.parametrize(
    "install",
    [
        f"uv pip install --system vllm --extra-index-url {ROCM} --index-strategy unsafe-best-match",
        f"uv pip install --system --index-strategy=unsafe-best-match --extra-index-url={ROCM}/ vllm",
        f"uv pip install --system --index-strategy first-index --index-strategy unsafe-best-match vllm "
        f"--extra-index-url {ROCM}",
    ],
)
def test_uv_best_match_takes_pypis_newer_cuda_wheel(install: str) -> None:
    (msg,) = _kv304(install)
    assert "uv under --index-strategy unsafe-best-match weighs every index alike" in msg, msg
    assert f"outrank 0.18.0+rocm700, the one release on {ROCM}" in msg, msg
    assert "so uv installs PyPI's newest wheel" in msg, msg


@pytest.mark.parametrize(
    "install",
    [
        f"uv pip install --system vllm --extra-index-url {ROCM}",
        f"uv pip install --system vllm --extra-index-url {ROCM} --index-strategy unsafe-first-match",
        f"uv pip install --system vllm --extra-index-url {ROCM} --index-strategy first-index",
        f"uv pip install --system vllm==0.18.0 --extra-index-url {ROCM} --index-strategy unsafe-best-match",
        # a strategy uv reads from the environment the script sets is not read: where uv installs from is unknown
        f"export UV_INDEX_STRATEGY=unsafe-best-match; uv pip install --system vllm --extra-index-url {ROCM}",
    ],
)
def test_uv_taking_the_rocm_index_is_not_kv304(install: str) -> None:
    assert not _kv304(install), install
