"""Prometheus metrics of the admission webhook (``/metrics``), through ``prometheus_client``.

Each :class:`WebhookMetrics` owns a ``CollectorRegistry`` (not the process-global one), so several
servers in one process (tests, the benchmark) do not collide. Series:

* ``kvlint_webhook_reviews_total{verdict, outcome, dry_run}``: reviews answered; ``verdict`` is
  ``allowed``/``denied``, ``outcome`` ``clean|findings|would_deny|skipped|timeout|internal_error|too_large|
  overloaded|shutdown`` (``too_large``, ``overloaded``: a request body over ``max_request_bytes``, or one more than
  the bodies held, whose head names the request's ``uid``, answered per the failure mode without being decoded;
  ``shutdown``: a review still being linted, or waiting for a slot, when uvicorn's graceful shutdown time ran out, answered per the
  failure mode).
* ``kvlint_webhook_findings_total{rule, severity}``: findings reported in reviews, by rule id, counted as the
  deny message and ``kvlint check``'s summary count them: a finding standing for the rest past
  :data:`kvlint.findcap.MAX_PER_RULE` of a rule in a container (or KV205's for the unknown options past its bound)
  adds the findings it stands for (:func:`kvlint.types.findings_stood_for`), not 1.
* ``kvlint_webhook_review_duration_seconds``: histogram of time from request body read to response
  built (seconds), buckets from 1 ms to 10 s.
* ``kvlint_webhook_bad_requests_total{reason}``: requests refused with an HTTP error
  (``malformed``, ``too_large``, ``unsupported_media_type``, ``body_timeout``, ``overloaded``, ``shutdown``: a
  request whose body was still coming in, or that waited for a slot without a ``uid``, when uvicorn's graceful shutdown time ran
  out, HTTP 503); a body too
  large or one too many whose head names a ``uid`` is answered as a review instead (``reviews_total``).
* ``kvlint_webhook_budget_exceeded_total{stage}``: reviews answered per the failure mode because their
  time budget ran out, ``stage`` ``queue`` (no worker, or no in-flight slot to decode the review in,
  became free) or ``lint`` (the worker was too slow and was killed).
* ``kvlint_webhook_old_object_lints_total{result}``: UPDATEs whose ``oldObject`` was linted to tell the errors
  it already had from new ones (``--allow-existing-violations``, ``enforce`` mode, the new object having an
  error): ``linted``, ``timeout`` (the budget left after the new object ran out: every error of the update
  then denies), ``internal_error`` (the worker failed; the same). Not in ``budget_exceeded``: such a review is
  answered from the new object's findings, not per the failure mode.
* ``kvlint_webhook_worker_restarts_total{reason}``: review workers killed and replaced (``timeout``,
  ``died``, ``memory``, ``cancelled``, ``protocol``).
* ``kvlint_webhook_workers``, ``kvlint_webhook_workers_busy``: review worker processes alive / linting
  (read from the pool when scraped, :meth:`WebhookMetrics.track_pool`).
* ``kvlint_webhook_connections_closed_total{listener, reason}``: connections closed by the server's limits, on
  the review listener (``listener="review"``) and on the probe listener (``"probe"``, which was not counted)
  (``header_timeout``, ``header_too_large``, ``body_timeout``, ``pipelined``, ``write_timeout``,
  ``max_connections``: uvicorn's HTTP 503 past ``--max-connections``; ``evicted``: a connection waiting for its
  headers, or idle, closed to make room for a complete request at that limit), and connections the client closed
  before its request body was in (``client_gone``).
* ``kvlint_webhook_connections_evicted_total{listener, state}``: connections closed at ``--max-connections`` to
  make room for a complete request (:func:`kvlint.webhook.protocol.deadline_protocol`), on the review listener
  (``listener="review"``, also counted in ``connections_closed_total{listener="review", reason="evicted"}``) and on the probe
  listener (``"probe"``, 64 connections), by what the connection was doing: ``headers`` (waiting for its
  request's headers), ``idle`` (kept alive after an answer), ``body`` (its request body still coming in). A
  steady rate means a client holds the listener's connections (slow headers or bodies, or many idle ones).
* ``kvlint_webhook_tls_reloads_total{result}``: certificate reloads (``ok``/``failed``).
* ``kvlint_webhook_inventory_refreshes_total{result}``: node-label inventory refreshes (``--cluster``).
"""

