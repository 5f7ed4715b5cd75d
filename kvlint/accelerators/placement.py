"""Which accelerator a pod lands on, and how many the container gets -> :class:`~kvlint.types.Placement`.

Precedence (first that decides wins):

1. ``override`` -- the CLI's ``--accelerator``;
2. annotation ``kvlint.io/accelerator``;
3. the PodSpec's ``nodeSelector``;
4. required node affinity (``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[]
   .matchExpressions`` with operator ``In``); when its values name different GPUs, the one with the
   smallest memory is taken (conservative) and ``how`` says so;
5. a ``nvidia.com/mig-<profile>`` resource whose profile exists on one GPU family only;
6. ``default`` -- the configuration's default accelerator;
7. nothing: ``Placement.accelerator`` is None (KV501).

Inside a set of node labels the most specific key decides, in this order: ``nvidia.com/gpu.product``
(GFD), ``cloud.google.com/gke-accelerator``, ``cloud.google.com/gke-tpu-accelerator``,
``karpenter.k8s.aws/instance-gpu-name``, ``karpenter.azure.com/sku-gpu-name``, CoreWeave's
``gpu.nvidia.com/class``, DigitalOcean's ``doks.digitalocean.com/gpu-model``, Alibaba ACK's
``aliyun.accelerator/nvidia_name`` and Volcengine's ``machine.cluster.vke.volcengine.com/gpu-name`` (GFD's spelling of
the NVML name), ``amd.com/gpu.product-name`` (and its
``beta.amd.com/`` twin), ``amd.com/gpu.device-id`` /
``beta.amd.com/gpu.device-id`` (AMD node labeller; the counted form ``beta.amd.com/gpu.device-id.74a1: "8"`` is
read too), ``node.kubernetes.io/instance-type`` / ``beta.kubernetes.io/instance-type``, the EC2 instance family
(``karpenter.k8s.aws/instance-family`` / ``eks.amazonaws.com/instance-family``, when all the family's instance
types have one GPU, :func:`~kvlint.accelerators.registry.instance_family`), GKE's Compute Engine machine series
(``cloud.google.com/machine-family``, likewise), then ``nvidia.com/gpu.memory``
alone (a GPU not in the catalogue, described by its labels; narrowed by GFD's ``nvidia.com/gpu.family`` and
compute-capability labels, which never name a GPU themselves: :func:`_arch_narrowed`) and last ``amd.com/gpu.vram``
alone. A GFD product
that names several boards (``NVIDIA-GeForce-RTX-3080``: 10GB and 12GB) is settled by ``nvidia.com/gpu.memory``
when given, else the smaller board is taken and the other kept as a candidate. Label meanings
and value tables come from the catalogue's ``label_conventions`` (GFD: NVIDIA k8s-device-plugin
``internal/lm/resource.go``; GKE: cloud.google.com/kubernetes-engine docs; Karpenter AWS/Azure
provider docs; CoreWeave: coreweave/kubernetes-cloud ``coreweave-kubernetes/node-types.md``; DigitalOcean:
docs.digitalocean.com/products/kubernetes/details/managed/), as recorded with
sources in ``kvlint/data/accelerators.json``.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from kvlint.accelerators import registry as cat
from kvlint.accelerators.sharing import HAMI_COUNT, GpuSlice, hami_slice
from kvlint.accelerators.site import Site
from kvlint.gpu_resources import (
    AMD_GPU,
    GPU_RESOURCES,
    MIG_RESOURCE_PREFIX,
    NVIDIA_GPU,
    NVIDIA_GPU_SHARED,
    amd_partition_of,
)
from kvlint.source import Loc, loc_of
from kvlint.types import Accelerator, AnnotationConflict, DerivedAccelerator, Placement, Workload
from kvlint.values import digits

ANNOTATION = "kvlint.io/accelerator"

GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_MEMORY = "nvidia.com/gpu.memory"
#: GFD's architecture label (``ampere``, ``hopper``...): read only to narrow the GPUs a ``nvidia.com/gpu.memory``
#: matches (:func:`_arch_narrowed`), never to name a GPU itself.
GFD_FAMILY = "nvidia.com/gpu.family"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
GKE_TPU = "cloud.google.com/gke-tpu-accelerator"
GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"
GKE_SHARING = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_MAX_SHARED = "cloud.google.com/gke-max-shared-clients-per-gpu"
KARPENTER_GPU = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
AZURE_GPU = "karpenter.azure.com/sku-gpu-name"
#: CoreWeave Cloud's GPU-type node label (coreweave/kubernetes-cloud ``coreweave-kubernetes/node-types.md``): values
#: such as ``A100_NVLINK_80GB``, ``RTX_A5000`` (the catalogue's ``coreweave_gpu_class`` table).
COREWEAVE_CLASS = "gpu.nvidia.com/class"
#: DigitalOcean Kubernetes' GPU-model node label (docs.digitalocean.com/products/kubernetes/details/managed/): values
#: ``h100``, ``mi300x`` (the catalogue's ``doks_gpu_model`` table).
DOKS_GPU_MODEL = "doks.digitalocean.com/gpu-model"
#: Alibaba Cloud ACK's GPU-model node label, the NVML name as GFD writes it (``NVIDIA-A10``,
#: ``Tesla-V100-SXM2-32GB``): ACK's "card model scheduling" (https://www.alibabacloud.com/help/en/ack/
#: ack-managed-and-ack-dedicated/user-guide/use-labels-to-schedule-pods-to-gpu-accelerated-nodes).
ACK_GPU_NAME = "aliyun.accelerator/nvidia_name"
#: Volcengine VKE's GPU-model node label, read with the same spelling **[assumed]**: VKE's value list was not found;
#: the values real manifests select are GFD's spelling (``NVIDIA-L20``: vllm-project/aibrix
#: ``samples/heterogeneous/deepseek-coder-7b-l20-deployment.yaml``@e3e10f9e4aeb), or that spelling without the board
#: and memory suffix (its V100 sample's ``Tesla-V100``), read as every board of the name, the smallest taken
#: (:func:`~kvlint.accelerators.registry.gfd_product_family`).
VKE_GPU_NAME = "machine.cluster.vke.volcengine.com/gpu-name"
#: Node labels of clouds that name the GPU with GFD's spelling of its NVML name (:data:`GFD_PRODUCT`'s values).
NVML_NAME_LABELS = (ACK_GPU_NAME, VKE_GPU_NAME)
AMD_PRODUCT = "amd.com/gpu.product-name"
AMD_PRODUCT_BETA = "beta.amd.com/gpu.product-name"
AMD_DEVICE_ID = "amd.com/gpu.device-id"
AMD_DEVICE_ID_BETA = "beta.amd.com/gpu.device-id"
AMD_VRAM = "amd.com/gpu.vram"
AMD_VRAM_BETA = "beta.amd.com/gpu.vram"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
INSTANCE_TYPE_BETA = "beta.kubernetes.io/instance-type"
#: EC2 instance family labels: Karpenter's (karpenter-provider-aws ``pkg/apis/v1/labels.go``
#: ``LabelInstanceFamily``) and EKS Auto Mode's (its ``eks.amazonaws.com/`` twin of the Karpenter labels).
KARPENTER_FAMILY = "karpenter.k8s.aws/instance-family"
EKS_FAMILY = "eks.amazonaws.com/instance-family"
#: GKE's node label for the Compute Engine machine series (``cloud.google.com/machine-family=g2``, on every GKE node;
#: a ComputeClass rule's ``machineFamily``), read as the EC2 instance family is
GKE_MACHINE_FAMILY = "cloud.google.com/machine-family"

#: Node-label keys that decide the accelerator, most specific first.
LABEL_ORDER = (
    GFD_PRODUCT,
    GKE_ACCELERATOR,
    GKE_TPU,
    KARPENTER_GPU,
    AZURE_GPU,
    COREWEAVE_CLASS,
    DOKS_GPU_MODEL,
    *NVML_NAME_LABELS,
    AMD_PRODUCT,
    AMD_PRODUCT_BETA,
    AMD_DEVICE_ID,
    AMD_DEVICE_ID_BETA,
    INSTANCE_TYPE,
    INSTANCE_TYPE_BETA,
    KARPENTER_FAMILY,
    EKS_FAMILY,
    GKE_MACHINE_FAMILY,
    GFD_MEMORY,
    AMD_VRAM,
    AMD_VRAM_BETA,
)
#: AMD labeller keys that also come in a counted form, ``<key>.<value>: "<count>"`` (``beta.amd.com/`` always,
#: ``amd.com/`` when a node has several kinds): ROCm k8s-device-plugin ``cmd/k8s-node-labeller/main.go``.
_COUNTED_KEYS = (AMD_PRODUCT, AMD_PRODUCT_BETA, AMD_DEVICE_ID, AMD_DEVICE_ID_BETA, AMD_VRAM, AMD_VRAM_BETA)
# Keys that only say "some GPU of this vendor" or may be set on CPU nodes: an unknown value does not
# end the search (an unknown gke-accelerator value does: it names a GPU kvlint does not know).
_SOFT_KEYS = {INSTANCE_TYPE, INSTANCE_TYPE_BETA, KARPENTER_FAMILY, EKS_FAMILY, GKE_MACHINE_FAMILY}


Labels = dict[str, list[tuple[str, "Loc | None"]]]


@dataclass
class _Cand:
    """One possible accelerator named by one label value."""

    acc: Accelerator | None
    key: str
    value: str
    loc: Loc | None
    notes: list[str] = field(default_factory=list)
    mig_bytes: int | None = None
    shared: bool = False
    #: the MIG profile whose slice :attr:`mig_bytes` is
    mig_profile: str | None = None
    #: the MIG profile the label names when no MIG table holds it (:attr:`mig_bytes` None)
    mig_unknown: str | None = None
    #: other accelerators the same value may stand for (an ambiguous Karpenter/Azure GPU name)
    alts: list[Accelerator] = field(default_factory=list)
    #: memory the node labels give instead of the catalogue figure (GFD memory label disagreeing by > 2%)
    label_bytes: int | None = None
    #: the part of the board :attr:`label_bytes` is, in a few words (a fractional instance type's ``1/2 vGPU``)
    share: str | None = None
    #: why the GPU this value names is kvlint's assumption, not the label's documented meaning (VKE's
    #: ``gpu-name`` read with GFD's spelling): :attr:`kvlint.types.Placement.assumed`
    assumed: str | None = None
    #: GFD's mixed-strategy ``nvidia.com/mig-<profile>.memory`` values by profile, the MIG device's memorySizeMB
    #: (:func:`_mixed_mig_cands`): the slice of the container's MIG resource when its profile is one of them
    mixed_memory: tuple[tuple[str, tuple[tuple[str, Loc | None], ...]], ...] = ()

    @property
    def memory(self) -> int:
        if self.mig_bytes:
            return self.mig_bytes
        if self.label_bytes:
            return self.label_bytes
        return self.acc.memory_bytes if self.acc else 0


@dataclass
class _Decision:
    acc: Accelerator | None
    how: str
    loc: Loc | None
    notes: list[str] = field(default_factory=list)
    mig_bytes: int | None = None
    shared: bool = False
    candidates: list[Accelerator] = field(default_factory=list)
    #: the pod's facts were read and named no catalogue accelerator: :attr:`notes` say why
    #: (:attr:`kvlint.types.Placement.undecided`)
    undecided: bool = False
    #: the MIG profile whose slice :attr:`mig_bytes` is (:attr:`kvlint.types.Placement.mig_profile`)
    mig_profile: str | None = None
    #: the MIG profile a label names that no MIG table holds (GFD's ``...-MIG-1g.11gb``): :func:`_finish` does
    #: not size its slice on the whole GPU
    mig_unknown: str | None = None
    #: the part of the board :attr:`mig_bytes` is when not a MIG slice (:attr:`kvlint.types.Placement.device_share`)
    share: str | None = None
    #: the GPU was read on an assumption (:attr:`_Cand.assumed`, :attr:`kvlint.types.Placement.assumed`)
    assumed: str | None = None
    #: :attr:`_Cand.mixed_memory` of the candidate decided
    mixed_memory: tuple[tuple[str, tuple[tuple[str, Loc | None], ...]], ...] = ()


def _as_int(value: Any) -> int | None:
    """Integer from an int / integral float / digit string; None otherwise (templates, "2.5", junk), and for a
    number of 2^63 or more, as for a digit string of more than 19 digits (:func:`kvlint.values.digits`): a GPU
    count of ``1e308`` made the host-memory arithmetic (KV406) overflow a float, hidden in KV503."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    if isinstance(value, float) and value.is_integer():
        return int(value) if abs(value) < 2**63 else None
    if isinstance(value, str) and digits(value) is not None:
        return digits(value)
    return None


def _first(labels: Labels, key: str) -> str | None:
    vals = labels.get(key)
    return vals[0][0] if vals else None


#: The most MiB kvlint reads a ``nvidia.com/gpu.memory`` label as: 1 TiB, over three times the largest GPU of the
#: catalogue (288 GB). GFD writes NVML's memory total in MiB (24564 on an RTX 4090); a value of 0, negative, not a
#: whole number or above this is no GPU's, and sized a plan (10^12 MiB planned an exabyte GPU): not read instead
GFD_MEMORY_MAX_MIB = 1 << 20


def _gfd_memory(labels: Labels) -> tuple[int | None, str]:
    """(``nvidia.com/gpu.memory`` in MiB, "") when the labels give a GPU's memory (more than the driver's reserve,
    :func:`kvlint.accelerators.registry.driver_reserve_mib`, to :data:`GFD_MEMORY_MAX_MIB`); (None, why it is not
    read) for a value that is not one; (None, "") when absent or a placeholder to fill in. A label of at most the
    reserve (``'1'``: 1 MiB) left a GPU of 0 bytes once the reserve was taken off
    (:func:`~kvlint.accelerators.registry.generic_nvidia`), which nothing was planned on and no finding named: it
    is refused with the reason (KV501 says it)."""
    from kvlint.statement import clip

    raw = _first(labels, GFD_MEMORY)
    if raw is None or not raw.strip() or _fill_in(raw):
        return None, ""
    mib = _as_int(raw.strip())
    reserve = cat.driver_reserve_mib()
    if mib is not None and 0 < mib <= reserve:
        return None, (
            f"{GFD_MEMORY}={clip(raw.strip(), 40)!r} is {mib:,} MiB, no more than the {reserve:,} MiB the NVIDIA "
            "driver typically keeps of a GPU: too small to hold any model, not read as its memory"
        )
    if mib is not None and 0 < mib <= GFD_MEMORY_MAX_MIB:
        return mib, ""
    return None, (
        f"{GFD_MEMORY}={clip(raw.strip(), 40)!r} is not a GPU's memory in MiB (1 to {GFD_MEMORY_MAX_MIB:,}): "
        "not read as its memory"
    )


def _cc(labels: Labels) -> str | None:
    major = _as_int(_first(labels, "nvidia.com/gpu.compute.major"))
    minor = _as_int(_first(labels, "nvidia.com/gpu.compute.minor"))
    return f"{major}.{minor or 0}" if major is not None else None


def gfd_families(cc: tuple[int, int] | None) -> frozenset[str]:
    """The ``nvidia.com/gpu.family`` values GPU feature discovery gives a GPU of compute capability ``cc``, over its
    releases (NVIDIA/k8s-device-plugin ``internal/lm/resource.go`` ``getArchFamily``: 7.0 - 7.4 ``volta``, 7.5
    ``turing``, 8.x ``ampere``, 9.x ``hopper``; later releases label 8.9 ``ada-lovelace`` and 10.x / 12.x
    ``blackwell``, earlier ones gave 8.9 ``ampere`` and Blackwell ``undefined``); empty when unknown."""
    if cc is None:
        return frozenset()
    major, minor = cc
    named = {1: "tesla", 2: "fermi", 3: "kepler", 5: "maxwell", 6: "pascal", 9: "hopper"}
    if major in named:
        return frozenset({named[major]})
    if major == 7:
        return frozenset({"volta" if minor < 5 else "turing"})
    if major == 8:
        return frozenset({"ampere", "ada-lovelace"} if minor >= 9 else {"ampere"})
    if major in (10, 12):
        return frozenset({"blackwell"})
    return frozenset()


def _named_families(values: list[tuple[str, Loc | None]]) -> set[str]:
    """The architectures ``nvidia.com/gpu.family`` values name, in lower case; ``undefined`` (GFD's word for a GPU
    whose architecture it does not know) names none."""
    return {v.strip().lower() for v, _ in values} - {"undefined"}


def _arch_narrowed(accs: list[Accelerator], labels: Labels) -> tuple[list[Accelerator], str | None]:
    """``accs`` (the GPUs a ``nvidia.com/gpu.memory`` value matches) narrowed by the GFD architecture labels beside
    it: ``nvidia.com/gpu.family`` (:func:`gfd_families`; ``undefined`` says nothing) and
    ``nvidia.com/gpu.compute.major``/``.minor``; a GPU whose compute capability the catalogue lacks is kept.
    Returns the GPUs kept and what narrowed them, in words (None when nothing did)."""
    families = _named_families(labels.get(GFD_FAMILY, []))
    # both labels, or the minor is not known (a lone major would read as X.0)
    cc = _cc(labels) if _first(labels, "nvidia.com/gpu.compute.minor") is not None else None
    said = []
    kept = list(accs)
    if families:
        kept = [a for a in kept if a.cc is None or gfd_families(a.cc) & families]
        said.append(f"{GFD_FAMILY}={','.join(sorted(families))}")
    if cc is not None:
        kept = [a for a in kept if a.cc is None or a.compute_capability == cc]
        said.append(f"compute capability {cc} (nvidia.com/gpu.compute.major/minor)")
    if not said or len(kept) == len(accs):
        return kept, None
    return kept, " and ".join(said)


