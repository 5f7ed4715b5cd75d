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
``karpenter.k8s.aws/instance-gpu-name``, ``karpenter.azure.com/sku-gpu-name``, ``amd.com/gpu.product-name``,
``node.kubernetes.io/instance-type`` / ``beta.kubernetes.io/instance-type``, and last
``nvidia.com/gpu.memory`` alone (a GPU not in the catalogue, described by its labels). Label meanings
and value tables come from the catalogue's ``label_conventions`` (GFD: NVIDIA k8s-device-plugin
``internal/lm/resource.go``; GKE: cloud.google.com/kubernetes-engine docs; Karpenter AWS/Azure
provider docs), as recorded with sources in ``kvlint/data/accelerators.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kvlint.accelerators import registry as cat
from kvlint.source import Loc, loc_of
from kvlint.types import Accelerator, Placement

ANNOTATION = "kvlint.io/accelerator"

GFD_PRODUCT = "nvidia.com/gpu.product"
GFD_MEMORY = "nvidia.com/gpu.memory"
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
GKE_TPU = "cloud.google.com/gke-tpu-accelerator"
GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"
GKE_SHARING = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_MAX_SHARED = "cloud.google.com/gke-max-shared-clients-per-gpu"
KARPENTER_GPU = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
AZURE_GPU = "karpenter.azure.com/sku-gpu-name"
AMD_PRODUCT = "amd.com/gpu.product-name"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
INSTANCE_TYPE_BETA = "beta.kubernetes.io/instance-type"

#: Node-label keys that decide the accelerator, most specific first.
LABEL_ORDER = (
    GFD_PRODUCT,
    GKE_ACCELERATOR,
    GKE_TPU,
    KARPENTER_GPU,
    AZURE_GPU,
    AMD_PRODUCT,
    INSTANCE_TYPE,
    INSTANCE_TYPE_BETA,
    GFD_MEMORY,
)
# Keys that only say "some GPU of this vendor" or may be set on CPU nodes: an unknown value does not
# end the search (an unknown gke-accelerator value does: it names a GPU kvlint does not know).
_SOFT_KEYS = {INSTANCE_TYPE, INSTANCE_TYPE_BETA}

#: Container extended resources that carry accelerators, in the order they are looked for.
GPU_RESOURCES = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
    "google.com/tpu",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "aws.amazon.com/neurondevice",
    "gpu.intel.com/i915",
)
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"

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

    @property
    def memory(self) -> int:
        if self.mig_bytes:
            return self.mig_bytes
        return self.acc.memory_bytes if self.acc else 0


@dataclass
class _Decision:
    acc: Accelerator | None
    how: str
    loc: Loc | None
    notes: list[str] = field(default_factory=list)
    mig_bytes: int | None = None
    shared: bool = False


def _as_int(value: Any) -> int | None:
    """Integer from an int / integral float / digit string; None otherwise (templates, "2.5", junk)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _first(labels: Labels, key: str) -> str | None:
    vals = labels.get(key)
    return vals[0][0] if vals else None


def _cc(labels: Labels) -> str | None:
    major = _as_int(_first(labels, "nvidia.com/gpu.compute.major"))
    minor = _as_int(_first(labels, "nvidia.com/gpu.compute.minor"))
    return f"{major}.{minor or 0}" if major is not None else None


def _mig_memory(acc: Accelerator | None, profile: str, labels: Labels) -> tuple[int | None, str]:
    """MIG slice bytes for ``profile``: GFD's ``nvidia.com/gpu.memory`` (overwritten with the MIG device
    memory under mig.strategy=single) when present, else the catalogue's MIG table."""
    mib = _as_int(_first(labels, GFD_MEMORY))
    if mib:
        return mib * cat.MIB, f"MIG {profile}: {mib} MiB from {GFD_MEMORY}"
    prof, note = cat.mig_profile(acc.id if acc else None, profile)
    if prof is None:
        return None, note
    text = f"MIG {profile}: {prof.memory_bytes // cat.MIB} MiB per slice ({prof.status})"
    return prof.memory_bytes, f"{text}; {note}" if note else text


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


