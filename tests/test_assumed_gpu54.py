"""A capacity finding that rests on a GPU kvlint only assumed is a warning, not an error (as an engine option read
from a custom image's env is, ``ServingConfig.env_assumed``): Volcengine VKE's ``gpu-name`` label is read with GFD's
spelling of the NVML name without VKE's value list, ``Tesla-V100`` may be the 16 GB or the 32 GB board, and the
pod is sized on the smaller. When the other board fits, the failure is kvlint's choice, not the manifest's fact
(AIBrix's ``samples/heterogeneous/deepseek-coder-7b-v100-deployment.yaml`` in the shared corpus runs). A label whose
values are documented (Alibaba ACK's ``aliyun.accelerator/nvidia_name``) keeps its error, and so does an assumed GPU
on which no board fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import Diagnostic

_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "manifests"
_VKE = "machine.cluster.vke.volcengine.com/gpu-name"
_ACK = "aliyun.accelerator/nvidia_name"

_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      nodeSelector: {%s: Tesla-V100}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: [Qwen/Qwen2.5-7B-Instruct, --dtype, half, --max-model-len, "8192", --gpu-memory-utilization, "%s"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _capacity(key: str, utilization: str) -> list[Diagnostic]:
    result = run_documents(load_text(_MANIFEST % (key, utilization), "d.yaml"), Options(allow_hub=False))
    return [d for d in result.diagnostics if d.rule in ("KV101", "KV102", "KV103")]


def test_an_assumed_gpu_whose_other_board_fits_is_a_warning_naming_it() -> None:
    found = _capacity(_VKE, "0.9")
    assert found, "7.6B parameters in fp16 do not fit a 16 GB V100: a capacity finding is expected"
    for d in found:
        assert d.severity == "warning", d
        assert "the GPU is assumed" in d.message and "fits on Tesla V100-SXM2-32GB" in d.message, d.message


def test_a_documented_label_keeps_its_error() -> None:
    found = _capacity(_ACK, "0.9")
    assert found and all(d.severity == "error" for d in found), found
    assert not any("the GPU is assumed" in d.message for d in found)


def test_an_assumed_gpu_on_which_no_board_fits_keeps_its_error() -> None:
    found = _capacity(_VKE, "0.3")  # 30% of 32 GB holds no 15 GB of weights
    assert found and any(d.severity == "error" for d in found), found
    assert not any("the GPU is assumed" in d.message for d in found)


def test_the_corpus_v100_sample_is_not_an_error() -> None:
    path = _CORPUS / "vllm-project__aibrix__samples__heterogeneous__deepseek-coder-7b-v100-deployment.yaml"
    if not path.is_file():
        pytest.skip("the shared corpus is not beside the checkout")
    result = run_documents(load_text(path.read_text(), str(path)), Options(allow_hub=False))
    (kv103,) = [d for d in result.diagnostics if d.rule == "KV103"]
    assert kv103.severity == "warning" and "fits on Tesla V100-SXM2-32GB" in kv103.message
    assert not [d for d in result.diagnostics if d.severity == "error"]


_NEURON = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: n}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: example.com/team/vllm-neuron:v1
        command: [/usr/local/bin/run.sh]
        env:
        - {name: MODEL, value: meta-llama/Llama-3.1-8B-Instruct}
        - {name: MAX_MODEL_LEN, value: "8192"}
        resources: {limits: {%s: 1}}
"""


@pytest.mark.parametrize("resource", ["aws.amazon.com/neuron", "aws.amazon.com/neuroncore"])
def test_an_env_read_launch_on_a_neuron_device_names_the_device_not_the_layout(resource: str) -> None:
    """A custom image started from its env on a Neuron device (the awslabs trn1 LeaderWorkerSet in the corpus) is
    not sized because Neuron is not a CUDA/ROCm GPU; KV503 said "the GPU layout may be among them"."""
    result = run_documents(load_text(_NEURON % resource, "n.yaml"), Options(allow_hub=False))
    kv503 = [d for d in result.diagnostics if d.rule == "KV503" and "from the container env" in d.message]
    assert kv503, [d.message for d in result.diagnostics]
    (d,) = kv503
    assert f"requests {resource}, not a CUDA/ROCm GPU" in d.message, d.message
    assert "GPU layout" not in d.message, d.message
