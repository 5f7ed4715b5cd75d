"""DJL Serving LMI containers (``deepjavalibrary/djl-serving:*-lmi``, AWS's ``djl-inference:*-lmi*``) run vLLM inside
DJL's Python engine when ``OPTION_ROLLING_BATCH=vllm``, with vLLM's arguments built by DJL from the ``OPTION_*``
variables (``VllmRbProperties``). kvlint found no serving container in them and said nothing ("0 serving
containers"); it now says which engine runs and that its memory is not checked (KV503 info at the image)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

# made up for the test, in the form of DJL's LMI deployment guide (OPTION_* environment variables)
_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-lmi
spec:
  template:
    spec:
      containers:
      - name: lmi
        image: IMAGE
        env:
        - name: HF_MODEL_ID
          value: meta-llama/Llama-3.1-8B-Instruct
        ROLLING
        - name: OPTION_TENSOR_PARALLEL_DEGREE
          value: "1"
        resources:
          limits: {nvidia.com/gpu: 1}
"""
_VLLM = """- name: OPTION_ROLLING_BATCH
          value: vllm"""


def _run(tmp_path: Path, image: str, rolling: str = _VLLM):
    f = tmp_path / "lmi.yaml"
    f.write_text(_DEPLOYMENT.replace("IMAGE", image).replace("ROLLING", rolling))
    return run_check([str(f)], Options(allow_hub=False, accelerator="h100"))


@pytest.mark.parametrize(
    "image",
    [
        "deepjavalibrary/djl-serving:0.29.0-lmi",
        "763104351884.dkr.ecr.us-west-2.amazonaws.com/djl-inference:0.29.0-lmi11.0.0-cu124",
    ],
)
def test_lmi_container_is_said_not_checked(tmp_path: Path, image: str) -> None:
    res = _run(tmp_path, image)
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert (
        d.severity == "info" and "DJL Serving LMI" in d.message and "OPTION_ROLLING_BATCH=vllm" in d.message
    )
    assert d.loc is not None and d.loc.line == 10  # the image


def test_backend_named_when_not_vllm(tmp_path: Path) -> None:
    res = _run(
        tmp_path, "deepjavalibrary/djl-serving:0.29.0-lmi", "- {name: OPTION_ROLLING_BATCH, value: lmi-dist}"
    )
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert "OPTION_ROLLING_BATCH=lmi-dist" in d.message


@pytest.mark.parametrize(
    "image",
    [
        "deepjavalibrary/djl-serving:0.29.0",  # not an LMI image (the CPU/PyTorch one)
        "deepjavalibrary/djl-serving:0.29.0-pytorch-gpu",
    ],
)
def test_other_djl_images_left_alone(tmp_path: Path, image: str) -> None:
    assert not [d for d in _run(tmp_path, image).diagnostics if d.rule == "KV503"]
