"""Tests for kvlint.cluster: the live-cluster inventory through the real ``kubernetes`` client, against a
local HTTP server on 127.0.0.1 speaking the Kubernetes API for ``GET /api/v1/nodes`` (NodeList JSON from
fixtures/cluster/nodes.json, see its SOURCE.md), and scheduling-filter placement on those nodes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kvlint import cluster
from kvlint.accelerators import registry as cat
from kvlint.cluster import (
    ClusterUnavailable,
    inventory_from_node_list,
    load_inventory,
    placement_from_cluster,
)

ROOT = Path(__file__).resolve().parent.parent
NODES = json.loads((ROOT / "fixtures" / "cluster" / "nodes.json").read_text(encoding="utf-8"))
TOKEN = "kvlint-test-token"
PAGE = 4


class _Api(BaseHTTPRequestHandler):
    """GET /api/v1/nodes with bearer-token check and ``limit``/``continue`` pagination (pages of 4)."""

    status = 200
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        u = urlsplit(self.path)
        type(self).seen.append(self.path)
        if u.path != "/api/v1/nodes":
            self._send(404, {"kind": "Status", "code": 404})
            return
        if self.headers.get("Authorization") != f"Bearer {TOKEN}" or type(self).status == 401:
            self._send(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
            return
        if type(self).status != 200:
            self._send(type(self).status, {"kind": "Status", "code": type(self).status})
            return
        q = parse_qs(u.query)
        start = int(q.get("continue", ["0"])[0])
        items = NODES["items"][start : start + PAGE]
        nxt = start + PAGE
        meta = {"resourceVersion": "1"} | ({"continue": str(nxt)} if nxt < len(NODES["items"]) else {})
        self._send(200, {"kind": "NodeList", "apiVersion": "v1", "metadata": meta, "items": items})

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def _kubeconfig(tmp_path: Path, server: str, name: str = "kubeconfig") -> str:
    text = f"""apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: {server}
users:
- name: tester
  user:
    token: {TOKEN}
contexts:
- name: test-ctx
  context:
    cluster: test
    user: tester
- name: other
  context:
    cluster: test
    user: tester