def _mig_memory(acc: Accelerator | None, profile: str, labels: Labels) -> tuple[int | None, str]:
    """MIG slice bytes for ``profile``: GFD's ``nvidia.com/gpu.memory`` when present, else the catalogue's MIG table.

    Under mig.strategy=single GFD overwrites the label with the MIG device's own memory, NVML's
    ``memorySizeMB`` of the device's attributes in MiB (NVIDIA k8s-device-plugin ``internal/resource/
    nvml-mig-device.go`` ``GetAttributes``, ``internal/lm/resource.go`` ``NewMIGResourceLabeler``), the figure
    ``nvidia-smi mig -lgip`` lists and the catalogue's MIG tables hold. So a label above the whole board's NVML total
    is no slice's (not read: the table sizes it), and one that differs from the board's own measured table figure for
    the profile by more than :data:`~kvlint.accelerators.registry.MEMORY_LABEL_TOLERANCE` is not what GFD writes for
    it: the smaller of the two is taken (conservative), said. A table figure that is no measurement of this board (an
    ``approximate`` row, the profile name's GB, or another board's row for a GPU outside the catalogue) checks nothing:
    the label, NVML's own figure, sizes the slice."""
    mib, bad = _gfd_memory(labels)
    prof, note = cat.mig_profile(acc.id if acc else None, profile)
    if mib and acc is not None and acc.id in cat.catalogue() and mib > cat.nvml_total_mib(acc):
        bad = (
            f"{GFD_MEMORY}={mib} MiB is more than the whole {acc.id} ({cat.nvml_total_mib(acc)} MiB): not the MIG "
            f"{profile} slice's memory, which GFD writes there (the MIG device's memorySizeMB): not read"
        )
        mib = None
    if mib:
        text = f"MIG {profile}: {mib} MiB from {GFD_MEMORY}"
        if prof is None or not _measured_mig_row(acc, prof):
            return mib * cat.MIB, text
        table = prof.memory_bytes // cat.MIB
        if abs(mib - table) <= cat.MEMORY_LABEL_TOLERANCE * table:
            return mib * cat.MIB, text
        least = min(mib, table)
        return least * cat.MIB, (
            f"MIG {profile}: {GFD_MEMORY}={mib} MiB differs from the {table} MiB of a MIG {profile} slice "
            f"({prof.status}), which GFD writes there: took the smaller, {least} MiB "
            "(conservative)"
        )
    note = "; ".join(n for n in (bad, note) if n)
    if prof is None:
        return None, note
    text = f"MIG {profile}: {prof.memory_bytes // cat.MIB} MiB per slice ({prof.provenance})"
    return prof.memory_bytes, f"{text}; {note}" if note else text


def _measured_mig_row(acc: Accelerator | None, prof: cat.MigProfile) -> bool:
    """Whether ``prof`` (:func:`kvlint.accelerators.registry.mig_profile` of ``acc``) is a measurement of ``acc``'s own
    MIG slice (``nvidia-smi mig -lgip``, an observed or go-nvml mock figure), one a GFD memory label can be checked
    against: not a row the catalogue approximates from the profile name (``approximate: 47 GB from the profile name``,
    GB read as 10**9 bytes, several percent off what NVML gives), nor another board's row for a GPU outside the catalogue."""
    return acc is not None and acc.id in cat.catalogue() and not prof.status.startswith("approximate")


def _pick_by_memory(
    cands: list[Accelerator], labels: Labels, key: str, value: str
) -> tuple[Accelerator, str]:
    """Several catalogue GPUs for one label value (Karpenter ``a100``): choose by Karpenter's
    ``instance-gpu-memory`` when given, else the smallest (conservative)."""
    mib = _as_int(_first(labels, KARPENTER_GPU_MEMORY))
    if mib:
        exact = [a for a in cands if cat.instance_gpu_memory_mib(a) == mib]
        if len(exact) == 1:
            return exact[0], f"{value} is ambiguous; {KARPENTER_GPU_MEMORY}={mib} selects {exact[0].id}"
    best = min(cands, key=lambda a: a.memory_bytes)
    names = ", ".join(a.id for a in cands)
    return best, f"{key}={value} may be {names}: chose the smallest, {best.id} (conservative)"


#: the longest MIG profile name kvlint names a device by (``1g.10gb+me.all`` is 14 characters)
_PROFILE_NAME_MAX = 24


def _named_profile(profile: str) -> str | None:
    """``profile`` when it is a MIG profile name (:func:`kvlint.accelerators.registry.mig_profile_name`, at most
    :data:`_PROFILE_NAME_MAX` characters), else None: GFD's product label is the manifest's text, and its
    ``-MIG-`` suffix names :attr:`kvlint.types.Placement.mig_profile` (printed in the Markdown heading) only when
    it is a profile; the memory label still sizes the plan either way."""
    if len(profile) > _PROFILE_NAME_MAX or cat.mig_profile_name(profile) is None:
        return None
    return profile


def _candidate(key: str, value: Any, loc: Loc | None, labels: Labels) -> _Cand | None:
    """The accelerator one label value names; None when the value does not decide (soft keys) or is a placeholder
    still to fill in (:func:`_fill_in`: :func:`_why_undecided` says so)."""
    v = str(value).strip()
    if _fill_in(v):
        return None
    c = _Cand(None, key, v, loc)
    if key == GFD_PRODUCT:
        acc, profile, shared = cat.gfd_product(v)
        c.shared = shared
        boards = cat.gfd_product_candidates(v) if acc is not None and not profile else []
        mib, bad = _gfd_memory(labels)
        if bad and not profile:  # (a MIG slice's note says it: _mig_memory)
            c.notes.append(bad)
        if len(boards) > 1:  # one NVML name, several boards: the memory label settles it
            fits = [a for a in boards if mib and cat.memory_matches(a, mib)]
            if len(fits) == 1:
                acc = fits[0]
                c.notes.append(f"{v} names {len(boards)} boards; {GFD_MEMORY}={mib} selects {acc.id}")
            else:
                acc = boards[0]
                c.alts = boards[1:]
                names = ", ".join(a.id for a in boards)
                c.notes.append(f"{key}={v} may be {names}: chose the smallest, {acc.id} (conservative)")
                # one NVML name for boards of two memory sizes and no memory label to tell them apart: the board is
                # kvlint's guess (Placement.assumed), not the label's
                c.assumed = _board_guess(key, v, boards, f"no {GFD_MEMORY} label tells them apart")
        vgpu = cat.vgpu_type(v[: -len("-SHARED")] if shared else v) if acc is None and not profile else None
        if vgpu is not None:
            c = _vgpu_candidate(c, vgpu, mib, labels)
            if shared:
                c.notes.append("-SHARED: time-sliced/MPS GPU")
            return c
        if profile and profile.upper() == "INVALID":
            # GFD's own mark of a MIG layout mig.strategy=single cannot label (lm/mig-strategy.go
            # newInvalidMigStrategyLabeler): no GPU is advertised there; not a profile, and its memory label 0 is no GPU's
            c.notes = [
                f"{v}: GPU feature discovery's mark of a node whose MIG layout mig.strategy=single cannot offer as one "
                "kind of slice (a MIG-enabled GPU with no MIG device, MIG and whole GPUs together, or several MIG "
                "profiles; NVIDIA k8s-device-plugin internal/lm/mig-strategy.go), with nvidia.com/gpu.count 0: the "
                "device plugin offers no nvidia.com/gpu there, so this pod cannot run on such a node"
            ]
            return c
        if acc is None:
            if mib and not profile:
                acc = cat.generic_nvidia(v, mib, _cc(labels))
                c.notes.append(f"{v} is not in the catalogue: memory from {GFD_MEMORY}={mib}")
            else:
                c.notes.append(f"GPU product {v} is not in the catalogue")
        c.acc = acc
        if profile:
            c.mig_bytes, note = _mig_memory(acc, profile, labels)
            c.mig_profile = _named_profile(profile) if c.mig_bytes else None
            c.mig_unknown = None if c.mig_bytes else profile
            c.notes.append(note)
        elif acc is not None and acc.vendor == "nvidia":
            if mib and not cat.memory_matches(acc, mib):
                c.label_bytes = max(mib - cat.driver_reserve_mib(), 0) * cat.MIB
                c.notes.append(
                    f"{GFD_MEMORY}={mib} MiB differs from {acc.id}'s {cat.nvml_total_mib(acc)} MiB by more than "
                    f"{cat.MEMORY_LABEL_TOLERANCE:.0%}: memory taken from the label"
                )
        if shared:
            c.notes.append("-SHARED: time-sliced/MPS GPU")
        return c
    if key == GKE_ACCELERATOR:
        acc, note, known = cat.gke_accelerator(v)
        c.acc = acc
        if note and acc is not None:
            c.notes.append(note)
        if acc is None:
            c.notes.append(
                f"{v} is {'a GPU not in the catalogue' if known else 'not a known GKE accelerator value'}"
            )
        return c
    if key == GKE_TPU:
        acc, known = cat.gke_tpu_accelerator(v)
        c.acc = acc
        if acc is None:
            c.notes.append(f"TPU {v} is {'not in the catalogue' if known else 'not a known GKE TPU value'}")
        return c
    if key in (KARPENTER_GPU, AZURE_GPU):
        cands, known = cat.karpenter_gpu_name(v) if key == KARPENTER_GPU else cat.azure_gpu_name(v)
        if len(cands) > 1:
            c.acc, note = _pick_by_memory(cands, labels, key, v)
            c.notes.append(note)
            if "ambiguous" not in note:
                c.alts = [a for a in cands if a is not c.acc]
        elif cands:
            c.acc = cands[0]
        else:
            c.notes.append(f"{v} is {'not a GPU in the catalogue' if known else 'not a known GPU name'}")
        return c
    if key == COREWEAVE_CLASS:
        c.acc, row, known = cat.coreweave_gpu_class(v)
        if not known:
            # other clusters reuse the key with values of their own (Ori's "L40S"): not CoreWeave's, so not read
            return None
        c.notes.append(
            f"CoreWeave class {v} = {row}"
            if c.acc is not None
            else f"CoreWeave class {v} ({row}) is not in the catalogue"
        )
        return c
    if key == DOKS_GPU_MODEL:
        c.acc, row, known = cat.doks_gpu_model(v)
        if not known:
            # a value DigitalOcean's page does not list: not read, as an unknown CoreWeave class is not
            return None
        c.notes.append(f"DigitalOcean GPU model {v} = {row}")
        guess = cat.assumption(cat.doks_gpu_model_note(v))
        if guess and c.acc is not None:
            # the page names the GPU, not the board: the catalogue's board is its choice, said as such
            c.assumed = f"{key}={v} read as {c.acc.id}: assumed, {guess}"
            c.notes.append(c.assumed)
        return c
    if key in NVML_NAME_LABELS:
        # GFD's spelling of the NVML name, without GFD's memory label: a name of several boards takes the smallest
        acc, profile, _shared = cat.gfd_product(v)
        boards = cat.gfd_product_candidates(v) if acc is not None and not profile else []
        board_less = False
        if acc is None and not profile:
            # the NVML name without its board and memory (VKE's ``Tesla-V100``): every board of that name
            boards = cat.gfd_product_family(v)
            acc = boards[0] if boards else None
            board_less = True
        if profile or acc is None:
            c.notes.append(f"{key}={v} names no GPU in the catalogue (use {ANNOTATION} or --accelerator)")
            return c
        if len(boards) > 1:
            acc, c.alts = boards[0], boards[1:]
            names = ", ".join(a.id for a in boards)
            c.notes.append(f"{key}={v} may be {names}: chose the smallest, {acc.id} (conservative)")
            if not board_less:
                # a full NVML name of boards of two memory sizes (the RTX 3080's): the node's board is kvlint's
                # guess. A board-less value is no value ACK writes (its nodes carry the full name, so such a selector
                # matches none of them): not a guess among boards, and its errors stand (VKE's is said below)
                c.assumed = _board_guess(key, v, boards, "the label gives no memory to tell them apart")
        if key == VKE_GPU_NAME:
            # the spelling is an assumption (VKE_GPU_NAME): the user sees it beside the GPU it decided
            spelling = (
                f"{key} read as GFD's spelling of the NVML name: assumed, VKE's value list was not found"
            )
            c.notes.append(spelling)
            c.assumed = spelling  # (its board-less value's smallest board is part of the same reading)
        c.acc = acc
        return c
    if key in (AMD_PRODUCT, AMD_PRODUCT_BETA):
        c.acc = cat.amd_product_name(v)
        if c.acc is None:
            c.notes.append(f"AMD product {v} is not in the catalogue")
        return c
    if key in (AMD_DEVICE_ID, AMD_DEVICE_ID_BETA):
        c.acc, product, known = cat.amd_device_id(v)
        if c.acc is not None:
            c.notes.append(f"AMD device id {v} = {product}")
        elif known:
            c.notes.append(f"AMD device id {v} ({product}) is not in the catalogue")
        else:
            c.notes.append(f"AMD device id {v} is not a known AMD device id")
        return c
    if key in (AMD_VRAM, AMD_VRAM_BETA):
        accs = cat.amd_vram(v)
        if not accs:
            return None
        c.acc, c.alts = accs[0], accs[1:]
        names = ", ".join(a.id for a in accs)
        c.notes.append(
            f"AMD model not labelled: {key}={v} is within 2% of {names}"
            + (f"; took the smallest, {accs[0].id}" if len(accs) > 1 else "")
        )
        if len(accs) > 1:
            c.assumed = _board_guess(key, v, accs, "only the memory is labelled")
        return c
    if key in (INSTANCE_TYPE, INSTANCE_TYPE_BETA):
        it = cat.instance_type(v)
        if it is None:
            return None
        c.acc = it.accelerator
        if it.accelerator is not None and it.share_unknown:
            # planned on the whole board it would be sized on memory its node does not have (_why_undecided says so)
            c.acc = None
        elif it.accelerator is not None:
            per = (
                f"{it.fraction} of"
                if it.fraction
                else "a share of one"  # EC2's fractional g6f/gr6f: Karpenter's GPU count is 0
                if it.gpus == 0
                else f"{it.gpus}x"
                if it.gpus is not None
                else "?x"
            )
            c.notes.append(f"{it.name}: {per} {it.accelerator.id}")
            guess = cat.assumption(it.note)
            if guess:
                # the provider's table names the GPU, not the board: the catalogue's board is its choice
                c.assumed = f"{key}={it.name} read as {it.accelerator.id}: assumed, {guess}"
                c.notes.append(c.assumed)
            slice_mib, _per_gpu, how_known = _fractional_gpu_mib(it)
            if slice_mib is not None:
                reserved, how_reserved = vgpu_guest_reserve_mib()
                c.label_bytes = max(slice_mib - reserved, 0) * cat.MIB
                if it.vgpu_profile and not it.fraction:
                    c.share = f"{it.vgpu_profile} vGPU"
                    c.notes.append(
                        f"a whole GPU as a vGPU: a {slice_mib} MiB vGPU frame buffer ({how_known}), less {reserved} "
                        f"MiB ({how_reserved}), not the bare-metal board's memory"
                    )
                else:
                    c.share = f"{it.fraction} vGPU" if it.fraction else "vGPU share"
                    c.notes.append(
                        f"a fractional GPU: a {slice_mib} MiB vGPU frame buffer ({how_known}), less {reserved} MiB "
                        f"({how_reserved}), not the whole GPU's memory"
                    )
        else:
            c.notes.append(f"{it.name}: {it.note or 'no GPU in the catalogue'}")
        return c
    if key in (KARPENTER_FAMILY, EKS_FAMILY, GKE_MACHINE_FAMILY):
        gce = key == GKE_MACHINE_FAMILY
        acc, types = cat.instance_family(v, "gcp" if gce else "aws")
        if not types:
            return None
        c.acc = acc
        what = ("machine series", "machine types") if gce else ("instance family", "instance types")
        if acc is not None:
            c.notes.append(f"{what[0]} {v}: {acc.id} in each of its {types} {what[1]}")
        else:
            # a series of several GPUs (GCE's a2: A100 40GB and 80GB; a3: H100 and H200): the smallest, the others
            # kept as candidates, as an ambiguous GPU label's
            boards, _n = cat.instance_family_gpus(v, "gcp" if gce else "aws")
            if len(boards) > 1:
                c.acc, c.alts = boards[0], boards[1:]
                names = ", ".join(a.id for a in boards)
                c.notes.append(
                    f"{what[0]} {v}: {names} in its {types} {what[1]}: chose the smallest, {boards[0].id} "
                    "(conservative)"
                )
        return c
    if key == GFD_MEMORY:
        mib, bad = _gfd_memory({key: [(v, loc)]})
        if not mib:
            if bad:
                c.notes.append(bad)
                return c
            return None
        matches = cat.match_memory_mib(mib)
        matched = matches
        matches, narrowed_by = _arch_narrowed(matches, labels)
        if narrowed_by is not None:
            c.notes.append(
                f"{mib} MiB matches {', '.join(a.id for a in matched)}; {narrowed_by} "
                + (f"leaves {', '.join(a.id for a in matches)}" if matches else "excludes them all")
            )
        if matches:
            c.acc, c.alts = matches[0], matches[1:]
            names = ", ".join(a.id for a in matches)
            c.notes.append(
                f"GPU model not labelled: {mib} MiB is within {cat.MEMORY_LABEL_TOLERANCE:.0%} of {names}"
                + (f"; took the smallest, {matches[0].id}" if len(matches) > 1 else "")
            )
            if len(matches) > 1:
                c.assumed = _board_guess(key, v, matches, "only the memory is labelled")
        else:
            c.acc = cat.generic_nvidia(None, mib, _cc(labels))
            c.notes.append("GPU model unknown: memory from the GFD label")
        return c
    return None


