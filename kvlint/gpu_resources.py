"""The container extended resources that carry accelerators, written once for every module that names them.

Device plugins advertise these names and pods request them in ``resources.limits`` (``nvidia.com/gpu: 1``):
NVIDIA's (``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` with time-slicing renamed, ``nvidia.com/mig-<profile>``
with the mixed MIG strategy), AMD's (``amd.com/gpu``), Google's TPU chips, Habana's Gaudi, AWS Neuron's three
Intel's GPU plugin's (``gpu.intel.com/i915`` for GPUs on the i915 kernel driver, ``gpu.intel.com/xe`` for
those on the xe driver; intel/intel-device-plugins-for-kubernetes ``cmd/gpu_plugin/README.md``, v0.31.0 and
later) and Huawei's Ascend NPUs (:data:`ASCEND_NPU_RESOURCES`); AMD's partitions under its ``mixed`` naming
(``amd.com/cpx_nps4``, :data:`AMD_PARTITION_RESOURCE`). Plain constants and two small tests of a name, importing
nothing of kvlint: the loader and the renderer read them without importing the accelerator catalogue
(:mod:`kvlint.accelerators`).
"""

from __future__ import annotations

import re

__all__ = [
    "AMD_GPU",
    "AMD_PARTITION_RESOURCE",
    "ASCEND_NPU_RESOURCES",
    "GAUDI_RESOURCE",
    "GPU_RESOURCES",
    "MIG_RESOURCE_PREFIX",
    "NEURON_CORE_RESOURCE",
    "NEURON_DEVICE_RESOURCES",
    "NON_GPU_RESOURCES",
    "NVIDIA_GPU",
    "NVIDIA_GPU_SHARED",
    "TPU_RESOURCE",
    "WHOLE_GPUS",
    "amd_partition_of",
    "is_gpu_resource",
]

#: NVIDIA's device plugin's whole GPU
NVIDIA_GPU = "nvidia.com/gpu"
#: NVIDIA's device plugin's GPU when time-slicing is configured with ``renameByDefault``
NVIDIA_GPU_SHARED = "nvidia.com/gpu.shared"
#: AMD's device plugin's whole GPU
AMD_GPU = "amd.com/gpu"
#: How the AMD device plugin names a GPU or compute partition under its ``mixed`` resource naming strategy: after the
#: node labeller's compute-memory partition value (``amd.com/cpx_nps4: 64`` on a node of 8 CPX-NPS4 MI300X,
#: ``amd.com/spx_nps1`` for a whole GPU; ``single``, the default, names them all ``amd.com/gpu``:
#: github:ROCm/k8s-device-plugin/docs/user-guide/configuration.md@af51ed1db60839d47c59027e896ac106f8b813a7,
#: "Resource Naming Strategy"). Group 1 is the partition value (``cpx_nps4``).
AMD_PARTITION_RESOURCE = re.compile(r"amd\.com/([a-z]px_nps[0-9]+)")
#: The whole-GPU resources of the two CUDA/ROCm vendors, as serving charts' values and operators write them
WHOLE_GPUS = (NVIDIA_GPU, AMD_GPU)
#: How a MIG slice's resource begins (``nvidia.com/mig-1g.10gb``, NVIDIA's mixed MIG strategy)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
#: Google's TPU resource (it counts chips)
TPU_RESOURCE = "google.com/tpu"
#: Habana's (Intel Gaudi) device plugin's whole HPU
GAUDI_RESOURCE = "habana.ai/gaudi"

#: The AWS Neuron device plugin's resources: NeuronCores, and whole Neuron devices (chips) under either name
NEURON_CORE_RESOURCE = "aws.amazon.com/neuroncore"
_NEURON = "aws.amazon.com/neuron"
_NEURON_DEVICE = "aws.amazon.com/neurondevice"
NEURON_DEVICE_RESOURCES = frozenset({_NEURON, _NEURON_DEVICE})

