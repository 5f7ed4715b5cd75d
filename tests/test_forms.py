"""Issue 16: every way the real manifests of fixtures/collected (and the shared corpus) declare a server is read,
and what cannot be read gets a finding naming the true cause.

Data: the real public manifests of fixtures/collected (sources, commits and licences in its INDEX.csv) and of
../shared/corpus/manifests (its INDEX.csv). Where a test needs a broken variant (a misspelt key, a probe on the
wrong port, a misspelt GPU resource), it takes a real manifest and changes the one thing named in the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check, run_documents
from kvlint.sizing import sizing_of

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
CORPUS = ROOT.parent / "shared" / "corpus" / "manifests"
OPTS = Options(allow_hub=False)


def run(*names: str, **kw):
    return run_check([str(COLLECTED / n) for n in names], Options(allow_hub=False, **kw))


def run_text(text: str, name: str = "derived.yaml"):
    return run_documents(load_text(text, name), OPTS)


def real(name: str) -> str:
    return (COLLECTED / name).read_text()


def by_rule(result, rule: str) -> list:
    return [d for d in result.diagnostics if d.rule == rule]


def one(result, path: str):
    (cr,) = [c for c in result.containers if c.workload.path == path]
    return cr


# ------------------------------------------------------------------------------------------------------------
# KServe LLMInferenceService

NEMOTRON = "kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__nemotron-3-ultra-pd.yaml"
QWEN_PD = (
    "kserve__kserve__docs__samples__llmisvc__single-node-gpu__llm-inference-service-pd-qwen2-7b-gpu.yaml"
)
DP_EP = (
    "kserve__kserve__docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__"
    "llm-inference-service-dp-ep-deepseek-r1-pd-gpu-p-deepep-ht-d-deepep-ht.yaml"
)


def test_llmisvc_model_uri_and_vllm_additional_args_are_read() -> None:
    r = run(NEMOTRON)
    decode, prefill = one(r, "spec.template"), one(r, "spec.prefill.template")
    for cr in (decode, prefill):
        # the preset's `vllm serve /mnt/models ... ${VLLM_ADDITIONAL_ARGS}` with the service's env value
        assert cr.serving.model.value == "/mnt/models"
        assert cr.workload.derived_model == "RedHatAI/NVIDIA-Nemotron-3-Ultra-550B-A55B-FP8-block"
        assert cr.serving.get("tensor_parallel_size") == 8 and cr.serving.get("kv_cache_dtype") == "fp8"
        assert cr.placement.gpus == 8
    # the decode preset puts vLLM behind the routing sidecar on 8001; prefill listens on 8000
    assert (decode.serving.get("port"), prefill.serving.get("port")) == (8001, 8000)
    assert not any("injected" in d.message or "controller" in d.message for d in r.diagnostics)
    # the service names its image (an llm-d release tag), so not "chosen by a controller"; that tag is llm-d's
    # release, not vLLM's, so KV208 is the info saying which vLLM release kvlint assumed
    assert {(d.severity, "names no vLLM release" in d.message) for d in by_rule(r, "KV208")} == {
        ("info", True)
    }


def test_llmisvc_without_image_uses_kserve_presets_and_says_so() -> None:
    r = run(QWEN_PD)
    crs = {c.workload.path: c for c in r.containers}
    assert set(crs) == {"spec.template", "spec.prefill.template"}
    for cr in crs.values():
        assert cr.serving.engine == "vllm" and cr.serving.image.startswith("ghcr.io/llm-d/llm-d-cuda")
        assert cr.workload.derived_model == "Qwen/Qwen2.5-7B-Instruct"
        assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct"
    (kv208,) = {d.message for d in by_rule(r, "KV208")}
    assert "kserve-config-llm-prefill-template" in kv208 and "KServe release" in kv208


def test_llmisvc_pd_with_two_worker_templates_reads_parallelism_from_the_go_template() -> None:
    r = run(DP_EP)
    crs = {c.workload.path: c for c in r.containers}
    assert set(crs) == {"spec.template", "spec.worker", "spec.prefill.template", "spec.prefill.worker"}
    for path, cr in crs.items():
        s, w = cr.serving, cr.workload
        assert (
            s.get("data_parallel_size"),
            s.get("data_parallel_size_local"),
            s.get("tensor_parallel_size"),
        ) == (
            16,
            8,
            1,
        )
        assert w.group_size == 2 and w.role == ("worker" if path.endswith("worker") else "leader")
    # 16 DP ranks, 8 per pod on 8 GPUs: nothing idle, nothing missing (each pod runs its own local ranks)
    assert not by_rule(r, "KV403")
    (note,) = by_rule(r, "KV504")
    assert "pvc://llm-test-pvc-deepseek" in note.message and "deepseek-ai/DeepSeek-R1-0528" in note.message


def test_llmisvc_baseref_in_the_same_run_is_merged_and_a_missing_one_is_named() -> None:
    base = COLLECTED / "charts" / "kserve-llmisvc-e2e-gpt-oss"
    r = run_check([str(base / "inference_default.yaml"), str(base / "llmisvc_config_default.yaml")], OPTS)
    (cr,) = r.containers
    assert cr.object_ref == "LLMInferenceService/gpt-oss-20b" and cr.serving.command_loc.file.endswith(
        "llmisvc_config_default.yaml"
    )
    assert not [d for d in r.diagnostics if d.object.startswith("LLMInferenceServiceConfig")]
    alone = run_check([str(base / "inference_default.yaml")], OPTS)
    (missing,) = [d for d in alone.diagnostics if "not among the inputs" in d.message]
    assert missing.rule == "KV503" and "llmisvc-intelligent-inference-scheduling" in missing.message


def test_llmisvc_config_alone_quotes_its_go_template_values() -> None:
    r = run("kserve__kserve__config__llmisvcconfig__config-llm-decode-worker-data-parallel.yaml")
    texts = [d.message for d in r.diagnostics]
    assert not any("{{_" in t for t in texts)
    assert any("{{ or .Spec.Parallelism.Data 1 }}" in t for t in texts)
    (note,) = [d for d in by_rule(r, "KV502") if "is a preset" in d.message]
    assert note.severity == "info"


# ------------------------------------------------------------------------------------------------------------
# InferenceService + ServingRuntime

PARASOL = COLLECTED / "charts" / "parasol-insurance-ic-shared-llm"


def test_inference_service_is_merged_with_its_runtime_from_the_same_run() -> None:
    r = run_check(
        [
            str(PARASOL / "inference-service-granite-modelcar.yaml"),
            str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml"),
        ],
        OPTS,
    )
    (cr,) = r.containers
    s = cr.serving
    assert cr.object_ref == "InferenceService/ic-shared-llm/granite-3-1-8b-instruct"
    assert s.image == "quay.io/modh/vllm:rhoai-2.19-cuda" and s.model.value == "/mnt/models"
    assert s.get("max_model_len") == 15000 and s.get("dtype") == "half" and cr.placement.gpus == 1
    assert not [d for d in r.diagnostics if d.object.startswith("ServingRuntime")]


def test_inference_service_whose_runtime_is_missing_says_so() -> None:
    r = run_check([str(PARASOL / "inference-service-granite-modelcar.yaml")], OPTS)
    assert r.containers == []
    (d,) = by_rule(r, "KV503")
    assert "'vllm'" in d.message and "not among the inputs" in d.message


@pytest.fixture
def helm_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if shutil.which("helm") is None:
        pytest.skip("helm is not installed")


def test_multinode_runtime_head_and_ray_worker(helm_on_path: None) -> None:
    r = run_check(
        [str(COLLECTED / "charts" / "vllm-kserve")],
        Options(allow_hub=False, helm_set=("servingTopology=multiNode",)),
    )
    head, worker = one(r, "spec.predictor.model"), one(r, "spec.predictor.workerSpec")
    # CMD="python3 -m vllm... --tensor-parallel-size=${TENSOR_PARALLEL_SIZE} ..."; exec $CMD, with KServe's env
    assert head.serving.get("distributed_executor_backend") == "ray"
    assert (head.serving.get("tensor_parallel_size"), head.serving.get("pipeline_parallel_size")) == (1, 2)
    assert worker.serving.joins is not None and worker.serving.joins.leader is not None
    assert worker.serving.joins.how.startswith("ray start --address=")
    texts = " ".join(d.message for d in r.diagnostics)
    assert "Ray Serve" not in texts and "SECONDS" not in texts


# ------------------------------------------------------------------------------------------------------------
# images


def test_vllm_derived_image_args_only_is_read_as_vllm() -> None:
    r = run("rh-aiservices-bu__llm-on-openshift__llm-servers__vllm__gpu__gitops__deployment.yaml")
    (cr,) = r.containers
    assert cr.serving.model.value == "mistralai/Mistral-7B-Instruct-v0.2" and cr.serving.version == "0.4.2"
    assert not by_rule(r, "KV504")  # quay.io/rh-aiservices-bu/vllm-openai-ubi9 is a known vLLM build


def test_unknown_image_with_vllm_arguments_is_read_with_the_assumption_stated() -> None:
    r = run(
        "GoogleCloudPlatform__accelerated-platforms__use-cases__inferencing__serving__vllm__gcsfuse__manifests__model-deployment-l4.yaml"
    )
    (cr,) = r.containers
    assert (
        cr.serving.engine == "vllm" and cr.serving.get("tensor_parallel_size") == 2 and cr.placement.gpus == 2
    )
    (assumed,) = by_rule(r, "KV504")
    assert "V_IMAGE_NAME" in assumed.message and assumed.severity == "info"
    (placeholder,) = by_rule(r, "KV002")
    assert "'V_IMAGE_NAME' is an upper-case placeholder" in placeholder.message


def test_envsubst_template_is_reported_as_a_template_naming_the_placeholders() -> None:
    r = run(
        "GoogleCloudPlatform__accelerated-platforms__use-cases__inferencing__cost-optimization__gcsfuse__manifests__model-deployment-a100-dws.yaml"
    )
    (kv002,) = by_rule(r, "KV002")
    for name in ("${VLLM_IMAGE_NAME}", "${MODEL_NAME}", "${MODEL_VERSION}"):
        assert name in kv002.message
    texts = " ".join(d.message for d in r.diagnostics)
    assert "tag missing" not in texts and "not a recognised engine command" not in texts
    (cr,) = r.containers
    assert cr.serving.get("tensor_parallel_size") == 8


# ------------------------------------------------------------------------------------------------------------
# multi-node workers


@pytest.mark.parametrize(
    "name",
    [
        "kubernetes-sigs__lws__docs__examples__vllm__lws.yaml",  # ray_init.sh worker
        "sgl-project__rbg__examples__deprecated__v1alpha1__multi-nodes__vllm.yaml",  # multi-node-serving.sh worker
        "vllm-project__aibrix__samples__distributed__fleet-two-node.yaml",  # $KUBERAY_GEN_RAY_START_CMD
    ],
)
def test_multinode_worker_joins_the_leader_and_nothing_more_is_asked(name: str) -> None:
    r = run(name)
    (worker,) = [c for c in r.containers if c.workload.role == "worker"]
    assert worker.serving.joins is not None and worker.serving.joins.leader is not None
    assert not [d for d in r.diagnostics if d.container == worker.container_name and d.rule != "KV002"]


@pytest.mark.parametrize(
    "command",
    [
        '["ray", "start", "--address=$(LWS_LEADER_ADDRESS):6379", "--block"]',
        '["/usr/local/bin/ray", "start", "--address", "$(LWS_LEADER_ADDRESS):6379", "--num-gpus=8", "--block"]',
    ],
)
def test_a_worker_running_ray_start_without_a_shell_joins_the_leader(command: str) -> None:
    # the LWS vLLM example's worker with `ray start` as the command itself (no `sh -c` script): it joins the
    # leader's engine and is sized with it, as the same words in a script are (it was "command unreadable":
    # "the engine is configured by Ray Serve application code")
    text = real("kubernetes-sigs__lws__docs__examples__vllm__lws.yaml")
    script = """command:
              - sh
              - -c
              - "/vllm-workspace/ray_init.sh worker --ray_address=$(LWS_LEADER_ADDRESS)\""""
    assert text.count(script) == 1
    r = run_text(text.replace(script, "command: " + command))
    (worker,) = [c for c in r.containers if c.workload.role == "worker"]
    assert worker.serving.joins is not None and worker.serving.joins.leader is not None
    assert "ray start --address" in worker.serving.joins.how
    assert not [d for d in r.diagnostics if d.container == worker.container_name and d.rule != "KV002"]


