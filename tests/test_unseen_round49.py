"""Real public manifests kvlint had not seen (new-user pass 49, fixtures/collected: AMD Inference Microservices,
vLLM Semantic Router's backends, inference-perf's KubeCon demo, RayServices, OpenShift AI runtimes, OVHcloud, Intel
Gaudi and ROCm). What a first run on them showed to be wrong, each checked on the file itself and on a general case."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kvlint.pipeline import Options, run_check
from kvlint.sizing import summarise

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
AIM = "amd-enterprise-ai__aim-deploy__"


def _run(paths: list[str]):  # type: ignore[no-untyped-def]
    return run_check(paths, Options(allow_hub=False))


def test_amd_aim_deployment_is_said_not_read() -> None:
    """AMD's AIM Deployment (``amdenterpriseai/aim-meta-llama-llama-3-1-8b-instruct:0.11.0``, ``AIM_ENGINE=vllm``,
    ``amd.com/gpu: 1``) passed as "0 errors, 0 warnings ... 0 serving containers": AIM's entrypoint picks the engine
    and its arguments from a profile, like NIM's launcher. Now a KV503 info at the image, counted as not read."""
    res = _run([str(COLLECTED / (AIM + "k8s__sample-minimal-aims-deployment__deployment.yaml"))])
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.severity == "info"
    assert "AMD Inference Microservice (AIM)" in d.message and "AIM_ENGINE=vllm" in d.message, d.message
    assert "amd.com/gpu: 1" in d.message, d.message
    assert d.loc is not None and d.loc.line == 20, d.loc  # the image line
    assert summarise(res).not_read == 1


def test_amd_aim_kserve_runtime_joined_with_its_inference_service() -> None:
    """The KServe pair (an InferenceService with ``amd.com/gpu: 1`` naming AIM's ClusterServingRuntime): the joined
    container was silent too; AIM_ENGINE unset is said as the profile's choice."""
    base = AIM + "kserve__sample-minimal-aims-deployment__"
    res = _run(
        [
            str(COLLECTED / (base + "aim-qwen3-32b.yaml")),
            str(COLLECTED / (base + "servingruntime-aim-qwen3-32b.yaml")),
        ]
    )
    (d,) = [d for d in res.diagnostics if d.rule == "KV503"]
    assert d.object == "InferenceService/aim-qwen3-32b", d.object
    assert "AIM_ENGINE unset" in d.message, d.message
    assert summarise(res).not_read == 1


@pytest.mark.parametrize(
    ("image", "command", "noted"),
    [
        ("docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.10.0", None, True),
        ("amdenterpriseai/aim-base:0.11", ["/bin/bash", "-c", "pip install x && exec ./entrypoint.py"], True),
        # AIM's download-to-cache (a Job that fills the model cache) is not the server
        ("amdenterpriseai/aim-base:0.11", ["download-to-cache"], False),
        # another namespace's aim-* image, or another repository of AMD's namespace: not AIM
        ("example/aim-qwen:1", None, False),
        ("amdenterpriseai/other:1", None, False),
    ],
)
def test_amd_aim_image_general(tmp_path: Path, image: str, command: list[str] | None, noted: bool) -> None:
    container = {"name": "aim", "image": image, "resources": {"limits": {"amd.com/gpu": 2}}}
    if command:
        container["command"] = command

    f = tmp_path / "d.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {"template": {"spec": {"containers": [container]}}},
            }
        )
    )
    res = _run([str(f)])
    notes = [d for d in res.diagnostics if d.rule == "KV503" and "AIM" in d.message]
    assert bool(notes) is noted, [d.message for d in res.diagnostics]
    if noted:
        assert "amd.com/gpu: 2" in notes[0].message


def _kv502(path: str) -> list:  # type: ignore[type-arg]
    return [d for d in _run([path]).diagnostics if d.rule == "KV502"]


def test_unresolved_speculative_draft_is_said() -> None:
    """inference-perf's EAGLE-3 variant (``--speculative_config {"method": "eagle3", "model":
    "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", ...}``) was planned on its H100 with "0 findings" and nothing in the plan's
    assumptions: the draft's config.json is not available offline, so the plan sized the target alone (the stage's
    note "planned without it" reached no report). Now a KV502 info at the --speculative-config value."""
    (d,) = _kv502(
        str(COLLECTED / "kubernetes-sigs__inference-perf__demos__kubecon-na-2025__vllm+eagle__manifests.yaml")
    )
    assert d.severity == "info"
    assert "speculative draft model 'yuhuili/EAGLE3-LLaMA3.1-Instruct-8B'" in d.message, d.message
    assert "sizes meta-llama/Llama-3.1-8B-Instruct alone" in d.message, d.message
    assert "config.json not found" in d.message and d.message.count("(") == d.message.count(")"), d.message
    assert d.loc is not None and d.loc.line == 26, d.loc
    assert "kvlint models pull yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" in (d.fix or ""), d.fix
    assert "kvlint.io/model" not in (d.fix or ""), (
        d.fix
    )  # the annotation names the served model, not its drafter


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ('{"model": "Qwen/Qwen2.5-0.5B-Instruct", "num_speculative_tokens": 3}', False),  # resolved offline
        (
            '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}',
            False,
        ),  # no drafter model
        ('{"model": "example-org/no-such-draft", "num_speculative_tokens": 3}', True),
    ],
)
def test_speculative_draft_general(tmp_path: Path, spec: str, said: bool) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d"},
                "spec": {
                    "template": {
                        "spec": {
                            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
                            "containers": [
                                {
                                    "name": "vllm",
                                    "image": "vllm/vllm-openai:v0.11.0",
                                    "args": [
                                        "--model",
                                        "Qwen/Qwen2.5-7B-Instruct",
                                        "--max-model-len",
                                        "4096",
                                        "--speculative-config",
                                        spec,
                                    ],
                                    "resources": {"limits": {"nvidia.com/gpu": 1}},
                                }
                            ],
                        }
                    }
                },
            }
        )
    )
    found = [d for d in _kv502(str(f)) if "speculative draft" in d.message]
    assert bool(found) is said, [d.message for d in _run([str(f)]).diagnostics]
