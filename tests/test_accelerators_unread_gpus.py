"""GPUs that real manifests name and the catalogue lacked (accel46): the GeForce RTX 2080 Ti of des-chatbot, named
by a label of the team's own (``accelerator: nvidia-gtx-2080ti``), and the GPU labels kvlint does not read.

The 2080 Ti's device total is a deviceQuery capture (WonyoungCho/CUDA ``docs/rtx2080Ti.md``, cited in
``kvlint/accelerators/supplement.yaml``); the tests read it from the catalogue, never restate it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kvlint.accelerators import lookup, resolve_placement
from kvlint.accelerators.registry import nvml_total_mib
from kvlint.config import apply_config, parse_config
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
COLLECTED = ROOT / "fixtures" / "collected"
DES_CHATBOT = COLLECTED / "TobiasEdman__des-chatbot__k8s__vllm-deployment.yaml"


def place(labels: dict[str, Any]) -> Any:
    pod = {
        "nodeSelector": dict(labels),
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}],
    }
    return resolve_placement(pod, pod["containers"][0], {})


def test_the_rtx_2080_ti_is_in_the_catalogue_by_its_names() -> None:
    """GFD's product label (with and without the NVIDIA- prefix older drivers dropped), the short aliases and the
    spelling des-chatbot's label uses resolve to one Turing entry: compute capability 7.5, so vLLM's bf16 and fp8
    rules refuse both."""
    acc = lookup("nvidia-geforce-rtx-2080-ti")
    assert acc is not None and acc.compute_capability == "7.5" and not acc.bf16 and not acc.fp8
    assert 10 * 2**30 < acc.memory_bytes < 11 * 2**30  # an 11 GB board as CUDA reports it (GiB below the box)
    for name in (
        "NVIDIA-GeForce-RTX-2080-Ti",
        "GeForce-RTX-2080-Ti",
        "rtx-2080-ti",
        "rtx-2080ti",
        "gtx-2080ti",
    ):
        assert lookup(name) is acc, name


def test_a_22gb_modified_2080_ti_is_sized_by_its_memory_label() -> None:
    """One NVML name covers the 11 GB board and boards modified to 22 GB (nvidia-smi 22528 MiB): GFD's memory
    label, more than 2 % off the catalogue figure, replaces it."""
    acc = lookup("rtx-2080-ti")
    assert acc is not None
    stock = place({"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-2080-Ti"})
    assert stock.accelerator is acc and stock.memory_bytes == acc.memory_bytes
    modded = place({"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-2080-Ti", "nvidia.com/gpu.memory": "22528"})
    assert modded.accelerator is acc
    assert modded.memory_bytes is not None and modded.memory_bytes > 2 * acc.memory_bytes * 0.95
    assert nvml_total_mib(acc) < 22528 / 1.9


def test_kv501_names_the_gpu_a_label_of_the_teams_own_spells() -> None:
    """des-chatbot's ``accelerator: nvidia-gtx-2080ti`` is not a key kvlint reads (its values are the cluster's to
    define), so the pod still gets the fleet verdict; KV501 now says the value spells a catalogue GPU and how to
    map it, where it said only that the label is not read."""
    res = run_check([str(DES_CHATBOT)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert (
        "label accelerator=nvidia-gtx-2080ti is not one kvlint reads; its value spells NVIDIA GeForce RTX 2080 Ti"
        in (d.message)
    )
    assert "accelerators.node_labels in .kvlint.yaml" in d.message
    assert "planned on kvlint's default fleet" in d.message


def test_with_the_mapping_des_chatbot_is_sized_on_its_2080_ti(tmp_path: Path) -> None:
    """The mapping KV501 suggests, with the label's own value: the pod is planned on the 2080 Ti, no KV501."""
    text = "accelerators:\n  node_labels:\n    accelerator: {nvidia-gtx-2080ti: gtx-2080ti}\n"
    cfg = tmp_path / ".kvlint.yaml"
    cfg.write_text(text)
    opts = apply_config(Options(allow_hub=False), parse_config(text, str(cfg)))
    res = run_check([str(DES_CHATBOT)], opts)
    (cr,) = [c for c in res.containers if c.plan is not None]
    acc = lookup("rtx-2080-ti")
    assert cr.placement is not None and cr.placement.accelerator is acc
    assert cr.plan.total_bytes == acc.memory_bytes  # type: ignore[union-attr]
    assert not any(d.rule == "KV501" for d in res.diagnostics)


def test_a_label_value_that_spells_no_catalogue_gpu_keeps_the_plain_hint(tmp_path: Path) -> None:
    """A cluster's own GPU-name label (``node.example.com/gpu-name``, made up for this test) is not read, and a
    value that spells no catalogue GPU (``Tesla-V100``, 16 or 32 GB unsaid): KV501 keeps "not one kvlint reads
    (use ...)" and names no GPU. (Volcengine VKE's ``machine.cluster.vke.volcengine.com/gpu-name``, which this
    test used, is now read: tests/test_cloud_gpu_labels.py.)"""
    manifest = tmp_path / "vke.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n"
        "      nodeSelector: {node.example.com/gpu-name: Tesla-V100}\n"
        "      containers:\n      - name: s\n        image: vllm/vllm-openai:v0.9.1\n"
        "        command: [vllm, serve, Qwen/Qwen3-8B]\n        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(manifest)], Options(allow_hub=False))
    (d,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "gpu-name=Tesla-V100 is not one kvlint reads (use kvlint.io/accelerator" in d.message
    assert "spells" not in d.message


def test_a_gpu_instance_type_whose_gpu_is_not_in_the_catalogue_says_so() -> None:
    """``ml.p6-b300.48xlarge`` (aws-samples' SageMaker HyperPod Kimi K3 in fixtures/collected): an EC2 type of 8 B300
    GPUs in the Karpenter table, whose GPU the catalogue does not hold. KV501 said "is not a GPU instance type in the
    catalogue" (branch gpus54), sending the user to look for a mistyped instance type; it now says what the type is
    and that its GPU is what kvlint cannot size. A type that is not in the table keeps the old words."""
    from kvlint.accelerators.registry import instance_type

    it = instance_type("p6-b300.48xlarge")
    assert it is not None and it.accelerator is None and it.gpus == 8
    p = place({"node.kubernetes.io/instance-type": "ml.p6-b300.48xlarge"})
    said = " ".join(p.undecided)
    assert p.accelerator is None and "is an instance type of 8 GPUs kvlint cannot size" in said, said
    assert "not a GPU instance type" not in said
    other = " ".join(place({"node.kubernetes.io/instance-type": "x9.big"}).undecided)
    assert "x9.big is not a GPU instance type in the catalogue" in other