def test_worker_gpus_are_checked_against_the_leaders_tp_x_pp() -> None:
    text = real("kubernetes-sigs__lws__docs__examples__vllm__lws.yaml")
    worker_part = text.index("workerTemplate:")
    derived = text[:worker_part] + text[worker_part:].replace('nvidia.com/gpu: "8"', 'nvidia.com/gpu: "4"', 1)
    r = run_text(derived)
    (d,) = by_rule(r, "KV403")
    assert d.container == "vllm-worker" and d.severity == "error"
    assert "needs 16 GPUs" in d.message and "has 12" in d.message


def test_llm_d_data_parallel_decode_across_two_pods_is_not_a_gpu_mismatch() -> None:
    r = run("llm-d__llm-d__guides__wide-ep-lws__modelserver__amd__vllm-deepseek-v3__base__decode.yaml")
    # no leaderTemplate: the workerTemplate is the leader pod's too (LWS's controller), so the leader and a worker
    assert [cr.workload.role for cr in r.containers] == ["leader", "worker"]
    for cr in r.containers:
        # --data-parallel-size $((LWS_GROUP_SIZE * DP_SIZE_LOCAL)) with LWS_GROUP_SIZE from leaderWorkerTemplate.size
        assert (cr.serving.get("data_parallel_size"), cr.serving.get("data_parallel_size_local")) == (16, 8)
    assert not by_rule(r, "KV403")


