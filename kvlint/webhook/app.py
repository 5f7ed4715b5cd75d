"""The webhook's ASGI applications (Starlette): reviews on ``/validate``, probes and metrics.

Request path of ``POST /validate``:

1. size and time: a body over ``max_request_bytes`` (declared or streamed), or one whose chunk would take the
   bodies held past ``body_buffer_bytes``, is not held; when its head names the request's ``uid`` (the API
   server's does) it is read to its end and the review answered per the failure mode (outcome ``too_large``
   or ``overloaded``), else it gets HTTP 413 or 503 (and so does one over four times the limit); a body not
   complete within ``body_timeout_seconds`` gets 408 (the headers have their own deadline in
   :mod:`kvlint.webhook.protocol`). A declared ``Content-Type`` other than JSON gets 415.
2. the body, as it came, goes to a worker *process* of the :class:`~kvlint.webhook.pool.ReviewPool`
   (:func:`~kvlint.webhook.answer.answer_review`), within a hard budget of ``timeout_seconds`` (waiting for a
   free worker included), which decodes it (:func:`~kvlint.webhook.review.parse_review`: anything that is not
   an AdmissionReview gets HTTP 400 with ``{"error": "..."}``, and the API server then applies the
   configuration's ``failurePolicy``), allows at once the reviews that need no linting
   (:func:`~kvlint.webhook.review.skip_reason`: subresources, objects a trusted controller writes under an owner
   kvlint reviews, updates of replicas/status/metadata), lints the object and writes the response; the server
   counts and logs it from the worker's summary. The event loop neither decodes a body nor pickles an object
   or its findings, so probes and other reviews keep answering.
3. when the budget runs out the worker is killed and replaced, ``kvlint_webhook_budget_exceeded_total`` counts
   it, and the server decodes the body itself to answer as above (400, an exemption) or per the failure mode
   with the request's ``uid``; the same when the worker fails or dies. A body over :data:`LOOP_DECODE_BYTES` is
   not decoded then: answered per the failure mode with the ``uid`` read from its head, exemptions not applied. An UPDATE with errors whose
   ``oldObject`` is to be linted for the errors it already had goes back to a worker with the new object's
   findings, within what is left of the budget, which lints the old object and answers (when that does not
   finish, the worker's first answer: every error denies). With no worker free, a body of at most
   :data:`LOOP_DECODE_BYTES` is decoded here to answer at once what needs no lint.
4. any exception in kvlint is logged and answered per the failure mode: a review never crashes the
   server, and the API server always gets an AdmissionReview back.

Dry-run reviews (``request.dryRun: true``, e.g. ``kubectl apply --dry-run=server``) get exactly the
answer a real request would, so a dry run previews admission; the webhook has no side effects to
suppress (``sideEffects: None``), and dry runs are counted apart (``dry_run`` label) and logged with
``dry_run: true`` so pre-deploy checks do not read as admissions.

Probes: ``/healthz`` (liveness) and ``/readyz`` (readiness) answer on the review listener and, with
:func:`create_probe_app`, on a separate plain-HTTP listener served by its own thread and event loop
(:class:`kvlint.webhook.server.ProbeServer`), which review traffic cannot starve: slow or numerous review
connections do not count against it. There ``/healthz`` checks that the review event loop is alive (its
heartbeat is at most ``liveness_stall_seconds`` old) and that review workers can be started. ``/readyz`` is 200 once the worker pool is up
(catalogues loaded, the warm-up object linted) and, with ``--cluster``, a node inventory is loaded; 503
while starting, draining for shutdown, or when no worker is alive. ``/metrics`` is served on both.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from kvlint.types import findings_stood_for
from kvlint.webhook.answer import SUMMARY_MESSAGES, encode_json
from kvlint.webhook.metrics import WebhookMetrics
from kvlint.webhook.pool import BudgetExceeded, ReviewPool, WorkerFailed
from kvlint.webhook.protocol import ANSWERING_SCOPE_KEY, EVICTED_SCOPE_KEY
from kvlint.webhook.review import (
    Review,
    ReviewError,
    ReviewTooDeep,
    Verdict,
    WebhookSettings,
    failure_response,
    head_names,
    parse_review,
    review_from_head,
    skip_reason,
    skipped_response,
    too_deep_response,
)
from kvlint.webhook.worker import WARM_UP_OBJECT, LintOutcome

#: Largest request body (bytes) the event loop decodes when no worker is free, to answer at once a review that
#: needs no lint (:func:`create_app`'s ``_validate``): an AdmissionReview the API server sends for a Deployment or
#: a Pod, ``oldObject`` and ``managedFields`` included, is a few to a few tens of KiB; a decode of 64 KiB takes
#: 2 to 4 ms of the loop (a 1.3 MB body 45 to 70 ms). A larger body waits for a worker, which decodes it.
LOOP_DECODE_BYTES = 64 * 1024
#: Seconds without a heartbeat from the review event loop before the probe listener's ``/healthz`` fails.
LIVENESS_STALL_SECONDS = 10.0
_HEARTBEAT_SECONDS = 0.5
_T = TypeVar("_T")
_timeout: Any = getattr(asyncio, "timeout", None)


@dataclass
class WebhookState:
    """Mutable server state shared by the handlers, the lifespan and the probe listener.

    ``pipeline`` (``(LoadResult, Options) -> CheckResult``) replaces ``run_documents`` in the workers; it
    must be picklable by name (a module-level function). ``background`` holds objects with
    ``start()``/``stop()`` (certificate reloader, node inventory) run for the server's lifetime;
    ``readiness`` extra checks returning an error string or None. ``heartbeat`` is the review loop's
    ``time.monotonic()`` at its last tick.
    """

    settings: WebhookSettings
    metrics: WebhookMetrics
    logger: logging.Logger
    pipeline: Callable[[Any, Any], Any] | None = None
    options_hook: Callable[[Any], Any] | None = None
    background: list[Any] = field(default_factory=list)
    readiness: list[Callable[[], str | None]] = field(default_factory=list)
    warm_up: bool = True
    freeze_gc: bool = False
    ready: bool = False
    draining: bool = False
    pool: ReviewPool | None = None
    heartbeat: float = field(default_factory=time.monotonic)
    liveness_stall_seconds: float = LIVENESS_STALL_SECONDS
    #: slots for reviews decoded and linted at once (:attr:`WebhookSettings.max_inflight`), made on first use
    inflight: asyncio.Semaphore | None = None
    #: bytes of request bodies held and not yet decoded (at most :attr:`WebhookSettings.body_buffer_bytes`)
    body_bytes: int = 0

    def not_ready_reason(self) -> str | None:
        """Why ``/readyz`` fails right now, or None when ready."""
        if self.draining:
            return "shutting down"
        if not self.ready:
            return "starting"
        if self.pool is not None and self.pool.alive == 0:
            return "no review worker is running (being replaced)"
        for check in self.readiness:
            why = check()
            if why:
                return why
        return None

    def not_live_reason(self) -> str | None:
        """Why the probe listener's ``/healthz`` fails, or None: the review loop stopped ticking, or no
        review worker could be started for ``liveness_stall_seconds`` (the kubelet then restarts the pod)."""
        now = time.monotonic()
        age = now - self.heartbeat
        if age > self.liveness_stall_seconds:
            return f"the review event loop has not run for {age:.1f} s"
        empty = self.pool.empty_since if self.pool is not None and not self.pool.closed else None
        if self.ready and empty is not None and now - empty > self.liveness_stall_seconds:
            return f"no review worker has run for {now - empty:.1f} s"
        return None


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


class _ClientGone(Exception):
    """The client went away before its request body was in (an ``http.disconnect`` message)."""


def _declared_length(value: str) -> str | None:
    """A ``Content-Length`` field value as the decimal digits of its number, without leading zeros (``"0"``
    for zero), or None when it is not a number. RFC 9110 section 8.6: ``Content-Length = 1*DIGIT``, a
    decimal of any length (leading zeros included), which a recipient must read without overflow; llhttp
    (httptools) reads ``000...0123`` of any length as 123, h11 takes up to 20 characters. The digits are
    compared as text (:func:`_read_body`), never made an int: bounded work for any length (the value is
    within the header cap, :data:`kvlint.webhook.server.DEFAULT_MAX_HEADER_BYTES`)."""
    if not (value.isascii() and value.isdigit()):
        return None
    return value.lstrip("0") or "0"


#: Bytes of a refused request body's head searched for the request's ``uid`` (:func:`_read_body`): the API
#: server writes it about 80 bytes in (``kind``, ``apiVersion``, then ``request`` with ``uid`` first).
REFUSED_HEAD_BYTES = 4096
#: A body refused for its size or for the bodies held, whose head names a ``uid``, is read to its end without
#: being held, up to this many times ``max_request_bytes`` in all (12 MiB by default: an UPDATE of two objects
#: at etcd's 1.5 MiB, written as JSON with their managed fields, stays below it); beyond that it is refused
#: with HTTP 413 and the connection closed, as a body whose head names no uid is at once.
REFUSED_READ_FACTOR = 4


class _Refused(Exception):
    """A request body kvlint does not decode (``status`` 413: over ``max_request_bytes``; 503: more request
    bodies held than :attr:`WebhookSettings.body_buffer_bytes`) whose ``head`` names a ``uid``: read to its end
    without being held, so that the review is answered per the failure mode (an AdmissionReview, not an HTTP
    error the API server's ``failurePolicy`` would decide) and the connection stays usable."""

    def __init__(self, error: ReviewError, head: bytes) -> None:
        super().__init__(str(error))
        self.status = error.status
        self.head = head


def _head_of(chunks: list[bytes], limit: int) -> bytes:
    """The first ``limit`` bytes of ``chunks`` joined (without joining the rest)."""
    out = bytearray()
    for chunk in chunks:
        out += chunk[: limit - len(out)]
        if len(out) >= limit:
            break
    return bytes(out)


def _digits_above(digits: str, bound: int) -> bool:
    """Whether the decimal ``digits`` (no leading zeros, :func:`_declared_length`) name more than ``bound``,
    compared as text."""
    text = str(bound)
    return len(digits) > len(text) or (len(digits) == len(text) and digits > text)


async def _read_body(
    receive: Any,
    declared: str | None,
    limit: int,
    state: WebhookState,
    scope: dict[str, Any] | None = None,
    named_head: list[bytes] | None = None,
) -> bytes:
    """The request body read from the ASGI ``receive`` channel, at most ``limit`` bytes (``declared``: the
    request's ``Content-Length``, None without one), each chunk counted in ``state.body_bytes`` as it is read
    (the caller takes the body's length off once it is decoded; on an error here this does). Reads the messages
    as Starlette's ``Request.stream`` does.

    Raises ReviewError(400) when ``declared`` is not a decimal (:func:`_declared_length`), _ClientGone when the
    client disconnects first. A body larger than ``limit`` (declared or streamed: 413), or whose next chunk would
    take the bodies held past :attr:`WebhookSettings.body_buffer_bytes` (503), is not held: its bytes held so far
    are given back and its head (the bytes read so far, at most :data:`REFUSED_HEAD_BYTES`; a declared length:
    its first chunk) searched for a ``uid`` (:func:`~kvlint.webhook.review.review_from_head`). With one, the
    rest is read and dropped, up to :data:`REFUSED_READ_FACTOR` x ``limit`` bytes in all, and _Refused raised
    at its end (answered as a review); without one, or past that many bytes (a declared length past it is
    refused unread), ReviewError(413 or 503) is raised at once. Before, the API server's reviews got the HTTP
    error as well and it applied its ``failurePolicy``: under ``Ignore`` an UPDATE of two large objects, or a
    review of a burst of large ones, was admitted unchecked without a warning, whatever ``--failure-mode``
    said."""
    refused: ReviewError | None = None
    drain_limit = REFUSED_READ_FACTOR * limit
    if declared is not None:
        size = _declared_length(declared)
        if size is None:
            raise ReviewError(f"invalid Content-Length {declared[:40]!r}")
        if _digits_above(size, limit):
            shown = size if len(size) <= 40 else f"{size[:20]}...({len(size)} digits)"
            refused = ReviewError(f"request body of {shown} bytes exceeds the limit of {limit} bytes", 413)
            if _digits_above(size, drain_limit):
                raise refused
    chunks: list[bytes] = []
    total = 0  # bytes of this body held (counted in state.body_bytes)
    read = 0  # bytes of this body read, held or not
    head = b""  # a refused body's first REFUSED_HEAD_BYTES
    named = False  # a refused body's head names a uid: read on to its end
    cap = state.settings.body_buffer_bytes
    try:
        while True:
            message = await receive()
            kind = message["type"]
            if kind == "http.request":
                chunk = message.get("body", b"")
                more = message.get("more_body", False)
                if chunk:
                    # ``total`` is what this body holds in state.body_bytes: a chunk refused (413, 503) was
                    # never counted there, so it is not taken off either (it was, for 413, and the count
                    # drifted below zero by that chunk per request until the cap refused nothing)
                    n = len(chunk)
                    read += n
                    if refused is None:
                        if total + n > limit:
                            refused = ReviewError(f"request body exceeds the limit of {limit} bytes", 413)
                        elif state.body_bytes + n > cap:
                            refused = ReviewError(f"request bodies being read exceed {cap} bytes", 503)
                        else:
                            state.body_bytes += n
                            total += n
                            chunks.append(chunk)
                        if refused is not None:  # held no longer: the head kept, the rest given back
                            head = _head_of(chunks, REFUSED_HEAD_BYTES)
                            chunks.clear()
                            state.body_bytes -= total
                            total = 0
                    if refused is not None:
                        if read > drain_limit:
                            raise refused
                        if not named:  # decided on the head read so far (the API server's names the uid)
                            head += chunk[: REFUSED_HEAD_BYTES - len(head)]
                            if review_from_head(head) is None:
                                raise refused
                            named = True
                            # read to its end to be answered: not a body that gives way first to a complete
                            # request at --max-connections (kvlint.webhook.protocol), and answered with its uid
                            # if the server's shutdown cancels the read (answer)
                            if scope is not None:
                                scope[ANSWERING_SCOPE_KEY] = True
                            if named_head is not None:
                                named_head.append(head)
                if refused is not None and not named and not more:
                    raise refused
                if not more:
                    break
            elif kind == "http.disconnect":
                raise _ClientGone
    except BaseException:
        state.body_bytes -= total
        raise
    if refused is not None:
        raise _Refused(refused, head)
    return b"".join(chunks)


async def _within(awaitable: Awaitable[_T], seconds: float) -> _T:
    """``await awaitable``, cancelled after ``seconds`` (raises asyncio.TimeoutError then), as
    ``asyncio.wait_for`` but, where ``asyncio.timeout`` exists (Python 3.11+), in the caller's own task:
    wait_for runs a coroutine in a task of its own, two more event-loop passes per call."""
    if _timeout is None:  # pragma: no cover - Python 3.10
        return await asyncio.wait_for(awaitable, seconds)
    async with _timeout(seconds):
        return await awaitable


#: The most characters of a request's own text (uid, operation, kind, namespace, name) a review's log line
#: keeps: 253, the longest object name Kubernetes accepts (a DNS subdomain); longer is cut, ending ``...``.
LOG_FIELD_CHARS = 253
#: The most ``rule: message`` entries of a review's log line (``errors``), each at most
#: :data:`~kvlint.webhook.review.MAX_WARNING_CHARS` characters; a last entry counts the ones left out. The
#: summary of a review answered in a worker carries that many errors' messages
#: (:data:`~kvlint.webhook.answer.SUMMARY_MESSAGES`): one number, so the log never shows an empty message.
LOG_ERRORS = SUMMARY_MESSAGES
#: The most characters of a review's ``reason`` (a skip reason names the owner, ``Kind/name``, from the object).
LOG_REASON_CHARS = 600


def _bounded(text: str, limit: int = LOG_FIELD_CHARS) -> str:
    """``text``, cut to ``limit`` characters with ``...`` when longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _log_fields(review: Review, verdict: Any, seconds: float, mode: str) -> dict[str, Any]:
    """The fields of a review's log line. What the request and its object put there is bounded, so one review
    cannot write a log line of megabytes (an object name, a finding's message quoting a long flag value, ten
    thousand findings): each text field at most :data:`LOG_FIELD_CHARS` characters, ``errors`` at most
    :data:`LOG_ERRORS` entries (then ``... N more``) of at most ``MAX_WARNING_CHARS`` characters, and
    ``reason`` at most :data:`LOG_REASON_CHARS`. A review within the bounds logs what it did before."""
    from kvlint.webhook.review import MAX_WARNING_CHARS

    namespace = review.namespace
    out: dict[str, Any] = {
        "uid": _bounded(review.uid),
        "operation": _bounded(review.operation),
        "kind": _bounded(review.kind),
        "namespace": _bounded(namespace) if namespace is not None else None,
        "name": _bounded(review.name),
        "dry_run": review.dry_run,
        "mode": mode,
        "allowed": verdict.allowed,
        "outcome": verdict.outcome,
        "duration_ms": round(seconds * 1000, 3),
    }
    if verdict.rules:
        out["rules"] = verdict.rules
        errors = verdict.errors
        logged = [_bounded(f"{d.rule}: {d.message}", MAX_WARNING_CHARS) for d in errors[:LOG_ERRORS]]
        if len(errors) > LOG_ERRORS:  # the findings left, a capped one's counted as it stands for
            logged.append(f"... {sum(findings_stood_for(d) for d in errors[LOG_ERRORS:])} more")
        out["errors"] = logged
    if verdict.suppressed:
        out["suppressed"] = verdict.suppressed
    if verdict.old_object:
        out["old_object"] = verdict.old_object
    if verdict.reason:
        out["reason"] = _bounded(verdict.reason, LOG_REASON_CHARS)
    return out


def _uncollected(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` with Python's cyclic garbage collector paused (it is already off: as it is).

    For the review steps the event loop runs on the whole body: decoding it (:func:`parse_review`) and, for an
    UPDATE, comparing what kvlint reads of its two objects (:func:`skip_reason`). Each builds a container per
    JSON value and no reference cycle, and the collector's passes over them added a third: an UPDATE of two
    1.5 MiB DynamoGraphDeployments (8,000 components each, a 3 MiB body) held the event loop 19 to 24 ms to
    decode and 76 to 81 ms to compare with collection, 14 to 18 ms and 54 ms without (best of 7, three runs
    in one process with the start-up objects frozen as the server freezes them). Synchronous calls only: the
    collector is back on before anything awaits."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return fn(*args)
    finally:
        if paused:
            gc.enable()


#: An HTTP answer: status, raw headers (ASGI), body.
_Answer = tuple[int, list[tuple[bytes, bytes]], bytes]

#: ``json.dumps`` with the arguments of Starlette's ``JSONResponse.render``, its encoder made once (``dumps``
#: builds one per call when given arguments); same bytes.
_encode_json = encode_json
#: Starlette's ``PlainTextResponse("Internal Server Error", 500)``, what its ServerErrorMiddleware answers.
_ERROR_500_BODY = b"Internal Server Error"
_ERROR_500_HEADERS = [(b"content-length", b"21"), (b"content-type", b"text/plain; charset=utf-8")]


#: Why a request still running when uvicorn's graceful shutdown time ran out is answered as it is.
SHUTDOWN_REASON = "the server is shutting down (its graceful shutdown time, --graceful-seconds, ran out)"


def _uncancel() -> None:
    """Take back the cancellation of this task that is being answered instead (Python 3.11+ counts it)."""
    task = asyncio.current_task()
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()


_JSON_TYPE = (b"content-type", b"application/json")


class _Found:
    """A finding as a review's summary carries it (:func:`~kvlint.webhook.answer.review_summary`): what the
    metrics and the log line read. ``stands_for``: the findings it counts (the summary's count: one diagnostic's
    :func:`~kvlint.types.findings_stood_for`, or the findings of a rule and severity past the first messages)."""

    __slots__ = ("rule", "severity", "message", "stands_for")

    def __init__(self, rule: str, severity: str, message: str, stands_for: int = 1) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.stands_for = stands_for


#: The type of each of a summary's sixteen values (:func:`~kvlint.webhook.answer.review_summary`) as a worker's
#: reply gives them back (JSON: lists for its tuples), ``namespace`` and ``sub_resource`` each a string or null.
_SUMMARY_SHAPES = frozenset(
    (str, str, str, str, namespace, str, sub_resource, bool, str, bool, str, found, found, int, str, str)
    for namespace in (str, type(None))
    for sub_resource in (str, type(None))
    for found in (list, tuple)
)
#: The types of a summary's finding, ``[rule, severity, message, count]``.
_FOUND_SHAPE = (str, str, str, int)
_SEQUENCES = (list, tuple)

#: Most findings a worker's summary may count (:func:`summary_review`): a review of the largest object the request
#: size admits reports far fewer (each rule at most ``kvlint.findcap.MAX_PER_RULE`` a container, at most
#: ``--max-review-size`` containers); a count past it is no kvlint worker's, and is refused before a list of that
#: many is built.
MAX_SUMMARY_FINDINGS = 1_000_000


def _check_summary(summary: Any) -> None:
    """Raise ValueError unless ``summary`` has the shape and types of a
    :func:`~kvlint.webhook.answer.review_summary` as a worker's reply gives it back (:data:`_SUMMARY_SHAPES`; its
    findings are checked as they are read, :func:`_expanded`): a worker's reply is checked before any of it is
    counted, logged or answered."""
    if type(summary) not in _SEQUENCES or tuple(map(type, summary)) not in _SUMMARY_SHAPES:
        raise ValueError("a summary of another shape")


def _expanded(found: Any, room: int) -> list[_Found]:
    """A summary's findings (``[rule, severity, message, count]``) one :class:`_Found` per entry, standing for its
    ``count`` findings as the metrics and the log line count them (an entry was repeated ``count`` times, and a
    capped finding's entry, which counts the findings it stands for, would have been logged as often), each
    entry's types checked and at most ``room`` findings in all; ValueError for another shape or more findings."""
    out: list[_Found] = []
    total = 0
    for f in found:
        if type(f) not in _SEQUENCES or tuple(map(type, f)) != _FOUND_SHAPE:
            raise ValueError("a summary finding of another shape")
        rule, severity, message, count = f
        if not 0 < count <= room - total:
            raise ValueError(
                f"a summary finding counted {count} times, or more than {MAX_SUMMARY_FINDINGS:,} in all"
            )
        total += count
        out.append(_Found(rule, severity, message, count))
    return out


def summary_review(summary: Any) -> tuple[Review, Verdict]:
    """The Review (without its objects) and the Verdict of a review answered in a worker, from its
    :func:`~kvlint.webhook.answer.review_summary` as the worker's reply gives it back (checked first:
    :func:`_check_summary`; ValueError for another shape)."""
    _check_summary(summary)
    (api_version, uid, operation, kind, namespace, name, sub_resource, dry_run, username) = summary[:9]
    allowed, outcome, errors, warnings, suppressed, reason, old_object = summary[9:]
    review = Review(
        api_version,
        uid,
        operation,
        kind,
        namespace,
        name,
        sub_resource,
        dry_run,
        None,
        None,
        username=username,
    )
    found_errors = _expanded(errors, MAX_SUMMARY_FINDINGS)
    verdict = Verdict(
        allowed,
        outcome,
        found_errors,  # type: ignore[arg-type]
        _expanded(warnings, MAX_SUMMARY_FINDINGS - sum(findings_stood_for(f) for f in found_errors)),  # type: ignore[arg-type]
        suppressed,
        reason,
        old_object,
    )
    return review, verdict


#: The request's ``uid`` where the API server writes it: ``"request":{"uid":"..."`` (``k8s.io/api``
#: ``admission/v1`` ``AdmissionRequest``'s first field), a uid as :func:`~kvlint.webhook.review.review_from_head`
#: reads one (a UUID from the API server). Searched in the body's first :data:`REFUSED_HEAD_BYTES` only.
_REQUEST_UID = re.compile(rb'"request"\s*:\s*\{\s*"uid"\s*:\s*"([A-Za-z0-9._:-]{1,128})"')


def _request_uid(body: bytes) -> str | None:
    """The request's ``uid`` read from the first :data:`REFUSED_HEAD_BYTES` of ``body`` without decoding it
    (:data:`_REQUEST_UID`), or None when the head does not name it there (a client writing the request's fields
    in another order, a uid of other characters): a bounded scan, whatever the body's size."""
    found = _REQUEST_UID.search(body, 0, REFUSED_HEAD_BYTES)
    return found.group(1).decode("ascii") if found else None


def _head_uid(body: bytes) -> str | None:
    """The request's ``uid`` as decoding ``body`` gives it (the last of two), read from its first
    :data:`REFUSED_HEAD_BYTES` (:func:`~kvlint.webhook.review.head_names`), or None."""
    return head_names(body[:REFUSED_HEAD_BYTES].decode("utf-8", "replace"))[0]


def _answer_agrees(
    data: Any, review: Review, verdict: Any, request_uid: str | None = None, body: bytes | None = None
) -> bool:
    """Whether a worker's response bytes begin as :func:`~kvlint.webhook.review.response` writes the answer of
    the review and verdict of its summary (``apiVersion``, ``kind``, the ``uid`` and ``allowed``) and end its
    JSON object, so that what the server sends is what it counts and logs, and whether that ``uid`` is the
    request's as its ``body``'s head names it: ``request_uid`` (:func:`_request_uid`, the first key of the
    request object, where the API server writes it) or, when that is another one or None, the uid the body's
    decoding gives (:func:`_head_uid`: a request naming its uid twice is answered with the last, as
    ``parse_review`` reads it); neither found: not checked. Checked without decoding them (the bytes of a worker's
    reply are never run, :func:`~kvlint.webhook.worker.decode_reply`, and its values' types are checked,
    :func:`summary_review`). A check of the bytes' head and end: it catches a kvlint bug that answers for another
    request or with another verdict than the one counted and logged; it does not bind a worker running other
    code, which can write a second ``uid`` or ``allowed`` key after the head (a JSON decoder takes the last) and
    decides this request's answer in any case, but not another request's, nor anything in the server."""
    if type(data) is not bytes or not isinstance(review.uid, str) or type(verdict.allowed) is not bool:
        return False
    if review.uid != request_uid and body is not None:
        named = _head_uid(body)
        if review.uid != named and (named is not None or request_uid is not None):
            return False
    elif request_uid is not None and review.uid != request_uid:
        return False
    head = (
        '{"apiVersion":'
        + encode_json(review.api_version)
        + ',"kind":"AdmissionReview","response":{"uid":'
        + encode_json(review.uid)
        + (',"allowed":true' if verdict.allowed else ',"allowed":false')
    ).encode("utf-8")
    return data.startswith(head) and data.endswith(b"}}")


def _json_answer(payload: Any, status: int = 200, close: bool = False) -> _Answer:
    """What Starlette's ``JSONResponse(payload, status, headers={"Connection": "close"} if close else None)``
    sends: the same body and raw headers."""
    body = _encode_json(payload).encode("utf-8")
    length = (b"content-length", str(len(body)).encode("latin-1"))
    if close:
        return status, [(b"connection", b"close"), length, _JSON_TYPE], body
    return status, [length, _JSON_TYPE], body


class _Endpoint:
    """An ASGI callable Starlette's ``Route`` calls as it is (a plain function would be wrapped in its
    ``Request``/``Response`` adapter)."""

    __slots__ = ("handler",)

    def __init__(self, handler: Callable[[Any, Any, Any], Awaitable[None]]) -> None:
        self.handler = handler

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.handler(scope, receive, send)


class WebhookApp:
    """The review listener's ASGI application: ``POST /validate`` goes straight to the review handler, the
    rest (probes, metrics, other paths and methods, a ``root_path``, the lifespan) to the Starlette
    application ``app``, which routes ``/validate`` to the same handler.

    Starlette's layers around an endpoint (its error and exception middleware, the router, the
    ``Request`` and ``JSONResponse`` objects) did nothing for a review that the handler does not do itself:
    it reads the ASGI messages as ``Request.stream`` does and sends the bytes and headers
    ``JSONResponse`` sends (``tests/test_webhook_asgi.py`` compares them), and answers an exception that
    escapes it with Starlette's plain 500 before raising it on. ``state`` is the Starlette app's
    (``state.webhook``: the :class:`WebhookState`).
    """

    def __init__(self, app: Any, validate: Callable[[Any, Any, Any], Awaitable[None]]) -> None:
        self.app = app
        self.state = app.state
        self._validate = validate

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == "/validate"
            and scope["method"] == "POST"
            and not scope.get("root_path")
        ):
            await self._validate(scope, receive, send)
        else:
            await self.app(scope, receive, send)