from __future__ import annotations

from typing import Any

#: Histogram buckets in seconds: fine below 25 ms where a review should land, coarse up to the budget.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class WebhookMetrics:
    """The webhook's metric families in a private registry.

    Raises ImportError (with the install hint) when ``prometheus_client`` is missing.
    """

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        r = self.registry
        self.reviews = Counter(
            "kvlint_webhook_reviews",
            "Admission reviews answered.",
            ["verdict", "outcome", "dry_run"],
            registry=r,
        )
        self.findings = Counter(
            "kvlint_webhook_findings",
            "Findings reported in admission reviews.",
            ["rule", "severity"],
            registry=r,
        )
        self.latency = Histogram(
            "kvlint_webhook_review_duration_seconds",
            "Time to answer one admission review, in seconds.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.bad_requests = Counter(
            "kvlint_webhook_bad_requests", "Requests refused with an HTTP error.", ["reason"], registry=r
        )
        self.budget_exceeded = Counter(
            "kvlint_webhook_budget_exceeded",
            "Reviews whose time budget ran out (answered per the failure mode).",
            ["stage"],
            registry=r,
        )
        self.old_object_lints = Counter(
            "kvlint_webhook_old_object_lints",
            "UPDATEs whose old object was linted for the errors it already had, by result.",
            ["result"],
            registry=r,
        )
        self.worker_restarts = Counter(
            "kvlint_webhook_worker_restarts", "Review workers killed and replaced.", ["reason"], registry=r
        )
        self.workers = Gauge("kvlint_webhook_workers", "Review worker processes alive.", registry=r)
        self.workers_busy = Gauge("kvlint_webhook_workers_busy", "Review workers linting now.", registry=r)
        self.connections_closed = Counter(
            "kvlint_webhook_connections_closed",
            "Connections closed by the server's header/body limits.",
            ["listener", "reason"],
            registry=r,
        )
        self.connections_evicted = Counter(
            "kvlint_webhook_connections_evicted",
            "Connections closed at the connection limit to make room for a complete request.",
            ["listener", "state"],
            registry=r,
        )
        self.tls_reloads = Counter(
            "kvlint_webhook_tls_reloads", "TLS certificate reloads.", ["result"], registry=r
        )
        self.inventory_refreshes = Counter(
            "kvlint_webhook_inventory_refreshes", "Node-label inventory refreshes.", ["result"], registry=r
        )
        # The labelled children of the per-review series, looked up once per label set (``labels()``
        # validates and locks on every call); bounded by the verdicts, outcomes and rule ids.
        self._review_children: dict[tuple[bool, str, bool], Any] = {}
        self._finding_children: dict[tuple[str, str], Any] = {}

    def track_pool(self, pool: Any) -> None:
        """Read ``kvlint_webhook_workers`` (``pool.alive``) and ``kvlint_webhook_workers_busy``
        (``pool.busy``) from ``pool`` when the metrics are rendered, instead of setting them on every
        review (the probe listener's thread only reads two counters of the review loop's)."""
        self.workers.set_function(lambda: pool.alive)
        self.workers_busy.set_function(lambda: pool.busy)

    def observe(self, verdict: Any, dry_run: bool, seconds: float) -> None:
        """Record one answered review: its :class:`~kvlint.webhook.review.Verdict`, whether it was a
        dry run, and its latency in seconds."""
        key = (bool(verdict.allowed), str(verdict.outcome), bool(dry_run))
        child = self._review_children.get(key)
        if child is None:
            child = self._review_children[key] = self.reviews.labels(
                "allowed" if key[0] else "denied", key[1], "true" if key[2] else "false"
            )
        child.inc()
        from kvlint.types import findings_stood_for

        for diags in (verdict.errors, verdict.warnings):
            for d in diags:
                fkey = (d.rule, d.severity)
                found = self._finding_children.get(fkey)
                if found is None:
                    found = self._finding_children[fkey] = self.findings.labels(d.rule, d.severity)
                found.inc(findings_stood_for(d))
        self.latency.observe(seconds)

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


__all__ = ["LATENCY_BUCKETS", "WebhookMetrics"]
