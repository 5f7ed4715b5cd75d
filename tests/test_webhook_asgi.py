"""The review listener driven at the ASGI level, without a network: ``POST /validate`` answers with the bytes
and headers of Starlette's own ``JSONResponse`` for the same payload (200, 400, 408, 413, 415, a mid-body
disconnect), other paths and methods get Starlette's answers, a review's file label skips nothing it must
replace, and the worker pool keeps waiting reviews in their turn. (Written for a plain ASGI ``/validate``
path that was measured and not adopted, issue 19; they pin the listener's answers whatever serves them.)"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("prometheus_client")

from starlette.responses import JSONResponse  # noqa: E402

from kvlint.webhook.app import create_app  # noqa: E402
from kvlint.webhook.review import Review, WebhookSettings, review_label  # noqa: E402

MAX = 4096


def _review(uid: str = "uid-1", operation: str = "DELETE", **req: Any) -> dict[str, Any]:
    request = {"uid": uid, "operation": operation, "kind": {"kind": "Deployment"}, "namespace": "serving"}
    request.update(req)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def _scope(method: str = "POST", path: str = "/validate", headers: Any = None, root_path: str = "") -> Any:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "root_path": root_path,
        "query_string": b"",
        "headers": headers if headers is not None else [(b"content-type", b"application/json")],
        "server": ("127.0.0.1", 8443),
        "client": ("127.0.0.1", 40000),
    }


def _call(
    app: Any, scope: Any, messages: list[Any], hang: bool = False, cancelled: list[bool] | None = None
) -> list[Any]:
    """Run one request through ``app``; ``messages`` are what ``receive`` returns in turn (then it blocks
    when ``hang``, else reports a disconnect). ``cancelled`` gets True appended when the app cancels a blocked
    ``receive`` (a deadline), False when the block ran out (60 s)."""
    sent: list[Any] = []
    queue = list(messages)

    async def receive() -> Any:
        if queue:
            return queue.pop(0)
        if hang:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                if cancelled is not None:
                    cancelled.append(True)
                raise
            if cancelled is not None:
                cancelled.append(False)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent


def _body(data: bytes, more: bool = False) -> dict[str, Any]:
    return {"type": "http.request", "body": data, "more_body": more}


@pytest.fixture()
def app() -> Any:
    return create_app(WebhookSettings(max_request_bytes=MAX, body_timeout_seconds=0.2), warm_up=False)


def _as_starlette(sent: list[Any], status: int, headers: dict[str, str] | None = None) -> None:
    """``sent`` is exactly what Starlette's JSONResponse of the same payload sends."""
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    payload = json.loads(sent[1]["body"])
    ref = JSONResponse(payload, status_code=status, headers=headers)
    assert sent[0]["status"] == status
    assert sent[0]["headers"] == ref.raw_headers
    assert sent[1]["body"] == ref.body


def test_answer_bytes_and_headers_are_starlettes(app: Any) -> None:
    body = json.dumps(_review(uid="ü-ñ-1")).encode()  # non-ASCII stays UTF-8 (ensure_ascii=False)
    sent = _call(app, _scope(), [_body(body[:10], more=True), _body(body[10:])])
    _as_starlette(sent, 200)
    assert "ü-ñ-1".encode() in sent[1]["body"]
    assert json.loads(sent[1]["body"])["response"] == {"uid": "ü-ñ-1", "allowed": True}


