"""The webhook's review worker: a separate process that runs the ``kvlint check`` pipeline on one object at
a time, so that no review can hold the server's event loop or a thread it cannot take back.

:class:`~kvlint.webhook.pool.ReviewPool` starts each worker from a ``multiprocessing`` fork server that
has imported kvlint and linted :data:`WARM_UP_OBJECT` once (:mod:`kvlint.webhook._preload`), so a new
worker starts in milliseconds with its catalogues loaded; a worker that overruns its review's budget is
killed (``SIGKILL``) and replaced, which is the only way to stop CPU-bound Python code.

Messages on the worker's pipe (framed as ``multiprocessing.Connection.send_bytes`` frames them, in the wire
format of :func:`encode_message` and :func:`encode_reply`: no reply of a worker is unpickled; the worker writes
and reads its end, which blocks, with :func:`send_message` / :func:`recv_message`, the server its end, which
does not, a piece at a time from the event loop (:mod:`kvlint.webhook.pool`)):

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
A worker keeps up to :data:`kvlint.memory.stage.KEPT_PLANS` vLLM memory plans across its reviews
(:func:`kvlint.memory.stage.keep_plans`: keyed by every input's value, bounded in count and key size).
"""

from __future__ import annotations

import gc
import json
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


#: The frame header of a pipe message: its length in bytes, a 4-byte big-endian signed int (as
#: ``Connection.send_bytes`` writes it for messages under 2 GiB).
FRAME_HEADER = struct.Struct("!i")
_HEADER = FRAME_HEADER
#: Largest message either end writes or reads (the frame header's signed length).
_MAX_MESSAGE = 0x7FFFFFFF

# -- the wire format (issue 19) -------------------------------------------------------------------------------
#
# Each message is a frame (:data:`FRAME_HEADER`, then its bytes) whose first byte names its kind. No message a
# worker writes is unpickled: a worker lints hostile objects, and the server that reads its replies holds the
# serving certificate's key and answers the API server, so a worker made to run other code, or one confused by a
# kvlint bug, must not run code in the server. A reply is its kind, the review's sequence number and the length
# of its raw part (:data:`_REPLY_HEAD`), the raw part (a response's bytes, sent as the worker wrote them), then
# the rest as JSON (``json.loads`` builds only strings, numbers, booleans, None, lists and dicts); the server
# then checks every value's type before using it (:func:`kvlint.webhook.app.summary_review`,
# :meth:`kvlint.webhook.pool.ReviewPool.lint`) and the answer's uid and verdict against the request (as before).
# The server's messages to a worker: a review's body is sent as its raw bytes (:data:`_REQUEST_HEAD`), an
# UPDATE's rows as JSON, the warm-up object as JSON; only the server's own ``Options`` and ``WebhookSettings``
# (its configuration, no byte of a request in them) are pickled, read by the worker the server started.

_REPLY_CODES = {"answer": 1, "update": 2, "bad": 3, "ok": 4, "error": 5}
_REPLY_KINDS = {code: kind for kind, code in _REPLY_CODES.items()}
#: A reply's head: its kind (:data:`_REPLY_CODES`), the review's sequence number, the length of its raw part.
_REPLY_HEAD = struct.Struct("!BQI")
_REPLY_HEAD_SIZE = _REPLY_HEAD.size
_REQUEST_CODES = {"options": 1, "settings": 2, "review": 3, "old": 4, "lint": 5}
_REQUEST_KINDS = {code: kind for kind, code in _REQUEST_CODES.items()}
#: A request's head: its kind (:data:`_REQUEST_CODES`), the sequence number, the length of its raw part
#: (``review``, ``old``: the body; ``options``, ``settings``: sequence 0, the pickle).
_REQUEST_HEAD = _REPLY_HEAD
#: ``json.dumps`` of a message's JSON part: characters as they are (the decoder copies them in runs; an escape is
#: read one at a time), written as UTF-8 with a lone surrogate a finding quotes from the object passed through
#: (``surrogatepass``, read back the same), no NaN (no message holds a float).
_encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode


def _encode_meta(value: Any) -> bytes:
    return _encode_json(value).encode("utf-8", "surrogatepass")


class MalformedMessage(ValueError):
    """A message that is not one this wire format writes (its kind, its lengths or its JSON)."""


