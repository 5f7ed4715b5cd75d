"""``--cluster`` for the webhook: a node-label inventory kept fresh off the request path.

:class:`InventoryRefresher` re-lists the nodes through :func:`kvlint.cluster.load_inventory` (the
``kubernetes`` client; RBAC ``list`` on ``nodes``) every ``interval`` seconds in a daemon thread; reviews
only read the last good :class:`~kvlint.cluster.NodeInventory` (an attribute read, no network call).
A failed refresh keeps the previous inventory and is logged and counted; ``/readyz`` stays 503 until a
first inventory has been read. A periodic list (not a watch) keeps the code small: nodes change on the
scale of minutes, and one ``GET /api/v1/nodes`` per interval is cheap.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import fields, replace
from typing import Any

#: Options field names a pipeline may use to take a node inventory, first match wins.
INVENTORY_FIELDS = ("inventory", "cluster_inventory", "node_inventory")


def inventory_field(options: Any) -> str | None:
    """The :class:`~kvlint.pipeline.Options` field that takes a node inventory, or None when the pipeline
    cannot use one (then ``--cluster`` must be refused rather than silently ignored)."""
    names = {f.name for f in fields(options)}
    return next((n for n in INVENTORY_FIELDS if n in names), None)


class InventoryRefresher:
    """Background refresh of the cluster's node inventory.

    Args:
        kubeconfig, context: as :func:`kvlint.cluster.load_inventory` (None, None = in-cluster).
        interval: seconds between refreshes.
        metrics: a :class:`~kvlint.webhook.metrics.WebhookMetrics` (counts ``ok``/``failed``) or None.
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        interval: float = 60.0,
        metrics: Any = None,
        logger: logging.Logger | None = None,
        loader: Any = None,
    ) -> None:
        self.kubeconfig = kubeconfig
        self.context = context
        self.interval = interval
        self.metrics = metrics
        self.logger = logger or logging.getLogger("kvlint.webhook")
        self._loader = loader
        self.inventory: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def refresh(self) -> bool:
        """List the nodes once; True on success (the new inventory replaces the old)."""
        from kvlint import cluster

        try:
            if self._loader is not None:
                inv = self._loader()
            else:
                cluster.clear_cache()
                inv = cluster.load_inventory(self.kubeconfig, self.context)
        except Exception as exc:  # ClusterUnavailable and anything the client raises
            if self.metrics is not None:
                self.metrics.inventory_refreshes.labels("failed").inc()
            self.logger.warning("node inventory refresh failed", extra={"fields": {"error": str(exc)}})
            return False
        self.inventory = inv
        if self.metrics is not None:
            self.metrics.inventory_refreshes.labels("ok").inc()
        self.logger.info("node inventory refreshed", extra={"fields": {"nodes": len(inv.nodes)}})
        return True

    def not_ready_reason(self) -> str | None:
        """A ``/readyz`` check: not ready until a first inventory has been read."""
        return None if self.inventory is not None else "node inventory not read yet"

    def options_for(self, options: Any) -> Any:
        """``options`` carrying the current inventory (unchanged before the first successful read)."""
        name = inventory_field(options)
        if name is None or self.inventory is None:
            return options
        return replace(options, **{name: self.inventory})

    def _run(self) -> None:
        self.refresh()
        while not self._stop.wait(self.interval):
            self.refresh()

    def start(self) -> None:
        """Start refreshing in a daemon thread (the first read happens at once)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="kvlint-node-inventory", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop refreshing."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


__all__ = ["INVENTORY_FIELDS", "InventoryRefresher", "inventory_field"]
