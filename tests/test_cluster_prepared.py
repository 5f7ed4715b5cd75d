"""``--cluster``: node labels read once per node (``Node.facts``) give the same placements as reading them per
review through ``resolve_placement`` (the path before the split), on generated inventories of many shapes."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kvlint import cluster
from kvlint.accelerators import placement as pl
from kvlint.cluster import Node, NodeInventory, placement_from_cluster

_GPU_LABELS: list[dict[str, str]] = [
    {},  # unlabeled (a CPU node, or no GFD)
    {"kubernetes.io/os": "linux"},
    {pl.GFD_PRODUCT: "NVIDIA-A100-SXM4-80GB"},
    {pl.GFD_PRODUCT: "NVIDIA-A100-SXM4-40GB", pl.GFD_MEMORY: "40960"},
    {pl.GFD_PRODUCT: "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"},
    {pl.GFD_PRODUCT: "Tesla-T4", pl.GFD_FAMILY: "turing"},
    {pl.GFD_PRODUCT: "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/mig.strategy": "single"},
    {pl.GFD_PRODUCT: "NVIDIA-A10G-SHARED", "nvidia.com/gpu.replicas": "4"},
    {pl.GFD_PRODUCT: "NVIDIA-Some-Future-GPU"},
    {pl.GFD_MEMORY: "24576", pl.GFD_FAMILY: "ampere"},
    {pl.GKE_ACCELERATOR: "nvidia-l4"},
    {pl.GKE_ACCELERATOR: "nvidia-tesla-a100", pl.GKE_PARTITION: "1g.5gb"},
    {pl.GKE_ACCELERATOR: "nvidia-h100-80gb", pl.GKE_SHARING: "time-sharing", pl.GKE_MAX_SHARED: "3"},
    {pl.GKE_TPU: "tpu-v5-lite-podslice"},
    {pl.INSTANCE_TYPE: "p4d.24xlarge"},
    {pl.INSTANCE_TYPE: "g5.xlarge", pl.KARPENTER_GPU: "a10g", pl.KARPENTER_GPU_MEMORY: "24576"},
    {pl.INSTANCE_TYPE: "m5.large"},
    {pl.INSTANCE_TYPE: "<your-vm-sku>"},
    {pl.INSTANCE_TYPE: "Standard_NC24ads_A100_v4", "kubernetes.azure.com/accelerator": "nvidia"},
    {pl.AZURE_GPU: "A100"},
    {pl.AMD_PRODUCT: "AMD_Instinct_MI300X_OAM", pl.AMD_VRAM: "192G"},
    {"example.com/gpu-name": "H100"},
]

_TAINTS: list[tuple[dict[str, str], ...]] = [
    (),
    ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},),
    ({"key": "nvidia.com/gpu", "value": "", "effect": "NoExecute"},),
    ({"key": "dedicated", "value": "llm", "effect": "NoSchedule"},),
    ({"key": "spot", "value": "true", "effect": "PreferNoSchedule"},),
]

_CONTAINERS: list[dict[str, Any]] = [
    {"name": "c"},
    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}},
    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}},
    {"name": "c", "resources": {"requests": {"nvidia.com/gpu": 2}}},
    {"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}},
    {"name": "c", "resources": {"limits": {"nvidia.com/gpu.shared": 1}}},
    {"name": "c", "resources": {"limits": {"amd.com/gpu": 1}}},
    {"name": "c", "resources": {"limits": {"google.com/tpu": 4}}},
    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": 8000}}},
    {"name": "c", "resources": {"claims": [{"name": "gpu"}]}},
    {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "lots"}}},
]


def _node(rng: random.Random, i: int) -> Node:
    labels = {
        "kubernetes.io/hostname": f"n{i}",
        "zone": rng.choice(["a", "b", "c"]),
        "rank": str(rng.randint(0, 9)),
    }
    labels.update(rng.choice(_GPU_LABELS))
    if rng.random() < 0.2:
        labels["pool"] = rng.choice(["serve", "batch"])
    alloc = {"cpu": "32"}
    if rng.random() < 0.8:
        alloc[rng.choice(["nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.5gb", "amd.com/gpu"])] = str(
            rng.choice([0, 1, 2, 4, 8])
        )
    return Node(
        name=f"n{i}",
        labels=labels,
        taints=rng.choice(_TAINTS),
        allocatable=alloc,
        unschedulable=rng.random() < 0.05,
    )


def _expr(rng: random.Random) -> dict[str, Any]:
    op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    if op in ("Gt", "Lt"):
        return {"key": "rank", "operator": op, "values": [str(rng.randint(0, 9))]}
    key = rng.choice(["zone", "pool", pl.GFD_PRODUCT, pl.GKE_ACCELERATOR, pl.INSTANCE_TYPE])
    values = {
        "zone": ["a", "b", "c"],
        "pool": ["serve", "batch"],
        pl.GFD_PRODUCT: ["NVIDIA-A100-SXM4-80GB", "Tesla-T4", "NVIDIA-H100-80GB-HBM3"],
        pl.GKE_ACCELERATOR: ["nvidia-l4", "nvidia-tesla-a100"],
        pl.INSTANCE_TYPE: ["p4d.24xlarge", "g5.xlarge"],
    }[key]
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    return {"key": key, "operator": op, "values": rng.sample(values, rng.randint(1, len(values)))}


def _pod(rng: random.Random) -> dict[str, Any]:
    pod: dict[str, Any] = {}
    if rng.random() < 0.3:
        pod["nodeSelector"] = {"zone": rng.choice(["a", "b"])}
    if rng.random() < 0.6:
        terms = [
            {"matchExpressions": [_expr(rng) for _ in range(rng.randint(1, 3))]}
            for _ in range(rng.randint(1, 2))
        ]
        if rng.random() < 0.1:
            terms.append(
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}
            )
        pod["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    tols: list[dict[str, Any]] = []
    if rng.random() < 0.6:
        tols.append({"key": "nvidia.com/gpu", "operator": "Exists"})
    if rng.random() < 0.2:
        tols.append({"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"})
    if rng.random() < 0.05:
        tols.append({"operator": "Exists"})
    if rng.random() < 0.05:
        tols.append("not-a-toleration")  # type: ignore[arg-type]
    if rng.random() < 0.05:
        pod["nodeSelector"] = {"rank": rng.randint(0, 9)}  # an int a YAML reader gives
    if tols:
        pod["tolerations"] = tols
    return pod


# The node filter before it read the pod once per review (kvlint/cluster.py at 0f5a8830), kept as the reference.


def _old_affinity_ok(pod_spec: Mapping[str, Any], node: Node) -> bool:
    aff = pod_spec.get("affinity")
    na = aff.get("nodeAffinity") if isinstance(aff, Mapping) else None
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(na, Mapping) else None
    terms = req.get("nodeSelectorTerms") if isinstance(req, Mapping) else None
    if not isinstance(terms, list):
        return True
    return any(cluster._term_matches(t, node) for t in terms)


def _old_tolerated(taint: Mapping[str, str], tolerations: list[Any]) -> bool:
    for t in tolerations:
        if not isinstance(t, Mapping):
            continue
        effect = cluster._s(t.get("effect"))
        if effect and effect != taint["effect"]:
            continue
        key, op = cluster._s(t.get("key")), cluster._s(t.get("operator")) or "Equal"
        if op == "Exists":
            if not key or key == taint["key"]:
                return True
        elif key == taint["key"] and cluster._s(t.get("value")) == taint["value"]:
            return True
    return False


def _old_why_not(
    pod_spec: Mapping[str, Any], resource: str | None, count: int | None, node: Node
) -> str | None:
    """None when the pod fits ``node``; otherwise the first failing filter, named."""
    ns = pod_spec.get("nodeSelector")
    if isinstance(ns, Mapping):
        for k, v in ns.items():
            if node.labels.get(str(k)) != cluster._s(v):
                return f"nodeSelector {k}={v}"
    if not _old_affinity_ok(pod_spec, node):
        return "required nodeAffinity"
    tols = cluster._list(pod_spec.get("tolerations"))
    if node.unschedulable and not _old_tolerated(
        {"key": "node.kubernetes.io/unschedulable", "value": "", "effect": "NoSchedule"}, tols
    ):
        return "cordoned (spec.unschedulable)"
    for t in node.taints:
        if t["effect"] in ("NoSchedule", "NoExecute") and not _old_tolerated(t, tols):
            return f"taint {t['key']}{'=' + t['value'] if t['value'] else ''}:{t['effect']} not tolerated"
    if resource:
        have = cluster._int(node.allocatable.get(resource))
        if not have:
            return f"no allocatable {resource}"
        if count is not None and have < count:
            return f"allocatable {resource}={have} < {count}"
    return None


def _inventories() -> Iterator[tuple[random.Random, NodeInventory]]:
    for seed in range(24):
        rng = random.Random(seed)
        n = rng.choice([1, 3, 12, 40])
        yield rng, NodeInventory(tuple(_node(rng, i) for i in range(n)), f"generated-{seed}")


def _per_review(pod: Mapping[str, Any], container: Mapping[str, Any], inv: NodeInventory) -> Any:
    """``placement_from_cluster`` the way it worked before the split: each fitting node's labels read through
    ``resolve_placement`` for this review (``placement_on_node`` swapped for it, one node at a time)."""
    by_facts: dict[int, Node] = {}
    orig = pl.placement_on_node

    def old(facts: pl.NodeFacts, c: Mapping[str, Any]) -> Any:
        return pl.resolve_placement({"nodeSelector": dict(by_facts[id(facts)].labels)}, c, {})

    plain = NodeInventory(
        tuple(
            _Unshared(n.name, dict(n.labels), n.taints, dict(n.allocatable), n.unschedulable)
            for n in inv.nodes
        ),
        inv.source,
    )
    for n in plain.nodes:
        by_facts[id(n.facts)] = n
    pl.placement_on_node = old  # type: ignore[assignment]
    try:
        return placement_from_cluster(pod, container, plain)
    finally:
        pl.placement_on_node = orig  # type: ignore[assignment]


class _Unshared(Node):
    """A node whose facts object is its own (not shared with equal nodes), so the old path reads each node's labels."""

    def __post_init__(self, was: Node | None = None) -> None:
        object.__setattr__(self, "facts", pl.node_facts(self.labels))