def _no_constant(name: str) -> Any:
    raise MalformedMessage(f"{name} in a message")


#: The decoder of a message's JSON part, made once (``json.loads`` given an argument builds one per call), and
#: its scanner, called directly (``JSONDecoder.decode`` adds two Python calls and two white-space matches).
_meta_decoder = json.JSONDecoder(parse_constant=_no_constant)
_scan_meta = (json.scanner.c_make_scanner or json.scanner.py_make_scanner)(_meta_decoder)  # type: ignore[attr-defined]


def _decode_meta(data: bytes | bytearray | memoryview) -> Any:
    """The JSON value that is the whole of ``data`` (as :data:`_encode_meta` writes it: no white space around);
    MalformedMessage for anything else."""
    try:
        text = str(data, "utf-8", "surrogatepass")
        value, end = _scan_meta(text, 0)
    except (StopIteration, ValueError, RecursionError) as exc:
        raise MalformedMessage(f"its JSON part does not decode ({type(exc).__name__})") from None
    if end != len(text):
        raise MalformedMessage("its JSON part does not decode (data after the value)")
    return value


def encode_reply(reply: tuple[Any, ...]) -> bytes:
    """A worker's reply (``("answer", seq, response_bytes, summary)``, ``("update", seq, rows, suppressed,
    response_bytes, summary)``, ``("bad", seq, status, message)``, ``("ok", seq, rows, suppressed)``,
    ``("error", seq, message)``) as the bytes of one message (not framed); :func:`decode_reply` reads it back.
    Raises ValueError for a reply of another kind or one whose parts are not JSON values."""
    kind = reply[0]
    raw: bytes = b""
    if kind == "answer":
        raw, meta = reply[2], reply[3]
    elif kind == "update":
        raw, meta = reply[4], (reply[2], reply[3], reply[5])
    elif kind in ("bad", "ok"):
        meta = (reply[2], reply[3])
    elif kind == "error":
        meta = reply[2]
    else:
        raise ValueError(f"no reply of kind {kind!r}")
    return b"".join((_REPLY_HEAD.pack(_REPLY_CODES[kind], reply[1], len(raw)), raw, _encode_meta(meta)))


def decode_reply(data: bytes | bytearray, max_summary: int | None = None) -> tuple[Any, ...]:
    """The reply :func:`encode_reply` wrote (its parts' types as JSON gives them: lists for tuples). Raises
    :class:`MalformedMessage` for bytes it does not write. Nothing in ``data`` is run: a kind byte, two lengths,
    raw bytes and JSON. ``max_summary``: the most bytes the JSON part of an ``answer``, ``bad`` or ``error``
    reply may have (a summary or a message; the JSON decoder builds about 25 times its size in objects), checked
    before it is decoded (:func:`kvlint.webhook.pool.summary_limit`); None: not checked."""
    if len(data) < _REPLY_HEAD_SIZE:
        raise MalformedMessage("a reply shorter than its head")
    code, seq, n = _REPLY_HEAD.unpack_from(data)
    end = _REPLY_HEAD_SIZE + n
    if end > len(data):
        raise MalformedMessage("a reply's raw part longer than the reply")
    kind = _REPLY_KINDS.get(code)
    if max_summary is not None and kind in ("answer", "bad", "error") and len(data) - end > max_summary:
        raise MalformedMessage(
            f"its JSON part of {len(data) - end:,} bytes, more than the {max_summary:,} its review's can be"
        )
    if kind == "answer":
        return (kind, seq, bytes(data[_REPLY_HEAD_SIZE:end]), _decode_meta(memoryview(data)[end:]))
    if kind is None:
        raise MalformedMessage(f"a reply of unknown kind {code}")
    meta = _decode_meta(memoryview(data)[end:])
    if kind == "error":
        return (kind, seq, meta)
    if type(meta) is not list or len(meta) != (3 if kind == "update" else 2):
        raise MalformedMessage(f"an {kind!r} reply of another shape")
    if kind == "update":
        return (kind, seq, meta[0], meta[1], bytes(data[_REPLY_HEAD_SIZE:end]), meta[2])
    return (kind, seq, meta[0], meta[1])