# ------------------------------------------------------------------------------------------------------------
# true causes

ROCM = "ROCm__k8s-device-plugin__example__vllm-serve__deployment.yaml"
HOMELAB = "tjetzinger__home-lab__applications__vllm__deployment.yaml"


def test_misspelt_args_key_is_named_not_blamed_on_sh_c() -> None:
    r = run_text(real(ROCM).replace("        args: [", '        "args:": [', 1))
    (kv503,) = [d for d in by_rule(r, "KV503") if d.severity == "warning"]
    assert "is given no script" in kv503.message and "'args:'" in kv503.message and "'args'" in kv503.message
    (kv005,) = by_rule(r, "KV005")
    assert "'args:'" in kv005.message and "did you mean 'args'" in kv005.message


def test_bare_deployment_without_arguments_is_not_blamed_on_a_controller() -> None:
    text = real(HOMELAB)
    start = text.index("          args:\n")
    end = text.index("          ports:\n")
    r = run_text(text[:start] + text[end:])
    (d,) = by_rule(r, "KV503")
    assert "names no model" in d.message and "built-in default" in d.message
    assert "KServe" not in d.message and "controller" not in d.message


def test_container_without_gpu_request_is_told_that() -> None:
    text = "".join(line for line in real(ROCM).splitlines(True) if "amd.com/gpu" not in line)
    r = run_text(text)
    assert [d.rule for d in by_rule(r, "KV405")] == ["KV405"]
    (kv501,) = by_rule(r, "KV501")
    assert "requests no GPU" in kv501.message and "cannot tell which GPU" not in kv501.message


def test_sleeping_vllm_image_is_not_a_serving_container() -> None:
    r = run("aws-samples__karpenter-blueprints__blueprints__dynamic-disk-ebs-volume__workload.yaml")
    assert r.containers == [] and not by_rule(r, "KV503")


# ------------------------------------------------------------------------------------------------------------
# probes and GPU resource names


