"""Findings that blame the right thing (msgs10): each test reads a finding as a user would and fails on the
wording or position kvlint had before."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

REPO = Path(__file__).resolve().parents[1]
COLLECTED = REPO / "fixtures" / "collected"
NEURON = (
    COLLECTED
    / "aws-samples__sample-genai-on-eks-starter-kit__components__llm-model__vllm__model-qwen3-8b-neuron-trn1.template.yaml"
)


def _check(*paths: Path):
    return run_check([str(p) for p in paths], Options(allow_hub=False))


def test_kv505_on_an_unsized_neuron_container_does_not_say_sized() -> None:
    """The Neuron build gets KV501 (capacity rules skipped) and no plan: KV505 must not say the model was sized."""
    r = _check(NEURON)
    (cr,) = r.containers
    assert cr.plan is None and cr.model is not None
    (note,) = [d for d in r.diagnostics if d.rule == "KV505"]
    assert "sized" not in note.message
    assert "made no memory plan for this container" in note.message and "from its path" in note.message
    assert any(d.rule == "KV501" for d in r.diagnostics)


def test_kv505_on_a_sized_container_still_says_sized() -> None:
    r = _check(REPO / "fixtures" / "rules" / "KV505" / "vllm.yaml")
    notes = [d for d in r.diagnostics if d.rule == "KV505"]
    assert notes and all(d.message.startswith("kvlint sized this model from its path") for d in notes)
