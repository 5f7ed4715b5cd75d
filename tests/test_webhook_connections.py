"""What one TLS connection may cost the webhook's review listener (over real TLS on loopback): requests
pipelined without bound, and a client that sends requests and never reads the answers.

A server runs in this process (:class:`kvlint.webhook.server.ServerThread`, one review worker); each test
talks to it with a raw TLS socket, as a hostile client would, and reads what the server counts in
``kvlint_webhook_connections_closed_total{reason}``.
"""

from __future__ import annotations

import json
import re
import socket
import ssl
import time
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
trustme = pytest.importorskip("trustme")

from kvlint.webhook.app import create_app  # noqa: E402
from kvlint.webhook.protocol import DEFAULT_MAX_PIPELINED  # noqa: E402
from kvlint.webhook.review import WebhookSettings  # noqa: E402
from kvlint.webhook.server import ServerThread, make_reloader  # noqa: E402

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
#: a review whose body is never all sent: the request is being answered (its body read) until the body deadline
SLOW_BODY = (
    b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
)
#: the most seconds a test waits for something the server must do (an answer, a close, a count): a deadline for
#: a hung server, never a bound the behaviour is measured against (CI runs on a loaded 2-core machine)
WAIT_S = 30.0


def _serve(
    tls: dict[str, str], settings: WebhookSettings | None = None, pipeline: Any = None, **server_options: Any
) -> tuple[ServerThread, Any]:
    settings = settings or WebhookSettings(workers=1, timeout_seconds=2.0)
    app = create_app(settings, warm_up=False, pipeline=pipeline)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    return ServerThread(app, reloader, **server_options).start(), app


def _closed(app: Any, reason: str) -> float:
    return float(app.state.webhook.metrics.connections_closed.labels("review", reason)._value.get())


def _evicted(app: Any, listener: str, state: str) -> float:
    return float(app.state.webhook.metrics.connections_evicted.labels(listener, state)._value.get())


def _gated_review(name: str, gate: str) -> bytes:
    """A complete ``POST /validate`` of a ConfigMap whose review the gated pipeline holds until ``gate`` exists."""
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"gate": gate}}
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"uid-{name}",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": obj,
        },
    }
    body = json.dumps(review).encode()
    head = f"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _connect(srv: ServerThread, tls: dict[str, str], rcvbuf: int | None = None) -> ssl.SSLSocket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", srv.port))
    ctx = ssl.create_default_context(cafile=tls["ca.crt"])
    return ctx.wrap_socket(sock, server_hostname="127.0.0.1")


