"""``--cluster``: read the live nodes and place a pod on the ones it could schedule on.

:func:`load_inventory` lists the nodes (``GET /api/v1/nodes``) through the official ``kubernetes`` Python
client (kubeconfig + context, or the in-cluster service account), once per run; :func:`placement_from_cluster`
then filters the nodes the way kube-scheduler's filter plugins do for the constraints kvlint can see in a
PodSpec, and takes the accelerator from the surviving nodes' labels with the same label tables as
:func:`kvlint.accelerators.resolve_placement`.

Filters (Kubernetes ``pkg/scheduler/framework/plugins``, as documented in "Assigning Pods to Nodes" and
"Taints and Tolerations", kubernetes.io, v1.30):

* ``nodeSelector``: every key must be a node label with exactly that value (plugin ``NodeAffinity``);
* required node affinity: ``nodeSelectorTerms`` are OR'ed, the ``matchExpressions`` of a term AND'ed;
  ``In``/``NotIn`` (``NotIn`` also matches a node without the label), ``Exists``/``DoesNotExist``,
  ``Gt``/``Lt`` (integer comparison of the label value; a missing or non-integer label does not match);
  ``matchFields`` on ``metadata.name`` (``In``/``NotIn``);
* taints (plugin ``TaintToleration``): every ``NoSchedule``/``NoExecute`` taint must be tolerated
  (``operator: Exists`` with an empty key tolerates everything; ``Equal`` compares values; an empty
  ``effect`` matches all effects); ``PreferNoSchedule`` does not filter;
* ``spec.unschedulable`` (cordoned; plugin ``NodeUnschedulable``) unless the pod tolerates
  ``node.kubernetes.io/unschedulable:NoSchedule``;
* extended resources (plugin ``NodeResourcesFit``): the node's ``status.allocatable`` must hold the
  container's accelerator resource count (capacity only: pods already running are not subtracted).

The ``kubernetes`` package is imported only when a cluster is actually read.
"""

from __future__ import annotations

import json
import os
import weakref
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field, fields, is_dataclass
from typing import Any

from kvlint.accelerators import placement as pl
from kvlint.types import Accelerator, Placement

__all__ = [
    "ClusterUnavailable",
    "Node",
    "NodeInventory",
    "NodeLabels",
    "clear_cache",
    "inventory_from_node_list",
    "load_inventory",
    "placement_from_cluster",
    "TIMEOUT_S",
]

#: (connect, read) timeouts in seconds for the node list request.
TIMEOUT_S = (5.0, 30.0)

_cache: dict[tuple[str | None, str | None], NodeInventory] = {}

#: node facts by their value (:func:`_facts_key`), while a node holds them: nodes of one pool share one object, so a
#: review places each distinct GPU once and memory grows with the distinct label sets, not the nodes
_facts: weakref.WeakValueDictionary[Any, pl.NodeFacts] = weakref.WeakValueDictionary()


def _facts_key(v: Any) -> Any:
    """``v`` (a :class:`~kvlint.accelerators.placement.NodeFacts`) as a hashable value, equal exactly when the facts
    are: every dataclass field and list item in order, tagged with its type. It holds the facts' own strings, not a
    copy of their text (a ``repr`` key doubled what a node with a long label value kept)."""
    if is_dataclass(v) and not isinstance(v, type):
        return (type(v), *(_facts_key(getattr(v, f.name)) for f in fields(v)))
    if isinstance(v, (list, tuple)):
        return (type(v), *(_facts_key(x) for x in v))
    return v if type(v) is str else (type(v), v)


def _interned_facts(labels: Mapping[str, str]) -> pl.NodeFacts:
    facts = pl.node_facts(labels)
    key = _facts_key(facts)
    try:
        found = _facts.get(key)
    except TypeError:  # a field kvlint may add later that hashes not (a dict): these facts are not shared
        return facts
    if found is not None:
        return found
    _facts[key] = facts
    return facts


class NodeLabels(dict[str, str]):
    """A :class:`Node`'s ``labels``: a dict that refuses changes in place (``TypeError``). The node's GPU is read
    from its labels once, when the node is made (:attr:`Node.facts`), so a label changed in place afterwards would
    be filtered on with the new value and placed with the old one; build a new node instead
    (``dataclasses.replace(node, labels={...})``, or a watch event's node)."""

    __slots__ = ()

    def _refuse(self, *_args: Any, **_kwargs: Any) -> Any:
        raise TypeError(
            "a Node's labels are read into its facts when the node is made: build a new Node "
            "(dataclasses.replace(node, labels=...)) instead of changing them in place"
        )

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (NodeLabels, (dict(self),))


