"""Pipelines for the webhook tests' servers, in a module of their own: a review worker imports the module of
the pipeline it is given (it is pickled by name), and a replacement worker does so before its first review,
within that review's budget. ``tests/test_webhook.py`` imports httpx, trustme, click and Starlette's test
helpers; on a loaded machine importing it took longer than the 0.5 s budget of the review that needed it."""

from __future__ import annotations

import time
from typing import Any

#: The review budget of tests/test_webhook.py's servers, in seconds. Every review those tests expect checked
#: must finish within it in wall time: it was 0.5 s, which a stall of a loaded CI machine (a 2-core runner
#: shared with other jobs) can outlast; 3 s leaves seconds, and ``slow-*`` objects still run past it (3x).
BUDGET_S = 3.0


def slow_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, but 3x the review budget late for objects named ``slow-*``."""
    from kvlint.pipeline import run_documents

    if any(d.name.startswith("slow-") for d in loaded.documents):
        time.sleep(BUDGET_S * 3)
    return run_documents(loaded, options)


def gated_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, but for a document whose ``data.gate`` names a file, only once that file exists (the test
    creates it when the review may finish; at most 30 s), so a test orders reviews by events, not by sleeps."""
    import os

    from kvlint.pipeline import run_documents

    for d in loaded.documents:
        gate = (d.data.get("data") or {}).get("gate") if isinstance(d.data, dict) else None
        if gate:
            deadline = time.monotonic() + 30
            while not os.path.exists(gate) and time.monotonic() < deadline:
                time.sleep(0.01)
    return run_documents(loaded, options)


def failing_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, but raises for a document named ``fail-*`` (the worker reports the error back)."""
    from kvlint.pipeline import run_documents

    if any(d.name.startswith("fail-") for d in loaded.documents):
        raise ValueError("a pipeline error")
    return run_documents(loaded, options)


class _Mkdir:
    """Unpickled, makes the directory ``path``: what a worker made to run other code could write to its pipe to
    run code in the server, were the server to unpickle the worker's replies."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        import os

        return (os.mkdir, (self.path,))


def _worker_locals() -> dict[str, Any]:
    """The locals of the worker loop (``kvlint.webhook.worker.worker_main``) this pipeline runs in: its pipe's
    descriptor ``fd`` and the review's ``seq``."""
    import sys

    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "worker_main":
        frame = frame.f_back  # type: ignore[assignment]
    assert frame is not None, "not run by a review worker"
    return frame.f_locals


def forging_pipeline(loaded: Any, options: Any) -> Any:
    """run_documents, but for a document named ``forge-*`` the worker first writes to its pipe, as its reply, a
    pickle that makes the directory named by the document's ``example.com/mark`` annotation when unpickled
    (framed as replies are: a 4-byte big-endian length, then the bytes), as a worker running other code could."""
    import pickle
    import struct

    from kvlint.pipeline import run_documents

    for d in loaded.documents:
        if d.name.startswith("forge-"):
            mark = d.data["metadata"]["annotations"]["example.com/mark"]
            data = pickle.dumps(_Mkdir(mark), pickle.HIGHEST_PROTOCOL)
            os_write(_worker_locals()["fd"], struct.pack("!i", len(data)) + data)
    return run_documents(loaded, options)


def os_write(fd: int, data: bytes) -> None:
    import os

    while data:
        data = data[os.write(fd, data) :]