def _read_responses(
    conn: ssl.SSLSocket, want: int | None = None, settle: float = 0.3, wait: float = WAIT_S
) -> tuple[list[bytes], bool]:
    """The status codes' lines (``HTTP/1.1 200``) read from ``conn``, and whether the server closed it (end of
    stream or reset). Without ``want``: read until the server closes the connection. With it: read until
    ``want`` status lines are in, then ``settle`` seconds more (to see a close or an answer too many that
    follows them). At most ``wait`` seconds in all: a loaded machine only delays what the server sends, so the
    test waits for the event, never for a time within which it must happen."""
    buf, closed = b"", False
    deadline = time.monotonic() + wait
    settled: float | None = None
    conn.settimeout(0.2)
    while time.monotonic() < deadline:
        got = len(re.findall(rb"HTTP/1\.1 \d{3}", buf))
        if want is not None and got >= want:
            settled = time.monotonic() + settle if settled is None else settled
            if time.monotonic() >= settled:
                break
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            continue
        except (ssl.SSLError, OSError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        buf += chunk
    return re.findall(rb"HTTP/1\.1 \d{3}", buf), closed


def _until(cond: Any, what: str, wait: float = WAIT_S) -> None:
    """Poll ``cond`` until it is true; fail naming ``what`` after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not seen in {wait:g} s")
        time.sleep(0.01)


def test_pipelined_requests_are_capped_and_a_few_are_answered_in_order(tls: dict[str, str]) -> None:
    """Requests pipelined behind one being answered are queued by uvicorn; past DEFAULT_MAX_PIPELINED the
    connection is aborted (counted ``pipelined``) instead of queueing without bound (15,800 queued
    requests per connection, 38 MB, before the cap). A client pipelining a few is answered in order."""
    srv, app = _serve(tls)
    try:
        few = _connect(srv, tls)
        n = DEFAULT_MAX_PIPELINED // 2
        few.sendall(
            HEALTHZ.replace(b"/healthz", b"/readyz") + HEALTHZ * n
        )  # one write: queued behind the first
        got, closed = _read_responses(few, n + 1)
        assert got == [b"HTTP/1.1 200"] * (n + 1) and not closed, (got, closed)
        few.close()

        # one thread reads and writes (an SSL socket is not to be read and written from two threads at
        # once: OpenSSL aborted the process so), non-blocking, small writes (under the header cap) faster
        # than the server answers
        hostile = _connect(srv, tls)
        hostile.setblocking(False)
        pending, sent, buf, closed = b"", 0, b"", False
        deadline = time.monotonic() + WAIT_S
        while not closed and time.monotonic() < deadline:
            if not pending and sent < 20_000:
                pending, sent = HEALTHZ * 100, sent + 100
            if pending:
                try:
                    pending = pending[hostile.send(pending) :]
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    pass
                except (ssl.SSLError, OSError):
                    closed = True
                    break
            try:
                data = hostile.recv(65536)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                if not pending:
                    time.sleep(0.001)
                continue
            except (ssl.SSLError, OSError):
                closed = True
                break
            closed = not data
            buf += data
        answered = re.findall(rb"HTTP/1\.1 \d{3}", buf)
        assert closed, "the server kept the pipelining connection open"
        assert _closed(app, "pipelined") == 1.0
        assert len(answered) < sent, (len(answered), sent)
        assert set(answered) <= {b"HTTP/1.1 200"}
        hostile.close()
    finally:
        srv.stop()


def test_a_client_that_never_reads_is_aborted_at_the_write_deadline(tls: dict[str, str]) -> None:
    """A client sends requests and never reads: once the server's buffers are full its writes are paused,
    and after ``write_timeout`` seconds the connection is aborted (counted ``write_timeout``); before, it was
    held for ever (no deadline runs while a response is written). Other clients are answered meanwhile."""
    srv, app = _serve(tls, write_timeout=0.5, max_pipelined=10_000)
    try:
        conn = _connect(srv, tls, rcvbuf=4096)
        conn.setblocking(False)
        metrics = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"  # a few KB per answer
        t0 = time.monotonic()
        while _closed(app, "write_timeout") == 0 and time.monotonic() - t0 < WAIT_S:
            try:
                conn.send(metrics * 8)
            except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                pass  # the server stopped reading: its writes are paused
            except (ssl.SSLError, OSError):
                break
            time.sleep(0.005)
        assert _closed(app, "write_timeout") == 1.0, f"not aborted in {time.monotonic() - t0:.1f} s"
        other = _connect(srv, tls)
        other.sendall(HEALTHZ)
        assert _read_responses(other, 1)[0] == [b"HTTP/1.1 200"]
        other.close()
        conn.close()
    finally:
        srv.stop()


def test_connections_closed_at_the_header_deadline_free_their_slot_at_once(tls: dict[str, str]) -> None:
    """A connection the server closes (here at the header deadline) counts against ``limit_concurrency``
    until it is gone; asyncio's TLS close waited up to 30 s for the client's close_notify, which a slowloris
    client never sends, so each held a slot 30 s past its deadline and fewer connections filled the
    listener (HTTP 503 for everyone). The TLS close now has the handshake's deadline."""
    # deadlines of seconds (a handshake or a header line must not miss them while the machine stalls the
    # test), far under asyncio's 30 s wait for a close_notify
    srv, app = _serve(tls, header_timeout=2.0, handshake_timeout=3.0, limit_concurrency=6)
    try:
        slow = [_connect(srv, tls) for _ in range(5)]
        for conn in slow:
            try:  # headers never finished, close_notify never answered
                conn.sendall(b"GET /healthz HTTP/1.1\r\n")
            except OSError:
                pass  # already closed at the header deadline (the clock starts with the connection)
        _until(lambda: _closed(app, "header_timeout") >= 5, "five closes at the header deadline")
        assert _closed(app, "header_timeout") == 5.0
        # closed, they leave the server (and their slots) within the TLS close's deadline (3 s): waited for up
        # to 20 s, under the 30 s asyncio's close waited for a close_notify, so that a loaded machine's
        # delays pass and that wait still fails
        connections = srv.server.server_state.connections
        _until(lambda: not connections, "the closed connections gone from the server", wait=20.0)
        fresh = _connect(srv, tls)
        fresh.sendall(HEALTHZ)
        assert _read_responses(fresh, 1)[0] == [b"HTTP/1.1 200"]
        fresh.close()
        for conn in slow:
            conn.close()
    finally:
        srv.stop()


def test_header_deadline_runs_per_request_on_a_kept_alive_connection(tls: dict[str, str]) -> None:
    """The header clock starts with each request's first bytes and stops when its headers are complete: a
    request begun after an earlier one was answered has its own full deadline (the connection's header timer,
    set for the first request, finds a later deadline and waits for it), the idle time between requests is
    not on the clock (keep-alive has its own), and headers never finished still close the connection.

    Timed so that a stalled test thread cannot make it fail: each pause is measured from the moment it must
    follow (a stall only lengthens it), and the one pause that must stay under the deadline (between a
    request's first bytes and the rest of its headers) leaves 0.6 of it (2.4 s) to spare."""
    deadline = 4.0
    srv, app = _serve(tls, header_timeout=deadline, keep_alive_seconds=60)
    try:
        conn = _connect(srv, tls)
        t0 = time.monotonic()
        conn.sendall(HEALTHZ)
        assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        time.sleep(max(0.0, t0 + 0.7 * deadline - time.monotonic()))
        t1 = time.monotonic()
        conn.sendall(
            b"GET /healthz HTTP/1.1\r\n"
        )  # 0.7 of the deadline (or more) after the first request began
        time.sleep(max(0.0, t0 + 1.1 * deadline - time.monotonic()))  # past the first request's deadline
        try:
            conn.sendall(b"Host: x\r\n\r\n")  # within this one's deadline,
        except OSError:
            pass  # (closed: the answer below says so)
        # unless this thread stalled past it (never seen; the check keeps a stall from failing the test)
        if time.monotonic() - t1 < 0.9 * deadline:
            assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
            assert _closed(app, "header_timeout") == 0.0
        else:
            conn.close()
            conn = _connect(srv, tls)
            conn.sendall(HEALTHZ)
            assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        t2 = time.monotonic()
        time.sleep(1.2 * deadline)  # idle between requests longer than the header deadline
        assert time.monotonic() - t2 > deadline
        conn.sendall(HEALTHZ)
        assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        closed_before = _closed(app, "header_timeout")
        t3 = time.monotonic()  # before the bytes go: a stall after sendall would shorten the wait measured
        conn.sendall(b"GET /healthz HTTP/1.1\r\n")  # never finished
        assert _read_responses(conn) == ([], True)
        # not before its deadline (from its first bytes; a loaded machine only delays the close), and by the
        # header deadline (counted as such): an upper bound on the wall time added nothing but flakiness
        assert time.monotonic() - t3 > 0.8 * deadline
        assert _closed(app, "header_timeout") == closed_before + 1
        conn.close()
    finally:
        srv.stop()


def test_bodies_cut_off_at_the_size_limit_give_back_only_the_bytes_they_held(tls: dict[str, str]) -> None:
    """A body streamed past ``max_request_bytes`` (chunked: no Content-Length to refuse it by) gets HTTP 413,
    and the bytes it held are taken off the bodies-held count, no more: the chunk that crossed the limit was
    never counted. Taking it off too drove the count below zero by that chunk at each such request, until the
    ``body_buffer_bytes`` cap no longer refused anything; held bodies must still get 503 past it after any
    number of such requests."""
    limit = 4096
    settings = WebhookSettings(
        workers=1, timeout_seconds=2.0, max_inflight=1, max_request_bytes=limit, body_timeout_seconds=5.0
    )
    app = create_app(settings, warm_up=False)
    state = app.state.webhook
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], state.metrics, interval=3600)
    srv = ServerThread(app, reloader).start()
    held: list[ssl.SSLSocket] = []
    try:
        big = b" " * (3 * limit)
        for _ in range(6):
            conn = _connect(srv, tls)
            conn.sendall(
                b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(big) + big + b"\r\n0\r\n\r\n"
            )
            assert _read_responses(conn, 1)[0] == [b"HTTP/1.1 413"]
            conn.close()
        _until(lambda: state.body_bytes <= 0, "the bodies' bytes given back")
        assert state.body_bytes == 0
        # bodies held up to the cap (4 x slots x limit), then one more: one of them is refused at once (503),
        # the others wait for the rest of their bodies (408 only at the 5 s body deadline)
        part = b" " * (limit - 200)
        for _ in range(settings.body_buffer_bytes // len(part) + 1):
            conn = _connect(srv, tls)
            conn.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % limit + part)
            held.append(conn)
        # read from them all until a 503 comes (then a moment more) or all are closed (without the cap, each
        # at its body deadline); a stall past that deadline may add 408s, which the check allows
        bufs, ended, seen_503 = [b""] * len(held), [False] * len(held), None
        deadline = time.monotonic() + WAIT_S
        while not all(ended) and time.monotonic() < deadline:
            if seen_503 is not None and time.monotonic() > seen_503 + 0.3:
                break
            for i, conn in enumerate(held):
                if ended[i]:
                    continue
                conn.settimeout(0.02)
                try:
                    chunk = conn.recv(65536)
                except TimeoutError:
                    continue
                except (ssl.SSLError, OSError):
                    chunk = b""
                ended[i] = not chunk
                bufs[i] += chunk
                if seen_503 is None and b"HTTP/1.1 503" in bufs[i]:
                    seen_503 = time.monotonic()
        statuses = [s for buf in bufs for s in re.findall(rb"HTTP/1\.1 \d{3}", buf)]
        assert statuses.count(b"HTTP/1.1 503") == 1, statuses
        assert set(statuses) <= {b"HTTP/1.1 503", b"HTTP/1.1 408"}, statuses
    finally:
        for conn in held:
            conn.close()
        srv.stop()


