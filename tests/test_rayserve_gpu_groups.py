"""Ray Serve LLM on a RayService with worker groups of different GPU types (each group its own nodeSelector). Ray
Serve LLM asks Ray for one ``{"GPU": 1}`` bundle per worker, strategy PACK (ray-project/ray
``VLLMEngineConfig.placement_bundles``), which Ray fills on any node with free GPUs; an ``accelerator_type`` adds
the node resource ``accelerator_type:<name>`` to each bundle, so only nodes of that GPU take them. kvlint took the
first GPU group's pod whatever the engine asked: an engine pinned to the A100 group was read with the L4 group's
GPU count, and one free to run anywhere was planned on whichever group came first (the A100) without a word.
The object is KubeRay's own sample (fixtures/collected, ray-service.llm-serve.yaml) with its one GPU group split
into two of different GPUs; the expected GPUs and counts are those the groups' own fields name."""

from __future__ import annotations

from pathlib import Path

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents

SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "collected"
    / "ray-project__kuberay__ray-operator__config__samples__ray-service.llm-serve.yaml"
)


def _two_groups(first: str, accelerator_type: str | None = None) -> str:
    """The sample with a group of 4 L4 and one of 8 A100 80GB (``first`` of them first)."""
    text = SAMPLE.read_text().split("\n---\n")[0]
    start = text.index("    - replicas: 1\n      minReplicas: 1")
    group = text[start:]
    assert group.count('nvidia.com/gpu: "4"') == 2 and "groupName: gpu-group" in group

    def variant(name: str, gke: str, gpus: int) -> str:
        return (
            group.replace("groupName: gpu-group", f"groupName: {name}")
            .replace(
                "      template:\n        spec:\n",
                f"      template:\n        spec:\n          nodeSelector: {{cloud.google.com/gke-accelerator: {gke}}}\n",
            )
            .replace('nvidia.com/gpu: "4"', f'nvidia.com/gpu: "{gpus}"')
            .replace('num-gpus: "4"', f'num-gpus: "{gpus}"')
        )

    l4, a100 = variant("l4-group", "nvidia-l4", 4), variant("a100-group", "nvidia-a100-80gb", 8)
    out = text[:start] + (l4 + a100 if first == "l4" else a100 + l4)
    if accelerator_type:
        out = out.replace(
            "          engine_kwargs:\n",
            f"          accelerator_type: {accelerator_type}\n          engine_kwargs:\n",
        )
    return out


def _read(text: str):
    result = run_documents(load_text(text, "ray.yaml"), Options(allow_hub=False))
    (cr,) = result.containers
    assert cr.placement is not None and cr.placement.accelerator is not None
    notes = [d.message for d in result.diagnostics if d.rule == "KV504" and "worker groups" in d.message]
    return cr.placement.accelerator.id, cr.placement.gpus, notes


def test_accelerator_type_picks_the_group_of_that_gpu() -> None:
    acc, gpus, notes = _read(_two_groups("l4", "A100-80G"))
    assert (acc, gpus, notes) == ("nvidia-a100-sxm4-80gb", 8, [])


def test_without_accelerator_type_the_smallest_gpu_is_planned_and_said() -> None:
    acc, gpus, (note,) = _read(_two_groups("a100"))
    assert (acc, gpus) == ("nvidia-l4", 4)
    assert "l4-group: NVIDIA L4" in note and "a100-group: NVIDIA A100-SXM4-80GB" in note
    assert note.endswith("kvlint plans it on the GPU with the least memory, NVIDIA L4 of group l4-group")


def test_one_gpu_type_needs_no_note() -> None:
    acc, gpus, notes = _read(_two_groups("l4").replace("nvidia-a100-80gb", "nvidia-l4"))
    assert acc == "nvidia-l4" and notes == []
