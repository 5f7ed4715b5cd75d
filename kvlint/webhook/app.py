"""The webhook's ASGI application (Starlette): ``/validate``, ``/healthz``, ``/readyz``, ``/metrics``.

Request path of ``POST /validate``:

1. size: a ``Content-Length`` above ``max_request_bytes`` gets HTTP 413 unread; a body streamed past
   the limit is cut off with 413 too. A declared ``Content-Type`` other than JSON gets 415.
2. :func:`~kvlint.webhook.review.parse_review`: anything that is not an AdmissionReview gets HTTP 400
   with ``{"error": "..."}`` (the API server then applies the configuration's ``failurePolicy``).
3. :func:`~kvlint.webhook.review.skip_reason`: reviews that need no linting are allowed at once.
4. the pipeline runs in a worker thread (the event loop stays free for probes and other reviews),
   bounded by ``timeout_seconds``, queueing included; when it runs out, the answer follows the failure
   mode and the thread finishes in the background (counted by ``kvlint_webhook_overrunning_reviews``).
5. any exception in kvlint is logged with its traceback and answered per the failure mode: a review
   never crashes the server, and the API server always gets an AdmissionReview back.

Dry-run reviews (``request.dryRun: true``, e.g. ``kubectl apply --dry-run=server``) get exactly the
answer a real request would, so a dry run previews admission; the webhook has no side effects to
suppress (``sideEffects: None``), and dry runs are counted apart (``dry_run`` label) and logged with
``dry_run: true`` so pre-deploy checks do not read as admissions.

``/readyz`` is 200 once the pipeline has been warmed up (catalogues loaded, one sample review linted)
and, with ``--cluster``, a node inventory is loaded; 503 while draining for shutdown or when every
worker thread is held by an overrunning review. ``/healthz`` is 200 while the event loop answers.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from kvlint.webhook.metrics import WebhookMetrics
from kvlint.webhook.review import (
    Review,
    ReviewError,
    WebhookSettings,
    build_response,
    failure_response,
    lint_review,
    parse_review,
    skip_reason,
    skipped_response,
)

#: A Deployment linted once at start-up so the first real review does not pay for imports and catalogue
#: loading (vLLM 0.11.0, Llama 3.1 8B from the bundled catalogue, one L4 via the GKE node label).
WARM_UP_OBJECT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kvlint-warm-up", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                "containers": [
                    {
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                ],
            }
        }
    },
}


@dataclass
class WebhookState:
    """Mutable server state shared by the handlers and the lifespan.

    ``pipeline`` (``(LoadResult, Options) -> CheckResult``) defaults to ``run_documents``; tests and the
    benchmark may wrap it. ``background`` holds objects with ``start()``/``stop()`` (certificate
    reloader, node inventory) run for the server's lifetime; ``readiness`` extra checks returning an
    error string or None.
    """

    settings: WebhookSettings
    metrics: WebhookMetrics
    logger: logging.Logger
    pipeline: Callable[[Any, Any], Any] | None = None
    options_hook: Callable[[Any], Any] | None = None
    background: list[Any] = field(default_factory=list)
    readiness: list[Callable[[], str | None]] = field(default_factory=list)
    warm_up: bool = True
    ready: bool = False
    draining: bool = False
    overrunning: int = 0
    executor: concurrent.futures.ThreadPoolExecutor | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def not_ready_reason(self) -> str | None:
        """Why ``/readyz`` fails right now, or None when ready."""
        if self.draining:
            return "shutting down"
        if not self.ready:
            return "starting"
        if self.overrunning >= self.settings.workers:
            return f"all {self.settings.workers} workers are held by reviews that overran their budget"
        for check in self.readiness:
            why = check()
            if why:
                return why
        return None


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


async def _read_body(request: Any, limit: int) -> bytes:
    """The request body, at most ``limit`` bytes. Raises ReviewError(413) when larger."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise ReviewError(f"invalid Content-Length {declared!r}") from None
        if size > limit:
            raise ReviewError(f"request body of {size} bytes exceeds the limit of {limit} bytes", 413)
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise ReviewError(f"request body exceeds the limit of {limit} bytes", 413)
        chunks.append(chunk)
    return b"".join(chunks)


def _log_fields(review: Review, verdict: Any, seconds: float, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "uid": review.uid,
        "operation": review.operation,
        "kind": review.kind,
        "namespace": review.namespace,
        "name": review.name,
        "dry_run": review.dry_run,
        "mode": mode,
        "allowed": verdict.allowed,
        "outcome": verdict.outcome,
        "duration_ms": round(seconds * 1000, 3),
    }
    if verdict.rules:
        out["rules"] = verdict.rules
        out["errors"] = [f"{d.rule}: {d.message}" for d in verdict.errors]
    if verdict.suppressed:
        out["suppressed"] = verdict.suppressed
    if verdict.reason:
        out["reason"] = verdict.reason
    return out


