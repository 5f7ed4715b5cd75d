"""What GPU feature discovery writes on MIG and vGPU nodes, and the slice kvlint sizes from it (branch gpus54).

* mig.strategy=single: ``nvidia.com/gpu.product`` is ``<board>-MIG-<profile>`` and ``nvidia.com/gpu.memory`` the MIG
  device's own memory, NVML's ``memorySizeMB`` (NVIDIA k8s-device-plugin ``internal/resource/nvml-mig-device.go``
  ``GetAttributes``, ``internal/lm/resource.go`` ``NewMIGResourceLabeler``). A memory label above the whole board
  sized the slice as more than the board (``...-40GB-MIG-3g.20gb`` with 81920 planned an 80 GiB device); a label
  that is not the profile's figure was taken as it stood.
* A layout single cannot label is ``<board>-MIG-INVALID`` with count 0 (``internal/lm/mig-strategy.go``
  ``newInvalidMigStrategyLabeler``): it read as a MIG profile named INVALID the board does not offer.
* In a vGPU guest the product is the vGPU type NVML names (``GRID-T4-16Q``, ``NVIDIA-A40-48Q``): it was "not in the
  catalogue", so the pod was not sized (or, with a memory label, sized on a GPU of unknown compute capability).
"""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult, Placement

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{selector}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""
MIB = 2**20


