"""What a team knows about its own nodes: accelerators the catalogue lacks, node labels and node names that
mean a GPU, and the fleet a workload may land on (``.kvlint.yaml``, read by :mod:`kvlint.config`).

A :class:`Site` is consulted by :func:`kvlint.accelerators.resolve_placement` before the built-in label
tables: a team's node pools, ComputeClasses and custom labels (``cloud.google.com/compute-class: gpu-l4``,
``agentpool: gpunp``) decide as surely as an NVIDIA GFD product label. :data:`DEFAULT_FLEET` is where a
workload that names no GPU is checked when the configuration lists no fleet of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from kvlint.accelerators import registry as cat
from kvlint.types import Accelerator

__all__ = ["DEFAULT_FLEET", "DEFAULT_ROCM_FLEET", "NO_SITE", "Site", "default_fleet", "generic_gpu"]

#: Common data-centre GPUs, smallest first: the on-demand GPU nodes of the managed Kubernetes services
#: (GKE ``cloud.google.com/gke-accelerator`` values nvidia-tesla-t4, nvidia-l4, nvidia-tesla-a100,
#: nvidia-a100-80gb, nvidia-h100-80gb, nvidia-h200-141gb; EKS instance families g4dn T4, g5 A10G, g6 L4,
#: g6e L40S, p4d A100 40GB, p4de A100 80GB, p5 H100, p5e H200; AKS NCasT4_v3, NC A100 v4, ND H100 v5). A workload
#: whose GPU is unknown is planned on each (docs/accelerators.md, "Fleet verdict").
DEFAULT_FLEET: tuple[str, ...] = (
    "nvidia-t4",
    "nvidia-l4",
    "nvidia-a10g",
    "nvidia-l40s",
    "nvidia-a100-sxm4-40gb",
    "nvidia-a100-sxm4-80gb",
    "nvidia-h100-sxm5-80gb",
    "nvidia-h200-141gb",
)


#: AMD Instinct data-centre accelerators by generation, smallest first (MI210, MI250X, MI300X, MI325X, MI355X):
#: where a ROCm workload that names no GPU is planned (it requests ``amd.com/gpu``, the AMD GPU device plugin's
#: resource, or runs a ROCm image: :func:`kvlint.engines.images.platform_of`), instead of the CUDA fleet above
#: on which such an image cannot start (KV304).
DEFAULT_ROCM_FLEET: tuple[str, ...] = (
    "amd-instinct-mi210",
    "amd-instinct-mi250x",
    "amd-instinct-mi300x",
    "amd-instinct-mi325x",
    "amd-instinct-mi355x",
)


@lru_cache(maxsize=4)
def default_fleet(platform: str = "cuda") -> tuple[Accelerator, ...]:
    """The :data:`DEFAULT_FLEET` accelerators from the catalogue; :data:`DEFAULT_ROCM_FLEET`'s for ``platform``
    ``rocm``. Looked up once per platform (the catalogue is read once per process and its entries are frozen;
    every container that names no GPU is planned on a default fleet)."""
    ids = DEFAULT_ROCM_FLEET if platform == "rocm" else DEFAULT_FLEET
    return tuple(cat.require(i, "default fleet") for i in ids)


def generic_gpu(memory_bytes: int, *, how: str = "--gpu-memory") -> Accelerator:
    """A CUDA GPU known only by its memory (``--gpu-memory`` without ``--accelerator``): the device total as
    CUDA reports it, compute capability unknown, bfloat16 assumed (vLLM refuses it only below compute
    capability 8.0), no fp8 support assumed."""
    gib = memory_bytes / cat.GIB
    return Accelerator(
        id="generic",
        name=f"a GPU with {gib:.2f} GiB",
        vendor="nvidia",
        memory_bytes=int(memory_bytes),
        memory_source=how,
        compute_capability=None,
        bf16=True,
        fp8=False,
        source=f"{how}: a generic CUDA GPU of that size (compute capability unknown, bf16 assumed, no fp8 assumed)",
    )


@dataclass(frozen=True)
class Site:
    """A team's own accelerator knowledge.

    Attributes:
        accelerators: accelerators the catalogue lacks, by id (``memory_bytes`` as CUDA reports it).
        node_labels: label key -> label value -> accelerator id or alias (``agentpool`` -> ``gpunp`` ->
            ``nvidia-a100-sxm4-80gb``), in the order written: the first key a pod's labels carry decides.
        node_names: node name (``spec.nodeName``) -> accelerator id or alias.
        fleet: accelerator ids a workload that names no GPU may land on (empty: :data:`DEFAULT_FLEET`).
        source: the configuration file it was read from (shown in ``how``).
    """

    accelerators: Mapping[str, Accelerator] = field(default_factory=dict)
    node_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    node_names: Mapping[str, str] = field(default_factory=dict)
    fleet: tuple[str, ...] = ()
    source: str = ".kvlint.yaml"

    def lookup(self, ref: str) -> Accelerator | None:
        """A site accelerator by id, else a catalogue accelerator by id or alias; None when neither knows it."""
        key = str(ref).strip()
        return self.accelerators.get(key) or cat.lookup(key)

    def fleet_accelerators(self, platform: str = "cuda") -> tuple[tuple[Accelerator, ...], bool]:
        """``(accelerators, configured)``: the configured fleet, or the default one for ``platform`` (``cuda``
        or ``rocm``, :func:`default_fleet`; ``configured`` False)."""
        if self.fleet:
            found = tuple(a for a in (self.lookup(i) for i in self.fleet) if a is not None)
            return found, True
        return default_fleet(platform), False


#: The site of a run without one (no ``.kvlint.yaml`` accelerators, labels or fleet): the catalogue alone. Site is
#: frozen and nothing writes its mappings, so this one instance stands for ``Site()`` wherever a run has no site
#: (KV501 read it for each container planned on the fleet, ~2.5-4.5 us to make one).
NO_SITE = Site()
