"""Ray Serve LLM on AWS Neuron: KV403 counts the NeuronCores of one pod, not of the worker group.

On GPUs Ray Serve LLM's engine is a placement group of one ``{"GPU": 1}`` bundle per TP x PP worker, placed over
the worker group's pods (ray@2.56.0 ``VLLMEngineConfig.placement_bundles``), so KV403 counts the group's GPUs.
On Neuron nothing pools the group's NeuronCores: Ray's bundles ask for ``GPU`` (or, with a non-NVIDIA
``accelerator_type``, ``CPU``: ``VLLMEngineConfig.use_gpu``), never Ray's ``neuron_cores`` resource, and vLLM's
Neuron platform runs every worker in one process whatever backend is asked (vllm-project/vllm
``vllm/platforms/neuron.py::NeuronPlatform.check_and_update_config``: ``world_size > 1`` ->
``distributed_executor_backend = "uni"``), which sees the NeuronCores of the pod it runs in only. The object is
a RayService of fixtures/collected (a 3-pod group of 2 NeuronCores each, TP 2 x PP 3)."""

from __future__ import annotations

from pathlib import Path

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "andrewdeweever__eks_llm__ray-service.yaml"
)


def _kv403(text: str) -> list[str]:
    result = run_documents(load_text(text, "ray.yaml"), Options(allow_hub=False))
    return [d.message for d in result.diagnostics if d.rule == "KV403"]


def test_neuron_engine_is_held_to_one_pods_neuroncores() -> None:
    text = SAMPLE.read_text()
    assert text.count("aws.amazon.com/neuroncore: 2") == 2 and "maxReplicas: 3" in text
    (msg,) = _kv403(text)
    assert "needs 6 NeuronCores but the pod gets 2" in msg


def test_the_same_group_on_gpus_holds_the_placement_group() -> None:
    # the control: 3 pods of 2 GPUs hold the 6 GPU bundles, so the Neuron finding is not a group miscount
    text = SAMPLE.read_text().replace("aws.amazon.com/neuroncore: 2", "nvidia.com/gpu: 2")
    assert _kv403(text) == []
    assert _kv403(text.replace("maxReplicas: 3", "maxReplicas: 2")) != []


def test_the_remedy_lowers_the_product_when_pipeline_stages_are_set() -> None:
    """TP 2 x PP 3 on 2 NeuronCores: tensor-parallel-size is already 2, so "lower tensor-parallel-size to 2" (the
    remedy before) changes nothing; it is the product of the sizes that must come down."""
    result = run_documents(load_text(SAMPLE.read_text(), "ray.yaml"), Options(allow_hub=False))
    (d,) = [d for d in result.diagnostics if d.rule == "KV403"]
    assert d.fix is not None
    assert "lower the parallel sizes so their product is 2" in d.fix
    assert "tensor-parallel-size to 2" not in d.fix
