"""The hand-over of a review to its worker (issue 19): the server passes the request body as it came, and the
worker decodes it, applies the exemptions, lints and writes the response; the server decodes a body only when
the worker could not answer it. Real uvicorn server, real TLS on loopback, real worker processes."""

from __future__ import annotations

import json
import ssl
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
httpx = pytest.importorskip("httpx")

from test_webhook import B01, B09, review, workload_object  # noqa: E402
from webhook_pipelines import slow_pipeline  # noqa: E402

from kvlint.webhook import app as app_module  # noqa: E402
from kvlint.webhook.app import create_app  # noqa: E402
from kvlint.webhook.review import WebhookSettings  # noqa: E402
from kvlint.webhook.server import ServerThread, make_reloader  # noqa: E402


def _serve(tls: dict[str, Any], **settings: Any) -> tuple[ServerThread, Any]:
    pipeline = settings.pop("pipeline", None)
    s = WebhookSettings(workers=1, **settings)
    app = create_app(s, pipeline=pipeline)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    return ServerThread(app, reloader).start(), app


def _client(srv: ServerThread, tls: dict[str, Any]) -> Any:
    return httpx.Client(base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=30)


def test_the_server_decodes_no_body_its_worker_answers(tls: dict[str, Any], monkeypatch: Any) -> None:
    """Denied, clean, exempt, malformed and 1.3 MB reviews are answered as before, and the server process
    decodes none of them (it decoded every body on its event loop before handing the object over: a 1.3 MB
    body held the loop 45 to 70 ms, and the object was pickled to the worker and the findings back)."""
    decoded: list[int] = []
    real = app_module.parse_review
    monkeypatch.setattr(app_module, "parse_review", lambda body: decoded.append(len(body)) or real(body))
    srv, _ = _serve(tls)
    try:
        with _client(srv, tls) as client:
            denied = client.post("/validate", json=review(workload_object(B01), uid="u-denied")).json()
            assert denied["response"]["uid"] == "u-denied" and denied["response"]["allowed"] is False
            assert "KV103" in denied["response"]["status"]["message"]
            clean = client.post("/validate", json=review(workload_object(B09), uid="u-clean")).json()
            assert clean["response"] == {
                "uid": "u-clean",
                "allowed": True,
                "auditAnnotations": {"verdict": "allow"},
            }
            exempt = client.post(
                "/validate", json=review(workload_object(B01), uid="u-exempt", namespace="kube-system")
            ).json()
            assert exempt["response"] == {"uid": "u-exempt", "allowed": True}
            big_obj = workload_object(B09)
            big_obj["metadata"]["annotations"] = {"example.com/blob": "x" * (1300 * 1024)}
            big = client.post("/validate", json=review(big_obj, uid="u-big"))
            assert big.status_code == 200 and big.json()["response"]["uid"] == "u-big"
            for body, why in (
                (b"{not json", "not valid JSON"),
                (b"[1, 2]", "expected an AdmissionReview object"),
                (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"}).encode(), "kind must be"),
                (b'{"request": "\xff"}', "not valid JSON"),
            ):
                r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
                assert r.status_code == 400 and why in r.json()["error"], r.text
            metrics = client.get("/metrics").text
            assert 'kvlint_webhook_bad_requests_total{reason="malformed"} 4.0' in metrics
            assert (
                'kvlint_webhook_reviews_total{dry_run="false",outcome="findings",verdict="denied"} 1.0'
                in metrics
            )
            assert (
                'kvlint_webhook_reviews_total{dry_run="false",outcome="skipped",verdict="allowed"} 1.0'
                in metrics
            )
            assert 'kvlint_webhook_findings_total{rule="KV103",severity="error"}' in metrics
    finally:
        srv.stop()
    assert decoded == []


def test_a_review_its_worker_did_not_finish_keeps_its_uid_dry_run_and_names(tls: dict[str, Any]) -> None:
    """A review whose budget runs out in the worker is answered per the failure mode from the body, decoded
    by the server then: its uid in the answer, its dry run in the metrics (``dry_run="true"``), as when the
    server decoded every body first."""
    srv, app = _serve(tls, timeout_seconds=0.5, pipeline=slow_pipeline, failure_mode="closed")
    try:
        slow = workload_object(B09)
        slow["metadata"]["name"] = "slow-dry"
        with _client(srv, tls) as client:
            out = client.post("/validate", json=review(slow, uid="u-slow", dryRun=True)).json()["response"]
            assert out["uid"] == "u-slow" and out["allowed"] is False
            assert "review not finished within 0.5 s" in out["status"]["message"]
            metrics = client.get("/metrics").text
            assert (
                'kvlint_webhook_reviews_total{dry_run="true",outcome="timeout",verdict="denied"} 1.0'
                in metrics
            )
            assert 'kvlint_webhook_budget_exceeded_total{stage="lint"} 1.0' in metrics
            # an exempt object is skipped by the worker before any lint: allowed at once, whatever the failure mode
            out = client.post("/validate", json=review(slow, uid="u-exempt", namespace="kube-system")).json()[
                "response"
            ]
            assert out == {"uid": "u-exempt", "allowed": True}
    finally:
        srv.stop()


def test_a_review_cancelled_at_shutdown_starts_no_worker(tls: dict[str, Any], tmp_path: Any) -> None:
    """uvicorn cancels the reviews still running when its graceful shutdown time is over, just before the pool
    closes: each such review's worker is killed, and was replaced by a new one from the fork server (counted as a
    restart, logged "review worker replaced") only to be stopped again."""
    import threading

    from test_webhook_connections import WAIT_S, _connect, _gated_review, _until
    from webhook_pipelines import gated_pipeline

    srv, app = _serve(tls, timeout_seconds=25.0, pipeline=gated_pipeline)
    pool = app.state.webhook.pool
    spawned: list[int] = []
    real = pool._spawn
    pool._spawn = lambda: spawned.append(1) or real()
    gate = tmp_path / "never"
    stopper = None
    try:
        conn = _connect(srv, tls)
        conn.sendall(_gated_review("held", str(gate)))
        _until(lambda: pool.busy == 1, "the review being linted")
        stopper = threading.Thread(target=srv.stop)  # graceful time 2 s (ServerThread)
        stopper.start()
        conn.settimeout(WAIT_S)
        answer = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            answer += chunk
        assert b'"uid":"uid-held"' in answer and b"shutting down" in answer
        stopper.join(WAIT_S)
        assert not stopper.is_alive()
    finally:
        gate.touch()
        if stopper is None:
            srv.stop()
    assert spawned == [] and pool.restarts == 0


def test_the_process_start_and_end_are_logged_once_with_the_probe_listener(
    tls: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Each uvicorn server logs "Started server process [pid]" and "Finished server process [pid]": with the
    probe listener (its own uvicorn server in a thread of the same process) the pod's log said both twice."""
    import logging

    caplog.set_level(logging.INFO)
    app = create_app(WebhookSettings(workers=1), warm_up=False)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader, probe_port=0).start()
    try:
        assert srv.probe_url is not None
        assert httpx.get(srv.probe_url + "/readyz", timeout=30).status_code == 200
    finally:
        srv.stop()
    lines = [r.getMessage().split(" [", 1)[0] for r in caplog.records if "server process [" in r.getMessage()]
    assert sorted(lines) == ["Finished server process", "Started server process"]


def test_connections_the_probe_listener_closes_are_counted_with_their_listener(tls: dict[str, Any]) -> None:
    """``kvlint_webhook_connections_closed_total`` had only a ``reason``, and the probe listener's closures were
    not counted at all; it has ``listener`` as ``kvlint_webhook_connections_evicted_total`` has."""
    import socket

    app = create_app(WebhookSettings(workers=1), warm_up=False)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader, probe_port=0).start()
    try:
        assert srv.probes is not None
        with socket.create_connection(("127.0.0.1", srv.probes.port), timeout=30) as sock:
            sock.sendall(
                b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (32 * 1024)
            )  # never complete
            while sock.recv(65536):  # closed by the server
                pass
        metrics = httpx.get(srv.probe_url + "/metrics", timeout=30).text
        assert (
            'kvlint_webhook_connections_closed_total{listener="probe",reason="header_too_large"} 1.0'
            in metrics
        )
    finally:
        srv.stop()


