"""New-user pass 45: real public manifests kvlint had not seen (fixtures/collected, sources in its INDEX.csv), and
what a first run on them showed to be wrong, each checked on the file itself and on the engine's source.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.engines.command import parse_command_line
from kvlint.pipeline import Options, run_check
from kvlint.sizing import sizing_of

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
GRPC = COLLECTED / (
    "kubernetes-sigs__gateway-api-inference-extension__config__manifests__vllm__gpu-grpc-deployment.yaml"
)
HYPERPOD_LMCACHE = COLLECTED / (
    "aws-samples__sagemaker-genai-hosting-examples__SageMakerHyperpod__lmcache-qwen38b__lmcache-qwen-8b.yaml"
)


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def test_vllm_grpc_server_module_is_read_as_vllm() -> None:
    """The Gateway API Inference Extension's gRPC vLLM Deployment runs ``python3 -m vllm.entrypoints.grpc_server
    --model Qwen/Qwen3-32B ...``. vLLM's gRPC server (vllm/entrypoints/grpc_server.py ``main``) parses the engine's
    own options (``AsyncEngineArgs.add_cli_args``) plus ``--host``/``--port``, so its memory is the engine's; kvlint
    said the command "cannot be read" (KV503) and left it unsized."""
    text = GRPC.read_text()
    assert '["python3", "-m", "vllm.entrypoints.grpc_server"]' in text
    res = _run(GRPC)
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.engine == "vllm"
    assert cr.model is not None and cr.model.id == "Qwen/Qwen3-32B"
    assert not [d for d in res.diagnostics if d.rule == "KV503"]
    assert sizing_of(cr) == "fleet"  # no GPU named: planned against kvlint's fleet


def test_vllm_grpc_server_command_takes_engine_options() -> None:
    sc = parse_command_line(
        [
            "python3",
            "-m",
            "vllm.entrypoints.grpc_server",
            "--model",
            "Qwen/Qwen3-8B",
            "--tensor-parallel-size",
            "2",
        ]
    )
    assert sc.engine == "vllm" and sc.model is not None and sc.model.value == "Qwen/Qwen3-8B"
    assert sc.flags["tensor_parallel_size"].value == 2
    # like the OpenAI server module, it takes no positional model
    other = parse_command_line(["python3", "-m", "vllm.entrypoints.grpc_server", "Qwen/Qwen3-8B"])
    assert other.engine == "vllm" and (other.model is None or other.model.value != "Qwen/Qwen3-8B")


def test_hyperpod_instance_type_label_names_the_gpu(tmp_path: Path) -> None:
    """SageMaker HyperPod's LMCache sample pins its vLLM Deployment to ``node.kubernetes.io/instance-type:
    "ml.g5.4xlarge"``, the SageMaker name HyperPod nodes carry. kvlint knew ``g5.4xlarge`` (one A10G) but not the
    ``ml.`` name and said it "cannot tell which GPU this pod lands on" (KV501). Its model (DeepSeek-R1-0528-Qwen3-8B)
    is not in the catalogue, so the check runs on the same file serving a catalogued model of that family."""
    text = HYPERPOD_LMCACHE.read_text()
    assert 'node.kubernetes.io/instance-type: "ml.g5.4xlarge"' in text
    manifest = tmp_path / "hyperpod.yaml"
    manifest.write_text(text.replace("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "Qwen/Qwen3-8B"))
    res = _run(manifest)
    (cr,) = res.containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == "nvidia-a10g"
    assert sizing_of(cr) == "plan"
    assert not [d for d in res.diagnostics if d.rule == "KV501"]


PHI4_MINI = COLLECTED / (
    "kubernetes-sigs__gateway-api-inference-extension__config__manifests__bbr-example__vllm-phi4-mini.yaml"
)


def test_kv202_without_a_gpu_quotes_the_longrope_default() -> None:
    """The Inference Extension's body-based-routing example serves microsoft/Phi-4-mini-instruct (LongRoPE: 131,072
    positions, original_max_position_embeddings 4,096) with no --max-model-len and no GPU named. vLLM then uses the
    original 4,096 (vllm/config/model.py ``_get_and_verify_max_len``), as kvlint's plan on a named GPU says; with no
    GPU, KV202 quoted the 131,072-token "full context" and proposed ``--max-model-len 32768``, which would raise the
    limit eightfold. It now quotes the length vLLM uses, the same one the fleet verdict plans with."""
    text = PHI4_MINI.read_text()
    assert "vllm serve microsoft/Phi-4-mini-instruct" in text and "max-model-len" not in text
    assert "nodeSelector" not in text
    res = _run(PHI4_MINI)
    (kv202,) = [d for d in res.diagnostics if d.rule == "KV202"]
    (cr,) = res.containers
    assert sizing_of(cr) == "fleet"
    cfg = cr.model.config  # type: ignore[union-attr]
    original = cfg["original_max_position_embeddings"]
    assert cfg["rope_scaling"]["type"] == "longrope" and original < cfg["max_position_embeddings"]
    assert "original_max_position_embeddings" in kv202.message
    assert f"{original} tokens, of the {cfg['max_position_embeddings']:,}" in kv202.message
    assert f"--max-model-len {original} pins" in (kv202.fix or "")
    assert "32768" not in (kv202.fix or "")


GPTOSS_CPU = COLLECTED / "jimmyshah83__aks-ai-accelerator__k8s__llm__vllm__gpt-oss__20b__vllm-deployment.yaml"


def test_kv205_suggestion_retired_before_an_unpinned_image_says_so() -> None:
    """An AKS sample runs ``vllm serve openai/gpt-oss-20b --device-type cpu`` on ``vllm/vllm-openai:latest``. No vLLM
    release has ``--device-type``; kvlint, checking against every release's options (the image is not pinned),
    suggested "did you mean --device?" and "use --device", an option vLLM dropped after 0.9.2 that the current
    image refuses as well. The suggestion now says which releases accept it; for a pinned old release it stays
    as it was."""
    from kvlint.engines.vllm import option_versions

    first, last = option_versions("--device")  # type: ignore[misc]
    assert option_versions("--device-type") is None
    text = GPTOSS_CPU.read_text()
    assert "image: vllm/vllm-openai:latest" in text and "--device-type cpu" in text
    res = _run(GPTOSS_CPU)
    (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert "vLLM (any release)" in kv205.message
    assert f"did you mean --device (an option of vLLM {first} to {last} only" in kv205.message
    assert (kv205.fix or "").startswith(f"use --device on vLLM {first} to {last} only")
    assert "remove --device-type" in (kv205.fix or "")
    pinned = parse_command_line(["vllm", "serve", "Qwen/Qwen3-8B", "--device-type", "cpu"], version=first)
    (f,) = [x for x in pinned.findings if x.rule == "KV205"]
    assert f.message.endswith("did you mean --device?") and f.fix == "use --device"


GKE_OVERLAYS = COLLECTED / "trees" / "gke-samples-gemma-vllm-kustomize"
HAS_KUSTOMIZE = shutil.which("kustomize") is not None or shutil.which("kubectl") is not None


@pytest.mark.skipif(not HAS_KUSTOMIZE, reason="no kustomize")
def test_overlay_naming_a_file_above_it_gets_the_load_restrictor_fix() -> None:
    """GKE's Gemma vLLM overlays (``vllm-7b-token``, ``vllm-2b-parallel``) list ``resources: [../vllm-7b.yaml]``, a
    file above the kustomization, which kustomize's default load restrictor refuses ("security; file ... is not in
    or below ..."). kvlint reported the error with "run `kubectl kustomize ...` and fix what it reports", which
    reports the same words again. The fix now says what the restrictor allows and how to restructure."""
    for overlay in ("vllm-7b-token", "vllm-2b-parallel"):
        text = (GKE_OVERLAYS / overlay / "kustomization.yaml").read_text()
        assert "- ../vllm-7b.yaml" in text
        res = _run(GKE_OVERLAYS / overlay)
        (kv001,) = [d for d in res.diagnostics if d.rule == "KV001"]
        assert "is not in or below" in kv001.message
        assert "LoadRestrictionsRootOnly" in (kv001.fix or "")
        assert "directory with a kustomization.yaml" in (kv001.fix or "")
        assert not res.containers  # nothing was built, nothing sized


@pytest.mark.skipif(not HAS_KUSTOMIZE, reason="no kustomize")
def test_a_file_above_an_overlay_is_read_as_a_plain_file_in_a_walk() -> None:
    """Walking the same tree, kvlint left ``vllm-7b.yaml`` to the overlays that name it, whose builds kustomize
    refuses: the base, a Deployment GKE's tutorial applies as it is, was read by nothing (0 serving containers, no
    finding on it). kustomize loads a file only from within the kustomization's directory, so the walk now reads
    a file above it as a plain file; files inside a kustomization stay left to its build."""
    res = _run(GKE_OVERLAYS)
    assert len([d for d in res.diagnostics if d.rule == "KV001"]) == 2
    (cr,) = res.containers
    assert cr.workload.doc.path.endswith("gke-samples-gemma-vllm-kustomize/vllm-7b.yaml")
    assert sizing_of(cr) == "plan"  # GKE's nvidia-l4 node selector names the GPU


@pytest.mark.skipif(not HAS_KUSTOMIZE, reason="no kustomize")
def test_the_paths_kustomizes_error_quotes_are_named_as_the_findings_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Run from the tree's own directory, the KV001 was at ``vllm-2b-parallel/kustomization.yaml`` while the
    kustomize error it quotes named ``fixtures/collected/trees/.../vllm-7b.yaml`` (from the repository's root):
    two conventions in one finding (ux50). The quoted paths below the working directory are named from it, as
    the finding's file is; from the repository's root the two coincide, as before."""
    monkeypatch.chdir(GKE_OVERLAYS)
    res = run_check(["vllm-2b-parallel"], Options(allow_hub=False))
    (kv001,) = [d for d in res.diagnostics if d.rule == "KV001"]
    assert kv001.loc is not None and kv001.loc.file == "vllm-2b-parallel/kustomization.yaml"
    assert "file 'vllm-7b.yaml' is not in or below 'vllm-2b-parallel'" in kv001.message, kv001.message
    assert "fixtures/collected" not in kv001.message
