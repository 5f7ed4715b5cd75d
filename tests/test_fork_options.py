"""An option the upstream engine does not have, on a build kvlint neither sizes nor knows the option set of (a
vendor image for Gaudi, Neuron, TPU ... that may carry a fork of the engine): KV205 is a warning there, not an
error. HabanaAI's Gaudi tutorial gives its vllm-fork ``--weights-load-device cpu``, an option of the fork's
``EngineArgs`` (HabanaAI/vllm-fork ``vllm/engine/arg_utils.py``@00aacb0967cb); it was a KV205 error (newuser49)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

ROOT = Path(__file__).resolve().parents[1]
HABANA = ROOT / "fixtures" / "collected" / "HabanaAI__Gaudi-tutorials__k8s__vllm-8b-cache-1-21.yaml"

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
      containers:
      - name: engine
        image: {image}
        command: ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--weights-load-device", "cpu"]
        resources: {{limits: {{{resource}: "1"}}}}
"""


def _kv205(text: str, name: str = "deploy.yaml"):  # type: ignore[no-untyped-def]
    result = run_documents(load_text(text, name), Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule == "KV205"]


def test_habana_tutorials_fork_option_is_a_warning() -> None:
    (kv205,) = _kv205(HABANA.read_text(), str(HABANA))
    assert kv205.severity == "warning", kv205
    assert "--weights-load-device" in kv205.message
    assert "on this Intel Gaudi build, which kvlint does not size" in kv205.message
    assert kv205.fix is not None and kv205.fix.startswith("nothing to change if the build's engine has it")


@pytest.mark.parametrize(
    ("image", "resource"),
    [
        ("opea/vllm-gaudi:1.2", "habana.ai/gaudi"),
        # a custom image on a Gaudi node: the resource says the build
        ("registry.example/team/llm-server:1.0", "habana.ai/gaudi"),
        ("public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.9.1", "aws.amazon.com/neuron"),
    ],
)
def test_an_unknown_option_on_a_vendor_build_is_a_warning(image: str, resource: str) -> None:
    (kv205,) = _kv205(MANIFEST.format(image=image, resource=resource))
    assert kv205.severity == "warning", kv205


@pytest.mark.parametrize(
    ("image", "resource"),
    [
        # the controls: vLLM's own images, whose options kvlint's tables are (sized or not), and a custom image
        # on an NVIDIA GPU (sized as vLLM)
        ("vllm/vllm-openai:v0.11.0", "nvidia.com/gpu"),
        ("vllm/vllm-tpu:nightly", "google.com/tpu"),
        ("registry.example/team/llm-server:1.0", "nvidia.com/gpu"),
    ],
)
def test_an_unknown_option_of_vllms_own_build_or_on_a_gpu_stays_an_error(image: str, resource: str) -> None:
    (kv205,) = _kv205(MANIFEST.format(image=image, resource=resource))
    assert kv205.severity == "error", kv205
    assert "which kvlint does not size" not in kv205.message
