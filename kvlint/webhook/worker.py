"""The webhook's review worker: a separate process that runs the ``kvlint check`` pipeline on one object at
a time, so that no review can hold the server's event loop or a thread it cannot take back.

:class:`~kvlint.webhook.pool.ReviewPool` starts each worker from a ``multiprocessing`` fork server that
has imported kvlint and linted :data:`WARM_UP_OBJECT` once (:mod:`kvlint.webhook._preload`), so a new
worker starts in milliseconds with its catalogues loaded; a worker that overruns its review's budget is
killed (``SIGKILL``) and replaced, which is the only way to stop CPU-bound Python code.

Messages on the worker's pipe (pickled tuples, framed as ``multiprocessing.Connection.send_bytes`` frames
them; the worker writes and reads its end, which blocks, with :func:`send_message` / :func:`recv_message`,
the server its end, which does not, a piece at a time from the event loop (:mod:`kvlint.webhook.pool`); both
ends are kvlint in the same pod):

* server -> worker: ``("options", Options)`` (sent when the pipeline options change, e.g. a new node
  inventory with ``--cluster``), ``("settings", WebhookSettings)`` (sent to each worker once), and
  ``("review", seq, body)`` (a ``POST /validate`` request body as received:
  :func:`kvlint.webhook.answer.answer_review`) or
  ``("old", seq, body, rows, suppressed)`` (that body again, an UPDATE whose ``oldObject`` is to be linted, with
  its new object's rows) or ``("lint", seq, object, label)`` (an object: the warm-up);
* worker -> server: for a ``review``, ``("answer", ...)``, ``("bad", ...)`` or ``("update", ...)``
  (:func:`kvlint.webhook.answer.answer_review`), for an ``old``, ``("answer", ...)``; for a ``lint``, ``("ok", seq, rows, suppressed)`` (``rows``: :func:`reply_rows` of
  the diagnostics); for either, ``("error", seq, "Type: message")``.

A worker limits its own address space (``RLIMIT_AS``) when given a memory limit, so an allocation a
manifest provokes ends in ``MemoryError`` (answered as an internal error) instead of the pod's OOM kill,
and runs at a lower scheduling priority (:data:`WORKER_NICENESS`), so the server's event loop and probes
get the CPU first. The cyclic garbage collector is off while a worker lints (:data:`COLLECT_DURING_REVIEW`).
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

#: A Deployment linted once at start-up so the first real review does not pay for imports and catalogue
#: loading (vLLM 0.11.0, Llama 3.1 8B from the bundled catalogue, one L4 via the GKE node label).
WARM_UP_OBJECT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kvlint-warm-up", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
                "containers": [
                    {
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.11.0",
                        "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "8192"],
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                ],
            }
        }
    },
}

WARM_UP_LABEL = "<admission Deployment/default/kvlint-warm-up>.json"

#: Scheduling niceness added to each worker process (``nice(2)``): on a pod's few cores, a worker busy with
#: a heavy review yields the CPU to the review event loop and the probe listener. The environment variable
#: ``KVLINT_WEBHOOK_WORKER_NICE`` overrides it (benchmarks; 0 keeps the server's priority).
WORKER_NICENESS = int(os.environ.get("KVLINT_WEBHOOK_WORKER_NICE", "10"))


#: Whether the cyclic garbage collector may run while a worker lints an object. It may not: the pipeline
#: builds every value of the object as a tracked container (a 3 MiB DynamoGraphDeployment of 16,351
#: components: 1.3 million of them) and makes almost no reference cycles, yet each time the survivors of
#: young collections grow by a quarter CPython runs a full collection over all of them. That object, the
#: largest the default size limit admits, took a worker 4.6 s of CPU with collection and 2.9 s without over
#: TLS (``bench/webhook_big.py``, best of 3 interleaved; latency 5.1 s and 3.1 s), and a review that
#: overruns its budget is admitted under fail-open. What a review leaves in cycles is small and bounded by
#: the request: the whole corpus and the fixtures, 507 objects, left 825 objects in cycles (at most 33 per
#: review, the closures of one ``json.dumps(indent=...)``), and 5,805 hostile shapes of
#: ``tools/hostile_shapes.py`` (all but ``retype``, and every tenth of it) at most 66 per review, collected
#: as soon as collection is back on; the worker's peak address space on that largest object is the same
#: either way (``VmPeak`` 307 MiB, under the 512 MiB ``RLIMIT_AS``). Small reviews cost the same (the
#: webhook fixtures: 0.92 ms each, best of 15, both ways). The environment variable
#: ``KVLINT_WEBHOOK_WORKER_GC=1`` lets it run (benchmarks).
COLLECT_DURING_REVIEW = os.environ.get("KVLINT_WEBHOOK_WORKER_GC", "") == "1"


def encode_message(message: tuple[Any, ...]) -> bytes:
    """A pipe message as ``Connection.send`` would write it, read back by ``Connection.recv`` (plain
    :func:`pickle.dumps`, highest protocol): ``send`` builds a ``ForkingPickler`` per message, which copies
    ``copyreg``'s dispatch table to add reducers for sockets and descriptors that no message carries; about
    3 microseconds of each message's 4 to 12."""
    return pickle.dumps(message, pickle.HIGHEST_PROTOCOL)