def _candidate(key: str, value: Any, loc: Loc | None, labels: Labels) -> _Cand | None:
    """The accelerator one label value names; None when the value does not decide (soft keys)."""
    v = str(value).strip()
    c = _Cand(None, key, v, loc)
    if key == GFD_PRODUCT:
        acc, profile, shared = cat.gfd_product(v)
        c.shared = shared
        if acc is None:
            mib = _as_int(_first(labels, GFD_MEMORY))
            if mib and not profile:
                acc = cat.generic_nvidia(v, mib, _cc(labels))
                c.notes.append(f"{v} is not in the catalogue: memory from {GFD_MEMORY}={mib}")
            else:
                c.notes.append(f"GPU product {v} is not in the catalogue")
        c.acc = acc
        if profile:
            c.mig_bytes, note = _mig_memory(acc, profile, labels)
            c.notes.append(note)
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
        elif cands:
            c.acc = cands[0]
        else:
            c.notes.append(f"{v} is {'not a GPU in the catalogue' if known else 'not a known GPU name'}")
        return c
    if key == AMD_PRODUCT:
        c.acc = cat.amd_product_name(v)
        if c.acc is None:
            c.notes.append(f"AMD product {v} is not in the catalogue")
        return c
    if key in (INSTANCE_TYPE, INSTANCE_TYPE_BETA):
        it = cat.instance_type(v)
        if it is None:
            return None
        c.acc = it.accelerator
        if it.accelerator is not None:
            per = f"{it.fraction} of" if it.fraction else f"{it.gpus}x" if it.gpus is not None else "?x"
            c.notes.append(f"{it.name}: {per} {it.accelerator.id}")
        else:
            c.notes.append(f"{it.name}: {it.note or 'no GPU in the catalogue'}")
        return c
    if key == GFD_MEMORY:
        mib = _as_int(v)
        if not mib:
            return None
        c.acc = cat.generic_nvidia(None, mib, _cc(labels))
        c.notes.append("GPU model unknown: memory from the GFD label")
        return c
    return None


def _decide(labels: Labels) -> list[_Cand] | None:
    """Candidates from the most specific deciding key present in ``labels``; None if no key decides."""
    for key in LABEL_ORDER:
        values = labels.get(key)
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
        return _Decision(None, how, cands[0].loc if cands else None, notes)
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
    return _Decision(best.acc, how, best.loc, notes, best.mig_bytes, any(c.shared for c in cands))


def _node_selector_labels(pod_spec: Mapping[str, Any]) -> tuple[Labels, Any]:
    ns = pod_spec.get("nodeSelector")
    labels: Labels = {}
    if isinstance(ns, Mapping):
        for k, v in ns.items():
            if v is not None and not isinstance(v, (Mapping, list)):
                labels[str(k)] = [(str(v), loc_of(ns, k))]
    return labels, ns


def _affinity_terms(pod_spec: Mapping[str, Any]) -> list[tuple[Labels, str]]:
    """Required node-affinity terms -> [(labels from ``In`` expressions, rendered text)]."""
    aff = pod_spec.get("affinity")
    node = aff.get("nodeAffinity") if isinstance(aff, Mapping) else None
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    out: list[tuple[Labels, str]] = []
    if not isinstance(terms, list):
        return out
    for term in terms:
        exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
        if not isinstance(exprs, list):
            continue
        labels: Labels = {}
        texts = []
        for e in exprs:
            if not isinstance(e, Mapping) or str(e.get("operator", "")) != "In":
                continue
            key, values = e.get("key"), e.get("values")
            if not isinstance(key, str) or not isinstance(values, list):
                continue
            vals = [
                (str(v), loc_of(values, i) or loc_of(e, "values"))
                for i, v in enumerate(values)
                if v is not None
            ]
            if vals:
                labels.setdefault(key, []).extend(vals)
                texts.append(f"{key} In [{', '.join(v for v, _ in vals)}]")
        if labels:
            out.append((labels, "; ".join(texts)))
    return out


def _from_affinity(terms: list[tuple[Labels, str]]) -> _Decision | None:
    cands: list[_Cand] = []
    texts = []
    for labels, _text in terms:
        got = _decide(labels)
        if got:
            cands.extend(got)
            key = got[0].key
            texts.append(f"{key} In [{', '.join(v for v, _ in labels[key])}]")
    if not cands:
        return None
    return _combine(cands, "nodeAffinity " + " | ".join(texts))


def _resource_rank(key: str) -> int | None:
    """Search order of accelerator resources: nvidia.com/gpu, .shared, MIG, then the other vendors."""
    if key.startswith(MIG_RESOURCE_PREFIX):
        return 2
    if key in GPU_RESOURCES:
        i = GPU_RESOURCES.index(key)
        return i if i < 2 else i + 1
    return None


def _gpu_resource(container: Mapping[str, Any]) -> tuple[str | None, int | None, Loc | None]:
    """(resource name, count, position) of the container's accelerator resource: ``limits`` first,
    then ``requests``; ``nvidia.com/gpu`` before ``.shared``, MIG, AMD, TPU, Gaudi, Neuron, Intel."""
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return None, None, None
    for section in ("limits", "requests"):
        block = res.get(section)
        if not isinstance(block, Mapping):
            continue
        ordered = sorted(
            (k for k in block if isinstance(k, str) and _resource_rank(k) is not None),
            key=lambda k: _resource_rank(k) or 0,
        )
        if ordered:
            key = ordered[0]
            return key, _as_int(block.get(key)), loc_of(block, key)
    return None, None, None