def _placed(selector: str) -> ContainerResult:
    res = run_documents(load_text(_POD.format(selector=selector), "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    return cr


def _placement(selector: str) -> Placement:
    p = _placed(selector).placement
    assert p is not None
    return p


def _table_mib(acc: str, profile: str) -> int:
    prof, _ = cat.mig_profile(acc, profile)
    assert prof is not None
    return prof.memory_bytes // MIB


def test_a_mig_memory_label_gfd_writes_sizes_the_slice() -> None:
    table = _table_mib("nvidia-a100-sxm4-80gb", "1g.10gb")
    p = _placement(
        f"nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-1g.10gb, nvidia.com/gpu.memory: '{table}'"
    )
    assert p.mig_profile == "1g.10gb" and p.memory_bytes == table * MIB
    assert f"{table} MiB from nvidia.com/gpu.memory" in p.how


def test_a_mig_memory_label_above_the_whole_board_is_not_read() -> None:
    board = cat.require("nvidia-a100-sxm4-40gb")
    over = cat.nvml_total_mib(board) * 2
    cr = _placed(
        f"nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-MIG-3g.20gb, nvidia.com/gpu.memory: '{over}'"
    )
    p = cr.placement
    assert p is not None and p.mig_profile == "3g.20gb"
    assert p.memory_bytes == _table_mib(board.id, "3g.20gb") * MIB < board.memory_bytes
    assert f"nvidia.com/gpu.memory={over} MiB is more than the whole {board.id}" in p.how
    assert cr.plan is not None and cr.plan.total_bytes == p.memory_bytes


@pytest.mark.parametrize("factor", [0.5, 1.5])
def test_a_mig_memory_label_that_is_not_the_profiles_takes_the_smaller(factor: float) -> None:
    table = _table_mib("nvidia-a100-sxm4-80gb", "3g.40gb")
    label = int(table * factor)
    p = _placement(
        f"nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-3g.40gb, nvidia.com/gpu.memory: '{label}'"
    )
    assert p.memory_bytes == min(label, table) * MIB
    assert "took the smaller" in p.how


def test_mig_invalid_is_gfds_mark_of_a_node_with_no_gpu_to_offer() -> None:
    p = _placement("nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB-MIG-INVALID, nvidia.com/gpu.memory: '0'")
    assert p.accelerator is None and p.undecided
    said = " ".join(p.undecided)
    assert "nvidia.com/gpu.count 0" in said and "mig.strategy=single" in said
    assert "offers no MIG INVALID" not in said and "not a GPU's memory" not in said


def test_a_vgpu_guests_product_sizes_its_frame_buffer_on_its_board() -> None:
    """``GRID-T4-16Q``: a T4's 16 GB Q-series type (the name's 16 GB x 1024 MiB, NVIDIA's type tables), on the T4's
    compute capability; the guest reserve is the catalogue's NVML-to-CUDA reserve (placement.VGPU_GUEST_SRC)."""
    p = _placement("nvidia.com/gpu.product: GRID-T4-16Q")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-t4"
    assert p.memory_bytes == (16 * 1024 - cat.driver_reserve_mib()) * MIB
    assert p.device_share == "T4-16Q vGPU" and p.device_name == "Tesla T4 T4-16Q vGPU"


def test_an_a40_48q_guest_is_sized_near_what_vllm_printed_there() -> None:
    """vLLM 0.6.4.post1 in an NVIDIA A40-48Q guest printed total_gpu_memory=47.74GiB (vllm-project/vllm#11230,
    fixtures/accelerators/vgpu-guest-totals.yaml); GFD there writes the guest's NVML total, 49152 MiB."""
    p = _placement("nvidia.com/gpu.product: NVIDIA-A40-48Q, nvidia.com/gpu.memory: '49152'")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a40" and p.memory_bytes is not None
    assert abs(p.memory_bytes / 2**30 - 47.74) / 47.74 < 0.01


@pytest.mark.parametrize(("product", "mib"), [("GRID-P40-4Q", 4096), ("NVIDIA-A100-80C", 81920)])
def test_a_vgpu_type_of_a_board_kvlint_does_not_name_is_sized_on_its_frame_buffer(
    product: str, mib: int
) -> None:
    """P40 is not in the catalogue; ``A100-80C`` is not a type of the 40 GB board the alias ``a100`` names."""
    p = _placement(f"nvidia.com/gpu.product: {product}")
    assert p.accelerator is not None and p.accelerator.id.startswith("nvidia-gfd-")
    assert p.memory_bytes == (mib - cat.driver_reserve_mib()) * MIB
    assert "a vGPU guest's GPU" in p.how


@pytest.mark.parametrize(
    "product", ["NVIDIA-A100-SXM4-40GB", "NVIDIA-L4", "Tesla-T4", "NVIDIA-H100-80GB-HBM3"]
)
def test_board_products_are_not_read_as_vgpu_types(product: str) -> None:
    assert cat.vgpu_type(product) is None
    p = _placement(f"nvidia.com/gpu.product: {product}")
    assert (
        p.device_share is None and p.accelerator is not None and p.memory_bytes == p.accelerator.memory_bytes
    )


def test_a_live_vgpu_node_is_read_as_its_pods_labels_are() -> None:
    """``--cluster`` reads a node's labels as GFD wrote them (kvlint.cluster): an A40-48Q guest node is that frame
    buffer on an A40, as a pod's nodeSelector naming it is."""
    from kvlint.cluster import inventory_from_node_list, placement_from_cluster

    node = {
        "kind": "Node",
        "metadata": {
            "name": "vgpu-a40",
            "labels": {"nvidia.com/gpu.product": "NVIDIA-A40-48Q", "nvidia.com/gpu.memory": "49152"},
        },
        "status": {"allocatable": {"nvidia.com/gpu": "1"}},
    }
    inventory = inventory_from_node_list({"kind": "NodeList", "items": [node]})
    pod = {"containers": [{"name": "v", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}
    live = placement_from_cluster(pod, pod["containers"][0], inventory)
    selected = _placement("nvidia.com/gpu.product: NVIDIA-A40-48Q, nvidia.com/gpu.memory: '49152'")
    assert live.accelerator is not None and live.accelerator.id == "nvidia-a40"
    assert (live.memory_bytes, live.device_share) == (selected.memory_bytes, selected.device_share)
    assert live.device_share == "A40-48Q vGPU"


def test_a_time_sliced_vgpu_guest_is_shared_and_sized_on_its_frame_buffer() -> None:
    """GFD appends ``-SHARED`` to the product of a time-sliced GPU (``internal/lm/resource.go`` ``productLabel``): a
    shared vGPU guest is both (before: "GRID-T4-16Q" was not read, with or without the suffix)."""
    p = _placement("nvidia.com/gpu.product: GRID-T4-16Q-SHARED")
    assert p.accelerator is not None and p.accelerator.id == "nvidia-t4" and p.shared
    assert p.device_share == "T4-16Q vGPU" and "-SHARED" in p.how


def _approximate_rows() -> list[tuple[str, str, str, int]]:
    """Every catalogue MIG row that is no measurement (``approximate: <n> GB from the profile name``) on a board GFD
    names: (GFD product, board, profile, MiB)."""
    products: dict[str, str] = {}
    for value, row in cat._cat().raw["labels"]["nvidia_gpu_product"]["values"].items():
        if row.get("id"):
            products.setdefault(row["id"], value)
    rows = [
        (products[gid], gid, name, prof.memory_bytes // MIB)
        for gid, table in sorted(cat._cat().mig.items())
        if gid in products
        for name, prof in table.items()
        if prof.status.startswith("approximate") and cat.mig_profile_name(name) == name and "+" not in name
    ]
    assert rows, "no approximate MIG row in the catalogue"
    return rows


@pytest.mark.parametrize(("product", "gid", "profile", "table"), _approximate_rows())
def test_a_mig_memory_label_is_not_overruled_by_an_approximate_table_row(
    product: str, gid: str, profile: str, table: int
) -> None:
    """An ``approximate`` row is the profile name's GB read as 10**9 bytes (H100 NVL 4g.47gb: 44822 MiB, while its
    3g.47gb sibling measures 47493 MiB in ``nvidia-smi mig -lgip``): GFD's label is NVML's own figure for the slice
    and sizes it (before: the approximate row was taken as 'the smaller', some GiB under the real slice)."""
    label = int(table * 1.05)
    if label > cat.nvml_total_mib(cat.require(gid)):
        pytest.skip("a label 5% above this row would be above the whole board")
    p = _placement(f"nvidia.com/gpu.product: {product}-MIG-{profile}, nvidia.com/gpu.memory: '{label}'")
    assert p.accelerator is not None and p.accelerator.id == gid and p.mig_profile == profile
    assert p.memory_bytes == label * MIB
    assert "took the smaller" not in p.how


@pytest.mark.parametrize("product", ["GRID-T4-999Q", "NVIDIA-L4-480Q", "NVIDIA-A40-96Q-SHARED"])
def test_a_vgpu_type_larger_than_every_board_of_its_name_is_not_sized(product: str) -> None:
    """A vGPU's frame buffer is a share of one board's memory (NVIDIA's vGPU type tables): ``T4-999Q`` names no T4's
    type. It was sized as a generic GPU of the name's frame buffer (998 GiB, no finding) with a note that the T4 is no
    catalogue GPU; it is now left unsized, KV501 saying why."""
    cr = _placed(f"nvidia.com/gpu.product: {product}")
    p = cr.placement
    assert p is not None and p.accelerator is None and cr.plan is None
    t = cat.vgpu_type(product.removesuffix("-SHARED"))
    assert t is not None and t.exceeds is not None
    assert t.frame_buffer_mib > (cat.nominal_memory_mib(t.exceeds) or cat.nvml_total_mib(t.exceeds))
    said = " ".join(p.undecided)
    assert f"more than any {t.board} kvlint knows ({t.exceeds.id}" in said
    assert "does not read as a catalogue GPU" not in said


def test_a_vgpu_type_another_board_of_its_name_holds_is_still_sized() -> None:
    """``A100-80C``: larger than the 40 GB board the alias ``a100`` names, but an A100 80GB holds it; sized on its
    frame buffer as before."""
    t = cat.vgpu_type("NVIDIA-A100-80C")
    assert t is not None and t.exceeds is None and t.accelerator is None


@pytest.mark.parametrize("product", ["NVIDIA-\u017f4-16Q", "NVIDIA-\u212a40-48Q"])
def test_a_non_ascii_look_alike_is_not_read_as_a_vgpu_type(product: str) -> None:
    """``ſ`` (long s) and ``K`` (Kelvin sign) match ``[A-Z]`` under a Unicode IGNORECASE: ``NVIDIA-ſ4-16Q`` was read as
    the vGPU type ``S4-16Q`` and sized as a 16 GiB GPU. NVML names are ASCII; such a value is a GPU kvlint does not
    know (KV501), as before branch gpus54."""
    assert cat.vgpu_type(product) is None
    p = _placement(f"nvidia.com/gpu.product: {product}")
    assert p.accelerator is None and p.device_share is None
