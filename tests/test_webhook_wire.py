"""The server's side of its workers' pipe as a boundary (issue 19): a worker lints hostile objects, so what it
writes back is read as data, never run (no pickle), each value's type checked; and the answers given from a
body's head (too large, overloaded, shutdown, a large body whose worker failed) name the uid decoding the body
names (the last of two ``request.uid`` keys, as ``json.loads`` and the API server's Go decoder take it). Real
uvicorn server, real TLS on loopback, real worker processes."""

from __future__ import annotations

import json
import ssl
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
httpx = pytest.importorskip("httpx")

from test_webhook import B01, B09, review, workload_object  # noqa: E402

from kvlint.webhook import app as app_module  # noqa: E402
from kvlint.webhook.app import create_app, summary_review  # noqa: E402
from kvlint.webhook.review import WebhookSettings, head_names, parse_review, review_from_head  # noqa: E402
from kvlint.webhook.server import ServerThread, make_reloader  # noqa: E402
from kvlint.webhook.worker import MalformedMessage, decode_reply, encode_reply  # noqa: E402


def _serve(tls: dict[str, Any], **settings: Any) -> tuple[ServerThread, Any]:
    pipeline = settings.pop("pipeline", None)
    s = WebhookSettings(workers=1, **settings)
    app = create_app(s, pipeline=pipeline)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    return ServerThread(app, reloader).start(), app


def _client(srv: ServerThread, tls: dict[str, Any]) -> Any:
    return httpx.Client(base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=30)


def _post(client: Any, text: str) -> Any:
    return client.post("/validate", content=text.encode(), headers={"Content-Type": "application/json"})


def test_a_pickle_a_worker_writes_is_not_run_by_the_server(tls: dict[str, Any], tmp_path: Path) -> None:
    """A worker that writes a pickle to its pipe as its reply (as one made to run other code by a hostile object
    could) ran code in the server, which unpickled every reply: here, a pickle that makes a directory. The
    reply is now a kind byte, lengths, raw bytes and JSON: this one is no reply, the worker is replaced and the
    review answered per the failure mode with the request's uid, and the server goes on answering."""
    from webhook_pipelines import forging_pipeline

    mark = tmp_path / "ran-in-the-server"
    srv, app = _serve(tls, failure_mode="closed", pipeline=forging_pipeline)
    registry = app.state.webhook.metrics.registry
    forged = workload_object(B09)
    forged["metadata"]["name"] = "forge-1"
    forged["metadata"]["annotations"] = {"example.com/mark": str(mark)}
    try:
        with _client(srv, tls) as client:
            answer = client.post("/validate", json=review(forged, uid="u-forged")).json()["response"]
            after = client.post("/validate", json=review(workload_object(B01), uid="u-after")).json()[
                "response"
            ]
    finally:
        srv.stop()
    assert not mark.exists()
    assert answer["uid"] == "u-forged" and answer["allowed"] is False
    assert "internal error" in answer["status"]["message"]
    assert after["uid"] == "u-after" and after["allowed"] is False and "KV103" in after["status"]["message"]
    assert registry.get_sample_value("kvlint_webhook_worker_restarts_total", {"reason": "protocol"}) == 1.0


def test_replies_are_read_as_data_and_their_types_checked() -> None:
    """What the server reads of a reply: a pickle, an unknown kind, a raw part longer than the reply, JSON that
    does not decode or holds NaN, and a reply of another shape are MalformedMessage; a summary whose values are
    not of a review summary's types (a uid that is a list, a finding that is a mapping or counts no finding, a count
    of 10**12) is refused before it is counted or logged; 4,999 warnings of one rule are one entry."""
    import pickle
    import struct

    summary = ["admission.k8s.io/v1", "u", "CREATE", "Deployment", "ns", "n", None, False, "me"]
    summary += [False, "findings", [["KV103", "error", "m", 1]], [["KV202", "warning", "", 4999]], 0, "", ""]
    good = encode_reply(("answer", 3, b"{}", summary))
    assert decode_reply(good) == ("answer", 3, b"{}", summary)
    review, verdict = summary_review(summary)
    assert review.uid == "u" and len(verdict.errors) == 1 and len(verdict.warnings) == 1
    assert [(w.rule, w.stands_for) for w in verdict.warnings] == [("KV202", 4999)]
    head = struct.Struct("!BQI")
    for data in (
        pickle.dumps(("answer", 3, b"{}", tuple(summary)), pickle.HIGHEST_PROTOCOL),
        head.pack(9, 3, 0) + b"[]",
        head.pack(1, 3, 10_000) + b"{}",
        head.pack(4, 3, 0) + b"[[],",
        head.pack(4, 3, 0) + b"[[], NaN]",
        head.pack(4, 3, 0) + b"[[]]",
        b"\x01",
    ):
        with pytest.raises(MalformedMessage):
            decode_reply(data)
    for at, value in (
        (1, ["u"]),
        (7, "false"),
        (11, [{"rule": "KV103"}]),
        (11, [["KV103", "error", "m"]]),
        (12, [["KV202", "warning", "", 0]]),
        (12, [["KV202", "warning", "", 10**12]]),  # refused before a list of that many is made
        (13, True),
    ):
        bad = list(summary)
        bad[at] = value
        with pytest.raises(ValueError):
            summary_review(bad)