async def _run_pipeline(state: WebhookState, review: Review) -> tuple[dict[str, Any], Any]:
    """Lint in a worker thread within the time budget; answer per the failure mode otherwise."""
    settings = state.settings
    assert state.executor is not None
    options = state.options_hook(settings.options) if state.options_hook else settings.options
    cf = state.executor.submit(lint_review, review, options, state.pipeline)
    try:
        result = await asyncio.wait_for(asyncio.wrap_future(cf), settings.timeout_seconds)
    except asyncio.TimeoutError:
        with state.lock:
            if not cf.done():  # still running (queued ones were cancelled by wait_for)
                state.overrunning += 1
                state.metrics.overrunning.set(state.overrunning)
                cf.add_done_callback(lambda _f: _overrun_done(state))
        return failure_response(
            review, settings, f"review not finished within {settings.timeout_seconds:g} s", "timeout"
        )
    except Exception as exc:
        state.logger.error(
            "pipeline failed",
            exc_info=True,
            extra={"fields": {"uid": review.uid, "error": f"{type(exc).__name__}: {exc}"}},
        )
        return failure_response(review, settings, f"internal error ({type(exc).__name__})", "internal_error")
    return build_response(review, settings, result)


def _overrun_done(state: WebhookState) -> None:
    with state.lock:
        state.overrunning -= 1
        state.metrics.overrunning.set(state.overrunning)


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
) -> Any:
    """Build the Starlette application serving the webhook.

    Args:
        settings: mode, failure mode, time budget, size limit, workers, pipeline options.
        pipeline: replaces :func:`kvlint.pipeline.run_documents` (tests, benchmarks).
        metrics: a :class:`WebhookMetrics` (a new one by default); exposed on ``/metrics``.
        logger: where review log records go (``kvlint.webhook`` by default).
        background: objects with ``start()``/``stop()`` run during the app's lifespan.
        readiness: extra ``/readyz`` checks (return a reason string when not ready).
        options_hook: per review, maps the pipeline options to those used (``--cluster`` adds the
            current node inventory); must not block.
        warm_up: lint :data:`WARM_UP_OBJECT` before reporting ready.

    The returned app has ``app.state.webhook`` (the :class:`WebhookState`).
    Raises ImportError with the ``pip install 'kvlint-k8s[webhook]'`` hint when Starlette is missing.
    """
    from kvlint.webhook import require_server_deps

    require_server_deps()
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
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
    )

    def bad_request(exc: ReviewError) -> Response:
        reason = {413: "too_large", 415: "unsupported_media_type"}.get(exc.status, "malformed")
        state.metrics.bad_requests.labels(reason).inc()
        state.logger.warning("bad request", extra={"fields": {"status": exc.status, "error": str(exc)}})
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    async def validate(request: Request) -> Response:
        t0 = time.perf_counter()
        try:
            if not _is_json(request.headers.get("content-type")):
                raise ReviewError(
                    f"Content-Type must be application/json, got {request.headers.get('content-type')!r}", 415
                )
            body = await _read_body(request, settings.max_request_bytes)
            review = parse_review(body)
        except ReviewError as exc:
            return bad_request(exc)
        try:
            why = skip_reason(review, settings)
            if why is not None:
                payload, verdict = skipped_response(review, why)
            else:
                payload, verdict = await _run_pipeline(state, review)
        except Exception as exc:  # a kvlint bug outside the pipeline: still answer the API server
            state.logger.error("review failed", exc_info=True, extra={"fields": {"uid": review.uid}})
            payload, verdict = failure_response(
                review, settings, f"internal error ({type(exc).__name__})", "internal_error"
            )
        seconds = time.perf_counter() - t0
        state.metrics.observe(verdict, review.dry_run, seconds)
        level = logging.INFO if verdict.outcome != "skipped" else logging.DEBUG
        state.logger.log(
            level, "review", extra={"fields": _log_fields(review, verdict, seconds, settings.mode)}
        )
        return JSONResponse(payload)

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

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        state.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=settings.workers, thread_name_prefix="kvlint-review"
        )
        for obj in state.background:
            obj.start()
        if state.warm_up:
            await _warm_up(state)
        state.ready = True
        state.logger.info(
            "webhook ready",
            extra={
                "fields": {
                    "mode": settings.mode,
                    "failure_mode": settings.failure_mode,
                    "timeout_seconds": settings.timeout_seconds,
                    "max_request_bytes": settings.max_request_bytes,
                    "workers": settings.workers,
                    "exemptions_allowed": getattr(settings.options, "exemptions_allowed", None),
                }
            },
        )
        try:
            yield
        finally:
            state.ready = False
            state.draining = True
            for obj in reversed(state.background):
                with contextlib.suppress(Exception):
                    obj.stop()
            state.executor.shutdown(wait=False, cancel_futures=True)
            state.logger.info("webhook stopped")

    app = Starlette(
        routes=[
            Route("/validate", validate, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_endpoint, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.webhook = state
    return app


async def _warm_up(state: WebhookState) -> None:
    """Lint :data:`WARM_UP_OBJECT` once in a worker (imports, catalogues); failures are logged only."""
    review = Review(
        api_version="admission.k8s.io/v1",
        uid="warm-up",
        operation="CREATE",
        kind="Deployment",
        namespace="default",
        name="kvlint-warm-up",
        sub_resource=None,
        dry_run=True,
        object=WARM_UP_OBJECT,
        old_object=None,
    )
    assert state.executor is not None
    t0 = time.perf_counter()
    try:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(state.executor, lint_review, review, state.settings.options, None)
    except Exception:
        state.logger.warning("warm-up review failed", exc_info=True)
    state.logger.info(
        "warm-up done", extra={"fields": {"duration_ms": round((time.perf_counter() - t0) * 1000, 1)}}
    )


__all__ = ["WARM_UP_OBJECT", "WebhookState", "create_app"]
