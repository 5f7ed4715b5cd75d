"""A webhook server in its own process for tests/test_webhook_hostile.py (so the test's own client threads
do not share the server's GIL and skew its latency).

``python tests/hostile_server.py CERT KEY BUDGET`` serves ``/validate`` over TLS and the probe listener over plain
HTTP on free loopback ports with two review workers, a review budget of BUDGET seconds and 1 s header/body
deadlines,
trusting the operator account ``system:serviceaccount:operators:controller-manager`` beside the default
controllers (as an admin trusts an installed operator; the default alone is tested with ``kvlint webhook
serve`` itself in tests/test_webhook_trust.py);
its pipeline is ``run_documents`` except that objects named ``spin-*`` pin a CPU for ever (only killing
the worker ends such a review) and ``hog-*`` ones allocate more than a worker may. It prints ``{"port": N, "probe_port": M}`` on one line once ready and
stops when its standard input closes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# The checkout's kvlint, as the test process imports it (``python -m pytest`` puts the working directory first):
# run as a script, this file's own directory would come first and ``import kvlint`` would find whichever kvlint
# the interpreter has installed (an editable install of another checkout, in a shared virtual environment).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def spin_pipeline(loaded: Any, options: Any) -> Any:
    """``run_documents``, except for objects named ``spin-*``, which never finish, and ``hog-*``, which
    try to allocate 4 GiB (more than a worker's address-space cap)."""
    from kvlint.pipeline import run_documents

    if any(d.name.startswith("spin-") for d in loaded.documents):
        while True:
            pass
    if any(d.name.startswith("hog-") for d in loaded.documents):
        hog = bytearray(4 * 2**30)
        return hog
    return run_documents(loaded, options)


def main() -> None:
    from kvlint.webhook.app import create_app
    from kvlint.webhook.review import DEFAULT_TRUSTED_CONTROLLERS, WebhookSettings
    from kvlint.webhook.server import ServerThread, make_reloader

    cert, key, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
    settings = WebhookSettings(
        timeout_seconds=budget,
        workers=2,
        header_timeout_seconds=1.0,
        body_timeout_seconds=1.0,
        trusted_controllers=(
            *DEFAULT_TRUSTED_CONTROLLERS,
            "system:serviceaccount:operators:controller-manager",
        ),
    )
    app = create_app(settings, pipeline=spin_pipeline)
    reloader = make_reloader(cert, key, app.state.webhook.metrics, interval=3600)
    srv = ServerThread(app, reloader, probe_port=0).start()
    assert srv.probes is not None
    print(json.dumps({"port": srv.port, "probe_port": srv.probes.port}), flush=True)
    sys.stdin.read()
    srv.stop()


if __name__ == "__main__":
    main()
