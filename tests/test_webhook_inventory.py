"""The webhook's ``--cluster`` node-label cache (kvlint.webhook.inventory) through the real ``kubernetes``
client, against a Kubernetes API stub on 127.0.0.1: ``GET /api/v1/nodes`` answers a NodeList (nodes from
fixtures/cluster/nodes.json, see its SOURCE.md) and ``GET /api/v1/nodes?watch=true`` a chunked stream of
JSON watch-event lines that each test feeds (ADDED / MODIFIED / DELETED, ERROR 410). Every stream and
retry is bounded: the stub ends a watch after its ``timeoutSeconds``, and tests wait for what they expect
(at most WAIT_S seconds: a deadline for a hung client, not a bound the behaviour is measured against).
"""

from __future__ import annotations

import copy
import json
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from kvlint.cluster import inventory_from_node_list
from kvlint.load import load_text
from kvlint.pipeline import run_documents
from kvlint.webhook.inventory import NodeWatchCache, backoff_delay
from kvlint.webhook.review import WebhookSettings, webhook_options

ROOT = Path(__file__).resolve().parent.parent
NODES = json.loads((ROOT / "fixtures" / "cluster" / "nodes.json").read_text(encoding="utf-8"))["items"]
B01 = ROOT / "fixtures" / "webhook" / "b01-llama8b-l4-default-context.yaml"
TOKEN = "kvlint-test-token"
END = object()  # ends the current watch stream
WAIT_S = 30.0


