"""Text with a lone surrogate must not make the loader raise (found by an adversarial probe, issue 19 stop).

``kvlint.load.load_text`` promises never to raise for bad content. A ``str`` holding a lone surrogate
(U+D800-U+DFFF) cannot come from decoding a file, but it does come from JSON: ``json.loads('"\\ud800"')`` is
a valid JSON string escape, so an AdmissionReview whose object holds ``"\\ud800"`` reaches the webhook worker,
where ``kvlint.webhook.jsonload.load_object`` gives way and ``load_text(dump_text(obj))`` raised
UnicodeEncodeError (libyaml is handed UTF-8); the server then answered an internal error and the API server
applied the failurePolicy instead of a lint verdict. Each surrogate is now read as U+FFFD, which is what
the API server's Go JSON decoder stores.
"""

from __future__ import annotations

import json

from kvlint.load import load_text
from kvlint.webhook.request_options import webhook_options
from kvlint.webhook.review import lint_review, parse_review


def test_lone_surrogate_is_a_finding_not_an_exception() -> None:
    result = load_text('a: "x\ud800y"\n', "x.yaml")
    assert result.files == 1 and not result.findings
    assert result.documents[0].data == {"a": "x\ufffdy"}  # as the API server's JSON decoder stores it


def test_review_with_a_lone_surrogate_escape_is_linted() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "\ud800"}}
    request = {"uid": "u1", "operation": "CREATE", "name": "x", "namespace": "d", "object": obj}
    request["kind"] = {"group": "", "version": "v1", "kind": "ConfigMap"}
    body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    assert "\\ud800" in body  # the JSON escape, as an API server would send it
    parsed = parse_review(body)
    assert parsed.object is not None and parsed.object["data"]["a"] == "\ud800"
    lint_review(parsed, webhook_options())
