"""A NIMService whose own ``command`` replaces the NIM launcher and whose ``spec.resources`` names no GPU still gets
GPUs from the NIM operator when ``storage.nimCache.profile`` names a profile its NGC NIMCache has cached: the
operator's reconcile looks the profile up in the NIMCache's ``status.profiles`` and sets ``nvidia.com/gpu`` to
that profile's tensor parallel size (its ``config`` tag ``tensorParallelism`` or ``tp``, else 1), whatever the
command (k8s-nim-operator internal/controller/platform/standalone/nimservice.go ``getNIMCacheProfile``,
``addGPUResources``; internal/utils/utils.go ``GetTensorParallelismByProfileTags``; main of 2026-08). kvlint gave
such a pod KV405 "requests no GPU resource" and planned it on no GPU count."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

PROFILE = "vllm-bf16-tp2-pp1-lora"

SERVICE = (
    "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata:\n  name: llm\n  namespace: nim\nspec:\n"
    "  image:\n    repository: vllm/vllm-openai\n    tag: v0.11.0\n"
    "  command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, '4096', --tensor-parallel-size, '2']\n"
    "  nodeSelector:\n    nvidia.com/gpu.product: NVIDIA-L4\n"
    f"  storage:\n    nimCache:\n      name: llm-cache\n      profile: {PROFILE}\n"
)
CACHE = (
    "---\napiVersion: apps.nvidia.com/v1alpha1\nkind: NIMCache\nmetadata:\n  name: llm-cache\n  namespace: nim\n"
    "spec:\n  source:\n    ngc:\n      modelPuller: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
    "      model:\n        profiles: [PROFILES]\n"
)


def _run(text: str):
    result = run_documents(load_text(text, "nim.yaml"), Options(allow_hub=False))
    (cr,) = result.containers
    return [d for d in result.diagnostics if d.rule == "KV405"], cr


def test_a_profile_the_cache_lists_gets_its_tp_gpus_from_the_operator() -> None:
    kv405, cr = _run(SERVICE + CACHE.replace("PROFILES", PROFILE))
    assert kv405 == []
    assert cr.placement is not None and cr.placement.gpus == 2
    assert cr.placement.accelerator is not None and cr.placement.accelerator.id == "nvidia-l4"
    # located at the profile that decides them
    assert cr.placement.gpus_loc is not None and cr.placement.gpus_loc.line == SERVICE.count("\n")


def test_the_status_config_tp_tag_decides() -> None:
    status = f"status:\n  state: Ready\n  profiles:\n  - name: {PROFILE}\n    config:\n      tp: '4'\n"
    _kv405, cr = _run(SERVICE + CACHE.replace("PROFILES", "other") + status)
    assert cr.placement is not None and cr.placement.gpus == 4
    no_tag = status.replace("    config:\n      tp: '4'\n", "")
    _kv405, cr = _run(SERVICE + CACHE.replace("PROFILES", "other") + no_tag)
    assert cr.placement is not None and cr.placement.gpus == 1


def test_an_id_profile_is_requested_by_the_operator_in_a_count_not_said() -> None:
    pid = "193649a2eb95e821309d6023a2cabb31489d3b690a9973c7ab5d1ff58b0aa7eb"
    kv405, cr = _run(SERVICE.replace(PROFILE, pid) + CACHE.replace("PROFILES", pid))
    assert kv405 == []
    assert cr.placement is not None and cr.placement.gpus is None
    assert cr.placement.gpus_elsewhere is not None and "NIM operator" in cr.placement.gpus_elsewhere


def test_no_gpus_are_added_when_the_operator_adds_none() -> None:
    # a profile not cached, a universal NIM cache (modelEndpoint), GPUs of its own, DRA resources
    uncached = SERVICE + CACHE.replace("PROFILES", "other")
    assert len(_run(uncached)[0]) == 1
    endpoint = CACHE.replace("      model:\n", "      modelEndpoint: https://example.com/m\n      model:\n")
    assert len(_run(SERVICE + endpoint.replace("PROFILES", PROFILE))[0]) == 1
    own = SERVICE.replace("  storage:", "  resources:\n    limits:\n      nvidia.com/gpu: 1\n  storage:")
    kv405, cr = _run(own + CACHE.replace("PROFILES", PROFILE))
    assert kv405 == [] and cr.placement is not None and cr.placement.gpus == 1
    # without its NIMCache among the inputs kvlint cannot say the profile is cached
    assert len(_run(SERVICE)[0]) == 1


def test_a_status_without_the_profile_decides_it_is_not_cached() -> None:
    # the operator reads only status.profiles (getNIMCacheProfile): a NIMCache whose status lists other profiles
    # does not get the named one counted as cached because its spec lists it, and the operator adds no GPU
    status = "status:\n  state: Ready\n  profiles:\n  - name: other\n    config:\n      tp: '4'\n"
    kv405, cr = _run(SERVICE + CACHE.replace("PROFILES", PROFILE) + status)
    assert len(kv405) == 1
    assert cr.placement is None or cr.placement.gpus is None
    # the same NIMCache without its status: the profile its spec lists is the one its job caches
    kv405, cr = _run(SERVICE + CACHE.replace("PROFILES", PROFILE))
    assert kv405 == [] and cr.placement is not None and cr.placement.gpus == 2