def _validate_request(uid: str) -> bytes:
    request = {
        "uid": uid,
        "operation": "DELETE",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
    }
    body = json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request},
        separators=(",", ":"),
    ).encode()
    return (
        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )


def test_an_idle_connection_is_left_for_the_api_server_to_close(tls: dict[str, str]) -> None:
    """The API server keeps a webhook connection idle for up to 90 s (``http.DefaultTransport``'s
    ``IdleConnTimeout``, which apimachinery's ``SetOldTransportDefaults`` gives its webhook client) and sends
    the next review on it; a POST that meets the server's close fails with EOF and is not retried, so
    ``failurePolicy`` decides. The review listener closed idle connections after 5 s; now it keeps them longer
    than the API server does: a review sent after 6 s idle on the same connection is answered."""
    from kvlint.webhook.server import DEFAULT_KEEP_ALIVE_SECONDS

    assert DEFAULT_KEEP_ALIVE_SECONDS > 90
    srv, app = _serve(tls)  # the listener's defaults
    try:
        conn = _connect(srv, tls)
        conn.sendall(_validate_request("first"))
        assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        time.sleep(6.0)
        conn.sendall(_validate_request("after-idle"))
        assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        conn.close()
    finally:
        srv.stop()


def test_answers_while_draining_close_their_connection(tls: dict[str, str]) -> None:
    """Once the pod drains for shutdown, each review's answer says ``Connection: close`` and the connection
    closes after it, so the API server, which keeps reusing a kept-alive connection to a terminating pod
    (kubernetes/kubernetes#127335), opens its next one to a ready pod instead of sending a review on a
    connection the shutdown closes while idle. Before draining, the connection stays open."""
    srv, app = _serve(tls)
    try:
        conn = _connect(srv, tls)
        conn.sendall(_validate_request("ready"))
        assert _read_responses(conn, 1) == ([b"HTTP/1.1 200"], False)
        app.state.webhook.draining = True
        conn.sendall(_validate_request("draining"))
        buf = b""
        conn.settimeout(WAIT_S)
        while True:
            try:
                chunk = conn.recv(65536)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            buf += chunk
        head = buf.split(b"\r\n\r\n", 1)[0].lower()
        assert head.startswith(b"http/1.1 200") and b"\r\nconnection: close" in head, buf
        assert b'"uid":"draining"' in buf
        conn.close()
    finally:
        srv.stop()


def test_requests_past_the_connection_limit_are_counted(tls: dict[str, str], tmp_path: Any) -> None:
    """Past ``--max-connections`` (uvicorn's ``limit_concurrency``) uvicorn answers a request HTTP 503 and closes
    the connection: the API server then applies ``failurePolicy`` (under ``Ignore``: admitted unchecked). uvicorn
    only logged it; it is counted as ``kvlint_webhook_connections_closed_total{reason="max_connections"}`` so
    that dashboards see the refusals kvlint could not answer. Under the limit nothing is counted. (Connections
    still waiting for their headers, idle, or still sending their body give way instead: the next tests.)"""
    from webhook_pipelines import gated_pipeline

    gate = tmp_path / "may-finish"
    settings = WebhookSettings(workers=1, timeout_seconds=25.0)
    srv, app = _serve(tls, settings, gated_pipeline, header_timeout=30.0, limit_concurrency=4)
    held: list[ssl.SSLSocket] = []
    try:
        first = _connect(srv, tls)
        first.sendall(HEALTHZ)
        assert _read_responses(first, 1)[0] == [b"HTTP/1.1 200"]
        first.close()
        assert _closed(app, "max_connections") == 0.0
        # reviews all in and being answered (held by the gated pipeline) fill the limit: they never give way; a
        # request is refused when the connections, its own included, reach the limit, so three are sent
        for i in range(3):
            conn = _connect(srv, tls)
            conn.sendall(_gated_review(f"held-{i}", str(gate)))
            held.append(conn)
        _until(lambda: len(srv.server.server_state.tasks) == 3, "three requests being answered")
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        statuses, closed = _read_responses(extra)
        assert statuses == [b"HTTP/1.1 503"] and closed
        assert _closed(app, "max_connections") == 1.0
        assert _closed(app, "evicted") == 0.0
        gate.touch()
        for conn in held[:3]:  # each held review is answered
            assert _read_responses(conn, 1)[0] == [b"HTTP/1.1 200"]
    finally:
        gate.touch()
        for conn in held:
            conn.close()
        srv.stop()


