"""The container extended resources that carry accelerators, written once for every module that names them.

Device plugins advertise these names and pods request them in ``resources.limits`` (``nvidia.com/gpu: 1``):
NVIDIA's (``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` with time-slicing renamed, ``nvidia.com/mig-<profile>``
with the mixed MIG strategy), AMD's (``amd.com/gpu``), Google's TPU chips, Habana's Gaudi, AWS Neuron's three
and Intel's GPU plugin's (``gpu.intel.com/i915`` for GPUs on the i915 kernel driver, ``gpu.intel.com/xe`` for
those on the xe driver; intel/intel-device-plugins-for-kubernetes ``cmd/gpu_plugin/README.md``, v0.31.0 and
later). Plain constants, importing nothing: the loader and the renderer read them without importing the
accelerator catalogue (:mod:`kvlint.accelerators`).
"""

from __future__ import annotations

__all__ = [
    "AMD_GPU",
    "GPU_RESOURCES",
    "MIG_RESOURCE_PREFIX",
    "NEURON_CORE_RESOURCE",
    "NEURON_DEVICE_RESOURCES",
    "NON_GPU_RESOURCES",
    "NVIDIA_GPU",
    "NVIDIA_GPU_SHARED",
    "TPU_RESOURCE",
    "WHOLE_GPUS",
]

#: NVIDIA's device plugin's whole GPU
NVIDIA_GPU = "nvidia.com/gpu"
#: NVIDIA's device plugin's GPU when time-slicing is configured with ``renameByDefault``
NVIDIA_GPU_SHARED = "nvidia.com/gpu.shared"
#: AMD's device plugin's whole GPU
AMD_GPU = "amd.com/gpu"
#: The whole-GPU resources of the two CUDA/ROCm vendors, as serving charts' values and operators write them
WHOLE_GPUS = (NVIDIA_GPU, AMD_GPU)
#: How a MIG slice's resource begins (``nvidia.com/mig-1g.10gb``, NVIDIA's mixed MIG strategy)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
#: Google's TPU resource (it counts chips)
TPU_RESOURCE = "google.com/tpu"

#: The AWS Neuron device plugin's resources: NeuronCores, and whole Neuron devices (chips) under either name
NEURON_CORE_RESOURCE = "aws.amazon.com/neuroncore"
_NEURON = "aws.amazon.com/neuron"
_NEURON_DEVICE = "aws.amazon.com/neurondevice"
NEURON_DEVICE_RESOURCES = frozenset({_NEURON, _NEURON_DEVICE})

#: Container resources of accelerators that are not CUDA/ROCm GPUs, and the platform word they stand for.
NON_GPU_RESOURCES = {
    TPU_RESOURCE: "tpu",
    "habana.ai/gaudi": "gaudi",
    _NEURON: "neuron",
    NEURON_CORE_RESOURCE: "neuron",
    _NEURON_DEVICE: "neuron",
    "gpu.intel.com/i915": "xpu",
    "gpu.intel.com/xe": "xpu",
}

#: Container extended resources that carry accelerators, in the order placement looks for them: NVIDIA's, AMD's,
#: then :data:`NON_GPU_RESOURCES`' (MIG slices, :data:`MIG_RESOURCE_PREFIX`, are matched by their prefix).
GPU_RESOURCES = (NVIDIA_GPU, NVIDIA_GPU_SHARED, AMD_GPU, *NON_GPU_RESOURCES)
