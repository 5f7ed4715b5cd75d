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


def test_the_not_sized_reason_is_typed_not_compared_as_text() -> None:
    """unknown_option_set, KV501 and the sizing line tell a container on a TPU/Gaudi/Neuron build by the typed
    reason (:class:`kvlint.engines.images.Unsized`), not by comparing its wording: rewording the sizing line's
    "not a CUDA/ROCm GPU" must not silently turn the vendor-fork warning back into a KV205 error (ux50)."""
    import re

    from kvlint.engines.images import Unsized, unsized_whatever_model
    from kvlint.load import load_text
    from kvlint.pipeline import run_documents
    from kvlint.sizing import sizing_of

    text = MANIFEST.format(image="opea/vllm-gaudi:1.2", resource="habana.ai/gaudi")
    result = run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))
    (cr,) = result.containers
    why = unsized_whatever_model(cr.serving, cr.placement)  # type: ignore[union-attr]
    assert why is Unsized.NOT_A_GPU
    # the report still words it as before, as a plain string (JSON keys, the sizing line)
    out = sizing_of(cr)  # type: ignore[arg-type]
    assert out == "not a CUDA/ROCm GPU" and type(out) is str
    assert f"{why}" == str(why) == "not a CUDA/ROCm GPU"
    # and no module compares a reason of Unsized with its text
    words = "|".join(re.escape(u.value) for u in Unsized)
    compared = re.compile(rf"""[!=]=\s*["']({words})["']|["']({words})["']\s*[!=]=""")
    hits = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted((ROOT / "kvlint").rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if compared.search(line)
    ]
    assert hits == []
