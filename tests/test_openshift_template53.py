"""An OpenShift Template's ``${NAME}`` references are its parameters, which ``oc process`` substitutes into every
string of its objects (openshift/library-go pkg/template/templateprocessing/template.go): kvlint reads a parameter
with a ``value`` at that value (``${{NAME}}`` as a non-string value), leaves one with no value (required,
generated) unresolved (a whole word of it a KV503 info, not KV205), and leaves a name the Template does not
declare as written, as oc process does (kvlint.template_params)."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.template_params import MAX_SUBSTITUTED_CHARS, process_template

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {{name: vllm-serving}}
parameters:
- name: MODEL
  value: Qwen/Qwen2.5-7B-Instruct
- name: MAX_MODEL_LEN
  value: "{max_len}"
- name: TP
  required: true
- name: EXTRA_ARGS
  description: more arguments
- name: GPUS
  value: "2"
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
          args: [--model, "${{MODEL}}", --max-model-len, "${{MAX_MODEL_LEN}}", {more}]
          resources:
            limits: {{nvidia.com/gpu: "${{{{GPUS}}}}"}}
"""


def _run(max_len: str = "8192", more: str = "--tensor-parallel-size, '2'"):  # type: ignore[no-untyped-def]
    return run_documents(
        load_text(TEMPLATE.format(max_len=max_len, more=more), "t.yaml"), Options(allow_hub=False)
    )


def test_parameters_with_a_value_are_read_at_that_value() -> None:
    res = _run()
    (cr,) = res.containers
    assert cr.serving.model is not None and cr.serving.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert cr.serving.flags["max_model_len"].value == 8192
    assert not [d for d in res.diagnostics if d.rule in ("KV205", "KV502", "KV503")], res.diagnostics
    # ${{GPUS}}: a non-string value, the GPU count 2
    assert cr.placement is not None and cr.placement.gpus == 2


def test_a_value_that_does_not_fit_is_reported_at_the_parameter_use() -> None:
    res = _run(max_len="9999999")
    kv = [d for d in res.diagnostics if d.rule in ("KV101", "KV102", "KV201", "KV202")]
    assert kv and all(d.loc.line == 28 for d in kv if "max-model-len" in d.message), kv


def test_a_parameter_with_no_value_is_unknown_not_an_unknown_option() -> None:
    res = _run(more="--tensor-parallel-size, '${TP}', '${EXTRA_ARGS}', '${UNDECLARED}'")
    by_rule = {(d.rule, d.severity): d.message for d in res.diagnostics}
    msgs = [d.message for d in res.diagnostics if d.rule == "KV503"]
    assert any("${EXTRA_ARGS} is a parameter of this OpenShift Template with no value" in m for m in msgs), (
        msgs
    )
    assert any("--tensor-parallel-size ${TP}" in m for m in msgs), msgs
    # a name the Template does not declare: oc process leaves it, and vLLM receives it as written
    kv205 = [d.message for d in res.diagnostics if d.rule == "KV205"]
    assert kv205 and all("${UNDECLARED}" in m for m in kv205), (kv205, by_rule)


def test_substitution_is_bounded() -> None:
    data = {
        "kind": "Template",
        "parameters": [{"name": "A", "value": "x" * 1000}],
        "objects": [{"args": ["${A}" * 100, "${A}"]}],
    }
    process_template(data)
    args = data["objects"][0]["args"]  # type: ignore[index]
    assert args[0] == "${A}" * 100  # 100,000 characters > MAX_SUBSTITUTED_CHARS: left as written
    assert 100_000 > MAX_SUBSTITUTED_CHARS
    assert args[1] == "x" * 1000
