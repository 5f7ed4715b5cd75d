"""``--cluster`` for the webhook: a node-label cache kept by a LIST + WATCH of ``/api/v1/nodes``.

:class:`NodeWatchCache` follows the Kubernetes "list then watch" pattern (client-go's reflector; API
concepts, "Efficient detection of changes", kubernetes.io, v1.30) with the official ``kubernetes`` client:

1. LIST: ``CoreV1Api.list_node`` (pages of 500) gives every node and the list's
   ``metadata.resourceVersion``;
2. WATCH: ``kubernetes.watch.Watch().stream(v1.list_node, resource_version=RV, timeout_seconds=T,
   allow_watch_bookmarks=True)`` yields ``ADDED`` / ``MODIFIED`` / ``DELETED`` events (and
   ``BOOKMARK`` events that only advance RV), each applied to a private name -> node map; after each event a
   new immutable :class:`~kvlint.cluster.NodeInventory` is built and swapped in with one attribute
   assignment (atomic under the GIL). When the server ends the watch after ``T`` seconds, the next watch
   resumes from the last RV seen, without a new LIST;
3. ``410 Gone`` (an ``ERROR`` event with code 410, "too old resource version", or an HTTP 410): the RV
   has left the API server's watch cache, so the cache LISTs again and watches from the new RV;
4. any other failure (connection refused or reset, timeout, 5xx, 401/403, bad kubeconfig): logged,
   counted, then retried after a bounded, jittered exponential back-off (:func:`backoff_delay`); a
   failed WATCH resumes from the last RV (a 410 then forces the LIST), a failed LIST is retried.

Reviews only read :attr:`NodeWatchCache.inventory` (no network call on the request path). ``/readyz``
stays 503 until the first LIST succeeded; afterwards a failing watch keeps the last snapshot (logged and
counted: the webhook keeps answering with slightly stale labels rather than going unready).
:meth:`NodeWatchCache.stop` sets a flag, shuts the watch socket down (``Watch.stop``) and joins the
thread; requests carry client-side timeouts so a hung API server cannot hold shutdown.

Metrics: ``kvlint_webhook_inventory_refreshes_total{result}`` with ``result`` ``ok`` (a LIST
succeeded), ``failed`` (a LIST failed), ``expired`` (410: re-LIST), ``watch_error`` (a WATCH failed),
``event`` (a watch event applied). Logs: ``node inventory listed`` / ``node watch expired`` /
``node inventory list failed`` / ``node watch failed`` (JSON fields: nodes, resource_version, error,
retry_in_s); each applied event at debug level.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kvlint.cluster import ClusterUnavailable, Node, NodeInventory, inventory_from_node_list

#: (connect, read) client timeouts in seconds for LIST requests.
LIST_TIMEOUT_S = (5.0, 30.0)


def backoff_delay(failures: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number ``failures`` (1 = the first failure).

    Exponential ``base * 2**(failures-1)``, capped at ``cap``, then "equal jitter": a uniform draw in
    ``[d/2, d]`` so replicas that lost the API server together do not retry in lock step, while the wait
    never drops below half the step. Always within ``[base/2, cap]`` (seconds).
    """
    step = min(cap, base * (2.0 ** min(max(failures, 1) - 1, 30)))
    return (rng or random).uniform(step / 2.0, step)


def core_v1_api(kubeconfig: str | None, context: str | None) -> tuple[Any, str]:
    """:func:`kvlint.cluster.core_v1_api` without urllib3 retries (the cache retries itself, with back-off).
    Returns ``(api, description of the source)``; raises ClusterUnavailable as that function does."""
    from kvlint.cluster import core_v1_api as _api

    api, where, _host = _api(kubeconfig, context, retries=0)
    return api, where


def node_from_object(obj: Any, previous: Mapping[str, Node] | None = None) -> Node | None:
    """A :class:`~kvlint.cluster.Node` from one ``Node`` JSON object (a watch event's object), parsed as
    :func:`kvlint.cluster.inventory_from_node_list` parses list items (``previous``: the nodes known, whose facts
    a node of the same name and labels keeps); None when it has no name."""
    inv = inventory_from_node_list({"items": [obj]}, previous=previous)
    return inv.nodes[0] if inv.nodes else None


def _rv(obj: Any) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    rv = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return str(rv) if rv else None


