"""What one review's ``--cluster`` placement costs with N GKE nodes, in counts, not wall time.

    python bench/cluster_placement.py --nodes 200 [--reviews 10] [--run]

Builds a NodeList of N nodes shaped like GKE's (the labels GKE puts on a node: ``cloud.google.com/gke-nodepool``,
``cloud.google.com/gke-accelerator`` on the GPU pools, zone, instance type, hostname ...; the GPU pools tainted
``nvidia.com/gpu=present:NoSchedule`` as GKE does), a quarter each of L4, A100 40GB, H100 80GB and CPU-only nodes,
reads it with ``kvlint.cluster.inventory_from_node_list`` (what a LIST or a watch event does), then places a
1-GPU container tolerating the GPU taint ``--reviews`` times with ``placement_from_cluster``.

Prints the Python function calls (``sys.setprofile`` events ``call`` and ``c_call``) of reading the inventory and
of one review: deterministic, unlike time on a shared machine. With ``--run`` it counts nothing and only does the
work, for ``valgrind --tool=callgrind`` (run it with ``--reviews 0`` and ``--reviews R`` and subtract to get a
review's instructions; one review is made first in both, so the first use's imports and catalogue
cancel). Works on any kvlint that has ``inventory_from_node_list`` (to compare with main).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kvlint.cluster import inventory_from_node_list, placement_from_cluster

POOLS = [
    ("l4", "g2-standard-24", "nvidia-l4", "2"),
    ("a100", "a2-highgpu-8g", "nvidia-tesla-a100", "8"),
    ("h100", "a3-highgpu-8g", "nvidia-h100-80gb", "8"),
    ("cpu", "n2-standard-16", None, None),
]


def node_list(n: int) -> dict[str, Any]:
    items = []
    for i in range(n):
        pool, machine, acc, gpus = POOLS[i % len(POOLS)]
        name = f"gke-prod-{pool}-pool-{i:05d}"
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": machine,
            "beta.kubernetes.io/os": "linux",
            "cloud.google.com/gke-boot-disk": "pd-balanced",
            "cloud.google.com/gke-container-runtime": "containerd",
            "cloud.google.com/gke-nodepool": f"{pool}-pool",
            "cloud.google.com/gke-os-distribution": "cos",
            "cloud.google.com/machine-family": machine.split("-")[0],
            "failure-domain.beta.kubernetes.io/region": "us-central1",
            "failure-domain.beta.kubernetes.io/zone": "us-central1-" + "abc"[i % 3],
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": machine,
            "topology.kubernetes.io/region": "us-central1",
            "topology.kubernetes.io/zone": "us-central1-" + "abc"[i % 3],
        }
        alloc = {"cpu": "23", "memory": "90Gi", "pods": "110"}
        taints = []
        if acc:
            labels["cloud.google.com/gke-accelerator"] = acc
            labels["cloud.google.com/gke-gpu-driver-version"] = "default"
            alloc["nvidia.com/gpu"] = gpus or "0"
            taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        items.append(
            {
                "metadata": {"name": name, "labels": labels},
                "spec": {"taints": taints},
                "status": {"allocatable": alloc},
            }
        )
    return {"kind": "NodeList", "apiVersion": "v1", "items": items}


POD = {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
CONTAINER = {"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": 1}}}


def counted(fn: Any) -> tuple[Any, int]:
    calls = 0

    def prof(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(prof)
    try:
        out = fn()
    finally:
        sys.setprofile(None)
    return out, calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--reviews", type=int, default=10)
    ap.add_argument("--run", action="store_true", help="no counting (for callgrind)")
    args = ap.parse_args()
    if not 0 < args.nodes <= 100_000 or not 0 <= args.reviews <= 10_000:
        ap.error("--nodes 1..100000, --reviews 0..10000")
    data = node_list(args.nodes)
    if args.run:
        inv = inventory_from_node_list(data)
        placement_from_cluster(POD, CONTAINER, inv)  # first use: imports, catalogue (in both runs subtracted)
        for _ in range(args.reviews):
            placement_from_cluster(POD, CONTAINER, inv)
        return
    inv, read_calls = counted(lambda: inventory_from_node_list(data))
    placement_from_cluster(POD, CONTAINER, inv)  # first use: imports, catalogue
    p, review_calls = counted(lambda: placement_from_cluster(POD, CONTAINER, inv))
    print(f"nodes {args.nodes}: read inventory {read_calls:,} calls; one review {review_calls:,} calls")
    print(f"  {p.accelerator.id if p.accelerator else None}: {p.how}")


if __name__ == "__main__":
    main()
