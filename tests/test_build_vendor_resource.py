"""A build for another device than the GPU vendor a pod's resource names, with no GPU model named: NVIDIA's device
plugin advertises ``nvidia.com/gpu`` on NVIDIA nodes only, AMD's ``amd.com/gpu`` on AMD nodes only, so a ROCm build
requesting ``nvidia.com/gpu`` finds no AMD GPU and never starts, as KV304 says when the GPU model is named. Before,
``rocm/vllm`` with ``nvidia.com/gpu`` got KV501 "cannot tell which GPU this pod lands on" and was planned on the
AMD Instinct fleet; ``vllm/vllm-openai`` with ``amd.com/gpu`` likewise on AMD GPUs; an Ascend or Intel GPU build
with ``nvidia.com/gpu`` got KV501 "capacity rules skipped" (a warning)."""

from __future__ import annotations

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import sizing_of

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: x}}
spec:
  selector: {{matchLabels: {{app: s}}}}
  template:
    metadata: {{labels: {{app: s}}}}
    spec:{selector}
      containers:
      - name: engine
        image: {image}
        command: ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct"]
        resources: {{limits: {{{resource}: 1}}}}
"""


def _run(image: str, resource: str, selector: str = ""):  # type: ignore[no-untyped-def]
    text = POD.format(image=image, resource=resource, selector=selector)
    return run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize(
    ("image", "resource", "words"),
    [
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "nvidia.com/gpu", "ROCm build of vllm"),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "nvidia.com/mig-1g.10gb", "ROCm build of vllm"),
        ("vllm/vllm-openai:v0.10.1", "amd.com/gpu", "CUDA build of vllm"),
        ("quay.io/ascend/vllm-ascend:v0.9.1", "nvidia.com/gpu", "Ascend build of vllm"),
        ("vllm/vllm-tpu:nightly", "amd.com/gpu", "TPU build of vllm"),
    ],
)
def test_build_for_another_device_than_the_resource_is_kv304(image: str, resource: str, words: str) -> None:
    res = run_documents(
        load_text(POD.format(image=image, resource=resource, selector=""), "d.yaml"), Options(allow_hub=False)
    )
    rules = [d.rule for d in res.diagnostics]
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error" and words in kv304.message and f"requests {resource}" in kv304.message
    assert "KV501" not in rules, [d.message for d in res.diagnostics if d.rule == "KV501"]
    (c,) = [c for c in res.containers if c.serving is not None]
    assert not c.fleet and c.plan is None
    assert sizing_of(c) in ("built for another GPU", "not a CUDA/ROCm GPU")


@pytest.mark.parametrize(
    ("image", "resource"),
    [
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "amd.com/gpu"),
        ("vllm/vllm-openai:v0.10.1", "nvidia.com/gpu"),
        ("registry.example/team/llm:1", "amd.com/gpu"),  # a custom image: its build is not known (AMD fleet)
    ],
)
def test_matching_or_unknown_build_keeps_the_fleet(image: str, resource: str) -> None:
    res = _run(image, resource)
    assert "KV304" not in [d.rule for d in res.diagnostics]
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.fleet


@pytest.mark.parametrize(
    ("image", "resource", "vendor"),
    [
        ("registry.example/team/llm:1", "amd.com/gpu", "amd"),
        ("python:3.11", "amd.com/gpu", "amd"),
        ("registry.example/team/llm:1", "nvidia.com/gpu", "nvidia"),
    ],
)
def test_unknown_build_is_planned_on_the_resources_vendor(image: str, resource: str, vendor: str) -> None:
    """amd.com/gpu is advertised on AMD nodes only: an image whose build kvlint cannot read is planned on AMD
    GPUs there (was kvlint's default CUDA fleet, Tesla T4 to H200, where that pod never lands)."""
    res = _run(image, resource)
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.fleet and {e.accelerator.vendor for e in c.fleet} == {vendor}
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert ("ROCm fleet (AMD Instinct)" in kv501.message) == (vendor == "amd")
