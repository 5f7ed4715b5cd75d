"""A KubeAI Model whose ``spec.engine`` is not one of the CRD's engines, as the enum spells them (``OLlama``,
``VLLM``, ``FasterWhisper``, ``Infinity``; substratusai/kubeai api/k8s/v1/model_types.go ``ModelSpec.Engine``, a
required field) was silent: no workload, no finding, exit 0, although the API server refuses the Model. It is now a
KV206 error at ``spec.engine``; a case variant of ``VLLM`` is still sized as vLLM after saying so. The Model is
KubeAI's own manifest (fixtures/collected, source in its INDEX.csv) with its engine changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.workloads.kubeai import MODEL_ENGINES

MODEL = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "substratusai__kubeai__manifests__models__deepseek-r1-distill-qwen-1.5b-rtx4070.yaml"
)
OFFLINE = Options(allow_hub=False)


def _run(text: str):
    return run_documents(load_text(text, "model.yaml"), OFFLINE)


def _engine_line(text: str) -> int:
    return 1 + next(i for i, t in enumerate(text.splitlines()) if t.strip().startswith("engine:"))


@pytest.mark.parametrize("engine", ["SGLang", "TGI", "'1'"])
def test_an_engine_outside_the_enum_is_refused(engine: str) -> None:
    text = MODEL.read_text().replace("engine: VLLM", f"engine: {engine}")
    result = _run(text)
    (d,) = [x for x in result.diagnostics if x.rule == "KV206"]
    assert d.severity == "error" and d.loc is not None and d.loc.line == _engine_line(text)
    assert "the API server refuses the Model" in d.message
    assert all(e in d.message for e in MODEL_ENGINES)
    assert result.containers == []


def test_a_case_variant_is_refused_and_still_sized_as_vllm() -> None:
    text = MODEL.read_text().replace("engine: VLLM", "engine: vllm")
    result = _run(text)
    (d,) = [x for x in result.diagnostics if x.rule == "KV206" and "spec.engine" in x.message]
    assert d.severity == "error" and d.fix == "write engine: VLLM, as the CRD spells it"
    (c,) = result.containers
    assert c.serving.engine == "vllm"


def test_a_missing_engine_is_refused_and_the_enum_spellings_pass() -> None:
    text = MODEL.read_text().replace("  engine: VLLM\n", "")
    (d,) = [x for x in _run(text).diagnostics if x.rule == "KV206" and "spec.engine" in x.message]
    assert "spec.engine is missing" in d.message
    for engine in MODEL_ENGINES:
        ok = MODEL.read_text().replace("engine: VLLM", f"engine: {engine}")
        assert not [x for x in _run(ok).diagnostics if "spec.engine" in x.message]
