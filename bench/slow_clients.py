"""Slow clients against the admission webhook over TLS on loopback (slowloris), bounded and self-stopping.

Starts ``kvlint webhook serve`` as a child process on 127.0.0.1 (throw-away ``trustme`` certificates) with
``--header-timeout`` (default 5 s here as in the chart), then opens ``--connections`` TLS connections (600,
as in issue 14) that send the start of a request and then one more header byte every ``--trickle`` seconds,
never finishing their headers. While they hold on, it times ``GET /healthz`` on the probe listener and on
the review listener (new connections, as the kubelet probes) and sends normal reviews. It reports, every
second for ``--seconds``: the slow connections the server still holds open, the probe latencies and the
reviews' status. At the end the child is stopped (SIGTERM; killed if it lingers).

The review listener is limited to ``--max-connections`` at once; the header deadline frees the slots the slow
connections hold, and past the limit a request whose headers are complete closes the slow connections that
waited longest (``kvlint_webhook_connections_closed_total{reason="evicted"}``) instead of getting uvicorn's 503.
So with 600 slow clients and the default limit of 1000, and with more slow clients than the limit
(``--connections 300 --max-connections 200``), reviews keep being answered throughout, and every slow
connection is closed by the server.

``--body``: the slow connections send a review's complete headers (``Content-Length: 1000000``) and then one
body byte every ``--trickle`` seconds, which the header deadline does not reach (the body deadline, 10 s, does);
past the limit, a complete request closes the connection whose body began first
(``kvlint_webhook_connections_evicted_total{listener="review",state="body"}``).

Usage::

    python bench/slow_clients.py [--connections 600] [--seconds 12] [--header-timeout 5] [--body]

Exit status 1 when the server did not start, a probe failed or took more than 100 ms on the probe
listener, or a review was not answered; 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from soak import probe_seconds  # noqa: E402
from webhook import _free_port, _percentile, reviews  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Run the slow-client benchmark; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=600)
    ap.add_argument("--seconds", type=float, default=12.0)
    ap.add_argument("--trickle", type=float, default=1.0, help="seconds between header bytes")
    ap.add_argument("--header-timeout", type=float, default=5.0)
    ap.add_argument("--max-connections", type=int, default=1000)
    ap.add_argument("--body", action="store_true", help="complete headers, then trickle the body")
    ap.add_argument("--kvlint-path", help="run the server from this kvlint checkout (PYTHONPATH), to compare")
    ap.add_argument(
        "--legacy",
        action="store_true",
        help="the server has no --probe-port/--header-timeout/--max-connections (an older kvlint)",
    )
    args = ap.parse_args(argv)
    import httpx
    import trustme

    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = min(hard, max(soft, args.connections * 2 + 256))
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass
    tmp = tempfile.mkdtemp(prefix="kvlint-slow-")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    cert, key, ca_file = (os.path.join(tmp, n) for n in ("tls.crt", "tls.key", "ca.crt"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(ca_file)
    port, probe_port = _free_port(), _free_port()
    cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--tls-cert", cert, "--tls-key", key, "--log-level", "warning", "--drain-seconds", "0"]  # fmt: skip
    if not args.legacy:
        cmd += ["--probe-port", str(probe_port), "--header-timeout", str(args.header_timeout),
                "--max-connections", str(args.max_connections)]  # fmt: skip
    env = dict(os.environ)
    if args.kvlint_path:
        env["PYTHONPATH"] = args.kvlint_path
    proc = subprocess.Popen(
        cmd, cwd=args.kvlint_path or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    ctx = ssl.create_default_context(cafile=ca_file)
    url = f"https://127.0.0.1:{port}"
    body = reviews()[0]
    failed = False
    socks: list[ssl.SSLSocket] = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                ready = (
                    httpx.get(f"{url}/readyz", verify=ctx).status_code
                    if args.legacy
                    else httpx.get(f"http://127.0.0.1:{probe_port}/readyz").status_code
                )
                if ready == 200:
                    break
            except (OSError, RuntimeError, httpx.TransportError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                print(f"server did not start:\n{err[-2000:]}", file=sys.stderr)
                return 1
            time.sleep(0.1)
        t0 = time.monotonic()
        for _ in range(args.connections):
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            s = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
            if args.body:
                s.sendall(
                    b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000000\r\n\r\n{"
                )
            else:
                s.sendall(b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        opened = time.monotonic() - t0
        print(
            f"{len(socks)} slow TLS connections ({'trickling bodies' if args.body else 'trickling headers'}) open in"
            f" {opened:.1f} s; header timeout {args.header_timeout:g} s"
        )
        alive = set(range(len(socks)))
        lock = threading.Lock()
        stop = threading.Event()

        def trickle() -> None:
            while not stop.wait(args.trickle):
                for i in list(alive):
                    try:
                        socks[i].sendall(b" " if args.body else b"a")
                    except OSError:
                        with lock:
                            alive.discard(i)

        th = threading.Thread(target=trickle, daemon=True)
        th.start()
        rows = []
        probe_all: list[float] = []
        review_all: list[float] = []
        statuses: dict[int, int] = {}
        health_statuses: dict[int, int] = {}
        with httpx.Client(verify=ctx, timeout=10, headers={"Content-Type": "application/json"}) as c:
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                tick = time.monotonic()
                p_probe = probe_seconds(probe_port) if not args.legacy else float("nan")
                t1 = time.perf_counter()
                r_health = c.get(url + "/healthz")
                p_review_port = time.perf_counter() - t1
                t1 = time.perf_counter()
                r = httpx.post(url + "/validate", content=body, verify=ctx, timeout=10,
                               headers={"Content-Type": "application/json"})  # fmt: skip
                p_rev = time.perf_counter() - t1
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                health_statuses[r_health.status_code] = health_statuses.get(r_health.status_code, 0) + 1
                probe_all.append(p_probe)
                review_all.append(p_rev)
                # a closed connection shows on the next trickle; also check readability (EOF) now
                for i in list(alive):
                    socks[i].setblocking(False)
                    try:
                        if socks[i].recv(1) == b"":
                            alive.discard(i)
                    except (ssl.SSLWantReadError, BlockingIOError):
                        pass
                    except OSError:
                        alive.discard(i)
                    finally:
                        socks[i].setblocking(True)
                rows.append(
                    {
                        "t_s": round(tick - t0, 1),
                        "slow_open": len(alive),
                        "probe_listener_ms": round(p_probe * 1000, 2),
                        "review_listener_healthz": r_health.status_code,
                        "review_listener_healthz_ms": round(p_review_port * 1000, 2),
                        "review_status": r.status_code,
                        "review_ms": round(p_rev * 1000, 1),
                    }
                )
                print(json.dumps(rows[-1]))
                time.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))
        stop.set()
        summary = {
            "connections": args.connections,
            "header_timeout_s": None if args.legacy else args.header_timeout,
            "slow_open_at_end": len(alive),
            "probe_listener_p50_ms": None if args.legacy else round(_percentile(probe_all, 0.5) * 1000, 2),
            "probe_listener_max_ms": None if args.legacy else round(max(probe_all) * 1000, 2),
            "review_listener_healthz_status_counts": health_statuses,
            "review_status_counts": statuses,
            "review_max_ms": round(max(review_all) * 1000, 1),
        }
        print(json.dumps(summary))
        if (not args.legacy and max(probe_all) > 0.1) or set(statuses) != {200}:
            failed = True
        return 1 if failed else 0
    finally:
        for s in socks:
            s.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