def test_node_facts_give_resolve_placements_result_on_every_label_shape() -> None:
    for labels in _GPU_LABELS:
        facts = pl.node_facts(labels)
        for container in _CONTAINERS:
            assert pl.placement_on_node(facts, container) == pl.resolve_placement(
                {"nodeSelector": dict(labels)}, container, {}
            ), (labels, container)


def test_prepared_nodes_place_pods_as_the_per_review_path() -> None:
    checked = 0
    for rng, inv in _inventories():
        for _ in range(6):
            pod = _pod(rng)
            container = rng.choice(_CONTAINERS)
            new = placement_from_cluster(pod, container, inv)
            resource, count, _ = pl._gpu_resource(container)
            pod_filter = cluster._PodFilter.of(pod, resource, count)
            for node in inv.nodes:
                assert pod_filter.why_not(node) == _old_why_not(pod, resource, count, node), (pod, node)
            assert new == _per_review(pod, container, inv), (inv.source, pod, container)
            checked += new.accelerator is not None
    assert checked > 20  # the generated shapes do place pods on GPUs, not only "none fits"


def test_nodes_of_one_pool_share_their_facts_and_a_review_places_each_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = Node(
        "a",
        {pl.GFD_PRODUCT: "NVIDIA-A100-SXM4-80GB", "kubernetes.io/hostname": "a"},
        (),
        {"nvidia.com/gpu": "8"},
    )
    b = Node(
        "b",
        {pl.GFD_PRODUCT: "NVIDIA-A100-SXM4-80GB", "kubernetes.io/hostname": "b"},
        (),
        {"nvidia.com/gpu": "8"},
    )
    t4 = Node("t", {pl.GFD_PRODUCT: "Tesla-T4"}, (), {"nvidia.com/gpu": "1"})
    assert a.facts is b.facts and a.facts is not t4.facts
    calls: list[pl.NodeFacts] = []
    orig = pl.placement_on_node

    def counting(facts: pl.NodeFacts, c: Mapping[str, Any]) -> Any:
        calls.append(facts)
        return orig(facts, c)

    monkeypatch.setattr(pl, "placement_on_node", counting)
    monkeypatch.setattr(pl, "resolve_placement", lambda *a, **k: pytest.fail("labels read during a review"))
    p = placement_from_cluster(
        {}, {"resources": {"limits": {"nvidia.com/gpu": 1}}}, NodeInventory((a, b, t4), "t")
    )
    assert p.accelerator is not None and p.accelerator.id == "nvidia-t4"
    assert len(calls) == 2


