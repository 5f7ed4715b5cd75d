"""Who the webhook trusts to write owned objects by default, and its per-object review cap, over real TLS on
loopback against ``kvlint webhook serve`` itself (``python -m kvlint.webhook.cli serve``, its own defaults).

The exemption of an object controlled by a reviewed owner holds only for a trusted requester. The default
trusted every service account (``system:serviceaccount:*``), and anyone who can create a Pod can run it as a
service account of its namespace and write with its token: a bad Pod with a forged controller reference to a
ReplicaSet, sent as ``system:serviceaccount:serving:default``, was admitted unreviewed. Now the default trusts
the controller manager and its built-in controllers' service accounts in ``kube-system`` only; an operator's
write (KServe's Deployment under an InferenceService, LWS's StatefulSet under a LeaderWorkerSet) is reviewed
like a user's until the admin trusts the operator's account: admitted when clean, denied with kvlint check's
errors when not.
"""

from __future__ import annotations

import contextlib
import json
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")
httpx = pytest.importorskip("httpx")

from test_webhook_hostile import B01, _clique_set, b01_errors, review, workload_object  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
#: The review cap the server is started with (``--max-review-size``), small so that the objects stay small.
CAP = 8


def _free_port() -> int:
    """A loopback port free when asked. The server binds it later, in its own process: another process may take
    it in between, which :func:`_serve` detects (the server exits with EADDRINUSE) and retries with new ports."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: Attempts at starting the server on freshly picked ports, each of which can lose its ports to another process.
START_ATTEMPTS = 5


def _start(tls: dict[str, Any], args: tuple[str, ...]) -> tuple[subprocess.Popen[bytes], str, ssl.SSLContext]:
    """Start ``kvlint webhook serve`` with ``args`` added and wait until it is ready: the process, its URL and a
    client TLS context. A start that lost a port to another process (EADDRINUSE) is retried on new ports; any
    other exit before ready fails the test with the server's stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    ctx = ssl.create_default_context(cafile=tls["ca.crt"])
    err = ""
    for _ in range(START_ATTEMPTS):
        port, probe = _free_port(), _free_port()
        cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--probe-port", str(probe), "--tls-cert", tls["tls.crt"], "--tls-key", tls["tls.key"],
               "--workers", "1", "--drain-seconds", "0", "--log-level", "warning",
               # a review budget of 10 s, not the default 2 s: the reviews here must be checked (never answered
               # per the failure mode), however a loaded machine stretches them
               "--timeout", "10", *args]  # fmt: skip
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"https://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        with httpx.Client(verify=ctx, timeout=5) as c:
            while True:
                try:
                    if c.get(url + "/readyz").status_code == 200:
                        return proc, url, ctx
                except httpx.TransportError:
                    pass
                if proc.poll() is not None:
                    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    break
                if time.monotonic() > deadline:
                    proc.kill()
                    proc.communicate()
                    pytest.fail("kvlint webhook serve did not become ready within 60 s")
                time.sleep(0.05)
        if "address already in use" not in err.lower():
            break
    pytest.fail(f"kvlint webhook serve did not become ready: {err[-2000:]}")


@contextlib.contextmanager
def _serve(tls: dict[str, Any], *args: str) -> Iterator[tuple[str, ssl.SSLContext, list[str]]]:
    """``kvlint webhook serve`` on loopback with ``args`` added, in a child process, once ready (:func:`_start`):
    its URL, a client TLS context, and a list that receives the server's stderr when it has stopped (SIGTERM,
    then killed)."""
    proc, url, ctx = _start(tls, args)
    stderr: list[str] = []
    try:
        yield url, ctx, stderr
    finally:
        proc.terminate()
        try:
            _, err_bytes = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err_bytes = proc.communicate()
        stderr.append((err_bytes or b"").decode(errors="replace"))


@pytest.fixture(scope="module")
def served(tls: dict[str, Any]) -> Iterator[tuple[str, ssl.SSLContext]]:
    """``kvlint webhook serve`` with its default trust and ``--max-review-size`` :data:`CAP` (:func:`_serve`);
    its URL and a client TLS context."""
    with _serve(tls, "--max-review-size", str(CAP)) as (url, ctx, _):
        yield url, ctx


def _answer(served: tuple[str, ssl.SSLContext], body: dict[str, Any]) -> dict[str, Any]:
    url, ctx = served
    with httpx.Client(verify=ctx, timeout=30) as c:
        r = c.post(url + "/validate", json=body)
    assert r.status_code == 200, r.text
    return dict(r.json()["response"])


