"""Which board a vGPU type names (branch gpus55). NVIDIA spells the board's form factor and memory into a vGPU type's
board part: ``H100-80C`` is a type of the H100 PCIe 80GB, ``H100XM-80C`` of the H100 SXM5 80GB, ``A100-40C`` of the
A100 PCIe 40GB, ``A100X-40C`` of the A100 HGX 40GB, ``A100DX-80C`` of the A100 HGX 80GB (NVIDIA Virtual GPU Software
User Guide, "Virtual GPU Types for Supported GPUs" and its peer-to-peer and NVSwitch tables). Before, the board part
was read as the catalogue's short alias: ``H100-80C`` named the SXM5 board, ``A100-40C`` the SXM4 40GB, and
``H100XM-80C`` no catalogue board at all (a GPU of unknown compute capability). The memory stays the type's frame
buffer, not the board's."""

from __future__ import annotations

import pytest

from kvlint.accelerators import registry as cat
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{nvidia.com/gpu.product: {product}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.11.0
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


@pytest.mark.parametrize(
    ("product", "board", "frame_buffer_gb"),
    [
        ("NVIDIA-H100-80C", "nvidia-h100-pcie-80gb", 80),
        ("NVIDIA-H100XM-80C", "nvidia-h100-sxm5-80gb", 80),
        ("NVIDIA-H100XM-40C", "nvidia-h100-sxm5-80gb", 40),
        ("NVIDIA-H100L-94C", "nvidia-h100-nvl-94gb", 94),
        ("GRID-A100-40C", "nvidia-a100-pcie-40gb", 40),
        ("NVIDIA-A100X-20C", "nvidia-a100-sxm4-40gb", 20),
        ("NVIDIA-A100D-3-40C", "nvidia-a100-pcie-80gb", 40),
        ("NVIDIA-A100DX-80C", "nvidia-a100-sxm4-80gb", 80),
        ("NVIDIA-H200X-141C", "nvidia-h200-141gb", 141),
        ("NVIDIA-H200-141C", "nvidia-h200-nvl-141gb", 141),
        # the whole-board types of boards whose NVML total is under the GB NVIDIA names them by (H20: 97,871 MiB
        # for "96GB"; H20 141GB: 143,771 MiB): NVIDIA's own tables put these types on these boards (review55C)
        ("NVIDIA-H20-96C", "nvidia-h20", 96),
        ("NVIDIA-H20X-141C", "nvidia-h20-3e", 141),
    ],
)
def test_a_vgpu_type_is_sized_on_the_board_its_name_spells_with_its_frame_buffer(
    product: str, board: str, frame_buffer_gb: int
) -> None:
    res = run_documents(load_text(_POD.format(product=product), "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult) and cr.placement is not None
    p = cr.placement
    assert p.accelerator is not None and p.accelerator.id == board
    assert p.memory_bytes == (frame_buffer_gb * 1024 - cat.driver_reserve_mib()) * 2**20
    assert p.accelerator.cc == cat.require(board).cc


def test_a_board_part_nvidia_spells_for_a_board_not_in_the_catalogue_is_not_read_as_another() -> None:
    """``H100XS-64C`` is a type of the H100 SXM5 64GB, which the catalogue does not hold: not the alias's board."""
    t = cat.vgpu_type("NVIDIA-H100XS-64C")
    assert t is not None and t.accelerator is None and t.exceeds is None and t.frame_buffer_mib == 64 * 1024


def test_a_type_larger_than_the_board_nvidia_spells_is_not_put_on_it() -> None:
    """``A100-80C`` is no type of the A100 PCIe 40GB (its largest is ``A100-40C``): not read as that board."""
    t = cat.vgpu_type("NVIDIA-A100-80C")
    assert t is not None and (t.accelerator is None or t.accelerator.id != "nvidia-a100-pcie-40gb")