def _board_guess(key: str, value: str, boards: list[Accelerator], why: str) -> str:
    """The :attr:`_Cand.assumed` text for one label value that stands for one board kvlint cannot tell among
    ``boards`` (smallest memory first, the first taken): a GFD/NVML product name shared by boards of two memory sizes
    (``NVIDIA-GeForce-RTX-3080``: 10GB and 12GB), a memory label alone (``nvidia.com/gpu.memory``,
    ``amd.com/gpu.vram``) matching several boards. The node has one of them; which, the label does not say, so the
    smallest is kvlint's assumption, said in the findings (``kvlint.pipeline._with_candidates``). Not for a label a
    scheduler may satisfy with several boards by design (Karpenter's ``instance-gpu-name: a100``, an instance family):
    the pod may really land on the smallest, which is no assumption."""
    from kvlint.statement import clip

    return (
        f"{key}={clip(value, 60)!r} may be {', '.join(a.id for a in boards)} ({why}): {boards[0].id} assumed"
    )


def _vgpu_candidate(c: _Cand, vgpu: cat.VgpuType, mib: int | None, labels: Labels) -> _Cand:
    """``c`` (a GFD ``nvidia.com/gpu.product`` candidate) for a node that is a vGPU guest, its product the vGPU type
    (:func:`kvlint.accelerators.registry.vgpu_type`: ``NVIDIA-A40-48Q``): the engine's device is the type's frame
    buffer, not the board's memory. GFD labels the guest's NVML device, whose name and memory are the type's ("GPU :
    NVIDIA A40-48Q", 49152 MiB: https://github.com/vllm-project/vllm/issues/11230), so ``nvidia.com/gpu.memory`` (when
    given and smaller) or the name's frame buffer, less the guest reserve (:func:`vgpu_guest_reserve_mib`), is
    sized; on the catalogue board the type names (its compute capability), else on a generic NVIDIA GPU of that
    memory (compute capability from GFD's ``nvidia.com/gpu.compute.major``/``minor``, when given)."""
    fb = vgpu.frame_buffer_mib
    said = f"the frame buffer its name gives, {fb} MiB"
    if mib and mib < fb:
        fb, said = mib, f"{GFD_MEMORY}={mib} MiB, under the {vgpu.frame_buffer_mib} MiB its name gives"
    reserved, how_reserved = vgpu_guest_reserve_mib()
    if vgpu.exceeds is not None:
        # a share of one board cannot be larger than the board: a mistyped or made-up name, not a GPU to size
        big = vgpu.exceeds
        c.notes.append(
            f"{c.value} names a vGPU type {vgpu.name} of {vgpu.frame_buffer_mib} MiB, more than any {vgpu.board} "
            f"kvlint knows ({big.id}, {cat.nominal_memory_mib(big) or cat.nvml_total_mib(big)} MiB): a vGPU's frame "
            "buffer is a share of one board's memory, so this is no vGPU type of that board; not sized"
        )
        return c
    if vgpu.accelerator is None:
        c.acc = cat.generic_nvidia(c.value, fb, _cc(labels))
        c.notes.append(
            f"{c.value}: a vGPU guest's GPU, the vGPU type {vgpu.name}, whose board ({vgpu.board}) kvlint does not "
            f"read as a catalogue GPU; sized on {said}"
        )
        return c
    c.acc = vgpu.accelerator
    c.label_bytes = max(fb - reserved, 0) * cat.MIB
    c.share = f"{vgpu.name} vGPU"
    c.notes.append(
        f"{c.value}: a vGPU guest's GPU, the vGPU type {vgpu.name} of {vgpu.accelerator.id}: sized on {said}, less "
        f"{reserved} MiB ({how_reserved}), not the bare-metal board's memory"
    )
    return c


def _uncount(labels: Labels) -> Labels:
    """``beta.amd.com/gpu.device-id.74a1: "8"`` -> ``beta.amd.com/gpu.device-id: 74a1`` (the AMD labeller's
    counted form, :data:`_COUNTED_KEYS`); other keys unchanged."""
    out: Labels = {k: list(v) for k, v in labels.items()}
    for key, values in labels.items():
        for base in _COUNTED_KEYS:
            if key.startswith(base + ".") and len(key) > len(base) + 1:
                out.setdefault(base, []).extend((key[len(base) + 1 :], loc) for _v, loc in values)
    return out


def _site_cands(labels: Labels, site: Site | None) -> list[_Cand] | None:
    """Candidates from the first ``.kvlint.yaml`` ``accelerators.node_labels`` key present in ``labels``."""
    if site is None:
        return None
    for key, table in site.node_labels.items():
        values = labels.get(key)
        if not values:
            continue
        cands = []
        for v, loc in values:
            ref = table.get(str(v).strip())
            if ref is None:
                continue
            acc = site.lookup(ref)
            cands.append(
                _Cand(
                    acc,
                    key,
                    str(v).strip(),
                    loc,
                    [f"{key}={v} is {ref} ({site.source} accelerators.node_labels)"],
                )
            )
        if cands:
            return cands
    return None


#: GPU feature discovery's per-profile labels under ``mig.strategy=mixed``: ``nvidia.com/mig-<profile>.product``
#: (``NVIDIA-A100-SXM4-40GB-MIG-1g.10gb``), ``.memory``, ``.count`` ... beside the whole board's ``nvidia.com/gpu.*``
#: (NVIDIA k8s-device-plugin ``internal/lm/resource.go``: the MIG labeler prefixes each label with the resource name
#: under the mixed strategy); pods select them as ``nodeSelector: {nvidia.com/mig-1g.10gb.product: ...}`` beside a
#: ``nvidia.com/mig-1g.10gb`` resource (GPU Operator docs, "GPU Operator with MIG", mixed strategy)
GFD_MIXED_PRODUCT = re.compile(r"nvidia\.com/mig-([0-9a-z.+]{1,40})\.product", re.ASCII)
GFD_MIXED_MEMORY = re.compile(r"nvidia\.com/mig-([0-9a-z.+]{1,40})\.memory", re.ASCII)
#: the longest ``nvidia.com/mig-<profile>.product`` value read (``NVIDIA-H100-80GB-HBM3-MIG-1g.10gb+me`` is 36)
_MIXED_PRODUCT_MAX = 120


def _mixed_mig_cands(labels: Labels) -> list[_Cand]:
    """Candidates from GFD's mixed-strategy ``nvidia.com/mig-<profile>.product`` labels (:data:`GFD_MIXED_PRODUCT`)
    when the labels have no ``nvidia.com/gpu.product``: the board the value names (its ``-MIG-<profile>`` suffix
    removed, read as a GFD product value), whose MIG slice is the container's own ``nvidia.com/mig-<profile>``
    resource's (:func:`_finish`), not the label's profile (a node under the mixed strategy offers several). Empty
    when there is none or none names a board."""
    products = [(k, m, vs) for k, vs in labels.items() if (m := GFD_MIXED_PRODUCT.fullmatch(k)) is not None]
    if not products:
        return []
    # the memory labels by profile, read once for every product label (a tuple: node facts are interned by value,
    # kvlint.cluster._facts_key)
    mixed_memory = tuple(
        (profile, tuple(mem))
        for other, mem in labels.items()
        if mem
        and (mm := GFD_MIXED_MEMORY.fullmatch(other)) is not None
        and (profile := cat.mig_profile_name(mm.group(1))) is not None
    )
    board_labels = {k: vs for k, vs in labels.items() if k != GFD_MEMORY}
    out: list[_Cand] = []
    for key, m, values in products:
        for v, loc in values:
            value = str(v).strip()
            if len(value) > _MIXED_PRODUCT_MAX:
                continue  # no GFD product value is this long
            board = re.sub(r"-MIG-.*$", "", value, flags=re.IGNORECASE)
            if not board or _fill_in(board):
                continue
            c = _candidate(GFD_PRODUCT, board, loc, board_labels)
            if c is None:
                continue
            c.key, c.value = key, value
            c.mixed_memory = mixed_memory
            c.notes.append(
                f"{key}: GPU feature discovery's mig.strategy=mixed label of the node's MIG {m.group(1)} slices"
                + (f", on {c.acc.id}" if c.acc is not None else "")
                + "; the container's slice is its nvidia.com/mig-<profile> resource's"
            )
            out.append(c)
    return out


def _decide(labels: Labels, site: Site | None = None) -> list[_Cand] | None:
    """Candidates from the most specific deciding key present in ``labels`` (a site's own label table
    first); None if no key decides."""
    labels = _uncount(labels)
    mapped = _site_cands(labels, site)
    if mapped is not None:
        return mapped
    for key in LABEL_ORDER:
        values = labels.get(key)
        if key == GFD_PRODUCT and not values:
            mixed = _mixed_mig_cands(labels)
            if mixed:
                return mixed
        if not values:
            continue
        cands = [c for v, loc in values if (c := _candidate(key, v, loc, labels)) is not None]
        if not cands:
            continue
        if key in _SOFT_KEYS and not any(c.acc for c in cands):
            continue
        return cands
    return None


def _combine(cands: list[_Cand], how: str) -> _Decision:
    """One decision from candidate GPUs: the only one, or the smallest memory of different ones."""
    known = [c for c in cands if c.acc is not None]
    notes = [n for c in cands for n in c.notes]
    if not known:
        return _Decision(None, how, cands[0].loc if cands else None, notes, undecided=True)
    ids = {c.acc.id for c in known if c.acc}
    best = min(known, key=lambda c: c.memory)
    if len(ids) > 1 or len({c.memory for c in known}) > 1:
        other = ", ".join(sorted(ids))
        notes = [n for n in best.notes] + [
            f"values name different GPUs ({other}): chose {best.acc.id if best.acc else '?'}, "
            "the smallest memory (conservative)"
        ]
    else:
        notes = list(best.notes)
    if len(known) < len(cands):
        notes.append("unknown values ignored: " + ", ".join(c.value for c in cands if c.acc is None))
    seen: dict[str, Accelerator] = {}
    for c in sorted(known, key=lambda c: c.memory):
        for a in [c.acc, *c.alts]:
            if a is not None:
                seen.setdefault(a.id, a)
    cands_out = list(seen.values()) if len(seen) > 1 else []
    mig_or_label = best.mig_bytes or best.label_bytes
    return _Decision(
        best.acc,
        how,
        best.loc,
        notes,
        mig_or_label,
        any(c.shared for c in cands),
        cands_out,
        mig_profile=best.mig_profile if best.mig_bytes else None,
        mig_unknown=best.mig_unknown,
        mixed_memory=best.mixed_memory,
        share=best.share if best.label_bytes and not best.mig_bytes else None,
        assumed=best.assumed,
    )


def _fractional_gpu_mib(it: cat.InstanceType) -> tuple[int | None, int | None, str]:
    """(the vGPU profile's frame buffer of the GPU share a fractional-GPU instance type gives its node, MiB; how
    many such shares one GPU holds, when known; where the figures come from), or (None, None, "") for a whole-GPU
    type. A vGPU share is a GPU of its own to the engine, sized on the share's frame buffer, not the board's
    (Azure NVadsA10 v5: "starting at 1/6th of a GPU with 4-GiB frame buffer", MicrosoftDocs/azure-docs
    ``nvadsa10v5-series.md``): the size table's figure with its fraction; for EC2's g6f/gr6f, whose GPU memory in
    the Karpenter instance-type reference is the EC2 API's (2,861 MiB on ``g6f.large``: "3 GB" in MiB, as 22,888 is
    a whole L4's "24 GB"), the share that figure is of the whole board's EC2 figure applied to the board's stated
    memory (an eighth of 24 GiB: 3,072 MiB, the L4-3Q profile); else the fraction of the board's stated memory
    (:func:`kvlint.accelerators.registry.nominal_memory_mib`), or of its NVML total when none is stated. A whole-GPU
    type whose GPUs run as a vGPU profile (the catalogue's ``vgpu_profile``: NVadsA10 v5's NV36ads, NV36adms and
    NV72ads, "a full A10 GPU with 24-GiB frame buffer" with the series' GRID driver, A10-24Q) is sized the same way,
    per GPU, on the profile's frame buffer."""
    acc = it.accelerator
    if acc is not None and it.vgpu_profile and it.slice_memory_mib and not it.fraction:
        # a whole GPU run as a vGPU (Azure NV36ads/NV72ads_A10_v5: A10-24Q, "a full A10 GPU with 24-GiB frame
        # buffer"): each GPU is the profile's frame buffer, sized by the same rule as a share
        return it.slice_memory_mib, 1, f"{it.name}'s size table, each GPU an {it.vgpu_profile} of {acc.id}"
    if acc is None or not (it.fraction or it.gpus == 0):
        return None, None, ""
    m = re.fullmatch(r"1/(\d+)", it.fraction or "")
    per_gpu = int(m.group(1)) if m is not None and int(m.group(1)) > 0 else None
    nominal = cat.nominal_memory_mib(acc)
    if it.slice_memory_mib and it.fraction:
        return it.slice_memory_mib, per_gpu, f"{it.name}'s size table, {it.fraction} of {acc.id}"
    if it.slice_memory_mib:
        whole_api = cat.instance_gpu_memory_mib(acc)
        if whole_api and nominal and it.slice_memory_mib <= whole_api:
            shares = round(whole_api / it.slice_memory_mib)
            if shares >= 1:
                return (
                    nominal // shares,
                    shares,
                    f"{it.name}'s EC2 GPU memory {it.slice_memory_mib} MiB is 1/{shares} of {acc.id}'s "
                    f"{whole_api}: 1/{shares} of its {nominal // 1024} GiB",
                )
        return it.slice_memory_mib, None, f"{it.name}'s EC2 GPU memory"
    if per_gpu is None:
        return None, None, ""
    if nominal:
        return nominal // per_gpu, per_gpu, f"{it.fraction} of {acc.id}'s {nominal // 1024} GiB"
    whole = cat.nvml_total_mib(acc)
    return whole // per_gpu, per_gpu, f"{it.fraction} of {acc.id}'s {whole} MiB"


#: What a vGPU guest's CUDA sees of its frame buffer. NVIDIA's vGPU frame buffer reservation ("max-reserved-fb =
#: vgpu-profile-size-in-mb÷16 + 16 + ecc-adjustments + page-retirement-allocation + compression-adjustment") is frame
#: buffer of the *physical* GPU the hypervisor uses "on behalf of the VM for allocations that the guest OS would
#: otherwise have made in its own frame buffer" and that is "not available for vGPUs" (NVIDIA vGPU software
#: documentation, limitation "Total Frame Buffer for vGPUs is Less Than the Total Frame Buffer on the Physical GPU"):
#: the host's, not taken out of what the guest sees. Measured in a guest: vLLM 0.6.4.post1 on an NVIDIA A40-48Q
#: (a 49,152 MiB profile, driver 535.161.08) printed total_gpu_memory=47.74GiB, torch's cudaMemGetInfo total, 266 MiB
#: under the profile, where the profile less max-reserved-fb would leave 41.86 GiB
#: (https://github.com/vllm-project/vllm/issues/11230; fixtures/accelerators/vgpu-guest-totals.yaml); nvidia-smi in
#: Azure NVadsA10 v5 guests shows the profile (A10-12Q 12,288 MiB, A10-24Q 24,512 MiB). So a guest is sized as a GPU
#: whose NVML total is its frame buffer: less the catalogue's NVML-to-CUDA reserve
#: (:func:`kvlint.accelerators.registry.driver_reserve_mib`, 494 MiB), over the 266 MiB the A40 guest lost
VGPU_GUEST_SRC = (
    "https://github.com/vllm-project/vllm/issues/11230 (NVIDIA A40-48Q guest: total_gpu_memory=47.74GiB)"
)


def vgpu_guest_reserve_mib() -> tuple[int, str]:
    """(MiB of a vGPU profile's frame buffer the engine does not see, in its guest; the term in words): the
    catalogue's NVML-to-CUDA reserve of a GPU (:func:`kvlint.accelerators.registry.driver_reserve_mib`), not NVIDIA's
    max-reserved-fb, which the vGPU manager takes on the physical GPU, outside the guest's frame buffer
    (:data:`VGPU_GUEST_SRC`)."""
    reserve = cat.driver_reserve_mib()
    return reserve, (
        f"a GPU's NVML-to-CUDA reserve; NVIDIA's vGPU reservation is taken on the physical GPU, not of the guest's "
        f"frame buffer: {VGPU_GUEST_SRC}"
    )


def _node_selector_labels(pod_spec: Mapping[str, Any]) -> tuple[Labels, Any]:
    ns = pod_spec.get("nodeSelector")
    labels: Labels = {}
    if isinstance(ns, Mapping):
        for k, v in ns.items():
            if v is not None and not isinstance(v, (Mapping, list)):
                labels[str(k)] = [(str(v), loc_of(ns, k))]
    return labels, ns


@dataclass
class _Expr:
    """One ``matchExpressions`` item of a required node-affinity term."""

    key: str
    op: str
    values: list[tuple[str, Loc | None]]

    @property
    def text(self) -> str:
        if self.op in ("Exists", "DoesNotExist"):
            return f"{self.key} {self.op}"
        return f"{self.key} {self.op} [{', '.join(v for v, _ in self.values)}]"


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

_T = TypeVar("_T")


def _per_pod_spec(read: Callable[[Mapping[str, Any]], _T]) -> Callable[[Mapping[str, Any]], _T]:
    """``read`` memoised by the identity of its pod spec, while that spec lives (a weak reference; the entry goes with
    the spec, so a webhook worker keeps nothing of a review past it). Every container of a pod asked again for the
    same pod's node affinity: a pod of 40 containers with 2,000 ``nodeSelectorTerms`` (190 KB) read the terms 120
    times (placement, KV410's node GPU count twice) and took 6.5 s; each pod's are now read once. ``read``'s answer
    must not be changed by its callers (the manifest is not changed while it is checked)."""
    memo: dict[int, tuple[weakref.ref[Any], _T]] = {}

    def reading(pod_spec: Mapping[str, Any]) -> _T:
        key = id(pod_spec)
        hit = memo.get(key)
        if hit is not None and hit[0]() is pod_spec:
            return hit[1]
        out = read(pod_spec)

        def gone(_ref: weakref.ref[Any]) -> None:
            memo.pop(key, None)

        try:
            ref = weakref.ref(pod_spec, gone)
        except TypeError:  # a plain dict (tests, the API's own objects): not kept
            return out
        memo[key] = (ref, out)
        return out

    reading.__doc__ = read.__doc__
    reading.__wrapped__ = read  # type: ignore[attr-defined]
    return reading