@pytest.mark.parametrize(
    "headers, messages, status, needle, close",
    [
        ([(b"content-type", b"application/json")], [_body(b"{nope")], 400, "not valid JSON", False),
        ([(b"content-type", b"text/yaml")], [_body(b"{}")], 415, "Content-Type", False),
        # the first Content-Type counts, as with Starlette's Headers.get
        ([(b"content-type", b"text/yaml"), (b"content-type", b"application/json")], [], 415, "yaml", False),
        ([(b"content-length", b"12x")], [], 400, "invalid Content-Length", False),
        # a declared length over the limit: refused once its first chunk shows no uid (a head naming one is
        # read on and answered as a review, test_a_review_too_large_or_one_too_many_is_answered_per_the_failure_mode)
        (
            [(b"content-length", str(MAX + 1).encode())],
            [_body(b"x" * 100, more=True)],
            413,
            f"{MAX + 1} bytes",
            True,
        ),
        # RFC 9110 section 8.6: 1*DIGIT, leading zeros allowed; compared as digits, never made an int
        (
            [(b"content-length", b"0" * 30 + str(MAX + 1).encode())],
            [_body(b"x" * (MAX + 1))],
            413,
            f"of {MAX + 1} bytes",
            True,
        ),
        # past REFUSED_READ_FACTOR x the limit: refused unread
        ([(b"content-length", str(4 * MAX + 1).encode())], [], 413, f"of {4 * MAX + 1} bytes", True),
        ([(b"content-length", b"9" * 25)], [], 413, f"of {'9' * 25} bytes", True),
        ([(b"content-length", b"9" * 5000)], [], 413, f"of {'9' * 20}...(5000 digits) bytes", True),
        ([(b"content-length", b"+12")], [], 400, "invalid Content-Length", False),
        ([(b"content-length", b"1_2")], [], 400, "invalid Content-Length", False),
        ([(b"content-length", b"")], [], 400, "invalid Content-Length", False),
        ([(b"content-length", "\u00b2".encode("latin-1"))], [], 400, "invalid Content-Length", False),
        ([], [_body(b"x" * 3000, more=True), _body(b"x" * 3000)], 413, f"limit of {MAX}", True),
    ],
)
def test_refusals_are_starlettes(
    app: Any, headers: Any, messages: list[Any], status: int, needle: str, close: bool
) -> None:
    sent = _call(app, _scope(headers=headers), messages)
    _as_starlette(sent, status, {"Connection": "close"} if close else None)
    assert needle in json.loads(sent[1]["body"])["error"]


def test_content_length_with_leading_zeros_reads_the_body(app: Any) -> None:
    """A declared length with leading zeros is its number: the body is read and the review answered as with
    the same length without them (20 or more digits got 413 before)."""
    body = json.dumps(_review(uid="zeros")).encode()
    answers = []
    for length in (b"%d" % len(body), b"0" * 30 + b"%d" % len(body), b"0" * 4000 + b"%d" % len(body)):
        headers = [(b"content-type", b"application/json"), (b"content-length", length)]
        answers.append(_call(app, _scope(headers=headers), [_body(body)]))
    _as_starlette(answers[0], 200)
    assert answers[1] == answers[0] and answers[2] == answers[0]


def test_body_deadline_408_counted(app: Any) -> None:
    """A body not in by the deadline gets 408: the wait for its next chunk is cancelled at the deadline (an
    event, where a bound on the wall time of the call failed on a loaded machine), not left to run out."""
    cancelled: list[bool] = []
    sent = _call(app, _scope(), [_body(b"{", more=True)], hang=True, cancelled=cancelled)
    assert cancelled == [True]  # the body deadline ended the wait for the rest of the body
    _as_starlette(sent, 408, {"Connection": "close"})
    metrics = app.state.webhook.metrics.render()[0].decode()
    assert 'kvlint_webhook_connections_closed_total{listener="review",reason="body_timeout"} 1.0' in metrics
    assert 'kvlint_webhook_bad_requests_total{reason="body_timeout"} 1.0' in metrics


def test_disconnect_mid_body_is_counted_and_answered_without_raising(app: Any) -> None:
    """A client gone before its body is in gets Starlette's empty 400 (nobody reads it) and is counted as
    ``client_gone``; it no longer raises ClientDisconnect out of the app (Starlette's 500, and uvicorn's
    ERROR record with a traceback for each such connection)."""
    from starlette.responses import Response

    ref = Response(status_code=400)
    for messages in ([_body(b"{", more=True)], []):  # half a body, then gone; gone at once
        sent = _call(app, _scope(), messages)
        assert sent[0]["status"] == 400 and sent[0]["headers"] == ref.raw_headers and sent[1]["body"] == b""
    metrics = app.state.webhook.metrics.render()[0].decode()
    assert 'kvlint_webhook_connections_closed_total{listener="review",reason="client_gone"} 2.0' in metrics


def test_other_paths_and_methods_are_starlettes(app: Any) -> None:
    sent = _call(app, _scope(method="GET"), [])
    assert sent[0]["status"] == 405 and (b"allow", b"POST") in sent[0]["headers"]
    assert _call(app, _scope(method="GET", path="/nope"), [])[0]["status"] == 404
    ok = _call(app, _scope(method="GET", path="/healthz"), [])
    assert ok[0]["status"] == 200 and ok[1]["body"] == b"ok\n"
    # under a root_path the request goes through Starlette's router to the same endpoint
    sent = _call(
        app, _scope(path="/x/validate", root_path="/x", headers=[(b"content-type", b"text/yaml")]), []
    )
    _as_starlette(sent, 415)
    assert app.state.webhook.settings.max_request_bytes == MAX


