"""Soak the admission webhook over TLS on loopback: throughput, latency, memory slope, and hostile reviews.

Starts ``kvlint webhook serve`` as a child process on 127.0.0.1 (throw-away certificates from ``trustme``),
then, bounded and self-stopping (the child is stopped with SIGTERM at the end, killed if it lingers):

1. **soak**: sends ``--reviews`` AdmissionReviews (default 20,000; built from ``fixtures/webhook``, a mix of
   denied, warned and clean objects) from ``--clients`` keep-alive connections as fast as the server
   answers, sampling the resident memory (RSS, from ``/proc``) of the server process and all its
   descendants (fork server, review workers) every 1,000 reviews. Prints reviews/s, p50/p99 latency and
   the RSS growth and least-squares slope from review 1,000 to the end (KiB per 1,000 reviews).
2. **hostile** (unless ``--no-hostile``): for ``--hostile-seconds``, keeps five reviews with
   ``--tensor-parallel-size 1e12`` (as ``1000000000000``) and one with a 1 MB template-like value in flight
   at all times, while timing ``GET /healthz`` on the probe listener (a new connection each time, as the
   kubelet probes) and sending normal reviews, which must still be checked (denied with KV103, as
   ``kvlint check`` reports for the same manifest). Prints the probe latencies and the normal reviews'
   verdicts and latencies.

Usage::

    python bench/soak.py [--reviews 20000] [--clients 4] [--workers 2] [--hostile-seconds 10]

Loopback only. Exit status 1 when the server did not start, a review failed, RSS grew more than
``--max-growth-mb`` (2 MB) from review 1,000 to the end, a probe took more than 100 ms, or a normal review
was not checked while the hostile reviews were in flight; 0 otherwise. Linux only (reads ``/proc``).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from webhook import _free_port, _percentile, admission_review, reviews  # noqa: E402


def _descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (from ``/proc/*/stat`` parent ids)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(pid: int) -> tuple[int, dict[int, int]]:
    """Total RSS (KiB) of ``pid`` and its descendants, and per process."""
    per = {p: _rss_kib(p) for p in _descendants(pid)}
    return sum(per.values()), per


def _slope(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0


def probe_seconds(port: int) -> float:
    """One ``GET /healthz`` on a new plain-HTTP connection, in seconds (raises unless HTTP 200)."""
    t = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    if not data.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"/healthz answered {data[:60]!r}")
    return time.perf_counter() - t


def probe_tls_seconds(port: int, ctx: ssl.SSLContext) -> float:
    """One ``GET /healthz`` on a new HTTPS connection (TLS handshake included), in seconds; inf on failure."""
    t = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = s.recv(4096)
    except OSError:
        return float("inf")
    return time.perf_counter() - t if data.startswith(b"HTTP/1.1 200") else float("inf")


def start_server(
    args: argparse.Namespace, tmp: str
) -> tuple[subprocess.Popen[bytes], int, int, ssl.SSLContext]:
    import trustme

    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    cert, key, ca_file = (os.path.join(tmp, n) for n in ("tls.crt", "tls.key", "ca.crt"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(ca_file)
    port, probe_port = _free_port(), _free_port()
    cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--tls-cert", cert, "--tls-key", key, "--log-level", "warning", "--drain-seconds", "0",
           "--workers", str(args.workers)]  # fmt: skip
    if args.legacy:
        probe_port = 0
    else:
        cmd += ["--probe-port", str(probe_port)]
    env = dict(os.environ)
    if args.kvlint_path:  # measure another checkout (e.g. the code before a change)
        env["PYTHONPATH"] = args.kvlint_path
    proc = subprocess.Popen(
        cmd, cwd=args.kvlint_path or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return proc, port, probe_port, ssl.create_default_context(cafile=ca_file)


def main(argv: list[str] | None = None) -> int:
    """Run the soak; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reviews", type=int, default=20_000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hostile-seconds", type=float, default=10.0)
    ap.add_argument("--no-hostile", action="store_true")
    ap.add_argument("--max-growth-mb", type=float, default=2.0)
    ap.add_argument(
        "--kvlint-path",
        help="run the server from this kvlint checkout (PYTHONPATH), e.g. an older one to compare",
    )
    ap.add_argument(
        "--legacy", action="store_true", help="the server has no --probe-port: probe /healthz over HTTPS"
    )
    args = ap.parse_args(argv)
    if not os.path.isdir("/proc"):
        print("needs Linux /proc to read memory", file=sys.stderr)
        return 1
    import httpx

    bodies = reviews()
    tmp = tempfile.mkdtemp(prefix="kvlint-soak-")
    proc, port, probe_port, ctx = start_server(args, tmp)
    url = f"https://127.0.0.1:{port}"
    failed = False
    try:
        ready_url = f"{url}/readyz" if args.legacy else f"http://127.0.0.1:{probe_port}/readyz"
        deadline = time.monotonic() + 60
        while True:
            try:
                with httpx.Client(timeout=2, verify=ctx) as c:
                    if c.get(ready_url).status_code == 200:
                        break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode() if proc.stderr else ""
                print(f"server did not start:\n{err[-2000:]}", file=sys.stderr)
                return 1
            time.sleep(0.1)
        print(f"server ready on {url} (probes on {probe_port}), pid {proc.pid}, {args.workers} workers")

        # -- 1. soak -----------------------------------------------------------------------------------
        lock = threading.Lock()
        done = [0]
        latencies: list[float] = []
        errors: list[str] = []
        samples: list[tuple[int, int]] = []
        next_sample = [1000]

        def client(idx: int) -> None:
            local: list[float] = []
            with httpx.Client(verify=ctx, timeout=10, headers={"Content-Type": "application/json"}) as c:
                i = idx
                while True:
                    with lock:
                        if done[0] >= args.reviews:
                            break
                        done[0] += 1
                        n = done[0]
                        sample = n >= next_sample[0]
                        if sample:
                            next_sample[0] += 1000
                    body = bodies[i % len(bodies)]
                    i += args.clients
                    t0 = time.perf_counter()
                    r = c.post(url + "/validate", content=body)
                    local.append(time.perf_counter() - t0)
                    if r.status_code != 200 or "response" not in r.json():
                        with lock:
                            errors.append(f"HTTP {r.status_code}: {r.text[:200]}")
                    if sample:
                        total, _ = tree_rss_kib(proc.pid)
                        with lock:
                            samples.append((n, total))
            with lock:
                latencies.extend(local)

        t_start = time.perf_counter()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t_start
        samples.sort()
        total, per = tree_rss_kib(proc.pid)
        xs = [n / 1000 for n, _ in samples]
        ys = [kib / 1024 for _, kib in samples]
        growth_mb = (ys[-1] - ys[0]) if len(ys) > 1 else 0.0
        slope_kib = _slope(xs, [y * 1024 for y in ys])
        soak = {
            "reviews": len(latencies),
            "seconds": round(elapsed, 1),
            "reviews_per_second": round(len(latencies) / elapsed, 1),
            "p50_ms": round(_percentile(latencies, 0.50) * 1000, 2),
            "p99_ms": round(_percentile(latencies, 0.99) * 1000, 2),
            "errors": len(errors),
            "rss_mb_at_1000": round(ys[0], 1) if ys else None,
            "rss_mb_at_end": round(ys[-1], 1) if ys else None,
            "rss_growth_mb_1000_to_end": round(growth_mb, 2),
            "rss_slope_kib_per_1000_reviews": round(slope_kib, 1),
            "processes": len(per),
        }
        print(
            f"soak: {soak['reviews']} reviews in {soak['seconds']} s = {soak['reviews_per_second']} reviews/s; "
            f"p50 {soak['p50_ms']} ms, p99 {soak['p99_ms']} ms; RSS of {len(per)} processes "
            f"{soak['rss_mb_at_1000']} MB at review 1,000 -> {soak['rss_mb_at_end']} MB at {soak['reviews']} "
            f"({growth_mb:+.2f} MB; slope {slope_kib:+.1f} KiB per 1,000 reviews)"
        )
        print("rss_mb_by_1000_reviews:", json.dumps([round(y, 2) for y in ys]))
        if errors:
            failed = True
            for e in errors[:5]:
                print("error:", e, file=sys.stderr)
        if growth_mb > args.max_growth_mb:
            failed = True
            print(f"RSS grew {growth_mb:.2f} MB (limit {args.max_growth_mb} MB)", file=sys.stderr)

        # -- 2. hostile reviews in flight ------------------------------------------------------------------
        hostile_report: dict[str, Any] = {}
        if not args.no_hostile:
            from kvlint.load import load_text
            from kvlint.pipeline import run_check
            from kvlint.webhook.review import webhook_options
            from kvlint.workloads import find_workloads

            b09 = ROOT / "fixtures" / "webhook" / "b09-clean.yaml"
            b01 = ROOT / "fixtures" / "webhook" / "b01-llama8b-l4-default-context.yaml"

            def obj_of(p: Path) -> dict[str, Any]:
                w = find_workloads(load_text(p.read_bytes(), str(p)).documents)[0]
                return json.loads(json.dumps(w.doc.data))

            expected = {
                d.rule for d in run_check([str(b01)], webhook_options()).diagnostics if d.severity == "error"
            }
            hostile: list[bytes] = []
            for i in range(5):
                o = obj_of(b09)
                o["metadata"]["name"] = f"tp-{i}"
                o["spec"]["template"]["spec"]["containers"][0]["args"] += [
                    "--tensor-parallel-size",
                    "1000000000000",
                ]
                hostile.append(json.dumps(admission_review(o, uid=f"tp-{i}")).encode())
            big = obj_of(b01)
            big["metadata"]["annotations"] = {"note": "{{ .Values.x }}" * 70_000}
            hostile.append(json.dumps(admission_review(big, uid="big")).encode())
            normal = json.dumps(admission_review(obj_of(b01), uid="normal")).encode()
            stop = threading.Event()
            hostile_done = [0]
            hostile_times: list[float] = []

            def flood(body: bytes) -> None:
                with httpx.Client(verify=ctx, timeout=10, headers={"Content-Type": "application/json"}) as c:
                    while not stop.is_set():
                        t0 = time.perf_counter()
                        r = c.post(url + "/validate", content=body)
                        with lock:
                            hostile_done[0] += 1
                            hostile_times.append(time.perf_counter() - t0)
                            if r.status_code != 200:
                                errors.append(f"hostile: HTTP {r.status_code}")

            floods = [threading.Thread(target=flood, args=(b,)) for b in hostile]
            for t in floods:
                t.start()
            probes: list[float] = []
            checks: list[tuple[bool, float]] = []
            t_end = time.monotonic() + args.hostile_seconds
            with httpx.Client(verify=ctx, timeout=10, headers={"Content-Type": "application/json"}) as c:
                while time.monotonic() < t_end:
                    probes.append(
                        probe_seconds(probe_port) if not args.legacy else probe_tls_seconds(port, ctx)
                    )
                    t0 = time.perf_counter()
                    r = c.post(url + "/validate", content=normal).json()["response"]
                    msg = (r.get("status") or {}).get("message", "")
                    checks.append(
                        (not r["allowed"] and all(rule in msg for rule in expected), time.perf_counter() - t0)
                    )
                    time.sleep(0.1)
            stop.set()
            for t in floods:
                t.join()
            hostile_report = {
                "seconds": args.hostile_seconds,
                "hostile_reviews_answered": hostile_done[0],
                "hostile_p99_ms": round(_percentile(hostile_times, 0.99) * 1000, 1),
                "probes": len(probes),
                "healthz_p50_ms": round(_percentile(probes, 0.5) * 1000, 2),
                "healthz_max_ms": round(max(probes) * 1000, 2),
                "normal_reviews": len(checks),
                "normal_reviews_checked": sum(ok for ok, _ in checks),
                "normal_review_max_ms": round(max(s for _, s in checks) * 1000, 1),
            }
            print(
                f"hostile: {hostile_done[0]} hostile reviews answered in {args.hostile_seconds:g} s (five TP 1e12 "
                f"and one 1 MB template value always in flight; p99 {hostile_report['hostile_p99_ms']} ms); "
                f"/healthz p50 {hostile_report['healthz_p50_ms']} ms, max {hostile_report['healthz_max_ms']} ms "
                f"over {len(probes)} probes; normal reviews checked {hostile_report['normal_reviews_checked']}/"
                f"{len(checks)} (denied with {', '.join(sorted(expected))}), slowest "
                f"{hostile_report['normal_review_max_ms']} ms"
            )
            if max(probes) > 0.1 or hostile_report["normal_reviews_checked"] != len(checks):
                failed = True
        print(json.dumps({"soak": soak, "hostile": hostile_report}))
        return 1 if failed else 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