#: Whole Ascend NPUs as the device plugins name them (each counts NPU chips): MindCluster's Ascend Device Plugin
#: (``huawei.com/Ascend910`` for Atlas training products, A2 and A3 among them, ``huawei.com/Ascend310P`` and
#: ``huawei.com/Ascend310`` for inference cards, https://www.hiascend.com/document/detail/en/mindcluster/730/
#: clustersched/schedulingug/dlruntime_ug_005.html; ``huawei.com/npu`` for the Atlas 350, MindCluster 7.3.0
#: release notes, "The task resource request huawei.com/Ascend910 is changed to huawei.com/npu"), Huawei Cloud
#: CCE's AI Suite (Ascend NPU) add-on (``huawei.com/ascend-1980``, ``huawei.com/ascend-310``: vllm-project/
#: vllm-ascend ``docs/source/user_guide/deployment_guide/using_volcano_kthena.md``@182b75ea84ff, which names
#: MindCluster's ``huawei.com/Ascend910``/``Ascend310P`` beside them) and HAMi's
#: ascend-device-plugin, one resource per chip model (``huawei.com/Ascend910A``, ``Ascend910B2``, ``Ascend910B3``,
#: ``Ascend910B4``, ``Ascend910B4-1``, ``Ascend310P``; Project-HAMi/HAMi ``docs/ascend910b-support.md`` table, and
#: ``huawei.com/Ascend910B`` in its examples). Their ``-memory``/``-core`` companions (HAMi's share of one NPU)
#: and MindCluster's virtual NPUs (``huawei.com/Ascend910-4c``, a slice of AI cores) are not whole NPUs and are
#: not listed.
ASCEND_NPU_RESOURCES = frozenset(
    {
        "huawei.com/Ascend910",
        "huawei.com/Ascend910A",
        "huawei.com/Ascend910B",
        "huawei.com/Ascend910B2",
        "huawei.com/Ascend910B3",
        "huawei.com/Ascend910B4",
        "huawei.com/Ascend910B4-1",
        "huawei.com/Ascend310",
        "huawei.com/Ascend310P",
        "huawei.com/npu",
        "huawei.com/ascend-1980",
        "huawei.com/ascend-310",
    }
)

#: Container resources of accelerators that are not CUDA/ROCm GPUs, and the platform word they stand for.
NON_GPU_RESOURCES = {
    TPU_RESOURCE: "tpu",
    GAUDI_RESOURCE: "gaudi",
    _NEURON: "neuron",
    NEURON_CORE_RESOURCE: "neuron",
    _NEURON_DEVICE: "neuron",
    "gpu.intel.com/i915": "xpu",
    "gpu.intel.com/xe": "xpu",
    **dict.fromkeys(sorted(ASCEND_NPU_RESOURCES), "ascend"),
}

#: Container extended resources that carry accelerators, in the order placement looks for them: NVIDIA's, AMD's,
#: then :data:`NON_GPU_RESOURCES`' (MIG slices, :data:`MIG_RESOURCE_PREFIX`, are matched by their prefix).
GPU_RESOURCES = (NVIDIA_GPU, NVIDIA_GPU_SHARED, AMD_GPU, *NON_GPU_RESOURCES)


def amd_partition_of(resource: object) -> str | None:
    """The compute-memory partition (``cpx_nps4``) an AMD ``mixed``-strategy resource (``amd.com/cpx_nps4``,
    :data:`AMD_PARTITION_RESOURCE`) names, or None for any other resource."""
    if not isinstance(resource, str):
        return None
    m = AMD_PARTITION_RESOURCE.fullmatch(resource)
    return m.group(1) if m else None


def is_gpu_resource(name: object) -> bool:
    """Whether a container resource carries accelerators: one of :data:`GPU_RESOURCES`, a MIG slice
    (:data:`MIG_RESOURCE_PREFIX`) or an AMD partition under the device plugin's ``mixed`` naming
    (:data:`AMD_PARTITION_RESOURCE`)."""
    return isinstance(name, str) and (
        name in GPU_RESOURCES or name.startswith(MIG_RESOURCE_PREFIX) or amd_partition_of(name) is not None
    )
