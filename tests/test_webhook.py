"""The admission webhook end to end: a real uvicorn server on 127.0.0.1 with real TLS (trustme), sent
AdmissionReview requests shaped as the API server sends them, built from fixtures/webhook manifests.
Expected verdicts are computed by running ``kvlint check``'s pipeline on the same files."""

from __future__ import annotations

import dataclasses
import io
import json
import logging
import os
import re
import signal
import socket
import ssl
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
trustme = pytest.importorskip("trustme")
httpx = pytest.importorskip("httpx")

from click.testing import CliRunner  # noqa: E402
from webhook_pipelines import BUDGET_S, slow_pipeline  # noqa: E402

from kvlint.load import load_text  # noqa: E402
from kvlint.pipeline import run_check  # noqa: E402
from kvlint.webhook import cli as webhook_cli  # noqa: E402
from kvlint.webhook.app import create_app  # noqa: E402
from kvlint.webhook.logs import JsonFormatter  # noqa: E402
from kvlint.webhook.review import (  # noqa: E402
    MAX_WARNING_CHARS,
    MAX_WARNINGS_TOTAL_CHARS,
    Mode,
    WebhookSettings,
    build_response,
    format_warning,
    lint_review,
    parse_review,
    webhook_options,
)
from kvlint.webhook.server import ServerThread, make_reloader  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "webhook"
B01 = FIX / "b01-llama8b-l4-default-context.yaml"  # KV103 error + KV202 warning (shared/cases/expected.yaml)
B02 = FIX / "b02-tp2-no-shm.yaml"  # KV404
B09 = FIX / "b09-clean.yaml"
LWS = FIX / "kubernetes-sigs__lws__docs__examples__vllm__GPU__lws.yaml"
DSET = FIX / "llm-d__llm-d__guides__pd-disaggregation__modelserver__gpu__vllm__base__disaggregatedset.yaml"
EXAMPLE = str(ROOT / "fixtures" / "examples" / "chat-8b-l4.yaml")
MAX_BYTES = 256 * 1024


def workload_object(path: Path) -> dict[str, Any]:
    """The first document of ``path`` holding a pod template, as plain JSON data."""
    from kvlint.workloads import find_workloads

    loaded = load_text(path.read_bytes(), str(path))
    w = find_workloads(loaded.documents)[0]
    return json.loads(json.dumps(w.doc.data))


def review(
    obj: dict[str, Any] | None, uid: str = "7c9d1f2e-0000-4000-8000-000000000001", **req: Any
) -> dict[str, Any]:
    """An admission.k8s.io/v1 AdmissionReview request for ``obj``, with the API server's fields."""
    kind = str((obj or {}).get("kind", "Deployment"))
    api = str((obj or {}).get("apiVersion", "apps/v1"))
    group, _, version = api.rpartition("/")
    gvr = {"group": group, "version": version, "resource": kind.lower() + "s"}
    request = {
        "uid": uid,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": gvr,
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": gvr,
        "name": ((obj or {}).get("metadata") or {}).get("name", ""),
        "namespace": "serving",
        "operation": "CREATE",
        "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": None,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    }
    request.update(req)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def expected(path: Path) -> tuple[set[str], set[str]]:
    """(error rule ids, warning rule ids) that ``kvlint check --offline`` reports for ``path``."""
    res = run_check([str(path)], webhook_options())
    return (
        {d.rule for d in res.diagnostics if d.severity == "error"},
        {d.rule for d in res.diagnostics if d.severity == "warning"},
    )


def _start(tls: dict[str, Any], **settings: Any) -> tuple[ServerThread, Any]:
    s = WebhookSettings(timeout_seconds=BUDGET_S, max_request_bytes=MAX_BYTES, workers=2, **settings)
    app = create_app(s, pipeline=slow_pipeline)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    return ServerThread(app, reloader).start(), app


@pytest.fixture(scope="module")
def server(tls: dict[str, Any]) -> Any:
    srv, app = _start(tls)
    client = httpx.Client(
        base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=10
    )
    yield srv, client, app
    client.close()
    srv.stop()


def post(client: Any, body: Any) -> Any:
    r = client.post("/validate", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_denied_with_rules_and_fix_uid_echoed(server: Any) -> None:
    _, client, _ = server
    errors, warnings = expected(B01)
    assert "KV103" in errors and "KV202" in warnings  # shared/cases/expected.yaml: must [KV103, KV202]
    out = post(client, review(workload_object(B01), uid="uid-b01"))
    assert out["apiVersion"] == "admission.k8s.io/v1" and out["kind"] == "AdmissionReview"
    resp = out["response"]
    assert resp["uid"] == "uid-b01"
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 403
    msg = resp["status"]["message"]
    for rule in errors:
        assert f"- {rule} [container vllm]:" in msg
    assert "fix: --max-model-len" in msg  # the computed remedy travels with the denial
    assert {w.split(" ", 1)[0] for w in resp["warnings"]} == warnings
    assert resp["auditAnnotations"]["verdict"] == "deny"


def test_clean_allowed_without_warnings(server: Any) -> None:
    _, client, _ = server
    assert expected(B09) == (set(), set())
    resp = post(client, review(workload_object(B09), uid="uid-b09"))["response"]
    assert resp == {"uid": "uid-b09", "allowed": True, "auditAnnotations": {"verdict": "allow"}}


#: What the API server accepts as an audit annotation key once it prefixes the webhook's name and "/"
#: (k8s.io/apiserver pkg/admission/attributes.go, checkKeyFormat: validation.IsQualifiedName; an invalid key is
#: dropped with a log line): the name part of a qualified name.
QUALIFIED_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def test_findings_the_objects_own_annotation_suppressed_are_counted_in_the_audit_log(server: Any) -> None:
    """A ``kvlint.io/ignore`` annotation (with reasons) on B01 suppresses its errors and the object is admitted;
    the audit log recorded ``verdict: allow`` and nothing else, as for an object kvlint found nothing in. It now
    records how many findings the requester's annotation suppressed."""
    _, client, _ = server
    errors, _ = expected(B01)
    findings = run_check([str(B01)], webhook_options()).diagnostics
    count = sum(1 for d in findings if d.rule in errors)
    assert count
    obj = workload_object(B01)
    obj["metadata"].setdefault("annotations", {})["kvlint.io/ignore"] = ", ".join(
        f"{rule}=the context is capped by the gateway" for rule in sorted(errors)
    )
    resp = post(client, review(obj, uid="uid-ignored"))["response"]
    assert resp["allowed"] is True
    audit = resp["auditAnnotations"]
    assert audit["verdict"] == "allow" and audit["suppressed"] == str(count), audit
    assert all(QUALIFIED_NAME_PART.match(key) for key in audit), audit
    clean = post(client, review(workload_object(B01), uid="uid-b01-again"))["response"]
    assert "suppressed" not in clean["auditAnnotations"]


def test_a_model_annotation_that_unsizes_the_pod_is_said_in_the_answer(server: Any) -> None:
    """``kvlint.io/model: nobody/nothing`` on B01 (whose command names a model kvlint reads) took its KV103 away and
    the review was admitted with one KV502 warning naming the command's model, as if kvlint could not read it. The
    answer (exemptions allowed, the default) now carries a KV005 warning saying the annotation replaced a model
    kvlint reads with one it cannot."""
    _, client, _ = server
    obj = workload_object(B01)
    obj["metadata"].setdefault("annotations", {})["kvlint.io/model"] = "nobody/nothing"
    resp = post(client, review(obj, uid="uid-model-typo"))["response"]
    assert resp["allowed"] is True  # the annotation decides while exemptions are allowed
    (kv005,) = [w for w in resp["warnings"] if w.startswith("KV005")]
    assert "nobody/nothing replaces the model the pod serves" in kv005 and "cannot read" in kv005, kv005
    assert "KV005" in resp["auditAnnotations"]["rules"]


def test_warnings_present_and_bounded(server: Any) -> None:
    _, client, _ = server
    errors, warnings = expected(LWS)
    assert not errors and warnings
    resp = post(client, review(workload_object(LWS), uid="uid-lws"))["response"]
    assert resp["allowed"] is True
    assert {w.split(" ", 1)[0] for w in resp["warnings"]} == warnings
    assert all(len(w) <= MAX_WARNING_CHARS for w in resp["warnings"])
    assert not any(w.lower().startswith("warning") for w in resp["warnings"])


def test_a_warning_text_is_sent_once_as_the_api_server_keeps_it_once(server: Any) -> None:
    """The prefill and decode roles of an llm-d DisaggregatedSet each get the same KV002 and KV202 text (one
    container name, no place in a warning): the server sent 7 warnings of which the API server, which keeps
    one warning of each text, shows 5, and the repeats counted against kvlint's 2048 characters. The
    warnings are now ``kvlint check``'s warning findings formatted, each text once, in order."""
    _, client, _ = server
    res = run_check([str(DSET)], webhook_options())
    assert not [d for d in res.diagnostics if d.severity == "error"]
    texts = [format_warning(d) for d in res.diagnostics if d.severity == "warning"]
    assert len(set(texts)) < len(texts)  # the CLI reports both roles' findings
    resp = post(client, review(workload_object(DSET), uid="uid-dset"))["response"]
    assert resp["uid"] == "uid-dset" and resp["allowed"] is True
    assert resp["warnings"] == list(dict.fromkeys(texts))
    # the same in warn mode and when the limit cuts the list: a repeat never takes a kept warning's place
    from kvlint.types import Diagnostic

    rev = parse_review(json.dumps(review(workload_object(B09))))
    distinct = [Diagnostic("KV202", "warning", "word " * 40, None, container=f"c{i}") for i in range(12)]

    class Result:
        diagnostics = [d for d in distinct for _ in range(2)]

    for mode in ("enforce", "warn"):
        warns = build_response(rev, WebhookSettings(mode=mode), Result())[0]["response"]["warnings"]
        assert len(warns) == len(set(warns))
        kept = warns[:-1]
        assert kept == [format_warning(d) for d in distinct[: len(kept)]] and len(kept) > 6
        assert "more findings not shown" in warns[-1]


def test_dry_run_answers_like_a_real_request_and_is_counted_apart(server: Any) -> None:
    _, client, _ = server
    obj = workload_object(B02)
    real = post(client, review(obj, uid="real"))["response"]
    dry = post(client, review(obj, uid="dry", dryRun=True))["response"]
    assert dry["allowed"] is False and dry["uid"] == "dry"
    assert {k: v for k, v in dry.items() if k != "uid"} == {k: v for k, v in real.items() if k != "uid"}
    assert "KV404" in dry["status"]["message"]
    metrics = client.get("/metrics").text
    assert 'kvlint_webhook_reviews_total{dry_run="true",outcome="findings",verdict="denied"}' in metrics


@pytest.mark.parametrize(
    "body, needle",
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "got a JSON array"),
        (json.dumps({"apiVersion": "admission.k8s.io/v2", "kind": "AdmissionReview"}).encode(), "apiVersion"),
        (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}).encode(), "no request"),
        (json.dumps(review({"kind": "Pod"}, uid="")).encode(), "request.uid"),
        (json.dumps(review(None, object=[1, 2])).encode(), "request.object"),
        (b"\xff\xfe\x00garbage", "not valid JSON"),
        # a uid with a lone surrogate (JSON "\ud800", as json.dumps writes it) cannot be echoed: HTTP 500 before
        (json.dumps(review({"kind": "Pod"}, uid="\ud800")).encode(), "lone surrogate"),
        (json.dumps(review(None, uid="7c9d1f2e-\udfff", operation="DELETE")).encode(), "lone surrogate"),
    ],
)
def test_malformed_reviews_get_400(server: Any, body: bytes, needle: str) -> None:
    _, client, _ = server
    r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert needle in r.json()["error"]
    assert client.get("/healthz").status_code == 200


