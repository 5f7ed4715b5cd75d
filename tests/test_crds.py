"""Operator CRDs without a PodSpec (KubeAI Model, KAITO Workspace/InferenceSet, production-stack
VLLMRuntime, NIM NIMService) become workloads with the pod their operator would create: the command line,
positions pointing at the CRD's own fields, and the GPU from the resource profile / instance type; plus
``.kvlint.yaml model_paths`` prefix mapping through the whole pipeline. Corpus files are real manifests
(../shared/corpus/manifests); fixtures/crds/SOURCE.md describes the small fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators import workload_placement
from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.workloads import find_workloads

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

CORPUS = SHARED / "corpus/manifests"
FIX = Path(__file__).resolve().parent.parent / "fixtures"
corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus manifests not available")


def _workloads(path: Path):
    return find_workloads(load_text(path.read_text(encoding="utf-8"), str(path)).documents)


def _line_of(path: Path, text: str) -> int:
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith(text) or text.strip() in line and not text.startswith(" "):
            return i
    raise AssertionError(text)


@corpus
def test_kubeai_model_becomes_the_vllm_pod_kubeai_builds() -> None:
    path = CORPUS / "substratusai__kubeai__manifests__models__llama-3.1-70b-instruct-fp8-l4.yaml"
    (w,) = _workloads(path)
    (c,) = w.pod_spec["containers"]
    assert c["command"] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    args = list(c["args"])
    assert args[:2] == [
        "--model=neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8",
        "--served-model-name=llama-3.1-70b-instruct-fp8-l4",
    ]
    assert args[2:] == [a for a in args[2:] if a.startswith("--")] and "--tensor-parallel-size=2" in args
    # positions are the CRD's own fields
    assert c["args"].locs[0].line == _line_of(path, "url: hf://")
    assert c["args"].locs[args.index("--kv-cache-dtype=fp8")].line == _line_of(path, "--kv-cache-dtype=fp8")
    assert c["env"][0] == {"name": "VLLM_ATTENTION_BACKEND", "value": "FLASHINFER"}
    p = workload_placement(w, c)
    assert p.accelerator is not None and p.accelerator.id == "nvidia-l4"
    assert (p.gpus, p.resource) == (8, "nvidia.com/gpu")  # nvidia-gpu-l4:8
    assert p.loc is not None and p.loc.line == _line_of(path, "resourceProfile:")
    assert p.how.startswith("KubeAI spec.resourceProfile=nvidia-gpu-l4:8")


@corpus
def test_kubeai_unknown_profile_gpu_says_why() -> None:
    path = CORPUS / "substratusai__kubeai__manifests__models__qwen2.5-coder-1.5b-rtx4070-8gb.yaml"
    # the chart's A16 profile, whose GPU is not in the catalogue, in the RTX 4070 profile's place
    text = path.read_text(encoding="utf-8").replace("nvidia-gpu-rtx4070-8gb", "nvidia-gpu-a16")
    (w,) = find_workloads(load_text(text, path.name).documents)
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.accelerator is None and p.gpus == 1
    assert "KubeAI resource profile nvidia-gpu-a16 names a GPU that is not in kvlint's catalogue" in p.how


@corpus
def test_kubeai_rtx4070_8gb_profile_is_the_laptop_part() -> None:
    """The chart's ``nvidia-gpu-rtx4070-8gb``: 8 GB is the GeForce RTX 4070 Laptop GPU's memory (nvidia-smi 8188
    MiB), not the 12 GB desktop card's (12282 MiB)."""
    path = CORPUS / "substratusai__kubeai__manifests__models__qwen2.5-coder-1.5b-rtx4070-8gb.yaml"
    (w,) = _workloads(path)
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.accelerator is not None and p.accelerator.id == "nvidia-geforce-rtx-4070-laptop"
    assert p.accelerator.name == "NVIDIA GeForce RTX 4070 Laptop GPU"
    assert p.accelerator.memory_bytes < 8 * 2**30  # 8188 MiB less the driver reserve
    assert p.how.startswith("KubeAI spec.resourceProfile=nvidia-gpu-rtx4070-8gb:1")