def test_connections_trickling_a_body_give_way_to_a_complete_request(tls: dict[str, str]) -> None:
    """A client that sends a request's headers and then trickles its body held its connection, and a request
    being answered, for the body deadline (``--body-timeout-seconds``, 10 s): ``--max-connections`` of them
    answered every review HTTP 503 (``failurePolicy`` decided) for as long as the client reopened them, which
    the eviction of connections waiting for their headers did not cover. At the limit, a complete request now
    closes the connection whose body began first (after those waiting for headers and the idle ones), takes
    its request out of uvicorn's count, and is answered; the eviction is counted
    (``kvlint_webhook_connections_evicted_total{listener="review",state="body"}``, and as ``evicted``, not as a
    client gone) and the body's bytes are given back."""
    srv, app = _serve(tls, header_timeout=30.0, limit_concurrency=4, probe_port=0)
    state = app.state.webhook
    held: list[ssl.SSLSocket] = []
    try:
        for _ in range(3):
            conn = _connect(srv, tls)
            conn.sendall(SLOW_BODY)
            held.append(conn)
            n = len(held)
            _until(lambda n=n: len(srv.server.server_state.tasks) == n, "the body being read")
        _until(lambda: state.body_bytes == 3, "the three bodies' first bytes held")
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        assert _read_responses(extra, 1)[0] == [b"HTTP/1.1 200"]
        assert _read_responses(held[0])[1], "the connection whose body began first was not closed"
        for conn in held[1:3]:  # the later bodies are still being read
            conn.sendall(b" ")
        assert _evicted(app, "review", "body") == 1.0
        assert _closed(app, "evicted") == 1.0
        assert _closed(app, "max_connections") == 0.0
        _until(lambda: len(srv.server.server_state.tasks) == 2, "the evicted request's task ended")
        assert _closed(app, "client_gone") == 0.0
        _until(lambda: state.body_bytes == 2 + 2, "the evicted body's byte given back")

        # a review sent whole on a new connection is answered too: the idle connection (``extra``, answered) gives
        # way before a body does
        review = _connect(srv, tls)
        held.append(review)
        review.sendall(_gated_review("whole", "unused"))
        assert _read_responses(review, 1)[0] == [b"HTTP/1.1 200"]
        assert _read_responses(extra)[1], "the idle connection was not closed"
        assert (_evicted(app, "review", "idle"), _evicted(app, "review", "body")) == (1.0, 1.0)

        # the probe listener counts its own evictions
        assert srv.probes is not None
        before = _evicted(app, "probe", "headers")
        for _ in range(70):
            raw = socket.create_connection(("127.0.0.1", srv.probes.port), timeout=10)
            raw.sendall(b"GET /healthz HTTP/1.1\r\n")
            held.append(raw)  # type: ignore[arg-type]
        probe = socket.create_connection(("127.0.0.1", srv.probes.port), timeout=10)
        held.append(probe)  # type: ignore[arg-type]
        probe.sendall(HEALTHZ)
        assert probe.recv(4096).startswith(b"HTTP/1.1 200")
        assert _evicted(app, "probe", "headers") > before

        # every connection closed: none is left in the states the eviction keeps (they would be held for ever)
        for conn in held:
            conn.close()
        state_of = srv.server.server_state
        _until(lambda: not state_of.connections, "the review listener's connections closed")
        room = state_of._kv_room
        _until(lambda: not (room.headers or room.idle or room.bodies), "the eviction's states emptied")
    finally:
        for conn in held:
            conn.close()
        srv.stop()


def test_connections_waiting_for_headers_give_way_to_a_complete_request(tls: dict[str, str]) -> None:
    """A client that keeps ``--max-connections`` connections open without finishing their headers, opening a new
    one as each is closed at the header deadline, held every slot: each review got uvicorn's HTTP 503
    (``failurePolicy`` decided) for as long as it went on, and on the probe listener (64 connections) the
    kubelet's ``/healthz`` and ``/readyz`` got 503, which restarts the pod after three liveness failures. At
    the limit, a new connection now closes the connection that has waited longest for its request's headers
    (or, failing one, an idle kept-alive connection): a request sent at once, as the API server and the kubelet
    send theirs, is answered. Connections whose request is being answered are never closed for it (the test
    above)."""
    srv, app = _serve(tls, header_timeout=30.0, limit_concurrency=4, probe_port=0)
    held: list[Any] = []
    try:
        # connections that never finish their headers fill the limit: a request is refused when the connections,
        # its own included, reach it
        for _ in range(3):
            conn = _connect(srv, tls)
            conn.sendall(b"GET /healthz HTTP/1.1\r\n")
            held.append(conn)
        connections = srv.server.server_state.connections
        _until(lambda: len(connections) == 3, "three connections held")
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        assert _read_responses(extra, 1)[0] == [b"HTTP/1.1 200"]
        assert _read_responses(held[0])[1], "the oldest waiting connection was not closed"
        assert _closed(app, "evicted") == 1.0
        assert _closed(app, "max_connections") == 0.0

        # idle kept-alive connections (each had its answer) give way too
        for conn in held:
            conn.close()
        held.clear()
        _until(lambda: len(connections) == 0, "the connections closed")
        for _ in range(3):
            conn = _connect(srv, tls)
            conn.sendall(HEALTHZ)
            assert _read_responses(conn, 1)[0] == [b"HTTP/1.1 200"]
            held.append(conn)
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        assert _read_responses(extra, 1)[0] == [b"HTTP/1.1 200"]
        assert _read_responses(held[0])[1], "the idle connection made first was not closed"
        assert _closed(app, "evicted") == 2.0
        assert _closed(app, "max_connections") == 0.0

        # the probe listener (64 connections at once): the kubelet's probe gets through a flood of them
        assert srv.probes is not None
        port = srv.probes.port
        for _ in range(70):
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            raw.sendall(b"GET /healthz HTTP/1.1\r\n")
            held.append(raw)
        probe = socket.create_connection(("127.0.0.1", port), timeout=10)
        held.append(probe)
        probe.sendall(HEALTHZ)
        answer = b""
        while b"\r\n" not in answer:
            chunk = probe.recv(4096)
            if not chunk:
                break
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer
    finally:
        for conn in held:
            conn.close()
        srv.stop()


