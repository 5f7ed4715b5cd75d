"""GPU feature discovery's ``nvidia.com/gpu.family`` (the architecture: ``ampere``, ``hopper``...; NVIDIA/
k8s-device-plugin internal/lm/resource.go ``getArchFamily``, from the compute capability) narrows the GPUs a
``nvidia.com/gpu.memory`` value matches, and never names a GPU by itself. kvlint ignored it: a node of 81,559 MiB
labelled ``ampere`` was planned on the H100 (the smallest of the 80 GB boards), with Hopper's FP8."""

from __future__ import annotations

from kvlint.accelerators import registry as cat
from kvlint.accelerators.placement import resolve_placement

CONTAINER = {"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": 1}}}


def _acc(selector: dict | None = None, affinity: list | None = None):
    pod: dict = {"containers": [CONTAINER]}
    if selector is not None:
        pod["nodeSelector"] = selector
    if affinity is not None:
        pod["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": affinity}]
                }
            }
        }
    return resolve_placement(pod, CONTAINER, {})


# (ampere is compute capability 8.x, hopper 9.x: getArchFamily)


def _memory_of(acc_id: str) -> str:
    return str(cat.nvml_total_mib(cat.catalogue()[acc_id]))


def test_family_narrows_the_gpus_a_memory_label_matches() -> None:
    mib = _memory_of("nvidia-a100-sxm4-80gb")
    alone = _acc({"nvidia.com/gpu.memory": mib})
    assert alone.accelerator is not None
    narrowed = _acc({"nvidia.com/gpu.memory": mib, "nvidia.com/gpu.family": "ampere"})
    assert narrowed.accelerator is not None
    assert narrowed.accelerator.cc[0] == 8
    assert all(a.cc[0] == 8 for a in narrowed.candidates)
    # the memory alone allowed a Hopper board, which the label now excludes
    assert any(a.cc[0] == 9 for a in [alone.accelerator, *alone.candidates])
    assert "nvidia.com/gpu.family=ampere" in narrowed.how


def test_family_excluding_every_match_leaves_a_gpu_of_that_memory_unnamed() -> None:
    p = _acc(
        {"nvidia.com/gpu.memory": _memory_of("nvidia-a100-sxm4-40gb"), "nvidia.com/gpu.family": "hopper"}
    )
    assert p.accelerator is not None and p.accelerator.id not in cat.catalogue()
    assert "excludes them all" in p.how


def test_family_alone_names_no_gpu() -> None:
    p = _acc({"nvidia.com/gpu.family": "hopper"})
    assert p.accelerator is None
    assert "names a GPU architecture, not a GPU model" in p.how


def test_ada_is_ampere_to_older_gfd_releases() -> None:
    mib = _memory_of("nvidia-l4")
    ada = _acc({"nvidia.com/gpu.memory": mib, "nvidia.com/gpu.family": "ada-lovelace"})
    assert ada.accelerator is not None and ada.accelerator.id == "nvidia-l4" and not ada.candidates
    old = _acc({"nvidia.com/gpu.memory": mib, "nvidia.com/gpu.family": "ampere"})
    kept = {a.id for a in [old.accelerator, *old.candidates] if a is not None}
    assert "nvidia-l4" in kept and len(kept) > 1


def test_family_in_affinity_narrows_a_memory_range() -> None:
    p = _acc(
        affinity=[
            {"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["80000"]},
            {"key": "nvidia.com/gpu.family", "operator": "In", "values": ["ampere"]},
        ]
    )
    assert p.accelerator is not None
    assert all(a.cc[0] == 8 for a in [p.accelerator, *p.candidates])
    assert p.accelerator.memory_bytes > 80000 * cat.MIB * 0.9


def test_every_catalogue_nvidia_gpu_has_a_family() -> None:
    from kvlint.accelerators.placement import gfd_families

    for a in cat.catalogue().values():
        if a.vendor == "nvidia" and a.cc is not None:
            assert gfd_families(a.cc), a.id


def test_family_in_affinity_keeps_the_memory_labels_other_gpus() -> None:
    # a nodeSelector nvidia.com/gpu.memory matching H100 and A100 80 GB boards (within 2 %), with a required
    # affinity on gpu.family=ampere: the A100s the memory allows satisfy the term, so the pod can schedule; the
    # family filter read only the memory's first match (the H100) and said no node could take the pod
    mib = _memory_of("nvidia-h100-sxm5-80gb")
    alone = _acc({"nvidia.com/gpu.memory": mib})
    assert alone.accelerator is not None and alone.accelerator.cc[0] == 9
    assert any(a.cc[0] == 8 for a in alone.candidates)
    p = _acc(
        {"nvidia.com/gpu.memory": mib},
        affinity=[{"key": "nvidia.com/gpu.family", "operator": "In", "values": ["ampere"]}],
    )
    assert p.accelerator is not None and p.accelerator.cc[0] == 8
    assert all(a.cc[0] == 8 for a in p.candidates)
    assert "cannot schedule" not in p.how
    assert "nvidia.com/gpu.family In [ampere]" in p.how


def test_ada_family_in_affinity_picks_an_ada_board_of_a_46068_mib_selector() -> None:
    # the A40, the RTX A6000, the L40S and the L20 all report 46,068 MiB (the GFD memory label); an L40S or L20 node
    # also carries nvidia.com/gpu.family=ada-lovelace (GFD releases with getArchFamily's 8.9 case). Before, the
    # family term read only the A40 (the first match) and said the pod could not schedule. The two Ada boards are
    # alike to the labels (same memory, compute capability 8.9): one is planned, the other kept as a candidate
    mib = _memory_of("nvidia-l40s")
    assert {_memory_of("nvidia-a40"), _memory_of("nvidia-rtx-a6000"), _memory_of("nvidia-l20")} == {mib}
    p = _acc(
        {"nvidia.com/gpu.memory": mib},
        affinity=[{"key": "nvidia.com/gpu.family", "operator": "In", "values": ["ada-lovelace"]}],
    )
    assert p.accelerator is not None
    assert {p.accelerator.id, *(a.id for a in p.candidates)} >= {"nvidia-l40s", "nvidia-l20"}
    assert all(a.cc == (8, 9) for a in [p.accelerator, *p.candidates])
    assert "cannot schedule" not in p.how
