"""Benchmark one big review over TLS on loopback: the largest DynamoGraphDeployment the request size limit
admits, with the review workers' cyclic garbage collector on and off, interleaved in the same run.

Starts two ``kvlint webhook serve`` child processes (one review worker each, the chart's 512 MiB worker
memory limit, a review budget long enough for the review to finish), one with ``KVLINT_WEBHOOK_WORKER_GC=1``
(collection during a review, as before) and one without (the default,
:data:`kvlint.webhook.worker.COLLECT_DURING_REVIEW`), and sends each the same AdmissionReview in turn,
``--repeat`` times. The object is a ``nvidia.com/v1beta1`` DynamoGraphDeployment of as many small vLLM
components as fit in ``--max-request-bytes`` (3 MiB, the default limit: 16,000 or so). Since the webhook
reviews at most 256 pod templates per object (:data:`kvlint.webhook.request_options.MAX_REVIEW_SIZE`), such
an object is read and answered with a "too large to review" KV001 error, not analysed; pass ``--components
256`` for the largest object analysed in full. Reported per server:
the latency at the client (request sent to response read), the CPU seconds its workers spent (``/proc``),
and the workers' peak address space and resident set (``VmPeak``, ``VmHWM``), which must stay below the
worker memory limit (``RLIMIT_AS``).

Usage::

    python bench/webhook_big.py [--repeat 3] [--components N] [--root DIR]

``--root`` runs another checkout's kvlint (the server's working directory; ``python -m`` puts it first on the
path). Bounded and self-stopping: the children are terminated at the end (killed if they do not exit).
Exit status 1 when a server did not start or a review was not answered with HTTP 200, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from webhook import ROOT, _free_port, admission_review  # noqa: E402


def component(i: int) -> dict[str, Any]:
    """One small DynamoGraphDeployment component (v1beta1 ``components[]``): a vLLM worker kvlint reads."""
    return {
        "name": f"w{i}",
        "type": "worker",
        "podTemplate": {
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct"],
                    }
                ]
            }
        },
    }


def big_review(max_bytes: int, components: int | None) -> tuple[bytes, int]:
    """The AdmissionReview body of the DynamoGraphDeployment with ``components`` components, or with as many
    as fit in ``max_bytes``; and that number."""

    def body(n: int) -> bytes:
        obj = {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "big", "namespace": "serving"},
            "spec": {"components": [component(i) for i in range(n)]},
        }
        return json.dumps(admission_review(obj, uid="big")).encode()

    if components is not None:
        return body(components), components
    lo, hi = 1, 2
    while len(body(hi)) <= max_bytes:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the largest n whose body fits
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if len(body(mid)) <= max_bytes else (lo, mid)
    return body(lo), lo


def _descendants(root: int) -> list[int]:
    """Live descendants of ``root`` (the fork server and the review workers), from ``/proc``."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out = []
    for pid in parent:
        p, hops = pid, 0
        while p in parent and p != root and hops < 64:
            p, hops = parent[p], hops + 1
        if p == root and pid != root:
            out.append(pid)
    return out


