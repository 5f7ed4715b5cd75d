"""An object with a key longer than the YAML reader takes: the webhook reads the object as its JSON text with the
YAML loader, which gives up a key past 1,024 characters (PyYAML's limit on an implicit key), and the deny message
said "KV001: YAML syntax error: while parsing a flow mapping: did not find expected ',' or '}'" of a request that
holds no YAML. Now the KV001 says what it is: the key, where, how long, the limit."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kvlint.webhook.worker import MAX_YAML_KEY_CHARS, WARM_UP_OBJECT


def _review(n: int) -> tuple[Any, Any]:
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import lint_review, parse_review

    obj = copy.deepcopy(WARM_UP_OBJECT)
    obj["metadata"]["annotations"] = {"k" * n: "v"}
    request = {
        "uid": "u-long-key",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "name": obj["metadata"]["name"],
        "namespace": "default",
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": obj,
        "dryRun": False,
    }
    rev = parse_review(
        json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
    )
    return rev, lint_review(rev, webhook_options())


@pytest.mark.parametrize("n", [MAX_YAML_KEY_CHARS - 1, 1100])
def test_a_key_past_the_yaml_readers_limit_is_said_to_be_one(n: int) -> None:
    from kvlint.webhook.review import WebhookSettings, build_response

    rev, result = _review(n)
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "flow mapping" not in kv001.message and "YAML syntax error" not in kv001.message
    assert kv001.message.startswith(
        f"kvlint could not read this object: a key in metadata.annotations is {n:,} characters long "
        f"({n + 2:,} as JSON, quotes included)"
    )
    assert f"at most {MAX_YAML_KEY_CHARS:,} characters" in kv001.message and "shorten the key" in kv001.fix
    out, _ = build_response(rev, WebhookSettings(mode="enforce"), result)
    assert f"is {n:,} characters long" in out["response"]["status"]["message"]


def test_a_key_at_the_limit_is_read() -> None:
    """1,022 characters, 1,024 as JSON: read, no KV001 (the limit is the reader's, not a guess)."""
    _, result = _review(MAX_YAML_KEY_CHARS - 2)
    assert not [d for d in result.diagnostics if d.rule == "KV001"]