def test_hostile_inventory_keeps_one_facts_object_per_distinct_label_set() -> None:
    gc.collect()
    before = len(cluster._facts)
    nodes = tuple(
        Node(f"n{i}", {pl.GFD_PRODUCT: "NVIDIA-H100-80GB-HBM3", "kubernetes.io/hostname": f"n{i}"})
        for i in range(10_000)
    )
    assert len({id(n.facts) for n in nodes}) == 1
    assert len(cluster._facts) <= before + 1
    del nodes
    gc.collect()
    # released with the nodes: a refreshed inventory does not accumulate them
    assert len(cluster._facts) <= before


def test_an_inventory_sent_to_a_worker_keeps_its_facts_and_their_sharing() -> None:
    """The webhook sends the inventory to its review workers pickled (``("options", Options)``): the facts go with
    the nodes (unpickling does not read the labels again) and the nodes of one pool still share one record."""
    import pickle

    rng = random.Random(7)
    inv = NodeInventory(tuple(_node(rng, i) for i in range(40)), "sent")
    back = pickle.loads(pickle.dumps(inv, pickle.HIGHEST_PROTOCOL))
    assert len({id(n.facts) for n in back.nodes}) == len({id(n.facts) for n in inv.nodes})
    for _ in range(10):
        pod, container = _pod(rng), rng.choice(_CONTAINERS)
        assert placement_from_cluster(pod, container, back) == placement_from_cluster(pod, container, inv)


