"""Why no accelerator is known is carried by the placement (``Placement.undecided``), not parsed back out of its
``how`` text (branch tidy49): KV501 named the reason only when the text held the word "catalogue", so a GKE value
kvlint does not know ("... is not a known GKE accelerator value") gave KV501 no reason at all. A label value that is
a placeholder is read as an image's is (``kvlint.engines.images``), ``$VAR`` too; an upper-case GPU class
(``A100_40GB``) is a value, not a script's token."""

from __future__ import annotations

import pytest

from kvlint.accelerators.placement import undecided_reasons
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import Placement

_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: g}}
spec:
  template:
    spec:
      nodeSelector: {{{selector}}}
      containers:
      - name: c
        image: vllm/vllm-openai:v0.10.0
        command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _kv501(selector: str, fix: bool = False) -> str:
    result = run_documents(load_text(_POD.format(selector=selector), "g.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV501"]
    return (d.fix or "") if fix else d.message


def test_a_gke_value_kvlint_does_not_know_is_the_reason() -> None:
    msg = _kv501("cloud.google.com/gke-accelerator: nvidia-tesla-z9000")
    # and the remedy is to name that GPU as kvlint knows it, not to add another nodeSelector
    assert _kv501("cloud.google.com/gke-accelerator: nvidia-tesla-z9000", fix=True).startswith(
        "name that GPU as kvlint knows it"
    )
    assert "lands on: nvidia-tesla-z9000 is not a known GKE accelerator value;" in msg, msg


@pytest.mark.parametrize("value", ['"${GPU_PRODUCT}"', '"$GPU_PRODUCT"', '"$(GPU_PRODUCT)"', '"<your-gpu>"'])
def test_a_placeholder_label_value_is_said_to_be_one(value: str) -> None:
    msg = _kv501(f"nvidia.com/gpu.product: {value}")
    assert "is a placeholder left to fill in" in msg, msg


def test_an_upper_case_gpu_class_is_no_placeholder() -> None:
    msg = _kv501("gpuspecs: A100_40GB")
    assert "placeholder" not in msg and "its value spells NVIDIA A100-SXM4-40GB" in msg, msg


def test_the_reason_is_the_placements_own_not_its_text() -> None:
    # a placement whose words mention the catalogue but records no reason has none
    placed = Placement(
        accelerator=None, how="--cluster (nodes.yaml): none can run the pod (not in the catalogue)"
    )
    assert undecided_reasons(placed) == ""
    assert undecided_reasons(Placement(accelerator=None, undecided=("a", "b"))) == "a; b"
