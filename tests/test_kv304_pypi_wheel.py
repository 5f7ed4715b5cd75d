"""KV304 for vLLM that a container's script installs from PyPI on a plain Python image and runs on an AMD GPU:
PyPI's vllm wheel is vLLM's CUDA build (vLLM's ROCm install guide, kvlint.engines.images.VLLM_ROCM_WHEELS), so it
does not start there; kvlint planned it on the AMD Instinct fleet. A ROCm index or wheel, or a package source kvlint
cannot read, is not reported (kvlint.engines.images.pypi_cuda_wheel)."""

from __future__ import annotations

import pytest

from kvlint.engines.images import VLLM_ROCM_INDEX, VLLM_ROCM_WHEELS
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: t}}
spec:
  selector: {{matchLabels: {{app: t}}}}
  template:
    metadata: {{labels: {{app: t}}}}
    spec:
{selector}      containers:
      - name: vllm
        image: {image}
        command: ["sh", "-c"]
        args: ["{script}"]
{env}        resources: {{limits: {{{resource}: 1}}}}
"""
SERVE = "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
MI300X = "      nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X_OAM}\n"


def _run(
    install: str,
    *,
    image: str = "python:3.11",
    resource: str = "amd.com/gpu",
    selector: str = "",
    env: str = "",
):  # type: ignore[no-untyped-def]
    text = POD.format(
        image=image, script=f"{install} && {SERVE}", resource=resource, selector=selector, env=env
    )
    return run_documents(load_text(text, "d.yaml"), Options(allow_hub=False))


@pytest.mark.parametrize("selector", ["", MI300X])
@pytest.mark.parametrize(
    "install",
    ["pip install vllm", "pip install -q vllm==0.11.0", "uv pip install --system 'vllm[audio]>=0.9'"],
)
def test_pypi_vllm_on_an_amd_gpu_is_kv304(install: str, selector: str) -> None:
    res = _run(install, selector=selector)
    (kv304,) = [d for d in res.diagnostics if d.rule == "KV304"]
    assert kv304.severity == "error"
    assert "installs vLLM from PyPI" in kv304.message and "CUDA build" in kv304.message, kv304.message
    assert kv304.loc is not None and kv304.loc.line == 13 + bool(selector)  # the script's pip command (args:)
    assert VLLM_ROCM_INDEX in (kv304.fix or "")
    if not selector:  # no GPU named: not planned on the AMD Instinct fleet (it was, with KV501's warning)
        assert summarise(res).not_sized == {"built for another GPU": 1}
        assert not [d for d in res.diagnostics if d.rule == "KV501"]


def test_the_remedy_keeps_a_pinned_release_the_rocm_index_has() -> None:
    variant, first, last = VLLM_ROCM_WHEELS
    assert first != last
    (kv304,) = [d for d in _run(f"pip install vllm=={first}").diagnostics if d.rule == "KV304"]
    assert f"pip install vllm=={first}+{variant} --extra-index-url {VLLM_ROCM_INDEX}{first}/{variant}" in (
        kv304.fix or ""
    )
    (kv304,) = [d for d in _run("pip install vllm==0.11.0").diagnostics if d.rule == "KV304"]
    assert f"vllm=={last}+{variant}" in (kv304.fix or "") and "vLLM 0.11.0 has no ROCm wheel" in (
        kv304.fix or ""
    )


@pytest.mark.parametrize(
    ("install", "env", "image", "resource"),
    [
        # vLLM's ROCm index, its pip form (exact version with the variant) and its uv form
        (
            "pip install vllm==0.18.0+rocm700 --extra-index-url https://wheels.vllm.ai/rocm/0.18.0/rocm700",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        (
            "uv pip install --system vllm --extra-index-url https://wheels.vllm.ai/rocm/",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        (
            "pip install /wheels/vllm-0.18.0+rocm700-cp312-cp312-linux_x86_64.whl",
            "",
            "python:3.12",
            "amd.com/gpu",
        ),
        # a source kvlint cannot read: a private index, an index set in the environment, a requirements file
        ("pip install --index-url https://pypi.example.com/simple vllm", "", "python:3.11", "amd.com/gpu"),
        (
            "pip install vllm",
            "        env: [{name: PIP_EXTRA_INDEX_URL, value: https://pypi.example.com/simple}]\n",
            "python:3.11",
            "amd.com/gpu",
        ),
        ("pip install -r /app/requirements.txt vllm", "", "python:3.11", "amd.com/gpu"),
        # an image that may carry its own (ROCm) vLLM, and the control on NVIDIA
        (
            "pip install vllm",
            "",
            "rocm/pytorch:rocm6.3_ubuntu22.04_py3.10_pytorch_release_2.4.0",
            "amd.com/gpu",
        ),
        ("pip install vllm", "", "registry.example.com/team/llm-base:1", "amd.com/gpu"),
        ("pip install vllm", "", "python:3.11", "nvidia.com/gpu"),
    ],
)
def test_a_rocm_or_unknown_source_is_not_kv304(install: str, env: str, image: str, resource: str) -> None:
    res = _run(install, env=env, image=image, resource=resource)
    assert not [d for d in res.diagnostics if d.rule == "KV304"], [
        (d.rule, d.message) for d in res.diagnostics if d.rule == "KV304"
    ]