def _owned(obj: dict[str, Any], api: str, kind: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"]["ownerReferences"] = [
        {"apiVersion": api, "kind": kind, "name": "owner", "uid": "u-owner", "controller": True}
    ]
    return out


def test_by_default_only_the_built_in_controllers_write_owned_objects_unreviewed(
    served: tuple[str, ssl.SSLContext],
) -> None:
    """A bad Pod whose controller reference names a ReplicaSet is exempt when the ReplicaSet controller (or the
    controller manager) writes it, and reviewed, denied with kvlint check's errors, when anyone else does: a
    user, a Pod's token in the user's namespace (``system:serviceaccount:serving:default``, exempt under the
    former default), another kube-system account, or an operator's account (KServe's, LWS's) that the admin
    has not trusted. An operator's own owned objects are reviewed: its bad Deployment or StatefulSet is
    denied, its clean one admitted."""
    bad = workload_object(B01)
    errors = b01_errors()
    assert errors

    def verdict(obj: dict[str, Any], username: str) -> str:
        resp = _answer(served, review(obj, userInfo={"username": username}))
        if resp["allowed"]:
            return "exempt" if not resp.get("warnings") else "allowed with warnings"
        message = resp["status"]["message"]
        assert all(rule in message for rule in errors), message
        return "denied"

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "pod-uid"},
           "spec": bad["spec"]["template"]["spec"]}  # fmt: skip
    forged = _owned(pod, "apps/v1", "ReplicaSet")
    assert verdict(forged, "system:serviceaccount:kube-system:replicaset-controller") == "exempt"
    assert verdict(forged, "system:kube-controller-manager") == "exempt"
    assert verdict(_owned(bad, "apps/v1", "Deployment") | {"kind": "ReplicaSet"},
                   "system:serviceaccount:kube-system:deployment-controller") == "exempt"  # fmt: skip
    for who in (
        "alice",
        "system:serviceaccount:serving:default",
        "system:serviceaccount:kube-system:kube-proxy",
        "system:serviceaccount:kserve:kserve-controller-manager",
    ):
        assert verdict(forged, who) == "denied", who
    # an operator's writes under the object it was given: reviewed, not exempt
    kserve = "system:serviceaccount:kserve:kserve-controller-manager"
    lws = "system:serviceaccount:lws-system:lws-controller-manager"
    deployment = _owned(bad, "serving.kserve.io/v1beta1", "InferenceService")
    assert verdict(deployment, kserve) == "denied"
    sts = _owned(bad | {"apiVersion": "apps/v1", "kind": "StatefulSet"}, "leaderworkerset.x-k8s.io/v1",
                 "LeaderWorkerSet")  # fmt: skip
    assert verdict(sts, lws) == "denied"
    clean = json.loads(json.dumps(deployment))
    args = clean["spec"]["template"]["spec"]["containers"][0]["args"]
    args.append("--max-model-len=8192")
    resp = _answer(served, review(clean, userInfo={"username": kserve}))
    assert resp["allowed"], resp