def test_an_operation_the_api_server_never_sends_is_refused_not_admitted(server: Any) -> None:
    """admission.k8s.io/v1 names four operations (CREATE, UPDATE, DELETE, CONNECT: k8s.io/api admission/v1
    types.go, ``Operation``). A review with any other (``PATCH``, ``create`` in lower case, ``CREATE `` with a
    space, a new operation of a later API server) is HTTP 400, so the API server applies the webhook's
    failurePolicy to it as to any failed call; before, it was answered ``allowed`` unreviewed, whatever the
    object held (here a Deployment kvlint denies on CREATE). DELETE and CONNECT are still allowed unreviewed."""
    _, client, _ = server
    bad = workload_object(B01)
    assert post(client, review(bad))["response"]["allowed"] is False  # what CREATE answers
    for operation in ("PATCH", "create", "CREATE ", "Update", "FROB", "CREATE\u0000"):
        r = client.post("/validate", json=review(bad, operation=operation))
        assert r.status_code == 400, (operation, r.text[:300])
        assert "request.operation" in r.json()["error"] and "CONNECT" in r.json()["error"], r.text[:300]
    for operation in ("DELETE", "CONNECT"):
        resp = post(client, review(None, operation=operation, oldObject=bad))["response"]
        assert resp["allowed"] is True, (operation, resp)