def encode_message(message: tuple[Any, ...]) -> bytes:
    """One of the server's messages to a worker (``("options", Options)``, ``("settings", WebhookSettings)``,
    ``("review", seq, body)``, ``("old", seq, body, rows, suppressed)``, ``("lint", seq, object, label)``) as the
    bytes of one message (not framed); :func:`decode_message` reads it back. A review's body goes as its raw
    bytes (no copy of it into a pickle), rows and the warm-up object as JSON; ``Options`` and ``WebhookSettings``
    pickled (highest protocol, plain :func:`pickle.dumps`: ``Connection.send`` built a ``ForkingPickler`` per
    message, about 3 microseconds of each)."""
    kind = message[0]
    code = _REQUEST_CODES.get(kind)
    if code is None:
        raise ValueError(f"no message of kind {kind!r}")
    if kind == "review":
        return b"".join((_REQUEST_HEAD.pack(code, message[1], len(message[2])), message[2]))
    if kind == "old":
        head = _REQUEST_HEAD.pack(code, message[1], len(message[2]))
        return b"".join((head, message[2], _encode_meta((message[3], message[4]))))
    if kind == "lint":
        return _REQUEST_HEAD.pack(code, message[1], 0) + _encode_meta((message[2], message[3]))
    data = pickle.dumps(message[1], pickle.HIGHEST_PROTOCOL)
    return b"".join((_REQUEST_HEAD.pack(code, 0, len(data)), data))


def decode_message(data: bytes | bytearray) -> tuple[Any, ...]:
    """The message :func:`encode_message` wrote, as the tuple it was (JSON parts as lists). Raises
    :class:`MalformedMessage` for bytes it does not write."""
    size = _REQUEST_HEAD.size
    if len(data) < size:
        raise MalformedMessage("a message shorter than its head")
    code, seq, n = _REQUEST_HEAD.unpack_from(data)
    kind = _REQUEST_KINDS.get(code)
    if kind is None:
        raise MalformedMessage(f"a message of unknown kind {code}")
    if size + n > len(data):
        raise MalformedMessage("a message's raw part longer than the message")
    raw = bytes(data[size : size + n])
    if kind == "review":
        return (kind, seq, raw)
    if kind == "options" or kind == "settings":
        return (
            kind,
            pickle.loads(raw),
        )  # the server's configuration, from the server that started this worker
    meta = _decode_meta(memoryview(data)[size + n :])
    if type(meta) is not list or len(meta) != 2:
        raise MalformedMessage(f"a {kind!r} message of another shape")
    if kind == "old":
        return (kind, seq, raw, meta[0], meta[1])
    return (kind, seq, meta[0], meta[1])


def _framed(data: bytes) -> bytes:
    if len(data) > _MAX_MESSAGE:
        raise ValueError("message too large for the review pipe")
    return _HEADER.pack(len(data)) + data


#: A ``review`` message's frame header and head in one (:func:`frame_messages`' usual case).
_FRAMED_REVIEW = struct.Struct("!iBQI")


def frame_messages(messages: Sequence[tuple[Any, ...]]) -> bytes:
    """The bytes the server writes to a worker's pipe for one review: each of ``messages``
    (:func:`encode_message`) framed, in one buffer. Raises ValueError for a message of 2 GiB or more."""
    if (
        len(messages) == 1 and messages[0][0] == "review"
    ):  # the usual review: one header, one copy of the body
        _, seq, body = messages[0]
        size = _REQUEST_HEAD.size + len(body)
        if size > _MAX_MESSAGE:
            raise ValueError("message too large for the review pipe")
        return _FRAMED_REVIEW.pack(size, _REQUEST_CODES["review"], seq, len(body)) + body
    return b"".join(_framed(encode_message(message)) for message in messages)


def frame_reply(reply: tuple[Any, ...]) -> bytes:
    """The bytes a worker writes to its pipe for ``reply`` (:func:`encode_reply`, framed)."""
    return _framed(encode_reply(reply))


def send_message(fd: int, data: bytes) -> None:
    """Write ``data`` (an :func:`encode_reply` or :func:`encode_message`) to the pipe descriptor ``fd`` framed as
    ``Connection.send_bytes`` frames it (a 4-byte big-endian length, then the bytes; for messages under
    2 GiB), without the ``Connection`` object's checks and layers, which took about a third of a message's
    hand-over. Raises OSError when the pipe is closed."""
    buf = memoryview(_framed(data))
    while buf:
        buf = buf[os.write(fd, buf) :]


