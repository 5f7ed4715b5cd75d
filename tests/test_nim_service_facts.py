"""What kvlint reads of an NVIDIA NIM Operator NIMService whose pod starts the NIM launcher: the model, the GPUs of
each pod and of each instance, the GPU type and the profile, said in the KV503 note (the object stays "not read":
the launcher's profile decides the engine, its release, precision and memory settings, so no plan is made); and a
NIMService whose own ``spec.command`` replaces the launcher is read as any command is (k8s-nim-operator
api/apps/v1alpha1 nimservice_types.go ``GetCommand``, ``GetEnv``, ``GetLWSSize``; internal/controller/platform/
standalone/nimservice.go ``addGPUResources``). The files are the operator's own samples (fixtures/collected)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.sizing import summarise

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
OFFLINE = Options(allow_hub=False)
MULTI_NODE = COLLECTED / (
    "NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__multi-node__multi-node-nimservice-rdma.yaml"
)
DRA_MANUAL = (
    COLLECTED / "NVIDIA__k8s-nim-operator__config__samples__nim__serving__advanced__dra__manual__llm.yaml"
)
MULTI_LLM = COLLECTED / (
    "NVIDIA__k8s-nim-operator__config__samples__nim__serving__standalone__no-precaching__multi-llm-hf.yaml"
)


def _note(result) -> str:
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert note.severity == "info" and note.message.startswith("kvlint does not read this NIMService")
    return note.message


def _facts(message: str) -> str:
    (clause,) = [c for c in message.split("; ") if c.startswith("read from the NIMService spec: ")]
    return clause


def test_a_multi_node_nimservice_says_its_model_gpus_and_pods() -> None:
    result = run_check([str(MULTI_NODE)], OFFLINE)
    text = MULTI_NODE.read_text()
    assert "repository: nvcr.io/nim/deepseek-ai/deepseek-r1" in text and "nvidia.com/gpu: 8" in text
    assert "pipeline: 2" in text and "tensor: 8" in text
    facts = _facts(_note(result))
    assert "model deepseek-ai/deepseek-r1 (the image's name)" in facts
    assert "8 GPUs per pod (nvidia.com/gpu in spec.resources)" in facts
    assert "2 pods per instance (the LeaderWorkerSet of multiNode.parallelism.pipeline)" in facts
    assert "tensor parallel size 8" in facts
    assert "GPU not named" in facts and "no profile named" in facts
    assert "no memory plan is made" in _note(result)
    assert summarise(result).not_read == 1


def test_dra_claims_and_a_multi_llm_model_name_are_said() -> None:
    facts = _facts(_note(run_check([str(DRA_MANUAL)], OFFLINE)))
    assert "GPUs per pod from spec.draResources: ResourceClaimTemplate gpu-resourceclaimtemplate" in facts
    facts = _facts(_note(run_check([str(MULTI_LLM)], OFFLINE)))
    assert "nvcr.io/nim/nvidia/llm-nim" in MULTI_LLM.read_text()
    assert "model hf://meta-llama/Llama-3.2-1B-Instruct (NIM_MODEL_NAME)" in facts


SERVICE = """apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
    tag: "1.3.3"
  env:
    - name: NIM_MODEL_PROFILE
      value: vllm-bf16-tp1
  storage:
    nimCache:
      name: llama-cache
      profile: tensorrt_llm-h100-fp8-tp1-throughput
  nodeSelector:
    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