def _named_oversized_head(uid: str, declared: int) -> bytes:
    """The headers and first bytes of an API-server review whose body (``declared`` bytes) is over the limit:
    its head names the uid, so the server reads it to its end to answer it."""
    start = (
        b'{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"%s","object":{"x":"'
        % (uid.encode())
    )
    head = (
        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % declared
    )
    return head + start + b"a" * 2000


def test_an_oversized_review_read_to_its_end_is_the_last_body_to_give_way(tls: dict[str, Any]) -> None:
    """At ``--max-connections`` a complete request closes the connection whose body began first: the API server's
    review over ``--max-request-bytes``, read to its end to be answered per the failure mode, was that body when it
    began first, and its review failed with EOF (the API server's failurePolicy). Such a body now gives way after
    every other one."""
    from test_webhook_connections import HEALTHZ, SLOW_BODY, _connect, _evicted, _read_responses, _until

    settings = WebhookSettings(workers=1, max_request_bytes=4096)
    app = create_app(settings, warm_up=False)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader, header_timeout=30.0, limit_concurrency=4).start()
    held: list[Any] = []
    try:
        big = _connect(srv, tls)
        held.append(big)
        declared = 10_000
        first = _named_oversized_head("uid-big", declared)
        big.sendall(first)
        _until(lambda: len(srv.server.server_state.tasks) == 1, "the oversized body being read")
        for n in (2, 3):
            conn = _connect(srv, tls)
            conn.sendall(SLOW_BODY)
            held.append(conn)
            _until(lambda n=n: len(srv.server.server_state.tasks) == n, "the body being read")
        extra = _connect(srv, tls)
        held.append(extra)
        extra.sendall(HEALTHZ)
        assert _read_responses(extra, 1)[0] == [b"HTTP/1.1 200"]
        assert _evicted(app, "review", "body") == 1.0
        # the slow body that began next is closed unanswered (not at its body deadline, with HTTP 408)
        assert _read_responses(held[1]) == ([], True)
        sent = len(first) - first.index(b"\r\n\r\n") - 4
        big.sendall(b"a" * (declared - sent - 4) + b'"}}}')
        statuses, _ = _read_responses(big, 1)
        assert statuses == [b"HTTP/1.1 200"], "the oversized review was not answered"
    finally:
        for conn in held:
            conn.close()
        srv.stop()