def test_look_alike_requesters_of_a_trusted_controller_are_reviewed(
    served: tuple[str, ssl.SSLContext],
) -> None:
    """The trust list is matched by exact equality (or a literal prefix), so a requester that only looks like a
    trusted controller, by case, blanks, a zero-width space, a Cyrillic letter, a longer name or a name past
    the account's, is reviewed: the bad Pod under a forged ReplicaSet reference is denied for each."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "uid": "pod-uid"},
           "spec": workload_object(B01)["spec"]["template"]["spec"]}  # fmt: skip
    forged = _owned(pod, "apps/v1", "ReplicaSet")
    rs = "system:serviceaccount:kube-system:replicaset-controller"
    for who in (
        "System:kube-controller-manager",
        " system:kube-controller-manager",
        "system:kube-controller-manager ",
        rs + "\u200b",
        "\u0455ystem:kube-controller-manager",  # Cyrillic dze for s
        rs.replace("kube-system", "kube-\u0455ystem"),
        rs + "x",
        rs + ":x",
        rs.upper(),
    ):
        resp = _answer(served, review(forged, userInfo={"username": who}))
        assert not resp["allowed"], who
    assert _answer(served, review(forged, userInfo={"username": rs}))["allowed"]


def test_the_review_cap_is_the_flags(served: tuple[str, ssl.SSLContext]) -> None:
    """``--max-review-size`` sets the per-object cap (it had no flag: 256, fixed): an object of CAP pod templates
    is reviewed (its bad clique denied with kvlint check's errors), one of CAP + 1 gets the one KV001 error
    naming the flag's cap."""
    spec = workload_object(B01)["spec"]["template"]["spec"]
    errors = b01_errors()
    resp = _answer(served, review(_clique_set(CAP, spec)))
    assert not resp["allowed"] and all(rule in resp["status"]["message"] for rule in errors), resp
    assert "too large" not in resp["status"]["message"]
    resp = _answer(served, review(_clique_set(CAP + 1, spec)))
    assert not resp["allowed"], resp
    assert (
        f"too large to review: {CAP + 1} pod templates, kvlint reviews at most {CAP} per object"
        in (resp["status"]["message"])
    )


@pytest.mark.parametrize("size", ["0", "-1", "4097", "lots"])
def test_a_review_cap_out_of_bounds_is_refused_on_start(tls: dict[str, Any], size: str) -> None:
    """``kvlint webhook serve --max-review-size`` outside 1..4096 exits with status 2 and the bounds before
    anything starts; the settings refuse such a cap from any other caller too."""
    from click.testing import CliRunner

    from kvlint.webhook import cli as webhook_cli
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.review import WebhookSettings

    r = CliRunner().invoke(
        webhook_cli.webhook,
        ["serve", "--tls-cert", tls["tls.crt"], "--tls-key", tls["tls.key"], "--max-review-size", size],
    )
    assert r.exit_code == 2 and "--max-review-size" in r.output, r.output
    if size.lstrip("-").isdigit():
        assert "1<=x<=4096" in r.output, r.output
        with pytest.raises(ValueError, match="max review size must be 1 to 4096"):
            WebhookSettings(options=webhook_options(max_review_size=int(size)))


def test_trust_patterns_that_trust_too_much_are_named() -> None:
    """A trailing ``*`` that does not follow ``:`` crosses a name boundary (``...:kserve*`` also trusts the
    namespace ``kserve-evil``), and ``system:serviceaccount:*`` (or any shorter prefix, ``*`` alone) trusts
    every service account, whose tokens any Pod author can use; exact names, one namespace's accounts
    (``...:kserve:*``) and the defaults give no warning."""
    from kvlint.webhook.review import DEFAULT_TRUSTED_CONTROLLERS, trust_pattern_warnings, trusted_controller

    assert trust_pattern_warnings(DEFAULT_TRUSTED_CONTROLLERS) == []
    assert (
        trust_pattern_warnings(["system:serviceaccount:kserve:*", "system:serviceaccount:lws-system:lws"])
        == []
    )
    crossing = "system:serviceaccount:kserve*"
    assert trusted_controller("system:serviceaccount:kserve-evil:default", [crossing])  # why it is named
    (w,) = trust_pattern_warnings([crossing])
    assert crossing in w and "end the prefix with ':'" in w
    for everyone in ("system:serviceaccount:*", "system:*", "*"):
        (w,) = trust_pattern_warnings([everyone])
        assert "every service account" in w, everyone


def test_the_server_logs_a_broad_trust_pattern_at_start(tls: dict[str, Any]) -> None:
    """``kvlint webhook serve --trusted-controller 'system:serviceaccount:kserve*'`` starts (the pattern is the
    admin's choice) and logs the warning of :func:`~kvlint.webhook.review.trust_pattern_warnings` on stderr."""
    with _serve(tls, "--trusted-controller", "system:serviceaccount:kserve*") as (_, _, stderr):
        pass
    (text,) = stderr
    assert "system:serviceaccount:kserve*" in text and "end the prefix with ':'" in text, text[-2000:]


def test_a_taken_probe_port_is_a_sentence_not_a_traceback(tls: dict[str, str]) -> None:
    """``kvlint webhook serve --probe-port P`` with P already listened on exits 1 naming the flag and the
    address; it printed an OSError traceback (Errno 98), where a taken review port gave one clean line."""
    import socket

    with socket.socket() as held, socket.socket() as free:
        held.bind(("127.0.0.1", 0))
        held.listen()
        free.bind(("127.0.0.1", 0))  # held too: the review port is never bound before the probe port fails
        probe, port = held.getsockname()[1], free.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--probe-port", str(probe), "--tls-cert", tls["tls.crt"], "--tls-key", tls["tls.key"],
               "--workers", "1", "--log-level", "warning"]  # fmt: skip
        run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    assert f"cannot listen for probes on 127.0.0.1:{probe} (--probe-port)" in run.stderr, run.stderr