@_per_pod_spec
def _affinity_terms(pod_spec: Mapping[str, Any]) -> list[list[_Expr]]:
    """Required node-affinity terms (``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``)
    -> one list of expressions per term (expressions AND'ed, terms OR'ed, as the scheduler's
    ``nodeaffinity`` plugin evaluates them). Malformed expressions (unknown operator, In/NotIn without a
    values list, Gt/Lt without one integer) are dropped: the API server would reject them. A term with no
    usable expression (e.g. ``matchFields`` only) does not constrain the GPU and is kept as ``[]``."""
    aff = pod_spec.get("affinity")
    node = aff.get("nodeAffinity") if isinstance(aff, Mapping) else None
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    out: list[list[_Expr]] = []
    if not isinstance(terms, list):
        return out
    for term in terms:
        if not isinstance(term, Mapping):
            continue
        exprs = term.get("matchExpressions")
        parsed: list[_Expr] = []
        for e in exprs if isinstance(exprs, list) else []:
            if not isinstance(e, Mapping):
                continue
            key, op, values = e.get("key"), str(e.get("operator", "")), e.get("values")
            if not isinstance(key, str) or op not in _OPERATORS:
                continue
            vals: list[tuple[str, Loc | None]] = []
            if isinstance(values, list):
                vals = [
                    (str(v), loc_of(values, i) or loc_of(e, "values"))
                    for i, v in enumerate(values)
                    if v is not None and not isinstance(v, (Mapping, list))
                ]
            if op in ("In", "NotIn") and not vals:
                continue
            if op in ("Gt", "Lt") and (len(vals) != 1 or _as_int(vals[0][0]) is None):
                continue
            parsed.append(_Expr(key, op, vals))
        if parsed or term.get("matchFields"):
            out.append(parsed)
    return out


@dataclass
class _PodScheduling:
    """What a pod spec's ``nodeSelector`` and required node affinity say, the same for each of its containers
    (:func:`_pod_scheduling`): the label sets (the nodeSelector's, then each term's ``In`` values), the GKE MIG
    partition and sharing they declare, and the GPU they decide (:func:`_from_scheduling`) per site table. A pod of
    40 containers with 2,000 ``nodeSelectorTerms`` evaluated every term for each container's placement (80,000
    term evaluations); each pod's are now evaluated once (perf52). Nothing here is changed by its readers
    (:func:`_finish` never mutates a decision)."""

    ns_labels: Labels
    ns: Any
    terms: list[list[_Expr]]
    label_sets: list[Labels]
    partition: str | None
    sharing: tuple[bool, int | None, str, str | None]
    decisions: dict[int, tuple[Site | None, _Decision | None]] = field(default_factory=dict)
    #: :func:`_why_undecided` of :attr:`label_sets`, once read (:meth:`why_undecided`)
    why: tuple[str, ...] | None = None

    def why_undecided(self) -> list[str]:
        """:func:`_why_undecided` of the pod's label sets, read once for all its containers (a new list each call:
        :func:`_finish` adds to it). A pod of 40 undecided containers and 4,000 ``nodeSelectorTerms`` read every
        term's values for each container (480,000 values, 3 s; break52)."""
        if self.why is None:
            self.why = tuple(_why_undecided(self.label_sets))
        return list(self.why)

    def decision(self, site: Site | None) -> _Decision | None:
        """:func:`_from_scheduling` of the pod's nodeSelector and terms with ``site``, once per site table."""
        hit = self.decisions.get(id(site))
        if hit is not None and hit[0] is site:
            return hit[1]
        out = _from_scheduling(self.ns_labels, self.ns, self.terms, site)
        # (the site kept with its answer, so its id is not reused meanwhile)
        self.decisions[id(site)] = (site, out)
        return out


@_per_pod_spec
def _pod_scheduling(pod_spec: Mapping[str, Any]) -> _PodScheduling:
    """The :class:`_PodScheduling` of ``pod_spec`` (read once while the spec lives, :func:`_per_pod_spec`)."""
    ns_labels, ns = _node_selector_labels(pod_spec)
    terms = _affinity_terms(pod_spec)
    label_sets: list[Labels] = [ns_labels]
    for exprs in terms:
        term_labels: Labels = {}
        for e in exprs:
            if e.op == "In":
                term_labels.setdefault(e.key, []).extend(e.values)
        label_sets.append(term_labels)
    return _PodScheduling(ns_labels, ns, terms, label_sets, _partition(label_sets), _sharing(label_sets))


def _named_ids(key: str, values: list[tuple[str, Loc | None]]) -> set[str]:
    """Catalogue ids a label key's values name (all possibilities of ambiguous names)."""
    ids: set[str] = set()
    for v, _ in values:
        if key in (KARPENTER_GPU, AZURE_GPU):
            accs, _known = cat.karpenter_gpu_name(v) if key == KARPENTER_GPU else cat.azure_gpu_name(v)
            ids.update(a.id for a in accs)
            continue
        c = _candidate(key, v, None, {})
        if c is not None and c.acc is not None:
            ids.update(a.id for a in [c.acc, *c.alts])
    return ids


def _cand_mib(c: _Cand, key: str) -> int | None:
    """The figure a ``Gt``/``Lt`` on a memory label compares for a candidate (MiB), or None if unknown."""
    if c.acc is None:
        return None
    if key == GFD_MEMORY:
        return c.mig_bytes // cat.MIB if c.mig_bytes else cat.nvml_total_mib(c.acc)
    return cat.instance_gpu_memory_mib(c.acc)


def _compare(op: str, have: int, bound: int) -> bool:
    return have > bound if op == "Gt" else have < bound


def _memory_range_cands(exprs: list[_Expr]) -> list[_Cand] | None:
    """Candidates from ``Gt``/``Lt`` on ``nvidia.com/gpu.memory`` or Karpenter ``instance-gpu-memory``
    alone: every catalogue NVIDIA GPU in range (filtered later); None when the term has no such bound."""
    keys = [e for e in exprs if e.op in ("Gt", "Lt") and e.key in (GFD_MEMORY, KARPENTER_GPU_MEMORY)]
    if not keys:
        return None
    e0 = keys[0]
    accs = [a for a in cat.catalogue().values() if a.vendor == "nvidia"]
    return [_Cand(a, e0.key, e0.text, e0.values[0][1]) for a in accs]


def _filter(cands: list[_Cand], exprs: list[_Expr]) -> list[_Cand]:
    """Apply a term's ``NotIn``, ``DoesNotExist`` and ``Gt``/``Lt`` expressions to candidates (a candidate
    whose figure is unknown is kept: kvlint cannot prove the node fails the expression)."""
    for e in exprs:
        if e.op == "NotIn":
            banned = _named_ids(e.key, e.values) if e.key in LABEL_ORDER else set()
            raw = {v.lower() for v, _ in e.values}
            cands = [
                c
                for c in cands
                if not (c.acc is not None and c.acc.id in banned)
                and not (c.key == e.key and c.value.lower() in raw)
            ]
        elif e.op == "DoesNotExist":
            cands = [c for c in cands if c.key != e.key]
        elif e.op == "In" and e.key == GFD_FAMILY:
            # the architecture a node of the term has: narrows the GPUs (a memory range's) to those of it
            families = _named_families(e.values)
            if families:
                cands = [n for c in cands for n in _family_kept(c, families)]
        elif e.op in ("Gt", "Lt") and e.key in (GFD_MEMORY, KARPENTER_GPU_MEMORY):
            bound = _as_int(e.values[0][0]) or 0
            kept = []
            for c in cands:
                mib = _cand_mib(c, e.key)
                if mib is None or _compare(e.op, mib, bound):
                    kept.append(c)
            cands = kept
    return cands


def _family_kept(c: _Cand, families: set[str]) -> list[_Cand]:
    """Candidate ``c`` as a node of a GFD ``nvidia.com/gpu.family`` in ``families`` may carry it: unchanged when
    its GPU and the GPUs its value may also stand for (``alts``: a ``nvidia.com/gpu.memory`` matching several
    boards) are of those families or unknown to them; else the ones that are, the first taken (none: dropped)."""

    def of_family(a: Accelerator) -> bool:
        return a.vendor != "nvidia" or a.cc is None or bool(gfd_families(a.cc) & families)

    if c.acc is None:
        return [c]
    ok = [a for a in [c.acc, *c.alts] if of_family(a)]
    if len(ok) == 1 + len(c.alts):
        return [c]
    if not ok:
        return []
    note = f"{c.key}={c.value} narrowed by {GFD_FAMILY} {', '.join(sorted(families))} to {', '.join(a.id for a in ok)}"
    return [replace(c, acc=ok[0], alts=ok[1:], notes=[*c.notes, note])]


def _eval_term(
    exprs: list[_Expr], base: list[_Cand] | None, notes: list[str], site: Site | None = None
) -> tuple[list[_Cand] | None, str]:
    """Candidates a node matching one term (AND'ed with the nodeSelector's candidates ``base``) may carry.

    Returns (candidates or None when the term does not constrain the GPU, rendered text of the
    expressions that mattered). An empty list means no catalogue GPU satisfies the term.
    """
    in_labels: Labels = {}
    for e in exprs:
        if e.op == "In":
            in_labels.setdefault(e.key, []).extend(e.values)
    in_cands = _decide(in_labels, site) if in_labels else None
    deciding = {c.key for c in in_cands} if in_cands else set()
    text = "; ".join(
        e.text
        for e in exprs
        if e.key in deciding
        or e.key in (GFD_MEMORY, KARPENTER_GPU_MEMORY, GFD_FAMILY)
        or (e.op != "In" and e.key in LABEL_ORDER)
    )
    cands: list[_Cand] | None
    if base is not None:
        cands = list(base)
        if in_cands is not None:
            ids = {c.acc.id for c in in_cands if c.acc}
            if ids and any(c.acc for c in base):
                kept = []
                for c in base:
                    if c.acc is None or c.acc.id in ids:
                        kept.append(c)
                    else:  # an ambiguous name: keep the alternatives the term allows
                        kept += [
                            _Cand(a, c.key, c.value, c.loc, [f"{c.key}={c.value} narrowed to {a.id}"])
                            for a in c.alts
                            if a.id in ids
                        ]
                if not kept:
                    notes.append(
                        f"nodeAffinity {text} names {', '.join(sorted(ids))}, which the nodeSelector excludes: "
                        "no node can satisfy both (the pod stays Pending)"
                    )
                cands = kept
    elif in_cands is not None:
        cands = in_cands
    else:
        cands = _memory_range_cands(exprs)
    if cands is not None:
        cands = _filter(cands, exprs)
    return cands, text


def _apply_affinity(
    base: list[_Cand] | None, terms: list[list[_Expr]], notes: list[str], site: Site | None = None
) -> tuple[list[_Cand] | None, str]:
    """OR the terms: the union of each term's candidates (None when some term leaves the GPU open)."""
    union: list[_Cand] = []
    texts: list[str] = []
    for exprs in terms:
        got, text = _eval_term(exprs, base, notes, site)
        if got is None:
            return base, ""
        union.extend(got)
        if text:
            texts.append(text)
    return union, " | ".join(texts)


def _from_scheduling(
    ns_labels: Labels, ns: Any, terms: list[list[_Expr]], site: Site | None = None
) -> _Decision | None:
    """nodeSelector AND (term1 OR term2 ...) -> the decision, or None when neither names a GPU.

    The nodeSelector's candidates are narrowed by each term (In on another GPU key intersects, NotIn /
    DoesNotExist / Gt / Lt filter); without a deciding nodeSelector the terms' candidates are unioned.
    When the constraints leave no GPU, the nodeSelector's own choice is kept and ``how`` says the pod
    cannot schedule; when affinity alone leaves none, the accelerator is None and ``how`` says why.
    """
    notes: list[str] = []
    base = _decide(ns_labels, site) if ns_labels else None
    if base is not None and terms:
        narrowed, text = _apply_affinity(base, terms, notes, site)
        how = f"nodeSelector {base[0].key}={base[0].value}"
        if narrowed:
            if text and {id(c) for c in narrowed} != {id(c) for c in base}:
                how += f" and nodeAffinity {text}"
            d = _combine(list({id(c): c for c in narrowed}.values()), how)
        else:
            d = _combine(base, how)
            d.notes.append(
                f"nodeAffinity {text or 'terms'} exclude every GPU the nodeSelector allows: the pod cannot "
                "schedule; checked against the nodeSelector's GPU"
            )
        d.notes.extend(notes)
        if d.loc is None:
            d.loc = loc_of(ns)
        return d
    if base is not None:
        d = _combine(base, f"nodeSelector {base[0].key}={base[0].value}")
        if d.loc is None:
            d.loc = loc_of(ns)
        return d
    if not terms:
        return None
    union, text = _apply_affinity(None, terms, notes, site)
    if union is None:
        return None
    if not union:
        return _Decision(
            None,
            f"nodeAffinity {text}: no catalogue accelerator satisfies the required terms",
            None,
            notes,
            undecided=True,
        )
    d = _combine(union, f"nodeAffinity {text}")
    d.notes.extend(notes)
    return d


#: :data:`GPU_RESOURCES` by their place in :func:`_resource_rank`'s order (MIG resources rank 4, an AMD partition
#: just before ``amd.com/gpu``)
_RESOURCE_RANKS = {key: 2 * (i if i < 2 else i + 1) for i, key in enumerate(GPU_RESOURCES)}


def _resource_rank(key: str) -> int | None:
    """Search order of accelerator resources: nvidia.com/gpu, .shared, MIG, then the other vendors. An AMD
    compute partition under the device plugin's ``mixed`` naming (``amd.com/cpx_nps4``, not ``spx``, a whole GPU)
    comes before ``amd.com/gpu``: a container asking both gets a whole GPU and a partition, and its engine may run
    on the partition, an eighth of the GPU's memory under CPX: planned on the whole GPU it was sized on memory its
    device may not have."""
    if key.startswith(MIG_RESOURCE_PREFIX):
        return 4
    part = amd_partition_of(key)
    if part is not None:
        return _RESOURCE_RANKS[AMD_GPU] - (0 if part.startswith("spx") else 1)
    return _RESOURCE_RANKS.get(key)


def _gpu_resource(container: Mapping[str, Any]) -> tuple[str | None, int | None, Loc | None]:
    """(resource name, count, position) of the container's accelerator resource: ``limits`` first,
    then ``requests``; ``nvidia.com/gpu`` before ``.shared``, MIG, AMD, TPU, Gaudi, Neuron, Intel (of keys of
    the same rank, the first written)."""
    res = container.get("resources")
    if not (isinstance(res, dict) or isinstance(res, Mapping)):
        return None, None, None
    for section in ("limits", "requests"):
        block = res.get(section)
        if not (isinstance(block, dict) or isinstance(block, Mapping)):
            continue
        key, rank = None, None
        for k in block:
            if isinstance(k, str):
                r = _resource_rank(k)
                if r is not None and (rank is None or r < rank):
                    key, rank = k, r
        if key is not None:
            return key, _as_int(block.get(key)), loc_of(block, key)
    return None, None, None


#: GFD's sharing-strategy label: ``none``, ``time-slicing`` or ``mps`` (NVIDIA k8s-device-plugin ``README.md``,
#: "Catalog of Labels", ``nvidia.com/gpu.sharing-strategy``)
GFD_SHARING = "nvidia.com/gpu.sharing-strategy"
#: The sharing strategies the labels name, as :attr:`kvlint.types.Placement.sharing_strategy` gives them: GFD's words,
#: and GKE's (``cloud.google.com/gke-gpu-sharing-strategy``: ``time-sharing`` or ``mps``, GKE docs "Share GPUs with
#: multiple workloads using GPU time-sharing" / "... NVIDIA MPS"), GKE's time-sharing being CUDA time-slicing
_SHARING_STRATEGIES = {"time-slicing": "time-slicing", "time-sharing": "time-slicing", "mps": "mps"}


def _sharing(label_sets: list[Labels]) -> tuple[bool, int | None, str, str | None]:
    """Sharing declared by node labels: GKE time-sharing/MPS, GFD sharing-strategy / replicas. Returns (shared, how
    many pods share one GPU when a label says, a note, the strategy: ``time-slicing``, ``mps`` or None when no label
    names one kvlint knows, :data:`_SHARING_STRATEGIES`)."""
    shared, sharers, notes, named = False, None, [], None
    for labels in label_sets:
        strategy = _first(labels, GKE_SHARING) or _first(labels, GFD_SHARING)
        if strategy and strategy.lower() not in ("none", ""):
            shared = True
            notes.append(f"shared GPU ({strategy})")
            named = named or _SHARING_STRATEGIES.get(strategy.strip().lower())
        n = _as_int(_first(labels, GKE_MAX_SHARED)) or _as_int(_first(labels, "nvidia.com/gpu.replicas"))
        if n and n > 1:
            shared, sharers = True, n
    return shared, sharers, "; ".join(dict.fromkeys(notes)), named


#: A placement's ``how`` when nothing decided the accelerator; the reasons follow in parentheses
#: (:func:`undecided_reasons`).
UNDECIDED = "nothing in the manifest names the accelerator"


