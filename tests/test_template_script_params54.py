"""An OpenShift Template's parameter with no value used inside the container's ``bash -c`` script (branch shell54).

``oc process`` substitutes ``${NAME}`` in every string of a Template's objects, a script's included, before any
shell reads it, with the value ``-p NAME=VALUE`` gives, a generated one, or nothing (openshift/library-go
``pkg/template/templateprocessing/template.go``, ``Processor.Process``). opendatahub-io/odh-model-controller's
``config/runtimes/vllm/vllm-multinode-template.yaml`` (the shared corpus) is the shape: a Template whose object runs
vLLM from a bash script. kvlint read a parameter with no value inside the script as a shell variable: a bare
``${EXTRA_ARGS}`` was "not set in the container env: the shell expands it to nothing unless the image sets it", and
``--tensor-parallel-size ${TP}`` was told to "give TP a literal value in the container's env ... and write it
$(TP)", which does nothing for a Template parameter. Both now name the parameter and the Template's remedy; a
``${NAME}`` the Template does not declare is still the shell's.
"""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

TEMPLATE = """\
apiVersion: template.openshift.io/v1
kind: Template
metadata: {{name: vllm-serving}}
parameters:
- name: MODEL
  value: Qwen/Qwen2.5-7B-Instruct
- name: TP
  required: true
- name: EXTRA_ARGS
  description: more arguments
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
          {run}
          resources:
            limits: {{nvidia.com/gpu: "1"}}
"""

SCRIPT = (
    'command: [bash, -c, "vllm serve ${{MODEL}} --max-model-len 4096 --tensor-parallel-size ${{TP}} {rest}"]'
)


def _kv503(run: str) -> list[tuple[str, str, str]]:
    res = run_documents(load_text(TEMPLATE.format(run=run), "t.yaml"), Options(allow_hub=False))
    return [(d.severity, d.message, d.fix or "") for d in res.diagnostics if d.rule == "KV503"]


def test_a_bare_parameter_in_the_script_is_the_template_s_not_the_shell_s() -> None:
    found = _kv503(SCRIPT.format(rest="${EXTRA_ARGS}"))
    (extra,) = [f for f in found if f[1].startswith("${EXTRA_ARGS}")]
    severity, message, fix = extra
    assert severity == "info" and "parameter of this OpenShift Template with no value" in message
    assert "not set in the container env" not in message
    assert "oc process" in fix and "-p EXTRA_ARGS=VALUE" in fix


def test_a_parallel_size_from_a_parameter_gets_the_template_s_remedy() -> None:
    for run in (SCRIPT.format(rest=""), 'args: [--model, "${MODEL}", --tensor-parallel-size, "${TP}"]'):
        (tp,) = [f for f in _kv503(run) if "--tensor-parallel-size ${TP}" in f[1]]
        severity, message, fix = tp
        assert severity == "warning" and "not sized" in message
        assert "the parameter TP of this OpenShift Template" in message
        assert "container's env" not in fix and "name: TP" in fix and "oc process" in fix


def test_a_name_the_template_does_not_declare_is_still_the_shell_s() -> None:
    found = _kv503(SCRIPT.format(rest="${OTHER}"))
    (other,) = [f for f in found if f[1].startswith("${OTHER}")]
    assert "not set in the container env" in other[1]