def test_the_shared_facts_table_keeps_no_copy_of_a_long_label_value() -> None:
    """A label value kvlint does not know (an unknown GPU product) is quoted in the node's facts (``how`` and a note):
    the table that shares equal facts must not hold its text a third and fourth time (a ``repr`` key did)."""
    import tracemalloc

    size, n = 64 * 1024, 40
    items = [
        {"metadata": {"name": f"n{i}", "labels": {pl.GFD_PRODUCT: (f"{i:04d}" + "x" * size)[:size]}}}
        for i in range(n)
    ]
    cluster.inventory_from_node_list({"items": items[:1]})  # first use: imports, catalogue
    gc.collect()
    tracemalloc.start()
    try:
        inv = cluster.inventory_from_node_list({"items": items})
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len({id(node.facts) for node in inv.nodes}) == n
    assert sum(str(node.facts).count(node.labels[pl.GFD_PRODUCT]) for node in inv.nodes) == 2 * n
    assert held < 2.5 * size * n, f"{held / n / 1024:.0f} KiB a node for a {size // 1024} KiB label value"


def test_equal_facts_share_a_key_and_different_facts_never_do() -> None:
    shapes = [
        *_GPU_LABELS,
        {pl.GFD_PRODUCT: "a', 'b"},
        {pl.GFD_PRODUCT: "a\\', \\'b"},
        {pl.GFD_PRODUCT: 'a", "b'},
    ]
    facts = [pl.node_facts({**labels, "kubernetes.io/hostname": "h"}) for labels in shapes]
    facts += [pl.node_facts({**labels, "kubernetes.io/hostname": "other"}) for labels in shapes]
    for a in facts:
        for b in facts:
            assert (cluster._facts_key(a) == cluster._facts_key(b)) == (a == b), (a, b)
    shared = pl.NodeFacts(None, None, (True, None, ""), ())
    assert cluster._facts_key(shared) != cluster._facts_key(pl.NodeFacts(None, None, (1, None, ""), ()))  # type: ignore[arg-type]
    hash(cluster._facts_key(facts[0]))