def _status(pid: int) -> dict[str, int]:
    """``VmPeak``/``VmHWM`` (KiB) of ``pid``, and its CPU ticks (user + system)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmPeak", "VmHWM"):
                    out[key] = int(value.split()[0])
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out["ticks"] = int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        pass
    return out


def _workers(proc: subprocess.Popen[bytes]) -> dict[int, dict[str, int]]:
    """The review workers of a server (descendants with a parent other than the server: the fork server's
    children), with :func:`_status`."""
    pids = _descendants(proc.pid)
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        if ppid != proc.pid:
            out[pid] = _status(pid)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="reviews sent to each server")
    ap.add_argument("--components", type=int, default=None, help="default: as many as fit the size limit")
    ap.add_argument("--max-request-bytes", type=int, default=3 * 2**20)
    ap.add_argument("--worker-memory", default="512Mi", help="each worker's address-space limit")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose kvlint the servers run")
    args = ap.parse_args(argv)

    import httpx
    import trustme

    body, n = big_review(args.max_request_bytes, args.components)
    print(f"DynamoGraphDeployment of {n} components: a {len(body)}-byte AdmissionReview")
    tmp = tempfile.mkdtemp(prefix="kvlint-bench-big-")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    cert, key, ca_file = (os.path.join(tmp, name) for name in ("tls.crt", "tls.key", "ca.crt"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(ca_file)
    ctx = ssl.create_default_context(cafile=ca_file)
    variants = {"gc on": "1", "gc off": ""}
    servers: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        for name, flag in variants.items():
            port = _free_port()
            # no probe listener: its default port 8080 may be taken (by another server)
            cmd = [sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1",
                   "--port", str(port), "--tls-cert", cert, "--tls-key", key, "--workers", "1",
                   "--worker-memory", args.worker_memory, "--timeout", "30",
                   "--max-request-bytes", str(args.max_request_bytes), "--log-level", "warning",
                   "--drain-seconds", "0", "--probe-port", "0"]  # fmt: skip
            env = {**os.environ, "KVLINT_WEBHOOK_WORKER_GC": flag, "KVLINT_WEBHOOK_WORKER_NICE": "0"}
            env.pop("PYTHONPATH", None)
            proc = subprocess.Popen(
                cmd, cwd=args.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            servers[name] = (proc, f"https://127.0.0.1:{port}")
        for name, (proc, url) in servers.items():
            deadline = time.monotonic() + 60
            with httpx.Client(verify=ctx, timeout=5) as c:
                while True:
                    try:
                        if c.get(url + "/readyz").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    if proc.poll() is not None or time.monotonic() > deadline:
                        err = proc.stderr.read().decode() if proc.stderr else ""
                        print(f"server {name} did not start:\n{err[-2000:]}", file=sys.stderr)
                        return 1
                    time.sleep(0.05)
        results: dict[str, dict[str, list[float]]] = {
            name: {"latency_s": [], "worker_cpu_s": []} for name in servers
        }
        tick = os.sysconf("SC_CLK_TCK")
        failed = False
        for _ in range(args.repeat):
            for name, (proc, url) in servers.items():
                before = sum(s.get("ticks", 0) for s in _workers(proc).values())
                with httpx.Client(verify=ctx, timeout=120) as c:
                    t0 = time.perf_counter()
                    r = c.post(url + "/validate", content=body, headers={"Content-Type": "application/json"})
                    dt = time.perf_counter() - t0
                after = sum(s.get("ticks", 0) for s in _workers(proc).values())
                if r.status_code != 200 or "response" not in r.json():
                    print(f"{name}: HTTP {r.status_code}: {r.text[:300]}", file=sys.stderr)
                    failed = True
                    continue
                results[name]["latency_s"].append(round(dt, 3))
                results[name]["worker_cpu_s"].append(round((after - before) / tick, 2))
        summary: dict[str, Any] = {
            "components": n,
            "body_bytes": len(body),
            "worker_memory": args.worker_memory,
        }
        for name, (proc, _) in servers.items():
            workers = _workers(proc)
            peak = max((s.get("VmPeak", 0) for s in workers.values()), default=0)
            hwm = max((s.get("VmHWM", 0) for s in workers.values()), default=0)
            res = results[name]
            summary[name] = {
                **res,
                "best_latency_s": min(res["latency_s"], default=None),
                "best_worker_cpu_s": min(res["worker_cpu_s"], default=None),
                "worker_vm_peak_mib": peak >> 10,
                "worker_rss_peak_mib": hwm >> 10,
            }
            print(
                f"{name}: latency {res['latency_s']} s, worker CPU {res['worker_cpu_s']} s; worker peak "
                f"address space {peak >> 10} MiB, resident {hwm >> 10} MiB (limit {args.worker_memory})"
            )
        print(json.dumps(summary))
        return 1 if failed else 0
    finally:
        for proc, _ in servers.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


if __name__ == "__main__":
    sys.exit(main())
