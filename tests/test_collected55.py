"""New-user pass 55 (fresh55) on manifests kvlint had not seen (fixtures/collected, INDEX.csv rows of pass 55).

* brayanpena530/multiLLM-EKS-Deploy's Mistral Deployment runs ``vllm/vllm-openai:v0.4.1`` at tensor-parallel size 1
  in a pod of ``nvidia.com/gpu: 10``. KV403's remedy offered "set data-parallel-size 10 to use all 10": vLLM took
  ``--data-parallel-size`` only from 0.8 (``vllm/engine/arg_utils.py::EngineArgs.add_cli_args``; first in
  kvlint's sampled option tables at 0.8.5), so 0.4.1 stops with "unrecognized arguments".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
MISTRAL_041 = COLLECTED / "brayanpena530__multiLLM-EKS-Deploy__services__mistral.yaml"


def _kv403_fix(path: Path) -> str:
    result = run_check([str(path)], Options(allow_hub=False))
    kv403 = [d for d in result.diagnostics if d.rule == "KV403"]
    assert len(kv403) == 1, [d.message for d in result.diagnostics]
    return kv403[0].fix or ""


def test_no_data_parallel_remedy_for_a_release_without_the_option() -> None:
    text = MISTRAL_041.read_text()
    assert "image: vllm/vllm-openai:v0.4.1" in text and "nvidia.com/gpu: 10" in text
    fix = _kv403_fix(MISTRAL_041)
    assert "data-parallel-size" not in fix, fix
    # Mistral-7B's 32 attention heads do not divide by 10 (KV401), so fewer GPUs is the one remedy left
    assert fix == "request 1 GPU", fix


@pytest.mark.parametrize(("tag", "offered"), [("v0.7.3", False), ("v0.8.5", True), ("v0.11.0", True)])
def test_the_data_parallel_remedy_follows_the_release(tmp_path: Path, tag: str, offered: bool) -> None:
    f = tmp_path / "mistral.yaml"
    f.write_text(MISTRAL_041.read_text().replace("vllm/vllm-openai:v0.4.1", f"vllm/vllm-openai:{tag}"))
    fix = _kv403_fix(f)
    assert ("data-parallel-size 10 to use all 10" in fix) is offered, (tag, fix)
    assert fix.startswith("request 1 GPU"), fix