def test_a_nodes_labels_cannot_change_under_its_facts() -> None:
    """``Node.facts`` are read from the labels when the node is made: changing a label in place would filter on the new
    value and place with the old one. The labels refuse it; a new node (``replace``) reads its own facts."""
    import copy
    import pickle
    from dataclasses import replace

    node = cluster.inventory_from_node_list(
        {"items": [{"metadata": {"name": "n", "labels": {pl.GFD_PRODUCT: "Tesla-T4"}}}]}
    ).nodes[0]
    made = Node("m", {pl.GFD_PRODUCT: "Tesla-T4"})
    for n in (node, made):
        for change in (
            lambda labels: labels.__setitem__(pl.GFD_PRODUCT, "NVIDIA-H100-80GB-HBM3"),
            lambda labels: labels.update({pl.GFD_PRODUCT: "NVIDIA-H100-80GB-HBM3"}),
            lambda labels: labels.pop(pl.GFD_PRODUCT),
            lambda labels: labels.setdefault("zone", "a"),
            lambda labels: labels.clear(),
            lambda labels: labels.popitem(),
            lambda labels: labels.__delitem__(pl.GFD_PRODUCT),
            lambda labels: labels.__ior__({"zone": "a"}),
        ):
            with pytest.raises(TypeError):
                change(n.labels)
        assert n.labels == {pl.GFD_PRODUCT: "Tesla-T4"}
        for back in (pickle.loads(pickle.dumps(n)), copy.deepcopy(n), copy.copy(n)):
            assert back == n and type(back.labels) is cluster.NodeLabels
        h100 = replace(n, labels={pl.GFD_PRODUCT: "NVIDIA-H100-80GB-HBM3"})
        assert h100.facts.decision is not None and h100.facts.decision.acc is not None
        assert (
            h100.facts.decision.acc.id
            == pl.resolve_placement({"nodeSelector": dict(h100.labels)}, {}, {}).accelerator.id
        )  # type: ignore[union-attr]


