"""Benchmark the admission webhook over TLS on loopback: reviews per second and p50/p99 latency.

Starts ``kvlint webhook serve`` as a child process on 127.0.0.1 with a throw-away certificate
authority and serving certificate (``trustme``), pinned to one CPU core when the platform allows
(``os.sched_setaffinity``), then sends AdmissionReview requests built from ``fixtures/webhook`` (a
mix of denied, warned and clean objects) at a fixed rate from client threads with keep-alive
connections, for a fixed number of requests (bounded and self-stopping: the child is terminated with
SIGTERM at the end, and killed if it does not exit). Latency is measured at the client (request sent
to response read, TLS and HTTP included).

Usage::

    python bench/webhook.py [--rate 200] [--seconds 10] [--clients 4] [--mode enforce]
                            [--oversized N] [--root DIR]

``--oversized N`` adds N client threads that send, back to back for the whole measured phase, the largest
DynamoGraphDeployment the size limit admits (3 MiB, 16,351 components: ``bench/webhook_big.py``), which the
webhook answers "too large to review" (KV001); the latency figures stay those of the small reviews, and
the oversized ones are reported apart. ``--root`` runs another checkout's kvlint (the server's working
directory; ``python -m`` puts it first on the path), for an A/B in the same run.

Prints one line per phase (latency at the client and at the server, CPU per review, and how busy the server's
core was with the server and with other processes, which a shared machine's p99 depends on) and a JSON
summary; exit status 1 when the server did not start or a review failed (non-200 or a malformed answer), 0
otherwise (the 10 ms p99 aim is reported, not enforced).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIXTURES = ROOT / "fixtures" / "webhook"


def reviews() -> list[bytes]:
    """AdmissionReview request bodies, one per workload document of the webhook fixtures."""
    from kvlint.load import load_text
    from kvlint.workloads import find_workloads

    out: list[bytes] = []
    for i, path in enumerate(sorted(FIXTURES.glob("*.yaml"))):
        loaded = load_text(path.read_bytes(), str(path))
        docs = {id(w.doc): w.doc for w in find_workloads(loaded.documents)}
        for doc in docs.values():
            obj = json.loads(json.dumps(doc.data))
            out.append(json.dumps(admission_review(obj, uid=f"bench-{i}")).encode())
    return out


def admission_review(
    obj: dict[str, Any], uid: str, operation: str = "CREATE", dry_run: bool = False
) -> dict[str, Any]:
    """An AdmissionReview request for ``obj`` shaped as the API server sends it (admission.k8s.io/v1)."""
    kind = str(obj.get("kind", ""))
    api = str(obj.get("apiVersion", "v1"))
    group, _, version = api.rpartition("/")
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    resource = {"group": group, "version": version, "resource": kind.lower() + "s"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": resource,
            "requestKind": {"group": group, "version": version, "kind": kind},
            "requestResource": resource,
            "name": meta.get("name", ""),
            "namespace": ns,
            "operation": operation,
            "userInfo": {
                "username": "kubernetes-admin",
                "groups": ["system:masters", "system:authenticated"],
            },
            "object": obj,
            "oldObject": None,
            "dryRun": dry_run,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "kubectl"},
        },
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(q * (len(s) - 1))))
    return s[k]


def _server_histogram(text: str) -> dict[str, Any]:
    """Bucket bounds (ms) holding the server-side p50/p99 and the share under 10 ms, from /metrics text."""
    buckets: list[tuple[float, float]] = []
    for line in text.splitlines():
        if line.startswith("kvlint_webhook_review_duration_seconds_bucket{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if le == "+Inf" else float(le), float(line.rsplit(" ", 1)[1])))
    total = buckets[-1][1] if buckets else 0.0

    def bound(q: float) -> float | None:
        return next((round(le * 1000, 2) for le, n in buckets if total and n >= q * total), None)

    under = next((n for le, n in buckets if le == 0.01), 0.0)
    return {"p50_le_ms": bound(0.5), "p99_le_ms": bound(0.99), "under_10ms": under / total if total else 0.0}


def _tree_cpu_seconds(root: int) -> tuple[float, float] | None:
    """CPU seconds (user + system, from ``/proc/PID/stat``) of ``root`` itself and of its live descendants
    (the fork server and the review workers); None where there is no ``/proc``."""
    if not os.path.isdir("/proc"):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[
            1
        ].split()  # after "pid (comm)": state, ppid, ...; utime, stime at 11, 12
        stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    children = 0.0
    for pid, (_ppid, cpu) in stats.items():
        p, hops = pid, 0
        while p in stats and p != root and hops < 64:
            p, hops = stats[p][0], hops + 1
        if p == root and pid != root:
            children += cpu
    return (stats[root][1] if root in stats else 0.0), children


def _cpu_busy_seconds(cpu: int) -> float | None:
    """Seconds CPU ``cpu`` has spent busy since boot (user, nice, system, irq, softirq and steal time of its
    ``/proc/stat`` line); None where there is no ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith(f"cpu{cpu} "):
                    v = [int(x) for x in line.split()[1:]]
                    return (v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)) / os.sysconf(
                        "SC_CLK_TCK"
                    )
    except (OSError, ValueError):
        return None
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=200.0, help="target reviews per second (all clients)")
    ap.add_argument("--seconds", type=float, default=10.0, help="duration of the measured phase")
    ap.add_argument("--clients", type=int, default=4, help="client threads (each one keep-alive connection)")
    ap.add_argument("--mode", default="enforce", choices=["enforce", "warn", "audit"])
    ap.add_argument("--no-pin", action="store_true", help="do not pin the server to one CPU core")
    ap.add_argument("--oversized", type=int, default=0, help="threads sending the 3 MiB object back to back")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose kvlint the server runs")
    args = ap.parse_args(argv)

    import httpx
    import trustme

    bodies = reviews()
    tmp = tempfile.mkdtemp(prefix="kvlint-bench-")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    cert, key, ca_file = (os.path.join(tmp, n) for n in ("tls.crt", "tls.key", "ca.crt"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(ca_file)
    port = _free_port()
    # no probe listener: its default port 8080 may be taken (by another server)
    cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--tls-cert", cert, "--tls-key", key, "--mode", args.mode, "--log-level", "warning",
           "--drain-seconds", "0", "--probe-port", "0"]  # fmt: skip
    pin = None
    if not args.no_pin and hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) > 1:
            pin = cpus[-1]
    proc = subprocess.Popen(
        cmd, cwd=args.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=(lambda: os.sched_setaffinity(0, {pin})) if pin is not None else None,  # noqa: PLW1509
    )  # fmt: skip
    if pin is not None:
        client_cpus = set(os.sched_getaffinity(0)) - {pin}
        os.sched_setaffinity(0, client_cpus)
    url = f"https://127.0.0.1:{port}"
    import ssl

    ctx = ssl.create_default_context(cafile=ca_file)
    try:
        deadline = time.monotonic() + 30
        with httpx.Client(verify=ctx, timeout=5) as c:
            while True:
                try:
                    if c.get(url + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    print(f"server did not start:\n{err[-2000:]}", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        print(f"server ready on {url} (pid {proc.pid}, pinned to CPU {pin if pin is not None else 'none'})")

        total = int(args.rate * args.seconds)
        interval = args.clients / args.rate
        latencies: list[float] = []
        failures: list[str] = []
        verdicts = {"allowed": 0, "denied": 0}
        lock = threading.Lock()

        def client(idx: int) -> None:
            n = total // args.clients + (1 if idx < total % args.clients else 0)
            local: list[float] = []
            with httpx.Client(verify=ctx, timeout=5, headers={"Content-Type": "application/json"}) as c:
                for _ in range(3):  # warm the connection and the server
                    c.post(url + "/validate", content=bodies[0])
                start = time.perf_counter() + idx * interval / args.clients
                for i in range(n):
                    due = start + i * interval
                    now = time.perf_counter()
                    if due > now:
                        time.sleep(due - now)
                    body = bodies[(i * args.clients + idx) % len(bodies)]
                    t0 = time.perf_counter()
                    r = c.post(url + "/validate", content=body)
                    dt = time.perf_counter() - t0
                    local.append(dt)
                    if r.status_code != 200 or "response" not in r.json():
                        with lock:
                            failures.append(f"HTTP {r.status_code}: {r.text[:200]}")
                        continue
                    with lock:
                        verdicts["allowed" if r.json()["response"]["allowed"] else "denied"] += 1
            with lock:
                latencies.extend(local)

        big: list[float] = []
        big_answers: dict[str, int] = {}
        small_done = threading.Event()

        def oversized() -> None:
            from webhook_big import big_review

            body, _ = big_review(3 * 2**20, None)
            with httpx.Client(verify=ctx, timeout=30, headers={"Content-Type": "application/json"}) as c:
                while not small_done.is_set():
                    t0 = time.perf_counter()
                    r = c.post(url + "/validate", content=body)
                    dt = time.perf_counter() - t0
                    answer = "other"
                    if r.status_code == 200:
                        resp = r.json()["response"]
                        message = (resp.get("status") or {}).get("message", "") + " ".join(
                            resp.get("warnings", [])
                        )
                        answer = "too_large" if "too large to review" in message else "unchecked" if (
                            "not checked" in message) else "other"  # fmt: skip
                    with lock:
                        big.append(dt)
                        big_answers[answer] = big_answers.get(answer, 0) + 1

        cpu_start = _tree_cpu_seconds(proc.pid)
        busy_start = _cpu_busy_seconds(pin) if pin is not None else None
        t_start = time.perf_counter()
        big_threads = [threading.Thread(target=oversized) for _ in range(args.oversized)]
        for t in big_threads:
            t.start()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t_start
        small_done.set()
        for t in big_threads:
            t.join()
        cpu_end = _tree_cpu_seconds(proc.pid)
        busy_end = _cpu_busy_seconds(pin) if pin is not None else None
        sent = len(latencies) + 3 * args.clients  # the measured reviews and each client's three warm-ups
        # (CPU per review counts the small reviews only: with --oversized it includes the oversized ones' cost)
        cpu_ms: dict[str, float] | None = None
        if cpu_start is not None and cpu_end is not None:
            server_ms = (cpu_end[0] - cpu_start[0]) / sent * 1000
            workers_ms = (cpu_end[1] - cpu_start[1]) / sent * 1000
            cpu_ms = {
                "total": round(server_ms + workers_ms, 2),
                "server": round(server_ms, 2),
                "workers": round(workers_ms, 2),
            }
        # the server's core as the kernel accounts it: busy with the server and its workers, with other
        # processes (other jobs on a shared machine, which the reviews queue behind), or idle
        core: dict[str, float] | None = None
        if cpu_start is not None and cpu_end is not None and busy_start is not None and busy_end is not None:
            ours = sum(cpu_end) - sum(cpu_start)
            core = {
                "kvlint": round(ours / elapsed, 3),
                "other_processes": round(max(0.0, (busy_end - busy_start) - ours) / elapsed, 3),
            }
        with httpx.Client(verify=ctx, timeout=5) as c:
            server_side = _server_histogram(c.get(url + "/metrics").text)
        summary = {
            "reviews": len(latencies),
            "seconds": round(elapsed, 2),
            "reviews_per_second": round(len(latencies) / elapsed, 1),
            "target_rate": args.rate,
            "p50_ms": round(_percentile(latencies, 0.50) * 1000, 2),
            "p90_ms": round(_percentile(latencies, 0.90) * 1000, 2),
            "p99_ms": round(_percentile(latencies, 0.99) * 1000, 2),
            "max_ms": round(max(latencies) * 1000, 2) if latencies else None,
            "verdicts": verdicts,
            "failures": len(failures),
            "distinct_objects": len(bodies),
            "server_cpu": pin,
            "server_side": server_side,
            "server_cpu_ms_per_review": cpu_ms,
            "server_core_busy": core,
            "oversized": {
                "threads": args.oversized,
                "reviews": len(big),
                "answers": big_answers,
                "p50_ms": round(_percentile(big, 0.50) * 1000, 1) if big else None,
                "max_ms": round(max(big) * 1000, 1) if big else None,
            },
            "root": args.root,
        }
        print(
            f"{summary['reviews']} reviews in {summary['seconds']} s: {summary['reviews_per_second']} reviews/s; "
            f"latency p50 {summary['p50_ms']} ms, p99 {summary['p99_ms']} ms (aim: p99 < 10 ms at 200/s)"
        )
        print(
            f"server side (kvlint_webhook_review_duration_seconds): p50 <= {server_side['p50_le_ms']} ms, "
            f"p99 <= {server_side['p99_le_ms']} ms, {server_side['under_10ms']:.1%} under 10 ms"
        )
        if cpu_ms is not None:
            print(
                f"CPU per review (from /proc): {cpu_ms['total']} ms = {cpu_ms['server']} ms in the server process "
                f"+ {cpu_ms['workers']} ms in the fork server and workers"
            )
        if core is not None:
            print(
                f"server's CPU {pin}: {core['kvlint']:.1%} busy with the server and its workers, "
                f"{core['other_processes']:.1%} with other processes (a quiet machine: about 0%)"
            )
        if args.oversized:
            o = summary["oversized"]
            print(
                f"oversized (3 MiB, {args.oversized} threads back to back): {o['reviews']} answered {o['answers']}, "
                f"p50 {o['p50_ms']} ms, max {o['max_ms']} ms"
            )
        print(json.dumps(summary))
        for f in failures[:5]:
            print("failure:", f, file=sys.stderr)
        return 1 if failures else 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