"""


def test_the_profile_and_gpu_type_come_from_env_and_node_selector() -> None:
    """``NIM_MODEL_PROFILE`` in ``spec.env`` wins over ``storage.nimCache.profile`` (the operator merges its
    profile variable under the user's env); with no ``nvidia.com/gpu`` the note says when the operator adds one."""
    facts = _facts(_note(run_documents(load_text(SERVICE, "nim.yaml"), OFFLINE)))
    assert "profile vllm-bf16-tp1 (NIM_MODEL_PROFILE)" in facts
    assert "GPU nvidia-h100-sxm5-80gb (nodeSelector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3)" in facts
    assert "no nvidia.com/gpu in spec.resources" in facts
    no_env = SERVICE.replace(
        "  env:\n    - name: NIM_MODEL_PROFILE\n      value: vllm-bf16-tp1\n",
        "  resources:\n    limits:\n      nvidia.com/gpu: 1\n",
    )
    facts = _facts(_note(run_documents(load_text(no_env, "nim.yaml"), OFFLINE)))
    assert "profile tensorrt_llm-h100-fp8-tp1-throughput (storage.nimCache.profile)" in facts
    assert "1 GPU per pod" in facts


def test_a_command_of_its_own_replaces_the_launcher_and_is_read() -> None:
    """``spec.command`` reaches the container as it is: a vLLM command line there is read and sized like any
    other, and the NIM note (which would say the launcher picks the engine) is not given."""
    own = SERVICE.replace(
        "  env:\n",
        "  command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, '4096']\n"
        "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  env:\n",
    )
    result = run_documents(load_text(own, "nim.yaml"), OFFLINE)
    assert not [d for d in result.diagnostics if d.rule == "KV503" and "NIM" in d.message]
    (cr,) = result.containers
    assert cr.serving.engine == "vllm" and cr.plan is not None


AWS = (
    COLLECTED
    / "awslabs__ai-on-eks__blueprints__inference__gpu__nvidia-nim-operator-llama3-8b__nim-service-llama3-8b-instruct.yaml"
)
AWS_CACHE = COLLECTED / (
    "awslabs__ai-on-eks__blueprints__inference__gpu__nvidia-nim-operator-llama3-8b__nim-cache-llama3-8b-instruct.yaml"
)


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_nimcache_it_names_is_said_when_among_the_inputs(jobs: int) -> None:
    """The NIMService's ``storage.nimCache.name`` names a NIMCache of the same namespace; linted together (two
    files of ai-on-eks' blueprint, in one run, however many jobs), what it caches is said."""
    from kvlint.checkrun import run_paths

    assert "kind: NIMCache" in AWS_CACHE.read_text() and "nimCache:" in AWS.read_text()
    alone = _facts(_note(run_check([str(AWS)], OFFLINE)))
    assert "NIMCache" not in alone
    run = run_paths([str(AWS_CACHE), str(AWS)], OFFLINE, jobs=jobs)
    facts = _facts(_note(run.result))
    assert (
        "NIMCache meta-llama3-8b-instruct caches the profiles of engine tensorrt_llm, precision fp16, GPU A10G"
        in facts
    )


def test_a_cache_of_profiles_the_pod_cannot_run_is_said() -> None:
    service = SERVICE.replace("  env:\n", "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  env:\n")
    cache = (
        "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llama-cache\nspec:\n"
        "  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "      model:\n        engine: tensorrt_llm\n        tensorParallelism: '2'\n"
    )
    facts = _facts(_note(run_documents(load_text(service + cache, "nim.yaml"), OFFLINE)))
    assert "NIMCache llama-cache caches the profiles of engine tensorrt_llm, tensor parallel size 2" in facts
    assert "they need 2 GPUs, the pod has 1: no cached profile fits it" in facts


def test_a_cache_tensor_parallelism_that_is_not_ascii_digits_is_not_read() -> None:
    # "²" passes str.isdigit but not int(): the NIMService is still read, the cache's TP left unsaid
    service = SERVICE.replace("  env:\n", "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  env:\n")
    cache = (
        "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llama-cache\nspec:\n"
        "  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "      model:\n        engine: tensorrt_llm\n        tensorParallelism: '\u00b2'\n"
    )
    facts = _facts(_note(run_documents(load_text(service + cache, "nim.yaml"), OFFLINE)))
    assert "NIMCache llama-cache caches the profiles of engine tensorrt_llm" in facts
    assert "they need" not in facts


def test_a_cache_of_profiles_the_pod_cannot_run_is_a_kv403_warning() -> None:
    """The NIMCache among the inputs caches only TP 2 profiles ("the minimum GPUs required", nimcache_types.go
    ``ModelSpec.TensorParallelism``) and the NIMService's pod requests one GPU: NIM cannot run any cached profile,
    selects one of one GPU and downloads it at start-up. Said only in the note before; now a KV403 warning at the
    pod's GPU count. A cache of TP 1 profiles (its passing neighbour) gets none."""
    service = SERVICE.replace("  env:\n", "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  env:\n")
    cache = (
        "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llama-cache\nspec:\n"
        "  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "      model:\n        engine: tensorrt_llm\n        tensorParallelism: 'TP'\n"
    )
    text = service + cache.replace("TP", "2")
    result = run_documents(load_text(text, "nim.yaml"), OFFLINE)
    (d,) = [d for d in result.diagnostics if d.rule == "KV403"]
    assert d.severity == "warning"
    assert d.message.startswith(
        "NIMCache llama-cache caches only profiles of tensor parallel size 2 (spec.source.ngc.model."
        "tensorParallelism), but the pod requests 1 GPU (nvidia.com/gpu: 1)"
    )
    assert d.loc is not None and text.splitlines()[d.loc.line - 1].strip() == "nvidia.com/gpu: 1"
    fits = run_documents(load_text(service + cache.replace("TP", "1"), "nim.yaml"), OFFLINE)
    assert [d for d in fits.diagnostics if d.rule == "KV403"] == []


def test_kv405_on_a_nimservice_says_where_its_gpus_are_set() -> None:
    """A NIMService whose own command replaces the launcher and that requests no GPU: KV405's fix named the
    container field resources.limits, which a NIMService does not have; it names spec.resources (which the
    operator passes to the container as they are) and spec.draResources."""
    text = (
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata:\n  name: llm\nspec:\n"
        "  image:\n    repository: vllm/vllm-openai\n    tag: v0.11.0\n"
        "  command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --max-model-len, '8192']\n"
        "  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-L4\n"
    )
    result = run_documents(load_text(text, "nim.yaml"), OFFLINE)
    (d,) = [d for d in result.diagnostics if d.rule == "KV405"]
    assert d.fix.startswith("set spec.resources.limits['nvidia.com/gpu'] of the NIMService")
    assert "spec.draResources" in d.fix


def test_a_cache_naming_its_profiles_is_not_judged_by_its_tensor_parallelism() -> None:
    """A NIMCache that lists ``profiles`` caches those: the operator ignores its other model fields for the
    selection (nimcache_types.go ``ModelSpec.Profiles``: "When these are provided, rest of the model parameters for
    profile selection are ignored"; the controller's ``getSelectedProfiles`` returns them as given). Its
    ``tensorParallelism`` says nothing of what is cached, so a one-GPU pod gets no KV403 from it; the same cache
    without ``profiles`` (its failing neighbour) does."""
    service = SERVICE.replace("  env:\n", "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  env:\n")
    cache = (
        "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llama-cache\nspec:\n"
        "  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "      model:\nPROFILES        tensorParallelism: '2'\n"
    )
    named = cache.replace(
        "PROFILES", "        profiles: [193649a2eb95e821309d6023a2cabb31489d3b690a9973c7ab5d1ff58b0aa7eb]\n"
    )
    result = run_documents(load_text(service + named, "nim.yaml"), OFFLINE)
    assert [d for d in result.diagnostics if d.rule == "KV403"] == []
    selected = run_documents(load_text(service + cache.replace("PROFILES", ""), "nim.yaml"), OFFLINE)
    assert [d.severity for d in selected.diagnostics if d.rule == "KV403"] == ["warning"]


def test_a_cache_of_profiles_of_fewer_gpus_than_the_pod_is_said_as_information() -> None:
    """A NIMCache filtered to tensorParallelism 1 for a pod of 4 GPUs: the operator neither checks nor changes the
    pod's GPUs (addGPUResources keeps spec.resources), and NIM selects its profile from the whole manifest for the 4
    GPUs it sees, so it may download an uncached one or leave GPUs idle: said in the info note (no KV403, which
    would claim one outcome); with a profile named, KV403 compares that profile's GPUs instead and the clause
    is not given."""
    service = SERVICE.replace("  env:\n", "  resources:\n    limits:\n      nvidia.com/gpu: 4\n  env:\n")
    cache = (
        "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llama-cache\nspec:\n"
        "  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
        "      model:\n        engine: tensorrt_llm\n        tensorParallelism: '1'\n"
    )
    no_profile = service.replace("    - name: NIM_MODEL_PROFILE\n      value: vllm-bf16-tp1\n", "").replace(
        "      profile: tensorrt_llm-h100-fp8-tp1-throughput\n", ""
    )
    assert "profile" not in no_profile.lower()
    result = run_documents(load_text(no_profile.replace("  env:\n", "") + cache, "nim.yaml"), OFFLINE)
    facts = _facts(_note(result))
    assert "they run on 1 GPU, the pod has 4" in facts and "3 GPUs idle" in facts
    assert [d for d in result.diagnostics if d.rule == "KV403"] == []
    named = run_documents(load_text(service + cache, "nim.yaml"), OFFLINE)
    assert "the pod has 4" not in _facts(_note(named))
    assert [d.severity for d in named.diagnostics if d.rule == "KV403"] == ["warning"]
