"""Dell Enterprise Hub model images (``registry.dell.huggingface.co/enterprise-dell-inference-*``): the Hub's
deployment snippet (fixtures/tgi, from dell/omnia) runs the image's entrypoint, TGI's launcher, with its settings
in TGI launcher variables and the model baked into the image, named by the pod label ``hf.co/model``. It read
as no serving container at all ("0 serving containers")."""

from __future__ import annotations

from pathlib import Path

from kvlint.engines.images import is_dell_enterprise_hub, tags_are_versions
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "tgi" / "dell-enterprise-hub-llama-3.1-8b.yaml"
IMAGE = "registry.dell.huggingface.co/enterprise-dell-inference-meta-llama-meta-llama-3.1-8b-instruct"


def _run(text: str):  # type: ignore[no-untyped-def]
    return run_documents(load_text(text, "deh.yaml"), Options(allow_hub=False))


def test_the_hubs_snippet_is_a_tgi_container_of_the_labelled_model() -> None:
    text = SAMPLE.read_text()
    assert IMAGE in text and "command:" not in text and "MODEL_ID" not in text
    result = _run(text)
    (cr,) = result.containers
    assert cr.serving.engine == "tgi"
    assert cr.serving.model is not None and cr.serving.model.value == "meta-llama/Meta-Llama-3.1-8b-Instruct"
    assert cr.serving.get("num_shard") == 1 and cr.serving.get("max_total_tokens") == 8192
    assert cr.model is not None and cr.model.num_layers == 32  # Llama 3.1 8B, resolved offline
    summary = summarise(result)
    assert summary.serving == 1 and summary.not_sized == {}, summary


def test_the_labelled_model_is_the_workloads_derived_model() -> None:
    # the workload reader derives the model (Workload.derived_model, as operator readers do), not a patch of the
    # parsed command afterwards; the container's model is said at its image
    result = _run(SAMPLE.read_text())
    (cr,) = result.containers
    assert cr.workload.derived_model == "meta-llama/Meta-Llama-3.1-8b-Instruct"
    assert cr.serving.model is not None and cr.serving.model.loc is not None
    assert cr.serving.model.loc == cr.container.locs["image"]
    # the user's kvlint.io/model still wins over it
    text = SAMPLE.read_text().replace(
        "      labels:\n",
        "      annotations: {kvlint.io/model: Qwen/Qwen2.5-7B-Instruct}\n      labels:\n",
        1,
    )
    (cr,) = _run(text).containers
    assert cr.model is not None and cr.model.id == "Qwen/Qwen2.5-7B-Instruct", cr.model_error
    # another image with the label serves no model of it (the label is the Hub's)
    other = SAMPLE.read_text().replace(IMAGE, "ghcr.io/huggingface/text-generation-inference:2.4.0")
    assert all(cr.workload.derived_model is None for cr in _run(other).containers)


def test_without_the_label_the_model_is_said_to_be_missing() -> None:
    text = SAMPLE.read_text().replace("        hf.co/model: meta-llama--Meta-Llama-3.1-8b-Instruct\n", "")
    result = _run(text)
    (cr,) = result.containers
    assert cr.serving.engine == "tgi" and cr.serving.model is None
    assert any(d.rule == "KV503" and "no model" in d.message for d in result.diagnostics)


def test_without_tgi_variables_the_engine_is_not_guessed() -> None:
    # newer Hub images (GB10) run vLLM: with no TGI launcher variable the engine is not assumed, and a KV503 info
    # says the image was seen (it was "0 serving containers" with nothing said)
    start, end = SAMPLE.read_text().split("          env:\n")
    text = start + end[end.index("          volumeMounts:") :]
    assert "NUM_SHARD" not in text
    result = _run(text)
    assert result.containers == []
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    assert "Dell Enterprise Hub model image" in note.message and note.severity == "info"


def test_only_the_hubs_inference_images_are_recognised() -> None:
    assert is_dell_enterprise_hub(IMAGE) and is_dell_enterprise_hub(IMAGE + ":latest")
    assert not is_dell_enterprise_hub("registry.dell.huggingface.co/other/enterprise-dell-inference-x")
    assert not is_dell_enterprise_hub("docker.io/enterprise-dell-inference-x")
    assert not tags_are_versions(IMAGE)
    # another image with the same env and label is not read as TGI by them
    other = SAMPLE.read_text().replace(IMAGE, "registry.example/serving:1")
    assert _run(other).containers == []


def test_a_stock_engine_beside_the_hub_image_serves_none_of_its_model() -> None:
    # the labelled model is baked into the Hub image: a stock TGI or vLLM container in the same pod that names no
    # model does not serve it. Both were sized as Llama 3.1 8B (the vLLM one with KV202's 131,072-token context
    # next to its own KV503 "names no model") once the derived model was given to every container naming none.
    sidecars = (
        "      volumes:\n",
        "        - name: embedder\n"
        "          image: ghcr.io/huggingface/text-generation-inference:2.4.0\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
        "        - name: small\n"
        "          image: vllm/vllm-openai:v0.10.0\n"
        '          args: ["--port", "8001"]\n'
        "          resources: {limits: {nvidia.com/gpu: 1}}\n"
        "      volumes:\n",
    )
    result = _run(SAMPLE.read_text().replace(*sidecars, 1))
    by_name = {cr.container_name: cr for cr in result.containers}
    assert set(by_name) == {"pretrained-model-container", "embedder", "small"}, set(by_name)
    hub = by_name["pretrained-model-container"]
    assert (
        hub.serving.model is not None and hub.serving.model.value == "meta-llama/Meta-Llama-3.1-8b-Instruct"
    )
    for name in ("embedder", "small"):
        cr = by_name[name]
        assert cr.serving.model is None and cr.plan is None, name
        assert "KV503" in {d.rule for d in result.diagnostics if d.container == name}, name
    assert not [d for d in result.diagnostics if d.container == "small" and d.rule == "KV202"]


def test_a_sidecar_of_an_operators_pod_serves_none_of_its_model() -> None:
    # the generic "a container naming no model serves its workload's derived model" gave an LLMInferenceService's
    # model to a stock vLLM sidecar of its template (sized, with KV202, beside its own KV503): KServe gives the
    # model to the `main` container only
    sample = (
        Path(__file__).resolve().parents[1]
        / "fixtures"
        / "collected"
        / "kserve__kserve__docs__samples__llmisvc__agentic-tool-calling__llmisvc-single-gpu.yaml"
    )
    side = (
        "      - name: side\n"
        "        image: vllm/vllm-openai:v0.10.0\n"
        '        args: ["--port", "8001"]\n'
        '        resources: {limits: {nvidia.com/gpu: "1"}}\n'
    )
    text = sample.read_text().replace(
        "  template:\n    containers:\n", "  template:\n    containers:\n" + side, 1
    )
    result = _run(text)
    by_name = {cr.container_name: cr for cr in result.containers}
    assert by_name["main"].model is not None
    assert by_name["side"].serving.model is None and by_name["side"].plan is None
    assert {d.rule for d in result.diagnostics if d.container == "side"} >= {"KV503"}
    assert not [d for d in result.diagnostics if d.container == "side" and d.rule == "KV202"]