def test_probe_on_the_wrong_port_all_three_engines() -> None:
    sglang = real("sgl-project__sglang__docker__k8s-sglang-service.yaml")
    assert not by_rule(run_text(sglang), "KV408")  # --port 30000, probe on 30000
    r = run_text(sglang.replace("              port: 30000", "              port: 8000", 1))
    (d,) = by_rule(r, "KV408")
    assert "checks port 8000" in d.message and "listens on 30000 (--port 30000)" in d.message
    homelab = real(HOMELAB)
    assert not by_rule(run_text(homelab), "KV408")  # named port http = 8000 = --port 8000
    r = run_text(homelab.replace('            - "8000"\n', '            - "8080"\n', 1))
    assert {d.message.split(":")[0] for d in by_rule(r, "KV408")} == {
        "the livenessProbe checks port 'http' (8000) but vllm listens on 8080 (--port 8080)",
        "the readinessProbe checks port 'http' (8000) but vllm listens on 8080 (--port 8080)",
    }
    tgi = real("bhajian__redhat__vllm-vs-others__tgi-deployement.yaml")
    assert not by_rule(run_text(tgi), "KV408")


def test_gpu_resource_names_that_are_not_extended_resources() -> None:
    text = real(HOMELAB)
    typo = run_text(text.replace("nvidia.com/gpu: 1", "nvidia.com/gpus: 1"))
    assert {d.message.split("'")[1] for d in by_rule(typo, "KV409")} == {"nvidia.com/gpus"}
    assert all("did you mean nvidia.com/gpu" in d.message for d in by_rule(typo, "KV409"))
    assert not by_rule(typo, "KV405")
    bare = run_text(text.replace("nvidia.com/gpu: 1", "gpu: 1"))
    assert all("API server rejects" in d.message for d in by_rule(bare, "KV409")) and by_rule(bare, "KV409")


# ------------------------------------------------------------------------------------------------------------
# flags, versions, context


def test_option_abbreviation_is_said_out_loud() -> None:
    r = run("substratusai__kubeai__manifests__models__deepseek-r1-distill-qwen-1.5b-rtx4070.yaml")
    (d,) = [d for d in by_rule(r, "KV205") if "abbreviation" in d.message]
    assert (
        d.severity == "warning"
        and "--max-num-batched-token" in d.message
        and "--max-num-batched-tokens" in d.message
    )


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/manifests not present")
def test_config_key_max_seq_len_suggests_max_model_len() -> None:
    text = (
        CORPUS / "kaito-project__kaito__examples__inference__kaito_workspace_custom_config.yaml"
    ).read_text()
    r = run_text(text.replace("max-seq-len-to-capture: 8192", "max_seq_len: 8192"))
    (d,) = [d for d in by_rule(r, "KV205") if "abbreviation" in d.message]
    assert "--max-seq-len-to-capture" in d.message and "usually meant as --max-model-len" in d.message


def test_kaito_version_comes_from_the_kaito_release() -> None:
    r = run("kaito-project__kaito__examples__inference__kaito_workspace_phi_4_mini_throughput.yaml")
    (d,) = by_rule(r, "KV208")
    assert "KAITO release" in d.message and "tag missing" not in d.message


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus/manifests not present")
def test_kv202_is_info_when_the_full_context_fits_with_room_and_a_warning_when_it_decides() -> None:
    name = "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-2b-it-a100-40gb.yaml"
    text = (CORPUS / name).read_text()
    r = run_text(text)
    (cr,) = r.containers
    assert cr.plan is not None and cr.serving.get("max_model_len") is None
    (d,) = by_rule(r, "KV202")
    low = cr.plan.max_concurrency_low
    assert (d.severity == "info") == (low >= 2), (d.severity, low)
    assert ("leaves room" in d.message) == (d.severity == "info")
    # the shared case b01 (Llama-3.1-8B on one L4, from public vLLM issue reports): the default decides start-up
    b01 = run_check([str(CORPUS.parents[1] / "cases" / "b01-llama8b-l4-default-context.yaml")], OPTS)
    (w,) = by_rule(b01, "KV202")
    assert w.severity == "warning" and "decides start-up" in w.message


# ------------------------------------------------------------------------------------------------------------
# operator kinds


def test_dynamo_graph_deployment_workers_are_read() -> None:
    r = run("sjm446__ai-on-eks__blueprints__inference__nvidia-dynamo__vllm__vllm-disaggregated-default.yaml")
    crs = {c.workload.path: c for c in r.containers}
    assert set(crs) == {
        "spec.services.VllmDecodeWorker",
        "spec.services.VllmPrefillWorker",
    }  # not the frontend
    for cr in crs.values():
        assert cr.serving.model.value == "Qwen/Qwen3-0.6B" and cr.placement.gpus == 1
    notes = [d.message for d in by_rule(r, "KV504")]
    assert any("--is-prefill-worker is taken as Dynamo's own" in m for m in notes)
    # the fix names the option to check where one was taken as Dynamo's, and no options where none was; the
    # Dynamo tag (vllm-runtime:0.5.0) names no vLLM release, so each asks for --engine-version (and KV208 does
    # not say it again)
    pin = "pass --engine-version with the vllm release the image carries"
    fixes = sorted(d.fix for d in by_rule(r, "KV504"))
    assert fixes == [
        "nothing to change if --is-prefill-worker is a Dynamo option; otherwise check the spelling; " + pin,
        pin,
    ]
    assert all("kvlint applied the rules of vLLM" in m for m in notes)
    assert not by_rule(r, "KV205") and not by_rule(r, "KV208")


