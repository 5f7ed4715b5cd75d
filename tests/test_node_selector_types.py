"""A ``nodeSelector`` value that is not a string (``nvidia.com/gpu.present: true``): ``core/v1`` ``PodSpec.NodeSelector``
is ``map[string]string`` and the API server refuses the object, 'Deployment in version "v1" cannot be handled as a
Deployment: json: cannot unmarshal bool into Go struct field PodSpec.spec.template.spec.nodeSelector of type string'
(GoogleCloudPlatform/gke-autoneg-controller#100). kvlint said nothing; now KV005 (error), once for the pod."""

from __future__ import annotations

import pytest

from kvlint.pipeline import Options, run_check

_CONTAINER = """  - name: {name}
    image: vllm/vllm-openai:v0.9.2
    args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "8192"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _kv005(tmp_path, selector: str, kind: str = "Pod", containers: int = 1):
    body = "".join(_CONTAINER.format(name=f"vllm{i}") for i in range(containers))
    if kind == "Pod":
        doc = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  nodeSelector: {selector}\n  containers:\n{body}"
    else:
        body = "".join("      " + line + "\n" for line in body.splitlines())
        doc = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n"
            "  template:\n    metadata: {labels: {a: b}}\n    spec:\n"
            f"      nodeSelector: {selector}\n      containers:\n{body}"
        )
    f = tmp_path / "m.yaml"
    f.write_text(doc)
    res = run_check([str(f)], Options(allow_hub=False, accelerator="h100"))
    return [d for d in res.diagnostics if d.rule == "KV005"]


@pytest.mark.parametrize(
    ("selector", "kind", "go"),
    [
        (
            "{nvidia.com/gpu.present: true}",
            "Pod",
            "cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector",
        ),
        (
            "{gpu-count: 8}",
            "Deployment",
            "cannot unmarshal number into Go struct field PodSpec.spec.template.spec.nodeSelector",
        ),
        ("{pool: [a100]}", "Pod", "cannot unmarshal array into Go struct field PodSpec.spec.nodeSelector"),
    ],
)
def test_non_string_value_is_an_error(tmp_path, selector, kind, go):
    found = _kv005(tmp_path, selector, kind)
    assert len(found) == 1 and found[0].severity == "error", [d.message for d in found]
    assert go in found[0].message


@pytest.mark.parametrize(
    "selector", ['{nvidia.com/gpu.present: "true"}', "{pool: a100}", "{pool: null}", "{}"]
)
def test_strings_pass(tmp_path, selector):
    assert _kv005(tmp_path, selector) == []


def test_said_once_for_a_pod_of_two_serving_containers(tmp_path):
    found = _kv005(tmp_path, "{nvidia.com/gpu.present: true, gpu-count: 8}", containers=2)
    assert len(found) == 1 and "(and 1 more)" in found[0].message
