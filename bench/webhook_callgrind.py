"""Instructions the webhook's server process spends per review (callgrind), deterministic where
``bench/webhook.py``'s CPU times move with a shared machine's load.

Starts ``kvlint webhook serve`` on 127.0.0.1 under ``valgrind --tool=callgrind`` (the server process only:
``--trace-children=no``, so the fork server and the review workers run natively), warms it with the bench's
reviews, zeroes callgrind's counters (``callgrind_control --zero``), sends ``--reviews`` reviews (the objects
of ``bench/webhook.py``, in turn) over TLS on one kept-alive connection, one at a time, dumps the counters
(``callgrind_control --dump``) and prints the instructions per review. ``PYTHONHASHSEED=0``. Loopback only,
bounded: the server is stopped at the end.

Usage::

    python bench/webhook_callgrind.py [--reviews 300] [--root DIR] [--out DIR]

``--root`` runs another checkout's kvlint (its working directory), for an A/B. ``--out`` keeps the callgrind
dump (``callgrind_annotate`` reads it). Needs ``valgrind`` on the PATH.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _total(path: str) -> int:
    """The ``summary:``/``totals:`` instruction count of a callgrind dump."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise ValueError(f"no totals in {path}")


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; see the module docstring."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reviews", type=int, default=300, help="reviews measured (1 to 100,000)")
    ap.add_argument("--root", default=str(ROOT), help="the checkout whose kvlint the server runs")
    ap.add_argument("--out", default=None, help="directory to keep the callgrind dump in")
    args = ap.parse_args(argv)
    if not 1 <= args.reviews <= 100_000:
        ap.error("--reviews must be between 1 and 100,000")
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("valgrind (callgrind) is not on the PATH", file=sys.stderr)
        return 1

    import httpx
    import trustme
    from webhook import _free_port, reviews

    bodies = reviews()
    tmp = tempfile.mkdtemp(prefix="kvlint-cg-")
    out_dir = args.out or tmp
    os.makedirs(out_dir, exist_ok=True)
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    cert, key, ca_file = (os.path.join(tmp, n) for n in ("tls.crt", "tls.key", "ca.crt"))
    leaf.cert_chain_pems[0].write_to_path(cert)
    leaf.private_key_pem.write_to_path(key)
    ca.cert_pem.write_to_path(ca_file)
    port = _free_port()
    prefix = os.path.join(out_dir, "callgrind.out")
    cmd = ["valgrind", "--tool=callgrind", "--trace-children=no", f"--callgrind-out-file={prefix}.%p",
           sys.executable, "-m", "kvlint.webhook.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--tls-cert", cert, "--tls-key", key, "--log-level", "warning", "--drain-seconds", "0",
           "--probe-port", "0", "--timeout", "25"]  # fmt: skip
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=args.root)
    proc = subprocess.Popen(cmd, cwd=args.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"https://127.0.0.1:{port}"
    ctx = ssl.create_default_context(cafile=ca_file)
    try:
        deadline = time.monotonic() + 600
        with httpx.Client(verify=ctx, timeout=60, headers={"Content-Type": "application/json"}) as c:
            while True:
                try:
                    if c.get(url + "/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    print("server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            for body in bodies * 4:  # warm: each object's memos in the workers, the server's code paths
                c.post(url + "/validate", content=body)
            subprocess.run(["callgrind_control", "--zero", str(proc.pid)], check=True, capture_output=True)
            for i in range(args.reviews):
                r = c.post(url + "/validate", content=bodies[i % len(bodies)])
                if r.status_code != 200:
                    print(f"HTTP {r.status_code}: {r.text[:200]}", file=sys.stderr)
                    return 1
            before = set(glob.glob(prefix + ".*"))
            subprocess.run(["callgrind_control", "--dump", str(proc.pid)], check=True, capture_output=True)
            for _ in range(600):
                dumps = sorted(set(glob.glob(prefix + ".*")) - before)
                if dumps:
                    break
                time.sleep(0.1)
            else:
                print("no callgrind dump", file=sys.stderr)
                return 1
        time.sleep(1.0)
        total = _total(dumps[-1])
        print(f"{args.reviews} reviews: {total:,} instructions in the server process, "
              f"{total / args.reviews / 1e6:.3f} M a review (dump {dumps[-1]})")  # fmt: skip
        return 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