def test_rbg_role_templates_and_patches_are_merged() -> None:
    r = run("sgl-project__rbg__examples__inference__ecosystem__dynamo__agg.yaml")
    (cr,) = r.containers
    assert cr.serving.image == "nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.0.1"  # from roleTemplates
    assert cr.serving.model.value == "Qwen/Qwen3-0.6B" and cr.placement.gpus == 1  # from the patch
    assert not [d for d in by_rule(r, "KV503") if d.severity == "warning"]


def test_a_dynamo_release_tag_is_read_as_the_engine_release_it_carries() -> None:
    """A Dynamo runtime image's tag is a Dynamo release: sglang-runtime:1.0.1 carries SGLang 0.5.9 (Dynamo's
    support matrix, kvlint.engines.images.DYNAMO_ENGINES); kvlint read no SGLang release from it before, and a
    command other than Dynamo's worker took the tag itself as the engine's release."""
    r = run("sgl-project__rbg__examples__inference__ecosystem__dynamo__agg.yaml")
    (cr,) = r.containers
    assert cr.serving.version == "0.5.9"
    (note,) = by_rule(r, "KV504")
    assert "Dynamo release 1.0.1, which carries SGLang 0.5.9" in note.message
    assert "kvlint applied the rules" not in note.message


def test_an_unlisted_dynamo_release_tag_is_no_engine_release(tmp_path: Path) -> None:
    """vllm-runtime:0.5.0 (a Dynamo release the support matrix does not list) running vllm serve: the tag was read
    as vLLM 0.5.0; it is an unknown release now, and KV208 says which release kvlint assumed."""
    path = tmp_path / "d.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: c\n        image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0\n"
        "        command: [vllm, serve, Qwen/Qwen3-0.6B, --max-model-len, '4096']\n"
    )
    r = run_check([str(path)], Options(allow_hub=False))
    (cr,) = r.containers
    assert cr.serving.version != "0.5.0"
    (d,) = by_rule(r, "KV208")
    assert "the tag 0.5.0 names no vLLM release" in d.message


def test_hyperpod_inference_endpoint_config_is_read() -> None:
    r = run("aws-samples__sagemaker-genai-hosting-examples__SageMakerHyperpod__kimi-k3__kimi-k3.yaml")
    (cr,) = r.containers
    assert cr.serving.model.value == "moonshotai/Kimi-K3" and cr.serving.get("tensor_parallel_size") == 8
    assert cr.placement.gpus == 8


@pytest.mark.parametrize(
    ("name", "words"),
    [
        # (a Playground kvlint restates the BackendRuntime of, when its OpenModel is among the inputs, is read:
        # tests/test_unseen_round48.py; this one claims two models, a speculative-decoding config)
        ("InftyAI__llmaz__docs__examples__speculative-decoding__vllm__playground.yaml", "BackendRuntime"),
        (
            "GoogleCloudPlatform__kubernetes-engine-samples__ai-ml__gke-ray__rayserve__llm__model-composition__ray-service.yaml",
            "serveConfigV2",
        ),
        (
            "awslabs__ai-on-eks__blueprints__inference__gpu__nvidia-nim-operator-llama3-8b__nim-service-llama3-8b-instruct.yaml",
            "NIM launcher",
        ),
    ],
)
def test_kinds_whose_engine_settings_are_elsewhere_say_where(name: str, words: str) -> None:
    r = run(name)
    assert [d for d in by_rule(r, "KV503") if words in d.message]


def test_llmaz_service_embedding_a_leader_worker_template_knows_its_group_size() -> None:
    r = run("InftyAI__llmaz__docs__examples__multi-nodes__service.yaml")
    for cr in r.containers:
        # --tp 2 over --nnodes $(LWS_GROUP_SIZE) = workloadTemplate.size 2, one GPU per pod
        assert cr.workload.group_size == 2 and cr.serving.get("nnodes") == 2 and cr.placement.gpus == 1
    assert not by_rule(r, "KV403")