class ClusterUnavailable(Exception):
    """The cluster could not be read (no kubeconfig / unknown context, unreachable API server, 401/403,
    malformed answer); the message names the kubeconfig/context and how to fix it."""


@dataclass(frozen=True)
class Node:
    """One node as the scheduler sees it.

    ``labels`` are ``metadata.labels`` (a :class:`NodeLabels`: read into ``facts`` when the node is made, so
    never changed in place); ``taints`` the ``spec.taints`` items (``key``, ``value``,
    ``effect``); ``allocatable`` ``status.allocatable`` (resource name -> quantity string, e.g.
    ``nvidia.com/gpu: "8"``); ``unschedulable`` ``spec.unschedulable`` (cordoned).
    """

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()
    allocatable: dict[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    #: what the labels say about the node's GPU (:func:`kvlint.accelerators.placement.node_facts`), read once
    #: when the node is made (a LIST, or a watch event's node), not per review; equal facts are one object
    facts: pl.NodeFacts = field(init=False, repr=False, compare=False)
    #: the node this one replaces (a relist's or a watch event's node of the same name): its facts are taken
    #: when its labels are equal, so a status-only change or a relist does not read the labels again
    was: InitVar[Node | None] = None

    def __post_init__(self, was: Node | None) -> None:
        if type(self.labels) is not NodeLabels:
            object.__setattr__(self, "labels", NodeLabels(self.labels))
        # in the same order too: a label set's notes follow its order (the API server's JSON sorts the keys)
        same = was is not None and was.labels == self.labels and list(was.labels) == list(self.labels)
        object.__setattr__(self, "facts", was.facts if same else _interned_facts(self.labels))  # type: ignore[union-attr]


@dataclass(frozen=True)
class NodeInventory:
    """The nodes of one cluster, read once per run. ``source`` says from where (kubeconfig path and
    context, or ``in-cluster``), for messages."""

    nodes: tuple[Node, ...]
    source: str


def clear_cache() -> None:
    """Forget inventories read in this process (tests; a long-running process re-reading the cluster)."""
    _cache.clear()


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _s(v: Any) -> str:
    return "" if v is None else str(v)


def inventory_from_node_list(
    data: Mapping[str, Any], source: str = "NodeList", previous: Mapping[str, Node] | None = None
) -> NodeInventory:
    """A :class:`NodeInventory` from a ``NodeList`` JSON object (``items`` of ``Node``), as returned by
    ``GET /api/v1/nodes``. Items that are not mappings or lack ``metadata.name`` are skipped. ``previous``
    (name -> node, the webhook's watch cache) gives the nodes these replace: one whose labels are unchanged keeps
    its :attr:`Node.facts`.

    Raises:
        ClusterUnavailable: ``data`` is not a mapping with an ``items`` list.
    """
    items = data.get("items") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        raise ClusterUnavailable(f"{source}: the API server's answer is not a NodeList (no items list)")
    nodes: list[Node] = []
    for it in items:
        if not isinstance(it, Mapping):
            continue
        meta = _map(it.get("metadata"))
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if not name:
            continue
        spec = _map(it.get("spec"))
        status = _map(it.get("status"))
        labels = _map(meta.get("labels"))
        taints = _list(spec.get("taints"))
        alloc = _map(status.get("allocatable"))
        nodes.append(
            Node(
                name=str(name),
                labels=NodeLabels({str(k): _s(v) for k, v in labels.items()}),
                taints=tuple(
                    {"key": _s(t.get("key")), "value": _s(t.get("value")), "effect": _s(t.get("effect"))}
                    for t in taints
                    if isinstance(t, Mapping)
                ),
                allocatable={str(k): _s(v) for k, v in alloc.items()},
                unschedulable=bool(spec.get("unschedulable")),
                was=previous.get(str(name)) if previous else None,
            )
        )
    return NodeInventory(tuple(nodes), source)


def load_inventory(kubeconfig: str | None = None, context: str | None = None) -> NodeInventory:
    """List the cluster's nodes through the ``kubernetes`` client; cached per (kubeconfig, context).

    Args:
        kubeconfig: path of a kubeconfig file (``--kubeconfig``); None -> ``$KUBECONFIG`` /
            ``~/.kube/config``, or the in-cluster service account when running in a pod
            (``KUBERNETES_SERVICE_HOST`` set) and no kubeconfig file exists.
        context: kubeconfig context (``--context``); None -> the current context.

    Returns:
        :class:`NodeInventory` of every node (paginated ``list_node``, 500 per page, timeouts
        :data:`TIMEOUT_S`, one retry).

    Raises:
        ClusterUnavailable: the ``kubernetes`` package is missing, the kubeconfig/context is missing or
            invalid, the API server is unreachable or times out, or answers 401/403 (RBAC: the identity
            needs ``list`` on ``nodes``) or something that is not a NodeList.
    """
    key = (kubeconfig, context)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    inv = _load(kubeconfig, context)
    _cache[key] = inv
    return inv


def core_v1_api(kubeconfig: str | None, context: str | None, *, retries: int = 1) -> tuple[Any, str, str]:
    """A ``kubernetes.client.CoreV1Api`` for a kubeconfig/context, or the in-cluster service account when
    neither is given, ``KUBERNETES_SERVICE_HOST`` is set and no kubeconfig file exists.

    Returns ``(api, description of the source, API server host)``; ``retries`` is urllib3's retry count
    (the webhook's watch cache passes 0 and retries itself with back-off).

    Raises:
        ClusterUnavailable: the ``kubernetes`` package is missing or the kubeconfig/context is missing or
            invalid (the message names the file and context).
    """
    try:
        from kubernetes import client
        from kubernetes import config as kconfig
        from kubernetes.config.config_exception import ConfigException
    except ImportError:  # pragma: no cover - declared dependency
        raise ClusterUnavailable(
            "--cluster needs the 'kubernetes' Python package (pip install kubernetes)"
        ) from None

    cfg = client.Configuration()
    default_path = os.path.expanduser(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0])
    in_cluster = (
        kubeconfig is None
        and context is None
        and bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        and not os.path.exists(default_path)
    )
    where = "in-cluster service account" if in_cluster else f"kubeconfig {kubeconfig or default_path}"
    if context:
        where += f" context {context}"
    try:
        if in_cluster:
            kconfig.load_incluster_config(client_configuration=cfg)
        else:
            kconfig.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as e:
        raise ClusterUnavailable(
            f"cannot read {where}: {str(e).splitlines()[0] if str(e) else type(e).__name__}; pass --kubeconfig "
            "FILE and --context NAME (see `kubectl config get-contexts`)"
        ) from None
    cfg.retries = retries
    return client.CoreV1Api(client.ApiClient(cfg)), where, str(cfg.host)