_HEADER = struct.Struct("!i")
#: The frame header of a pipe message: its length in bytes, a 4-byte big-endian signed int (as
#: ``Connection.send_bytes`` writes it for messages under 2 GiB).
FRAME_HEADER = _HEADER


def frame_messages(messages: Sequence[tuple[Any, ...]]) -> bytes:
    """The bytes :func:`send_message` writes for each of ``messages`` (:func:`encode_message`, framed), in one
    buffer: what the server writes to a worker's pipe for one review. Raises ValueError for a message of
    2 GiB or more (as :func:`send_message`)."""
    parts: list[bytes] = []
    for message in messages:
        data = encode_message(message)
        if len(data) > 0x7FFFFFFF:
            raise ValueError("message too large for the review pipe")
        parts.append(_HEADER.pack(len(data)))
        parts.append(data)
    return b"".join(parts)


def send_message(fd: int, data: bytes) -> None:
    """Write ``data`` (an :func:`encode_message`) to the pipe descriptor ``fd`` framed as
    ``Connection.send_bytes`` frames it (a 4-byte big-endian length, then the bytes; for messages under
    2 GiB), so the other end's ``Connection.recv`` reads it; without the ``Connection`` object's checks and
    layers, which took about a third of a message's hand-over. Raises OSError when the pipe is closed."""
    if len(data) > 0x7FFFFFFF:  # Connection's longer header: rare enough to leave to it
        raise ValueError("message too large for the review pipe")
    buf = memoryview(_HEADER.pack(len(data)) + data)
    while buf:
        buf = buf[os.write(fd, buf) :]


def recv_message(fd: int) -> Any:
    """Read one message framed as ``Connection.send_bytes`` frames it (see :func:`send_message`) from the
    pipe descriptor ``fd`` and unpickle it. Raises EOFError when the other end closed the pipe before a
    message, OSError when it closed it in the middle of one."""
    head = _read_exactly(fd, 4, True)
    (size,) = _HEADER.unpack(head)
    if size < 0:  # Connection's header for 2 GiB and more: never sent by kvlint
        raise OSError("unexpected message header on the review pipe")
    return pickle.loads(_read_exactly(fd, size, False))


