"""Reading gaps left last stop: OpenShift AI hardware profiles on LLMInferenceServices, ..."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"

#: A real LLMInferenceService for OpenShift AI (manu-joy/rosa-llm-driven-deployment, Qwen3.6-35B-A3B-FP8 on an
#: ARO A100 node pool), with its own GPU request, nodeSelector and toleration.
ROSA_LLMISVC = (
    COLLECTED
    / "manu-joy__rosa-llm-driven-deployment__PCA_Deployment_ARO__argocd__03-ai-serving__llminferenceservice.yaml"
)

#: A HardwareProfile as OpenShift AI stores it (infrastructure.opendatahub.io/v1; fields of opendatahub-operator
#: api/infrastructure/v1/hardwareprofile_types.go): two A100 80GB GPUs, scheduled onto those nodes with a
#: toleration of its own. Made up for these tests in the shape of the profiles the dashboard writes.
A100_PROFILE = """apiVersion: infrastructure.opendatahub.io/v1
kind: HardwareProfile
metadata:
  name: a100-x2
  namespace: redhat-ods-applications
spec:
  identifiers:
    - {defaultCount: 2, displayName: GPU, identifier: nvidia.com/gpu, maxCount: 4, minCount: 1, resourceType: Accelerator}
  scheduling:
    type: Node
    node:
      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      tolerations:
        - {key: a100-only, operator: Exists, effect: NoSchedule}
"""


def _profiled_llmisvc(where: Path, *, container: str = "main") -> Path:
    """The ROSA LLMInferenceService without its GPU request (left to the profile, as the dashboard deploys
    it) and with the annotations naming the profile."""
    text = ROSA_LLMISVC.read_text()
    start, end = text.index("        resources:\n"), len(text)
    assert 'nvidia.com/gpu: "1"' in text[start:end]
    text = text[:start]
    text = text.replace(
        "  annotations:\n",
        "  annotations:\n    opendatahub.io/hardware-profile-name: a100-x2\n"
        "    opendatahub.io/hardware-profile-namespace: redhat-ods-applications\n",
        1,
    )
    assert text.count("      - name: main\n") == 1
    text = text.replace("      - name: main\n", f"      - name: {container}\n")
    path = where / "llmisvc.yaml"
    path.write_text(text)
    return path


def test_a_hardware_profile_is_applied_to_an_llminferenceservice_as_the_webhook_does(tmp_path):
    """odh-model-controller's LLMInferenceService webhook (applyHardwareProfileLLMISVC, ApplyToLLMIsvcResources,
    MergeNodeScheduling) writes the named profile's identifiers into the ``main`` container of spec.template
    and merges its node scheduling into the template, before KServe merges its presets under the service:
    the engine is sized on two A100 80GB GPUs (before, only InferenceServices got their profile, and this
    service was planned against the fleet with a KV405 info). Variants: a template whose containers have none
    named ``main`` gets nothing of the profile; without the profile among the inputs the GPUs are named as
    possibly coming from it."""
    svc = _profiled_llmisvc(tmp_path)
    profile = tmp_path / "profile.yaml"
    profile.write_text(A100_PROFILE)
    res = run_check([str(svc), str(profile)], Options(allow_hub=False))
    (cr,) = res.containers
    c = cr.container
    assert c["name"] == "main"
    assert c["resources"]["requests"]["nvidia.com/gpu"] == "2"
    assert c["resources"]["limits"]["nvidia.com/gpu"] == "2"
    # the service's own scheduling stays, the profile's is added (tolerations: the profile's first)
    assert cr.workload.pod_spec["nodeSelector"] == {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
    }
    assert [t["key"] for t in cr.workload.pod_spec["tolerations"]] == ["a100-only", "nvidia.com/gpu"]
    assert cr.placement.gpus == 2 and cr.placement.accelerator.id.startswith("nvidia-a100")
    assert cr.placement.gpus_loc.file == str(profile)
    assert cr.plan is not None
    assert not [d for d in res.diagnostics if d.rule in ("KV405", "KV501")]

    # a template with containers but none named main: the webhook applies nothing of the profile
    (tmp_path / "other").mkdir()
    other = _profiled_llmisvc(tmp_path / "other", container="vllm")
    res = run_check([str(other), str(profile)], Options(allow_hub=False))
    assert res.containers and all(c.placement.gpus != 2 for c in res.containers)
    assert all(
        "nvidia.com/gpu.product" not in c.workload.pod_spec.get("nodeSelector", {}) for c in res.containers
    )

    # the profile not among the inputs: the missing GPU is said to possibly come from it
    res = run_check([str(svc)], Options(allow_hub=False))
    assert [d for d in res.diagnostics if d.rule == "KV405" and "hardware profile 'a100-x2'" in d.message]