def test_env_values_extending_the_process_environment_are_not_template_placeholders(tmp_path) -> None:
    """``LD_LIBRARY_PATH=/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}`` is a shell habit, not an envsubst
    parameter; a ``${MODEL_NAME}`` next to it still is."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    def kv002(env: str) -> list[str]:
        p = tmp_path / "d.yaml"
        p.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
            "        args: [--model, Qwen/Qwen2.5-7B-Instruct]\n        env:\n" + env
        )
        res = run_check([str(p)], Options(allow_hub=False))
        return [d.message for d in res.diagnostics if d.rule == "KV002"]

    assert (
        kv002("        - {name: LD_LIBRARY_PATH, value: '/usr/local/nvidia/lib64:${LD_LIBRARY_PATH}'}\n")
        == []
    )
    assert kv002("        - {name: HF_HUB_CACHE, value: '${HF_HOME}/hub'}\n") != []
    (msg,) = kv002(
        "        - {name: PATH, value: '/opt/bin:${PATH}'}\n        - {name: SERVED, value: '${MODEL_NAME}'}\n"
    )
    assert "${MODEL_NAME}" in msg and "${PATH}" not in msg


def test_vllm_data_parallel_rank_per_pod_needs_one_rank_of_gpus() -> None:
    """A pod given --data-parallel-rank runs that one rank (external load balancing: vLLM sets
    data_parallel_size_local = 1), so data-parallel-size 2 on a one-GPU pod is not a GPU mismatch (KV403)."""
    path = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "parallelism"
        / "kthena-data-parallel-deployment.yaml"
    )
    r = run_check([str(path)], Options(allow_hub=False))
    assert r.containers and all(cr.serving.get("data_parallel_size") == 2 for cr in r.containers)
    assert not by_rule(r, "KV403")
    from kvlint.engines.layout import parallelism

    assert all(parallelism(cr.serving, gpus=1).dp_local == 1 for cr in r.containers)
    # the same pods without the rank would each start both ranks (data_parallel_size_local = data_parallel_size)
    text, n = re.subn(r"\n *- --data-parallel-rank\n *- \"\d+\"", "", path.read_text())
    assert n == 2
    res = run_documents(load_text(text, "k.yaml"), Options(allow_hub=False))
    assert res.containers and all(parallelism(cr.serving, gpus=1).dp_local == 2 for cr in res.containers)


def test_kthena_entry_and_worker_pods_are_one_group() -> None:
    """A Kthena ModelServing role with an entry pod and workerReplicas workers is one group of workerReplicas + 1
    pods (GROUP_SIZE injected): TP 8 x PP 2 over two 8-GPU pods is not a GPU mismatch, and the worker, which
    joins the entry pod's Ray cluster, is sized with its leader."""
    from kvlint.sizing import outcomes

    path = Path(__file__).resolve().parents[1] / "fixtures" / "parallelism" / "kthena-multi-node.yaml"
    r = run_check([str(path)], Options(allow_hub=False))
    roles = {cr.workload.role: cr for cr in r.containers}
    assert set(roles) == {"leader", "worker"}
    assert all(cr.workload.group_size == 2 for cr in r.containers)
    assert roles["worker"].workload.leader is not None
    assert roles["leader"].serving.env.get("GROUP_SIZE") == "2"
    assert not by_rule(r, "KV403")
    assert sorted(outcomes(r.containers)) == ["fleet", "leader"]


def test_dynamo_operator_mounts_shared_memory() -> None:
    """The Dynamo operator mounts a memory-backed /dev/shm (8Gi, or ``sharedMemory.size``) in every component's
    main container unless ``sharedMemory.disabled`` (ai-dynamo/dynamo, deploy/operator,
    buildSharedMemoryVolumeAndMount): no KV404 for TP > 1 in either API form, KV404 when disabled; the
    documents themselves are not changed."""
    v1alpha1 = "ai-dynamo__dynamo__examples__backends__vllm__deploy__disagg_kvbm_tp2.yaml"
    v1beta1 = "ai-dynamo__dynamo__examples__backends__vllm__deploy__v1beta1__agg_snapshot_tp8.yaml"
    for name, tp in ((v1alpha1, 2), (v1beta1, 8)):
        r = run(name)
        workers = [c for c in r.containers if c.placement is not None and c.placement.gpus == tp]
        assert workers, name
        for cr in workers:
            mounts = cr.container.get("volumeMounts") or []
            (mount,) = [m for m in mounts if m.get("mountPath") == "/dev/shm"]
            (vol,) = [v for v in cr.workload.pod_spec.get("volumes") or [] if v.get("name") == mount["name"]]
            assert vol["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"}
        assert not by_rule(r, "KV404"), name
    # the documents as written: no volume at /dev/shm
    text = real(v1beta1)
    assert "/dev/shm" not in text and "volumes" not in text
    # sharedMemory.size is the volume's size; disabled: the operator mounts nothing, and KV404 reports it
    base = real(v1alpha1)
    sized = run_text(
        base.replace("    VllmDecodeWorker:\n", "    VllmDecodeWorker:\n      sharedMemory: {size: 16Gi}\n")
    )
    dec = [c for c in sized.containers if c.workload.path == "spec.services.VllmDecodeWorker"]
    (vol,) = [v for v in dec[0].workload.pod_spec["volumes"] if v.get("name") == "shared-memory"]
    assert vol["emptyDir"]["sizeLimit"] == "16Gi"
    off = run_text(
        base.replace(
            "    VllmDecodeWorker:\n", "    VllmDecodeWorker:\n      sharedMemory: {disabled: true}\n"
        )
    )
    assert [d.container for d in by_rule(off, "KV404")] == ["VllmDecodeWorker"]
    # v1alpha1's sharedMemory.size of zero is the default size (the operator's conversion drops it)
    zero = run_text(
        base.replace("    VllmDecodeWorker:\n", "    VllmDecodeWorker:\n      sharedMemory: {size: '0'}\n")
    )
    dec = [c for c in zero.containers if c.workload.path == "spec.services.VllmDecodeWorker"]
    (vol,) = [v for v in dec[0].workload.pod_spec["volumes"] if v.get("name") == "shared-memory"]
    assert vol["emptyDir"]["sizeLimit"] == "8Gi"