def test_a_relist_or_a_status_only_event_keeps_the_facts_of_unchanged_labels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The watch cache's relist (a ``410 Gone``) and a ``MODIFIED`` event that changes only the status make new
    nodes: those whose labels are unchanged (same keys, values and order) keep their facts instead of reading the
    labels again; a changed label is read, and the placements are those of nodes made afresh."""
    from kvlint.webhook.inventory import node_from_object

    rng = random.Random(3)
    first = NodeInventory(tuple(_node(rng, i) for i in range(30)), "t")
    known = {n.name: n for n in first.nodes}

    def item(n: Node, labels: Mapping[str, str]) -> dict[str, Any]:
        return {
            "metadata": {"name": n.name, "labels": dict(labels)},
            "spec": {"taints": list(n.taints), "unschedulable": not n.unschedulable},
            "status": {"allocatable": dict(n.allocatable)},
        }

    changed = {"n3": {**first.nodes[3].labels, pl.GFD_PRODUCT: "NVIDIA-H100-80GB-HBM3"}}
    changed["n4"] = dict(reversed(list(first.nodes[4].labels.items())))  # equal, in another order
    items = [item(n, changed.get(n.name, n.labels)) for n in first.nodes]
    read: list[Mapping[str, str]] = []
    orig = pl.node_facts

    def counting(labels: Mapping[str, str]) -> pl.NodeFacts:
        read.append(labels)
        return orig(labels)

    monkeypatch.setattr(pl, "node_facts", counting)
    again = cluster.inventory_from_node_list({"items": items}, "t", known)
    assert sorted(labels["kubernetes.io/hostname"] for labels in read) == ["n3", "n4"]
    for old, new in zip(first.nodes, again.nodes, strict=True):
        if new.name not in changed:
            assert new.facts is old.facts, new.name
    fresh = cluster.inventory_from_node_list({"items": items}, "t")
    for new, made in zip(again.nodes, fresh.nodes, strict=True):
        assert new.facts == made.facts
    for _ in range(10):
        pod, container = _pod(rng), rng.choice(_CONTAINERS)
        assert placement_from_cluster(pod, container, again) == placement_from_cluster(pod, container, fresh)
    read.clear()
    event_node = node_from_object(items[5], known)
    assert event_node is not None and event_node.facts is known["n5"].facts and not read
    assert node_from_object(items[3], known).facts == fresh.nodes[3].facts  # type: ignore[union-attr]


def test_the_watch_cache_reads_labels_only_of_nodes_whose_labels_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:class:`~kvlint.webhook.inventory.NodeWatchCache`: a ``MODIFIED`` event that changes only the status and a
    relist (``410 Gone``) do not read unchanged labels again; a relabelled node is read and placed anew."""
    import json
    from types import SimpleNamespace

    from kvlint.webhook.inventory import NodeWatchCache

    nodes = [
        {
            "metadata": {
                "name": f"g{i}",
                "labels": {pl.GFD_PRODUCT: "Tesla-T4", "kubernetes.io/hostname": f"g{i}"},
            },
            "status": {"allocatable": {"nvidia.com/gpu": "1"}},
        }
        for i in range(5)
    ]

    class Api:
        def list_node(self, **_kw: Any) -> Any:
            return SimpleNamespace(
                status=200, data=json.dumps({"items": nodes, "metadata": {"resourceVersion": "9"}})
            )

    cache = NodeWatchCache()
    cache._api = Api()
    cache.relist()
    read: list[Mapping[str, str]] = []
    orig = pl.node_facts
    monkeypatch.setattr(pl, "node_facts", lambda labels: read.append(labels) or orig(labels))
    status_only = {**nodes[0], "spec": {"unschedulable": True}}
    assert cache.apply_event({"type": "MODIFIED", "object": status_only}) and not read
    cache.relist()
    assert not read
    nodes[1]["metadata"]["labels"][pl.GFD_PRODUCT] = "NVIDIA-H100-80GB-HBM3"
    cache.relist()
    assert [labels["kubernetes.io/hostname"] for labels in read] == ["g1"]
    assert cache.inventory is not None
    placed = placement_from_cluster({}, {"resources": {"limits": {"nvidia.com/gpu": 1}}}, cache.inventory)
    assert placed.candidates and {a.id for a in placed.candidates} == {"nvidia-t4", "nvidia-h100-sxm5-80gb"}


def test_facts_that_cannot_be_hashed_are_kept_unshared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table shares facts by their fields' values; a value that cannot be hashed (a dict a later field might hold)
    leaves those facts unshared instead of failing to build the node."""
    odd = pl.NodeFacts(None, None, (False, None, ""), ({"a": "b"},))  # type: ignore[arg-type]
    monkeypatch.setattr(pl, "node_facts", lambda labels: odd)
    node = Node("n", {"x": "y"})
    assert node.facts is odd
