"""GPU-sharing device plugins: the extended resources they advertise, and the memory slice HAMi gives a container.

HAMi (Project-HAMi/HAMi, with HAMi-core ``libvgpu.so``) splits an NVIDIA GPU into vGPUs. A container asks for
``nvidia.com/gpu: N`` vGPUs and, per vGPU, ``nvidia.com/gpumem`` (MiB) or ``nvidia.com/gpumem-percentage``
(percent of the card), plus ``nvidia.com/gpucores`` (percent of the SMs) and ``nvidia.com/priority``: the
defaults of HAMi's chart (``charts/hami/values.yaml`` ``resourceMem``, ``resourceMemPercentage``,
``resourceCores``, ``resourcePriority``, Project-HAMi/HAMi@4707fb02; the names are configurable in the
device config's ``resourceMemoryName`` etc.).

What HAMi makes of them, read in Project-HAMi/HAMi@4707fb02 ``pkg/device/nvidia/device.go``:

* ``GenerateResourceRequests``: the count, then ``gpumem`` and ``gpumem-percentage`` from ``limits``, else
  ``requests``. ``gpumem`` must be a whole number (``Quantity.AsInt64``: ``16k`` is 16000, ``1Ki`` 1024; the API
  server writes ``16000`` as ``16k``) within int32 ("nvidia memory request is not a plain integer within the
  int32 range; rejecting"), times ``memoryFactor`` (1 in the chart). A
  percentage above 100 is clamped to 100 (from v2.10.0, commit 430b458c; before, the request asked for more than
  any card and never fitted), 0 or below is ignored. Neither set (or ``gpumem: 0``): ``defaultMemory``
  (``0`` in the chart's ``device-config.yaml``, which means 100 percent: the whole card).
* ``Fit``: ``memreq = Memreq`` when ``gpumem`` is set, else ``Totalmem * MemPercentagereq / 100`` (integer MiB,
  rounded down; ``Totalmem`` is the card's NVML total in MiB, rounded down, times ``deviceMemoryScaling``, 1 in
  the chart: ``pkg/device-plugin/nvidiadevice/nvinternal/plugin/register.go``); a card with less free memory
  than ``memreq`` is skipped (``CardInsufficientMemory``), so a slice larger than the card never schedules.
* ``mutateContainerResource`` (the admission webhook): ``gpumem``/``gpumem-percentage``/``gpucores`` in
  ``limits`` without ``nvidia.com/gpu`` get ``nvidia.com/gpu: defaultGPUNum`` added (1 in the chart).

The device plugin passes the slice as ``CUDA_DEVICE_MEMORY_LIMIT_<i>=<memreq>m``
(``pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go`` ``Allocate``), and HAMi-core
(Project-HAMi/HAMi-core@8f3a89c6) answers ``cuMemGetInfo_v2`` with ``total = min(limit, physical total)``
(``src/cuda/memory.c``) and ``nvmlDeviceGetMemoryInfo`` with ``total = limit`` (``src/nvml/hook.c``): the engine
sees the slice as the device's total memory, so vLLM's ``gpu_memory_utilization x total``, SGLang's
``mem_fraction_static`` and TGI's ``cuda_memory_fraction`` apply to the slice. ``gpucores`` limits SM time
(``CUDA_DEVICE_SM_LIMIT``), not memory.

Volcano's vGPU (volcano-sh/volcano ``pkg/scheduler/api/devices/config/vgpu.go``: ``volcano.sh/vgpu-number``,
``vgpu-memory``, ``vgpu-memory-percentage``, ``vgpu-cores``) reuses HAMi's device config and HAMi-core; Alibaba's
gpushare (AliyunContainerService/gpushare-device-plugin ``pkg/gpu/nvidia/const.go``: ``aliyun.com/gpu-mem``,
``aliyun.com/gpu-count``) schedules by memory but does not isolate it (the engine sees the whole card). Their names
are advertised resources (KV409 accepts them); kvlint sizes only HAMi's ``nvidia.com/`` slice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kvlint.gpu_resources import NVIDIA_GPU
from kvlint.k8s_quantity import BINARY_SUFFIX_BITS, DECIMAL_SUFFIX_EXPONENTS, K8S_QUANTITY
from kvlint.source import Loc, loc_of

HAMI_MEMORY = "nvidia.com/gpumem"
HAMI_MEMORY_PERCENTAGE = "nvidia.com/gpumem-percentage"
HAMI_CORES = "nvidia.com/gpucores"
HAMI_PRIORITY = "nvidia.com/priority"
HAMI_COUNT = NVIDIA_GPU

#: Extended resources GPU-sharing device plugins advertise besides a GPU count kvlint reads: HAMi's (chart
#: defaults), Volcano vGPU's and Alibaba gpushare's (sources in the module docstring).
SHARING_RESOURCES = frozenset(
    {
        HAMI_MEMORY,
        HAMI_MEMORY_PERCENTAGE,
        HAMI_CORES,
        HAMI_PRIORITY,
        "volcano.sh/vgpu-number",
        "volcano.sh/vgpu-memory",
        "volcano.sh/vgpu-memory-percentage",
        "volcano.sh/vgpu-cores",
        "aliyun.com/gpu-mem",
        "aliyun.com/gpu-count",
    }
)

#: HAMi's int32 bound on ``gpumem`` (``math.MaxInt32`` with ``memoryFactor`` 1)
_INT32_MAX = 2**31 - 1
_MIB = 1024 * 1024


@dataclass(frozen=True)
class GpuSlice:
    """The memory slice per vGPU a HAMi container asks for, as HAMi's ``GenerateResourceRequests`` reads it.

    Attributes:
        mib: ``nvidia.com/gpumem`` in MiB per vGPU (> 0), or None.
        percent: ``nvidia.com/gpumem-percentage`` after HAMi's clamp (1-100), used only when ``mib`` is None.
        key: the resource that sets the slice; ``loc`` its position.
        count_missing: the container has no ``nvidia.com/gpu``: HAMi's webhook adds ``defaultGPUNum`` (1).
        issues: ``(severity, message)`` for quantities HAMi rejects, clamps or ignores.
    """

    mib: int | None
    percent: int | None
    key: str
    loc: Loc | None
    count_missing: bool = False
    issues: tuple[tuple[str, str], ...] = ()

    def total_bytes(self, card_bytes: int | None) -> int | None:
        """Device total the engine sees per vGPU, in bytes: ``gpumem`` MiB, else ``floor(card MiB x percent /
        100)`` MiB of ``card_bytes`` (HAMi ``Fit``), capped at the card (HAMi-core ``cuMemGetInfo_v2``
        reports ``min(limit, total)``); None when a percentage meets an unknown card."""
        if self.mib is not None:
            mib = self.mib
        elif self.percent is not None and card_bytes:
            mib = (card_bytes // _MIB) * self.percent // 100
        else:
            return None
        total = mib * _MIB
        return min(total, card_bytes) if card_bytes else total


def _block(container: Mapping[str, Any], section: str) -> Mapping[str, Any]:
    res = container.get("resources")
    block = res.get(section) if isinstance(res, Mapping) else None
    return block if isinstance(block, Mapping) else {}


#: The most digits of a quantity's exponent :func:`_as_int64` reads (``1e12345`` is not read: whatever its
#: number, not a whole int64, and ``0e99999999`` would cost a power of ten of that many digits)
_MAX_EXPONENT_DIGITS = 4
_INT64 = 2**63


def _cut(raw: Any) -> Any:
    """``raw`` for a message: a string cut to 40 characters."""
    return raw[:40] + "..." if isinstance(raw, str) and len(raw) > 43 else raw


def _as_int64(value: Any) -> int | None:
    """``value`` (a resource quantity as written, or a number) read as HAMi reads it: Kubernetes' ``Quantity``
    then ``AsInt64``, which answers only for a whole number within int64 (``16k`` is 16000, ``1Ki`` 1024,
    ``2e3`` 2000, ``2000m`` 2; ``0.5``, ``1500m`` and anything above int64 are not read). The API server keeps a
    quantity in its canonical form (``16000`` becomes ``16k``), which is what HAMi and kvlint's webhook see.
    None when not a quantity or not such a whole number."""
    from fractions import Fraction

    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else None
    if not isinstance(value, str) or len(value) > 64:
        return None
    m = K8S_QUANTITY.fullmatch(value.strip())
    if m is None:
        return None
    sign, number, binary, exponent, decimal = m.groups()
    if exponent is not None and len(exponent.lstrip("+-")) > _MAX_EXPONENT_DIGITS:
        return None
    amount = Fraction(number)
    if binary is not None:
        amount *= 2 ** BINARY_SUFFIX_BITS[binary]
    else:
        shift = int(exponent) if exponent is not None else DECIMAL_SUFFIX_EXPONENTS.get(decimal or "", 0)
        if amount and shift > 40:
            return None  # above int64 whatever the number
        amount *= Fraction(10) ** shift
    if amount.denominator != 1:
        return None
    n = -amount.numerator if sign == "-" else amount.numerator
    return n if -_INT64 <= n < _INT64 else None


def hami_slice(container: Mapping[str, Any]) -> GpuSlice | None:
    """The HAMi memory slice of ``container`` (its ``resources``), or None when it sets neither
    ``nvidia.com/gpumem`` nor ``nvidia.com/gpumem-percentage`` (HAMi's ``defaultMemory`` 0 then gives the
    whole card: nothing to change). Mirrors ``GenerateResourceRequests`` (module docstring): limits before
    requests, ``gpumem`` before the percentage, a percentage over 100 clamped, 0 ignored."""
    limits, requests = _block(container, "limits"), _block(container, "requests")
    found: dict[str, tuple[Any, Mapping[str, Any]]] = {}
    for key in (HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE):
        for block in (limits, requests):
            if key in block:
                found[key] = (block[key], block)
                break
    if not found:
        return None
    issues: list[tuple[str, str]] = []
    mib: int | None = None
    percent: int | None = None
    key = HAMI_MEMORY if HAMI_MEMORY in found else HAMI_MEMORY_PERCENTAGE
    loc: Loc | None = None
    if HAMI_MEMORY in found:
        raw, block = found[HAMI_MEMORY]
        n = _as_int64(raw)
        loc = loc_of(block, HAMI_MEMORY)
        if n is None or n < 0 or n > _INT32_MAX:
            issues.append(
                (
                    "error",
                    f"{HAMI_MEMORY}: {_cut(raw)!r} is "
                    + (
                        f"{n} MiB to HAMi (it reads the quantity as a number of MiB), outside int32"
                        if n is not None
                        else "not a whole number of MiB"
                    )
                    + ": HAMi's scheduler rejects the request ('nvidia memory request is not a plain integer "
                    "within the int32 range') and allocates no vGPU",
                )
            )
        elif n > 0:
            mib = n
        else:
            issues.append(
                (
                    "warning",
                    f"{HAMI_MEMORY}: 0 is read as unset: HAMi gives defaultMemory (0 in its chart: the whole card)",
                )
            )
    if HAMI_MEMORY_PERCENTAGE in found:
        raw, block = found[HAMI_MEMORY_PERCENTAGE]
        n = _as_int64(raw)
        if mib is not None:
            issues.append(
                (
                    "warning",
                    f"{HAMI_MEMORY} and {HAMI_MEMORY_PERCENTAGE} are both set: HAMi uses {HAMI_MEMORY} "
                    f"({mib} MiB) and ignores the percentage",
                )
            )
        elif n is None:
            pass  # HAMi: AsInt64 fails, the percentage is left unset
        elif n > 100:
            percent = 100
            key, loc = HAMI_MEMORY_PERCENTAGE, loc_of(block, HAMI_MEMORY_PERCENTAGE)
            issues.append(
                (
                    "warning",
                    f"{HAMI_MEMORY_PERCENTAGE}: {n} is over 100: HAMi v2.10.0 and later clamp it to 100 (the whole "
                    "card); earlier releases ask for more memory than any card has and the pod stays Pending",
                )
            )
        elif n <= 0:
            issues.append(
                (
                    "warning",
                    f"{HAMI_MEMORY_PERCENTAGE}: {n} is ignored by HAMi (not positive): it gives defaultMemory "
                    "(0 in its chart: the whole card)",
                )
            )
        else:
            percent = n
            key, loc = HAMI_MEMORY_PERCENTAGE, loc_of(block, HAMI_MEMORY_PERCENTAGE)
    count_missing = HAMI_COUNT not in limits and HAMI_COUNT not in requests
    if count_missing and any(k in limits for k in (HAMI_MEMORY, HAMI_MEMORY_PERCENTAGE, HAMI_CORES)):
        issues.append(
            (
                "warning",
                f"{key} without {HAMI_COUNT}: HAMi's admission webhook adds {HAMI_COUNT}: defaultGPUNum (1 in "
                f"its chart); without HAMi no device plugin advertises {key} and the pod stays Pending",
            )
        )
    return GpuSlice(mib, percent, key, loc, count_missing, tuple(issues))