def _load(kubeconfig: str | None, context: str | None) -> NodeInventory:
    from kubernetes.client.rest import ApiException

    api, where, host = core_v1_api(kubeconfig, context)
    items: list[Any] = []
    cont: str | None = None
    try:
        while True:
            kw: dict[str, Any] = {"limit": 500, "_preload_content": False, "_request_timeout": TIMEOUT_S}
            if cont:
                kw["_continue"] = cont
            resp: Any = api.list_node(**kw)
            try:
                page = json.loads(resp.data)
            except (ValueError, TypeError) as e:
                raise ClusterUnavailable(f"{where}: GET /api/v1/nodes did not return JSON ({e})") from None
            if not isinstance(page, Mapping) or not isinstance(page.get("items"), list):
                raise ClusterUnavailable(f"{where}: GET /api/v1/nodes did not return a NodeList")
            items.extend(page["items"])
            meta = page.get("metadata")
            cont = meta.get("continue") if isinstance(meta, Mapping) else None
            if not cont:
                break
    except ApiException as e:
        if e.status in (401, 403):
            raise ClusterUnavailable(
                f"{where}: the API server refused to list nodes ({e.status} {e.reason}); the identity needs "
                "RBAC 'list' on 'nodes' (a ClusterRole), or drop --cluster"
            ) from None
        raise ClusterUnavailable(f"{where}: GET /api/v1/nodes failed ({e.status} {e.reason})") from None
    except ClusterUnavailable:
        raise
    except Exception as e:  # urllib3 connection errors, timeouts, TLS errors
        raise ClusterUnavailable(
            f"{where}: the API server at {host} is unreachable ({type(e).__name__}); check the context, "
            "network/VPN, or drop --cluster"
        ) from None
    return inventory_from_node_list({"items": items}, where)


# --------------------------------------------------------------------------------------------------
# scheduling filters


def _int(v: Any) -> int | None:
    try:
        return int(str(v).strip())
    except (TypeError, ValueError):
        return None