def recv_message(fd: int) -> Any:
    """Read one message framed as :func:`send_message` frames it from the pipe descriptor ``fd`` and decode it
    (:func:`decode_message`: what a worker reads). Raises EOFError when the other end closed the pipe before a
    message, OSError when it closed it in the middle of one."""
    return decode_message(recv_frame(fd))


def recv_frame(fd: int) -> bytes:
    """The bytes of one framed message read from ``fd`` (see :func:`recv_message`)."""
    head = _read_exactly(fd, 4, True)
    (size,) = _HEADER.unpack(head)
    if size < 0:  # Connection's header for 2 GiB and more: never sent by kvlint
        raise OSError("unexpected message header on the review pipe")
    return _read_exactly(fd, size, False)


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
    ``stands_for`` how many findings it counts as there, :func:`kvlint.types.findings_stood_for`), in
    order (info diagnostics are never sent to the API server, logged or counted).
    Plain tuples of strings and an int: sent as JSON (:func:`encode_reply`; they were pickled, and unpickled on the
    server's event loop about 7x faster than the ``Diagnostic`` objects), checked on the server by
    :func:`checked_rows`."""
    return tuple(
        (d.rule, d.severity, d.message, d.fix, d.container, d.object, d.setting, d.stands_for)
        for d in diagnostics
        if d.severity == "error" or d.severity == "warning"
    )


def checked_rows(rows: Any) -> list[Any] | None:
    """``rows`` when they are :func:`reply_rows` as a reply's JSON gives them back (a list of lists of seven
    strings and an int), else None: what the server checks before it builds a :class:`ReplyDiagnostic` of any."""
    if type(rows) is not list:
        return None
    for row in rows:
        if (
            type(row) is not list
            or len(row) != 8
            or type(row[7]) is not int
            or not all(type(value) is str for value in row[:7])
        ):
            return None
    return rows


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
        _say_long_key(obj, loaded)
    else:
        lines = LazyJsonLines(obj)
    # Positions inside scripts are found in the object's own lines, held here for the review: ``label`` is
    # not a file, and the server's disk is never looked up by a name the request chose.
    HELD_LINES[label] = lines
    try:
        return pipeline(loaded, options)
    finally:
        HELD_LINES.pop(label, None)


#: The longest key the YAML reader reads (PyYAML's limit on an implicit, "simple" key, ``Scanner.save_possible_simple_key``
#: gives it up past 1,024 characters): a longer key in an object's JSON text fails to parse.
MAX_YAML_KEY_CHARS = 1024


def long_key(obj: Any) -> tuple[str, int, int] | None:
    """The first key (depth first, in order) whose JSON text (quotes and escapes included, as
    :func:`kvlint.webhook.jsonload.dump_text` writes it) is longer than :data:`MAX_YAML_KEY_CHARS`, as ``(path to
    the mapping holding it, its length in characters, the length of its JSON text)``, else None. Iterative: the
    object is bounded by the request size, and its nesting was checked by the decoder."""
    from kvlint.webhook.jsonload import dump_text

    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            children = []
            for k, v in node.items():
                # an escape writes a character as at most 6 (\uXXXX): a key shorter than that cannot be too long
                if isinstance(k, str) and 6 * len(k) + 2 > MAX_YAML_KEY_CHARS:
                    written = len(dump_text(k))
                    if written > MAX_YAML_KEY_CHARS:
                        return where or "the object's top level", len(k), written
                children.append((f"{where}.{k}" if where else str(k), v))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(reversed([(f"{where}[{i}]", v) for i, v in enumerate(node)]))
    return None


def _say_long_key(obj: Any, loaded: Any) -> None:
    """Say what the KV001 of an object with a key over :data:`MAX_YAML_KEY_CHARS` is: the JSON text the worker
    reads the object from did not parse as YAML for that key alone, and the finding said "YAML syntax error:
    while parsing a flow mapping: did not find expected ',' or '}'" of a request that holds no YAML."""
    import dataclasses

    from kvlint.report.escape import printable
    from kvlint.statement import clip_words

    errors = [i for i, f in enumerate(loaded.findings) if f.rule == "KV001"]
    if not errors:
        return
    found = long_key(obj)
    if found is None:
        return
    where, n, written = found
    i = errors[0]
    loaded.findings[i] = dataclasses.replace(
        loaded.findings[i],
        message=clip_words(
            f"kvlint could not read this object: a key in {printable(where)} is {n:,} characters long ({written:,} "
            "as JSON, quotes included), and kvlint reads the object as JSON text with a YAML reader that takes "
            f"keys of at most {MAX_YAML_KEY_CHARS:,} characters there (PyYAML's limit on an implicit key); nothing "
            "in the object was checked"
        ),
        fix=long_key_fix(where, obj.get("kind") if isinstance(obj, dict) else None),
    )