def test_the_summary_sends_of_an_error_message_what_the_log_line_shows() -> None:
    """A summary carries the first errors' messages cut to what the log line shows of each ``rule: message``
    (``MAX_WARNING_CHARS``): the two constants are one."""
    from kvlint.webhook import answer, review

    assert answer.MAX_WARNING_CHARS == review.MAX_WARNING_CHARS


def _two_uids(obj: dict[str, Any], first: str, second: str) -> str:
    """The review of ``obj`` as JSON text whose request names its uid twice, ``first`` then ``second`` (no API
    server writes that; a client posting to the webhook can)."""
    text = json.dumps(review(obj, uid="PLACEHOLDER"))
    return text.replace('"uid": "PLACEHOLDER"', f'"uid": "{first}", "uid": "{second}"', 1)


def test_head_names_read_the_uid_decoding_the_body_reads() -> None:
    """The uid read from a body's head is the one ``parse_review`` reads: the last of two ``request.uid`` keys
    (the first ``"uid"`` of the head was taken), not a user's or an object's uid written before it, not one of a
    ``request`` object a later one replaces; for a head cut anywhere, the uid found so far or none."""
    obj = workload_object(B09)
    text = _two_uids(obj, "u-first", "u-second")
    assert parse_review(text).uid == "u-second"
    assert head_names(text) == ("u-second", "admission.k8s.io/v1")
    user_first = review(obj, uid="u-req", userInfo={"username": "alice", "uid": "user-1"})
    user_first["request"] = {"userInfo": user_first["request"].pop("userInfo"), **user_first["request"]}
    text = json.dumps(user_first)
    assert text.index('"user-1"') < text.index('"u-req"')
    assert parse_review(text).uid == review_from_head(text).uid == "u-req"  # type: ignore[union-attr]
    replaced = '{"apiVersion":"admission.k8s.io/v1","request":{"uid":"a"},"request":{"operation":"CREATE"}}'
    assert head_names(replaced)[0] is None
    deep = '{"apiVersion": "admission.k8s.io/v1", "request": {"uid": "u-deep", "object": ' + "[" * 100_000
    assert head_names(deep)[0] == "u-deep"
    text = _two_uids(obj, "u-first", "u-second")
    for cut in range(len(text)):
        assert head_names(text[:cut])[0] in (None, "u-first", "u-second")


def test_answers_from_the_head_name_the_uid_the_decoded_body_names(tls: dict[str, Any]) -> None:
    """A review naming its uid twice: answered from its decoded body with the second (``json.loads``: the last
    key wins), and was answered "internal error (malformed answer)" because the server compared the worker's
    answer with the first; a body too large to hold, answered from its head, named the first (and one whose
    user's uid came before the request's named the user's). Every answer now names the uid decoding names."""
    srv, app = _serve(tls, failure_mode="closed", max_request_bytes=16 * 1024)
    small = _two_uids(workload_object(B01), "u-first", "u-second")
    big_obj = workload_object(B09)
    big_obj["metadata"]["annotations"] = {"example.com/blob": "x" * (32 * 1024)}
    big = _two_uids(big_obj, "u-big-first", "u-big-second")
    user_first = review(big_obj, uid="u-req", userInfo={"username": "alice", "uid": "user-1"})
    user_first["request"] = {"userInfo": user_first["request"].pop("userInfo"), **user_first["request"]}
    try:
        with _client(srv, tls) as client:
            decoded = _post(client, small).json()["response"]
            from_head = _post(client, big).json()["response"]
            user = client.post("/validate", json=user_first).json()["response"]
    finally:
        srv.stop()
    assert decoded["uid"] == "u-second" and decoded["allowed"] is False
    assert "KV103" in decoded["status"]["message"], decoded
    assert from_head["uid"] == "u-big-second" and "--max-request-bytes" in from_head["status"]["message"]
    assert user["uid"] == "u-req"


