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


# Ray labels every A100 node ``A100`` (its NVIDIA detection keeps the model word of the NVML device name:
# ray-project/ray python/ray/_private/accelerators/nvidia_gpu.py); kvlint read ``accelerator_type: A100`` as the
# 40 GB part whatever the worker group's nodes were, so an engine on a group of A100 80GB nodes was planned on
# 40 GB (and, with an L4 group first, on the L4 group's pod and GPU count).


def test_a100_label_matches_a_group_of_a100_80gb_nodes() -> None:
    acc, gpus, notes = _read(_two_groups("l4", "A100"))
    assert (acc, gpus, notes) == ("nvidia-a100-sxm4-80gb", 8, [])


def test_a100_label_on_the_only_gpu_group_takes_its_80gb_nodes() -> None:
    one = _two_groups("a100", "A100").replace("nvidia-l4", "nvidia-a100-80gb")
    acc, _gpus, notes = _read(one)
    assert (acc, notes) == ("nvidia-a100-sxm4-80gb", [])


def test_a100_label_on_40gb_and_80gb_groups_plans_the_smaller() -> None:
    acc, gpus, notes = _read(_two_groups("a100", "A100").replace("nvidia-l4", "nvidia-tesla-a100"))
    assert (acc, notes) == ("nvidia-a100-sxm4-40gb", [])
    assert gpus == 4  # the 40 GB group's pod (4 GPUs each)


def test_hand_label_of_one_size_does_not_take_the_other() -> None:
    # A100-40G is put by hand on 40 GB nodes only: a group of 80 GB nodes does not bear it
    one = _two_groups("a100", "A100-40G").replace("nvidia-l4", "nvidia-a100-80gb")
    acc, _gpus, _notes = _read(one)
    assert acc == "nvidia-a100-sxm4-40gb"


def test_ray_labels_of_the_catalogue() -> None:
    from kvlint.accelerators.registry import catalogue
    from kvlint.workloads.rayserve import ray_gpu_label, ray_label_matches

    accs = list(catalogue().values())
    a100s = [a for a in accs if a.vendor == "nvidia" and "A100" in a.name]
    assert len(a100s) >= 4
    for a in a100s:
        assert ray_gpu_label(a) == "A100" and ray_label_matches("A100", a)
        size = "80GB" if "80GB" in a.name else "40GB"
        assert ray_label_matches(f"A100-{size[:2]}G", a)
        assert not ray_label_matches(f"A100-{'40' if size == '80GB' else '80'}G", a)
    assert all(ray_gpu_label(a) is None for a in accs if a.vendor != "nvidia")
    assert {ray_gpu_label(a) for a in accs if a.vendor == "nvidia" and a.name.startswith("NVIDIA H100")} == {
        "H100"
    }


# An accelerator_type whose node resource no worker group's GPU carries: Ray's bundles each ask for
# accelerator_type:<label>, which Ray puts only on nodes whose NVML name gives that label, so the placement group
# stays pending. Ray Serve LLM asks A10 as A10G (LLMConfig.validate_accelerator_type), a label no NVIDIA A10 node
# has. kvlint planned the engine on the label's GPU without a word.


def _unplaced(text: str) -> list[str]:
    result = run_documents(load_text(text, "ray.yaml"), Options(allow_hub=False))
    return [
        d.message
        for d in result.diagnostics
        if d.rule == "KV504" and "placement group stays pending" in d.message
    ]


def test_accelerator_type_no_group_carries_is_said() -> None:
    notes = _unplaced(_two_groups("l4", "A100-40G"))  # the A100 group is of 80 GB nodes
    assert len(notes) == 1 and "accelerator_type:A100-40G" in notes[0] and "a100-group" in notes[0]
    a10 = _two_groups("l4", "A10").replace(
        "{cloud.google.com/gke-accelerator: nvidia-a100-80gb}", "{nvidia.com/gpu.product: NVIDIA-A10}"
    )
    (note,) = _unplaced(a10)
    assert "as A10G" in note
    # the label a group carries, or a group whose GPU kvlint cannot tell (it may carry it): nothing said
    assert _unplaced(_two_groups("l4", "L4")) == [] and _unplaced(_two_groups("l4", "A100")) == []
    unnamed = _two_groups("l4", "H100").replace(
        "          nodeSelector: {cloud.google.com/gke-accelerator: nvidia-a100-80gb}\n", ""
    )
    assert _unplaced(unnamed) == []


def _cpu_group_first(resource: str) -> str:
    """The sample with a CPU-only worker group before its GPU group, whose GPUs are asked as ``resource``."""
    text = SAMPLE.read_text().split("\n---\n")[0]
    start = text.index("    - replicas: 1\n      minReplicas: 1")
    group = text[start:]
    cpu = group.replace("groupName: gpu-group", "groupName: cpu-group").replace(
        '                nvidia.com/gpu: "4"\n', ""
    )
    cpu = cpu.replace('        num-gpus: "4"', '        num-cpus: "32"')
    assert "nvidia.com/gpu" not in cpu
    return text[:start] + cpu + group.replace('nvidia.com/gpu: "4"', f'{resource}: "4"')


def test_a_group_asking_mig_slices_or_amd_partitions_is_the_gpu_group() -> None:
    """A MIG slice (``nvidia.com/mig-3g.40gb``) and an AMD partition (``amd.com/cpx_nps4``) are devices the engine
    runs on: the group asking them is the GPU group, not the CPU group written before it."""
    for resource in ("nvidia.com/mig-3g.40gb", "amd.com/cpx_nps4", "nvidia.com/gpu.shared"):
        result = run_documents(load_text(_cpu_group_first(resource), "ray.yaml"), Options(allow_hub=False))
        (cr,) = result.containers
        assert cr.placement is not None and cr.placement.resource == resource, resource
        assert cr.placement.gpus == 4