def test_an_oversized_review_read_when_the_shutdown_time_ends_is_answered_with_its_uid(
    tls: dict[str, Any],
) -> None:
    """uvicorn cancels the requests still running when its graceful shutdown time is over: a review over
    ``--max-request-bytes`` whose head names its uid, being read to its end, got HTTP 503 (the API server's
    failurePolicy decided); it is answered per the failure mode with its uid, and the connection closed."""
    import threading

    from test_webhook_connections import WAIT_S, _connect, _until

    settings = WebhookSettings(
        workers=1, max_request_bytes=4096, failure_mode="closed", body_timeout_seconds=30.0
    )
    app = create_app(settings, warm_up=False)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader, header_timeout=30.0).start()
    stopper = None
    try:
        conn = _connect(srv, tls)
        conn.sendall(_named_oversized_head("uid-drained", 10_000))
        _until(lambda: len(srv.server.server_state.tasks) == 1, "the oversized body being read")
        stopper = threading.Thread(target=srv.stop)  # graceful time 2 s (ServerThread)
        stopper.start()
        conn.settimeout(WAIT_S)
        answer = b""
        while True:
            try:
                chunk = conn.recv(65536)
            except (ssl.SSLError, OSError):
                break
            if not chunk:
                break
            answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"\r\nconnection: close" in head.lower(), answer
        response = json.loads(body)["response"]
        assert response["uid"] == "uid-drained" and response["allowed"] is False  # --failure-mode closed
        assert "shutting down" in response["status"]["message"]
        stopper.join(WAIT_S)
    finally:
        if stopper is None:
            srv.stop()


