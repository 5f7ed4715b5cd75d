"""Review of engines53's OpenShift Template parameters (kvlint.template_params) against ``oc process``
(openshift/library-go pkg/template/templateprocessing/template.go and object.go)."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {{name: vllm-serving}}
parameters:
{parameters}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {{name: vllm}}
  spec:
    selector: {{matchLabels: {{app: vllm}}}}
    template:
      metadata: {{labels: {{app: vllm}}}}
      spec:
        nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L4}}
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.11.0
          args: {args}
          resources:
            limits: {{nvidia.com/gpu: {gpus}}}
"""


def _run(parameters: str, args: str, gpus: str = '"1"'):  # type: ignore[no-untyped-def]
    text = TEMPLATE.format(parameters=parameters, args=args, gpus=gpus)
    return run_documents(load_text(text, "t.yaml"), Options(allow_hub=False))


def test_a_model_parameter_with_no_value_is_oc_process_s_not_an_envsubst_template() -> None:
    # oc process substitutes ${MODEL} in every string of the objects: vLLM never receives it as written, and
    # neither envsubst nor the container's env (write $(MODEL)) is the remedy
    res = _run("- name: MODEL\n  required: true", '[--model, "${MODEL}", --max-model-len, "4096"]')
    kv502 = [d for d in res.diagnostics if d.rule == "KV502"]
    assert len(kv502) == 1, res.diagnostics
    (d,) = kv502
    text = d.message + " " + (d.fix or "")
    assert "OpenShift Template" in text and "oc process -f FILE -p MODEL=VALUE" in text, text
    assert "envsubst" not in text and "$(MODEL)" not in text and "as written" not in text, text
    assert d.severity == "info" and d.loc.line == 20, d