current-context: test-ctx
"""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[str]:
    cluster.clear_cache()
    _Api.status = 200
    _Api.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield _kubeconfig(tmp_path, f"http://127.0.0.1:{srv.server_address[1]}")
    finally:
        srv.shutdown()
        srv.server_close()
        cluster.clear_cache()


def _gpu_pod(n: int = 1, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    c = {"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": n}}}
    pod = {"containers": [c], **spec}
    return pod, c


GPU_TOL = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_inventory_through_kubernetes_client_paginates_and_is_cached(api: str) -> None:
    inv = load_inventory(api, "test-ctx")
    assert [n.name for n in inv.nodes] == [i["metadata"]["name"] for i in NODES["items"]]
    assert len(_Api.seen) == 2 and "continue=4" in _Api.seen[1]  # two pages of the NodeList
    a100 = inv.nodes[0]
    assert a100.labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
    assert a100.allocatable["nvidia.com/gpu"] == "8"
    assert a100.taints == ({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},)
    assert inv.nodes[4].unschedulable
    assert load_inventory(api, "test-ctx") is inv and len(_Api.seen) == 2  # cached per run
    assert "context test-ctx" in inv.source


def test_errors_are_clear(api: str, tmp_path: Path, refused_port: int) -> None:
    with pytest.raises(ClusterUnavailable, match="context"):
        load_inventory(api, "no-such-context")
    with pytest.raises(ClusterUnavailable, match="cannot read kubeconfig"):
        load_inventory(str(tmp_path / "missing"), None)
    _Api.status = 403
    with pytest.raises(ClusterUnavailable, match="RBAC 'list' on 'nodes'"):
        load_inventory(api, "other")
    # a port nobody listens on (held by tests/conftest.py's fixture): refused quickly, with the server named
    port = refused_port
    dead = _kubeconfig(tmp_path, f"http://127.0.0.1:{port}", "dead")
    with pytest.raises(ClusterUnavailable, match=f"127.0.0.1:{port} is unreachable"):
        load_inventory(dead, None)


def test_gpu_pod_without_tolerations_fits_only_untainted_gpu_nodes(api: str) -> None:
    inv = load_inventory(api, None)
    pod, c = _gpu_pod(1)
    p = placement_from_cluster(pod, c, inv)
    # untainted and schedulable: the MIG node and the time-sliced L4; the worst case is the 1g.10gb slice
    assert p.accelerator is not None and p.accelerator.id == "nvidia-h100-sxm5-80gb"
    mig = cat.mig_profile("nvidia-h100-sxm5-80gb", "1g.10gb")[0]
    assert mig is not None and p.memory_bytes == mig.memory_bytes
    assert {a.id for a in p.candidates} == {"nvidia-h100-sxm5-80gb", "nvidia-l4"}
    assert p.shared  # the L4 node is -SHARED
    assert "2 of 6 nodes fit" in p.how and "gpu-h100-mig" in p.how


def test_tolerations_and_selector_pick_the_pool(api: str) -> None:
    inv = load_inventory(api, None)
    pod, c = _gpu_pod(4, tolerations=GPU_TOL, nodeSelector={"pool": "serving"})
    p = placement_from_cluster(pod, c, inv)
    # serving pool: GKE L4 (tainted, tolerated), MIG node; the H100 node is cordoned
    assert p.accelerator is not None
    assert {a.id for a in p.candidates} == {"nvidia-l4", "nvidia-h100-sxm5-80gb"}
    assert p.gpus == 4 and p.resource == "nvidia.com/gpu"
    # the training pool holds the A100 node only (tainted, tolerated)
    pod8, c8 = _gpu_pod(8, tolerations=GPU_TOL, nodeSelector={"pool": "training"})
    q = placement_from_cluster(pod8, c8, inv)
    assert q.accelerator is not None and q.accelerator.id == "nvidia-a100-sxm4-80gb" and not q.candidates
    assert q.memory_bytes == q.accelerator.memory_bytes  # gpu.memory 81920 matches the catalogue within 2%


def test_required_affinity_operators_on_live_labels(api: str) -> None:
    inv = load_inventory(api, None)

    def aff(*exprs: dict[str, Any]) -> dict[str, Any]:
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": list(exprs)}]
                }
            }
        }

    pod, c = _gpu_pod(1, tolerations=GPU_TOL)
    big = aff({"key": "nvidia.com/gpu.memory", "operator": "Gt", "values": ["40000"]})
    p = placement_from_cluster({**pod, "affinity": big}, c, inv)
    assert p.accelerator is not None and p.accelerator.id == "nvidia-a100-sxm4-80gb"  # H100 node is cordoned
    no_mig = aff(
        {"key": "nvidia.com/mig.strategy", "operator": "DoesNotExist"},
        {"key": "nvidia.com/gpu.product", "operator": "NotIn", "values": ["NVIDIA-L4-SHARED"]},
    )
    q = placement_from_cluster({**pod, "affinity": no_mig}, c, inv)
    assert {a.id for a in q.candidates} == {"nvidia-a100-sxm4-80gb", "nvidia-l4"}
    assert q.accelerator is not None and q.accelerator.id == "nvidia-l4" and not q.shared


def test_no_node_fits_says_why(api: str) -> None:
    inv = load_inventory(api, None)
    pod, c = _gpu_pod(64, tolerations=GPU_TOL)
    p = placement_from_cluster(pod, c, inv)
    assert p.accelerator is None
    assert "none of 6 nodes can run the pod" in p.how and "allocatable nvidia.com/gpu=8 < 64" in p.how
    assert "cordoned" in p.how and "no allocatable nvidia.com/gpu: cpu-1" in p.how
    q = placement_from_cluster(*_gpu_pod(1, nodeSelector={"pool": "training"}), inv)
    assert q.accelerator is None and "taint nvidia.com/gpu=present:NoSchedule not tolerated" in q.how


def test_inventory_from_malformed_node_list() -> None:
    inv = inventory_from_node_list(
        {"items": [None, {"metadata": {}}, {"metadata": {"name": "n"}, "spec": 3}]}
    )
    assert [n.name for n in inv.nodes] == ["n"] and inv.nodes[0].labels == {}
    with pytest.raises(ClusterUnavailable):
        inventory_from_node_list({"kind": "Status"})
    # bad manifests never raise
    p = placement_from_cluster({"nodeSelector": "x", "affinity": 3}, {"resources": []}, inv)  # type: ignore[dict-item]
    assert p.accelerator is None