class Stub:
    """State of the fake API server: the nodes a LIST returns, its resourceVersion, queued watch events,
    and what the client asked for."""

    def __init__(self) -> None:
        self.nodes: list[dict[str, Any]] = copy.deepcopy(NODES)
        self.rv = 100
        self.list_status = 200
        self.watch_status = 200
        self.lists: list[dict[str, list[str]]] = []
        self.watches: list[dict[str, list[str]]] = []
        self.events: queue.Queue[Any] = queue.Queue()
        self.closing = threading.Event()

    def push(self, kind: str, node: dict[str, Any]) -> None:
        """Queue a watch event for ``node`` with a fresh resourceVersion."""
        self.rv += 1
        obj = copy.deepcopy(node)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.put({"type": kind, "object": obj})

    def expire(self) -> None:
        """Queue the ERROR event an API server sends when the watch's resourceVersion is too old."""
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "message": "too old resource version: 100 (105)",
            "reason": "Expired",
            "code": 410,
        }
        self.events.put({"type": "ERROR", "object": status})


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Api(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            u = urlsplit(self.path)
            q = parse_qs(u.query)
            if u.path != "/api/v1/nodes":
                return self._send(404, {"kind": "Status", "code": 404})
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._send(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
            if q.get("watch") == ["true"]:
                stub.watches.append(q)
                if stub.watch_status != 200:
                    code = stub.watch_status
                    return self._send(code, {"kind": "Status", "code": code, "reason": "Expired"})
                return self._stream(float(q.get("timeoutSeconds", ["5"])[0]))
            stub.lists.append(q)
            if stub.list_status != 200:
                return self._send(stub.list_status, {"kind": "Status", "code": stub.list_status})
            body = {
                "kind": "NodeList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": str(stub.rv)},
                "items": stub.nodes,
            }
            return self._send(200, body)

        def _stream(self, timeout_s: float) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            deadline = time.monotonic() + timeout_s
            try:
                while time.monotonic() < deadline and not stub.closing.is_set():
                    try:
                        item = stub.events.get(timeout=0.02)
                    except queue.Empty:
                        continue
                    if item is END:
                        break
                    line = json.dumps(item).encode() + b"\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                    self.wfile.flush()
                    if item["type"] == "ERROR":
                        break
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:  # the client shut the socket down (Watch.stop)
                self.close_connection = True

        def _send(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return Api


def _kubeconfig(tmp_path: Path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {{server: "{server}"}}
users:
- name: tester
  user: {{token: {TOKEN}}}
contexts:
- name: test-ctx
  context: {{cluster: test, user: tester}}
current-context: test-ctx
""",
        encoding="utf-8",
    )
    return str(path)


@pytest.fixture()
def api(tmp_path: Path) -> Iterator[tuple[Stub, str]]:
    stub = Stub()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield stub, _kubeconfig(tmp_path, f"http://127.0.0.1:{srv.server_address[1]}")
    finally:
        stub.closing.set()
        srv.shutdown()
        srv.server_close()


def _cache(kubeconfig: str, **kw: Any) -> NodeWatchCache:
    kw.setdefault("watch_timeout_seconds", 2)
    return NodeWatchCache(
        kubeconfig, "test-ctx", backoff_base=0.05, backoff_max=0.2, rng=random.Random(7), **kw
    )


def _until(cond: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def _labels(cache: NodeWatchCache, name: str) -> dict[str, str] | None:
    inv = cache.inventory
    node = next((n for n in inv.nodes if n.name == name), None) if inv else None
    return node.labels if node else None


def _node(name: str) -> dict[str, Any]:
    return copy.deepcopy(next(n for n in NODES if n["metadata"]["name"] == name))


def _relabel(node: dict[str, Any], product: str, memory_mib: str) -> dict[str, Any]:
    node["metadata"]["labels"]["nvidia.com/gpu.product"] = product
    node["metadata"]["labels"]["nvidia.com/gpu.memory"] = memory_mib
    return node


def test_snapshot_follows_list_then_watch_events_and_relists_on_410(api: tuple[Stub, str]) -> None:
    stub, kubeconfig = api
    # watches far longer than the test: the one open at the end must be shut down by stop(), not waited out
    cache = _cache(kubeconfig, watch_timeout_seconds=600)
    assert cache.not_ready_reason() is not None
    cache.start()
    try:
        _until(lambda: cache.inventory is not None and stub.watches, "first LIST and WATCH")
        assert cache.not_ready_reason() is None
        assert [n.name for n in cache.inventory.nodes] == [n["metadata"]["name"] for n in NODES]  # type: ignore[union-attr]
        assert stub.watches[0]["resourceVersion"] == ["100"]  # watch starts at the LIST's resourceVersion
        first = cache.inventory

        new = _relabel(_node("gpu-l4-shared"), "NVIDIA-A10G", "23028")
        new["metadata"]["name"] = "gpu-a10g-1"
        stub.push("ADDED", new)
        _until(lambda: _labels(cache, "gpu-a10g-1") is not None, "ADDED applied")
        stub.push("MODIFIED", _relabel(_node("gpu-a100-80"), "NVIDIA-L4", "23034"))
        _until(
            lambda: (_labels(cache, "gpu-a100-80") or {}).get("nvidia.com/gpu.product") == "NVIDIA-L4",
            "MODIFIED",
        )
        stub.push("DELETED", _node("cpu-1"))
        _until(lambda: _labels(cache, "cpu-1") is None, "DELETED applied")
        assert cache.resource_version == str(stub.rv) == "103"
        # snapshots are immutable and replaced, never edited in place
        assert first is not None and len(first.nodes) == len(NODES)
        assert first.nodes[0].labels["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB"
        assert len(stub.lists) == 1

        # the API server compacted past our resourceVersion: the next LIST is the truth, including a node
        # no event announced and without the ADDED one
        stub.nodes = [_node("gpu-h100-mig"), _node("gpu-h100-cordoned")]
        stub.rv = 500
        stub.expire()
        _until(lambda: len(stub.lists) == 2 and len(stub.watches) >= 2, "re-LIST after 410")
        _until(lambda: cache.inventory is not None and len(cache.inventory.nodes) == 2, "relisted snapshot")
        assert [n.name for n in cache.inventory.nodes] == ["gpu-h100-mig", "gpu-h100-cordoned"]  # type: ignore[union-attr]
        assert stub.watches[-1]["resourceVersion"] == ["500"]
        assert cache.stats["expired"] == 1 and cache.stats["failures"] == 0

        # a watch the server ends normally resumes from the last event's resourceVersion, without a LIST
        stub.push("MODIFIED", _node("gpu-h100-mig"))
        _until(lambda: cache.resource_version == "501", "event after relist")
        stub.events.put(END)
        _until(lambda: len(stub.watches) >= 3, "resumed watch")
        assert stub.watches[-1]["resourceVersion"] == ["501"] and len(stub.lists) == 2
        assert stub.watches[-1]["timeoutSeconds"] == ["600"] and stub.watches[-1]["allowWatchBookmarks"] == [
            "true"
        ]
    finally:
        thread = cache._thread
        cache.stop(timeout=WAIT_S)
    # the open watch (600 s) is shut down, not waited out: the thread ended within stop()'s join
    assert thread is not None and not thread.is_alive()
    assert cache._thread is None


def test_unreachable_api_server_backs_off_and_stays_not_ready(tmp_path: Path, refused_port: int) -> None:
    port = refused_port  # nothing listens there for the whole test (tests/conftest.py)
    pytest.importorskip("prometheus_client")
    from kvlint.webhook.metrics import WebhookMetrics

    metrics = WebhookMetrics()
    cache = _cache(_kubeconfig(tmp_path, f"http://127.0.0.1:{port}"), metrics=metrics)
    cache.start()
    try:
        _until(lambda: cache.stats["failures"] >= 3, "three failed LISTs")
        assert cache.inventory is None and cache.not_ready_reason() == "node inventory not listed yet"
        failed = metrics.registry.get_sample_value(
            "kvlint_webhook_inventory_refreshes_total", {"result": "failed"}
        )
        assert failed is not None and failed >= 3
    finally:
        cache.stop()
    options = webhook_options()
    assert cache.options_for(options) is options  # nothing to add before the first LIST


def test_list_errors_then_recovery(api: tuple[Stub, str]) -> None:
    stub, kubeconfig = api
    stub.list_status = 500
    cache = _cache(kubeconfig)
    cache.start()
    try:
        _until(lambda: len(stub.lists) >= 2, "retried LIST")
        assert cache.inventory is None and not stub.watches
        stub.list_status = 200
        _until(lambda: cache.inventory is not None, "LIST after recovery")
        inv: Any = cache.inventory
        assert len(inv.nodes) == len(NODES)
    finally:
        cache.stop()


def test_failed_watch_resumes_and_http_410_relists(api: tuple[Stub, str]) -> None:
    stub, kubeconfig = api
    cache = _cache(kubeconfig)
    cache.start()
    try:
        _until(lambda: stub.watches, "first WATCH")
        stub.push("MODIFIED", _node("gpu-l4-shared"))
        _until(lambda: cache.resource_version == "101", "event")
        stub.watch_status = 500
        stub.events.put(END)
        _until(lambda: cache.stats["failures"] >= 2, "failed watches")
        # a failed WATCH is retried from the last resourceVersion, with no new LIST
        assert len(stub.lists) == 1 and stub.watches[-1]["resourceVersion"] == ["101"]
        assert cache.inventory is not None and cache.not_ready_reason() is None  # stale, still serving
        stub.rv = 300
        stub.watch_status = 410  # the watch request itself answered 410 Gone
        # (at least one: each WATCH answered 410 until it is reset below makes another LIST, so a poll for
        # exactly two could miss its moment)
        _until(lambda: len(stub.lists) >= 2, "re-LIST after HTTP 410")
        stub.watch_status = 200
        _until(lambda: stub.watches[-1].get("resourceVersion") == ["300"], "WATCH from the new LIST")
        assert cache.stats["expired"] >= 1
    finally:
        cache.stop()


def test_backoff_is_bounded_exponential_and_jittered() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, 0.5, 30.0, rng) for n in range(1, 12)]
    for n, d in enumerate(delays, start=1):
        step = min(30.0, 0.5 * 2 ** (n - 1))
        assert step / 2 <= d <= step
    assert max(delays) <= 30.0 and delays[-1] >= 15.0
    assert len({round(backoff_delay(3, 0.5, 30.0, rng), 6) for _ in range(20)}) > 1  # jittered
    assert backoff_delay(10**6, 0.5, 30.0, rng) <= 30.0  # no overflow on long outages


def _review(obj: dict[str, Any], uid: str) -> dict[str, Any]:
    request = {
        "uid": uid,
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": obj["metadata"]["name"],
        "namespace": "serving",
        "operation": "CREATE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": None,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def test_webhook_reviews_follow_a_node_label_change(api: tuple[Stub, str]) -> None:
    pytest.importorskip("starlette")
    pytest.importorskip("httpx")
    pytest.importorskip("prometheus_client")
    from starlette.testclient import TestClient

    from kvlint.webhook.app import create_app
    from kvlint.webhook.metrics import WebhookMetrics
    from kvlint.workloads import find_workloads

    stub, kubeconfig = api
    # b01's Deployment, sent to the training pool (only gpu-a100-80) instead of naming the GPU itself
    w = find_workloads(load_text(B01.read_bytes(), str(B01)).documents)[0]
    obj = json.loads(json.dumps(w.doc.data))
    spec = obj["spec"]["template"]["spec"]
    spec["nodeSelector"] = {"pool": "training"}
    spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def expected_rules(nodes: list[dict[str, Any]]) -> set[str]:
        opts = webhook_options(cluster_inventory=inventory_from_node_list({"items": nodes}))
        res = run_documents(load_text(json.dumps(obj, indent=1), "b01.json"), opts)
        return {d.rule for d in res.diagnostics if d.severity == "error"}

    metrics = WebhookMetrics()
    cache = _cache(kubeconfig, metrics=metrics)
    settings = WebhookSettings(timeout_seconds=5.0, workers=1, options=webhook_options())
    stub.list_status = 503  # readiness waits for the first successful LIST
    app = create_app(
        settings,
        metrics=metrics,
        background=[cache],
        readiness=[cache.not_ready_reason],
        options_hook=cache.options_for,
        warm_up=False,
    )
    with TestClient(app) as client:
        _until(lambda: stub.lists, "first LIST attempt")
        r = client.get("/readyz")
        assert r.status_code == 503 and "node inventory" in r.text
        stub.list_status = 200
        _until(lambda: client.get("/readyz").status_code == 200 and stub.watches, "ready")

        before = client.post("/validate", json=_review(obj, "uid-before")).json()["response"]
        relabelled = _relabel(_node("gpu-a100-80"), "NVIDIA-L4", "23034")
        stub.push("MODIFIED", relabelled)
        _until(
            lambda: (_labels(cache, "gpu-a100-80") or {}).get("nvidia.com/gpu.product") == "NVIDIA-L4",
            "event",
        )
        after = client.post("/validate", json=_review(obj, "uid-after")).json()["response"]
        metrics_text = client.get("/metrics").text

    # the review after the event was planned on the relabelled node's GPU (reviews run in worker processes,
    # which get the new inventory with the next review's options)
    assert "L4" in after["status"]["message"] and "L4" not in json.dumps(before)
    # the verdicts are those of `kvlint check`'s pipeline on the same nodes, and they differ
    rules_before = expected_rules(NODES)
    nodes_after = [relabelled if n["metadata"]["name"] == "gpu-a100-80" else n for n in NODES]
    rules_after = expected_rules(nodes_after)
    assert rules_before != rules_after
    assert before["allowed"] is (not rules_before) and after["allowed"] is (not rules_after)
    for rule in rules_after:
        assert rule in after["status"]["message"]
    assert 'kvlint_webhook_inventory_refreshes_total{result="ok"} 1.0' in metrics_text
    assert 'kvlint_webhook_inventory_refreshes_total{result="event"} 1.0' in metrics_text
    assert 'kvlint_webhook_inventory_refreshes_total{result="failed"}' in metrics_text
    assert cache._thread is None  # the app's lifespan stopped the cache