class _BufferingTransport:
    """A transport whose peer reads nothing: what is written stays in its buffer (as asyncio's does once the
    socket's send buffer is full), so that a response can be complete in uvicorn and not yet on the wire."""

    def __init__(self) -> None:
        self.buffer = b""
        self.closing = False
        self.aborted = False

    def write(self, data: bytes) -> None:
        self.buffer += bytes(data)

    def get_write_buffer_size(self) -> int:
        return len(self.buffer)

    def is_closing(self) -> bool:
        return self.closing

    def abort(self) -> None:
        self.closing = self.aborted = True
        self.buffer = b""  # asyncio drops what it has not sent

    def close(self) -> None:
        self.closing = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 8443)}.get(name, default)


def test_a_connection_whose_answer_is_still_going_out_is_not_evicted() -> None:
    """uvicorn marks a response complete once its last bytes are handed to the transport, before they are sent:
    the :class:`CoalescingTransport` holds them until the next step of the event loop, and the transport's
    buffer holds them while the client's socket is full. Closing such a connection to make room (``abort``)
    dropped the answer, and the API server got EOF for a review kvlint had answered. It is not evicted: the
    request at the limit gets uvicorn's 503 instead, and the answer goes out."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(2)
        first, first_transport = connect()
        first.data_received(HEALTHZ)
        await _steps()  # the answer is written (flushed to the transport, where it stays)
        assert first.cycle.response_complete and first_transport.buffer.startswith(b"HTTP/1.1 200")
        second, second_transport = connect()
        second.data_received(HEALTHZ)
        await _steps()
        assert not first_transport.aborted, "a connection whose answer was not yet sent was evicted"
        assert first_transport.buffer.startswith(b"HTTP/1.1 200")
        assert second_transport.buffer.startswith(b"HTTP/1.1 503")
        assert closed == ["max_connections"]

    asyncio.run(run())


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _protocols(limit: int, header_timeout: float = 30.0) -> tuple[Any, list[str]]:
    """A function making connections of uvicorn's httptools protocol with kvlint's limits, in this process, all
    of one server (``limit_concurrency`` ``limit``) and fed by hand; and the reasons counted as closed."""
    import asyncio

    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.server import ServerState

    from kvlint.webhook.protocol import deadline_protocol

    config = uvicorn.Config(
        _ok_app, limit_concurrency=limit, log_config=None, access_log=False, lifespan="off"
    )
    config.load()
    state = ServerState()
    closed: list[str] = []
    cls = deadline_protocol(header_timeout, on_close=closed.append, base=HttpToolsProtocol)

    def connect() -> tuple[Any, _BufferingTransport]:
        protocol, transport = cls(config, state, {}, _loop=asyncio.get_running_loop()), _BufferingTransport()
        protocol.connection_made(transport)
        return protocol, transport

    return connect, closed


async def _steps(n: int = 50) -> None:
    import asyncio

    for _ in range(n):
        await asyncio.sleep(0)


def test_no_connection_is_evicted_for_a_request_refused_anyway() -> None:
    """uvicorn refuses a request with HTTP 503 when the connections *or the requests being answered* (tasks,
    which outlive a connection its client closed) reach ``limit_concurrency``. With the tasks at the limit,
    closing an idle connection frees nothing the request needs: it was closed, and the request still got 503."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(2)
        idle, idle_transport = connect()
        idle.data_received(HEALTHZ)
        await _steps()
        assert idle_transport.buffer.startswith(b"HTTP/1.1 200")
        idle_transport.buffer = b""  # read by the client: the connection is idle
        running = [asyncio.get_running_loop().create_future() for _ in range(2)]
        idle.tasks.update(running)  # two reviews still being answered, their clients gone
        late, late_transport = connect()
        late.data_received(HEALTHZ)
        await _steps()
        assert late_transport.buffer.startswith(b"HTTP/1.1 503")
        assert not idle_transport.aborted, "an idle connection was closed for a request refused anyway"
        assert closed == ["max_connections"]
        idle.tasks.difference_update(running)

    asyncio.run(run())


def test_no_connection_is_evicted_when_evicting_all_that_may_go_would_not_make_room() -> None:
    """At the limit, the connections that may give way (waiting for their headers, or idle) are closed only when
    closing them brings the count under the limit: with two connections whose answers are still going out and one
    waiting for its headers, closing that one left three of three open, uvicorn answered the request 503 all the
    same, and the connection was closed for nothing."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(3)
        for _ in range(2):
            sending, sending_transport = connect()
            sending.data_received(HEALTHZ)
            await _steps()  # answered; the client reads nothing, so the answer stays in the transport
            assert sending_transport.buffer.startswith(b"HTTP/1.1 200")
        _quiet, quiet_transport = connect()  # connected, no request yet: waiting for its headers
        late, late_transport = connect()
        late.data_received(HEALTHZ)
        await _steps()
        assert late_transport.buffer.startswith(b"HTTP/1.1 503")
        assert not quiet_transport.aborted, "a connection was closed though closing it made no room"
        assert closed == ["max_connections"]

    asyncio.run(run())


def test_the_idle_connection_used_least_recently_gives_way_first() -> None:
    """Of idle kept-alive connections, the one idle longest gives way first, not the one made first: the API
    server keeps its connections to the webhook for as long as it uses them, so its connections are the oldest
    ones, and a client that opened connections and left them idle had them closed (each review sent on one as it
    went failed with EOF, and each new one cost a TLS handshake) rather than its own."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(3)
        used, used_transport = connect()
        left, left_transport = connect()
        for protocol, transport in ((used, used_transport), (left, left_transport), (used, used_transport)):
            protocol.data_received(HEALTHZ)
            await _steps()
            assert transport.buffer.startswith(b"HTTP/1.1 200")
            transport.buffer = b""  # read by the client
            await asyncio.sleep(0.01)  # the event loop's clock moves on
        late, late_transport = connect()
        late.data_received(HEALTHZ)
        await _steps()
        assert late_transport.buffer.startswith(b"HTTP/1.1 200")
        assert left_transport.aborted and not used_transport.aborted
        assert closed == ["evicted"]

    asyncio.run(run())