def test_a_large_review_its_worker_failed_on_names_the_last_uid(tls: dict[str, Any]) -> None:
    """A body over ``LOOP_DECODE_BYTES`` whose worker failed is answered from its head: with the uid decoding
    reads (the second of two), as the same review's small body is."""
    from webhook_pipelines import failing_pipeline

    srv, _ = _serve(tls, failure_mode="closed", pipeline=failing_pipeline)
    obj = workload_object(B09)
    obj["metadata"]["name"] = "fail-big"
    obj["metadata"]["annotations"] = {"example.com/blob": "x" * (2 * app_module.LOOP_DECODE_BYTES)}
    small = workload_object(B09)
    small["metadata"]["name"] = "fail-small"
    try:
        with _client(srv, tls) as client:
            big = _post(client, _two_uids(obj, "u-1", "u-2")).json()["response"]
            little = _post(client, _two_uids(small, "u-3", "u-4")).json()["response"]
    finally:
        srv.stop()
    assert big["uid"] == "u-2" and little["uid"] == "u-4"
    assert "internal error (ValueError)" in big["status"]["message"]


def test_a_reply_header_does_not_size_the_servers_buffer() -> None:
    """The server held a reply's bytes in a buffer of the size its frame header declared, allocated (and zeroed)
    on the header: a worker that wrote a header of 2 GiB - 1 and ten bytes made the server's event loop fill
    2 GiB. The buffer now holds what arrived; pieces across reads still make the reply."""
    import os

    from kvlint.webhook.pool import _INCOMPLETE, _Frames
    from kvlint.webhook.worker import FRAME_HEADER

    reply = encode_reply(("answer", 7, b'{"response":{}}', {"n": 1}))
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        frames = _Frames()
        os.write(w, FRAME_HEADER.pack(len(reply)) + reply[:10])
        assert frames.read(r) is _INCOMPLETE
        os.write(w, reply[10:20])
        assert frames.read(r) is _INCOMPLETE
        os.write(w, reply[20:])
        assert frames.read(r) == ("answer", 7, b'{"response":{}}', {"n": 1})
        declared = 64 * 2**20
        os.write(w, FRAME_HEADER.pack(declared) + b"x" * 10)
        assert frames.read(r) is _INCOMPLETE
        assert frames._body is not None and len(frames._body) == 10
    finally:
        os.close(r)
        os.close(w)


def test_a_reply_larger_than_its_worker_can_hold_is_refused_on_its_header() -> None:
    """A frame header declaring more bytes than the worker's address space (``worker_memory_bytes``) is no reply
    of a worker: refused on the header, before a byte of it is read, as a malformed reply (the worker is replaced
    for ``protocol``)."""
    import os

    from kvlint.webhook.pool import _Frames
    from kvlint.webhook.worker import FRAME_HEADER

    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        frames = _Frames(max_size=128 * 2**20)
        os.write(w, FRAME_HEADER.pack(128 * 2**20 + 1) + b"x" * 10)
        got = frames.read(r)
        assert got[0] == "malformed" and "128 MiB" in got[2]
        assert frames._body is None
    finally:
        os.close(r)
        os.close(w)


def _fed(frames: Any, r: int, w: int, data: bytes) -> Any:
    """What ``frames`` reads of ``data`` written to the pipe ``w`` a pipe's worth at a time."""
    import os

    from kvlint.webhook.pool import _INCOMPLETE

    got = _INCOMPLETE
    while got is _INCOMPLETE:
        data = data[os.write(w, data[: 1 << 16]) :]
        got = frames.read(r)
    return got


def test_a_summary_larger_than_its_review_can_make_is_not_decoded() -> None:
    """A reply's JSON part is decoded on the server's event loop, about 25 times its size in memory (a list of a
    million empty lists, 2.9 MiB, made 72 MiB and took 0.5 s): an ``answer`` whose summary is far larger than
    the review's body could make (its strings come from the body, its findings are grouped by rule, ten error
    messages of 256 characters) is a malformed reply, refused before it is decoded; one within it is read."""
    import os

    from kvlint.webhook.pool import _Frames, summary_limit
    from kvlint.webhook.worker import FRAME_HEADER

    body = b'{"request":{"uid":"u"}}'
    limit = summary_limit(body)
    fits = encode_reply(("answer", 3, b"{}", ["x" * (limit - 100)]))
    bloated = encode_reply(("answer", 3, b"{}", [[] for _ in range(limit)]))
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        frames = _Frames()
        frames.start(b"", summary_limit=limit)
        assert _fed(frames, r, w, FRAME_HEADER.pack(len(fits)) + fits)[:3] == ("answer", 3, b"{}")
        frames.start(b"", summary_limit=limit)
        got = _fed(frames, r, w, FRAME_HEADER.pack(len(bloated)) + bloated)
        assert got[0] == "malformed" and "JSON part" in got[2]
    finally:
        os.close(r)
        os.close(w)
