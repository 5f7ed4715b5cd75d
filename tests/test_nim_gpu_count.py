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
    assert more.severity == "warning" and "uses only 4; 4 GPUs sit idle" in more.message
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


DRA_MANUAL = (
    COLLECTED / "NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__dra__manual__llm.yaml"
)


def test_a_resource_claim_template_among_the_inputs_gives_a_nimservice_its_gpus() -> None:
    """The operator's manual-DRA sample: the NIMService names a ResourceClaimTemplate of one gpu.nvidia.com device,
    so a profile of more GPUs is reported; without the template among the inputs the count is unknown."""
    text = DRA_MANUAL.read_text()
    assert "resourceClaimTemplateName: gpu-resourceclaimtemplate" in text and "count: 1" in text
    profiled = text.replace(
        "profile: ''", "profile: ''\n  env:\n    - name: NIM_MODEL_PROFILE\n      value: vllm-bf16-tp2-pp1"
    )
    found = [
        d for d in run_documents(load_text(profiled, "dra.yaml"), OFFLINE).diagnostics if d.rule == "KV403"
    ]
    (d,) = found
    assert "profile vllm-bf16-tp2-pp1 needs 2 GPUs per pod but the pod requests 1" in d.message
    (note,) = [
        d for d in run_documents(load_text(text, "dra.yaml"), OFFLINE).diagnostics if d.rule == "KV503"
    ]
    said = "ResourceClaimTemplate gpu-resourceclaimtemplate (1 gpu.nvidia.com device in all, from those among the inputs)"
    assert said in note.message
    service_only = profiled[profiled.index("# NIM Cache") :]
    assert not _kv403(service_only)


CLAIMED = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpus
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
      - name: nic
        exactly:
          deviceClassName: rdma.example.com
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  template:
    spec:
      resourceClaims:
      - name: accel
        resourceClaimTemplateName: gpus
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--tensor-parallel-size", "TP"]
        resources:
          claims:
          - name: accel
"""


def _deployment(text: str) -> tuple[list, object]:
    result = run_documents(load_text(text, "dep.yaml"), OFFLINE)
    (cr,) = result.containers
    return [d for d in result.diagnostics if d.rule == "KV403"], cr.placement


def test_a_deployments_dra_claim_among_the_inputs_is_counted_as_its_gpus() -> None:
    found, placement = _deployment(CLAIMED.replace("TP", "4"))
    assert placement.gpus == 2 and placement.resource == "gpu.nvidia.com"
    (d,) = found
    assert d.severity == "error" and "needs 4 GPUs but the pod requests 2 (gpu.nvidia.com: 2)" in d.message
    found, _ = _deployment(CLAIMED.replace("TP", "1"))
    (d,) = found
    assert d.severity == "warning" and "uses only 1" in d.message
    assert not _deployment(CLAIMED.replace("TP", "2"))[0]
    # the container names the GPU request of the claim: the same count
    named = CLAIMED.replace("TP", "2").replace('- name: accel\n"""', "")
    named = named.replace("          - name: accel\n", "          - name: accel\n            request: gpu\n")
    assert _deployment(named)[1].gpus == 2


@pytest.mark.parametrize(
    "change",
    [
        ("          count: 2\n", "          allocationMode: All\n"),
        ("          count: 2\n", "          count: .inf\n"),
        ("          count: 2\n", "          count: 1.5\n"),
        ("deviceClassName: gpu.nvidia.com", "deviceClassName: mig.nvidia.com"),
        ("resourceClaimTemplateName: gpus", "resourceClaimTemplateName: elsewhere"),
    ],
)
def test_a_claim_whose_gpus_are_not_known_is_not_counted(change: tuple[str, str]) -> None:
    text = CLAIMED.replace("TP", "4").replace(*change)
    assert text != CLAIMED.replace("TP", "4")
    found, placement = _deployment(text)
    assert placement.gpus is None and placement.gpus_elsewhere is not None and not found


NIM_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: nim-llama-70b
spec:
  template:
    spec:
      containers:
        - name: nim
          image: nvcr.io/nim/meta/llama-3.1-70b-instruct:1.8.0
          resources:
            limits:
              nvidia.com/gpu: GPUS
          env:
            - name: NIM_TENSOR_PARALLEL_SIZE
              value: "8"
"""


def test_a_deployment_running_the_nim_launcher_is_checked_as_a_nimservice_is() -> None:
    """A plain Deployment of a NIM image (a tutorial's shape: NIM_TENSOR_PARALLEL_SIZE in env) gets the same KV403
    as a NIMService; a multi-node NIM container (NIM_MULTI_NODE) is not compared, its sizes span pods."""
    (d,) = _kv403(NIM_DEPLOYMENT.replace("GPUS", "4"))
    assert (
        d.severity == "error"
        and "NIM_TENSOR_PARALLEL_SIZE 8 needs 8 GPUs per pod but the pod requests 4" in d.message
    )
    assert not _kv403(NIM_DEPLOYMENT.replace("GPUS", "8"))
    multi = (
        NIM_DEPLOYMENT.replace("GPUS", "4") + "            - name: NIM_MULTI_NODE\n              value: '1'\n"
    )
    assert not _kv403(multi)


def _note(text: str) -> str:
    (note,) = [
        d for d in run_documents(load_text(text, "nim.yaml"), OFFLINE).diagnostics if d.rule == "KV503"
    ]
    return note.message


def test_the_note_says_what_a_named_profile_gives_and_what_a_plan_still_lacks() -> None:
    said = _note(HEAD + _gpus(4) + _env(NIM_MODEL_PROFILE="vllm-bf16-tp4-pp1", NIM_MAX_MODEL_LEN="8192"))
    assert "the profile's name says engine vLLM, precision bf16, tensor parallel size 4 x pipeline 1" in said
    assert "not said: the vLLM release NIM 1.8.0 bundles and the memory fraction NIM gives it" in said
    assert "context length" not in said and "no memory plan is made" in said
    trt = _note(HEAD + _gpus(2) + _env(NIM_MODEL_PROFILE="tensorrt_llm-h100-fp8-tp2-pp1-throughput"))
    assert "engine TensorRT-LLM, precision fp8" in trt and "the context length (no NIM_MAX_MODEL_LEN)" in trt
    assert "kvlint has no TensorRT-LLM memory model" in trt
    # a profile named by its id says nothing of the engine: the general closing
    hexed = _note(HEAD + _gpus(2) + _env(NIM_MODEL_PROFILE="a" * 64))
    assert "profile's name" not in hexed and "kvlint does not read NIM profiles" in hexed
    # a plain Deployment of a NIM image: the same
    dep = _note(
        NIM_DEPLOYMENT.replace("GPUS", "8")
        + "            - name: NIM_MODEL_PROFILE\n              value: sglang-bf16-tp8-pp1\n"
    )
    assert "the profile's name says engine SGLang" in dep