@pytest.mark.parametrize(
    "kind, namespace, name",
    [
        ("Deployment", "serving", "llama-8b"),
        ("Deployment", "a/b", "..//..\\x"),
        ("Pod", None, "tab\there"),
        ("Pod", "ns", "é" * 300),
        ("", "", ""),
        ("Pod", "ns", "line\nbreak\u200b"),
    ],
)
def test_review_label_matches_the_character_walk(kind: str, namespace: str | None, name: str) -> None:
    def part(text: str | None) -> str:  # the definition: every character checked
        cleaned = "".join(c if c.isprintable() and c not in "/\\" else "_" for c in str(text or ""))[:253]
        return cleaned.replace("..", "__")

    rev = Review("admission.k8s.io/v1", "u", "CREATE", kind, namespace, name, None, False, {}, None)
    want = f"<admission {'/'.join(part(x) for x in (kind, namespace, name) if x)}>.json"
    assert review_label(rev) == want


def test_a_waiting_review_keeps_its_turn(tmp_path: Any) -> None:
    """One worker: B waits while A lints; C, asked for the moment A's worker is handed back (before B has
    run), queues behind B instead of taking the worker. Ordered by events (A lints until the test opens its
    gate, which it does once B is seen waiting), not by sleeps: B was sent 0.1 s after A, which linted 0.4 s,
    and on a loaded machine A could be done before B was asked."""
    from webhook_pipelines import gated_pipeline

    from kvlint.webhook.pool import ReviewPool
    from kvlint.webhook.request_options import webhook_options

    gate = tmp_path / "a-may-finish"

    def obj(name: str, **data: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}

    async def until(condition: Any) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, "timed out waiting for the pool"
            await asyncio.sleep(0.005)

    async def run() -> list[str]:
        pool = ReviewPool(1, pipeline=gated_pipeline)
        await pool.start()
        order: list[str] = []
        options = webhook_options()
        try:

            async def first() -> None:
                await pool.lint(obj("a", gate=str(gate)), "a.json", options, 60)
                order.append("A")
                await pool.lint(obj("c"), "c.json", options, 60)
                order.append("C")

            async def second() -> None:
                await until(lambda: pool.busy == 1)  # A is being linted
                b = asyncio.ensure_future(pool.lint(obj("b"), "b.json", options, 60))
                await until(lambda: pool.waiting == 1)  # B waits for the worker
                gate.touch()  # A may finish now
                await b
                order.append("B")

            await asyncio.gather(first(), second())
        finally:
            await pool.close()
        return order

    assert asyncio.run(run()) == ["A", "B", "C"]


@pytest.mark.parametrize("failure_mode", ["open", "closed"])
def test_reviews_in_flight_are_bounded_and_the_rest_wait_then_are_answered_per_the_failure_mode(
    failure_mode: str,
) -> None:
    """With one in-flight slot: a review whose body is still arriving holds no slot (another is answered
    meanwhile; the slow one gets 408 at its body deadline); a review whose body is in waits for a busy slot
    within its budget, then is answered per the failure mode, its uid read from the body's head without
    decoding it (counted as the ``queue`` stage of the budget); once the slot is free, reviews are answered
    again. Bounds the decoded objects in the server (each 3 MiB body of small JSON values takes ~100 MiB
    decoded). It got HTTP 503, which left the answer to the API server's ``failurePolicy``: with ``Ignore`` and
    ``--failure-mode closed``, the reviews of a burst past the slots were admitted unchecked and without a
    warning while those waiting for a worker were denied. A body whose head holds no uid still gets 503."""
    settings = WebhookSettings(
        max_inflight=1,
        timeout_seconds=0.2,
        body_timeout_seconds=1.0,
        failure_mode=failure_mode,  # type: ignore[arg-type]
    )
    app = create_app(settings, warm_up=False)
    state = app.state.webhook
    body = json.dumps(_review()).encode()
    waiting = json.dumps(_review(uid="waited-for-a-slot", operation="CREATE")).encode()
    no_uid = json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}
    ).encode()

    def once(data: bytes = body) -> Any:
        queue = [_body(data)]

        async def receive() -> Any:
            return queue.pop(0) if queue else {"type": "http.disconnect"}

        return receive

    async def run() -> list[list[Any]]:
        async def slow_receive() -> Any:  # the body never comes
            await asyncio.sleep(5)
            return {"type": "http.disconnect"}

        boxes: list[list[Any]] = [[], [], [], [], []]

        def send_to(box: list[Any]) -> Any:
            async def send(message: Any) -> None:
                box.append(message)

            return send

        a = asyncio.create_task(app(_scope(), slow_receive, send_to(boxes[0])))
        await asyncio.sleep(0.05)
        await app(_scope(), once(), send_to(boxes[1]))  # answered while A's body is awaited
        assert state.inflight is not None
        await state.inflight.acquire()  # the only slot busy (as with a review being linted)
        await app(_scope(), once(waiting), send_to(boxes[2]))
        await app(_scope(), once(no_uid), send_to(boxes[3]))
        state.inflight.release()
        await app(_scope(), once(), send_to(boxes[4]))
        await a
        return boxes

    sent_a, sent_b, sent_c, sent_no_uid, sent_d = asyncio.run(run())
    assert sent_a[0]["status"] == 408
    assert sent_b[0]["status"] == 200
    assert sent_c[0]["status"] == 200
    answer = json.loads(sent_c[1]["body"])
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    resp = answer["response"]
    assert resp["uid"] == "waited-for-a-slot"
    assert resp["allowed"] is (failure_mode == "open")
    text = resp["warnings"][0] if failure_mode == "open" else resp["status"]["message"]
    assert "more than 1 reviews in flight for 0.2 s" in text and "not checked" in text
    assert sent_no_uid[0]["status"] == 503 and b"reviews in flight" in sent_no_uid[1]["body"]
    assert sent_d[0]["status"] == 200
    metrics = state.metrics.render()[0].decode()
    assert 'kvlint_webhook_budget_exceeded_total{stage="queue"} 1.0' in metrics
    assert 'kvlint_webhook_bad_requests_total{reason="overloaded"} 1.0' in metrics
    verdict = "allowed" if failure_mode == "open" else "denied"
    assert (
        f'kvlint_webhook_reviews_total{{dry_run="false",outcome="timeout",verdict="{verdict}"}} 1.0'
        in metrics
    )
    assert state.body_bytes == 0


