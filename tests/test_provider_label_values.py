"""A provider's GPU label with a value outside that provider's table is named in KV501 (gpus49).

kvlint reads ``gpu.nvidia.com/class`` with the values of CoreWeave's node-type table and
``doks.digitalocean.com/gpu-model`` with those of DigitalOcean's list; other clusters reuse the first key with
values of their own (Ori Cloud's node-selector page, https://docs.ori.co/kubernetes/node-selector:
``H100SXM-80``, ``H100-80``, ``L40S``, ``L4``). Such a value decides nothing, rightly, but KV501 said only "kvlint
cannot tell which GPU this pod lands on", with no word of the label, where every other unread GPU label is named."""

from __future__ import annotations

import pytest

# the Deployment with a placement slot and the one-term node affinity, as the cloud-label tests write them
from test_cloud_gpu_labels import AFFINITY, MANIFEST

from kvlint.accelerators.registry import instance_type
from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents


def _kv501(placement: str) -> tuple[str | None, str]:
    result = run_documents(
        load_text(MANIFEST.format(placement=placement), "d.yaml"), Options(allow_hub=False)
    )
    (cr,) = result.containers
    acc = cr.placement.accelerator.id if cr.placement.accelerator is not None else None
    return acc, " ".join(d.message for d in result.diagnostics if d.rule == "KV501")


@pytest.mark.parametrize(
    ("key", "value", "table", "spelled"),
    [
        ("gpu.nvidia.com/class", "H100SXM-80", "CoreWeave's node-type table", None),
        ("gpu.nvidia.com/class", "L40S", "CoreWeave's node-type table", "NVIDIA L40S (nvidia-l40s)"),
        (
            "doks.digitalocean.com/gpu-model",
            "l40s",
            "DigitalOcean's GPU model list",
            "NVIDIA L40S (nvidia-l40s)",
        ),
    ],
)
@pytest.mark.parametrize("form", ["nodeSelector", "affinity"])
def test_kv501_names_a_provider_label_value_kvlint_does_not_read(
    key: str, value: str, table: str, spelled: str | None, form: str
) -> None:
    placement = (
        f"      nodeSelector: {{{key}: {value}}}"
        if form == "nodeSelector"
        else AFFINITY.format(key=key, value=value)
    )
    acc, msg = _kv501(placement)
    assert acc is None  # still not read: the value is not the provider's
    assert f"label {key}={value} is not a value of {table} kvlint reads" in msg, msg
    assert ("its value spells " + spelled in msg) if spelled else "its value spells" not in msg
    assert "accelerators.node_labels in .kvlint.yaml" in msg
    assert "planned on kvlint's default fleet" in msg


def test_a_value_of_the_table_still_decides_without_the_note() -> None:
    acc, msg = _kv501("      nodeSelector: {gpu.nvidia.com/class: A40}")
    assert acc == "nvidia-a40" and "is not a value of" not in msg


@pytest.mark.parametrize(
    ("size", "gid", "count"),
    [
        # MicrosoftDocs/azure-docs sizes/gpu-accelerated/includes: nccadsh100v5 "1 GPU, Nvidia H100 GPU (94GB)",
        # ndv2 "8 GPUs, NVIDIA V100 (NVLink) 32 GiB"
        ("Standard_NCC40ads_H100_v5", "nvidia-h100-nvl-94gb", 1),
        ("Standard_ND40rs_v2", "nvidia-v100-sxm2-32gb", 8),
    ],
)
def test_azure_vm_sizes_of_the_azure_docs_place_the_pod(size: str, gid: str, count: int) -> None:
    """Two AKS VM sizes the catalogue lacked (KV501 said "not a GPU instance type in the catalogue")."""
    acc, msg = _kv501(f"      nodeSelector: {{node.kubernetes.io/instance-type: {size}}}")
    assert acc == gid, msg
    it = instance_type(size)
    assert it is not None and it.gpus == count