def _sharing(label_sets: list[Labels]) -> tuple[bool, int | None, str]:
    """Sharing declared by node labels: GKE time-sharing/MPS, GFD sharing-strategy / replicas."""
    shared, sharers, notes = False, None, []
    for labels in label_sets:
        strategy = _first(labels, GKE_SHARING) or _first(labels, "nvidia.com/gpu.sharing-strategy")
        if strategy and strategy.lower() not in ("none", ""):
            shared = True
            notes.append(f"shared GPU ({strategy})")
        n = _as_int(_first(labels, GKE_MAX_SHARED)) or _as_int(_first(labels, "nvidia.com/gpu.replicas"))
        if n and n > 1:
            shared, sharers = True, n
    return shared, sharers, "; ".join(dict.fromkeys(notes))


def resolve_placement(
    pod_spec: Mapping[str, Any],
    container: Mapping[str, Any],
    annotations: Mapping[str, str],
    *,
    override: str | None = None,
    gpu_memory_bytes: int | None = None,
    default: str | None = None,
) -> Placement:
    """Work out the accelerator a container's pod lands on and the accelerators it requests.

    Args:
        pod_spec: the PodSpec mapping (``nodeSelector``, ``affinity``, ``containers`` ...), ideally an
            :class:`~kvlint.source.LDict` so ``loc`` / ``gpus_loc`` point into the file.
        container: one container mapping of that PodSpec (its ``resources``).
        annotations: pod-template annotations (``kvlint.io/accelerator``).
        override: ``--accelerator`` (id or alias); beats everything.
        gpu_memory_bytes: ``--gpu-memory`` in bytes (device total as CUDA reports it, per GPU); replaces
            the catalogue / MIG figure in ``memory_bytes_override``.
        default: the configuration's default accelerator (id or alias); used when nothing in the
            manifest says.

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
    ns_labels, ns = _node_selector_labels(pod_spec)
    terms = _affinity_terms(pod_spec)
    label_sets = [ns_labels] + [t[0] for t in terms]
    notes: list[str] = []

    decision: _Decision | None = None
    if override:
        decision = _Decision(cat.require(override, "--accelerator"), f"--accelerator {override}", None)
    if decision is None:
        ann = annotations.get(ANNOTATION)
        if ann is not None and str(ann).strip():
            acc = cat.lookup(str(ann))
            if acc is not None:
                decision = _Decision(acc, f"annotation {ANNOTATION}={ann}", loc_of(annotations, ANNOTATION))
            else:
                notes.append(f"annotation {ANNOTATION}={ann} ignored: not a known accelerator id or alias")
    if decision is None and ns_labels:
        cands = _decide(ns_labels)
        if cands:
            c0 = cands[0]
            decision = _combine(cands, f"nodeSelector {c0.key}={c0.value}")
            if decision.loc is None:
                decision.loc = loc_of(ns)
    if decision is None and terms:
        decision = _from_affinity(terms)
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
            cat.require(default, "default accelerator"), f"config default accelerator {default}", None
        )
    if decision is None:
        decision = _Decision(None, "nothing in the manifest names the accelerator", None)

    acc = decision.acc
    mig_bytes = decision.mig_bytes
    notes = decision.notes + notes
    # MIG from GKE's partition label or a mixed-strategy resource (when a label did not already say).
    if mig_bytes is None:
        profile = None
        for labels in label_sets:
            part = _first(labels, GKE_PARTITION)
            if part:
                profile = cat.mig_profile_name(part) or part
                break
        if profile is None and resource and resource.startswith(MIG_RESOURCE_PREFIX):
            profile = cat.mig_profile_name(resource[len(MIG_RESOURCE_PREFIX) :])
        if profile:
            prof, note = cat.mig_profile(acc.id if acc else None, profile)
            if prof is not None:
                mig_bytes = prof.memory_bytes
                notes.append(f"MIG {profile}: {prof.memory_bytes // cat.MIB} MiB per slice ({prof.status})")
            if note:
                notes.append(note)
    shared, sharers, share_note = _sharing(label_sets)
    shared = shared or decision.shared or resource == "nvidia.com/gpu.shared"
    if share_note:
        notes.append(share_note)
    if resource == "nvidia.com/gpu.shared":
        notes.append("resource nvidia.com/gpu.shared: time-sliced/MPS replica")
    override_bytes = mig_bytes
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
        memory_bytes_override=override_bytes,
    )