def test_an_answer_sent_with_connection_close_is_not_dropped_to_make_room() -> None:
    """An answer sent with ``Connection: close`` (HTTP/1.0, a client that asked for it, every answer while the pod
    drains) closes its transport at once, which sends what it holds before the connection ends. Such a
    connection made room as an idle one: ``abort`` dropped the answer not yet sent."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(2)
        first, first_transport = connect()
        first.data_received(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await _steps()
        assert first_transport.closing and first_transport.buffer.startswith(b"HTTP/1.1 200")
        second, second_transport = connect()
        second.data_received(HEALTHZ)
        await _steps()
        assert not first_transport.aborted and first_transport.buffer.startswith(b"HTTP/1.1 200")
        assert second_transport.buffer.startswith(b"HTTP/1.1 503")
        assert closed == ["max_connections"]

    asyncio.run(run())


def test_uvicorn_has_what_the_connection_limits_read() -> None:
    """The header deadline, the pipelining cap and the eviction at ``--max-connections`` read attributes of
    uvicorn's protocol that are not its API (``connections``, ``tasks``, ``limit_concurrency``, ``cycle``,
    ``pipeline``, ...), some with a default: a uvicorn release renaming them would turn the limits off without a
    word in a cluster (the image installs the newest uvicorn). The installed uvicorn has them all (this test
    fails on one that does not), and the server logs a warning on start with one that lacks any."""
    import logging

    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from kvlint.webhook.protocol import deadline_protocol, missing_uvicorn_internals
    from kvlint.webhook.server import _check_uvicorn

    def config_for(base: Any) -> Any:
        config = uvicorn.Config(
            _ok_app, http=deadline_protocol(5.0, base=base), log_config=None, lifespan="off"
        )
        config.load()
        return config

    assert missing_uvicorn_internals(config_for(None)) == []
    assert missing_uvicorn_internals(config_for(HttpToolsProtocol)) == []

    class Renamed(HttpToolsProtocol):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.concurrency_limit = self.limit_concurrency
            del self.limit_concurrency, self.pipeline

    config = config_for(Renamed)
    assert missing_uvicorn_internals(config) == ["limit_concurrency", "pipeline"]
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("kvlint.webhook")
    logger.addHandler(handler)
    try:
        _check_uvicorn(config, "review")
    finally:
        logger.removeHandler(handler)
    text = " ".join(r.getMessage() for r in records)
    assert "limit_concurrency, pipeline" in text and uvicorn.__version__ in text


def test_an_eviction_looks_at_a_bounded_number_of_connections() -> None:
    """Each request at the limit sorted every connection of the listener to choose whom to close (about 1 ms at
    1,000 connections, paid again for each request a client sent at the limit). The connections that may give way
    are now kept in the order they entered their state, and an eviction looks at no more than
    ``EVICTION_SCAN_SLACK`` more connections than it closes, whatever their number; the one chosen is still the
    one that has waited longest for its headers."""
    import asyncio

    from kvlint.webhook.protocol import EVICTION_SCAN_SLACK

    async def run() -> None:
        limit = 1000
        connect, closed = _protocols(limit)
        waiting = [connect() for _ in range(limit - 1)]
        late, late_transport = connect()
        looked: list[Any] = []
        cls = type(late)
        original = cls._kv_waiting

        def counting(self: Any) -> bool:
            if self is not late:
                looked.append(self)
            return bool(original(self))

        cls._kv_waiting = counting
        try:
            late.data_received(HEALTHZ)
        finally:
            cls._kv_waiting = original
        await _steps()
        assert late_transport.buffer.startswith(b"HTTP/1.1 200")
        assert closed == ["evicted"]
        assert waiting[0][1].aborted and not any(t.aborted for _, t in waiting[1:])
        assert 1 <= len(set(map(id, looked))) <= 1 + EVICTION_SCAN_SLACK, len(looked)

    asyncio.run(run())


def test_a_uvicorn_method_kvlint_overrides_is_looked_for_in_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The eviction of a body learns its request's task by overriding httptools' ``on_response_complete`` (and
    ``on_headers_complete``, as the pipelining cap does): looked for on an instance of kvlint's protocol class, the
    override itself answered for a method a uvicorn release had renamed, and the warning on start said nothing."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from kvlint.webhook.protocol import deadline_protocol, missing_uvicorn_internals

    def config() -> Any:
        c = uvicorn.Config(
            _ok_app, http=deadline_protocol(5.0, base=HttpToolsProtocol), log_config=None, lifespan="off"
        )
        c.load()
        return c

    assert missing_uvicorn_internals(config()) == []
    monkeypatch.delattr(HttpToolsProtocol, "on_response_complete")  # as a release that renamed it
    monkeypatch.delattr(HttpToolsProtocol, "on_headers_complete")
    assert missing_uvicorn_internals(config()) == ["on_headers_complete", "on_response_complete"]


def test_requests_running_when_the_graceful_shutdown_time_ends_get_an_answer(
    tls: dict[str, str], tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """uvicorn cancels the requests still running when its graceful shutdown time (``--graceful-seconds``) is over,
    and answered each HTTP 500 with ``Exception in ASGI application`` and a traceback in the log: a body still
    coming in (its deadline, 10 s, is as long as the default graceful time), or a review still being linted under
    a budget longer than it. A review already decoded is now answered per ``--failure-mode`` (its object not
    checked: the server is shutting down), a body not all in gets HTTP 503 with a JSON error, both with
    ``Connection: close``, and nothing is logged with a traceback."""
    import logging
    import threading

    from webhook_pipelines import gated_pipeline

    caplog.set_level(logging.INFO)
    gate = tmp_path / "never"
    settings = WebhookSettings(workers=1, timeout_seconds=25.0)
    srv, app = _serve(tls, settings, gated_pipeline, header_timeout=30.0)
    stopper = None
    try:
        slow = _connect(srv, tls)
        slow.sendall(SLOW_BODY)
        linting = _connect(srv, tls)
        linting.sendall(_gated_review("held", str(gate)))
        _until(lambda: app.state.webhook.pool.busy == 1, "the review being linted")
        stopper = threading.Thread(target=srv.stop)  # graceful time 2 s (ServerThread)
        stopper.start()
        answers = {}
        for name, conn in (("slow", slow), ("linting", linting)):
            buf = b""
            conn.settimeout(WAIT_S)
            while True:
                try:
                    chunk = conn.recv(65536)
                except (ssl.SSLError, OSError):
                    break
                if not chunk:
                    break
                buf += chunk
            answers[name] = buf
        head, _, body = answers["slow"].partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and b"\r\nconnection: close" in head.lower(), answers["slow"]
        assert "shutting down" in json.loads(body)["error"]
        head, _, body = answers["linting"].partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), answers["linting"]
        response = json.loads(body)["response"]
        assert response["uid"] == "uid-held" and response["allowed"] is True  # --failure-mode open
        assert any("shutting down" in w and "not checked" in w for w in response["warnings"])
        stopper.join(WAIT_S)
        assert not [r for r in caplog.records if r.exc_info or "Exception in ASGI" in r.getMessage()]
    finally:
        gate.touch()
        if stopper is None:
            srv.stop()
        elif stopper.is_alive():
            stopper.join(WAIT_S)


def test_the_start_of_a_request_sent_while_one_is_answered_is_on_the_header_clock() -> None:
    """Bytes of the next request that arrive while one is being answered are parsed and held (pipelining); when
    they do not finish its headers, the header clock did not run once the answer was complete (it starts with the
    bytes of a request, and these had come before), so a client that sent a request and the start of another in
    one write held the connection, as an idle one, until the keep-alive timeout (120 s) instead of the header
    deadline. The clock now starts when the answer is complete."""
    import asyncio

    async def run() -> None:
        connect, closed = _protocols(10, header_timeout=0.2)
        protocol, transport = connect()
        protocol.data_received(HEALTHZ + b"GET /healthz HTTP/1.1\r\nHo")
        await _steps()
        assert transport.buffer.startswith(b"HTTP/1.1 200")
        transport.buffer = b""  # read by the client
        deadline = asyncio.get_running_loop().time() + WAIT_S
        while not transport.closing and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        assert transport.closing and closed == ["header_timeout"], closed

    asyncio.run(run())


def _content_length(response: bytes) -> int:
    """The ``Content-Length`` of an HTTP response's head (``response`` holds its blank line)."""
    for line in response.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def test_a_long_uid_is_bounded_in_every_log_line(
    tls: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    """A review's log line bounds each text field the request sets (``_log_fields``), but the lines logged when the
    pipeline failed ("pipeline failed"), when the server failed outside it, and when shutdown cut a review short
    wrote the request's ``uid`` whole: a 1 MB uid in a review whose lint fails wrote a 1 MB log line per request.
    The uid is echoed whole in the answer (the API server compares it) and cut in every log line. A body over
    ``LOOP_DECODE_BYTES`` is not decoded by the server when its worker fails (answered from its head, whose uid
    pattern takes at most 128 characters): a 1 MB uid there gets HTTP 400, its log lines bounded too."""
    import logging

    from webhook_pipelines import failing_pipeline

    from kvlint.webhook.app import LOG_REASON_CHARS

    caplog.set_level(logging.INFO)
    srv, _app = _serve(tls, WebhookSettings(workers=1, timeout_seconds=20.0), failing_pipeline)
    try:
        from kvlint.webhook.app import LOOP_DECODE_BYTES

        buf = b""
        for uid in ("u" * (LOOP_DECODE_BYTES - 1000), "u" * 1_000_000):
            obj = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "fail-1"},
                "spec": {"containers": []},
            }
            review = {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": uid,
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "namespace": "default",
                    "operation": "CREATE",
                    "userInfo": {"username": "alice"},
                    "object": obj,
                },
            }
            body = json.dumps(review).encode()
            conn = _connect(srv, tls)
            conn.sendall(
                b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % len(body) + body
            )
            buf = b""
            conn.settimeout(WAIT_S)
            while b"\r\n\r\n" not in buf or len(buf.split(b"\r\n\r\n", 1)[1]) < _content_length(buf):
                chunk = conn.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
            conn.close()
            if len(body) <= LOOP_DECODE_BYTES:
                assert buf.startswith(b"HTTP/1.1 200") and uid.encode() in buf
        assert buf.startswith(b"HTTP/1.1 400") and b"name no request uid" in buf
        failed = [r for r in caplog.records if r.getMessage() == "pipeline failed"]
        assert len(failed) == 2, [r.getMessage() for r in caplog.records]
        for record in caplog.records:
            for value in getattr(record, "fields", {}).values():
                assert len(str(value)) <= LOG_REASON_CHARS, (record.getMessage(), len(str(value)))
    finally:
        srv.stop()


