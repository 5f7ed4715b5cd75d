"""Real public manifests kvlint had not seen (new-user pass 24, fixtures/collected: KAITO InferenceSet and
Workspace examples, NIM operator samples, KServe LLMInferenceService samples, AIBrix's brixbench deployments of
vLLM, llm-d and Dynamo, KubeAI models, an llm-d SGLang StatefulSet, AMD ROCm Helm charts). What a first run on
them showed to be wrong, each checked on the file itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.engines.images import dynamo_runtime, engine_version
from kvlint.pipeline import Options, run_check
from kvlint.sizing import sizing_of
from kvlint.workloads.kaito import kaito_node_count

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
DYNAMO_MIRROR = COLLECTED / (
    "vllm-project__aibrix__brixbench__benchmark__testdata__deployments__dynamo__qwen3-32b-round-robin-4p8d-vke.yaml"
)


def _rule(path: Path, rule: str, **kw: object) -> list:
    res = run_check([str(path)], Options(allow_hub=False, **kw))  # type: ignore[arg-type]
    return [d for d in res.diagnostics if d.rule == rule]


def test_a_mirrored_dynamo_runtime_image_tag_is_a_dynamo_release() -> None:
    """AIBrix's brixbench Dynamo deployment pulls NVIDIA Dynamo's vLLM runtime from its own registry, with the path
    flattened: ``<registry>/aibrix/ai-dynamo-vllm-runtime:1.2.0``. kvlint did not know it as a Dynamo runtime image
    and read the Dynamo release 1.2.0 in its tag as vLLM 1.2.0: a KV208 warning on each worker ("vLLM 1.2.0 ... is
    newer than the releases kvlint models"), and a KV504 that said kvlint applied "the rules of vLLM 1.2.0, the
    release --engine-version names" when no --engine-version was given. The tag is now a Dynamo release (1.2.0 is
    not in Dynamo's support matrix that kvlint read, so the vLLM inside is unknown and KV504 says so once)."""
    text = DYNAMO_MIRROR.read_text()
    image = "aibrix-public-release-cn-beijing.cr.volces.com/aibrix/ai-dynamo-vllm-runtime:1.2.0"
    assert text.count(f"image: {image}") == 3
    assert dynamo_runtime(image) == "vllm"
    assert dynamo_runtime("registry.example.com/team/ai-dynamo-sglang-runtime:1.0.1") == "sglang"
    assert engine_version(image) is None  # a Dynamo release kvlint's table does not list: the vLLM is unknown
    assert _rule(DYNAMO_MIRROR, "KV208") == []
    notes = _rule(DYNAMO_MIRROR, "KV504")
    assert len(notes) == 2  # the prefill and decode workers
    for d in notes:
        assert "the release --engine-version names" not in d.message and "vLLM 1.2.0" not in d.message
        assert "the image tag is a Dynamo release, so the vllm version inside is not known" in d.message
        assert "unless --engine-version names another" in d.message


def test_dynamo_worker_on_an_unknown_image_does_not_claim_engine_version(tmp_path: Path) -> None:
    """The same worker on an image kvlint does not know, whose tag it reads as the engine's release: KV504 said that
    release was the one --engine-version names. It says where the release was read, and with --engine-version
    given, that it applied that one."""
    manifest = tmp_path / "w.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: w\n        image: registry.example.com/team/custom-vllm:1.2.0\n"
        "        command: [python3, -m, dynamo.vllm, --model, Qwen/Qwen3-8B]\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    (d,) = _rule(manifest, "KV504")
    # tags51: custom-vllm's tag is the image's own version, not read as vLLM's; the note says the image is not one
    # kvlint knows (not that its tag is a Dynamo release) and which release it applied, not --engine-version's
    assert "the release --engine-version names" not in d.message and "Dynamo release" not in d.message
    assert (
        "the image is not one kvlint knows, so the vllm version inside is not known: kvlint applied the rules of "
        "vLLM " in d.message
    )
    (pinned,) = _rule(manifest, "KV504", engine_version="0.19.0")
    assert pinned.message.endswith(
        "kvlint applied the rules of vLLM 0.19.0, the release --engine-version names"
    )


KAITO_MIG = (
    COLLECTED / "kaito-project__kaito__examples__inference__kaito_inferenceset_mig_single_strategy.yaml"
)
MANAGED_DRA = COLLECTED / (
    "kserve__kserve__docs__samples__llmisvc__managed-dra__llm-inference-service-managed-dra-minimal.yaml"
)


def _sizing(path: Path) -> list[str]:
    res = run_check([str(path)], Options(allow_hub=False))
    return [sizing_of(cr) for cr in res.containers]


def test_kaito_on_bring_your_own_nodes_requests_the_gpus_itself() -> None:
    """KAITO's MIG single-strategy InferenceSet names no instanceType (no resource at all): KAITO runs the preset on
    existing nodes its labelSelector picks and requests nvidia.com/gpu = their GPU count, read from the nodes'
    labels. kvlint built the pod with no GPU resource and said KV405 "requests no GPU resource ... set
    resources.limits['nvidia.com/gpu']" (an InferenceSet has no resources field), KV501 "no GPU requested", and a
    KV202 "no --max-model-len" although KAITO passes --max-model-len=auto. The pod now has its GPUs from KAITO, is
    planned on the fleet with the engine's own workers, and carries KAITO's default flags."""
    text = KAITO_MIG.read_text()
    assert "resource:" not in text and "instanceType" not in text
    assert _rule(KAITO_MIG, "KV405") == [] and _rule(KAITO_MIG, "KV202") == []
    (d,) = _rule(KAITO_MIG, "KV501")
    assert "the pod's GPUs are requested by KAITO, as many as the nodes it picks have" in d.message
    assert "capacity rules skipped" not in d.message
    assert _sizing(KAITO_MIG) == ["fleet"]
    (kv208,) = _rule(KAITO_MIG, "KV208")
    assert "an InferenceSet has no image field" in kv208.message


def test_kserve_managed_dra_requests_the_gpus_through_a_claim() -> None:
    """KServe's managed DRA sample sets serving.kserve.io/exp-dra-device-class and no GPU in the template's
    resources: the controller adds a ResourceClaim of one gpu.nvidia.com device to the main container. kvlint said
    KV405 "requests no GPU resource" with a fix to set nvidia.com/gpu, and did not size it ("no GPU requested")."""
    assert "serving.kserve.io/exp-dra-device-class: gpu.nvidia.com" in MANAGED_DRA.read_text()
    assert _rule(MANAGED_DRA, "KV405") == []
    (d,) = _rule(MANAGED_DRA, "KV501")
    assert (
        "the pod's GPUs are requested by KServe's managed Dynamic Resource Allocation "
        "(serving.kserve.io/exp-dra-device-class: gpu.nvidia.com, 1 device)" in d.message
    )
    assert _sizing(MANAGED_DRA) == ["fleet"]


DRA_DEPLOYMENT = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: two-gpus
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.19.0
        args: [--model, Qwen/Qwen3-8B, --tensor-parallel-size, "2", --max-model-len, "8192"]
        resources:
          claims:
          - name: gpus
"""


def test_a_pod_with_dra_claims_is_not_a_pod_without_gpus(tmp_path: Path) -> None:
    """A Deployment that takes its GPUs through Dynamic Resource Allocation (pod resourceClaims from a
    ResourceClaimTemplate, the container's resources.claims; resource.k8s.io/v1, GA in Kubernetes 1.34), as the NIM
    operator's DRA samples do: KV405 told the user to set nvidia.com/gpu, and the container was not sized. It is now
    planned on the GPUs of the template among the inputs (kvlint.workloads.dra: 2 gpu.nvidia.com devices), and
    without the template with its engine's TP x PP workers, the claim named as what requests the GPUs; without the
    claim, KV405 still fires."""
    manifest = tmp_path / "dra.yaml"
    manifest.write_text(DRA_DEPLOYMENT)
    assert _rule(manifest, "KV405") == []
    (d,) = _rule(manifest, "KV501")
    assert "with 2 GPUs per pod: " in d.message and "requested by a Dynamic" not in d.message
    assert _sizing(manifest) == ["fleet"]
    unseen = tmp_path / "unseen.yaml"
    unseen.write_text(DRA_DEPLOYMENT[DRA_DEPLOYMENT.index("apiVersion: apps/v1") :])
    assert _rule(unseen, "KV405") == []
    (d,) = _rule(unseen, "KV501")
    assert (
        "with 2 GPUs per pod (the engine's own GPU workers; the pod's GPUs are requested by a Dynamic"
        in d.message
    )
    assert "(resources.claims: gpus (ResourceClaimTemplate two-gpus))" in d.message
    assert _sizing(unseen) == ["fleet"]
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        DRA_DEPLOYMENT.replace("        resources:\n          claims:\n          - name: gpus\n", "")
    )
    assert [d.severity for d in _rule(plain, "KV405")] == ["warning"]
    assert _sizing(plain) == ["no GPU requested"]


KAITO_V3 = COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_deepseek_v3.yaml"
KAITO_R1 = COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_deepseek_r1.yaml"
KAITO_GEMMA = (
    COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_gemma_3_27b_instruct.yaml"
)
GIB = 1024**3


def test_kaito_node_estimate_restates_kaitos_own_cases() -> None:
    """KAITO's node estimator, as its unit tests exercise it (kaito-project/kaito
    pkg/workspace/estimator/nodesestimator/estimator_test.go): Qwen2.5-Coder-32B (62.5 GiB of safetensors, 163840
    KV bytes a token) needs two single-A100 Standard_NC24ads_A100_v4 nodes; Falcon-7B (13.44 GiB, 8192 bytes a
    token) fits one A100 node and one 24 GiB A10 node."""
    assert kaito_node_count(1, 80, int(62.5 * GIB), 163840, None) == 2
    assert kaito_node_count(1, 80, int(13.44 * GIB), 8192, None) == 1
    assert kaito_node_count(1, 24, int(13.44 * GIB), 8192, None) == 1
    # a longer explicit context reserves more KV cache per GPU, and can take one more node
    assert kaito_node_count(1, 80, int(60 * GIB), 163840, 2048) == 1
    assert kaito_node_count(1, 80, int(60 * GIB), 163840, 32768) == 2


def _plan(path: Path) -> dict:
    res = run_check([str(path)], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.plan is not None, cr.plan_error
    return {"tp": cr.plan.tensor_parallel_size, "pp": cr.plan.pipeline_parallel_size, "cr": cr}


def test_kaito_spreads_a_preset_too_big_for_one_node_over_several() -> None:
    """KAITO's DeepSeek-V3 and DeepSeek-R1 Workspaces (Standard_NC80adis_H100_v5, two H100 NVL a node): KAITO
    estimates how many nodes the preset needs and runs it with TP = the node's GPUs and PP = the nodes, on a Ray
    cluster of its pods (resource.count is not read for vLLM). kvlint planned TP 2 on one node and reported KV101
    "weights need 313.48 GiB per GPU" as an error (the webhook denied KAITO's own example). It now plans the
    pipeline KAITO builds, with the node count from KAITO's estimator on kvlint's figures for the model."""
    for path in (KAITO_V3, KAITO_R1):
        assert "instanceType: Standard_NC80adis_H100_v5" in path.read_text()
        p = _plan(path)
        assert p["tp"] == 2 and p["pp"] > 1
        assert _rule(path, "KV101") == [] and _rule(path, "KV403") == []
        assert p["cr"].workload.group_size == p["pp"]
        assert "--distributed-executor-backend=ray" in list(p["cr"].serving.container["args"])


def test_kaito_preset_that_fits_one_node_stays_on_one() -> None:
    """Gemma 3 27B on one A100 (Standard_NC24ads_A100_v4) fits a node: no pipeline parallelism is added."""
    p = _plan(KAITO_GEMMA)
    assert (p["tp"], p["pp"]) == (1, 1)
    assert p["cr"].workload.group_size is None


def test_spreading_a_kaito_preset_leaves_the_workload_read_from_the_file_as_it_was() -> None:
    """The spread workload is a copy: the pod and container read from the Workspace keep KAITO's single-node
    command, so analysing the same workload again starts from the file, not from an already spread command."""
    from kvlint.load import load_text
    from kvlint.workloads import find_workloads
    from kvlint.workloads.kaito import spread_over_nodes

    (w,) = find_workloads(load_text(KAITO_V3.read_bytes(), str(KAITO_V3)).documents)
    (container,) = w.pod_spec["containers"]
    before = list(container["args"])
    assert w.kaito_sku == (2, 188) and not any("pipeline-parallel" in str(a) for a in before)
    spread, spread_container = spread_over_nodes(w, container, 3)
    assert list(container["args"]) == before and w.pod_spec["containers"][0] is container
    assert list(spread_container["args"]) == [
        *before,
        "--pipeline-parallel-size=3",
        "--distributed-executor-backend=ray",
    ]
    assert spread.pod_spec["containers"][0] is spread_container
    assert (spread.group_size, spread.kaito_sku, w.group_size) == (3, None, None)


def test_kaito_a10_sizes_are_in_the_estimators_sku_table(tmp_path: Path) -> None:
    """KAITO v0.12.0's SKU table (the one its node estimator reads, and its own estimator tests use) lists the A10
    sizes Standard_NV36ads_A10_v5 (1 GPU, 24 GiB) and Standard_NV72ads_A10_v5 (2 GPUs, 48 GiB): kvlint's table did
    not, so a preset too big for one A10 node was planned on one node (KV101) instead of the pipeline KAITO builds.
    Its own gpt-oss-20b example on one A10 still fits one node."""
    manifest = tmp_path / "r1-a10.yaml"
    manifest.write_text(KAITO_R1.read_text().replace("Standard_NC80adis_H100_v5", "Standard_NV36ads_A10_v5"))
    p = _plan(manifest)
    assert p["tp"] == 1 and p["pp"] > 1 and p["cr"].workload.group_size == p["pp"]
    gpt_oss = COLLECTED / "kaito-project__kaito__examples__inference__kaito_workspace_gpt_oss_20b.yaml"
    assert 'instanceType: "Standard_NV36ads_A10_v5"' in gpt_oss.read_text()
    g = _plan(gpt_oss)
    assert (g["tp"], g["pp"], g["cr"].workload.group_size) == (1, 1, None)


def test_managed_dra_device_count_as_kserve_reads_it(tmp_path: Path) -> None:
    """``serving.kserve.io/exp-dra-device-count`` is a whole number from 1 (KServe ``ManagedDRADeviceCount``:
    ``strconv.Atoi`` of the trimmed value, ``must be >= 1``; its validation refuses anything else). KV501 quoted
    any value as a count ("abc device(s)"); it gives a valid count as the devices, and says an invalid one is
    refused by KServe."""
    text = MANAGED_DRA.read_text()
    anno = "serving.kserve.io/exp-dra-device-class: gpu.nvidia.com\n"
    assert anno in text
    for value, says in [
        ('" 4 "', "gpu.nvidia.com, 4 devices"),
        ('"abc"', "exp-dra-device-count 'abc' is not a whole number from 1, which KServe refuses"),
        ('"0"', "exp-dra-device-count '0' is not a whole number from 1, which KServe refuses"),
    ]:
        variant = tmp_path / "dra.yaml"
        variant.write_text(text.replace(anno, f"{anno}    serving.kserve.io/exp-dra-device-count: {value}\n"))
        (d,) = _rule(variant, "KV501")
        assert says in d.message, value
    (d,) = _rule(MANAGED_DRA, "KV501")
    assert "gpu.nvidia.com, 1 device)" in d.message


def test_a_container_naming_many_dra_claims_gets_a_short_finding(tmp_path: Path) -> None:
    """KV501 names the first DRA claims and counts the rest: a container naming 2,000 claims put every one of them,
    with its template, in the finding (over 70 KB of text)."""
    from kvlint.accelerators.placement import DRA_CLAIMS_SHOWN

    n = 2000
    text = DRA_DEPLOYMENT.replace(
        "      - name: gpus\n        resourceClaimTemplateName: two-gpus\n",
        "".join(f"      - name: c{i}\n        resourceClaimTemplateName: t{i}\n" for i in range(n)),
    ).replace("          - name: gpus\n", "".join(f"          - name: c{i}\n" for i in range(n)))
    assert text.count("resourceClaimTemplateName:") == n
    manifest = tmp_path / "many.yaml"
    manifest.write_text(text)
    (d,) = _rule(manifest, "KV501")
    shown = ", ".join(f"c{i} (ResourceClaimTemplate t{i})" for i in range(DRA_CLAIMS_SHOWN))
    assert f"(resources.claims: {shown}, and {n - DRA_CLAIMS_SHOWN:,} more)" in d.message
    assert len(d.message) < 2000


def test_kaito_estimate_of_more_nodes_than_layers_is_an_error(tmp_path: Path) -> None:
    """KAITO's estimator does not cap the nodes at the model's layers (NodeEstimator.EstimateNodeCount, kaito-project/
    kaito v0.12.0) and vLLM's get_pp_indices does not refuse more stages than layers (it leaves stages empty, whose
    GPUs hold no KV cache). DeepSeek-R1 on one-A10 nodes with a 131,072-token context: the estimate (restated by
    kaito_node_count) exceeds the 61 layers, so kvlint reports an error naming both counts at the instanceType, with
    a larger GPU as the remedy, instead of planning a pipeline with empty stages."""
    manifest = tmp_path / "r1-a10-long.yaml"
    config = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r1-params}\ndata:\n  inference_config.yaml: |\n"
        "    vllm:\n      max-model-len: 131072\n---\n"
    )
    manifest.write_text(
        config
        + KAITO_R1.read_text().replace("Standard_NC80adis_H100_v5", "Standard_NV36ads_A10_v5")
        + '  config: "r1-params"\n'
    )
    res = run_check([str(manifest)], Options(allow_hub=False))
    (cr,) = res.containers
    layers = cr.model.num_layers
    stages = cr.serving.get("pipeline_parallel_size")
    assert isinstance(stages, int) and stages > layers
    (d,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert d.severity == "error"
    assert (
        f"--pipeline-parallel-size {stages} is more pipeline stages than the model's {layers} layers"
        in d.message
    )
    assert "KAITO's node estimator" in d.message
    assert f"at most {layers} nodes" in (d.fix or "") and "larger GPUs" in (d.fix or "")
    assert d.loc is not None and manifest.read_text().splitlines()[d.loc.line - 1].strip().startswith(
        "instanceType:"
    )
    assert cr.plan is None
    # within the layers (the file's own context), KAITO's pipeline is planned as before
    assert _plan(KAITO_R1)["pp"] <= layers


def test_user_pipeline_larger_than_the_layers_is_an_error(tmp_path: Path) -> None:
    """The same refusal for a --pipeline-parallel-size the command gives: more stages than layers (Qwen2.5-0.5B's 24)
    is an error at the flag, with a size of at most the layers as the remedy; as many stages as layers is planned."""

    def manifest(pp: int) -> Path:
        path = tmp_path / f"pp{pp}.yaml"
        path.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: w\n        image: vllm/vllm-openai:v0.11.0\n"
            f"        args: [--model, Qwen/Qwen2.5-0.5B-Instruct, --pipeline-parallel-size, '{pp}',"
            " --distributed-executor-backend, ray]\n"
            f"        resources: {{limits: {{nvidia.com/gpu: {pp}}}}}\n"
            "      nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
        )
        return path

    res = run_check([str(manifest(25))], Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model.num_layers == 24 and cr.plan is None
    (d,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert (
        d.severity == "error"
        and "--pipeline-parallel-size 25 is more pipeline stages than the model's 24" in d.message
    )
    assert "KAITO" not in d.message and "at most 24" in (d.fix or "")
    res = run_check([str(manifest(24))], Options(allow_hub=False))
    assert res.containers[0].plan is not None and not [d for d in res.diagnostics if d.rule == "KV502"]