def undecided_reasons(placement: Placement | None) -> str:
    """Why nothing decided the accelerator of ``placement``, in words (a label kvlint does not read, a GPU named but
    not in the catalogue, a resource naming only the vendor, an operator's own reason), or "" when the
    accelerator is known or no reason is recorded."""
    if placement is None or placement.accelerator is not None:
        return ""
    return "; ".join(placement.undecided)


def _pinned_classes(label_sets: list[Labels]) -> dict[str, str]:
    """The ComputeClass and NodePool each node-class label (:data:`COMPUTE_CLASS`, :data:`KARPENTER_NODEPOOL`) pins
    a pod to, read from its label sets as :func:`resolve_placement` builds them (the ``nodeSelector``'s first, then one per
    required affinity term, ``In`` values): the nodeSelector's value, else the one value every term allows (a
    term without the key leaves the pod free), as :func:`selected_node_class` reads the pod spec."""
    out: dict[str, str] = {}
    ns, terms = (label_sets[0], label_sets[1:]) if label_sets else ({}, [])
    for key in (COMPUTE_CLASS, KARPENTER_NODEPOOL):
        if ns.get(key):
            out[key] = ns[key][0][0]
        elif terms and all(t.get(key) for t in terms):
            values = {v for t in terms for v, _ in t[key]}
            if len(values) == 1:
                out[key] = values.pop()
    return out


def _why_undecided(
    label_sets: list[Labels], *, pod: bool = True, class_read: tuple[str, str] | None = None
) -> list[str]:
    """Why the scheduling labels did not decide: instance types not in the catalogue, label keys that are
    not GPU labels kvlint reads (e.g. a provider-specific ``.../gpu-name``); for a pod's (``pod``, not a node's
    own labels), the ComputeClass or NodePool it selects by name when none among the inputs names its GPU, or,
    ``class_read`` (``(its selector label, why)``, :attr:`kvlint.types.Workload.node_class_why`), why the one
    among the inputs names none."""
    notes: list[str] = []
    pinned, said = _pinned_classes(label_sets) if pod else {}, set[str]()
    for labels in label_sets:
        for key, values in labels.items():
            vals = ", ".join(v for v, _ in values)
            if values and all(_fill_in(v) for v, _ in values):
                # A template's blank (KAITO's Arc example: instanceType: <your-vm-sku>): not a value that names
                # no GPU, a value not written yet.
                what = (
                    "the instance type of your GPU nodes"
                    if key in (INSTANCE_TYPE, INSTANCE_TYPE_BETA)
                    else ("the value your GPU nodes carry")
                )
                notes.append(f"{key}={vals} is a placeholder left to fill in: write {what} there")
            elif key in (INSTANCE_TYPE, INSTANCE_TYPE_BETA):
                for v, _ in values:
                    it = cat.instance_type(v)
                    if it is not None and it.share_unknown and it.accelerator is not None:
                        notes.append(
                            f"{key}={it.name} is a share of one {it.accelerator.id} of unknown size ({it.note}): "
                            f"not planned on the whole GPU; give its memory with --gpu-memory"
                        )
                    elif it is not None and it.accelerator is None and it.gpus and it.note:
                        # a GPU instance type of the cloud's table whose GPU the catalogue does not hold (EC2's
                        # p6-b300: 8 B300): not "not a GPU instance type", which sends the user looking elsewhere
                        notes.append(
                            f"{key}={v} is an instance type of {it.gpus} GPU{'s' if it.gpus > 1 else ''} kvlint "
                            f"cannot size ({it.note}): name the GPU with {ANNOTATION} or its memory with --gpu-memory"
                        )
                    else:
                        notes.append(f"{key}={v} is not a GPU instance type in the catalogue")
            elif key == GFD_FAMILY:
                notes.append(
                    f"label {key}={vals} names a GPU architecture, not a GPU model: kvlint reads it only to narrow "
                    f"the GPUs a {GFD_MEMORY} matches (use {ANNOTATION} or --accelerator)"
                )
            elif key in _TABLE_KEYS:
                # A provider key whose value is not in that provider's table: other clusters reuse the key with
                # values of their own (Ori Cloud writes gpu.nvidia.com/class: L40S, H100SXM-80), so kvlint does
                # not read it (:func:`_candidate`), and says so here rather than nothing.
                unread = [v for v, _ in values if not _TABLE_KEYS[key][1](v)[2]]
                if not unread:
                    continue
                named = _named_by_value(unread)
                spelled = f"; its value spells {named.name} ({named.id})" if named is not None else ""
                notes.append(
                    f"label {key}={', '.join(unread)} is not a value of {_TABLE_KEYS[key][0]} kvlint reads{spelled}: "
                    f"map it under accelerators.node_labels in .kvlint.yaml, or set {ANNOTATION}"
                )
            elif key in (COMPUTE_CLASS, KARPENTER_NODEPOOL):
                # The pod names the object that names its GPU (a ComputeClass's priorities[].gpu.type, a
                # NodePool's requirements), not the GPU: kvlint reads it when it is an input (find.py
                # with_node_class), so say which one to pass. Only for the one class the pod's scheduling pins
                # (as selected_node_class reads it: an open affinity term lets it land elsewhere), once; GKE's
                # built-in classes are no object one could pass.
                kind = "ComputeClass" if key == COMPUTE_CLASS else "Karpenter NodePool"
                name = pinned.get(key)
                if (
                    name
                    and not (key == COMPUTE_CLASS and name in GKE_BUILTIN_COMPUTE_CLASSES)
                    and key not in said
                ):
                    said.add(key)
                    if class_read is not None and class_read[0] == key:
                        notes.append(class_read[1])
                        continue
                    notes.append(
                        f"label {key}={name} selects its nodes by the {kind} {name}, and no {kind} of that name "
                        f"that kvlint read among the inputs names a GPU: name its file with the workload's to kvlint "
                        f"check, or set {ANNOTATION}"
                    )
            elif key in _COUNT_KEYS:
                # a count kvlint reads (KV410: :func:`node_gpu_capacity`), but not which GPU
                notes.append(
                    f"label {key}={vals} counts the node's GPUs but does not name them (use {ANNOTATION} or "
                    "--accelerator)"
                )
            elif key not in LABEL_ORDER and ("gpu" in key.lower() or "accelerator" in key.lower()):
                named = _named_by_value([v for v, _ in values])
                if named is not None:
                    # The value spells a catalogue GPU, but the key is the cluster's own: kvlint does not read
                    # other clusters' keys (their values are theirs to define), it says how to map them.
                    notes.append(
                        f"label {key}={vals} is not one kvlint reads; its value spells {named.name} "
                        f"({named.id}): map it under accelerators.node_labels in .kvlint.yaml, or set {ANNOTATION}"
                    )
                else:
                    notes.append(
                        f"label {key}={vals} is not one kvlint reads (use {ANNOTATION} or --accelerator)"
                    )
    return notes


#: Provider keys read only for the values of that provider's own table (an unknown value decides nothing, and
#: :func:`_why_undecided` names it): key -> (the table, in words; its lookup, whose third item is "known value").
_TABLE_KEYS: dict[str, tuple[str, Callable[[str], tuple[Any, str, bool]]]] = {
    COREWEAVE_CLASS: ("CoreWeave's node-type table", cat.coreweave_gpu_class),
    DOKS_GPU_MODEL: ("DigitalOcean's GPU model list", cat.doks_gpu_model),
}


def _fill_in(value: str) -> bool:
    """Whether a label value is a placeholder a person or a tool replaces before the manifest is applied, read as
    in an image field (:mod:`kvlint.engines.images`): a ``<...>`` blank (``<your-vm-sku>``,
    :func:`~kvlint.engines.images.blank_to_fill_in`) or an unexpanded ``${VAR}``, ``$VAR`` or ``$(VAR)`` reference
    (:func:`~kvlint.engines.images.unexpanded_reference`), which Kubernetes expands in neither a nodeSelector nor
    an operator's instance type. Not an image's upper-case ``V_NAME`` token: GPU label values are written so
    (``A100_40GB``, CoreWeave's ``A100_NVLINK_80GB``)."""
    from kvlint.engines.images import blank_to_fill_in, unexpanded_reference

    v = value.strip()
    return blank_to_fill_in(v) or unexpanded_reference(v) is not None


def _named_by_value(values: list[str]) -> Accelerator | None:
    """The one catalogue GPU that every value of a label kvlint does not read spells (an id, alias, GFD product or
    GKE value, with or without a vendor prefix: ``nvidia-gtx-2080ti``), else None. Used only to word KV501's
    hint: the label still decides nothing."""
    found: set[str] = set()
    acc: Accelerator | None = None
    for value in values:
        hit = cat.lookup(value)
        low = value.strip().lower()
        for prefix in ("nvidia-", "amd-"):
            if hit is None and low.startswith(prefix):
                hit = cat.lookup(low[len(prefix) :])
        if hit is None:
            return None
        found.add(hit.id)
        acc = hit
    return acc if len(found) == 1 else None


def _slice_note(gslice: GpuSlice, acc: Accelerator | None) -> str:
    """The placement note for a HAMi slice: its size per vGPU and why it is the device total the engine sees."""
    if gslice.mib is None and gslice.percent is None:
        return ""
    card = acc.memory_bytes // cat.MIB if acc and acc.id != "generic" else None
    if gslice.mib is not None:
        size = f"{gslice.mib} MiB per vGPU"
    else:
        pct = gslice.percent or 0
        size = f"{pct}% of the card per vGPU"
        if card:
            size += f" = {card * pct // 100} MiB of {card} MiB (HAMi rounds down)"
    if card and gslice.mib is not None and gslice.mib > card:
        return (
            f"HAMi {gslice.key}: {size} is more than the {card} MiB card: HAMi's scheduler finds no card with that "
            "much free memory and the pod stays Pending"
        )
    return f"HAMi {gslice.key}: {size}, the device total HAMi-core reports to the engine (cuMemGetInfo)"


#: Node labels by which a pod selects a class of nodes an object among the inputs describes: GKE's
#: ``cloud.google.com/compute-class`` (a ComputeClass, cloud.google.com/v1, by name: GKE docs, "About custom
#: ComputeClasses", "Request a ComputeClass in a workload") and Karpenter's ``karpenter.sh/nodepool`` (the
#: NodePool that launched the node, karpenter.sh/v1: Karpenter docs, "NodePools", well-known labels).
COMPUTE_CLASS = "cloud.google.com/compute-class"
KARPENTER_NODEPOOL = "karpenter.sh/nodepool"
#: GKE Autopilot's built-in ComputeClasses (GKE docs, "About built-in ComputeClasses in Autopilot clusters";
#: ``Accelerator`` with ``cloud.google.com/gke-accelerator`` for GPUs, "Deploy GPU workloads in Autopilot";
#: ``autopilot-arm``, "Deploy Autopilot workloads on Arm architecture",
#: https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-arm-workloads: "To use the autopilot-arm
#: ComputeClass, ensure that your cluster is running GKE version 1.35.3-gke.1389000 or later"): no object among a
#: user's manifests, and none names a GPU.
GKE_BUILTIN_COMPUTE_CLASSES = frozenset(
    {"Accelerator", "Balanced", "Performance", "Scale-Out", "autopilot", "autopilot-spot", "autopilot-arm"}
)
NODE_CLASS_KINDS = {
    "ComputeClass": ("cloud.google.com/", COMPUTE_CLASS),
    "NodePool": ("karpenter.sh/", KARPENTER_NODEPOOL),
}