def _expr_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One node-selector requirement against a node's labels (scheduler semantics, see module doc)."""
    key, op = str(expr.get("key", "")), str(expr.get("operator", ""))
    values = (
        [str(v) for v in expr.get("values") or [] if v is not None]
        if isinstance(expr.get("values"), list)
        else []
    )
    has = key in labels
    if op == "In":
        return has and labels[key] in values
    if op == "NotIn":
        return not has or labels[key] not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    if op in ("Gt", "Lt"):
        have, bound = _int(labels.get(key)), _int(values[0]) if len(values) == 1 else None
        if have is None or bound is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return False  # unknown operator: the API server would reject the object


def _term_matches(term: Any, node: Node) -> bool:
    if not isinstance(term, Mapping):
        return False
    exprs = _list(term.get("matchExpressions"))
    fields = _list(term.get("matchFields"))
    if not exprs and not fields:
        return False  # an empty term matches no node
    ok = all(isinstance(e, Mapping) and _expr_matches(e, node.labels) for e in exprs)
    return ok and all(
        isinstance(f, Mapping)
        and str(f.get("key")) == "metadata.name"
        and _expr_matches(f, {"metadata.name": node.name})
        for f in fields
    )


def _required_terms(pod_spec: Mapping[str, Any]) -> list[Any] | None:
    """The pod's required ``nodeSelectorTerms``, or None when it has none (every node passes)."""
    aff = pod_spec.get("affinity")
    na = aff.get("nodeAffinity") if isinstance(aff, Mapping) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    return terms if isinstance(terms, list) else None


#: a toleration as :func:`_tolerated` compares it: (effect, key, operator, value)
_Toleration = tuple[str, str, str, str]


def _tolerations(pod_spec: Mapping[str, Any]) -> list[_Toleration]:
    return [
        (_s(t.get("effect")), _s(t.get("key")), _s(t.get("operator")) or "Equal", _s(t.get("value")))
        for t in _list(pod_spec.get("tolerations"))
        if isinstance(t, Mapping)
    ]


def _tolerated(taint: Mapping[str, str], tolerations: list[_Toleration]) -> bool:
    for effect, key, op, value in tolerations:
        if effect and effect != taint["effect"]:
            continue
        if op == "Exists":
            if not key or key == taint["key"]:
                return True
        elif key == taint["key"] and value == taint["value"]:
            return True
    return False


_CORDON = {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}


@dataclass(frozen=True)
class _PodFilter:
    """A pod's scheduling constraints, read once per review and compared with each node (:meth:`why_not`)."""

    #: (label, value, and the key and value as written, for the message)
    selector: tuple[tuple[str, str, Any, Any], ...]
    terms: list[Any] | None
    tolerations: list[_Toleration]
    cordon_tolerated: bool
    resource: str | None
    count: int | None

    @classmethod
    def of(cls, pod_spec: Mapping[str, Any], resource: str | None, count: int | None) -> _PodFilter:
        ns = pod_spec.get("nodeSelector")
        selector = tuple((str(k), _s(v), k, v) for k, v in ns.items()) if isinstance(ns, Mapping) else ()
        tols = _tolerations(pod_spec)
        return cls(selector, _required_terms(pod_spec), tols, _tolerated(_CORDON, tols), resource, count)

    def why_not(self, node: Node) -> str | None:
        """None when the pod fits ``node``; otherwise the first failing filter, named."""
        labels = node.labels
        for label, value, k, v in self.selector:
            if labels.get(label) != value:
                return f"nodeSelector {k}={v}"
        if self.terms is not None and not any(_term_matches(t, node) for t in self.terms):
            return "required nodeAffinity"
        if node.unschedulable and not self.cordon_tolerated:
            return "cordoned (spec.unschedulable)"
        for t in node.taints:
            if t["effect"] in ("NoSchedule", "NoExecute") and not _tolerated(t, self.tolerations):
                return f"taint {t['key']}{'=' + t['value'] if t['value'] else ''}:{t['effect']} not tolerated"
        if self.resource:
            have = _int(node.allocatable.get(self.resource))
            if not have:
                return f"no allocatable {self.resource}"
            if self.count is not None and have < self.count:
                return f"allocatable {self.resource}={have} < {self.count}"
        return None


def _why_not(pod_spec: Mapping[str, Any], resource: str | None, count: int | None, node: Node) -> str | None:
    """None when the pod fits ``node``; otherwise the first failing filter, named."""
    return _PodFilter.of(pod_spec, resource, count).why_not(node)