def create_app(
    settings: WebhookSettings,
    *,
    pipeline: Callable[[Any, Any], Any] | None = None,
    metrics: WebhookMetrics | None = None,
    logger: logging.Logger | None = None,
    background: list[Any] | None = None,
    readiness: list[Callable[[], str | None]] | None = None,
    options_hook: Callable[[Any], Any] | None = None,
    warm_up: bool = True,
    freeze_gc: bool = False,
) -> Any:
    """Build the ASGI application serving the webhook (a :class:`WebhookApp` over a Starlette application).

    Args:
        settings: mode, failure mode, time budget, size and time limits, workers, pipeline options.
        pipeline: replaces :func:`kvlint.pipeline.run_documents` in the workers (tests, benchmarks); a
            module-level function (it is pickled by name).
        metrics: a :class:`WebhookMetrics` (a new one by default); exposed on ``/metrics``.
        logger: where review log records go (``kvlint.webhook`` by default).
        background: objects with ``start()``/``stop()`` run during the app's lifespan.
        readiness: extra ``/readyz`` checks (return a reason string when not ready).
        options_hook: per review, maps the pipeline options to those used (``--cluster`` adds the
            current node inventory); must not block.
        warm_up: lint :data:`WARM_UP_OBJECT` in every worker before reporting ready (it always is in the
            fork server; this also checks one worker answers).
        freeze_gc: once started (and warmed up), move every object alive into the garbage collector's
            permanent generation (:func:`gc.freeze`, after a full collection), so no later collection
            scans the modules and state of start-up: a full collection of the server process took 3.5 ms
            in one process and 11 to 26 ms during ``bench/webhook.py`` on a shared core, paid by the
            reviews in flight. For a process that serves only this app (``kvlint webhook serve``): it
            freezes whatever else the process holds too.

    The returned app has ``app.state.webhook`` (the :class:`WebhookState`); its lifespan starts and stops
    the worker pool. Raises ImportError with the ``pip install 'kvlint-k8s[webhook]'`` hint when Starlette is
    missing.
    """
    from kvlint.webhook import require_server_deps

    require_server_deps()
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    state = WebhookState(
        settings=settings,
        metrics=metrics or WebhookMetrics(),
        logger=logger or logging.getLogger("kvlint.webhook"),
        pipeline=pipeline,
        background=list(background or []),
        readiness=list(readiness or []),
        options_hook=options_hook,
        warm_up=warm_up,
        freeze_gc=freeze_gc,
    )

    def bad_request(exc: ReviewError) -> _Answer:
        reason = {413: "too_large", 415: "unsupported_media_type", 408: "body_timeout"}.get(
            exc.status, "malformed"
        )
        state.metrics.bad_requests.labels(reason).inc()
        # bounded whatever raised it (each message quotes at most a short head of the request's own values,
        # kvlint.webhook.review.QUOTED_CHARS): a request can write neither a long answer nor a long log line
        text = _bounded(str(exc), LOG_REASON_CHARS)
        state.logger.warning("bad request", extra={"fields": {"status": exc.status, "error": text}})
        return _json_answer({"error": text}, exc.status, close=exc.status in (408, 413))

    async def validate(scope: Any, receive: Any, send: Any) -> None:
        """``POST /validate`` as an ASGI application: :func:`answer`'s status, headers and body."""
        try:
            status, headers, body = await answer(scope, receive)
        except asyncio.CancelledError:
            # uvicorn cancels the requests still running when its graceful shutdown time is over (nothing else
            # cancels a request's task): a body still coming in, or a review waiting for a slot whose body names no uid. Answered, not
            # raised on: uvicorn logged a traceback ("Exception in ASGI application") and answered HTTP 500
            _uncancel()
            state.metrics.bad_requests.labels("shutdown").inc()
            state.logger.warning("request not answered: " + SHUTDOWN_REASON, extra={"fields": {}})
            status, headers, body = _json_answer({"error": SHUTDOWN_REASON}, 503, close=True)
        except Exception:  # what Starlette's ServerErrorMiddleware answered before the response began
            await send({"type": "http.response.start", "status": 500, "headers": list(_ERROR_500_HEADERS)})
            await send({"type": "http.response.body", "body": _ERROR_500_BODY})
            raise
        if state.draining and headers[0][0] != b"connection":
            # shutting down: the connection closes after this answer, which tells the client so, instead of
            # being closed at shutdown while idle, where the API server may be sending the next review on it
            # (it keeps reusing a kept-alive connection to a terminating pod, kubernetes/kubernetes#127335)
            headers = [(b"connection", b"close"), *headers]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def answer(scope: Any, receive: Any) -> _Answer:
        t0 = time.perf_counter()
        content_type = length = None
        for name, value in scope["headers"]:  # the first of each counts, as with Starlette's Headers.get
            if name == b"content-type":
                if content_type is None:
                    content_type = value.decode("latin-1")
            elif name == b"content-length" and length is None:
                length = value.decode("latin-1")
        # the body first, then a slot to decode and lint it: a slot taken before the body was in was held by
        # a client sending its body slowly, and four of them (the default slots) held every slot until the
        # body deadline, answering every review 503. The bodies held meanwhile are bounded in bytes.
        named: list[bytes] = []  # the head of a refused body being read to its end, naming its uid
        try:
            if not _is_json(content_type):
                raise ReviewError(f"Content-Type must be application/json, got {content_type!r:.80}", 415)
            try:
                body = await _within(
                    _read_body(receive, length, settings.max_request_bytes, state, scope, named),
                    settings.body_timeout_seconds,
                )
            except asyncio.CancelledError:
                # uvicorn's graceful shutdown time ran out while a refused body that names its uid (the API
                # server's review over --max-request-bytes) was read to its end: answered per the failure mode
                # as a review the server could not finish, not HTTP 503 (the API server's failurePolicy)
                if not named:
                    raise
                return _shutdown_refused(named[0], t0)
            except asyncio.TimeoutError:
                state.metrics.connections_closed.labels("review", "body_timeout").inc()
                raise ReviewError(
                    f"request body not received within {settings.body_timeout_seconds:g} s", 408
                ) from None
            except _ClientGone:  # gone before its body was in: nobody to answer, nothing to log
                if not scope.get(EVICTED_SCOPE_KEY):  # an eviction is counted as one where it is made
                    state.metrics.connections_closed.labels("review", "client_gone").inc()
                return 400, [(b"content-length", b"0")], b""  # Starlette's Response(status_code=400)
        except _Refused as exc:
            return _refused(exc, t0)
        except ReviewError as exc:
            if exc.status == 503:
                state.metrics.bad_requests.labels("overloaded").inc()
                state.logger.warning("review refused: too many request bodies held", extra={"fields": {}})
                return _json_answer({"error": str(exc)}, 503, close=True)
            return bad_request(exc)
        box = [body]  # the only reference, taken out when decoded
        del body
        try:
            return await _with_slot(box, t0)
        finally:
            if box:  # refused before it was decoded
                state.body_bytes -= len(box.pop())

    async def _with_slot(box: list[bytes], t0: float) -> _Answer:
        # at most inflight_slots decoded objects are in this process at once
        if state.inflight is None:
            state.inflight = asyncio.Semaphore(settings.inflight_slots)
        try:
            if state.inflight.locked():
                await asyncio.wait_for(state.inflight.acquire(), settings.timeout_seconds)
            else:  # a free slot is taken without suspending (wait_for would run a task for it)
                await state.inflight.acquire()
        except asyncio.TimeoutError:
            return _overloaded(box[0], t0)
        except asyncio.CancelledError:
            # uvicorn's graceful shutdown time ran out while the review waited for a slot: its body is in, so its
            # uid is known and it is answered per the failure mode, as one that found no slot in its budget (the
            # HTTP 503 of a request cut short left it to the API server's failurePolicy)
            bare = review_from_head(box[0])
            if bare is None:
                raise  # no uid: HTTP 503 (create_app's handler)
            _uncancel()
            state.logger.warning(SHUTDOWN_REASON, extra={"fields": {"uid": _bounded(bare.uid)}})
            payload, verdict = failure_response(bare, settings, SHUTDOWN_REASON, "shutdown")
            seconds = time.perf_counter() - t0
            state.metrics.observe(verdict, bare.dry_run, seconds)
            state.logger.info("review", extra={"fields": _log_fields(bare, verdict, seconds, settings.mode)})
            return _json_answer(payload)
        try:
            return await _validate(box, t0)
        finally:
            state.inflight.release()

    def _overloaded(body: bytes, t0: float) -> _Answer:
        """The answer for a review that found no in-flight slot within its budget: per the failure mode, as one
        that found no free worker (stage ``queue``), with the ``uid`` read from the body's head, which is not
        decoded (:func:`~kvlint.webhook.review.review_from_head`). HTTP 503 left the answer to the API server's
        ``failurePolicy``: under ``Ignore`` with ``--failure-mode closed`` a burst of reviews was admitted
        unchecked and without a warning, while the reviews of the same burst waiting for a worker were denied.
        503 only when the head holds no uid."""
        why = f"more than {settings.inflight_slots} reviews in flight for {settings.timeout_seconds:g} s"
        state.logger.warning(
            "review not decoded: too many in flight", extra={"fields": {"slots": settings.inflight_slots}}
        )
        bare = review_from_head(body)
        if bare is None:
            state.metrics.bad_requests.labels("overloaded").inc()
            return _json_answer({"error": why}, 503)
        state.metrics.budget_exceeded.labels("queue").inc()
        payload, verdict = failure_response(bare, settings, why, "timeout")
        seconds = time.perf_counter() - t0
        state.metrics.observe(verdict, bare.dry_run, seconds)
        state.logger.info("review", extra={"fields": _log_fields(bare, verdict, seconds, settings.mode)})
        return _json_answer(payload)

    def _shutdown_refused(head: bytes, t0: float) -> _Answer:
        """The answer for a refused body whose head names its ``uid``, cancelled at shutdown while it was read to
        its end: per the failure mode (outcome ``shutdown``), the connection closed (the rest is unread)."""
        bare = review_from_head(head)
        assert bare is not None  # _read_body records a head only then
        _uncancel()
        state.logger.warning(SHUTDOWN_REASON, extra={"fields": {"uid": _bounded(bare.uid)}})
        payload, verdict = failure_response(bare, settings, SHUTDOWN_REASON, "shutdown")
        seconds = time.perf_counter() - t0
        state.metrics.observe(verdict, bare.dry_run, seconds)
        state.logger.info("review", extra={"fields": _log_fields(bare, verdict, seconds, settings.mode)})
        return _json_answer(payload, close=True)

    def _refused(exc: _Refused, t0: float) -> _Answer:
        """The answer for a review whose body was not decoded, too large (``outcome="too_large"``) or one too
        many held (``outcome="overloaded"``), but whose head names its ``uid``: per the failure mode, as a review
        kvlint could not finish, instead of the HTTP 413 or 503 that left it to the API server's
        ``failurePolicy``."""
        bare = review_from_head(exc.head)
        assert bare is not None  # _read_body raises _Refused only then
        if exc.status == 413:
            outcome, why = "too_large", f"{exc} (--max-request-bytes)"
        else:
            outcome, why = "overloaded", f"{exc} at once"
        state.logger.warning("review not decoded: " + why, extra={"fields": {"uid": _bounded(bare.uid)}})
        payload, verdict = failure_response(bare, settings, why, outcome)
        seconds = time.perf_counter() - t0
        state.metrics.observe(verdict, bare.dry_run, seconds)
        state.logger.info("review", extra={"fields": _log_fields(bare, verdict, seconds, settings.mode)})
        return _json_answer(payload)

    async def _validate(box: list[bytes], t0: float) -> _Answer:
        """The review of a body that is in: handed as it is to a worker, which decodes it, applies the
        exemptions, lints the object and writes the response (:meth:`ReviewPool.review
        <kvlint.webhook.pool.ReviewPool.review>`); the event loop neither decodes it nor pickles the object and
        the findings. It decodes the body itself only when the worker could not answer (its budget ran out, it
        failed or died, the server is shutting down: :func:`_unfinished`) or for an UPDATE whose ``oldObject``
        must be linted (:func:`_update`)."""
        body = box.pop()
        state.body_bytes -= len(body)
        options = state.options_hook(settings.options) if state.options_hook else settings.options
        budget = max(0.0, settings.timeout_seconds - (time.perf_counter() - t0))
        pool = state.pool
        if pool is not None and not pool.idle and len(body) <= LOOP_DECODE_BYTES:
            # no worker free: a review that needs none (an exemption, a DELETE, a subresource, a malformed body) is
            # answered at once, as when the server decoded every body, not after the reviews being linted; a
            # larger body waits for a worker (decoding it here held the loop: a client keeping every worker busy
            # had each of its 1.3 MB reviews decoded on the event loop, and then again in the worker)
            decided = _decided_here(body, t0)
            if not isinstance(decided, Review):
                return decided
            del decided
        request_uid = _request_uid(body)
        try:
            # no pool without the lifespan (an ASGI host that does not run it): what needs no worker is still
            # answered (400, an exemption), the rest as an internal error
            assert pool is not None, "the review pool is not started (the app's lifespan did not run)"
            reply = await pool.review(body, settings, options, budget)
        except asyncio.CancelledError:
            # uvicorn's graceful shutdown time ran out while the review was linted (a budget longer than it): the
            # review is answered per the failure mode, as one kvlint could not finish, instead of HTTP 500
            return _unfinished(body, t0, SHUTDOWN_REASON, "shutdown", cancelled=True)
        except BudgetExceeded as exc:
            why = (
                f"review not finished within {settings.timeout_seconds:g} s"
                if exc.stage == "lint"
                else f"no review worker free within {settings.timeout_seconds:g} s"
            )
            return _unfinished(body, t0, why, "timeout", stage=exc.stage)
        except WorkerFailed as exc:
            name = str(exc).split(":", 1)[0]
            return _unfinished(body, t0, f"internal error ({name})", "internal_error", error=str(exc))
        except Exception as exc:  # a kvlint bug outside the pipeline: still answer the API server
            return _unfinished(
                body, t0, f"internal error ({type(exc).__name__})", "internal_error", trace=True
            )
        kind = reply[0]
        if kind in ("answer", "update"):
            # the response bytes (and an update's answer should its old object's lint not finish) checked before
            # anything is sent: against the worker's summary, and its uid against the request's
            at = 2 if kind == "answer" else 4
            try:
                review, verdict = summary_review(reply[at + 1])
                data = reply[at]
                if not _answer_agrees(data, review, verdict, request_uid, body):
                    raise ValueError("its response does not name the request's uid and its summary's verdict")
            except Exception as exc:  # a kvlint bug in the worker: answered as its failure is
                why = f"malformed answer from the review worker ({type(exc).__name__}: {exc})"
                return _unfinished(body, t0, "internal error (malformed answer)", "internal_error", error=why)
            if kind == "answer":
                _observe(review, verdict, t0)
                return 200, [(b"content-length", str(len(data)).encode("latin-1")), _JSON_TYPE], data
            del review, verdict, data
        elif kind == "bad":
            status, message = reply[2], reply[3]
            if type(status) is not int or not 400 <= status < 500 or type(message) is not str:
                why = "malformed answer from the review worker (its HTTP status or message)"
                return _unfinished(body, t0, "internal error (malformed answer)", "internal_error", error=why)
            return bad_request(ReviewError(message, status))
        del box
        return await _update(body, reply, options, t0, request_uid)

    def _observe(review: Review, verdict: Any, t0: float) -> None:
        """Count and log one answered review."""
        seconds = time.perf_counter() - t0
        state.metrics.observe(verdict, review.dry_run, seconds)
        level = logging.INFO if verdict.outcome != "skipped" else logging.DEBUG
        if state.logger.isEnabledFor(level):
            state.logger.log(
                level, "review", extra={"fields": _log_fields(review, verdict, seconds, settings.mode)}
            )

    def _decided_here(body: bytes, t0: float, cancelled: bool = False) -> _Answer | Review:
        """The body decoded here, and the answer of a review that needs no worker, as the server gave it when it
        decoded every body itself: not an AdmissionReview (HTTP 400), nested too deeply (a KV001 finding),
        needing no linting (:func:`~kvlint.webhook.review.skip_reason`: a DELETE, a subresource, an exempt
        namespace, a trusted controller's write...: allowed whatever the failure mode); else the decoded Review.
        ``cancelled``: the server is shutting down (this task's cancellation is taken back when it answers; a
        body that is not an AdmissionReview has no uid to answer with: CancelledError, validate's HTTP 503)."""
        try:
            review = _uncollected(parse_review, body)
        except ReviewError as exc:
            if cancelled:
                raise asyncio.CancelledError from None
            return bad_request(exc)
        except ReviewTooDeep as exc:
            if cancelled:
                _uncancel()
            payload, verdict = too_deep_response(exc.review, settings)
            _observe(exc.review, verdict, t0)
            return _json_answer(payload)
        if cancelled:
            _uncancel()
        del body
        try:
            skip = _uncollected(skip_reason, review, settings)
        except RecursionError:
            payload, verdict = too_deep_response(review, settings)
            _observe(review, verdict, t0)
            return _json_answer(payload)
        if skip is not None:
            payload, verdict = skipped_response(review, skip)
            _observe(review, verdict, t0)
            return _json_answer(payload)
        return review

    def _unfinished(
        body: bytes,
        t0: float,
        why: str,
        outcome: str,
        *,
        cancelled: bool = False,
        stage: str | None = None,
        error: str | None = None,
        trace: bool = False,
    ) -> _Answer:
        """The answer for a review its worker did not finish (``outcome``: ``timeout``, ``internal_error``,
        ``shutdown``): the body decoded here, then answered as the server answered it when it decoded every
        body itself: not an AdmissionReview (HTTP 400), nested too deeply (a KV001 finding), needing no linting
        (:func:`~kvlint.webhook.review.skip_reason`: a DELETE, a subresource, an exempt namespace...: allowed
        whatever the failure mode), else per the failure mode, with the request's own ``uid``, ``dryRun`` and
        names in the answer, the metrics and the log. ``cancelled``: the server is shutting down (a body with no
        review to answer is left to ``validate``'s HTTP 503); ``stage``: the budget ran out (counted in
        ``kvlint_webhook_budget_exceeded_total``); ``error``: the worker's failure, logged; ``trace``: a kvlint
        bug in the server, logged with its traceback.

        A body over :data:`LOOP_DECODE_BYTES` is not decoded here: the review is answered per the failure mode
        from its head (:func:`~kvlint.webhook.review.review_from_head` of its first :data:`LOOP_DECODE_BYTES`,
        as a body refused for its size is), its exemptions not applied (a DELETE, a subresource or an exempt
        namespace's review is small and still decoded); a head that names no uid gets HTTP 400. It was decoded
        whatever its size, exactly when the worker had failed on it or run out of time: a 3 MiB body of
        ``{},{},...`` held the event loop for its decode, outside any worker's memory limit."""
        if len(body) > LOOP_DECODE_BYTES:
            bare = review_from_head(body[:LOOP_DECODE_BYTES])
            del body
            if bare is None:
                if cancelled:
                    raise asyncio.CancelledError from None  # validate's HTTP 503
                _log_failure(None, error, trace)
                return bad_request(
                    ReviewError(
                        f"{why}, and the request body's first {LOOP_DECODE_BYTES} bytes name no request uid"
                    )
                )
            if cancelled:
                _uncancel()
            review = bare
        else:
            decided = _decided_here(body, t0, cancelled)
            if not isinstance(decided, Review):
                return decided
            review = decided
            del body
        if cancelled:
            state.logger.warning(SHUTDOWN_REASON, extra={"fields": {"uid": _bounded(review.uid)}})
        if stage is not None:
            state.metrics.budget_exceeded.labels(stage).inc()
        _log_failure(review.uid, error, trace)
        payload, verdict = failure_response(review, settings, why, outcome)
        _observe(review, verdict, t0)
        return _json_answer(payload)

    def _log_failure(uid: str | None, error: str | None, trace: bool) -> None:
        """Log a worker's failure (``error``) or a kvlint bug in the server (``trace``: with the traceback of the
        exception being handled) for the review of ``uid`` (None: its body's head names none)."""
        shown = _bounded(uid) if uid is not None else None
        if error is not None:
            state.logger.error(
                "pipeline failed",
                extra={"fields": {"uid": shown, "error": _bounded(error, LOG_REASON_CHARS)}},
            )
        if trace:
            state.logger.error("review failed", exc_info=True, extra={"fields": {"uid": shown}})

    async def _update(
        body: bytes, reply: tuple[Any, ...], options: Any, t0: float, request_uid: str | None
    ) -> _Answer:
        """An UPDATE whose new object has errors, linted in a worker (``reply``: ``("update", seq, rows,
        suppressed, response_bytes, summary)``), and whose ``oldObject`` is linted for the errors it already had
        (``allow_existing_violations``): the body sent to a worker again with the new object's rows, within what
        is left of the budget (:meth:`ReviewPool.review_old <kvlint.webhook.pool.ReviewPool.review_old>`), which
        lints the old object and writes the answer; when that does not finish, the reply's own answer, every
        error denying. The server decodes neither body (it decoded this one on its event loop, and pickled the
        old object to a worker: an UPDATE with errors any client can send). That answer of ``reply``'s was checked
        by ``_validate`` (:func:`_answer_agrees`, with ``request_uid``), and so is the worker's second one here."""
        assert state.pool is not None
        fallback, summary = reply[4], reply[5]
        budget = max(0.0, settings.timeout_seconds - (time.perf_counter() - t0))
        try:
            answered = await state.pool.review_old(body, reply[2], reply[3], settings, options, budget)
        except (BudgetExceeded, WorkerFailed) as exc:
            result = "timeout" if isinstance(exc, BudgetExceeded) else "internal_error"
            state.metrics.old_object_lints.labels(result).inc()
            review, verdict = summary_review(summary)
            state.logger.warning(
                "old object not linted: every error of the update denies",
                extra={
                    "fields": {
                        "uid": _bounded(review.uid),
                        "error": _bounded(str(exc), LOG_REASON_CHARS),
                        "old_object": result,
                    }
                },
            )
            verdict.old_object = result
            data = fallback
        except asyncio.CancelledError:
            _uncancel()
            review, verdict = summary_review(summary)
            state.logger.warning(SHUTDOWN_REASON, extra={"fields": {"uid": _bounded(review.uid)}})
            payload, verdict = failure_response(review, settings, SHUTDOWN_REASON, "shutdown")
            _observe(review, verdict, t0)
            return _json_answer(payload)
        else:
            try:
                review, verdict = summary_review(answered[3])
                data = answered[2]
                agrees = _answer_agrees(data, review, verdict, request_uid, body)
            except ValueError:
                agrees = False
            if agrees:
                state.metrics.old_object_lints.labels("linted").inc()
            else:  # a kvlint bug in the worker: its first answer, every error denying
                state.metrics.old_object_lints.labels("internal_error").inc()
                review, verdict = summary_review(summary)
                state.logger.error(
                    "malformed answer from the review worker", extra={"fields": {"uid": _bounded(review.uid)}}
                )
                verdict.old_object = "internal_error"
                data = fallback
        _observe(review, verdict, t0)
        return 200, [(b"content-length", str(len(data)).encode("latin-1")), _JSON_TYPE], data

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        why = state.not_ready_reason()
        if why:
            return PlainTextResponse(f"not ready: {why}\n", status_code=503)
        return PlainTextResponse("ready\n")

    async def metrics_endpoint(request: Request) -> Response:
        body, ctype = state.metrics.render()
        return Response(body, media_type=ctype)

    async def heartbeat() -> None:
        while True:
            state.heartbeat = time.monotonic()
            await asyncio.sleep(_HEARTBEAT_SECONDS)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        beat = asyncio.get_running_loop().create_task(heartbeat())
        state.pool = ReviewPool(
            settings.workers,
            pipeline=state.pipeline,
            memory_limit=settings.worker_memory_bytes,
            metrics=state.metrics,
            logger=state.logger,
        )
        t0 = time.perf_counter()
        await state.pool.start()
        for obj in state.background:
            obj.start()
        if state.warm_up:
            await _warm_up(state)
        if state.freeze_gc:
            gc.collect()
            gc.freeze()
        state.ready = True
        state.logger.info(
            "webhook ready",
            extra={
                "fields": {
                    "mode": settings.mode,
                    "failure_mode": settings.failure_mode,
                    "timeout_s": settings.timeout_seconds,
                    "workers": settings.workers,
                    "start_ms": round((time.perf_counter() - t0) * 1000, 1),
                }
            },
        )
        try:
            yield
        finally:
            state.ready = False
            for obj in reversed(state.background):
                try:
                    obj.stop()
                except Exception:  # shutdown must go on
                    state.logger.warning("background task stop failed", exc_info=True)
            await state.pool.close()
            beat.cancel()

    starlette = Starlette(
        routes=[
            # a path or method other than POST /validate (404, 405) and a root_path go through the router
            Route("/validate", _Endpoint(validate), methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    starlette.state.webhook = state
    return WebhookApp(starlette, validate)


def create_probe_app(state: WebhookState) -> Any:
    """The probe listener's app: ``/healthz`` (the review loop's heartbeat is fresh), ``/readyz`` (as on the
    review listener) and ``/metrics``; no lifespan of its own (the review app's owns the pool)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def healthz(request: Request) -> Response:
        why = state.not_live_reason()
        if why:
            return PlainTextResponse(f"not live: {why}\n", status_code=503)
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        why = state.not_ready_reason()
        if why:
            return PlainTextResponse(f"not ready: {why}\n", status_code=503)
        return PlainTextResponse("ready\n")

    async def metrics_endpoint(request: Request) -> Response:
        body, ctype = state.metrics.render()
        return Response(body, media_type=ctype)

    return Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ]
    )


async def _warm_up(state: WebhookState) -> None:
    """Lint :data:`WARM_UP_OBJECT` once in every worker (imports, catalogues); failures are logged only."""
    assert state.pool is not None
    t0 = time.perf_counter()
    obj = WARM_UP_OBJECT
    label = "<admission Deployment/default/kvlint-warm-up>.json"
    try:
        await asyncio.gather(
            *(
                state.pool.lint(obj, label, state.settings.options, max(30.0, state.settings.timeout_seconds))
                for _ in range(state.settings.workers)
            )
        )
    except (BudgetExceeded, WorkerFailed):
        state.logger.warning("warm-up review failed", exc_info=True)
    state.logger.info(
        "warm-up done", extra={"fields": {"duration_ms": round((time.perf_counter() - t0) * 1000, 1)}}
    )


__all__ = [
    "LIVENESS_STALL_SECONDS",
    "LOOP_DECODE_BYTES",
    "LintOutcome",
    "WARM_UP_OBJECT",
    "WebhookState",
    "create_app",
    "create_probe_app",
]
