"""OpenShift AI hardware profiles whose identifier counts odh-model-controller cannot use (internal/webhook/serving/
hardwareprofile/resolver.go ``parseProfile``/``parseQuantity`` at 57b43aad): an identifier without ``defaultCount``
was skipped and the service sized without it, although the webhook fails to parse the profile and refuses the
service; a fractional count was written as it is, although the CRD refuses it (an integer or a string) and the
webhook would truncate it. Both are now a KV206 error at the count, and the service is not sized. The service is a
real LLMInferenceService (test_leftovers25's ROSA sample) named to the profile; the profile is made up in the shape
the dashboard writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_leftovers25 import A100_PROFILE, _profiled_llmisvc

from kvlint.pipeline import Options, run_check

OFFLINE = Options(allow_hub=False)
GPU_LINE = "    - {defaultCount: 2, displayName: GPU, identifier: nvidia.com/gpu, maxCount: 4, minCount: 1, "
ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: granite
  namespace: redhat-ods-applications
  annotations:
    opendatahub.io/hardware-profile-name: a100-x2
spec:
  predictor:
    model:
      modelFormat: {name: vLLM}
      runtime: vllm-runtime
      storageUri: hf://ibm-granite/granite-3.1-8b-instruct
"""


def _profile(tmp_path: Path, count: str) -> Path:
    assert GPU_LINE in A100_PROFILE
    text = A100_PROFILE.replace("defaultCount: 2, ", count)
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("count", "said"),
    [
        ("", "has no defaultCount"),
        ("defaultCount: null, ", "has a null defaultCount"),
        ("defaultCount: true, ", "not an integer or a Kubernetes quantity"),
        ("defaultCount: two, ", "not an integer or a Kubernetes quantity"),
        ("defaultCount: 1.5, ", "is not a whole number"),
    ],
    ids=["missing", "null", "bool", "word", "fraction"],
)
def test_a_count_the_webhook_cannot_use_refuses_the_service(tmp_path: Path, count: str, said: str) -> None:
    svc = _profiled_llmisvc(tmp_path)
    profile = _profile(tmp_path, count)
    res = run_check([str(svc), str(profile)], OFFLINE)
    (d,) = [x for x in res.diagnostics if x.rule == "KV206" and "hardware profile 'a100-x2'" in x.message]
    assert d.severity == "error" and said in d.message
    assert (
        d.loc is not None
        and d.loc.file == str(profile)
        and d.loc.line
        == 1 + A100_PROFILE.splitlines().index(GPU_LINE.rstrip() + " resourceType: Accelerator}")
    )
    assert res.containers == []  # nothing is sized on a service that is never created
    # an InferenceService naming the profile is refused the same way
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(ISVC)
    res = run_check([str(isvc), str(profile)], OFFLINE)
    assert [x for x in res.diagnostics if x.rule == "KV206" and "hardware profile 'a100-x2'" in x.message]
    assert res.containers == []


@pytest.mark.parametrize(("count", "gpus"), [("defaultCount: '2', ", "2"), ("defaultCount: 2.0, ", "2")])
def test_whole_counts_as_a_string_or_a_whole_number_are_applied(
    tmp_path: Path, count: str, gpus: str
) -> None:
    svc = _profiled_llmisvc(tmp_path)
    profile = _profile(tmp_path, count)
    res = run_check([str(svc), str(profile)], OFFLINE)
    assert not [x for x in res.diagnostics if x.rule == "KV206" and "hardware profile" in x.message]
    (cr,) = res.containers
    assert cr.container["resources"]["limits"]["nvidia.com/gpu"] == gpus and cr.placement.gpus == 2