@pytest.mark.parametrize(
    "where",
    ["apiVersion", "kind", "object", "body"],
)
def test_a_malformed_review_quotes_a_bounded_head_of_what_it_sent(
    server: Any, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A wrong ``apiVersion`` or ``kind`` of a megabyte (or a body or ``request.object`` that is one long string)
    (here 200,000 characters) is refused with HTTP 400 naming what came, in an answer and a log line of a few hundred characters: both
    quoted the value whole (a 1 MB answer and a 1 MB log line per request)."""
    _, client, _ = server
    huge = "v" * 200_000  # below the module server's --max-request-bytes (MAX_BYTES)
    if where == "body":
        body = json.dumps(huge).encode()
    else:
        doc = review(workload_object(B09))
        if where == "object":
            doc["request"]["object"] = huge
        else:
            doc[where] = huge
        body = json.dumps(doc).encode()
    with caplog.at_level(logging.WARNING, logger="kvlint.webhook"):
        r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert len(r.content) < 1024, len(r.content)
    assert "'vvvvvvvv" in error and "200,000 characters" in error, error
    logged = [
        getattr(rec, "fields", {}).get("error", "")
        for rec in caplog.records
        if rec.getMessage() == "bad request"
    ]
    assert logged and all(len(text) < 1024 for text in logged), [len(t) for t in logged]
    assert client.get("/healthz").status_code == 200


def test_surrogates_outside_the_uid_are_answered_as_valid_json(server: Any) -> None:
    """A uid with a surrogate pair (an emoji, JSON "\ud83d\ude00") is a valid string: echoed, in UTF-8. Lone
    surrogates elsewhere in a review (the name, the namespace) reach the answer only escaped: still a
    valid UTF-8 JSON AdmissionReview (the deny message shows them as ``\\ud800``)."""
    _, client, _ = server
    body = json.dumps(review(None, uid="uid-\U0001f600", operation="DELETE")).encode()
    assert b"\\ud83d\\ude00" in body
    r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200 and "uid-\U0001f600".encode() in r.content
    assert r.json()["response"] == {"uid": "uid-\U0001f600", "allowed": True}
    obj = workload_object(B01)
    obj["metadata"]["name"] = "chat-\ud800"
    body = json.dumps(review(obj, uid="uid-lone", namespace="serving-\udfff")).encode()
    r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200
    r.content.decode("utf-8")  # strict: no surrogate was written raw
    resp = r.json()["response"]
    assert resp["uid"] == "uid-lone" and resp["allowed"] is False
    assert "chat-\\ud800" in resp["status"]["message"] and "serving-\\udfff" in resp["status"]["message"]


def test_an_integer_of_5000_digits_is_reviewed_as_the_loader_reads_it(server: Any) -> None:
    """Python's JSON decoder refuses an integer of more than 4,300 digits; such a review was HTTP 400 (the API
    server then applies the failurePolicy). It is answered: the number is kept as its text, as kvlint's loader
    keeps every number longer than 100 characters, so the answer is the one for the object holding that text."""
    _, client, _ = server
    digits = "9" * 5000
    obj = workload_object(B01)
    obj["spec"]["replicas"] = 1
    body = json.dumps(review(obj)).replace('"replicas": 1', '"replicas": ' + digits, 1).encode()
    assert digits.encode() in body and b'"' + digits.encode() not in body
    assert parse_review(body).object["spec"]["replicas"] == digits
    text = json.dumps(obj, indent=1).replace('"replicas": 1', '"replicas": ' + digits, 1)
    assert load_text(text, "x.json").documents[0].data["spec"]["replicas"] == digits  # the loader's reading
    r = client.post("/validate", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    obj["spec"]["replicas"] = digits
    assert r.json()["response"] == post(client, review(obj))["response"]
    assert r.json()["response"]["allowed"] is False
    assert "KV103" in r.json()["response"]["status"]["message"]
    bad = body.replace(digits.encode(), digits.encode() + b"x", 1)  # still not JSON: still a 400
    r = client.post("/validate", content=bad, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]


def test_wrong_content_type_415(server: Any) -> None:
    _, client, _ = server
    r = client.post("/validate", content=b"apiVersion: x", headers={"Content-Type": "application/yaml"})
    assert r.status_code == 415


def test_oversized_review_is_answered_per_the_failure_mode_and_other_oversized_bodies_get_413(
    server: Any,
) -> None:
    """A review body over ``max_request_bytes`` got HTTP 413, declared or streamed, and the API server applied
    ``failurePolicy``: under ``Ignore`` an UPDATE of two large objects was admitted unchecked with no warning
    whatever ``--failure-mode`` said. Its head names the request's uid, as the API server writes it: the body
    is read to its end without being held and the review answered per the failure mode (``open`` here: allowed,
    with a warning saying it was not checked), on a connection that stays open. A body whose head names no
    uid (not an API server's) still gets 413."""
    _, client, app = server
    registry = app.state.webhook.metrics.registry

    def counted(outcome: str) -> float:
        labels = {"verdict": "allowed", "outcome": outcome, "dry_run": "false"}
        return registry.get_sample_value("kvlint_webhook_reviews_total", labels) or 0.0

    def bad(reason: str) -> float:
        return registry.get_sample_value("kvlint_webhook_bad_requests_total", {"reason": reason}) or 0.0

    obj = workload_object(B01)  # denied when linted (KV103)
    obj["metadata"]["annotations"] = {"padding": "x" * (MAX_BYTES + 10)}
    body = json.dumps(review(obj, uid="too-large")).encode()
    before, refused = counted("too_large"), bad("too_large")

    def chunks() -> Any:  # no Content-Length: chunked transfer encoding
        for i in range(0, len(body), 65536):
            yield body[i : i + 65536]

    for content in (body, chunks()):
        r = client.post("/validate", content=content, headers={"Content-Type": "application/json"})
        assert r.status_code == 200 and r.headers.get("connection") != "close"
        resp = r.json()["response"]
        assert resp["uid"] == "too-large" and resp["allowed"] is True
        (warning,) = resp["warnings"]
        assert f"exceeds the limit of {MAX_BYTES} bytes" in warning and "not checked" in warning
        assert resp["auditAnnotations"] == {"verdict": "unchecked"}
    assert counted("too_large") == before + 2 and bad("too_large") == refused
    # the same connection answers the next review
    assert post(client, review(workload_object(B01), uid="after"))["response"]["allowed"] is False
    anonymous = json.dumps({"padding": "x" * (MAX_BYTES + 10)}).encode()
    r = client.post("/validate", content=anonymous, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and str(MAX_BYTES) in r.json()["error"]
    assert bad("too_large") == refused + 1


def _raw_answer(port: int, cafile: str, request: bytes) -> bytes:
    """The raw HTTP answer to ``request`` sent on a new TLS connection, without its ``date`` header (read
    until its ``content-length`` bytes of body are in or the server closes)."""
    ctx = ssl.create_default_context(cafile=cafile)
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s,
    ):
        s.sendall(request)
        got = b""
        while True:
            head, sep, body = got.partition(b"\r\n\r\n")
            lengths = [int(h[15:]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")]
            if sep and lengths and len(body) >= lengths[0]:
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    lines = head.split(b"\r\n")
    return b"\r\n".join(h for h in lines if not h.lower().startswith(b"date:")) + sep + body


def test_content_length_with_leading_zeros_is_its_number(server: Any, tls: dict[str, Any]) -> None:
    """``Content-Length`` is ``1*DIGIT`` (RFC 9110 section 8.6): leading zeros are allowed, and llhttp (uvicorn's
    httptools parser) reads a length of any number of them as the number. The answer is byte for byte the
    one without them (it was 413 from 20 digits on); a declared length of 20 significant digits (within
    llhttp's 64 bits) is refused with the number declared (the 413 said ``max_request_bytes + 1`` bytes)."""
    srv, _, _ = server
    body = json.dumps(review(workload_object(B01), uid="zeros")).encode()

    def request(length: bytes) -> bytes:
        head = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
        return head + length + b"\r\n\r\n" + body

    plain = _raw_answer(srv.port, tls["ca.crt"], request(b"%d" % len(body)))
    assert plain.startswith(b"HTTP/1.1 200 OK\r\n") and b'"allowed":false' in plain
    for zeros in (1, 19, 40, 5000):
        assert _raw_answer(srv.port, tls["ca.crt"], request(b"0" * zeros + b"%d" % len(body))) == plain
    huge = b"18446744073709551615"
    refused = _raw_answer(srv.port, tls["ca.crt"], request(b"000" + huge))
    assert refused.startswith(b"HTTP/1.1 413 ")
    assert json.loads(refused.partition(b"\r\n\r\n")[2]) == {
        "error": f"request body of {huge.decode()} bytes exceeds the limit of {MAX_BYTES} bytes"
    }


def test_slow_review_bounded_fail_open(server: Any) -> None:
    """A review whose pipeline runs 3x the budget is answered at the budget, per the failure mode, and the worker
    still linting is killed. Shown by events, not by the wall time of the answer (``elapsed < 2.5 x budget``
    failed on a loaded machine): the answer says the budget ran out, and the worker was killed for it (had
    the server waited for the pipeline, nothing would have been killed). Counted from before the review: the
    module's server is shared, so a total would depend on which tests ran first."""
    _, client, app = server
    registry = app.state.webhook.metrics.registry

    def value(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    before = (
        value("kvlint_webhook_budget_exceeded_total", stage="lint"),
        value("kvlint_webhook_worker_restarts_total", reason="timeout"),
        value("kvlint_webhook_reviews_total", verdict="allowed", outcome="timeout", dry_run="false"),
    )
    obj = workload_object(B01)
    obj["metadata"]["name"] = "slow-llama"
    resp = post(client, review(obj, uid="slow"))["response"]
    assert resp["allowed"] is True and resp["uid"] == "slow"
    assert "not checked" in resp["warnings"][0] and "failure mode open" in resp["warnings"][0]
    assert f"review not finished within {BUDGET_S:g} s" in resp["warnings"][0]
    # the budget is enforced: the worker still linting was killed and replaced (issue 14), not left running
    assert value("kvlint_webhook_budget_exceeded_total", stage="lint") == before[0] + 1
    assert value("kvlint_webhook_worker_restarts_total", reason="timeout") == before[1] + 1
    assert value("kvlint_webhook_reviews_total", verdict="allowed", outcome="timeout", dry_run="false") == (
        before[2] + 1
    )
    pool = app.state.webhook.pool
    deadline = time.monotonic() + 30
    while (pool.alive, pool.busy) != (2, 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pool.alive == 2 and pool.busy == 0
    resp = post(client, review(workload_object(B01)))["response"]  # the replacement answers
    assert resp["allowed"] is False and "KV103" in resp["status"]["message"]


def test_fail_closed_and_warn_mode(tls: dict[str, Any]) -> None:
    srv, _ = _start(tls, failure_mode="closed", mode="warn")
    try:
        with httpx.Client(
            base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=10
        ) as client:
            slow = workload_object(B02)
            slow["metadata"]["name"] = "slow-qwen"
            resp = post(client, review(slow))["response"]
            assert resp["allowed"] is False and "failure mode closed" in resp["status"]["message"]
            # warn mode: the same object, in time, is allowed and its error becomes a warning
            resp = post(client, review(workload_object(B02)))["response"]
            assert resp["allowed"] is True
            assert any(w.startswith("KV404 (error, not enforced)") for w in resp["warnings"])
    finally:
        srv.stop()


def test_skipped_reviews(server: Any) -> None:
    _, client, _ = server
    bad = workload_object(B01)
    old = json.loads(json.dumps(bad))
    new = json.loads(json.dumps(bad))
    new["metadata"]["annotations"] = {"deployment.kubernetes.io/revision": "2"}
    new["status"] = {"replicas": 1}
    for req in (
        review(
            new, operation="UPDATE", oldObject=old
        ),  # metadata/status only: controllers must not be blocked
        review(bad, subResource="status"),
        review(bad, namespace="kube-system"),
        review(None, operation="DELETE", oldObject=bad),
    ):
        resp = post(client, req)["response"]
        assert resp == {"uid": req["request"]["uid"], "allowed": True}
    scaled = json.loads(json.dumps(new))
    scaled["spec"]["replicas"] = (
        3  # a scale-up is reviewed (KV106 counts replicas); its error is the old object's
    )
    resp = post(client, review(scaled, operation="UPDATE", oldObject=old))["response"]
    assert resp["allowed"] is True and any(
        w.startswith("KV103 (error, pre-existing)") for w in resp["warnings"]
    )
    lowered = json.loads(json.dumps(scaled))
    lowered["spec"]["replicas"] = 2  # a scale-down is not reviewed
    resp = post(client, review(lowered, operation="UPDATE", oldObject=scaled))["response"]
    assert resp["allowed"] is True and "warnings" not in resp
    changed = json.loads(json.dumps(new))
    changed["spec"]["template"]["spec"]["containers"][0]["args"].append("--enforce-eager")
    resp = post(client, review(changed, operation="UPDATE", oldObject=old))["response"]
    # reviewed (a skipped review has no warnings): its error was the old object's, so admitted with it named
    assert resp["allowed"] is True and any(
        w.startswith("KV103 (error, pre-existing)") for w in resp["warnings"]
    )


def test_pausing_or_suspending_a_workload_kvlint_finds_an_error_in_is_not_denied(server: Any) -> None:
    """``kubectl rollout pause`` of a Deployment, ``kubectl patch cronjob --suspend`` and Kueue starting a queued
    Job (``suspend: false``) change only whether the workload runs, which no rule reads. An object kvlint finds
    an error in (created before kvlint, in warn or audit mode, or admitted unchecked past its budget) could not
    be paused or suspended, nor a queued Job started, in enforce mode: each UPDATE was reviewed and denied. A
    change to the pod template in the same objects is still reviewed."""
    from kvlint.webhook.worker import lint_object

    _, client, _ = server
    deployment = workload_object(B01)
    template = deployment["spec"]["template"]
    job_template = json.loads(json.dumps(template))
    job_template["spec"]["restartPolicy"] = "Never"
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "eval"},
        "spec": {"template": job_template},
    }
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": job_template}}},
    }
    cases = [  # (object before, its key holding the switch, value before, value after, requester)
        (deployment, "paused", None, True, "alice"),
        (job, "suspend", True, False, "system:serviceaccount:kueue-system:kueue-controller-manager"),
        (cron, "suspend", False, True, "alice"),
    ]

    def findings(obj: dict[str, Any]) -> list[tuple[str, str]]:
        res = lint_object(obj, "<admission test>.json", webhook_options())
        return sorted((d.rule, d.message) for d in res.diagnostics)

    for obj, key, before, after, user in cases:
        old = json.loads(json.dumps(obj))
        if before is not None:
            old["spec"][key] = before
        new = json.loads(json.dumps(old))
        new["spec"][key] = after
        assert any(rule == "KV103" for rule, _ in findings(new)) and findings(new) == findings(old)
        req = review(new, operation="UPDATE", oldObject=old, userInfo={"username": user})
        assert post(client, req)["response"] == {"uid": req["request"]["uid"], "allowed": True}, obj["kind"]
        changed = json.loads(json.dumps(new))
        spec = changed["spec"]["jobTemplate"]["spec"] if obj["kind"] == "CronJob" else changed["spec"]
        spec["template"]["spec"]["containers"][0]["args"].append("--enforce-eager")
        resp = post(client, review(changed, operation="UPDATE", oldObject=old))["response"]
        assert resp["allowed"] is True, obj["kind"]  # reviewed: the error it already had is named
        assert any(w.startswith("KV103 (error, pre-existing)") for w in resp["warnings"]), obj["kind"]


def test_an_object_kvlint_could_not_review_does_not_let_an_update_through(server: Any) -> None:
    """An object too large to review (more containers than ``--max-review-size``) or nested too deep gets one
    KV001 error and nothing in it is analysed. An UPDATE of such an object that keeps it so was admitted as
    "pre-existing" whatever its new content: the error says nothing of it. It now denies; a reviewable object's
    own pre-existing error still does not."""
    from kvlint.webhook.request_options import MAX_REVIEW_SIZE

    _, client, _ = server
    ok = workload_object(B09)

    def many(obj: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(obj))
        (c,) = out["spec"]["template"]["spec"]["containers"]
        out["spec"]["template"]["spec"]["containers"] = [
            dict(c, name=f"c{i}") for i in range(MAX_REVIEW_SIZE + 1)
        ]
        return out

    def deep(obj: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(obj))
        node: Any = "x"
        for _ in range(300):
            node = {"a": node}
        out["spec"]["extra"] = node
        return out

    for shape in (many, deep):
        old = shape(ok)
        new = shape(_with_args(ok, "--max-model-len", "10000000"))
        resp = post(client, review(new, operation="UPDATE", oldObject=old))["response"]
        assert resp["allowed"] is False, shape.__name__
        assert "KV001" in resp["status"]["message"] and "pre-existing" not in json.dumps(resp), resp


def _with_args(obj: dict[str, Any], *args: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["spec"]["template"]["spec"]["containers"][0]["args"].extend(args)
    return out


def _with_env(obj: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["spec"]["template"]["spec"]["containers"][0].setdefault("env", []).append(
        {"name": name, "value": value}
    )
    return out


def test_an_update_is_denied_only_for_errors_the_old_object_did_not_have(server: Any) -> None:
    """An object that already has an error (created before kvlint, or in warn mode) got every UPDATE kvlint
    reads denied in enforce mode, even an unrelated env var. As Kyverno's ``allowExistingViolations`` (its
    default), the old object's errors are named as warnings and only a new error denies; the deny message
    lists the new error, not the old one."""
    from kvlint.webhook.worker import lint_object

    _, client, app = server
    assert app.state.webhook.settings.allow_existing_violations is True  # the default
    old = workload_object(B01)
    old_errors = {
        d.rule for d in lint_object(old, "<t>.json", webhook_options()).diagnostics if d.severity == "error"
    }
    assert old_errors == {"KV103"}
    created = post(client, review(_with_env(old, "HF_HUB_OFFLINE", "1")))["response"]
    assert created["allowed"] is False and "KV103" in created["status"]["message"]  # a CREATE: as before
    env = _with_env(old, "HF_HUB_OFFLINE", "1")
    resp = post(client, review(env, operation="UPDATE", oldObject=old))["response"]
    assert resp["allowed"] is True
    assert any(w.startswith("KV103 (error, pre-existing) [container vllm]:") for w in resp["warnings"])
    assert resp["auditAnnotations"] == {"verdict": "would-deny", "rules": "KV103,KV202"}
    # a new error (a context above the model's) denies, and only it is listed
    longer = _with_args(old, "--max-model-len", "100000000")
    resp = post(client, review(longer, operation="UPDATE", oldObject=old))["response"]
    assert resp["allowed"] is False
    assert "KV201" in resp["status"]["message"] and "KV103" not in resp["status"]["message"]
    # the reverse: an object without the error made to have it is denied
    fixed = _with_args(old, "--max-model-len", "8192")
    fixed_errors = [
        d for d in lint_object(fixed, "<t>.json", webhook_options()).diagnostics if d.severity == "error"
    ]
    assert fixed_errors == []
    resp = post(client, review(old, operation="UPDATE", oldObject=fixed))["response"]
    assert resp["allowed"] is False and "KV103" in resp["status"]["message"]


def test_an_old_object_whose_lint_runs_out_of_budget_is_counted_and_logged_apart(server: Any) -> None:
    """An UPDATE whose ``oldObject`` could not be linted within the budget left is judged on its own (every
    error denies). It was counted as any denial (``outcome="findings"``) with nothing in the metrics telling
    it from one whose old object was linted: ``kvlint_webhook_old_object_lints_total{result}`` counts how the
    old object's lint ended, and the review's log line says it (``old_object``)."""
    _, client, app = server
    registry = app.state.webhook.metrics.registry
    logger = app.state.webhook.logger

    def count(result: str) -> float:
        return registry.get_sample_value("kvlint_webhook_old_object_lints_total", {"result": result}) or 0.0

    def denials() -> float:
        labels = {"verdict": "denied", "outcome": "findings", "dry_run": "false"}
        return registry.get_sample_value("kvlint_webhook_reviews_total", labels) or 0.0

    old = workload_object(B01)  # KV103, also in the new object
    slow_old = json.loads(json.dumps(old))
    slow_old["metadata"]["name"] = "slow-" + old["metadata"]["name"]  # slow_pipeline: 3x the budget late
    env = _with_env(old, "HF_HUB_OFFLINE", "1")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        before = {r: count(r) for r in ("linted", "timeout", "internal_error")}
        resp = post(client, review(env, uid="old-linted", operation="UPDATE", oldObject=old))["response"]
        assert resp["allowed"] is True  # the old object's error: admitted, named
        assert count("linted") == before["linted"] + 1 and count("timeout") == before["timeout"]
        denied = denials()
        resp = post(client, review(env, uid="old-slow", operation="UPDATE", oldObject=slow_old))["response"]
        assert resp["allowed"] is False and "KV103" in resp["status"]["message"]  # every error denies
        assert count("timeout") == before["timeout"] + 1 and count("linted") == before["linted"] + 1
        assert count("internal_error") == before["internal_error"]
        assert denials() == denied + 1  # still a denial for its findings, not a failure-mode answer
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    lines = [json.loads(x) for x in stream.getvalue().splitlines()]
    reviews = {x["uid"]: x for x in lines if x.get("message") == "review"}
    assert reviews["old-linted"]["old_object"] == "linted"
    assert reviews["old-slow"]["old_object"] == "timeout" and reviews["old-slow"]["allowed"] is False
    assert any(
        x.get("old_object") == "timeout" and x.get("uid") == "old-slow"
        for x in lines
        if x is not reviews["old-slow"]
    )
    created = post(client, review(old, uid="created"))["response"]  # a CREATE lints no old object
    assert created["allowed"] is False and count("linted") == before["linted"] + 1


def test_existing_violations_deny_when_the_setting_is_off(tls: dict[str, Any]) -> None:
    """``allow_existing_violations=False`` (``--allow-existing-violations=false``): an UPDATE is judged as a
    CREATE, the error the old object had denies it."""
    srv, _ = _start(tls, allow_existing_violations=False)
    try:
        with httpx.Client(
            base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=10
        ) as client:
            old = workload_object(B01)
            env = _with_env(old, "HF_HUB_OFFLINE", "1")
            resp = post(client, review(env, operation="UPDATE", oldObject=old))["response"]
            assert resp["allowed"] is False and "KV103" in resp["status"]["message"]
    finally:
        srv.stop()


def test_the_existing_violations_flag_reaches_the_settings() -> None:
    from kvlint.webhook.cli import build_settings

    assert build_settings().allow_existing_violations is True
    assert build_settings(allow_existing_violations=True).allow_existing_violations is True
    assert build_settings(allow_existing_violations=False).allow_existing_violations is False


def test_a_kubelets_mirror_pod_is_not_denied(server: Any) -> None:
    """The kubelet runs a static pod from its manifest directory whatever the API server answers and creates its
    mirror pod (annotation ``kubernetes.io/config.mirror``, owner the Node) as ``system:node:<node>``. Reviewed,
    a static vLLM pod kvlint finds an error in had its mirror pod denied: the pod ran all the same, hidden from
    the API and its GPUs from the scheduler, and the kubelet retried for ever. The same Pod from a user, or
    from a kubelet without the annotation, is reviewed."""
    _, client, _ = server
    spec = workload_object(B01)["spec"]["template"]["spec"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "vllm-gpu-node-1",
            "annotations": {"kubernetes.io/config.mirror": "6a2e1b0c", "kubernetes.io/config.source": "file"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "gpu-node-1", "uid": "n-1", "controller": True}
            ],
        },
        "spec": {**spec, "nodeName": "gpu-node-1"},
    }
    req = review(pod, userInfo={"username": "system:node:gpu-node-1", "groups": ["system:nodes"]})
    assert post(client, req)["response"] == {"uid": req["request"]["uid"], "allowed": True}
    resp = post(client, review(pod))["response"]  # a user's Pod with the annotation
    assert resp["allowed"] is False and "KV103" in resp["status"]["message"]
    plain = json.loads(json.dumps(pod))
    del plain["metadata"]["annotations"]["kubernetes.io/config.mirror"]
    resp = post(client, review(plain, userInfo={"username": "system:node:gpu-node-1"}))["response"]
    assert resp["allowed"] is False


KAITO_R1 = (
    ROOT
    / "fixtures"
    / "collected"
    / ("kaito-project__kaito__examples__inference__kaito_workspace_deepseek_r1.yaml")
)


def _on_mig_slice(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a KAITO Workspace) on a 1g.5gb MIG slice (A100 40GB) of bring-your-own nodes instead of its VM size: KAITO does
    not spread a preset over MIG slices (its node estimator refuses one that needs more than one), so DeepSeek-R1
    does not fit there, as kvlint reports (KV101). On its H100 VM size KAITO spreads it over nodes
    (:func:`kvlint.workloads.kaito.kaito_node_count`) and it fits."""
    out = json.loads(json.dumps(obj))
    out["resource"] = {
        "partition": {"mode": "mig", "profile": "1g.5gb"},
        "labelSelector": out["resource"]["labelSelector"],
    }
    return out


def _on_transformers(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a KAITO Workspace) with ``kaito.sh/runtime: transformers``: its preset runs on KAITO's Hugging
    Face Transformers runtime, which kvlint does not size (``kvlint.workloads.kaito``)."""
    out = json.loads(json.dumps(obj))
    out["metadata"].setdefault("annotations", {})["kaito.sh/runtime"] = "transformers"
    return out


def test_an_update_of_an_annotation_kvlint_reads_is_reviewed(server: Any) -> None:
    """An UPDATE whose only change is metadata is admitted unreviewed, but for what kvlint reads there. A KAITO
    Workspace whose preset does not fit its GPUs, created with ``kaito.sh/runtime: transformers`` (not sized)
    and then updated to take the annotation off (the preset now runs on vLLM), was admitted as "metadata only",
    while the same Workspace created so is denied."""
    _, client, _ = server
    vllm = _on_mig_slice(workload_object(KAITO_R1))
    transformers = _on_transformers(vllm)
    assert post(client, review(transformers))["response"]["allowed"] is True
    created = post(client, review(vllm))["response"]
    assert created["allowed"] is False and "KV101" in created["status"]["message"]
    updated = post(client, review(vllm, operation="UPDATE", oldObject=transformers))["response"]
    assert updated["allowed"] is False
    assert updated["status"]["message"] == created["status"]["message"]


def _metadata_annotations(obj: Any, keep: Any) -> Any:
    """``obj`` with each ``metadata.annotations`` mapping, at any depth, replaced by ``keep(metadata)``."""
    if isinstance(obj, dict):
        out = {k: _metadata_annotations(v, keep) for k, v in obj.items()}
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            out["metadata"] = {**out["metadata"], "annotations": keep(meta)}
        return out
    if isinstance(obj, list):
        return [_metadata_annotations(v, keep) for v in obj]
    return obj


def test_the_annotations_an_update_may_change_unreviewed_are_ones_kvlint_does_not_read() -> None:
    """Every workload object of the shared corpus and the fixtures that carries annotations, and a KAITO Workspace
    on ``kaito.sh/runtime: transformers``, gets the same findings without the annotations that
    :func:`~kvlint.webhook.review.lint_relevant` leaves out (those an UPDATE may change without a review) as
    with them: nothing kvlint reads is among them."""
    from kvlint.webhook.review import lint_relevant
    from kvlint.webhook.worker import lint_object
    from kvlint.workloads import find_workloads

    def kept(meta: dict[str, Any]) -> Any:
        return lint_relevant({"metadata": meta})["metadata"]["annotations"]

    paths = sorted((ROOT.parent / "shared" / "corpus" / "manifests").glob("*")) + sorted(
        p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".yaml", ".yml")
    )
    objects: dict[str, dict[str, Any]] = {"kaito-runtime": _on_transformers(workload_object(KAITO_R1))}
    for path in paths:
        try:
            loaded = load_text(path.read_bytes(), str(path))
        except Exception:  # the fixtures of bad input
            continue
        for w in find_workloads(loaded.documents):
            obj = json.loads(json.dumps(w.doc.data))
            if _metadata_annotations(obj, kept) != obj:
                objects[f"{path.name}:{w.doc.loc.line}"] = obj
    assert len(objects) > 20  # the corpus's KServe, Knative, KAITO, Dynamo... objects carry annotations

    def findings(obj: dict[str, Any]) -> list[tuple[str, str, str, str]]:
        res = lint_object(obj, "<admission test>.json", webhook_options())
        return sorted((d.rule, d.severity, d.message, str(d.container)) for d in res.diagnostics)

    differ = [
        name for name, obj in objects.items() if findings(obj) != findings(_metadata_annotations(obj, kept))
    ]
    assert differ == []


def test_probes_and_metrics(server: Any) -> None:
    _, client, _ = server
    post(client, review(workload_object(B01)))
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").text == "ready\n"
    m = client.get("/metrics").text
    assert 'kvlint_webhook_findings_total{rule="KV103",severity="error"}' in m
    assert 'kvlint_webhook_reviews_total{dry_run="false",outcome="findings",verdict="denied"}' in m
    assert "kvlint_webhook_review_duration_seconds_bucket" in m


def test_client_gone_mid_review_leaks_no_worker(server: Any, tls: dict[str, Any]) -> None:
    """Clients that send a review and hang up before the answer: every review still ends, each worker is
    back idle (none busy, none replaced), and the next review is answered."""
    srv, client, app = server
    pool = app.state.webhook.pool
    restarts = pool.restarts
    registry = app.state.webhook.metrics.registry

    def ended() -> float:
        """Reviews answered (to nobody, here) plus requests whose client left before its body was in."""
        answered = registry.get_sample_value("kvlint_webhook_review_duration_seconds_count") or 0.0
        gone = registry.get_sample_value(
            "kvlint_webhook_connections_closed_total", {"listener": "review", "reason": "client_gone"}
        )
        return answered + (gone or 0.0)

    before = ended()
    body = json.dumps(review(workload_object(B01), uid="gone")).encode()
    ctx = ssl.create_default_context(cafile=tls["ca.crt"])
    for _ in range(4):
        with (
            socket.create_connection(("127.0.0.1", srv.port)) as raw,
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s,
        ):
            s.sendall(
                b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
    # the pool is idle before the server has read the connections too: wait until each of the four requests
    # has ended (answered, or counted as gone) and the pool is idle (a leaked worker would stay busy for good);
    # a wait for the pool to stay idle for half a second could end before a stalled server read a request
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if ended() >= before + 4 and (pool.busy, pool.idle) == (0, 2):
            break
        time.sleep(0.02)
    assert ended() == before + 4
    assert (pool.busy, pool.idle, pool.waiting, pool.restarts) == (0, 2, 0, restarts)
    assert "kvlint_webhook_workers_busy 0.0" in client.get("/metrics").text
    assert post(client, review(workload_object(B01)))["response"]["allowed"] is False


def test_client_gone_mid_body_is_counted_not_an_application_error(
    server: Any, tls: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Clients that hang up half way through their body (or right after sending it, before it was read):
    counted as ``client_gone``, no slot or worker held, the next review answered. Each used to end in an
    unhandled ClientDisconnect: an ERROR record with a traceback ("Exception in ASGI application") per
    connection, which any client reaching the port could repeat at will."""
    srv, client, app = server
    state = app.state.webhook
    body = json.dumps(review(workload_object(B01), uid="half")).encode()
    request = (
        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
    )
    ctx = ssl.create_default_context(cafile=tls["ca.crt"])
    before = state.metrics.connections_closed.labels("review", "client_gone")._value.get()
    with caplog.at_level(logging.WARNING):
        for _ in range(10):
            with (
                socket.create_connection(("127.0.0.1", srv.port)) as raw,
                ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s,
            ):
                s.sendall(request + body[: len(body) // 2])
                time.sleep(0.02)  # the headers are in and the body is being read
        deadline = time.monotonic() + 30
        counted = before
        while counted < before + 10 and time.monotonic() < deadline:
            counted = state.metrics.connections_closed.labels("review", "client_gone")._value.get()
            time.sleep(0.02)
        assert counted == before + 10
        resp = post(client, review(workload_object(B01)))["response"]
        assert resp["allowed"] is False and "KV103" in resp["status"]["message"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    assert state.inflight is not None and state.inflight._value == state.settings.inflight_slots
    assert (state.pool.busy, state.pool.idle, state.pool.waiting) == (0, 2, 0)


def _gone(pid: int, seconds: float = 30.0) -> None:
    """Wait until process ``pid`` has exited (gone or a zombie: its pipes are closed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except OSError:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} still running")


def _settled(pool: Any, killed: set[int], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (pool.alive, pool.idle, pool.busy) == (2, 2, 0) and not killed & set(pool.pids):
            return
        time.sleep(0.02)
    raise AssertionError(
        f"pool not whole: {pool.alive} alive, {pool.idle} idle, {pool.busy} busy {pool.pids}"
    )


def _start_roomy(tls: dict[str, Any], pipeline: Any = None) -> tuple[ServerThread, Any]:
    """A server with a 5 s budget: a replacement worker's first review (which imports the pipeline's module)
    is not what these tests time."""
    s = WebhookSettings(timeout_seconds=5.0, max_request_bytes=MAX_BYTES, workers=2)
    app = create_app(s, pipeline=pipeline)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    return ServerThread(app, reloader).start(), app


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_worker_killed_mid_review_answers_per_failure_mode_and_is_replaced(tls: dict[str, Any]) -> None:
    """SIGKILL of the worker linting a review (the kernel's OOM killer, an operator): that review is answered
    per the failure mode (internal error), the worker is replaced, and the next review is checked."""
    srv, app = _start_roomy(tls, slow_pipeline)
    try:
        pool = app.state.webhook.pool
        ctx = ssl.create_default_context(cafile=tls["ca.crt"])
        slow = workload_object(B01)
        slow["metadata"]["name"] = "slow-killed"
        with httpx.Client(base_url=srv.url, verify=ctx, timeout=10) as client:
            post(client, review(workload_object(B09)))  # a connection and a warm worker
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(1) as ex:
                answer = ex.submit(post, client, review(slow, uid="killed"))
                deadline = time.monotonic() + 30
                while pool.busy == 0 and time.monotonic() < deadline:
                    time.sleep(0.005)
                assert pool.busy == 1, "the slow review never reached a worker"
                idle = {w.pid for w in pool._idle}
                victim = next(p for p in pool.pids if p not in idle)
                os.kill(victim, signal.SIGKILL)
                resp = answer.result(timeout=30)["response"]
            assert resp["uid"] == "killed" and resp["allowed"] is True  # failure mode open
            assert "internal error (review worker died" in resp["warnings"][0]
            _settled(pool, {victim})
            m = client.get("/metrics").text
            assert 'kvlint_webhook_worker_restarts_total{reason="died"} 1.0' in m
            assert "kvlint_webhook_workers 2.0" in m and "kvlint_webhook_workers_busy 0.0" in m
            resp = post(client, review(workload_object(B01)))["response"]
            assert resp["allowed"] is False and "KV103" in resp["status"]["message"]
    finally:
        srv.stop()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_idle_worker_killed_is_replaced_before_a_review_needs_it(tls: dict[str, Any]) -> None:
    """SIGKILL of idle workers: each is noticed and replaced at once (its pipe closes), so the gauges and
    /readyz never count a dead worker and no review is handed to one. The next review was sent to the dead
    worker's pipe and answered "internal error ... not checked" (admitted unchecked in fail-open), and the
    dead worker kept counting as alive until a review happened to take it."""
    srv, app = _start_roomy(tls)
    try:
        pool = app.state.webhook.pool
        ctx = ssl.create_default_context(cafile=tls["ca.crt"])
        with httpx.Client(base_url=srv.url, verify=ctx, timeout=10) as client:
            post(client, review(workload_object(B09)))
            killed = set(pool.pids)
            assert len(killed) == 2 and pool.idle == 2
            for pid in killed:
                os.kill(pid, signal.SIGKILL)
            for pid in killed:
                _gone(pid)
            _settled(pool, killed)  # replaced without a review asking for a worker
            m = client.get("/metrics").text
            assert 'kvlint_webhook_worker_restarts_total{reason="died"} 2.0' in m
            assert "kvlint_webhook_workers 2.0" in m
            for i in range(3):
                resp = post(client, review(workload_object(B01), uid=f"after-{i}"))["response"]
                assert resp["allowed"] is False and "KV103" in resp["status"]["message"], resp
            # a worker dying while idle, and the next review right behind it: still checked
            victim = pool._idle[-1].pid  # the one the next review would take (LIFO)
            os.kill(victim, signal.SIGKILL)
            _gone(victim)
            resp = post(client, review(workload_object(B01), uid="next"))["response"]
            assert resp["allowed"] is False and "KV103" in resp["status"]["message"], resp
            _settled(pool, killed | {victim})
    finally:
        srv.stop()


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_a_stopped_worker_holds_neither_the_event_loop_nor_the_budget(tls: dict[str, Any]) -> None:
    """A worker that does not read (SIGSTOP here; a frozen cgroup, a starved process) is sent a review larger
    than its pipe holds: the rest is written as the worker reads, so the event loop goes on answering
    probes and the review is answered at its budget, per the failure mode (the worker killed and replaced).
    The server wrote the review with a blocking write: its event loop, probes and budgets included, stood
    still until the worker read again (here until the test resumed it, 8 s later)."""
    budget = 3.0  # the replacement worker's first review (it imports the pipeline) must be checked within it
    s = WebhookSettings(timeout_seconds=budget, workers=1)
    app = create_app(s)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader).start()
    pool = app.state.webhook.pool
    (victim,) = pool.pids
    try:
        ctx = ssl.create_default_context(cafile=tls["ca.crt"])
        big = workload_object(B01)
        big["metadata"]["annotations"] = {"padding": "x" * 2_000_000}  # ten times what the pipe holds
        with (
            httpx.Client(base_url=srv.url, verify=ctx, timeout=20) as client,
            httpx.Client(base_url=srv.url, verify=ctx, timeout=20) as prober,
        ):
            assert prober.get("/healthz").status_code == 200
            os.kill(victim, signal.SIGSTOP)  # resumed only when the test ends: whatever is answered meanwhile
            # was answered while the worker read nothing (a bound on the wall time of the answers, with the
            # worker resumed 8 s in, failed on a loaded machine)
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(1) as ex:
                answer = ex.submit(post, client, review(big, uid="stopped"))
                deadline = time.monotonic() + 20
                while pool.busy == 0 and not answer.done() and time.monotonic() < deadline:
                    time.sleep(0.005)  # until the review is handed to the stopped worker
                assert pool.busy == 1 or answer.done()
                assert prober.get("/healthz").status_code == 200  # the event loop answers meanwhile
                resp = answer.result(timeout=20)["response"]
            assert resp["uid"] == "stopped" and resp["allowed"] is True  # failure mode open
            assert f"review not finished within {budget:g} s" in resp["warnings"][0]
            _gone(victim)
            m = client.get("/metrics").text
            assert 'kvlint_webhook_worker_restarts_total{reason="timeout"} 1.0' in m
            resp = post(client, review(workload_object(B01), uid="after"))["response"]
            assert resp["allowed"] is False and "KV103" in resp["status"]["message"]
    finally:
        try:
            os.kill(victim, signal.SIGCONT)
        except OSError:
            pass
        srv.stop()


def _peer_serial(port: int, cafile: str) -> int:
    ctx = ssl.create_default_context(cafile=cafile)
    with (
        socket.create_connection(("127.0.0.1", port)) as raw,
        ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s,
    ):
        der = s.getpeercert(binary_form=True)
    from cryptography import x509

    assert der is not None
    return int(x509.load_der_x509_certificate(der).serial_number)


def test_tls_reload_on_file_change(tls: dict[str, Any], tmp_path: Path) -> None:
    ca = tls["ca"]
    first = ca.issue_cert("127.0.0.1")
    cert, key = str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")
    first.cert_chain_pems[0].write_to_path(cert)
    first.private_key_pem.write_to_path(key)
    app = create_app(WebhookSettings(), warm_up=False)
    reloader = make_reloader(cert, key, app.state.webhook.metrics, interval=3600)
    with ServerThread(app, reloader) as srv:
        before = _peer_serial(srv.port, tls["ca.crt"])
        assert reloader.check() is False  # unchanged files: nothing to do
        second = ca.issue_cert("127.0.0.1")
        second.cert_chain_pems[0].write_to_path(cert)
        second.private_key_pem.write_to_path(key)
        os.utime(cert, ns=(time.time_ns(), time.time_ns() + 10**9))  # coarse-mtime filesystems
        assert reloader.check() is True
        after = _peer_serial(srv.port, tls["ca.crt"])
        assert before != after
        Path(cert).write_text("not a certificate")  # a broken rotation keeps the current certificate
        assert reloader.check() is False
        assert _peer_serial(srv.port, tls["ca.crt"]) == after


def test_tls_reload_of_a_half_written_pair_keeps_serving_the_current_certificate(
    tls: dict[str, Any], tmp_path: Path
) -> None:
    """A rotation that writes the new certificate before its key, polled in between, fails to load and
    must leave the served pair alone: loading the pair into the served context dropped its private key
    (OpenSSL frees a key that does not match a newly set certificate), and every handshake failed ("no
    shared cipher") until the next good reload. Once the key follows, the new pair is served."""
    ca = tls["ca"]
    first, second = ca.issue_cert("127.0.0.1"), ca.issue_cert("127.0.0.1")
    cert, key = str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")
    first.cert_chain_pems[0].write_to_path(cert)
    first.private_key_pem.write_to_path(key)
    app = create_app(WebhookSettings(), warm_up=False)
    reloader = make_reloader(cert, key, app.state.webhook.metrics, interval=3600)
    with ServerThread(app, reloader) as srv:
        before = _peer_serial(srv.port, tls["ca.crt"])
        second.cert_chain_pems[0].write_to_path(cert)  # the certificate first ...
        os.utime(cert, ns=(time.time_ns(), time.time_ns() + 10**9))  # coarse-mtime filesystems
        assert reloader.check() is False  # ... does not match the key yet
        assert _peer_serial(srv.port, tls["ca.crt"]) == before
        second.private_key_pem.write_to_path(key)  # ... then its key
        os.utime(key, ns=(time.time_ns(), time.time_ns() + 2 * 10**9))
        assert reloader.check() is True
        from cryptography import x509

        assert before != _peer_serial(srv.port, tls["ca.crt"])
        assert _peer_serial(srv.port, tls["ca.crt"]) == int(
            x509.load_pem_x509_certificate(second.cert_chain_pems[0].bytes()).serial_number
        )


def test_modes_from_pipeline_result() -> None:
    rev = parse_review(json.dumps(review(workload_object(B01))))
    result = lint_review(rev, webhook_options())
    errors = [d.rule for d in result.diagnostics if d.severity == "error"]
    cases: list[tuple[Mode, bool]] = [("enforce", False), ("warn", True), ("audit", True)]
    for mode, allowed in cases:
        out, verdict = build_response(rev, WebhookSettings(mode=mode), result)
        assert out["response"]["allowed"] is allowed
        assert verdict.outcome == ("findings" if mode == "enforce" else "would_deny")
        warns = out["response"].get("warnings", [])
        if mode == "audit":
            assert warns == [] and out["response"]["auditAnnotations"]["verdict"] == "would-deny"
        if mode == "warn":
            assert {w.split(" ", 1)[0] for w in warns} >= set(errors)


def test_exemption_switch() -> None:
    obj = workload_object(B02)
    obj["metadata"]["annotations"] = {"kvlint.io/ignore": "KV404=shm mounted by a mutating webhook"}
    rev = parse_review(json.dumps(review(obj)))
    allowed = lint_review(rev, webhook_options(exemptions_allowed=True))
    if not hasattr(allowed, "suppressed"):
        pytest.skip("pipeline does not apply kvlint.io/ignore yet")
    assert "KV404" not in {d.rule for d in allowed.diagnostics}
    denied = lint_review(rev, webhook_options(exemptions_allowed=False))
    assert "KV404" in {d.rule for d in denied.diagnostics}
    assert build_response(rev, WebhookSettings(), denied)[0]["response"]["allowed"] is False


def test_warning_separates_the_fix_from_the_message() -> None:
    # kubectl prints each warning as one "Warning:" line; the fix followed the message with no punctuation
    # ("...the start-up fit check Fix: set --max-model-len ..."), read as one run-on sentence
    from kvlint.types import Diagnostic

    d = Diagnostic(
        "KV202", "warning", "no --max-model-len: full context", None, fix="set --max-model-len 8192"
    )
    assert format_warning(d) == "KV202: no --max-model-len: full context; fix: set --max-model-len 8192"
    assert format_warning(dataclasses.replace(d, fix="")) == "KV202: no --max-model-len: full context"


def test_warning_limits() -> None:
    from kvlint.types import Diagnostic

    long = Diagnostic("KV104", "warning", "word " * 200, None, fix="fix " * 100, container="vllm")
    w = format_warning(long)
    assert len(w) <= MAX_WARNING_CHARS and w.startswith("KV104 [container vllm]: word") and w.endswith("...")
    rev = parse_review(json.dumps(review(workload_object(B09))))

    class Result:  # 30 findings of distinct text (the API server keeps one warning of each text)
        diagnostics = [dataclasses.replace(long, container=f"vllm-{i}") for i in range(30)]

    out, _ = build_response(rev, WebhookSettings(), Result())
    warns = out["response"]["warnings"]
    assert sum(map(len, warns)) <= MAX_WARNINGS_TOTAL_CHARS
    assert "more findings not shown" in warns[-1] and len(warns) < 30


def test_warnings_of_many_findings_are_formatted_only_as_far_as_they_are_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With thousands of findings (one object of thousands of containers), the response's warnings are those
    of formatting every finding and keeping the first within :data:`MAX_WARNINGS_TOTAL_CHARS` with a count of
    the rest (restated here), in each mode, while only those kept and one more are formatted: formatting
    all 5,000 took 10 ms (enforce) and 28 ms (warn) of the event loop."""
    from kvlint.types import Diagnostic
    from kvlint.webhook import review as review_module

    def note(i: int) -> str:
        return f"finding {i}: " + "word " * (i % 37)

    errors = [
        Diagnostic("KV103", "error", note(i), None, fix="--max-model-len 8192", container=f"c{i}")
        for i in range(2500)
    ]
    warns = [Diagnostic("KV202", "warning", note(i), None, container=f"c{i}") for i in range(2500)]
    rev = parse_review(json.dumps(review(workload_object(B09))))

    class Result:
        diagnostics = [d for pair in zip(errors, warns, strict=True) for d in pair]

    def restated(texts: list[str]) -> list[str]:
        out: list[str] = []
        used = 0
        for i, text in enumerate(texts):
            if used + len(text) + (80 if i < len(texts) - 1 else 0) > MAX_WARNINGS_TOTAL_CHARS:
                left = len(texts) - i
                more = f"{left} more finding{'s' if left != 1 else ''}"
                return [*out, f"kvlint: {more} not shown; run `kvlint check` on the manifest"]
            out.append(text)
            used += len(text)
        return out

    expected = {
        "enforce": restated([format_warning(d) for d in warns]),
        "warn": restated(
            [format_warning(d, " (error, not enforced)") for d in errors] + [format_warning(d) for d in warns]
        ),
        "audit": [],
    }
    calls = []
    real = review_module.format_warning
    monkeypatch.setattr(review_module, "format_warning", lambda d, n="": calls.append(1) or real(d, n))
    for mode, want in expected.items():
        calls.clear()
        out, verdict = build_response(rev, WebhookSettings(mode=mode), Result())
        assert out["response"].get("warnings", []) == want
        # formatted: those kept, and the one that did not fit (the "N more" line stands in its place)
        assert len(calls) == len(want)
        assert not want or (2 < len(want) < 50 and "more findings not shown" in want[-1])
        assert len(verdict.errors) == len(verdict.warnings) == 2500


def test_json_logs() -> None:
    rec = logging.LogRecord("kvlint.webhook", logging.INFO, __file__, 1, "review", None, None)
    rec.fields = {"uid": "u1", "rules": ["KV103"]}
    line = json.loads(JsonFormatter().format(rec))
    assert line["message"] == "review" and line["uid"] == "u1" and line["level"] == "info"
    assert line["time"].endswith("Z")


def test_a_review_log_line_is_bounded_whatever_the_manifest_holds() -> None:
    """What the request and its object put into a review's log line is bounded (app._log_fields): a 100,000
    character name, namespace, kind and uid and 500 errors of 20,000 characters each make a line of a few
    KB, not of megabytes; a review within the bounds logs its fields as they are."""
    from kvlint.types import Diagnostic
    from kvlint.webhook import app as app_module
    from kvlint.webhook.review import Verdict

    huge = "x" * 100_000
    obj = workload_object(B01)
    obj["metadata"]["name"] = huge
    rev = parse_review(json.dumps(review(obj, uid="u" * 100_000, namespace="n" * 100_000, name=huge)))
    assert len(rev.name) == len(rev.namespace or "") == 100_000
    errors = [Diagnostic("KV103", "error", f"finding {i} " + "word " * 4000, None) for i in range(500)]
    verdict = Verdict(False, "findings", errors, [], 0, reason="controlled by Deployment/" + huge)
    fields = app_module._log_fields(rev, verdict, 0.01, "enforce")
    for key in ("uid", "operation", "kind", "namespace", "name"):
        assert len(fields[key]) <= app_module.LOG_FIELD_CHARS, key
    assert fields["name"] == huge[: app_module.LOG_FIELD_CHARS - 3] + "..."
    logged = fields["errors"]
    assert (
        len(logged) == app_module.LOG_ERRORS + 1 and logged[-1] == f"... {500 - app_module.LOG_ERRORS} more"
    )
    assert all(len(e) <= MAX_WARNING_CHARS for e in logged) and logged[0].startswith("KV103: finding 0 word")
    assert len(fields["reason"]) <= app_module.LOG_REASON_CHARS
    rec = logging.LogRecord("kvlint.webhook", logging.INFO, __file__, 1, "review", None, None)
    rec.fields = fields
    assert len(JsonFormatter().format(rec)) < 6000

    # within the bounds: the fields as the review and the verdict have them
    small = parse_review(json.dumps(review(workload_object(B01))))
    few = [Diagnostic("KV103", "error", "short message", None), Diagnostic("KV404", "error", "another", None)]
    fields = app_module._log_fields(
        small, Verdict(False, "findings", few, [], 0, reason="r"), 0.01, "enforce"
    )
    assert (fields["uid"], fields["kind"], fields["namespace"], fields["name"]) == (
        small.uid,
        small.kind,
        small.namespace,
        small.name,
    )
    assert fields["errors"] == ["KV103: short message", "KV404: another"] and fields["reason"] == "r"


def test_cli_group(tls: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    r = runner.invoke(webhook_cli.webhook, ["--help"])
    assert r.exit_code == 0 and "serve" in r.output
    r = runner.invoke(webhook_cli.webhook, ["serve"])
    assert r.exit_code == 2 and "--tls-cert" in r.output
    r = runner.invoke(
        webhook_cli.webhook, ["serve", "--tls-cert", "/nonexistent.crt", "--tls-key", "/nonexistent.key"]
    )
    assert r.exit_code == 1 and "cannot load TLS certificate /nonexistent.crt" in r.output
    # a key file that holds no PEM key (OpenSSL says only "[SSL] PEM lib"), and the key swapped with the
    # certificate: the message names the file at fault
    r = runner.invoke(webhook_cli.webhook, ["serve", "--tls-cert", tls["tls.crt"], "--tls-key", EXAMPLE])
    assert r.exit_code == 1 and f"({EXAMPLE} holds no PEM private key" in r.output, r.output
    r = runner.invoke(
        webhook_cli.webhook, ["serve", "--tls-cert", tls["tls.key"], "--tls-key", tls["tls.crt"]]
    )
    assert r.exit_code == 1 and f"({tls['tls.key']} holds no PEM certificate" in r.output, r.output
    r = runner.invoke(
        webhook_cli.webhook,
        ["serve", "--tls-cert", tls["tls.crt"], "--tls-key", tls["tls.key"], "--timeout", "0"],
    )
    assert r.exit_code == 2 and "--timeout" in r.output and "0<x<=30" in r.output
    monkeypatch.setattr(webhook_cli, "missing_server_deps", lambda: ["uvicorn"])
    r = runner.invoke(
        webhook_cli.webhook, ["serve", "--tls-cert", tls["tls.crt"], "--tls-key", tls["tls.key"]]
    )
    # kvlint runs from this checkout here (tests import it from the source tree): the extra goes into it, not a
    # release from PyPI beside it
    assert r.exit_code == 1 and "[webhook]' (kvlint runs from" in r.output and "pip install -e '" in r.output
    assert "kvlint-k8s[webhook]" not in r.output, r.output


def test_install_hint_says_what_applies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``kvlint webhook serve`` without the extra: a release installed from PyPI gets ``pip install
    'kvlint-k8s[webhook]'``, a source checkout (editable or on PYTHONPATH) ``pip install -e 'DIR[webhook]'``, with
    ``.`` in the checkout itself (ux50: a clone was told to install the release)."""
    from kvlint.webhook import INSTALL_HINT, install_hint

    site = tmp_path / "site-packages"
    (site / "kvlint").mkdir(parents=True)
    assert install_hint(str(site / "kvlint")) == INSTALL_HINT == "pip install 'kvlint-k8s[webhook]'"
    clone = tmp_path / "my clone"
    (clone / "kvlint").mkdir(parents=True)
    (clone / "pyproject.toml").write_text('[project]\nname = "kvlint-k8s"\nversion = "0.1.0"\n')
    hint = install_hint(str(clone / "kvlint"))
    assert hint.startswith(f"pip install -e '{clone}[webhook]' ("), hint
    monkeypatch.chdir(clone)
    assert install_hint(str(clone / "kvlint")).startswith(
        "pip install -e '.[webhook]' (kvlint runs from this"
    ), hint
    # another project's pyproject.toml beside a kvlint directory is not kvlint's checkout
    (clone / "pyproject.toml").write_text('[project]\nname = "kvlint"\n')
    assert install_hint(str(clone / "kvlint")) == INSTALL_HINT


def test_settings_from_flags(tmp_path: Path) -> None:
    s = webhook_cli.build_settings(mode="warn", max_request_bytes="1Mi", exemptions=False, timeout=1.5)
    assert s.mode == "warn" and s.max_request_bytes == 2**20 and s.timeout_seconds == 1.5
    assert s.options.allow_hub is False
    if hasattr(s.options, "exemptions_allowed"):
        assert s.options.exemptions_allowed is False


def test_deploy_manifests_lint_clean() -> None:
    res = run_check([str(ROOT / "deploy" / "webhook")], webhook_options())
    assert res.documents >= 6
    assert [d.as_dict() for d in res.diagnostics] == []


def test_logs_are_json_lines(server: Any) -> None:
    _, client, app = server
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = app.state.webhook.logger
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        post(client, review(workload_object(B02), uid="logged"))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    lines = [json.loads(x) for x in stream.getvalue().splitlines()]
    entry = next(x for x in lines if x.get("uid") == "logged")
    assert entry["allowed"] is False and "KV404" in entry["rules"] and entry["duration_ms"] > 0


def test_cli_module_imports_no_server_libraries() -> None:
    import subprocess
    import sys

    code = (
        "import sys, kvlint.webhook.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'starlette', 'uvicorn', 'prometheus_client'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def _tls_records_per_response(url: str, cafile: str, requests: list[bytes]) -> list[int]:
    """For each raw HTTP/1.1 request sent in turn on one TLS connection, the number of TLS records that
    carried bytes of its response (read record by record from the socket, so each is counted apart)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    ctx = ssl.create_default_context(cafile=cafile)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname=parts.hostname)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
    raw = bytearray()

    def record() -> bytes:  # one TLS record off the wire
        while len(raw) < 5 or len(raw) < 5 + int.from_bytes(raw[3:5], "big"):
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            raw.extend(chunk)
        n = 5 + int.from_bytes(raw[3:5], "big")
        out = bytes(raw[:n])
        del raw[:n]
        return out

    def flush() -> None:
        data = outgoing.read()
        if data:
            sock.sendall(data)

    try:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                flush()
                incoming.write(record())
        flush()
        counts = []
        for req in requests:
            tls.write(req)
            flush()
            got, n = b"", 0
            while True:
                incoming.write(record())
                try:
                    data = tls.read(65536)
                except ssl.SSLWantReadError:  # a record with no application data (a session ticket)
                    continue
                n += 1
                got += data
                head, sep, body = got.partition(b"\r\n\r\n")
                length = next(
                    (int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                     if k.strip().lower() == b"content-length"),
                    None,
                )  # fmt: skip
                if sep and length is not None and len(body) >= length:
                    break
            counts.append(n)
        return counts
    finally:
        sock.close()


def test_each_response_goes_out_as_one_tls_record(server: Any, tls: dict[str, Any]) -> None:
    """uvicorn writes a response's head and body apart; the listener sends them as one TLS record (one
    send, one record for the client to read), for reviews and probes alike, on a kept-alive connection."""
    srv, _, _ = server
    body = json.dumps(review(None, operation="DELETE")).encode()
    validate = (
        b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    probe = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    assert _tls_records_per_response(srv.url, tls["ca.crt"], [validate, probe, validate]) == [1, 1, 1]


def test_a_review_never_looks_for_a_chart_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The webhook lints a request-chosen object: it never asks the file system about the names in it (the
    chart search of rendered files, kvlint.render's per-run answers stay empty), even when the object is
    named like a path and carries helm's ``# Source:`` comment; a check of the same text as a file does ask."""
    from kvlint import render

    monkeypatch.chdir(tmp_path)
    obj = workload_object(B01)
    obj["metadata"]["name"] = "llm"
    obj["metadata"].setdefault("annotations", {})["note"] = "x\n# Source: llm/templates/serve.yaml\ny\n"
    render.clear_file_cache()
    result = lint_review(parse_review(json.dumps(review(obj))), webhook_options())
    assert any(d.severity == "error" for d in result.diagnostics)
    assert (render._IS_FILE, render._PLACES, render._CHART_NAMES) == ({}, {}, {})
    path = tmp_path / "out.yaml"
    path.write_text("# Source: llm/templates/serve.yaml\n" + B01.read_text(), encoding="utf-8")
    run_check([str(path)], webhook_options())
    assert render._IS_FILE and render._PLACES


def test_review_log_line_with_hostile_text_is_one_safe_line() -> None:
    """A review whose name, namespace, uid and finding message hold Unicode line breaks (NEL, U+2028, U+2029),
    C1 controls (U+009B, a terminal's CSI), DEL, a newline, ESC and a lone surrogate (a JSON request may escape
    one, but not in the uid) logs one line: ``str.splitlines`` finds one, it encodes as strict UTF-8, and a JSON reader gets back
    the fields the review logged (multi-byte text is kept as it is)."""
    from kvlint.types import Diagnostic
    from kvlint.webhook import app as app_module
    from kvlint.webhook.review import Verdict

    hostile = "a\u2028b\u2029c\x85d\ne\x1b[31mf\x9b31mg\x7fh\ud800 é 日本 \U0001f600"
    obj = workload_object(B01)
    uid = hostile.replace("\ud800", "")  # a uid with a lone surrogate is refused (ReviewError)
    rev = parse_review(json.dumps(review(obj, uid=uid, namespace=hostile, name=hostile)))
    assert rev.name == hostile
    errors = [Diagnostic("KV103", "error", "message " + hostile, None)]
    verdict = Verdict(False, "findings", errors, [], 0, reason="controlled by Deployment/" + hostile)
    fields = app_module._log_fields(rev, verdict, 0.01, "enforce")
    rec = logging.LogRecord("kvlint.webhook", logging.INFO, __file__, 1, "review", None, None)
    rec.fields = fields
    line = JsonFormatter().format(rec)
    assert len(line.splitlines()) == 1
    line.encode("utf-8")  # strict: no lone surrogate
    assert "é 日本 \U0001f600" in line
    back = json.loads(line)
    for key in ("uid", "namespace", "name", "errors", "reason"):
        assert back[key] == fields[key], key


def test_a_big_update_is_decoded_and_compared_without_garbage_collection(tls: dict[str, Any]) -> None:
    """The event loop decodes a review's body and, for an UPDATE, compares what kvlint reads of its two objects
    (``parse_review``, ``skip_reason``): a container per JSON value, no cycles. The cyclic collector ran its
    passes over them meanwhile, about a third of that time on the loop that answers every other review; over
    TLS, an UPDATE of a DynamoGraphDeployment of 2,000 components now runs neither step with a collection."""
    import gc
    import sys

    container = {
        "name": "main",
        "image": "vllm/vllm-openai:v0.11.0",
        "args": ["--model", "facebook/opt-125m"],
    }
    components = [
        {"name": f"w{i}", "type": "worker", "podTemplate": {"spec": {"containers": [container]}}}
        for i in range(2000)
    ]
    old = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": "big", "namespace": "serving"}, "spec": {"components": components}}  # fmt: skip
    new = json.loads(json.dumps(old))
    new["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["args"].append("--enforce-eager")
    settings = WebhookSettings(timeout_seconds=10.0, max_request_bytes=3 * 2**20, workers=1)
    app = create_app(settings)
    reloader = make_reloader(tls["tls.crt"], tls["tls.key"], app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader).start()
    during: list[str] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        frame = sys._getframe(1) if phase == "start" else None
        while frame is not None:
            if frame.f_code.co_name in ("parse_review", "skip_reason"):
                during.append(frame.f_code.co_name)
                return
            frame = frame.f_back

    gc.callbacks.append(watch)
    try:
        with httpx.Client(
            base_url=srv.url, verify=ssl.create_default_context(cafile=tls["ca.crt"]), timeout=30
        ) as client:
            answer = post(client, review(new, operation="UPDATE", oldObject=old))
    finally:
        gc.callbacks.remove(watch)
        srv.stop()
    assert "allowed" in answer["response"]
    assert during == [], f"{len(during)} collections ({sorted(set(during))})"