def test_a_review_that_needs_no_worker_is_answered_while_every_worker_is_busy(
    tls: dict[str, Any], tmp_path: Any
) -> None:
    """With the body handed to a worker, a review that needs no lint (an exempt namespace, a DELETE, a
    malformed body) waited for a free worker, behind the reviews being linted (up to its budget); when none is
    free the server decides those at once itself, as it did when it decoded every body."""
    import threading

    from test_webhook_connections import _connect, _gated_review, _until
    from webhook_pipelines import gated_pipeline

    srv, app = _serve(tls, timeout_seconds=20.0, pipeline=gated_pipeline)
    pool = app.state.webhook.pool
    gate = tmp_path / "gate"
    held = _connect(srv, tls)
    try:
        held.sendall(_gated_review("held", str(gate)))
        _until(lambda: pool.busy == 1, "the review being linted")
        with _client(srv, tls) as client:
            exempt = client.post(
                "/validate", json=review(workload_object(B01), uid="u-exempt", namespace="kube-system")
            ).json()["response"]
            gone = client.post("/validate", json=review(None, uid="u-delete", operation="DELETE")).json()
            bad = client.post("/validate", content=b"{", headers={"Content-Type": "application/json"})
            assert (pool.busy, pool.restarts) == (1, 0)  # answered while the held review is still linted
        assert exempt == {"uid": "u-exempt", "allowed": True}
        assert gone["response"] == {"uid": "u-delete", "allowed": True}
        assert bad.status_code == 400
    finally:
        gate.touch()
        threading.Thread(target=held.close).start()
        srv.stop()


def test_a_large_review_is_not_decoded_on_the_event_loop_while_every_worker_is_busy(
    tls: dict[str, Any], tmp_path: Any, monkeypatch: Any
) -> None:
    """The server decodes a body itself when no worker is free only up to ``LOOP_DECODE_BYTES``: a client that
    kept every worker busy had each of its large reviews decoded on the event loop (a 1.3 MB one 45 to 70 ms of
    the probes' and the other reviews' loop), and then again in the worker. A larger one waits for a worker, which
    decides it (here an exempt namespace, allowed) as it would have been at once."""
    import threading

    from test_webhook_connections import _connect, _gated_review, _until
    from webhook_pipelines import gated_pipeline

    decoded: list[int] = []
    real = app_module.parse_review
    monkeypatch.setattr(app_module, "parse_review", lambda body: decoded.append(len(body)) or real(body))
    srv, app = _serve(tls, timeout_seconds=20.0, pipeline=gated_pipeline)
    pool = app.state.webhook.pool
    gate = tmp_path / "gate"
    held = _connect(srv, tls)
    answers: list[Any] = []
    big_obj = workload_object(B01)
    big_obj["metadata"]["annotations"] = {"example.com/blob": "x" * (2 * app_module.LOOP_DECODE_BYTES)}
    big = review(big_obj, uid="u-big-exempt", namespace="kube-system")
    try:
        held.sendall(_gated_review("held", str(gate)))
        _until(lambda: pool.busy == 1, "the review being linted")
        with _client(srv, tls) as client:
            small = client.post("/validate", json=review(None, uid="u-delete", operation="DELETE")).json()
            assert small["response"] == {"uid": "u-delete", "allowed": True}  # decided here at once
            assert len(decoded) == 1 and decoded[0] <= app_module.LOOP_DECODE_BYTES
            poster = threading.Thread(target=lambda: answers.append(client.post("/validate", json=big)))
            poster.start()
            _until(lambda: pool.waiting == 1 or bool(answers), "the large review waiting for a worker")
            gate.touch()
            poster.join(30)
    finally:
        gate.touch()
        threading.Thread(target=held.close).start()
        srv.stop()
    assert [r.json()["response"] for r in answers] == [{"uid": "u-big-exempt", "allowed": True}]
    assert all(n <= app_module.LOOP_DECODE_BYTES for n in decoded), decoded