def test_a_chunked_body_s_trailer_section_is_capped_and_not_kept(tls: dict[str, str]) -> None:
    """httptools hands uvicorn each field of the trailer section after a chunked body, and uvicorn appended each
    to the request's headers, counted against no limit while the body deadline (10 s) ran: one connection
    streaming trailer lines took the server from 36 to 798 MB in 8 s. Trailer fields are not kept and count
    against the header cap (64 KiB): past it the connection is aborted (``header_too_large``). A review sent
    chunked with a small trailer section is answered."""
    srv, app = _serve(tls)
    try:
        body = _gated_review("chunked", "unused").split(b"\r\n\r\n", 1)[1]
        head = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunked = b"%x\r\n" % len(body) + body + b"\r\n0\r\n"
        conn = _connect(srv, tls)
        conn.sendall(head + chunked + b"X-Checksum: abc\r\n\r\n")
        assert _read_responses(conn, 1)[0] == [b"HTTP/1.1 200"]
        conn.close()

        before = _closed(app, "header_too_large")
        conn = _connect(srv, tls)
        conn.sendall(head + chunked)
        line = b"X-Trailer-Padding: " + b"v" * 40 + b"\r\n"
        sent = 0
        try:
            while sent < 2**20:  # 1 MiB of trailer fields, far past the cap
                conn.sendall(line * 200)
                sent += len(line) * 200
        except OSError:
            pass  # aborted by the server
        assert _read_responses(conn)[1], "the connection was not closed"
        assert _closed(app, "header_too_large") == before + 1
    finally:
        srv.stop()