def placement_from_cluster(
    pod_spec: Mapping[str, Any], container: Mapping[str, Any], inventory: NodeInventory
) -> Placement:
    """The :class:`~kvlint.types.Placement` of a container's pod on a live cluster.

    Filters ``inventory`` by the PodSpec's nodeSelector, required node affinity, tolerations vs taints,
    cordons and the container's accelerator resource (see the module docstring), then reads each fitting
    node's labels with :func:`kvlint.accelerators.resolve_placement` (GFD ``nvidia.com/gpu.product`` /
    ``gpu.memory`` incl. MIG and ``-SHARED``, GKE, Karpenter, AKS, AMD, instance types).

    Returns:
        ``accelerator`` the GPU with the smallest memory among the fitting nodes (worst case) and
        ``candidates`` every distinct GPU among them (smallest memory first) when there are several;
        ``gpus``/``gpus_loc``/``resource`` from the container; ``memory_bytes_override`` the MIG slice /
        label memory / HAMi slice (``gpu_slice``) of the worst-case node; ``how`` names the inventory, how many nodes fit and, when none
        does, the reason per node (``accelerator`` None). Never raises for malformed manifests.
    """
    pod_spec = pod_spec if isinstance(pod_spec, Mapping) else {}
    container = container if isinstance(container, Mapping) else {}
    resource, count, gpus_loc = pl._gpu_resource(container)
    fits: list[tuple[Node, Placement]] = []
    rejected: dict[str, list[str]] = {}
    # one placement per distinct node facts (a node pool's nodes share them), made from the facts read when
    # the node was listed: the same Placement resolve_placement({"nodeSelector": labels}, container, {}) gives
    placed: dict[int, Placement] = {}
    pod_filter = _PodFilter.of(pod_spec, resource, count)
    for node in inventory.nodes:
        why = pod_filter.why_not(node)
        if why is not None:
            rejected.setdefault(why, []).append(node.name)
            continue
        per_node = placed.get(id(node.facts))
        if per_node is None:
            per_node = placed[id(node.facts)] = pl.placement_on_node(node.facts, container)
        fits.append((node, per_node))
    base = f"--cluster ({inventory.source})"
    if not fits:
        reasons = "; ".join(
            f"{why}: {', '.join(names[:3])}{' ...' if len(names) > 3 else ''}"
            for why, names in rejected.items()
        )
        return Placement(
            accelerator=None,
            how=f"{base}: none of {len(inventory.nodes)} nodes can run the pod ({reasons or 'no nodes'})",
            gpus=count,
            gpus_loc=gpus_loc,
            resource=resource,
        )
    known = [(n, p) for n, p in fits if p.accelerator is not None]
    if not known:
        return Placement(
            accelerator=None,
            how=f"{base}: {len(fits)} nodes fit ({', '.join(n.name for n, _ in fits[:3])}) but their labels "
            "name no accelerator kvlint knows",
            gpus=count,
            gpus_loc=gpus_loc,
            resource=resource,
        )
    known.sort(key=lambda np: (np[1].memory_bytes or 0, np[0].name))
    worst_node, worst = known[0]
    accs: dict[str, Accelerator] = {}
    for _n, p in known:
        for a in (p.accelerator, *p.candidates):
            if a is not None:
                accs.setdefault(a.id, a)
    detail = worst.how.split(" (", 1)[1].rstrip(")") if " (" in worst.how else worst.how
    how = (
        f"{base}: {len(fits)} of {len(inventory.nodes)} nodes fit; "
        f"{'GPUs ' + ', '.join(accs) + ': worst case ' if len(accs) > 1 else ''}node {worst_node.name} "
        f"{worst.how.split(' (', 1)[0].replace('nodeSelector ', 'label ')}"
        + (f" ({detail})" if detail and detail != worst.how else "")
    )
    if len(known) < len(fits):
        how += f"; {len(fits) - len(known)} fitting nodes have no known accelerator label"
    return Placement(
        accelerator=worst.accelerator,
        how=how,
        loc=None,
        gpus=count,
        gpus_loc=gpus_loc,
        resource=resource,
        shared=any(p.shared for _n, p in known),
        max_sharers=worst.max_sharers,
        sharing_strategy=worst.sharing_strategy,
        memory_bytes_override=worst.memory_bytes_override,
        mig_profile=worst.mig_profile,
        mig_slices=worst.mig_slices,
        amd_partition=worst.amd_partition,
        amd_partition_label=worst.amd_partition_label,
        device_share=worst.device_share,
        gpu_slice=worst.gpu_slice,
        candidates=tuple(sorted(accs.values(), key=lambda a: (a.memory_bytes, a.id)))
        if len(accs) > 1
        else (),
    )