def test_an_update_whose_old_object_is_linted_is_decoded_by_no_server_loop(
    tls: dict[str, Any], monkeypatch: Any
) -> None:
    """An UPDATE whose new object has errors, with ``allow_existing_violations`` (the default), had its body
    decoded on the server's event loop and its ``oldObject`` pickled to a worker: an UPDATE any client may send,
    so every review could be made to take that path (a 1.3 MB one held the loop 45 to 70 ms). The body now goes
    back to a worker with the new object's rows, which lints the old object and answers; the answer is the same
    (the old object's error a warning, ``old_object_lints_total{result="linted"}``)."""
    from test_webhook import _with_env

    decoded: list[int] = []
    real = app_module.parse_review
    monkeypatch.setattr(app_module, "parse_review", lambda body: decoded.append(len(body)) or real(body))
    srv, app = _serve(tls, timeout_seconds=20.0)
    registry = app.state.webhook.metrics.registry
    old = workload_object(B01)  # KV103, also in the new object
    old["metadata"]["annotations"] = {"example.com/blob": "x" * (2 * app_module.LOOP_DECODE_BYTES)}
    new = _with_env(old, "HF_HUB_OFFLINE", "1")
    try:
        with _client(srv, tls) as client:
            resp = client.post(
                "/validate", json=review(new, uid="u-update", operation="UPDATE", oldObject=old)
            )
            answer = resp.json()["response"]
    finally:
        srv.stop()
    assert answer["uid"] == "u-update" and answer["allowed"] is True
    assert any(w.startswith("KV103 (error, pre-existing) [container vllm]:") for w in answer["warnings"])
    assert registry.get_sample_value("kvlint_webhook_old_object_lints_total", {"result": "linted"}) == 1.0
    assert decoded == []


def test_a_worker_answer_that_does_not_name_the_request_is_not_sent(
    tls: dict[str, Any], monkeypatch: Any
) -> None:
    """The server sent a worker's response bytes as they came: an answer naming another uid (or garbled) went
    to the API server, which rejects it and applies ``failurePolicy``, while the server counted and logged the
    summary's verdict. It now checks that the bytes begin with the AdmissionReview of the summary's uid and
    ``allowed``, and answers a mismatch as the worker's failure: the body decoded here, the request's own uid."""
    from kvlint.webhook.pool import ReviewPool

    real = ReviewPool.review
    forged: list[bytes] = []

    async def garbled(self: Any, body: bytes, *args: Any) -> tuple[Any, ...]:
        reply = await real(self, body, *args)
        if reply[0] == "answer":
            forged.append(reply[2])
            reply = (reply[0], reply[1], reply[2].replace(b'"u-clean"', b'"u-other"'), reply[3])
        return reply

    monkeypatch.setattr(ReviewPool, "review", garbled)
    srv, app = _serve(tls, failure_mode="closed")
    registry = app.state.webhook.metrics.registry
    try:
        with _client(srv, tls) as client:
            answer = client.post("/validate", json=review(workload_object(B09), uid="u-clean")).json()
    finally:
        srv.stop()
    assert forged and b'"u-other"' not in forged[0]
    assert answer["response"]["uid"] == "u-clean" and answer["response"]["allowed"] is False
    assert "internal error (malformed answer)" in answer["response"]["status"]["message"]
    labels = {"verdict": "denied", "outcome": "internal_error", "dry_run": "false"}
    assert registry.get_sample_value("kvlint_webhook_reviews_total", labels) == 1.0


def test_a_large_review_its_worker_failed_on_is_answered_from_its_head(
    tls: dict[str, Any], monkeypatch: Any
) -> None:
    """When the worker fails on a review (or runs out of budget, or of memory), the server decoded the body on its
    event loop to answer it, whatever its size and outside any worker's memory limit: exactly the bodies made to
    make a worker fail. A body over ``LOOP_DECODE_BYTES`` is now answered per the failure mode from its head (the
    request's uid), undecoded; one whose head names no uid gets HTTP 400; a small one is decoded as before."""
    from webhook_pipelines import failing_pipeline

    decoded: list[int] = []
    real = app_module.parse_review
    monkeypatch.setattr(app_module, "parse_review", lambda body: decoded.append(len(body)) or real(body))
    srv, app = _serve(tls, failure_mode="closed", pipeline=failing_pipeline)
    registry = app.state.webhook.metrics.registry
    big_obj = workload_object(B09)
    big_obj["metadata"]["name"] = "fail-big"
    big_obj["metadata"]["annotations"] = {"example.com/blob": "x" * (2 * app_module.LOOP_DECODE_BYTES)}
    small_obj = workload_object(B09)
    small_obj["metadata"]["name"] = "fail-small"
    no_uid = review(big_obj, uid="u-late")
    # the request's uid after its object, so not in the body's head
    no_uid["request"] = {"object": no_uid["request"].pop("object"), **no_uid["request"]}
    try:
        with _client(srv, tls) as client:
            big = client.post("/validate", json=review(big_obj, uid="u-big-fail")).json()["response"]
            assert decoded == []
            small = client.post("/validate", json=review(small_obj, uid="u-small-fail")).json()["response"]
            assert len(decoded) == 1 and decoded[0] <= app_module.LOOP_DECODE_BYTES
            late = client.post("/validate", json=no_uid)
    finally:
        srv.stop()
    for answer, uid in ((big, "u-big-fail"), (small, "u-small-fail")):
        assert answer["uid"] == uid and answer["allowed"] is False
        assert "internal error (ValueError)" in answer["status"]["message"]
    assert late.status_code == 400 and "name no request uid" in late.json()["error"]
    assert len(decoded) == 1
    labels = {"verdict": "denied", "outcome": "internal_error", "dry_run": "false"}
    assert registry.get_sample_value("kvlint_webhook_reviews_total", labels) == 2.0