def test_a_review_waiting_for_a_slot_when_the_graceful_shutdown_time_ends_is_answered_per_the_failure_mode(
    tls: dict[str, str], tmp_path: Any
) -> None:
    """A review whose body is all in but that waits for an in-flight slot (``--max-inflight`` reviews being linted)
    when uvicorn's graceful shutdown time runs out is cancelled there; it was answered HTTP 503 with a JSON error,
    leaving the verdict to the API server's ``failurePolicy`` (``Ignore``: admitted unchecked without a warning,
    whatever ``--failure-mode`` said), though its ``uid`` is known: its body is in, as for a review that found no
    slot within its budget (answered per the failure mode). It is now answered per ``--failure-mode`` too."""
    import threading

    from webhook_pipelines import gated_pipeline

    gate = tmp_path / "never"
    settings = WebhookSettings(workers=1, max_inflight=1, timeout_seconds=25.0, failure_mode="closed")
    srv, app = _serve(tls, settings, gated_pipeline, header_timeout=30.0)
    state = app.state.webhook
    stopper = None
    try:
        linting = _connect(srv, tls)
        linting.sendall(_gated_review("held", str(gate)))
        _until(lambda: state.pool.busy == 1, "the review being linted")
        waiting = _connect(srv, tls)
        waiting.sendall(_gated_review("queued", str(gate)))
        _until(lambda: state.body_bytes > 0, "the second review's body held, waiting for the slot")
        stopper = threading.Thread(target=srv.stop)  # graceful time 2 s (ServerThread)
        stopper.start()
        waiting.settimeout(WAIT_S)
        buf = b""
        while True:
            try:
                chunk = waiting.recv(65536)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), buf
        response = json.loads(body)["response"]
        assert response["uid"] == "uid-queued" and response["allowed"] is False  # --failure-mode closed
        assert "shutting down" in response["status"]["message"]
        assert state.metrics.reviews.labels("denied", "shutdown", "false")._value.get() >= 1
        stopper.join(WAIT_S)
    finally:
        gate.touch()
        if stopper is None:
            srv.stop()
        elif stopper.is_alive():
            stopper.join(WAIT_S)


def test_a_body_gives_way_with_a_uvicorn_that_starts_a_request_s_task_inline(
    tls: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn 0.29 to 0.44 (the ``webhook`` extra allows ``uvicorn>=0.29``) start a request's task inline in
    httptools' ``on_headers_complete`` and ``on_response_complete``: ``_start_asgi_task`` came in 0.45. The eviction
    of a body learned the task by overriding that method, so with those releases no body ever gave way (and the
    server warned on start that uvicorn lacked it). Emulated with uvicorn's own two methods, the call renamed."""
    import inspect
    import textwrap

    from uvicorn.protocols.http import httptools_impl
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    for name in ("on_headers_complete", "on_response_complete"):
        source = textwrap.dedent(inspect.getsource(getattr(HttpToolsProtocol, name)))
        assert "self._start_asgi_task(" in source
        namespace: dict[str, Any] = {}
        exec(source.replace("self._start_asgi_task(", "self._inline_start("), vars(httptools_impl), namespace)
        monkeypatch.setattr(HttpToolsProtocol, name, namespace[name])
    monkeypatch.setattr(HttpToolsProtocol, "_inline_start", HttpToolsProtocol._start_asgi_task, raising=False)
    monkeypatch.delattr(HttpToolsProtocol, "_start_asgi_task")

    srv, app = _serve(tls, header_timeout=30.0, limit_concurrency=2)
    held: list[ssl.SSLSocket] = []
    try:
        slow = _connect(srv, tls)
        held.append(slow)
        slow.sendall(SLOW_BODY)
        _until(lambda: app.state.webhook.body_bytes == 1, "the body's first byte held")
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        assert _read_responses(extra, 1)[0] == [b"HTTP/1.1 200"]
        assert _read_responses(slow)[1], "the connection trickling its body was not closed"
        assert _evicted(app, "review", "body") == 1.0
    finally:
        for conn in held:
            conn.close()
        srv.stop()


def test_a_connection_evicted_and_answered_before_its_close_is_not_evicted_again() -> None:
    """A connection closed to make room while its body came in is out of uvicorn's count at once, but its close
    (``connection_lost``) runs a step later: its request's task, woken by a chunk that came in the same step, may
    answer first (an HTTP error for a body refused mid-way), which entered it in the idle connections again. A
    complete request at the limit then evicted it a second time, counted it as the room made though it freed
    nothing, closed no connection that was counted, and got uvicorn's 503. (Fed by hand: the order of one step of
    the event loop that real sockets reach only by chance.)"""
    import asyncio

    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    from uvicorn.server import ServerState

    from kvlint.webhook.protocol import deadline_protocol

    async def app(scope: Any, receive: Any, send: Any) -> None:
        chunks = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            chunks += bool(message.get("body"))
            if chunks == 2 or not message.get("more_body"):  # refused mid-body, as a body too large
                break
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    async def run() -> None:
        config = uvicorn.Config(app, limit_concurrency=2, log_config=None, access_log=False, lifespan="off")
        config.load()
        state = ServerState()
        closed: list[str] = []
        cls = deadline_protocol(30.0, on_close=closed.append, base=HttpToolsProtocol)

        def connect() -> tuple[Any, _BufferingTransport]:
            protocol, transport = (
                cls(config, state, {}, _loop=asyncio.get_running_loop()),
                _BufferingTransport(),
            )
            protocol.connection_made(transport)
            return protocol, transport

        body, body_transport = connect()
        body.data_received(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        await _steps()  # its task has read the first chunk and waits for more
        first, first_transport = connect()
        body.data_received(b" ")  # a chunk: the body's task is woken (it runs in the next step)
        first.data_received(HEALTHZ)  # a complete request at the limit, in the same step: the body gives way
        assert body_transport.aborted and closed == ["evicted"]
        await _steps()  # the body's task answers (its close is not seen yet); the first request is answered
        assert first_transport.buffer.startswith(b"HTTP/1.1 200")
        first_transport.buffer = b""  # read by the client: idle
        late, late_transport = connect()
        late.data_received(HEALTHZ)
        await _steps()
        assert late_transport.buffer.startswith(b"HTTP/1.1 200"), late_transport.buffer
        assert first_transport.aborted and closed == ["evicted", "evicted"], closed
        body.connection_lost(None)

    asyncio.run(run())
