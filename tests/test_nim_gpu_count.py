"""KV403 for an NVIDIA NIM Operator NIMService whose pod starts the NIM launcher: the GPUs NIM needs per pod (a
multi-node NIMService's ``multiNode.parallelism.tensor``, ``NIM_TENSOR_PARALLEL_SIZE`` x
``NIM_PIPELINE_PARALLEL_SIZE`` in ``spec.env``, or the ``tp``/``pp`` of the profile it names) against the GPUs the
pod requests (``spec.resources``, else the GPU devices of the claims ``spec.draResources`` creates); and DRA device
counts the API server refuses are said as such, not printed as a number (k8s-nim-operator api/apps/v1alpha1
nimservice_types.go ``getLWSCommonEnv``, ``GetLWSLeaderEnv``; dra_types.go ``DRADeviceSpec``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
OFFLINE = Options(allow_hub=False)
MULTI_NODE = COLLECTED / (
    "NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__multi-node__multi-node-nimservice-rdma.yaml"
)

HEAD = """apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-70b-instruct
    tag: "1.8.0"
"""


def _kv403(text: str) -> list:
    return [d for d in run_documents(load_text(text, "nim.yaml"), OFFLINE).diagnostics if d.rule == "KV403"]


def _gpus(n: int | str) -> str:
    return f"  resources:\n    limits:\n      nvidia.com/gpu: {n}\n"


def _env(**values: str) -> str:
    return "  env:\n" + "".join(f"    - name: {k}\n      value: '{v}'\n" for k, v in values.items())


def _multi(pipeline: int, tensor: int) -> str:
    return f"  multiNode:\n    parallelism:\n      pipeline: {pipeline}\n      tensor: {tensor}\n"


def _dra(count: str) -> str:
    return f"  draResources:\n    - claimCreationSpec:\n        devices:\n          - name: gpu\n            count: {count}\n"


def test_the_operators_multi_node_sample_asks_each_pod_for_its_tensor_parallel_gpus() -> None:
    """The operator's sample gives each of its pods ``tensor`` GPUs: nothing to report."""
    text = MULTI_NODE.read_text()
    assert "pipeline: 2" in text and "tensor: 8" in text and "nvidia.com/gpu: 8" in text
    assert not [d for d in run_check([str(MULTI_NODE)], OFFLINE).diagnostics if d.rule == "KV403"]


def test_a_multi_node_pod_with_fewer_gpus_than_its_tensor_size_is_an_error() -> None:
    text = MULTI_NODE.read_text().replace("nvidia.com/gpu: 8", "nvidia.com/gpu: 4")
    result = run_documents(load_text(text, "multi.yaml"), OFFLINE)
    (d,) = [d for d in result.diagnostics if d.rule == "KV403"]
    assert d.severity == "error"
    assert "multiNode.parallelism.tensor 8 needs 8 GPUs per pod but the pod requests 4" in d.message
    assert "(nvidia.com/gpu: 4 x 2 pods)" in d.message and "GPUS_PER_NODE=8" in d.message
    assert text.splitlines()[d.loc.line - 1].strip() == "tensor: 8"
    assert "request 8 GPUs per pod" in d.fix


def test_a_multi_node_env_of_its_own_is_not_second_guessed() -> None:
    # the user's NIM_TENSOR_PARALLEL_SIZE or GPUS_PER_NODE wins over the operator's (utils.MergeEnvVars)
    for name in ("NIM_TENSOR_PARALLEL_SIZE", "GPUS_PER_NODE"):
        assert not _kv403(HEAD + _gpus(4) + _multi(2, 8) + _env(**{name: "4"}))
    # pipeline 1 is not multi-node (IsMultiNode: pipeline > 1): the tensor size is not read
    assert not _kv403(HEAD + _gpus(4) + _multi(1, 8))
    assert _kv403(HEAD + _gpus(4) + _multi(2, 8))


@pytest.mark.parametrize("tensor", [0, 10**12])
def test_an_absurd_or_zero_tensor_size_is_not_compared(tensor: int) -> None:
    assert not _kv403(HEAD + _gpus(4) + _multi(2, tensor))


def test_nim_parallel_sizes_in_env_against_the_pods_gpus() -> None:
    (fewer,) = _kv403(HEAD + _gpus(2) + _env(NIM_TENSOR_PARALLEL_SIZE="2", NIM_PIPELINE_PARALLEL_SIZE="2"))
    assert fewer.severity == "error"
    assert "NIM_TENSOR_PARALLEL_SIZE 2 x NIM_PIPELINE_PARALLEL_SIZE 2 needs 4 GPUs per pod" in fewer.message
    (more,) = _kv403(HEAD + _gpus(8) + _env(NIM_TENSOR_PARALLEL_SIZE="4"))
    assert more.severity == "warning" and "uses only 4; 4 GPU(s) sit idle" in more.message
    assert not _kv403(HEAD + _gpus(4) + _env(NIM_TENSOR_PARALLEL_SIZE="4"))
    # a value kvlint cannot read (not digits) is not compared
    assert not _kv403(HEAD + _gpus(4) + _env(NIM_TENSOR_PARALLEL_SIZE="four"))


def test_a_named_profiles_gpus_against_the_pods_dra_devices() -> None:
    (d,) = _kv403(HEAD + _env(NIM_MODEL_PROFILE="vllm-bf16-tp4-pp1") + _dra("2"))
    assert d.severity == "error"
    assert "profile vllm-bf16-tp4-pp1 needs 4 GPUs per pod but the pod requests 2" in d.message
    assert "spec.draResources: 2 gpu.nvidia.com devices" in d.message
    assert "name a profile of 2 GPUs" in d.fix
    # the storage.nimCache.profile the operator sets, when spec.env names none
    cache = (
        "  storage:\n    nimCache:\n      name: c\n      profile: tensorrt_llm-h100-fp8-tp2-pp2-throughput\n"
    )
    (d,) = _kv403(HEAD + _gpus(2) + cache)
    assert "needs 4 GPUs per pod" in d.message
    # a profile named by its id says no parallel size
    assert not _kv403(HEAD + _gpus(2) + _env(NIM_MODEL_PROFILE="a" * 64))


@pytest.mark.parametrize("count", [".inf", "1.5", "'2'", "-1", "true", "99999999999"])
def test_a_dra_count_the_api_server_refuses_is_said_and_not_counted(count: str) -> None:
    result = run_documents(
        load_text(HEAD + _env(NIM_MODEL_PROFILE="vllm-bf16-tp4-pp1") + _dra(count), "nim.yaml"), OFFLINE
    )
    assert not [d for d in result.diagnostics if d.rule == "KV403"]
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "gpu.nvidia.com devices of count " in note.message
    assert "inf gpu.nvidia.com" not in note.message and "nan gpu.nvidia.com" not in note.message


def test_devices_of_another_class_are_not_gpus() -> None:
    other = (
        HEAD + _env(NIM_MODEL_PROFILE="vllm-bf16-tp4-pp1") + _dra("2") + "            deviceClassName: x.io\n"
    )
    assert not _kv403(other)