def _read_exactly(fd: int, size: int, first: bool) -> bytes:
    data = os.read(fd, size)
    if len(data) == size:
        return data
    if not data and first:
        raise EOFError
    chunks = [data]
    left = size - len(data)
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            raise OSError("got end of file during message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


@dataclass
class LintOutcome:
    """What a worker returns for one object: the reported diagnostics and the suppressed count (the parts
    of a ``CheckResult`` a verdict needs; the rest stays in the worker). From a worker the diagnostics are
    :class:`ReplyDiagnostic` objects, the errors and warnings only."""

    diagnostics: list[Any] = field(default_factory=list)
    suppressed: int = 0


class ReplyDiagnostic:
    """The fields of one error or warning that the server's verdict, response, log line and metrics read
    (:func:`kvlint.webhook.review.build_response`): built on the server from a worker's reply row
    (:func:`reply_rows`)."""

    __slots__ = ("rule", "severity", "message", "fix", "container", "object", "setting", "stands_for")

    def __init__(
        self,
        rule: str,
        severity: str,
        message: str,
        fix: str,
        container: str,
        object: str = "",
        setting: str = "",
        stands_for: int = 1,
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.message = message
        self.fix = fix
        self.container = container
        self.object = object
        self.setting = setting
        self.stands_for = stands_for

    def __repr__(self) -> str:
        return f"ReplyDiagnostic({self.rule!r}, {self.severity!r}, {self.message!r}, {self.fix!r}, {self.container!r})"


def reply_rows(diagnostics: Any) -> tuple[tuple[str, str, str, str, str, str, str, int], ...]:
    """A worker's reply form of a review's diagnostics: ``(rule, severity, message, fix, container, object,
    setting, stands_for)`` of each error and warning (``object`` and ``setting`` complete a finding's
    :func:`~kvlint.fingerprint.identity`, what an UPDATE's findings are matched with its old object's by, and
    ``stands_for`` how many findings it counts as there, :func:`kvlint.engines.options.findings_stood_for`), in
    order (info diagnostics are never sent to the API server, logged or counted).
    Plain tuples of strings and an int: unpickled on the server's event loop about 7x faster than the ``Diagnostic``
    objects (5,000 findings: 0.9 ms against 6.7 ms; with the :class:`ReplyDiagnostic` objects built from
    them, 1.9 ms)."""
    return tuple(
        (d.rule, d.severity, d.message, d.fix, d.container, d.object, d.setting, d.stands_for)
        for d in diagnostics
        if d.severity == "error" or d.severity == "warning"
    )


def lint_object(obj: dict[str, Any], label: str, options: Any, pipeline: Any = None) -> Any:
    """Run the ``kvlint check`` pipeline on one object and return its ``CheckResult``.

    The object is linted as its indented JSON text read by :func:`kvlint.load.load_text` would be, so every
    value carries a position as from a file, under the name ``label``
    (:func:`kvlint.webhook.jsonload.load_object` builds those documents without writing the text where it
    reproduces them exactly); the lines of that text are what positions inside scripts are looked up in
    (never a file of that name). ``pipeline`` replaces
    :func:`kvlint.pipeline.run_documents` (tests, benchmarks). Raises whatever the pipeline raises.
    """
    from kvlint.load import load_text

    if pipeline is None:
        from kvlint.pipeline import run_documents

        pipeline = run_documents
    from kvlint.engines.command import HELD_LINES
    from kvlint.webhook.jsonload import LazyJsonLines, dump_text, load_object

    # The documents as load_text would read them from the JSON text, built from the object itself
    # (kvlint.webhook.jsonload); the text is written only for what that does not reproduce, and its lines
    # only when a position inside a script is looked up.
    loaded = load_object(obj, label)
    lines: Sequence[str]
    if loaded is None:
        text = dump_text(obj)
        loaded = load_text(text, label)
        lines = text.split("\n")
    else:
        lines = LazyJsonLines(obj)
    # Positions inside scripts are found in the object's own lines, held here for the review: ``label`` is
    # not a file, and the server's disk is never looked up by a name the request chose.
    HELD_LINES[label] = lines
    try:
        return pipeline(loaded, options)
    finally:
        HELD_LINES.pop(label, None)


def warm_up(options: Any) -> None:
    """Lint :data:`WARM_UP_OBJECT` once with ``options`` (the request path's,
    :func:`kvlint.webhook.review.webhook_options`): loads the rule, accelerator and model catalogues."""
    lint_object(WARM_UP_OBJECT, WARM_UP_LABEL, options)


def limit_memory(limit_bytes: int | None) -> None:
    """Cap this process's address space at ``limit_bytes`` (``RLIMIT_AS``); no-op when None/0 or where the
    platform has no ``resource`` module."""
    if not limit_bytes:
        return
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limit_bytes if hard == resource.RLIM_INFINITY else min(limit_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):  # pragma: no cover - platform without RLIMIT_AS
        pass


def worker_main(conn: Any, pipeline: Any = None, memory_limit: int | None = None, answer: Any = None) -> None:
    """The worker loop: read messages from ``conn`` until the server closes it (see the module docstring).
    ``answer`` answers a ``review`` message (:func:`kvlint.webhook.answer.answer_review`, passed by the pool:
    that module imports this one); without it such a message is answered ``("error", ...)``.

    Never raises for a review: any exception, ``MemoryError`` included, is sent back as ``("error", ...)``.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when workers end
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    limit_memory(memory_limit)
    try:  # the review event loop and the probes win the CPU over a worker busy with a heavy review
        os.nice(WORKER_NICENESS)
    except (AttributeError, OSError):  # pragma: no cover - platform without nice
        pass
    options: Any = None
    settings: Any = None
    fd = conn.fileno()
    while True:
        try:
            msg = recv_message(fd)
        except (EOFError, OSError):
            return
        kind = msg[0]
        if kind == "options":
            options = msg[1]
            continue
        if kind == "settings":
            settings = msg[1]
            continue
        body: Any = None
        obj: Any = None
        label: Any = None
        old: Any = None
        if kind == "review":
            seq, body = msg[1], msg[2]
        elif kind == "old":  # an UPDATE's old object, the new object's rows given back (answer_review)
            seq, body, old = msg[1], msg[2], (msg[3], msg[4])
        elif kind == "lint":
            _, seq, obj, label = msg
        else:
            continue
        del msg
        # No cyclic garbage collection during a review (:data:`COLLECT_DURING_REVIEW`): re-enabled once the
        # reply is out, so the next allocation's young collection takes what cycles the review left.
        collect = gc.isenabled() and not COLLECT_DURING_REVIEW
        if collect:
            gc.disable()
        try:
            try:
                if options is None:
                    from kvlint.webhook.request_options import webhook_options

                    options = webhook_options()
                reply: tuple[Any, ...]
                if kind == "review" or kind == "old":
                    if answer is None:
                        raise RuntimeError("this worker answers no review message")
                    reply = answer(body, seq, settings, options, pipeline, old)
                else:
                    result = lint_object(obj, label, options, pipeline)
                    reply = (
                        "ok",
                        seq,
                        reply_rows(result.diagnostics),
                        int(getattr(result, "suppressed", 0) or 0),
                    )
                    del result
            except MemoryError:
                reply = ("error", seq, "MemoryError: the review needed more memory than a worker may use")
            except Exception as exc:  # any kvlint bug: reported, the worker lives on
                reply = ("error", seq, f"{type(exc).__name__}: {str(exc)[:300]}")
            body = obj = old = None  # nothing of the review held until the next one
            try:
                send_message(fd, encode_message(reply))
            except (OSError, ValueError):
                return
        finally:
            if collect:
                gc.enable()


def worker_pid() -> int:
    """This process's id (for logs and tests)."""
    return os.getpid()


__all__ = [
    "FRAME_HEADER",
    "LintOutcome",
    "ReplyDiagnostic",
    "WARM_UP_LABEL",
    "WARM_UP_OBJECT",
    "encode_message",
    "frame_messages",
    "limit_memory",
    "lint_object",
    "recv_message",
    "send_message",
    "warm_up",
    "worker_main",
]