def node_class_label_sets(kind: str, data: Any) -> list[Labels]:
    """The GPU node labels a ComputeClass or a Karpenter NodePool (:data:`NODE_CLASS_KINDS`) gives its nodes, one
    set per kind of node its pods may land on. A ComputeClass: one set per ``spec.priorities[]`` rule, its
    ``gpu.type`` (as ``cloud.google.com/gke-accelerator``), ``tpu.type`` (``cloud.google.com/gke-tpu-accelerator``),
    ``machineType`` (``node.kubernetes.io/instance-type``) and ``machineFamily`` (``cloud.google.com/machine-family``,
    the label GKE gives its nodes; a series names a GPU only when all its machine types have it): the rules are alternatives GKE falls back through
    in order (GKE's ComputeClass CRD reference), so a pod may land on the nodes of any. A NodePool: one set, its
    ``spec.template.spec.requirements[]`` with operator ``In`` and its ``spec.template.metadata.labels``, which
    every node it launches satisfies together (node-selector requirements, Karpenter's "NodePools" docs). Each
    value located where it is written; rules that give no label are left out."""
    sets: list[Labels] = []
    spec = data.get("spec") if isinstance(data, dict) else None
    if not isinstance(spec, dict):
        return sets

    def add(out: Labels, key: str, value: Any, loc: Loc | None) -> None:
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            out.setdefault(key, []).append((str(value).strip(), loc))

    if kind == "ComputeClass":
        rules = spec.get("priorities")
        for rule in rules if isinstance(rules, list) else []:
            if not isinstance(rule, dict):
                continue
            out: Labels = {}
            for field_, key in (("gpu", GKE_ACCELERATOR), ("tpu", GKE_TPU)):
                part = rule.get(field_)
                if isinstance(part, dict):
                    add(out, key, part.get("type"), loc_of(part, "type"))
            add(out, INSTANCE_TYPE, rule.get("machineType"), loc_of(rule, "machineType"))
            add(out, GKE_MACHINE_FAMILY, rule.get("machineFamily"), loc_of(rule, "machineFamily"))
            if out:
                sets.append(out)
        return sets
    out = {}
    tmpl = spec.get("template")
    tspec = tmpl.get("spec") if isinstance(tmpl, dict) else None
    reqs = tspec.get("requirements") if isinstance(tspec, dict) else None
    for req in reqs if isinstance(reqs, list) else []:
        if isinstance(req, dict) and req.get("operator") == "In" and isinstance(req.get("key"), str):
            values = req.get("values")
            for i, v in enumerate(values if isinstance(values, list) else []):
                add(out, req["key"], v, loc_of(values, i))
    meta = tmpl.get("metadata") if isinstance(tmpl, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    for k, v in labels.items() if isinstance(labels, dict) else []:
        add(out, str(k), v, loc_of(labels, k))
    return [out] if out else []


def node_class_labels(kind: str, data: Any) -> Labels:
    """All the node labels of :func:`node_class_label_sets` in one set (each key's values in order), as said."""
    out: Labels = {}
    for labels in node_class_label_sets(kind, data):
        for key, values in labels.items():
            out.setdefault(key, []).extend(values)
    return out


def selected_node_class(pod_spec: Any, key: str) -> tuple[str, str] | None:
    """``(name, how)``: the one value a pod's required scheduling pins the node label ``key`` to (a
    ComputeClass's :data:`COMPUTE_CLASS`, a NodePool's :data:`KARPENTER_NODEPOOL`), and how it says so; None
    when it pins none or several.

    ``nodeSelector[key]``; else its required node affinity (:func:`_affinity_terms`, the scheduler's
    ``nodeaffinity`` plugin: terms OR'ed, a term's expressions AND'ed): every term restricts ``key`` with
    ``In`` (a term with several ``In`` on ``key`` allows what they all list), and the terms together allow one
    value. A term that does not restrict ``key`` lets the pod onto any node, and names no class."""
    if not isinstance(pod_spec, Mapping):
        return None
    ns = pod_spec.get("nodeSelector")
    name = ns.get(key) if isinstance(ns, Mapping) else None
    if isinstance(name, str) and name:
        return name, f"nodeSelector {key}={name}"
    terms = _affinity_terms(pod_spec)
    allowed: set[str] = set()
    for exprs in terms:
        mine = [e for e in exprs if e.key == key and e.op == "In"]
        if not mine:
            return None
        values = set.intersection(*({v for v, _ in e.values} for e in mine))
        allowed |= values
    if len(allowed) != 1:
        return None
    (name,) = allowed
    return name, f"nodeAffinity {key} In [{name}]"


def node_class_accelerator(
    kind: str, name: str, data: Any, how: str | None = None
) -> DerivedAccelerator | None:
    """The accelerator the nodes of the ComputeClass or NodePool ``name`` carry (each set of
    :func:`node_class_label_sets` decided as a pod's own labels are, :func:`_decide`; several GPUs, within a set
    or across a ComputeClass's fallback rules: the smallest memory, said), for a pod
    that selects it by :data:`COMPUTE_CLASS` / :data:`KARPENTER_NODEPOOL` (``how``: in words, as
    :func:`selected_node_class` says it; the nodeSelector by default); None when its labels name none."""
    # each set decided on its own (a ComputeClass's rules are alternatives), the smallest memory of all taken
    cands = [c for labels in node_class_label_sets(kind, data) for c in _decide(labels) or ()]
    if not cands:
        return None
    deciding: dict[str, list[str]] = {}
    for c in cands:
        deciding.setdefault(c.key, []).append(c.value)
    d = _combine(cands, "; ".join(f"{k}={', '.join(dict.fromkeys(vs))}" for k, vs in deciding.items()))
    if d.acc is None:
        return None
    selector = NODE_CLASS_KINDS[kind][1]
    notes = f" ({'; '.join(d.notes)})" if d.notes else ""
    return DerivedAccelerator(
        d.acc.id,
        f"{how or f'nodeSelector {selector}={name}'}: the {kind} {name} among the inputs gives its nodes "
        f"{d.how}{notes}",
        d.loc,
        # the other GPUs its nodes may carry stay candidates, as a pod's own machine-family label keeps them
        tuple(a.id for a in d.candidates),
    )


def node_class_unread(kind: str, name: str, data: Any) -> str:
    """KV501's reason for a pod that selects the ComputeClass or NodePool ``name`` (:data:`NODE_CLASS_KINDS`),
    which is among the inputs but whose node labels (:func:`node_class_labels`) name no GPU kvlint reads
    (:func:`node_class_accelerator` gave None): what they give, so the user sees why (a NodePool requiring only
    ``karpenter.k8s.aws/instance-category In [g]``, a ComputeClass whose priorities name ``nodepools`` only)."""
    key = NODE_CLASS_KINDS[kind][1]
    shown = "ComputeClass" if kind == "ComputeClass" else "Karpenter NodePool"
    pairs = [f"{k}={', '.join(v for v, _ in vals)}" for k, vals in node_class_labels(kind, data).items()]
    if kind == "ComputeClass":
        what = "its priorities give no gpu.type, tpu.type, machineType or machineFamily kvlint knows"
    else:
        what = "its requirements (operator In) and template labels give no GPU label kvlint knows"
    if pairs:
        what += ": " + ", ".join(pairs[:6]) + (f" and {len(pairs) - 6} more" if len(pairs) > 6 else "")
    return (
        f"label {key}={name} selects its nodes by the {shown} {name} among the inputs, which names no GPU kvlint "
        f"reads ({what}); set {ANNOTATION}"
    )


def workload_placement(w: Workload, container: Mapping[str, Any], **kwargs: Any) -> Placement:
    """:func:`resolve_placement` for ``container`` of the workload ``w``: its PodSpec, its annotations (the
    user's ``kvlint.io/accelerator``) and what its reader derived from the operator object
    (:attr:`~kvlint.types.Workload.derived_accelerator`, :attr:`~kvlint.types.Workload.accelerator_why`);
    ``kwargs`` as :func:`resolve_placement` takes them (``override``, ``gpu_memory_bytes``, ``default``,
    ``site``)."""
    return resolve_placement(
        w.pod_spec,
        container,
        w.annotations,
        derived=w.derived_accelerator,
        undecided_why=w.accelerator_why,
        gpu_source=w.gpu_source,
        node_class=w.node_class,
        node_class_why=w.node_class_why,
        dra=w.dra_claims,
        **kwargs,
    )


def dra_claims(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> str | None:
    """The Dynamic Resource Allocation claims ``container`` uses, in words (what requests its devices), or None
    when it names none.

    A container takes devices allocated through DRA by naming, in ``resources.claims``, entries of the pod's
    ``spec.resourceClaims``, each a ``resourceClaimName`` (a ResourceClaim) or a ``resourceClaimTemplateName``
    (a ResourceClaimTemplate the pod's claim is made from): Kubernetes API ``core/v1`` ``ResourceRequirements.claims``
    and ``PodSpec.resourceClaims`` (resource.k8s.io/v1, GA in 1.34). The devices (GPUs or others) and their
    count are in the claim's ``devices.requests``, which kvlint does not read. The first :data:`DRA_CLAIMS_SHOWN`
    claims are named, the others counted."""
    res = container.get("resources")
    claims = res.get("claims") if isinstance(res, Mapping) else None
    if not isinstance(claims, list):  # a number or a mapping there: no claim (it was iterated, a TypeError)
        return None
    names = [str(c.get("name")) for c in claims if isinstance(c, Mapping) and c.get("name")]
    if not names:
        return None
    pod_claims = pod_spec.get("resourceClaims")
    by_name = {
        str(c.get("name")): c
        for c in (pod_claims if isinstance(pod_claims, list) else [])
        if isinstance(c, Mapping)
    }
    sources: list[str] = []
    for name in names[:DRA_CLAIMS_SHOWN]:
        entry = by_name.get(name)
        if entry is not None and entry.get("resourceClaimTemplateName"):
            sources.append(f"{name} (ResourceClaimTemplate {entry.get('resourceClaimTemplateName')})")
        elif entry is not None and entry.get("resourceClaimName"):
            sources.append(f"{name} (ResourceClaim {entry.get('resourceClaimName')})")
        else:
            sources.append(name)
    if len(names) > DRA_CLAIMS_SHOWN:
        sources.append(f"and {len(names) - DRA_CLAIMS_SHOWN:,} more")
    return f"a Dynamic Resource Allocation claim (resources.claims: {', '.join(sources)})"


#: The claims :func:`dra_claims` names; the rest are counted (a container naming thousands would otherwise put
#: them all in one finding)
DRA_CLAIMS_SHOWN = 4


def resolve_placement(
    pod_spec: Mapping[str, Any],
    container: Mapping[str, Any],
    annotations: Mapping[str, str],
    *,
    derived: DerivedAccelerator | None = None,
    undecided_why: str | None = None,
    gpu_source: str | None = None,
    node_class: DerivedAccelerator | None = None,
    node_class_why: tuple[str, str] | None = None,
    override: str | None = None,
    gpu_memory_bytes: int | None = None,
    default: str | None = None,
    site: Site | None = None,
    dra: Mapping[str, Any] | None = None,
    annotation_decides: bool = True,
) -> Placement:
    """Work out the accelerator a container's pod lands on and the accelerators it requests.

    Args:
        pod_spec: the PodSpec mapping (``nodeSelector``, ``affinity``, ``containers`` ...), ideally an
            :class:`~kvlint.source.LDict` so ``loc`` / ``gpus_loc`` point into the file.
        container: one container mapping of that PodSpec (its ``resources``).
        annotations: pod-template annotations (``kvlint.io/accelerator``, the user's).
        derived: the accelerator the operator object's own fields name
            (:attr:`kvlint.types.Workload.derived_accelerator`); decides after the annotation, with its
            ``source`` as ``how``.
        undecided_why: why the operator object cannot say which GPU it lands on
            (:attr:`kvlint.types.Workload.accelerator_why`); the first reason when nothing decides.
        gpu_source: who requests the GPUs when the container's resources name none (the operator that builds
            the pod, :attr:`kvlint.types.Workload.gpu_source`); with the container's DRA claims
            (:func:`dra_claims`), the placement's ``gpus_elsewhere``.
        node_class: the accelerator of the ComputeClass or Karpenter NodePool among the inputs that the pod
            selects by name (:attr:`kvlint.types.Workload.node_class`, :func:`node_class_accelerator`); decides
            when the pod's own node labels and affinity name no GPU.
        node_class_why: ``(selector label, why)`` when that ComputeClass or NodePool is among the inputs but
            names no GPU (:attr:`kvlint.types.Workload.node_class_why`): said in place of asking for its file.
        override: ``--accelerator`` (id or alias); beats everything.
        gpu_memory_bytes: ``--gpu-memory`` in bytes (device total as CUDA reports it, per GPU); replaces
            the catalogue / MIG figure in ``memory_bytes_override``.
        default: the configuration's default accelerator (id or alias); used when nothing in the
            manifest says.
        site: the team's own accelerators, node-label and node-name tables (``.kvlint.yaml``
            ``accelerators``): a pinned ``nodeName`` it knows decides right after the annotation, and its
            label table is read before the built-in label keys. Without an accelerator, ``gpu_memory_bytes``
            stands for a generic CUDA GPU of that size (:func:`kvlint.accelerators.site.generic_gpu`).
        dra: the pod's DRA claims among the inputs (:attr:`kvlint.types.Workload.dra_claims`): a container
            with no accelerator resource that takes GPUs through ``resources.claims`` naming them has their
            count (:func:`kvlint.workloads.dra.container_claim_gpus`), ``resource`` the device class
            (``gpu.nvidia.com``, AMD's ``gpu.amd.com``) and ``gpus_loc`` its ``resources.claims``.
        annotation_decides: whether a ``kvlint.io/accelerator`` annotation naming a GPU the pod's own facts
            exclude (not the GPU, nor one of the GPUs, its operator fields, ``nodeName``, ``nodeSelector``,
            required node affinity or node class decide) still decides. True (exemptions allowed): it does, as
            the user's declaration; False (``--no-exemptions``, the webhook's admin switch): the pod's facts
            decide, since an annotation that moves the pod to a GPU it cannot land on works as an exemption,
            and so does one that picks the largest of the GPUs the pod's constraints allow (the smallest decides).
            Either way the conflict is recorded in ``annotation_conflict`` (KV005 reports it).

    Returns:
        :class:`~kvlint.types.Placement`: ``accelerator`` (None when undetermined), ``how`` (human
        text naming the deciding setting, plus any choice made), ``loc`` (position of the deciding
        label value), ``gpus``/``gpus_loc``/``resource`` (count per container from ``resources.limits``
        then ``requests``; None when absent or not an integer), ``shared``/``max_sharers``, and
        ``memory_bytes_override`` (MIG slice bytes or ``gpu_memory_bytes``).

    Raises:
        UnknownAccelerator: ``override`` or ``default`` is not a catalogue id/alias (a usage error for
            the CLI/config to report). Bad manifest content never raises.
    """
    pod_spec = pod_spec if isinstance(pod_spec, Mapping) else {}
    container = container if isinstance(container, Mapping) else {}
    annotations = annotations if isinstance(annotations, Mapping) else {}

    resource, gpus, gpus_loc = _gpu_resource(container)
    if resource is None and dra:
        from kvlint.workloads.dra import container_claim_gpus, device_class_of

        claimed = container_claim_gpus(container, dra)
        if claimed is not None:
            resource, gpus, gpus_loc = device_class_of(claimed[1]), claimed[0], claimed[2]
    # HAMi's memory slice: nvidia.com/gpu vGPUs (or none, which HAMi's webhook makes 1), not MIG or other vendors
    gslice = hami_slice(container) if resource in (None, HAMI_COUNT) else None
    pod = _pod_scheduling(pod_spec)
    label_sets = pod.label_sets
    notes: list[str] = []

    def lookup(ref: str) -> Accelerator | None:
        return site.lookup(ref) if site is not None else cat.lookup(ref)

    def require(ref: str, what: str) -> Accelerator:
        found = lookup(ref)
        return found if found is not None else cat.require(ref, what)

    decision: _Decision | None = None
    if override:
        decision = _Decision(require(override, "--accelerator"), f"--accelerator {override}", None)
    annotated: _Decision | None = None
    unknown: str | None = None
    if decision is None:
        ann = annotations.get(ANNOTATION)
        if ann is not None and str(ann).strip():
            acc = lookup(str(ann))
            if acc is not None:
                annotated = _Decision(acc, f"annotation {ANNOTATION}={ann}", loc_of(annotations, ANNOTATION))
            else:
                unknown = str(ann)
                notes.append(f"annotation {ANNOTATION}={ann} ignored: not a known accelerator id or alias")
    conflict: AnnotationConflict | None = None
    if decision is None:
        own = _own_decision(pod_spec, pod, derived, node_class, site, lookup)
        if annotated is not None and annotated.acc is not None and own is not None and own.acc is not None:
            allowed = {own.acc.id} | {a.id for a in own.candidates}
            within = annotated.acc.id in allowed and len(allowed) > 1
            if annotated.acc.id not in allowed or (within and not annotation_decides):
                conflict = AnnotationConflict(
                    str(annotations.get(ANNOTATION)),
                    annotated.acc,
                    own.acc,
                    own.how,
                    annotation_decides,
                    within,
                )
                if not annotation_decides:
                    annotated = None
        decision = annotated or own
    placed = _finish(
        decision,
        notes,
        resource=resource,
        gpus=gpus,
        gpus_loc=gpus_loc,
        gslice=gslice,
        partition=pod.partition,
        sharing=pod.sharing,
        # the pod's reasons are read once for its containers; a node class read but naming no GPU is the
        # workload's, said in place of one of them (rare: read per container)
        why_undecided=(
            pod.why_undecided
            if node_class_why is None
            else lambda: _why_undecided(label_sets, class_read=node_class_why)
        ),
        amd_partition=_amd_partition(label_sets),
        undecided_why=undecided_why,
        default=default,
        gpu_memory_bytes=gpu_memory_bytes,
        require=require,
        gpus_elsewhere=(gpu_source or dra_claims(pod_spec, container)) if resource is None else None,
        conflict=conflict,
    )
    # said by KV005 at the annotation: a GPU decided by the pod's own labels would otherwise hide that it was ignored
    return replace(placed, annotation_unknown=unknown) if unknown is not None else placed


def _partition(label_sets: list[Labels]) -> str | None:
    """The first GKE MIG partition label value (``cloud.google.com/gke-gpu-partition-size``) among the label sets."""
    for labels in label_sets:
        part = _first(labels, GKE_PARTITION)
        if part:
            return part
    return None


def _amd_partition(label_sets: list[Labels]) -> str | None:
    """The first AMD node labeller partition label among the label sets, as ``<key>=<value>``
    (``amd.com/compute-memory-partition=cpx_nps4``; either key of :data:`AMD_PARTITION_KEYS`)."""
    for labels in label_sets:
        for key in AMD_PARTITION_KEYS:
            part = _first(labels, key)
            if part:
                return f"{key}={part}"
    return None


#: Compute partitions per GPU of each mode on the AMD boards of eight XCDs whose counts AMD documents: MI300X ("On
#: MI300X: SPX=>1, DPX=>2, QPX=>4, CPX=>8", amdsmi ``amdsmi_accelerator_partition_profile_t::num_partitions``,
#: https://rocm.docs.amd.com/projects/amdsmi/en/docs-7.1.1/doxygen/docBin/html/structamdsmi__accelerator__partition__profile__t.html),
#: MI325X and MI355X (the same 1 / 2 / 4 / 8 logical GPUs per physical GPU, https://aac.amd.com/help/bare-metal/gpu-partitioning/)
AMD_PARTITIONS = {"spx": 1, "dpx": 2, "qpx": 4, "cpx": 8}
AMD_PARTITIONS_SRC = (
    "https://rocm.docs.amd.com/projects/amdsmi/en/docs-7.1.1/doxygen/docBin/html/"
    "structamdsmi__accelerator__partition__profile__t.html (num_partitions)"
)
AMD_PARTITIONED_BOARDS = ("amd-instinct-mi300x", "amd-instinct-mi325x", "amd-instinct-mi355x")
#: Where a partition's memory comes from: amdgpu's ``amdgpu_amdkfd_xcp_memory_size`` gives each compute partition
#: (XCP) its memory partition's size divided by the XCPs that share it, so with the NPS mode's equal memory partitions
#: every XCP holds the GPU's memory divided by the number of compute partitions, whatever the NPS mode
AMD_XCP_MEMORY_SRC = (
    "github:ROCm/amdgpu/drivers/gpu/drm/amd/amdgpu/amdgpu_amdkfd.c@01732e48d68f48b285c037af712b2ec4d0cc7378 "
    "amdgpu_amdkfd_xcp_memory_size"
)


def amd_partition_fleet(
    value: str, fleet: tuple[Accelerator, ...]
) -> tuple[tuple[Accelerator, ...], int | None]:
    """Where a pod requesting one AMD compute partition of mode ``value`` (``cpx_nps4``, the ``mixed``-naming
    resource's, :func:`kvlint.gpu_resources.amd_partition_of`) can land, and into how many partitions the mode
    splits each GPU: the GPUs of ``fleet`` whose partition counts kvlint knows (:data:`AMD_PARTITIONED_BOARDS`),
    else those boards from the catalogue; ``(fleet, None)`` for ``spx`` (whole GPUs) or a mode kvlint does not
    know (:data:`AMD_PARTITIONS`)."""
    mode = value.strip().lower().split("_", 1)[0]
    n = AMD_PARTITIONS.get(mode)
    if n is None or n == 1:
        return fleet, None
    mine = tuple(a for a in fleet if a.id in AMD_PARTITIONED_BOARDS)
    return (mine or tuple(cat.require(i, "AMD partition fleet") for i in AMD_PARTITIONED_BOARDS)), n


def candidate_placement(p: Placement, acc: Accelerator, *, gpu_memory_bytes: int | None = None) -> Placement:
    """``p`` (a placement whose scheduling constraints leave several GPUs, :attr:`~kvlint.types.Placement.candidates`)
    on the candidate ``acc`` alone: its own part of that board, not of the board ``p`` was sized on. A MIG slice is
    the profile's memory on ``acc`` (catalogue ``mig_profiles``: ``1g.18gb`` is 16 GiB on an H200, 17.5 GiB on a
    GH200 144GB), an AMD compute partition ``acc``'s memory over the mode's partition count
    (:func:`_amd_partition_bytes`: a CPX partition is 24 GiB of an MI300X, 32 GiB of an MI325X), and an MPS client's
    cap 1/N of ``acc``'s NVML total (:func:`_mps_cap`). ``gpu_memory_bytes`` (``--gpu-memory``, in bytes) is the
    user's figure for whichever board: kept as it is. Any other override (a GFD memory label's figure) is the node's
    and kept. Used to re-plan each candidate (``kvlint.pipeline._with_candidates``); pure."""
    override = p.memory_bytes_override
    if override and not gpu_memory_bytes:
        if p.mig_profile:
            prof, _note = cat.mig_profile(acc.id, p.mig_profile)
            override = prof.memory_bytes if prof is not None else override
        elif p.amd_partition and acc.vendor == "amd":
            part, _note = _amd_partition_bytes(acc, p.amd_partition)
            override = part or override
    mps_limit = p.mps_limit_bytes
    if mps_limit and p.max_sharers and acc.vendor == "nvidia" and not gpu_memory_bytes:
        # (a MIG slice has no MPS cap, MPS_ON_MIG_NOTE: resolve_placement set none to re-size here)
        mps_limit = _mps_cap(acc, p.max_sharers, None)[0] if not override else mps_limit
    return replace(
        p, accelerator=acc, candidates=(), memory_bytes_override=override, mps_limit_bytes=mps_limit
    )


def amd_partition_memory(acc: Accelerator, n: int) -> int:
    """The memory of one of ``n`` compute partitions of ``acc`` (:func:`_amd_partition_bytes`' arithmetic)."""
    return acc.memory_bytes // n // 4096 * 4096


def _amd_partition_bytes(
    acc: Accelerator, value: str, resource: str | None = None, label: str | None = None
) -> tuple[int | None, str]:
    """(the memory of one compute partition of ``acc`` in the mode ``value`` names, a note), or (None, a note) when
    the mode splits the GPU but kvlint does not know into how many partitions on this board; (None, "") for
    ``spx`` (the whole GPU) or a value that is not ``<mode>_nps<n>``. ``value`` is the node label's
    (:data:`AMD_PARTITION`, for ``amd.com/gpu``), or the one the ``mixed``-naming ``resource`` spells
    (``amd.com/cpx_nps4``: :func:`kvlint.gpu_resources.amd_partition_of`), which the note then names; else the note
    names ``label``, the node label as written (``amd.com/gpu.compute-memory-partition=cpx_nps4``)."""
    mode = value.strip().lower().split("_", 1)[0]
    if mode == "spx" or not re.fullmatch(r"[a-z]px_nps\d+", value.strip().lower()):
        return None, ""
    said, each = (
        (f"resource {resource}", resource) if resource else (label or f"{AMD_PARTITION}={value}", AMD_GPU)
    )
    n = AMD_PARTITIONS.get(mode) if acc.id in AMD_PARTITIONED_BOARDS else None
    if n is None:
        return None, (
            f"{said}: each {each} is a {mode.upper()} partition of {acc.id}, into how many "
            "kvlint does not know on this board: sized as the whole GPU, which overstates its memory"
        )
    part = amd_partition_memory(acc, n)
    return part, (
        f"{said}: each {each} is one of {n} {mode.upper()} partitions of {acc.id}, "
        f"{part / cat.GIB:.2f} GiB (the GPU's memory / {n}, as amdgpu gives each compute partition)"
    )


def _mig_offering(
    acc: Accelerator, candidates: list[Accelerator], resource: str
) -> tuple[Accelerator | None, list[Accelerator], bool, str]:
    """Narrow the GPUs a pod may land on to those offering the MIG profile its ``nvidia.com/mig-<profile>``
    resource requests (mixed strategy: NVIDIA's device plugin advertises that resource only on nodes whose GPUs
    are partitioned into such slices, and a board's profiles are fixed by its model: NVIDIA's MIG user guide,
    "Supported MIG Profiles"; catalogue ``mig_profiles``). ``acc`` is the worst case the labels chose and
    ``candidates`` every GPU they allow. Returns ``(accelerator, candidates, unoffered, note)``: the smallest
    catalogue GPU still allowed that offers the profile (``candidates`` the offering ones, when more than one);
    ``(None, [], True, why)`` when none does, so the container is not sized (nor planned on a fleet of boards the
    pod cannot land on); unchanged for a profile kvlint does not read or a GPU outside the catalogue."""
    profile = cat.mig_profile_name(resource[len(MIG_RESOURCE_PREFIX) :])
    known = cat.catalogue()
    allowed = list({a.id: a for a in [acc, *candidates]}.values())
    if profile is None or any(a.id not in known for a in allowed):
        return acc, candidates, False, ""
    offering = set(cat.mig_gpus(profile))
    keep = [a for a in allowed if a.id in offering]
    if not keep:
        names = ", ".join(a.id for a in allowed)
        where = ", ".join(sorted(offering)) if offering else "no GPU in kvlint's catalogue"
        one = allowed[0].id if len(allowed) == 1 else None
        lack = (
            cat.mig_profile(one, profile)[1]
            if one
            else f"none of the GPUs it may land on ({names}) offers MIG {profile}"
        )
        return None, [], True, f"resource {resource}: {lack}; MIG {profile} exists on {where}"
    if len(keep) == len(allowed):
        return acc, candidates, False, ""
    best = min(keep, key=lambda a: a.memory_bytes)
    dropped = ", ".join(a.id for a in allowed if a.id not in offering)
    verb = "offers" if len(keep) == 1 else "offer"
    chose = f"chose {best.id}" + (", the smallest memory of them (conservative)" if len(keep) > 1 else "")
    note = (
        f"resource {resource}: of the GPUs allowed, only {', '.join(a.id for a in keep)} {verb} MIG {profile} "
        f"({dropped}: no): {chose}"
    )
    return best, sorted(keep, key=lambda a: a.memory_bytes) if len(keep) > 1 else [], False, note


def _finish(
    decision: _Decision | None,
    notes: list[str],
    *,
    resource: str | None,
    gpus: int | None,
    gpus_loc: Loc | None,
    gslice: GpuSlice | None,
    partition: str | None,
    sharing: tuple[bool, int | None, str, str | None],
    why_undecided: Callable[[], list[str]],
    amd_partition: str | None = None,
    undecided_why: str | None,
    default: str | None,
    gpu_memory_bytes: int | None,
    require: Callable[[str, str], Accelerator],
    gpus_elsewhere: str | None,
    conflict: AnnotationConflict | None,
) -> Placement:
    """The rest of :func:`resolve_placement` once the labels, annotation and operator fields decided (or not):
    the MIG resource, default, ``--gpu-memory`` and HAMi fallbacks, MIG slice and sharing notes. Reads the
    scheduling labels only through ``partition`` (:func:`_partition`), ``sharing`` (:func:`_sharing`) and
    ``why_undecided`` (:func:`_why_undecided`), so :func:`placement_on_node` can pass a node's, read once.
    Never mutates ``decision``."""
    if decision is None and resource and resource.startswith(MIG_RESOURCE_PREFIX):
        profile = cat.mig_profile_name(resource[len(MIG_RESOURCE_PREFIX) :])
        if profile:
            ids = cat.mig_gpus(profile)
            profs = {cat.mig_profile(i, profile)[0] for i in ids}
            if ids and len(profs) == 1:
                accs = [cat.catalogue()[i] for i in ids]
                best = min(accs, key=lambda a: a.memory_bytes)
                decision = _Decision(
                    best,
                    f"resource {resource} (MIG profile {profile} exists on {', '.join(ids)} only)",
                    gpus_loc,
                )
    if decision is None and default:
        decision = _Decision(
            require(default, "default accelerator"), f"config default accelerator {default}", None
        )
    if (decision is None or decision.acc is None) and gpu_memory_bytes:
        from kvlint.accelerators.site import generic_gpu

        decision = _Decision(
            generic_gpu(int(gpu_memory_bytes)),
            "--gpu-memory without --accelerator: a generic CUDA GPU of that size (compute capability unknown, "
            "bf16 assumed, no fp8 assumed)",
            None,
        )
    if (decision is None or decision.acc is None) and not gpu_memory_bytes and gslice and gslice.mib:
        from kvlint.accelerators.site import generic_gpu

        decision = _Decision(
            generic_gpu(gslice.mib * cat.MIB, how=f"HAMi {gslice.key}"),
            f"HAMi {gslice.key} without a known GPU model: a generic CUDA GPU of the slice's size (the memory "
            "plan holds; compute capability unknown, bf16 assumed, no fp8 assumed)",
            gslice.loc,
        )
    if decision is None:
        why = why_undecided()
        if undecided_why:
            why.insert(0, undecided_why)
        if (
            resource
            and resource not in (NVIDIA_GPU, NVIDIA_GPU_SHARED)
            and not resource.startswith(MIG_RESOURCE_PREFIX)
        ):
            why.append(f"resource {resource} names the vendor, not the accelerator model")
        decision = _Decision(None, UNDECIDED, None, why, undecided=True)

    acc = decision.acc
    mig_bytes = decision.mig_bytes
    mig_profile = decision.mig_profile
    slices = decision.mig_profile or decision.mig_unknown  # Placement.mig_slices
    notes = decision.notes + notes
    undecided = decision.undecided
    candidates = list(decision.candidates) if acc is not None else []
    mig_unoffered = False
    if mig_bytes is None and acc is not None and resource and resource.startswith(MIG_RESOURCE_PREFIX):
        chosen = acc
        acc, candidates, mig_unoffered, offer_note = _mig_offering(acc, candidates, resource)
        if acc is not chosen:
            # the labels' worst case was not the GPU planned: their "chose <it>" note no longer says what was
            # decided (the offer note does)
            notes = [
                n
                for n in notes
                if f"chose {chosen.id}" not in n and f"chose the smallest, {chosen.id}" not in n
            ]
        if offer_note:
            notes.append(offer_note)
    # MIG from GKE's partition label or a mixed-strategy resource (when a label did not already say).
    if mig_bytes is None and not mig_unoffered:
        profile = (cat.mig_profile_name(partition) or partition) if partition else None
        if profile is None and resource and resource.startswith(MIG_RESOURCE_PREFIX):
            profile = cat.mig_profile_name(resource[len(MIG_RESOURCE_PREFIX) :])
        profile = profile or decision.mig_unknown
        if profile:
            slices = slices or profile
            prof, note = cat.mig_profile(acc.id if acc else None, profile)
            labelled = dict(decision.mixed_memory).get(profile) if acc is not None else None
            by_label = False
            if labelled and acc is not None:
                # GFD's mixed-strategy memory label of this very profile: NVML's figure, checked as the single
                # strategy's memory label is (_mig_memory: not above the board, the smaller of it and a measured row)
                got, said = _mig_memory(acc, profile, {GFD_MEMORY: list(labelled)})
                if got:
                    mig_bytes, mig_profile, by_label = got, profile, True
                    notes.append(said.replace(GFD_MEMORY, f"{MIG_RESOURCE_PREFIX}{profile}.memory"))
            if by_label:
                pass  # sized by the label
            elif prof is not None:
                mig_bytes = prof.memory_bytes
                mig_profile = profile
                notes.append(
                    f"MIG {profile}: {prof.memory_bytes // cat.MIB} MiB per slice ({prof.provenance})"
                )
            if note and not by_label:
                notes.append(note)
            if (
                prof is None
                and not by_label
                and acc is not None
                and acc.vendor == "nvidia"
                and not gpu_memory_bytes
            ):
                # a MIG slice of a profile no MIG table of the catalogue holds (nvidia.com/mig-1g.11gb on an
                # H100): the engine sees the slice, not the board, and the slice's memory is unknown (its name's
                # figure is not it: 1g.12gb is 10.75 GiB on an H100 NVL, under 12 GB). Sized on the whole GPU it
                # was planned on up to seven times the memory it has (break52): not sized instead
                notes.append(
                    f"{acc.id}'s MIG {profile[:40]} slice has memory kvlint does not know, a part of the whole "
                    f"GPU's {acc.memory_bytes / cat.GIB:.0f} GiB: not sized on the whole GPU"
                )
                acc, undecided = None, True
    # an AMD GPU split into compute partitions: amd.com/gpu is one partition on a node the partition label selects
    # (the device plugin's single naming); under its mixed naming the resource names the partition itself
    # (amd.com/cpx_nps4), whatever the labels say
    named = amd_partition_of(resource)
    part_label: str | None = None
    if named is not None:
        amd_partition = named
    elif amd_partition and "=" in amd_partition:
        part_label = amd_partition
        amd_partition = amd_partition.split("=", 1)[1]
    device_share = decision.share if decision.mig_bytes else None
    part_mode: str | None = None
    if amd_partition and (resource == AMD_GPU or named is not None) and (acc is None or acc.vendor == "amd"):
        part_mode = amd_partition.strip().lower()
        if not re.fullmatch(r"[a-z]px_nps\d{1,3}", part_mode) or part_mode.startswith("spx"):
            part_mode = None
    if mig_bytes is None and part_mode and acc is not None:
        mig_bytes, note = _amd_partition_bytes(
            acc, part_mode, resource if named is not None else None, label=part_label
        )
        if note:
            notes.append(note)
        if mig_bytes:
            device_share = f"{part_mode.split('_', 1)[0].upper()} partition"
    shared, sharers, share_note, strategy = sharing
    shared = shared or decision.shared or resource == NVIDIA_GPU_SHARED
    if share_note:
        notes.append(share_note)
    if resource == NVIDIA_GPU_SHARED:
        notes.append("resource nvidia.com/gpu.shared: time-sliced/MPS replica")
    override_bytes = mig_bytes
    mps_limit: int | None = None
    on_mig = bool(mig_profile) or bool(resource and resource.startswith(MIG_RESOURCE_PREFIX))
    if strategy == "mps" and sharers and acc is not None and acc.vendor == "nvidia" and on_mig:
        # NVIDIA's device plugin does not share a MIG device through MPS: no MPS daemon, so no client cap
        notes.append(MPS_ON_MIG_NOTE)
    elif (
        strategy == "mps" and sharers and acc is not None and acc.vendor == "nvidia" and not gpu_memory_bytes
    ):
        # the cap is on what the client may allocate, not on the device total the engine reads: KV106 holds the
        # engine's claim to it (the plan stays on the device's total, which the engine prints)
        mps_limit, mps_note = _mps_cap(acc, sharers, mig_bytes, label_share=bool(decision.share))
        notes.append(mps_note)
    if gslice is not None and not mig_bytes:
        # the slice itself applies in Placement.memory_bytes (on this accelerator, or any it is replaced by)
        note = _slice_note(gslice, acc)
        if note:
            notes.append(note)
    if gpu_memory_bytes:
        override_bytes = int(gpu_memory_bytes)
        notes.append(f"memory from --gpu-memory ({gpu_memory_bytes / cat.GIB:.2f} GiB)")
    how = decision.how
    notes = [n for n in dict.fromkeys(notes) if n]
    if notes:
        how = f"{how} ({'; '.join(notes)})"
    return Placement(
        accelerator=acc,
        how=how,
        loc=decision.loc,
        gpus=gpus,
        gpus_loc=gpus_loc,
        resource=resource,
        shared=shared,
        max_sharers=sharers,
        sharing_strategy=strategy,
        memory_bytes_override=override_bytes,
        candidates=tuple(candidates) if acc is not None else (),
        gpu_slice=gslice if not mig_bytes else None,
        gpus_elsewhere=gpus_elsewhere,
        annotation_conflict=conflict,
        undecided=tuple(notes) if acc is None and (undecided or mig_unoffered) else (),
        mig_unoffered=mig_unoffered,
        # the slice's name only while its memory is the plan's (--gpu-memory replaces it)
        mig_profile=mig_profile if mig_bytes and not gpu_memory_bytes else None,
        # the device is a slice whatever its memory is taken for (KV403 counts slices under --gpu-memory too)
        mig_slices=slices[:40] if slices else None,
        amd_partition=part_mode if acc is None or acc.vendor == "amd" else None,
        amd_partition_label=part_label if part_mode and (acc is None or acc.vendor == "amd") else None,
        device_share=device_share if override_bytes and not gpu_memory_bytes and not mig_profile else None,
        assumed=decision.assumed if acc is not None else None,
        mps_limit_bytes=mps_limit,
    )


#: Where the MPS memory cap comes from: NVIDIA's device plugin starts one MPS control daemon per shared resource and
#: gives each device ``set_default_device_pinned_mem_limit <index> <total / replicas>M``, the device's NVML total in
#: bytes divided by the replicas advertised for it, then by 2^20, rounded down (``perDevicePinnedDeviceMemoryLimits``;
#: also ``set_default_active_thread_percentage 100 / replicas``), and every MPS client of that daemon inherits it as its
#: ``CUDA_MPS_PINNED_DEVICE_MEM_LIMIT``. GKE's MPS (``gke-gpu-sharing-strategy: mps``, ``max-shared-clients-per-gpu``)
#: is read the same way **[assumed]**: its docs say the clients count sets each container's share of the GPU ("Share
#: GPUs with multiple workloads using NVIDIA MPS"); its memory default was not found in its device plugin's source
MPS_LIMIT_SRC = (
    "github:NVIDIA/k8s-device-plugin/cmd/mps-control-daemon/mps/daemon.go@05d317d5f6fe253deffe3386395daae1ab6a3e9f "
    "Daemon.perDevicePinnedDeviceMemoryLimits; https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus"
)


#: The placement note for MPS sharing asked on a MIG device: NVIDIA's device plugin refuses it
#: (NVIDIA/k8s-device-plugin ``internal/plugin/mps.go``, ``getMPSOptions``: "sharing using MPS is not supported for MIG
#: devices", returned when any device of the resource is a MIG device, so that resource's plugin fails to start), so
#: no MPS daemon caps a client of the slice (:func:`_mps_cap` is not applied).
MPS_ON_MIG_NOTE = (
    "MPS sharing on a MIG device: NVIDIA's device plugin refuses it ('sharing using MPS is not supported for MIG "
    "devices') and does not serve the resource, so no MPS memory cap applies to the slice"
)


def _mps_cap(
    acc: Accelerator, replicas: int, part_bytes: int | None, *, label_share: bool = False
) -> tuple[int | None, str]:
    """(bytes of device memory one MPS client of ``acc`` may allocate, a note), or (None, "") when the replicas do not
    split it (fewer than 2). ``part_bytes`` is the memory the device is already sized on (a MIG slice, NVML's
    ``memorySizeMB``, or, with ``label_share``, a vGPU or GFD-label device sized as its NVML figure less the driver's
    reserve), else the board's catalogue figure.

    NVIDIA's device plugin under ``sharing.mps`` caps each client at ``floor(NVML total bytes / replicas / 2^20)``
    MiB of every device (:data:`MPS_LIMIT_SRC`); time-slicing caps nothing. The cap limits what the client may
    allocate; the client still reads the whole device as its total (https://github.com/NVIDIA/k8s-device-plugin/
    issues/764: under the plugin's ``set_default_device_pinned_mem_limit 0 4606M`` a client's torch device properties
    give the L40S's whole memory) and ``cudaMemGetInfo`` the cap, less what it holds, as free (a public MPS
    walkthrough's T4 measured ``CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1G``: total 14,930 MB, free 1,000 MB)
    **[assumed]** for every driver. So vLLM, claiming a fraction of the whole device, fails above the cap (KV106;
    TGI and SGLang size from the free memory), and the plan stays on the device's total, the figure the engine
    prints."""
    if replicas < 2:
        return None, ""
    if part_bytes:
        nvml_mib = part_bytes // cat.MIB + (cat.driver_reserve_mib() if label_share else 0)
        cuda_bytes = part_bytes
    else:
        nvml_mib = cat.nvml_total_mib(acc)
        cuda_bytes = acc.memory_bytes
    limit_mib = nvml_mib // replicas
    capped = min(limit_mib * cat.MIB, cuda_bytes)
    return capped, (
        f"MPS with {replicas} replicas per GPU: the device plugin's MPS daemon caps each client's device memory at "
        f"{nvml_mib:,} MiB / {replicas} = {limit_mib:,} MiB (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, "
        "set_default_device_pinned_mem_limit), while the engine still reads the whole GPU as its total: its memory "
        "fraction of the GPU must fit that cap (KV106); time-slicing would cap nothing"
    )


@dataclass(frozen=True)
class NodeFacts:
    """What :func:`resolve_placement` reads from one node's labels when the pod's only scheduling fact is that
    node's label set (``--cluster``: :func:`kvlint.cluster.placement_from_cluster`), read once per node by
    :func:`node_facts`; :func:`placement_on_node` adds the container's part. Shared across reviews: never
    mutated."""

    decision: _Decision | None
    partition: str | None
    sharing: tuple[bool, int | None, str, str | None]
    why: tuple[str, ...]
    amd_partition: str | None = None


def node_facts(labels: Mapping[str, str]) -> NodeFacts:
    """The label-only part of ``resolve_placement({"nodeSelector": labels}, container, {})``: the GPU the labels
    name (GFD, GKE, Karpenter, AKS, AMD, instance types; MIG and sharing labels), the MIG partition label, the
    sharing labels and, when no GPU is named, why. No container, annotation, site table or default is read."""
    ns_labels, ns = _node_selector_labels({"nodeSelector": dict(labels)})
    decision = _from_scheduling(ns_labels, ns, [], None) if ns_labels else None
    label_sets = [ns_labels]
    return NodeFacts(
        decision,
        _partition(label_sets),
        _sharing(label_sets),
        tuple(_why_undecided(label_sets, pod=False)) if decision is None else (),
        _amd_partition(label_sets),
    )


def placement_on_node(facts: NodeFacts, container: Mapping[str, Any]) -> Placement:
    """``resolve_placement({"nodeSelector": labels}, container, {})`` for the node whose labels gave ``facts``
    (:func:`node_facts`): the same :class:`~kvlint.types.Placement`, with only the container read here."""
    container = container if isinstance(container, Mapping) else {}
    resource, gpus, gpus_loc = _gpu_resource(container)
    gslice = hami_slice(container) if resource in (None, HAMI_COUNT) else None
    return _finish(
        facts.decision,
        [],
        resource=resource,
        gpus=gpus,
        gpus_loc=gpus_loc,
        gslice=gslice,
        partition=facts.partition,
        sharing=facts.sharing,
        why_undecided=lambda: list(facts.why),
        amd_partition=facts.amd_partition,
        undecided_why=None,
        default=None,
        gpu_memory_bytes=None,
        require=cat.require,
        gpus_elsewhere=dra_claims({}, container) if resource is None else None,
        conflict=None,
    )


def _own_decision(
    pod_spec: Mapping[str, Any],
    pod: _PodScheduling,
    derived: DerivedAccelerator | None,
    node_class: DerivedAccelerator | None,
    site: Site | None,
    lookup: Callable[[str], Accelerator | None],
) -> _Decision | None:
    """The GPU the pod's own facts decide, without the user's ``kvlint.io/accelerator``, in the order
    :func:`resolve_placement` reads them: the operator object's fields (``derived``), a ``nodeName`` of the
    site's table, the ``nodeSelector`` and required node affinity (``pod``, :func:`_pod_scheduling`), the node
    class the pod selects; None when none names one."""
    if derived is not None:
        acc = lookup(derived.accelerator)
        if acc is not None:
            return _Decision(acc, derived.source, derived.loc)
    node_name = pod_spec.get("nodeName")
    if site is not None and isinstance(node_name, str) and node_name in site.node_names:
        ref = site.node_names[node_name]
        return _Decision(
            lookup(ref),
            f"nodeName {node_name} ({site.source} accelerators.node_names: {ref})",
            loc_of(pod_spec, "nodeName"),
        )
    if pod.ns_labels or pod.terms:
        decision = pod.decision(site)
        if decision is not None:
            return decision
    if node_class is not None:
        acc = lookup(node_class.accelerator)
        if acc is not None:
            others = [a for ref in node_class.candidates if (a := lookup(ref)) is not None]
            return _Decision(
                acc, node_class.source, node_class.loc, candidates=others if len(others) > 1 else []
            )
    return None


# --------------------------------------------------------------------------------------------------
# how many GPUs a node the pod may land on has (KV410)

#: GFD's GPU-count label: "Number of GPUs" of the node (NVIDIA k8s-device-plugin
#: ``docs/gpu-feature-discovery/README.md``, label table).
GFD_COUNT = "nvidia.com/gpu.count"
#: Karpenter's GPU count of the instance type ("GPUs on the instance"; 0 on the fractional-GPU g6f/gr6f types, read
#: as no count) and EKS Auto Mode's twin of it.
KARPENTER_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
EKS_GPU_COUNT = "eks.amazonaws.com/instance-gpu-count"
GFD_SOURCE = "github:NVIDIA/k8s-device-plugin/docs/gpu-feature-discovery/README.md@1b826acc6af3079d8923bac395c3124b8861a9a6"
KARPENTER_LABELS_SOURCE = (
    "github:aws/karpenter-provider-aws/website/content/en/docs/reference/instance-types.md"
    "@1d927085dd81a9df9301e613f371dac5b4d16bfe"
)
EKS_LABELS_SOURCE = (
    "https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html (EKS Auto Mode supported labels)"
)
#: GKE's GPU-count node selector: "the total number of GPUs available to attach to the node" (GKE docs, "Deploy GPU
#: workloads in Autopilot", GPU_COUNT of ``cloud.google.com/gke-accelerator-count``: "Must be greater than or equal to
#: GPU_QUANTITY", the container's ``nvidia.com/gpu``)
GKE_GPU_COUNT = "cloud.google.com/gke-accelerator-count"
GKE_COUNT_SOURCE = (
    "https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus (Request GPUs in your containers)"
)
_COUNT_SOURCES = {
    KARPENTER_GPU_COUNT: KARPENTER_LABELS_SOURCE,
    EKS_GPU_COUNT: EKS_LABELS_SOURCE,
    GKE_GPU_COUNT: GKE_COUNT_SOURCE,
}


@dataclass(frozen=True)
class NodeGpus:
    """The most GPUs a node the pod's required scheduling allows can have (:func:`node_gpu_capacity`).

    Attributes:
        gpus: that count: the largest over every instance type (or count) the constraints allow.
        what: the constraint in words (``nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge: 8 x NVIDIA
            A100-SXM4-40GB``), for messages.
        loc: where the deciding value is written.
        source: where the count comes from (the instance-type table's row, GFD's or Karpenter's label docs).
        accelerator: the GPU of that node when one instance type decides it, else None.
        instance_type: the instance type's name when one decides the count, else None.
        key: the label key the count is read from.
        partitions: the AMD compute partitions of each GPU when ``gpus`` counts them (:func:`node_partition_capacity`),
            else 1.
    """

    gpus: int
    what: str
    loc: Loc | None
    source: str
    accelerator: Accelerator | None = None
    instance_type: str | None = None
    key: str = ""
    partitions: int = 1


def _count_of(key: str, value: str, loc: Loc | None) -> NodeGpus | None:
    """What one label value pins: the node's GPUs, or None when it pins no known count (an instance type not in the
    catalogue or without a GPU count; a count that is not a whole number). ``what`` is the value in words."""
    if key in (INSTANCE_TYPE, INSTANCE_TYPE_BETA):
        it = cat.instance_type(value)
        if it is not None and it.gpus == 0 and it.accelerator is not None and it.slice_memory_mib:
            # EC2's fractional g6f/gr6f (Karpenter's GPU count 0): the node's one GPU is a vGPU share of an L4
            # (_fractional_gpu_mib), which the device plugin offers as one nvidia.com/gpu
            share = f"{key}={it.name} (a share of 1 {it.accelerator.name})"
            return NodeGpus(1, share, loc, it.source, it.accelerator, it.name, key)
        if it is None or not isinstance(it.gpus, int) or it.gpus < 1:
            return None
        gpu = it.accelerator.name if it.accelerator is not None else "GPU"
        per = f"{it.fraction} of 1 {gpu}" if it.fraction else f"{it.gpus} x {gpu}"
        return NodeGpus(it.gpus, f"{key}={it.name} ({per})", loc, it.source, it.accelerator, it.name, key)
    n = _as_int(value)
    if n is None or n < 1:
        # 0: Karpenter's count on a fractional-GPU instance type, whose node still offers its GPU slice
        return None
    return NodeGpus(n, f"{key}={n}", loc, _COUNT_SOURCES.get(key, GFD_SOURCE), key=key)


_COUNT_KEYS = (
    INSTANCE_TYPE,
    INSTANCE_TYPE_BETA,
    GFD_COUNT,
    KARPENTER_GPU_COUNT,
    EKS_GPU_COUNT,
    GKE_GPU_COUNT,
)


def _term_capacity(exprs: list[_Expr]) -> NodeGpus | None:
    """The most GPUs a node matching one required node-affinity term can have, or None when the term leaves the
    count open (no ``In`` on an instance-type or GPU-count key with every value's count known, nor ``Lt`` on a
    GPU-count key). Several bounding expressions in one term AND: the smallest bound holds."""
    best: NodeGpus | None = None
    for e in exprs:
        if e.key not in _COUNT_KEYS:
            continue
        bound: NodeGpus | None = None
        if e.op == "In":
            counts = [_count_of(e.key, v, loc) for v, loc in e.values]
            known = [c for c in counts if c is not None]
            if known and len(known) == len(counts):
                top = max(known, key=lambda c: c.gpus)
                one = len({(c.gpus, c.instance_type) for c in known}) == 1
                bound = replace(
                    top,
                    what=f"nodeAffinity {e.text}" + ("" if one else f": at most {top.what}"),
                    accelerator=top.accelerator if one else None,
                    instance_type=top.instance_type if one else None,
                )
                if one:
                    bound = replace(bound, what=f"nodeAffinity {top.what}")
        elif e.op == "Lt" and e.key not in (INSTANCE_TYPE, INSTANCE_TYPE_BETA) and e.values:
            limit = _as_int(e.values[0][0])
            if limit is not None and limit >= 2:
                src = _COUNT_SOURCES.get(e.key, GFD_SOURCE)
                bound = NodeGpus(limit - 1, f"nodeAffinity {e.text}", e.values[0][1], src, key=e.key)
        if bound is not None and (best is None or bound.gpus < best.gpus):
            best = bound
    return best


#: GFD's MIG-strategy label: ``single`` overloads ``nvidia.com/gpu`` (and ``nvidia.com/gpu.count``) with the node's MIG
#: devices, ``mixed`` names them ``nvidia.com/mig-<profile>`` (:data:`GFD_SOURCE`, "MIG 'single' strategy").
GFD_MIG_STRATEGY = "nvidia.com/mig.strategy"
#: The AMD node labeller's partition label (``spx_nps1``, ``cpx_nps4``...): a compute mode other than ``spx`` splits each
#: GPU (``dpx`` in 2 ... ``cpx`` in 8), and the device plugin's default ``single`` naming offers every partition as
#: ``amd.com/gpu`` ("A node which has 8 GPUs where all GPUs are partitioned using CPX-NPS4 style will report
#: amd.com/gpu: 64": github:ROCm/k8s-device-plugin/docs/user-guide/configuration.md@af51ed1db60839d47c59027e896ac106f8b813a7).
AMD_PARTITION = "amd.com/compute-memory-partition"
#: The same label as ROCm/k8s-device-plugin's own node labeller writes it since its partition labels came in
#: (``createLabelPrefix("compute-memory-partition", false)`` = ``amd.com/gpu.<name>``,
#: github:ROCm/k8s-device-plugin/cmd/k8s-node-labeller/main.go@ed764684; its test's expected keys list
#: ``amd.com/gpu.compute-memory-partition``); the GPU Operator's labeller and the plugin's documentation spell it
#: :data:`AMD_PARTITION`. Either key's value is the node's mode (``cpx_nps4``)
AMD_PARTITION_GPU = "amd.com/gpu.compute-memory-partition"
AMD_PARTITION_KEYS = (AMD_PARTITION, AMD_PARTITION_GPU)


def _selects_mig_devices(pod_spec: Mapping[str, Any], *, amd: bool = True) -> bool:
    """Whether the pod's required scheduling selects nodes whose ``nvidia.com/gpu`` are MIG devices (GFD's
    ``nvidia.com/mig.strategy=single`` or that strategy's product ``...-MIG-<profile>``, GKE's
    ``cloud.google.com/gke-gpu-partition-size``) or, with ``amd``, whose ``amd.com/gpu`` are partitions
    (:data:`AMD_PARTITION` other than ``spx_...``): a node then offers up to seven (eight) per GPU, so its GPU count
    does not bound the request."""
    ns_labels, _ns = _node_selector_labels(pod_spec)
    values: list[tuple[str, str]] = [(k, v) for k, vs in ns_labels.items() for v, _ in vs]
    for term in _affinity_terms(pod_spec):
        values.extend((e.key, v) for e in term if e.op == "In" for v, _ in e.values)
    return any(
        k == GKE_PARTITION
        or (k == GFD_PRODUCT and cat._mig_suffix(v) is not None)
        or (k == GFD_MIG_STRATEGY and v.strip().lower() == "single")
        or (amd and k in AMD_PARTITION_KEYS and not v.strip().lower().startswith("spx"))
        for k, v in values
    )


@_per_pod_spec
def node_gpu_capacity(pod_spec: Mapping[str, Any]) -> NodeGpus | None:
    """The most GPUs any node the pod's required scheduling allows can have, or None when it does not bound them.

    Read from the ``nodeSelector`` (an instance type of the catalogue with its GPU count, GFD's
    ``nvidia.com/gpu.count``, Karpenter's ``karpenter.k8s.aws/instance-gpu-count``) and from required node
    affinity: the terms OR, so the count is bounded only when every term bounds it, by the largest of their
    bounds; the nodeSelector ANDs with them, so the smaller of the two holds. A node never offers more
    ``nvidia.com/gpu`` than it has GPUs unless the device plugin shares them (time-slicing/MPS replicas; the
    caller checks that): the scheduler's NodeResourcesFit filter then leaves the pod Pending."""
    if _selects_mig_devices(pod_spec):
        return None
    return _whole_gpu_bound(pod_spec)


def _whole_gpu_bound(pod_spec: Mapping[str, Any]) -> NodeGpus | None:
    """:func:`node_gpu_capacity`'s bound, whatever the MIG and partition labels say."""
    bounds: list[NodeGpus] = []
    ns = pod_spec.get("nodeSelector")
    if isinstance(ns, Mapping):
        for key in _COUNT_KEYS:
            v = ns.get(key)
            if v is None or isinstance(v, (Mapping, list)):
                continue
            got = _count_of(key, str(v), loc_of(ns, key))
            if got is not None:
                bounds.append(replace(got, what=f"nodeSelector {got.what}"))
    terms = _affinity_terms(pod_spec)
    if terms:
        per_term = [_term_capacity(t) for t in terms]
        known = [b for b in per_term if b is not None]
        if known and len(known) == len(per_term):
            bounds.append(max(known, key=lambda b: b.gpus))
    if not bounds:
        return None
    return min(bounds, key=lambda b: b.gpus)


def node_partition_capacity(
    pod_spec: Mapping[str, Any], resource: str | None, acc: Accelerator | None
) -> NodeGpus | None:
    """The most AMD compute partitions a node the pod may land on offers as ``resource``, or None when kvlint cannot
    bound them: the node's GPUs (:func:`node_gpu_capacity`'s bound) times the partitions the mode splits each GPU
    into (:data:`AMD_PARTITIONS`, on the boards whose counts AMD documents). The mode is the one the ``mixed``-naming
    resource names (``amd.com/cpx_nps4``: every node offering it is split so), or for ``amd.com/gpu`` (the default
    ``single`` naming) the ``nodeSelector``'s :data:`AMD_PARTITION` (a value in one affinity term only leaves the
    other terms' whole GPUs open: not bounded). "A node which has 8 GPUs where all GPUs are partitioned using
    CPX-NPS4 style will report amd.com/gpu: 64" (github:ROCm/k8s-device-plugin/docs/user-guide/configuration.md
    @af51ed1db60839d47c59027e896ac106f8b813a7). The board is the instance type's, else ``acc`` (the placement's)."""
    mode = amd_partition_of(resource)
    if mode is None and resource == AMD_GPU:
        ns = pod_spec.get("nodeSelector")
        vals = [ns.get(k) for k in AMD_PARTITION_KEYS] if isinstance(ns, Mapping) else []
        v = next((x for x in vals if isinstance(x, str) and x.strip()), None)
        mode = v.strip().lower() if v is not None else None
    if mode is None or _selects_mig_devices(pod_spec, amd=False):
        return None
    bound = _whole_gpu_bound(pod_spec)
    if bound is None:
        return None
    kind = mode.split("_", 1)[0]
    board = bound.accelerator or acc
    n = AMD_PARTITIONS.get(kind) if board is not None and board.id in AMD_PARTITIONED_BOARDS else None
    if kind == "spx":
        n = 1
    if n is None:
        return None
    if n == 1:
        return bound
    assert board is not None
    return replace(
        bound,
        gpus=bound.gpus * n,
        what=f"{bound.what}, each {board.id} split into {n} {kind.upper()} partitions",
        accelerator=board,
        partitions=n,
        source=f"{bound.source} ; {AMD_PARTITIONS_SRC}",
    )