def test_bodies_held_before_decoding_are_bounded_in_bytes() -> None:
    """Bodies being read are held in the server, at most ``body_buffer_bytes`` of them (4 x slots x the
    request limit): a chunk past it gets HTTP 503 (``overloaded``) at once; the bytes are given back when a
    body is decoded, refused or times out."""
    # the bodies must all be held at once: a deadline (3 s) no stall of the loop between their starts outlasts
    # (0.3 s did: the first given back before the fifth came, which then found room)
    settings = WebhookSettings(max_inflight=1, max_request_bytes=MAX, body_timeout_seconds=3.0)
    assert settings.body_buffer_bytes == 4 * MAX
    app = create_app(settings, warm_up=False)
    state = app.state.webhook
    chunk = b" " * (MAX - 100)

    async def run() -> list[list[Any]]:
        boxes: list[list[Any]] = [[] for _ in range(5)]

        def stalled() -> Any:
            queue = [_body(chunk, more=True)]

            async def receive() -> Any:
                if queue:
                    return queue.pop(0)
                await asyncio.sleep(60)  # cancelled at the body deadline
                return {"type": "http.disconnect"}

            return receive

        def send_to(box: list[Any]) -> Any:
            async def send(message: Any) -> None:
                box.append(message)

            return send

        tasks = []
        for box in boxes:
            tasks.append(asyncio.create_task(app(_scope(), stalled(), send_to(box))))
            await asyncio.sleep(0.01)
        assert state.body_bytes == 4 * len(chunk)
        await asyncio.gather(*tasks)
        return boxes

    boxes = asyncio.run(run())
    assert [b[0]["status"] for b in boxes] == [408, 408, 408, 408, 503]
    assert b"request bodies being read exceed" in boxes[4][1]["body"]
    assert state.body_bytes == 0
    assert 'kvlint_webhook_bad_requests_total{reason="overloaded"} 1.0' in state.metrics.render()[0].decode()