#: Mappings whose keys the API server validates as label keys (qualified names): an object's or a pod
#: template's ``labels``, ``annotations`` (``ValidateAnnotations``), a pod's ``nodeSelector`` (``ValidatePodSpec``
#: calls ``ValidateLabels`` on it) and a label selector's ``matchLabels`` (``ValidateLabelSelector``).
_LABEL_KEY_MAPS = frozenset({"labels", "annotations", "nodeSelector", "matchLabels"})
#: The top-level mappings whose keys the API server validates as ConfigMap keys (``IsConfigMapKey``), by kind: a
#: Secret's ``stringData`` is merged into its ``data`` before validation.
_DATA_KEY_MAPS = {"ConfigMap": ("data", "binaryData"), "Secret": ("data", "stringData")}


def long_key_fix(where: str, kind: object = None) -> str:
    """The remedy for a key over :data:`MAX_YAML_KEY_CHARS` in the mapping at ``where`` (a dotted path, as
    :func:`long_key` gives it) of an object of kind ``kind`` (the object's ``kind``, any value), with the longest
    key the API server itself takes there, each figure said as what it is: a label or annotation key, and a
    ``nodeSelector`` or ``matchLabels`` key (:data:`_LABEL_KEY_MAPS`), is a qualified name, an optional
    DNS-subdomain prefix of at most 253 characters, ``/`` and a name of at most 63, 317 in all
    (k8s.io/apimachinery ``pkg/util/validation/validation.go``: ``IsQualifiedName``, ``DNS1123SubdomainMaxLength``,
    ``qualifiedNameMaxLength``; ``ValidateAnnotations`` and ``ValidateLabelName`` call it); a ConfigMap's or
    Secret's own ``data`` key at most 253 (``IsConfigMapKey``; :data:`_DATA_KEY_MAPS`). Elsewhere (a custom
    resource's ``spec.data``) only the reader's own limit is said."""
    last = where.rsplit(".", 1)[-1]
    exempt = "; or exempt the object from the webhook (namespaceSelector or objectSelector)"
    if last in _LABEL_KEY_MAPS:
        what = "an annotation" if last == "annotations" else f"a {last}" if last != "labels" else "a label"
        return (
            f"shorten the key: the API server refuses {what} key longer than 317 characters (an optional prefix, a "
            "DNS subdomain of at most 253, then '/', then a name of at most 63: 253 + 1 + 63)" + exempt
        )
    if isinstance(kind, str) and where in _DATA_KEY_MAPS.get(kind, ()):
        return (
            f"shorten the key: the API server refuses a {kind} {where} key longer than 253 characters "
            "(a DNS subdomain's length)" + exempt
        )
    return (
        f"shorten the key to at most {MAX_YAML_KEY_CHARS - 2:,} characters ({MAX_YAML_KEY_CHARS:,} as JSON)"
        + exempt
    )


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
    from kvlint.memory.stage import KEPT_PLANS, keep_plans

    # the same plans recur from review to review (an object re-applied, scaled up or restarted; the same model and
    # flags in another namespace; the default fleet's GPUs for every pod that names none): kept, bounded, by value
    keep_plans(KEPT_PLANS)
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
        except (EOFError, OSError, ValueError):  # closed, or a message the server never writes
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
                data = encode_reply(reply)
            except (TypeError, ValueError) as exc:  # a kvlint bug: a reply part that is not a JSON value
                data = encode_reply(
                    ("error", seq, f"{type(exc).__name__}: reply not encodable: {str(exc)[:200]}")
                )
            try:
                send_message(fd, data)
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
    "checked_rows",
    "MalformedMessage",
    "decode_message",
    "decode_reply",
    "encode_message",
    "encode_reply",
    "frame_messages",
    "frame_reply",
    "limit_memory",
    "lint_object",
    "recv_frame",
    "recv_message",
    "send_message",
    "warm_up",
    "worker_main",
]
