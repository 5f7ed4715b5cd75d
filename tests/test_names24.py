"""Where real manifests name the model and the GPU in ways kvlint reads only with care: modelcar-maker's
``org--name`` image tags, directories named with the dots dropped, OpenShift AI hardware profiles, the article
before an accelerator family's name, and ties among "did you mean" suggestions."""

from __future__ import annotations

from pathlib import Path

import yaml

from kvlint.pipeline import Options, run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
JHARMISON = COLLECTED / "trees/jharmison-redhat-openshift-setup/charts/kserve-vllm-model/values.yaml"
PARASOL = COLLECTED / "charts/parasol-insurance-ic-shared-llm"


def _modelcar_isvc(tmp_path: Path, uri: str) -> list[str]:
    """The Parasol insurance InferenceService + its vLLM ServingRuntime (fixtures/collected/charts), with the
    modelcar image replaced by ``uri`` (kvlint cannot render the jharmison chart without helm, so its
    ``values.model.uri`` is linted in this real InferenceService of the same OpenShift AI shape)."""
    isvc = PARASOL / "inference-service-granite-modelcar.yaml"
    old = "oci://registry.redhat.io/rhelai1/modelcar-granite-3-1-8b-instruct:1.5"
    text = isvc.read_text()
    assert text.count(old) == 1
    out = tmp_path / "isvc.yaml"
    out.write_text(text.replace(old, uri))
    return [str(out), str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml")]


def test_modelcar_maker_tag_of_the_jharmison_chart_names_its_quantized_granite(tmp_path):
    """jharmison-redhat/openshift-setup serves ``oci://quay.io/jharmison/models:redhatai--granite-3_1-8b-
    instruct-quantized_w8a8-modelcar``: modelcar-maker's tag for a hub id (``/`` -> ``--``, ``.`` -> ``_``,
    lower case; its helpers.normalize). kvlint reads it back through the catalogue to
    RedHatAI/granite-3.1-8b-instruct-quantized.w8a8 (KV505 says so) instead of "model unknown" (KV502)."""
    from kvlint.models import catalogue

    uri = yaml.safe_load(JHARMISON.read_text())["model"]["uri"]
    assert uri == "oci://quay.io/jharmison/models:redhatai--granite-3_1-8b-instruct-quantized_w8a8-modelcar"
    res = run_check(_modelcar_isvc(tmp_path, uri), Options(allow_hub=False))
    (cr,) = res.containers
    assert cr.model is not None and cr.model.id == "RedHatAI/granite-3.1-8b-instruct-quantized.w8a8"
    assert cr.model.quant_method is not None
    assert not [d for d in res.diagnostics if d.rule == "KV502"]
    kv505 = [d for d in res.diagnostics if d.rule == "KV505"]
    assert kv505 and "modelcar-maker" in kv505[0].message
    # the id reads back to the tag it came from (the convention, not a loose match)
    assert catalogue.modelcar_maker_tag(cr.model.id) + "-modelcar" == uri.rsplit(":", 1)[1]


def test_modelcar_maker_tags_read_back_only_through_the_catalogue(tmp_path):
    """Variants: the commented-out Mistral tag of the same values.yaml, a catalogued id spelled the same way,
    and tags naming nothing catalogued (KV502 then says the spelling and what to set, without guessing)."""
    from kvlint.models.resolve import oci_named_model

    text = JHARMISON.read_text()
    mistral = (
        "oci://quay.io/jharmison/models:redhatai--mistral-small-3_1-24b-instruct-2503-fp8-dynamic-modelcar"
    )
    assert f"# uri: {mistral}" in text
    assert oci_named_model(mistral)[0] == "RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-FP8-dynamic"
    assert oci_named_model("oci://q.io/a/models:qwen--qwen3-8b-modelcar")[0] == "Qwen/Qwen3-8B"
    # the wrong org for a catalogued name, and a made-up model: not read
    assert oci_named_model("oci://q.io/a/models:nobody--qwen3-8b-modelcar") is None
    assert oci_named_model("oci://q.io/a/models:redhatai--granite-9_9-8b-instruct-modelcar") is None
    res = run_check(
        _modelcar_isvc(tmp_path, "oci://q.io/a/models:redhatai--granite-9_9-8b-instruct-modelcar"),
        Options(allow_hub=False),
    )
    (cr,) = res.containers
    assert cr.model is None
    (kv502,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert "org--name" in kv502.message and "redhatai/granite-9_9-8b-instruct" in kv502.message
    assert "kvlint.io/model" in kv502.message


KTHENA_ASCEND = COLLECTED / (
    "volcano-sh__kthena__docs__kthena__docs__assets__examples__model-booster__Qwen2.5-Coder-32B-Instruct.yaml"
)


def test_accelerator_families_are_named_as_their_vendors_write_them_with_the_right_article(tmp_path):
    """kthena's ModelBooster example runs openeuler/vllm-ascend (fixtures/collected): KV501 and KV208 said "is
    a ASCEND build", "that ASCEND accelerator", "this ASCEND build"; they now say an Ascend build (Huawei's
    spelling), with the article by sound. The variant: the same manifest with a Gaudi and an XPU image."""
    text = KTHENA_ASCEND.read_text()
    assert text.count("openeuler/vllm-ascend:latest") == 1
    for image, name, article in [
        ("openeuler/vllm-ascend:latest", "Ascend", "an"),
        ("opea/vllm-gaudi:latest", "Intel Gaudi", "an"),
        ("intel/vllm-xpu:0.10.0", "Intel XPU", "an"),
        ("vllm/vllm-tpu:v0.10.0", "TPU", "a"),
    ]:
        path = tmp_path / f"{name.replace(' ', '_')}.yaml"
        path.write_text(text.replace("openeuler/vllm-ascend:latest", image))
        res = run_check([str(path)], Options(allow_hub=False))
        messages = " ".join(
            d.message + " " + (d.fix or "") for d in res.diagnostics if d.rule in ("KV501", "KV208")
        )
        assert f"is {article} {name} build of vllm" in messages, image
        assert f"that {name} accelerator" in messages, image
        if name != name.upper():
            assert name.upper() not in messages, image
        if image.endswith(":latest"):  # KV208: no release tag, so the release read is assumed
            assert f"skipped on this {name} build" in messages, image


def test_article_goes_by_how_the_word_is_said():
    """One helper for every message: initialisms by the name of their first letter, words by their sound."""
    from kvlint.wording import article, platform_name, with_article

    said = {
        "NPU": "an",
        "XPU": "an",
        "TPU": "a",
        "CPU": "a",
        "H100": "an",
        "A100": "an",
        "L4": "an",
        "T4": "a",
        "NVIDIA": "an",
        "CUDA build": "a",
        "ROCm": "a",
        "Ascend": "an",
        "Intel Gaudi": "an",
        "OpenVINO": "an",
        "AWS Neuron": "an",
        "unified": "a",
        "8-bit": "an",
        "11B": "an",
        "1B": "a",
        "object": "an",
        "string": "a",
    }
    assert {w: article(w) for w in said} == said
    assert with_article(platform_name("ascend")) == "an Ascend"
    assert platform_name("somethingnew") == "SOMETHINGNEW"


#: vLLM production-stack's CoreWeave Terraform template (fixtures/collected; source in its INDEX.csv)
CW_GPT_OSS = COLLECTED / (
    "vllm-project__production-stack__tutorials__terraform__coreweave__config__llm-stack__helm__gpu__gpu-gpt-oss-20-cw.tpl"
)


def test_did_you_mean_prefers_the_stored_newest_model_on_equal_name_similarity(tmp_path):
    """The production-stack CoreWeave template serves /data/models/tinyllama (which its own init step fills
    with ``hf download TinyLlama/TinyLlama-1.1B-Chat-v1.0``). "tinyllama" is as near by name to -v0.3 (a
    variant listed on the stored v1.0 config) as to -v1.0; the first in sorted order, v0.3, was offered. Ties
    now go to the stored configuration, then to the higher version numbers. The variant: the path renamed, and
    the rank on two names that are both variants."""
    from kvlint.models.catalogue import _suggestion_rank, same_family_suggestion

    text = CW_GPT_OSS.read_text()
    assert 'modelURL: "/data/models/tinyllama"' in text and "TinyLlama/TinyLlama-1.1B-Chat-v1.0" in text
    # the init container's download is not mounted where the engine reads (the chart mounts the model storage
    # in the init container only with mountPvcStorage), so the path is the engine's only word on the model
    assert text.count("mountPvcStorage: true") == 2
    text = text.replace("mountPvcStorage: true", "mountPvcStorage: false")
    for variant in (text, text.replace("/data/models/tinyllama", "/data/models/TinyLlama-Chat")):
        path = tmp_path / "cw.yaml"
        path.write_text(variant)
        res = run_check([str(path)], Options(allow_hub=False))
        # the suggestion is in the finding's fix (ux51 moved KV502's remedy there from its message)
        kv502 = [
            f"{d.message} {d.fix}"
            for d in res.diagnostics
            if d.rule == "KV502" and "/data/models/" in d.message
        ]
        assert kv502 and all(": TinyLlama/TinyLlama-1.1B-Chat-v1.0}" in m for m in kv502), kv502
        assert not any("v0.3" in m for m in kv502)
    assert same_family_suggestion("tinyllama") == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"
    # equal ratio, both variants: the higher version wins, whichever order the table holds them in
    a = _suggestion_rank("tinyllama", "tinyllama/tinyllama-1.1b-chat-v0.3", False)
    b = _suggestion_rank("tinyllama", "tinyllama/tinyllama-1.1b-chat-v1.0", False)
    assert a[0] == b[0] and b > a


VLLM_KSERVE_VALUES = COLLECTED / "charts/vllm-kserve/values.yaml"

#: A HardwareProfile as OpenShift AI stores it (infrastructure.opendatahub.io/v1; fields of opendatahub-operator
#: api/infrastructure/v1/hardwareprofile_types.go): one GPU, and node scheduling onto L40S nodes. Made up for
#: these tests in the shape of the profiles the dashboard writes.
PROFILE = """apiVersion: infrastructure.opendatahub.io/v1
kind: HardwareProfile
metadata:
  name: {name}
  namespace: {namespace}
spec:
  identifiers:
    - {{defaultCount: '4', displayName: CPU, identifier: cpu, maxCount: '8', minCount: 1, resourceType: CPU}}
    - {{defaultCount: 1, displayName: GPU, identifier: nvidia.com/gpu, maxCount: 1, minCount: 1, resourceType: Accelerator}}
  scheduling:
    type: Node
    node:
      nodeSelector: {{nvidia.com/gpu.product: NVIDIA-L40S}}
"""


def _profiled_isvc(tmp_path: Path) -> tuple[Path, str, str]:
    """The Parasol InferenceService (a real OpenShift AI one) as redhat-ai-services' vllm-kserve chart writes
    it by default: no resources (values ``resources: {}``, "the resources will default to the hardware
    profile") and the chart's hardware-profile annotations from its values."""
    values = yaml.safe_load(VLLM_KSERVE_VALUES.read_text())
    assert values["resources"] == {}
    name, namespace = values["hardwareProfile"]["name"], values["hardwareProfile"]["namespace"]
    text = (PARASOL / "inference-service-granite-modelcar.yaml").read_text()
    start, end = text.index("      resources:\n"), text.index("      runtime: vllm\n")
    assert "nvidia.com/gpu: '1'" in text[start:end]
    text = text[:start] + text[end:]
    text = text.replace(
        "  annotations:\n",
        f"  annotations:\n    opendatahub.io/hardware-profile-name: {name}\n"
        f"    opendatahub.io/hardware-profile-namespace: {namespace}\n",
        1,
    )
    path = tmp_path / "isvc.yaml"
    path.write_text(text)
    return path, name, namespace


def test_a_hardware_profile_not_among_the_inputs_is_named_not_called_a_missing_gpu(tmp_path):
    """OpenShift AI's webhook (opendatahub-operator internal/webhook/hardwareprofile) writes the named profile's
    identifiers into spec.predictor.model.resources at admission: without the profile, "requests no GPU" was a
    warning about a manifest that is not wrong; it is now an info naming the profile (KV405, KV501)."""
    isvc, name, namespace = _profiled_isvc(tmp_path)
    res = run_check(
        [str(isvc), str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml")], Options(allow_hub=False)
    )
    (kv405,) = [d for d in res.diagnostics if d.rule == "KV405"]
    assert kv405.severity == "info" and f"hardware profile '{name}' in namespace {namespace}" in kv405.message
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert f"hardware profile '{name}'" in kv501.message and "HardwareProfile" in (kv501.fix or "")
    assert not [d for d in res.diagnostics if d.severity in ("warning", "error") and d.rule.startswith("KV4")]
    # the variant: without the annotation, the missing GPU is still a warning
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        "\n".join(x for x in isvc.read_text().splitlines() if "hardware-profile" not in x) + "\n"
    )
    res = run_check(
        [str(plain), str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml")], Options(allow_hub=False)
    )
    (kv405,) = [d for d in res.diagnostics if d.rule == "KV405"]
    assert kv405.severity == "warning" and "hardware profile" not in kv405.message


def test_a_hardware_profile_among_the_inputs_is_applied_as_the_webhook_does(tmp_path):
    """With the HardwareProfile among the inputs, its identifiers become the model's requests (defaultCount)
    and limits (the request: odh-model-controller ApplyToIsvcResources; maxCount is the dashboard's ceiling)
    where the model sets none, and its node scheduling is merged into the predictor's (MergeNodeScheduling:
    the predictor's own toleration stays): the engine is sized on one L40S. Variants: the model's own GPU
    count wins over the profile's; a profile in another namespace is not the one named; a Kueue profile sets
    no nodeSelector."""
    isvc, name, namespace = _profiled_isvc(tmp_path)
    runtime = str(PARASOL / "serving-runtime-vllm-granite-modelcar.yaml")
    profile = tmp_path / "profile.yaml"
    profile.write_text(PROFILE.format(name=name, namespace=namespace))
    res = run_check([str(isvc), runtime, str(profile)], Options(allow_hub=False))
    (cr,) = res.containers
    (c,) = cr.workload.pod_spec["containers"]
    assert c["resources"]["requests"] == {"cpu": "4", "nvidia.com/gpu": "1"}
    assert c["resources"]["limits"] == {"cpu": "4", "nvidia.com/gpu": "1"}
    assert [t["key"] for t in cr.workload.pod_spec["tolerations"]] == ["nvidia.com/gpu"]
    assert cr.placement.gpus == 1 and cr.placement.accelerator.id == "nvidia-l40s"
    assert cr.placement.gpus_loc.file == str(profile)
    assert cr.plan is not None
    assert not [d for d in res.diagnostics if d.rule in ("KV405", "KV501")]

    own = tmp_path / "own.yaml"
    own.write_text(
        isvc.read_text().replace(
            "      runtime: vllm\n",
            "      resources:\n        limits: {nvidia.com/gpu: '2'}\n        requests: {nvidia.com/gpu: '2'}\n"
            "      runtime: vllm\n",
        )
    )
    (cr,) = run_check([str(own), runtime, str(profile)], Options(allow_hub=False)).containers
    assert cr.placement.gpus == 2

    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(PROFILE.format(name=name, namespace="someone-else"))
    res = run_check([str(isvc), runtime, str(elsewhere)], Options(allow_hub=False))
    assert [d for d in res.diagnostics if d.rule == "KV405" and d.severity == "info"]

    queued = tmp_path / "queued.yaml"
    queued.write_text(
        PROFILE.format(name=name, namespace=namespace).replace(
            "    type: Node\n    node:\n      nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}\n",
            "    type: Queue\n    kueue: {localQueueName: gpu-queue}\n",
        )
    )
    (cr,) = run_check([str(isvc), runtime, str(queued)], Options(allow_hub=False)).containers
    assert cr.placement.gpus == 1 and "nodeSelector" not in cr.workload.pod_spec


FLUID = COLLECTED / "kserve__kserve__docs__samples__fluid__fluid-isvc.yaml"
FLUID_RUNTIME = COLLECTED / "kserve__kserve__docs__samples__fluid__kserve-huggingfaceserver.yaml"


def test_a_location_named_with_the_dots_dropped_gets_a_did_you_mean_not_an_assumption(tmp_path):
    """KServe's Fluid sample downloads its model from pvc://s3-data/llama-31-8b-instruct: Llama-3.1-8B-Instruct
    with the dots dropped. A dropped dot joins digits (1.5b and 15b read alike), so kvlint does not size it as
    that model, but KV502 now asks "did you mean meta-llama/Llama-3.1-8B-Instruct?". Variants: a container path
    named so (the example mapping becomes that id), and names whose digits do not split the same way."""
    from kvlint.models.catalogue import dots_dropped_match

    assert "storageUri: pvc://s3-data/llama-31-8b-instruct" in FLUID.read_text()
    res = run_check([str(FLUID), str(FLUID_RUNTIME)], Options(allow_hub=False))
    (cr,) = [c for c in res.containers if c.workload.name == "llama-31-8b-instruct"]
    assert cr.model is None
    kv502 = [d for d in res.diagnostics if d.rule == "KV502" and "llama-31-8b-instruct" in d.object]
    assert kv502 and "did you mean meta-llama/Llama-3.1-8B-Instruct?" in kv502[0].fix
    assert "kvlint.io/model: meta-llama/Llama-3.1-8B-Instruct" in kv502[0].fix

    deploy = tmp_path / "d.yaml"
    deploy.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: q}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: vllm\n        image: vllm/vllm-openai:v0.10.0\n"
        '        args: ["--model", "/models/qwen25-7b-instruct"]\n'
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(deploy)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV502"]
    assert "did you mean Qwen/Qwen2.5-7B-Instruct?" in d.message
    assert "/models/qwen25-7b-instruct: Qwen/Qwen2.5-7B-Instruct" in d.fix
    assert res.containers[0].model is None
    # the digits must split as the catalogued name's do, and a name with its dots kept is not this rule's
    assert dots_dropped_match("llama-3-18b-instruct") is None
    assert dots_dropped_match("llama-3.1-8b-instruct") is None
    assert dots_dropped_match("granite-31-8b-instruct") == "ibm-granite/granite-3.1-8b-instruct"


def test_production_stack_init_download_into_the_model_storage_is_the_served_model(tmp_path):
    """The same template as written: its init container (``mountPvcStorage: true``) downloads
    TinyLlama/TinyLlama-1.1B-Chat-v1.0 into ``/data/models/tinyllama`` on the model storage, which the chart's
    ``deployment-vllm-multi.yaml`` mounts at ``/data`` in the init container and the engine alike: the engine's
    ``/data/models/tinyllama`` is that download, so both entries are sized and neither is a KV502."""
    res = run_check([str(CW_GPT_OSS)], Options(allow_hub=False))
    assert not [d for d in res.diagnostics if d.rule == "KV502"], [d.message for d in res.diagnostics]
    # each entry's model config read: vLLM's default context comes from its config.json (KV202), for both
    read = [d.message for d in res.diagnostics if d.rule == "KV202" and "from config.json" in d.message]
    assert len(read) == 2, [d.message for d in res.diagnostics]