@pytest.mark.parametrize("failure_mode", ["open", "closed"])
def test_a_review_too_large_or_one_too_many_is_answered_per_the_failure_mode(failure_mode: str) -> None:
    """A review body over ``max_request_bytes`` (declared or streamed) and one whose chunk would take the bodies
    held past ``body_buffer_bytes`` got HTTP 413 and 503: the API server then applied ``failurePolicy`` (under
    ``Ignore``, admitted unchecked and without a warning, whatever ``--failure-mode`` said). When the head names
    the request's uid, as the API server's does, the body is read to its end without being held and the review
    is answered per the failure mode (outcome ``too_large`` or ``overloaded``), on a connection left open; the
    bytes it held are given back. Past four times the limit it is refused with 413 and the connection closed."""
    settings = WebhookSettings(
        max_inflight=1,
        max_request_bytes=MAX,
        body_timeout_seconds=3.0,  # the four stalled bodies below are still held when the review comes
        failure_mode=failure_mode,  # type: ignore[arg-type]
    )
    assert settings.body_buffer_bytes == 4 * MAX
    app = create_app(settings, warm_up=False)
    state = app.state.webhook
    big = json.dumps(_review(uid="big", padding="x" * (2 * MAX))).encode()
    assert MAX < len(big) < 4 * MAX
    declared = [(b"content-type", b"application/json"), (b"content-length", str(len(big)).encode())]
    allowed = failure_mode == "open"

    def answer(sent: list[Any], uid: str, words: str) -> None:
        assert sent[0]["status"] == 200
        assert all(name != b"connection" for name, _ in sent[0]["headers"])  # the body was read: kept open
        resp = json.loads(sent[1]["body"])["response"]
        assert resp["uid"] == uid and resp["allowed"] is allowed
        text = resp["warnings"][0] if allowed else resp["status"]["message"]
        assert words in text and "not checked" in text

    halves = [_body(big[: len(big) // 2], more=True), _body(big[len(big) // 2 :])]
    answer(
        _call(app, _scope(headers=declared), [_body(big)]), "big", f"of {len(big)} bytes exceeds the limit"
    )
    answer(_call(app, _scope(headers=declared), halves), "big", "exceeds the limit")
    answer(_call(app, _scope(), halves), "big", f"exceeds the limit of {MAX} bytes")  # streamed, no length
    assert state.body_bytes == 0
    huge = _review(uid="huge", padding="x" * (4 * MAX))
    sent = _call(app, _scope(), [_body(json.dumps(huge).encode())])
    assert sent[0]["status"] == 413 and (b"connection", b"close") in sent[0]["headers"]

    # one body more than the bodies held: four stalled bodies of (MAX - 20) bytes leave 80 bytes of the cap,
    # the review's first 60 bytes are held, its next chunk is past the cap
    filler = b" " * (MAX - 20)
    held_up = json.dumps(_review(uid="one-too-many", operation="CREATE")).encode()

    async def run() -> list[Any]:
        sent: list[Any] = []

        def stalled() -> Any:
            queue = [_body(filler, more=True)]

            async def receive() -> Any:
                if queue:
                    return queue.pop(0)
                await asyncio.sleep(60)  # cancelled at the body deadline
                return {"type": "http.disconnect"}

            return receive

        async def discard(message: Any) -> None:
            pass

        async def send(message: Any) -> None:
            sent.append(message)

        tasks = [asyncio.create_task(app(_scope(), stalled(), discard)) for _ in range(4)]
        await asyncio.sleep(0.05)
        assert state.body_bytes == 4 * len(filler)
        assert len(held_up) > 80
        queue = [_body(held_up[:60], more=True), _body(held_up[60:])]

        async def receive() -> Any:
            return queue.pop(0)

        await app(_scope(), receive, send)
        assert state.body_bytes == 4 * len(filler)  # the refused body held nothing
        await asyncio.gather(*tasks)
        return sent

    answer(asyncio.run(run()), "one-too-many", f"request bodies being read exceed {4 * MAX} bytes at once")
    assert state.body_bytes == 0
    metrics = state.metrics.render()[0].decode()
    verdict = "allowed" if allowed else "denied"
    for outcome, n in (("too_large", 3), ("overloaded", 1)):
        line = (
            f'kvlint_webhook_reviews_total{{dry_run="false",outcome="{outcome}",verdict="{verdict}"}} {n}.0'
        )
        assert line in metrics
    assert 'kvlint_webhook_bad_requests_total{reason="too_large"} 1.0' in metrics  # the one past 4x
    assert 'reason="overloaded"' not in metrics


@pytest.mark.parametrize("freeze", [False, True])
def test_freeze_gc_freezes_what_start_up_left_alive(freeze: bool) -> None:
    """``create_app(freeze_gc=True)`` (``kvlint webhook serve``) moves the objects alive once the app has
    started into the collector's permanent generation; by default nothing is frozen (tests, embedding)."""
    import gc

    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    assert gc.get_freeze_count() == 0
    app = create_app(WebhookSettings(workers=1), warm_up=False, freeze_gc=freeze)
    marker = [object()]  # alive from before the start-up to after it
    try:
        with TestClient(app) as client:
            assert client.get("/readyz").status_code == 200
            frozen = gc.get_freeze_count()
            scanned = any(o is marker for o in gc.get_objects())  # the generations collections walk
    finally:
        gc.unfreeze()
    assert (frozen > 1000) is freeze, frozen
    assert scanned is not freeze