def test_user_annotation_beats_the_profile() -> None:
    text = (FIX / "crds" / "kubeai-model-annotated.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "metadata:\n", "metadata:\n  annotations:\n    kvlint.io/accelerator: nvidia-a10g\n", 1
    )
    (w,) = find_workloads(load_text(text, "m.yaml").documents)
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a10g"
    assert p.how == "annotation kvlint.io/accelerator=nvidia-a10g"


def test_kubeai_model_gets_a_plan_through_the_pipeline() -> None:
    res = run_check([str(FIX / "crds" / "kubeai-model-annotated.yaml")], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.serving.model is not None
    assert cr.serving.model.value == "Qwen/Qwen3-8B"
    assert cr.serving.get("max_model_len") == 8192
    assert cr.model is not None and cr.placement is not None and cr.placement.accelerator is not None
    assert cr.plan is not None and cr.plan.max_model_len == 8192 and cr.plan.kv_cache_bytes > 0
    assert not [d for d in res.diagnostics if d.rule in ("KV501", "KV502", "KV503")]


@corpus
@pytest.mark.parametrize(
    "name,vm,gpus,acc",
    [
        ("kaito_workspace_custom_config.yaml", "Standard_NC24ads_A100_v4", 1, "nvidia-a100-pcie-80gb"),
        (
            "kaito_workspace_llama-3.3_70b_instruct.yaml",
            "Standard_NC48ads_A100_v4",
            2,
            "nvidia-a100-pcie-80gb",
        ),
    ],
)
def test_kaito_workspace_instance_type(name: str, vm: str, gpus: int, acc: str) -> None:
    path = CORPUS / ("kaito-project__kaito__examples__inference__" + name)
    (w,) = [w for w in _workloads(path) if w.kind == "Workspace"]
    assert w.pod_spec["nodeSelector"] == {"node.kubernetes.io/instance-type": vm}
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.accelerator is not None and p.accelerator.id == acc and p.gpus == gpus
    assert p.loc is not None and p.loc.line == _line_of(path, "instanceType:")


@corpus
def test_kaito_preset_resolves_through_kaitos_model_registry() -> None:
    """A preset name is the model KAITO's registry pins for it (kvlint/data/kaito_presets.yaml, read from
    kaito-project/kaito supported_models.yaml), stated in the model's notes."""
    path = CORPUS / "kaito-project__kaito__examples__inference__kaito_workspace_gpt_oss_120b.yaml"
    if not path.exists():
        pytest.skip("shared corpus not present")
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.workload.kind == "Workspace"]
    assert cr.serving.model is not None and cr.serving.model.loc is not None
    assert cr.serving.model.loc.line == _line_of(path, "    name: gpt-oss-120b")
    assert cr.model is not None and cr.model.id == "openai/gpt-oss-120b"
    assert cr.model.notes[0].startswith("KAITO preset gpt-oss-120b runs openai/gpt-oss-120b at revision")


def test_unknown_kaito_preset_is_a_kv502_with_its_reason(tmp_path: Path) -> None:
    src = CORPUS / "kaito-project__kaito__examples__inference__kaito_workspace_gpt_oss_120b.yaml"
    if not src.exists():
        pytest.skip("shared corpus not present")
    path = tmp_path / "ws.yaml"
    path.write_text(src.read_text().replace("name: gpt-oss-120b", "name: no-such-preset"))
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.workload.kind == "Workspace"]
    assert cr.model is None and cr.serving.model is not None
    (d,) = [d for d in res.diagnostics if d.rule == "KV502" and d.loc == cr.serving.model.loc]
    assert "KAITO preset 'no-such-preset'" in d.message and "kvlint.io/model" in d.fix


