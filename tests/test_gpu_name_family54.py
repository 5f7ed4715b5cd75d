"""A cloud's GPU-name node label whose value is an NVML name without its board and memory suffix (Volcengine VKE's
``machine.cluster.vke.volcengine.com/gpu-name: Tesla-V100`` in the shared corpus' vllm-project/aibrix
``samples/heterogeneous/deepseek-coder-7b-v100-deployment.yaml``) names every board of that name: the pod is sized on
the smallest (conservative) with the others checked, where the value "named no GPU" and the pod was sized against
the default fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.accelerators import registry
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "manifests"

_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: t}
spec:
  template:
    spec:
      nodeSelector: {%s: %s}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: [Qwen/Qwen2.5-7B-Instruct, --max-model-len, "8192"]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _placement(key: str, value: str) -> ContainerResult:
    result = run_documents(load_text(_MANIFEST % (key, value), "d.yaml"), Options(allow_hub=False))
    (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    return cr


def test_the_family_is_the_boards_the_catalogue_spells_with_that_name() -> None:
    """The catalogue's GFD values that are the name plus a board suffix, smallest memory first; not a longer model
    name (``Tesla-V100S``), not a vendor's word alone (``Tesla``: T4 and V100 are two models)."""
    gfd = registry._cat().gfd
    expected = sorted(
        {gid for k, gid in gfd.items() if k.startswith("tesla-v100-")},
        key=lambda i: registry.catalogue()[i].memory_bytes,
    )
    assert len(expected) >= 2
    assert [a.id for a in registry.gfd_product_family("Tesla-V100")] == expected
    assert registry.gfd_product_family("Tesla") == []
    assert registry.gfd_product_family("Tesla-V100-SXM2-16GB") == []  # a full value: gfd_product reads it


@pytest.mark.parametrize(
    "key", ["machine.cluster.vke.volcengine.com/gpu-name", "aliyun.accelerator/nvidia_name"]
)
def test_a_cloud_gpu_name_without_its_board_places_the_pod_on_its_smallest_board(key: str) -> None:
    cr = _placement(key, "Tesla-V100")
    p = cr.placement
    assert p is not None and p.accelerator is not None
    family = registry.gfd_product_family("Tesla-V100")
    assert p.accelerator.id == family[0].id
    assert [a.id for a in p.candidates] == [a.id for a in family]
    # a vendor word alone still names nothing
    p = _placement(key, "Tesla").placement
    assert p is None or p.accelerator is None


def test_the_corpus_v100_sample_is_sized_on_the_gpu_it_names() -> None:
    path = _CORPUS / "vllm-project__aibrix__samples__heterogeneous__deepseek-coder-7b-v100-deployment.yaml"
    if not path.is_file():
        pytest.skip("the shared corpus is not beside the checkout")
    result = run_documents(load_text(path.read_text(), str(path)), Options(allow_hub=False))
    (cr,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    assert cr.plan is not None and cr.placement is not None and cr.placement.accelerator is not None
    assert cr.placement.accelerator.id == registry.gfd_product_family("Tesla-V100")[0].id