def test_dynamo_v1beta1_shared_memory_is_shared_memory_size() -> None:
    """In the v1beta1 API (a DynamoGraphDeployment's ``spec.components`` and a DynamoComponentDeployment's
    ``spec``) the setting is ``sharedMemorySize``, a quantity: absent is the operator's 8Gi, ``"0"`` mounts
    nothing (KV404 for TP 8), any other size is the volume's size (ai-dynamo/dynamo
    deploy/operator/api/v1beta1/dynamocomponentdeployment_types.go ``SharedMemorySize``; v1alpha1's
    ``sharedMemory: {disabled, size}`` is converted to it). kvlint read v1alpha1's ``sharedMemory`` in both
    forms, so a v1beta1 component that disabled its /dev/shm was read with 8Gi and its KV404 missed, and a
    ``sharedMemory`` block, which the v1beta1 schema does not have, was obeyed."""
    v1beta1 = "ai-dynamo__dynamo__examples__backends__vllm__deploy__v1beta1__agg_snapshot_tp8.yaml"
    at = "  - name: VllmDecodeWorker\n"

    def worker(text: str) -> Any:
        r = run_text(text)
        (cr,) = [c for c in r.containers if c.placement is not None and c.placement.gpus == 8]
        return r, cr

    def shm_size(cr: Any) -> str | None:
        vols = [v for v in cr.workload.pod_spec.get("volumes") or [] if v.get("name") == "shared-memory"]
        return vols[0]["emptyDir"]["sizeLimit"] if vols else None

    for setting in ("0", "'0'", "0Gi", "'0.0'"):
        r, cr = worker(real(v1beta1).replace(at, f"{at}    sharedMemorySize: {setting}\n"))
        assert shm_size(cr) is None, setting
        assert [d.rule for d in by_rule(r, "KV404")] == ["KV404"], setting
    r, cr = worker(real(v1beta1).replace(at, f"{at}    sharedMemorySize: 16Gi\n"))
    assert shm_size(cr) == "16Gi" and not by_rule(r, "KV404")
    # v1alpha1's spelling is not a v1beta1 field: the operator mounts its default
    r, cr = worker(real(v1beta1).replace(at, f"{at}    sharedMemory: {{disabled: true}}\n"))
    assert shm_size(cr) == "8Gi" and not by_rule(r, "KV404")
    # a DynamoComponentDeployment made of that component reads the same
    doc = yaml.safe_load(real(v1beta1))
    comp = next(c for c in doc["spec"]["components"] if c["name"] == "VllmDecodeWorker")
    dcd = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoComponentDeployment",
           "metadata": {"name": "w"}, "spec": {**comp, "sharedMemorySize": "0"}}  # fmt: skip
    r, cr = worker(json.dumps(dcd))
    assert shm_size(cr) is None and [d.rule for d in by_rule(r, "KV404")] == ["KV404"]


def test_dynamo_frontend_runs_the_operators_default_command() -> None:
    """A ``frontend`` component without command or args runs the operator's default ``python3 -m
    dynamo.frontend`` (ai-dynamo/dynamo, component_frontend.go): no engine there, so no KV503 "cannot be read"
    for it and it is not counted among the serving containers; the worker's command is read as before. A
    frontend that sets its own command keeps it."""
    v1alpha1 = "ai-dynamo__dynamo__examples__backends__vllm__deploy__disagg_kvbm_tp2.yaml"
    v1beta1 = "ai-dynamo__dynamo__examples__backends__vllm__deploy__v1beta1__agg_snapshot_tp8.yaml"
    for name, workers in ((v1alpha1, 2), (v1beta1, 1)):
        r = run(name)
        assert not [d for d in by_rule(r, "KV503") if d.severity == "warning"], name
        assert len(r.containers) == workers and all(c.serving.engine == "vllm" for c in r.containers)
    own = real(v1beta1).replace(
        "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:my-tag\n          name: main\n    replicas: 1\n"
        "    type: frontend\n",
        "          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:my-tag\n          name: main\n"
        "          command: [vllm, serve, Qwen/Qwen3-0.6B]\n    replicas: 1\n    type: frontend\n",
    )
    assert own != real(v1beta1)
    assert len(run_text(own).containers) == 2