def _other_uid(reply: tuple[Any, ...], at: int, garble_only: bool) -> tuple[Any, ...]:
    """``reply`` with the response bytes at ``at`` naming ``u-other`` instead of the request's uid (and, unless
    ``garble_only``, its summary after them too: a reply that agrees with itself but not with the request)."""
    data = reply[at].replace(b'"uid":"u-', b'"uid":"u-other-', 1)
    summary = reply[at + 1]
    if not garble_only:
        summary = (summary[0], "u-other-" + summary[1][2:], *summary[2:])
    return (*reply[:at], data, summary, *reply[at + 2 :])


def test_a_worker_answer_naming_another_request_is_not_sent(tls: dict[str, Any], monkeypatch: Any) -> None:
    """The server checked a worker's response bytes against the worker's own summary only: a reply naming
    another uid in both was sent as it came (the API server rejects it and applies ``failurePolicy``). The
    response's uid is now compared with the request's, read from the body's head, and a mismatch is answered as
    the worker's failure, with the request's own uid."""
    from kvlint.webhook.pool import ReviewPool

    real = ReviewPool.review

    async def other(self: Any, body: bytes, *args: Any) -> tuple[Any, ...]:
        reply = await real(self, body, *args)
        return _other_uid(reply, 2, garble_only=False) if reply[0] == "answer" else reply

    monkeypatch.setattr(ReviewPool, "review", other)
    srv, _ = _serve(tls, failure_mode="closed")
    try:
        with _client(srv, tls) as client:
            answer = client.post("/validate", json=review(workload_object(B09), uid="u-clean")).json()
    finally:
        srv.stop()
    assert answer["response"]["uid"] == "u-clean" and answer["response"]["allowed"] is False
    assert "internal error (malformed answer)" in answer["response"]["status"]["message"]


@pytest.mark.parametrize("garble_only", [True, False], ids=["garbled", "another-request"])
def test_an_update_fallback_answer_is_checked_before_it_is_sent(
    tls: dict[str, Any], monkeypatch: Any, garble_only: bool
) -> None:
    """An UPDATE whose old object's lint fails (or runs out of budget) is answered with the first reply's own
    answer, every error denying: those bytes were sent unchecked, so a garbled one, or one naming another
    request, went to the API server. They are now checked as an answer is (against the summary and the
    request's uid) and a mismatch answered as the worker's failure, with the request's own uid."""
    from test_webhook import _with_env

    from kvlint.webhook.pool import ReviewPool, WorkerFailed

    real = ReviewPool.review

    async def other(self: Any, body: bytes, *args: Any) -> tuple[Any, ...]:
        reply = await real(self, body, *args)
        return _other_uid(reply, 4, garble_only) if reply[0] == "update" else reply

    async def failed(self: Any, *args: Any) -> tuple[Any, ...]:
        raise WorkerFailed("ValueError: the old object's lint failed")

    monkeypatch.setattr(ReviewPool, "review", other)
    monkeypatch.setattr(ReviewPool, "review_old", failed)
    srv, _ = _serve(tls, failure_mode="closed")
    old = workload_object(B01)
    new = _with_env(old, "HF_HUB_OFFLINE", "1")
    try:
        with _client(srv, tls) as client:
            body = review(new, uid="u-update", operation="UPDATE", oldObject=old)
            answer = client.post("/validate", json=body).json()["response"]
    finally:
        srv.stop()
    assert answer["uid"] == "u-update" and answer["allowed"] is False
    assert "internal error (malformed answer)" in answer["status"]["message"]