def test_kaito_with_model_annotation_plans() -> None:
    res = run_check([str(FIX / "crds" / "kaito-annotated.yaml")], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "Qwen/Qwen3-8B"
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a100-pcie-80gb" and cr.plan is not None


@corpus
@pytest.mark.parametrize(
    "name,reason",
    [
        (
            "kaito-project__kaito__examples__inference__kaito_workspace_accelerator.yaml",
            "KAITO resource.partition mode accelerator runs on existing nodes chosen by resource.labelSelector",
        ),
        (
            "kaito-project__kaito__examples__inference__kaito_inferenceset_mig_mixed_strategy.yaml",
            "KAITO resource.partition mode mig runs on existing MIG nodes chosen by resource.labelSelector",
        ),
        (
            "vllm-project__production-stack__operator__config__samples__production-stack_v1alpha1_vllmruntime.yaml",
            "VLLMRuntime has no deploymentConfig.nodeSelectorTerms",
        ),
        (
            "NVIDIA__k8s-nim-operator__config__samples__nim__serving__standalone__basic__llm.yaml",
            "NIMService sets no spec.nodeSelector or spec.affinity naming the GPU",
        ),
    ],
)
def test_unresolvable_crds_say_why(name: str, reason: str) -> None:
    ws = [
        w
        for w in _workloads(CORPUS / name)
        if w.kind in ("Workspace", "InferenceSet", "VLLMRuntime", "NIMService")
    ]
    assert ws
    for w in ws:
        p = workload_placement(w, w.pod_spec["containers"][0])
        assert p.accelerator is None and reason in p.how


@corpus
def test_kaito_mig_partition_requests_the_slice() -> None:
    path = CORPUS / "kaito-project__kaito__examples__inference__kaito_inferenceset_mig_mixed_strategy.yaml"
    (w,) = _workloads(path)
    assert w.replicas == 2 and w.path == "spec.template"
    p = workload_placement(w, w.pod_spec["containers"][0])
    assert p.resource == "nvidia.com/mig-2g.24gb" and p.gpus == 1


@corpus
def test_vllm_runtime_command_line() -> None:
    path = (
        CORPUS
        / "vllm-project__production-stack__operator__config__samples__production-stack_v1alpha1_vllmruntime.yaml"
    )
    (w,) = _workloads(path)
    (c,) = w.pod_spec["containers"]
    assert c["image"] == "docker.io/lmcache/vllm-openai:2025-05-27-v1"
    assert c["command"] == ["/opt/venv/bin/vllm", "serve"]
    args = list(c["args"])
    assert args[0] == "meta-llama/Llama-3.1-8B-Instruct"
    for pair in (
        ["--max-model-len", "4096"],
        ["--tensor-parallel-size", "1"],
        ["--gpu_memory_utilization", "0.8"],
    ):
        i = args.index(pair[0])
        assert args[i : i + 2] == pair
    assert (
        "--no-enable-chunked-prefill" in args
        and "--no-enable-prefix-caching" in args
        and "--enable-lora" in args
    )
    assert c["args"].locs[args.index("--gpu_memory_utilization")].line == _line_of(
        path, "gpuMemoryUtilization"
    )
    assert w.replicas == 2
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.engine == "vllm" and cr.serving.get("gpu_memory_utilization") == 0.8
    assert cr.serving.get("max_model_len") == 4096


def test_model_paths_prefix_mapping_through_run_check() -> None:
    opts = Options(
        allow_hub=False,
        model_paths={"/models/llama": "Qwen/Qwen3-8B", "/mnt/ckpt": str(FIX / "models")},
    )
    res = run_check([str(FIX / "crds" / "model-paths.yaml")], opts)
    by_name = {cr.container_name: cr for cr in res.containers}
    for name in ("exact", "trailing-slash"):
        m = by_name[name].model
        assert m is not None and m.id == "Qwen/Qwen3-8B", name
    sub = by_name["sub-path"].model
    assert sub is not None and "acme--tiny-qwen3" in sub.source, sub and sub.source
    assert by_name["sub-path"].model_error is None
    assert by_name["unmapped"].model is None and "/other/llama" in (by_name["unmapped"].model_error or "")
    # without the mapping none of the container paths resolves
    res2 = run_check([str(FIX / "crds" / "model-paths.yaml")], Options(allow_hub=False))
    assert all(cr.model is None for cr in res2.containers)


def test_kubeai_model_kv208_asks_for_engine_version_not_an_image_tag() -> None:
    """KubeAI picks the vLLM image from its own Helm values: KV208 must not ask to pin a tag in the Model."""
    from pathlib import Path

    from kvlint.pipeline import Options, run_check

    target = Path(__file__).resolve().parents[1] / "fixtures" / "crds" / "kubeai-model-annotated.yaml"
    result = run_check([str(target)], Options(allow_hub=False))
    kv208 = [d for d in result.diagnostics if d.rule == "KV208"]
    assert kv208 and all("KubeAI installation" in d.message and "--engine-version" in d.fix for d in kv208)
    pinned = run_check([str(target)], Options(allow_hub=False, engine_version="0.11.0"))
    assert not [d for d in pinned.diagnostics if d.rule == "KV208"]


def test_kubeai_cpu_and_tpu_profiles_are_not_gpu_pods() -> None:
    """KubeAI's `cpu` and `google-tpu-v5e-*` profiles run vLLM's CPU/TPU builds (the chart's imageName):
    no "requests no GPU" warning, and KV501 says why capacity rules do not apply. Real helm output of
    KubeAI's catalogue chart (fixtures/helm/SOURCE.md)."""
    res = run_check([str(FIX / "helm" / "kubeai" / "rendered" / "models.yaml")], Options(allow_hub=False))
    by_name = {cr.workload.name: cr for cr in res.containers}
    cpu = by_name["llama-3.1-8b-instruct-cpu"]
    assert cpu.serving.image == "substratusai/vllm:v0.6.3.post1-cpu"
    tpu = by_name["llama-3.1-8b-instruct-tpu"]
    assert tpu.placement is not None and tpu.placement.accelerator is not None
    assert tpu.placement.accelerator.id == "google-tpu-v5e"
    assert (tpu.placement.gpus, tpu.placement.resource) == (4, "google.com/tpu")  # google-tpu-v5e-2x2:4
    gpu = by_name["llama-3.1-8b-instruct-fp8-l4"]
    assert gpu.serving.image == "vllm/vllm-openai"  # GPU profiles: the install picks the tag (KV208)

    def rules(name: str) -> set[str]:
        return {d.rule for d in res.diagnostics if d.object.endswith(f"/{name}")}

    assert "KV501" in rules("llama-3.1-8b-instruct-cpu") and "KV208" in rules("llama-3.1-8b-instruct-fp8-l4")

    for name in (
        "llama-3.1-8b-instruct-cpu",
        "opt-125m-cpu",
        "e5-mistral-7b-instruct-cpu",
        "gemma-2b-it-tpu",
    ):
        assert "KV405" not in rules(name), name
    kv501 = [d for d in res.diagnostics if d.rule == "KV501"]
    assert any("CPU build of vllm" in d.message for d in kv501)
    assert any("Google TPU v5e is not a CUDA/ROCm GPU" in d.message for d in kv501)


def test_kaito_gpu_memory_utilization_follows_kaito() -> None:
    """KAITO v0.12.0: 0.84 by default, 0.82 on the A10 (by the GPU model of the VM size, from kvlint's
    instance-type table), the default on a MIG slice (no GPU model)."""
    from kvlint.accelerators import instance_type
    from kvlint.workloads import kaito_gpu_memory_utilization

    a10 = instance_type("Standard_NV36ads_A10_v5")
    a100 = instance_type("Standard_NC24ads_A100_v4")
    assert a10 is not None and a100 is not None and a10.accelerator and a100.accelerator
    assert kaito_gpu_memory_utilization(a10.accelerator.name) == "0.82"
    assert kaito_gpu_memory_utilization(a100.accelerator.name) == "0.84"
    assert kaito_gpu_memory_utilization(None) == "0.84"


@corpus
def test_kaito_multi_gpu_workspace_uses_every_gpu() -> None:
    """KAITO sets --tensor-parallel-size to the VM's GPU count itself (no 'GPUs sit idle' KV403)."""
    path = CORPUS / "kaito-project__kaito__examples__inference__kaito_workspace_llama-3.3_70b_instruct.yaml"
    (w,) = _workloads(path)
    args = list(w.pod_spec["containers"][0]["args"])
    assert "--tensor-parallel-size=2" in args and "--gpu-memory-utilization=0.84" in args
    assert "--max-model-len=auto" in args
    res = run_check([str(path)], Options(allow_hub=False))
    assert not {"KV403", "KV404"} & {d.rule for d in res.diagnostics}  # KAITO mounts a memory /dev/shm


@corpus
def test_kaito_inference_config_configmap_is_applied(tmp_path: Path) -> None:
    """KAITO passes inference.config as --kaito-config-file; its `vllm:` settings come after the command line
    (they win). With the ConfigMap among the inputs, max-model-len 16384 is read from it, located there."""
    path = CORPUS / "kaito-project__kaito__examples__inference__kaito_workspace_llama-3.3_70b_instruct.yaml"
    text = path.read_text().replace(
        "metadata:\n  name: workspace-llama",
        "metadata:\n  annotations: {kvlint.io/model: meta-llama/Llama-3.3-70B-Instruct}\n  name: workspace-llama",
    )
    ws = tmp_path / "k.yaml"
    ws.write_text(text)
    res = run_check([str(ws)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.serving.get("max_model_len") == 16384 and cr.serving.get("swap_space") == 4
    loc = cr.serving.loc("max_model_len")
    assert loc is not None and text.splitlines()[loc.line - 1].strip() == "max-model-len: 16384"
    assert not {"KV103", "KV202"} & {d.rule for d in res.diagnostics}
    # --swap-space is only a warning here (the KAITO image's vLLM release is not known; newer ones refuse it)
    assert all(d.severity == "warning" for d in res.diagnostics if d.rule == "KV205")
    # without the ConfigMap, kvlint says it could not read it
    alone = text.split("---\napiVersion: kaito.sh")[1]
    res = run_documents(load_text("apiVersion: kaito.sh" + alone, "w.yaml"), Options(allow_hub=False))
    assert any(
        "(the KAITO inference config): the file is mounted from ConfigMap llama-inference-params, which is not "
        "among the inputs" in d.message
        for d in res.diagnostics
    )


KAITO_PHI4 = (
    FIX
    / "collected"
    / "kaito-project__kaito__examples__inference__kaito_workspace_phi_4_mini_throughput.yaml"
)


@pytest.mark.parametrize("runtime, sized", [("transformers", False), ("vllm", True), ("Transformers", True)])
def test_kaito_transformers_runtime_is_said_not_sized(tmp_path: Path, runtime: str, sized: bool) -> None:
    """``kaito.sh/runtime: transformers`` (KAITO's docs, "inference" README) runs the preset on KAITO's Hugging Face
    Transformers runtime, not vLLM: it was sized as vLLM in silence. Only that exact value does
    (GetWorkspaceRuntimeName); any other keeps vLLM."""
    text = KAITO_PHI4.read_text()
    assert "    kaito.sh/performance-mode: throughput\n" in text
    path = tmp_path / "ws.yaml"
    path.write_text(
        text.replace("    kaito.sh/performance-mode: throughput\n", f"    kaito.sh/runtime: {runtime}\n")
    )
    res = run_check([str(path)], Options(allow_hub=False))
    notes = [d for d in res.diagnostics if d.rule == "KV503" and "Transformers runtime" in d.message]
    if sized:
        assert not notes and len(res.containers) == 1
        return
    (d,) = notes
    assert (
        d.message.startswith("kvlint does not read this Workspace") and "'phi-4-mini-instruct'" in d.message
    )
    assert d.loc.line == _line_of(path, "kaito.sh/runtime: transformers")
    assert not res.containers  # nothing is sized as vLLM
