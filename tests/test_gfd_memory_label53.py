"""GFD's ``nvidia.com/gpu.memory`` is NVML's memory total in MiB (24564 on an RTX 4090). A value that is no GPU's
memory (0, negative, not a whole number, more than kvlint reads: 10^12 MiB planned an exabyte GPU) is not read:
nothing is sized on it, and KV501 says why the GPU is unknown."""

from __future__ import annotations

import pytest

from kvlint.accelerators.placement import GFD_MEMORY_MAX_MIB
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.types import ContainerResult

_POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  nodeSelector: {{{labels}}}
  containers:
  - name: a
    image: vllm/vllm-openai:v0.8.5
    command: [vllm, serve, Qwen/Qwen2.5-0.5B-Instruct, --max-model-len, "4096"]
    resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def _run(labels: str):
    res = run_documents(load_text(_POD.format(labels=labels), "p.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    assert isinstance(cr, ContainerResult)
    return res, cr


ABSURD = ["0", "-24576", "abc", "2.5", str(GFD_MEMORY_MAX_MIB + 1), "1000000000000", "9" * 60]


@pytest.mark.parametrize("value", ABSURD)
def test_a_memory_label_that_is_no_gpus_memory_sizes_nothing(value: str) -> None:
    res, cr = _run(f'nvidia.com/gpu.memory: "{value}"')
    assert cr.placement is not None and cr.placement.accelerator is None and cr.plan is None
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "nvidia.com/gpu.memory=" in kv501.message and "is not a GPU's memory in MiB" in kv501.message
    assert "9" * 60 not in kv501.message  # the value is clipped


@pytest.mark.parametrize("value", ["1000000000000", "0"])
def test_a_product_not_in_the_catalogue_is_not_sized_on_an_absurd_memory_label(value: str) -> None:
    res, cr = _run(f'nvidia.com/gpu.product: NVIDIA-Imaginary-X1, nvidia.com/gpu.memory: "{value}"')
    assert cr.placement is not None and cr.placement.accelerator is None and cr.plan is None
    assert "is not a GPU's memory in MiB" in cr.placement.how


def test_a_known_product_keeps_its_own_memory_beside_an_absurd_label() -> None:
    _res, cr = _run('nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.memory: "1000000000000"')
    p = cr.placement
    assert p is not None and p.accelerator is not None and p.accelerator.id == "nvidia-l4"
    assert p.memory_bytes == p.accelerator.memory_bytes and "is not a GPU's memory in MiB" in p.how


def test_a_plausible_label_still_sizes_an_unknown_gpu() -> None:
    _res, cr = _run('nvidia.com/gpu.product: NVIDIA-Imaginary-X1, nvidia.com/gpu.memory: "65536"')
    assert cr.placement is not None and cr.placement.accelerator is not None and cr.plan is not None