class NodeWatchCache:
    """Node-label cache for ``--cluster``: LIST once, then WATCH ``/api/v1/nodes`` in a daemon thread.

    Args:
        kubeconfig, context: as :func:`kvlint.cluster.load_inventory` (None, None = in-cluster).
        metrics: a :class:`~kvlint.webhook.metrics.WebhookMetrics` or None (see the module docstring).
        logger: where the JSON log records go (``kvlint.webhook`` by default).
        watch_timeout_seconds: ``timeoutSeconds`` of each WATCH request (the server ends the stream then
            and the cache resumes from the last resourceVersion); the client read timeout is 15 s more.
        backoff_base, backoff_max: back-off in seconds after failures (:func:`backoff_delay`).
        rng: jitter source (tests pass a seeded ``random.Random``).

    Thread safety: only the cache thread writes; :attr:`inventory` is replaced, never mutated.
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        metrics: Any = None,
        logger: logging.Logger | None = None,
        watch_timeout_seconds: int = 300,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        rng: random.Random | None = None,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.metrics = metrics
        self.logger = logger or logging.getLogger("kvlint.webhook")
        self.watch_timeout_seconds = max(1, int(watch_timeout_seconds))
        self.backoff_base = backoff_base
        self.backoff_max = max(backoff_max, backoff_base)
        self._rng = rng or random.Random()
        #: The current snapshot (None until the first LIST succeeded). Read it, never mutate it.
        self.inventory: NodeInventory | None = None
        #: resourceVersion the next WATCH starts from (the last LIST's, then the last event's).
        self.resource_version: str | None = None
        #: Counts since start: ``lists``, ``watches``, ``events``, ``expired``, ``failures``.
        self.stats = {"lists": 0, "watches": 0, "events": 0, "expired": 0, "failures": 0}
        self._nodes: dict[str, Node] = {}
        self._source = "cluster"
        self._api: Any = None
        self._watch: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- readiness and the request path -------------------------------------------------------------

    def not_ready_reason(self) -> str | None:
        """A ``/readyz`` check: a reason string until the first LIST succeeded, then None."""
        return None if self.inventory is not None else "node inventory not listed yet"

    def options_for(self, options: Any) -> Any:
        """``options`` (a :class:`~kvlint.pipeline.Options`) with ``cluster_inventory`` set to the current
        snapshot; unchanged before the first LIST. One attribute read: never blocks, no network."""
        inv = self.inventory
        return options if inv is None else replace(options, cluster_inventory=inv)

    # -- LIST and WATCH -----------------------------------------------------------------------------

    def _count(self, result: str) -> None:
        if self.metrics is not None:
            self.metrics.inventory_refreshes.labels(result).inc()

    def _publish(self) -> None:
        self.inventory = NodeInventory(tuple(self._nodes.values()), self._source)

    def _client(self) -> Any:
        if self._api is None:
            self._api, where = core_v1_api(self.kubeconfig, self.context)
            self._source = f"watch of {where}"
        return self._api

    def relist(self) -> NodeInventory:
        """LIST every node (paginated), replace the snapshot, and remember the list's resourceVersion.

        Raises:
            ClusterUnavailable: bad kubeconfig, or the answer is not a NodeList.
            kubernetes.client.rest.ApiException, urllib3 errors: the request failed.
        """
        api = self._client()
        items: list[Any] = []
        cont: str | None = None
        rv: str | None = None
        while True:
            kw: dict[str, Any] = {"limit": 500, "_preload_content": False, "_request_timeout": LIST_TIMEOUT_S}
            if cont:
                kw["_continue"] = cont
            resp = api.list_node(**kw)
            status = getattr(resp, "status", 200)
            if isinstance(status, int) and not 200 <= status <= 299:
                raise ClusterUnavailable(f"{self._source}: GET /api/v1/nodes answered HTTP {status}")
            try:
                page = json.loads(resp.data)
            except (ValueError, TypeError) as e:
                raise ClusterUnavailable(
                    f"{self._source}: GET /api/v1/nodes did not return JSON ({e})"
                ) from None
            if not isinstance(page, Mapping) or not isinstance(page.get("items"), list):
                raise ClusterUnavailable(f"{self._source}: GET /api/v1/nodes did not return a NodeList")
            items.extend(page["items"])
            rv = rv or _rv(page)  # every page of one list is served at the first page's resourceVersion
            meta = page.get("metadata")
            cont = meta.get("continue") if isinstance(meta, Mapping) else None
            if not cont:
                break
        inv = inventory_from_node_list({"items": items}, self._source, self._nodes)
        self._nodes = {n.name: n for n in inv.nodes}
        self.resource_version = rv
        self._publish()
        self.stats["lists"] += 1
        self._count("ok")
        self.logger.info(
            "node inventory listed", extra={"fields": {"nodes": len(self._nodes), "resource_version": rv}}
        )
        assert self.inventory is not None
        return self.inventory

    def apply_event(self, event: Mapping[str, Any]) -> bool:
        """Apply one watch event (``{"type": ..., "object": {...}}``) to the snapshot.

        ``ADDED``/``MODIFIED`` put the node (by name), ``DELETED`` drops it, ``BOOKMARK`` only advances
        the resourceVersion; other types and nameless objects are ignored. Returns True when the snapshot
        was replaced. ``ERROR`` events never reach here (the client raises ``ApiException`` for them).
        """
        kind = event.get("type")
        obj = event.get("raw_object", event.get("object"))
        rv = _rv(obj)
        if rv:
            self.resource_version = rv
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return False
        node = node_from_object(obj, self._nodes)
        if node is None:
            return False
        if kind == "DELETED":
            self._nodes.pop(node.name, None)
        else:
            self._nodes[node.name] = node
        self._publish()
        self.stats["events"] += 1
        self._count("event")
        self.logger.debug(
            "node event", extra={"fields": {"type": kind, "node": node.name, "resource_version": rv}}
        )
        return True

    def watch_once(self) -> None:
        """One WATCH request from :attr:`resource_version`, applying events until the server ends it
        (``timeoutSeconds``) or :meth:`stop`. Raises ``ApiException`` (status 410 when the
        resourceVersion expired) or the transport's error."""
        from kubernetes import watch

        api = self._client()
        w = watch.Watch()
        self._watch = w
        if self._stop.is_set():
            return
        self.stats["watches"] += 1
        try:
            for event in w.stream(
                api.list_node,
                resource_version=self.resource_version,
                timeout_seconds=self.watch_timeout_seconds,
                allow_watch_bookmarks=True,
                _request_timeout=(LIST_TIMEOUT_S[0], self.watch_timeout_seconds + 15.0),
            ):
                if self._stop.is_set():
                    break
                if isinstance(event, Mapping):
                    self.apply_event(event)
        finally:
            self._watch = None

    def _run(self) -> None:
        from kubernetes.client.rest import ApiException

        need_list = True
        failures = 0
        while not self._stop.is_set():
            listing = need_list
            try:
                if need_list:
                    self.relist()
                    need_list = listing = False
                self.watch_once()
                failures = 0
                continue
            except ApiException as exc:
                if exc.status == 410 and not listing:
                    self.stats["expired"] += 1
                    self._count("expired")
                    self.logger.info(
                        "node watch expired; listing again",
                        extra={
                            "fields": {"resource_version": self.resource_version, "error": str(exc.reason)}
                        },
                    )
                    need_list = True
                    continue
                error = f"HTTP {exc.status} {exc.reason}"
            except Exception as exc:  # ClusterUnavailable, urllib3 connection errors, timeouts
                if self._stop.is_set():
                    break
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
            failures += 1
            self.stats["failures"] += 1
            delay = backoff_delay(failures, self.backoff_base, self.backoff_max, self._rng)
            self._count("failed" if listing else "watch_error")
            self.logger.warning(
                "node inventory list failed" if listing else "node watch failed",
                extra={"fields": {"error": error, "retry_in_s": round(delay, 3), "failures": failures}},
            )
            self._stop.wait(delay)

    # -- lifecycle ----------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the LIST + WATCH loop in a daemon thread (the first LIST begins at once)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="kvlint-node-watch", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop: set the flag, shut the open watch socket down, join the thread (at most
        ``timeout`` seconds; it is a daemon thread, so a stuck request never blocks process exit)."""
        self._stop.set()
        w = self._watch
        if w is not None:
            w.stop()
        if self._thread is not None:
            self._thread.join(timeout=timeout)
            self._thread = None


__all__ = ["LIST_TIMEOUT_S", "NodeWatchCache", "backoff_delay", "core_v1_api", "node_from_object"]
