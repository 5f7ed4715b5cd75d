"""One OpenShift AI hardware profile named by many InferenceServices, and one set of extended resources in many
containers: the work grows with the manifest, not with their product. Counted (resource entries applied, GPU
resource names compared), never timed. Before: a profile of 4,000 identifiers named by 400 services (390 KB) made
1.6 million resource entries (77 s of CPU), and KV409's memo of 512 names, cycled by 1,000 names a container,
compared every name again in every container (400,000 difflib comparisons for 200 containers)."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import run_documents
from kvlint.rules.families.parallelism import _close_gpu_resource
from kvlint.webhook.request_options import webhook_options
from kvlint.workloads import find_workloads
from kvlint.workloads.hardwareprofile import MAX_PROFILE_IDENTIFIERS


def _profile(n: int) -> str:
    idents = "".join(f"  - {{identifier: example.com/r{i}, defaultCount: 1}}\n" for i in range(n))
    return (
        "apiVersion: infrastructure.opendatahub.io/v1\nkind: HardwareProfile\nmetadata: {name: p}\nspec:\n"
        "  identifiers:\n  - {identifier: nvidia.com/gpu, defaultCount: 2, maxCount: 2}\n" + idents
    )


def _service(i: int) -> str:
    return (
        f"---\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {{name: s{i}, annotations: "
        "{opendatahub.io/hardware-profile-name: p}}\nspec: {predictor: {model: {modelFormat: {name: vLLM}, "
        "image: 'vllm/vllm-openai:v0.11.0', args: ['--model', 'meta-llama/Llama-3.1-8B-Instruct']}}}\n"
    )


def test_a_large_profile_named_by_many_services_applies_a_bounded_number_of_identifiers() -> None:
    n, m = 2_000, 50
    docs = load_text(_profile(n) + "".join(_service(i) for i in range(m)), "p.yaml").documents
    ws = [w for w in find_workloads(docs) if w.kind == "InferenceService"]
    assert len(ws) == m
    applied = 0
    for w in ws:
        (c,) = w.pod_spec["containers"]
        requests, limits = c["resources"]["requests"], c["resources"]["limits"]
        assert requests["nvidia.com/gpu"] == "2" and limits["nvidia.com/gpu"] == "2"  # the profile's GPUs
        applied += len(requests) + len(limits)
    # requests and limits each hold at most the bound (the webhook sets a limit for each request); 200,000
    # before the bound: every identifier in both, everywhere
    assert applied <= m * 2 * (MAX_PROFILE_IDENTIFIERS + 1), applied


def test_gpu_resource_names_are_compared_once_however_many_containers_hold_them() -> None:
    names, pods = 1_000, 30
    limits = "".join(f"            example.com/r{i}: 1\n" for i in range(names))
    pod = (
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}}}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
        "        args: [--model, meta-llama/Llama-3.1-8B-Instruct]\n        resources:\n          limits:\n"
        "            nvidia.com/gpu: 1\n"
    )
    text = "".join(
        pod.format(i=i).replace("            nvidia.com/gpu: 1\n", "            nvidia.com/gpu: 1\n" + limits)
        for i in range(pods)
    )
    _close_gpu_resource.cache_clear()
    result = run_documents(load_text(text, "pods.yaml"), webhook_options())
    assert len(result.containers) == pods
    assert not [d for d in result.diagnostics if d.rule in ("KV409", "KV405", "KV005")]
    info = _close_gpu_resource.cache_info()
    assert info.misses <= names + 10, info  # 30,000 before: the memo of 512 names cycled in every container