def test_a_placeholder_gpu_limit_is_a_template_parameter_not_an_invalid_quantity(tmp_path) -> None:
    """``nvidia.com/gpu: "${GPU_COUNT}"`` in an envsubst template: KV002 names the placeholder with the
    others, and KV405 says the count is unknown until rendering (a warning), not that the API server
    rejects a fractional or negative quantity (an error); a literal bad quantity stays an error."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check
    from kvlint.types import Diagnostic

    def findings(gpus: str) -> dict[str, Diagnostic]:
        p = tmp_path / "d.yaml"
        p.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
            "        args: [--model, Qwen/Qwen2.5-7B-Instruct, --max-model-len, '${MAX_LEN}']\n"
            f"        resources: {{limits: {{nvidia.com/gpu: '{gpus}'}}}}\n"
        )
        res = run_check([str(p)], Options(allow_hub=False))
        return {d.rule: d for d in res.diagnostics}

    got = findings("${GPU_COUNT}")
    assert "${GPU_COUNT}" in got["KV002"].message and "${MAX_LEN}" in got["KV002"].message
    kv405 = got["KV405"]
    assert kv405.severity == "warning" and "placeholder" in kv405.message
    assert kv405.loc is not None and kv405.loc.line == 11  # the quantity's line
    bad = findings("0.5")["KV405"]
    assert bad.severity == "error" and "not a positive whole number" in bad.message


def test_openshift_and_helm_gpu_limits_are_template_parameters_too(tmp_path) -> None:
    """An OpenShift Template's non-string parameter (``nvidia.com/gpu: ${{GPU_COUNT}}``, substituted by ``oc
    process`` as a number) and a Helm action left in a quoted value (``"{{ .Values.gpus }}"``) are, like an
    envsubst ``${VAR}``, a count known once the template is rendered: KV405 warns, not the error that the API
    server rejects a fractional or negative quantity. A ``$(N)``, which nothing substitutes in resources, stays
    an error."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    def kv405(gpus: str, kind: str = "Deployment") -> list:
        deployment = (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
            "        args: [--model, Qwen/Qwen2.5-7B-Instruct]\n"
            f"        resources:\n          limits:\n            nvidia.com/gpu: {gpus}\n"
        )
        text = deployment
        if kind == "Template":  # the same Deployment as the Template's only object
            text = (
                "apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\n"
                # a parameter with no value: oc process fills it in (-p); one with a value is read at it
                # (kvlint.template_params, tests/test_openshift_template53.py)
                "parameters: [{name: GPU_COUNT, required: true}]\nobjects:\n"
                + "".join(
                    ("- " if i == 0 else "  ") + line + "\n" for i, line in enumerate(deployment.splitlines())
                )
            )
        p = tmp_path / "d.yaml"
        p.write_text(text)
        return [d for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV405"]

    for gpus, kind in (("${{GPU_COUNT}}", "Template"), ("'{{ .Values.gpus }}'", "Deployment")):
        (got,) = kv405(gpus, kind)
        assert got.severity == "warning" and "template" in got.message, (gpus, got.message)
        assert "not a positive whole number" not in got.message
    (literal,) = kv405("'$(N)'")
    assert literal.severity == "error" and "not a positive whole number" in literal.message


@pytest.mark.parametrize(
    ("command", "args", "want"),
    [
        # a shell variable, a command substitution and backticks that the manifest does not resolve
        (
            "[sh, -c]",
            "['vllm serve --model $MODEL --max-model-len 8192']",
            "only known when the container runs",
        ),
        (
            "[sh, -c]",
            "['vllm serve $(cat /models/name) --max-model-len 8192']",
            "only known when the container runs",
        ),
        (
            "[sh, -c]",
            "['vllm serve --model `cat /m` --max-model-len 8192']",
            "only known when the container runs",
        ),
        # $(VAR) with no env entry: Kubernetes leaves it as written, and vLLM receives it (no shell)
        ("[vllm, serve]", "['--model', '$(MODEL)']", "reaches vLLM as written"),
        # ${VAR} without a shell: vLLM receives it as written (the fix names an envsubst render, KV002 the template)
        ("[vllm, serve]", "['--model', '${MODEL}']", "reaches vLLM as written"),
    ],
)
def test_a_model_filled_in_at_run_time_is_named_as_such(tmp_path, command: str, args: str, want: str) -> None:
    """KV502 for a model kvlint cannot resolve from the manifest says so, instead of "config.json not found"
    for a model named '$(cat /models/name)' and a --model-dir remedy holding 'name)/config.json'."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    p = tmp_path / "d.yaml"
    p.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: v}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.11.0\n"
        f"        command: {command}\n        args: {args}\n        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    res = run_check([str(p)], Options(allow_hub=False))
    (kv502,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert want in kv502.message and "config.json" not in kv502.message


def test_a_ray_container_running_an_application_of_its_own_is_told_what_kvlint_reads() -> None:
    """AI on EKS's RayService (fixtures/load, vllm-rayserve-gpu) serves Mistral with its own Ray Serve application
    (import_path vllm_serve:deployment), whose engine settings are Python arguments: its Ray head and worker stay
    "command unreadable", and the KV503 fix names the form kvlint does read (Ray Serve LLM's llm_configs) and
    `kvlint plan`, not "run the engine directly" (a Ray Serve user cannot). The note says KubeRay starts them (its
    `ray start`, new-user pass 25; it said "the container runs Ray" from the image name). A container of a non-Ray
    image with no command keeps the generic fix; one of a Ray image outside a Ray pod the Ray Serve fix."""
    path = (
        ROOT
        / "fixtures"
        / "load"
        / "awslabs__ai-on-eks__blueprints__inference__vllm-rayserve-gpu__ray-service-vllm.yaml"
    )
    r = run_check([str(path)], Options(allow_hub=False))
    assert [sizing_of(c) for c in r.containers] == ["command unreadable"] * 2
    unread = [d for d in by_rule(r, "KV503") if d.container in ("ray-head", "ray-worker")]
    assert len(unread) == 2
    for d in unread:
        assert "KubeRay starts this Ray container" in d.message
        assert "ray.serve.llm:build_openai_app" in d.fix and "kvlint plan" in d.fix
        assert "run the engine directly" not in d.fix
    # the variant: the same image-only container without Ray in its image name
    plain = """apiVersion: apps/v1
kind: Deployment
metadata: {name: server}
spec:
  template:
    spec:
      containers:
      - name: server
        image: IMAGE
        resources: {limits: {nvidia.com/gpu: 1}}
"""
    ray = run_text(plain.replace("IMAGE", "public.ecr.aws/data-on-eks/ray2.24.0-py310-vllm-gpu:v1"))
    other = run_text(plain.replace("IMAGE", "vllm/vllm-openai-custom-entrypoint:v1"))
    (d_ray,) = by_rule(ray, "KV503")
    assert "ray.serve.llm:build_openai_app" in d_ray.fix
    assert [d.fix for d in by_rule(other, "KV503") if "run the engine directly" in d.fix]
