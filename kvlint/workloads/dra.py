"""Dynamic Resource Allocation (``resource.k8s.io``): the GPUs a ResourceClaim or ResourceClaimTemplate among the
inputs requests, so that a pod whose container takes its GPUs through ``resources.claims`` is counted as one with
``nvidia.com/gpu`` is (:func:`kvlint.accelerators.placement.resolve_placement`).

A claim's ``devices.requests`` each ask for devices of one DeviceClass (Kubernetes API ``resource.k8s.io/v1``
``DeviceRequest``, GA in 1.34: ``exactly`` holds ``deviceClassName``, ``allocationMode`` and ``count``; or
``firstAvailable``, a list of alternatives of the same fields; ``v1beta1`` and ``v1alpha3`` put those fields on the
request itself). ``allocationMode`` is ``ExactCount`` (default) with ``count`` devices (default 1), or ``All``: every
matching device of the node, a count only the node knows. The GPUs are the devices of NVIDIA's DRA driver class
:data:`GPU_DEVICE_CLASS` and of AMD's, :data:`AMD_GPU_DEVICE_CLASS` (:data:`GPU_DEVICE_CLASSES`); ``mig.nvidia.com``
(MIG slices), an AMD request whose CEL selector asks for partitions and other classes are not whole GPUs and are not
counted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kvlint.source import Loc, loc_of
from kvlint.types import Document
from kvlint.workloads.base import get_in

#: NVIDIA's DRA GPU device class (NVIDIA/k8s-dra-driver-gpu ``deviceclass-gpu.yaml``), the one NIM's operator
#: defaults to (k8s-nim-operator api/apps/v1alpha1 dra_types.go ``DRADeviceSpec.DeviceClassName``)
GPU_DEVICE_CLASS = "gpu.nvidia.com"
#: AMD's DRA GPU device class (ROCm/k8s-gpu-dra-driver ``helm-charts-k8s/templates/deviceclass.yaml``, every device of
#: the driver ``gpu.amd.com``; ``docs/driver-attributes.md``, @2622427226d5: a device is a whole GPU, attribute
#: ``type`` ``amdgpu``, or a partition of one, ``amdgpu-partition``, the latter chosen by a CEL selector on ``type``)
AMD_GPU_DEVICE_CLASS = "gpu.amd.com"
#: A CEL selector picking one of the AMD driver's auto-partition devices that split a GPU (its ``AutoPartition``
#: feature gate, beta: one device per compute / memory mode of each GPU, ``computePartition`` ``spx`` the whole GPU,
#: ``dpx`` a half, ``cpx`` an eighth, with ``type`` ``amdgpu`` only for ``spx``; ROCm/k8s-gpu-dra-driver
#: ``docs/driver-attributes.md`` "Auto-partition mode", whose claim example selects ``computePartition == "cpx"``)
_AMD_PARTITION_MODE = re.compile(r"""computePartition["'\]]*\s*==\s*\\?["'](?:dpx|cpx)\\?["']""")
#: The device classes whose devices kvlint counts as whole GPUs
GPU_DEVICE_CLASSES = (GPU_DEVICE_CLASS, AMD_GPU_DEVICE_CLASS)

#: A claim's requests by name: ``(GPUs, in words, where the count is)``; GPUs 0 for a request of another device
#: class, None when the count is not known from the object (``allocationMode: All``, alternatives of different
#: counts, a count the API server refuses)
ClaimGpus = Mapping[str, tuple[int | None, str, Loc | None]]

#: The kinds read here, by the path of their ``devices`` in the object
CLAIM_KINDS = {"ResourceClaim": ("spec", "devices"), "ResourceClaimTemplate": ("spec", "spec", "devices")}


def is_claim(doc: Document) -> bool:
    """Whether ``doc`` is a ResourceClaim or ResourceClaimTemplate of ``resource.k8s.io``."""
    api = get_in(doc.data, "apiVersion")
    return doc.kind in CLAIM_KINDS and isinstance(api, str) and api.startswith("resource.k8s.io/")


def claim_gpus(doc: Document) -> ClaimGpus:
    """The GPUs each request of the ResourceClaim or ResourceClaimTemplate ``doc`` asks for (:data:`ClaimGpus`);
    empty when it holds no request kvlint reads."""
    requests = get_in(doc.data, *CLAIM_KINDS.get(doc.kind, ("-",)), "requests")
    out: dict[str, tuple[int | None, str, Loc | None]] = {}
    for r in requests if isinstance(requests, list) else ():
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            continue
        exactly = r.get("exactly")
        alternatives = r.get("firstAvailable")
        if isinstance(exactly, dict):
            out[r["name"]] = _device_request(exactly)
        elif isinstance(alternatives, list) and alternatives:
            counted = [_device_request(a) if isinstance(a, dict) else (None, "", None) for a in alternatives]
            if len({c[0] for c in counted}) == 1:
                out[r["name"]] = counted[0]
            else:
                out[r["name"]] = (
                    None,
                    "one of several alternatives (firstAvailable) of different GPU counts",
                    None,
                )
        else:
            out[r["name"]] = _device_request(r)  # v1beta1 / v1alpha3: the fields on the request
    return out


def _device_request(d: Mapping[str, Any]) -> tuple[int | None, str, Loc | None]:
    """``(GPUs, in words, where)`` of one exact device request (``deviceClassName``, ``allocationMode``,
    ``count``)."""
    from kvlint.engines.options import MAX_PARALLEL_SIZE
    from kvlint.values import yaml_text

    cls = d.get("deviceClassName")
    selectors = str(d.get("selectors") or "")
    if cls == AMD_GPU_DEVICE_CLASS and (
        "amdgpu-partition" in selectors or _AMD_PARTITION_MODE.search(selectors) is not None
    ):
        # a CEL selector on the driver's ``type`` attribute naming partitions, or on an auto-partition device's
        # ``computePartition`` naming a split one (docs/driver-attributes.md)
        return (
            None,
            f"{cls} partitions (a selector on type amdgpu-partition or on computePartition dpx / cpx), not whole GPUs",
            loc_of(d, "selectors"),
        )
    if cls not in GPU_DEVICE_CLASSES:
        if (
            isinstance(cls, str)
            and cls.endswith(".nvidia.com")
            and cls != "compute-domain-default-channel.nvidia.com"
        ):
            return None, f"{cls} devices, not whole GPUs", loc_of(d, "deviceClassName")
        return 0, f"{yaml_text(cls)} devices", loc_of(d, "deviceClassName")
    mode = d.get("allocationMode", "ExactCount")
    if mode == "All":
        return (
            None,
            f"every {cls} device of the node (allocationMode: All)",
            loc_of(d, "allocationMode"),
        )
    if mode != "ExactCount":
        return (
            None,
            f"allocationMode {yaml_text(mode)}, which the API server refuses",
            loc_of(d, "allocationMode"),
        )
    count = d.get("count", 1)
    where = loc_of(d, "count") or loc_of(d, "deviceClassName")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return (
            None,
            f"count {yaml_text(count)}, not a positive whole number (the API server refuses it)",
            where,
        )
    if count > MAX_PARALLEL_SIZE:
        return None, f"count {count:,}, implausibly many (kvlint reads up to {MAX_PARALLEL_SIZE:,})", where
    return count, f"{count} {cls} device{'s' if count > 1 else ''}", where


#: Claims and templates among the inputs, by (namespace, kind, name)
Claims = Mapping[tuple[str | None, str, str], Document]


class ClaimIndex(dict[tuple[str | None, str, str], Document]):
    """:data:`Claims` (the first of each namespace, kind and name in input order) that also finds, by kind and
    name, the first in any namespace (:meth:`any_namespace`, what :func:`find_claim` looks up for a pod that names
    no namespace): a scan of every claim for each ``resourceClaims`` entry took 12 s for 6,000 entries among
    6,000 claims of other namespaces. That index is built on its first use: fill the mapping before."""

    _any: dict[tuple[str, str], Document] | None = None

    def any_namespace(self, kind: str, name: str) -> Document | None:
        """The first claim or template ``kind`` named ``name``, whatever its namespace."""
        if self._any is None:
            index: dict[tuple[str, str], Document] = {}
            for (_ns, k, n), d in self.items():
                index.setdefault((k, n), d)
            self._any = index
        return self._any.get((kind, name))


def pod_claim_gpus(
    pod_spec: Any, claims: Claims, namespace: str | None, read: dict[int, ClaimGpus] | None = None
) -> dict[str, tuple[ClaimGpus, str]]:
    """The pod's ``spec.resourceClaims`` entries whose ResourceClaim or ResourceClaimTemplate is among the inputs
    (``claims``; the pod's namespace, or any namespace when either side names none): entry name ->
    (:func:`claim_gpus` of it, what it is in words). ``read``: the claims already read, by document id (the
    caller's, kept across the pods of a run: a template is read once however many pods name it)."""
    read = {} if read is None else read
    entries = get_in(pod_spec, "resourceClaims")
    out: dict[str, tuple[ClaimGpus, str]] = {}
    for e in entries if isinstance(entries, list) else ():
        if not isinstance(e, dict) or not isinstance(e.get("name"), str):
            continue
        for key, kind in (
            ("resourceClaimTemplateName", "ResourceClaimTemplate"),
            ("resourceClaimName", "ResourceClaim"),
        ):
            name = e.get(key)
            if isinstance(name, str) and name:
                doc = find_claim(claims, namespace, kind, name)
                if doc is not None:
                    if id(doc) not in read:
                        read[id(doc)] = claim_gpus(doc)
                    out[e["name"]] = (read[id(doc)], f"{kind} {name}")
                break
    return out


def find_claim(claims: Claims, namespace: str | None, kind: str, name: str) -> Document | None:
    """The ResourceClaim or ResourceClaimTemplate (``kind``) ``name`` among ``claims``: of ``namespace``, else of
    any namespace when ``namespace`` is None, else one that names no namespace."""
    found = claims.get((namespace, kind, name))
    if found is None and namespace is None:
        found = (
            claims.any_namespace(kind, name)
            if isinstance(claims, ClaimIndex)
            else next((d for (_ns, k, n), d in claims.items() if k == kind and n == name), None)
        )
    if found is None and namespace is not None:
        found = claims.get((None, kind, name))
    return found


def container_claim_gpus(
    container: Mapping[str, Any], pod_claims: Mapping[str, tuple[ClaimGpus, str]]
) -> tuple[int, str, Loc | None] | None:
    """``(GPUs, in words, where)`` that ``container`` takes through its ``resources.claims`` (each names an entry
    of the pod's ``resourceClaims`` and, with ``request``, one request of it; Kubernetes API ``core/v1``
    ``ResourceClaim``); None unless every claim it names is among the inputs with known counts and they add up
    to at least one GPU."""
    res = container.get("resources")
    claims = res.get("claims") if isinstance(res, Mapping) else None
    if not isinstance(claims, list) or not claims:
        return None
    total, said = 0, []
    for c in claims:
        # a name that is not a string names no entry (a list or a mapping there was looked up: a TypeError)
        if not isinstance(c, Mapping) or not isinstance(c.get("name"), str) or c["name"] not in pod_claims:
            return None
        requests, what = pod_claims[c["name"]]
        request = c.get("request")
        chosen = [requests.get(request)] if isinstance(request, str) and request else list(requests.values())
        for got in chosen:
            if got is None or got[0] is None:
                return None
            if got[0]:
                total += got[0]
                said.append(f"{got[1]} of {what}")
    if not total:
        return None
    return total, ", ".join(said), loc_of(res, "claims")


def device_class_of(words: str) -> str:
    """The GPU device class (:data:`GPU_DEVICE_CLASSES`) that :func:`container_claim_gpus`' words name first, as the
    container's accelerator resource: AMD's when its devices come first, else NVIDIA's."""
    amd = words.find(f" {AMD_GPU_DEVICE_CLASS} device")
    nvidia = words.find(f" {GPU_DEVICE_CLASS} device")
    return AMD_GPU_DEVICE_CLASS if amd >= 0 and (nvidia < 0 or amd < nvidia) else GPU_DEVICE_CLASS
